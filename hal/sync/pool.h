// Copyright 2026 The HAL Authors.
//
// hal_sync_pool_t: a free list of fixed-size blocks for the objects the
// signal and wait paths use (timepoints, waiters), so that a warm process
// does not allocate on those paths.
//
// Every block starts with a hal_sync_pool_block_t header holding a
// generation counter. The pool bumps it each time a block comes back, so a
// holder that remembered (pointer, generation) can tell that its block was
// recycled under it (T3): hal_sync_pool_block_check() asserts in debug
// builds. Blocks are only handed back by the owner of the object's last
// reference (the object types keep their own reference counts).
//
// The pool lock is a leaf: nothing else is locked while it is held, and no
// callback ever runs under it (T2).
//
// Thread-safety: all functions are thread-safe.

#ifndef HAL_SYNC_POOL_H_
#define HAL_SYNC_POOL_H_

#include <assert.h>
#include <stdatomic.h>

#include "hal/status.h"
#include "wake.h"

typedef struct hal_sync_pool_block_t {
  struct hal_sync_pool_block_t* next_free;  // valid while in the free list
  // Incremented (under the pool lock) every time the block is recycled.
  // Atomic so a debug check from a stale holder is a detectable mismatch,
  // not a data race.
  _Atomic uint32_t generation;
  // True while the block is handed out.
  _Atomic bool is_live;
} hal_sync_pool_block_t;

// Called once when a block is first allocated / finally freed, for members
// that outlive recycling (a mutex, a condition variable).
typedef void (*hal_sync_pool_block_fn_t)(hal_sync_pool_block_t* block);

typedef struct hal_sync_pool_t {
  hal_sync_mutex_t mutex;
  const char* name;
  size_t block_size;
  // At most this many free blocks are kept; the rest are freed.
  size_t max_free_count;
  hal_sync_pool_block_fn_t initialize_fn;    // optional
  hal_sync_pool_block_fn_t deinitialize_fn;  // optional
  hal_sync_pool_block_t* free_list;          // under |mutex|
  size_t free_count;                         // under |mutex|
  // Statistics for tests and the benchmark (under |mutex|).
  size_t allocated_count;  // blocks that came from malloc
  size_t live_count;       // blocks handed out now
} hal_sync_pool_t;

void hal_sync_pool_initialize(const char* name, size_t block_size,
                              size_t max_free_count,
                              hal_sync_pool_block_fn_t initialize_fn,
                              hal_sync_pool_block_fn_t deinitialize_fn,
                              hal_sync_pool_t* out_pool);

// Frees every free block. Asserts that none is still handed out.
void hal_sync_pool_deinitialize(hal_sync_pool_t* pool);

// Hands out a block (recycled, or newly allocated and initialized). Its
// contents after the header are whatever the previous user left.
HAL_MUST_USE_RESULT hal_status_t
hal_sync_pool_acquire(hal_sync_pool_t* pool, hal_sync_pool_block_t** out_block);

// Takes |block| back and bumps its generation. The caller held the last
// reference to the object in it.
void hal_sync_pool_recycle(hal_sync_pool_t* pool, hal_sync_pool_block_t* block);

// Frees free blocks down to |keep_count|. For tests and memory pressure.
void hal_sync_pool_trim(hal_sync_pool_t* pool, size_t keep_count);

typedef struct hal_sync_pool_stats_t {
  size_t allocated_count;
  size_t live_count;
  size_t free_count;
} hal_sync_pool_stats_t;

hal_sync_pool_stats_t hal_sync_pool_stats(hal_sync_pool_t* pool);

static inline uint32_t hal_sync_pool_block_generation(
    hal_sync_pool_block_t* block) {
  return atomic_load_explicit(&block->generation, memory_order_relaxed);
}

// True when |block| is still the object its holder saw at |generation|.
static inline bool hal_sync_pool_block_is_current(hal_sync_pool_block_t* block,
                                                  uint32_t generation) {
  return atomic_load_explicit(&block->is_live, memory_order_relaxed) &&
         hal_sync_pool_block_generation(block) == generation;
}

// Debug-build assertion that a holder's (block, generation) is not stale.
#define hal_sync_pool_block_check(block, generation)              \
  assert(hal_sync_pool_block_is_current((block), (generation)) && \
         "stale pointer to a recycled pool block")

#endif  // HAL_SYNC_POOL_H_
