// Copyright 2026 The HAL Authors.
//
// Host waits on one or many semaphores, ALL or ANY, with one wake-up object
// per waiting thread (S3).
//
// The protocol (proved by T3_*, K6_*, K8_*, K9_* tests):
//  1. Acquire a waiter (the one wake object) from its pool.
//  2. For each entry, register a WAITER timepoint under the semaphore's lock
//     that checks the value (T3, K6, K8): either it is reached/failed now,
//     or the timepoint is in the heap and the next signal posts the waiter.
//     ALL over several entries also registers, per entry, a timepoint at
//     HAL_SEMAPHORE_FAILURE_VALUE, which no signal reaches: only a failure
//     posts it, so an entry reached and then failed still ends the wait.
//  3. Sleep on the waiter until enough posts arrived (ALL: every registered
//     entry; ANY: one), a failure post, or the deadline.
//  4. Cancel every registered timepoint (T5). Cancel returns each one's final
//     state under the lock, so the result is computed from states, not from
//     the wake-up: a signal landing just as the deadline passes counts
//     (K9). Late posts go to the waiter, kept alive by the timepoints'
//     references until they are done.

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "hal/env.h"
#include "semaphore_impl.h"

// Entries up to this count keep their bookkeeping on the stack.
#define HAL_SYNC_WAIT_INLINE_COUNT 16

typedef struct hal_sync_wait_entry_t {
  hal_timepoint_t* timepoint;  // registered, or NULL
  uint32_t generation;         // of |timepoint| when registered (T3 check)
  hal_sync_timepoint_state_t state;
  // ALL over several entries: a second timepoint, at a value no signal
  // reaches, that only the semaphore's failure resolves. An entry reached
  // while others are not fails the wait if its semaphore fails before the
  // wait ends (S2: every current wait returns the failure), at once.
  hal_timepoint_t* watch;  // registered, or NULL
  uint32_t watch_generation;
  hal_sync_timepoint_state_t watch_state;
} hal_sync_wait_entry_t;

static bool hal_sync_wait_value_is_reached(hal_semaphore_t* semaphore,
                                           uint64_t value) {
  uint64_t current = atomic_load_explicit(
      &hal_sync_semaphore_cast(semaphore)->value, memory_order_acquire);
  return current >= value && current < HAL_SEMAPHORE_FAILURE_VALUE;
}

// Lock-free check of the common already-satisfied case.
static bool hal_sync_wait_fast_path(hal_wait_mode_t mode, size_t count,
                                    hal_semaphore_t* const* semaphores,
                                    const uint64_t* values) {
  for (size_t i = 0; i < count; ++i) {
    bool reached = hal_sync_wait_value_is_reached(semaphores[i], values[i]);
    if (mode == HAL_WAIT_MODE_ANY && reached)
      return true;
    if (mode == HAL_WAIT_MODE_ALL && !reached)
      return false;
  }
  return mode == HAL_WAIT_MODE_ALL;
}

static hal_status_t hal_sync_wait_result(hal_wait_mode_t mode, size_t count,
                                         hal_semaphore_t* const* semaphores,
                                         const uint64_t* values,
                                         const hal_sync_wait_entry_t* entries,
                                         hal_time_t deadline_ns) {
  size_t reached_count = 0;
  size_t first_failed = SIZE_MAX;
  for (size_t i = 0; i < count; ++i) {
    if (entries[i].state == HAL_SYNC_TIMEPOINT_STATE_REACHED)
      ++reached_count;
    if ((entries[i].state == HAL_SYNC_TIMEPOINT_STATE_FAILED ||
         entries[i].watch_state == HAL_SYNC_TIMEPOINT_STATE_FAILED) &&
        first_failed == SIZE_MAX) {
      first_failed = i;
    }
  }
  bool ok =
      mode == HAL_WAIT_MODE_ALL ? reached_count == count : reached_count > 0;
  if (mode == HAL_WAIT_MODE_ALL && first_failed != SIZE_MAX)
    ok = false;
  if (ok)
    return HAL_OK;
  if (first_failed != SIZE_MAX) {
    return hal_status_annotatef(
        hal_sync_semaphore_clone_failure(
            hal_sync_semaphore_cast(semaphores[first_failed])),
        "while waiting for semaphore %p to reach %" PRIu64,
        (void*)semaphores[first_failed], values[first_failed]);
  }
  // What a user acts on: the first entry not reached, where it stands and
  // what it waited for.
  size_t pending = 0;
  while (pending + 1 < count &&
         entries[pending].state == HAL_SYNC_TIMEPOINT_STATE_REACHED) {
    ++pending;
  }
  uint64_t current =
      atomic_load_explicit(&hal_sync_semaphore_cast(semaphores[pending])->value,
                           memory_order_acquire);
  const char* deadline = deadline_ns == HAL_TIME_INFINITE_PAST
                             ? "an immediate deadline"
                             : "the deadline";
  if (current >= HAL_SEMAPHORE_FAILURE_VALUE)
    current = 0;  // failed after the entries were decided: not a value
  if (count == 1) {
    return hal_make_status(HAL_STATUS_DEADLINE_EXCEEDED,
                           "semaphore %p is at %" PRIu64 ", below the %" PRIu64
                           " waited for, at %s",
                           (void*)semaphores[0], current, values[0], deadline);
  }
  return hal_make_status(
      HAL_STATUS_DEADLINE_EXCEEDED,
      "wait %s over %zu semaphores: %zu of them reached before %s; entry "
      "%zu (semaphore %p) is at %" PRIu64 ", below the %" PRIu64 " waited for",
      mode == HAL_WAIT_MODE_ALL ? "ALL" : "ANY", count, reached_count, deadline,
      pending, (void*)semaphores[pending], current, values[pending]);
}

