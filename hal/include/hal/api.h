// Copyright 2026 The HAL Authors.
//
// The whole public HAL API in one include. Not in it: hal/plugin.h (what a
// driver plugin exports), hal/trace.h (libhal's and the drivers' own trace
// events; a program only sets HAL_TRACE) and hal/impl/ (what drivers see).

#ifndef HAL_API_H_
#define HAL_API_H_

#include "hal/allocator.h"
#include "hal/base.h"
#include "hal/buffer.h"
#include "hal/channel.h"
#include "hal/command_buffer.h"
#include "hal/device.h"
#include "hal/driver.h"
#include "hal/driver_registry.h"
#include "hal/env.h"
#include "hal/executable.h"
#include "hal/file.h"
#include "hal/library.h"
#include "hal/resource.h"
#include "hal/semaphore.h"
#include "hal/status.h"
#include "hal/time.h"
#include "hal/timepoint.h"

#endif  // HAL_API_H_
