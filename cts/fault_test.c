// Copyright 2026 The HAL Authors.
//
// CTS suite "fault": vendor failures injected by the virtual GPU
// (VGPU_FAULTS, set per driver by cts/meson.build) must fail downstream
// semaphores with a status naming the vendor call; nothing hangs, nothing
// leaks (Q5; K10). Runs only on the virtual GPU.
//
//   CTS_FAULT_CALL   the vendor call the fault hits (e.g. cuMemsetD32Async)
//   CTS_FAULT_MODE   "error": its first call fails once;
//                    "sync":  the same, for an event synchronize (the
//                             work ran; the device reports its error)
//                    "lost":  its first call loses the device for good
//                    "lost_shutdown": the same, with the device's last
//                             release racing the loss
//                    "lost_release": the same, for a call a release makes
//                             (a free), which has no caller to tell
//                    "lost_trace": the same, for a call only tracing makes
//                             after the work completed (HAL_TRACE set)
//                    "lost_learned": the same, with a thread learning of
//                             the loss from a refusal as it is published
//                    "alloca_record": an alloca's completion record fails
//                    "fallback_free": a fallback dealloca's free fails

#include "cts.h"

#include <time.h>

#define SIZE 256

static const char* fault_call(void) {
  const char* call = getenv("CTS_FAULT_CALL");
  return call ? call : "";
}

static bool fault_mode_is(const char* mode) {
  const char* value = getenv("CTS_FAULT_MODE");
  return value && strcmp(value, mode) == 0;
}

// Each run injects one kind of fault (CTS_FAULT_MODE); the case for the
// other kind is skipped, saying why.
static void skip_unless_mode(const char* mode) {
  if (fault_mode_is(mode))
    return;
  printf("[  SKIP    ] this run injects CTS_FAULT_MODE=%s, the case needs %s\n",
         getenv("CTS_FAULT_MODE") ? getenv("CTS_FAULT_MODE") : "(unset)", mode);
  fflush(stdout);
  skip();
}

static int setup(void** state) {
  if (!getenv("VGPU_FAULTS") || !*fault_call()) {
    printf("[  SKIP    ] faults need the virtual GPU (VGPU_FAULTS)\n");
    return -1;
  }
  *state = NULL;  // made by the case that runs (case_device)
  return 0;
}

// The case's device, made once it is known to run: a loss is for good in
// the process (the virtual GPU's device stays lost), so the cases a run
// skips must not try to make one after the case that lost it.
static hal_device_t* case_device(void** state) {
  if (!*state)
    *state = cts_create_device(0);
  return *state;
}

static int teardown(void** state) {
  hal_device_release(*state);
  return 0;
}

// A command buffer whose 4-byte fill is the faulting call on stream
// drivers (the graph launch is, on graph drivers).
static hal_command_buffer_t* fill_cb(hal_device_t* device, hal_buffer_t* buffer,
                                     uint32_t value) {
  hal_command_buffer_t* cb =
      cts_begin_command_buffer(device, HAL_COMMAND_BUFFER_MODE_ONE_SHOT);
  HAL_ASSERT_OK(hal_command_buffer_fill_buffer(cb, buffer, 0, SIZE, &value, 4));
  HAL_ASSERT_OK(hal_command_buffer_end(cb));
  return cb;
}

static void expect_failure_naming_call(hal_status_t status) {
  char text[2048];
  hal_status_format(status, text, sizeof(text));
  hal_status_code_t code = hal_status_code(status);
  hal_status_free(status);
  if (code == HAL_STATUS_OK)
    fail_msg("expected a failure naming %s", fault_call());
  if (!strstr(text, fault_call())) {
    fail_msg("failure \"%s\" does not name the vendor call %s", text,
             fault_call());
  }
}

// The first faulting call fails the first submission; its failure flows
// down a chain on both queues; independent later work still runs.
CTS_CASE(Fault_VendorErrorFailsDownstream) {
  skip_unless_mode("error");
  hal_device_t* device = case_device(state);
  uint32_t q1 = hal_device_info(device)->queue_count > 1 ? 1 : 0;
  hal_buffer_t* a =
      cts_allocate_buffer(device, HAL_MEMORY_TYPE_DEVICE_LOCAL, SIZE);
  hal_buffer_t* b =
      cts_allocate_buffer(device, HAL_MEMORY_TYPE_DEVICE_LOCAL, SIZE);
  hal_semaphore_t* s1 = cts_create_semaphore(device, 0);
  hal_semaphore_t* s2 = cts_create_semaphore(device, 0);
  hal_semaphore_t* s3 = cts_create_semaphore(device, 0);
  hal_command_buffer_t* first = fill_cb(device, a, 0x11111111u);
  HAL_ASSERT_OK(cts_submit(device, 0, NULL, 0, first, s1, 1));
  hal_command_buffer_t* second = fill_cb(device, b, 0x22222222u);
  HAL_ASSERT_OK(cts_submit(device, q1, s1, 1, second, s2, 1));
  HAL_ASSERT_OK(cts_submit(device, 0, s2, 1, NULL, s3, 1));
  expect_failure_naming_call(cts_wait(s1, 1));
  expect_failure_naming_call(cts_wait(s2, 1));
  expect_failure_naming_call(cts_wait(s3, 1));
  // The queue keeps working for independent work.
  hal_semaphore_t* ok = cts_create_semaphore(device, 0);
  hal_command_buffer_t* third = fill_cb(device, b, 0x33333333u);
  HAL_ASSERT_OK(cts_submit(device, 0, NULL, 0, third, ok, 1));
  HAL_ASSERT_OK(cts_wait(ok, 1));
  cts_expect_bytes(b, 0, SIZE, 0x33);
  hal_command_buffer_release(first);
  hal_command_buffer_release(second);
  hal_command_buffer_release(third);
  hal_semaphore_release(s1);
  hal_semaphore_release(s2);
  hal_semaphore_release(s3);
  hal_semaphore_release(ok);
  hal_buffer_release(a);
  hal_buffer_release(b);
}

