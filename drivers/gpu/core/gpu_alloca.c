// Copyright 2026 The HAL Authors.
//
// Queue-ordered allocation (hal_device_queue_alloca / _dealloca): a buffer
// handle at once, its memory in queue order. docs/queue-ops.md has the
// contract; this is how the GPU core keeps it.
//
// An alloca is a submission whose payload is the buffer: when the queue's
// worker issues it (after its waits, on the queue's stream) it allocates
// from the device's vendor pool in stream order (cuMemAllocFromPoolAsync,
// hipMallocFromPoolAsync), stores the address and marks the buffer LIVE.
// The alloca's completion event is recorded after that, so work that waits
// for its signals runs after the allocation on the device and sees the
// address at issue. A dealloca likewise frees in stream order
// (cuMemFreeAsync, hipFreeAsync) at issue, after its waits: the vendor pool
// reuses the memory only after the free ran, on this stream or on streams
// ordered after it (the reuse loop of a queue keeps one block).
//
// Without the adapter's STREAM_ORDERED_ALLOC (a runtime that lacks the
// family, or one hidden by HAL_GPU_ADAPTER_HIDE_SYMBOLS) the worker
// allocates with device_alloc at issue, never on the caller's thread, and a
// dealloca frees when its completion event was reached (all work ordered
// before it is done then), on the completion thread.
//
// Issue time is where every use is checked: replay, graph build and launch,
// and host transfers read the address through gpu_buffer_issue_address,
// which refuses a buffer that is not LIVE (FAILED_PRECONDITION). A dealloca
// that never ran (a failed wait) leaves the memory to the buffer: it is
// freed when the buffer's last reference goes, when no submission uses it
// any more. Graph drivers build the graph of a command buffer that uses
// queue-ordered buffers at its first issue (gpu_graph.c).

#include <inttypes.h>
#include <string.h>
#include <time.h>

#include "gpu_core.h"
#include "hal/env.h"

// Idle pool memory kept for reuse unless HAL_ALLOCA_RELEASE_THRESHOLD says
// otherwise: enough for a pipeline's working set without a trip to the
// driver on every alloca.
#define GPU_ALLOCA_DEFAULT_RELEASE_THRESHOLD ((uint64_t)64 << 20)

// How long a fallback alloca that found the device full waits for frees
// already on their way before it fails.
#define GPU_ALLOCA_FREE_WAIT_SECONDS 10

hal_status_t gpu_device_alloca_initialize(gpu_device_t* device) {
  gpu_adapter_t* adapter = device->adapter;
  if (!(adapter->info.capabilities & GPU_ADAPTER_CAP_STREAM_ORDERED_ALLOC))
    return HAL_OK;  // the fallback: device_alloc at issue
  uint64_t threshold = GPU_ALLOCA_DEFAULT_RELEASE_THRESHOLD;
  HAL_RETURN_IF_ERROR(hal_env_uint("HAL_ALLOCA_RELEASE_THRESHOLD", 0,
                                   UINT64_MAX, &threshold, NULL));
  return adapter->ops->pool_create(adapter, device->context, threshold,
                                   &device->alloca_pool);
}

void gpu_device_alloca_deinitialize(gpu_device_t* device) {
  // Every queue-ordered buffer is gone (each keeps the device alive), so
  // every allocation of the pool was freed.
  if (device->alloca_pool)
    gpu_device_note_release(device, device->adapter->ops->pool_destroy(
                                        device->adapter, device->alloca_pool));
  device->alloca_pool = NULL;
}

hal_status_t gpu_buffer_queue_ordered_address(const gpu_buffer_t* buffer,
                                              gpu_device_ptr_t* out_address) {
  uint32_t life = atomic_load_explicit(&((gpu_buffer_t*)buffer)->life,
                                       memory_order_acquire);
  if (HAL_LIKELY(life == GPU_BUFFER_LIFE_LIVE)) {
    *out_address = buffer->address;
    return HAL_OK;
  }
  *out_address = 0;
  return hal_make_status(
      HAL_STATUS_FAILED_PRECONDITION,
      "buffer %p of %" PRIu64
      " bytes is queue-ordered and %s: work that "
      "uses it must be ordered after its alloca's signals and before its "
      "dealloca's waits",
      (const void*)buffer, buffer->base.byte_length,
      life == GPU_BUFFER_LIFE_PENDING ? "its alloca was not reached yet"
      : life == GPU_BUFFER_LIFE_FREED ? "its dealloca was reached"
                                      : "its alloca failed");
}

