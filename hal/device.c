// Copyright 2026 The HAL Authors.

#include "hal/impl/device.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "device_private.h"
#include "hal/impl/recording.h"
#include "hal/trace.h"
#include "sync_queue.h"

static const hal_device_vtable_t* hal_device_vtable(hal_device_t* device) {
  return (const hal_device_vtable_t*)device->resource.vtable;
}

HAL_API void hal_device_describe(const hal_device_t* device, char* out,
                                 size_t capacity) {
  snprintf(out, capacity, "'%s' (%s://%" PRIu32 " at %p)", device->info.name,
           device->driver->name, device->info.index, (const void*)device);
}

HAL_API void hal_device_initialize(const hal_device_vtable_t* vtable,
                                   hal_driver_t* driver,
                                   const hal_device_info_t* info,
                                   hal_allocator_t host_allocator,
                                   hal_device_t* out_device) {
  hal_resource_initialize_kind(HAL_RESOURCE_KIND_DEVICE, vtable,
                               driver ? &driver->resource : NULL,
                               &out_device->resource);
  out_device->driver = driver;
  if (info) {
    out_device->info = *info;
  } else {
    memset(&out_device->info, 0, sizeof(out_device->info));
  }
  out_device->host_allocator = host_allocator;
  atomic_init(&out_device->external_ref_count, 1);
  atomic_init(&out_device->shutdown_claimed, false);
  atomic_init(&out_device->host_executor, NULL);
  atomic_init(&out_device->file_executor, NULL);
  out_device->loss_domain = NULL;
}

HAL_API void hal_device_retain(hal_device_t* device) {
  if (!hal_resource_is_kind(device, HAL_RESOURCE_KIND_DEVICE))
    return;
  atomic_fetch_add_explicit(&device->external_ref_count, 1,
                            memory_order_relaxed);
  hal_resource_retain(&device->resource);
}

// An executor slot after the shutdown took its executor: a call that
// passed the shutdown check just before finds it and is refused, rather
// than start an executor that nobody would shut down.
#define HAL_DEVICE_EXECUTOR_CLOSED ((hal_sync_host_executor_t*)(uintptr_t)1)

static void hal_device_close_executor(HAL_ATOMIC(hal_sync_host_executor_t*) *
                                      slot) {
  hal_sync_host_executor_t* executor = atomic_exchange_explicit(
      slot, HAL_DEVICE_EXECUTOR_CLOSED, memory_order_acq_rel);
  hal_sync_host_executor_shutdown(executor);
}

// The shutdown's first step, where the caller's last reference went (the
// rest may run later on the release thread): no host call or file-transfer
// step starts after it, those ready are cancelled with the waiting ones.
static void hal_device_stop_executors(hal_device_t* device) {
  hal_sync_host_executor_t* executors[2] = {
      atomic_load_explicit(&device->file_executor, memory_order_acquire),
      atomic_load_explicit(&device->host_executor, memory_order_acquire),
  };
  for (int i = 0; i < 2; ++i) {
    if (executors[i] != HAL_DEVICE_EXECUTOR_CLOSED)
      hal_sync_host_executor_stop(executors[i]);
  }
}

// The shutdown (Q4): the queues' parked work first, and the host side of
// file transfers, which never waits for anything but its own I/O, so that
// a running host call waiting for queue work or a transfer still waiting
// gets it cancelled (the host calls' shutdown waits for that call); then
// host calls (one running may still use the device); then the driver's
// queues.
static void hal_device_shutdown(hal_device_t* device) {
  if (hal_device_vtable(device)->cancel_parked)
    hal_device_vtable(device)->cancel_parked(device);
  hal_device_close_executor(&device->file_executor);
  hal_device_close_executor(&device->host_executor);
  if (hal_device_vtable(device)->shutdown)
    hal_device_vtable(device)->shutdown(device);
}

