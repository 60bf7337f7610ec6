// Copyright 2026 The HAL Authors.
//
// The collectives engine (core/ccl.h) on its own: ranks are threads of this
// process. Every collective on every type and reduction against the
// arithmetic done here in double, in place and not, odd counts; send and
// receive in order per pair; and what must fail: ranks that disagree, a
// rank that never joins (a bounded wait, the missing rank named), an abort
// and a rank that leaves (the others fail, at once for later calls), calls
// wrong on their own. Data comes from HAL_TEST_SEED (printed).

#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
// clang-format off
#include <cmocka.h>
// clang-format on

#include "ccl.h"

static uint64_t g_seed;

// The compiler's IEEE half: an oracle independent of the engine's own
// conversions.
__extension__ typedef _Float16 test_half;

static uint64_t next_random(uint64_t* state) {
  uint64_t x = *state;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *state = x;
  return x * UINT64_C(2685821657736338717);
}

static int setup(void** state) {
  (void)state;
  const char* env = getenv("HAL_TEST_SEED");
  g_seed = env ? strtoull(env, NULL, 10) : (uint64_t)vgpu_now_ns();
  if (!g_seed)
    g_seed = 1;
  fprintf(stderr, "[ SEED     ] HAL_TEST_SEED=%" PRIu64 "\n", g_seed);
  return 0;
}

// A fresh id per communicator: random bytes, as ncclGetUniqueId makes.
static void make_id(uint8_t id[VGPU_CCL_ID_BYTES], uint64_t* state) {
  for (int i = 0; i < VGPU_CCL_ID_BYTES; ++i)
    id[i] = (uint8_t)next_random(state);
}

enum { kTypeCount = 10, kReductionCount = 5, kMaxRanks = 4 };
static const int kTypes[kTypeCount] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
enum { kSum = 0, kProd = 1, kMax = 2, kMin = 3, kAvg = 4 };
enum { kFloat16 = 6, kFloat32 = 7, kFloat64 = 8, kBfloat16 = 9 };

// Small integers, exact in every type (prod of up to 4 values of 1..3 is at
// most 81, exact in bfloat16's 8 bits).
static void store(int type, void* data, size_t i, double value) {
  switch (type) {
    case 0:
      ((int8_t*)data)[i] = (int8_t)value;
      break;
    case 1:
      ((uint8_t*)data)[i] = (uint8_t)value;
      break;
    case 2:
      ((int32_t*)data)[i] = (int32_t)value;
      break;
    case 3:
      ((uint32_t*)data)[i] = (uint32_t)value;
      break;
    case 4:
      ((int64_t*)data)[i] = (int64_t)value;
      break;
    case 5:
      ((uint64_t*)data)[i] = (uint64_t)value;
      break;
    case kFloat16:
      ((test_half*)data)[i] = (test_half)value;
      break;
    case kFloat32:
      ((float*)data)[i] = (float)value;
      break;
    case kFloat64:
      ((double*)data)[i] = value;
      break;
    case kBfloat16: {  // exact small integers: the float's top half
      float f = (float)value;
      uint32_t bits;
      memcpy(&bits, &f, sizeof(bits));
      ((uint16_t*)data)[i] = (uint16_t)(bits >> 16);
      break;
    }
  }
}

static double load(int type, const void* data, size_t i) {
  switch (type) {
    case 0:
      return ((const int8_t*)data)[i];
    case 1:
      return ((const uint8_t*)data)[i];
    case 2:
      return ((const int32_t*)data)[i];
    case 3:
      return ((const uint32_t*)data)[i];
    case 4:
      return (double)((const int64_t*)data)[i];
    case 5:
      return (double)((const uint64_t*)data)[i];
    case kFloat16:
      return (double)((const test_half*)data)[i];
    case kFloat32:
      return ((const float*)data)[i];
    case kFloat64:
      return ((const double*)data)[i];
    case kBfloat16: {
      uint32_t bits = (uint32_t)((const uint16_t*)data)[i] << 16;
      float f;
      memcpy(&f, &bits, sizeof(f));
      return f;
    }
  }
  return NAN;
}

