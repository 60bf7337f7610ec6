// Copyright 2026 The HAL Authors.
//
// CTS suite "dispatch": executables built from the one kernel source
// (tools/kernels/kernels.c) in the format the device loads, dispatched from
// command buffers (stream replay or graph kernel nodes), results checked on
// the host; and every bad input rejected at create or record time.

#include <math.h>

#include "cts.h"
#include "kernel_images.h"

typedef cts_fixture_t fixture_t;

// The shared fixture plus the kernels' executable.
static int setup(void** state) {
  cts_setup(state);
  fixture_t* f = *state;
  HAL_ASSERT_OK(hal_kernel_create_executable(f->device, &f->executable));
  return 0;
}

static hal_buffer_t* storage(fixture_t* f, uint64_t size) {
  return cts_allocate_buffer(f->device, HAL_MEMORY_TYPE_DEVICE_LOCAL, size);
}

static uint32_t f32_bits(float value) {
  uint32_t bits;
  memcpy(&bits, &value, sizeof(bits));
  return bits;
}

CTS_CASE(Dispatch_ExecutableListsItsEntryPoints) {
  fixture_t* f = *state;
  assert_int_equal(hal_executable_entry_point_count(f->executable),
                   HAL_KERNEL_ENTRY_POINT_COUNT);
  size_t index = 99;
  HAL_ASSERT_OK(
      hal_executable_lookup_entry_point(f->executable, "saxpy", &index));
  assert_int_equal(index, HAL_KERNEL_SAXPY);
  const hal_entry_point_info_t* info =
      hal_executable_entry_point_info(f->executable, index);
  assert_string_equal(info->name, "saxpy");
  assert_int_equal(info->binding_count, 2);
  assert_int_equal(info->constant_count, 2);
  HAL_ASSERT_STATUS(
      HAL_STATUS_NOT_FOUND, "'nope'",
      hal_executable_lookup_entry_point(f->executable, "nope", &index));
  hal_device_properties_t properties;
  HAL_ASSERT_OK(hal_device_query_properties(f->device, &properties));
  assert_true(strlen(properties.executable_formats) > 0);
  assert_true(properties.max_workgroup_size >= 64);
  for (int i = 0; i < 3; ++i) {
    assert_true(properties.max_workgroup_dims[i] >= 1);
    assert_true(properties.max_workgroup_dims[i] <=
                properties.max_workgroup_size);
    assert_true(properties.max_workgroup_count[i] >= 1);
  }
}

CTS_CASE(Dispatch_Fill) {
  fixture_t* f = *state;
  enum { kCount = 1000 };
  hal_buffer_t* data = storage(f, kCount * 4);
  hal_command_buffer_t* cb =
      cts_begin_command_buffer(f->device, HAL_COMMAND_BUFFER_MODE_ONE_SHOT);
  uint32_t constants[2] = {0xFEEDBEEFu, kCount};
  hal_dispatch_binding_t binding = {data, 0, HAL_WHOLE_BUFFER};
  uint32_t count[3] = {(kCount + 255) / 256, 1, 1};
  uint32_t size[3] = {256, 1, 1};
  HAL_ASSERT_OK(hal_command_buffer_dispatch(cb, f->executable,
                                            HAL_KERNEL_FILL_U32, count, size,
                                            constants, 2, &binding, 1));
  HAL_ASSERT_OK(hal_command_buffer_end(cb));
  cts_fixture_run(f, 0, cb);
  uint32_t words[kCount];
  HAL_ASSERT_OK(hal_buffer_read(data, 0, words, sizeof(words)));
  for (int i = 0; i < kCount; ++i)
    assert_int_equal(words[i], 0xFEEDBEEFu);
  hal_command_buffer_release(cb);
  hal_buffer_release(data);
}

