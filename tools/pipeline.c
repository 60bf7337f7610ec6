// Copyright 2026 The HAL Authors.
//
// The pipeline, in three stages on one device:
//
//  1. chain: |chain_hops| submissions alternating between the queues, each
//     waiting for the previous hop's value of one timeline semaphore and
//     signaling the next. They are submitted LAST hop first, so every wait
//     is made before its signal exists (wait-before-signal), and nothing
//     runs until the host signals the timeline's first value. Hop i writes
//     a 4-byte marker at slot i of buffer A with an update, fills slot i of
//     buffer B with a pattern, and copies slot i-1 of A into slot i-1 of C
//     (which only holds the right value if hop i-1 finished first).
//  2. fan-out/fan-in: |fan_width| submissions spread over the queues, each
//     waiting for the chain's end and filling its own slice of buffer D;
//     then one submission waits for ALL of their semaphores and copies D
//     into E.
//  3. compute: a SAXPY dispatch (the one kernel source, in whatever format
//     the device loads) waiting for the fan-in; skipped with a note when
//     the build has no kernel image the device can load.
//  4. verification: every buffer is read back and checked on the host.

#include "pipeline.h"

#include <math.h>

#include "kernel_images.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PIPELINE_TIMEOUT_NS (120ll * 1000 * 1000 * 1000)

hal_pipeline_options_t hal_pipeline_default_options(void) {
  hal_pipeline_options_t options = {
      .chain_hops = 64,
      .fan_width = 8,
      .buffer_size = 1u << 20,
  };
  return options;
}

typedef struct pipeline_t {
  hal_device_t* device;
  uint32_t queue_count;
  hal_buffer_t* buffers[5];  // A, B, C, D, E
  hal_semaphore_t* timeline;
  hal_semaphore_t** fan;
  uint32_t fan_count;
  uint32_t submissions;
  // The compute stage (NULL executable: no kernel image for this device).
  hal_executable_t* executable;
  hal_buffer_t* x;
  hal_buffer_t* y;
  hal_semaphore_t* computed;
  float* x_host;
  float* y_host;
} pipeline_t;

#define PIPELINE_SAXPY_COUNT 65536u
#define PIPELINE_SAXPY_A 1.5f

enum { A = 0, B = 1, C = 2, D = 3, E = 4 };

static double pipeline_ms(hal_time_t start, hal_time_t end) {
  return (double)(end - start) / 1e6;
}

// Ends |command_buffer| unless |status| (its recording's) failed, submits
// it, and releases it either way.
static hal_status_t pipeline_submit(pipeline_t* p, hal_status_t status,
                                    uint32_t queue, hal_semaphore_list_t waits,
                                    hal_semaphore_t* signal,
                                    uint64_t signal_value,
                                    hal_command_buffer_t* command_buffer) {
  hal_semaphore_list_t signals = {1, &signal, &signal_value};
  if (!status)
    status = hal_command_buffer_end(command_buffer);
  if (!status) {
    status = hal_device_queue_execute(p->device, queue % p->queue_count, &waits,
                                      &signals, 1, &command_buffer);
  }
  // The queue keeps what it needs (Q3): drop ours at once.
  hal_command_buffer_release(command_buffer);
  if (status == HAL_OK)
    ++p->submissions;
  return status;
}

static hal_status_t pipeline_begin(pipeline_t* p, hal_command_buffer_t** cb) {
  HAL_RETURN_IF_ERROR(hal_device_create_command_buffer(
      p->device, HAL_COMMAND_BUFFER_MODE_ONE_SHOT, cb));
  return hal_command_buffer_begin(*cb);
}

static uint32_t chain_marker(uint32_t hop) {
  return 0xC0DE0000u | hop;
}
static uint32_t chain_pattern(uint32_t hop) {
  return 0x5A5A0000u ^ hop;
}
static uint8_t fan_pattern(uint32_t index) {
  return (uint8_t)(0x10 + index);
}