hal_status_t gpu_device_queue_alloca(
    hal_device_t* base, uint32_t queue_index,
    const hal_semaphore_list_t* wait_semaphores,
    const hal_semaphore_list_t* signal_semaphores, hal_buffer_params_t params,
    uint64_t byte_length, hal_buffer_t** out_buffer) {
  gpu_device_t* device = gpu_device_cast(base);
  gpu_buffer_t* buffer = NULL;
  HAL_RETURN_IF_ERROR(hal_allocator_malloc(base->host_allocator,
                                           sizeof(*buffer), (void**)&buffer));
  memset(buffer, 0, sizeof(*buffer));
  buffer->queue_ordered = true;
  buffer->pooled = device->alloca_pool != NULL;
  atomic_init(&buffer->life, GPU_BUFFER_LIFE_PENDING);
  atomic_init(&buffer->dealloca_submitted, false);
  atomic_init(&buffer->unissued_uses, 0);
  hal_buffer_initialize(&gpu_buffer_vtable, base, params, byte_length,
                        &buffer->base);
  hal_status_t status = gpu_device_submit_memory_op(
      device, queue_index, wait_semaphores, signal_semaphores,
      GPU_PAYLOAD_ALLOCA, buffer);
  if (status != HAL_OK) {
    atomic_store_explicit(&buffer->life, GPU_BUFFER_LIFE_FAILED,
                          memory_order_release);
    hal_buffer_release(&buffer->base);
    return status;
  }
  *out_buffer = &buffer->base;
  return HAL_OK;
}

hal_status_t gpu_device_queue_dealloca(
    hal_device_t* base, uint32_t queue_index,
    const hal_semaphore_list_t* wait_semaphores,
    const hal_semaphore_list_t* signal_semaphores, hal_buffer_t* buffer_base) {
  gpu_device_t* device = gpu_device_cast(base);
  gpu_buffer_t* buffer = gpu_buffer_cast(buffer_base);
  if (!buffer->queue_ordered) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "queue_dealloca: buffer %p was not made by "
                           "hal_device_queue_alloca (release it instead)",
                           (void*)buffer_base);
  }
  if (atomic_exchange_explicit(&buffer->dealloca_submitted, true,
                               memory_order_acq_rel)) {
    return hal_make_status(HAL_STATUS_FAILED_PRECONDITION,
                           "queue_dealloca: buffer %p was already passed to "
                           "hal_device_queue_dealloca",
                           (void*)buffer_base);
  }
  hal_status_t status = gpu_device_submit_memory_op(
      device, queue_index, wait_semaphores, signal_semaphores,
      GPU_PAYLOAD_DEALLOCA, buffer);
  if (status != HAL_OK) {
    atomic_store_explicit(&buffer->dealloca_submitted, false,
                          memory_order_release);
  }
  return status;
}

// How many fallback deallocas have freed their memory so far: read before
// an allocation that may find the device full (gpu_alloca_wait_for_frees).
static uint64_t gpu_alloca_frees_done(gpu_device_t* device) {
  pthread_mutex_lock(&device->alloca_mutex);
  uint64_t done = device->alloca_frees_done;
  pthread_mutex_unlock(&device->alloca_mutex);
  return done;
}

// WORKER thread: waits until no fallback dealloca is between its issue and
// its free. True when one freed since |done_before| was read: not only one
// pending now, as a free may complete between the failed allocation and
// this call, and its memory is back all the same.
// Bounded: a dealloca whose completion event could not be recorded is
// released only when its queue is destroyed, so its free may never come
// while this worker waits (the alloca then fails as the device is full).
static bool gpu_alloca_wait_for_frees(gpu_device_t* device,
                                      uint64_t done_before) {
  struct timespec deadline;
  clock_gettime(CLOCK_REALTIME, &deadline);
  deadline.tv_sec += GPU_ALLOCA_FREE_WAIT_SECONDS;
  pthread_mutex_lock(&device->alloca_mutex);
  while (device->alloca_frees_pending > 0) {
    if (pthread_cond_timedwait(&device->alloca_freed, &device->alloca_mutex,
                               &deadline) != 0) {
      break;
    }
  }
  bool freed = device->alloca_frees_done != done_before;
  pthread_mutex_unlock(&device->alloca_mutex);
  return freed;
}

