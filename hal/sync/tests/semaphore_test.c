// Copyright 2026 The HAL Authors.
//
// Host-only semaphore tests: the semaphore cases of CTS.md and the S rules
// (S1-S3, S5), named after them, through the public API only.

#include "sync_test_util.h"

static hal_semaphore_list_t list_of(size_t count, hal_semaphore_t** semaphores,
                                    uint64_t* values) {
  hal_semaphore_list_t list = {count, semaphores, values};
  return list;
}

//===----------------------------------------------------------------------===//
// CTS semaphore (host only)
//===----------------------------------------------------------------------===//

static void NoOp(void** state) {
  hal_semaphore_t* semaphore = hal_test_semaphore(123);
  assert_int_equal(hal_test_query(semaphore), 123);
  hal_semaphore_release(semaphore);
}

static void NormalSignaling(void** state) {
  hal_semaphore_t* semaphore = hal_test_semaphore(2);
  HAL_ASSERT_OK(hal_semaphore_signal(semaphore, 3));
  assert_int_equal(hal_test_query(semaphore), 3);
  HAL_ASSERT_OK(hal_semaphore_signal(semaphore, 40));
  assert_int_equal(hal_test_query(semaphore), 40);
  hal_semaphore_release(semaphore);
}

static void Failure(void** state) {
  hal_semaphore_t* semaphore = hal_test_semaphore(2);
  hal_semaphore_fail(
      semaphore, hal_make_status(HAL_STATUS_DATA_LOSS, "the payload was lost"));
  uint64_t value = 0;
  HAL_ASSERT_STATUS(HAL_STATUS_DATA_LOSS, "the payload was lost",
                    hal_semaphore_query(semaphore, &value));
  assert_true(value >= HAL_SEMAPHORE_FAILURE_VALUE);
  hal_semaphore_release(semaphore);
}

static void EmptyWait(void** state) {
  hal_semaphore_list_t empty = hal_semaphore_list_empty();
  HAL_ASSERT_OK(hal_semaphore_list_wait(HAL_WAIT_MODE_ALL, empty,
                                        hal_immediate_timeout()));
  HAL_ASSERT_OK(hal_semaphore_list_wait(HAL_WAIT_MODE_ANY, empty,
                                        hal_immediate_timeout()));
  HAL_ASSERT_OK(hal_semaphore_list_wait(
      HAL_WAIT_MODE_ALL, empty, hal_make_deadline(hal_time_now() + HAL_MS)));
  HAL_ASSERT_OK(hal_semaphore_list_wait(HAL_WAIT_MODE_ANY, empty,
                                        hal_make_timeout_ns(HAL_MS)));
  HAL_ASSERT_OK(hal_semaphore_list_wait(HAL_WAIT_MODE_ANY, empty,
                                        hal_infinite_timeout()));
}

static void WaitAlreadySignaled(void** state) {
  hal_semaphore_t* semaphore = hal_test_semaphore(2);
  HAL_ASSERT_OK(hal_semaphore_wait(semaphore, 1, hal_immediate_timeout()));
  HAL_ASSERT_OK(hal_semaphore_wait(semaphore, 2, hal_immediate_timeout()));
  HAL_ASSERT_OK(hal_semaphore_wait(semaphore, 1, hal_infinite_timeout()));
  HAL_ASSERT_OK(hal_semaphore_wait(semaphore, 2, hal_make_timeout_ns(HAL_MS)));
  hal_semaphore_release(semaphore);
}