CTS_CASE(Dispatch_Saxpy) {
  fixture_t* f = *state;
  enum { kCount = 777 };
  float x[kCount], y[kCount];
  for (int i = 0; i < kCount; ++i) {
    x[i] = (float)i * 0.5f;
    y[i] = 100.0f - (float)i;
  }
  hal_buffer_t* xb = storage(f, sizeof(x));
  hal_buffer_t* yb = storage(f, sizeof(y));
  HAL_ASSERT_OK(hal_buffer_write(xb, 0, x, sizeof(x)));
  HAL_ASSERT_OK(hal_buffer_write(yb, 0, y, sizeof(y)));
  hal_command_buffer_t* cb =
      cts_begin_command_buffer(f->device, HAL_COMMAND_BUFFER_MODE_ONE_SHOT);
  uint32_t constants[2] = {f32_bits(2.5f), kCount};
  hal_dispatch_binding_t bindings[2] = {{xb, 0, HAL_WHOLE_BUFFER},
                                        {yb, 0, HAL_WHOLE_BUFFER}};
  uint32_t count[3] = {(kCount + 63) / 64, 1, 1};
  uint32_t size[3] = {64, 1, 1};
  HAL_ASSERT_OK(hal_command_buffer_dispatch(cb, f->executable, HAL_KERNEL_SAXPY,
                                            count, size, constants, 2, bindings,
                                            2));
  HAL_ASSERT_OK(hal_command_buffer_end(cb));
  cts_fixture_run(f, 0, cb);
  float out[kCount];
  HAL_ASSERT_OK(hal_buffer_read(yb, 0, out, sizeof(out)));
  for (int i = 0; i < kCount; ++i) {
    float expected = 2.5f * x[i] + y[i];
    if (fabsf(out[i] - expected) > 1e-4f * (1.0f + fabsf(expected))) {
      fail_msg("y[%d] = %f, expected %f", i, (double)out[i], (double)expected);
    }
  }
  hal_command_buffer_release(cb);
  hal_buffer_release(xb);
  hal_buffer_release(yb);
}

CTS_CASE(Dispatch_Dispatch2DGridWithBindingOffset) {
  fixture_t* f = *state;
  enum { kWidth = 40, kHeight = 24, kOffsetWords = 16 };
  const uint64_t size_bytes = (kWidth * kHeight + kOffsetWords) * 4;
  hal_buffer_t* data = storage(f, size_bytes);
  uint8_t* zeros = calloc(1, size_bytes);
  HAL_ASSERT_OK(hal_buffer_write(data, 0, zeros, size_bytes));
  free(zeros);
  hal_command_buffer_t* cb =
      cts_begin_command_buffer(f->device, HAL_COMMAND_BUFFER_MODE_ONE_SHOT);
  uint32_t constants[3] = {kWidth, kHeight, 7};
  hal_dispatch_binding_t binding = {data, kOffsetWords * 4, HAL_WHOLE_BUFFER};
  uint32_t count[3] = {(kWidth + 7) / 8, (kHeight + 7) / 8, 1};
  uint32_t size[3] = {8, 8, 1};
  HAL_ASSERT_OK(hal_command_buffer_dispatch(cb, f->executable,
                                            HAL_KERNEL_IOTA_2D, count, size,
                                            constants, 3, &binding, 1));
  HAL_ASSERT_OK(hal_command_buffer_end(cb));
  cts_fixture_run(f, 0, cb);
  uint32_t* words = malloc(size_bytes);
  HAL_ASSERT_OK(hal_buffer_read(data, 0, words, size_bytes));
  for (int i = 0; i < kOffsetWords; ++i)
    assert_int_equal(words[i], 0);
  for (uint32_t y = 0; y < kHeight; ++y) {
    for (uint32_t x = 0; x < kWidth; ++x) {
      assert_int_equal(words[kOffsetWords + y * kWidth + x],
                       ((y << 16) | x) + 7);
    }
  }
  free(words);
  hal_command_buffer_release(cb);
  hal_buffer_release(data);
}

