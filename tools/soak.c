// Copyright 2026 The HAL Authors.
//
// hal-soak: random workloads through the public API, checked against a
// host-side model of what must happen.
//
// Each round builds a random DAG of nodes over one driver's devices (two
// when there are two) and every queue. A node is one of:
//  - device work on (device, queue): a fill (as a command buffer, a queue
//    op, or through a queue-ordered buffer: alloca, fill, copy, dealloca),
//    an update (or a queue_read of its bytes from a memory file), a copy
//    from an ancestor's region of the same device, a dispatch that fills the
//    region
//    (fill_u32), a copy-barrier-dispatch that adds to an ancestor's words
//    (add_u32), a bare barrier, or (with two devices and collectives) an
//    all-reduce: on each device a fill of the node's region and an
//    in-place all-reduce over the two devices' channels, so both regions
//    hold the sum; it waits on up to three earlier nodes' semaphores (at
//    or below the value each will reach, host- or device-signaled, of any
//    device) and signals its own (an all-reduce's other half signals a
//    semaphore of its own; all-reduces also wait for the one before, so
//    both devices run them in one order, as every rank must);
//  - a host signal: a host thread waits for the node's dependencies and
//    signals, or fails its semaphore when one of them failed; a shared one
//    has 2-3 threads signaling the one semaphore concurrently;
//  - a host failure: hal_semaphore_fail at a random moment.
// Device nodes are submitted in a random order (most waits are
// wait-before-signal), command buffers are released right after
// submission, a prober thread races short-timeout waits against the
// signals, some rounds release the devices with work in flight, and some
// (--loss-percent) run in a child process whose VGPU_FAULTS loses a device
// at a random call.
//
// The model: a node fails exactly when it is a host failure or one of its
// dependencies fails (S2: failure propagates through host and device waits
// alike); otherwise its semaphore holds exactly its value and its region
// holds what the model computed (its pattern, its update bytes, its
// words, or a function of the ancestor's predicted region). After the
// round every device still held takes a fresh submission; a lost one
// refuses it with DEVICE_LOST. In a loss round the model holds for every
// node the lost device cannot reach (through its queues, its semaphores or
// a dependency); what it reaches fails with DEVICE_LOST or succeeded before
// the loss. Rounds that release their devices early, and runs with
// VGPU_FAULTS set, can fail more nodes than the model knows of (CANCELLED,
// vendor errors): there the checks are the consistent ones (a node that
// succeeded has correct data and only successful dependencies; a failure
// reaches every dependent). Every difference is a mismatch, printed with
// the round's operation trace and the command that replays the round.
//
//   hal-soak --driver=NAME[,NAME...]|all [--seconds=N | --iterations=N]
//            [--seed=S] [--loss-percent=P]
//   hal-soak --driver=NAME --round=R [--loss]      (one round, replayed)
//
// Needs HAL_DRIVER_PATH (and, for the virtual GPU, HAL_CUDA_LIBRARY /
// HAL_HIP_LIBRARY) like any host program; `meson test --suite soak` sets
// them for the build tree.

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli_args.h"
#include "cli_plugins.h"
#include "hal/api.h"
#include "hal/channel.h"
#include "kernel_images.h"
#include "pipeline.h"

#define SOAK_MAX_NODES 48
#define SOAK_MAX_DEPS 3
#define SOAK_MAX_DEVICES 2
#define SOAK_REGION 256  // bytes of buffer each node owns
// Every wait the soak makes for a result is bounded: a hang is a mismatch.
#define SOAK_WAIT_NS (60ll * 1000 * 1000 * 1000)

//===----------------------------------------------------------------------===//
// Randomness (splitmix64: one stream per round, so a round replays alone)
//===----------------------------------------------------------------------===//

typedef struct soak_random_t {
  uint64_t state;
} soak_random_t;

