// Copyright 2026 The HAL Authors.
//
// The portability header of HAL kernels: one kernel source, every target.
//
// A kernel is written once, in the C subset CUDA, HIP and C11 share:
//
//   HAL_KERNEL(saxpy, 2, 2) {          // 2 buffer bindings, 2 constants
//     const float* x = HAL_BINDING(const float, 0);
//     float* y = HAL_BINDING(float, 1);
//     float a = HAL_CONSTANT_F32(0);
//     uint32_t n = HAL_CONSTANT(1);
//     uint32_t i = HAL_GLOBAL_ID(x);
//     if (i < n) y[i] = a * x[i] + y[i];
//   }
//   HAL_KERNEL_END
//
// and compiled by nvcc to PTX (CUDA), by hipcc to a code object (HIP), or by
// the C compiler to a virtual GPU module (a host shared object, see
// vgpu/include/vgpu/vgpu_module.h). The argument convention is the HAL's
// (hal/include/hal/executable.h): the bindings' device addresses, then the
// 32-bit constants. 1..4 bindings and 0..4 constants.
//
// HAL_GLOBAL_ID(x|y|z) is the thread's index in the whole grid along a
// dimension; HAL_GROUP_ID and HAL_LOCAL_ID give the workgroup and the thread
// within it. There are no barriers: a kernel is per-thread.

#ifndef HAL_KERNEL_H_
#define HAL_KERNEL_H_

#include <stdint.h>

#define HAL_BINDING(type, index) ((type*)hal_b##index)
#define HAL_CONSTANT(index) (hal_c##index)
#define HAL_CONSTANT_F32(index) hal_kernel_bits_to_f32(hal_c##index)

// Parameter lists by count.
#define HAL_KERNEL_BPARAMS_1 void* hal_b0
#define HAL_KERNEL_BPARAMS_2 HAL_KERNEL_BPARAMS_1, void* hal_b1
#define HAL_KERNEL_BPARAMS_3 HAL_KERNEL_BPARAMS_2, void* hal_b2
#define HAL_KERNEL_BPARAMS_4 HAL_KERNEL_BPARAMS_3, void* hal_b3
#define HAL_KERNEL_CPARAMS_0
#define HAL_KERNEL_CPARAMS_1 , uint32_t hal_c0
#define HAL_KERNEL_CPARAMS_2 HAL_KERNEL_CPARAMS_1, uint32_t hal_c1
#define HAL_KERNEL_CPARAMS_3 HAL_KERNEL_CPARAMS_2, uint32_t hal_c2
#define HAL_KERNEL_CPARAMS_4 HAL_KERNEL_CPARAMS_3, uint32_t hal_c3
#define HAL_KERNEL_PARAMS(B, C) HAL_KERNEL_BPARAMS_##B HAL_KERNEL_CPARAMS_##C

#if defined(__CUDACC__) || defined(__HIPCC__)

#define HAL_GLOBAL_ID(d) (blockIdx.d * blockDim.d + threadIdx.d)
#define HAL_GROUP_ID(d) (blockIdx.d)
#define HAL_LOCAL_ID(d) (threadIdx.d)

static __device__ inline float hal_kernel_bits_to_f32(uint32_t bits) {
  return __uint_as_float(bits);
}

#define HAL_KERNEL(name, bindings, constants) \
  extern "C" __global__ void name(HAL_KERNEL_PARAMS(bindings, constants))
#define HAL_KERNEL_END

#else  // the virtual GPU

#include <string.h>

#include "vgpu/vgpu_module.h"

#define HAL_GLOBAL_ID(d)                                          \
  ((uint32_t)(hal_thread->block_idx.d * hal_thread->block_dim.d + \
              hal_thread->thread_idx.d))
#define HAL_GROUP_ID(d) (hal_thread->block_idx.d)
#define HAL_LOCAL_ID(d) (hal_thread->thread_idx.d)

static inline float hal_kernel_bits_to_f32(uint32_t bits) {
  float value;
  memcpy(&value, &bits, sizeof(value));
  return value;
}

// kernelParams -> parameters: each args[i] points at the argument's value.
static inline void* hal_kernel_arg_ptr(void* const* args, int i) {
  void* value;
  memcpy(&value, args[i], sizeof(value));
  return value;
}
static inline uint32_t hal_kernel_arg_u32(void* const* args, int i) {
  uint32_t value;
  memcpy(&value, args[i], sizeof(value));
  return value;
}

#define HAL_KERNEL_BUNPACK_1 hal_kernel_arg_ptr(args, 0)
#define HAL_KERNEL_BUNPACK_2 HAL_KERNEL_BUNPACK_1, hal_kernel_arg_ptr(args, 1)
#define HAL_KERNEL_BUNPACK_3 HAL_KERNEL_BUNPACK_2, hal_kernel_arg_ptr(args, 2)
#define HAL_KERNEL_BUNPACK_4 HAL_KERNEL_BUNPACK_3, hal_kernel_arg_ptr(args, 3)
#define HAL_KERNEL_CUNPACK_0(B)
#define HAL_KERNEL_CUNPACK_1(B) , hal_kernel_arg_u32(args, (B) + 0)
#define HAL_KERNEL_CUNPACK_2(B) \
  HAL_KERNEL_CUNPACK_1(B), hal_kernel_arg_u32(args, (B) + 1)
#define HAL_KERNEL_CUNPACK_3(B) \
  HAL_KERNEL_CUNPACK_2(B), hal_kernel_arg_u32(args, (B) + 2)
#define HAL_KERNEL_CUNPACK_4(B) \
  HAL_KERNEL_CUNPACK_3(B), hal_kernel_arg_u32(args, (B) + 3)

#define HAL_KERNEL_BSIZES_1 8
#define HAL_KERNEL_BSIZES_2 8, 8
#define HAL_KERNEL_BSIZES_3 8, 8, 8
#define HAL_KERNEL_BSIZES_4 8, 8, 8, 8
#define HAL_KERNEL_CSIZES_0
#define HAL_KERNEL_CSIZES_1 , 4
#define HAL_KERNEL_CSIZES_2 , 4, 4
#define HAL_KERNEL_CSIZES_3 , 4, 4, 4
#define HAL_KERNEL_CSIZES_4 , 4, 4, 4, 4

// The body becomes name##_body; an entry unpacks kernelParams into it and a
// descriptor tells the virtual GPU the argument sizes (it copies that many
// arguments at launch, and checks an `extra` buffer's size against them).
#define HAL_KERNEL(name, bindings, constants)                                 \
  static void name##_body(const vgpu_kernel_thread* hal_thread,               \
                          HAL_KERNEL_PARAMS(bindings, constants));            \
  static void name##_entry(const vgpu_kernel_thread* hal_thread,              \
                           void* const* args) {                               \
    name##_body(hal_thread,                                                   \
                HAL_KERNEL_BUNPACK_##bindings HAL_KERNEL_CUNPACK_##constants( \
                    bindings));                                               \
  }                                                                           \
  VGPU_KERNEL_DEFINE(                                                         \
      name, VGPU_KERNEL_PER_THREAD, name##_entry,                             \
      HAL_KERNEL_BSIZES_##bindings HAL_KERNEL_CSIZES_##constants);            \
  static void name##_body(const vgpu_kernel_thread* hal_thread,               \
                          HAL_KERNEL_PARAMS(bindings, constants))
#define HAL_KERNEL_END

#endif

#endif  // HAL_KERNEL_H_