// K13: the second submission is made a moment after the first, so that
// the first is usually issued and recorded already and the second waits for
// it on the device, not on the host (the fault_sync run, mode "sync", makes
// the first event synchronize fail, after the work ran, and shakes the
// schedule so the first is still running then). All three go to one queue:
// its completion thread synchronizes in issue order, so the one failing
// synchronize is the first submission's (on two queues the second's could
// come first). Either way the failure must reach both downstream
// semaphores, naming the call. Across queues: sync suite K13_*.
CTS_CASE(K13_FailureReachesWorkWaitingOnTheDevice) {
  skip_unless_mode("sync");
  hal_device_t* device = case_device(state);
  hal_buffer_t* a =
      cts_allocate_buffer(device, HAL_MEMORY_TYPE_DEVICE_LOCAL, SIZE);
  hal_buffer_t* b =
      cts_allocate_buffer(device, HAL_MEMORY_TYPE_DEVICE_LOCAL, SIZE);
  hal_semaphore_t* s1 = cts_create_semaphore(device, 0);
  hal_semaphore_t* s2 = cts_create_semaphore(device, 0);
  hal_semaphore_t* s3 = cts_create_semaphore(device, 0);
  hal_command_buffer_t* first = fill_cb(device, a, 0x11111111u);
  hal_command_buffer_t* second = fill_cb(device, b, 0x22222222u);
  HAL_ASSERT_OK(cts_submit(device, 0, NULL, 0, first, s1, 1));
  struct timespec pause = {0, 2 * 1000 * 1000};
  nanosleep(&pause, NULL);
  HAL_ASSERT_OK(cts_submit(device, 0, s1, 1, second, s2, 1));
  HAL_ASSERT_OK(cts_submit(device, 0, s2, 1, NULL, s3, 1));
  expect_failure_naming_call(cts_wait(s1, 1));
  expect_failure_naming_call(cts_wait(s2, 1));
  expect_failure_naming_call(cts_wait(s3, 1));
  hal_command_buffer_release(first);
  hal_command_buffer_release(second);
  hal_semaphore_release(s1);
  hal_semaphore_release(s2);
  hal_semaphore_release(s3);
  hal_buffer_release(a);
  hal_buffer_release(b);
}

// A wait that must end with the device's loss, well before any deadline a
// hang would run into.
static void expect_loss(hal_semaphore_t* semaphore, uint64_t value) {
  hal_status_t status = hal_semaphore_wait(
      semaphore, value, hal_make_timeout_ns(20ll * 1000 * 1000 * 1000));
  char text[2048];
  hal_status_format(status, text, sizeof(text));
  hal_status_code_t code = hal_status_code(status);
  hal_status_free(status);
  if (code != HAL_STATUS_DEVICE_LOST || !strstr(text, fault_call()))
    fail_msg("expected the device's loss naming %s, got %s", fault_call(),
             text);
}

// A call on the lost device refused with a copy of its loss: DEVICE_LOST
// naming the vendor call that lost it, not a later call's error.
static void expect_refused_with_loss(hal_status_t status) {
  char text[2048];
  hal_status_format(status, text, sizeof(text));
  hal_status_code_t code = hal_status_code(status);
  hal_status_free(status);
  if (code != HAL_STATUS_DEVICE_LOST || !strstr(text, fault_call()) ||
      !strstr(text, "was lost")) {
    fail_msg("expected a refusal with the loss naming %s, got %s", fault_call(),
             text);
  }
}

// What a host call's function was called with.
typedef struct host_call_record_t {
  atomic_int calls;
  atomic_int status_code;
} host_call_record_t;

static hal_status_t record_host_call(void* user_data, hal_status_t status) {
  host_call_record_t* record = (host_call_record_t*)user_data;
  atomic_store(&record->status_code, (int)hal_status_code(status));
  atomic_fetch_add(&record->calls, 1);
  return HAL_OK;
}

