// Copyright 2026 The HAL Authors.
//
// A fake libroctx64 (built as libroctx64.so.4 in a folder of its own): the
// two entry points the HIP adapter resolves, counting ranges, printing the
// counts and the first range's message at exit, for
// profiler_ranges_test.sh.

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#define FAKE_EXPORT __attribute__((visibility("default")))

// roctx.h's declarations (its header is not on this machine).
FAKE_EXPORT uint64_t roctxRangeStartA(const char* message);
FAKE_EXPORT void roctxRangeStop(uint64_t id);

static atomic_ullong g_started;
static atomic_ullong g_stopped;
static atomic_flag g_first_taken;
static char g_first[128];

FAKE_EXPORT uint64_t roctxRangeStartA(const char* message) {
  if (!atomic_flag_test_and_set(&g_first_taken) && message)
    snprintf(g_first, sizeof(g_first), "%s", message);
  return atomic_fetch_add(&g_started, 1) + 1;
}

FAKE_EXPORT void roctxRangeStop(uint64_t id) {
  if (id != 0)
    atomic_fetch_add(&g_stopped, 1);
}

__attribute__((destructor)) static void fake_report(void) {
  fprintf(stderr,
          "fake-roctx: %llu range(s) started, %llu stopped, first '%s'\n",
          atomic_load(&g_started), atomic_load(&g_stopped), g_first);
}
