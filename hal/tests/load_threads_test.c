// Copyright 2026 The HAL Authors.
//
// Libraries loaded and unloaded from several threads at once: drivers of
// one vendor created together (both load its runtime), and registries
// created and freed on threads that overlap (each loads and unloads every
// plugin). Everything must succeed, and under ThreadSanitizer nothing may
// be reported: every load and unload goes through hal_library_open and
// hal_library_close, whose lock shows the sanitizer the order the dynamic
// loader keeps (hal/library.h).
//
// The first case must run first in a fresh process: it is about the first
// load of each runtime (the virtual GPU's libraries are never unloaded).
// Needs HAL_DRIVER_PATH with the four GPU drivers, and HAL_CUDA_LIBRARY and
// HAL_HIP_LIBRARY (meson sets them).

#include "hal_test.h"

static const char* const kDrivers[] = {"cuda_stream", "cuda_graph",
                                       "hip_stream", "hip_graph"};

typedef struct load_thread_t {
  pthread_t thread;
  pthread_barrier_t* start;
  hal_driver_registry_t* registry;  // shared, or NULL: one per round
  const char* driver_name;          // fixed, or NULL: picked per round
  uint64_t seed;
  uint32_t rounds;
} load_thread_t;

// Creates |name|'s driver from |registry|, its device 0, reads what both
// say, and releases them.
static void load_thread_use_driver(hal_driver_registry_t* registry,
                                   const char* name) {
  hal_driver_t* driver = NULL;
  hal_status_t status = hal_driver_registry_create_driver(
      registry, name, hal_allocator_system(), &driver);
  HAL_THREAD_CHECK(status == HAL_OK, "creating driver %s: %s", name,
                   hal_status_message(status));
  hal_status_free(status);
  if (!driver)
    return;
  hal_device_t* device = NULL;
  status = hal_driver_create_device_by_index(driver, 0, hal_allocator_system(),
                                             &device);
  HAL_THREAD_CHECK(status == HAL_OK, "creating %s's device 0: %s", name,
                   hal_status_message(status));
  hal_status_free(status);
  if (device) {
    hal_device_properties_t properties;
    status = hal_device_query_properties(device, &properties);
    HAL_THREAD_CHECK(status == HAL_OK && properties.runtime_path &&
                         properties.runtime_path[0] == '/',
                     "%s's runtime path: %s", name,
                     status ? hal_status_message(status) : "not absolute");
    hal_status_free(status);
    hal_device_release(device);
  }
  hal_driver_release(driver);
}

static void* load_thread_main(void* arg) {
  load_thread_t* t = arg;
  uint64_t state = t->seed;
  for (uint32_t round = 0; round < t->rounds; ++round) {
    pthread_barrier_wait(t->start);
    const char* name =
        t->driver_name
            ? t->driver_name
            : kDrivers[hal_test_random_below(&state, HAL_ARRAYSIZE(kDrivers))];
    hal_driver_registry_t* registry = t->registry;
    if (!registry) {
      hal_status_t status =
          hal_driver_registry_create(NULL, hal_allocator_system(), &registry);
      HAL_THREAD_CHECK(status == HAL_OK, "creating a registry: %s",
                       hal_status_message(status));
      hal_status_free(status);
      if (!registry)
        continue;
    }
    load_thread_use_driver(registry, name);
    if (!t->registry)
      hal_driver_registry_free(registry);
  }
  return NULL;
}

// Runs |count| threads of |rounds| rounds each, every round started by all
// of them at once.
static void load_threads_run(load_thread_t* threads, size_t count) {
  pthread_barrier_t start;
  assert_int_equal(pthread_barrier_init(&start, NULL, (unsigned)count), 0);
  for (size_t i = 0; i < count; ++i) {
    threads[i].start = &start;
    assert_int_equal(
        pthread_create(&threads[i].thread, NULL, load_thread_main, &threads[i]),
        0);
  }
  for (size_t i = 0; i < count; ++i)
    pthread_join(threads[i].thread, NULL);
  pthread_barrier_destroy(&start);
  hal_test_assert_no_thread_failures();
}

// The stream and graph drivers of each vendor, created at the same moment
// from one registry: both threads load the vendor's runtime for the first
// time in the process, and read what its load wrote (its path, what its
// constructor set up).
static void LoadThreads_TwoDriversOfOneRuntimeCreatedAtOnce(void** state) {
  (void)state;
  hal_driver_registry_t* registry = NULL;
  HAL_ASSERT_OK(
      hal_driver_registry_create(NULL, hal_allocator_system(), &registry));
  for (size_t pair = 0; pair < 2; ++pair) {
    load_thread_t threads[2] = {
        {.registry = registry, .driver_name = kDrivers[2 * pair], .rounds = 1},
        {.registry = registry,
         .driver_name = kDrivers[2 * pair + 1],
         .rounds = 1},
    };
    load_threads_run(threads, HAL_ARRAYSIZE(threads));
  }
  hal_driver_registry_free(registry);
}

// Four threads, each round creating a registry (which loads every plugin
// on the path to read it), a driver of a random one of the four, its
// device, and freeing them all (which unloads the plugins), the rounds of
// all threads starting together.
static void LoadThreads_RegistriesCreatedAndFreedAtOnce(void** state) {
  (void)state;
  uint64_t seed = hal_test_seed("LoadThreads_RegistriesCreatedAndFreedAtOnce");
  uint32_t rounds = (uint32_t)hal_test_iterations(8);
  load_thread_t threads[4];
  for (size_t i = 0; i < HAL_ARRAYSIZE(threads); ++i) {
    threads[i] = (load_thread_t){
        .seed = seed + i * UINT64_C(0x9e3779b97f4a7c15), .rounds = rounds};
  }
  load_threads_run(threads, HAL_ARRAYSIZE(threads));
}

#define CASE(name) cmocka_unit_test(name)

int main(void) {
  const struct CMUnitTest tests[] = {
      CASE(LoadThreads_TwoDriversOfOneRuntimeCreatedAtOnce),
      CASE(LoadThreads_RegistriesCreatedAndFreedAtOnce),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
