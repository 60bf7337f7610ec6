// Copyright 2026 The HAL Authors.
//
// CTS suite "command_buffer": recorded ops run on the device with the
// results each op promises, the recording state machine, reuse.

#include "cts.h"

typedef cts_fixture_t fixture_t;

CTS_CASE(CommandBuffer_FillPatterns) {
  fixture_t* f = *state;
  hal_buffer_t* buffer = cts_zeroed_buffer(f->device, 64);
  hal_command_buffer_t* cb =
      cts_begin_command_buffer(f->device, HAL_COMMAND_BUFFER_MODE_ONE_SHOT);
  uint8_t p8 = 0xA1;
  uint16_t p16 = 0xB2C3;
  uint32_t p32 = 0xD4E5F607u;
  HAL_ASSERT_OK(hal_command_buffer_fill_buffer(cb, buffer, 1, 5, &p8, 1));
  HAL_ASSERT_OK(hal_command_buffer_fill_buffer(cb, buffer, 10, 6, &p16, 2));
  HAL_ASSERT_OK(hal_command_buffer_fill_buffer(cb, buffer, 20, 12, &p32, 4));
  // Offsets and lengths that are not multiples of the pattern are refused.
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, NULL,
                    hal_command_buffer_fill_buffer(cb, buffer, 1, 4, &p16, 2));
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, NULL,
                    hal_command_buffer_fill_buffer(cb, buffer, 4, 6, &p32, 4));
  HAL_ASSERT_OK(hal_command_buffer_end(cb));
  cts_fixture_run(f, 0, cb);
  uint8_t bytes[64];
  HAL_ASSERT_OK(hal_buffer_read(buffer, 0, bytes, 64));
  uint8_t expected[64] = {0};
  memset(expected + 1, 0xA1, 5);
  for (int i = 10; i < 16; i += 2)
    memcpy(expected + i, &p16, 2);
  for (int i = 20; i < 32; i += 4)
    memcpy(expected + i, &p32, 4);
  assert_memory_equal(bytes, expected, 64);
  hal_command_buffer_release(cb);
  hal_buffer_release(buffer);
}

CTS_CASE(CommandBuffer_UpdateCopiesAtRecordTime) {
  fixture_t* f = *state;
  hal_buffer_t* buffer = cts_zeroed_buffer(f->device, 32);
  hal_command_buffer_t* cb =
      cts_begin_command_buffer(f->device, HAL_COMMAND_BUFFER_MODE_ONE_SHOT);
  char* host = strdup("..inline data");
  HAL_ASSERT_OK(hal_command_buffer_update_buffer(cb, host, 2, buffer, 3, 11));
  memset(host, '#', strlen(host));
  free(host);
  HAL_ASSERT_OK(hal_command_buffer_end(cb));
  cts_fixture_run(f, 0, cb);
  char bytes[11];
  HAL_ASSERT_OK(hal_buffer_read(buffer, 3, bytes, 11));
  assert_memory_equal(bytes, "inline data", 11);
  hal_command_buffer_release(cb);
  hal_buffer_release(buffer);
}

CTS_CASE(CommandBuffer_CopyBuffers) {
  fixture_t* f = *state;
  hal_buffer_t* a = cts_zeroed_buffer(f->device, 128);
  hal_buffer_t* b = cts_zeroed_buffer(f->device, 128);
  uint8_t pattern[100];
  for (int i = 0; i < 100; ++i)
    pattern[i] = (uint8_t)(i * 7 + 1);
  HAL_ASSERT_OK(hal_buffer_write(a, 5, pattern, 100));
  hal_command_buffer_t* cb =
      cts_begin_command_buffer(f->device, HAL_COMMAND_BUFFER_MODE_ONE_SHOT);
  HAL_ASSERT_OK(hal_command_buffer_copy_buffer(cb, a, 5, b, 17, 100));
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, "overlaps",
                    hal_command_buffer_copy_buffer(cb, a, 0, a, 10, 20));
  HAL_ASSERT_OK(hal_command_buffer_end(cb));
  cts_fixture_run(f, 0, cb);
  uint8_t bytes[100];
  HAL_ASSERT_OK(hal_buffer_read(b, 17, bytes, 100));
  assert_memory_equal(bytes, pattern, 100);
  cts_expect_bytes(b, 0, 17, 0);
  hal_command_buffer_release(cb);
  hal_buffer_release(a);
  hal_buffer_release(b);
}

// fill A -> barrier -> copy A to B -> barrier -> fill part of A: each op
// sees the one before the barrier.
CTS_CASE(CommandBuffer_ExecutionBarriersOrderDependentOps) {
  fixture_t* f = *state;
  hal_buffer_t* a = cts_zeroed_buffer(f->device, 4096);
  hal_buffer_t* b = cts_zeroed_buffer(f->device, 4096);
  hal_command_buffer_t* cb =
      cts_begin_command_buffer(f->device, HAL_COMMAND_BUFFER_MODE_ONE_SHOT);
  uint8_t first = 0x11, second = 0x22;
  HAL_ASSERT_OK(hal_command_buffer_fill_buffer(cb, a, 0, 4096, &first, 1));
  HAL_ASSERT_OK(hal_command_buffer_execution_barrier(cb));
  HAL_ASSERT_OK(hal_command_buffer_copy_buffer(cb, a, 0, b, 0, 4096));
  HAL_ASSERT_OK(hal_command_buffer_execution_barrier(cb));
  HAL_ASSERT_OK(hal_command_buffer_fill_buffer(cb, a, 0, 2048, &second, 1));
  HAL_ASSERT_OK(hal_command_buffer_end(cb));
  cts_fixture_run(f, 0, cb);
  cts_expect_bytes(b, 0, 4096, 0x11);
  cts_expect_bytes(a, 0, 2048, 0x22);
  cts_expect_bytes(a, 2048, 2048, 0x11);
  hal_command_buffer_release(cb);
  hal_buffer_release(a);
  hal_buffer_release(b);
}

