// Copyright 2026 The HAL Authors.
//
// Timepoints (private part): the pooled objects behind hal_timepoint_t, the
// waiter (one wake-up object per blocked host thread), and the min-heap a
// semaphore keeps its pending timepoints in.
//
// A host timepoint is one of two kinds:
//  - WAITER: resolving it posts the waiter's wake object. Used by host waits.
//  - CALLBACK: resolving it runs a callback (T1, T2). Used by
//    hal_semaphore_add_callback() and by queues for parked submissions.
// Device timepoints (native events) are kept by the semaphore separately,
// see semaphore_impl.h.
//
// Lifetime (T3): a timepoint has a reference count. The registering side
// holds one; the semaphore's heap holds one while the timepoint is pending,
// which passes to the resolver when it pops the timepoint and is dropped
// after the callback ran. The block goes back to its pool at zero.

#ifndef HAL_SYNC_TIMEPOINT_H_
#define HAL_SYNC_TIMEPOINT_H_

#include "hal/timepoint.h"
#include "pool.h"
#include "wake.h"

struct hal_sync_semaphore_t;

//===----------------------------------------------------------------------===//
// hal_sync_waiter_t
//===----------------------------------------------------------------------===//

// The one wake-up object of a blocked host wait. Reference counted: each
// WAITER timepoint holds a reference, so a resolver that posts after the
// waiter gave up (timeout) still posts to live memory (K9).
typedef struct hal_sync_waiter_t {
  hal_sync_pool_block_t block;
  _Atomic intptr_t ref_count;
  hal_sync_wake_t wake;
} hal_sync_waiter_t;

HAL_MUST_USE_RESULT hal_status_t
hal_sync_waiter_acquire(hal_sync_waiter_t** out_waiter);
void hal_sync_waiter_retain(hal_sync_waiter_t* waiter);
void hal_sync_waiter_release(hal_sync_waiter_t* waiter);

//===----------------------------------------------------------------------===//
// hal_timepoint_t
//===----------------------------------------------------------------------===//

typedef enum hal_sync_timepoint_kind_e {
  HAL_SYNC_TIMEPOINT_KIND_WAITER = 0,
  HAL_SYNC_TIMEPOINT_KIND_CALLBACK = 1,
} hal_sync_timepoint_kind_t;

typedef enum hal_sync_timepoint_state_e {
  HAL_SYNC_TIMEPOINT_STATE_PENDING = 0,  // in its semaphore's heap
  HAL_SYNC_TIMEPOINT_STATE_REACHED = 1,
  HAL_SYNC_TIMEPOINT_STATE_FAILED = 2,
  HAL_SYNC_TIMEPOINT_STATE_CANCELLED = 3,
} hal_sync_timepoint_state_t;

#define HAL_SYNC_HEAP_INDEX_NONE SIZE_MAX

struct hal_timepoint_t {
  hal_sync_pool_block_t block;
  _Atomic intptr_t ref_count;
  hal_sync_timepoint_kind_t kind;
  uint64_t value;
  // Set at registration, not retained; guarded by that semaphore's lock
  // along with |heap_index| and |state|.
  struct hal_sync_semaphore_t* semaphore;
  size_t heap_index;
  // The heap's count of pushes when this one was pushed: its registration
  // order, by which a signal notifies what it pops.
  uint64_t heap_order;
  hal_sync_timepoint_state_t state;
  // In its semaphore's list of late registrations instead of its heap
  // (under the semaphore's lock; semaphore.c: "Queue order"). Beside
  // |state|, in what would be padding.
  bool is_late;
  // KIND_WAITER: retained; its generation when it was taken (T3 check).
  hal_sync_waiter_t* waiter;
  uint32_t waiter_generation;
  // KIND_CALLBACK.
  hal_timepoint_callback_fn_t callback;
  void* user_data;
  // What keeps the order of the work waiting on this timepoint: the queue
  // of a parked submission, the executor of a host call, or NULL. A later
  // wait with the same key on the same semaphore does not overtake it
  // (semaphore.c: "Queue order").
  const void* order_key;
  // Links a resolver's private batch of popped timepoints, then, for a
  // callback deferred past the nesting bound, its thread's list of them.
  hal_timepoint_t* next_resolved;
  // A deferred callback's status (owned; timepoint.c: "Nesting bound").
  hal_status_t deferred_status;
  // Handles: the references hal_semaphore_add_callback() hands out and
  // hal_timepoint_retain() copies (a subset of |ref_count|). While there is
  // one, |pinned_semaphore| holds a reference to |semaphore|, so cancel
  // through a handle always locks a live semaphore (T3, T5). Internal
  // holders use hal_sync_timepoint_retain/release and never pin.
  _Atomic intptr_t handle_count;
  hal_semaphore_t* pinned_semaphore;  // retained while |handle_count| > 0
};

