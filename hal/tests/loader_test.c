// Copyright 2026 The HAL Authors.
//
// The driver registry and plugin loader: search order, ABI negotiation,
// broken plugins (including damaged files, which must never crash the
// host), duplicate names and directories, error messages.

#include <dlfcn.h>
#include <elf.h>
#include <ftw.h>
#include <limits.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hal/plugin.h"
#include "hal_test.h"

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

static void Loader_FoundByDriverPathEnvironment(void** state) {
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

static void Loader_CreatesDriverAndDevices(void** state) {
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
  static const uint8_t kUuid1[HAL_DEVICE_UUID_SIZE] = {
      0x7e, 0x57, 0xab, 0x1e, 0, 0, 0x40, 0, 0x80, 0, 0, 0, 0, 0, 0, 1};
  assert_true(info.has_uuid);
  assert_memory_equal(info.uuid, kUuid1, sizeof(kUuid1));

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

// UUID text: lowercase 8-4-4-4-12 out; in, either case, with or without
// nvidia-smi's "GPU-", and nothing else.
static void DeviceUuid_FormatsAndParses(void** state) {
  static const uint8_t kUuid[HAL_DEVICE_UUID_SIZE] = {
      0x7e, 0x57, 0xab, 0x1e, 0x01, 0x23, 0x45, 0x67,
      0x89, 0xab, 0xcd, 0xef, 0xfe, 0xdc, 0xba, 0x98};
  char text[HAL_DEVICE_UUID_TEXT_SIZE];
  hal_device_uuid_format(kUuid, text);
  assert_string_equal(text, "7e57ab1e-0123-4567-89ab-cdeffedcba98");
  const char* accepted[] = {
      "7e57ab1e-0123-4567-89ab-cdeffedcba98",
      "7E57AB1E-0123-4567-89AB-CDEFFEDCBA98",
      "GPU-7e57ab1e-0123-4567-89ab-cdeffedcba98",
      "gpu-7E57ab1e-0123-4567-89aB-cdeffedcba98",
  };
  for (size_t i = 0; i < HAL_ARRAYSIZE(accepted); ++i) {
    uint8_t uuid[HAL_DEVICE_UUID_SIZE];
    assert_true(hal_device_uuid_parse(accepted[i], uuid));
    assert_memory_equal(uuid, kUuid, sizeof(kUuid));
  }
  const char* refused[] = {
      "",
      "GPU-",
      "7e57ab1e0123456789abcdeffedcba98",       // no dashes
      "7e57ab1e-0123-4567-89ab-cdeffedcba9",    // a digit short
      "7e57ab1e-0123-4567-89ab-cdeffedcba987",  // a digit more
      "7e57ab1e-0123-4567-89ab-cdeffedcba9g",   // not hex
      "7e57ab1e0-123-4567-89ab-cdeffedcba98",   // a dash misplaced
      "MIG-7e57ab1e-0123-4567-89ab-cdeffedcba98",
      " 7e57ab1e-0123-4567-89ab-cdeffedcba98",
      "GPU-GPU-7e57ab1e-0123-4567-89ab-cdeffedcba98",
  };
  for (size_t i = 0; i < HAL_ARRAYSIZE(refused); ++i) {
    uint8_t uuid[HAL_DEVICE_UUID_SIZE];
    memset(uuid, 0xAB, sizeof(uuid));
    if (hal_device_uuid_parse(refused[i], uuid))
      fail_msg("'%s' parsed as a UUID", refused[i]);
    static const uint8_t kZero[HAL_DEVICE_UUID_SIZE] = {0};
    assert_memory_equal(uuid, kZero, sizeof(kZero));
  }
  uint8_t uuid[HAL_DEVICE_UUID_SIZE];
  assert_false(hal_device_uuid_parse(NULL, uuid));
}

// A device by UUID: the one whose UUID it is; an unknown UUID is NOT_FOUND
// naming it and listing what there is; devices without a UUID never match.
static void Loader_CreatesDeviceByUuid(void** state) {
  hal_driver_registry_t* registry = hal_test_create_registry();
  hal_driver_t* driver = NULL;
  HAL_ASSERT_OK(hal_driver_registry_create_driver(
      registry, "test", hal_allocator_system(), &driver));
  uint8_t uuid[HAL_DEVICE_UUID_SIZE];
  assert_true(
      hal_device_uuid_parse("7e57ab1e-0000-4000-8000-000000000001", uuid));
  hal_device_t* device = NULL;
  HAL_ASSERT_OK(hal_driver_create_device_by_uuid(
      driver, uuid, hal_allocator_system(), &device));
  assert_int_equal(hal_device_info(device)->index, 1);
  assert_true(hal_device_info(device)->has_uuid);
  assert_memory_equal(hal_device_info(device)->uuid, uuid, sizeof(uuid));
  hal_device_release(device);

  uuid[0] = 0x00;
  device = (hal_device_t*)1;
  HAL_ASSERT_STATUS(HAL_STATUS_NOT_FOUND,
                    "driver 'test' has no device with UUID "
                    "0057ab1e-0000-4000-8000-000000000001; it has 2: "
                    "7e57ab1e-0000-4000-8000-000000000000 ('test-device-0'), "
                    "7e57ab1e-0000-4000-8000-000000000001 ('test-device-1')",
                    hal_driver_create_device_by_uuid(
                        driver, uuid, hal_allocator_system(), &device));
  assert_null(device);
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, NULL,
                    hal_driver_create_device_by_uuid(
                        driver, NULL, hal_allocator_system(), &device));
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, NULL,
                    hal_driver_create_device_by_uuid(
                        driver, uuid, hal_allocator_system(), NULL));

  // Without UUIDs (the plugin reads the variable at each query): all zero,
  // and nothing matches, not even the nil UUID.
  setenv("HAL_TEST_PLUGIN_NO_UUID", "1", 1);
  hal_device_info_t info;
  HAL_ASSERT_OK(hal_driver_query_device_info(driver, 0, &info));
  assert_false(info.has_uuid);
  static const uint8_t kZero[HAL_DEVICE_UUID_SIZE] = {0};
  assert_memory_equal(info.uuid, kZero, sizeof(kZero));
  HAL_ASSERT_STATUS(
      HAL_STATUS_NOT_FOUND,
      "it has 2: no UUID ('test-device-0'), no UUID ('test-device-1')",
      hal_driver_create_device_by_uuid(driver, kZero, hal_allocator_system(),
                                       &device));
  unsetenv("HAL_TEST_PLUGIN_NO_UUID");
  assert_null(device);
  hal_driver_release(driver);
  hal_driver_registry_free(registry);
}

