// Copyright 2026 The HAL Authors.
//
// CTS suite "queue_model": random programs of queue operations, run on the
// driver under test and checked against a model of what docs/queue-ops.md
// and docs/sync-contract.md promise.
//
// A program is up to OPS_PER_PROGRAM queue operations ("ops") on one or two
// devices: fills, updates, copies, command buffers (execute), host calls,
// barriers, file reads and writes, queue-ordered allocas, uses of the
// alloca'd buffers, deallocas, and fills of slots that several ops share.
// Each op waits on up to MAX_WAITS (semaphore, value) pairs, drawn among
// host semaphores the test signals and the semaphores other ops signal
// (some for a value nobody ever reaches), and signals one or two semaphores
// of its own, then a "done" semaphore last in its list: by S5 an op's done
// semaphore is made after its other signals, so once it is reached or
// failed the test may look at everything the op decided.
//
// The test runs a program in steps, one action a step: submit the next op
// (the ops' order shuffled locally, so that many waits come before their
// signals), signal a host semaphore, fail a semaphore with an injected
// status, drop the test's reference to a semaphore, or, in some programs,
// release a device part-way. After each action the model computes what
// the action decides, until nothing changes:
//   - an op whose waits are all reached is issued, and its outcome follows
//     from its kind and the state of what it uses: a host call that
//     returns an error fails its signals with it; a use of an alloca'd
//     buffer that is not live fails FAILED_PRECONDITION; a dealloca reached
//     while a use is still pending fails FAILED_PRECONDITION and leaves the
//     memory live; two big allocas of one device cannot both be live
//     (RESOURCE_EXHAUSTED); everything else succeeds;
//   - an op a failed wait decides fails with that wait's failure (S2); a
//     wait that was reached and only then failed while another kept the op
//     waiting decides host calls and file transfers at once, and other
//     queue work when it issues;
//   - the semaphores an op signals take its value when it succeeds, or its
//     failure when it fails, unless they failed already (sticky, S2).
// Then it waits, with a bound, for every op the model decided and checks:
//   - each op's done semaphore: reached when the model says OK, or failed
//     with a failure the model allows;
//   - every semaphore the test still holds: the model's value, or a
//     failure the model allows;
//   - ops the model keeps waiting are not decided, and their host calls
//     were not called;
//   - host calls: called exactly once, with OK when they ran, else with the
//     failure that decided them.
// At the end it releases the devices, which must decide at once everything
// still waiting (CANCELLED, or the failure of a wait: Q4), and checks that
//   - every op was decided (nothing hangs), every host call called once;
//   - each op that writes bytes wrote them to a region of its own: one that
//     succeeded left its bytes there, one that failed left the sentinel;
//     the file that writes target likewise;
//   - a slot filled by several ops of one queue holds the fill issued
//     last (work that one action releases issues in submission order, Q2);
//   - host calls released together by one signal ran in submission order.
//
// Where the contract leaves an outcome open, the model allows a set of
// failures instead of one: each is a status code and, for failures the
// test made, a token their message carries ("[fault 3]"). Where the
// outcome depends on timing, the op is "open" and only its bytes are
// checked, if it succeeded: two ops of one alloca'd buffer that one action
// decides without an order between them, and work a device release meets
// in flight. An open op's semaphores are open, and so is what waits on them.
//
// Every program draws from a generator of its own, derived from
// HAL_TEST_SEED, the case and the program's index. A failure names them and
// the op, prints the program's ops, and reproduces with the same
// HAL_TEST_SEED. HAL_STRESS_ITERATIONS multiplies the number of programs.
// With a device of at most 256 MiB (VGPU_DEVICE_MEMORY_MB=64), some allocas
// take most of its memory, so that two of them cannot be live at once.

#include <stdatomic.h>
#include <unistd.h>

#include "cts.h"

#define MAX_OPS 160
#define OPS_PER_PROGRAM 50
#define MAX_SEMAPHORES 512
#define MAX_WAITS 8
#define MAX_SIGNALS 2  // an op's own semaphores; its done semaphore comes after
#define HOST_SEMAPHORES 3
#define MAX_BUFFERS 32
#define MAX_USES_PER_BUFFER 16
#define MAX_ALLOWED 8
#define TOKEN_SIZE 24
#define ANCESTOR_WORDS ((MAX_OPS + 63) / 64)

// The device buffer: a region per op, then the shared slots, then the
// background thread's slots (one per queue).
#define REGION 256
#define SHARED_SLOTS 8
#define BACKGROUND_SLOTS 8
#define DEVICE_BUFFER_SIZE \
  ((MAX_OPS + SHARED_SLOTS + BACKGROUND_SLOTS) * REGION)
#define SMALL_ALLOCA_SIZE 16384
#define FILE_SIZE (MAX_OPS * REGION)
// What no op writes: the device buffers and the written file start so.
#define SENTINEL 0xEE

// How long the test waits for an op the model decided; after one hang, the
// program's later waits take a short bound, so one hang costs one bound.
#define DECIDE_TIMEOUT_NS (20ll * 1000 * 1000 * 1000)
#define AFTER_HANG_TIMEOUT_NS (100ll * 1000 * 1000)
// How long the test gives open ops to end before it reads the bytes.
#define OPEN_SETTLE_TIMEOUT_NS (500ll * 1000 * 1000)

#define BACKGROUND_MAX_OPS 400

//===----------------------------------------------------------------------===//
// Allowed failures
//===----------------------------------------------------------------------===//

// The failures the model allows for an op or a semaphore: a status code,
// and a token the status message must contain ("" for the code alone).
// More than MAX_ALLOWED distinct entries, or an open input, allow any
// failure.
typedef struct allowed_failures_t {
  bool any;
  uint32_t count;
  hal_status_code_t code[MAX_ALLOWED];
  char token[MAX_ALLOWED][TOKEN_SIZE];
} allowed_failures_t;

static void allow_failure(allowed_failures_t* set, hal_status_code_t code,
                          const char* token) {
  for (uint32_t i = 0; i < set->count; ++i) {
    if (set->code[i] == code && strcmp(set->token[i], token) == 0)
      return;
  }
  if (set->count == MAX_ALLOWED) {
    set->any = true;
    return;
  }
  set->code[set->count] = code;
  snprintf(set->token[set->count], TOKEN_SIZE, "%s", token);
  ++set->count;
}

static void allow_failures_of(allowed_failures_t* set,
                              const allowed_failures_t* other) {
  set->any |= other->any;
  for (uint32_t i = 0; i < other->count; ++i)
    allow_failure(set, other->code[i], other->token[i]);
}

static bool failure_allowed(const allowed_failures_t* set,
                            hal_status_code_t code, const char* message) {
  if (code == HAL_STATUS_OK)
    return false;
  if (set->any)
    return true;
  for (uint32_t i = 0; i < set->count; ++i) {
    if (code == set->code[i] &&
        (!set->token[i][0] || strstr(message, set->token[i])))
      return true;
  }
  return false;
}

static void format_allowed(const allowed_failures_t* set, char* text,
                           size_t size) {
  if (set->any) {
    snprintf(text, size, "any failure");
    return;
  }
  size_t used = 0;
  text[0] = '\0';
  for (uint32_t i = 0; i < set->count && used < size; ++i) {
    used +=
        (size_t)snprintf(text + used, size - used, "%s%s%s%s", i ? " | " : "",
                         hal_status_code_string(set->code[i]),
                         set->token[i][0] ? " " : "", set->token[i]);
  }
}

//===----------------------------------------------------------------------===//
// The program
//===----------------------------------------------------------------------===//

typedef enum op_kind_t {
  OP_FILL,        // queue_fill of its region
  OP_UPDATE,      // queue_update of its region
  OP_COPY,        // queue_copy of an earlier op's region into its own
  OP_EXECUTE,     // a command buffer: fill half, barrier, update the rest
  OP_HOST_CALL,   // a host call; some return an error
  OP_BARRIER,     // queue_barrier
  OP_FILE_READ,   // the read file's bytes at its offset into its region
  OP_FILE_WRITE,  // an earlier op's region into the written file
  OP_ALLOCA,      // queue_alloca of a buffer
  OP_ALLOCA_USE,  // a command buffer: fill a slot of an alloca'd buffer,
                  // barrier, copy it into its region
  OP_DEALLOCA,    // queue_dealloca of an alloca'd buffer
  OP_SLOT_FILL,   // queue_fill of a slot that ops of its queue share
} op_kind_t;

static const char* const kOpKindNames[] = {
    "fill", "update", "copy",   "execute",    "host_call", "barrier",
    "read", "write",  "alloca", "alloca_use", "dealloca",  "slot_fill",
};

// Whether the op writes its own region of the device buffer.
static bool op_writes_region(op_kind_t kind) {
  return kind == OP_FILL || kind == OP_UPDATE || kind == OP_COPY ||
         kind == OP_EXECUTE || kind == OP_FILE_READ || kind == OP_ALLOCA_USE;
}

typedef struct wait_t {
  uint32_t semaphore;
  uint64_t value;
} wait_t;

typedef enum outcome_t {
  OUTCOME_PENDING,  // not decided yet
  OUTCOME_OK,
  OUTCOME_FAILED,  // with a failure in op_t.allowed
  OUTCOME_OPEN,    // decided, but timing decides how
} outcome_t;

typedef enum observed_t {
  OBSERVED_NOT_YET,
  OBSERVED_OK,
  OBSERVED_FAILED,
  OBSERVED_HUNG,  // not decided within the bound
} observed_t;

struct program_t;

