// Copyright 2026 The HAL Authors.
//
// Command buffer recording and validation in libhal, run by the test
// plugin's host executor: the state machine, fill/update/copy semantics and
// every rejection.

#include "hal/impl/api.h"
#include "hal_test.h"

typedef struct fixture_t {
  hal_device_t* device;
  hal_buffer_t* buffer;  // 64 bytes, host-visible, zeroed
  hal_buffer_t* other;   // 64 bytes
} fixture_t;

static int setup(void** state) {
  fixture_t* fixture = calloc(1, sizeof(*fixture));
  fixture->device = hal_test_create_device();
  hal_buffer_params_t params = {
      HAL_MEMORY_TYPE_HOST_VISIBLE,
      HAL_BUFFER_USAGE_DEFAULT | HAL_BUFFER_USAGE_MAPPING};
  HAL_ASSERT_OK(hal_device_allocate_buffer(fixture->device, params, 64,
                                           &fixture->buffer));
  HAL_ASSERT_OK(
      hal_device_allocate_buffer(fixture->device, params, 64, &fixture->other));
  *state = fixture;
  return 0;
}

static int teardown(void** state) {
  fixture_t* fixture = *state;
  hal_buffer_release(fixture->buffer);
  hal_buffer_release(fixture->other);
  hal_device_release(fixture->device);
  free(fixture);
  return 0;
}

static hal_command_buffer_t* create(fixture_t* fixture,
                                    hal_command_buffer_mode_t mode) {
  hal_command_buffer_t* command_buffer = NULL;
  HAL_ASSERT_OK(
      hal_device_create_command_buffer(fixture->device, mode, &command_buffer));
  return command_buffer;
}

static void submit(fixture_t* fixture, hal_command_buffer_t* command_buffer) {
  HAL_ASSERT_OK(hal_device_queue_execute(fixture->device, 0, NULL, NULL, 1,
                                         &command_buffer));
}

static void read_all(hal_buffer_t* buffer, uint8_t* bytes) {
  HAL_ASSERT_OK(hal_buffer_read(buffer, 0, bytes, 64));
}

static void CommandBuffer_FillPatternsOfEachSize(void** state) {
  fixture_t* fixture = *state;
  hal_command_buffer_t* cb = create(fixture, HAL_COMMAND_BUFFER_MODE_ONE_SHOT);
  HAL_ASSERT_OK(hal_command_buffer_begin(cb));
  uint8_t p8 = 0x11;
  uint16_t p16 = 0x2233;
  uint32_t p32 = 0x44556677;
  HAL_ASSERT_OK(
      hal_command_buffer_fill_buffer(cb, fixture->buffer, 1, 3, &p8, 1));
  HAL_ASSERT_OK(
      hal_command_buffer_fill_buffer(cb, fixture->buffer, 8, 6, &p16, 2));
  HAL_ASSERT_OK(hal_command_buffer_fill_buffer(cb, fixture->buffer, 16,
                                               HAL_WHOLE_BUFFER, &p32, 4));
  HAL_ASSERT_OK(hal_command_buffer_end(cb));
  assert_int_equal(cb->op_count, 3);
  submit(fixture, cb);
  uint8_t bytes[64];
  read_all(fixture->buffer, bytes);
  assert_int_equal(bytes[0], 0);
  for (int i = 1; i < 4; ++i)
    assert_int_equal(bytes[i], 0x11);
  assert_int_equal(bytes[4], 0);
  for (int i = 8; i < 14; i += 2) {
    uint16_t v;
    memcpy(&v, bytes + i, 2);
    assert_int_equal(v, 0x2233);
  }
  for (int i = 16; i < 64; i += 4) {
    uint32_t v;
    memcpy(&v, bytes + i, 4);
    assert_int_equal(v, 0x44556677);
  }
  hal_command_buffer_release(cb);
}