// A wait that times out says where the semaphore stands and what was
// waited for, alone and in a list.
static void DeadlineExceeded_NamesCurrentAndAwaitedValues(void** state) {
  hal_semaphore_t* first = hal_test_semaphore(2);
  hal_semaphore_t* second = hal_test_semaphore(5);
  HAL_ASSERT_STATUS(HAL_STATUS_DEADLINE_EXCEEDED,
                    "is at 2, below the 3 waited for, at an immediate deadline",
                    hal_semaphore_wait(first, 3, hal_immediate_timeout()));
  HAL_ASSERT_STATUS(HAL_STATUS_DEADLINE_EXCEEDED,
                    "is at 2, below the 7 waited for, at the deadline",
                    hal_semaphore_wait(first, 7, hal_make_timeout_ns(HAL_MS)));
  hal_semaphore_t* semaphores[2] = {first, second};
  uint64_t values[2] = {1, 6};
  hal_semaphore_list_t list = {2, semaphores, values};
  HAL_ASSERT_STATUS(HAL_STATUS_DEADLINE_EXCEEDED,
                    "1 of them reached before the deadline; entry 1 (semaphore",
                    hal_semaphore_list_wait(HAL_WAIT_MODE_ALL, list,
                                            hal_make_timeout_ns(HAL_MS)));
  HAL_ASSERT_STATUS(HAL_STATUS_DEADLINE_EXCEEDED, "is at 5, below the 6",
                    hal_semaphore_list_wait(HAL_WAIT_MODE_ALL, list,
                                            hal_make_timeout_ns(HAL_MS)));
  hal_semaphore_release(first);
  hal_semaphore_release(second);
}

static void WaitUnsignaled(void** state) {
  hal_semaphore_t* semaphore = hal_test_semaphore(2);
  hal_time_t start = hal_time_now();
  HAL_ASSERT_STATUS(HAL_STATUS_DEADLINE_EXCEEDED, NULL,
                    hal_semaphore_wait(semaphore, 3, hal_immediate_timeout()));
  // A deadline in the past is an immediate poll, not an error.
  HAL_ASSERT_STATUS(
      HAL_STATUS_DEADLINE_EXCEEDED, NULL,
      hal_semaphore_wait(semaphore, 3, hal_make_deadline(start - HAL_MS)));
  HAL_ASSERT_STATUS(HAL_STATUS_DEADLINE_EXCEEDED, NULL,
                    hal_semaphore_wait(semaphore, 3, hal_make_timeout_ns(-5)));
  // Generous bound: none of these blocked.
  assert_true(hal_time_now() - start < 500 * HAL_MS);
  hal_semaphore_release(semaphore);
}

typedef struct signal_later_t {
  hal_semaphore_t* semaphore;
  uint64_t value;
  int64_t delay_ns;
} signal_later_t;

static void* signal_later_main(void* arg) {
  signal_later_t* later = (signal_later_t*)arg;
  hal_test_sleep_ns(later->delay_ns);
  hal_status_t status = hal_semaphore_signal(later->semaphore, later->value);
  HAL_THREAD_CHECK(status == HAL_OK, "signal failed");
  hal_status_free(status);
  return NULL;
}

static void WaitLaterSignaledBeyond(void** state) {
  hal_semaphore_t* semaphore = hal_test_semaphore(2);
  signal_later_t later = {semaphore, 10, 10 * HAL_MS};
  pthread_t thread;
  hal_test_thread_create(&thread, signal_later_main, &later);
  HAL_ASSERT_OK(hal_semaphore_wait(semaphore, 3, hal_infinite_timeout()));
  assert_true(hal_test_query(semaphore) >= 3);
  pthread_join(thread, NULL);
  hal_test_assert_no_thread_failures();
  hal_semaphore_release(semaphore);
}

static void WaitAllButNotAllSignaled(void** state) {
  hal_semaphore_t* semaphores[2] = {hal_test_semaphore(0),
                                    hal_test_semaphore(0)};
  uint64_t values[2] = {1, 1};
  HAL_ASSERT_OK(hal_semaphore_signal(semaphores[0], 1));
  HAL_ASSERT_STATUS(
      HAL_STATUS_DEADLINE_EXCEEDED, NULL,
      hal_semaphore_list_wait(HAL_WAIT_MODE_ALL, list_of(2, semaphores, values),
                              hal_make_timeout_ns(5 * HAL_MS)));
  hal_semaphore_release(semaphores[0]);
  hal_semaphore_release(semaphores[1]);
}