typedef struct op_t {
  struct program_t* program;  // for the host call
  uint32_t index;
  op_kind_t kind;
  uint32_t device;
  uint32_t queue;
  wait_t waits[MAX_WAITS];
  uint32_t wait_count;
  wait_t signals[MAX_SIGNALS];  // semaphores only this op signals
  uint32_t signal_count;
  hal_semaphore_t* done;  // last in its signal list, at 1

  // What it does.
  uint8_t pattern[4];
  uint32_t pattern_length;
  uint8_t data[REGION];
  int32_t source;         // copy, file write: the op whose region it reads
  int32_t buffer;         // alloca, alloca use, dealloca: the alloca'd buffer
  uint32_t slot;          // slot fill: the shared slot; alloca use: its slot in
                          // the alloca'd buffer
  bool reusable;          // execute, alloca use: a REUSABLE command buffer
  bool host_call_fails;   // the host call returns "[host call K]"
  bool one_host_wait;     // its only wait is on a host semaphore
  bool skip_alloca_wait;  // alloca use: no wait on the alloca's signal
  bool after_every_use;   // dealloca: waits for every use of its buffer

  // Submission.
  bool submitted;
  bool skipped;  // never submitted: its device is gone, or its buffer is
  uint32_t submit_step;
  uint32_t submit_seq;

  // The model.
  outcome_t outcome;
  allowed_failures_t allowed;  // when FAILED
  uint32_t decide_step;
  bool issued;  // decided by its own issue, not by a failed wait
  // A wait reached and then failed while another kept the op waiting:
  // queue work fails with it at its issue (S2), or at the release (Q4).
  bool has_late_failure;
  allowed_failures_t late_failure;
  // Ops decided in the same step that this one waits on, transitively:
  // ordered before it.
  uint64_t ancestors[ANCESTOR_WORDS];

  // What the test saw.
  observed_t observed;
  bool open_ok_before_read;  // open, but found OK before the bytes were read
  char observed_text[256];

  // Host call.
  atomic_int calls;
  hal_status_code_t call_code;
  char call_message[256];
  atomic_int run_order;  // 1 + the order in which host calls ran
} op_t;

typedef struct model_semaphore_t {
  hal_semaphore_t* handle;
  int32_t producer;  // the op that signals it; -1: a host semaphore
  uint64_t produced_value;
  bool dropped;  // the test released its reference
  // The model.
  uint64_t value;
  bool failed;
  allowed_failures_t failure;
  uint64_t value_at_failure;
  uint32_t failure_step;
  int32_t failed_by;  // the op whose failure it took; -1: injected
  bool open;
} model_semaphore_t;

// The memory of an alloca'd buffer, as the model sees it.
typedef enum memory_state_t {
  MEMORY_NOT_YET,  // alloca not reached
  MEMORY_LIVE,
  MEMORY_GONE,   // dealloca ran
  MEMORY_NEVER,  // alloca failed
  MEMORY_OPEN,   // timing decides
} memory_state_t;

typedef struct model_buffer_t {
  hal_buffer_t* handle;
  uint32_t device;
  uint32_t alloca_op;
  int32_t dealloca_op;
  uint64_t size;
  bool big;
  uint32_t use_count;
  memory_state_t memory;
} model_buffer_t;

// A thread beside the program that keeps submitting host calls and fills
// on device 0 behind two semaphores it signals as it goes: every one of
// them must succeed.
typedef struct background_t {
  pthread_t thread;
  atomic_bool stop;
  hal_device_t* device;
  hal_buffer_t* buffer;
  uint32_t queue_count;
  cts_random_t random;
  hal_semaphore_t* gates[2];
  hal_semaphore_t* done[BACKGROUND_MAX_OPS];
  bool host_call[BACKGROUND_MAX_OPS];
  uint32_t count;
  char error[512];  // its first refused call, reported by the test thread
} background_t;

typedef struct program_options_t {
  uint32_t device_count;
  bool background;
} program_options_t;

typedef struct program_t {
  const char* case_name;
  uint32_t index;
  cts_random_t random;
  program_options_t options;
  uint32_t step;
  uint32_t next_seq;

  hal_device_t* devices[2];
  bool device_alive[2];
  uint32_t queue_counts[2];
  hal_buffer_t* device_buffers[2];  // DEVICE_BUFFER_SIZE, SENTINEL
  uint64_t big_alloca_size;         // 0: no big allocas
  uint8_t* read_bytes;              // the read file's contents
  uint8_t* written_bytes;           // the written file (memory)
  hal_file_t* read_file;
  hal_file_t* write_file;
  bool read_from_descriptor;

  op_t ops[MAX_OPS];
  uint32_t op_count;
  model_semaphore_t semaphores[MAX_SEMAPHORES];
  uint32_t semaphore_count;
  uint32_t host_semaphores[HOST_SEMAPHORES];
  uint64_t host_values[HOST_SEMAPHORES];  // what the test signaled last
  model_buffer_t buffers[MAX_BUFFERS];
  uint32_t buffer_count;
  uint32_t fault_count;
  atomic_int run_counter;
  bool released_mid_run;
  bool hung;

  uint32_t violation_count;
  char first_violation[1024];
  background_t background;
} program_t;

static uint32_t pick(program_t* p, uint32_t bound) {
  return cts_random_below(&p->random, bound);
}

// Records a violation of the contract (or of the model): printed at once,
// the first kept for the failure message.
static void violation(program_t* p, const char* format, ...)
    __attribute__((format(printf, 2, 3)));
static void violation(program_t* p, const char* format, ...) {
  char text[1024];
  va_list args;
  va_start(args, format);
  vsnprintf(text, sizeof(text), format, args);
  va_end(args);
  printf("[ MODEL  ] %s program %u, step %u: %s\n", p->case_name, p->index,
         p->step, text);
  fflush(stdout);
  if (p->violation_count++ == 0)
    snprintf(p->first_violation, sizeof(p->first_violation), "%s", text);
}

static void describe_status(hal_status_t status, char* text, size_t size) {
  if (status == HAL_OK)
    snprintf(text, size, "OK");
  else
    hal_status_format(status, text, size);
}

static void print_ops(const program_t* p) {
  static const char* const kOutcomes[] = {"pending", "ok", "failed", "open"};
  printf(
      "[ MODEL  ] %s program %u: %u ops (s<N>: semaphore, h: host-signaled; "
      "model outcome / seen)\n",
      p->case_name, p->index, p->op_count);
  for (uint32_t k = 0; k < p->op_count; ++k) {
    const op_t* o = &p->ops[k];
    char line[1024];
    size_t used =
        (size_t)snprintf(line, sizeof(line), "  op %u %s dev%u q%u", k,
                         kOpKindNames[o->kind], o->device, o->queue);
    if (o->source >= 0)
      used += (size_t)snprintf(line + used, sizeof(line) - used, " from op %d",
                               o->source);
    if (o->buffer >= 0)
      used += (size_t)snprintf(line + used, sizeof(line) - used, " buffer %d%s",
                               o->buffer,
                               p->buffers[o->buffer].big ? " (big)" : "");
    used += (size_t)snprintf(line + used, sizeof(line) - used, " waits [");
    for (uint32_t i = 0; i < o->wait_count && used < sizeof(line); ++i) {
      const model_semaphore_t* s = &p->semaphores[o->waits[i].semaphore];
      used += (size_t)snprintf(
          line + used, sizeof(line) - used, "%ss%u%s>=%" PRIu64, i ? " " : "",
          o->waits[i].semaphore, s->producer < 0 ? "h" : "", o->waits[i].value);
    }
    used += (size_t)snprintf(line + used, sizeof(line) - used, "] signals [");
    for (uint32_t i = 0; i < o->signal_count && used < sizeof(line); ++i) {
      used += (size_t)snprintf(line + used, sizeof(line) - used,
                               "%ss%u=%" PRIu64, i ? " " : "",
                               o->signals[i].semaphore, o->signals[i].value);
    }
    if (used < sizeof(line)) {
      if (!o->submitted || o->skipped) {
        snprintf(line + used, sizeof(line) - used, "] not submitted");
      } else {
        snprintf(line + used, sizeof(line) - used,
                 "] submitted #%u step %u; %s at step %u / %s", o->submit_seq,
                 o->submit_step, kOutcomes[o->outcome], o->decide_step,
                 o->observed_text[0] ? o->observed_text : "not seen");
      }
    }
    printf("%s\n", line);
  }
  fflush(stdout);
}

//===----------------------------------------------------------------------===//
// Generation
//===----------------------------------------------------------------------===//

// A semaphore of |device| (a host semaphore when |device| < 0) that
// |producer| signals to |produced_value| (-1: the test signals it).
static uint32_t add_semaphore(program_t* p, int32_t producer,
                              uint64_t produced_value, int32_t device) {
  assert_true(p->semaphore_count < MAX_SEMAPHORES);
  uint32_t s = p->semaphore_count++;
  model_semaphore_t* m = &p->semaphores[s];
  memset(m, 0, sizeof(*m));
  m->failed_by = -1;
  m->producer = producer;
  m->produced_value = produced_value;
  m->handle = cts_create_semaphore(device >= 0 ? p->devices[device] : NULL, 0);
  return s;
}

static void add_wait(op_t* o, uint32_t semaphore, uint64_t value) {
  if (o->wait_count == MAX_WAITS)
    return;
  o->waits[o->wait_count++] = (wait_t){semaphore, value};
}

// A value to wait for on |s|: a host semaphore's within what the test may
// signal soon; an op's semaphore's up to its value, and one time in ten
// just above it (never reached: the op waits until the device goes).
static uint64_t pick_wait_value(program_t* p, uint32_t s) {
  const model_semaphore_t* m = &p->semaphores[s];
  if (m->producer < 0)
    return 1 + pick(p, 8);
  if (pick(p, 10) == 0)
    return m->produced_value + 1;
  return 1 + pick(p, (uint32_t)m->produced_value);
}

static op_kind_t pick_kind(program_t* p) {
  static const struct {
    uint32_t below;
    op_kind_t kind;
  } kWeights[] = {
      {12, OP_FILL},       {20, OP_UPDATE},     {30, OP_COPY},
      {38, OP_EXECUTE},    {52, OP_HOST_CALL},  {56, OP_BARRIER},
      {61, OP_FILE_READ},  {66, OP_FILE_WRITE}, {72, OP_ALLOCA},
      {84, OP_ALLOCA_USE}, {90, OP_DEALLOCA},   {100, OP_SLOT_FILL},
  };
  uint32_t r = pick(p, 100);
  for (size_t i = 0; i < HAL_ARRAYSIZE(kWeights); ++i) {
    if (r < kWeights[i].below)
      return kWeights[i].kind;
  }
  return OP_FILL;
}

