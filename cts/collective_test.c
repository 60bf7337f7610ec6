// Copyright 2026 The HAL Authors.
//
// CTS suite "collective": channels (hal/channel.h) over two devices of the
// driver under test, in one process, and collectives recorded into command
// buffers between the work before and after them.
//
// Each case makes one channel per device (a group, or ranks joined from
// threads with one id), records on each device a command buffer that writes
// the inputs (updates), runs the collective and copies the result out, and
// checks every element on the host. Graph drivers split such a command
// buffer around its collectives; a reusable one is submitted again. Ranks
// that disagree fail the submissions' signals with the library's message;
// bad arguments are refused at record time. The virtual GPU runs the
// collectives on its NCCL (CUDA) or RCCL (HIP).

#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cts.h"
#include "kernel_images.h"

enum { kRanks = 2 };

typedef struct collective_fixture_t {
  hal_device_t* devices[kRanks];
  hal_channel_t* channels[kRanks];
} collective_fixture_t;

static int collective_setup(void** state) {
  collective_fixture_t* f = calloc(1, sizeof(*f));
  for (int r = 0; r < kRanks; ++r)
    f->devices[r] = cts_create_device((uint32_t)r);
  HAL_ASSERT_OK(hal_channel_create_group(kRanks, f->devices, f->channels));
  *state = f;
  return 0;
}

static int collective_teardown(void** state) {
  collective_fixture_t* f = *state;
  for (int r = 0; r < kRanks; ++r) {
    hal_channel_release(f->channels[r]);
    hal_device_release(f->devices[r]);
  }
  free(f);
  return 0;
}

// A device-local buffer of |size| bytes, zeroed, usable by every op.
static hal_buffer_t* device_buffer(hal_device_t* device, uint64_t size) {
  return cts_zeroed_buffer(device, size);
}

// Writes |size| bytes of |data| into |buffer| (a synchronous host write).
static void write_bytes(hal_buffer_t* buffer, const void* data, size_t size) {
  HAL_ASSERT_OK(hal_buffer_write(buffer, 0, data, size));
}

// Submits |command_buffer| on queue 0 of |device|, signaling |semaphore|
// to |value|.
static void submit(hal_device_t* device, hal_command_buffer_t* command_buffer,
                   hal_semaphore_t* semaphore, uint64_t value) {
  HAL_ASSERT_OK(
      cts_submit(device, 0, NULL, 0, command_buffer, semaphore, value));
}

// A one-shot command buffer of |device| holding one in-place sum
// all-reduce of |count| elements of |type| in |buffer| over |channel|,
// ended.
static hal_command_buffer_t* all_reduce_command_buffer(hal_device_t* device,
                                                       hal_channel_t* channel,
                                                       hal_buffer_t* buffer,
                                                       hal_element_type_t type,
                                                       uint64_t count) {
  hal_command_buffer_t* cb =
      cts_begin_command_buffer(device, HAL_COMMAND_BUFFER_MODE_ONE_SHOT);
  hal_collective_params_t params = {.kind = HAL_COLLECTIVE_ALL_REDUCE,
                                    .element_type = type,
                                    .reduction = HAL_REDUCTION_SUM,
                                    .count = count};
  HAL_ASSERT_OK(hal_command_buffer_collective(cb, channel, &params, buffer, 0,
                                              buffer, 0));
  HAL_ASSERT_OK(hal_command_buffer_end(cb));
  return cb;
}

static double element_get(hal_element_type_t type, const uint8_t* bytes,
                          size_t i) {
  switch (type) {
    case HAL_ELEMENT_TYPE_INT8:
      return ((const int8_t*)bytes)[i];
    case HAL_ELEMENT_TYPE_UINT8:
      return ((const uint8_t*)bytes)[i];
    case HAL_ELEMENT_TYPE_INT32:
      return ((const int32_t*)bytes)[i];
    case HAL_ELEMENT_TYPE_UINT32:
      return ((const uint32_t*)bytes)[i];
    case HAL_ELEMENT_TYPE_INT64:
      return (double)((const int64_t*)bytes)[i];
    case HAL_ELEMENT_TYPE_UINT64:
      return (double)((const uint64_t*)bytes)[i];
    case HAL_ELEMENT_TYPE_FLOAT32:
      return ((const float*)bytes)[i];
    case HAL_ELEMENT_TYPE_FLOAT64:
      return ((const double*)bytes)[i];
    default:
      break;
  }
  fail_msg("element type %d is not checked here", (int)type);
  return 0;
}

static void element_set(hal_element_type_t type, uint8_t* bytes, size_t i,
                        double value) {
  switch (type) {
    case HAL_ELEMENT_TYPE_INT8:
      ((int8_t*)bytes)[i] = (int8_t)value;
      return;
    case HAL_ELEMENT_TYPE_UINT8:
      ((uint8_t*)bytes)[i] = (uint8_t)value;
      return;
    case HAL_ELEMENT_TYPE_INT32:
      ((int32_t*)bytes)[i] = (int32_t)value;
      return;
    case HAL_ELEMENT_TYPE_UINT32:
      ((uint32_t*)bytes)[i] = (uint32_t)value;
      return;
    case HAL_ELEMENT_TYPE_INT64:
      ((int64_t*)bytes)[i] = (int64_t)value;
      return;
    case HAL_ELEMENT_TYPE_UINT64:
      ((uint64_t*)bytes)[i] = (uint64_t)value;
      return;
    case HAL_ELEMENT_TYPE_FLOAT32:
      ((float*)bytes)[i] = (float)value;
      return;
    case HAL_ELEMENT_TYPE_FLOAT64:
      ((double*)bytes)[i] = value;
      return;
    default:
      break;
  }
  fail_msg("element type %d is not checked here", (int)type);
}

// Rank r's input element i: small values whose sums and products stay
// exact in every type checked (int8 included).
static double input_value(int rank, size_t i) {
  return (double)((i * 7 + (size_t)rank * 3) % 5 + 1);
}

// One collective on every rank: rank r's send holds input_value(r, i); the
// command buffer updates send from the host data, runs the collective and
// copies recv to |out| (fill, update and copy before and after it on the
// same queue). Returns each rank's output bytes (free them).
typedef struct collective_run_t {
  hal_collective_params_t params;
  uint64_t send_elements;  // per rank
  uint64_t recv_elements;  // per rank
  hal_command_buffer_mode_t mode;
  int submissions;  // times the command buffer is submitted
} collective_run_t;

static uint8_t** run_collective(collective_fixture_t* f,
                                const collective_run_t* run) {
  size_t size = hal_element_type_size(run->params.element_type);
  uint64_t send_bytes = run->send_elements * size;
  uint64_t recv_bytes = run->recv_elements * size;
  uint8_t** outputs = calloc(kRanks, sizeof(uint8_t*));
  hal_buffer_t* send[kRanks];
  hal_buffer_t* recv[kRanks];
  hal_buffer_t* out[kRanks];
  hal_command_buffer_t* cbs[kRanks];
  hal_semaphore_t* done[kRanks];
  for (int r = 0; r < kRanks; ++r) {
    send[r] = device_buffer(f->devices[r], send_bytes);
    recv[r] = device_buffer(f->devices[r], recv_bytes);
    out[r] = device_buffer(f->devices[r], recv_bytes);
    uint8_t* data = malloc(send_bytes);
    for (uint64_t i = 0; i < run->send_elements; ++i)
      element_set(run->params.element_type, data, i, input_value(r, i));
    write_bytes(send[r], data, send_bytes);
    free(data);
    cbs[r] = cts_begin_command_buffer(f->devices[r], run->mode);
    // Work before: clear recv (the collective must write all of it).
    uint8_t clear = 0xEE;
    HAL_ASSERT_OK(hal_command_buffer_fill_buffer(cbs[r], recv[r], 0, recv_bytes,
                                                 &clear, 1));
    HAL_ASSERT_OK(hal_command_buffer_execution_barrier(cbs[r]));
    hal_collective_params_t params = run->params;
    hal_buffer_t* s = send[r];
    hal_buffer_t* d = recv[r];
    if (params.kind == HAL_COLLECTIVE_BROADCAST && params.root_or_peer != r)
      s = NULL;
    HAL_ASSERT_OK(hal_command_buffer_collective(cbs[r], f->channels[r], &params,
                                                s, 0, d, 0));
    HAL_ASSERT_OK(hal_command_buffer_execution_barrier(cbs[r]));
    // Work after: the copy out sees the collective's result.
    HAL_ASSERT_OK(hal_command_buffer_copy_buffer(cbs[r], recv[r], 0, out[r], 0,
                                                 recv_bytes));
    HAL_ASSERT_OK(hal_command_buffer_end(cbs[r]));
    // A graph driver splits the command buffer around the collective: the
    // fill before it and the copy after it are a graph each.
    hal_command_buffer_info_t info;
    HAL_ASSERT_OK(hal_command_buffer_query_info(cbs[r], &info));
    assert_int_equal(info.op_count, 5);
    assert_int_equal(info.native_build_count,
                     cts_builds_native_graphs(f->devices[r]) ? 2 : 0);
    done[r] = cts_create_semaphore(f->devices[r], 0);
  }
  for (int k = 1; k <= run->submissions; ++k) {
    for (int r = 0; r < kRanks; ++r)
      submit(f->devices[r], cbs[r], done[r], (uint64_t)k);
    for (int r = 0; r < kRanks; ++r)
      HAL_ASSERT_OK(cts_wait(done[r], (uint64_t)k));
  }
  for (int r = 0; r < kRanks; ++r) {
    HAL_ASSERT_OK(hal_channel_check(f->channels[r]));
    outputs[r] = malloc(recv_bytes);
    HAL_ASSERT_OK(hal_buffer_read(out[r], 0, outputs[r], recv_bytes));
    hal_semaphore_release(done[r]);
    hal_command_buffer_release(cbs[r]);
    hal_buffer_release(out[r]);
    hal_buffer_release(recv[r]);
    hal_buffer_release(send[r]);
  }
  return outputs;
}

static void free_outputs(uint8_t** outputs) {
  for (int r = 0; r < kRanks; ++r)
    free(outputs[r]);
  free(outputs);
}

static double reduce_values(hal_reduction_t reduction, double a, double b) {
  switch (reduction) {
    case HAL_REDUCTION_SUM:
    case HAL_REDUCTION_AVG:
      return a + b;
    case HAL_REDUCTION_PROD:
      return a * b;
    case HAL_REDUCTION_MAX:
      return a > b ? a : b;
    case HAL_REDUCTION_MIN:
      return a < b ? a : b;
  }
  return 0;
}

static double reduced_input(hal_reduction_t reduction, size_t i) {
  double value = input_value(0, i);
  for (int r = 1; r < kRanks; ++r)
    value = reduce_values(reduction, value, input_value(r, i));
  return value;
}

static void expect_element(hal_element_type_t type, const uint8_t* bytes,
                           size_t i, double expected, const char* what,
                           int rank) {
  double got = element_get(type, bytes, i);
  if (fabs(got - expected) > 1e-6) {
    fail_msg("%s: rank %d element %zu of type %d is %g, expected %g", what,
             rank, i, (int)type, got, expected);
  }
}

// All-reduce of each type and reduction (sum for every type, the others
// on int32 and float32), counts of 1, 1000 and an odd 4097 elements.
CTS_CASE(Collective_AllReduceEveryTypeAndReduction) {
  collective_fixture_t* f = *state;
  static const hal_element_type_t kTypes[] = {
      HAL_ELEMENT_TYPE_INT8,    HAL_ELEMENT_TYPE_UINT8,
      HAL_ELEMENT_TYPE_INT32,   HAL_ELEMENT_TYPE_UINT32,
      HAL_ELEMENT_TYPE_INT64,   HAL_ELEMENT_TYPE_UINT64,
      HAL_ELEMENT_TYPE_FLOAT32, HAL_ELEMENT_TYPE_FLOAT64,
  };
  static const uint64_t kCounts[] = {1, 1000, 4097};
  for (size_t t = 0; t < HAL_ARRAYSIZE(kTypes); ++t) {
    bool all_reductions = kTypes[t] == HAL_ELEMENT_TYPE_INT32 ||
                          kTypes[t] == HAL_ELEMENT_TYPE_FLOAT32;
    for (int reduction = HAL_REDUCTION_SUM;
         reduction <= (all_reductions ? HAL_REDUCTION_MIN : HAL_REDUCTION_SUM);
         ++reduction) {
      for (size_t c = 0; c < HAL_ARRAYSIZE(kCounts); ++c) {
        collective_run_t run = {
            .params = {.kind = HAL_COLLECTIVE_ALL_REDUCE,
                       .element_type = kTypes[t],
                       .reduction = (hal_reduction_t)reduction,
                       .count = kCounts[c]},
            .send_elements = kCounts[c],
            .recv_elements = kCounts[c],
            .mode = HAL_COMMAND_BUFFER_MODE_ONE_SHOT,
            .submissions = 1,
        };
        uint8_t** outputs = run_collective(f, &run);
        for (int r = 0; r < kRanks; ++r) {
          for (size_t i = 0; i < kCounts[c]; ++i) {
            expect_element(kTypes[t], outputs[r], i,
                           reduced_input((hal_reduction_t)reduction, i),
                           "all_reduce", r);
          }
        }
        free_outputs(outputs);
      }
    }
  }
}

