// Copyright 2026 The HAL Authors.
//
// CTS suite "driver": enumerate, create, query and release (CTS.md driver).

#include "cts.h"

CTS_CASE(Driver_EnumerateDrivers) {
  size_t count = hal_driver_registry_plugin_count(cts_context.registry);
  bool found = false;
  for (size_t i = 0; i < count; ++i) {
    const hal_plugin_record_t* record =
        hal_driver_registry_plugin_at(cts_context.registry, i);
    if (strcmp(record->name, cts_context.driver_name) == 0 &&
        !record->shadowed_by) {
      found = true;
      assert_null(record->load_status);
      assert_true(record->abi_version > 0);
      assert_true(strlen(record->description) > 0);
    }
  }
  assert_true(found);
  assert_string_equal(hal_driver_name(cts_context.driver),
                      cts_context.driver_name);
}

CTS_CASE(Driver_QueryDevices) {
  assert_true(cts_context.device_count >= 1);
  for (uint32_t i = 0; i < cts_context.device_count; ++i) {
    hal_device_info_t info;
    HAL_ASSERT_OK(hal_driver_query_device_info(cts_context.driver, i, &info));
    assert_int_equal(info.index, i);
    assert_true(strlen(info.name) > 0);
    assert_true(info.total_memory > 0);
    assert_true(info.queue_count >= 1);
  }
}

CTS_CASE(Driver_CreateDeviceByIndexAndName) {
  hal_device_info_t info;
  uint32_t last = cts_context.device_count - 1;
  HAL_ASSERT_OK(hal_driver_query_device_info(cts_context.driver, last, &info));
  hal_device_t* by_index = cts_create_device(last);
  assert_string_equal(hal_device_info(by_index)->name, info.name);
  hal_device_t* by_name = NULL;
  HAL_ASSERT_OK(hal_driver_create_device_by_name(
      cts_context.driver, info.name, hal_allocator_system(), &by_name));
  assert_string_equal(hal_device_info(by_name)->name, info.name);
  hal_device_properties_t properties;
  HAL_ASSERT_OK(hal_device_query_properties(by_name, &properties));
  assert_int_equal(properties.queue_count, info.queue_count);
  assert_true(properties.supported_memory_types & HAL_MEMORY_TYPE_DEVICE_LOCAL);
  // What runs it: a runtime library that was loaded, its driver version,
  // a compute capability; on the virtual GPU it says so.
  assert_non_null(properties.runtime_path);
  assert_true(strlen(properties.runtime_path) > 0);
  assert_true(properties.driver_version > 0);
  assert_true(properties.compute_capability_major > 0);
  if (strstr(properties.runtime_path, "libvgpu-"))
    assert_true(properties.is_virtual);
  hal_device_release(by_index);
  hal_device_release(by_name);
}

CTS_CASE(Driver_BadIndexIsAClearError) {
  hal_device_t* device = NULL;
  HAL_ASSERT_STATUS(HAL_STATUS_OUT_OF_RANGE, "out of range",
                    hal_driver_create_device_by_index(
                        cts_context.driver, cts_context.device_count + 3,
                        hal_allocator_system(), &device));
  assert_null(device);
  HAL_ASSERT_STATUS(
      HAL_STATUS_NOT_FOUND, "no device named",
      hal_driver_create_device_by_name(cts_context.driver, "no such device",
                                       hal_allocator_system(), &device));
}

// The vendor runtime missing: driver creation fails naming what was tried.
CTS_CASE(Driver_MissingRuntimeNamesTheLibrary) {
  const char* variable = getenv("CTS_RUNTIME_VARIABLE");
  if (!variable || !*variable) {
    printf("[  SKIP    ] no runtime variable for this driver\n");
    skip();
  }
  hal_driver_t* driver = NULL;
  hal_status_t status = cts_create_driver_with_env(
      variable, "/nonexistent/libruntime-for-cts.so", &driver);
  assert_null(driver);
  assert_int_not_equal(hal_status_code(status), HAL_STATUS_OK);
  bool named = strstr(hal_status_message(status),
                      "/nonexistent/libruntime-for-cts.so") != NULL;
  hal_status_free(status);
  assert_true(named);
}

// Create and release devices (with work) in a loop: no leak (LSan), no
// thread left behind, no hang (K2, K3).
CTS_CASE(Driver_CreateReleaseLoop) {
  uint32_t rounds = cts_iterations(25);
  for (uint32_t i = 0; i < rounds; ++i) {
    hal_device_t* device = cts_create_device(i % cts_context.device_count);
    hal_semaphore_t* semaphore = cts_create_semaphore(device, 0);
    hal_buffer_t* buffer =
        cts_allocate_buffer(device, HAL_MEMORY_TYPE_DEVICE_LOCAL, 256);
    hal_command_buffer_t* cb =
        cts_begin_command_buffer(device, HAL_COMMAND_BUFFER_MODE_ONE_SHOT);
    uint8_t value = (uint8_t)i;
    HAL_ASSERT_OK(
        hal_command_buffer_fill_buffer(cb, buffer, 0, 256, &value, 1));
    HAL_ASSERT_OK(hal_command_buffer_end(cb));
    HAL_ASSERT_OK(cts_submit(device, 0, NULL, 0, cb, semaphore, 1));
    if (i % 2)
      HAL_ASSERT_OK(cts_wait(semaphore, 1));
    // Even rounds release with the work possibly still in flight.
    hal_command_buffer_release(cb);
    hal_buffer_release(buffer);
    hal_device_release(device);
    HAL_ASSERT_OK(cts_wait(semaphore, 1));
    hal_semaphore_release(semaphore);
  }
}

// The test list: CASE binds this program's fixture.
#define CASE(name) cmocka_unit_test(name)

int main(void) {
  const struct CMUnitTest tests[] = {
      CASE(Driver_EnumerateDrivers),
      CASE(Driver_QueryDevices),
      CASE(Driver_CreateDeviceByIndexAndName),
      CASE(Driver_BadIndexIsAClearError),
      CASE(Driver_MissingRuntimeNamesTheLibrary),
      CASE(Driver_CreateReleaseLoop),
  };
  return cts_main("driver", tests, HAL_ARRAYSIZE(tests));
}
