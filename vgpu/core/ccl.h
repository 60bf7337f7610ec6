// Copyright 2026 The HAL Authors.
//
// The virtual GPU's collectives engine (ccl.c): what NCCL and RCCL do, on
// the CPU, for ranks in one process. Communicators are joined by a 128-byte
// unique id (a bounded wait for every rank); each rank's k-th collective
// meets the other ranks' k-th, and the last to arrive checks that they
// agree (kind, count, type, reduction, root), computes every rank's result
// and completes every rank's mark, with an error when they disagree or the
// communicator was aborted. Send and receive meet per ordered pair of
// ranks, in order. Nothing here blocks a stream's thread: a stream enqueues
// the arrival as work and then waits for the mark without holding one.
//
// Types and reductions are NCCL's codes (nccl.h): int8, uint8, int32,
// uint32, int64, uint64, float16, float32, float64, bfloat16 (float8
// types are refused); sum, prod, max, min, avg (integer avg truncates, as
// NCCL's does).

#ifndef VGPU_CORE_CCL_H_
#define VGPU_CORE_CCL_H_

#include <stddef.h>
#include <stdint.h>

#include "internal.h"

#define VGPU_CCL_ID_BYTES 128
#define VGPU_CCL_MAX_RANKS 64

typedef enum vgpu_ccl_kind {
  VGPU_CCL_ALL_REDUCE = 0,
  VGPU_CCL_BROADCAST,
  VGPU_CCL_REDUCE,
  VGPU_CCL_ALL_GATHER,      // |count| per rank in, count * ranks out
  VGPU_CCL_REDUCE_SCATTER,  // count * ranks in, |count| per rank out
  VGPU_CCL_SEND,            // to |peer|
  VGPU_CCL_RECV,            // from |peer|
} vgpu_ccl_kind;

// One rank's call. |send| and |recv| are host-addressable (the virtual
// GPU's device memory is); they must stay valid until |done| completes.
typedef struct vgpu_ccl_call {
  vgpu_ccl_kind kind;
  const void* send;
  void* recv;
  size_t count;
  int type;       // ncclDataType_t
  int reduction;  // ncclRedOp_t (reductions only)
  int peer;       // the root (broadcast, reduce) or the peer (send, recv)
} vgpu_ccl_call;

typedef struct vgpu_ccl_comm vgpu_ccl_comm;

// Joins rank |rank| of |rank_count| of the communicator named by |id|;
// returns once every rank joined. Fails (and leaves) after |timeout_ns|
// with VGPU_ERR_TIMEOUT naming the ranks still missing; with
// VGPU_ERR_INVALID_VALUE for a rank out of range, a rank joined twice, or
// a rank count that differs from the others'. |error| (|error_size|
// bytes) gets the message.
vgpu_status vgpu_ccl_join(const uint8_t id[VGPU_CCL_ID_BYTES], int rank_count,
                          int rank, uint64_t timeout_ns, vgpu_ccl_comm** out,
                          char* error, size_t error_size);
// Leaves and frees |comm|. The communicator is unusable for the ranks
// still in it: their pending and later collectives fail with
// VGPU_ERR_DEVICE_LOST and a message naming the rank that left (NCCL
// would hang).
void vgpu_ccl_leave(vgpu_ccl_comm* comm);
// Fails every collective of the communicator not yet completed, and every
// later one, on every rank, with |status| and a message naming |comm|'s
// rank (ncclCommAbort; a rank that errors).
void vgpu_ccl_abort(vgpu_ccl_comm* comm, vgpu_status status);

int vgpu_ccl_rank(const vgpu_ccl_comm* comm);
int vgpu_ccl_rank_count(const vgpu_ccl_comm* comm);
// The communicator's first error (VGPU_OK: none) and its message, as
// ncclCommGetAsyncError and ncclGetLastError.
vgpu_status vgpu_ccl_async_error(vgpu_ccl_comm* comm, char* message,
                                 size_t message_size);

// Validates |call| alone (kind, type, reduction, peer; VGPU_ERR_INVALID_VALUE
// and |error| when wrong), then takes part in this rank's next collective
// (or the next send or receive with |call->peer|): |done| (retained until
// then) completes when every rank's part is done, OK or with the error.
vgpu_status vgpu_ccl_arrive(vgpu_ccl_comm* comm, const vgpu_ccl_call* call,
                            vgpu_mark* done, char* error, size_t error_size);

// Bytes per element of |type| (0: not a type the engine handles).
size_t vgpu_ccl_type_size(int type);

#endif  // VGPU_CORE_CCL_H_
