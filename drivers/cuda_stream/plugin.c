// Copyright 2026 The HAL Authors.
//
// hal-driver-cuda_stream.so: the CUDA Driver API, command buffers replayed
// into streams.

#include "gpu_core.h"

GPU_DEFINE_PLUGIN("cuda_stream", GPU_ADAPTER_VENDOR_CUDA, &gpu_stream_strategy,
                  "CUDA Driver API (libcuda.so.1), stream replay")
