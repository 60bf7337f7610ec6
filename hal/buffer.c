// Copyright 2026 The HAL Authors.

#include "hal/impl/buffer.h"

#include <inttypes.h>
#include <string.h>

#include "hal/impl/device.h"
#include "hal/impl/resource.h"

// How long an allocation that ran out of memory waits for the destroys of
// released buffers before it gives up (hal_device_allocator_allocate_buffer).
#define HAL_DEFERRED_FREE_WAIT_NS (10ll * 1000 * 1000 * 1000)

static const hal_buffer_vtable_t* hal_buffer_vtable(hal_buffer_t* buffer) {
  return (const hal_buffer_vtable_t*)buffer->resource.vtable;
}

HAL_API void hal_buffer_initialize(const hal_buffer_vtable_t* vtable,
                                   hal_device_t* device,
                                   hal_buffer_params_t params,
                                   uint64_t byte_length,
                                   hal_buffer_t* out_buffer) {
  hal_resource_initialize_kind(HAL_RESOURCE_KIND_BUFFER, vtable,
                               device ? &device->resource : NULL,
                               &out_buffer->resource);
  out_buffer->device = device;
  out_buffer->memory_type = params.memory_type;
  out_buffer->usage = params.usage;
  out_buffer->byte_length = byte_length;
}

HAL_API void hal_buffer_retain(hal_buffer_t* buffer) {
  hal_resource_retain(buffer ? &buffer->resource : NULL);
}

HAL_API void hal_buffer_release(hal_buffer_t* buffer) {
  hal_resource_release(buffer ? &buffer->resource : NULL);
}

HAL_API uint64_t hal_buffer_byte_length(const hal_buffer_t* buffer) {
  return hal_resource_is_kind(buffer, HAL_RESOURCE_KIND_BUFFER)
             ? buffer->byte_length
             : 0;
}

HAL_API hal_memory_type_t hal_buffer_memory_type(const hal_buffer_t* buffer) {
  return hal_resource_is_kind(buffer, HAL_RESOURCE_KIND_BUFFER)
             ? buffer->memory_type
             : 0;
}

HAL_API hal_buffer_usage_t hal_buffer_usage(const hal_buffer_t* buffer) {
  return hal_resource_is_kind(buffer, HAL_RESOURCE_KIND_BUFFER) ? buffer->usage
                                                                : 0;
}

HAL_API hal_device_t* hal_buffer_device(const hal_buffer_t* buffer) {
  return hal_resource_is_kind(buffer, HAL_RESOURCE_KIND_BUFFER) ? buffer->device
                                                                : NULL;
}

HAL_API hal_status_t hal_buffer_validate_range(const hal_buffer_t* buffer,
                                               uint64_t offset, uint64_t length,
                                               uint64_t* out_length) {
  HAL_RETURN_IF_ERROR(
      hal_resource_check_kind(buffer, HAL_RESOURCE_KIND_BUFFER, "buffer"));
  uint64_t size = buffer->byte_length;
  if (offset > size) {
    return hal_make_status(HAL_STATUS_OUT_OF_RANGE,
                           "offset %" PRIu64
                           " is past the end of a buffer of "
                           "%" PRIu64 " bytes",
                           offset, size);
  }
  if (length == HAL_WHOLE_BUFFER)
    length = size - offset;
  uint64_t end = 0;
  if (__builtin_add_overflow(offset, length, &end) || end > size) {
    return hal_make_status(HAL_STATUS_OUT_OF_RANGE,
                           "range [%" PRIu64 ", +%" PRIu64
                           ") exceeds a buffer "
                           "of %" PRIu64 " bytes",
                           offset, length, size);
  }
  if (out_length)
    *out_length = length;
  return HAL_OK;
}

