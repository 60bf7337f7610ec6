// Copyright 2026 The HAL Authors.
//
// The deferred queue's threads and teardown. Which thread runs what:
//  - caller threads: hal_sync_queue_submit (submission.c); a submission
//    with every wait resolved there is issued by its caller when the queue
//    is idle and the driver allows it (hal_sync_queue_ready_at_submit);
//  - resolver threads (whoever signals or fails a semaphore): timepoint
//    callbacks that count a parked submission down and, at zero, push it to
//    the ready FIFO (hal_sync_queue_enqueue_ready);
//  - the WORKER thread: pops ready submissions; issues them
//    (wait_event/issue/record_event) or, if failed, fails their signals.
//    It and an issuing caller take turns (|is_issuing|), so submissions
//    issue one at a time, in the order they became ready;
//  - the COMPLETION thread: pops issued submissions in issue order,
//    synchronize_event, signals (or fails) their semaphores, retires them.

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "queue_impl.h"

#include "hal/trace.h"

void hal_sync_submission_fifo_push(hal_sync_submission_fifo_t* fifo,
                                   hal_sync_submission_t* submission) {
  submission->next = NULL;
  if (fifo->tail) {
    fifo->tail->next = submission;
  } else {
    fifo->head = submission;
  }
  fifo->tail = submission;
}

hal_sync_submission_t* hal_sync_submission_fifo_pop(
    hal_sync_submission_fifo_t* fifo) {
  hal_sync_submission_t* submission = fifo->head;
  if (!submission)
    return NULL;
  fifo->head = submission->next;
  if (!fifo->head)
    fifo->tail = NULL;
  submission->next = NULL;
  return submission;
}

static void hal_sync_queue_unpark_locked(hal_sync_queue_t* queue,
                                         hal_sync_submission_t* submission) {
  hal_sync_mutex_assert_held(&queue->mutex);
  if (!submission->is_parked)
    return;
  if (submission->parked_prev) {
    submission->parked_prev->parked_next = submission->parked_next;
  } else {
    queue->parked_head = submission->parked_next;
  }
  if (submission->parked_next) {
    submission->parked_next->parked_prev = submission->parked_prev;
  }
  submission->parked_prev = submission->parked_next = NULL;
  submission->is_parked = false;
  --queue->parked_count;
}

static const char* const hal_sync_trace_phases[] = {NULL, "parked", "ready",
                                                    "in flight"};

void hal_sync_submission_trace_phase(hal_sync_submission_t* submission,
                                     uint8_t phase, const char* end_args) {
  if (!submission->trace_id)
    return;
  uint32_t track = submission->queue->trace_track;
  if (submission->trace_phase) {
    hal_trace_end(track, "submission",
                  hal_sync_trace_phases[submission->trace_phase],
                  submission->trace_id, end_args);
  }
  submission->trace_phase = phase;
  if (phase == 1) {
    // What it is parked on: every wait, as semaphore@value.
    char list[256];
    size_t length = 0;
    list[0] = '\0';
    size_t i = 0;
    for (; i < submission->wait_count; ++i) {
      if (!hal_trace_append_semaphore(list, sizeof(list), &length,
                                      submission->waits[i].semaphore,
                                      submission->waits[i].value)) {
        break;
      }
    }
    hal_trace_append_more(list, sizeof(list), &length,
                          submission->wait_count - i);
    char args[sizeof(list) + 32];
    snprintf(args, sizeof(args), "\"waiting_on\": \"%s\"", list);
    hal_trace_begin(track, "submission", "parked", submission->trace_id, args);
  } else if (phase) {
    hal_trace_begin(track, "submission", hal_sync_trace_phases[phase],
                    submission->trace_id, NULL);
  }
}

void hal_sync_queue_trace_parked_locked(hal_sync_queue_t* queue) {
  hal_sync_mutex_assert_held(&queue->mutex);
  if (!hal_trace_enabled())
    return;
  char args[48];
  snprintf(args, sizeof(args), "\"parked\": %zu", queue->parked_count);
  hal_trace_counter(queue->trace_track, "parked", args);
}

