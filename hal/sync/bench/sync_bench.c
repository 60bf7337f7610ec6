// Copyright 2026 The HAL Authors.
//
// sync_bench: figures for docs/sync-design.md, all measured in one run.
//  1. host signal -> waiter woken round trip (ping-pong between two
//     threads over two semaphores) vs raw pthread condvar and raw futex
//     ping-pongs (per round trip; ratio against the faster baseline);
//  2. cost of one signal with 1, 1k, 100k pending (not due) timepoints;
//  3. wait ANY over 1, 16, 1024 semaphores (the last one signaled);
//  4. the raw futex ping-pong with busy work before each signal, and the
//     sleeps per round trip: a woken thread that answers before the
//     waker's FUTEX_WAKE returns keeps both threads awake, and the round
//     trip jumps once the answer takes longer (docs/performance.md);
//  5. how the round trips of section 1's HAL ping-pong, its waits never
//     spinning (as hal-bench's signal_wake_vs_futex), and of the raw futex
//     ping-pong spread: the share under 5 us (under a hypervisor, where
//     a sleep and a wake-up cost more, the rounds in which neither thread
//     slept) and the percentiles.
// The MLIR async runtime comparison is not built (see the docs).
// Usage: sync_bench [rounds]   (default 20000)

#include <inttypes.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "hal/semaphore.h"
#include "hal/timepoint.h"

static void check(hal_status_t status) {
  if (status) {
    hal_status_fprint(stderr, status);
    exit(1);
  }
}

//===----------------------------------------------------------------------===//
// Ping-pongs
//===----------------------------------------------------------------------===//

static uint64_t rounds = 20000;

// When set (section 5), each ping-pong's main thread stores the duration of
// its round trip i at [i - 1]: |rounds| entries.
static hal_duration_t* round_trip_ns;

static void record_round_trip(uint64_t round, hal_time_t start) {
  if (round_trip_ns)
    round_trip_ns[round - 1] = hal_time_now() - start;
}

// The calling thread's voluntary context switches so far (its sleeps).
static long voluntary_switches(void) {
  struct rusage usage;
  getrusage(RUSAGE_THREAD, &usage);
  return usage.ru_nvcsw;
}

typedef struct hal_pp_t {
  hal_semaphore_t* ping;
  hal_semaphore_t* pong;
} hal_pp_t;

static void* hal_pp_main(void* arg) {
  hal_pp_t* pp = (hal_pp_t*)arg;
  for (uint64_t i = 1; i <= rounds; ++i) {
    check(hal_semaphore_wait(pp->ping, i, hal_infinite_timeout()));
    check(hal_semaphore_signal(pp->pong, i));
  }
  return NULL;
}

static double hal_ping_pong_sleeps;  // of the last run, per round trip

static double bench_hal_ping_pong(void) {
  hal_pp_t pp;
  check(hal_semaphore_create_host(hal_allocator_system(), 0, &pp.ping));
  check(hal_semaphore_create_host(hal_allocator_system(), 0, &pp.pong));
  pthread_t thread;
  pthread_create(&thread, NULL, hal_pp_main, &pp);
  long switches = voluntary_switches();
  hal_time_t start = hal_time_now();
  for (uint64_t i = 1; i <= rounds; ++i) {
    hal_time_t round_start = round_trip_ns ? hal_time_now() : 0;
    check(hal_semaphore_signal(pp.ping, i));
    check(hal_semaphore_wait(pp.pong, i, hal_infinite_timeout()));
    record_round_trip(i, round_start);
  }
  hal_time_t end = hal_time_now();
  hal_ping_pong_sleeps =
      (double)(voluntary_switches() - switches) / (double)rounds;
  pthread_join(thread, NULL);
  hal_semaphore_release(pp.ping);
  hal_semaphore_release(pp.pong);
  return (double)(end - start) / (double)rounds;
}

typedef struct cv_pp_t {
  pthread_mutex_t mutex;
  pthread_cond_t cond;
  uint64_t ping, pong;
} cv_pp_t;

static void* cv_pp_main(void* arg) {
  cv_pp_t* pp = (cv_pp_t*)arg;
  for (uint64_t i = 1; i <= rounds; ++i) {
    pthread_mutex_lock(&pp->mutex);
    while (pp->ping < i)
      pthread_cond_wait(&pp->cond, &pp->mutex);
    pp->pong = i;
    pthread_cond_broadcast(&pp->cond);
    pthread_mutex_unlock(&pp->mutex);
  }
  return NULL;
}

static double bench_condvar_ping_pong(void) {
  cv_pp_t pp = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0};
  pthread_t thread;
  pthread_create(&thread, NULL, cv_pp_main, &pp);
  hal_time_t start = hal_time_now();
  for (uint64_t i = 1; i <= rounds; ++i) {
    pthread_mutex_lock(&pp.mutex);
    pp.ping = i;
    pthread_cond_broadcast(&pp.cond);
    while (pp.pong < i)
      pthread_cond_wait(&pp.cond, &pp.mutex);
    pthread_mutex_unlock(&pp.mutex);
  }
  hal_time_t end = hal_time_now();
  pthread_join(thread, NULL);
  return (double)(end - start) / (double)rounds;
}