static void Loader_WrongAbiVersionIsRefusedNamingBoth(void** state) {
  hal_driver_registry_t* registry = hal_test_create_registry();
  const hal_plugin_record_t* record =
      find_record(registry, "test_wrong_abi", 0);
  assert_non_null(record);
  assert_int_equal(hal_status_code(record->load_status),
                   HAL_STATUS_INCOMPATIBLE);
  assert_int_equal(record->abi_version, 99);
  assert_non_null(
      strstr(hal_status_message(record->load_status), "ABI version 99"));
  char speaks[32];
  snprintf(speaks, sizeof(speaks), "speaks version %u", HAL_PLUGIN_ABI_VERSION);
  assert_non_null(strstr(hal_status_message(record->load_status), speaks));
  hal_driver_t* driver = NULL;
  HAL_ASSERT_STATUS(
      HAL_STATUS_INCOMPATIBLE, "cannot be used",
      hal_driver_registry_create_driver(registry, "test_wrong_abi",
                                        hal_allocator_system(), &driver));
  assert_null(driver);
  hal_driver_registry_free(registry);
}

static void Loader_MissingEntryPointKeepsDlerror(void** state) {
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

static void Loader_NotAnElfFileKeepsDlerror(void** state) {
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

static void Loader_MisnamedPluginIsRefused(void** state) {
  hal_driver_registry_t* registry = hal_test_create_registry();
  const hal_plugin_record_t* record = find_record(registry, "test_misnamed", 0);
  assert_non_null(record);
  assert_int_equal(hal_status_code(record->load_status),
                   HAL_STATUS_INCOMPATIBLE);
  assert_non_null(
      strstr(hal_status_message(record->load_status), "'not_my_file_name'"));
  hal_driver_registry_free(registry);
}

static void Loader_NoDevicesIsAClearError(void** state) {
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

static void Loader_UnknownNameListsDriversAndDirectories(void** state) {
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

// The test plugin's bytes (malloc'd) and size.
static uint8_t* read_test_plugin(size_t* out_size) {
  char path[4096];
  snprintf(path, sizeof(path), "%s/hal-driver-test.so", hal_test_plugin_dir());
  FILE* file = fopen(path, "rb");
  assert_non_null(file);
  assert_int_equal(fseek(file, 0, SEEK_END), 0);
  long size = ftell(file);
  assert_true(size > 0);
  rewind(file);
  uint8_t* bytes = malloc((size_t)size);
  assert_non_null(bytes);
  assert_int_equal(fread(bytes, 1, (size_t)size, file), (size_t)size);
  fclose(file);
  *out_size = (size_t)size;
  return bytes;
}

// Writes |size| bytes to |dir|/hal-driver-|name|.so; the path goes to |path|.
static void write_plugin_file(const char* dir, const char* name,
                              const uint8_t* bytes, size_t size, char* path,
                              size_t path_size) {
  snprintf(path, path_size, "%s/hal-driver-%s.so", dir, name);
  FILE* file = fopen(path, "wb");
  assert_non_null(file);
  assert_int_equal(fwrite(bytes, 1, size, file), size);
  assert_int_equal(fclose(file), 0);
}

// A fresh scratch directory per test (*state), removed with everything in
// it after the test, also when the test fails.
static int make_scratch_dir(void** state) {
  const char* tmp = getenv("TMPDIR");
  char* dir = malloc(4096);
  if (!dir)
    return -1;
  snprintf(dir, 4096, "%s/hal-loader-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(dir)) {
    free(dir);
    return -1;
  }
  *state = dir;
  return 0;
}

static int remove_scratch_entry(const char* path, const struct stat* st,
                                int type, struct FTW* ftw) {
  return remove(path);
}

static int remove_scratch_dir(void** state) {
  nftw(*state, remove_scratch_entry, 16, FTW_DEPTH | FTW_PHYS);
  free(*state);
  return 0;
}

// Makes |scratch|/|sub| (path in |dir|) holding a copy of the test plugin
// (path in |plugin|): its own file, so copies in two directories are two
// plugins.
static void make_plugin_dir(const char* scratch, const char* sub, char* dir,
                            char* plugin, size_t size) {
  snprintf(dir, size, "%s/%s", scratch, sub);
  assert_int_equal(mkdir(dir, 0700), 0);
  size_t plugin_size = 0;
  uint8_t* bytes = read_test_plugin(&plugin_size);
  write_plugin_file(dir, "test", bytes, plugin_size, plugin, size);
  free(bytes);
}

// Two plugin files of one name: the first on the path is used, the other
// is listed as shadowed by it.
static void Loader_DuplicateNamesFirstOnPathWins(void** state) {
  char first[1024], second[1024], first_link[1024], second_link[1024];
  make_plugin_dir(*state, "first", first, first_link, sizeof(first));
  make_plugin_dir(*state, "second", second, second_link, sizeof(second));
  char search_path[4096];
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
}

// A plugin file whose name no device URI could carry (a ':', where a URI
// ends the driver's name) is listed as refused, never loaded; a file named
// "hal-driver-.so" has no driver name and is no plugin, which the loader's
// debug output says. A name longer than a driver can hold is refused too.
static void Loader_NamesNoUriCanHoldAreRefused(void** state) {
  char dir[1024], plugin[1024], odd[1024];
  make_plugin_dir(*state, "dir", dir, plugin, sizeof(dir));
  size_t plugin_size = 0;
  uint8_t* bytes = read_test_plugin(&plugin_size);
  write_plugin_file(dir, "test:x", bytes, plugin_size, odd, sizeof(odd));
  write_plugin_file(dir, "", bytes, plugin_size, odd, sizeof(odd));
  // One byte past what a driver can hold with its NUL.
  char long_name[HAL_DRIVER_NAME_MAX + 1];
  memset(long_name, 'L', HAL_DRIVER_NAME_MAX);
  long_name[HAL_DRIVER_NAME_MAX] = '\0';
  write_plugin_file(dir, long_name, bytes, plugin_size, odd, sizeof(odd));
  free(bytes);
  hal_driver_registry_options_t options = {.search_path = dir,
                                           .skip_install_dir = true};
  hal_test_stderr_capture_t capture;
  hal_test_stderr_capture_begin(&capture);
  setenv("HAL_LOADER_DEBUG", "1", 1);
  hal_driver_registry_t* registry = NULL;
  hal_status_t status =
      hal_driver_registry_create(&options, hal_allocator_system(), &registry);
  unsetenv("HAL_LOADER_DEBUG");
  char log[16384];
  hal_test_stderr_capture_end(&capture, log, sizeof(log));
  HAL_ASSERT_OK(status);
  assert_int_equal(hal_driver_registry_plugin_count(registry), 3);
  const hal_plugin_record_t* too_long = find_record(registry, long_name, 0);
  assert_non_null(too_long);
  assert_int_equal(hal_status_code(too_long->load_status),
                   HAL_STATUS_INVALID_ARGUMENT);
  assert_non_null(strstr(hal_status_message(too_long->load_status),
                         "a driver name is at most 63 bytes, this one is 64"));
  const hal_plugin_record_t* refused = find_record(registry, "test:x", 0);
  assert_non_null(refused);
  assert_int_equal(hal_status_code(refused->load_status),
                   HAL_STATUS_INVALID_ARGUMENT);
  assert_non_null(strstr(hal_status_message(refused->load_status),
                         "a driver name cannot hold ':'"));
  assert_null(find_record(registry, "test", 0)->load_status);
  if (!strstr(log, "hal-driver-.so: no driver name, not a plugin"))
    HAL_TEST_FAIL("no word of hal-driver-.so in the loader's log:\n%s", log);
  hal_driver_registry_free(registry);
}

// hal_library_open/close/path at their edges: a file that is not there
// gives NULL with dlerror() naming it, NULL closes as nothing, and a
// handle the loader cannot describe has "(unknown path)".
static void Library_OpenCloseAndPathAtTheirEdges(void** state) {
  (void)state;
  (void)dlerror();
  assert_null(hal_library_open("/nonexistent/libhal-test.so", RTLD_NOW));
  const char* error = dlerror();
  assert_non_null(error);
  assert_non_null(strstr(error, "/nonexistent/libhal-test.so"));
  assert_int_equal(hal_library_close(NULL), 0);
  char* path = NULL;
  HAL_ASSERT_OK(hal_library_path(NULL, hal_allocator_system(), &path));
  assert_string_equal(path, "(unknown path)");
  hal_allocator_free(hal_allocator_system(), path);
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, "out_path",
                    hal_library_path(NULL, hal_allocator_system(), NULL));
  char plugin[4096];
  snprintf(plugin, sizeof(plugin), "%s/hal-driver-test.so",
           hal_test_plugin_dir());
  void* handle = hal_library_open(plugin, RTLD_NOW | RTLD_LOCAL);
  assert_non_null(handle);
  HAL_ASSERT_OK(hal_library_path(handle, hal_allocator_system(), &path));
  char resolved[PATH_MAX];
  assert_non_null(realpath(plugin, resolved));
  assert_string_equal(path, resolved);
  hal_allocator_free(hal_allocator_system(), path);
  assert_int_equal(hal_library_close(handle), 0);
}

// HAL_DRIVER_PATH spellings of one directory: a trailing slash, "/.", a
// doubled slash, a symlink to it. Searched once, at its first position, so
// its plugins do not shadow themselves.
static void Loader_OneDirectorySpelledManyWaysIsSearchedOnce(void** state) {
  char dir[1024], plugin[1024], alias[1024];
  make_plugin_dir(*state, "dir", dir, plugin, sizeof(dir));
  snprintf(alias, sizeof(alias), "%s/alias", (const char*)*state);
  assert_int_equal(symlink(dir, alias), 0);
  char search_path[8192];
  snprintf(search_path, sizeof(search_path), "%s/:%s:%s/.:%s:%s//:%s/", dir,
           dir, dir, alias, dir, alias);
  hal_driver_registry_options_t options = {.search_path = search_path,
                                           .skip_install_dir = true};
  hal_driver_registry_t* registry = NULL;
  HAL_ASSERT_OK(
      hal_driver_registry_create(&options, hal_allocator_system(), &registry));
  assert_int_equal(hal_driver_registry_directory_count(registry), 1);
  // Listed as first spelled.
  char first_spelling[1100];
  snprintf(first_spelling, sizeof(first_spelling), "%s/", dir);
  assert_string_equal(hal_driver_registry_directory_at(registry, 0),
                      first_spelling);
  assert_int_equal(hal_driver_registry_plugin_count(registry), 1);
  const hal_plugin_record_t* record = find_record(registry, "test", 0);
  assert_non_null(record);
  assert_null(record->shadowed_by);
  assert_null(record->load_status);
  hal_driver_t* driver = NULL;
  HAL_ASSERT_OK(hal_driver_registry_create_driver(
      registry, "test", hal_allocator_system(), &driver));
  hal_driver_release(driver);
  hal_driver_registry_free(registry);
}

// One plugin file reached from two directories (the first holds a symlink
// to the second's file) is one plugin, listed once, not its own shadow.
static void Loader_OneFileReachedTwiceIsNotItsOwnShadow(void** state) {
  char first[1024], second[1024], real_plugin[1024], link_path[1100];
  make_plugin_dir(*state, "real", second, real_plugin, sizeof(second));
  snprintf(first, sizeof(first), "%s/via", (const char*)*state);
  assert_int_equal(mkdir(first, 0700), 0);
  snprintf(link_path, sizeof(link_path), "%s/hal-driver-test.so", first);
  assert_int_equal(symlink(real_plugin, link_path), 0);
  char search_path[4096];
  snprintf(search_path, sizeof(search_path), "%s:%s", first, second);
  hal_driver_registry_options_t options = {.search_path = search_path,
                                           .skip_install_dir = true};
  hal_driver_registry_t* registry = NULL;
  HAL_ASSERT_OK(
      hal_driver_registry_create(&options, hal_allocator_system(), &registry));
  assert_int_equal(hal_driver_registry_directory_count(registry), 2);
  assert_int_equal(hal_driver_registry_plugin_count(registry), 1);
  const hal_plugin_record_t* record = find_record(registry, "test", 0);
  assert_string_equal(record->path, link_path);
  assert_null(record->shadowed_by);
  assert_null(record->load_status);
  hal_driver_registry_free(registry);
}

// A damaged copy of the test plugin: |size| bytes of it, then |patch| of
// |patch_size| bytes at |patch_at| (none if NULL); |needle| is what its
// load status must say.
typedef struct damaged_plugin_t {
  const char* name;
  size_t size;
  size_t patch_at;
  const void* patch;
  size_t patch_size;
  hal_status_code_t code;
  char needle[160];
} damaged_plugin_t;

static void add_cut(damaged_plugin_t* list, size_t* count, const char* name,
                    size_t size, const char* needle) {
  damaged_plugin_t* d = &list[(*count)++];
  memset(d, 0, sizeof(*d));
  d->name = name;
  d->size = size;
  d->code = HAL_STATUS_DATA_LOSS;
  snprintf(d->needle, sizeof(d->needle), "%s", needle);
}

// Truncated and inconsistent plugin files (cut inside the ELF header, the
// program headers, a loaded segment, the section headers; program headers
// placed past the end) beside a good plugin. dlopen would map such a file
// past its end and the host would die of SIGBUS; the registry must list
// each as broken, saying where the file ends, and the good plugin must
// still load.
static void Loader_TruncatedPluginsAreBrokenNotFatal(void** state) {
  size_t size = 0;
  uint8_t* bytes = read_test_plugin(&size);
  ElfW(Ehdr) ehdr;
  memcpy(&ehdr, bytes, sizeof(ehdr));
  assert_true(ehdr.e_phnum >= 2);
  assert_int_equal(ehdr.e_phentsize, sizeof(ElfW(Phdr)));
  // Cut in the middle of the last loaded segment. The message names the
  // first segment, in program header order, that runs past the cut.
  ElfW(Phdr) phdrs[64];
  assert_true(ehdr.e_phnum <= HAL_ARRAYSIZE(phdrs));
  memcpy(phdrs, bytes + ehdr.e_phoff, ehdr.e_phnum * sizeof(phdrs[0]));
  size_t last_load = SIZE_MAX;
  size_t last_byte = 0;  // end of the file bytes of every segment
  for (size_t i = 0; i < ehdr.e_phnum; ++i) {
    size_t end = (size_t)(phdrs[i].p_offset + phdrs[i].p_filesz);
    if (end > last_byte)
      last_byte = end;
    if (phdrs[i].p_type == PT_LOAD && phdrs[i].p_filesz > 1)
      last_load = i;
  }
  assert_true(last_load != SIZE_MAX);
  size_t segment_cut =
      (size_t)(phdrs[last_load].p_offset + phdrs[last_load].p_filesz / 2);
  size_t segment = 0;
  while (phdrs[segment].p_filesz == 0 ||
         phdrs[segment].p_offset + phdrs[segment].p_filesz <= segment_cut) {
    ++segment;
  }
  size_t segment_end =
      (size_t)(phdrs[segment].p_offset + phdrs[segment].p_filesz);

  damaged_plugin_t damaged[8];
  size_t count = 0;
  char needle[160];
  add_cut(damaged, &count, "cut_in_elf_header", 40,
          "truncated ELF file: the ELF header needs");
  add_cut(damaged, &count, "cut_at_100_bytes", 100,
          "truncated ELF file: the program header table ends at byte");
  size_t phdr_cut = (size_t)ehdr.e_phoff + sizeof(ElfW(Phdr)) * 3 / 2;
  snprintf(needle, sizeof(needle), "but the file has %zu bytes", phdr_cut);
  add_cut(damaged, &count, "cut_in_program_headers", phdr_cut, needle);
  snprintf(needle, sizeof(needle),
           "truncated ELF file: segment %zu ends at byte %zu but the file "
           "has %zu bytes",
           segment, segment_end, segment_cut);
  add_cut(damaged, &count, "cut_in_segment", segment_cut, needle);
  if (size > 4096 && last_byte > 4096) {
    add_cut(damaged, &count, "first_4k", 4096, "truncated ELF file: segment");
  }
  if (ehdr.e_shoff >= last_byte && ehdr.e_shnum > 1) {
    add_cut(damaged, &count, "cut_in_section_headers",
            (size_t)ehdr.e_shoff + ehdr.e_shentsize,
            "truncated ELF file: the section header table ends at byte");
  }
  // Whole file, but the program headers said to lie past its end.
  ElfW(Off) past_end = (ElfW(Off))size - 8;
  add_cut(damaged, &count, "phdrs_past_end", size,
          "truncated ELF file: the program header table ends at byte");
  damaged[count - 1].patch_at = offsetof(ElfW(Ehdr), e_phoff);
  damaged[count - 1].patch = &past_end;
  damaged[count - 1].patch_size = sizeof(past_end);

  char dir[1024], good[1024];
  make_plugin_dir(*state, "damaged", dir, good, sizeof(dir));
  char paths[8][1100];
  uint8_t* copy = malloc(size);
  assert_non_null(copy);
  for (size_t i = 0; i < count; ++i) {
    memcpy(copy, bytes, size);
    if (damaged[i].patch) {
      memcpy(copy + damaged[i].patch_at, damaged[i].patch,
             damaged[i].patch_size);
    }
    write_plugin_file(dir, damaged[i].name, copy, damaged[i].size, paths[i],
                      sizeof(paths[i]));
  }
  free(copy);

  hal_driver_registry_options_t options = {.search_path = dir,
                                           .skip_install_dir = true};
  hal_driver_registry_t* registry = NULL;
  HAL_ASSERT_OK(
      hal_driver_registry_create(&options, hal_allocator_system(), &registry));
  assert_int_equal(hal_driver_registry_plugin_count(registry), count + 1);
  for (size_t i = 0; i < count; ++i) {
    const hal_plugin_record_t* record =
        find_record(registry, damaged[i].name, 0);
    assert_non_null(record);
    assert_null(record->shadowed_by);
    assert_int_equal(record->abi_version, 0);
    const char* message = hal_status_message(record->load_status);
    if (hal_status_code(record->load_status) != damaged[i].code ||
        !strstr(message, damaged[i].needle) || !strstr(message, paths[i])) {
      fail_msg("%s (%zu bytes): got %s \"%s\", wanted %s with \"%s\"",
               damaged[i].name, damaged[i].size,
               hal_status_code_string(hal_status_code(record->load_status)),
               message, hal_status_code_string(damaged[i].code),
               damaged[i].needle);
    }
    hal_driver_t* driver = NULL;
    HAL_ASSERT_STATUS(
        damaged[i].code, "truncated ELF file",
        hal_driver_registry_create_driver(registry, damaged[i].name,
                                          hal_allocator_system(), &driver));
    assert_null(driver);
  }
  const hal_plugin_record_t* record = find_record(registry, "test", 0);
  assert_non_null(record);
  assert_null(record->load_status);
  hal_driver_t* driver = NULL;
  HAL_ASSERT_OK(hal_driver_registry_create_driver(
      registry, "test", hal_allocator_system(), &driver));
  hal_driver_release(driver);
  hal_driver_registry_free(registry);
  free(bytes);
}

// ELF files made for another host are refused from their headers, naming
// the mismatch, and never reach dlopen.
static void Loader_ForeignElfFilesAreRefusedNamingWhy(void** state) {
  size_t size = 0;
  uint8_t* bytes = read_test_plugin(&size);
  const char* dir = *state;
  struct {
    const char* name;
    size_t at;
    uint16_t value;
    size_t value_size;
    const char* needle;
  } cases[] = {
      {"other_class", EI_CLASS,
       ELFCLASS64 + ELFCLASS32 - (uint16_t)bytes[EI_CLASS], 1, "-bit ELF"},
      {"other_data", EI_DATA,
       ELFDATA2LSB + ELFDATA2MSB - (uint16_t)bytes[EI_DATA], 1, "endian"},
      {"other_machine", offsetof(ElfW(Ehdr), e_machine),
       bytes[offsetof(ElfW(Ehdr), e_machine)] == EM_AARCH64 ? EM_X86_64
                                                            : EM_AARCH64,
       2, "machine"},
      {"executable", offsetof(ElfW(Ehdr), e_type), ET_EXEC, 2, "ET_EXEC"},
  };
  char paths[4][1100];
  uint8_t* copy = malloc(size);
  assert_non_null(copy);
  for (size_t i = 0; i < HAL_ARRAYSIZE(cases); ++i) {
    memcpy(copy, bytes, size);
    if (cases[i].value_size == 1) {
      copy[cases[i].at] = (uint8_t)cases[i].value;
    } else {
      uint16_t value = cases[i].value;  // host byte order, like the file's
      memcpy(copy + cases[i].at, &value, sizeof(value));
    }
    write_plugin_file(dir, cases[i].name, copy, size, paths[i],
                      sizeof(paths[i]));
  }
  free(copy);
  hal_driver_registry_options_t options = {.search_path = dir,
                                           .skip_install_dir = true};
  hal_driver_registry_t* registry = NULL;
  HAL_ASSERT_OK(
      hal_driver_registry_create(&options, hal_allocator_system(), &registry));
  for (size_t i = 0; i < HAL_ARRAYSIZE(cases); ++i) {
    const hal_plugin_record_t* record = find_record(registry, cases[i].name, 0);
    assert_non_null(record);
    const char* message = hal_status_message(record->load_status);
    if (hal_status_code(record->load_status) != HAL_STATUS_INCOMPATIBLE ||
        !strstr(message, cases[i].needle) || !strstr(message, paths[i]) ||
        strstr(message, "dlopen")) {
      fail_msg("%s: got %s \"%s\", wanted INCOMPATIBLE with \"%s\"",
               cases[i].name,
               hal_status_code_string(hal_status_code(record->load_status)),
               message, cases[i].needle);
    }
  }
  hal_driver_registry_free(registry);
  free(bytes);
}

// A named pipe named like a plugin is broken, and the registry does not
// block opening it (dlopen would wait for a writer forever).
static void Loader_NamedPipeIsBrokenNotBlocking(void** state) {
  char fifo[1100];
  snprintf(fifo, sizeof(fifo), "%s/hal-driver-fifo.so", (const char*)*state);
  assert_int_equal(mkfifo(fifo, 0600), 0);
  hal_driver_registry_options_t options = {.search_path = *state,
                                           .skip_install_dir = true};
  hal_driver_registry_t* registry = NULL;
  HAL_ASSERT_OK(
      hal_driver_registry_create(&options, hal_allocator_system(), &registry));
  const hal_plugin_record_t* record = find_record(registry, "fifo", 0);
  assert_non_null(record);
  assert_int_equal(hal_status_code(record->load_status),
                   HAL_STATUS_UNAVAILABLE);
  assert_non_null(
      strstr(hal_status_message(record->load_status), "not a regular file"));
  hal_driver_registry_free(registry);
}

static void Loader_DriverOutlivesRegistry(void** state) {
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

static void Loader_CreateFailureCarriesPluginStatus(void** state) {
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

static void Loader_MissingDirectoriesAreNotErrors(void** state) {
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

static void Loader_InstallDirIsBesideLibhal(void** state) {
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

static void Loader_BadArgumentsAreRejected(void** state) {
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
// HAL_DRIVERS_SELECT: only drivers matching one of its globs load; the
// others are listed, never dlopen()ed, and say why.
static void DriversSelect_LoadsOnlyMatching(void** state) {
  setenv("HAL_DRIVERS_SELECT", "test,test_no_dev*", 1);
  hal_driver_registry_t* registry = hal_test_create_registry();
  unsetenv("HAL_DRIVERS_SELECT");
  assert_null(find_record(registry, "test", 0)->load_status);
  assert_null(find_record(registry, "test_no_devices", 0)->load_status);
  const hal_plugin_record_t* other = find_record(registry, "test_wrong_abi", 0);
  assert_int_equal(hal_status_code(other->load_status), HAL_STATUS_UNAVAILABLE);
  assert_int_equal(other->abi_version, 0);  // never asked: never loaded
  hal_driver_t* driver = NULL;
  HAL_ASSERT_STATUS(
      HAL_STATUS_UNAVAILABLE,
      "is not selected by HAL_DRIVERS_SELECT=test,test_no_dev*",
      hal_driver_registry_create_driver(registry, "test_wrong_abi",
                                        hal_allocator_system(), &driver));
  assert_null(driver);
  hal_driver_registry_free(registry);
}

// HAL_DRIVERS_DISABLE wins over HAL_DRIVERS_SELECT.
static void DriversDisable_WinsOverSelect(void** state) {
  setenv("HAL_DRIVERS_SELECT", "test*", 1);
  setenv("HAL_DRIVERS_DISABLE", "nothing,test", 1);
  hal_driver_registry_t* registry = hal_test_create_registry();
  unsetenv("HAL_DRIVERS_SELECT");
  unsetenv("HAL_DRIVERS_DISABLE");
  assert_null(find_record(registry, "test_no_devices", 0)->load_status);
  hal_driver_t* driver = NULL;
  HAL_ASSERT_STATUS(
      HAL_STATUS_UNAVAILABLE,
      "driver 'test' is disabled by HAL_DRIVERS_DISABLE=nothing,test",
      hal_driver_registry_create_driver(registry, "test",
                                        hal_allocator_system(), &driver));
  hal_driver_registry_free(registry);
}

// HAL_LOADER_DEBUG=1: what the loader searched, loaded, rejected and why,
// on stderr, from any program, down to a switch's glob that matches no
// plugin (here one with a space before it).
static void LoaderDebug_PrintsWhatItSearchedAndWhy(void** state) {
  hal_test_stderr_capture_t capture;
  hal_test_stderr_capture_begin(&capture);
  setenv("HAL_LOADER_DEBUG", "1", 1);
  // An empty element says nothing; one over the longest glob says so.
  char disable[400] = "test_misnamed, test_no_devices,,";
  memset(disable + strlen(disable), '*', 256);
  setenv("HAL_DRIVERS_DISABLE", disable, 1);
  hal_driver_registry_t* registry = hal_test_create_registry();
  hal_driver_t* driver = NULL;
  hal_status_t status = hal_driver_registry_create_driver(
      registry, "test", hal_allocator_system(), &driver);
  unsetenv("HAL_LOADER_DEBUG");
  unsetenv("HAL_DRIVERS_DISABLE");
  char log[16384];
  size_t length = hal_test_stderr_capture_end(&capture, log, sizeof(log));
  HAL_ASSERT_OK(status);
  hal_driver_release(driver);
  hal_driver_registry_free(registry);
  assert_true(length > 0);
  char searched[4200];
  snprintf(searched, sizeof(searched), "hal loader: searching %s\n",
           hal_test_plugin_dir());
  const char* expected[] = {
      searched,
      "hal loader: HAL_DRIVERS_DISABLE=test_misnamed, test_no_devices,,***",
      "hal-driver-test.so: loaded driver 'test' (ABI ",
      "hal-driver-test_wrong_abi.so: rejected: INCOMPATIBLE",
      "hal-driver-test_misnamed.so: not loaded: driver 'test_misnamed' is "
      "disabled by HAL_DRIVERS_DISABLE=test_misnamed, test_no_devices,,***",
      "hal-driver-test_no_devices.so: loaded driver 'test_no_devices'",
      "hal loader: HAL_DRIVERS_DISABLE: ' test_no_devices' matches no plugin "
      "found",
      "hal loader: HAL_DRIVERS_DISABLE: a glob of 256 bytes ('****",
      "matches nothing: the longest is 255",
      "hal loader: creating driver 'test' from ",
  };
  for (size_t i = 0; i < HAL_ARRAYSIZE(expected); ++i) {
    if (!strstr(log, expected[i]))
      HAL_TEST_FAIL("no '%s' in the loader's log:\n%s", expected[i], log);
  }
  // A glob that matches, and an empty element, say nothing of the kind.
  if (strstr(log, "'test_misnamed' matches no plugin") ||
      strstr(log, "'' matches no plugin"))
    HAL_TEST_FAIL("a glob reported as matching nothing:\n%s", log);
}

// One strict answer for a malformed switch, naming the variable.
static void LoaderDebug_BadValueIsRejected(void** state) {
  setenv("HAL_LOADER_DEBUG", "yes", 1);
  hal_driver_registry_t* registry = NULL;
  hal_status_t status =
      hal_driver_registry_create(NULL, hal_allocator_system(), &registry);
  unsetenv("HAL_LOADER_DEBUG");
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT,
                    "HAL_LOADER_DEBUG='yes': expected 0 or 1", status);
  assert_null(registry);
}

static void expect_device(hal_driver_registry_t* registry, const char* uri,
                          uint32_t index) {
  hal_device_t* device = NULL;
  HAL_ASSERT_OK(hal_driver_registry_create_device(
      registry, uri, hal_allocator_system(), &device));
  assert_non_null(device);
  assert_int_equal(hal_device_info(device)->index, index);
  hal_device_release(device);
}

// Device URIs: DRIVER, DRIVER://INDEX, DRIVER://UUID (either case, with or
// without "GPU-"), DRIVER://NAME; what is wrong with a bad one is said,
// with what there is.
static void DeviceUri_NamesDriverAndIndexOrName(void** state) {
  hal_driver_registry_t* registry = hal_test_create_registry();
  expect_device(registry, "test", 0);
  expect_device(registry, "test://1", 1);
  expect_device(registry, "test://test-device-1", 1);
  expect_device(registry, "test://0", 0);
  expect_device(registry, "test://7e57ab1e-0000-4000-8000-000000000001", 1);
  expect_device(registry, "test://7E57AB1E-0000-4000-8000-000000000000", 0);
  expect_device(registry, "test://GPU-7e57ab1e-0000-4000-8000-000000000001", 1);
  expect_device(registry, "test://gpu-7E57aB1e-0000-4000-8000-000000000000", 0);
  hal_device_t* device = NULL;
  const char* unknown = "test://GPU-7E57AB1E-0000-4000-8000-000000000009";
  HAL_ASSERT_STATUS(HAL_STATUS_NOT_FOUND,
                    "creating device "
                    "'test://GPU-7E57AB1E-0000-4000-8000-000000000009'",
                    hal_driver_registry_create_device(
                        registry, unknown, hal_allocator_system(), &device));
  HAL_ASSERT_STATUS(HAL_STATUS_NOT_FOUND,
                    "driver 'test' has no device with UUID "
                    "7e57ab1e-0000-4000-8000-000000000009; it has 2: "
                    "7e57ab1e-0000-4000-8000-000000000000 ('test-device-0'), "
                    "7e57ab1e-0000-4000-8000-000000000001 ('test-device-1')",
                    hal_driver_registry_create_device(
                        registry, unknown, hal_allocator_system(), &device));
  assert_null(device);
  // Not quite a UUID: a name, which no device has.
  HAL_ASSERT_STATUS(HAL_STATUS_NOT_FOUND,
                    "no device named '7e57ab1e-0000-4000-8000-00000000001'",
                    hal_driver_registry_create_device(
                        registry, "test://7e57ab1e-0000-4000-8000-00000000001",
                        hal_allocator_system(), &device));
  // A driver whose devices report no UUID: nothing matches one.
  setenv("HAL_TEST_PLUGIN_NO_UUID", "1", 1);
  HAL_ASSERT_STATUS(
      HAL_STATUS_NOT_FOUND,
      "no device with UUID 7e57ab1e-0000-4000-8000-000000000001; it has 2: "
      "no UUID ('test-device-0'), no UUID ('test-device-1')",
      hal_driver_registry_create_device(
          registry, "test://7e57ab1e-0000-4000-8000-000000000001",
          hal_allocator_system(), &device));
  unsetenv("HAL_TEST_PLUGIN_NO_UUID");
  assert_null(device);
  const char* malformed[] = {"", "://1", "test://", "te/st://1", "a:b"};
  for (size_t i = 0; i < HAL_ARRAYSIZE(malformed); ++i) {
    HAL_ASSERT_STATUS(
        HAL_STATUS_INVALID_ARGUMENT,
        "is not DRIVER, DRIVER://INDEX, DRIVER://UUID or DRIVER://NAME",
        hal_driver_registry_create_device(registry, malformed[i],
                                          hal_allocator_system(), &device));
    assert_null(device);
  }
  HAL_ASSERT_STATUS(HAL_STATUS_OUT_OF_RANGE, "creating device 'test://7'",
                    hal_driver_registry_create_device(
                        registry, "test://7", hal_allocator_system(), &device));
  HAL_ASSERT_STATUS(
      HAL_STATUS_NOT_FOUND, "'test-device-0', 'test-device-1'",
      hal_driver_registry_create_device(registry, "test://gpu",
                                        hal_allocator_system(), &device));
  HAL_ASSERT_STATUS(HAL_STATUS_NOT_FOUND, "no driver named 'nope'",
                    hal_driver_registry_create_device(
                        registry, "nope://0", hal_allocator_system(), &device));
  HAL_ASSERT_STATUS(
      HAL_STATUS_OUT_OF_RANGE, "out of range",
      hal_driver_registry_create_device(registry, "test://99999999999999999999",
                                        hal_allocator_system(), &device));
  assert_null(device);
  hal_driver_registry_free(registry);
}

static void Loader_CreateReleaseLoop(void** state) {
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

// The test list: CASE binds this program's fixture.
#define CASE(name) cmocka_unit_test(name)

int main(void) {
  const struct CMUnitTest tests[] = {
      CASE(Loader_FoundByDriverPathEnvironment),
      CASE(Loader_CreatesDriverAndDevices),
      CASE(Loader_CreatesDeviceByUuid),
      CASE(DeviceUuid_FormatsAndParses),
      CASE(Loader_WrongAbiVersionIsRefusedNamingBoth),
      CASE(Loader_MissingEntryPointKeepsDlerror),
      CASE(Loader_NotAnElfFileKeepsDlerror),
      CASE(Loader_MisnamedPluginIsRefused),
      CASE(Loader_NoDevicesIsAClearError),
      CASE(Loader_UnknownNameListsDriversAndDirectories),
      CASE(Library_OpenCloseAndPathAtTheirEdges),
      cmocka_unit_test_setup_teardown(Loader_NamesNoUriCanHoldAreRefused,
                                      make_scratch_dir, remove_scratch_dir),
      cmocka_unit_test_setup_teardown(Loader_DuplicateNamesFirstOnPathWins,
                                      make_scratch_dir, remove_scratch_dir),
      cmocka_unit_test_setup_teardown(
          Loader_OneDirectorySpelledManyWaysIsSearchedOnce, make_scratch_dir,
          remove_scratch_dir),
      cmocka_unit_test_setup_teardown(
          Loader_OneFileReachedTwiceIsNotItsOwnShadow, make_scratch_dir,
          remove_scratch_dir),
      cmocka_unit_test_setup_teardown(Loader_TruncatedPluginsAreBrokenNotFatal,
                                      make_scratch_dir, remove_scratch_dir),
      cmocka_unit_test_setup_teardown(Loader_ForeignElfFilesAreRefusedNamingWhy,
                                      make_scratch_dir, remove_scratch_dir),
      cmocka_unit_test_setup_teardown(Loader_NamedPipeIsBrokenNotBlocking,
                                      make_scratch_dir, remove_scratch_dir),
      CASE(Loader_DriverOutlivesRegistry),
      CASE(Loader_CreateFailureCarriesPluginStatus),
      CASE(Loader_MissingDirectoriesAreNotErrors),
      CASE(Loader_InstallDirIsBesideLibhal),
      CASE(Loader_BadArgumentsAreRejected),
      CASE(DriversSelect_LoadsOnlyMatching),
      CASE(DriversDisable_WinsOverSelect),
      CASE(LoaderDebug_PrintsWhatItSearchedAndWhy),
      CASE(LoaderDebug_BadValueIsRejected),
      CASE(DeviceUri_NamesDriverAndIndexOrName),
      CASE(Loader_CreateReleaseLoop),
  };
  return cmocka_run_group_tests_name("core/loader", tests, NULL, NULL);
}