void hal_sync_queue_enqueue_ready(hal_sync_queue_t* queue,
                                  hal_sync_submission_t* submission) {
  hal_sync_mutex_lock(&queue->mutex);
  hal_sync_queue_unpark_locked(queue, submission);
  if (hal_trace_enabled()) {
    hal_sync_submission_trace_phase(submission, 2, NULL);
    hal_sync_queue_trace_parked_locked(queue);
  }
  hal_sync_submission_fifo_push(&queue->ready, submission);
  ++queue->ready_count;
  pthread_cond_signal(&queue->worker_cond);
  // Neither the queue nor the submission is touched after this unlock: the
  // worker may retire the submission and destroy may free the queue.
  hal_sync_mutex_unlock(&queue->mutex);
}

//===----------------------------------------------------------------------===//
// Threads
//===----------------------------------------------------------------------===//

static void* hal_sync_queue_worker_main(void* arg) {
  // A queue thread never runs a destroy or a device shutdown itself: both
  // may join this very thread (callbacks and payload releases run here).
  hal_resource_defer_destruction_enter();
  hal_sync_queue_t* queue = (hal_sync_queue_t*)arg;
  hal_sync_mutex_lock(&queue->mutex);
  for (;;) {
    // A submitter issuing its own submission goes first: it became ready
    // before anything queued behind it (it took the queue idle).
    hal_sync_submission_t* submission =
        queue->is_issuing ? NULL : hal_sync_submission_fifo_pop(&queue->ready);
    if (!submission) {
      if (queue->stop && !queue->is_issuing)
        break;
      hal_sync_cond_wait(&queue->worker_cond, &queue->mutex,
                         HAL_TIME_INFINITE_FUTURE);
      continue;
    }
    queue->is_issuing = true;
    hal_sync_mutex_unlock(&queue->mutex);
    hal_sync_submission_issue_or_fail(submission);  // ends the turn
    hal_sync_mutex_lock(&queue->mutex);
  }
  hal_sync_mutex_unlock(&queue->mutex);
  return NULL;
}

void hal_sync_queue_ready_at_submit(hal_sync_queue_t* queue,
                                    hal_sync_submission_t* submission) {
  const hal_sync_queue_interface_t* interface = &queue->interface;
  bool allowed =
      interface->may_issue_on_submitter &&
      interface->may_issue_on_submitter(interface->self, submission->payload);
  hal_sync_mutex_lock(&queue->mutex);
  if (!allowed || queue->is_issuing || queue->ready.head) {
    hal_sync_mutex_unlock(&queue->mutex);
    hal_sync_queue_enqueue_ready(queue, submission);
    return;
  }
  hal_sync_queue_unpark_locked(queue, submission);
  if (hal_trace_enabled()) {
    hal_sync_submission_trace_phase(submission, 2, NULL);
    hal_sync_queue_trace_parked_locked(queue);
  }
  queue->is_issuing = true;
  ++queue->ready_count;
  hal_sync_mutex_unlock(&queue->mutex);
  // Ends the turn under the lock it hands the submission on with; the
  // submission may be retired by the time it returns.
  hal_sync_submission_issue_or_fail(submission);
}

HAL_API void hal_sync_queue_await_ready_issued(hal_sync_queue_t* queue) {
  hal_sync_mutex_lock(&queue->mutex);
  uint64_t target = queue->ready_count;
  ++queue->issued_waiters;
  while (queue->issued_count < target)
    hal_sync_cond_wait(&queue->issued_cond, &queue->mutex,
                       HAL_TIME_INFINITE_FUTURE);
  --queue->issued_waiters;
  hal_sync_mutex_unlock(&queue->mutex);
}

void hal_sync_queue_end_issue_locked(hal_sync_queue_t* queue) {
  hal_sync_mutex_assert_held(&queue->mutex);
  assert(queue->is_issuing);
  queue->is_issuing = false;
  ++queue->issued_count;
  if (queue->issued_waiters > 0)
    pthread_cond_broadcast(&queue->issued_cond);
  // What became ready meanwhile waited for this turn: the worker's now (a
  // no-op when the worker is the one ending it: it is not waiting). A stop
  // set during the turn waited for it too: the worker exits only once no
  // turn is held.
  if (queue->ready.head || queue->stop)
    pthread_cond_signal(&queue->worker_cond);
}

