// Copyright 2026 The HAL Authors.
//
// The timeline semaphore: value, failure, timepoint registration and
// resolution. The public hal_semaphore_* wrappers live in
// semaphore_api.c; list waits in wait.c.

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "semaphore_impl.h"
#include "sync_queue.h"

static void hal_sync_semaphore_destroy(hal_semaphore_t* base_semaphore);
static hal_status_t hal_sync_semaphore_query(hal_semaphore_t* base_semaphore,
                                             uint64_t* out_value);
static hal_status_t hal_sync_semaphore_signal(hal_semaphore_t* base_semaphore,
                                              uint64_t new_value);
static void hal_sync_semaphore_fail(hal_semaphore_t* base_semaphore,
                                    hal_status_t status);
static hal_status_t hal_sync_semaphore_wait(hal_semaphore_t* base_semaphore,
                                            uint64_t value,
                                            hal_timeout_t timeout);

const hal_semaphore_vtable_t hal_sync_semaphore_vtable = {
    .destroy = hal_sync_semaphore_destroy,
    .query = hal_sync_semaphore_query,
    .signal = hal_sync_semaphore_signal,
    .fail = hal_sync_semaphore_fail,
    .wait = hal_sync_semaphore_wait,
};

HAL_API hal_status_t hal_sync_semaphore_create(
    hal_sync_loss_domain_t* domain, hal_allocator_t allocator,
    uint64_t initial_value, hal_semaphore_t** out_semaphore) {
  if (!out_semaphore) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "out_semaphore is NULL");
  }
  *out_semaphore = NULL;
  if (initial_value > HAL_SEMAPHORE_MAX_VALUE) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "initial value %" PRIu64
                           " is in the reserved failure range (max %" PRIu64
                           ")",
                           initial_value, HAL_SEMAPHORE_MAX_VALUE);
  }
  hal_sync_semaphore_t* semaphore = NULL;
  HAL_RETURN_IF_ERROR(
      hal_allocator_malloc(allocator, sizeof(*semaphore), (void**)&semaphore));
  hal_resource_initialize_kind(HAL_RESOURCE_KIND_SEMAPHORE,
                               &hal_sync_semaphore_vtable, NULL,
                               &semaphore->base.resource);
  semaphore->allocator = allocator;
  hal_sync_mutex_initialize(&semaphore->mutex);
  atomic_init(&semaphore->value, initial_value);
  semaphore->failure = HAL_OK;
  semaphore->releasing_count = 0;
  semaphore->late_head = semaphore->late_tail = NULL;
  semaphore->domain = NULL;
  // Of a device lost already: born failed with its loss (Q5).
  if (domain)
    hal_sync_loss_domain_add_semaphore(domain, semaphore);
  *out_semaphore = &semaphore->base;
  return HAL_OK;
}

HAL_API hal_status_t
hal_semaphore_create_host(hal_allocator_t allocator, uint64_t initial_value,
                          hal_semaphore_t** out_semaphore) {
  return hal_sync_semaphore_create(NULL, allocator, initial_value,
                                   out_semaphore);
}

//===----------------------------------------------------------------------===//
// Resolution
//===----------------------------------------------------------------------===//

// A private list of popped timepoints, notified after the lock is dropped,
// in the order they were registered (below).
typedef struct hal_sync_resolved_batch_t {
  hal_timepoint_t* head;
  hal_timepoint_t* tail;
  // Whether the list is out of registration order (a later-registered
  // timepoint of a smaller value was popped before an earlier one).
  bool is_unordered;
  // Whether it holds a wait of ordered work (a parked queue submission's
  // or a host call's: an order key).
  bool releases_ordered_work;
} hal_sync_resolved_batch_t;

static void hal_sync_resolved_batch_append(hal_sync_resolved_batch_t* batch,
                                           hal_timepoint_t* timepoint) {
  timepoint->next_resolved = NULL;
  batch->releases_ordered_work |= timepoint->order_key != NULL;
  if (batch->tail) {
    batch->is_unordered |= timepoint->heap_order < batch->tail->heap_order;
    batch->tail->next_resolved = timepoint;
  } else {
    batch->head = timepoint;
  }
  batch->tail = timepoint;
}

// Sorts the batch by registration (heap_order): a bottom-up merge sort of
// the linked list, O(k log k) for k popped and no allocation, since a
// signal must not fail. Merges are stable; orders are unique anyway.
static void hal_sync_resolved_batch_sort(hal_sync_resolved_batch_t* batch) {
  hal_timepoint_t* list = batch->head;
  for (size_t run = 1;; run *= 2) {
    hal_timepoint_t* head = NULL;
    hal_timepoint_t** tail = &head;
    hal_timepoint_t* last = NULL;
    size_t merges = 0;
    while (list) {
      ++merges;
      hal_timepoint_t* left = list;
      size_t left_count = 0;
      while (list && left_count < run) {
        list = list->next_resolved;
        ++left_count;
      }
      hal_timepoint_t* right = list;
      size_t right_count = 0;
      while (list && right_count < run) {
        list = list->next_resolved;
        ++right_count;
      }
      while (left_count || right_count) {
        hal_timepoint_t* next;
        if (!right_count ||
            (left_count && left->heap_order < right->heap_order)) {
          next = left;
          left = left->next_resolved;
          --left_count;
        } else {
          next = right;
          right = right->next_resolved;
          --right_count;
        }
        *tail = next;
        tail = &next->next_resolved;
        last = next;
      }
    }
    *tail = NULL;
    list = head;
    if (merges <= 1) {
      batch->head = head;
      batch->tail = last;
      batch->is_unordered = false;
      return;
    }
  }
}

