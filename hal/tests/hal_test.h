// Copyright 2026 The HAL Authors.
//
// The one helper layer of the test programs that use libhal (core, sync,
// MLIR runtime, CTS; the CTS harness cts/cts.h builds on it):
//
//   HAL_ASSERT_OK(expr)                    fails with the status's text
//   HAL_ASSERT_STATUS(code, needle, expr)  fails unless |expr| fails with
//                                          |code| and a message containing
//                                          |needle| (NULL: any message)
//   HAL_TEST_SKIP(...)                     skips, saying why
//   HAL_THREAD_CHECK(cond, ...)            a check inside a worker thread;
//                                          hal_test_assert_no_thread_failures
//   hal_test_seed, hal_test_random*        HAL_TEST_SEED (printed; random
//                                          when unset) and a small PRNG
//   hal_test_iterations                    HAL_STRESS_ITERATIONS, a
//                                          multiplier of each test's short
//                                          CI default (1 when unset; a soak
//                                          uses e.g. 100)
//   hal_test_semaphore, hal_test_query     host semaphores
//   hal_test_stderr_capture_begin/_end     what this process writes to
//                                          stderr in between, as text
//   hal_test_run_in_child(_status)         a function run in a forked child:
//                                          its stderr, and whether it aborted
//                                          (its wait status)
//   hal_test_create_registry/_device       the core tests' test plugins
//
// Failures print the seed once one is picked, so a failing run repeats.

#ifndef HAL_TESTS_HAL_TEST_H_
#define HAL_TESTS_HAL_TEST_H_

// clang-format off
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
// clang-format on

#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <time.h>
#include <unistd.h>
#include "fork_child.h"

#include "hal/api.h"

// The seed of the running program (hal_test_seed), printed with every
// failure so that a failing run can be repeated; 0 until one is picked.
static uint64_t hal_test_seed_value;

#define HAL_TEST_FAIL(...)                                                     \
  do {                                                                         \
    if (hal_test_seed_value)                                                   \
      fprintf(stderr, "  (HAL_TEST_SEED=%" PRIu64 ")\n", hal_test_seed_value); \
    fail_msg(__VA_ARGS__);                                                     \
  } while (0)

