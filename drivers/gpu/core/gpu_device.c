// Copyright 2026 The HAL Authors.

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "gpu_core.h"

//===----------------------------------------------------------------------===//
// Event pool hooks: native events for the sync module's device timepoints
//===----------------------------------------------------------------------===//

// The sync module creates events when it issues work (an empty submission
// calls the vendor for nothing else), so a loss reported here is the
// device's (Q5) like one from a queue.
static hal_status_t gpu_event_create(void* self, void** out_handle) {
  gpu_device_t* device = self;
  HAL_RETURN_IF_ERROR(gpu_device_check_lost(device));
  HAL_RETURN_IF_ERROR(gpu_device_note(device, gpu_device_make_current(device)));
  gpu_event_t event = NULL;
  HAL_RETURN_IF_ERROR(gpu_device_note(
      device, device->adapter->ops->event_create(device->adapter, &event)));
  *out_handle = event;
  return HAL_OK;
}

static void gpu_event_destroy(void* self, void* handle) {
  gpu_device_t* device = self;
  // A failure to make the context current leaves nothing better to do than
  // try the destroy anyway: the vendor reports it and we drop the error.
  hal_status_ignore(gpu_device_make_current(device));
  gpu_device_note_release(device, device->adapter->ops->event_destroy(
                                      device->adapter, (gpu_event_t)handle));
}

//===----------------------------------------------------------------------===//
// Queue interface: what the sync module's threads call
//===----------------------------------------------------------------------===//

// A submission's payload: its command buffers, or the buffer of an alloca
// or dealloca, retained until completion.
typedef struct gpu_payload_t {
  gpu_payload_kind_t kind;
  bool issued;           // its issue succeeded (allocas and deallocas)
  gpu_buffer_t* buffer;  // ALLOCA, DEALLOCA: retained
  // Its command buffers' queue-ordered uses are counted as pending until
  // the issue starts (or the release, when it never does).
  bool uses_pending;
  // Its collectives were all issued, or their channels aborted: a payload
  // released before that would leave its peers waiting (gpu_channels_abort).
  bool collectives_settled;
  // Its channels count it as in flight (gpu_channels_issued) until release.
  bool channels_counted;
  gpu_trace_spans_t* trace;  // HAL_TRACE's device spans; NULL when off
  // The vendor profiler's range (NVTX, roctx) from issue to completion.
  bool range_started;
  uint64_t range;
  // Room for GPU_PAYLOAD_CACHED_COMMAND_BUFFERS: the block goes back to its
  // queue's idle list at release (gpu_payload_acquire).
  bool is_cached;
  struct gpu_payload_t* next_free;  // on the idle list
  size_t count;
  hal_command_buffer_t* command_buffers[];
} gpu_payload_t;

// A payload with at most this many command buffers comes from its queue's
// idle list; larger ones are allocated alone. At most
// GPU_PAYLOAD_IDLE_MAX idle payloads are kept per queue: enough for a burst
// of submissions in flight, as the sync module's own pools.
#define GPU_PAYLOAD_CACHED_COMMAND_BUFFERS 4
#define GPU_PAYLOAD_IDLE_MAX 64

// A zeroed payload for |command_buffer_count| command buffers on |queue|:
// a block from the queue's idle list, or one allocated with the device's
// host allocator (a warm queue allocates nothing for small submissions).
static hal_status_t gpu_payload_acquire(gpu_queue_t* queue,
                                        size_t command_buffer_count,
                                        gpu_payload_t** out_payload) {
  *out_payload = NULL;
  bool is_cached = command_buffer_count <= GPU_PAYLOAD_CACHED_COMMAND_BUFFERS;
  gpu_payload_t* payload = NULL;
  if (is_cached) {
    pthread_mutex_lock(&queue->payload_mutex);
    payload = queue->free_payloads;
    if (payload) {
      queue->free_payloads = payload->next_free;
      --queue->free_payload_count;
    }
    pthread_mutex_unlock(&queue->payload_mutex);
  }
  if (!payload) {
    size_t capacity =
        is_cached ? GPU_PAYLOAD_CACHED_COMMAND_BUFFERS : command_buffer_count;
    HAL_RETURN_IF_ERROR(hal_allocator_malloc(
        queue->device->base.host_allocator,
        sizeof(*payload) + capacity * sizeof(hal_command_buffer_t*),
        (void**)&payload));
  }
  memset(payload, 0, sizeof(*payload));
  payload->is_cached = is_cached;
  *out_payload = payload;
  return HAL_OK;
}