static uint64_t soak_next(soak_random_t* random) {
  uint64_t z = (random->state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static uint32_t soak_below(soak_random_t* random, uint32_t bound) {
  return bound ? (uint32_t)(soak_next(random) % bound) : 0;
}

static bool soak_chance(soak_random_t* random, uint32_t percent) {
  return soak_below(random, 100) < percent;
}

//===----------------------------------------------------------------------===//
// A round
//===----------------------------------------------------------------------===//

typedef enum soak_kind_e {
  SOAK_FILL = 0,
  SOAK_UPDATE,
  SOAK_COPY,
  SOAK_DISPATCH_FILL,  // fill_u32 over the region
  SOAK_DISPATCH_ADD,   // copy an ancestor's region, barrier, add_u32
  SOAK_BARRIER,
  SOAK_HOST_SIGNAL,
  SOAK_HOST_SHARED,  // 2-3 host threads signal one semaphore concurrently
  SOAK_HOST_FAIL,
  SOAK_HOST_CALL,       // hal_device_queue_host_call: checks its waits
  SOAK_HOST_CALL_FAIL,  // the same, returning an error
  SOAK_ALL_REDUCE,      // fill, barrier, all-reduce with the other device
} soak_kind_t;

static const char* const soak_kind_names[] = {
    "fill",         "update",    "copy",           "dispatch-fill",
    "dispatch-add", "barrier",   "host-signal",    "host-shared",
    "host-fail",    "host-call", "host-call-fail", "all-reduce",
};

static bool soak_is_host(soak_kind_t kind) {
  return kind == SOAK_HOST_SIGNAL || kind == SOAK_HOST_SHARED ||
         kind == SOAK_HOST_FAIL;
}

// Host calls are submitted to a device queue like device nodes, but run on
// the host and write no region.
static bool soak_is_host_call(soak_kind_t kind) {
  return kind == SOAK_HOST_CALL || kind == SOAK_HOST_CALL_FAIL;
}

// Kinds that write a region of their device's buffer.
static bool soak_has_region(soak_kind_t kind) {
  return !soak_is_host(kind) && !soak_is_host_call(kind);
}

// Kinds that read an ancestor's region (of the same device).
static bool soak_reads_ancestor(soak_kind_t kind) {
  return kind == SOAK_COPY || kind == SOAK_DISPATCH_ADD;
}

typedef struct soak_node_t {
  soak_kind_t kind;
  uint32_t device;  // device nodes: the device and queue they run on
  uint32_t queue;
  uint32_t dep_count;
  uint32_t deps[SOAK_MAX_DEPS];
  uint64_t dep_values[SOAK_MAX_DEPS];
  uint32_t copy_from;   // SOAK_COPY, SOAK_DISPATCH_ADD: a device ancestor
  uint8_t pattern;      // SOAK_FILL
  uint32_t word;        // SOAK_DISPATCH_*: the value written or added;
                        // SOAK_ALL_REDUCE: this device's fill
  uint32_t other_word;  // SOAK_ALL_REDUCE: the other device's fill
  uint32_t group_size;  // SOAK_DISPATCH_*: threads per workgroup
  uint64_t value;       // what the node's semaphore reaches
  uint32_t signalers;   // SOAK_HOST_SHARED: threads; they signal 1..value
  bool queue_op;  // SOAK_FILL/UPDATE/COPY: hal_device_queue_fill/... instead
                  // of a command buffer
  // queue_op FILL: through a queue-ordered buffer (alloca, fill it, copy it
  // into the region, dealloca); queue_op UPDATE: a queue_read of the bytes
  // from a memory file. The model is the same.
  bool routed;
  int semaphore_device;  // the device that made its semaphore, -1: host
  hal_semaphore_t* semaphore;
  hal_semaphore_t* other_semaphore;  // SOAK_ALL_REDUCE: the other half's
  // The model.
  bool must_fail;
  bool region_known;  // device nodes that must succeed
  bool touched;       // loss rounds: depends on the lost device
  uint8_t region[SOAK_REGION];
  // Results.
  hal_status_code_t result;
  char result_text[256];
} soak_node_t;

typedef struct soak_round_t {
  const char* driver_name;
  uint64_t seed;  // this round's: replays it alone
  soak_random_t random;
  bool faults;         // VGPU_FAULTS is set: vendor errors may come anywhere
  bool early_release;  // devices released with work in flight
  bool loss;           // a loss round: VGPU_FAULTS loses a device
  bool dispatch;       // executables exist: dispatch nodes run
  // Two devices whose driver has collectives: all-reduce nodes run on
  // these channels (rank d on device d), made for the round.
  bool collectives;
  bool collectives_skip_said;  // for this driver, on stderr
  hal_channel_t* channels[SOAK_MAX_DEVICES];
  uint32_t device_count;
  uint32_t queue_count;
  hal_device_t* devices[SOAK_MAX_DEVICES];
  hal_buffer_t* buffers[SOAK_MAX_DEVICES];
  hal_executable_t* executables[SOAK_MAX_DEVICES];
  hal_status_code_t buffer_failure[SOAK_MAX_DEVICES];  // why none (faults)
  bool lost[SOAK_MAX_DEVICES];  // loss rounds: found by a probe afterwards
  uint32_t node_count;
  soak_node_t nodes[SOAK_MAX_NODES];
  // The operation trace, printed with a mismatch.
  char* trace;
  size_t trace_length;
  size_t trace_capacity;
  pthread_mutex_t mutex;  // trace and counters from several threads
  uint32_t mismatches;
  uint64_t ops;
  uint64_t submissions;
  uint64_t faults_injected;
  _Atomic bool stop_prober;
} soak_round_t;

// One host thread per host node, and per signaler of a shared one.
typedef struct soak_host_job_t {
  soak_round_t* round;
  uint32_t index;
  uint64_t value;  // SOAK_HOST_SHARED: the value this thread signals
  pthread_t thread;
} soak_host_job_t;

static void soak_trace(soak_round_t* round, const char* format, ...)
    __attribute__((format(printf, 2, 3)));

static void soak_trace(soak_round_t* round, const char* format, ...) {
  char line[512];
  va_list args;
  va_start(args, format);
  int length = vsnprintf(line, sizeof(line), format, args);
  va_end(args);
  if (length < 0)
    return;
  if ((size_t)length >= sizeof(line))
    length = sizeof(line) - 1;
  pthread_mutex_lock(&round->mutex);
  if (round->trace_length + (size_t)length + 2 > round->trace_capacity) {
    size_t capacity = (round->trace_capacity + (size_t)length + 2) * 2;
    char* grown = realloc(round->trace, capacity);
    if (!grown) {
      pthread_mutex_unlock(&round->mutex);
      return;
    }
    round->trace = grown;
    round->trace_capacity = capacity;
  }
  memcpy(round->trace + round->trace_length, line, (size_t)length);
  round->trace_length += (size_t)length;
  round->trace[round->trace_length++] = '\n';
  round->trace[round->trace_length] = '\0';
  pthread_mutex_unlock(&round->mutex);
}

static void soak_mismatch(soak_round_t* round, const char* format, ...)
    __attribute__((format(printf, 2, 3)));

static void soak_mismatch(soak_round_t* round, const char* format, ...) {
  char line[1024];
  va_list args;
  va_start(args, format);
  vsnprintf(line, sizeof(line), format, args);
  va_end(args);
  pthread_mutex_lock(&round->mutex);
  ++round->mismatches;
  pthread_mutex_unlock(&round->mutex);
  fprintf(stderr, "soak: MISMATCH (driver %s, round seed %" PRIu64 "): %s\n",
          round->driver_name, round->seed, line);
}

static void soak_count(soak_round_t* round, uint64_t* counter) {
  pthread_mutex_lock(&round->mutex);
  ++*counter;
  pthread_mutex_unlock(&round->mutex);
}

// Checks a setup call the soak itself makes with valid arguments: its
// failure is a mismatch (nothing was injected into it) unless faults are
// being injected, when the round just gives up on the object.
static bool soak_ok(soak_round_t* round, hal_status_t status,
                    const char* what) {
  if (status == HAL_OK)
    return true;
  char text[512];
  hal_status_format(status, text, sizeof(text));
  hal_status_free(status);
  if (round->faults || round->loss) {
    soak_trace(round, "  %s failed (faults on): %s", what, text);
  } else {
    soak_mismatch(round, "%s failed: %s", what, text);
  }
  return false;
}

//===----------------------------------------------------------------------===//
// Generation and the model
//===----------------------------------------------------------------------===//

static void soak_generate(soak_round_t* round) {
  soak_random_t* random = &round->random;
  round->node_count = 8 + soak_below(random, SOAK_MAX_NODES - 8 + 1);
  for (uint32_t i = 0; i < round->node_count; ++i) {
    soak_node_t* node = &round->nodes[i];
    memset(node, 0, sizeof(*node));
    uint32_t roll = soak_below(random, 100);
    node->kind = roll < 18   ? SOAK_FILL
                 : roll < 31 ? SOAK_UPDATE
                 : roll < 44 ? SOAK_COPY
                 : roll < 53 ? SOAK_DISPATCH_FILL
                 : roll < 62 ? SOAK_DISPATCH_ADD
                 : roll < 69 ? SOAK_BARRIER
                 : roll < 80 ? SOAK_HOST_SIGNAL
                 : roll < 85 ? SOAK_HOST_SHARED
                 : roll < 89 ? SOAK_HOST_FAIL
                 : roll < 97 ? SOAK_HOST_CALL
                             : SOAK_HOST_CALL_FAIL;
    node->queue_op = soak_chance(random, 33);
    node->routed = node->queue_op && soak_chance(random, 50);
    node->device = soak_below(random, round->device_count);
    node->queue = soak_below(random, round->queue_count);
    node->value = 1 + soak_below(random, 3);
    node->pattern = (uint8_t)(1 + soak_below(random, 255));
    node->word = (uint32_t)soak_next(random);
    node->group_size = 64u >> soak_below(random, 4);  // 64, 32, 16 or 8
    if (node->kind == SOAK_HOST_SHARED) {
      // Each thread signals one of 1..value: the highest must succeed,
      // the others succeed or find the value already passed.
      node->signalers = 2 + soak_below(random, 2);
      node->value = node->signalers;
    }
    node->other_word = (uint32_t)soak_next(random);
    if (round->collectives && soak_chance(random, 8))
      node->kind = SOAK_ALL_REDUCE;
    if (!round->dispatch &&
        (node->kind == SOAK_DISPATCH_FILL || node->kind == SOAK_DISPATCH_ADD)) {
      node->kind = node->kind == SOAK_DISPATCH_FILL ? SOAK_FILL : SOAK_COPY;
    }
    uint32_t wanted = i ? soak_below(random, SOAK_MAX_DEPS + 1) : 0;
    for (uint32_t d = 0; d < wanted; ++d) {
      uint32_t dep = soak_below(random, i);
      bool seen = false;
      for (uint32_t e = 0; e < node->dep_count; ++e)
        seen |= node->deps[e] == dep;
      if (seen)
        continue;
      node->deps[node->dep_count] = dep;
      node->dep_values[node->dep_count] =
          1 + soak_below(random, (uint32_t)round->nodes[dep].value);
      ++node->dep_count;
    }
    if (node->kind == SOAK_ALL_REDUCE) {
      // After the round's previous all-reduce, reached in full: then every
      // device issues them in one order.
      for (uint32_t j = i; j-- > 0;) {
        if (round->nodes[j].kind != SOAK_ALL_REDUCE)
          continue;
        bool seen = false;
        for (uint32_t e = 0; e < node->dep_count; ++e) {
          if (node->deps[e] == j) {
            node->dep_values[e] = round->nodes[j].value;
            seen = true;
          }
        }
        if (!seen) {
          uint32_t e = node->dep_count < SOAK_MAX_DEPS ? node->dep_count++
                                                       : SOAK_MAX_DEPS - 1;
          node->deps[e] = j;
          node->dep_values[e] = round->nodes[j].value;
        }
        break;
      }
    }
    if (soak_reads_ancestor(node->kind)) {
      // From a device ancestor on the same device, so its region is final
      // when this node runs (a host node has no region); without one the
      // node writes instead of reading.
      soak_kind_t reader = node->kind;
      node->kind = reader == SOAK_COPY ? SOAK_FILL : SOAK_DISPATCH_FILL;
      for (uint32_t e = 0; e < node->dep_count; ++e) {
        soak_node_t* dep = &round->nodes[node->deps[e]];
        if (soak_has_region(dep->kind) && dep->device == node->device) {
          node->kind = reader;
          node->copy_from = node->deps[e];
          break;
        }
      }
    }
    // The model (deps come first, so their verdicts are known).
    node->must_fail =
        node->kind == SOAK_HOST_FAIL || node->kind == SOAK_HOST_CALL_FAIL;
    for (uint32_t e = 0; e < node->dep_count; ++e)
      node->must_fail |= round->nodes[node->deps[e]].must_fail;
    // An all-reduce whose submission fails aborts its channel (every rank
    // must make every collective: hal/channel.h), failing the round's other
    // all-reduces too, even earlier ones not run yet: the model keeps
    // all-reduces to nodes that must succeed (the abort has its CTS case).
    if (node->kind == SOAK_ALL_REDUCE && node->must_fail)
      node->kind = SOAK_FILL;
    if (!soak_has_region(node->kind))
      continue;
    node->region_known = !node->must_fail;
    switch (node->kind) {
      case SOAK_FILL:
        memset(node->region, node->pattern, SOAK_REGION);
        break;
      case SOAK_UPDATE:
        for (uint32_t b = 0; b < SOAK_REGION; ++b)
          node->region[b] = (uint8_t)soak_next(random);
        break;
      case SOAK_COPY:
        memcpy(node->region, round->nodes[node->copy_from].region, SOAK_REGION);
        break;
      case SOAK_DISPATCH_FILL:
        for (uint32_t w = 0; w < SOAK_REGION / 4; ++w)
          memcpy(node->region + 4 * w, &node->word, 4);
        break;
      case SOAK_DISPATCH_ADD:
        memcpy(node->region, round->nodes[node->copy_from].region, SOAK_REGION);
        for (uint32_t w = 0; w < SOAK_REGION / 4; ++w) {
          uint32_t x;
          memcpy(&x, node->region + 4 * w, 4);
          x += node->word;
          memcpy(node->region + 4 * w, &x, 4);
        }
        break;
      case SOAK_ALL_REDUCE: {
        uint32_t sum = node->word + node->other_word;  // wraps, as uint32
        for (uint32_t w = 0; w < SOAK_REGION / 4; ++w)
          memcpy(node->region + 4 * w, &sum, 4);
        break;
      }
      default:  // a barrier writes nothing: the region stays zero
        break;
    }
  }
}

//===----------------------------------------------------------------------===//
// Host threads
//===----------------------------------------------------------------------===//

static hal_semaphore_list_t soak_dep_list(soak_round_t* round,
                                          soak_node_t* node,
                                          hal_semaphore_t** semaphores) {
  for (uint32_t e = 0; e < node->dep_count; ++e)
    semaphores[e] = round->nodes[node->deps[e]].semaphore;
  hal_semaphore_list_t list = {node->dep_count, semaphores, node->dep_values};
  return list;
}

// A host node on its own thread, started at a random point of the
// submissions: a host signal waits for its dependencies and signals, or
// fails its semaphore with the failure it saw; a host failure fails its
// semaphore.
static void* soak_host_main(void* arg) {
  soak_host_job_t* job = arg;
  soak_round_t* round = job->round;
  uint32_t index = job->index;
  soak_node_t* node = &round->nodes[index];
  if (node->kind == SOAK_HOST_FAIL) {
    soak_trace(round, "host: fail node %u", index);
    hal_semaphore_fail(
        node->semaphore,
        hal_make_status(HAL_STATUS_ABORTED, "soak: injected failure of node %u",
                        index));
    soak_count(round, &round->faults_injected);
    return NULL;
  }
  {
    hal_semaphore_t* semaphores[SOAK_MAX_DEPS];
    hal_status_t status = hal_semaphore_list_wait(
        HAL_WAIT_MODE_ALL, soak_dep_list(round, node, semaphores),
        hal_make_timeout_ns(SOAK_WAIT_NS));
    if (status == HAL_OK) {
      uint64_t value =
          node->kind == SOAK_HOST_SHARED ? job->value : node->value;
      soak_trace(round, "host: signal node %u to %" PRIu64, index, value);
      hal_status_t signal_status = hal_semaphore_signal(node->semaphore, value);
      // Of a shared semaphore's signalers only the highest value must
      // succeed; a lower one may find it passed (INVALID_ARGUMENT).
      bool passed =
          node->kind == SOAK_HOST_SHARED && value < node->value &&
          hal_status_code(signal_status) == HAL_STATUS_INVALID_ARGUMENT;
      // A loss fails its device's semaphores: the node's check decides
      // whether this one could be.
      bool lost = round->loss &&
                  hal_status_code(signal_status) == HAL_STATUS_DEVICE_LOST;
      if (signal_status && !passed && !lost) {
        char text[512];
        hal_status_format(signal_status, text, sizeof(text));
        soak_mismatch(round, "host signal of node %u to %" PRIu64 " failed: %s",
                      index, value, text);
      }
      hal_status_free(signal_status);
    } else {
      soak_trace(round, "host: node %u's dependencies failed: fail it", index);
      hal_semaphore_fail(node->semaphore,
                         hal_status_annotatef(status, "soak: node %u", index));
    }
    soak_count(round, &round->ops);
  }
  return NULL;
}

// Races short waits against the signals: an OK wait means the value is
// there (S5) and the node cannot be one the model fails.
static void* soak_prober_main(void* arg) {
  soak_round_t* round = arg;
  soak_random_t random = {round->seed ^ 0x50524F4245ull};
  while (!atomic_load(&round->stop_prober)) {
    uint32_t index = soak_below(&random, round->node_count);
    soak_node_t* node = &round->nodes[index];
    hal_status_t status = hal_semaphore_wait(
        node->semaphore, node->value,
        hal_make_timeout_ns((int64_t)soak_below(&random, 2000) * 1000));
    if (status == HAL_OK) {
      uint64_t value = 0;
      hal_status_t query = hal_semaphore_query(node->semaphore, &value);
      // A loss may fail the semaphore between the wait and the query.
      bool lost =
          round->loss && hal_status_code(query) == HAL_STATUS_DEVICE_LOST;
      if (!lost && (query != HAL_OK || value < node->value)) {
        soak_mismatch(
            round, "node %u: wait returned OK but query says %" PRIu64 " (S5)",
            index, value);
      }
      hal_status_free(query);
      if (node->must_fail)
        soak_mismatch(round, "node %u: a wait succeeded; it must fail", index);
    }
    hal_status_free(status);
  }
  return NULL;
}

//===----------------------------------------------------------------------===//
// Running a round
//===----------------------------------------------------------------------===//

// A setup step of a submission: on failure (faults on) keeps the first
// failure's code in |*code| for the node's semaphore.
static bool soak_step(soak_round_t* round, hal_status_t status,
                      const char* what, hal_status_code_t* code) {
  if (status && *code == HAL_STATUS_OK)
    *code = hal_status_code(status);
  return soak_ok(round, status, what);
}

static hal_status_t soak_record_dispatch(soak_round_t* round, soak_node_t* node,
                                         hal_command_buffer_t* cb,
                                         uint64_t offset, size_t entry_point) {
  hal_buffer_t* buffer = round->buffers[node->device];
  uint32_t constants[2] = {node->word, SOAK_REGION / 4};
  hal_dispatch_binding_t binding = {buffer, offset, SOAK_REGION};
  uint32_t count[3] = {SOAK_REGION / 4 / node->group_size, 1, 1};
  uint32_t size[3] = {node->group_size, 1, 1};
  return hal_command_buffer_dispatch(cb, round->executables[node->device],
                                     entry_point, count, size, constants, 2,
                                     &binding, 1);
}

// The function of a host-call node: with OK, every dependency must hold its
// value already (the call runs after its waits); the failing kind then
// returns an error, which must reach the node's semaphore and dependents.
typedef struct soak_host_call_t {
  soak_round_t* round;
  uint32_t index;
} soak_host_call_t;

static hal_status_t soak_host_call_main(void* user_data, hal_status_t status) {
  soak_host_call_t* call = user_data;
  soak_round_t* round = call->round;
  soak_node_t* node = &round->nodes[call->index];
  uint32_t index = call->index;
  free(call);
  if (status != HAL_OK)
    return HAL_OK;  // never ran: nothing to release but |call|
  for (uint32_t e = 0; e < node->dep_count; ++e) {
    uint64_t value = 0;
    hal_status_t query =
        hal_semaphore_query(round->nodes[node->deps[e]].semaphore, &value);
    if (query == HAL_OK && value < node->dep_values[e]) {
      soak_mismatch(round,
                    "host call %u ran with its dependency %u at %" PRIu64
                    ", below the %" PRIu64 " it waited for",
                    index, node->deps[e], value, node->dep_values[e]);
    }
    hal_status_free(query);
  }
  soak_trace(round, "host call: node %u ran", index);
  if (node->kind == SOAK_HOST_CALL_FAIL) {
    soak_count(round, &round->faults_injected);
    return hal_make_status(HAL_STATUS_ABORTED,
                           "soak: host call %u failed on purpose", index);
  }
  return HAL_OK;
}

static hal_status_t soak_submit_host_call(soak_round_t* round, uint32_t index,
                                          hal_semaphore_list_t waits,
                                          hal_semaphore_list_t signals) {
  soak_host_call_t* call = malloc(sizeof(*call));
  if (!call)
    return hal_make_status(HAL_STATUS_RESOURCE_EXHAUSTED, "soak host call");
  *call = (soak_host_call_t){round, index};
  soak_node_t* node = &round->nodes[index];
  hal_status_t status =
      hal_device_queue_host_call(round->devices[node->device], node->queue,
                                 &waits, &signals, soak_host_call_main, call);
  if (status)
    free(call);
  return status;
}

// A routed fill: alloca a region-sized buffer after the waits, fill it,
// copy it into the region (the node's signals), dealloca after that. The
// chain's own steps signal a private timeline.
static hal_status_t soak_submit_alloca_fill(soak_round_t* round,
                                            soak_node_t* node, uint64_t offset,
                                            hal_semaphore_list_t waits,
                                            hal_semaphore_list_t signals) {
  hal_device_t* device = round->devices[node->device];
  hal_semaphore_t* chain = NULL;
  HAL_RETURN_IF_ERROR(hal_device_create_semaphore(device, 0, &chain));
  uint64_t one = 1, two = 2, three = 3;
  hal_semaphore_list_t signal1 = {1, &chain, &one}, wait1 = {1, &chain, &one};
  hal_semaphore_list_t signal2 = {1, &chain, &two}, wait2 = {1, &chain, &two};
  hal_semaphore_list_t signal3 = {1, &chain, &three};
  hal_buffer_params_t params = {HAL_MEMORY_TYPE_DEVICE_LOCAL,
                                HAL_BUFFER_USAGE_DEFAULT};
  hal_buffer_t* transient = NULL;
  hal_status_t status = hal_device_queue_alloca(
      device, node->queue, &waits, &signal1, params, SOAK_REGION, &transient);
  if (status == HAL_OK) {
    status =
        hal_device_queue_fill(device, node->queue, &wait1, &signal2, transient,
                              0, SOAK_REGION, &node->pattern, 1);
  }
  if (status == HAL_OK) {
    status = hal_device_queue_copy(device, node->queue, &wait2, &signals,
                                   transient, 0, round->buffers[node->device],
                                   offset, SOAK_REGION);
  }
  if (status == HAL_OK) {
    status = hal_device_queue_dealloca(device, node->queue, &signals, &signal3,
                                       transient);
  }
  if (status != HAL_OK && transient) {
    // Steps already submitted must not wait forever for the ones that
    // were not: the chain fails them.
    hal_semaphore_fail(chain, hal_status_clone(status));
  }
  hal_buffer_release(transient);  // the submissions hold it
  hal_semaphore_release(chain);
  return status;
}

// A routed update: the node's bytes read from a memory file.
static hal_status_t soak_submit_file_update(soak_round_t* round,
                                            soak_node_t* node, uint64_t offset,
                                            hal_semaphore_list_t waits,
                                            hal_semaphore_list_t signals) {
  hal_file_t* file = NULL;
  HAL_RETURN_IF_ERROR(hal_file_from_memory(node->region, SOAK_REGION,
                                           HAL_FILE_ACCESS_READ, &file));
  hal_status_t status = hal_device_queue_read(
      round->devices[node->device], node->queue, &waits, &signals, file, 0,
      round->buffers[node->device], offset, SOAK_REGION);
  hal_file_release(file);  // the transfer holds it
  return status;
}

// A fill, update or copy node as one queue op (no command buffer).
static hal_status_t soak_submit_queue_op(soak_round_t* round, uint32_t index,
                                         hal_semaphore_list_t waits,
                                         hal_semaphore_list_t signals) {
  soak_node_t* node = &round->nodes[index];
  hal_device_t* device = round->devices[node->device];
  hal_buffer_t* buffer = round->buffers[node->device];
  uint64_t offset = (uint64_t)index * SOAK_REGION;
  if (node->routed && node->kind == SOAK_FILL)
    return soak_submit_alloca_fill(round, node, offset, waits, signals);
  if (node->routed && node->kind == SOAK_UPDATE)
    return soak_submit_file_update(round, node, offset, waits, signals);
  switch (node->kind) {
    case SOAK_FILL:
      return hal_device_queue_fill(device, node->queue, &waits, &signals,
                                   buffer, offset, SOAK_REGION, &node->pattern,
                                   1);
    case SOAK_UPDATE:
      return hal_device_queue_update(device, node->queue, &waits, &signals,
                                     node->region, 0, buffer, offset,
                                     SOAK_REGION);
    default:
      return hal_device_queue_copy(
          device, node->queue, &waits, &signals, buffer,
          (uint64_t)node->copy_from * SOAK_REGION, buffer, offset, SOAK_REGION);
  }
}

// Submits device node |index|. When it cannot be made (faults on), its
// semaphore is failed, with the code of the step that failed, so that
// dependents still resolve.
// An all-reduce half on device |d|: the region filled with |word|, a
// barrier, then the region all-reduced in place (uint32 sum) with the
// other device's half.
static hal_status_t soak_record_all_reduce(soak_round_t* round,
                                           hal_command_buffer_t* cb, uint32_t d,
                                           uint64_t offset, uint32_t word) {
  hal_buffer_t* buffer = round->buffers[d];
  hal_status_t status =
      hal_command_buffer_fill_buffer(cb, buffer, offset, SOAK_REGION, &word, 4);
  if (!status)
    status = hal_command_buffer_execution_barrier(cb);
  if (!status) {
    hal_collective_params_t params = {.kind = HAL_COLLECTIVE_ALL_REDUCE,
                                      .element_type = HAL_ELEMENT_TYPE_UINT32,
                                      .reduction = HAL_REDUCTION_SUM,
                                      .count = SOAK_REGION / 4};
    status = hal_command_buffer_collective(cb, round->channels[d], &params,
                                           buffer, offset, buffer, offset);
  }
  return status;
}

// The other device's half of all-reduce node |index|: the same waits, its
// own semaphore. Its failure to be made is a mismatch (no faults run with
// collectives), and the node's half would wait for it until the library's
// bound.
static void soak_submit_other_half(soak_round_t* round, uint32_t index,
                                   const hal_semaphore_list_t* waits) {
  soak_node_t* node = &round->nodes[index];
  uint32_t d = 1 - node->device;
  uint64_t offset = (uint64_t)index * SOAK_REGION;
  hal_command_buffer_t* cb = NULL;
  static const uint64_t kOne = 1;
  hal_semaphore_list_t signals = {1, &node->other_semaphore, (uint64_t*)&kOne};
  bool made =
      soak_ok(round,
              hal_device_create_semaphore(round->devices[d], 0,
                                          &node->other_semaphore),
              "create_semaphore") &&
      soak_ok(round,
              hal_device_create_command_buffer(
                  round->devices[d], HAL_COMMAND_BUFFER_MODE_ONE_SHOT, &cb),
              "create_command_buffer") &&
      soak_ok(round, hal_command_buffer_begin(cb), "begin") &&
      soak_ok(round,
              soak_record_all_reduce(round, cb, d, offset, node->other_word),
              "record all-reduce") &&
      soak_ok(round, hal_command_buffer_end(cb), "end");
  if (made) {
    soak_trace(round,
               "submit node %u (all-reduce, other half) on device %u "
               "queue %u",
               index, d, node->queue);
    made = soak_ok(round,
                   hal_device_queue_execute(round->devices[d], node->queue,
                                            waits, &signals, 1, &cb),
                   "queue_execute");
    if (made)
      soak_count(round, &round->submissions);
  }
  hal_command_buffer_release(cb);
}

static void soak_submit(soak_round_t* round, uint32_t index) {
  soak_node_t* node = &round->nodes[index];
  hal_device_t* device = round->devices[node->device];
  hal_buffer_t* buffer = round->buffers[node->device];
  uint64_t offset = (uint64_t)index * SOAK_REGION;
  uint64_t source = (uint64_t)node->copy_from * SOAK_REGION;
  hal_status_code_t failed = HAL_STATUS_OK;
  hal_semaphore_t* dep_semaphores[SOAK_MAX_DEPS];
  hal_semaphore_list_t dep_waits = soak_dep_list(round, node, dep_semaphores);
  hal_semaphore_list_t node_signals = {1, &node->semaphore, &node->value};
  bool one_call = soak_is_host_call(node->kind) ||
                  (node->queue_op &&
                   (node->kind == SOAK_FILL || node->kind == SOAK_UPDATE ||
                    node->kind == SOAK_COPY));
  if (one_call) {
    soak_trace(round, "submit node %u (%s%s) on device %u queue %u", index,
               soak_kind_names[node->kind],
               soak_is_host_call(node->kind) ? ""
               : !node->routed               ? ", queue op"
               : node->kind == SOAK_FILL     ? ", through an alloca"
               : node->kind == SOAK_UPDATE   ? ", read from a file"
                                             : ", queue op",
               node->device, node->queue);
    hal_status_t status =
        soak_is_host_call(node->kind)
            ? soak_submit_host_call(round, index, dep_waits, node_signals)
            : soak_submit_queue_op(round, index, dep_waits, node_signals);
    if (soak_step(round, status, "queue op", &failed)) {
      soak_count(round, &round->submissions);
    } else {
      hal_semaphore_fail(
          node->semaphore,
          hal_make_status(failed, "soak: node %u was not submitted", index));
    }
    soak_count(round, &round->ops);
    return;
  }
  hal_command_buffer_t* cb = NULL;
  bool made = soak_step(round,
                        hal_device_create_command_buffer(
                            device, HAL_COMMAND_BUFFER_MODE_ONE_SHOT, &cb),
                        "create_command_buffer", &failed) &&
              soak_step(round, hal_command_buffer_begin(cb), "begin", &failed);
  if (made) {
    hal_status_t status = HAL_OK;
    switch (node->kind) {
      case SOAK_FILL:
        status = hal_command_buffer_fill_buffer(cb, buffer, offset, SOAK_REGION,
                                                &node->pattern, 1);
        break;
      case SOAK_UPDATE:
        status = hal_command_buffer_update_buffer(cb, node->region, 0, buffer,
                                                  offset, SOAK_REGION);
        break;
      case SOAK_COPY:
        status = hal_command_buffer_copy_buffer(cb, buffer, source, buffer,
                                                offset, SOAK_REGION);
        break;
      case SOAK_DISPATCH_FILL:
        status =
            soak_record_dispatch(round, node, cb, offset, HAL_KERNEL_FILL_U32);
        break;
      case SOAK_DISPATCH_ADD:
        // Three commands in one buffer: the barrier orders the add after
        // the copy (command_buffer.h).
        status = hal_command_buffer_copy_buffer(cb, buffer, source, buffer,
                                                offset, SOAK_REGION);
        if (!status)
          status = hal_command_buffer_execution_barrier(cb);
        if (!status) {
          status =
              soak_record_dispatch(round, node, cb, offset, HAL_KERNEL_ADD_U32);
        }
        break;
      case SOAK_ALL_REDUCE:
        status =
            soak_record_all_reduce(round, cb, node->device, offset, node->word);
        break;
      default:
        status = hal_command_buffer_execution_barrier(cb);
        break;
    }
    made = soak_step(round, status, "record", &failed) &&
           soak_step(round, hal_command_buffer_end(cb), "end", &failed);
  }
  hal_semaphore_list_t waits = dep_waits;
  hal_semaphore_list_t signals = node_signals;
  if (made) {
    soak_trace(round, "submit node %u (%s) on device %u queue %u", index,
               soak_kind_names[node->kind], node->device, node->queue);
    made = soak_step(
        round,
        hal_device_queue_execute(device, node->queue, &waits, &signals, 1, &cb),
        "queue_execute", &failed);
    if (made)
      soak_count(round, &round->submissions);
  }
  if (node->kind == SOAK_ALL_REDUCE)
    soak_submit_other_half(round, index, &dep_waits);
  if (!made) {
    hal_semaphore_fail(
        node->semaphore,
        hal_make_status(failed, "soak: node %u was not submitted", index));
  }
  // The queue holds what it needs (Q3): let go at once, or at the end.
  hal_command_buffer_release(cb);
  soak_count(round, &round->ops);
}

static void soak_await_node(soak_round_t* round, uint32_t index) {
  soak_node_t* node = &round->nodes[index];
  hal_status_t status = hal_semaphore_wait(node->semaphore, node->value,
                                           hal_make_timeout_ns(SOAK_WAIT_NS));
  node->result = hal_status_code(status);
  hal_status_format(status, node->result_text, sizeof(node->result_text));
  hal_status_free(status);
  if (node->other_semaphore != NULL) {
    // The other half fails or succeeds with the node: the same waits, one
    // collective.
    hal_status_t other = hal_semaphore_wait(node->other_semaphore, 1,
                                            hal_make_timeout_ns(SOAK_WAIT_NS));
    hal_status_code_t code = hal_status_code(other);
    hal_status_free(other);
    if (code == HAL_STATUS_DEADLINE_EXCEEDED) {
      soak_mismatch(round,
                    "node %u (all-reduce): the wait for its other half hung",
                    index);
    } else if ((code == HAL_STATUS_OK) != (node->result == HAL_STATUS_OK) &&
               !round->early_release) {
      // (Devices released early cancel parked all-reduces, whose aborts
      // fail the channel's check for halves that had met already.)
      soak_mismatch(round,
                    "node %u (all-reduce): its half on device %u ended with "
                    "%s, the other half with %s",
                    index, node->device, hal_status_code_string(node->result),
                    hal_status_code_string(code));
    }
  }
}

// Whether device |d| of the round is lost by now: a semaphore made on it is
// born failed (Q5). A device the round released is not asked.
static bool soak_device_lost_now(soak_round_t* round, uint32_t d) {
  if (d >= round->device_count || !round->devices[d])
    return false;
  hal_semaphore_t* probe = NULL;
  hal_status_t status =
      hal_device_create_semaphore(round->devices[d], 0, &probe);
  if (status == HAL_OK) {
    uint64_t value = 0;
    status = hal_semaphore_query(probe, &value);
    hal_semaphore_release(probe);
  }
  return hal_status_consume_code(status) == HAL_STATUS_DEVICE_LOST;
}

// |lenient|: the round may fail nodes the model does not know of.
static void soak_check_node(soak_round_t* round, uint32_t index, bool lenient) {
  soak_node_t* node = &round->nodes[index];
  if (node->result == HAL_STATUS_DEADLINE_EXCEEDED) {
    soak_mismatch(round, "node %u (%s): its wait hung: %s", index,
                  soak_kind_names[node->kind], node->result_text);
    return;
  }
  bool ok = node->result == HAL_STATUS_OK;
  if (ok && node->must_fail) {
    soak_mismatch(round, "node %u (%s) succeeded; it must fail (S2)", index,
                  soak_kind_names[node->kind]);
  }
  if (!ok && !node->must_fail && !lenient) {
    soak_mismatch(round, "node %u (%s) failed; it must succeed: %s", index,
                  soak_kind_names[node->kind], node->result_text);
  }
  // A loss round: what the loss reaches fails as DEVICE_LOST, unless a
  // host failure reached it first.
  if (!ok && !node->must_fail && round->loss && node->touched &&
      !round->early_release && !round->faults &&
      node->result != HAL_STATUS_DEVICE_LOST) {
    soak_mismatch(round, "node %u (%s) failed after the device loss with %s",
                  index, soak_kind_names[node->kind], node->result_text);
  }
  // Failure propagates whatever caused it: a dependency that failed fails
  // its dependents; one that succeeded had successful dependencies.
  for (uint32_t e = 0; e < node->dep_count; ++e) {
    soak_node_t* dep = &round->nodes[node->deps[e]];
    // A device loss fails its semaphores even past the values reached: a
    // dependency it reached may read as failed after its dependent ran.
    if (ok && dep->result != HAL_STATUS_OK && !dep->touched) {
      soak_mismatch(round, "node %u succeeded after its dependency %u failed",
                    index, node->deps[e]);
    }
  }
  if (!ok || node->touched)
    return;
  // Nothing but the node signals its semaphore: it holds the value exactly.
  uint64_t value = 0;
  hal_status_t query = hal_semaphore_query(node->semaphore, &value);
  if (hal_status_code(query) == HAL_STATUS_DEVICE_LOST && round->loss &&
      (soak_device_lost_now(round, node->device) ||
       (node->semaphore_device >= 0 &&
        soak_device_lost_now(round, (uint32_t)node->semaphore_device)))) {
    // The checks' own vendor calls (the probe's releases, the region reads
    // before this one) met the loss after the probe found the device well:
    // the loss failed the semaphore past the value it reached (Q5).
    soak_trace(round, "  node %u: its device was lost while checking", index);
    hal_status_free(query);
    return;
  }
  if (query != HAL_OK || value != node->value) {
    soak_mismatch(round,
                  "node %u (%s): waited for %" PRIu64
                  ", but its semaphore "
                  "holds %" PRIu64,
                  index, soak_kind_names[node->kind], node->value, value);
  }
  hal_status_free(query);
  if (!soak_has_region(node->kind) || !round->buffers[node->device])
    return;
  uint8_t bytes[SOAK_REGION];
  // An all-reduce's other half holds the same sum in its region.
  if (node->kind == SOAK_ALL_REDUCE && round->buffers[1 - node->device]) {
    hal_status_t read =
        hal_buffer_read(round->buffers[1 - node->device],
                        (uint64_t)index * SOAK_REGION, bytes, SOAK_REGION);
    if (!soak_ok(round, read, "buffer_read"))
      return;
    if (memcmp(bytes, node->region, SOAK_REGION) != 0) {
      soak_mismatch(round,
                    "node %u (all-reduce): the other device's region differs "
                    "from the sum",
                    index);
    }
  }
  hal_status_t read =
      hal_buffer_read(round->buffers[node->device],
                      (uint64_t)index * SOAK_REGION, bytes, SOAK_REGION);
  if (!soak_ok(round, read, "buffer_read"))
    return;
  // A copy's source is only known when its node succeeded; it did (a
  // dependency of a successful node), and so its bytes are the model's.
  for (uint32_t b = 0; b < SOAK_REGION; ++b) {
    if (bytes[b] != node->region[b]) {
      soak_mismatch(round,
                    "node %u (%s): byte %u of its region is 0x%02x, the model "
                    "says 0x%02x",
                    index, soak_kind_names[node->kind], b, bytes[b],
                    node->region[b]);
      return;
    }
  }
}

// After the round, a fresh submission on device |d| that depends on
// nothing (hal_pipeline_probe). Returns DEVICE_LOST for a lost device; any
// other failure is a mismatch (unless faults are on). The probe's own
// releases free vendor memory, and a loss reported there loses the device
// too (Q5): a semaphore made after the probe is born failed then.
static hal_status_code_t soak_probe_device(soak_round_t* round, uint32_t d) {
  hal_status_t status = hal_pipeline_probe(round->devices[d], SOAK_REGION,
                                           hal_make_timeout_ns(SOAK_WAIT_NS));
  if (status == HAL_OK && soak_device_lost_now(round, d))
    return HAL_STATUS_DEVICE_LOST;
  hal_status_code_t code = hal_status_code(status);
  if (status && code != HAL_STATUS_DEVICE_LOST) {
    char text[512];
    hal_status_format(status, text, sizeof(text));
    if (round->faults && !round->loss) {
      soak_trace(round, "  probe of device %u failed (faults on): %s", d, text);
    } else {
      soak_mismatch(round,
                    "device %u: a fresh submission after the round "
                    "failed: %s",
                    d, text);
    }
  }
  hal_status_free(status);
  return code;
}

static void soak_run_round(soak_round_t* round) {
  soak_random_t* random = &round->random;
  // Executables first: without a kernel image the round has no dispatches.
  round->dispatch = true;
  for (uint32_t d = 0; d < round->device_count; ++d) {
    round->executables[d] = NULL;
    hal_status_t status =
        hal_kernel_create_executable(round->devices[d], &round->executables[d]);
    if (hal_status_code(status) == HAL_STATUS_UNIMPLEMENTED) {
      hal_status_free(status);
      round->dispatch = false;
    } else if (!soak_ok(round, status, "create_executable")) {
      round->dispatch = false;
    }
  }
  // Channels over both devices when the driver has collectives; never with
  // faults (an all-reduce half that fails alone would hold the other until
  // the library's bound) or losses.
  round->collectives = false;
  if (round->device_count == 2 && !round->faults && !round->loss) {
    hal_status_t status =
        hal_channel_create_group(2, round->devices, round->channels);
    hal_status_code_t code = hal_status_code(status);
    if (code == HAL_STATUS_OK) {
      round->collectives = true;
    } else if (code == HAL_STATUS_UNIMPLEMENTED ||
               code == HAL_STATUS_NOT_FOUND ||
               (code == HAL_STATUS_UNAVAILABLE &&
                strstr(hal_status_message(status), "ncclUnhandledCudaError"))) {
      // No collective library, or one that cannot use the runtime's
      // devices (a system NCCL or RCCL over the virtual GPU: its own CUDA
      // or HIP calls find no device, ncclUnhandledCudaError): the round
      // runs without all-reduces, and the run says why, once for each
      // driver. Any other failure to make the channels (a join that timed
      // out, a lost peer) is a mismatch.
      if (!round->collectives_skip_said) {
        round->collectives_skip_said = true;
        fprintf(stderr, "soak: %s: rounds run without all-reduces: ",
                round->driver_name);
        hal_status_fprint(stderr, status);
      }
      hal_status_free(status);
    } else {
      soak_ok(round, status, "channel_create_group");
    }
  }
  soak_generate(round);
  round->early_release = soak_chance(random, 15);
  soak_trace(
      round, "round seed %" PRIu64 ": %u nodes, %u device(s)%s%s", round->seed,
      round->node_count, round->device_count,
      round->early_release ? ", devices released with work in flight" : "",
      round->loss ? ", a device loss injected" : "");
  // Zeroed regions: a barrier's region stays zero, and nothing else writes.
  for (uint32_t d = 0; d < round->device_count; ++d) {
    uint64_t size = (uint64_t)round->node_count * SOAK_REGION;
    hal_buffer_params_t params = {HAL_MEMORY_TYPE_DEVICE_LOCAL,
                                  HAL_BUFFER_USAGE_DEFAULT};
    hal_status_code_t* failure = &round->buffer_failure[d];
    *failure = HAL_STATUS_OK;
    if (!soak_step(round,
                   hal_device_allocate_buffer(round->devices[d], params, size,
                                              &round->buffers[d]),
                   "allocate_buffer", failure)) {
      round->buffers[d] = NULL;
      continue;
    }
    uint8_t* zeros = calloc(1, (size_t)size);
    if (!zeros) {
      *failure = HAL_STATUS_RESOURCE_EXHAUSTED;
      soak_mismatch(round, "out of host memory");
    }
    if (!zeros ||
        !soak_step(round, hal_buffer_write(round->buffers[d], 0, zeros, size),
                   "buffer_write", failure)) {
      hal_buffer_release(round->buffers[d]);
      round->buffers[d] = NULL;
    }
    free(zeros);
  }
  // Semaphores: device nodes' from their device, host nodes' from the host
  // or from a random device (cross-device and host semaphores both occur).
  for (uint32_t i = 0; i < round->node_count; ++i) {
    soak_node_t* node = &round->nodes[i];
    hal_status_t status;
    if (!soak_has_region(node->kind) && soak_chance(random, 50)) {
      node->semaphore_device = -1;
      status = hal_semaphore_create_host(hal_allocator_system(), 0,
                                         &node->semaphore);
    } else {
      node->semaphore_device = (int)node->device;
      status = hal_device_create_semaphore(round->devices[node->device], 0,
                                           &node->semaphore);
    }
    hal_status_code_t failure = HAL_STATUS_OK;
    if (!soak_step(round, status, "create_semaphore", &failure)) {
      // Faults on: stand in with a host semaphore, failed at once.
      hal_status_ignore(hal_semaphore_create_host(hal_allocator_system(), 0,
                                                  &node->semaphore));
      hal_semaphore_fail(
          node->semaphore,
          hal_make_status(failure, "soak: node %u has no semaphore", i));
    }
  }
  // Device nodes in a random order (wait-before-signal), host nodes (each
  // signaler of a shared one) started before a random submission.
  uint32_t order[SOAK_MAX_NODES];
  uint32_t device_count = 0;
  soak_host_job_t jobs[SOAK_MAX_NODES * 3];
  uint32_t job_count = 0;
  uint32_t start_before[SOAK_MAX_NODES * 3];
  for (uint32_t i = 0; i < round->node_count; ++i) {
    soak_node_t* node = &round->nodes[i];
    if (!soak_is_host(node->kind)) {
      order[device_count++] = i;
      continue;
    }
    uint32_t threads = node->kind == SOAK_HOST_SHARED ? node->signalers : 1;
    uint32_t first = job_count;
    for (uint32_t t = 0; t < threads; ++t) {
      jobs[job_count].round = round;
      jobs[job_count].index = i;
      jobs[job_count++].value = t + 1;
    }
    for (uint32_t t = threads; t > 1; --t) {  // who signals which value
      uint32_t j = soak_below(random, t);
      uint64_t v = jobs[first + t - 1].value;
      jobs[first + t - 1].value = jobs[first + j].value;
      jobs[first + j].value = v;
    }
  }
  for (uint32_t i = device_count; i > 1; --i) {
    uint32_t j = soak_below(random, i);
    uint32_t t = order[i - 1];
    order[i - 1] = order[j];
    order[j] = t;
  }
  for (uint32_t j = 0; j < job_count; ++j)
    start_before[j] = soak_below(random, device_count + 1);
  atomic_store(&round->stop_prober, false);
  pthread_t prober;
  pthread_create(&prober, NULL, soak_prober_main, round);
  for (uint32_t k = 0; k <= device_count; ++k) {
    for (uint32_t j = 0; j < job_count; ++j) {
      if (start_before[j] == k)
        pthread_create(&jobs[j].thread, NULL, soak_host_main, &jobs[j]);
    }
    if (k == device_count)
      break;
    uint32_t index = order[k];
    // A node whose device has no buffer (faults on) cannot run: fail it.
    uint32_t device = round->nodes[index].device;
    if (!round->buffers[device]) {
      hal_semaphore_fail(round->nodes[index].semaphore,
                         hal_make_status(round->buffer_failure[device],
                                         "soak: node %u has no buffer", index));
      continue;
    }
    soak_submit(round, index);
  }
  if (round->early_release) {
    // Q4: released with work in flight; the buffers keep their memory.
    for (uint32_t d = 0; d < round->device_count; ++d) {
      soak_trace(round, "release device %u", d);
      hal_executable_release(round->executables[d]);
      round->executables[d] = NULL;
      hal_device_release(round->devices[d]);
      round->devices[d] = NULL;
    }
  }
  for (uint32_t i = 0; i < round->node_count; ++i)
    soak_await_node(round, i);
  // Every device still held takes fresh work; a lost one refuses it.
  for (uint32_t d = 0; d < round->device_count; ++d) {
    round->lost[d] = round->devices[d] &&
                     soak_probe_device(round, d) == HAL_STATUS_DEVICE_LOST;
    if (round->lost[d]) {
      soak_trace(round, "device %u is lost", d);
      if (!round->loss)
        soak_mismatch(round, "device %u is lost; no fault lost it", d);
    }
  }
  // In dependency order, so every dependency's result is known first. In a
  // loss round the model holds for what the lost device cannot reach; a
  // device released early was not probed, and may be the lost one.
  bool lenient = round->faults || round->early_release;
  bool reached[SOAK_MAX_DEVICES];
  for (uint32_t d = 0; d < round->device_count; ++d)
    reached[d] = round->lost[d] || (round->loss && !round->devices[d]);
  for (uint32_t i = 0; i < round->node_count; ++i) {
    soak_node_t* node = &round->nodes[i];
    node->touched =
        (!soak_is_host(node->kind) && reached[node->device]) ||
        (node->semaphore_device >= 0 && reached[node->semaphore_device]);
    for (uint32_t e = 0; e < node->dep_count; ++e)
      node->touched |= round->nodes[node->deps[e]].touched;
    soak_check_node(round, i, lenient || node->touched);
  }
  atomic_store(&round->stop_prober, true);
  for (uint32_t j = 0; j < job_count; ++j)
    pthread_join(jobs[j].thread, NULL);
  pthread_join(prober, NULL);
  for (uint32_t i = 0; i < round->node_count; ++i) {
    hal_semaphore_release(round->nodes[i].semaphore);
    round->nodes[i].semaphore = NULL;
    hal_semaphore_release(round->nodes[i].other_semaphore);
    round->nodes[i].other_semaphore = NULL;
  }
  for (uint32_t d = 0; d < SOAK_MAX_DEVICES; ++d) {
    hal_channel_release(round->channels[d]);
    round->channels[d] = NULL;
  }
  for (uint32_t d = 0; d < round->device_count; ++d) {
    hal_executable_release(round->executables[d]);
    round->executables[d] = NULL;
    hal_buffer_release(round->buffers[d]);
    round->buffers[d] = NULL;
  }
}

//===----------------------------------------------------------------------===//
// Driver loop and the command line
//===----------------------------------------------------------------------===//

typedef struct soak_totals_t {
  uint64_t rounds;
  uint64_t submissions;
  uint64_t ops;
  uint64_t faults;
  uint64_t mismatches;
  uint64_t loss_rounds;   // rounds run to lose a device
  uint64_t devices_lost;  // devices those rounds found lost
} soak_totals_t;

typedef struct soak_config_t {
  uint64_t seed;          // the driver's: round r's seed is mixed from it
  uint64_t rounds;        // at most this many rounds
  double deadline;        // seconds, monotonic
  bool faults;            // VGPU_FAULTS is set
  bool live;              // a progress line on a terminal
  uint32_t loss_percent;  // rounds that lose a device, each in a child
  bool have_round;        // --round: one round with this seed
  uint64_t round_seed;
  bool loss_child;   // --loss: this process is one loss round
  const char* self;  // this program, to run loss rounds
} soak_config_t;

static double soak_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t soak_mix(uint64_t a, uint64_t b) {
  soak_random_t random = {a ^ (b * 0xD1B54A32D192ED03ull)};
  return soak_next(&random);
}

// A device loss at a call the drivers make while work runs. Whichever
// device the calling thread has current is lost for good (docs/vgpu.md),
// so each loss round is a process of its own.
static void soak_loss_rule(const char* driver_name, uint64_t round_seed,
                           char* rule, size_t rule_size) {
  static const char* const cuda_calls[] = {
      "cuMemsetD8Async", "cuMemcpyAsync",       "cuLaunchKernel",
      "cuGraphLaunch",   "cuEventRecord",       "cuEventSynchronize",
      "cuMemcpy",        "cuStreamSynchronize",
  };
  static const char* const hip_calls[] = {
      "hipMemsetD8Async", "hipMemcpyAsync",       "hipModuleLaunchKernel",
      "hipGraphLaunch",   "hipEventRecord",       "hipEventSynchronize",
      "hipMemcpy",        "hipStreamSynchronize",
  };
  bool hip = strncmp(driver_name, "hip", 3) == 0;
  const char* const* calls = hip ? hip_calls : cuda_calls;
  soak_random_t random = {soak_mix(round_seed, 0x4C4F5353ull)};
  const char* call = calls[soak_below(&random, 8)];
  snprintf(rule, rule_size, "%s:nth=%u:lost", call, 1 + soak_below(&random, 8));
}

// Reads "soak: N submissions, N ops, N faults injected, N mismatches" out
// of a child's output.
static bool soak_parse_summary(const char* output, soak_totals_t* out) {
  for (const char* line = output; line && *line;) {
    unsigned long long s, o, f, m;
    if (sscanf(line,
               "soak: %llu submissions, %llu ops, %llu faults injected, %llu "
               "mismatches",
               &s, &o, &f, &m) == 4) {
      out->submissions = s;
      out->ops = o;
      out->faults = f;
      out->mismatches = m;
      const char* lost = strstr(line, " devices lost");
      const char* end = strchr(line, '\n');
      if (lost && (!end || lost < end)) {
        while (lost > line && lost[-1] >= '0' && lost[-1] <= '9')
          --lost;
        out->devices_lost = strtoull(lost, NULL, 10);
      }
      return true;
    }
    line = strchr(line, '\n');
    if (line)
      ++line;
  }
  return false;
}

// Runs one loss round in a child process with its output captured, shown
// only when the child reports a mismatch or dies.
static void soak_loss_round(const soak_config_t* config,
                            const char* driver_name, uint64_t round_seed,
                            soak_totals_t* totals) {
  char rule[128], faults[160], vgpu_seed[64], driver_arg[160], round_arg[64];
  soak_loss_rule(driver_name, round_seed, rule, sizeof(rule));
  snprintf(faults, sizeof(faults), "VGPU_FAULTS=%s", rule);
  snprintf(vgpu_seed, sizeof(vgpu_seed), "VGPU_SEED=%" PRIu64,
           soak_mix(round_seed, 0x5345454Dull));
  snprintf(driver_arg, sizeof(driver_arg), "--driver=%s", driver_name);
  snprintf(round_arg, sizeof(round_arg), "--round=%" PRIu64, round_seed);
  // The environment, with VGPU_FAULTS and VGPU_SEED replaced.
  size_t count = 0;
  while (environ[count])
    ++count;
  char** envp = calloc(count + 3, sizeof(*envp));
  if (!envp)
    abort();
  size_t n = 0;
  for (size_t i = 0; i < count; ++i) {
    if (strncmp(environ[i], "VGPU_FAULTS=", 12) &&
        strncmp(environ[i], "VGPU_SEED=", 10))
      envp[n++] = environ[i];
  }
  envp[n++] = faults;
  envp[n++] = vgpu_seed;
  char* argv[] = {(char*)config->self, driver_arg, round_arg, "--loss", NULL};
  int fds[2];
  if (pipe(fds) != 0)
    abort();
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDERR_FILENO);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  posix_spawn_file_actions_addclose(&actions, fds[1]);
  pid_t pid = 0;
  int spawned = posix_spawn(&pid, config->self, &actions, NULL, argv, envp);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  free(envp);
  char* output = NULL;
  size_t length = 0, capacity = 0;
  for (;;) {
    if (length + 4096 + 1 > capacity) {
      capacity = (capacity + 4096 + 1) * 2;
      char* grown = realloc(output, capacity);
      if (!grown)
        abort();
      output = grown;
    }
    ssize_t got = read(fds[0], output + length, 4096);
    if (got < 0 && errno == EINTR)
      continue;
    if (got <= 0)
      break;
    length += (size_t)got;
  }
  output[length] = '\0';
  close(fds[0]);
  int wstatus = 0;
  if (spawned == 0) {
    while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
    }
  }
  soak_totals_t child = {0};
  bool parsed = soak_parse_summary(output, &child);
  bool clean = spawned == 0 && WIFEXITED(wstatus) &&
               WEXITSTATUS(wstatus) == 0 && parsed && child.mismatches == 0;
  ++totals->rounds;
  ++totals->loss_rounds;
  totals->devices_lost += child.devices_lost;
  totals->submissions += child.submissions;
  totals->ops += child.ops;
  totals->faults += child.faults;
  if (!clean) {
    totals->mismatches += child.mismatches ? child.mismatches : 1;
    fprintf(stderr, "soak: loss round of %s (seed %" PRIu64 ") ", driver_name,
            round_seed);
    if (spawned != 0) {
      fprintf(stderr, "could not start: %s\n", strerror(spawned));
    } else if (WIFSIGNALED(wstatus)) {
      fprintf(stderr, "died of signal %d; its output:\n", WTERMSIG(wstatus));
    } else {
      fprintf(stderr, "exited with %d; its output:\n", WEXITSTATUS(wstatus));
    }
    fputs(output, stderr);
    fprintf(stderr,
            "soak: replay with: %s %s hal-soak --driver=%s --round=%" PRIu64
            " --loss\n",
            faults, vgpu_seed, driver_name, round_seed);
  }
  free(output);
}