// A reusable command buffer submitted three times (graph drivers launch
// its pieces again): 4 MiB of float32 summed each time.
CTS_CASE(Collective_AllReduceInAReusedCommandBuffer) {
  collective_fixture_t* f = *state;
  const uint64_t count = (4u << 20) / 4;
  collective_run_t run = {
      .params = {.kind = HAL_COLLECTIVE_ALL_REDUCE,
                 .element_type = HAL_ELEMENT_TYPE_FLOAT32,
                 .reduction = HAL_REDUCTION_SUM,
                 .count = count},
      .send_elements = count,
      .recv_elements = count,
      .mode = HAL_COMMAND_BUFFER_MODE_REUSABLE,
      .submissions = 3,
  };
  uint8_t** outputs = run_collective(f, &run);
  for (int r = 0; r < kRanks; ++r) {
    for (size_t i = 0; i < count; i += 997)
      expect_element(HAL_ELEMENT_TYPE_FLOAT32, outputs[r], i,
                     reduced_input(HAL_REDUCTION_SUM, i), "all_reduce", r);
  }
  free_outputs(outputs);
}

// Broadcast from rank 1, reduce (max) to rank 0, all-gather and
// reduce-scatter (sum) of 777 int32 per rank.
CTS_CASE(Collective_RootedAndGatheringCollectives) {
  collective_fixture_t* f = *state;
  const uint64_t n = 777;
  const hal_element_type_t type = HAL_ELEMENT_TYPE_INT32;
  {
    collective_run_t run = {.params = {.kind = HAL_COLLECTIVE_BROADCAST,
                                       .element_type = type,
                                       .root_or_peer = 1,
                                       .count = n},
                            .send_elements = n,
                            .recv_elements = n,
                            .mode = HAL_COMMAND_BUFFER_MODE_ONE_SHOT,
                            .submissions = 1};
    uint8_t** outputs = run_collective(f, &run);
    for (int r = 0; r < kRanks; ++r)
      for (size_t i = 0; i < n; ++i)
        expect_element(type, outputs[r], i, input_value(1, i), "broadcast", r);
    free_outputs(outputs);
  }
  {
    collective_run_t run = {.params = {.kind = HAL_COLLECTIVE_REDUCE,
                                       .element_type = type,
                                       .reduction = HAL_REDUCTION_MAX,
                                       .root_or_peer = 0,
                                       .count = n},
                            .send_elements = n,
                            .recv_elements = n,
                            .mode = HAL_COMMAND_BUFFER_MODE_ONE_SHOT,
                            .submissions = 1};
    uint8_t** outputs = run_collective(f, &run);
    for (size_t i = 0; i < n; ++i)
      expect_element(type, outputs[0], i, reduced_input(HAL_REDUCTION_MAX, i),
                     "reduce", 0);
    free_outputs(outputs);
  }
  {
    collective_run_t run = {.params = {.kind = HAL_COLLECTIVE_ALL_GATHER,
                                       .element_type = type,
                                       .count = n},
                            .send_elements = n,
                            .recv_elements = n * kRanks,
                            .mode = HAL_COMMAND_BUFFER_MODE_ONE_SHOT,
                            .submissions = 1};
    uint8_t** outputs = run_collective(f, &run);
    for (int r = 0; r < kRanks; ++r)
      for (int from = 0; from < kRanks; ++from)
        for (size_t i = 0; i < n; ++i)
          expect_element(type, outputs[r], (size_t)from * n + i,
                         input_value(from, i), "all_gather", r);
    free_outputs(outputs);
  }
  {
    collective_run_t run = {.params = {.kind = HAL_COLLECTIVE_REDUCE_SCATTER,
                                       .element_type = type,
                                       .reduction = HAL_REDUCTION_SUM,
                                       .count = n},
                            .send_elements = n * kRanks,
                            .recv_elements = n,
                            .mode = HAL_COMMAND_BUFFER_MODE_ONE_SHOT,
                            .submissions = 1};
    uint8_t** outputs = run_collective(f, &run);
    for (int r = 0; r < kRanks; ++r)
      for (size_t i = 0; i < n; ++i)
        expect_element(type, outputs[r], i,
                       reduced_input(HAL_REDUCTION_SUM, (size_t)r * n + i),
                       "reduce_scatter", r);
    free_outputs(outputs);
  }
}

// Each rank sends its block to the other and receives the other's, both
// recorded back to back (one group), twice in one command buffer.
CTS_CASE(Collective_SendAndReceiveExchange) {
  collective_fixture_t* f = *state;
  enum { kCount = 1001 };
  hal_buffer_t* send[kRanks];
  hal_buffer_t* recv[kRanks];
  hal_command_buffer_t* cbs[kRanks];
  hal_semaphore_t* done[kRanks];
  for (int r = 0; r < kRanks; ++r) {
    send[r] = device_buffer(f->devices[r], kCount * 4);
    recv[r] = device_buffer(f->devices[r], 2 * kCount * 4);
    uint32_t words[kCount];
    for (int i = 0; i < kCount; ++i)
      words[i] = (uint32_t)(r * 100000 + i);
    write_bytes(send[r], words, sizeof(words));
    cbs[r] = cts_begin_command_buffer(f->devices[r],
                                      HAL_COMMAND_BUFFER_MODE_ONE_SHOT);
    int peer = 1 - r;
    for (int round = 0; round < 2; ++round) {
      hal_collective_params_t to = {.kind = HAL_COLLECTIVE_SEND,
                                    .element_type = HAL_ELEMENT_TYPE_UINT32,
                                    .root_or_peer = peer,
                                    .count = kCount};
      hal_collective_params_t from = to;
      from.kind = HAL_COLLECTIVE_RECV;
      // Both ranks send first, then receive: without the group each send
      // would wait for a receive its peer records after its own send.
      HAL_ASSERT_OK(hal_command_buffer_collective(cbs[r], f->channels[r], &to,
                                                  send[r], 0, NULL, 0));
      HAL_ASSERT_OK(
          hal_command_buffer_collective(cbs[r], f->channels[r], &from, NULL, 0,
                                        recv[r], (uint64_t)round * kCount * 4));
    }
    HAL_ASSERT_OK(hal_command_buffer_end(cbs[r]));
    done[r] = cts_create_semaphore(f->devices[r], 0);
  }
  for (int r = 0; r < kRanks; ++r)
    submit(f->devices[r], cbs[r], done[r], 1);
  for (int r = 0; r < kRanks; ++r) {
    HAL_ASSERT_OK(cts_wait(done[r], 1));
    uint32_t words[2 * kCount];
    HAL_ASSERT_OK(hal_buffer_read(recv[r], 0, words, sizeof(words)));
    for (int i = 0; i < 2 * kCount; ++i) {
      uint32_t expected = (uint32_t)((1 - r) * 100000 + i % kCount);
      if (words[i] != expected)
        fail_msg("rank %d word %d is %u, expected %u", r, i, words[i],
                 expected);
    }
    hal_semaphore_release(done[r]);
    hal_command_buffer_release(cbs[r]);
    hal_buffer_release(recv[r]);
    hal_buffer_release(send[r]);
  }
}

// The ops of one group of sends and receives run in no order among
// themselves; an execution barrier ends the group and orders them. Each
// rank exchanges its words with its peer into |relay| (first group), then,
// after a barrier, sends |relay| back while receiving into |back| (second
// group): |back| holds the rank's own words only if the second send read
// |relay| after the first receive wrote it. Reusable, submitted twice.
CTS_CASE(Collective_BarrierOrdersAReceiveBeforeASend) {
  collective_fixture_t* f = *state;
  enum { kCount = 4099 };
  hal_buffer_t* send[kRanks];
  hal_buffer_t* relay[kRanks];
  hal_buffer_t* back[kRanks];
  hal_command_buffer_t* cbs[kRanks];
  hal_semaphore_t* done[kRanks];
  for (int r = 0; r < kRanks; ++r) {
    send[r] = device_buffer(f->devices[r], kCount * 4);
    relay[r] = device_buffer(f->devices[r], kCount * 4);
    back[r] = device_buffer(f->devices[r], kCount * 4);
    uint32_t words[kCount];
    for (int i = 0; i < kCount; ++i)
      words[i] = (uint32_t)(r * 100000 + i + 1);
    write_bytes(send[r], words, sizeof(words));
    cbs[r] = cts_begin_command_buffer(f->devices[r],
                                      HAL_COMMAND_BUFFER_MODE_REUSABLE);
    hal_collective_params_t to = {.kind = HAL_COLLECTIVE_SEND,
                                  .element_type = HAL_ELEMENT_TYPE_UINT32,
                                  .root_or_peer = 1 - r,
                                  .count = kCount};
    hal_collective_params_t from = to;
    from.kind = HAL_COLLECTIVE_RECV;
    HAL_ASSERT_OK(hal_command_buffer_collective(cbs[r], f->channels[r], &to,
                                                send[r], 0, NULL, 0));
    HAL_ASSERT_OK(hal_command_buffer_collective(cbs[r], f->channels[r], &from,
                                                NULL, 0, relay[r], 0));
    HAL_ASSERT_OK(hal_command_buffer_execution_barrier(cbs[r]));
    HAL_ASSERT_OK(hal_command_buffer_collective(cbs[r], f->channels[r], &to,
                                                relay[r], 0, NULL, 0));
    HAL_ASSERT_OK(hal_command_buffer_collective(cbs[r], f->channels[r], &from,
                                                NULL, 0, back[r], 0));
    HAL_ASSERT_OK(hal_command_buffer_end(cbs[r]));
    done[r] = cts_create_semaphore(f->devices[r], 0);
  }
  for (uint64_t run = 1; run <= 2; ++run) {
    for (int r = 0; r < kRanks; ++r)
      submit(f->devices[r], cbs[r], done[r], run);
    for (int r = 0; r < kRanks; ++r) {
      HAL_ASSERT_OK(cts_wait(done[r], run));
      uint32_t words[kCount];
      HAL_ASSERT_OK(hal_buffer_read(back[r], 0, words, sizeof(words)));
      for (int i = 0; i < kCount; ++i) {
        uint32_t expected = (uint32_t)(r * 100000 + i + 1);
        if (words[i] != expected)
          fail_msg("run %d rank %d word %d is %u, expected %u", (int)run, r, i,
                   words[i], expected);
      }
      static const uint32_t zeros[kCount];
      write_bytes(back[r], zeros, sizeof(zeros));
    }
  }
  for (int r = 0; r < kRanks; ++r) {
    hal_semaphore_release(done[r]);
    hal_command_buffer_release(cbs[r]);
    hal_buffer_release(back[r]);
    hal_buffer_release(relay[r]);
    hal_buffer_release(send[r]);
  }
}

// A one-shot all-reduce (sum) of |count| elements of |type| over
// |channels| (rank r's on the fixture's device r), between a fill and a
// copy, every element checked; the fixture's own channels are kept.
static void expect_all_reduce_sums(collective_fixture_t* f,
                                   hal_channel_t* const* channels,
                                   hal_element_type_t type, uint64_t count) {
  hal_channel_t* kept[kRanks];
  for (int r = 0; r < kRanks; ++r) {
    kept[r] = f->channels[r];
    f->channels[r] = channels[r];
  }
  collective_run_t run = {
      .params = {.kind = HAL_COLLECTIVE_ALL_REDUCE,
                 .element_type = type,
                 .reduction = HAL_REDUCTION_SUM,
                 .count = count},
      .send_elements = count,
      .recv_elements = count,
      .mode = HAL_COMMAND_BUFFER_MODE_ONE_SHOT,
      .submissions = 1,
  };
  uint8_t** outputs = run_collective(f, &run);
  for (int r = 0; r < kRanks; ++r)
    for (size_t i = 0; i < count; ++i)
      expect_element(type, outputs[r], i, reduced_input(HAL_REDUCTION_SUM, i),
                     "all_reduce", r);
  free_outputs(outputs);
  for (int r = 0; r < kRanks; ++r)
    f->channels[r] = kept[r];
}