static void CommandBuffer_FillRejectsMisalignedAndBadPatterns(void** state) {
  fixture_t* fixture = *state;
  hal_command_buffer_t* cb = create(fixture, HAL_COMMAND_BUFFER_MODE_ONE_SHOT);
  HAL_ASSERT_OK(hal_command_buffer_begin(cb));
  uint32_t pattern = 0;
  HAL_ASSERT_STATUS(
      HAL_STATUS_INVALID_ARGUMENT, "multiples",
      hal_command_buffer_fill_buffer(cb, fixture->buffer, 2, 8, &pattern, 4));
  HAL_ASSERT_STATUS(
      HAL_STATUS_INVALID_ARGUMENT, "multiples",
      hal_command_buffer_fill_buffer(cb, fixture->buffer, 0, 3, &pattern, 2));
  HAL_ASSERT_STATUS(
      HAL_STATUS_INVALID_ARGUMENT, "1, 2 or 4",
      hal_command_buffer_fill_buffer(cb, fixture->buffer, 0, 8, &pattern, 3));
  HAL_ASSERT_STATUS(
      HAL_STATUS_INVALID_ARGUMENT, "pattern is NULL",
      hal_command_buffer_fill_buffer(cb, fixture->buffer, 0, 8, NULL, 4));
  HAL_ASSERT_STATUS(
      HAL_STATUS_OUT_OF_RANGE, "target range",
      hal_command_buffer_fill_buffer(cb, fixture->buffer, 60, 8, &pattern, 4));
  assert_int_equal(cb->op_count, 0);  // nothing was recorded
  HAL_ASSERT_OK(hal_command_buffer_end(cb));
  hal_command_buffer_release(cb);
}

static void CommandBuffer_UpdateCopiesHostDataAtRecordTime(void** state) {
  fixture_t* fixture = *state;
  hal_command_buffer_t* cb = create(fixture, HAL_COMMAND_BUFFER_MODE_ONE_SHOT);
  HAL_ASSERT_OK(hal_command_buffer_begin(cb));
  char* data = strdup("xxhello");
  HAL_ASSERT_OK(
      hal_command_buffer_update_buffer(cb, data, 2, fixture->buffer, 7, 6));
  memset(data, 'z', 8);  // the caller's memory changes (then goes away)
  free(data);
  HAL_ASSERT_OK(hal_command_buffer_end(cb));
  submit(fixture, cb);
  char back[6];
  HAL_ASSERT_OK(hal_buffer_read(fixture->buffer, 7, back, 6));
  assert_memory_equal(back, "hello", 6);
  hal_command_buffer_release(cb);
}

static void CommandBuffer_UpdateRejectsTooLarge(void** state) {
  fixture_t* fixture = *state;
  hal_command_buffer_t* cb = create(fixture, HAL_COMMAND_BUFFER_MODE_ONE_SHOT);
  HAL_ASSERT_OK(hal_command_buffer_begin(cb));
  char byte = 0;
  HAL_ASSERT_STATUS(
      HAL_STATUS_OUT_OF_RANGE, "inline update limit",
      hal_command_buffer_update_buffer(cb, &byte, 0, fixture->buffer, 0,
                                       HAL_MAX_UPDATE_LENGTH + 1));
  HAL_ASSERT_STATUS(
      HAL_STATUS_INVALID_ARGUMENT, "source is NULL",
      hal_command_buffer_update_buffer(cb, NULL, 0, fixture->buffer, 0, 4));
  HAL_ASSERT_OK(hal_command_buffer_end(cb));
  hal_command_buffer_release(cb);
}

