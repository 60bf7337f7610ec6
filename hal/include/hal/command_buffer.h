// Copyright 2026 The HAL Authors.
//
// hal_command_buffer_t: a recorded list of device operations, submitted with
// hal_device_queue_execute().
//
// Recording is a state machine, checked by libhal before any driver code
// runs:
//
//   INITIAL --begin--> RECORDING --end--> EXECUTABLE --(submit)*-->
//
// Ops are accepted only while RECORDING; begin only from INITIAL (or, for a
// REUSABLE buffer, from EXECUTABLE again: re-recording replaces the ops);
// submit only when EXECUTABLE. A ONE_SHOT buffer may be submitted once; the
// second submission is FAILED_PRECONDITION. Re-recording frees what the
// device reads (inline update data, a graph executable), so begin() on a
// buffer with a submission in flight (submitted, not yet completed or
// cancelled) is FAILED_PRECONDITION naming how many, and changes nothing.
// Once a wait for a submission's signal returned, or in a callback of that
// signal, the submission no longer holds the buffer (even if the call that
// submitted it has not returned yet on another thread). Any op that fails
// validation returns its error and leaves the recording as it was (the bad
// op is not recorded; the caller may go on or give up).
//
// Host data passed to update_buffer is copied at record time: the caller may
// free it as soon as the call returns.
//
// Errors of the record calls (nothing recorded): FAILED_PRECONDITION when
// the buffer is not RECORDING; INVALID_ARGUMENT for NULL or wrong-kind
// objects, buffers or executables of another device, a usage the op needs
// missing, offsets, lengths or pattern sizes the op does not allow,
// overlapping ranges of one buffer in a copy, constants or bindings that do
// not match the entry point, a zero workgroup dimension; OUT_OF_RANGE for a
// range past the end of a buffer (offset + length overflowing included), an
// update longer than HAL_MAX_UPDATE_LENGTH or whose host range wraps the
// address space, workgroups beyond the device's limits, an entry point the
// executable does not have. A length of 0 at an offset up to the buffer's
// end (past it is OUT_OF_RANGE) is accepted and records nothing, and an
// update of length 0 may pass NULL host data: it moves no byte, is no op of
// hal_command_buffer_info_t's op_count, and is no use of its buffers (a
// queue-ordered buffer named only by such ops is not checked against its
// dealloca at issue, docs/queue-ops.md); HAL_WHOLE_BUFFER as a fill length
// fills to the end of the target, as a copy length copies the rest of the
// source (update needs a length: there it is INVALID_ARGUMENT).
//
// How a driver runs the ops is its strategy: stream drivers replay them into
// a stream at submit; graph drivers build a vendor graph at end() and launch
// it per submit. Both see the same validated op list. Validation leaves
// end() only the vendor's own failures (out of memory, a lost device): an
// end() that fails leaves the buffer RECORDING with its ops, so end() may be
// called again once the cause is gone; one that keeps failing leaves the
// buffer only to be released.
//
// Thread-safety: recording a command buffer is NOT thread-safe (one thread
// records it); once EXECUTABLE it may be submitted from any thread, also
// while the recording thread calls begin() to re-record it: of a begin()
// and a submission that race, exactly one succeeds (the other is
// FAILED_PRECONDITION), and a submission that succeeded keeps its
// recording until the device is done with it. A ONE_SHOT buffer submitted
// from two threads at once goes to the first submission that goes through;
// one that fails (another of its buffers refused) does not use it up. A
// submission of it from a callback its own submission runs inline (a
// failed wait fails the signals within the call) is FAILED_PRECONDITION.

#ifndef HAL_COMMAND_BUFFER_H_
#define HAL_COMMAND_BUFFER_H_

#include "hal/base.h"
#include "hal/buffer.h"
#include "hal/executable.h"
#include "hal/resource.h"
#include "hal/status.h"

HAL_EXTERN_C_BEGIN

typedef struct hal_device_t hal_device_t;
typedef struct hal_command_buffer_vtable_t hal_command_buffer_vtable_t;

typedef enum hal_command_buffer_mode_e {
  HAL_COMMAND_BUFFER_MODE_ONE_SHOT = 0,  // submitted exactly once
  HAL_COMMAND_BUFFER_MODE_REUSABLE = 1,  // submitted any number of times
} hal_command_buffer_mode_t;

typedef enum hal_command_buffer_state_e {
  HAL_COMMAND_BUFFER_STATE_INITIAL = 0,
  HAL_COMMAND_BUFFER_STATE_RECORDING = 1,
  HAL_COMMAND_BUFFER_STATE_EXECUTABLE = 2,
} hal_command_buffer_state_t;

typedef struct hal_command_buffer_t hal_command_buffer_t;

// Largest fill pattern, in bytes (patterns are 1, 2 or 4 bytes).
#define HAL_MAX_FILL_PATTERN_LENGTH 4
// Largest inline update, in bytes (larger data goes through a buffer).
#define HAL_MAX_UPDATE_LENGTH (64u * 1024u)