// Many dependent dispatches separated by barriers, mixed with transfers, in
// a reusable command buffer submitted several times.
CTS_CASE(Dispatch_ManyDispatchesWithBarriers) {
  fixture_t* f = *state;
  enum { kCount = 300, kDispatches = 40 };
  hal_buffer_t* data = storage(f, kCount * 4);
  hal_buffer_t* copy = storage(f, kCount * 4);
  hal_command_buffer_t* cb =
      cts_begin_command_buffer(f->device, HAL_COMMAND_BUFFER_MODE_REUSABLE);
  uint32_t zero = 0;
  HAL_ASSERT_OK(
      hal_command_buffer_fill_buffer(cb, data, 0, kCount * 4, &zero, 4));
  uint32_t count[3] = {(kCount + 127) / 128, 1, 1};
  uint32_t size[3] = {128, 1, 1};
  hal_dispatch_binding_t binding = {data, 0, HAL_WHOLE_BUFFER};
  for (uint32_t i = 0; i < kDispatches; ++i) {
    HAL_ASSERT_OK(hal_command_buffer_execution_barrier(cb));
    uint32_t constants[2] = {i + 1, kCount};
    HAL_ASSERT_OK(hal_command_buffer_dispatch(cb, f->executable,
                                              HAL_KERNEL_ADD_U32, count, size,
                                              constants, 2, &binding, 1));
  }
  HAL_ASSERT_OK(hal_command_buffer_execution_barrier(cb));
  HAL_ASSERT_OK(
      hal_command_buffer_copy_buffer(cb, data, 0, copy, 0, kCount * 4));
  HAL_ASSERT_OK(hal_command_buffer_end(cb));
  for (int round = 0; round < 3; ++round) {
    cts_fixture_run(f, 0, cb);
    uint32_t words[kCount];
    HAL_ASSERT_OK(hal_buffer_read(copy, 0, words, sizeof(words)));
    for (int i = 0; i < kCount; ++i) {
      assert_int_equal(words[i], kDispatches * (kDispatches + 1) / 2);
    }
  }
  hal_command_buffer_release(cb);
  hal_buffer_release(data);
  hal_buffer_release(copy);
}

