// Copyright 2026 The HAL Authors.
//
// One rank process's part of hal-run --ranks' collective job
// (collectives.h). Each device's thread:
//
//  1. joins its global rank's channel (hal_channel_create blocks until every
//     global rank of every rank process joined, which is why the devices of
//     a process join from threads of their own);
//  2. writes its input from the host: element i of global rank g is
//     collectives_input(g, i);
//  3. records and submits one command buffer: fills of every output with a
//     poison no collective produces, all-reduce (sum), all-gather,
//     broadcast from global rank 0, reduce-scatter (sum) of what the
//     all-gather gathered, and a copy of the all-reduce's result, with no
//     barriers: hal/channel.h orders a collective after everything recorded
//     before it and before everything recorded after it, which the fills
//     (a poison left in an output) and the copy (a poison copied) check;
//  4. times the all-reduce alone in a command buffer of its own, submitted
//     again and again, the process's devices starting each run together;
//  5. reads every output back and checks every element.
//
// Every rank records the same collectives in the same order (the channel's
// rule), and a device that fails still meets its process's other devices at
// each timing barrier (it breaks the barrier), so one failure never leaves
// a sibling thread waiting for it forever.

#include "collectives.h"

#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// Timed all-reduces: the first ones pay first-use costs and are dropped;
// the figure is the median of the rest.
enum { kCollectivesWarmups = 1, kCollectivesTimedRuns = 5 };

// What the fills write into every output first. Every value a collective
// produces here is positive, so the poison (negative as an int32) is never
// a right answer.
#define COLLECTIVES_POISON 0xDEADBEEFu

// Element |i| of global rank |g|'s input: distinct for every g < 64 and i
// below the modulus, and small enough that a sum over 64 ranks (and 64
// times an element, the reduce-scatter of gathered data) stays below 2^31.
static int32_t collectives_input(int32_t g, uint64_t i) {
  return (int32_t)((i % 65521u) * 64u + (uint64_t)g + 1u);
}

// A barrier of one process's device threads. A thread that fails breaks
// it, and every wait, current or later, returns false instead of waiting
// for the thread that will never come.
typedef struct collectives_barrier_t {
  pthread_mutex_t mutex;
  pthread_cond_t cond;
  int32_t count;        // threads
  int32_t arrived;      // in this generation; guarded by |mutex|
  uint64_t generation;  // guarded by |mutex|
  bool broken;          // guarded by |mutex|
} collectives_barrier_t;

static bool collectives_barrier_wait(collectives_barrier_t* barrier) {
  pthread_mutex_lock(&barrier->mutex);
  uint64_t generation = barrier->generation;
  if (!barrier->broken && ++barrier->arrived == barrier->count) {
    barrier->arrived = 0;
    ++barrier->generation;
    pthread_cond_broadcast(&barrier->cond);
  }
  while (!barrier->broken && barrier->generation == generation)
    pthread_cond_wait(&barrier->cond, &barrier->mutex);
  // A generation completed before the break still counts as passed.
  bool passed = barrier->generation != generation;
  pthread_mutex_unlock(&barrier->mutex);
  return passed;
}

static void collectives_barrier_break(collectives_barrier_t* barrier) {
  pthread_mutex_lock(&barrier->mutex);
  barrier->broken = true;
  pthread_cond_broadcast(&barrier->cond);
  pthread_mutex_unlock(&barrier->mutex);
}

// The outputs and the input of one device, by role.
enum {
  kInput = 0,
  kAllReduce,
  kAllGather,
  kBroadcast,
  kReduceScatter,
  kCopy,   // the copy of the all-reduce's result
  kTimed,  // the timed all-reduce's result (not checked)
  kBufferCount,
};

// One device's part; the thread owns everything but the fields set before
// it starts.
typedef struct collectives_device_t {
  // Set before the thread starts, read-only after.
  const hal_collectives_options_t* options;
  const hal_channel_id_t* id;
  collectives_barrier_t* barrier;
  hal_device_t* device;
  char uri[HAL_DRIVER_NAME_MAX + 16];
  int32_t global_rank;
  int32_t global_ranks;
  // The thread's.
  hal_channel_t* channel;
  hal_buffer_t* buffers[kBufferCount];
  hal_semaphore_t* done;
  uint64_t done_value;  // the value |done| was last signaled to
  int32_t* host;        // staging for the input and for every read-back
  // Results, read after the thread was joined.
  hal_status_t status;
  uint64_t bytes_verified;
  double all_reduce_ms;
} collectives_device_t;

