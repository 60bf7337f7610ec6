// Copyright 2026 The HAL Authors.
//
// CTS suite "semaphore": host-side timeline semaphore behavior (rules S1-S3,
// S5; K5, K6, K8 of the sync contract), the one semaphore suite. It runs on
// every driver's semaphores, waited through hal_device_wait_semaphores, and
// on the host row (CTS_DRIVER=host) on the sync module's host semaphores,
// waited through hal_semaphore_list_wait.

#include "cts.h"

#define CTS_MS (1000ll * 1000)

static int setup(void** state) {
  *state = cts_create_device(0);
  return 0;
}

static int teardown(void** state) {
  hal_device_release(*state);
  return 0;
}

static hal_status_t wait_list(hal_device_t* device, hal_wait_mode_t mode,
                              size_t count, hal_semaphore_t** semaphores,
                              uint64_t* values, hal_timeout_t timeout) {
  return cts_wait_list(device, mode, count, semaphores, values, timeout);
}

static void release_all(size_t count, hal_semaphore_t** semaphores) {
  for (size_t i = 0; i < count; ++i)
    hal_semaphore_release(semaphores[i]);
}

//===----------------------------------------------------------------------===//
// S1: the payload
//===----------------------------------------------------------------------===//

CTS_CASE(S1_NoOp) {
  hal_semaphore_t* semaphore = cts_create_semaphore(*state, 123);
  assert_int_equal(cts_query(semaphore), 123);
  hal_semaphore_release(semaphore);
}

CTS_CASE(S1_NormalSignaling) {
  hal_semaphore_t* semaphore = cts_create_semaphore(*state, 2);
  HAL_ASSERT_OK(hal_semaphore_signal(semaphore, 3));
  assert_int_equal(cts_query(semaphore), 3);
  HAL_ASSERT_OK(hal_semaphore_signal(semaphore, 40));
  assert_int_equal(cts_query(semaphore), 40);
  hal_semaphore_release(semaphore);
}

CTS_CASE(S1_SignalNotIncreasing) {
  hal_semaphore_t* semaphore = cts_create_semaphore(*state, 5);
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, "not greater",
                    hal_semaphore_signal(semaphore, 5));
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, "not greater",
                    hal_semaphore_signal(semaphore, 4));
  assert_int_equal(cts_query(semaphore), 5);
  hal_semaphore_release(semaphore);
}

CTS_CASE(S1_FailureRangeRejected) {
  hal_semaphore_t* semaphore = cts_create_semaphore(*state, 5);
  HAL_ASSERT_STATUS(
      HAL_STATUS_INVALID_ARGUMENT, "failure range",
      hal_semaphore_signal(semaphore, HAL_SEMAPHORE_FAILURE_VALUE));
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, "failure range",
                    hal_semaphore_signal(semaphore, UINT64_MAX));
  HAL_ASSERT_STATUS(
      HAL_STATUS_INVALID_ARGUMENT, "failure range",
      hal_semaphore_wait(semaphore, UINT64_MAX, hal_immediate_timeout()));
  assert_int_equal(cts_query(semaphore), 5);
  HAL_ASSERT_OK(hal_semaphore_signal(semaphore, HAL_SEMAPHORE_MAX_VALUE));
  assert_int_equal(cts_query(semaphore), HAL_SEMAPHORE_MAX_VALUE);
  hal_semaphore_t* created = NULL;
  HAL_ASSERT_STATUS(
      HAL_STATUS_INVALID_ARGUMENT, "failure range",
      cts_try_create_semaphore(*state, HAL_SEMAPHORE_FAILURE_VALUE, &created));
  assert_null(created);
  hal_semaphore_release(semaphore);
}

//===----------------------------------------------------------------------===//
// S2: sticky failure
//===----------------------------------------------------------------------===//

CTS_CASE(S2_Failure) {
  hal_semaphore_t* semaphore = cts_create_semaphore(*state, 2);
  hal_semaphore_fail(semaphore,
                     hal_make_status(HAL_STATUS_DATA_LOSS, "cts failure"));
  uint64_t value = 0;
  HAL_ASSERT_STATUS(HAL_STATUS_DATA_LOSS, "cts failure",
                    hal_semaphore_query(semaphore, &value));
  assert_true(value >= HAL_SEMAPHORE_FAILURE_VALUE);
  hal_semaphore_release(semaphore);
}

