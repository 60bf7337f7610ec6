// Copyright 2026 The HAL Authors.
//
// Host calls (hal_device_queue_host_call): a function run on a HAL-owned
// thread after its waits, before its signals, built on timepoints.
//
// One executor per device, started by the first host call: a thread, the
// calls it has not finished, and a FIFO of calls ready to run.
//
// A call's life:
//  1. submit: copied lists, semaphores retained, listed in |live|; one
//     timepoint callback registered per wait. |unresolved| counts the waits
//     not yet resolved plus a registration token held by the submitter.
//  2. a wait resolves (on its signaler's thread, T2): a failure is noted
//     and dispatches the call at once (S2: a failed wait decides it);
//     otherwise the last resolution dispatches it. A call with several
//     waits also keeps a failure watch on each wait's semaphore, so that a
//     wait reached and then failed while another keeps the call waiting
//     decides it too, at once (S2: a value reached before the failure is
//     failed for every current wait). Dispatch happens once
//     (|dispatched| exchange) and only appends to the FIFO: callbacks stay
//     short.
//  3. the executor thread runs fn with OK, or calls it with the failure
//     (fn must not do its work then, only release what user_data holds),
//     then signals or fails every signal semaphore.
//  4. the timepoints still pending are cancelled (T5), by whichever of the
//     executor and the submitter comes second, so that no callback keeps a
//     finished call (and the semaphore retained by its handle) alive.
//  5. the last reference (one per unresolved timepoint, one for the
//     submitter, one for the executor) frees it; each call holds the
//     executor's memory (not its thread) until then.
//
// Shutdown (Q4), from the device's last release: every call not yet
// dispatched is dispatched with CANCELLED (with the failure of a wait that
// failed already, whose callback may not have run yet: S2; with the loss
// instead when the device was lost: the loss dispatches its waiting calls
// after it failed the device's semaphores, so a release may come in
// between), the executor runs the FIFO dry (calls never run then get
// CANCELLED too, unless a wait of theirs failed), and the
// thread is joined. A host call that releases the device's last reference
// from fn defers the shutdown to libhal's release thread (the executor
// cannot join itself).
//
// Loss (Q5, K14): an executor is a member of its device's loss domain. The
// loss refuses later calls with a copy of it, dispatches every call not
// yet dispatched with it, and fails the ready calls not yet started: as a
// queue's parked and new submissions, whatever they wait for. A call
// already running finishes.
//
// Lock order: the loss domain's mutex, then the executor mutex, then
// nothing (timepoint calls, fn and signals run with it dropped).

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hal/impl/device.h"
#include "hal/timepoint.h"
#include "hal/trace.h"
#include "semaphore_impl.h"
#include "sync_queue.h"
#include "wake.h"

typedef struct hal_sync_host_call_t hal_sync_host_call_t;

struct hal_sync_host_executor_t {
  // The device's reference and one per call not yet freed: a call's
  // callbacks and its submitter use the mutex until the call is freed,
  // which may come after the thread stopped (the submitter of a call whose
  // function dropped the device's last reference may still be registering).
  atomic_int refs;
  hal_sync_mutex_t mutex;
  pthread_cond_t cond;  // the FIFO gained a call, or stopping
  pthread_t thread;
  bool stopping;  // guarded by mutex
  // Calls submitted and not yet finished, oldest first (guarded by mutex):
  // shutdown cancels those not dispatched, in that order.
  hal_sync_host_call_t* live;
  hal_sync_host_call_t* live_tail;
  // Calls dispatched and not yet run, oldest first (guarded by mutex).
  hal_sync_host_call_t* ready_head;
  hal_sync_host_call_t* ready_tail;
  // The device's loss, once its loss domain failed (guarded by mutex).
  hal_status_t loss;
  // Membership of the device's loss domain (links under its lock).
  hal_sync_loss_domain_t* domain;  // NULL: none
  hal_sync_domain_link_t domain_link;
};