// The completing thread (|is_completing| held by it), once
// synchronize_event on |submission|'s completion event returned
// |sync_status| (owned): signals or fails its semaphores and retires it.
// No lock held.
static void hal_sync_queue_complete_issued(hal_sync_queue_t* queue,
                                           hal_sync_submission_t* submission,
                                           hal_status_t sync_status) {
  const hal_sync_queue_interface_t* interface = &queue->interface;
  hal_status_t status = sync_status;
  if (status != HAL_OK) {
    status = hal_status_annotatef(
        status, "submission on queue '%s' failed on the device", queue->name);
    // A failed wait proves nothing about the device being done with the
    // payload, which completing releases (Q3).
    if (submission->payload && interface->quiesce)
      interface->quiesce(interface->self);
  } else if (submission->payload && interface->check_completion &&
             (status = interface->check_completion(
                  interface->self, submission->payload)) != HAL_OK) {
    status = hal_status_annotatef(status, "submission on queue '%s' failed",
                                  queue->name);
  } else if ((status = hal_sync_submission_await_device_waits(submission)) !=
             HAL_OK) {
    // The device ran it after a signaler that failed (K13): downstream
    // work learns of the failure as if the wait had parked on the host.
    status = hal_status_annotatef(
        status,
        "submission on queue '%s' waited on the device for work "
        "that failed",
        queue->name);
  }
  hal_sync_submission_complete(submission, status);
  hal_status_free(status);
}

static hal_status_t hal_sync_queue_synchronize(hal_sync_queue_t* queue,
                                               hal_sync_native_event_t* event) {
  return queue->interface.synchronize_event(queue->interface.self,
                                            event->handle);
}

// Back to ringing at every issue from helped or busy mode (the completion
// thread, under the lock): a request for completion has nothing left to
// ask.
static void hal_sync_queue_leave_mode_locked(hal_sync_queue_t* queue) {
  atomic_store_explicit(&queue->is_helped, false, memory_order_relaxed);
  atomic_store_explicit(&queue->is_busy, false, memory_order_relaxed);
  queue->is_completion_requested = false;
}

