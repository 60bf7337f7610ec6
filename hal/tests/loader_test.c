// Copyright 2026 The HAL Authors.
//
// The driver registry and plugin loader: search order, ABI negotiation,
// broken plugins, duplicate names, error messages.

#include <unistd.h>

#include "hal/plugin.h"
#include "test_util.h"

static const hal_plugin_record_t* find_record(hal_driver_registry_t* registry,
                                              const char* name,
                                              size_t occurrence) {
  size_t count = hal_driver_registry_plugin_count(registry);
  for (size_t i = 0; i < count; ++i) {
    const hal_plugin_record_t* record =
        hal_driver_registry_plugin_at(registry, i);
    if (strcmp(record->name, name) == 0 && occurrence-- == 0)
      return record;
  }
  return NULL;
}

static void FoundByDriverPathEnvironment(void** state) {
  setenv("HAL_DRIVER_PATH", hal_test_plugin_dir(), 1);
  hal_driver_registry_options_t options = {.skip_install_dir = true};
  hal_driver_registry_t* registry = NULL;
  HAL_ASSERT_OK(
      hal_driver_registry_create(&options, hal_allocator_system(), &registry));
  unsetenv("HAL_DRIVER_PATH");
  const hal_plugin_record_t* record = find_record(registry, "test", 0);
  assert_non_null(record);
  assert_null(record->load_status);
  assert_null(record->shadowed_by);
  assert_int_equal(record->abi_version, HAL_PLUGIN_ABI_VERSION);
  assert_string_equal(record->directory, hal_test_plugin_dir());
  assert_non_null(strstr(record->path, "hal-driver-test.so"));
  assert_true(strlen(record->description) > 0);
  assert_int_equal(hal_driver_registry_directory_count(registry), 1);
  hal_driver_registry_free(registry);
}

static void CreatesDriverAndDevices(void** state) {
  hal_driver_registry_t* registry = hal_test_create_registry();
  hal_driver_t* driver = NULL;
  HAL_ASSERT_OK(hal_driver_registry_create_driver(
      registry, "test", hal_allocator_system(), &driver));
  assert_string_equal(hal_driver_name(driver), "test");
  uint32_t count = 0;
  HAL_ASSERT_OK(hal_driver_query_device_count(driver, &count));
  assert_int_equal(count, 2);
  hal_device_info_t info;
  HAL_ASSERT_OK(hal_driver_query_device_info(driver, 1, &info));
  assert_int_equal(info.index, 1);
  assert_string_equal(info.name, "test-device-1");
  assert_true(info.total_memory > 0);
  assert_int_equal(info.queue_count, 2);

  hal_device_t* device = NULL;
  HAL_ASSERT_OK(hal_driver_create_device_by_index(
      driver, 1, hal_allocator_system(), &device));
  assert_string_equal(hal_device_info(device)->name, "test-device-1");
  assert_ptr_equal(hal_device_driver(device), driver);
  hal_device_release(device);
  HAL_ASSERT_OK(hal_driver_create_device_by_name(
      driver, "test-device-0", hal_allocator_system(), &device));
  assert_int_equal(hal_device_info(device)->index, 0);
  hal_device_release(device);

  device = (hal_device_t*)1;
  HAL_ASSERT_STATUS(HAL_STATUS_OUT_OF_RANGE, "has 2 device(s)",
                    hal_driver_create_device_by_index(
                        driver, 7, hal_allocator_system(), &device));
  assert_null(device);
  HAL_ASSERT_STATUS(HAL_STATUS_NOT_FOUND, "'test-device-1'",
                    hal_driver_create_device_by_name(
                        driver, "nope", hal_allocator_system(), &device));
  HAL_ASSERT_STATUS(HAL_STATUS_OUT_OF_RANGE, NULL,
                    hal_driver_query_device_info(driver, 2, &info));
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, NULL,
                    hal_driver_create_device_by_name(
                        driver, NULL, hal_allocator_system(), &device));
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, NULL,
                    hal_driver_query_device_count(driver, NULL));
  hal_driver_release(driver);
  hal_driver_registry_free(registry);
}

