// Copyright 2026 The HAL Authors.
//
// hal-driver-hip_graph.so: the HIP runtime, command buffers built into HIP
// graphs at end() and launched per submit.

#include "gpu_core.h"

GPU_DEFINE_PLUGIN("hip_graph", GPU_ADAPTER_VENDOR_HIP, &gpu_graph_strategy,
                  "HIP runtime (libamdhip64.so), graphs launched per submit")
