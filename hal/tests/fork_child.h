// Copyright 2026 The HAL Authors.
//
// fork() for tests whose child calls exit(). LeakSanitizer's exit-time
// check in a fork() child of a process with threads takes what only the
// parent's threads held for leaks (their stacks are not in the child), and
// may wait forever for an allocator lock one of them held at the fork: a
// child made by hal_test_fork() skips it, through LeakSanitizer's hook.
// GCC 12's AddressSanitizer does not lock its allocator around fork()
// either: a child that allocates may wait forever for a lock another
// thread of the parent held, so a test forks where the parent's other
// threads are known to be blocked outside the allocator, or its child
// does not allocate. Libc only: the virtual GPU's tests include it too.

#ifndef HAL_TESTS_FORK_CHILD_H_
#define HAL_TESTS_FORK_CHILD_H_

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

// Weak: a program of several files includes this header in each.
__attribute__((weak)) bool hal_test_in_forked_child;
int __lsan_is_turned_off(void);
__attribute__((weak, visibility("default"))) int __lsan_is_turned_off(void) {
  return hal_test_in_forked_child;
}

// fork(), the child marked.
static inline pid_t hal_test_fork(void) {
  pid_t pid = fork();
  if (pid == 0)
    hal_test_in_forked_child = true;
  return pid;
}

// Waits for |pid| and prints "LABEL: exit N" or "LABEL: signal N" on
// stdout. Returns the wait status, or -1 when the wait failed.
static inline int hal_test_report_child(pid_t pid, const char* label) {
  int wstatus = 0;
  if (waitpid(pid, &wstatus, 0) != pid)
    return -1;
  printf("%s: %s %d\n", label, WIFEXITED(wstatus) ? "exit" : "signal",
         WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : WTERMSIG(wstatus));
  return wstatus;
}

#endif  // HAL_TESTS_FORK_CHILD_H_
