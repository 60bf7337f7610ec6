// Copyright 2026 The HAL Authors.
//
// Device-level wrappers: properties, argument validation before any driver
// code runs.

#include "hal/impl/api.h"
#include "hal_test.h"

static void Device_PropertiesMatchInfo(void** state) {
  hal_device_t* device = hal_test_create_device();
  hal_device_properties_t properties;
  HAL_ASSERT_OK(hal_device_query_properties(device, &properties));
  assert_int_equal(properties.queue_count,
                   hal_device_info(device)->queue_count);
  assert_int_equal(properties.total_memory,
                   hal_device_info(device)->total_memory);
  assert_true(properties.supported_memory_types & HAL_MEMORY_TYPE_DEVICE_LOCAL);
  assert_non_null(hal_device_allocator(device));
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, NULL,
                    hal_device_query_properties(device, NULL));
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, NULL,
                    hal_device_query_properties(NULL, &properties));
  hal_device_release(device);
}

static void Device_SemaphoreArgumentsAreValidatedFirst(void** state) {
  hal_device_t* device = hal_test_create_device();
  hal_semaphore_t* semaphore = (hal_semaphore_t*)1;
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, "failure range",
                    hal_device_create_semaphore(
                        device, HAL_SEMAPHORE_FAILURE_VALUE, &semaphore));
  assert_null(semaphore);
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, NULL,
                    hal_device_create_semaphore(device, 0, NULL));
  // The test driver has no semaphores: its own clear error.
  HAL_ASSERT_STATUS(HAL_STATUS_UNIMPLEMENTED, "no semaphores",
                    hal_device_create_semaphore(device, 0, &semaphore));
  hal_device_release(device);
}

static void Device_WaitValidation(void** state) {
  hal_device_t* device = hal_test_create_device();
  hal_semaphore_list_t empty = hal_semaphore_list_empty();
  // Empty lists are satisfied at once, with every timeout form.
  HAL_ASSERT_OK(hal_device_wait_semaphores(device, HAL_WAIT_MODE_ALL, &empty,
                                           hal_infinite_timeout()));
  HAL_ASSERT_OK(hal_device_wait_semaphores(device, HAL_WAIT_MODE_ANY, &empty,
                                           hal_immediate_timeout()));
  HAL_ASSERT_OK(hal_device_wait_semaphores(device, HAL_WAIT_MODE_ANY, NULL,
                                           hal_make_timeout_ns(1000)));
  HAL_ASSERT_STATUS(
      HAL_STATUS_INVALID_ARGUMENT, "wait mode",
      hal_device_wait_semaphores(device, (hal_wait_mode_t)9, &empty,
                                 hal_immediate_timeout()));
  hal_semaphore_list_t bad = {2, NULL, NULL};
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, "NULL array",
                    hal_device_wait_semaphores(device, HAL_WAIT_MODE_ALL, &bad,
                                               hal_immediate_timeout()));
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, NULL,
                    hal_device_wait_semaphores(NULL, HAL_WAIT_MODE_ALL, &empty,
                                               hal_immediate_timeout()));
  hal_device_release(device);
}

// Another object passed as a semaphore (a caller's wrong pointer) gets one
// answer on every path, alone or in a list: INVALID_ARGUMENT, never a call
// through the other object's vtable.
static void Device_ObjectOfAnotherTypeIsNotASemaphore(void** state) {
  hal_device_t* device = hal_test_create_device();
  hal_buffer_params_t params = {HAL_MEMORY_TYPE_HOST_VISIBLE,
                                HAL_BUFFER_USAGE_DEFAULT};
  hal_buffer_t* buffer = NULL;
  HAL_ASSERT_OK(hal_device_allocate_buffer(device, params, 64, &buffer));
  hal_semaphore_t* wrong = (hal_semaphore_t*)buffer;
  hal_semaphore_t* real = NULL;
  HAL_ASSERT_OK(hal_semaphore_create_host(hal_allocator_system(), 1, &real));
  uint64_t value = 7;
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, "is a buffer, not a semaphore",
                    hal_semaphore_query(wrong, &value));
  assert_int_equal(value, 0);
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, "is a buffer, not a semaphore",
                    hal_semaphore_signal(wrong, 2));
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, "is a buffer, not a semaphore",
                    hal_semaphore_wait(wrong, 1, hal_immediate_timeout()));
  hal_semaphore_fail(wrong, hal_make_status(HAL_STATUS_ABORTED, "ignored"));

  hal_semaphore_t* semaphores[2] = {real, wrong};
  uint64_t values[2] = {1, 1};
  hal_semaphore_list_t list = {2, semaphores, values};
  const hal_wait_mode_t modes[2] = {HAL_WAIT_MODE_ALL, HAL_WAIT_MODE_ANY};
  for (int i = 0; i < 2; ++i) {
    HAL_ASSERT_STATUS(
        HAL_STATUS_INVALID_ARGUMENT, "wait list entry 1 is not a semaphore",
        hal_semaphore_list_wait(modes[i], list, hal_immediate_timeout()));
    HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT,
                      "wait list entry 1 is not a semaphore",
                      hal_device_wait_semaphores(device, modes[i], &list,
                                                 hal_immediate_timeout()));
  }
  hal_semaphore_list_t empty = hal_semaphore_list_empty();
  HAL_ASSERT_STATUS(
      HAL_STATUS_INVALID_ARGUMENT, "wait list entry 1 is not a semaphore",
      hal_device_queue_execute(device, 0, &list, &empty, 0, NULL));
  HAL_ASSERT_STATUS(
      HAL_STATUS_INVALID_ARGUMENT, "signal list entry 1 is not a semaphore",
      hal_device_queue_execute(device, 0, &empty, &list, 0, NULL));
  // Nothing happened to either object.
  HAL_ASSERT_OK(hal_semaphore_query(real, &value));
  assert_int_equal(value, 1);
  HAL_ASSERT_OK(hal_buffer_write(buffer, 0, &value, sizeof(value)));
  hal_semaphore_release(real);
  hal_buffer_release(buffer);
  hal_device_release(device);
}

