// Copyright 2026 The HAL Authors.
//
// The fake CUDA driver's stubs: every symbol of the adapter's CUDA table,
// weak, each returning CUDA_SUCCESS (fake_runtime.h). fake_cuda.c replaces
// cuGetProcAddress with a working one.

#include <cuda.h>

#include "cuda_symbols.h"
#include "fake_runtime.h"

GPU_CUDA_SYMBOLS(GPU_FAKE_DEFINE)
