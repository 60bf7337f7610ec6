// Copyright 2026 The HAL Authors.

#include "timepoint.h"

#include "hal/impl/resource.h"
#include "hal/trace.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

//===----------------------------------------------------------------------===//
// Process-wide pools
//===----------------------------------------------------------------------===//

// One pool of each kind per process (libhal is one shared library). Free
// blocks stay reachable from here, so LeakSanitizer does not count them.
// The caps bound what an idle process keeps.
#define HAL_SYNC_TIMEPOINT_POOL_MAX_FREE 4096
#define HAL_SYNC_WAITER_POOL_MAX_FREE 256

static pthread_once_t hal_sync_pools_once = PTHREAD_ONCE_INIT;
static hal_sync_pool_t hal_sync_timepoint_pool;
static hal_sync_pool_t hal_sync_waiter_pool;

static void hal_sync_waiter_block_initialize(hal_sync_pool_block_t* block) {
  hal_sync_waiter_t* waiter = (hal_sync_waiter_t*)block;
  hal_sync_wake_initialize(&waiter->wake);
}

static void hal_sync_waiter_block_deinitialize(hal_sync_pool_block_t* block) {
  hal_sync_waiter_t* waiter = (hal_sync_waiter_t*)block;
  hal_sync_wake_deinitialize(&waiter->wake);
}

static void hal_sync_pools_initialize(void) {
  hal_sync_pool_initialize("timepoint", sizeof(hal_timepoint_t),
                           HAL_SYNC_TIMEPOINT_POOL_MAX_FREE, NULL, NULL,
                           &hal_sync_timepoint_pool);
  hal_sync_pool_initialize(
      "waiter", sizeof(hal_sync_waiter_t), HAL_SYNC_WAITER_POOL_MAX_FREE,
      hal_sync_waiter_block_initialize, hal_sync_waiter_block_deinitialize,
      &hal_sync_waiter_pool);
}

static void hal_sync_pools_ensure(void) {
  pthread_once(&hal_sync_pools_once, hal_sync_pools_initialize);
}

hal_sync_pool_stats_t hal_sync_timepoint_pool_stats(void) {
  hal_sync_pools_ensure();
  return hal_sync_pool_stats(&hal_sync_timepoint_pool);
}

hal_sync_pool_stats_t hal_sync_waiter_pool_stats(void) {
  hal_sync_pools_ensure();
  return hal_sync_pool_stats(&hal_sync_waiter_pool);
}

//===----------------------------------------------------------------------===//
// hal_sync_waiter_t
//===----------------------------------------------------------------------===//

hal_status_t hal_sync_waiter_acquire(hal_sync_waiter_t** out_waiter) {
  hal_sync_pools_ensure();
  hal_sync_pool_block_t* block = NULL;
  HAL_RETURN_IF_ERROR(hal_sync_pool_acquire(&hal_sync_waiter_pool, &block));
  hal_sync_waiter_t* waiter = (hal_sync_waiter_t*)block;
  atomic_store_explicit(&waiter->ref_count, 1, memory_order_relaxed);
  // No poster can reach a recycled waiter: its last reference is gone.
  hal_sync_wake_reset(&waiter->wake);
  *out_waiter = waiter;
  return HAL_OK;
}

void hal_sync_waiter_retain(hal_sync_waiter_t* waiter) {
  intptr_t previous =
      atomic_fetch_add_explicit(&waiter->ref_count, 1, memory_order_relaxed);
  assert(previous > 0 && "retain of a recycled waiter");
  (void)previous;
}

void hal_sync_waiter_release(hal_sync_waiter_t* waiter) {
  // acq_rel: the last releaser sees every post before recycling.
  intptr_t previous =
      atomic_fetch_sub_explicit(&waiter->ref_count, 1, memory_order_acq_rel);
  assert(previous > 0 && "release of a recycled waiter");
  if (previous == 1) {
    hal_sync_pool_recycle(&hal_sync_waiter_pool, &waiter->block);
  }
}

