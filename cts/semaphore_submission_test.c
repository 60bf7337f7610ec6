// Copyright 2026 The HAL Authors.
//
// CTS suite "semaphore_submission": queues and semaphores together
// (S2, S4, S6, Q3, Q4; K4, K7, K10 of the sync contract). Every case that
// moves data checks it on the host at the end.

#include <inttypes.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "cts.h"

typedef cts_fixture_t fixture_t;

#define BUFFER_SIZE 256

// A one-shot command buffer filling |buffer| with |value|.
static hal_command_buffer_t* fill_cb(fixture_t* f, hal_buffer_t* buffer,
                                     uint8_t value) {
  hal_command_buffer_t* cb =
      cts_begin_command_buffer(f->device, HAL_COMMAND_BUFFER_MODE_ONE_SHOT);
  HAL_ASSERT_OK(
      hal_command_buffer_fill_buffer(cb, buffer, 0, BUFFER_SIZE, &value, 1));
  HAL_ASSERT_OK(hal_command_buffer_end(cb));
  return cb;
}

// A one-shot command buffer copying all of |source| into |target|.
static hal_command_buffer_t* copy_cb(fixture_t* f, hal_buffer_t* source,
                                     hal_buffer_t* target) {
  hal_command_buffer_t* cb =
      cts_begin_command_buffer(f->device, HAL_COMMAND_BUFFER_MODE_ONE_SHOT);
  HAL_ASSERT_OK(
      hal_command_buffer_copy_buffer(cb, source, 0, target, 0, BUFFER_SIZE));
  HAL_ASSERT_OK(hal_command_buffer_end(cb));
  return cb;
}

// Submits and drops the caller's reference to |cb| at once.
static void submit_and_release(fixture_t* f, uint32_t queue,
                               hal_semaphore_t* wait, uint64_t wait_value,
                               hal_command_buffer_t* cb,
                               hal_semaphore_t* signal, uint64_t signal_value) {
  HAL_ASSERT_OK(
      cts_submit(f->device, queue, wait, wait_value, cb, signal, signal_value));
  hal_command_buffer_release(cb);
}

static bool reached_now(hal_semaphore_t* semaphore, uint64_t value) {
  return hal_status_consume_code(hal_semaphore_wait(
             semaphore, value, hal_immediate_timeout())) == HAL_STATUS_OK;
}

CTS_CASE(Submit_WithNoCommandBuffers) {
  fixture_t* f = *state;
  HAL_ASSERT_OK(hal_device_queue_barrier(f->device, f->q0, NULL, NULL));
  hal_semaphore_t* s = cts_create_semaphore(f->device, 0);
  HAL_ASSERT_OK(cts_submit(f->device, f->q0, NULL, 0, NULL, s, 1));
  HAL_ASSERT_OK(cts_wait(s, 1));
  hal_semaphore_release(s);
}

CTS_CASE(Submit_Signals) {
  fixture_t* f = *state;
  hal_semaphore_t* s = cts_create_semaphore(f->device, 0);
  submit_and_release(f, f->q0, NULL, 0, fill_cb(f, f->a, 0x11), s, 1);
  HAL_ASSERT_OK(cts_wait(s, 1));
  assert_int_equal(cts_query(s), 1);
  cts_expect_bytes(f->a, 0, BUFFER_SIZE, 0x11);
  hal_semaphore_release(s);
}

CTS_CASE(Submit_WithWait) {
  fixture_t* f = *state;
  hal_semaphore_t* w = cts_create_semaphore(f->device, 0);
  hal_semaphore_t* s = cts_create_semaphore(f->device, 0);
  submit_and_release(f, f->q0, w, 1, fill_cb(f, f->a, 0x22), s, 1);
  // The work holds until the host signals its wait.
  hal_sleep_until(hal_time_now() + 10 * 1000 * 1000);
  assert_false(reached_now(s, 1));
  cts_expect_bytes(f->a, 0, BUFFER_SIZE, 0);
  HAL_ASSERT_OK(hal_semaphore_signal(w, 1));
  HAL_ASSERT_OK(cts_wait(s, 1));
  cts_expect_bytes(f->a, 0, BUFFER_SIZE, 0x22);
  hal_semaphore_release(w);
  hal_semaphore_release(s);
}

CTS_CASE(Submit_WithMultipleSemaphores) {
  fixture_t* f = *state;
  hal_semaphore_t* w1 = cts_create_semaphore(f->device, 0);
  hal_semaphore_t* w2 = cts_create_semaphore(f->device, 0);
  hal_semaphore_t* s1 = cts_create_semaphore(f->device, 0);
  hal_semaphore_t* s2 = cts_create_semaphore(f->device, 5);
  hal_semaphore_t* waits[] = {w1, w2};
  uint64_t wait_values[] = {1, 2};
  hal_semaphore_t* signals[] = {s1, s2};
  uint64_t signal_values[] = {1, 6};
  hal_semaphore_list_t wait_list = {2, waits, wait_values};
  hal_semaphore_list_t signal_list = {2, signals, signal_values};
  hal_command_buffer_t* cb = fill_cb(f, f->a, 0x33);
  HAL_ASSERT_OK(hal_device_queue_execute(f->device, f->q0, &wait_list,
                                         &signal_list, 1, &cb));
  hal_command_buffer_release(cb);
  HAL_ASSERT_OK(hal_semaphore_signal(w1, 1));
  hal_sleep_until(hal_time_now() + 5 * 1000 * 1000);
  assert_false(reached_now(s1, 1));  // still waits on w2
  HAL_ASSERT_OK(hal_semaphore_signal(w2, 2));
  hal_semaphore_list_t all = signal_list;
  HAL_ASSERT_OK(hal_device_wait_semaphores(
      f->device, HAL_WAIT_MODE_ALL, &all,
      hal_make_timeout_ns(60ll * 1000 * 1000 * 1000)));
  assert_int_equal(cts_query(s1), 1);
  assert_int_equal(cts_query(s2), 6);
  cts_expect_bytes(f->a, 0, BUFFER_SIZE, 0x33);
  hal_semaphore_release(w1);
  hal_semaphore_release(w2);
  hal_semaphore_release(s1);
  hal_semaphore_release(s2);
}

CTS_CASE(Submit_WaitAllHostAndDeviceSemaphores) {
  fixture_t* f = *state;
  hal_semaphore_t* host = cts_create_semaphore(f->device, 0);
  hal_semaphore_t* dev = cts_create_semaphore(f->device, 0);
  submit_and_release(f, f->q0, NULL, 0, fill_cb(f, f->a, 0x44), dev, 1);
  HAL_ASSERT_OK(hal_semaphore_signal(host, 1));
  hal_semaphore_t* list[] = {host, dev};
  uint64_t values[] = {1, 1};
  hal_semaphore_list_t wait = {2, list, values};
  HAL_ASSERT_OK(hal_device_wait_semaphores(
      f->device, HAL_WAIT_MODE_ALL, &wait,
      hal_make_timeout_ns(60ll * 1000 * 1000 * 1000)));
  cts_expect_bytes(f->a, 0, BUFFER_SIZE, 0x44);
  hal_semaphore_release(host);
  hal_semaphore_release(dev);
}

CTS_CASE(Submit_WaitAnyHostAndDeviceSemaphoresAndDeviceSignals) {
  fixture_t* f = *state;
  hal_semaphore_t* host = cts_create_semaphore(f->device, 0);
  hal_semaphore_t* dev = cts_create_semaphore(f->device, 0);
  submit_and_release(f, f->q0, NULL, 0, fill_cb(f, f->a, 0x55), dev, 1);
  hal_semaphore_t* list[] = {host, dev};
  uint64_t values[] = {1, 1};
  hal_semaphore_list_t wait = {2, list, values};
  HAL_ASSERT_OK(hal_device_wait_semaphores(
      f->device, HAL_WAIT_MODE_ANY, &wait,
      hal_make_timeout_ns(60ll * 1000 * 1000 * 1000)));
  assert_int_equal(cts_query(dev), 1);
  assert_int_equal(cts_query(host), 0);
  cts_expect_bytes(f->a, 0, BUFFER_SIZE, 0x55);
  hal_semaphore_release(host);
  hal_semaphore_release(dev);
}

CTS_CASE(Submit_WaitAnyHostAndDeviceSemaphoresAndHostSignals) {
  fixture_t* f = *state;
  hal_semaphore_t* host = cts_create_semaphore(f->device, 0);
  hal_semaphore_t* blocker = cts_create_semaphore(f->device, 0);
  hal_semaphore_t* dev = cts_create_semaphore(f->device, 0);
  submit_and_release(f, f->q0, blocker, 1, fill_cb(f, f->a, 0x66), dev, 1);
  HAL_ASSERT_OK(hal_semaphore_signal(host, 1));
  hal_semaphore_t* list[] = {host, dev};
  uint64_t values[] = {1, 1};
  hal_semaphore_list_t wait = {2, list, values};
  HAL_ASSERT_OK(hal_device_wait_semaphores(
      f->device, HAL_WAIT_MODE_ANY, &wait,
      hal_make_timeout_ns(60ll * 1000 * 1000 * 1000)));
  assert_int_equal(cts_query(dev), 0);  // the device work still waits
  HAL_ASSERT_OK(hal_semaphore_signal(blocker, 1));
  HAL_ASSERT_OK(cts_wait(dev, 1));
  cts_expect_bytes(f->a, 0, BUFFER_SIZE, 0x66);
  hal_semaphore_release(host);
  hal_semaphore_release(blocker);
  hal_semaphore_release(dev);
}

