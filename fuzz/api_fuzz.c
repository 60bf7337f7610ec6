// Copyright 2026 The HAL Authors.
//
// hal-api-fuzz: a libFuzzer target over the public API (hal/api.h) on a
// virtual-GPU device. docs/fuzzing.md says how to build and run it.
//
// An input is a program for a small interpreter. Each step reads an opcode
// byte and the op's arguments from the input (zeros once it runs out) and
// makes one public call, or a short fixed sequence of them, with valid or
// invalid arguments on a table of live objects: semaphores (device and
// host), buffers, command buffers, executables, timepoint handles and
// mappings. The interpreter keeps a model of what each object must be and
// checks every result against it:
//
//  - every status-returning call returns a status; where the documented
//    rules decide the outcome (argument validation, the command-buffer
//    state machine, one-shot submission, S1 range checks, waits on values
//    already reached) the result and its code must match;
//  - after each step: a semaphore's value never decreases, a failed one
//    stays failed with its first failure's code (S1, S2), command buffers
//    are in the state and mode the model says, with the op count it
//    recorded; buffers keep their size, type and usage;
//  - bytes read back (hal_buffer_read, a mapping) equal what the host wrote
//    while no submitted work may write the buffer; a fill, update or copy
//    whose completion was observed through a private semaphore left exactly
//    its bytes;
//  - callbacks run exactly once (T1), and with CANCELLED when a cancel says
//    it removed them (T5);
//  - at the end of the input every object is released, parked work drained
//    (held semaphores are failed, then the device's references must drop
//    within a bound), device memory returns to its baseline and every host
//    allocation of the iteration is freed, so LeakSanitizer sees a leak as a
//    leak and a hang fails the input instead of stalling the run.
//
// A violated check prints what it expected and aborts: libFuzzer saves the
// input as a crash. HAL_FUZZ_TRACE=1 prints every call and its status.
//
// The registry, the driver (HAL_FUZZ_DRIVER, default cuda_stream) and one
// device are made once per process (LLVMFuzzerInitialize); every other
// object lives for one input. Waits use immediate or millisecond timeouts
// only, and HAL_SYNC_MAX_WAIT_MS bounds every host wait the library makes.

#include <inttypes.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hal/api.h"
#include "kernel_images.h"  // the kernels of tools/kernels, as image bytes

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#include <sanitizer/allocator_interface.h>
#define FUZZ_HAVE_MALLOC_HOOKS 1
#endif
#endif

//===----------------------------------------------------------------------===//
// Limits of one input
//===----------------------------------------------------------------------===//

#define FUZZ_MAX_STEPS 256
#define FUZZ_SEMAPHORE_SLOTS 6
#define FUZZ_BUFFER_SLOTS 6
#define FUZZ_COMMAND_BUFFER_SLOTS 4
#define FUZZ_EXECUTABLE_SLOTS 2
#define FUZZ_TIMEPOINT_SLOTS 6
#define FUZZ_MAPPING_SLOTS 4
// Semaphores a release could not drop yet (see fuzz_semaphore_drop): at most
// one per step.
#define FUZZ_MAX_KEPT FUZZ_MAX_STEPS
#define FUZZ_MAX_CALLBACKS 64
// Buffers a recording writes, for marking them dirty at submit.
#define FUZZ_MAX_TARGETS 16
// Largest valid buffer: room for an update over HAL_MAX_UPDATE_LENGTH.
#define FUZZ_MAX_BUFFER_SIZE (HAL_MAX_UPDATE_LENGTH + 64u)
// Entries of a generated wait or signal list.
#define FUZZ_MAX_LIST 4
#define FUZZ_MAX_SUBMIT_BUFFERS 3

#define FUZZ_NS_PER_MS 1000000ll
// How long teardown waits for the device to drop its references, and a
// wait to return after its (millisecond) deadline; generous for a loaded
// 2-core machine under ASan. HAL_FUZZ_DRAIN_MS overrides the first.
#define FUZZ_DEFAULT_DRAIN_MS 20000
#define FUZZ_WAIT_OVERRUN_MS 2000

//===----------------------------------------------------------------------===//
// Reporting
//===----------------------------------------------------------------------===//

static bool fuzz_trace_enabled;
// Set while the per-step state check runs: its queries are not traced.
static bool fuzz_trace_quiet;
static uint32_t fuzz_step;
static const char* fuzz_op_name = "setup";

static void fuzz_trace(const char* format, ...) HAL_PRINTF_LIKE(1, 2);
static void fuzz_trace(const char* format, ...) {
  if (!fuzz_trace_enabled || fuzz_trace_quiet)
    return;
  va_list args;
  va_start(args, format);
  fprintf(stderr, "hal-api-fuzz: step %u %s: ", fuzz_step, fuzz_op_name);
  vfprintf(stderr, format, args);
  fputc('\n', stderr);
  va_end(args);
}

static void fuzz_fail(const char* format, ...) HAL_PRINTF_LIKE(1, 2)
    __attribute__((noreturn));
static void fuzz_fail(const char* format, ...) {
  va_list args;
  va_start(args, format);
  fprintf(stderr,
          "\nhal-api-fuzz: INVARIANT VIOLATED at step %u (%s): ", fuzz_step,
          fuzz_op_name);
  vfprintf(stderr, format, args);
  fputc('\n', stderr);
  va_end(args);
  fflush(stderr);
  abort();
}

#define FUZZ_CHECK(condition, ...) \
  do {                             \
    if (!(condition))              \
      fuzz_fail(__VA_ARGS__);      \
  } while (0)

// What the model says a call must return.
typedef enum fuzz_expect_e {
  FUZZ_EXPECT_OK = 0,     // must succeed
  FUZZ_EXPECT_ERROR = 1,  // must fail (with |code| unless it is OK)
  FUZZ_EXPECT_ANY = 2,    // either; the model cannot tell
} fuzz_expect_t;

typedef struct fuzz_expectation_t {
  fuzz_expect_t kind;
  hal_status_code_t code;
} fuzz_expectation_t;

static fuzz_expectation_t fuzz_ok(void) {
  fuzz_expectation_t e = {FUZZ_EXPECT_OK, HAL_STATUS_OK};
  return e;
}
static fuzz_expectation_t fuzz_error(hal_status_code_t code) {
  fuzz_expectation_t e = {FUZZ_EXPECT_ERROR, code};
  return e;
}
static fuzz_expectation_t fuzz_any(void) {
  fuzz_expectation_t e = {FUZZ_EXPECT_ANY, HAL_STATUS_OK};
  return e;
}

// Checks a status's own invariants (a real code, a message that starts with
// the file:line that made it), then that it matches |expect|. Frees it and
// returns its code.
static hal_status_code_t fuzz_result(hal_status_t status,
                                     fuzz_expectation_t expect,
                                     const char* what) {
  hal_status_code_t code = hal_status_code(status);
  const char* message = hal_status_message(status);
  fuzz_trace("%s -> %s%s%s", what, hal_status_code_string(code),
             status ? ": " : "", status ? message : "");
  if (status) {
    FUZZ_CHECK(code > HAL_STATUS_OK && code < HAL_STATUS_CODE_COUNT_,
               "%s returned a status with code %d", what, (int)code);
    FUZZ_CHECK(message && message[0], "%s returned a status without message",
               what);
    char small[8];
    size_t wanted = hal_status_format(status, small, sizeof(small));
    FUZZ_CHECK(wanted >= strlen(hal_status_code_string(code)),
               "hal_status_format of %s's status wanted %zu bytes", what,
               wanted);
  }
  bool bad = false;
  if (expect.kind == FUZZ_EXPECT_OK && status)
    bad = true;
  if (expect.kind == FUZZ_EXPECT_ERROR &&
      (!status || (expect.code != HAL_STATUS_OK && code != expect.code))) {
    bad = true;
  }
  if (bad) {
    fuzz_fail("%s returned %s (%s); expected %s%s", what,
              hal_status_code_string(code), status ? message : "OK",
              expect.kind == FUZZ_EXPECT_OK ? "OK" : "an error",
              expect.kind == FUZZ_EXPECT_ERROR && expect.code != HAL_STATUS_OK
                  ? hal_status_code_string(expect.code)
                  : "");
  }
  hal_status_free(status);
  return code;
}

//===----------------------------------------------------------------------===//
// Input
//===----------------------------------------------------------------------===//

typedef struct fuzz_input_t {
  const uint8_t* data;
  size_t size;
  size_t position;
} fuzz_input_t;

static bool fuzz_exhausted(const fuzz_input_t* in) {
  return in->position >= in->size;
}

static uint8_t take_u8(fuzz_input_t* in) {
  return in->position < in->size ? in->data[in->position++] : 0;
}

// |byte_count| bytes, little-endian.
static uint64_t take_bytes(fuzz_input_t* in, int byte_count) {
  uint64_t value = 0;
  for (int i = 0; i < byte_count; ++i)
    value |= (uint64_t)take_u8(in) << (8 * i);
  return value;
}

static uint16_t take_u16(fuzz_input_t* in) {
  return (uint16_t)take_bytes(in, 2);
}
static uint32_t take_u32(fuzz_input_t* in) {
  return (uint32_t)take_bytes(in, 4);
}
static uint64_t take_u64(fuzz_input_t* in) {
  return take_bytes(in, 8);
}

// A byte naming a slot of a table of |count|: 0xFF is an explicit NULL
// argument, anything else is taken modulo |count| (an empty slot is NULL
// too).
#define FUZZ_NULL_SLOT 0xFFu
static int take_slot(fuzz_input_t* in, int count) {
  uint8_t byte = take_u8(in);
  return byte == FUZZ_NULL_SLOT ? -1 : byte % count;
}

// A semaphore payload relative to |seen| (the value last observed):
//   0 seen, 1 seen+1, 2 seen+1+(0..3), 3 seen-1, 4 a small absolute value,
//   5 MAX or MAX-1, 6 in the failure range, 7 any 64-bit value.
static uint64_t take_semaphore_value(fuzz_input_t* in, uint64_t seen) {
  uint8_t selector = take_u8(in);
  switch (selector % 8) {
    case 0:
      return seen;
    case 1:
      return seen + 1;
    case 2:
      return seen + 1 + take_u8(in) % 4;
    case 3:
      return seen ? seen - 1 : 0;
    case 4:
      return take_u8(in);
    case 5:
      return HAL_SEMAPHORE_MAX_VALUE - take_u8(in) % 2;
    case 6:
      return HAL_SEMAPHORE_FAILURE_VALUE + take_u8(in);
    default:
      return take_u64(in);
  }
}

// Immediate, or at most a few milliseconds: a wait never blocks the run.
static hal_timeout_t take_timeout(fuzz_input_t* in) {
  switch (take_u8(in) % 8) {
    case 0:
      return hal_immediate_timeout();
    case 1:
      return hal_make_timeout_ns(0);
    case 2:
      return hal_make_timeout_ns(1 * FUZZ_NS_PER_MS);
    case 3:
      return hal_make_timeout_ns(3 * FUZZ_NS_PER_MS);
    case 4:
      return hal_make_deadline(hal_time_now() - FUZZ_NS_PER_MS);
    case 5:
      return hal_make_deadline(hal_time_now() + 2 * FUZZ_NS_PER_MS);
    case 6:
      return hal_make_timeout_ns(-5);
    default:
      return hal_make_deadline(HAL_TIME_INFINITE_PAST);
  }
}

// An (offset, length) pair for a buffer of |size| bytes, in range or not:
//   0 whole buffer, 1 offset + HAL_WHOLE_BUFFER, 2 random in range,
//   3 random in range aligned to |align|, 4 (size, 0), 5 offset past the
//   end, 6 length past the end, 7 any 64-bit values, 8 offset + length
//   wrapping around, 9 aligned offset and length 0.
static void take_range(fuzz_input_t* in, uint64_t size, uint64_t align,
                       uint64_t* out_offset, uint64_t* out_length) {
  uint8_t selector = take_u8(in);
  uint64_t offset = 0, length = 0;
  if (align == 0)
    align = 1;
  switch (selector % 10) {
    case 0:
      offset = 0;
      length = HAL_WHOLE_BUFFER;
      break;
    case 1:
      offset = take_u16(in) % (size + 1);
      length = HAL_WHOLE_BUFFER;
      break;
    case 2:
      offset = take_u16(in) % (size + 1);
      length = take_u16(in) % (size - offset + 1);
      break;
    case 3:
      offset = take_u16(in) % (size + 1);
      offset -= offset % align;
      length = take_u16(in) % (size - offset + 1);
      length -= length % align;
      break;
    case 4:
      offset = size;
      length = 0;
      break;
    case 5:
      offset = size + 1 + take_u8(in);
      length = 1;
      break;
    case 6:
      offset = take_u16(in) % (size + 1);
      length = size - offset + 1 + take_u8(in) % 4;
      break;
    case 7:
      offset = take_u64(in);
      length = take_u64(in);
      break;
    case 8:
      offset = UINT64_MAX - take_u8(in);
      length = 2 + take_u8(in);
      break;
    default:
      offset = take_u16(in) % (size + 1);
      offset -= offset % align;
      length = 0;
      break;
  }
  *out_offset = offset;
  *out_length = length;
}

// The documented range rule (hal_buffer_validate_range), resolving
// HAL_WHOLE_BUFFER; false when out of range.
static bool fuzz_range_valid(uint64_t size, uint64_t offset, uint64_t length,
                             uint64_t* out_length) {
  if (offset > size)
    return false;
  if (length == HAL_WHOLE_BUFFER)
    length = size - offset;
  uint64_t end = 0;
  if (__builtin_add_overflow(offset, length, &end) || end > size)
    return false;
  *out_length = length;
  return true;
}

//===----------------------------------------------------------------------===//
// Live host allocations of the whole process
//===----------------------------------------------------------------------===//

// libFuzzer's per-input leak check runs LeakSanitizer when an input made
// more allocations than it freed. The device's threads free some of an
// input's memory (work items, submissions) a moment after its last
// reference came back, so the end of an input waits, briefly, for the count
// to settle; otherwise libFuzzer sees imbalance on most inputs and turns the
// check off. What is still live after the wait (pools that grew) is left to
// that check, which reports only memory nothing points to.
static atomic_long fuzz_live_allocations;
#if FUZZ_HAVE_MALLOC_HOOKS
static void fuzz_malloc_hook(const volatile void* ptr, size_t size) {
  atomic_fetch_add_explicit(&fuzz_live_allocations, 1, memory_order_relaxed);
}
static void fuzz_free_hook(const volatile void* ptr) {
  atomic_fetch_sub_explicit(&fuzz_live_allocations, 1, memory_order_relaxed);
}
#endif
#define FUZZ_SETTLE_NS (20 * 1000 * 1000ll)

static void fuzz_wait_for_allocations(long baseline) {
  hal_time_t deadline = hal_time_now() + FUZZ_SETTLE_NS;
  while (atomic_load_explicit(&fuzz_live_allocations, memory_order_relaxed) >
             baseline &&
         hal_time_now() < deadline) {
    hal_sleep_until(hal_time_now() + 50000);  // 50 us
  }
}

//===----------------------------------------------------------------------===//
// Process state: registry, driver, device (LLVMFuzzerInitialize)
//===----------------------------------------------------------------------===//

static struct {
  hal_driver_registry_t* registry;
  hal_driver_t* driver;
  hal_device_t* device;
  hal_device_properties_t properties;
  hal_memory_stats_t baseline;
  // Loaded once: the kernels, for every dispatch (see fuzz/meson.build on
  // why executables are not loaded per input in an instrumented build).
  hal_executable_t* kernels;
  const hal_kernel_image_t* kernel_image;
  int64_t drain_ns;
  bool corrupt_images;  // HAL_FUZZ_CORRUPT_IMAGES=1
} fuzz_process;

//===----------------------------------------------------------------------===//
// Per-input state: the object tables and their model
//===----------------------------------------------------------------------===//

typedef struct fuzz_semaphore_t {
  hal_semaphore_t* handle;  // NULL: empty slot
  bool host;                // made by hal_semaphore_create_host
  uint64_t seen;            // largest value observed
  bool failed;              // observed failed (sticky)
  hal_status_code_t failure_code;
  // Named in the signal list of an accepted submission: the device may
  // move or fail it at any time, so only weaker predictions hold.
  bool device_signaled;
  // Largest value an accepted submission waits for (0: none).
  uint64_t max_device_wait;
  bool device_waited;
  // A pending callback holds a reference to it (a signal or fail action):
  // dropped from the table, it is kept until the end (a callback on it may
  // hold the semaphore the callback is on: a cycle only failing breaks).
  bool action_target;
  // The table's reference is lent to callback lent-1, which releases it
  // when it runs (K12); only this thread can make it run (see
  // fuzz_semaphore_settle_lent).
  int lent;
} fuzz_semaphore_t;

typedef struct fuzz_buffer_t {
  hal_buffer_t* handle;  // NULL: empty slot
  uint32_t id;           // unique within the input
  uint64_t size;
  hal_memory_type_t memory_type;
  hal_buffer_usage_t usage;
  uint8_t* shadow;  // [size]: the bytes the host knows are there
  uint8_t* known;   // [size]: 1 where |shadow| is known
  // Submitted work may write it: contents are no longer checked.
  bool dirty;
} fuzz_buffer_t;

typedef struct fuzz_command_buffer_t {
  hal_command_buffer_t* handle;  // NULL: empty slot
  hal_command_buffer_mode_t mode;
  hal_command_buffer_state_t state;
  bool consumed;                       // ONE_SHOT and submitted
  bool ever_submitted;                 // a submission may still hold it
  uint32_t op_count;                   // ops recorded since begin
  uint32_t targets[FUZZ_MAX_TARGETS];  // buffer ids the recording writes
  uint32_t target_count;
  bool targets_overflow;  // more than FUZZ_MAX_TARGETS: all buffers
} fuzz_command_buffer_t;

