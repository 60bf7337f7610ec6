// Copyright 2026 The HAL Authors.
//
// Helpers shared by the core tests (cmocka).

#ifndef HAL_TESTS_TEST_UTIL_H_
#define HAL_TESTS_TEST_UTIL_H_

// clang-format off
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
// clang-format on

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hal/api.h"

// Fails the test with the status's text if |expr| is not OK.
#define HAL_ASSERT_OK(expr)                             \
  do {                                                  \
    hal_status_t status_ = (expr);                      \
    if (status_ != HAL_OK) {                            \
      char text_[2048];                                 \
      hal_status_format(status_, text_, sizeof(text_)); \
      hal_status_free(status_);                         \
      fail_msg("%s returned %s", #expr, text_);         \
    }                                                   \
  } while (0)

// Asserts |expr| fails with |code| and that its message contains |needle|
// (NULL to skip), then frees the status.
#define HAL_ASSERT_STATUS(code, needle, expr)                                  \
  do {                                                                         \
    hal_status_t status_ = (expr);                                             \
    char text_[2048];                                                          \
    hal_status_format(status_, text_, sizeof(text_));                          \
    hal_status_code_t code_ = hal_status_code(status_);                        \
    hal_status_free(status_);                                                  \
    if (code_ != (code)) {                                                     \
      fail_msg("%s: expected %s, got %s", #expr, hal_status_code_string(code), \
               text_);                                                         \
    }                                                                          \
    if ((needle) && !strstr(text_, (needle) ? (needle) : "")) {                \
      fail_msg("%s: message \"%s\" lacks \"%s\"", #expr, text_, (needle));     \
    }                                                                          \
  } while (0)

// The directory holding the test plugins (set by meson.build).
static inline const char* hal_test_plugin_dir(void) {
  const char* dir = getenv("HAL_TEST_PLUGIN_DIR");
  if (!dir) {
    fprintf(stderr,
            "HAL_TEST_PLUGIN_DIR is not set (run through meson test)\n");
    abort();
  }
  return dir;
}

// A registry over the test plugins only.
static inline hal_driver_registry_t* hal_test_create_registry(void) {
  hal_driver_registry_options_t options = {
      .search_path = hal_test_plugin_dir(),
      .extra_search_path = NULL,
      .skip_install_dir = true,
  };
  hal_driver_registry_t* registry = NULL;
  HAL_ASSERT_OK(
      hal_driver_registry_create(&options, hal_allocator_system(), &registry));
  return registry;
}

// Device 0 of the "test" driver; releases the driver reference (the device
// keeps it alive).
static inline hal_device_t* hal_test_create_device(void) {
  hal_driver_registry_t* registry = hal_test_create_registry();
  hal_driver_t* driver = NULL;
  HAL_ASSERT_OK(hal_driver_registry_create_driver(
      registry, "test", hal_allocator_system(), &driver));
  hal_device_t* device = NULL;
  HAL_ASSERT_OK(hal_driver_create_device_by_index(
      driver, 0, hal_allocator_system(), &device));
  hal_driver_release(driver);
  hal_driver_registry_free(registry);
  return device;
}

#endif  // HAL_TESTS_TEST_UTIL_H_