CTS_CASE(Submit_IntermediateSemaphoreBetweenDeviceBatches) {
  fixture_t* f = *state;
  hal_semaphore_t* s1 = cts_create_semaphore(f->device, 0);
  hal_semaphore_t* s2 = cts_create_semaphore(f->device, 0);
  submit_and_release(f, f->q0, NULL, 0, fill_cb(f, f->a, 0x77), s1, 1);
  submit_and_release(f, f->q0, s1, 1, copy_cb(f, f->a, f->b), s2, 1);
  HAL_ASSERT_OK(cts_wait(s2, 1));
  cts_expect_bytes(f->b, 0, BUFFER_SIZE, 0x77);
  hal_semaphore_release(s1);
  hal_semaphore_release(s2);
}

CTS_CASE(Submit_TwoBatchesWaitingOn1FormerBatchAmongst2) {
  fixture_t* f = *state;
  hal_buffer_t* c =
      cts_allocate_buffer(f->device, HAL_MEMORY_TYPE_DEVICE_LOCAL, BUFFER_SIZE);
  hal_semaphore_t* s_first = cts_create_semaphore(f->device, 0);
  hal_semaphore_t* s_other = cts_create_semaphore(f->device, 0);
  hal_semaphore_t* s_b = cts_create_semaphore(f->device, 0);
  hal_semaphore_t* s_c = cts_create_semaphore(f->device, 0);
  submit_and_release(f, f->q0, NULL, 0, fill_cb(f, f->a, 0x12), s_first, 1);
  submit_and_release(f, f->q1, NULL, 0, NULL, s_other, 1);
  submit_and_release(f, f->q0, s_first, 1, copy_cb(f, f->a, f->b), s_b, 1);
  submit_and_release(f, f->q1, s_first, 1, copy_cb(f, f->a, c), s_c, 1);
  HAL_ASSERT_OK(cts_wait(s_b, 1));
  HAL_ASSERT_OK(cts_wait(s_c, 1));
  HAL_ASSERT_OK(cts_wait(s_other, 1));
  cts_expect_bytes(f->b, 0, BUFFER_SIZE, 0x12);
  cts_expect_bytes(c, 0, BUFFER_SIZE, 0x12);
  hal_semaphore_release(s_first);
  hal_semaphore_release(s_other);
  hal_semaphore_release(s_b);
  hal_semaphore_release(s_c);
  hal_buffer_release(c);
}

CTS_CASE(Submit_TwoBatchesWaitingOnDifferentSemaphoreValues) {
  fixture_t* f = *state;
  hal_semaphore_t* s = cts_create_semaphore(f->device, 0);
  hal_semaphore_t* done1 = cts_create_semaphore(f->device, 0);
  hal_semaphore_t* done2 = cts_create_semaphore(f->device, 0);
  submit_and_release(f, f->q0, s, 1, fill_cb(f, f->a, 0x21), done1, 1);
  submit_and_release(f, f->q1, s, 2, fill_cb(f, f->b, 0x22), done2, 1);
  HAL_ASSERT_OK(hal_semaphore_signal(s, 1));
  HAL_ASSERT_OK(cts_wait(done1, 1));
  hal_sleep_until(hal_time_now() + 5 * 1000 * 1000);
  assert_false(reached_now(done2, 1));
  HAL_ASSERT_OK(hal_semaphore_signal(s, 2));
  HAL_ASSERT_OK(cts_wait(done2, 1));
  cts_expect_bytes(f->a, 0, BUFFER_SIZE, 0x21);
  cts_expect_bytes(f->b, 0, BUFFER_SIZE, 0x22);
  hal_semaphore_release(s);
  hal_semaphore_release(done1);
  hal_semaphore_release(done2);
}

CTS_CASE(Submit_BatchWaitingOnAnotherAndHostSignal) {
  fixture_t* f = *state;
  hal_semaphore_t* device_done = cts_create_semaphore(f->device, 0);
  hal_semaphore_t* host = cts_create_semaphore(f->device, 0);
  hal_semaphore_t* done = cts_create_semaphore(f->device, 0);
  submit_and_release(f, f->q0, NULL, 0, fill_cb(f, f->a, 0x31), device_done, 1);
  hal_semaphore_t* waits[] = {device_done, host};
  uint64_t values[] = {1, 1};
  hal_semaphore_list_t wait_list = {2, waits, values};
  hal_semaphore_t* signal = done;
  uint64_t one = 1;
  hal_semaphore_list_t signal_list = {1, &signal, &one};
  hal_command_buffer_t* cb = copy_cb(f, f->a, f->b);
  HAL_ASSERT_OK(hal_device_queue_execute(f->device, f->q1, &wait_list,
                                         &signal_list, 1, &cb));
  hal_command_buffer_release(cb);
  HAL_ASSERT_OK(cts_wait(device_done, 1));
  hal_sleep_until(hal_time_now() + 5 * 1000 * 1000);
  assert_false(reached_now(done, 1));
  HAL_ASSERT_OK(hal_semaphore_signal(host, 1));
  HAL_ASSERT_OK(cts_wait(done, 1));
  cts_expect_bytes(f->b, 0, BUFFER_SIZE, 0x31);
  hal_semaphore_release(device_done);
  hal_semaphore_release(host);
  hal_semaphore_release(done);
}

CTS_CASE(Submit_DeviceBatchSignalAnotherAndHost) {
  fixture_t* f = *state;
  hal_semaphore_t* to_device = cts_create_semaphore(f->device, 0);
  hal_semaphore_t* to_host = cts_create_semaphore(f->device, 0);
  hal_semaphore_t* done = cts_create_semaphore(f->device, 0);
  hal_semaphore_t* signals[] = {to_device, to_host};
  uint64_t values[] = {1, 1};
  hal_semaphore_list_t signal_list = {2, signals, values};
  hal_command_buffer_t* cb = fill_cb(f, f->a, 0x41);
  HAL_ASSERT_OK(
      hal_device_queue_execute(f->device, f->q0, NULL, &signal_list, 1, &cb));
  hal_command_buffer_release(cb);
  submit_and_release(f, f->q1, to_device, 1, copy_cb(f, f->a, f->b), done, 1);
  HAL_ASSERT_OK(cts_wait(to_host, 1));
  cts_expect_bytes(f->a, 0, BUFFER_SIZE, 0x41);
  HAL_ASSERT_OK(cts_wait(done, 1));
  cts_expect_bytes(f->b, 0, BUFFER_SIZE, 0x41);
  hal_semaphore_release(to_device);
  hal_semaphore_release(to_host);
  hal_semaphore_release(done);
}

// A batch waits for value 3 of a semaphore the host moves to 8 (past the
// waited value), before or after the batch is submitted.
static void wait_on_smaller_value(fixture_t* f, bool signal_first,
                                  uint8_t value) {
  hal_semaphore_t* s = cts_create_semaphore(f->device, 0);
  hal_semaphore_t* done = cts_create_semaphore(f->device, 0);
  if (signal_first)
    HAL_ASSERT_OK(hal_semaphore_signal(s, 8));
  submit_and_release(f, f->q0, s, 3, fill_cb(f, f->a, value), done, 1);
  if (!signal_first)
    HAL_ASSERT_OK(hal_semaphore_signal(s, 8));
  HAL_ASSERT_OK(cts_wait(done, 1));
  cts_expect_bytes(f->a, 0, BUFFER_SIZE, value);
  hal_semaphore_release(s);
  hal_semaphore_release(done);
}

CTS_CASE(Submit_BatchWaitingOnSmallerValueAfterSignaled) {
  wait_on_smaller_value(*state, /*signal_first=*/true, 0x51);
}

CTS_CASE(Submit_BatchWaitingOnSmallerValueBeforeSignaled) {
  wait_on_smaller_value(*state, /*signal_first=*/false, 0x52);
}

// K4: the waiter is submitted before its signaler, on another queue; it must
// observe the signaler's writes.
CTS_CASE(Submit_WaitBeforeSignalAcrossQueues) {
  fixture_t* f = *state;
  hal_semaphore_t* s = cts_create_semaphore(f->device, 0);
  hal_semaphore_t* done = cts_create_semaphore(f->device, 0);
  submit_and_release(f, f->q1, s, 1, copy_cb(f, f->a, f->b), done, 1);
  hal_sleep_until(hal_time_now() + 2 * 1000 * 1000);
  submit_and_release(f, f->q0, NULL, 0, fill_cb(f, f->a, 0x5A), s, 1);
  HAL_ASSERT_OK(cts_wait(done, 1));
  cts_expect_bytes(f->b, 0, BUFFER_SIZE, 0x5A);
  hal_semaphore_release(s);
  hal_semaphore_release(done);
}