CTS_CASE(Dispatch_BadExecutablesAreRejectedAtCreate) {
  fixture_t* f = *state;
  const hal_kernel_image_t* image = hal_kernel_image_for(f->device, NULL);
  assert_non_null(image);
  hal_executable_t* executable = NULL;
  hal_executable_params_t params = {
      .format = "no-such-format",
      .data = image->data,
      .data_size = image->size,
      .entry_point_count = HAL_KERNEL_ENTRY_POINT_COUNT,
      .entry_points = hal_kernel_entry_points,
  };
  HAL_ASSERT_STATUS(
      HAL_STATUS_UNIMPLEMENTED, image->format,
      hal_device_create_executable(f->device, &params, &executable));
  assert_null(executable);
  params.format = image->format;
  // Truncated: half the image.
  params.data_size = image->size / 2;
  hal_status_t status =
      hal_device_create_executable(f->device, &params, &executable);
  assert_int_not_equal(hal_status_code(status), HAL_STATUS_OK);
  hal_status_free(status);
  assert_null(executable);
  // Corrupt: the right size, wrong bytes.
  uint8_t* garbage = malloc(image->size);
  cts_random_t random = cts_random_make(7);
  for (size_t i = 0; i < image->size; ++i) {
    garbage[i] = (uint8_t)cts_random_next(&random);
  }
  params.data = garbage;
  params.data_size = image->size;
  status = hal_device_create_executable(f->device, &params, &executable);
  assert_int_not_equal(hal_status_code(status), HAL_STATUS_OK);
  hal_status_free(status);
  free(garbage);
  // Corrupt ELF headers in an image of the right size: the program header
  // count or offset, or a segment, points past the data (the runtime would
  // read past it: found by the API fuzzer). Offsets are the ELF64 header's.
  if (strcmp(image->format, "vgpu-module") == 0) {
    const struct {
      size_t offset;  // in the ELF header
      size_t width;
      uint64_t value;
    } corruptions[] = {{56, 2, 0xFFFF}, {32, 8, 0x191918}, {32, 8, ~0ull}};
    size_t elf_offset = 0;
    if (image->size >= 24 && memcmp(image->data, "VGPUMOD1", 8) == 0) {
      uint32_t header_size = 0;
      memcpy(&header_size, (const uint8_t*)image->data + 12, 4);
      elf_offset = header_size;
    }
    uint8_t* corrupt = malloc(image->size);
    assert_non_null(corrupt);
    // A program header table placed before the image, at minus its own
    // length: offset plus length wraps to 0, which passes a check by sum.
    uint16_t phentsize = 0, phnum = 0;
    memcpy(&phentsize, (const uint8_t*)image->data + elf_offset + 54, 2);
    memcpy(&phnum, (const uint8_t*)image->data + elf_offset + 56, 2);
    memcpy(corrupt, image->data, image->size);
    uint64_t before = 0 - (uint64_t)phentsize * phnum;
    memcpy(corrupt + elf_offset + 32, &before, 8);
    params.data = corrupt;
    HAL_ASSERT_STATUS(
        HAL_STATUS_INVALID_ARGUMENT, "program header table",
        hal_device_create_executable(f->device, &params, &executable));
    assert_null(executable);
    for (size_t c = 0; c < HAL_ARRAYSIZE(corruptions); ++c) {
      memcpy(corrupt, image->data, image->size);
      memcpy(corrupt + elf_offset + corruptions[c].offset,
             &corruptions[c].value, corruptions[c].width);
      params.data = corrupt;
      HAL_ASSERT_STATUS(
          HAL_STATUS_INVALID_ARGUMENT, "corrupt",
          hal_device_create_executable(f->device, &params, &executable));
      assert_null(executable);
    }
    free(corrupt);
    // The image behind a VGPUMOD1 header (vgpu/vgpu_module.h: magic,
    // version 1, header size, image size) that announces fewer bytes than
    // the ELF's headers name: the runtime maps only what the header
    // announces, so the rest would be read past the mapping.
    const uint8_t* elf = (const uint8_t*)image->data + elf_offset;
    uint64_t elf_size = image->size - elf_offset;
    uint8_t* headed = malloc(24 + elf_size);
    assert_non_null(headed);
    uint32_t version = 1, header_size = 24;
    uint64_t short_size = elf_size / 2;
    memcpy(headed, "VGPUMOD1", 8);
    memcpy(headed + 8, &version, 4);
    memcpy(headed + 12, &header_size, 4);
    memcpy(headed + 16, &short_size, 8);
    memcpy(headed + 24, elf, elf_size);
    params.data = headed;
    params.data_size = 24 + elf_size;
    HAL_ASSERT_STATUS(
        HAL_STATUS_INVALID_ARGUMENT, "corrupt",
        hal_device_create_executable(f->device, &params, &executable));
    assert_null(executable);
    // The same header announcing every byte loads.
    memcpy(headed + 16, &elf_size, 8);
    HAL_ASSERT_OK(
        hal_device_create_executable(f->device, &params, &executable));
    hal_executable_release(executable);
    executable = NULL;
    free(headed);
    params.data_size = image->size;
  }
  // Unknown entry point.
  hal_entry_point_params_t unknown = {"no_such_kernel", 1, 0};
  params.data = image->data;
  params.entry_points = &unknown;
  params.entry_point_count = 1;
  HAL_ASSERT_STATUS(
      HAL_STATUS_NOT_FOUND, "no_such_kernel",
      hal_device_create_executable(f->device, &params, &executable));
  // Malformed entry point lists.
  params.entry_point_count = 0;
  HAL_ASSERT_STATUS(
      HAL_STATUS_INVALID_ARGUMENT, NULL,
      hal_device_create_executable(f->device, &params, &executable));
  hal_entry_point_params_t too_many = {"fill_u32", 99, 0};
  params.entry_points = &too_many;
  params.entry_point_count = 1;
  HAL_ASSERT_STATUS(
      HAL_STATUS_INVALID_ARGUMENT, "limits",
      hal_device_create_executable(f->device, &params, &executable));
  params.data = NULL;
  HAL_ASSERT_STATUS(
      HAL_STATUS_INVALID_ARGUMENT, NULL,
      hal_device_create_executable(f->device, &params, &executable));
}