typedef struct join_arg_t {
  hal_device_t* device;
  const hal_channel_id_t* id;
  int32_t rank;
  hal_channel_t* channel;
  hal_status_t status;
} join_arg_t;

static void* join_rank(void* p) {
  join_arg_t* arg = p;
  arg->status = hal_channel_create(arg->device, arg->id, arg->rank, kRanks,
                                   &arg->channel);
  return NULL;
}

// Ranks joined one per thread from one generated id make a communicator
// as good as a group's: an all-reduce over them sums.
CTS_CASE(Collective_RanksJoinedFromThreadsWithOneId) {
  collective_fixture_t* f = *state;
  hal_channel_id_t id;
  HAL_ASSERT_OK(hal_channel_id_generate(f->devices[0], &id));
  join_arg_t args[kRanks];
  for (int r = 0; r < kRanks; ++r) {
    args[r] = (join_arg_t){.device = f->devices[r], .id = &id, .rank = r};
  }
  cts_run_threads(kRanks, join_rank, args, sizeof(args[0]));
  hal_channel_t* joined[kRanks];
  for (int r = 0; r < kRanks; ++r) {
    HAL_ASSERT_OK(args[r].status);
    assert_int_equal(hal_channel_rank(args[r].channel), r);
    assert_int_equal(hal_channel_rank_count(args[r].channel), kRanks);
    assert_ptr_equal(hal_channel_device(args[r].channel), f->devices[r]);
    joined[r] = args[r].channel;
  }
  expect_all_reduce_sums(f, joined, HAL_ELEMENT_TYPE_INT32, 333);
  for (int r = 0; r < kRanks; ++r)
    hal_channel_release(joined[r]);
}

// Ranks that disagree on the count: the library fails the communicator,
// and both submissions' signals fail naming the channel's rank; the
// channel reports the failure from then on, and, aborted, fails its later
// collectives with ABORTED (channel.h), ranks that agree again included.
CTS_CASE(Collective_RanksThatDisagreeFailTheSignals) {
  collective_fixture_t* f = *state;
  // A channel pair of its own: the failure stays with it.
  hal_channel_t* channels[kRanks];
  HAL_ASSERT_OK(hal_channel_create_group(kRanks, f->devices, channels));
  hal_buffer_t* buffers[kRanks];
  for (int r = 0; r < kRanks; ++r)
    buffers[r] = device_buffer(f->devices[r], 64 * 4);
  // Round 0: rank 1 reduces 12 elements, rank 0 10. Round 1: both 10.
  for (int round = 0; round < 2; ++round) {
    hal_command_buffer_t* cbs[kRanks];
    hal_semaphore_t* done[kRanks];
    for (int r = 0; r < kRanks; ++r) {
      cbs[r] = all_reduce_command_buffer(f->devices[r], channels[r], buffers[r],
                                         HAL_ELEMENT_TYPE_FLOAT32,
                                         round == 0 && r == 1 ? 12 : 10);
      done[r] = cts_create_semaphore(f->devices[r], 0);
    }
    for (int r = 0; r < kRanks; ++r)
      submit(f->devices[r], cbs[r], done[r], 1);
    for (int r = 0; r < kRanks; ++r) {
      char needle[64];
      snprintf(needle, sizeof(needle), "channel rank %d of %d", r, kRanks);
      hal_status_t status = cts_wait(done[r], 1);
      char text[2048];
      hal_status_format(status, text, sizeof(text));
      hal_status_code_t code = hal_status_code(status);
      hal_status_free(status);
      if (code == HAL_STATUS_OK || !strstr(text, needle))
        fail_msg("rank %d's failure does not name its rank: %s", r, text);
      if (round == 1 && code != HAL_STATUS_ABORTED)
        fail_msg("rank %d's collective on its aborted channel: %s", r, text);
      hal_status_t check = hal_channel_check(channels[r]);
      assert_int_not_equal(hal_status_code(check), HAL_STATUS_OK);
      hal_status_free(check);
      hal_semaphore_release(done[r]);
      hal_command_buffer_release(cbs[r]);
    }
  }
  for (int r = 0; r < kRanks; ++r) {
    hal_buffer_release(buffers[r]);
    hal_channel_release(channels[r]);
  }
}

// Refused at record time, nothing recorded: a channel of another device, a
// buffer of another device, host memory, a range past the buffer (the
// gathered size counts every rank), a root or peer out of range, a count of
// 0, an unknown type or reduction, NULL params or buffers the kind needs.
CTS_CASE(Collective_BadArgumentsAreRefusedAtRecord) {
  collective_fixture_t* f = *state;
  hal_device_t* device = f->devices[0];
  hal_channel_t* channel = f->channels[0];
  hal_buffer_t* mine = device_buffer(device, 4096);
  hal_buffer_t* theirs = device_buffer(f->devices[1], 4096);
  hal_buffer_t* host =
      cts_allocate_buffer(device, HAL_MEMORY_TYPE_HOST_VISIBLE, 4096);
  hal_command_buffer_t* cb =
      cts_begin_command_buffer(device, HAL_COMMAND_BUFFER_MODE_ONE_SHOT);
  hal_collective_params_t ok = {.kind = HAL_COLLECTIVE_ALL_REDUCE,
                                .element_type = HAL_ELEMENT_TYPE_FLOAT32,
                                .reduction = HAL_REDUCTION_SUM,
                                .count = 16};
  hal_collective_params_t p = ok;
  HAL_ASSERT_STATUS(
      HAL_STATUS_INVALID_ARGUMENT, "is of device",
      hal_command_buffer_collective(cb, f->channels[1], &p, mine, 0, mine, 0));
  HAL_ASSERT_STATUS(
      HAL_STATUS_INVALID_ARGUMENT, "another device",
      hal_command_buffer_collective(cb, channel, &p, theirs, 0, mine, 0));
  HAL_ASSERT_STATUS(
      HAL_STATUS_INVALID_ARGUMENT, "DEVICE_LOCAL",
      hal_command_buffer_collective(cb, channel, &p, host, 0, mine, 0));
  // Device-local and host-visible is host memory the device reaches.
  hal_buffer_t* both = cts_allocate_buffer(
      device, HAL_MEMORY_TYPE_DEVICE_LOCAL | HAL_MEMORY_TYPE_HOST_VISIBLE,
      4096);
  HAL_ASSERT_STATUS(
      HAL_STATUS_INVALID_ARGUMENT, "DEVICE_LOCAL only",
      hal_command_buffer_collective(cb, channel, &p, mine, 0, both, 0));
  hal_buffer_release(both);
  p.count = 1025;  // 4100 bytes
  HAL_ASSERT_STATUS(
      HAL_STATUS_OUT_OF_RANGE, "send range",
      hal_command_buffer_collective(cb, channel, &p, mine, 0, mine, 0));
  // A byte count of 2^64 - 1 is no whole-buffer length (HAL_WHOLE_BUFFER).
  p = ok;
  p.element_type = HAL_ELEMENT_TYPE_UINT8;
  p.count = UINT64_MAX;
  HAL_ASSERT_STATUS(
      HAL_STATUS_OUT_OF_RANGE, "overflow",
      hal_command_buffer_collective(cb, channel, &p, mine, 0, mine, 0));
  p = ok;
  p.kind = HAL_COLLECTIVE_ALL_GATHER;
  p.count = 513;  // 2 ranks x 513 x 4 bytes > 4096
  HAL_ASSERT_STATUS(
      HAL_STATUS_OUT_OF_RANGE, "recv range",
      hal_command_buffer_collective(cb, channel, &p, mine, 0, mine, 0));
  p = ok;
  p.kind = HAL_COLLECTIVE_BROADCAST;
  p.root_or_peer = kRanks;
  HAL_ASSERT_STATUS(
      HAL_STATUS_OUT_OF_RANGE, "root 2 is not a rank",
      hal_command_buffer_collective(cb, channel, &p, mine, 0, mine, 0));
  p = ok;
  p.kind = HAL_COLLECTIVE_SEND;
  p.root_or_peer = -1;
  HAL_ASSERT_STATUS(
      HAL_STATUS_OUT_OF_RANGE, "peer -1",
      hal_command_buffer_collective(cb, channel, &p, mine, 0, NULL, 0));
  p.root_or_peer = 1;
  HAL_ASSERT_STATUS(
      HAL_STATUS_INVALID_ARGUMENT, "no recv buffer",
      hal_command_buffer_collective(cb, channel, &p, mine, 0, mine, 0));
  // Elements are read and written at their alignment.
  HAL_ASSERT_STATUS(
      HAL_STATUS_INVALID_ARGUMENT, "send offset 2 is not a multiple",
      hal_command_buffer_collective(cb, channel, &ok, mine, 2, mine, 0));
  HAL_ASSERT_STATUS(
      HAL_STATUS_INVALID_ARGUMENT, "recv offset 34 is not a multiple",
      hal_command_buffer_collective(cb, channel, &ok, mine, 0, mine, 34));
  p = ok;
  p.element_type = HAL_ELEMENT_TYPE_FLOAT64;
  HAL_ASSERT_STATUS(
      HAL_STATUS_INVALID_ARGUMENT, "(8 bytes)",
      hal_command_buffer_collective(cb, channel, &p, mine, 4, mine, 8));
  // Send and recv in one buffer: disjoint, or in place as NCCL defines it
  // (below); any other overlap has no defined result and is refused. This
  // is rank 0, blocks of 16 float32 (64 bytes).
  HAL_ASSERT_STATUS(
      HAL_STATUS_INVALID_ARGUMENT, "overlap and are not in place (rank 0)",
      hal_command_buffer_collective(cb, channel, &ok, mine, 0, mine, 4));
  p = ok;
  p.kind = HAL_COLLECTIVE_ALL_GATHER;  // in place: send at recv + 0
  HAL_ASSERT_STATUS(
      HAL_STATUS_INVALID_ARGUMENT, "send [64, 128) and recv [0, 128)",
      hal_command_buffer_collective(cb, channel, &p, mine, 64, mine, 0));
  p.kind = HAL_COLLECTIVE_REDUCE_SCATTER;  // in place: recv at send + 0
  HAL_ASSERT_STATUS(
      HAL_STATUS_INVALID_ARGUMENT, "not in place",
      hal_command_buffer_collective(cb, channel, &p, mine, 0, mine, 64));
  {
    // Accepted: the same range, disjoint ranges, and each rank's own
    // block for the gathering and scattering kinds.
    hal_command_buffer_t* accepted =
        cts_begin_command_buffer(device, HAL_COMMAND_BUFFER_MODE_ONE_SHOT);
    HAL_ASSERT_OK(hal_command_buffer_collective(accepted, channel, &ok, mine, 0,
                                                mine, 0));
    HAL_ASSERT_OK(hal_command_buffer_collective(accepted, channel, &ok, mine, 0,
                                                mine, 64));
    p = ok;
    p.kind = HAL_COLLECTIVE_ALL_GATHER;
    HAL_ASSERT_OK(
        hal_command_buffer_collective(accepted, channel, &p, mine, 0, mine, 0));
    p.kind = HAL_COLLECTIVE_REDUCE_SCATTER;
    HAL_ASSERT_OK(
        hal_command_buffer_collective(accepted, channel, &p, mine, 0, mine, 0));
    HAL_ASSERT_OK(hal_command_buffer_end(accepted));
    hal_command_buffer_release(accepted);
    // Rank 1's own block is the second.
    hal_command_buffer_t* other = cts_begin_command_buffer(
        f->devices[1], HAL_COMMAND_BUFFER_MODE_ONE_SHOT);
    p.kind = HAL_COLLECTIVE_ALL_GATHER;
    HAL_ASSERT_OK(hal_command_buffer_collective(other, f->channels[1], &p,
                                                theirs, 64, theirs, 0));
    HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, "not in place (rank 1)",
                      hal_command_buffer_collective(other, f->channels[1], &p,
                                                    theirs, 0, theirs, 0));
    p.kind = HAL_COLLECTIVE_REDUCE_SCATTER;
    HAL_ASSERT_OK(hal_command_buffer_collective(other, f->channels[1], &p,
                                                theirs, 0, theirs, 64));
    HAL_ASSERT_OK(hal_command_buffer_end(other));
    hal_command_buffer_release(other);
  }
  p = ok;
  p.count = 0;
  HAL_ASSERT_STATUS(
      HAL_STATUS_INVALID_ARGUMENT, "count of 0",
      hal_command_buffer_collective(cb, channel, &p, mine, 0, mine, 0));
  p = ok;
  p.element_type = (hal_element_type_t)77;
  HAL_ASSERT_STATUS(
      HAL_STATUS_INVALID_ARGUMENT, "unknown element type",
      hal_command_buffer_collective(cb, channel, &p, mine, 0, mine, 0));
  p = ok;
  p.reduction = (hal_reduction_t)9;
  HAL_ASSERT_STATUS(
      HAL_STATUS_INVALID_ARGUMENT, "unknown reduction",
      hal_command_buffer_collective(cb, channel, &p, mine, 0, mine, 0));
  p = ok;
  p.kind = (hal_collective_kind_t)42;
  HAL_ASSERT_STATUS(
      HAL_STATUS_INVALID_ARGUMENT, "unknown kind",
      hal_command_buffer_collective(cb, channel, &p, mine, 0, mine, 0));
  HAL_ASSERT_STATUS(
      HAL_STATUS_INVALID_ARGUMENT, "params is NULL",
      hal_command_buffer_collective(cb, channel, NULL, mine, 0, mine, 0));
  HAL_ASSERT_STATUS(
      HAL_STATUS_INVALID_ARGUMENT, "send buffer is NULL",
      hal_command_buffer_collective(cb, channel, &ok, NULL, 0, mine, 0));
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, "not a channel",
                    hal_command_buffer_collective(cb, (hal_channel_t*)mine, &ok,
                                                  mine, 0, mine, 0));
  HAL_ASSERT_OK(hal_command_buffer_end(cb));
  hal_command_buffer_info_t info;
  HAL_ASSERT_OK(hal_command_buffer_query_info(cb, &info));
  assert_int_equal(info.op_count, 0);
  // Channels: bad ranks and groups.
  hal_channel_id_t id;
  HAL_ASSERT_OK(hal_channel_id_generate(device, &id));
  hal_channel_t* out = NULL;
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, "rank 2 of 2",
                    hal_channel_create(device, &id, 2, 2, &out));
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, "rank 0 of 0",
                    hal_channel_create(device, &id, 0, 0, &out));
  hal_device_t* twice[2] = {device, device};
  hal_channel_t* pair[2];
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, "the same device",
                    hal_channel_create_group(2, twice, pair));
  // A second device object of the same GPU is the same device to a group.
  twice[1] = cts_create_device(hal_device_info(device)->index);
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT,
                    "two device objects of one GPU",
                    hal_channel_create_group(2, twice, pair));
  hal_device_release(twice[1]);
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, "no devices",
                    hal_channel_create_group(0, twice, pair));
  hal_command_buffer_release(cb);
  hal_buffer_release(host);
  hal_buffer_release(theirs);
  hal_buffer_release(mine);
}

