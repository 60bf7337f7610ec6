// Copyright 2026 The HAL Authors.
//
// The entry points hal-bench finds in the two parallel-for modules beside
// the kernel's _mlir_ciface_parallel_for_add (parallel_for_bench.mlir):
//
//   int hal_bench_parallel_for_open(char* error, size_t capacity);
//     1 when the module's runtime is ready; 0 with a message in |error|.
//   void hal_bench_parallel_for_close(void);
//     stops what open started (MLIR's thread pool).
//   const char* hal_bench_parallel_for_runtime(void);
//     after open: the path of the library whose mlirAsyncRuntimeExecute
//     the kernel's calls reach, NULL if unknown (hal-bench checks that
//     each module reaches the runtime it stands for).
//
// Built twice. The module on libhal-async-runtime links that library, which
// defines the runtime ABI the kernel calls (its references bind there, to
// the module's own dependency), and needs nothing opened. The module on MLIR
// 14's runtime (HAL_BENCH_PARALLEL_FOR_MLIR) cannot link it:
// libmlir_async_runtime.so.14 exports only __mlir_runner_init and
// __mlir_runner_destroy; init hands out its entry points in an
// llvm::StringMap (compat/mlir_ref). This file then defines the ABI entry
// points itself, hidden, so the kernel's references bind to them at link
// time, each forwarding through the table open filled. Both runtimes share
// hal-bench's process this way, and its cases call them in turn.

#include <dlfcn.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define HAL_BENCH_EXPORT __attribute__((visibility("default")))

HAL_BENCH_EXPORT int hal_bench_parallel_for_open(char* error, size_t capacity);
HAL_BENCH_EXPORT void hal_bench_parallel_for_close(void);
HAL_BENCH_EXPORT const char* hal_bench_parallel_for_runtime(void);

// The file that defines |function|, NULL if none does (dladdr; the build
// defines _GNU_SOURCE).
static const char* hal_bench_library_of(void (*function)(void)) {
  void* address = NULL;
  memcpy(&address, &function, sizeof(address));
  Dl_info info;
  if (!address || !dladdr(address, &info) || !info.dli_fname)
    return NULL;
  return info.dli_fname;
}

#if defined(HAL_BENCH_PARALLEL_FOR_MLIR)

#include "mlir_ref.h"

#define HAL_BENCH_ABI __attribute__((visibility("hidden")))

HAL_BENCH_ABI void mlirAsyncRuntimeAddRef(void* object, int64_t count);
HAL_BENCH_ABI void mlirAsyncRuntimeDropRef(void* object, int64_t count);
HAL_BENCH_ABI void* mlirAsyncRuntimeCreateToken(void);
HAL_BENCH_ABI void* mlirAsyncRuntimeCreateGroup(int64_t size);
HAL_BENCH_ABI void mlirAsyncRuntimeEmplaceToken(void* token);
HAL_BENCH_ABI void mlirAsyncRuntimeSetTokenError(void* token);
HAL_BENCH_ABI bool mlirAsyncRuntimeIsTokenError(void* token);
HAL_BENCH_ABI bool mlirAsyncRuntimeIsGroupError(void* group);
HAL_BENCH_ABI void mlirAsyncRuntimeAwaitToken(void* token);
HAL_BENCH_ABI int64_t mlirAsyncRuntimeAddTokenToGroup(void* token, void* group);
HAL_BENCH_ABI void mlirAsyncRuntimeAwaitAllInGroup(void* group);
HAL_BENCH_ABI void mlirAsyncRuntimeExecute(void* handle,
                                           hal_mlir_ref_resume_t resume);
HAL_BENCH_ABI void mlirAsyncRuntimeAwaitTokenAndExecute(
    void* token, void* handle, hal_mlir_ref_resume_t resume);
HAL_BENCH_ABI int64_t mlirAsyncRuntimGetNumWorkerThreads(void);

static hal_mlir_ref_api_t mlir;
static bool mlir_loaded;

int hal_bench_parallel_for_open(char* error, size_t capacity) {
  if (!mlir_loaded)
    mlir_loaded = hal_mlir_ref_load(NULL, &mlir, error, capacity);
  return mlir_loaded ? 1 : 0;
}

void hal_bench_parallel_for_close(void) {
  if (mlir_loaded)
    hal_mlir_ref_unload();
  mlir_loaded = false;
}

const char* hal_bench_parallel_for_runtime(void) {
  return mlir_loaded ? hal_bench_library_of((void (*)(void))mlir.execute)
                     : NULL;
}

HAL_BENCH_ABI void mlirAsyncRuntimeAddRef(void* object, int64_t count) {
  mlir.add_ref(object, count);
}
HAL_BENCH_ABI void mlirAsyncRuntimeDropRef(void* object, int64_t count) {
  mlir.drop_ref(object, count);
}
HAL_BENCH_ABI void* mlirAsyncRuntimeCreateToken(void) {
  return mlir.create_token();
}
HAL_BENCH_ABI void* mlirAsyncRuntimeCreateGroup(int64_t size) {
  return mlir.create_group(size);
}
HAL_BENCH_ABI void mlirAsyncRuntimeEmplaceToken(void* token) {
  mlir.emplace_token(token);
}
HAL_BENCH_ABI void mlirAsyncRuntimeSetTokenError(void* token) {
  mlir.set_token_error(token);
}
HAL_BENCH_ABI bool mlirAsyncRuntimeIsTokenError(void* token) {
  return mlir.is_token_error(token);
}
HAL_BENCH_ABI bool mlirAsyncRuntimeIsGroupError(void* group) {
  return mlir.is_group_error(group);
}
HAL_BENCH_ABI void mlirAsyncRuntimeAwaitToken(void* token) {
  mlir.await_token(token);
}
HAL_BENCH_ABI int64_t mlirAsyncRuntimeAddTokenToGroup(void* token,
                                                      void* group) {
  return mlir.add_token_to_group(token, group);
}
HAL_BENCH_ABI void mlirAsyncRuntimeAwaitAllInGroup(void* group) {
  mlir.await_all_in_group(group);
}
HAL_BENCH_ABI void mlirAsyncRuntimeExecute(void* handle,
                                           hal_mlir_ref_resume_t resume) {
  mlir.execute(handle, resume);
}
HAL_BENCH_ABI void mlirAsyncRuntimeAwaitTokenAndExecute(
    void* token, void* handle, hal_mlir_ref_resume_t resume) {
  mlir.await_token_and_execute(token, handle, resume);
}
HAL_BENCH_ABI int64_t mlirAsyncRuntimGetNumWorkerThreads(void) {
  return mlir.num_worker_threads();
}

#else  // the module on libhal-async-runtime

int hal_bench_parallel_for_open(char* error, size_t capacity) {
  (void)error;
  (void)capacity;
  return 1;
}

void hal_bench_parallel_for_close(void) {}

// The ABI declared here as the kernel's object declares it: the address
// taken below goes through the same dynamic binding as the kernel's calls.
void mlirAsyncRuntimeExecute(void* handle, void (*resume)(void*));

const char* hal_bench_parallel_for_runtime(void) {
  return hal_bench_library_of((void (*)(void))mlirAsyncRuntimeExecute);
}

#endif
