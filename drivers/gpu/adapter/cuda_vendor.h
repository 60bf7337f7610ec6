// Copyright 2026 The HAL Authors.
//
// The CUDA adapter's private types and its error table, for cuda_ops.c
// (hip_vendor.h is the same for HIP).

#ifndef DRIVERS_GPU_ADAPTER_CUDA_VENDOR_H_
#define DRIVERS_GPU_ADAPTER_CUDA_VENDOR_H_

#include <cuda.h>

#include "adapter_impl.h"
#include "cuda_symbols.h"

typedef struct gpu_cuda_symbols_t {
  GPU_CUDA_SYMBOLS(GPU_ADAPTER_SYMBOL_MEMBER)
} gpu_cuda_symbols_t;

typedef struct gpu_cuda_adapter_t {
  gpu_adapter_base_t base;
  gpu_cuda_symbols_t syms;
  // The "HAL" NVTX domain (nvtxDomainHandle_t) when a tool is attached.
  void* nvtx_domain;
} gpu_cuda_adapter_t;
static_assert(offsetof(gpu_cuda_adapter_t, base) == 0,
              "the base must be at offset 0");

// How each CUDA error maps (adapter_impl.h, GPU_ADAPTER_ERROR).
// clang-format off
#define GPU_CUDA_ERRORS(X)                                                     \
  X(CUDA_ERROR_INVALID_VALUE, INVALID_ARGUMENT)                                \
  X(CUDA_ERROR_OUT_OF_MEMORY, RESOURCE_EXHAUSTED)                              \
  X(CUDA_ERROR_NOT_INITIALIZED, FAILED_PRECONDITION)                           \
  X(CUDA_ERROR_DEINITIALIZED, DEVICE_LOST)                                     \
  X(CUDA_ERROR_STUB_LIBRARY, UNAVAILABLE)                                      \
  X(CUDA_ERROR_DEVICE_UNAVAILABLE, UNAVAILABLE)                                \
  X(CUDA_ERROR_NO_DEVICE, NOT_FOUND)                                           \
  X(CUDA_ERROR_INVALID_DEVICE, INVALID_ARGUMENT)                               \
  X(CUDA_ERROR_DEVICE_NOT_LICENSED, PERMISSION_DENIED)                         \
  X(CUDA_ERROR_INVALID_IMAGE, INVALID_ARGUMENT)                                \
  X(CUDA_ERROR_INVALID_CONTEXT, FAILED_PRECONDITION)                           \
  X(CUDA_ERROR_NO_BINARY_FOR_GPU, FAILED_PRECONDITION)                         \
  X(CUDA_ERROR_ECC_UNCORRECTABLE, DEVICE_LOST)                                 \
  X(CUDA_ERROR_NVLINK_UNCORRECTABLE, DEVICE_LOST)                              \
  X(CUDA_ERROR_INVALID_PTX, INVALID_ARGUMENT)                                  \
  X(CUDA_ERROR_INVALID_SOURCE, INVALID_ARGUMENT)                               \
  X(CUDA_ERROR_FILE_NOT_FOUND, NOT_FOUND)                                      \
  X(CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND, NOT_FOUND)                      \
  X(CUDA_ERROR_SHARED_OBJECT_INIT_FAILED, INTERNAL)                            \
  X(CUDA_ERROR_OPERATING_SYSTEM, INTERNAL)                                     \
  X(CUDA_ERROR_INVALID_HANDLE, INVALID_ARGUMENT)                               \
  X(CUDA_ERROR_ILLEGAL_STATE, FAILED_PRECONDITION)                             \
  X(CUDA_ERROR_NOT_FOUND, NOT_FOUND)                                           \
  X(CUDA_ERROR_NOT_READY, UNAVAILABLE)                                         \
  X(CUDA_ERROR_ILLEGAL_ADDRESS, DEVICE_LOST)                                   \
  X(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, RESOURCE_EXHAUSTED)                    \
  X(CUDA_ERROR_LAUNCH_TIMEOUT, DEVICE_LOST)                                    \
  X(CUDA_ERROR_CONTEXT_IS_DESTROYED, FAILED_PRECONDITION)                      \
  X(CUDA_ERROR_ASSERT, DEVICE_LOST)                                            \
  X(CUDA_ERROR_HARDWARE_STACK_ERROR, DEVICE_LOST)                              \
  X(CUDA_ERROR_ILLEGAL_INSTRUCTION, DEVICE_LOST)                               \
  X(CUDA_ERROR_MISALIGNED_ADDRESS, DEVICE_LOST)                                \
  X(CUDA_ERROR_INVALID_ADDRESS_SPACE, DEVICE_LOST)                             \
  X(CUDA_ERROR_INVALID_PC, DEVICE_LOST)                                        \
  X(CUDA_ERROR_LAUNCH_FAILED, DEVICE_LOST)                                     \
  X(CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE, INVALID_ARGUMENT)                 \
  X(CUDA_ERROR_NOT_PERMITTED, PERMISSION_DENIED)                               \
  X(CUDA_ERROR_NOT_SUPPORTED, UNIMPLEMENTED)                                   \
  X(CUDA_ERROR_SYSTEM_NOT_READY, UNAVAILABLE)                                  \
  X(CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, INCOMPATIBLE)                           \
  X(CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE, INCOMPATIBLE)                   \
  X(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, FAILED_PRECONDITION)                \
  X(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, FAILED_PRECONDITION)                \
  X(CUDA_ERROR_TIMEOUT, DEADLINE_EXCEEDED)                                     \
  X(CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE, FAILED_PRECONDITION)                 \
  X(CUDA_ERROR_UNKNOWN, UNKNOWN)
// clang-format on

#endif  // DRIVERS_GPU_ADAPTER_CUDA_VENDOR_H_
