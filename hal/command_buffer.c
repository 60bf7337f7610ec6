// Copyright 2026 The HAL Authors.

#include "hal/impl/command_buffer.h"

#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hal/impl/device.h"
#include "hal/trace.h"

static const hal_command_buffer_vtable_t* hal_command_buffer_vtable(
    hal_command_buffer_t* command_buffer) {
  return (const hal_command_buffer_vtable_t*)command_buffer->resource.vtable;
}

static const char* hal_command_buffer_state_name(
    hal_command_buffer_state_t state) {
  switch (state) {
    case HAL_COMMAND_BUFFER_STATE_INITIAL:
      return "INITIAL (begin() not called)";
    case HAL_COMMAND_BUFFER_STATE_RECORDING:
      return "RECORDING (end() not called)";
    case HAL_COMMAND_BUFFER_STATE_EXECUTABLE:
      return "EXECUTABLE (recording ended)";
  }
  return "UNKNOWN";
}

// hal_command_buffer_t.gate: bit 63 EXECUTABLE (set by end(), cleared by
// begin()), bit 62 SUBMITTED (a ONE_SHOT buffer's submission went through),
// the rest the submissions holding the buffer. begin() clears EXECUTABLE
// only while the count is 0, and a submission counts itself only while
// EXECUTABLE is set, both by compare-and-swap on the word: of a begin() and
// a submission racing from two threads exactly one succeeds.
#define HAL_COMMAND_BUFFER_GATE_EXECUTABLE (UINT64_C(1) << 63)
#define HAL_COMMAND_BUFFER_GATE_SUBMITTED (UINT64_C(1) << 62)
#define HAL_COMMAND_BUFFER_GATE_COUNT (HAL_COMMAND_BUFFER_GATE_SUBMITTED - 1)

HAL_API void hal_command_buffer_initialize(
    const hal_command_buffer_vtable_t* vtable, hal_device_t* device,
    hal_command_buffer_mode_t mode, hal_command_buffer_t* out_command_buffer) {
  hal_resource_initialize_kind(HAL_RESOURCE_KIND_COMMAND_BUFFER, vtable,
                               device ? &device->resource : NULL,
                               &out_command_buffer->resource);
  out_command_buffer->device = device;
  out_command_buffer->mode = mode;
  out_command_buffer->state = HAL_COMMAND_BUFFER_STATE_INITIAL;
  out_command_buffer->op_count = 0;
  atomic_init(&out_command_buffer->gate, 0);
}

HAL_API void hal_command_buffer_retain(hal_command_buffer_t* command_buffer) {
  hal_resource_retain(command_buffer ? &command_buffer->resource : NULL);
}

HAL_API void hal_command_buffer_release(hal_command_buffer_t* command_buffer) {
  hal_resource_release(command_buffer ? &command_buffer->resource : NULL);
}

HAL_API hal_command_buffer_mode_t
hal_command_buffer_mode(const hal_command_buffer_t* command_buffer) {
  return hal_resource_is_kind(command_buffer, HAL_RESOURCE_KIND_COMMAND_BUFFER)
             ? command_buffer->mode
             : HAL_COMMAND_BUFFER_MODE_ONE_SHOT;
}

HAL_API hal_command_buffer_state_t
hal_command_buffer_state(const hal_command_buffer_t* command_buffer) {
  return hal_resource_is_kind(command_buffer, HAL_RESOURCE_KIND_COMMAND_BUFFER)
             ? command_buffer->state
             : HAL_COMMAND_BUFFER_STATE_INITIAL;
}

// Every recording op starts here: non-NULL, RECORDING.
static hal_status_t hal_command_buffer_require_recording(
    hal_command_buffer_t* command_buffer, const char* op) {
  if (!command_buffer) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "%s: command buffer is NULL", op);
  }
  HAL_RETURN_AND_ANNOTATE_IF_ERROR(
      hal_resource_check_kind(command_buffer, HAL_RESOURCE_KIND_COMMAND_BUFFER,
                              "command buffer"),
      "%s", op);
  if (command_buffer->state != HAL_COMMAND_BUFFER_STATE_RECORDING) {
    return hal_make_status(
        HAL_STATUS_FAILED_PRECONDITION,
        "%s: command buffer is %s, not RECORDING", op,
        hal_command_buffer_state_name(command_buffer->state));
  }
  return HAL_OK;
}

