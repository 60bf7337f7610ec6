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
#include "status_assert.h"

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
