// Copyright 2026 The HAL Authors.

#include "sync_event_pool.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>

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
  hal_sync_mutex_initialize(&pool->mutex);
  *out_pool = pool;
  return HAL_OK;
}

HAL_API void hal_sync_event_pool_trim(hal_sync_event_pool_t* pool,
                                      size_t keep_count) {
  hal_sync_native_event_t* to_destroy = NULL;
  hal_sync_mutex_lock(&pool->mutex);
  while (pool->free_count > keep_count) {
    hal_sync_native_event_t* event = pool->free_list;
    pool->free_list = event->next_free;
    --pool->free_count;
    event->next_free = to_destroy;
    to_destroy = event;
  }
  hal_sync_mutex_unlock(&pool->mutex);
  // Driver hooks run outside the pool lock.
  while (to_destroy) {
    hal_sync_native_event_t* next = to_destroy->next_free;
    pool->interface.destroy(pool->interface.self, to_destroy->handle);
    free(to_destroy);
    to_destroy = next;
  }
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
  hal_sync_event_pool_trim(pool, 0);
  hal_sync_mutex_deinitialize(&pool->mutex);
  free(pool);
}

HAL_API hal_status_t hal_sync_event_pool_acquire(
    hal_sync_event_pool_t* pool, hal_sync_native_event_t** out_event) {
  *out_event = NULL;
  hal_sync_mutex_lock(&pool->mutex);
  hal_sync_native_event_t* event = pool->free_list;
  if (event) {
    pool->free_list = event->next_free;
    --pool->free_count;
  }
  ++pool->live_count;
  hal_sync_mutex_unlock(&pool->mutex);
  if (!event) {
    hal_status_t status = HAL_OK;
    event = calloc(1, sizeof(*event));
    if (!event) {
      status = hal_make_status(HAL_STATUS_RESOURCE_EXHAUSTED,
                               "out of memory allocating a native event");
    } else {
      status = pool->interface.create(pool->interface.self, &event->handle);
    }
    if (status != HAL_OK) {
      free(event);
      hal_sync_mutex_lock(&pool->mutex);
      --pool->live_count;
      hal_sync_mutex_unlock(&pool->mutex);
      return hal_status_annotatef(status, "creating a pooled native event");
    }
    atomic_init(&event->generation, 0);
    event->pool = pool;
  }
  atomic_store_explicit(&event->ref_count, 1, memory_order_relaxed);
  atomic_store_explicit(&event->record_count, 0, memory_order_relaxed);
  event->next_free = NULL;
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
  // Last reference: nobody can wait on or record this event any more.
  atomic_fetch_add_explicit(&event->generation, 1, memory_order_relaxed);
  // Always kept (never destroyed here): release runs under semaphore locks,
  // where no driver hook may run. hal_sync_event_pool_trim() bounds the
  // pool, and queues trim to |max_free_count| when they are destroyed.
  hal_sync_event_pool_t* pool = event->pool;
  hal_sync_mutex_lock(&pool->mutex);
  --pool->live_count;
  event->next_free = pool->free_list;
  pool->free_list = event;
  ++pool->free_count;
  hal_sync_mutex_unlock(&pool->mutex);
}

HAL_API size_t hal_sync_event_pool_live_count(hal_sync_event_pool_t* pool) {
  hal_sync_mutex_lock(&pool->mutex);
  size_t live_count = pool->live_count;
  hal_sync_mutex_unlock(&pool->mutex);
  return live_count;
}
