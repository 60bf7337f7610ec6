// Copyright 2026 The HAL Authors.
//
// The fake HIP runtime's one behavior: hipStreamAddCallback runs the
// callback at once, on the calling thread, so the adapter's
// hipLaunchHostFunc fallback can be tested without a GPU. A stream handle
// of GPU_FAKE_HIP_FAILED_STREAM reports a failed stream to the callback.

#include <hip/hip_runtime_api.h>
#include <stdint.h>

#include "fake_runtime.h"

#define GPU_FAKE_HIP_FAILED_STREAM ((hipStream_t)(uintptr_t)0xbad)

GPU_FAKE_EXPORT hipError_t hipStreamAddCallback(hipStream_t stream,
                                                hipStreamCallback_t callback,
                                                void* userData,
                                                unsigned int flags) {
  hipError_t status =
      stream == GPU_FAKE_HIP_FAILED_STREAM ? hipErrorLaunchFailure : hipSuccess;
  callback(stream, status, userData);
  return hipSuccess;
}