// A timepoint with one reference, not registered anywhere.
HAL_MUST_USE_RESULT hal_status_t hal_sync_timepoint_acquire_waiter(
    hal_sync_waiter_t* waiter, uint64_t value, hal_timepoint_t** out_timepoint);
HAL_MUST_USE_RESULT hal_status_t hal_sync_timepoint_acquire_callback(
    hal_timepoint_callback_fn_t callback, void* user_data, uint64_t value,
    hal_timepoint_t** out_timepoint);

// Internal references (see |handle_count| for the public ones).
void hal_sync_timepoint_retain(hal_timepoint_t* timepoint);
void hal_sync_timepoint_release(hal_timepoint_t* timepoint);

// Makes one of the caller's references a handle pinning |semaphore|, the
// semaphore |timepoint| is about to be registered on.
void hal_sync_timepoint_make_handle(hal_timepoint_t* timepoint,
                                    hal_semaphore_t* semaphore);

// Generation of |timepoint| now, to check a held pointer against later.
static inline uint32_t hal_sync_timepoint_generation(
    hal_timepoint_t* timepoint) {
  return hal_sync_pool_block_generation(&timepoint->block);
}

// Assertion builds: aborts if |timepoint| was recycled since its holder
// read |generation| (T3). Every use of a timepoint (or waiter) through a
// kept pointer checks it; compiled out with NDEBUG.
#define hal_sync_timepoint_check(timepoint, generation) \
  hal_sync_pool_block_check(&(timepoint)->block, (generation))

// Whether the calling thread has callbacks deferred past the nesting bound.
bool hal_sync_timepoints_have_deferred(void);

// Runs the first of the callbacks the calling thread deferred past the
// nesting bound; returns whether there was one. A host wait calls it, one
// at a time until its values are reached, before it blocks: a callback
// that waits for the effect of a callback it deferred must not wait
// forever.
bool hal_sync_timepoints_run_one_deferred(void);

// Runs the resolution of a popped timepoint (post the waiter, or run the
// callback with |status|) and drops the reference the heap held. Never
// called under a lock (T2). With |may_defer| (a signal's or a failure's
// resolution), past the nesting bound a callback is deferred to its
// thread's list instead, |status| cloned (timepoint.c: "Nesting bound");
// a cancel, a destroy or a registration that finds the value reached runs
// it now, as their callers count on.
void hal_sync_timepoint_notify_and_release(hal_timepoint_t* timepoint,
                                           hal_status_t status, bool may_defer);

// Pool statistics for tests: live and allocated timepoints and waiters.
hal_sync_pool_stats_t hal_sync_timepoint_pool_stats(void);
hal_sync_pool_stats_t hal_sync_waiter_pool_stats(void);

//===----------------------------------------------------------------------===//
// hal_sync_timepoint_heap_t
//===----------------------------------------------------------------------===//

// A binary min-heap of pending timepoints by value. Every function is called
// under the owning semaphore's lock. Each timepoint knows its index, so
// removal (cancel) is O(log n) and a signal touches only what is due.
// Ordered by (value, heap_order); a signal pops what is due and notifies it
// by heap_order alone (semaphore.c), so submissions of one queue released
// by one signal become ready, and issue, in the order they were submitted.
typedef struct hal_sync_timepoint_heap_t {
  hal_timepoint_t** items;
  size_t count;
  size_t capacity;
  uint64_t pushes;
} hal_sync_timepoint_heap_t;

// Timepoints in every semaphore's heap of the process, counted only while
// HAL_TRACE is on (its "timepoints pending" counter); 0 otherwise.
int64_t hal_sync_timepoints_pending(void);

void hal_sync_timepoint_heap_deinitialize(hal_sync_timepoint_heap_t* heap);
// May allocate to grow (only until the heap is warm).
HAL_MUST_USE_RESULT hal_status_t hal_sync_timepoint_heap_push(
    hal_sync_timepoint_heap_t* heap, hal_timepoint_t* timepoint);
static inline hal_timepoint_t* hal_sync_timepoint_heap_peek(
    const hal_sync_timepoint_heap_t* heap) {
  return heap->count ? heap->items[0] : NULL;
}
// Removes |timepoint|, which must be in |heap|.
void hal_sync_timepoint_heap_remove(hal_sync_timepoint_heap_t* heap,
                                    hal_timepoint_t* timepoint);
// Whether a timepoint with |order_key| and a value <= |value| is in
// |heap|. Visits only the timepoints at or below |value| (the heap's order
// prunes the rest): O(1) when none is.
bool hal_sync_timepoint_heap_has_key_at_or_below(
    const hal_sync_timepoint_heap_t* heap, uint64_t value,
    const void* order_key);

#endif  // HAL_SYNC_TIMEPOINT_H_