//===----------------------------------------------------------------------===//
// hal_timepoint_t
//===----------------------------------------------------------------------===//

static hal_status_t hal_sync_timepoint_acquire(
    uint64_t value, hal_timepoint_t** out_timepoint) {
  hal_sync_pools_ensure();
  hal_sync_pool_block_t* block = NULL;
  HAL_RETURN_IF_ERROR(hal_sync_pool_acquire(&hal_sync_timepoint_pool, &block));
  hal_timepoint_t* timepoint = (hal_timepoint_t*)block;
  atomic_store_explicit(&timepoint->ref_count, 1, memory_order_relaxed);
  timepoint->value = value;
  timepoint->semaphore = NULL;
  timepoint->heap_index = HAL_SYNC_HEAP_INDEX_NONE;
  timepoint->state = HAL_SYNC_TIMEPOINT_STATE_PENDING;
  timepoint->waiter = NULL;
  timepoint->callback = NULL;
  timepoint->user_data = NULL;
  timepoint->order_key = NULL;
  timepoint->is_late = false;
  timepoint->next_resolved = NULL;
  timepoint->deferred_status = HAL_OK;
  atomic_store_explicit(&timepoint->handle_count, 0, memory_order_relaxed);
  timepoint->pinned_semaphore = NULL;
  *out_timepoint = timepoint;
  return HAL_OK;
}

hal_status_t hal_sync_timepoint_acquire_waiter(
    hal_sync_waiter_t* waiter, uint64_t value,
    hal_timepoint_t** out_timepoint) {
  HAL_RETURN_IF_ERROR(hal_sync_timepoint_acquire(value, out_timepoint));
  (*out_timepoint)->kind = HAL_SYNC_TIMEPOINT_KIND_WAITER;
  hal_sync_waiter_retain(waiter);
  (*out_timepoint)->waiter = waiter;
  (*out_timepoint)->waiter_generation =
      hal_sync_pool_block_generation(&waiter->block);
  return HAL_OK;
}

hal_status_t hal_sync_timepoint_acquire_callback(
    hal_timepoint_callback_fn_t callback, void* user_data, uint64_t value,
    hal_timepoint_t** out_timepoint) {
  HAL_RETURN_IF_ERROR(hal_sync_timepoint_acquire(value, out_timepoint));
  (*out_timepoint)->kind = HAL_SYNC_TIMEPOINT_KIND_CALLBACK;
  (*out_timepoint)->callback = callback;
  (*out_timepoint)->user_data = user_data;
  return HAL_OK;
}

void hal_sync_timepoint_retain(hal_timepoint_t* timepoint) {
  intptr_t previous =
      atomic_fetch_add_explicit(&timepoint->ref_count, 1, memory_order_relaxed);
  if (HAL_UNLIKELY(previous <= 0)) {
    fprintf(stderr, "hal/sync: retain of a recycled timepoint %p\n",
            (void*)timepoint);
    abort();
  }
}

void hal_sync_timepoint_release(hal_timepoint_t* timepoint) {
  if (!timepoint)
    return;
  intptr_t previous =
      atomic_fetch_sub_explicit(&timepoint->ref_count, 1, memory_order_acq_rel);
  if (HAL_UNLIKELY(previous <= 0)) {
    fprintf(stderr, "hal/sync: release of a recycled timepoint %p\n",
            (void*)timepoint);
    abort();
  }
  if (previous != 1)
    return;
  // Only a resolved or never-registered timepoint can reach zero: a pending
  // one is referenced by its heap.
  assert(timepoint->heap_index == HAL_SYNC_HEAP_INDEX_NONE);
  if (timepoint->waiter) {
    hal_sync_pool_block_check(&timepoint->waiter->block,
                              timepoint->waiter_generation);
    hal_sync_waiter_release(timepoint->waiter);
  }
  timepoint->waiter = NULL;
  hal_sync_pool_recycle(&hal_sync_timepoint_pool, &timepoint->block);
}

