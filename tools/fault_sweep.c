// Copyright 2026 The HAL Authors.
//
// hal-fault-sweep-workload: the small programs tools/fault_sweep.py runs
// under injected vendor faults (docs/testing.md), through the public API
// only.
//
//   hal-fault-sweep-workload --driver=NAME --workload=W
//
// W is one of
//   pipeline  hal-run's pipeline (tools/pipeline.c, default options);
//   reuse     one REUSABLE command buffer submitted several times in a
//             wait-before-signal chain across the queues, re-recorded with
//             the same topology (a graph driver updates its executable) and
//             with another (it rebuilds), every result read back;
//   dispatch  the SAXPY kernel, one dispatch, read back;
//   file      a file in host memory read into a buffer and the buffer
//             written to a descriptor's file, in 16 KiB chunks
//             (HAL_FILE_CHUNK_BYTES), the second waiting for the first,
//             the file's bytes read back.
//
// Then, whatever the workload did, an independent submission on the same
// device (new buffers, new semaphore, each queue): after a vendor error it
// must still work; after a device loss it must fail, not hang.
//
// Prints, on stdout, one line each:
//   workload: ok | workload: failed: CODE: message
//   after: ok | after: failed: CODE: message | after: skipped (no device)
// and exits 0 (both ok), 1 (the workload failed, the independent
// submission did not), 3 (the independent submission failed), 2 (usage).
// A status is printed on one line (line breaks become " | ").

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hal/api.h"
#include "kernel_images.h"
#include "pipeline.h"

// Every wait is bounded: a hang becomes DEADLINE_EXCEEDED, which the sweep
// reports as one.
#define SWEEP_TIMEOUT_NS (60ll * 1000 * 1000 * 1000)
#define SWEEP_BYTES 4096u

static hal_status_t sweep_wait(hal_semaphore_t* semaphore, uint64_t value) {
  return hal_semaphore_wait(semaphore, value,
                            hal_make_timeout_ns(SWEEP_TIMEOUT_NS));
}

static hal_status_t sweep_submit(hal_device_t* device, uint32_t queue,
                                 hal_semaphore_t* wait, uint64_t wait_value,
                                 hal_semaphore_t* signal, uint64_t signal_value,
                                 hal_command_buffer_t* command_buffer) {
  hal_semaphore_list_t waits = {wait ? 1 : 0, &wait, &wait_value};
  hal_semaphore_list_t signals = {1, &signal, &signal_value};
  uint32_t queues = hal_device_info(device)->queue_count;
  return hal_device_queue_execute(device, queue % queues, &waits, &signals, 1,
                                  &command_buffer);
}

static hal_status_t sweep_check_bytes(hal_buffer_t* buffer,
                                      const uint8_t* expected, size_t size,
                                      const char* what) {
  uint8_t* bytes = malloc(size);
  if (!bytes)
    return hal_make_status(HAL_STATUS_RESOURCE_EXHAUSTED, "readback");
  hal_status_t status = hal_buffer_read(buffer, 0, bytes, size);
  for (size_t i = 0; i < size && !status; ++i) {
    if (bytes[i] != expected[i]) {
      status = hal_make_status(HAL_STATUS_DATA_LOSS,
                               "%s: byte %zu holds 0x%02x, expected 0x%02x",
                               what, i, bytes[i], expected[i]);
    }
  }
  free(bytes);
  return status;
}

// ---------------------------------------------------------------- reuse