static bool is_float(int type) {
  return type >= kFloat16;
}

static double combine(int reduction, double a, double b) {
  switch (reduction) {
    case kProd:
      return a * b;
    case kMax:
      return b > a ? b : a;
    case kMin:
      return b < a ? b : a;
  }
  return a + b;
}

// The reduction of |values| of |ranks| ranks, as the type computes it.
static double expected(int type, int reduction, const double* values,
                       int ranks) {
  double result = values[0];
  for (int r = 1; r < ranks; ++r)
    result = combine(reduction, result, values[r]);
  if (reduction == kAvg)
    result = is_float(type) ? result / ranks : floor(result / ranks);
  return result;
}

// One rank's part: join, the calls, leave; run on its own thread.
typedef struct rank_job {
  const uint8_t* id;
  int rank;
  int ranks;
  uint64_t join_timeout_ns;
  void (*body)(struct rank_job* job, vgpu_ccl_comm* comm);
  void* context;
  vgpu_status join_status;
  char join_error[256];
} rank_job;

static void* rank_main(void* arg) {
  rank_job* job = arg;
  vgpu_ccl_comm* comm = NULL;
  job->join_status =
      vgpu_ccl_join(job->id, job->ranks, job->rank, job->join_timeout_ns, &comm,
                    job->join_error, sizeof(job->join_error));
  if (job->join_status == VGPU_OK) {
    if (job->body)
      job->body(job, comm);
    vgpu_ccl_leave(comm);
  }
  return NULL;
}

static void run_ranks(rank_job* jobs, int ranks) {
  pthread_t threads[kMaxRanks];
  for (int r = 0; r < ranks; ++r)
    assert_int_equal(pthread_create(&threads[r], NULL, rank_main, &jobs[r]), 0);
  for (int r = 0; r < ranks; ++r)
    pthread_join(threads[r], NULL);
}

static void start_jobs(rank_job* jobs, int ranks, const uint8_t* id,
                       void (*body)(rank_job*, vgpu_ccl_comm*), void* context) {
  for (int r = 0; r < ranks; ++r) {
    jobs[r] = (rank_job){.id = id,
                         .rank = r,
                         .ranks = ranks,
                         .join_timeout_ns = 10ull * 1000 * 1000 * 1000,
                         .body = body,
                         .context = context};
  }
}

// Arrives with |call| and waits for the collective; its status.
static vgpu_status collective(vgpu_ccl_comm* comm, const vgpu_ccl_call* call) {
  vgpu_mark* done = vgpu_mark_create(0);
  char error[256] = "";
  vgpu_status status = vgpu_ccl_arrive(comm, call, done, error, sizeof(error));
  if (status == VGPU_OK)  // the mark's status, or a timeout
    status = vgpu_mark_wait(done, "collective", 0);
  vgpu_mark_release(done);
  return status;
}

//===----------------------------------------------------------------------===//
// Results
//===----------------------------------------------------------------------===//

typedef struct reduce_case {
  vgpu_ccl_kind kind;
  int type, reduction, root;
  size_t count;   // per the call (all-gather: in; reduce-scatter: out)
  bool in_place;  // all-reduce with send == recv
  void* send[kMaxRanks];
  void* recv[kMaxRanks];
  vgpu_status status[kMaxRanks];
} reduce_case;

static void reduce_body(rank_job* job, vgpu_ccl_comm* comm) {
  reduce_case* c = job->context;
  vgpu_ccl_call call = {.kind = c->kind,
                        .send = c->send[job->rank],
                        .recv = c->recv[job->rank],
                        .count = c->count,
                        .type = c->type,
                        .reduction = c->reduction,
                        .peer = c->root};
  c->status[job->rank] = collective(comm, &call);
}