// What a callback does before it records its call (T2: any HAL call).
typedef enum fuzz_action_e {
  FUZZ_ACTION_NONE = 0,
  FUZZ_ACTION_SIGNAL = 1,        // signals |target| to |target_value|
  FUZZ_ACTION_FAIL = 2,          // fails |target|
  FUZZ_ACTION_RELEASE_LENT = 3,  // releases |target|, its own semaphore
} fuzz_action_t;

typedef struct fuzz_callback_t {
  atomic_int calls;
  atomic_int code;  // hal_status_code_t of the last call
  atomic_bool bad_value;
  atomic_bool done;  // set last: the callback no longer touches the record
  uint64_t value;
  bool registered;  // add_callback returned OK
  fuzz_action_t action;
  hal_semaphore_t* target;  // a reference the callback owns and releases
  uint64_t target_value;
} fuzz_callback_t;

// One hal_device_queue_host_call: its function must be called exactly once
// (with OK or with why it never ran) by the end of the input.
typedef struct fuzz_host_call_t {
  atomic_int calls;
  atomic_bool done;  // set last: the function no longer touches the record
  bool registered;   // the call returned OK
} fuzz_host_call_t;

typedef struct fuzz_timepoint_t {
  hal_timepoint_t* handle;  // NULL: empty slot
  int callback;             // index in fuzz_state.callbacks
} fuzz_timepoint_t;

typedef struct fuzz_mapping_t {
  hal_buffer_mapping_t mapping;  // .buffer NULL: empty slot
  uint32_t buffer_id;
} fuzz_mapping_t;

// A host allocator that counts live allocations and may refuse them: host
// semaphores made with it must free everything they allocated.
typedef struct fuzz_counting_allocator_t {
  atomic_intptr_t live;
  bool refuse;
} fuzz_counting_allocator_t;

static struct {
  fuzz_semaphore_t semaphores[FUZZ_SEMAPHORE_SLOTS];
  fuzz_semaphore_t kept[FUZZ_MAX_KEPT];
  int kept_count;
  fuzz_buffer_t buffers[FUZZ_BUFFER_SLOTS];
  uint32_t next_buffer_id;
  fuzz_command_buffer_t command_buffers[FUZZ_COMMAND_BUFFER_SLOTS];
  hal_executable_t* executables[FUZZ_EXECUTABLE_SLOTS];
  fuzz_timepoint_t timepoints[FUZZ_TIMEPOINT_SLOTS];
  fuzz_mapping_t mappings[FUZZ_MAPPING_SLOTS];
  fuzz_callback_t callbacks[FUZZ_MAX_CALLBACKS];
  int callback_count;
  fuzz_host_call_t host_calls[FUZZ_MAX_CALLBACKS];
  int host_call_count;
  fuzz_counting_allocator_t counting;
} fuzz_state;

static void* fuzz_counting_malloc(void* self, size_t size) {
  fuzz_counting_allocator_t* counting = self;
  if (counting->refuse)
    return NULL;
  void* ptr = malloc(size);
  if (ptr)
    atomic_fetch_add(&counting->live, 1);
  return ptr;
}

static void* fuzz_counting_realloc(void* self, void* ptr, size_t size) {
  fuzz_counting_allocator_t* counting = self;
  return counting->refuse ? NULL : realloc(ptr, size);
}

static void fuzz_counting_free(void* self, void* ptr) {
  fuzz_counting_allocator_t* counting = self;
  atomic_fetch_sub(&counting->live, 1);
  free(ptr);
}

static hal_allocator_t fuzz_counting_allocator(void) {
  hal_allocator_t allocator = {&fuzz_state.counting, fuzz_counting_malloc,
                               fuzz_counting_realloc, fuzz_counting_free};
  return allocator;
}

//===----------------------------------------------------------------------===//
// Model checks
//===----------------------------------------------------------------------===//

// A lent slot whose callback ran holds nothing any more: the callback
// released the table's reference. True when |s| was cleared.
static bool fuzz_semaphore_settle_lent(fuzz_semaphore_t* s) {
  if (!s->handle || !s->lent)
    return false;
  fuzz_callback_t* c = &fuzz_state.callbacks[s->lent - 1];
  if (!atomic_load_explicit(&c->done, memory_order_acquire))
    return false;
  fuzz_trace("semaphore %p released by the callback it was lent to",
             (void*)s->handle);
  memset(s, 0, sizeof(*s));
  return true;
}

// Queries |s| and checks S1/S2 against what was seen before.
static void fuzz_semaphore_observe(fuzz_semaphore_t* s, const char* when) {
  if (!s->handle)
    return;
  uint64_t value = 12345;
  hal_status_t status = hal_semaphore_query(s->handle, &value);
  if (!status) {
    FUZZ_CHECK(!s->failed,
               "%s: semaphore %p failed with %s before, now queries OK "
               "(value %" PRIu64 "): a failure must be sticky (S2)",
               when, (void*)s->handle, hal_status_code_string(s->failure_code),
               value);
    FUZZ_CHECK(value >= s->seen,
               "%s: semaphore %p went from %" PRIu64 " back to %" PRIu64
               " (S1: payloads only increase)",
               when, (void*)s->handle, s->seen, value);
    FUZZ_CHECK(value <= HAL_SEMAPHORE_MAX_VALUE,
               "%s: semaphore %p queries OK with %" PRIu64
               ", in the failure range",
               when, (void*)s->handle, value);
    s->seen = value;
    return;
  }
  hal_status_code_t code = hal_status_code(status);
  FUZZ_CHECK(value == HAL_SEMAPHORE_FAILURE_VALUE,
             "%s: failed semaphore %p queried value %" PRIu64
             ", not HAL_SEMAPHORE_FAILURE_VALUE",
             when, (void*)s->handle, value);
  if (s->failed) {
    FUZZ_CHECK(code == s->failure_code,
               "%s: semaphore %p failed with %s, now queries %s (%s): the "
               "first failure is kept (S2)",
               when, (void*)s->handle, hal_status_code_string(s->failure_code),
               hal_status_code_string(code), hal_status_message(status));
  } else {
    s->failed = true;
    s->failure_code = code;
  }
  hal_status_free(status);
}

static fuzz_buffer_t* fuzz_buffer_by_id(uint32_t id) {
  for (int i = 0; i < FUZZ_BUFFER_SLOTS; ++i) {
    if (fuzz_state.buffers[i].handle && fuzz_state.buffers[i].id == id)
      return &fuzz_state.buffers[i];
  }
  return NULL;
}

// Compares |bytes| (the buffer's [offset, offset + length)) with the known
// bytes of the shadow.
static void fuzz_buffer_compare(const fuzz_buffer_t* b, uint64_t offset,
                                const uint8_t* bytes, uint64_t length,
                                const char* how) {
  if (b->dirty)
    return;
  for (uint64_t i = 0; i < length; ++i) {
    uint64_t at = offset + i;
    if (b->known[at] && b->shadow[at] != bytes[i]) {
      fuzz_fail("%s of buffer %u (%" PRIu64
                " bytes, no device work may write it): byte %" PRIu64
                " is 0x%02x, the host last wrote 0x%02x",
                how, b->id, b->size, at, bytes[i], b->shadow[at]);
    }
  }
}

static void fuzz_buffer_learn(fuzz_buffer_t* b, uint64_t offset,
                              const uint8_t* bytes, uint64_t length) {
  if (b->dirty)
    return;
  memcpy(b->shadow + offset, bytes, (size_t)length);
  memset(b->known + offset, 1, (size_t)length);
}

static void fuzz_check_callbacks(void) {
  for (int i = 0; i < fuzz_state.callback_count; ++i) {
    fuzz_callback_t* c = &fuzz_state.callbacks[i];
    int calls = atomic_load(&c->calls);
    FUZZ_CHECK(calls <= 1, "callback %d (value %" PRIu64 ") ran %d times (T1)",
               i, c->value, calls);
    FUZZ_CHECK(c->registered || calls == 0,
               "callback %d ran although hal_semaphore_add_callback failed", i);
    FUZZ_CHECK(!atomic_load(&c->bad_value),
               "callback %d was passed a value other than its %" PRIu64, i,
               c->value);
  }
}

// Everything the model knows, after every step.
static void fuzz_check_state(void) {
  fuzz_trace_quiet = true;
  for (int i = 0; i < FUZZ_SEMAPHORE_SLOTS; ++i) {
    if (!fuzz_semaphore_settle_lent(&fuzz_state.semaphores[i]))
      fuzz_semaphore_observe(&fuzz_state.semaphores[i], "state check");
  }
  for (int i = 0; i < FUZZ_COMMAND_BUFFER_SLOTS; ++i) {
    fuzz_command_buffer_t* c = &fuzz_state.command_buffers[i];
    if (!c->handle)
      continue;
    FUZZ_CHECK(hal_command_buffer_state(c->handle) == c->state,
               "command buffer %d is in state %d, the model says %d", i,
               (int)hal_command_buffer_state(c->handle), (int)c->state);
    FUZZ_CHECK(hal_command_buffer_mode(c->handle) == c->mode,
               "command buffer %d changed mode", i);
    if (c->state == HAL_COMMAND_BUFFER_STATE_EXECUTABLE) {
      hal_command_buffer_info_t info;
      fuzz_result(hal_command_buffer_query_info(c->handle, &info), fuzz_ok(),
                  "query_info");
      FUZZ_CHECK(info.op_count == c->op_count,
                 "command buffer %d reports %u ops, %u were recorded", i,
                 info.op_count, c->op_count);
    }
  }
  for (int i = 0; i < FUZZ_BUFFER_SLOTS; ++i) {
    fuzz_buffer_t* b = &fuzz_state.buffers[i];
    if (!b->handle)
      continue;
    FUZZ_CHECK(hal_buffer_byte_length(b->handle) == b->size &&
                   hal_buffer_memory_type(b->handle) == b->memory_type &&
                   hal_buffer_usage(b->handle) == b->usage &&
                   hal_buffer_device(b->handle) == fuzz_process.device,
               "buffer %u changed size, memory type, usage or device", b->id);
  }
  fuzz_check_callbacks();
  fuzz_trace_quiet = false;
}

//===----------------------------------------------------------------------===//
// Object lifetime
//===----------------------------------------------------------------------===//

// Drops the table's reference to a semaphore. One that accepted work still
// waits for (a value above any it reached, not failed) is kept until the
// input ends instead: only failing it then lets that work retire, and the
// device lives on to the next input.
static void fuzz_semaphore_drop(fuzz_semaphore_t* s) {
  if (!s->handle)
    return;
  if (s->lent) {
    // The reference is the callback's: failing the semaphore runs it.
    hal_semaphore_fail(s->handle, hal_make_status(HAL_STATUS_CANCELLED,
                                                  "hal-api-fuzz: dropped"));
    FUZZ_CHECK(fuzz_semaphore_settle_lent(s),
               "a pending callback did not run when its semaphore failed "
               "(T1)");
    return;
  }
  fuzz_semaphore_observe(s, "release");
  bool parked_work_may_need_it =
      s->device_waited && !s->failed && s->seen < s->max_device_wait;
  if ((parked_work_may_need_it || s->action_target) &&
      fuzz_state.kept_count < FUZZ_MAX_KEPT) {
    fuzz_trace("semaphore %p kept until the end: work may wait for %" PRIu64,
               (void*)s->handle, s->max_device_wait);
    fuzz_state.kept[fuzz_state.kept_count++] = *s;
  } else {
    fuzz_trace("semaphore %p released", (void*)s->handle);
    hal_semaphore_release(s->handle);
  }
  memset(s, 0, sizeof(*s));
}

static void fuzz_buffer_drop(fuzz_buffer_t* b) {
  if (!b->handle)
    return;
  hal_buffer_release(b->handle);
  free(b->shadow);
  free(b->known);
  memset(b, 0, sizeof(*b));
}

static void fuzz_command_buffer_drop(fuzz_command_buffer_t* c) {
  if (!c->handle)
    return;
  hal_command_buffer_release(c->handle);
  memset(c, 0, sizeof(*c));
}

static void fuzz_timepoint_drop(fuzz_timepoint_t* t) {
  if (!t->handle)
    return;
  hal_timepoint_release(t->handle);
  memset(t, 0, sizeof(*t));
}

static void fuzz_mapping_drop(fuzz_mapping_t* m) {
  hal_buffer_unmap(&m->mapping);
  FUZZ_CHECK(m->mapping.buffer == NULL && m->mapping.contents == NULL,
             "hal_buffer_unmap left the mapping set");
  memset(m, 0, sizeof(*m));
}

static hal_semaphore_t* fuzz_semaphore_at(int slot) {
  return slot < 0 ? NULL : fuzz_state.semaphores[slot].handle;
}

static fuzz_semaphore_t* fuzz_semaphore_model(hal_semaphore_t* handle) {
  if (!handle)
    return NULL;
  for (int i = 0; i < FUZZ_SEMAPHORE_SLOTS; ++i) {
    if (fuzz_state.semaphores[i].handle == handle)
      return &fuzz_state.semaphores[i];
  }
  return NULL;
}

static fuzz_buffer_t* fuzz_buffer_slot(int slot) {
  if (slot < 0 || !fuzz_state.buffers[slot].handle)
    return NULL;
  return &fuzz_state.buffers[slot];
}

static fuzz_command_buffer_t* fuzz_command_buffer_slot(int slot) {
  if (slot < 0 || !fuzz_state.command_buffers[slot].handle)
    return NULL;
  return &fuzz_state.command_buffers[slot];
}

// Notes that the recording of |c| writes buffer |b|.
static void fuzz_command_buffer_add_target(fuzz_command_buffer_t* c,
                                           const fuzz_buffer_t* b) {
  if (c->target_count < FUZZ_MAX_TARGETS) {
    c->targets[c->target_count++] = b->id;
  } else {
    c->targets_overflow = true;
  }
}

//===----------------------------------------------------------------------===//
// Ops: semaphores
//===----------------------------------------------------------------------===//

// [slot] [value...] [null_out]: hal_device_create_semaphore.
static void op_semaphore_create_device(fuzz_input_t* in) {
  int slot = take_u8(in) % FUZZ_SEMAPHORE_SLOTS;
  uint64_t initial = take_semaphore_value(in, 0);
  bool null_out = take_u8(in) == 1;
  fuzz_semaphore_drop(&fuzz_state.semaphores[slot]);
  hal_semaphore_t* semaphore = (hal_semaphore_t*)&fuzz_state;  // overwritten
  fuzz_expectation_t expect = null_out || initial > HAL_SEMAPHORE_MAX_VALUE
                                  ? fuzz_error(HAL_STATUS_INVALID_ARGUMENT)
                                  : fuzz_ok();
  hal_status_code_t code =
      fuzz_result(hal_device_create_semaphore(fuzz_process.device, initial,
                                              null_out ? NULL : &semaphore),
                  expect, "hal_device_create_semaphore");
  if (null_out)
    return;
  if (code != HAL_STATUS_OK) {
    FUZZ_CHECK(semaphore == NULL, "a failed create left *out_semaphore set");
    return;
  }
  fuzz_semaphore_t* s = &fuzz_state.semaphores[slot];
  s->handle = semaphore;
  s->seen = initial;
  fuzz_semaphore_observe(s, "create");
  FUZZ_CHECK(!s->failed && s->seen == initial,
             "a new semaphore of initial value %" PRIu64 " queries %" PRIu64,
             initial, s->seen);
}

// [slot] [value...] [allocator]: hal_semaphore_create_host with the system
// allocator (0), a counting one (1) or one that refuses every allocation
// (2).
static void op_semaphore_create_host(fuzz_input_t* in) {
  int slot = take_u8(in) % FUZZ_SEMAPHORE_SLOTS;
  uint64_t initial = take_semaphore_value(in, 0);
  int allocator_kind = take_u8(in) % 3;
  fuzz_semaphore_drop(&fuzz_state.semaphores[slot]);
  hal_allocator_t allocator =
      allocator_kind == 0 ? hal_allocator_system() : fuzz_counting_allocator();
  fuzz_state.counting.refuse = allocator_kind == 2;
  fuzz_expectation_t expect = fuzz_ok();
  if (initial > HAL_SEMAPHORE_MAX_VALUE) {
    expect = fuzz_error(HAL_STATUS_INVALID_ARGUMENT);
  } else if (allocator_kind == 2) {
    expect = fuzz_error(HAL_STATUS_RESOURCE_EXHAUSTED);
  }
  hal_semaphore_t* semaphore = NULL;
  hal_status_code_t code =
      fuzz_result(hal_semaphore_create_host(allocator, initial, &semaphore),
                  expect, "hal_semaphore_create_host");
  fuzz_state.counting.refuse = false;
  if (code != HAL_STATUS_OK) {
    FUZZ_CHECK(semaphore == NULL, "a failed create left *out_semaphore set");
    return;
  }
  fuzz_semaphore_t* s = &fuzz_state.semaphores[slot];
  s->handle = semaphore;
  s->host = true;
  s->seen = initial;
  fuzz_semaphore_observe(s, "create");
  FUZZ_CHECK(!s->failed && s->seen == initial,
             "a new semaphore of initial value %" PRIu64 " queries %" PRIu64,
             initial, s->seen);
}