// The completion thread waits for the device with no turn held, on the
// in-flight head's event (retained: a helper may retire the submission
// meanwhile), and takes the turn only to complete what the device
// finished. A host waiter arriving meanwhile takes the turn first and
// completes the head on its own thread (hal_sync_queue_help_complete);
// the completion thread then finds the head gone and looks again. In busy
// mode it takes the head only once a successor is in flight behind it (the
// device is likely done with the head by then) or after a short sleep, so
// that a burst costs one wake-up per sleep instead of one per submission.
static void* hal_sync_queue_completion_main(void* arg) {
  // A queue thread never runs a destroy or a device shutdown itself: both
  // may join this very thread (callbacks and payload releases run here).
  hal_resource_defer_destruction_enter();
  hal_sync_queue_t* queue = (hal_sync_queue_t*)arg;
  // Set by each completion; cleared by the trim of the idle time after it.
  bool trim_due = false;
  uint64_t helped_count = 0;  // the helpers' completions seen so far
  // Looks that found helpers' completions since this thread last
  // completed work itself or left helped mode.
  uint32_t helped_looks = 0;
  // Rung since this thread last slept (a ring after the ticket of that
  // sleep, seen at any look since): someone wants the in-flight work looked
  // at. Only helped mode leaves unrung work to the helpers.
  bool is_rung = false;
  // Slept in busy mode since this thread last took the head: the next look
  // takes it, alone in flight or not.
  bool has_slept = false;
  hal_sync_mutex_lock(&queue->mutex);
  // The doorbell's count at its initialization, not at this thread's
  // start: rings of pushes made before the thread ran count as rings (in
  // busy mode a look takes an unrung head only after a sleep).
  uint32_t seen_rings = 0;
  for (;;) {
    // Each look reads the rings once: that is also the ticket of a sleep
    // decided here, so a ring is either seen now or wakes that sleep.
    uint32_t rings = hal_sync_doorbell_prepare(&queue->completion_bell);
    if (rings != seen_rings) {
      seen_rings = rings;
      is_rung = true;
    }
    hal_sync_submission_t* head = queue->in_flight.head;
    if (queue->helped_count != helped_count) {
      helped_count = queue->helped_count;
      trim_due = true;
      if (++helped_looks >= HAL_SYNC_QUEUE_HELPED_LOOKS) {
        // The helpers keep up: they take over from busy mode, if it was on.
        atomic_store_explicit(&queue->is_busy, false, memory_order_relaxed);
        atomic_store_explicit(&queue->is_helped, true, memory_order_relaxed);
      }
    }
    bool is_helped =
        atomic_load_explicit(&queue->is_helped, memory_order_relaxed);
    bool is_busy = atomic_load_explicit(&queue->is_busy, memory_order_relaxed);
    if (is_busy && has_slept && !head && !queue->is_completing) {
      // A busy sleep passed and nothing came: the burst is over.
      hal_sync_queue_leave_mode_locked(queue);
      is_busy = false;
    }
    // A registration for this queue's work that does not help asked for
    // it (hal_sync_queue_request_completion): take work as if rung.
    bool may_take = (!is_helped && !is_busy) || is_rung ||
                    queue->is_completion_requested ||
                    (is_busy && (has_slept || (head && head->next)));
    if (!head || queue->is_completing || !may_take) {
      // A helper holding the turn rings when it ends it with work left, or
      // in busy mode (hal_sync_queue_help_complete).
      if (queue->stop && !head && !queue->is_completing)
        break;
      if (trim_due && !head && !queue->is_completing) {
        // All this queue's work is done: a burst's events above the pool's
        // bound go now, where driver hooks may run (no lock held). The list
        // may change meanwhile: look again before sleeping.
        trim_due = false;
        hal_sync_mutex_unlock(&queue->mutex);
        hal_sync_event_pool_trim(queue->event_pool,
                                 queue->event_pool->max_free_count);
        hal_sync_mutex_lock(&queue->mutex);
        continue;
      }
      // In helped and busy modes a push may not ring, so the sleep has a
      // deadline. In helped mode, a deadline passed with no helper's
      // completion meanwhile ends the mode, and the work, if any, is
      // nobody's: this thread completes it. In busy mode the look after the
      // sleep takes the head, or ends the mode if nothing is in flight;
      // while a helper holds the turn, the helper rings when it ends it, so
      // this thread does not poll through the helper's whole wait.
      hal_time_t deadline = HAL_TIME_INFINITE_FUTURE;
      if (is_helped) {
        deadline =
            hal_time_add_saturated(hal_time_now(), queue->helped_sleep_ns);
      } else if (is_busy && !queue->is_completing) {
        deadline = hal_time_add_saturated(hal_time_now(), queue->busy_sleep_ns);
      }
      is_rung = false;
      hal_sync_mutex_unlock(&queue->mutex);
      hal_sync_doorbell_wait(&queue->completion_bell, rings, deadline);
      hal_sync_mutex_lock(&queue->mutex);
      has_slept = is_busy;
      if (is_helped &&
          hal_sync_doorbell_prepare(&queue->completion_bell) == rings &&
          queue->helped_count == helped_count && hal_time_now() >= deadline) {
        hal_sync_queue_leave_mode_locked(queue);
        helped_looks = 0;
      }
      continue;
    }
    has_slept = false;
    hal_sync_native_event_t* event = head->completion_event;
    hal_sync_native_event_check(event, head->completion_event_generation);
    hal_sync_native_event_retain(event);
    // Set under the same lock as the look at the head: a helper that pops
    // |head| after it waits for this synchronize.
    queue->unturned_sync_event = event;
    hal_sync_mutex_unlock(&queue->mutex);
    hal_status_t status = hal_sync_queue_synchronize(queue, event);
    hal_sync_mutex_lock(&queue->mutex);
    queue->unturned_sync_event = NULL;
    // Still the head with no helper at it: the device finished it. (The
    // event is retained, so no later submission can hold it.)
    bool is_ours = queue->in_flight.head == head &&
                   head->completion_event == event && !queue->is_completing;
    if (!is_ours && status != HAL_OK) {
      // A helper popped |head| since the look, and waits for this
      // synchronize before it completes it: the failure is its.
      assert(!queue->handed_sync_event);
      queue->handed_sync_event = event;
      queue->handed_sync_failure = status;
      status = HAL_OK;
    }
    pthread_cond_broadcast(&queue->unturned_sync_cond);
    if (is_ours) {
      hal_sync_submission_fifo_pop(&queue->in_flight);
      queue->is_completing = true;
      trim_due = true;
      helped_looks = 0;
      if (is_helped) {
        // No helper came for it: back to ringing at every issue.
        hal_sync_queue_leave_mode_locked(queue);
      } else if (!is_busy && queue->in_flight.head) {
        // Another submission came while this one ran: busy mode. A request
        // pending stays until the mode ends.
        atomic_store_explicit(&queue->is_busy, true, memory_order_relaxed);
      } else if (!is_busy) {
        queue->is_completion_requested = false;
      }
    }
    hal_sync_mutex_unlock(&queue->mutex);
    hal_sync_native_event_release(event);
    if (is_ours) {
      hal_sync_queue_complete_issued(queue, head, status);
    } else {
      hal_status_free(status);
    }
    hal_sync_mutex_lock(&queue->mutex);
    if (is_ours)
      queue->is_completing = false;
  }
  hal_sync_mutex_unlock(&queue->mutex);
  return NULL;
}

