// Copyright 2026 The HAL Authors.
//
// CTS suite "graph": what graph drivers do with command buffers: build a
// vendor graph once at end(), launch it per submit, update it in place when
// re-recorded with the same topology, rebuild it otherwise (or when the
// vendor refuses the update). Stream drivers exclude the suite in the table.
//
//   CTS_GRAPH_UPDATE   "1" (default): the runtime updates executable graphs
//                      in place; "0": it cannot (update symbol hidden), so
//                      every re-record rebuilds.

#include "cts.h"

#define SIZE CTS_FIXTURE_BUFFER_SIZE

typedef cts_fixture_t fixture_t;

static hal_command_buffer_info_t info_of(hal_command_buffer_t* cb) {
  hal_command_buffer_info_t info;
  HAL_ASSERT_OK(hal_command_buffer_query_info(cb, &info));
  return info;
}

static bool update_expected(void) {
  const char* value = getenv("CTS_GRAPH_UPDATE");
  return !value || strcmp(value, "0") != 0;
}

// fill(a, x) | barrier | copy a->b: two nodes and a join.
static void record_fill_copy(fixture_t* f, hal_command_buffer_t* cb,
                             uint32_t value) {
  HAL_ASSERT_OK(hal_command_buffer_begin(cb));
  HAL_ASSERT_OK(hal_command_buffer_fill_buffer(cb, f->a, 0, SIZE, &value, 4));
  HAL_ASSERT_OK(hal_command_buffer_execution_barrier(cb));
  HAL_ASSERT_OK(hal_command_buffer_copy_buffer(cb, f->a, 0, f->b, 0, SIZE));
  HAL_ASSERT_OK(hal_command_buffer_end(cb));
}

static void expect_words(hal_buffer_t* buffer, uint32_t value) {
  uint32_t words[SIZE / 4];
  HAL_ASSERT_OK(hal_buffer_read(buffer, 0, words, SIZE));
  for (int i = 0; i < SIZE / 4; ++i) {
    if (words[i] != value) {
      fail_msg("word %d is 0x%08x, expected 0x%08x", i, words[i], value);
    }
  }
}

static hal_command_buffer_t* create_reusable(fixture_t* f) {
  hal_command_buffer_t* cb = NULL;
  HAL_ASSERT_OK(hal_device_create_command_buffer(
      f->device, HAL_COMMAND_BUFFER_MODE_REUSABLE, &cb));
  return cb;
}

CTS_CASE(Graph_BuiltOnceLaunchedManyTimes) {
  fixture_t* f = *state;
  hal_command_buffer_t* cb = create_reusable(f);
  record_fill_copy(f, cb, 0x0BADF00Du);
  for (int i = 0; i < 40; ++i) {
    uint32_t zeros[SIZE / 4] = {0};
    HAL_ASSERT_OK(hal_buffer_write(f->b, 0, zeros, SIZE));
    cts_fixture_run(f, (uint32_t)i % hal_device_info(f->device)->queue_count,
                    cb);
    expect_words(f->b, 0x0BADF00Du);
  }
  hal_command_buffer_info_t info = info_of(cb);
  assert_int_equal(info.native_build_count, 1);  // never rebuilt
  assert_int_equal(info.native_update_count, 0);
  hal_command_buffer_release(cb);
}

CTS_CASE(Graph_ReRecordSameTopologyUpdatesInPlace) {
  fixture_t* f = *state;
  hal_command_buffer_t* cb = create_reusable(f);
  record_fill_copy(f, cb, 0x11111111u);
  cts_fixture_run(f, 0, cb);
  expect_words(f->b, 0x11111111u);
  record_fill_copy(f, cb, 0x22222222u);  // same shape, new parameters
  cts_fixture_run(f, 0, cb);
  expect_words(f->b, 0x22222222u);
  hal_command_buffer_info_t info = info_of(cb);
  if (update_expected()) {
    assert_int_equal(info.native_build_count, 1);
    assert_int_equal(info.native_update_count, 1);
  } else {
    // The runtime refused (cannot) update: rebuilt, and still correct.
    assert_int_equal(info.native_build_count, 2);
    assert_int_equal(info.native_update_count, 0);
  }
  hal_command_buffer_release(cb);
}

