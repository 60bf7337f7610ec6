// Copyright 2026 The HAL Authors.

#include "hal/impl/recording.h"

#include <stdlib.h>
#include <string.h>

#include "hal/impl/device.h"

// Update data lives in chunks so pointers handed out in ops stay valid as
// the recording grows.
typedef struct hal_recording_chunk_t {
  struct hal_recording_chunk_t* next;
  size_t used;
  size_t capacity;
  uint8_t data[];
} hal_recording_chunk_t;

#define HAL_RECORDING_CHUNK_SIZE (64u * 1024u)

typedef struct hal_recording_command_buffer_t {
  hal_command_buffer_t base;
  hal_allocator_t host_allocator;
  hal_recording_hooks_t hooks;
  void* user;
  hal_op_t* ops;
  size_t op_count;
  size_t op_capacity;
  hal_recording_chunk_t* chunks;
} hal_recording_command_buffer_t;

static const hal_command_buffer_vtable_t hal_recording_vtable;

// Drivers call the accessors only on their own command buffers; a wrong
// type is a broken invariant.
static hal_recording_command_buffer_t* hal_recording_cast(
    const hal_command_buffer_t* command_buffer) {
  return HAL_RESOURCE_CAST(hal_recording_command_buffer_t, command_buffer,
                           &hal_recording_vtable);
}

// Releases every op's buffers and frees the update data.
static void hal_recording_reset(hal_recording_command_buffer_t* recording) {
  for (size_t i = 0; i < recording->op_count; ++i) {
    hal_op_t* op = &recording->ops[i];
    switch (op->kind) {
      case HAL_OP_BARRIER:
        break;
      case HAL_OP_FILL:
        hal_buffer_release(op->fill.target);
        break;
      case HAL_OP_UPDATE:
        hal_buffer_release(op->update.target);
        break;
      case HAL_OP_COPY:
        hal_buffer_release(op->copy.source);
        hal_buffer_release(op->copy.target);
        break;
      case HAL_OP_DISPATCH:
        for (uint32_t j = 0; j < op->dispatch.binding_count; ++j) {
          hal_buffer_release(op->dispatch.bindings[j].buffer);
        }
        hal_executable_release(op->dispatch.executable);
        break;
      case HAL_OP_COLLECTIVE:
        hal_buffer_release(op->collective.send);
        hal_buffer_release(op->collective.recv);
        hal_channel_release(op->collective.channel);
        break;
    }
  }
  recording->op_count = 0;
  while (recording->chunks) {
    hal_recording_chunk_t* next = recording->chunks->next;
    hal_allocator_free(recording->host_allocator, recording->chunks);
    recording->chunks = next;
  }
}

// Appends |op|; the caller retains what it names once this succeeds.
static hal_status_t hal_recording_append(
    hal_recording_command_buffer_t* recording, hal_op_t op) {
  if (recording->op_count == recording->op_capacity) {
    size_t capacity = recording->op_capacity ? recording->op_capacity * 2 : 16;
    HAL_RETURN_IF_ERROR(hal_allocator_realloc(recording->host_allocator,
                                              capacity * sizeof(hal_op_t),
                                              (void**)&recording->ops));
    recording->op_capacity = capacity;
  }
  recording->ops[recording->op_count++] = op;
  return HAL_OK;
}

// Copies |length| bytes into the recording's data chunks.
static hal_status_t hal_recording_copy_data(
    hal_recording_command_buffer_t* recording, const void* data, size_t length,
    const void** out_copy) {
  hal_recording_chunk_t* chunk = recording->chunks;
  if (!chunk || chunk->capacity - chunk->used < length) {
    size_t capacity =
        length > HAL_RECORDING_CHUNK_SIZE ? length : HAL_RECORDING_CHUNK_SIZE;
    HAL_RETURN_IF_ERROR(hal_allocator_malloc(
        recording->host_allocator, sizeof(*chunk) + capacity, (void**)&chunk));
    chunk->capacity = capacity;
    chunk->next = recording->chunks;
    recording->chunks = chunk;
  }
  uint8_t* copy = chunk->data + chunk->used;
  // Keep later copies 8-byte aligned.
  chunk->used += (length + 7) & ~(size_t)7;
  if (chunk->used > chunk->capacity)
    chunk->used = chunk->capacity;
  memcpy(copy, data, length);
  *out_copy = copy;
  return HAL_OK;
}

