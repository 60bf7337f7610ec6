// Copyright 2026 The HAL Authors.
//
// CTS suite "queue_ops": the queue operations beside command buffers, on
// the driver's device.
//
// hal_device_queue_fill/update/copy: one transfer op each, ordered by their
// semaphores, validated as the command-buffer op and the submission are.
//
// hal_device_queue_host_call: runs after its waits and before its signals, on a
// HAL-owned thread, exactly once (with OK, or with the reason it never ran);
// its failure and its waits' failures reach its signals; it may re-enter the
// HAL; the device's release cancels the ones still waiting (Q4).

#include "cts.h"

typedef cts_fixture_t fixture_t;

// What one host call saw.
typedef struct record_t {
  atomic_int calls;          // times fn was called (must end at 1)
  hal_status_code_t status;  // the status fn was called with
  pthread_t thread;          // where it ran
  hal_semaphore_t* watched;  // optional: its value when fn ran
  uint64_t watched_value;
  hal_buffer_t* buffer;  // optional: its first byte when fn ran
  uint8_t byte;
  hal_status_code_t result;  // what fn returns when it runs
} record_t;

static hal_status_t record_fn(void* user_data, hal_status_t status) {
  record_t* record = user_data;
  record->status = hal_status_code(status);
  record->thread = pthread_self();
  if (status == HAL_OK && record->watched) {
    hal_status_ignore(
        hal_semaphore_query(record->watched, &record->watched_value));
  }
  if (status == HAL_OK && record->buffer) {
    hal_status_ignore(hal_buffer_read(record->buffer, 0, &record->byte, 1));
  }
  atomic_fetch_add(&record->calls, 1);
  if (record->result != HAL_STATUS_OK)
    return hal_make_status(record->result, "the host call failed on purpose");
  return HAL_OK;
}

static hal_status_t host_call(hal_device_t* device, uint32_t queue,
                              hal_semaphore_t* wait, uint64_t wait_value,
                              hal_semaphore_t* signal, uint64_t signal_value,
                              record_t* record) {
  hal_semaphore_list_t waits = {wait ? 1 : 0, &wait, &wait_value};
  hal_semaphore_list_t signals = {signal ? 1 : 0, &signal, &signal_value};
  return hal_device_queue_host_call(device, queue, &waits, &signals, record_fn,
                                    record);
}

// Runs after its wait (not before: the host signals it later), before its
// signal, once, off the caller's thread.
CTS_CASE(HostCall_RunsAfterWaitsBeforeSignals) {
  fixture_t* f = *state;
  hal_semaphore_t* gate = cts_create_semaphore(f->device, 0);
  hal_semaphore_t* done = cts_create_semaphore(f->device, 0);
  record_t record = {.watched = gate};
  HAL_ASSERT_OK(host_call(f->device, f->q1, gate, 2, done, 5, &record));
  hal_sleep_until(hal_time_now() + 5 * 1000 * 1000);
  assert_int_equal(atomic_load(&record.calls), 0);
  assert_int_equal(cts_query(done), 0);
  HAL_ASSERT_OK(hal_semaphore_signal(gate, 3));
  HAL_ASSERT_OK(cts_wait(done, 5));
  assert_int_equal(atomic_load(&record.calls), 1);
  assert_int_equal(record.status, HAL_STATUS_OK);
  assert_true(record.watched_value >= 2);
  assert_false(pthread_equal(record.thread, pthread_self()));
  hal_semaphore_release(gate);
  hal_semaphore_release(done);
}

// In order with device work both ways: it sees what a fill before it wrote,
// and a copy after it waits for its signal.
CTS_CASE(HostCall_OrderedWithDeviceWork) {
  fixture_t* f = *state;
  hal_semaphore_t* s = cts_create_semaphore(f->device, 0);
  uint64_t v1 = 1, v2 = 2, v3 = 3;
  hal_semaphore_list_t wait2 = {1, &s, &v2};
  hal_semaphore_list_t signal1 = {1, &s, &v1};
  hal_semaphore_list_t signal3 = {1, &s, &v3};
  uint8_t pattern = 0x5C;
  record_t record = {.buffer = f->a};
  // Submitted back to front: the copy first, then the host call, then the
  // fill that starts the chain (wait-before-signal all the way, S4).
  HAL_ASSERT_OK(hal_device_queue_copy(f->device, f->q0, &wait2, &signal3, f->a,
                                      0, f->b, 0, CTS_FIXTURE_BUFFER_SIZE));
  HAL_ASSERT_OK(host_call(f->device, f->q1, s, 1, s, 2, &record));
  HAL_ASSERT_OK(hal_device_queue_fill(f->device, f->q0, NULL, &signal1, f->a, 0,
                                      CTS_FIXTURE_BUFFER_SIZE, &pattern, 1));
  HAL_ASSERT_OK(cts_wait(s, 3));
  assert_int_equal(atomic_load(&record.calls), 1);
  assert_int_equal(record.byte, pattern);
  cts_expect_bytes(f->b, 0, CTS_FIXTURE_BUFFER_SIZE, pattern);
  hal_semaphore_release(s);
}

