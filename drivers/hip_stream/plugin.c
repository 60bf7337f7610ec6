// Copyright 2026 The HAL Authors.
//
// hal-driver-hip_stream.so: the HIP runtime, command buffers replayed into
// streams.

#include "gpu_core.h"

GPU_DEFINE_PLUGIN("hip_stream", GPU_ADAPTER_VENDOR_HIP, &gpu_stream_strategy,
                  "HIP runtime (libamdhip64.so), stream replay")
