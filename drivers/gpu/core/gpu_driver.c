// Copyright 2026 The HAL Authors.

#include <assert.h>
#include <stdio.h>
#include <string.h>

#include "gpu_core.h"

static const hal_driver_vtable_t gpu_driver_vtable;

static gpu_driver_t* gpu_driver_cast(hal_driver_t* driver) {
  return HAL_RESOURCE_CAST(gpu_driver_t, driver, &gpu_driver_vtable);
}

static void gpu_driver_destroy(hal_driver_t* base) {
  gpu_driver_t* driver = gpu_driver_cast(base);
  gpu_driver_ccl_destroy(driver);
  pthread_mutex_destroy(&driver->ccl_mutex);
  gpu_adapter_destroy(driver->adapter);
  hal_allocator_free(base->host_allocator, driver->device_infos);
  hal_allocator_free(base->host_allocator, driver);
}

static hal_status_t gpu_driver_query_device_count(hal_driver_t* base,
                                                  uint32_t* out_count) {
  *out_count = gpu_driver_cast(base)->device_count;
  return HAL_OK;
}

static hal_status_t gpu_driver_query_device_info(hal_driver_t* base,
                                                 uint32_t index,
                                                 hal_device_info_t* out_info) {
  *out_info = gpu_driver_cast(base)->device_infos[index];
  return HAL_OK;
}

static hal_status_t gpu_driver_create_device(hal_driver_t* base, uint32_t index,
                                             hal_allocator_t host_allocator,
                                             hal_device_t** out_device) {
  return gpu_device_create(gpu_driver_cast(base), index, host_allocator,
                           out_device);
}

static const hal_driver_vtable_t gpu_driver_vtable = {
    .destroy = gpu_driver_destroy,
    .query_device_count = gpu_driver_query_device_count,
    .query_device_info = gpu_driver_query_device_info,
    .create_device = gpu_driver_create_device,
};

// The capabilities a strategy cannot do without, checked once here so that
// a runtime lacking one fails at driver creation rather than at the end()
// of the first command buffer that needs it.
static hal_status_t gpu_driver_check_capabilities(
    const gpu_driver_params_t* params, const gpu_adapter_t* adapter) {
  uint32_t missing =
      params->strategy->required_capabilities & ~adapter->info.capabilities;
  if (!missing)
    return HAL_OK;
  // Without graphs no node kind is available either: name the cause.
  if (missing & GPU_ADAPTER_CAP_GRAPH)
    missing = GPU_ADAPTER_CAP_GRAPH;
  static const struct {
    uint32_t capability;
    const char* what;
  } kParts[] = {
      {GPU_ADAPTER_CAP_GRAPH, "graphs"},
      {GPU_ADAPTER_CAP_GRAPH_MEMSET_NODE, "graph memset nodes (fills)"},
      {GPU_ADAPTER_CAP_GRAPH_MEMCPY_NODE,
       "graph memcpy nodes (updates, copies)"},
      {GPU_ADAPTER_CAP_GRAPH_KERNEL_NODE, "graph kernel nodes (dispatches)"},
  };
  char parts[160] = "";
  size_t length = 0;
  for (size_t i = 0; i < HAL_ARRAYSIZE(kParts); ++i) {
    if (!(missing & kParts[i].capability) || length >= sizeof(parts))
      continue;
    int written = snprintf(parts + length, sizeof(parts) - length, "%s%s",
                           length ? ", " : "", kParts[i].what);
    if (written > 0)
      length += (size_t)written;
  }
  // The adapter names every optional entry point it did not find (or was
  // told to hide); those behind the bits above are among them.
  return hal_make_status(
      HAL_STATUS_UNIMPLEMENTED,
      "driver '%s' needs %s, which the %s runtime %s lacks (its missing "
      "optional entry points: %s)",
      params->name, parts, adapter->info.vendor_name,
      adapter->info.library_path,
      adapter->info.missing_optional_symbols[0]
          ? adapter->info.missing_optional_symbols
          : "unknown");
}

