// Copyright 2026 The HAL Authors.
//
// Run under HAL_TRACE by tools/trace_check.py (test trace_test): events
// whose text would break the file if written raw, which the checker must
// then find whole. Messages longer than an event's args, with quotes,
// backslashes, newlines, a UTF-8 character across the cut, bytes that are
// not UTF-8; a thread name that is not UTF-8; a host call failing with
// such a message; wait and signal lists too long for their args, which end
// with how many more they had.

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
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

// Whether the string value of some |key| in |text| ends with " more".
static bool value_ends_with_more(const char* text, const char* key) {
  for (const char* start = strstr(text, key); start;
       start = strstr(start, key)) {
    start += strlen(key);
    const char* end = strchr(start, '"');
    if (end && end - start >= 5 && strncmp(end - 5, " more", 5) == 0)
      return true;
  }
  return false;
}

// The trace as flushed now, NUL-terminated (empty when it cannot be read).
static const char* trace_text(void) {
  hal_trace_flush();
  static char text[1 << 20];
  text[0] = '\0';
  FILE* file = fopen(getenv("HAL_TRACE"), "r");
  if (!file)
    return text;
  size_t length = fread(text, 1, sizeof(text) - 1, file);
  fclose(file);
  text[length] = '\0';
  return text;
}

static bool trace_has_long_lists(void) {
  const char* text = trace_text();
  return value_ends_with_more(text, "\"signal_list\": \"") &&
         value_ends_with_more(text, "\"waiting_on\": \"");
}

// Whether |args| is nothing or whole members: "status": "CODE", then
// perhaps , "message": "TEXT" with no quote or backslash inside.
static bool status_args_whole(const char* args) {
  if (!*args)
    return true;
  const char* prefix = "\"status\": \"";
  if (strncmp(args, prefix, strlen(prefix)) != 0)
    return false;
  const char* c = args + strlen(prefix);
  while ((*c >= 'A' && *c <= 'Z') || *c == '_')
    ++c;
  if (*c++ != '"')
    return false;
  if (!*c)
    return true;
  const char* message = ", \"message\": \"";
  if (strncmp(c, message, strlen(message)) != 0)
    return false;
  c += strlen(message);
  size_t length = strlen(c);
  if (!length || c[length - 1] != '"')
    return false;
  return strcspn(c, "\"\\") == length - 1;
}

// Every capacity, from none to the default, gives whole args or none: a
// caller's small buffer never holds half a member.
static bool status_args_always_whole(const char* text) {
  hal_status_t failure =
      hal_make_status(HAL_STATUS_RESOURCE_EXHAUSTED, "%s", text);
  hal_status_t statuses[2] = {HAL_OK, failure};
  bool whole = true;
  for (int s = 0; s < 2; ++s) {
    for (size_t capacity = 1; capacity <= HAL_TRACE_STATUS_ARGS; ++capacity) {
      char args[HAL_TRACE_STATUS_ARGS + 8];
      memset(args, 'x', sizeof(args));
      hal_trace_status_args(statuses[s], args, capacity);
      if (strnlen(args, capacity) == capacity || !status_args_whole(args)) {
        fprintf(stderr, "trace_test: status args in %zu bytes: [%.*s]\n",
                capacity, (int)capacity, args);
        whole = false;
      }
    }
  }
  hal_status_free(failure);
  return whole;
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
  // In args text, quotes, backslashes, control characters (DEL too) and
  // bytes past ASCII become '?' (trace.h).
  char safe[16];
  hal_trace_json_text(safe, sizeof(safe),
                      "a\"b\\c\x01"
                      "d\x7f"
                      "e\xc3\xa9");
  if (strcmp(safe, "a?b?c?d?e??") != 0) {
    fprintf(stderr, "trace_test: args text [%s] kept a byte it must not\n",
            safe);
    return 1;
  }
  char text[400];
  nasty(text, sizeof(text));
  if (!status_args_always_whole(text))
    return 1;
  // A name in UTF-8 is written as it is; a byte that is not UTF-8 (a lone
  // lead, a continuation, an overlong form, a surrogate) as U+FFFD.
  hal_trace_instant(
      hal_trace_track("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x9a\x80"), "hal",
      "a\xc3 b\x80 c\xc0\xaf d\xed\xa0\x80 e", NULL);
  const char* written = trace_text();
  if (!strstr(written, "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x9a\x80") ||
      !strstr(written,
              "a\\ufffd b\\ufffd c\\ufffd\\ufffd "
              "d\\ufffd\\ufffd\\ufffd e")) {
    fprintf(stderr, "trace_test: UTF-8 names are not written as they are\n");
    return 1;
  }
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

  // 64 signals, then 64 waits on them parked until a host signal: both
  // lists are longer than their args hold. On cuda_stream over the virtual
  // GPU (the test driver runs no semaphores).
  const char* driver_path = getenv("TRACE_TEST_DRIVER_PATH");
  if (!driver_path) {
    fprintf(stderr,
            "trace_test: long lists skipped: no cuda_stream driver "
            "and virtual GPU in this build\n");
    return 0;
  }
  device = hal_test_create_driver_device(driver_path, "cuda_stream");
  enum { kMany = 64 };
  hal_semaphore_t* many[kMany];
  uint64_t values[kMany];
  for (int i = 0; i < kMany; ++i) {
    many[i] = hal_test_semaphore(0);
    values[i] = 1;
  }
  hal_semaphore_t* gate = hal_test_semaphore(0);
  hal_semaphore_list_t gate_wait = {1, &gate, &one};
  hal_semaphore_list_t many_list = {kMany, many, values};
  status = hal_device_queue_execute(device, 0, &gate_wait, &many_list, 0, NULL);
  if (status == HAL_OK) {
    status = hal_device_queue_execute(device, 0, &many_list, NULL, 0, NULL);
  }
  if (status == HAL_OK)
    status = hal_semaphore_signal(gate, 1);
  if (status == HAL_OK) {
    status = hal_semaphore_list_wait(HAL_WAIT_MODE_ALL, many_list,
                                     hal_infinite_timeout());
  }
  // A queue-ordered buffer: its alloca and dealloca are submissions too,
  // each with its call's span and flow (the checker wants every
  // completion's flow started by a call).
  hal_semaphore_t* memory = hal_test_semaphore(0);
  uint64_t two = 2;
  hal_semaphore_list_t allocated = {1, &memory, &one};
  hal_semaphore_list_t freed = {1, &memory, &two};
  hal_buffer_params_t params = {HAL_MEMORY_TYPE_DEVICE_LOCAL,
                                HAL_BUFFER_USAGE_DEFAULT};
  hal_buffer_t* buffer = NULL;
  if (status == HAL_OK) {
    status = hal_device_queue_alloca(device, 0, NULL, &allocated, params, 256,
                                     &buffer);
  }
  if (status == HAL_OK)
    status = hal_device_queue_dealloca(device, 0, &allocated, &freed, buffer);
  if (status == HAL_OK)
    status = hal_semaphore_wait(memory, 2, hal_infinite_timeout());
  hal_buffer_release(buffer);
  hal_semaphore_release(memory);
  if (status) {
    hal_status_fprint(stderr, status);
    return 1;
  }
  hal_device_release(device);
  for (int i = 0; i < kMany; ++i)
    hal_semaphore_release(many[i]);
  hal_semaphore_release(gate);
  if (!trace_has_long_lists()) {
    fprintf(stderr, "trace_test: a long list does not end with \"+N more\"\n");
    return 1;
  }
  return 0;
}
