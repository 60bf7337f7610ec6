// Copyright 2026 The HAL Authors.
//
// Fake vendor runtimes for the adapter tests, generated from the adapters'
// own symbol tables: every entry point of the table becomes an exported
// function that returns success (0) and writes nothing, so the symbol list
// of a fake is exactly the table, and a change to the table changes the
// fakes. Which symbols a fake lacks is chosen per library (HIP: a linker
// version script) or per run (CUDA: $GPU_FAKE_CUDA_MISSING, consulted by
// the fake cuGetProcAddress).

#ifndef DRIVERS_GPU_ADAPTER_TESTS_FAKE_RUNTIME_H_
#define DRIVERS_GPU_ADAPTER_TESTS_FAKE_RUNTIME_H_

#define GPU_FAKE_EXPORT __attribute__((visibility("default")))

// |name| expands here (cuMemAlloc -> cuMemAlloc_v2): the fake defines what
// the real library exports. Weak, so a test TU can replace one.
#define GPU_FAKE_DEFINE(kind, capability, name, ret, params) \
  GPU_FAKE_EXPORT __attribute__((weak)) ret name params {    \
    return (ret)0;                                           \
  }

#endif  // DRIVERS_GPU_ADAPTER_TESTS_FAKE_RUNTIME_H_
