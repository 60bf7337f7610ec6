// Copyright 2026 The HAL Authors.

#include "hal/impl/driver.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "hal/impl/device.h"

HAL_API void hal_driver_initialize(const hal_driver_vtable_t* vtable,
                                   const char* name,
                                   hal_allocator_t host_allocator,
                                   hal_driver_t* out_driver) {
  hal_resource_initialize_kind(HAL_RESOURCE_KIND_DRIVER, vtable, NULL,
                               &out_driver->resource);
  snprintf(out_driver->name, sizeof(out_driver->name), "%s", name ? name : "");
  out_driver->host_allocator = host_allocator;
}

HAL_API void hal_device_uuid_format(const uint8_t uuid[HAL_DEVICE_UUID_SIZE],
                                    char out_text[HAL_DEVICE_UUID_TEXT_SIZE]) {
  static const char kDigits[] = "0123456789abcdef";
  size_t length = 0;
  for (size_t i = 0; i < HAL_DEVICE_UUID_SIZE; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10)
      out_text[length++] = '-';
    out_text[length++] = kDigits[uuid[i] >> 4];
    out_text[length++] = kDigits[uuid[i] & 0xF];
  }
  out_text[length] = '\0';
}

static int hal_hex_digit(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

HAL_API bool hal_device_uuid_parse(const char* text,
                                   uint8_t out_uuid[HAL_DEVICE_UUID_SIZE]) {
  uint8_t bytes[HAL_DEVICE_UUID_SIZE];
  memset(out_uuid, 0, HAL_DEVICE_UUID_SIZE);
  if (!text)
    return false;
  if (strncasecmp(text, "GPU-", 4) == 0)
    text += 4;
  if (strlen(text) != HAL_DEVICE_UUID_TEXT_SIZE - 1)
    return false;
  size_t byte = 0;
  for (size_t i = 0; i < HAL_DEVICE_UUID_TEXT_SIZE - 1;) {
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (text[i++] != '-')
        return false;
      continue;
    }
    int high = hal_hex_digit(text[i]);
    int low = hal_hex_digit(text[i + 1]);
    if (high < 0 || low < 0)
      return false;
    bytes[byte++] = (uint8_t)(high << 4 | low);
    i += 2;
  }
  memcpy(out_uuid, bytes, sizeof(bytes));
  return true;
}

HAL_API void hal_driver_retain(hal_driver_t* driver) {
  hal_resource_retain(driver ? &driver->resource : NULL);
}

HAL_API void hal_driver_release(hal_driver_t* driver) {
  hal_resource_release(driver ? &driver->resource : NULL);
}

static const hal_driver_vtable_t* hal_driver_vtable(hal_driver_t* driver) {
  return (const hal_driver_vtable_t*)driver->resource.vtable;
}

HAL_API const char* hal_driver_name(const hal_driver_t* driver) {
  return hal_resource_is_kind(driver, HAL_RESOURCE_KIND_DRIVER) ? driver->name
                                                                : "";
}

HAL_API hal_status_t hal_driver_query_device_count(hal_driver_t* driver,
                                                   uint32_t* out_count) {
  if (!driver || !out_count) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "driver and out_count must not be NULL");
  }
  HAL_RETURN_IF_ERROR(
      hal_resource_check_kind(driver, HAL_RESOURCE_KIND_DRIVER, "driver"));
  *out_count = 0;
  return hal_driver_vtable(driver)->query_device_count(driver, out_count);
}

HAL_API hal_status_t hal_driver_query_device_info(hal_driver_t* driver,
                                                  uint32_t index,
                                                  hal_device_info_t* out_info) {
  if (!driver || !out_info) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "driver and out_info must not be NULL");
  }
  HAL_RETURN_IF_ERROR(
      hal_resource_check_kind(driver, HAL_RESOURCE_KIND_DRIVER, "driver"));
  memset(out_info, 0, sizeof(*out_info));
  uint32_t count = 0;
  HAL_RETURN_IF_ERROR(hal_driver_query_device_count(driver, &count));
  if (index >= count) {
    return hal_make_status(HAL_STATUS_OUT_OF_RANGE,
                           "device index %u is out of range: driver '%s' has "
                           "%u device(s)",
                           index, driver->name, count);
  }
  return hal_driver_vtable(driver)->query_device_info(driver, index, out_info);
}