// A host call that blocks the device's host-call thread until the test
// lets it go (or 60 s pass): it signals |started|, then waits for
// |release|, two host semaphores (a loss does not fail them).
typedef struct blocking_call_t {
  hal_semaphore_t* started;
  hal_semaphore_t* release;
} blocking_call_t;

static hal_status_t blocking_host_call(void* user_data, hal_status_t status) {
  (void)status;
  blocking_call_t* call = (blocking_call_t*)user_data;
  hal_status_ignore(hal_semaphore_signal(call->started, 1));
  hal_status_ignore(hal_semaphore_wait(
      call->release, 1, hal_make_timeout_ns(60ll * 1000 * 1000 * 1000)));
  return HAL_OK;
}

// A host call that records, when called, whether its host-made signal had
// already failed (it must not have: that one fails after the function).
typedef struct loss_call_t {
  host_call_record_t record;
  hal_semaphore_t* host_signal;
  atomic_int host_signal_failed_at_call;
} loss_call_t;

static hal_status_t loss_host_call(void* user_data, hal_status_t status) {
  loss_call_t* call = (loss_call_t*)user_data;
  uint64_t value = 0;
  hal_status_t query = hal_semaphore_query(call->host_signal, &value);
  atomic_store(&call->host_signal_failed_at_call, query != HAL_OK);
  hal_status_free(query);
  return record_host_call(&call->record, status);
}

// Device loss (Q5) and a host call's signals: the loss fails every
// semaphore of the device at once, so a call waiting behind a long one
// (parked on what never comes) has its device semaphore failed before its
// function is called; its host-made signal fails only once its function
// has returned, as every failure of a call's signals does; the function
// is called once, with the loss.
CTS_CASE(K14_LossFailsACallsDeviceSignalsAtOnceItsOthersAfterItsFunction) {
  skip_unless_mode("lost_call");
  hal_device_t* device = case_device(state);
  hal_buffer_t* a =
      cts_allocate_buffer(device, HAL_MEMORY_TYPE_DEVICE_LOCAL, SIZE);
  hal_semaphore_t* never = NULL;  // a host semaphore nobody signals
  HAL_ASSERT_OK(hal_semaphore_create_host(hal_allocator_system(), 0, &never));
  blocking_call_t blocker = {NULL, NULL};
  HAL_ASSERT_OK(
      hal_semaphore_create_host(hal_allocator_system(), 0, &blocker.started));
  HAL_ASSERT_OK(
      hal_semaphore_create_host(hal_allocator_system(), 0, &blocker.release));
  HAL_ASSERT_OK(hal_device_queue_host_call(device, 0, NULL, NULL,
                                           blocking_host_call, &blocker));
  HAL_ASSERT_OK(hal_semaphore_wait(
      blocker.started, 1, hal_make_timeout_ns(20ll * 1000 * 1000 * 1000)));
  loss_call_t call = {{0, 0}, NULL, -1};
  HAL_ASSERT_OK(
      hal_semaphore_create_host(hal_allocator_system(), 0, &call.host_signal));
  hal_semaphore_t* device_signal = cts_create_semaphore(device, 0);
  hal_semaphore_t* signals[2] = {device_signal, call.host_signal};
  uint64_t ones[2] = {1, 1};
  hal_semaphore_list_t call_waits = {1, &never, ones};
  hal_semaphore_list_t call_signals = {2, signals, ones};
  HAL_ASSERT_OK(hal_device_queue_host_call(
      device, 0, &call_waits, &call_signals, loss_host_call, &call));
  hal_semaphore_t* s1 = cts_create_semaphore(device, 0);
  hal_command_buffer_t* first = fill_cb(device, a, 0x55555555u);
  HAL_ASSERT_OK(cts_submit(device, 0, NULL, 0, first, s1, 1));
  expect_failure_naming_call(cts_wait(s1, 1));
  expect_loss(device_signal, 1);
  // The blocker still runs: the call has not been called, and its host
  // signal is neither reached nor failed.
  assert_int_equal(atomic_load(&call.record.calls), 0);
  uint64_t value = 0;
  HAL_ASSERT_OK(hal_semaphore_query(call.host_signal, &value));
  assert_int_equal(value, 0);
  HAL_ASSERT_OK(hal_semaphore_signal(blocker.release, 1));
  expect_loss(call.host_signal, 1);
  assert_int_equal(atomic_load(&call.record.calls), 1);
  assert_int_equal(atomic_load(&call.record.status_code),
                   HAL_STATUS_DEVICE_LOST);
  assert_int_equal(atomic_load(&call.host_signal_failed_at_call), 0);
  hal_command_buffer_release(first);
  hal_semaphore_release(s1);
  hal_semaphore_release(device_signal);
  hal_semaphore_release(call.host_signal);
  hal_semaphore_release(never);
  hal_semaphore_release(blocker.started);
  hal_semaphore_release(blocker.release);
  hal_buffer_release(a);
}