static uint64_t collectives_buffer_elements(const collectives_device_t* d,
                                            int which) {
  uint64_t elements = d->options->elements;
  return which == kAllGather ? elements * (uint64_t)d->global_ranks : elements;
}

static hal_status_t collectives_allocate(collectives_device_t* d) {
  hal_buffer_params_t params = {HAL_MEMORY_TYPE_DEVICE_LOCAL,
                                HAL_BUFFER_USAGE_DEFAULT};
  for (int which = 0; which < kBufferCount; ++which) {
    HAL_RETURN_IF_ERROR(hal_device_allocate_buffer(
        d->device, params, collectives_buffer_elements(d, which) * 4,
        &d->buffers[which]));
  }
  d->host = malloc((size_t)collectives_buffer_elements(d, kAllGather) * 4);
  if (!d->host) {
    return hal_make_status(HAL_STATUS_RESOURCE_EXHAUSTED,
                           "host memory for %" PRIu64 " elements",
                           collectives_buffer_elements(d, kAllGather));
  }
  uint64_t elements = d->options->elements;
  for (uint64_t i = 0; i < elements; ++i)
    d->host[i] = collectives_input(d->global_rank, i);
  return hal_buffer_write(d->buffers[kInput], 0, d->host, elements * 4);
}

static hal_status_t collectives_record(collectives_device_t* d,
                                       hal_collective_kind_t kind, int send,
                                       int recv, hal_command_buffer_t* cb) {
  hal_collective_params_t params = {
      .kind = kind,
      .element_type = HAL_ELEMENT_TYPE_INT32,
      .reduction = HAL_REDUCTION_SUM,
      .root_or_peer = 0,
      .count = d->options->elements,
  };
  // A broadcast reads no send buffer off its root.
  hal_buffer_t* send_buffer =
      kind == HAL_COLLECTIVE_BROADCAST && d->global_rank != 0
          ? NULL
          : d->buffers[send];
  return hal_command_buffer_collective(cb, d->channel, &params, send_buffer, 0,
                                       d->buffers[recv], 0);
}

// Submits |cb| on queue 0, signaling the next value of |done|, and waits for
// it within the job's bound.
static hal_status_t collectives_submit_and_wait(collectives_device_t* d,
                                                hal_command_buffer_t* cb) {
  uint64_t value = d->done_value + 1;
  hal_semaphore_list_t none = hal_semaphore_list_empty();
  hal_semaphore_list_t signals = {1, &d->done, &value};
  HAL_RETURN_IF_ERROR(
      hal_device_queue_execute(d->device, 0, &none, &signals, 1, &cb));
  d->done_value = value;
  if (d->options->exit_after_submit) {
    // The test hook: the process ends with this submission's collectives
    // in flight, from this device's thread while the others run; its
    // peers must fail, and its exit must not touch what it still runs.
    fflush(stdout);
    exit(HAL_COLLECTIVES_EXIT_HOOK_STATUS);
  }
  hal_status_t status = hal_semaphore_wait(
      d->done, value, hal_make_timeout_ns(d->options->wait_ns));
  if (hal_status_is(status, HAL_STATUS_DEADLINE_EXCEEDED) &&
      d->options->wait_ns != HAL_DURATION_INFINITE) {
    // The job's own bound, not the wait's: name the knob that sets it.
    status = hal_status_annotatef(
        status,
        "each wait of the job is bounded by %lld ms (HAL_SYNC_MAX_WAIT_MS, "
        "else 300 s)",
        (long long)(d->options->wait_ns / 1000000));
  }
  return status;
}