// WORKER thread: records |buffer|'s allocation event on |queue|'s stream,
// after the allocation was enqueued there.
static hal_status_t gpu_alloca_record_allocation(gpu_queue_t* queue,
                                                 gpu_buffer_t* buffer) {
  gpu_device_t* device = queue->device;
  hal_sync_native_event_t* event = NULL;
  HAL_RETURN_IF_ERROR(hal_sync_event_pool_acquire(device->event_pool, &event));
  hal_status_t status = device->adapter->ops->event_record(
      device->adapter, (gpu_event_t)event->handle, queue->stream);
  if (status != HAL_OK) {
    hal_sync_native_event_release(event);
    return status;
  }
  buffer->alloc_event = event;
  buffer->alloc_queue_index = queue->index;
  return HAL_OK;
}

hal_status_t gpu_alloca_order_use(gpu_queue_t* queue, gpu_buffer_t* buffer) {
  // The use fails here unless the buffer is LIVE: an alloca on another
  // queue may make it LIVE between this check and the use's address read,
  // and a use that saw it PENDING would then run unordered. LIVE: the event
  // was written before |life| and stays until the buffer goes.
  gpu_device_ptr_t address = 0;
  HAL_RETURN_IF_ERROR(gpu_buffer_queue_ordered_address(buffer, &address));
  if (!buffer->alloc_event || buffer->alloc_queue_index == queue->index)
    return HAL_OK;
  gpu_adapter_t* adapter = queue->device->adapter;
  return adapter->ops->stream_wait_event(
      adapter, queue->stream, (gpu_event_t)buffer->alloc_event->handle);
}

void gpu_alloca_release_event(gpu_buffer_t* buffer) {
  if (buffer->alloc_event) {
    hal_sync_native_event_release(buffer->alloc_event);
    buffer->alloc_event = NULL;
  }
}

// WORKER thread: one try at |buffer|'s memory, from the pool in |queue|'s
// stream order or, without a pool, at once.
static hal_status_t gpu_alloca_allocate(gpu_queue_t* queue,
                                        gpu_buffer_t* buffer,
                                        gpu_device_ptr_t* out_address) {
  gpu_adapter_t* adapter = queue->device->adapter;
  return buffer->pooled
             ? adapter->ops->alloc_async(adapter, queue->device->alloca_pool,
                                         queue->stream,
                                         buffer->base.byte_length, out_address)
             : adapter->ops->device_alloc(adapter, buffer->base.byte_length,
                                          out_address);
}

hal_status_t gpu_queue_issue_alloca(gpu_queue_t* queue, gpu_buffer_t* buffer) {
  gpu_device_t* device = queue->device;
  gpu_device_ptr_t address = 0;
  // Counted before the try: memory may come back between a failure and
  // the wait for it.
  uint64_t frees_done = buffer->pooled ? 0 : gpu_alloca_frees_done(device);
  uint64_t destroys_done = hal_resource_deferred_destroys_finished();
  hal_status_t status = gpu_alloca_allocate(queue, buffer, &address);
  if (hal_status_code(status) == HAL_STATUS_RESOURCE_EXHAUSTED) {
    // The allocation happens here, on the host, as the alloca issues, and
    // work it is ordered after on the device may not be done yet. Memory
    // that work gives back comes back once it is: a pooled dealloca's free
    // on another queue's stream is reused by this stream once it ran (the
    // pool does not follow the device-side wait that orders us after it),
    // fallback deallocas free at completion, and a buffer released while
    // that work used it is destroyed on libhal's release thread a moment
    // after the work's signals (as for hal_device_allocate_buffer). So
    // wait for those signals, then for the frees and destroys on their
    // way, and try once more: a pooled free leaves no count to look at.
    hal_status_t waited = hal_sync_queue_await_issuing_waits(queue->sync_queue);
    if (waited != HAL_OK) {
      hal_status_free(status);
      return hal_status_annotatef(
          waited, "queue_alloca of %" PRIu64 " bytes on queue %u",
          buffer->base.byte_length, queue->index);
    }
    bool freed =
        buffer->pooled || gpu_alloca_wait_for_frees(device, frees_done);
    bool destroyed = hal_resource_wait_deferred_destroys(
        destroys_done,
        hal_time_now() + (hal_time_t)GPU_ALLOCA_FREE_WAIT_SECONDS * 1000000000);
    if (freed || destroyed) {
      hal_status_free(status);
      status = gpu_alloca_allocate(queue, buffer, &address);
    }
  }
  if (status == HAL_OK && buffer->pooled) {
    status = gpu_alloca_record_allocation(queue, buffer);
    if (status != HAL_OK) {
      // The alloca fails, but its allocation is enqueued: the buffer keeps
      // the address (never LIVE) and frees it when it goes, after the
      // queue drained (a free in stream order could fail as the record did,
      // a lost device).
      buffer->address = address;
    }
  }
  if (status != HAL_OK) {
    return hal_status_annotatef(status,
                                "queue_alloca of %" PRIu64 " bytes on queue %u",
                                buffer->base.byte_length, queue->index);
  }
  buffer->address = address;
  atomic_store_explicit(&buffer->life, GPU_BUFFER_LIFE_LIVE,
                        memory_order_release);
  return HAL_OK;
}