HAL_API hal_status_t
hal_command_buffer_query_info(const hal_command_buffer_t* command_buffer,
                              hal_command_buffer_info_t* out_info) {
  if (!command_buffer || !out_info) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "command_buffer and out_info must not be NULL");
  }
  HAL_RETURN_IF_ERROR(hal_resource_check_kind(
      command_buffer, HAL_RESOURCE_KIND_COMMAND_BUFFER, "command buffer"));
  memset(out_info, 0, sizeof(*out_info));
  const hal_command_buffer_vtable_t* vtable =
      (const hal_command_buffer_vtable_t*)command_buffer->resource.vtable;
  if (vtable->query_info)
    vtable->query_info(command_buffer, out_info);
  out_info->op_count = command_buffer->op_count;
  return HAL_OK;
}

HAL_API hal_status_t
hal_command_buffer_begin(hal_command_buffer_t* command_buffer) {
  if (!command_buffer) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "begin: command buffer is NULL");
  }
  HAL_RETURN_AND_ANNOTATE_IF_ERROR(
      hal_resource_check_kind(command_buffer, HAL_RESOURCE_KIND_COMMAND_BUFFER,
                              "command buffer"),
      "begin");
  bool may_begin =
      command_buffer->state == HAL_COMMAND_BUFFER_STATE_INITIAL ||
      (command_buffer->state == HAL_COMMAND_BUFFER_STATE_EXECUTABLE &&
       command_buffer->mode == HAL_COMMAND_BUFFER_MODE_REUSABLE);
  if (!may_begin) {
    return hal_make_status(
        HAL_STATUS_FAILED_PRECONDITION,
        "begin: command buffer is %s; only a new command buffer or an "
        "ended REUSABLE one can begin recording",
        hal_command_buffer_state_name(command_buffer->state));
  }
  // Acquire: pairs with the release of the submission that brought the count
  // to 0, which came after the device's last use of the recording that the
  // begin hook and the reset are about to free. Clearing EXECUTABLE in the
  // same exchange keeps any submission from counting itself in after.
  uint64_t gate =
      atomic_load_explicit(&command_buffer->gate, memory_order_acquire);
  do {
    uint64_t in_flight = gate & HAL_COMMAND_BUFFER_GATE_COUNT;
    if (in_flight) {
      return hal_make_status(HAL_STATUS_FAILED_PRECONDITION,
                             "begin: command buffer has %" PRIu64
                             " submission(s) in flight; wait for them before "
                             "re-recording",
                             in_flight);
    }
  } while (!atomic_compare_exchange_weak_explicit(
      &command_buffer->gate, &gate, gate & ~HAL_COMMAND_BUFFER_GATE_EXECUTABLE,
      memory_order_acq_rel, memory_order_acquire));
  hal_status_t status =
      hal_command_buffer_vtable(command_buffer)->begin(command_buffer);
  if (status != HAL_OK) {
    // Nothing changed: submittable again as it was (nothing counted itself
    // in meanwhile, so nothing else can have changed either).
    atomic_fetch_or_explicit(&command_buffer->gate,
                             gate & HAL_COMMAND_BUFFER_GATE_EXECUTABLE,
                             memory_order_release);
    return status;
  }
  command_buffer->state = HAL_COMMAND_BUFFER_STATE_RECORDING;
  command_buffer->op_count = 0;
  hal_trace_instant(0, "host", "record_begin", NULL);
  return HAL_OK;
}

HAL_API hal_status_t
hal_command_buffer_end(hal_command_buffer_t* command_buffer) {
  HAL_RETURN_IF_ERROR(
      hal_command_buffer_require_recording(command_buffer, "end"));
  HAL_RETURN_IF_ERROR(
      hal_command_buffer_vtable(command_buffer)->end(command_buffer));
  command_buffer->state = HAL_COMMAND_BUFFER_STATE_EXECUTABLE;
  // Release: a submission that sees EXECUTABLE sees the recording.
  atomic_fetch_or_explicit(&command_buffer->gate,
                           HAL_COMMAND_BUFFER_GATE_EXECUTABLE,
                           memory_order_release);
  if (hal_trace_enabled()) {
    char args[32];
    snprintf(args, sizeof(args), "\"ops\": %u", command_buffer->op_count);
    hal_trace_instant(0, "host", "record_end", args);
  }
  return HAL_OK;
}

HAL_API hal_status_t
hal_command_buffer_execution_barrier(hal_command_buffer_t* command_buffer) {
  HAL_RETURN_IF_ERROR(
      hal_command_buffer_require_recording(command_buffer, "barrier"));
  HAL_RETURN_IF_ERROR(hal_command_buffer_vtable(command_buffer)
                          ->execution_barrier(command_buffer));
  ++command_buffer->op_count;
  return HAL_OK;
}