// Moves the late registrations (Queue order, below) to |batch|.
static void hal_sync_semaphore_pop_late_locked(
    hal_sync_semaphore_t* semaphore, bool failed,
    hal_sync_resolved_batch_t* batch) {
  hal_timepoint_t* timepoint = semaphore->late_head;
  semaphore->late_head = semaphore->late_tail = NULL;
  while (timepoint) {
    hal_timepoint_t* next = timepoint->next_resolved;
    timepoint->is_late = false;
    timepoint->state = failed ? HAL_SYNC_TIMEPOINT_STATE_FAILED
                              : HAL_SYNC_TIMEPOINT_STATE_REACHED;
    hal_sync_resolved_batch_append(batch, timepoint);
    timepoint = next;
  }
}

// Pops every timepoint with value <= |value| (all of them when |failed|)
// into |batch| in registration order, and drops device timepoints that are
// reached. The heap's reference of each popped timepoint passes to the
// batch. Late registrations stay unless |failed|.
//
// Registration order, not value order: submissions of one queue released
// by one signal then become ready, and issue, in the order they were
// submitted, whichever values they waited for. In value order a later
// submission that waited for a smaller value issued first, and a host wait
// for a value an earlier submission signals could return before that
// submission ran (CTS Submit_ReleasedTogetherIssueInSubmissionOrder).
static void hal_sync_semaphore_pop_due_locked(
    hal_sync_semaphore_t* semaphore, uint64_t value, bool failed,
    hal_sync_resolved_batch_t* batch) {
  hal_sync_mutex_assert_held(&semaphore->mutex);
  hal_timepoint_t* timepoint;
  while ((timepoint = hal_sync_timepoint_heap_peek(&semaphore->timepoints)) &&
         (failed || timepoint->value <= value)) {
    hal_sync_timepoint_heap_remove(&semaphore->timepoints, timepoint);
    // The state changes under the lock: a concurrent cancel sees exactly
    // one of PENDING (and removes) or resolved (and does nothing) (T5).
    timepoint->state = failed ? HAL_SYNC_TIMEPOINT_STATE_FAILED
                              : HAL_SYNC_TIMEPOINT_STATE_REACHED;
    hal_sync_resolved_batch_append(batch, timepoint);
  }
  if (failed)
    hal_sync_semaphore_pop_late_locked(semaphore, failed, batch);
  if (batch->is_unordered)
    hal_sync_resolved_batch_sort(batch);
  size_t drop_count = 0;
  while (drop_count < semaphore->device_timepoint_count &&
         (failed || semaphore->device_timepoints[drop_count].value <= value)) {
    hal_sync_device_timepoint_t* device_timepoint =
        &semaphore->device_timepoints[drop_count];
    hal_sync_native_event_check(device_timepoint->event,
                                device_timepoint->event_generation);
    // Takes only the event pool's leaf lock.
    hal_sync_native_event_release(device_timepoint->event);
    ++drop_count;
  }
  if (drop_count) {
    semaphore->device_timepoint_count -= drop_count;
    memmove(semaphore->device_timepoints,
            semaphore->device_timepoints + drop_count,
            semaphore->device_timepoint_count *
                sizeof(*semaphore->device_timepoints));
  }
}

// Notifies a batch outside every lock (T2). Does not touch the semaphore:
// a callback may have released its last reference (K12). A signal's or a
// failure's callbacks may wait past the nesting bound (timepoint.c); a
// destroy's run before it returns, as its caller may free their user data
// right after.
static void hal_sync_resolved_batch_notify(hal_sync_resolved_batch_t* batch,
                                           hal_status_t status,
                                           bool may_defer) {
  hal_timepoint_t* timepoint = batch->head;
  while (timepoint) {
    // Read the link first: notifying drops our reference.
    hal_timepoint_t* next = timepoint->next_resolved;
    hal_sync_timepoint_notify_and_release(timepoint, status, may_defer);
    timepoint = next;
  }
}

// Appends |timepoint| to the late registrations, pending (Queue order,
// below).
static void hal_sync_semaphore_append_late_locked(
    hal_sync_semaphore_t* semaphore, hal_timepoint_t* timepoint) {
  timepoint->is_late = true;
  timepoint->state = HAL_SYNC_TIMEPOINT_STATE_PENDING;
  timepoint->next_resolved = NULL;
  if (semaphore->late_tail) {
    semaphore->late_tail->next_resolved = timepoint;
  } else {
    semaphore->late_head = timepoint;
  }
  semaphore->late_tail = timepoint;
}