CTS_CASE(S2_FailureIsStickyAndKeepsMessage) {
  hal_semaphore_t* semaphore = cts_create_semaphore(*state, 0);
  hal_semaphore_fail(semaphore,
                     hal_make_status(HAL_STATUS_ABORTED, "first cause"));
  hal_semaphore_fail(semaphore,
                     hal_make_status(HAL_STATUS_INTERNAL, "second cause"));
  hal_semaphore_fail(semaphore, HAL_OK);
  uint64_t value = 0;
  HAL_ASSERT_STATUS(HAL_STATUS_ABORTED, "first cause",
                    hal_semaphore_query(semaphore, &value));
  HAL_ASSERT_STATUS(HAL_STATUS_ABORTED, "first cause",
                    hal_semaphore_signal(semaphore, 1));
  HAL_ASSERT_STATUS(HAL_STATUS_ABORTED, "first cause",
                    hal_semaphore_wait(semaphore, 1, hal_infinite_timeout()));
  // Even a value reached before the failure: the failure wins.
  HAL_ASSERT_STATUS(HAL_STATUS_ABORTED, "first cause",
                    hal_semaphore_wait(semaphore, 0, hal_infinite_timeout()));
  hal_semaphore_release(semaphore);
}

typedef struct fail_waiter_t {
  hal_semaphore_t* semaphore;
  hal_status_code_t code;
  int message_ok;
} fail_waiter_t;

static void* fail_waiter_thread(void* arg) {
  fail_waiter_t* job = arg;
  hal_status_t status = cts_wait(job->semaphore, 10);
  job->code = hal_status_code(status);
  job->message_ok = strstr(hal_status_message(status), "wake all") != NULL;
  hal_status_free(status);
  return NULL;
}

CTS_CASE(S2_FailWakesAllWaiters) {
  enum { kWaiters = 8 };
  hal_semaphore_t* semaphore = cts_create_semaphore(*state, 0);
  fail_waiter_t jobs[kWaiters];
  pthread_t threads[kWaiters];
  for (int i = 0; i < kWaiters; ++i) {
    jobs[i] = (fail_waiter_t){semaphore, HAL_STATUS_OK, 0};
    assert_int_equal(
        pthread_create(&threads[i], NULL, fail_waiter_thread, &jobs[i]), 0);
  }
  hal_sleep_until(hal_time_now() + 5 * CTS_MS);
  hal_semaphore_fail(semaphore,
                     hal_make_status(HAL_STATUS_ABORTED, "wake all"));
  for (int i = 0; i < kWaiters; ++i) {
    pthread_join(threads[i], NULL);
    assert_int_equal(jobs[i].code, HAL_STATUS_ABORTED);
    assert_true(jobs[i].message_ok);
  }
  hal_semaphore_release(semaphore);
}

CTS_CASE(S2_ListWaitFailure) {
  hal_semaphore_t* semaphores[2] = {cts_create_semaphore(*state, 0),
                                    cts_create_semaphore(*state, 0)};
  uint64_t values[2] = {1, 1};
  hal_semaphore_fail(semaphores[1],
                     hal_make_status(HAL_STATUS_UNAVAILABLE, "lost"));
  HAL_ASSERT_STATUS(HAL_STATUS_UNAVAILABLE, "lost",
                    wait_list(*state, HAL_WAIT_MODE_ALL, 2, semaphores, values,
                              hal_infinite_timeout()));
  HAL_ASSERT_STATUS(HAL_STATUS_UNAVAILABLE, "lost",
                    wait_list(*state, HAL_WAIT_MODE_ANY, 2, semaphores, values,
                              hal_immediate_timeout()));
  HAL_ASSERT_OK(hal_semaphore_signal(semaphores[0], 1));
  // ANY: a reached entry wins over a failed one (documented).
  HAL_ASSERT_OK(wait_list(*state, HAL_WAIT_MODE_ANY, 2, semaphores, values,
                          hal_immediate_timeout()));
  release_all(2, semaphores);
}

typedef struct fail_later_t {
  hal_semaphore_t* semaphore;
  hal_duration_t delay_ns;
  bool signal_first;  // reach 1 after the delay, then fail after another
} fail_later_t;