// Checks that |buffer| may be used by |command_buffer| with |usage| over a
// range; resolves HAL_WHOLE_BUFFER into |*inout_length|.
static hal_status_t hal_command_buffer_validate_buffer(
    hal_command_buffer_t* command_buffer, hal_buffer_t* buffer,
    hal_buffer_usage_t usage, uint64_t offset, uint64_t* inout_length,
    const char* op, const char* role) {
  if (!buffer) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT, "%s: %s buffer is NULL",
                           op, role);
  }
  HAL_RETURN_AND_ANNOTATE_IF_ERROR(
      hal_resource_check_kind(buffer, HAL_RESOURCE_KIND_BUFFER, "buffer"),
      "%s: %s buffer", op, role);
  if (buffer->device != command_buffer->device) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "%s: %s buffer belongs to another device", op, role);
  }
  if (!(buffer->usage & usage)) {
    return hal_make_status(
        HAL_STATUS_INVALID_ARGUMENT,
        "%s: %s buffer was allocated with usage 0x%x, "
        "which lacks %s",
        op, role, buffer->usage,
        usage == HAL_BUFFER_USAGE_TRANSFER_SOURCE   ? "TRANSFER_SOURCE"
        : usage == HAL_BUFFER_USAGE_TRANSFER_TARGET ? "TRANSFER_TARGET"
                                                    : "DISPATCH_STORAGE");
  }
  HAL_RETURN_AND_ANNOTATE_IF_ERROR(
      hal_buffer_validate_range(buffer, offset, *inout_length, inout_length),
      "%s: %s range", op, role);
  return HAL_OK;
}

HAL_API hal_status_t hal_command_buffer_fill_buffer(
    hal_command_buffer_t* command_buffer, hal_buffer_t* target,
    uint64_t target_offset, uint64_t length, const void* pattern,
    size_t pattern_length) {
  HAL_RETURN_IF_ERROR(
      hal_command_buffer_require_recording(command_buffer, "fill"));
  if (!pattern) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "fill: pattern is NULL");
  }
  if (pattern_length != 1 && pattern_length != 2 && pattern_length != 4) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "fill: pattern length %zu is not 1, 2 or 4 bytes",
                           pattern_length);
  }
  HAL_RETURN_IF_ERROR(hal_command_buffer_validate_buffer(
      command_buffer, target, HAL_BUFFER_USAGE_TRANSFER_TARGET, target_offset,
      &length, "fill", "target"));
  if (target_offset % pattern_length || length % pattern_length) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "fill: offset %" PRIu64 " and length %" PRIu64
                           " must be multiples of the %zu-byte pattern",
                           target_offset, length, pattern_length);
  }
  if (length == 0)
    return HAL_OK;  // nothing to record
  uint32_t pattern_value = 0;
  memcpy(&pattern_value, pattern, pattern_length);
  HAL_RETURN_IF_ERROR(hal_command_buffer_vtable(command_buffer)
                          ->fill_buffer(command_buffer, target, target_offset,
                                        length, pattern_value, pattern_length));
  ++command_buffer->op_count;
  return HAL_OK;
}

HAL_API hal_status_t hal_command_buffer_update_buffer(
    hal_command_buffer_t* command_buffer, const void* source,
    size_t source_offset, hal_buffer_t* target, uint64_t target_offset,
    uint64_t length) {
  HAL_RETURN_IF_ERROR(
      hal_command_buffer_require_recording(command_buffer, "update"));
  if (length == HAL_WHOLE_BUFFER) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "update: needs an explicit length, not "
                           "HAL_WHOLE_BUFFER");
  }
  if (!source && length) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "update: source is NULL");
  }
  if (length > HAL_MAX_UPDATE_LENGTH) {
    return hal_make_status(HAL_STATUS_OUT_OF_RANGE,
                           "update: %" PRIu64
                           " bytes exceed the inline "
                           "update limit of %u; copy from a buffer instead",
                           length, HAL_MAX_UPDATE_LENGTH);
  }
  // The host range [source + source_offset, + length) must not wrap.
  if (source && (uintptr_t)source + source_offset < (uintptr_t)source) {
    return hal_make_status(HAL_STATUS_OUT_OF_RANGE,
                           "update: source offset %zu wraps the address space",
                           source_offset);
  }
  if (source && length &&
      (uintptr_t)source + source_offset + (uintptr_t)length <
          (uintptr_t)source + source_offset) {
    return hal_make_status(HAL_STATUS_OUT_OF_RANGE,
                           "update: source offset %zu + %" PRIu64
                           " bytes wraps the address space",
                           source_offset, length);
  }
  HAL_RETURN_IF_ERROR(hal_command_buffer_validate_buffer(
      command_buffer, target, HAL_BUFFER_USAGE_TRANSFER_TARGET, target_offset,
      &length, "update", "target"));
  if (length == 0)
    return HAL_OK;
  HAL_RETURN_IF_ERROR(
      hal_command_buffer_vtable(command_buffer)
          ->update_buffer(command_buffer,
                          (const uint8_t*)source + source_offset, target,
                          target_offset, length));
  ++command_buffer->op_count;
  return HAL_OK;
}

