// Copyright 2026 The HAL Authors.
//
// The conformance test suite's harness: driver-neutral test bodies written
// once against the public HAL API, run for every driver.
//
// Each CTS program is one suite (driver, buffer, semaphore, ...). Meson runs
// it once per driver from the table in cts/meson.build, with:
//   CTS_DRIVER        the driver name (e.g. cuda_stream), or "host": no
//                     driver, the sync module's host semaphores (the
//                     semaphore suite only; cts_create_device gives NULL)
//   HAL_DRIVER_PATH   the build's plugin folder
//   CTS_EXCLUDE       "Case=reason;Case=reason": cases the driver cannot
//                     support, reported as skipped with the reason
// plus the driver's runtime library variables (HAL_CUDA_LIBRARY ...).
// Test names read DRIVER/suite/Case.
//
// Randomness comes from HAL_TEST_SEED (printed at start); stress sizes from
// HAL_STRESS_ITERATIONS.

#ifndef HAL_CTS_CTS_H_
#define HAL_CTS_CTS_H_

// clang-format off
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
// clang-format on

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hal/api.h"
#include "hal_test.h"

//===----------------------------------------------------------------------===//
// The driver under test
//===----------------------------------------------------------------------===//

typedef struct cts_context_t {
  const char* driver_name;
  hal_driver_registry_t* registry;
  hal_driver_t* driver;
  uint32_t device_count;
  uint64_t seed;
  uint32_t stress_iterations;  // 0: each test's short default
} cts_context_t;

// Set up by cts_main(); read-only for the tests.
extern cts_context_t cts_context;

#define CTS_HOST_DRIVER "host"

// A device of the driver under test; the caller releases it. NULL on the
// host row.
hal_device_t* cts_create_device(uint32_t index);

// A semaphore of |device| with |initial_value| (a host semaphore when
// |device| is NULL); the try form returns the status instead of failing.
hal_semaphore_t* cts_create_semaphore(hal_device_t* device,
                                      uint64_t initial_value);
hal_status_t cts_try_create_semaphore(hal_device_t* device,
                                      uint64_t initial_value,
                                      hal_semaphore_t** out_semaphore);

// Waits for the list through |device| (hal_device_wait_semaphores), or
// through hal_semaphore_list_wait when |device| is NULL.
hal_status_t cts_wait_list(hal_device_t* device, hal_wait_mode_t mode,
                           size_t count, hal_semaphore_t** semaphores,
                           uint64_t* values, hal_timeout_t timeout);

// A buffer of |device| with the default usage plus MAPPING when
// |memory_type| is host-visible.
hal_buffer_t* cts_allocate_buffer(hal_device_t* device,
                                  hal_memory_type_t memory_type, uint64_t size);

// Waits for one (semaphore, value) with a generous timeout (a hang becomes
// a DEADLINE_EXCEEDED failure, not a stuck test).
hal_status_t cts_wait(hal_semaphore_t* semaphore, uint64_t value);

// The value of |semaphore| (fails the test if it failed).
uint64_t cts_query(hal_semaphore_t* semaphore);

// A one-shot command buffer already begun; the caller ends it.
hal_command_buffer_t* cts_begin_command_buffer(hal_device_t* device,
                                               hal_command_buffer_mode_t mode);

// Submits |command_buffer| (may be NULL: a barrier) on |queue| waiting for
// (wait, wait_value) (wait may be NULL) and signaling (signal, signal_value)
// (may be NULL).
hal_status_t cts_submit(hal_device_t* device, uint32_t queue,
                        hal_semaphore_t* wait, uint64_t wait_value,
                        hal_command_buffer_t* command_buffer,
                        hal_semaphore_t* signal, uint64_t signal_value);

// The fixture most suites share (cmocka setup/teardown; *state points at
// it): device 0 of the driver, two queues (the same one when the device has
// one), a timeline for cts_fixture_run, two zeroed device-local buffers.
#define CTS_FIXTURE_BUFFER_SIZE 4096
typedef struct cts_fixture_t {
  hal_device_t* device;
  uint32_t q0, q1;
  hal_semaphore_t* timeline;
  uint64_t next_value;  // the timeline's last value
  hal_buffer_t* a;      // CTS_FIXTURE_BUFFER_SIZE bytes each
  hal_buffer_t* b;
  hal_executable_t* executable;  // NULL unless the suite's setup makes one;
                                 // teardown releases it
} cts_fixture_t;
int cts_setup(void** state);
int cts_teardown(void** state);
// A test-list entry of a case on the shared fixture.
#define CTS_ON_FIXTURE(name) \
  cmocka_unit_test_setup_teardown(name, cts_setup, cts_teardown)

// Submits |command_buffer| on |queue| signaling the fixture's timeline, and
// waits for it.
void cts_fixture_run(cts_fixture_t* f, uint32_t queue,
                     hal_command_buffer_t* command_buffer);

// A device-local buffer of |size| bytes, zeroed.
hal_buffer_t* cts_zeroed_buffer(hal_device_t* device, uint64_t size);