// Gives |payload| (whose references are released) back to |queue|'s idle
// list, or frees it.
static void gpu_payload_recycle(gpu_queue_t* queue, gpu_payload_t* payload) {
  if (payload->is_cached) {
    pthread_mutex_lock(&queue->payload_mutex);
    bool keep = queue->free_payload_count < GPU_PAYLOAD_IDLE_MAX;
    if (keep) {
      payload->next_free = queue->free_payloads;
      queue->free_payloads = payload;
      ++queue->free_payload_count;
    }
    pthread_mutex_unlock(&queue->payload_mutex);
    if (keep)
      return;
  }
  hal_allocator_free(queue->device->base.host_allocator, payload);
}

// Frees |queue|'s idle payloads (the device is being destroyed: no payload
// is out any more).
static void gpu_payload_cache_deinitialize(gpu_queue_t* queue) {
  gpu_payload_t* payload = queue->free_payloads;
  while (payload) {
    gpu_payload_t* next = payload->next_free;
    hal_allocator_free(queue->device->base.host_allocator, payload);
    payload = next;
  }
  queue->free_payloads = NULL;
  queue->free_payload_count = 0;
  pthread_mutex_destroy(&queue->payload_mutex);
}

// Counts (|delta| 1) or uncounts (-1) the payload's pending uses of the
// queue-ordered buffers its command buffers use.
static void gpu_payload_count_uses(gpu_payload_t* payload, int32_t delta) {
  for (size_t i = 0; i < payload->count; ++i) {
    const gpu_buffer_set_t* set =
        gpu_recording_queue_ordered(payload->command_buffers[i]);
    if (HAL_UNLIKELY(set->count > 0))
      gpu_buffer_set_add_uses(set, delta);
  }
}

static void gpu_payload_uncount_uses(gpu_payload_t* payload) {
  payload->uses_pending = false;
  gpu_payload_count_uses(payload, -1);
}

// ISSUING thread (sync_queue.h): orders |queue|'s stream after the allocation
// of every queue-ordered buffer the payload uses that was allocated on another
// queue (gpu_alloca_order_use).
static hal_status_t gpu_payload_order_uses(gpu_queue_t* queue,
                                           gpu_payload_t* payload) {
  for (size_t i = 0; i < payload->count; ++i) {
    const gpu_buffer_set_t* set =
        gpu_recording_queue_ordered(payload->command_buffers[i]);
    for (size_t j = 0; HAL_UNLIKELY(j < set->count); ++j) {
      HAL_RETURN_IF_ERROR(
          gpu_alloca_order_use(queue, gpu_buffer_cast(set->items[j])));
    }
  }
  return HAL_OK;
}

//===----------------------------------------------------------------------===//
// Device loss (Q5)
//===----------------------------------------------------------------------===//

// Records |status| as the device's loss if it is one (the first wins),
// after failing the device's loss domain: parked work and every semaphore
// the device created fail with it, so no wait on them outlasts the loss
// (K14). Every caller that meets the loss fails the domain before it
// returns the loss or makes it known (|lost|): the first to take the
// domain's lock fails every semaphore under it, the others wait there, so
// nothing that learns of the loss, from this call or from
// gpu_device_check_lost, finds one of the device's semaphores not failed
// yet (Q5). Returns |status|.
hal_status_t gpu_device_note(gpu_device_t* device, hal_status_t status) {
  if (!gpu_adapter_status_is_device_lost(status))
    return status;
  // Outside |lost_mutex|: failing semaphores runs their callbacks (T2),
  // which may call into the device.
  hal_sync_loss_domain_fail(
      device->base.loss_domain,
      hal_status_annotatef(hal_status_clone(status), "device '%s' was lost",
                           device->base.info.name));
  pthread_mutex_lock(&device->lost_mutex);
  if (!device->lost_status)
    device->lost_status = hal_status_clone(status);
  atomic_store_explicit(&device->lost, true, memory_order_release);
  pthread_mutex_unlock(&device->lost_mutex);
  return status;
}

void gpu_device_note_release(gpu_device_t* device, hal_status_t status) {
  hal_status_free(gpu_device_note(device, status));
}

// OK, or a copy of the loss: every later issue on a lost device fails with
// it, so everything downstream fails instead of waiting forever.
hal_status_t gpu_device_check_lost(gpu_device_t* device) {
  if (!atomic_load_explicit(&device->lost, memory_order_acquire)) {
    return HAL_OK;
  }
  pthread_mutex_lock(&device->lost_mutex);
  hal_status_t status = hal_status_clone(device->lost_status);
  pthread_mutex_unlock(&device->lost_mutex);
  return hal_status_annotatef(status, "device '%s' was lost",
                              device->base.info.name);
}

