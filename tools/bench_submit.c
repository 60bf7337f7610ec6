// Copyright 2026 The HAL Authors.
//
// hal-bench-submit: host-side cost per submitted command buffer of N small
// ops, stream replay against graph launch, measured in the same run on each
// vendor. A REUSABLE command buffer of N 4-byte fills is recorded once and
// submitted M times back to back; the figure is the wall time from the first
// submit to the last completion, divided by M. On the virtual GPU all of it
// is host work (the vendor calls a stream replay makes per op, against one
// graph launch); on a real GPU it is the CPU side of submission.
//
//   hal-bench-submit [--drivers=cuda_stream,cuda_graph,...] [--submits=M]
//
// M is a count from 1 to 1 000 000 (default 200); an argument that is not
// one of these, or a list with an empty name, is refused with exit status 2.
//
// Drivers come from HAL_DRIVER_PATH; runtimes from HAL_CUDA_LIBRARY /
// HAL_HIP_LIBRARY (meson's benchmark registration points them at the
// virtual GPU). Prints one line per (driver, N) and the graph/stream ratios.

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_args.h"
#include "hal/api.h"

static const uint32_t kOpCounts[] = {1, 16, 256};

// --submits: a figure submits this many at most (each N, each driver).
static const uint32_t kMaxSubmits = 1000000;

typedef struct bench_row_t {
  char driver[64];
  double us_per_submit[3];
  bool ok;
} bench_row_t;

static hal_status_t bench_driver(hal_driver_registry_t* registry,
                                 const char* name, uint32_t submits,
                                 bench_row_t* row) {
  hal_driver_t* driver = NULL;
  HAL_RETURN_IF_ERROR(hal_driver_registry_create_driver(
      registry, name, hal_allocator_system(), &driver));
  hal_device_t* device = NULL;
  hal_status_t status = hal_driver_create_device_by_index(
      driver, 0, hal_allocator_system(), &device);
  hal_driver_release(driver);
  HAL_RETURN_IF_ERROR(status);
  hal_buffer_t* buffer = NULL;
  hal_semaphore_t* timeline = NULL;
  hal_buffer_params_t params = {HAL_MEMORY_TYPE_DEVICE_LOCAL,
                                HAL_BUFFER_USAGE_DEFAULT};
  status = hal_device_allocate_buffer(device, params, 256 * 4, &buffer);
  if (!status)
    status = hal_device_create_semaphore(device, 0, &timeline);
  uint64_t value = 0;
  for (size_t k = 0; k < HAL_ARRAYSIZE(kOpCounts) && !status; ++k) {
    hal_command_buffer_t* cb = NULL;
    status = hal_device_create_command_buffer(
        device, HAL_COMMAND_BUFFER_MODE_REUSABLE, &cb);
    if (!status)
      status = hal_command_buffer_begin(cb);
    for (uint32_t i = 0; i < kOpCounts[k] && !status; ++i) {
      status =
          hal_command_buffer_fill_buffer(cb, buffer, (uint64_t)i * 4, 4, &i, 4);
    }
    if (!status)
      status = hal_command_buffer_end(cb);
    // Warm up (pools, first launch), then measure.
    for (int round = 0; round < 2 && !status; ++round) {
      uint32_t count = round == 0 ? 8 : submits;
      hal_time_t start = hal_time_now();
      for (uint32_t i = 0; i < count && !status; ++i) {
        ++value;
        hal_semaphore_list_t signals = {1, &timeline, &value};
        status = hal_device_queue_execute(device, 0, NULL, &signals, 1, &cb);
      }
      if (!status) {
        status = hal_semaphore_wait(timeline, value,
                                    hal_make_timeout_ns(120ll * 1000000000));
      }
      if (round == 1) {
        row->us_per_submit[k] =
            (double)(hal_time_now() - start) / 1e3 / (double)count;
      }
    }
    hal_command_buffer_release(cb);
  }
  hal_semaphore_release(timeline);
  hal_buffer_release(buffer);
  hal_device_release(device);
  return status;
}