CTS_CASE(CommandBuffer_ReusableSubmittedManyTimes) {
  fixture_t* f = *state;
  hal_buffer_t* counter = cts_zeroed_buffer(f->device, 16);
  hal_buffer_t* scratch = cts_zeroed_buffer(f->device, 16);
  hal_command_buffer_t* cb =
      cts_begin_command_buffer(f->device, HAL_COMMAND_BUFFER_MODE_REUSABLE);
  // Each run: scratch = counter; counter = 0x5 fill over scratch's copy.
  uint8_t value = 0x5;
  HAL_ASSERT_OK(hal_command_buffer_copy_buffer(cb, counter, 0, scratch, 0, 16));
  HAL_ASSERT_OK(hal_command_buffer_execution_barrier(cb));
  HAL_ASSERT_OK(hal_command_buffer_fill_buffer(cb, counter, 0, 16, &value, 1));
  HAL_ASSERT_OK(hal_command_buffer_end(cb));
  for (int i = 0; i < 20; ++i) {
    uint8_t marker[16];
    memset(marker, i, sizeof(marker));
    HAL_ASSERT_OK(hal_buffer_write(counter, 0, marker, 16));
    cts_fixture_run(f, 0, cb);
    cts_expect_bytes(scratch, 0, 16, (uint8_t)i);
    cts_expect_bytes(counter, 0, 16, 0x5);
  }
  hal_command_buffer_release(cb);
  hal_buffer_release(counter);
  hal_buffer_release(scratch);
}

CTS_CASE(CommandBuffer_OneShotSubmittedTwiceIsAnError) {
  fixture_t* f = *state;
  hal_command_buffer_t* cb =
      cts_begin_command_buffer(f->device, HAL_COMMAND_BUFFER_MODE_ONE_SHOT);
  HAL_ASSERT_OK(hal_command_buffer_end(cb));
  cts_fixture_run(f, 0, cb);
  uint64_t before = cts_query(f->timeline);
  HAL_ASSERT_STATUS(
      HAL_STATUS_FAILED_PRECONDITION, "already submitted",
      cts_submit(f->device, 0, NULL, 0, cb, f->timeline, before + 1));
  assert_int_equal(cts_query(f->timeline), before);  // nothing submitted
  hal_command_buffer_release(cb);
}

CTS_CASE(CommandBuffer_RecordingStateMachine) {
  fixture_t* f = *state;
  hal_buffer_t* buffer = cts_zeroed_buffer(f->device, 16);
  hal_command_buffer_t* cb = NULL;
  HAL_ASSERT_OK(hal_device_create_command_buffer(
      f->device, HAL_COMMAND_BUFFER_MODE_ONE_SHOT, &cb));
  uint8_t value = 1;
  HAL_ASSERT_STATUS(
      HAL_STATUS_FAILED_PRECONDITION, "not RECORDING",
      hal_command_buffer_fill_buffer(cb, buffer, 0, 16, &value, 1));
  HAL_ASSERT_STATUS(HAL_STATUS_FAILED_PRECONDITION, NULL,
                    hal_command_buffer_end(cb));
  HAL_ASSERT_STATUS(HAL_STATUS_FAILED_PRECONDITION, NULL,
                    cts_submit(f->device, 0, NULL, 0, cb, NULL, 0));
  HAL_ASSERT_OK(hal_command_buffer_begin(cb));
  HAL_ASSERT_STATUS(HAL_STATUS_FAILED_PRECONDITION, NULL,
                    cts_submit(f->device, 0, NULL, 0, cb, NULL, 0));
  HAL_ASSERT_OK(hal_command_buffer_end(cb));
  HAL_ASSERT_STATUS(HAL_STATUS_FAILED_PRECONDITION, NULL,
                    hal_command_buffer_end(cb));
  cts_fixture_run(f, 0, cb);
  hal_command_buffer_release(cb);
  hal_buffer_release(buffer);
}