// [slot]
static void op_semaphore_release(fuzz_input_t* in) {
  int slot = take_slot(in, FUZZ_SEMAPHORE_SLOTS);
  if (slot < 0) {
    hal_semaphore_release(NULL);
    return;
  }
  fuzz_semaphore_drop(&fuzz_state.semaphores[slot]);
}

// [slot] [null_out]
static void op_semaphore_query(fuzz_input_t* in) {
  int slot = take_slot(in, FUZZ_SEMAPHORE_SLOTS);
  bool null_out = take_u8(in) == 1;
  hal_semaphore_t* semaphore = fuzz_semaphore_at(slot);
  if (!semaphore || null_out) {
    uint64_t value = 0;
    fuzz_result(hal_semaphore_query(semaphore, null_out ? NULL : &value),
                fuzz_error(HAL_STATUS_INVALID_ARGUMENT), "hal_semaphore_query");
    return;
  }
  fuzz_semaphore_observe(&fuzz_state.semaphores[slot], "query");
}

// [slot] [value...]: a host signal (S1).
static void op_semaphore_signal(fuzz_input_t* in) {
  int slot = take_slot(in, FUZZ_SEMAPHORE_SLOTS);
  hal_semaphore_t* semaphore = fuzz_semaphore_at(slot);
  fuzz_semaphore_t* s = semaphore ? &fuzz_state.semaphores[slot] : NULL;
  uint64_t value = take_semaphore_value(in, s ? s->seen : 0);
  fuzz_expectation_t expect = fuzz_any();
  if (!s || value > HAL_SEMAPHORE_MAX_VALUE) {
    expect = fuzz_error(HAL_STATUS_INVALID_ARGUMENT);
  } else if (s->failed) {
    expect = fuzz_error(s->failure_code);
  } else if (value <= s->seen) {
    // INVALID_ARGUMENT, or a failure that came since the last query.
    expect = s->device_signaled ? fuzz_error(HAL_STATUS_OK)
                                : fuzz_error(HAL_STATUS_INVALID_ARGUMENT);
  } else if (!s->device_signaled) {
    expect = fuzz_ok();  // only this thread moves it
  }
  hal_status_code_t code = fuzz_result(hal_semaphore_signal(semaphore, value),
                                       expect, "hal_semaphore_signal");
  if (!s || fuzz_semaphore_settle_lent(s))
    return;
  fuzz_semaphore_observe(s, "after signal");
  if (code == HAL_STATUS_OK) {
    FUZZ_CHECK(s->failed || s->seen >= value,
               "signal to %" PRIu64 " returned OK, then query says %" PRIu64
               " (S5)",
               value, s->seen);
  }
}

// [slot] [code] [null_status]: hal_semaphore_fail (S2).
static void op_semaphore_fail(fuzz_input_t* in) {
  int slot = take_slot(in, FUZZ_SEMAPHORE_SLOTS);
  hal_status_code_t code =
      (hal_status_code_t)(take_u8(in) % HAL_STATUS_CODE_COUNT_);
  hal_semaphore_t* semaphore = fuzz_semaphore_at(slot);
  // An OK status becomes UNKNOWN (semaphore.h).
  hal_status_t status =
      code == HAL_STATUS_OK
          ? HAL_OK
          : hal_make_status(code, "hal-api-fuzz: step %u fails it", fuzz_step);
  fuzz_trace("hal_semaphore_fail(%p, %s)", (void*)semaphore,
             hal_status_code_string(code));
  fuzz_semaphore_t* s = semaphore ? &fuzz_state.semaphores[slot] : NULL;
  bool lent = s && s->lent;
  hal_semaphore_fail(semaphore, status);
  if (!s)
    return;
  if (lent) {
    FUZZ_CHECK(fuzz_semaphore_settle_lent(s),
               "a pending callback did not run when its semaphore failed "
               "(T1)");
    return;
  }
  bool was_failed = s->failed;
  fuzz_semaphore_observe(s, "after fail");
  FUZZ_CHECK(s->failed, "semaphore %p queries OK after hal_semaphore_fail",
             (void*)semaphore);
  if (!was_failed && !s->device_signaled) {
    hal_status_code_t expected =
        code == HAL_STATUS_OK ? HAL_STATUS_UNKNOWN : code;
    FUZZ_CHECK(s->failure_code == expected,
               "semaphore failed with %s queries %s",
               hal_status_code_string(expected),
               hal_status_code_string(s->failure_code));
  }
}

// Checks a wait's elapsed time against its deadline (S3).
static void fuzz_check_wait_time(hal_time_t start, hal_timeout_t timeout,
                                 const char* what) {
  hal_time_t deadline = hal_timeout_as_deadline(timeout);
  hal_time_t now = hal_time_now();
  hal_time_t limit = (deadline > start ? deadline : start) +
                     FUZZ_WAIT_OVERRUN_MS * FUZZ_NS_PER_MS;
  FUZZ_CHECK(now <= limit,
             "%s returned %" PRId64
             " ms after its deadline (S3: waits "
             "return soon after it)",
             what, (now - (deadline > start ? deadline : start)) / 1000000);
}

// [slot] [value...] [timeout]: hal_semaphore_wait.
static void op_semaphore_wait(fuzz_input_t* in) {
  int slot = take_slot(in, FUZZ_SEMAPHORE_SLOTS);
  hal_semaphore_t* semaphore = fuzz_semaphore_at(slot);
  fuzz_semaphore_t* s = semaphore ? &fuzz_state.semaphores[slot] : NULL;
  uint64_t value = take_semaphore_value(in, s ? s->seen : 0);
  hal_timeout_t timeout = take_timeout(in);
  fuzz_expectation_t expect = fuzz_any();
  bool reached = false;
  if (!s || value > HAL_SEMAPHORE_MAX_VALUE) {
    expect = fuzz_error(HAL_STATUS_INVALID_ARGUMENT);
  } else if (s->failed) {
    expect = fuzz_error(s->failure_code);
  } else if (value <= s->seen) {
    reached = true;
    expect = s->device_signaled ? fuzz_any() : fuzz_ok();
  }
  hal_time_t start = hal_time_now();
  hal_status_code_t code =
      fuzz_result(hal_semaphore_wait(semaphore, value, timeout), expect,
                  "hal_semaphore_wait");
  fuzz_check_wait_time(start, timeout, "hal_semaphore_wait");
  if (!s)
    return;
  fuzz_semaphore_observe(s, "after wait");
  FUZZ_CHECK(!(reached && code == HAL_STATUS_DEADLINE_EXCEEDED &&
               !(s->failed && s->failure_code == HAL_STATUS_DEADLINE_EXCEEDED)),
             "a wait for %" PRIu64 " timed out with the value at %" PRIu64,
             value, s->seen);
  if (code == HAL_STATUS_OK) {
    FUZZ_CHECK(s->failed || s->seen >= value,
               "a wait for %" PRIu64 " returned OK, then query says %" PRIu64
               " (S5)",
               value, s->seen);
  }
}

// A generated (semaphore, value) list. |shape|: 0 NULL list pointer, 1 a
// count with NULL arrays, else count = shape % (FUZZ_MAX_LIST + 1).
typedef struct fuzz_list_t {
  bool null_pointer;
  bool null_arrays;
  hal_semaphore_list_t list;
  hal_semaphore_t* semaphores[FUZZ_MAX_LIST];
  uint64_t values[FUZZ_MAX_LIST];
} fuzz_list_t;

// [shape] then per entry [slot] [value...]
static void take_list(fuzz_input_t* in, fuzz_list_t* out) {
  memset(out, 0, sizeof(*out));
  uint8_t shape = take_u8(in);
  if (shape == 0) {
    out->null_pointer = true;
    return;
  }
  if (shape == 1) {
    out->null_arrays = true;
    out->list.count = 1 + take_u8(in) % FUZZ_MAX_LIST;
    return;
  }
  size_t count = (shape - 2) % (FUZZ_MAX_LIST + 1);
  for (size_t i = 0; i < count; ++i) {
    int slot = take_slot(in, FUZZ_SEMAPHORE_SLOTS);
    out->semaphores[i] = fuzz_semaphore_at(slot);
    fuzz_semaphore_t* s = fuzz_semaphore_model(out->semaphores[i]);
    out->values[i] = take_semaphore_value(in, s ? s->seen : 0);
  }
  out->list.count = count;
  out->list.semaphores = out->semaphores;
  out->list.payload_values = out->values;
}

// True when the list is well formed (hal_semaphore_list_validate).
static bool fuzz_list_valid(const fuzz_list_t* l) {
  if (l->null_pointer)
    return true;
  if (l->null_arrays)
    return false;
  for (size_t i = 0; i < l->list.count; ++i) {
    if (!l->semaphores[i] || l->values[i] > HAL_SEMAPHORE_MAX_VALUE)
      return false;
  }
  return true;
}

static size_t fuzz_list_count(const fuzz_list_t* l) {
  return l->null_pointer ? 0 : l->list.count;
}

// What a list wait of |mode| must return, from what was seen.
static fuzz_expectation_t fuzz_list_wait_expectation(const fuzz_list_t* l,
                                                     hal_wait_mode_t mode,
                                                     bool* out_decided) {
  *out_decided = false;
  size_t count = fuzz_list_count(l);
  bool stable = true;  // no entry can change behind our back
  size_t reached = 0;
  int first_failed = -1;
  for (size_t i = 0; i < count; ++i) {
    fuzz_semaphore_t* s = fuzz_semaphore_model(l->semaphores[i]);
    if (!s)
      return fuzz_any();  // a semaphore no longer in the table
    if (s->device_signaled)
      stable = false;
    if (s->failed) {
      if (first_failed < 0)
        first_failed = (int)i;
    } else if (l->values[i] <= s->seen) {
      ++reached;
    }
  }
  if (count == 0)
    return fuzz_ok();
  if (mode == HAL_WAIT_MODE_ALL) {
    if (first_failed >= 0) {
      *out_decided = true;
      // The first failed entry in list order, unless an earlier one failed
      // since it was last queried.
      fuzz_semaphore_t* s = fuzz_semaphore_model(l->semaphores[first_failed]);
      return stable || first_failed == 0 ? fuzz_error(s->failure_code)
                                         : fuzz_error(HAL_STATUS_OK);
    }
    if (reached == count) {
      *out_decided = true;
      return stable ? fuzz_ok() : fuzz_any();
    }
    return fuzz_any();
  }
  if (reached > 0) {
    *out_decided = true;
    return stable ? fuzz_ok() : fuzz_any();
  }
  if (first_failed >= 0) {
    *out_decided = true;
    return stable ? fuzz_error(fuzz_semaphore_model(l->semaphores[first_failed])
                                   ->failure_code)
                  : fuzz_any();
  }
  return fuzz_any();
}

// After a list wait returned |code|: what OK promises (S5).
static void fuzz_after_list_wait(const fuzz_list_t* l, hal_wait_mode_t mode,
                                 hal_status_code_t code, bool decided,
                                 const char* what) {
  size_t count = fuzz_list_count(l);
  size_t reached = 0;
  bool failed_with_deadline = false;  // a failure whose code reads as one
  for (size_t i = 0; i < count; ++i) {
    fuzz_semaphore_t* s = fuzz_semaphore_model(l->semaphores[i]);
    if (!s) {
      ++reached;  // cannot tell
      continue;
    }
    fuzz_semaphore_observe(s, what);
    if (s->failed || s->seen >= l->values[i])
      ++reached;
    if (s->failed && s->failure_code == HAL_STATUS_DEADLINE_EXCEEDED)
      failed_with_deadline = true;
  }
  FUZZ_CHECK(!(decided && code == HAL_STATUS_DEADLINE_EXCEEDED &&
               !failed_with_deadline),
             "%s timed out although its outcome was already decided", what);
  if (code == HAL_STATUS_OK && count > 0) {
    if (mode == HAL_WAIT_MODE_ALL) {
      FUZZ_CHECK(reached == count,
                 "%s ALL returned OK with %zu of %zu entries reached (S5)",
                 what, reached, count);
    } else {
      FUZZ_CHECK(reached > 0, "%s ANY returned OK with no entry reached (S5)",
                 what);
    }
  }
}

static hal_wait_mode_t take_wait_mode(fuzz_input_t* in) {
  uint8_t byte = take_u8(in);
  switch (byte % 8) {
    case 6:
      return (hal_wait_mode_t)2;
    case 7:
      return (hal_wait_mode_t)(0x100 + byte);
    default:
      return (byte % 8) % 2 ? HAL_WAIT_MODE_ANY : HAL_WAIT_MODE_ALL;
  }
}

// [mode] [list...] [timeout] [device: 0 list wait, 1 device wait, 2 device
// wait with a NULL device]
static void op_list_wait(fuzz_input_t* in) {
  hal_wait_mode_t mode = take_wait_mode(in);
  fuzz_list_t l;
  take_list(in, &l);
  hal_timeout_t timeout = take_timeout(in);
  int form = take_u8(in) % 3;
  bool mode_valid = mode == HAL_WAIT_MODE_ALL || mode == HAL_WAIT_MODE_ANY;
  bool decided = false;
  fuzz_expectation_t expect = fuzz_any();
  if (form == 2 || !mode_valid) {
    expect = fuzz_error(HAL_STATUS_INVALID_ARGUMENT);
  } else if (fuzz_list_count(&l) == 0 && !l.null_arrays) {
    expect = fuzz_ok();
  } else if (!fuzz_list_valid(&l)) {
    expect = fuzz_error(HAL_STATUS_INVALID_ARGUMENT);
  } else {
    expect = fuzz_list_wait_expectation(&l, mode, &decided);
  }
  hal_time_t start = hal_time_now();
  hal_status_code_t code;
  const char* what;
  if (form == 0) {
    what = "hal_semaphore_list_wait";
    hal_semaphore_list_t list =
        l.null_pointer ? hal_semaphore_list_empty() : l.list;
    code =
        fuzz_result(hal_semaphore_list_wait(mode, list, timeout), expect, what);
  } else {
    what = "hal_device_wait_semaphores";
    code = fuzz_result(
        hal_device_wait_semaphores(form == 2 ? NULL : fuzz_process.device, mode,
                                   l.null_pointer ? NULL : &l.list, timeout),
        expect, what);
  }
  fuzz_check_wait_time(start, timeout, what);
  if (expect.kind == FUZZ_EXPECT_ERROR &&
      expect.code == HAL_STATUS_INVALID_ARGUMENT) {
    return;
  }
  fuzz_after_list_wait(&l, mode, code, decided, what);
}

//===----------------------------------------------------------------------===//
// Ops: callbacks and timepoints (hal/timepoint.h)
//===----------------------------------------------------------------------===//

static void fuzz_callback(void* user_data, uint64_t value,
                          hal_status_t status) {
  fuzz_callback_t* c = user_data;
  if (value != c->value)
    atomic_store(&c->bad_value, true);
  switch (c->action) {
    case FUZZ_ACTION_SIGNAL:
      hal_status_free(hal_semaphore_signal(c->target, c->target_value));
      hal_semaphore_release(c->target);
      break;
    case FUZZ_ACTION_FAIL:
      hal_semaphore_fail(c->target, hal_make_status(HAL_STATUS_ABORTED,
                                                    "failed by a callback"));
      hal_semaphore_release(c->target);
      break;
    case FUZZ_ACTION_RELEASE_LENT:
      hal_semaphore_release(c->target);  // maybe the last reference (K12)
      break;
    default:
      break;
  }
  atomic_store(&c->code, (int)hal_status_code(status));
  atomic_fetch_add(&c->calls, 1);
  atomic_store_explicit(&c->done, true, memory_order_release);
}