// Release thread: a shutdown that could not run where it was asked for.
static void hal_device_run_deferred_shutdown(hal_deferred_node_t* node) {
  hal_device_t* device =
      (hal_device_t*)((char*)node - offsetof(hal_device_t, shutdown_node));
  hal_device_shutdown(device);
  hal_trace_flush();
  hal_resource_release(&device->resource);
}

HAL_API void hal_device_release(hal_device_t* device) {
  // NULL, or another kind of object: its release would run a shutdown
  // through a vtable that is not a device's.
  if (!hal_resource_is_kind(device, HAL_RESOURCE_KIND_DEVICE))
    return;
  intptr_t previous = atomic_fetch_sub_explicit(&device->external_ref_count, 1,
                                                memory_order_acq_rel);
  // A retain after the count reached zero (through a pointer an object of
  // the device still holds) revives it; the shutdown still runs only once.
  if (previous == 1 && !atomic_exchange_explicit(&device->shutdown_claimed,
                                                 true, memory_order_acq_rel)) {
    hal_device_stop_executors(device);
    if (hal_resource_shutdown_deferred_here()) {
      // On a queue thread, or inside a timepoint callback (T2): the
      // shutdown joins the queue threads and waits for parked work that
      // the rest of a signal's batch may wake, so it runs on the release
      // thread, which also drops the resource reference that came with
      // the caller's.
      device->shutdown_node.run = hal_device_run_deferred_shutdown;
      hal_resource_defer_node(&device->shutdown_node);
      return;
    }
    // The caller's last reference: stop the queues now, while every object
    // the device made is still alive. Their own references then let the
    // device's memory go when they do.
    hal_device_shutdown(device);
    hal_trace_flush();
  }
  hal_resource_release(&device->resource);
}

HAL_API const hal_device_info_t* hal_device_info(const hal_device_t* device) {
  return hal_resource_is_kind(device, HAL_RESOURCE_KIND_DEVICE) ? &device->info
                                                                : NULL;
}

HAL_API hal_driver_t* hal_device_driver(const hal_device_t* device) {
  return hal_resource_is_kind(device, HAL_RESOURCE_KIND_DEVICE) ? device->driver
                                                                : NULL;
}

HAL_API hal_status_t hal_device_query_properties(
    hal_device_t* device, hal_device_properties_t* out_properties) {
  if (!device || !out_properties) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "device and out_properties must not be NULL");
  }
  HAL_RETURN_IF_ERROR(
      hal_resource_check_kind(device, HAL_RESOURCE_KIND_DEVICE, "device"));
  memset(out_properties, 0, sizeof(*out_properties));
  return hal_device_vtable(device)->query_properties(device, out_properties);
}

HAL_API hal_device_allocator_t* hal_device_allocator(hal_device_t* device) {
  return hal_resource_is_kind(device, HAL_RESOURCE_KIND_DEVICE)
             ? hal_device_vtable(device)->allocator(device)
             : NULL;
}

HAL_API hal_status_t hal_device_allocate_buffer(hal_device_t* device,
                                                hal_buffer_params_t params,
                                                uint64_t byte_length,
                                                hal_buffer_t** out_buffer) {
  if (!hal_resource_is_kind(device, HAL_RESOURCE_KIND_DEVICE)) {
    if (out_buffer)
      *out_buffer = NULL;
    return hal_resource_check_kind(device, HAL_RESOURCE_KIND_DEVICE, "device");
  }
  return hal_device_allocator_allocate_buffer(hal_device_allocator(device),
                                              params, byte_length, out_buffer);
}

HAL_API hal_status_t
hal_device_create_semaphore(hal_device_t* device, uint64_t initial_value,
                            hal_semaphore_t** out_semaphore) {
  HAL_RETURN_IF_ERROR(
      hal_resource_check_create(device, HAL_RESOURCE_KIND_DEVICE, "device",
                                (void**)out_semaphore, "out_semaphore"));
  if (initial_value > HAL_SEMAPHORE_MAX_VALUE) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "initial value %" PRIu64
                           " is in the reserved failure range (max %" PRIu64
                           ")",
                           initial_value, (uint64_t)HAL_SEMAPHORE_MAX_VALUE);
  }
  return hal_device_vtable(device)->create_semaphore(device, initial_value,
                                                     out_semaphore);
}