// HAL_SYNC_MAX_WAIT_MS: a bound on every host wait, so a hang in a test or a
// debugging session becomes a DEADLINE_EXCEEDED naming the knob instead of
// a process that never returns. Read once; 0 or unset: unbounded. A value
// that does not parse makes every wait that would block fail with the
// parser's INVALID_ARGUMENT (kept for the process's life), rather than run
// unbounded while the user thinks it is bounded.
static pthread_once_t hal_sync_max_wait_once = PTHREAD_ONCE_INIT;
static hal_duration_t hal_sync_max_wait_ns;
static hal_status_t hal_sync_max_wait_error;

static void hal_sync_max_wait_load(void) {
  uint64_t ms = 0;
  hal_sync_max_wait_error =
      hal_env_uint("HAL_SYNC_MAX_WAIT_MS", 0, 86400000, &ms, NULL);
  hal_sync_max_wait_ns = (hal_duration_t)ms * 1000000;
}

// Clamps |*deadline_ns| to now + HAL_SYNC_MAX_WAIT_MS (|*out_clamped| says
// whether it did); the setting's error if it is malformed.
static hal_status_t hal_sync_clamp_deadline(hal_time_t* deadline_ns,
                                            bool* out_clamped) {
  *out_clamped = false;
  pthread_once(&hal_sync_max_wait_once, hal_sync_max_wait_load);
  if (hal_sync_max_wait_error)
    return hal_status_clone(hal_sync_max_wait_error);
  if (hal_sync_max_wait_ns == 0)
    return HAL_OK;
  hal_time_t bound =
      hal_time_add_saturated(hal_time_now(), hal_sync_max_wait_ns);
  if (*deadline_ns <= bound)
    return HAL_OK;
  *deadline_ns = bound;
  *out_clamped = true;
  return HAL_OK;
}

// HAL_SYNC_SPIN_NS / hal_semaphore_set_spin_ns: how long a wait that would
// block first polls the values it waits for. -1: not loaded yet. Relaxed:
// the setting is a hint each wait reads once, ordering nothing.
static _Atomic int64_t hal_sync_spin_ns = -1;

// Polling a value another core writes helps only when that core exists.
static bool hal_sync_spin_has_peer_core(void) {
  static _Atomic int cached = -1;
  int value = atomic_load_explicit(&cached, memory_order_relaxed);
  if (value < 0) {
    value = sysconf(_SC_NPROCESSORS_ONLN) > 1 ? 1 : 0;
    atomic_store_explicit(&cached, value, memory_order_relaxed);
  }
  return value == 1;
}

HAL_API void hal_semaphore_set_spin_ns(uint64_t ns) {
  if (ns > HAL_SEMAPHORE_MAX_SPIN_NS)
    ns = HAL_SEMAPHORE_MAX_SPIN_NS;
  atomic_store_explicit(&hal_sync_spin_ns, (int64_t)ns, memory_order_relaxed);
}

