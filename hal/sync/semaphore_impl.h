// Copyright 2026 The HAL Authors.
//
// The sync module's timeline semaphore (private part).
//
// Lock order (docs/sync-design.md): queue lock -> semaphore lock -> pool
// locks (timepoint, waiter, event; leaves). Nothing is called back while a
// semaphore lock is held (T2): resolvers pop what is due into a private
// batch under the lock and notify after dropping it.

#ifndef HAL_SYNC_SEMAPHORE_IMPL_H_
#define HAL_SYNC_SEMAPHORE_IMPL_H_

#include <inttypes.h>

#include "hal/impl/semaphore.h"
#include "sync_queue.h"
#include "timepoint.h"
#include "wake.h"

// A native event that will fire (or has fired) when the device work that
// signals |value| completes. Always recorded before it is attached (T4).
typedef struct hal_sync_device_timepoint_t {
  uint64_t value;
  hal_sync_native_event_t* event;  // retained
  uint32_t event_generation;       // when attached (T3 check)
  // The queue whose submission recorded |event| and will publish |value|:
  // alive while the device timepoint is listed (the submission retires
  // only after its completion dropped it).
  hal_sync_queue_t* queue;
} hal_sync_device_timepoint_t;

// Links a member (semaphore or queue) into its loss domain's list
// (loss_domain.c; under the domain's lock).
typedef struct hal_sync_domain_link_t {
  struct hal_sync_domain_link_t* prev;
  struct hal_sync_domain_link_t* next;
} hal_sync_domain_link_t;

typedef struct hal_sync_semaphore_t {
  hal_semaphore_t base;
  hal_allocator_t allocator;
  hal_sync_mutex_t mutex;
  // The payload; HAL_SEMAPHORE_FAILURE_VALUE once failed. Written only
  // under |mutex| (release) and before any timepoint of the new value is
  // notified (S5); read lock-free (acquire) by query and wait fast paths.
  _Atomic uint64_t value;
  // The first failure, set once under |mutex| and never changed after.
  hal_status_t failure;
  // Pending host timepoints, a min-heap by value (under |mutex|).
  hal_sync_timepoint_heap_t timepoints;
  // Signals notifying a batch that releases parked queue submissions
  // (under |mutex|): while one is, a queue's wait on the semaphore parks
  // behind it even if the value is reached (semaphore.c: "Queue order").
  uint32_t releasing_count;
  // Those late registrations, in registration order, linked through
  // next_resolved (under |mutex|): popped only by the last releasing
  // signal, a failure or destroy, never by a later signal's heap pop.
  hal_timepoint_t* late_head;
  hal_timepoint_t* late_tail;
  // Device timepoints sorted by value (under |mutex|). All have a value
  // above |value|: a signal drops the ones it reaches.
  hal_sync_device_timepoint_t* device_timepoints;
  size_t device_timepoint_count;
  size_t device_timepoint_capacity;
  // Membership of the device's loss domain (links under the domain's lock;
  // loss_domain.c): set at creation, left in destroy. Off every hot path.
  hal_sync_loss_domain_t* domain;  // retained, or NULL
  hal_sync_domain_link_t domain_link;
} hal_sync_semaphore_t;

// Loss-domain membership (loss_domain.c). A semaphore added to a domain
// that is lost already is failed with a copy of the loss before it is
// listed; the member keeps a reference to the domain until it is removed.
void hal_sync_loss_domain_add_semaphore(hal_sync_loss_domain_t* domain,
                                        hal_sync_semaphore_t* semaphore);
void hal_sync_loss_domain_remove_semaphore(hal_sync_semaphore_t* semaphore);

// Loss-domain membership of a host-call executor (host_call.c), through its
// |link|. Add returns a copy of the domain's loss if it is lost already
// (the executor is then lost from the start), else OK; the member keeps a
// reference to the domain until it is removed.
hal_status_t hal_sync_loss_domain_add_executor(hal_sync_loss_domain_t* domain,
                                               hal_sync_domain_link_t* link);
void hal_sync_loss_domain_remove_executor(hal_sync_loss_domain_t* domain,
                                          hal_sync_domain_link_t* link);
// What a loss does to a member executor (host_call.c). Under the domain's
// lock: records a copy of |loss| (borrowed), so that the executor refuses
// later calls and fails the ready ones it has not started, and returns the
// executor with a reference. With no lock held: fails the calls still
// waiting with that loss and drops the reference.
struct hal_sync_host_executor_t* hal_sync_host_executor_lose_locked(
    hal_sync_domain_link_t* link, hal_status_t loss);