HAL_API hal_status_t hal_device_create_command_buffer(
    hal_device_t* device, hal_command_buffer_mode_t mode,
    hal_command_buffer_t** out_command_buffer) {
  HAL_RETURN_IF_ERROR(hal_resource_check_create(
      device, HAL_RESOURCE_KIND_DEVICE, "device", (void**)out_command_buffer,
      "out_command_buffer"));
  if (mode != HAL_COMMAND_BUFFER_MODE_ONE_SHOT &&
      mode != HAL_COMMAND_BUFFER_MODE_REUSABLE) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "unknown command buffer mode %d", (int)mode);
  }
  return hal_device_vtable(device)->create_command_buffer(device, mode,
                                                          out_command_buffer);
}

static hal_status_t hal_device_check_queue(const hal_device_t* device,
                                           uint32_t queue_index) {
  if (queue_index < device->info.queue_count)
    return HAL_OK;
  return hal_make_status(HAL_STATUS_OUT_OF_RANGE,
                         "queue index %u is out of range: device '%s' has "
                         "%u queue(s)",
                         queue_index, device->info.name,
                         device->info.queue_count);
}

// Checks one wait or signal list of a submission (NULL: empty).
static hal_status_t hal_device_validate_semaphore_list(
    const hal_semaphore_list_t* list, const char* what) {
  return list ? hal_semaphore_list_validate(*list, what) : HAL_OK;
}

// What every queue operation checks first: the device, the queue index and
// both lists.
static hal_status_t hal_device_validate_submission(
    const hal_device_t* device, uint32_t queue_index,
    const hal_semaphore_list_t* wait_semaphores,
    const hal_semaphore_list_t* signal_semaphores) {
  HAL_RETURN_IF_ERROR(
      hal_resource_check_kind(device, HAL_RESOURCE_KIND_DEVICE, "device"));
  HAL_RETURN_IF_ERROR(hal_device_check_queue(device, queue_index));
  HAL_RETURN_IF_ERROR(
      hal_device_validate_semaphore_list(wait_semaphores, "wait"));
  return hal_device_validate_semaphore_list(signal_semaphores, "signal");
}

// Ends the hold this call took on command buffers [0, count) (each passed
// hal_command_buffer_validate_submit) and still has (the driver took over
// those in |frame|'s handed_over); |submitted| says whether the submission
// went through.
static void hal_device_end_submit(
    size_t count, const hal_command_buffer_submit_frame_t* frame,
    bool submitted) {
  for (size_t i = 0; i < count; ++i) {
    if (!(frame->handed_over[i / 64] & (UINT64_C(1) << (i % 64))))
      hal_command_buffer_end_submit(frame->command_buffers[i], submitted);
  }
}

// Whether ONE_SHOT |buffer| is also one of [0, count): it would wait for
// its own hold (hal_command_buffer_validate_submit).
static bool hal_device_one_shot_repeats(size_t count,
                                        hal_command_buffer_t* const* buffers,
                                        const hal_command_buffer_t* buffer) {
  if (buffer->mode != HAL_COMMAND_BUFFER_MODE_ONE_SHOT)
    return false;
  for (size_t i = 0; i < count; ++i) {
    if (buffers[i] == buffer)
      return true;
  }
  return false;
}

