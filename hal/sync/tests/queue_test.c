// Copyright 2026 The HAL Authors.
//
// The deferred queue over the fake device: S2, S4, S6, T4, Q2-Q5 and the
// regressions K2, K3, K4, K7, K10; a random submission DAG over several
// queues checked against a host reference model.

#include "fake_device.h"
#include "hal_test.h"
#include "queue_impl.h"

// A payload that records that it ran and checks, when it runs, that the
// writes of the work it waits on are visible (S6).
typedef struct test_payload_t {
  fake_payload_t base;
  _Atomic int* ran;       // incremented once when run
  _Atomic int* released;  // incremented once when released
  // Cells written once each: (*write_cell) = 1 when run.
  int* write_cell;
  int** read_cells;  // must all be 1 when run
  size_t read_count;
  // When set, releasing a payload that never ran is a Q3 violation (the
  // device would still have used it).
  bool must_run_before_release;
  // A long-running "kernel": the run sleeps this long first.
  int64_t run_delay_ns;
} test_payload_t;

static void test_payload_run(fake_payload_t* base) {
  test_payload_t* payload = (test_payload_t*)base;
  if (payload->run_delay_ns > 0) {
    hal_sleep_until(hal_time_now() + payload->run_delay_ns);
  }
  for (size_t i = 0; i < payload->read_count; ++i) {
    HAL_THREAD_CHECK(*payload->read_cells[i] == 1,
                     "work ran before the work it waits on (S6)");
  }
  if (payload->write_cell)
    *payload->write_cell = 1;
  if (payload->ran)
    atomic_fetch_add(payload->ran, 1);
}

static void test_payload_release(fake_payload_t* base) {
  test_payload_t* payload = (test_payload_t*)base;
  if (payload->must_run_before_release && payload->ran) {
    HAL_THREAD_CHECK(atomic_load(payload->ran) == 1,
                     "payload released before the device ran it (Q3)");
  }
  if (payload->released)
    atomic_fetch_add(payload->released, 1);
  free(payload->read_cells);
  free(payload);
}

static test_payload_t* test_payload_new(_Atomic int* ran,
                                        _Atomic int* released) {
  test_payload_t* payload = calloc(1, sizeof(*payload));
  if (!payload)
    abort();
  payload->base.run = test_payload_run;
  payload->base.release = test_payload_release;
  payload->ran = ran;
  payload->released = released;
  return payload;
}

static hal_semaphore_list_t one(hal_semaphore_t** semaphore, uint64_t* value) {
  hal_semaphore_list_t list = {1, semaphore, value};
  return list;
}

static void submit_one(fake_stream_t* stream, hal_semaphore_t* wait,
                       uint64_t wait_value, hal_semaphore_t* signal,
                       uint64_t signal_value, test_payload_t* payload) {
  hal_semaphore_list_t waits = hal_semaphore_list_empty();
  hal_semaphore_list_t signals = hal_semaphore_list_empty();
  if (wait)
    waits = one(&wait, &wait_value);
  if (signal)
    signals = one(&signal, &signal_value);
  HAL_ASSERT_OK(hal_sync_queue_submit(fake_stream_queue(stream), waits, signals,
                                      payload));
}

//===----------------------------------------------------------------------===//
// Basics
//===----------------------------------------------------------------------===//

static void Q_SubmitAndSignal(void** state) {
  uint64_t seed = hal_test_seed("Q_SubmitAndSignal");
  fake_device_t device;
  fake_device_initialize(200000, &device);
  fake_stream_t* stream = fake_stream_create(&device, "q0", seed);
  hal_semaphore_t* semaphore = hal_test_semaphore(0);
  _Atomic int ran = 0, released = 0;
  submit_one(stream, NULL, 0, semaphore, 1, test_payload_new(&ran, &released));
  // No payload at all (no command buffers) still signals.
  submit_one(stream, semaphore, 1, semaphore, 2, NULL);
  HAL_ASSERT_OK(
      hal_semaphore_wait(semaphore, 2, hal_make_timeout_ns(30000 * HAL_MS)));
  assert_int_equal(atomic_load(&ran), 1);
  fake_stream_destroy(stream);
  assert_int_equal(atomic_load(&released), 1);
  hal_test_assert_no_thread_failures();
  hal_semaphore_release(semaphore);
  fake_device_deinitialize(&device);
}

// One fake device, one queue on it and a host semaphore at 0: the setup of
// the single-queue cases.
typedef struct one_queue_t {
  fake_device_t device;
  fake_stream_t* stream;
  hal_sync_queue_t* queue;
  hal_semaphore_t* semaphore;
} one_queue_t;

static void one_queue_open(one_queue_t* q) {
  fake_device_initialize(0, &q->device);
  q->stream = fake_stream_create(&q->device, "q0", 1);
  q->queue = fake_stream_queue(q->stream);
  q->semaphore = hal_test_semaphore(0);
}

// A warm queue takes small submissions' blocks from its cache: after the
// first ones, hundreds more submissions allocate no new block, and a
// submission with more waits than a block holds still works (allocated
// alone).
static void Queue_WarmSubmissionsReuseTheirBlocks(void** state) {
  one_queue_t q;
  one_queue_open(&q);
  hal_sync_queue_t* queue = q.queue;
  hal_semaphore_t* semaphore = q.semaphore;
  uint64_t value = 0;
  for (int round = 0; round < 2; ++round) {
    size_t before =
        hal_sync_pool_stats(&queue->submission_cache->pool).allocated_count;
    for (int i = 0; i < 300; ++i) {
      submit_one(q.stream, value ? semaphore : NULL, value, semaphore,
                 value + 1, NULL);
      ++value;
      HAL_ASSERT_OK(hal_semaphore_wait(semaphore, value,
                                       hal_make_timeout_ns(30000 * HAL_MS)));
    }
    size_t after =
        hal_sync_pool_stats(&queue->submission_cache->pool).allocated_count;
    // Warm: blocks come back as submissions retire. A retirement that
    // lags the wait may need one or two more; never one per submission.
    if (round == 1 && after > before + 2) {
      HAL_TEST_FAIL("300 warm submissions allocated %zu new blocks",
                    after - before);
    }
  }
  hal_semaphore_t* many[HAL_SYNC_SUBMISSION_CACHED_WAITS + 1];
  uint64_t values[HAL_SYNC_SUBMISSION_CACHED_WAITS + 1];
  for (size_t i = 0; i < HAL_ARRAYSIZE(many); ++i) {
    many[i] = semaphore;
    values[i] = value;
  }
  hal_semaphore_list_t waits = {HAL_ARRAYSIZE(many), many, values};
  uint64_t next = value + 1;
  hal_semaphore_list_t signals = {1, &semaphore, &next};
  HAL_ASSERT_OK(hal_sync_queue_submit(queue, waits, signals, NULL));
  HAL_ASSERT_OK(
      hal_semaphore_wait(semaphore, next, hal_make_timeout_ns(30000 * HAL_MS)));
  fake_stream_destroy(q.stream);
  hal_semaphore_release(semaphore);
  fake_device_deinitialize(&q.device);
}

// Thread names fit the kernel's 15 characters and keep what tells queues
// apart: the end of the queue's name, where device and queue indices are.
static void Queue_ThreadNamesTellQueuesApart(void** state) {
  fake_device_t device;
  fake_device_initialize(0, &device);
  fake_stream_t* streams[2] = {
      fake_stream_create(&device, "cuda_stream:0:q1", 1),
      fake_stream_create(&device, "cuda_stream:1:q1", 1)};
  char names[4][16];
  for (int i = 0; i < 2; ++i) {
    hal_sync_queue_t* queue = fake_stream_queue(streams[i]);
    assert_int_equal(pthread_getname_np(queue->worker_thread, names[2 * i], 16),
                     0);
    assert_int_equal(
        pthread_getname_np(queue->completion_thread, names[2 * i + 1], 16), 0);
  }
  assert_string_equal(names[0], "w-a_stream:0:q1");
  assert_string_equal(names[1], "c-a_stream:0:q1");
  assert_string_equal(names[2], "w-a_stream:1:q1");
  assert_string_equal(names[3], "c-a_stream:1:q1");
  fake_stream_destroy(streams[0]);
  fake_stream_destroy(streams[1]);
  fake_device_deinitialize(&device);
}

// A burst's events do not stay pooled for the device's life: once a queue
// of the pool has done all its work, idle events above the pool's bound
// (8 for the fake device) are destroyed.
static void EventPool_BurstTrimmedWhenQueueIdles(void** state) {
  fake_device_t device;
  fake_device_initialize(0, &device);
  hal_sync_native_event_t* events[32];
  for (int i = 0; i < 32; ++i)
    HAL_ASSERT_OK(hal_sync_event_pool_acquire(device.event_pool, &events[i]));
  for (int i = 0; i < 32; ++i)
    hal_sync_native_event_release(events[i]);
  // Released under no lock here, but a release never destroys: all idle.
  assert_int_equal(hal_sync_event_pool_free_count(device.event_pool), 32);
  fake_stream_t* stream = fake_stream_create(&device, "q0", 1);
  hal_semaphore_t* semaphore = hal_test_semaphore(0);
  submit_one(stream, NULL, 0, semaphore, 1, NULL);
  HAL_ASSERT_OK(
      hal_semaphore_wait(semaphore, 1, hal_make_timeout_ns(30000 * HAL_MS)));
  // The completion thread trims once the queue is idle; give it time.
  hal_time_t deadline = hal_time_now() + 30000 * HAL_MS;
  while (hal_sync_event_pool_free_count(device.event_pool) > 8 &&
         hal_time_now() < deadline) {
    hal_sleep_until(hal_time_now() + HAL_MS);
  }
  assert_true(hal_sync_event_pool_free_count(device.event_pool) <= 8);
  fake_stream_destroy(stream);
  hal_semaphore_release(semaphore);
  hal_test_assert_no_thread_failures();
  fake_device_deinitialize(&device);
}

static void Q_BadSubmissions(void** state) {
  one_queue_t q;
  one_queue_open(&q);
  hal_sync_queue_t* queue = q.queue;
  hal_semaphore_t* semaphore = q.semaphore;
  hal_semaphore_t* twice[2] = {semaphore, semaphore};
  uint64_t values[2] = {1, 2};
  hal_semaphore_list_t empty = hal_semaphore_list_empty();
  hal_semaphore_list_t duplicate = {2, twice, values};
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, "twice",
                    hal_sync_queue_submit(queue, empty, duplicate, NULL));
  hal_semaphore_list_t null_array = {1, NULL, values};
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, "NULL array",
                    hal_sync_queue_submit(queue, null_array, empty, NULL));
  uint64_t bad_value = HAL_SEMAPHORE_FAILURE_VALUE;
  HAL_ASSERT_STATUS(
      HAL_STATUS_INVALID_ARGUMENT, "failure range",
      hal_sync_queue_submit(queue, one(&semaphore, &bad_value), empty, NULL));
  // A wait list may name a semaphore twice (independent conditions).
  HAL_ASSERT_OK(hal_sync_queue_submit(queue, duplicate,
                                      one(&semaphore, &values[0]), NULL));
  fake_stream_destroy(q.stream);  // parked on itself: cancelled
  uint64_t value = 0;
  HAL_ASSERT_STATUS(HAL_STATUS_CANCELLED, NULL,
                    hal_semaphore_query(semaphore, &value));
  hal_semaphore_release(semaphore);
  fake_device_deinitialize(&q.device);
}

// S4 + K4: the waiter is submitted before its signaler, on another queue,
// and must observe the signaler's writes. Also T4: device waits only on
// recorded events.
static void K4_WaitBeforeSignalAcrossQueues(void** state) {
  uint64_t seed = hal_test_seed("K4_WaitBeforeSignalAcrossQueues");
  fake_device_t device;
  fake_device_initialize(100000, &device);
  fake_stream_t* streams[2] = {fake_stream_create(&device, "q0", seed),
                               fake_stream_create(&device, "q1", seed + 1)};
  uint64_t rounds = hal_test_iterations(50);
  for (uint64_t round = 0; round < rounds; ++round) {
    hal_semaphore_t* s = hal_test_semaphore(0);
    hal_semaphore_t* done = hal_test_semaphore(0);
    int cell = 0;
    test_payload_t* waiter = test_payload_new(NULL, NULL);
    waiter->read_cells = malloc(sizeof(int*));
    waiter->read_cells[0] = &cell;
    waiter->read_count = 1;
    submit_one(streams[0], s, 1, done, 1, waiter);
    test_payload_t* signaler = test_payload_new(NULL, NULL);
    signaler->write_cell = &cell;
    submit_one(streams[1], NULL, 0, s, 1, signaler);
    HAL_ASSERT_OK(
        hal_semaphore_wait(done, 1, hal_make_timeout_ns(30000 * HAL_MS)));
    hal_semaphore_release(s);
    hal_semaphore_release(done);
  }
  fake_stream_destroy(streams[0]);
  fake_stream_destroy(streams[1]);
  assert_int_equal(atomic_load(&device.t4_violations), 0);
  hal_test_assert_no_thread_failures();
  fake_device_deinitialize(&device);
}

