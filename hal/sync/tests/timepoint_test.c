// Copyright 2026 The HAL Authors.
//
// Timepoint rules T1, T2, T3, T5 and the K12 regression, plus the pools
// (warm paths do not allocate, generations expose stale pointers). White-box:
// links the module's internals.

#include <signal.h>
#include <sys/wait.h>

#include "hal_test.h"
#include "semaphore_impl.h"

typedef struct callback_record_t {
  _Atomic int calls;
  _Atomic int last_code;
  _Atomic uint64_t last_value;
  hal_semaphore_t* semaphore;  // for callbacks that act on it
} callback_record_t;

static void record_callback(void* user_data, uint64_t value,
                            hal_status_t status) {
  callback_record_t* record = (callback_record_t*)user_data;
  atomic_store(&record->last_code, (int)hal_status_code(status));
  atomic_store(&record->last_value, value);
  atomic_fetch_add(&record->calls, 1);
}

static void T1_CallbackOnceOnReach(void** state) {
  hal_semaphore_t* semaphore = hal_test_semaphore(0);
  callback_record_t record = {0};
  HAL_ASSERT_OK(
      hal_semaphore_add_callback(semaphore, 2, record_callback, &record, NULL));
  HAL_ASSERT_OK(hal_semaphore_signal(semaphore, 1));
  assert_int_equal(atomic_load(&record.calls), 0);
  HAL_ASSERT_OK(hal_semaphore_signal(semaphore, 5));
  assert_int_equal(atomic_load(&record.calls), 1);
  assert_int_equal(atomic_load(&record.last_code), HAL_STATUS_OK);
  HAL_ASSERT_OK(hal_semaphore_signal(semaphore, 6));
  hal_semaphore_fail(semaphore, hal_make_status(HAL_STATUS_ABORTED, "x"));
  assert_int_equal(atomic_load(&record.calls), 1);
  // Already reached at registration: runs at once, still once.
  callback_record_t late = {0};
  HAL_ASSERT_OK(
      hal_semaphore_add_callback(semaphore, 1, record_callback, &late, NULL));
  assert_int_equal(atomic_load(&late.calls), 1);
  assert_int_equal(atomic_load(&late.last_code), HAL_STATUS_ABORTED);
  hal_semaphore_release(semaphore);
}

static void T1_CallbackOnceOnFailure(void** state) {
  hal_semaphore_t* semaphore = hal_test_semaphore(0);
  callback_record_t record = {0};
  HAL_ASSERT_OK(
      hal_semaphore_add_callback(semaphore, 2, record_callback, &record, NULL));
  hal_semaphore_fail(semaphore, hal_make_status(HAL_STATUS_DATA_LOSS, "y"));
  hal_semaphore_fail(semaphore, hal_make_status(HAL_STATUS_DATA_LOSS, "z"));
  assert_int_equal(atomic_load(&record.calls), 1);
  assert_int_equal(atomic_load(&record.last_code), HAL_STATUS_DATA_LOSS);
  hal_semaphore_release(semaphore);
}

static void T1_CallbackOnceOnCancelAndDestroy(void** state) {
  hal_semaphore_t* semaphore = hal_test_semaphore(0);
  callback_record_t cancelled = {0};
  callback_record_t destroyed = {0};
  hal_timepoint_t* timepoint = NULL;
  HAL_ASSERT_OK(hal_semaphore_add_callback(semaphore, 2, record_callback,
                                           &cancelled, &timepoint));
  HAL_ASSERT_OK(hal_semaphore_add_callback(semaphore, 3, record_callback,
                                           &destroyed, NULL));
  assert_true(hal_timepoint_cancel(timepoint));
  assert_false(hal_timepoint_cancel(timepoint));
  assert_int_equal(atomic_load(&cancelled.calls), 1);
  assert_int_equal(atomic_load(&cancelled.last_code), HAL_STATUS_CANCELLED);
  HAL_ASSERT_OK(hal_semaphore_signal(semaphore, 10));
  assert_int_equal(atomic_load(&cancelled.calls), 1);
  assert_int_equal(atomic_load(&destroyed.calls), 1);  // reached at 10
  hal_timepoint_release(timepoint);

  callback_record_t pending = {0};
  HAL_ASSERT_OK(hal_semaphore_add_callback(semaphore, 100, record_callback,
                                           &pending, NULL));
  hal_semaphore_release(semaphore);  // destroyed with it pending
  assert_int_equal(atomic_load(&pending.calls), 1);
  assert_int_equal(atomic_load(&pending.last_code), HAL_STATUS_CANCELLED);
}