static void* fail_later_thread(void* arg) {
  fail_later_t* later = arg;
  hal_sleep_until(hal_time_now() + later->delay_ns);
  if (later->signal_first) {
    hal_status_ignore(hal_semaphore_signal(later->semaphore, 1));
    hal_sleep_until(hal_time_now() + later->delay_ns);
  }
  hal_semaphore_fail(later->semaphore,
                     hal_make_status(HAL_STATUS_ABORTED, "failed later"));
  return NULL;
}

// S2/S3: a failed entry decides an ANY wait unless another entry is
// reached, whether it failed before the wait began or while it slept, and
// wherever it stands in the list: at once, not at the deadline. The
// deadline is far enough that reaching it means the wait slept through
// the failure (the correct path takes microseconds).
CTS_CASE(S2_WaitAnyWithFailedEntryReturnsFailure) {
  const hal_duration_t deadline_ns = 8000 * CTS_MS;
  const hal_timeout_t timeout = hal_make_timeout_ns(deadline_ns);
  for (int failed_index = 0; failed_index < 3; ++failed_index) {
    hal_semaphore_t* semaphores[3];
    uint64_t values[3] = {1, 1, 1};
    for (int i = 0; i < 3; ++i)
      semaphores[i] = cts_create_semaphore(*state, 0);
    // Failed before the wait starts.
    hal_semaphore_fail(semaphores[failed_index],
                       hal_make_status(HAL_STATUS_DATA_LOSS, "failed first"));
    hal_time_t start = hal_time_now();
    HAL_ASSERT_STATUS(
        HAL_STATUS_DATA_LOSS, "failed first",
        wait_list(*state, HAL_WAIT_MODE_ANY, 3, semaphores, values, timeout));
    if (hal_time_now() - start >= deadline_ns) {
      fail_msg("ANY with failed entry %d slept until its deadline",
               failed_index);
    }
    // The same answer as a failure arriving during the wait.
    hal_semaphore_t* fresh = cts_create_semaphore(*state, 0);
    hal_semaphore_t* during[3] = {semaphores[(failed_index + 1) % 3], fresh,
                                  semaphores[(failed_index + 2) % 3]};
    fail_later_t later = {fresh, 2 * CTS_MS, false};
    pthread_t thread;
    assert_int_equal(pthread_create(&thread, NULL, fail_later_thread, &later),
                     0);
    HAL_ASSERT_STATUS(
        HAL_STATUS_ABORTED, "failed later",
        wait_list(*state, HAL_WAIT_MODE_ANY, 3, during, values, timeout));
    pthread_join(thread, NULL);
    // A reached entry still wins over a failed one.
    HAL_ASSERT_OK(hal_semaphore_signal(semaphores[(failed_index + 2) % 3], 1));
    HAL_ASSERT_OK(
        wait_list(*state, HAL_WAIT_MODE_ANY, 3, semaphores, values, timeout));
    hal_semaphore_release(fresh);
    release_all(3, semaphores);
  }
}

// S2: an ALL wait still waiting on one entry returns the failure of
// another as soon as it fails, even if that entry's value was reached
// first (before the wait began, or while it slept): the answer of the
// same wait made after the failure, not a sleep to the deadline.
CTS_CASE(S2_WaitAllFailsWhenAReachedEntryFails) {
  const hal_duration_t deadline_ns = 8000 * CTS_MS;
  const hal_timeout_t timeout = hal_make_timeout_ns(deadline_ns);
  for (int round = 0; round < 6; ++round) {
    int failing = round % 3;
    bool signal_first = round >= 3;
    hal_semaphore_t* semaphores[3];
    uint64_t values[3] = {1, 1, 1};
    for (int i = 0; i < 3; ++i)
      semaphores[i] = cts_create_semaphore(*state, 0);
    // One of the others is reached too; the third never is.
    HAL_ASSERT_OK(hal_semaphore_signal(semaphores[(failing + 1) % 3], 1));
    if (!signal_first)
      HAL_ASSERT_OK(hal_semaphore_signal(semaphores[failing], 1));
    fail_later_t later = {semaphores[failing], 2 * CTS_MS, signal_first};
    pthread_t thread;
    assert_int_equal(pthread_create(&thread, NULL, fail_later_thread, &later),
                     0);
    hal_time_t start = hal_time_now();
    HAL_ASSERT_STATUS(
        HAL_STATUS_ABORTED, "failed later",
        wait_list(*state, HAL_WAIT_MODE_ALL, 3, semaphores, values, timeout));
    if (hal_time_now() - start >= deadline_ns) {
      fail_msg("ALL slept through the failure of entry %d until its deadline",
               failing);
    }
    pthread_join(thread, NULL);
    HAL_ASSERT_STATUS(HAL_STATUS_ABORTED, "failed later",
                      wait_list(*state, HAL_WAIT_MODE_ALL, 3, semaphores,
                                values, hal_immediate_timeout()));
    release_all(3, semaphores);
  }
}