// A payload that blocks its stream until the test opens the gate.
typedef struct gate_payload_t {
  test_payload_t base;
  pthread_mutex_t mutex;
  pthread_cond_t cond;
  bool open;
} gate_payload_t;

static void gate_payload_run(fake_payload_t* base) {
  gate_payload_t* gate = (gate_payload_t*)base;
  pthread_mutex_lock(&gate->mutex);
  while (!gate->open)
    pthread_cond_wait(&gate->cond, &gate->mutex);
  pthread_mutex_unlock(&gate->mutex);
  test_payload_run(base);
}

static void gate_payload_release(fake_payload_t* base) {
  gate_payload_t* gate = (gate_payload_t*)base;
  pthread_cond_destroy(&gate->cond);
  pthread_mutex_destroy(&gate->mutex);
  free(gate);
}

// A closed gate whose run writes |*write_cell| once opened.
static gate_payload_t* gate_payload_new(int* write_cell) {
  gate_payload_t* gate = calloc(1, sizeof(*gate));
  if (!gate)
    abort();
  gate->base.base.run = gate_payload_run;
  gate->base.base.release = gate_payload_release;
  gate->base.write_cell = write_cell;
  pthread_mutex_init(&gate->mutex, NULL);
  pthread_cond_init(&gate->cond, NULL);
  return gate;
}

static void gate_payload_open(gate_payload_t* gate) {
  pthread_mutex_lock(&gate->mutex);
  gate->open = true;
  pthread_cond_broadcast(&gate->cond);
  pthread_mutex_unlock(&gate->mutex);
}

// T4: a waiter submitted after its signaler was issued (but before it
// completed) waits on the device through the recorded event.
static void T4_RecordedEventUsedForDeviceWait(void** state) {
  uint64_t seed = hal_test_seed("T4_RecordedEventUsedForDeviceWait");
  fake_device_t device;
  fake_device_initialize(0, &device);
  fake_stream_t* streams[2] = {fake_stream_create(&device, "q0", seed),
                               fake_stream_create(&device, "q1", seed + 1)};
  hal_semaphore_t* s = hal_test_semaphore(0);
  hal_semaphore_t* done = hal_test_semaphore(0);
  hal_semaphore_t* issued = hal_test_semaphore(0);
  int cell = 0;
  gate_payload_t* signaler = gate_payload_new(&cell);
  // The signaler (gated) issues, records, and then a marker submission on
  // the same queue that only waits on nothing tells us it was issued.
  submit_one(streams[0], NULL, 0, s, 1, &signaler->base);
  submit_one(streams[0], NULL, 0, issued, 1, NULL);
  // The marker's own device timepoint proves the worker got past both.
  for (int i = 0; i < 30000; ++i) {
    uint64_t count = hal_sync_event_pool_live_count(device.event_pool);
    if (count >= 2)
      break;
    hal_test_sleep_ns(100000);
  }
  test_payload_t* waiter = test_payload_new(NULL, NULL);
  waiter->read_cells = malloc(sizeof(int*));
  waiter->read_cells[0] = &cell;
  waiter->read_count = 1;
  submit_one(streams[1], s, 1, done, 1, waiter);
  gate_payload_open(signaler);
  HAL_ASSERT_OK(
      hal_semaphore_wait(done, 1, hal_make_timeout_ns(30000 * HAL_MS)));
  // The waiter was submitted while the signaler's event was recorded and
  // not complete: it waited on the device, not on the host.
  assert_int_equal(atomic_load(&device.device_waits), 1);
  hal_semaphore_release(issued);
  fake_stream_destroy(streams[0]);
  fake_stream_destroy(streams[1]);
  hal_semaphore_release(s);
  hal_semaphore_release(done);
  assert_int_equal(atomic_load(&device.t4_violations), 0);
  hal_test_assert_no_thread_failures();
  fake_device_deinitialize(&device);
}

// Q3: the payload is released before the signals are published, so a
// waiter they wake finds everything the payload held free to reuse (a
// command buffer to re-record, a buffer to free) at once: on success, on a
// failed issue, and when a failed wait means the work never runs.
static void Q3_PayloadReleasedBeforeSignals(void** state) {
  uint64_t seed = hal_test_seed("Q3_PayloadReleasedBeforeSignals");
  fake_device_t device;
  fake_device_initialize(20000, &device);
  fake_stream_t* stream = fake_stream_create(&device, "q0", seed);
  const uint32_t iterations = (uint32_t)hal_test_iterations(200);
  for (uint32_t i = 0; i < iterations; ++i) {
    hal_semaphore_t* signal = hal_test_semaphore(0);
    hal_semaphore_t* wait = hal_test_semaphore(0);
    _Atomic int released = 0;
    test_payload_t* payload = test_payload_new(NULL, &released);
    int kind = (int)(i % 3);  // 0: runs, 1: issue fails, 2: wait fails
    payload->base.fail_issue = kind == 1;
    submit_one(stream, kind == 2 ? wait : NULL, 1, signal, 1, payload);
    if (kind == 2) {
      hal_semaphore_fail(wait, hal_make_status(HAL_STATUS_ABORTED, "no"));
    }
    hal_status_t status =
        hal_semaphore_wait(signal, 1, hal_make_timeout_ns(30000 * HAL_MS));
    if ((status == HAL_OK) != (kind == 0)) {
      HAL_TEST_FAIL("iteration %u (kind %d): wait returned %s", i, kind,
                    hal_status_message(status));
    }
    hal_status_free(status);
    if (atomic_load(&released) != 1) {
      HAL_TEST_FAIL(
          "iteration %u (kind %d): payload not yet released when "
          "its signal was observed",
          i, kind);
    }
    hal_semaphore_release(signal);
    hal_semaphore_release(wait);
  }
  fake_stream_destroy(stream);
  hal_test_assert_no_thread_failures();
  fake_device_deinitialize(&device);
}

//===----------------------------------------------------------------------===//
// Failure
//===----------------------------------------------------------------------===//

typedef struct loss_waiter_t {
  hal_semaphore_t* semaphore;
  hal_status_code_t code;  // the wait's result
} loss_waiter_t;

static void* loss_waiter_main(void* arg) {
  loss_waiter_t* waiter = (loss_waiter_t*)arg;
  waiter->code = hal_status_consume_code(hal_semaphore_wait(
      waiter->semaphore, 1, hal_make_timeout_ns(30000 * HAL_MS)));
  return NULL;
}

// K14 (Q5): once a device's loss domain fails, a wait on an idle semaphore
// of the device and a wait on a (host) semaphore whose signaler is parked
// on the device's queue, waiting for something that never comes, both
// return the loss at once, whether they began before or after it; later
// semaphores of the device are born failed, and the queue refuses work.
static void K14_LossFailsIdleAndParkedSemaphores(void** state) {
  uint64_t seed = hal_test_seed("K14_LossFailsIdleAndParkedSemaphores");
  fake_device_t device;
  fake_device_initialize(1000, &device);
  hal_sync_loss_domain_t* domain = NULL;
  HAL_ASSERT_OK(hal_sync_loss_domain_create(&domain));
  // A second queue on the same device, made with the domain.
  fake_stream_t* stream = fake_stream_create(&device, "q0", seed);
  hal_semaphore_t* idle = NULL;
  HAL_ASSERT_OK(
      hal_sync_semaphore_create(domain, hal_allocator_system(), 0, &idle));
  hal_semaphore_t* never = hal_test_semaphore(0);  // nobody signals it
  hal_semaphore_t* parked_signal = hal_test_semaphore(0);
  fake_stream_t* lossy =
      fake_stream_create_in_domain(&device, "q1", seed + 1, domain);
  _Atomic int ran = 0, released = 0;
  submit_one(lossy, never, 1, parked_signal, 1,
             test_payload_new(&ran, &released));
  loss_waiter_t before[2] = {{idle, HAL_STATUS_OK},
                             {parked_signal, HAL_STATUS_OK}};
  pthread_t threads[2];
  for (int i = 0; i < 2; ++i)
    hal_test_thread_create(&threads[i], loss_waiter_main, &before[i]);
  hal_test_sleep_ns(2 * HAL_MS);
  assert_true(hal_sync_loss_domain_fail(
      domain, hal_make_status(HAL_STATUS_DEVICE_LOST, "fake device fell off")));
  assert_false(hal_sync_loss_domain_fail(
      domain, hal_make_status(HAL_STATUS_DEVICE_LOST, "second loss")));
  for (int i = 0; i < 2; ++i) {
    pthread_join(threads[i], NULL);
    assert_int_equal(before[i].code, HAL_STATUS_DEVICE_LOST);
  }
  // After the loss: the same answers at once, and the first loss is kept.
  HAL_ASSERT_STATUS(HAL_STATUS_DEVICE_LOST, "fake device fell off",
                    hal_semaphore_wait(idle, 1, hal_infinite_timeout()));
  HAL_ASSERT_STATUS(
      HAL_STATUS_DEVICE_LOST, "fake device fell off",
      hal_semaphore_wait(parked_signal, 1, hal_infinite_timeout()));
  hal_semaphore_t* born = NULL;
  HAL_ASSERT_OK(
      hal_sync_semaphore_create(domain, hal_allocator_system(), 0, &born));
  HAL_ASSERT_STATUS(HAL_STATUS_DEVICE_LOST, "fake device fell off",
                    hal_semaphore_wait(born, 1, hal_immediate_timeout()));
  hal_semaphore_t* refused_signal = hal_test_semaphore(0);
  uint64_t one = 1;
  HAL_ASSERT_STATUS(
      HAL_STATUS_DEVICE_LOST, "lost device",
      hal_sync_queue_submit(
          fake_stream_queue(lossy), hal_semaphore_list_empty(),
          (hal_semaphore_list_t){1, &refused_signal, &one}, NULL));
  // A queue outside the domain is unaffected.
  hal_semaphore_t* ok = hal_test_semaphore(0);
  submit_one(stream, NULL, 0, ok, 1, NULL);
  HAL_ASSERT_OK(hal_semaphore_wait(ok, 1, hal_make_timeout_ns(30000 * HAL_MS)));
  fake_stream_destroy(lossy);
  fake_stream_destroy(stream);
  assert_int_equal(atomic_load(&ran), 0);  // the parked work never ran
  assert_int_equal(atomic_load(&released), 1);
  hal_semaphore_release(ok);
  hal_semaphore_release(refused_signal);
  hal_semaphore_release(born);
  hal_semaphore_release(idle);
  hal_semaphore_release(never);
  hal_semaphore_release(parked_signal);
  hal_sync_loss_domain_release(domain);
  hal_test_assert_no_thread_failures();
  fake_device_deinitialize(&device);
}

// Whatever learns of a loss first, the callback of one of the device's
// semaphores or one on the signal of its parked work, finds every semaphore
// of the device failed already.
enum { kLossMembers = 4 };
typedef struct loss_observer_t {
  hal_semaphore_t* members[kLossMembers];
  _Atomic int calls;
  _Atomic int saw_unfailed;  // calls that found a member not failed yet
} loss_observer_t;

static void loss_observer_fn(void* user_data, uint64_t value,
                             hal_status_t status) {
  loss_observer_t* observer = user_data;
  for (int i = 0; i < kLossMembers; ++i) {
    uint64_t member_value = 0;
    hal_status_t member =
        hal_semaphore_query(observer->members[i], &member_value);
    if (hal_status_consume_code(member) != HAL_STATUS_DEVICE_LOST)
      atomic_fetch_add(&observer->saw_unfailed, 1);
  }
  atomic_fetch_add(&observer->calls, 1);
}

