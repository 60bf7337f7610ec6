// Copyright 2026 The HAL Authors.
//
// Suite mlir_async: an exit() from a task when the process's first runtime
// was made before main, in a constructor of a library the program links
// (async_ctor_lib). mlir_async.h: the library's exit handler then runs
// after the loader's destructor pass and cannot tell the exit() from a
// dlclose() from a task, so the exit "also gets the line on stderr, and
// still ends with the task's status". The child is this program run again
// (a fresh process, so the constructor runs before its main) with
// HAL_TEST_RUNTIME_IN_CONSTRUCTOR set.

#include <stdlib.h>
#include <string.h>

#include "hal_test.h"

#include "async_test_util.h"

void async_ctor_lib_linked(void);

static void exit_with_five(void* arg) {
  (void)arg;
  exit(5);
}

static void block_forever(void) {
  for (;;)
    pause();
}

// The child: tasks queued behind the exiting one, and the main thread
// blocked, as an MLIR program awaiting its work would be.
static int child_main(void) {
  alarm(60);  // a hang fails the test by SIGALRM
  spawn(exit_with_five, NULL);
  block_forever();
  return 1;
}

static void exec_child(bool runtime_in_constructor) {
  if (runtime_in_constructor)
    setenv("HAL_TEST_RUNTIME_IN_CONSTRUCTOR", "1", 1);
  char* argv[] = {"async_ctor_test", "child", NULL};
  execv("/proc/self/exe", argv);
  perror("execv");
  _exit(127);
}

static void exec_child_runtime_in_constructor(void) {
  exec_child(true);
}

static void exec_child_runtime_in_main(void) {
  exec_child(false);
}

// Runs |fn|'s child, which must end by the task's exit(5); returns
// whether its stderr carries the unload's line.
static bool child_exits_with_five(void (*fn)(void)) {
  char text[8192];
  int wstatus = hal_test_run_in_child_status(fn, text, sizeof(text));
  if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 5) {
    HAL_TEST_FAIL(
        "the child ended %s %d, not by the task's exit(5); its "
        "stderr: %s",
        WIFEXITED(wstatus) ? "with status" : "by signal",
        WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : WTERMSIG(wstatus), text);
  }
  return strstr(text,
                "by an exit() from a task of a program whose first "
                "runtime was made before main") != NULL;
}

static void Async_ExitFromATaskOfAConstructorsRuntimeKeepsItsStatus(
    void** state) {
  (void)state;
  assert_true(child_exits_with_five(exec_child_runtime_in_constructor));
}

// The control: the same child with its first runtime made in main, where
// the exit handler tells an exit() apart and nothing is said.
static void Async_ExitFromATaskOfMainsRuntimeIsQuiet(void** state) {
  (void)state;
  assert_false(child_exits_with_five(exec_child_runtime_in_main));
}

// The test list: no fixture.
#define CASE(name) cmocka_unit_test(name)

int main(int argc, char** argv) {
  async_ctor_lib_linked();
  if (argc > 1 && strcmp(argv[1], "child") == 0)
    return child_main();
  if (getenv("HAL_TEST_RUNTIME_IN_CONSTRUCTOR")) {
    fprintf(stderr, "run without HAL_TEST_RUNTIME_IN_CONSTRUCTOR\n");
    return 2;
  }
  const struct CMUnitTest tests[] = {
      CASE(Async_ExitFromATaskOfAConstructorsRuntimeKeepsItsStatus),
      CASE(Async_ExitFromATaskOfMainsRuntimeIsQuiet),
  };
  return cmocka_run_group_tests_name("mlir_async/constructor", tests, NULL,
                                     NULL);
}