// A channel released while its submission still runs: the submission
// keeps it until the device is done (the communicator goes after).
CTS_CASE(Collective_ChannelReleasedWithWorkInFlight) {
  collective_fixture_t* f = *state;
  hal_channel_t* channels[kRanks];
  HAL_ASSERT_OK(hal_channel_create_group(kRanks, f->devices, channels));
  hal_buffer_t* buffers[kRanks];
  hal_command_buffer_t* cbs[kRanks];
  hal_semaphore_t* gate = cts_create_semaphore(NULL, 0);
  hal_semaphore_t* done[kRanks];
  for (int r = 0; r < kRanks; ++r) {
    buffers[r] = device_buffer(f->devices[r], 1024 * 4);
    uint32_t ones[1024];
    for (int i = 0; i < 1024; ++i)
      ones[i] = 1;
    write_bytes(buffers[r], ones, sizeof(ones));
    cbs[r] = all_reduce_command_buffer(f->devices[r], channels[r], buffers[r],
                                       HAL_ELEMENT_TYPE_UINT32, 1024);
    done[r] = cts_create_semaphore(f->devices[r], 0);
    HAL_ASSERT_OK(cts_submit(f->devices[r], 0, gate, 1, cbs[r], done[r], 1));
    hal_command_buffer_release(cbs[r]);
    hal_channel_release(channels[r]);  // the submission keeps it
  }
  HAL_ASSERT_OK(hal_semaphore_signal(gate, 1));
  for (int r = 0; r < kRanks; ++r) {
    HAL_ASSERT_OK(cts_wait(done[r], 1));
    uint32_t words[1024];
    HAL_ASSERT_OK(hal_buffer_read(buffers[r], 0, words, sizeof(words)));
    for (int i = 0; i < 1024; ++i)
      assert_int_equal(words[i], kRanks);
    hal_semaphore_release(done[r]);
    hal_buffer_release(buffers[r]);
  }
  hal_semaphore_release(gate);
}

// A peer that never records its part (without leaving or aborting) does
// not hold the other rank forever: on the virtual GPU the collective fails
// after VGPU_CCL_TIMEOUT_MS (3 s in this suite's runs), naming the rank
// that never came, and the submission's signals fail with it. A real
// library's bound is its own (NCCL's is none: abort the communicator).
CTS_CASE(Collective_PeerThatNeverCallsFailsAfterABound) {
  collective_fixture_t* f = *state;
  if (!getenv("VGPU_CCL_TIMEOUT_MS")) {
    print_message(
        "[  SKIPPED ] a real collective library may wait forever "
        "for a peer that never calls (NCCL has no bound); the "
        "virtual GPU's runs set VGPU_CCL_TIMEOUT_MS\n");
    skip();
  }
  hal_channel_t* channels[kRanks];
  HAL_ASSERT_OK(hal_channel_create_group(kRanks, f->devices, channels));
  hal_buffer_t* buffer = device_buffer(f->devices[0], 256);
  hal_command_buffer_t* cb =
      cts_begin_command_buffer(f->devices[0], HAL_COMMAND_BUFFER_MODE_ONE_SHOT);
  hal_collective_params_t params = {.kind = HAL_COLLECTIVE_ALL_REDUCE,
                                    .element_type = HAL_ELEMENT_TYPE_INT32,
                                    .reduction = HAL_REDUCTION_SUM,
                                    .count = 64};
  HAL_ASSERT_OK(hal_command_buffer_collective(cb, channels[0], &params, buffer,
                                              0, buffer, 0));
  HAL_ASSERT_OK(hal_command_buffer_end(cb));
  hal_semaphore_t* done = cts_create_semaphore(f->devices[0], 0);
  submit(f->devices[0], cb, done, 1);
  HAL_ASSERT_STATUS(HAL_STATUS_UNAVAILABLE, "rank(s) 1 never arrived",
                    cts_wait(done, 1));
  hal_status_t check = hal_channel_check(channels[1]);
  assert_int_equal(hal_status_code(check), HAL_STATUS_UNAVAILABLE);
  hal_status_free(check);
  hal_semaphore_release(done);
  hal_command_buffer_release(cb);
  hal_buffer_release(buffer);
  for (int r = 0; r < kRanks; ++r)
    hal_channel_release(channels[r]);
}

// A dispatch of |entry_point| (fill_u32 or add_u32) with |word| over the
// |count| words of |buffer|, as a one-shot command buffer.
static hal_command_buffer_t* dispatch_words(hal_device_t* device,
                                            hal_executable_t* executable,
                                            size_t entry_point,
                                            hal_buffer_t* buffer,
                                            uint32_t count, uint32_t word) {
  hal_command_buffer_t* cb =
      cts_begin_command_buffer(device, HAL_COMMAND_BUFFER_MODE_ONE_SHOT);
  uint32_t constants[2] = {word, count};
  hal_dispatch_binding_t binding = {buffer, 0, (uint64_t)count * 4};
  uint32_t groups[3] = {(count + 63) / 64, 1, 1};
  uint32_t size[3] = {64, 1, 1};
  HAL_ASSERT_OK(hal_command_buffer_dispatch(cb, executable, entry_point, groups,
                                            size, constants, 2, &binding, 1));
  HAL_ASSERT_OK(hal_command_buffer_end(cb));
  return cb;
}

// Across queues and submissions: on each device a dispatch on the second
// queue fills the buffer, the all-reduce on the first queue waits for it,
// and a dispatch on the second queue adds to the result once the
// all-reduce signals; submitted last first (every wait before its
// signal). Every word is the sum of the fills plus the addend.
CTS_CASE(Collective_OrderedWithDispatchesOnTheOtherQueue) {
  collective_fixture_t* f = *state;
  enum { kWords = 4099 };
  hal_executable_t* executables[kRanks] = {NULL};
  hal_buffer_t* buffers[kRanks];
  hal_command_buffer_t* cbs[kRanks][3];
  hal_semaphore_t* timelines[kRanks];
  for (int r = 0; r < kRanks; ++r) {
    hal_status_t status =
        hal_kernel_create_executable(f->devices[r], &executables[r]);
    if (hal_status_code(status) == HAL_STATUS_UNIMPLEMENTED) {
      char text[512];
      hal_status_format(status, text, sizeof(text));
      hal_status_free(status);
      for (int q = 0; q < r; ++q)
        hal_executable_release(executables[q]);
      print_message("[  SKIPPED ] no kernel image for this device: %s\n", text);
      skip();
    }
    HAL_ASSERT_OK(status);
  }
  for (int r = 0; r < kRanks; ++r) {
    hal_device_t* device = f->devices[r];
    buffers[r] = device_buffer(device, kWords * 4);
    cbs[r][0] = dispatch_words(device, executables[r], HAL_KERNEL_FILL_U32,
                               buffers[r], kWords, (uint32_t)(r + 1));
    cbs[r][1] =
        cts_begin_command_buffer(device, HAL_COMMAND_BUFFER_MODE_ONE_SHOT);
    hal_collective_params_t params = {.kind = HAL_COLLECTIVE_ALL_REDUCE,
                                      .element_type = HAL_ELEMENT_TYPE_UINT32,
                                      .reduction = HAL_REDUCTION_SUM,
                                      .count = kWords};
    HAL_ASSERT_OK(hal_command_buffer_collective(
        cbs[r][1], f->channels[r], &params, buffers[r], 0, buffers[r], 0));
    HAL_ASSERT_OK(hal_command_buffer_end(cbs[r][1]));
    cbs[r][2] = dispatch_words(device, executables[r], HAL_KERNEL_ADD_U32,
                               buffers[r], kWords, 100);
    timelines[r] = cts_create_semaphore(device, 0);
  }
  for (int r = 0; r < kRanks; ++r) {
    uint32_t other = hal_device_info(f->devices[r])->queue_count > 1 ? 1 : 0;
    HAL_ASSERT_OK(cts_submit(f->devices[r], other, timelines[r], 2, cbs[r][2],
                             timelines[r], 3));
    HAL_ASSERT_OK(cts_submit(f->devices[r], 0, timelines[r], 1, cbs[r][1],
                             timelines[r], 2));
    HAL_ASSERT_OK(
        cts_submit(f->devices[r], other, NULL, 0, cbs[r][0], timelines[r], 1));
  }
  for (int r = 0; r < kRanks; ++r) {
    HAL_ASSERT_OK(cts_wait(timelines[r], 3));
    uint32_t words[kWords];
    HAL_ASSERT_OK(hal_buffer_read(buffers[r], 0, words, sizeof(words)));
    for (int i = 0; i < kWords; ++i) {
      if (words[i] != 1 + 2 + 100)
        fail_msg("rank %d word %d is %u, expected 103", r, i, words[i]);
    }
  }
  for (int r = 0; r < kRanks; ++r) {
    hal_semaphore_release(timelines[r]);
    for (int k = 0; k < 3; ++k)
      hal_command_buffer_release(cbs[r][k]);
    hal_buffer_release(buffers[r]);
    hal_executable_release(executables[r]);
  }
}

typedef struct split_arg_t {
  hal_channel_t* channel;
  int32_t color, key;
  hal_channel_t* out;
  hal_status_t status;
} split_arg_t;

static void* split_rank(void* p) {
  split_arg_t* arg = p;
  arg->status =
      hal_channel_split(arg->channel, arg->color, arg->key, &arg->out);
  return NULL;
}

