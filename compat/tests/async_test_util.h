// Copyright 2026 The HAL Authors.
//
// What the mlir_async test programs share (include after hal_test.h): pool
// tasks, a C function run on the runtime's pool as mlirAsyncRuntimeExecute
// runs coroutines. (A child process for misuse that aborts:
// hal_test_run_in_child.)

#ifndef HAL_COMPAT_TESTS_ASYNC_TEST_UTIL_H_
#define HAL_COMPAT_TESTS_ASYNC_TEST_UTIL_H_

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

#endif  // HAL_COMPAT_TESTS_ASYNC_TEST_UTIL_H_