// An entry point declared with a layout its kernel does not take is
// refused at creation where the runtime says a kernel's parameters
// (cuFuncGetParamInfo, CUDA 12.4); launched, it would read wrong arguments.
CTS_CASE(Dispatch_LayoutItsKernelDoesNotTakeIsRejectedAtCreate) {
  fixture_t* f = *state;
  hal_device_properties_t properties;
  HAL_ASSERT_OK(hal_device_query_properties(f->device, &properties));
  if (strncmp(cts_context.driver_name, "cuda", 4) != 0 ||
      properties.driver_version < 12040) {
    HAL_TEST_SKIP(
        "the runtime has no query of a kernel's parameters (CUDA 12.4's "
        "cuFuncGetParamInfo; HIP has none): the layout is the caller's word "
        "(docs/dispatch.md)");
  }
  const hal_kernel_image_t* image = hal_kernel_image_for(f->device, NULL);
  assert_non_null(image);
  // fill_u32 takes one binding and two constants (8, 4, 4 bytes).
  static const struct {
    hal_entry_point_params_t entry;
    const char* says;
  } wrong[] = {
      {{"fill_u32", 0, 2}, "takes more than 2 parameter(s) of 8, 4, ..."},
      {{"fill_u32", 0, 3}, "takes 3 parameter(s) of 8, 4, 4 bytes"},
      {{"fill_u32", 1, 1}, "takes more than 2 parameter(s)"},
      {{"fill_u32", 2, 1}, "of 8, 4, 4 bytes"},
      {{"fill_u32", 1, 3}, "takes 3 parameter(s)"},
  };
  hal_executable_params_t params = {
      .format = image->format,
      .data = image->data,
      .data_size = image->size,
      .entry_point_count = 1,
  };
  for (size_t i = 0; i < HAL_ARRAYSIZE(wrong); ++i) {
    params.entry_points = &wrong[i].entry;
    hal_executable_t* executable = NULL;
    hal_status_t status =
        hal_device_create_executable(f->device, &params, &executable);
    HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, "entry point 'fill_u32'",
                      hal_status_clone(status));
    HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, wrong[i].says, status);
    assert_null(executable);
  }
  // The right layout loads.
  hal_entry_point_params_t right = {"fill_u32", 1, 2};
  params.entry_points = &right;
  hal_executable_t* executable = NULL;
  HAL_ASSERT_OK(hal_device_create_executable(f->device, &params, &executable));
  hal_executable_release(executable);
}

