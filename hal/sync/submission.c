// Copyright 2026 The HAL Authors.
//
// One submission's life: submit (wait resolution), parking, failure,
// issue, retirement. The threads that drive it are in queue.c.

#include "queue_impl.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hal/trace.h"

//===----------------------------------------------------------------------===//
// Lifetime
//===----------------------------------------------------------------------===//

void hal_sync_submission_retain(hal_sync_submission_t* submission) {
  atomic_fetch_add_explicit(&submission->ref_count, 1, memory_order_relaxed);
}

// A cached block: the pool's header, then the submission and its arrays at
// their largest cached size.
typedef struct hal_sync_submission_block_t {
  hal_sync_pool_block_t header;
  hal_sync_submission_t submission;
  hal_sync_submission_wait_t waits[HAL_SYNC_SUBMISSION_CACHED_WAITS];
  hal_semaphore_t* signal_semaphores[HAL_SYNC_SUBMISSION_CACHED_SIGNALS];
  uint64_t signal_values[HAL_SYNC_SUBMISSION_CACHED_SIGNALS];
} hal_sync_submission_block_t;

hal_sync_submission_cache_t* hal_sync_submission_cache_create(void) {
  hal_sync_submission_cache_t* cache = calloc(1, sizeof(*cache));
  if (cache) {
    atomic_init(&cache->ref_count, 1);
    // Enough idle blocks for a burst of small submissions in flight; a
    // larger burst allocates and frees the excess.
    hal_sync_pool_initialize("submission", sizeof(hal_sync_submission_block_t),
                             64, NULL, NULL, &cache->pool);
  }
  return cache;
}

void hal_sync_submission_cache_release(hal_sync_submission_cache_t* cache) {
  if (!cache || atomic_fetch_sub_explicit(&cache->ref_count, 1,
                                          memory_order_acq_rel) != 1) {
    return;
  }
  hal_sync_pool_deinitialize(&cache->pool);
  free(cache);
}

void hal_sync_submission_release(hal_sync_submission_t* submission) {
  if (atomic_fetch_sub_explicit(&submission->ref_count, 1,
                                memory_order_acq_rel) != 1) {
    return;
  }
  // Timepoints and semaphores go with the last reference, not at
  // retirement: a teardown snapshot may still cancel this submission's
  // waits (a no-op once resolved, but it locks their semaphores).
  for (size_t i = 0; i < submission->wait_count; ++i) {
    hal_sync_submission_wait_t* wait = &submission->waits[i];
    if (wait->timepoint)
      hal_sync_timepoint_check(wait->timepoint, wait->timepoint_generation);
    hal_sync_timepoint_release(wait->timepoint);
    hal_semaphore_release(wait->semaphore);
  }
  for (size_t i = 0; i < submission->signal_count; ++i) {
    hal_semaphore_release(submission->signal_semaphores[i]);
  }
  hal_status_free(
      atomic_load_explicit(&submission->failure, memory_order_relaxed));
  hal_sync_submission_cache_t* cache = submission->cache;
  if (!cache) {
    free(submission);
    return;
  }
  hal_sync_submission_block_t* block =
      (hal_sync_submission_block_t*)((char*)submission -
                                     offsetof(hal_sync_submission_block_t,
                                              submission));
  hal_sync_pool_recycle(&cache->pool, &block->header);
  hal_sync_submission_cache_release(cache);
}

// Q3: the device is done with everything (or never started); only now are
// the payload's resources released. Idempotent.
static void hal_sync_submission_release_payload(
    hal_sync_submission_t* submission, bool completed) {
  hal_sync_queue_t* queue = submission->queue;
  if (submission->payload && queue->interface.release_payload) {
    queue->interface.release_payload(queue->interface.self, submission->payload,
                                     completed);
  }
  submission->payload = NULL;
}

