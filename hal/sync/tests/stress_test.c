// Copyright 2026 The HAL Authors.
//
// Host-side stress: many threads signaling and waiting, with and without
// timeouts. Regressions K5, K6, K8, K9 and rule S3/S5 under load.
// HAL_STRESS_ITERATIONS scales the rounds; HAL_TEST_SEED fixes the seed.

#include "hal_test.h"

//===----------------------------------------------------------------------===//
// K6: many threads waiting on values while another signals them one by one
//===----------------------------------------------------------------------===//

typedef struct k6_t {
  hal_semaphore_t* semaphore;
  uint64_t last_value;
  uint64_t seed;
} k6_t;

static void* k6_waiter_main(void* arg) {
  k6_t* k6 = (k6_t*)arg;
  uint64_t seed = k6->seed;
  for (uint64_t v = 1; v <= k6->last_value;
       v += 1 + hal_test_random_below(&seed, 3)) {
    hal_status_t status =
        hal_semaphore_wait(k6->semaphore, v, hal_infinite_timeout());
    HAL_THREAD_CHECK(status == HAL_OK, "wait %" PRIu64 " failed", v);
    hal_status_free(status);
    // K5/S5: the value is visible once the wait returned OK.
    HAL_THREAD_CHECK(hal_test_query(k6->semaphore) >= v,
                     "query below waited value %" PRIu64, v);
  }
  return NULL;
}

static void K6_WaitersWhileSignaledOneByOne(void** state) {
  uint64_t seed = hal_test_seed("K6_WaitersWhileSignaledOneByOne");
  enum { kThreads = 6 };
  k6_t k6[kThreads];
  hal_semaphore_t* semaphore = hal_test_semaphore(0);
  uint64_t last_value = hal_test_iterations(2000);
  pthread_t threads[kThreads];
  for (int i = 0; i < kThreads; ++i) {
    k6[i] = (k6_t){semaphore, last_value, hal_test_random(&seed)};
    hal_test_thread_create(&threads[i], k6_waiter_main, &k6[i]);
  }
  for (uint64_t v = 1; v <= last_value; ++v) {
    HAL_ASSERT_OK(hal_semaphore_signal(semaphore, v));
  }
  for (int i = 0; i < kThreads; ++i)
    pthread_join(threads[i], NULL);
  hal_test_assert_no_thread_failures();
  hal_semaphore_release(semaphore);
}

//===----------------------------------------------------------------------===//
// K8: wait ANY/ALL from several threads while a third signals the list
//===----------------------------------------------------------------------===//

enum { kK8Semaphores = 8 };

typedef struct k8_t {
  hal_semaphore_t* semaphores[kK8Semaphores];
  uint64_t rounds;
  hal_wait_mode_t mode;
} k8_t;

static void* k8_waiter_main(void* arg) {
  k8_t* k8 = (k8_t*)arg;
  for (uint64_t round = 1; round <= k8->rounds; ++round) {
    uint64_t values[kK8Semaphores];
    for (int i = 0; i < kK8Semaphores; ++i)
      values[i] = round;
    hal_semaphore_list_t list = {kK8Semaphores, k8->semaphores, values};
    hal_status_t status =
        hal_semaphore_list_wait(k8->mode, list, hal_infinite_timeout());
    HAL_THREAD_CHECK(status == HAL_OK, "round %" PRIu64 " failed", round);
    hal_status_free(status);
    int reached = 0;
    for (int i = 0; i < kK8Semaphores; ++i) {
      reached += hal_test_query(k8->semaphores[i]) >= round;
    }
    HAL_THREAD_CHECK(
        k8->mode == HAL_WAIT_MODE_ANY ? reached >= 1 : reached == kK8Semaphores,
        "round %" PRIu64 ": %d reached", round, reached);
  }
  return NULL;
}

