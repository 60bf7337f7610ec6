// Copyright 2026 The HAL Authors.
//
// hal-run --ranks=N: a launcher of collective jobs (collectives.h), as
// torchrun or mpirun -n start one, for one machine.
//
// The launcher, per driver: opens device 0, makes the channel id
// (hal_channel_id_generate), then runs rank 0 of 1 in its own process
// (N = 1: one thread per device) or starts N worker processes, itself again
// (/proc/self/exe) with the same --driver, --ranks, --devices-per-rank and
// --elements, handing each its rank and the id through the environment:
//
//   HAL_RUN_RANK=r  HAL_RUN_RANKS=N  HAL_RUN_CHANNEL_ID=<256 hex digits>
//
// A hal-run started with HAL_RUN_RANK set is a worker and never launches.
// The launcher stays up while its workers run: with NCCL the process that
// made the id hosts the bootstrap root the ranks join through. It relays the
// workers' stdout and stderr line by line, each line prefixed "rank R: ",
// waits for every worker within a bound (HAL_SYNC_MAX_WAIT_MS when set, 0
// meaning none; else 300 s) past which it kills the ones left and says so,
// and prints one summary line per driver: the verified bytes and the
// all-reduce's algbw and busbw (nccl-tests' formula), or which ranks failed
// and how.

#ifndef TOOLS_RANKS_H_
#define TOOLS_RANKS_H_

#include "hal/api.h"

typedef struct hal_ranks_options_t {
  int32_t ranks;             // rank processes (--ranks)
  int32_t devices_per_rank;  // --devices-per-rank
  uint64_t elements;         // --elements
  bool verbose;              // -v, passed on to the workers
  const char* argv0;         // the workers' argv[0]
  // Several drivers run in turn (--driver=all): each one's workers trace
  // into files named after it, so that the next driver's keep them.
  bool trace_per_driver;
} hal_ranks_options_t;

typedef enum hal_ranks_outcome_e {
  HAL_RANKS_PASSED = 0,
  HAL_RANKS_FAILED = 1,
  // The driver has no collectives (hal_channel_id_generate: UNIMPLEMENTED).
  HAL_RANKS_SKIPPED = 2,
} hal_ranks_outcome_t;

// --ranks=|ranks| [--devices-per-rank=|devices_per_rank|]
// [--elements=|elements|] (NULL: not given) into |out_options| (verbose and
// argv0 left to the caller), or false after printing the usage error.
bool hal_ranks_parse_options(const char* ranks, const char* devices_per_rank,
                             const char* elements,
                             hal_ranks_options_t* out_options);

// Whether this process is a worker of a launcher (HAL_RUN_RANK is set).
bool hal_ranks_is_worker(void);

// Runs the job on |driver| as its launcher; prints the driver's summary
// line ("collectives ok: ...", "collectives failed: ...", "collectives
// skipped: ...") to stdout and the failures' statuses to stderr.
hal_ranks_outcome_t hal_ranks_launch(hal_driver_t* driver,
                                     const hal_ranks_options_t* options);

// The summary line of a driver whose job failed, |how| saying why
// ("collectives failed: driver=NAME ranks=N devices-per-rank=D: HOW").
void hal_ranks_print_failed(const char* driver_name,
                            const hal_ranks_options_t* options,
                            const char* how);

// Runs this worker's rank (HAL_RUN_RANK) of the job on |driver|; returns
// the process's exit status (0 done, 1 failed, 2 a bad HAL_RUN_* setting).
// Its last stdout line on success is the one the launcher reads its figures
// from ("done: verified=B bytes all-reduce=T ms").
int hal_ranks_work(hal_driver_t* driver, const hal_ranks_options_t* options);

#endif  // TOOLS_RANKS_H_