static void K14_LossFailsEverySemaphoreBeforeAnyoneLearnsOfIt(void** state) {
  uint64_t seed =
      hal_test_seed("K14_LossFailsEverySemaphoreBeforeAnyoneLearnsOfIt");
  fake_device_t device;
  fake_device_initialize(1000, &device);
  hal_sync_loss_domain_t* domain = NULL;
  HAL_ASSERT_OK(hal_sync_loss_domain_create(&domain));
  loss_observer_t observer = {{NULL}, 0, 0};
  hal_timepoint_t* handles[kLossMembers + 1] = {NULL};
  for (int i = 0; i < kLossMembers; ++i) {
    HAL_ASSERT_OK(hal_sync_semaphore_create(domain, hal_allocator_system(), 0,
                                            &observer.members[i]));
  }
  for (int i = 0; i < kLossMembers; ++i) {
    HAL_ASSERT_OK(hal_semaphore_add_callback(
        observer.members[i], 1, loss_observer_fn, &observer, &handles[i]));
  }
  // Parked work of the device, signaling a semaphore of its own (a host
  // one): the loss fails it, and its signal's callback learns of the loss.
  hal_semaphore_t* never = hal_test_semaphore(0);
  hal_semaphore_t* parked_signal = hal_test_semaphore(0);
  HAL_ASSERT_OK(hal_semaphore_add_callback(parked_signal, 1, loss_observer_fn,
                                           &observer, &handles[kLossMembers]));
  fake_stream_t* lossy =
      fake_stream_create_in_domain(&device, "q0", seed, domain);
  _Atomic int ran = 0, released = 0;
  submit_one(lossy, never, 1, parked_signal, 1,
             test_payload_new(&ran, &released));
  assert_true(hal_sync_loss_domain_fail(
      domain, hal_make_status(HAL_STATUS_DEVICE_LOST, "fake device fell off")));
  // The parked work may fail on its queue's thread: wait for its callback.
  hal_time_t deadline = hal_time_now() + 30000 * HAL_MS;
  while (atomic_load(&observer.calls) < kLossMembers + 1 &&
         hal_time_now() < deadline) {
    hal_test_sleep_ns(HAL_MS);
  }
  assert_int_equal(atomic_load(&observer.calls), kLossMembers + 1);
  assert_int_equal(atomic_load(&observer.saw_unfailed), 0);
  fake_stream_destroy(lossy);
  assert_int_equal(atomic_load(&ran), 0);
  for (int i = 0; i <= kLossMembers; ++i)
    hal_timepoint_release(handles[i]);
  for (int i = 0; i < kLossMembers; ++i)
    hal_semaphore_release(observer.members[i]);
  hal_semaphore_release(never);
  hal_semaphore_release(parked_signal);
  hal_sync_loss_domain_release(domain);
  hal_test_assert_no_thread_failures();
  fake_device_deinitialize(&device);
}

typedef struct loss_churn_t {
  hal_sync_loss_domain_t* domain;
  _Atomic bool stop;
  _Atomic int created;
} loss_churn_t;

static void* loss_churn_main(void* arg) {
  loss_churn_t* churn = (loss_churn_t*)arg;
  while (!atomic_load(&churn->stop)) {
    hal_semaphore_t* semaphore = NULL;
    hal_status_t status = hal_sync_semaphore_create(
        churn->domain, hal_allocator_system(), 0, &semaphore);
    HAL_THREAD_CHECK(status == HAL_OK, "create failed");
    hal_status_free(status);
    hal_semaphore_release(semaphore);
    atomic_fetch_add(&churn->created, 1);
  }
  return NULL;
}

// K14 under churn: semaphores of the domain created and destroyed while it
// fails (a loss must skip one whose destroy has begun, and never touch one
// freed: ASan, TSan); every semaphore alive across the loss fails.
static void K14_LossRacesSemaphoreChurn(void** state) {
  uint64_t seed = hal_test_seed("K14_LossRacesSemaphoreChurn");
  (void)seed;
  const uint32_t rounds = (uint32_t)hal_test_iterations(20);
  for (uint32_t round = 0; round < rounds; ++round) {
    loss_churn_t churn = {NULL, false, 0};
    HAL_ASSERT_OK(hal_sync_loss_domain_create(&churn.domain));
    hal_semaphore_t* kept = NULL;
    HAL_ASSERT_OK(hal_sync_semaphore_create(churn.domain,
                                            hal_allocator_system(), 0, &kept));
    pthread_t threads[2];
    for (int i = 0; i < 2; ++i)
      hal_test_thread_create(&threads[i], loss_churn_main, &churn);
    while (atomic_load(&churn.created) < 50)
      hal_test_sleep_ns(100000);
    hal_sync_loss_domain_fail(
        churn.domain, hal_make_status(HAL_STATUS_DEVICE_LOST, "churned"));
    atomic_store(&churn.stop, true);
    for (int i = 0; i < 2; ++i)
      pthread_join(threads[i], NULL);
    HAL_ASSERT_STATUS(HAL_STATUS_DEVICE_LOST, "churned",
                      hal_semaphore_wait(kept, 1, hal_immediate_timeout()));
    hal_semaphore_release(kept);
    hal_sync_loss_domain_release(churn.domain);
  }
  hal_test_assert_no_thread_failures();
}

// K13 (K10, S2 through a device wait): Y waits on X's signal through X's
// recorded event (a device wait, asserted), then X fails: its event
// synchronize reports a device error, or the host fails X's semaphore while
// X runs. Y ran on the device after X, but its signal must fail naming the
// cause, and so must Z, which waits on Y.
static void run_k13(uint64_t seed, bool host_fail) {
  fake_device_t device;
  fake_device_initialize(0, &device);
  fake_stream_t* streams[2] = {fake_stream_create(&device, "q0", seed),
                               fake_stream_create(&device, "q1", seed + 1)};
  hal_semaphore_t* s = hal_test_semaphore(0);
  hal_semaphore_t* done = hal_test_semaphore(0);
  hal_semaphore_t* after = hal_test_semaphore(0);
  int cell = 0;
  gate_payload_t* signaler = gate_payload_new(&cell);
  if (!host_fail)
    fake_stream_fail_next_synchronize(streams[0]);
  submit_one(streams[0], NULL, 0, s, 1, &signaler->base);
  // A marker behind X on the same worker: once it holds an event, X's
  // event was recorded (T4), so Y will wait for it on the device.
  submit_one(streams[0], NULL, 0, NULL, 0, NULL);
  for (int i = 0;
       i < 30000 && hal_sync_event_pool_live_count(device.event_pool) < 2;
       ++i) {
    hal_test_sleep_ns(100000);
  }
  _Atomic int ran = 0;
  test_payload_t* waiter = test_payload_new(&ran, NULL);
  submit_one(streams[1], s, 1, done, 1, waiter);
  for (int i = 0; i < 30000 && atomic_load(&device.device_waits) < 1; ++i) {
    hal_test_sleep_ns(100000);
  }
  assert_int_equal(atomic_load(&device.device_waits), 1);
  submit_one(streams[0], done, 1, after, 1, test_payload_new(NULL, NULL));
  if (host_fail) {
    hal_semaphore_fail(s, hal_make_status(HAL_STATUS_ABORTED, "host gave up"));
  }
  gate_payload_open(signaler);
  const char* cause = host_fail ? "host gave up" : "fakeEventSynchronize";
  hal_status_code_t code = host_fail ? HAL_STATUS_ABORTED : HAL_STATUS_INTERNAL;
  HAL_ASSERT_STATUS(
      code, cause,
      hal_semaphore_wait(done, 1, hal_make_timeout_ns(30000 * HAL_MS)));
  HAL_ASSERT_STATUS(
      code, cause,
      hal_semaphore_wait(after, 1, hal_make_timeout_ns(30000 * HAL_MS)));
  fake_stream_destroy(streams[0]);
  fake_stream_destroy(streams[1]);
  // Y was issued before X failed: it ran, on the device, after X.
  assert_int_equal(atomic_load(&ran), 1);
  hal_semaphore_release(s);
  hal_semaphore_release(done);
  hal_semaphore_release(after);
  assert_int_equal(atomic_load(&device.t4_violations), 0);
  hal_test_assert_no_thread_failures();
  fake_device_deinitialize(&device);
}

static void K13_DeviceWaitOnSignalerThatFailsAtSynchronize(void** state) {
  run_k13(hal_test_seed("K13_DeviceWaitOnSignalerThatFailsAtSynchronize"),
          false);
}

static void K13_DeviceWaitOnSemaphoreFailedByHost(void** state) {
  run_k13(hal_test_seed("K13_DeviceWaitOnSemaphoreFailedByHost"), true);
}

// Q5 + K10: a vendor error mid-chain fails every downstream semaphore with a
// status naming the call; the queue keeps working for independent work.
// The completion event's record fails after the payload was issued: the
// signals fail naming the call; destroying the queue neither hangs (the
// orphan must wake a teardown waiting for it) nor releases the payload
// before the device ran it (quiesce comes first).
static void Q_RecordFailureOrphanedUntilQuiesced(void** state) {
  uint64_t seed = hal_test_seed("Q_RecordFailureOrphanedUntilQuiesced");
  fake_device_t device;
  fake_device_initialize(1000, &device);
  fake_stream_t* stream = fake_stream_create(&device, "q0", seed);
  hal_semaphore_t* semaphore = hal_test_semaphore(0);
  _Atomic int ran = 0, released = 0;
  test_payload_t* payload = test_payload_new(&ran, &released);
  payload->must_run_before_release = true;
  payload->run_delay_ns = 50 * 1000 * 1000;  // still running at teardown
  fake_stream_fail_next_record(stream);
  submit_one(stream, NULL, 0, semaphore, 1, payload);
  HAL_ASSERT_STATUS(
      HAL_STATUS_INTERNAL, "fakeEventRecord failed",
      hal_semaphore_wait(semaphore, 1, hal_make_timeout_ns(30000 * HAL_MS)));
  assert_int_equal(atomic_load(&released), 0);  // orphaned until destroy
  fake_stream_destroy(stream);
  assert_int_equal(atomic_load(&ran), 1);
  assert_int_equal(atomic_load(&released), 1);
  hal_semaphore_release(semaphore);
  fake_device_deinitialize(&device);
}

static void K10_VendorErrorFailsDownstream(void** state) {
  uint64_t seed = hal_test_seed("K10_VendorErrorFailsDownstream");
  fake_device_t device;
  fake_device_initialize(50000, &device);
  fake_stream_t* streams[3] = {fake_stream_create(&device, "q0", seed),
                               fake_stream_create(&device, "q1", seed + 1),
                               fake_stream_create(&device, "q2", seed + 2)};
  enum { kLinks = 12, kFailAt = 5 };
  hal_semaphore_t* chain[kLinks + 1];
  for (int i = 0; i <= kLinks; ++i)
    chain[i] = hal_test_semaphore(0);
  _Atomic int ran = 0, released = 0;
  // Submitted back to front: every wait is a wait-before-signal.
  for (int i = kLinks - 1; i >= 0; --i) {
    test_payload_t* payload = test_payload_new(&ran, &released);
    payload->base.fail_issue = i == kFailAt;
    submit_one(streams[i % 3], chain[i], 1, chain[i + 1], 1, payload);
  }
  HAL_ASSERT_OK(hal_semaphore_signal(chain[0], 1));
  for (int i = 1; i <= kLinks; ++i) {
    hal_status_t status =
        hal_semaphore_wait(chain[i], 1, hal_make_timeout_ns(30000 * HAL_MS));
    if (i <= kFailAt) {
      HAL_ASSERT_OK(status);
    } else {
      // The cause travels down the chain.
      HAL_ASSERT_STATUS(HAL_STATUS_INTERNAL, "fakeLaunchKernel failed", status);
    }
  }
  // The queue that failed still runs independent work.
  hal_semaphore_t* independent = hal_test_semaphore(0);
  submit_one(streams[kFailAt % 3], NULL, 0, independent, 1,
             test_payload_new(&ran, &released));
  HAL_ASSERT_OK(
      hal_semaphore_wait(independent, 1, hal_make_timeout_ns(30000 * HAL_MS)));
  for (int i = 0; i < 3; ++i)
    fake_stream_destroy(streams[i]);
  assert_int_equal(atomic_load(&ran), kFailAt + 1);
  assert_int_equal(atomic_load(&released), kLinks + 1);  // Q3: all released
  for (int i = 0; i <= kLinks; ++i)
    hal_semaphore_release(chain[i]);
  hal_semaphore_release(independent);
  fake_device_deinitialize(&device);
}