void hal_sync_submission_complete(hal_sync_submission_t* submission,
                                  hal_status_t status) {
  if (submission->trace_id) {
    char args[HAL_TRACE_STATUS_ARGS];
    hal_trace_status_args(status, args, sizeof(args));
    hal_sync_submission_trace_phase(submission, 0, NULL);
    uint32_t track = submission->queue->trace_track;
    hal_trace_end(track, "submission", "submission", submission->trace_id,
                  args);
    hal_trace_flow_end(track, "submission", submission->trace_id);
  }
  // The payload goes before the signals: a waiter they wake may reuse what
  // it held at once (re-record a command buffer, free a buffer) and must
  // find it out of the submission's hands.
  hal_sync_submission_release_payload(submission, status == HAL_OK);
  if (status == HAL_OK) {
    // Publish the values (S5: before any waiter of them is woken, which
    // the semaphore guarantees), in list order: a waiter woken by one
    // entry finds every earlier one made (S5, device.h).
    for (size_t i = 0; i < submission->signal_count; ++i) {
      hal_sync_semaphore_advance(
          hal_sync_semaphore_cast(submission->signal_semaphores[i]),
          submission->signal_values[i]);
    }
  } else {
    hal_sync_submission_fail_signals(submission, status);
  }
  hal_sync_submission_retire(submission);
}

void hal_sync_submission_retire(hal_sync_submission_t* submission) {
  hal_sync_queue_t* queue = submission->queue;
  hal_sync_submission_release_payload(submission, false);
  for (size_t i = 0; i < submission->wait_count; ++i) {
    hal_sync_submission_wait_t* wait = &submission->waits[i];
    if (wait->event)
      hal_sync_native_event_check(wait->event, wait->event_generation);
    hal_sync_native_event_release(wait->event);
    wait->event = NULL;
  }
  if (submission->completion_event) {
    hal_sync_native_event_check(submission->completion_event,
                                submission->completion_event_generation);
  }
  hal_sync_native_event_release(submission->completion_event);
  submission->completion_event = NULL;
  hal_sync_mutex_lock(&queue->mutex);
  assert(queue->live_count > 0);
  --queue->live_count;
  // destroy waits for live_count to fall to the number of orphans.
  if (queue->live_count == 0 || queue->is_shutting_down) {
    pthread_cond_broadcast(&queue->idle_cond);
  }
  hal_sync_mutex_unlock(&queue->mutex);
  hal_sync_submission_release(submission);
}

//===----------------------------------------------------------------------===//
// Failure
//===----------------------------------------------------------------------===//

// Cancels every parked wait still pending. Each cancel that wins runs the
// wait's callback (CANCELLED), which counts the wait down.
static void hal_sync_submission_cancel_waits(
    hal_sync_submission_t* submission) {
  for (size_t i = 0; i < submission->wait_count; ++i) {
    hal_sync_submission_wait_t* wait = &submission->waits[i];
    if (!wait->timepoint)
      continue;
    hal_sync_timepoint_check(wait->timepoint, wait->timepoint_generation);
    hal_sync_timepoint_cancel(wait->timepoint, NULL);
  }
}

void hal_sync_submission_fail(hal_sync_submission_t* submission,
                              hal_status_t status) {
  hal_status_t expected = HAL_OK;
  if (!atomic_compare_exchange_strong_explicit(&submission->failure, &expected,
                                               status, memory_order_acq_rel,
                                               memory_order_acquire)) {
    hal_status_free(status);  // a failure is already recorded
  }
  unsigned previous = atomic_fetch_or_explicit(&submission->cancel_flags,
                                               HAL_SYNC_SUBMISSION_FAILED,
                                               memory_order_acq_rel);
  // Only the thread completing REGISTERED|FAILED cancels; with REGISTERED
  // seen (acquire), the wait array is fully written.
  if ((previous & HAL_SYNC_SUBMISSION_REGISTERED) &&
      !(previous & HAL_SYNC_SUBMISSION_FAILED)) {
    hal_sync_submission_cancel_waits(submission);
  }
}

void hal_sync_submission_fail_signals(hal_sync_submission_t* submission,
                                      hal_status_t status) {
  // In list order, as the signals of a success are made.
  for (size_t i = 0; i < submission->signal_count; ++i) {
    hal_semaphore_fail(submission->signal_semaphores[i],
                       hal_status_clone(status));
  }
}

