// Copyright 2026 The HAL Authors.

#include "cts.h"

#include <time.h>

cts_context_t cts_context;

// The name of the case cmocka is running, for exclusions. cmocka does not
// expose it, so CTS_CASE passes it in.
static const char* cts_exclude_list;

// A generous bound on any single wait: long enough for a loaded 2-core
// machine under TSan, short enough that a hang fails with a message.
#define CTS_WAIT_TIMEOUT_NS (60ll * 1000 * 1000 * 1000)

static uint64_t cts_parse_u64(const char* text, uint64_t fallback) {
  if (!text || !*text)
    return fallback;
  char* end = NULL;
  unsigned long long value = strtoull(text, &end, 0);
  return (end && *end == '\0') ? (uint64_t)value : fallback;
}

hal_device_t* cts_create_device(uint32_t index) {
  if (!cts_context.driver)
    return NULL;  // the host row: no driver, host semaphores only
  hal_device_t* device = NULL;
  HAL_ASSERT_OK(hal_driver_create_device_by_index(
      cts_context.driver, index, hal_allocator_system(), &device));
  return device;
}

hal_semaphore_t* cts_create_semaphore(hal_device_t* device,
                                      uint64_t initial_value) {
  hal_semaphore_t* semaphore = NULL;
  HAL_ASSERT_OK(cts_try_create_semaphore(device, initial_value, &semaphore));
  return semaphore;
}

hal_status_t cts_try_create_semaphore(hal_device_t* device,
                                      uint64_t initial_value,
                                      hal_semaphore_t** out_semaphore) {
  return device
             ? hal_device_create_semaphore(device, initial_value, out_semaphore)
             : hal_semaphore_create_host(hal_allocator_system(), initial_value,
                                         out_semaphore);
}

hal_status_t cts_wait_list(hal_device_t* device, hal_wait_mode_t mode,
                           size_t count, hal_semaphore_t** semaphores,
                           uint64_t* values, hal_timeout_t timeout) {
  hal_semaphore_list_t list = {count, semaphores, values};
  return device ? hal_device_wait_semaphores(device, mode, &list, timeout)
                : hal_semaphore_list_wait(mode, list, timeout);
}

hal_buffer_t* cts_allocate_buffer(hal_device_t* device,
                                  hal_memory_type_t memory_type,
                                  uint64_t size) {
  hal_buffer_params_t params = {memory_type, HAL_BUFFER_USAGE_DEFAULT};
  if (memory_type & HAL_MEMORY_TYPE_HOST_VISIBLE) {
    params.usage |= HAL_BUFFER_USAGE_MAPPING;
  }
  hal_buffer_t* buffer = NULL;
  HAL_ASSERT_OK(hal_device_allocate_buffer(device, params, size, &buffer));
  return buffer;
}

hal_status_t cts_wait(hal_semaphore_t* semaphore, uint64_t value) {
  return hal_semaphore_wait(semaphore, value,
                            hal_make_timeout_ns(CTS_WAIT_TIMEOUT_NS));
}

uint64_t cts_query(hal_semaphore_t* semaphore) {
  uint64_t value = 0;
  HAL_ASSERT_OK(hal_semaphore_query(semaphore, &value));
  return value;
}

hal_command_buffer_t* cts_begin_command_buffer(hal_device_t* device,
                                               hal_command_buffer_mode_t mode) {
  hal_command_buffer_t* command_buffer = NULL;
  HAL_ASSERT_OK(
      hal_device_create_command_buffer(device, mode, &command_buffer));
  HAL_ASSERT_OK(hal_command_buffer_begin(command_buffer));
  return command_buffer;
}

hal_status_t cts_submit(hal_device_t* device, uint32_t queue,
                        hal_semaphore_t* wait, uint64_t wait_value,
                        hal_command_buffer_t* command_buffer,
                        hal_semaphore_t* signal, uint64_t signal_value) {
  hal_semaphore_list_t waits = {wait ? 1 : 0, &wait, &wait_value};
  hal_semaphore_list_t signals = {signal ? 1 : 0, &signal, &signal_value};
  return hal_device_queue_execute(device, queue, &waits, &signals,
                                  command_buffer ? 1 : 0, &command_buffer);
}