static void hal_recording_destroy(hal_command_buffer_t* command_buffer) {
  hal_recording_command_buffer_t* recording =
      hal_recording_cast(command_buffer);
  if (recording->hooks.destroy) {
    recording->hooks.destroy(recording->user, command_buffer);
  }
  hal_recording_reset(recording);
  hal_allocator_free(recording->host_allocator, recording->ops);
  hal_allocator_free(recording->host_allocator, recording);
}

static hal_status_t hal_recording_begin(hal_command_buffer_t* command_buffer) {
  hal_recording_command_buffer_t* recording =
      hal_recording_cast(command_buffer);
  // A re-record drops the old ops; what a strategy derived from them (a
  // graph executable) it keeps, to update in place at end().
  hal_recording_reset(recording);
  return HAL_OK;
}

static hal_status_t hal_recording_end(hal_command_buffer_t* command_buffer) {
  hal_recording_command_buffer_t* recording =
      hal_recording_cast(command_buffer);
  if (recording->hooks.end) {
    return recording->hooks.end(recording->user, command_buffer);
  }
  return HAL_OK;
}

static hal_status_t hal_recording_barrier(
    hal_command_buffer_t* command_buffer) {
  hal_recording_command_buffer_t* recording =
      hal_recording_cast(command_buffer);
  // Adjacent barriers say nothing more than one.
  if (recording->op_count &&
      recording->ops[recording->op_count - 1].kind == HAL_OP_BARRIER) {
    return HAL_OK;
  }
  return hal_recording_append(recording, (hal_op_t){.kind = HAL_OP_BARRIER});
}

static hal_status_t hal_recording_fill(hal_command_buffer_t* command_buffer,
                                       hal_buffer_t* target,
                                       uint64_t target_offset, uint64_t length,
                                       uint32_t pattern,
                                       size_t pattern_length) {
  HAL_RETURN_IF_ERROR(hal_recording_append(
      hal_recording_cast(command_buffer),
      (hal_op_t){.kind = HAL_OP_FILL,
                 .fill = {target, target_offset, length, pattern,
                          (uint32_t)pattern_length}}));
  hal_buffer_retain(target);
  return HAL_OK;
}

static hal_status_t hal_recording_update(hal_command_buffer_t* command_buffer,
                                         const void* source,
                                         hal_buffer_t* target,
                                         uint64_t target_offset,
                                         uint64_t length) {
  hal_recording_command_buffer_t* recording =
      hal_recording_cast(command_buffer);
  const void* copy = NULL;
  HAL_RETURN_IF_ERROR(
      hal_recording_copy_data(recording, source, (size_t)length, &copy));
  // On failure the copied bytes stay in the chunk until reset: harmless.
  HAL_RETURN_IF_ERROR(hal_recording_append(
      recording, (hal_op_t){.kind = HAL_OP_UPDATE,
                            .update = {copy, target, target_offset, length}}));
  hal_buffer_retain(target);
  return HAL_OK;
}

static hal_status_t hal_recording_copy(hal_command_buffer_t* command_buffer,
                                       hal_buffer_t* source,
                                       uint64_t source_offset,
                                       hal_buffer_t* target,
                                       uint64_t target_offset,
                                       uint64_t length) {
  HAL_RETURN_IF_ERROR(hal_recording_append(
      hal_recording_cast(command_buffer),
      (hal_op_t){
          .kind = HAL_OP_COPY,
          .copy = {source, source_offset, target, target_offset, length}}));
  hal_buffer_retain(source);
  hal_buffer_retain(target);
  return HAL_OK;
}

static hal_status_t hal_recording_dispatch(
    hal_command_buffer_t* command_buffer, hal_executable_t* executable,
    size_t entry_point, const uint32_t workgroup_count[3],
    const uint32_t workgroup_size[3], const uint32_t* constants,
    size_t constant_count, const hal_dispatch_binding_t* bindings,
    size_t binding_count) {
  hal_recording_command_buffer_t* recording =
      hal_recording_cast(command_buffer);
  const void* constants_copy = NULL;
  const void* bindings_copy = NULL;
  if (constant_count) {
    HAL_RETURN_IF_ERROR(hal_recording_copy_data(
        recording, constants, constant_count * sizeof(uint32_t),
        &constants_copy));
  }
  if (binding_count) {
    HAL_RETURN_IF_ERROR(hal_recording_copy_data(
        recording, bindings, binding_count * sizeof(hal_dispatch_binding_t),
        &bindings_copy));
  }
  hal_op_t op = {.kind = HAL_OP_DISPATCH};
  op.dispatch.executable = executable;
  op.dispatch.entry_point = (uint32_t)entry_point;
  for (int i = 0; i < 3; ++i) {
    op.dispatch.workgroup_count[i] = workgroup_count[i];
    op.dispatch.workgroup_size[i] = workgroup_size[i];
  }
  op.dispatch.constant_count = (uint32_t)constant_count;
  op.dispatch.binding_count = (uint32_t)binding_count;
  op.dispatch.constants = constants_copy;
  op.dispatch.bindings = bindings_copy;
  HAL_RETURN_IF_ERROR(hal_recording_append(recording, op));
  hal_executable_retain(executable);
  for (size_t i = 0; i < binding_count; ++i) {
    hal_buffer_retain(bindings[i].buffer);
  }
  return HAL_OK;
}

