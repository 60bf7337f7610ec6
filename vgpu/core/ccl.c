// Copyright 2026 The HAL Authors.
//
// The collectives engine (ccl.h has the contract).
//
// One registry lock guards every communicator's bookkeeping: joins,
// arrivals, matches, aborts. The data moves outside it: the last rank to
// arrive takes the collective off its communicator's list, so nothing else
// can reach it, computes every result into scratch memory (a rank's send
// and receive buffers may be the same memory) and then writes the results
// and completes the marks. A rank's buffers are not touched before every
// rank arrived, nor after its mark completed.

#include "ccl.h"

#include "ccl_shm.h"

#include <dlfcn.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

// nccl.h's codes, spelled here so the engine needs no vendor header.
enum {
  CCL_INT8 = 0,
  CCL_UINT8 = 1,
  CCL_INT32 = 2,
  CCL_UINT32 = 3,
  CCL_INT64 = 4,
  CCL_UINT64 = 5,
  CCL_FLOAT16 = 6,
  CCL_FLOAT32 = 7,
  CCL_FLOAT64 = 8,
  CCL_BFLOAT16 = 9,
  CCL_FLOAT8E4M3 = 10,
  CCL_FLOAT8E5M2 = 11,
};
enum { CCL_SUM = 0, CCL_PROD = 1, CCL_MAX = 2, CCL_MIN = 3, CCL_AVG = 4 };

// One collective across the ranks, or one send/receive pair.
typedef struct ccl_meeting {
  struct ccl_meeting* next;
  uint64_t seq;
  bool p2p;
  int from, to;  // p2p: the sending and the receiving rank
  int arrived;
  bool present[VGPU_CCL_MAX_RANKS];
  vgpu_ccl_call calls[VGPU_CCL_MAX_RANKS];
  vgpu_mark* marks[VGPU_CCL_MAX_RANKS];
  uint64_t opened_ns;  // when the first rank arrived (the watchdog's clock)
  // Once every rank of this process arrived at a meeting with ranks in
  // other processes, the proxy (ccl_proxy_main) owns it: where it is in
  // the protocol, and since when it waits for the other processes.
  int stage;
  size_t chunk, chunks, chunk_elements, length;
  uint64_t target;
  uint64_t waiting_ns;
} ccl_meeting;

typedef struct ccl_group {
  struct ccl_group* next;
  uint8_t id[VGPU_CCL_ID_BYTES];
  int rank_count;
  int joined;
  bool complete;  // every rank joined once
  vgpu_ccl_comm* ranks[VGPU_CCL_MAX_RANKS];
  bool left[VGPU_CCL_MAX_RANKS];     // after the join completed
  bool gave_up[VGPU_CCL_MAX_RANKS];  // timed out joining
  int first_left;                    // the first rank that left (-1: none)
  vgpu_status failure;               // the first abort or error, sticky
  char failure_message[384];
  ccl_meeting* meetings;  // not yet met
  // Ranks in other processes meet through the shared segment (ccl_shm.h),
  // mapped by the first rank of this process to join (NULL: this system
  // has none, so every rank must be in this process). Once every rank
  // joined, |remote| says whether some rank is elsewhere and |local| which
  // are this process's; then the proxy thread runs the meetings of
  // |proxied| with the other processes, and a rank that leaves while one
  // of them holds it is |leaving| until the proxy let it go.
  ccl_shm* shm;
  bool remote;
  int local_count;
  bool local[VGPU_CCL_MAX_RANKS];
  bool leaving[VGPU_CCL_MAX_RANKS];
  ccl_meeting* proxied;  // in arrival order
  pthread_t proxy;
  bool proxy_running;
  bool proxy_stop;
} ccl_group;

struct vgpu_ccl_comm {
  ccl_group* group;
  int rank;
  int device;         // -1: none (the engine alone, in its test)
  uint64_t next_seq;  // collectives arrived so far
  uint64_t splits;    // vgpu_ccl_comm_split calls so far
  uint64_t sends[VGPU_CCL_MAX_RANKS];
  uint64_t receives[VGPU_CCL_MAX_RANKS];
  // Collectives queued on streams and not yet run (under |mu|): destroy
  // waits for them, they use the communicator when they run.
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int queued;
};

static struct {
  pthread_mutex_t mu;
  pthread_cond_t cv;  // a join completed or gave up
  bool initialized;
  ccl_group* groups;
  // The watchdog (ccl_watchdog_main) runs while any meeting waits for a
  // rank; it exits when none does and starts again with the next.
  bool watchdog_running;
} ccl_registry = {.mu = PTHREAD_MUTEX_INITIALIZER};

// Under the registry lock. The condition variable waits on the monotonic
// clock (vgpu_cond_init).
static void ccl_registry_init_locked(void) {
  if (!ccl_registry.initialized) {
    vgpu_cond_init(&ccl_registry.cv);
    ccl_registry.initialized = true;
  }
}

// The id's first bytes, for messages: ids are random, so they tell
// communicators apart.
static void ccl_id_text(const uint8_t* id, char out[17]) {
  for (int i = 0; i < 8; ++i)
    snprintf(out + 2 * i, 3, "%02x", id[i]);
}

size_t vgpu_ccl_type_size(int type) {
  switch (type) {
    case CCL_INT8:
    case CCL_UINT8:
      return 1;
    case CCL_FLOAT16:
    case CCL_BFLOAT16:
      return 2;
    case CCL_INT32:
    case CCL_UINT32:
    case CCL_FLOAT32:
      return 4;
    case CCL_INT64:
    case CCL_UINT64:
    case CCL_FLOAT64:
      return 8;
  }
  return 0;
}

static const char* ccl_kind_name(vgpu_ccl_kind kind) {
  static const char* const names[] = {"all_reduce", "broadcast",      "reduce",
                                      "all_gather", "reduce_scatter", "send",
                                      "recv"};
  return (unsigned)kind < sizeof(names) / sizeof(names[0]) ? names[kind]
                                                           : "unknown";
}

static bool ccl_kind_reduces(vgpu_ccl_kind kind) {
  return kind == VGPU_CCL_ALL_REDUCE || kind == VGPU_CCL_REDUCE ||
         kind == VGPU_CCL_REDUCE_SCATTER;
}

static bool ccl_kind_rooted(vgpu_ccl_kind kind) {
  return kind == VGPU_CCL_BROADCAST || kind == VGPU_CCL_REDUCE;
}

//===----------------------------------------------------------------------===//
// Element arithmetic
//===----------------------------------------------------------------------===//

static float ccl_half_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exponent = (h >> 10) & 0x1fu;
  uint32_t mantissa = h & 0x3ffu;
  uint32_t bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | (mantissa << 13);  // inf, nan
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = sign;
  } else {  // subnormal: normalize
    exponent = 113;
    while (!(mantissa & 0x400u)) {
      mantissa <<= 1;
      --exponent;
    }
    bits = sign | (exponent << 23) | ((mantissa & 0x3ffu) << 13);
  }
  float f;
  memcpy(&f, &bits, sizeof(f));
  return f;
}

// Round to nearest, ties to even; overflow to infinity.
static uint16_t ccl_float_to_half(float f) {
  uint32_t bits;
  memcpy(&bits, &f, sizeof(bits));
  uint16_t sign = (uint16_t)((bits >> 16) & 0x8000u);
  uint32_t exponent = (bits >> 23) & 0xffu;
  uint32_t mantissa = bits & 0x7fffffu;
  if (exponent == 0xff)  // inf, nan (kept quiet)
    return (uint16_t)(sign | 0x7c00u | (mantissa ? 0x200u : 0));
  int32_t e = (int32_t)exponent - 127 + 15;
  if (e >= 0x1f)
    return (uint16_t)(sign | 0x7c00u);
  if (e <= 0) {  // subnormal or zero
    if (e < -10)
      return sign;
    mantissa |= 0x800000u;
    uint32_t shift = (uint32_t)(14 - e);
    uint32_t half = mantissa >> shift;
    uint32_t rest = mantissa & ((1u << shift) - 1);
    uint32_t midpoint = 1u << (shift - 1);
    if (rest > midpoint || (rest == midpoint && (half & 1)))
      ++half;
    return (uint16_t)(sign | half);
  }
  uint32_t half = ((uint32_t)e << 10) | (mantissa >> 13);
  uint32_t rest = mantissa & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1)))
    ++half;  // may carry into the exponent: still right, up to infinity
  return (uint16_t)(sign | half);
}

static float ccl_bf16_to_float(uint16_t b) {
  uint32_t bits = (uint32_t)b << 16;
  float f;
  memcpy(&f, &bits, sizeof(f));
  return f;
}

static uint16_t ccl_float_to_bf16(float f) {
  uint32_t bits;
  memcpy(&bits, &f, sizeof(bits));
  if ((bits & 0x7f800000u) == 0x7f800000u && (bits & 0x7fffffu))
    return (uint16_t)((bits >> 16) | 0x40u);  // quiet nan
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return (uint16_t)(bits >> 16);
}

#define CCL_COMBINE(a, b, reduction)                  \
  ((reduction) == CCL_PROD  ? (a) * (b)               \
   : (reduction) == CCL_MAX ? ((b) > (a) ? (b) : (a)) \
   : (reduction) == CCL_MIN ? ((b) < (a) ? (b) : (a)) \
                            : (a) + (b))

// dst[i] = the reduction over ranks of srcs[r][i], a rank at a time (each
// inner loop one operation over contiguous memory, which the compiler
// vectorizes; the order of the operands is the same as element by
// element). Integers add and multiply as their unsigned type |U| (they
// wrap, as on the device, and signed overflow is not undefined behavior
// here); avg divides the sum (integers truncate).
#define CCL_REDUCE_NATIVE(T, U)                       \
  do {                                                \
    T* out = dst;                                     \
    memcpy(out, srcs[0], count * sizeof(T));          \
    for (int r = 1; r < ranks; ++r) {                 \
      const T* in = srcs[r];                          \
      switch (reduction) {                            \
        case CCL_PROD:                                \
          for (size_t i = 0; i < count; ++i)          \
            out[i] = (T)((U)out[i] * (U)in[i]);       \
          break;                                      \
        case CCL_MAX:                                 \
          for (size_t i = 0; i < count; ++i)          \
            out[i] = in[i] > out[i] ? in[i] : out[i]; \
          break;                                      \
        case CCL_MIN:                                 \
          for (size_t i = 0; i < count; ++i)          \
            out[i] = in[i] < out[i] ? in[i] : out[i]; \
          break;                                      \
        default:                                      \
          for (size_t i = 0; i < count; ++i)          \
            out[i] = (T)((U)out[i] + (U)in[i]);       \
          break;                                      \
      }                                               \
    }                                                 \
    if (reduction == CCL_AVG) {                       \
      for (size_t i = 0; i < count; ++i)              \
        out[i] = (T)(out[i] / (T)ranks);              \
    }                                                 \
  } while (0)