int main(int argc, char** argv) {
  const char* drivers = "cuda_stream,cuda_graph,hip_stream,hip_graph";
  uint64_t submits = 200;
  for (int i = 1; i < argc; ++i) {
    if (strncmp(argv[i], "--drivers=", 10) == 0 &&
        hal_cli_list_is_complete(argv[i] + 10)) {
      drivers = argv[i] + 10;
    } else if (strncmp(argv[i], "--submits=", 10) == 0 &&
               hal_cli_parse_uint(argv[i] + 10, 1, kMaxSubmits, &submits)) {
    } else {
      fprintf(stderr,
              "hal-bench-submit: bad argument '%s'\n"
              "usage: hal-bench-submit [--drivers=NAME,NAME,...] "
              "[--submits=M]\n"
              "  --drivers  a driver between every two commas (default "
              "cuda_stream,cuda_graph,hip_stream,hip_graph)\n"
              "  --submits  submissions per figure, 1 to %u (default 200)\n",
              argv[i], kMaxSubmits);
      return 2;
    }
  }
  hal_driver_registry_t* registry = NULL;
  hal_status_t status =
      hal_driver_registry_create(NULL, hal_allocator_system(), &registry);
  if (status) {
    hal_status_fprint(stderr, status);
    hal_status_free(status);
    return 1;
  }
  // A row per driver named, however many.
  bench_row_t* rows = calloc(hal_cli_list_count(drivers), sizeof(*rows));
  char* list = strdup(drivers);
  if (!rows || !list) {
    fprintf(stderr, "hal-bench-submit: out of memory\n");
    free(rows);
    free(list);
    hal_driver_registry_free(registry);
    return 1;
  }
  printf(
      "submit cost per command buffer of N 4-byte fills, %u submits, "
      "microseconds (lower is better)\n",
      (uint32_t)submits);
  printf("%-14s %10s %10s %10s\n", "driver", "N=1", "N=16", "N=256");
  size_t row_count = 0;
  for (char* name = strtok(list, ","); name; name = strtok(NULL, ",")) {
    bench_row_t* row = &rows[row_count++];
    memset(row, 0, sizeof(*row));
    snprintf(row->driver, sizeof(row->driver), "%s", name);
    status = bench_driver(registry, name, (uint32_t)submits, row);
    if (status) {
      printf("%-14s skipped: ", name);
      hal_status_fprint(stdout, status);
      hal_status_free(status);
      continue;
    }
    row->ok = true;
    printf("%-14s %10.2f %10.2f %10.2f\n", name, row->us_per_submit[0],
           row->us_per_submit[1], row->us_per_submit[2]);
  }
  // Ratios graph / stream per vendor, measured in this run.
  int failures = 0;
  for (size_t i = 0; i < row_count; ++i) {
    const char* suffix = strstr(rows[i].driver, "_graph");
    if (!rows[i].ok || !suffix)
      continue;
    char stream_name[64];
    snprintf(stream_name, sizeof(stream_name), "%.*s_stream",
             (int)(suffix - rows[i].driver), rows[i].driver);
    for (size_t j = 0; j < row_count; ++j) {
      if (!rows[j].ok || strcmp(rows[j].driver, stream_name) != 0)
        continue;
      printf("ratio %s / %s:", rows[i].driver, stream_name);
      for (size_t k = 0; k < HAL_ARRAYSIZE(kOpCounts); ++k) {
        printf("  N=%u %.2fx", kOpCounts[k],
               rows[i].us_per_submit[k] / rows[j].us_per_submit[k]);
      }
      bool graph_wins = rows[i].us_per_submit[2] < rows[j].us_per_submit[2];
      printf("  (%s at N=256)\n",
             graph_wins ? "graph cheaper" : "GRAPH NOT CHEAPER");
      if (!graph_wins)
        ++failures;
    }
  }
  free(rows);
  free(list);
  hal_driver_registry_free(registry);
  return failures ? 1 : 0;
}
