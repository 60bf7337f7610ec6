// Copyright 2026 The HAL Authors.
//
// hal_command_buffer_t for drivers: the shared fields a driver's command
// buffer type embeds first, the submission bookkeeping and the vtable.

#ifndef HAL_IMPL_COMMAND_BUFFER_H_
#define HAL_IMPL_COMMAND_BUFFER_H_

#include "hal/channel.h"
#include "hal/command_buffer.h"
#include "hal/impl/resource.h"

HAL_EXTERN_C_BEGIN

// Shared fields; drivers embed this first in their command buffer type.
typedef struct hal_command_buffer_t {
  hal_resource_t resource;  // parent: the owning device
  hal_device_t* device;     // borrowed: kept alive by resource.parent
  hal_command_buffer_mode_t mode;
  hal_command_buffer_state_t state;  // touched by the recording thread only
  uint32_t op_count;                 // ops recorded since begin()
  // What submitters and the recording thread agree on, in one word so that
  // begin() and a submission from another thread can never both succeed
  // (command_buffer.c): whether the buffer is EXECUTABLE, whether a ONE_SHOT
  // buffer's submission went through, and how many submissions hold it
  // (a queue_execute deciding, or a driver's retain until the device is
  // done with it). begin() refuses to re-record while that count is not 0.
  HAL_ATOMIC(uint64_t) gate;
} hal_command_buffer_t;
HAL_RESOURCE_ASSERT_LAYOUT(hal_command_buffer_t, resource);

HAL_API void hal_command_buffer_initialize(
    const hal_command_buffer_vtable_t* vtable, hal_device_t* device,
    hal_command_buffer_mode_t mode, hal_command_buffer_t* out_command_buffer);

// Called by hal_device_queue_execute for each command buffer before the
// driver sees the submission: checks that it is EXECUTABLE (and, for a
// ONE_SHOT buffer, not yet submitted) and holds it so that begin() cannot
// re-record it until hal_command_buffer_end_submit(). A ONE_SHOT buffer
// that another submission holds is waited for: if that one goes through,
// this one is FAILED_PRECONDITION; if it fails, this one may. The same
// ONE_SHOT buffer twice in one submission must be refused by the caller
// first. FAILED_PRECONDITION otherwise.
HAL_API HAL_MUST_USE_RESULT hal_status_t
hal_command_buffer_validate_submit(hal_command_buffer_t* command_buffer);

// Ends what hal_command_buffer_validate_submit began: |submitted| says
// whether the submission went through (a ONE_SHOT buffer is then used up).
// Not called for a hold the driver took over (|handed_over| below).
HAL_API void hal_command_buffer_end_submit(hal_command_buffer_t* command_buffer,
                                           bool submitted);

// The command buffers a queue_execute on this thread holds while its driver
// runs the submission, which may run callbacks inline (a failed wait fails
// the signals at once): a submission from such a callback of a ONE_SHOT
// buffer the outer call holds is refused rather than waited for, since the
// wait would be for the very call it runs inside. Frames nest; pop in
// reverse order of push.
//
// A REUSABLE buffer's hold passes to the driver: its
// hal_command_buffer_retain_for_submission() inside the call takes over
// the call's hold instead of counting another (|handed_over|), so the
// count drops to 0 when the driver releases the payload, before the
// signals are published, not when the call returns: a waiter woken by
// them may begin() at once, even while the call has not yet returned. A
// ONE_SHOT buffer's hold stays the call's: other submitters of it wait
// for the call to decide.
#define HAL_COMMAND_BUFFER_SUBMIT_MAX 1024
typedef struct hal_command_buffer_submit_frame_t {
  size_t count;
  hal_command_buffer_t* const* command_buffers;
  struct hal_command_buffer_submit_frame_t* outer;
  size_t first_held;  // no slot below it is still the call's
  uint64_t handed_over[HAL_COMMAND_BUFFER_SUBMIT_MAX / 64];  // bit per slot
} hal_command_buffer_submit_frame_t;
HAL_API void hal_command_buffer_submit_frame_push(
    hal_command_buffer_submit_frame_t* frame);
HAL_API void hal_command_buffer_submit_frame_pop(
    hal_command_buffer_submit_frame_t* frame);

// Called by queue_execute implementations for each command buffer a
// submission takes: retains it and counts one more submission in flight
// (or, called inside the queue_execute for a REUSABLE buffer the call
// holds, takes that hold over: see hal_command_buffer_submit_frame_t).
// The driver calls hal_command_buffer_release_for_submission() exactly once
// for each, after the device's last use of the command buffer's recording
// (the submission completed, failed and was quiesced, or will never run).
// The count drops with release ordering before the reference goes, and
// begin() reads it with acquire ordering, so whatever begin() frees is freed
// after the device's last read of it.
HAL_API void hal_command_buffer_retain_for_submission(
    hal_command_buffer_t* command_buffer);
HAL_API void hal_command_buffer_release_for_submission(
    hal_command_buffer_t* command_buffer);

// Validation of arguments, state and ranges is done by the wrappers above;
// members see resolved lengths (never HAL_WHOLE_BUFFER) and buffers of the
// command buffer's device. All members are required; the recording thread
// calls them.
struct hal_command_buffer_vtable_t {
  void (*destroy)(hal_command_buffer_t* command_buffer);
  // Drops any previous recording (REUSABLE re-record) and starts a new one.
  hal_status_t (*begin)(hal_command_buffer_t* command_buffer);
  // Finishes the recording (a graph driver builds its graph here).
  hal_status_t (*end)(hal_command_buffer_t* command_buffer);
  hal_status_t (*execution_barrier)(hal_command_buffer_t* command_buffer);
  hal_status_t (*fill_buffer)(hal_command_buffer_t* command_buffer,
                              hal_buffer_t* target, uint64_t target_offset,
                              uint64_t length, uint32_t pattern,
                              size_t pattern_length);
  hal_status_t (*update_buffer)(hal_command_buffer_t* command_buffer,
                                const void* source, hal_buffer_t* target,
                                uint64_t target_offset, uint64_t length);
  hal_status_t (*copy_buffer)(hal_command_buffer_t* command_buffer,
                              hal_buffer_t* source, uint64_t source_offset,
                              hal_buffer_t* target, uint64_t target_offset,
                              uint64_t length);
  // Optional (NULL: dispatches are UNIMPLEMENTED). Bindings are resolved
  // (no HAL_WHOLE_BUFFER) and every count validated.
  hal_status_t (*dispatch)(hal_command_buffer_t* command_buffer,
                           hal_executable_t* executable, size_t entry_point,
                           const uint32_t workgroup_count[3],
                           const uint32_t workgroup_size[3],
                           const uint32_t* constants, size_t constant_count,
                           const hal_dispatch_binding_t* bindings,
                           size_t binding_count);
  // Optional (NULL: collectives are UNIMPLEMENTED). Everything validated:
  // the channel is of the command buffer's device, |params| known and in
  // range, the ranges resolved (a buffer the kind has no use for is NULL).
  hal_status_t (*collective)(hal_command_buffer_t* command_buffer,
                             hal_channel_t* channel,
                             const hal_collective_params_t* params,
                             hal_buffer_t* send, uint64_t send_offset,
                             hal_buffer_t* recv, uint64_t recv_offset);
  // Optional: fills the native_* fields of |out_info| (zeroed before).
  void (*query_info)(const hal_command_buffer_t* command_buffer,
                     hal_command_buffer_info_t* out_info);
};

HAL_EXTERN_C_END

#endif  // HAL_IMPL_COMMAND_BUFFER_H_