// A chain hopping between queues, submitted back to front (every hop waits
// before its signal exists) and started by one host signal. Hop i writes
// byte i; the data is checked at the end.
CTS_CASE(Submit_ChainAcrossQueues) {
  fixture_t* f = *state;
  enum { kHops = 48 };
  hal_semaphore_t* s = cts_create_semaphore(f->device, 0);
  for (int i = kHops - 1; i >= 0; --i) {
    hal_command_buffer_t* cb =
        cts_begin_command_buffer(f->device, HAL_COMMAND_BUFFER_MODE_ONE_SHOT);
    uint8_t value = (uint8_t)(i + 1);
    HAL_ASSERT_OK(
        hal_command_buffer_update_buffer(cb, &value, 0, f->a, (uint64_t)i, 1));
    if (i > 0) {
      // Copy the previous hop's byte too: order matters.
      HAL_ASSERT_OK(hal_command_buffer_copy_buffer(cb, f->a, (uint64_t)i - 1,
                                                   f->b, (uint64_t)i - 1, 1));
    }
    HAL_ASSERT_OK(hal_command_buffer_end(cb));
    submit_and_release(f, (i % 2) ? f->q1 : f->q0, s, (uint64_t)i + 1, cb, s,
                       (uint64_t)i + 2);
  }
  HAL_ASSERT_OK(hal_semaphore_signal(s, 1));
  HAL_ASSERT_OK(cts_wait(s, kHops + 1));
  uint8_t a[kHops], b[kHops];
  HAL_ASSERT_OK(hal_buffer_read(f->a, 0, a, kHops));
  HAL_ASSERT_OK(hal_buffer_read(f->b, 0, b, kHops));
  for (int i = 0; i < kHops; ++i) {
    assert_int_equal(a[i], i + 1);
    if (i < kHops - 1)
      assert_int_equal(b[i], i + 1);
  }
  hal_semaphore_release(s);
}

// K10: a failed semaphore mid-chain fails every downstream signal; every
// waiter returns; no downstream work runs.
// |status| is borrowed: OK or not, the call has nothing to do.
static hal_status_t signal_order_host_call(void* user_data,
                                           hal_status_t status) {
  (void)user_data;
  (void)status;
  return HAL_OK;
}

// A submission's signals are made one at a time in the order of its list
// (device.h): once its signal of an entry ends a wait, every entry before
// it is made already, reached or failed alike, whatever the kind of work
// (a command buffer, none, a queue op, a host call). Each position's
// semaphore kind (host or device) and value, the work's kind and its
// failure are random, from HAL_TEST_SEED.
CTS_CASE(Submit_SignalsAreMadeInListOrder) {
  fixture_t* f = *state;
  cts_random_t random = cts_random_make(0x5167);
  const uint32_t rounds = cts_iterations(200);
  enum { kCount = 4 };
  for (uint32_t round = 1; round <= rounds; ++round) {
    hal_semaphore_t* gate = cts_create_semaphore(f->device, 0);
    hal_semaphore_t* signals[kCount];
    uint64_t values[kCount];
    for (int i = 0; i < kCount; ++i) {
      // Half device semaphores, half host ones, in a random list order.
      signals[i] = cts_random_below(&random, 2)
                       ? cts_create_semaphore(f->device, 0)
                       : NULL;
      if (!signals[i]) {
        HAL_ASSERT_OK(
            hal_semaphore_create_host(hal_allocator_system(), 0, &signals[i]));
      }
      values[i] = 1 + cts_random_below(&random, 3);
    }
    uint64_t one = 1;
    hal_semaphore_list_t waits = {1, &gate, &one};
    hal_semaphore_list_t signal_list = {kCount, signals, values};
    uint32_t queue = cts_random_below(&random, 2) ? f->q0 : f->q1;
    uint32_t kind = cts_random_below(&random, 4);
    bool fails = cts_random_below(&random, 4) == 0;
    uint8_t pattern = (uint8_t)round;
    if (kind == 0) {
      hal_command_buffer_t* cb = fill_cb(f, f->a, pattern);
      HAL_ASSERT_OK(hal_device_queue_execute(f->device, queue, &waits,
                                             &signal_list, 1, &cb));
      hal_command_buffer_release(cb);
    } else if (kind == 1) {
      HAL_ASSERT_OK(hal_device_queue_execute(f->device, queue, &waits,
                                             &signal_list, 0, NULL));
    } else if (kind == 2) {
      HAL_ASSERT_OK(hal_device_queue_fill(f->device, queue, &waits,
                                          &signal_list, f->a, 0, BUFFER_SIZE,
                                          &pattern, 1));
    } else {
      HAL_ASSERT_OK(hal_device_queue_host_call(f->device, queue, &waits,
                                               &signal_list,
                                               signal_order_host_call, NULL));
    }
    if (fails) {
      hal_semaphore_fail(gate, hal_make_status(HAL_STATUS_ABORTED, "gate"));
    } else {
      HAL_ASSERT_OK(hal_semaphore_signal(gate, 1));
    }
    hal_status_t last = cts_wait(signals[kCount - 1], values[kCount - 1]);
    if (fails) {
      HAL_ASSERT_STATUS(HAL_STATUS_ABORTED, "gate", last);
    } else {
      HAL_ASSERT_OK(last);
    }
    for (int i = 0; i < kCount - 1; ++i) {
      uint64_t value = 0;
      hal_status_t status = hal_semaphore_query(signals[i], &value);
      if (fails) {
        if (!hal_status_is(status, HAL_STATUS_ABORTED)) {
          fail_msg(
              "round %u (kind %u): entry %d of the list not failed yet "
              "when the last one had (%s)",
              round, kind, i, hal_status_message(status));
        }
        hal_status_free(status);
      } else {
        HAL_ASSERT_OK(status);
        if (value < values[i]) {
          fail_msg("round %u (kind %u): entry %d of the list at %" PRIu64
                   ", below its %" PRIu64 ", when the last one was reached",
                   round, kind, i, value, values[i]);
        }
      }
    }
    for (int i = 0; i < kCount; ++i)
      hal_semaphore_release(signals[i]);
    hal_semaphore_release(gate);
  }
}

CTS_CASE(Submit_FailurePropagates) {
  fixture_t* f = *state;
  hal_semaphore_t* s1 = cts_create_semaphore(f->device, 0);
  hal_semaphore_t* s2 = cts_create_semaphore(f->device, 0);
  hal_semaphore_t* s3 = cts_create_semaphore(f->device, 0);
  submit_and_release(f, f->q0, s1, 1, fill_cb(f, f->a, 0x61), s2, 1);
  submit_and_release(f, f->q1, s2, 1, fill_cb(f, f->b, 0x62), s3, 1);
  hal_semaphore_fail(s1,
                     hal_make_status(HAL_STATUS_DATA_LOSS, "upstream broke"));
  HAL_ASSERT_STATUS(HAL_STATUS_DATA_LOSS, "upstream broke", cts_wait(s2, 1));
  HAL_ASSERT_STATUS(HAL_STATUS_DATA_LOSS, "upstream broke", cts_wait(s3, 1));
  cts_expect_bytes(f->a, 0, BUFFER_SIZE, 0);  // never ran
  cts_expect_bytes(f->b, 0, BUFFER_SIZE, 0);
  hal_semaphore_release(s1);
  hal_semaphore_release(s2);
  hal_semaphore_release(s3);
}

// A failure handed down a long chain (each semaphore keeps its own copy,
// annotated by the work it failed) stays a bounded message that still
// names the cause: memory and time linear in the chain, not quadratic.
CTS_CASE(Submit_FailureDownALongChainKeepsABoundedMessage) {
  fixture_t* f = *state;
  enum { kLinks = 1500 };
  hal_semaphore_t** chain = calloc(kLinks + 1, sizeof(*chain));
  assert_non_null(chain);
  for (int i = 0; i <= kLinks; ++i)
    chain[i] = cts_create_semaphore(f->device, 0);
  for (int i = 0; i < kLinks; ++i) {
    HAL_ASSERT_OK(cts_submit(f->device, i % 2 ? f->q1 : f->q0, chain[i], 1,
                             NULL, chain[i + 1], 1));
  }
  hal_semaphore_fail(chain[0],
                     hal_make_status(HAL_STATUS_DATA_LOSS, "upstream broke"));
  for (int i = 1; i <= kLinks; ++i) {
    hal_status_t status = cts_wait(chain[i], 1);
    assert_int_equal(hal_status_code(status), HAL_STATUS_DATA_LOSS);
    const char* message = hal_status_message(status);
    if (strlen(message) > HAL_STATUS_MESSAGE_MAX ||
        !strstr(message, "upstream broke")) {
      fail_msg("link %d: %zu bytes, %s the cause", i, strlen(message),
               strstr(message, "upstream broke") ? "naming" : "not naming");
    }
    hal_status_free(status);
  }
  for (int i = 0; i <= kLinks; ++i)
    hal_semaphore_release(chain[i]);
  free(chain);
}

static hal_status_t count_host_call(void* user_data, hal_status_t status) {
  if (status == HAL_OK)
    atomic_fetch_add((atomic_int*)user_data, 1);
  return HAL_OK;
}

