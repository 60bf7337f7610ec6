// Copyright 2026 The HAL Authors.
//
// hal_buffer_t and hal_device_allocator_t for drivers: the shared fields a
// driver's buffer type embeds first, and the vtables it implements.

#ifndef HAL_IMPL_BUFFER_H_
#define HAL_IMPL_BUFFER_H_

#include "hal/buffer.h"
#include "hal/impl/resource.h"

HAL_EXTERN_C_BEGIN

// The fields every buffer shares; set by hal_buffer_initialize() and read by
// the validating wrappers. Drivers embed this first in their buffer type.
typedef struct hal_buffer_t {
  hal_resource_t resource;  // parent: the owning device
  hal_device_t* device;     // borrowed: kept alive by resource.parent
  hal_memory_type_t memory_type;
  hal_buffer_usage_t usage;
  uint64_t byte_length;
} hal_buffer_t;
HAL_RESOURCE_ASSERT_LAYOUT(hal_buffer_t, resource);

// Makes buffers for one device. Owned by the device (not refcounted on its
// own: it lives exactly as long as its device).
typedef struct hal_device_allocator_t {
  const hal_device_allocator_vtable_t* vtable;
  hal_device_t* device;  // borrowed
} hal_device_allocator_t;

// Fills the shared fields and retains |device| as the buffer's parent.
HAL_API void hal_buffer_initialize(const hal_buffer_vtable_t* vtable,
                                   hal_device_t* device,
                                   hal_buffer_params_t params,
                                   uint64_t byte_length,
                                   hal_buffer_t* out_buffer);

// Every member is required. Ranges are validated (in bounds, resolved
// lengths, usage and memory type allow the access) before these are called.
struct hal_buffer_vtable_t {
  // Frees the memory and the object. Any thread; the device is still alive.
  void (*destroy)(hal_buffer_t* buffer);
  // Returns the host address of |offset| (host-visible buffers only).
  hal_status_t (*map_range)(hal_buffer_t* buffer, hal_mapping_access_t access,
                            uint64_t offset, uint64_t length,
                            void** out_contents);
  void (*unmap_range)(hal_buffer_t* buffer, uint64_t offset, uint64_t length,
                      void* contents);
  // Synchronous copies between the buffer and host memory (length > 0).
  hal_status_t (*read)(hal_buffer_t* buffer, uint64_t offset, void* target,
                       uint64_t length);
  hal_status_t (*write)(hal_buffer_t* buffer, uint64_t offset,
                        const void* source, uint64_t length);
};

struct hal_device_allocator_vtable_t {
  // Makes a buffer; |params| are validated and byte_length > 0.
  hal_status_t (*allocate_buffer)(hal_device_allocator_t* allocator,
                                  hal_buffer_params_t params,
                                  uint64_t byte_length,
                                  hal_buffer_t** out_buffer);
  hal_status_t (*query_stats)(hal_device_allocator_t* allocator,
                              hal_memory_stats_t* out_stats);
};

HAL_EXTERN_C_END

#endif  // HAL_IMPL_BUFFER_H_
