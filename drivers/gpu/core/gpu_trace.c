// Copyright 2026 The HAL Authors.
//
// HAL_TRACE's device spans: what each submission did on the device, timed
// by the device itself.
//
// With tracing on and a runtime that times events, the WORKER records a
// timed native event before a submission's work, after each of its command
// buffers and, on the stream strategy, after each op. When the device is
// done with the submission (gpu_queue_release_payload), the events' times
// become complete events on the queue's device track ("cuda_stream:0:q1
// device"): the submission, its command buffers nested in it, their ops
// nested in those (a graph launch is one command-buffer span).
//
// One clock: device times are mapped to host time (hal_time_now) through a
// calibration pair taken at device creation: a timed event recorded on an
// idle stream and synchronized, paired with the midpoint of the host times
// around the two calls. Each event's time is the pair's host time plus the
// vendor's elapsed time from the pair's event, a float of milliseconds:
// its resolution is about 1 us per 16 s of the device's age. Spans inside
// one submission are placed from the submission's first event, so their
// lengths keep the vendor's own resolution.
//
// Tracing never fails a submission. A span whose event could not be made
// or recorded (out of memory, a vendor error) is counted, and the device's
// track ends with the count (a "device spans dropped" instant when it is
// not 0). Work that failed or never ran has no device spans: its events
// never completed, and the submission's own track says how it ended.

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "gpu_core.h"
#include "hal/time.h"
#include "hal/trace.h"

#define GPU_TRACE_NO_MARK UINT32_MAX
// Timed events a device keeps for reuse; more are destroyed.
#define GPU_TRACE_FREE_EVENTS_MAX 256

typedef struct gpu_trace_span_t {
  uint32_t begin;  // marks
  uint32_t end;
  const char* name;  // a literal
  uint32_t index;    // the command buffer's or op's index in its list
  uint8_t level;     // 0 submission, 1 command buffer, 2 op
} gpu_trace_span_t;

struct gpu_trace_spans_t {
  gpu_event_t* marks;
  uint32_t mark_count;
  uint32_t mark_capacity;
  gpu_trace_span_t* spans;
  uint32_t span_count;
  uint32_t span_capacity;
  uint64_t submission;  // its trace id (hal_trace_issuing_submission)
  uint32_t dropped;     // spans not recorded (a mark failed)
  bool last_failed;     // the last gpu_trace_mark() made no mark
};

// The device records no spans, and its track says why. A failure met on
// the way is the device's as for any other call (a loss loses it), but
// tracing does not fail the device's creation.
static void gpu_trace_without_spans(gpu_device_t* device, hal_status_t status,
                                    const char* doing) {
  char reason[HAL_TRACE_STATUS_ARGS];
  hal_trace_json_text(reason, sizeof(reason), hal_status_message(status));
  char args[HAL_TRACE_STATUS_ARGS + 96];
  snprintf(args, sizeof(args), "\"reason\": \"%s failed: %s\"", doing, reason);
  hal_trace_instant(device->queues[0].trace_device_track, "device",
                    "no device spans", args);
  hal_status_free(gpu_device_note(device, status));
}

void gpu_device_trace_initialize(gpu_device_t* device) {
  if (!hal_trace_enabled())
    return;
  gpu_adapter_t* adapter = device->adapter;
  for (uint32_t i = 0; i < device->queue_count; ++i) {
    char name[HAL_DRIVER_NAME_MAX + 40];
    snprintf(name, sizeof(name), "%s:%u:q%u device", device->base.driver->name,
             device->base.info.index, i);
    device->queues[i].trace_device_track = hal_trace_track(name);
  }
  if (!(adapter->info.capabilities & GPU_ADAPTER_CAP_EVENT_TIMING)) {
    hal_trace_instant(device->queues[0].trace_device_track, "device",
                      "no device spans",
                      "\"reason\": \"the runtime does not time events\"");
    return;
  }
  // The narrowest of a few windows, each its own event: a host thread that
  // wakes late from the synchronize widens a window, never shifts it.
  gpu_event_t epoch = NULL;
  hal_time_t best_before = 0;
  hal_time_t best_window = INT64_MAX;
  hal_status_t status = HAL_OK;
  for (int attempt = 0; attempt < 5 && best_window > 20 * 1000; ++attempt) {
    gpu_event_t event = NULL;
    status = adapter->ops->timed_event_create(adapter, &event);
    hal_time_t before = hal_time_now();
    if (status == HAL_OK) {
      status =
          adapter->ops->event_record(adapter, event, device->queues[0].stream);
    }
    if (status == HAL_OK)
      status = adapter->ops->event_synchronize(adapter, event);
    hal_time_t window = hal_time_now() - before;
    if (status != HAL_OK || window >= best_window) {
      gpu_device_note_release(device,
                              adapter->ops->event_destroy(adapter, event));
      if (status != HAL_OK)
        break;
      continue;
    }
    gpu_device_note_release(device,
                            adapter->ops->event_destroy(adapter, epoch));
    epoch = event;
    best_window = window;
    best_before = before;
  }
  if (status == HAL_OK) {
    device->trace_free_events =
        calloc(GPU_TRACE_FREE_EVENTS_MAX, sizeof(gpu_event_t));
    if (!device->trace_free_events) {
      status = hal_make_status(HAL_STATUS_RESOURCE_EXHAUSTED,
                               "out of memory for the device's timed events");
    }
  }
  if (status != HAL_OK) {
    gpu_device_note_release(device,
                            adapter->ops->event_destroy(adapter, epoch));
    gpu_trace_without_spans(device, status, "calibrating the device's clock");
    return;
  }
  pthread_mutex_init(&device->trace_mutex, NULL);
  device->trace_epoch = epoch;
  device->trace_epoch_ns = best_before + best_window / 2;
  char args[96];
  snprintf(args, sizeof(args), "\"uncertainty_us\": %.3f",
           (double)best_window / 2000.0);
  for (uint32_t i = 0; i < device->queue_count; ++i) {
    hal_trace_instant(device->queues[i].trace_device_track, "device",
                      "clock calibration", args);
  }
}