// S2: work waiting on two semaphores, one of them reached and then failed
// while the other kept the work parked, never runs once the other comes:
// the failure is known when it is issued, as for the same work submitted
// after the failure. A fill and a host call; their signals fail naming it.
CTS_CASE(Submit_ReachedWaitThatFailsBeforeIssueFailsTheWork) {
  fixture_t* f = *state;
  hal_semaphore_t* gate = cts_create_semaphore(f->device, 0);
  hal_semaphore_t* reached = cts_create_semaphore(f->device, 0);
  hal_semaphore_t* fill_done = cts_create_semaphore(f->device, 0);
  hal_semaphore_t* call_done = cts_create_semaphore(f->device, 0);
  hal_semaphore_t* waits[2] = {gate, reached};
  uint64_t ones[2] = {1, 1};
  hal_semaphore_list_t wait_list = {2, waits, ones};
  hal_semaphore_list_t fill_signal = {1, &fill_done, ones};
  hal_semaphore_list_t call_signal = {1, &call_done, ones};
  hal_command_buffer_t* fill = fill_cb(f, f->a, 0x63);
  HAL_ASSERT_OK(hal_device_queue_execute(f->device, f->q1, &wait_list,
                                         &fill_signal, 1, &fill));
  hal_command_buffer_release(fill);
  atomic_int ran = 0;
  HAL_ASSERT_OK(hal_device_queue_host_call(
      f->device, f->q0, &wait_list, &call_signal, count_host_call, &ran));
  HAL_ASSERT_OK(hal_semaphore_signal(reached, 1));
  hal_semaphore_fail(reached,
                     hal_make_status(HAL_STATUS_DATA_LOSS, "failed after 1"));
  HAL_ASSERT_OK(hal_semaphore_signal(gate, 1));
  HAL_ASSERT_STATUS(HAL_STATUS_DATA_LOSS, "failed after 1",
                    cts_wait(fill_done, 1));
  HAL_ASSERT_STATUS(HAL_STATUS_DATA_LOSS, "failed after 1",
                    cts_wait(call_done, 1));
  assert_int_equal(atomic_load(&ran), 0);
  cts_expect_bytes(f->a, 0, BUFFER_SIZE, 0);  // never ran
  hal_semaphore_release(gate);
  hal_semaphore_release(reached);
  hal_semaphore_release(fill_done);
  hal_semaphore_release(call_done);
}

// Q3: the caller drops every reference it can right after submitting.
CTS_CASE(Submit_ReleaseEverythingRightAfterSubmit) {
  fixture_t* f = *state;
  hal_buffer_t* source =
      cts_allocate_buffer(f->device, HAL_MEMORY_TYPE_DEVICE_LOCAL, BUFFER_SIZE);
  hal_semaphore_t* w = cts_create_semaphore(f->device, 0);
  hal_semaphore_t* middle = cts_create_semaphore(f->device, 0);
  hal_semaphore_t* done = cts_create_semaphore(f->device, 0);
  hal_command_buffer_t* cb =
      cts_begin_command_buffer(f->device, HAL_COMMAND_BUFFER_MODE_ONE_SHOT);
  uint8_t value = 0x7E;
  HAL_ASSERT_OK(
      hal_command_buffer_fill_buffer(cb, source, 0, BUFFER_SIZE, &value, 1));
  HAL_ASSERT_OK(hal_command_buffer_execution_barrier(cb));
  HAL_ASSERT_OK(
      hal_command_buffer_copy_buffer(cb, source, 0, f->b, 0, BUFFER_SIZE));
  HAL_ASSERT_OK(hal_command_buffer_end(cb));
  submit_and_release(f, f->q0, w, 1, cb, middle, 1);
  submit_and_release(f, f->q1, middle, 1, NULL, done, 1);
  hal_buffer_release(source);
  hal_semaphore_release(middle);
  HAL_ASSERT_OK(hal_semaphore_signal(w, 1));
  hal_semaphore_release(w);
  HAL_ASSERT_OK(cts_wait(done, 1));
  cts_expect_bytes(f->b, 0, BUFFER_SIZE, 0x7E);
  hal_semaphore_release(done);
}

// Q4: releasing a device with parked work fails it with CANCELLED; issued
// work completes; nothing hangs.
CTS_CASE(Submit_DeviceReleasedWithWorkParked) {
  hal_device_t* device = cts_create_device(0);
  hal_semaphore_t* never = NULL;
  HAL_ASSERT_OK(hal_semaphore_create_host(hal_allocator_system(), 0, &never));
  hal_semaphore_t* parked = cts_create_semaphore(device, 0);
  hal_semaphore_t* issued = cts_create_semaphore(device, 0);
  HAL_ASSERT_OK(cts_submit(device, 0, never, 1, NULL, parked, 1));
  HAL_ASSERT_OK(cts_submit(device, 0, NULL, 0, NULL, issued, 1));
  hal_device_release(device);
  HAL_ASSERT_STATUS(HAL_STATUS_CANCELLED, NULL, cts_wait(parked, 1));
  HAL_ASSERT_OK(cts_wait(issued, 1));
  hal_semaphore_release(parked);
  hal_semaphore_release(issued);
  hal_semaphore_release(never);
}

// Q4 with resources: the parked work holds a command buffer, which holds a
// buffer, which holds the device. The caller's release must still shut the
// device down (no cycle, K3) and cancel the parked work.
CTS_CASE(Submit_DeviceReleasedWithCommandBuffersParked) {
  hal_device_t* device = cts_create_device(0);
  hal_semaphore_t* never = NULL;
  HAL_ASSERT_OK(hal_semaphore_create_host(hal_allocator_system(), 0, &never));
  hal_semaphore_t* parked = cts_create_semaphore(device, 0);
  hal_buffer_t* buffer =
      cts_allocate_buffer(device, HAL_MEMORY_TYPE_DEVICE_LOCAL, BUFFER_SIZE);
  hal_command_buffer_t* cb =
      cts_begin_command_buffer(device, HAL_COMMAND_BUFFER_MODE_ONE_SHOT);
  uint8_t value = 0x99;
  HAL_ASSERT_OK(
      hal_command_buffer_fill_buffer(cb, buffer, 0, BUFFER_SIZE, &value, 1));
  HAL_ASSERT_OK(hal_command_buffer_end(cb));
  HAL_ASSERT_OK(cts_submit(device, 0, never, 1, cb, parked, 1));
  hal_command_buffer_release(cb);
  hal_device_release(device);  // the buffer still holds the device's memory
  HAL_ASSERT_STATUS(HAL_STATUS_CANCELLED, NULL, cts_wait(parked, 1));
  // The buffer outlives the device's queues and is still readable.
  uint8_t zeros[BUFFER_SIZE] = {0};
  HAL_ASSERT_OK(hal_buffer_write(buffer, 0, zeros, BUFFER_SIZE));
  cts_expect_bytes(buffer, 0, BUFFER_SIZE, 0);  // the fill never ran
  hal_buffer_release(buffer);
  hal_semaphore_release(parked);
  hal_semaphore_release(never);
}

// K2/K12 for devices: a callback running on the device's own completion
// thread drops the caller's last device reference. The shutdown would join
// that thread, so it must happen elsewhere: no hang, no leak.
typedef struct release_in_callback_t {
  hal_device_t* device;
  hal_semaphore_t* ran;  // host semaphore signaled by the callback
} release_in_callback_t;

static void release_device_callback(void* user_data, uint64_t value,
                                    hal_status_t status) {
  release_in_callback_t* job = user_data;
  hal_device_release(job->device);
  hal_status_ignore(hal_semaphore_signal(job->ran, 1));
}

CTS_CASE(Submit_DeviceReleasedFromItsOwnCallback) {
  release_in_callback_t job = {cts_create_device(0), NULL};
  HAL_ASSERT_OK(hal_semaphore_create_host(hal_allocator_system(), 0, &job.ran));
  hal_semaphore_t* done = cts_create_semaphore(job.device, 0);
  hal_buffer_t* buffer =
      cts_allocate_buffer(job.device, HAL_MEMORY_TYPE_DEVICE_LOCAL, 4096);
  hal_command_buffer_t* cb =
      cts_begin_command_buffer(job.device, HAL_COMMAND_BUFFER_MODE_ONE_SHOT);
  uint8_t value = 0x42;
  HAL_ASSERT_OK(hal_command_buffer_fill_buffer(cb, buffer, 0, 4096, &value, 1));
  HAL_ASSERT_OK(hal_command_buffer_end(cb));
  hal_timepoint_t* timepoint = NULL;
  HAL_ASSERT_OK(hal_semaphore_add_callback(done, 1, release_device_callback,
                                           &job, &timepoint));
  HAL_ASSERT_OK(cts_submit(job.device, 0, NULL, 0, cb, done, 1));
  hal_command_buffer_release(cb);
  HAL_ASSERT_OK(cts_wait(job.ran, 1));
  hal_resource_wait_deferred();  // the shutdown ran, elsewhere
  cts_expect_bytes(buffer, 0, 4096, 0x42);
  hal_timepoint_release(timepoint);
  hal_buffer_release(buffer);
  hal_semaphore_release(done);
  hal_semaphore_release(job.ran);
}