CTS_CASE(CommandBuffer_OutOfRangeOpsAreRejected) {
  fixture_t* f = *state;
  hal_buffer_t* buffer = cts_zeroed_buffer(f->device, 16);
  hal_command_buffer_t* cb =
      cts_begin_command_buffer(f->device, HAL_COMMAND_BUFFER_MODE_ONE_SHOT);
  uint32_t value = 1;
  HAL_ASSERT_STATUS(
      HAL_STATUS_OUT_OF_RANGE, NULL,
      hal_command_buffer_fill_buffer(cb, buffer, 8, 12, &value, 4));
  HAL_ASSERT_STATUS(
      HAL_STATUS_OUT_OF_RANGE, NULL,
      hal_command_buffer_update_buffer(cb, &value, 0, buffer, 14, 4));
  HAL_ASSERT_STATUS(
      HAL_STATUS_OUT_OF_RANGE, NULL,
      hal_command_buffer_copy_buffer(cb, buffer, 0, buffer, 12, 8));
  // A length of 0 is accepted up to the buffer's end (an update's data may
  // then be NULL), and past it is out of range too.
  HAL_ASSERT_OK(hal_command_buffer_fill_buffer(cb, buffer, 16, 0, &value, 4));
  HAL_ASSERT_OK(hal_command_buffer_update_buffer(cb, NULL, 0, buffer, 16, 0));
  HAL_ASSERT_OK(hal_command_buffer_copy_buffer(cb, buffer, 16, buffer, 0, 0));
  HAL_ASSERT_STATUS(
      HAL_STATUS_OUT_OF_RANGE, NULL,
      hal_command_buffer_fill_buffer(cb, buffer, 20, 0, &value, 4));
  HAL_ASSERT_STATUS(
      HAL_STATUS_OUT_OF_RANGE, NULL,
      hal_command_buffer_update_buffer(cb, NULL, 0, buffer, 20, 0));
  HAL_ASSERT_STATUS(
      HAL_STATUS_OUT_OF_RANGE, NULL,
      hal_command_buffer_copy_buffer(cb, buffer, 20, buffer, 0, 0));
  hal_command_buffer_info_t info;
  HAL_ASSERT_OK(hal_command_buffer_query_info(cb, &info));
  assert_int_equal(info.op_count, 0);
  HAL_ASSERT_OK(hal_command_buffer_end(cb));
  cts_fixture_run(f, 0, cb);
  cts_expect_bytes(buffer, 0, 16, 0);  // nothing was recorded
  hal_command_buffer_release(cb);
  hal_buffer_release(buffer);
}

CTS_CASE(CommandBuffer_OfAnotherDeviceIsRefused) {
  fixture_t* f = *state;
  // The fixture's vendor device made a second time: another HAL device
  // with the same name.
  hal_device_t* other = cts_create_device(0);
  hal_command_buffer_t* cb =
      cts_begin_command_buffer(other, HAL_COMMAND_BUFFER_MODE_ONE_SHOT);
  HAL_ASSERT_OK(hal_command_buffer_end(cb));
  hal_status_t status = cts_submit(f->device, 0, NULL, 0, cb, NULL, 0);
  // The message tells the two apart, also when both were made of one
  // vendor device (the same name).
  char text[1024];
  hal_status_format(status, text, sizeof(text));
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, "created on device", status);
  const char* made_on = strstr(text, "created on device ");
  const char* not_on = strstr(text, ", not on ");
  assert_non_null(made_on);
  assert_non_null(not_on);
  made_on += strlen("created on device ");
  not_on += strlen(", not on ");
  size_t length = (size_t)(strstr(text, ", not on ") - made_on);
  if (strncmp(made_on, not_on, length) == 0)
    fail_msg("one description for both devices: %s", text);
  hal_command_buffer_release(cb);
  hal_device_release(other);
}

CTS_CASE(CommandBuffer_ThousandsOfOps) {
  fixture_t* f = *state;
  enum { kOps = 3000, kSize = 1024 };
  hal_buffer_t* buffer = cts_zeroed_buffer(f->device, kSize);
  hal_command_buffer_t* cb =
      cts_begin_command_buffer(f->device, HAL_COMMAND_BUFFER_MODE_ONE_SHOT);
  for (uint32_t i = 0; i < kOps; ++i) {
    uint8_t value = (uint8_t)(i / kSize + 1);
    HAL_ASSERT_OK(
        hal_command_buffer_fill_buffer(cb, buffer, i % kSize, 1, &value, 1));
    if (i % kSize == kSize - 1) {
      HAL_ASSERT_OK(hal_command_buffer_execution_barrier(cb));
    }
  }
  HAL_ASSERT_OK(hal_command_buffer_end(cb));
  cts_fixture_run(f, 0, cb);
  uint8_t bytes[kSize];
  HAL_ASSERT_OK(hal_buffer_read(buffer, 0, bytes, kSize));
  for (uint32_t j = 0; j < kSize; ++j) {
    uint32_t last = j + kSize * ((kOps - 1 - j) / kSize);
    assert_int_equal(bytes[j], (uint8_t)(last / kSize + 1));
  }
  hal_command_buffer_release(cb);
  hal_buffer_release(buffer);
}

// What one recording of the Q3 cases writes: |data| into |updated| (an
// inline update, whose bytes the recording owns) and |fill| over |filled|.
enum { kRecordSize = 4096 };

static void random_bytes(cts_random_t* random, uint8_t* bytes, size_t count) {
  for (size_t i = 0; i < count; ++i)
    bytes[i] = (uint8_t)cts_random_next(random);
}

static void expect_recorded(hal_buffer_t* updated, const uint8_t* data,
                            hal_buffer_t* filled, uint8_t fill) {
  uint8_t bytes[kRecordSize];
  HAL_ASSERT_OK(hal_buffer_read(updated, 0, bytes, kRecordSize));
  for (size_t i = 0; i < kRecordSize; ++i) {
    if (bytes[i] != data[i]) {
      fail_msg("updated byte %zu is 0x%02x, the recording's data 0x%02x", i,
               bytes[i], data[i]);
    }
  }
  cts_expect_bytes(filled, 0, kRecordSize, fill);
}