// First pass: each op's kind, device, data and the semaphores it signals.
static void generate_ops(program_t* p, uint32_t count) {
  uint32_t live[MAX_BUFFERS];  // buffers with an alloca and no dealloca yet
  uint32_t live_count = 0;
  for (uint32_t k = 0; k < count; ++k) {
    op_t* o = &p->ops[k];
    memset(o, 0, sizeof(*o));
    o->program = p;
    o->index = k;
    o->device = pick(p, p->options.device_count);
    o->queue = pick(p, p->queue_counts[o->device]);
    o->source = -1;
    o->buffer = -1;
    op_kind_t kind = pick_kind(p);
    if ((kind == OP_ALLOCA_USE || kind == OP_DEALLOCA) && live_count == 0)
      kind = OP_FILL;
    if (kind == OP_ALLOCA && p->buffer_count == MAX_BUFFERS)
      kind = OP_FILL;
    if (kind == OP_COPY || kind == OP_FILE_WRITE) {
      // The source: an earlier op of the device that writes its region.
      uint32_t candidates[MAX_OPS], candidate_count = 0;
      for (uint32_t j = 0; j < k; ++j) {
        if (op_writes_region(p->ops[j].kind) && p->ops[j].device == o->device)
          candidates[candidate_count++] = j;
      }
      if (candidate_count == 0)
        kind = OP_UPDATE;
      else
        o->source = (int32_t)candidates[pick(p, candidate_count)];
    }
    if (kind == OP_ALLOCA) {
      uint32_t b = p->buffer_count++;
      model_buffer_t* buffer = &p->buffers[b];
      memset(buffer, 0, sizeof(*buffer));
      buffer->device = o->device;
      buffer->alloca_op = k;
      buffer->dealloca_op = -1;
      buffer->big = p->big_alloca_size && pick(p, 2);
      buffer->size = buffer->big ? p->big_alloca_size : SMALL_ALLOCA_SIZE;
      o->buffer = (int32_t)b;
      live[live_count++] = b;
    } else if (kind == OP_ALLOCA_USE || kind == OP_DEALLOCA) {
      uint32_t which = pick(p, live_count);
      uint32_t b = live[which];
      model_buffer_t* buffer = &p->buffers[b];
      o->device = buffer->device;
      o->queue = pick(p, p->queue_counts[o->device]);
      if (kind == OP_DEALLOCA) {
        o->buffer = (int32_t)b;
        buffer->dealloca_op = (int32_t)k;
        live[which] = live[--live_count];
        // Three times in four the dealloca waits for every use (all made
        // before it). Otherwise it may be reached before a use: while the
        // use waits, the dealloca fails FAILED_PRECONDITION; once the use
        // was issued, only the stream orders the free after it, so the
        // uses go to the dealloca's queue (a dealloca on another queue,
        // not ordered after a use the device still runs, is a program
        // error the contract leaves undefined).
        o->after_every_use = pick(p, 4) != 0;
        if (!o->after_every_use) {
          for (uint32_t j = 0; j < k; ++j) {
            if (p->ops[j].kind == OP_ALLOCA_USE &&
                p->ops[j].buffer == o->buffer)
              p->ops[j].queue = o->queue;
          }
        }
      } else if (buffer->use_count == MAX_USES_PER_BUFFER) {
        kind = OP_FILL;
      } else {
        o->buffer = (int32_t)b;
        o->slot = buffer->use_count++;
      }
    }
    o->kind = kind;
    if (kind == OP_SLOT_FILL)
      o->slot = o->queue % SHARED_SLOTS;
    o->host_call_fails = kind == OP_HOST_CALL && pick(p, 6) == 0;
    o->reusable = pick(p, 2);
    static const uint32_t kPatternLengths[] = {1, 2, 4};
    o->pattern_length = kPatternLengths[pick(p, 3)];
    for (int i = 0; i < 4; ++i)
      o->pattern[i] = (uint8_t)cts_random_next(&p->random);
    if (o->pattern[0] == SENTINEL)
      o->pattern[0] ^= 1;  // a fill must be told from the sentinel
    for (int i = 0; i < REGION; ++i)
      o->data[i] = (uint8_t)cts_random_next(&p->random);
    o->signal_count = 1 + pick(p, MAX_SIGNALS);
    for (uint32_t i = 0; i < o->signal_count; ++i) {
      uint64_t value = 1 + pick(p, 4);
      // Half on the op's device, half host semaphores (signaled by queue
      // work all the same).
      int32_t device = pick(p, 2) ? (int32_t)o->device : -1;
      o->signals[i] =
          (wait_t){add_semaphore(p, (int32_t)k, value, device), value};
    }
    o->done = cts_create_semaphore(NULL, 0);
  }
  p->op_count = count;
}

// Second pass: each op's waits. What it reads (a copy's source, the
// alloca before a use) comes first, then up to two more on anything.
static void generate_waits(program_t* p) {
  for (uint32_t k = 0; k < p->op_count; ++k) {
    op_t* o = &p->ops[k];
    // Slot fills, and a third of the host calls, wait on one host
    // semaphore alone: one signal releases several of them together,
    // whose order the end checks.
    if (o->kind == OP_SLOT_FILL ||
        (o->kind == OP_HOST_CALL && pick(p, 3) == 0)) {
      add_wait(o, p->host_semaphores[pick(p, HOST_SEMAPHORES)], 1 + pick(p, 8));
      o->one_host_wait = true;
      continue;
    }
    if (o->source >= 0) {
      const op_t* source = &p->ops[o->source];
      add_wait(o, source->signals[0].semaphore,
               1 + pick(p, (uint32_t)source->signals[0].value));
    }
    if (o->kind == OP_ALLOCA_USE) {
      const op_t* alloca = &p->ops[p->buffers[o->buffer].alloca_op];
      if (pick(p, 12) == 0) {
        o->skip_alloca_wait = true;  // a use the queue may reach too early
      } else {
        add_wait(o, alloca->signals[0].semaphore,
                 1 + pick(p, (uint32_t)alloca->signals[0].value));
      }
    }
    if (o->kind == OP_DEALLOCA) {
      const model_buffer_t* buffer = &p->buffers[o->buffer];
      const op_t* alloca = &p->ops[buffer->alloca_op];
      add_wait(o, alloca->signals[0].semaphore, alloca->signals[0].value);
      if (o->after_every_use) {
        for (uint32_t j = 0; j < k; ++j) {
          if (p->ops[j].kind == OP_ALLOCA_USE && p->ops[j].buffer == o->buffer)
            add_wait(o, p->ops[j].signals[0].semaphore,
                     p->ops[j].signals[0].value);
        }
      }
    }
    uint32_t extra = pick(p, 3);
    for (uint32_t i = 0; i < extra; ++i) {
      uint32_t s;
      if (pick(p, 3) == 0) {
        s = p->host_semaphores[pick(p, HOST_SEMAPHORES)];
      } else {
        // Mostly an earlier op's, sometimes a later one's (a wait that may
        // close a cycle: never reached).
        uint32_t j =
            pick(p, 10) < 7 && k > 0 ? pick(p, k) : pick(p, p->op_count);
        if (j == k)
          continue;
        s = p->ops[j].signals[pick(p, p->ops[j].signal_count)].semaphore;
      }
      add_wait(o, s, pick_wait_value(p, s));
    }
  }
}

//===----------------------------------------------------------------------===//
// Submission
//===----------------------------------------------------------------------===//

static hal_status_t host_call_body(void* user_data, hal_status_t status) {
  op_t* o = user_data;
  if (atomic_fetch_add(&o->calls, 1) == 0) {
    o->call_code = hal_status_code(status);
    snprintf(o->call_message, sizeof(o->call_message), "%s",
             status ? hal_status_message(status) : "");
    atomic_store(&o->run_order,
                 atomic_fetch_add(&o->program->run_counter, 1) + 1);
  }
  if (status == HAL_OK && o->host_call_fails)
    return hal_make_status(HAL_STATUS_ABORTED, "[host call %u]", o->index);
  return HAL_OK;
}

static hal_command_buffer_t* record_command_buffer(program_t* p, op_t* o) {
  hal_buffer_t* region = p->device_buffers[o->device];
  uint64_t offset = (uint64_t)o->index * REGION;
  hal_command_buffer_t* cb = cts_begin_command_buffer(
      p->devices[o->device], o->reusable ? HAL_COMMAND_BUFFER_MODE_REUSABLE
                                         : HAL_COMMAND_BUFFER_MODE_ONE_SHOT);
  if (o->kind == OP_EXECUTE) {
    HAL_ASSERT_OK(hal_command_buffer_fill_buffer(
        cb, region, offset, REGION / 2, o->pattern, o->pattern_length));
    HAL_ASSERT_OK(hal_command_buffer_execution_barrier(cb));
    HAL_ASSERT_OK(hal_command_buffer_update_buffer(
        cb, o->data, 0, region, offset + REGION / 2, REGION / 2));
  } else {
    hal_buffer_t* memory = p->buffers[o->buffer].handle;
    uint64_t slot = (uint64_t)o->slot * REGION;
    HAL_ASSERT_OK(hal_command_buffer_fill_buffer(
        cb, memory, slot, REGION, o->pattern, o->pattern_length));
    HAL_ASSERT_OK(hal_command_buffer_execution_barrier(cb));
    HAL_ASSERT_OK(hal_command_buffer_copy_buffer(cb, memory, slot, region,
                                                 offset, REGION));
  }
  HAL_ASSERT_OK(hal_command_buffer_end(cb));
  return cb;
}