// Runs rounds on |driver_name| until the deadline or the round count;
// returns false if the driver could not be set up.
static bool soak_driver(hal_driver_registry_t* registry,
                        const char* driver_name, const soak_config_t* config,
                        soak_totals_t* totals) {
  hal_driver_t* driver = NULL;
  uint32_t device_count = 0;
  hal_status_t status = hal_driver_registry_create_driver(
      registry, driver_name, hal_allocator_system(), &driver);
  if (!status)
    status = hal_driver_query_device_count(driver, &device_count);
  if (status || device_count == 0) {
    fprintf(stderr, "soak: cannot use driver %s: ", driver_name);
    if (status) {
      hal_status_fprint(stderr, status);
    } else {
      fprintf(stderr, "no devices\n");
    }
    hal_status_free(status);
    hal_driver_release(driver);
    ++totals->mismatches;
    return false;
  }
  soak_round_t* round = calloc(1, sizeof(*round));
  if (!round)
    abort();
  pthread_mutex_init(&round->mutex, NULL);
  uint64_t rounds = config->have_round ? 1 : config->rounds;
  for (uint64_t r = 0; r < rounds && soak_now() < config->deadline; ++r) {
    uint64_t seed =
        config->have_round ? config->round_seed : soak_mix(config->seed, r);
    // Not with VGPU_FAULTS set: that run's rounds are lenient already.
    if (!config->loss_child && !config->faults && config->loss_percent &&
        soak_mix(seed, 0x1055) % 100 < config->loss_percent) {
      soak_loss_round(config, driver_name, seed, totals);
      continue;
    }
    round->driver_name = driver_name;
    round->seed = seed;
    round->random.state = round->seed;
    round->faults = config->faults && !config->loss_child;  // its own rule
    round->loss = config->loss_child;
    round->trace_length = 0;
    if (round->trace)
      round->trace[0] = '\0';
    round->mismatches = 0;
    round->ops = round->submissions = round->faults_injected = 0;
    round->device_count =
        device_count < SOAK_MAX_DEVICES ? device_count : SOAK_MAX_DEVICES;
    bool ready = true;
    for (uint32_t d = 0; d < round->device_count; ++d) {
      round->devices[d] = NULL;
      ready &=
          soak_ok(round,
                  hal_driver_create_device_by_index(
                      driver, d, hal_allocator_system(), &round->devices[d]),
                  "create_device");
    }
    if (ready) {
      hal_device_properties_t properties;
      ready = soak_ok(
          round, hal_device_query_properties(round->devices[0], &properties),
          "query_properties");
      round->queue_count =
          ready && properties.queue_count ? properties.queue_count : 1;
    }
    if (ready)
      soak_run_round(round);
    for (uint32_t d = 0; d < round->device_count; ++d) {
      if (round->lost[d]) {
        ++round->faults_injected;
        ++totals->devices_lost;
      }
      round->lost[d] = false;
      hal_device_release(round->devices[d]);
      round->devices[d] = NULL;
    }
    if (round->mismatches) {
      fprintf(stderr,
              "soak: %u mismatch(es) in this round; its operations:\n%s"
              "soak: replay with: hal-soak --driver=%s --round=%" PRIu64
              "%s%s\n",
              round->mismatches, round->trace ? round->trace : "", driver_name,
              round->seed, round->loss ? " --loss" : "",
              round->faults ? " (and the same VGPU_FAULTS and VGPU_SEED)" : "");
    }
    ++totals->rounds;
    totals->submissions += round->submissions;
    totals->ops += round->ops;
    totals->faults += round->faults_injected;
    totals->mismatches += round->mismatches;
    if (config->live) {
      printf("\rsoak: %s round %" PRIu64 ": %" PRIu64 " submissions, %" PRIu64
             " faults, %" PRIu64 " mismatches   ",
             driver_name, totals->rounds, totals->submissions, totals->faults,
             totals->mismatches);
      fflush(stdout);
    }
  }
  if (config->live)
    printf("\n");
  free(round->trace);
  pthread_mutex_destroy(&round->mutex);
  free(round);
  hal_driver_release(driver);
  return true;
}