// Records and submits hop |hop| of the chain.
static hal_status_t pipeline_submit_hop(pipeline_t* p, uint32_t hop) {
  hal_command_buffer_t* cb = NULL;
  HAL_RETURN_IF_ERROR(pipeline_begin(p, &cb));
  uint32_t marker = chain_marker(hop);
  uint32_t pattern = chain_pattern(hop);
  uint64_t slot = (uint64_t)hop * 4;
  hal_status_t status = hal_command_buffer_update_buffer(
      cb, &marker, 0, p->buffers[A], slot, sizeof(marker));
  if (!status) {
    status =
        hal_command_buffer_fill_buffer(cb, p->buffers[B], slot, 4, &pattern, 4);
  }
  if (!status && hop > 0) {
    status = hal_command_buffer_copy_buffer(cb, p->buffers[A], slot - 4,
                                            p->buffers[C], slot - 4, 4);
  }
  hal_semaphore_t* wait = p->timeline;
  uint64_t wait_value = (uint64_t)hop + 1;
  hal_semaphore_list_t waits = {1, &wait, &wait_value};
  return pipeline_submit(p, status, hop, waits, p->timeline, (uint64_t)hop + 2,
                         cb);
}

static hal_status_t pipeline_submit_fan(pipeline_t* p, uint32_t width,
                                        uint64_t chain_end,
                                        uint64_t buffer_size) {
  uint64_t slice = buffer_size / width;
  for (uint32_t i = 0; i < width; ++i) {
    hal_command_buffer_t* cb = NULL;
    HAL_RETURN_IF_ERROR(pipeline_begin(p, &cb));
    uint8_t pattern = fan_pattern(i);
    hal_status_t status = hal_command_buffer_fill_buffer(
        cb, p->buffers[D], slice * i, slice, &pattern, 1);
    hal_semaphore_t* wait = p->timeline;
    hal_semaphore_list_t waits = {1, &wait, &chain_end};
    HAL_RETURN_IF_ERROR(pipeline_submit(p, status, i, waits, p->fan[i], 1, cb));
  }
  // Fan-in: waits for every slice, then copies D to E.
  hal_command_buffer_t* cb = NULL;
  HAL_RETURN_IF_ERROR(pipeline_begin(p, &cb));
  hal_status_t status = hal_command_buffer_copy_buffer(
      cb, p->buffers[D], 0, p->buffers[E], 0, buffer_size);
  uint64_t* ones = calloc(width, sizeof(uint64_t));
  if (!ones && !status)
    status = hal_make_status(HAL_STATUS_RESOURCE_EXHAUSTED, "fan-in list");
  for (uint32_t i = 0; ones && i < width; ++i)
    ones[i] = 1;
  hal_semaphore_list_t waits = {width, p->fan, ones};
  status = pipeline_submit(p, status, 0, waits, p->fan[width], 1, cb);
  free(ones);
  return status;
}

// Stage 3: y = a * x + y over PIPELINE_SAXPY_COUNT floats, one dispatch
// waiting for the fan-in (submitted before anything runs, like the rest).
static hal_status_t pipeline_submit_compute(pipeline_t* p,
                                            hal_semaphore_t* after) {
  hal_status_t status = hal_kernel_create_executable(p->device, &p->executable);
  if (hal_status_code(status) == HAL_STATUS_UNIMPLEMENTED) {
    hal_status_free(status);  // no image for this device: stage skipped
    return HAL_OK;
  }
  HAL_RETURN_IF_ERROR(status);
  const uint64_t bytes = PIPELINE_SAXPY_COUNT * sizeof(float);
  p->x_host = malloc((size_t)bytes);
  p->y_host = malloc((size_t)bytes);
  if (!p->x_host || !p->y_host) {
    return hal_make_status(HAL_STATUS_RESOURCE_EXHAUSTED, "saxpy data");
  }
  for (uint32_t i = 0; i < PIPELINE_SAXPY_COUNT; ++i) {
    p->x_host[i] = (float)(i % 1000) * 0.25f;
    p->y_host[i] = (float)(i % 77) - 10.0f;
  }
  hal_buffer_params_t params = {HAL_MEMORY_TYPE_DEVICE_LOCAL,
                                HAL_BUFFER_USAGE_DEFAULT};
  HAL_RETURN_IF_ERROR(
      hal_device_allocate_buffer(p->device, params, bytes, &p->x));
  HAL_RETURN_IF_ERROR(
      hal_device_allocate_buffer(p->device, params, bytes, &p->y));
  HAL_RETURN_IF_ERROR(hal_buffer_write(p->x, 0, p->x_host, bytes));
  HAL_RETURN_IF_ERROR(hal_buffer_write(p->y, 0, p->y_host, bytes));
  HAL_RETURN_IF_ERROR(hal_device_create_semaphore(p->device, 0, &p->computed));
  hal_command_buffer_t* cb = NULL;
  HAL_RETURN_IF_ERROR(pipeline_begin(p, &cb));
  float a = PIPELINE_SAXPY_A;
  uint32_t constants[2];
  memcpy(&constants[0], &a, sizeof(a));
  constants[1] = PIPELINE_SAXPY_COUNT;
  hal_dispatch_binding_t bindings[2] = {{p->x, 0, HAL_WHOLE_BUFFER},
                                        {p->y, 0, HAL_WHOLE_BUFFER}};
  uint32_t count[3] = {PIPELINE_SAXPY_COUNT / 256, 1, 1};
  uint32_t size[3] = {256, 1, 1};
  status = hal_command_buffer_dispatch(cb, p->executable, HAL_KERNEL_SAXPY,
                                       count, size, constants, 2, bindings, 2);
  uint64_t one = 1;
  hal_semaphore_list_t waits = {1, &after, &one};
  return pipeline_submit(p, status, 1, waits, p->computed, 1, cb);
}

