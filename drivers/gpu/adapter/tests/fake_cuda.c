// Copyright 2026 The HAL Authors.
//
// A fake CUDA driver: every symbol of the adapter's CUDA table (weak stubs
// returning CUDA_SUCCESS, fake_cuda_stubs.c), and a working
// cuGetProcAddress over that table that reports the names in
// $GPU_FAKE_CUDA_MISSING (comma-separated API names) as not found.

#include <cuda.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_symbols.h"
#include "fake_runtime.h"

typedef void (*gpu_fake_fn_t)(void);
typedef struct gpu_fake_symbol_t {
  const char* name;  // the API name, as cuGetProcAddress receives it
  gpu_fake_fn_t fn;
} gpu_fake_symbol_t;

#define GPU_FAKE_CUDA_ENTRY(kind, capability, name, ret, params) \
  {#name, (gpu_fake_fn_t)name},
static const gpu_fake_symbol_t gpu_fake_cuda_symbols[] = {
    GPU_CUDA_SYMBOLS(GPU_FAKE_CUDA_ENTRY)};

static bool gpu_fake_cuda_is_missing(const char* name) {
  const char* list = getenv("GPU_FAKE_CUDA_MISSING");
  size_t length = strlen(name);
  for (const char* p = list; p && *p; p += strcspn(p, ",")) {
    p += *p == ',';
    if (strncmp(p, name, length) == 0 && (p[length] == ',' || !p[length]))
      return true;
  }
  return false;
}

// Strong: replaces the weak stub of fake_cuda_stubs.c.
GPU_FAKE_EXPORT CUresult cuGetProcAddress(
    const char* symbol, void** pfn, int cudaVersion, cuuint64_t flags,
    CUdriverProcAddressQueryResult* symbolStatus) {
  *pfn = NULL;
  *symbolStatus = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  if (gpu_fake_cuda_is_missing(symbol))
    return CUDA_ERROR_NOT_FOUND;
  for (size_t i = 0;
       i < sizeof(gpu_fake_cuda_symbols) / sizeof(gpu_fake_cuda_symbols[0]);
       ++i) {
    if (strcmp(gpu_fake_cuda_symbols[i].name, symbol) == 0) {
      memcpy(pfn, &gpu_fake_cuda_symbols[i].fn, sizeof(*pfn));
      *symbolStatus = CU_GET_PROC_ADDRESS_SUCCESS;
      return CUDA_SUCCESS;
    }
  }
  return CUDA_ERROR_NOT_FOUND;
}
