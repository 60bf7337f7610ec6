// Copyright 2026 The HAL Authors.
//
// CTS suite "buffer": the device allocator and buffers (CTS.md
// allocator/buffer).

#include "cts.h"

static int setup(void** state) {
  *state = cts_create_device(0);
  return 0;
}

static int teardown(void** state) {
  hal_device_release(*state);
  return 0;
}

// Sizes 1 byte .. 256 MiB, both memory types; first and last bytes written
// and read back.
CTS_CASE(Buffer_AllocateSizes) {
  hal_device_t* device = *state;
  const uint64_t sizes[] = {1, 3, 4096, 1u << 20, 256u << 20};
  const hal_memory_type_t types[] = {HAL_MEMORY_TYPE_DEVICE_LOCAL,
                                     HAL_MEMORY_TYPE_HOST_VISIBLE};
  for (size_t t = 0; t < HAL_ARRAYSIZE(types); ++t) {
    for (size_t i = 0; i < HAL_ARRAYSIZE(sizes); ++i) {
      hal_buffer_t* buffer = cts_allocate_buffer(device, types[t], sizes[i]);
      assert_int_equal(hal_buffer_byte_length(buffer), sizes[i]);
      uint8_t marker = (uint8_t)(i + 1);
      HAL_ASSERT_OK(hal_buffer_write(buffer, 0, &marker, 1));
      HAL_ASSERT_OK(hal_buffer_write(buffer, sizes[i] - 1, &marker, 1));
      uint8_t back = 0;
      HAL_ASSERT_OK(hal_buffer_read(buffer, sizes[i] - 1, &back, 1));
      assert_int_equal(back, marker);
      hal_buffer_release(buffer);
    }
  }
}

CTS_CASE(Buffer_MapWriteReadBackUnaligned) {
  hal_device_t* device = *state;
  hal_buffer_t* buffer =
      cts_allocate_buffer(device, HAL_MEMORY_TYPE_HOST_VISIBLE, 1000);
  uint8_t zeros[1000] = {0};
  HAL_ASSERT_OK(hal_buffer_write(buffer, 0, zeros, sizeof(zeros)));
  hal_buffer_mapping_t mapping;
  HAL_ASSERT_OK(hal_buffer_map_range(buffer, HAL_MAPPING_ACCESS_WRITE, 13, 333,
                                     &mapping));
  for (int i = 0; i < 333; ++i)
    ((uint8_t*)mapping.contents)[i] = (uint8_t)i;
  hal_buffer_unmap(&mapping);
  uint8_t bytes[1000];
  HAL_ASSERT_OK(hal_buffer_read(buffer, 0, bytes, sizeof(bytes)));
  for (int i = 0; i < 1000; ++i) {
    uint8_t expected = (i >= 13 && i < 346) ? (uint8_t)(i - 13) : 0;
    assert_int_equal(bytes[i], expected);
  }
  // Read back through a read mapping too.
  HAL_ASSERT_OK(
      hal_buffer_map_range(buffer, HAL_MAPPING_ACCESS_READ, 14, 1, &mapping));
  assert_int_equal(((uint8_t*)mapping.contents)[0], 1);
  hal_buffer_unmap(&mapping);
  hal_buffer_release(buffer);
}

CTS_CASE(Buffer_ZeroLengthRanges) {
  hal_device_t* device = *state;
  hal_buffer_t* buffer =
      cts_allocate_buffer(device, HAL_MEMORY_TYPE_HOST_VISIBLE, 64);
  hal_buffer_mapping_t mapping;
  HAL_ASSERT_OK(
      hal_buffer_map_range(buffer, HAL_MAPPING_ACCESS_READ, 64, 0, &mapping));
  hal_buffer_unmap(&mapping);
  uint8_t byte = 0;
  HAL_ASSERT_OK(hal_buffer_read(buffer, 10, &byte, 0));
  HAL_ASSERT_OK(hal_buffer_write(buffer, 64, &byte, 0));
  hal_buffer_release(buffer);
}