// The sibling of the case above for every kind: an object passed where
// another kind is expected is refused, named by what it is; getters give
// their NULL answer; a device release of a non-device does nothing.
static void Device_ObjectOfAnotherKindIsRefusedEverywhere(void** state) {
  hal_device_t* device = hal_test_create_device();
  hal_driver_t* driver = hal_device_driver(device);  // borrowed
  hal_buffer_params_t params = {
      HAL_MEMORY_TYPE_HOST_VISIBLE,
      HAL_BUFFER_USAGE_DEFAULT | HAL_BUFFER_USAGE_MAPPING};
  hal_buffer_t* buffer = NULL;
  HAL_ASSERT_OK(hal_device_allocate_buffer(device, params, 64, &buffer));
  hal_semaphore_t* semaphore = NULL;
  HAL_ASSERT_OK(
      hal_semaphore_create_host(hal_allocator_system(), 0, &semaphore));
  hal_command_buffer_t* cb = NULL;
  HAL_ASSERT_OK(hal_device_create_command_buffer(
      device, HAL_COMMAND_BUFFER_MODE_ONE_SHOT, &cb));

  // Buffers.
  hal_buffer_t* not_buffer = (hal_buffer_t*)semaphore;
  uint8_t bytes[8] = {0};
  const char* want = "is a semaphore, not a buffer";
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, want,
                    hal_buffer_read(not_buffer, 0, bytes, 8));
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, want,
                    hal_buffer_write(not_buffer, 0, bytes, 8));
  hal_buffer_mapping_t mapping;
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, want,
                    hal_buffer_map_range(not_buffer, HAL_MAPPING_ACCESS_READ, 0,
                                         8, &mapping));
  assert_int_equal(hal_buffer_byte_length(not_buffer), 0);
  assert_null(hal_buffer_device(not_buffer));

  // Command buffers, and the objects their ops name.
  hal_command_buffer_t* not_cb = (hal_command_buffer_t*)buffer;
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT,
                    "is a buffer, not a command buffer",
                    hal_command_buffer_begin(not_cb));
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT,
                    "is a buffer, not a command buffer",
                    hal_command_buffer_end(not_cb));
  HAL_ASSERT_OK(hal_command_buffer_begin(cb));
  uint32_t pattern = 0;
  HAL_ASSERT_STATUS(
      HAL_STATUS_INVALID_ARGUMENT, want,
      hal_command_buffer_fill_buffer(cb, not_buffer, 0, 8, &pattern, 4));
  uint32_t count[3] = {1, 1, 1};
  HAL_ASSERT_STATUS(
      HAL_STATUS_INVALID_ARGUMENT, "is a buffer, not an executable",
      hal_command_buffer_dispatch(cb, (hal_executable_t*)buffer, 0, count,
                                  count, NULL, 0, NULL, 0));
  HAL_ASSERT_OK(hal_command_buffer_end(cb));
  hal_semaphore_list_t empty = hal_semaphore_list_empty();
  HAL_ASSERT_STATUS(
      HAL_STATUS_INVALID_ARGUMENT, "is a buffer, not a command buffer",
      hal_device_queue_execute(device, 0, &empty, &empty, 1, &not_cb));
  // A semaphore in the command-buffer array was read as one before its
  // kind was checked (a crash formatting its "device's" name).
  hal_command_buffer_t* semaphore_as_cb = (hal_command_buffer_t*)semaphore;
  HAL_ASSERT_STATUS(
      HAL_STATUS_INVALID_ARGUMENT, "is a semaphore, not a command buffer",
      hal_device_queue_execute(device, 0, &empty, &empty, 1, &semaphore_as_cb));
  // Recording getters: the NULL answer, not an abort.
  size_t op_count = 7;
  assert_null(hal_recording_command_buffer_ops(semaphore_as_cb, &op_count));
  assert_int_equal(op_count, 0);
  assert_null(hal_recording_command_buffer_user(semaphore_as_cb));
  assert_null(hal_recording_command_buffer_user(NULL));
  // A mapping whose buffer is another object: unmap does nothing (it used
  // to call the object's vtable and drop a reference).
  intptr_t references = hal_resource_ref_count(&semaphore->resource);
  hal_buffer_mapping_t bogus = {.buffer = not_buffer, .length = 8};
  hal_buffer_unmap(&bogus);
  assert_int_equal(hal_resource_ref_count(&semaphore->resource), references);
  // The allocator is not a resource: another object passed as one is
  // refused by what its device says its allocator is.
  hal_memory_stats_t stats;
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, "not a device's allocator",
                    hal_device_allocator_query_stats(
                        (hal_device_allocator_t*)device, &stats));
  hal_buffer_t* allocated = NULL;
  HAL_ASSERT_STATUS(
      HAL_STATUS_INVALID_ARGUMENT, "not a device's allocator",
      hal_device_allocator_allocate_buffer((hal_device_allocator_t*)semaphore,
                                           params, 64, &allocated));
  assert_null(allocated);
  HAL_ASSERT_OK(
      hal_device_allocator_query_stats(hal_device_allocator(device), &stats));
  assert_int_equal(hal_executable_entry_point_count((hal_executable_t*)buffer),
                   0);

  // Devices and drivers.
  hal_device_t* not_device = (hal_device_t*)buffer;
  hal_semaphore_t* created = NULL;
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, "is a buffer, not a device",
                    hal_device_create_semaphore(not_device, 0, &created));
  assert_null(created);
  assert_null(hal_device_info(not_device));
  hal_device_release(not_device);  // no shutdown through a buffer
  hal_driver_t* not_driver = (hal_driver_t*)device;
  uint32_t devices = 7;
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, "is a device, not a driver",
                    hal_driver_query_device_count(not_driver, &devices));
  assert_string_equal(hal_driver_name(not_driver), "");

  // Everything still works.
  HAL_ASSERT_OK(hal_buffer_write(buffer, 0, bytes, 8));
  HAL_ASSERT_OK(hal_driver_query_device_count(driver, &devices));
  hal_command_buffer_release(cb);
  hal_semaphore_release(semaphore);
  hal_buffer_release(buffer);
  hal_device_release(device);
}