// ISSUING thread (the queue's worker, or a submitter: sync_queue.h).
static hal_status_t gpu_queue_wait_event(void* self, void* event_handle) {
  gpu_queue_t* queue = self;
  gpu_device_t* device = queue->device;
  HAL_RETURN_IF_ERROR(gpu_device_check_lost(device));
  HAL_RETURN_IF_ERROR(gpu_device_note(device, gpu_device_make_current(device)));
  return gpu_device_note(
      device, device->adapter->ops->stream_wait_event(
                  device->adapter, queue->stream, (gpu_event_t)event_handle));
}

// Blocks until |queue|'s stream has run everything enqueued so far. Used on
// failure paths, where the payload is about to be released and the device
// must be done with it first (Q3). A failure here is noted (a loss) and
// otherwise dropped: there is nothing better left to wait for.
static void gpu_queue_drain_stream(gpu_queue_t* queue) {
  gpu_device_t* device = queue->device;
  hal_status_t status = gpu_device_make_current(device);
  if (status == HAL_OK) {
    status = device->adapter->ops->stream_synchronize(device->adapter,
                                                      queue->stream);
  }
  hal_status_free(gpu_device_note(device, status));
}

// Aborts the channels of every command buffer of |payload| (its
// collectives will not all run: gpu_channels_abort).
static void gpu_payload_abort_channels(gpu_payload_t* payload,
                                       const char* why) {
  payload->collectives_settled = true;
  for (size_t i = 0; i < payload->count; ++i) {
    const gpu_buffer_set_t* set =
        gpu_recording_queue_ordered(payload->command_buffers[i]);
    if (HAL_UNLIKELY(set->channel_count > 0))
      gpu_channels_abort(set, why);
  }
}

static hal_status_t gpu_queue_issue_payload(gpu_queue_t* queue,
                                            gpu_payload_t* payload);

// ISSUING thread.
static hal_status_t gpu_queue_issue(void* self, void* payload_ptr) {
  gpu_payload_t* payload = payload_ptr;
  hal_status_t status = gpu_queue_issue_payload(self, payload);
  if (payload->kind == GPU_PAYLOAD_COMMAND_BUFFERS) {
    // Before the sync module drains the stream: a collective enqueued
    // there waits for peers whose part now never comes.
    if (HAL_UNLIKELY(status != HAL_OK)) {
      gpu_payload_abort_channels(
          payload, "a submission using it failed to issue its collectives");
    } else {
      for (size_t i = 0; i < payload->count; ++i) {
        const gpu_buffer_set_t* set =
            gpu_recording_queue_ordered(payload->command_buffers[i]);
        if (HAL_UNLIKELY(set->channel_count > 0)) {
          gpu_channels_issued(set);
          payload->channels_counted = true;
        }
      }
    }
    payload->collectives_settled = true;
  }
  return status;
}