static hal_status_t pipeline_verify_compute(pipeline_t* p,
                                            uint64_t* inout_bytes) {
  if (!p->executable)
    return HAL_OK;
  const uint64_t bytes = PIPELINE_SAXPY_COUNT * sizeof(float);
  float* y = malloc((size_t)bytes);
  if (!y)
    return hal_make_status(HAL_STATUS_RESOURCE_EXHAUSTED, "readback");
  hal_status_t status = hal_buffer_read(p->y, 0, y, bytes);
  for (uint32_t i = 0; i < PIPELINE_SAXPY_COUNT && !status; ++i) {
    float expected = PIPELINE_SAXPY_A * p->x_host[i] + p->y_host[i];
    if (fabsf(y[i] - expected) > 1e-3f * (1.0f + fabsf(expected))) {
      status = hal_make_status(HAL_STATUS_DATA_LOSS,
                               "saxpy: y[%u] = %f, expected %f", i,
                               (double)y[i], (double)expected);
    }
  }
  free(y);
  if (!status)
    *inout_bytes += bytes;
  return status;
}

static hal_status_t pipeline_verify(pipeline_t* p,
                                    const hal_pipeline_options_t* options,
                                    uint64_t* out_bytes) {
  uint64_t size = options->buffer_size;
  uint8_t* bytes = malloc((size_t)size);
  if (!bytes) {
    return hal_make_status(HAL_STATUS_RESOURCE_EXHAUSTED, "readback buffer");
  }
  hal_status_t status = HAL_OK;
  uint64_t verified = 0;
  uint32_t hops = options->chain_hops;
  for (int which = A; which <= C && !status; ++which) {
    status = hal_buffer_read(p->buffers[which], 0, bytes, (uint64_t)hops * 4);
    for (uint32_t hop = 0; hop < hops && !status; ++hop) {
      uint32_t value;
      memcpy(&value, bytes + (uint64_t)hop * 4, 4);
      uint32_t expected = which == B ? chain_pattern(hop) : chain_marker(hop);
      if (which == C && hop == hops - 1)
        continue;  // nothing copies the last
      if (value != expected) {
        status = hal_make_status(HAL_STATUS_DATA_LOSS,
                                 "buffer %c slot %u holds 0x%08x, expected "
                                 "0x%08x",
                                 'A' + which, hop, value, expected);
      }
    }
    verified += (uint64_t)hops * 4;
  }
  for (int which = D; which <= E && !status; ++which) {
    status = hal_buffer_read(p->buffers[which], 0, bytes, size);
    uint64_t slice = size / options->fan_width;
    for (uint64_t i = 0; i < size && !status; ++i) {
      uint8_t expected = fan_pattern((uint32_t)(i / slice));
      if (bytes[i] != expected) {
        status = hal_make_status(HAL_STATUS_DATA_LOSS,
                                 "buffer %c byte %" PRIu64
                                 " holds 0x%02x, "
                                 "expected 0x%02x",
                                 'A' + which, i, bytes[i], expected);
      }
    }
    verified += size;
  }
  free(bytes);
  *out_bytes = verified;
  return status;
}

