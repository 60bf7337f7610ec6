// Copyright 2026 The HAL Authors.
//
// A kernel of your own, for examples/dispatch.c: written once with the
// installed authoring header, built for the target the device loads.
//
//   virtual GPU:
//     cc -shared -fPIC $(pkg-config --cflags hal) scale_kernel.c
//        -o scale_kernel.vgpu
//   CUDA (PTX):
//     nvcc -x cu -ptx -arch=compute_75 $(pkg-config --cflags hal)
//        scale_kernel.c -o scale_kernel.ptx

#include "hal/hal_kernel.h"

// data[i] = data[i] * factor + offset, for i < count: one binding, three
// 32-bit constants (the layout dispatch.c declares).
HAL_KERNEL(scale_u32, 1, 3) {
  uint32_t* data = HAL_BINDING(uint32_t, 0);
  uint32_t factor = HAL_CONSTANT(0);
  uint32_t offset = HAL_CONSTANT(1);
  uint32_t count = HAL_CONSTANT(2);
  uint32_t i = HAL_GLOBAL_ID(x);
  if (i < count)
    data[i] = data[i] * factor + offset;
}
HAL_KERNEL_END
