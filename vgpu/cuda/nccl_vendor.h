// The CUDA facade's side of the NCCL API (nccl/nccl_facade.c, compiled
// into libvgpu-cuda.so with this directory on the include path): nccl.h's
// declarations, and what the shared source needs of the facade it is in.
#ifndef VGPU_CUDA_NCCL_VENDOR_H_
#define VGPU_CUDA_NCCL_VENDOR_H_

#include <nccl.h>

#include "cuda_facade.h"

// The stream type of the collectives' signatures (nccl.h's).
typedef cudaStream_t vgpu_nccl_stream;

// The core's handle of |stream|: the same cast as every CUDA entry point's,
// so the default stream (NULL) and CU_STREAM_LEGACY / _PER_THREAD mean
// what they mean there.
static inline uint64_t vgpu_nccl_stream_h(vgpu_nccl_stream stream) {
  return vgpu_cu_h(stream);
}

// The device VGPU_FAULTS' `lost` marks (vgpu_api_enter).
#define VGPU_NCCL_FAULT_DEVICE vgpu_cu_fault_device

// The device of ncclCommInitRank's rank: the current context's;
// VGPU_ERR_INVALID_CONTEXT (and VGPU_NCCL_NO_DEVICE) without one.
static inline vgpu_status vgpu_nccl_current_device(int* device) {
  return vgpu_cu_current_device(device);
}
#define VGPU_NCCL_NO_DEVICE "no current CUDA context"

#endif  // VGPU_CUDA_NCCL_VENDOR_H_