//===----------------------------------------------------------------------===//
// S3: waits
//===----------------------------------------------------------------------===//

CTS_CASE(S3_EmptyWait) {
  hal_device_t* device = *state;
  const hal_wait_mode_t modes[] = {HAL_WAIT_MODE_ALL, HAL_WAIT_MODE_ANY};
  for (size_t i = 0; i < 2; ++i) {
    HAL_ASSERT_OK(
        wait_list(device, modes[i], 0, NULL, NULL, hal_infinite_timeout()));
    HAL_ASSERT_OK(wait_list(device, modes[i], 0, NULL, NULL,
                            hal_make_deadline(hal_time_now() + CTS_MS)));
    HAL_ASSERT_OK(wait_list(device, modes[i], 0, NULL, NULL,
                            hal_make_timeout_ns(CTS_MS)));
    HAL_ASSERT_OK(
        wait_list(device, modes[i], 0, NULL, NULL, hal_immediate_timeout()));
  }
}

CTS_CASE(S3_WaitAlreadySignaled) {
  hal_semaphore_t* semaphore = cts_create_semaphore(*state, 2);
  HAL_ASSERT_OK(hal_semaphore_wait(semaphore, 1, hal_immediate_timeout()));
  HAL_ASSERT_OK(hal_semaphore_wait(semaphore, 2, hal_immediate_timeout()));
  HAL_ASSERT_OK(hal_semaphore_wait(semaphore, 1, hal_infinite_timeout()));
  HAL_ASSERT_OK(hal_semaphore_wait(semaphore, 2, hal_make_timeout_ns(CTS_MS)));
  hal_semaphore_release(semaphore);
}

CTS_CASE(S3_WaitUnsignaled) {
  hal_semaphore_t* semaphore = cts_create_semaphore(*state, 2);
  hal_time_t start = hal_time_now();
  HAL_ASSERT_STATUS(HAL_STATUS_DEADLINE_EXCEEDED, NULL,
                    hal_semaphore_wait(semaphore, 3, hal_immediate_timeout()));
  // A deadline in the past is an immediate poll, not an error.
  HAL_ASSERT_STATUS(
      HAL_STATUS_DEADLINE_EXCEEDED, NULL,
      hal_semaphore_wait(semaphore, 3, hal_make_deadline(start - CTS_MS)));
  HAL_ASSERT_STATUS(HAL_STATUS_DEADLINE_EXCEEDED, NULL,
                    hal_semaphore_wait(semaphore, 3, hal_make_timeout_ns(-5)));
  // Generous bound for a loaded machine: none of these blocked.
  assert_true(hal_time_now() - start < 5000 * CTS_MS);
  hal_semaphore_release(semaphore);
}

// A wait that times out says where the semaphore stands and what was
// waited for, alone and in a list.
CTS_CASE(S3_DeadlineExceededNamesCurrentAndAwaitedValues) {
  hal_semaphore_t* first = cts_create_semaphore(*state, 2);
  hal_semaphore_t* second = cts_create_semaphore(*state, 5);
  HAL_ASSERT_STATUS(HAL_STATUS_DEADLINE_EXCEEDED,
                    "is at 2, below the 3 waited for, at an immediate deadline",
                    hal_semaphore_wait(first, 3, hal_immediate_timeout()));
  HAL_ASSERT_STATUS(HAL_STATUS_DEADLINE_EXCEEDED,
                    "is at 2, below the 7 waited for, at the deadline",
                    hal_semaphore_wait(first, 7, hal_make_timeout_ns(CTS_MS)));
  hal_semaphore_t* semaphores[2] = {first, second};
  uint64_t values[2] = {1, 6};
  HAL_ASSERT_STATUS(HAL_STATUS_DEADLINE_EXCEEDED,
                    "1 of them reached before the deadline; entry 1 (semaphore",
                    wait_list(*state, HAL_WAIT_MODE_ALL, 2, semaphores, values,
                              hal_make_timeout_ns(CTS_MS)));
  HAL_ASSERT_STATUS(HAL_STATUS_DEADLINE_EXCEEDED, "is at 5, below the 6",
                    wait_list(*state, HAL_WAIT_MODE_ALL, 2, semaphores, values,
                              hal_make_timeout_ns(CTS_MS)));
  release_all(2, semaphores);
}