// A failing host call fails its signals with its status, and work waiting
// for them fails too, naming it.
CTS_CASE(HostCall_FailureFailsSignalsAndDownstream) {
  fixture_t* f = *state;
  hal_semaphore_t* failed = cts_create_semaphore(f->device, 0);
  hal_semaphore_t* after = cts_create_semaphore(f->device, 0);
  record_t record = {.result = HAL_STATUS_DATA_LOSS};
  HAL_ASSERT_OK(host_call(f->device, f->q0, NULL, 0, failed, 1, &record));
  HAL_ASSERT_OK(cts_submit(f->device, f->q1, failed, 1, NULL, after, 1));
  HAL_ASSERT_STATUS(HAL_STATUS_DATA_LOSS, "failed on purpose",
                    cts_wait(failed, 1));
  HAL_ASSERT_STATUS(HAL_STATUS_DATA_LOSS, "failed on purpose",
                    cts_wait(after, 1));
  assert_int_equal(atomic_load(&record.calls), 1);
  hal_semaphore_release(failed);
  hal_semaphore_release(after);
}

// A host call on queue 0 of |f| waiting for |a| and |b| at 1 and
// signaling |done| to 1.
static void two_wait_host_call(fixture_t* f, hal_semaphore_t* a,
                               hal_semaphore_t* b, hal_semaphore_t* done,
                               hal_host_call_fn_t fn, void* user_data) {
  hal_semaphore_t* waits[2] = {a, b};
  uint64_t wait_values[2] = {1, 1}, one = 1;
  hal_semaphore_list_t wait_list = {2, waits, wait_values};
  hal_semaphore_list_t signal_list = {1, &done, &one};
  HAL_ASSERT_OK(hal_device_queue_host_call(f->device, f->q0, &wait_list,
                                           &signal_list, fn, user_data));
}

// A failed wait decides it at once, even with another wait never reached:
// fn is called once with the failure (and does no work), the signals fail
// with it.
CTS_CASE(S2_HostCallFailedWaitNeverRuns) {
  fixture_t* f = *state;
  hal_semaphore_t* never = cts_create_semaphore(f->device, 0);
  hal_semaphore_t* broken = cts_create_semaphore(f->device, 0);
  hal_semaphore_t* done = cts_create_semaphore(f->device, 0);
  record_t record = {0};
  two_wait_host_call(f, never, broken, done, record_fn, &record);
  hal_semaphore_fail(broken,
                     hal_make_status(HAL_STATUS_ABORTED, "upstream broke"));
  HAL_ASSERT_STATUS(HAL_STATUS_ABORTED, "upstream broke", cts_wait(done, 1));
  // fn's call comes before the signals fail; the count settles with them.
  assert_int_equal(atomic_load(&record.calls), 1);
  assert_int_equal(record.status, HAL_STATUS_ABORTED);
  hal_semaphore_release(never);
  hal_semaphore_release(broken);
  hal_semaphore_release(done);
}

// A wait reached, then failed, while another wait is never reached: the
// failure decides the call at once (S2: a value reached before the failure
// is failed for every current wait), whichever place the wait has in the
// list; fn learns of it and never runs.
CTS_CASE(S2_HostCallReachedWaitThatFailsDecidesItAtOnce) {
  fixture_t* f = *state;
  for (int reached_first = 0; reached_first < 2; ++reached_first) {
    hal_semaphore_t* never = cts_create_semaphore(f->device, 0);
    hal_semaphore_t* broken = cts_create_semaphore(f->device, 0);
    hal_semaphore_t* done = cts_create_semaphore(f->device, 0);
    record_t record = {0};
    two_wait_host_call(f, reached_first ? broken : never,
                       reached_first ? never : broken, done, record_fn,
                       &record);
    // Reached: its callback ran in this signal (T2), the call waits on.
    HAL_ASSERT_OK(hal_semaphore_signal(broken, 1));
    HAL_ASSERT_STATUS(
        HAL_STATUS_DEADLINE_EXCEEDED, NULL,
        hal_semaphore_wait(done, 1, hal_make_timeout_ns(20000000)));
    assert_int_equal(atomic_load(&record.calls), 0);
    hal_semaphore_fail(
        broken, hal_make_status(HAL_STATUS_ABORTED, "failed once reached"));
    HAL_ASSERT_STATUS(HAL_STATUS_ABORTED, "failed once reached",
                      cts_wait(done, 1));
    assert_int_equal(atomic_load(&record.calls), 1);
    assert_int_equal(record.status, HAL_STATUS_ABORTED);
    hal_semaphore_release(never);
    hal_semaphore_release(broken);
    hal_semaphore_release(done);
  }
}

// A wait's semaphore failing while the call's last wait is reached on
// another thread: the call is decided once, by whichever came first (fn
// with OK and the signal reached, or fn with the failure and the signal
// failed with it), never both, and nothing is left undecided. Under TSan
// this races the failure watch against the call's start.
typedef struct race_signal_t {
  hal_semaphore_t* semaphore;
  hal_semaphore_t* go;
} race_signal_t;

static void* race_signal_main(void* arg) {
  race_signal_t* race = arg;
  hal_status_ignore(cts_wait(race->go, 1));
  hal_status_ignore(hal_semaphore_signal(race->semaphore, 1));
  return NULL;
}