static hal_status_t gpu_queue_issue_payload(gpu_queue_t* queue,
                                            gpu_payload_t* payload) {
  gpu_device_t* device = queue->device;
  HAL_RETURN_IF_ERROR(gpu_device_check_lost(device));
  HAL_RETURN_IF_ERROR(gpu_device_note(device, gpu_device_make_current(device)));
  gpu_adapter_t* adapter = device->adapter;
  if (payload->kind != GPU_PAYLOAD_COMMAND_BUFFERS) {
    // Device work too (the vendor's pool orders it on the stream): a
    // submission span with the operation's span in it, as for an op.
    bool is_alloca = payload->kind == GPU_PAYLOAD_ALLOCA;
    gpu_trace_spans_t* trace = NULL;
    uint32_t first = 0;
    if (HAL_UNLIKELY(device->trace_epoch)) {
      trace = payload->trace = gpu_trace_spans_create(queue);
      first = gpu_trace_mark(queue, trace);
    }
    hal_status_t status =
        is_alloca ? gpu_queue_issue_alloca(queue, payload->buffer)
                  : gpu_queue_issue_dealloca(queue, payload->buffer);
    payload->issued = status == HAL_OK;
    if (status == HAL_OK && trace) {
      uint32_t end = gpu_trace_mark(queue, trace);
      gpu_trace_span(trace, first, end, 1, is_alloca ? "alloca" : "dealloca",
                     0);
      gpu_trace_span(trace, first, end, 0, "submission", 0);
    }
    return gpu_device_note(device, status);
  }
  if (payload->uses_pending) {
    gpu_payload_uncount_uses(payload);
  }
  HAL_RETURN_IF_ERROR(
      gpu_device_note(device, gpu_payload_order_uses(queue, payload)));
  if (HAL_UNLIKELY(adapter->info.tool_ranges != NULL)) {
    char message[HAL_DRIVER_NAME_MAX + 64];
    snprintf(message, sizeof(message), "HAL %s:%u:q%u submission %" PRIu64,
             device->base.driver->name, device->base.info.index, queue->index,
             ++queue->range_count);
    payload->range_started =
        adapter->ops->range_start(adapter, message, &payload->range);
  }
  gpu_trace_spans_t* trace = NULL;
  uint32_t first = 0;
  if (HAL_UNLIKELY(device->trace_epoch)) {
    // Re-issued payloads do not exist: a submission issues once.
    trace = payload->trace = gpu_trace_spans_create(queue);
    first = gpu_trace_mark(queue, trace);
  }
  for (size_t i = 0; i < payload->count; ++i) {
    uint32_t begin = gpu_trace_last_mark(trace);
    hal_status_t status = gpu_device_note(
        device,
        device->strategy->issue(queue, payload->command_buffers[i], trace));
    if (status != HAL_OK) {
      // Ops before the failing one may be enqueued: the sync module
      // quiesces the queue before it releases the payload.
      gpu_trace_spans_discard(trace);
      return hal_status_annotatef(
          status, "issuing command buffer %zu of a submission on queue %u", i,
          queue->index);
    }
    // A strategy that marked each op made the command buffer's end mark
    // already: its last op's (a trailing barrier enqueues nothing).
    uint32_t end = gpu_trace_last_mark(trace);
    if (end == begin || end == UINT32_MAX)
      end = gpu_trace_mark(queue, trace);
    gpu_trace_span(trace, begin, end, 1, "command buffer", (uint32_t)i);
  }
  gpu_trace_span(trace, first, gpu_trace_last_mark(trace), 0, "submission", 0);
  return HAL_OK;
}

// ISSUING thread.
static hal_status_t gpu_queue_record_event(void* self, void* event_handle) {
  gpu_queue_t* queue = self;
  gpu_device_t* device = queue->device;
  HAL_RETURN_IF_ERROR(gpu_device_check_lost(device));
  HAL_RETURN_IF_ERROR(gpu_device_note(device, gpu_device_make_current(device)));
  return gpu_device_note(
      device, device->adapter->ops->event_record(
                  device->adapter, (gpu_event_t)event_handle, queue->stream));
}

// COMPLETION thread. Not short-circuited on loss: the vendor returns its
// own error for work that could not finish, and work that did finish may
// still report success. On failure the sync module quiesces the queue.
static hal_status_t gpu_queue_synchronize_event(void* self,
                                                void* event_handle) {
  gpu_queue_t* queue = self;
  gpu_device_t* device = queue->device;
  HAL_RETURN_IF_ERROR(gpu_device_note(device, gpu_device_make_current(device)));
  return gpu_device_note(device,
                         device->adapter->ops->event_synchronize(
                             device->adapter, (gpu_event_t)event_handle));
}

// COMPLETION thread: the channels of the payload's command buffers, each
// for a collective that failed without the device's knowing (ranks that
// disagreed, an abort, a peer gone).
static hal_status_t gpu_queue_check_completion(void* self, void* payload_ptr) {
  (void)self;
  gpu_payload_t* payload = payload_ptr;
  for (size_t i = 0; i < payload->count; ++i) {
    const gpu_buffer_set_t* set =
        gpu_recording_queue_ordered(payload->command_buffers[i]);
    if (HAL_UNLIKELY(set->channel_count > 0))
      HAL_RETURN_IF_ERROR(gpu_channels_check(set));
  }
  return HAL_OK;
}

// Any submitting thread: whether the submitter may issue |payload| itself
// (hal_sync_queue_interface_t). Not collectives: one thread may drive
// several ranks, and a rank's call may wait for its peers' to be issued,
// which only other queues' workers would do. Not queue-ordered memory
// operations: an alloca may wait for earlier frees (gpu_alloca.c) before
// the device has room.
static bool gpu_queue_may_issue_on_submitter(void* self, void* payload_ptr) {
  (void)self;
  gpu_payload_t* payload = payload_ptr;
  if (!payload)
    return true;
  if (payload->kind != GPU_PAYLOAD_COMMAND_BUFFERS)
    return false;
  for (size_t i = 0; i < payload->count; ++i) {
    if (gpu_recording_queue_ordered(payload->command_buffers[i])
            ->channel_count > 0) {
      return false;
    }
  }
  return true;
}