struct hal_sync_host_call_t {
  hal_sync_host_executor_t* executor;
  hal_host_call_fn_t fn;
  void* user_data;
  size_t wait_count;
  size_t signal_count;
  hal_semaphore_t** semaphores;  // waits, then signals (retained)
  uint64_t* values;
  hal_timepoint_t** timepoints;  // one handle per wait (NULL: none)
  // One failure watch per wait (NULL: none), where there are several.
  hal_timepoint_t** watches;
  atomic_int refs;
  atomic_int unresolved;
  atomic_bool dispatched;
  // The first failure among the waits, or CANCELLED (guarded by the
  // executor's mutex until dispatched; the executor's afterwards).
  hal_status_t failure;
  // Which of the submitter and the executor finished second cancels the
  // pending timepoints (both guarded by the executor's mutex).
  bool registered;
  bool executed;
  hal_sync_host_call_t* live_prev;  // guarded by the executor's mutex
  hal_sync_host_call_t* live_next;
  hal_sync_host_call_t* ready_next;
};

static void hal_sync_host_executor_unref(hal_sync_host_executor_t* executor) {
  if (atomic_fetch_sub_explicit(&executor->refs, 1, memory_order_acq_rel) !=
      1) {
    return;
  }
  hal_status_free(executor->loss);
  pthread_cond_destroy(&executor->cond);
  hal_sync_mutex_deinitialize(&executor->mutex);
  free(executor);
}

static void hal_sync_host_call_unref(hal_sync_host_call_t* call) {
  if (atomic_fetch_sub_explicit(&call->refs, 1, memory_order_acq_rel) != 1)
    return;
  for (size_t i = 0; i < call->wait_count; ++i) {
    hal_timepoint_release(call->timepoints[i]);
    if (call->watches)
      hal_timepoint_release(call->watches[i]);
  }
  for (size_t i = 0; i < call->wait_count + call->signal_count; ++i)
    hal_semaphore_release(call->semaphores[i]);
  hal_status_free(call->failure);
  hal_sync_host_executor_t* executor = call->executor;
  free(call);
  hal_sync_host_executor_unref(executor);
}

// Appends |call| to the FIFO unless it was dispatched before.
static void hal_sync_host_call_dispatch(hal_sync_host_call_t* call) {
  if (atomic_exchange_explicit(&call->dispatched, true, memory_order_acq_rel))
    return;
  hal_sync_host_executor_t* executor = call->executor;
  hal_sync_mutex_lock(&executor->mutex);
  call->ready_next = NULL;
  if (executor->ready_tail)
    executor->ready_tail->ready_next = call;
  else
    executor->ready_head = call;
  executor->ready_tail = call;
  pthread_cond_signal(&executor->cond);
  hal_sync_mutex_unlock(&executor->mutex);
}

// Records |status| (borrowed) as the call's failure unless one is noted or
// the call was dispatched: from then on the failure is the executor's
// (it looks at the waits again before it runs the call). The dispatcher
// sets |dispatched| before it takes the mutex to append, and the executor
// takes the call under it, so a note made under it either comes before
// the executor reads the failure or sees |dispatched|.
static void hal_sync_host_call_note_failure(hal_sync_host_call_t* call,
                                            hal_status_t status) {
  hal_sync_host_executor_t* executor = call->executor;
  hal_sync_mutex_lock(&executor->mutex);
  // |dispatched| first: once it is set, |failure| is not ours to read.
  if (!atomic_load_explicit(&call->dispatched, memory_order_acquire) &&
      call->failure == HAL_OK) {
    call->failure = hal_status_clone(status);
  }
  hal_sync_mutex_unlock(&executor->mutex);
}

// One wait of |call| or its registration token resolved.
static void hal_sync_host_call_resolve(hal_sync_host_call_t* call) {
  if (atomic_fetch_sub_explicit(&call->unresolved, 1, memory_order_acq_rel) ==
      1) {
    hal_sync_host_call_dispatch(call);
  }
}

// A failure (|status| not OK, borrowed) decides |call| at once (S2).
static void hal_sync_host_call_decide_on_failure(hal_sync_host_call_t* call,
                                                 hal_status_t status) {
  if (status != HAL_OK) {
    hal_sync_host_call_note_failure(call, status);
    hal_sync_host_call_dispatch(call);
  }
}

// Timepoint callback of one wait (T2: the signaler's thread, no lock held).
static void hal_sync_host_call_on_wait(void* user_data, uint64_t value,
                                       hal_status_t status) {
  (void)value;
  hal_sync_host_call_t* call = user_data;
  hal_sync_host_call_decide_on_failure(call, status);
  hal_sync_host_call_resolve(call);
  hal_sync_host_call_unref(call);
}