// Moves the queue submissions' waits of |batch| (popped, not notified) to
// the late registrations, pending again, in the batch's order; the rest
// stays in |batch|.
static void hal_sync_semaphore_defer_submissions_locked(
    hal_sync_semaphore_t* semaphore, hal_sync_resolved_batch_t* batch) {
  hal_timepoint_t* timepoint = batch->head;
  *batch = (hal_sync_resolved_batch_t){NULL, NULL, false, false};
  while (timepoint) {
    hal_timepoint_t* next = timepoint->next_resolved;
    if (timepoint->order_key) {
      hal_sync_semaphore_append_late_locked(semaphore, timepoint);
    } else {
      hal_sync_resolved_batch_append(batch, timepoint);
    }
    timepoint = next;
  }
}

// Queue order. A signal that releases parked submissions of a queue
// publishes the value, then runs their callbacks, which hand them to the
// queue, after its unlock. A later submission of the same queue waiting on
// the same semaphore that registered in between would find the value
// reached (or a device timepoint covering it) and could be issued before
// the ones the signal is still handing over. So while such a batch is
// being notified (|releasing_count|), a queue's registration parks even
// if the value is reached and takes no device wait. Such a late
// registration waits in a list of its own, not in the heap, so that a
// later signal, which may run while the first is still notifying, does not
// pop it ahead of the first's batch. That later signal (on another thread,
// or nested in a callback of the batch) defers the submissions' waits it
// pops itself to the same list, for the same reason: they were parked
// behind the first batch's. It returns without waiting for that batch (a
// callback of it may wait for what its thread does next), so what it
// released may become ready after it returned. The last releasing signal
// to finish its batch pops the list and notifies it, in registration
// order, which may park more behind it. A failure pops the list with
// everything else. So a callback must not block on work that its own
// semaphore's signals release: that work may wait for the callback's
// batch.
static void hal_sync_semaphore_release_late(hal_sync_semaphore_t* semaphore) {
  bool is_releasing = true;
  while (is_releasing) {
    hal_sync_resolved_batch_t batch = {NULL, NULL, false, false};
    hal_sync_mutex_lock(&semaphore->mutex);
    assert(semaphore->releasing_count > 0);
    if (--semaphore->releasing_count == 0) {
      hal_sync_semaphore_pop_late_locked(semaphore, false, &batch);
      if (batch.is_unordered)
        hal_sync_resolved_batch_sort(&batch);
    }
    is_releasing = batch.releases_ordered_work;
    if (is_releasing)
      ++semaphore->releasing_count;
    hal_sync_mutex_unlock(&semaphore->mutex);
    hal_sync_resolved_batch_notify(&batch, HAL_OK, true);
  }
  // May destroy the semaphore: nothing above is pending on it any more.
  hal_semaphore_release(&semaphore->base);
}

// Moves the payload to |new_value| under the lock. |is_host| makes a
// non-increase an error (S1); a device signal ignores it.
static hal_status_t hal_sync_semaphore_set_value(
    hal_sync_semaphore_t* semaphore, uint64_t new_value, bool is_host) {
  hal_sync_resolved_batch_t batch = {NULL, NULL, false, false};
  hal_sync_mutex_lock(&semaphore->mutex);
  if (semaphore->failure) {
    hal_status_t status =
        is_host ? hal_status_clone(semaphore->failure) : HAL_OK;
    hal_sync_mutex_unlock(&semaphore->mutex);
    return status;
  }
  uint64_t current =
      atomic_load_explicit(&semaphore->value, memory_order_relaxed);
  if (new_value <= current) {
    hal_sync_mutex_unlock(&semaphore->mutex);
    if (!is_host)
      return HAL_OK;
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "semaphore signal to %" PRIu64
                           " is not greater than the current value %" PRIu64,
                           new_value, current);
  }
  // The value is published before any waiter is notified (S5, K5).
  atomic_store_explicit(&semaphore->value, new_value, memory_order_release);
  hal_sync_semaphore_pop_due_locked(semaphore, new_value, false, &batch);
  bool is_releasing = batch.releases_ordered_work;
  if (is_releasing && semaphore->releasing_count > 0) {
    // Another signal is still handing submissions over: these go after
    // its batch (Queue order, below).
    hal_sync_semaphore_defer_submissions_locked(semaphore, &batch);
    is_releasing = false;
  } else if (is_releasing) {
    // Queue order (below); the reference keeps the semaphore for the look
    // after the batch, which a callback may otherwise outlive (K12).
    ++semaphore->releasing_count;
    hal_semaphore_retain(&semaphore->base);
  }
  hal_sync_mutex_unlock(&semaphore->mutex);
  hal_sync_resolved_batch_notify(&batch, HAL_OK, true);
  if (is_releasing)
    hal_sync_semaphore_release_late(semaphore);
  return HAL_OK;
}