// Runs |c| on |ranks| ranks and checks every rank's output.
static void check_case(reduce_case* c, int ranks, uint64_t* state) {
  size_t element = vgpu_ccl_type_size(c->type);
  size_t in = c->kind == VGPU_CCL_REDUCE_SCATTER ? c->count * ranks : c->count;
  size_t out = c->kind == VGPU_CCL_ALL_GATHER ? c->count * ranks : c->count;
  int high = c->reduction == kProd ? 3 : 7;
  for (int r = 0; r < ranks; ++r) {
    c->send[r] = malloc(in * element + 1);
    c->recv[r] = c->in_place ? c->send[r] : malloc(out * element + 1);
    for (size_t i = 0; i < in; ++i)
      store(c->type, c->send[r], i, (double)(1 + next_random(state) % high));
    if (!c->in_place)
      memset(c->recv[r], 0xA5, out * element);  // untouched where not written
  }
  // The inputs, kept: in place, the outputs overwrite them.
  double* inputs = malloc(sizeof(double) * in * ranks);
  for (int r = 0; r < ranks; ++r)
    for (size_t i = 0; i < in; ++i)
      inputs[r * in + i] = load(c->type, c->send[r], i);
  uint8_t id[VGPU_CCL_ID_BYTES];
  make_id(id, state);
  rank_job jobs[kMaxRanks];
  start_jobs(jobs, ranks, id, reduce_body, c);
  run_ranks(jobs, ranks);
  double tolerance = c->type == kFloat16 || c->type == kBfloat16 ? 1e-2 : 1e-6;
  for (int r = 0; r < ranks; ++r) {
    assert_int_equal(jobs[r].join_status, VGPU_OK);
    assert_int_equal(c->status[r], VGPU_OK);
    for (size_t i = 0; i < out; ++i) {
      double want;
      double column[kMaxRanks];
      switch (c->kind) {
        case VGPU_CCL_BROADCAST:
          want = inputs[c->root * in + i];
          break;
        case VGPU_CCL_ALL_GATHER:
          want = inputs[(i / c->count) * in + i % c->count];
          break;
        case VGPU_CCL_REDUCE_SCATTER:
          for (int k = 0; k < ranks; ++k)
            column[k] = inputs[k * in + r * c->count + i];
          want = expected(c->type, c->reduction, column, ranks);
          break;
        default:
          for (int k = 0; k < ranks; ++k)
            column[k] = inputs[k * in + i];
          want = expected(c->type, c->reduction, column, ranks);
          break;
      }
      if (c->kind == VGPU_CCL_REDUCE && r != c->root) {
        // Not the root: its receive buffer is not written.
        assert_int_equal(((uint8_t*)c->recv[r])[i * element], 0xA5);
        continue;
      }
      double got = load(c->type, c->recv[r], i);
      if (fabs(got - want) > tolerance * (fabs(want) + 1)) {
        fail_msg(
            "%s type %d reduction %d on %d ranks, rank %d element %zu: "
            "got %g, want %g (HAL_TEST_SEED=%" PRIu64 ")",
            c->kind == VGPU_CCL_ALL_REDUCE ? "all_reduce" : "collective",
            c->type, c->reduction, ranks, r, i, got, want, g_seed);
      }
    }
  }
  for (int r = 0; r < ranks; ++r) {
    if (!c->in_place)
      free(c->recv[r]);
    free(c->send[r]);
  }
  free(inputs);
}

static void Ccl_AllReduceAgreesForEveryTypeAndReduction(void** state) {
  (void)state;
  uint64_t random = g_seed;
  for (int ranks = 2; ranks <= kMaxRanks; ++ranks) {
    for (int t = 0; t < kTypeCount; ++t) {
      for (int reduction = 0; reduction < kReductionCount; ++reduction) {
        reduce_case c = {.kind = VGPU_CCL_ALL_REDUCE,
                         .type = kTypes[t],
                         .reduction = reduction,
                         .count = 1 + next_random(&random) % 257};
        check_case(&c, ranks, &random);
      }
    }
  }
}

