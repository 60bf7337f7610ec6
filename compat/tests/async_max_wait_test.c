// Copyright 2026 The HAL Authors.
//
// Suite mlir_async: libhal-async-runtime under HAL_SYNC_MAX_WAIT_MS (run by
// meson with HAL_SYNC_MAX_WAIT_MS=100, and once with the malformed "100ms").
// The bound turns a wait that may hang into a failure; for the ABI's void
// awaits that failure is the awaited object's error state. An idle worker
// waits for work that may never come, which is no hang; destroying a
// runtime still waits for every task, however long.

#include "hal_test.h"

#include <unistd.h>

#include "async_test_util.h"
#include "hal/mlir_async.h"

// Well past the 100 ms bound: each wait below is cut several times.
#define PAST_THE_BOUND_US 350000

static int setup(void** state) {
  hal_async_runtime_t* runtime = NULL;
  HAL_ASSERT_OK(hal_async_runtime_create(hal_allocator_system(), 2, &runtime));
  hal_async_runtime_destroy(hal_async_runtime_exchange_default(runtime));
  *state = runtime;
  return 0;
}

static int teardown(void** state) {
  hal_async_runtime_t* runtime = hal_async_runtime_exchange_default(NULL);
  assert_ptr_equal(runtime, *state);
  hal_async_runtime_destroy(runtime);
  assert_int_equal(hal_async_live_object_count(), 0);
  return 0;
}

static void emplace_token_task(void* token) {
  mlirAsyncRuntimeEmplaceToken(token);
}

// Workers idle for several bounds, then take work: the process is alive,
// and the work runs.
static void MaxWait_IdleWorkersOutliveTheBound(void** state) {
  (void)state;
  usleep(PAST_THE_BOUND_US);
  void* token = mlirAsyncRuntimeCreateToken();
  spawn(emplace_token_task, token);
  mlirAsyncRuntimeAwaitToken(token);
  assert_false(mlirAsyncRuntimeIsTokenError(token));
  mlirAsyncRuntimeDropRef(token, 1);
}

// Asserts that |text| says a blocking await of a |kind| was cut short.
static void expect_cut_message(const char* text, const char* entry_point,
                               const char* kind) {
  char needle[256];
  snprintf(needle, sizeof(needle), "hal-async: %s: ", entry_point);
  if (!strstr(text, needle) || !strstr(text, "HAL_SYNC_MAX_WAIT_MS=100") ||
      !strstr(text, kind) || !strstr(text, "is now in error")) {
    HAL_TEST_FAIL("no word of the cut %s in stderr:\n%s", entry_point, text);
  }
}

