// Copyright 2026 The HAL Authors.
//
// The collectives engine (core/ccl.h) across processes: each case starts
// this program again as 2 or 3 processes of 1 or 2 ranks each (threads),
// which join one communicator by its id (passed in their environment) and
// meet through the shared segment (core/ccl_shm.h). Every collective, with
// counts from 0 to several staging chunks, in place and not, and grouped
// sends and receives both ways, is checked on every element against the
// inputs, which every process can compute for every rank from the seed;
// and a split by parity whose communicators span the processes.
// What must fail, fails in every process, in bounded time: ranks that
// disagree, rank counts that differ or a rank joined in two processes
// (the process waiting learns it at once), an abort, a rank that leaves, a
// process killed (its peers fail at once, not at the bound). Data comes
// from HAL_TEST_SEED (printed), passed to the processes.

#include <inttypes.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
// clang-format off
#include <cmocka.h>
// clang-format on

#include "ccl.h"
#include "ccl_shm.h"

extern char** environ;

static uint64_t g_seed;

static uint64_t next_random(uint64_t* state) {
  uint64_t x = *state;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *state = x;
  return x * UINT64_C(2685821657736338717);
}

enum { kMaxProcs = 3, kMaxLocal = 2, kMaxRanks = kMaxProcs * kMaxLocal };
enum { kInt8 = 0, kInt32 = 2, kUint64 = 5, kFloat32 = 7, kFloat64 = 8 };
enum { kSum = 0, kProd = 1, kMax = 2, kMin = 3, kAvg = 4 };

// Exit codes of a process (the parent checks them).
enum {
  kExitOk = 0,
  kExitWrong = 1,
  kExitInvalid = 10,
  kExitTimeout = 11,
};

//===----------------------------------------------------------------------===//
// A rank process
//===----------------------------------------------------------------------===//

typedef struct proc_context {
  const char* scenario;
  uint8_t id[VGPU_CCL_ID_BYTES];
  int proc, procs, local;
} proc_context;