// Records fill(src, pattern) | update(src[0..16), bytes) | copy(src -> dst)
// and, when |second_copy|, copy(src -> dst2) (another topology).
static hal_status_t reuse_record(hal_command_buffer_t* cb, hal_buffer_t* src,
                                 hal_buffer_t* dst, hal_buffer_t* dst2,
                                 uint32_t pattern, const uint8_t* head,
                                 bool second_copy) {
  HAL_RETURN_IF_ERROR(hal_command_buffer_begin(cb));
  HAL_RETURN_IF_ERROR(
      hal_command_buffer_fill_buffer(cb, src, 0, SWEEP_BYTES, &pattern, 4));
  HAL_RETURN_IF_ERROR(hal_command_buffer_execution_barrier(cb));
  HAL_RETURN_IF_ERROR(
      hal_command_buffer_update_buffer(cb, head, 0, src, 0, 16));
  HAL_RETURN_IF_ERROR(hal_command_buffer_execution_barrier(cb));
  HAL_RETURN_IF_ERROR(
      hal_command_buffer_copy_buffer(cb, src, 0, dst, 0, SWEEP_BYTES));
  if (second_copy) {
    HAL_RETURN_IF_ERROR(
        hal_command_buffer_copy_buffer(cb, src, 0, dst2, 0, SWEEP_BYTES));
  }
  return hal_command_buffer_end(cb);
}

static void reuse_expected(uint8_t* out, uint32_t pattern,
                           const uint8_t* head) {
  for (size_t i = 0; i < SWEEP_BYTES; i += 4)
    memcpy(out + i, &pattern, 4);
  memcpy(out, head, 16);
}

// Submits |cb| |count| times, each waiting for the previous one's value of
// |timeline| (all submitted before the first runs: the first waits for a
// value the host signals last), alternating queues; waits for the last.
static hal_status_t reuse_run(hal_device_t* device, hal_semaphore_t* timeline,
                              uint64_t* value, hal_command_buffer_t* cb,
                              uint32_t count) {
  uint64_t start = *value;
  for (uint32_t i = 0; i < count; ++i) {
    HAL_RETURN_IF_ERROR(sweep_submit(device, i, timeline, start + 1 + i,
                                     timeline, start + 2 + i, cb));
  }
  HAL_RETURN_IF_ERROR(hal_semaphore_signal(timeline, start + 1));
  *value = start + 1 + count;
  return sweep_wait(timeline, *value);
}

static hal_status_t workload_reuse(hal_device_t* device) {
  hal_buffer_params_t params = {HAL_MEMORY_TYPE_DEVICE_LOCAL,
                                HAL_BUFFER_USAGE_DEFAULT};
  hal_buffer_t* buffers[3] = {NULL, NULL, NULL};
  hal_semaphore_t* timeline = NULL;
  hal_command_buffer_t* cb = NULL;
  uint8_t* expected = malloc(SWEEP_BYTES);
  hal_status_t status =
      expected ? HAL_OK
               : hal_make_status(HAL_STATUS_RESOURCE_EXHAUSTED, "reuse");
  for (int i = 0; i < 3 && !status; ++i) {
    status =
        hal_device_allocate_buffer(device, params, SWEEP_BYTES, &buffers[i]);
  }
  if (!status)
    status = hal_device_create_semaphore(device, 0, &timeline);
  if (!status) {
    status = hal_device_create_command_buffer(
        device, HAL_COMMAND_BUFFER_MODE_REUSABLE, &cb);
  }
  uint64_t value = 0;
  // Three recordings: the first, one of the same topology (an update), one
  // of another (a rebuild); each submitted several times.
  static const struct {
    uint32_t pattern;
    bool second_copy;
    uint32_t submits;
  } rounds[3] = {
      {0xA1B2C3D4u, false, 4},
      {0x0F1E2D3Cu, false, 2},
      {0x55AA55AAu, true, 2},
  };
  for (int r = 0; r < 3 && !status; ++r) {
    uint8_t head[16];
    for (int i = 0; i < 16; ++i)
      head[i] = (uint8_t)(0x40 + 16 * r + i);
    status = reuse_record(cb, buffers[0], buffers[1], buffers[2],
                          rounds[r].pattern, head, rounds[r].second_copy);
    if (!status)
      status = reuse_run(device, timeline, &value, cb, rounds[r].submits);
    if (!status) {
      reuse_expected(expected, rounds[r].pattern, head);
      status = sweep_check_bytes(buffers[1], expected, SWEEP_BYTES, "reuse");
    }
    if (!status && rounds[r].second_copy) {
      status =
          sweep_check_bytes(buffers[2], expected, SWEEP_BYTES, "reuse copy");
    }
  }
  hal_command_buffer_release(cb);
  hal_semaphore_release(timeline);
  for (int i = 0; i < 3; ++i)
    hal_buffer_release(buffers[i]);
  free(expected);
  return status;
}