// K15/T2: a callback running inside hal_semaphore_signal() or _fail() on a
// user thread drops the last device reference while a parked submission of
// that device waits on the same signal, later in the same batch (the
// callback waits for value 1, the submission for 2). The shutdown must not
// wait for that submission on this thread: the signal returns, the
// submission resolves (it ran, or was cancelled by the shutdown, or failed
// with the trigger), and the device shuts down.
typedef struct release_in_batch_t {
  hal_device_t* device;
  hal_semaphore_t* trigger;  // callback at 1, parked submission at 2
  hal_semaphore_t* ran;      // host semaphore signaled by the callback
  bool fail;                 // fail the trigger instead of signaling it
} release_in_batch_t;

static void release_in_batch_callback(void* user_data, uint64_t value,
                                      hal_status_t status) {
  release_in_batch_t* job = user_data;
  hal_device_release(job->device);
  hal_status_ignore(hal_semaphore_signal(job->ran, 1));
}

static void* release_in_batch_trigger_main(void* arg) {
  release_in_batch_t* job = arg;
  if (job->fail) {
    hal_semaphore_fail(job->trigger,
                       hal_make_status(HAL_STATUS_ABORTED, "trigger failed"));
  } else {
    hal_status_ignore(hal_semaphore_signal(job->trigger, 2));
  }
  return NULL;
}

CTS_CASE(K15_DeviceReleasedFromCallbackInSameBatch) {
  for (int fail = 0; fail < 2; ++fail) {
    release_in_batch_t job = {cts_create_device(0), NULL, NULL, fail != 0};
    HAL_ASSERT_OK(
        hal_semaphore_create_host(hal_allocator_system(), 0, &job.trigger));
    HAL_ASSERT_OK(
        hal_semaphore_create_host(hal_allocator_system(), 0, &job.ran));
    hal_semaphore_t* done = cts_create_semaphore(job.device, 0);
    hal_buffer_t* buffer =
        cts_allocate_buffer(job.device, HAL_MEMORY_TYPE_DEVICE_LOCAL, 4096);
    hal_command_buffer_t* cb =
        cts_begin_command_buffer(job.device, HAL_COMMAND_BUFFER_MODE_ONE_SHOT);
    uint8_t pattern = 0x5A;
    HAL_ASSERT_OK(
        hal_command_buffer_fill_buffer(cb, buffer, 0, 4096, &pattern, 1));
    HAL_ASSERT_OK(hal_command_buffer_end(cb));
    // The callback registers first: one signal notifies in registration
    // order, so A's wait is what the rest of the callback's batch wakes.
    HAL_ASSERT_OK(hal_semaphore_add_callback(
        job.trigger, 1, release_in_batch_callback, &job, NULL));
    HAL_ASSERT_OK(cts_submit(job.device, 0, job.trigger, 2, cb, done, 1));
    hal_command_buffer_release(cb);
    // On another thread, so a deadlock fails the wait below instead of
    // hanging the test.
    pthread_t thread;
    assert_int_equal(
        pthread_create(&thread, NULL, release_in_batch_trigger_main, &job), 0);
    HAL_ASSERT_OK(cts_wait(job.ran, 1));
    pthread_join(thread, NULL);
    hal_status_t status = cts_wait(done, 1);
    if (status != HAL_OK && !hal_status_is(status, HAL_STATUS_CANCELLED) &&
        !(fail && hal_status_is(status, HAL_STATUS_ABORTED))) {
      HAL_ASSERT_OK(status);
    }
    hal_status_free(status);
    hal_resource_wait_deferred();  // the shutdown ran, elsewhere
    hal_buffer_release(buffer);
    hal_semaphore_release(done);
    hal_semaphore_release(job.ran);
    hal_semaphore_release(job.trigger);
  }
}

// S2 against Q4: work parked on a semaphore that has failed was decided by
// that failure when it was published, even though the wait's callback,
// run by the failing thread after it, has not run yet (a callback
// registered first holds that thread in its batch, for a while: the
// release waits for the parked work to retire, which needs that
// callback). A release of the device right after the failure was seen must
// fail the work's signals with the failure that names the cause, not
// CANCELLED.
CTS_CASE(S2_ParkedWorkWithAFailedWaitIsNotCancelledAtRelease) {
  cts_failed_wait_t scene;
  cts_failed_wait_begin(&scene, 2, 300, HAL_STATUS_ABORTED);
  HAL_ASSERT_OK(
      hal_device_queue_barrier(scene.device, 0, &scene.waits, &scene.signals));
  cts_failed_wait_release(&scene);
  cts_failed_wait_end(&scene);
}

// K7: submissions with empty signal lists, then release the device.
CTS_CASE(Submit_WithoutSignalsThenRelease) {
  for (int i = 0; i < 8; ++i) {
    hal_device_t* device = cts_create_device(0);
    hal_buffer_t* buffer =
        cts_allocate_buffer(device, HAL_MEMORY_TYPE_DEVICE_LOCAL, 64);
    hal_command_buffer_t* cb =
        cts_begin_command_buffer(device, HAL_COMMAND_BUFFER_MODE_ONE_SHOT);
    uint32_t pattern = 0xABCDEF01u;
    HAL_ASSERT_OK(
        hal_command_buffer_fill_buffer(cb, buffer, 0, 64, &pattern, 4));
    HAL_ASSERT_OK(hal_command_buffer_end(cb));
    HAL_ASSERT_OK(cts_submit(device, 0, NULL, 0, cb, NULL, 0));
    hal_command_buffer_release(cb);
    hal_buffer_release(buffer);
    hal_device_release(device);
  }
}

// Host waits without a deadline on issued work, on two queues: such a wait
// completes the work it waits for on its own thread (docs/sync-design.md
// "Waiters complete"). Each submission writes one byte and advances its
// queue's timeline; the waits come in a random order, and a wait that
// returns finds its byte and every earlier byte of its queue written
// (completion in issue order, S5, S6).
CTS_CASE(Submit_WaitsWithoutDeadlineSeeTheirWork) {
  fixture_t* f = *state;
  enum { kSubmissions = 64 };
  cts_random_t random = cts_random_make(0x5eed);
  hal_semaphore_t* timelines[2] = {cts_create_semaphore(f->device, 0),
                                   cts_create_semaphore(f->device, 0)};
  uint32_t queues[2] = {f->q0, f->q1};
  uint64_t value_of[kSubmissions];
  uint64_t next[2] = {0, 0};
  for (int i = 0; i < kSubmissions; ++i) {
    int q = i % 2;
    hal_command_buffer_t* cb =
        cts_begin_command_buffer(f->device, HAL_COMMAND_BUFFER_MODE_ONE_SHOT);
    uint8_t byte = (uint8_t)(i + 1);
    HAL_ASSERT_OK(
        hal_command_buffer_update_buffer(cb, &byte, 0, f->a, (uint64_t)i, 1));
    HAL_ASSERT_OK(hal_command_buffer_end(cb));
    value_of[i] = ++next[q];
    submit_and_release(f, queues[q], NULL, 0, cb, timelines[q], value_of[i]);
    if (cts_random_below(&random, 4) != 0)
      continue;
    // Now and then a wait on some submission made so far.
    int k = (int)cts_random_below(&random, (uint32_t)i + 1);
    HAL_ASSERT_OK(hal_semaphore_wait(timelines[k % 2], value_of[k],
                                     hal_infinite_timeout()));
    uint8_t bytes[kSubmissions];
    HAL_ASSERT_OK(hal_buffer_read(f->a, 0, bytes, (uint64_t)k + 1));
    for (int j = k % 2; j <= k; j += 2)
      assert_int_equal(bytes[j], j + 1);
  }
  for (int q = 0; q < 2; ++q) {
    HAL_ASSERT_OK(
        hal_semaphore_wait(timelines[q], next[q], hal_infinite_timeout()));
  }
  uint8_t bytes[kSubmissions];
  HAL_ASSERT_OK(hal_buffer_read(f->a, 0, bytes, kSubmissions));
  for (int i = 0; i < kSubmissions; ++i)
    assert_int_equal(bytes[i], i + 1);
  hal_semaphore_release(timelines[0]);
  hal_semaphore_release(timelines[1]);
}

static void set_when_reached(void* user_data, uint64_t value,
                             hal_status_t status) {
  atomic_store((_Atomic int*)user_data, status == HAL_OK ? 1 : 2);
}

static bool flag_is_set(const void* arg) {
  return atomic_load((_Atomic int*)arg) != 0;
}