hal_status_t gpu_queue_issue_dealloca(gpu_queue_t* queue,
                                      gpu_buffer_t* buffer) {
  gpu_device_t* device = queue->device;
  gpu_device_ptr_t address = 0;
  HAL_RETURN_IF_ERROR(
      hal_status_annotatef(gpu_buffer_queue_ordered_address(buffer, &address),
                           "queue_dealloca on queue %u", queue->index));
  // A use that was submitted but is not issued yet cannot be ordered
  // before this dealloca's waits (its signals would have to come first):
  // freeing now would free memory it will use. The memory stays with the
  // buffer instead, freed when its last submission lets it go.
  uint32_t pending =
      atomic_load_explicit(&buffer->unissued_uses, memory_order_acquire);
  if (pending > 0) {
    return hal_make_status(
        HAL_STATUS_FAILED_PRECONDITION,
        "queue_dealloca of buffer %p on queue %u: %u submission(s) that use "
        "it are not ordered before the dealloca's waits (they have not "
        "been issued); its memory stays with the buffer until it is released",
        (void*)buffer, queue->index, pending);
  }
  if (buffer->pooled) {
    // The vendor pool frees in this stream's order only: a dealloca on
    // another queue than its alloca's, which nothing else orders after the
    // allocation, would free memory not allocated yet on the device.
    HAL_RETURN_IF_ERROR(gpu_alloca_order_use(queue, buffer));
    HAL_RETURN_IF_ERROR(device->adapter->ops->free_async(
        device->adapter, queue->stream, address));
  } else {
    pthread_mutex_lock(&device->alloca_mutex);
    ++device->alloca_frees_pending;
    pthread_mutex_unlock(&device->alloca_mutex);
  }
  // Without a pool the memory goes when the dealloca completes
  // (gpu_dealloca_released); from here on no work may use it.
  atomic_store_explicit(&buffer->life, GPU_BUFFER_LIFE_FREED,
                        memory_order_release);
  return HAL_OK;
}

void gpu_alloca_released(gpu_buffer_t* buffer, bool completed) {
  if (completed)
    return;
  // Its waits failed, or the allocation did: it never gets memory (from
  // PENDING). Or it was issued, and then its signals failed (its
  // completion event could not be recorded or synchronized: from LIVE): no
  // work is ordered after them and the allocation may not have run on the
  // device yet, so nothing may use the buffer, not even a host read; its
  // memory goes with it (gpu_buffer_queue_ordered_free).
  // Only the alloca's issue moves |life| before this (PENDING to LIVE), and
  // no dealloca is ordered after signals that failed.
  uint32_t life = atomic_load_explicit(&buffer->life, memory_order_acquire);
  if (life == GPU_BUFFER_LIFE_PENDING || life == GPU_BUFFER_LIFE_LIVE) {
    atomic_compare_exchange_strong_explicit(
        &buffer->life, &life, GPU_BUFFER_LIFE_FAILED, memory_order_acq_rel,
        memory_order_acquire);
  }
}

void gpu_dealloca_released(gpu_device_t* device, gpu_buffer_t* buffer,
                           bool issued) {
  // The fallback frees once the dealloca's completion event was reached:
  // everything ordered before it is done. A dealloca that never ran leaves
  // the memory to the buffer (gpu_buffer_queue_ordered_free).
  if (!issued || buffer->pooled)
    return;
  gpu_adapter_t* adapter = device->adapter;
  hal_status_ignore(gpu_device_make_current(device));
  // The signals are decided by now (the payload goes before them); a free
  // the vendor refuses leaves the memory with the buffer, freed when it
  // goes, as a dealloca that failed does, rather than leaked.
  hal_status_t status = gpu_device_note(
      device, adapter->ops->device_free(adapter, buffer->address));
  buffer->free_refused = status != HAL_OK;
  hal_status_free(status);
  pthread_mutex_lock(&device->alloca_mutex);
  --device->alloca_frees_pending;
  ++device->alloca_frees_done;
  pthread_cond_broadcast(&device->alloca_freed);
  pthread_mutex_unlock(&device->alloca_mutex);
}