// The checked command buffer (see the top of this file), submitted once.
static hal_status_t collectives_run_checked(collectives_device_t* d) {
  hal_command_buffer_t* cb = NULL;
  HAL_RETURN_IF_ERROR(hal_device_create_command_buffer(
      d->device, HAL_COMMAND_BUFFER_MODE_ONE_SHOT, &cb));
  hal_status_t status = hal_command_buffer_begin(cb);
  uint32_t poison = COLLECTIVES_POISON;
  for (int which = kAllReduce; which <= kCopy && !status; ++which) {
    hal_buffer_t* buffer = d->buffers[which];
    status = hal_command_buffer_fill_buffer(
        cb, buffer, 0, hal_buffer_byte_length(buffer), &poison, 4);
  }
  if (!status)
    status = collectives_record(d, HAL_COLLECTIVE_ALL_REDUCE, kInput,
                                kAllReduce, cb);
  if (!status)
    status = collectives_record(d, HAL_COLLECTIVE_ALL_GATHER, kInput,
                                kAllGather, cb);
  if (!status)
    status =
        collectives_record(d, HAL_COLLECTIVE_BROADCAST, kInput, kBroadcast, cb);
  // Reads what the all-gather wrote: collectives keep their order.
  if (!status)
    status = collectives_record(d, HAL_COLLECTIVE_REDUCE_SCATTER, kAllGather,
                                kReduceScatter, cb);
  if (!status) {
    status = hal_command_buffer_copy_buffer(
        cb, d->buffers[kAllReduce], 0, d->buffers[kCopy], 0,
        hal_buffer_byte_length(d->buffers[kCopy]));
  }
  if (!status)
    status = hal_command_buffer_end(cb);
  if (!status)
    status = collectives_submit_and_wait(d, cb);
  hal_command_buffer_release(cb);
  return status;
}

