// Copyright 2026 The HAL Authors.
//
// gpu_ccl_t: the collective communication library beside a GPU runtime,
// NCCL (libnccl.so.2) for CUDA and RCCL (librccl.so.1) for HIP. Loaded like
// the runtimes (dlopen()ed, never linked; HAL_NCCL_LIBRARY /
// HAL_RCCL_LIBRARY override the default soname; errors say what was tried
// and what is missing), with one symbol table for both: RCCL keeps NCCL's
// names and ABI, with hipStream_t where NCCL has cudaStream_t (both opaque
// pointers). Results become statuses that name the call, the library's
// error and, where it has one, its last-error text.
//
// This is the loading layer of the collectives (docs/collectives.md); the
// ops on it come with the channels that use them.

#ifndef DRIVERS_GPU_ADAPTER_CCL_H_
#define DRIVERS_GPU_ADAPTER_CCL_H_

#include "hal/allocator.h"
#include "hal/base.h"
#include "hal/status.h"

HAL_EXTERN_C_BEGIN

typedef enum gpu_ccl_vendor_e {
  GPU_CCL_VENDOR_NCCL = 0,  // libnccl.so.2, beside CUDA
  GPU_CCL_VENDOR_RCCL = 1,  // librccl.so.1, beside HIP
} gpu_ccl_vendor_t;

// The 128-byte id a communicator's ranks share (ncclUniqueId), handed
// between processes by the caller (NCCL's bootstrap expects that).
#define GPU_CCL_UNIQUE_ID_BYTES 128
typedef struct gpu_ccl_unique_id_t {
  uint8_t bytes[GPU_CCL_UNIQUE_ID_BYTES];
} gpu_ccl_unique_id_t;

// Fixed after creation; strings owned by the library object.
typedef struct gpu_ccl_info_t {
  const char* name;          // "NCCL" or "RCCL"
  const char* library_path;  // the file actually loaded (after symlinks)
  int version;      // ncclGetVersion: major * 10000 + minor * 100 + patch
  bool is_virtual;  // the virtual GPU's stand-in
} gpu_ccl_info_t;

typedef struct gpu_ccl_t gpu_ccl_t;
// A communicator (ncclComm_t), opaque.
typedef struct gpu_ccl_comm_opaque_t* gpu_ccl_comm_t;

// Loads the library of |vendor| (|library|: a path or soname; NULL: the
// variable, else the default soname) and reads its version. Failures:
// NOT_FOUND naming every library tried with its dlerror() text;
// INCOMPATIBLE naming every required symbol missing; the library's error
// from ncclGetVersion; UNIMPLEMENTED when built without nccl.h.
HAL_MUST_USE_RESULT hal_status_t gpu_ccl_create(gpu_ccl_vendor_t vendor,
                                                const char* library,
                                                hal_allocator_t allocator,
                                                gpu_ccl_t** out_ccl);
// Unloads it; every communicator made through it must be gone. NULL: no-op.
void gpu_ccl_destroy(gpu_ccl_t* ccl);
const gpu_ccl_info_t* gpu_ccl_info(const gpu_ccl_t* ccl);

// A fresh id for a new communicator (ncclGetUniqueId). Any thread.
HAL_MUST_USE_RESULT hal_status_t gpu_ccl_unique_id(gpu_ccl_t* ccl,
                                                   gpu_ccl_unique_id_t* out_id);
// This process's rank |rank| of |rank_count| in the communicator of |id|
// (ncclCommInitRank), on the calling thread's current device. Blocks until
// every rank joined or the library gives up.
HAL_MUST_USE_RESULT hal_status_t gpu_ccl_comm_init_rank(
    gpu_ccl_t* ccl, int rank_count, const gpu_ccl_unique_id_t* id, int rank,
    gpu_ccl_comm_t* out_comm);
// Destroys |comm| (ncclCommDestroy); |abort|: ncclCommAbort, which does not
// wait for its work or its peers. A library error here is dropped.
void gpu_ccl_comm_destroy(gpu_ccl_t* ccl, gpu_ccl_comm_t comm, bool abort);

HAL_EXTERN_C_END

#endif  // DRIVERS_GPU_ADAPTER_CCL_H_