static void CommandBuffer_CopyBetweenBuffersAndRejectOverlap(void** state) {
  fixture_t* fixture = *state;
  const char text[] = "copy me";
  HAL_ASSERT_OK(hal_buffer_write(fixture->other, 3, text, sizeof(text)));
  hal_command_buffer_t* cb = create(fixture, HAL_COMMAND_BUFFER_MODE_ONE_SHOT);
  HAL_ASSERT_OK(hal_command_buffer_begin(cb));
  HAL_ASSERT_OK(hal_command_buffer_copy_buffer(
      cb, fixture->other, 3, fixture->buffer, 40, sizeof(text)));
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, "overlaps",
                    hal_command_buffer_copy_buffer(cb, fixture->buffer, 0,
                                                   fixture->buffer, 4, 8));
  // Same buffer, disjoint ranges: fine.
  HAL_ASSERT_OK(hal_command_buffer_copy_buffer(cb, fixture->other, 0,
                                               fixture->other, 32, 16));
  HAL_ASSERT_STATUS(HAL_STATUS_OUT_OF_RANGE, NULL,
                    hal_command_buffer_copy_buffer(cb, fixture->other, 0,
                                                   fixture->buffer, 60, 8));
  HAL_ASSERT_STATUS(
      HAL_STATUS_OUT_OF_RANGE, "copy: target range",
      hal_command_buffer_copy_buffer(cb, fixture->other, 0, fixture->buffer, 8,
                                     HAL_WHOLE_BUFFER));
  HAL_ASSERT_OK(hal_command_buffer_end(cb));
  submit(fixture, cb);
  char back[sizeof(text)];
  HAL_ASSERT_OK(hal_buffer_read(fixture->buffer, 40, back, sizeof(back)));
  assert_string_equal(back, text);
  hal_command_buffer_release(cb);
}

static void CommandBuffer_RecordingStateMachine(void** state) {
  fixture_t* fixture = *state;
  hal_command_buffer_t* cb = create(fixture, HAL_COMMAND_BUFFER_MODE_ONE_SHOT);
  uint8_t p = 1;
  assert_int_equal(hal_command_buffer_state(cb),
                   HAL_COMMAND_BUFFER_STATE_INITIAL);
  HAL_ASSERT_STATUS(
      HAL_STATUS_FAILED_PRECONDITION, "not RECORDING",
      hal_command_buffer_fill_buffer(cb, fixture->buffer, 0, 1, &p, 1));
  HAL_ASSERT_STATUS(HAL_STATUS_FAILED_PRECONDITION, "not RECORDING",
                    hal_command_buffer_end(cb));
  HAL_ASSERT_STATUS(
      HAL_STATUS_FAILED_PRECONDITION, "cannot be submitted",
      hal_device_queue_execute(fixture->device, 0, NULL, NULL, 1, &cb));
  HAL_ASSERT_OK(hal_command_buffer_begin(cb));
  HAL_ASSERT_STATUS(HAL_STATUS_FAILED_PRECONDITION, "RECORDING",
                    hal_command_buffer_begin(cb));
  HAL_ASSERT_STATUS(
      HAL_STATUS_FAILED_PRECONDITION, "end() not called",
      hal_device_queue_execute(fixture->device, 0, NULL, NULL, 1, &cb));
  HAL_ASSERT_OK(hal_command_buffer_execution_barrier(cb));
  HAL_ASSERT_OK(hal_command_buffer_end(cb));
  HAL_ASSERT_STATUS(HAL_STATUS_FAILED_PRECONDITION, "not RECORDING",
                    hal_command_buffer_end(cb));
  HAL_ASSERT_STATUS(HAL_STATUS_FAILED_PRECONDITION, "only a new",
                    hal_command_buffer_begin(cb));  // ONE_SHOT: no re-record
  submit(fixture, cb);
  HAL_ASSERT_STATUS(
      HAL_STATUS_FAILED_PRECONDITION, "already submitted",
      hal_device_queue_execute(fixture->device, 0, NULL, NULL, 1, &cb));
  hal_command_buffer_release(cb);
}

