// Copyright 2026 The HAL Authors.
//
// Your first HAL program: a device named on the command line, two buffers,
// one command buffer that fills one buffer and copies it into the other,
// submitted BEFORE the host signals what it waits on (wait-before-signal),
// then the result read back and checked.
//
//   cc first_program.c $(pkg-config --cflags --libs hal) -o first_program
//   ./first_program --device=cuda_stream        # or cuda_graph://1, ...
//
// Every HAL call returns a hal_status_t: HAL_OK (NULL) or an error that
// owns its message. CHECK prints the message and exits.

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hal/api.h"

#define CHECK(expr)                                         \
  do {                                                      \
    hal_status_t status_ = (expr);                          \
    if (status_ != HAL_OK) {                                \
      fprintf(stderr, "first_program: %s failed: ", #expr); \
      hal_status_fprint(stderr, status_);                   \
      hal_status_free(status_);                             \
      exit(1);                                              \
    }                                                       \
  } while (0)

enum { kBytes = 4096 };

int main(int argc, char** argv) {
  const char* uri = "cuda_stream";
  for (int i = 1; i < argc; ++i) {
    if (strncmp(argv[i], "--device=", 9) == 0) {
      uri = argv[i] + 9;
    } else {
      fprintf(stderr, "usage: first_program [--device=DRIVER[://INDEX]]\n");
      return 2;
    }
  }

  // 1. The registry finds the driver plugins (HAL_DRIVER_PATH, then the
  //    install's plugin directory); the URI names a driver and a device.
  hal_driver_registry_t* registry = NULL;
  CHECK(hal_driver_registry_create(NULL, hal_allocator_system(), &registry));
  hal_device_t* device = NULL;
  CHECK(hal_driver_registry_create_device(registry, uri, hal_allocator_system(),
                                          &device));
  printf("device: %s (%s)\n", hal_device_info(device)->name, uri);

  // 2. Two device buffers.
  hal_buffer_params_t params = {HAL_MEMORY_TYPE_DEVICE_LOCAL,
                                HAL_BUFFER_USAGE_DEFAULT};
  hal_buffer_t* source = NULL;
  hal_buffer_t* target = NULL;
  CHECK(hal_device_allocate_buffer(device, params, kBytes, &source));
  CHECK(hal_device_allocate_buffer(device, params, kBytes, &target));

  // 3. One command buffer: fill the source with a 4-byte pattern, a
  //    barrier (the copy reads what the fill wrote), copy it over.
  hal_command_buffer_t* commands = NULL;
  CHECK(hal_device_create_command_buffer(
      device, HAL_COMMAND_BUFFER_MODE_ONE_SHOT, &commands));
  CHECK(hal_command_buffer_begin(commands));
  const uint32_t pattern = 0xC0FFEE11u;
  CHECK(hal_command_buffer_fill_buffer(commands, source, 0, kBytes, &pattern,
                                       sizeof(pattern)));
  CHECK(hal_command_buffer_execution_barrier(commands));
  CHECK(hal_command_buffer_copy_buffer(commands, source, 0, target, 0, kBytes));
  CHECK(hal_command_buffer_end(commands));

  // 4. Timeline semaphores: the work waits for |start| to reach 1 and
  //    signals |done| to 1. It is submitted before anyone signals |start|:
  //    the queue holds it (wait-before-signal) until the host does.
  hal_semaphore_t* start = NULL;
  hal_semaphore_t* done = NULL;
  CHECK(hal_device_create_semaphore(device, 0, &start));
  CHECK(hal_device_create_semaphore(device, 0, &done));
  uint64_t one = 1;
  hal_semaphore_list_t waits = {1, &start, &one};
  hal_semaphore_list_t signals = {1, &done, &one};
  CHECK(hal_device_queue_execute(device, 0, &waits, &signals, 1, &commands));
  // The queue keeps what it needs: the command buffer may go now.
  hal_command_buffer_release(commands);

  uint64_t value = 0;
  CHECK(hal_semaphore_query(done, &value));
  printf("submitted; done = %llu before the host signals start\n",
         (unsigned long long)value);
  CHECK(hal_semaphore_signal(start, 1));
  CHECK(hal_semaphore_wait(done, 1, hal_make_timeout_ns(10ll * 1000000000)));

  // 5. Read back and check every word.
  uint32_t* words = malloc(kBytes);
  if (!words)
    return 1;
  CHECK(hal_buffer_read(target, 0, words, kBytes));
  int wrong = 0;
  for (size_t i = 0; i < kBytes / sizeof(uint32_t); ++i)
    wrong += words[i] != pattern;
  free(words);
  printf("%s: %d of %d words wrong\n", wrong ? "FAILED" : "ok", wrong,
         (int)(kBytes / sizeof(uint32_t)));

  // 6. Release in any order: objects keep what they need alive.
  hal_semaphore_release(start);
  hal_semaphore_release(done);
  hal_buffer_release(source);
  hal_buffer_release(target);
  hal_device_release(device);
  hal_driver_registry_free(registry);
  return wrong ? 1 : 0;
}
