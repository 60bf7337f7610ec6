// Copyright 2026 The HAL Authors.

#include "sync_queue.h"

#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

// pool.c frees a block after this (on trim, outside the pool lock): the
// driver's event goes with it.
static void hal_sync_native_event_deinitialize(hal_sync_pool_block_t* block) {
  hal_sync_native_event_t* event = (hal_sync_native_event_t*)block;
  if (event->handle)
    event->pool->interface.destroy(event->pool->interface.self, event->handle);
}

HAL_API hal_status_t hal_sync_event_pool_create(
    hal_sync_event_interface_t interface, size_t max_free_count,
    hal_sync_event_pool_t** out_pool) {
  if (!out_pool) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT, "out_pool is NULL");
  }
  *out_pool = NULL;
  if (!interface.create || !interface.destroy) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "event interface lacks create or destroy");
  }
  hal_sync_event_pool_t* pool = calloc(1, sizeof(*pool));
  if (!pool) {
    return hal_make_status(HAL_STATUS_RESOURCE_EXHAUSTED,
                           "out of memory allocating an event pool");
  }
  pool->interface = interface;
  pool->max_free_count = max_free_count;
  hal_sync_pool_initialize("native event", sizeof(hal_sync_native_event_t),
                           SIZE_MAX, NULL, hal_sync_native_event_deinitialize,
                           &pool->blocks);
  *out_pool = pool;
  return HAL_OK;
}

HAL_API void hal_sync_event_pool_trim(hal_sync_event_pool_t* pool,
                                      size_t keep_count) {
  // Driver hooks run outside the pool lock (pool.c frees after unlocking).
  hal_sync_pool_trim(&pool->blocks, keep_count);
}

HAL_API void hal_sync_event_pool_destroy(hal_sync_event_pool_t* pool) {
  if (!pool)
    return;
  size_t live_count = hal_sync_event_pool_live_count(pool);
  if (live_count != 0) {
    fprintf(stderr,
            "hal/sync: event pool %p destroyed with %zu events still "
            "referenced (a queue was not destroyed first?)\n",
            (void*)pool, live_count);
    abort();
  }
  hal_sync_pool_deinitialize(&pool->blocks);
  free(pool);
}

HAL_API hal_status_t hal_sync_event_pool_acquire(
    hal_sync_event_pool_t* pool, hal_sync_native_event_t** out_event) {
  *out_event = NULL;
  hal_sync_pool_block_t* block = NULL;
  HAL_RETURN_IF_ERROR(hal_sync_pool_acquire(&pool->blocks, &block));
  hal_sync_native_event_t* event = (hal_sync_native_event_t*)block;
  if (!event->handle) {
    // A fresh block (or one whose creation failed before): its event.
    event->pool = pool;
    hal_status_t status =
        pool->interface.create(pool->interface.self, &event->handle);
    if (status != HAL_OK) {
      event->handle = NULL;
      hal_sync_pool_recycle(&pool->blocks, block);
      return hal_status_annotatef(status, "creating a pooled native event");
    }
  }
  atomic_store_explicit(&event->ref_count, 1, memory_order_relaxed);
  atomic_store_explicit(&event->record_count, 0, memory_order_relaxed);
  *out_event = event;
  return HAL_OK;
}

HAL_API void hal_sync_native_event_retain(hal_sync_native_event_t* event) {
  intptr_t previous =
      atomic_fetch_add_explicit(&event->ref_count, 1, memory_order_relaxed);
  if (HAL_UNLIKELY(previous <= 0)) {
    fprintf(stderr, "hal/sync: retain of a pooled (free) native event %p\n",
            (void*)event);
    abort();
  }
}

HAL_API void hal_sync_native_event_release(hal_sync_native_event_t* event) {
  if (!event)
    return;
  intptr_t previous =
      atomic_fetch_sub_explicit(&event->ref_count, 1, memory_order_acq_rel);
  if (HAL_UNLIKELY(previous <= 0)) {
    fprintf(stderr, "hal/sync: release of a pooled (free) native event %p\n",
            (void*)event);
    abort();
  }
  if (previous != 1)
    return;
  // Last reference: nobody can wait on or record this event any more. Back
  // to the pool, never destroyed here (this may run under a semaphore
  // lock; the pool's lock is a leaf). The generation moves on (T3).
  hal_sync_pool_recycle(&event->pool->blocks, &event->block);
}

HAL_API size_t hal_sync_event_pool_live_count(hal_sync_event_pool_t* pool) {
  return hal_sync_pool_stats(&pool->blocks).live_count;
}

HAL_API size_t hal_sync_event_pool_free_count(hal_sync_event_pool_t* pool) {
  return hal_sync_pool_stats(&pool->blocks).free_count;
}