HAL_API uint64_t hal_semaphore_spin_ns(void) {
  int64_t ns = atomic_load_explicit(&hal_sync_spin_ns, memory_order_relaxed);
  if (ns >= 0)
    return (uint64_t)ns;
  // A malformed value keeps the default. No status reaches a waiter here,
  // so the call that loads it says so on stderr (hal_env_check, which the
  // registry runs, returns it). Racing first calls compute the same answer.
  uint64_t loaded = HAL_SEMAPHORE_DEFAULT_SPIN_NS;
  hal_status_t status = hal_env_uint("HAL_SYNC_SPIN_NS", 0,
                                     HAL_SEMAPHORE_MAX_SPIN_NS, &loaded, NULL);
  int64_t expected = -1;
  if (atomic_compare_exchange_strong_explicit(
          &hal_sync_spin_ns, &expected, (int64_t)loaded, memory_order_relaxed,
          memory_order_relaxed) &&
      status) {
    fprintf(stderr, "hal: %s; the default, %" PRIu64 " ns, is kept\n",
            hal_status_message(status), loaded);
  }
  hal_status_free(status);
  return (uint64_t)atomic_load_explicit(&hal_sync_spin_ns,
                                        memory_order_relaxed);
}

static inline void hal_sync_cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

// One pass of the spin over the entries: 1 the wait is satisfied, -1 an
// entry failed, 0 neither yet. Acquire loads, as the fast path.
static int hal_sync_wait_poll(hal_wait_mode_t mode, size_t count,
                              hal_semaphore_t* const* semaphores,
                              const uint64_t* values) {
  int result = 1;
  for (size_t i = 0; i < count; ++i) {
    uint64_t current = atomic_load_explicit(
        &hal_sync_semaphore_cast(semaphores[i])->value, memory_order_acquire);
    if (current >= HAL_SEMAPHORE_FAILURE_VALUE)
      return -1;
    if (current >= values[i]) {
      if (mode == HAL_WAIT_MODE_ANY)
        return 1;
    } else {
      result = 0;
    }
  }
  return mode == HAL_WAIT_MODE_ANY ? 0 : result;
}

// The bounded spin before sleeping: polls the values until the wait is
// satisfied (true), an entry fails, or the spin time or the deadline passes
// (false: the caller registers and sleeps, and the slow path decides
// failures and deadlines as it always does). It returns true only for
// values reached, read with acquire, so S3 and S5 hold as on the fast path.
static bool hal_sync_wait_spin(hal_wait_mode_t mode, size_t count,
                               hal_semaphore_t* const* semaphores,
                               const uint64_t* values, hal_time_t deadline_ns) {
  uint64_t spin_ns = hal_semaphore_spin_ns();
  if (spin_ns == 0 || !hal_sync_spin_has_peer_core())
    return false;
  hal_time_t now = hal_time_now();
  if (now >= deadline_ns)
    return false;
  hal_time_t end = hal_time_add_saturated(now, (hal_duration_t)spin_ns);
  if (end > deadline_ns)
    end = deadline_ns;
  for (;;) {
    // The clock is read every few polls: a poll is a few loads, a clock
    // read costs as much as several of them.
    for (int poll = 0; poll < 16; ++poll) {
      int state = hal_sync_wait_poll(mode, count, semaphores, values);
      if (state != 0)
        return state > 0;
      hal_sync_cpu_relax();
    }
    if (hal_time_now() >= end)
      return false;
  }
}

static hal_status_t hal_sync_wait_sleep(hal_wait_mode_t mode, size_t count,
                                        hal_semaphore_t* const* semaphores,
                                        const uint64_t* values,
                                        hal_time_t deadline_ns, bool clamped);

// The wait once the fast path found it not satisfied: spin, complete the
// work that publishes the value where the queue's completion thread is not
// at it, sleep. |only_event|: NULL, any such work; else only the work
// whose completion event it is.
static hal_status_t hal_sync_wait_blocking(
    hal_wait_mode_t mode, size_t count, hal_semaphore_t* const* semaphores,
    const uint64_t* values, hal_time_t deadline_ns,
    const hal_sync_native_event_t* only_event) {
  bool clamped = false;
  HAL_RETURN_IF_ERROR(hal_sync_clamp_deadline(&deadline_ns, &clamped));
  if (hal_sync_wait_spin(mode, count, semaphores, values, deadline_ns))
    return HAL_OK;
  // A wait that would sleep until issued work publishes the value completes
  // that work itself where the queue's completion thread is not at it
  // (hal_sync_queue_help_complete): the device then wakes this thread, not
  // a completion thread that wakes it in turn. Only without a deadline: the
  // device wait has none.
  hal_sync_queue_t* queue = NULL;
  hal_sync_native_event_t* event = NULL;
  if (count == 1 && deadline_ns == HAL_TIME_INFINITE_FUTURE &&
      hal_sync_semaphore_find_signaler(hal_sync_semaphore_cast(semaphores[0]),
                                       values[0], only_event, &queue, &event)) {
    // Completing runs the work's callbacks on this thread, and one of them
    // may release the reference the caller lent it (K12): the wait holds
    // one of its own until it returns.
    hal_semaphore_retain(semaphores[0]);
    hal_sync_queue_help_complete(queue, event);
    hal_status_t status =
        hal_sync_wait_value_is_reached(semaphores[0], values[0])
            ? HAL_OK
            : hal_sync_wait_sleep(mode, count, semaphores, values, deadline_ns,
                                  clamped);
    hal_semaphore_release(semaphores[0]);
    return status;
  }
  return hal_sync_wait_sleep(mode, count, semaphores, values, deadline_ns,
                             clamped);
}