static void WaitAllAndAllSignaled(void** state) {
  hal_semaphore_t* semaphores[2] = {hal_test_semaphore(0),
                                    hal_test_semaphore(0)};
  uint64_t values[2] = {1, 1};
  signal_later_t later[2] = {{semaphores[0], 1, 2 * HAL_MS},
                             {semaphores[1], 5, 4 * HAL_MS}};
  pthread_t threads[2];
  for (int i = 0; i < 2; ++i) {
    hal_test_thread_create(&threads[i], signal_later_main, &later[i]);
  }
  HAL_ASSERT_OK(hal_semaphore_list_wait(HAL_WAIT_MODE_ALL,
                                        list_of(2, semaphores, values),
                                        hal_infinite_timeout()));
  for (int i = 0; i < 2; ++i)
    pthread_join(threads[i], NULL);
  hal_test_assert_no_thread_failures();
  hal_semaphore_release(semaphores[0]);
  hal_semaphore_release(semaphores[1]);
}

static void WaitAnyAlreadySignaled(void** state) {
  hal_semaphore_t* semaphores[2] = {hal_test_semaphore(0),
                                    hal_test_semaphore(5)};
  uint64_t values[2] = {1, 1};
  HAL_ASSERT_OK(hal_semaphore_list_wait(HAL_WAIT_MODE_ANY,
                                        list_of(2, semaphores, values),
                                        hal_immediate_timeout()));
  hal_semaphore_release(semaphores[0]);
  hal_semaphore_release(semaphores[1]);
}

static void WaitAnyLaterSignaled(void** state) {
  hal_semaphore_t* semaphores[2] = {hal_test_semaphore(0),
                                    hal_test_semaphore(0)};
  uint64_t values[2] = {1, 1};
  signal_later_t later = {semaphores[1], 1, 5 * HAL_MS};
  pthread_t thread;
  hal_test_thread_create(&thread, signal_later_main, &later);
  HAL_ASSERT_OK(hal_semaphore_list_wait(HAL_WAIT_MODE_ANY,
                                        list_of(2, semaphores, values),
                                        hal_infinite_timeout()));
  assert_int_equal(hal_test_query(semaphores[1]), 1);
  pthread_join(thread, NULL);
  hal_test_assert_no_thread_failures();
  hal_semaphore_release(semaphores[0]);
  hal_semaphore_release(semaphores[1]);
}

typedef struct ping_pong_t {
  hal_semaphore_t* ping;
  hal_semaphore_t* pong;
  uint64_t rounds;
} ping_pong_t;

static void* ping_pong_main(void* arg) {
  ping_pong_t* pp = (ping_pong_t*)arg;
  uint64_t value = 0;
  while (value < pp->rounds) {
    hal_status_t status =
        hal_semaphore_wait(pp->ping, value + 1, hal_infinite_timeout());
    HAL_THREAD_CHECK(status == HAL_OK, "wait failed");
    hal_status_free(status);
    value = hal_test_query(pp->ping);
    // Jump ahead: answer with the value seen plus one.
    status = hal_semaphore_signal(pp->pong, value + 1);
    HAL_THREAD_CHECK(status == HAL_OK, "signal failed");
    hal_status_free(status);
    value += 1;
  }
  return NULL;
}

static void PingPong(void** state) {
  ping_pong_t pp = {hal_test_semaphore(0), hal_test_semaphore(0), 1000};
  pthread_t thread;
  hal_test_thread_create(&thread, ping_pong_main, &pp);
  uint64_t value = 0;
  while (value < pp.rounds) {
    HAL_ASSERT_OK(hal_semaphore_signal(pp.ping, value + 1));
    HAL_ASSERT_OK(
        hal_semaphore_wait(pp.pong, value + 2, hal_infinite_timeout()));
    value = hal_test_query(pp.pong);
  }
  pthread_join(thread, NULL);
  hal_test_assert_no_thread_failures();
  hal_semaphore_release(pp.ping);
  hal_semaphore_release(pp.pong);
}