// Whether |device|'s driver builds a native graph from a recording (the
// graph strategy): a one-fill command buffer's native_build_count. Stream
// drivers report no builds.
bool cts_builds_native_graphs(hal_device_t* device);

// Creates another instance of the driver under test with environment
// |variable| set to |value| for the creation only (restored after).
hal_status_t cts_create_driver_with_env(const char* variable, const char* value,
                                        hal_driver_t** out_driver);

// Reads |length| bytes of |buffer| at |offset| and checks each equals
// |expected| (failing with the first mismatch).
void cts_expect_bytes(hal_buffer_t* buffer, uint64_t offset, uint64_t length,
                      uint8_t expected);

// A deterministic pseudo-random generator (splitmix64) seeded from
// cts_context.seed and |stream| (so two tests don't share a sequence).
typedef struct cts_random_t {
  uint64_t state;
} cts_random_t;
cts_random_t cts_random_make(uint64_t stream);
uint64_t cts_random_next(cts_random_t* random);
uint32_t cts_random_below(cts_random_t* random, uint32_t bound);

// |default_count| times HAL_STRESS_ITERATIONS (1 when unset).
uint32_t cts_iterations(uint32_t default_count);

// Skips the running case if CTS_EXCLUDE names it (with its reason).
void cts_check_excluded(const char* case_name);

// A signal of a host semaphore held open inside its batch: a callback
// registered on |gate| at 1 before anything else blocks until released,
// so whatever registers on the gate after it at 1 is popped with the
// signal but not yet notified. Begin registers the callback; start
// signals the gate to 1 on another thread and returns once the callback
// runs; finish lets it return, joins the thread and releases everything
// but the gate (the caller's). Set between begin and start: |failure|
// (owned; NULL: signal) fails the gate with it instead, and |bound_ms|
// (0: until finish) lets the callback return by itself after that long,
// for a test whose next step waits for what the batch wakes.
typedef struct cts_held_signal_t {
  hal_semaphore_t* gate;
  hal_semaphore_t* entered;
  hal_semaphore_t* go;
  pthread_t thread;
  hal_status_t failure;
  int64_t bound_ms;
} cts_held_signal_t;
void cts_held_signal_begin(cts_held_signal_t* held, hal_semaphore_t* gate);
void cts_held_signal_start(cts_held_signal_t* held);
void cts_held_signal_finish(cts_held_signal_t* held);

// S2 against Q4: work waits on |broken|, whose failure (ABORTED "upstream
// broke") its failing thread publishes and then is held in its batch,
// before the work's callback, for up to |bound_ms| (the release may wait
// for what the batch wakes); the device is released right after. Begin
// makes a device of its own and the semaphores, and the lists the work
// takes: |waits| (broken, then |never|, which nobody signals; |wait_count|
// 1 names |broken| alone) and |signals| (|done| at 1). Release fails
// |broken|, releases the device and lets the batch go; end releases the
// semaphores.
typedef struct cts_failed_wait_t {
  hal_device_t* device;
  hal_semaphore_t* semaphores[3];  // broken, never, done
  uint64_t values[3];
  hal_semaphore_list_t waits;
  hal_semaphore_list_t signals;
  cts_held_signal_t held;
  hal_status_code_t code;  // what broken fails with
} cts_failed_wait_t;
// |code|: the failure's (ABORTED in most cases; CANCELLED, the code a
// shutdown gives too, checks that the cause is told apart by more than it).
void cts_failed_wait_begin(cts_failed_wait_t* scene, size_t wait_count,
                           int64_t bound_ms, hal_status_code_t code);
void cts_failed_wait_release(cts_failed_wait_t* scene);
// The status |done| failed with must be |code| "upstream broke".
void cts_failed_wait_end(cts_failed_wait_t* scene);

// Starts |count| threads running |fn(arg_i)| and joins them.
typedef void* (*cts_thread_fn_t)(void* arg);
void cts_run_threads(size_t count, cts_thread_fn_t fn, void* args,
                     size_t arg_stride);

// Declares a case: the body runs unless the driver's table excludes it.
#define CTS_CASE(name)                   \
  static void name##_body(void** state); \
  static void name(void** state) {       \
    cts_check_excluded(#name);           \
    name##_body(state);                  \
  }                                      \
  static void name##_body(void** state)

// Runs |tests| as group "DRIVER/<suite>" and returns the exit code.
int cts_main(const char* suite, const struct CMUnitTest* tests,
             size_t test_count);
// The same for a suite whose every case needs |devices| devices of the
// driver: with fewer, it runs nothing and exits 77 (meson's "skipped"),
// saying why (a machine with one GPU).
int cts_main_needing_devices(const char* suite, const struct CMUnitTest* tests,
                             size_t test_count, uint32_t devices);

#define CTS_MAIN(suite, tests)                               \
  int main(void) {                                           \
    return cts_main((suite), (tests), HAL_ARRAYSIZE(tests)); \
  }

#endif  // HAL_CTS_CTS_H_