static hal_status_t submit_op(program_t* p, op_t* o) {
  hal_semaphore_t* wait_semaphores[MAX_WAITS];
  uint64_t wait_values[MAX_WAITS];
  for (uint32_t i = 0; i < o->wait_count; ++i) {
    wait_semaphores[i] = p->semaphores[o->waits[i].semaphore].handle;
    wait_values[i] = o->waits[i].value;
  }
  hal_semaphore_t* signal_semaphores[MAX_SIGNALS + 1];
  uint64_t signal_values[MAX_SIGNALS + 1];
  for (uint32_t i = 0; i < o->signal_count; ++i) {
    signal_semaphores[i] = p->semaphores[o->signals[i].semaphore].handle;
    signal_values[i] = o->signals[i].value;
  }
  signal_semaphores[o->signal_count] = o->done;
  signal_values[o->signal_count] = 1;
  hal_semaphore_list_t waits = {o->wait_count, wait_semaphores, wait_values};
  hal_semaphore_list_t signals = {o->signal_count + 1, signal_semaphores,
                                  signal_values};

  hal_device_t* device = p->devices[o->device];
  hal_buffer_t* region = p->device_buffers[o->device];
  uint64_t offset = (uint64_t)o->index * REGION;
  uint64_t source_offset = (uint64_t)o->source * REGION;
  uint32_t q = o->queue;
  switch (o->kind) {
    case OP_FILL:
      return hal_device_queue_fill(device, q, &waits, &signals, region, offset,
                                   REGION, o->pattern, o->pattern_length);
    case OP_SLOT_FILL:
      return hal_device_queue_fill(device, q, &waits, &signals, region,
                                   (uint64_t)(MAX_OPS + o->slot) * REGION,
                                   REGION, o->pattern, o->pattern_length);
    case OP_UPDATE:
      return hal_device_queue_update(device, q, &waits, &signals, o->data, 0,
                                     region, offset, REGION);
    case OP_COPY:
      return hal_device_queue_copy(device, q, &waits, &signals, region,
                                   source_offset, region, offset, REGION);
    case OP_BARRIER:
      return hal_device_queue_barrier(device, q, &waits, &signals);
    case OP_HOST_CALL:
      return hal_device_queue_host_call(device, q, &waits, &signals,
                                        host_call_body, o);
    case OP_FILE_READ:
      return hal_device_queue_read(device, q, &waits, &signals, p->read_file,
                                   offset, region, offset, REGION);
    case OP_FILE_WRITE:
      return hal_device_queue_write(device, q, &waits, &signals, region,
                                    source_offset, p->write_file, offset,
                                    REGION);
    case OP_ALLOCA: {
      model_buffer_t* buffer = &p->buffers[o->buffer];
      const hal_buffer_params_t params = {HAL_MEMORY_TYPE_DEVICE_LOCAL,
                                          HAL_BUFFER_USAGE_DEFAULT};
      return hal_device_queue_alloca(device, q, &waits, &signals, params,
                                     buffer->size, &buffer->handle);
    }
    case OP_DEALLOCA:
      return hal_device_queue_dealloca(device, q, &waits, &signals,
                                       p->buffers[o->buffer].handle);
    case OP_EXECUTE:
    case OP_ALLOCA_USE: {
      hal_command_buffer_t* cb = record_command_buffer(p, o);
      hal_status_t status =
          hal_device_queue_execute(device, q, &waits, &signals, 1, &cb);
      hal_command_buffer_release(cb);  // the submission holds it (Q3)
      return status;
    }
  }
  return HAL_OK;
}

// The bytes op |k| leaves in its region (or, for a slot fill, its slot)
// when it succeeds.
static void expected_region(const program_t* p, uint32_t k, uint8_t* out) {
  const op_t* o = &p->ops[k];
  switch (o->kind) {
    case OP_FILL:
    case OP_SLOT_FILL:
    case OP_ALLOCA_USE:
      for (int i = 0; i < REGION; ++i)
        out[i] = o->pattern[i % o->pattern_length];
      break;
    case OP_UPDATE:
      memcpy(out, o->data, REGION);
      break;
    case OP_EXECUTE:
      for (int i = 0; i < REGION / 2; ++i)
        out[i] = o->pattern[i % o->pattern_length];
      memcpy(out + REGION / 2, o->data, REGION / 2);
      break;
    case OP_COPY:
      // The source succeeded before it: the copy waits for its signal.
      expected_region(p, (uint32_t)o->source, out);
      break;
    case OP_FILE_READ:
      memcpy(out, p->read_bytes + (size_t)k * REGION, REGION);
      break;
    default:
      memset(out, SENTINEL, REGION);
  }
}

//===----------------------------------------------------------------------===//
// The model
//===----------------------------------------------------------------------===//

static bool is_ancestor(const op_t* o, uint32_t j) {
  return (o->ancestors[j / 64] >> (j % 64)) & 1;
}

// Ops whose relative order decides their outcomes: two of one alloca'd
// buffer (a use before or after the alloca, the dealloca before or after a
// use), or, of two big buffers of one device (only one fits), one's alloca
// and the other's alloca or dealloca.
static bool ops_race(const program_t* p, const op_t* a, const op_t* b) {
  if (a->buffer < 0 || b->buffer < 0)
    return false;
  if (a->buffer == b->buffer)
    return true;
  const model_buffer_t* x = &p->buffers[a->buffer];
  const model_buffer_t* y = &p->buffers[b->buffer];
  if (!x->big || !y->big || x->device != y->device)
    return false;
  return (a->kind == OP_ALLOCA &&
          (b->kind == OP_ALLOCA || b->kind == OP_DEALLOCA)) ||
         (b->kind == OP_ALLOCA && a->kind == OP_DEALLOCA);
}

static void decide(program_t* p, uint32_t k, outcome_t outcome,
                   const allowed_failures_t* failure) {
  op_t* o = &p->ops[k];
  o->outcome = outcome;
  o->decide_step = p->step;
  if (outcome == OUTCOME_FAILED)
    o->allowed = *failure;
  for (uint32_t i = 0; i < o->signal_count; ++i) {
    model_semaphore_t* s = &p->semaphores[o->signals[i].semaphore];
    if (outcome == OUTCOME_OPEN) {
      s->open = true;
      // Decided failed earlier in the step, then found to race: the
      // failure was one possible outcome of this op, not a fact.
      if (s->failed && s->failed_by == (int32_t)k)
        s->failed = false;
    } else if (s->failed) {
      // Sticky: the first failure stays (S2).
    } else if (outcome == OUTCOME_OK) {
      if (s->value < o->signals[i].value)
        s->value = o->signals[i].value;
    } else {
      s->failed = true;
      s->failed_by = (int32_t)k;
      s->failure = *failure;
      s->value_at_failure = s->value;
      s->failure_step = p->step;
    }
  }
}

static void make_open(program_t* p, uint32_t k) {
  op_t* o = &p->ops[k];
  decide(p, k, OUTCOME_OPEN, NULL);
  if (o->buffer >= 0)
    p->buffers[o->buffer].memory = MEMORY_OPEN;
}

static void fail_op(program_t* p, uint32_t k, hal_status_code_t code) {
  allowed_failures_t failure = {0};
  allow_failure(&failure, code, "");
  decide(p, k, OUTCOME_FAILED, &failure);
}

// Op |k|'s waits are all reached: what its issue does.
static void issue(program_t* p, uint32_t k) {
  op_t* o = &p->ops[k];
  o->issued = true;
  model_buffer_t* buffer = o->buffer >= 0 ? &p->buffers[o->buffer] : NULL;
  if (buffer && buffer->memory == MEMORY_OPEN) {
    make_open(p, k);
    return;
  }
  switch (o->kind) {
    case OP_HOST_CALL:
      if (o->host_call_fails) {
        char token[TOKEN_SIZE];
        snprintf(token, sizeof(token), "[host call %u]", k);
        allowed_failures_t failure = {0};
        allow_failure(&failure, HAL_STATUS_ABORTED, token);
        decide(p, k, OUTCOME_FAILED, &failure);
      } else {
        decide(p, k, OUTCOME_OK, NULL);
      }
      return;
    case OP_ALLOCA:
      if (buffer->big) {
        // Another big buffer of the device holds most of its memory.
        for (uint32_t j = 0; j < p->buffer_count; ++j) {
          const model_buffer_t* other = &p->buffers[j];
          if (other == buffer || !other->big || other->device != buffer->device)
            continue;
          if (other->memory == MEMORY_OPEN) {
            make_open(p, k);
            return;
          }
          if (other->memory == MEMORY_LIVE) {
            buffer->memory = MEMORY_NEVER;
            fail_op(p, k, HAL_STATUS_RESOURCE_EXHAUSTED);
            return;
          }
        }
      }
      buffer->memory = MEMORY_LIVE;
      decide(p, k, OUTCOME_OK, NULL);
      return;
    case OP_ALLOCA_USE:
      if (buffer->memory != MEMORY_LIVE)
        fail_op(p, k, HAL_STATUS_FAILED_PRECONDITION);
      else
        decide(p, k, OUTCOME_OK, NULL);
      return;
    case OP_DEALLOCA: {
      if (buffer->memory != MEMORY_LIVE) {
        fail_op(p, k, HAL_STATUS_FAILED_PRECONDITION);
        return;
      }
      // A use accepted but not issued cannot be ordered after the free:
      // the dealloca fails and the memory stays with the buffer.
      for (uint32_t j = 0; j < p->op_count; ++j) {
        const op_t* use = &p->ops[j];
        if (use->kind == OP_ALLOCA_USE && use->buffer == o->buffer &&
            use->submitted && !use->skipped &&
            use->outcome == OUTCOME_PENDING) {
          fail_op(p, k, HAL_STATUS_FAILED_PRECONDITION);
          return;
        }
      }
      buffer->memory = MEMORY_GONE;
      decide(p, k, OUTCOME_OK, NULL);
      return;
    }
    default:
      decide(p, k, OUTCOME_OK, NULL);
  }
}

// Host calls and file transfers (whose first step is a host call) watch
// every wait for a failure; other queue work learns of a failed wait that
// it had reached only at its issue.
static bool decided_at_once_by_late_failure(op_kind_t kind) {
  return kind == OP_HOST_CALL || kind == OP_FILE_READ || kind == OP_FILE_WRITE;
}