// A split (every rank calls it, from its own thread: it blocks until the
// new channel is joined) ranks the new channel by key: reversed keys swap
// the ranks, and an all-reduce over the new channels sums. A rank with no
// color gets no channel while the other gets one of its own; a color below
// -1 is refused.
CTS_CASE(Collective_SplitMakesChannelsByColorAndKey) {
  collective_fixture_t* f = *state;
  split_arg_t args[kRanks] = {
      {.channel = f->channels[0], .color = 0, .key = 1},
      {.channel = f->channels[1], .color = 0, .key = 0}};
  cts_run_threads(kRanks, split_rank, args, sizeof(args[0]));
  if (hal_status_code(args[0].status) == HAL_STATUS_UNIMPLEMENTED) {
    char text[512];
    hal_status_format(args[0].status, text, sizeof(text));
    print_message("[  SKIPPED ] no split: %s\n", text);
    for (int r = 0; r < kRanks; ++r) {
      hal_status_free(args[r].status);
      hal_channel_release(args[r].out);
    }
    skip();
  }
  hal_channel_t* parts[kRanks];
  for (int r = 0; r < kRanks; ++r) {
    HAL_ASSERT_OK(args[r].status);
    assert_int_equal(hal_channel_rank(args[r].out), 1 - r);
    assert_int_equal(hal_channel_rank_count(args[r].out), kRanks);
    assert_ptr_equal(hal_channel_device(args[r].out), f->devices[r]);
    parts[r] = args[r].out;
  }
  expect_all_reduce_sums(f, parts, HAL_ELEMENT_TYPE_INT32, 257);
  for (int r = 0; r < kRanks; ++r)
    hal_channel_release(parts[r]);
  split_arg_t again[kRanks] = {
      {.channel = f->channels[0], .color = 3, .key = 0},
      {.channel = f->channels[1], .color = HAL_CHANNEL_SPLIT_NO_COLOR}};
  cts_run_threads(kRanks, split_rank, again, sizeof(again[0]));
  HAL_ASSERT_OK(again[0].status);
  HAL_ASSERT_OK(again[1].status);
  assert_int_equal(hal_channel_rank(again[0].out), 0);
  assert_int_equal(hal_channel_rank_count(again[0].out), 1);
  assert_null(again[1].out);
  hal_channel_release(again[0].out);
  hal_channel_t* none = NULL;
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, "color -2",
                    hal_channel_split(f->channels[0], -2, 0, &none));
  assert_null(none);
}

typedef struct split_after_arg_t {
  hal_device_t* device;
  hal_channel_t* channel;
  int rank;
  int rank0_pause_ms;  // between rank 0's submission and its split
  hal_buffer_t* buffer;
  hal_semaphore_t* done;
  hal_status_t waited;  // rank 1's wait for its all-reduce, before it splits
  hal_status_t split;
  hal_channel_t* part;
} split_after_arg_t;

static void* split_after_collective_rank(void* p) {
  split_after_arg_t* arg = p;
  enum { kCount = 1024 };
  if (arg->rank == 1)
    usleep(100 * 1000);  // rank 0 splits meanwhile
  hal_command_buffer_t* cb = all_reduce_command_buffer(
      arg->device, arg->channel, arg->buffer, HAL_ELEMENT_TYPE_INT32, kCount);
  submit(arg->device, cb, arg->done, 1);
  hal_command_buffer_release(cb);
  if (arg->rank == 1)
    arg->waited = cts_wait(arg->done, 1);
  else if (arg->rank0_pause_ms)
    usleep((useconds_t)arg->rank0_pause_ms * 1000);
  arg->split = hal_channel_split(arg->channel, 0, arg->rank, &arg->part);
  return NULL;
}

// A split comes after the collectives its rank submitted before it: rank
// 0 submits an all-reduce and splits at once (its all-reduce still to be
// issued, or already in flight), rank 1 submits its own later and waits
// for the result before it splits. Both splits meet and the sums are
// right. The split used to take the channel before the all-reduce was
// issued, which then waited behind it, or (in flight) held the driver's
// watch of collectives, which the peer's issue waits for: each split
// failed at the library's join bound with UNAVAILABLE.
CTS_CASE(Collective_SplitComesAfterTheCollectivesSubmittedBeforeIt) {
  collective_fixture_t* f = *state;
  enum { kCount = 1024 };
  const int pauses[] = {0, 50};
  for (size_t p = 0; p < HAL_ARRAYSIZE(pauses); ++p) {
    split_after_arg_t args[kRanks];
    for (int r = 0; r < kRanks; ++r) {
      args[r] = (split_after_arg_t){.device = f->devices[r],
                                    .channel = f->channels[r],
                                    .rank = r,
                                    .rank0_pause_ms = pauses[p]};
      args[r].buffer = device_buffer(f->devices[r], kCount * 4);
      int32_t values[kCount];
      for (int i = 0; i < kCount; ++i)
        values[i] = i + r;
      write_bytes(args[r].buffer, values, sizeof(values));
      args[r].done = cts_create_semaphore(f->devices[r], 0);
    }
    cts_run_threads(kRanks, split_after_collective_rank, args, sizeof(args[0]));
    if (hal_status_code(args[0].split) == HAL_STATUS_UNIMPLEMENTED) {
      for (int r = 0; r < kRanks; ++r) {
        hal_status_free(args[r].waited);
        hal_status_free(args[r].split);
        hal_channel_release(args[r].part);
        hal_buffer_release(args[r].buffer);
        hal_semaphore_release(args[r].done);
      }
      print_message("[  SKIPPED ] no split\n");
      skip();
    }
    HAL_ASSERT_OK(args[1].waited);
    for (int r = 0; r < kRanks; ++r) {
      HAL_ASSERT_OK(args[r].split);
      HAL_ASSERT_OK(cts_wait(args[r].done, 1));
      int32_t sums[kCount];
      HAL_ASSERT_OK(hal_buffer_read(args[r].buffer, 0, sums, sizeof(sums)));
      for (int i = 0; i < kCount; ++i)
        assert_int_equal(sums[i], 2 * i + 1);
      hal_channel_release(args[r].part);
      hal_buffer_release(args[r].buffer);
      hal_semaphore_release(args[r].done);
    }
  }
}

// A rank whose peer released its channel can never meet it again: its
// next collective fails (naming the rank that left) and so does its
// channel's check, rather than succeed with the receive buffer unwritten.
CTS_CASE(Collective_PeerReleasedFailsLaterCollectives) {
  collective_fixture_t* f = *state;
  hal_channel_release(f->channels[1]);
  f->channels[1] = NULL;
  hal_buffer_t* send = device_buffer(f->devices[0], 64);
  hal_buffer_t* recv = device_buffer(f->devices[0], 64);
  hal_command_buffer_t* cb =
      cts_begin_command_buffer(f->devices[0], HAL_COMMAND_BUFFER_MODE_ONE_SHOT);
  uint32_t poison = 0xDEADBEEFu;
  HAL_ASSERT_OK(hal_command_buffer_fill_buffer(cb, recv, 0, 64, &poison, 4));
  HAL_ASSERT_OK(hal_command_buffer_execution_barrier(cb));
  hal_collective_params_t params = {.kind = HAL_COLLECTIVE_ALL_REDUCE,
                                    .element_type = HAL_ELEMENT_TYPE_INT32,
                                    .reduction = HAL_REDUCTION_SUM,
                                    .count = 16};
  HAL_ASSERT_OK(hal_command_buffer_collective(cb, f->channels[0], &params, send,
                                              0, recv, 0));
  HAL_ASSERT_OK(hal_command_buffer_end(cb));
  hal_semaphore_t* done = cts_create_semaphore(f->devices[0], 0);
  submit(f->devices[0], cb, done, 1);
  hal_status_t status = cts_wait(done, 1);
  char text[1024];
  hal_status_format(status, text, sizeof(text));
  hal_status_free(status);
  if (!strstr(text, "rank 1 left"))
    fail_msg("a collective whose peer left ended with: %s", text);
  hal_status_t check = hal_channel_check(f->channels[0]);
  assert_int_not_equal(hal_status_code(check), HAL_STATUS_OK);
  hal_status_free(check);
  hal_semaphore_release(done);
  hal_command_buffer_release(cb);
  hal_buffer_release(recv);
  hal_buffer_release(send);
}

// A submission with a collective that never runs (its wait failed) would
// leave the other rank waiting for its part forever: the driver aborts the
// channel instead, so the peer's submission fails at once naming the
// abort (not after the library's bound), and the channel says why.
CTS_CASE(Collective_SubmissionThatNeverRunsAbortsTheChannel) {
  collective_fixture_t* f = *state;
  if (!getenv("VGPU_CCL_TIMEOUT_MS")) {
    print_message(
        "[  SKIPPED ] whether a real library's peers see an abort (rather "
        "than wait for the aborted rank) is the library's; the virtual "
        "GPU's runs set VGPU_CCL_TIMEOUT_MS\n");
    skip();
  }
  hal_buffer_t* buffers[kRanks];
  hal_command_buffer_t* cbs[kRanks];
  hal_semaphore_t* done[kRanks];
  hal_collective_params_t params = {.kind = HAL_COLLECTIVE_ALL_REDUCE,
                                    .element_type = HAL_ELEMENT_TYPE_INT32,
                                    .reduction = HAL_REDUCTION_SUM,
                                    .count = 64};
  for (int r = 0; r < kRanks; ++r) {
    buffers[r] = device_buffer(f->devices[r], 256);
    cbs[r] = cts_begin_command_buffer(f->devices[r],
                                      HAL_COMMAND_BUFFER_MODE_ONE_SHOT);
    HAL_ASSERT_OK(hal_command_buffer_collective(cbs[r], f->channels[r], &params,
                                                buffers[r], 0, buffers[r], 0));
    HAL_ASSERT_OK(hal_command_buffer_end(cbs[r]));
    done[r] = cts_create_semaphore(f->devices[r], 0);
  }
  hal_semaphore_t* gate = cts_create_semaphore(f->devices[0], 0);
  HAL_ASSERT_OK(cts_submit(f->devices[1], 0, NULL, 0, cbs[1], done[1], 1));
  HAL_ASSERT_OK(cts_submit(f->devices[0], 0, gate, 1, cbs[0], done[0], 1));
  hal_semaphore_fail(gate,
                     hal_make_status(HAL_STATUS_DATA_LOSS, "the gate failed"));
  HAL_ASSERT_STATUS(HAL_STATUS_DATA_LOSS, "the gate failed",
                    cts_wait(done[0], 1));
  hal_status_t peer = cts_wait(done[1], 1);
  char text[1024];
  hal_status_format(peer, text, sizeof(text));
  if (!strstr(text, "aborted by rank 0"))
    fail_msg("the peer's submission: %s", text);
  hal_status_free(peer);
  HAL_ASSERT_STATUS(HAL_STATUS_ABORTED, "never ran",
                    hal_channel_check(f->channels[0]));
  hal_status_t check = hal_channel_check(f->channels[1]);
  assert_int_not_equal(hal_status_code(check), HAL_STATUS_OK);
  hal_status_free(check);
  // Both channels are aborted now, the peer's by the failure its check
  // found: a split of either is ABORTED (channel.h), naming the cause,
  // and makes no channel.
  for (int r = 0; r < kRanks; ++r) {
    hal_channel_t* part = NULL;
    HAL_ASSERT_STATUS(HAL_STATUS_ABORTED,
                      r == 0 ? "never ran" : "aborted by rank 0",
                      hal_channel_split(f->channels[r], 0, 0, &part));
    assert_null(part);
  }
  // Later collectives on the aborted rank fail, naming the abort.
  hal_command_buffer_t* later =
      cts_begin_command_buffer(f->devices[0], HAL_COMMAND_BUFFER_MODE_ONE_SHOT);
  HAL_ASSERT_OK(hal_command_buffer_collective(later, f->channels[0], &params,
                                              buffers[0], 0, buffers[0], 0));
  HAL_ASSERT_OK(hal_command_buffer_end(later));
  hal_semaphore_t* after = cts_create_semaphore(f->devices[0], 0);
  HAL_ASSERT_OK(cts_submit(f->devices[0], 0, NULL, 0, later, after, 1));
  HAL_ASSERT_STATUS(HAL_STATUS_ABORTED, "aborted on this rank",
                    cts_wait(after, 1));
  hal_semaphore_release(after);
  hal_command_buffer_release(later);
  hal_semaphore_release(gate);
  for (int r = 0; r < kRanks; ++r) {
    hal_semaphore_release(done[r]);
    hal_command_buffer_release(cbs[r]);
    hal_buffer_release(buffers[r]);
  }
}