// [slot] [value...] [form: 0 no handle, 1 handle, 2 NULL callback]
// [timepoint slot] [action] [target slot] [target step]
static void op_callback_add(fuzz_input_t* in) {
  int slot = take_slot(in, FUZZ_SEMAPHORE_SLOTS);
  hal_semaphore_t* semaphore = fuzz_semaphore_at(slot);
  fuzz_semaphore_t* s = semaphore ? &fuzz_state.semaphores[slot] : NULL;
  uint64_t value = take_semaphore_value(in, s ? s->seen : 0);
  int form = take_u8(in) % 3;
  int timepoint_slot = take_u8(in) % FUZZ_TIMEPOINT_SLOTS;
  fuzz_action_t action = (fuzz_action_t)(take_u8(in) % 4);
  fuzz_semaphore_t* target =
      &fuzz_state.semaphores[take_u8(in) % FUZZ_SEMAPHORE_SLOTS];
  uint64_t target_step = 1 + take_u8(in) % 4;
  if (fuzz_state.callback_count == FUZZ_MAX_CALLBACKS)
    return;
  int index = fuzz_state.callback_count++;
  fuzz_callback_t* c = &fuzz_state.callbacks[index];
  c->value = value;
  fuzz_expectation_t expect = fuzz_ok();
  if (!s || form == 2 || value > HAL_SEMAPHORE_MAX_VALUE)
    expect = fuzz_error(HAL_STATUS_INVALID_ARGUMENT);
  // A lent semaphore must never be resolved off this thread, so it is no
  // action's target; and only a semaphore nothing else moves is lent.
  if ((action == FUZZ_ACTION_SIGNAL || action == FUZZ_ACTION_FAIL) &&
      target->handle && !target->lent) {
    hal_semaphore_retain(target->handle);
    c->target = target->handle;
    c->target_value = target->seen + target_step;
    target->device_signaled = true;  // moved by a callback, on any thread
    target->action_target = true;
  } else if (action == FUZZ_ACTION_RELEASE_LENT && s && !s->lent &&
             !s->device_signaled && !s->device_waited && form != 2) {
    c->target = s->handle;  // the table's reference, from now on
  } else {
    action = FUZZ_ACTION_NONE;
  }
  c->action = action;
  bool due = s && (s->failed || value <= s->seen);
  bool failed = s && s->failed;
  hal_status_code_t failure_code = s ? s->failure_code : HAL_STATUS_OK;
  bool moved_elsewhere = s && s->device_signaled;
  if (action == FUZZ_ACTION_RELEASE_LENT)
    s->lent = index + 1;
  if (form == 1)
    fuzz_timepoint_drop(&fuzz_state.timepoints[timepoint_slot]);
  hal_timepoint_t* timepoint = (hal_timepoint_t*)&fuzz_state;  // overwritten
  fuzz_trace("action %d", (int)action);
  hal_status_code_t code =
      fuzz_result(hal_semaphore_add_callback(semaphore, value,
                                             form == 2 ? NULL : fuzz_callback,
                                             c, form == 1 ? &timepoint : NULL),
                  expect, "hal_semaphore_add_callback");
  if (code != HAL_STATUS_OK) {
    FUZZ_CHECK(form != 1 || timepoint == NULL,
               "a failed add_callback left *out_timepoint set");
    if (action == FUZZ_ACTION_SIGNAL || action == FUZZ_ACTION_FAIL)
      hal_semaphore_release(c->target);  // the callback will never run
    if (action == FUZZ_ACTION_RELEASE_LENT)
      s->lent = 0;
    return;
  }
  c->registered = true;
  if (form == 1) {
    FUZZ_CHECK(timepoint != NULL, "add_callback returned OK without handle");
    fuzz_state.timepoints[timepoint_slot].handle = timepoint;
    fuzz_state.timepoints[timepoint_slot].callback = index;
  }
  if (due) {
    // Already reached or failed: it ran on this thread before returning.
    FUZZ_CHECK(atomic_load(&c->calls) == 1,
               "a callback for a value already %s did not run before "
               "add_callback returned",
               failed ? "failed" : "reached");
    hal_status_code_t ran = (hal_status_code_t)atomic_load(&c->code);
    if (failed) {
      FUZZ_CHECK(ran == failure_code,
                 "a callback on a semaphore failed with %s ran with %s",
                 hal_status_code_string(failure_code),
                 hal_status_code_string(ran));
    } else if (!moved_elsewhere) {
      FUZZ_CHECK(ran == HAL_STATUS_OK,
                 "a callback for a reached value ran with %s",
                 hal_status_code_string(ran));
    }
  }
  if (s)
    fuzz_semaphore_settle_lent(s);
}

// [timepoint slot] [form: 0 cancel, 1 cancel NULL]
static void op_timepoint_cancel(fuzz_input_t* in) {
  int slot = take_u8(in) % FUZZ_TIMEPOINT_SLOTS;
  bool null_handle = take_u8(in) % 2 == 1;
  if (null_handle) {
    FUZZ_CHECK(!hal_timepoint_cancel(NULL), "cancel(NULL) returned true");
    return;
  }
  fuzz_timepoint_t* t = &fuzz_state.timepoints[slot];
  if (!t->handle)
    return;
  fuzz_callback_t* c = &fuzz_state.callbacks[t->callback];
  int calls_before = atomic_load(&c->calls);
  bool removed = hal_timepoint_cancel(t->handle);
  fuzz_trace("hal_timepoint_cancel -> %s", removed ? "removed" : "resolved");
  if (removed) {
    FUZZ_CHECK(calls_before == 0,
               "cancel removed a timepoint whose callback had run (T5)");
    FUZZ_CHECK(atomic_load(&c->calls) == 1 &&
                   atomic_load(&c->code) == HAL_STATUS_CANCELLED,
               "cancel returned true but the callback did not run with "
               "CANCELLED before it returned (T5)");
  }
}

// [timepoint slot] [form: 0 release, 1 retain + release]
static void op_timepoint_release(fuzz_input_t* in) {
  int slot = take_u8(in) % FUZZ_TIMEPOINT_SLOTS;
  int form = take_u8(in) % 2;
  fuzz_timepoint_t* t = &fuzz_state.timepoints[slot];
  if (!t->handle) {
    hal_timepoint_release(NULL);
    return;
  }
  if (form == 1) {
    hal_timepoint_retain(t->handle);
    hal_timepoint_release(t->handle);
    return;
  }
  fuzz_timepoint_drop(t);
}

//===----------------------------------------------------------------------===//
// Ops: buffers
//===----------------------------------------------------------------------===//

static const hal_memory_type_t fuzz_memory_types[] = {
    HAL_MEMORY_TYPE_DEVICE_LOCAL,
    HAL_MEMORY_TYPE_HOST_VISIBLE,
    HAL_MEMORY_TYPE_DEVICE_LOCAL | HAL_MEMORY_TYPE_HOST_VISIBLE,
    0,
    1u << 2,
    HAL_MEMORY_TYPE_HOST_VISIBLE | (1u << 5),
};

static const hal_buffer_usage_t fuzz_usages[] = {
    HAL_BUFFER_USAGE_DEFAULT,
    HAL_BUFFER_USAGE_DEFAULT | HAL_BUFFER_USAGE_MAPPING,
    HAL_BUFFER_USAGE_TRANSFER,
    HAL_BUFFER_USAGE_TRANSFER_SOURCE,
    HAL_BUFFER_USAGE_TRANSFER_TARGET,
    HAL_BUFFER_USAGE_DISPATCH_STORAGE,
    HAL_BUFFER_USAGE_MAPPING,
    0,
    1u << 4,
};

// [slot] [memory type] [usage] [size class] [size...] [form: 0 device,
// 1 allocator, 2 NULL device, 3 NULL out]
static void op_buffer_allocate(fuzz_input_t* in) {
  int slot = take_u8(in) % FUZZ_BUFFER_SLOTS;
  hal_buffer_params_t params = {
      fuzz_memory_types[take_u8(in) % HAL_ARRAYSIZE(fuzz_memory_types)],
      fuzz_usages[take_u8(in) % HAL_ARRAYSIZE(fuzz_usages)],
  };
  uint64_t size = 0;
  switch (take_u8(in) % 8) {
    case 0:
      size = 1 + take_u8(in) % 64;
      break;
    case 1:
    case 2:
      size = 1 + take_u16(in) % 4096;
      break;
    case 3:
      size = FUZZ_MAX_BUFFER_SIZE;
      break;
    case 4:
      size = 0;
      break;
    case 5:
      size = fuzz_process.properties.total_memory + 1 + take_u8(in);
      break;
    case 6:
      size = UINT64_MAX - take_u8(in);
      break;
    default:
      size = 4u * (1 + take_u8(in));
      break;
  }
  int form = take_u8(in) % 4;
  fuzz_buffer_drop(&fuzz_state.buffers[slot]);

  fuzz_expectation_t expect = fuzz_ok();
  hal_memory_type_t supported = fuzz_process.properties.supported_memory_types;
  if (form >= 2 || (params.memory_type & ~(unsigned)HAL_MEMORY_TYPE_ALL_) ||
      !(params.memory_type &
        (HAL_MEMORY_TYPE_DEVICE_LOCAL | HAL_MEMORY_TYPE_HOST_VISIBLE)) ||
      params.usage == 0 || (params.usage & ~(unsigned)HAL_BUFFER_USAGE_ALL_) ||
      ((params.usage & HAL_BUFFER_USAGE_MAPPING) &&
       !(params.memory_type & HAL_MEMORY_TYPE_HOST_VISIBLE)) ||
      size == 0) {
    expect = fuzz_error(HAL_STATUS_INVALID_ARGUMENT);
  } else if (size > SIZE_MAX) {
    expect = fuzz_error(HAL_STATUS_OUT_OF_RANGE);
  } else if (size > fuzz_process.properties.total_memory) {
    expect = fuzz_error(HAL_STATUS_OK);
  } else if (params.memory_type & ~supported) {
    expect = fuzz_any();
  }
  hal_buffer_t* buffer = (hal_buffer_t*)&fuzz_state;  // overwritten
  hal_status_t status;
  switch (form) {
    case 0:
      status = hal_device_allocate_buffer(fuzz_process.device, params, size,
                                          &buffer);
      break;
    case 1:
      status = hal_device_allocator_allocate_buffer(
          hal_device_allocator(fuzz_process.device), params, size, &buffer);
      break;
    case 2:
      status = hal_device_allocate_buffer(NULL, params, size, &buffer);
      break;
    default:
      status =
          hal_device_allocate_buffer(fuzz_process.device, params, size, NULL);
      buffer = NULL;
      break;
  }
  char what[96];
  snprintf(what, sizeof(what),
           "allocate_buffer(type 0x%x, usage 0x%x, %" PRIu64 " bytes)",
           params.memory_type, params.usage, size);
  hal_status_code_t code = fuzz_result(status, expect, what);
  if (code != HAL_STATUS_OK) {
    FUZZ_CHECK(buffer == NULL, "a failed allocate left *out_buffer set");
    return;
  }
  FUZZ_CHECK(buffer != NULL, "allocate returned OK without a buffer");
  fuzz_buffer_t* b = &fuzz_state.buffers[slot];
  b->handle = buffer;
  b->id = ++fuzz_state.next_buffer_id;
  b->size = size;
  b->memory_type = params.memory_type;
  b->usage = params.usage;
  b->shadow = calloc(1, (size_t)size);
  b->known = calloc(1, (size_t)size);
  FUZZ_CHECK(b->shadow && b->known, "out of host memory");
}

// [slot]
static void op_buffer_release(fuzz_input_t* in) {
  int slot = take_slot(in, FUZZ_BUFFER_SLOTS);
  if (slot < 0) {
    hal_buffer_release(NULL);
    return;
  }
  fuzz_buffer_drop(&fuzz_state.buffers[slot]);
}

// Host memory of exactly |length| bytes (ASan catches a read or write past
// it), or a small block when |length| is absurd (validation must refuse it
// before touching anything).
static uint8_t* fuzz_host_block(uint64_t length, size_t* out_size) {
  size_t size =
      length && length <= 4u * FUZZ_MAX_BUFFER_SIZE ? (size_t)length : 16;
  *out_size = size;
  uint8_t* block = malloc(size);
  FUZZ_CHECK(block, "out of host memory");
  return block;
}

// What hal_buffer_read/write must return.
static fuzz_expectation_t fuzz_host_transfer_expectation(
    const fuzz_buffer_t* b, uint64_t offset, uint64_t length, bool null_host,
    hal_buffer_usage_t usage) {
  if (!b || length == HAL_WHOLE_BUFFER || (null_host && length))
    return fuzz_error(HAL_STATUS_INVALID_ARGUMENT);
  if (!(b->usage & (usage | HAL_BUFFER_USAGE_MAPPING)))
    return fuzz_error(HAL_STATUS_FAILED_PRECONDITION);
  uint64_t resolved = 0;
  if (!fuzz_range_valid(b->size, offset, length, &resolved))
    return fuzz_error(HAL_STATUS_OUT_OF_RANGE);
  return fuzz_ok();
}

// [slot] [range...] [seed] [null source]
static void op_buffer_write(fuzz_input_t* in) {
  int slot = take_slot(in, FUZZ_BUFFER_SLOTS);
  fuzz_buffer_t* b = fuzz_buffer_slot(slot);
  uint64_t offset = 0, length = 0;
  take_range(in, b ? b->size : 64, 1, &offset, &length);
  uint8_t seed = take_u8(in);
  bool null_host = take_u8(in) == 1;
  size_t block_size = 0;
  uint8_t* block = fuzz_host_block(length, &block_size);
  for (size_t i = 0; i < block_size; ++i)
    block[i] = (uint8_t)(seed + i * 7);
  fuzz_expectation_t expect = fuzz_host_transfer_expectation(
      b, offset, length, null_host, HAL_BUFFER_USAGE_TRANSFER_TARGET);
  hal_status_code_t code =
      fuzz_result(hal_buffer_write(b ? b->handle : NULL, offset,
                                   null_host ? NULL : block, length),
                  expect, "hal_buffer_write");
  if (code == HAL_STATUS_OK && b && length)
    fuzz_buffer_learn(b, offset, block, length);
  free(block);
}

// [slot] [range...] [null target]
static void op_buffer_read(fuzz_input_t* in) {
  int slot = take_slot(in, FUZZ_BUFFER_SLOTS);
  fuzz_buffer_t* b = fuzz_buffer_slot(slot);
  uint64_t offset = 0, length = 0;
  take_range(in, b ? b->size : 64, 1, &offset, &length);
  bool null_host = take_u8(in) == 1;
  size_t block_size = 0;
  uint8_t* block = fuzz_host_block(length, &block_size);
  fuzz_expectation_t expect = fuzz_host_transfer_expectation(
      b, offset, length, null_host, HAL_BUFFER_USAGE_TRANSFER_SOURCE);
  hal_status_code_t code =
      fuzz_result(hal_buffer_read(b ? b->handle : NULL, offset,
                                  null_host ? NULL : block, length),
                  expect, "hal_buffer_read");
  if (code == HAL_STATUS_OK && b && length)
    fuzz_buffer_compare(b, offset, block, length, "hal_buffer_read");
  free(block);
}

static const hal_mapping_access_t fuzz_accesses[] = {
    HAL_MAPPING_ACCESS_READ,
    HAL_MAPPING_ACCESS_WRITE,
    HAL_MAPPING_ACCESS_READ_WRITE,
    0,
    4,
    7,
};

// [buffer slot] [access] [range...] [mapping slot] [null out]
static void op_buffer_map(fuzz_input_t* in) {
  int slot = take_slot(in, FUZZ_BUFFER_SLOTS);
  fuzz_buffer_t* b = fuzz_buffer_slot(slot);
  hal_mapping_access_t access =
      fuzz_accesses[take_u8(in) % HAL_ARRAYSIZE(fuzz_accesses)];
  uint64_t offset = 0, length = 0;
  take_range(in, b ? b->size : 64, 1, &offset, &length);
  int mapping_slot = take_u8(in) % FUZZ_MAPPING_SLOTS;
  bool null_out = take_u8(in) == 1;
  fuzz_expectation_t expect = fuzz_ok();
  uint64_t resolved = 0;
  if (null_out || !b || access == 0 || (access & ~3u)) {
    expect = fuzz_error(HAL_STATUS_INVALID_ARGUMENT);
  } else if (!(b->memory_type & HAL_MEMORY_TYPE_HOST_VISIBLE) ||
             !(b->usage & HAL_BUFFER_USAGE_MAPPING)) {
    expect = fuzz_error(HAL_STATUS_FAILED_PRECONDITION);
  } else if (!fuzz_range_valid(b->size, offset, length, &resolved)) {
    expect = fuzz_error(HAL_STATUS_OUT_OF_RANGE);
  }
  fuzz_mapping_drop(&fuzz_state.mappings[mapping_slot]);
  fuzz_mapping_t* m = &fuzz_state.mappings[mapping_slot];
  memset(&m->mapping, 0xA5, sizeof(m->mapping));  // must be cleared
  hal_status_code_t code =
      fuzz_result(hal_buffer_map_range(b ? b->handle : NULL, access, offset,
                                       length, null_out ? NULL : &m->mapping),
                  expect, "hal_buffer_map_range");
  if (code != HAL_STATUS_OK) {
    if (!null_out) {
      FUZZ_CHECK(m->mapping.buffer == NULL && m->mapping.contents == NULL,
                 "a failed map left the mapping set");
    }
    memset(m, 0, sizeof(*m));
    return;
  }
  FUZZ_CHECK(m->mapping.buffer == b->handle && m->mapping.offset == offset &&
                 m->mapping.length == resolved && m->mapping.contents != NULL &&
                 m->mapping.access == access,
             "mapping of [%" PRIu64 ", +%" PRIu64 ") reads buffer %p [%" PRIu64
             ", +%" PRIu64 ") contents %p",
             offset, resolved, (void*)m->mapping.buffer, m->mapping.offset,
             m->mapping.length, m->mapping.contents);
  m->buffer_id = b->id;
  if (access & HAL_MAPPING_ACCESS_READ) {
    fuzz_buffer_compare(b, offset, m->mapping.contents, resolved, "a mapping");
  }
}

// [mapping slot] [offset] [length] [seed]: writes through a WRITE mapping
// (every byte of it when the length covers it), or reads a READ one.
static void op_mapping_access(fuzz_input_t* in) {
  fuzz_mapping_t* m = &fuzz_state.mappings[take_u8(in) % FUZZ_MAPPING_SLOTS];
  uint16_t at = take_u16(in);
  uint16_t count = take_u16(in);
  uint8_t seed = take_u8(in);
  if (!m->mapping.buffer || m->mapping.length == 0)
    return;
  uint64_t offset = at % m->mapping.length;
  uint64_t length = count % (m->mapping.length - offset + 1);
  uint8_t* contents = (uint8_t*)m->mapping.contents + offset;
  fuzz_buffer_t* b = fuzz_buffer_by_id(m->buffer_id);
  if (m->mapping.access & HAL_MAPPING_ACCESS_WRITE) {
    for (uint64_t i = 0; i < length; ++i)
      contents[i] = (uint8_t)(seed ^ (i * 13));
    if (b)
      fuzz_buffer_learn(b, m->mapping.offset + offset, contents, length);
  } else if (b) {
    fuzz_buffer_compare(b, m->mapping.offset + offset, contents, length,
                        "a mapping");
  }
  fuzz_trace("mapping %s [%" PRIu64 ", +%" PRIu64 ")",
             m->mapping.access & HAL_MAPPING_ACCESS_WRITE ? "write" : "read",
             offset, length);
}

