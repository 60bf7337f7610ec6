// Copyright 2026 The HAL Authors.
//
// Buffers and the device allocator through the test plugin: memory types,
// usage, mapping, read/write helpers and range validation.

#include "hal_test.h"

static hal_buffer_t* allocate(hal_device_t* device, hal_memory_type_t type,
                              hal_buffer_usage_t usage, uint64_t size) {
  hal_buffer_t* buffer = NULL;
  hal_buffer_params_t params = {type, usage};
  HAL_ASSERT_OK(hal_device_allocate_buffer(device, params, size, &buffer));
  return buffer;
}

static void Buffer_SizesFromOneByte(void** state) {
  hal_device_t* device = hal_test_create_device();
  const uint64_t sizes[] = {1, 3, 4096, 65537, 1u << 20};
  for (size_t i = 0; i < HAL_ARRAYSIZE(sizes); ++i) {
    hal_buffer_t* buffer = allocate(device, HAL_MEMORY_TYPE_DEVICE_LOCAL,
                                    HAL_BUFFER_USAGE_DEFAULT, sizes[i]);
    assert_int_equal(hal_buffer_byte_length(buffer), sizes[i]);
    assert_int_equal(hal_buffer_memory_type(buffer),
                     HAL_MEMORY_TYPE_DEVICE_LOCAL);
    assert_ptr_equal(hal_buffer_device(buffer), device);
    hal_buffer_release(buffer);
  }
  hal_memory_stats_t stats;
  HAL_ASSERT_OK(
      hal_device_allocator_query_stats(hal_device_allocator(device), &stats));
  assert_int_equal(stats.allocation_count, 0);
  hal_device_release(device);
}

static void Buffer_MapWriteReadBack(void** state) {
  hal_device_t* device = hal_test_create_device();
  hal_buffer_t* buffer =
      allocate(device, HAL_MEMORY_TYPE_HOST_VISIBLE,
               HAL_BUFFER_USAGE_DEFAULT | HAL_BUFFER_USAGE_MAPPING, 100);
  hal_buffer_mapping_t mapping;
  // Unaligned offset and length.
  HAL_ASSERT_OK(
      hal_buffer_map_range(buffer, HAL_MAPPING_ACCESS_WRITE, 3, 17, &mapping));
  assert_int_equal(mapping.length, 17);
  memset(mapping.contents, 0xAB, 17);
  hal_buffer_unmap(&mapping);
  assert_null(mapping.buffer);
  uint8_t bytes[100];
  HAL_ASSERT_OK(hal_buffer_read(buffer, 0, bytes, sizeof(bytes)));
  for (int i = 0; i < 100; ++i) {
    assert_int_equal(bytes[i], (i >= 3 && i < 20) ? 0xAB : 0);
  }
  // Whole buffer mapping resolves the length.
  HAL_ASSERT_OK(hal_buffer_map_range(buffer, HAL_MAPPING_ACCESS_READ, 10,
                                     HAL_WHOLE_BUFFER, &mapping));
  assert_int_equal(mapping.length, 90);
  hal_buffer_unmap(&mapping);
  // Zero-length ranges are valid, including at the very end.
  HAL_ASSERT_OK(
      hal_buffer_map_range(buffer, HAL_MAPPING_ACCESS_READ, 100, 0, &mapping));
  assert_int_equal(mapping.length, 0);
  hal_buffer_unmap(&mapping);
  HAL_ASSERT_OK(hal_buffer_write(buffer, 100, NULL, 0));
  hal_buffer_release(buffer);
  hal_device_release(device);
}

static void Buffer_DeviceLocalReadWriteHelpers(void** state) {
  hal_device_t* device = hal_test_create_device();
  hal_buffer_t* buffer = allocate(device, HAL_MEMORY_TYPE_DEVICE_LOCAL,
                                  HAL_BUFFER_USAGE_DEFAULT, 64);
  const char text[] = "unaligned write";
  HAL_ASSERT_OK(hal_buffer_write(buffer, 5, text, sizeof(text)));
  char back[sizeof(text)];
  HAL_ASSERT_OK(hal_buffer_read(buffer, 5, back, sizeof(back)));
  assert_string_equal(back, text);
  hal_buffer_mapping_t mapping;
  HAL_ASSERT_STATUS(
      HAL_STATUS_FAILED_PRECONDITION, "not HOST_VISIBLE",
      hal_buffer_map_range(buffer, HAL_MAPPING_ACCESS_READ, 0, 4, &mapping));
  hal_buffer_release(buffer);
  hal_device_release(device);
}