static void soak_usage(FILE* stream) {
  fprintf(stream,
          "usage: hal-soak --driver=NAME[,NAME...]|all [--seconds=N | "
          "--iterations=N] [--seed=S] [--loss-percent=P]\n"
          "       hal-soak --driver=NAME --round=R [--loss]\n"
          "  --driver        driver names, or all (every plugin found)\n"
          "  --seconds       run this long in total (default 10)\n"
          "  --iterations    rounds per driver instead (a round is one DAG)\n"
          "  --seed          the run's seed (default: from the clock; "
          "printed)\n"
          "  --loss-percent  rounds that lose a device, each run as a child "
          "process (default 3; 0: none)\n"
          "  --round         replay one round, by the seed a mismatch "
          "prints\n"
          "  --loss          that round is a loss round (VGPU_FAULTS loses a "
          "device)\n"
          "A mismatch prints the round's operations and the command that "
          "replays it.\nExit status: 0 no mismatch, 1 mismatches, 2 usage.\n");
}

static int soak_main(int argc, char** argv);

int main(int argc, char** argv) {
  return hal_cli_finish_stdout("hal-soak", soak_main(argc, argv), 1);
}

static int soak_main(int argc, char** argv) {
  const char* driver = NULL;
  uint64_t seconds = 0, iterations = 0, loss_percent = 3;
  uint64_t seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
  soak_config_t config = {0};
  // Each option once: a second value would silently win over the first.
  enum { kSeedOption = 3, kLossPercentOption = 4 };
  static const char* const kOptions[] = {
      "--driver=",       "--seconds=", "--iterations=", "--seed=",
      "--loss-percent=", "--round=",   "--loss"};
  bool seen[HAL_ARRAYSIZE(kOptions)] = {false};
  for (int i = 1; i < argc; ++i) {
    const char* arg = argv[i];
    for (size_t o = 0; o < HAL_ARRAYSIZE(kOptions); ++o) {
      size_t length = strlen(kOptions[o]);
      bool is_flag = kOptions[o][length - 1] != '=';
      if (is_flag ? strcmp(arg, kOptions[o]) != 0
                  : strncmp(arg, kOptions[o], length) != 0)
        continue;
      if (seen[o]) {
        fprintf(stderr, "hal-soak: %.*s given twice\n",
                (int)(is_flag ? length : length - 1), kOptions[o]);
        soak_usage(stderr);
        return 2;
      }
      seen[o] = true;
    }
    if (!strncmp(arg, "--driver=", 9)) {
      driver = arg + 9;
    } else if (!strncmp(arg, "--seconds=", 10) &&
               hal_cli_parse_uint(arg + 10, 1, UINT64_MAX, &seconds)) {
    } else if (!strncmp(arg, "--iterations=", 13) &&
               hal_cli_parse_uint(arg + 13, 1, UINT64_MAX, &iterations)) {
    } else if (!strncmp(arg, "--seed=", 7) &&
               hal_cli_parse_uint(arg + 7, 0, UINT64_MAX, &seed)) {
    } else if (!strncmp(arg, "--loss-percent=", 15) &&
               hal_cli_parse_uint(arg + 15, 0, 100, &loss_percent)) {
    } else if (!strncmp(arg, "--round=", 8) &&
               hal_cli_parse_uint(arg + 8, 0, UINT64_MAX, &config.round_seed)) {
      config.have_round = true;
    } else if (!strcmp(arg, "--loss")) {
      config.loss_child = true;
    } else if (!strcmp(arg, "--help")) {
      soak_usage(stdout);
      return 0;
    } else {
      fprintf(stderr, "hal-soak: bad argument '%s'\n", arg);
      soak_usage(stderr);
      return 2;
    }
  }
  const char* misuse = NULL;
  if (!driver)
    misuse = "--driver is required";
  else if (!hal_cli_list_is_complete(driver))
    misuse = "--driver names a driver between every two commas";
  else if (seconds && iterations)
    misuse = "--seconds and --iterations exclude each other";
  else if (config.have_round && (seconds || iterations))
    misuse = "--round replays one round: no --seconds or --iterations";
  else if (config.have_round &&
           (seen[kSeedOption] || seen[kLossPercentOption] ||
            !strcmp(driver, "all") || hal_cli_list_count(driver) > 1))
    misuse =
        "--round replays one round of one driver: no --seed or "
        "--loss-percent (the round's seed decides them), one --driver name";
  else if (config.loss_child && !config.have_round)
    misuse = "--loss goes with --round";
  if (misuse) {
    fprintf(stderr, "hal-soak: %s\n", misuse);
    soak_usage(stderr);
    return 2;
  }
  if (!seconds && !iterations)
    seconds = 10;
  const char* fault_spec = getenv("VGPU_FAULTS");
  bool faults = fault_spec && *fault_spec;
  if (config.have_round) {
    printf("soak: round %" PRIu64 "%s\n", config.round_seed,
           config.loss_child ? " (a loss round)" : "");
  } else {
    printf("soak: seed %" PRIu64 " (replay: --seed=%" PRIu64 ")%s\n", seed,
           seed,
           faults ? "; VGPU_FAULTS set: vendor errors may fail any node" : "");
  }
  fflush(stdout);
  char self[4096];
  ssize_t self_length = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (self_length > 0) {
    self[self_length] = '\0';
    config.self = self;
  } else {
    config.self = argv[0];
  }
  if (config.have_round)
    seed = config.round_seed;  // the summary names what it ran
  config.faults = faults;
  config.live = isatty(STDOUT_FILENO);
  config.loss_percent = (uint32_t)loss_percent;

  hal_driver_registry_t* registry = NULL;
  hal_status_t status =
      hal_driver_registry_create(NULL, hal_allocator_system(), &registry);
  if (status) {
    fprintf(stderr, "soak: cannot create the driver registry: ");
    hal_status_fprint(stderr, status);
    hal_status_free(status);
    return 1;
  }
  // Every driver named, or every usable one (those left out said on
  // stderr), however many.
  size_t name_count = 0;
  const char** names = NULL;
  char* list = strdup(driver);
  if (!list)
    abort();
  if (!strcmp(driver, "all")) {
    if (!(names = hal_cli_usable_drivers("soak", registry, &name_count)))
      abort();
  } else {
    if (!(names = calloc(hal_cli_list_count(driver), sizeof(*names))))
      abort();
    char* context = NULL;
    for (char* name = strtok_r(list, ",", &context); name;
         name = strtok_r(NULL, ",", &context)) {
      names[name_count++] = name;
    }
  }
  soak_totals_t totals = {0};
  double start = soak_now();
  for (size_t i = 0; i < name_count; ++i) {
    // Time is shared out evenly over the drivers still to run.
    config.deadline =
        seconds ? start + (double)seconds * (double)(i + 1) / (double)name_count
                : 1e300;
    config.rounds = iterations ? iterations : UINT64_MAX;
    config.seed = soak_mix(seed, 0x100 + i);
    soak_totals_t before = totals;
    soak_driver(registry, names[i], &config, &totals);
    printf("soak: driver %s: %" PRIu64 " rounds (%" PRIu64
           " to lose a device, %" PRIu64 " lost), %" PRIu64
           " submissions, %" PRIu64 " mismatches\n",
           names[i], totals.rounds - before.rounds,
           totals.loss_rounds - before.loss_rounds,
           totals.devices_lost - before.devices_lost,
           totals.submissions - before.submissions,
           totals.mismatches - before.mismatches);
    fflush(stdout);
  }
  hal_driver_registry_free(registry);
  free(list);
  free(names);
  if (name_count == 0) {
    fprintf(stderr, "soak: no driver to run\n");
    ++totals.mismatches;
  }
  printf("soak: %" PRIu64 " submissions, %" PRIu64 " ops, %" PRIu64
         " faults injected, %" PRIu64 " mismatches (seed %" PRIu64
         ", %.1f s, %" PRIu64 " rounds, %" PRIu64 " devices lost)\n",
         totals.submissions, totals.ops, totals.faults, totals.mismatches, seed,
         soak_now() - start, totals.rounds, totals.devices_lost);
  return totals.mismatches ? 1 : 0;
}