// [mapping slot] [form: 0 unmap, 1 unmap NULL, 2 unmap a zeroed mapping]
static void op_buffer_unmap(fuzz_input_t* in) {
  int slot = take_u8(in) % FUZZ_MAPPING_SLOTS;
  int form = take_u8(in) % 3;
  if (form == 1) {
    hal_buffer_unmap(NULL);
  } else if (form == 2) {
    hal_buffer_mapping_t zeroed;
    memset(&zeroed, 0, sizeof(zeroed));
    hal_buffer_unmap(&zeroed);
  } else {
    fuzz_mapping_drop(&fuzz_state.mappings[slot]);
  }
}

//===----------------------------------------------------------------------===//
// Ops: command buffers
//===----------------------------------------------------------------------===//

// [slot] [mode: 0 ONE_SHOT, 1 REUSABLE, 2 bad, 3 NULL device, 4 NULL out]
static void op_command_buffer_create(fuzz_input_t* in) {
  int slot = take_u8(in) % FUZZ_COMMAND_BUFFER_SLOTS;
  int form = take_u8(in) % 5;
  fuzz_command_buffer_drop(&fuzz_state.command_buffers[slot]);
  hal_command_buffer_mode_t mode =
      form == 1 ? HAL_COMMAND_BUFFER_MODE_REUSABLE
                : (form == 2 ? (hal_command_buffer_mode_t)7
                             : HAL_COMMAND_BUFFER_MODE_ONE_SHOT);
  hal_command_buffer_t* command_buffer =
      (hal_command_buffer_t*)&fuzz_state;  // overwritten
  fuzz_expectation_t expect =
      form >= 2 ? fuzz_error(HAL_STATUS_INVALID_ARGUMENT) : fuzz_ok();
  hal_status_code_t code =
      fuzz_result(hal_device_create_command_buffer(
                      form == 3 ? NULL : fuzz_process.device, mode,
                      form == 4 ? NULL : &command_buffer),
                  expect, "hal_device_create_command_buffer");
  if (form == 4)
    return;
  if (code != HAL_STATUS_OK) {
    FUZZ_CHECK(command_buffer == NULL,
               "a failed create left *out_command_buffer set");
    return;
  }
  fuzz_command_buffer_t* c = &fuzz_state.command_buffers[slot];
  c->handle = command_buffer;
  c->mode = mode;
  c->state = HAL_COMMAND_BUFFER_STATE_INITIAL;
}

// [slot]
static void op_command_buffer_release(fuzz_input_t* in) {
  int slot = take_slot(in, FUZZ_COMMAND_BUFFER_SLOTS);
  if (slot < 0) {
    hal_command_buffer_release(NULL);
    return;
  }
  fuzz_command_buffer_drop(&fuzz_state.command_buffers[slot]);
}

// [slot]
static void op_command_buffer_begin(fuzz_input_t* in) {
  fuzz_command_buffer_t* c =
      fuzz_command_buffer_slot(take_slot(in, FUZZ_COMMAND_BUFFER_SLOTS));
  fuzz_expectation_t expect = fuzz_error(HAL_STATUS_FAILED_PRECONDITION);
  if (!c) {
    expect = fuzz_error(HAL_STATUS_INVALID_ARGUMENT);
  } else if (c->state == HAL_COMMAND_BUFFER_STATE_INITIAL) {
    expect = fuzz_ok();
  } else if (c->state == HAL_COMMAND_BUFFER_STATE_EXECUTABLE &&
             c->mode == HAL_COMMAND_BUFFER_MODE_REUSABLE) {
    // Refused while a submission is in flight, which the model cannot see.
    expect = c->ever_submitted ? fuzz_any() : fuzz_ok();
  }
  hal_status_code_t code =
      fuzz_result(hal_command_buffer_begin(c ? c->handle : NULL), expect,
                  "hal_command_buffer_begin");
  if (!c)
    return;
  if (code == HAL_STATUS_OK) {
    c->state = HAL_COMMAND_BUFFER_STATE_RECORDING;
    c->op_count = 0;
    c->target_count = 0;
    c->targets_overflow = false;
  } else if (expect.kind == FUZZ_EXPECT_ANY) {
    FUZZ_CHECK(code == HAL_STATUS_FAILED_PRECONDITION,
               "re-recording begin failed with %s, not FAILED_PRECONDITION",
               hal_status_code_string(code));
  }
}

// [slot]
static void op_command_buffer_end(fuzz_input_t* in) {
  fuzz_command_buffer_t* c =
      fuzz_command_buffer_slot(take_slot(in, FUZZ_COMMAND_BUFFER_SLOTS));
  fuzz_expectation_t expect =
      !c ? fuzz_error(HAL_STATUS_INVALID_ARGUMENT)
         : (c->state == HAL_COMMAND_BUFFER_STATE_RECORDING
                ? fuzz_ok()
                : fuzz_error(HAL_STATUS_FAILED_PRECONDITION));
  hal_status_code_t code =
      fuzz_result(hal_command_buffer_end(c ? c->handle : NULL), expect,
                  "hal_command_buffer_end");
  if (c && code == HAL_STATUS_OK)
    c->state = HAL_COMMAND_BUFFER_STATE_EXECUTABLE;
}

// The state check every recording op starts with.
static bool fuzz_recording_check(const fuzz_command_buffer_t* c,
                                 fuzz_expectation_t* out_expect) {
  if (!c) {
    *out_expect = fuzz_error(HAL_STATUS_INVALID_ARGUMENT);
    return false;
  }
  if (c->state != HAL_COMMAND_BUFFER_STATE_RECORDING) {
    *out_expect = fuzz_error(HAL_STATUS_FAILED_PRECONDITION);
    return false;
  }
  *out_expect = fuzz_ok();
  return true;
}

// A buffer argument of a recording op: NULL, lacking |usage|, or a bad
// range refuse the op. Resolves the length.
static bool fuzz_record_buffer_check(const fuzz_buffer_t* b,
                                     hal_buffer_usage_t usage, uint64_t offset,
                                     uint64_t* inout_length,
                                     fuzz_expectation_t* out_expect) {
  if (!b) {
    *out_expect = fuzz_error(HAL_STATUS_INVALID_ARGUMENT);
    return false;
  }
  if (!(b->usage & usage)) {
    *out_expect = fuzz_error(HAL_STATUS_INVALID_ARGUMENT);
    return false;
  }
  if (!fuzz_range_valid(b->size, offset, *inout_length, inout_length)) {
    *out_expect = fuzz_error(HAL_STATUS_OUT_OF_RANGE);
    return false;
  }
  return true;
}

// Counts a recorded op in the model.
static void fuzz_recorded(fuzz_command_buffer_t* c, hal_status_code_t code,
                          uint64_t length, const fuzz_buffer_t* target) {
  if (!c || code != HAL_STATUS_OK || length == 0)
    return;  // a zero-length op records nothing
  ++c->op_count;
  if (target)
    fuzz_command_buffer_add_target(c, target);
}

// [slot]
static void op_command_buffer_barrier(fuzz_input_t* in) {
  fuzz_command_buffer_t* c =
      fuzz_command_buffer_slot(take_slot(in, FUZZ_COMMAND_BUFFER_SLOTS));
  fuzz_expectation_t expect;
  fuzz_recording_check(c, &expect);
  hal_status_code_t code =
      fuzz_result(hal_command_buffer_execution_barrier(c ? c->handle : NULL),
                  expect, "hal_command_buffer_execution_barrier");
  fuzz_recorded(c, code, 1, NULL);
}

static const size_t fuzz_pattern_lengths[] = {1, 2, 4, 0, 3, 8};

// What a fill must return (command_buffer.h).
static fuzz_expectation_t fuzz_fill_expectation(
    const fuzz_command_buffer_t* c, const fuzz_buffer_t* b, uint64_t offset,
    uint64_t* inout_length, bool null_pattern, size_t pattern_length) {
  fuzz_expectation_t expect;
  if (!fuzz_recording_check(c, &expect))
    return expect;
  if (null_pattern ||
      (pattern_length != 1 && pattern_length != 2 && pattern_length != 4)) {
    return fuzz_error(HAL_STATUS_INVALID_ARGUMENT);
  }
  if (!fuzz_record_buffer_check(b, HAL_BUFFER_USAGE_TRANSFER_TARGET, offset,
                                inout_length, &expect)) {
    return expect;
  }
  if (offset % pattern_length || *inout_length % pattern_length)
    return fuzz_error(HAL_STATUS_INVALID_ARGUMENT);
  return fuzz_ok();
}

// [cb slot] [buffer slot] [pattern length] [range...] [pattern u32]
// [null pattern]
static void op_command_buffer_fill(fuzz_input_t* in) {
  fuzz_command_buffer_t* c =
      fuzz_command_buffer_slot(take_slot(in, FUZZ_COMMAND_BUFFER_SLOTS));
  fuzz_buffer_t* b = fuzz_buffer_slot(take_slot(in, FUZZ_BUFFER_SLOTS));
  size_t pattern_length =
      fuzz_pattern_lengths[take_u8(in) % HAL_ARRAYSIZE(fuzz_pattern_lengths)];
  uint64_t offset = 0, length = 0;
  take_range(in, b ? b->size : 64, pattern_length, &offset, &length);
  uint32_t pattern_bits = take_u32(in);
  bool null_pattern = take_u8(in) == 1;
  uint8_t pattern[8];
  memcpy(pattern, &pattern_bits, 4);
  memcpy(pattern + 4, &pattern_bits, 4);
  uint64_t resolved = length;
  fuzz_expectation_t expect = fuzz_fill_expectation(
      c, b, offset, &resolved, null_pattern, pattern_length);
  hal_status_code_t code =
      fuzz_result(hal_command_buffer_fill_buffer(
                      c ? c->handle : NULL, b ? b->handle : NULL, offset,
                      length, null_pattern ? NULL : pattern, pattern_length),
                  expect, "hal_command_buffer_fill_buffer");
  fuzz_recorded(c, code, resolved, b);
}

// [cb slot] [buffer slot] [range...] [source offset] [seed] [form: 0 data,
// 1 NULL source, 2 over the inline limit]
static void op_command_buffer_update(fuzz_input_t* in) {
  fuzz_command_buffer_t* c =
      fuzz_command_buffer_slot(take_slot(in, FUZZ_COMMAND_BUFFER_SLOTS));
  fuzz_buffer_t* b = fuzz_buffer_slot(take_slot(in, FUZZ_BUFFER_SLOTS));
  uint64_t offset = 0, length = 0;
  take_range(in, b ? b->size : 64, 1, &offset, &length);
  size_t source_offset = take_u8(in) % 8;
  uint8_t seed = take_u8(in);
  int form = take_u8(in) % 3;
  if (form == 2)
    length = HAL_MAX_UPDATE_LENGTH + 1 + seed % 4;
  fuzz_expectation_t expect;
  uint64_t resolved = length;
  if (fuzz_recording_check(c, &expect)) {
    if (length == HAL_WHOLE_BUFFER || (form == 1 && length)) {
      expect = fuzz_error(HAL_STATUS_INVALID_ARGUMENT);
    } else if (length > HAL_MAX_UPDATE_LENGTH) {
      expect = fuzz_error(HAL_STATUS_OUT_OF_RANGE);
    } else {
      fuzz_record_buffer_check(b, HAL_BUFFER_USAGE_TRANSFER_TARGET, offset,
                               &resolved, &expect);
    }
  }
  // The source is exactly source_offset + length bytes when the length is
  // plausible, so a read past it is an ASan report.
  size_t block_size = 0;
  uint8_t* block = fuzz_host_block(
      length <= 4u * FUZZ_MAX_BUFFER_SIZE ? source_offset + length : length,
      &block_size);
  for (size_t i = 0; i < block_size; ++i)
    block[i] = (uint8_t)(seed * 31 + i);
  hal_status_code_t code =
      fuzz_result(hal_command_buffer_update_buffer(
                      c ? c->handle : NULL, form == 1 ? NULL : block,
                      source_offset, b ? b->handle : NULL, offset, length),
                  expect, "hal_command_buffer_update_buffer");
  free(block);
  fuzz_recorded(c, code, resolved, b);
}

// What a copy must return (command_buffer.h); resolves the length.
static fuzz_expectation_t fuzz_copy_expectation(const fuzz_command_buffer_t* c,
                                                const fuzz_buffer_t* source,
                                                uint64_t source_offset,
                                                const fuzz_buffer_t* target,
                                                uint64_t target_offset,
                                                uint64_t* inout_length) {
  fuzz_expectation_t expect;
  if (!fuzz_recording_check(c, &expect))
    return expect;
  if (!fuzz_record_buffer_check(source, HAL_BUFFER_USAGE_TRANSFER_SOURCE,
                                source_offset, inout_length, &expect)) {
    return expect;
  }
  if (!fuzz_record_buffer_check(target, HAL_BUFFER_USAGE_TRANSFER_TARGET,
                                target_offset, inout_length, &expect)) {
    return expect;
  }
  uint64_t length = *inout_length;
  if (source == target && length && source_offset < target_offset + length &&
      target_offset < source_offset + length) {
    return fuzz_error(HAL_STATUS_INVALID_ARGUMENT);
  }
  return fuzz_ok();
}

// [cb slot] [source slot] [target slot] [source range...] [target offset
// selector] [target offset]
static void op_command_buffer_copy(fuzz_input_t* in) {
  fuzz_command_buffer_t* c =
      fuzz_command_buffer_slot(take_slot(in, FUZZ_COMMAND_BUFFER_SLOTS));
  fuzz_buffer_t* source = fuzz_buffer_slot(take_slot(in, FUZZ_BUFFER_SLOTS));
  fuzz_buffer_t* target = fuzz_buffer_slot(take_slot(in, FUZZ_BUFFER_SLOTS));
  uint64_t source_offset = 0, length = 0;
  take_range(in, source ? source->size : 64, 1, &source_offset, &length);
  uint8_t selector = take_u8(in);
  uint16_t raw = take_u16(in);
  uint64_t target_size = target ? target->size : 64;
  uint64_t target_offset = selector % 4 == 0   ? 0
                           : selector % 4 == 1 ? raw % (target_size + 1)
                           : selector % 4 == 2 ? source_offset
                                               : target_size + raw;
  uint64_t resolved = length;
  fuzz_expectation_t expect = fuzz_copy_expectation(
      c, source, source_offset, target, target_offset, &resolved);
  hal_status_code_t code = fuzz_result(
      hal_command_buffer_copy_buffer(
          c ? c->handle : NULL, source ? source->handle : NULL, source_offset,
          target ? target->handle : NULL, target_offset, length),
      expect, "hal_command_buffer_copy_buffer");
  fuzz_recorded(c, code, resolved, target);
}

static hal_executable_t* fuzz_executable_at(int slot) {
  // Slot 0 is the process's kernels; the others are the input's.
  if (slot < 0)
    return NULL;
  return slot == 0 ? fuzz_process.kernels : fuzz_state.executables[slot - 1];
}