static void pipeline_release(pipeline_t* p) {
  hal_buffer_release(p->x);
  hal_buffer_release(p->y);
  hal_semaphore_release(p->computed);
  hal_executable_release(p->executable);
  free(p->x_host);
  free(p->y_host);
  for (int i = 0; i < 5; ++i)
    hal_buffer_release(p->buffers[i]);
  hal_semaphore_release(p->timeline);
  for (uint32_t i = 0; i < p->fan_count; ++i)
    hal_semaphore_release(p->fan[i]);
  free(p->fan);
}

hal_status_t hal_pipeline_run(hal_device_t* device,
                              const hal_pipeline_options_t* options,
                              bool verbose, hal_pipeline_result_t* out_result) {
  memset(out_result, 0, sizeof(*out_result));
  if (options->chain_hops < 2 || options->fan_width < 1 ||
      options->buffer_size % (4ull * options->fan_width) ||
      options->buffer_size < (uint64_t)options->chain_hops * 4) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "pipeline options: need >= 2 hops, >= 1 fan, and "
                           "a buffer size that is a multiple of 4 * fan "
                           "width and holds 4 bytes per hop");
  }
  pipeline_t p;
  memset(&p, 0, sizeof(p));
  p.device = device;
  p.queue_count = hal_device_info(device)->queue_count;
  hal_time_t start = hal_time_now();

  hal_buffer_params_t params = {HAL_MEMORY_TYPE_DEVICE_LOCAL,
                                HAL_BUFFER_USAGE_DEFAULT};
  hal_status_t status = HAL_OK;
  for (int i = 0; i < 5 && !status; ++i) {
    status = hal_device_allocate_buffer(device, params, options->buffer_size,
                                        &p.buffers[i]);
  }
  if (!status)
    status = hal_device_create_semaphore(device, 0, &p.timeline);
  p.fan = calloc((size_t)options->fan_width + 1, sizeof(hal_semaphore_t*));
  if (!p.fan && !status) {
    status = hal_make_status(HAL_STATUS_RESOURCE_EXHAUSTED, "semaphores");
  }
  for (uint32_t i = 0; i <= options->fan_width && !status; ++i) {
    status = hal_device_create_semaphore(device, 0, &p.fan[i]);
    if (!status)
      p.fan_count = i + 1;
  }

  // Stage 1: the chain, submitted back to front, then started.
  for (uint32_t hop = options->chain_hops; hop > 0 && !status; --hop) {
    status = pipeline_submit_hop(&p, hop - 1);
  }
  uint64_t chain_end = (uint64_t)options->chain_hops + 1;
  // Stage 2 is submitted before the chain even starts: more
  // wait-before-signal.
  if (!status) {
    status = pipeline_submit_fan(&p, options->fan_width, chain_end,
                                 options->buffer_size);
  }
  // Stage 3, compute, waits for the fan-in.
  if (!status)
    status = pipeline_submit_compute(&p, p.fan[options->fan_width]);
  hal_time_t chain_start = hal_time_now();
  if (!status)
    status = hal_semaphore_signal(p.timeline, 1);
  if (!status) {
    status = hal_semaphore_wait(p.timeline, chain_end,
                                hal_make_timeout_ns(PIPELINE_TIMEOUT_NS));
  }
  hal_time_t chain_done = hal_time_now();
  if (!status) {
    status = hal_semaphore_wait(p.fan[options->fan_width], 1,
                                hal_make_timeout_ns(PIPELINE_TIMEOUT_NS));
  }
  hal_time_t fan_done = hal_time_now();
  if (!status && p.computed) {
    status = hal_semaphore_wait(p.computed, 1,
                                hal_make_timeout_ns(PIPELINE_TIMEOUT_NS));
  }
  hal_time_t compute_done = hal_time_now();
  if (!status && verbose) {
    // Host-observed: from the first submission to the host waking on the
    // stage's last signal (queueing, device work and wake-up together).
    printf("  stage chain:   %u hops over %u queue(s), %.3f ms host time\n",
           options->chain_hops, p.queue_count,
           pipeline_ms(chain_start, chain_done));
    printf("  stage fan:     %u-way fan-out + fan-in, %.3f ms host time\n",
           options->fan_width, pipeline_ms(chain_done, fan_done));
  }

  if (!status && verbose) {
    if (p.executable) {
      printf(
          "  stage compute: saxpy over %u floats (%s kernel), %.3f ms host "
          "time\n",
          PIPELINE_SAXPY_COUNT, hal_kernel_image_for(device, NULL)->format,
          pipeline_ms(fan_done, compute_done));
    } else {
      printf("  stage compute: skipped: no kernel image this device loads\n");
    }
  }

  // Stage 4: verification.
  uint64_t verified = 0;
  if (!status)
    status = pipeline_verify(&p, options, &verified);
  if (!status)
    status = pipeline_verify_compute(&p, &verified);
  hal_time_t end = hal_time_now();
  if (!status && verbose) {
    printf("  stage verify:  %" PRIu64 " bytes checked on the host, %.3f ms\n",
           verified, pipeline_ms(compute_done, end));
  }
  out_result->submissions = p.submissions;
  out_result->bytes_verified = verified;
  out_result->chain_ms = pipeline_ms(chain_start, chain_done);
  out_result->fan_ms = pipeline_ms(chain_done, fan_done);
  out_result->compute_ms =
      p.executable ? pipeline_ms(fan_done, compute_done) : 0.0;
  out_result->total_ms = pipeline_ms(start, end);
  pipeline_release(&p);
  return status;
}