// hal_sync_queue_destroy(), after the queue's threads stopped: work whose
// completion event could not be recorded is released next.
static void gpu_queue_quiesce(void* self) {
  gpu_queue_drain_stream(self);
}

// ISSUING thread: the submission's completion could not be recorded, so
// its signals fail while the device may still run it. An alloca's buffer
// must not become usable (gpu_alloca_released, as if released now).
static void gpu_queue_orphan_payload(void* self, void* payload_ptr) {
  (void)self;
  gpu_payload_t* payload = payload_ptr;
  if (payload->kind == GPU_PAYLOAD_ALLOCA)
    gpu_alloca_released(payload->buffer, false);
}

// Any thread the sync module releases payloads on (sync_queue.h), before
// the queue's destroy returns: the device is done with the payload.
static void gpu_queue_release_payload(void* self, void* payload_ptr,
                                      bool completed) {
  gpu_queue_t* queue = self;
  gpu_payload_t* payload = payload_ptr;
  // This may drop the last reference to the device (through command
  // buffers and their buffers); a queue thread must never destroy its own
  // device, so such a destroy is handed to libhal's release thread.
  if (payload->uses_pending)
    gpu_payload_uncount_uses(payload);  // it never issued
  for (size_t i = 0; payload->channels_counted && i < payload->count; ++i) {
    const gpu_buffer_set_t* set =
        gpu_recording_queue_ordered(payload->command_buffers[i]);
    if (set->channel_count > 0)
      gpu_channels_retired(set);
  }
  if (payload->kind == GPU_PAYLOAD_COMMAND_BUFFERS &&
      !payload->collectives_settled) {
    // Never issued: a wait failed, or the device shut down with it parked.
    gpu_payload_abort_channels(
        payload,
        "a submission using it never ran (a wait failed, or its "
        "device was shut down with it waiting)");
  }
  gpu_trace_spans_finish(queue, payload->trace, completed);
  if (payload->range_started) {
    queue->device->adapter->ops->range_end(queue->device->adapter,
                                           payload->range);
  }
  hal_resource_defer_destruction_enter();
  for (size_t i = 0; i < payload->count; ++i) {
    hal_command_buffer_release_for_submission(payload->command_buffers[i]);
  }
  if (payload->kind == GPU_PAYLOAD_ALLOCA) {
    gpu_alloca_released(payload->buffer, completed);
  } else if (payload->kind == GPU_PAYLOAD_DEALLOCA) {
    gpu_dealloca_released(queue->device, payload->buffer, payload->issued);
  }
  if (payload->buffer)
    hal_buffer_release(&payload->buffer->base);
  hal_resource_defer_destruction_exit();
  gpu_payload_recycle(queue, payload);
}

//===----------------------------------------------------------------------===//
// Device
//===----------------------------------------------------------------------===//

// The caller released its last reference (Q4): each sync queue fails its
// parked work with CANCELLED, waits for issued work and joins its threads.
// Payloads released here drop their command buffers and buffers; the
// device's memory goes when the last of those does.
static void gpu_device_shutdown(hal_device_t* base) {
  gpu_device_t* device = gpu_device_cast(base);
  atomic_store_explicit(&device->shut_down, true, memory_order_release);
  for (uint32_t i = 0; i < device->queue_count; ++i) {
    if (device->queues[i].sync_queue) {
      hal_sync_queue_destroy(device->queues[i].sync_queue);
      device->queues[i].sync_queue = NULL;
    }
  }
}

// The shutdown's first step (hal/impl/device.h): the parked work of every
// queue is cancelled before the device's host calls are waited for.
static void gpu_device_cancel_parked(hal_device_t* base) {
  gpu_device_t* device = gpu_device_cast(base);
  for (uint32_t i = 0; i < device->queue_count; ++i) {
    if (device->queues[i].sync_queue)
      hal_sync_queue_cancel_parked(device->queues[i].sync_queue);
  }
}