static void WaitOnTheSameValueMultipleTimes(void** state) {
  hal_semaphore_t* semaphore = hal_test_semaphore(0);
  HAL_ASSERT_OK(hal_semaphore_signal(semaphore, 1));
  for (int i = 0; i < 4; ++i) {
    HAL_ASSERT_OK(hal_semaphore_wait(semaphore, 1, hal_immediate_timeout()));
  }
  // Duplicates in a list are independent entries (documented).
  hal_semaphore_t* semaphores[3] = {semaphore, semaphore, semaphore};
  uint64_t values[3] = {1, 1, 0};
  HAL_ASSERT_OK(hal_semaphore_list_wait(HAL_WAIT_MODE_ALL,
                                        list_of(3, semaphores, values),
                                        hal_immediate_timeout()));
  values[2] = 2;
  HAL_ASSERT_STATUS(
      HAL_STATUS_DEADLINE_EXCEEDED, NULL,
      hal_semaphore_list_wait(HAL_WAIT_MODE_ALL, list_of(3, semaphores, values),
                              hal_immediate_timeout()));
  HAL_ASSERT_OK(hal_semaphore_list_wait(HAL_WAIT_MODE_ANY,
                                        list_of(3, semaphores, values),
                                        hal_immediate_timeout()));
  hal_semaphore_release(semaphore);
}

static void WaitForFiniteTime(void** state) {
  hal_semaphore_t* semaphore = hal_test_semaphore(0);
  hal_time_t start = hal_time_now();
  HAL_ASSERT_STATUS(HAL_STATUS_DEADLINE_EXCEEDED, NULL,
                    hal_semaphore_wait(semaphore, 1, hal_immediate_timeout()));
  HAL_ASSERT_STATUS(
      HAL_STATUS_DEADLINE_EXCEEDED, NULL,
      hal_semaphore_wait(semaphore, 1, hal_make_timeout_ns(20 * HAL_MS)));
  hal_time_t after_relative = hal_time_now();
  assert_true(after_relative - start >= 20 * HAL_MS);
  HAL_ASSERT_STATUS(
      HAL_STATUS_DEADLINE_EXCEEDED, NULL,
      hal_semaphore_wait(semaphore, 1,
                         hal_make_deadline(after_relative + 20 * HAL_MS)));
  assert_true(hal_time_now() >= after_relative + 20 * HAL_MS);
  // S3: never blocks much past the deadline (generous bound, loaded CI).
  assert_true(hal_time_now() - start < 2000 * HAL_MS);
  hal_semaphore_release(semaphore);
}

typedef struct multi_wait_t {
  hal_semaphore_t** semaphores;
  uint64_t* values;
  size_t count;
  hal_wait_mode_t mode;
} multi_wait_t;

static void* multi_wait_main(void* arg) {
  multi_wait_t* wait = (multi_wait_t*)arg;
  hal_semaphore_list_t list = {wait->count, wait->semaphores, wait->values};
  hal_status_t status =
      hal_semaphore_list_wait(wait->mode, list, hal_infinite_timeout());
  HAL_THREAD_CHECK(status == HAL_OK, "list wait failed");
  hal_status_free(status);
  // S5 (K5): the values are visible once the wait returns OK.
  if (wait->mode == HAL_WAIT_MODE_ALL) {
    for (size_t i = 0; i < wait->count; ++i) {
      HAL_THREAD_CHECK(hal_test_query(wait->semaphores[i]) >= wait->values[i],
                       "value not visible after OK wait");
    }
  }
  return NULL;
}

static void SimultaneousMultiWaitAll(void** state) {
  hal_semaphore_t* semaphores[2] = {hal_test_semaphore(0),
                                    hal_test_semaphore(0)};
  uint64_t values[2] = {1, 2};
  multi_wait_t wait = {semaphores, values, 2, HAL_WAIT_MODE_ALL};
  pthread_t threads[2];
  for (int i = 0; i < 2; ++i) {
    hal_test_thread_create(&threads[i], multi_wait_main, &wait);
  }
  hal_test_sleep_ns(2 * HAL_MS);
  HAL_ASSERT_OK(hal_semaphore_signal(semaphores[0], 1));
  HAL_ASSERT_OK(hal_semaphore_signal(semaphores[1], 2));
  for (int i = 0; i < 2; ++i)
    pthread_join(threads[i], NULL);
  hal_test_assert_no_thread_failures();
  hal_semaphore_release(semaphores[0]);
  hal_semaphore_release(semaphores[1]);
}

//===----------------------------------------------------------------------===//
// S rules
//===----------------------------------------------------------------------===//