static void Ccl_InPlaceAndLargeAllReduce(void** state) {
  (void)state;
  uint64_t random = g_seed ^ 1;
  reduce_case in_place = {.kind = VGPU_CCL_ALL_REDUCE,
                          .type = kFloat32,
                          .reduction = kSum,
                          .count = 1000,
                          .in_place = true};
  check_case(&in_place, 3, &random);
  // 4 MiB per rank, an odd number of elements.
  reduce_case large = {.kind = VGPU_CCL_ALL_REDUCE,
                       .type = kFloat32,
                       .reduction = kMax,
                       .count = (1u << 20) + 7};
  check_case(&large, 2, &random);
  reduce_case one = {
      .kind = VGPU_CCL_ALL_REDUCE, .type = 4, .reduction = kMin, .count = 1};
  check_case(&one, 4, &random);
}

static void Ccl_RootedAndGatheringCollectivesAgree(void** state) {
  (void)state;
  uint64_t random = g_seed ^ 2;
  for (int ranks = 2; ranks <= kMaxRanks; ++ranks) {
    for (int t = 0; t < kTypeCount; t += 3) {
      int root = (int)(next_random(&random) % (uint64_t)ranks);
      size_t count = 1 + next_random(&random) % 100;
      reduce_case broadcast = {.kind = VGPU_CCL_BROADCAST,
                               .type = kTypes[t],
                               .root = root,
                               .count = count};
      check_case(&broadcast, ranks, &random);
      reduce_case reduce = {.kind = VGPU_CCL_REDUCE,
                            .type = kTypes[t],
                            .reduction = kSum,
                            .root = root,
                            .count = count};
      check_case(&reduce, ranks, &random);
      reduce_case gather = {
          .kind = VGPU_CCL_ALL_GATHER, .type = kTypes[t], .count = count};
      check_case(&gather, ranks, &random);
      reduce_case scatter = {.kind = VGPU_CCL_REDUCE_SCATTER,
                             .type = kTypes[t],
                             .reduction = kMax,
                             .count = count};
      check_case(&scatter, ranks, &random);
    }
  }
}

// A ring: each rank sends two messages to the next and receives two from
// the previous, in order, and sends one to itself.
typedef struct ring_case {
  int32_t received[kMaxRanks][3][16];
  vgpu_status status[kMaxRanks];
} ring_case;

static void ring_body(rank_job* job, vgpu_ccl_comm* comm) {
  ring_case* c = job->context;
  int r = job->rank;
  int next = (r + 1) % job->ranks;
  int previous = (r + job->ranks - 1) % job->ranks;
  int32_t sent[3][16];
  for (int m = 0; m < 3; ++m)
    for (int i = 0; i < 16; ++i)
      sent[m][i] = r * 1000 + m * 100 + i;
  // Arriving does not wait for the match: the sends first, in order, then
  // the receives; then every send's completion.
  vgpu_mark* sends[3];
  char error[256];
  vgpu_status status = VGPU_OK;
  for (int m = 0; m < 3; ++m) {
    sends[m] = vgpu_mark_create(0);
    vgpu_ccl_call send = {.kind = VGPU_CCL_SEND,
                          .send = sent[m],
                          .count = 16,
                          .type = 2,
                          .peer = m < 2 ? next : r};
    if (status == VGPU_OK)
      status = vgpu_ccl_arrive(comm, &send, sends[m], error, sizeof(error));
  }
  for (int m = 0; m < 3 && status == VGPU_OK; ++m) {
    vgpu_ccl_call receive = {.kind = VGPU_CCL_RECV,
                             .recv = c->received[r][m],
                             .count = 16,
                             .type = 2,
                             .peer = m < 2 ? previous : r};
    status = collective(comm, &receive);
  }
  for (int m = 0; m < 3; ++m) {
    if (status == VGPU_OK)
      status = vgpu_mark_wait(sends[m], "send", 0);
    vgpu_mark_release(sends[m]);
  }
  c->status[r] = status;
}

