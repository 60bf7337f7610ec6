// Copyright 2026 The HAL Authors.
//
// Compiler and export macros shared by every public header.

#ifndef HAL_BASE_H_
#define HAL_BASE_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
#define HAL_EXTERN_C_BEGIN extern "C" {
#define HAL_EXTERN_C_END }
#else
#define HAL_EXTERN_C_BEGIN
#define HAL_EXTERN_C_END
#endif

// Marks a function exported from libhal. Everything else is hidden: the
// project builds with -fvisibility=hidden.
#define HAL_API __attribute__((visibility("default")))

// Functions returning hal_status_t are declared with this: dropping a status
// leaks its message and hides the error.
#define HAL_MUST_USE_RESULT __attribute__((warn_unused_result))

#define HAL_PRINTF_LIKE(fmt_index, args_index) \
  __attribute__((format(printf, fmt_index, args_index)))

#define HAL_ARRAYSIZE(a) (sizeof(a) / sizeof((a)[0]))

#define HAL_LIKELY(x) __builtin_expect(!!(x), 1)
#define HAL_UNLIKELY(x) __builtin_expect(!!(x), 0)

// A length meaning "from the offset to the end of the buffer".
#define HAL_WHOLE_BUFFER ((uint64_t)-1)

#endif  // HAL_BASE_H_
