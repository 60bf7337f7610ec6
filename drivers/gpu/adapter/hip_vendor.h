// Copyright 2026 The HAL Authors.
//
// The HIP adapter's private types and its error table, for hip_ops.c
// (cuda_vendor.h is the same for CUDA).

#ifndef DRIVERS_GPU_ADAPTER_HIP_VENDOR_H_
#define DRIVERS_GPU_ADAPTER_HIP_VENDOR_H_

#include <hip/hip_runtime_api.h>

#include "adapter_impl.h"
#include "hip_symbols.h"

typedef struct gpu_hip_symbols_t {
  GPU_HIP_SYMBOLS(GPU_ADAPTER_SYMBOL_MEMBER)
} gpu_hip_symbols_t;

typedef struct gpu_hip_adapter_t {
  gpu_adapter_base_t base;
  gpu_hip_symbols_t syms;
  // roctx (libroctx64, in base.tool_library) when it loaded.
  uint64_t (*roctxRangeStartA)(const char* message);
  void (*roctxRangeStop)(uint64_t range);
} gpu_hip_adapter_t;
static_assert(offsetof(gpu_hip_adapter_t, base) == 0,
              "the base must be at offset 0");

// How each HIP error maps (adapter_impl.h, GPU_ADAPTER_ERROR).
// clang-format off
#define GPU_HIP_ERRORS(X)                                                      \
  X(hipErrorInvalidValue, INVALID_ARGUMENT)                                    \
  X(hipErrorOutOfMemory, RESOURCE_EXHAUSTED)                                   \
  X(hipErrorNotInitialized, FAILED_PRECONDITION)                               \
  X(hipErrorDeinitialized, DEVICE_LOST)                                        \
  X(hipErrorInvalidConfiguration, INVALID_ARGUMENT)                            \
  X(hipErrorInvalidPitchValue, INVALID_ARGUMENT)                               \
  X(hipErrorInvalidSymbol, INVALID_ARGUMENT)                                   \
  X(hipErrorInvalidDevicePointer, INVALID_ARGUMENT)                            \
  X(hipErrorInvalidMemcpyDirection, INVALID_ARGUMENT)                          \
  X(hipErrorInsufficientDriver, INCOMPATIBLE)                                  \
  X(hipErrorMissingConfiguration, INVALID_ARGUMENT)                            \
  X(hipErrorPriorLaunchFailure, DEVICE_LOST)                                   \
  X(hipErrorInvalidDeviceFunction, INVALID_ARGUMENT)                           \
  X(hipErrorNoDevice, NOT_FOUND)                                               \
  X(hipErrorInvalidDevice, INVALID_ARGUMENT)                                   \
  X(hipErrorInvalidImage, INVALID_ARGUMENT)                                    \
  X(hipErrorInvalidContext, FAILED_PRECONDITION)                               \
  X(hipErrorNoBinaryForGpu, FAILED_PRECONDITION)                               \
  X(hipErrorECCNotCorrectable, DEVICE_LOST)                                    \
  X(hipErrorInvalidKernelFile, INVALID_ARGUMENT)                               \
  X(hipErrorInvalidSource, INVALID_ARGUMENT)                                   \
  X(hipErrorFileNotFound, NOT_FOUND)                                           \
  X(hipErrorSharedObjectSymbolNotFound, NOT_FOUND)                             \
  X(hipErrorSharedObjectInitFailed, INTERNAL)                                  \
  X(hipErrorOperatingSystem, INTERNAL)                                         \
  X(hipErrorInvalidHandle, INVALID_ARGUMENT)                                   \
  X(hipErrorIllegalState, FAILED_PRECONDITION)                                 \
  X(hipErrorNotFound, NOT_FOUND)                                               \
  X(hipErrorNotReady, UNAVAILABLE)                                             \
  X(hipErrorIllegalAddress, DEVICE_LOST)                                       \
  X(hipErrorLaunchOutOfResources, RESOURCE_EXHAUSTED)                          \
  X(hipErrorLaunchTimeOut, DEVICE_LOST)                                        \
  X(hipErrorContextIsDestroyed, FAILED_PRECONDITION)                           \
  X(hipErrorAssert, DEVICE_LOST)                                               \
  X(hipErrorLaunchFailure, DEVICE_LOST)                                        \
  X(hipErrorCooperativeLaunchTooLarge, INVALID_ARGUMENT)                       \
  X(hipErrorNotSupported, UNIMPLEMENTED)                                       \
  X(hipErrorStreamCaptureUnsupported, FAILED_PRECONDITION)                     \
  X(hipErrorStreamCaptureInvalidated, FAILED_PRECONDITION)                     \
  X(hipErrorGraphExecUpdateFailure, FAILED_PRECONDITION)                       \
  X(hipErrorUnknown, UNKNOWN)                                                  \
  X(hipErrorRuntimeMemory, INTERNAL)                                           \
  X(hipErrorRuntimeOther, INTERNAL)
// clang-format on

#endif  // DRIVERS_GPU_ADAPTER_HIP_VENDOR_H_
