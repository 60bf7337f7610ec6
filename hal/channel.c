// Copyright 2026 The HAL Authors.
//
// Channels: the validating wrappers of hal/channel.h over the driver's
// device vtable (hal/impl/device.h) and the channel's own.

#include <inttypes.h>
#include <string.h>

#include "hal/impl/api.h"

static const hal_channel_vtable_t* hal_channel_vtable(hal_channel_t* channel) {
  return (const hal_channel_vtable_t*)channel->resource.vtable;
}

HAL_API void hal_channel_initialize(const hal_channel_vtable_t* vtable,
                                    hal_device_t* device, int32_t rank,
                                    int32_t rank_count,
                                    hal_channel_t* out_channel) {
  hal_resource_initialize_kind(HAL_RESOURCE_KIND_CHANNEL, vtable,
                               &device->resource, &out_channel->resource);
  out_channel->device = device;
  out_channel->rank = rank;
  out_channel->rank_count = rank_count;
}

static const hal_device_vtable_t* hal_channel_device_vtable(
    hal_device_t* device) {
  return (const hal_device_vtable_t*)device->resource.vtable;
}

// The device's collectives, or UNIMPLEMENTED naming its driver.
static hal_status_t hal_channel_require(hal_device_t* device,
                                        const char* what) {
  const hal_device_vtable_t* vtable = hal_channel_device_vtable(device);
  if (!vtable->channel_id_generate || !vtable->create_channel ||
      !vtable->create_channel_group) {
    return hal_make_status(HAL_STATUS_UNIMPLEMENTED,
                           "%s: driver '%s' has no collectives", what,
                           device->driver ? device->driver->name : "?");
  }
  return HAL_OK;
}

HAL_API hal_status_t hal_channel_id_generate(hal_device_t* device,
                                             hal_channel_id_t* out_id) {
  HAL_RETURN_IF_ERROR(
      hal_resource_check_kind(device, HAL_RESOURCE_KIND_DEVICE, "device"));
  if (!out_id) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "channel_id_generate: out_id is NULL");
  }
  memset(out_id, 0, sizeof(*out_id));
  HAL_RETURN_IF_ERROR(hal_channel_require(device, "channel_id_generate"));
  return hal_channel_device_vtable(device)->channel_id_generate(device, out_id);
}

HAL_API hal_status_t hal_channel_create(hal_device_t* device,
                                        const hal_channel_id_t* id,
                                        int32_t rank, int32_t rank_count,
                                        hal_channel_t** out_channel) {
  HAL_RETURN_IF_ERROR(
      hal_resource_check_create(device, HAL_RESOURCE_KIND_DEVICE, "device",
                                (void**)out_channel, "out_channel"));
  if (!id) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "channel_create: id is NULL");
  }
  if (rank_count < 1 || rank < 0 || rank >= rank_count) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "channel_create: rank %" PRId32 " of %" PRId32
                           ": ranks are 0 to the rank count - 1, and a "
                           "communicator has at least one",
                           rank, rank_count);
  }
  HAL_RETURN_IF_ERROR(hal_channel_require(device, "channel_create"));
  return hal_channel_device_vtable(device)->create_channel(
      device, id, rank, rank_count, out_channel);
}

HAL_API hal_status_t hal_channel_create_group(size_t count,
                                              hal_device_t* const* devices,
                                              hal_channel_t** out_channels) {
  if (!out_channels) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "channel_create_group: out_channels is NULL");
  }
  if (count == 0 || !devices) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "channel_create_group: no devices");
  }
  if (count > INT32_MAX) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "channel_create_group: %zu devices", count);
  }
  memset(out_channels, 0, count * sizeof(*out_channels));
  for (size_t i = 0; i < count; ++i) {
    HAL_RETURN_AND_ANNOTATE_IF_ERROR(
        hal_resource_check_kind(devices[i], HAL_RESOURCE_KIND_DEVICE, "device"),
        "channel_create_group: devices[%zu]", i);
    // One driver by name and implementation (two instances of one driver,
    // each made from a URI, are one driver here).
    if (devices[i]->resource.vtable != devices[0]->resource.vtable ||
        !devices[i]->driver || !devices[0]->driver ||
        strcmp(devices[i]->driver->name, devices[0]->driver->name) != 0) {
      return hal_make_status(
          HAL_STATUS_INVALID_ARGUMENT,
          "channel_create_group: devices[%zu] is of driver '%s', devices[0] "
          "of '%s': a group's devices share one driver",
          i, devices[i]->driver ? devices[i]->driver->name : "?",
          devices[0]->driver ? devices[0]->driver->name : "?");
    }
    for (size_t j = 0; j < i; ++j) {
      if (devices[j] == devices[i]) {
        return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                               "channel_create_group: devices[%zu] and "
                               "devices[%zu] are the same device ('%s')",
                               j, i, devices[i]->info.name);
      }
      // Two device objects of one GPU (made through two instances of the
      // driver): the library does not support two ranks on one GPU (NCCL
      // may hang), so they count as the same device.
      if (devices[j]->info.index == devices[i]->info.index) {
        return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                               "channel_create_group: devices[%zu] and "
                               "devices[%zu] are two device objects of one "
                               "GPU (index %" PRIu32 ", '%s')",
                               j, i, devices[i]->info.index,
                               devices[i]->info.name);
      }
    }
  }
  HAL_RETURN_IF_ERROR(hal_channel_require(devices[0], "channel_create_group"));
  return hal_channel_device_vtable(devices[0])
      ->create_channel_group(devices[0], count, devices, out_channels);
}

