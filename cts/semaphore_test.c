// Copyright 2026 The HAL Authors.
//
// CTS suite "semaphore": host-side timeline semaphore behavior on the
// driver's semaphores (rules S1-S3, S5; K5, K6, K8 of the sync contract).

#include "cts.h"

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
  hal_semaphore_list_t list = {count, semaphores, values};
  return hal_device_wait_semaphores(device, mode, &list, timeout);
}

CTS_CASE(NoOp) {
  hal_semaphore_t* semaphore = cts_create_semaphore(*state, 123);
  assert_int_equal(cts_query(semaphore), 123);
  hal_semaphore_release(semaphore);
}

CTS_CASE(NormalSignaling) {
  hal_semaphore_t* semaphore = cts_create_semaphore(*state, 2);
  HAL_ASSERT_OK(hal_semaphore_signal(semaphore, 3));
  assert_int_equal(cts_query(semaphore), 3);
  HAL_ASSERT_OK(hal_semaphore_signal(semaphore, 40));
  assert_int_equal(cts_query(semaphore), 40);
  hal_semaphore_release(semaphore);
}

CTS_CASE(Failure) {
  hal_semaphore_t* semaphore = cts_create_semaphore(*state, 2);
  hal_semaphore_fail(semaphore,
                     hal_make_status(HAL_STATUS_DATA_LOSS, "cts failure"));
  uint64_t value = 0;
  HAL_ASSERT_STATUS(HAL_STATUS_DATA_LOSS, "cts failure",
                    hal_semaphore_query(semaphore, &value));
  assert_true(value >= HAL_SEMAPHORE_FAILURE_VALUE);
  // Sticky: a later failure and signals do not change it.
  hal_semaphore_fail(semaphore, hal_make_status(HAL_STATUS_ABORTED, "later"));
  HAL_ASSERT_STATUS(HAL_STATUS_DATA_LOSS, "cts failure",
                    hal_semaphore_query(semaphore, &value));
  hal_status_ignore(hal_semaphore_signal(semaphore, 100));
  HAL_ASSERT_STATUS(HAL_STATUS_DATA_LOSS, "cts failure",
                    hal_semaphore_wait(semaphore, 1, hal_immediate_timeout()));
  hal_semaphore_release(semaphore);
}

CTS_CASE(EmptyWait) {
  hal_device_t* device = *state;
  const hal_wait_mode_t modes[] = {HAL_WAIT_MODE_ALL, HAL_WAIT_MODE_ANY};
  for (size_t i = 0; i < 2; ++i) {
    HAL_ASSERT_OK(
        wait_list(device, modes[i], 0, NULL, NULL, hal_infinite_timeout()));
    HAL_ASSERT_OK(wait_list(device, modes[i], 0, NULL, NULL,
                            hal_make_deadline(hal_time_now() + 1000000)));
    HAL_ASSERT_OK(wait_list(device, modes[i], 0, NULL, NULL,
                            hal_make_timeout_ns(1000000)));
    HAL_ASSERT_OK(
        wait_list(device, modes[i], 0, NULL, NULL, hal_immediate_timeout()));
  }
}

CTS_CASE(WaitAlreadySignaled) {
  hal_semaphore_t* semaphore = cts_create_semaphore(*state, 2);
  HAL_ASSERT_OK(hal_semaphore_wait(semaphore, 1, hal_immediate_timeout()));
  HAL_ASSERT_OK(hal_semaphore_wait(semaphore, 2, hal_immediate_timeout()));
  HAL_ASSERT_OK(hal_semaphore_wait(semaphore, 2, hal_infinite_timeout()));
  hal_semaphore_release(semaphore);
}