// A semaphore list as trace args text: "0x55d0c1a0@3 0x55d0c1b0@7".
#define HAL_TRACE_LIST_ARGS 160
static void hal_device_trace_list(const hal_semaphore_list_t* list, char* out,
                                  size_t capacity) {
  size_t length = 0;
  out[0] = '\0';
  size_t count = list ? list->count : 0;
  size_t i = 0;
  for (; i < count; ++i) {
    if (!hal_trace_append_semaphore(out, capacity, &length, list->semaphores[i],
                                    list->payload_values[i])) {
      break;
    }
  }
  hal_trace_append_more(out, capacity, &length, count - i);
}

// HAL_TRACE: the call (queue_execute, queue_alloca, queue_dealloca) as a
// span on the caller's thread, with its lists and result, and the start of
// the flow to the submission it made: every submission's completion ends
// a flow that one of them started.
static void hal_device_trace_submit(const hal_device_t* device,
                                    const char* name, uint32_t queue_index,
                                    const hal_semaphore_list_t* waits,
                                    const hal_semaphore_list_t* signals,
                                    size_t command_buffer_count,
                                    uint64_t start_ns, hal_status_t status) {
  char result[HAL_TRACE_STATUS_ARGS];
  hal_trace_status_args(status, result, sizeof(result));
  uint64_t submitted_ns = 0;
  uint64_t submission = hal_trace_take_last_submission(&submitted_ns);
  char device_name[HAL_DEVICE_NAME_MAX];
  hal_trace_json_text(device_name, sizeof(device_name), device->info.name);
  char wait_list[HAL_TRACE_LIST_ARGS];
  char signal_list[HAL_TRACE_LIST_ARGS];
  hal_device_trace_list(waits, wait_list, sizeof(wait_list));
  hal_device_trace_list(signals, signal_list, sizeof(signal_list));
  char args[HAL_TRACE_STATUS_ARGS + 2 * HAL_TRACE_LIST_ARGS + 256 +
            HAL_DEVICE_NAME_MAX];
  snprintf(args, sizeof(args),
           "\"device\": \"%s\", \"queue\": %u, \"waits\": %zu, "
           "\"wait_list\": \"%s\", \"signals\": %zu, "
           "\"signal_list\": \"%s\", \"command_buffers\": %zu, "
           "\"submission\": \"0x%" PRIx64 "\", %s",
           device_name, queue_index, waits ? waits->count : 0, wait_list,
           signals ? signals->count : 0, signal_list, command_buffer_count,
           status == HAL_OK ? submission : 0, result);
  if (status == HAL_OK && submission) {
    // At the submission's making, not now: it may have completed since.
    hal_trace_flow_start_at(0, "submission", submission,
                            submitted_ns > start_ns ? submitted_ns : start_ns);
  }
  hal_trace_complete("host", name, start_ns, args);
}

#define HAL_MAX_COMMAND_BUFFERS_PER_SUBMIT HAL_COMMAND_BUFFER_SUBMIT_MAX