void gpu_device_trace_deinitialize(gpu_device_t* device) {
  if (!device->trace_epoch)
    return;
  uint64_t dropped =
      atomic_load_explicit(&device->trace_dropped_spans, memory_order_relaxed);
  if (dropped) {
    char args[64];
    snprintf(args, sizeof(args), "\"spans\": %" PRIu64, dropped);
    hal_trace_instant(device->queues[0].trace_device_track, "device",
                      "device spans dropped", args);
  }
  for (uint32_t i = 0; i < device->trace_free_count; ++i)
    gpu_device_note_release(device,
                            device->adapter->ops->event_destroy(
                                device->adapter, device->trace_free_events[i]));
  free(device->trace_free_events);
  pthread_mutex_destroy(&device->trace_mutex);
  gpu_device_note_release(device, device->adapter->ops->event_destroy(
                                      device->adapter, device->trace_epoch));
  device->trace_epoch = NULL;
}

// A timed event for a mark: a reused one, or a new one.
static hal_status_t gpu_trace_event_acquire(gpu_device_t* device,
                                            gpu_event_t* out_event) {
  pthread_mutex_lock(&device->trace_mutex);
  *out_event = device->trace_free_count
                   ? device->trace_free_events[--device->trace_free_count]
                   : NULL;
  pthread_mutex_unlock(&device->trace_mutex);
  if (*out_event)
    return HAL_OK;
  return device->adapter->ops->timed_event_create(device->adapter, out_event);
}

// An event whose record is done (or never made), back for reuse.
static void gpu_trace_event_release(gpu_device_t* device, gpu_event_t event) {
  pthread_mutex_lock(&device->trace_mutex);
  bool kept = device->trace_free_count < GPU_TRACE_FREE_EVENTS_MAX;
  if (kept)
    device->trace_free_events[device->trace_free_count++] = event;
  pthread_mutex_unlock(&device->trace_mutex);
  if (!kept)
    gpu_device_note_release(
        device, device->adapter->ops->event_destroy(device->adapter, event));
}

// Spans lost: the device's count ends its track at release; the trace's
// own is in every flush, the one at the exit of a program that never
// released the device included.
static void gpu_trace_count_dropped(gpu_device_t* device, uint64_t count) {
  atomic_fetch_add_explicit(&device->trace_dropped_spans, count,
                            memory_order_relaxed);
  hal_trace_count_dropped_spans(count);
}

gpu_trace_spans_t* gpu_trace_spans_create(gpu_queue_t* queue) {
  if (!queue->device->trace_epoch)
    return NULL;
  gpu_trace_spans_t* spans = calloc(1, sizeof(*spans));
  if (!spans) {
    gpu_trace_count_dropped(queue->device, 1);
    return NULL;
  }
  spans->submission = hal_trace_issuing_submission();
  return spans;
}

// Grows |*array| of |*capacity| elements of |size| bytes to hold one more.
static bool gpu_trace_reserve(void** array, uint32_t count, uint32_t* capacity,
                              size_t size) {
  if (count < *capacity)
    return true;
  uint32_t grown = *capacity ? *capacity * 2 : 8;
  void* resized = realloc(*array, (size_t)grown * size);
  if (!resized)
    return false;
  *array = resized;
  *capacity = grown;
  return true;
}

uint32_t gpu_trace_mark(gpu_queue_t* queue, gpu_trace_spans_t* spans) {
  if (!spans)
    return GPU_TRACE_NO_MARK;
  gpu_adapter_t* adapter = queue->device->adapter;
  spans->last_failed = true;
  if (!gpu_trace_reserve((void**)&spans->marks, spans->mark_count,
                         &spans->mark_capacity, sizeof(gpu_event_t))) {
    return GPU_TRACE_NO_MARK;
  }
  gpu_event_t event = NULL;
  hal_status_t status = gpu_trace_event_acquire(queue->device, &event);
  if (status == HAL_OK)
    status = adapter->ops->event_record(adapter, event, queue->stream);
  if (status != HAL_OK) {
    // A mark is best effort, but a loss it meets is the device's (Q5).
    hal_status_free(gpu_device_note(queue->device, status));
    if (event)  // never recorded: as good as new
      gpu_trace_event_release(queue->device, event);
    return GPU_TRACE_NO_MARK;
  }
  spans->marks[spans->mark_count] = event;
  spans->last_failed = false;
  return spans->mark_count++;
}