// Through float: float16 and bfloat16 (NCCL accumulates them wider too).
#define CCL_REDUCE_VIA_FLOAT(to_float, from_float)            \
  do {                                                        \
    uint16_t* out = dst;                                      \
    for (size_t i = 0; i < count; ++i) {                      \
      float value = to_float(((const uint16_t*)srcs[0])[i]);  \
      for (int r = 1; r < ranks; ++r) {                       \
        float next = to_float(((const uint16_t*)srcs[r])[i]); \
        value = CCL_COMBINE(value, next, reduction);          \
      }                                                       \
      if (reduction == CCL_AVG)                               \
        value /= (float)ranks;                                \
      out[i] = from_float(value);                             \
    }                                                         \
  } while (0)

static void ccl_reduce(int type, int reduction, void* dst,
                       const void* const* srcs, int ranks, size_t count) {
  switch (type) {
    case CCL_INT8:
      CCL_REDUCE_NATIVE(int8_t, uint8_t);
      break;
    case CCL_UINT8:
      CCL_REDUCE_NATIVE(uint8_t, uint8_t);
      break;
    case CCL_INT32:
      CCL_REDUCE_NATIVE(int32_t, uint32_t);
      break;
    case CCL_UINT32:
      CCL_REDUCE_NATIVE(uint32_t, uint32_t);
      break;
    case CCL_INT64:
      CCL_REDUCE_NATIVE(int64_t, uint64_t);
      break;
    case CCL_UINT64:
      CCL_REDUCE_NATIVE(uint64_t, uint64_t);
      break;
    case CCL_FLOAT32:
      CCL_REDUCE_NATIVE(float, float);
      break;
    case CCL_FLOAT64:
      CCL_REDUCE_NATIVE(double, double);
      break;
    case CCL_FLOAT16:
      CCL_REDUCE_VIA_FLOAT(ccl_half_to_float, ccl_float_to_half);
      break;
    case CCL_BFLOAT16:
      CCL_REDUCE_VIA_FLOAT(ccl_bf16_to_float, ccl_float_to_bf16);
      break;
  }
}

//===----------------------------------------------------------------------===//
// Joining and leaving
//===----------------------------------------------------------------------===//

static ccl_group* ccl_group_find_locked(const uint8_t* id) {
  for (ccl_group* g = ccl_registry.groups; g != NULL; g = g->next) {
    if (memcmp(g->id, id, VGPU_CCL_ID_BYTES) == 0)
      return g;
  }
  return NULL;
}

static void ccl_group_unlink_locked(ccl_group* group) {
  for (ccl_group** p = &ccl_registry.groups; *p != NULL; p = &(*p)->next) {
    if (*p == group) {
      *p = group->next;
      return;
    }
  }
}

// Under the lock: waits on the registry's condition variable (joins, the
// watchdog, and the proxy as meetings leave its hands) for at most |ns|.
static void ccl_registry_nap_locked(uint64_t ns) {
  struct timespec until;
  clock_gettime(CLOCK_MONOTONIC, &until);
  until.tv_sec += (time_t)(ns / 1000000000u);
  until.tv_nsec += (long)(ns % 1000000000u);
  if (until.tv_nsec >= 1000000000L) {
    until.tv_sec += 1;
    until.tv_nsec -= 1000000000L;
  }
  pthread_cond_timedwait(&ccl_registry.cv, &ccl_registry.mu, &until);
}

static void ccl_proxy_start_locked(ccl_group* group);

// Under the lock: the group after its last rank left or gave up.
static void ccl_group_free(ccl_group* group) {
  ccl_shm_close(group->shm);
  free(group);
}

// Under the lock, once every rank joined: which ranks are this process's,
// and the proxy when some are not.
static void ccl_group_completed_locked(ccl_group* group) {
  group->complete = true;
  // Every rank joined (here, or through the segment: ccl_shm_complete
  // learned it), so the name has done its work: unlinked now, a process
  // that dies later leaves nothing in /dev/shm.
  if (group->shm != NULL)
    (void)ccl_shm_complete(group->shm, NULL);
  if (group->shm != NULL && ccl_shm_process_count(group->shm) > 1) {
    group->remote = true;
    for (int r = 0; r < group->rank_count; ++r) {
      group->local[r] = ccl_shm_is_local(group->shm, r);
      group->local_count += group->local[r];
    }
    ccl_proxy_start_locked(group);
  }
  pthread_cond_broadcast(&ccl_registry.cv);
}

// Under the lock: whether every rank joined, here or (through the shared
// segment) anywhere.
static bool ccl_group_joined_locked(ccl_group* group) {
  if (!group->complete && group->shm != NULL &&
      ccl_shm_complete(group->shm, NULL)) {
    ccl_group_completed_locked(group);
  }
  return group->complete;
}

vgpu_status vgpu_ccl_join(const uint8_t id[VGPU_CCL_ID_BYTES], int rank_count,
                          int rank, uint64_t timeout_ns, vgpu_ccl_comm** out,
                          char* error, size_t error_size) {
  *out = NULL;
  char name[17];
  ccl_id_text(id, name);
  if (rank_count < 1 || rank_count > VGPU_CCL_MAX_RANKS || rank < 0 ||
      rank >= rank_count) {
    ccl_format(error, error_size,
               "rank %d of %d ranks: ranks are in [0, count) and a "
               "communicator has 1 to %d of them on the virtual GPU",
               rank, rank_count, VGPU_CCL_MAX_RANKS);
    return VGPU_ERR_INVALID_VALUE;
  }
  vgpu_ccl_comm* comm = calloc(1, sizeof(*comm));
  if (comm == NULL)
    return VGPU_ERR_OUT_OF_MEMORY;
  pthread_mutex_lock(&ccl_registry.mu);
  ccl_registry_init_locked();
  ccl_group* group = ccl_group_find_locked(id);
  vgpu_status status = VGPU_OK;
  if (group != NULL && group->rank_count != rank_count) {
    ccl_format(error, error_size,
               "communicator %s: rank %d joins with %d ranks, the ranks "
               "before it with %d",
               name, rank, rank_count, group->rank_count);
    status = VGPU_ERR_INVALID_VALUE;
  } else if (group != NULL && (group->complete || group->ranks[rank])) {
    ccl_format(error, error_size, "communicator %s: rank %d joined already%s",
               name, rank, group->complete ? " (every rank has)" : "");
    status = VGPU_ERR_INVALID_VALUE;
  } else if (group == NULL) {
    // The first rank of this process: the shared segment, where ranks of
    // other processes join too. Without shared memory here, ranks of this
    // process still meet.
    ccl_shm* shm = NULL;
    status = ccl_shm_open(id, rank_count, &shm, error, error_size);
    if (status == VGPU_ERR_NOT_SUPPORTED)
      status = VGPU_OK;
    group = status == VGPU_OK ? calloc(1, sizeof(*group)) : NULL;
    if (status == VGPU_OK && group == NULL)
      status = VGPU_ERR_OUT_OF_MEMORY;
    if (group != NULL) {
      memcpy(group->id, id, VGPU_CCL_ID_BYTES);
      group->rank_count = rank_count;
      group->first_left = -1;
      group->shm = shm;
      group->next = ccl_registry.groups;
      ccl_registry.groups = group;
    } else {
      ccl_shm_close(shm);
    }
  }
  if (status == VGPU_OK && group->shm != NULL)
    status = ccl_shm_join(group->shm, rank, error, error_size);
  if (status != VGPU_OK) {
    if (group != NULL && group->joined == 0) {
      ccl_group_unlink_locked(group);
      ccl_group_free(group);
    }
    pthread_mutex_unlock(&ccl_registry.mu);
    free(comm);
    return status;
  }
  comm->group = group;
  comm->rank = rank;
  comm->device = -1;
  pthread_mutex_init(&comm->mu, NULL);
  vgpu_cond_init(&comm->cv);
  group->ranks[rank] = comm;
  group->gave_up[rank] = false;
  if (++group->joined == rank_count)
    ccl_group_completed_locked(group);
  uint64_t deadline = vgpu_now_ns() + timeout_ns;
  vgpu_status refused = VGPU_OK;  // a failure the segment carries
  char refusal[384] = "";
  for (;;) {
    // Read before the check: a join elsewhere after it rings the bell.
    uint32_t bell = group->shm != NULL ? ccl_shm_bell(group->shm) : 0;
    if (ccl_group_joined_locked(group))
      break;
    // A process refused (another rank count, a rank joined twice) failed
    // the communicator for every rank: no use waiting for the bound.
    if (group->shm != NULL) {
      refused = ccl_shm_failure(group->shm, false, refusal, sizeof(refusal));
      if (refused != VGPU_OK)
        break;
    }
    uint64_t now = vgpu_now_ns();
    if (now >= deadline)
      break;
    uint64_t wait = deadline - now;
    if (group->shm != NULL) {
      // Ranks of other processes ring the shared bell, not our condition
      // variable; the group stays while this rank is in it.
      pthread_mutex_unlock(&ccl_registry.mu);
      ccl_shm_sleep(group->shm, bell, wait < 50000000u ? wait : 50000000u);
      pthread_mutex_lock(&ccl_registry.mu);
      continue;
    }
    ccl_registry_nap_locked(wait);
  }
  // Who never came, as this rank gives up (the shared segment knows of
  // ranks of other processes).
  uint64_t absent = 0;
  if (!group->complete && group->shm != NULL)
    (void)ccl_shm_complete(group->shm, &absent);
  // Too late to give up once the last rank joined in another process.
  if (!group->complete && group->shm != NULL &&
      !ccl_shm_unjoin(group->shm, rank)) {
    ccl_group_joined_locked(group);
  }
  if (!group->complete && refused != VGPU_OK) {
    ccl_format(error, error_size, "%s (rank %d gave up)", refusal, rank);
  } else if (!group->complete) {
    // Gave up: say who never came, and leave as if never joined.
    char missing[192] = "";
    size_t length = 0;
    int missing_count = 0;
    for (int r = 0; r < rank_count; ++r) {
      bool came =
          group->shm != NULL ? !(absent >> r & 1u) : group->ranks[r] != NULL;
      if (came || group->gave_up[r])
        continue;
      ++missing_count;
      if (length + 8 < sizeof(missing)) {
        length += (size_t)snprintf(missing + length, sizeof(missing) - length,
                                   "%s%d", length ? ", " : "", r);
      }
    }
    ccl_format(error, error_size,
               "communicator %s: rank%s %s of %d never joined within %" PRIu64
               " ms (rank %d gave up)",
               name, missing_count == 1 ? "" : "s", missing, rank_count,
               timeout_ns / 1000000u, rank);
  }
  if (!group->complete) {
    group->ranks[rank] = NULL;
    group->gave_up[rank] = true;
    if (--group->joined == 0) {
      ccl_group_unlink_locked(group);
      ccl_group_free(group);
    }
    pthread_mutex_unlock(&ccl_registry.mu);
    pthread_cond_destroy(&comm->cv);
    pthread_mutex_destroy(&comm->mu);
    free(comm);
    return refused != VGPU_OK ? refused : VGPU_ERR_TIMEOUT;
  }
  pthread_mutex_unlock(&ccl_registry.mu);
  *out = comm;
  return VGPU_OK;
}