static void CommandBuffer_OneShotTwiceInOneSubmissionIsRefusedAndUnmarked(
    void** state) {
  fixture_t* fixture = *state;
  hal_command_buffer_t* cb = create(fixture, HAL_COMMAND_BUFFER_MODE_ONE_SHOT);
  HAL_ASSERT_OK(hal_command_buffer_begin(cb));
  HAL_ASSERT_OK(hal_command_buffer_end(cb));
  hal_command_buffer_t* twice[2] = {cb, cb};
  HAL_ASSERT_STATUS(
      HAL_STATUS_FAILED_PRECONDITION, "command buffer 1",
      hal_device_queue_execute(fixture->device, 0, NULL, NULL, 2, twice));
  // Nothing was submitted, so the buffer may still be submitted once.
  submit(fixture, cb);
  hal_command_buffer_release(cb);
}

static void CommandBuffer_ReusableRunsManyTimesAndReRecords(void** state) {
  fixture_t* fixture = *state;
  hal_command_buffer_t* cb = create(fixture, HAL_COMMAND_BUFFER_MODE_REUSABLE);
  HAL_ASSERT_OK(hal_command_buffer_begin(cb));
  uint8_t p = 5;
  HAL_ASSERT_OK(
      hal_command_buffer_fill_buffer(cb, fixture->buffer, 0, 64, &p, 1));
  HAL_ASSERT_OK(hal_command_buffer_end(cb));
  uint8_t bytes[64];
  for (int i = 0; i < 10; ++i) {
    uint8_t zero[64] = {0};
    HAL_ASSERT_OK(hal_buffer_write(fixture->buffer, 0, zero, 64));
    submit(fixture, cb);
    read_all(fixture->buffer, bytes);
    for (int j = 0; j < 64; ++j)
      assert_int_equal(bytes[j], 5);
  }
  // Re-recording replaces the ops.
  HAL_ASSERT_OK(hal_command_buffer_begin(cb));
  p = 9;
  HAL_ASSERT_OK(
      hal_command_buffer_fill_buffer(cb, fixture->buffer, 0, 1, &p, 1));
  HAL_ASSERT_OK(hal_command_buffer_end(cb));
  assert_int_equal(cb->op_count, 1);
  submit(fixture, cb);
  read_all(fixture->buffer, bytes);
  assert_int_equal(bytes[0], 9);
  assert_int_equal(bytes[1], 5);
  hal_command_buffer_release(cb);
}

// Q3: a driver counts each submission of a command buffer in flight
// (hal_command_buffer_retain/release_for_submission); begin() refuses to
// re-record while any is, naming how many, and leaves the recording to run
// as it was. The submission's reference outlives the caller's.
static void CommandBuffer_ReRecordRefusedWhileSubmissionsInFlight(
    void** state) {
  fixture_t* fixture = *state;
  hal_command_buffer_t* cb = create(fixture, HAL_COMMAND_BUFFER_MODE_REUSABLE);
  HAL_ASSERT_OK(hal_command_buffer_begin(cb));
  uint8_t p = 0x11;
  HAL_ASSERT_OK(
      hal_command_buffer_fill_buffer(cb, fixture->buffer, 0, 64, &p, 1));
  HAL_ASSERT_OK(hal_command_buffer_end(cb));

  hal_command_buffer_retain_for_submission(cb);
  hal_command_buffer_retain_for_submission(cb);
  HAL_ASSERT_STATUS(HAL_STATUS_FAILED_PRECONDITION, "2 submission(s) in flight",
                    hal_command_buffer_begin(cb));
  hal_command_buffer_release_for_submission(cb);
  HAL_ASSERT_STATUS(HAL_STATUS_FAILED_PRECONDITION, "1 submission(s) in flight",
                    hal_command_buffer_begin(cb));
  assert_int_equal(hal_command_buffer_state(cb),
                   HAL_COMMAND_BUFFER_STATE_EXECUTABLE);
  assert_int_equal(cb->op_count, 1);
  submit(fixture, cb);  // the recording is intact
  uint8_t bytes[64];
  read_all(fixture->buffer, bytes);
  for (int i = 0; i < 64; ++i)
    assert_int_equal(bytes[i], 0x11);

  // Re-recording is allowed again once the last submission is released.
  hal_command_buffer_release_for_submission(cb);
  HAL_ASSERT_OK(hal_command_buffer_begin(cb));
  HAL_ASSERT_OK(hal_command_buffer_end(cb));

  // The caller may drop its reference with a submission in flight: the
  // submission's keeps the command buffer alive until it is released.
  hal_command_buffer_retain_for_submission(cb);
  hal_command_buffer_release(cb);
  assert_int_equal(hal_command_buffer_state(cb),
                   HAL_COMMAND_BUFFER_STATE_EXECUTABLE);
  hal_command_buffer_release_for_submission(cb);
}

