// Copyright 2026 The HAL Authors.
//
// The public headers from C++: every header compiles (with -Wall -Wextra
// -Werror, C++17 and C++20: cxx_headers_test.sh), and a C++ program calls
// the API through them: a host semaphore signaled from a std::thread and
// waited on here, a failure read back, a status formatted.

#include <cstdio>
#include <cstring>
#include <thread>

#include "hal/api.h"
#include "hal/library.h"
#include "hal/plugin.h"

static int failures = 0;

static void check(bool condition, const char* what) {
  if (!condition) {
    std::fprintf(stderr, "cxx_api_test: FAILED: %s\n", what);
    ++failures;
  }
}

int main() {
  hal_semaphore_t* semaphore = nullptr;
  hal_status_t status =
      hal_semaphore_create_host(hal_allocator_system(), 0, &semaphore);
  check(status == HAL_OK && semaphore != nullptr, "create a host semaphore");
  if (!semaphore)
    return 1;

  std::thread signaler(
      [semaphore] { hal_status_ignore(hal_semaphore_signal(semaphore, 2)); });
  status = hal_semaphore_wait(semaphore, 2, hal_make_timeout_ns(60000000000));
  check(status == HAL_OK, "wait for a signal from a std::thread");
  signaler.join();
  uint64_t value = 0;
  status = hal_semaphore_query(semaphore, &value);
  check(status == HAL_OK && value == 2, "query the value signaled");

  // A list wait over constant arrays, as C++ callers write them.
  hal_semaphore_t* const semaphores[1] = {semaphore};
  const uint64_t values[1] = {2};
  hal_semaphore_list_t list = {1, semaphores, values};
  status =
      hal_semaphore_list_wait(HAL_WAIT_MODE_ALL, list, hal_make_timeout_ns(0));
  check(status == HAL_OK, "a list wait on a reached value");

  hal_semaphore_fail(semaphore,
                     hal_make_status(HAL_STATUS_ABORTED, "from C++ %d", 17));
  status = hal_semaphore_wait(semaphore, 3, hal_make_timeout_ns(0));
  check(hal_status_code(status) == HAL_STATUS_ABORTED,
        "a failure reaches the waiter");
  char text[256];
  hal_status_format(status, text, sizeof(text));
  check(std::strstr(text, "from C++ 17") != nullptr,
        "the failure's message is formatted");
  hal_status_free(status);
  hal_semaphore_release(semaphore);

  if (failures == 0)
    std::printf("cxx_api_test: ok\n");
  return failures ? 1 : 0;
}