// T3/T5: a timepoint handle keeps what cancel needs. The caller drops its
// only semaphore reference while holding a handle: the semaphore stays
// alive (no callback yet), cancel through the handle removes it, and the
// last handle lets the semaphore go. The same after the timepoint resolved:
// cancel answers false without touching freed memory (ASan).
static void T5_CancelThroughHandleAfterSemaphoreReleased(void** state) {
  hal_semaphore_t* semaphore = hal_test_semaphore(0);
  callback_record_t record = {0};
  hal_timepoint_t* timepoint = NULL;
  HAL_ASSERT_OK(hal_semaphore_add_callback(semaphore, 5, record_callback,
                                           &record, &timepoint));
  hal_semaphore_release(semaphore);
  assert_int_equal(atomic_load(&record.calls), 0);  // pinned by the handle
  assert_true(hal_timepoint_cancel(timepoint));
  assert_int_equal(atomic_load(&record.calls), 1);
  assert_int_equal(atomic_load(&record.last_code), HAL_STATUS_CANCELLED);
  assert_false(hal_timepoint_cancel(timepoint));
  hal_timepoint_t* copy = timepoint;
  hal_timepoint_retain(copy);
  hal_timepoint_release(timepoint);
  assert_false(hal_timepoint_cancel(copy));
  hal_timepoint_release(copy);

  // Resolved first, then the semaphore reference dropped.
  semaphore = hal_test_semaphore(0);
  callback_record_t reached = {0};
  HAL_ASSERT_OK(hal_semaphore_add_callback(semaphore, 1, record_callback,
                                           &reached, &timepoint));
  HAL_ASSERT_OK(hal_semaphore_signal(semaphore, 1));
  hal_semaphore_release(semaphore);
  assert_false(hal_timepoint_cancel(timepoint));
  assert_int_equal(atomic_load(&reached.calls), 1);
  assert_int_equal(atomic_load(&reached.last_code), HAL_STATUS_OK);
  hal_timepoint_release(timepoint);

  // Handle released while pending: the semaphore goes with its last
  // reference and cancels the callback (T1), nothing leaks (LSan).
  semaphore = hal_test_semaphore(0);
  callback_record_t dropped = {0};
  HAL_ASSERT_OK(hal_semaphore_add_callback(semaphore, 1, record_callback,
                                           &dropped, &timepoint));
  hal_timepoint_release(timepoint);
  assert_int_equal(atomic_load(&dropped.calls), 0);
  hal_semaphore_release(semaphore);
  assert_int_equal(atomic_load(&dropped.calls), 1);
  assert_int_equal(atomic_load(&dropped.last_code), HAL_STATUS_CANCELLED);
}

// Re-enters the semaphore from its own callback: deadlocks (and times out)
// if callbacks ran under the semaphore lock.
static void reentrant_callback(void* user_data, uint64_t value,
                               hal_status_t status) {
  callback_record_t* record = (callback_record_t*)user_data;
  uint64_t current = 0;
  hal_status_ignore(hal_semaphore_query(record->semaphore, &current));
  hal_status_ignore(hal_semaphore_signal(record->semaphore, current + 1));
  hal_status_ignore(hal_semaphore_add_callback(record->semaphore, current + 100,
                                               record_callback, record, NULL));
  atomic_fetch_add(&record->calls, 1);
}

static void T2_NoCallbackUnderLock(void** state) {
  hal_semaphore_t* semaphore = hal_test_semaphore(0);
  callback_record_t record = {0};
  record.semaphore = semaphore;
  HAL_ASSERT_OK(hal_semaphore_add_callback(semaphore, 1, reentrant_callback,
                                           &record, NULL));
  HAL_ASSERT_OK(hal_semaphore_signal(semaphore, 1));
  assert_int_equal(atomic_load(&record.calls), 1);
  assert_int_equal(hal_test_query(semaphore), 2);
  hal_semaphore_fail(semaphore, hal_make_status(HAL_STATUS_ABORTED, "end"));
  assert_int_equal(atomic_load(&record.calls), 2);  // the nested one failed
  hal_semaphore_release(semaphore);
}