CTS_CASE(S2_HostCallWaitFailingAsItsLastWaitIsReachedDecidesItOnce) {
  fixture_t* f = *state;
  for (int round = 0; round < 200; ++round) {
    hal_semaphore_t* first = cts_create_semaphore(f->device, 0);
    hal_semaphore_t* last = cts_create_semaphore(f->device, 0);
    hal_semaphore_t* done = cts_create_semaphore(f->device, 0);
    hal_semaphore_t* go = cts_create_semaphore(NULL, 0);
    record_t record = {0};
    two_wait_host_call(f, first, last, done, record_fn, &record);
    HAL_ASSERT_OK(hal_semaphore_signal(first, 1));
    race_signal_t race = {last, go};
    pthread_t thread;
    assert_int_equal(pthread_create(&thread, NULL, race_signal_main, &race), 0);
    HAL_ASSERT_OK(hal_semaphore_signal(go, 1));
    hal_semaphore_fail(first, hal_make_status(HAL_STATUS_ABORTED, "raced"));
    pthread_join(thread, NULL);
    hal_status_t status = cts_wait(done, 1);
    hal_status_code_t code = hal_status_code(status);
    hal_status_free(status);
    assert_int_equal(atomic_load(&record.calls), 1);
    assert_int_equal(record.status, code);
    assert_true(code == HAL_STATUS_OK || code == HAL_STATUS_ABORTED);
    hal_semaphore_release(first);
    hal_semaphore_release(last);
    hal_semaphore_release(done);
    hal_semaphore_release(go);
  }
}

// A wait's semaphore failing while the call runs: the call is past its
// waits, so nothing changes (fn ran with OK, its return decides the
// signal). The hand-over between fn and this thread uses relaxed atomics
// only, so that under TSan nothing orders the failure's callback after
// the call's start but the library's own synchronization.
typedef struct held_call_t {
  atomic_int entered;  // relaxed: fn runs
  atomic_int go;       // relaxed: fn may return
  hal_status_code_t status;
  atomic_int calls;
} held_call_t;

// Polls |flag| (relaxed) until set, up to 10 s.
static bool poll_relaxed(atomic_int* flag) {
  for (int i = 0; i < 10 * 1000 * 10; ++i) {
    if (atomic_load_explicit(flag, memory_order_relaxed))
      return true;
    usleep(100);
  }
  return false;
}

static hal_status_t held_fn(void* user_data, hal_status_t status) {
  held_call_t* held = user_data;
  held->status = hal_status_code(status);
  atomic_fetch_add(&held->calls, 1);
  if (status == HAL_OK) {
    atomic_store_explicit(&held->entered, 1, memory_order_relaxed);
    (void)poll_relaxed(&held->go);
  }
  return HAL_OK;
}

CTS_CASE(S2_WaitFailingWhileTheHostCallRunsChangesNothing) {
  fixture_t* f = *state;
  hal_semaphore_t* first = cts_create_semaphore(f->device, 0);
  hal_semaphore_t* last = cts_create_semaphore(f->device, 0);
  hal_semaphore_t* done = cts_create_semaphore(f->device, 0);
  held_call_t held = {0, 0, HAL_STATUS_UNKNOWN, 0};
  two_wait_host_call(f, first, last, done, held_fn, &held);
  HAL_ASSERT_OK(hal_semaphore_signal(first, 1));
  HAL_ASSERT_OK(hal_semaphore_signal(last, 1));
  bool entered = poll_relaxed(&held.entered);
  hal_semaphore_fail(first, hal_make_status(HAL_STATUS_ABORTED, "too late"));
  atomic_store_explicit(&held.go, 1, memory_order_relaxed);
  assert_true(entered);
  HAL_ASSERT_OK(cts_wait(done, 1));
  assert_int_equal(atomic_load(&held.calls), 1);
  assert_int_equal(held.status, HAL_STATUS_OK);
  hal_semaphore_release(first);
  hal_semaphore_release(last);
  hal_semaphore_release(done);
}

// Re-entrant: a host call that submits device work and another host call,
// and waits for the device work.
typedef struct reentrant_t {
  hal_device_t* device;
  hal_buffer_t* buffer;
  hal_semaphore_t* inner;
  record_t inner_record;
  hal_status_code_t inner_wait;
} reentrant_t;

static hal_status_t reentrant_fn(void* user_data, hal_status_t status) {
  reentrant_t* r = user_data;
  if (status != HAL_OK)
    return HAL_OK;
  hal_command_buffer_t* cb = NULL;
  HAL_RETURN_IF_ERROR(hal_device_create_command_buffer(
      r->device, HAL_COMMAND_BUFFER_MODE_ONE_SHOT, &cb));
  uint8_t pattern = 0x3D;
  hal_status_t result = hal_command_buffer_begin(cb);
  if (!result) {
    result = hal_command_buffer_fill_buffer(
        cb, r->buffer, 0, CTS_FIXTURE_BUFFER_SIZE, &pattern, 1);
  }
  if (!result)
    result = hal_command_buffer_end(cb);
  if (!result)
    result = cts_submit(r->device, 0, NULL, 0, cb, r->inner, 1);
  hal_command_buffer_release(cb);
  if (!result)
    result =
        host_call(r->device, 0, r->inner, 1, r->inner, 2, &r->inner_record);
  // Waiting for device work from a host call is fine; waiting for another
  // host call of the device is not (one thread runs them: documented).
  if (!result)
    r->inner_wait = hal_status_consume_code(cts_wait(r->inner, 1));
  return result;
}

CTS_CASE(HostCall_ReEntersTheHal) {
  fixture_t* f = *state;
  hal_semaphore_t* done = cts_create_semaphore(f->device, 0);
  reentrant_t r = {.device = f->device,
                   .buffer = f->a,
                   .inner = cts_create_semaphore(f->device, 0),
                   .inner_record = {.buffer = f->a},
                   .inner_wait = HAL_STATUS_UNKNOWN};
  uint64_t one = 1;
  hal_semaphore_list_t signals = {1, &done, &one};
  HAL_ASSERT_OK(hal_device_queue_host_call(f->device, f->q0, NULL, &signals,
                                           reentrant_fn, &r));
  HAL_ASSERT_OK(cts_wait(done, 1));
  HAL_ASSERT_OK(cts_wait(r.inner, 2));
  assert_int_equal(r.inner_wait, HAL_STATUS_OK);
  assert_int_equal(atomic_load(&r.inner_record.calls), 1);
  assert_int_equal(r.inner_record.byte, 0x3D);
  hal_semaphore_release(r.inner);
  hal_semaphore_release(done);
}