// Every mark of |meeting| that arrived completes with |status|.
static void ccl_meeting_finish(ccl_meeting* meeting, vgpu_status status) {
  for (int r = 0; r < VGPU_CCL_MAX_RANKS; ++r) {
    if (meeting->present[r]) {
      vgpu_mark_complete(meeting->marks[r], status);
      vgpu_mark_release(meeting->marks[r]);
    }
  }
  free(meeting);
}

// Under the lock: records the group's first failure (sticky; later ones
// keep it).
static void ccl_group_record_failure_locked(ccl_group* group,
                                            vgpu_status status,
                                            const char* message) {
  if (group->failure != VGPU_OK)
    return;
  group->failure = status;
  memcpy(group->failure_message, message,
         strnlen(message, sizeof(group->failure_message) - 1));
  // Every process's failure: the others' proxies read it there.
  if (group->remote)
    ccl_shm_fail(group->shm, status, message);
}

// Under the lock: records the failure and takes every meeting not yet met
// off the group, for the caller to fail outside the lock.
static ccl_meeting* ccl_group_fail_locked(ccl_group* group, vgpu_status status,
                                          const char* message) {
  ccl_group_record_failure_locked(group, status, message);
  ccl_meeting* meetings = group->meetings;
  group->meetings = NULL;
  return meetings;
}

static void ccl_meetings_fail(ccl_meeting* meetings, vgpu_status status) {
  while (meetings != NULL) {
    ccl_meeting* next = meetings->next;
    ccl_meeting_finish(meetings, status);
    meetings = next;
  }
}

void vgpu_ccl_abort(vgpu_ccl_comm* comm, vgpu_status status) {
  char name[17];
  ccl_id_text(comm->group->id, name);
  char message[128];
  snprintf(message, sizeof(message), "communicator %s was aborted by rank %d",
           name, comm->rank);
  pthread_mutex_lock(&ccl_registry.mu);
  ccl_meeting* failed = ccl_group_fail_locked(comm->group, status, message);
  pthread_mutex_unlock(&ccl_registry.mu);
  ccl_meetings_fail(failed, status);
}

// Under the lock: whether |meeting| needs |rank| (every collective needs
// every rank; a send or receive its two).
static bool ccl_meeting_needs(const ccl_meeting* meeting, int rank) {
  return !meeting->p2p || meeting->from == rank || meeting->to == rank;
}

// Under the lock: whether |meeting| holds |rank|'s call.
static bool ccl_meeting_holds(const ccl_meeting* meeting, int rank) {
  if (!meeting->p2p)
    return meeting->present[rank];
  return (meeting->present[0] && meeting->from == rank) ||
         (meeting->present[1] && meeting->to == rank);
}

static bool ccl_proxied_has_rank_locked(const ccl_group* group, int rank) {
  for (const ccl_meeting* m = group->proxied; m != NULL; m = m->next) {
    if (ccl_meeting_holds(m, rank))
      return true;
  }
  return false;
}

void vgpu_ccl_leave(vgpu_ccl_comm* comm) {
  if (comm == NULL)
    return;
  ccl_group* group = comm->group;
  char name[17];
  ccl_id_text(group->id, name);
  char message[128];
  snprintf(message, sizeof(message), "rank %d left communicator %s", comm->rank,
           name);
  pthread_mutex_lock(&ccl_registry.mu);
  // What needs it can never meet now: it fails, and so do later
  // collectives and transfers with it (vgpu_ccl_arrive). Transfers between
  // the others go on.
  ccl_meeting* failed = NULL;
  for (ccl_meeting** p = &group->meetings; *p != NULL;) {
    ccl_meeting* m = *p;
    if (ccl_meeting_needs(m, comm->rank)) {
      *p = m->next;
      m->next = failed;
      failed = m;
    } else {
      p = &m->next;
    }
  }
  if (failed)
    ccl_group_record_failure_locked(group, VGPU_ERR_DEVICE_LOST, message);
  // A meeting the proxy runs with other processes may still write this
  // rank's buffers: the proxy fails it (and the communicator) and lets go.
  if (group->remote) {
    group->leaving[comm->rank] = true;
    while (ccl_proxied_has_rank_locked(group, comm->rank)) {
      ccl_shm_ring(group->shm);
      ccl_registry_nap_locked(20000000u);
    }
    group->leaving[comm->rank] = false;
    ccl_shm_leave(group->shm, comm->rank);
  }
  group->ranks[comm->rank] = NULL;
  group->left[comm->rank] = true;
  if (group->first_left < 0)
    group->first_left = comm->rank;
  bool last = --group->joined == 0;
  if (last)
    ccl_group_unlink_locked(group);
  bool stop_proxy = last && group->proxy_running;
  if (stop_proxy)
    group->proxy_stop = true;
  pthread_mutex_unlock(&ccl_registry.mu);
  ccl_meetings_fail(failed, VGPU_ERR_DEVICE_LOST);
  if (stop_proxy) {
    ccl_shm_ring(group->shm);
    pthread_join(group->proxy, NULL);
  }
  if (last)
    ccl_group_free(group);
  pthread_cond_destroy(&comm->cv);
  pthread_mutex_destroy(&comm->mu);
  free(comm);
}

int vgpu_ccl_rank(const vgpu_ccl_comm* comm) {
  return comm->rank;
}

int vgpu_ccl_rank_count(const vgpu_ccl_comm* comm) {
  return comm->group->rank_count;
}

vgpu_status vgpu_ccl_async_error(vgpu_ccl_comm* comm, char* message,
                                 size_t message_size) {
  ccl_group* group = comm->group;
  if (group->remote) {
    // Another process's failure, or a process gone, is this one's now.
    char shared[384];
    vgpu_status st = ccl_shm_failure(group->shm, true, shared, sizeof(shared));
    if (st != VGPU_OK) {
      pthread_mutex_lock(&ccl_registry.mu);
      ccl_meeting* failed = ccl_group_fail_locked(group, st, shared);
      pthread_mutex_unlock(&ccl_registry.mu);
      ccl_meetings_fail(failed, st);
    }
  }
  pthread_mutex_lock(&ccl_registry.mu);
  vgpu_status status = comm->group->failure;
  ccl_format(message, message_size, "%s", comm->group->failure_message);
  pthread_mutex_unlock(&ccl_registry.mu);
  return status;
}

//===----------------------------------------------------------------------===//
// Meeting and computing
//===----------------------------------------------------------------------===//

// Whether every rank's call agrees with rank 0's; the first that does not
// is described in |message|.
static bool ccl_calls_agree(const vgpu_ccl_call* calls, int ranks, uint64_t seq,
                            char* message, size_t size) {
  const vgpu_ccl_call* first = &calls[0];
  for (int r = 1; r < ranks; ++r) {
    const vgpu_ccl_call* call = &calls[r];
    bool same = call->kind == first->kind && call->count == first->count &&
                call->type == first->type &&
                (!ccl_kind_reduces(first->kind) ||
                 call->reduction == first->reduction) &&
                (!ccl_kind_rooted(first->kind) || call->peer == first->peer);
    if (!same) {
      snprintf(message, size,
               "collective #%" PRIu64
               ": rank %d called %s of %zu elements of type %d (reduction "
               "%d, root %d), rank 0 %s of %zu elements of type %d "
               "(reduction %d, root %d)",
               seq, r, ccl_kind_name(call->kind), call->count, call->type,
               call->reduction, call->peer, ccl_kind_name(first->kind),
               first->count, first->type, first->reduction, first->peer);
      return false;
    }
  }
  return true;
}