HAL_API hal_status_t hal_device_queue_execute(
    hal_device_t* device, uint32_t queue_index,
    const hal_semaphore_list_t* wait_semaphores,
    const hal_semaphore_list_t* signal_semaphores, size_t command_buffer_count,
    hal_command_buffer_t* const* command_buffers) {
  HAL_RETURN_IF_ERROR(hal_device_validate_submission(
      device, queue_index, wait_semaphores, signal_semaphores));
  if (command_buffer_count && !command_buffers) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "%zu command buffers but a NULL array",
                           command_buffer_count);
  }
  if (command_buffer_count > HAL_MAX_COMMAND_BUFFERS_PER_SUBMIT) {
    return hal_make_status(HAL_STATUS_OUT_OF_RANGE,
                           "%zu command buffers in one submission (max %d)",
                           command_buffer_count,
                           HAL_MAX_COMMAND_BUFFERS_PER_SUBMIT);
  }
  // Validate (and hold) in order: buffers [0, claimed) passed, so a failure
  // anywhere lets go of exactly those.
  hal_command_buffer_submit_frame_t frame = {
      .count = command_buffer_count, .command_buffers = command_buffers};
  hal_status_t status = HAL_OK;
  size_t claimed = 0;
  for (; claimed < command_buffer_count; ++claimed) {
    hal_command_buffer_t* command_buffer = command_buffers[claimed];
    if (!command_buffer) {
      status = hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                               "command buffer %zu is NULL", claimed);
    } else if (!hal_resource_is_kind(command_buffer,
                                     HAL_RESOURCE_KIND_COMMAND_BUFFER)) {
      status = hal_status_annotatef(
          hal_resource_check_kind(command_buffer,
                                  HAL_RESOURCE_KIND_COMMAND_BUFFER,
                                  "command buffer"),
          "command buffer %zu", claimed);
    } else if (command_buffer->device != device) {
      char made_on[HAL_DEVICE_DESCRIPTION_MAX],
          submitted_to[HAL_DEVICE_DESCRIPTION_MAX];
      hal_device_describe(command_buffer->device, made_on, sizeof(made_on));
      hal_device_describe(device, submitted_to, sizeof(submitted_to));
      status = hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                               "command buffer %zu was created on device %s, "
                               "not on %s",
                               claimed, made_on, submitted_to);
    } else if (hal_device_one_shot_repeats(claimed, command_buffers,
                                           command_buffer)) {
      status = hal_make_status(HAL_STATUS_FAILED_PRECONDITION,
                               "command buffer %zu is a ONE_SHOT buffer "
                               "already in this submission",
                               claimed);
    } else {
      status = hal_status_annotatef(
          hal_command_buffer_validate_submit(command_buffer),
          "command buffer %zu", claimed);
    }
    if (status != HAL_OK)
      break;
  }
  uint64_t trace_start = hal_trace_enabled() ? (uint64_t)hal_time_now() : 0;
  if (status == HAL_OK) {
    hal_command_buffer_submit_frame_push(&frame);
    status = hal_device_vtable(device)->queue_execute(
        device, queue_index, wait_semaphores, signal_semaphores,
        command_buffer_count, command_buffers);
    hal_command_buffer_submit_frame_pop(&frame);
  }
  hal_device_end_submit(claimed, &frame, status == HAL_OK);
  if (trace_start)
    hal_device_trace_submit(device, "queue_execute", queue_index,
                            wait_semaphores, signal_semaphores,
                            command_buffer_count, trace_start, status);
  return status;
}

HAL_API hal_status_t
hal_device_queue_barrier(hal_device_t* device, uint32_t queue_index,
                         const hal_semaphore_list_t* wait_semaphores,
                         const hal_semaphore_list_t* signal_semaphores) {
  return hal_device_queue_execute(device, queue_index, wait_semaphores,
                                  signal_semaphores, 0, NULL);
}

// One transfer op of the queue-op calls (fill, update or copy).
typedef struct hal_device_one_op_t {
  hal_op_kind_t kind;
  hal_buffer_t* source;     // copy
  const void* host_source;  // update
  uint64_t source_offset;   // copy, update
  hal_buffer_t* target;
  uint64_t target_offset;
  uint64_t length;
  const void* pattern;  // fill
  size_t pattern_length;
} hal_device_one_op_t;

