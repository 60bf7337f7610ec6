// Copyright 2026 The HAL Authors.
//
// The bounded spin of host waits (HAL_SYNC_SPIN_NS,
// hal_semaphore_set_spin_ns): the setting's range, and that a wait which
// spins decides exactly what a sleeping one does: a value reached, a
// failure, a deadline. Run by meson with HAL_SYNC_SPIN_NS=250000, unset,
// and out of range (with HAL_SYNC_NO_FUTEX malformed too).

#include "hal_test.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// The setting meson starts the program with.
#define SPIN_TEST_ENV_NS 250000
// The out-of-range setting, and its malformed futex companion.
#define SPIN_TEST_BAD_NS "2000000000"
#define SPIN_TEST_BAD_FLAG "yes"

typedef struct spin_peer_t {
  hal_semaphore_t* semaphore;
  int64_t delay_ns;
  uint64_t value;  // signal this
  bool fail;       // or fail it
} spin_peer_t;

static void* spin_peer_main(void* arg) {
  spin_peer_t* peer = (spin_peer_t*)arg;
  hal_test_sleep_ns(peer->delay_ns);
  if (peer->fail) {
    hal_semaphore_fail(peer->semaphore,
                       hal_make_status(HAL_STATUS_ABORTED, "peer gave up"));
  } else {
    HAL_THREAD_CHECK(
        hal_semaphore_signal(peer->semaphore, peer->value) == HAL_OK, "signal");
  }
  return NULL;
}

// The environment's value is the starting one; set clamps to the maximum.
static void Spin_SettingStartsFromTheEnvironmentAndIsClamped(void** state) {
  assert_int_equal(hal_semaphore_spin_ns(), SPIN_TEST_ENV_NS);
  hal_semaphore_set_spin_ns(0);
  assert_int_equal(hal_semaphore_spin_ns(), 0);
  hal_semaphore_set_spin_ns(HAL_SEMAPHORE_MAX_SPIN_NS + 1);
  assert_int_equal(hal_semaphore_spin_ns(), HAL_SEMAPHORE_MAX_SPIN_NS);
  hal_semaphore_set_spin_ns(SPIN_TEST_ENV_NS);
  assert_int_equal(hal_semaphore_spin_ns(), SPIN_TEST_ENV_NS);
}

// Signals and failures from another thread, landing while the waiter spins
// (a long spin) or after it gave up and slept (no spin, a short one): the
// wait returns what the semaphore says, whichever way it waited.
static void Spin_WaitsDecideAsSleepingOnesDo(void** state) {
  uint64_t seed = hal_test_seed("Spin_WaitsDecideAsSleepingOnesDo");
  const uint64_t spins[] = {0, 2000, 200000000};
  uint64_t rounds = hal_test_iterations(40);
  for (uint64_t r = 0; r < rounds; ++r) {
    hal_semaphore_set_spin_ns(spins[hal_test_random_below(&seed, 3)]);
    hal_semaphore_t* semaphore = hal_test_semaphore(0);
    spin_peer_t peer = {
        .semaphore = semaphore,
        .delay_ns = (int64_t)hal_test_random_below(&seed, 300000),
        .value = 1 + hal_test_random_below(&seed, 3),
        .fail = hal_test_random_below(&seed, 4) == 0,
    };
    uint64_t wanted = 1 + hal_test_random_below(&seed, 3);
    pthread_t thread;
    hal_test_thread_create(&thread, spin_peer_main, &peer);
    hal_status_t status = hal_semaphore_wait(semaphore, wanted,
                                             hal_make_timeout_ns(200 * HAL_MS));
    pthread_join(thread, NULL);
    if (peer.fail) {
      HAL_ASSERT_STATUS(HAL_STATUS_ABORTED, "peer gave up", status);
    } else if (peer.value >= wanted) {
      HAL_ASSERT_OK(status);
    } else {
      HAL_ASSERT_STATUS(HAL_STATUS_DEADLINE_EXCEEDED, "below the", status);
    }
    hal_semaphore_release(semaphore);
  }
  hal_test_assert_no_thread_failures();
  hal_semaphore_set_spin_ns(SPIN_TEST_ENV_NS);
}

// A list wait spins on every entry: ALL returns once the last is reached,
// ANY once one is, and a failure ends either.
static void Spin_ListWaitsSpinOnEveryEntry(void** state) {
  hal_semaphore_set_spin_ns(200000000);
  hal_semaphore_t* semaphores[2] = {hal_test_semaphore(1),
                                    hal_test_semaphore(0)};
  uint64_t values[2] = {1, 1};
  hal_semaphore_list_t list = {2, semaphores, values};
  spin_peer_t peer = {
      .semaphore = semaphores[1], .delay_ns = HAL_MS, .value = 1};
  pthread_t thread;
  hal_test_thread_create(&thread, spin_peer_main, &peer);
  HAL_ASSERT_OK(hal_semaphore_list_wait(HAL_WAIT_MODE_ALL, list,
                                        hal_make_timeout_ns(10000 * HAL_MS)));
  pthread_join(thread, NULL);
  // ANY: the second entry fails while the first is still below.
  values[0] = 2;
  values[1] = 2;
  peer = (spin_peer_t){
      .semaphore = semaphores[1], .delay_ns = HAL_MS, .fail = true};
  hal_test_thread_create(&thread, spin_peer_main, &peer);
  HAL_ASSERT_STATUS(
      HAL_STATUS_ABORTED, "peer gave up",
      hal_semaphore_list_wait(HAL_WAIT_MODE_ANY, list,
                              hal_make_timeout_ns(10000 * HAL_MS)));
  pthread_join(thread, NULL);
  hal_test_assert_no_thread_failures();
  hal_semaphore_release(semaphores[0]);
  hal_semaphore_release(semaphores[1]);
  hal_semaphore_set_spin_ns(SPIN_TEST_ENV_NS);
}