hal_buffer_t* cts_zeroed_buffer(hal_device_t* device, uint64_t size) {
  hal_buffer_t* buffer =
      cts_allocate_buffer(device, HAL_MEMORY_TYPE_DEVICE_LOCAL, size);
  uint8_t* zeros = calloc(1, size ? (size_t)size : 1);
  assert_non_null(zeros);
  HAL_ASSERT_OK(hal_buffer_write(buffer, 0, zeros, size));
  free(zeros);
  return buffer;
}

bool cts_builds_native_graphs(hal_device_t* device) {
  hal_buffer_t* buffer = cts_zeroed_buffer(device, 16);
  hal_command_buffer_t* cb =
      cts_begin_command_buffer(device, HAL_COMMAND_BUFFER_MODE_ONE_SHOT);
  uint8_t value = 1;
  HAL_ASSERT_OK(hal_command_buffer_fill_buffer(cb, buffer, 0, 16, &value, 1));
  HAL_ASSERT_OK(hal_command_buffer_end(cb));
  hal_command_buffer_info_t info;
  HAL_ASSERT_OK(hal_command_buffer_query_info(cb, &info));
  hal_command_buffer_release(cb);
  hal_buffer_release(buffer);
  return info.native_build_count > 0;
}

int cts_setup(void** state) {
  cts_fixture_t* f = calloc(1, sizeof(*f));
  assert_non_null(f);
  f->device = cts_create_device(0);
  f->q1 = hal_device_info(f->device)->queue_count > 1 ? 1 : 0;
  f->timeline = cts_create_semaphore(f->device, 0);
  f->a = cts_zeroed_buffer(f->device, CTS_FIXTURE_BUFFER_SIZE);
  f->b = cts_zeroed_buffer(f->device, CTS_FIXTURE_BUFFER_SIZE);
  *state = f;
  return 0;
}

int cts_teardown(void** state) {
  cts_fixture_t* f = *state;
  hal_executable_release(f->executable);
  hal_buffer_release(f->a);
  hal_buffer_release(f->b);
  hal_semaphore_release(f->timeline);
  hal_device_release(f->device);
  free(f);
  return 0;
}

void cts_fixture_run(cts_fixture_t* f, uint32_t queue,
                     hal_command_buffer_t* command_buffer) {
  uint64_t value = ++f->next_value;
  HAL_ASSERT_OK(cts_submit(f->device, queue, NULL, 0, command_buffer,
                           f->timeline, value));
  HAL_ASSERT_OK(cts_wait(f->timeline, value));
}

hal_status_t cts_create_driver_with_env(const char* variable, const char* value,
                                        hal_driver_t** out_driver) {
  const char* saved = getenv(variable);
  char* saved_copy = saved ? strdup(saved) : NULL;
  setenv(variable, value, 1);
  hal_status_t status = hal_driver_registry_create_driver(
      cts_context.registry, cts_context.driver_name, hal_allocator_system(),
      out_driver);
  if (saved_copy) {
    setenv(variable, saved_copy, 1);
    free(saved_copy);
  } else {
    unsetenv(variable);
  }
  return status;
}

void cts_expect_bytes(hal_buffer_t* buffer, uint64_t offset, uint64_t length,
                      uint8_t expected) {
  uint8_t* bytes = malloc(length ? (size_t)length : 1);
  assert_non_null(bytes);
  HAL_ASSERT_OK(hal_buffer_read(buffer, offset, bytes, length));
  for (uint64_t i = 0; i < length; ++i) {
    if (bytes[i] != expected) {
      uint8_t actual = bytes[i];
      free(bytes);
      fail_msg("byte %" PRIu64 " of the buffer is 0x%02x, expected 0x%02x",
               offset + i, actual, expected);
    }
  }
  free(bytes);
}

cts_random_t cts_random_make(uint64_t stream) {
  cts_random_t random = {cts_context.seed ^ (stream * 0x9E3779B97F4A7C15ull)};
  return random;
}