static hal_status_t hal_sync_wait_list_helping(
    hal_wait_mode_t mode, size_t count, hal_semaphore_t* const* semaphores,
    const uint64_t* values, hal_time_t deadline_ns,
    const hal_sync_native_event_t* only_event) {
  if (count == 0)
    return HAL_OK;
  if (hal_sync_wait_fast_path(mode, count, semaphores, values))
    return HAL_OK;
  if (!hal_sync_timepoints_have_deferred()) {
    return hal_sync_wait_blocking(mode, count, semaphores, values, deadline_ns,
                                  only_event);
  }
  // In a callback past the nesting bound: what it deferred may be what
  // this wait is for. Run no more of it than that takes. What runs may
  // release the reference the caller lent it to a semaphore of the list
  // (K12): the wait holds one of its own on each until it returns.
  for (size_t i = 0; i < count; ++i)
    hal_semaphore_retain(semaphores[i]);
  bool satisfied = false;
  while (!satisfied && hal_sync_timepoints_run_one_deferred())
    satisfied = hal_sync_wait_fast_path(mode, count, semaphores, values);
  hal_status_t status =
      satisfied ? HAL_OK
                : hal_sync_wait_blocking(mode, count, semaphores, values,
                                         deadline_ns, only_event);
  for (size_t i = 0; i < count; ++i)
    hal_semaphore_release(semaphores[i]);
  return status;
}

hal_status_t hal_sync_semaphore_wait_list(hal_wait_mode_t mode, size_t count,
                                          hal_semaphore_t* const* semaphores,
                                          const uint64_t* values,
                                          hal_time_t deadline_ns) {
  return hal_sync_wait_list_helping(mode, count, semaphores, values,
                                    deadline_ns, NULL);
}

hal_status_t hal_sync_semaphore_wait_signaler(
    hal_semaphore_t* semaphore, uint64_t value,
    const hal_sync_native_event_t* event) {
  return hal_sync_wait_list_helping(HAL_WAIT_MODE_ALL, 1, &semaphore, &value,
                                    HAL_TIME_INFINITE_FUTURE, event);
}

// Step 2 for one timepoint of |waiter| at |value| on |semaphore|: PENDING
// with |*out_timepoint| holding our reference (the heap holds the other),
// or the state it found, nothing kept.
static hal_status_t hal_sync_wait_register(
    hal_sync_waiter_t* waiter, hal_semaphore_t* semaphore, uint64_t value,
    hal_timepoint_t** out_timepoint, uint32_t* out_generation,
    hal_sync_timepoint_state_t* out_state) {
  *out_timepoint = NULL;
  hal_timepoint_t* timepoint = NULL;
  HAL_RETURN_IF_ERROR(
      hal_sync_timepoint_acquire_waiter(waiter, value, &timepoint));
  // Our own reference is taken BEFORE registering: once in the heap, a
  // signal may pop, notify and drop the heap's reference at any moment.
  hal_sync_timepoint_retain(timepoint);
  hal_status_t status = hal_sync_semaphore_register_timepoint(
      hal_sync_semaphore_cast(semaphore), timepoint, out_state);
  if (status == HAL_OK && *out_state == HAL_SYNC_TIMEPOINT_STATE_PENDING) {
    *out_timepoint = timepoint;  // the heap took the other reference
    *out_generation = hal_sync_timepoint_generation(timepoint);
    return HAL_OK;
  }
  hal_sync_timepoint_release(timepoint);  // never registered: drop both
  hal_sync_timepoint_release(timepoint);
  return status;
}

// Step 4 for one timepoint: cancels it if still pending, returns its final
// state (read under the lock) and drops our reference.
static hal_sync_timepoint_state_t hal_sync_wait_settle(
    hal_timepoint_t** timepoint, uint32_t generation) {
  hal_sync_timepoint_check(*timepoint, generation);
  hal_sync_timepoint_state_t state =
      hal_sync_timepoint_cancel(*timepoint, NULL);
  hal_sync_timepoint_release(*timepoint);
  *timepoint = NULL;
  return state;
}