typedef struct signal_later_t {
  hal_semaphore_t* semaphore;
  uint64_t value;
  hal_duration_t delay_ns;
} signal_later_t;

static void* signal_later_thread(void* arg) {
  signal_later_t* job = arg;
  hal_sleep_until(hal_time_now() + job->delay_ns);
  hal_status_t status = hal_semaphore_signal(job->semaphore, job->value);
  hal_status_ignore(status);
  return NULL;
}

static pthread_t start_signal_later(signal_later_t* job) {
  pthread_t thread;
  assert_int_equal(pthread_create(&thread, NULL, signal_later_thread, job), 0);
  return thread;
}

CTS_CASE(S3_WaitAllButNotAllSignaled) {
  hal_semaphore_t* semaphores[] = {cts_create_semaphore(*state, 0),
                                   cts_create_semaphore(*state, 1)};
  uint64_t values[] = {1, 1};
  HAL_ASSERT_STATUS(HAL_STATUS_DEADLINE_EXCEEDED, NULL,
                    wait_list(*state, HAL_WAIT_MODE_ALL, 2, semaphores, values,
                              hal_make_timeout_ns(CTS_MS)));
  release_all(2, semaphores);
}

CTS_CASE(S3_WaitAllAndAllSignaled) {
  hal_semaphore_t* semaphores[] = {cts_create_semaphore(*state, 1),
                                   cts_create_semaphore(*state, 1)};
  uint64_t values[] = {1, 1};
  HAL_ASSERT_OK(wait_list(*state, HAL_WAIT_MODE_ALL, 2, semaphores, values,
                          hal_immediate_timeout()));
  // The other entry is signaled later, past its value.
  values[1] = 3;
  signal_later_t job = {semaphores[1], 5, 4 * CTS_MS};
  pthread_t thread = start_signal_later(&job);
  HAL_ASSERT_OK(wait_list(*state, HAL_WAIT_MODE_ALL, 2, semaphores, values,
                          hal_infinite_timeout()));
  pthread_join(thread, NULL);
  release_all(2, semaphores);
}

CTS_CASE(S3_WaitAnyAlreadySignaled) {
  hal_semaphore_t* semaphores[] = {cts_create_semaphore(*state, 0),
                                   cts_create_semaphore(*state, 1)};
  uint64_t values[] = {1, 1};
  HAL_ASSERT_OK(wait_list(*state, HAL_WAIT_MODE_ANY, 2, semaphores, values,
                          hal_immediate_timeout()));
  release_all(2, semaphores);
}

CTS_CASE(S3_WaitAnyLaterSignaled) {
  hal_semaphore_t* semaphores[] = {cts_create_semaphore(*state, 0),
                                   cts_create_semaphore(*state, 0)};
  uint64_t values[] = {1, 1};
  signal_later_t job = {semaphores[1], 1, 10 * CTS_MS};
  pthread_t thread = start_signal_later(&job);
  HAL_ASSERT_OK(wait_list(*state, HAL_WAIT_MODE_ANY, 2, semaphores, values,
                          hal_make_timeout_ns(60000 * CTS_MS)));
  assert_int_equal(cts_query(semaphores[1]), 1);
  assert_int_equal(cts_query(semaphores[0]), 0);
  pthread_join(thread, NULL);
  release_all(2, semaphores);
}

