// Copyright 2026 The HAL Authors.
//
// HAL_* environment settings, read by one strict parser. A value that does
// not parse, or is outside what the setting accepts, is INVALID_ARGUMENT
// naming the variable and the accepted values: a setting never silently
// keeps its default because of a typo. Where no status can carry it (a host
// wait reading HAL_SYNC_SPIN_NS or HAL_SYNC_NO_FUTEX in a program that
// made no registry), the default is kept and the first use says so on
// stderr. Unset or empty means "not set".

#ifndef HAL_ENV_H_
#define HAL_ENV_H_

#include "hal/base.h"
#include "hal/status.h"

HAL_EXTERN_C_BEGIN

// |name| as a decimal integer in [min, max] into |*out_value| (untouched
// when unset); |*out_set| says whether it was set.
HAL_API HAL_MUST_USE_RESULT hal_status_t hal_env_uint(const char* name,
                                                      uint64_t min,
                                                      uint64_t max,
                                                      uint64_t* out_value,
                                                      bool* out_set);

// |name| as a flag, "0" or "1", into |*out_value| (untouched when unset).
HAL_API HAL_MUST_USE_RESULT hal_status_t hal_env_flag(const char* name,
                                                      bool* out_value,
                                                      bool* out_set);

// Every HAL_* setting libhal itself reads (HAL_SYNC_MAX_WAIT_MS,
// HAL_SYNC_NO_FUTEX, HAL_SYNC_SPIN_NS, HAL_LOADER_DEBUG, HAL_TRACE_MAX_MB,
// HAL_FILE_CHUNK_BYTES, HAL_ALLOCA_RELEASE_THRESHOLD), checked at once: the
// first bad one. hal_driver_registry_create() and hal_async_runtime_create()
// call it, so a program that makes either learns of a bad setting there.
HAL_API HAL_MUST_USE_RESULT hal_status_t hal_env_check(void);

HAL_EXTERN_C_END

#endif  // HAL_ENV_H_