// Q4: releasing the device with host calls waiting on a semaphore nobody
// signals cancels them: fn gets CANCELLED once, the signals fail with it,
// nothing hangs.
CTS_CASE(Q4_HostCallsWaitingAreCancelledAtRelease) {
  enum { kCalls = 8 };
  hal_device_t* device = cts_create_device(0);
  hal_semaphore_t* never = cts_create_semaphore(device, 0);
  hal_semaphore_t* signals[kCalls];
  record_t records[kCalls];
  memset(records, 0, sizeof(records));
  for (int i = 0; i < kCalls; ++i) {
    signals[i] = cts_create_semaphore(device, 0);
    HAL_ASSERT_OK(host_call(device, 0, never, 1, signals[i], 1, &records[i]));
  }
  hal_device_release(device);
  for (int i = 0; i < kCalls; ++i) {
    assert_int_equal(atomic_load(&records[i].calls), 1);
    assert_int_equal(records[i].status, HAL_STATUS_CANCELLED);
    HAL_ASSERT_STATUS(HAL_STATUS_CANCELLED, "shut down",
                      cts_wait(signals[i], 1));
    hal_semaphore_release(signals[i]);
  }
  hal_semaphore_release(never);
}

// Q4 with a host call running: a call may wait for device work, and the
// release waits for the running call. Work parked on a semaphore nobody
// signals (a queue barrier, submitted before the call or by it) is
// cancelled before that wait, so the call's wait ends, CANCELLED, and the
// release returns. It waited for ever (here: for the call's 20 s bound).
typedef struct parked_work_call_t {
  hal_device_t* device;
  hal_semaphore_t* awaited;  // signaled by parked work
  hal_semaphore_t* never;
  hal_semaphore_t* entered;  // host: the call is about to wait
  bool submits;              // the call submits the parked work itself
  hal_status_t wait;
} parked_work_call_t;

static hal_status_t wait_for_parked_work(void* user_data, hal_status_t status) {
  parked_work_call_t* call = user_data;
  if (status != HAL_OK)
    return HAL_OK;
  uint64_t v1 = 1;
  hal_semaphore_list_t waits = {1, &call->never, &v1};
  hal_semaphore_list_t signals = {1, &call->awaited, &v1};
  if (call->submits) {
    call->wait = hal_device_queue_barrier(call->device, 0, &waits, &signals);
    if (call->wait != HAL_OK)
      return HAL_OK;
  }
  hal_status_ignore(hal_semaphore_signal(call->entered, 1));
  call->wait = hal_semaphore_wait(call->awaited, 1,
                                  hal_make_timeout_ns(INT64_C(20000000000)));
  return HAL_OK;
}

CTS_CASE(Q4_ReleaseWhileAHostCallWaitsForParkedWork) {
  (void)state;
  for (int submits = 0; submits < 2; ++submits) {
    parked_work_call_t call = {.device = cts_create_device(0),
                               .submits = submits == 1};
    call.awaited = cts_create_semaphore(call.device, 0);
    call.never = cts_create_semaphore(NULL, 0);
    call.entered = cts_create_semaphore(NULL, 0);
    if (!call.submits) {
      HAL_ASSERT_OK(
          cts_submit(call.device, 1, call.never, 1, NULL, call.awaited, 1));
    }
    HAL_ASSERT_OK(hal_device_queue_host_call(call.device, 0, NULL, NULL,
                                             wait_for_parked_work, &call));
    HAL_ASSERT_OK(cts_wait(call.entered, 1));
    hal_device_release(call.device);  // waits for the running host call
    HAL_ASSERT_STATUS(HAL_STATUS_CANCELLED, "shut down", call.wait);
    hal_semaphore_release(call.awaited);
    hal_semaphore_release(call.entered);
    hal_semaphore_release(call.never);
  }
}

// A host call waiting for libhal's deferred destructions
// (hal_resource_wait_deferred) while its own device's last release, made
// in a callback, runs its shutdown on the release thread: the shutdown
// waits for the call, so the call's wait returns once the release thread
// runs it (resource.h). It waited for the shutdown for ever.
typedef struct deferred_wait_call_t {
  hal_semaphore_t* entered;
  hal_semaphore_t* go;
  atomic_int waited;  // the call's hal_resource_wait_deferred returned
} deferred_wait_call_t;

static hal_status_t wait_for_deferred_destruction(void* user_data,
                                                  hal_status_t status) {
  deferred_wait_call_t* call = user_data;
  if (status != HAL_OK)
    return HAL_OK;
  hal_status_ignore(hal_semaphore_signal(call->entered, 1));
  hal_status_ignore(hal_semaphore_wait(
      call->go, 1, hal_make_timeout_ns(INT64_C(20000000000))));
  hal_resource_wait_deferred();
  atomic_store(&call->waited, 1);
  return HAL_OK;
}

static void release_device_callback(void* user_data, uint64_t value,
                                    hal_status_t status) {
  hal_device_release((hal_device_t*)user_data);
}