static void CommandBuffer_BuffersFromAnotherDeviceAreRejected(void** state) {
  fixture_t* fixture = *state;
  hal_device_t* other_device = hal_test_create_device();
  hal_buffer_t* foreign = NULL;
  hal_buffer_params_t params = {HAL_MEMORY_TYPE_DEVICE_LOCAL,
                                HAL_BUFFER_USAGE_DEFAULT};
  HAL_ASSERT_OK(hal_device_allocate_buffer(other_device, params, 64, &foreign));
  hal_command_buffer_t* cb = create(fixture, HAL_COMMAND_BUFFER_MODE_ONE_SHOT);
  HAL_ASSERT_OK(hal_command_buffer_begin(cb));
  uint8_t p = 1;
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, "another device",
                    hal_command_buffer_fill_buffer(cb, foreign, 0, 4, &p, 1));
  HAL_ASSERT_OK(hal_command_buffer_end(cb));
  // And a command buffer from another device cannot be submitted here.
  HAL_ASSERT_STATUS(
      HAL_STATUS_INVALID_ARGUMENT, "was created on device",
      hal_device_queue_execute(other_device, 0, NULL, NULL, 1, &cb));
  hal_command_buffer_release(cb);
  hal_buffer_release(foreign);
  hal_device_release(other_device);
}

static void CommandBuffer_UsageIsEnforced(void** state) {
  fixture_t* fixture = *state;
  hal_buffer_t* read_only = NULL;
  hal_buffer_params_t params = {HAL_MEMORY_TYPE_DEVICE_LOCAL,
                                HAL_BUFFER_USAGE_TRANSFER_SOURCE};
  HAL_ASSERT_OK(
      hal_device_allocate_buffer(fixture->device, params, 64, &read_only));
  hal_command_buffer_t* cb = create(fixture, HAL_COMMAND_BUFFER_MODE_ONE_SHOT);
  HAL_ASSERT_OK(hal_command_buffer_begin(cb));
  uint8_t p = 1;
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, "lacks TRANSFER_TARGET",
                    hal_command_buffer_fill_buffer(cb, read_only, 0, 4, &p, 1));
  HAL_ASSERT_OK(
      hal_command_buffer_copy_buffer(cb, read_only, 0, fixture->buffer, 0, 4));
  HAL_ASSERT_OK(hal_command_buffer_end(cb));
  hal_command_buffer_release(cb);
  hal_buffer_release(read_only);
}