HAL_API hal_status_t hal_buffer_map_range(hal_buffer_t* buffer,
                                          hal_mapping_access_t access,
                                          uint64_t offset, uint64_t length,
                                          hal_buffer_mapping_t* out_mapping) {
  if (!out_mapping) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT, "out_mapping is NULL");
  }
  memset(out_mapping, 0, sizeof(*out_mapping));
  HAL_RETURN_IF_ERROR(
      hal_resource_check_kind(buffer, HAL_RESOURCE_KIND_BUFFER, "buffer"));
  if (access == 0 || (access & ~(hal_mapping_access_t)3u)) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "mapping access 0x%x is not READ, WRITE or both",
                           access);
  }
  if (!(buffer->memory_type & HAL_MEMORY_TYPE_HOST_VISIBLE)) {
    return hal_make_status(HAL_STATUS_FAILED_PRECONDITION,
                           "buffer memory is not HOST_VISIBLE and cannot be "
                           "mapped; use hal_buffer_read/write");
  }
  if (!(buffer->usage & HAL_BUFFER_USAGE_MAPPING)) {
    return hal_make_status(HAL_STATUS_FAILED_PRECONDITION,
                           "buffer was allocated without MAPPING usage");
  }
  HAL_RETURN_IF_ERROR(
      hal_buffer_validate_range(buffer, offset, length, &length));
  void* contents = NULL;
  HAL_RETURN_IF_ERROR(hal_buffer_vtable(buffer)->map_range(
      buffer, access, offset, length, &contents));
  hal_buffer_retain(buffer);
  out_mapping->buffer = buffer;
  out_mapping->offset = offset;
  out_mapping->length = length;
  out_mapping->contents = contents;
  out_mapping->access = access;
  return HAL_OK;
}

HAL_API void hal_buffer_unmap(hal_buffer_mapping_t* mapping) {
  // Not a mapping hal_buffer_map_range made (its buffer of another kind):
  // nothing to undo, and no other vtable to call.
  if (!mapping ||
      !hal_resource_is_kind(mapping->buffer, HAL_RESOURCE_KIND_BUFFER)) {
    return;
  }
  hal_buffer_t* buffer = mapping->buffer;
  hal_buffer_vtable(buffer)->unmap_range(buffer, mapping->offset,
                                         mapping->length, mapping->contents);
  memset(mapping, 0, sizeof(*mapping));
  hal_buffer_release(buffer);
}

// Shared checks of hal_buffer_read/write.
static hal_status_t hal_buffer_validate_host_transfer(
    hal_buffer_t* buffer, uint64_t offset, const void* host, uint64_t length,
    hal_buffer_usage_t required_usage, const char* verb) {
  HAL_RETURN_IF_ERROR(
      hal_resource_check_kind(buffer, HAL_RESOURCE_KIND_BUFFER, "buffer"));
  if (length == HAL_WHOLE_BUFFER) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "%s needs an explicit length (the host memory's "
                           "size), not HAL_WHOLE_BUFFER",
                           verb);
  }
  if (!host && length) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "host pointer is NULL for a %s of %" PRIu64 " bytes",
                           verb, length);
  }
  if (!(buffer->usage & (required_usage | HAL_BUFFER_USAGE_MAPPING))) {
    return hal_make_status(HAL_STATUS_FAILED_PRECONDITION,
                           "buffer usage 0x%x allows no host %s (needs %s or "
                           "MAPPING)",
                           buffer->usage, verb,
                           required_usage == HAL_BUFFER_USAGE_TRANSFER_SOURCE
                               ? "TRANSFER_SOURCE"
                               : "TRANSFER_TARGET");
  }
  return hal_buffer_validate_range(buffer, offset, length, NULL);
}

HAL_API hal_status_t hal_buffer_read(hal_buffer_t* buffer, uint64_t offset,
                                     void* target, uint64_t length) {
  HAL_RETURN_IF_ERROR(hal_buffer_validate_host_transfer(
      buffer, offset, target, length, HAL_BUFFER_USAGE_TRANSFER_SOURCE,
      "read"));
  if (length == 0)
    return HAL_OK;
  return hal_buffer_vtable(buffer)->read(buffer, offset, target, length);
}

HAL_API hal_status_t hal_buffer_write(hal_buffer_t* buffer, uint64_t offset,
                                      const void* source, uint64_t length) {
  HAL_RETURN_IF_ERROR(hal_buffer_validate_host_transfer(
      buffer, offset, source, length, HAL_BUFFER_USAGE_TRANSFER_TARGET,
      "write"));
  if (length == 0)
    return HAL_OK;
  return hal_buffer_vtable(buffer)->write(buffer, offset, source, length);
}