CTS_CASE(HostCall_WaitsForDeferredDestructionsAsItsDeviceShutsDown) {
  (void)state;
  hal_device_t* device = cts_create_device(0);
  deferred_wait_call_t call = {.entered = cts_create_semaphore(NULL, 0),
                               .go = cts_create_semaphore(NULL, 0)};
  hal_semaphore_t* trigger = cts_create_semaphore(NULL, 0);
  HAL_ASSERT_OK(hal_device_queue_host_call(
      device, 0, NULL, NULL, wait_for_deferred_destruction, &call));
  HAL_ASSERT_OK(cts_wait(call.entered, 1));
  // The last release, in a callback: the shutdown goes to the release
  // thread, where it waits for the running call.
  HAL_ASSERT_OK(hal_semaphore_add_callback(trigger, 1, release_device_callback,
                                           device, NULL));
  HAL_ASSERT_OK(hal_semaphore_signal(trigger, 1));
  HAL_ASSERT_OK(hal_semaphore_signal(call.go, 1));
  hal_time_t deadline = hal_time_now() + INT64_C(20000000000);
  while (!atomic_load(&call.waited) && hal_time_now() < deadline)
    usleep(1000);
  assert_int_equal(atomic_load(&call.waited), 1);
  hal_resource_wait_deferred();  // the shutdown, then the device's memory
  hal_semaphore_release(trigger);
  hal_semaphore_release(call.go);
  hal_semaphore_release(call.entered);
}

// S2 against Q4: a host call waiting on a semaphore that has failed was
// decided by that failure when it was published, even though the wait's
// callback, run by the failing thread after it, has not run yet (a
// callback registered first holds that thread in its batch). A release of
// the device right after the failure was seen must give the call, and its
// signals, the failure that names the cause, not CANCELLED.
CTS_CASE(S2_HostCallWithAFailedWaitIsNotCancelledAtRelease) {
  cts_failed_wait_t scene;
  // Held up to 2 s: a release that waited for the batch is slow, no hang.
  cts_failed_wait_begin(&scene, 2, 2000, HAL_STATUS_ABORTED);
  record_t record = {0};
  HAL_ASSERT_OK(hal_device_queue_host_call(scene.device, 0, &scene.waits,
                                           &scene.signals, record_fn, &record));
  cts_failed_wait_release(&scene);
  assert_int_equal(atomic_load(&record.calls), 1);
  assert_int_equal(record.status, HAL_STATUS_ABORTED);
  cts_failed_wait_end(&scene);
}

// The same for a call ready but not started (the device's host-call
// thread busy with another) whose wait, reached, failed afterwards: S2
// keeps it from running, and the shutdown must give it that failure, not
// CANCELLED. The busy call returns by itself after a while: a release
// waits for the call running.
typedef struct busy_t {
  hal_semaphore_t* started;
  hal_semaphore_t* go;
} busy_t;

static hal_status_t busy_fn(void* user_data, hal_status_t status) {
  busy_t* busy = user_data;
  if (status != HAL_OK)
    return HAL_OK;
  hal_status_ignore(hal_semaphore_signal(busy->started, 1));
  hal_status_ignore(
      hal_semaphore_wait(busy->go, 1, hal_make_timeout_ns(300 * 1000 * 1000)));
  return HAL_OK;
}

CTS_CASE(S2_ReadyHostCallWithAFailedWaitIsNotCancelledAtRelease) {
  hal_device_t* device = cts_create_device(0);
  busy_t busy = {cts_create_semaphore(NULL, 0), cts_create_semaphore(NULL, 0)};
  hal_semaphore_t* reached = cts_create_semaphore(device, 0);
  hal_semaphore_t* done = cts_create_semaphore(device, 0);
  HAL_ASSERT_OK(
      hal_device_queue_host_call(device, 0, NULL, NULL, busy_fn, &busy));
  HAL_ASSERT_OK(cts_wait(busy.started, 1));
  record_t record = {0};
  HAL_ASSERT_OK(host_call(device, 0, reached, 1, done, 1, &record));
  HAL_ASSERT_OK(hal_semaphore_signal(reached, 1));  // ready, not started
  hal_semaphore_fail(reached, hal_make_status(HAL_STATUS_ABORTED,
                                              "failed after it was reached"));
  hal_device_release(device);
  assert_int_equal(atomic_load(&record.calls), 1);
  assert_int_equal(record.status, HAL_STATUS_ABORTED);
  HAL_ASSERT_STATUS(HAL_STATUS_ABORTED, "failed after it was reached",
                    cts_wait(done, 1));
  hal_semaphore_release(busy.started);
  hal_semaphore_release(busy.go);
  hal_semaphore_release(reached);
  hal_semaphore_release(done);
}

// A host call may drop the device's last reference from inside: no
// deadlock (the shutdown runs on libhal's release thread).
static hal_status_t release_device_fn(void* user_data, hal_status_t status) {
  hal_device_release(user_data);
  return HAL_OK;
}

// The call runs at once (no waits), so the shutdown may start while the
// submitting call is still inside hal_device_queue_host_call: repeated to
// make that race likely (a use after free of the executor under ASan/TSan).
CTS_CASE(HostCall_ReleasesTheLastDeviceReference) {
  uint32_t rounds = cts_iterations(20);
  for (uint32_t round = 0; round < rounds; ++round) {
    hal_device_t* device = cts_create_device(0);
    hal_semaphore_t* done = cts_create_semaphore(device, 0);
    uint64_t one = 1;
    hal_semaphore_list_t signals = {1, &done, &one};
    HAL_ASSERT_OK(hal_device_queue_host_call(device, 0, NULL, &signals,
                                             release_device_fn, device));
    HAL_ASSERT_OK(cts_wait(done, 1));
    hal_semaphore_release(done);
  }
}