static void Ccl_SendsAndReceivesMeetInOrderPerPair(void** state) {
  (void)state;
  uint64_t random = g_seed ^ 3;
  for (int ranks = 2; ranks <= kMaxRanks; ++ranks) {
    ring_case c;
    memset(&c, 0, sizeof(c));
    uint8_t id[VGPU_CCL_ID_BYTES];
    make_id(id, &random);
    rank_job jobs[kMaxRanks];
    start_jobs(jobs, ranks, id, ring_body, &c);
    run_ranks(jobs, ranks);
    for (int r = 0; r < ranks; ++r) {
      assert_int_equal(c.status[r], VGPU_OK);
      int previous = (r + ranks - 1) % ranks;
      for (int m = 0; m < 3; ++m) {
        int from = m < 2 ? previous : r;
        for (int i = 0; i < 16; ++i)
          assert_int_equal(c.received[r][m][i], from * 1000 + m * 100 + i);
      }
    }
  }
}

//===----------------------------------------------------------------------===//
// Failures
//===----------------------------------------------------------------------===//

typedef struct mismatch_case {
  vgpu_status first[kMaxRanks];
  vgpu_status later[kMaxRanks];
  vgpu_status async[kMaxRanks];
  char message[kMaxRanks][384];
} mismatch_case;

static void mismatch_body(rank_job* job, vgpu_ccl_comm* comm) {
  mismatch_case* c = job->context;
  float data[16] = {0};
  vgpu_ccl_call call = {.kind = VGPU_CCL_ALL_REDUCE,
                        .send = data,
                        .recv = data,
                        .count = job->rank == 1 ? 10 : 16,
                        .type = kFloat32,
                        .reduction = kSum};
  c->first[job->rank] = collective(comm, &call);
  call.count = 16;
  c->later[job->rank] = collective(comm, &call);
  c->async[job->rank] =
      vgpu_ccl_async_error(comm, c->message[job->rank], sizeof(c->message[0]));
}

// Ranks that disagree all fail, with what differed; the communicator stays
// failed: the next collective fails at once on every rank.
static void Ccl_RanksThatDisagreeAllFail(void** state) {
  (void)state;
  uint64_t random = g_seed ^ 4;
  mismatch_case c;
  memset(&c, 0, sizeof(c));
  uint8_t id[VGPU_CCL_ID_BYTES];
  make_id(id, &random);
  rank_job jobs[3];
  start_jobs(jobs, 3, id, mismatch_body, &c);
  run_ranks(jobs, 3);
  for (int r = 0; r < 3; ++r) {
    assert_int_equal(c.first[r], VGPU_ERR_INVALID_VALUE);
    assert_int_equal(c.later[r], VGPU_ERR_INVALID_VALUE);
    assert_int_equal(c.async[r], VGPU_ERR_INVALID_VALUE);
    assert_non_null(strstr(c.message[r],
                           "collective #0: rank 1 called all_reduce of 10 "
                           "elements of type 7"));
    assert_non_null(strstr(c.message[r], "rank 0 all_reduce of 16 elements"));
  }
}

static void Ccl_RankThatNeverJoinsFailsTheJoinInBoundedTime(void** state) {
  (void)state;
  uint64_t random = g_seed ^ 5;
  uint8_t id[VGPU_CCL_ID_BYTES];
  make_id(id, &random);
  rank_job jobs[3];
  start_jobs(jobs, 3, id, NULL, NULL);
  jobs[1] = jobs[2];  // rank 1 never comes; ranks 0 and 2 run
  jobs[0].join_timeout_ns = jobs[1].join_timeout_ns = 200ull * 1000 * 1000;
  uint64_t start = vgpu_now_ns();
  run_ranks(jobs, 2);
  uint64_t elapsed_ms = (vgpu_now_ns() - start) / 1000000u;
  assert_in_range(elapsed_ms, 150, 30000);
  for (int j = 0; j < 2; ++j) {
    print_message("%s\n", jobs[j].join_error);
    assert_int_equal(jobs[j].join_status, VGPU_ERR_TIMEOUT);
    assert_non_null(
        strstr(jobs[j].join_error, "rank 1 of 3 never joined within 200 ms"));
  }
  // Both left: the id is free again, and a full set joins.
  rank_job again[3];
  start_jobs(again, 3, id, NULL, NULL);
  run_ranks(again, 3);
  for (int r = 0; r < 3; ++r)
    assert_int_equal(again[r].join_status, VGPU_OK);
}

