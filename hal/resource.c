// Copyright 2026 The HAL Authors.

#include "hal/resource.h"

#include <stdio.h>
#include <stdlib.h>

HAL_API void hal_resource_initialize(const void* vtable, hal_resource_t* parent,
                                     hal_resource_t* out_resource) {
  atomic_init(&out_resource->ref_count, 1);
  out_resource->vtable = vtable;
  out_resource->parent = parent;
  if (parent)
    hal_resource_retain(parent);
}

HAL_API void hal_resource_retain(hal_resource_t* resource) {
  if (!resource)
    return;
  // Relaxed is enough: a reference can only be copied from one already held.
  intptr_t previous =
      atomic_fetch_add_explicit(&resource->ref_count, 1, memory_order_relaxed);
  if (HAL_UNLIKELY(previous <= 0)) {
    fprintf(stderr, "hal: retain of a destroyed resource %p\n",
            (void*)resource);
    abort();
  }
}

HAL_API void hal_resource_release(hal_resource_t* resource) {
  while (resource) {
    // acq_rel on the count itself (no standalone fence, which TSan cannot
    // see): the last releaser observes every write made under the other
    // references before it destroys.
    intptr_t previous = atomic_fetch_sub_explicit(&resource->ref_count, 1,
                                                  memory_order_acq_rel);
    if (HAL_UNLIKELY(previous <= 0)) {
      fprintf(stderr, "hal: release of a destroyed resource %p\n",
              (void*)resource);
      abort();
    }
    if (previous != 1)
      return;
    hal_resource_t* parent = resource->parent;
    hal_resource_destroy_fn_t destroy =
        *(const hal_resource_destroy_fn_t*)resource->vtable;
    destroy(resource);
    // The parent goes last: its code (a plugin) must outlive the child's
    // destroy. Iterate instead of recursing so long chains cannot overflow.
    resource = parent;
  }
}

HAL_API intptr_t hal_resource_ref_count(const hal_resource_t* resource) {
  return atomic_load_explicit(&((hal_resource_t*)resource)->ref_count,
                              memory_order_relaxed);
}