static void S1_SignalNotIncreasing(void** state) {
  hal_semaphore_t* semaphore = hal_test_semaphore(5);
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, "not greater",
                    hal_semaphore_signal(semaphore, 5));
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, "not greater",
                    hal_semaphore_signal(semaphore, 4));
  assert_int_equal(hal_test_query(semaphore), 5);
  hal_semaphore_release(semaphore);
}

static void S1_FailureRangeRejected(void** state) {
  hal_semaphore_t* semaphore = hal_test_semaphore(5);
  HAL_ASSERT_STATUS(
      HAL_STATUS_INVALID_ARGUMENT, "failure range",
      hal_semaphore_signal(semaphore, HAL_SEMAPHORE_FAILURE_VALUE));
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, "failure range",
                    hal_semaphore_signal(semaphore, UINT64_MAX));
  HAL_ASSERT_STATUS(
      HAL_STATUS_INVALID_ARGUMENT, "failure range",
      hal_semaphore_wait(semaphore, UINT64_MAX, hal_immediate_timeout()));
  assert_int_equal(hal_test_query(semaphore), 5);
  HAL_ASSERT_OK(hal_semaphore_signal(semaphore, HAL_SEMAPHORE_MAX_VALUE));
  assert_int_equal(hal_test_query(semaphore), HAL_SEMAPHORE_MAX_VALUE);
  hal_semaphore_t* created = NULL;
  HAL_ASSERT_STATUS(
      HAL_STATUS_INVALID_ARGUMENT, "failure range",
      hal_semaphore_create_host(hal_allocator_system(),
                                HAL_SEMAPHORE_FAILURE_VALUE, &created));
  assert_null(created);
  hal_semaphore_release(semaphore);
}

static void S2_FailureIsStickyAndKeepsMessage(void** state) {
  hal_semaphore_t* semaphore = hal_test_semaphore(0);
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
  _Atomic int returned;
} fail_waiter_t;

static void* fail_waiter_main(void* arg) {
  fail_waiter_t* waiter = (fail_waiter_t*)arg;
  hal_status_t status =
      hal_semaphore_wait(waiter->semaphore, 100, hal_infinite_timeout());
  HAL_THREAD_CHECK(hal_status_code(status) == HAL_STATUS_DATA_LOSS &&
                       strstr(hal_status_message(status), "boom"),
                   "wait returned %s", hal_status_message(status));
  hal_status_free(status);
  atomic_fetch_add(&waiter->returned, 1);
  return NULL;
}

static void S2_FailWakesAllWaiters(void** state) {
  enum { kThreads = 8 };
  fail_waiter_t waiter = {hal_test_semaphore(0), 0};
  pthread_t threads[kThreads];
  for (int i = 0; i < kThreads; ++i) {
    hal_test_thread_create(&threads[i], fail_waiter_main, &waiter);
  }
  hal_test_sleep_ns(5 * HAL_MS);
  hal_semaphore_fail(waiter.semaphore,
                     hal_make_status(HAL_STATUS_DATA_LOSS, "boom"));
  for (int i = 0; i < kThreads; ++i)
    pthread_join(threads[i], NULL);
  assert_int_equal(atomic_load(&waiter.returned), kThreads);
  hal_test_assert_no_thread_failures();
  hal_semaphore_release(waiter.semaphore);
}

static void S2_ListWaitFailure(void** state) {
  hal_semaphore_t* semaphores[2] = {hal_test_semaphore(0),
                                    hal_test_semaphore(0)};
  uint64_t values[2] = {1, 1};
  hal_semaphore_fail(semaphores[1],
                     hal_make_status(HAL_STATUS_UNAVAILABLE, "lost"));
  HAL_ASSERT_STATUS(
      HAL_STATUS_UNAVAILABLE, "lost",
      hal_semaphore_list_wait(HAL_WAIT_MODE_ALL, list_of(2, semaphores, values),
                              hal_infinite_timeout()));
  HAL_ASSERT_STATUS(
      HAL_STATUS_UNAVAILABLE, "lost",
      hal_semaphore_list_wait(HAL_WAIT_MODE_ANY, list_of(2, semaphores, values),
                              hal_immediate_timeout()));
  HAL_ASSERT_OK(hal_semaphore_signal(semaphores[0], 1));
  // ANY: a reached entry wins over a failed one (documented).
  HAL_ASSERT_OK(hal_semaphore_list_wait(HAL_WAIT_MODE_ANY,
                                        list_of(2, semaphores, values),
                                        hal_immediate_timeout()));
  hal_semaphore_release(semaphores[0]);
  hal_semaphore_release(semaphores[1]);
}