void hal_sync_host_executor_fail_waiting(
    struct hal_sync_host_executor_t* executor);

extern const hal_semaphore_vtable_t hal_sync_semaphore_vtable;

// True when |semaphore| is the sync module's type (a type test, for lists
// that come from callers).
static inline bool hal_sync_semaphore_is_sync(
    const hal_semaphore_t* semaphore) {
  return hal_resource_is(semaphore, &hal_sync_semaphore_vtable);
}

// |semaphore| as the sync module's type, which it is by construction (a
// vtable call, a list tested before): HAL_RESOURCE_CAST.
static inline hal_sync_semaphore_t* hal_sync_semaphore_cast(
    hal_semaphore_t* semaphore) {
  return HAL_RESOURCE_CAST(hal_sync_semaphore_t, semaphore,
                           &hal_sync_semaphore_vtable);
}

// Registers |timepoint| (for timepoint->value) on |semaphore| under the same
// lock that checks the value (T3). PENDING: registered, the heap took over
// one reference of the caller's. REACHED/FAILED: not registered, nothing
// taken.
HAL_MUST_USE_RESULT hal_status_t hal_sync_semaphore_register_timepoint(
    hal_sync_semaphore_t* semaphore, hal_timepoint_t* timepoint,
    hal_sync_timepoint_state_t* out_state);

// hal_semaphore_add_callback with an order key (timepoint.h: order_key):
// callbacks of one key waiting on one semaphore are handed their work in
// registration order (semaphore.c: "Queue order"). Host calls use it, with
// their executor as the key.
HAL_MUST_USE_RESULT hal_status_t hal_sync_semaphore_add_ordered_callback(
    hal_semaphore_t* semaphore, uint64_t value,
    hal_timepoint_callback_fn_t callback, void* user_data,
    const void* order_key, hal_timepoint_t** out_timepoint);

// A callback run only when |semaphore| fails (with the failure), or with
// CANCELLED when cancelled or when the semaphore is destroyed first: what
// keeps a wait that was reached from missing a failure that comes after
// (S2), where other waits keep the work waiting.
HAL_MUST_USE_RESULT hal_status_t hal_sync_semaphore_add_failure_watch(
    hal_semaphore_t* semaphore, hal_timepoint_callback_fn_t callback,
    void* user_data, hal_timepoint_t** out_timepoint);

// Removes |timepoint| if it is still pending and returns its final state.
// |*out_removed| (optional) is true only for the call that removed it: the
// heap's reference was dropped and a CALLBACK timepoint's callback ran with
// CANCELLED. Otherwise the state is whatever resolved it (REACHED, FAILED,
// or CANCELLED by an earlier call). The caller holds a reference to the
// semaphore.
hal_sync_timepoint_state_t hal_sync_timepoint_cancel(hal_timepoint_t* timepoint,
                                                     bool* out_removed);

// A clone of the failure status (HAL_OK if not failed).
hal_status_t hal_sync_semaphore_clone_failure(hal_sync_semaphore_t* semaphore);

// OK while |semaphore| has not failed (one acquire load), else a clone of
// its failure naming the wait for |value| it decides: work that waited on
// it never runs once the failure is known, even if the value was reached
// first (S2). For issue paths, before they run what waited.
hal_status_t hal_sync_semaphore_wait_failure(hal_semaphore_t* semaphore,
                                             uint64_t value);

typedef enum hal_sync_wait_resolution_e {
  HAL_SYNC_WAIT_RESOLUTION_REACHED = 0,  // nothing to wait for
  HAL_SYNC_WAIT_RESOLUTION_FAILED = 1,   // the semaphore failed
  HAL_SYNC_WAIT_RESOLUTION_EVENT = 2,    // wait on *out_event on the device
  HAL_SYNC_WAIT_RESOLUTION_PARKED = 3,   // |timepoint| registered
} hal_sync_wait_resolution_t;

// How a queue waits for (|semaphore|, |value|), decided under one lock:
// reached; failed; a device timepoint of |event_pool| already recorded for a
// value >= |value| (T4; the event is retained into |*out_event|); or
// |timepoint| (a CALLBACK timepoint for |value|) registered (PARKED).
HAL_MUST_USE_RESULT hal_status_t hal_sync_semaphore_resolve_wait(
    hal_sync_semaphore_t* semaphore, uint64_t value,
    hal_sync_event_pool_t* event_pool, hal_timepoint_t* timepoint,
    hal_sync_wait_resolution_t* out_resolution,
    hal_sync_native_event_t** out_event);