static void T3_GenerationExposesRecycledTimepoint(void** state) {
  hal_semaphore_t* semaphore = hal_test_semaphore(0);
  callback_record_t record = {0};
  hal_timepoint_t* timepoint = NULL;
  HAL_ASSERT_OK(hal_semaphore_add_callback(semaphore, 1, record_callback,
                                           &record, &timepoint));
  uint32_t generation = hal_sync_timepoint_generation(timepoint);
  assert_true(hal_sync_pool_block_is_current(&timepoint->block, generation));
  HAL_ASSERT_OK(hal_semaphore_signal(semaphore, 1));
  // The callback's (heap) reference is gone; ours keeps it current.
  assert_true(hal_sync_pool_block_is_current(&timepoint->block, generation));
  hal_timepoint_t* stale = timepoint;
  hal_timepoint_release(timepoint);
  // Recycled: a holder of (pointer, generation) can tell.
  assert_false(hal_sync_pool_block_is_current(&stale->block, generation));
  hal_semaphore_release(semaphore);
}

#ifndef NDEBUG
static hal_status_t dummy_event_create(void* self, void** out_handle) {
  *out_handle = self;
  return HAL_OK;
}
static void dummy_event_destroy(void* self, void* handle) {}

static void noop_callback(void* user_data, uint64_t value,
                          hal_status_t status) {}

// Runs |use| in a child process and expects it to abort (an assertion).
static void expect_child_aborts(void (*use)(void), const char* what) {
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    // The parent checks the signal; the child's report is noise here.
    if (!freopen("/dev/null", "w", stderr))
      _exit(3);
    use();
    _exit(0);  // the check did not fire
  }
  int wstatus = 0;
  assert_int_equal(waitpid(pid, &wstatus, 0), pid);
  if (!WIFSIGNALED(wstatus) || WTERMSIG(wstatus) != SIGABRT)
    HAL_TEST_FAIL("a stale %s was not caught by its T3 check", what);
}

static void use_stale_timepoint(void) {
  hal_timepoint_t* timepoint = NULL;
  hal_status_ignore(
      hal_sync_timepoint_acquire_callback(noop_callback, NULL, 1, &timepoint));
  uint32_t generation = hal_sync_timepoint_generation(timepoint);
  hal_sync_timepoint_check(timepoint, generation);  // current: passes
  hal_sync_timepoint_release(timepoint);            // recycled
  hal_sync_timepoint_check(timepoint, generation);
}

static void use_stale_event(void) {
  hal_sync_event_interface_t interface = {(void*)1, dummy_event_create,
                                          dummy_event_destroy};
  hal_sync_event_pool_t* pool = NULL;
  hal_status_ignore(hal_sync_event_pool_create(interface, 4, &pool));
  hal_sync_native_event_t* event = NULL;
  hal_status_ignore(hal_sync_event_pool_acquire(pool, &event));
  uint32_t generation = hal_sync_native_event_generation(event);
  hal_sync_native_event_check(event, generation);  // current: passes
  hal_sync_native_event_release(event);            // back in the pool
  hal_sync_native_event_check(event, generation);
}

// T3: the generation check is real in assertion builds: a kept pointer
// used after its timepoint was recycled, or after its native event went
// back to the pool, aborts at the use (the sync module checks every use
// through a kept pointer: wait entries, parked waits, device timepoints,
// device waits, completion events, waiters).
static void T3_StaleKeptPointersAbortInAssertionBuilds(void** state) {
  expect_child_aborts(use_stale_timepoint, "timepoint");
  expect_child_aborts(use_stale_event, "native event");
}
#endif  // NDEBUG

static void T3_WarmPoolsDoNotAllocate(void** state) {
  hal_semaphore_t* semaphore = hal_test_semaphore(0);
  hal_semaphore_t* other = hal_test_semaphore(0);
  hal_sync_pool_stats_t timepoints = {0};
  hal_sync_pool_stats_t waiters = {0};
  // Warm up, with the same waits as below (an ALL over two entries holds
  // four timepoints: each entry's and its failure watch): timepoints,
  // waiters and the heap.
  for (uint64_t v = 1; v <= 2000; ++v) {
    if (v == 65) {
      timepoints = hal_sync_timepoint_pool_stats();
      waiters = hal_sync_waiter_pool_stats();
    }
    hal_semaphore_t* semaphores[2] = {semaphore, other};
    uint64_t values[2] = {v, v};
    hal_semaphore_list_t list = {2, semaphores, values};
    HAL_ASSERT_STATUS(HAL_STATUS_DEADLINE_EXCEEDED, NULL,
                      hal_semaphore_list_wait(HAL_WAIT_MODE_ALL, list,
                                              hal_make_timeout_ns(1000)));
    HAL_ASSERT_OK(hal_semaphore_signal(semaphore, v));
  }
  hal_sync_pool_stats_t timepoints_after = hal_sync_timepoint_pool_stats();
  hal_sync_pool_stats_t waiters_after = hal_sync_waiter_pool_stats();
  assert_int_equal(timepoints_after.allocated_count,
                   timepoints.allocated_count);
  assert_int_equal(waiters_after.allocated_count, waiters.allocated_count);
  assert_int_equal(timepoints_after.live_count, 0);
  assert_int_equal(waiters_after.live_count, 0);
  hal_semaphore_release(semaphore);
  hal_semaphore_release(other);
}