typedef struct abort_case {
  vgpu_status waiting;  // rank 0's collective, met by rank 1's abort
  vgpu_status later;    // rank 0's next one
  char later_error[256];
  pthread_mutex_t mu;
  pthread_cond_t cv;
  bool arrived;
  bool leave_instead;  // rank 1 leaves instead of aborting
} abort_case;

static void abort_body(rank_job* job, vgpu_ccl_comm* comm) {
  abort_case* c = job->context;
  float data[4] = {0};
  vgpu_ccl_call call = {.kind = VGPU_CCL_ALL_REDUCE,
                        .send = data,
                        .recv = data,
                        .count = 4,
                        .type = kFloat32};
  if (job->rank == 0) {
    vgpu_mark* done = vgpu_mark_create(0);
    char error[256];
    assert_int_equal(vgpu_ccl_arrive(comm, &call, done, error, sizeof(error)),
                     VGPU_OK);
    pthread_mutex_lock(&c->mu);
    c->arrived = true;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
    c->waiting = vgpu_mark_wait(done, "collective", 0);
    vgpu_mark_release(done);
    vgpu_mark* next = vgpu_mark_create(0);
    c->later = vgpu_ccl_arrive(comm, &call, next, c->later_error,
                               sizeof(c->later_error));
    vgpu_mark_release(next);
    return;
  }
  pthread_mutex_lock(&c->mu);
  while (!c->arrived)
    pthread_cond_wait(&c->cv, &c->mu);
  pthread_mutex_unlock(&c->mu);
  if (!c->leave_instead)
    vgpu_ccl_abort(comm, VGPU_ERR_DEVICE_LOST);
  // Leaving is the job's end (rank_main): rank 1 returns now.
}

static void run_abort_case(abort_case* c, uint64_t* random) {
  pthread_mutex_init(&c->mu, NULL);
  pthread_cond_init(&c->cv, NULL);
  uint8_t id[VGPU_CCL_ID_BYTES];
  make_id(id, random);
  rank_job jobs[2];
  start_jobs(jobs, 2, id, abort_body, c);
  run_ranks(jobs, 2);
  pthread_cond_destroy(&c->cv);
  pthread_mutex_destroy(&c->mu);
}

static void Ccl_AbortFailsWaitingAndLaterCollectives(void** state) {
  (void)state;
  uint64_t random = g_seed ^ 6;
  abort_case c;
  memset(&c, 0, sizeof(c));
  run_abort_case(&c, &random);
  assert_int_equal(c.waiting, VGPU_ERR_DEVICE_LOST);
  assert_int_equal(c.later, VGPU_ERR_DEVICE_LOST);
  assert_non_null(strstr(c.later_error, "was aborted by rank 1"));
}

static void Ccl_RankThatLeavesFailsTheOthers(void** state) {
  (void)state;
  uint64_t random = g_seed ^ 7;
  abort_case c;
  memset(&c, 0, sizeof(c));
  c.leave_instead = true;
  run_abort_case(&c, &random);
  assert_int_equal(c.waiting, VGPU_ERR_DEVICE_LOST);
  assert_int_equal(c.later, VGPU_ERR_DEVICE_LOST);
  assert_non_null(strstr(c.later_error, "rank 1 left communicator"));
}