// The same while the submitter is still registering: the first wait has
// failed, so the call runs (with the failure) and drops the device while
// hal_device_queue_host_call registers the 2000 waits after it.
CTS_CASE(HostCall_ReleasesTheDeviceWhileItsSubmitterRegisters) {
  enum { kWaits = 2001 };
  hal_semaphore_t** waits = calloc(kWaits, sizeof(*waits));
  uint64_t* values = calloc(kWaits, sizeof(*values));
  uint32_t rounds = cts_iterations(10);
  for (uint32_t round = 0; round < rounds; ++round) {
    hal_device_t* device = cts_create_device(0);
    hal_semaphore_t* failed = cts_create_semaphore(device, 0);
    hal_semaphore_t* reached = cts_create_semaphore(device, 1);
    hal_semaphore_t* done = cts_create_semaphore(device, 0);
    hal_semaphore_fail(failed,
                       hal_make_status(HAL_STATUS_ABORTED, "failed first"));
    waits[0] = failed;
    values[0] = 1;
    for (int i = 1; i < kWaits; ++i) {
      waits[i] = reached;
      values[i] = 1;
    }
    hal_semaphore_list_t wait_list = {kWaits, waits, values};
    uint64_t one = 1;
    hal_semaphore_list_t signals = {1, &done, &one};
    HAL_ASSERT_OK(hal_device_queue_host_call(device, 0, &wait_list, &signals,
                                             release_device_fn, device));
    HAL_ASSERT_STATUS(HAL_STATUS_ABORTED, "failed first", cts_wait(done, 1));
    hal_semaphore_release(failed);
    hal_semaphore_release(reached);
    hal_semaphore_release(done);
  }
  free(waits);
  free(values);
}

// A call that drops the device's last reference shuts its host calls down
// as a release from any other thread does (Q4): the calls ready behind it
// never start, each gets CANCELLED and its signal fails with it.
typedef struct release_after_go_t {
  hal_device_t* device;
  hal_semaphore_t* go;
} release_after_go_t;

static hal_status_t release_after_go_fn(void* user_data, hal_status_t status) {
  release_after_go_t* releaser = user_data;
  if (status == HAL_OK) {
    hal_status_ignore(
        hal_semaphore_wait(releaser->go, 1, hal_infinite_timeout()));
  }
  hal_device_release(releaser->device);
  return HAL_OK;
}

static void release_from_a_call_round(void) {
  enum { kReady = 8 };
  hal_device_t* device = cts_create_device(0);
  hal_semaphore_t* go = NULL;
  hal_semaphore_t* released = NULL;
  HAL_ASSERT_OK(hal_semaphore_create_host(hal_allocator_system(), 0, &go));
  HAL_ASSERT_OK(
      hal_semaphore_create_host(hal_allocator_system(), 0, &released));
  // The first call holds the device's thread until |go|, then releases:
  // the calls after it are ready by then, queued behind it.
  release_after_go_t releaser = {device, go};
  uint64_t one = 1;
  hal_semaphore_list_t released_list = {1, &released, &one};
  HAL_ASSERT_OK(hal_device_queue_host_call(device, 0, NULL, &released_list,
                                           release_after_go_fn, &releaser));
  record_t records[kReady];
  memset(records, 0, sizeof(records));
  hal_semaphore_t* signals[kReady];
  for (int i = 0; i < kReady; ++i) {
    HAL_ASSERT_OK(
        hal_semaphore_create_host(hal_allocator_system(), 0, &signals[i]));
    HAL_ASSERT_OK(host_call(device, 0, NULL, 0, signals[i], 1, &records[i]));
  }
  HAL_ASSERT_OK(hal_semaphore_signal(go, 1));
  HAL_ASSERT_OK(cts_wait(released, 1));
  for (int i = 0; i < kReady; ++i) {
    HAL_ASSERT_STATUS(HAL_STATUS_CANCELLED, "shut down",
                      cts_wait(signals[i], 1));
    assert_int_equal(atomic_load(&records[i].calls), 1);
    assert_int_equal(records[i].status, HAL_STATUS_CANCELLED);
    hal_semaphore_release(signals[i]);
  }
  hal_semaphore_release(released);
  hal_semaphore_release(go);
}

// Repeated: whether a ready call could start before the shutdown reached
// the thread is a race, which a single round may miss.
CTS_CASE(HostCall_ReleasedFromACallCancelsTheReadyCalls) {
  uint32_t rounds = cts_iterations(5);
  for (uint32_t round = 0; round < rounds; ++round)
    release_from_a_call_round();
}

// Many calls in a chain across both queues, each waiting for the one
// before: each runs once, in order.
typedef struct chain_link_t {
  atomic_int* counter;
  int index;
  int seen;
} chain_link_t;

static hal_status_t chain_fn(void* user_data, hal_status_t status) {
  chain_link_t* link = user_data;
  if (status == HAL_OK)
    link->seen = atomic_fetch_add(link->counter, 1);
  return HAL_OK;
}

