// Copyright 2026 The HAL Authors.
//
// What the mlir_async test programs share (include after hal_test.h): pool
// tasks, a C function run on the runtime's pool as mlirAsyncRuntimeExecute
// runs coroutines; and a child process for misuse that aborts.

#ifndef HAL_COMPAT_TESTS_ASYNC_TEST_UTIL_H_
#define HAL_COMPAT_TESTS_ASYNC_TEST_UTIL_H_

#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

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

// Runs |fn| in a child process (fork it before any runtime thread exists);
// returns its stderr and whether it aborted.
static bool run_in_child(void (*fn)(void), char* text, size_t capacity) {
  int pipe_fds[2];
  assert_int_equal(pipe(pipe_fds), 0);
  fflush(stderr);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    dup2(pipe_fds[1], STDERR_FILENO);
    close(pipe_fds[0]);
    fn();
    _exit(0);
  }
  close(pipe_fds[1]);
  size_t length = 0;
  ssize_t n;
  while (length + 1 < capacity &&
         (n = read(pipe_fds[0], text + length, capacity - 1 - length)) > 0) {
    length += (size_t)n;
  }
  text[length] = '\0';
  close(pipe_fds[0]);
  int wstatus = 0;
  assert_int_equal(waitpid(pid, &wstatus, 0), pid);
  return WIFSIGNALED(wstatus) && WTERMSIG(wstatus) == SIGABRT;
}

#endif  // HAL_COMPAT_TESTS_ASYNC_TEST_UTIL_H_