typedef struct futex_pp_t {
  _Atomic uint32_t ping, pong;
} futex_pp_t;

static void futex_wait_until(_Atomic uint32_t* word, uint32_t value) {
  uint32_t seen;
  while ((seen = atomic_load_explicit(word, memory_order_acquire)) < value) {
    syscall(SYS_futex, (uint32_t*)word, FUTEX_WAIT_PRIVATE, seen, NULL, NULL,
            0);
  }
}

// Busy work before each futex ping-pong signal (section 4), in ns.
static hal_duration_t futex_work_ns;

static void futex_busy_work(void) {
  if (futex_work_ns <= 0)
    return;
  hal_time_t end = hal_time_now() + futex_work_ns;
  while (hal_time_now() < end) {
  }
}

static void futex_set(_Atomic uint32_t* word, uint32_t value) {
  futex_busy_work();
  atomic_store_explicit(word, value, memory_order_release);
  syscall(SYS_futex, (uint32_t*)word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static void* futex_pp_main(void* arg) {
  futex_pp_t* pp = (futex_pp_t*)arg;
  for (uint32_t i = 1; i <= (uint32_t)rounds; ++i) {
    futex_wait_until(&pp->ping, i);
    futex_set(&pp->pong, i);
  }
  return NULL;
}

// Per round trip; |*out_sleeps|: the main thread's sleeps per round trip.
static double bench_futex_ping_pong(double* out_sleeps) {
  futex_pp_t pp;
  atomic_init(&pp.ping, 0);
  atomic_init(&pp.pong, 0);
  pthread_t thread;
  pthread_create(&thread, NULL, futex_pp_main, &pp);
  long switches = voluntary_switches();
  hal_time_t start = hal_time_now();
  for (uint32_t i = 1; i <= (uint32_t)rounds; ++i) {
    hal_time_t round_start = round_trip_ns ? hal_time_now() : 0;
    futex_set(&pp.ping, i);
    futex_wait_until(&pp.pong, i);
    record_round_trip(i, round_start);
  }
  hal_time_t end = hal_time_now();
  *out_sleeps = (double)(voluntary_switches() - switches) / (double)rounds;
  pthread_join(thread, NULL);
  return (double)(end - start) / (double)rounds;
}

//===----------------------------------------------------------------------===//
// Signal cost vs pending timepoints; wait ANY width
//===----------------------------------------------------------------------===//

static void noop_callback(void* user_data, uint64_t value,
                          hal_status_t status) {}

static double bench_signal_with_pending(size_t pending) {
  hal_semaphore_t* semaphore = NULL;
  check(hal_semaphore_create_host(hal_allocator_system(), 0, &semaphore));
  // Pending far in the future: never due during the measurement.
  for (size_t i = 0; i < pending; ++i) {
    check(hal_semaphore_add_callback(semaphore, HAL_SEMAPHORE_MAX_VALUE - i,
                                     noop_callback, NULL, NULL));
  }
  enum { kSignals = 100000 };
  hal_time_t start = hal_time_now();
  for (uint64_t v = 1; v <= kSignals; ++v) {
    check(hal_semaphore_signal(semaphore, v));
  }
  hal_time_t end = hal_time_now();
  hal_semaphore_release(semaphore);  // cancels the pending callbacks
  return (double)(end - start) / kSignals;
}

typedef struct any_t {
  hal_semaphore_t** semaphores;
  size_t count;
} any_t;

static void* any_signaler_main(void* arg) {
  any_t* any = (any_t*)arg;
  for (uint64_t i = 1; i <= rounds / 10; ++i) {
    // Wait for the waiter's ack (semaphore 0 is the ack channel here).
    check(hal_semaphore_wait(any->semaphores[any->count], i - 1,
                             hal_infinite_timeout()));
    check(hal_semaphore_signal(any->semaphores[any->count - 1], i));
  }
  return NULL;
}

static double bench_wait_any(size_t count) {
  hal_semaphore_t** semaphores = calloc(count + 1, sizeof(*semaphores));
  uint64_t* values = calloc(count, sizeof(*values));
  for (size_t i = 0; i <= count; ++i) {
    check(hal_semaphore_create_host(hal_allocator_system(), 0, &semaphores[i]));
  }
  any_t any = {semaphores, count};
  pthread_t thread;
  pthread_create(&thread, NULL, any_signaler_main, &any);
  hal_time_t start = hal_time_now();
  for (uint64_t i = 1; i <= rounds / 10; ++i) {
    for (size_t j = 0; j < count; ++j)
      values[j] = i;
    hal_semaphore_list_t list = {count, semaphores, values};
    check(hal_semaphore_list_wait(HAL_WAIT_MODE_ANY, list,
                                  hal_infinite_timeout()));
    check(hal_semaphore_signal(semaphores[count], i));  // ack
  }
  hal_time_t end = hal_time_now();
  pthread_join(thread, NULL);
  for (size_t i = 0; i <= count; ++i)
    hal_semaphore_release(semaphores[i]);
  free(semaphores);
  free(values);
  return (double)(end - start) / (double)(rounds / 10);
}

static int compare_durations(const void* a, const void* b) {
  hal_duration_t x = *(const hal_duration_t*)a;
  hal_duration_t y = *(const hal_duration_t*)b;
  return (x > y) - (x < y);
}

// Section 5's line for the round trips in |round_trip_ns| (sorts them).
static void print_round_trips(const char* name) {
  enum { kFastNs = 5000 };
  qsort(round_trip_ns, rounds, sizeof(*round_trip_ns), compare_durations);
  uint64_t fast = 0;
  while (fast < rounds && round_trip_ns[fast] < kFastNs)
    ++fast;
  printf("   %-26s %5.1f %%  %8lld %8lld %8lld %8lld %8lld\n", name,
         100.0 * (double)fast / (double)rounds,
         (long long)round_trip_ns[rounds / 10],
         (long long)round_trip_ns[rounds / 4],
         (long long)round_trip_ns[rounds / 2],
         (long long)round_trip_ns[rounds * 3 / 4],
         (long long)round_trip_ns[rounds * 9 / 10]);
}

int main(int argc, char** argv) {
  if (argc > 1)
    rounds = strtoull(argv[1], NULL, 10);
  if (rounds < 10)
    rounds = 10;
  printf("sync_bench: %" PRIu64 " round trips per ping-pong\n", rounds);
  printf("blocking path: %s\n",
         getenv("HAL_SYNC_NO_FUTEX") ? "pthread" : "default");
  // Warm up pools and threads.
  bench_hal_ping_pong();
  double hal_ns = bench_hal_ping_pong();
  double cv_ns = bench_condvar_ping_pong();
  double futex_sleeps = 0;
  double futex_ns = bench_futex_ping_pong(&futex_sleeps);
  double best = cv_ns < futex_ns ? cv_ns : futex_ns;
  printf("\n1. signal -> woken round trip (ns, lower is better)\n");
  printf("   hal semaphore      %10.0f   (%.2f sleeps per round trip)\n",
         hal_ns, hal_ping_pong_sleeps);
  printf("   pthread condvar    %10.0f\n", cv_ns);
  printf("   raw futex          %10.0f   (%.2f sleeps per round trip)\n",
         futex_ns, futex_sleeps);
  printf("   hal / faster baseline = %.2fx (target <= 1.5x)\n", hal_ns / best);
  printf("   MLIR async runtime: skipped (comparison shim not built)\n");
  printf("\n2. one host signal with N pending, not-due timepoints (ns)\n");
  size_t pendings[3] = {1, 1000, 100000};
  for (int i = 0; i < 3; ++i) {
    printf("   N = %-7zu %10.1f\n", pendings[i],
           bench_signal_with_pending(pendings[i]));
  }
  printf("\n3. wait ANY over N semaphores, last one signaled (ns per wake)\n");
  size_t widths[3] = {1, 16, 1024};
  for (int i = 0; i < 3; ++i) {
    printf("   N = %-7zu %10.0f\n", widths[i], bench_wait_any(widths[i]));
  }
  printf(
      "\n4. raw futex ping-pong with W ns of work before each signal "
      "(ns per round trip; the main thread's sleeps per round trip)\n");
  const hal_duration_t works[5] = {0, 250, 500, 1000, 2000};
  for (int i = 0; i < 5; ++i) {
    futex_work_ns = works[i];
    double sleeps = 0;
    double ns = bench_futex_ping_pong(&sleeps);
    printf("   W = %-7lld %10.0f   %.2f\n", (long long)works[i], ns, sleeps);
  }
  futex_work_ns = 0;

  printf(
      "\n5. round trips one by one: the share under 5 us (under a "
      "hypervisor, too short for a sleep and a wake-up), then p10 p25 p50 "
      "p75 p90 (ns)\n");
  round_trip_ns = calloc(rounds, sizeof(*round_trip_ns));
  if (!round_trip_ns) {
    fprintf(stderr, "sync_bench: out of memory\n");
    return 1;
  }
  uint64_t saved_spin = hal_semaphore_spin_ns();
  hal_semaphore_set_spin_ns(0);
  bench_hal_ping_pong();
  print_round_trips("hal semaphore, no spin");
  hal_semaphore_set_spin_ns(saved_spin);
  double sleeps = 0;
  bench_futex_ping_pong(&sleeps);
  print_round_trips("raw futex");
  free(round_trip_ns);
  round_trip_ns = NULL;
  return 0;
}
