// Copyright 2026 The HAL Authors.
//
// The device allocator and buffers: device memory for DEVICE_LOCAL, pinned
// host memory for HOST_VISIBLE (mappable, and reachable by the device).

#include <inttypes.h>
#include <string.h>

#include "gpu_core.h"

static gpu_device_t* gpu_buffer_device(hal_buffer_t* buffer) {
  return gpu_device_cast(buffer->device);
}

// Any thread (including libhal's release thread): makes the context
// current before freeing.
static void gpu_buffer_destroy(hal_buffer_t* base) {
  gpu_buffer_t* buffer = gpu_buffer_cast(base);
  gpu_device_t* device = gpu_buffer_device(base);
  gpu_adapter_t* adapter = device->adapter;
  hal_status_ignore(gpu_device_make_current(device));
  if (buffer->queue_ordered) {
    gpu_buffer_queue_ordered_free(device, buffer);
    gpu_alloca_release_event(buffer);
  } else if (buffer->host_pointer) {
    gpu_device_note_release(
        device, adapter->ops->host_free(adapter, buffer->host_pointer));
  } else {
    gpu_device_note_release(
        device, adapter->ops->device_free(adapter, buffer->address));
  }
  if (!buffer->queue_ordered) {
    atomic_fetch_sub_explicit(&device->allocated_bytes, base->byte_length,
                              memory_order_relaxed);
    atomic_fetch_sub_explicit(&device->allocation_count, 1,
                              memory_order_relaxed);
  }
  hal_allocator_free(device->base.host_allocator, buffer);
}

static hal_status_t gpu_buffer_map_range(hal_buffer_t* base,
                                         hal_mapping_access_t access,
                                         uint64_t offset, uint64_t length,
                                         void** out_contents) {
  *out_contents = (uint8_t*)gpu_buffer_cast(base)->host_pointer + offset;
  return HAL_OK;
}

static void gpu_buffer_unmap_range(hal_buffer_t* base, uint64_t offset,
                                   uint64_t length, void* contents) {
  // Pinned host memory is coherent: nothing to flush.
}

// Host transfers reach a queue-ordered buffer only while it has memory. A
// lost device refuses them with its loss; a loss they meet is recorded.
static hal_status_t gpu_buffer_read(hal_buffer_t* base, uint64_t offset,
                                    void* target, uint64_t length) {
  gpu_device_t* device = gpu_buffer_device(base);
  gpu_device_ptr_t source = 0;
  HAL_RETURN_IF_ERROR(gpu_buffer_issue_address(base, offset, &source));
  HAL_RETURN_IF_ERROR(gpu_device_check_lost(device));
  HAL_RETURN_IF_ERROR(gpu_device_note(device, gpu_device_make_current(device)));
  return gpu_device_note(
      device, device->adapter->ops->memcpy_sync(
                  device->adapter, gpu_host_address(target), source, length));
}

static hal_status_t gpu_buffer_write(hal_buffer_t* base, uint64_t offset,
                                     const void* source, uint64_t length) {
  gpu_device_t* device = gpu_buffer_device(base);
  gpu_device_ptr_t target = 0;
  HAL_RETURN_IF_ERROR(gpu_buffer_issue_address(base, offset, &target));
  HAL_RETURN_IF_ERROR(gpu_device_check_lost(device));
  HAL_RETURN_IF_ERROR(gpu_device_note(device, gpu_device_make_current(device)));
  return gpu_device_note(
      device, device->adapter->ops->memcpy_sync(
                  device->adapter, target, gpu_host_address(source), length));
}

const hal_buffer_vtable_t gpu_buffer_vtable = {
    .destroy = gpu_buffer_destroy,
    .map_range = gpu_buffer_map_range,
    .unmap_range = gpu_buffer_unmap_range,
    .read = gpu_buffer_read,
    .write = gpu_buffer_write,
};

static hal_status_t gpu_allocator_allocate_buffer(
    hal_device_allocator_t* allocator, hal_buffer_params_t params,
    uint64_t byte_length, hal_buffer_t** out_buffer) {
  gpu_device_t* device = gpu_device_cast(allocator->device);
  gpu_adapter_t* adapter = device->adapter;
  HAL_RETURN_IF_ERROR(gpu_device_check_lost(device));
  if (byte_length > device->base.info.total_memory) {
    return hal_make_status(HAL_STATUS_RESOURCE_EXHAUSTED,
                           "a buffer of %" PRIu64 " bytes exceeds the %" PRIu64
                           " bytes of device '%s'",
                           byte_length, device->base.info.total_memory,
                           device->base.info.name);
  }
  gpu_buffer_t* buffer = NULL;
  HAL_RETURN_IF_ERROR(hal_allocator_malloc(device->base.host_allocator,
                                           sizeof(*buffer), (void**)&buffer));
  hal_status_t status = gpu_device_make_current(device);
  if (status == HAL_OK) {
    if (params.memory_type & HAL_MEMORY_TYPE_HOST_VISIBLE) {
      status =
          adapter->ops->host_alloc(adapter, byte_length, &buffer->host_pointer);
      buffer->address = gpu_host_address(buffer->host_pointer);
    } else {
      status =
          adapter->ops->device_alloc(adapter, byte_length, &buffer->address);
      if (hal_status_code(status) == HAL_STATUS_RESOURCE_EXHAUSTED &&
          device->alloca_pool) {
        // Memory deallocated (or freed by a released alloca'd buffer) goes
        // back to the queue-ordered pool, which keeps it idle for the next
        // alloca: give that back to the device and try once more, so that
        // memory whose dealloca was seen signaled can be allocated here.
        hal_status_t trimmed =
            adapter->ops->pool_trim(adapter, device->alloca_pool, 0);
        if (trimmed == HAL_OK) {
          hal_status_free(status);
          status = adapter->ops->device_alloc(adapter, byte_length,
                                              &buffer->address);
        } else {
          hal_status_free(trimmed);
        }
      }
    }
  }
  if (status != HAL_OK) {
    hal_allocator_free(device->base.host_allocator, buffer);
    return gpu_device_note(device, status);
  }
  hal_buffer_initialize(&gpu_buffer_vtable, &device->base, params, byte_length,
                        &buffer->base);
  atomic_fetch_add_explicit(&device->allocated_bytes, byte_length,
                            memory_order_relaxed);
  atomic_fetch_add_explicit(&device->allocation_count, 1, memory_order_relaxed);
  *out_buffer = &buffer->base;
  return HAL_OK;
}

static hal_status_t gpu_allocator_query_stats(hal_device_allocator_t* allocator,
                                              hal_memory_stats_t* out_stats) {
  gpu_device_t* device = gpu_device_cast(allocator->device);
  out_stats->total_bytes = device->base.info.total_memory;
  out_stats->allocated_bytes =
      atomic_load_explicit(&device->allocated_bytes, memory_order_relaxed);
  out_stats->allocation_count =
      atomic_load_explicit(&device->allocation_count, memory_order_relaxed);
  return HAL_OK;
}

const hal_device_allocator_vtable_t gpu_device_allocator_vtable = {
    .allocate_buffer = gpu_allocator_allocate_buffer,
    .query_stats = gpu_allocator_query_stats,
};
