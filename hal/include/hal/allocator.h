// Copyright 2026 The HAL Authors.
//
// Host memory allocator hooks.
//
// Every object that allocates host memory takes a hal_allocator_t, so an
// embedder can route the HAL's host allocations (not device memory) through
// its own heap, count them, or make them fail to test error paths. A
// zero-initialized hal_allocator_t (hal_allocator_system()) uses libc.
//
// The one exception is the sync module (hal/sync/), which uses libc for
// what it shares across every caller and driver of the process and for its
// hot paths, where no caller's allocator is at hand: the pools of
// timepoints, waiters and native events (pool.c, event_pool.c), queues and
// their ready lists (queue.c), submissions (submission.c), loss domains and
// their snapshots (loss_domain.c), a semaphore's timepoint heap and device
// timepoints (timepoint.c, semaphore.c), and the entries of a list wait
// over more than 16 semaphores (wait.c). Running out there is
// RESOURCE_EXHAUSTED where the call can return it, or a slower path (a
// device timepoint not kept: its waiters park on the host); the two
// failure paths that cannot return one (failing a lost device's semaphores,
// failing a queue's parked submissions) abort with a message. What a
// semaphore itself takes comes from the allocator given to its creation.
//
// Allocations are zero-filled. Sizes that overflow are rejected with
// OUT_OF_RANGE before anything is allocated; exhaustion is
// RESOURCE_EXHAUSTED naming the size.
//
// Thread-safety: the helpers are as thread-safe as the hooks; the system
// allocator is thread-safe.

#ifndef HAL_ALLOCATOR_H_
#define HAL_ALLOCATOR_H_

#include "hal/base.h"
#include "hal/status.h"

HAL_EXTERN_C_BEGIN

typedef struct hal_allocator_t {
  // Passed back to every hook.
  void* self;
  // Returns |size| (> 0) bytes aligned for any type, or NULL. Required
  // unless all three hooks are NULL.
  void* (*malloc_fn)(void* self, size_t size);
  // As realloc(3) for a non-NULL |ptr| and |size| > 0.
  void* (*realloc_fn)(void* self, void* ptr, size_t size);
  // Frees a pointer returned by the other hooks; never called with NULL.
  void (*free_fn)(void* self, void* ptr);
} hal_allocator_t;

static inline hal_allocator_t hal_allocator_system(void) {
  hal_allocator_t allocator = {NULL, NULL, NULL, NULL};
  return allocator;
}

static inline bool hal_allocator_is_system(hal_allocator_t allocator) {
  return allocator.malloc_fn == NULL;
}

// Allocates |size| zeroed bytes into |*out_ptr| (NULL on failure).
HAL_API HAL_MUST_USE_RESULT hal_status_t
hal_allocator_malloc(hal_allocator_t allocator, size_t size, void** out_ptr);

// Allocates |count| * |element_size| zeroed bytes, checking the product.
HAL_API HAL_MUST_USE_RESULT hal_status_t
hal_allocator_malloc_array(hal_allocator_t allocator, size_t count,
                           size_t element_size, void** out_ptr);

// Grows or shrinks |*inout_ptr| to |size| bytes. On failure |*inout_ptr| is
// unchanged and still owned by the caller. New bytes are NOT zeroed.
HAL_API HAL_MUST_USE_RESULT hal_status_t
hal_allocator_realloc(hal_allocator_t allocator, size_t size, void** inout_ptr);

// Frees |ptr| (NULL is a no-op).
HAL_API void hal_allocator_free(hal_allocator_t allocator, void* ptr);

// Copies |length| bytes of |source| into a new allocation.
HAL_API HAL_MUST_USE_RESULT hal_status_t
hal_allocator_clone(hal_allocator_t allocator, const void* source,
                    size_t length, void** out_ptr);

// Copies a NUL-terminated string into a new allocation.
HAL_API HAL_MUST_USE_RESULT hal_status_t hal_allocator_strdup(
    hal_allocator_t allocator, const char* string, char** out_string);

HAL_EXTERN_C_END

#endif  // HAL_ALLOCATOR_H_
