// Copyright 2026 The HAL Authors.
//
// hal_driver_t for drivers: the shared fields a driver type embeds first,
// and the vtable it implements.

#ifndef HAL_IMPL_DRIVER_H_
#define HAL_IMPL_DRIVER_H_

#include "hal/driver.h"
#include "hal/impl/resource.h"

HAL_EXTERN_C_BEGIN

// Shared fields; drivers embed this first in their driver type.
typedef struct hal_driver_t {
  hal_resource_t resource;
  char name[HAL_DRIVER_NAME_MAX];
  hal_allocator_t host_allocator;
} hal_driver_t;
HAL_RESOURCE_ASSERT_LAYOUT(hal_driver_t, resource);

HAL_API void hal_driver_initialize(const hal_driver_vtable_t* vtable,
                                   const char* name,
                                   hal_allocator_t host_allocator,
                                   hal_driver_t* out_driver);

// All members are required and thread-safe. Arguments are validated first.
struct hal_driver_vtable_t {
  // Frees the driver (all its devices are already gone: they keep it alive).
  void (*destroy)(hal_driver_t* driver);
  hal_status_t (*query_device_count)(hal_driver_t* driver, uint32_t* out_count);
  // |index| < the count the driver reported.
  hal_status_t (*query_device_info)(hal_driver_t* driver, uint32_t index,
                                    hal_device_info_t* out_info);
  // Creates a device; the implementation calls hal_device_initialize(),
  // which makes the driver the device's parent.
  hal_status_t (*create_device)(hal_driver_t* driver, uint32_t index,
                                hal_allocator_t host_allocator,
                                hal_device_t** out_device);
};

HAL_EXTERN_C_END

#endif  // HAL_IMPL_DRIVER_H_