// Devices made from URIs (each through a driver instance of its own) are
// devices of one driver: they form a group, and its channels work.
CTS_CASE(Collective_GroupOfDevicesMadeFromUris) {
  collective_fixture_t* f = *state;
  hal_device_t* devices[kRanks];
  for (int r = 0; r < kRanks; ++r) {
    char uri[128];
    snprintf(uri, sizeof(uri), "%s://%d", cts_context.driver_name, r);
    HAL_ASSERT_OK(hal_driver_registry_create_device(
        cts_context.registry, uri, hal_allocator_system(), &devices[r]));
  }
  hal_channel_t* group[kRanks];
  HAL_ASSERT_OK(hal_channel_create_group(kRanks, devices, group));
  for (int r = 0; r < kRanks; ++r) {
    hal_channel_release(f->channels[r]);
    hal_device_release(f->devices[r]);
    f->devices[r] = devices[r];
    f->channels[r] = group[r];
  }
  expect_all_reduce_sums(f, group, HAL_ELEMENT_TYPE_FLOAT64, 129);
}

//===----------------------------------------------------------------------===//
// Ranks in two processes
//===----------------------------------------------------------------------===//
//
// The parent case starts this program again twice, each process one rank
// on its device 0 (on the virtual GPU each process has devices of its own),
// the channel's id and the rank in the environment, as a launcher passes
// them. A rank process runs rank_process_case (below) as its only case and
// exits with the number of its failures.

extern char** environ;