enum { kOrderMaxEntries = 1024 };

typedef struct order_record_t {
  int indices[kOrderMaxEntries];
  _Atomic int count;
  _Atomic int cancelled_count;
} order_record_t;

typedef struct order_entry_t {
  order_record_t* record;
  int index;
  uint64_t value;
  bool is_cancelled;
} order_entry_t;

static void order_callback(void* user_data, uint64_t value,
                           hal_status_t status) {
  order_entry_t* entry = (order_entry_t*)user_data;
  assert_int_equal(value, entry->value);
  if (!hal_status_is_ok(status)) {
    assert_int_equal(hal_status_code(status), HAL_STATUS_CANCELLED);
    atomic_fetch_add(&entry->record->cancelled_count, 1);
    return;
  }
  entry->record->indices[atomic_fetch_add(&entry->record->count, 1)] =
      entry->index;
}

// A signal resolves exactly the timepoints it reaches, and notifies them in
// the order they were registered whatever their values, so work released
// by one signal becomes ready in the order it was submitted. Rounds of 64
// and 1024 timepoints with random values, about one in eight cancelled
// (removed from the middle of the heap), released by random signal steps.
static void T_SignalResolvesDueInRegistrationOrder(void** state) {
  uint64_t seed = hal_test_seed("T_SignalResolvesDueInRegistrationOrder");
  static order_entry_t entries[kOrderMaxEntries];
  for (int round = 0; round < 8; ++round) {
    int count = round % 2 ? kOrderMaxEntries : 64;
    uint64_t max_value = 1 + hal_test_random_below(&seed, 2 * count);
    hal_semaphore_t* semaphore = hal_test_semaphore(0);
    order_record_t record = {{0}, 0, 0};
    int cancelled = 0;
    for (int i = 0; i < count; ++i) {
      entries[i] = (order_entry_t){
          &record, i, 1 + hal_test_random_below(&seed, max_value), false};
      hal_timepoint_t* timepoint = NULL;
      HAL_ASSERT_OK(hal_semaphore_add_callback(semaphore, entries[i].value,
                                               order_callback, &entries[i],
                                               &timepoint));
      if (hal_test_random_below(&seed, 8) == 0) {
        assert_true(hal_timepoint_cancel(timepoint));
        entries[i].is_cancelled = true;
        ++cancelled;
      }
      hal_timepoint_release(timepoint);
    }
    assert_int_equal(atomic_load(&record.cancelled_count), cancelled);
    int resolved = 0;
    uint64_t previous = 0;
    for (uint64_t v = 0; v < max_value;) {
      v += 1 + hal_test_random_below(&seed, max_value / 4 + 1);
      HAL_ASSERT_OK(hal_semaphore_signal(semaphore, v));
      int due = 0;
      for (int i = 0; i < count; ++i)
        due += !entries[i].is_cancelled && entries[i].value <= v;
      assert_int_equal(atomic_load(&record.count), due);
      for (int i = resolved; i < due; ++i) {
        const order_entry_t* entry = &entries[record.indices[i]];
        assert_true(entry->value <= v && entry->value > previous);
        if (i > resolved)
          assert_true(record.indices[i - 1] < record.indices[i]);
      }
      resolved = due;
      previous = v;
    }
    assert_int_equal(resolved, count - cancelled);
    assert_int_equal(atomic_load(&record.cancelled_count), cancelled);
    hal_semaphore_release(semaphore);
  }
}

typedef struct race_t {
  hal_semaphore_t* semaphore;
  hal_timepoint_t* timepoint;
  callback_record_t record;
  _Atomic int go;
  uint64_t value;
} race_t;

static void* race_signal_main(void* arg) {
  race_t* race = (race_t*)arg;
  atomic_store(&race->go, 1);
  hal_status_ignore(hal_semaphore_signal(race->semaphore, race->value));
  return NULL;
}