uint64_t cts_random_next(cts_random_t* random) {
  uint64_t z = (random->state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint32_t cts_random_below(cts_random_t* random, uint32_t bound) {
  return bound ? (uint32_t)(cts_random_next(random) % bound) : 0;
}

uint32_t cts_iterations(uint32_t default_count) {
  // HAL_STRESS_ITERATIONS multiplies each test's short CI default, as in
  // the sync suite (a soak run: HAL_STRESS_ITERATIONS=100).
  uint64_t count =
      (uint64_t)default_count *
      (cts_context.stress_iterations ? cts_context.stress_iterations : 1);
  return count > UINT32_MAX ? UINT32_MAX : (uint32_t)count;
}

// The suite cts_main() runs, for suite-qualified exclusions.
static const char* cts_suite_name = "";

// True when exclusion key [key, key + length) names |case_name|: "Case",
// "suite/Case" or "suite/*".
static bool cts_exclusion_matches(const char* key, size_t length,
                                  const char* case_name) {
  size_t suite_length = strlen(cts_suite_name);
  if (length > suite_length + 1 && key[suite_length] == '/' &&
      strncmp(key, cts_suite_name, suite_length) == 0) {
    key += suite_length + 1;
    length -= suite_length + 1;
    if (length == 1 && key[0] == '*')
      return true;
  }
  return length == strlen(case_name) && strncmp(key, case_name, length) == 0;
}

void cts_check_excluded(const char* case_name) {
  if (!cts_exclude_list)
    return;
  for (const char* entry = cts_exclude_list; entry && *entry;) {
    const char* end = strchr(entry, ';');
    size_t entry_length = end ? (size_t)(end - entry) : strlen(entry);
    const char* equals = memchr(entry, '=', entry_length);
    size_t key_length = equals ? (size_t)(equals - entry) : entry_length;
    if (cts_exclusion_matches(entry, key_length, case_name)) {
      int reason_length = equals ? (int)(entry_length - key_length - 1) : 0;
      printf("[  SKIP    ] %s/%s/%s excluded: %.*s\n", cts_context.driver_name,
             cts_suite_name, case_name, reason_length,
             equals ? equals + 1 : "");
      fflush(stdout);
      skip();
    }
    entry = end ? end + 1 : NULL;
  }
}

void cts_run_threads(size_t count, cts_thread_fn_t fn, void* args,
                     size_t arg_stride) {
  pthread_t* threads = calloc(count, sizeof(pthread_t));
  assert_non_null(threads);
  for (size_t i = 0; i < count; ++i) {
    assert_int_equal(
        pthread_create(&threads[i], NULL, fn, (uint8_t*)args + i * arg_stride),
        0);
  }
  for (size_t i = 0; i < count; ++i)
    pthread_join(threads[i], NULL);
  free(threads);
}

int cts_main(const char* suite, const struct CMUnitTest* tests,
             size_t test_count) {
  return cts_main_needing_devices(suite, tests, test_count, 0);
}

int cts_main_needing_devices(const char* suite, const struct CMUnitTest* tests,
                             size_t test_count, uint32_t devices) {
  memset(&cts_context, 0, sizeof(cts_context));
  cts_context.driver_name = getenv("CTS_DRIVER");
  if (!cts_context.driver_name || !*cts_context.driver_name) {
    fprintf(stderr, "CTS_DRIVER is not set (run through meson test)\n");
    return 1;
  }
  cts_exclude_list = getenv("CTS_EXCLUDE");
  cts_suite_name = suite;
  cts_context.seed =
      cts_parse_u64(getenv("HAL_TEST_SEED"), (uint64_t)time(NULL) ^ 0x5EEDu);
  cts_context.stress_iterations =
      (uint32_t)cts_parse_u64(getenv("HAL_STRESS_ITERATIONS"), 0);
  printf("cts: driver %s, suite %s, HAL_TEST_SEED=%" PRIu64 "\n",
         cts_context.driver_name, suite, cts_context.seed);
  fflush(stdout);

  // The host row runs the semaphore suite on the sync module's host
  // semaphores, with no driver loaded.
  bool host = strcmp(cts_context.driver_name, CTS_HOST_DRIVER) == 0;
  hal_status_t status =
      host ? HAL_OK
           : hal_driver_registry_create(NULL, hal_allocator_system(),
                                        &cts_context.registry);
  if (!status && !host) {
    status = hal_driver_registry_create_driver(
        cts_context.registry, cts_context.driver_name, hal_allocator_system(),
        &cts_context.driver);
  }
  if (!status && !host) {
    status = hal_driver_query_device_count(cts_context.driver,
                                           &cts_context.device_count);
  }
  if (status) {
    fprintf(stderr, "cts: cannot set up driver %s: ", cts_context.driver_name);
    hal_status_fprint(stderr, status);
    hal_status_free(status);
    hal_driver_release(cts_context.driver);
    hal_driver_registry_free(cts_context.registry);
    return 1;
  }

  if (!host && cts_context.device_count < devices) {
    printf("cts: SKIPPED: suite %s needs %" PRIu32
           " devices; driver %s has %" PRIu32 "\n",
           suite, devices, cts_context.driver_name, cts_context.device_count);
    hal_driver_release(cts_context.driver);
    hal_driver_registry_free(cts_context.registry);
    return 77;  // meson's "skipped"
  }

  char group[128];
  snprintf(group, sizeof(group), "%s/%s", cts_context.driver_name, suite);
  int failures = _cmocka_run_group_tests(group, tests, test_count, NULL, NULL);
  if (failures) {
    printf("cts: %d failure(s); reproduce with HAL_TEST_SEED=%" PRIu64 "\n",
           failures, cts_context.seed);
  }
  hal_driver_release(cts_context.driver);
  hal_driver_registry_free(cts_context.registry);
  return failures ? 1 : 0;
}

static void cts_held_signal_callback(void* user_data, uint64_t value,
                                     hal_status_t status) {
  cts_held_signal_t* held = user_data;
  hal_status_ignore(hal_semaphore_signal(held->entered, 1));
  hal_status_ignore(hal_semaphore_wait(
      held->go, 1,
      held->bound_ms ? hal_make_timeout_ns(held->bound_ms * 1000 * 1000)
                     : hal_infinite_timeout()));
}

static void* cts_held_signal_main(void* arg) {
  cts_held_signal_t* held = arg;
  if (held->failure) {
    hal_semaphore_fail(held->gate, held->failure);
    held->failure = NULL;
  } else {
    hal_status_ignore(hal_semaphore_signal(held->gate, 1));
  }
  return NULL;
}

void cts_held_signal_begin(cts_held_signal_t* held, hal_semaphore_t* gate) {
  held->gate = gate;
  held->failure = NULL;
  held->bound_ms = 0;
  held->entered = cts_create_semaphore(NULL, 0);
  held->go = cts_create_semaphore(NULL, 0);
  HAL_ASSERT_OK(hal_semaphore_add_callback(gate, 1, cts_held_signal_callback,
                                           held, NULL));
}

void cts_held_signal_start(cts_held_signal_t* held) {
  assert_int_equal(
      pthread_create(&held->thread, NULL, cts_held_signal_main, held), 0);
  HAL_ASSERT_OK(cts_wait(held->entered, 1));
}

void cts_failed_wait_begin(cts_failed_wait_t* scene, size_t wait_count,
                           int64_t bound_ms, hal_status_code_t code) {
  scene->device = cts_create_device(0);
  for (int i = 0; i < 3; ++i) {
    scene->semaphores[i] = cts_create_semaphore(scene->device, 0);
    scene->values[i] = 1;
  }
  scene->waits =
      (hal_semaphore_list_t){wait_count, scene->semaphores, scene->values};
  scene->signals =
      (hal_semaphore_list_t){1, &scene->semaphores[2], &scene->values[2]};
  cts_held_signal_begin(&scene->held, scene->semaphores[0]);
  scene->code = code;
  scene->held.failure = hal_make_status(code, "upstream broke");
  scene->held.bound_ms = bound_ms;
}

void cts_failed_wait_release(cts_failed_wait_t* scene) {
  cts_held_signal_start(&scene->held);  // broken has failed: the callback runs
  hal_device_release(scene->device);
  cts_held_signal_finish(&scene->held);
}

void cts_failed_wait_end(cts_failed_wait_t* scene) {
  HAL_ASSERT_STATUS(scene->code, "upstream broke",
                    cts_wait(scene->semaphores[2], 1));
  for (int i = 0; i < 3; ++i)
    hal_semaphore_release(scene->semaphores[i]);
}

void cts_held_signal_finish(cts_held_signal_t* held) {
  HAL_ASSERT_OK(hal_semaphore_signal(held->go, 1));
  pthread_join(held->thread, NULL);
  hal_semaphore_release(held->entered);
  hal_semaphore_release(held->go);
}
