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

// vgpu_ccl_kind, vgpu_ccl_call and vgpu_ccl_comm are in vgpu_core.h (the
// facades' view); the engine's own calls follow.

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

// Validates |call| alone (kind, type, reduction, peer; VGPU_ERR_INVALID_VALUE
// and |error| when wrong), then takes part in this rank's next collective
// (or the next send or receive with |call->peer|): |done| (retained until
// then) completes when every rank's part is done, OK or with the error.
vgpu_status vgpu_ccl_arrive(vgpu_ccl_comm* comm, const vgpu_ccl_call* call,
                            vgpu_mark* done, char* error, size_t error_size);

// Bytes per element of |type| (0: not a type the engine handles).
size_t vgpu_ccl_type_size(int type);

// A collective in a stream (VGPU_WORK_COLLECTIVE), when the stream reaches
// it: arrives, or completes |done| with the failure (|status|: the
// device's). The stream's next operation waits for |done|.
void vgpu_ccl_work_run(const vgpu_work_collective* work, vgpu_status status);

#endif  // VGPU_CORE_CCL_H_