HAL_API hal_status_t hal_command_buffer_copy_buffer(
    hal_command_buffer_t* command_buffer, hal_buffer_t* source,
    uint64_t source_offset, hal_buffer_t* target, uint64_t target_offset,
    uint64_t length) {
  HAL_RETURN_IF_ERROR(
      hal_command_buffer_require_recording(command_buffer, "copy"));
  uint64_t source_length = length;
  HAL_RETURN_IF_ERROR(hal_command_buffer_validate_buffer(
      command_buffer, source, HAL_BUFFER_USAGE_TRANSFER_SOURCE, source_offset,
      &source_length, "copy", "source"));
  // HAL_WHOLE_BUFFER means the rest of the source; the target must hold it.
  uint64_t target_length = source_length;
  HAL_RETURN_IF_ERROR(hal_command_buffer_validate_buffer(
      command_buffer, target, HAL_BUFFER_USAGE_TRANSFER_TARGET, target_offset,
      &target_length, "copy", "target"));
  length = source_length;
  if (source == target && length && source_offset < target_offset + length &&
      target_offset < source_offset + length) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "copy: source [%" PRIu64 ", +%" PRIu64
                           ") overlaps target [%" PRIu64 ", +%" PRIu64
                           ") in the same buffer",
                           source_offset, length, target_offset, length);
  }
  if (length == 0)
    return HAL_OK;
  HAL_RETURN_IF_ERROR(hal_command_buffer_vtable(command_buffer)
                          ->copy_buffer(command_buffer, source, source_offset,
                                        target, target_offset, length));
  ++command_buffer->op_count;
  return HAL_OK;
}

// Checks a dispatch's grid against the device's limits.
static hal_status_t hal_command_buffer_validate_grid(
    hal_command_buffer_t* command_buffer, const uint32_t workgroup_count[3],
    const uint32_t workgroup_size[3]) {
  if (!workgroup_count || !workgroup_size) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "dispatch: workgroup count and size are required");
  }
  hal_device_properties_t properties;
  HAL_RETURN_IF_ERROR(
      hal_device_query_properties(command_buffer->device, &properties));
  uint64_t threads = 1;
  for (int i = 0; i < 3; ++i) {
    if (workgroup_count[i] == 0 || workgroup_size[i] == 0) {
      return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                             "dispatch: workgroup count %ux%ux%u and size "
                             "%ux%ux%u must have no zero dimension",
                             workgroup_count[0], workgroup_count[1],
                             workgroup_count[2], workgroup_size[0],
                             workgroup_size[1], workgroup_size[2]);
    }
    if (properties.max_workgroup_count[i] &&
        workgroup_count[i] > properties.max_workgroup_count[i]) {
      return hal_make_status(HAL_STATUS_OUT_OF_RANGE,
                             "dispatch: %u workgroups in dimension %d exceed "
                             "the device's %u",
                             workgroup_count[i], i,
                             properties.max_workgroup_count[i]);
    }
    if (properties.max_workgroup_dims[i] &&
        workgroup_size[i] > properties.max_workgroup_dims[i]) {
      return hal_make_status(HAL_STATUS_OUT_OF_RANGE,
                             "dispatch: workgroups %u threads wide in "
                             "dimension %d exceed the device's %u",
                             workgroup_size[i], i,
                             properties.max_workgroup_dims[i]);
    }
    // Three 32-bit factors may pass 2^64: saturate, which any limit
    // refuses.
    threads = threads > UINT64_MAX / workgroup_size[i]
                  ? UINT64_MAX
                  : threads * workgroup_size[i];
  }
  if (properties.max_workgroup_size &&
      threads > properties.max_workgroup_size) {
    return hal_make_status(HAL_STATUS_OUT_OF_RANGE,
                           "dispatch: workgroups of %llu threads exceed the "
                           "device's %u",
                           (unsigned long long)threads,
                           properties.max_workgroup_size);
  }
  return HAL_OK;
}

