// Copyright 2026 The HAL Authors.
//
// Helpers shared by the sync module's tests (cmocka): status assertions,
// the stress knobs (HAL_STRESS_ITERATIONS, HAL_TEST_SEED), a small PRNG and
// thread helpers.
//
// Stress tests scale their iteration counts by HAL_STRESS_ITERATIONS (a
// multiplier of each test's short CI default: 1 when unset; a soak run uses
// e.g. HAL_STRESS_ITERATIONS=100) and seed their PRNG from HAL_TEST_SEED
// (random when unset). The seed is printed at the start of each test and
// again on failure, so a failing run is repeatable.

#ifndef HAL_SYNC_TESTS_SYNC_TEST_UTIL_H_
#define HAL_SYNC_TESTS_SYNC_TEST_UTIL_H_

// clang-format off
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
// clang-format on

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hal/semaphore.h"
#include "hal/status.h"
#include "hal/time.h"
#include "hal/timepoint.h"

// The seed of the running test, printed by the failure macros.
static uint64_t hal_test_seed_value;

#define HAL_TEST_FAIL(...)                                                   \
  do {                                                                       \
    fprintf(stderr, "  (HAL_TEST_SEED=%" PRIu64 ")\n", hal_test_seed_value); \
    fail_msg(__VA_ARGS__);                                                   \
  } while (0)

#include "status_assert.h"  // after HAL_TEST_FAIL: it prints the seed

// Checks a condition inside a worker thread (where cmocka's assertions must
// not be used): counts failures and prints them; the test asserts zero.
static _Atomic int hal_test_thread_failures;
#define HAL_THREAD_CHECK(cond, ...)                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                            \
      fprintf(stderr, " (HAL_TEST_SEED=%" PRIu64 ")\n", hal_test_seed_value);  \
      atomic_fetch_add(&hal_test_thread_failures, 1);                          \
    }                                                                          \
  } while (0)

static inline void hal_test_assert_no_thread_failures(void) {
  int failures = atomic_exchange(&hal_test_thread_failures, 0);
  if (failures)
    HAL_TEST_FAIL("%d checks failed in threads", failures);
}

// Multiplier from HAL_STRESS_ITERATIONS (>= 1).
static inline uint64_t hal_test_iterations(uint64_t ci_default) {
  const char* env = getenv("HAL_STRESS_ITERATIONS");
  uint64_t scale = env ? strtoull(env, NULL, 10) : 0;
#ifdef HAL_STRESS_ITERATIONS_DEFAULT
  if (!scale)
    scale = HAL_STRESS_ITERATIONS_DEFAULT;
#endif
  if (!scale)
    scale = 1;
  return ci_default * scale;
}

// Picks and prints the seed for the current test.
static inline uint64_t hal_test_seed(const char* test_name) {
  const char* env = getenv("HAL_TEST_SEED");
  uint64_t seed = env ? strtoull(env, NULL, 10)
                      : (uint64_t)hal_time_now() ^ (uint64_t)getpid() << 32;
  if (!seed)
    seed = 1;
  hal_test_seed_value = seed;
  fprintf(stderr, "[ SEED     ] %s: HAL_TEST_SEED=%" PRIu64 "\n", test_name,
          seed);
  return seed;
}

// xorshift64*: per-thread state, no locking.
static inline uint64_t hal_test_random(uint64_t* state) {
  uint64_t x = *state;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *state = x;
  return x * UINT64_C(2685821657736338717);
}

static inline uint64_t hal_test_random_below(uint64_t* state, uint64_t n) {
  return n ? hal_test_random(state) % n : 0;
}

static inline void hal_test_sleep_ns(int64_t ns) {
  if (ns > 0)
    hal_sleep_until(hal_time_now() + ns);
}

static inline hal_semaphore_t* hal_test_semaphore(uint64_t initial_value) {
  hal_semaphore_t* semaphore = NULL;
  HAL_ASSERT_OK(hal_semaphore_create_host(hal_allocator_system(), initial_value,
                                          &semaphore));
  return semaphore;
}

static inline uint64_t hal_test_query(hal_semaphore_t* semaphore) {
  uint64_t value = 0;
  hal_status_t status = hal_semaphore_query(semaphore, &value);
  hal_status_free(status);
  return value;
}

static inline void hal_test_thread_create(pthread_t* thread, void* (*fn)(void*),
                                          void* arg) {
  if (pthread_create(thread, NULL, fn, arg) != 0) {
    HAL_TEST_FAIL("pthread_create failed");
  }
}

#define HAL_MS (1000000ll)

#endif  // HAL_SYNC_TESTS_SYNC_TEST_UTIL_H_