void hal_sync_queue_help_enter(hal_sync_queue_t* queue) {
  atomic_fetch_add_explicit(&queue->helper_count, 1, memory_order_relaxed);
}

// Counts a helper out (under the queue's mutex): destroy waits for none.
static void hal_sync_queue_help_exit_locked(hal_sync_queue_t* queue) {
  if (atomic_fetch_sub_explicit(&queue->helper_count, 1,
                                memory_order_relaxed) == 1 &&
      queue->is_shutting_down) {
    pthread_cond_broadcast(&queue->idle_cond);
  }
}

void hal_sync_queue_request_completion(hal_sync_queue_t* queue) {
  // Counted in as a helper, the queue is alive until the count-out below.
  // The ring first, so that the woken thread does not wait for this lock.
  hal_sync_doorbell_ring(&queue->completion_bell);
  hal_sync_mutex_lock(&queue->mutex);
  // The work may not be pushed yet: the request stays until helped or busy
  // mode ends, and while it is there the completion thread takes work as
  // if rung and every push rings.
  queue->is_completion_requested = true;
  hal_sync_queue_help_exit_locked(queue);
  hal_sync_mutex_unlock(&queue->mutex);
}

// A helper holding the turn for the submission whose completion event is
// |event|, its own synchronize having returned |status| (owned): waits for
// the completion thread's synchronize of the same event, if one is under
// way, and returns the first failure of the two.
static hal_status_t hal_sync_queue_join_unturned_sync_locked(
    hal_sync_queue_t* queue, hal_sync_native_event_t* event,
    hal_status_t status) {
  while (queue->unturned_sync_event == event) {
    hal_sync_cond_wait(&queue->unturned_sync_cond, &queue->mutex,
                       HAL_TIME_INFINITE_FUTURE);
  }
  if (queue->handed_sync_event != event)
    return status;
  hal_status_t handed = queue->handed_sync_failure;
  queue->handed_sync_event = NULL;
  queue->handed_sync_failure = HAL_OK;
  if (status == HAL_OK)
    return handed;
  hal_status_free(handed);
  return status;
}

