// Copyright 2026 The HAL Authors.
//
// hal_semaphore_t for implementations: its shared fields, the list
// validator every submission path uses, and the vtable.

#ifndef HAL_IMPL_SEMAPHORE_H_
#define HAL_IMPL_SEMAPHORE_H_

#include "hal/impl/resource.h"
#include "hal/semaphore.h"

HAL_EXTERN_C_BEGIN

// Shared fields; an implementation embeds this first in its semaphore type.
typedef struct hal_semaphore_t {
  hal_resource_t resource;
} hal_semaphore_t;
HAL_RESOURCE_ASSERT_LAYOUT(hal_semaphore_t, resource);

// Checks a (semaphore, value) list: non-NULL arrays when count > 0, no NULL
// semaphore, no value in the failure range. |what| ("wait", "signal")
// names the list in the INVALID_ARGUMENT message. The one validator of
// lists: device submissions, list waits and the sync queue all use it.
HAL_API HAL_MUST_USE_RESULT hal_status_t
hal_semaphore_list_validate(hal_semaphore_list_t list, const char* what);

// Each member is required. Arguments are validated by the public wrappers
// above before the vtable is called (non-NULL objects, value ranges). The sync
// module's semaphore is the implementation every driver uses
// (hal/sync/sync_queue.h: hal_sync_semaphore_create); the vtable stays so that
// a wrapper type remains possible. hal_semaphore_list_wait() over semaphores
// that are not the sync module's supports ALL only (one wait per entry) and
// returns UNIMPLEMENTED for ANY.
struct hal_semaphore_vtable_t {
  // Frees the semaphore. Called once, by the last release, on any thread.
  void (*destroy)(hal_semaphore_t* semaphore);
  hal_status_t (*query)(hal_semaphore_t* semaphore, uint64_t* out_value);
  hal_status_t (*signal)(hal_semaphore_t* semaphore, uint64_t new_value);
  void (*fail)(hal_semaphore_t* semaphore, hal_status_t status);
  hal_status_t (*wait)(hal_semaphore_t* semaphore, uint64_t value,
                       hal_timeout_t timeout);
};

HAL_EXTERN_C_END

#endif  // HAL_IMPL_SEMAPHORE_H_
