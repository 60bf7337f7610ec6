// Copyright 2026 The HAL Authors.
//
// hal_resource_t: the reference-counted base of every HAL object (driver,
// device, buffer, semaphore, command buffer, executable, file). Each type
// has its own retain/release (hal_buffer_retain, ...); these take any of
// them. The creator holds one reference; the release that drops the count
// to zero destroys the object, and an object keeps alive what it was made
// from (a buffer its device, a device its driver). Retain and release are
// thread-safe. The layout is the implementations' (hal/impl/resource.h).

#ifndef HAL_RESOURCE_H_
#define HAL_RESOURCE_H_

#include <stdint.h>

#include "hal/base.h"

HAL_EXTERN_C_BEGIN

typedef struct hal_resource_t hal_resource_t;

HAL_API void hal_resource_retain(hal_resource_t* resource);

// Drops a reference; destroys the resource (then releases its parent) when
// it was the last. NULL is a no-op.
HAL_API void hal_resource_release(hal_resource_t* resource);

// Blocks until every destruction deferred so far has finished (tests,
// orderly shutdown). libhal also drains at process exit, but for the
// destructions of the parent's in a fork() child: they stay the parent's.
// Called from a host call or a timepoint callback (or a queue thread), it
// returns once the release thread runs a device's shutdown, which may wait
// for the calling thread to return.
HAL_API void hal_resource_wait_deferred(void);

// The current count of any HAL object (a hal_buffer_t*, a hal_device_t*,
// ...), for assertions and tests only: it may change at once.
HAL_API intptr_t hal_resource_ref_count(const void* resource);

HAL_EXTERN_C_END

#endif  // HAL_RESOURCE_H_