// ------------------------------------------------------------- dispatch

#define SAXPY_COUNT 4096u
#define SAXPY_A 2.5f

static hal_status_t workload_dispatch(hal_device_t* device) {
  hal_executable_t* executable = NULL;
  hal_buffer_t* x = NULL;
  hal_buffer_t* y = NULL;
  hal_semaphore_t* done = NULL;
  hal_command_buffer_t* cb = NULL;
  const size_t bytes = SAXPY_COUNT * sizeof(float);
  float* xs = malloc(bytes);
  float* ys = malloc(bytes);
  float* out = malloc(bytes);
  hal_status_t status =
      xs && ys && out
          ? HAL_OK
          : hal_make_status(HAL_STATUS_RESOURCE_EXHAUSTED, "dispatch");
  for (uint32_t i = 0; i < SAXPY_COUNT && !status; ++i) {
    xs[i] = (float)(i % 97) * 0.5f;
    ys[i] = (float)(i % 13) - 4.0f;
  }
  if (!status)
    status = hal_kernel_create_executable(device, &executable);
  hal_buffer_params_t params = {HAL_MEMORY_TYPE_DEVICE_LOCAL,
                                HAL_BUFFER_USAGE_DEFAULT};
  if (!status)
    status = hal_device_allocate_buffer(device, params, bytes, &x);
  if (!status)
    status = hal_device_allocate_buffer(device, params, bytes, &y);
  if (!status)
    status = hal_buffer_write(x, 0, xs, bytes);
  if (!status)
    status = hal_buffer_write(y, 0, ys, bytes);
  if (!status)
    status = hal_device_create_semaphore(device, 0, &done);
  if (!status) {
    status = hal_device_create_command_buffer(
        device, HAL_COMMAND_BUFFER_MODE_ONE_SHOT, &cb);
  }
  if (!status)
    status = hal_command_buffer_begin(cb);
  if (!status) {
    float a = SAXPY_A;
    uint32_t constants[2];
    memcpy(&constants[0], &a, sizeof(a));
    constants[1] = SAXPY_COUNT;
    hal_dispatch_binding_t bindings[2] = {{x, 0, HAL_WHOLE_BUFFER},
                                          {y, 0, HAL_WHOLE_BUFFER}};
    uint32_t count[3] = {SAXPY_COUNT / 256, 1, 1};
    uint32_t size[3] = {256, 1, 1};
    status =
        hal_command_buffer_dispatch(cb, executable, HAL_KERNEL_SAXPY, count,
                                    size, constants, 2, bindings, 2);
  }
  if (!status)
    status = hal_command_buffer_end(cb);
  if (!status)
    status = sweep_submit(device, 1, NULL, 0, done, 1, cb);
  if (!status)
    status = sweep_wait(done, 1);
  if (!status)
    status = hal_buffer_read(y, 0, out, bytes);
  for (uint32_t i = 0; i < SAXPY_COUNT && !status; ++i) {
    float want = SAXPY_A * xs[i] + ys[i];
    if (fabsf(out[i] - want) > 1e-3f * (1.0f + fabsf(want))) {
      status = hal_make_status(HAL_STATUS_DATA_LOSS,
                               "saxpy: y[%u] = %f, expected %f", i,
                               (double)out[i], (double)want);
    }
  }
  hal_command_buffer_release(cb);
  hal_semaphore_release(done);
  hal_buffer_release(x);
  hal_buffer_release(y);
  hal_executable_release(executable);
  free(xs);
  free(ys);
  free(out);
  return status;
}

