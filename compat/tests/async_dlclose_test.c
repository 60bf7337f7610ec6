// Copyright 2026 The HAL Authors.
//
// Suite mlir_async: a dlclose() of libhal-async-runtime from one of its own
// tasks. mlir_async.h: the library's code is unmapped under its own
// workers, "said on stderr, then it crashes". This program does not link
// the runtime (a dlclose() of a library the program links unmaps nothing);
// meson names it in HAL_ASYNC_RUNTIME_LIBRARY, and a child process loads
// it, so the parent never has its threads.

#include <dlfcn.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "hal_test.h"

typedef void (*execute_fn_t)(void* handle, void (*resume)(void* handle));

static void* loaded_runtime;

// Runs on a pool thread: unloads the library whose worker called it.
static void dlclose_the_runtime(void* handle) {
  (void)handle;
  dlclose(loaded_runtime);
}

static void dlclose_from_task_child(void) {
  alarm(60);  // a hang fails the test by SIGALRM
  const char* path = getenv("HAL_ASYNC_RUNTIME_LIBRARY");
  if (!path) {
    fprintf(stderr, "HAL_ASYNC_RUNTIME_LIBRARY is not set (meson sets it)\n");
    _exit(3);
  }
  loaded_runtime = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!loaded_runtime) {
    fprintf(stderr, "dlopen: %s\n", dlerror());
    _exit(4);
  }
  execute_fn_t execute =
      (execute_fn_t)(uintptr_t)dlsym(loaded_runtime, "mlirAsyncRuntimeExecute");
  if (!execute) {
    fprintf(stderr, "dlsym: %s\n", dlerror());
    _exit(5);
  }
  execute(NULL, dlclose_the_runtime);
  for (;;)
    pause();  // the crash comes from the pool thread
}

// The child says why before it goes, and does not end as if nothing
// happened: not with exit status 0, not by the test's SIGALRM (a hang).
static void Async_DlcloseFromATaskIsSaidThenCrashes(void** state) {
  (void)state;
  char text[8192];
  int wstatus =
      hal_test_run_in_child_status(dlclose_from_task_child, text, sizeof(text));
  if (!strstr(text,
              "hal-async: the library is unloaded on one of its pool "
              "threads, by a dlclose() from a task")) {
    HAL_TEST_FAIL("stderr does not say why; it holds: %s", text);
  }
  if (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0)
    HAL_TEST_FAIL("the child exited with status 0; its stderr: %s", text);
  if (WIFSIGNALED(wstatus) && WTERMSIG(wstatus) == SIGALRM)
    HAL_TEST_FAIL("the child hung (SIGALRM); its stderr: %s", text);
  if (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) >= 3 &&
      WEXITSTATUS(wstatus) <= 5) {
    HAL_TEST_FAIL("the child could not load the runtime: %s", text);
  }
}

// The test list: no fixture.
#define CASE(name) cmocka_unit_test(name)

int main(void) {
  const struct CMUnitTest tests[] = {
      CASE(Async_DlcloseFromATaskIsSaidThenCrashes),
  };
  return cmocka_run_group_tests_name("mlir_async/dlclose", tests, NULL, NULL);
}