static hal_status_t hal_sync_semaphore_signal(hal_semaphore_t* base_semaphore,
                                              uint64_t new_value) {
  hal_sync_semaphore_t* semaphore = hal_sync_semaphore_cast(base_semaphore);
  return hal_sync_semaphore_set_value(semaphore, new_value, true);
}

void hal_sync_semaphore_advance(hal_sync_semaphore_t* semaphore,
                                uint64_t value) {
  hal_status_ignore(hal_sync_semaphore_set_value(semaphore, value, false));
}

static void hal_sync_semaphore_fail(hal_semaphore_t* base_semaphore,
                                    hal_status_t status) {
  hal_sync_semaphore_t* semaphore = hal_sync_semaphore_cast(base_semaphore);
  if (status == HAL_OK) {
    status = hal_make_status(HAL_STATUS_UNKNOWN,
                             "semaphore failed with an OK status");
  }
  hal_sync_resolved_batch_t batch = {NULL, NULL, false, false};
  hal_sync_mutex_lock(&semaphore->mutex);
  if (semaphore->failure) {
    // The first failure wins (S2).
    hal_sync_mutex_unlock(&semaphore->mutex);
    hal_status_free(status);
    return;
  }
  semaphore->failure = status;
  atomic_store_explicit(&semaphore->value, HAL_SEMAPHORE_FAILURE_VALUE,
                        memory_order_release);
  hal_sync_semaphore_pop_due_locked(semaphore, 0, true, &batch);
  // Callbacks get a copy: one of them may destroy the semaphore, and with
  // it |failure| (K12).
  hal_status_t copy = batch.head ? hal_status_clone(status) : HAL_OK;
  hal_sync_mutex_unlock(&semaphore->mutex);
  hal_sync_resolved_batch_notify(&batch, copy, true);
  hal_status_free(copy);
}

void hal_sync_semaphore_fail_deferred(hal_sync_semaphore_t* semaphore,
                                      hal_status_t status,
                                      hal_sync_failed_list_t* list) {
  hal_sync_resolved_batch_t batch = {NULL, NULL, false, false};
  hal_sync_mutex_lock(&semaphore->mutex);
  if (!semaphore->failure) {
    semaphore->failure = hal_status_clone(status);
    atomic_store_explicit(&semaphore->value, HAL_SEMAPHORE_FAILURE_VALUE,
                          memory_order_release);
    hal_sync_semaphore_pop_due_locked(semaphore, 0, true, &batch);
  }
  hal_sync_mutex_unlock(&semaphore->mutex);
  if (!batch.head)
    return;
  // After the timepoints of the semaphores failed before: each keeps its
  // own order, and they are notified one semaphore after another.
  if (list->tail) {
    list->tail->next_resolved = batch.head;
  } else {
    list->head = batch.head;
  }
  list->tail = batch.tail;
}

void hal_sync_failed_list_notify(hal_sync_failed_list_t* list,
                                 hal_status_t status) {
  if (!list->head)
    return;
  // Callbacks get a copy of their own: one of them may end the life of
  // what |status| belongs to (K12).
  hal_status_t copy = hal_status_clone(status);
  hal_sync_resolved_batch_t batch = {list->head, list->tail, false, false};
  list->head = list->tail = NULL;
  hal_sync_resolved_batch_notify(&batch, copy, true);
  hal_status_free(copy);
}

static hal_status_t hal_sync_semaphore_query(hal_semaphore_t* base_semaphore,
                                             uint64_t* out_value) {
  hal_sync_semaphore_t* semaphore = hal_sync_semaphore_cast(base_semaphore);
  uint64_t value =
      atomic_load_explicit(&semaphore->value, memory_order_acquire);
  *out_value = value;
  if (value < HAL_SEMAPHORE_FAILURE_VALUE)
    return HAL_OK;
  return hal_sync_semaphore_clone_failure(semaphore);
}

hal_status_t hal_sync_semaphore_clone_failure(hal_sync_semaphore_t* semaphore) {
  hal_sync_mutex_lock(&semaphore->mutex);
  hal_status_t status = hal_status_clone(semaphore->failure);
  hal_sync_mutex_unlock(&semaphore->mutex);
  return status;
}

hal_status_t hal_sync_semaphore_wait_failure(hal_semaphore_t* base_semaphore,
                                             uint64_t value) {
  hal_sync_semaphore_t* semaphore = hal_sync_semaphore_cast(base_semaphore);
  if (atomic_load_explicit(&semaphore->value, memory_order_acquire) <
      HAL_SEMAPHORE_FAILURE_VALUE) {
    return HAL_OK;
  }
  return hal_status_annotatef(hal_sync_semaphore_clone_failure(semaphore),
                              "waiting for semaphore %p to reach %" PRIu64,
                              (void*)base_semaphore, value);
}