// Decides every pending op its waits decide, until nothing changes.
// Returns whether anything changed.
static bool settle_waits(program_t* p) {
  bool any_change = false;
  for (bool changed = true; changed;) {
    changed = false;
    for (uint32_t k = 0; k < p->op_count; ++k) {
      op_t* o = &p->ops[k];
      if (!o->submitted || o->skipped || o->outcome != OUTCOME_PENDING)
        continue;
      bool all_reached = true, any_open = false, any_failed = false;
      allowed_failures_t failed = {0}, late = {0};
      bool any_late = false;
      memset(o->ancestors, 0, sizeof(o->ancestors));
      for (uint32_t i = 0; i < o->wait_count; ++i) {
        const wait_t* w = &o->waits[i];
        const model_semaphore_t* s = &p->semaphores[w->semaphore];
        bool reached_before_failure = s->failed &&
                                      o->submit_step < s->failure_step &&
                                      w->value <= s->value_at_failure;
        if (reached_before_failure &&
            !decided_at_once_by_late_failure(o->kind)) {
          any_late = true;
          allow_failures_of(&late, &s->failure);
        } else if (s->failed) {
          any_failed = true;
          allow_failures_of(&failed, &s->failure);
        } else if (s->open) {
          any_open = true;
        } else if (s->value < w->value) {
          all_reached = false;
        }
        // What this step decided before it is ordered before it.
        if (s->producer >= 0) {
          const op_t* producer = &p->ops[s->producer];
          if (producer->decide_step == p->step &&
              producer->outcome != OUTCOME_PENDING) {
            o->ancestors[s->producer / 64] |= 1ull << (s->producer % 64);
            for (int x = 0; x < ANCESTOR_WORDS; ++x)
              o->ancestors[x] |= producer->ancestors[x];
          }
        }
      }
      o->has_late_failure = any_late;
      o->late_failure = late;
      if (any_failed || (all_reached && any_late)) {
        // A failed wait decides the op: any failed wait's failure may be
        // the one it reports, and an open wait may have failed too.
        allow_failures_of(&failed, &late);
        failed.any |= any_open;
        if (o->kind == OP_ALLOCA)
          p->buffers[o->buffer].memory = MEMORY_NEVER;
        decide(p, k, OUTCOME_FAILED, &failed);
      } else if (any_open) {
        // An open wait may have failed, which decides the op at once
        // whatever its other waits, or be reached: timing decides.
        make_open(p, k);
      } else if (all_reached) {
        issue(p, k);
      } else {
        continue;
      }
      changed = any_change = true;
    }
  }
  return any_change;
}

// Ops that race (ops_race) and that this step decided without an order
// between them (neither waits on the other), at least one by its issue:
// the model cannot tell which came first, so both are open, and so is what
// this step decided behind them.
static bool open_unordered_races(program_t* p) {
  bool any_change = false;
  for (bool changed = true; changed;) {
    changed = false;
    for (uint32_t a = 0; a < p->op_count; ++a) {
      op_t* x = &p->ops[a];
      if (x->buffer < 0 || x->decide_step != p->step ||
          x->outcome == OUTCOME_PENDING)
        continue;
      for (uint32_t b = 0; b < p->op_count; ++b) {
        op_t* y = &p->ops[b];
        if (b == a || y->buffer < 0 || y->decide_step != p->step ||
            y->outcome == OUTCOME_PENDING)
          continue;
        if (!ops_race(p, x, y) || (!x->issued && !y->issued))
          continue;
        if (is_ancestor(x, b) || is_ancestor(y, a))
          continue;
        if (x->issued && x->outcome != OUTCOME_OPEN) {
          make_open(p, a);
          changed = true;
        }
        if (y->issued && y->outcome != OUTCOME_OPEN) {
          make_open(p, b);
          changed = true;
        }
      }
    }
    for (uint32_t k = 0; k < p->op_count; ++k) {
      op_t* o = &p->ops[k];
      if (o->decide_step != p->step || o->outcome == OUTCOME_PENDING ||
          o->outcome == OUTCOME_OPEN)
        continue;
      for (uint32_t j = 0; j < p->op_count; ++j) {
        if (is_ancestor(o, j) && p->ops[j].outcome == OUTCOME_OPEN) {
          make_open(p, k);
          changed = true;
          break;
        }
      }
    }
    any_change |= changed;
  }
  return any_change;
}

// Everything the step's action decides.
static void settle(program_t* p) {
  for (bool changed = true; changed;) {
    changed = settle_waits(p);
    changed |= open_unordered_races(p);
  }
}

// The model of hal_semaphore_fail on semaphore |s|.
static void model_fail_semaphore(program_t* p, uint32_t s,
                                 hal_status_code_t code, const char* token) {
  model_semaphore_t* m = &p->semaphores[s];
  if (m->failed)
    return;
  m->failed = true;
  m->failed_by = -1;
  memset(&m->failure, 0, sizeof(m->failure));
  allow_failure(&m->failure, code, token);
  m->value_at_failure = m->value;
  m->failure_step = p->step;
}

//===----------------------------------------------------------------------===//
// Observation
//===----------------------------------------------------------------------===//

// Waits for op |k|'s done semaphore and checks its outcome against the
// model (any outcome when |any_outcome|).
static void check_decided_op(program_t* p, uint32_t k, bool any_outcome) {
  op_t* o = &p->ops[k];
  hal_status_t status = hal_semaphore_wait(
      o->done, 1,
      hal_make_timeout_ns(p->hung ? AFTER_HANG_TIMEOUT_NS : DECIDE_TIMEOUT_NS));
  if (hal_status_code(status) == HAL_STATUS_DEADLINE_EXCEEDED) {
    hal_status_free(status);
    p->hung = true;
    o->observed = OBSERVED_HUNG;
    snprintf(o->observed_text, sizeof(o->observed_text), "hung");
    violation(p, "op %u (%s dev%u q%u) was not decided in time", k,
              kOpKindNames[o->kind], o->device, o->queue);
    return;
  }
  o->observed = status ? OBSERVED_FAILED : OBSERVED_OK;
  describe_status(status, o->observed_text, sizeof(o->observed_text));
  if (!any_outcome && o->outcome == OUTCOME_OK && status) {
    violation(p, "op %u (%s dev%u q%u) should have succeeded: %s", k,
              kOpKindNames[o->kind], o->device, o->queue, o->observed_text);
  } else if (!any_outcome && o->outcome == OUTCOME_FAILED &&
             !failure_allowed(&o->allowed, hal_status_code(status),
                              status ? hal_status_message(status) : "")) {
    char allowed[512];
    format_allowed(&o->allowed, allowed, sizeof(allowed));
    violation(p, "op %u (%s dev%u q%u) should have failed with {%s}: %s", k,
              kOpKindNames[o->kind], o->device, o->queue, allowed,
              o->observed_text);
  }
  hal_status_free(status);
}

// An op the model keeps waiting must not be decided.
static void check_pending_op(program_t* p, uint32_t k) {
  op_t* o = &p->ops[k];
  uint64_t value = 0;
  hal_status_t status = hal_semaphore_query(o->done, &value);
  if (status || value != 0) {
    char text[512];
    describe_status(status, text, sizeof(text));
    violation(p,
              "op %u (%s dev%u q%u) was decided while the model has it "
              "waiting: %s",
              k, kOpKindNames[o->kind], o->device, o->queue, text);
    make_open(p, k);  // one report is enough
  }
  hal_status_free(status);
}

static void check_host_call(program_t* p, uint32_t k) {
  op_t* o = &p->ops[k];
  if (o->kind != OP_HOST_CALL || o->outcome == OUTCOME_OPEN)
    return;
  int calls = atomic_load(&o->calls);
  if (o->outcome == OUTCOME_PENDING) {
    if (calls)
      violation(p,
                "host call %u was called (%s) while the model has it "
                "waiting",
                k, hal_status_code_string(o->call_code));
    return;
  }
  if (calls != 1) {
    violation(p, "host call %u was called %d times once decided", k, calls);
    return;
  }
  // It ran (OK) if the model says so, or if its failure is its own.
  char own[TOKEN_SIZE];
  snprintf(own, sizeof(own), "[host call %u]", k);
  bool ran = o->outcome == OUTCOME_OK ||
             (o->host_call_fails && !o->allowed.any && o->allowed.count == 1 &&
              strcmp(o->allowed.token[0], own) == 0);
  if (ran && o->call_code != HAL_STATUS_OK) {
    violation(p, "host call %u was called with %s (%s), expected OK", k,
              hal_status_code_string(o->call_code), o->call_message);
  } else if (!ran &&
             !failure_allowed(&o->allowed, o->call_code, o->call_message)) {
    char allowed[512];
    format_allowed(&o->allowed, allowed, sizeof(allowed));
    violation(p, "host call %u was called with %s (%s), expected {%s}", k,
              hal_status_code_string(o->call_code), o->call_message, allowed);
  }
}

// Every semaphore the test holds: the model's value, or an allowed failure.
static void check_semaphores(program_t* p) {
  for (uint32_t s = 0; s < p->semaphore_count; ++s) {
    model_semaphore_t* m = &p->semaphores[s];
    if (m->dropped || m->open)
      continue;
    uint64_t value = 0;
    hal_status_t status = hal_semaphore_query(m->handle, &value);
    char text[512];
    describe_status(status, text, sizeof(text));
    if (m->failed &&
        !failure_allowed(&m->failure, hal_status_code(status),
                         status ? hal_status_message(status) : "")) {
      char allowed[512];
      format_allowed(&m->failure, allowed, sizeof(allowed));
      violation(p,
                "semaphore s%u (signaled by op %d) should have failed with "
                "{%s}: %s (value %" PRIu64 ")",
                s, m->producer, allowed, text, value);
      m->open = true;
    } else if (!m->failed && status) {
      violation(p, "semaphore s%u (signaled by op %d) failed: %s", s,
                m->producer, text);
      m->open = true;
    } else if (!m->failed && value != m->value) {
      violation(p,
                "semaphore s%u (signaled by op %d) is at %" PRIu64
                ", the model at %" PRIu64,
                s, m->producer, value, m->value);
      m->open = true;
    }
    hal_status_free(status);
  }
}