#define HAL_ASSERT_OK(expr)                                         \
  do {                                                              \
    hal_status_t hal_status_ = (expr);                              \
    if (hal_status_ != HAL_OK) {                                    \
      char hal_text_[2048];                                         \
      hal_status_format(hal_status_, hal_text_, sizeof(hal_text_)); \
      hal_status_free(hal_status_);                                 \
      HAL_TEST_FAIL("%s returned %s", #expr, hal_text_);            \
    }                                                               \
  } while (0)

#define HAL_ASSERT_STATUS(code, needle, expr)                            \
  do {                                                                   \
    hal_status_t hal_status_ = (expr);                                   \
    char hal_text_[2048];                                                \
    hal_status_format(hal_status_, hal_text_, sizeof(hal_text_));        \
    hal_status_code_t hal_code_ = hal_status_code(hal_status_);          \
    hal_status_free(hal_status_);                                        \
    if (hal_code_ != (code)) {                                           \
      HAL_TEST_FAIL("%s: expected %s, got %s", #expr,                    \
                    hal_status_code_string(code), hal_text_);            \
    }                                                                    \
    const char* hal_needle_ = (needle);                                  \
    if (hal_needle_ && !strstr(hal_text_, hal_needle_)) {                \
      HAL_TEST_FAIL("%s: message \"%s\" lacks \"%s\"", #expr, hal_text_, \
                    hal_needle_);                                        \
    }                                                                    \
  } while (0)

// Skips the running test, printing why (a skip never goes unexplained).
#define HAL_TEST_SKIP(...)   \
  do {                       \
    printf("[  SKIP    ] "); \
    printf(__VA_ARGS__);     \
    printf("\n");            \
    fflush(stdout);          \
    skip();                  \
  } while (0)

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

// Polls |done| every 100 us until it holds (true), or 30 s passed (false).
static inline bool hal_test_poll_until(bool (*done)(const void*),
                                       const void* arg) {
  hal_time_t deadline = hal_time_now() + (hal_time_t)30000 * 1000000;
  while (!done(arg)) {
    if (hal_time_now() >= deadline)
      return false;
    hal_test_sleep_ns(100 * 1000);
  }
  return true;
}

// A semaphore and a value, for hal_test_poll_until(hal_test_value_reached):
// polled with query, which registers nothing (no wait, no callback).
typedef struct hal_test_value_t {
  hal_semaphore_t* semaphore;
  uint64_t value;
} hal_test_value_t;

static inline bool hal_test_value_reached(const void* arg) {
  const hal_test_value_t* at = (const hal_test_value_t*)arg;
  uint64_t current = 0;
  HAL_ASSERT_OK(hal_semaphore_query(at->semaphore, &current));
  return current >= at->value;
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

// Sends stderr to an unnamed temporary file until _end, which restores it
// and copies what was written (NUL-terminated, cut to |capacity| - 1).
typedef struct hal_test_stderr_capture_t {
  FILE* file;
  int saved;
} hal_test_stderr_capture_t;

static inline void hal_test_stderr_capture_begin(
    hal_test_stderr_capture_t* capture) {
  capture->file = tmpfile();
  assert_non_null(capture->file);
  fflush(stderr);
  capture->saved = dup(STDERR_FILENO);
  assert_true(capture->saved >= 0);
  assert_true(dup2(fileno(capture->file), STDERR_FILENO) >= 0);
}

static inline size_t hal_test_stderr_capture_end(
    hal_test_stderr_capture_t* capture, char* out, size_t capacity) {
  fflush(stderr);
  assert_true(dup2(capture->saved, STDERR_FILENO) >= 0);
  close(capture->saved);
  ssize_t length = pread(fileno(capture->file), out, capacity - 1, 0);
  fclose(capture->file);
  size_t kept = length > 0 ? (size_t)length : 0;
  out[kept] = '\0';
  return kept;
}

// Runs |fn| in a child process (fork it before any thread that the child
// would need exists); |text| gets the child's stderr. Returns the child's
// wait status (waitpid); a child whose |fn| returns exits with 0.
static inline int hal_test_run_in_child_status(void (*fn)(void), char* text,
                                               size_t capacity) {
  int pipe_fds[2];
  assert_int_equal(pipe(pipe_fds), 0);
  fflush(NULL);
  pid_t pid = hal_test_fork();  // a child that exit()s skips LeakSanitizer
  assert_true(pid >= 0);
  if (pid == 0) {
    dup2(pipe_fds[1], STDERR_FILENO);
    close(pipe_fds[0]);
    fn();
    _exit(0);
  }
  close(pipe_fds[1]);
  size_t length = 0;
  ssize_t n;
  while (length + 1 < capacity &&
         (n = read(pipe_fds[0], text + length, capacity - 1 - length)) > 0) {
    length += (size_t)n;
  }
  text[length] = '\0';
  close(pipe_fds[0]);
  int wstatus = 0;
  assert_int_equal(waitpid(pid, &wstatus, 0), pid);
  return wstatus;
}

// The same; returns whether the child ended by SIGABRT (a check that
// fired).
static inline bool hal_test_run_in_child(void (*fn)(void), char* text,
                                         size_t capacity) {
  int wstatus = hal_test_run_in_child_status(fn, text, capacity);
  return WIFSIGNALED(wstatus) && WTERMSIG(wstatus) == SIGABRT;
}

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
// A registry over |search_path| only (NULL: the test plugins).
static inline hal_driver_registry_t* hal_test_create_registry_at(
    const char* search_path) {
  hal_driver_registry_options_t options = {
      .search_path = search_path ? search_path : hal_test_plugin_dir(),
      .extra_search_path = NULL,
      .skip_install_dir = true,
  };
  hal_driver_registry_t* registry = NULL;
  HAL_ASSERT_OK(
      hal_driver_registry_create(&options, hal_allocator_system(), &registry));
  return registry;
}

static inline hal_driver_registry_t* hal_test_create_registry(void) {
  return hal_test_create_registry_at(NULL);
}

// Device 0 of driver |name| found under |search_path| (NULL: the test
// plugins); releases the driver reference (the device keeps it alive).
static inline hal_device_t* hal_test_create_driver_device(
    const char* search_path, const char* name) {
  hal_driver_registry_t* registry = hal_test_create_registry_at(search_path);
  hal_driver_t* driver = NULL;
  HAL_ASSERT_OK(hal_driver_registry_create_driver(
      registry, name, hal_allocator_system(), &driver));
  hal_device_t* device = NULL;
  HAL_ASSERT_OK(hal_driver_create_device_by_index(
      driver, 0, hal_allocator_system(), &device));
  hal_driver_release(driver);
  hal_driver_registry_free(registry);
  return device;
}

// Device 0 of the "test" driver.
static inline hal_device_t* hal_test_create_device(void) {
  return hal_test_create_driver_device(NULL, "test");
}

#endif  // HAL_TESTS_HAL_TEST_H_
