// The HIP facade's side of the NCCL API, which it exports as RCCL
// (nccl/nccl_facade.c, compiled into libvgpu-hip.so and
// libvgpu-hip-legacy.so with this directory on the include path): the
// declarations of rccl_api.h, and what the shared source needs of the
// facade it is in.
#ifndef VGPU_HIP_NCCL_VENDOR_H_
#define VGPU_HIP_NCCL_VENDOR_H_

#include "hip_facade.h"
#include "rccl_api.h"

// The stream type of the collectives' signatures (RCCL's).
typedef hipStream_t vgpu_nccl_stream;

// The core's handle of |stream|: the same cast as every HIP entry point's,
// so the default stream (NULL) and hipStreamPerThread mean what they mean
// there.
static inline uint64_t vgpu_nccl_stream_h(vgpu_nccl_stream stream) {
  return vgpu_hip_h(stream);
}

// The device VGPU_FAULTS' `lost` marks (vgpu_api_enter).
#define VGPU_NCCL_FAULT_DEVICE vgpu_hip_device

// The device of ncclCommInitRank's rank: the thread's current device
// (hipSetDevice's, 0 before any), which every thread has, so
// VGPU_NCCL_NO_DEVICE is never the answer; the core checks the ordinal.
static inline vgpu_status vgpu_nccl_current_device(int* device) {
  *device = vgpu_hip_device();
  return VGPU_OK;
}
#define VGPU_NCCL_NO_DEVICE "no current HIP device"

#endif  // VGPU_HIP_NCCL_VENDOR_H_