// Frees what gpu_device_create() built: streams, events, the context.
static void gpu_device_destroy(hal_device_t* base) {
  gpu_device_t* device = gpu_device_cast(base);
  gpu_adapter_t* adapter = device->adapter;
  gpu_device_shutdown(base);  // no-op unless creation failed half-way
  if (device->context) {
    hal_status_ignore(gpu_device_make_current(device));
    for (uint32_t i = 0; i < device->queue_count; ++i) {
      if (device->queues[i].stream) {
        // The queues drained, but the stream may not have retired its last
        // operation yet; destroying it then is undefined (and the virtual
        // GPU says so).
        hal_status_ignore(adapter->ops->stream_synchronize(
            adapter, device->queues[i].stream));
        gpu_device_note_release(device, adapter->ops->stream_destroy(
                                            adapter, device->queues[i].stream));
      }
    }
    gpu_device_trace_deinitialize(device);
    gpu_device_alloca_deinitialize(device);
    if (device->event_pool)
      hal_sync_event_pool_destroy(device->event_pool);
    adapter->ops->context_close(adapter, device->context);
  }
  // Semaphores the device created may outlive it: they keep the domain.
  hal_sync_loss_domain_release(device->base.loss_domain);
  hal_status_free(device->lost_status);
  for (uint32_t i = 0; i < GPU_QUEUE_COUNT; ++i)
    gpu_payload_cache_deinitialize(&device->queues[i]);
  pthread_mutex_destroy(&device->lost_mutex);
  pthread_cond_destroy(&device->alloca_freed);
  pthread_mutex_destroy(&device->alloca_mutex);
  hal_allocator_free(base->host_allocator, device);
}

static hal_status_t gpu_device_query_properties(
    hal_device_t* base, hal_device_properties_t* out_properties) {
  gpu_device_t* device = gpu_device_cast(base);
  out_properties->queue_count = device->queue_count;
  out_properties->total_memory = base->info.total_memory;
  out_properties->supported_memory_types =
      HAL_MEMORY_TYPE_DEVICE_LOCAL | HAL_MEMORY_TYPE_HOST_VISIBLE;
  out_properties->executable_formats = gpu_device_executable_formats(device);
  out_properties->max_workgroup_size = device->max_threads_per_block;
  for (int i = 0; i < 3; ++i) {
    out_properties->max_workgroup_dims[i] = device->max_block_dim[i];
    out_properties->max_workgroup_count[i] = device->max_grid_dim[i];
  }
  const gpu_adapter_info_t* info = &device->adapter->info;
  out_properties->runtime_path = info->library_path;
  out_properties->driver_version = info->driver_version;
  out_properties->runtime_version = info->runtime_version;
  out_properties->compute_capability_major = device->compute_capability[0];
  out_properties->compute_capability_minor = device->compute_capability[1];
  out_properties->is_virtual = info->is_virtual;
  return HAL_OK;
}

static hal_device_allocator_t* gpu_device_allocator(hal_device_t* base) {
  return &gpu_device_cast(base)->allocator;
}

static hal_status_t gpu_device_create_semaphore(
    hal_device_t* base, uint64_t initial_value,
    hal_semaphore_t** out_semaphore) {
  // The sync module's semaphore, shared by every driver, in the device's
  // loss domain (fails when the device is lost, Q5). It does not keep the
  // device alive: releasing the device cancels work waiting on it (Q4),
  // which its semaphores then report.
  return hal_sync_semaphore_create(base->loss_domain, base->host_allocator,
                                   initial_value, out_semaphore);
}

static hal_status_t gpu_device_create_executable(
    hal_device_t* base, const hal_executable_params_t* params,
    hal_executable_t** out_executable) {
  gpu_device_t* device = gpu_device_cast(base);
  HAL_RETURN_IF_ERROR(gpu_device_check_lost(device));
  return gpu_device_note(device,
                         gpu_executable_create(device, params, out_executable));
}

static hal_status_t gpu_device_create_command_buffer(
    hal_device_t* base, hal_command_buffer_mode_t mode,
    hal_command_buffer_t** out_command_buffer) {
  gpu_device_t* device = gpu_device_cast(base);
  HAL_RETURN_IF_ERROR(gpu_device_check_lost(device));
  return gpu_device_note(device, device->strategy->create_command_buffer(
                                     device, mode, out_command_buffer));
}

