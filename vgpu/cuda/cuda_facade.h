// The CUDA Driver API facade: shared helpers of the cuda_*.c files.
//
// Each exported function is a translation: vendor arguments to core structs,
// one core call, vgpu_status to CUresult. Exported names are the ones the
// real libcuda.so.1 exports: cuda.h renames many functions to versioned
// symbols (cuMemAlloc -> cuMemAlloc_v2), and defining them under their base
// name here, with cuda.h included, produces exactly those symbols.
#ifndef VGPU_CUDA_FACADE_H_
#define VGPU_CUDA_FACADE_H_

// Define the deprecated entry points too (libcuda exports them).
#define CUDA_ENABLE_DEPRECATED 1
#include <cuda.h>
#include <stdint.h>

#include "vgpu_core.h"

#define VGPU_EXPORT __attribute__((visibility("default")))

CUresult vgpu_cu_result(vgpu_status status);
// The calling thread's device, from its current context (for faults).
int vgpu_cu_fault_device(void);
// Device of the current context; VGPU_ERR_INVALID_CONTEXT if none.
vgpu_status vgpu_cu_current_device(int* ordinal);
bool vgpu_cu_initialized(void);

// Entry check of every call but the pure ones: K1, faults, cuInit.
#define VGPU_CU_ENTER(name)                                                \
  VGPU_CALL_GUARD(CUDA_ERROR_DEINITIALIZED);                               \
  do {                                                                     \
    int fault_ = 0;                                                        \
    vgpu_status st_ = vgpu_api_enter(name, vgpu_cu_fault_device, &fault_); \
    if (st_ == VGPU_ERR_FAULT)                                             \
      return (CUresult)fault_;                                             \
    if (st_ != VGPU_OK)                                                    \
      return vgpu_cu_result(st_);                                          \
    if (!vgpu_cu_initialized())                                            \
      return CUDA_ERROR_NOT_INITIALIZED;                                   \
  } while (0)

// For the synchronizing calls: an injected fault is reported only after the
// wait, as the vendors report errors of finished work from these calls (a
// synchronize that failed without waiting would let callers free memory the
// device still uses). |fault| holds the injected code, 0 if none.
#define VGPU_CU_ENTER_SYNC(name, fault)                                   \
  VGPU_CALL_GUARD(CUDA_ERROR_DEINITIALIZED);                              \
  int fault = 0;                                                          \
  do {                                                                    \
    vgpu_status st_ = vgpu_api_enter(name, vgpu_cu_fault_device, &fault); \
    if (st_ != VGPU_OK && st_ != VGPU_ERR_FAULT)                          \
      return vgpu_cu_result(st_);                                         \
    if (st_ != VGPU_ERR_FAULT)                                            \
      fault = 0;                                                          \
    if (!vgpu_cu_initialized())                                           \
      return CUDA_ERROR_NOT_INITIALIZED;                                  \
  } while (0)

#define VGPU_CU_TRY(expr)          \
  do {                             \
    vgpu_status try_ = (expr);     \
    if (try_ != VGPU_OK)           \
      return vgpu_cu_result(try_); \
  } while (0)

static inline uint64_t vgpu_cu_h(const void* p) {
  return (uint64_t)(uintptr_t)p;
}

static inline void* vgpu_cu_ptr(CUdeviceptr p) {
  return (void*)(uintptr_t)p;
}

// The device a call on |stream| targets: the stream's own, or for a default
// stream the current context's.
vgpu_status vgpu_cu_stream_device(CUstream stream, int* ordinal);

// Host functions and stream callbacks, invoked by the core.
void vgpu_cu_invoke_host_fn(const vgpu_host_call* call, vgpu_status status);

#endif  // VGPU_CUDA_FACADE_H_
