// Copyright 2026 The HAL Authors.
//
// hal_sync_event_pool_t: a driver's native GPU events (CUevent, hipEvent_t),
// pooled and reference counted for the sync module's device timepoints.
//
// A driver creates one pool per event domain: the set of queues whose
// streams can wait on each other's events on the device (for CUDA and HIP,
// one pool per device). A queue only uses an event for a device-side wait
// when the event belongs to its own pool; any other wait parks on the host
// (T4 stays true across devices and drivers).
//
// Ownership (K3: no cycle between device and pool): the driver owns the
// pool, creates its queues with it, destroys every queue, then destroys the
// pool. Events hold no reference on the pool or the device. By the time all
// queues of a pool are destroyed, every event is back in it (queues drain
// their work; semaphores drop device timepoints when reached or failed);
// destroying a pool with an event still out is a broken invariant (abort
// with a message).
//
// Thread-safety: acquire/retain/release are thread-safe; create/destroy are
// not (one owner).

#ifndef HAL_SYNC_SYNC_EVENT_POOL_H_
#define HAL_SYNC_SYNC_EVENT_POOL_H_

#include <assert.h>
#include <stdatomic.h>

#include "hal/base.h"
#include "hal/status.h"
#include "pool.h"
#include "wake.h"

HAL_EXTERN_C_BEGIN

// The driver's native event hooks. Each member is required.
typedef struct hal_sync_event_interface_t {
  // Passed back to every hook. Must stay valid until the pool is destroyed.
  void* self;
  // Creates a native event into |*out_handle| (non-NULL on success).
  // Called by hal_sync_event_pool_acquire(): on a queue's worker thread,
  // only while the pool is cold. May call the vendor API; never called from
  // a vendor callback (Q1).
  hal_status_t (*create)(void* self, void** out_handle);
  // Destroys a native event no device work references any more. Called by
  // hal_sync_event_pool_trim() and hal_sync_event_pool_destroy() on the
  // thread calling them.
  void (*destroy)(void* self, void* handle);
} hal_sync_event_interface_t;

typedef struct hal_sync_event_pool_t hal_sync_event_pool_t;

// A pooled native event: a block of the sync module's one pool (pool.c),
// whose header keeps the free-list link and the generation bumped each
// time the event returns (stale-use check, T3). |handle| is the driver's
// event, created the first time the block is handed out and kept while it
// is pooled.
typedef struct hal_sync_native_event_t {
  hal_sync_pool_block_t block;  // first: pool.c's header
  _Atomic intptr_t ref_count;
  hal_sync_event_pool_t* pool;
  void* handle;
  // Times a queue recorded this event in its current use; an event is only
  // waited on by a device after it was recorded (T4, asserted).
  _Atomic uint64_t record_count;
} hal_sync_native_event_t;

struct hal_sync_event_pool_t {
  hal_sync_event_interface_t interface;
  // Never frees on release (release runs under semaphore locks, where no
  // driver hook may run); trimmed where hooks may run.
  hal_sync_pool_t blocks;
  size_t max_free_count;
};

// Creates a pool. Released events always return to it; idle events above
// |max_free_count| are destroyed where a driver hook may run: whenever a
// queue of the pool has completed all its work (so a burst does not keep
// its events for the device's life), and when a queue is destroyed.
HAL_API HAL_MUST_USE_RESULT hal_status_t hal_sync_event_pool_create(
    hal_sync_event_interface_t interface, size_t max_free_count,
    hal_sync_event_pool_t** out_pool);

// Destroys every idle event and frees the pool. Every event must be back.
HAL_API void hal_sync_event_pool_destroy(hal_sync_event_pool_t* pool);

// Destroys idle events down to |keep_count|.
HAL_API void hal_sync_event_pool_trim(hal_sync_event_pool_t* pool,
                                      size_t keep_count);

// An event with one reference (recycled, or created through the hooks).
HAL_API HAL_MUST_USE_RESULT hal_status_t hal_sync_event_pool_acquire(
    hal_sync_event_pool_t* pool, hal_sync_native_event_t** out_event);

// The generation of |event| now, to keep beside a pointer to it (T3).
static inline uint32_t hal_sync_native_event_generation(
    hal_sync_native_event_t* event) {
  return hal_sync_pool_block_generation(&event->block);
}

// Assertion builds: aborts if |event| went back to its pool since its
// holder read |generation| (a stale kept pointer, T3). Every use of an
// event through a kept pointer checks it; compiled out with NDEBUG.
#define hal_sync_native_event_check(event, generation)                     \
  assert(atomic_load_explicit(&(event)->ref_count, memory_order_relaxed) > \
             0 &&                                                          \
         hal_sync_native_event_generation(event) == (generation) &&        \
         "stale pointer to a pooled native event")

HAL_API void hal_sync_native_event_retain(hal_sync_native_event_t* event);
// At zero the event goes back to its pool (never destroyed here). Takes
// only the pool's leaf lock, so it may be called under a semaphore lock.
HAL_API void hal_sync_native_event_release(hal_sync_native_event_t* event);

// Events handed out now (for tests and teardown checks).
HAL_API size_t hal_sync_event_pool_live_count(hal_sync_event_pool_t* pool);

// Idle events kept now (for tests).
HAL_API size_t hal_sync_event_pool_free_count(hal_sync_event_pool_t* pool);

HAL_EXTERN_C_END

#endif  // HAL_SYNC_SYNC_EVENT_POOL_H_