CTS_CASE(HostCall_LongChainRunsInOrder) {
  fixture_t* f = *state;
  uint32_t count = cts_iterations(200);
  hal_semaphore_t* s = cts_create_semaphore(f->device, 0);
  chain_link_t* links = calloc(count, sizeof(*links));
  atomic_int counter = 0;
  // Submitted last to first: every call parks before its signaler exists.
  for (uint32_t i = count; i-- > 0;) {
    links[i] = (chain_link_t){&counter, (int)i, -1};
    uint64_t wait_value = i;
    uint64_t signal_value = (uint64_t)i + 1;
    hal_semaphore_list_t waits = {1, &s, &wait_value};
    hal_semaphore_list_t signals = {1, &s, &signal_value};
    HAL_ASSERT_OK(hal_device_queue_host_call(f->device, i % 2 ? f->q1 : f->q0,
                                             i ? &waits : NULL, &signals,
                                             chain_fn, &links[i]));
  }
  HAL_ASSERT_OK(cts_wait(s, count));
  for (uint32_t i = 0; i < count; ++i)
    assert_int_equal(links[i].seen, (int)i);
  free(links);
  hal_semaphore_release(s);
}

// Two host calls waiting for the same value run in the order they were
// submitted, though the second arrives while the signal that releases the
// first is still handing it over (a callback registered first holds that
// signal's batch open) and finds the value reached.
CTS_CASE(HostCall_SameWaitDuringItsReleaseRunsInOrder) {
  fixture_t* f = *state;
  hal_semaphore_t* gate = cts_create_semaphore(NULL, 0);
  hal_semaphore_t* done = cts_create_semaphore(f->device, 0);
  atomic_int next_place = 0;
  // chain_fn records each call's place in the order the calls ran.
  chain_link_t first = {&next_place, 0, -1}, second = {&next_place, 1, -1};
  cts_held_signal_t held;
  cts_held_signal_begin(&held, gate);
  uint64_t one = 1, two = 2;
  hal_semaphore_list_t waits = {1, &gate, &one};
  hal_semaphore_list_t first_signals = {1, &done, &one};
  hal_semaphore_list_t second_signals = {1, &done, &two};
  HAL_ASSERT_OK(hal_device_queue_host_call(f->device, f->q0, &waits,
                                           &first_signals, chain_fn, &first));
  cts_held_signal_start(&held);
  HAL_ASSERT_OK(hal_device_queue_host_call(f->device, f->q0, &waits,
                                           &second_signals, chain_fn, &second));
  HAL_ASSERT_OK(hal_semaphore_signal(gate, 2));
  // Time for a wrong order to show: the second already run.
  hal_sleep_until(hal_time_now() + 20 * 1000 * 1000);
  cts_held_signal_finish(&held);
  HAL_ASSERT_OK(cts_wait(done, 2));
  HAL_ASSERT_OK(cts_wait(done, 1));
  if (first.seen != 0 || second.seen != 1) {
    fail_msg("the host calls ran in places %d and %d, expected 0 and 1",
             first.seen, second.seen);
  }
  hal_semaphore_release(gate);
  hal_semaphore_release(done);
}

CTS_CASE(HostCall_BadArgumentsCallNothing) {
  fixture_t* f = *state;
  record_t record = {0};
  hal_semaphore_t* s = cts_create_semaphore(f->device, 0);
  uint32_t queues = hal_device_info(f->device)->queue_count;
  HAL_ASSERT_STATUS(HAL_STATUS_OUT_OF_RANGE, "queue index",
                    host_call(f->device, queues, NULL, 0, s, 1, &record));
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, "device is NULL",
                    host_call(NULL, 0, NULL, 0, s, 1, &record));
  HAL_ASSERT_STATUS(
      HAL_STATUS_INVALID_ARGUMENT, "function is NULL",
      hal_device_queue_host_call(f->device, 0, NULL, NULL, NULL, &record));
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, "failure range",
                    host_call(f->device, 0, s, HAL_SEMAPHORE_FAILURE_VALUE,
                              NULL, 0, &record));
  hal_semaphore_list_t broken = {1, NULL, NULL};
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, "NULL array",
                    hal_device_queue_host_call(f->device, 0, &broken, NULL,
                                               record_fn, &record));
  hal_semaphore_t* twice[2] = {s, s};
  uint64_t values[2] = {1, 2};
  hal_semaphore_list_t duplicated = {2, twice, values};
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, "twice",
                    hal_device_queue_host_call(f->device, 0, NULL, &duplicated,
                                               record_fn, &record));
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, "not a device",
                    host_call((hal_device_t*)s, 0, NULL, 0, NULL, 0, &record));
  assert_int_equal(atomic_load(&record.calls), 0);
  assert_int_equal(cts_query(s), 0);
  hal_semaphore_release(s);
}

//===----------------------------------------------------------------------===//
// fill / update / copy
//===----------------------------------------------------------------------===//

static hal_semaphore_list_t one_entry(hal_semaphore_t** semaphore,
                                      uint64_t* value) {
  hal_semaphore_list_t list = {*semaphore ? 1 : 0, semaphore, value};
  return list;
}