// The failure of the first wait of |call| whose semaphore has failed (a
// clone), or HAL_OK. That failure decided the call when it was published
// (S2), even if the wait's callback, which runs on the failing thread after
// the failure is visible, has not run yet: a thread that saw the failure
// and then released the device must not find the call cancelled instead.
static hal_status_t hal_sync_host_call_failed_wait(hal_sync_host_call_t* call) {
  for (size_t i = 0; i < call->wait_count; ++i) {
    hal_status_t failure =
        hal_sync_semaphore_wait_failure(call->semaphores[i], call->values[i]);
    if (failure != HAL_OK)
      return failure;
  }
  return HAL_OK;
}

// Failure watch of one wait (T2): a failure of its semaphore decides the
// call, even after the wait was reached; |status| is that failure (the
// first one, when several waits fail). The only other status a watch gets
// is the CANCELLED of the cancel once the call ran, when the call was
// dispatched long since and the note is no more than a look.
static void hal_sync_host_call_on_watch(void* user_data, uint64_t value,
                                        hal_status_t status) {
  (void)value;
  hal_sync_host_call_t* call = user_data;
  hal_sync_host_call_decide_on_failure(call, status);
  hal_sync_host_call_unref(call);
}

static void hal_sync_host_call_cancel_waits(hal_sync_host_call_t* call) {
  for (size_t i = 0; i < call->wait_count; ++i) {
    if (call->timepoints[i])
      (void)hal_timepoint_cancel(call->timepoints[i]);
    if (call->watches && call->watches[i])
      (void)hal_timepoint_cancel(call->watches[i]);
  }
}

// Marks one of the two sides (registration, execution) done; the second
// one cancels the pending timepoints.
static void hal_sync_host_call_finish_side(hal_sync_host_call_t* call,
                                           bool* side) {
  hal_sync_host_executor_t* executor = call->executor;
  hal_sync_mutex_lock(&executor->mutex);
  *side = true;
  bool both = call->registered && call->executed;
  hal_sync_mutex_unlock(&executor->mutex);
  if (both)
    hal_sync_host_call_cancel_waits(call);
}

// Executor thread: runs |call| (or tells fn why not) and settles its
// signals. |cancelled|: the device shut down before it started (Q4), which
// decides it only when no wait of it has failed (S2 decided it then).
static void hal_sync_host_call_execute(hal_sync_host_call_t* call,
                                       bool cancelled) {
  uint64_t trace_start = hal_trace_enabled() ? (uint64_t)hal_time_now() : 0;
  // A wait reached, then failed while others kept the call waiting: as a
  // submission at issue, it never runs (S2).
  if (call->failure == HAL_OK)
    call->failure = hal_sync_host_call_failed_wait(call);
  if (cancelled && call->failure == HAL_OK) {
    // Ready but not started when the device shut down: parked work (Q4).
    call->failure = hal_make_status(HAL_STATUS_CANCELLED,
                                    "host call cancelled: the device shut "
                                    "down before it ran");
  }
  hal_status_t result;
  if (call->failure != HAL_OK) {
    // Never runs: fn only learns why (to release user_data).
    hal_status_free(call->fn(call->user_data, call->failure));
    result = hal_status_clone(call->failure);
  } else {
    result = call->fn(call->user_data, HAL_OK);
  }
  hal_semaphore_t** signals = call->semaphores + call->wait_count;
  uint64_t* values = call->values + call->wait_count;
  for (size_t i = 0; i < call->signal_count; ++i) {
    if (result == HAL_OK) {
      // A queue signal, as a submission's: "at least" (S1), no-op on a
      // failed semaphore.
      hal_sync_semaphore_advance(hal_sync_semaphore_cast(signals[i]),
                                 values[i]);
    } else {
      hal_semaphore_fail(signals[i], hal_status_clone(result));
    }
  }
  if (trace_start) {
    char args[HAL_TRACE_STATUS_ARGS];
    hal_trace_status_args(result, args, sizeof(args));
    hal_trace_complete("host",
                       call->failure ? "host_call (not run)" : "host_call",
                       trace_start, args);
  }
  hal_status_free(result);
  hal_sync_host_call_finish_side(call, &call->executed);
}