//===----------------------------------------------------------------------===//
// Parking
//===----------------------------------------------------------------------===//

static void hal_sync_submission_count_down(hal_sync_submission_t* submission) {
  // acq_rel: the thread that reaches zero sees every resolution before it.
  if (atomic_fetch_sub_explicit(&submission->pending_count, 1,
                                memory_order_acq_rel) == 1) {
    hal_sync_queue_enqueue_ready(submission->queue, submission);
  }
}

// A parked wait resolved (T1: exactly once): reached, failed, or cancelled.
// Runs on the resolving thread with no lock held (T2): it only records and
// hands off, never issues work (Q1).
static void hal_sync_submission_wait_resolved(void* user_data, uint64_t value,
                                              hal_status_t status) {
  hal_sync_submission_wait_t* wait = (hal_sync_submission_wait_t*)user_data;
  hal_sync_submission_t* submission = wait->submission;
  if (status != HAL_OK) {
    hal_sync_submission_fail(
        submission,
        hal_status_annotatef(hal_status_clone(status),
                             "waiting for semaphore %p to reach %" PRIu64,
                             (void*)wait->semaphore, value));
  }
  hal_sync_submission_count_down(submission);
}

//===----------------------------------------------------------------------===//
// Submit
//===----------------------------------------------------------------------===//

static hal_status_t hal_sync_queue_validate_list(hal_semaphore_list_t list,
                                                 const char* what,
                                                 bool reject_duplicates) {
  HAL_RETURN_IF_ERROR(hal_semaphore_list_validate(list, what));
  for (size_t i = 0; i < list.count && reject_duplicates; ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (list.semaphores[j] == list.semaphores[i]) {
        return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                               "%s list names semaphore %p twice (entries "
                               "%zu and %zu)",
                               what, (void*)list.semaphores[i], j, i);
      }
    }
  }
  return HAL_OK;
}

// Allocates the submission with its arrays in one block and retains every
// semaphore.
static hal_status_t hal_sync_submission_allocate(
    hal_sync_queue_t* queue, hal_semaphore_list_t waits,
    hal_semaphore_list_t signals, void* payload,
    hal_sync_submission_t** out_submission) {
  hal_sync_submission_t* submission = NULL;
  hal_sync_submission_cache_t* cache = queue->submission_cache;
  if (waits.count > UINT32_MAX || signals.count > UINT32_MAX) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "a submission of %zu waits and %zu signals: at "
                           "most %u of each",
                           waits.count, signals.count, UINT32_MAX);
  }
  if (waits.count <= HAL_SYNC_SUBMISSION_CACHED_WAITS &&
      signals.count <= HAL_SYNC_SUBMISSION_CACHED_SIGNALS) {
    hal_sync_pool_block_t* header = NULL;
    HAL_RETURN_IF_ERROR(hal_sync_pool_acquire(&cache->pool, &header));
    hal_sync_submission_block_t* block = (hal_sync_submission_block_t*)header;
    // A recycled block holds what its last submission left.
    memset(&block->submission, 0,
           sizeof(*block) - offsetof(hal_sync_submission_block_t, submission));
    submission = &block->submission;
    submission->cache = cache;
    atomic_fetch_add_explicit(&cache->ref_count, 1, memory_order_relaxed);
  } else {
    size_t size = sizeof(hal_sync_submission_t) +
                  waits.count * sizeof(hal_sync_submission_wait_t) +
                  signals.count * (sizeof(hal_semaphore_t*) + sizeof(uint64_t));
    submission = calloc(1, size);
    if (!submission) {
      return hal_make_status(HAL_STATUS_RESOURCE_EXHAUSTED,
                             "out of memory allocating a %zu-byte submission",
                             size);
    }
  }
  submission->queue = queue;
  atomic_init(&submission->ref_count, 1);
  atomic_init(&submission->pending_count, 1);  // submit's guard
  atomic_init(&submission->cancel_flags, 0);
  atomic_init(&submission->failure, HAL_OK);
  submission->payload = payload;
  submission->wait_count = (uint32_t)waits.count;
  submission->waits = (hal_sync_submission_wait_t*)(submission + 1);
  submission->signal_count = (uint32_t)signals.count;
  submission->signal_semaphores =
      (hal_semaphore_t**)(submission->waits + waits.count);
  submission->signal_values =
      (uint64_t*)(submission->signal_semaphores + signals.count);
  for (size_t i = 0; i < waits.count; ++i) {
    hal_sync_submission_wait_t* wait = &submission->waits[i];
    wait->submission = submission;
    wait->semaphore = waits.semaphores[i];
    wait->value = waits.payload_values[i];
    hal_semaphore_retain(wait->semaphore);
  }
  for (size_t i = 0; i < signals.count; ++i) {
    submission->signal_semaphores[i] = signals.semaphores[i];
    submission->signal_values[i] = signals.payload_values[i];
    hal_semaphore_retain(signals.semaphores[i]);
  }
  *out_submission = submission;
  return HAL_OK;
}

