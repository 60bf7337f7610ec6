// Copyright 2026 The HAL Authors.
//
// Status assertions for cmocka tests, shared by every test program of the
// project (core, sync, adapters, CTS).
//
//   HAL_ASSERT_OK(expr)                    fails with the status's text
//   HAL_ASSERT_STATUS(code, needle, expr)  fails unless |expr| fails with
//                                          |code| and a message containing
//                                          |needle| (NULL: any message)
//
// A suite may define HAL_TEST_FAIL(...) before including this header to end
// a test its own way (to print its seed, say); the default is fail_msg().

#ifndef HAL_TESTS_STATUS_ASSERT_H_
#define HAL_TESTS_STATUS_ASSERT_H_

// clang-format off
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
// clang-format on

#include <stdio.h>
#include <string.h>

#include "hal/status.h"

#ifndef HAL_TEST_FAIL
#define HAL_TEST_FAIL(...) fail_msg(__VA_ARGS__)
#endif

#define HAL_ASSERT_OK(expr)                                         \
  do {                                                              \
    hal_status_t hal_status_ = (expr);                              \
    if (hal_status_ != HAL_OK) {                                    \
      char hal_text_[2048];                                         \
      hal_status_format(hal_status_, hal_text_, sizeof(hal_text_)); \
      hal_status_free(hal_status_);                                 \
      HAL_TEST_FAIL("%s returned %s", #expr, hal_text_);            \
    }                                                               \
  } while (0)

#define HAL_ASSERT_STATUS(code, needle, expr)                            \
  do {                                                                   \
    hal_status_t hal_status_ = (expr);                                   \
    char hal_text_[2048];                                                \
    hal_status_format(hal_status_, hal_text_, sizeof(hal_text_));        \
    hal_status_code_t hal_code_ = hal_status_code(hal_status_);          \
    hal_status_free(hal_status_);                                        \
    if (hal_code_ != (code)) {                                           \
      HAL_TEST_FAIL("%s: expected %s, got %s", #expr,                    \
                    hal_status_code_string(code), hal_text_);            \
    }                                                                    \
    const char* hal_needle_ = (needle);                                  \
    if (hal_needle_ && !strstr(hal_text_, hal_needle_)) {                \
      HAL_TEST_FAIL("%s: message \"%s\" lacks \"%s\"", #expr, hal_text_, \
                    hal_needle_);                                        \
    }                                                                    \
  } while (0)

// Skips the running test, printing why (a skip never goes unexplained).
#define HAL_TEST_SKIP(...)   \
  do {                       \
    printf("[  SKIP    ] "); \
    printf(__VA_ARGS__);     \
    printf("\n");            \
    fflush(stdout);          \
    skip();                  \
  } while (0)

#endif  // HAL_TESTS_STATUS_ASSERT_H_