HAL_API void hal_channel_retain(hal_channel_t* channel) {
  if (hal_resource_is_kind(channel, HAL_RESOURCE_KIND_CHANNEL))
    hal_resource_retain(&channel->resource);
}

HAL_API void hal_channel_release(hal_channel_t* channel) {
  if (hal_resource_is_kind(channel, HAL_RESOURCE_KIND_CHANNEL))
    hal_resource_release(&channel->resource);
}

HAL_API int32_t hal_channel_rank(const hal_channel_t* channel) {
  return hal_resource_is_kind(channel, HAL_RESOURCE_KIND_CHANNEL)
             ? channel->rank
             : -1;
}

HAL_API int32_t hal_channel_rank_count(const hal_channel_t* channel) {
  return hal_resource_is_kind(channel, HAL_RESOURCE_KIND_CHANNEL)
             ? channel->rank_count
             : 0;
}

HAL_API hal_device_t* hal_channel_device(const hal_channel_t* channel) {
  return hal_resource_is_kind(channel, HAL_RESOURCE_KIND_CHANNEL)
             ? channel->device
             : NULL;
}

HAL_API hal_status_t hal_channel_check(hal_channel_t* channel) {
  HAL_RETURN_IF_ERROR(
      hal_resource_check_kind(channel, HAL_RESOURCE_KIND_CHANNEL, "channel"));
  return hal_channel_vtable(channel)->check(channel);
}

HAL_API hal_status_t hal_channel_split(hal_channel_t* channel, int32_t color,
                                       int32_t key,
                                       hal_channel_t** out_channel) {
  if (!out_channel) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "hal_channel_split: out_channel is NULL");
  }
  *out_channel = NULL;
  HAL_RETURN_IF_ERROR(
      hal_resource_check_kind(channel, HAL_RESOURCE_KIND_CHANNEL, "channel"));
  if (color < HAL_CHANNEL_SPLIT_NO_COLOR) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "hal_channel_split: color %" PRId32
                           " (a color is >= 0, or "
                           "HAL_CHANNEL_SPLIT_NO_COLOR for no channel)",
                           color);
  }
  const hal_channel_vtable_t* vtable = hal_channel_vtable(channel);
  if (!vtable->split) {
    return hal_make_status(HAL_STATUS_UNIMPLEMENTED,
                           "driver '%s' cannot split channels",
                           channel->device->driver->name);
  }
  return vtable->split(channel, color, key, out_channel);
}

HAL_API size_t hal_element_type_size(hal_element_type_t type) {
  switch (type) {
    case HAL_ELEMENT_TYPE_INT8:
    case HAL_ELEMENT_TYPE_UINT8:
      return 1;
    case HAL_ELEMENT_TYPE_FLOAT16:
    case HAL_ELEMENT_TYPE_BFLOAT16:
      return 2;
    case HAL_ELEMENT_TYPE_INT32:
    case HAL_ELEMENT_TYPE_UINT32:
    case HAL_ELEMENT_TYPE_FLOAT32:
      return 4;
    case HAL_ELEMENT_TYPE_INT64:
    case HAL_ELEMENT_TYPE_UINT64:
    case HAL_ELEMENT_TYPE_FLOAT64:
      return 8;
  }
  return 0;
}