static void T5_CancelVsSignal(void** state) {
  uint64_t seed = hal_test_seed("T5_CancelVsSignal");
  uint64_t iterations = hal_test_iterations(1000);
  int cancelled_count = 0;
  for (uint64_t i = 0; i < iterations; ++i) {
    race_t race = {0};
    race.semaphore = hal_test_semaphore(0);
    race.value = 1;
    HAL_ASSERT_OK(hal_semaphore_add_callback(race.semaphore, 1, record_callback,
                                             &race.record, &race.timepoint));
    pthread_t thread;
    hal_test_thread_create(&thread, race_signal_main, &race);
    // Start both sides together, then shift ours by a random spin so the
    // cancel lands before, during and after the signal.
    while (!atomic_load(&race.go)) {
    }
    for (volatile uint64_t spin = hal_test_random_below(&seed, 1500); spin;
         --spin) {
    }
    bool removed = hal_timepoint_cancel(race.timepoint);
    // Either way our reference may go at once (T5).
    hal_timepoint_release(race.timepoint);
    pthread_join(thread, NULL);
    if (atomic_load(&race.record.calls) != 1) {
      HAL_TEST_FAIL("callback ran %d times", atomic_load(&race.record.calls));
    }
    int code = atomic_load(&race.record.last_code);
    if (removed != (code == HAL_STATUS_CANCELLED)) {
      HAL_TEST_FAIL("cancel returned %d but the callback saw %s", removed,
                    hal_status_code_string((hal_status_code_t)code));
    }
    cancelled_count += removed;
    hal_semaphore_release(race.semaphore);
  }
  fprintf(stderr, "  %d of %" PRIu64 " cancels won the race\n", cancelled_count,
          iterations);
  assert_int_equal(hal_sync_timepoint_pool_stats().live_count, 0);
}

// K12: the callback drops the last reference to its own semaphore, which
// the signaling thread was borrowing.
static void release_semaphore_callback(void* user_data, uint64_t value,
                                       hal_status_t status) {
  callback_record_t* record = (callback_record_t*)user_data;
  atomic_fetch_add(&record->calls, 1);
  hal_semaphore_release(record->semaphore);
}

static void K12_CallbackReleasesLastReference(void** state) {
  for (int mode = 0; mode < 3; ++mode) {
    callback_record_t record = {0};
    callback_record_t second = {0};
    record.semaphore = hal_test_semaphore(0);
    // Two callbacks due at once: the first destroys the semaphore, the
    // second must still run from the signaler's private batch.
    HAL_ASSERT_OK(hal_semaphore_add_callback(
        record.semaphore, 1, release_semaphore_callback, &record, NULL));
    HAL_ASSERT_OK(hal_semaphore_add_callback(record.semaphore, 1,
                                             record_callback, &second, NULL));
    if (mode == 0) {
      HAL_ASSERT_OK(hal_semaphore_signal(record.semaphore, 1));
    } else if (mode == 1) {
      hal_semaphore_fail(record.semaphore,
                         hal_make_status(HAL_STATUS_ABORTED, "k12"));
    } else {
      // Callback resolved as a waiter's ANY partner: signal through a list.
      hal_semaphore_t* semaphore = record.semaphore;
      hal_semaphore_retain(semaphore);
      HAL_ASSERT_OK(hal_semaphore_signal(semaphore, 1));
      hal_semaphore_release(semaphore);
    }
    assert_int_equal(atomic_load(&record.calls), 1);
    assert_int_equal(atomic_load(&second.calls), 1);
  }
}

typedef struct k12_thread_t {
  hal_semaphore_t* semaphore;
  callback_record_t record;
} k12_thread_t;

static void* k12_signal_main(void* arg) {
  k12_thread_t* k12 = (k12_thread_t*)arg;
  hal_status_ignore(hal_semaphore_signal(k12->semaphore, 1));
  hal_semaphore_release(k12->semaphore);  // races the callback's release
  return NULL;
}

static void K12_CallbackAndSignalerRaceLastRelease(void** state) {
  hal_test_seed("K12_CallbackAndSignalerRaceLastRelease");
  uint64_t iterations = hal_test_iterations(500);
  for (uint64_t i = 0; i < iterations; ++i) {
    k12_thread_t k12 = {0};
    k12.semaphore = hal_test_semaphore(0);
    k12.record.semaphore = k12.semaphore;
    hal_semaphore_retain(k12.semaphore);  // one for the signaler thread
    HAL_ASSERT_OK(hal_semaphore_add_callback(
        k12.semaphore, 1, release_semaphore_callback, &k12.record, NULL));
    pthread_t thread;
    hal_test_thread_create(&thread, k12_signal_main, &k12);
    pthread_join(thread, NULL);
    assert_int_equal(atomic_load(&k12.record.calls), 1);
  }
}