// Records |op| into a ONE_SHOT command buffer of |device|, submits it, and
// drops the caller's reference (the queue keeps its own, Q3). The op's and
// the submission's validation apply; on error nothing was submitted.
static hal_status_t hal_device_queue_one_op(
    hal_device_t* device, uint32_t queue_index,
    const hal_semaphore_list_t* wait_semaphores,
    const hal_semaphore_list_t* signal_semaphores,
    const hal_device_one_op_t* op) {
  hal_command_buffer_t* cb = NULL;
  HAL_RETURN_IF_ERROR(hal_device_create_command_buffer(
      device, HAL_COMMAND_BUFFER_MODE_ONE_SHOT, &cb));
  hal_status_t status = hal_command_buffer_begin(cb);
  if (!status) {
    switch (op->kind) {
      case HAL_OP_FILL:
        status = hal_command_buffer_fill_buffer(
            cb, op->target, op->target_offset, op->length, op->pattern,
            op->pattern_length);
        break;
      case HAL_OP_UPDATE:
        status = hal_command_buffer_update_buffer(
            cb, op->host_source, (size_t)op->source_offset, op->target,
            op->target_offset, op->length);
        break;
      default:
        status = hal_command_buffer_copy_buffer(cb, op->source,
                                                op->source_offset, op->target,
                                                op->target_offset, op->length);
        break;
    }
  }
  if (!status)
    status = hal_command_buffer_end(cb);
  if (!status) {
    status = hal_device_queue_execute(device, queue_index, wait_semaphores,
                                      signal_semaphores, 1, &cb);
  }
  hal_command_buffer_release(cb);
  return status;
}

HAL_API hal_status_t hal_device_queue_fill(
    hal_device_t* device, uint32_t queue_index,
    const hal_semaphore_list_t* wait_semaphores,
    const hal_semaphore_list_t* signal_semaphores, hal_buffer_t* target,
    uint64_t target_offset, uint64_t length, const void* pattern,
    size_t pattern_length) {
  hal_device_one_op_t op = {.kind = HAL_OP_FILL,
                            .target = target,
                            .target_offset = target_offset,
                            .length = length,
                            .pattern = pattern,
                            .pattern_length = pattern_length};
  return hal_device_queue_one_op(device, queue_index, wait_semaphores,
                                 signal_semaphores, &op);
}

HAL_API hal_status_t hal_device_queue_update(
    hal_device_t* device, uint32_t queue_index,
    const hal_semaphore_list_t* wait_semaphores,
    const hal_semaphore_list_t* signal_semaphores, const void* source,
    size_t source_offset, hal_buffer_t* target, uint64_t target_offset,
    uint64_t length) {
  hal_device_one_op_t op = {.kind = HAL_OP_UPDATE,
                            .host_source = source,
                            .source_offset = source_offset,
                            .target = target,
                            .target_offset = target_offset,
                            .length = length};
  return hal_device_queue_one_op(device, queue_index, wait_semaphores,
                                 signal_semaphores, &op);
}

HAL_API hal_status_t hal_device_queue_copy(
    hal_device_t* device, uint32_t queue_index,
    const hal_semaphore_list_t* wait_semaphores,
    const hal_semaphore_list_t* signal_semaphores, hal_buffer_t* source,
    uint64_t source_offset, hal_buffer_t* target, uint64_t target_offset,
    uint64_t length) {
  hal_device_one_op_t op = {.kind = HAL_OP_COPY,
                            .source = source,
                            .source_offset = source_offset,
                            .target = target,
                            .target_offset = target_offset,
                            .length = length};
  return hal_device_queue_one_op(device, queue_index, wait_semaphores,
                                 signal_semaphores, &op);
}