// Resolves wait |wait| under its semaphore's lock (T3, T4). Returns false
// when the submission failed and later waits need not be examined.
static bool hal_sync_submission_resolve_wait(hal_sync_submission_t* submission,
                                             hal_sync_submission_wait_t* wait) {
  hal_sync_queue_t* queue = submission->queue;
  hal_timepoint_t* timepoint = NULL;
  hal_status_t status = hal_sync_timepoint_acquire_callback(
      hal_sync_submission_wait_resolved, wait, wait->value, &timepoint);
  if (status != HAL_OK) {
    hal_sync_submission_fail(submission, status);
    return false;
  }
  timepoint->order_key = queue;
  // One reference for the heap (if registered), one kept to cancel with.
  hal_sync_timepoint_retain(timepoint);
  // Counted before registering: the callback may run at once on another
  // thread.
  atomic_fetch_add_explicit(&submission->pending_count, 1,
                            memory_order_relaxed);
  hal_sync_wait_resolution_t resolution;
  status = hal_sync_semaphore_resolve_wait(
      hal_sync_semaphore_cast(wait->semaphore), wait->value, queue->event_pool,
      timepoint, &resolution, &wait->event);
  if (status == HAL_OK && resolution == HAL_SYNC_WAIT_RESOLUTION_PARKED) {
    wait->timepoint_generation = hal_sync_timepoint_generation(timepoint);
    wait->timepoint = timepoint;
    return true;
  }
  if (wait->event)
    wait->event_generation = hal_sync_native_event_generation(wait->event);
  // Not registered: drop both references and the count (the guard keeps
  // it above zero).
  atomic_fetch_sub_explicit(&submission->pending_count, 1,
                            memory_order_relaxed);
  hal_sync_timepoint_release(timepoint);
  hal_sync_timepoint_release(timepoint);
  if (status != HAL_OK) {
    hal_sync_submission_fail(submission, status);
    return false;
  }
  if (resolution == HAL_SYNC_WAIT_RESOLUTION_FAILED) {
    hal_sync_submission_fail(
        submission,
        hal_status_annotatef(hal_sync_semaphore_clone_failure(
                                 hal_sync_semaphore_cast(wait->semaphore)),
                             "waiting for semaphore %p to reach %" PRIu64,
                             (void*)wait->semaphore, wait->value));
    return false;
  }
  return true;  // REACHED (dropped) or EVENT (kept in wait->event)
}