HAL_API hal_status_t hal_command_buffer_dispatch(
    hal_command_buffer_t* command_buffer, hal_executable_t* executable,
    size_t entry_point, const uint32_t workgroup_count[3],
    const uint32_t workgroup_size[3], const uint32_t* constants,
    size_t constant_count, const hal_dispatch_binding_t* bindings,
    size_t binding_count) {
  HAL_RETURN_IF_ERROR(
      hal_command_buffer_require_recording(command_buffer, "dispatch"));
  if (!executable) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "dispatch: executable is NULL");
  }
  HAL_RETURN_AND_ANNOTATE_IF_ERROR(
      hal_resource_check_kind(executable, HAL_RESOURCE_KIND_EXECUTABLE,
                              "executable"),
      "dispatch");
  if (executable->device != command_buffer->device) {
    return hal_make_status(
        HAL_STATUS_INVALID_ARGUMENT,
        "dispatch: the executable belongs to another device");
  }
  const hal_entry_point_info_t* entry =
      hal_executable_entry_point_info(executable, entry_point);
  if (!entry) {
    return hal_make_status(
        HAL_STATUS_OUT_OF_RANGE,
        "dispatch: entry point %zu of an executable with %zu", entry_point,
        executable->entry_point_count);
  }
  if (constant_count != entry->constant_count ||
      binding_count != entry->binding_count) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "dispatch: '%s' takes %u bindings and %u constants, "
                           "got %zu and %zu",
                           entry->name, entry->binding_count,
                           entry->constant_count, binding_count,
                           constant_count);
  }
  if ((constant_count && !constants) || (binding_count && !bindings)) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "dispatch: '%s': NULL constants or bindings",
                           entry->name);
  }
  HAL_RETURN_AND_ANNOTATE_IF_ERROR(
      hal_command_buffer_validate_grid(command_buffer, workgroup_count,
                                       workgroup_size),
      "dispatching '%s'", entry->name);
  hal_dispatch_binding_t resolved[HAL_MAX_DISPATCH_BINDINGS];
  for (size_t i = 0; i < binding_count; ++i) {
    char role[32];
    snprintf(role, sizeof(role), "binding %zu", i);
    resolved[i] = bindings[i];
    HAL_RETURN_IF_ERROR(hal_command_buffer_validate_buffer(
        command_buffer, bindings[i].buffer, HAL_BUFFER_USAGE_DISPATCH_STORAGE,
        bindings[i].offset, &resolved[i].length, "dispatch", role));
  }
  const hal_command_buffer_vtable_t* vtable =
      hal_command_buffer_vtable(command_buffer);
  if (!vtable->dispatch) {
    return hal_make_status(HAL_STATUS_UNIMPLEMENTED,
                           "dispatch: this command buffer cannot dispatch");
  }
  HAL_RETURN_IF_ERROR(vtable->dispatch(
      command_buffer, executable, entry_point, workgroup_count, workgroup_size,
      constants, constant_count, resolved, binding_count));
  ++command_buffer->op_count;
  return HAL_OK;
}

// The bytes of |count| elements of |size|, times |blocks|; false on overflow.
// count x size x blocks, false when it does not fit. UINT64_MAX itself is
// HAL_WHOLE_BUFFER, which the range checks read as "to the buffer's end",
// so it counts as not fitting.
static bool hal_collective_bytes(uint64_t count, size_t size, uint64_t blocks,
                                 uint64_t* out_bytes) {
  if (count > UINT64_MAX / size || count * size > UINT64_MAX / blocks ||
      count * size * blocks == HAL_WHOLE_BUFFER) {
    return false;
  }
  *out_bytes = count * size * blocks;
  return true;
}

static const char* hal_collective_kind_name(hal_collective_kind_t kind) {
  switch (kind) {
    case HAL_COLLECTIVE_ALL_REDUCE:
      return "all_reduce";
    case HAL_COLLECTIVE_BROADCAST:
      return "broadcast";
    case HAL_COLLECTIVE_REDUCE:
      return "reduce";
    case HAL_COLLECTIVE_ALL_GATHER:
      return "all_gather";
    case HAL_COLLECTIVE_REDUCE_SCATTER:
      return "reduce_scatter";
    case HAL_COLLECTIVE_SEND:
      return "send";
    case HAL_COLLECTIVE_RECV:
      return "recv";
  }
  return NULL;
}