typedef struct fail_later_t {
  hal_semaphore_t* semaphore;
  int64_t delay_ns;
} fail_later_t;

static void* fail_later_main(void* arg) {
  fail_later_t* later = (fail_later_t*)arg;
  hal_test_sleep_ns(later->delay_ns);
  hal_semaphore_fail(later->semaphore,
                     hal_make_status(HAL_STATUS_ABORTED, "failed later"));
  return NULL;
}

// S2/S3: a failed entry decides an ANY wait unless another entry is
// reached, whether it failed before the wait began or while it slept, and
// wherever it stands in the list: at once, not at the deadline. The
// deadline is far enough that reaching it means the wait slept through
// the failure (the correct path takes microseconds).
static void S2_WaitAnyWithFailedEntryReturnsFailure(void** state) {
  const hal_duration_t deadline_ns = 8000 * HAL_MS;
  const hal_timeout_t timeout = hal_make_timeout_ns(deadline_ns);
  for (int failed_index = 0; failed_index < 3; ++failed_index) {
    hal_semaphore_t* semaphores[3] = {
        hal_test_semaphore(0), hal_test_semaphore(0), hal_test_semaphore(0)};
    uint64_t values[3] = {1, 1, 1};
    // Failed before the wait starts.
    hal_semaphore_fail(semaphores[failed_index],
                       hal_make_status(HAL_STATUS_DATA_LOSS, "failed first"));
    hal_time_t start = hal_time_now();
    HAL_ASSERT_STATUS(
        HAL_STATUS_DATA_LOSS, "failed first",
        hal_semaphore_list_wait(HAL_WAIT_MODE_ANY,
                                list_of(3, semaphores, values), timeout));
    if (hal_time_now() - start >= deadline_ns) {
      HAL_TEST_FAIL("ANY with failed entry %d slept until its deadline",
                    failed_index);
    }
    // The same answer as a failure arriving during the wait.
    hal_semaphore_t* fresh = hal_test_semaphore(0);
    hal_semaphore_t* during[3] = {semaphores[(failed_index + 1) % 3], fresh,
                                  semaphores[(failed_index + 2) % 3]};
    fail_later_t later = {fresh, 2 * HAL_MS};
    pthread_t thread;
    hal_test_thread_create(&thread, fail_later_main, &later);
    HAL_ASSERT_STATUS(
        HAL_STATUS_ABORTED, "failed later",
        hal_semaphore_list_wait(HAL_WAIT_MODE_ANY, list_of(3, during, values),
                                timeout));
    pthread_join(thread, NULL);
    // A reached entry still wins over a failed one.
    HAL_ASSERT_OK(hal_semaphore_signal(semaphores[(failed_index + 2) % 3], 1));
    HAL_ASSERT_OK(hal_semaphore_list_wait(
        HAL_WAIT_MODE_ANY, list_of(3, semaphores, values), timeout));
    hal_semaphore_release(fresh);
    for (int i = 0; i < 3; ++i)
      hal_semaphore_release(semaphores[i]);
  }
}

