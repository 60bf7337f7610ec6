// Copyright 2026 The HAL Authors.
//
// Time, deadlines and timeouts, in nanoseconds on CLOCK_MONOTONIC.
//
// Every blocking call takes a hal_timeout_t, which is either an absolute
// deadline or a relative timeout; both have "immediate" and "infinite" forms:
//
//   hal_immediate_timeout()        poll once, never block
//   hal_infinite_timeout()         block until the condition holds
//   hal_make_deadline(t)           block until hal_time_now() >= t
//   hal_make_timeout_ns(d)         block for at most d ns from the call
//
// A deadline already in the past (or a timeout <= 0) behaves exactly like
// the immediate timeout: the condition is checked once and the call returns
// DEADLINE_EXCEEDED if it does not hold. That is the documented result, not
// an error in the arguments.
//
// Relative timeouts are turned into a deadline once, when a call starts, so a
// call that loops internally never extends its own deadline.

#ifndef HAL_TIME_H_
#define HAL_TIME_H_

#include "hal/base.h"

HAL_EXTERN_C_BEGIN

// Nanoseconds since an unspecified start (CLOCK_MONOTONIC).
typedef int64_t hal_time_t;
// A span of nanoseconds.
typedef int64_t hal_duration_t;

#define HAL_TIME_INFINITE_PAST INT64_MIN
#define HAL_TIME_INFINITE_FUTURE INT64_MAX
#define HAL_DURATION_ZERO ((hal_duration_t)0)
#define HAL_DURATION_INFINITE INT64_MAX

typedef enum hal_timeout_type_e {
  HAL_TIMEOUT_ABSOLUTE = 0,  // |nanos| is a hal_time_t deadline
  HAL_TIMEOUT_RELATIVE = 1,  // |nanos| is a hal_duration_t from now
} hal_timeout_type_t;

typedef struct hal_timeout_t {
  hal_timeout_type_t type;
  int64_t nanos;
} hal_timeout_t;

// The current time on the monotonic clock.
HAL_API hal_time_t hal_time_now(void);

static inline hal_timeout_t hal_immediate_timeout(void) {
  hal_timeout_t timeout = {HAL_TIMEOUT_ABSOLUTE, HAL_TIME_INFINITE_PAST};
  return timeout;
}

static inline hal_timeout_t hal_infinite_timeout(void) {
  hal_timeout_t timeout = {HAL_TIMEOUT_ABSOLUTE, HAL_TIME_INFINITE_FUTURE};
  return timeout;
}

static inline hal_timeout_t hal_make_deadline(hal_time_t deadline_ns) {
  hal_timeout_t timeout = {HAL_TIMEOUT_ABSOLUTE, deadline_ns};
  return timeout;
}

static inline hal_timeout_t hal_make_timeout_ns(hal_duration_t timeout_ns) {
  hal_timeout_t timeout = {HAL_TIMEOUT_RELATIVE, timeout_ns};
  return timeout;
}

// |now| + |duration|, saturating at the infinite ends. A negative duration
// (a timeout already past) gives HAL_TIME_INFINITE_PAST, not |now| minus
// it: every deadline in the past means the same to a wait.
static inline hal_time_t hal_time_add_saturated(hal_time_t now,
                                                hal_duration_t duration) {
  if (duration == HAL_DURATION_INFINITE)
    return HAL_TIME_INFINITE_FUTURE;
  if (duration <= 0)
    return duration == 0 ? now : HAL_TIME_INFINITE_PAST;
  if (now > HAL_TIME_INFINITE_FUTURE - duration) {
    return HAL_TIME_INFINITE_FUTURE;
  }
  return now + duration;
}

// The absolute deadline of |timeout| (relative ones measured from now).
// A relative timeout <= 0 becomes HAL_TIME_INFINITE_PAST (immediate).
static inline hal_time_t hal_timeout_as_deadline(hal_timeout_t timeout) {
  if (timeout.type == HAL_TIMEOUT_ABSOLUTE)
    return timeout.nanos;
  if (timeout.nanos <= 0)
    return HAL_TIME_INFINITE_PAST;
  if (timeout.nanos == HAL_DURATION_INFINITE)
    return HAL_TIME_INFINITE_FUTURE;
  return hal_time_add_saturated(hal_time_now(), timeout.nanos);
}

// Normalizes |timeout| to the absolute form, in place; call once at the
// start of a blocking operation.
static inline void hal_timeout_make_absolute(hal_timeout_t* timeout) {
  hal_timeout_t absolute = {HAL_TIMEOUT_ABSOLUTE,
                            hal_timeout_as_deadline(*timeout)};
  *timeout = absolute;
}

static inline bool hal_timeout_is_infinite(hal_timeout_t timeout) {
  return timeout.nanos == INT64_MAX;
}

// True when |timeout| never blocks: the immediate forms, and any deadline
// that has already passed is checked by the caller against hal_time_now().
static inline bool hal_timeout_is_immediate(hal_timeout_t timeout) {
  return timeout.type == HAL_TIMEOUT_ABSOLUTE
             ? timeout.nanos == HAL_TIME_INFINITE_PAST
             : timeout.nanos <= 0;
}

// Sleeps the calling thread until |deadline_ns| (returns at once if past).
// For tests and tools; runtime code blocks on conditions, never sleeps.
HAL_API void hal_sleep_until(hal_time_t deadline_ns);

HAL_EXTERN_C_END

#endif  // HAL_TIME_H_