static void record_update_fill(hal_command_buffer_t* cb, hal_buffer_t* updated,
                               const uint8_t* data, hal_buffer_t* filled,
                               uint8_t fill) {
  HAL_ASSERT_OK(hal_command_buffer_begin(cb));
  HAL_ASSERT_OK(
      hal_command_buffer_update_buffer(cb, data, 0, updated, 0, kRecordSize));
  HAL_ASSERT_OK(
      hal_command_buffer_fill_buffer(cb, filled, 0, kRecordSize, &fill, 1));
  HAL_ASSERT_OK(hal_command_buffer_end(cb));
}

// Q3: re-recording frees what the recording holds (inline update data, a
// graph executable), so begin() on a REUSABLE command buffer is refused
// while a submission of it is in flight, naming how many, and leaves the
// recording intact; once they completed, begin() succeeds.
CTS_CASE(Q3_ReRecordWhileInFlightRefused) {
  fixture_t* f = *state;
  cts_random_t random = cts_random_make(31);
  uint8_t first[kRecordSize], second[kRecordSize];
  random_bytes(&random, first, kRecordSize);
  random_bytes(&random, second, kRecordSize);
  hal_buffer_t* updated = cts_zeroed_buffer(f->device, kRecordSize);
  hal_buffer_t* filled = cts_zeroed_buffer(f->device, kRecordSize);
  hal_command_buffer_t* cb = NULL;
  HAL_ASSERT_OK(hal_device_create_command_buffer(
      f->device, HAL_COMMAND_BUFFER_MODE_REUSABLE, &cb));
  record_update_fill(cb, updated, first, filled, 0xA5);

  // The first submission waits on a host semaphore nobody signaled yet and
  // the second on the first (both write the same buffers: unordered, they
  // would race on the device): parked, so in flight for as long as the
  // test wants.
  hal_semaphore_t* gate = NULL;
  HAL_ASSERT_OK(hal_semaphore_create_host(hal_allocator_system(), 0, &gate));
  hal_semaphore_t* done[2] = {cts_create_semaphore(f->device, 0),
                              cts_create_semaphore(f->device, 0)};
  uint32_t other_queue = hal_device_info(f->device)->queue_count > 1 ? 1 : 0;
  HAL_ASSERT_OK(cts_submit(f->device, 0, gate, 1, cb, done[0], 1));
  HAL_ASSERT_STATUS(HAL_STATUS_FAILED_PRECONDITION, "1 submission(s) in flight",
                    hal_command_buffer_begin(cb));
  HAL_ASSERT_OK(cts_submit(f->device, other_queue, done[0], 1, cb, done[1], 1));
  HAL_ASSERT_STATUS(HAL_STATUS_FAILED_PRECONDITION, "2 submission(s) in flight",
                    hal_command_buffer_begin(cb));
  assert_int_equal(hal_command_buffer_state(cb),
                   HAL_COMMAND_BUFFER_STATE_EXECUTABLE);

  HAL_ASSERT_OK(hal_semaphore_signal(gate, 1));
  HAL_ASSERT_OK(cts_wait(done[0], 1));
  HAL_ASSERT_OK(cts_wait(done[1], 1));
  expect_recorded(updated, first, filled, 0xA5);

  // Completed: re-recording is allowed and the new recording runs.
  record_update_fill(cb, updated, second, filled, 0x5A);
  cts_fixture_run(f, 0, cb);
  expect_recorded(updated, second, filled, 0x5A);

  hal_semaphore_release(done[0]);
  hal_semaphore_release(done[1]);
  hal_semaphore_release(gate);
  hal_command_buffer_release(cb);
  hal_buffer_release(updated);
  hal_buffer_release(filled);
}

// Q3 with the submission issued to the device rather than parked: large
// copies ahead of the update keep the device busy when begin() comes, which
// must then be refused. If the device finished first (a slow scheduler),
// begin() may succeed, but only because nothing is in flight any more: the
// submission must have written its own recording's data, whatever the
// re-recording puts in the memory the old recording freed.
CTS_CASE(Q3_ReRecordWhileIssuedRefused) {
  fixture_t* f = *state;
  enum { kCopySize = 16u << 20, kCopies = 8 };
  cts_random_t random = cts_random_make(32);
  uint8_t first[kRecordSize], second[kRecordSize];
  random_bytes(&random, first, kRecordSize);
  random_bytes(&random, second, kRecordSize);
  hal_buffer_t* updated = cts_zeroed_buffer(f->device, kRecordSize);
  hal_buffer_t* filled = cts_zeroed_buffer(f->device, kRecordSize);
  hal_buffer_t* source =
      cts_allocate_buffer(f->device, HAL_MEMORY_TYPE_DEVICE_LOCAL, kCopySize);
  hal_buffer_t* target =
      cts_allocate_buffer(f->device, HAL_MEMORY_TYPE_DEVICE_LOCAL, kCopySize);
  hal_command_buffer_t* cb = NULL;
  HAL_ASSERT_OK(hal_device_create_command_buffer(
      f->device, HAL_COMMAND_BUFFER_MODE_REUSABLE, &cb));
  HAL_ASSERT_OK(hal_command_buffer_begin(cb));
  for (int i = 0; i < kCopies; ++i) {
    HAL_ASSERT_OK(
        hal_command_buffer_copy_buffer(cb, source, 0, target, 0, kCopySize));
    HAL_ASSERT_OK(hal_command_buffer_execution_barrier(cb));
  }
  uint8_t fill = 0xC3;
  HAL_ASSERT_OK(
      hal_command_buffer_update_buffer(cb, first, 0, updated, 0, kRecordSize));
  HAL_ASSERT_OK(
      hal_command_buffer_fill_buffer(cb, filled, 0, kRecordSize, &fill, 1));
  HAL_ASSERT_OK(hal_command_buffer_end(cb));

  uint64_t value = ++f->next_value;
  HAL_ASSERT_OK(cts_submit(f->device, 0, NULL, 0, cb, f->timeline, value));
  hal_status_t status = hal_command_buffer_begin(cb);
  if (status == HAL_OK) {
    printf(
        "[          ] the device finished before begin(); checking that "
        "the submission ran its own recording\n");
    HAL_ASSERT_OK(hal_command_buffer_update_buffer(cb, second, 0, updated, 0,
                                                   kRecordSize));
    HAL_ASSERT_OK(hal_command_buffer_end(cb));
    HAL_ASSERT_OK(cts_wait(f->timeline, value));
  } else {
    HAL_ASSERT_STATUS(HAL_STATUS_FAILED_PRECONDITION,
                      "1 submission(s) in flight", status);
    HAL_ASSERT_OK(cts_wait(f->timeline, value));
    record_update_fill(cb, updated, second, filled, 0x3C);
  }
  expect_recorded(updated, first, filled, fill);
  cts_fixture_run(f, 0, cb);
  uint8_t bytes[kRecordSize];
  HAL_ASSERT_OK(hal_buffer_read(updated, 0, bytes, kRecordSize));
  assert_memory_equal(bytes, second, kRecordSize);

  hal_command_buffer_release(cb);
  hal_buffer_release(updated);
  hal_buffer_release(filled);
  hal_buffer_release(source);
  hal_buffer_release(target);
}