// [cb slot] [executable slot] [entry point] [grid form: 0 1-D, 1 2-D,
// 2 a zero dimension (+ [dimension] last), 3 too many threads, 4 too many
// workgroups, 5 a large grid] [count] [size]
// [constant form] [binding form] [binding slot x2] [binding range x2...]
// [constant value]
//
// Valid dispatches keep every kernel inside its bindings: the kernels index
// their buffers by constants (tools/kernels/kernels.c), so the element
// counts are derived from the bound lengths and offsets are 4-aligned.
static void op_command_buffer_dispatch(fuzz_input_t* in) {
  fuzz_command_buffer_t* c =
      fuzz_command_buffer_slot(take_slot(in, FUZZ_COMMAND_BUFFER_SLOTS));
  hal_executable_t* executable =
      fuzz_executable_at(take_slot(in, FUZZ_EXECUTABLE_SLOTS + 1));
  size_t entry_point = take_u8(in) % (HAL_KERNEL_ENTRY_POINT_COUNT + 1);
  int grid_form = take_u8(in) % 6;
  uint32_t count = 1 + take_u8(in) % 4;
  uint32_t size = 1 + take_u8(in) % 64;
  int constant_form = take_u8(in) % 4;
  int binding_form = take_u8(in) % 4;
  fuzz_buffer_t* bound[2];
  uint64_t offsets[2], lengths[2];
  for (int i = 0; i < 2; ++i) {
    bound[i] = fuzz_buffer_slot(take_slot(in, FUZZ_BUFFER_SLOTS));
    take_range(in, bound[i] ? bound[i]->size : 64, 4, &offsets[i], &lengths[i]);
  }
  uint32_t constant_value = take_u32(in);

  uint32_t workgroup_count[3] = {count, 1, 1};
  uint32_t workgroup_size[3] = {size, 1, 1};
  uint32_t max_size = fuzz_process.properties.max_workgroup_size;
  bool grid_valid = true;
  bool grid_out_of_range = false;
  switch (grid_form) {
    case 1:
      workgroup_count[1] = 2;  // a 2-D grid
      workgroup_size[1] = 2;
      break;
    case 2:
      workgroup_count[take_u8(in) % 3] = 0;
      grid_valid = false;
      break;
    case 3:
      workgroup_size[0] = max_size + 1;
      grid_valid = false;
      grid_out_of_range = true;
      break;
    case 4:
      workgroup_count[1] = fuzz_process.properties.max_workgroup_count[1] + 1;
      grid_valid = false;
      grid_out_of_range = true;
      break;
    case 5:
      // Long-running work (up to 4M threads, milliseconds to a second):
      // keeps a submission in flight while later steps submit work that
      // waits for it on the device (T4).
      workgroup_count[0] = 16384u << (count % 4);
      workgroup_size[0] = 1 + size % 32;
      break;
    default:
      break;
  }
  if (grid_valid && workgroup_size[0] * workgroup_size[1] > max_size)
    workgroup_size[0] = 1;

  const hal_entry_point_info_t* entry =
      executable ? hal_executable_entry_point_info(executable, entry_point)
                 : NULL;
  size_t binding_count = entry ? entry->binding_count : 1;
  size_t constant_count = entry ? entry->constant_count : 2;
  if (binding_form == 1)
    binding_count += 1;
  if (constant_form == 1)
    constant_count = constant_count ? constant_count - 1 : 1;
  bool null_bindings = binding_form == 2;
  bool null_constants = constant_form == 2;
  if (binding_count > 2)
    binding_count = 2;

  hal_dispatch_binding_t bindings[2];
  uint64_t resolved[2] = {0, 0};
  uint32_t constants[4] = {constant_value, 0, 0, 0};
  fuzz_expectation_t expect;
  bool expect_known = false;
  if (!fuzz_recording_check(c, &expect)) {
    expect_known = true;
  } else if (!executable) {
    expect = fuzz_error(HAL_STATUS_INVALID_ARGUMENT);
    expect_known = true;
  } else if (!entry) {
    expect = fuzz_error(HAL_STATUS_OUT_OF_RANGE);
    expect_known = true;
  } else if (constant_count != entry->constant_count ||
             binding_count != entry->binding_count ||
             (null_bindings && binding_count) ||
             (null_constants && constant_count)) {
    expect = fuzz_error(HAL_STATUS_INVALID_ARGUMENT);
    expect_known = true;
  } else if (!grid_valid) {
    expect = fuzz_error(grid_out_of_range ? HAL_STATUS_OUT_OF_RANGE
                                          : HAL_STATUS_INVALID_ARGUMENT);
    expect_known = true;
  }
  for (size_t i = 0; i < binding_count; ++i) {
    bindings[i].buffer = bound[i] ? bound[i]->handle : NULL;
    bindings[i].offset = offsets[i];
    bindings[i].length = lengths[i];
    resolved[i] = lengths[i];
    if (!expect_known &&
        !fuzz_record_buffer_check(bound[i], HAL_BUFFER_USAGE_DISPATCH_STORAGE,
                                  offsets[i], &resolved[i], &expect)) {
      expect_known = true;
    }
  }
  if (!expect_known)
    expect = fuzz_ok();
  if (expect.kind == FUZZ_EXPECT_OK) {
    // The kernel touches elements [0, n) of each binding from its offset.
    uint64_t elements = UINT32_MAX;
    for (size_t i = 0; i < binding_count; ++i) {
      if (offsets[i] % 4) {
        return;  // misaligned element access: the caller's bug, not ours
      }
      uint64_t n = resolved[i] / 4;
      if (n < elements)
        elements = n;
    }
    switch (entry_point) {
      case HAL_KERNEL_IOTA_2D: {
        uint32_t width = 1 + constant_value % 8;
        uint32_t height = (uint32_t)(elements / width);
        constants[0] = width;
        constants[1] = height;
        constants[2] = constant_value;
        break;
      }
      default:
        constants[1] = (uint32_t)(elements < constant_value % 4096
                                      ? elements
                                      : constant_value % 4096);
        break;
    }
  }
  hal_status_code_t code = fuzz_result(
      hal_command_buffer_dispatch(
          c ? c->handle : NULL, executable, entry_point, workgroup_count,
          workgroup_size, null_constants ? NULL : constants, constant_count,
          null_bindings ? NULL : bindings, binding_count),
      expect, "hal_command_buffer_dispatch");
  if (c && code == HAL_STATUS_OK) {
    ++c->op_count;
    for (size_t i = 0; i < binding_count; ++i)
      fuzz_command_buffer_add_target(c, bound[i]);
  }
}

// [slot] [null out]
static void op_command_buffer_query_info(fuzz_input_t* in) {
  fuzz_command_buffer_t* c =
      fuzz_command_buffer_slot(take_slot(in, FUZZ_COMMAND_BUFFER_SLOTS));
  bool null_out = take_u8(in) == 1;
  hal_command_buffer_info_t info;
  fuzz_expectation_t expect =
      !c || null_out ? fuzz_error(HAL_STATUS_INVALID_ARGUMENT) : fuzz_ok();
  hal_status_code_t code =
      fuzz_result(hal_command_buffer_query_info(c ? c->handle : NULL,
                                                null_out ? NULL : &info),
                  expect, "hal_command_buffer_query_info");
  if (code == HAL_STATUS_OK && c->state != HAL_COMMAND_BUFFER_STATE_INITIAL) {
    FUZZ_CHECK(info.op_count == c->op_count,
               "query_info reports %u ops, the model recorded %u",
               info.op_count, c->op_count);
  }
}

//===----------------------------------------------------------------------===//
// Ops: executables
//===----------------------------------------------------------------------===//

// [slot] [form] [size or field bytes...]
//   0 the kernels (a fresh load where allowed, else the process's, retained)
//   1 NULL format, 2 a format the device does not load, 3 NULL data,
//   4 size 0, 5 no entry points, 6 too many entry points, 7 a NULL entry
//   point name, 8 too many bindings, 9 a truncated image, 10 an entry point
//   the image lacks, 11 an image with a size field changed, 12 NULL device,
//   13 NULL out.
static void op_executable_create(fuzz_input_t* in) {
  int slot = take_u8(in) % FUZZ_EXECUTABLE_SLOTS;
  int form = take_u8(in) % 14;
  uint32_t raw = take_u32(in);
  hal_executable_release(fuzz_state.executables[slot]);
  fuzz_state.executables[slot] = NULL;
  const hal_kernel_image_t* image = fuzz_process.kernel_image;
  if (!image)
    return;
  bool may_load = HAL_FUZZ_RELOAD_KERNELS;
  if (form == 0 && !may_load) {
    hal_executable_retain(fuzz_process.kernels);
    fuzz_state.executables[slot] = fuzz_process.kernels;
    return;
  }
  if ((form == 10 || form == 11) && !may_load)
    return;  // these load the module (fuzz/meson.build: why not here)
  // An image whose ELF program header table lies past the data given makes
  // the virtual GPU read past it (vgpu/core/module.c elf_image_size; the
  // driver's gpu_executable_check_image checks the section headers only):
  // fuzz/regressions/vgpu-elf-phoff-segv.bin and vgpu-elf-phnum-overflow.bin.
  // Off unless HAL_FUZZ_CORRUPT_IMAGES=1 until that is fixed, so that
  // long runs get past it.
  if (form == 11 && !fuzz_process.corrupt_images)
    return;

  hal_entry_point_params_t entry_points[HAL_MAX_EXECUTABLE_ENTRY_POINTS + 1];
  for (size_t i = 0; i < HAL_ARRAYSIZE(entry_points); ++i)
    entry_points[i] = hal_kernel_entry_points[i % HAL_KERNEL_ENTRY_POINT_COUNT];
  size_t data_size = image->size;
  if (form == 9)
    data_size = raw % image->size;
  // The image in a block of exactly the size given: a read past it is a
  // report.
  uint8_t* data = malloc(data_size ? data_size : 1);
  FUZZ_CHECK(data, "out of host memory");
  memcpy(data, image->data, data_size);
  if (form == 11 && image->size >= 64) {
    // One of the ELF header's size fields: e_phoff, e_shoff, e_phnum,
    // e_shentsize or e_shnum.
    static const struct {
      size_t at, width;
    } fields[] = {{32, 8}, {40, 8}, {56, 2}, {58, 2}, {60, 2}};
    size_t field = (raw >> 24) % HAL_ARRAYSIZE(fields);
    uint64_t value = raw & 0xFFFFFFu;
    memcpy(data + fields[field].at, &value, fields[field].width);
  }
  hal_executable_params_t params = {
      .format = image->format,
      .data = data,
      .data_size = data_size,
      .entry_point_count = HAL_KERNEL_ENTRY_POINT_COUNT,
      .entry_points = entry_points,
  };
  fuzz_expectation_t expect = fuzz_ok();
  switch (form) {
    case 1:
      params.format = NULL;
      expect = fuzz_error(HAL_STATUS_INVALID_ARGUMENT);
      break;
    case 2:
      params.format = "cuda-ptx-not-here";
      expect = fuzz_error(HAL_STATUS_UNIMPLEMENTED);
      break;
    case 3:
      params.data = NULL;
      expect = fuzz_error(HAL_STATUS_INVALID_ARGUMENT);
      break;
    case 4:
      params.data_size = 0;
      expect = fuzz_error(HAL_STATUS_INVALID_ARGUMENT);
      break;
    case 5:
      params.entry_point_count = 0;
      expect = fuzz_error(HAL_STATUS_INVALID_ARGUMENT);
      break;
    case 6:
      params.entry_point_count = HAL_MAX_EXECUTABLE_ENTRY_POINTS + 1;
      expect = fuzz_error(HAL_STATUS_INVALID_ARGUMENT);
      break;
    case 7:
      entry_points[raw % HAL_KERNEL_ENTRY_POINT_COUNT].name = NULL;
      expect = fuzz_error(HAL_STATUS_INVALID_ARGUMENT);
      break;
    case 8:
      entry_points[raw % HAL_KERNEL_ENTRY_POINT_COUNT].binding_count =
          HAL_MAX_DISPATCH_BINDINGS + 1;
      expect = fuzz_error(HAL_STATUS_INVALID_ARGUMENT);
      break;
    case 9:
      expect = data_size == 0 ? fuzz_error(HAL_STATUS_INVALID_ARGUMENT)
                              : fuzz_error(HAL_STATUS_OK);
      break;
    case 10:
      entry_points[raw % HAL_KERNEL_ENTRY_POINT_COUNT].name = "no_such_kernel";
      expect = fuzz_error(HAL_STATUS_NOT_FOUND);
      break;
    case 11:
      expect = fuzz_any();
      break;
    case 12:
    case 13:
      expect = fuzz_error(HAL_STATUS_INVALID_ARGUMENT);
      break;
    default:
      break;
  }
  hal_executable_t* executable = (hal_executable_t*)&fuzz_state;  // overwritten
  hal_status_code_t code = fuzz_result(
      hal_device_create_executable(form == 12 ? NULL : fuzz_process.device,
                                   &params, form == 13 ? NULL : &executable),
      expect, "hal_device_create_executable");
  free(data);
  if (form == 13)
    return;
  if (code != HAL_STATUS_OK) {
    FUZZ_CHECK(executable == NULL, "a failed create left *out_executable set");
    return;
  }
  FUZZ_CHECK(
      hal_executable_entry_point_count(executable) == params.entry_point_count,
      "executable has %zu entry points, %zu were asked for",
      hal_executable_entry_point_count(executable), params.entry_point_count);
  size_t index = 99;
  fuzz_result(hal_executable_lookup_entry_point(executable, "saxpy", &index),
              fuzz_ok(), "hal_executable_lookup_entry_point");
  FUZZ_CHECK(index == HAL_KERNEL_SAXPY, "saxpy is entry point %zu", index);
  fuzz_result(hal_executable_lookup_entry_point(executable, "nope", &index),
              fuzz_error(HAL_STATUS_NOT_FOUND),
              "hal_executable_lookup_entry_point");
  fuzz_state.executables[slot] = executable;
}

// [slot]
static void op_executable_release(fuzz_input_t* in) {
  int slot = take_u8(in) % FUZZ_EXECUTABLE_SLOTS;
  hal_executable_release(fuzz_state.executables[slot]);
  fuzz_state.executables[slot] = NULL;
}

//===----------------------------------------------------------------------===//
// Ops: queues
//===----------------------------------------------------------------------===//

// Marks what an accepted submission may touch.
// What a submission's first checks say (device.c): a NULL device, the queue
// index, then both lists (and |bad_argument|, an invalid argument of the
// call's own checked with the lists).
static fuzz_expectation_t fuzz_expect_submission(bool null_device,
                                                 uint32_t queue,
                                                 const fuzz_list_t* waits,
                                                 const fuzz_list_t* signals,
                                                 bool bad_argument) {
  if (null_device)
    return fuzz_error(HAL_STATUS_INVALID_ARGUMENT);
  if (queue >= fuzz_process.properties.queue_count)
    return fuzz_error(HAL_STATUS_OUT_OF_RANGE);
  if (!fuzz_list_valid(waits) || !fuzz_list_valid(signals) || bad_argument)
    return fuzz_error(HAL_STATUS_INVALID_ARGUMENT);
  return fuzz_ok();
}

// True when |list| names one semaphore twice.
static bool fuzz_list_repeats(const fuzz_list_t* list) {
  for (size_t i = 0; i < fuzz_list_count(list); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (list->semaphores[i] == list->semaphores[j])
        return true;
    }
  }
  return false;
}

// A queue index byte: mostly a valid index, 0xF0 and up one past the end.
static uint32_t fuzz_take_queue(fuzz_input_t* in) {
  uint8_t queue_byte = take_u8(in);
  uint32_t queue_count = fuzz_process.properties.queue_count;
  return queue_byte < 0xF0 ? queue_byte % queue_count
                           : queue_count + (queue_byte & 0x0F);
}

// True when either list holds a lent semaphore (see FUZZ_ACTION_RELEASE_LENT).
static bool fuzz_lists_lend(const fuzz_list_t* waits,
                            const fuzz_list_t* signals) {
  const fuzz_list_t* lists[2] = {waits, signals};
  for (int l = 0; l < 2; ++l) {
    for (size_t i = 0; i < fuzz_list_count(lists[l]); ++i) {
      fuzz_semaphore_t* s = fuzz_semaphore_model(lists[l]->semaphores[i]);
      if (s && s->lent)
        return true;
    }
  }
  return false;
}

static void fuzz_submitted(const fuzz_list_t* waits, const fuzz_list_t* signals,
                           fuzz_command_buffer_t** buffers, size_t count) {
  for (size_t i = 0; i < fuzz_list_count(waits); ++i) {
    fuzz_semaphore_t* s = fuzz_semaphore_model(waits->semaphores[i]);
    if (s) {
      s->device_waited = true;
      if (waits->values[i] > s->max_device_wait)
        s->max_device_wait = waits->values[i];
    }
  }
  for (size_t i = 0; i < fuzz_list_count(signals); ++i) {
    fuzz_semaphore_t* s = fuzz_semaphore_model(signals->semaphores[i]);
    if (s)
      s->device_signaled = true;
  }
  for (size_t i = 0; i < count; ++i) {
    fuzz_command_buffer_t* c = buffers[i];
    if (c->mode == HAL_COMMAND_BUFFER_MODE_ONE_SHOT)
      c->consumed = true;
    c->ever_submitted = true;
    if (c->targets_overflow) {
      for (int b = 0; b < FUZZ_BUFFER_SLOTS; ++b)
        fuzz_state.buffers[b].dirty = true;
    }
    for (uint32_t t = 0; t < c->target_count; ++t) {
      fuzz_buffer_t* b = fuzz_buffer_by_id(c->targets[t]);
      if (b)
        b->dirty = true;
    }
  }
}

// [queue] [wait list...] [signal list...] [buffers: count/shape] [slots]
// [form: 0 execute, 1 barrier, 2 NULL device]
static void op_queue_execute(fuzz_input_t* in) {
  uint32_t queue = fuzz_take_queue(in);
  fuzz_list_t waits, signals;
  take_list(in, &waits);
  take_list(in, &signals);
  uint8_t shape = take_u8(in);
  bool null_array = shape % 8 == 7;
  size_t count = null_array ? 1 : shape % (FUZZ_MAX_SUBMIT_BUFFERS + 1);
  hal_command_buffer_t* handles[FUZZ_MAX_SUBMIT_BUFFERS] = {NULL};
  fuzz_command_buffer_t* models[FUZZ_MAX_SUBMIT_BUFFERS] = {NULL};
  for (size_t i = 0; i < FUZZ_MAX_SUBMIT_BUFFERS; ++i) {
    int slot = take_slot(in, FUZZ_COMMAND_BUFFER_SLOTS);
    if (i >= count)
      continue;
    models[i] = fuzz_command_buffer_slot(slot);
    handles[i] = models[i] ? models[i]->handle : NULL;
  }
  int form = take_u8(in) % 3;
  if (form == 1)
    count = 0;
  // Work on a lent semaphore could run its callback on a queue thread.
  if (fuzz_lists_lend(&waits, &signals))
    return;

  // The documented order of checks (device.c: queue, lists, array, each
  // buffer; then the queue refuses a semaphore signaled twice).
  fuzz_expectation_t expect = fuzz_expect_submission(
      form == 2, queue, &waits, &signals, count && null_array);
  if (expect.kind == FUZZ_EXPECT_OK) {
    for (size_t i = 0; i < count && expect.kind == FUZZ_EXPECT_OK; ++i) {
      fuzz_command_buffer_t* c = models[i];
      bool claimed_before = false;
      for (size_t j = 0; j < i; ++j) {
        if (models[j] == c)
          claimed_before = true;
      }
      if (!c) {
        expect = fuzz_error(HAL_STATUS_INVALID_ARGUMENT);
      } else if (c->state != HAL_COMMAND_BUFFER_STATE_EXECUTABLE ||
                 (c->mode == HAL_COMMAND_BUFFER_MODE_ONE_SHOT &&
                  (c->consumed || claimed_before))) {
        expect = fuzz_error(HAL_STATUS_FAILED_PRECONDITION);
      }
    }
    if (expect.kind == FUZZ_EXPECT_OK && fuzz_list_repeats(&signals))
      expect = fuzz_error(HAL_STATUS_INVALID_ARGUMENT);
  }
  hal_status_t status;
  if (form == 1) {
    status = hal_device_queue_barrier(
        fuzz_process.device, queue, waits.null_pointer ? NULL : &waits.list,
        signals.null_pointer ? NULL : &signals.list);
  } else {
    status =
        hal_device_queue_execute(form == 2 ? NULL : fuzz_process.device, queue,
                                 waits.null_pointer ? NULL : &waits.list,
                                 signals.null_pointer ? NULL : &signals.list,
                                 count, null_array ? NULL : handles);
  }
  char what[96];
  snprintf(what, sizeof(what),
           "%s(queue %u, %zu waits, %zu signals, %zu command buffers)",
           form == 1 ? "hal_device_queue_barrier" : "hal_device_queue_execute",
           queue, fuzz_list_count(&waits), fuzz_list_count(&signals), count);
  hal_status_code_t code = fuzz_result(status, expect, what);
  if (code == HAL_STATUS_OK)
    fuzz_submitted(&waits, &signals, models, count);
}