// Where the layout is the caller's word (HIP), an entry point declared with
// fewer arguments than its kernel takes has its launch refused by a runtime
// that reads the kernel's own count, as the virtual GPU does: the driver
// hands it NULL past the dispatch's arguments, never what an earlier
// dispatch left there. A graph driver's end() fails, a stream driver's
// submission fails at issue; the device goes on.
CTS_CASE(Dispatch_EntryPointDeclaredWithFewerArgumentsIsRefusedAtLaunch) {
  fixture_t* f = *state;
  if (!getenv("VGPU_STRICT")) {
    HAL_TEST_SKIP(
        "a real runtime launching a kernel with fewer arguments than it "
        "takes reads past them (undefined); the virtual GPU's runs, which "
        "set VGPU_STRICT, refuse it");
  }
  const hal_kernel_image_t* image = hal_kernel_image_for(f->device, NULL);
  assert_non_null(image);
  // fill_u32 takes one binding and two constants; declared with one.
  hal_entry_point_params_t short_entry = {"fill_u32", 1, 1};
  hal_executable_params_t params = {
      .format = image->format,
      .data = image->data,
      .data_size = image->size,
      .entry_point_count = 1,
      .entry_points = &short_entry,
  };
  hal_executable_t* short_executable = NULL;
  hal_status_t created =
      hal_device_create_executable(f->device, &params, &short_executable);
  if (hal_status_code(created) == HAL_STATUS_INVALID_ARGUMENT) {
    hal_status_free(created);
    HAL_TEST_SKIP(
        "this runtime checks a layout at creation "
        "(Dispatch_LayoutItsKernelDoesNotTakeIsRejectedAtCreate)");
  }
  HAL_ASSERT_OK(created);
  enum { kWords = 64 };
  hal_buffer_t* data = storage(f, kWords * 4);
  hal_dispatch_binding_t binding = {data, 0, HAL_WHOLE_BUFFER};
  uint32_t count[3] = {1, 1, 1};
  uint32_t size[3] = {kWords, 1, 1};
  for (uint32_t round = 0; round < 3; ++round) {
    // A right dispatch first, ended and issued just before the short one,
    // so the short one's missing slot is where the right one's was.
    uint32_t good_value = 0x600D0000u + round;
    uint32_t constants[2] = {good_value, kWords};
    hal_command_buffer_t* good =
        cts_begin_command_buffer(f->device, HAL_COMMAND_BUFFER_MODE_ONE_SHOT);
    HAL_ASSERT_OK(hal_command_buffer_dispatch(good, f->executable,
                                              HAL_KERNEL_FILL_U32, count, size,
                                              constants, 2, &binding, 1));
    HAL_ASSERT_OK(hal_command_buffer_end(good));
    uint32_t short_constant = 0xBAD00000u + round;
    hal_command_buffer_t* bad =
        cts_begin_command_buffer(f->device, HAL_COMMAND_BUFFER_MODE_ONE_SHOT);
    HAL_ASSERT_OK(hal_command_buffer_dispatch(bad, short_executable, 0, count,
                                              size, &short_constant, 1,
                                              &binding, 1));
    hal_status_t ended = hal_command_buffer_end(bad);
    hal_semaphore_t* done = cts_create_semaphore(f->device, 0);
    HAL_ASSERT_OK(cts_submit(f->device, 0, NULL, 0, good, done, 1));
    if (ended == HAL_OK) {
      HAL_ASSERT_OK(cts_submit(f->device, 0, done, 1, bad, done, 2));
      hal_status_t launched = cts_wait(done, 2);
      if (launched == HAL_OK)
        fail_msg("round %u: a launch short of an argument ran", round);
      hal_status_free(launched);
    } else {
      hal_status_free(ended);  // a graph driver's kernel node
      HAL_ASSERT_OK(cts_wait(done, 1));
    }
    uint32_t words[kWords];
    HAL_ASSERT_OK(hal_buffer_read(data, 0, words, sizeof(words)));
    for (int i = 0; i < kWords; ++i)
      assert_int_equal(words[i], good_value);
    hal_semaphore_release(done);
    hal_command_buffer_release(bad);
    hal_command_buffer_release(good);
  }
  hal_executable_release(short_executable);
  hal_buffer_release(data);
}