// After many waits without a deadline (which complete the work on the
// waiting thread, docs/sync-design.md "Waiters complete"), a queue may stop
// waking its completion thread at issue ("Helped queues"). Work then
// observed otherwise still completes: a value only polled with query, a
// callback, a wait with a deadline. Each is checked after a run of such
// waits, and the bytes every submission wrote at the end.
CTS_CASE(Submit_WorkObservedWithoutHelpingCompletesAfterHelpedWaits) {
  fixture_t* f = *state;
  enum { kRoundTrips = 40, kObservers = 3 };
  hal_semaphore_t* timeline = cts_create_semaphore(f->device, 0);
  uint64_t value = 0;
  uint8_t expected = 0;
  for (int observer = 0; observer < kObservers; ++observer) {
    for (int i = 0; i < kRoundTrips; ++i) {
      expected = (uint8_t)(expected + 1);
      submit_and_release(f, f->q0, NULL, 0, fill_cb(f, f->a, expected),
                         timeline, ++value);
      HAL_ASSERT_OK(
          hal_semaphore_wait(timeline, value, hal_infinite_timeout()));
    }
    expected = (uint8_t)(expected + 1);
    submit_and_release(f, f->q0, NULL, 0, fill_cb(f, f->a, expected), timeline,
                       ++value);
    if (observer == 0) {
      hal_test_value_t poll = {timeline, value};
      assert_true(hal_test_poll_until(hal_test_value_reached, &poll));
    } else if (observer == 1) {
      _Atomic int reached = 0;
      hal_timepoint_t* timepoint = NULL;
      HAL_ASSERT_OK(hal_semaphore_add_callback(
          timeline, value, set_when_reached, (void*)&reached, &timepoint));
      bool fired = hal_test_poll_until(flag_is_set, (const void*)&reached);
      // Not fired: cancelled before |reached| goes out of scope.
      if (!fired)
        hal_timepoint_cancel(timepoint);
      hal_timepoint_release(timepoint);
      assert_true(fired);
      assert_int_equal(atomic_load(&reached), 1);
    } else {
      HAL_ASSERT_OK(hal_semaphore_wait(timeline, value,
                                       hal_make_timeout_ns(30000 * HAL_MS)));
    }
    cts_expect_bytes(f->a, 0, BUFFER_SIZE, expected);
  }
  hal_semaphore_release(timeline);
}

// Unbounded host waits on a thread of their own (they complete work, and
// may hang: a timed wait on the test's thread tells).
typedef struct unbounded_waits_t {
  hal_semaphore_t* semaphores[3];
  uint64_t values[3];
} unbounded_waits_t;

static void* wait_without_deadline_main(void* arg) {
  unbounded_waits_t* waits = (unbounded_waits_t*)arg;
  for (int i = 0; i < 3; ++i) {
    HAL_ASSERT_OK(hal_semaphore_wait(waits->semaphores[i], waits->values[i],
                                     hal_infinite_timeout()));
  }
  return NULL;
}

// Q2 progress, with work completed by the thread that waits for it: the
// check of a device wait at its work's completion (did the signaler
// succeed? S2) runs under the queue's completion turn, and may complete
// the signaler on its own thread ("Waiters complete"), but nothing issued
// after the signaler on its queue. Here s's smallest pending value 7 comes
// from V on q1, issued after Z2 of q0 and waiting for it on the device,
// while Z's wait on s took X's event: completing V from Z's check waited
// for Z2, which only the turn that check holds completes. Odd rounds, a
// host wait without a deadline holds that turn (it completes Z); even
// ones, q0's completion thread; both queues helped first.
CTS_CASE(Q2_DeviceWaitCheckCompletesOnlyItsSignaler) {
  fixture_t* f = *state;
  uint32_t queues[2] = {f->q0, f->q1};
  hal_semaphore_t* warm[2] = {cts_create_semaphore(f->device, 0),
                              cts_create_semaphore(f->device, 0)};
  uint64_t warm_value = 0;
  uint32_t rounds = cts_iterations(16);
  for (uint32_t round = 0; round < rounds; ++round) {
    for (int i = 0; i < 12; ++i) {
      ++warm_value;
      for (int q = 0; q < 2; ++q) {
        HAL_ASSERT_OK(cts_submit(f->device, queues[q], NULL, 0, NULL, warm[q],
                                 warm_value));
        HAL_ASSERT_OK(
            hal_semaphore_wait(warm[q], warm_value, hal_infinite_timeout()));
      }
    }
    hal_semaphore_t* s = cts_create_semaphore(f->device, 0);
    hal_semaphore_t* t = cts_create_semaphore(f->device, 0);
    hal_semaphore_t* u = cts_create_semaphore(f->device, 0);
    HAL_ASSERT_OK(cts_submit(f->device, f->q1, NULL, 0, NULL, s, 10));  // X
    HAL_ASSERT_OK(cts_submit(f->device, f->q0, s, 5, NULL, u, 1));      // Z
    HAL_ASSERT_OK(cts_submit(f->device, f->q0, NULL, 0, NULL, t, 1));   // Z2
    HAL_ASSERT_OK(cts_submit(f->device, f->q1, t, 1, NULL, s, 7));      // V
    unbounded_waits_t waits = {{u, t, s}, {1, 1, 10}};
    pthread_t waiter;
    bool helped = round % 2 == 1;
    if (helped) {
      assert_int_equal(
          pthread_create(&waiter, NULL, wait_without_deadline_main, &waits), 0);
    }
    for (int i = 0; i < 3; ++i) {
      hal_status_t status = cts_wait(waits.semaphores[i], waits.values[i]);
      if (status != HAL_OK) {
        // A deadlock: the device could not be released either.
        fprintf(stderr, "round %u (%s): %s\n", round,
                helped ? "a host wait completes" : "completion threads",
                hal_status_message(status));
        abort();
      }
    }
    if (helped)
      assert_int_equal(pthread_join(waiter, NULL), 0);
    hal_semaphore_release(s);
    hal_semaphore_release(t);
    hal_semaphore_release(u);
  }
  hal_semaphore_release(warm[0]);
  hal_semaphore_release(warm[1]);
}

// S6 across devices: a queue of device 1 waits on a semaphore signaled by a
// queue of device 0 (parked on the host: events of another device are never
// waited on natively). The data goes through the host between devices.
CTS_CASE(Submit_CrossDeviceWait) {
  if (cts_context.device_count < 2) {
    printf("[  SKIP    ] needs 2 devices, the driver has %u\n",
           cts_context.device_count);
    skip();
  }
  fixture_t* f = *state;
  hal_device_t* other = cts_create_device(1);
  hal_buffer_t* remote =
      cts_allocate_buffer(other, HAL_MEMORY_TYPE_DEVICE_LOCAL, BUFFER_SIZE);
  hal_semaphore_t* s = cts_create_semaphore(f->device, 0);
  hal_semaphore_t* done = cts_create_semaphore(other, 0);
  // Submitted first, on device 1: fill waits for device 0's signal.
  hal_command_buffer_t* cb =
      cts_begin_command_buffer(other, HAL_COMMAND_BUFFER_MODE_ONE_SHOT);
  uint8_t value = 0x3C;
  HAL_ASSERT_OK(
      hal_command_buffer_fill_buffer(cb, remote, 0, BUFFER_SIZE, &value, 1));
  HAL_ASSERT_OK(hal_command_buffer_end(cb));
  HAL_ASSERT_OK(cts_submit(other, 0, s, 1, cb, done, 1));
  hal_command_buffer_release(cb);
  hal_sleep_until(hal_time_now() + 2 * 1000 * 1000);
  assert_false(reached_now(done, 1));
  submit_and_release(f, f->q0, NULL, 0, fill_cb(f, f->a, 0x3B), s, 1);
  HAL_ASSERT_OK(cts_wait(done, 1));
  cts_expect_bytes(f->a, 0, BUFFER_SIZE, 0x3B);  // device 0 finished first
  cts_expect_bytes(remote, 0, BUFFER_SIZE, 0x3C);
  hal_semaphore_release(s);
  hal_semaphore_release(done);
  hal_buffer_release(remote);
  hal_device_release(other);
}

// One submission of several command buffers runs them in order: each
// fills a shared range (the last one's value stays) and a slot of its own.
// Counts on both sides of the drivers' cached payload size, twice each, so
// that payloads of every size are recycled and reused.
CTS_CASE(Submit_CommandBuffersRunInOrder) {
  fixture_t* f = *state;
  enum { kShared = 64, kSlot = 16, kMaxCount = 9 };
  static const size_t kCounts[] = {2, 4, 6, 9, 2, 4, 6, 9};
  hal_semaphore_t* s = cts_create_semaphore(f->device, 0);
  uint64_t value = 0;
  for (size_t round = 0; round < HAL_ARRAYSIZE(kCounts); ++round) {
    size_t count = kCounts[round];
    // A distinct byte per round and command buffer.
    uint8_t base = (uint8_t)(round * 16 + 1);
    hal_command_buffer_t* cbs[kMaxCount];
    for (size_t i = 0; i < count; ++i) {
      cbs[i] =
          cts_begin_command_buffer(f->device, HAL_COMMAND_BUFFER_MODE_ONE_SHOT);
      uint8_t byte = (uint8_t)(base + i);
      HAL_ASSERT_OK(
          hal_command_buffer_fill_buffer(cbs[i], f->a, 0, kShared, &byte, 1));
      HAL_ASSERT_OK(hal_command_buffer_fill_buffer(
          cbs[i], f->a, kShared + i * kSlot, kSlot, &byte, 1));
      HAL_ASSERT_OK(hal_command_buffer_end(cbs[i]));
    }
    ++value;
    hal_semaphore_list_t signals = {1, &s, &value};
    HAL_ASSERT_OK(
        hal_device_queue_execute(f->device, f->q0, NULL, &signals, count, cbs));
    for (size_t i = 0; i < count; ++i)
      hal_command_buffer_release(cbs[i]);  // the queue keeps them (Q3)
    HAL_ASSERT_OK(cts_wait(s, value));
    cts_expect_bytes(f->a, 0, kShared, (uint8_t)(base + count - 1));
    for (size_t i = 0; i < count; ++i)
      cts_expect_bytes(f->a, kShared + i * kSlot, kSlot, (uint8_t)(base + i));
  }
  hal_semaphore_release(s);
}