HAL_API hal_status_t hal_driver_create_device_by_index(
    hal_driver_t* driver, uint32_t index, hal_allocator_t host_allocator,
    hal_device_t** out_device) {
  HAL_RETURN_IF_ERROR(
      hal_resource_check_create(driver, HAL_RESOURCE_KIND_DRIVER, "driver",
                                (void**)out_device, "out_device"));
  uint32_t count = 0;
  HAL_RETURN_IF_ERROR(hal_driver_query_device_count(driver, &count));
  if (count == 0) {
    return hal_make_status(HAL_STATUS_NOT_FOUND, "driver '%s' found no devices",
                           driver->name);
  }
  if (index >= count) {
    return hal_make_status(HAL_STATUS_OUT_OF_RANGE,
                           "device index %u is out of range: driver '%s' has "
                           "%u device(s) (valid indices 0..%u)",
                           index, driver->name, count, count - 1);
  }
  return hal_driver_vtable(driver)->create_device(driver, index, host_allocator,
                                                  out_device);
}

HAL_API hal_status_t hal_driver_create_device_by_name(
    hal_driver_t* driver, const char* name, hal_allocator_t host_allocator,
    hal_device_t** out_device) {
  if (!out_device) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT, "out_device is NULL");
  }
  *out_device = NULL;
  if (!driver || !name) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "driver and name must not be NULL");
  }
  HAL_RETURN_IF_ERROR(
      hal_resource_check_kind(driver, HAL_RESOURCE_KIND_DRIVER, "driver"));
  uint32_t count = 0;
  HAL_RETURN_IF_ERROR(hal_driver_query_device_count(driver, &count));
  char names[512] = "";
  size_t used = 0;
  for (uint32_t i = 0; i < count; ++i) {
    hal_device_info_t info;
    HAL_RETURN_IF_ERROR(hal_driver_query_device_info(driver, i, &info));
    if (strcmp(info.name, name) == 0) {
      return hal_driver_vtable(driver)->create_device(driver, i, host_allocator,
                                                      out_device);
    }
    if (used < sizeof(names)) {
      int n = snprintf(names + used, sizeof(names) - used, "%s'%s'",
                       i ? ", " : "", info.name);
      if (n > 0)
        used += (size_t)n;
    }
  }
  return hal_make_status(HAL_STATUS_NOT_FOUND,
                         "driver '%s' has no device named '%s'; it has %u: %s",
                         driver->name, name, count, count ? names : "(none)");
}

HAL_API hal_status_t hal_driver_create_device_by_uuid(
    hal_driver_t* driver, const uint8_t uuid[HAL_DEVICE_UUID_SIZE],
    hal_allocator_t host_allocator, hal_device_t** out_device) {
  if (!out_device) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT, "out_device is NULL");
  }
  *out_device = NULL;
  if (!driver || !uuid) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "driver and uuid must not be NULL");
  }
  HAL_RETURN_IF_ERROR(
      hal_resource_check_kind(driver, HAL_RESOURCE_KIND_DRIVER, "driver"));
  uint32_t count = 0;
  HAL_RETURN_IF_ERROR(hal_driver_query_device_count(driver, &count));
  // What there is, for the NOT_FOUND message: each device's UUID (or that
  // it has none) and name.
  char devices[768] = "";
  size_t used = 0;
  for (uint32_t i = 0; i < count; ++i) {
    hal_device_info_t info;
    HAL_RETURN_IF_ERROR(hal_driver_query_device_info(driver, i, &info));
    if (info.has_uuid && memcmp(info.uuid, uuid, HAL_DEVICE_UUID_SIZE) == 0) {
      return hal_driver_vtable(driver)->create_device(driver, i, host_allocator,
                                                      out_device);
    }
    char text[HAL_DEVICE_UUID_TEXT_SIZE] = "no UUID";
    if (info.has_uuid)
      hal_device_uuid_format(info.uuid, text);
    if (used < sizeof(devices)) {
      int n = snprintf(devices + used, sizeof(devices) - used, "%s%s ('%s')",
                       i ? ", " : "", text, info.name);
      if (n > 0)
        used += (size_t)n;
    }
  }
  char wanted[HAL_DEVICE_UUID_TEXT_SIZE];
  hal_device_uuid_format(uuid, wanted);
  return hal_make_status(
      HAL_STATUS_NOT_FOUND,
      "driver '%s' has no device with UUID %s; it has %u: %s", driver->name,
      wanted, count, count ? devices : "(none)");
}
