// Copyright 2026 The HAL Authors.
//
// A dispatch: a kernel image of your own (examples/scale_kernel.c) loaded
// as an executable, one dispatch over a buffer, read back and checked.
//
//   cc dispatch.c $(pkg-config --cflags --libs hal) -o dispatch
//   ./dispatch --device=cuda_stream --kernel=scale_kernel.vgpu
//
// The image's format follows its file name: *.ptx is "cuda-ptx", anything
// else "vgpu-module" (what the virtual GPU loads); the device must list
// the format (hal_device_properties_t.executable_formats).

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hal/api.h"

#define CHECK(expr)                                    \
  do {                                                 \
    hal_status_t status_ = (expr);                     \
    if (status_ != HAL_OK) {                           \
      fprintf(stderr, "dispatch: %s failed: ", #expr); \
      hal_status_fprint(stderr, status_);              \
      hal_status_free(status_);                        \
      exit(1);                                         \
    }                                                  \
  } while (0)

enum { kCount = 1000, kGroupSize = 64 };

// The whole of |path| (malloc'd) and its size.
static void* read_file(const char* path, size_t* out_size) {
  FILE* file = fopen(path, "rb");
  if (!file)
    return NULL;
  void* data = NULL;
  long size = -1;
  if (fseek(file, 0, SEEK_END) == 0 && (size = ftell(file)) > 0 &&
      fseek(file, 0, SEEK_SET) == 0 && (data = malloc((size_t)size)) &&
      fread(data, 1, (size_t)size, file) != (size_t)size) {
    free(data);
    data = NULL;
  }
  fclose(file);
  *out_size = size > 0 ? (size_t)size : 0;
  return data;
}

int main(int argc, char** argv) {
  const char* uri = "cuda_stream";
  const char* kernel_path = NULL;
  for (int i = 1; i < argc; ++i) {
    if (strncmp(argv[i], "--device=", 9) == 0) {
      uri = argv[i] + 9;
    } else if (strncmp(argv[i], "--kernel=", 9) == 0) {
      kernel_path = argv[i] + 9;
    } else {
      kernel_path = NULL;
      break;
    }
  }
  if (!kernel_path) {
    fprintf(stderr, "usage: dispatch --kernel=FILE [--device=URI]\n");
    return 2;
  }
  size_t image_size = 0;
  void* image = read_file(kernel_path, &image_size);
  if (!image) {
    fprintf(stderr, "dispatch: cannot read %s\n", kernel_path);
    return 1;
  }
  size_t path_length = strlen(kernel_path);
  const char* format =
      path_length > 4 && strcmp(kernel_path + path_length - 4, ".ptx") == 0
          ? "cuda-ptx"
          : "vgpu-module";

  hal_driver_registry_t* registry = NULL;
  CHECK(hal_driver_registry_create(NULL, hal_allocator_system(), &registry));
  hal_device_t* device = NULL;
  CHECK(hal_driver_registry_create_device(registry, uri, hal_allocator_system(),
                                          &device));

  // 1. The executable: the image and the layout of each entry point
  //    (bindings, then 32-bit constants), which the kernel must match.
  const hal_entry_point_params_t entry_points[1] = {{"scale_u32", 1, 3}};
  hal_executable_params_t params = {
      .format = format,
      .data = image,
      .data_size = image_size,
      .entry_point_count = 1,
      .entry_points = entry_points,
  };
  hal_executable_t* executable = NULL;
  CHECK(hal_device_create_executable(device, &params, &executable));
  free(image);  // read during the call only

  // 2. A buffer of 0, 1, 2, ... written from the host.
  uint32_t* words = malloc(kCount * sizeof(uint32_t));
  if (!words)
    return 1;
  for (uint32_t i = 0; i < kCount; ++i)
    words[i] = i;
  hal_buffer_params_t buffer_params = {HAL_MEMORY_TYPE_DEVICE_LOCAL,
                                       HAL_BUFFER_USAGE_DEFAULT};
  hal_buffer_t* buffer = NULL;
  CHECK(hal_device_allocate_buffer(device, buffer_params,
                                   kCount * sizeof(uint32_t), &buffer));
  CHECK(hal_buffer_write(buffer, 0, words, kCount * sizeof(uint32_t)));

  // 3. One dispatch: enough workgroups of 64 threads to cover the buffer;
  //    the kernel's bound check skips the threads past the end.
  hal_command_buffer_t* commands = NULL;
  CHECK(hal_device_create_command_buffer(
      device, HAL_COMMAND_BUFFER_MODE_ONE_SHOT, &commands));
  CHECK(hal_command_buffer_begin(commands));
  const uint32_t constants[3] = {3, 7, kCount};  // factor, offset, count
  const hal_dispatch_binding_t bindings[1] = {{buffer, 0, HAL_WHOLE_BUFFER}};
  const uint32_t workgroup_count[3] = {(kCount + kGroupSize - 1) / kGroupSize,
                                       1, 1};
  const uint32_t workgroup_size[3] = {kGroupSize, 1, 1};
  CHECK(hal_command_buffer_dispatch(commands, executable, 0, workgroup_count,
                                    workgroup_size, constants, 3, bindings, 1));
  CHECK(hal_command_buffer_end(commands));
  hal_semaphore_t* done = NULL;
  CHECK(hal_device_create_semaphore(device, 0, &done));
  uint64_t one = 1;
  hal_semaphore_list_t no_waits = {0, NULL, NULL};
  hal_semaphore_list_t signals = {1, &done, &one};
  CHECK(hal_device_queue_execute(device, 0, &no_waits, &signals, 1, &commands));
  hal_command_buffer_release(commands);
  CHECK(hal_semaphore_wait(done, 1, hal_make_timeout_ns(10ll * 1000000000)));

  // 4. Every word is i * 3 + 7.
  CHECK(hal_buffer_read(buffer, 0, words, kCount * sizeof(uint32_t)));
  int wrong = 0;
  for (uint32_t i = 0; i < kCount; ++i)
    wrong += words[i] != i * 3 + 7;
  free(words);
  printf("dispatch on %s (%s): %s: %d of %d words wrong\n",
         hal_device_info(device)->name, format, wrong ? "FAILED" : "ok", wrong,
         kCount);

  hal_semaphore_release(done);
  hal_buffer_release(buffer);
  hal_executable_release(executable);
  hal_device_release(device);
  hal_driver_registry_free(registry);
  return wrong ? 1 : 0;
}