// A host allocator that counts the calls made to it.
typedef struct counted_allocator_t {
  _Atomic uint64_t calls;
} counted_allocator_t;

static void* counted_malloc(void* self, size_t size) {
  atomic_fetch_add(&((counted_allocator_t*)self)->calls, 1);
  return malloc(size);
}

static void* counted_realloc(void* self, void* ptr, size_t size) {
  atomic_fetch_add(&((counted_allocator_t*)self)->calls, 1);
  return realloc(ptr, size);
}

static void counted_free(void* self, void* ptr) {
  (void)self;
  free(ptr);
}

// A warm queue takes nothing from the device's host allocator per
// submission: not for an empty one, one with a command buffer, or a burst
// of them out at once (parked behind a gate, so that each round has the
// same number out; the first round warms the queue, the second is
// counted).
CTS_CASE(Submit_WarmSubmissionsMakeNoHostAllocations) {
  (void)state;
  counted_allocator_t counter = {0};
  hal_allocator_t allocator = {&counter, counted_malloc, counted_realloc,
                               counted_free};
  hal_device_t* device = NULL;
  HAL_ASSERT_OK(hal_driver_create_device_by_index(cts_context.driver, 0,
                                                  allocator, &device));
  hal_semaphore_t* s = cts_create_semaphore(device, 0);
  hal_buffer_t* buffer =
      cts_allocate_buffer(device, HAL_MEMORY_TYPE_DEVICE_LOCAL, BUFFER_SIZE);
  hal_command_buffer_t* cb =
      cts_begin_command_buffer(device, HAL_COMMAND_BUFFER_MODE_REUSABLE);
  uint8_t pattern = 0x5a;
  HAL_ASSERT_OK(
      hal_command_buffer_fill_buffer(cb, buffer, 0, BUFFER_SIZE, &pattern, 1));
  HAL_ASSERT_OK(hal_command_buffer_end(cb));
  uint64_t value = 0;
  for (int round = 0; round < 2; ++round) {
    uint64_t before = atomic_load(&counter.calls);
    for (int i = 0; i < 64; ++i) {
      ++value;
      HAL_ASSERT_OK(
          cts_submit(device, 0, NULL, 0, (i % 2) ? cb : NULL, s, value));
      HAL_ASSERT_OK(cts_wait(s, value));
    }
    hal_semaphore_t* gate = cts_create_semaphore(NULL, 0);
    for (int i = 0; i < 16; ++i) {
      ++value;
      HAL_ASSERT_OK(cts_submit(device, 0, gate, 1, cb, s, value));
    }
    HAL_ASSERT_OK(hal_semaphore_signal(gate, 1));
    HAL_ASSERT_OK(cts_wait(s, value));
    hal_semaphore_release(gate);
    uint64_t calls = atomic_load(&counter.calls) - before;
    if (round == 1) {
      if (calls != 0) {
        print_error("%" PRIu64 " host allocator calls in %d warm submissions\n",
                    calls, 64 + 16);
      }
      assert_int_equal(calls, 0);
    }
  }
  cts_expect_bytes(buffer, 0, BUFFER_SIZE, pattern);
  hal_command_buffer_release(cb);
  hal_buffer_release(buffer);
  hal_semaphore_release(s);
  hal_device_release(device);
}

// Submissions on one queue released by one signal issue in the order they
// were submitted: the work behind the largest signal value runs last, and
// a wait for it sees every earlier submission's writes (S5). Each round
// parks 16 fills of one buffer, each with its own pattern, behind a host
// gate; after the gate opens and the last value is reached, the buffer
// holds the last pattern. Even rounds wait for one gate value; odd rounds
// for decreasing values (submission i for 16 - i), all reached by one
// signal, so neither value order nor heap order may stand in for
// submission order (a signal notifies in registration order:
// hal/sync/semaphore.c).
CTS_CASE(Submit_ReleasedTogetherIssueInSubmissionOrder) {
  fixture_t* f = *state;
  hal_semaphore_t* s = cts_create_semaphore(f->device, 0);
  enum { kBurst = 16, kRounds = 8 };
  hal_command_buffer_t* cbs[kBurst];
  for (int i = 0; i < kBurst; ++i) {
    cbs[i] =
        cts_begin_command_buffer(f->device, HAL_COMMAND_BUFFER_MODE_REUSABLE);
    uint8_t pattern = (uint8_t)(i + 1);
    HAL_ASSERT_OK(hal_command_buffer_fill_buffer(
        cbs[i], f->a, 0, CTS_FIXTURE_BUFFER_SIZE, &pattern, 1));
    HAL_ASSERT_OK(hal_command_buffer_end(cbs[i]));
  }
  uint64_t value = 0;
  for (int round = 0; round < kRounds; ++round) {
    hal_semaphore_t* gate = cts_create_semaphore(NULL, 0);
    for (int i = 0; i < kBurst; ++i) {
      ++value;
      uint64_t gate_value = round % 2 ? (uint64_t)(kBurst - i) : 1;
      HAL_ASSERT_OK(
          cts_submit(f->device, 0, gate, gate_value, cbs[i], s, value));
    }
    HAL_ASSERT_OK(hal_semaphore_signal(gate, kBurst));
    HAL_ASSERT_OK(cts_wait(s, value));
    cts_expect_bytes(f->a, 0, CTS_FIXTURE_BUFFER_SIZE, (uint8_t)kBurst);
    hal_semaphore_release(gate);
  }
  for (int i = 0; i < kBurst; ++i)
    hal_command_buffer_release(cbs[i]);
  hal_semaphore_release(s);
}

// Two submissions of one queue waiting for the same value issue in the
// order they were submitted, though the second arrives after the value's
// signaler was issued (a device wait is possible for it) while the first
// is parked on the host: after the second's signal is reached, the first's
// is too, and the buffer holds the second's pattern. The signaler fills a
// large buffer, so it is still running when the second arrives; it runs on
// the same queue, then on the other.
CTS_CASE(Submit_SameWaitIssuesInSubmissionOrder) {
  fixture_t* f = *state;
  enum { kRounds = 8, kSlowSize = 16 << 20 };
  hal_buffer_t* slow =
      cts_allocate_buffer(f->device, HAL_MEMORY_TYPE_DEVICE_LOCAL, kSlowSize);
  hal_command_buffer_t* slow_fill =
      cts_begin_command_buffer(f->device, HAL_COMMAND_BUFFER_MODE_REUSABLE);
  uint32_t pattern = 0x5EED5EEDu;
  HAL_ASSERT_OK(hal_command_buffer_fill_buffer(slow_fill, slow, 0, kSlowSize,
                                               &pattern, sizeof(pattern)));
  HAL_ASSERT_OK(hal_command_buffer_end(slow_fill));
  for (int round = 0; round < kRounds; ++round) {
    uint32_t signaler_queue = round % 2 ? f->q1 : f->q0;
    hal_semaphore_t* s = cts_create_semaphore(f->device, 0);
    hal_semaphore_t* first_done = cts_create_semaphore(f->device, 0);
    hal_semaphore_t* second_done = cts_create_semaphore(f->device, 0);
    submit_and_release(f, f->q0, s, 1, fill_cb(f, f->a, 0xA1), first_done, 1);
    HAL_ASSERT_OK(
        cts_submit(f->device, signaler_queue, NULL, 0, slow_fill, s, 1));
    submit_and_release(f, f->q0, s, 1, fill_cb(f, f->a, 0xB2), second_done, 1);
    HAL_ASSERT_OK(cts_wait(second_done, 1));
    if (cts_query(first_done) < 1) {
      fail_msg(
          "round %d (signaler on queue %u): the second submission "
          "completed before the first",
          round, signaler_queue);
    }
    HAL_ASSERT_OK(cts_wait(first_done, 1));
    cts_expect_bytes(f->a, 0, BUFFER_SIZE, 0xB2);
    hal_semaphore_release(s);
    hal_semaphore_release(first_done);
    hal_semaphore_release(second_done);
  }
  hal_command_buffer_release(slow_fill);
  hal_buffer_release(slow);
}