static hal_status_t hal_sync_semaphore_wait(hal_semaphore_t* base_semaphore,
                                            uint64_t value,
                                            hal_timeout_t timeout) {
  return hal_sync_semaphore_wait_list(HAL_WAIT_MODE_ALL, 1, &base_semaphore,
                                      &value, hal_timeout_as_deadline(timeout));
}

static void hal_sync_semaphore_destroy(hal_semaphore_t* base_semaphore) {
  hal_sync_semaphore_t* semaphore = hal_sync_semaphore_cast(base_semaphore);
  // First: a loss of the domain may be walking its semaphores (it skips
  // this one: the count is zero).
  hal_sync_loss_domain_remove_semaphore(semaphore);
  // Nobody else holds a reference, so no lock is contended; it is taken for
  // the _locked assertions. Pending callbacks resolve as CANCELLED (T1).
  hal_sync_resolved_batch_t batch = {NULL, NULL, false, false};
  hal_sync_mutex_lock(&semaphore->mutex);
  hal_sync_semaphore_pop_due_locked(semaphore, 0, true, &batch);
  hal_sync_mutex_unlock(&semaphore->mutex);
  for (hal_timepoint_t* timepoint = batch.head; timepoint;
       timepoint = timepoint->next_resolved) {
    // A waiter holds a reference to the semaphore it waits on.
    assert(timepoint->kind == HAL_SYNC_TIMEPOINT_KIND_CALLBACK);
    timepoint->state = HAL_SYNC_TIMEPOINT_STATE_CANCELLED;
  }
  hal_status_t cancelled =
      batch.head ? hal_make_status(HAL_STATUS_CANCELLED,
                                   "semaphore destroyed with the timepoint "
                                   "pending")
                 : HAL_OK;
  hal_sync_resolved_batch_notify(&batch, cancelled, false);
  hal_status_free(cancelled);
  hal_sync_timepoint_heap_deinitialize(&semaphore->timepoints);
  free(semaphore->device_timepoints);
  hal_status_free(semaphore->failure);
  hal_sync_mutex_deinitialize(&semaphore->mutex);
  hal_allocator_free(semaphore->allocator, semaphore);
}

//===----------------------------------------------------------------------===//
// Registration and cancellation
//===----------------------------------------------------------------------===//

static hal_sync_device_timepoint_t* hal_sync_semaphore_covering_locked(
    hal_sync_semaphore_t* semaphore, uint64_t value,
    hal_sync_event_pool_t* event_pool);

// Under the lock: REACHED, FAILED, or PENDING after pushing |timepoint| to
// the heap, or to the late registrations (Queue order, above).
// |out_queue|: a queue to call hal_sync_queue_request_completion on after
// the unlock (counted in as a helper, which keeps it alive), or NULL.
static hal_status_t hal_sync_semaphore_register_locked(
    hal_sync_semaphore_t* semaphore, hal_timepoint_t* timepoint,
    hal_sync_timepoint_state_t* out_state, hal_sync_queue_t** out_queue) {
  hal_sync_mutex_assert_held(&semaphore->mutex);
  *out_queue = NULL;
  if (semaphore->failure) {
    *out_state = HAL_SYNC_TIMEPOINT_STATE_FAILED;
    return HAL_OK;
  }
  bool is_reached =
      atomic_load_explicit(&semaphore->value, memory_order_relaxed) >=
      timepoint->value;
  if (is_reached && !(timepoint->order_key && semaphore->releasing_count)) {
    *out_state = HAL_SYNC_TIMEPOINT_STATE_REACHED;
    return HAL_OK;
  }
  if (is_reached) {
    // Reached while a signal is still handing this key's earlier work
    // over: the last such signal pops it after that (Queue order, above).
    // Numbered like a push, for the batch's order.
    timepoint->heap_order = semaphore->timepoints.pushes++;
  } else {
    HAL_RETURN_IF_ERROR(
        hal_sync_timepoint_heap_push(&semaphore->timepoints, timepoint));
  }
  timepoint->semaphore = semaphore;
  timepoint->state = HAL_SYNC_TIMEPOINT_STATE_PENDING;
  *out_state = HAL_SYNC_TIMEPOINT_STATE_PENDING;
  if (is_reached) {
    hal_sync_semaphore_append_late_locked(semaphore, timepoint);
    return HAL_OK;
  }
  // Issued work that publishes the value may be left to helpers (helped
  // mode), and this registration does not help: its queue's completion
  // thread must come for it, whatever the mode looks like from here (it may
  // change before the work's push, which reads it under the queue's lock).
  // A device timepoint attached after this unlock sees the registration
  // instead (attach_event). Listed, so its queue is alive while the lock
  // is held; counted in as a helper, it stays alive until the request.
  hal_sync_device_timepoint_t* device_timepoint =
      hal_sync_semaphore_covering_locked(semaphore, timepoint->value, NULL);
  if (device_timepoint) {
    hal_sync_queue_help_enter(device_timepoint->queue);
    *out_queue = device_timepoint->queue;
  }
  return HAL_OK;
}