// Starts |processes| copies of this program on |scenario|, copy r with
// CTS_RANK_INDEX=r, |id| (NULL: none) and the "NAME=value" strings of
// |extra| in its environment, and waits (bounded) for them: codes[r] is
// copy r's exit code, or 128 + the signal that ended it.
static void run_processes(const char* scenario, int processes,
                          const hal_channel_id_t* id, const char* const* extra,
                          size_t extra_count, int* codes) {
  char hex[2 * HAL_CHANNEL_ID_SIZE + 1] = "";
  for (size_t i = 0; id && i < sizeof(id->bytes); ++i)
    snprintf(hex + 2 * i, 3, "%02x", id->bytes[i]);
  size_t count = 0;
  while (environ[count])
    ++count;
  pid_t pids[kRanks];
  assert_true(processes <= kRanks);
  for (int r = 0; r < processes; ++r) {
    char** env = calloc(count + 4 + extra_count, sizeof(char*));
    size_t n = 0;
    for (size_t i = 0; i < count; ++i) {
      bool replaced = strncmp(environ[i], "CTS_RANK_", 9) == 0;
      for (size_t e = 0; e < extra_count && !replaced; ++e) {
        size_t name = strcspn(extra[e], "=") + 1;
        replaced = strncmp(environ[i], extra[e], name) == 0;
      }
      if (!replaced)
        env[n++] = environ[i];
    }
    char vars[3][300];
    snprintf(vars[0], sizeof(vars[0]), "CTS_RANK_SCENARIO=%s", scenario);
    snprintf(vars[1], sizeof(vars[1]), "CTS_RANK_ID=%s", hex);
    snprintf(vars[2], sizeof(vars[2]), "CTS_RANK_INDEX=%d", r);
    for (int v = 0; v < 3; ++v)
      env[n++] = vars[v];
    for (size_t e = 0; e < extra_count; ++e)
      env[n++] = (char*)extra[e];
    char* argv[] = {(char*)"cts-collective-rank", NULL};
    int rc = posix_spawn(&pids[r], "/proc/self/exe", NULL, NULL, argv, env);
    free(env);
    assert_int_equal(rc, 0);
  }
  // Generous for a loaded machine under a sanitizer: a hang is the bug.
  time_t deadline = time(NULL) + 240;
  for (int r = 0; r < processes; ++r) {
    int status = 0;
    pid_t got = 0;
    while ((got = waitpid(pids[r], &status, WNOHANG)) == 0 &&
           time(NULL) < deadline) {
      usleep(10000);
    }
    if (got == 0) {
      for (int q = 0; q < processes; ++q)
        kill(pids[q], SIGKILL);
      fail_msg("%s: process %d did not end within 240 s", scenario, r);
    }
    codes[r] = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
}

// Both ranks, one process each, on |scenario| with |id|.
static void run_rank_processes(const hal_channel_id_t* id, const char* scenario,
                               int codes[kRanks]) {
  run_processes(scenario, kRanks, id, NULL, 0, codes);
}

// One collective on this process's rank, a fill before it and a copy
// after it in the same command buffer; returns the copy's bytes (free
// them). Rank r's send holds input_value(r, i).
static uint8_t* rank_collective(hal_device_t* device, hal_channel_t* channel,
                                hal_collective_params_t params,
                                uint64_t send_elements,
                                uint64_t recv_elements) {
  int32_t rank = hal_channel_rank(channel);
  size_t size = hal_element_type_size(params.element_type);
  uint64_t send_bytes = send_elements * size, recv_bytes = recv_elements * size;
  hal_buffer_t* send = device_buffer(device, send_bytes);
  hal_buffer_t* recv = device_buffer(device, recv_bytes);
  hal_buffer_t* out = device_buffer(device, recv_bytes);
  uint8_t* data = malloc(send_bytes > recv_bytes ? send_bytes : recv_bytes);
  for (uint64_t i = 0; i < send_elements; ++i)
    element_set(params.element_type, data, i, input_value(rank, i));
  write_bytes(send, data, send_bytes);
  hal_command_buffer_t* cb =
      cts_begin_command_buffer(device, HAL_COMMAND_BUFFER_MODE_ONE_SHOT);
  uint8_t clear = 0xEE;
  HAL_ASSERT_OK(
      hal_command_buffer_fill_buffer(cb, recv, 0, recv_bytes, &clear, 1));
  HAL_ASSERT_OK(hal_command_buffer_execution_barrier(cb));
  bool no_send =
      params.kind == HAL_COLLECTIVE_RECV ||
      (params.kind == HAL_COLLECTIVE_BROADCAST && params.root_or_peer != rank);
  if (params.kind == HAL_COLLECTIVE_SEND) {
    // An exchange: send to the peer and receive from it, both recorded
    // first (one group), as both ranks do.
    HAL_ASSERT_OK(
        hal_command_buffer_collective(cb, channel, &params, send, 0, NULL, 0));
    params.kind = HAL_COLLECTIVE_RECV;
    HAL_ASSERT_OK(
        hal_command_buffer_collective(cb, channel, &params, NULL, 0, recv, 0));
  } else {
    HAL_ASSERT_OK(hal_command_buffer_collective(
        cb, channel, &params, no_send ? NULL : send, 0, recv, 0));
  }
  HAL_ASSERT_OK(hal_command_buffer_execution_barrier(cb));
  HAL_ASSERT_OK(
      hal_command_buffer_copy_buffer(cb, recv, 0, out, 0, recv_bytes));
  HAL_ASSERT_OK(hal_command_buffer_end(cb));
  hal_semaphore_t* done = cts_create_semaphore(device, 0);
  submit(device, cb, done, 1);
  HAL_ASSERT_OK(cts_wait(done, 1));
  HAL_ASSERT_OK(hal_channel_check(channel));
  HAL_ASSERT_OK(hal_buffer_read(out, 0, data, recv_bytes));
  hal_semaphore_release(done);
  hal_command_buffer_release(cb);
  hal_buffer_release(out);
  hal_buffer_release(recv);
  hal_buffer_release(send);
  return data;
}

// An all-reduce of |count| elements of |type| with |reduction|, every
// element checked.
static void rank_all_reduce(hal_device_t* device, hal_channel_t* channel,
                            hal_element_type_t type, hal_reduction_t reduction,
                            uint64_t count) {
  hal_collective_params_t params = {.kind = HAL_COLLECTIVE_ALL_REDUCE,
                                    .element_type = type,
                                    .reduction = reduction,
                                    .count = count};
  uint8_t* out = rank_collective(device, channel, params, count, count);
  for (uint64_t i = 0; i < count; ++i)
    expect_element(type, out, i, reduced_input(reduction, i), "all_reduce",
                   hal_channel_rank(channel));
  free(out);
}

// Every other collective once, every element checked.
static void rank_other_collectives(hal_device_t* device,
                                   hal_channel_t* channel) {
  int32_t r = hal_channel_rank(channel);
  const uint64_t n = 777;
  hal_collective_params_t broadcast = {.kind = HAL_COLLECTIVE_BROADCAST,
                                       .element_type = HAL_ELEMENT_TYPE_INT32,
                                       .root_or_peer = 1,
                                       .count = n};
  uint8_t* out = rank_collective(device, channel, broadcast, n, n);
  for (size_t i = 0; i < n; ++i)
    expect_element(HAL_ELEMENT_TYPE_INT32, out, i, input_value(1, i),
                   "broadcast", r);
  free(out);
  hal_collective_params_t reduce = {.kind = HAL_COLLECTIVE_REDUCE,
                                    .element_type = HAL_ELEMENT_TYPE_FLOAT64,
                                    .reduction = HAL_REDUCTION_MAX,
                                    .root_or_peer = 0,
                                    .count = n};
  out = rank_collective(device, channel, reduce, n, n);
  for (size_t i = 0; i < n && r == 0; ++i)
    expect_element(HAL_ELEMENT_TYPE_FLOAT64, out, i,
                   reduced_input(HAL_REDUCTION_MAX, i), "reduce", r);
  free(out);
  hal_collective_params_t gather = {.kind = HAL_COLLECTIVE_ALL_GATHER,
                                    .element_type = HAL_ELEMENT_TYPE_UINT32,
                                    .count = n};
  out = rank_collective(device, channel, gather, n, n * kRanks);
  for (int from = 0; from < kRanks; ++from)
    for (size_t i = 0; i < n; ++i)
      expect_element(HAL_ELEMENT_TYPE_UINT32, out, (size_t)from * n + i,
                     input_value(from, i), "all_gather", r);
  free(out);
  hal_collective_params_t scatter = {.kind = HAL_COLLECTIVE_REDUCE_SCATTER,
                                     .element_type = HAL_ELEMENT_TYPE_INT64,
                                     .reduction = HAL_REDUCTION_SUM,
                                     .count = n};
  out = rank_collective(device, channel, scatter, n * kRanks, n);
  for (size_t i = 0; i < n; ++i)
    expect_element(HAL_ELEMENT_TYPE_INT64, out, i,
                   reduced_input(HAL_REDUCTION_SUM, (size_t)r * n + i),
                   "reduce_scatter", r);
  free(out);
  // Past one staging slot of a pair of ranks (256 KiB on the virtual GPU).
  const uint64_t words = 100003;
  hal_collective_params_t exchange = {.kind = HAL_COLLECTIVE_SEND,
                                      .element_type = HAL_ELEMENT_TYPE_FLOAT32,
                                      .root_or_peer = 1 - r,
                                      .count = words};
  out = rank_collective(device, channel, exchange, words, words);
  for (size_t i = 0; i < words; ++i)
    expect_element(HAL_ELEMENT_TYPE_FLOAT32, out, i, input_value(1 - r, i),
                   "receive", r);
  free(out);
}

// Both ranks in this process: devices 0 and 1, a group over them, and on
// device 0 a 256-byte buffer and a ONE_SHOT command buffer being recorded.
typedef struct process_group_t {
  hal_device_t* devices[kRanks];
  hal_channel_t* channels[kRanks];
  hal_buffer_t* buffer;
  hal_command_buffer_t* cb;
} process_group_t;

static void process_group_open(process_group_t* g) {
  for (int r = 0; r < kRanks; ++r)
    g->devices[r] = cts_create_device((uint32_t)r);
  HAL_ASSERT_OK(hal_channel_create_group(kRanks, g->devices, g->channels));
  g->buffer = device_buffer(g->devices[0], 256);
  g->cb =
      cts_begin_command_buffer(g->devices[0], HAL_COMMAND_BUFFER_MODE_ONE_SHOT);
}

static void process_group_close(process_group_t* g) {
  hal_command_buffer_release(g->cb);
  hal_buffer_release(g->buffer);
  for (int r = 0; r < kRanks; ++r) {
    hal_channel_release(g->channels[r]);
    hal_device_release(g->devices[r]);
  }
}

// Records an all-reduce (sum) of |buffer|'s first 64 int32 in place.
static void record_small_all_reduce(hal_command_buffer_t* cb,
                                    hal_channel_t* channel,
                                    hal_buffer_t* buffer) {
  hal_collective_params_t params = {.kind = HAL_COLLECTIVE_ALL_REDUCE,
                                    .element_type = HAL_ELEMENT_TYPE_INT32,
                                    .reduction = HAL_REDUCTION_SUM,
                                    .count = 64};
  HAL_ASSERT_OK(hal_command_buffer_collective(cb, channel, &params, buffer, 0,
                                              buffer, 0));
}

// "stall": both ranks in this process, rank 1 never submits its part, and
// the library's own bound (VGPU_CCL_TIMEOUT_MS) is far off: the driver's
// watch aborts the channel after HAL_SYNC_MAX_WAIT_MS without progress,
// so rank 0's submission fails saying so. Host waits cut short by the same
// bound are retried (30 s in all).
static void stall_process_case(void) {
  process_group_t g;
  process_group_open(&g);
  record_small_all_reduce(g.cb, g.channels[0], g.buffer);
  HAL_ASSERT_OK(hal_command_buffer_end(g.cb));
  hal_semaphore_t* done = cts_create_semaphore(g.devices[0], 0);
  submit(g.devices[0], g.cb, done, 1);
  char text[2048] = "";
  for (time_t give_up = time(NULL) + 30; time(NULL) < give_up;) {
    hal_status_t status = cts_wait(done, 1);
    hal_status_format(status, text, sizeof(text));
    bool cut_short = strstr(text, "cut this wait short") != NULL;
    hal_status_free(status);
    if (!cut_short)
      break;
  }
  if (!strstr(text, "made no progress for HAL_SYNC_MAX_WAIT_MS"))
    fail_msg("a stalled peer's collective ended with: %s", text);
  hal_semaphore_release(done);
  process_group_close(&g);
}

// "graph_build": both ranks in this process, whose runtime fails a graph
// call (CTS_RANK_FAULT, in VGPU_FAULTS): a graph driver's end() of a fill,
// a collective and a fill builds the runs around the collective as graphs
// of their own, and the one at op CTS_RANK_BUILD_FAILS (0 or 2) fails.
// end() returns that failure naming the run's ops, read before the failed
// build's pieces are freed, and counts no build, not even a piece built
// before the failure.
static void graph_build_process_case(void) {
  process_group_t g;
  process_group_open(&g);
  uint32_t pattern = 7;
  HAL_ASSERT_OK(hal_command_buffer_fill_buffer(g.cb, g.buffer, 0, 256, &pattern,
                                               sizeof(pattern)));
  record_small_all_reduce(g.cb, g.channels[0], g.buffer);
  HAL_ASSERT_OK(hal_command_buffer_fill_buffer(g.cb, g.buffer, 0, 256, &pattern,
                                               sizeof(pattern)));
  hal_status_t status = hal_command_buffer_end(g.cb);
  char text[2048], ops[64];
  hal_status_format(status, text, sizeof(text));
  assert_int_not_equal(hal_status_consume_code(status), HAL_STATUS_OK);
  int failing = atoi(getenv("CTS_RANK_BUILD_FAILS"));
  snprintf(ops, sizeof(ops), "the graph of ops %d to %d of 3", failing,
           failing);
  if (!strstr(text, getenv("CTS_RANK_FAULT")) || !strstr(text, ops))
    fail_msg("a failed build of %s ended with: %s", ops, text);
  hal_command_buffer_info_t info;
  HAL_ASSERT_OK(hal_command_buffer_query_info(g.cb, &info));
  if (info.native_build_count != 0 || info.native_update_count != 0) {
    fail_msg("a failed build counted %u builds and %u updates",
             info.native_build_count, info.native_update_count);
  }
  process_group_close(&g);
}

// After a channel's failure its device still runs other work: a fill of
// |bytes| (at most 512) of |buffer| with a pattern of |salt|, read back.
static void expect_device_still_fills(hal_device_t* device,
                                      hal_buffer_t* buffer, uint64_t bytes,
                                      uint32_t salt) {
  uint32_t pattern = 0x5A5A0000u + salt;
  hal_command_buffer_t* fill =
      cts_begin_command_buffer(device, HAL_COMMAND_BUFFER_MODE_ONE_SHOT);
  HAL_ASSERT_OK(hal_command_buffer_fill_buffer(fill, buffer, 0, bytes, &pattern,
                                               sizeof(pattern)));
  HAL_ASSERT_OK(hal_command_buffer_end(fill));
  hal_semaphore_t* filled = cts_create_semaphore(device, 0);
  submit(device, fill, filled, 1);
  HAL_ASSERT_OK(cts_wait(filled, 1));
  uint32_t words[128];
  assert_true(bytes <= sizeof(words));
  HAL_ASSERT_OK(hal_buffer_read(buffer, 0, words, bytes));
  for (size_t i = 0; i < bytes / 4; ++i)
    assert_int_equal(words[i], pattern);
  hal_semaphore_release(filled);
  hal_command_buffer_release(fill);
}

// Records on |g|'s rank |r| an exchange with the other rank of 64 int32:
// a send of |buffer|'s first half, a receive into its second (one group).
static hal_command_buffer_t* record_exchange(process_group_t* g, int r,
                                             hal_buffer_t* buffer) {
  hal_command_buffer_t* cb =
      cts_begin_command_buffer(g->devices[r], HAL_COMMAND_BUFFER_MODE_ONE_SHOT);
  hal_collective_params_t params = {.kind = HAL_COLLECTIVE_SEND,
                                    .element_type = HAL_ELEMENT_TYPE_INT32,
                                    .root_or_peer = 1 - r,
                                    .count = 64};
  HAL_ASSERT_OK(hal_command_buffer_collective(cb, g->channels[r], &params,
                                              buffer, 0, NULL, 0));
  params.kind = HAL_COLLECTIVE_RECV;
  HAL_ASSERT_OK(hal_command_buffer_collective(cb, g->channels[r], &params, NULL,
                                              0, buffer, 256));
  HAL_ASSERT_OK(hal_command_buffer_end(cb));
  return cb;
}

// "group_fault": both ranks in this process, whose library fails its first
// call of CTS_RANK_FAULT (ncclGroupStart or ncclGroupEnd: a driver issues
// a send and a receive as one group). Rank 0's exchange, issued first,
// fails naming the call, and aborts its channel, so rank 1's exchange,
// whose peer's part never comes, fails saying so instead of waiting; a
// later exchange on rank 0 fails with the abort; the devices still run
// other work.
static void group_fault_process_case(void) {
  process_group_t g;
  process_group_open(&g);
  const char* call = getenv("CTS_RANK_FAULT");
  hal_buffer_t* buffers[kRanks];
  hal_command_buffer_t* cbs[kRanks];
  hal_semaphore_t* done[kRanks];
  char text[2048];
  for (int r = 0; r < kRanks; ++r)
    buffers[r] = device_buffer(g.devices[r], 512);
  for (int r = 0; r < kRanks; ++r) {
    cbs[r] = record_exchange(&g, r, buffers[r]);
    done[r] = cts_create_semaphore(g.devices[r], 0);
  }
  submit(g.devices[0], cbs[0], done[0], 1);
  hal_status_t status = cts_wait(done[0], 1);
  hal_status_format(status, text, sizeof(text));
  assert_int_not_equal(hal_status_consume_code(status), HAL_STATUS_OK);
  if (!strstr(text, call) || !strstr(text, "injected fault"))
    fail_msg("rank 0's exchange, whose %s failed, ended with: %s", call, text);
  submit(g.devices[1], cbs[1], done[1], 1);
  status = cts_wait(done[1], 1);
  hal_status_format(status, text, sizeof(text));
  assert_int_not_equal(hal_status_consume_code(status), HAL_STATUS_OK);
  if (!strstr(text, "aborted by rank 0"))
    fail_msg("rank 1's exchange, whose peer's %s failed, ended with: %s", call,
             text);
  hal_command_buffer_t* later = record_exchange(&g, 0, buffers[0]);
  hal_semaphore_t* after = cts_create_semaphore(g.devices[0], 0);
  submit(g.devices[0], later, after, 1);
  HAL_ASSERT_STATUS(HAL_STATUS_ABORTED, "aborted on this rank",
                    cts_wait(after, 1));
  for (int r = 0; r < kRanks; ++r)
    expect_device_still_fills(g.devices[r], buffers[r], 512, (uint32_t)r);
  hal_semaphore_release(after);
  hal_command_buffer_release(later);
  for (int r = 0; r < kRanks; ++r) {
    hal_semaphore_release(done[r]);
    hal_command_buffer_release(cbs[r]);
    hal_buffer_release(buffers[r]);
  }
  process_group_close(&g);
}

// "async_error_fault": both ranks in this process, whose library fails its
// first ncclCommGetAsyncError. The communicator's state is then unknown, so
// the channel's check fails naming the call and aborts the channel, as a
// failure the library reported would: later checks report the same, the
// peer's channel fails too, collectives on either fail instead of waiting,
// and the devices still run other work.
static void async_error_fault_process_case(void) {
  process_group_t g;
  process_group_open(&g);
  char first[2048], again[2048];
  hal_status_t check = hal_channel_check(g.channels[0]);
  hal_status_format(check, first, sizeof(first));
  assert_int_not_equal(hal_status_consume_code(check), HAL_STATUS_OK);
  if (!strstr(first, "ncclCommGetAsyncError") || !strstr(first, "injected") ||
      !strstr(first, "aborted on this rank"))
    fail_msg("a check whose ncclCommGetAsyncError failed said: %s", first);
  check = hal_channel_check(g.channels[0]);
  hal_status_format(check, again, sizeof(again));
  assert_int_not_equal(hal_status_consume_code(check), HAL_STATUS_OK);
  if (!strstr(again, "ncclCommGetAsyncError"))
    fail_msg("the next check of the aborted channel said: %s", again);
  check = hal_channel_check(g.channels[1]);
  assert_int_not_equal(hal_status_consume_code(check), HAL_STATUS_OK);
  hal_buffer_t* buffers[kRanks] = {g.buffer, device_buffer(g.devices[1], 256)};
  hal_semaphore_t* done[kRanks];
  hal_command_buffer_t* cbs[kRanks];
  for (int r = 0; r < kRanks; ++r) {
    cbs[r] = r == 0 ? g.cb
                    : cts_begin_command_buffer(
                          g.devices[r], HAL_COMMAND_BUFFER_MODE_ONE_SHOT);
    record_small_all_reduce(cbs[r], g.channels[r], buffers[r]);
    HAL_ASSERT_OK(hal_command_buffer_end(cbs[r]));
    done[r] = cts_create_semaphore(g.devices[r], 0);
    submit(g.devices[r], cbs[r], done[r], 1);
  }
  for (int r = 0; r < kRanks; ++r) {
    hal_status_t status = cts_wait(done[r], 1);
    assert_int_not_equal(hal_status_consume_code(status), HAL_STATUS_OK);
    expect_device_still_fills(g.devices[r], buffers[r], 256, (uint32_t)r);
    hal_semaphore_release(done[r]);
  }
  hal_command_buffer_release(cbs[1]);
  hal_buffer_release(buffers[1]);
  process_group_close(&g);
}

// The case a rank process runs (CTS_RANK_SCENARIO): "run", all-reduces
// from one element to 64 MiB and every other collective; "kill", rank 1 dies
// once its channel exists and rank 0's collective must fail naming the dead
// process, not hang.
static void rank_process_case(void** state) {
  (void)state;
  const char* scenario = getenv("CTS_RANK_SCENARIO");
  if (strcmp(scenario, "stall") == 0) {
    stall_process_case();
    return;
  }
  if (strcmp(scenario, "graph_build") == 0) {
    graph_build_process_case();
    return;
  }
  if (strcmp(scenario, "group_fault") == 0) {
    group_fault_process_case();
    return;
  }
  if (strcmp(scenario, "async_error_fault") == 0) {
    async_error_fault_process_case();
    return;
  }
  const char* hex = getenv("CTS_RANK_ID");
  int32_t rank = (int32_t)atoi(getenv("CTS_RANK_INDEX"));
  hal_channel_id_t id;
  assert_int_equal(strlen(hex), 2 * sizeof(id.bytes));
  for (size_t i = 0; i < sizeof(id.bytes); ++i) {
    unsigned byte = 0;
    assert_int_equal(sscanf(hex + 2 * i, "%2x", &byte), 1);
    id.bytes[i] = (uint8_t)byte;
  }
  hal_device_t* device = cts_create_device(0);
  hal_channel_t* channel = NULL;
  HAL_ASSERT_OK(hal_channel_create(device, &id, rank, kRanks, &channel));
  assert_int_equal(hal_channel_rank_count(channel), kRanks);
  if (strcmp(scenario, "kill") == 0) {
    if (rank == 1)
      raise(SIGKILL);
    hal_buffer_t* buffer = device_buffer(device, 256);
    hal_command_buffer_t* cb =
        cts_begin_command_buffer(device, HAL_COMMAND_BUFFER_MODE_ONE_SHOT);
    hal_collective_params_t params = {.kind = HAL_COLLECTIVE_ALL_REDUCE,
                                      .element_type = HAL_ELEMENT_TYPE_INT32,
                                      .reduction = HAL_REDUCTION_SUM,
                                      .count = 64};
    HAL_ASSERT_OK(hal_command_buffer_collective(cb, channel, &params, buffer, 0,
                                                buffer, 0));
    HAL_ASSERT_OK(hal_command_buffer_end(cb));
    hal_semaphore_t* done = cts_create_semaphore(device, 0);
    submit(device, cb, done, 1);
    hal_status_t status = cts_wait(done, 1);
    assert_int_not_equal(hal_status_code(status), HAL_STATUS_OK);
    char text[1024];
    hal_status_format(status, text, sizeof(text));
    if (!strstr(text, "rank 0") || !strstr(text, "exited"))
      fail_msg("a dead peer's failure says: %s", text);
    hal_status_free(status);
    hal_status_t check = hal_channel_check(channel);
    assert_int_not_equal(hal_status_code(check), HAL_STATUS_OK);
    hal_status_free(check);
    hal_semaphore_release(done);
    hal_command_buffer_release(cb);
    hal_buffer_release(buffer);
  } else {
    rank_all_reduce(device, channel, HAL_ELEMENT_TYPE_INT32, HAL_REDUCTION_SUM,
                    1);
    rank_all_reduce(device, channel, HAL_ELEMENT_TYPE_FLOAT32,
                    HAL_REDUCTION_SUM, 1000003);
    rank_all_reduce(device, channel, HAL_ELEMENT_TYPE_UINT8, HAL_REDUCTION_MAX,
                    4097);
    rank_all_reduce(device, channel, HAL_ELEMENT_TYPE_INT32, HAL_REDUCTION_SUM,
                    64u * 1024 * 1024 / 4);
    rank_other_collectives(device, channel);
  }
  hal_channel_release(channel);
  hal_device_release(device);
}

// Ranks in two processes make one communicator from one id: all-reduces
// of 1 element, non-power-of-two counts and 64 MiB, and every other
// collective (a send/receive exchange too), each ordered after the fill
// before it and before the copy after it, agree on every element. Nobody
// stalls here, so the virtual GPU's bound on a late peer is the process
// deadline's size rather than the suite's 3 s: under a sanitizer on a
// loaded machine one rank may reach the 64 MiB all-reduce seconds after
// the other.
CTS_CASE(Collective_RanksInTwoProcesses) {
  collective_fixture_t* f = *state;
  hal_channel_id_t id;
  HAL_ASSERT_OK(hal_channel_id_generate(f->devices[0], &id));
  int codes[kRanks];
  const char* const extra[] = {"VGPU_CCL_TIMEOUT_MS=240000"};
  run_processes("run", kRanks, &id, extra, 1, codes);
  for (int r = 0; r < kRanks; ++r) {
    if (codes[r] != 0)
      fail_msg("rank process %d ended with %d", r, codes[r]);
  }
}

// A peer that stalls (never submits its part) while the library would wait
// far longer (VGPU_CCL_TIMEOUT_MS=120000 here; NCCL forever): with
// HAL_SYNC_MAX_WAIT_MS set, the driver aborts the channel once its
// collectives made no progress for that long, and the submission fails
// naming the bound. In a process of its own, for its environment.
CTS_CASE(Collective_StalledPeerIsAbortedAfterHalSyncMaxWait) {
  (void)state;
  if (!getenv("VGPU_CCL_TIMEOUT_MS")) {
    print_message(
        "[  SKIPPED ] a stalled peer needs a peer that can be made to stall: "
        "the virtual GPU's runs set VGPU_CCL_TIMEOUT_MS\n");
    skip();
  }
  const char* const extra[] = {"HAL_SYNC_MAX_WAIT_MS=1000",
                               "VGPU_CCL_TIMEOUT_MS=120000"};
  int code = -1;
  run_processes("stall", 1, NULL, extra, 2, &code);
  if (code != 0)
    fail_msg("the stalled-peer process ended with %d", code);
}

// A graph driver whose runtime fails to build the graph of the ops around a
// collective: end() fails with the runtime's error, naming those ops, and
// counts no build (in processes of their own, one whose runtime fails every
// graph creation, one whose second instantiation fails).
CTS_CASE(Collective_FailedGraphBuildAroundACollectiveNamesItsOps) {
  collective_fixture_t* f = *state;
  const char* node_call = getenv("CTS_KERNEL_NODE_CALL");
  if (!getenv("VGPU_CCL_TIMEOUT_MS") || !node_call) {
    print_message(
        "[  SKIPPED ] faults are injected by the virtual GPU only, whose "
        "runs set VGPU_CCL_TIMEOUT_MS and CTS_KERNEL_NODE_CALL\n");
    skip();
  }
  // Stream drivers build no graph; the table excludes the case for them.
  hal_buffer_t* buffer = device_buffer(f->devices[0], 256);
  hal_command_buffer_t* probe =
      cts_begin_command_buffer(f->devices[0], HAL_COMMAND_BUFFER_MODE_ONE_SHOT);
  uint32_t pattern = 7;
  HAL_ASSERT_OK(hal_command_buffer_fill_buffer(probe, buffer, 0, 256, &pattern,
                                               sizeof(pattern)));
  HAL_ASSERT_OK(hal_command_buffer_end(probe));
  hal_command_buffer_info_t info;
  HAL_ASSERT_OK(hal_command_buffer_query_info(probe, &info));
  hal_command_buffer_release(probe);
  hal_buffer_release(buffer);
  if (info.native_build_count == 0)
    fail_msg(
        "this driver built no graph at end(): a stream driver's table "
        "row excludes this case");
  bool hip = strncmp(node_call, "hip", 3) == 0;
  // The first run's graph creation fails; then the last run's
  // instantiation, after the first run's succeeded.
  const struct {
    const char* call;
    const char* trigger;
    const char* failing;
  } faults[] = {
      {hip ? "hipGraphCreate" : "cuGraphCreate", "always", "0"},
      {hip ? "hipGraphInstantiate" : "cuGraphInstantiate", "nth=2", "2"},
  };
  for (size_t i = 0; i < sizeof(faults) / sizeof(faults[0]); ++i) {
    char fault[96], named[64], failing[64];
    snprintf(fault, sizeof(fault), "VGPU_FAULTS=%s:%s", faults[i].call,
             faults[i].trigger);
    snprintf(named, sizeof(named), "CTS_RANK_FAULT=%s", faults[i].call);
    snprintf(failing, sizeof(failing), "CTS_RANK_BUILD_FAILS=%s",
             faults[i].failing);
    const char* const extra[] = {fault, named, failing};
    int code = -1;
    run_processes("graph_build", 1, NULL, extra, 3, &code);
    if (code != 0) {
      fail_msg("the process whose %s fails ended with %d", faults[i].call,
               code);
    }
  }
}

// The collective library's group calls and its error query fail (injected
// by the virtual GPU, in a process of its own so that the fault meets this
// case's calls only): a failed ncclGroupStart or ncclGroupEnd fails the
// submission naming it and aborts the channel, so the peer fails instead of
// waiting for calls that never came; a failed ncclCommGetAsyncError fails
// the check and aborts the channel, as a reported failure does.
CTS_CASE(Collective_FailedGroupCallsAbortTheChannel) {
  (void)state;
  if (!getenv("VGPU_CCL_TIMEOUT_MS")) {
    print_message(
        "[  SKIPPED ] faults are injected by the virtual GPU only, whose "
        "runs set VGPU_CCL_TIMEOUT_MS\n");
    skip();
  }
  const struct {
    const char* scenario;
    const char* call;
  } faults[] = {
      {"group_fault", "ncclGroupStart"},
      {"group_fault", "ncclGroupEnd"},
      {"async_error_fault", "ncclCommGetAsyncError"},
  };
  for (size_t i = 0; i < sizeof(faults) / sizeof(faults[0]); ++i) {
    char fault[96], named[64];
    snprintf(fault, sizeof(fault), "VGPU_FAULTS=%s:nth=1", faults[i].call);
    snprintf(named, sizeof(named), "CTS_RANK_FAULT=%s", faults[i].call);
    const char* const extra[] = {fault, named};
    int code = -1;
    run_processes(faults[i].scenario, 1, NULL, extra, 2, &code);
    if (code != 0)
      fail_msg("the process whose %s fails ended with %d", faults[i].call,
               code);
  }
}

// A rank process killed mid-run: the other's collective fails (its signal
// names the dead process), it does not hang, and it exits cleanly.
CTS_CASE(Collective_RankKilledInAnotherProcessFailsThePeer) {
  collective_fixture_t* f = *state;
  if (!getenv("VGPU_CCL_TIMEOUT_MS")) {
    print_message(
        "[  SKIPPED ] a real collective library may wait forever for a "
        "dead peer (NCCL reports it only to ncclCommGetAsyncError polling "
        "with a bootstrap timeout of its own); the virtual GPU's runs set "
        "VGPU_CCL_TIMEOUT_MS\n");
    skip();
  }
  hal_channel_id_t id;
  HAL_ASSERT_OK(hal_channel_id_generate(f->devices[0], &id));
  int codes[kRanks];
  run_rank_processes(&id, "kill", codes);
  if (codes[0] != 0 || codes[1] != 128 + SIGKILL)
    fail_msg("rank processes ended with %d and %d, want 0 and %d", codes[0],
             codes[1], 128 + SIGKILL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
#define CASE(name) \
  cmocka_unit_test_setup_teardown(name, collective_setup, collective_teardown)
      CASE(Collective_AllReduceEveryTypeAndReduction),
      CASE(Collective_AllReduceInAReusedCommandBuffer),
      CASE(Collective_RootedAndGatheringCollectives),
      CASE(Collective_SendAndReceiveExchange),
      CASE(Collective_BarrierOrdersAReceiveBeforeASend),
      CASE(Collective_RanksJoinedFromThreadsWithOneId),
      CASE(Collective_RanksThatDisagreeFailTheSignals),
      CASE(Collective_BadArgumentsAreRefusedAtRecord),
      CASE(Collective_ChannelReleasedWithWorkInFlight),
      CASE(Collective_PeerThatNeverCallsFailsAfterABound),
      CASE(Collective_GroupOfDevicesMadeFromUris),
      CASE(Collective_SubmissionThatNeverRunsAbortsTheChannel),
      CASE(Collective_PeerReleasedFailsLaterCollectives),
      CASE(Collective_SplitMakesChannelsByColorAndKey),
      CASE(Collective_SplitComesAfterTheCollectivesSubmittedBeforeIt),
      CASE(Collective_OrderedWithDispatchesOnTheOtherQueue),
      CASE(Collective_RanksInTwoProcesses),
      CASE(Collective_RankKilledInAnotherProcessFailsThePeer),
      CASE(Collective_StalledPeerIsAbortedAfterHalSyncMaxWait),
      CASE(Collective_FailedGraphBuildAroundACollectiveNamesItsOps),
      CASE(Collective_FailedGroupCallsAbortTheChannel),
#undef CASE
  };
  if (getenv("CTS_RANK_SCENARIO")) {  // a rank process of the cases above
    const struct CMUnitTest rank[] = {cmocka_unit_test(rank_process_case)};
    return cts_main("collective", rank, HAL_ARRAYSIZE(rank));
  }
  // Every case joins ranks on two devices (NCCL refuses two ranks on one).
  return cts_main_needing_devices("collective", tests, HAL_ARRAYSIZE(tests),
                                  kRanks);
}