// Steps 1-4 above, for a wait that found its values not reached.
static hal_status_t hal_sync_wait_sleep(hal_wait_mode_t mode, size_t count,
                                        hal_semaphore_t* const* semaphores,
                                        const uint64_t* values,
                                        hal_time_t deadline_ns, bool clamped) {
  hal_sync_wait_entry_t inline_entries[HAL_SYNC_WAIT_INLINE_COUNT];
  hal_sync_wait_entry_t* entries = inline_entries;
  if (count > HAL_SYNC_WAIT_INLINE_COUNT) {
    entries = calloc(count, sizeof(*entries));
    if (!entries) {
      return hal_make_status(HAL_STATUS_RESOURCE_EXHAUSTED,
                             "out of memory waiting on %zu semaphores", count);
    }
  }
  hal_sync_waiter_t* waiter = NULL;
  hal_status_t status = hal_sync_waiter_acquire(&waiter);
  if (status != HAL_OK)
    goto cleanup_entries;

  // 2. Register under each semaphore's lock.
  const bool watch_failures = mode == HAL_WAIT_MODE_ALL && count > 1;
  size_t registered_count = 0;
  bool decided = false;  // the outcome is known without sleeping
  size_t i = 0;
  for (; i < count; ++i) {
    entries[i].state = HAL_SYNC_TIMEPOINT_STATE_CANCELLED;
    entries[i].watch = NULL;
    entries[i].watch_state = HAL_SYNC_TIMEPOINT_STATE_CANCELLED;
    status = hal_sync_wait_register(waiter, semaphores[i], values[i],
                                    &entries[i].timepoint,
                                    &entries[i].generation, &entries[i].state);
    if (status != HAL_OK)
      break;
    if (entries[i].timepoint) {
      ++registered_count;
    } else if (entries[i].state == HAL_SYNC_TIMEPOINT_STATE_FAILED ||
               mode == HAL_WAIT_MODE_ANY) {
      // A reached entry decides ANY; a failed entry decides both modes (S2,
      // S3): an ANY wait that finds a failure here returns it at once, as it
      // would had the failure come while it slept, unless an entry
      // registered before this one is reached by the time step 4 reads its
      // state.
      decided = true;
      ++i;
      break;
    }
    if (watch_failures) {
      status = hal_sync_wait_register(
          waiter, semaphores[i], HAL_SEMAPHORE_FAILURE_VALUE, &entries[i].watch,
          &entries[i].watch_generation, &entries[i].watch_state);
      if (status != HAL_OK ||
          entries[i].watch_state == HAL_SYNC_TIMEPOINT_STATE_FAILED) {
        decided = true;  // failed since the entry registered
        ++i;
        break;
      }
    }
  }
  size_t entry_count = i;  // entries[0, entry_count) are initialized

  // 3. Sleep on the one wake object. A watch posts only on a failure,
  // which ends the sleep whatever the count.
  if (status == HAL_OK && !decided && registered_count > 0) {
    uint32_t needed =
        mode == HAL_WAIT_MODE_ALL ? (uint32_t)registered_count : 1;
    hal_sync_wake_wait(&waiter->wake, needed, deadline_ns);
  }

  // 4. Cancel what is still pending; read every final state under the lock.
  for (size_t j = 0; j < entry_count; ++j) {
    if (entries[j].timepoint) {
      entries[j].state =
          hal_sync_wait_settle(&entries[j].timepoint, entries[j].generation);
    }
    if (entries[j].watch) {
      entries[j].watch_state =
          hal_sync_wait_settle(&entries[j].watch, entries[j].watch_generation);
    }
  }
  if (status == HAL_OK) {
    // Entries never examined (decided early) count as not reached.
    for (size_t j = entry_count; j < count; ++j) {
      entries[j].state = HAL_SYNC_TIMEPOINT_STATE_CANCELLED;
      entries[j].watch_state = HAL_SYNC_TIMEPOINT_STATE_CANCELLED;
    }
    status = hal_sync_wait_result(mode, count, semaphores, values, entries,
                                  deadline_ns);
  }
  hal_sync_waiter_release(waiter);

cleanup_entries:
  if (entries != inline_entries)
    free(entries);
  if (clamped && hal_status_is(status, HAL_STATUS_DEADLINE_EXCEEDED)) {
    status = hal_status_annotatef(
        status, "HAL_SYNC_MAX_WAIT_MS=%lld cut this wait short (a hang?)",
        (long long)(hal_sync_max_wait_ns / 1000000));
  }
  return status;
}
