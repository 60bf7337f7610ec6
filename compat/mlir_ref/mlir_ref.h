// Copyright 2026 The HAL Authors.
//
// MLIR's own async runtime (Debian libmlir-14's libmlir_async_runtime.so.14)
// as a table of C function pointers, for side-by-side benchmarks.
//
// That library exports only __mlir_runner_init, which fills an
// llvm::StringMap<void*> with its mlirAsyncRuntime* entry points, and
// __mlir_runner_destroy, which tears its default runtime down. The C++ shim
// behind this header (mlir_ref.cpp) makes the map and copies the entry
// points out; nothing else touches C++.

#ifndef HAL_COMPAT_MLIR_REF_H_
#define HAL_COMPAT_MLIR_REF_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef void (*hal_mlir_ref_resume_t)(void* handle);

typedef struct hal_mlir_ref_api_t {
  void (*add_ref)(void* object, int64_t count);
  void (*drop_ref)(void* object, int64_t count);
  void* (*create_token)(void);
  void* (*create_group)(int64_t size);
  void (*emplace_token)(void* token);
  void (*set_token_error)(void* token);
  bool (*is_token_error)(void* token);
  void (*await_token)(void* token);
  int64_t (*add_token_to_group)(void* token, void* group);
  void (*await_all_in_group)(void* group);
  void (*execute)(void* handle, hal_mlir_ref_resume_t resume);
  void (*await_token_and_execute)(void* token, void* handle,
                                  hal_mlir_ref_resume_t resume);
  bool (*is_group_error)(void* group);
  // mlirAsyncRuntimGetNumWorkerThreads (MLIR 14 spells it so).
  int64_t (*num_worker_threads)(void);
} hal_mlir_ref_api_t;

// Loads the library (|path| NULL: the one found at build time) and fills
// |out_api|. On failure returns false with a message in |error|.
bool hal_mlir_ref_load(const char* path, hal_mlir_ref_api_t* out_api,
                       char* error, size_t error_capacity);

// Calls __mlir_runner_destroy (waits for MLIR's thread pool).
void hal_mlir_ref_unload(void);

#ifdef __cplusplus
}
#endif

#endif  // HAL_COMPAT_MLIR_REF_H_
