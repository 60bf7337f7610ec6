// Copyright 2026 The HAL Authors.
//
// HAL_SYNC_MAX_WAIT_MS turns an endless host wait into DEADLINE_EXCEEDED
// naming the knob (run by meson with HAL_SYNC_MAX_WAIT_MS=100).

// clang-format off
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
// clang-format on

#include <stdlib.h>
#include <string.h>

#include "hal/api.h"

static void MaxWait_InfiniteWaitIsBounded(void** state) {
  hal_semaphore_t* semaphore = NULL;
  assert_null(hal_semaphore_create_host(hal_allocator_system(), 0, &semaphore));
  hal_time_t start = hal_time_now();
  hal_status_t status =
      hal_semaphore_wait(semaphore, 1, hal_infinite_timeout());
  hal_time_t elapsed = hal_time_now() - start;
  assert_int_equal(hal_status_code(status), HAL_STATUS_DEADLINE_EXCEEDED);
  assert_non_null(strstr(hal_status_message(status), "HAL_SYNC_MAX_WAIT_MS"));
  hal_status_free(status);
  assert_true(elapsed >= 100ll * 1000 * 1000);       // not early
  assert_true(elapsed < 30ll * 1000 * 1000 * 1000);  // bounded
  // Shorter deadlines are untouched, and a reached value still returns OK.
  status = hal_semaphore_wait(semaphore, 1, hal_make_timeout_ns(1000));
  assert_null(strstr(hal_status_message(status), "HAL_SYNC_MAX_WAIT_MS"));
  hal_status_free(status);
  assert_null(hal_semaphore_signal(semaphore, 1));
  assert_null(hal_semaphore_wait(semaphore, 1, hal_infinite_timeout()));
  hal_semaphore_release(semaphore);
}

// Run with HAL_SYNC_MAX_WAIT_MS=100ms (not a number): a wait that would
// block fails naming the setting instead of running unbounded; one that
// needs no blocking still returns.
static void MaxWait_MalformedBoundFailsBlockingWaits(void** state) {
  hal_semaphore_t* semaphore = NULL;
  assert_null(hal_semaphore_create_host(hal_allocator_system(), 1, &semaphore));
  assert_null(hal_semaphore_wait(semaphore, 1, hal_infinite_timeout()));
  for (int i = 0; i < 2; ++i) {  // every time, not only the first
    hal_status_t status =
        hal_semaphore_wait(semaphore, 2, hal_make_timeout_ns(1000));
    assert_int_equal(hal_status_code(status), HAL_STATUS_INVALID_ARGUMENT);
    assert_non_null(strstr(hal_status_message(status),
                           "HAL_SYNC_MAX_WAIT_MS='100ms': expected an "
                           "integer in [0, 86400000]"));
    hal_status_free(status);
  }
  hal_semaphore_release(semaphore);
}

// The test list: CASE binds this program's fixture.
#define CASE(name) cmocka_unit_test(name)

int main(void) {
  const char* bound = getenv("HAL_SYNC_MAX_WAIT_MS");
  if (bound && strcmp(bound, "100ms") == 0) {
    const struct CMUnitTest tests[] = {
        CASE(MaxWait_MalformedBoundFailsBlockingWaits),
    };
    return cmocka_run_group_tests_name("sync/max_wait_malformed", tests, NULL,
                                       NULL);
  }
  if (!bound) {
    fprintf(stderr, "run with HAL_SYNC_MAX_WAIT_MS=100 (meson does)\n");
    return 1;
  }
  const struct CMUnitTest tests[] = {
      CASE(MaxWait_InfiniteWaitIsBounded),
  };
  return cmocka_run_group_tests_name("sync/max_wait", tests, NULL, NULL);
}