CTS_CASE(Graph_ReRecordNewTopologyRebuilds) {
  fixture_t* f = *state;
  hal_command_buffer_t* cb = create_reusable(f);
  record_fill_copy(f, cb, 0x33333333u);
  cts_fixture_run(f, 0, cb);
  // A different shape: three independent fills.
  HAL_ASSERT_OK(hal_command_buffer_begin(cb));
  uint32_t value = 0x44444444u;
  HAL_ASSERT_OK(hal_command_buffer_fill_buffer(cb, f->a, 0, SIZE, &value, 4));
  HAL_ASSERT_OK(
      hal_command_buffer_fill_buffer(cb, f->b, 0, SIZE / 2, &value, 4));
  HAL_ASSERT_OK(
      hal_command_buffer_fill_buffer(cb, f->b, SIZE / 2, SIZE / 2, &value, 4));
  HAL_ASSERT_OK(hal_command_buffer_end(cb));
  cts_fixture_run(f, 0, cb);
  expect_words(f->a, 0x44444444u);
  expect_words(f->b, 0x44444444u);
  hal_command_buffer_info_t info = info_of(cb);
  assert_int_equal(info.native_build_count, 2);
  assert_int_equal(info.native_update_count, 0);
  hal_command_buffer_release(cb);
}

// The same command buffer submitted to two queues at once: both launches
// of the one executable graph run (serialized by the vendor) and finish.
CTS_CASE(Graph_SameCommandBufferOnTwoQueuesAtOnce) {
  fixture_t* f = *state;
  hal_command_buffer_t* cb = create_reusable(f);
  record_fill_copy(f, cb, 0x55555555u);
  hal_semaphore_t* gate = cts_create_semaphore(f->device, 0);
  hal_semaphore_t* done = cts_create_semaphore(f->device, 0);
  hal_semaphore_t* done2 = cts_create_semaphore(f->device, 0);
  uint32_t q1 = hal_device_info(f->device)->queue_count > 1 ? 1 : 0;
  HAL_ASSERT_OK(cts_submit(f->device, 0, gate, 1, cb, done, 1));
  HAL_ASSERT_OK(cts_submit(f->device, q1, gate, 1, cb, done2, 1));
  HAL_ASSERT_OK(hal_semaphore_signal(gate, 1));
  HAL_ASSERT_OK(cts_wait(done, 1));
  HAL_ASSERT_OK(cts_wait(done2, 1));
  expect_words(f->b, 0x55555555u);
  assert_int_equal(info_of(cb).native_build_count, 1);
  hal_semaphore_release(gate);
  hal_semaphore_release(done);
  hal_semaphore_release(done2);
  hal_command_buffer_release(cb);
}

CTS_CASE(Graph_ThousandsOfNodes) {
  fixture_t* f = *state;
  enum { kOps = 4000 };
  hal_command_buffer_t* cb =
      cts_begin_command_buffer(f->device, HAL_COMMAND_BUFFER_MODE_ONE_SHOT);
  for (uint32_t i = 0; i < kOps; ++i) {
    uint32_t value = i;
    uint64_t word = i % (SIZE / 4);
    HAL_ASSERT_OK(
        hal_command_buffer_fill_buffer(cb, f->a, word * 4, 4, &value, 4));
    // Ops writing the same word are ordered by the barrier between laps.
    if (word == SIZE / 4 - 1) {
      HAL_ASSERT_OK(hal_command_buffer_execution_barrier(cb));
    }
  }
  HAL_ASSERT_OK(hal_command_buffer_end(cb));
  cts_fixture_run(f, 0, cb);
  uint32_t words[SIZE / 4];
  HAL_ASSERT_OK(hal_buffer_read(f->a, 0, words, SIZE));
  for (uint32_t j = 0; j < SIZE / 4; ++j) {
    uint32_t last = j + (SIZE / 4) * ((kOps - 1 - j) / (SIZE / 4));
    assert_int_equal(words[j], last);
  }
  assert_int_equal(info_of(cb).native_build_count, 1);
  hal_command_buffer_release(cb);
}

CTS_CASE(Graph_EmptyCommandBufferBuildsNothing) {
  fixture_t* f = *state;
  hal_command_buffer_t* cb =
      cts_begin_command_buffer(f->device, HAL_COMMAND_BUFFER_MODE_ONE_SHOT);
  HAL_ASSERT_OK(hal_command_buffer_execution_barrier(cb));
  HAL_ASSERT_OK(hal_command_buffer_end(cb));
  cts_fixture_run(f, 0, cb);
  assert_int_equal(info_of(cb).native_build_count, 0);
  hal_command_buffer_release(cb);
}

// The test list: CASE binds this program's fixture.
#define CASE(name) CTS_ON_FIXTURE(name)

int main(void) {
  const struct CMUnitTest tests[] = {
      CASE(Graph_BuiltOnceLaunchedManyTimes),
      CASE(Graph_ReRecordSameTopologyUpdatesInPlace),
      CASE(Graph_ReRecordNewTopologyRebuilds),
      CASE(Graph_SameCommandBufferOnTwoQueuesAtOnce),
      CASE(Graph_ThousandsOfNodes),
      CASE(Graph_EmptyCommandBufferBuildsNothing),
  };
  return cts_main("graph", tests, HAL_ARRAYSIZE(tests));
}