// After a failed mark, the span that would begin there has no begin: an
// older mark would make it cover what came before.
uint32_t gpu_trace_last_mark(const gpu_trace_spans_t* spans) {
  return spans && spans->mark_count && !spans->last_failed
             ? spans->mark_count - 1
             : GPU_TRACE_NO_MARK;
}

void gpu_trace_span(gpu_trace_spans_t* spans, uint32_t begin, uint32_t end,
                    uint8_t level, const char* name, uint32_t index) {
  if (!spans)
    return;
  if (begin == GPU_TRACE_NO_MARK || end == GPU_TRACE_NO_MARK ||
      !gpu_trace_reserve((void**)&spans->spans, spans->span_count,
                         &spans->span_capacity, sizeof(gpu_trace_span_t))) {
    ++spans->dropped;
    return;
  }
  spans->spans[spans->span_count++] = (gpu_trace_span_t){
      .begin = begin, .end = end, .name = name, .index = index, .level = level};
}

void gpu_trace_spans_discard(gpu_trace_spans_t* spans) {
  if (spans)
    spans->span_count = 0;
}

// The host time of each mark (0: not known). Marks follow each other on
// one stream, so a time earlier than the one before it is the float's
// rounding and is clamped.
static void gpu_trace_mark_times(gpu_queue_t* queue,
                                 const gpu_trace_spans_t* spans,
                                 uint64_t* times) {
  gpu_device_t* device = queue->device;
  gpu_adapter_t* adapter = device->adapter;
  float base_ms = 0.0f;
  hal_status_t status = spans->mark_count ? adapter->ops->event_elapsed_ms(
                                                adapter, device->trace_epoch,
                                                spans->marks[0], &base_ms)
                                          : HAL_OK;
  uint64_t base = 0;
  if (status == HAL_OK && spans->mark_count) {
    base = (uint64_t)((int64_t)device->trace_epoch_ns +
                      (int64_t)((double)base_ms * 1e6));
  }
  hal_status_free(gpu_device_note(device, status));
  uint64_t previous = 0;
  for (uint32_t i = 0; i < spans->mark_count; ++i) {
    times[i] = 0;
    float ms = 0.0f;
    if (!base)
      continue;
    status = i == 0 ? HAL_OK
                    : adapter->ops->event_elapsed_ms(adapter, spans->marks[0],
                                                     spans->marks[i], &ms);
    if (status != HAL_OK) {
      hal_status_free(gpu_device_note(device, status));
      continue;
    }
    uint64_t time = base + (uint64_t)((double)(ms > 0.0f ? ms : 0.0f) * 1e6);
    times[i] = time < previous ? previous : time;
    previous = times[i];
  }
}

void gpu_trace_spans_finish(gpu_queue_t* queue, gpu_trace_spans_t* spans,
                            bool completed) {
  if (!spans)
    return;
  // Work that did not complete OK has no device spans, whatever its events
  // say (it may have run, then failed, or run after a failed signaler).
  if (!completed)
    gpu_trace_spans_discard(spans);
  gpu_device_t* device = queue->device;
  uint32_t dropped = spans->dropped;
  // No span left, no time to read (nor a vendor call to make).
  uint64_t* times = spans->span_count && spans->mark_count
                        ? calloc(spans->mark_count, sizeof(uint64_t))
                        : NULL;
  hal_status_t status = times ? gpu_device_make_current(device) : HAL_OK;
  if (times && status == HAL_OK) {
    gpu_trace_mark_times(queue, spans, times);
    for (uint32_t i = 0; i < spans->span_count; ++i) {
      const gpu_trace_span_t* span = &spans->spans[i];
      // The submission completed, but a time could not be read: a span
      // lost, counted like one whose event could not be recorded.
      if (!times[span->begin] || !times[span->end]) {
        ++dropped;
        continue;
      }
      char args[96];
      if (span->level == 0) {
        snprintf(args, sizeof(args),
                 "\"queue\": %u, \"submission\": \"0x%" PRIx64 "\"",
                 queue->index, spans->submission);
      } else {
        snprintf(args, sizeof(args), "\"%s\": %u",
                 span->level == 1 ? "command_buffer" : "op", span->index);
      }
      hal_trace_span(queue->trace_device_track, "device", span->name,
                     times[span->begin], times[span->end] - times[span->begin],
                     args);
    }
  } else {
    hal_status_free(gpu_device_note(device, status));
    dropped += spans->span_count;
  }
  free(times);
  // The device is done with the submission: every record made is done.
  for (uint32_t i = 0; i < spans->mark_count; ++i)
    gpu_trace_event_release(device, spans->marks[i]);
  if (dropped)
    gpu_trace_count_dropped(device, dropped);
  free(spans->marks);
  free(spans->spans);
  free(spans);
}