CTS_CASE(S3_WaitOnTheSameValueMultipleTimes) {
  hal_semaphore_t* semaphore = cts_create_semaphore(*state, 0);
  hal_semaphore_t* semaphores[] = {semaphore, semaphore, semaphore};
  uint64_t values[] = {1, 1, 1};
  signal_later_t job = {semaphore, 1, 5 * CTS_MS};
  pthread_t thread = start_signal_later(&job);
  HAL_ASSERT_OK(wait_list(*state, HAL_WAIT_MODE_ALL, 3, semaphores, values,
                          hal_make_timeout_ns(60000 * CTS_MS)));
  HAL_ASSERT_OK(cts_wait(semaphore, 1));
  HAL_ASSERT_OK(cts_wait(semaphore, 1));
  pthread_join(thread, NULL);
  // Duplicates in a list are independent entries (documented).
  values[2] = 2;
  HAL_ASSERT_STATUS(HAL_STATUS_DEADLINE_EXCEEDED, NULL,
                    wait_list(*state, HAL_WAIT_MODE_ALL, 3, semaphores, values,
                              hal_immediate_timeout()));
  HAL_ASSERT_OK(wait_list(*state, HAL_WAIT_MODE_ANY, 3, semaphores, values,
                          hal_immediate_timeout()));
  hal_semaphore_release(semaphore);
}

CTS_CASE(S3_WaitForFiniteTime) {
  hal_semaphore_t* semaphore = cts_create_semaphore(*state, 0);
  const hal_duration_t timeout = 20 * CTS_MS;
  hal_time_t start = hal_time_now();
  HAL_ASSERT_STATUS(
      HAL_STATUS_DEADLINE_EXCEEDED, NULL,
      hal_semaphore_wait(semaphore, 1, hal_make_timeout_ns(timeout)));
  hal_time_t relative_end = hal_time_now();
  assert_true(relative_end - start >= timeout);  // never early
  HAL_ASSERT_STATUS(
      HAL_STATUS_DEADLINE_EXCEEDED, NULL,
      hal_semaphore_wait(semaphore, 1,
                         hal_make_deadline(relative_end + timeout)));
  assert_true(hal_time_now() >= relative_end + timeout);
  HAL_ASSERT_STATUS(HAL_STATUS_DEADLINE_EXCEEDED, NULL,
                    hal_semaphore_wait(semaphore, 1, hal_immediate_timeout()));
  // Generous upper bound for a loaded machine: no wait blocks far past its
  // deadline.
  assert_true(hal_time_now() - start < 30000 * CTS_MS);
  hal_semaphore_release(semaphore);
}

CTS_CASE(S3_BadListArguments) {
  hal_device_t* device = *state;
  hal_semaphore_t* semaphore = cts_create_semaphore(device, 0);
  hal_semaphore_t* semaphores[2] = {semaphore, NULL};
  uint64_t values[2] = {0, 0};
  hal_timeout_t now = hal_immediate_timeout();
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, "NULL array",
                    wait_list(device, HAL_WAIT_MODE_ALL, 2, NULL, values, now));
  HAL_ASSERT_STATUS(
      HAL_STATUS_INVALID_ARGUMENT, "NULL array",
      wait_list(device, HAL_WAIT_MODE_ALL, 1, semaphores, NULL, now));
  HAL_ASSERT_STATUS(
      HAL_STATUS_INVALID_ARGUMENT, "entry 1 is NULL",
      wait_list(device, HAL_WAIT_MODE_ANY, 2, semaphores, values, now));
  values[0] = HAL_SEMAPHORE_FAILURE_VALUE;
  HAL_ASSERT_STATUS(
      HAL_STATUS_INVALID_ARGUMENT, "failure range",
      wait_list(device, HAL_WAIT_MODE_ALL, 1, semaphores, values, now));
  HAL_ASSERT_STATUS(
      HAL_STATUS_INVALID_ARGUMENT, "wait mode",
      wait_list(device, (hal_wait_mode_t)7, 1, semaphores, values, now));
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, NULL,
                    hal_semaphore_signal(NULL, 1));
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, NULL,
                    hal_semaphore_query(semaphore, NULL));
  hal_semaphore_release(semaphore);
}