// A graph driver turns every dispatch into a graph kernel node, so a
// runtime without the kernel-node entry point is refused when the driver is
// created (UNIMPLEMENTED naming it), not at the end() of the first
// dispatching command buffer. Stream drivers launch kernels directly and
// still create.
// Q3 from two threads: one submits a REUSABLE buffer over and over while
// the other re-records it. Of a begin() and a submission that race, exactly
// one may succeed: a submission that went through holds the recording until
// the device is done with it, so every completed submission wrote one
// recording's bytes whole (begin() freeing the inline data under the device
// shows as bytes of no recording, or as a use after free).
enum { kRaceBytes = 16384, kRaceRounds = 3000 };

static uint8_t race_byte(uint32_t recording, size_t i) {
  return (uint8_t)((recording + i) % 251);
}

typedef struct race_submitter_t {
  hal_device_t* device;
  hal_command_buffer_t* cb;
  hal_buffer_t* target;
  atomic_bool stop;
  atomic_int submitted;
  int refused, torn, errors;
} race_submitter_t;

static void* race_submitter_main(void* arg) {
  race_submitter_t* job = arg;
  hal_semaphore_t* done = cts_create_semaphore(job->device, 0);
  static uint8_t bytes[kRaceBytes];
  uint64_t value = 0;
  while (!atomic_load_explicit(&job->stop, memory_order_acquire)) {
    hal_status_t status =
        cts_submit(job->device, 0, NULL, 0, job->cb, done, value + 1);
    if (status != HAL_OK) {
      job->errors +=
          hal_status_consume_code(status) != HAL_STATUS_FAILED_PRECONDITION;
      ++job->refused;
      sched_yield();
      continue;
    }
    ++value;
    atomic_fetch_add_explicit(&job->submitted, 1, memory_order_relaxed);
    hal_status_t waited = cts_wait(done, value);
    if (waited == HAL_OK)
      waited = hal_buffer_read(job->target, 0, bytes, kRaceBytes);
    if (waited != HAL_OK) {
      hal_status_free(waited);
      ++job->errors;
      break;
    }
    for (size_t i = 0; i < kRaceBytes; ++i) {
      if (bytes[i] != race_byte(bytes[0], i)) {
        ++job->torn;
        break;
      }
    }
  }
  hal_semaphore_release(done);
  return NULL;
}