// A host call on the device's executor of host calls, or of the host side
// of its file transfers (|for_files|), started here by the first call.
static hal_status_t hal_device_submit_host_call(
    hal_device_t* device, bool for_files, uint32_t queue_index,
    const hal_semaphore_list_t* wait_semaphores,
    const hal_semaphore_list_t* signal_semaphores, hal_host_call_fn_t fn,
    void* user_data) {
  HAL_RETURN_IF_ERROR(hal_device_validate_submission(
      device, queue_index, wait_semaphores, signal_semaphores));
  if (!fn) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "host call function is NULL");
  }
  for (size_t i = 0; signal_semaphores && i < signal_semaphores->count; ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (signal_semaphores->semaphores[j] ==
          signal_semaphores->semaphores[i]) {
        return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                               "signal list names semaphore %p twice "
                               "(entries %zu and %zu)",
                               (void*)signal_semaphores->semaphores[i], j, i);
      }
    }
  }
  if (atomic_load_explicit(&device->shutdown_claimed, memory_order_acquire)) {
    return hal_make_status(HAL_STATUS_FAILED_PRECONDITION,
                           "host call: device '%s' is shut down",
                           device->info.name);
  }
  HAL_ATOMIC(hal_sync_host_executor_t*)* slot =
      for_files ? &device->file_executor : &device->host_executor;
  hal_sync_host_executor_t* executor =
      atomic_load_explicit(slot, memory_order_acquire);
  if (!executor) {
    // The first call starts the thread; of two racing, one wins.
    hal_sync_host_executor_t* created = NULL;
    HAL_RETURN_IF_ERROR(hal_sync_host_executor_create(
        for_files ? "fio-" : "hc-", device->info.name, device->loss_domain,
        &created));
    if (atomic_compare_exchange_strong_explicit(slot, &executor, created,
                                                memory_order_acq_rel,
                                                memory_order_acquire)) {
      executor = created;
    } else {
      hal_sync_host_executor_shutdown(created);
    }
  }
  if (executor == HAL_DEVICE_EXECUTOR_CLOSED) {
    return hal_make_status(HAL_STATUS_FAILED_PRECONDITION,
                           "host call: device '%s' is shut down",
                           device->info.name);
  }
  hal_semaphore_list_t none = hal_semaphore_list_empty();
  return hal_sync_host_executor_submit(
      executor, wait_semaphores ? *wait_semaphores : none,
      signal_semaphores ? *signal_semaphores : none, fn, user_data);
}

HAL_API hal_status_t
hal_device_queue_host_call(hal_device_t* device, uint32_t queue_index,
                           const hal_semaphore_list_t* wait_semaphores,
                           const hal_semaphore_list_t* signal_semaphores,
                           hal_host_call_fn_t fn, void* user_data) {
  return hal_device_submit_host_call(device, false, queue_index,
                                     wait_semaphores, signal_semaphores, fn,
                                     user_data);
}

hal_status_t hal_device_queue_file_host_call(
    hal_device_t* device, uint32_t queue_index,
    const hal_semaphore_list_t* wait_semaphores,
    const hal_semaphore_list_t* signal_semaphores, hal_host_call_fn_t fn,
    void* user_data) {
  return hal_device_submit_host_call(device, true, queue_index, wait_semaphores,
                                     signal_semaphores, fn, user_data);
}

HAL_API hal_status_t hal_device_wait_semaphores(
    hal_device_t* device, hal_wait_mode_t wait_mode,
    const hal_semaphore_list_t* semaphore_list, hal_timeout_t timeout) {
  HAL_RETURN_IF_ERROR(
      hal_resource_check_kind(device, HAL_RESOURCE_KIND_DEVICE, "device"));
  if (wait_mode != HAL_WAIT_MODE_ALL && wait_mode != HAL_WAIT_MODE_ANY) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT, "unknown wait mode %d",
                           (int)wait_mode);
  }
  HAL_RETURN_IF_ERROR(
      hal_device_validate_semaphore_list(semaphore_list, "wait"));
  if (!semaphore_list || semaphore_list->count == 0)
    return HAL_OK;
  return hal_device_vtable(device)->wait_semaphores(device, wait_mode,
                                                    semaphore_list, timeout);
}

// The lists, the queue and the device of an alloca or dealloca.
static hal_status_t hal_device_validate_queue_op(
    hal_device_t* device, uint32_t queue_index,
    const hal_semaphore_list_t* wait_semaphores,
    const hal_semaphore_list_t* signal_semaphores, const char* what) {
  HAL_RETURN_IF_ERROR(hal_device_validate_submission(
      device, queue_index, wait_semaphores, signal_semaphores));
  if (!hal_device_vtable(device)->queue_alloca ||
      !hal_device_vtable(device)->queue_dealloca) {
    return hal_make_status(HAL_STATUS_UNIMPLEMENTED,
                           "%s: driver '%s' has no queue-ordered allocation",
                           what, device->driver ? device->driver->name : "?");
  }
  return HAL_OK;
}