CTS_CASE(WaitUnsignaled) {
  hal_semaphore_t* semaphore = cts_create_semaphore(*state, 2);
  hal_time_t start = hal_time_now();
  HAL_ASSERT_STATUS(HAL_STATUS_DEADLINE_EXCEEDED, NULL,
                    hal_semaphore_wait(semaphore, 3, hal_immediate_timeout()));
  // A deadline in the past does not block either.
  HAL_ASSERT_STATUS(
      HAL_STATUS_DEADLINE_EXCEEDED, NULL,
      hal_semaphore_wait(semaphore, 3, hal_make_deadline(start - 1000000)));
  assert_true(hal_time_now() - start < 5ll * 1000 * 1000 * 1000);
  hal_semaphore_release(semaphore);
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

CTS_CASE(WaitLaterSignaledBeyond) {
  hal_semaphore_t* semaphore = cts_create_semaphore(*state, 2);
  signal_later_t job = {semaphore, 20, 10 * 1000 * 1000};
  pthread_t thread = start_signal_later(&job);
  HAL_ASSERT_OK(cts_wait(semaphore, 3));
  assert_true(cts_query(semaphore) >= 3);  // K5
  pthread_join(thread, NULL);
  assert_int_equal(cts_query(semaphore), 20);
  hal_semaphore_release(semaphore);
}

CTS_CASE(WaitAllButNotAllSignaled) {
  hal_semaphore_t* a = cts_create_semaphore(*state, 0);
  hal_semaphore_t* b = cts_create_semaphore(*state, 1);
  hal_semaphore_t* semaphores[] = {a, b};
  uint64_t values[] = {1, 1};
  HAL_ASSERT_STATUS(HAL_STATUS_DEADLINE_EXCEEDED, NULL,
                    wait_list(*state, HAL_WAIT_MODE_ALL, 2, semaphores, values,
                              hal_make_timeout_ns(1000000)));
  hal_semaphore_release(a);
  hal_semaphore_release(b);
}

CTS_CASE(WaitAllAndAllSignaled) {
  hal_semaphore_t* a = cts_create_semaphore(*state, 1);
  hal_semaphore_t* b = cts_create_semaphore(*state, 1);
  hal_semaphore_t* semaphores[] = {a, b};
  uint64_t values[] = {1, 1};
  HAL_ASSERT_OK(wait_list(*state, HAL_WAIT_MODE_ALL, 2, semaphores, values,
                          hal_infinite_timeout()));
  hal_semaphore_release(a);
  hal_semaphore_release(b);
}

CTS_CASE(WaitAnyAlreadySignaled) {
  hal_semaphore_t* a = cts_create_semaphore(*state, 0);
  hal_semaphore_t* b = cts_create_semaphore(*state, 1);
  hal_semaphore_t* semaphores[] = {a, b};
  uint64_t values[] = {1, 1};
  HAL_ASSERT_OK(wait_list(*state, HAL_WAIT_MODE_ANY, 2, semaphores, values,
                          hal_immediate_timeout()));
  hal_semaphore_release(a);
  hal_semaphore_release(b);
}

CTS_CASE(WaitAnyLaterSignaled) {
  hal_semaphore_t* a = cts_create_semaphore(*state, 0);
  hal_semaphore_t* b = cts_create_semaphore(*state, 0);
  hal_semaphore_t* semaphores[] = {a, b};
  uint64_t values[] = {1, 1};
  signal_later_t job = {b, 1, 10 * 1000 * 1000};
  pthread_t thread = start_signal_later(&job);
  HAL_ASSERT_OK(wait_list(*state, HAL_WAIT_MODE_ANY, 2, semaphores, values,
                          hal_make_timeout_ns(60ll * 1000 * 1000 * 1000)));
  assert_int_equal(cts_query(b), 1);
  assert_int_equal(cts_query(a), 0);
  pthread_join(thread, NULL);
  hal_semaphore_release(a);
  hal_semaphore_release(b);
}

// Two threads bounce control over two semaphores; each step may jump ahead.
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

CTS_CASE(PingPong) {
  ping_pong_t game = {cts_create_semaphore(*state, 0),
                      cts_create_semaphore(*state, 0), 200, 0};
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

CTS_CASE(WaitOnTheSameValueMultipleTimes) {
  hal_semaphore_t* semaphore = cts_create_semaphore(*state, 0);
  hal_semaphore_t* semaphores[] = {semaphore, semaphore, semaphore};
  uint64_t values[] = {1, 1, 1};
  signal_later_t job = {semaphore, 1, 5 * 1000 * 1000};
  pthread_t thread = start_signal_later(&job);
  HAL_ASSERT_OK(wait_list(*state, HAL_WAIT_MODE_ALL, 3, semaphores, values,
                          hal_make_timeout_ns(60ll * 1000 * 1000 * 1000)));
  HAL_ASSERT_OK(cts_wait(semaphore, 1));
  HAL_ASSERT_OK(cts_wait(semaphore, 1));
  pthread_join(thread, NULL);
  hal_semaphore_release(semaphore);
}

CTS_CASE(WaitForFiniteTime) {
  hal_semaphore_t* semaphore = cts_create_semaphore(*state, 0);
  const hal_duration_t timeout = 20 * 1000 * 1000;  // 20 ms
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
  assert_true(hal_time_now() - start < 30ll * 1000 * 1000 * 1000);
  hal_semaphore_release(semaphore);
}

typedef struct multi_wait_t {
  hal_device_t* device;
  hal_semaphore_t** semaphores;
  uint64_t* values;
  size_t count;
  hal_wait_mode_t mode;
  hal_status_code_t result;
} multi_wait_t;

static void* multi_wait_thread(void* arg) {
  multi_wait_t* job = arg;
  hal_semaphore_list_t list = {job->count, job->semaphores, job->values};
  job->result = hal_status_consume_code(hal_device_wait_semaphores(
      job->device, job->mode, &list,
      hal_make_timeout_ns(60ll * 1000 * 1000 * 1000)));
  return NULL;
}

CTS_CASE(SimultaneousMultiWaitAll) {
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
    jobs[i] =
        (multi_wait_t){*state,      semaphores,        values,
                       kSemaphores, HAL_WAIT_MODE_ALL, HAL_STATUS_UNKNOWN};
    assert_int_equal(
        pthread_create(&threads[i], NULL, multi_wait_thread, &jobs[i]), 0);
  }
  // A third thread (this one) signals the list one by one (K8).
  for (int i = 0; i < kSemaphores; ++i) {
    HAL_ASSERT_OK(hal_semaphore_signal(semaphores[i], values[i]));
  }
  for (int i = 0; i < kWaiters; ++i) {
    pthread_join(threads[i], NULL);
    assert_int_equal(jobs[i].result, HAL_STATUS_OK);
  }
  for (int i = 0; i < kSemaphores; ++i)
    hal_semaphore_release(semaphores[i]);
}

CTS_CASE(SignalNotIncreasing) {
  hal_semaphore_t* semaphore = cts_create_semaphore(*state, 5);
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, NULL,
                    hal_semaphore_signal(semaphore, 5));
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, NULL,
                    hal_semaphore_signal(semaphore, 4));
  HAL_ASSERT_STATUS(
      HAL_STATUS_INVALID_ARGUMENT, NULL,
      hal_semaphore_signal(semaphore, HAL_SEMAPHORE_FAILURE_VALUE));
  assert_int_equal(cts_query(semaphore), 5);
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