hal_status_t hal_sync_semaphore_register_timepoint(
    hal_sync_semaphore_t* semaphore, hal_timepoint_t* timepoint,
    hal_sync_timepoint_state_t* out_state) {
  hal_sync_queue_t* queue = NULL;
  hal_sync_mutex_lock(&semaphore->mutex);
  hal_status_t status = hal_sync_semaphore_register_locked(semaphore, timepoint,
                                                           out_state, &queue);
  hal_sync_mutex_unlock(&semaphore->mutex);
  if (queue)
    hal_sync_queue_request_completion(queue);
  return status;
}

// Removes |timepoint| from the list of late registrations: O(n) in the
// list, which holds only what registered during one signal's notification.
static void hal_sync_semaphore_unlink_late_locked(
    hal_sync_semaphore_t* semaphore, hal_timepoint_t* timepoint) {
  hal_timepoint_t* previous = NULL;
  hal_timepoint_t* current = semaphore->late_head;
  while (current != timepoint) {
    assert(current && "late timepoint not in its semaphore's list");
    previous = current;
    current = current->next_resolved;
  }
  if (previous) {
    previous->next_resolved = timepoint->next_resolved;
  } else {
    semaphore->late_head = timepoint->next_resolved;
  }
  if (semaphore->late_tail == timepoint)
    semaphore->late_tail = previous;
  timepoint->next_resolved = NULL;
  timepoint->is_late = false;
}

hal_sync_timepoint_state_t hal_sync_timepoint_cancel(hal_timepoint_t* timepoint,
                                                     bool* out_removed) {
  bool removed = false;
  if (out_removed)
    *out_removed = false;
  hal_sync_semaphore_t* semaphore = timepoint->semaphore;
  if (!semaphore)
    return timepoint->state;  // never registered
  hal_sync_mutex_lock(&semaphore->mutex);
  hal_sync_timepoint_state_t state = timepoint->state;
  if (state == HAL_SYNC_TIMEPOINT_STATE_PENDING) {
    if (timepoint->is_late) {
      hal_sync_semaphore_unlink_late_locked(semaphore, timepoint);
    } else {
      hal_sync_timepoint_heap_remove(&semaphore->timepoints, timepoint);
    }
    timepoint->state = state = HAL_SYNC_TIMEPOINT_STATE_CANCELLED;
    removed = true;
  }
  hal_sync_mutex_unlock(&semaphore->mutex);
  if (!removed)
    return state;
  if (out_removed)
    *out_removed = true;
  // Removed here: this thread owns the heap's reference and the callback.
  if (timepoint->kind == HAL_SYNC_TIMEPOINT_KIND_CALLBACK) {
    hal_status_t cancelled =
        hal_make_status(HAL_STATUS_CANCELLED, "timepoint cancelled");
    hal_sync_timepoint_notify_and_release(timepoint, cancelled, false);
    hal_status_free(cancelled);
  } else {
    hal_sync_timepoint_release(timepoint);
  }
  return state;
}

HAL_API bool hal_timepoint_cancel(hal_timepoint_t* timepoint) {
  if (!timepoint)
    return false;
  bool removed = false;
  hal_sync_timepoint_cancel(timepoint, &removed);
  return removed;
}

static hal_status_t hal_sync_semaphore_add_callback_at(
    hal_semaphore_t* base_semaphore, uint64_t value,
    hal_timepoint_callback_fn_t callback, void* user_data,
    const void* order_key, hal_timepoint_t** out_timepoint);

HAL_API hal_status_t
hal_semaphore_add_callback(hal_semaphore_t* base_semaphore, uint64_t value,
                           hal_timepoint_callback_fn_t callback,
                           void* user_data, hal_timepoint_t** out_timepoint) {
  return hal_sync_semaphore_add_ordered_callback(
      base_semaphore, value, callback, user_data, NULL, out_timepoint);
}

hal_status_t hal_sync_semaphore_add_ordered_callback(
    hal_semaphore_t* base_semaphore, uint64_t value,
    hal_timepoint_callback_fn_t callback, void* user_data,
    const void* order_key, hal_timepoint_t** out_timepoint) {
  if (out_timepoint)
    *out_timepoint = NULL;
  if (!base_semaphore || !callback) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "semaphore or callback is NULL");
  }
  if (value > HAL_SEMAPHORE_MAX_VALUE) {
    return hal_make_status(
        HAL_STATUS_INVALID_ARGUMENT,
        "timepoint value %" PRIu64 " is in the reserved failure range", value);
  }
  if (!hal_sync_semaphore_is_sync(base_semaphore)) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "timepoint target is not a semaphore");
  }
  return hal_sync_semaphore_add_callback_at(
      base_semaphore, value, callback, user_data, order_key, out_timepoint);
}