static hal_status_t hal_recording_collective(
    hal_command_buffer_t* command_buffer, hal_channel_t* channel,
    const hal_collective_params_t* params, hal_buffer_t* send,
    uint64_t send_offset, hal_buffer_t* recv, uint64_t recv_offset) {
  hal_recording_command_buffer_t* recording =
      hal_recording_cast(command_buffer);
  hal_op_t op = {.kind = HAL_OP_COLLECTIVE};
  op.collective.channel = channel;
  op.collective.params = *params;
  op.collective.send = send;
  op.collective.send_offset = send_offset;
  op.collective.recv = recv;
  op.collective.recv_offset = recv_offset;
  HAL_RETURN_IF_ERROR(hal_recording_append(recording, op));
  hal_channel_retain(channel);
  if (send)
    hal_buffer_retain(send);
  if (recv)
    hal_buffer_retain(recv);
  return HAL_OK;
}

static void hal_recording_query_info(const hal_command_buffer_t* command_buffer,
                                     hal_command_buffer_info_t* out_info) {
  const hal_recording_command_buffer_t* recording =
      (const hal_recording_command_buffer_t*)command_buffer;
  if (recording->hooks.query_info) {
    recording->hooks.query_info(recording->user, command_buffer, out_info);
  }
}

static const hal_command_buffer_vtable_t hal_recording_vtable = {
    .destroy = hal_recording_destroy,
    .begin = hal_recording_begin,
    .end = hal_recording_end,
    .execution_barrier = hal_recording_barrier,
    .fill_buffer = hal_recording_fill,
    .update_buffer = hal_recording_update,
    .copy_buffer = hal_recording_copy,
    .dispatch = hal_recording_dispatch,
    .collective = hal_recording_collective,
    .query_info = hal_recording_query_info,
};

HAL_API hal_status_t hal_recording_command_buffer_create(
    hal_device_t* device, hal_command_buffer_mode_t mode,
    const hal_recording_hooks_t* hooks, void* user,
    hal_command_buffer_t** out_command_buffer) {
  HAL_RETURN_IF_ERROR(hal_resource_check_create(
      device, HAL_RESOURCE_KIND_DEVICE, "device", (void**)out_command_buffer,
      "out_command_buffer"));
  hal_recording_command_buffer_t* recording = NULL;
  HAL_RETURN_IF_ERROR(hal_allocator_malloc(
      device->host_allocator, sizeof(*recording), (void**)&recording));
  hal_command_buffer_initialize(&hal_recording_vtable, device, mode,
                                &recording->base);
  recording->host_allocator = device->host_allocator;
  if (hooks)
    recording->hooks = *hooks;
  recording->user = user;
  *out_command_buffer = &recording->base;
  return HAL_OK;
}

// The getters' NULL answer for NULL or a command buffer that is not a
// recording (another kind, or another implementation).
HAL_API const hal_op_t* hal_recording_command_buffer_ops(
    const hal_command_buffer_t* command_buffer, size_t* out_count) {
  if (out_count)
    *out_count = 0;
  if (!hal_resource_is(command_buffer, &hal_recording_vtable))
    return NULL;
  hal_recording_command_buffer_t* recording =
      hal_recording_cast(command_buffer);
  if (out_count)
    *out_count = recording->op_count;
  return recording->ops;
}

HAL_API void* hal_recording_command_buffer_user(
    const hal_command_buffer_t* command_buffer) {
  if (!hal_resource_is(command_buffer, &hal_recording_vtable))
    return NULL;
  return hal_recording_cast(command_buffer)->user;
}