// T2's nesting bound (timepoint.c): a chain of callbacks, each signaling
// the value the next one waits for, runs whole within the first signal, in
// order, each once, with the stack bounded whatever the chain's length: on
// a thread of a 256 KiB stack, where unbounded nesting (about 0.6 KB a
// link, more under a sanitizer) overflows within a thousand links.
enum { kChainLinks = 100000 };

typedef struct chain_t {
  hal_semaphore_t* semaphore;
  uint64_t next;  // the value the next callback to run must have
  uint64_t bad;   // callbacks out of order or not OK
  uintptr_t first_frame;
  uintptr_t deepest;  // the largest distance from the first frame
} chain_t;

static void chain_callback(void* user_data, uint64_t value,
                           hal_status_t status) {
  chain_t* chain = (chain_t*)user_data;
  volatile char frame = 0;
  uintptr_t here = (uintptr_t)&frame;
  if (!chain->first_frame)
    chain->first_frame = here;
  uintptr_t distance = chain->first_frame > here ? chain->first_frame - here
                                                 : here - chain->first_frame;
  if (distance > chain->deepest)
    chain->deepest = distance;
  if (value != chain->next || status != HAL_OK)
    ++chain->bad;
  chain->next = value + 1;
  if (value < kChainLinks)
    hal_status_ignore(hal_semaphore_signal(chain->semaphore, value + 1));
}

static void* chain_main(void* arg) {
  chain_t* chain = (chain_t*)arg;
  HAL_ASSERT_OK(hal_semaphore_signal(chain->semaphore, 1));
  return NULL;
}

static void T2_LongCallbackChainRunsInBoundedStack(void** state) {
  chain_t chain = {hal_test_semaphore(0), 1, 0, 0, 0};
  for (uint64_t value = 1; value <= kChainLinks; ++value) {
    HAL_ASSERT_OK(hal_semaphore_add_callback(chain.semaphore, value,
                                             chain_callback, &chain, NULL));
  }
  pthread_attr_t attributes;
  pthread_attr_init(&attributes);
  assert_int_equal(pthread_attr_setstacksize(&attributes, 256 * 1024), 0);
  pthread_t thread;
  assert_int_equal(pthread_create(&thread, &attributes, chain_main, &chain), 0);
  pthread_attr_destroy(&attributes);
  pthread_join(thread, NULL);
  // Every link ran before the first signal returned, in order, once.
  assert_int_equal(chain.next, kChainLinks + 1);
  assert_int_equal(chain.bad, 0);
  assert_int_equal(hal_test_query(chain.semaphore), kChainLinks);
  fprintf(stderr, "  %d links, deepest frame %zu bytes below the first\n",
          (int)kChainLinks, (size_t)chain.deepest);
  if (chain.deepest > 128 * 1024)
    fail_msg("the chain nested %zu bytes deep", (size_t)chain.deepest);
  hal_semaphore_release(chain.semaphore);
}

// Past the bound: a callback that signals a semaphore and then waits for
// what that semaphore's (deferred) callback does is not left waiting (the
// wait runs the deferred callbacks first, and no more of them than its
// value takes); cancelling a callback it
// deferred returns false, the callback then running once with the signal's
// outcome (T5); cancelling a pending one returns true and it has run, and
// one added at a reached value has run when the add returns.
typedef struct deep_t {
  hal_semaphore_t* chain;  // links 1..kDeepLinks
  hal_semaphore_t* relay;  // its callback signals |done|
  hal_semaphore_t* done;
  hal_semaphore_t* late;  // a callback deferred, then cancelled
  callback_record_t late_record;
  hal_timepoint_t* late_handle;
  hal_status_t waited;
  bool did_wait;
  bool cancelled;
  int depth_reached;
  // Past the bound too: a pending callback cancelled (true, and it ran
  // with CANCELLED before the cancel returned), one added at a reached
  // value (it ran before the add returned).
  hal_semaphore_t* pending;
  callback_record_t pending_record;
  bool pending_cancelled;
  int pending_calls_at_return;
  callback_record_t reached_record;
  int reached_calls_at_return;
  // Deferred behind what the wait is for: the wait leaves it for later.
  hal_semaphore_t* extra;
  callback_record_t extra_record;
  int extra_calls_at_wait_return;
} deep_t;

enum { kDeepLinks = 40, kDeepWaiter = 30 };