hal_status_t hal_sync_semaphore_add_failure_watch(
    hal_semaphore_t* semaphore, hal_timepoint_callback_fn_t callback,
    void* user_data, hal_timepoint_t** out_timepoint) {
  if (out_timepoint)
    *out_timepoint = NULL;
  // A value no signal reaches: only the failure (or a cancel) resolves it.
  return hal_sync_semaphore_add_callback_at(
      semaphore, HAL_SEMAPHORE_FAILURE_VALUE, callback, user_data, NULL,
      out_timepoint);
}

// hal_sync_semaphore_add_ordered_callback once its arguments are checked;
// |value| may be HAL_SEMAPHORE_FAILURE_VALUE (a failure watch).
static hal_status_t hal_sync_semaphore_add_callback_at(
    hal_semaphore_t* base_semaphore, uint64_t value,
    hal_timepoint_callback_fn_t callback, void* user_data,
    const void* order_key, hal_timepoint_t** out_timepoint) {
  hal_sync_semaphore_t* semaphore = hal_sync_semaphore_cast(base_semaphore);
  // Acquired before the lock: the pool is not touched under it here.
  hal_timepoint_t* timepoint = NULL;
  HAL_RETURN_IF_ERROR(hal_sync_timepoint_acquire_callback(callback, user_data,
                                                          value, &timepoint));
  timepoint->order_key = order_key;
  if (out_timepoint) {
    // The caller's handle keeps the semaphore alive for cancel (T5).
    hal_sync_timepoint_retain(timepoint);
    hal_sync_timepoint_make_handle(timepoint, base_semaphore);
    *out_timepoint = timepoint;
  }
  hal_sync_timepoint_state_t state;
  hal_status_t status =
      hal_sync_semaphore_register_timepoint(semaphore, timepoint, &state);
  if (status != HAL_OK) {
    if (out_timepoint) {
      *out_timepoint = NULL;
      hal_timepoint_release(timepoint);
    }
    hal_sync_timepoint_release(timepoint);
    return status;
  }
  if (state == HAL_SYNC_TIMEPOINT_STATE_PENDING)
    return HAL_OK;
  // Already resolved: never registered; run the callback now, unlocked.
  timepoint->state = state;
  hal_status_t failure = state == HAL_SYNC_TIMEPOINT_STATE_FAILED
                             ? hal_sync_semaphore_clone_failure(semaphore)
                             : HAL_OK;
  hal_sync_timepoint_notify_and_release(timepoint, failure, false);
  hal_status_free(failure);
  return HAL_OK;
}

//===----------------------------------------------------------------------===//
// Device timepoints (queues)
//===----------------------------------------------------------------------===//

// The device timepoint with the smallest value that covers |value| and
// whose event is of |event_pool| (NULL: any pool), or NULL when the
// semaphore failed or reached |value| already. Under the lock.
static hal_sync_device_timepoint_t* hal_sync_semaphore_covering_locked(
    hal_sync_semaphore_t* semaphore, uint64_t value,
    hal_sync_event_pool_t* event_pool) {
  hal_sync_mutex_assert_held(&semaphore->mutex);
  if (semaphore->failure ||
      atomic_load_explicit(&semaphore->value, memory_order_relaxed) >= value) {
    return NULL;
  }
  // Sorted by value: the first that covers |value| is published first.
  for (size_t i = 0; i < semaphore->device_timepoint_count; ++i) {
    hal_sync_device_timepoint_t* device_timepoint =
        &semaphore->device_timepoints[i];
    if (device_timepoint->value < value)
      continue;
    hal_sync_native_event_check(device_timepoint->event,
                                device_timepoint->event_generation);
    if (event_pool && device_timepoint->event->pool != event_pool)
      continue;
    assert(atomic_load_explicit(&device_timepoint->event->record_count,
                                memory_order_relaxed) > 0 &&
           "device timepoint with an event never recorded (T4)");
    return device_timepoint;
  }
  return NULL;
}

hal_status_t hal_sync_semaphore_resolve_wait(
    hal_sync_semaphore_t* semaphore, uint64_t value,
    hal_sync_event_pool_t* event_pool, hal_timepoint_t* timepoint,
    hal_sync_wait_resolution_t* out_resolution,
    hal_sync_native_event_t** out_event) {
  *out_event = NULL;
  assert(timepoint->value == value);
  hal_sync_mutex_lock(&semaphore->mutex);
  // The smallest recorded event of our pool that covers |value| (T4).
  hal_sync_device_timepoint_t* device_timepoint =
      hal_sync_semaphore_covering_locked(semaphore, value, event_pool);
  // Not while an earlier submission of the same queue is parked here at
  // |value| or below, or a signal is handing such submissions over: those
  // become ready only when the host sees the value, and a device wait
  // would issue this one first, though whatever satisfies this wait
  // satisfies theirs. Parked too, this one is released after them (Queue
  // order, above).
  if (device_timepoint && timepoint->order_key &&
      (semaphore->releasing_count > 0 ||
       hal_sync_timepoint_heap_has_key_at_or_below(
           &semaphore->timepoints, value, timepoint->order_key))) {
    device_timepoint = NULL;
  }
  if (device_timepoint) {
    hal_sync_native_event_retain(device_timepoint->event);
    *out_event = device_timepoint->event;
    *out_resolution = HAL_SYNC_WAIT_RESOLUTION_EVENT;
    hal_sync_mutex_unlock(&semaphore->mutex);
    return HAL_OK;
  }
  hal_sync_timepoint_state_t state;
  hal_sync_queue_t* queue = NULL;
  hal_status_t status =
      hal_sync_semaphore_register_locked(semaphore, timepoint, &state, &queue);
  hal_sync_mutex_unlock(&semaphore->mutex);
  if (queue)
    hal_sync_queue_request_completion(queue);
  HAL_RETURN_IF_ERROR(status);
  switch (state) {
    case HAL_SYNC_TIMEPOINT_STATE_REACHED:
      *out_resolution = HAL_SYNC_WAIT_RESOLUTION_REACHED;
      break;
    case HAL_SYNC_TIMEPOINT_STATE_FAILED:
      *out_resolution = HAL_SYNC_WAIT_RESOLUTION_FAILED;
      break;
    default:
      *out_resolution = HAL_SYNC_WAIT_RESOLUTION_PARKED;
      break;
  }
  return HAL_OK;
}