static void CommandBuffer_ThousandsOfOps(void** state) {
  fixture_t* fixture = *state;
  hal_command_buffer_t* cb = create(fixture, HAL_COMMAND_BUFFER_MODE_ONE_SHOT);
  HAL_ASSERT_OK(hal_command_buffer_begin(cb));
  for (uint32_t i = 0; i < 5000; ++i) {
    uint8_t p = (uint8_t)i;
    HAL_ASSERT_OK(
        hal_command_buffer_fill_buffer(cb, fixture->buffer, i % 64, 1, &p, 1));
    if (i % 100 == 99)
      HAL_ASSERT_OK(hal_command_buffer_execution_barrier(cb));
  }
  HAL_ASSERT_OK(hal_command_buffer_end(cb));
  submit(fixture, cb);
  uint8_t bytes[64];
  read_all(fixture->buffer, bytes);
  // The last write to byte j was op i = 4928 + j (the largest i < 5000 with
  // i % 64 == j).
  for (uint32_t j = 0; j < 64; ++j) {
    uint32_t last = 4992 + j < 5000 ? 4992 + j : 4928 + j;
    assert_int_equal(bytes[j], (uint8_t)last);
  }
  hal_command_buffer_release(cb);
}

static void CommandBuffer_BadSubmissionArguments(void** state) {
  fixture_t* fixture = *state;
  HAL_ASSERT_STATUS(
      HAL_STATUS_OUT_OF_RANGE, "has 2 queue(s)",
      hal_device_queue_execute(fixture->device, 2, NULL, NULL, 0, NULL));
  HAL_ASSERT_STATUS(
      HAL_STATUS_INVALID_ARGUMENT, "NULL array",
      hal_device_queue_execute(fixture->device, 0, NULL, NULL, 1, NULL));
  hal_command_buffer_t* null_cb = NULL;
  HAL_ASSERT_STATUS(
      HAL_STATUS_INVALID_ARGUMENT, "is NULL",
      hal_device_queue_execute(fixture->device, 0, NULL, NULL, 1, &null_cb));
  hal_semaphore_list_t bad = {1, NULL, NULL};
  HAL_ASSERT_STATUS(
      HAL_STATUS_INVALID_ARGUMENT, "wait list",
      hal_device_queue_execute(fixture->device, 0, &bad, NULL, 0, NULL));
  hal_semaphore_t* null_semaphore = NULL;
  uint64_t value = 1;
  hal_semaphore_list_t null_entry = {1, &null_semaphore, &value};
  HAL_ASSERT_STATUS(
      HAL_STATUS_INVALID_ARGUMENT, "signal list entry 0",
      hal_device_queue_execute(fixture->device, 0, NULL, &null_entry, 0, NULL));
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, NULL,
                    hal_device_create_command_buffer(
                        fixture->device, (hal_command_buffer_mode_t)7, NULL));
  hal_command_buffer_t* cb = NULL;
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, "unknown command buffer mode",
                    hal_device_create_command_buffer(
                        fixture->device, (hal_command_buffer_mode_t)7, &cb));
  // An empty submission is a valid barrier.
  HAL_ASSERT_OK(hal_device_queue_barrier(fixture->device, 1, NULL, NULL));
}

// The test list: CASE binds this program's fixture.
#define CASE(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void) {
  const struct CMUnitTest tests[] = {
      CASE(CommandBuffer_FillPatternsOfEachSize),
      CASE(CommandBuffer_FillRejectsMisalignedAndBadPatterns),
      CASE(CommandBuffer_UpdateCopiesHostDataAtRecordTime),
      CASE(CommandBuffer_UpdateRejectsTooLarge),
      CASE(CommandBuffer_CopyBetweenBuffersAndRejectOverlap),
      CASE(CommandBuffer_RecordingStateMachine),
      CASE(CommandBuffer_OneShotTwiceInOneSubmissionIsRefusedAndUnmarked),
      CASE(CommandBuffer_ReusableRunsManyTimesAndReRecords),
      CASE(CommandBuffer_ReRecordRefusedWhileSubmissionsInFlight),
      CASE(CommandBuffer_BuffersFromAnotherDeviceAreRejected),
      CASE(CommandBuffer_UsageIsEnforced),
      CASE(CommandBuffer_ThousandsOfOps),
      CASE(CommandBuffer_BadSubmissionArguments),
  };
  return cmocka_run_group_tests_name("core/command_buffer", tests, NULL, NULL);
}