// One buffer of a collective: |need| says whether the kind uses it on this
// rank (NULL is refused then, and a buffer given is checked either way).
// Whether a collective may read [send_offset, +send_bytes) and write
// [recv_offset, +recv_bytes) of one buffer: the ranges are disjoint, or
// in place as NCCL defines it (the same range for all-reduce, broadcast
// and reduce; an all-gather's send at this rank's block of its recv; a
// reduce-scatter's recv at this rank's block of its send, blocks of
// |block_bytes|). Any other overlap has no defined result.
static bool hal_collective_ranges_allowed(hal_collective_kind_t kind,
                                          int32_t rank, uint64_t block_bytes,
                                          uint64_t send_offset,
                                          uint64_t send_bytes,
                                          uint64_t recv_offset,
                                          uint64_t recv_bytes) {
  if (send_offset >= recv_offset + recv_bytes ||
      recv_offset >= send_offset + send_bytes) {
    return true;
  }
  uint64_t own_block = (uint64_t)rank * block_bytes;
  switch (kind) {
    case HAL_COLLECTIVE_ALL_GATHER:
      return send_offset == recv_offset + own_block;
    case HAL_COLLECTIVE_REDUCE_SCATTER:
      return recv_offset == send_offset + own_block;
    default:
      return send_offset == recv_offset;
  }
}

static hal_status_t hal_collective_validate_buffer(
    hal_command_buffer_t* command_buffer, hal_buffer_t* buffer, uint64_t offset,
    uint64_t bytes, size_t element_size, bool need, hal_buffer_usage_t usage,
    const char* op, const char* role) {
  if (!buffer) {
    if (!need)
      return HAL_OK;
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT, "%s: %s buffer is NULL",
                           op, role);
  }
  // The library reads and writes whole elements at their alignment (a
  // device faults on a misaligned one); allocations are aligned further.
  if (offset % element_size != 0) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "%s: %s offset %" PRIu64
                           " is not a multiple of the element size (%zu "
                           "bytes)",
                           op, role, offset, element_size);
  }
  uint64_t length = bytes;
  HAL_RETURN_IF_ERROR(hal_command_buffer_validate_buffer(
      command_buffer, buffer, usage, offset, &length, op, role));
  // HOST_VISIBLE memory is host memory the device can reach (pinned), even
  // when it is DEVICE_LOCAL too: the library wants the device's own.
  if (!(buffer->memory_type & HAL_MEMORY_TYPE_DEVICE_LOCAL) ||
      (buffer->memory_type & HAL_MEMORY_TYPE_HOST_VISIBLE)) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "%s: %s buffer is not DEVICE_LOCAL only (memory "
                           "type 0x%x): the collective library reads and "
                           "writes device memory",
                           op, role, buffer->memory_type);
  }
  return HAL_OK;
}