bool hal_sync_semaphore_attach_event(hal_sync_semaphore_t* semaphore,
                                     uint64_t value,
                                     hal_sync_native_event_t* event,
                                     hal_sync_queue_t* queue) {
  assert(atomic_load_explicit(&event->record_count, memory_order_relaxed) > 0 &&
         "attaching an event that was never recorded (T4)");
  hal_sync_mutex_lock(&semaphore->mutex);
  if (semaphore->failure ||
      atomic_load_explicit(&semaphore->value, memory_order_relaxed) >= value) {
    hal_sync_mutex_unlock(&semaphore->mutex);
    return false;
  }
  // A registration after this unlock finds the device timepoint (or, out
  // of memory, none: then it is only this answer that rings).
  hal_timepoint_t* first = hal_sync_timepoint_heap_peek(&semaphore->timepoints);
  bool is_awaited = first && first->value <= value;
  if (semaphore->device_timepoint_count ==
      semaphore->device_timepoint_capacity) {
    size_t new_capacity = semaphore->device_timepoint_capacity
                              ? semaphore->device_timepoint_capacity * 2
                              : 4;
    hal_sync_device_timepoint_t* grown =
        realloc(semaphore->device_timepoints,
                new_capacity * sizeof(*semaphore->device_timepoints));
    if (!grown) {
      // Without the device timepoint, waiters park on the host: slower,
      // still correct.
      hal_sync_mutex_unlock(&semaphore->mutex);
      return is_awaited;
    }
    semaphore->device_timepoints = grown;
    semaphore->device_timepoint_capacity = new_capacity;
  }
  // Insertion sort from the back: signals usually arrive in value order.
  size_t index = semaphore->device_timepoint_count;
  while (index > 0 && semaphore->device_timepoints[index - 1].value > value) {
    semaphore->device_timepoints[index] =
        semaphore->device_timepoints[index - 1];
    --index;
  }
  hal_sync_native_event_retain(event);
  semaphore->device_timepoints[index].value = value;
  semaphore->device_timepoints[index].event = event;
  semaphore->device_timepoints[index].event_generation =
      hal_sync_native_event_generation(event);
  semaphore->device_timepoints[index].queue = queue;
  ++semaphore->device_timepoint_count;
  hal_sync_mutex_unlock(&semaphore->mutex);
  return is_awaited;
}

bool hal_sync_semaphore_find_signaler(hal_sync_semaphore_t* semaphore,
                                      uint64_t value,
                                      const hal_sync_native_event_t* only_event,
                                      hal_sync_queue_t** out_queue,
                                      hal_sync_native_event_t** out_event) {
  hal_sync_mutex_lock(&semaphore->mutex);
  hal_sync_device_timepoint_t* device_timepoint =
      hal_sync_semaphore_covering_locked(semaphore, value, NULL);
  if (device_timepoint && only_event) {
    // Not the smallest covering value: that one's work may have been
    // issued after |only_event|'s and wait for what its caller holds.
    device_timepoint = NULL;
    for (size_t i = 0; i < semaphore->device_timepoint_count; ++i) {
      if (semaphore->device_timepoints[i].event == only_event &&
          semaphore->device_timepoints[i].value >= value) {
        device_timepoint = &semaphore->device_timepoints[i];
        break;
      }
    }
  }
  if (device_timepoint) {
    // Listed, so its submission has not published it, so it has not
    // retired, so its queue is not destroyed: counting the helper in here
    // keeps the queue alive after the unlock.
    hal_sync_queue_help_enter(device_timepoint->queue);
    hal_sync_native_event_retain(device_timepoint->event);
    *out_queue = device_timepoint->queue;
    *out_event = device_timepoint->event;
  }
  hal_sync_mutex_unlock(&semaphore->mutex);
  return device_timepoint != NULL;
}