void hal_sync_timepoint_make_handle(hal_timepoint_t* timepoint,
                                    hal_semaphore_t* semaphore) {
  hal_semaphore_retain(semaphore);
  timepoint->pinned_semaphore = semaphore;
  atomic_store_explicit(&timepoint->handle_count, 1, memory_order_relaxed);
}

HAL_API void hal_timepoint_retain(hal_timepoint_t* timepoint) {
  if (!timepoint)
    return;
  // Relaxed: a handle is only copied from one already held.
  intptr_t previous = atomic_fetch_add_explicit(&timepoint->handle_count, 1,
                                                memory_order_relaxed);
  if (HAL_UNLIKELY(previous <= 0)) {
    fprintf(stderr, "hal/sync: retain of a released timepoint handle %p\n",
            (void*)timepoint);
    abort();
  }
  hal_sync_timepoint_retain(timepoint);
}

HAL_API void hal_timepoint_release(hal_timepoint_t* timepoint) {
  if (!timepoint)
    return;
  intptr_t previous = atomic_fetch_sub_explicit(&timepoint->handle_count, 1,
                                                memory_order_acq_rel);
  if (HAL_UNLIKELY(previous <= 0)) {
    fprintf(stderr, "hal/sync: release of a released timepoint handle %p\n",
            (void*)timepoint);
    abort();
  }
  hal_semaphore_t* unpinned = NULL;
  if (previous == 1) {
    // The last handle: no cancel can come through one any more.
    unpinned = timepoint->pinned_semaphore;
    timepoint->pinned_semaphore = NULL;
  }
  hal_sync_timepoint_release(timepoint);
  // Last, outside every lock: it may destroy the semaphore, which cancels
  // the timepoint if it is still pending (T1).
  hal_semaphore_release(unpinned);
}

// Nesting bound. A callback runs on the thread that resolved its
// timepoint, and one that signals another semaphore runs that one's
// callbacks nested in it (T2), so a chain of callbacks each signaling the
// next would nest as deep as it is long, about 0.6 KB of stack a link: a
// chain of some thousands overflows a thread's stack. So a thread runs at
// most HAL_SYNC_CALLBACK_NEST_MAX callbacks nested in one another; a
// callback resolved deeper is appended to the thread's list of deferred
// ones instead (its status cloned), and the frame that runs the callback
// at the bound runs that list, in order, once the callback returns, what
// they defer in turn included. The stack then holds the bound's frames
// however long the chain, and nothing changes for chains within it.
//
// Only the callbacks a signal or a failure resolves are deferred: a cancel
// that returns true has run its callback (T5), and a destroy or a
// registration that finds the value reached runs it before it returns. A
// deferred callback is already resolved: a cancel returns false and it
// still runs, with the outcome it had, on the resolving thread, as T5
// says of callbacks still to run there. Callbacks that order queue work
// (an |order_key|) never wait in the list: the queue-order scheme
// (semaphore.c) counts on them being handed over before their signal's
// batch ends; they are the HAL's own and nest no deeper than a queue's
// hand-over. A host wait on this thread runs the list, one callback at a
// time until its values are reached, before it blocks
// (hal_sync_timepoints_run_one_deferred), so a callback that waits for
// what a callback it deferred would do does not wait forever. Those run
// nested in the wait, in order, so the ones deferred before what it waits
// for too: a chain whose links wait in their callbacks nests in those
// waits, up to as deep as it is long.
#define HAL_SYNC_CALLBACK_NEST_MAX 16

static _Thread_local struct {
  int depth;  // callbacks running on this thread, one inside the other
  hal_timepoint_t* head;
  hal_timepoint_t* tail;
} hal_sync_nesting;

// Runs |timepoint|'s callback with |status| and drops its reference.
static void hal_sync_timepoint_run_callback(hal_timepoint_t* timepoint,
                                            hal_status_t status) {
  ++hal_sync_nesting.depth;
  // T2: the callback may release the last reference to a device whose
  // parked work the rest of this batch wakes; its shutdown must not wait
  // for that here (K15).
  hal_resource_defer_shutdown_enter();
  timepoint->callback(timepoint->user_data, timepoint->value, status);
  hal_resource_defer_shutdown_exit();
  hal_sync_timepoint_release(timepoint);
  --hal_sync_nesting.depth;
}

