// Copyright 2026 The HAL Authors.

#include "hal/time.h"

#include <errno.h>
#include <time.h>

HAL_API hal_time_t hal_time_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (hal_time_t)ts.tv_sec * 1000000000ll + (hal_time_t)ts.tv_nsec;
}

HAL_API void hal_sleep_until(hal_time_t deadline_ns) {
  if (deadline_ns == HAL_TIME_INFINITE_PAST)
    return;
  struct timespec ts = {
      .tv_sec = (time_t)(deadline_ns / 1000000000ll),
      .tv_nsec = (long)(deadline_ns % 1000000000ll),
  };
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
  }
}