// The deadline bounds the spin: a 20 ms wait with a 1 s spin returns
// DEADLINE_EXCEEDED after 20 ms, not after the spin; an immediate deadline
// does not spin at all.
static void Spin_DeadlineCutsTheSpin(void** state) {
  hal_semaphore_set_spin_ns(HAL_SEMAPHORE_MAX_SPIN_NS);
  hal_semaphore_t* semaphore = hal_test_semaphore(0);
  hal_time_t start = hal_time_now();
  HAL_ASSERT_STATUS(
      HAL_STATUS_DEADLINE_EXCEEDED, "below the",
      hal_semaphore_wait(semaphore, 1, hal_make_timeout_ns(20 * HAL_MS)));
  hal_time_t elapsed = hal_time_now() - start;
  assert_true(elapsed >= 20 * HAL_MS);
  assert_true(elapsed < 900 * HAL_MS);  // generous: a loaded machine
  start = hal_time_now();
  HAL_ASSERT_STATUS(HAL_STATUS_DEADLINE_EXCEEDED, "an immediate deadline",
                    hal_semaphore_wait(semaphore, 1, hal_immediate_timeout()));
  assert_true(hal_time_now() - start < 900 * HAL_MS);
  hal_semaphore_release(semaphore);
  hal_semaphore_set_spin_ns(SPIN_TEST_ENV_NS);
}

// Without HAL_SYNC_SPIN_NS the spin is the documented default.
static void Spin_DefaultWithoutTheEnvironment(void** state) {
  assert_int_equal(hal_semaphore_spin_ns(), HAL_SEMAPHORE_DEFAULT_SPIN_NS);
}

// A bad setting read where no status can carry it (a host wait in a
// program with no registry) keeps its default and says so on stderr, once.
static void Spin_BadSettingsKeepTheirDefaultsAndSaySo(void** state) {
  hal_test_stderr_capture_t capture;
  hal_test_stderr_capture_begin(&capture);
  uint64_t first = hal_semaphore_spin_ns();
  uint64_t again = hal_semaphore_spin_ns();
  hal_semaphore_t* semaphore = hal_test_semaphore(0);
  HAL_ASSERT_OK(hal_semaphore_signal(semaphore, 1));
  HAL_ASSERT_OK(
      hal_semaphore_wait(semaphore, 1, hal_make_timeout_ns(1000 * HAL_MS)));
  HAL_ASSERT_STATUS(
      HAL_STATUS_DEADLINE_EXCEEDED, NULL,
      hal_semaphore_wait(semaphore, 2, hal_make_timeout_ns(HAL_MS)));
  hal_semaphore_release(semaphore);
  char said[2048];
  size_t length = hal_test_stderr_capture_end(&capture, said, sizeof(said));
  assert_true(length > 0);
  assert_int_equal(first, HAL_SEMAPHORE_DEFAULT_SPIN_NS);
  assert_int_equal(again, HAL_SEMAPHORE_DEFAULT_SPIN_NS);
  const char* spin = strstr(said, "HAL_SYNC_SPIN_NS='" SPIN_TEST_BAD_NS "'");
  assert_non_null(spin);
  assert_null(strstr(spin + 1, "HAL_SYNC_SPIN_NS"));  // once
  assert_non_null(strstr(said, "the default, 1000 ns, is kept"));
  const char* flag = strstr(said, "HAL_SYNC_NO_FUTEX='" SPIN_TEST_BAD_FLAG "'");
  assert_non_null(flag);
  assert_null(strstr(flag + 1, "HAL_SYNC_NO_FUTEX"));
  assert_non_null(strstr(flag, "the default is kept"));
}

// The test list: CASE binds this program's fixture.
#define CASE(name) cmocka_unit_test(name)

int main(void) {
  const char* env = getenv("HAL_SYNC_SPIN_NS");
  if (!env) {
    const struct CMUnitTest tests[] = {
        CASE(Spin_DefaultWithoutTheEnvironment),
    };
    return cmocka_run_group_tests_name("sync/spin_default", tests, NULL, NULL);
  }
  if (strcmp(env, SPIN_TEST_BAD_NS) == 0) {
    const struct CMUnitTest tests[] = {
        CASE(Spin_BadSettingsKeepTheirDefaultsAndSaySo),
    };
    return cmocka_run_group_tests_name("sync/spin_bad", tests, NULL, NULL);
  }
  if (strtoull(env, NULL, 10) != SPIN_TEST_ENV_NS) {
    fprintf(stderr,
            "run with HAL_SYNC_SPIN_NS=%d, " SPIN_TEST_BAD_NS
            " or unset (meson does)\n",
            SPIN_TEST_ENV_NS);
    return 1;
  }
  const struct CMUnitTest tests[] = {
      CASE(Spin_SettingStartsFromTheEnvironmentAndIsClamped),
      CASE(Spin_WaitsDecideAsSleepingOnesDo),
      CASE(Spin_ListWaitsSpinOnEveryEntry),
      CASE(Spin_DeadlineCutsTheSpin),
  };
  return cmocka_run_group_tests_name("sync/spin", tests, NULL, NULL);
}