CTS_CASE(S3_WaitAnyLarge) {
  enum { kCount = 100 };
  hal_semaphore_t* semaphores[kCount];
  uint64_t values[kCount];
  for (int i = 0; i < kCount; ++i) {
    semaphores[i] = cts_create_semaphore(*state, 0);
    values[i] = 1;
  }
  signal_later_t job = {semaphores[kCount - 1], 1, 2 * CTS_MS};
  pthread_t thread = start_signal_later(&job);
  HAL_ASSERT_OK(wait_list(*state, HAL_WAIT_MODE_ANY, kCount, semaphores, values,
                          hal_make_timeout_ns(60000 * CTS_MS)));
  pthread_join(thread, NULL);
  for (int i = 0; i < kCount - 1; ++i) {
    HAL_ASSERT_OK(hal_semaphore_signal(semaphores[i], 1));
  }
  HAL_ASSERT_OK(wait_list(*state, HAL_WAIT_MODE_ALL, kCount, semaphores, values,
                          hal_immediate_timeout()));
  release_all(kCount, semaphores);
}

//===----------------------------------------------------------------------===//
// S5 and the K rules: visibility and wake-ups under concurrency
//===----------------------------------------------------------------------===//

CTS_CASE(S5_WaitLaterSignaledBeyond) {
  hal_semaphore_t* semaphore = cts_create_semaphore(*state, 2);
  signal_later_t job = {semaphore, 20, 10 * CTS_MS};
  pthread_t thread = start_signal_later(&job);
  HAL_ASSERT_OK(cts_wait(semaphore, 3));
  assert_true(cts_query(semaphore) >= 3);  // K5
  pthread_join(thread, NULL);
  assert_int_equal(cts_query(semaphore), 20);
  hal_semaphore_release(semaphore);
}

// Two threads bounce control over two semaphores; each step jumps ahead.
typedef struct ping_pong_t {
  hal_semaphore_t* ping;
  hal_semaphore_t* pong;
  int rounds;
  int failures;
} ping_pong_t;

static void* pong_thread(void* arg) {
  ping_pong_t* game = arg;
  for (int i = 1; i <= game->rounds; ++i) {
    // Waits for ping >= 2i-1 and answers with pong = 2i (jumping by 2).
    if (cts_wait(game->ping, 2 * (uint64_t)i - 1) != HAL_OK ||
        hal_semaphore_signal(game->pong, 2 * (uint64_t)i) != HAL_OK) {
      ++game->failures;
      return NULL;
    }
  }
  return NULL;
}

CTS_CASE(K5_PingPong) {
  ping_pong_t game = {cts_create_semaphore(*state, 0),
                      cts_create_semaphore(*state, 0), 500, 0};
  pthread_t thread;
  assert_int_equal(pthread_create(&thread, NULL, pong_thread, &game), 0);
  for (int i = 1; i <= game.rounds; ++i) {
    HAL_ASSERT_OK(hal_semaphore_signal(game.ping, 2 * (uint64_t)i - 1));
    HAL_ASSERT_OK(cts_wait(game.pong, 2 * (uint64_t)i));
    assert_true(cts_query(game.pong) >= 2 * (uint64_t)i);
  }
  pthread_join(thread, NULL);
  assert_int_equal(game.failures, 0);
  hal_semaphore_release(game.ping);
  hal_semaphore_release(game.pong);
}

// K6: many threads wait on increasing values while one thread signals them
// one by one; every wait returns OK and sees its value.
typedef struct ladder_waiter_t {
  hal_semaphore_t* semaphore;
  uint64_t value;
  int ok;
} ladder_waiter_t;

static void* ladder_waiter_thread(void* arg) {
  ladder_waiter_t* job = arg;
  hal_status_t status = cts_wait(job->semaphore, job->value);
  uint64_t seen = 0;
  hal_status_t query = hal_semaphore_query(job->semaphore, &seen);
  job->ok = status == HAL_OK && query == HAL_OK && seen >= job->value;
  hal_status_free(status);
  hal_status_free(query);
  return NULL;
}

CTS_CASE(K6_ManyWaitersSignaledOneByOne) {
  enum { kWaiters = 8 };
  hal_semaphore_t* semaphore = cts_create_semaphore(*state, 0);
  ladder_waiter_t jobs[kWaiters];
  pthread_t threads[kWaiters];
  for (int i = 0; i < kWaiters; ++i) {
    jobs[i] = (ladder_waiter_t){semaphore, (uint64_t)i + 1, 0};
    assert_int_equal(
        pthread_create(&threads[i], NULL, ladder_waiter_thread, &jobs[i]), 0);
  }
  for (uint64_t v = 1; v <= kWaiters; ++v) {
    HAL_ASSERT_OK(hal_semaphore_signal(semaphore, v));
  }
  for (int i = 0; i < kWaiters; ++i) {
    pthread_join(threads[i], NULL);
    assert_true(jobs[i].ok);
  }
  hal_semaphore_release(semaphore);
}