HAL_API hal_status_t hal_command_buffer_collective(
    hal_command_buffer_t* command_buffer, hal_channel_t* channel,
    const hal_collective_params_t* params, hal_buffer_t* send,
    uint64_t send_offset, hal_buffer_t* recv, uint64_t recv_offset) {
  HAL_RETURN_IF_ERROR(
      hal_command_buffer_require_recording(command_buffer, "collective"));
  HAL_RETURN_AND_ANNOTATE_IF_ERROR(
      hal_resource_check_kind(channel, HAL_RESOURCE_KIND_CHANNEL, "channel"),
      "collective");
  if (!params) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "collective: params is NULL");
  }
  const char* op = hal_collective_kind_name(params->kind);
  if (!op) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "collective: unknown kind %d", (int)params->kind);
  }
  if (channel->device != command_buffer->device) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "%s: the channel (rank %" PRId32
                           ") is of device '%s', the command buffer of '%s'",
                           op, channel->rank, channel->device->info.name,
                           command_buffer->device->info.name);
  }
  size_t size = hal_element_type_size(params->element_type);
  if (size == 0) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "%s: unknown element type %d", op,
                           (int)params->element_type);
  }
  bool reduces = params->kind == HAL_COLLECTIVE_ALL_REDUCE ||
                 params->kind == HAL_COLLECTIVE_REDUCE ||
                 params->kind == HAL_COLLECTIVE_REDUCE_SCATTER;
  if (reduces && ((unsigned)params->reduction > HAL_REDUCTION_AVG)) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "%s: unknown reduction %d", op,
                           (int)params->reduction);
  }
  bool rooted = params->kind == HAL_COLLECTIVE_BROADCAST ||
                params->kind == HAL_COLLECTIVE_REDUCE;
  bool paired = params->kind == HAL_COLLECTIVE_SEND ||
                params->kind == HAL_COLLECTIVE_RECV;
  if ((rooted || paired) && (params->root_or_peer < 0 ||
                             params->root_or_peer >= channel->rank_count)) {
    return hal_make_status(HAL_STATUS_OUT_OF_RANGE,
                           "%s: %s %" PRId32
                           " is not a rank of the channel (%" PRId32 " ranks)",
                           op, rooted ? "root" : "peer", params->root_or_peer,
                           channel->rank_count);
  }
  if (params->count == 0) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "%s: a count of 0 elements", op);
  }
  uint64_t ranks = (uint64_t)channel->rank_count;
  uint64_t send_blocks =
      params->kind == HAL_COLLECTIVE_REDUCE_SCATTER ? ranks : 1;
  uint64_t recv_blocks = params->kind == HAL_COLLECTIVE_ALL_GATHER ? ranks : 1;
  uint64_t send_bytes = 0, recv_bytes = 0;
  if (!hal_collective_bytes(params->count, size, send_blocks, &send_bytes) ||
      !hal_collective_bytes(params->count, size, recv_blocks, &recv_bytes)) {
    return hal_make_status(HAL_STATUS_OUT_OF_RANGE,
                           "%s: %" PRIu64 " elements of %zu bytes overflow", op,
                           params->count, size);
  }
  bool is_root = rooted && params->root_or_peer == channel->rank;
  bool needs_send = params->kind != HAL_COLLECTIVE_RECV &&
                    !(params->kind == HAL_COLLECTIVE_BROADCAST && !is_root);
  bool needs_recv = params->kind != HAL_COLLECTIVE_SEND &&
                    !(params->kind == HAL_COLLECTIVE_REDUCE && !is_root);
  if (params->kind == HAL_COLLECTIVE_SEND && recv) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "send: a send has no recv buffer");
  }
  if (params->kind == HAL_COLLECTIVE_RECV && send) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "recv: a receive has no send buffer");
  }
  HAL_RETURN_IF_ERROR(hal_collective_validate_buffer(
      command_buffer, send, send_offset, send_bytes, size, needs_send,
      HAL_BUFFER_USAGE_TRANSFER_SOURCE, op, "send"));
  HAL_RETURN_IF_ERROR(hal_collective_validate_buffer(
      command_buffer, recv, recv_offset, recv_bytes, size, needs_recv,
      HAL_BUFFER_USAGE_TRANSFER_TARGET, op, "recv"));
  if (needs_send && needs_recv && send == recv &&
      !hal_collective_ranges_allowed(params->kind, channel->rank,
                                     params->count * size, send_offset,
                                     send_bytes, recv_offset, recv_bytes)) {
    return hal_make_status(
        HAL_STATUS_INVALID_ARGUMENT,
        "%s: send [%" PRIu64 ", %" PRIu64 ") and recv [%" PRIu64 ", %" PRIu64
        ") of one buffer overlap and are not in place (rank %" PRId32 ")",
        op, send_offset, send_offset + send_bytes, recv_offset,
        recv_offset + recv_bytes, channel->rank);
  }
  const hal_command_buffer_vtable_t* vtable =
      hal_command_buffer_vtable(command_buffer);
  if (!vtable->collective) {
    return hal_make_status(HAL_STATUS_UNIMPLEMENTED,
                           "%s: this command buffer cannot record collectives",
                           op);
  }
  HAL_RETURN_IF_ERROR(vtable->collective(command_buffer, channel, params, send,
                                         send_offset, recv, recv_offset));
  ++command_buffer->op_count;
  return HAL_OK;
}

static bool hal_command_buffer_take_over_hold(
    hal_command_buffer_t* command_buffer);

HAL_API void hal_command_buffer_retain_for_submission(
    hal_command_buffer_t* command_buffer) {
  hal_command_buffer_retain(command_buffer);
  if (hal_command_buffer_take_over_hold(command_buffer))
    return;
  // Relaxed: the submission holds the buffer through the gate until after
  // this (hal_command_buffer_validate_submit), so no begin() can come
  // between.
  atomic_fetch_add_explicit(&command_buffer->gate, 1, memory_order_relaxed);
}

HAL_API void hal_command_buffer_release_for_submission(
    hal_command_buffer_t* command_buffer) {
  // Release: the device's last use of the recording (which the caller
  // observed: a completed event wait, a quiesce) happens before begin()
  // reads 0 here.
  uint64_t previous =
      atomic_fetch_sub_explicit(&command_buffer->gate, 1, memory_order_release);
  if ((previous & HAL_COMMAND_BUFFER_GATE_COUNT) == 0)
    abort();  // more releases than retains: a driver bug
  hal_command_buffer_release(command_buffer);
}

// This thread's queue_execute calls in progress, innermost first.
static _Thread_local hal_command_buffer_submit_frame_t*
    hal_command_buffer_submit_frames;

HAL_API void hal_command_buffer_submit_frame_push(
    hal_command_buffer_submit_frame_t* frame) {
  frame->outer = hal_command_buffer_submit_frames;
  hal_command_buffer_submit_frames = frame;
}