// S2: a semaphore failed by the host fails queued work waiting on it, even
// work parked on several semaphores (the other waits are cancelled).
static void S2_FailedWaitNeverRuns(void** state) {
  fake_device_t device;
  fake_device_initialize(0, &device);
  fake_stream_t* stream = fake_stream_create(&device, "q0", 7);
  hal_semaphore_t* waits[2] = {hal_test_semaphore(0), hal_test_semaphore(0)};
  uint64_t values[2] = {1, 1};
  hal_semaphore_t* out = hal_test_semaphore(0);
  uint64_t out_value = 1;
  _Atomic int ran = 0, released = 0;
  hal_semaphore_list_t wait_list = {2, waits, values};
  HAL_ASSERT_OK(hal_sync_queue_submit(fake_stream_queue(stream), wait_list,
                                      one(&out, &out_value),
                                      test_payload_new(&ran, &released)));
  hal_semaphore_fail(waits[0],
                     hal_make_status(HAL_STATUS_ABORTED, "host gave up"));
  // waits[1] is never signaled: the failure must not wait for it (K10).
  HAL_ASSERT_STATUS(
      HAL_STATUS_ABORTED, "host gave up",
      hal_semaphore_wait(out, 1, hal_make_timeout_ns(30000 * HAL_MS)));
  fake_stream_destroy(stream);
  assert_int_equal(atomic_load(&ran), 0);
  assert_int_equal(atomic_load(&released), 1);
  for (int i = 0; i < 2; ++i)
    hal_semaphore_release(waits[i]);
  hal_semaphore_release(out);
  fake_device_deinitialize(&device);
}

//===----------------------------------------------------------------------===//
// Teardown
//===----------------------------------------------------------------------===//

// Q4 + K2 + K3 + K7: create, submit (parked, ready, no signals), destroy at
// once, in a loop. Parked work fails with CANCELLED; nothing leaks, hangs or
// fires after destroy.
static void K2_CreateSubmitDestroyLoop(void** state) {
  uint64_t seed = hal_test_seed("K2_CreateSubmitDestroyLoop");
  uint64_t iterations = hal_test_iterations(100);
  for (uint64_t i = 0; i < iterations; ++i) {
    fake_device_t device;
    fake_device_initialize((int64_t)hal_test_random_below(&seed, 20000),
                           &device);
    fake_stream_t* streams[2] = {fake_stream_create(&device, "q0", seed + i),
                                 fake_stream_create(&device, "q1", seed - i)};
    hal_semaphore_t* never = hal_test_semaphore(0);
    hal_semaphore_t* parked_out = hal_test_semaphore(0);
    hal_semaphore_t* ready_out = hal_test_semaphore(0);
    _Atomic int ran = 0, released = 0;
    submit_one(streams[0], never, 1, parked_out, 1,
               test_payload_new(&ran, &released));
    submit_one(streams[1], NULL, 0, ready_out, 1,
               test_payload_new(&ran, &released));
    submit_one(streams[1], ready_out, 1, NULL, 0,  // K7: no signals
               test_payload_new(&ran, &released));
    submit_one(streams[0], ready_out, 1, NULL, 0, NULL);
    // The caller drops its references right after submitting (Q3).
    hal_semaphore_release(ready_out);
    int first = (int)hal_test_random_below(&seed, 2);
    fake_stream_destroy(streams[first]);
    fake_stream_destroy(streams[1 - first]);
    assert_int_equal(atomic_load(&released), 3);
    uint64_t value = 0;
    hal_status_t status = hal_semaphore_query(parked_out, &value);
    if (hal_status_code(status) != HAL_STATUS_CANCELLED) {
      hal_status_free(status);
      HAL_TEST_FAIL("parked submission's signal not CANCELLED");
    }
    hal_status_free(status);
    hal_semaphore_release(never);
    hal_semaphore_release(parked_out);
    fake_device_deinitialize(&device);
  }
}

//===----------------------------------------------------------------------===//
// Random DAG against a host reference model
//===----------------------------------------------------------------------===//

enum {
  kDagQueues = 3,
  kDagSemaphores = 6,
  kDagMaxWaits = 3,
};

typedef struct dag_node_t {
  int queue;
  int signal;      // semaphore index
  uint64_t value;  // value it signals
  int wait_count;
  int waits[kDagMaxWaits];
  uint64_t wait_values[kDagMaxWaits];
  bool fails;
} dag_node_t;

// A host thread waiting, without a deadline, for planned values while the
// DAG runs: such waits complete the work they wait for themselves where
// the completion thread is not at it (hal_sync_queue_help_complete). An
// OK wait must see the cell the signaling node wrote (S5; plain memory,
// so TSan checks the happens-before too).
typedef struct dag_waiter_t {
  pthread_t thread;
  uint64_t seed;
  hal_semaphore_t** semaphores;
  const uint64_t* planned;
  const int* cells;
  int node_count;
} dag_waiter_t;

enum { kDagWaiters = 3, kDagWaitsPerWaiter = 6 };

static void* dag_waiter_main(void* arg) {
  dag_waiter_t* waiter = (dag_waiter_t*)arg;
  for (int i = 0; i < kDagWaitsPerWaiter; ++i) {
    int s = (int)hal_test_random_below(&waiter->seed, kDagSemaphores);
    if (!waiter->planned[s])
      continue;
    uint64_t value =
        1 + hal_test_random_below(&waiter->seed, waiter->planned[s]);
    hal_status_t status = hal_semaphore_wait(waiter->semaphores[s], value,
                                             hal_infinite_timeout());
    if (status == HAL_OK) {
      HAL_THREAD_CHECK(
          waiter->cells[s * (waiter->node_count + 1) + (int)value] == 1,
          "a wait returned OK before the work that signals it ran (S5)");
    }
    hal_status_free(status);
  }
  return NULL;
}

static void run_dag(uint64_t seed, int node_count, bool inject_failure) {
  fake_device_t device;
  fake_device_initialize(30000, &device);
  fake_stream_t* streams[kDagQueues];
  for (int q = 0; q < kDagQueues; ++q) {
    char name[8];
    snprintf(name, sizeof(name), "q%d", q);
    streams[q] = fake_stream_create(&device, name, seed + (uint64_t)q);
  }
  hal_semaphore_t* semaphores[kDagSemaphores + 1];  // last: host-signaled
  for (int s = 0; s <= kDagSemaphores; ++s) {
    semaphores[s] = hal_test_semaphore(0);
  }
  const int host = kDagSemaphores;
  const uint64_t host_max = 4;

  // Plan in a topological order: waits name values already planned.
  dag_node_t* nodes = calloc((size_t)node_count, sizeof(*nodes));
  uint64_t planned[kDagSemaphores] = {0};
  int* cells = calloc((size_t)(kDagSemaphores * (node_count + 1)), sizeof(int));
  _Atomic int* ran = calloc((size_t)node_count, sizeof(_Atomic int));
  _Atomic int released = 0;
  int fail_node = inject_failure ? node_count / 3 : -1;
  for (int n = 0; n < node_count; ++n) {
    dag_node_t* node = &nodes[n];
    node->queue = (int)hal_test_random_below(&seed, kDagQueues);
    node->signal = (int)hal_test_random_below(&seed, kDagSemaphores);
    node->value = ++planned[node->signal];
    node->fails = n == fail_node;
    if (node->value > 1) {  // values of one semaphore signal in order
      node->waits[node->wait_count] = node->signal;
      node->wait_values[node->wait_count++] = node->value - 1;
    }
    int extra = (int)hal_test_random_below(&seed, kDagMaxWaits);
    for (int w = 0; w < extra && node->wait_count < kDagMaxWaits; ++w) {
      int s = (int)hal_test_random_below(&seed, kDagSemaphores + 1);
      if (s == host) {
        node->waits[node->wait_count] = host;
        node->wait_values[node->wait_count++] =
            1 + hal_test_random_below(&seed, host_max);
      } else if (planned[s] > 0 && s != node->signal) {
        node->waits[node->wait_count] = s;
        node->wait_values[node->wait_count++] =
            1 + hal_test_random_below(&seed, planned[s]);
      }
    }
  }
  // Submit in a random order (S4: waits before their signals).
  int* order = malloc((size_t)node_count * sizeof(int));
  for (int n = 0; n < node_count; ++n)
    order[n] = n;
  for (int n = node_count - 1; n > 0; --n) {
    int j = (int)hal_test_random_below(&seed, (uint64_t)n + 1);
    int t = order[n];
    order[n] = order[j];
    order[j] = t;
  }
  dag_waiter_t waiters[kDagWaiters];
  uint64_t host_value = 0;
  for (int k = 0; k < node_count; ++k) {
    dag_node_t* node = &nodes[order[k]];
    test_payload_t* payload = test_payload_new(&ran[order[k]], &released);
    payload->base.fail_issue = node->fails;
    payload->write_cell =
        &cells[node->signal * (node_count + 1) + (int)node->value];
    payload->read_cells = calloc(kDagMaxWaits, sizeof(int*));
    hal_semaphore_t* wait_semaphores[kDagMaxWaits];
    for (int w = 0; w < node->wait_count; ++w) {
      wait_semaphores[w] = semaphores[node->waits[w]];
      if (node->waits[w] != host) {
        payload->read_cells[payload->read_count++] =
            &cells[node->waits[w] * (node_count + 1) +
                   (int)node->wait_values[w]];
      }
    }
    hal_semaphore_list_t waits = {(size_t)node->wait_count, wait_semaphores,
                                  node->wait_values};
    HAL_ASSERT_OK(hal_sync_queue_submit(
        fake_stream_queue(streams[node->queue]), waits,
        one(&semaphores[node->signal], &node->value), payload));
    // Host signals interleaved with submissions.
    if (host_value < host_max && hal_test_random_below(&seed, 8) == 0) {
      HAL_ASSERT_OK(hal_semaphore_signal(semaphores[host], ++host_value));
    }
  }
  if (host_value < host_max) {
    HAL_ASSERT_OK(hal_semaphore_signal(semaphores[host], host_max));
  }
  // Waiters start once everything is submitted and released, while most of
  // it is in flight: a wait that finds the work it waits for issued may
  // complete it (one that finds it parked sleeps).
  for (int i = 0; i < kDagWaiters; ++i) {
    waiters[i] = (dag_waiter_t){.seed = hal_test_random(&seed),
                                .semaphores = semaphores,
                                .planned = planned,
                                .cells = cells,
                                .node_count = node_count};
    assert_int_equal(
        pthread_create(&waiters[i].thread, NULL, dag_waiter_main, &waiters[i]),
        0);
  }
  // Every host wait returns (no hang), OK unless downstream of the failure.
  for (int s = 0; s < kDagSemaphores; ++s) {
    if (!planned[s])
      continue;
    hal_status_t status = hal_semaphore_wait(
        semaphores[s], planned[s], hal_make_timeout_ns(60000 * HAL_MS));
    hal_status_code_t code = hal_status_consume_code(status);
    if (code != HAL_STATUS_OK &&
        !(inject_failure && code == HAL_STATUS_INTERNAL)) {
      HAL_TEST_FAIL("semaphore %d: %s", s, hal_status_code_string(code));
    }
  }
  for (int i = 0; i < kDagWaiters; ++i)
    pthread_join(waiters[i].thread, NULL);
  uint64_t helped = 0;
  for (int q = 0; q < kDagQueues; ++q) {
    hal_sync_queue_t* queue = fake_stream_queue(streams[q]);
    hal_sync_mutex_lock(&queue->mutex);
    helped += queue->helped_count;
    hal_sync_mutex_unlock(&queue->mutex);
  }
  for (int q = 0; q < kDagQueues; ++q)
    fake_stream_destroy(streams[q]);
  // The reference model: which nodes must have run.
  bool* failed = calloc((size_t)node_count, sizeof(bool));
  for (int n = 0; n < node_count; ++n) {
    // Plan order is topological: a node fails if it is the injected one or
    // waits on a value that only a failed node would have signaled.
    failed[n] = nodes[n].fails;
    for (int w = 0; w < nodes[n].wait_count && !failed[n]; ++w) {
      int s = nodes[n].waits[w];
      if (s == host)
        continue;
      for (int m = 0; m < n; ++m) {
        if (nodes[m].signal == s && nodes[m].value == nodes[n].wait_values[w] &&
            failed[m]) {
          failed[n] = true;
        }
      }
    }
    // A failure may also reach nodes whose waits were met before the
    // semaphore failed (a race): only "must not run" is checked for them.
    if (failed[n] && atomic_load(&ran[n]) != 0) {
      HAL_TEST_FAIL("node %d ran although a wait of it failed", n);
    }
    if (!inject_failure && atomic_load(&ran[n]) != 1) {
      HAL_TEST_FAIL("node %d ran %d times", n, atomic_load(&ran[n]));
    }
  }
  assert_int_equal(atomic_load(&released), node_count);
  assert_int_equal(atomic_load(&device.t4_violations), 0);
  hal_test_assert_no_thread_failures();
  fprintf(stderr, "  %d nodes, %lld device waits, %llu completed by waiters\n",
          node_count, (long long)atomic_load(&device.device_waits),
          (unsigned long long)helped);
  for (int s = 0; s <= kDagSemaphores; ++s)
    hal_semaphore_release(semaphores[s]);
  free(failed);
  free(order);
  free((void*)ran);
  free(cells);
  free(nodes);
  fake_device_deinitialize(&device);
}