CTS_CASE(Q3_ReRecordRacingSubmissionsFromAnotherThread) {
  fixture_t* f = *state;
  hal_buffer_t* target = cts_zeroed_buffer(f->device, kRaceBytes);
  static uint8_t data[kRaceBytes];
  hal_command_buffer_t* cb = NULL;
  HAL_ASSERT_OK(hal_device_create_command_buffer(
      f->device, HAL_COMMAND_BUFFER_MODE_REUSABLE, &cb));
  HAL_ASSERT_OK(hal_command_buffer_begin(cb));
  for (size_t i = 0; i < kRaceBytes; ++i)
    data[i] = race_byte(0, i);
  HAL_ASSERT_OK(
      hal_command_buffer_update_buffer(cb, data, 0, target, 0, kRaceBytes));
  HAL_ASSERT_OK(hal_command_buffer_end(cb));
  race_submitter_t job = {.device = f->device, .cb = cb, .target = target};
  atomic_init(&job.stop, false);
  atomic_init(&job.submitted, 0);
  pthread_t thread;
  assert_int_equal(pthread_create(&thread, NULL, race_submitter_main, &job), 0);
  int rerecorded = 0, refused = 0, errors = 0;
  // Both sides get their turns: at least kRaceRounds re-recordings and a
  // tenth as many submissions, within a bound for a loaded machine.
  hal_time_t deadline = hal_time_now() + 20ll * 1000 * 1000 * 1000;
  for (uint32_t round = 1;
       (round <= kRaceRounds ||
        atomic_load_explicit(&job.submitted, memory_order_relaxed) <
            kRaceRounds / 10) &&
       hal_time_now() < deadline;
       ++round) {
    sched_yield();
    hal_status_t status = hal_command_buffer_begin(cb);
    if (status != HAL_OK) {
      errors +=
          hal_status_consume_code(status) != HAL_STATUS_FAILED_PRECONDITION;
      ++refused;
      continue;
    }
    for (size_t i = 0; i < kRaceBytes; ++i)
      data[i] = race_byte(round, i);
    HAL_ASSERT_OK(
        hal_command_buffer_update_buffer(cb, data, 0, target, 0, kRaceBytes));
    HAL_ASSERT_OK(hal_command_buffer_end(cb));
    ++rerecorded;
  }
  atomic_store_explicit(&job.stop, true, memory_order_release);
  pthread_join(thread, NULL);
  printf("re-recorded %d, begin refused %d; submitted %d, refused %d\n",
         rerecorded, refused, atomic_load(&job.submitted), job.refused);
  assert_int_equal(errors, 0);
  assert_int_equal(job.errors, 0);
  assert_int_equal(job.torn, 0);
  assert_true(rerecorded > 0);
  hal_command_buffer_release(cb);
  hal_buffer_release(target);
}

// A ONE_SHOT buffer is used up only by a submission that went through. Two
// threads submit it at once, one along with a buffer that was never ended
// (that whole submission fails, nothing submitted): the other one's
// submission must be accepted, however the two interleave.
typedef struct one_shot_race_t {
  hal_device_t* device;
  hal_command_buffer_t* buffers[2];  // the ONE_SHOT, the unended one
  size_t count;
  pthread_barrier_t* barrier;
  hal_semaphore_t* done;
  uint64_t value;
  hal_status_t status;
} one_shot_race_t;

static void* one_shot_race_main(void* arg) {
  one_shot_race_t* job = arg;
  pthread_barrier_wait(job->barrier);
  hal_semaphore_list_t signals = {1, &job->done, &job->value};
  job->status = hal_device_queue_execute(job->device, 0, NULL, &signals,
                                         job->count, job->buffers);
  return NULL;
}

CTS_CASE(CommandBuffer_OneShotUsedUpOnlyByASubmissionThatWentThrough) {
  fixture_t* f = *state;
  enum { kRounds = 1000 };
  hal_semaphore_t* done = cts_create_semaphore(f->device, 0);
  hal_command_buffer_t* unended =
      cts_begin_command_buffer(f->device, HAL_COMMAND_BUFFER_MODE_ONE_SHOT);
  pthread_barrier_t barrier;
  pthread_barrier_init(&barrier, NULL, 2);
  int refused = 0;
  for (uint64_t round = 1; round <= kRounds; ++round) {
    hal_command_buffer_t* one_shot =
        cts_begin_command_buffer(f->device, HAL_COMMAND_BUFFER_MODE_ONE_SHOT);
    HAL_ASSERT_OK(hal_command_buffer_end(one_shot));
    one_shot_race_t jobs[2] = {
        {f->device, {one_shot, unended}, 2, &barrier, done, round, HAL_OK},
        {f->device, {one_shot, NULL}, 1, &barrier, done, round, HAL_OK},
    };
    pthread_t thread;
    assert_int_equal(
        pthread_create(&thread, NULL, one_shot_race_main, &jobs[0]), 0);
    one_shot_race_main(&jobs[1]);
    pthread_join(thread, NULL);
    assert_int_equal(hal_status_consume_code(jobs[0].status),
                     HAL_STATUS_FAILED_PRECONDITION);
    if (jobs[1].status != HAL_OK) {
      ++refused;
      hal_status_free(jobs[1].status);
      HAL_ASSERT_OK(cts_submit(f->device, 0, NULL, 0, one_shot, done, round));
    }
    HAL_ASSERT_OK(cts_wait(done, round));
    hal_command_buffer_release(one_shot);
  }
  pthread_barrier_destroy(&barrier);
  assert_int_equal(refused, 0);
  hal_command_buffer_release(unended);
  hal_semaphore_release(done);
}

// A callback that the submission of a ONE_SHOT buffer runs inline (its
// wait had failed, so its signal fails inside the call) submits the same
// buffer again: refused as already submitted, never waiting for the very
// call it runs inside.
typedef struct {
  hal_device_t* device;
  hal_command_buffer_t* one_shot;
  hal_status_code_t code;
  int calls;
} resubmit_t;

static void resubmit_from_callback(void* user_data, uint64_t value,
                                   hal_status_t status) {
  (void)value;
  (void)status;
  resubmit_t* job = user_data;
  ++job->calls;
  job->code = hal_status_consume_code(
      hal_device_queue_execute(job->device, 0, NULL, NULL, 1, &job->one_shot));
}