static void S3_BadListArguments(void** state) {
  hal_semaphore_t* semaphore = hal_test_semaphore(0);
  hal_semaphore_t* semaphores[2] = {semaphore, NULL};
  uint64_t values[2] = {0, 0};
  HAL_ASSERT_STATUS(
      HAL_STATUS_INVALID_ARGUMENT, "NULL array",
      hal_semaphore_list_wait(HAL_WAIT_MODE_ALL, list_of(2, NULL, values),
                              hal_immediate_timeout()));
  HAL_ASSERT_STATUS(
      HAL_STATUS_INVALID_ARGUMENT, "NULL array",
      hal_semaphore_list_wait(HAL_WAIT_MODE_ALL, list_of(1, semaphores, NULL),
                              hal_immediate_timeout()));
  HAL_ASSERT_STATUS(
      HAL_STATUS_INVALID_ARGUMENT, "entry 1 is NULL",
      hal_semaphore_list_wait(HAL_WAIT_MODE_ANY, list_of(2, semaphores, values),
                              hal_immediate_timeout()));
  values[0] = HAL_SEMAPHORE_FAILURE_VALUE;
  HAL_ASSERT_STATUS(
      HAL_STATUS_INVALID_ARGUMENT, "failure range",
      hal_semaphore_list_wait(HAL_WAIT_MODE_ALL, list_of(1, semaphores, values),
                              hal_immediate_timeout()));
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, "mode",
                    hal_semaphore_list_wait((hal_wait_mode_t)7,
                                            list_of(1, semaphores, values),
                                            hal_immediate_timeout()));
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, NULL,
                    hal_semaphore_signal(NULL, 1));
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, NULL,
                    hal_semaphore_query(semaphore, NULL));
  hal_semaphore_release(semaphore);
}

static void S3_WaitAnyLarge(void** state) {
  enum { kCount = 100 };
  hal_semaphore_t* semaphores[kCount];
  uint64_t values[kCount];
  for (int i = 0; i < kCount; ++i) {
    semaphores[i] = hal_test_semaphore(0);
    values[i] = 1;
  }
  signal_later_t later = {semaphores[kCount - 1], 1, 2 * HAL_MS};
  pthread_t thread;
  hal_test_thread_create(&thread, signal_later_main, &later);
  HAL_ASSERT_OK(hal_semaphore_list_wait(HAL_WAIT_MODE_ANY,
                                        list_of(kCount, semaphores, values),
                                        hal_make_timeout_ns(10000 * HAL_MS)));
  pthread_join(thread, NULL);
  for (int i = 0; i < kCount - 1; ++i) {
    HAL_ASSERT_OK(hal_semaphore_signal(semaphores[i], 1));
  }
  HAL_ASSERT_OK(hal_semaphore_list_wait(HAL_WAIT_MODE_ALL,
                                        list_of(kCount, semaphores, values),
                                        hal_immediate_timeout()));
  for (int i = 0; i < kCount; ++i)
    hal_semaphore_release(semaphores[i]);
  hal_test_assert_no_thread_failures();
}

int main(void) {
  hal_test_seed("semaphore_test");
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(NoOp),
      cmocka_unit_test(NormalSignaling),
      cmocka_unit_test(Failure),
      cmocka_unit_test(EmptyWait),
      cmocka_unit_test(WaitAlreadySignaled),
      cmocka_unit_test(WaitUnsignaled),
      cmocka_unit_test(WaitLaterSignaledBeyond),
      cmocka_unit_test(WaitAllButNotAllSignaled),
      cmocka_unit_test(WaitAllAndAllSignaled),
      cmocka_unit_test(WaitAnyAlreadySignaled),
      cmocka_unit_test(WaitAnyLaterSignaled),
      cmocka_unit_test(PingPong),
      cmocka_unit_test(WaitOnTheSameValueMultipleTimes),
      cmocka_unit_test(WaitForFiniteTime),
      cmocka_unit_test(SimultaneousMultiWaitAll),
      cmocka_unit_test(S1_SignalNotIncreasing),
      cmocka_unit_test(S1_FailureRangeRejected),
      cmocka_unit_test(S2_FailureIsStickyAndKeepsMessage),
      cmocka_unit_test(S2_FailWakesAllWaiters),
      cmocka_unit_test(S2_ListWaitFailure),
      cmocka_unit_test(S2_WaitAnyWithFailedEntryReturnsFailure),
      cmocka_unit_test(S3_BadListArguments),
      cmocka_unit_test(S3_WaitAnyLarge),
      cmocka_unit_test(DeadlineExceeded_NamesCurrentAndAwaitedValues),
  };
  return cmocka_run_group_tests_name("semaphore", tests, NULL, NULL);
}
