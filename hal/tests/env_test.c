// Copyright 2026 The HAL Authors.
//
// The one parser of HAL_* settings: accepted values, and an error naming
// the variable and the accepted values for everything else.

#include <stdlib.h>

#include "hal/env.h"
#include "hal_test.h"

static void Uint_AcceptsDecimalsInRange(void** state) {
  uint64_t value = 7;
  bool set = true;
  unsetenv("HAL_TEST_SETTING");
  HAL_ASSERT_OK(hal_env_uint("HAL_TEST_SETTING", 1, 10, &value, &set));
  assert_false(set);
  assert_int_equal(value, 7);  // untouched when unset
  setenv("HAL_TEST_SETTING", "", 1);
  HAL_ASSERT_OK(hal_env_uint("HAL_TEST_SETTING", 1, 10, &value, &set));
  assert_false(set);
  setenv("HAL_TEST_SETTING", "10", 1);
  HAL_ASSERT_OK(hal_env_uint("HAL_TEST_SETTING", 1, 10, &value, &set));
  assert_true(set);
  assert_int_equal(value, 10);
  unsetenv("HAL_TEST_SETTING");
}

static void Uint_RejectsEverythingElseNamingTheRange(void** state) {
  const char* bad[] = {"abc", "11",  "0",
                       "-1",  "+3",  "3x",
                       " 3",  "0x5", "99999999999999999999999"};
  for (size_t i = 0; i < HAL_ARRAYSIZE(bad); ++i) {
    setenv("HAL_TEST_SETTING", bad[i], 1);
    uint64_t value = 7;
    bool set = true;
    char expected[128];
    snprintf(expected, sizeof(expected),
             "HAL_TEST_SETTING='%s': expected an integer in [1, 10]", bad[i]);
    HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, expected,
                      hal_env_uint("HAL_TEST_SETTING", 1, 10, &value, &set));
    assert_false(set);
    assert_int_equal(value, 7);
  }
  unsetenv("HAL_TEST_SETTING");
}

static void Flag_IsZeroOrOne(void** state) {
  bool value = false;
  bool set = false;
  setenv("HAL_TEST_FLAG", "1", 1);
  HAL_ASSERT_OK(hal_env_flag("HAL_TEST_FLAG", &value, &set));
  assert_true(set && value);
  setenv("HAL_TEST_FLAG", "0", 1);
  HAL_ASSERT_OK(hal_env_flag("HAL_TEST_FLAG", &value, &set));
  assert_true(set && !value);
  setenv("HAL_TEST_FLAG", "yes", 1);
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT,
                    "HAL_TEST_FLAG='yes': expected 0 or 1",
                    hal_env_flag("HAL_TEST_FLAG", &value, &set));
  unsetenv("HAL_TEST_FLAG");
}

// A program that makes a registry is told of a bad libhal setting there
// (HAL_TRACE_MAX_MB too, which the trace reads at load only when HAL_TRACE
// is set).
static void Registry_RefusesABadSetting(void** state) {
  const char* names[] = {"HAL_SYNC_MAX_WAIT_MS", "HAL_SYNC_NO_FUTEX",
                         "HAL_SYNC_SPIN_NS", "HAL_LOADER_DEBUG",
                         "HAL_TRACE_MAX_MB"};
  for (size_t i = 0; i < HAL_ARRAYSIZE(names); ++i) {
    setenv(names[i], "bogus", 1);
    hal_driver_registry_t* registry = NULL;
    char expected[128];
    snprintf(expected, sizeof(expected), "%s='bogus'", names[i]);
    HAL_ASSERT_STATUS(
        HAL_STATUS_INVALID_ARGUMENT, expected,
        hal_driver_registry_create(NULL, hal_allocator_system(), &registry));
    assert_null(registry);
    HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, expected, hal_env_check());
    unsetenv(names[i]);
  }
  HAL_ASSERT_OK(hal_env_check());
}

// The test list: CASE binds this program's fixture.
#define CASE(name) cmocka_unit_test(name)

int main(void) {
  const struct CMUnitTest tests[] = {
      CASE(Uint_AcceptsDecimalsInRange),
      CASE(Uint_RejectsEverythingElseNamingTheRange),
      CASE(Flag_IsZeroOrOne),
      CASE(Registry_RefusesABadSetting),
  };
  return cmocka_run_group_tests_name("core/env", tests, NULL, NULL);
}