CTS_CASE(Dispatch_BadDispatchesAreRejectedAtRecord) {
  fixture_t* f = *state;
  hal_buffer_t* data = storage(f, 256);
  hal_buffer_t* transfer_only = NULL;
  hal_buffer_params_t params = {HAL_MEMORY_TYPE_DEVICE_LOCAL,
                                HAL_BUFFER_USAGE_TRANSFER};
  HAL_ASSERT_OK(
      hal_device_allocate_buffer(f->device, params, 256, &transfer_only));
  hal_command_buffer_t* cb =
      cts_begin_command_buffer(f->device, HAL_COMMAND_BUFFER_MODE_ONE_SHOT);
  uint32_t constants[3] = {1, 64, 0};
  hal_dispatch_binding_t binding = {data, 0, HAL_WHOLE_BUFFER};
  uint32_t count[3] = {1, 1, 1};
  uint32_t size[3] = {64, 1, 1};
  // Wrong argument counts.
  HAL_ASSERT_STATUS(
      HAL_STATUS_INVALID_ARGUMENT, "takes 2 bindings",
      hal_command_buffer_dispatch(cb, f->executable, HAL_KERNEL_SAXPY, count,
                                  size, constants, 2, &binding, 1));
  HAL_ASSERT_STATUS(
      HAL_STATUS_INVALID_ARGUMENT, NULL,
      hal_command_buffer_dispatch(cb, f->executable, HAL_KERNEL_FILL_U32, count,
                                  size, constants, 3, &binding, 1));
  // Unknown entry point index.
  HAL_ASSERT_STATUS(
      HAL_STATUS_OUT_OF_RANGE, NULL,
      hal_command_buffer_dispatch(cb, f->executable, 42, count, size, constants,
                                  2, &binding, 1));
  // Bindings out of range, and without DISPATCH_STORAGE usage.
  hal_dispatch_binding_t outside = {data, 200, 100};
  HAL_ASSERT_STATUS(
      HAL_STATUS_OUT_OF_RANGE, "binding 0",
      hal_command_buffer_dispatch(cb, f->executable, HAL_KERNEL_FILL_U32, count,
                                  size, constants, 2, &outside, 1));
  hal_dispatch_binding_t wrong_usage = {transfer_only, 0, HAL_WHOLE_BUFFER};
  HAL_ASSERT_STATUS(
      HAL_STATUS_INVALID_ARGUMENT, "DISPATCH_STORAGE",
      hal_command_buffer_dispatch(cb, f->executable, HAL_KERNEL_FILL_U32, count,
                                  size, constants, 2, &wrong_usage, 1));
  // Grids of zero or beyond the device's limits.
  uint32_t zero_count[3] = {0, 1, 1};
  HAL_ASSERT_STATUS(
      HAL_STATUS_INVALID_ARGUMENT, "zero",
      hal_command_buffer_dispatch(cb, f->executable, HAL_KERNEL_FILL_U32,
                                  zero_count, size, constants, 2, &binding, 1));
  uint32_t huge_size[3] = {4096, 4096, 1};
  HAL_ASSERT_STATUS(
      HAL_STATUS_OUT_OF_RANGE, "threads",
      hal_command_buffer_dispatch(cb, f->executable, HAL_KERNEL_FILL_U32, count,
                                  huge_size, constants, 2, &binding, 1));
  // Within the thread count but beyond a dimension's limit (CUDA's z: 64),
  // and sizes whose product wraps 64 bits.
  hal_device_properties_t properties;
  HAL_ASSERT_OK(hal_device_query_properties(f->device, &properties));
  uint32_t deep_size[3] = {1, 1, properties.max_workgroup_dims[2] + 1};
  if (deep_size[2] <= properties.max_workgroup_size) {
    HAL_ASSERT_STATUS(HAL_STATUS_OUT_OF_RANGE, "in dimension 2",
                      hal_command_buffer_dispatch(
                          cb, f->executable, HAL_KERNEL_FILL_U32, count,
                          deep_size, constants, 2, &binding, 1));
  }
  uint32_t wrapping_sizes[2][3] = {{1u << 31, 1u << 31, 4},
                                   {1u << 22, 1u << 21, 1u << 21}};
  for (int i = 0; i < 2; ++i) {
    HAL_ASSERT_STATUS(HAL_STATUS_OUT_OF_RANGE, "exceed",
                      hal_command_buffer_dispatch(
                          cb, f->executable, HAL_KERNEL_FILL_U32, count,
                          wrapping_sizes[i], constants, 2, &binding, 1));
  }
  uint32_t huge_count[3] = {1, 70000, 1};
  HAL_ASSERT_STATUS(
      HAL_STATUS_OUT_OF_RANGE, "workgroups",
      hal_command_buffer_dispatch(cb, f->executable, HAL_KERNEL_FILL_U32,
                                  huge_count, size, constants, 2, &binding, 1));
  HAL_ASSERT_STATUS(
      HAL_STATUS_INVALID_ARGUMENT, NULL,
      hal_command_buffer_dispatch(cb, NULL, HAL_KERNEL_FILL_U32, count, size,
                                  constants, 2, &binding, 1));
  HAL_ASSERT_OK(hal_command_buffer_end(cb));
  hal_command_buffer_info_t info;
  HAL_ASSERT_OK(hal_command_buffer_query_info(cb, &info));
  assert_int_equal(info.op_count, 0);  // nothing was recorded
  hal_command_buffer_release(cb);
  hal_buffer_release(data);
  hal_buffer_release(transfer_only);
}