HAL_API void hal_command_buffer_submit_frame_pop(
    hal_command_buffer_submit_frame_t* frame) {
  hal_command_buffer_submit_frames = frame->outer;
}

// Whether the queue_execute running on this thread (the innermost frame)
// holds REUSABLE |command_buffer| in a slot not yet handed over; if so that
// slot's hold is now the driver's (hal_command_buffer_submit_frame_t).
// Drivers retain in the submission's order, so the search starts at the
// first slot still held and usually stops there.
static bool hal_command_buffer_take_over_hold(
    hal_command_buffer_t* command_buffer) {
  hal_command_buffer_submit_frame_t* frame = hal_command_buffer_submit_frames;
  if (!frame || command_buffer->mode != HAL_COMMAND_BUFFER_MODE_REUSABLE)
    return false;
  for (size_t i = frame->first_held; i < frame->count; ++i) {
    uint64_t bit = UINT64_C(1) << (i % 64);
    if (frame->command_buffers[i] != command_buffer ||
        (frame->handed_over[i / 64] & bit)) {
      continue;
    }
    frame->handed_over[i / 64] |= bit;
    while (frame->first_held < frame->count &&
           (frame->handed_over[frame->first_held / 64] &
            (UINT64_C(1) << (frame->first_held % 64)))) {
      ++frame->first_held;
    }
    return true;
  }
  return false;
}

static bool hal_command_buffer_held_by_this_thread(
    const hal_command_buffer_t* command_buffer) {
  for (const hal_command_buffer_submit_frame_t* frame =
           hal_command_buffer_submit_frames;
       frame; frame = frame->outer) {
    for (size_t i = 0; i < frame->count; ++i) {
      if (frame->command_buffers[i] == command_buffer)
        return true;
    }
  }
  return false;
}

HAL_API hal_status_t
hal_command_buffer_validate_submit(hal_command_buffer_t* command_buffer) {
  if (!command_buffer) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "command buffer is NULL");
  }
  HAL_RETURN_IF_ERROR(hal_resource_check_kind(
      command_buffer, HAL_RESOURCE_KIND_COMMAND_BUFFER, "command buffer"));
  // Acquire: pairs with end()'s release (the recording) and with the
  // release of a ONE_SHOT buffer's deciding submission.
  uint64_t gate =
      atomic_load_explicit(&command_buffer->gate, memory_order_acquire);
  for (;;) {
    if (!(gate & HAL_COMMAND_BUFFER_GATE_EXECUTABLE)) {
      // The state itself is the recording thread's to read.
      return hal_make_status(
          HAL_STATUS_FAILED_PRECONDITION,
          "command buffer is not EXECUTABLE (end() not called since it was "
          "created or began recording again) and cannot be submitted");
    }
    if (command_buffer->mode == HAL_COMMAND_BUFFER_MODE_ONE_SHOT) {
      if (gate & HAL_COMMAND_BUFFER_GATE_SUBMITTED) {
        return hal_make_status(HAL_STATUS_FAILED_PRECONDITION,
                               "ONE_SHOT command buffer was already submitted");
      }
      if (gate & HAL_COMMAND_BUFFER_GATE_COUNT) {
        // A submission this thread is making holds it: this call runs in
        // a callback of that one, which has gone through to its driver.
        if (hal_command_buffer_held_by_this_thread(command_buffer)) {
          return hal_make_status(
              HAL_STATUS_FAILED_PRECONDITION,
              "ONE_SHOT command buffer was already submitted (by the "
              "queue_execute this call runs inside, from a callback)");
        }
        // Another submission of it is deciding, inside its queue_execute
        // call: the first to go through uses it up, one that fails leaves
        // it to this one. The wait is that call's, never the device's.
        sched_yield();
        gate =
            atomic_load_explicit(&command_buffer->gate, memory_order_acquire);
        continue;
      }
    }
    if (atomic_compare_exchange_weak_explicit(&command_buffer->gate, &gate,
                                              gate + 1, memory_order_acq_rel,
                                              memory_order_acquire)) {
      return HAL_OK;
    }
  }
}

HAL_API void hal_command_buffer_end_submit(hal_command_buffer_t* command_buffer,
                                           bool submitted) {
  // Release: a ONE_SHOT buffer's waiting submitters see the outcome after
  // everything this submission did.
  uint64_t delta =
      submitted && command_buffer->mode == HAL_COMMAND_BUFFER_MODE_ONE_SHOT
          ? HAL_COMMAND_BUFFER_GATE_SUBMITTED - 1
          : (uint64_t)-1;
  atomic_fetch_add_explicit(&command_buffer->gate, delta, memory_order_release);
}
