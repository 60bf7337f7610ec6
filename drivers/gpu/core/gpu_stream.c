// Copyright 2026 The HAL Authors.
//
// The stream strategy: a command buffer is libhal's recorded op list,
// replayed op by op into the queue's stream at issue. A stream runs its work
// in order, so execution barriers need no vendor call.

#include <inttypes.h>
#include <string.h>

#include "gpu_core.h"

// The name of an op's device span.
static const char* gpu_stream_op_name(hal_op_kind_t kind) {
  switch (kind) {
    case HAL_OP_FILL:
      return "fill";
    case HAL_OP_UPDATE:
      return "update";
    case HAL_OP_COPY:
      return "copy";
    case HAL_OP_DISPATCH:
      return "dispatch";
    case HAL_OP_COLLECTIVE:
      return "collective";
    case HAL_OP_BARRIER:
      break;
  }
  return "barrier";
}

static hal_status_t gpu_stream_issue(gpu_queue_t* queue,
                                     hal_command_buffer_t* command_buffer,
                                     gpu_trace_spans_t* trace) {
  gpu_adapter_t* adapter = queue->device->adapter;
  gpu_stream_t stream = queue->stream;
  size_t count = 0;
  const hal_op_t* ops =
      hal_recording_command_buffer_ops(command_buffer, &count);
  for (size_t i = 0; i < count; ++i) {
    const hal_op_t* op = &ops[i];
    hal_status_t status = HAL_OK;
    gpu_device_ptr_t target = 0, source = 0;
    switch (op->kind) {
      case HAL_OP_BARRIER:
        break;  // the stream is in order
      case HAL_OP_COLLECTIVE: {
        // The run of collectives from here, issued together (sends and
        // receives grouped); its span is the run's.
        size_t end = i + 1;
        while (end < count && ops[end].kind == HAL_OP_COLLECTIVE)
          ++end;
        status = gpu_collectives_issue(queue, &ops[i], end - i);
        i = end - 1;
        break;
      }
      case HAL_OP_FILL:
        status = gpu_buffer_issue_address(op->fill.target,
                                          op->fill.target_offset, &target);
        if (status == HAL_OK) {
          status = adapter->ops->memset_async(
              adapter, stream, target, op->fill.pattern,
              op->fill.pattern_length,
              op->fill.length / op->fill.pattern_length);
        }
        break;
      case HAL_OP_UPDATE:
        // The data lives in the recording, which the submission keeps
        // alive until the device is done with it.
        status = gpu_buffer_issue_address(op->update.target,
                                          op->update.target_offset, &target);
        if (status == HAL_OK) {
          status = adapter->ops->memcpy_async(adapter, stream, target,
                                              gpu_host_address(op->update.data),
                                              op->update.length);
        }
        break;
      case HAL_OP_DISPATCH: {
        gpu_dispatch_args_t dispatch;
        status = gpu_dispatch_prepare(op, &dispatch);
        if (status == HAL_OK)
          status =
              adapter->ops->launch_kernel(adapter, stream, &dispatch.launch);
        break;
      }
      case HAL_OP_COPY:
        status = gpu_buffer_issue_address(op->copy.target,
                                          op->copy.target_offset, &target);
        if (status == HAL_OK) {
          status = gpu_buffer_issue_address(op->copy.source,
                                            op->copy.source_offset, &source);
        }
        if (status == HAL_OK) {
          status = adapter->ops->memcpy_async(adapter, stream, target, source,
                                              op->copy.length);
        }
        break;
    }
    if (status != HAL_OK) {
      return hal_status_annotatef(status, "replaying op %zu of %zu", i, count);
    }
    if (trace && op->kind != HAL_OP_BARRIER) {
      uint32_t begin = gpu_trace_last_mark(trace);
      gpu_trace_span(trace, begin, gpu_trace_mark(queue, trace), 2,
                     gpu_stream_op_name(op->kind), (uint32_t)i);
    }
  }
  return HAL_OK;
}

// A recording's state: the queue-ordered buffers it uses (the submission
// counts its pending uses of them, gpu_device.c).
typedef struct gpu_stream_state_t {
  gpu_buffer_set_t queue_ordered;  // first: gpu_recording_queue_ordered
} gpu_stream_state_t;

static hal_status_t gpu_stream_end(void* user,
                                   hal_command_buffer_t* command_buffer) {
  gpu_stream_state_t* state = user;
  size_t count = 0;
  const hal_op_t* ops =
      hal_recording_command_buffer_ops(command_buffer, &count);
  return gpu_buffer_set_collect(&state->queue_ordered, ops, count);
}

static void gpu_stream_destroy(void* user,
                               hal_command_buffer_t* command_buffer) {
  gpu_stream_state_t* state = user;
  if (!state)
    return;
  gpu_buffer_set_deinitialize(&state->queue_ordered);
  hal_allocator_free(state->queue_ordered.allocator, state);
}

// The recording is libhal's op list, kept as it is until issue.
static hal_status_t gpu_stream_create_command_buffer(
    gpu_device_t* device, hal_command_buffer_mode_t mode,
    hal_command_buffer_t** out_command_buffer) {
  gpu_stream_state_t* state = NULL;
  HAL_RETURN_IF_ERROR(hal_allocator_malloc(device->base.host_allocator,
                                           sizeof(*state), (void**)&state));
  memset(state, 0, sizeof(*state));
  state->queue_ordered.allocator = device->base.host_allocator;
  const hal_recording_hooks_t hooks = {
      .end = gpu_stream_end,
      .destroy = gpu_stream_destroy,
  };
  hal_status_t status = hal_recording_command_buffer_create(
      &device->base, mode, &hooks, state, out_command_buffer);
  if (status != HAL_OK)
    hal_allocator_free(device->base.host_allocator, state);
  return status;
}

// Memset, memcpy and kernel launches are in every runtime the adapter
// loads; dispatch needs modules, checked where executables are made.
const gpu_strategy_t gpu_stream_strategy = {
    .name = "stream",
    .required_capabilities = 0,
    .create_command_buffer = gpu_stream_create_command_buffer,
    .issue = gpu_stream_issue,
};