static void S6_RandomDagMatchesModel(void** state) {
  uint64_t seed = hal_test_seed("S6_RandomDagMatchesModel");
  uint64_t rounds = hal_test_iterations(3);
  for (uint64_t r = 0; r < rounds; ++r) {
    run_dag(hal_test_random(&seed), 150, false);
  }
}

static void K10_RandomDagWithInjectedFailure(void** state) {
  uint64_t seed = hal_test_seed("K10_RandomDagWithInjectedFailure");
  uint64_t rounds = hal_test_iterations(3);
  for (uint64_t r = 0; r < rounds; ++r) {
    run_dag(hal_test_random(&seed), 150, true);
  }
}

//===----------------------------------------------------------------------===//
// Issue on the submitting thread
//===----------------------------------------------------------------------===//

// A payload that appends its index to a log when it runs. A stream runs
// its work in the order it was issued, so the log is the issue order.
typedef struct order_log_t {
  pthread_mutex_t mutex;
  int* entries;
  size_t count;
} order_log_t;

typedef struct order_payload_t {
  fake_payload_t base;
  order_log_t* log;
  int index;
} order_payload_t;

static void order_payload_run(fake_payload_t* base) {
  order_payload_t* payload = (order_payload_t*)base;
  pthread_mutex_lock(&payload->log->mutex);
  payload->log->entries[payload->log->count++] = payload->index;
  pthread_mutex_unlock(&payload->log->mutex);
}

static void order_payload_release(fake_payload_t* base) {
  free(base);
}

static order_payload_t* order_payload_new(order_log_t* log, int index) {
  order_payload_t* payload = calloc(1, sizeof(*payload));
  if (!payload)
    abort();
  payload->base.run = order_payload_run;
  payload->base.release = order_payload_release;
  payload->log = log;
  payload->index = index;
  return payload;
}

// One thread's script against one queue: submissions parked on its own
// gate semaphore and submissions without waits, in a random mix. A parked
// one waits for a random value a little above the gate's, so values are
// not in submission order, and a signal raises the gate by a random step,
// releasing any number of them at once: those become ready in the order
// they were submitted (a signal notifies in registration order).
// Everything becomes ready on this thread (a parked one when it signals
// the gate), so the order in which its submissions become ready is known:
// |expected|.
typedef struct order_script_t {
  hal_sync_queue_t* queue;
  order_log_t* log;
  uint64_t seed;
  int first_index;  // indices first_index.. are this script's
  int count;        // submissions
  int* expected;    // |count| entries: readiness order
} order_script_t;

enum { kOrderMaxParked = 64 };

typedef struct order_parked_t {
  int index;
  uint64_t value;
} order_parked_t;

// Raises |gate| to |value| and appends the parked submissions it releases
// to |expected| in submission order, keeping the rest.
static void order_script_release(hal_semaphore_t* gate, uint64_t value,
                                 order_parked_t* parked, int* parked_count,
                                 int* expected, int* ready_count) {
  int kept = 0;
  for (int p = 0; p < *parked_count; ++p) {
    if (parked[p].value <= value) {
      expected[(*ready_count)++] = parked[p].index;
    } else {
      parked[kept++] = parked[p];
    }
  }
  *parked_count = kept;
  // The released ones become ready inside this signal (their callbacks
  // run here), before anything this thread submits next.
  HAL_THREAD_CHECK(hal_semaphore_signal(gate, value) == HAL_OK, "gate");
}

static void* order_script_run(void* arg) {
  order_script_t* script = (order_script_t*)arg;
  hal_semaphore_t* gate = hal_test_semaphore(0);
  // Signaled by the submissions without waits, in their order: now and
  // then the script waits for the last one, so that the queue is idle and
  // the next one may be issued by this thread.
  hal_semaphore_t* timeline = hal_test_semaphore(0);
  uint64_t timeline_next = 0;
  order_parked_t parked[kOrderMaxParked];  // in submission order
  int parked_count = 0;
  uint64_t released = 0;  // gate's value
  int ready_count = 0;
  for (int i = 0; i < script->count; ++i) {
    int index = script->first_index + i;
    uint64_t choice = hal_test_random_below(&script->seed, 3);
    if (choice == 0 && parked_count < kOrderMaxParked) {
      uint64_t value = released + 1 + hal_test_random_below(&script->seed, 8);
      parked[parked_count++] = (order_parked_t){index, value};
      hal_semaphore_list_t waits = {1, &gate, &value};
      HAL_THREAD_CHECK(hal_sync_queue_submit(
                           script->queue, waits, hal_semaphore_list_empty(),
                           order_payload_new(script->log, index)) == HAL_OK,
                       "submit parked");
    } else {
      if (choice == 1 && parked_count) {
        released += 1 + hal_test_random_below(&script->seed, 4);
        order_script_release(gate, released, parked, &parked_count,
                             script->expected, &ready_count);
      }
      script->expected[ready_count++] = index;
      uint64_t value = ++timeline_next;
      hal_semaphore_list_t signals = {1, &timeline, &value};
      HAL_THREAD_CHECK(hal_sync_queue_submit(
                           script->queue, hal_semaphore_list_empty(), signals,
                           order_payload_new(script->log, index)) == HAL_OK,
                       "submit ready");
      if (hal_test_random_below(&script->seed, 8) == 0) {
        // A signal out of order would fail the timeline: this fails too.
        HAL_THREAD_CHECK(
            hal_semaphore_wait(timeline, value,
                               hal_make_timeout_ns(60000 * HAL_MS)) == HAL_OK,
            "wait for submission %d", index);
      }
    }
  }
  while (parked_count) {
    released += 1 + hal_test_random_below(&script->seed, 4);
    order_script_release(gate, released, parked, &parked_count,
                         script->expected, &ready_count);
  }
  HAL_THREAD_CHECK(ready_count == script->count, "script bookkeeping");
  hal_semaphore_release(gate);
  hal_semaphore_release(timeline);
  return NULL;
}

// |threads| scripts against one queue; each thread's submissions must run
// in the order they became ready on that thread, whoever issued them (the
// submitter itself when the queue was idle, the worker otherwise), one
// issue at a time.
static void run_order_scripts(uint64_t seed, fake_issue_policy_t policy,
                              int threads, int per_thread) {
  fake_device_t device;
  fake_device_initialize(50000, &device);
  device.issue_policy = policy;
  fake_stream_t* stream = fake_stream_create(&device, "q0", seed);
  order_log_t log = {.entries =
                         calloc((size_t)(threads * per_thread), sizeof(int))};
  pthread_mutex_init(&log.mutex, NULL);
  order_script_t scripts[4];
  pthread_t handles[4];
  assert_true(threads <= 4 && log.entries);
  for (int t = 0; t < threads; ++t) {
    scripts[t] = (order_script_t){
        .queue = fake_stream_queue(stream),
        .log = &log,
        .seed = hal_test_random(&seed) | 1,
        .first_index = t * per_thread,
        .count = per_thread,
        .expected = calloc((size_t)per_thread, sizeof(int)),
    };
    assert_non_null(scripts[t].expected);
  }
  if (threads == 1) {
    order_script_run(&scripts[0]);
  } else {
    for (int t = 0; t < threads; ++t)
      assert_int_equal(
          pthread_create(&handles[t], NULL, order_script_run, &scripts[t]), 0);
    for (int t = 0; t < threads; ++t)
      pthread_join(handles[t], NULL);
  }
  // Everything issued runs; the last of it signals done.
  hal_semaphore_t* done = hal_test_semaphore(0);
  submit_one(stream, NULL, 0, done, 1, NULL);
  HAL_ASSERT_OK(
      hal_semaphore_wait(done, 1, hal_make_timeout_ns(60000 * HAL_MS)));
  fake_stream_destroy(stream);
  hal_test_assert_no_thread_failures();

  assert_int_equal(log.count, (size_t)(threads * per_thread));
  for (int t = 0; t < threads; ++t) {
    // This thread's entries of the log, in log order, are its readiness
    // order.
    int next = 0;
    for (size_t i = 0; i < log.count; ++i) {
      int index = log.entries[i];
      if (index < scripts[t].first_index ||
          index >= scripts[t].first_index + per_thread) {
        continue;
      }
      if (index != scripts[t].expected[next]) {
        fail_msg("seed %" PRIu64
                 ": thread %d's submission %d ran where its "
                 "submission %d was due (position %d of its %d)",
                 seed, t, index, scripts[t].expected[next], next, per_thread);
      }
      ++next;
    }
    assert_int_equal(next, per_thread);
    free(scripts[t].expected);
  }
  assert_int_equal(atomic_load(&device.overlapping_issues), 0);
  if (policy != FAKE_ISSUE_WORKER_ONLY) {
    // Both paths ran: the submitter on an idle queue, the worker for what
    // a signal made ready.
    if (atomic_load(&device.submitter_records) == 0) {
      fail_msg("seed %" PRIu64 ": no submitter issued (worker: %" PRId64 ")",
               seed, atomic_load(&device.worker_records));
    }
  }
  if (atomic_load(&device.worker_records) == 0) {
    fail_msg("seed %" PRIu64 ": the worker issued nothing (submitters: %" PRId64
             ")",
             seed, atomic_load(&device.submitter_records));
  }
  free(log.entries);
  pthread_mutex_destroy(&log.mutex);
  hal_semaphore_release(done);
  fake_device_deinitialize(&device);
}

// A submission that becomes ready after a parked one (released by a signal
// on the same thread) runs after it, though its submitter could issue it
// at once: the queue's ready work goes first, and one thread issues at a
// time.
static void Q_SubmitterIssuesInReadyOrder(void** state) {
  uint64_t seed = hal_test_seed("Q_SubmitterIssuesInReadyOrder");
  uint64_t rounds = hal_test_iterations(20);
  for (uint64_t r = 0; r < rounds; ++r) {
    run_order_scripts(hal_test_random(&seed), FAKE_ISSUE_SUBMITTER, 1, 200);
  }
}

// The same with three submitting threads, the driver letting every other
// submission be issued by its submitter.
static void Q_ConcurrentSubmittersIssueOneAtATime(void** state) {
  uint64_t seed = hal_test_seed("Q_ConcurrentSubmittersIssueOneAtATime");
  uint64_t rounds = hal_test_iterations(10);
  for (uint64_t r = 0; r < rounds; ++r) {
    run_order_scripts(hal_test_random(&seed), FAKE_ISSUE_MIXED, 3, 150);
    run_order_scripts(hal_test_random(&seed), FAKE_ISSUE_SUBMITTER, 3, 150);
  }
}

// A driver without may_issue_on_submitter: the worker issues everything.
static void Q_WithoutTheHookTheWorkerIssues(void** state) {
  uint64_t seed = hal_test_seed("Q_WithoutTheHookTheWorkerIssues");
  fake_device_t device;
  fake_device_initialize(0, &device);
  device.issue_policy = FAKE_ISSUE_WORKER_ONLY;
  fake_stream_t* stream = fake_stream_create(&device, "q0", seed);
  hal_semaphore_t* semaphore = hal_test_semaphore(0);
  _Atomic int ran = 0;
  for (uint64_t v = 1; v <= 20; ++v)
    submit_one(stream, NULL, 0, semaphore, v, test_payload_new(&ran, NULL));
  HAL_ASSERT_OK(
      hal_semaphore_wait(semaphore, 20, hal_make_timeout_ns(30000 * HAL_MS)));
  fake_stream_destroy(stream);
  assert_int_equal(atomic_load(&ran), 20);
  assert_int_equal(atomic_load(&device.worker_records), 20);
  assert_int_equal(atomic_load(&device.submitter_records), 0);
  hal_semaphore_release(semaphore);
  fake_device_deinitialize(&device);
}

//===----------------------------------------------------------------------===//
// Host waiters completing the work they wait for
//===----------------------------------------------------------------------===//

// A payload that blocks its stream until the test opens its gate, and
// notes the thread that releases it (the completing thread).
typedef struct gated_payload_t {
  fake_payload_t base;
  pthread_mutex_t mutex;
  pthread_cond_t cond;
  bool open;
  bool ran;
  pthread_t releaser;
  _Atomic bool released;
} gated_payload_t;

static void gated_payload_run(fake_payload_t* base) {
  gated_payload_t* payload = (gated_payload_t*)base;
  pthread_mutex_lock(&payload->mutex);
  while (!payload->open)
    pthread_cond_wait(&payload->cond, &payload->mutex);
  payload->ran = true;
  pthread_mutex_unlock(&payload->mutex);
}