CTS_CASE(FailWakesAllWaiters) {
  enum { kWaiters = 4 };
  hal_semaphore_t* semaphore = cts_create_semaphore(*state, 0);
  fail_waiter_t jobs[kWaiters];
  pthread_t threads[kWaiters];
  for (int i = 0; i < kWaiters; ++i) {
    jobs[i] = (fail_waiter_t){semaphore, HAL_STATUS_OK, 0};
    assert_int_equal(
        pthread_create(&threads[i], NULL, fail_waiter_thread, &jobs[i]), 0);
  }
  hal_sleep_until(hal_time_now() + 5 * 1000 * 1000);
  hal_semaphore_fail(semaphore,
                     hal_make_status(HAL_STATUS_ABORTED, "wake all"));
  for (int i = 0; i < kWaiters; ++i) {
    pthread_join(threads[i], NULL);
    assert_int_equal(jobs[i].code, HAL_STATUS_ABORTED);
    assert_true(jobs[i].message_ok);
  }
  hal_semaphore_release(semaphore);
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

CTS_CASE(ManyWaitersSignaledOneByOne) {
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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(NoOp, setup, teardown),
      cmocka_unit_test_setup_teardown(NormalSignaling, setup, teardown),
      cmocka_unit_test_setup_teardown(Failure, setup, teardown),
      cmocka_unit_test_setup_teardown(EmptyWait, setup, teardown),
      cmocka_unit_test_setup_teardown(WaitAlreadySignaled, setup, teardown),
      cmocka_unit_test_setup_teardown(WaitUnsignaled, setup, teardown),
      cmocka_unit_test_setup_teardown(WaitLaterSignaledBeyond, setup, teardown),
      cmocka_unit_test_setup_teardown(WaitAllButNotAllSignaled, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(WaitAllAndAllSignaled, setup, teardown),
      cmocka_unit_test_setup_teardown(WaitAnyAlreadySignaled, setup, teardown),
      cmocka_unit_test_setup_teardown(WaitAnyLaterSignaled, setup, teardown),
      cmocka_unit_test_setup_teardown(PingPong, setup, teardown),
      cmocka_unit_test_setup_teardown(WaitOnTheSameValueMultipleTimes, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(WaitForFiniteTime, setup, teardown),
      cmocka_unit_test_setup_teardown(SimultaneousMultiWaitAll, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(SignalNotIncreasing, setup, teardown),
      cmocka_unit_test_setup_teardown(FailWakesAllWaiters, setup, teardown),
      cmocka_unit_test_setup_teardown(ManyWaitersSignaledOneByOne, setup,
                                      teardown),
  };
  return cts_main("semaphore", tests, HAL_ARRAYSIZE(tests));
}