// A chain across both queues submitted back to front: fill a, update the
// middle of b, copy the head of a over b's head; b then reads
// [a's pattern][update][zeros].
CTS_CASE(QueueOps_FillUpdateCopyInOrder) {
  fixture_t* f = *state;
  hal_semaphore_t* s = cts_create_semaphore(f->device, 0);
  uint64_t v1 = 1, v2 = 2, v3 = 3;
  hal_semaphore_list_t wait1 = one_entry(&s, &v1);
  hal_semaphore_list_t wait2 = one_entry(&s, &v2);
  hal_semaphore_list_t signal1 = one_entry(&s, &v1);
  hal_semaphore_list_t signal2 = one_entry(&s, &v2);
  hal_semaphore_list_t signal3 = one_entry(&s, &v3);
  uint8_t update[100];
  for (int i = 0; i < 100; ++i)
    update[i] = (uint8_t)(0x80 + i);
  HAL_ASSERT_OK(hal_device_queue_copy(f->device, f->q0, &wait2, &signal3, f->a,
                                      0, f->b, 0, 64));
  HAL_ASSERT_OK(hal_device_queue_update(f->device, f->q1, &wait1, &signal2,
                                        update, 0, f->b, 64, 100));
  // The source is copied at the call: scribbling on it changes nothing.
  memset(update, 0xEE, sizeof(update));
  uint16_t pattern = 0x1234;
  HAL_ASSERT_OK(hal_device_queue_fill(f->device, f->q0, NULL, &signal1, f->a, 0,
                                      CTS_FIXTURE_BUFFER_SIZE, &pattern, 2));
  HAL_ASSERT_OK(cts_wait(s, 3));
  uint8_t bytes[256];
  HAL_ASSERT_OK(hal_buffer_read(f->b, 0, bytes, sizeof(bytes)));
  for (int i = 0; i < 64; ++i)
    assert_int_equal(bytes[i], i % 2 ? 0x12 : 0x34);
  for (int i = 0; i < 100; ++i)
    assert_int_equal(bytes[64 + i], (uint8_t)(0x80 + i));
  for (int i = 164; i < 256; ++i)
    assert_int_equal(bytes[i], 0);
  hal_semaphore_release(s);
}

// Bad ops are refused before anything is submitted: the signal semaphore
// never moves.
CTS_CASE(QueueOps_BadTransfersSubmitNothing) {
  fixture_t* f = *state;
  hal_semaphore_t* s = cts_create_semaphore(f->device, 0);
  uint64_t one = 1;
  hal_semaphore_list_t signal = one_entry(&s, &one);
  uint32_t pattern = 0;
  HAL_ASSERT_STATUS(
      HAL_STATUS_OUT_OF_RANGE, NULL,
      hal_device_queue_fill(f->device, 0, NULL, &signal, f->a,
                            CTS_FIXTURE_BUFFER_SIZE - 4, 8, &pattern, 4));
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, NULL,
                    hal_device_queue_fill(f->device, 0, NULL, &signal, f->a, 0,
                                          8, &pattern, 3));
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, NULL,
                    hal_device_queue_update(f->device, 0, NULL, &signal, NULL,
                                            0, f->a, 0, 8));
  // A source offset that wraps the host address space.
  uint8_t source[16] = {0};
  HAL_ASSERT_STATUS(HAL_STATUS_OUT_OF_RANGE, "wraps",
                    hal_device_queue_update(f->device, 0, NULL, &signal, source,
                                            SIZE_MAX - 4, f->a, 0, 16));
  HAL_ASSERT_STATUS(
      HAL_STATUS_INVALID_ARGUMENT, "overlap",
      hal_device_queue_copy(f->device, 0, NULL, &signal, f->a, 0, f->a, 4, 8));
  uint32_t queues = hal_device_info(f->device)->queue_count;
  HAL_ASSERT_STATUS(HAL_STATUS_OUT_OF_RANGE, "queue index",
                    hal_device_queue_copy(f->device, queues, NULL, &signal,
                                          f->a, 0, f->b, 0, 8));
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, "not a buffer",
                    hal_device_queue_copy(f->device, 0, NULL, &signal,
                                          (hal_buffer_t*)s, 0, f->b, 0, 8));
  assert_int_equal(cts_query(s), 0);
  cts_expect_bytes(f->a, 0, CTS_FIXTURE_BUFFER_SIZE, 0);
  hal_semaphore_release(s);
}

// The test list: CASE binds this program's fixture.
#define CASE(name) CTS_ON_FIXTURE(name)

int main(void) {
  const struct CMUnitTest tests[] = {
      CASE(QueueOps_FillUpdateCopyInOrder),
      CASE(QueueOps_BadTransfersSubmitNothing),
      CASE(HostCall_RunsAfterWaitsBeforeSignals),
      CASE(HostCall_OrderedWithDeviceWork),
      CASE(HostCall_FailureFailsSignalsAndDownstream),
      CASE(S2_HostCallFailedWaitNeverRuns),
      CASE(S2_HostCallReachedWaitThatFailsDecidesItAtOnce),
      CASE(S2_HostCallWaitFailingAsItsLastWaitIsReachedDecidesItOnce),
      CASE(S2_WaitFailingWhileTheHostCallRunsChangesNothing),
      CASE(HostCall_ReEntersTheHal),
      CASE(Q4_HostCallsWaitingAreCancelledAtRelease),
      CASE(Q4_ReleaseWhileAHostCallWaitsForParkedWork),
      CASE(HostCall_WaitsForDeferredDestructionsAsItsDeviceShutsDown),
      CASE(S2_HostCallWithAFailedWaitIsNotCancelledAtRelease),
      CASE(S2_ReadyHostCallWithAFailedWaitIsNotCancelledAtRelease),
      CASE(HostCall_ReleasesTheLastDeviceReference),
      CASE(HostCall_ReleasesTheDeviceWhileItsSubmitterRegisters),
      CASE(HostCall_ReleasedFromACallCancelsTheReadyCalls),
      CASE(HostCall_LongChainRunsInOrder),
      CASE(HostCall_SameWaitDuringItsReleaseRunsInOrder),
      CASE(HostCall_BadArgumentsCallNothing),
  };
  return cts_main("queue_ops", tests, HAL_ARRAYSIZE(tests));
}