static void gated_payload_release(fake_payload_t* base) {
  gated_payload_t* payload = (gated_payload_t*)base;
  pthread_mutex_lock(&payload->mutex);
  HAL_THREAD_CHECK(payload->ran, "payload released before it ran (Q3)");
  payload->releaser = pthread_self();
  pthread_mutex_unlock(&payload->mutex);
  atomic_store(&payload->released, true);
}

static void gated_payload_initialize(gated_payload_t* payload) {
  memset(payload, 0, sizeof(*payload));
  payload->base.run = gated_payload_run;
  payload->base.release = gated_payload_release;
  pthread_mutex_init(&payload->mutex, NULL);
  pthread_cond_init(&payload->cond, NULL);
}

static void gated_payload_open(gated_payload_t* payload) {
  pthread_mutex_lock(&payload->mutex);
  payload->open = true;
  pthread_cond_broadcast(&payload->cond);
  pthread_mutex_unlock(&payload->mutex);
}

static void gated_payload_deinitialize(gated_payload_t* payload) {
  pthread_cond_destroy(&payload->cond);
  pthread_mutex_destroy(&payload->mutex);
}

// Whether a thread holds |queue|'s completion turn. Before the device ran
// the head, only a helper can: the completion thread takes the turn only
// once synchronize_event returned.
static bool queue_is_completing(hal_sync_queue_t* queue) {
  hal_sync_mutex_lock(&queue->mutex);
  bool is_completing = queue->is_completing;
  hal_sync_mutex_unlock(&queue->mutex);
  return is_completing;
}

// Waits until |count| submissions of |queue| are in flight (issued, their
// device timepoints attached): only then can a waiter find them.
static void wait_in_flight(hal_sync_queue_t* queue, int count) {
  hal_time_t deadline = hal_time_now() + 30000 * HAL_MS;
  for (;;) {
    int in_flight = 0;
    hal_sync_mutex_lock(&queue->mutex);
    for (hal_sync_submission_t* s = queue->in_flight.head; s; s = s->next)
      ++in_flight;
    hal_sync_mutex_unlock(&queue->mutex);
    if (in_flight >= count)
      return;
    if (hal_time_now() >= deadline)
      HAL_TEST_FAIL("%d of %d submissions in flight", in_flight, count);
    hal_sleep_until(hal_time_now() + 100 * 1000);
  }
}

typedef struct infinite_wait_t {
  hal_semaphore_t* semaphore;
  uint64_t value;
  hal_status_code_t code;
  pthread_t thread;
} infinite_wait_t;

static void* infinite_wait_main(void* arg) {
  infinite_wait_t* wait = (infinite_wait_t*)arg;
  wait->code = hal_status_consume_code(
      hal_semaphore_wait(wait->semaphore, wait->value, hal_infinite_timeout()));
  return NULL;
}

// Starts |wait| on a thread and returns once that thread holds |queue|'s
// completion turn, the device still held by a gated payload: only a
// waiter completing the work can hold the turn then.
static void start_helping_waiter(hal_sync_queue_t* queue,
                                 infinite_wait_t* wait) {
  assert_int_equal(
      pthread_create(&wait->thread, NULL, infinite_wait_main, wait), 0);
  hal_time_t deadline = hal_time_now() + 30000 * HAL_MS;
  while (!queue_is_completing(queue) && hal_time_now() < deadline)
    hal_sleep_until(hal_time_now() + 100 * 1000);
  assert_true(queue_is_completing(queue));
}

// A wait without a deadline on issued work completes it on the waiting
// thread: the payload is released there, the value published by it, and
// the queue counts one completion by a waiter.
static void Help_WaiterCompletesTheWorkOnItsThread(void** state) {
  one_queue_t q;
  one_queue_open(&q);
  gated_payload_t payload;
  gated_payload_initialize(&payload);
  submit_one(q.stream, NULL, 0, q.semaphore, 1, (test_payload_t*)&payload);
  wait_in_flight(q.queue, 1);
  infinite_wait_t wait = {q.semaphore, 1, HAL_STATUS_UNKNOWN, 0};
  start_helping_waiter(q.queue, &wait);
  gated_payload_open(&payload);
  pthread_join(wait.thread, NULL);
  assert_int_equal(wait.code, HAL_STATUS_OK);
  assert_true(atomic_load(&payload.released));
  assert_true(pthread_equal(payload.releaser, wait.thread));
  hal_sync_mutex_lock(&q.queue->mutex);
  assert_int_equal(q.queue->helped_count, 1);
  hal_sync_mutex_unlock(&q.queue->mutex);
  fake_stream_destroy(q.stream);
  gated_payload_deinitialize(&payload);
  hal_semaphore_release(q.semaphore);
  hal_test_assert_no_thread_failures();
  fake_device_deinitialize(&q.device);
}

// Polls until |count()| of |stream| reaches |at_least| (30 s at most).
static void wait_for_count(fake_stream_t* stream,
                           int64_t (*count)(fake_stream_t*), int64_t at_least,
                           const char* what) {
  hal_time_t deadline = hal_time_now() + 30000 * HAL_MS;
  while (count(stream) < at_least && hal_time_now() < deadline)
    hal_sleep_until(hal_time_now() + 100 * 1000);
  if (count(stream) < at_least)
    HAL_TEST_FAIL("%s: %lld of %lld", what, (long long)count(stream),
                  (long long)at_least);
}

// Q5, K13: the completion thread synchronizes the head's event with no
// turn held while a waiter takes the turn and synchronizes the same event
// itself. Two synchronizes of one event may disagree (an error reported to
// one call only): the completion thread's failure here, the waiter's
// success. The submission still fails with the vendor's error; before, the
// waiter completed it with OK and the completion thread dropped the error.
static void Help_FailedSynchronizeOfTheCompletionThreadIsNotDropped(
    void** state) {
  one_queue_t q;
  one_queue_open(&q);
  gated_payload_t payload;
  gated_payload_initialize(&payload);
  fake_stream_hold_next_synchronize_failure(q.stream);
  submit_one(q.stream, NULL, 0, q.semaphore, 1, (test_payload_t*)&payload);
  wait_in_flight(q.queue, 1);
  // The completion thread is inside its synchronize (the failing one).
  wait_for_count(q.stream, fake_stream_synchronize_calls, 1,
                 "the completion thread's synchronize");
  infinite_wait_t wait = {q.semaphore, 1, HAL_STATUS_UNKNOWN, 0};
  start_helping_waiter(q.queue, &wait);
  gated_payload_open(&payload);
  // The waiter's own synchronize returned OK; the failing one is held.
  wait_for_count(q.stream, fake_stream_synchronize_returns, 1,
                 "the waiter's synchronize");
  fake_stream_release_held_synchronize(q.stream);
  pthread_join(wait.thread, NULL);
  assert_int_equal(wait.code, HAL_STATUS_INTERNAL);
  hal_status_t status =
      hal_semaphore_wait(q.semaphore, 1, hal_make_timeout_ns(0));
  HAL_ASSERT_STATUS(HAL_STATUS_INTERNAL, "FAKE_ERROR_INJECTED_IN_ONE_CALL",
                    status);
  assert_int_equal(fake_stream_synchronize_calls(q.stream), 2);
  fake_stream_destroy(q.stream);
  gated_payload_deinitialize(&payload);
  hal_semaphore_release(q.semaphore);
  hal_test_assert_no_thread_failures();
  fake_device_deinitialize(&q.device);
}

// A waiter whose work sits behind earlier work on its queue completes the
// earlier work first, in issue order: a signal is never published before
// those of the submissions issued before it.
static void Help_WaiterCompletesEarlierWorkFirst(void** state) {
  one_queue_t q;
  one_queue_open(&q);
  hal_semaphore_t* first = hal_test_semaphore(0);
  gated_payload_t payloads[2];
  for (int i = 0; i < 2; ++i)
    gated_payload_initialize(&payloads[i]);
  submit_one(q.stream, NULL, 0, first, 1, (test_payload_t*)&payloads[0]);
  submit_one(q.stream, NULL, 0, q.semaphore, 1, (test_payload_t*)&payloads[1]);
  wait_in_flight(q.queue, 2);
  infinite_wait_t wait = {q.semaphore, 1, HAL_STATUS_UNKNOWN, 0};
  start_helping_waiter(q.queue, &wait);
  gated_payload_open(&payloads[0]);
  gated_payload_open(&payloads[1]);
  pthread_join(wait.thread, NULL);
  assert_int_equal(wait.code, HAL_STATUS_OK);
  uint64_t value = 0;
  HAL_ASSERT_OK(hal_semaphore_query(first, &value));
  assert_int_equal(value, 1);
  for (int i = 0; i < 2; ++i) {
    assert_true(atomic_load(&payloads[i].released));
    assert_true(pthread_equal(payloads[i].releaser, wait.thread));
  }
  fake_stream_destroy(q.stream);
  for (int i = 0; i < 2; ++i)
    gated_payload_deinitialize(&payloads[i]);
  hal_semaphore_release(first);
  hal_semaphore_release(q.semaphore);
  hal_test_assert_no_thread_failures();
  fake_device_deinitialize(&q.device);
}

// Payloads that log the order their queue releases them in (completion
// order), each writing a cell when it runs.
typedef struct help_log_t {
  pthread_mutex_t mutex;
  int* order;
  int count;
} help_log_t;

typedef struct help_payload_t {
  fake_payload_t base;
  help_log_t* log;
  int index;
  int64_t run_delay_ns;
  _Atomic int* cell;
} help_payload_t;

static void help_payload_run(fake_payload_t* base) {
  help_payload_t* payload = (help_payload_t*)base;
  if (payload->run_delay_ns > 0)
    hal_sleep_until(hal_time_now() + payload->run_delay_ns);
  atomic_store(payload->cell, 1);
}

static void help_payload_release(fake_payload_t* base) {
  help_payload_t* payload = (help_payload_t*)base;
  pthread_mutex_lock(&payload->log->mutex);
  payload->log->order[payload->log->count++] = payload->index;
  pthread_mutex_unlock(&payload->log->mutex);
  free(payload);
}

enum { kHelpQueues = 2, kHelpSubmissions = 400, kHelpWaiters = 3 };

typedef struct help_run_t {
  hal_semaphore_t* semaphores[kHelpSubmissions];
  _Atomic int cells[kHelpSubmissions];
  _Atomic int submitted;  // submissions made so far
  _Atomic bool done;      // the submitter finished
} help_run_t;

typedef struct help_waiter_t {
  help_run_t* run;
  uint64_t seed;
  int ok_count;
  int failed_count;
  pthread_t thread;
} help_waiter_t;

static void* help_waiter_main(void* arg) {
  help_waiter_t* waiter = (help_waiter_t*)arg;
  help_run_t* run = waiter->run;
  while (!atomic_load(&run->done)) {
    int submitted = atomic_load(&run->submitted);
    if (submitted == 0)
      continue;
    // Mostly the newest work, in flight or about to be.
    int back = (int)hal_test_random_below(&waiter->seed, 4);
    int i = submitted - 1 - (back < submitted ? back : 0);
    hal_status_t status =
        hal_semaphore_wait(run->semaphores[i], 1, hal_infinite_timeout());
    if (status == HAL_OK) {
      HAL_THREAD_CHECK(atomic_load(&run->cells[i]) == 1,
                       "a wait returned OK before its work ran (S5)");
      ++waiter->ok_count;
    } else {
      HAL_THREAD_CHECK(hal_status_is(status, HAL_STATUS_INTERNAL),
                       "a failed wait carries the device's error");
      ++waiter->failed_count;
    }
    hal_status_free(status);
  }
  return NULL;
}