void hal_sync_queue_help_complete(hal_sync_queue_t* queue,
                                  hal_sync_native_event_t* event) {
  // Payload releases and callbacks run here as on the completion thread: a
  // destroy they reach goes to the release thread (it may wait for this
  // very helper to count out).
  hal_resource_defer_destruction_enter();
  hal_sync_mutex_lock(&queue->mutex);
  bool is_in_flight = false;
  for (hal_sync_submission_t* s = queue->in_flight.head; s; s = s->next) {
    if (s->completion_event == event) {
      is_in_flight = true;
      break;
    }
  }
  bool ring = false;
  while (is_in_flight && !queue->is_completing) {
    hal_sync_submission_t* submission =
        hal_sync_submission_fifo_pop(&queue->in_flight);
    queue->is_completing = true;
    // Read before completing: the submission retires with it. |event| is
    // retained here, so no later submission holds it.
    is_in_flight = submission->completion_event != event;
    hal_sync_mutex_unlock(&queue->mutex);
    hal_sync_native_event_check(submission->completion_event,
                                submission->completion_event_generation);
    hal_status_t status =
        hal_sync_queue_synchronize(queue, submission->completion_event);
    hal_sync_mutex_lock(&queue->mutex);
    status = hal_sync_queue_join_unturned_sync_locked(
        queue, submission->completion_event, status);
    hal_sync_mutex_unlock(&queue->mutex);
    hal_sync_queue_complete_issued(queue, submission, status);
    hal_sync_mutex_lock(&queue->mutex);
    queue->is_completing = false;
    ++queue->helped_count;
    // The completion thread may have found the turn taken and slept: with
    // no deadline in busy mode, where a later push would not ring for it.
    ring = queue->in_flight.head != NULL ||
           atomic_load_explicit(&queue->is_busy, memory_order_relaxed);
  }
  hal_sync_mutex_unlock(&queue->mutex);
  if (ring)
    hal_sync_doorbell_ring(&queue->completion_bell);
  hal_sync_native_event_release(event);
  hal_resource_defer_destruction_exit();
  // Last: destroy may free the queue as soon as this count falls to zero.
  hal_sync_mutex_lock(&queue->mutex);
  hal_sync_queue_help_exit_locked(queue);
  hal_sync_mutex_unlock(&queue->mutex);
}

// Thread names have 15 characters (the kernel's limit): the role, then as
// much of the queue's name as fits, from its end, where the device and
// queue indices are ("w-a_stream:0:q1" for cuda_stream:0:q1's worker), so
// that every queue's threads stay apart in a debugger or top.
static void hal_sync_queue_name_thread(pthread_t thread, const char* prefix,
                                       const char* name) {
  char thread_name[16];
  size_t room = sizeof(thread_name) - 1 - strlen(prefix);
  size_t length = strlen(name);
  const char* tail = length > room ? name + (length - room) : name;
  snprintf(thread_name, sizeof(thread_name), "%s%s", prefix, tail);
  pthread_setname_np(thread, thread_name);
}

//===----------------------------------------------------------------------===//
// Create / destroy
//===----------------------------------------------------------------------===//