static int collectives_compare_ms(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

// The all-reduce alone, submitted kCollectivesWarmups + kCollectivesTimedRuns
// times; each run starts when every device of the process is ready for it
// (a run ends for all ranks together anyway: no rank's all-reduce completes
// before every rank's started). Host time from submit to the wait's return.
static hal_status_t collectives_time_all_reduce(collectives_device_t* d) {
  hal_command_buffer_t* cb = NULL;
  HAL_RETURN_IF_ERROR(hal_device_create_command_buffer(
      d->device, HAL_COMMAND_BUFFER_MODE_REUSABLE, &cb));
  hal_status_t status = hal_command_buffer_begin(cb);
  if (!status)
    status =
        collectives_record(d, HAL_COLLECTIVE_ALL_REDUCE, kInput, kTimed, cb);
  if (!status)
    status = hal_command_buffer_end(cb);
  double ms[kCollectivesTimedRuns];
  for (int run = 0;
       run < kCollectivesWarmups + kCollectivesTimedRuns && !status; ++run) {
    if (!collectives_barrier_wait(d->barrier)) {
      status = hal_make_status(HAL_STATUS_ABORTED,
                               "timing stopped: another device of this rank "
                               "process failed");
      break;
    }
    hal_time_t start = hal_time_now();
    status = collectives_submit_and_wait(d, cb);
    if (run >= kCollectivesWarmups) {
      ms[run - kCollectivesWarmups] = (double)(hal_time_now() - start) / 1e6;
    }
  }
  hal_command_buffer_release(cb);
  if (!status) {
    qsort(ms, kCollectivesTimedRuns, sizeof(ms[0]), collectives_compare_ms);
    d->all_reduce_ms = ms[kCollectivesTimedRuns / 2];
  }
  return status;
}

// The value element |i| of output |which| must hold.
static int32_t collectives_expected(const collectives_device_t* d, int which,
                                    uint64_t i) {
  uint64_t n = (uint64_t)d->global_ranks;
  uint64_t elements = d->options->elements;
  switch (which) {
    case kAllReduce:
    case kCopy:
      // The sum over g of collectives_input(g, i).
      return (int32_t)(n * ((i % 65521u) * 64u) + n * (n + 1) / 2);
    case kAllGather:
      return collectives_input((int32_t)(i / elements), i % elements);
    case kBroadcast:
      return collectives_input(0, i);
    case kReduceScatter:
      // Every rank gathered the same data: n times this rank's block.
      return (int32_t)(n * (uint64_t)collectives_input(d->global_rank, i));
    default:
      return 0;
  }
}

static hal_status_t collectives_verify(collectives_device_t* d) {
  static const char* const kNames[kBufferCount] = {
      [kAllReduce] = "all-reduce",
      [kAllGather] = "all-gather",
      [kBroadcast] = "broadcast",
      [kReduceScatter] = "reduce-scatter",
      [kCopy] = "the copy of the all-reduce's result after the collectives",
  };
  for (int which = kAllReduce; which <= kCopy; ++which) {
    uint64_t count = collectives_buffer_elements(d, which);
    HAL_RETURN_IF_ERROR(
        hal_buffer_read(d->buffers[which], 0, d->host, count * 4));
    for (uint64_t i = 0; i < count; ++i) {
      int32_t expected = collectives_expected(d, which, i);
      if (d->host[i] != expected) {
        return hal_make_status(
            HAL_STATUS_DATA_LOSS,
            "%s: element %" PRIu64 " of %" PRIu64 " is %" PRId32
            " (0x%08" PRIx32 "), expected %" PRId32 "%s",
            kNames[which], i, count, d->host[i], (uint32_t)d->host[i], expected,
            (uint32_t)d->host[i] == COLLECTIVES_POISON
                ? " (the fill's poison: never written)"
                : "");
      }
    }
    d->bytes_verified += count * 4;
  }
  return HAL_OK;
}

static hal_status_t collectives_device_run(collectives_device_t* d) {
  HAL_RETURN_IF_ERROR(hal_channel_create(d->device, d->id, d->global_rank,
                                         d->global_ranks, &d->channel));
  if (d->options->kill_after_join) {
    // The test hook: a rank gone after every rank joined, before any
    // collective; its peers must fail, not hang.
    fflush(stdout);
    raise(SIGKILL);
  }
  HAL_RETURN_IF_ERROR(hal_device_create_semaphore(d->device, 0, &d->done));
  HAL_RETURN_IF_ERROR(collectives_allocate(d));
  HAL_RETURN_IF_ERROR(collectives_run_checked(d));
  HAL_RETURN_IF_ERROR(hal_channel_check(d->channel));
  HAL_RETURN_IF_ERROR(collectives_time_all_reduce(d));
  return collectives_verify(d);
}

static void* collectives_device_main(void* arg) {
  collectives_device_t* d = arg;
  d->status = hal_status_annotatef(
      collectives_device_run(d), "global rank %" PRId32 " of %" PRId32 " on %s",
      d->global_rank, d->global_ranks, d->uri);
  if (d->status) {
    collectives_barrier_break(d->barrier);
  } else {
    printf(
        "  global rank %" PRId32 " of %" PRId32 " on %s (%s): verified %" PRIu64
        " bytes, all-reduce median %.3f ms\n",
        d->global_rank, d->global_ranks, d->uri,
        hal_device_info(d->device)->name, d->bytes_verified, d->all_reduce_ms);
  }
  hal_semaphore_release(d->done);
  for (int which = 0; which < kBufferCount; ++which)
    hal_buffer_release(d->buffers[which]);
  hal_channel_release(d->channel);
  free(d->host);
  return NULL;
}

static hal_status_t collectives_check_options(
    const hal_collectives_options_t* options) {
  int64_t global_ranks =
      (int64_t)options->ranks * (int64_t)options->devices_per_rank;
  if (options->ranks < 1 || options->devices_per_rank < 1 ||
      global_ranks > HAL_COLLECTIVES_MAX_RANKS || options->rank < 0 ||
      options->rank >= options->ranks || options->elements < 1 ||
      options->elements > (1ull << 30)) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "collective job: rank %" PRId32 " of %" PRId32
                           " rank processes of %" PRId32 " device(s), %" PRIu64
                           " elements (at most %d global ranks, 1 to 2^30 "
                           "elements)",
                           options->rank, options->ranks,
                           options->devices_per_rank, options->elements,
                           HAL_COLLECTIVES_MAX_RANKS);
  }
  return HAL_OK;
}

