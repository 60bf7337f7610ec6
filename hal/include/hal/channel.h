// Copyright 2026 The HAL Authors.
//
// hal_channel_t: a communicator for collectives (all-reduce and friends)
// between devices, in one process or across processes and machines, run by
// the vendor's collective library (NCCL beside CUDA, RCCL beside HIP:
// docs/collectives.md).
//
// A channel is one rank of a communicator: a device, its rank and the rank
// count. The ranks of a communicator share a 128-byte id that one of them
// generates (hal_channel_id_generate) and the host distributes out of band
// (a launcher's environment, an MPI broadcast, a shared file): the library
// bootstraps from it; the HAL opens no socket itself. Ranks in one process
// on several devices of one driver are made together with
// hal_channel_create_group.
//
// Collectives are recorded into command buffers
// (hal_command_buffer_collective) and run in queue order like every op:
// work before them in the command buffer, and work their submission waits
// for, completes first; work after them waits for them. Every rank must
// record the same collectives in the same order, with the same counts,
// element types, reductions and roots; a rank whose calls differ, or an
// abort, fails the channel, and the submissions that used it fail their
// signals with a status naming the channel's rank and the library's error.
// A submission whose collectives will never run (a wait failed, its device
// was released with it waiting) aborts their channels, so the peers fail
// instead of waiting for this rank's part forever; an aborted channel's
// later collectives fail with ABORTED.
//
// Thread-safety: all functions are thread-safe.

#ifndef HAL_CHANNEL_H_
#define HAL_CHANNEL_H_

#include "hal/base.h"
#include "hal/buffer.h"
#include "hal/status.h"

HAL_EXTERN_C_BEGIN

typedef struct hal_device_t hal_device_t;
typedef struct hal_command_buffer_t hal_command_buffer_t;
typedef struct hal_channel_t hal_channel_t;

// The id a communicator's ranks share (NCCL's ncclUniqueId): opaque bytes,
// copied as they are between processes.
#define HAL_CHANNEL_ID_SIZE 128
typedef struct hal_channel_id_t {
  uint8_t bytes[HAL_CHANNEL_ID_SIZE];
} hal_channel_id_t;

// A fresh id for a new communicator, from |device|'s collective library
// (ncclGetUniqueId). UNIMPLEMENTED for a driver without collectives; the
// library's load error (NOT_FOUND naming what was tried, and the variable
// that overrides it: HAL_NCCL_LIBRARY, HAL_RCCL_LIBRARY) otherwise.
HAL_API HAL_MUST_USE_RESULT hal_status_t
hal_channel_id_generate(hal_device_t* device, hal_channel_id_t* out_id);

// This process's rank |rank| of |rank_count| (>= 1) in the communicator of
// |id|, on |device| (ncclCommInitRank). Blocks until every rank joined, or
// fails (the library's status; a rank that never joins is its error after
// its own bound). INVALID_ARGUMENT: a rank outside [0, rank_count). Each
// rank needs a GPU of its own: two ranks of one communicator on one GPU
// are not supported by the library (NCCL may hang; their collectives fail
// after the library's bound on the virtual GPU).
HAL_API HAL_MUST_USE_RESULT hal_status_t hal_channel_create(
    hal_device_t* device, const hal_channel_id_t* id, int32_t rank,
    int32_t rank_count, hal_channel_t** out_channel);

// One channel per device of |devices| (|count| >= 1 of them, of one driver,
// each GPU once: two device objects of one GPU, made through two instances
// of the driver, are INVALID_ARGUMENT like the same object twice):
// out_channels[i] is rank i of |count|, on devices[i] (ncclCommInitAll),
// all made from this thread.
HAL_API HAL_MUST_USE_RESULT hal_status_t hal_channel_create_group(
    size_t count, hal_device_t* const* devices, hal_channel_t** out_channels);

HAL_API void hal_channel_retain(hal_channel_t* channel);
// The last release destroys the communicator once no submission that uses
// it is left (submissions keep their channels).
HAL_API void hal_channel_release(hal_channel_t* channel);

HAL_API int32_t hal_channel_rank(const hal_channel_t* channel);
HAL_API int32_t hal_channel_rank_count(const hal_channel_t* channel);
HAL_API hal_device_t* hal_channel_device(const hal_channel_t* channel);

// OK, or the channel's failure: a collective whose ranks disagreed, an
// abort, a peer gone (ncclCommGetAsyncError), with the library's message.
HAL_API HAL_MUST_USE_RESULT hal_status_t
hal_channel_check(hal_channel_t* channel);

// No channel from hal_channel_split (NCCL_SPLIT_NOCOLOR).
#define HAL_CHANNEL_SPLIT_NO_COLOR (-1)