static void Device_NullObjectsAreHarmless(void** state) {
  hal_device_retain(NULL);
  hal_device_release(NULL);
  hal_buffer_release(NULL);
  hal_command_buffer_release(NULL);
  hal_driver_release(NULL);
  assert_null(hal_device_info(NULL));
  assert_null(hal_device_allocator(NULL));
}

// A device whose shutdown and destroy only count, to watch libhal's
// release logic without a driver.
static _Atomic int counting_shutdowns;
static _Atomic int counting_destroys;

static void counting_device_shutdown(hal_device_t* device) {
  (void)device;
  atomic_fetch_add(&counting_shutdowns, 1);
}

static void counting_device_destroy(hal_device_t* device) {
  atomic_fetch_add(&counting_destroys, 1);
  hal_allocator_free(device->host_allocator, device);
}

static const hal_device_vtable_t counting_device_vtable = {
    .destroy = counting_device_destroy,
    .shutdown = counting_device_shutdown,
};

// Q4: the shutdown runs once. An object of the device (a buffer, say) keeps
// the device's memory alive after the caller's last release; a retain
// through its device pointer revives the caller count, and the matching
// release must not shut the device down a second time.
static void Q4_ShutdownRunsOnceWhenRetainedAfterRelease(void** state) {
  atomic_store(&counting_shutdowns, 0);
  atomic_store(&counting_destroys, 0);
  hal_device_t* device = NULL;
  HAL_ASSERT_OK(hal_allocator_malloc(hal_allocator_system(), sizeof(*device),
                                     (void**)&device));
  hal_device_initialize(&counting_device_vtable, NULL, NULL,
                        hal_allocator_system(), device);
  hal_resource_retain(&device->resource);  // what a buffer would hold
  hal_device_release(device);
  assert_int_equal(atomic_load(&counting_shutdowns), 1);
  for (int i = 0; i < 3; ++i) {
    hal_device_retain(device);
    hal_device_release(device);
  }
  assert_int_equal(atomic_load(&counting_shutdowns), 1);
  assert_int_equal(atomic_load(&counting_destroys), 0);
  hal_resource_release(&device->resource);
  assert_int_equal(atomic_load(&counting_destroys), 1);
  assert_int_equal(atomic_load(&counting_shutdowns), 1);
}

// The test list: CASE binds this program's fixture.
#define CASE(name) cmocka_unit_test(name)

int main(void) {
  const struct CMUnitTest tests[] = {
      CASE(Device_PropertiesMatchInfo),
      CASE(Device_SemaphoreArgumentsAreValidatedFirst),
      CASE(Device_WaitValidation),
      CASE(Device_ObjectOfAnotherTypeIsNotASemaphore),
      CASE(Device_ObjectOfAnotherKindIsRefusedEverywhere),
      CASE(Device_NullObjectsAreHarmless),
      CASE(Q4_ShutdownRunsOnceWhenRetainedAfterRelease),
  };
  return cmocka_run_group_tests_name("core/device", tests, NULL, NULL);
}