static hal_status_t fuzz_host_call_fn(void* user_data, hal_status_t status) {
  (void)status;
  fuzz_host_call_t* call = user_data;
  atomic_fetch_add(&call->calls, 1);
  atomic_store_explicit(&call->done, true, memory_order_release);
  return HAL_OK;
}

// [queue] [wait list...] [signal list...] [form: 0 call, 1 NULL function,
// 2 NULL device]
//
// hal_device_queue_host_call with the lists of a submission: validated as
// queue_execute's (and a NULL function refused); when accepted its signals
// move like device work's, and its function runs exactly once by teardown.
static void op_host_call(fuzz_input_t* in) {
  uint32_t queue = fuzz_take_queue(in);
  fuzz_list_t waits, signals;
  take_list(in, &waits);
  take_list(in, &signals);
  int form = take_u8(in) % 3;
  if (fuzz_state.host_call_count == FUZZ_MAX_CALLBACKS)
    return;
  // A host call on a lent semaphore could resolve it off this thread.
  if (fuzz_lists_lend(&waits, &signals))
    return;
  fuzz_expectation_t expect =
      fuzz_expect_submission(form == 2, queue, &waits, &signals, form == 1);
  if (expect.kind == FUZZ_EXPECT_OK && fuzz_list_repeats(&signals))
    expect = fuzz_error(HAL_STATUS_INVALID_ARGUMENT);
  fuzz_host_call_t* call = &fuzz_state.host_calls[fuzz_state.host_call_count];
  char what[96];
  snprintf(what, sizeof(what),
           "hal_device_queue_host_call(queue %u, %zu waits, %zu signals)",
           queue, fuzz_list_count(&waits), fuzz_list_count(&signals));
  hal_status_code_t code = fuzz_result(
      hal_device_queue_host_call(form == 2 ? NULL : fuzz_process.device, queue,
                                 waits.null_pointer ? NULL : &waits.list,
                                 signals.null_pointer ? NULL : &signals.list,
                                 form == 1 ? NULL : fuzz_host_call_fn, call),
      expect, what);
  if (code != HAL_STATUS_OK) {
    FUZZ_CHECK(atomic_load(&call->calls) == 0,
               "a refused host call called its function");
    return;
  }
  call->registered = true;
  ++fuzz_state.host_call_count;
  fuzz_submitted(&waits, &signals, NULL, 0);
}

// [queue] [wait list...] [signal list...] [form] [size byte] [buffer slot]
//
// hal_device_queue_alloca with the lists of a submission, then, accepted,
// its dealloca after the alloca's signals (or on nothing): validated as
// queue_execute's, plus the alloca's own refusals (form 1: size 0, 2:
// host-visible memory, 3: beyond the device; INVALID_ARGUMENT or
// RESOURCE_EXHAUSTED) and the dealloca's (form 4: of a buffer not from an
// alloca, INVALID_ARGUMENT; 5: a second dealloca, FAILED_PRECONDITION).
// Nothing uses the buffer, so whatever order the queue reaches them in,
// nothing touches freed memory (the virtual GPU's strict mode checks).
static void op_queue_alloca(fuzz_input_t* in) {
  uint32_t queue = fuzz_take_queue(in);
  fuzz_list_t waits, signals;
  take_list(in, &waits);
  take_list(in, &signals);
  int form = take_u8(in) % 6;
  uint64_t size = 1 + (uint64_t)take_u8(in) * 64;
  int slot = take_u8(in) % FUZZ_BUFFER_SLOTS;
  if (fuzz_lists_lend(&waits, &signals))
    return;
  hal_buffer_params_t params = {HAL_MEMORY_TYPE_DEVICE_LOCAL,
                                HAL_BUFFER_USAGE_DEFAULT};
  if (form == 1)
    size = 0;
  if (form == 2) {
    params.memory_type = HAL_MEMORY_TYPE_HOST_VISIBLE;
    params.usage |= HAL_BUFFER_USAGE_MAPPING;
  }
  if (form == 3)
    size = fuzz_process.properties.total_memory + 1;
  fuzz_expectation_t expect =
      fuzz_expect_submission(false, queue, &waits, &signals, false);
  if (expect.kind == FUZZ_EXPECT_OK && (form == 1 || form == 2))
    expect = fuzz_error(HAL_STATUS_INVALID_ARGUMENT);
  if (expect.kind == FUZZ_EXPECT_OK && form == 3)
    expect = fuzz_error(HAL_STATUS_RESOURCE_EXHAUSTED);
  if (expect.kind == FUZZ_EXPECT_OK && fuzz_list_repeats(&signals))
    expect = fuzz_error(HAL_STATUS_INVALID_ARGUMENT);
  char what[96];
  snprintf(what, sizeof(what),
           "hal_device_queue_alloca(queue %u, %zu waits, %zu signals, %" PRIu64
           " bytes)",
           queue, fuzz_list_count(&waits), fuzz_list_count(&signals), size);
  hal_buffer_t* buffer = NULL;
  hal_status_code_t code = fuzz_result(
      hal_device_queue_alloca(
          fuzz_process.device, queue, waits.null_pointer ? NULL : &waits.list,
          signals.null_pointer ? NULL : &signals.list, params, size, &buffer),
      expect, what);
  if (code != HAL_STATUS_OK) {
    FUZZ_CHECK(buffer == NULL, "a refused alloca returned a buffer");
    return;
  }
  fuzz_submitted(&waits, &signals, NULL, 0);
  // The dealloca waits for the alloca's signals (queue_execute's rules
  // already held for them); no signals of its own.
  queue %= fuzz_process.properties.queue_count;
  hal_semaphore_list_t after =
      signals.null_pointer ? hal_semaphore_list_empty() : signals.list;
  if (form == 4) {
    fuzz_buffer_t* plain = fuzz_buffer_slot(slot);
    if (plain) {
      fuzz_result(hal_device_queue_dealloca(fuzz_process.device, queue, &after,
                                            NULL, plain->handle),
                  fuzz_error(HAL_STATUS_INVALID_ARGUMENT),
                  "hal_device_queue_dealloca(a buffer not from an alloca)");
    }
  }
  fuzz_result(hal_device_queue_dealloca(fuzz_process.device, queue, &after,
                                        NULL, buffer),
              fuzz_ok(), "hal_device_queue_dealloca");
  fuzz_list_t none;
  memset(&none, 0, sizeof(none));
  none.null_pointer = true;
  fuzz_submitted(&signals, &none, NULL, 0);
  if (form == 5) {
    fuzz_result(hal_device_queue_dealloca(fuzz_process.device, queue, &after,
                                          NULL, buffer),
                fuzz_error(HAL_STATUS_FAILED_PRECONDITION),
                "a second hal_device_queue_dealloca");
  }
  hal_buffer_release(buffer);  // the submissions hold it while they need it
}

// [object slot kind] [slot] [call]
//
// An object of one kind passed where another kind is expected (a caller's
// wrong pointer): INVALID_ARGUMENT naming what it is, nothing changed (the
// per-step checks see every object as it was).
static void op_wrong_kind(fuzz_input_t* in) {
  int kind = take_u8(in) % 3;
  int slot = take_u8(in);
  int call = take_u8(in) % 4;
  void* object = NULL;
  const char* is = NULL;
  if (kind == 0) {
    object = fuzz_semaphore_at(slot % FUZZ_SEMAPHORE_SLOTS);
    is = "is a semaphore";
  } else if (kind == 1) {
    fuzz_buffer_t* b = fuzz_buffer_slot(slot % FUZZ_BUFFER_SLOTS);
    object = b ? b->handle : NULL;
    is = "is a buffer";
  } else {
    fuzz_command_buffer_t* c =
        fuzz_command_buffer_slot(slot % FUZZ_COMMAND_BUFFER_SLOTS);
    object = c ? c->handle : NULL;
    is = "is a command buffer";
  }
  if (!object)
    return;
  // Each call takes a kind the object is not.
  hal_status_t status = HAL_OK;
  const char* what = NULL;
  uint8_t byte = 0;
  if (call == 0 && kind != 1) {
    what = "hal_buffer_read";
    status = hal_buffer_read((hal_buffer_t*)object, 0, &byte, 1);
  } else if (call == 1 && kind != 0) {
    uint64_t value = 0;
    what = "hal_semaphore_query";
    status = hal_semaphore_query((hal_semaphore_t*)object, &value);
  } else if (call == 2 && kind != 2) {
    what = "hal_command_buffer_end";
    status = hal_command_buffer_end((hal_command_buffer_t*)object);
  } else {
    what = "hal_driver_query_device_count";
    uint32_t count = 0;
    status = hal_driver_query_device_count((hal_driver_t*)object, &count);
  }
  const char* message = hal_status_message(status);
  FUZZ_CHECK(hal_status_code(status) == HAL_STATUS_INVALID_ARGUMENT &&
                 strstr(message, is) != NULL,
             "%s on an object that %s returned %s: %s", what, is + 3,
             hal_status_code_string(hal_status_code(status)), message);
  fuzz_trace("%s on an object that %s -> INVALID_ARGUMENT", what, is + 3);
  hal_status_free(status);
}

// [buffer slot] [kind: 0 fill, 1 update, 2 copy] [range...] [pattern u32]
// [pattern length] [source slot] [queue]
//
// Records one op into a private ONE_SHOT command buffer, submits it alone
// signaling a private semaphore and waits a few milliseconds. If the wait
// succeeds the op is complete (S5): the buffer must hold exactly its bytes,
// unless other submitted work may write the buffer.
static void op_device_op_and_verify(fuzz_input_t* in) {
  fuzz_buffer_t* b = fuzz_buffer_slot(take_slot(in, FUZZ_BUFFER_SLOTS));
  int kind = take_u8(in) % 3;
  uint64_t offset = 0, length = 0;
  take_range(in, b ? b->size : 64, 4, &offset, &length);
  uint32_t pattern_bits = take_u32(in);
  size_t pattern_length =
      fuzz_pattern_lengths[take_u8(in) % 3];  // the valid ones
  fuzz_buffer_t* source = fuzz_buffer_slot(take_slot(in, FUZZ_BUFFER_SLOTS));
  uint32_t queue = take_u8(in) % fuzz_process.properties.queue_count;
  if (!b)
    return;
  uint64_t resolved = length;
  if (!fuzz_range_valid(b->size, offset, length, &resolved) || !resolved)
    return;

  hal_command_buffer_t* command_buffer = NULL;
  fuzz_result(hal_device_create_command_buffer(fuzz_process.device,
                                               HAL_COMMAND_BUFFER_MODE_ONE_SHOT,
                                               &command_buffer),
              fuzz_ok(), "hal_device_create_command_buffer");
  fuzz_result(hal_command_buffer_begin(command_buffer), fuzz_ok(),
              "hal_command_buffer_begin");
  uint8_t* expected = malloc((size_t)resolved);
  FUZZ_CHECK(expected, "out of host memory");
  fuzz_command_buffer_t model = {.state = HAL_COMMAND_BUFFER_STATE_RECORDING};
  hal_status_code_t code;
  bool source_known = false;
  if (kind == 0) {
    uint8_t pattern[4];
    memcpy(pattern, &pattern_bits, 4);
    for (uint64_t i = 0; i < resolved; ++i)
      expected[i] = pattern[i % pattern_length];
    uint64_t checked = length;
    fuzz_expectation_t expect = fuzz_fill_expectation(
        &model, b, offset, &checked, false, pattern_length);
    code = fuzz_result(
        hal_command_buffer_fill_buffer(command_buffer, b->handle, offset,
                                       length, pattern, pattern_length),
        expect, "hal_command_buffer_fill_buffer");
  } else if (kind == 1) {
    for (uint64_t i = 0; i < resolved; ++i)
      expected[i] = (uint8_t)(pattern_bits + i * 3);
    fuzz_expectation_t expect = fuzz_ok();
    uint64_t checked = resolved;
    if (length == HAL_WHOLE_BUFFER) {
      expect = fuzz_error(HAL_STATUS_INVALID_ARGUMENT);
    } else if (resolved > HAL_MAX_UPDATE_LENGTH) {
      expect = fuzz_error(HAL_STATUS_OUT_OF_RANGE);
    } else {
      fuzz_record_buffer_check(b, HAL_BUFFER_USAGE_TRANSFER_TARGET, offset,
                               &checked, &expect);
    }
    code =
        fuzz_result(hal_command_buffer_update_buffer(
                        command_buffer, expected, 0, b->handle, offset, length),
                    expect, "hal_command_buffer_update_buffer");
  } else {
    // From the same offset of another buffer whose bytes are all known.
    if (!source || source == b || source->dirty || source->size < b->size) {
      code = HAL_STATUS_CANCELLED;
    } else {
      source_known = true;
      for (uint64_t i = 0; i < resolved; ++i) {
        source_known = source_known && source->known[offset + i];
        expected[i] = source->shadow[offset + i];
      }
      uint64_t checked = length;
      fuzz_expectation_t expect =
          fuzz_copy_expectation(&model, source, offset, b, offset, &checked);
      code = fuzz_result(
          hal_command_buffer_copy_buffer(command_buffer, source->handle, offset,
                                         b->handle, offset, length),
          expect, "hal_command_buffer_copy_buffer");
    }
  }
  fuzz_result(hal_command_buffer_end(command_buffer), fuzz_ok(),
              "hal_command_buffer_end");

  hal_semaphore_t* done = NULL;
  fuzz_result(hal_device_create_semaphore(fuzz_process.device, 0, &done),
              fuzz_ok(), "hal_device_create_semaphore");
  uint64_t one = 1;
  hal_semaphore_list_t signals = {1, &done, &one};
  bool was_clean = !b->dirty;
  hal_status_code_t submitted =
      code == HAL_STATUS_OK ? fuzz_result(hal_device_queue_execute(
                                              fuzz_process.device, queue, NULL,
                                              &signals, 1, &command_buffer),
                                          fuzz_ok(), "hal_device_queue_execute")
                            : HAL_STATUS_CANCELLED;
  if (submitted == HAL_STATUS_OK) {
    hal_status_code_t waited = fuzz_result(
        hal_semaphore_wait(done, 1, hal_make_timeout_ns(5 * FUZZ_NS_PER_MS)),
        fuzz_any(), "hal_semaphore_wait");
    FUZZ_CHECK(
        waited == HAL_STATUS_OK || waited == HAL_STATUS_DEADLINE_EXCEEDED,
        "work waiting on nothing failed its signal with %s",
        hal_status_code_string(waited));
    bool readable = b->usage & (HAL_BUFFER_USAGE_TRANSFER_SOURCE |
                                HAL_BUFFER_USAGE_MAPPING);
    bool computable = kind != 2 || source_known;
    if (waited != HAL_STATUS_OK) {
      b->dirty = true;  // may still run: its bytes come later
    } else if (was_clean && computable) {
      if (readable) {
        uint8_t* actual = malloc((size_t)resolved);
        FUZZ_CHECK(actual, "out of host memory");
        fuzz_result(hal_buffer_read(b->handle, offset, actual, resolved),
                    fuzz_ok(), "hal_buffer_read");
        for (uint64_t i = 0; i < resolved; ++i) {
          FUZZ_CHECK(actual[i] == expected[i],
                     "after its signal was observed, byte %" PRIu64
                     " of buffer %u is 0x%02x; the %s wrote 0x%02x",
                     offset + i, b->id, actual[i],
                     kind == 0 ? "fill" : (kind == 1 ? "update" : "copy"),
                     expected[i]);
        }
        free(actual);
      }
      fuzz_buffer_learn(b, offset, expected, resolved);
    } else if (was_clean) {
      memset(b->known + offset, 0, (size_t)resolved);
    }
  }
  free(expected);
  hal_semaphore_release(done);
  hal_command_buffer_release(command_buffer);
}

