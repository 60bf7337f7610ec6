// Copyright 2026 The HAL Authors.
//
// Driven by exit_in_flight_test.py: returns from main with work in flight
// on both queues of a device it never releases, after DELAY_US. A program
// may do that (docs/design.md: libhal drains its release queue at exit);
// the process must end cleanly whichever of its threads are still inside
// the vendor runtime when the runtime's own teardown runs. The work turns
// over the shapes whose memory libhal owns and the device or libhal's own
// threads still touch: a fill; a command buffer with inline update data
// (the device copies from the recording); and reads and writes of a file
// (libhal's file thread copies through pinned staging memory).
//   exit_probe DRIVER SUBMISSIONS DELAY_US

#define _DEFAULT_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "hal/api.h"
#include "probe.h"

enum { BUFFER_BYTES = 1 << 20, UPDATE_BYTES = 1 << 16, FILE_BYTES = 1 << 18 };
static unsigned char update_data[UPDATE_BYTES];
static unsigned char file_data[FILE_BYTES];

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: exit_probe DRIVER SUBMISSIONS DELAY_US\n");
    return 2;
  }
  int count = atoi(argv[2]);
  hal_driver_registry_t* registry = NULL;
  hal_device_t* device = NULL;
  PROBE_CHECK(
      hal_driver_registry_create(NULL, hal_allocator_system(), &registry));
  PROBE_CHECK(hal_driver_registry_create_device(
      registry, argv[1], hal_allocator_system(), &device));
  hal_buffer_t* buffer = NULL;
  PROBE_CHECK(hal_device_allocate_buffer(
      device,
      (hal_buffer_params_t){HAL_MEMORY_TYPE_DEVICE_LOCAL,
                            HAL_BUFFER_USAGE_DEFAULT},
      BUFFER_BYTES, &buffer));
  hal_semaphore_t* timeline = NULL;
  PROBE_CHECK(hal_device_create_semaphore(device, 0, &timeline));
  hal_file_t* file = NULL;
  PROBE_CHECK(hal_file_from_memory(file_data, sizeof(file_data),
                                   HAL_FILE_ACCESS_READ_WRITE, &file));
  uint32_t queues = hal_device_info(device)->queue_count;
  for (int i = 0; i < count; ++i) {
    uint64_t wait = (uint64_t)i, signal = (uint64_t)i + 1;
    uint32_t pattern = (uint32_t)i;
    hal_semaphore_list_t waits = {1, &timeline, &wait};
    hal_semaphore_list_t signals = {1, &timeline, &signal};
    uint32_t queue = (uint32_t)i % queues;
    if (i % 4 == 1) {
      // A recorded command buffer (a graph on graph drivers, destroyed on
      // libhal's release thread once its submission is done).
      hal_command_buffer_t* command_buffer = NULL;
      PROBE_CHECK(hal_device_create_command_buffer(
          device, HAL_COMMAND_BUFFER_MODE_ONE_SHOT, &command_buffer));
      PROBE_CHECK(hal_command_buffer_begin(command_buffer));
      PROBE_CHECK(hal_command_buffer_fill_buffer(command_buffer, buffer, 0,
                                                 BUFFER_BYTES, &pattern, 4));
      PROBE_CHECK(hal_command_buffer_update_buffer(command_buffer, update_data,
                                                   0, buffer, 0, UPDATE_BYTES));
      PROBE_CHECK(hal_command_buffer_end(command_buffer));
      PROBE_CHECK(hal_device_queue_execute(device, queue, &waits, &signals, 1,
                                           &command_buffer));
      hal_command_buffer_release(command_buffer);
    } else if (i % 4 == 2) {
      PROBE_CHECK(hal_device_queue_read(device, queue, &waits, &signals, file,
                                        0, buffer, 0, FILE_BYTES));
    } else if (i % 4 == 3) {
      PROBE_CHECK(hal_device_queue_write(device, queue, &waits, &signals,
                                         buffer, 0, file, 0, FILE_BYTES));
    } else {
      PROBE_CHECK(hal_device_queue_fill(device, queue, &waits, &signals, buffer,
                                        0, BUFFER_BYTES, &pattern, 4));
    }
  }
  usleep((useconds_t)atoi(argv[3]));
  return 0;  // the device, its buffer, file and semaphore are never released
}