static void Buffer_OutOfRangeIsRejectedAndChangesNothing(void** state) {
  hal_device_t* device = hal_test_create_device();
  hal_buffer_t* buffer =
      allocate(device, HAL_MEMORY_TYPE_HOST_VISIBLE,
               HAL_BUFFER_USAGE_DEFAULT | HAL_BUFFER_USAGE_MAPPING, 16);
  uint8_t ones[32];
  memset(ones, 1, sizeof(ones));
  HAL_ASSERT_STATUS(HAL_STATUS_OUT_OF_RANGE, "exceeds a buffer of 16 bytes",
                    hal_buffer_write(buffer, 8, ones, 9));
  HAL_ASSERT_STATUS(HAL_STATUS_OUT_OF_RANGE, "past the end",
                    hal_buffer_write(buffer, 17, ones, 0));
  HAL_ASSERT_STATUS(HAL_STATUS_OUT_OF_RANGE, NULL,
                    hal_buffer_write(buffer, 8, ones, UINT64_MAX - 4));
  hal_buffer_mapping_t mapping;
  HAL_ASSERT_STATUS(
      HAL_STATUS_OUT_OF_RANGE, NULL,
      hal_buffer_map_range(buffer, HAL_MAPPING_ACCESS_READ, 4, 13, &mapping));
  assert_null(mapping.buffer);
  uint8_t bytes[16];
  HAL_ASSERT_OK(hal_buffer_read(buffer, 0, bytes, sizeof(bytes)));
  for (int i = 0; i < 16; ++i)
    assert_int_equal(bytes[i], 0);
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, "HAL_WHOLE_BUFFER",
                    hal_buffer_read(buffer, 0, bytes, HAL_WHOLE_BUFFER));
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, "NULL",
                    hal_buffer_read(buffer, 0, NULL, 4));
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, "access",
                    hal_buffer_map_range(buffer, 0, 0, 4, &mapping));
  hal_buffer_release(buffer);
  hal_device_release(device);
}

static void Buffer_BadParamsAreRejected(void** state) {
  hal_device_t* device = hal_test_create_device();
  hal_buffer_t* buffer = (hal_buffer_t*)1;
  hal_buffer_params_t params = {HAL_MEMORY_TYPE_DEVICE_LOCAL,
                                HAL_BUFFER_USAGE_DEFAULT};
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, "at least one byte",
                    hal_device_allocate_buffer(device, params, 0, &buffer));
  assert_null(buffer);
  params.memory_type = 1u << 7;
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, "unknown memory type",
                    hal_device_allocate_buffer(device, params, 8, &buffer));
  params.memory_type = 0;
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, "DEVICE_LOCAL or",
                    hal_device_allocate_buffer(device, params, 8, &buffer));
  params.memory_type = HAL_MEMORY_TYPE_DEVICE_LOCAL;
  params.usage = 1u << 20;
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, "unknown bits",
                    hal_device_allocate_buffer(device, params, 8, &buffer));
  params.usage = 0;
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, "empty",
                    hal_device_allocate_buffer(device, params, 8, &buffer));
  params.usage = HAL_BUFFER_USAGE_MAPPING;
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, "HOST_VISIBLE",
                    hal_device_allocate_buffer(device, params, 8, &buffer));
  params.usage = HAL_BUFFER_USAGE_DEFAULT;
  HAL_ASSERT_STATUS(
      HAL_STATUS_RESOURCE_EXHAUSTED, NULL,
      hal_device_allocate_buffer(device, params, 1ull << 40, &buffer));
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, NULL,
                    hal_device_allocate_buffer(NULL, params, 8, &buffer));
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, NULL,
                    hal_device_allocate_buffer(device, params, 8, NULL));
  hal_memory_stats_t stats;
  HAL_ASSERT_OK(
      hal_device_allocator_query_stats(hal_device_allocator(device), &stats));
  assert_int_equal(stats.allocation_count, 0);
  hal_device_release(device);
}

static void Buffer_MappingWithoutMappingUsageIsRefused(void** state) {
  hal_device_t* device = hal_test_create_device();
  hal_buffer_t* buffer = allocate(device, HAL_MEMORY_TYPE_HOST_VISIBLE,
                                  HAL_BUFFER_USAGE_TRANSFER_SOURCE, 8);
  hal_buffer_mapping_t mapping;
  HAL_ASSERT_STATUS(
      HAL_STATUS_FAILED_PRECONDITION, "MAPPING usage",
      hal_buffer_map_range(buffer, HAL_MAPPING_ACCESS_READ, 0, 8, &mapping));
  uint8_t byte = 1;
  HAL_ASSERT_STATUS(HAL_STATUS_FAILED_PRECONDITION, "TRANSFER_TARGET",
                    hal_buffer_write(buffer, 0, &byte, 1));
  hal_buffer_release(buffer);
  hal_device_release(device);
}

static void Buffer_MappingKeepsBufferAlive(void** state) {
  hal_device_t* device = hal_test_create_device();
  hal_buffer_t* buffer =
      allocate(device, HAL_MEMORY_TYPE_HOST_VISIBLE,
               HAL_BUFFER_USAGE_DEFAULT | HAL_BUFFER_USAGE_MAPPING, 8);
  hal_buffer_mapping_t mapping;
  HAL_ASSERT_OK(hal_buffer_map_range(buffer, HAL_MAPPING_ACCESS_READ_WRITE, 0,
                                     8, &mapping));
  hal_buffer_release(buffer);
  hal_device_release(device);
  memset(mapping.contents, 7, 8);  // still valid (ASan would object)
  hal_buffer_unmap(&mapping);
  hal_buffer_unmap(&mapping);  // second unmap of a cleared mapping: no-op
}

// The test list: CASE binds this program's fixture.
#define CASE(name) cmocka_unit_test(name)

int main(void) {
  const struct CMUnitTest tests[] = {
      CASE(Buffer_SizesFromOneByte),
      CASE(Buffer_MapWriteReadBack),
      CASE(Buffer_DeviceLocalReadWriteHelpers),
      CASE(Buffer_OutOfRangeIsRejectedAndChangesNothing),
      CASE(Buffer_BadParamsAreRejected),
      CASE(Buffer_MappingWithoutMappingUsageIsRefused),
      CASE(Buffer_MappingKeepsBufferAlive),
  };
  return cmocka_run_group_tests_name("core/buffer", tests, NULL, NULL);
}