static void* hal_sync_host_executor_main(void* arg) {
  hal_sync_host_executor_t* executor = arg;
  // A host call may drop the device's last reference: its shutdown (which
  // joins this thread) then runs on libhal's release thread.
  hal_resource_defer_shutdown_enter();
  hal_sync_mutex_lock(&executor->mutex);
  for (;;) {
    hal_sync_host_call_t* call = executor->ready_head;
    if (!call) {
      if (executor->stopping && !executor->live)
        break;
      hal_sync_cond_wait(&executor->cond, &executor->mutex,
                         HAL_TIME_INFINITE_FUTURE);
      continue;
    }
    executor->ready_head = call->ready_next;
    if (!executor->ready_head)
      executor->ready_tail = NULL;
    if (executor->loss && call->failure == HAL_OK) {
      // Ready but not started when the device was lost (Q5).
      call->failure = hal_status_annotatef(
          hal_status_clone(executor->loss),
          "host call not run: its device was lost before it started");
    }
    bool cancelled = executor->stopping && call->failure == HAL_OK;
    hal_sync_mutex_unlock(&executor->mutex);
    hal_sync_host_call_execute(call, cancelled);
    hal_sync_mutex_lock(&executor->mutex);
    // Off the live list; the executor's reference goes.
    if (call->live_prev)
      call->live_prev->live_next = call->live_next;
    else
      executor->live = call->live_next;
    if (call->live_next)
      call->live_next->live_prev = call->live_prev;
    else
      executor->live_tail = call->live_prev;
    hal_sync_mutex_unlock(&executor->mutex);
    hal_sync_host_call_unref(call);
    hal_sync_mutex_lock(&executor->mutex);
  }
  hal_sync_mutex_unlock(&executor->mutex);
  hal_resource_defer_shutdown_exit();
  return NULL;
}

HAL_API hal_status_t hal_sync_host_executor_create(
    const char* prefix, const char* name, hal_sync_loss_domain_t* domain,
    hal_sync_host_executor_t** out_executor) {
  *out_executor = NULL;
  hal_sync_host_executor_t* executor = calloc(1, sizeof(*executor));
  if (!executor) {
    return hal_make_status(HAL_STATUS_RESOURCE_EXHAUSTED,
                           "host call executor of %s", name);
  }
  atomic_init(&executor->refs, 1);
  hal_sync_mutex_initialize(&executor->mutex);
  hal_sync_cond_initialize(&executor->cond);
  int error = pthread_create(&executor->thread, NULL,
                             hal_sync_host_executor_main, executor);
  if (error) {
    pthread_cond_destroy(&executor->cond);
    hal_sync_mutex_deinitialize(&executor->mutex);
    free(executor);
    return hal_make_status(HAL_STATUS_RESOURCE_EXHAUSTED,
                           "cannot start the host call thread of %s: %s", name,
                           strerror(error));
  }
  // 15 characters: the prefix and the end of the device's name, where its
  // index is, so that two devices' threads stay apart.
  char thread_name[16];
  size_t length = strlen(name);
  size_t room = 15 - strlen(prefix);
  snprintf(thread_name, sizeof(thread_name), "%s%s", prefix,
           length > room ? name + (length - room) : name);
  pthread_setname_np(executor->thread, thread_name);
  if (domain) {
    executor->domain = domain;
    hal_status_t loss =
        hal_sync_loss_domain_add_executor(domain, &executor->domain_link);
    if (loss != HAL_OK) {
      // Lost already: no loss will come to it, so it takes this one.
      hal_sync_mutex_lock(&executor->mutex);
      executor->loss = loss;
      hal_sync_mutex_unlock(&executor->mutex);
    }
  }
  *out_executor = executor;
  return HAL_OK;
}

hal_sync_host_executor_t* hal_sync_host_executor_lose_locked(
    hal_sync_domain_link_t* link, hal_status_t loss) {
  hal_sync_host_executor_t* executor =
      (hal_sync_host_executor_t*)((char*)link -
                                  offsetof(hal_sync_host_executor_t,
                                           domain_link));
  // Listed, so shutdown has not removed it and the device's reference is
  // still held: this one keeps it until fail_waiting.
  atomic_fetch_add_explicit(&executor->refs, 1, memory_order_relaxed);
  hal_sync_mutex_lock(&executor->mutex);
  if (!executor->loss)
    executor->loss = hal_status_clone(loss);
  hal_sync_mutex_unlock(&executor->mutex);
  return executor;
}