static void relay_callback(void* user_data, uint64_t value,
                           hal_status_t status) {
  deep_t* deep = (deep_t*)user_data;
  hal_status_ignore(hal_semaphore_signal(deep->done, 1));
}

static void deep_callback(void* user_data, uint64_t value,
                          hal_status_t status) {
  deep_t* deep = (deep_t*)user_data;
  deep->depth_reached = (int)value;
  if (value == kDeepWaiter) {
    HAL_ASSERT_OK(hal_semaphore_signal(deep->late, 1));
    deep->cancelled = hal_timepoint_cancel(deep->late_handle);
    HAL_ASSERT_OK(hal_semaphore_signal(deep->relay, 1));
    HAL_ASSERT_OK(hal_semaphore_signal(deep->extra, 1));
    deep->did_wait = true;
    deep->waited = hal_semaphore_wait(
        deep->done, 1, hal_make_timeout_ns(30ll * 1000 * 1000 * 1000));
    deep->extra_calls_at_wait_return = atomic_load(&deep->extra_record.calls);
    hal_timepoint_t* handle = NULL;
    HAL_ASSERT_OK(hal_semaphore_add_callback(deep->pending, 1, record_callback,
                                             &deep->pending_record, &handle));
    deep->pending_cancelled = hal_timepoint_cancel(handle);
    deep->pending_calls_at_return = atomic_load(&deep->pending_record.calls);
    hal_timepoint_release(handle);
    HAL_ASSERT_OK(hal_semaphore_add_callback(deep->chain, 1, record_callback,
                                             &deep->reached_record, NULL));
    deep->reached_calls_at_return = atomic_load(&deep->reached_record.calls);
  }
  if (value < kDeepLinks)
    hal_status_ignore(hal_semaphore_signal(deep->chain, value + 1));
}

static void T2_DeepCallbackWaitsForWhatItDeferred(void** state) {
  deep_t deep = {0};
  deep.chain = hal_test_semaphore(0);
  deep.relay = hal_test_semaphore(0);
  deep.done = hal_test_semaphore(0);
  deep.late = hal_test_semaphore(0);
  deep.pending = hal_test_semaphore(0);
  deep.extra = hal_test_semaphore(0);
  HAL_ASSERT_OK(hal_semaphore_add_callback(deep.extra, 1, record_callback,
                                           &deep.extra_record, NULL));
  for (uint64_t value = 1; value <= kDeepLinks; ++value) {
    HAL_ASSERT_OK(hal_semaphore_add_callback(deep.chain, value, deep_callback,
                                             &deep, NULL));
  }
  HAL_ASSERT_OK(
      hal_semaphore_add_callback(deep.relay, 1, relay_callback, &deep, NULL));
  HAL_ASSERT_OK(hal_semaphore_add_callback(
      deep.late, 1, record_callback, &deep.late_record, &deep.late_handle));
  HAL_ASSERT_OK(hal_semaphore_signal(deep.chain, 1));
  assert_int_equal(deep.depth_reached, kDeepLinks);
  assert_true(deep.did_wait);
  HAL_ASSERT_OK(deep.waited);
  // The wait ran what it needed, not the callback deferred after it, which
  // ran once the bound's frame returned.
  assert_int_equal(deep.extra_calls_at_wait_return, 0);
  assert_int_equal(atomic_load(&deep.extra_record.calls), 1);
  // Deferred past the bound, so already resolved when cancelled: false,
  // and it ran once with OK.
  assert_false(deep.cancelled);
  assert_int_equal(atomic_load(&deep.late_record.calls), 1);
  assert_int_equal(atomic_load(&deep.late_record.last_code), HAL_STATUS_OK);
  assert_true(deep.pending_cancelled);
  assert_int_equal(deep.pending_calls_at_return, 1);
  assert_int_equal(atomic_load(&deep.pending_record.last_code),
                   HAL_STATUS_CANCELLED);
  assert_int_equal(deep.reached_calls_at_return, 1);
  hal_timepoint_release(deep.late_handle);
  hal_semaphore_release(deep.pending);
  hal_semaphore_release(deep.extra);
  hal_semaphore_release(deep.chain);
  hal_semaphore_release(deep.relay);
  hal_semaphore_release(deep.done);
  hal_semaphore_release(deep.late);
}

// K12 past the nesting bound: a wait in the 16th nested callback runs the
// callbacks it deferred before it sleeps (above), and one of them may
// release the last reference to the semaphore the wait is on. The wait
// holds one of its own until it returns: the semaphore goes as the wait
// returns, not under it (it went in the callback, and the wait went on to
// read it). Its memory comes from an allocator that keeps freed blocks
// until the end of the test, so a read after the free is seen as an early
// free in every build (ASan sees the read itself).
typedef struct held_free_t {
  _Atomic int frees;
  void* block;  // freed, kept until the end
} held_free_t;