// Splits |channel|'s communicator (ncclCommSplit): every rank of it calls
// this, in the same order as its other splits, and blocks until the ranks
// of its new channel joined. It comes after the collectives the device's
// queues hold ready when it is called (submitted before it with nothing
// left to wait for): it waits for their issue, which hands them to the
// library, first; work still waiting for a semaphore goes after it. The ranks
// passing one |color| (>= 0) make a new channel on the same device, ranked by
// |key|, ties by their rank in |channel|; HAL_CHANNEL_SPLIT_NO_COLOR makes none
// (*out_channel NULL). UNIMPLEMENTED when the library has no split (NCCL
// before 2.18); INVALID_ARGUMENT for a color below -1; ABORTED for an aborted
// channel, whatever aborted it (work of its own that never ran, a failure a
// check found, a peer's abort), the cause in its message.
HAL_API HAL_MUST_USE_RESULT hal_status_t
hal_channel_split(hal_channel_t* channel, int32_t color, int32_t key,
                  hal_channel_t** out_channel);

//===----------------------------------------------------------------------===//
// Collectives in command buffers
//===----------------------------------------------------------------------===//

typedef enum hal_collective_kind_e {
  // Every rank's send, reduced element-wise, into every rank's recv.
  HAL_COLLECTIVE_ALL_REDUCE = 0,
  // The root's send into every rank's recv (send unused elsewhere).
  HAL_COLLECTIVE_BROADCAST = 1,
  // Every rank's send, reduced, into the root's recv (unused elsewhere).
  HAL_COLLECTIVE_REDUCE = 2,
  // Each rank's |count| elements, in rank order, into every rank's recv
  // (count * ranks elements).
  HAL_COLLECTIVE_ALL_GATHER = 3,
  // count * ranks elements of each rank reduced; rank r receives block r
  // (|count| elements).
  HAL_COLLECTIVE_REDUCE_SCATTER = 4,
  // |count| elements of send to rank |peer| (no recv buffer).
  HAL_COLLECTIVE_SEND = 5,
  // |count| elements from rank |peer| into recv (no send buffer).
  // Consecutive sends and receives in a command buffer (no other op, nor
  // an execution barrier, between them) are issued as one group, so a
  // ring of exchanges does not deadlock. The ops of one group run
  // concurrently, in no order among themselves (as in an NCCL group): a
  // receive must not write bytes another op of its group reads or writes,
  // or what they hold is undefined; a barrier between them orders them.
  HAL_COLLECTIVE_RECV = 6,
} hal_collective_kind_t;

// NCCL's element types, with its codes.
typedef enum hal_element_type_e {
  HAL_ELEMENT_TYPE_INT8 = 0,
  HAL_ELEMENT_TYPE_UINT8 = 1,
  HAL_ELEMENT_TYPE_INT32 = 2,
  HAL_ELEMENT_TYPE_UINT32 = 3,
  HAL_ELEMENT_TYPE_INT64 = 4,
  HAL_ELEMENT_TYPE_UINT64 = 5,
  HAL_ELEMENT_TYPE_FLOAT16 = 6,
  HAL_ELEMENT_TYPE_FLOAT32 = 7,
  HAL_ELEMENT_TYPE_FLOAT64 = 8,
  HAL_ELEMENT_TYPE_BFLOAT16 = 9,
} hal_element_type_t;

// NCCL's reductions, with its codes (all-reduce, reduce, reduce-scatter).
typedef enum hal_reduction_e {
  HAL_REDUCTION_SUM = 0,
  HAL_REDUCTION_PROD = 1,
  HAL_REDUCTION_MAX = 2,
  HAL_REDUCTION_MIN = 3,
  HAL_REDUCTION_AVG = 4,
} hal_reduction_t;

typedef struct hal_collective_params_t {
  hal_collective_kind_t kind;
  hal_element_type_t element_type;
  hal_reduction_t reduction;  // reductions only
  // The root (broadcast, reduce) or the peer (send, recv); else 0.
  int32_t root_or_peer;
  // Elements per rank (see each kind for what that means), >= 1.
  uint64_t count;
} hal_collective_params_t;

// Bytes of one element of |type| (0 for an unknown type).
HAL_API size_t hal_element_type_size(hal_element_type_t type);

// Records a collective over |channel|, reading |send| at |send_offset| and
// writing |recv| at |recv_offset| (NULL where the kind has no such buffer).
// Send and recv in one buffer must be disjoint or in place as NCCL defines
// it: the same range (all-reduce, broadcast, reduce), the send at this
// rank's block of the recv (all-gather), the recv at this rank's block of
// the send (reduce-scatter); any other overlap is refused. Checked here,
// INVALID_ARGUMENT naming what is wrong unless said otherwise: the command
// buffer's device is the channel's; the kind, type and reduction (for the
// kinds that reduce) are known; the root or peer (for the kinds that have
// one) is a rank of the channel (OUT_OF_RANGE); both ranges lie in their
// buffers (OUT_OF_RANGE, as is a size that overflows), which are of the
// channel's device, and both offsets are multiples of the element size;
// the ranges of one buffer as above. A field the kind does not use is not
// read. Drivers without collectives: UNIMPLEMENTED. The command buffer
// keeps the channel and the buffers.
HAL_API HAL_MUST_USE_RESULT hal_status_t hal_command_buffer_collective(
    hal_command_buffer_t* command_buffer, hal_channel_t* channel,
    const hal_collective_params_t* params, hal_buffer_t* send,
    uint64_t send_offset, hal_buffer_t* recv, uint64_t recv_offset);

HAL_EXTERN_C_END

#endif  // HAL_CHANNEL_H_
