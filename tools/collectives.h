// Copyright 2026 The HAL Authors.
//
// hal-run --ranks' workload: one rank process's part of a collective job,
// on the public API only (hal/api.h, hal/channel.h).
//
// A job has |ranks| rank processes of |devices_per_rank| devices each;
// device d of rank process r is global rank r * devices_per_rank + d of
// ranks * devices_per_rank, on the driver's device
// (r * devices_per_rank + d) % device_count. Each device has a thread of its
// own, because hal_channel_create blocks until every global rank joined.
// Per device: an input written from the host, one command buffer (fills of
// the outputs, all-reduce, all-gather, broadcast from global rank 0,
// reduce-scatter of the gathered data, a copy of the all-reduce's result),
// every element of every output checked on the host; then the all-reduce
// alone, timed.

#ifndef TOOLS_COLLECTIVES_H_
#define TOOLS_COLLECTIVES_H_

#include "hal/api.h"

// Global ranks of one job at most (rank processes x devices per rank).
#define HAL_COLLECTIVES_MAX_RANKS 64

// The exit status of a process the HAL_RUN_EXIT_RANK hook ends.
#define HAL_COLLECTIVES_EXIT_HOOK_STATUS 3

typedef struct hal_collectives_options_t {
  int32_t rank;              // this process's rank, in [0, ranks)
  int32_t ranks;             // rank processes, >= 1
  int32_t devices_per_rank;  // >= 1; ranks * devices_per_rank <= the max
  uint64_t elements;         // int32 elements per global rank, >= 1
  // Bound of each host wait (HAL_DURATION_INFINITE: none).
  hal_duration_t wait_ns;
  // The test hook HAL_RUN_KILL_RANK: this process raises SIGKILL as soon as
  // one of its channels exists, before anything is submitted.
  bool kill_after_join;
  // The test hook HAL_RUN_EXIT_RANK: this process calls exit() with
  // HAL_COLLECTIVES_EXIT_HOOK_STATUS as soon as one of its devices has
  // submitted its first collectives, without waiting for them: its exit
  // runs with collectives in flight between processes.
  bool exit_after_submit;
} hal_collectives_options_t;

typedef struct hal_collectives_result_t {
  uint64_t bytes_verified;  // over every device of this process
  // The median host time of one all-reduce, of this process's slowest
  // device.
  double all_reduce_ms;
} hal_collectives_result_t;

// Runs this process's part of the job of |id| on |driver|'s devices, one
// thread per device; prints a line per device that succeeded to stdout.
// Returns the first device's failure, naming its global rank and device
// (DATA_LOSS names the first wrong element); the other devices' failures
// are printed to stderr.
hal_status_t hal_collectives_run(hal_driver_t* driver,
                                 const hal_channel_id_t* id,
                                 const hal_collectives_options_t* options,
                                 hal_collectives_result_t* out_result);

// nccl-tests' figures for an all-reduce of |bytes| per rank taking |ms|:
// algbw = bytes / time, busbw = algbw * 2 (ranks - 1) / ranks, in GB/s.
double hal_collectives_algbw(uint64_t bytes, double ms);
double hal_collectives_busbw(uint64_t bytes, double ms, int32_t ranks);

#endif  // TOOLS_COLLECTIVES_H_