CTS_CASE(CommandBuffer_OneShotResubmittedFromItsOwnCallbackIsRefused) {
  fixture_t* f = *state;
  hal_command_buffer_t* one_shot =
      cts_begin_command_buffer(f->device, HAL_COMMAND_BUFFER_MODE_ONE_SHOT);
  HAL_ASSERT_OK(hal_command_buffer_end(one_shot));
  hal_semaphore_t* failed = cts_create_semaphore(f->device, 0);
  hal_semaphore_t* signaled = cts_create_semaphore(f->device, 0);
  hal_semaphore_fail(failed, hal_make_status(HAL_STATUS_ABORTED, "upstream"));
  resubmit_t job = {f->device, one_shot, HAL_STATUS_OK, 0};
  HAL_ASSERT_OK(hal_semaphore_add_callback(signaled, 1, resubmit_from_callback,
                                           &job, NULL));
  HAL_ASSERT_OK(cts_submit(f->device, 0, failed, 1, one_shot, signaled, 1));
  HAL_ASSERT_STATUS(HAL_STATUS_ABORTED, "upstream", cts_wait(signaled, 1));
  assert_int_equal(job.calls, 1);
  assert_int_equal(job.code, HAL_STATUS_FAILED_PRECONDITION);
  hal_semaphore_release(signaled);
  hal_semaphore_release(failed);
  hal_command_buffer_release(one_shot);
}

// Q3's other side: once a wait for a submission's signal returned, its
// recording is free, and begin() succeeds at once, also while the call
// that submitted it has not yet returned on another thread (the call's
// own hold on the buffer passes to the driver, whose release comes before
// the signals). A submitter thread submits the buffer, signaling round i,
// and waits for the main thread to have re-recorded it: the main thread
// waits for round i and begins at once, and each submission must have
// written the recording made before it.
enum { kRightAfterRounds = 400, kRightAfterBytes = 64 };

typedef struct {
  hal_device_t* device;
  hal_command_buffer_t* cb;
  hal_semaphore_t* done;        // round i submitted and completed
  hal_semaphore_t* rerecorded;  // round i's recording replaced
  int errors;
} right_after_t;

static void* right_after_submitter_main(void* arg) {
  right_after_t* job = arg;
  for (uint64_t round = 1; round <= kRightAfterRounds; ++round) {
    hal_status_t status =
        cts_submit(job->device, 0, NULL, 0, job->cb, job->done, round);
    if (status == HAL_OK)
      status = cts_wait(job->rerecorded, round);
    if (status != HAL_OK) {
      hal_status_free(status);
      ++job->errors;
      hal_semaphore_fail(
          job->done, hal_make_status(HAL_STATUS_ABORTED, "submitter gave up"));
      return NULL;
    }
  }
  return NULL;
}

static void record_round(hal_command_buffer_t* cb, hal_buffer_t* target,
                         uint8_t round) {
  uint8_t data[kRightAfterBytes];
  memset(data, round, sizeof(data));
  HAL_ASSERT_OK(hal_command_buffer_update_buffer(cb, data, 0, target, 0,
                                                 kRightAfterBytes));
  HAL_ASSERT_OK(hal_command_buffer_end(cb));
}

// A REUSABLE buffer with round 1's recording.
static hal_command_buffer_t* recorded_round_one(hal_device_t* device,
                                                hal_buffer_t* target) {
  hal_command_buffer_t* cb = NULL;
  HAL_ASSERT_OK(hal_device_create_command_buffer(
      device, HAL_COMMAND_BUFFER_MODE_REUSABLE, &cb));
  HAL_ASSERT_OK(hal_command_buffer_begin(cb));
  record_round(cb, target, 1);
  return cb;
}

CTS_CASE(Q3_ReRecordRightAfterTheWaitReturns) {
  fixture_t* f = *state;
  hal_buffer_t* target = cts_zeroed_buffer(f->device, kRightAfterBytes);
  hal_command_buffer_t* cb = recorded_round_one(f->device, target);
  right_after_t job = {f->device, cb, cts_create_semaphore(f->device, 0),
                       cts_create_semaphore(f->device, 0), 0};
  pthread_t thread;
  assert_int_equal(
      pthread_create(&thread, NULL, right_after_submitter_main, &job), 0);
  int refused = 0, wrong = 0;
  for (uint64_t round = 1; round <= kRightAfterRounds; ++round) {
    HAL_ASSERT_OK(cts_wait(job.done, round));
    hal_status_t status = hal_command_buffer_begin(cb);
    if (status != HAL_OK) {
      if (!refused++)
        hal_status_fprint(stderr, status);
      hal_status_free(status);
      // Wait for the submitter's call to return, then begin.
      struct timespec pause = {0, 20 * 1000 * 1000};
      nanosleep(&pause, NULL);
      HAL_ASSERT_OK(hal_command_buffer_begin(cb));
    }
    uint8_t bytes[kRightAfterBytes];
    HAL_ASSERT_OK(hal_buffer_read(target, 0, bytes, sizeof(bytes)));
    wrong += bytes[0] != (uint8_t)round ||
             bytes[kRightAfterBytes - 1] != (uint8_t)round;
    record_round(cb, target, (uint8_t)(round + 1));
    HAL_ASSERT_OK(hal_semaphore_signal(job.rerecorded, round));
  }
  pthread_join(thread, NULL);
  printf("%d of %d begin() calls right after the wait refused\n", refused,
         kRightAfterRounds);
  assert_int_equal(job.errors, 0);
  assert_int_equal(refused, 0);
  assert_int_equal(wrong, 0);
  hal_semaphore_release(job.done);
  hal_semaphore_release(job.rerecorded);
  hal_command_buffer_release(cb);
  hal_buffer_release(target);
}

