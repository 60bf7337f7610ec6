// Copyright 2026 The HAL Authors.
//
// The shared adapter ops (vendor_ops_impl.h), compiled for CUDA.

#include "cuda_vendor.h"

// After the vendor header, which parameterizes it.
#include "vendor_ops_impl.h"
