// Copyright 2026 The HAL Authors.
//
// The only C++ of the project: calls libmlir_async_runtime.so.14's
// __mlir_runner_init, whose argument is an llvm::StringMap<void*>&, and
// copies the entry points it registers into a C table (mlir_ref.h).

#include "mlir_ref.h"

#include <dlfcn.h>

#include <cstdio>

#include "llvm/ADT/StringMap.h"

namespace {

using RunnerInitFn = void (*)(llvm::StringMap<void*>&);
using RunnerDestroyFn = void (*)();

RunnerDestroyFn g_destroy = nullptr;

template <typename T>
bool Lookup(const llvm::StringMap<void*>& symbols, const char* name, T* out,
            char* error, size_t capacity) {
  auto it = symbols.find(name);
  if (it == symbols.end() || !it->second) {
    std::snprintf(error, capacity, "%s not registered by __mlir_runner_init",
                  name);
    return false;
  }
  *out = reinterpret_cast<T>(it->second);
  return true;
}

}  // namespace

extern "C" bool hal_mlir_ref_load(const char* path, hal_mlir_ref_api_t* out_api,
                                  char* error, size_t capacity) {
  if (!path)
    path = HAL_MLIR_ASYNC_RUNTIME_PATH;
  void* library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    std::snprintf(error, capacity, "dlopen %s: %s", path, dlerror());
    return false;
  }
  auto init =
      reinterpret_cast<RunnerInitFn>(dlsym(library, "__mlir_runner_init"));
  g_destroy = reinterpret_cast<RunnerDestroyFn>(
      dlsym(library, "__mlir_runner_destroy"));
  if (!init || !g_destroy) {
    std::snprintf(error, capacity, "%s lacks __mlir_runner_init/destroy", path);
    return false;
  }
  llvm::StringMap<void*> symbols;
  init(symbols);
  hal_mlir_ref_api_t& api = *out_api;
  bool found = Lookup(symbols, "mlirAsyncRuntimeAddRef", &api.add_ref, error,
                      capacity) &&
               Lookup(symbols, "mlirAsyncRuntimeDropRef", &api.drop_ref, error,
                      capacity) &&
               Lookup(symbols, "mlirAsyncRuntimeCreateToken", &api.create_token,
                      error, capacity) &&
               Lookup(symbols, "mlirAsyncRuntimeCreateGroup", &api.create_group,
                      error, capacity) &&
               Lookup(symbols, "mlirAsyncRuntimeEmplaceToken",
                      &api.emplace_token, error, capacity) &&
               Lookup(symbols, "mlirAsyncRuntimeSetTokenError",
                      &api.set_token_error, error, capacity) &&
               Lookup(symbols, "mlirAsyncRuntimeIsTokenError",
                      &api.is_token_error, error, capacity) &&
               Lookup(symbols, "mlirAsyncRuntimeAwaitToken", &api.await_token,
                      error, capacity) &&
               Lookup(symbols, "mlirAsyncRuntimeAddTokenToGroup",
                      &api.add_token_to_group, error, capacity) &&
               Lookup(symbols, "mlirAsyncRuntimeAwaitAllInGroup",
                      &api.await_all_in_group, error, capacity) &&
               Lookup(symbols, "mlirAsyncRuntimeExecute", &api.execute, error,
                      capacity) &&
               Lookup(symbols, "mlirAsyncRuntimeAwaitTokenAndExecute",
                      &api.await_token_and_execute, error, capacity) &&
               Lookup(symbols, "mlirAsyncRuntimeIsGroupError",
                      &api.is_group_error, error, capacity) &&
               Lookup(symbols, "mlirAsyncRuntimGetNumWorkerThreads",
                      &api.num_worker_threads, error, capacity);
  if (!found) {
    // init set the runtime up; nothing will call unload for a table that
    // was not filled.
    g_destroy();
    g_destroy = nullptr;
  }
  return found;
}

extern "C" void hal_mlir_ref_unload(void) {
  if (g_destroy)
    g_destroy();
  g_destroy = nullptr;
}