// Reads |device|'s UUID into |info|. A runtime with no UUID for it
// (UNIMPLEMENTED) leaves has_uuid false; any other failure is the
// driver's, as a failed name query is.
static hal_status_t gpu_driver_read_uuid(gpu_adapter_t* adapter, int device,
                                         hal_device_info_t* info) {
  static_assert(HAL_DEVICE_UUID_SIZE == GPU_ADAPTER_UUID_SIZE,
                "the HAL's UUID is the adapter's");
  memset(info->uuid, 0, sizeof(info->uuid));
  info->has_uuid = false;
  hal_status_t status = adapter->ops->device_uuid(adapter, device, info->uuid);
  if (hal_status_code(status) == HAL_STATUS_UNIMPLEMENTED) {
    hal_status_free(status);
    return HAL_OK;
  }
  HAL_RETURN_IF_ERROR(status);
  info->has_uuid = true;
  return HAL_OK;
}

// Reads every device's info once: names, sizes and UUIDs do not change.
static hal_status_t gpu_driver_enumerate(gpu_driver_t* driver) {
  gpu_adapter_t* adapter = driver->adapter;
  int count = 0;
  HAL_RETURN_IF_ERROR(adapter->ops->device_count(adapter, &count));
  if (count <= 0) {
    return hal_make_status(
        HAL_STATUS_NOT_FOUND, "driver '%s' found no devices: %s",
        driver->base.name,
        adapter->info.no_device_reason ? adapter->info.no_device_reason
                                       : "the runtime reports 0 devices");
  }
  HAL_RETURN_IF_ERROR(hal_allocator_malloc_array(
      driver->base.host_allocator, (size_t)count, sizeof(hal_device_info_t),
      (void**)&driver->device_infos));
  for (int i = 0; i < count; ++i) {
    hal_device_info_t* info = &driver->device_infos[i];
    info->index = (uint32_t)i;
    info->queue_count = GPU_QUEUE_COUNT;
    hal_status_t status =
        adapter->ops->device_name(adapter, i, info->name, sizeof(info->name));
    if (status == HAL_OK) {
      status =
          adapter->ops->device_total_memory(adapter, i, &info->total_memory);
    }
    if (status == HAL_OK)
      status = gpu_driver_read_uuid(adapter, i, info);
    if (status != HAL_OK) {
      // The driver lists every device or none: which one failed is what
      // the user acts on. A lost device is not such a failure: CUDA and
      // the virtual GPU still answer the queries of its fixed properties,
      // and creating a device on it fails with the loss.
      return hal_status_annotatef(status, "reading device %d of %d's info", i,
                                  count);
    }
  }
  driver->device_count = (uint32_t)count;
  return HAL_OK;
}

hal_status_t gpu_driver_create(const gpu_driver_params_t* params,
                               hal_allocator_t host_allocator,
                               hal_driver_t** out_driver) {
  *out_driver = NULL;
  gpu_driver_t* driver = NULL;
  HAL_RETURN_IF_ERROR(
      hal_allocator_malloc(host_allocator, sizeof(*driver), (void**)&driver));
  hal_driver_initialize(&gpu_driver_vtable, params->name, host_allocator,
                        &driver->base);
  driver->strategy = params->strategy;
  driver->device_count = 0;
  driver->device_infos = NULL;
  driver->ccl = NULL;
  pthread_mutex_init(&driver->ccl_mutex, NULL);
  hal_status_t status = gpu_adapter_create(params->vendor, NULL, host_allocator,
                                           &driver->adapter);
  if (status == HAL_OK) {
    status = gpu_driver_check_capabilities(params, driver->adapter);
  }
  if (status == HAL_OK)
    status = gpu_driver_enumerate(driver);
  if (status != HAL_OK) {
    hal_driver_release(&driver->base);  // destroy copes with partial state
    return hal_status_annotatef(status, "creating driver '%s'", params->name);
  }
  *out_driver = &driver->base;
  return HAL_OK;
}