// An await nothing resolves returns once the bound cuts it, with the object
// in error (as the lowering's is-error check after the await expects) and
// the reason on stderr; the producer's resolution that comes afterwards
// only drops its reference, reported as no misuse.
static void MaxWait_CutAwaitPutsTheObjectInError(void** state) {
  (void)state;
  char text[8192];
  hal_test_stderr_capture_t capture;

  void* token = mlirAsyncRuntimeCreateToken();
  hal_test_stderr_capture_begin(&capture);
  hal_time_t start = hal_time_now();
  mlirAsyncRuntimeAwaitToken(token);
  hal_time_t elapsed = hal_time_now() - start;
  hal_test_stderr_capture_end(&capture, text, sizeof(text));
  assert_true(elapsed >= 100ll * 1000 * 1000);
  assert_true(mlirAsyncRuntimeIsTokenError(token));
  expect_cut_message(text, "mlirAsyncRuntimeAwaitToken", "token");
  mlirAsyncRuntimeAwaitToken(token);  // in error: returns at once
  mlirAsyncRuntimeEmplaceToken(token);
  assert_true(mlirAsyncRuntimeIsTokenError(token));
  assert_int_equal(hal_async_live_object_count(), 1);  // the caller's
  mlirAsyncRuntimeDropRef(token, 1);

  void* value = mlirAsyncRuntimeCreateValue(8);
  hal_test_stderr_capture_begin(&capture);
  mlirAsyncRuntimeAwaitValue(value);
  hal_test_stderr_capture_end(&capture, text, sizeof(text));
  assert_true(mlirAsyncRuntimeIsValueError(value));
  expect_cut_message(text, "mlirAsyncRuntimeAwaitValue", "value");
  mlirAsyncRuntimeSetValueError(value);
  mlirAsyncRuntimeDropRef(value, 1);

  // A group stays in error once cut, and still becomes ready when its
  // member is: a later await returns at once.
  void* group = mlirAsyncRuntimeCreateGroup(1);
  hal_test_stderr_capture_begin(&capture);
  mlirAsyncRuntimeAwaitAllInGroup(group);
  hal_test_stderr_capture_end(&capture, text, sizeof(text));
  assert_true(mlirAsyncRuntimeIsGroupError(group));
  expect_cut_message(text, "mlirAsyncRuntimeAwaitAllInGroup", "group");
  void* member = mlirAsyncRuntimeCreateToken();
  assert_int_equal(mlirAsyncRuntimeAddTokenToGroup(member, group), 0);
  mlirAsyncRuntimeEmplaceToken(member);
  mlirAsyncRuntimeDropRef(member, 1);
  start = hal_time_now();
  mlirAsyncRuntimeAwaitAllInGroup(group);
  assert_true(hal_time_now() - start < 100ll * 1000 * 1000);
  assert_true(mlirAsyncRuntimeIsGroupError(group));
  mlirAsyncRuntimeDropRef(group, 1);

  // A group of several members sleeps until one is left before it sleeps
  // until all are (docs/mlir-async.md): the bound cuts the await once, not
  // each of those waits in turn.
  group = mlirAsyncRuntimeCreateGroup(2);
  hal_test_stderr_capture_begin(&capture);
  start = hal_time_now();
  mlirAsyncRuntimeAwaitAllInGroup(group);
  elapsed = hal_time_now() - start;
  hal_test_stderr_capture_end(&capture, text, sizeof(text));
  assert_true(elapsed >= 100ll * 1000 * 1000);
  if (elapsed >= 200ll * 1000 * 1000)
    HAL_TEST_FAIL("the cut of a 2-member group took %lld ms: two bounds",
                  (long long)(elapsed / 1000000));
  assert_true(mlirAsyncRuntimeIsGroupError(group));
  expect_cut_message(text, "mlirAsyncRuntimeAwaitAllInGroup", "group");
  for (int i = 0; i < 2; ++i) {
    member = mlirAsyncRuntimeCreateToken();
    assert_int_equal(mlirAsyncRuntimeAddTokenToGroup(member, group), i);
    mlirAsyncRuntimeEmplaceToken(member);
    mlirAsyncRuntimeDropRef(member, 1);
  }
  mlirAsyncRuntimeDropRef(group, 1);
}

static void second_emplace_after_cut_child(void) {
  void* token = mlirAsyncRuntimeCreateToken();
  mlirAsyncRuntimeAwaitToken(token);  // cut: in error
  mlirAsyncRuntimeEmplaceToken(token);
  mlirAsyncRuntimeEmplaceToken(token);  // reported: aborts
}

// The producer's late resolution drops only its own reference: a second
// one is reported as a double emplace is, and in assertion builds aborts,
// instead of dropping the caller's (in a child process, forked before any
// runtime thread exists: it aborts).
static void MaxWait_SecondResolutionAfterTheCutIsReported(void** state) {
  (void)state;
#ifdef NDEBUG
  HAL_TEST_SKIP("misuse is only caught in debug builds (this one has NDEBUG)");
#else
  char text[8192];
  if (!hal_test_run_in_child(second_emplace_after_cut_child, text,
                             sizeof(text)) ||
      !strstr(text, "mlirAsyncRuntimeEmplaceToken: token") ||
      !strstr(text, "is already in error")) {
    HAL_TEST_FAIL("a second emplace after the cut was not reported:\n%s", text);
  }
#endif
}

