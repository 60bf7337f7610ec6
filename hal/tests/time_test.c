// Copyright 2026 The HAL Authors.

#include "hal_test.h"

static void Time_NowIsMonotonic(void** state) {
  hal_time_t previous = hal_time_now();
  for (int i = 0; i < 1000; ++i) {
    hal_time_t now = hal_time_now();
    assert_true(now >= previous);
    previous = now;
  }
}

static void Time_ImmediateAndInfiniteForms(void** state) {
  assert_true(hal_timeout_is_immediate(hal_immediate_timeout()));
  assert_false(hal_timeout_is_infinite(hal_immediate_timeout()));
  assert_true(hal_timeout_is_infinite(hal_infinite_timeout()));
  assert_false(hal_timeout_is_immediate(hal_infinite_timeout()));
  assert_true(hal_timeout_is_immediate(hal_make_timeout_ns(0)));
  assert_true(hal_timeout_is_immediate(hal_make_timeout_ns(-5)));
  assert_true(
      hal_timeout_is_infinite(hal_make_timeout_ns(HAL_DURATION_INFINITE)));
  assert_int_equal(hal_timeout_as_deadline(hal_immediate_timeout()),
                   HAL_TIME_INFINITE_PAST);
  assert_int_equal(hal_timeout_as_deadline(hal_infinite_timeout()),
                   HAL_TIME_INFINITE_FUTURE);
}

static void Time_RelativeBecomesDeadlineFromNow(void** state) {
  hal_time_t before = hal_time_now();
  hal_time_t deadline =
      hal_timeout_as_deadline(hal_make_timeout_ns(1000000000ll));
  hal_time_t after = hal_time_now();
  assert_true(deadline >= before + 1000000000ll);
  assert_true(deadline <= after + 1000000000ll);
  hal_timeout_t timeout = hal_make_timeout_ns(5);
  hal_timeout_make_absolute(&timeout);
  assert_int_equal(timeout.type, HAL_TIMEOUT_ABSOLUTE);
}

static void Time_AdditionSaturates(void** state) {
  assert_int_equal(hal_time_add_saturated(INT64_MAX - 10, 100),
                   HAL_TIME_INFINITE_FUTURE);
  assert_int_equal(hal_time_add_saturated(5, HAL_DURATION_INFINITE),
                   HAL_TIME_INFINITE_FUTURE);
  assert_int_equal(hal_time_add_saturated(5, 0), 5);
  assert_int_equal(hal_time_add_saturated(5, -1), HAL_TIME_INFINITE_PAST);
  assert_int_equal(hal_timeout_as_deadline(hal_make_timeout_ns(INT64_MAX - 1)),
                   HAL_TIME_INFINITE_FUTURE);
}

static void Time_SleepUntilReachesDeadline(void** state) {
  hal_time_t deadline = hal_time_now() + 2000000;  // 2 ms
  hal_sleep_until(deadline);
  assert_true(hal_time_now() >= deadline);
  hal_sleep_until(HAL_TIME_INFINITE_PAST);  // returns at once
}

// The test list: CASE binds this program's fixture.
#define CASE(name) cmocka_unit_test(name)

int main(void) {
  const struct CMUnitTest tests[] = {
      CASE(Time_NowIsMonotonic),
      CASE(Time_ImmediateAndInfiniteForms),
      CASE(Time_RelativeBecomesDeadlineFromNow),
      CASE(Time_AdditionSaturates),
      CASE(Time_SleepUntilReachesDeadline),
  };
  return cmocka_run_group_tests_name("core/time", tests, NULL, NULL);
}