// Waiters without a deadline race the completion thread for work on two
// queues while submissions go on, with device errors reported at
// synchronize now and then: every submission completes once, in issue
// order on its queue; an OK wait follows its work; a failed one carries
// the device's error.
static void Help_RandomWaitersRaceTheCompletionThread(void** state) {
  uint64_t seed = hal_test_seed("Help_RandomWaitersRaceTheCompletionThread");
  uint64_t rounds = hal_test_iterations(2);
  for (uint64_t r = 0; r < rounds; ++r) {
    fake_device_t device;
    fake_device_initialize(20000, &device);
    fake_stream_t* streams[kHelpQueues];
    help_log_t logs[kHelpQueues];
    for (int s = 0; s < kHelpQueues; ++s) {
      char name[8];
      snprintf(name, sizeof(name), "q%d", s);
      streams[s] = fake_stream_create(&device, name, hal_test_random(&seed));
      pthread_mutex_init(&logs[s].mutex, NULL);
      logs[s].order = calloc(kHelpSubmissions, sizeof(int));
      logs[s].count = 0;
    }
    help_run_t* run = calloc(1, sizeof(*run));
    for (int i = 0; i < kHelpSubmissions; ++i)
      run->semaphores[i] = hal_test_semaphore(0);
    help_waiter_t waiters[kHelpWaiters];
    for (int w = 0; w < kHelpWaiters; ++w) {
      waiters[w] = (help_waiter_t){run, hal_test_random(&seed), 0, 0, 0};
      assert_int_equal(pthread_create(&waiters[w].thread, NULL,
                                      help_waiter_main, &waiters[w]),
                       0);
    }
    int submitted_on[kHelpQueues] = {0};
    int* queue_of = calloc(kHelpSubmissions, sizeof(int));
    for (int i = 0; i < kHelpSubmissions; ++i) {
      int s = (int)hal_test_random_below(&seed, kHelpQueues);
      queue_of[i] = s;
      ++submitted_on[s];
      help_payload_t* payload = calloc(1, sizeof(*payload));
      payload->base.run = help_payload_run;
      payload->base.release = help_payload_release;
      payload->log = &logs[s];
      payload->index = i;
      payload->cell = &run->cells[i];
      payload->run_delay_ns =
          (int64_t)hal_test_random_below(&seed, 4) * 50 * 1000;
      if (hal_test_random_below(&seed, 40) == 0)
        fake_stream_fail_next_synchronize(streams[s]);
      uint64_t one_value = 1;
      HAL_ASSERT_OK(hal_sync_queue_submit(
          fake_stream_queue(streams[s]), hal_semaphore_list_empty(),
          one(&run->semaphores[i], &one_value), payload));
      atomic_store(&run->submitted, i + 1);
      if (hal_test_random_below(&seed, 4) == 0)
        hal_sleep_until(hal_time_now() + 50 * 1000);
    }
    atomic_store(&run->done, true);
    int ok = 0, failed = 0;
    for (int w = 0; w < kHelpWaiters; ++w) {
      pthread_join(waiters[w].thread, NULL);
      ok += waiters[w].ok_count;
      failed += waiters[w].failed_count;
    }
    int device_errors = 0;
    for (int i = 0; i < kHelpSubmissions; ++i) {
      hal_status_code_t code = hal_status_consume_code(hal_semaphore_wait(
          run->semaphores[i], 1, hal_make_timeout_ns(60000 * HAL_MS)));
      if (code == HAL_STATUS_INTERNAL) {
        ++device_errors;
      } else if (code != HAL_STATUS_OK) {
        HAL_TEST_FAIL("submission %d: %s", i, hal_status_code_string(code));
      }
    }
    uint64_t helped = 0;
    for (int s = 0; s < kHelpQueues; ++s) {
      hal_sync_queue_t* queue = fake_stream_queue(streams[s]);
      hal_sync_mutex_lock(&queue->mutex);
      helped += queue->helped_count;
      hal_sync_mutex_unlock(&queue->mutex);
      fake_stream_destroy(streams[s]);
      // Every submission released once, in issue order on its queue.
      assert_int_equal(logs[s].count, submitted_on[s]);
      int previous = -1;
      for (int k = 0; k < logs[s].count; ++k) {
        int index = logs[s].order[k];
        assert_int_equal(queue_of[index], s);
        if (index <= previous)
          HAL_TEST_FAIL("queue %d completed %d after %d", s, index, previous);
        previous = index;
      }
      free(logs[s].order);
      pthread_mutex_destroy(&logs[s].mutex);
    }
    fprintf(stderr,
            "  %d submissions (%d device errors), %d waits OK, %d failed, "
            "%llu completed by waiters\n",
            kHelpSubmissions, device_errors, ok, failed,
            (unsigned long long)helped);
    for (int i = 0; i < kHelpSubmissions; ++i)
      hal_semaphore_release(run->semaphores[i]);
    free(queue_of);
    free(run);
    hal_test_assert_no_thread_failures();
    fake_device_deinitialize(&device);
  }
}

static void release_semaphore_when_reached(void* user_data, uint64_t value,
                                           hal_status_t status) {
  hal_semaphore_release((hal_semaphore_t*)user_data);
}

// K12 on the helper path: the waiter lends its only reference to a
// callback that releases it; the waiter then completes the work, which
// runs that callback on the waiting thread. The wait must not touch the
// semaphore afterwards unless it holds a reference of its own (TSan and
// ASan see the use after free otherwise).
static void Help_CallbackReleasingTheWaitedSemaphore(void** state) {
  for (int round = 0; round < 20; ++round) {
    fake_device_t device;
    fake_device_initialize(0, &device);
    fake_stream_t* stream = fake_stream_create(&device, "q0", 1);
    hal_sync_queue_t* queue = fake_stream_queue(stream);
    hal_semaphore_t* semaphore = hal_test_semaphore(0);
    gated_payload_t payload;
    gated_payload_initialize(&payload);
    HAL_ASSERT_OK(hal_semaphore_add_callback(
        semaphore, 1, release_semaphore_when_reached, semaphore, NULL));
    submit_one(stream, NULL, 0, semaphore, 1, (test_payload_t*)&payload);
    wait_in_flight(queue, 1);
    infinite_wait_t wait = {semaphore, 1, HAL_STATUS_UNKNOWN, 0};
    start_helping_waiter(queue, &wait);
    gated_payload_open(&payload);
    pthread_join(wait.thread, NULL);
    assert_int_equal(wait.code, HAL_STATUS_OK);
    assert_true(pthread_equal(payload.releaser, wait.thread));
    fake_stream_destroy(stream);
    gated_payload_deinitialize(&payload);
    hal_test_assert_no_thread_failures();
    fake_device_deinitialize(&device);
  }
}

// A queue destroyed while a waiter is completing its work waits for the
// waiter to be done with the queue (ASan: no use after free).
static void Help_QueueDestroyedWhileAWaiterCompletes(void** state) {
  uint64_t seed = hal_test_seed("Help_QueueDestroyedWhileAWaiterCompletes");
  uint64_t rounds = hal_test_iterations(50);
  for (uint64_t r = 0; r < rounds; ++r) {
    fake_device_t device;
    fake_device_initialize(10000, &device);
    fake_stream_t* stream = fake_stream_create(&device, "q0", r + 1);
    hal_semaphore_t* semaphore = hal_test_semaphore(0);
    _Atomic int ran = 0, released = 0;
    test_payload_t* payload = test_payload_new(&ran, &released);
    payload->run_delay_ns = (int64_t)hal_test_random_below(&seed, 100) * 1000;
    submit_one(stream, NULL, 0, semaphore, 1, payload);
    infinite_wait_t wait = {semaphore, 1, HAL_STATUS_UNKNOWN, 0};
    assert_int_equal(
        pthread_create(&wait.thread, NULL, infinite_wait_main, &wait), 0);
    hal_sleep_until(hal_time_now() +
                    (int64_t)hal_test_random_below(&seed, 100) * 1000);
    fake_stream_destroy(stream);  // the submission completes first (Q4)
    pthread_join(wait.thread, NULL);
    assert_int_equal(wait.code, HAL_STATUS_OK);
    assert_int_equal(atomic_load(&ran), 1);
    assert_int_equal(atomic_load(&released), 1);
    hal_semaphore_release(semaphore);
    hal_test_assert_no_thread_failures();
    fake_device_deinitialize(&device);
  }
}

//===----------------------------------------------------------------------===//
// Helped mode (docs/sync-design.md "Helped queues")
//===----------------------------------------------------------------------===//

// The rings of |queue|'s completion doorbell so far.
static uint32_t completion_rings(hal_sync_queue_t* queue) {
  return hal_sync_doorbell_prepare(&queue->completion_bell);
}

// hal_test_poll_until, failing the test when 30 s pass.
static void poll_until(bool (*done)(const void*), const void* arg,
                       const char* what) {
  if (!hal_test_poll_until(done, arg))
    HAL_TEST_FAIL("%s: not within 30 s", what);
}

typedef struct rings_after_t {
  hal_sync_queue_t* queue;
  uint32_t rings;
} rings_after_t;

static bool is_rung_after(const void* arg) {
  const rings_after_t* after = arg;
  return completion_rings(after->queue) != after->rings;
}

// Waits for a ring of |queue|'s completion doorbell after |rings|: a
// worker's push rings after it unlocks the queue, so the push may be seen
// in flight before its ring.
static void wait_for_ring(hal_sync_queue_t* queue, uint32_t rings) {
  rings_after_t after = {queue, rings};
  poll_until(is_rung_after, &after, "a ring of the completion doorbell");
}

static bool queue_is_helped(hal_sync_queue_t* queue) {
  return atomic_load_explicit(&queue->is_helped, memory_order_relaxed);
}

static void set_helped_sleep(hal_sync_queue_t* queue, hal_duration_t ns) {
  hal_sync_mutex_lock(&queue->mutex);
  queue->helped_sleep_ns = ns;
  hal_sync_mutex_unlock(&queue->mutex);
}

// Polls |semaphore| with query (registers nothing, helps nothing) until it
// reaches |value|.
static void poll_until_reached(hal_semaphore_t* semaphore, uint64_t value) {
  hal_test_value_t at = {semaphore, value};
  poll_until(hal_test_value_reached, &at, "the value polled with query");
}

static void one_queue_close(one_queue_t* q) {
  fake_stream_destroy(q->stream);
  hal_semaphore_release(q->semaphore);
  hal_test_assert_no_thread_failures();
  fake_device_deinitialize(&q->device);
}

// One submission of a gated payload signaling |value|, completed by a
// waiter without a deadline (asserted: it holds the turn before the device
// runs the work).
static void helped_round_trip(one_queue_t* q, uint64_t value) {
  gated_payload_t payload;
  gated_payload_initialize(&payload);
  submit_one(q->stream, NULL, 0, q->semaphore, value,
             (test_payload_t*)&payload);
  wait_in_flight(q->queue, 1);
  infinite_wait_t wait = {q->semaphore, value, HAL_STATUS_UNKNOWN, 0};
  start_helping_waiter(q->queue, &wait);
  gated_payload_open(&payload);
  pthread_join(wait.thread, NULL);
  assert_int_equal(wait.code, HAL_STATUS_OK);
  assert_true(pthread_equal(payload.releaser, wait.thread));
  gated_payload_deinitialize(&payload);
}

// Round trips until the completion thread has seen enough of them
// completed by waiters to stop being rung at issue.
static void enter_helped_mode(one_queue_t* q, uint64_t* value) {
  for (int round = 0; round < 200 && !queue_is_helped(q->queue); ++round)
    helped_round_trip(q, ++*value);
  assert_true(queue_is_helped(q->queue));
}

// Once waiters complete a queue's work, an issue rings the completion
// thread no more (the wake-up it saves is the point), and the waiters go
// on completing it.
static void Helped_IssuesStopRingingOnceWaitersComplete(void** state) {
  one_queue_t q;
  one_queue_open(&q);
  set_helped_sleep(q.queue, 60000 * HAL_MS);  // no fallback in this case
  uint64_t value = 0;
  enter_helped_mode(&q, &value);
  for (int i = 0; i < 8; ++i) {
    uint32_t rings = completion_rings(q.queue);
    helped_round_trip(&q, ++value);
    assert_int_equal(completion_rings(q.queue), rings);
    assert_true(queue_is_helped(q.queue));
  }
  one_queue_close(&q);
}

static void set_flag_when_reached(void* user_data, uint64_t value,
                                  hal_status_t status) {
  HAL_THREAD_CHECK(status == HAL_OK, "callback failed");
  atomic_store((_Atomic bool*)user_data, true);
}

static bool is_flag_set(const void* arg) {
  return atomic_load((_Atomic bool*)arg);
}