HAL_API bool hal_timepoint_run_deferred(void) {
  return hal_sync_timepoints_run_one_deferred();
}

bool hal_sync_timepoints_have_deferred(void) {
  return hal_sync_nesting.head != NULL;
}

bool hal_sync_timepoints_run_one_deferred(void) {
  hal_timepoint_t* timepoint = hal_sync_nesting.head;
  if (!timepoint)
    return false;
  hal_sync_nesting.head = timepoint->next_resolved;
  if (!hal_sync_nesting.head)
    hal_sync_nesting.tail = NULL;
  timepoint->next_resolved = NULL;
  hal_status_t status = timepoint->deferred_status;
  timepoint->deferred_status = HAL_OK;
  hal_sync_timepoint_run_callback(timepoint, status);
  hal_status_free(status);
  return true;
}

static void hal_sync_timepoints_run_deferred(void) {
  while (hal_sync_timepoints_run_one_deferred()) {
  }
}

void hal_sync_timepoint_notify_and_release(hal_timepoint_t* timepoint,
                                           hal_status_t status,
                                           bool may_defer) {
  if (timepoint->kind == HAL_SYNC_TIMEPOINT_KIND_WAITER) {
    hal_sync_pool_block_check(&timepoint->waiter->block,
                              timepoint->waiter_generation);
    hal_sync_wake_post(&timepoint->waiter->wake, status != HAL_OK);
    hal_sync_timepoint_release(timepoint);
    return;
  }
  if (may_defer && hal_sync_nesting.depth >= HAL_SYNC_CALLBACK_NEST_MAX &&
      !timepoint->order_key) {
    // The resolver's batch has read its link to the next: it is free.
    timepoint->next_resolved = NULL;
    timepoint->deferred_status = hal_status_clone(status);
    if (hal_sync_nesting.tail) {
      hal_sync_nesting.tail->next_resolved = timepoint;
    } else {
      hal_sync_nesting.head = timepoint;
    }
    hal_sync_nesting.tail = timepoint;
    return;
  }
  hal_sync_timepoint_run_callback(timepoint, status);
  if (hal_sync_nesting.depth == HAL_SYNC_CALLBACK_NEST_MAX - 1)
    hal_sync_timepoints_run_deferred();
}

//===----------------------------------------------------------------------===//
// hal_sync_timepoint_heap_t
//===----------------------------------------------------------------------===//

// One shared line touched by every push and remove: only while tracing.
static _Atomic int64_t hal_sync_timepoints_pending_count;

static void hal_sync_timepoints_pending_add(int64_t delta) {
  if (hal_trace_enabled()) {
    atomic_fetch_add_explicit(&hal_sync_timepoints_pending_count, delta,
                              memory_order_relaxed);
  }
}

int64_t hal_sync_timepoints_pending(void) {
  return atomic_load_explicit(&hal_sync_timepoints_pending_count,
                              memory_order_relaxed);
}

void hal_sync_timepoint_heap_deinitialize(hal_sync_timepoint_heap_t* heap) {
  hal_sync_timepoints_pending_add(-(int64_t)heap->count);
  free(heap->items);
  heap->items = NULL;
  heap->count = heap->capacity = 0;
}

static void hal_sync_timepoint_heap_set(hal_sync_timepoint_heap_t* heap,
                                        size_t index,
                                        hal_timepoint_t* timepoint) {
  heap->items[index] = timepoint;
  timepoint->heap_index = index;
}

// The heap's order: by value, then by registration.
static bool hal_sync_timepoint_before(const hal_timepoint_t* a,
                                      const hal_timepoint_t* b) {
  return a->value < b->value ||
         (a->value == b->value && a->heap_order < b->heap_order);
}