// Every rank arrived and agreed: the results, a chunk of elements at a
// time through a small scratch buffer (a rank's send and receive buffers
// may be the same memory). A chunk's results are written only after every
// input of that chunk was read, and later chunks read nothing a chunk
// writes (in place, a rank's input and output at the same element index
// are the same bytes), so in-place calls see their inputs intact. Small
// enough to stay in the cache and to come from the heap without a fresh
// mapping per collective.
#define CCL_COMPUTE_CHUNK_BYTES (64u * 1024u)
static vgpu_status ccl_compute(ccl_meeting* m, int ranks) {
  const vgpu_ccl_call* first = &m->calls[0];
  size_t e = vgpu_ccl_type_size(first->type);
  size_t count = first->count;
  if (count == 0)
    return VGPU_OK;
  uint8_t* scratch = malloc(CCL_COMPUTE_CHUNK_BYTES);
  if (scratch == NULL)
    return VGPU_ERR_OUT_OF_MEMORY;
  size_t chunk = CCL_COMPUTE_CHUNK_BYTES / e;
  // Reduce-scatter and all-gather move |count| elements per rank q: the
  // q-th block of the inputs (reduce-scatter) or of the outputs
  // (all-gather).
  bool blocks = first->kind == VGPU_CCL_REDUCE_SCATTER ||
                first->kind == VGPU_CCL_ALL_GATHER;
  int block_count = blocks ? ranks : 1;
  for (size_t a = 0; a < count; a += chunk) {
    size_t n = count - a < chunk ? count - a : chunk;
    size_t bytes = n * e;
    for (int q = 0; q < block_count; ++q) {
      const void* srcs[VGPU_CCL_MAX_RANKS] = {NULL};
      size_t in = blocks && first->kind == VGPU_CCL_REDUCE_SCATTER
                      ? ((size_t)q * count + a) * e
                      : a * e;
      for (int r = 0; r < ranks; ++r)
        srcs[r] = (const uint8_t*)m->calls[r].send + in;
      switch (first->kind) {
        case VGPU_CCL_ALL_REDUCE:
        case VGPU_CCL_REDUCE:
        case VGPU_CCL_REDUCE_SCATTER:
          ccl_reduce(first->type, first->reduction, scratch, srcs, ranks, n);
          break;
        case VGPU_CCL_BROADCAST:
          memcpy(scratch, srcs[first->peer], bytes);
          break;
        case VGPU_CCL_ALL_GATHER:
          memcpy(scratch, srcs[q], bytes);
          break;
        case VGPU_CCL_SEND:
        case VGPU_CCL_RECV:
          break;
      }
      for (int r = 0; r < ranks; ++r) {
        uint8_t* recv = m->calls[r].recv;
        switch (first->kind) {
          case VGPU_CCL_REDUCE:
            if (r == first->peer)
              memcpy(recv + a * e, scratch, bytes);
            break;
          case VGPU_CCL_REDUCE_SCATTER:
            if (r == q)
              memcpy(recv + a * e, scratch, bytes);
            break;
          case VGPU_CCL_ALL_GATHER:
            memcpy(recv + ((size_t)q * count + a) * e, scratch, bytes);
            break;
          default:
            memcpy(recv + a * e, scratch, bytes);
            break;
        }
      }
    }
  }
  free(scratch);
  return VGPU_OK;
}

static vgpu_status ccl_check_call(const vgpu_ccl_comm* comm,
                                  const vgpu_ccl_call* call, char* error,
                                  size_t size) {
  int ranks = comm->group->rank_count;
  if ((unsigned)call->kind > VGPU_CCL_RECV) {
    ccl_format(error, size, "unknown collective %d", (int)call->kind);
    return VGPU_ERR_INVALID_VALUE;
  }
  if (vgpu_ccl_type_size(call->type) == 0) {
    ccl_format(error, size,
               call->type == CCL_FLOAT8E4M3 || call->type == CCL_FLOAT8E5M2
                   ? "%s: data type %d (float8) is not implemented on the "
                     "virtual GPU"
                   : "%s: unknown data type %d",
               ccl_kind_name(call->kind), call->type);
    return call->type == CCL_FLOAT8E4M3 || call->type == CCL_FLOAT8E5M2
               ? VGPU_ERR_NOT_SUPPORTED
               : VGPU_ERR_INVALID_VALUE;
  }
  if (ccl_kind_reduces(call->kind) &&
      (call->reduction < CCL_SUM || call->reduction > CCL_AVG)) {
    ccl_format(error, size, "%s: unknown reduction %d",
               ccl_kind_name(call->kind), call->reduction);
    return VGPU_ERR_INVALID_VALUE;
  }
  bool has_peer = ccl_kind_rooted(call->kind) || call->kind == VGPU_CCL_SEND ||
                  call->kind == VGPU_CCL_RECV;
  if (has_peer && (call->peer < 0 || call->peer >= ranks)) {
    ccl_format(
        error, size, "%s: %s %d is not a rank of %d", ccl_kind_name(call->kind),
        ccl_kind_rooted(call->kind) ? "root" : "peer", call->peer, ranks);
    return VGPU_ERR_INVALID_VALUE;
  }
  // As NCCL: a broadcast reads send on its root only, a reduce writes recv
  // on its root only; the other ranks may pass NULL there.
  bool is_root = ccl_kind_rooted(call->kind) && call->peer == comm->rank;
  bool needs_send = call->kind != VGPU_CCL_RECV &&
                    !(call->kind == VGPU_CCL_BROADCAST && !is_root);
  bool needs_recv = call->kind != VGPU_CCL_SEND &&
                    !(call->kind == VGPU_CCL_REDUCE && !is_root);
  if (call->count > 0 &&
      ((needs_send && !call->send) || (needs_recv && !call->recv))) {
    ccl_format(error, size, "%s of %zu elements with a NULL buffer",
               ccl_kind_name(call->kind), call->count);
    return VGPU_ERR_INVALID_VALUE;
  }
  // A device reads and writes elements at their alignment (a misaligned one
  // faults); the reductions here load them as their C type.
  size_t e = vgpu_ccl_type_size(call->type);
  if ((uintptr_t)call->send % e != 0 || (uintptr_t)call->recv % e != 0) {
    ccl_format(error, size,
               "%s: a buffer (send %p, recv %p) is not aligned to its %zu-byte "
               "elements",
               ccl_kind_name(call->kind), call->send, (void*)call->recv, e);
    return VGPU_ERR_INVALID_VALUE;
  }
  return VGPU_OK;
}

// Under the lock: the meeting |call| joins (made when it is the first).
static uint64_t ccl_timeout_ns(void);
static void ccl_watchdog_start_locked(void);

static ccl_meeting* ccl_meeting_for_locked(vgpu_ccl_comm* comm,
                                           const vgpu_ccl_call* call) {
  ccl_group* group = comm->group;
  bool p2p = call->kind == VGPU_CCL_SEND || call->kind == VGPU_CCL_RECV;
  int from = call->kind == VGPU_CCL_SEND ? comm->rank : call->peer;
  int to = call->kind == VGPU_CCL_SEND ? call->peer : comm->rank;
  uint64_t seq = !p2p                          ? comm->next_seq++
                 : call->kind == VGPU_CCL_SEND ? comm->sends[to]++
                                               : comm->receives[from]++;
  ccl_meeting** tail = &group->meetings;
  for (ccl_meeting* m = group->meetings; m != NULL; m = m->next) {
    if (m->p2p == p2p && m->seq == seq &&
        (!p2p || (m->from == from && m->to == to))) {
      return m;
    }
    tail = &m->next;
  }
  ccl_meeting* m = calloc(1, sizeof(*m));
  if (m == NULL)
    return NULL;
  m->seq = seq;
  m->p2p = p2p;
  m->from = from;
  m->to = to;
  m->opened_ns = vgpu_now_ns();
  *tail = m;  // in arrival order
  ccl_watchdog_start_locked();
  return m;
}

// Under the lock: "collective #3 of communicator 4a42db9f7623eb9c: rank 1
// never arrived within 5000 ms" for the first meeting of |group| that
// waited longer than |bound_ns| at |now|, or false.
static bool ccl_group_overdue_locked(const ccl_group* group, uint64_t now,
                                     uint64_t bound_ns, char* message,
                                     size_t size) {
  for (const ccl_meeting* m = group->meetings; m != NULL; m = m->next) {
    if (now - m->opened_ns <= bound_ns)
      continue;
    char name[17];
    ccl_id_text(group->id, name);
    char missing[192] = "";
    size_t length = 0;
    for (int r = 0;
         !m->p2p && r < group->rank_count && length < sizeof(missing); ++r) {
      if (m->present[r] || (group->remote && !group->local[r]))
        continue;
      int n = snprintf(missing + length, sizeof(missing) - length, "%s%d",
                       length ? ", " : "", r);
      if (n > 0)
        length += (size_t)n;
    }
    if (m->p2p) {
      // Slot 0 is the send (rank |from|'s), slot 1 the receive (|to|'s):
      // for a rank sending to itself both are its own.
      ccl_format(message, size,
                 "send #%" PRIu64
                 " from rank %d to rank %d of communicator %s: rank %d's %s "
                 "never arrived within %" PRIu64 " ms",
                 m->seq, m->from, m->to, name, m->present[0] ? m->to : m->from,
                 m->present[0] ? "receive" : "send", bound_ns / 1000000u);
    } else {
      ccl_format(message, size,
                 "collective #%" PRIu64
                 " of communicator %s: rank(s) %s never arrived within %" PRIu64
                 " ms",
                 m->seq, name, missing, bound_ns / 1000000u);
    }
    return true;
  }
  return false;
}

// A peer that stops calling, without leaving or aborting, would hold its
// communicator's other ranks forever (their streams wait for the meeting):
// a meeting whose ranks have not all come within the bound (ccl_timeout_ns)
// fails the communicator, as a disagreement does, naming who never came.
static void* ccl_watchdog_main(void* arg) {
  (void)arg;
  pthread_mutex_lock(&ccl_registry.mu);
  for (;;) {
    uint64_t bound = ccl_timeout_ns();
    uint64_t now = vgpu_now_ns();
    bool waiting = false;
    ccl_meeting* failed = NULL;
    char message[384];
    for (ccl_group* g = ccl_registry.groups; g != NULL && !failed;
         g = g->next) {
      waiting |= g->meetings != NULL;
      if (ccl_group_overdue_locked(g, now, bound, message, sizeof(message)))
        failed = ccl_group_fail_locked(g, VGPU_ERR_TIMEOUT, message);
    }
    if (failed) {
      pthread_mutex_unlock(&ccl_registry.mu);
      ccl_meetings_fail(failed, VGPU_ERR_TIMEOUT);
      pthread_mutex_lock(&ccl_registry.mu);
      continue;
    }
    if (!waiting)
      break;
    // A tenth of the bound (at most 100 ms) late, at worst.
    uint64_t nap = bound / 10 < 100000000u ? bound / 10 : 100000000u;
    ccl_registry_nap_locked(nap);
  }
  ccl_registry.watchdog_running = false;
  pthread_mutex_unlock(&ccl_registry.mu);
  return NULL;
}