static void WrongAbiVersionIsRefusedNamingBoth(void** state) {
  hal_driver_registry_t* registry = hal_test_create_registry();
  const hal_plugin_record_t* record =
      find_record(registry, "test_wrong_abi", 0);
  assert_non_null(record);
  assert_int_equal(hal_status_code(record->load_status),
                   HAL_STATUS_INCOMPATIBLE);
  assert_int_equal(record->abi_version, 99);
  assert_non_null(
      strstr(hal_status_message(record->load_status), "ABI version 99"));
  assert_non_null(
      strstr(hal_status_message(record->load_status), "speaks version 1"));
  hal_driver_t* driver = NULL;
  HAL_ASSERT_STATUS(
      HAL_STATUS_INCOMPATIBLE, "cannot be used",
      hal_driver_registry_create_driver(registry, "test_wrong_abi",
                                        hal_allocator_system(), &driver));
  assert_null(driver);
  hal_driver_registry_free(registry);
}

static void MissingEntryPointKeepsDlerror(void** state) {
  hal_driver_registry_t* registry = hal_test_create_registry();
  const hal_plugin_record_t* record = find_record(registry, "test_no_entry", 0);
  assert_non_null(record);
  assert_int_equal(hal_status_code(record->load_status),
                   HAL_STATUS_INCOMPATIBLE);
  const char* message = hal_status_message(record->load_status);
  assert_non_null(strstr(message, HAL_PLUGIN_ENTRY_SYMBOL));
  assert_non_null(strstr(message, "undefined symbol"));  // dlerror() text
  hal_driver_registry_free(registry);
}

static void NotAnElfFileKeepsDlerror(void** state) {
  hal_driver_registry_t* registry = hal_test_create_registry();
  const hal_plugin_record_t* record = find_record(registry, "test_not_elf", 0);
  assert_non_null(record);
  assert_int_equal(hal_status_code(record->load_status),
                   HAL_STATUS_UNAVAILABLE);
  const char* message = hal_status_message(record->load_status);
  assert_non_null(strstr(message, "dlopen"));
  assert_non_null(strstr(message, "hal-driver-test_not_elf.so"));
  // glibc says "invalid ELF header" or "file too short".
  assert_true(strstr(message, "ELF") || strstr(message, "too short"));
  hal_driver_t* driver = NULL;
  HAL_ASSERT_STATUS(
      HAL_STATUS_UNAVAILABLE, "dlopen",
      hal_driver_registry_create_driver(registry, "test_not_elf",
                                        hal_allocator_system(), &driver));
  hal_driver_registry_free(registry);
}

static void MisnamedPluginIsRefused(void** state) {
  hal_driver_registry_t* registry = hal_test_create_registry();
  const hal_plugin_record_t* record = find_record(registry, "test_misnamed", 0);
  assert_non_null(record);
  assert_int_equal(hal_status_code(record->load_status),
                   HAL_STATUS_INCOMPATIBLE);
  assert_non_null(
      strstr(hal_status_message(record->load_status), "'not_my_file_name'"));
  hal_driver_registry_free(registry);
}

static void NoDevicesIsAClearError(void** state) {
  hal_driver_registry_t* registry = hal_test_create_registry();
  hal_driver_t* driver = NULL;
  HAL_ASSERT_OK(hal_driver_registry_create_driver(
      registry, "test_no_devices", hal_allocator_system(), &driver));
  uint32_t count = 1;
  HAL_ASSERT_OK(hal_driver_query_device_count(driver, &count));
  assert_int_equal(count, 0);
  hal_device_t* device = NULL;
  HAL_ASSERT_STATUS(HAL_STATUS_NOT_FOUND, "no devices",
                    hal_driver_create_device_by_index(
                        driver, 0, hal_allocator_system(), &device));
  hal_driver_release(driver);
  hal_driver_registry_free(registry);
}

