// The HIP runtime API facade: shared helpers of the hip_*.c files.
//
// Each exported function is a translation onto the core (see
// core/vgpu_core.h). Every return goes through VGPU_HIP_RETURN, which keeps
// the thread's last error for hipGetLastError/hipPeekAtLastError.
#ifndef VGPU_HIP_FACADE_H_
#define VGPU_HIP_FACADE_H_

#include <hip/hip_runtime_api.h>
#include <stdint.h>

#include "vgpu_core.h"

#define VGPU_EXPORT __attribute__((visibility("default")))

hipError_t vgpu_hip_result(vgpu_status status);
// Records |e| as the thread's last error (unless success or not-ready).
hipError_t vgpu_hip_record(hipError_t e);
// The calling thread's current device (hipSetDevice).
int vgpu_hip_device(void);

#define VGPU_HIP_RETURN(e) return vgpu_hip_record(e)
#define VGPU_HIP_RETURN_ST(st) return vgpu_hip_record(vgpu_hip_result(st))

#define VGPU_HIP_ENTER(name)                                          \
  VGPU_CALL_GUARD(hipErrorDeinitialized);                             \
  do {                                                                \
    int fault_ = 0;                                                   \
    vgpu_status st_ = vgpu_api_enter(name, vgpu_hip_device, &fault_); \
    if (st_ == VGPU_ERR_FAULT)                                        \
      VGPU_HIP_RETURN((hipError_t)fault_);                            \
    if (st_ != VGPU_OK)                                               \
      VGPU_HIP_RETURN_ST(st_);                                        \
  } while (0)

// As VGPU_CU_ENTER_SYNC: injected faults of synchronizing calls are
// returned after the wait.
#define VGPU_HIP_ENTER_SYNC(name, fault)                             \
  VGPU_CALL_GUARD(hipErrorDeinitialized);                            \
  int fault = 0;                                                     \
  do {                                                               \
    vgpu_status st_ = vgpu_api_enter(name, vgpu_hip_device, &fault); \
    if (st_ != VGPU_OK && st_ != VGPU_ERR_FAULT)                     \
      VGPU_HIP_RETURN_ST(st_);                                       \
    if (st_ != VGPU_ERR_FAULT)                                       \
      fault = 0;                                                     \
  } while (0)

#define VGPU_HIP_TRY(expr)      \
  do {                          \
    vgpu_status try_ = (expr);  \
    if (try_ != VGPU_OK)        \
      VGPU_HIP_RETURN_ST(try_); \
  } while (0)

static inline uint64_t vgpu_hip_h(const void* p) {
  return (uint64_t)(uintptr_t)p;
}

// The device a call on |stream| targets.
vgpu_status vgpu_hip_stream_device(hipStream_t stream, int* ordinal);
// Pointer kinds of a hipMemcpyKind; false for an invalid kind.
bool vgpu_hip_copy_kinds(hipMemcpyKind kind, vgpu_ptr_kind* dst,
                         vgpu_ptr_kind* src);
// Parses a HIP_LAUNCH_PARAM_* "extra" list ({BUFFER_POINTER, p,
// BUFFER_SIZE, &n, END}) into |d|; false if malformed.
bool vgpu_hip_parse_extra(void** extra, vgpu_launch_desc* d);
void vgpu_hip_invoke_host_fn(const vgpu_host_call* call, vgpu_status status);

#endif  // VGPU_HIP_FACADE_H_