// The loss-race case: a callback on the lost fill's semaphore runs on the
// thread that made the loss known, after it failed every semaphore of the
// device and before it fails the host calls still waiting. It says so and
// holds that thread there until the waiting call's function has run.
typedef struct shutdown_race_t {
  hal_semaphore_t* lost;    // host: 1 once the callback ran
  hal_semaphore_t* called;  // host: 1 once the call's function ran
  host_call_record_t record;
  hal_device_t* device;  // the last reference, for the releasing thread
} shutdown_race_t;

static void hold_the_loss(void* user_data, uint64_t value,
                          hal_status_t status) {
  (void)value;
  (void)status;
  shutdown_race_t* race = (shutdown_race_t*)user_data;
  hal_status_ignore(hal_semaphore_signal(race->lost, 1));
  hal_status_ignore(hal_semaphore_wait(
      race->called, 1, hal_make_timeout_ns(20ll * 1000 * 1000 * 1000)));
}

static hal_status_t record_and_say_called(void* user_data,
                                          hal_status_t status) {
  shutdown_race_t* race = (shutdown_race_t*)user_data;
  hal_status_t result = record_host_call(&race->record, status);
  hal_status_ignore(hal_semaphore_signal(race->called, 1));
  return result;
}

// Releases the device's last reference once the loss was seen.
static void* release_the_device(void* arg) {
  shutdown_race_t* race = (shutdown_race_t*)arg;
  hal_status_ignore(hal_semaphore_wait(
      race->lost, 1, hal_make_timeout_ns(20ll * 1000 * 1000 * 1000)));
  hal_device_release(race->device);
  return NULL;
}

// Device loss (Q5) and the device's last release racing it: every
// semaphore of the device fails first, so the program may release the
// device before the loss reached the host calls still waiting. A call
// waiting then is called with the loss and its host signal fails with it,
// not with the shutdown's CANCELLED (the shutdown dispatched it first and
// the first failure stuck).
CTS_CASE(K14_ACallWaitingAtALossGetsItThoughTheDeviceIsReleasedFirst) {
  skip_unless_mode("lost_shutdown");
  shutdown_race_t race = {.device = cts_create_device(0), .record = {0, 0}};
  HAL_ASSERT_OK(
      hal_semaphore_create_host(hal_allocator_system(), 0, &race.lost));
  HAL_ASSERT_OK(
      hal_semaphore_create_host(hal_allocator_system(), 0, &race.called));
  hal_semaphore_t* never = NULL;  // a host semaphore nobody signals
  HAL_ASSERT_OK(hal_semaphore_create_host(hal_allocator_system(), 0, &never));
  hal_semaphore_t* host_signal = NULL;
  HAL_ASSERT_OK(
      hal_semaphore_create_host(hal_allocator_system(), 0, &host_signal));
  uint64_t one = 1;
  hal_semaphore_list_t call_waits = {1, &never, &one};
  hal_semaphore_list_t call_signals = {1, &host_signal, &one};
  HAL_ASSERT_OK(hal_device_queue_host_call(race.device, 0, &call_waits,
                                           &call_signals, record_and_say_called,
                                           &race));
  hal_buffer_t* a =
      cts_allocate_buffer(race.device, HAL_MEMORY_TYPE_DEVICE_LOCAL, SIZE);
  hal_semaphore_t* s1 = cts_create_semaphore(race.device, 0);
  HAL_ASSERT_OK(hal_semaphore_add_callback(s1, 1, hold_the_loss, &race, NULL));
  hal_command_buffer_t* first = fill_cb(race.device, a, 0x55555555u);
  hal_semaphore_t* go = NULL;
  HAL_ASSERT_OK(hal_semaphore_create_host(hal_allocator_system(), 0, &go));
  HAL_ASSERT_OK(cts_submit(race.device, 0, go, 1, first, s1, 1));
  hal_command_buffer_release(first);
  // Whichever thread issues the fill (this one, inside the signal, or a
  // queue thread) meets the loss and is held in the callback; the releaser
  // releases the device meanwhile (the release waits for that thread's
  // queue, so not from the held thread).
  pthread_t releaser;
  assert_int_equal(pthread_create(&releaser, NULL, release_the_device, &race),
                   0);
  HAL_ASSERT_OK(hal_semaphore_signal(go, 1));
  assert_int_equal(pthread_join(releaser, NULL), 0);
  expect_loss(host_signal, 1);
  assert_int_equal(atomic_load(&race.record.calls), 1);
  assert_int_equal(atomic_load(&race.record.status_code),
                   HAL_STATUS_DEVICE_LOST);
  hal_semaphore_release(s1);
  hal_semaphore_release(go);
  hal_buffer_release(a);
  hal_semaphore_release(host_signal);
  hal_semaphore_release(never);
  hal_semaphore_release(race.called);
  hal_semaphore_release(race.lost);
}