static void UnknownNameListsDriversAndDirectories(void** state) {
  hal_driver_registry_t* registry = hal_test_create_registry();
  hal_driver_t* driver = NULL;
  hal_status_t status = hal_driver_registry_create_driver(
      registry, "no_such_driver", hal_allocator_system(), &driver);
  assert_int_equal(hal_status_code(status), HAL_STATUS_NOT_FOUND);
  const char* message = hal_status_message(status);
  assert_non_null(strstr(message, "'no_such_driver'"));
  assert_non_null(strstr(message, "test"));
  assert_non_null(strstr(message, "test_wrong_abi (fails to load)"));
  assert_non_null(strstr(message, hal_test_plugin_dir()));
  hal_status_free(status);
  assert_null(driver);
  hal_driver_registry_free(registry);
}

// Makes a fresh directory holding a link to the test plugin.
static void make_plugin_dir(char* dir_template, char* link_path,
                            size_t link_path_size) {
  assert_non_null(mkdtemp(dir_template));
  char target[4096];
  snprintf(target, sizeof(target), "%s/hal-driver-test.so",
           hal_test_plugin_dir());
  snprintf(link_path, link_path_size, "%s/hal-driver-test.so", dir_template);
  assert_int_equal(symlink(target, link_path), 0);
}

static void DuplicateNamesFirstOnPathWins(void** state) {
  char first[] = "/tmp/hal-loader-first-XXXXXX";
  char second[] = "/tmp/hal-loader-second-XXXXXX";
  char first_link[256], second_link[256];
  make_plugin_dir(first, first_link, sizeof(first_link));
  make_plugin_dir(second, second_link, sizeof(second_link));
  char search_path[512];
  // Empty entries and a repeated directory are ignored.
  snprintf(search_path, sizeof(search_path), ":%s::%s:%s:", first, second,
           first);
  hal_driver_registry_options_t options = {.search_path = search_path,
                                           .skip_install_dir = true};
  hal_driver_registry_t* registry = NULL;
  HAL_ASSERT_OK(
      hal_driver_registry_create(&options, hal_allocator_system(), &registry));
  assert_int_equal(hal_driver_registry_directory_count(registry), 2);
  assert_string_equal(hal_driver_registry_directory_at(registry, 0), first);
  assert_int_equal(hal_driver_registry_plugin_count(registry), 2);
  const hal_plugin_record_t* winner = find_record(registry, "test", 0);
  const hal_plugin_record_t* loser = find_record(registry, "test", 1);
  assert_string_equal(winner->path, first_link);
  assert_null(winner->shadowed_by);
  assert_null(winner->load_status);
  assert_string_equal(loser->path, second_link);
  assert_string_equal(loser->shadowed_by, first_link);
  hal_driver_t* driver = NULL;
  HAL_ASSERT_OK(hal_driver_registry_create_driver(
      registry, "test", hal_allocator_system(), &driver));
  hal_driver_release(driver);
  hal_driver_registry_free(registry);
  unlink(first_link);
  unlink(second_link);
  rmdir(first);
  rmdir(second);
}

static void DriverOutlivesRegistry(void** state) {
  hal_driver_registry_t* registry = hal_test_create_registry();
  hal_driver_t* driver = NULL;
  HAL_ASSERT_OK(hal_driver_registry_create_driver(
      registry, "test", hal_allocator_system(), &driver));
  hal_driver_registry_free(registry);
  // The plugin's code is still loaded: the driver holds it open.
  hal_device_t* device = NULL;
  HAL_ASSERT_OK(hal_driver_create_device_by_index(
      driver, 0, hal_allocator_system(), &device));
  hal_driver_release(driver);  // the device keeps it alive
  hal_device_properties_t properties;
  HAL_ASSERT_OK(hal_device_query_properties(device, &properties));
  assert_int_equal(properties.queue_count, 2);
  hal_device_release(device);
}

static void CreateFailureCarriesPluginStatus(void** state) {
  hal_driver_registry_t* registry = hal_test_create_registry();
  setenv("HAL_TEST_PLUGIN_FAIL_CREATE", "1", 1);
  hal_driver_t* driver = NULL;
  hal_status_t status = hal_driver_registry_create_driver(
      registry, "test", hal_allocator_system(), &driver);
  unsetenv("HAL_TEST_PLUGIN_FAIL_CREATE");
  assert_int_equal(hal_status_code(status), HAL_STATUS_UNAVAILABLE);
  assert_non_null(strstr(hal_status_message(status), "told to fail"));
  assert_non_null(strstr(hal_status_message(status), "creating driver 'test'"));
  hal_status_free(status);
  assert_null(driver);
  hal_driver_registry_free(registry);
}