// Makes |event|, already recorded after the work that signals |value|, a
// device timepoint of |semaphore| (skipped if the value is already reached
// or the semaphore failed, or on out-of-memory: waiters then park).
// Returns whether a timepoint for |value| or less is registered (someone
// waits for this work without helping: its issue rings the completion
// thread whatever the queue's mode).
bool hal_sync_semaphore_attach_event(hal_sync_semaphore_t* semaphore,
                                     uint64_t value,
                                     hal_sync_native_event_t* event,
                                     hal_sync_queue_t* queue);

// A host waiter about to sleep for |value|: if issued work that publishes
// |value| or more is listed (the smallest such value; with |only_event|,
// only the work whose completion event that is), returns true with its
// queue counted as helped (hal_sync_queue_help_enter) and its completion
// event retained, for hal_sync_queue_help_complete.
bool hal_sync_semaphore_find_signaler(hal_sync_semaphore_t* semaphore,
                                      uint64_t value,
                                      const hal_sync_native_event_t* only_event,
                                      hal_sync_queue_t** out_queue,
                                      hal_sync_native_event_t** out_event);

// queue.c. A host thread that would sleep until a submission's completion
// is published completes it itself when the queue's completion thread is
// not at work: the device wakes the thread that waits instead of a second
// thread that then wakes it (docs/sync-design.md "Waiters complete").
// Counts a helper of |queue| in; only where |queue| is known alive (under
// the lock of a semaphore that lists one of its device timepoints).
void hal_sync_queue_help_enter(hal_sync_queue_t* queue);
// Completes |queue|'s in-flight submissions in issue order up to the one
// whose completion event is |event| (released here), taking the queue's
// completion turn; gives up at once where another thread holds the turn
// or |event|'s submission is not in flight. Counts the helper out. No
// lock held; the caller is a host wait without a deadline.
void hal_sync_queue_help_complete(hal_sync_queue_t* queue,
                                  hal_sync_native_event_t* event);

// queue.c. A timepoint was registered for |queue|'s issued work by a thread
// that does not help: asks the completion thread to complete the queue's work
// at its next look, and rings it. |queue| was counted in as a helper
// (hal_sync_queue_help_enter) to keep it alive; counts it out. No lock
// held.
void hal_sync_queue_request_completion(hal_sync_queue_t* queue);

// A device signal: moves the payload to |value| if that is an increase
// (no-op otherwise, or if failed). Runs due callbacks after unlocking.
void hal_sync_semaphore_advance(hal_sync_semaphore_t* semaphore,
                                uint64_t value);

// Failing several semaphores at once (a lost device's, in
// hal_sync_loss_domain_fail): each is failed with a copy of |status|
// (borrowed) where it has not failed yet (S2), and the timepoints that
// resolves are appended to |list| instead of notified, so that every one of
// the semaphores is failed before any callback runs. Takes the semaphore's
// lock (and the event pool's leaf lock), so it may run under locks taken
// before semaphores'. hal_sync_failed_list_notify then runs the callbacks
// with a copy of |status|, under no lock (T2).
typedef struct hal_sync_failed_list_t {
  hal_timepoint_t* head;
  hal_timepoint_t* tail;
} hal_sync_failed_list_t;
void hal_sync_semaphore_fail_deferred(hal_sync_semaphore_t* semaphore,
                                      hal_status_t status,
                                      hal_sync_failed_list_t* list);
void hal_sync_failed_list_notify(hal_sync_failed_list_t* list,
                                 hal_status_t status);

// Waits on the sync semaphores |semaphores| (validated by the caller).
HAL_MUST_USE_RESULT hal_status_t hal_sync_semaphore_wait_list(
    hal_wait_mode_t mode, size_t count, hal_semaphore_t* const* semaphores,
    const uint64_t* values, hal_time_t deadline_ns);

// Waits without a deadline for |value| on |semaphore|, which the work whose
// completion event is |event| publishes: a device wait's check (submission.c).
// It completes on its own thread no other work than that one's and what
// was issued before it on its queue: its caller may hold another queue's
// turn, which later work there may wait for.
HAL_MUST_USE_RESULT hal_status_t
hal_sync_semaphore_wait_signaler(hal_semaphore_t* semaphore, uint64_t value,
                                 const hal_sync_native_event_t* event);

#endif  // HAL_SYNC_SEMAPHORE_IMPL_H_