// After each action: waits for what the model decided, checks the rest.
static void observe(program_t* p) {
  for (uint32_t k = 0; k < p->op_count; ++k) {
    op_t* o = &p->ops[k];
    if (o->submitted && !o->skipped && o->observed == OBSERVED_NOT_YET &&
        (o->outcome == OUTCOME_OK || o->outcome == OUTCOME_FAILED))
      check_decided_op(p, k, false);
  }
  for (uint32_t k = 0; k < p->op_count; ++k) {
    op_t* o = &p->ops[k];
    if (!o->submitted || o->skipped)
      continue;
    if (o->outcome == OUTCOME_PENDING)
      check_pending_op(p, k);
    check_host_call(p, k);
  }
  check_semaphores(p);
}

//===----------------------------------------------------------------------===//
// The background thread
//===----------------------------------------------------------------------===//

static hal_status_t background_call_body(void* user_data, hal_status_t status) {
  (void)user_data;
  (void)status;
  return HAL_OK;
}

static void* background_main(void* arg) {
  background_t* bg = arg;
  uint64_t signaled[2] = {0, 0};
  while (!atomic_load(&bg->stop) && bg->count < BACKGROUND_MAX_OPS &&
         !bg->error[0]) {
    uint32_t g = cts_random_below(&bg->random, 2);
    uint64_t wait_value = signaled[g] + 1 + cts_random_below(&bg->random, 3);
    hal_semaphore_t* done = NULL;
    hal_status_t status =
        hal_semaphore_create_host(hal_allocator_system(), 0, &done);
    uint64_t one = 1;
    hal_semaphore_list_t waits = {1, &bg->gates[g], &wait_value};
    hal_semaphore_list_t signals = {1, &done, &one};
    uint32_t queue = cts_random_below(&bg->random, bg->queue_count);
    bool host_call = cts_random_below(&bg->random, 2);
    if (!status && host_call) {
      status = hal_device_queue_host_call(bg->device, queue, &waits, &signals,
                                          background_call_body, NULL);
    } else if (!status) {
      uint32_t pattern = (uint32_t)cts_random_next(&bg->random);
      uint64_t slot = MAX_OPS + SHARED_SLOTS + queue % BACKGROUND_SLOTS;
      status =
          hal_device_queue_fill(bg->device, queue, &waits, &signals, bg->buffer,
                                slot * REGION, REGION, &pattern, 4);
    }
    if (status) {
      hal_status_format(status, bg->error, sizeof(bg->error));
      hal_status_free(status);
      hal_semaphore_release(done);
      break;
    }
    bg->done[bg->count] = done;
    bg->host_call[bg->count] = host_call;
    ++bg->count;
    if (cts_random_below(&bg->random, 2)) {
      signaled[g] += 1 + cts_random_below(&bg->random, 2);
      status = hal_semaphore_signal(bg->gates[g], signaled[g]);
      if (status) {
        hal_status_format(status, bg->error, sizeof(bg->error));
        hal_status_free(status);
        break;
      }
    }
    usleep(cts_random_below(&bg->random, 300));
  }
  return NULL;
}

static void background_start(program_t* p) {
  background_t* bg = &p->background;
  bg->device = p->devices[0];
  bg->buffer = p->device_buffers[0];
  bg->queue_count = p->queue_counts[0];
  bg->random = cts_random_make(cts_random_next(&p->random));
  for (int g = 0; g < 2; ++g)
    bg->gates[g] = cts_create_semaphore(NULL, 0);
  atomic_store(&bg->stop, false);
  assert_int_equal(pthread_create(&bg->thread, NULL, background_main, bg), 0);
}

// Stops the thread, opens both gates past anything it waits for, and
// checks that each of its ops succeeded.
static void background_finish(program_t* p) {
  background_t* bg = &p->background;
  atomic_store(&bg->stop, true);
  pthread_join(bg->thread, NULL);
  if (bg->error[0])
    violation(p, "the background thread's call was refused: %s", bg->error);
  for (int g = 0; g < 2; ++g)
    HAL_ASSERT_OK(hal_semaphore_signal(bg->gates[g], 1ull << 40));
  for (uint32_t i = 0; i < bg->count; ++i) {
    hal_status_t status =
        hal_semaphore_wait(bg->done[i], 1,
                           hal_make_timeout_ns(p->hung ? AFTER_HANG_TIMEOUT_NS
                                                       : DECIDE_TIMEOUT_NS));
    if (status) {
      char text[512];
      describe_status(status, text, sizeof(text));
      violation(p, "background %s %u failed: %s",
                bg->host_call[i] ? "host call" : "fill", i, text);
      p->hung |= hal_status_code(status) == HAL_STATUS_DEADLINE_EXCEEDED;
    }
    hal_status_free(status);
    hal_semaphore_release(bg->done[i]);
  }
  for (int g = 0; g < 2; ++g)
    hal_semaphore_release(bg->gates[g]);
}

//===----------------------------------------------------------------------===//
// Actions
//===----------------------------------------------------------------------===//

// Submits op |k| (unless what it needs is gone) and checks the call.
static void action_submit(program_t* p, uint32_t k) {
  op_t* o = &p->ops[k];
  if (!p->device_alive[o->device] || o->skipped) {
    o->skipped = true;
    return;
  }
  o->submit_seq = ++p->next_seq;
  if (o->kind == OP_ALLOCA_USE || o->kind == OP_DEALLOCA) {
    // The buffer handle comes from its alloca's call.
    const op_t* alloca = &p->ops[p->buffers[o->buffer].alloca_op];
    if (!alloca->submitted || alloca->skipped) {
      o->skipped = true;
      return;
    }
  }
  hal_status_t status = submit_op(p, o);
  if (status) {
    char text[512];
    describe_status(status, text, sizeof(text));
    violation(p, "op %u (%s dev%u q%u) was refused: %s", k,
              kOpKindNames[o->kind], o->device, o->queue, text);
    hal_status_free(status);
    o->skipped = true;
    return;
  }
  o->submitted = true;
  o->submit_step = p->step;
  if (o->kind == OP_DEALLOCA) {
    // A second dealloca of the buffer is refused at the call, and moves
    // no semaphore.
    hal_semaphore_t* signal = cts_create_semaphore(NULL, 0);
    uint64_t one = 1;
    hal_semaphore_list_t waits = hal_semaphore_list_empty();
    hal_semaphore_list_t signals = {1, &signal, &one};
    hal_status_t second =
        hal_device_queue_dealloca(p->devices[o->device], o->queue, &waits,
                                  &signals, p->buffers[o->buffer].handle);
    if (hal_status_code(second) != HAL_STATUS_FAILED_PRECONDITION) {
      violation(p,
                "a second dealloca of buffer %d returned %s, expected "
                "FAILED_PRECONDITION",
                o->buffer, hal_status_code_string(hal_status_code(second)));
    }
    hal_status_free(second);
    uint64_t value = 0;
    hal_status_t query = hal_semaphore_query(signal, &value);
    if (query || value)
      violation(p, "a refused second dealloca moved its signal");
    hal_status_free(query);
    hal_semaphore_release(signal);
  }
}

static void action_signal_host(program_t* p, uint32_t j) {
  p->host_values[j] += 1 + pick(p, 3);
  model_semaphore_t* m = &p->semaphores[p->host_semaphores[j]];
  hal_status_t status = hal_semaphore_signal(m->handle, p->host_values[j]);
  if (m->failed && !status) {
    violation(p, "signaling the failed semaphore s%u returned OK",
              p->host_semaphores[j]);
  } else if (!m->failed && status) {
    char text[512];
    describe_status(status, text, sizeof(text));
    violation(p, "signaling s%u to %" PRIu64 " failed: %s",
              p->host_semaphores[j], p->host_values[j], text);
  }
  if (!m->failed)
    m->value = p->host_values[j];
  hal_status_free(status);
}

// Fails a semaphore the test still holds with an injected status whose
// message carries a token of its own.
static void action_inject_failure(program_t* p) {
  uint32_t s = pick(p, p->semaphore_count);
  model_semaphore_t* m = &p->semaphores[s];
  if (m->dropped || m->open)
    return;
  static const hal_status_code_t kCodes[] = {
      HAL_STATUS_INTERNAL, HAL_STATUS_DATA_LOSS, HAL_STATUS_ABORTED,
      HAL_STATUS_UNAVAILABLE};
  hal_status_code_t code = kCodes[pick(p, HAL_ARRAYSIZE(kCodes))];
  char token[TOKEN_SIZE];
  snprintf(token, sizeof(token), "[fault %u]", p->fault_count++);
  hal_semaphore_fail(m->handle, hal_make_status(code, "injected %s", token));
  model_fail_semaphore(p, s, code, token);
}

// Releases the test's reference to an op's semaphore once its producer and
// every op waiting on it were submitted (or never will be): they hold it.
static void action_drop_reference(program_t* p) {
  uint32_t s = pick(p, p->semaphore_count);
  model_semaphore_t* m = &p->semaphores[s];
  if (m->producer < 0 || m->dropped || !p->ops[m->producer].submitted)
    return;
  for (uint32_t k = 0; k < p->op_count; ++k) {
    const op_t* o = &p->ops[k];
    for (uint32_t i = 0; i < o->wait_count; ++i) {
      if (o->waits[i].semaphore == s && !o->submitted && !o->skipped)
        return;
    }
  }
  m->dropped = true;
  hal_semaphore_release(m->handle);
}

