// Copyright 2026 The HAL Authors.
//
// Everything an implementation of the HAL sees: the public API (hal/api.h)
// and the shared fields, vtables and helpers of each object type. Drivers
// include this (hal/plugin.h does); programs that use the HAL include
// hal/api.h, where every object is an opaque handle.

#ifndef HAL_IMPL_API_H_
#define HAL_IMPL_API_H_

#include "hal/api.h"
#include "hal/impl/buffer.h"
#include "hal/impl/channel.h"
#include "hal/impl/command_buffer.h"
#include "hal/impl/device.h"
#include "hal/impl/driver.h"
#include "hal/impl/executable.h"
#include "hal/impl/recording.h"
#include "hal/impl/resource.h"
#include "hal/impl/semaphore.h"

#endif  // HAL_IMPL_API_H_
