// Copyright 2026 The HAL Authors.
//
// The shared adapter ops (vendor_ops_impl.h), compiled for HIP.

#include "hip_vendor.h"

// After the vendor header, which parameterizes it.
#include "vendor_ops_impl.h"