// Device loss (Q5, K14): the failing submission and everything issued after
// it fail; parked work, host calls included, fails even though what it
// waits for never comes (a host semaphore nobody signals); every semaphore of
// the device fails, idle ones too, and so does one made after the loss; new
// submissions are refused with the loss; every wait returns at once with
// DEVICE_LOST naming the call; the device still releases cleanly.
CTS_CASE(K14_DeviceLossFailsEverySemaphoreAndWait) {
  skip_unless_mode("lost");
  hal_device_t* device = case_device(state);
  uint32_t q1 = hal_device_info(device)->queue_count > 1 ? 1 : 0;
  hal_buffer_t* a =
      cts_allocate_buffer(device, HAL_MEMORY_TYPE_DEVICE_LOCAL, SIZE);
  hal_semaphore_t* gate = cts_create_semaphore(device, 0);
  hal_semaphore_t* s1 = cts_create_semaphore(device, 0);
  hal_semaphore_t* s2 = cts_create_semaphore(device, 0);
  hal_semaphore_t* idle = cts_create_semaphore(device, 0);
  hal_semaphore_t* never = NULL;  // a host semaphore nobody signals
  HAL_ASSERT_OK(hal_semaphore_create_host(hal_allocator_system(), 0, &never));
  hal_semaphore_t* parked_signal = NULL;  // host-made, signaled by the device
  HAL_ASSERT_OK(
      hal_semaphore_create_host(hal_allocator_system(), 0, &parked_signal));
  hal_command_buffer_t* later = fill_cb(device, a, 0x44444444u);
  hal_command_buffer_t* stuck = fill_cb(device, a, 0x66666666u);
  // Parked first, on the other queue: one released after the loss, one
  // waiting for what never comes.
  HAL_ASSERT_OK(cts_submit(device, q1, gate, 1, later, s2, 1));
  HAL_ASSERT_OK(cts_submit(device, q1, never, 1, stuck, parked_signal, 1));
  // A host call parked on what never comes fails with the loss too: its
  // function learns it, its signal fails.
  hal_semaphore_t* call_signal = NULL;
  HAL_ASSERT_OK(
      hal_semaphore_create_host(hal_allocator_system(), 0, &call_signal));
  host_call_record_t parked_call = {0, 0};
  uint64_t one = 1;
  hal_semaphore_list_t call_waits = {1, &never, &one};
  hal_semaphore_list_t call_signals = {1, &call_signal, &one};
  HAL_ASSERT_OK(hal_device_queue_host_call(
      device, q1, &call_waits, &call_signals, record_host_call, &parked_call));
  // The first submission meets the loss; with CTS_FAULT_FIRST_EMPTY=1 it
  // is an empty one, whose only vendor call is its completion event's
  // creation (the fault then hits that).
  const char* first_empty = getenv("CTS_FAULT_FIRST_EMPTY");
  hal_command_buffer_t* first = first_empty && strcmp(first_empty, "1") == 0
                                    ? NULL
                                    : fill_cb(device, a, 0x55555555u);
  HAL_ASSERT_OK(cts_submit(device, 0, NULL, 0, first, s1, 1));
  expect_failure_naming_call(cts_wait(s1, 1));
  expect_loss(idle, 1);
  expect_loss(parked_signal, 1);
  expect_loss(call_signal, 1);
  assert_int_equal(atomic_load(&parked_call.calls), 1);
  assert_int_equal(atomic_load(&parked_call.status_code),
                   HAL_STATUS_DEVICE_LOST);
  // The gate is the device's too: it fails (the loss fails the device's
  // semaphores one after another, so wait for this one), and then a host
  // signal reports the loss.
  expect_loss(gate, 1);
  assert_int_equal(hal_status_consume_code(hal_semaphore_signal(gate, 1)),
                   HAL_STATUS_DEVICE_LOST);
  expect_loss(s2, 1);
  // A semaphore made after the loss is born failed; nothing new is
  // accepted.
  hal_semaphore_t* s3 = cts_create_semaphore(device, 0);
  expect_loss(s3, 1);
  hal_semaphore_t* s4 = NULL;
  HAL_ASSERT_OK(hal_semaphore_create_host(hal_allocator_system(), 0, &s4));
  hal_status_t status = cts_submit(device, 0, NULL, 0, NULL, s4, 1);
  assert_int_equal(hal_status_code(status), HAL_STATUS_DEVICE_LOST);
  bool says_lost = strstr(hal_status_message(status), "was lost") != NULL;
  hal_status_free(status);
  assert_true(says_lost);
  assert_int_equal(cts_query(s4), 0);  // nothing was submitted
  // A host call after the loss is refused with it, never called (with a
  // wait and a signal: the refusal gives back every semaphore it took).
  host_call_record_t late_call = {0, 0};
  call_signals.semaphores = &s4;
  status = hal_device_queue_host_call(device, 0, &call_waits, &call_signals,
                                      record_host_call, &late_call);
  char text[2048];
  hal_status_format(status, text, sizeof(text));
  assert_int_equal(hal_status_consume_code(status), HAL_STATUS_DEVICE_LOST);
  if (!strstr(text, fault_call()))
    fail_msg("refusal \"%s\" does not name %s", text, fault_call());
  assert_int_equal(atomic_load(&late_call.calls), 0);
  assert_int_equal(cts_query(s4), 0);
  // So is everything else that would call the vendor on the device: an
  // allocation, a command buffer, a file transfer (its staging memory).
  hal_buffer_t* late_buffer = NULL;
  expect_refused_with_loss(hal_device_allocate_buffer(
      device,
      (hal_buffer_params_t){HAL_MEMORY_TYPE_DEVICE_LOCAL,
                            HAL_BUFFER_USAGE_DEFAULT},
      SIZE, &late_buffer));
  expect_refused_with_loss(hal_device_allocate_buffer(
      device,
      (hal_buffer_params_t){HAL_MEMORY_TYPE_HOST_VISIBLE,
                            HAL_BUFFER_USAGE_DEFAULT},
      SIZE, &late_buffer));
  hal_command_buffer_t* late_cb = NULL;
  expect_refused_with_loss(hal_device_create_command_buffer(
      device, HAL_COMMAND_BUFFER_MODE_ONE_SHOT, &late_cb));
  static uint8_t file_bytes[SIZE];
  hal_file_t* file = NULL;
  HAL_ASSERT_OK(hal_file_from_memory(file_bytes, sizeof(file_bytes),
                                     HAL_FILE_ACCESS_READ, &file));
  expect_refused_with_loss(hal_device_queue_read(device, 0, NULL, &call_signals,
                                                 file, 0, a, 0, SIZE));
  hal_file_release(file);
  assert_int_equal(cts_query(s4), 0);
  // A driver made after the loss lists every device, the lost one with the
  // info it had: the runtime still answers the queries of a lost device's
  // fixed properties (as CUDA does after a sticky error, and the virtual
  // GPU). A new device on the lost GPU fails with the loss; one on another
  // GPU works.
  hal_driver_t* late_driver = NULL;
  HAL_ASSERT_OK(hal_driver_registry_create_driver(
      cts_context.registry, cts_context.driver_name, hal_allocator_system(),
      &late_driver));
  const hal_device_info_t* lost_info = hal_device_info(device);
  uint32_t late_count = 0;
  HAL_ASSERT_OK(hal_driver_query_device_count(late_driver, &late_count));
  assert_true(late_count > lost_info->index);
  hal_device_info_t late_info;
  HAL_ASSERT_OK(
      hal_driver_query_device_info(late_driver, lost_info->index, &late_info));
  assert_string_equal(late_info.name, lost_info->name);
  assert_true(late_info.total_memory == lost_info->total_memory);
  assert_int_equal(late_info.has_uuid, lost_info->has_uuid);
  assert_memory_equal(late_info.uuid, lost_info->uuid, sizeof(late_info.uuid));
  hal_device_t* late_device = NULL;
  status = hal_driver_create_device_by_index(
      late_driver, lost_info->index, hal_allocator_system(), &late_device);
  assert_null(late_device);
  assert_int_equal(hal_status_consume_code(status), HAL_STATUS_DEVICE_LOST);
  if (late_count > 1) {
    uint32_t other = lost_info->index == 0 ? 1 : 0;
    HAL_ASSERT_OK(hal_driver_create_device_by_index(
        late_driver, other, hal_allocator_system(), &late_device));
    hal_semaphore_t* other_done = cts_create_semaphore(late_device, 0);
    uint64_t one_value = 1;
    hal_semaphore_list_t other_signals = {1, &other_done, &one_value};
    HAL_ASSERT_OK(hal_device_queue_execute(late_device, 0, NULL, &other_signals,
                                           0, NULL));
    HAL_ASSERT_OK(hal_semaphore_wait(
        other_done, 1, hal_make_timeout_ns(20ll * 1000 * 1000 * 1000)));
    hal_semaphore_release(other_done);
    hal_device_release(late_device);
  }
  hal_driver_release(late_driver);
  hal_command_buffer_release(later);
  hal_command_buffer_release(stuck);
  if (first)
    hal_command_buffer_release(first);
  hal_semaphore_release(gate);
  hal_semaphore_release(s1);
  hal_semaphore_release(s2);
  hal_semaphore_release(s3);
  hal_semaphore_release(s4);
  hal_semaphore_release(idle);
  hal_semaphore_release(never);
  hal_semaphore_release(parked_signal);
  hal_semaphore_release(call_signal);
  hal_buffer_release(a);
}