HAL_API hal_status_t hal_sync_host_executor_submit(
    hal_sync_host_executor_t* executor, hal_semaphore_list_t waits,
    hal_semaphore_list_t signals, hal_host_call_fn_t fn, void* user_data) {
  size_t count = waits.count + signals.count;
  size_t watch_count = waits.count > 1 ? waits.count : 0;
  size_t size = sizeof(hal_sync_host_call_t) +
                count * (sizeof(hal_semaphore_t*) + sizeof(uint64_t)) +
                (waits.count + watch_count) * sizeof(hal_timepoint_t*);
  hal_sync_host_call_t* call = calloc(1, size);
  if (!call) {
    return hal_make_status(HAL_STATUS_RESOURCE_EXHAUSTED,
                           "host call with %zu semaphores", count);
  }
  call->executor = executor;
  atomic_fetch_add_explicit(&executor->refs, 1, memory_order_relaxed);
  call->fn = fn;
  call->user_data = user_data;
  call->wait_count = waits.count;
  call->signal_count = signals.count;
  call->semaphores = (hal_semaphore_t**)(call + 1);
  call->values = (uint64_t*)(call->semaphores + count);
  call->timepoints = (hal_timepoint_t**)(call->values + count);
  call->watches = watch_count ? call->timepoints + waits.count : NULL;
  for (size_t i = 0; i < waits.count; ++i) {
    call->semaphores[i] = waits.semaphores[i];
    call->values[i] = waits.payload_values[i];
  }
  for (size_t i = 0; i < signals.count; ++i) {
    call->semaphores[waits.count + i] = signals.semaphores[i];
    call->values[waits.count + i] = signals.payload_values[i];
  }
  for (size_t i = 0; i < count; ++i)
    hal_semaphore_retain(call->semaphores[i]);
  // One reference per wait's callback and watch, the submitter's, the
  // executor's.
  atomic_init(&call->refs, (int)(waits.count + watch_count) + 2);
  atomic_init(&call->unresolved, (int)waits.count + 1);
  atomic_init(&call->dispatched, false);

  hal_sync_mutex_lock(&executor->mutex);
  if (executor->stopping || executor->loss) {
    hal_status_t refusal =
        executor->stopping
            ? hal_make_status(HAL_STATUS_FAILED_PRECONDITION,
                              "host call: the device is shut down")
            : hal_status_annotatef(hal_status_clone(executor->loss),
                                   "host call: its device was lost");
    hal_sync_mutex_unlock(&executor->mutex);
    // Never registered: no timepoint handle to release, and the semaphores
    // retained above go back here (all of them, waits and signals).
    for (size_t i = 0; i < count; ++i)
      hal_semaphore_release(call->semaphores[i]);
    call->wait_count = 0;
    call->signal_count = 0;
    atomic_store_explicit(&call->refs, 1, memory_order_relaxed);
    hal_sync_host_call_unref(call);
    return refusal;
  }
  // Appended: the list runs in submission order, the order a shutdown
  // dispatches the calls still waiting in, so a call's failure, failing a
  // semaphore that later calls wait on, comes before theirs.
  call->live_prev = executor->live_tail;
  call->live_next = NULL;
  if (executor->live_tail)
    executor->live_tail->live_next = call;
  else
    executor->live = call;
  executor->live_tail = call;
  hal_sync_mutex_unlock(&executor->mutex);

  for (size_t i = 0; i < waits.count; ++i) {
    // Keyed by the executor: calls waiting on one semaphore become ready in
    // the order they registered (semaphore.c: "Queue order").
    hal_status_t status = hal_sync_semaphore_add_ordered_callback(
        call->semaphores[i], call->values[i], hal_sync_host_call_on_wait, call,
        executor, &call->timepoints[i]);
    if (status != HAL_OK) {
      // Not registered (the lists were validated: resources ran out): this
      // wait counts as failed and its callback reference goes here.
      hal_sync_host_call_note_failure(call, status);
      hal_status_free(status);
      hal_sync_host_call_dispatch(call);
      hal_sync_host_call_resolve(call);
      hal_sync_host_call_unref(call);
    }
  }
  for (size_t i = 0; i < watch_count; ++i) {
    // After the waits: a watch that fires at once finds the call's waits
    // registered. One that cannot be registered (resources ran out) fails
    // the call, as a wait that cannot be.
    hal_status_t status = hal_sync_semaphore_add_failure_watch(
        call->semaphores[i], hal_sync_host_call_on_watch, call,
        &call->watches[i]);
    if (status != HAL_OK) {
      hal_sync_host_call_note_failure(call, status);
      hal_status_free(status);
      hal_sync_host_call_dispatch(call);
      hal_sync_host_call_unref(call);
    }
  }
  hal_sync_host_call_resolve(call);
  hal_sync_host_call_finish_side(call, &call->registered);
  hal_sync_host_call_unref(call);
  return HAL_OK;
}