// [form: 0 properties, 1 stats, 2 info, 3 NULL device / out pointers]
static void op_device_query(fuzz_input_t* in) {
  int form = take_u8(in) % 4;
  hal_device_t* device = fuzz_process.device;
  if (form == 0) {
    hal_device_properties_t properties;
    fuzz_result(hal_device_query_properties(device, &properties), fuzz_ok(),
                "hal_device_query_properties");
    FUZZ_CHECK(
        properties.queue_count == fuzz_process.properties.queue_count &&
            properties.queue_count == hal_device_info(device)->queue_count,
        "the device's queue count changed");
  } else if (form == 1) {
    hal_memory_stats_t stats;
    fuzz_result(
        hal_device_allocator_query_stats(hal_device_allocator(device), &stats),
        fuzz_ok(), "hal_device_allocator_query_stats");
    FUZZ_CHECK(stats.allocated_bytes <= stats.total_bytes,
               "%" PRIu64 " bytes allocated of %" PRIu64, stats.allocated_bytes,
               stats.total_bytes);
  } else if (form == 2) {
    FUZZ_CHECK(hal_device_driver(device) == fuzz_process.driver &&
                   hal_device_info(device)->index == 0,
               "the device's driver or index changed");
  } else {
    hal_device_properties_t properties;
    hal_memory_stats_t stats;
    fuzz_result(hal_device_query_properties(NULL, &properties),
                fuzz_error(HAL_STATUS_INVALID_ARGUMENT),
                "hal_device_query_properties");
    fuzz_result(hal_device_query_properties(device, NULL),
                fuzz_error(HAL_STATUS_INVALID_ARGUMENT),
                "hal_device_query_properties");
    fuzz_result(hal_device_allocator_query_stats(NULL, &stats),
                fuzz_error(HAL_STATUS_INVALID_ARGUMENT),
                "hal_device_allocator_query_stats");
    FUZZ_CHECK(hal_device_allocator(NULL) == NULL && !hal_device_info(NULL),
               "accessors of a NULL device returned something");
  }
}

//===----------------------------------------------------------------------===//
// The interpreter
//===----------------------------------------------------------------------===//

// The opcode table. fuzz/gen_corpus.py reads this list (names and order),
// so seeds stay in step with it.
#define FUZZ_OPS(X)                                          \
  X(SEMAPHORE_CREATE_DEVICE, op_semaphore_create_device)     \
  X(SEMAPHORE_CREATE_HOST, op_semaphore_create_host)         \
  X(SEMAPHORE_RELEASE, op_semaphore_release)                 \
  X(SEMAPHORE_QUERY, op_semaphore_query)                     \
  X(SEMAPHORE_SIGNAL, op_semaphore_signal)                   \
  X(SEMAPHORE_FAIL, op_semaphore_fail)                       \
  X(SEMAPHORE_WAIT, op_semaphore_wait)                       \
  X(LIST_WAIT, op_list_wait)                                 \
  X(CALLBACK_ADD, op_callback_add)                           \
  X(TIMEPOINT_CANCEL, op_timepoint_cancel)                   \
  X(TIMEPOINT_RELEASE, op_timepoint_release)                 \
  X(BUFFER_ALLOCATE, op_buffer_allocate)                     \
  X(BUFFER_RELEASE, op_buffer_release)                       \
  X(BUFFER_WRITE, op_buffer_write)                           \
  X(BUFFER_READ, op_buffer_read)                             \
  X(BUFFER_MAP, op_buffer_map)                               \
  X(MAPPING_ACCESS, op_mapping_access)                       \
  X(BUFFER_UNMAP, op_buffer_unmap)                           \
  X(COMMAND_BUFFER_CREATE, op_command_buffer_create)         \
  X(COMMAND_BUFFER_RELEASE, op_command_buffer_release)       \
  X(COMMAND_BUFFER_BEGIN, op_command_buffer_begin)           \
  X(COMMAND_BUFFER_END, op_command_buffer_end)               \
  X(COMMAND_BUFFER_BARRIER, op_command_buffer_barrier)       \
  X(COMMAND_BUFFER_FILL, op_command_buffer_fill)             \
  X(COMMAND_BUFFER_UPDATE, op_command_buffer_update)         \
  X(COMMAND_BUFFER_COPY, op_command_buffer_copy)             \
  X(COMMAND_BUFFER_DISPATCH, op_command_buffer_dispatch)     \
  X(COMMAND_BUFFER_QUERY_INFO, op_command_buffer_query_info) \
  X(EXECUTABLE_CREATE, op_executable_create)                 \
  X(EXECUTABLE_RELEASE, op_executable_release)               \
  X(QUEUE_EXECUTE, op_queue_execute)                         \
  X(DEVICE_OP_AND_VERIFY, op_device_op_and_verify)           \
  X(DEVICE_QUERY, op_device_query)                           \
  X(HOST_CALL, op_host_call)                                 \
  X(WRONG_KIND, op_wrong_kind)                               \
  X(QUEUE_ALLOCA, op_queue_alloca)

#define FUZZ_OP_ENUM(name, fn) FUZZ_OP_##name,
enum { FUZZ_OPS(FUZZ_OP_ENUM) FUZZ_OP_COUNT };
#undef FUZZ_OP_ENUM

typedef struct fuzz_op_t {
  const char* name;
  void (*run)(fuzz_input_t* in);
} fuzz_op_t;

#define FUZZ_OP_ENTRY(name, fn) {#name, fn},
static const fuzz_op_t fuzz_ops[FUZZ_OP_COUNT] = {FUZZ_OPS(FUZZ_OP_ENTRY)};
#undef FUZZ_OP_ENTRY

// Polls |done| until it returns true or the drain bound passes.
static bool fuzz_poll(bool (*done)(void)) {
  hal_time_t deadline = hal_time_now() + fuzz_process.drain_ns;
  while (!done()) {
    if (hal_time_now() > deadline)
      return false;
    hal_sleep_until(hal_time_now() + 100000);  // 0.1 ms
  }
  return true;
}

// Only the table's (or the kept list's) reference is left on each object:
// the device retired every submission holding them (Q3).
static bool fuzz_only_our_references(void) {
  for (int i = 0; i < FUZZ_SEMAPHORE_SLOTS; ++i) {
    hal_semaphore_t* s = fuzz_state.semaphores[i].handle;
    if (s && hal_resource_ref_count(s) != 1)
      return false;
  }
  for (int i = 0; i < fuzz_state.kept_count; ++i) {
    if (hal_resource_ref_count(fuzz_state.kept[i].handle) != 1)
      return false;
  }
  for (int i = 0; i < FUZZ_COMMAND_BUFFER_SLOTS; ++i) {
    hal_command_buffer_t* c = fuzz_state.command_buffers[i].handle;
    if (c && hal_resource_ref_count(c) != 1)
      return false;
  }
  return true;
}

// Once no command buffer is left, only the table's reference is left on
// each buffer (recordings retain their buffers).
static bool fuzz_only_our_buffer_references(void) {
  for (int i = 0; i < FUZZ_BUFFER_SLOTS; ++i) {
    hal_buffer_t* b = fuzz_state.buffers[i].handle;
    if (b && hal_resource_ref_count(b) != 1)
      return false;
  }
  return true;
}

static bool fuzz_device_memory_at_baseline(void) {
  hal_memory_stats_t stats;
  hal_status_t status = hal_device_allocator_query_stats(
      hal_device_allocator(fuzz_process.device), &stats);
  if (status) {
    hal_status_free(status);
    return false;
  }
  return stats.allocation_count == fuzz_process.baseline.allocation_count &&
         stats.allocated_bytes == fuzz_process.baseline.allocated_bytes;
}

static bool fuzz_callbacks_done(void) {
  for (int i = 0; i < fuzz_state.callback_count; ++i) {
    fuzz_callback_t* c = &fuzz_state.callbacks[i];
    if (c->registered && !atomic_load_explicit(&c->done, memory_order_acquire))
      return false;
  }
  return true;
}

static bool fuzz_host_calls_done(void) {
  for (int i = 0; i < fuzz_state.host_call_count; ++i) {
    if (!atomic_load_explicit(&fuzz_state.host_calls[i].done,
                              memory_order_acquire)) {
      return false;
    }
  }
  return true;
}

static bool fuzz_counting_allocator_empty(void) {
  return atomic_load(&fuzz_state.counting.live) == 0;
}

static void fuzz_fail_semaphore(hal_semaphore_t* semaphore) {
  if (semaphore) {
    hal_semaphore_fail(semaphore, hal_make_status(HAL_STATUS_CANCELLED,
                                                  "hal-api-fuzz teardown"));
  }
}

// Releases everything the input made and checks that nothing stays behind.
static void fuzz_teardown(void) {
  fuzz_op_name = "teardown";
  for (int i = 0; i < FUZZ_MAPPING_SLOTS; ++i)
    fuzz_mapping_drop(&fuzz_state.mappings[i]);
  for (int i = 0; i < FUZZ_TIMEPOINT_SLOTS; ++i)
    fuzz_timepoint_drop(&fuzz_state.timepoints[i]);
  // Work parked on a semaphore nobody will signal retires once it fails.
  for (int i = 0; i < FUZZ_SEMAPHORE_SLOTS; ++i)
    fuzz_fail_semaphore(fuzz_state.semaphores[i].handle);
  for (int i = 0; i < fuzz_state.kept_count; ++i)
    fuzz_fail_semaphore(fuzz_state.kept[i].handle);
  for (int i = 0; i < FUZZ_SEMAPHORE_SLOTS; ++i) {
    fuzz_semaphore_t* s = &fuzz_state.semaphores[i];
    FUZZ_CHECK(!s->lent || fuzz_semaphore_settle_lent(s),
               "a pending callback did not run when its semaphore failed "
               "(T1)");
  }
  FUZZ_CHECK(fuzz_poll(fuzz_host_calls_done),
             "a host call's function was never called though every "
             "semaphore it waited on failed");
  for (int i = 0; i < fuzz_state.host_call_count; ++i) {
    FUZZ_CHECK(atomic_load(&fuzz_state.host_calls[i].calls) == 1,
               "host call %d's function was called %d times (exactly once)", i,
               atomic_load(&fuzz_state.host_calls[i].calls));
  }
  FUZZ_CHECK(fuzz_poll(fuzz_only_our_references),
             "the device still holds objects of retired or failed work %" PRId64
             " ms after every semaphore failed (a hang, or a reference "
             "leaked)",
             fuzz_process.drain_ns / 1000000);
  fuzz_check_state();
  for (int i = 0; i < FUZZ_SEMAPHORE_SLOTS; ++i) {
    fuzz_semaphore_t* s = &fuzz_state.semaphores[i];
    FUZZ_CHECK(!s->handle || s->failed, "a failed semaphore queries OK");
    fuzz_semaphore_drop(s);
  }
  for (int i = 0; i < fuzz_state.kept_count; ++i) {
    fuzz_semaphore_observe(&fuzz_state.kept[i], "teardown");
    FUZZ_CHECK(fuzz_state.kept[i].failed, "a failed semaphore queries OK");
    hal_semaphore_release(fuzz_state.kept[i].handle);
  }
  for (int i = 0; i < FUZZ_COMMAND_BUFFER_SLOTS; ++i)
    fuzz_command_buffer_drop(&fuzz_state.command_buffers[i]);
  FUZZ_CHECK(fuzz_poll(fuzz_only_our_buffer_references),
             "buffers are still referenced %" PRId64
             " ms after every command buffer was released and its work "
             "retired",
             fuzz_process.drain_ns / 1000000);
  for (int i = 0; i < FUZZ_BUFFER_SLOTS; ++i)
    fuzz_buffer_drop(&fuzz_state.buffers[i]);
  for (int i = 0; i < FUZZ_EXECUTABLE_SLOTS; ++i)
    hal_executable_release(fuzz_state.executables[i]);
  hal_resource_wait_deferred();
  FUZZ_CHECK(fuzz_poll(fuzz_device_memory_at_baseline),
             "device buffers are still allocated %" PRId64
             " ms after every buffer was released",
             fuzz_process.drain_ns / 1000000);
  FUZZ_CHECK(fuzz_poll(fuzz_callbacks_done),
             "a callback never ran though its semaphore failed or was "
             "destroyed (T1)");
  fuzz_check_callbacks();
  for (int i = 0; i < fuzz_state.callback_count; ++i) {
    fuzz_callback_t* c = &fuzz_state.callbacks[i];
    FUZZ_CHECK(!c->registered || atomic_load(&c->calls) == 1,
               "callback %d ran %d times (T1: exactly once)", i,
               atomic_load(&c->calls));
  }
  FUZZ_CHECK(fuzz_poll(fuzz_counting_allocator_empty),
             "%" PRIdPTR
             " host allocations of released semaphores were "
             "never freed",
             (intptr_t)atomic_load(&fuzz_state.counting.live));
  memset(&fuzz_state, 0, sizeof(fuzz_state));
}

//===----------------------------------------------------------------------===//
// libFuzzer entry points
//===----------------------------------------------------------------------===//

int LLVMFuzzerInitialize(int* argc, char*** argv);
int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
const char* __asan_default_options(void);
const char* __ubsan_default_options(void);

// Sanitizer reports must end the run, so libFuzzer saves the input.
__attribute__((visibility("default"))) const char* __asan_default_options(
    void) {
  return "detect_leaks=1:abort_on_error=1:halt_on_error=1";
}
__attribute__((visibility("default"))) const char* __ubsan_default_options(
    void) {
  return "halt_on_error=1:abort_on_error=1:print_stacktrace=1";
}

static void fuzz_process_teardown(void) {
  hal_executable_release(fuzz_process.kernels);
  hal_device_release(fuzz_process.device);
  hal_driver_release(fuzz_process.driver);
  hal_driver_registry_free(fuzz_process.registry);
  hal_resource_wait_deferred();
  memset(&fuzz_process, 0, sizeof(fuzz_process));
}

static void fuzz_setup_failed(const char* what, hal_status_t status) {
  fprintf(stderr, "hal-api-fuzz: %s: ", what);
  hal_status_fprint(stderr, status);
  hal_status_free(status);
  exit(1);
}

int LLVMFuzzerInitialize(int* argc, char*** argv) {
#if FUZZ_HAVE_MALLOC_HOOKS
  // Before any thread starts (allocator_interface.h).
  __sanitizer_install_malloc_and_free_hooks(fuzz_malloc_hook, fuzz_free_hook);
#endif
  // The build tree's plugins and virtual GPU unless the environment names
  // others; strict mode with misuse fatal, so a driver's misuse of the
  // runtime is a crash libFuzzer saves; every host wait bounded.
  setenv("HAL_DRIVER_PATH", HAL_FUZZ_DRIVER_DIR, 0);
  setenv("HAL_CUDA_LIBRARY", HAL_FUZZ_VGPU_CUDA, 0);
  if (HAL_FUZZ_VGPU_HIP[0])
    setenv("HAL_HIP_LIBRARY", HAL_FUZZ_VGPU_HIP, 0);
  setenv("VGPU_STRICT", "1", 0);
  setenv("VGPU_ABORT_ON_MISUSE", "1", 0);
  setenv("VGPU_DEVICE_MEMORY_MB", "64", 0);
  setenv("VGPU_MAX_WAIT_MS", "10000", 0);
  setenv("HAL_SYNC_MAX_WAIT_MS", "2000", 0);
  const char* trace = getenv("HAL_FUZZ_TRACE");
  fuzz_trace_enabled = trace && strcmp(trace, "1") == 0;
  const char* corrupt = getenv("HAL_FUZZ_CORRUPT_IMAGES");
  fuzz_process.corrupt_images = corrupt && strcmp(corrupt, "1") == 0;
  const char* drain = getenv("HAL_FUZZ_DRAIN_MS");
  long drain_ms = drain ? strtol(drain, NULL, 10) : 0;
  fuzz_process.drain_ns =
      (drain_ms > 0 ? drain_ms : FUZZ_DEFAULT_DRAIN_MS) * FUZZ_NS_PER_MS;
  const char* driver_name = getenv("HAL_FUZZ_DRIVER");
  if (!driver_name || !*driver_name)
    driver_name = "cuda_stream";
  fprintf(stderr, "hal-api-fuzz: driver %s (HAL_FUZZ_DRIVER), %d ops\n",
          driver_name, FUZZ_OP_COUNT);

  hal_status_t status = hal_driver_registry_create(NULL, hal_allocator_system(),
                                                   &fuzz_process.registry);
  if (status)
    fuzz_setup_failed("creating the registry", status);
  status = hal_driver_registry_create_driver(fuzz_process.registry, driver_name,
                                             hal_allocator_system(),
                                             &fuzz_process.driver);
  if (status)
    fuzz_setup_failed("creating the driver", status);
  status = hal_driver_create_device_by_index(
      fuzz_process.driver, 0, hal_allocator_system(), &fuzz_process.device);
  if (status)
    fuzz_setup_failed("creating device 0", status);
  status = hal_device_query_properties(fuzz_process.device,
                                       &fuzz_process.properties);
  if (status)
    fuzz_setup_failed("querying the device", status);
  status = hal_device_allocator_query_stats(
      hal_device_allocator(fuzz_process.device), &fuzz_process.baseline);
  if (status)
    fuzz_setup_failed("querying device memory", status);
  fuzz_process.kernel_image = hal_kernel_image_for(fuzz_process.device, NULL);
  if (fuzz_process.kernel_image) {
    status = hal_kernel_create_executable(fuzz_process.device,
                                          &fuzz_process.kernels);
    if (status)
      fuzz_setup_failed("loading the kernels", status);
  }
  atexit(fuzz_process_teardown);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz_input_t in = {data, size, 0};
  long allocations_before = atomic_load(&fuzz_live_allocations);
  memset(&fuzz_state, 0, sizeof(fuzz_state));
  for (fuzz_step = 0; fuzz_step < FUZZ_MAX_STEPS && !fuzz_exhausted(&in);
       ++fuzz_step) {
    const fuzz_op_t* op = &fuzz_ops[take_u8(&in) % FUZZ_OP_COUNT];
    fuzz_op_name = op->name;
    op->run(&in);
    fuzz_check_state();
  }
  fuzz_teardown();
  fuzz_wait_for_allocations(allocations_before);
  fuzz_op_name = "between inputs";
  return 0;
}