HAL_API hal_status_t hal_sync_queue_submit(hal_sync_queue_t* queue,
                                           hal_semaphore_list_t waits,
                                           hal_semaphore_list_t signals,
                                           void* payload) {
  if (!queue) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT, "queue is NULL");
  }
  HAL_RETURN_IF_ERROR(hal_sync_queue_validate_list(waits, "wait", false));
  HAL_RETURN_IF_ERROR(hal_sync_queue_validate_list(signals, "signal", true));
  hal_sync_submission_t* submission = NULL;
  HAL_RETURN_IF_ERROR(hal_sync_submission_allocate(queue, waits, signals,
                                                   payload, &submission));

  // Accepted from here on: it is live and parked until its waits resolve.
  hal_sync_mutex_lock(&queue->mutex);
  if (queue->is_shutting_down || queue->loss) {
    // Decided under the lock a loss takes the parked list with: a
    // submission is either in that list or refused here (K14).
    hal_status_t status =
        queue->loss
            ? hal_status_annotatef(hal_status_clone(queue->loss),
                                   "queue '%s' is on a lost device",
                                   queue->name)
            : hal_make_status(HAL_STATUS_FAILED_PRECONDITION,
                              "queue '%s' is being destroyed", queue->name);
    hal_sync_mutex_unlock(&queue->mutex);
    submission->payload = NULL;  // still the caller's
    hal_sync_submission_release(submission);
    return status;
  }
  ++queue->live_count;
  submission->is_parked = true;
  submission->parked_next = queue->parked_head;
  if (queue->parked_head)
    queue->parked_head->parked_prev = submission;
  queue->parked_head = submission;
  ++queue->parked_count;
  if (hal_trace_enabled()) {
    // Under the lock: a loss may take and fail it as soon as it is listed.
    submission->trace_id = hal_trace_next_id();
    hal_trace_set_last_submission(submission->trace_id);
    char args[80];
    snprintf(args, sizeof(args),
             "\"waits\": %" PRIu32 ", \"signals\": %" PRIu32
             ", \"device_work\": %s",
             submission->wait_count, submission->signal_count,
             submission->payload ? "true" : "false");
    hal_trace_begin(queue->trace_track, "submission", "submission",
                    submission->trace_id, args);
    hal_sync_submission_trace_phase(submission, 1, NULL);
    hal_sync_queue_trace_parked_locked(queue);
  }
  hal_sync_mutex_unlock(&queue->mutex);

  for (size_t i = 0; i < submission->wait_count; ++i) {
    if (!hal_sync_submission_resolve_wait(submission, &submission->waits[i])) {
      break;
    }
  }
  // Registration is complete: from now on a failure may cancel the parked
  // waits. If one was recorded already, cancelling falls to this thread.
  unsigned previous = atomic_fetch_or_explicit(&submission->cancel_flags,
                                               HAL_SYNC_SUBMISSION_REGISTERED,
                                               memory_order_acq_rel);
  if (previous & HAL_SYNC_SUBMISSION_FAILED) {
    hal_sync_submission_cancel_waits(submission);
  }
  // Drop the guard; the submission may be issued and retired at once, so it
  // is not touched after this. If it was the last, every wait is resolved:
  // this thread hands it on (and may issue it itself).
  if (atomic_fetch_sub_explicit(&submission->pending_count, 1,
                                memory_order_acq_rel) == 1) {
    hal_sync_queue_ready_at_submit(queue, submission);
  }
  return HAL_OK;
}

//===----------------------------------------------------------------------===//
// Device waits
//===----------------------------------------------------------------------===//

// A wait resolved to a device event (T4) orders the work on the device, but
// the event says nothing about whether the signaler succeeded: only the
// semaphore does (K10, K13). These two checks make a device wait fail the
// submission exactly as a parked one would.

// ISSUING thread, before issue (and the queue's destruction, for parked
// work: queue.c): a semaphore waited on that has failed
// already means the work must never run (S2), whether the wait took a
// device event or was resolved on the host before the failure (a value
// reached, then the semaphore failed while other waits kept the
// submission parked: every current wait returns the failure).
hal_status_t hal_sync_submission_waits_failed(
    hal_sync_submission_t* submission) {
  for (size_t i = 0; i < submission->wait_count; ++i) {
    const hal_sync_submission_wait_t* wait = &submission->waits[i];
    HAL_RETURN_IF_ERROR(
        hal_sync_semaphore_wait_failure(wait->semaphore, wait->value));
  }
  return HAL_OK;
}

