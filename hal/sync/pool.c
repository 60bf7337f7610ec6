// Copyright 2026 The HAL Authors.

#include "pool.h"

#include <stdio.h>
#include <stdlib.h>

void hal_sync_pool_initialize(const char* name, size_t block_size,
                              size_t max_free_count,
                              hal_sync_pool_block_fn_t initialize_fn,
                              hal_sync_pool_block_fn_t deinitialize_fn,
                              hal_sync_pool_t* out_pool) {
  assert(block_size >= sizeof(hal_sync_pool_block_t));
  hal_sync_mutex_initialize(&out_pool->mutex);
  out_pool->name = name;
  out_pool->block_size = block_size;
  out_pool->max_free_count = max_free_count;
  out_pool->initialize_fn = initialize_fn;
  out_pool->deinitialize_fn = deinitialize_fn;
  out_pool->free_list = NULL;
  out_pool->free_count = 0;
  out_pool->allocated_count = 0;
  out_pool->live_count = 0;
}

static void hal_sync_pool_free_block(hal_sync_pool_t* pool,
                                     hal_sync_pool_block_t* block) {
  if (pool->deinitialize_fn)
    pool->deinitialize_fn(block);
  free(block);
}

void hal_sync_pool_deinitialize(hal_sync_pool_t* pool) {
  if (pool->live_count != 0) {
    fprintf(stderr, "hal/sync: pool '%s' released with %zu blocks in use\n",
            pool->name, pool->live_count);
    abort();
  }
  hal_sync_pool_trim(pool, 0);
  hal_sync_mutex_deinitialize(&pool->mutex);
}

hal_status_t hal_sync_pool_acquire(hal_sync_pool_t* pool,
                                   hal_sync_pool_block_t** out_block) {
  *out_block = NULL;
  hal_sync_mutex_lock(&pool->mutex);
  hal_sync_pool_block_t* block = pool->free_list;
  if (block) {
    pool->free_list = block->next_free;
    --pool->free_count;
    ++pool->live_count;
  }
  hal_sync_mutex_unlock(&pool->mutex);
  if (!block) {
    // Cold path: the pool is not warm yet.
    block = calloc(1, pool->block_size);
    if (!block) {
      return hal_make_status(HAL_STATUS_RESOURCE_EXHAUSTED,
                             "out of memory allocating a %zu-byte %s",
                             pool->block_size, pool->name);
    }
    atomic_init(&block->generation, 0);
    atomic_init(&block->is_live, false);
    if (pool->initialize_fn)
      pool->initialize_fn(block);
    hal_sync_mutex_lock(&pool->mutex);
    ++pool->allocated_count;
    ++pool->live_count;
    hal_sync_mutex_unlock(&pool->mutex);
  }
  block->next_free = NULL;
  atomic_store_explicit(&block->is_live, true, memory_order_relaxed);
  *out_block = block;
  return HAL_OK;
}

void hal_sync_pool_recycle(hal_sync_pool_t* pool,
                           hal_sync_pool_block_t* block) {
  assert(atomic_load_explicit(&block->is_live, memory_order_relaxed) &&
         "block recycled twice");
  // From here on, a holder of (block, old generation) is stale.
  atomic_store_explicit(&block->is_live, false, memory_order_relaxed);
  atomic_fetch_add_explicit(&block->generation, 1, memory_order_relaxed);
  bool keep;
  hal_sync_mutex_lock(&pool->mutex);
  --pool->live_count;
  keep = pool->free_count < pool->max_free_count;
  if (keep) {
    block->next_free = pool->free_list;
    pool->free_list = block;
    ++pool->free_count;
  } else {
    --pool->allocated_count;
  }
  hal_sync_mutex_unlock(&pool->mutex);
  if (!keep)
    hal_sync_pool_free_block(pool, block);
}

void hal_sync_pool_trim(hal_sync_pool_t* pool, size_t keep_count) {
  hal_sync_pool_block_t* to_free = NULL;
  hal_sync_mutex_lock(&pool->mutex);
  while (pool->free_count > keep_count) {
    hal_sync_pool_block_t* block = pool->free_list;
    pool->free_list = block->next_free;
    --pool->free_count;
    --pool->allocated_count;
    block->next_free = to_free;
    to_free = block;
  }
  hal_sync_mutex_unlock(&pool->mutex);
  while (to_free) {
    hal_sync_pool_block_t* next = to_free->next_free;
    hal_sync_pool_free_block(pool, to_free);
    to_free = next;
  }
}

hal_sync_pool_stats_t hal_sync_pool_stats(hal_sync_pool_t* pool) {
  hal_sync_pool_stats_t stats;
  hal_sync_mutex_lock(&pool->mutex);
  stats.allocated_count = pool->allocated_count;
  stats.live_count = pool->live_count;
  stats.free_count = pool->free_count;
  hal_sync_mutex_unlock(&pool->mutex);
  return stats;
}
