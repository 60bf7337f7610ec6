// Copyright 2026 The HAL Authors.
//
// hal_executable_t for drivers: the shared fields a driver's executable
// type embeds first, and the vtable it implements.

#ifndef HAL_IMPL_EXECUTABLE_H_
#define HAL_IMPL_EXECUTABLE_H_

#include "hal/executable.h"
#include "hal/impl/resource.h"

HAL_EXTERN_C_BEGIN

// Shared fields; drivers embed this first in their executable type.
typedef struct hal_executable_t {
  hal_resource_t resource;  // parent: the device
  hal_device_t* device;     // borrowed: kept alive by resource.parent
  size_t entry_point_count;
  hal_entry_point_info_t* entry_points;  // owned, [entry_point_count]
  hal_allocator_t host_allocator;
} hal_executable_t;
HAL_RESOURCE_ASSERT_LAYOUT(hal_executable_t, resource);

// Fills the shared fields from validated |params| (copying the entry point
// table) and makes |device| the parent. On failure nothing is retained.
HAL_API HAL_MUST_USE_RESULT hal_status_t hal_executable_initialize(
    const hal_executable_vtable_t* vtable, hal_device_t* device,
    const hal_executable_params_t* params, hal_executable_t* out_executable);

// Frees what hal_executable_initialize() allocated (call from destroy).
HAL_API void hal_executable_deinitialize(hal_executable_t* executable);

struct hal_executable_vtable_t {
  // Unloads the code. Any thread; no command buffer refers to it any more.
  void (*destroy)(hal_executable_t* executable);
};

HAL_EXTERN_C_END

#endif  // HAL_IMPL_EXECUTABLE_H_