// A queue-ordered buffer of SIZE bytes on queue 0, its alloca signaling
// |semaphore| to |value|.
static hal_buffer_t* alloca_signaling(hal_device_t* device,
                                      hal_semaphore_t* semaphore,
                                      uint64_t value) {
  hal_semaphore_list_t signals = {1, &semaphore, &value};
  hal_buffer_params_t params = {HAL_MEMORY_TYPE_DEVICE_LOCAL,
                                HAL_BUFFER_USAGE_DEFAULT};
  hal_buffer_t* buffer = NULL;
  HAL_ASSERT_OK(hal_device_queue_alloca(device, 0, NULL, &signals, params, SIZE,
                                        &buffer));
  return buffer;
}

// An alloca whose completion event could not be recorded: its signals
// fail while the device may still run the allocation, so its buffer never
// becomes usable: a host read or write is refused (device.h), and the
// buffer's memory goes with it.
CTS_CASE(Alloca_CompletionNotRecordedLeavesTheBufferUnusable) {
  skip_unless_mode("alloca_record");
  hal_device_t* device = case_device(state);
  hal_semaphore_t* ready = cts_create_semaphore(device, 0);
  hal_buffer_t* buffer = alloca_signaling(device, ready, 1);
  expect_failure_naming_call(cts_wait(ready, 1));
  uint32_t word = 0xDEADBEEFu;
  HAL_ASSERT_STATUS(HAL_STATUS_FAILED_PRECONDITION, "alloca",
                    hal_buffer_read(buffer, 0, &word, sizeof(word)));
  assert_int_equal(word, 0xDEADBEEFu);
  HAL_ASSERT_STATUS(HAL_STATUS_FAILED_PRECONDITION, "alloca",
                    hal_buffer_write(buffer, 0, &word, sizeof(word)));
  hal_buffer_release(buffer);
  hal_semaphore_release(ready);
}

