// Copyright 2026 The HAL Authors.
//
// For the probe programs that the Python tests drive (no cmocka): a
// failed call prints its status and the probe exits 3, which the driving
// test reports with the probe's output.

#ifndef HAL_TESTS_PROBE_H_
#define HAL_TESTS_PROBE_H_

#include <stdio.h>

#include "hal/status.h"

#define PROBE_CHECK(expr)                 \
  do {                                    \
    hal_status_t status_ = (expr);        \
    if (status_ != HAL_OK) {              \
      hal_status_fprint(stderr, status_); \
      hal_status_free(status_);           \
      return 3;                           \
    }                                     \
  } while (0)

#endif  // HAL_TESTS_PROBE_H_