void gpu_buffer_queue_ordered_free(gpu_device_t* device, gpu_buffer_t* buffer) {
  // LIVE: never deallocated (or its dealloca failed) and no submission
  // holds the buffer any more, so nothing uses the memory. The synchronous
  // free takes stream-ordered memory too.
  // FAILED with an address: allocated, then its allocation event could not
  // be recorded (gpu_queue_issue_alloca).
  // FREED with its free refused: the fallback's free at the dealloca's
  // completion failed (gpu_dealloca_released).
  uint32_t life = atomic_load_explicit(&buffer->life, memory_order_acquire);
  if (life == GPU_BUFFER_LIFE_LIVE ||
      (life == GPU_BUFFER_LIFE_FAILED && buffer->address != 0) ||
      (life == GPU_BUFFER_LIFE_FREED && buffer->free_refused)) {
    gpu_device_note_release(device, device->adapter->ops->device_free(
                                        device->adapter, buffer->address));
  }
}

static hal_status_t gpu_buffer_set_note(gpu_buffer_set_t* set,
                                        hal_buffer_t* buffer) {
  if (!gpu_buffer_cast(buffer)->queue_ordered)
    return HAL_OK;
  for (size_t i = 0; i < set->count; ++i) {
    if (set->items[i] == buffer)
      return HAL_OK;
  }
  HAL_RETURN_IF_ERROR(hal_allocator_realloc(
      set->allocator, (set->count + 1) * sizeof(hal_buffer_t*),
      (void**)&set->items));
  set->items[set->count++] = buffer;
  return HAL_OK;
}

static hal_status_t gpu_buffer_set_note_channel(gpu_buffer_set_t* set,
                                                hal_channel_t* channel) {
  for (size_t i = 0; i < set->channel_count; ++i) {
    if (set->channels[i] == channel)
      return HAL_OK;
  }
  HAL_RETURN_IF_ERROR(hal_allocator_realloc(
      set->allocator, (set->channel_count + 1) * sizeof(hal_channel_t*),
      (void**)&set->channels));
  set->channels[set->channel_count++] = channel;
  return HAL_OK;
}

hal_status_t gpu_buffer_set_collect(gpu_buffer_set_t* set, const hal_op_t* ops,
                                    size_t count) {
  set->count = 0;
  set->channel_count = 0;
  for (size_t i = 0; i < count; ++i) {
    const hal_op_t* op = &ops[i];
    switch (op->kind) {
      case HAL_OP_BARRIER:
        break;
      case HAL_OP_FILL:
        HAL_RETURN_IF_ERROR(gpu_buffer_set_note(set, op->fill.target));
        break;
      case HAL_OP_UPDATE:
        HAL_RETURN_IF_ERROR(gpu_buffer_set_note(set, op->update.target));
        break;
      case HAL_OP_COPY:
        HAL_RETURN_IF_ERROR(gpu_buffer_set_note(set, op->copy.source));
        HAL_RETURN_IF_ERROR(gpu_buffer_set_note(set, op->copy.target));
        break;
      case HAL_OP_COLLECTIVE:
        HAL_RETURN_IF_ERROR(
            gpu_buffer_set_note_channel(set, op->collective.channel));
        if (op->collective.send) {
          HAL_RETURN_IF_ERROR(gpu_buffer_set_note(set, op->collective.send));
        }
        if (op->collective.recv) {
          HAL_RETURN_IF_ERROR(gpu_buffer_set_note(set, op->collective.recv));
        }
        break;
      case HAL_OP_DISPATCH:
        for (uint32_t b = 0; b < op->dispatch.binding_count; ++b) {
          HAL_RETURN_IF_ERROR(
              gpu_buffer_set_note(set, op->dispatch.bindings[b].buffer));
        }
        break;
    }
  }
  return HAL_OK;
}

void gpu_buffer_set_deinitialize(gpu_buffer_set_t* set) {
  hal_allocator_free(set->allocator, set->items);
  hal_allocator_free(set->allocator, set->channels);
  set->items = NULL;
  set->count = 0;
  set->channels = NULL;
  set->channel_count = 0;
}

void gpu_buffer_set_add_uses(const gpu_buffer_set_t* set, int32_t delta) {
  for (size_t i = 0; i < set->count; ++i) {
    atomic_fetch_add_explicit(&gpu_buffer_cast(set->items[i])->unissued_uses,
                              (uint32_t)delta, memory_order_acq_rel);
  }
}