// In helped mode a timepoint registered for unrung work (a callback, a
// wait with a deadline) rings the completion thread, whichever comes
// first, the registration or the issue: the work completes long before the
// helped sleep's deadline (60 s here) would have looked at it.
static void Helped_RegistrationRingsTheCompletionThread(void** state) {
  one_queue_t q;
  one_queue_open(&q);
  set_helped_sleep(q.queue, 60000 * HAL_MS);
  uint64_t value = 0;
  enter_helped_mode(&q, &value);
  for (int order = 0; order < 3; ++order) {
    ++value;
    gated_payload_t payload;
    gated_payload_initialize(&payload);
    _Atomic bool reached = false;
    uint32_t rings = completion_rings(q.queue);
    if (order == 0) {
      // The callback registered before the issue: the issue rings.
      HAL_ASSERT_OK(hal_semaphore_add_callback(
          q.semaphore, value, set_flag_when_reached, &reached, NULL));
      submit_one(q.stream, NULL, 0, q.semaphore, value,
                 (test_payload_t*)&payload);
      wait_in_flight(q.queue, 1);
      wait_for_ring(q.queue, rings);
    } else {
      // The issue first (unrung), then the registration rings.
      submit_one(q.stream, NULL, 0, q.semaphore, value,
                 (test_payload_t*)&payload);
      wait_in_flight(q.queue, 1);
      assert_int_equal(completion_rings(q.queue), rings);
      if (order == 1) {
        HAL_ASSERT_OK(hal_semaphore_add_callback(
            q.semaphore, value, set_flag_when_reached, &reached, NULL));
        assert_int_not_equal(completion_rings(q.queue), rings);
      }
    }
    gated_payload_open(&payload);
    if (order == 2) {
      // A wait with a deadline registers and does not help.
      HAL_ASSERT_OK(hal_semaphore_wait(q.semaphore, value,
                                       hal_make_timeout_ns(30000 * HAL_MS)));
      assert_false(pthread_equal(payload.releaser, pthread_self()));
    } else {
      poll_until(is_flag_set, (const void*)&reached,
                 "the callback of unrung work");
    }
    // Back in helped mode for the next order (the completion thread may
    // have completed the work itself and left it).
    enter_helped_mode(&q, &value);
    gated_payload_deinitialize(&payload);
  }
  one_queue_close(&q);
}

// A registration that finds issued work before its push (the device
// timepoint is attached first) asks for the completion thread while
// nothing is in flight: its ring finds no work. The push that follows must
// ring for it (in helped mode it would not), and the work completes long
// before the helped sleep's deadline (60 s here).
static void Helped_RequestBeforeThePushIsHonoured(void** state) {
  one_queue_t q;
  one_queue_open(&q);
  set_helped_sleep(q.queue, 60000 * HAL_MS);
  uint64_t value = 0;
  enter_helped_mode(&q, &value);
  // What hal_sync_semaphore_register_locked and its caller do for a
  // registration covered by a device timepoint of the queue.
  hal_sync_queue_help_enter(q.queue);
  hal_sync_queue_request_completion(q.queue);
  // The completion thread wakes, finds nothing and sleeps again.
  hal_sleep_until(hal_time_now() + 20 * HAL_MS);
  uint32_t rings = completion_rings(q.queue);
  gated_payload_t payload;
  gated_payload_initialize(&payload);
  submit_one(q.stream, NULL, 0, q.semaphore, ++value,
             (test_payload_t*)&payload);
  wait_in_flight(q.queue, 1);
  wait_for_ring(q.queue, rings);
  gated_payload_open(&payload);
  poll_until_reached(q.semaphore, value);
  assert_true(atomic_load(&payload.released));
  one_queue_close(&q);
  gated_payload_deinitialize(&payload);
}

// Work issued unrung in helped mode that nobody waits for (the value is
// only polled) still completes: the completion thread's helped sleep has a
// deadline, and one that passes with no waiter's completion ends the mode.
// The doorbell is not rung meanwhile (asserted), so the completion thread
// came for the work on its own.
static void Helped_WorkNobodyWaitsForStillCompletes(void** state) {
  one_queue_t q;
  one_queue_open(&q);
  // Long enough that the round trips keep the mode, short for the check.
  set_helped_sleep(q.queue, 50 * HAL_MS);
  uint64_t value = 0;
  bool checked = false;
  for (int attempt = 0; attempt < 20 && !checked; ++attempt) {
    enter_helped_mode(&q, &value);
    // Let the completion thread fall asleep (its helped sleep is longer):
    // the work must then come to it through the deadline, not a look.
    hal_sleep_until(hal_time_now() + 20 * HAL_MS);
    ++value;
    _Atomic int ran = 0, released = 0;
    uint32_t rings = completion_rings(q.queue);
    submit_one(q.stream, NULL, 0, q.semaphore, value,
               test_payload_new(&ran, &released));
    poll_until_reached(q.semaphore, value);
    assert_int_equal(atomic_load(&released), 1);
    // The issue found the mode gone (a slow round trip let the deadline
    // pass first) if it rang: try again.
    if (completion_rings(q.queue) != rings)
      continue;
    assert_false(queue_is_helped(q.queue));
    checked = true;
  }
  assert_true(checked);
  one_queue_close(&q);
}

//===----------------------------------------------------------------------===//
// Busy queues
//===----------------------------------------------------------------------===//

static bool queue_is_busy(hal_sync_queue_t* queue) {
  return atomic_load_explicit(&queue->is_busy, memory_order_relaxed);
}

static bool queue_is_not_busy_at(const void* arg) {
  return !queue_is_busy((hal_sync_queue_t*)arg);
}

static void set_busy_sleep(hal_sync_queue_t* queue, hal_duration_t ns) {
  hal_sync_mutex_lock(&queue->mutex);
  queue->busy_sleep_ns = ns;
  hal_sync_mutex_unlock(&queue->mutex);
}

static bool is_count_set(const void* arg) {
  return atomic_load((_Atomic int*)arg) != 0;
}

// Whether |queue|'s completion thread has announced a sleep on its
// doorbell (the futex doorbell's low bit, set before the futex wait and
// cleared by a ring; wake.c). Not visible on the condition variable path.
static bool completion_is_asleep(const void* arg) {
  hal_sync_queue_t* queue = (hal_sync_queue_t*)arg;
  return atomic_load(&queue->completion_bell.word) & 1u;
}

// Two submissions in flight, the first gated: the completion thread
// completes the first with the second behind it, which is busy mode. The
// rings of the two pushes make it take the second at once; then, with
// nothing in flight, it sleeps with the busy deadline. Returns once it is
// asleep (seen on the futex doorbell; on the other, after a generous
// pause), so that what the caller pushes next meets no stale ring.
static void enter_busy_mode(one_queue_t* q, uint64_t* value) {
  gated_payload_t first;
  gated_payload_initialize(&first);
  _Atomic int ran = 0, released = 0;
  submit_one(q->stream, NULL, 0, q->semaphore, ++*value,
             (test_payload_t*)&first);
  submit_one(q->stream, NULL, 0, q->semaphore, ++*value,
             test_payload_new(&ran, &released));
  wait_in_flight(q->queue, 2);
  gated_payload_open(&first);
  poll_until(is_count_set, (const void*)&released, "the second's release");
  assert_true(atomic_load(&first.released));
  assert_true(queue_is_busy(q->queue));
  if (q->queue->completion_bell.use_futex) {
    poll_until(completion_is_asleep, q->queue, "the completion thread asleep");
  } else {
    hal_sleep_until(hal_time_now() + 100 * HAL_MS);
  }
  gated_payload_deinitialize(&first);
}

// Once the completion thread completes work with more behind it, issues
// stop ringing it, and the work nobody waits for (only polled here) still
// completes: the busy sleep has a deadline. A look after it that finds
// nothing in flight ends the mode, and issues ring again.
static void Busy_PushesStopRingingAndWorkStillCompletes(void** state) {
  one_queue_t q;
  one_queue_open(&q);
  // Long enough that the pushes below land in the mode, short for the
  // polls.
  set_busy_sleep(q.queue, 1000 * HAL_MS);
  uint64_t value = 0;
  enter_busy_mode(&q, &value);
  uint32_t rings = completion_rings(q.queue);
  enum { kPushes = 8 };
  _Atomic int pushed_ran[kPushes], pushed_released[kPushes];
  for (int i = 0; i < kPushes; ++i) {
    atomic_init(&pushed_ran[i], 0);
    atomic_init(&pushed_released[i], 0);
    submit_one(q.stream, NULL, 0, q.semaphore, ++value,
               test_payload_new(&pushed_ran[i], &pushed_released[i]));
  }
  // All in flight before the busy sleep's deadline, none rung for.
  wait_in_flight(q.queue, kPushes);
  assert_int_equal(completion_rings(q.queue), rings);
  poll_until_reached(q.semaphore, value);
  for (int i = 0; i < kPushes; ++i)
    assert_int_equal(atomic_load(&pushed_released[i]), 1);
  poll_until(queue_is_not_busy_at, q.queue, "busy mode to end");
  rings = completion_rings(q.queue);
  _Atomic int last_ran = 0, last_released = 0;
  submit_one(q.stream, NULL, 0, q.semaphore, ++value,
             test_payload_new(&last_ran, &last_released));
  wait_for_ring(q.queue, rings);
  poll_until_reached(q.semaphore, value);
  one_queue_close(&q);
}

// In busy mode a timepoint registered for unrung work (a callback, a wait
// with a deadline) rings the completion thread: the work completes long
// before the busy sleep's deadline (60 s here) would have looked at it.
// One queue per round: the registration's request makes every push ring
// until the mode ends.
static void Busy_RegistrationRingsTheCompletionThread(void** state) {
  for (int round = 0; round < 2; ++round) {
    one_queue_t q;
    one_queue_open(&q);
    set_busy_sleep(q.queue, 60000 * HAL_MS);
    uint64_t value = 0;
    enter_busy_mode(&q, &value);
    gated_payload_t payload;
    gated_payload_initialize(&payload);
    uint32_t rings = completion_rings(q.queue);
    submit_one(q.stream, NULL, 0, q.semaphore, ++value,
               (test_payload_t*)&payload);
    wait_in_flight(q.queue, 1);
    assert_true(queue_is_busy(q.queue));
    assert_int_equal(completion_rings(q.queue), rings);
    if (round == 0) {
      _Atomic bool reached = false;
      HAL_ASSERT_OK(hal_semaphore_add_callback(
          q.semaphore, value, set_flag_when_reached, &reached, NULL));
      assert_int_not_equal(completion_rings(q.queue), rings);
      gated_payload_open(&payload);
      poll_until(is_flag_set, (const void*)&reached,
                 "the callback of unrung work");
    } else {
      // A wait with a deadline registers and does not help.
      gated_payload_open(&payload);
      HAL_ASSERT_OK(hal_semaphore_wait(q.semaphore, value,
                                       hal_make_timeout_ns(30000 * HAL_MS)));
      assert_false(pthread_equal(payload.releaser, pthread_self()));
    }
    one_queue_close(&q);
    gated_payload_deinitialize(&payload);
  }
}

// The test list: CASE binds this program's fixture.
#define CASE(name) cmocka_unit_test(name)

int main(void) {
  const struct CMUnitTest tests[] = {
      CASE(Q_SubmitAndSignal),
      CASE(Q_BadSubmissions),
      CASE(K4_WaitBeforeSignalAcrossQueues),
      CASE(T4_RecordedEventUsedForDeviceWait),
      CASE(Q_RecordFailureOrphanedUntilQuiesced),
      CASE(Q3_PayloadReleasedBeforeSignals),
      CASE(K10_VendorErrorFailsDownstream),
      CASE(K14_LossFailsIdleAndParkedSemaphores),
      CASE(K14_LossFailsEverySemaphoreBeforeAnyoneLearnsOfIt),
      CASE(K14_LossRacesSemaphoreChurn),
      CASE(K13_DeviceWaitOnSignalerThatFailsAtSynchronize),
      CASE(K13_DeviceWaitOnSemaphoreFailedByHost),
      CASE(S2_FailedWaitNeverRuns),
      CASE(K2_CreateSubmitDestroyLoop),
      CASE(Queue_ThreadNamesTellQueuesApart),
      CASE(Queue_WarmSubmissionsReuseTheirBlocks),
      CASE(EventPool_BurstTrimmedWhenQueueIdles),
      CASE(S6_RandomDagMatchesModel),
      CASE(K10_RandomDagWithInjectedFailure),
      CASE(Q_SubmitterIssuesInReadyOrder),
      CASE(Q_ConcurrentSubmittersIssueOneAtATime),
      CASE(Q_WithoutTheHookTheWorkerIssues),
      CASE(Help_WaiterCompletesTheWorkOnItsThread),
      CASE(Help_FailedSynchronizeOfTheCompletionThreadIsNotDropped),
      CASE(Help_WaiterCompletesEarlierWorkFirst),
      CASE(Help_RandomWaitersRaceTheCompletionThread),
      CASE(Help_QueueDestroyedWhileAWaiterCompletes),
      CASE(Help_CallbackReleasingTheWaitedSemaphore),
      CASE(Helped_IssuesStopRingingOnceWaitersComplete),
      CASE(Helped_RegistrationRingsTheCompletionThread),
      CASE(Helped_RequestBeforeThePushIsHonoured),
      CASE(Helped_WorkNobodyWaitsForStillCompletes),
      CASE(Busy_PushesStopRingingAndWorkStillCompletes),
      CASE(Busy_RegistrationRingsTheCompletionThread),
  };
  return cmocka_run_group_tests_name("queue", tests, NULL, NULL);
}