static void hal_sync_timepoint_heap_sift_up(hal_sync_timepoint_heap_t* heap,
                                            size_t index) {
  hal_timepoint_t* timepoint = heap->items[index];
  while (index > 0) {
    size_t parent = (index - 1) / 2;
    if (!hal_sync_timepoint_before(timepoint, heap->items[parent]))
      break;
    hal_sync_timepoint_heap_set(heap, index, heap->items[parent]);
    index = parent;
  }
  hal_sync_timepoint_heap_set(heap, index, timepoint);
}

static void hal_sync_timepoint_heap_sift_down(hal_sync_timepoint_heap_t* heap,
                                              size_t index) {
  hal_timepoint_t* timepoint = heap->items[index];
  for (;;) {
    size_t child = 2 * index + 1;
    if (child >= heap->count)
      break;
    if (child + 1 < heap->count &&
        hal_sync_timepoint_before(heap->items[child + 1], heap->items[child])) {
      ++child;
    }
    if (!hal_sync_timepoint_before(heap->items[child], timepoint))
      break;
    hal_sync_timepoint_heap_set(heap, index, heap->items[child]);
    index = child;
  }
  hal_sync_timepoint_heap_set(heap, index, timepoint);
}

hal_status_t hal_sync_timepoint_heap_push(hal_sync_timepoint_heap_t* heap,
                                          hal_timepoint_t* timepoint) {
  if (heap->count == heap->capacity) {
    size_t new_capacity = heap->capacity ? heap->capacity * 2 : 8;
    hal_timepoint_t** new_items =
        realloc(heap->items, new_capacity * sizeof(*new_items));
    if (!new_items) {
      return hal_make_status(HAL_STATUS_RESOURCE_EXHAUSTED,
                             "out of memory growing a timepoint heap to %zu",
                             new_capacity);
    }
    heap->items = new_items;
    heap->capacity = new_capacity;
  }
  timepoint->heap_order = heap->pushes++;
  hal_sync_timepoint_heap_set(heap, heap->count++, timepoint);
  hal_sync_timepoint_heap_sift_up(heap, heap->count - 1);
  hal_sync_timepoints_pending_add(1);
  return HAL_OK;
}

void hal_sync_timepoint_heap_remove(hal_sync_timepoint_heap_t* heap,
                                    hal_timepoint_t* timepoint) {
  size_t index = timepoint->heap_index;
  assert(index < heap->count && heap->items[index] == timepoint);
  timepoint->heap_index = HAL_SYNC_HEAP_INDEX_NONE;
  hal_sync_timepoints_pending_add(-1);
  hal_timepoint_t* last = heap->items[--heap->count];
  if (index == heap->count)
    return;
  hal_sync_timepoint_heap_set(heap, index, last);
  // The moved element may belong above or below its new slot.
  if (index > 0 &&
      hal_sync_timepoint_before(last, heap->items[(index - 1) / 2])) {
    hal_sync_timepoint_heap_sift_up(heap, index);
  } else {
    hal_sync_timepoint_heap_sift_down(heap, index);
  }
}

static bool hal_sync_timepoint_heap_has_key_from(
    const hal_sync_timepoint_heap_t* heap, size_t index, uint64_t value,
    const void* order_key) {
  // Depth-first below |index|; a child is never before its parent, so a
  // subtree whose root is above |value| holds nothing at or below it. The
  // depth is the heap's height: at most 64.
  if (index >= heap->count || heap->items[index]->value > value)
    return false;
  if (heap->items[index]->order_key == order_key)
    return true;
  return hal_sync_timepoint_heap_has_key_from(heap, 2 * index + 1, value,
                                              order_key) ||
         hal_sync_timepoint_heap_has_key_from(heap, 2 * index + 2, value,
                                              order_key);
}

bool hal_sync_timepoint_heap_has_key_at_or_below(
    const hal_sync_timepoint_heap_t* heap, uint64_t value,
    const void* order_key) {
  return hal_sync_timepoint_heap_has_key_from(heap, 0, value, order_key);
}
