// Copyright 2026 The HAL Authors.
//
// The mlir_async tests' pool tasks: a C function run on the runtime's pool
// as mlirAsyncRuntimeExecute runs coroutines (include after hal_test.h).

#ifndef HAL_COMPAT_TESTS_ASYNC_SPAWN_H_
#define HAL_COMPAT_TESTS_ASYNC_SPAWN_H_

#include <stdlib.h>

#include "hal/mlir_async.h"

typedef struct task_t {
  void (*fn)(void* arg);
  void* arg;
} task_t;

static void task_resume(void* handle) {
  task_t* task = (task_t*)handle;
  task->fn(task->arg);
  free(task);
}

// Runs fn(arg) on the current runtime's pool (the default one from a
// thread outside every pool).
static void spawn(void (*fn)(void* arg), void* arg) {
  task_t* task = (task_t*)malloc(sizeof(*task));
  assert_non_null(task);
  task->fn = fn;
  task->arg = arg;
  mlirAsyncRuntimeExecute(task, task_resume);
}

#endif  // HAL_COMPAT_TESTS_ASYNC_SPAWN_H_
