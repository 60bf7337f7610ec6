// Copyright 2026 The HAL Authors.
//
// hal-driver-cuda_graph.so: the CUDA Driver API, command buffers built into
// CUDA graphs at end() and launched per submit.

#include "gpu_core.h"

GPU_DEFINE_PLUGIN("cuda_graph", GPU_ADAPTER_VENDOR_CUDA, &gpu_graph_strategy,
                  "CUDA Driver API (libcuda.so.1), graphs launched per submit")