static void MissingDirectoriesAreNotErrors(void** state) {
  hal_driver_registry_options_t options = {
      .search_path = "/nonexistent/hal/drivers", .skip_install_dir = true};
  hal_driver_registry_t* registry = NULL;
  HAL_ASSERT_OK(
      hal_driver_registry_create(&options, hal_allocator_system(), &registry));
  assert_int_equal(hal_driver_registry_plugin_count(registry), 0);
  hal_driver_t* driver = NULL;
  HAL_ASSERT_STATUS(HAL_STATUS_NOT_FOUND, "/nonexistent/hal/drivers (missing)",
                    hal_driver_registry_create_driver(
                        registry, "test", hal_allocator_system(), &driver));
  hal_driver_registry_free(registry);
}

static void InstallDirIsBesideLibhal(void** state) {
  const char* dir = hal_driver_registry_install_dir();
  assert_non_null(dir);
  size_t length = strlen(dir);
  assert_true(length > strlen("/hal/drivers"));
  assert_string_equal(dir + length - strlen("/hal/drivers"), "/hal/drivers");
  hal_driver_registry_t* registry = NULL;
  hal_driver_registry_options_t options = {.search_path = ""};
  HAL_ASSERT_OK(
      hal_driver_registry_create(&options, hal_allocator_system(), &registry));
  assert_int_equal(hal_driver_registry_directory_count(registry), 1);
  assert_string_equal(hal_driver_registry_directory_at(registry, 0), dir);
  hal_driver_registry_free(registry);
}

static void BadArgumentsAreRejected(void** state) {
  HAL_ASSERT_STATUS(
      HAL_STATUS_INVALID_ARGUMENT, NULL,
      hal_driver_registry_create(NULL, hal_allocator_system(), NULL));
  hal_driver_t* driver = NULL;
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, NULL,
                    hal_driver_registry_create_driver(
                        NULL, "test", hal_allocator_system(), &driver));
  assert_null(hal_driver_registry_plugin_at(NULL, 0));
  assert_int_equal(hal_driver_registry_plugin_count(NULL), 0);
  hal_driver_registry_free(NULL);
}

// Create and release everything in a loop: no leak (LSan), no handle left.
static void CreateReleaseLoop(void** state) {
  for (int i = 0; i < 100; ++i) {
    hal_device_t* device = hal_test_create_device();
    hal_buffer_t* buffer = NULL;
    hal_buffer_params_t params = {HAL_MEMORY_TYPE_DEVICE_LOCAL,
                                  HAL_BUFFER_USAGE_DEFAULT};
    HAL_ASSERT_OK(hal_device_allocate_buffer(device, params, 64, &buffer));
    hal_device_release(device);  // the buffer keeps the device alive
    hal_buffer_release(buffer);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(FoundByDriverPathEnvironment),
      cmocka_unit_test(CreatesDriverAndDevices),
      cmocka_unit_test(WrongAbiVersionIsRefusedNamingBoth),
      cmocka_unit_test(MissingEntryPointKeepsDlerror),
      cmocka_unit_test(NotAnElfFileKeepsDlerror),
      cmocka_unit_test(MisnamedPluginIsRefused),
      cmocka_unit_test(NoDevicesIsAClearError),
      cmocka_unit_test(UnknownNameListsDriversAndDirectories),
      cmocka_unit_test(DuplicateNamesFirstOnPathWins),
      cmocka_unit_test(DriverOutlivesRegistry),
      cmocka_unit_test(CreateFailureCarriesPluginStatus),
      cmocka_unit_test(MissingDirectoriesAreNotErrors),
      cmocka_unit_test(InstallDirIsBesideLibhal),
      cmocka_unit_test(BadArgumentsAreRejected),
      cmocka_unit_test(CreateReleaseLoop),
  };
  return cmocka_run_group_tests_name("core/loader", tests, NULL, NULL);
}