// ----------------------------------------------------------------- file

#define FILE_BYTES (64u * 1024u)

static hal_status_t workload_file(hal_device_t* device) {
  hal_buffer_t* buffer = NULL;
  // One semaphore per transfer: a failure the other transfer puts on a
  // shared one says nothing of when this one is done with |bytes|.
  hal_semaphore_t* read_done = NULL;
  hal_semaphore_t* done = NULL;
  hal_file_t* source = NULL;
  hal_file_t* target = NULL;
  uint8_t* bytes = malloc(FILE_BYTES);
  uint8_t* written = malloc(FILE_BYTES);
  FILE* stream = tmpfile();
  hal_status_t status =
      bytes && written && stream
          ? HAL_OK
          : hal_make_status(HAL_STATUS_RESOURCE_EXHAUSTED, "file workload");
  for (uint32_t i = 0; i < FILE_BYTES && !status; ++i)
    bytes[i] = (uint8_t)(i * 7u + i / 251u);
  if (!status) {
    status =
        hal_file_from_memory(bytes, FILE_BYTES, HAL_FILE_ACCESS_READ, &source);
  }
  if (!status) {
    status =
        hal_file_from_fd(fileno(stream), HAL_FILE_ACCESS_READ_WRITE, &target);
  }
  hal_buffer_params_t params = {HAL_MEMORY_TYPE_DEVICE_LOCAL,
                                HAL_BUFFER_USAGE_DEFAULT};
  if (!status)
    status = hal_device_allocate_buffer(device, params, FILE_BYTES, &buffer);
  if (!status)
    status = hal_device_create_semaphore(device, 0, &read_done);
  if (!status)
    status = hal_device_create_semaphore(device, 0, &done);
  uint32_t queues = status ? 1 : hal_device_info(device)->queue_count;
  uint64_t one = 1;
  hal_semaphore_list_t first = {1, &read_done, &one};
  hal_semaphore_list_t second = {1, &done, &one};
  bool read_submitted = false, write_submitted = false;
  if (!status) {
    status = hal_device_queue_read(device, 0, NULL, &first, source, 0, buffer,
                                   0, FILE_BYTES);
    read_submitted = !status;
  }
  if (!status) {
    status = hal_device_queue_write(device, 1 % queues, &first, &second, buffer,
                                    0, target, 0, FILE_BYTES);
    write_submitted = !status;
  }
  if (!status)
    status = sweep_wait(done, 1);
  // The host memory is borrowed: whatever failed, it is freed only once
  // every transfer submitted is done with it (reached or failed).
  if (status && read_submitted)
    hal_status_ignore(sweep_wait(read_done, 1));
  if (status && write_submitted)
    hal_status_ignore(sweep_wait(done, 1));
  if (!status &&
      pread(fileno(stream), written, FILE_BYTES, 0) != (ssize_t)FILE_BYTES) {
    status = hal_make_status(HAL_STATUS_DATA_LOSS, "the written file is short");
  }
  for (uint32_t i = 0; i < FILE_BYTES && !status; ++i) {
    if (written[i] != bytes[i]) {
      status = hal_make_status(HAL_STATUS_DATA_LOSS,
                               "file byte %u holds 0x%02x, expected 0x%02x", i,
                               written[i], bytes[i]);
    }
  }
  hal_semaphore_release(done);
  hal_semaphore_release(read_done);
  hal_buffer_release(buffer);
  hal_file_release(target);
  hal_file_release(source);
  if (stream)
    fclose(stream);
  free(written);
  free(bytes);
  return status;
}

// ------------------------------------------------------------- pipeline

static hal_status_t workload_pipeline(hal_device_t* device) {
  hal_pipeline_options_t options = hal_pipeline_default_options();
  hal_pipeline_result_t result;
  return hal_pipeline_run(device, &options, false, &result);
}

// ---------------------------------------------------------------- after