// A pool task emplaces its token, then runs on past the bound: the emplace
// takes effect only when the task returns (the handoff rule). The cut
// await finds the token claimed by its producer and waits on; the token
// ends ready, not in error.
static void emplace_then_linger_task(void* token) {
  mlirAsyncRuntimeEmplaceToken(token);
  usleep(PAST_THE_BOUND_US);
}

static void MaxWait_AwaitOfAClaimedObjectWaitsForItsResolution(void** state) {
  (void)state;
  void* token = mlirAsyncRuntimeCreateToken();
  spawn(emplace_then_linger_task, token);
  mlirAsyncRuntimeAwaitToken(token);
  assert_false(mlirAsyncRuntimeIsTokenError(token));
  mlirAsyncRuntimeDropRef(token, 1);
}

static void linger_task(void* done) {
  usleep(PAST_THE_BOUND_US);
  atomic_store((atomic_bool*)done, true);
}

// Destroying a runtime whose task outlasts the bound says so once and
// waits for the task.
static void MaxWait_DestroyWaitsForTasksPastTheBound(void** state) {
  (void)state;
  hal_async_runtime_t* runtime = NULL;
  HAL_ASSERT_OK(hal_async_runtime_create(hal_allocator_system(), 1, &runtime));
  hal_async_runtime_t* previous = hal_async_runtime_exchange_default(runtime);
  atomic_bool done = false;
  spawn(linger_task, &done);
  hal_async_runtime_exchange_default(previous);
  char text[8192];
  hal_test_stderr_capture_t capture;
  hal_test_stderr_capture_begin(&capture);
  hal_async_runtime_destroy(runtime);
  hal_test_stderr_capture_end(&capture, text, sizeof(text));
  assert_true(atomic_load(&done));
  if (!strstr(text, "HAL_SYNC_MAX_WAIT_MS=100") ||
      !strstr(text, "1 task(s) still queued or running; waiting for them")) {
    HAL_TEST_FAIL("no word of the task destroy waited for:\n%s", text);
  }
}

// Run with HAL_SYNC_MAX_WAIT_MS=100ms (not a number): creating a runtime
// fails naming the setting, where every wait of its workers would fail.
static void MaxWait_MalformedBoundFailsRuntimeCreation(void** state) {
  (void)state;
  hal_async_runtime_t* runtime = NULL;
  HAL_ASSERT_STATUS(
      HAL_STATUS_INVALID_ARGUMENT,
      "HAL_SYNC_MAX_WAIT_MS='100ms': expected an integer in [0, 86400000]",
      hal_async_runtime_create(hal_allocator_system(), 1, &runtime));
  assert_null(runtime);
}

#define CASE(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void) {
  const char* bound = getenv("HAL_SYNC_MAX_WAIT_MS");
  if (bound && strcmp(bound, "100ms") == 0) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(MaxWait_MalformedBoundFailsRuntimeCreation),
    };
    return cmocka_run_group_tests_name("mlir_async/max_wait_malformed", tests,
                                       NULL, NULL);
  }
  if (!bound || strcmp(bound, "100") != 0) {
    fprintf(stderr, "run with HAL_SYNC_MAX_WAIT_MS=100 (meson does)\n");
    return 1;
  }
  const struct CMUnitTest tests[] = {
      // First, with no fixture: it forks before any runtime thread exists.
      cmocka_unit_test(MaxWait_SecondResolutionAfterTheCutIsReported),
      CASE(MaxWait_IdleWorkersOutliveTheBound),
      CASE(MaxWait_CutAwaitPutsTheObjectInError),
      CASE(MaxWait_AwaitOfAClaimedObjectWaitsForItsResolution),
      CASE(MaxWait_DestroyWaitsForTasksPastTheBound),
  };
  return cmocka_run_group_tests_name("mlir_async/max_wait", tests, NULL, NULL);
}