HAL_API hal_status_t hal_device_queue_alloca(
    hal_device_t* device, uint32_t queue_index,
    const hal_semaphore_list_t* wait_semaphores,
    const hal_semaphore_list_t* signal_semaphores, hal_buffer_params_t params,
    uint64_t byte_length, hal_buffer_t** out_buffer) {
  if (!out_buffer) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "queue_alloca: out_buffer is NULL");
  }
  *out_buffer = NULL;
  HAL_RETURN_IF_ERROR(hal_device_validate_queue_op(
      device, queue_index, wait_semaphores, signal_semaphores, "queue_alloca"));
  if (params.memory_type != HAL_MEMORY_TYPE_DEVICE_LOCAL) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "queue_alloca makes DEVICE_LOCAL memory only "
                           "(memory type 0x%x asked); host-visible buffers "
                           "come from hal_device_allocate_buffer",
                           params.memory_type);
  }
  if (params.usage == 0 ||
      (params.usage & ~(hal_buffer_usage_t)HAL_BUFFER_USAGE_ALL_) ||
      (params.usage & HAL_BUFFER_USAGE_MAPPING)) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "queue_alloca: buffer usage 0x%x is empty, has "
                           "unknown bits or asks for MAPPING",
                           params.usage);
  }
  if (byte_length == 0) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "queue_alloca: a buffer has at least one byte");
  }
  if (byte_length > device->info.total_memory) {
    return hal_make_status(
        HAL_STATUS_RESOURCE_EXHAUSTED,
        "queue_alloca of %" PRIu64 " bytes exceeds the %" PRIu64
        " bytes of device '%s'",
        byte_length, device->info.total_memory, device->info.name);
  }
  uint64_t trace_start = hal_trace_enabled() ? (uint64_t)hal_time_now() : 0;
  hal_status_t status = hal_device_vtable(device)->queue_alloca(
      device, queue_index, wait_semaphores, signal_semaphores, params,
      byte_length, out_buffer);
  if (trace_start)
    hal_device_trace_submit(device, "queue_alloca", queue_index,
                            wait_semaphores, signal_semaphores, 0, trace_start,
                            status);
  return status;
}

HAL_API hal_status_t hal_device_queue_dealloca(
    hal_device_t* device, uint32_t queue_index,
    const hal_semaphore_list_t* wait_semaphores,
    const hal_semaphore_list_t* signal_semaphores, hal_buffer_t* buffer) {
  HAL_RETURN_IF_ERROR(
      hal_device_validate_queue_op(device, queue_index, wait_semaphores,
                                   signal_semaphores, "queue_dealloca"));
  if (!buffer) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "queue_dealloca: buffer is NULL");
  }
  HAL_RETURN_IF_ERROR(
      hal_resource_check_kind(buffer, HAL_RESOURCE_KIND_BUFFER, "buffer"));
  if (buffer->device != device) {
    char owner[HAL_DEVICE_DESCRIPTION_MAX], target[HAL_DEVICE_DESCRIPTION_MAX];
    hal_device_describe(buffer->device, owner, sizeof(owner));
    hal_device_describe(device, target, sizeof(target));
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "queue_dealloca: the buffer is of device %s, "
                           "not of %s",
                           owner, target);
  }
  uint64_t trace_start = hal_trace_enabled() ? (uint64_t)hal_time_now() : 0;
  hal_status_t status = hal_device_vtable(device)->queue_dealloca(
      device, queue_index, wait_semaphores, signal_semaphores, buffer);
  if (trace_start)
    hal_device_trace_submit(device, "queue_dealloca", queue_index,
                            wait_semaphores, signal_semaphores, 0, trace_start,
                            status);
  return status;
}
