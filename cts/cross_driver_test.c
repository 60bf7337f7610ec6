// Copyright 2026 The HAL Authors.
//
// CTS program "cross_driver": semaphores are the sync module's, shared by
// every driver, so a queue of one driver may wait on a semaphore another
// driver's queue signals. The waiting queue cannot wait on the other
// driver's native event (another event pool), so the wait resolves on the
// host (T4); ordering and failure propagation must still hold. Registered
// once, when two drivers of different vendors are built.
//
//   CTS_DRIVER        the waiting driver
//   CTS_OTHER_DRIVER  the signaling driver

#include "cts.h"

typedef struct fixture_t {
  hal_driver_t* other_driver;
  hal_device_t* waiter;
  hal_device_t* signaler;
} fixture_t;

static int setup(void** state) {
  fixture_t* f = calloc(1, sizeof(*f));
  const char* other = getenv("CTS_OTHER_DRIVER");
  assert_non_null(other);
  HAL_ASSERT_OK(hal_driver_registry_create_driver(
      cts_context.registry, other, hal_allocator_system(), &f->other_driver));
  f->waiter = cts_create_device(0);
  HAL_ASSERT_OK(hal_driver_create_device_by_index(
      f->other_driver, 0, hal_allocator_system(), &f->signaler));
  *state = f;
  return 0;
}

static int teardown(void** state) {
  fixture_t* f = *state;
  hal_device_release(f->waiter);
  hal_device_release(f->signaler);
  hal_driver_release(f->other_driver);
  free(f);
  return 0;
}

static hal_command_buffer_t* fill_cb(hal_device_t* device, hal_buffer_t* buffer,
                                     uint8_t value) {
  hal_command_buffer_t* cb =
      cts_begin_command_buffer(device, HAL_COMMAND_BUFFER_MODE_ONE_SHOT);
  HAL_ASSERT_OK(hal_command_buffer_fill_buffer(
      cb, buffer, 0, hal_buffer_byte_length(buffer), &value, 1));
  HAL_ASSERT_OK(hal_command_buffer_end(cb));
  return cb;
}

// The waiter's work is submitted first and must not run before the other
// driver's work signals.
CTS_CASE(CrossDriver_WaitOnAnotherDriversSemaphore) {
  fixture_t* f = *state;
  hal_buffer_t* theirs =
      cts_allocate_buffer(f->signaler, HAL_MEMORY_TYPE_DEVICE_LOCAL, 4096);
  hal_buffer_t* ours =
      cts_allocate_buffer(f->waiter, HAL_MEMORY_TYPE_DEVICE_LOCAL, 4096);
  hal_semaphore_t* theirs_done = cts_create_semaphore(f->signaler, 0);
  hal_semaphore_t* ours_done = cts_create_semaphore(f->waiter, 0);
  hal_command_buffer_t* wait_cb = fill_cb(f->waiter, ours, 0x2B);
  HAL_ASSERT_OK(
      cts_submit(f->waiter, 0, theirs_done, 1, wait_cb, ours_done, 1));
  hal_sleep_until(hal_time_now() + 5 * 1000 * 1000);
  assert_int_equal(cts_query(ours_done), 0);  // still waiting
  hal_command_buffer_t* signal_cb = fill_cb(f->signaler, theirs, 0x2A);
  HAL_ASSERT_OK(cts_submit(f->signaler, 0, NULL, 0, signal_cb, theirs_done, 1));
  HAL_ASSERT_OK(cts_wait(ours_done, 1));
  cts_expect_bytes(theirs, 0, 4096, 0x2A);  // the signaler finished first
  cts_expect_bytes(ours, 0, 4096, 0x2B);
  hal_command_buffer_release(wait_cb);
  hal_command_buffer_release(signal_cb);
  hal_semaphore_release(theirs_done);
  hal_semaphore_release(ours_done);
  hal_buffer_release(theirs);
  hal_buffer_release(ours);
}

// A failure on the other driver's semaphore fails the waiter's signals.
CTS_CASE(CrossDriver_FailureCrossesDrivers) {
  fixture_t* f = *state;
  hal_semaphore_t* theirs = cts_create_semaphore(f->signaler, 0);
  hal_semaphore_t* ours = cts_create_semaphore(f->waiter, 0);
  HAL_ASSERT_OK(cts_submit(f->waiter, 0, theirs, 1, NULL, ours, 1));
  hal_semaphore_fail(
      theirs, hal_make_status(HAL_STATUS_ABORTED, "other driver failed"));
  HAL_ASSERT_STATUS(HAL_STATUS_ABORTED, "other driver failed",
                    cts_wait(ours, 1));
  hal_semaphore_release(theirs);
  hal_semaphore_release(ours);
}

// Waiting on a list that mixes both drivers' semaphores.
CTS_CASE(CrossDriver_WaitAllAcrossDrivers) {
  fixture_t* f = *state;
  hal_semaphore_t* a = cts_create_semaphore(f->signaler, 0);
  hal_semaphore_t* b = cts_create_semaphore(f->waiter, 0);
  HAL_ASSERT_OK(cts_submit(f->signaler, 0, NULL, 0, NULL, a, 3));
  HAL_ASSERT_OK(cts_submit(f->waiter, 0, a, 3, NULL, b, 4));
  hal_semaphore_t* list[] = {a, b};
  uint64_t values[] = {3, 4};
  hal_semaphore_list_t wait = {2, list, values};
  HAL_ASSERT_OK(hal_device_wait_semaphores(
      f->waiter, HAL_WAIT_MODE_ALL, &wait,
      hal_make_timeout_ns(60ll * 1000 * 1000 * 1000)));
  hal_semaphore_release(a);
  hal_semaphore_release(b);
}

// The test list: CASE binds this program's fixture.
#define CASE(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void) {
  const struct CMUnitTest tests[] = {
      CASE(CrossDriver_WaitOnAnotherDriversSemaphore),
      CASE(CrossDriver_FailureCrossesDrivers),
      CASE(CrossDriver_WaitAllAcrossDrivers),
  };
  return cts_main("cross_driver", tests, HAL_ARRAYSIZE(tests));
}
