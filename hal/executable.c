// Copyright 2026 The HAL Authors.

#include "hal/impl/executable.h"

#include <string.h>

#include "hal/impl/device.h"

HAL_API bool hal_executable_format_in_list(const char* formats,
                                           const char* format) {
  if (!formats || !format || !*format)
    return false;
  size_t length = strlen(format);
  for (const char* p = formats; *p;) {
    const char* end = strchr(p, ',');
    size_t item = end ? (size_t)(end - p) : strlen(p);
    if (item == length && strncmp(p, format, length) == 0)
      return true;
    if (!end)
      break;
    p = end + 1;
  }
  return false;
}

// Checks the entry point table of |params|.
static hal_status_t hal_executable_validate_entry_points(
    const hal_executable_params_t* params) {
  if (params->entry_point_count == 0 || !params->entry_points ||
      params->entry_point_count > HAL_MAX_EXECUTABLE_ENTRY_POINTS) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "an executable needs 1..%d entry points, got %zu%s",
                           HAL_MAX_EXECUTABLE_ENTRY_POINTS,
                           params->entry_point_count,
                           params->entry_points ? "" : " (NULL list)");
  }
  for (size_t i = 0; i < params->entry_point_count; ++i) {
    const hal_entry_point_params_t* entry = &params->entry_points[i];
    if (!entry->name || !*entry->name ||
        strlen(entry->name) >= HAL_MAX_ENTRY_POINT_NAME) {
      return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                             "entry point %zu has no name or a name of %d or "
                             "more characters",
                             i, HAL_MAX_ENTRY_POINT_NAME);
    }
    if (entry->binding_count > HAL_MAX_DISPATCH_BINDINGS ||
        entry->constant_count > HAL_MAX_DISPATCH_CONSTANTS) {
      return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                             "entry point '%s' declares %u bindings and %u "
                             "constants (limits %d and %d)",
                             entry->name, entry->binding_count,
                             entry->constant_count, HAL_MAX_DISPATCH_BINDINGS,
                             HAL_MAX_DISPATCH_CONSTANTS);
    }
    for (size_t j = 0; j < i; ++j) {
      if (strcmp(params->entry_points[j].name, entry->name) == 0) {
        return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                               "entry point '%s' is listed twice", entry->name);
      }
    }
  }
  return HAL_OK;
}

HAL_API hal_status_t hal_device_create_executable(
    hal_device_t* device, const hal_executable_params_t* params,
    hal_executable_t** out_executable) {
  if (!out_executable) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "out_executable is NULL");
  }
  *out_executable = NULL;
  if (!device || !params) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "device and params must not be NULL");
  }
  HAL_RETURN_IF_ERROR(
      hal_resource_check_kind(device, HAL_RESOURCE_KIND_DEVICE, "device"));
  if (!params->format || !params->data || params->data_size == 0) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "an executable needs a format and non-empty data");
  }
  HAL_RETURN_IF_ERROR(hal_executable_validate_entry_points(params));
  hal_device_properties_t properties;
  HAL_RETURN_IF_ERROR(hal_device_query_properties(device, &properties));
  const char* formats =
      properties.executable_formats ? properties.executable_formats : "";
  if (!hal_executable_format_in_list(formats, params->format)) {
    return hal_make_status(HAL_STATUS_UNIMPLEMENTED,
                           "device '%s' does not load executable format "
                           "'%s'; it loads: %s",
                           device->info.name, params->format,
                           *formats ? formats : "(none)");
  }
  const hal_device_vtable_t* vtable =
      (const hal_device_vtable_t*)device->resource.vtable;
  return hal_status_annotatef(
      vtable->create_executable(device, params, out_executable),
      "creating a '%s' executable of %zu bytes", params->format,
      params->data_size);
}

HAL_API hal_status_t hal_executable_initialize(
    const hal_executable_vtable_t* vtable, hal_device_t* device,
    const hal_executable_params_t* params, hal_executable_t* out_executable) {
  hal_entry_point_info_t* entries = NULL;
  HAL_RETURN_IF_ERROR(hal_allocator_malloc_array(
      device->host_allocator, params->entry_point_count,
      sizeof(hal_entry_point_info_t), (void**)&entries));
  for (size_t i = 0; i < params->entry_point_count; ++i) {
    const hal_entry_point_params_t* entry = &params->entry_points[i];
    memcpy(entries[i].name, entry->name, strlen(entry->name) + 1);
    entries[i].binding_count = entry->binding_count;
    entries[i].constant_count = entry->constant_count;
  }
  hal_resource_initialize_kind(HAL_RESOURCE_KIND_EXECUTABLE, vtable,
                               &device->resource, &out_executable->resource);
  out_executable->device = device;
  out_executable->entry_point_count = params->entry_point_count;
  out_executable->entry_points = entries;
  out_executable->host_allocator = device->host_allocator;
  return HAL_OK;
}

HAL_API void hal_executable_deinitialize(hal_executable_t* executable) {
  hal_allocator_free(executable->host_allocator, executable->entry_points);
  executable->entry_points = NULL;
}

HAL_API void hal_executable_retain(hal_executable_t* executable) {
  hal_resource_retain(executable ? &executable->resource : NULL);
}

HAL_API void hal_executable_release(hal_executable_t* executable) {
  hal_resource_release(executable ? &executable->resource : NULL);
}

HAL_API size_t
hal_executable_entry_point_count(const hal_executable_t* executable) {
  return hal_resource_is_kind(executable, HAL_RESOURCE_KIND_EXECUTABLE)
             ? executable->entry_point_count
             : 0;
}

HAL_API const hal_entry_point_info_t* hal_executable_entry_point_info(
    const hal_executable_t* executable, size_t index) {
  if (!hal_resource_is_kind(executable, HAL_RESOURCE_KIND_EXECUTABLE) ||
      index >= executable->entry_point_count) {
    return NULL;
  }
  return &executable->entry_points[index];
}

HAL_API hal_status_t hal_executable_lookup_entry_point(
    const hal_executable_t* executable, const char* name, size_t* out_index) {
  if (!executable || !name || !out_index) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "executable, name and out_index must not be NULL");
  }
  HAL_RETURN_IF_ERROR(hal_resource_check_kind(
      executable, HAL_RESOURCE_KIND_EXECUTABLE, "executable"));
  for (size_t i = 0; i < executable->entry_point_count; ++i) {
    if (strcmp(executable->entry_points[i].name, name) == 0) {
      *out_index = i;
      return HAL_OK;
    }
  }
  return hal_make_status(HAL_STATUS_NOT_FOUND,
                         "the executable has no entry point '%s'", name);
}