// Dispatches every call of |executor| not dispatched yet with |status|
// (borrowed), or, when |cancelled| (the shutdown's CANCELLED), with the
// failure of a wait of the call that failed already. Dispatch takes the
// mutex, so each is found with it held, kept alive by a reference, and
// failed with it dropped (not a hot path).
static void hal_sync_host_executor_fail_undispatched(
    hal_sync_host_executor_t* executor, hal_status_t status, bool cancelled) {
  for (;;) {
    hal_sync_mutex_lock(&executor->mutex);
    hal_sync_host_call_t* call = executor->live;
    while (call &&
           atomic_load_explicit(&call->dispatched, memory_order_acquire)) {
      call = call->live_next;
    }
    if (call)
      atomic_fetch_add_explicit(&call->refs, 1, memory_order_relaxed);
    hal_sync_mutex_unlock(&executor->mutex);
    if (!call)
      break;
    hal_status_t failed_wait =
        cancelled ? hal_sync_host_call_failed_wait(call) : HAL_OK;
    hal_sync_host_call_note_failure(call, failed_wait ? failed_wait : status);
    hal_status_free(failed_wait);
    hal_sync_host_call_dispatch(call);
    hal_sync_host_call_unref(call);
  }
}

// What a call not yet dispatched fails with: the device's loss once the
// executor took it (Q5), whichever dispatches it, the loss or a shutdown
// that comes between the loss and its dispatch (the device's semaphores
// failed already, so its last release may); else CANCELLED by the
// shutdown (Q4), |*out_cancelled| set.
static hal_status_t hal_sync_host_executor_waiting_failure(
    hal_sync_host_executor_t* executor, bool* out_cancelled) {
  hal_sync_mutex_lock(&executor->mutex);
  *out_cancelled = !executor->loss;
  hal_status_t status =
      executor->loss
          ? hal_status_annotatef(
                hal_status_clone(executor->loss),
                "host call not run: its device was lost while it waited")
          : hal_make_status(HAL_STATUS_CANCELLED,
                            "host call cancelled: the device shut down while "
                            "it waited");
  hal_sync_mutex_unlock(&executor->mutex);
  return status;
}

void hal_sync_host_executor_fail_waiting(hal_sync_host_executor_t* executor) {
  bool cancelled = false;
  hal_status_t loss =
      hal_sync_host_executor_waiting_failure(executor, &cancelled);
  hal_sync_host_executor_fail_undispatched(executor, loss, cancelled);
  hal_status_free(loss);
  hal_sync_host_executor_unref(executor);
}

HAL_API void hal_sync_host_executor_stop(hal_sync_host_executor_t* executor) {
  if (!executor)
    return;
  hal_sync_mutex_lock(&executor->mutex);
  executor->stopping = true;
  pthread_cond_signal(&executor->cond);
  hal_sync_mutex_unlock(&executor->mutex);
}

HAL_API void hal_sync_host_executor_shutdown(
    hal_sync_host_executor_t* executor) {
  if (!executor)
    return;
  // Out of the loss domain first: a loss that took it already holds a
  // reference and finds nothing left to fail once the thread is joined
  // (the thread exits only when no call is live).
  if (executor->domain)
    hal_sync_loss_domain_remove_executor(executor->domain,
                                         &executor->domain_link);
  hal_sync_host_executor_stop(executor);
  bool cancelled = false;
  hal_status_t failure =
      hal_sync_host_executor_waiting_failure(executor, &cancelled);
  hal_sync_host_executor_fail_undispatched(executor, failure, cancelled);
  hal_status_free(failure);
  pthread_join(executor->thread, NULL);
  hal_sync_host_executor_unref(executor);
}