static hal_status_t gpu_device_queue_execute(
    hal_device_t* base, uint32_t queue_index,
    const hal_semaphore_list_t* wait_semaphores,
    const hal_semaphore_list_t* signal_semaphores, size_t command_buffer_count,
    hal_command_buffer_t* const* command_buffers) {
  gpu_device_t* device = gpu_device_cast(base);
  if (atomic_load_explicit(&device->shut_down, memory_order_acquire)) {
    return hal_make_status(HAL_STATUS_FAILED_PRECONDITION,
                           "device '%s' was released; it takes no more work",
                           base->info.name);
  }
  // A lost device takes no new work: the caller learns at once.
  HAL_RETURN_IF_ERROR(gpu_device_check_lost(device));
  gpu_queue_t* queue = &device->queues[queue_index];
  gpu_payload_t* payload = NULL;
  if (command_buffer_count > 0) {
    HAL_RETURN_IF_ERROR(
        gpu_payload_acquire(queue, command_buffer_count, &payload));
    payload->count = command_buffer_count;
    for (size_t i = 0; i < command_buffer_count; ++i) {
      payload->command_buffers[i] = command_buffers[i];
      hal_command_buffer_retain_for_submission(command_buffers[i]);  // Q3
    }
    payload->uses_pending = true;
    gpu_payload_count_uses(payload, 1);
  }
  hal_semaphore_list_t waits =
      wait_semaphores ? *wait_semaphores : hal_semaphore_list_empty();
  hal_semaphore_list_t signals =
      signal_semaphores ? *signal_semaphores : hal_semaphore_list_empty();
  hal_status_t status =
      hal_sync_queue_submit(queue->sync_queue, waits, signals, payload);
  if (status != HAL_OK && payload) {
    // Not submitted: the payload is still ours.
    gpu_payload_uncount_uses(payload);
    for (size_t i = 0; i < payload->count; ++i) {
      hal_command_buffer_release_for_submission(payload->command_buffers[i]);
    }
    gpu_payload_recycle(queue, payload);
  }
  return status;
}

hal_status_t gpu_device_submit_memory_op(
    gpu_device_t* device, uint32_t queue_index,
    const hal_semaphore_list_t* wait_semaphores,
    const hal_semaphore_list_t* signal_semaphores, gpu_payload_kind_t kind,
    gpu_buffer_t* buffer) {
  if (atomic_load_explicit(&device->shut_down, memory_order_acquire)) {
    return hal_make_status(HAL_STATUS_FAILED_PRECONDITION,
                           "device '%s' was released; it takes no more work",
                           device->base.info.name);
  }
  HAL_RETURN_IF_ERROR(gpu_device_check_lost(device));
  gpu_queue_t* queue = &device->queues[queue_index];
  gpu_payload_t* payload = NULL;
  HAL_RETURN_IF_ERROR(gpu_payload_acquire(queue, 0, &payload));
  payload->kind = kind;
  payload->buffer = buffer;
  hal_buffer_retain(&buffer->base);  // Q3
  hal_semaphore_list_t waits =
      wait_semaphores ? *wait_semaphores : hal_semaphore_list_empty();
  hal_semaphore_list_t signals =
      signal_semaphores ? *signal_semaphores : hal_semaphore_list_empty();
  hal_status_t status =
      hal_sync_queue_submit(queue->sync_queue, waits, signals, payload);
  if (status != HAL_OK) {
    hal_buffer_release(&buffer->base);
    gpu_payload_recycle(queue, payload);
  }
  return status;
}

static hal_status_t gpu_device_wait_semaphores(
    hal_device_t* base, hal_wait_mode_t wait_mode,
    const hal_semaphore_list_t* semaphore_list, hal_timeout_t timeout) {
  return hal_semaphore_list_wait(wait_mode, *semaphore_list, timeout);
}

const hal_device_vtable_t gpu_device_vtable = {
    .destroy = gpu_device_destroy,
    .shutdown = gpu_device_shutdown,
    .cancel_parked = gpu_device_cancel_parked,
    .query_properties = gpu_device_query_properties,
    .allocator = gpu_device_allocator,
    .create_semaphore = gpu_device_create_semaphore,
    .create_command_buffer = gpu_device_create_command_buffer,
    .create_executable = gpu_device_create_executable,
    .queue_execute = gpu_device_queue_execute,
    .wait_semaphores = gpu_device_wait_semaphores,
    .queue_alloca = gpu_device_queue_alloca,
    .queue_dealloca = gpu_device_queue_dealloca,
#if defined(GPU_CORE_HAVE_CCL)
    .channel_id_generate = gpu_device_channel_id_generate,
    .create_channel = gpu_device_create_channel,
    .create_channel_group = gpu_device_create_channel_group,
#endif
};