static void die(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
static void die(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  fprintf(stderr, "[ PROCESS  ] ");
  vfprintf(stderr, fmt, args);
  fprintf(stderr, " (HAL_TEST_SEED=%" PRIu64 ")\n", g_seed);
  va_end(args);
  exit(kExitWrong);
}

static double load(int type, const void* data, size_t i) {
  switch (type) {
    case kInt8:
      return ((const int8_t*)data)[i];
    case kInt32:
      return ((const int32_t*)data)[i];
    case kUint64:
      return (double)((const uint64_t*)data)[i];
    case kFloat32:
      return ((const float*)data)[i];
  }
  return ((const double*)data)[i];
}

static void store(int type, void* data, size_t i, double value) {
  switch (type) {
    case kInt8:
      ((int8_t*)data)[i] = (int8_t)value;
      break;
    case kInt32:
      ((int32_t*)data)[i] = (int32_t)value;
      break;
    case kUint64:
      ((uint64_t*)data)[i] = (uint64_t)value;
      break;
    case kFloat32:
      ((float*)data)[i] = (float)value;
      break;
    default:
      ((double*)data)[i] = value;
      break;
  }
}

// Rank |rank|'s input |i| of case |c|: small integers, exact in every type
// and for every reduction here, the same in every process.
static double input(int c, int rank, size_t i, int reduction) {
  uint64_t state = g_seed ^ ((uint64_t)c << 40) ^ ((uint64_t)rank << 32) ^ i;
  state = state ? state : 1;
  int high = reduction == kProd ? 2 : 9;
  return (double)(1 + next_random(&state) % (uint64_t)high);
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

typedef struct proc_case {
  vgpu_ccl_kind kind;
  int type, reduction, root;
  size_t count;
  bool in_place;
} proc_case;

// Counts past one staging chunk (1 MiB per rank: 262144 float32) and odd.
static const proc_case kCases[] = {
    {VGPU_CCL_ALL_REDUCE, kFloat32, kSum, 0, 300007, false},
    {VGPU_CCL_ALL_REDUCE, kInt32, kMax, 0, 1, false},
    {VGPU_CCL_ALL_REDUCE, kInt8, kProd, 0, 1000, false},
    {VGPU_CCL_ALL_REDUCE, kUint64, kAvg, 0, 131073, true},
    {VGPU_CCL_ALL_REDUCE, kFloat64, kMin, 0, 0, false},
    {VGPU_CCL_BROADCAST, kInt32, 0, -1, 300001, false},
    {VGPU_CCL_REDUCE, kFloat64, kSum, 1, 77, false},
    {VGPU_CCL_ALL_GATHER, kInt8, 0, 0, 100003, false},
    {VGPU_CCL_REDUCE_SCATTER, kInt32, kSum, 0, 70001, false},
};

static vgpu_status wait_mark(vgpu_mark* mark) {
  vgpu_status status = vgpu_mark_wait(mark, "collective", 0);
  vgpu_mark_release(mark);
  return status;
}

static vgpu_status run_call(vgpu_ccl_comm* comm, const vgpu_ccl_call* call) {
  vgpu_mark* done = vgpu_mark_create(0);
  char error[256] = "";
  vgpu_status status = vgpu_ccl_arrive(comm, call, done, error, sizeof(error));
  if (status != VGPU_OK) {
    vgpu_mark_release(done);
    return status;
  }
  return wait_mark(done);
}

static void check_case(vgpu_ccl_comm* comm, int c, int rank, int ranks) {
  const proc_case* k = &kCases[c];
  int root = k->root < 0 ? ranks - 1 : k->root;
  size_t element = vgpu_ccl_type_size(k->type);
  size_t in = k->kind == VGPU_CCL_REDUCE_SCATTER ? k->count * ranks : k->count;
  size_t out = k->kind == VGPU_CCL_ALL_GATHER ? k->count * ranks : k->count;
  uint8_t* send = malloc(in * element + 1);
  uint8_t* recv = k->in_place ? send : malloc(out * element + 1);
  for (size_t i = 0; i < in; ++i)
    store(k->type, send, i, input(c, rank, i, k->reduction));
  if (!k->in_place)
    memset(recv, 0xA5, out * element);
  vgpu_ccl_call call = {.kind = k->kind,
                        .send = send,
                        .recv = recv,
                        .count = k->count,
                        .type = k->type,
                        .reduction = k->reduction,
                        .peer = root};
  vgpu_status status = run_call(comm, &call);
  if (status != VGPU_OK)
    die("case %d rank %d: status %d", c, rank, status);
  for (size_t i = 0; i < out; ++i) {
    double want = 0;
    switch (k->kind) {
      case VGPU_CCL_BROADCAST:
        want = input(c, root, i, 0);
        break;
      case VGPU_CCL_ALL_GATHER:
        want = input(c, (int)(i / k->count), i % k->count, 0);
        break;
      default: {
        size_t at = k->kind == VGPU_CCL_REDUCE_SCATTER
                        ? (size_t)rank * k->count + i
                        : i;
        want = input(c, 0, at, k->reduction);
        for (int q = 1; q < ranks; ++q)
          want = combine(k->reduction, want, input(c, q, at, k->reduction));
        if (k->reduction == kAvg)
          want = k->type >= kFloat32 ? want / ranks
                                     : (double)(int64_t)(want / ranks);
        break;
      }
    }
    if (k->kind == VGPU_CCL_REDUCE && rank != root) {
      if (recv[i * element] != 0xA5)
        die("case %d rank %d: a reduce wrote off its root", c, rank);
      continue;
    }
    double got = load(k->type, recv, i);
    if (got != want) {
      die("case %d (kind %d type %d) rank %d of %d element %zu: got %g, "
          "want %g",
          c, (int)k->kind, k->type, rank, ranks, i, got, want);
    }
  }
  if (!k->in_place)
    free(recv);
  free(send);
}

// Grouped both ways: each rank sends to the next and receives from the
// previous (for two ranks, to and from the same peer), more than one pair
// chunk (256 KiB), every arrival before any wait.
static void check_ring(vgpu_ccl_comm* comm, int rank, int ranks) {
  enum { kCount = 100003 };
  int next = (rank + 1) % ranks, previous = (rank + ranks - 1) % ranks;
  float* sent = malloc(kCount * sizeof(float));
  float* received = malloc(kCount * sizeof(float));
  for (size_t i = 0; i < kCount; ++i)
    sent[i] = (float)(rank * 1000000 + (int)i);
  vgpu_ccl_call send = {.kind = VGPU_CCL_SEND,
                        .send = sent,
                        .count = kCount,
                        .type = kFloat32,
                        .peer = next};
  vgpu_ccl_call receive = {.kind = VGPU_CCL_RECV,
                           .recv = received,
                           .count = kCount,
                           .type = kFloat32,
                           .peer = previous};
  vgpu_mark* marks[2] = {vgpu_mark_create(0), vgpu_mark_create(0)};
  char error[256];
  if (vgpu_ccl_arrive(comm, &send, marks[0], error, sizeof(error)) != VGPU_OK ||
      vgpu_ccl_arrive(comm, &receive, marks[1], error, sizeof(error)) !=
          VGPU_OK) {
    die("ring rank %d: %s", rank, error);
  }
  vgpu_status a = wait_mark(marks[0]), b = wait_mark(marks[1]);
  if (a != VGPU_OK || b != VGPU_OK)
    die("ring rank %d: send %d, receive %d", rank, a, b);
  for (size_t i = 0; i < kCount; ++i) {
    if (received[i] != (float)(previous * 1000000 + (int)i))
      die("ring rank %d element %zu: got %g", rank, i, received[i]);
  }
  free(sent);
  free(received);
}

// A split by parity across the processes: the new communicator's ranks
// are the parent ranks of one parity in order, and its all-reduce sums
// them.
static void check_split(vgpu_ccl_comm* comm, int rank, int ranks) {
  vgpu_ccl_comm* part = NULL;
  char error[256] = "";
  vgpu_status status =
      vgpu_ccl_comm_split(comm, rank % 2, rank, &part, error, sizeof(error));
  if (status != VGPU_OK || part == NULL)
    die("split rank %d: status %d: %s", rank, status, error);
  int count = (ranks - rank % 2 + 1) / 2;
  if (vgpu_ccl_rank(part) != rank / 2 || vgpu_ccl_rank_count(part) != count)
    die("split rank %d: rank %d of %d", rank, vgpu_ccl_rank(part),
        vgpu_ccl_rank_count(part));
  int32_t mine = rank, sum = 0, want = 0;
  for (int r = rank % 2; r < ranks; r += 2)
    want += r;
  vgpu_ccl_call call = {.kind = VGPU_CCL_ALL_REDUCE,
                        .send = &mine,
                        .recv = &sum,
                        .count = 1,
                        .type = kInt32,
                        .reduction = kSum};
  status = run_call(part, &call);
  vgpu_ccl_leave(part);
  if (status != VGPU_OK || sum != want)
    die("split rank %d: all-reduce status %d, sum %d, want %d", rank, status,
        sum, want);
}

typedef struct rank_thread {
  const proc_context* p;
  int rank, ranks;
  int exit_code;
} rank_thread;

static bool has_text(vgpu_ccl_comm* comm, const char* text) {
  char message[384] = "";
  vgpu_status status = vgpu_ccl_async_error(comm, message, sizeof(message));
  if (status == VGPU_OK || strstr(message, text) == NULL) {
    fprintf(stderr, "[ PROCESS  ] async error %d: \"%s\", wanted \"%s\"\n",
            status, message, text);
    return false;
  }
  return true;
}

static int32_t g_scalar_send = 1;
static int32_t g_scalar_recv[kMaxRanks];

// A one-element all-reduce that must fail with |want|.
static void expect_failure(vgpu_ccl_comm* comm, int rank, vgpu_status want,
                           const char* text) {
  vgpu_ccl_call call = {.kind = VGPU_CCL_ALL_REDUCE,
                        .send = &g_scalar_send,
                        .recv = &g_scalar_recv[rank],
                        .count = 1,
                        .type = kInt32};
  vgpu_status status = run_call(comm, &call);
  if (status != want)
    die("rank %d: status %d, want %d", rank, status, want);
  if (!has_text(comm, text))
    die("rank %d: the communicator's error does not say \"%s\"", rank, text);
}

// |id|'s segment as a path under /dev/shm.
static void segment_path(const uint8_t id[VGPU_CCL_ID_BYTES], char* path,
                         size_t size) {
  char name[64];
  ccl_shm_name(id, name, sizeof(name));
  snprintf(path, size, "/dev/shm%s", name);
}

static void* rank_main(void* arg) {
  rank_thread* t = arg;
  const proc_context* p = t->p;
  const char* s = p->scenario;
  int ranks = t->ranks;
  // Rank counts that differ, or one rank in two processes: the second
  // process to come is refused, and the first learns it from the segment.
  bool refused_case = strcmp(s, "counts") == 0 || strcmp(s, "twice") == 0;
  if (strcmp(s, "counts") == 0)
    ranks += p->proc;
  int rank = strcmp(s, "twice") == 0 ? 0 : t->rank;
  // Process 0 is killed while it waits to join a communicator of 3 ranks
  // (proc_main); process 1 gives up, and takes the segment's name with it
  // (nobody else would).
  bool killjoin = strcmp(s, "killjoin") == 0;
  if (killjoin)
    ranks = 3;
  // A process alone, killed while it waits for the rank of a process that
  // never comes: nobody is left to take the segment's name.
  if (strcmp(s, "killalone") == 0)
    ranks = 2;
  vgpu_ccl_comm* comm = NULL;
  char error[256] = "";
  uint64_t join_ns = (killjoin && p->proc == 1 ? 1500ull : 60000ull) * 1000000u;
  vgpu_status status =
      vgpu_ccl_join(p->id, ranks, rank, join_ns, &comm, error, sizeof(error));
  if (killjoin) {
    char path[96];
    segment_path(p->id, path, sizeof(path));
    bool left = access(path, F_OK) == 0;
    t->exit_code =
        status == VGPU_ERR_TIMEOUT && !left ? kExitTimeout : kExitWrong;
    fprintf(stderr, "[ PROCESS  ] %d: %s%s\n", p->proc, error,
            left ? " (and its shared memory was left behind)" : "");
    if (comm != NULL)
      vgpu_ccl_leave(comm);
    return NULL;
  }
  if (refused_case) {
    t->exit_code = status == VGPU_ERR_INVALID_VALUE ? kExitInvalid
                   : status == VGPU_ERR_TIMEOUT     ? kExitTimeout
                                                    : kExitWrong;
    fprintf(stderr, "[ PROCESS  ] %d: %s\n", p->proc, error);
    if (comm != NULL)
      vgpu_ccl_leave(comm);
    return NULL;
  }
  if (status != VGPU_OK)
    die("rank %d: join: %s", t->rank, error);
  if (strcmp(s, "leaderexit") == 0) {
    check_case(comm, 0, t->rank, ranks);
    vgpu_ccl_leave(comm);
    if (p->proc == 0)
      exit(kExitOk);  // its main thread is gone: nobody else ends it
    return NULL;
  }
  if (strcmp(s, "all") == 0) {
    for (int c = 0; c < (int)(sizeof(kCases) / sizeof(kCases[0])); ++c)
      check_case(comm, c, t->rank, ranks);
    check_ring(comm, t->rank, ranks);
    check_split(comm, t->rank, ranks);
  } else if (strcmp(s, "disagree") == 0) {
    // The last rank's count differs: every rank fails, and says why.
    vgpu_ccl_call call = {.kind = VGPU_CCL_ALL_REDUCE,
                          .send = &g_scalar_send,
                          .recv = &g_scalar_recv[t->rank],
                          .count = t->rank == ranks - 1 ? 0 : 1,
                          .type = kInt32};
    if (run_call(comm, &call) != VGPU_ERR_INVALID_VALUE)
      die("rank %d: a disagreement did not fail", t->rank);
    if (!has_text(comm, "collective #0"))
      die("rank %d: the failure does not name the collective", t->rank);
  } else if (strcmp(s, "abort") == 0 || strcmp(s, "leave") == 0 ||
             strcmp(s, "kill") == 0) {
    // The last process aborts, leaves or dies; the others' next
    // collective fails, naming why.
    if (p->proc == p->procs - 1) {
      if (strcmp(s, "kill") == 0)
        raise(SIGKILL);
      if (strcmp(s, "abort") == 0)
        vgpu_ccl_abort(comm, VGPU_ERR_DEVICE_LOST);
    } else {
      expect_failure(comm, t->rank, VGPU_ERR_DEVICE_LOST,
                     strcmp(s, "abort") == 0   ? "was aborted by rank"
                     : strcmp(s, "leave") == 0 ? "left communicator"
                                               : "exited");
    }
  }
  vgpu_ccl_leave(comm);
  return NULL;
}

static int proc_main(const char* scenario) {
  // Static: leaderexit's rank thread uses them after the main thread ended.
  static proc_context p;
  p.scenario = scenario;
  const char* id_hex = getenv("VGPU_CCL_TEST_ID");
  if (!id_hex || strlen(id_hex) != 2 * VGPU_CCL_ID_BYTES)
    die("VGPU_CCL_TEST_ID is not %d hex digits", 2 * VGPU_CCL_ID_BYTES);
  for (int i = 0; i < VGPU_CCL_ID_BYTES; ++i) {
    unsigned byte;
    sscanf(id_hex + 2 * i, "%2x", &byte);
    p.id[i] = (uint8_t)byte;
  }
  p.proc = atoi(getenv("VGPU_CCL_TEST_PROC"));
  p.procs = atoi(getenv("VGPU_CCL_TEST_PROCS"));
  p.local = atoi(getenv("VGPU_CCL_TEST_LOCAL"));
  static rank_thread threads[kMaxLocal];
  static pthread_t handles[kMaxLocal];
  for (int l = 0; l < p.local; ++l) {
    threads[l] = (rank_thread){
        .p = &p, .rank = p.proc * p.local + l, .ranks = p.procs * p.local};
    pthread_create(&handles[l], NULL, rank_main, &threads[l]);
  }
  if (strcmp(scenario, "leaderexit") == 0 && p.proc == 0) {
    // The main thread ends while its rank joins: the process runs on, its
    // state a zombie's in /proc with a live thread, and ends with the
    // rank's code.
    pthread_exit(NULL);
  }
  if ((strcmp(scenario, "killjoin") == 0 ||
       strcmp(scenario, "killalone") == 0) &&
      p.proc == 0) {
    usleep(300000);  // its rank waits to join meanwhile
    if (strcmp(scenario, "killalone") == 0) {
      // The segment is there now: no process removes the name of one
      // that runs. Once this one is killed, any process's open may.
      char path[96];
      segment_path(p.id, path, sizeof(path));
      if (access(path, F_OK) != 0)
        return kExitWrong;
    }
    raise(SIGKILL);
  }
  int code = kExitOk;
  for (int l = 0; l < p.local; ++l) {
    pthread_join(handles[l], NULL);
    if (threads[l].exit_code != kExitOk)
      code = threads[l].exit_code;
  }
  return code;
}

//===----------------------------------------------------------------------===//
// The cases: this program's processes
//===----------------------------------------------------------------------===//

// A communicator id, random as ncclGetUniqueId's, and never another run's.
static void random_id(uint8_t id[VGPU_CCL_ID_BYTES]) {
  static uint64_t calls;
  uint64_t state = g_seed ^ (uint64_t)getpid() ^ vgpu_now_ns() ^ ++calls;
  for (int i = 0; i < VGPU_CCL_ID_BYTES; ++i)
    id[i] = (uint8_t)next_random(&state);
}

// Starts process |p| of |procs| (|local| ranks each) on |scenario|, on
// the communicator |id|.
static pid_t spawn_proc(const uint8_t id[VGPU_CCL_ID_BYTES],
                        const char* scenario, int p, int procs, int local) {
  char hex[2 * VGPU_CCL_ID_BYTES + 1];
  for (int i = 0; i < VGPU_CCL_ID_BYTES; ++i)
    snprintf(hex + 2 * i, 3, "%02x", id[i]);
  size_t count = 0;
  while (environ[count])
    ++count;
  char** env = calloc(count + 8, sizeof(char*));
  size_t n = 0;
  for (size_t i = 0; i < count; ++i) {
    if (strncmp(environ[i], "HAL_TEST_SEED=", 14) != 0 &&
        strncmp(environ[i], "VGPU_CCL_TEST_", 14) != 0)
      env[n++] = environ[i];
  }
  char vars[6][600];
  snprintf(vars[0], sizeof(vars[0]), "VGPU_CCL_TEST_SCENARIO=%s", scenario);
  snprintf(vars[1], sizeof(vars[1]), "VGPU_CCL_TEST_ID=%s", hex);
  snprintf(vars[2], sizeof(vars[2]), "VGPU_CCL_TEST_PROC=%d", p);
  snprintf(vars[3], sizeof(vars[3]), "VGPU_CCL_TEST_PROCS=%d", procs);
  snprintf(vars[4], sizeof(vars[4]), "VGPU_CCL_TEST_LOCAL=%d", local);
  snprintf(vars[5], sizeof(vars[5]), "HAL_TEST_SEED=%" PRIu64, g_seed);
  for (int v = 0; v < 6; ++v)
    env[n++] = vars[v];
  char* argv[] = {(char*)"test_ccl_procs", NULL};
  pid_t pid = 0;
  int rc = posix_spawn(&pid, "/proc/self/exe", NULL, NULL, argv, env);
  free(env);
  assert_int_equal(rc, 0);
  return pid;
}

// Waits (bounded) for the |procs| processes of |pids|; codes[p] is process
// p's exit code, or 128 + the signal that ended it.
static void wait_procs(const char* scenario, const pid_t* pids, int procs,
                       int* codes) {
  // Generous for a loaded machine under a sanitizer: a hang is the bug.
  uint64_t deadline = vgpu_now_ns() + 240ull * 1000000000u;
  for (int p = 0; p < procs; ++p) {
    int status = 0;
    pid_t got = 0;
    while ((got = waitpid(pids[p], &status, WNOHANG)) == 0 &&
           vgpu_now_ns() < deadline) {
      usleep(10000);
    }
    if (got == 0) {
      for (int q = 0; q < procs; ++q)
        kill(pids[q], SIGKILL);
      fail_msg("%s: process %d did not end within 240 s", scenario, p);
    }
    codes[p] = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
}

// Starts |procs| processes of |local| ranks each on |scenario|, on the
// communicator |id|, and waits for them (wait_procs).
static void run_procs_on(const uint8_t id[VGPU_CCL_ID_BYTES],
                         const char* scenario, int procs, int local,
                         int* codes) {
  pid_t pids[kMaxProcs];
  for (int p = 0; p < procs; ++p)
    pids[p] = spawn_proc(id, scenario, p, procs, local);
  wait_procs(scenario, pids, procs, codes);
}

static void run_procs(const char* scenario, int procs, int local, int* codes) {
  uint8_t id[VGPU_CCL_ID_BYTES];
  random_id(id);
  run_procs_on(id, scenario, procs, local, codes);
}

static void expect_codes(const char* scenario, int procs, int local,
                         const int* want) {
  int codes[kMaxProcs];
  run_procs(scenario, procs, local, codes);
  for (int p = 0; p < procs; ++p) {
    if (codes[p] != want[p]) {
      fail_msg(
          "%s with %d processes of %d ranks: process %d ended with %d, "
          "want %d (HAL_TEST_SEED=%" PRIu64 ")",
          scenario, procs, local, p, codes[p], want[p], g_seed);
    }
  }
}

static void CclProcs_EveryCollectiveAgreesAcrossProcesses(void** state) {
  (void)state;
  const int ok[kMaxProcs] = {0};
  expect_codes("all", 2, 1, ok);
  expect_codes("all", 2, 2, ok);
  expect_codes("all", 3, 1, ok);
}

static void CclProcs_RanksThatDisagreeFailInEveryProcess(void** state) {
  (void)state;
  const int ok[kMaxProcs] = {0};
  expect_codes("disagree", 2, 2, ok);
}

static void CclProcs_RankCountsThatDifferAreRefused(void** state) {
  (void)state;
  // Whichever process comes second is refused; the first learns it at
  // once (INVALID_VALUE), not at its 60 s bound (TIMEOUT).
  for (int c = 0; c < 2; ++c) {
    const char* scenario = c == 0 ? "counts" : "twice";
    int codes[2];
    run_procs(scenario, 2, 1, codes);
    if (codes[0] != kExitInvalid || codes[1] != kExitInvalid) {
      fail_msg("%s: exit codes %d and %d, want %d for both", scenario, codes[0],
               codes[1], kExitInvalid);
    }
  }
}

static void CclProcs_AbortLeaveOrDeathFailsTheOtherProcesses(void** state) {
  (void)state;
  const int ok[kMaxProcs] = {0};
  expect_codes("abort", 2, 1, ok);
  expect_codes("leave", 3, 1, ok);
  const int killed[kMaxProcs] = {0, 128 + SIGKILL};
  expect_codes("kill", 2, 2, killed);
  const int killed_joining[kMaxProcs] = {128 + SIGKILL, kExitTimeout};
  expect_codes("killjoin", 2, 1, killed_joining);
}

// Opens and leaves a fresh communicator of one rank in this process: what
// any process's next open does to the names of others.
static void open_another_communicator(void) {
  uint8_t other[VGPU_CCL_ID_BYTES];
  random_id(other);
  vgpu_ccl_comm* comm = NULL;
  char error[256] = "";
  assert_int_equal(
      vgpu_ccl_join(other, 1, 0, 10000000000ull, &comm, error, sizeof(error)),
      VGPU_OK);
  vgpu_ccl_leave(comm);
}

// A process killed while it joins alone leaves its segment's name (no
// process is left to unlink it: ccl_shm.h); the next communicator opened
// on the machine, in any process, removes it.
static void CclProcs_ANameLeftByAProcessKilledJoiningIsRemovedLater(
    void** state) {
  (void)state;
  uint8_t id[VGPU_CCL_ID_BYTES];
  random_id(id);
  char path[96];
  segment_path(id, path, sizeof(path));
  int codes[kMaxProcs];
  run_procs_on(id, "killalone", 1, 1, codes);
  // Killed: it saw its segment just before (kExitWrong otherwise). Another
  // process's open (a test running beside this one) may have removed the
  // name since; this open must, if none did.
  assert_int_equal(codes[0], 128 + SIGKILL);
  open_another_communicator();
  if (access(path, F_OK) == 0) {
    unlink(path);
    fail_msg("%s is still there after a later communicator", path);
  }
}

// A process whose main thread ended while its rank joins still runs
// (/proc shows it a zombie with a live thread): a communicator opened
// meanwhile elsewhere must not take its segment's name, and the rank of a
// process that comes later meets it.
static void CclProcs_ARankWhoseMainThreadEndedIsStillWaitedFor(void** state) {
  (void)state;
  uint8_t id[VGPU_CCL_ID_BYTES];
  random_id(id);
  char path[96];
  segment_path(id, path, sizeof(path));
  pid_t pids[2];
  pids[0] = spawn_proc(id, "leaderexit", 0, 2, 1);
  struct stat before;
  uint64_t deadline = vgpu_now_ns() + 60ull * 1000000000u;
  while (stat(path, &before) != 0 && vgpu_now_ns() < deadline)
    usleep(10000);
  if (stat(path, &before) != 0) {
    kill(pids[0], SIGKILL);
    fail_msg("process 0 never made %s", path);
  }
  usleep(300000);  // its main thread has ended by now
  open_another_communicator();
  struct stat after;
  bool kept = stat(path, &after) == 0 && after.st_ino == before.st_ino;
  pids[1] = spawn_proc(id, "leaderexit", 1, 2, 1);
  int codes[2];
  wait_procs("leaderexit", pids, 2, codes);
  if (!kept)
    fail_msg("%s was removed while process 0 waited to join", path);
  assert_int_equal(codes[0], kExitOk);
  assert_int_equal(codes[1], kExitOk);
}

static int setup(void** state) {
  (void)state;
  fprintf(stderr, "[ SEED     ] HAL_TEST_SEED=%" PRIu64 "\n", g_seed);
  return 0;
}

int main(void) {
  const char* env = getenv("HAL_TEST_SEED");
  g_seed = env ? strtoull(env, NULL, 10) : (uint64_t)vgpu_now_ns();
  if (!g_seed)
    g_seed = 1;
  const char* scenario = getenv("VGPU_CCL_TEST_SCENARIO");
  if (scenario != NULL)
    return proc_main(scenario);
#define CASE(name) cmocka_unit_test(name)
  const struct CMUnitTest tests[] = {
      CASE(CclProcs_EveryCollectiveAgreesAcrossProcesses),
      CASE(CclProcs_RanksThatDisagreeFailInEveryProcess),
      CASE(CclProcs_RankCountsThatDifferAreRefused),
      CASE(CclProcs_AbortLeaveOrDeathFailsTheOtherProcesses),
      CASE(CclProcs_ANameLeftByAProcessKilledJoiningIsRemovedLater),
      CASE(CclProcs_ARankWhoseMainThreadEndedIsStillWaitedFor),
  };
#undef CASE
  return cmocka_run_group_tests(tests, setup, NULL);
}