static void ccl_watchdog_start_locked(void) {
  if (ccl_registry.watchdog_running)
    return;
  ccl_registry_init_locked();
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_t thread;
  // Without a thread (out of resources) meetings wait unbounded, as NCCL's.
  if (pthread_create(&thread, &attr, ccl_watchdog_main, NULL) == 0) {
    ccl_registry.watchdog_running = true;
    // The thread may outlive its last meeting by a nap: the library that
    // holds its code must never be unmapped under it.
    Dl_info self;
    if (dladdr(&ccl_registry, &self) && self.dli_fname)
      (void)dlopen(self.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
  }
  pthread_attr_destroy(&attr);
}

static void ccl_meeting_unlink_locked(ccl_group* group, ccl_meeting* meeting) {
  for (ccl_meeting** p = &group->meetings; *p != NULL; p = &(*p)->next) {
    if (*p == meeting) {
      *p = meeting->next;
      return;
    }
  }
}

vgpu_status vgpu_ccl_arrive(vgpu_ccl_comm* comm, const vgpu_ccl_call* call,
                            vgpu_mark* done, char* error, size_t error_size) {
  vgpu_status status = ccl_check_call(comm, call, error, error_size);
  if (status != VGPU_OK)
    return status;
  ccl_group* group = comm->group;
  int ranks = group->rank_count;
  bool p2p = call->kind == VGPU_CCL_SEND || call->kind == VGPU_CCL_RECV;
  pthread_mutex_lock(&ccl_registry.mu);
  if (group->failure != VGPU_OK) {
    status = group->failure;
    ccl_format(error, error_size, "%s", group->failure_message);
    pthread_mutex_unlock(&ccl_registry.mu);
    return status;
  }
  int gone =
      p2p ? (group->left[call->peer] ? call->peer : -1) : group->first_left;
  if (gone >= 0) {
    char name[17];
    ccl_id_text(group->id, name);
    ccl_format(error, error_size, "%s: rank %d left communicator %s",
               ccl_kind_name(call->kind), gone, name);
    pthread_mutex_unlock(&ccl_registry.mu);
    return VGPU_ERR_DEVICE_LOST;
  }
  ccl_meeting* m = ccl_meeting_for_locked(comm, call);
  if (m == NULL) {
    pthread_mutex_unlock(&ccl_registry.mu);
    return VGPU_ERR_OUT_OF_MEMORY;
  }
  // A send's and its receive's slots are their ranks; a self-send's
  // receive takes the other slot of the pair.
  int slot = m->p2p ? (call->kind == VGPU_CCL_SEND ? 0 : 1) : comm->rank;
  m->present[slot] = true;
  m->calls[slot] = *call;
  vgpu_mark_retain(done);
  m->marks[slot] = done;
  // With ranks in other processes, this process's arrive here; the proxy
  // meets the others.
  int needed = !group->remote ? (m->p2p ? 2 : ranks)
               : m->p2p       ? group->local[m->from] + group->local[m->to]
                              : group->local_count;
  bool last = ++m->arrived == needed;
  bool proxied = last && needed < (m->p2p ? 2 : ranks);
  if (last)
    ccl_meeting_unlink_locked(group, m);
  if (proxied) {
    m->next = NULL;
    ccl_meeting** tail = &group->proxied;
    while (*tail != NULL)
      tail = &(*tail)->next;
    *tail = m;
  }
  pthread_mutex_unlock(&ccl_registry.mu);
  if (proxied)
    ccl_shm_ring(group->shm);
  if (!last || proxied)
    return VGPU_OK;

  char message[384];
  vgpu_status result = VGPU_OK;
  if (m->p2p) {
    const vgpu_ccl_call* send = &m->calls[0];
    const vgpu_ccl_call* recv = &m->calls[1];
    if (send->count != recv->count || send->type != recv->type) {
      snprintf(message, sizeof(message),
               "send #%" PRIu64
               " from rank %d to rank %d: %zu elements of type %d sent, %zu "
               "of type %d received",
               m->seq, m->from, m->to, send->count, send->type, recv->count,
               recv->type);
      result = VGPU_ERR_INVALID_VALUE;
    } else if (send->count) {
      memmove(recv->recv, send->send,
              send->count * vgpu_ccl_type_size(send->type));
    }
  } else if (!ccl_calls_agree(m->calls, ranks, m->seq, message,
                              sizeof(message))) {
    result = VGPU_ERR_INVALID_VALUE;
  } else {
    result = ccl_compute(m, ranks);
    if (result != VGPU_OK) {
      snprintf(message, sizeof(message),
               "collective #%" PRIu64 ": out of memory for its scratch",
               m->seq);
    }
  }
  if (result != VGPU_OK) {
    // A mismatch is every rank's failure, and the communicator's: NCCL
    // hangs or corrupts here; the virtual GPU says what differed.
    pthread_mutex_lock(&ccl_registry.mu);
    ccl_meeting* others = ccl_group_fail_locked(group, result, message);
    pthread_mutex_unlock(&ccl_registry.mu);
    ccl_meetings_fail(others, result);
  }
  ccl_meeting_finish(m, result);  // completes every mark, OK or not
  return VGPU_OK;
}

//===----------------------------------------------------------------------===//
// Meeting ranks of other processes: the proxy
//===----------------------------------------------------------------------===//
//
// Each process with ranks of a communicator that spans processes runs one
// proxy thread for it (as NCCL runs a proxy per communicator). It takes
// the meetings whose ranks of this process all arrived, in order, and runs
// each with the other processes through the shared segment, a step at a
// time and never blocking: a step that must wait for another process
// returns, so a send waiting for its receive never holds up a receive from
// that peer (grouped exchanges), nor a collective.
//
// A collective: every process posts its ranks' calls and meets the others
// at a barrier; each then checks that every rank's call agrees (all find
// the same), and the data moves in chunks of the staging slots: each
// process copies its ranks' inputs into their slots, barrier, computes its
// ranks' outputs from every slot (in rank order, so each sum is the one
// the in-process engine computes), barrier, next chunk. A send and its
// receive: both post their calls, then the sender fills the pair's slot
// when empty and the receiver drains it when full, chunk by chunk.
//
// A failure anywhere (a disagreement, an abort, a rank gone, a meeting
// waiting past the bound) is the communicator's in every process: the
// shared segment carries it, each proxy fails what it holds.

typedef enum ccl_step {
  CCL_STEP_WAITING,  // for another process
  CCL_STEP_PROGRESS,
  CCL_STEP_DONE,
  CCL_STEP_FAILED,
} ccl_step;

enum { CCL_NAP_NS = 20000000u, CCL_PEER_CHECK_NS = 100000000u };

// The ranks of other processes |m| waits for.
static uint64_t ccl_meeting_remote_ranks(const ccl_group* g,
                                         const ccl_meeting* m) {
  uint64_t ranks = 0;
  for (int r = 0; r < g->rank_count; ++r) {
    bool part = !m->p2p || r == m->from || r == m->to;
    if (part && !g->local[r])
      ranks |= (uint64_t)1 << r;
  }
  return ranks;
}

// One element range of chunk |m->chunk| of rank |r|'s call: copies its
// part into its slot.
static void ccl_proxy_fill(ccl_group* g, ccl_meeting* m, int r, size_t a,
                           size_t n) {
  const vgpu_ccl_call* call = &m->calls[r];
  size_t e = vgpu_ccl_type_size(call->type);
  uint8_t* slot = ccl_shm_slot(g->shm, r);
  const uint8_t* send = call->send;
  switch (call->kind) {
    case VGPU_CCL_BROADCAST:  // the root's input only
    case VGPU_CCL_ALL_REDUCE:
    case VGPU_CCL_REDUCE:
    case VGPU_CCL_ALL_GATHER:
      if (call->kind != VGPU_CCL_BROADCAST || r == call->peer)
        memcpy(slot, send + a * e, n * e);
      break;
    case VGPU_CCL_REDUCE_SCATTER:
      // Every destination's part of this range, destination-major.
      for (int q = 0; q < g->rank_count; ++q) {
        memcpy(slot + (size_t)q * n * e,
               send + ((size_t)q * call->count + a) * e, n * e);
      }
      break;
    case VGPU_CCL_SEND:
    case VGPU_CCL_RECV:
      break;
  }
}

// Rank |r|'s outputs of the same range, from every rank's slot.
static void ccl_proxy_output(ccl_group* g, ccl_meeting* m, int r, size_t a,
                             size_t n) {
  const vgpu_ccl_call* call = &m->calls[r];
  int ranks = g->rank_count;
  size_t e = vgpu_ccl_type_size(call->type);
  uint8_t* recv = call->recv;
  const void* srcs[VGPU_CCL_MAX_RANKS];
  for (int q = 0; q < ranks; ++q) {
    srcs[q] = (const uint8_t*)ccl_shm_slot(g->shm, q) +
              (call->kind == VGPU_CCL_REDUCE_SCATTER ? (size_t)r * n * e : 0);
  }
  switch (call->kind) {
    case VGPU_CCL_REDUCE:  // the root's result only
    case VGPU_CCL_ALL_REDUCE:
    case VGPU_CCL_REDUCE_SCATTER:
      if (call->kind != VGPU_CCL_REDUCE || r == call->peer)
        ccl_reduce(call->type, call->reduction, recv + a * e, srcs, ranks, n);
      break;
    case VGPU_CCL_BROADCAST:
      memcpy(recv + a * e, srcs[call->peer], n * e);
      break;
    case VGPU_CCL_ALL_GATHER:
      for (int q = 0; q < ranks; ++q)
        memcpy(recv + ((size_t)q * call->count + a) * e, srcs[q], n * e);
      break;
    case VGPU_CCL_SEND:
    case VGPU_CCL_RECV:
      break;
  }
}

static ccl_step ccl_proxy_collective(ccl_group* g, ccl_meeting* m,
                                     vgpu_status* status, char* message,
                                     size_t size) {
  ccl_shm* shm = g->shm;
  int ranks = g->rank_count;
  char name[17];
  ccl_id_text(g->id, name);
  switch (m->stage) {
    case 0:
      for (int r = 0; r < ranks; ++r) {
        if (g->local[r])
          ccl_shm_post(shm, r, m->seq, &m->calls[r]);
      }
      m->target = ccl_shm_barrier_arrive(shm);
      m->stage = 1;
      return CCL_STEP_PROGRESS;
    case 1: {
      char missing[192];
      if (!ccl_shm_barrier_passed(shm, m->target)) {
        (void)ccl_shm_posted(shm, m->seq, NULL, missing, sizeof(missing));
        ccl_format(message, size,
                   "collective #%" PRIu64
                   " of communicator %s: rank(s) %s never arrived",
                   m->seq, name, missing);
        return CCL_STEP_WAITING;
      }
      vgpu_ccl_call calls[VGPU_CCL_MAX_RANKS];
      (void)ccl_shm_posted(shm, m->seq, calls, NULL, 0);
      if (!ccl_calls_agree(calls, ranks, m->seq, message, size)) {
        *status = VGPU_ERR_INVALID_VALUE;
        return CCL_STEP_FAILED;
      }
      size_t e = vgpu_ccl_type_size(calls[0].type);
      size_t per = calls[0].kind == VGPU_CCL_REDUCE_SCATTER ? (size_t)ranks : 1;
      m->chunk_elements = ccl_shm_slot_bytes(shm) / (e * per);
      m->chunks =
          calls[0].count == 0
              ? 1
              : (calls[0].count + m->chunk_elements - 1) / m->chunk_elements;
      m->chunk = 0;
      m->stage = 2;
      return CCL_STEP_PROGRESS;
    }
    case 2:
    case 3: {
      if (m->stage == 3 && !ccl_shm_barrier_passed(shm, m->target))
        break;
      size_t count = 0;
      for (int r = 0; r < ranks && count == 0; ++r)
        count = g->local[r] ? m->calls[r].count : 0;
      size_t a = m->chunk * m->chunk_elements;
      size_t n = count - a < m->chunk_elements ? count - a : m->chunk_elements;
      if (count == 0)
        n = 0;
      for (int r = 0; r < ranks; ++r) {
        if (!g->local[r])
          continue;
        if (m->stage == 2)
          ccl_proxy_fill(g, m, r, a, n);
        else
          ccl_proxy_output(g, m, r, a, n);
      }
      m->target = ccl_shm_barrier_arrive(shm);
      m->stage = m->stage == 2 ? 3 : 4;
      return CCL_STEP_PROGRESS;
    }
    case 4:
      if (!ccl_shm_barrier_passed(shm, m->target))
        break;
      if (++m->chunk == m->chunks)
        return CCL_STEP_DONE;
      m->stage = 2;
      return CCL_STEP_PROGRESS;
  }
  ccl_format(message, size,
             "collective #%" PRIu64
             " of communicator %s: another process never finished chunk %zu "
             "of %zu",
             m->seq, name, m->chunk + 1, m->chunks);
  return CCL_STEP_WAITING;
}

static ccl_step ccl_proxy_transfer(ccl_group* g, ccl_meeting* m,
                                   vgpu_status* status, char* message,
                                   size_t size) {
  ccl_shm* shm = g->shm;
  bool sender = g->local[m->from];
  const vgpu_ccl_call* call = &m->calls[sender ? 0 : 1];
  size_t slot_bytes = ccl_shm_pair_bytes(shm);
  uint8_t* slot = ccl_shm_pair_slot(shm, m->from, m->to);
  size_t bytes = call->count * vgpu_ccl_type_size(call->type);
  char name[17];
  ccl_id_text(g->id, name);
  switch (m->stage) {
    case 0:
      ccl_shm_pair_post(shm, m->from, m->to, sender, m->seq, call);
      m->stage = 1;
      return CCL_STEP_PROGRESS;
    case 1: {
      vgpu_ccl_call send, recv;
      if (!ccl_shm_pair_posted(shm, m->from, m->to, m->seq, &send, &recv)) {
        ccl_format(message, size,
                   "send #%" PRIu64
                   " from rank %d to rank %d of communicator %s: rank %d's %s "
                   "never arrived",
                   m->seq, m->from, m->to, name, sender ? m->to : m->from,
                   sender ? "receive" : "send");
        return CCL_STEP_WAITING;
      }
      if (send.count != recv.count || send.type != recv.type) {
        ccl_format(message, size,
                   "send #%" PRIu64
                   " from rank %d to rank %d: %zu elements of type %d sent, "
                   "%zu of type %d received",
                   m->seq, m->from, m->to, send.count, send.type, recv.count,
                   recv.type);
        *status = VGPU_ERR_INVALID_VALUE;
        return CCL_STEP_FAILED;
      }
      // At least one fill, empty for no data: the sender is done when its
      // last fill is taken, so after the receiver read both calls.
      m->chunks = bytes == 0 ? 1 : (bytes + slot_bytes - 1) / slot_bytes;
      m->chunk = 0;
      m->stage = 2;
      return CCL_STEP_PROGRESS;
    }
    case 2: {
      size_t offset = m->chunk * slot_bytes;
      if (sender) {
        if (!ccl_shm_pair_empty(shm, m->from, m->to))
          break;
        size_t length =
            bytes - offset < slot_bytes ? bytes - offset : slot_bytes;
        if (length)
          memcpy(slot, (const uint8_t*)call->send + offset, length);
        ccl_shm_pair_put(shm, m->from, m->to, length);
        if (++m->chunk == m->chunks)
          m->stage = 3;
        return CCL_STEP_PROGRESS;
      }
      size_t length = 0;
      if (!ccl_shm_pair_full(shm, m->from, m->to, &length))
        break;
      if (length > bytes - offset)
        length = bytes - offset;  // never past the receive buffer
      if (length)
        memcpy((uint8_t*)call->recv + offset, slot, length);
      ccl_shm_pair_take(shm, m->from, m->to);
      return ++m->chunk == m->chunks ? CCL_STEP_DONE : CCL_STEP_PROGRESS;
    }
    case 3:
      if (!ccl_shm_pair_empty(shm, m->from, m->to))
        break;
      return CCL_STEP_DONE;
  }
  ccl_format(message, size,
             "send #%" PRIu64
             " from rank %d to rank %d of communicator %s: rank %d stopped "
             "after %zu of %zu chunks",
             m->seq, m->from, m->to, name, sender ? m->to : m->from, m->chunk,
             m->chunks);
  return CCL_STEP_WAITING;
}

static ccl_step ccl_proxy_step(ccl_group* g, ccl_meeting* m,
                               vgpu_status* status, char* message,
                               size_t size) {
  return m->p2p ? ccl_proxy_transfer(g, m, status, message, size)
                : ccl_proxy_collective(g, m, status, message, size);
}

// Fails the communicator (here and in every process) with |status| and
// every meeting it has, the proxy's included.
static void ccl_proxy_fail_all(ccl_group* g, vgpu_status status,
                               const char* message) {
  pthread_mutex_lock(&ccl_registry.mu);
  ccl_meeting* failed = ccl_group_fail_locked(g, status, message);
  ccl_meeting* proxied = g->proxied;
  g->proxied = NULL;
  pthread_cond_broadcast(&ccl_registry.cv);
  pthread_mutex_unlock(&ccl_registry.mu);
  ccl_meetings_fail(failed, status);
  ccl_meetings_fail(proxied, status);
}

static void* ccl_proxy_main(void* arg) {
  ccl_group* g = arg;
  ccl_shm* shm = g->shm;
  uint64_t bound = ccl_timeout_ns();
  uint64_t peers_checked = 0;
  // The meetings it may step now: the first collective, and the first
  // transfer of each ordered pair of ranks.
  size_t capacity = 1 + (size_t)g->rank_count * (size_t)g->rank_count;
  ccl_meeting** heads = calloc(capacity, sizeof(*heads));
  for (;;) {
    uint32_t bell = ccl_shm_bell(shm);
    char message[384] = "";
    size_t count = 0;
    int leaving = -1;
    pthread_mutex_lock(&ccl_registry.mu);
    if (g->proxy_stop && g->proxied == NULL) {
      pthread_mutex_unlock(&ccl_registry.mu);
      break;
    }
    vgpu_status failure = g->failure;
    for (ccl_meeting* m = g->proxied; m != NULL && heads != NULL; m = m->next) {
      bool first = true;
      for (size_t i = 0; i < count && first; ++i) {
        first =
            heads[i]->p2p != m->p2p ||
            (m->p2p && (heads[i]->from != m->from || heads[i]->to != m->to));
      }
      if (first && count < capacity)
        heads[count++] = m;
      for (int r = 0; r < g->rank_count && leaving < 0; ++r) {
        if (g->leaving[r] && ccl_meeting_holds(m, r))
          leaving = r;
      }
    }
    pthread_mutex_unlock(&ccl_registry.mu);
    uint64_t now = vgpu_now_ns();
    bool check_peers = now - peers_checked >= CCL_PEER_CHECK_NS;
    if (check_peers)
      peers_checked = now;
    if (failure == VGPU_OK)
      failure = ccl_shm_failure(shm, check_peers, message, sizeof(message));
    if (failure == VGPU_OK && heads == NULL) {
      failure = VGPU_ERR_OUT_OF_MEMORY;
      ccl_format(message, sizeof(message),
                 "no memory to meet the ranks of other processes");
    }
    if (failure == VGPU_OK && leaving >= 0) {
      char name[17];
      ccl_id_text(g->id, name);
      failure = VGPU_ERR_DEVICE_LOST;
      ccl_format(message, sizeof(message),
                 "rank %d left communicator %s with a collective in flight",
                 leaving, name);
    }
    if (failure != VGPU_OK) {
      pthread_mutex_lock(&ccl_registry.mu);
      bool held = g->proxied != NULL;
      pthread_mutex_unlock(&ccl_registry.mu);
      if (held || g->failure == VGPU_OK)
        ccl_proxy_fail_all(g, failure, message);
      if (!held)
        ccl_shm_sleep(shm, bell, CCL_NAP_NS);
      continue;
    }
    bool progressed = false;
    for (size_t i = 0; i < count && failure == VGPU_OK; ++i) {
      ccl_meeting* m = heads[i];
      if (m->stage == 0)
        m->waiting_ns = now;
      vgpu_status status = VGPU_OK;
      ccl_step step = ccl_proxy_step(g, m, &status, message, sizeof(message));
      if (step == CCL_STEP_WAITING) {
        // A rank it needs left: gone after its part, or without it.
        int gone = ccl_shm_gone(shm, ccl_meeting_remote_ranks(g, m));
        if (gone >= 0)
          step = ccl_proxy_step(g, m, &status, message, sizeof(message));
        if (step == CCL_STEP_WAITING && gone >= 0) {
          char name[17];
          ccl_id_text(g->id, name);
          failure = VGPU_ERR_DEVICE_LOST;
          ccl_format(
              message, sizeof(message), "%s: rank %d left communicator %s",
              ccl_kind_name(
                  m->calls[m->p2p ? (g->local[m->from] ? 0 : 1) : 0].kind),
              gone, name);
        } else if (step == CCL_STEP_WAITING &&
                   vgpu_now_ns() - m->waiting_ns > bound) {
          char waited[384];
          ccl_format(waited, sizeof(waited), "%s within %" PRIu64 " ms",
                     message, bound / 1000000u);
          memcpy(message, waited, sizeof(message));
          failure = VGPU_ERR_TIMEOUT;
        }
      }
      if (step == CCL_STEP_FAILED)
        failure = status;
      if (step == CCL_STEP_PROGRESS) {
        m->waiting_ns = vgpu_now_ns();
        progressed = true;
      }
      if (step == CCL_STEP_DONE) {
        pthread_mutex_lock(&ccl_registry.mu);
        for (ccl_meeting** p = &g->proxied; *p != NULL; p = &(*p)->next) {
          if (*p == m) {
            *p = m->next;
            break;
          }
        }
        pthread_cond_broadcast(&ccl_registry.cv);
        pthread_mutex_unlock(&ccl_registry.mu);
        ccl_meeting_finish(m, VGPU_OK);
        progressed = true;
      }
    }
    if (failure != VGPU_OK) {
      ccl_proxy_fail_all(g, failure, message);
      continue;
    }
    if (!progressed)
      ccl_shm_sleep(shm, bell, CCL_NAP_NS);
  }
  free(heads);
  return NULL;
}

static void ccl_proxy_start_locked(ccl_group* group) {
  if (pthread_create(&group->proxy, NULL, ccl_proxy_main, group) == 0) {
    group->proxy_running = true;
    return;
  }
  char message[128];
  snprintf(message, sizeof(message),
           "no thread to meet the ranks of other processes");
  ccl_group_record_failure_locked(group, VGPU_ERR_OUT_OF_MEMORY, message);
}

//===----------------------------------------------------------------------===//
// Devices and streams (vgpu_core.h)
//===----------------------------------------------------------------------===//

// A join, and a meeting (ccl_watchdog_main), wait VGPU_CCL_TIMEOUT_MS, else
// VGPU_MAX_WAIT_MS when it is set, else 60 s: a rank that never comes is an
// error, not a hang, either way.
#define CCL_JOIN_TIMEOUT_DEFAULT_MS 60000u
static uint64_t ccl_timeout_ns(void) {
  unsigned ms = vgpu_cfg.ccl_timeout_ms ? vgpu_cfg.ccl_timeout_ms
                : vgpu_cfg.max_wait_ms  ? vgpu_cfg.max_wait_ms
                                        : CCL_JOIN_TIMEOUT_DEFAULT_MS;
  return (uint64_t)ms * 1000000u;
}

vgpu_status vgpu_ccl_comm_init(const uint8_t id[VGPU_CCL_ID_BYTES],
                               int rank_count, int rank, int device,
                               vgpu_ccl_comm** out, char* error,
                               size_t error_size) {
  *out = NULL;
  vgpu_status st = vgpu_device_check(device);
  if (st != VGPU_OK)
    return st;
  vgpu_ccl_comm* comm = NULL;
  st = vgpu_ccl_join(id, rank_count, rank, ccl_timeout_ns(), &comm, error,
                     error_size);
  if (st != VGPU_OK)
    return st;
  comm->device = device;
  *out = comm;
  return VGPU_OK;
}

typedef struct ccl_join_job {
  const uint8_t* id;
  int rank_count;
  int rank;
  int device;
  vgpu_ccl_comm* comm;
  vgpu_status status;
  char error[256];
} ccl_join_job;

static void* ccl_join_main(void* arg) {
  ccl_join_job* job = arg;
  job->status =
      vgpu_ccl_comm_init(job->id, job->rank_count, job->rank, job->device,
                         &job->comm, job->error, sizeof(job->error));
  return NULL;
}

vgpu_status vgpu_ccl_comm_init_all(const uint8_t id[VGPU_CCL_ID_BYTES],
                                   int rank_count, const int* devices,
                                   vgpu_ccl_comm** out_comms, char* error,
                                   size_t error_size) {
  if (rank_count < 1 || rank_count > VGPU_CCL_MAX_RANKS || !devices) {
    ccl_format(error, error_size,
               "%d ranks: a communicator has 1 to %d on the virtual GPU",
               rank_count, VGPU_CCL_MAX_RANKS);
    return VGPU_ERR_INVALID_VALUE;
  }
  // Each rank joins on its own thread, as one process per rank would: a
  // join waits for the others.
  ccl_join_job jobs[VGPU_CCL_MAX_RANKS];
  pthread_t threads[VGPU_CCL_MAX_RANKS];
  int started = 0;
  vgpu_status st = VGPU_OK;
  for (int r = 0; r < rank_count; ++r) {
    jobs[r] = (ccl_join_job){
        .id = id, .rank_count = rank_count, .rank = r, .device = devices[r]};
    if (pthread_create(&threads[r], NULL, ccl_join_main, &jobs[r]) != 0) {
      ccl_format(error, error_size, "no thread to join rank %d", r);
      st = VGPU_ERR_OUT_OF_MEMORY;
      break;
    }
    ++started;
  }
  for (int r = 0; r < started; ++r)
    pthread_join(threads[r], NULL);
  for (int r = 0; r < started && st == VGPU_OK; ++r) {
    if (jobs[r].status != VGPU_OK) {
      st = jobs[r].status;
      ccl_format(error, error_size, "%s", jobs[r].error);
    }
  }
  for (int r = 0; r < started; ++r) {
    if (st == VGPU_OK)
      out_comms[r] = jobs[r].comm;
    else if (jobs[r].comm)
      vgpu_ccl_leave(jobs[r].comm);
  }
  return st;
}

vgpu_status vgpu_ccl_comm_destroy(vgpu_ccl_comm* comm, bool abort) {
  if (comm == NULL)
    return VGPU_ERR_INVALID_VALUE;
  if (abort)
    vgpu_ccl_abort(comm, VGPU_ERR_DEVICE_LOST);
  uint64_t deadline = vgpu_wait_deadline();
  vgpu_status st = VGPU_OK;
  pthread_mutex_lock(&comm->mu);
  while (comm->queued > 0) {
    if (!vgpu_cond_wait_bounded(&comm->cv, &comm->mu, deadline)) {
      st = VGPU_ERR_TIMEOUT;
      break;
    }
  }
  pthread_mutex_unlock(&comm->mu);
  if (st != VGPU_OK) {
    // Its queued work would use it after the free: keep it, say why.
    return vgpu_misuse(VGPU_ERR_TIMEOUT,
                       "destroying rank %d's communicator: its collectives "
                       "queued on streams did not run within "
                       "VGPU_MAX_WAIT_MS=%u ms",
                       comm->rank, vgpu_cfg.max_wait_ms);
  }
  vgpu_ccl_leave(comm);
  return VGPU_OK;
}

int vgpu_ccl_comm_device(const vgpu_ccl_comm* comm) {
  return comm->device;
}

// The id of split |seq|'s communicator of |color| (-2: the split's own
// all-gather), derived from |parent| alike on every rank and process.
static void ccl_split_id(const uint8_t* parent, uint64_t seq, int64_t color,
                         uint8_t out[VGPU_CCL_ID_BYTES]) {
  uint64_t h = 0xcbf29ce484222325u;
  for (int i = 0; i < VGPU_CCL_ID_BYTES; ++i)
    h = (h ^ parent[i]) * 0x100000001b3u;
  uint64_t state =
      h ^ (seq * 0x9e3779b97f4a7c15u) ^ ((uint64_t)color * 0xbf58476d1ce4e5b9u);
  for (int i = 0; i < VGPU_CCL_ID_BYTES; i += 8) {  // splitmix64
    state += 0x9e3779b97f4a7c15u;
    uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    z ^= z >> 31;
    memcpy(out + i, &z, 8);
  }
}

vgpu_status vgpu_ccl_comm_split(vgpu_ccl_comm* comm, int color, int key,
                                vgpu_ccl_comm** out, char* error,
                                size_t error_size) {
  *out = NULL;
  if (color < -1) {
    ccl_format(error, error_size,
               "split: color %d (a color is >= 0, or -1 for none)", color);
    return VGPU_ERR_INVALID_VALUE;
  }
  ccl_group* group = comm->group;
  int ranks = group->rank_count;
  uint64_t seq = comm->splits++;
  // Every rank's (color, key), through a communicator of the split's own
  // (not |comm|'s collectives: those run in stream order, this on the
  // host), joined by every rank as |comm|'s are.
  uint8_t id[VGPU_CCL_ID_BYTES];
  ccl_split_id(group->id, seq, -2, id);
  vgpu_ccl_comm* all = NULL;
  vgpu_status st = vgpu_ccl_join(id, ranks, comm->rank, ccl_timeout_ns(), &all,
                                 error, error_size);
  if (st != VGPU_OK)
    return st;
  int32_t mine[2] = {color, key};
  int32_t* every = malloc(sizeof(int32_t) * 2 * (size_t)ranks);
  vgpu_mark* done = vgpu_mark_create(comm->device >= 0 ? comm->device : 0);
  if (every == NULL || done == NULL) {
    st = VGPU_ERR_OUT_OF_MEMORY;
  } else {
    vgpu_ccl_call call = {.kind = VGPU_CCL_ALL_GATHER,
                          .send = mine,
                          .recv = every,
                          .count = 2,
                          .type = CCL_INT32};
    st = vgpu_ccl_arrive(all, &call, done, error, error_size);
    if (st == VGPU_OK)
      st = vgpu_mark_wait(done, "ncclCommSplit", 0);
    if (st != VGPU_OK)
      (void)vgpu_ccl_async_error(all, error, error_size);
  }
  if (done != NULL)
    vgpu_mark_release(done);
  vgpu_ccl_leave(all);
  if (st != VGPU_OK || color < 0) {
    free(every);
    return st;
  }
  int count = 0, rank = 0;
  for (int r = 0; r < ranks; ++r) {
    if (every[2 * r] != color)
      continue;
    ++count;
    int32_t other = every[2 * r + 1];
    rank += other < key || (other == key && r < comm->rank);
  }
  free(every);
  ccl_split_id(group->id, seq, color, id);
  st = vgpu_ccl_join(id, count, rank, ccl_timeout_ns(), out, error, error_size);
  if (st == VGPU_OK)
    (*out)->device = comm->device;
  return st;
}

// |comm|'s communicator fails with |status| and |message| (the first
// failure sticks), here and in every process.
static void ccl_comm_fail(vgpu_ccl_comm* comm, vgpu_status status,
                          const char* message) {
  pthread_mutex_lock(&ccl_registry.mu);
  ccl_meeting* failed = ccl_group_fail_locked(comm->group, status, message);
  pthread_mutex_unlock(&ccl_registry.mu);
  ccl_meetings_fail(failed, status);
}

void vgpu_ccl_work_run(const vgpu_work_collective* work, vgpu_status status) {
  char error[384] = "";
  if (status == VGPU_OK) {
    status = vgpu_ccl_arrive(work->comm, &work->call, work->done, error,
                             sizeof(error));
  } else {
    snprintf(error, sizeof(error),
             "%s on rank %d: its stream failed before it (status %d)",
             ccl_kind_name(work->call.kind), work->comm->rank, (int)status);
  }
  if (status != VGPU_OK) {
    // It never met anyone: its mark is its own. Its stream goes on (a
    // collective's failure is the communicator's), so the communicator
    // fails too, or its async error would say nothing and the caller would
    // take an unwritten receive buffer for a result; and its peers would
    // wait for it until the bound.
    ccl_comm_fail(work->comm, status, error);
    vgpu_mark_complete(work->done, status);
  }
  vgpu_ccl_comm* comm = work->comm;
  pthread_mutex_lock(&comm->mu);
  if (--comm->queued == 0)
    pthread_cond_broadcast(&comm->cv);
  pthread_mutex_unlock(&comm->mu);
}

// The bytes |call| reads and writes on its rank of |ranks|.
// The bytes |call| reads and writes on rank |rank|: a broadcast reads no
// send buffer off its root, a reduce writes no receive buffer off its root.
static void ccl_call_extents(const vgpu_ccl_call* call, int ranks, int rank,
                             size_t* send_bytes, size_t* recv_bytes) {
  size_t bytes = call->count * vgpu_ccl_type_size(call->type);
  bool root = call->peer == rank;
  *send_bytes = call->kind == VGPU_CCL_RECV                 ? 0
                : call->kind == VGPU_CCL_BROADCAST && !root ? 0
                : call->kind == VGPU_CCL_REDUCE_SCATTER ? bytes * (size_t)ranks
                                                        : bytes;
  *recv_bytes = call->kind == VGPU_CCL_SEND              ? 0
                : call->kind == VGPU_CCL_REDUCE && !root ? 0
                : call->kind == VGPU_CCL_ALL_GATHER      ? bytes * (size_t)ranks
                                                         : bytes;
}

// Puts |op| (a collective's arrival, |done| its mark) on |stream|, counted
// as queued on its communicator. The op is the stream's (or freed).
static vgpu_status ccl_submit(vgpu_stream* stream, vgpu_op* op) {
  vgpu_ccl_comm* comm = op->work.collective.comm;
  pthread_mutex_lock(&comm->mu);
  ++comm->queued;
  pthread_mutex_unlock(&comm->mu);
  vgpu_status st = vgpu_stream_enqueue(stream, op);
  if (st != VGPU_OK) {  // never to run
    pthread_mutex_lock(&comm->mu);
    --comm->queued;
    pthread_mutex_unlock(&comm->mu);
  }
  return st;
}

// The calling thread's group (ncclGroupStart .. End): its depth, and the
// calls it holds back, checked and ready (each stream and mark retained,
// the op owned) until the outermost end.
typedef struct ccl_held_call {
  vgpu_stream* stream;
  vgpu_op* op;
  vgpu_mark* done;
} ccl_held_call;
static _Thread_local struct {
  int depth;
  ccl_held_call* calls;
  size_t count;
  size_t capacity;
} ccl_group_tls;

// Empties the calling thread's list of held calls.
static void ccl_group_forget(void) {
  free(ccl_group_tls.calls);
  ccl_group_tls.calls = NULL;
  ccl_group_tls.count = ccl_group_tls.capacity = 0;
}

void vgpu_ccl_group_start(void) {
  ++ccl_group_tls.depth;
}

bool vgpu_ccl_group_is_open(void) {
  return ccl_group_tls.depth > 0;
}

vgpu_status vgpu_ccl_group_end(void) {
  if (ccl_group_tls.depth == 0)
    return VGPU_ERR_INVALID_VALUE;
  if (--ccl_group_tls.depth > 0)
    return VGPU_OK;
  // As NCCL launches a group at its end: every call goes on its stream
  // (after the work enqueued there inside the group), then every stream
  // waits for its calls, so each call arrived before any is waited for.
  vgpu_status result = VGPU_OK;
  for (size_t i = 0; i < ccl_group_tls.count; ++i) {
    ccl_held_call* call = &ccl_group_tls.calls[i];
    vgpu_status st = ccl_submit(call->stream, call->op);
    call->op = NULL;
    if (st != VGPU_OK) {
      if (result == VGPU_OK)
        result = st;
      vgpu_mark_release(call->done);  // never waited for
      call->done = NULL;
    }
  }
  for (size_t i = 0; i < ccl_group_tls.count; ++i) {
    ccl_held_call* call = &ccl_group_tls.calls[i];
    if (call->done != NULL) {
      vgpu_status st = vgpu_stream_wait_mark(call->stream, call->done);
      if (result == VGPU_OK)
        result = st;
      vgpu_mark_release(call->done);
    }
    vgpu_object_release(&call->stream->base);
  }
  ccl_group_forget();
  return result;
}

void vgpu_ccl_group_drop(void) {
  if (ccl_group_tls.depth == 0 || --ccl_group_tls.depth > 0)
    return;
  for (size_t i = 0; i < ccl_group_tls.count; ++i) {
    ccl_held_call* call = &ccl_group_tls.calls[i];
    vgpu_op_free(call->op);  // drops the work's reference to the mark
    vgpu_mark_release(call->done);
    vgpu_object_release(&call->stream->base);
  }
  ccl_group_forget();
}

// Holds |op| back to the group's end; false when out of memory.
static bool ccl_group_hold(vgpu_stream* stream, vgpu_op* op, vgpu_mark* done) {
  if (ccl_group_tls.count == ccl_group_tls.capacity) {
    size_t capacity = ccl_group_tls.capacity ? ccl_group_tls.capacity * 2 : 8;
    ccl_held_call* calls =
        realloc(ccl_group_tls.calls, capacity * sizeof(*calls));
    if (calls == NULL)
      return false;
    ccl_group_tls.calls = calls;
    ccl_group_tls.capacity = capacity;
  }
  vgpu_object_retain(&stream->base);
  vgpu_mark_retain(done);
  ccl_group_tls.calls[ccl_group_tls.count++] =
      (ccl_held_call){.stream = stream, .op = op, .done = done};
  return true;
}

vgpu_status vgpu_ccl_enqueue(vgpu_ccl_comm* comm, const vgpu_ccl_call* call,
                             uint64_t stream, char* error, size_t error_size) {
  vgpu_status st = ccl_check_call(comm, call, error, error_size);
  if (st != VGPU_OK)
    return st;
  int ranks = comm->group->rank_count;
  if (call->count > SIZE_MAX / 8 / (size_t)ranks) {
    ccl_format(error, error_size, "%s of %zu elements: too many",
               ccl_kind_name(call->kind), call->count);
    return VGPU_ERR_INVALID_VALUE;
  }
  vgpu_stream* s = NULL;
  st = vgpu_stream_get(stream, comm->device, &s);
  if (st != VGPU_OK)
    return st;
  vgpu_op* op = NULL;
  vgpu_mark* done = NULL;
  if (s->device != comm->device) {
    st = vgpu_misuse(VGPU_ERR_INVALID_VALUE,
                     "%s on a stream of device %d for rank %d's communicator "
                     "on device %d",
                     ccl_kind_name(call->kind), s->device, comm->rank,
                     comm->device);
    goto out;
  }
  op = vgpu_op_new(VGPU_OP_WORK);
  done = vgpu_mark_create(comm->device);
  if (op == NULL || done == NULL) {
    st = VGPU_ERR_OUT_OF_MEMORY;
    goto out;
  }
  size_t send_bytes = 0, recv_bytes = 0;
  ccl_call_extents(call, ranks, comm->rank, &send_bytes, &recv_bytes);
  st = vgpu_range_check("send buffer", call->send, send_bytes, comm->device,
                        &op->uses);
  if (st == VGPU_OK) {
    st = vgpu_range_check("receive buffer", call->recv, recv_bytes,
                          comm->device, &op->uses);
  }
  if (st != VGPU_OK) {
    ccl_format(error, error_size,
               "%s: a buffer is not in device memory of device %d (the "
               "virtual GPU's strict report says which)",
               ccl_kind_name(call->kind), comm->device);
    goto out;
  }
  op->work.type = VGPU_WORK_COLLECTIVE;
  op->work.collective.comm = comm;
  op->work.collective.call = *call;
  op->work.collective.done = done;
  vgpu_mark_retain(done);  // the work's reference; ours goes to the wait
  if (ccl_group_tls.depth > 0) {
    if (!ccl_group_hold(s, op, done)) {
      st = VGPU_ERR_OUT_OF_MEMORY;
      goto out;  // frees the op, which drops the work's reference
    }
    op = NULL;  // the group's now
    goto out;
  }
  st = ccl_submit(s, op);
  op = NULL;  // the stream's now, or freed by it
  if (st == VGPU_OK)
    st = vgpu_stream_wait_mark(s, done);
out:
  if (op != NULL)
    vgpu_op_free(op);
  if (done != NULL)
    vgpu_mark_release(done);
  vgpu_object_release(&s->base);
  return st;
}