static void K8_MultiWaitWhileSignaling(void** state) {
  uint64_t seed = hal_test_seed("K8_MultiWaitWhileSignaling");
  k8_t all = {{0}, hal_test_iterations(300), HAL_WAIT_MODE_ALL};
  for (int i = 0; i < kK8Semaphores; ++i) {
    all.semaphores[i] = hal_test_semaphore(0);
  }
  k8_t any = all;
  any.mode = HAL_WAIT_MODE_ANY;
  enum { kThreads = 4 };
  pthread_t threads[kThreads];
  for (int i = 0; i < kThreads; ++i) {
    hal_test_thread_create(&threads[i], k8_waiter_main, i % 2 ? &any : &all);
  }
  for (uint64_t round = 1; round <= all.rounds; ++round) {
    // Signal the list in a random order.
    int order[kK8Semaphores];
    for (int i = 0; i < kK8Semaphores; ++i)
      order[i] = i;
    for (int i = kK8Semaphores - 1; i > 0; --i) {
      int j = (int)hal_test_random_below(&seed, (uint64_t)i + 1);
      int t = order[i];
      order[i] = order[j];
      order[j] = t;
    }
    for (int i = 0; i < kK8Semaphores; ++i) {
      HAL_ASSERT_OK(hal_semaphore_signal(all.semaphores[order[i]], round));
    }
  }
  for (int i = 0; i < kThreads; ++i)
    pthread_join(threads[i], NULL);
  hal_test_assert_no_thread_failures();
  for (int i = 0; i < kK8Semaphores; ++i) {
    hal_semaphore_release(all.semaphores[i]);
  }
}

//===----------------------------------------------------------------------===//
// K9: waits with timeouts landing just as signals arrive
//===----------------------------------------------------------------------===//

typedef struct k9_t {
  hal_semaphore_t* semaphores[2];
  uint64_t last_value;
  _Atomic uint64_t ok_count;
  _Atomic uint64_t timeout_count;
} k9_t;

typedef struct k9_thread_t {
  k9_t* k9;
  uint64_t seed;
} k9_thread_t;

static void* k9_waiter_main(void* arg) {
  k9_t* k9 = ((k9_thread_t*)arg)->k9;
  uint64_t seed = ((k9_thread_t*)arg)->seed;
  for (;;) {
    uint64_t current = hal_test_query(k9->semaphores[0]);
    if (current >= k9->last_value)
      break;
    uint64_t value = current + 1 + hal_test_random_below(&seed, 2);
    // 0..50 us: about the signal period, so timeouts race signals.
    hal_timeout_t timeout =
        hal_make_timeout_ns((int64_t)hal_test_random_below(&seed, 50000));
    hal_status_t status;
    if (hal_test_random_below(&seed, 2)) {
      status = hal_semaphore_wait(k9->semaphores[0], value, timeout);
    } else {
      uint64_t values[2] = {value, value};
      hal_semaphore_list_t list = {2, k9->semaphores, values};
      status = hal_semaphore_list_wait(hal_test_random_below(&seed, 2)
                                           ? HAL_WAIT_MODE_ANY
                                           : HAL_WAIT_MODE_ALL,
                                       list, timeout);
    }
    hal_status_code_t code = hal_status_consume_code(status);
    if (code == HAL_STATUS_OK) {
      atomic_fetch_add(&k9->ok_count, 1);
      HAL_THREAD_CHECK(hal_test_query(k9->semaphores[0]) >= value ||
                           hal_test_query(k9->semaphores[1]) >= value,
                       "OK before %" PRIu64 " was reached", value);
    } else {
      atomic_fetch_add(&k9->timeout_count, 1);
      HAL_THREAD_CHECK(code == HAL_STATUS_DEADLINE_EXCEEDED, "code %s",
                       hal_status_code_string(code));
    }
  }
  return NULL;
}