hal_status_t hal_collectives_run(hal_driver_t* driver,
                                 const hal_channel_id_t* id,
                                 const hal_collectives_options_t* options,
                                 hal_collectives_result_t* out_result) {
  memset(out_result, 0, sizeof(*out_result));
  HAL_RETURN_IF_ERROR(collectives_check_options(options));
  int32_t per_rank = options->devices_per_rank;
  uint32_t device_count = 0;
  HAL_RETURN_IF_ERROR(hal_driver_query_device_count(driver, &device_count));
  // The devices of one process must be distinct: a communicator has one
  // rank per device in a process (NCCL refuses a duplicate GPU).
  if (device_count < (uint32_t)per_rank) {
    return hal_make_status(HAL_STATUS_FAILED_PRECONDITION,
                           "--devices-per-rank=%" PRId32 " needs %" PRId32
                           " distinct devices in each rank process; driver "
                           "'%s' has %" PRIu32,
                           per_rank, per_rank, hal_driver_name(driver),
                           device_count);
  }
  collectives_device_t* devices = calloc((size_t)per_rank, sizeof(*devices));
  pthread_t* threads = calloc((size_t)per_rank, sizeof(*threads));
  collectives_barrier_t barrier = {.count = per_rank};
  if (!devices || !threads) {
    free(devices);
    free(threads);
    return hal_make_status(HAL_STATUS_RESOURCE_EXHAUSTED, "device threads");
  }
  pthread_mutex_init(&barrier.mutex, NULL);
  pthread_cond_init(&barrier.cond, NULL);
  // Devices are made here, one after the other; only the joins, which
  // block, need threads.
  hal_status_t status = HAL_OK;
  for (int32_t i = 0; i < per_rank && !status; ++i) {
    collectives_device_t* d = &devices[i];
    d->options = options;
    d->id = id;
    d->barrier = &barrier;
    d->global_rank = options->rank * per_rank + i;
    d->global_ranks = options->ranks * per_rank;
    uint32_t index = (uint32_t)d->global_rank % device_count;
    snprintf(d->uri, sizeof(d->uri), "%s://%" PRIu32, hal_driver_name(driver),
             index);
    status = hal_status_annotatef(
        hal_driver_create_device_by_index(driver, index, hal_allocator_system(),
                                          &d->device),
        "global rank %" PRId32 " of %" PRId32 " on %s", d->global_rank,
        d->global_ranks, d->uri);
  }
  int32_t started = 0;
  for (; started < per_rank && !status; ++started) {
    int error = pthread_create(&threads[started], NULL, collectives_device_main,
                               &devices[started]);
    if (error) {
      status =
          hal_make_status(HAL_STATUS_RESOURCE_EXHAUSTED,
                          "starting the thread of global rank %" PRId32 ": %s",
                          devices[started].global_rank, strerror(error));
      // The started threads' joins fail when this rank never comes.
      collectives_barrier_break(&barrier);
      break;
    }
  }
  for (int32_t i = 0; i < started; ++i)
    pthread_join(threads[i], NULL);
  for (int32_t i = 0; i < started; ++i) {
    collectives_device_t* d = &devices[i];
    if (!d->status) {
      out_result->bytes_verified += d->bytes_verified;
      if (d->all_reduce_ms > out_result->all_reduce_ms)
        out_result->all_reduce_ms = d->all_reduce_ms;
    } else if (!status) {
      status = d->status;
      d->status = HAL_OK;
    } else {
      fprintf(stderr, "hal-run: ");
      hal_status_fprint(stderr, d->status);
    }
    hal_status_free(d->status);
  }
  for (int32_t i = 0; i < per_rank; ++i)
    hal_device_release(devices[i].device);
  pthread_cond_destroy(&barrier.cond);
  pthread_mutex_destroy(&barrier.mutex);
  free(threads);
  free(devices);
  return status;
}

double hal_collectives_algbw(uint64_t bytes, double ms) {
  return ms > 0 ? (double)bytes / (ms * 1e6) : 0.0;
}

double hal_collectives_busbw(uint64_t bytes, double ms, int32_t ranks) {
  return hal_collectives_algbw(bytes, ms) * 2.0 * (double)(ranks - 1) /
         (double)ranks;
}