static void bad_calls_body(rank_job* job, vgpu_ccl_comm* comm) {
  float data[4] = {0};
  char error[256];
  vgpu_mark* done = vgpu_mark_create(0);
  struct {
    vgpu_ccl_call call;
    vgpu_status status;
    const char* message;
  } cases[] = {
      {{.kind = VGPU_CCL_ALL_REDUCE,
        .send = data,
        .recv = data,
        .count = 4,
        .type = 42},
       VGPU_ERR_INVALID_VALUE,
       "unknown data type 42"},
      {{.kind = VGPU_CCL_ALL_REDUCE,
        .send = data,
        .recv = data,
        .count = 4,
        .type = 10},
       VGPU_ERR_NOT_SUPPORTED,
       "(float8) is not implemented"},
      {{.kind = VGPU_CCL_ALL_REDUCE,
        .send = data,
        .recv = data,
        .count = 4,
        .type = kFloat32,
        .reduction = 9},
       VGPU_ERR_INVALID_VALUE,
       "unknown reduction 9"},
      {{.kind = VGPU_CCL_BROADCAST,
        .send = data,
        .recv = data,
        .count = 4,
        .type = kFloat32,
        .peer = 5},
       VGPU_ERR_INVALID_VALUE,
       "root 5 is not a rank of 2"},
      {{.kind = VGPU_CCL_SEND,
        .send = data,
        .count = 4,
        .type = kFloat32,
        .peer = -1},
       VGPU_ERR_INVALID_VALUE,
       "peer -1 is not a rank of 2"},
      {{.kind = VGPU_CCL_ALL_GATHER,
        .send = NULL,
        .recv = data,
        .count = 4,
        .type = kFloat32},
       VGPU_ERR_INVALID_VALUE,
       "with a NULL buffer"},
      {{.kind = VGPU_CCL_ALL_REDUCE,
        .send = (const char*)data + 2,
        .recv = data,
        .count = 1,
        .type = kFloat32},
       VGPU_ERR_INVALID_VALUE,
       "is not aligned to its 4-byte elements"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
    error[0] = '\0';
    assert_int_equal(
        vgpu_ccl_arrive(comm, &cases[i].call, done, error, sizeof(error)),
        cases[i].status);
    assert_non_null(strstr(error, cases[i].message));
  }
  assert_false(vgpu_mark_done(done));  // never taken part in anything
  vgpu_mark_release(done);
  if (job->rank != 0)
    return;
  // Joining a communicator that has its ranks (rank 0 is in it still): a
  // rank twice, or another rank count.
  vgpu_ccl_comm* other = (vgpu_ccl_comm*)1;
  assert_int_equal(
      vgpu_ccl_join(job->id, 2, 0, 1000, &other, error, sizeof(error)),
      VGPU_ERR_INVALID_VALUE);
  assert_null(other);
  assert_non_null(strstr(error, "rank 0 joined already"));
  assert_int_equal(
      vgpu_ccl_join(job->id, 3, 2, 1000, &other, error, sizeof(error)),
      VGPU_ERR_INVALID_VALUE);
  assert_non_null(strstr(error,
                         "joins with 3 ranks, the ranks before it "
                         "with 2"));
}

// Wrong on their own: refused before meeting anyone; the communicator is
// still good after.
static void Ccl_CallsWrongOnTheirOwnAreRefused(void** state) {
  (void)state;
  uint64_t random = g_seed ^ 8;
  uint8_t id[VGPU_CCL_ID_BYTES];
  make_id(id, &random);
  rank_job jobs[2];
  start_jobs(jobs, 2, id, bad_calls_body, NULL);
  run_ranks(jobs, 2);
  assert_int_equal(jobs[0].join_status, VGPU_OK);
  assert_int_equal(jobs[1].join_status, VGPU_OK);

  vgpu_ccl_comm* comm = (vgpu_ccl_comm*)1;
  char error[256];
  assert_int_equal(vgpu_ccl_join(id, 2, 2, 1000, &comm, error, sizeof(error)),
                   VGPU_ERR_INVALID_VALUE);
  assert_null(comm);
  assert_non_null(strstr(error, "rank 2 of 2 ranks"));
  assert_int_equal(vgpu_ccl_join(id, 0, 0, 1000, &comm, error, sizeof(error)),
                   VGPU_ERR_INVALID_VALUE);
}

// Four ranks split twice: by parity with keys that reverse the order,
// then ranks 0-2 together and rank 3 in none. Each new communicator's
// ranks and count follow the colors and keys, and an all-reduce of the
// parent ranks over it sums the right ones.
typedef struct split_case {
  int rank_in[2][kMaxRanks];  // per split, per parent rank (-1: none)
  int count_in[2][kMaxRanks];
  int32_t sums[2][kMaxRanks];
  vgpu_status status[kMaxRanks];
} split_case;

static void split_body(rank_job* job, vgpu_ccl_comm* comm) {
  split_case* c = job->context;
  int r = job->rank;
  char error[256] = "";
  for (int round = 0; round < 2; ++round) {
    int color = round == 0 ? r % 2 : (r == 3 ? -1 : 7);
    vgpu_ccl_comm* part = NULL;
    vgpu_status st =
        vgpu_ccl_comm_split(comm, color, -r, &part, error, sizeof(error));
    if (st != VGPU_OK) {
      c->status[r] = st;
      return;
    }
    c->rank_in[round][r] = part ? vgpu_ccl_rank(part) : -1;
    c->count_in[round][r] = part ? vgpu_ccl_rank_count(part) : 0;
    if (part == NULL)
      continue;
    int32_t mine = r;
    vgpu_ccl_call call = {.kind = VGPU_CCL_ALL_REDUCE,
                          .send = &mine,
                          .recv = &c->sums[round][r],
                          .count = 1,
                          .type = 2,
                          .reduction = kSum};
    st = collective(part, &call);
    vgpu_ccl_leave(part);
    if (st != VGPU_OK) {
      c->status[r] = st;
      return;
    }
  }
  // A color below -1 is refused before anyone meets.
  vgpu_ccl_comm* none = NULL;
  c->status[r] = vgpu_ccl_comm_split(comm, -2, 0, &none, error,
                                     sizeof(error)) == VGPU_ERR_INVALID_VALUE
                     ? VGPU_OK
                     : VGPU_ERR_NOT_FOUND;
}

static void Ccl_SplitMakesCommunicatorsByColorAndKey(void** state) {
  (void)state;
  uint64_t random = g_seed ^ 9;
  split_case c;
  memset(&c, 0, sizeof(c));
  uint8_t id[VGPU_CCL_ID_BYTES];
  make_id(id, &random);
  rank_job jobs[4];
  start_jobs(jobs, 4, id, split_body, &c);
  run_ranks(jobs, 4);
  for (int r = 0; r < 4; ++r) {
    assert_int_equal(jobs[r].join_status, VGPU_OK);
    assert_int_equal(c.status[r], VGPU_OK);
    // By parity, keys -r: the higher parent rank comes first.
    assert_int_equal(c.count_in[0][r], 2);
    assert_int_equal(c.rank_in[0][r], r < 2 ? 1 : 0);
    assert_int_equal(c.sums[0][r], r % 2 == 0 ? 0 + 2 : 1 + 3);
    if (r == 3) {
      assert_int_equal(c.rank_in[1][r], -1);
    } else {
      assert_int_equal(c.count_in[1][r], 3);
      assert_int_equal(c.rank_in[1][r], 2 - r);
      assert_int_equal(c.sums[1][r], 0 + 1 + 2);
    }
  }
}

#define CASE(name) cmocka_unit_test(name)

int main(void) {
  const struct CMUnitTest tests[] = {
      CASE(Ccl_AllReduceAgreesForEveryTypeAndReduction),
      CASE(Ccl_InPlaceAndLargeAllReduce),
      CASE(Ccl_RootedAndGatheringCollectivesAgree),
      CASE(Ccl_SendsAndReceivesMeetInOrderPerPair),
      CASE(Ccl_RanksThatDisagreeAllFail),
      CASE(Ccl_RankThatNeverJoinsFailsTheJoinInBoundedTime),
      CASE(Ccl_AbortFailsWaitingAndLaterCollectives),
      CASE(Ccl_RankThatLeavesFailsTheOthers),
      CASE(Ccl_CallsWrongOnTheirOwnAreRefused),
      CASE(Ccl_SplitMakesCommunicatorsByColorAndKey),
  };
  return cmocka_run_group_tests(tests, setup, NULL);
}