// The model of a device release: everything of |device| still waiting is
// decided before the release returns, with CANCELLED or the failure of a
// wait that failed (Q4; a parked op that waits on another one the release
// cancels may report that one's failure).
static void release_device(program_t* p, uint32_t device) {
  hal_device_release(p->devices[device]);
  p->device_alive[device] = false;
  allowed_failures_t cancelled = {0};
  allow_failure(&cancelled, HAL_STATUS_CANCELLED, "");
  for (uint32_t k = 0; k < p->op_count; ++k) {
    const op_t* o = &p->ops[k];
    if (o->submitted && !o->skipped && o->outcome == OUTCOME_PENDING &&
        o->has_late_failure)
      allow_failures_of(&cancelled, &o->late_failure);
  }
  for (uint32_t k = 0; k < p->op_count; ++k) {
    op_t* o = &p->ops[k];
    if (o->device != device)
      continue;
    if (!o->submitted) {
      o->skipped = true;
      continue;
    }
    if (o->skipped)
      continue;
    bool undecided_in_model =
        o->outcome == OUTCOME_PENDING ||
        (o->outcome == OUTCOME_OPEN && o->observed == OBSERVED_NOT_YET);
    if (undecided_in_model) {
      uint64_t value = 0;
      hal_status_t status = hal_semaphore_query(o->done, &value);
      if (!status && value == 0)
        violation(p,
                  "op %u (%s dev%u q%u) was still undecided when "
                  "hal_device_release returned",
                  k, kOpKindNames[o->kind], device, o->queue);
      hal_status_free(status);
    }
    if (o->outcome == OUTCOME_PENDING)
      decide(p, k, OUTCOME_FAILED, &cancelled);
  }
}

// A device released part-way. In flight: a host semaphore is signaled
// right before, so what the signal releases on that device may have run
// or been cancelled (open).
static void action_release_mid_run(program_t* p, uint32_t device,
                                   bool in_flight) {
  p->released_mid_run = true;
  if (in_flight) {
    uint32_t j = pick(p, HOST_SEMAPHORES);
    action_signal_host(p, j);
    settle(p);
    for (uint32_t k = 0; k < p->op_count; ++k) {
      op_t* o = &p->ops[k];
      if (o->submitted && o->device == device && o->decide_step == p->step &&
          o->outcome != OUTCOME_PENDING)
        make_open(p, k);
    }
    settle(p);  // what waits on them, on the other device, is open too
  } else {
    settle(p);
    observe(p);
  }
  release_device(p, device);
  settle(p);
  observe(p);
}

//===----------------------------------------------------------------------===//
// The end of a program
//===----------------------------------------------------------------------===//

static void check_region(program_t* p, uint32_t k, const uint8_t* actual,
                         const char* where) {
  const op_t* o = &p->ops[k];
  bool succeeded = o->observed == OBSERVED_OK &&
                   (o->outcome != OUTCOME_OPEN || o->open_ok_before_read);
  if (succeeded) {
    uint8_t expected[REGION];
    expected_region(p, o->kind == OP_FILE_WRITE ? (uint32_t)o->source : k,
                    expected);
    for (int i = 0; i < REGION; ++i) {
      if (actual[i] != expected[i]) {
        violation(p,
                  "op %u (%s dev%u) succeeded but byte %d of its %s is "
                  "0x%02x, expected 0x%02x",
                  k, kOpKindNames[o->kind], o->device, i, where, actual[i],
                  expected[i]);
        return;
      }
    }
  } else if (o->observed == OBSERVED_FAILED && o->outcome != OUTCOME_OPEN) {
    // Failed before it started (a failed wait, a refusal at its issue, a
    // cancellation while it waited). An open op may have failed part-way:
    // a release that met a transfer in flight cancels its last step after
    // its copies wrote their bytes.
    for (int i = 0; i < REGION; ++i) {
      if (actual[i] != SENTINEL) {
        violation(p,
                  "op %u (%s dev%u) failed but wrote byte %d of its %s "
                  "(0x%02x)",
                  k, kOpKindNames[o->kind], o->device, i, where, actual[i]);
        return;
      }
    }
  }
}

// A shared slot holds the fill issued last: the latest step, and in one
// step the latest submission (one signal releases them in order).
static void check_shared_slots(program_t* p, uint32_t device,
                               const uint8_t* bytes) {
  for (uint32_t slot = 0; slot < SHARED_SLOTS; ++slot) {
    int32_t last = -1;
    bool open = false;
    for (uint32_t k = 0; k < p->op_count; ++k) {
      const op_t* o = &p->ops[k];
      if (o->kind != OP_SLOT_FILL || o->device != device || o->slot != slot ||
          !o->submitted || o->skipped)
        continue;
      if (o->outcome == OUTCOME_OPEN) {
        open |= o->observed == OBSERVED_OK;
        continue;
      }
      if (o->observed != OBSERVED_OK)
        continue;
      const op_t* best = last >= 0 ? &p->ops[last] : NULL;
      if (!best || o->decide_step > best->decide_step ||
          (o->decide_step == best->decide_step &&
           o->submit_seq > best->submit_seq))
        last = (int32_t)k;
    }
    if (last < 0 || open)
      continue;
    uint8_t expected[REGION];
    expected_region(p, (uint32_t)last, expected);
    const uint8_t* actual = bytes + (size_t)(MAX_OPS + slot) * REGION;
    if (memcmp(actual, expected, REGION) != 0) {
      int32_t holder = -1;
      for (uint32_t k = 0; k < p->op_count; ++k) {
        const op_t* o = &p->ops[k];
        if (o->kind != OP_SLOT_FILL || o->device != device || o->slot != slot)
          continue;
        uint8_t theirs[REGION];
        expected_region(p, k, theirs);
        if (memcmp(actual, theirs, REGION) == 0)
          holder = (int32_t)k;
      }
      violation(p,
                "shared slot %u of dev%u holds op %d's fill, expected op "
                "%d's (decided at step %u, submitted #%u): out of queue order",
                slot, device, holder, last, p->ops[last].decide_step,
                p->ops[last].submit_seq);
    }
  }
}

// Host calls of one device waiting on one host semaphore alone, both
// waiting before the signal that released them both, ran in submission
// order (Q2).
static void check_host_call_order(program_t* p) {
  for (uint32_t a = 0; a < p->op_count; ++a) {
    const op_t* x = &p->ops[a];
    if (x->kind != OP_HOST_CALL || !x->one_host_wait || !x->submitted ||
        x->skipped || x->outcome != OUTCOME_OK ||
        x->submit_step >= x->decide_step)
      continue;
    for (uint32_t b = 0; b < p->op_count; ++b) {
      const op_t* y = &p->ops[b];
      if (b == a || y->kind != OP_HOST_CALL || !y->one_host_wait ||
          !y->submitted || y->skipped || y->outcome != OUTCOME_OK ||
          y->device != x->device ||
          y->waits[0].semaphore != x->waits[0].semaphore ||
          y->decide_step != x->decide_step || y->submit_seq <= x->submit_seq ||
          y->submit_step >= y->decide_step)
        continue;
      int x_order = atomic_load(&x->run_order);
      int y_order = atomic_load(&y->run_order);
      if (x_order > y_order)
        violation(p,
                  "host call %u (submitted #%u) ran after host call %u "
                  "(submitted #%u), both released by one signal",
                  a, x->submit_seq, b, y->submit_seq);
    }
  }
}

// The last steps: the background thread stops, the host semaphores are
// signaled high (each in a step of its own), failed, or left alone; the
// bytes are read; the devices are released; then the checks of the end.
static void finish_program(program_t* p) {
  if (p->options.background)
    background_finish(p);
  uint32_t final_mode = pick(p, 3);
  for (uint32_t j = 0; j < HOST_SEMAPHORES; ++j) {
    ++p->step;
    model_semaphore_t* m = &p->semaphores[p->host_semaphores[j]];
    if (final_mode == 0) {
      // Everything not waiting on something that never comes runs.
      hal_status_ignore(hal_semaphore_signal(m->handle, 1000));
      if (!m->failed)
        m->value = 1000;
    } else if (final_mode == 1) {
      char token[TOKEN_SIZE];
      snprintf(token, sizeof(token), "[final %u]", j);
      hal_semaphore_fail(
          m->handle,
          hal_make_status(HAL_STATUS_INTERNAL, "failed at the end %s", token));
      model_fail_semaphore(p, p->host_semaphores[j], HAL_STATUS_INTERNAL,
                           token);
    }
    settle(p);
    observe(p);
  }

  // An open op may still be running when the model has nothing left to
  // decide: its device writes would race the read below (the test's race,
  // not the driver's, and ThreadSanitizer sees the virtual GPU's). So the
  // bytes are read once each open op has ended, or, for one that waits on
  // what never comes (it writes nothing), once a shared bound has passed.
  hal_time_t open_deadline = hal_time_now() + OPEN_SETTLE_TIMEOUT_NS;
  for (uint32_t k = 0; k < p->op_count; ++k) {
    const op_t* o = &p->ops[k];
    if (o->outcome == OUTCOME_OPEN && o->submitted && !o->skipped)
      hal_status_free(
          hal_semaphore_wait(o->done, 1, hal_make_deadline(open_deadline)));
  }

  // Open ops already decided OK before the read: their bytes are checked.
  for (uint32_t k = 0; k < p->op_count; ++k) {
    op_t* o = &p->ops[k];
    if (o->outcome != OUTCOME_OPEN || !o->submitted || o->skipped)
      continue;
    uint64_t value = 0;
    hal_status_t status = hal_semaphore_query(o->done, &value);
    o->open_ok_before_read = !status && value == 1;
    hal_status_free(status);
  }
  uint8_t* bytes[2] = {NULL, NULL};
  for (uint32_t d = 0; d < p->options.device_count; ++d) {
    bytes[d] = malloc(DEVICE_BUFFER_SIZE);
    assert_non_null(bytes[d]);
    hal_status_t status =
        hal_buffer_read(p->device_buffers[d], 0, bytes[d], DEVICE_BUFFER_SIZE);
    if (status) {
      char text[512];
      describe_status(status, text, sizeof(text));
      if (p->device_alive[d])
        violation(p, "reading dev%u's buffer failed: %s", d, text);
      free(bytes[d]);
      bytes[d] = NULL;
    }
    hal_status_free(status);
  }

  // The release decides everything still waiting.
  for (uint32_t d = 0; d < p->options.device_count; ++d) {
    if (!p->device_alive[d])
      continue;
    ++p->step;
    release_device(p, d);
    settle(p);
    observe(p);
  }

  for (uint32_t k = 0; k < p->op_count; ++k) {
    op_t* o = &p->ops[k];
    if (!o->submitted || o->skipped)
      continue;
    if (o->observed == OBSERVED_NOT_YET)
      check_decided_op(p, k, true);
    int calls = atomic_load(&o->calls);
    if (o->kind == OP_HOST_CALL && calls != 1)
      violation(p, "host call %u was called %d times", k, calls);
  }
  for (uint32_t k = 0; k < p->op_count; ++k) {
    const op_t* o = &p->ops[k];
    if (!o->submitted || o->skipped)
      continue;
    if (op_writes_region(o->kind) && bytes[o->device])
      check_region(p, k, bytes[o->device] + (size_t)k * REGION,
                   "device region");
    if (o->kind == OP_FILE_WRITE)
      check_region(p, k, p->written_bytes + (size_t)k * REGION, "file range");
  }
  for (uint32_t d = 0; d < p->options.device_count; ++d) {
    if (bytes[d])
      check_shared_slots(p, d, bytes[d]);
    free(bytes[d]);
  }
  check_host_call_order(p);
}