HAL_API hal_status_t hal_sync_queue_create(hal_sync_queue_interface_t interface,
                                           hal_sync_event_pool_t* event_pool,
                                           hal_sync_loss_domain_t* domain,
                                           const char* name,
                                           hal_sync_queue_t** out_queue) {
  if (!out_queue) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT, "out_queue is NULL");
  }
  *out_queue = NULL;
  if (!event_pool || !interface.wait_event || !interface.issue ||
      !interface.record_event || !interface.synchronize_event) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "queue needs an event pool and the wait_event, "
                           "issue, record_event and synchronize_event hooks");
  }
  if (!name)
    name = "queue";
  hal_status_t status = HAL_OK;
  hal_sync_queue_t* queue = calloc(1, sizeof(*queue));
  char* name_copy = strdup(name);
  hal_sync_submission_cache_t* cache = hal_sync_submission_cache_create();
  if (!queue || !name_copy || !cache) {
    status = hal_make_status(HAL_STATUS_RESOURCE_EXHAUSTED,
                             "out of memory creating queue '%s'", name);
    hal_sync_submission_cache_release(cache);
    goto cleanup_allocation;
  }
  queue->submission_cache = cache;
  queue->interface = interface;
  queue->event_pool = event_pool;
  queue->name = name_copy;
  queue->helped_sleep_ns = HAL_SYNC_QUEUE_HELPED_SLEEP_NS;
  queue->busy_sleep_ns = HAL_SYNC_QUEUE_BUSY_SLEEP_NS;
  hal_sync_mutex_initialize(&queue->mutex);
  hal_sync_cond_initialize(&queue->worker_cond);
  hal_sync_cond_initialize(&queue->issued_cond);
  hal_sync_doorbell_initialize(&queue->completion_bell);
  hal_sync_cond_initialize(&queue->idle_cond);
  hal_sync_cond_initialize(&queue->unturned_sync_cond);

  int result = pthread_create(&queue->worker_thread, NULL,
                              hal_sync_queue_worker_main, queue);
  if (result != 0) {
    status = hal_make_status(HAL_STATUS_RESOURCE_EXHAUSTED,
                             "pthread_create (worker of queue '%s'): %s", name,
                             strerror(result));
    goto cleanup_sync_objects;
  }
  result = pthread_create(&queue->completion_thread, NULL,
                          hal_sync_queue_completion_main, queue);
  if (result != 0) {
    status = hal_make_status(HAL_STATUS_RESOURCE_EXHAUSTED,
                             "pthread_create (completion of queue '%s'): %s",
                             name, strerror(result));
    goto cleanup_worker;
  }
  hal_sync_queue_name_thread(queue->worker_thread, "w-", name);
  hal_sync_queue_name_thread(queue->completion_thread, "c-", name);
  queue->trace_track = hal_trace_track(name);
  // A queue created on a device already lost takes no work.
  if (domain)
    hal_sync_loss_domain_add_queue(domain, queue);
  *out_queue = queue;
  return HAL_OK;

cleanup_worker:
  hal_sync_mutex_lock(&queue->mutex);
  queue->stop = true;
  pthread_cond_broadcast(&queue->worker_cond);
  hal_sync_mutex_unlock(&queue->mutex);
  pthread_join(queue->worker_thread, NULL);
cleanup_sync_objects:
  pthread_cond_destroy(&queue->unturned_sync_cond);
  pthread_cond_destroy(&queue->idle_cond);
  hal_sync_doorbell_deinitialize(&queue->completion_bell);
  pthread_cond_destroy(&queue->issued_cond);
  pthread_cond_destroy(&queue->worker_cond);
  hal_sync_mutex_deinitialize(&queue->mutex);
  hal_sync_submission_cache_release(queue->submission_cache);
cleanup_allocation:
  free(name_copy);
  free(queue);
  return status;
}

void hal_sync_queue_take_parked(hal_sync_queue_t* queue, hal_status_t loss,
                                hal_sync_submission_list_t* list) {
  hal_sync_mutex_lock(&queue->mutex);
  if (loss && !queue->loss)
    queue->loss = hal_status_clone(loss);
  size_t count = 0;
  for (hal_sync_submission_t* s = queue->parked_head; s; s = s->parked_next) {
    ++count;
  }
  if (list->count + count > list->capacity) {
    size_t capacity = list->count + count;
    hal_sync_submission_t** grown =
        realloc(list->items, capacity * sizeof(*list->items));
    if (!grown) {
      fprintf(stderr,
              "hal/sync: out of memory failing the %zu parked "
              "submissions of queue '%s'\n",
              count, queue->name);
      abort();
    }
    list->items = grown;
    list->capacity = capacity;
  }
  for (hal_sync_submission_t* s = queue->parked_head; s; s = s->parked_next) {
    hal_sync_submission_retain(s);
    list->items[list->count++] = s;
  }
  hal_sync_mutex_unlock(&queue->mutex);
}

void hal_sync_submission_list_fail(hal_sync_submission_list_t* list,
                                   hal_status_t status,
                                   bool failed_waits_first) {
  for (size_t i = 0; i < list->count; ++i) {
    hal_status_t failed_wait =
        failed_waits_first ? hal_sync_submission_waits_failed(list->items[i])
                           : HAL_OK;
    hal_sync_submission_fail(
        list->items[i], failed_wait ? failed_wait : hal_status_clone(status));
    hal_sync_submission_release(list->items[i]);
  }
  free(list->items);
  list->items = NULL;
  list->count = list->capacity = 0;
}

