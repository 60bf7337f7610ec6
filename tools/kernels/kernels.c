// Copyright 2026 The HAL Authors.
//
// The test and demo kernels, written once (hal_kernel.h) and built for every
// target the build can make: a virtual GPU module always, PTX when nvcc is
// present. Entry points and their layouts are listed in kernel_images.h.

#include "hal/hal_kernel.h"

// data[i] = value for i < count.
HAL_KERNEL(fill_u32, 1, 2) {
  uint32_t* data = HAL_BINDING(uint32_t, 0);
  uint32_t value = HAL_CONSTANT(0);
  uint32_t count = HAL_CONSTANT(1);
  uint32_t i = HAL_GLOBAL_ID(x);
  if (i < count)
    data[i] = value;
}
HAL_KERNEL_END

// y[i] = a * x[i] + y[i] for i < n (a passed as the bits of a float).
HAL_KERNEL(saxpy, 2, 2) {
  const float* x = HAL_BINDING(const float, 0);
  float* y = HAL_BINDING(float, 1);
  float a = HAL_CONSTANT_F32(0);
  uint32_t n = HAL_CONSTANT(1);
  uint32_t i = HAL_GLOBAL_ID(x);
  if (i < n)
    y[i] = a * x[i] + y[i];
}
HAL_KERNEL_END

// A 2-D grid: data[y * width + x] = (y << 16) | x + bias, for x < width and
// y < height.
HAL_KERNEL(iota_2d, 1, 3) {
  uint32_t* data = HAL_BINDING(uint32_t, 0);
  uint32_t width = HAL_CONSTANT(0);
  uint32_t height = HAL_CONSTANT(1);
  uint32_t bias = HAL_CONSTANT(2);
  uint32_t x = HAL_GLOBAL_ID(x);
  uint32_t y = HAL_GLOBAL_ID(y);
  if (x < width && y < height)
    data[y * width + x] = ((y << 16) | x) + bias;
}
HAL_KERNEL_END

// data[i] += delta for i < count: dependent dispatches need barriers.
HAL_KERNEL(add_u32, 1, 2) {
  uint32_t* data = HAL_BINDING(uint32_t, 0);
  uint32_t delta = HAL_CONSTANT(0);
  uint32_t count = HAL_CONSTANT(1);
  uint32_t i = HAL_GLOBAL_ID(x);
  if (i < count)
    data[i] += delta;
}
HAL_KERNEL_END