// The same two submissions, the signaler an empty submission on the other
// queue, the second submitted after a random spin: it lands before, during
// and after the completion thread's signal that releases the first (the
// value published, the first still being handed to its queue). It must
// still complete after the first, whichever way its wait resolves
// (parked, device wait, value already reached).
CTS_CASE(Submit_SameWaitRacingItsSignalIssuesInOrder) {
  fixture_t* f = *state;
  cts_random_t random = cts_random_make(18);
  uint32_t rounds = cts_iterations(1000);
  uint32_t out_of_order = 0;
  for (uint32_t round = 0; round < rounds; ++round) {
    hal_semaphore_t* s = cts_create_semaphore(f->device, 0);
    hal_semaphore_t* first_done = cts_create_semaphore(f->device, 0);
    hal_semaphore_t* second_done = cts_create_semaphore(f->device, 0);
    submit_and_release(f, f->q0, s, 1, NULL, first_done, 1);
    HAL_ASSERT_OK(cts_submit(f->device, f->q1, NULL, 0, NULL, s, 1));
    uint32_t spin = cts_random_below(&random, 40000);
    for (volatile uint32_t i = 0; i < spin; ++i) {
    }
    submit_and_release(f, f->q0, s, 1, NULL, second_done, 1);
    HAL_ASSERT_OK(cts_wait(second_done, 1));
    out_of_order += cts_query(first_done) < 1;
    HAL_ASSERT_OK(cts_wait(first_done, 1));
    hal_semaphore_release(s);
    hal_semaphore_release(first_done);
    hal_semaphore_release(second_done);
  }
  if (out_of_order) {
    fail_msg(
        "the second submission completed before the first in %u of %u "
        "rounds",
        out_of_order, rounds);
  }
}

// The window of the case above, held open: a callback registered first on
// the gate blocks inside the signal's batch, before the first submission's
// wait is notified. Meanwhile the second submission (same queue, same
// wait) arrives and finds the value reached, and a second signal of the
// gate runs to completion. The second submission must still wait for the
// first: not issued at submit, not released by the second signal.
CTS_CASE(Submit_SameWaitDuringItsReleaseIssuesInOrder) {
  fixture_t* f = *state;
  hal_semaphore_t* gate = cts_create_semaphore(NULL, 0);
  hal_semaphore_t* first_done = cts_create_semaphore(f->device, 0);
  hal_semaphore_t* second_done = cts_create_semaphore(f->device, 0);
  cts_held_signal_t held;
  cts_held_signal_begin(&held, gate);
  submit_and_release(f, f->q0, gate, 1, fill_cb(f, f->a, 0xA1), first_done, 1);
  cts_held_signal_start(&held);
  submit_and_release(f, f->q0, gate, 1, fill_cb(f, f->a, 0xB2), second_done, 1);
  HAL_ASSERT_OK(hal_semaphore_signal(gate, 2));
  // Time for a wrong order to show: the second issued and complete.
  hal_sleep_until(hal_time_now() + 20 * 1000 * 1000);
  bool second_early = cts_query(second_done) >= 1;
  cts_held_signal_finish(&held);
  HAL_ASSERT_OK(cts_wait(second_done, 1));
  if (second_early || cts_query(first_done) < 1) {
    fail_msg("the second submission completed before the first (%s)",
             second_early ? "while the first was being released"
                          : "after the release");
  }
  HAL_ASSERT_OK(cts_wait(first_done, 1));
  cts_expect_bytes(f->a, 0, BUFFER_SIZE, 0xB2);
  hal_semaphore_release(gate);
  hal_semaphore_release(first_done);
  hal_semaphore_release(second_done);
}

static void signal_gate_to_2_callback(void* user_data, uint64_t value,
                                      hal_status_t status) {
  if (status == HAL_OK)
    hal_status_ignore(hal_semaphore_signal((hal_semaphore_t*)user_data, 2));
}

// A signal during another's release: the first signal's batch holds a
// callback (registered first) that signals the gate again, then the first
// submission's wait at 1; the nested signal reaches the second's wait at 2
// (same queue, submitted after). The second must not be handed over, and
// issued, before the first.
CTS_CASE(Submit_LaterSignalDuringReleaseIssuesInOrder) {
  fixture_t* f = *state;
  for (int round = 0; round < 8; ++round) {
    hal_semaphore_t* gate =
        cts_create_semaphore(round % 2 ? f->device : NULL, 0);
    hal_semaphore_t* first_done = cts_create_semaphore(f->device, 0);
    hal_semaphore_t* second_done = cts_create_semaphore(f->device, 0);
    HAL_ASSERT_OK(hal_semaphore_add_callback(gate, 1, signal_gate_to_2_callback,
                                             gate, NULL));
    submit_and_release(f, f->q0, gate, 1, fill_cb(f, f->a, 0xA1), first_done,
                       1);
    submit_and_release(f, f->q0, gate, 2, fill_cb(f, f->a, 0xB2), second_done,
                       1);
    HAL_ASSERT_OK(hal_semaphore_signal(gate, 1));
    HAL_ASSERT_OK(cts_wait(second_done, 1));
    if (cts_query(first_done) < 1) {
      fail_msg("round %d: the second submission completed before the first",
               round);
    }
    HAL_ASSERT_OK(cts_wait(first_done, 1));
    cts_expect_bytes(f->a, 0, BUFFER_SIZE, 0xB2);
    hal_semaphore_release(gate);
    hal_semaphore_release(first_done);
    hal_semaphore_release(second_done);
  }
}

CTS_CASE(Submit_BadSubmissions) {
  fixture_t* f = *state;
  uint32_t queue_count = hal_device_info(f->device)->queue_count;
  HAL_ASSERT_STATUS(
      HAL_STATUS_OUT_OF_RANGE, "queue index",
      hal_device_queue_barrier(f->device, queue_count, NULL, NULL));
  hal_semaphore_t* s = cts_create_semaphore(f->device, 0);
  hal_semaphore_t* twice[] = {s, s};
  uint64_t values[] = {1, 2};
  hal_semaphore_list_t signals = {2, twice, values};
  HAL_ASSERT_STATUS(
      HAL_STATUS_INVALID_ARGUMENT, NULL,
      hal_device_queue_execute(f->device, 0, NULL, &signals, 0, NULL));
  assert_int_equal(cts_query(s), 0);  // nothing was submitted
  hal_semaphore_release(s);
}

// The test list: CASE binds this program's fixture.
#define CASE(name) CTS_ON_FIXTURE(name)

int main(void) {
  const struct CMUnitTest tests[] = {
      CASE(Submit_WithNoCommandBuffers),
      CASE(Submit_FailureDownALongChainKeepsABoundedMessage),
      CASE(Submit_ReleasedTogetherIssueInSubmissionOrder),
      CASE(Submit_SameWaitIssuesInSubmissionOrder),
      CASE(Submit_SameWaitRacingItsSignalIssuesInOrder),
      CASE(Submit_SameWaitDuringItsReleaseIssuesInOrder),
      CASE(Submit_LaterSignalDuringReleaseIssuesInOrder),
      CASE(Submit_Signals),
      CASE(Submit_WithWait),
      CASE(Submit_WithMultipleSemaphores),
      CASE(Submit_WaitAllHostAndDeviceSemaphores),
      CASE(Submit_WaitAnyHostAndDeviceSemaphoresAndDeviceSignals),
      CASE(Submit_WaitAnyHostAndDeviceSemaphoresAndHostSignals),
      CASE(Submit_IntermediateSemaphoreBetweenDeviceBatches),
      CASE(Submit_TwoBatchesWaitingOn1FormerBatchAmongst2),
      CASE(Submit_TwoBatchesWaitingOnDifferentSemaphoreValues),
      CASE(Submit_BatchWaitingOnAnotherAndHostSignal),
      CASE(Submit_DeviceBatchSignalAnotherAndHost),
      CASE(Submit_BatchWaitingOnSmallerValueAfterSignaled),
      CASE(Submit_BatchWaitingOnSmallerValueBeforeSignaled),
      CASE(Submit_WaitBeforeSignalAcrossQueues),
      CASE(Submit_ChainAcrossQueues),
      CASE(Submit_SignalsAreMadeInListOrder),
      CASE(Submit_FailurePropagates),
      CASE(Submit_ReachedWaitThatFailsBeforeIssueFailsTheWork),
      CASE(Submit_ReleaseEverythingRightAfterSubmit),
      CASE(Submit_DeviceReleasedWithWorkParked),
      CASE(Submit_DeviceReleasedWithCommandBuffersParked),
      CASE(Submit_DeviceReleasedFromItsOwnCallback),
      CASE(K15_DeviceReleasedFromCallbackInSameBatch),
      CASE(Submit_WithoutSignalsThenRelease),
      CASE(S2_ParkedWorkWithAFailedWaitIsNotCancelledAtRelease),
      CASE(Submit_CrossDeviceWait),
      CASE(Submit_WaitsWithoutDeadlineSeeTheirWork),
      CASE(Submit_WorkObservedWithoutHelpingCompletesAfterHelpedWaits),
      CASE(Q2_DeviceWaitCheckCompletesOnlyItsSignaler),
      CASE(Submit_CommandBuffersRunInOrder),
      CASE(Submit_WarmSubmissionsMakeNoHostAllocations),
      CASE(Submit_BadSubmissions),
  };
  return cts_main("semaphore_submission", tests, HAL_ARRAYSIZE(tests));
}