// Fails every parked submission with CANCELLED (Q4), or with the failure of
// a wait that failed already: that failure decided it when it was published
// (S2), even if the wait's callback, which runs on the failing thread after
// the failure is visible, has not run yet.
HAL_API void hal_sync_queue_cancel_parked(hal_sync_queue_t* queue) {
  hal_sync_submission_list_t parked = {0};
  hal_sync_queue_take_parked(queue, HAL_OK, &parked);
  if (!parked.count)
    return;
  hal_status_t cancelled = hal_make_status(
      HAL_STATUS_CANCELLED, "queue '%s' shut down with the submission parked",
      queue->name);
  hal_sync_submission_list_fail(&parked, cancelled, true);
  hal_status_free(cancelled);
}

HAL_API void hal_sync_queue_destroy(hal_sync_queue_t* queue) {
  if (!queue)
    return;
  // First: a loss of the domain may be walking its queues.
  hal_sync_loss_domain_remove_queue(queue);
  hal_sync_mutex_lock(&queue->mutex);
  queue->is_shutting_down = true;  // submit refuses from here on
  hal_sync_mutex_unlock(&queue->mutex);

  hal_sync_queue_cancel_parked(queue);

  // Every accepted submission retires: cancelled ones through the worker,
  // ready ones are issued, issued ones complete. Orphaned ones (record
  // failed) were counted out of the threads' hands and retire below. In
  // helped mode issued work may be unrung: ring for it (pushes from here
  // on ring whatever the mode).
  hal_sync_doorbell_ring(&queue->completion_bell);
  hal_sync_mutex_lock(&queue->mutex);
  for (;;) {
    size_t orphaned_count = 0;
    for (hal_sync_submission_t* s = queue->orphaned.head; s; s = s->next) {
      ++orphaned_count;
    }
    if (queue->live_count == orphaned_count &&
        atomic_load_explicit(&queue->helper_count, memory_order_relaxed) == 0)
      break;
    hal_sync_cond_wait(&queue->idle_cond, &queue->mutex,
                       HAL_TIME_INFINITE_FUTURE);
  }
  queue->stop = true;
  pthread_cond_broadcast(&queue->worker_cond);
  hal_sync_mutex_unlock(&queue->mutex);
  hal_sync_doorbell_ring(&queue->completion_bell);
  pthread_join(queue->worker_thread, NULL);
  pthread_join(queue->completion_thread, NULL);
  // Orphans may still be in use by the device: let the driver wait for it
  // before they are released (Q3).
  if (queue->orphaned.head && queue->interface.quiesce) {
    queue->interface.quiesce(queue->interface.self);
  }

  hal_sync_submission_t* orphan;
  while ((orphan = hal_sync_submission_fifo_pop(&queue->orphaned))) {
    hal_sync_submission_retire(orphan);
  }
  // Idle events beyond the pool's bound are destroyed here, on the thread
  // that destroys the queue (the driver's hooks are still valid).
  hal_sync_event_pool_trim(queue->event_pool,
                           queue->event_pool->max_free_count);
  assert(queue->live_count == 0 && !queue->ready.head &&
         !queue->in_flight.head && !queue->parked_head &&
         !queue->handed_sync_event);
  pthread_cond_destroy(&queue->unturned_sync_cond);
  pthread_cond_destroy(&queue->idle_cond);
  hal_sync_doorbell_deinitialize(&queue->completion_bell);
  pthread_cond_destroy(&queue->issued_cond);
  pthread_cond_destroy(&queue->worker_cond);
  hal_sync_mutex_deinitialize(&queue->mutex);
  hal_status_free(queue->loss);
  // Blocks still out (a snapshot's last reference) keep the cache alive.
  hal_sync_submission_cache_release(queue->submission_cache);
  free(queue->name);
  free(queue);
}