CTS_CASE(Buffer_OutOfRangeMappingIsRejected) {
  hal_device_t* device = *state;
  hal_buffer_t* buffer =
      cts_allocate_buffer(device, HAL_MEMORY_TYPE_HOST_VISIBLE, 64);
  uint8_t zeros[64] = {0};  // new memory has no defined contents
  HAL_ASSERT_OK(hal_buffer_write(buffer, 0, zeros, sizeof(zeros)));
  hal_buffer_mapping_t mapping;
  HAL_ASSERT_STATUS(
      HAL_STATUS_OUT_OF_RANGE, NULL,
      hal_buffer_map_range(buffer, HAL_MAPPING_ACCESS_READ, 60, 8, &mapping));
  HAL_ASSERT_STATUS(
      HAL_STATUS_OUT_OF_RANGE, NULL,
      hal_buffer_map_range(buffer, HAL_MAPPING_ACCESS_READ, 65, 0, &mapping));
  uint8_t bytes[8] = {1, 1, 1, 1, 1, 1, 1, 1};
  HAL_ASSERT_STATUS(HAL_STATUS_OUT_OF_RANGE, NULL,
                    hal_buffer_write(buffer, 60, bytes, 8));
  cts_expect_bytes(buffer, 56, 8, 0);  // nothing changed
  hal_buffer_release(buffer);
}

CTS_CASE(Buffer_BadUsageIsRejected) {
  hal_device_t* device = *state;
  hal_buffer_t* buffer = NULL;
  hal_buffer_params_t params = {HAL_MEMORY_TYPE_DEVICE_LOCAL,
                                HAL_BUFFER_USAGE_MAPPING};
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, "HOST_VISIBLE",
                    hal_device_allocate_buffer(device, params, 64, &buffer));
  params.usage = 1u << 30;
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, NULL,
                    hal_device_allocate_buffer(device, params, 64, &buffer));
  params.usage = HAL_BUFFER_USAGE_DEFAULT;
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, NULL,
                    hal_device_allocate_buffer(device, params, 0, &buffer));
  buffer = cts_allocate_buffer(device, HAL_MEMORY_TYPE_DEVICE_LOCAL, 64);
  hal_buffer_mapping_t mapping;
  HAL_ASSERT_STATUS(
      HAL_STATUS_FAILED_PRECONDITION, NULL,
      hal_buffer_map_range(buffer, HAL_MAPPING_ACCESS_READ, 0, 8, &mapping));
  hal_buffer_release(buffer);
  hal_memory_stats_t stats;
  HAL_ASSERT_OK(
      hal_device_allocator_query_stats(hal_device_allocator(device), &stats));
  assert_int_equal(stats.allocation_count, 0);
  assert_true(stats.total_bytes > 0);
}

// Q3: a buffer the caller released while a submission still uses it stays
// alive until the submission is done.
CTS_CASE(Buffer_ReleasedWhileInUseStaysAlive) {
  hal_device_t* device = *state;
  hal_buffer_t* source =
      cts_allocate_buffer(device, HAL_MEMORY_TYPE_DEVICE_LOCAL, 4096);
  hal_buffer_t* target =
      cts_allocate_buffer(device, HAL_MEMORY_TYPE_DEVICE_LOCAL, 4096);
  hal_semaphore_t* gate = cts_create_semaphore(device, 0);
  hal_semaphore_t* done = cts_create_semaphore(device, 0);
  hal_command_buffer_t* cb =
      cts_begin_command_buffer(device, HAL_COMMAND_BUFFER_MODE_ONE_SHOT);
  uint32_t pattern = 0xC0FFEE11u;
  HAL_ASSERT_OK(
      hal_command_buffer_fill_buffer(cb, source, 0, 4096, &pattern, 4));
  HAL_ASSERT_OK(hal_command_buffer_execution_barrier(cb));
  HAL_ASSERT_OK(hal_command_buffer_copy_buffer(cb, source, 0, target, 0, 4096));
  HAL_ASSERT_OK(hal_command_buffer_end(cb));
  HAL_ASSERT_OK(cts_submit(device, 0, gate, 1, cb, done, 1));
  hal_command_buffer_release(cb);
  hal_buffer_release(source);  // only the submission holds it now
  HAL_ASSERT_OK(hal_semaphore_signal(gate, 1));
  HAL_ASSERT_OK(cts_wait(done, 1));
  uint32_t words[1024];
  HAL_ASSERT_OK(hal_buffer_read(target, 0, words, sizeof(words)));
  for (int i = 0; i < 1024; ++i)
    assert_int_equal(words[i], pattern);
  hal_buffer_release(target);
  hal_semaphore_release(gate);
  hal_semaphore_release(done);
}

// The test list: CASE binds this program's fixture.
#define CASE(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void) {
  const struct CMUnitTest tests[] = {
      CASE(Buffer_AllocateSizes),
      CASE(Buffer_MapWriteReadBackUnaligned),
      CASE(Buffer_ZeroLengthRanges),
      CASE(Buffer_OutOfRangeMappingIsRejected),
      CASE(Buffer_BadUsageIsRejected),
      CASE(Buffer_ReleasedWhileInUseStaysAlive),
  };
  return cts_main("buffer", tests, HAL_ARRAYSIZE(tests));
}