hal_status_t hal_pipeline_probe(hal_device_t* device, uint64_t size,
                                hal_timeout_t timeout) {
  hal_buffer_params_t params = {HAL_MEMORY_TYPE_DEVICE_LOCAL,
                                HAL_BUFFER_USAGE_DEFAULT};
  hal_buffer_t* a = NULL;
  hal_buffer_t* b = NULL;
  hal_semaphore_t* done = NULL;
  uint8_t* bytes = malloc(size ? (size_t)size : 1);
  hal_status_t status =
      bytes ? HAL_OK
            : hal_make_status(HAL_STATUS_RESOURCE_EXHAUSTED, "probe readback");
  if (!status)
    status = hal_device_allocate_buffer(device, params, size, &a);
  if (!status)
    status = hal_device_allocate_buffer(device, params, size, &b);
  if (!status)
    status = hal_device_create_semaphore(device, 0, &done);
  uint32_t queues = hal_device_info(device)->queue_count;
  for (uint32_t q = 0; q < queues && !status; ++q) {
    uint8_t pattern = (uint8_t)(0xA5 + q);
    hal_command_buffer_t* cb = NULL;
    status = hal_device_create_command_buffer(
        device, HAL_COMMAND_BUFFER_MODE_ONE_SHOT, &cb);
    if (!status)
      status = hal_command_buffer_begin(cb);
    if (!status)
      status = hal_command_buffer_fill_buffer(cb, a, 0, size, &pattern, 1);
    if (!status)
      status = hal_command_buffer_execution_barrier(cb);
    if (!status)
      status = hal_command_buffer_copy_buffer(cb, a, 0, b, 0, size);
    if (!status)
      status = hal_command_buffer_end(cb);
    uint64_t value = q + 1;
    if (!status) {
      hal_semaphore_list_t none = {0, NULL, NULL};
      hal_semaphore_list_t signals = {1, &done, &value};
      status = hal_device_queue_execute(device, q, &none, &signals, 1, &cb);
    }
    hal_command_buffer_release(cb);
    if (!status)
      status = hal_semaphore_wait(done, value, timeout);
    if (!status)
      status = hal_buffer_read(b, 0, bytes, size);
    for (uint64_t i = 0; i < size && !status; ++i) {
      if (bytes[i] != pattern) {
        status = hal_make_status(HAL_STATUS_DATA_LOSS,
                                 "probe on queue %u: byte %" PRIu64
                                 " is 0x%02x, the fill wrote "
                                 "0x%02x",
                                 q, i, bytes[i], pattern);
      }
    }
  }
  hal_semaphore_release(done);
  hal_buffer_release(a);
  hal_buffer_release(b);
  free(bytes);
  return status;
}