// Independent of everything the workload made: a fill and a copy on each
// queue, each waited for and read back.
static hal_status_t after_check(hal_device_t* device) {
  return hal_pipeline_probe(device, SWEEP_BYTES,
                            hal_make_timeout_ns(SWEEP_TIMEOUT_NS));
}

// ----------------------------------------------------------------- main

// Prints "PREFIX: ok" or "PREFIX: failed: STATUS" (one line); frees it.
static void print_status(const char* prefix, hal_status_t status) {
  if (!status) {
    printf("%s: ok\n", prefix);
    return;
  }
  size_t length = hal_status_format(status, NULL, 0);
  char* text = malloc(length + 1);
  if (text) {
    hal_status_format(status, text, length + 1);
    printf("%s: failed: ", prefix);
    for (const char* c = text; *c; ++c) {
      if (*c == '\n')
        fputs(" | ", stdout);
      else
        putchar(*c);
    }
    putchar('\n');
    free(text);
  } else {
    printf("%s: failed: %s\n", prefix,
           hal_status_code_string(hal_status_code(status)));
  }
  hal_status_free(status);
}

static void usage(FILE* stream) {
  fprintf(stream,
          "usage: hal-fault-sweep-workload --driver=NAME "
          "--workload=pipeline|reuse|dispatch|file\n"
          "  the driver is found through HAL_DRIVER_PATH and loads the "
          "runtime\n"
          "  HAL_CUDA_LIBRARY / HAL_HIP_LIBRARY name (see "
          "docs/testing.md)\n");
}

int main(int argc, char** argv) {
  static const struct option long_options[] = {
      {"driver", required_argument, NULL, 'd'},
      {"workload", required_argument, NULL, 'w'},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0},
  };
  const char* driver_name = NULL;
  const char* workload = NULL;
  int option;
  while ((option = getopt_long(argc, argv, "h", long_options, NULL)) != -1) {
    switch (option) {
      case 'd':
        driver_name = optarg;
        break;
      case 'w':
        workload = optarg;
        break;
      case 'h':
        usage(stdout);
        return 0;
      default:
        usage(stderr);
        return 2;
    }
  }
  hal_status_t (*run)(hal_device_t*) = NULL;
  if (workload && strcmp(workload, "pipeline") == 0)
    run = workload_pipeline;
  else if (workload && strcmp(workload, "reuse") == 0)
    run = workload_reuse;
  else if (workload && strcmp(workload, "dispatch") == 0)
    run = workload_dispatch;
  else if (workload && strcmp(workload, "file") == 0)
    run = workload_file;
  if (!driver_name || !run || optind < argc) {
    usage(stderr);
    return 2;
  }
  setvbuf(stdout, NULL, _IOLBF, 0);
  printf("fault-sweep: driver=%s workload=%s\n", driver_name, workload);
  // Several chunks, so that a fault can land between them.
  if (run == workload_file)
    setenv("HAL_FILE_CHUNK_BYTES", "16384", 1);

  hal_driver_registry_t* registry = NULL;
  hal_driver_t* driver = NULL;
  hal_device_t* device = NULL;
  hal_status_t status =
      hal_driver_registry_create(NULL, hal_allocator_system(), &registry);
  if (!status) {
    status = hal_driver_registry_create_driver(registry, driver_name,
                                               hal_allocator_system(), &driver);
  }
  if (!status) {
    status = hal_driver_create_device_by_index(driver, 0,
                                               hal_allocator_system(), &device);
  }
  if (!status)
    status = run(device);
  bool workload_ok = !status;
  print_status("workload", status);
  bool after_ok = true;
  if (device) {
    hal_status_t after = after_check(device);
    after_ok = !after;
    print_status("after", after);
  } else {
    printf("after: skipped (no device)\n");
  }
  hal_device_release(device);
  hal_driver_release(driver);
  hal_driver_registry_free(registry);
  if (!after_ok)
    return 3;
  return workload_ok ? 0 : 1;
}
