// Copyright 2026 The HAL Authors.
//
// The kernels of tools/kernels/kernels.c, embedded in every image format the
// build could make, and their entry point layouts. Tests and tools pick the
// first image whose format the device loads
// (hal_device_properties_t.executable_formats).

#ifndef TOOLS_KERNELS_KERNEL_IMAGES_H_
#define TOOLS_KERNELS_KERNEL_IMAGES_H_

#include <stddef.h>
#include <stdint.h>

#include "hal/api.h"

typedef struct hal_kernel_image_t {
  const char* format;  // "vgpu-module", "cuda-ptx", ...
  const uint8_t* data;
  size_t size;
} hal_kernel_image_t;

extern const hal_kernel_image_t hal_kernel_images[];
extern const size_t hal_kernel_image_count;

// Entry point indices in hal_kernel_entry_points.
enum {
  HAL_KERNEL_FILL_U32 = 0,
  HAL_KERNEL_SAXPY = 1,
  HAL_KERNEL_IOTA_2D = 2,
  HAL_KERNEL_ADD_U32 = 3,
  HAL_KERNEL_ENTRY_POINT_COUNT = 4,
};

static const hal_entry_point_params_t
    hal_kernel_entry_points[HAL_KERNEL_ENTRY_POINT_COUNT] = {
        {"fill_u32", 1, 2},
        {"saxpy", 2, 2},
        {"iota_2d", 1, 3},
        {"add_u32", 1, 2},
};

// The first embedded image |device| can load, or NULL (with the formats
// the device loads in |*out_formats|).
static inline const hal_kernel_image_t* hal_kernel_image_for(
    hal_device_t* device, const char** out_formats) {
  hal_device_properties_t properties;
  hal_status_t status = hal_device_query_properties(device, &properties);
  if (status) {
    hal_status_free(status);
    return NULL;
  }
  if (out_formats)
    *out_formats = properties.executable_formats;
  for (size_t i = 0; i < hal_kernel_image_count; ++i) {
    if (hal_executable_format_in_list(properties.executable_formats,
                                      hal_kernel_images[i].format)) {
      return &hal_kernel_images[i];
    }
  }
  return NULL;
}

// Creates an executable of the kernels for |device|.
static inline hal_status_t hal_kernel_create_executable(
    hal_device_t* device, hal_executable_t** out_executable) {
  const char* formats = NULL;
  const hal_kernel_image_t* image = hal_kernel_image_for(device, &formats);
  if (!image) {
    *out_executable = NULL;
    return hal_make_status(HAL_STATUS_UNIMPLEMENTED,
                           "no embedded kernel image in a format the device "
                           "loads (%s)",
                           formats && *formats ? formats : "none");
  }
  hal_executable_params_t params = {
      .format = image->format,
      .data = image->data,
      .data_size = image->size,
      .entry_point_count = HAL_KERNEL_ENTRY_POINT_COUNT,
      .entry_points = hal_kernel_entry_points,
  };
  return hal_device_create_executable(device, &params, out_executable);
}

#endif  // TOOLS_KERNELS_KERNEL_IMAGES_H_