// Without stream-ordered frees, a dealloca frees at its completion, after
// its signals were decided: a free the vendor refuses leaves the memory
// with the buffer, freed when it goes (nothing leaked: the virtual GPU
// reports device memory left at exit), and the buffer stays deallocated.
CTS_CASE(Dealloca_RefusedFallbackFreeLeaksNothing) {
  skip_unless_mode("fallback_free");
  hal_device_t* device = case_device(state);
  hal_semaphore_t* s = cts_create_semaphore(device, 0);
  hal_buffer_t* buffer = alloca_signaling(device, s, 1);
  uint64_t one = 1, two = 2;
  hal_semaphore_list_t allocated = {1, &s, &one};
  hal_semaphore_list_t freed = {1, &s, &two};
  HAL_ASSERT_OK(
      hal_device_queue_dealloca(device, 0, &allocated, &freed, buffer));
  HAL_ASSERT_OK(cts_wait(s, 2));
  uint32_t word = 0;
  HAL_ASSERT_STATUS(HAL_STATUS_FAILED_PRECONDITION, NULL,
                    hal_buffer_read(buffer, 0, &word, sizeof(word)));
  hal_buffer_release(buffer);
  hal_semaphore_release(s);
}

// Q5: nothing that learns of the loss finds one of the device's
// semaphores not failed yet. A thread allocating in a loop learns of it
// from the allocation's refusal while the loss is being published (or
// from its own vendor call, which may meet the lost device first and then
// publishes the loss itself); either way, at that moment every one of
// many semaphores must have failed.
typedef struct loss_learner_t {
  hal_device_t* device;
  hal_semaphore_t** semaphores;
  size_t count;
  atomic_int started;
  size_t not_failed;  // when the refusal came
  hal_status_code_t refusal;
} loss_learner_t;

static void* learn_the_loss(void* arg) {
  loss_learner_t* learner = arg;
  hal_buffer_params_t params = {HAL_MEMORY_TYPE_DEVICE_LOCAL,
                                HAL_BUFFER_USAGE_DEFAULT};
  hal_time_t deadline = hal_time_now() + 20ll * 1000 * 1000 * 1000;
  atomic_store(&learner->started, 1);
  learner->refusal = HAL_STATUS_DEADLINE_EXCEEDED;
  while (hal_time_now() < deadline) {
    hal_buffer_t* buffer = NULL;
    hal_status_t status =
        hal_device_allocate_buffer(learner->device, params, 256, &buffer);
    if (status == HAL_OK) {
      hal_buffer_release(buffer);
      continue;
    }
    learner->refusal = hal_status_consume_code(status);
    for (size_t i = 0; i < learner->count; ++i) {
      uint64_t value = 0;
      hal_status_t query = hal_semaphore_query(learner->semaphores[i], &value);
      if (query == HAL_OK)
        ++learner->not_failed;
      hal_status_free(query);
    }
    break;
  }
  return NULL;
}