static void K9_TimeoutVsSignal(void** state) {
  uint64_t seed = hal_test_seed("K9_TimeoutVsSignal");
  enum { kThreads = 4 };
  k9_t k9 = {{hal_test_semaphore(0), hal_test_semaphore(0)},
             hal_test_iterations(3000),
             0,
             0};
  k9_thread_t per_thread[kThreads];
  pthread_t threads[kThreads];
  for (int i = 0; i < kThreads; ++i) {
    per_thread[i].k9 = &k9;
    per_thread[i].seed = hal_test_random(&seed);
    hal_test_thread_create(&threads[i], k9_waiter_main, &per_thread[i]);
  }
  for (uint64_t v = 1; v <= k9.last_value; ++v) {
    HAL_ASSERT_OK(hal_semaphore_signal(k9.semaphores[0], v));
    HAL_ASSERT_OK(hal_semaphore_signal(k9.semaphores[1], v));
    if (hal_test_random_below(&seed, 4) == 0) {
      hal_test_sleep_ns((int64_t)hal_test_random_below(&seed, 30000));
    }
  }
  for (int i = 0; i < kThreads; ++i)
    pthread_join(threads[i], NULL);
  fprintf(stderr, "  %" PRIu64 " OK waits, %" PRIu64 " timeouts\n",
          atomic_load(&k9.ok_count), atomic_load(&k9.timeout_count));
  hal_test_assert_no_thread_failures();
  hal_semaphore_release(k9.semaphores[0]);
  hal_semaphore_release(k9.semaphores[1]);
}

//===----------------------------------------------------------------------===//
// S1/S3: many signalers race; every observer sees a monotonic payload
//===----------------------------------------------------------------------===//

typedef struct race_signal_t {
  hal_semaphore_t* semaphore;
  _Atomic uint64_t next;
  uint64_t last_value;
} race_signal_t;

static void* racing_signaler_main(void* arg) {
  race_signal_t* race = (race_signal_t*)arg;
  uint64_t seen = 0;
  for (;;) {
    uint64_t value = atomic_fetch_add(&race->next, 1);
    if (value > race->last_value)
      break;
    hal_status_t status = hal_semaphore_signal(race->semaphore, value);
    // A racing signaler may have gone past |value| already: S1 rejects.
    HAL_THREAD_CHECK(status == HAL_OK ||
                         hal_status_code(status) == HAL_STATUS_INVALID_ARGUMENT,
                     "signal: %s", hal_status_message(status));
    hal_status_free(status);
    uint64_t now = hal_test_query(race->semaphore);
    HAL_THREAD_CHECK(now >= seen && now >= value, "payload went backwards");
    seen = now;
    // Waits with and without timeouts between signals.
    hal_status_ignore(hal_semaphore_wait(race->semaphore, value + 2,
                                         hal_make_timeout_ns(2000)));
  }
  return NULL;
}

static void S3_ManySignalersAndWaiters(void** state) {
  hal_test_seed("S3_ManySignalersAndWaiters");
  enum { kThreads = 6 };
  race_signal_t race = {hal_test_semaphore(0), 1, hal_test_iterations(20000)};
  pthread_t threads[kThreads];
  for (int i = 0; i < kThreads; ++i) {
    hal_test_thread_create(&threads[i], racing_signaler_main, &race);
  }
  HAL_ASSERT_OK(hal_semaphore_wait(race.semaphore, race.last_value,
                                   hal_make_timeout_ns(60000 * HAL_MS)));
  for (int i = 0; i < kThreads; ++i)
    pthread_join(threads[i], NULL);
  assert_int_equal(hal_test_query(race.semaphore), race.last_value);
  hal_test_assert_no_thread_failures();
  hal_semaphore_release(race.semaphore);
}

// The test list: CASE binds this program's fixture.
#define CASE(name) cmocka_unit_test(name)

int main(void) {
  const struct CMUnitTest tests[] = {
      CASE(K6_WaitersWhileSignaledOneByOne),
      CASE(K8_MultiWaitWhileSignaling),
      CASE(K9_TimeoutVsSignal),
      CASE(S3_ManySignalersAndWaiters),
  };
  return cmocka_run_group_tests_name("stress", tests, NULL, NULL);
}