HAL_API void hal_command_buffer_retain(hal_command_buffer_t* command_buffer);
HAL_API void hal_command_buffer_release(hal_command_buffer_t* command_buffer);

HAL_API hal_command_buffer_mode_t
hal_command_buffer_mode(const hal_command_buffer_t* command_buffer);
HAL_API hal_command_buffer_state_t
hal_command_buffer_state(const hal_command_buffer_t* command_buffer);

// What a command buffer's strategy made of the recording, for tests,
// benchmarks and tools. Stream strategies report zero builds and updates.
// Any thread may query it outside a recording (begin() to end() belongs to
// the recording thread), also while submissions of it are in flight: the
// counts of a recording over queue-ordered buffers change at its first
// issue.
typedef struct hal_command_buffer_info_t {
  // Ops recorded by the last begin/end (barriers included; an op of length
  // 0 records nothing).
  uint32_t op_count;
  // Native executables built from scratch (graph instantiations), by end()
  // or, for a recording over queue-ordered buffers, by its first issue. A
  // recording split around collectives builds one per run of other ops. A
  // build that fails counts nothing, not even the runs it built before.
  uint32_t native_build_count;
  // Times such a build updated the existing native executable in place
  // instead.
  uint32_t native_update_count;
} hal_command_buffer_info_t;

HAL_API HAL_MUST_USE_RESULT hal_status_t
hal_command_buffer_query_info(const hal_command_buffer_t* command_buffer,
                              hal_command_buffer_info_t* out_info);

HAL_API HAL_MUST_USE_RESULT hal_status_t
hal_command_buffer_begin(hal_command_buffer_t* command_buffer);
HAL_API HAL_MUST_USE_RESULT hal_status_t
hal_command_buffer_end(hal_command_buffer_t* command_buffer);

// Everything recorded before the barrier completes before anything recorded
// after it starts. Ops between barriers may run in any order or overlap.
HAL_API HAL_MUST_USE_RESULT hal_status_t
hal_command_buffer_execution_barrier(hal_command_buffer_t* command_buffer);

// Fills [target_offset, target_offset + length) with a repeated |pattern| of
// |pattern_length| bytes (1, 2 or 4). Offset and length must be multiples of
// the pattern length (the vendors' memset element sizes).
HAL_API HAL_MUST_USE_RESULT hal_status_t hal_command_buffer_fill_buffer(
    hal_command_buffer_t* command_buffer, hal_buffer_t* target,
    uint64_t target_offset, uint64_t length, const void* pattern,
    size_t pattern_length);

// Writes |length| bytes of host memory at |source| + |source_offset| into
// the target; the bytes are copied now. At most HAL_MAX_UPDATE_LENGTH.
HAL_API HAL_MUST_USE_RESULT hal_status_t hal_command_buffer_update_buffer(
    hal_command_buffer_t* command_buffer, const void* source,
    size_t source_offset, hal_buffer_t* target, uint64_t target_offset,
    uint64_t length);

// Copies between buffers. Overlapping ranges of the same buffer are
// rejected (INVALID_ARGUMENT): the vendors leave them undefined.
HAL_API HAL_MUST_USE_RESULT hal_status_t hal_command_buffer_copy_buffer(
    hal_command_buffer_t* command_buffer, hal_buffer_t* source,
    uint64_t source_offset, hal_buffer_t* target, uint64_t target_offset,
    uint64_t length);

// A buffer range bound to a dispatch: the kernel receives the device
// address of |buffer| + |offset|. |length| (HAL_WHOLE_BUFFER: to the end) is
// the range the kernel may touch, checked against the buffer at record time
// (a length of 0, or an offset at the buffer's end, binds an empty range:
// the dispatch is still recorded and run). |offset| needs no alignment
// here: the kernel gets the address as it is, and one that loads words
// from it needs it aligned to their size (a real GPU faults on a
// misaligned load; the virtual GPU does not).
typedef struct hal_dispatch_binding_t {
  hal_buffer_t* buffer;
  uint64_t offset;
  uint64_t length;
} hal_dispatch_binding_t;

// Runs entry point |entry_point| of |executable| over |workgroup_count|
// workgroups of |workgroup_size| threads, with |constants| (32-bit values)
// and |bindings| as its arguments (executable.h: the argument convention).
// Counts must match the entry point's declared layout; buffers must be of
// this device with DISPATCH_STORAGE usage; sizes and counts must be > 0 and
// within the device's limits (hal_device_properties_t). Everything is
// checked here, at record time.
HAL_API HAL_MUST_USE_RESULT hal_status_t hal_command_buffer_dispatch(
    hal_command_buffer_t* command_buffer, hal_executable_t* executable,
    size_t entry_point, const uint32_t workgroup_count[3],
    const uint32_t workgroup_size[3], const uint32_t* constants,
    size_t constant_count, const hal_dispatch_binding_t* bindings,
    size_t binding_count);

HAL_EXTERN_C_END

#endif  // HAL_COMMAND_BUFFER_H_