typedef struct multi_wait_t {
  hal_device_t* device;
  hal_semaphore_t** semaphores;
  uint64_t* values;
  size_t count;
  hal_status_code_t result;
  int visible;  // S5: every value visible once the ALL wait returned OK
} multi_wait_t;

static void* multi_wait_thread(void* arg) {
  multi_wait_t* job = arg;
  job->result = hal_status_consume_code(
      cts_wait_list(job->device, HAL_WAIT_MODE_ALL, job->count, job->semaphores,
                    job->values, hal_make_timeout_ns(60000 * CTS_MS)));
  job->visible = 1;
  for (size_t i = 0; i < job->count; ++i) {
    uint64_t value = 0;
    if (hal_status_consume_code(
            hal_semaphore_query(job->semaphores[i], &value)) != HAL_STATUS_OK ||
        value < job->values[i]) {
      job->visible = 0;
    }
  }
  return NULL;
}

// K8: two threads wait ALL on a list while a third (this one) signals it.
CTS_CASE(K8_SimultaneousMultiWaitAll) {
  enum { kSemaphores = 4, kWaiters = 2 };
  hal_semaphore_t* semaphores[kSemaphores];
  uint64_t values[kSemaphores];
  for (int i = 0; i < kSemaphores; ++i) {
    semaphores[i] = cts_create_semaphore(*state, 0);
    values[i] = (uint64_t)i + 1;
  }
  multi_wait_t jobs[kWaiters];
  pthread_t threads[kWaiters];
  for (int i = 0; i < kWaiters; ++i) {
    jobs[i] = (multi_wait_t){*state,      semaphores,         values,
                             kSemaphores, HAL_STATUS_UNKNOWN, 0};
    assert_int_equal(
        pthread_create(&threads[i], NULL, multi_wait_thread, &jobs[i]), 0);
  }
  hal_sleep_until(hal_time_now() + 2 * CTS_MS);
  for (int i = 0; i < kSemaphores; ++i) {
    HAL_ASSERT_OK(hal_semaphore_signal(semaphores[i], values[i]));
  }
  for (int i = 0; i < kWaiters; ++i) {
    pthread_join(threads[i], NULL);
    assert_int_equal(jobs[i].result, HAL_STATUS_OK);
    assert_true(jobs[i].visible);
  }
  release_all(kSemaphores, semaphores);
}

// The test list: CASE binds this program's fixture.
#define CASE(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void) {
  const struct CMUnitTest tests[] = {
      CASE(S1_NoOp),
      CASE(S1_NormalSignaling),
      CASE(S1_SignalNotIncreasing),
      CASE(S1_FailureRangeRejected),
      CASE(S2_Failure),
      CASE(S2_FailureIsStickyAndKeepsMessage),
      CASE(S2_FailWakesAllWaiters),
      CASE(S2_ListWaitFailure),
      CASE(S2_WaitAnyWithFailedEntryReturnsFailure),
      CASE(S2_WaitAllFailsWhenAReachedEntryFails),
      CASE(S3_EmptyWait),
      CASE(S3_WaitAlreadySignaled),
      CASE(S3_WaitUnsignaled),
      CASE(S3_DeadlineExceededNamesCurrentAndAwaitedValues),
      CASE(S3_WaitAllButNotAllSignaled),
      CASE(S3_WaitAllAndAllSignaled),
      CASE(S3_WaitAnyAlreadySignaled),
      CASE(S3_WaitAnyLaterSignaled),
      CASE(S3_WaitOnTheSameValueMultipleTimes),
      CASE(S3_WaitForFiniteTime),
      CASE(S3_BadListArguments),
      CASE(S3_WaitAnyLarge),
      CASE(S5_WaitLaterSignaledBeyond),
      CASE(K5_PingPong),
      CASE(K6_ManyWaitersSignaledOneByOne),
      CASE(K8_SimultaneousMultiWaitAll),
  };
  return cts_main("semaphore", tests, HAL_ARRAYSIZE(tests));
}
