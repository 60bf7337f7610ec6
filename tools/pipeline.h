// Copyright 2026 The HAL Authors.
//
// hal-run's main workload: a multi-queue pipeline exercising the HAL end to
// end on one device, every byte verified on the host.

#ifndef TOOLS_PIPELINE_H_
#define TOOLS_PIPELINE_H_

#include "hal/api.h"

typedef struct hal_pipeline_options_t {
  uint32_t chain_hops;   // submissions in the cross-queue chain
  uint32_t fan_width;    // submissions in the fan-out
  uint64_t buffer_size;  // bytes per buffer (multiple of 4 * fan_width)
} hal_pipeline_options_t;

typedef struct hal_pipeline_result_t {
  uint32_t submissions;
  uint64_t bytes_verified;
  double chain_ms;    // host signal to the chain's last signal
  double fan_ms;      // chain end to fan-in done
  double compute_ms;  // fan-in done to the SAXPY dispatch done (0: skipped)
  double total_ms;    // first submit to verified
} hal_pipeline_result_t;

hal_pipeline_options_t hal_pipeline_default_options(void);

// Runs the pipeline on |device|; prints per-stage lines to stdout when
// |verbose|.
hal_status_t hal_pipeline_run(hal_device_t* device,
                              const hal_pipeline_options_t* options,
                              bool verbose, hal_pipeline_result_t* out_result);

// A fresh submission that depends on nothing else on |device|: on each
// queue, a fill of a new buffer, a barrier and a copy into another, waited
// for (until |timeout|) and read back. DATA_LOSS names the first wrong
// byte. The fault sweep and the soak run it after a workload to check that
// the device still works (or, after a loss, that it does not).
hal_status_t hal_pipeline_probe(hal_device_t* device, uint64_t size,
                                hal_timeout_t timeout);

#endif  // TOOLS_PIPELINE_H_