CTS_CASE(Q5_NothingLearnsOfTheLossBeforeTheSemaphoresFail) {
  skip_unless_mode("lost_learned");
  hal_device_t* device = case_device(state);
  enum { kSemaphores = 4000 };
  hal_semaphore_t** semaphores = calloc(kSemaphores, sizeof(*semaphores));
  assert_non_null(semaphores);
  for (size_t i = 0; i < kSemaphores; ++i)
    semaphores[i] = cts_create_semaphore(device, 0);
  hal_buffer_t* a =
      cts_allocate_buffer(device, HAL_MEMORY_TYPE_DEVICE_LOCAL, SIZE);
  hal_semaphore_t* s1 = cts_create_semaphore(device, 0);
  hal_command_buffer_t* first = fill_cb(device, a, 0x55555555u);
  loss_learner_t learner = {device, semaphores, kSemaphores,
                            0,      0,          HAL_STATUS_OK};
  pthread_t thread;
  assert_int_equal(pthread_create(&thread, NULL, learn_the_loss, &learner), 0);
  while (!atomic_load(&learner.started))
    sched_yield();
  HAL_ASSERT_OK(cts_submit(device, 0, NULL, 0, first, s1, 1));
  // The loss, named by whichever vendor call met it first.
  HAL_ASSERT_STATUS(HAL_STATUS_DEVICE_LOST, "was lost", cts_wait(s1, 1));
  pthread_join(thread, NULL);
  assert_int_equal(learner.refusal, HAL_STATUS_DEVICE_LOST);
  if (learner.not_failed) {
    fail_msg(
        "a thread refused with the loss found %zu of the device's %d "
        "semaphores not failed yet",
        learner.not_failed, kSemaphores);
  }
  hal_command_buffer_release(first);
  hal_semaphore_release(s1);
  hal_buffer_release(a);
  for (size_t i = 0; i < kSemaphores; ++i)
    hal_semaphore_release(semaphores[i]);
  free(semaphores);
}

// A loss reported by a release (the free of a buffer's memory), which has
// no caller to tell: the device is lost all the same (Q5), so every
// semaphore it made fails, later ones are born failed and later work is
// refused with the loss.
CTS_CASE(K14_LossReportedByAReleaseLosesTheDevice) {
  skip_unless_mode("lost_release");
  hal_device_t* device = case_device(state);
  hal_semaphore_t* idle = cts_create_semaphore(device, 0);
  hal_buffer_t* doomed =
      cts_allocate_buffer(device, HAL_MEMORY_TYPE_DEVICE_LOCAL, SIZE);
  hal_buffer_release(doomed);  // its free meets the loss
  expect_loss(idle, 1);
  hal_semaphore_t* born = cts_create_semaphore(device, 0);
  expect_loss(born, 1);
  hal_semaphore_t* signal = NULL;
  HAL_ASSERT_OK(hal_semaphore_create_host(hal_allocator_system(), 0, &signal));
  host_call_record_t late_call = {0, 0};
  uint64_t one = 1;
  hal_semaphore_list_t signals = {1, &signal, &one};
  expect_refused_with_loss(hal_device_queue_host_call(
      device, 0, NULL, &signals, record_host_call, &late_call));
  assert_int_equal(atomic_load(&late_call.calls), 0);
  expect_refused_with_loss(cts_submit(device, 0, NULL, 0, NULL, signal, 1));
  assert_int_equal(cts_query(signal), 0);
  hal_semaphore_release(signal);
  hal_semaphore_release(born);
  hal_semaphore_release(idle);
}

// A loss first reported to the tracer (reading the device times of a
// completed submission's spans): the work itself succeeded, but the device
// is lost all the same (Q5), so its idle semaphores fail and later ones
// are born failed.
CTS_CASE(K14_LossReportedToTheTracerLosesTheDevice) {
  skip_unless_mode("lost_trace");
  hal_device_t* device = case_device(state);
  hal_buffer_t* a =
      cts_allocate_buffer(device, HAL_MEMORY_TYPE_DEVICE_LOCAL, SIZE);
  hal_semaphore_t* idle = cts_create_semaphore(device, 0);
  hal_semaphore_t* done = NULL;
  HAL_ASSERT_OK(hal_semaphore_create_host(hal_allocator_system(), 0, &done));
  hal_command_buffer_t* cb = fill_cb(device, a, 0x77777777u);
  HAL_ASSERT_OK(cts_submit(device, 0, NULL, 0, cb, done, 1));
  HAL_ASSERT_OK(cts_wait(done, 1));  // the work ran; its spans come after
  expect_loss(idle, 1);
  hal_semaphore_t* born = cts_create_semaphore(device, 0);
  expect_loss(born, 1);
  hal_command_buffer_release(cb);
  hal_semaphore_release(born);
  hal_semaphore_release(done);
  hal_semaphore_release(idle);
  hal_buffer_release(a);
}

// The test list: CASE binds this program's fixture.
#define CASE(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void) {
  const struct CMUnitTest tests[] = {
      CASE(Fault_VendorErrorFailsDownstream),
      CASE(K13_FailureReachesWorkWaitingOnTheDevice),
      CASE(K14_DeviceLossFailsEverySemaphoreAndWait),
      CASE(K14_LossFailsACallsDeviceSignalsAtOnceItsOthersAfterItsFunction),
      CASE(K14_ACallWaitingAtALossGetsItThoughTheDeviceIsReleasedFirst),
      CASE(Q5_NothingLearnsOfTheLossBeforeTheSemaphoresFail),
      CASE(Alloca_CompletionNotRecordedLeavesTheBufferUnusable),
      CASE(Dealloca_RefusedFallbackFreeLeaksNothing),
      CASE(K14_LossReportedByAReleaseLosesTheDevice),
      CASE(K14_LossReportedToTheTracerLosesTheDevice),
  };
  return cts_main("fault", tests, HAL_ARRAYSIZE(tests));
}
