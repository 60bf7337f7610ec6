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
// The loading layer of the collectives and their calls (docs/collectives.md).
// Element types and reductions are NCCL's codes (ncclDataType_t,
// ncclRedOp_t), passed through.

#ifndef DRIVERS_GPU_ADAPTER_CCL_H_
#define DRIVERS_GPU_ADAPTER_CCL_H_

#include "adapter.h"
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
// ncclCommSplit: every rank of |comm| calls it; those passing one |color|
// (>= 0) get a new communicator ranked by |key|, color -1
// (NCCL_SPLIT_NOCOLOR) gets none (*out_comm NULL). Blocks until the ranks
// of each new communicator joined. UNIMPLEMENTED when the library has no
// ncclCommSplit.
HAL_MUST_USE_RESULT hal_status_t gpu_ccl_comm_split(gpu_ccl_t* ccl,
                                                    gpu_ccl_comm_t comm,
                                                    int color, int key,
                                                    gpu_ccl_comm_t* out_comm);
// |comm|'s rank and rank count (ncclCommUserRank, ncclCommCount).
HAL_MUST_USE_RESULT hal_status_t gpu_ccl_comm_rank(gpu_ccl_t* ccl,
                                                   gpu_ccl_comm_t comm,
                                                   int* out_rank,
                                                   int* out_count);
// Destroys |comm| (ncclCommDestroy); |abort|: ncclCommAbort, which does not
// wait for its work or its peers. A library error here is dropped.
void gpu_ccl_comm_destroy(gpu_ccl_t* ccl, gpu_ccl_comm_t comm, bool abort);

// One communicator per device of |devices| (|count| of them, rank i on
// devices[i]), all at once from this thread (ncclCommInitAll).
HAL_MUST_USE_RESULT hal_status_t gpu_ccl_comm_init_all(gpu_ccl_t* ccl,
                                                       int count,
                                                       const int* devices,
                                                       gpu_ccl_comm_t* out);

// OK, or the communicator's asynchronous failure (a collective that
// failed, an abort, a peer gone) with the library's message.
HAL_MUST_USE_RESULT hal_status_t gpu_ccl_comm_check(gpu_ccl_t* ccl,
                                                    gpu_ccl_comm_t comm);

typedef enum gpu_ccl_kind_e {
  GPU_CCL_ALL_REDUCE = 0,
  GPU_CCL_BROADCAST = 1,
  GPU_CCL_REDUCE = 2,
  GPU_CCL_ALL_GATHER = 3,      // |count| elements in, count * ranks out
  GPU_CCL_REDUCE_SCATTER = 4,  // count * ranks in, |count| out
  GPU_CCL_SEND = 5,            // to |peer|
  GPU_CCL_RECV = 6,            // from |peer|
} gpu_ccl_kind_t;

typedef struct gpu_ccl_collective_t {
  gpu_ccl_kind_t kind;
  gpu_device_ptr_t send;  // 0 for a receive
  gpu_device_ptr_t recv;  // 0 for a send
  size_t count;
  int type;       // ncclDataType_t
  int reduction;  // ncclRedOp_t (reductions only)
  int peer;       // the root (broadcast, reduce) or the peer (send, recv)
} gpu_ccl_collective_t;

// Enqueues |collective| on |stream| (of |comm|'s device, current on the
// calling thread). Returns the library's refusal of the call; how the
// collective ended is for gpu_ccl_comm_check once the stream ran it.
HAL_MUST_USE_RESULT hal_status_t
gpu_ccl_enqueue(gpu_ccl_t* ccl, gpu_ccl_comm_t comm,
                const gpu_ccl_collective_t* collective, gpu_stream_t stream);

// ncclGroupStart / ncclGroupEnd: the calls between them are issued
// together (one thread driving several ranks' communicators).
HAL_MUST_USE_RESULT hal_status_t gpu_ccl_group_start(gpu_ccl_t* ccl);
HAL_MUST_USE_RESULT hal_status_t gpu_ccl_group_end(gpu_ccl_t* ccl);

HAL_EXTERN_C_END

#endif  // DRIVERS_GPU_ADAPTER_CCL_H_