hal_status_t hal_sync_submission_await_device_waits(
    hal_sync_submission_t* submission) {
  for (size_t i = 0; i < submission->wait_count; ++i) {
    hal_sync_submission_wait_t* wait = &submission->waits[i];
    if (!wait->event)
      continue;
    // The signaler was issued before this submission, so its queue's
    // completion thread resolves the semaphore (reached or failed) without
    // waiting on anything issued later: this cannot deadlock, and it is
    // usually reached already (a lock-free check). This thread may hold
    // this queue's completion turn, so it completes no other work than
    // the signaler and what its queue issued before it: later work of
    // that queue that publishes the value too may wait for this queue's
    // later work, which only this turn completes.
    HAL_RETURN_IF_ERROR(hal_sync_semaphore_wait_signaler(
        wait->semaphore, wait->value, wait->event));
  }
  return HAL_OK;
}

hal_status_t hal_sync_queue_await_issuing_waits(hal_sync_queue_t* queue) {
  assert(queue->issuing);
  return hal_sync_submission_await_device_waits(queue->issuing);
}

//===----------------------------------------------------------------------===//
// Issue (the ISSUING thread: the worker, or a submitter)
//===----------------------------------------------------------------------===//

// Ends the issuing turn after a path that handed the submission on without
// the queue's lock (completed it: never issued, or failed).
static void hal_sync_queue_end_issue(hal_sync_queue_t* queue) {
  hal_sync_mutex_lock(&queue->mutex);
  hal_sync_queue_end_issue_locked(queue);
  hal_sync_mutex_unlock(&queue->mutex);
}

void hal_sync_submission_issue_or_fail(hal_sync_submission_t* submission) {
  hal_status_t failure =
      atomic_load_explicit(&submission->failure, memory_order_acquire);
  if (!failure) {
    hal_sync_submission_issue(submission);
    return;
  }
  // S2: never issued; the signals fail naming the cause.
  hal_sync_queue_t* queue = submission->queue;
  hal_status_t status =
      hal_status_annotatef(hal_status_clone(failure),
                           "submission on queue '%s' did not run", queue->name);
  hal_sync_submission_complete(submission, status);
  hal_status_free(status);
  hal_sync_queue_end_issue(queue);
}

