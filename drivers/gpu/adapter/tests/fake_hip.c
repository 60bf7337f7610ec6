// Copyright 2026 The HAL Authors.
//
// A fake HIP runtime: every symbol of the adapter's HIP table, each
// returning hipSuccess (fake_runtime.h). Built several times with version
// scripts that hide a few symbols (meson.build).

#include <hip/hip_runtime_api.h>

#include "fake_runtime.h"
#include "hip_symbols.h"

GPU_HIP_SYMBOLS(GPU_FAKE_DEFINE)
