// Copyright 2026 The HAL Authors.
//
// Run under HAL_TRACE by tools/trace_check.py (test trace_test): events
// whose text would break the file if written raw, which the checker must
// then find whole. Messages longer than an event's args, with quotes,
// backslashes, newlines, a UTF-8 character across the cut, bytes that are
// not UTF-8; a thread name that is not UTF-8; a host call failing with
// such a message.

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "hal/trace.h"
#include "hal_test.h"

static void nasty(char* text, size_t size) {
  // "quote \" backslash \\ newline \n", then euros until the end: wherever
  // a cut falls, it may split one.
  int used =
      snprintf(text, size, "quote \" backslash \\ newline \n raw \xff\xfe ");
  while (used + 4 < (int)size) {
    memcpy(text + used, "\xe2\x82\xac", 3);
    used += 3;
  }
  text[used] = '\0';
}

static hal_status_t failing_call(void* user_data, hal_status_t status) {
  const char* text = user_data;
  return hal_make_status(HAL_STATUS_FAILED_PRECONDITION, "%s", text);
}

int main(void) {
  if (!hal_trace_enabled()) {
    fprintf(stderr, "trace_test: run it with HAL_TRACE set\n");
    return 1;
  }
  pthread_setname_np(pthread_self(), "\xff\xfe-trace");
  char text[400];
  nasty(text, sizeof(text));
  for (int cut = 0; cut < 3; ++cut) {
    hal_semaphore_t* semaphore = hal_test_semaphore(0);
    // Three lengths: the cut falls on each byte of a euro once.
    text[sizeof(text) - 1 - (size_t)cut * 40] = '\0';
    hal_semaphore_fail(
        semaphore, hal_make_status(HAL_STATUS_RESOURCE_EXHAUSTED, "%s", text));
    hal_status_free(hal_semaphore_wait(semaphore, 1, hal_immediate_timeout()));
    hal_semaphore_release(semaphore);
  }
  hal_device_t* device = hal_test_create_device();
  hal_semaphore_t* done = hal_test_semaphore(0);
  uint64_t one = 1;
  hal_semaphore_list_t signals = {1, &done, &one};
  hal_status_t status =
      hal_device_queue_host_call(device, 0, NULL, &signals, failing_call, text);
  if (status) {
    hal_status_fprint(stderr, status);
    return 1;
  }
  hal_status_free(hal_semaphore_wait(done, 1, hal_infinite_timeout()));
  hal_semaphore_release(done);
  hal_device_release(device);
  return 0;
}