static void* held_malloc(void* self, size_t size) {
  return malloc(size);
}

static void* held_realloc(void* self, void* ptr, size_t size) {
  return realloc(ptr, size);
}

static void held_free(void* self, void* ptr) {
  held_free_t* held = (held_free_t*)self;
  assert_null(held->block);
  held->block = ptr;
  atomic_fetch_add(&held->frees, 1);
}

typedef struct released_in_wait_t {
  hal_semaphore_t* chain;  // links 1..kNestBound
  hal_semaphore_t* held;   // its last reference is its callback's
  held_free_t frees;
  int frees_in_callback;  // right after the callback released it
  int frees_after_wait;
  hal_status_code_t waited;
  bool did_wait;
} released_in_wait_t;

enum { kNestBound = 16 };

static void release_held_callback(void* user_data, uint64_t value,
                                  hal_status_t status) {
  released_in_wait_t* test = (released_in_wait_t*)user_data;
  hal_semaphore_release(test->held);
  test->frees_in_callback = atomic_load(&test->frees.frees);
}

static void nest_then_wait_callback(void* user_data, uint64_t value,
                                    hal_status_t status) {
  released_in_wait_t* test = (released_in_wait_t*)user_data;
  if (value < kNestBound) {
    hal_status_ignore(hal_semaphore_signal(test->chain, value + 1));
    return;
  }
  // The 16th: |held|'s callback, due now, is deferred. The wait runs it
  // (it may be what the wait is for), then, not reached, times out.
  HAL_ASSERT_OK(hal_semaphore_signal(test->held, 1));
  test->did_wait = true;
  hal_status_t waited =
      hal_semaphore_wait(test->held, 2, hal_make_timeout_ns(1000000));
  test->waited = hal_status_code(waited);
  hal_status_free(waited);
  test->frees_after_wait = atomic_load(&test->frees.frees);
}

static void K12_CallbackRunByAWaitReleasesItsSemaphore(void** state) {
  released_in_wait_t test = {0};
  hal_allocator_t allocator = {&test.frees, held_malloc, held_realloc,
                               held_free};
  test.chain = hal_test_semaphore(0);
  HAL_ASSERT_OK(hal_semaphore_create_host(allocator, 0, &test.held));
  HAL_ASSERT_OK(hal_semaphore_add_callback(test.held, 1, release_held_callback,
                                           &test, NULL));
  for (uint64_t value = 1; value <= kNestBound; ++value) {
    HAL_ASSERT_OK(hal_semaphore_add_callback(
        test.chain, value, nest_then_wait_callback, &test, NULL));
  }
  HAL_ASSERT_OK(hal_semaphore_signal(test.chain, 1));
  assert_true(test.did_wait);
  assert_int_equal(test.waited, HAL_STATUS_DEADLINE_EXCEEDED);
  assert_int_equal(test.frees_in_callback, 0);
  assert_int_equal(test.frees_after_wait, 1);
  free(test.frees.block);
  hal_semaphore_release(test.chain);
}

// The test list: CASE binds this program's fixture.
#define CASE(name) cmocka_unit_test(name)

int main(void) {
  const struct CMUnitTest tests[] = {
      CASE(T1_CallbackOnceOnReach),
      CASE(T1_CallbackOnceOnFailure),
      CASE(T1_CallbackOnceOnCancelAndDestroy),
      CASE(T5_CancelThroughHandleAfterSemaphoreReleased),
      CASE(T2_NoCallbackUnderLock),
      CASE(T3_GenerationExposesRecycledTimepoint),
      CASE(T3_WarmPoolsDoNotAllocate),
#ifndef NDEBUG
      CASE(T3_StaleKeptPointersAbortInAssertionBuilds),
#endif
      CASE(T_SignalResolvesDueInRegistrationOrder),
      CASE(T5_CancelVsSignal),
      CASE(K12_CallbackReleasesLastReference),
      CASE(K12_CallbackAndSignalerRaceLastRelease),
      CASE(T2_LongCallbackChainRunsInBoundedStack),
      CASE(T2_DeepCallbackWaitsForWhatItDeferred),
      CASE(K12_CallbackRunByAWaitReleasesItsSemaphore),
  };
  return cmocka_run_group_tests_name("timepoint", tests, NULL, NULL);
}