//===----------------------------------------------------------------------===//
// hal_device_allocator_t
//===----------------------------------------------------------------------===//

// |allocator| must be a device's (hal_device_allocator() of its device): a
// wrong pointer (another object) is refused before its vtable is used.
static hal_status_t hal_device_allocator_check(
    hal_device_allocator_t* allocator) {
  if (!allocator) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT, "allocator is NULL");
  }
  hal_device_t* device = allocator->device;
  if (!hal_resource_is_kind(device, HAL_RESOURCE_KIND_DEVICE) ||
      hal_device_allocator(device) != allocator) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "allocator %p is not a device's allocator (from "
                           "hal_device_allocator)",
                           (void*)allocator);
  }
  return HAL_OK;
}

HAL_API hal_status_t hal_device_allocator_allocate_buffer(
    hal_device_allocator_t* allocator, hal_buffer_params_t params,
    uint64_t byte_length, hal_buffer_t** out_buffer) {
  if (!out_buffer) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT, "out_buffer is NULL");
  }
  *out_buffer = NULL;
  HAL_RETURN_IF_ERROR(hal_device_allocator_check(allocator));
  if (params.memory_type & ~(hal_memory_type_t)HAL_MEMORY_TYPE_ALL_) {
    return hal_make_status(
        HAL_STATUS_INVALID_ARGUMENT, "unknown memory type bits 0x%x",
        params.memory_type & ~(unsigned)HAL_MEMORY_TYPE_ALL_);
  }
  if (!(params.memory_type &
        (HAL_MEMORY_TYPE_DEVICE_LOCAL | HAL_MEMORY_TYPE_HOST_VISIBLE))) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "memory type must include DEVICE_LOCAL or "
                           "HOST_VISIBLE");
  }
  if (params.usage == 0 ||
      (params.usage & ~(hal_buffer_usage_t)HAL_BUFFER_USAGE_ALL_)) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "buffer usage 0x%x is empty or has unknown bits",
                           params.usage);
  }
  if ((params.usage & HAL_BUFFER_USAGE_MAPPING) &&
      !(params.memory_type & HAL_MEMORY_TYPE_HOST_VISIBLE)) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "MAPPING usage needs HOST_VISIBLE memory");
  }
  if (byte_length == 0) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "buffers must have at least one byte");
  }
  if (byte_length > (uint64_t)SIZE_MAX) {
    return hal_make_status(HAL_STATUS_OUT_OF_RANGE,
                           "buffer size %" PRIu64 " exceeds the address space",
                           byte_length);
  }
  // A buffer its caller released while queue work still used it is
  // destroyed on libhal's release thread once that work completed (queue
  // threads never run a destroy, and a vendor free may synchronize the
  // whole device), a moment after the work's signals. A caller that saw
  // those signals must not run out of memory such a buffer still holds:
  // wait for the destroys handed over (bounded) and try once more. Counted
  // from before the try: a destroy may finish between the failure and the
  // wait.
  uint64_t destroys_finished = hal_resource_deferred_destroys_finished();
  hal_status_t status = allocator->vtable->allocate_buffer(
      allocator, params, byte_length, out_buffer);
  if (hal_status_code(status) == HAL_STATUS_RESOURCE_EXHAUSTED &&
      hal_resource_wait_deferred_destroys(
          destroys_finished, hal_time_now() + HAL_DEFERRED_FREE_WAIT_NS)) {
    hal_status_free(status);
    status = allocator->vtable->allocate_buffer(allocator, params, byte_length,
                                                out_buffer);
  }
  return status;
}

HAL_API hal_status_t hal_device_allocator_query_stats(
    hal_device_allocator_t* allocator, hal_memory_stats_t* out_stats) {
  if (!allocator || !out_stats) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "allocator and out_stats must not be NULL");
  }
  memset(out_stats, 0, sizeof(*out_stats));
  HAL_RETURN_IF_ERROR(hal_device_allocator_check(allocator));
  return allocator->vtable->query_stats(allocator, out_stats);
}