// The same from a callback of the submission's signal that the failure of
// its wait runs inline, inside the queue_execute call: the submission will
// never run, its hold is gone before the callback, and the callback may
// re-record the buffer (the buffer is REUSABLE; a ONE_SHOT one submitted
// there is refused, above).
typedef struct {
  hal_command_buffer_t* cb;
  hal_buffer_t* target;
  int calls;
  hal_status_code_t begun;
} rerecord_t;

static void rerecord_from_callback(void* user_data, uint64_t value,
                                   hal_status_t status) {
  (void)value;
  (void)status;
  rerecord_t* job = user_data;
  ++job->calls;
  hal_status_t begun = hal_command_buffer_begin(job->cb);
  if (begun != HAL_OK) {
    hal_status_fprint(stderr, begun);
    job->begun = hal_status_consume_code(begun);
    return;
  }
  job->begun = HAL_STATUS_OK;
  record_round(job->cb, job->target, 2);
}

CTS_CASE(Q3_ReRecordFromACallbackOfItsFailedSubmission) {
  fixture_t* f = *state;
  hal_buffer_t* target = cts_zeroed_buffer(f->device, kRightAfterBytes);
  hal_command_buffer_t* cb = recorded_round_one(f->device, target);
  hal_semaphore_t* failed = cts_create_semaphore(f->device, 0);
  hal_semaphore_t* signaled = cts_create_semaphore(f->device, 0);
  hal_semaphore_fail(failed, hal_make_status(HAL_STATUS_ABORTED, "upstream"));
  rerecord_t job = {cb, target, 0, HAL_STATUS_UNKNOWN};
  HAL_ASSERT_OK(hal_semaphore_add_callback(signaled, 1, rerecord_from_callback,
                                           &job, NULL));
  HAL_ASSERT_OK(cts_submit(f->device, 0, failed, 1, cb, signaled, 1));
  HAL_ASSERT_STATUS(HAL_STATUS_ABORTED, "upstream", cts_wait(signaled, 1));
  assert_int_equal(job.calls, 1);
  assert_int_equal(job.begun, HAL_STATUS_OK);
  // The failed submission wrote nothing; the new recording runs.
  cts_fixture_run(f, 0, cb);
  uint8_t bytes[kRightAfterBytes];
  HAL_ASSERT_OK(hal_buffer_read(target, 0, bytes, sizeof(bytes)));
  assert_int_equal(bytes[0], 2);
  assert_int_equal(bytes[kRightAfterBytes - 1], 2);
  hal_semaphore_release(signaled);
  hal_semaphore_release(failed);
  hal_command_buffer_release(cb);
  hal_buffer_release(target);
}

CTS_CASE(CommandBuffer_GraphDriverWithoutKernelNodesRefusedAtCreation) {
  fixture_t* f = *state;
  const char* symbol = getenv("CTS_KERNEL_NODE_CALL");
  if (!symbol || !*symbol) {
    HAL_TEST_SKIP("CTS_KERNEL_NODE_CALL names no kernel-node entry point");
  }
  bool graph = cts_builds_native_graphs(f->device);
  hal_driver_t* driver = NULL;
  hal_status_t status = cts_create_driver_with_env(
      "HAL_GPU_ADAPTER_HIDE_SYMBOLS", symbol, &driver);
  if (graph) {
    if (driver) {
      hal_driver_release(driver);
      fail_msg("%s created although %s is hidden", cts_context.driver_name,
               symbol);
    }
    HAL_ASSERT_STATUS(HAL_STATUS_UNIMPLEMENTED, symbol, status);
  } else {
    HAL_ASSERT_OK(status);
    hal_device_t* device = NULL;
    HAL_ASSERT_OK(hal_driver_create_device_by_index(
        driver, 0, hal_allocator_system(), &device));
    hal_device_release(device);
    hal_driver_release(driver);
  }
}

// The test list: CASE binds this program's fixture.
#define CASE(name) CTS_ON_FIXTURE(name)

int main(void) {
  const struct CMUnitTest tests[] = {
      CASE(CommandBuffer_FillPatterns),
      CASE(CommandBuffer_UpdateCopiesAtRecordTime),
      CASE(CommandBuffer_CopyBuffers),
      CASE(CommandBuffer_ExecutionBarriersOrderDependentOps),
      CASE(CommandBuffer_ReusableSubmittedManyTimes),
      CASE(CommandBuffer_OneShotSubmittedTwiceIsAnError),
      CASE(CommandBuffer_RecordingStateMachine),
      CASE(CommandBuffer_OutOfRangeOpsAreRejected),
      CASE(CommandBuffer_OfAnotherDeviceIsRefused),
      CASE(CommandBuffer_ThousandsOfOps),
      CASE(Q3_ReRecordWhileInFlightRefused),
      CASE(Q3_ReRecordWhileIssuedRefused),
      CASE(Q3_ReRecordRacingSubmissionsFromAnotherThread),
      CASE(CommandBuffer_OneShotUsedUpOnlyByASubmissionThatWentThrough),
      CASE(CommandBuffer_OneShotResubmittedFromItsOwnCallbackIsRefused),
      CASE(Q3_ReRecordRightAfterTheWaitReturns),
      CASE(Q3_ReRecordFromACallbackOfItsFailedSubmission),
      CASE(CommandBuffer_GraphDriverWithoutKernelNodesRefusedAtCreation),
  };
  return cts_main("command_buffer", tests, HAL_ARRAYSIZE(tests));
}
