// Copyright 2026 The HAL Authors.
//
// A library whose constructor makes the process's first runtime (the
// default one, by running a task on it) before main, when
// HAL_TEST_RUNTIME_IN_CONSTRUCTOR is set: async_ctor_test's child.

#include <stdlib.h>

#include "hal/mlir_async.h"

static void nothing(void* handle) {
  (void)handle;
}

__attribute__((constructor)) static void make_the_first_runtime(void) {
  if (getenv("HAL_TEST_RUNTIME_IN_CONSTRUCTOR"))
    mlirAsyncRuntimeExecute(NULL, nothing);
}

// Linked for this symbol, so the library (and its constructor) is loaded.
void async_ctor_lib_linked(void);
__attribute__((visibility("default"))) void async_ctor_lib_linked(void) {}