void hal_sync_submission_issue(hal_sync_submission_t* submission) {
  hal_sync_queue_t* queue = submission->queue;
  const hal_sync_queue_interface_t* interface = &queue->interface;
  hal_status_t status = hal_sync_submission_waits_failed(submission);
  if (status != HAL_OK) {
    hal_status_t failure = hal_status_annotatef(
        status, "submission on queue '%s' did not run", queue->name);
    hal_sync_submission_complete(submission, failure);
    hal_status_free(failure);
    hal_sync_queue_end_issue(queue);
    return;
  }

  // The event comes first: failing to get one must leave nothing issued.
  status = hal_sync_event_pool_acquire(queue->event_pool,
                                       &submission->completion_event);
  if (status == HAL_OK) {
    submission->completion_event_generation =
        hal_sync_native_event_generation(submission->completion_event);
  }
  for (size_t i = 0; status == HAL_OK && i < submission->wait_count; ++i) {
    hal_sync_submission_wait_t* wait = &submission->waits[i];
    if (!wait->event)
      continue;
    hal_sync_native_event_check(wait->event, wait->event_generation);
    status = interface->wait_event(interface->self, wait->event->handle);
  }
  if (status == HAL_OK && submission->payload) {
    // Only while tracing (trace_id is 0 otherwise): two thread-local
    // stores per issue that nothing would read.
    if (submission->trace_id)
      hal_trace_set_issuing_submission(submission->trace_id);
    queue->issuing = submission;
    status = interface->issue(interface->self, submission->payload);
    queue->issuing = NULL;
    if (submission->trace_id)
      hal_trace_set_issuing_submission(0);
  }
  if (status != HAL_OK) {
    hal_status_t failure = hal_status_annotatef(
        status, "submission on queue '%s' was not issued", queue->name);
    // Part of the payload may be enqueued already (Q3): wait for the device
    // before completing releases it.
    if (submission->payload && interface->quiesce)
      interface->quiesce(interface->self);
    hal_sync_submission_complete(submission, failure);
    hal_status_free(failure);
    hal_sync_queue_end_issue(queue);
    return;
  }

  hal_sync_native_event_check(submission->completion_event,
                              submission->completion_event_generation);
  status = interface->record_event(interface->self,
                                   submission->completion_event->handle);
  if (status != HAL_OK) {
    hal_status_t failure = hal_status_annotatef(
        status,
        "submission on queue '%s' issued but its completion event "
        "could not be recorded",
        queue->name);
    if (submission->payload && interface->orphan_payload)
      interface->orphan_payload(interface->self, submission->payload);
    hal_sync_submission_fail_signals(submission, failure);
    if (submission->trace_id) {
      char args[HAL_TRACE_STATUS_ARGS];
      hal_trace_status_args(failure, args, sizeof(args));
      hal_sync_submission_trace_phase(submission, 0, NULL);
      hal_trace_end(queue->trace_track, "submission", "submission",
                    submission->trace_id, args);
      hal_trace_flow_end(queue->trace_track, "submission",
                         submission->trace_id);
      submission->trace_id = 0;  // its retirement at destroy adds nothing
    }
    hal_status_free(failure);
    // The device may still use the payload: keep it until destroy.
    hal_sync_mutex_lock(&queue->mutex);
    hal_sync_queue_end_issue_locked(queue);
    hal_sync_submission_fifo_push(&queue->orphaned, submission);
    // destroy waits for live_count to equal the orphans: one more orphan may
    // be what it waits for (a missed wake-up here hung teardown).
    if (queue->is_shutting_down)
      pthread_cond_broadcast(&queue->idle_cond);
    hal_sync_mutex_unlock(&queue->mutex);
    return;
  }
  atomic_fetch_add_explicit(&submission->completion_event->record_count, 1,
                            memory_order_relaxed);
  if (submission->trace_id) {
    hal_sync_submission_trace_phase(submission, 3, NULL);
    char args[48];
    snprintf(args, sizeof(args), "\"in use\": %zu",
             hal_sync_event_pool_live_count(queue->event_pool));
    hal_trace_counter(queue->trace_track, "pooled events", args);
    snprintf(args, sizeof(args), "\"pending\": %" PRId64,
             hal_sync_timepoints_pending());
    hal_trace_counter(queue->trace_track, "timepoints pending", args);
  }
  // Recorded (T4): later submissions on queues of this pool may wait for it
  // on the device instead of parking (S6 holds through the event). A
  // timepoint already registered for a value it signals is someone waiting
  // without helping: the completion thread must come for it.
  bool is_awaited = false;
  for (size_t i = 0; i < submission->signal_count; ++i) {
    is_awaited |= hal_sync_semaphore_attach_event(
        hal_sync_semaphore_cast(submission->signal_semaphores[i]),
        submission->signal_values[i], submission->completion_event, queue);
  }
  hal_sync_mutex_lock(&queue->mutex);
  // One critical section hands it on and ends the turn: a second one here
  // would meet the completion thread taking it. Helped and busy modes are
  // read here, under the lock the completion thread changes them under, so
  // the push is rung or the completion thread's sleep has a deadline
  // (queue_impl.h). A
  // registration that came before this push found no work to wake for: its
  // request (is_completion_requested) makes this push ring.
  hal_sync_queue_end_issue_locked(queue);
  hal_sync_submission_fifo_push(&queue->in_flight, submission);
  bool ring = is_awaited || queue->is_shutting_down ||
              queue->is_completion_requested ||
              !(atomic_load_explicit(&queue->is_helped, memory_order_relaxed) ||
                atomic_load_explicit(&queue->is_busy, memory_order_relaxed));
  hal_sync_mutex_unlock(&queue->mutex);
  // After the unlock, so that the completion thread does not wake only to
  // block on the mutex we hold. The queue is still alive: the issuing
  // thread is its worker (joined before the queue is freed) or a submitter
  // (destroy must not race submit).
  if (ring)
    hal_sync_doorbell_ring(&queue->completion_bell);
}
