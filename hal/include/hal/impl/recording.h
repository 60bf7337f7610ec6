// Copyright 2026 The HAL Authors.
//
// The recording: the driver-neutral op list (hal_op_t) a command buffer
// records, and a ready-made hal_command_buffer_t that records into it.
//
// Every driver's command buffer is this one: libhal validates each op
// (command_buffer.h), the recording stores it with its resources retained
// and its inline data copied, and the driver's strategy consumes the list:
//
//   stream strategy   walks hal_recording_command_buffer_ops() at submit
//                     and replays each op into a stream;
//   graph strategy    builds a vendor graph from the ops in its end() hook,
//                     once, and launches it per submit.
//
// A driver passes hooks (all optional) to hal_recording_command_buffer_
// create() and finds them again through hal_recording_command_buffer_user().
//
// Thread-safety: as hal_command_buffer_t: one thread records; once ended
// the op list is immutable and may be read from any thread until the next
// begin(), which libhal refuses while a submission of the buffer is in
// flight (command_buffer.h). So a driver may read the ops and their data
// from issue until it releases the submission, and the begin and end hooks
// never run while a submission may still use what they replace.

#ifndef HAL_IMPL_RECORDING_H_
#define HAL_IMPL_RECORDING_H_

#include "hal/allocator.h"
#include "hal/base.h"
#include "hal/impl/buffer.h"
#include "hal/impl/channel.h"
#include "hal/impl/command_buffer.h"
#include "hal/status.h"

HAL_EXTERN_C_BEGIN

typedef enum hal_op_kind_e {
  // Everything before completes before anything after starts.
  HAL_OP_BARRIER = 0,
  HAL_OP_FILL = 1,
  HAL_OP_UPDATE = 2,
  HAL_OP_COPY = 3,
  HAL_OP_DISPATCH = 4,
  HAL_OP_COLLECTIVE = 5,
} hal_op_kind_t;

// One recorded op. Buffers are retained by the recording; ranges are
// validated and resolved (no HAL_WHOLE_BUFFER, length > 0).
typedef struct hal_op_t {
  hal_op_kind_t kind;
  union {
    struct {
      hal_buffer_t* target;
      uint64_t target_offset;
      uint64_t length;
      uint32_t pattern;         // the pattern in its low |pattern_length| bytes
      uint32_t pattern_length;  // 1, 2 or 4
    } fill;
    struct {
      const void* data;  // owned by the recording
      hal_buffer_t* target;
      uint64_t target_offset;
      uint64_t length;
    } update;
    struct {
      hal_buffer_t* source;
      uint64_t source_offset;
      hal_buffer_t* target;
      uint64_t target_offset;
      uint64_t length;
    } copy;
    struct {
      hal_executable_t* executable;  // retained
      uint32_t entry_point;
      uint32_t workgroup_count[3];
      uint32_t workgroup_size[3];
      uint32_t constant_count;
      uint32_t binding_count;
      const uint32_t* constants;  // owned by the recording
      // Owned by the recording; each buffer retained, lengths resolved.
      const hal_dispatch_binding_t* bindings;
    } dispatch;
    struct {
      hal_channel_t* channel;  // retained
      hal_collective_params_t params;
      // Retained; NULL where the kind has no use for one on this rank.
      hal_buffer_t* send;
      uint64_t send_offset;
      hal_buffer_t* recv;
      uint64_t recv_offset;
    } collective;
  };
} hal_op_t;

// Hooks a driver's strategy hangs on the recording command buffer. Each is
// optional; each runs on the recording thread.
typedef struct hal_recording_hooks_t {
  // After the last op: build what the strategy needs (a graph). An error
  // here fails end() and the command buffer stays RECORDING.
  hal_status_t (*end)(void* user, hal_command_buffer_t* command_buffer);
  // When the command buffer is destroyed, before the op list is freed.
  void (*destroy)(void* user, hal_command_buffer_t* command_buffer);
  // hal_command_buffer_query_info(): fill the native_* counts.
  void (*query_info)(void* user, const hal_command_buffer_t* command_buffer,
                     hal_command_buffer_info_t* out_info);
} hal_recording_hooks_t;

// Creates a command buffer of |device| that records into an op list.
// |hooks| is copied (may be NULL); |user| is passed to them.
HAL_API HAL_MUST_USE_RESULT hal_status_t hal_recording_command_buffer_create(
    hal_device_t* device, hal_command_buffer_mode_t mode,
    const hal_recording_hooks_t* hooks, void* user,
    hal_command_buffer_t** out_command_buffer);

// The ops recorded (valid until the next begin or destroy); NULL and a
// count of 0 for NULL or a command buffer that is not a recording.
HAL_API const hal_op_t* hal_recording_command_buffer_ops(
    const hal_command_buffer_t* command_buffer, size_t* out_count);

// The |user| pointer given at creation (NULL, likewise).
HAL_API void* hal_recording_command_buffer_user(
    const hal_command_buffer_t* command_buffer);

HAL_EXTERN_C_END

#endif  // HAL_IMPL_RECORDING_H_