// The executable outlives the caller's reference while a submission uses
// it (Q3).
CTS_CASE(Dispatch_ExecutableReleasedWhileInUse) {
  fixture_t* f = *state;
  hal_executable_t* executable = NULL;
  HAL_ASSERT_OK(hal_kernel_create_executable(f->device, &executable));
  hal_buffer_t* data = storage(f, 64 * 4);
  hal_semaphore_t* gate = cts_create_semaphore(f->device, 0);
  hal_semaphore_t* done = cts_create_semaphore(f->device, 0);
  hal_command_buffer_t* cb =
      cts_begin_command_buffer(f->device, HAL_COMMAND_BUFFER_MODE_ONE_SHOT);
  uint32_t constants[2] = {0xABCDu, 64};
  hal_dispatch_binding_t binding = {data, 0, HAL_WHOLE_BUFFER};
  uint32_t count[3] = {1, 1, 1};
  uint32_t size[3] = {64, 1, 1};
  HAL_ASSERT_OK(hal_command_buffer_dispatch(cb, executable, HAL_KERNEL_FILL_U32,
                                            count, size, constants, 2, &binding,
                                            1));
  HAL_ASSERT_OK(hal_command_buffer_end(cb));
  HAL_ASSERT_OK(cts_submit(f->device, 0, gate, 1, cb, done, 1));
  hal_command_buffer_release(cb);
  hal_executable_release(executable);
  HAL_ASSERT_OK(hal_semaphore_signal(gate, 1));
  HAL_ASSERT_OK(cts_wait(done, 1));
  uint32_t words[64];
  HAL_ASSERT_OK(hal_buffer_read(data, 0, words, sizeof(words)));
  for (int i = 0; i < 64; ++i)
    assert_int_equal(words[i], 0xABCDu);
  hal_semaphore_release(gate);
  hal_semaphore_release(done);
  hal_buffer_release(data);
}

// The test list: CASE binds this program's fixture.
#define CASE(name) cmocka_unit_test_setup_teardown(name, setup, cts_teardown)

int main(void) {
  const struct CMUnitTest tests[] = {
      CASE(Dispatch_ExecutableListsItsEntryPoints),
      CASE(Dispatch_Fill),
      CASE(Dispatch_Saxpy),
      CASE(Dispatch_Dispatch2DGridWithBindingOffset),
      CASE(Dispatch_ManyDispatchesWithBarriers),
      CASE(Dispatch_BadExecutablesAreRejectedAtCreate),
      CASE(Dispatch_LayoutItsKernelDoesNotTakeIsRejectedAtCreate),
      CASE(Dispatch_EntryPointDeclaredWithFewerArgumentsIsRefusedAtLaunch),
      CASE(Dispatch_BadDispatchesAreRejectedAtRecord),
      CASE(Dispatch_ExecutableReleasedWhileInUse),
  };
  return cts_main("dispatch", tests, HAL_ARRAYSIZE(tests));
}