//===----------------------------------------------------------------------===//
// One program
//===----------------------------------------------------------------------===//

static void setup_program(program_t* p) {
  for (uint32_t d = 0; d < p->options.device_count; ++d) {
    p->devices[d] = cts_create_device(d);
    p->device_alive[d] = true;
    hal_device_properties_t properties;
    HAL_ASSERT_OK(hal_device_query_properties(p->devices[d], &properties));
    p->queue_counts[d] = properties.queue_count;
    // Big allocas only where two of them cannot fit: a small device.
    if (d == 0 && properties.total_memory &&
        properties.total_memory <= (256ull << 20))
      p->big_alloca_size = properties.total_memory / 8 * 5;
    p->device_buffers[d] = cts_allocate_buffer(
        p->devices[d], HAL_MEMORY_TYPE_DEVICE_LOCAL, DEVICE_BUFFER_SIZE);
    uint8_t* sentinel = malloc(DEVICE_BUFFER_SIZE);
    assert_non_null(sentinel);
    memset(sentinel, SENTINEL, DEVICE_BUFFER_SIZE);
    HAL_ASSERT_OK(hal_buffer_write(p->device_buffers[d], 0, sentinel,
                                   DEVICE_BUFFER_SIZE));
    free(sentinel);
  }
  p->read_bytes = malloc(FILE_SIZE);
  p->written_bytes = malloc(FILE_SIZE);
  assert_non_null(p->read_bytes);
  assert_non_null(p->written_bytes);
  for (size_t i = 0; i < FILE_SIZE; ++i)
    p->read_bytes[i] = (uint8_t)cts_random_next(&p->random);
  memset(p->written_bytes, SENTINEL, FILE_SIZE);
  // Reads come from a descriptor (pread) or from memory (memcpy); writes go
  // to memory, which the end reads directly.
  p->read_from_descriptor = pick(p, 2);
  if (p->read_from_descriptor) {
    FILE* file = tmpfile();
    assert_non_null(file);
    assert_int_equal(fwrite(p->read_bytes, 1, FILE_SIZE, file), FILE_SIZE);
    assert_int_equal(fflush(file), 0);
    HAL_ASSERT_OK(
        hal_file_from_fd(fileno(file), HAL_FILE_ACCESS_READ, &p->read_file));
    fclose(file);  // the file keeps a duplicate
  } else {
    HAL_ASSERT_OK(hal_file_from_memory(p->read_bytes, FILE_SIZE,
                                       HAL_FILE_ACCESS_READ, &p->read_file));
  }
  HAL_ASSERT_OK(hal_file_from_memory(p->written_bytes, FILE_SIZE,
                                     HAL_FILE_ACCESS_WRITE, &p->write_file));
  for (uint32_t j = 0; j < HOST_SEMAPHORES; ++j)
    p->host_semaphores[j] = add_semaphore(p, -1, 0, -1);
}

static void teardown_program(program_t* p) {
  for (uint32_t d = 0; d < p->options.device_count; ++d)
    hal_buffer_release(p->device_buffers[d]);
  for (uint32_t b = 0; b < p->buffer_count; ++b) {
    if (p->buffers[b].handle)  // NULL: its alloca was never submitted
      hal_buffer_release(p->buffers[b].handle);
  }
  for (uint32_t s = 0; s < p->semaphore_count; ++s) {
    if (!p->semaphores[s].dropped)
      hal_semaphore_release(p->semaphores[s].handle);
  }
  for (uint32_t k = 0; k < p->op_count; ++k)
    hal_semaphore_release(p->ops[k].done);
  hal_file_release(p->read_file);
  hal_file_release(p->write_file);
  // Transfers borrow the memory files until the deferred releases ran.
  hal_resource_wait_deferred();
  free(p->read_bytes);
  free(p->written_bytes);
}

// Runs program |index| of |case_name| (generator stream |stream|) and
// fails the case, naming the seed, the program and the first violation,
// if the driver broke the model.
static void run_program(const char* case_name, uint64_t stream, uint32_t index,
                        program_options_t options) {
  program_t* p = calloc(1, sizeof(*p));
  assert_non_null(p);
  p->case_name = case_name;
  p->index = index;
  p->options = options;
  p->random = cts_random_make(stream);
  setup_program(p);
  generate_ops(p, OPS_PER_PROGRAM);
  generate_waits(p);
  if (options.background)
    background_start(p);

  // Submission order: the ops' own, each moved a few places (now and then
  // up to a dozen), so that many waits come before their signals (S4).
  uint32_t order[MAX_OPS];
  for (uint32_t i = 0; i < p->op_count; ++i)
    order[i] = i;
  for (uint32_t i = 0; i < p->op_count; ++i) {
    uint32_t j = i + pick(p, pick(p, 3) ? 3 : 12);
    if (j >= p->op_count)
      j = p->op_count - 1;
    uint32_t t = order[i];
    order[i] = order[j];
    order[j] = t;
  }
  // One program in three releases a device part-way (not with the
  // background thread, which submits to device 0 until it stops): with
  // one device, in the second half of the submissions, since every op
  // after it is skipped; with two, anywhere.
  int64_t release_at = -1;
  if (pick(p, 3) == 0) {
    uint32_t half = options.device_count > 1 ? 0 : p->op_count / 2;
    release_at = half + pick(p, p->op_count - half + 1);
  }
  uint32_t release_device_index = pick(p, options.device_count);
  bool release_in_flight = pick(p, 2);

  for (uint32_t next = 0; next < p->op_count;) {
    ++p->step;
    if (!p->released_mid_run && !options.background && next == release_at) {
      action_release_mid_run(p, release_device_index, release_in_flight);
      continue;
    }
    uint32_t r = pick(p, 100);
    if (r < 60)
      action_submit(p, order[next++]);
    else if (r < 85)
      action_signal_host(p, pick(p, HOST_SEMAPHORES));
    else if (r < 95)
      action_inject_failure(p);
    else
      action_drop_reference(p);
    settle(p);
    observe(p);
  }
  finish_program(p);

  uint32_t ok = 0, failed = 0, open = 0, not_submitted = 0;
  for (uint32_t k = 0; k < p->op_count; ++k) {
    const op_t* o = &p->ops[k];
    if (!o->submitted || o->skipped)
      ++not_submitted;
    else if (o->outcome == OUTCOME_OPEN)
      ++open;
    else if (o->observed == OBSERVED_OK)
      ++ok;
    else
      ++failed;
  }
  printf(
      "[ MODEL  ] %s program %u: %u ok, %u failed, %u open, %u not "
      "submitted; reads from %s%s; %u background ops\n",
      case_name, index, ok, failed, open, not_submitted,
      p->read_from_descriptor ? "a descriptor" : "memory",
      p->released_mid_run ? ", a device released part-way" : "",
      p->background.count);
  fflush(stdout);

  uint32_t violations = p->violation_count;
  if (violations)
    print_ops(p);
  char first[1024];
  snprintf(first, sizeof(first), "%s", p->first_violation);
  teardown_program(p);
  free(p);
  if (violations) {
    fail_msg("HAL_TEST_SEED=%" PRIu64
             " %s program %u: %u violation(s), the "
             "first: %s",
             cts_context.seed, case_name, index, violations, first);
  }
}

static void run_programs(const char* case_name, uint64_t case_stream,
                         uint32_t default_count, program_options_t options) {
  uint32_t count = cts_iterations(default_count);
  for (uint32_t i = 0; i < count; ++i)
    run_program(case_name, case_stream * 1000003u + i, i, options);
}

//===----------------------------------------------------------------------===//
// Cases
//===----------------------------------------------------------------------===//

// Programs on device 0.
CTS_CASE(Model_RandomPrograms) {
  (void)state;
  run_programs("Model_RandomPrograms", 1, 72,
               (program_options_t){.device_count = 1});
}

// Programs over two devices: ops wait on the other device's semaphores,
// and a release of one device fails what waits on it from the other.
CTS_CASE(Model_RandomProgramsOnTwoDevices) {
  (void)state;
  if (cts_context.device_count < 2) {
    printf("[  SKIP    ] the driver has one device\n");
    skip();
  }
  run_programs("Model_RandomProgramsOnTwoDevices", 2, 36,
               (program_options_t){.device_count = 2});
}

// Programs beside a thread that keeps submitting to device 0 and
// signaling what those submissions wait on.
CTS_CASE(Model_RandomProgramsBesideABackgroundSignaler) {
  (void)state;
  run_programs("Model_RandomProgramsBesideABackgroundSignaler", 3, 24,
               (program_options_t){.device_count = 1, .background = true});
}

// The test list: CASE binds this program's fixture.
#define CASE(name) cmocka_unit_test(name)

int main(void) {
  const struct CMUnitTest tests[] = {
      CASE(Model_RandomPrograms),
      CASE(Model_RandomProgramsOnTwoDevices),
      CASE(Model_RandomProgramsBesideABackgroundSignaler),
  };
  return cts_main("queue_model", tests, HAL_ARRAYSIZE(tests));
}