// Creates queue |index|: a stream and a sync queue over it.
static hal_status_t gpu_queue_initialize(gpu_device_t* device, uint32_t index) {
  gpu_queue_t* queue = &device->queues[index];
  queue->device = device;
  queue->index = index;
  HAL_RETURN_IF_ERROR(
      device->adapter->ops->stream_create(device->adapter, &queue->stream));
  hal_sync_queue_interface_t interface = {
      .self = queue,
      .wait_event = gpu_queue_wait_event,
      .issue = gpu_queue_issue,
      .record_event = gpu_queue_record_event,
      .check_completion = gpu_queue_check_completion,
      .synchronize_event = gpu_queue_synchronize_event,
      .may_issue_on_submitter = gpu_queue_may_issue_on_submitter,
      .release_payload = gpu_queue_release_payload,
      .orphan_payload = gpu_queue_orphan_payload,
      .quiesce = gpu_queue_quiesce,
  };
  char name[HAL_DRIVER_NAME_MAX + 32];
  snprintf(name, sizeof(name), "%s:%u:q%u", device->base.driver->name,
           device->base.info.index, index);
  return hal_sync_queue_create(interface, device->event_pool,
                               device->base.loss_domain, name,
                               &queue->sync_queue);
}

hal_status_t gpu_device_create(gpu_driver_t* driver, uint32_t index,
                               hal_allocator_t host_allocator,
                               hal_device_t** out_device) {
  *out_device = NULL;
  gpu_device_t* device = NULL;
  HAL_RETURN_IF_ERROR(
      hal_allocator_malloc(host_allocator, sizeof(*device), (void**)&device));
  hal_device_initialize(&gpu_device_vtable, &driver->base,
                        &driver->device_infos[index], host_allocator,
                        &device->base);
  device->adapter = driver->adapter;
  device->strategy = driver->strategy;
  device->ordinal = (int)index;
  device->allocator.vtable = &gpu_device_allocator_vtable;
  device->allocator.device = &device->base;
  pthread_mutex_init(&device->lost_mutex, NULL);
  for (uint32_t i = 0; i < GPU_QUEUE_COUNT; ++i) {
    device->queues[i].device = device;
    pthread_mutex_init(&device->queues[i].payload_mutex, NULL);
  }
  pthread_mutex_init(&device->alloca_mutex, NULL);
  pthread_cond_init(&device->alloca_freed, NULL);
  device->alloca_frees_pending = 0;
  device->alloca_frees_done = 0;
  device->alloca_pool = NULL;

  // Host calls and file transfers fail with the queues: libhal's executors
  // join the domain through |base.loss_domain|.
  hal_status_t status = hal_sync_loss_domain_create(&device->base.loss_domain);
  if (status == HAL_OK) {
    status = device->adapter->ops->context_open(
        device->adapter, device->ordinal, &device->context);
  }
  if (status == HAL_OK)
    status = gpu_device_make_current(device);
  if (status == HAL_OK) {
    int max_threads = 0;
    status = device->adapter->ops->device_attribute(
        device->adapter, device->ordinal,
        GPU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &max_threads);
    device->max_threads_per_block = max_threads > 0 ? (uint32_t)max_threads : 1;
  }
  for (int i = 0; i < 3 && status == HAL_OK; ++i) {
    int block = 0, grid = 0;
    status = device->adapter->ops->device_attribute(
        device->adapter, device->ordinal,
        (gpu_device_attribute_t)(GPU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X + i),
        &block);
    if (status == HAL_OK) {
      status = device->adapter->ops->device_attribute(
          device->adapter, device->ordinal,
          (gpu_device_attribute_t)(GPU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X + i),
          &grid);
    }
    device->max_block_dim[i] = block > 0 ? (uint32_t)block : 1;
    device->max_grid_dim[i] = grid > 0 ? (uint32_t)grid : 1;
  }
  for (int i = 0; i < 2 && status == HAL_OK; ++i) {
    int value = 0;
    status = device->adapter->ops->device_attribute(
        device->adapter, device->ordinal,
        i == 0 ? GPU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
               : GPU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
        &value);
    device->compute_capability[i] = value > 0 ? (uint32_t)value : 0;
  }
  if (status == HAL_OK) {
    hal_sync_event_interface_t events = {
        .self = device,
        .create = gpu_event_create,
        .destroy = gpu_event_destroy,
    };
    status = hal_sync_event_pool_create(events, /*max_free_count=*/64,
                                        &device->event_pool);
  }
  for (uint32_t i = 0; status == HAL_OK && i < GPU_QUEUE_COUNT; ++i) {
    device->queue_count = i + 1;  // destroy tears down what exists
    status = gpu_queue_initialize(device, i);
  }
  if (status == HAL_OK)
    status = gpu_device_alloca_initialize(device);
  if (status == HAL_OK)
    gpu_device_trace_initialize(device);
  if (status != HAL_OK) {
    hal_device_release(&device->base);
    return hal_status_annotatef(status, "creating device %u of driver '%s'",
                                index, driver->base.name);
  }
  *out_device = &device->base;
  return HAL_OK;
}
