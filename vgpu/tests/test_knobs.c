// The knobs: fault injection (Nth call, probability, device loss, a rule
// naming no entry point of the facade is fatal), call counts, seed
// reproducibility, jitter, stream thread count, device count and memory,
// maximum wait, abort on misuse, the leak report, symbol hiding. Meson runs
// one test per process with the knob's environment; some tests run this
// program again as a child with a different environment.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
// cmocka after the standard headers it needs.
#include <cmocka.h>
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef VGPU_TEST_CUDA
#include <cuda.h>
#else
#include <hip/hip_runtime_api.h>
#endif

#include "fork_child.h"
#include "testutil.h"

#define OK(expr) assert_int_equal((expr), api.ok)

static const char* lib_path;
static const char* legacy_path;
static const char* self_path;

static int setup(void** state) {
  (void)state;
  return api.init(0) == api.ok ? 0 : -1;
}

// Runs this program as "API LIB MODE" with |env| prepended; returns its
// combined output (malloc'd) and its wait status.
static char* run_child_on(const char* lib, const char* env, const char* mode,
                          int* status) {
  char cmd[4096];
  snprintf(cmd, sizeof(cmd), "env %s %s %s %s %s 2>&1", env, self_path,
           api.name, lib, mode);
  FILE* p = popen(cmd, "r");
  assert_non_null(p);
  size_t cap = 1 << 16, len = 0;
  char* out = calloc(1, cap);
  size_t n;
  while ((n = fread(out + len, 1, cap - 1 - len, p)) > 0)
    len += n;
  *status = pclose(p);
  return out;
}

static char* run_child(const char* env, const char* mode, int* status) {
  return run_child_on(lib_path, env, mode, status);
}

static void Knob_FaultNth(void** state) {
  (void)state;
  void *a = NULL, *b = NULL, *c = NULL;
  OK(api.malloc(&a, 64));
  assert_int_equal(api.malloc(&b, 64), api.out_of_memory);  // 2nd call
  OK(api.malloc(&c, 64));
  OK(api.free(a));
  OK(api.free(c));
}

static void Knob_FaultProb(void** state) {
  (void)state;
  void* s = NULL;
  OK(api.stream_create(&s, true));
  int fails = 0;
  for (int i = 0; i < 400; ++i) {
    int rc = api.stream_query(s);
    if (rc == api.out_of_memory) {
      fails++;
    } else {
      OK(rc);
    }
  }
  assert_in_range(fails, 100, 300);  // p = 0.5, generous bounds
  OK(api.stream_destroy(s));
}

// Child mode: prints which of 64 queries failed under VGPU_FAULTS.
static int fault_pattern(void) {
  if (api.init(0) != api.ok)
    return 1;
  void* s = NULL;
  if (api.stream_create(&s, true) != api.ok)
    return 1;
  char pattern[65];
  for (int i = 0; i < 64; ++i)
    pattern[i] = api.stream_query(s) == api.ok ? '0' : '1';
  pattern[64] = '\0';
  printf("pattern=%s\n", pattern);
  api.stream_destroy(s);
  return 0;
}

static const char* pattern_of(const char* out) {
  const char* p = strstr(out, "pattern=");
  assert_non_null(p);
  return p + 8;
}

// Same seed, same decisions; another seed, other decisions.
static void Knob_SeedReproducible(void** state) {
  (void)state;
  const char* q =
      strcmp(api.name, "cuda") == 0 ? "cuStreamQuery" : "hipStreamQuery";
  char env1[256], env2[256];
  snprintf(env1, sizeof(env1), "VGPU_SEED=12345 VGPU_FAULTS=%s:prob=0.5", q);
  snprintf(env2, sizeof(env2), "VGPU_SEED=54321 VGPU_FAULTS=%s:prob=0.5", q);
  int st1, st2, st3;
  char* a = run_child(env1, "fault_pattern", &st1);
  char* b = run_child(env1, "fault_pattern", &st2);
  char* c = run_child(env2, "fault_pattern", &st3);
  assert_int_equal(st1, 0);
  assert_int_equal(st2, 0);
  assert_int_equal(st3, 0);
  assert_memory_equal(pattern_of(a), pattern_of(b), 64);
  assert_memory_not_equal(pattern_of(a), pattern_of(c), 64);
  assert_non_null(strstr(a, "VGPU_SEED=12345"));  // printed at start
  free(a);
  free(b);
  free(c);
}

// After a device-lost fault every call on that device fails with the
// vendor's launch-failure code, except the queries of its fixed properties,
// which answer as before so that a program can still list the devices;
// other devices keep working.
static void Knob_FaultLost(void** state) {
  (void)state;
  void *s = NULL, *dev = NULL, *e = NULL;
  char name_before[128], name_after[128];
  size_t bytes_before = 0, bytes_after = 0;
  uint8_t uuid_before[16], uuid_after[16];
  OK(api.device_name(0, name_before, (int)sizeof(name_before)));
  OK(api.device_total_mem(0, &bytes_before));
  OK(api.device_uuid(0, uuid_before));
  OK(api.stream_create(&s, true));
  assert_int_equal(api.stream_sync(s), api.launch_failed);  // the fault
  assert_int_equal(api.stream_sync(s), api.launch_failed);
  assert_int_equal(api.stream_query(s), api.launch_failed);
  assert_int_equal(api.malloc(&dev, 64), api.launch_failed);
  assert_int_equal(api.event_create(&e), api.launch_failed);
  assert_int_equal(api.memset8(NULL, 0, 0), api.launch_failed);
  OK(api.stream_destroy(s));
  OK(api.device_name(0, name_after, (int)sizeof(name_after)));
  assert_string_equal(name_after, name_before);
  OK(api.device_total_mem(0, &bytes_after));
  assert_int_equal(bytes_after, bytes_before);
  OK(api.device_uuid(0, uuid_after));
  assert_memory_equal(uuid_after, uuid_before, sizeof(uuid_before));
  int count = 0;
  OK(api.device_count(&count));
  assert_true(count >= 2);
  OK(api.init(1));
  OK(api.malloc(&dev, 64));
  OK(api.memset8(dev, 1, 64));
  OK(api.free(dev));
}

static void* open_gate_later(void* arg) {
  testutil_sleep_ms(200);
  gate_open(arg);
  return NULL;
}

// After a loss, a synchronizing call returns the loss code only once the
// work queued before it has retired (skipped, host functions run), so what
// that work used may be freed and destroyed right after, as a host does
// after any error (docs/vgpu.md). |which|: "event", "stream" or "device".
static void check_lost_sync_drains(const char* which) {
  void *s = NULL, *dev = NULL, *e = NULL;
  // Static: the opener thread outlives a failed assertion's longjmp.
  static gate g;
  gate_init(&g);
  OK(api.stream_create(&s, true));
  OK(api.malloc(&dev, 64));
  OK(api.event_create(&e));
  OK(api.host_fn(s, gate_host_fn, &g));
  OK(api.memset32_async(dev, 1, 16, s));
  OK(api.event_record(e, s));
  // The loss (VGPU_FAULTS=<stream query>:nth=1:lost); the gate still holds
  // the stream.
  assert_int_equal(api.stream_query(s), api.launch_failed);
  pthread_t opener;
  assert_int_equal(pthread_create(&opener, NULL, open_gate_later, &g), 0);
  int rc = strcmp(which, "event") == 0    ? api.event_sync(e)
           : strcmp(which, "stream") == 0 ? api.stream_sync(s)
                                          : api.device_sync();
  assert_int_equal(rc, api.launch_failed);
  assert_int_equal(atomic_load(&g.entered), 1);
  // Nothing queued uses them any more: strict mode finds no misuse.
  OK(api.free(dev));
  OK(api.event_destroy(e));
  OK(api.stream_destroy(s));
  assert_int_equal(pthread_join(opener, NULL), 0);
  gate_destroy(&g);
}

static void Knob_LostEventSyncDrains(void** state) {
  (void)state;
  check_lost_sync_drains("event");
}

static void Knob_LostStreamSyncDrains(void** state) {
  (void)state;
  check_lost_sync_drains("stream");
}

static void Knob_LostDeviceSyncDrains(void** state) {
  (void)state;
  check_lost_sync_drains("device");
}

// Child mode: one asynchronous 32-bit memset; prints its code. Under a
// VGPU_FAULTS rule naming that call at nth=1 it fails.
static int memset_child(void) {
  if (api.init(0) != api.ok)
    return 1;
  void *s = NULL, *dev = NULL;
  if (api.stream_create(&s, true) != api.ok || api.malloc(&dev, 64) != api.ok)
    return 1;
  int rc = api.memset32_async(dev, 7, 16, s);
  printf("memset32_async=%d\n", rc);
  api.stream_sync(s);
  api.free(dev);
  api.stream_destroy(s);
  return 0;
}

// The documented fatal configuration error: exit status 78 (EX_CONFIG) at
// load, before any call ran, with a message naming the variable and |what|.
static void expect_config_error(const char* out, int status, const char* what) {
  if (!(WIFEXITED(status) && WEXITSTATUS(status) == 78))
    fprintf(stderr, "child status 0x%x, output:\n%s\n", status, out);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 78);
  assert_non_null(strstr(out, "VGPU_FAULTS"));
  assert_non_null(strstr(out, what));
  assert_null(strstr(out, "memset32_async="));  // nothing ran
}

// A rule naming a call the facade does not implement (a typo, or the other
// vendor's name) would inject nothing and let a fault test pass without
// its fault: it is a fatal configuration error naming the bad name and the
// closest known ones. A correct name still injects.
static void check_fault_names(const char* lib) {
  bool cuda = strcmp(api.name, "cuda") == 0;
  const char* good = cuda ? "cuMemsetD32Async" : "hipMemsetD32Async";
  const char* other = cuda ? "hipMemsetD32Async" : "cuMemsetD32Async";
  char env[512], typo[128];
  int st = 0;

  snprintf(env, sizeof(env), "VGPU_FAULTS=%s:nth=1", good);
  char* out = run_child_on(lib, env, "memset_child", &st);
  if (st != 0)
    fprintf(stderr, "child output:\n%s\n", out);
  assert_int_equal(st, 0);
  char expect[64];
  snprintf(expect, sizeof(expect), "memset32_async=%d", api.unknown);
  assert_non_null(strstr(out, expect));
  free(out);

  snprintf(typo, sizeof(typo), "%sc", good);
  snprintf(env, sizeof(env), "VGPU_FAULTS=%s:nth=1", typo);
  out = run_child_on(lib, env, "memset_child", &st);
  expect_config_error(out, st, typo);
  char closest[128];
  snprintf(closest, sizeof(closest), "closest: %s", good);
  assert_non_null(strstr(out, closest));
  free(out);

  // The second rule is bad: the first does not save it.
  snprintf(env, sizeof(env), "VGPU_FAULTS='%s:nth=5;%s:nth=1:lost'", good,
           other);
  out = run_child_on(lib, env, "memset_child", &st);
  expect_config_error(out, st, other);
  free(out);

  // Independent of VGPU_FAIL_EXIT_CODE and strict mode.
  snprintf(env, sizeof(env),
           "VGPU_FAIL_EXIT_CODE=70 VGPU_STRICT=0 VGPU_FAULTS=%s:always", typo);
  out = run_child_on(lib, env, "memset_child", &st);
  expect_config_error(out, st, typo);
  free(out);

  // A malformed rule injects nothing either.
  snprintf(env, sizeof(env), "VGPU_FAULTS=%s:nht=1", good);
  out = run_child_on(lib, env, "memset_child", &st);
  expect_config_error(out, st, "nht=1");
  free(out);

  // '*' names every call.
  out = run_child_on(lib, "VGPU_FAULTS='*:nth=1000000'", "memset_child", &st);
  assert_int_equal(st, 0);
  assert_non_null(strstr(out, "memset32_async=0"));
  free(out);
}

// A knob that does not parse, or is out of its range, is as fatal as a bad
// fault rule: the process exits at load naming the variable and its range,
// and nothing runs.
static void check_bad_setting(const char* lib, const char* env,
                              const char* what) {
  int st = 0;
  char* out = run_child_on(lib, env, "memset_child", &st);
  if (!(WIFEXITED(st) && WEXITSTATUS(st) == 78))
    fprintf(stderr, "child status 0x%x, output:\n%s\n", st, out);
  assert_true(WIFEXITED(st));
  assert_int_equal(WEXITSTATUS(st), 78);
  assert_non_null(strstr(out, what));
  assert_non_null(strstr(out, "bad VGPU_* setting(s)"));
  assert_null(strstr(out, "memset32_async="));  // nothing ran
  free(out);
}

static void Knob_BadSettingsAreFatal(void** state) {
  (void)state;
  check_bad_setting(lib_path, "VGPU_DEVICES=1000",
                    "VGPU_DEVICES=1000: expected an integer in [0, ");
  check_bad_setting(lib_path, "VGPU_JITTER_US=abc",
                    "VGPU_JITTER_US=abc: expected an integer in [0, 1000000]");
  check_bad_setting(lib_path, "VGPU_STREAM_THREADS=-1",
                    "VGPU_STREAM_THREADS=-1: expected an integer in [1, 256]");
  // Base 10 only: no hexadecimal, no sign, no blanks.
  check_bad_setting(lib_path, "VGPU_DEVICES=0x3",
                    "VGPU_DEVICES=0x3: expected an integer in [0, ");
  check_bad_setting(lib_path, "VGPU_DEVICES=+3",
                    "VGPU_DEVICES=+3: expected an integer in [0, ");
  check_bad_setting(lib_path, "VGPU_STREAM_THREADS=' 4'",
                    "VGPU_STREAM_THREADS= 4: expected an integer in [1, 256]");
  // A flag's message names every word it takes (below, each one works).
  check_bad_setting(lib_path, "VGPU_STRICT=maybe",
                    "VGPU_STRICT=maybe: expected 0, 1, false, true, off or on");
  // Independent of VGPU_FAIL_EXIT_CODE and strict mode.
  check_bad_setting(lib_path,
                    "VGPU_FAIL_EXIT_CODE=70 VGPU_STRICT=0 "
                    "VGPU_SEED=x1",
                    "VGPU_SEED=x1: expected an integer in [0, ");
}

static void Knob_FaultUnknownCall(void** state) {
  (void)state;
  check_fault_names(lib_path);
  if (legacy_path != NULL)
    check_fault_names(legacy_path);
}

// Reads |path| (malloc'd text, "" if missing).
static char* read_file(const char* path) {
  FILE* f = fopen(path, "r");
  char* text = calloc(1, 1 << 16);
  assert_non_null(text);
  if (f != NULL) {
    size_t n = fread(text, 1, (1 << 16) - 1, f);
    text[n] = '\0';
    fclose(f);
  }
  return text;
}

// Number of lines of |text| that are exactly |line|.
static int count_lines(const char* text, const char* line) {
  int n = 0;
  size_t len = strlen(line);
  for (const char* p = text; (p = strstr(p, line)) != NULL; p += len) {
    if ((p == text || p[-1] == '\n') && p[len] == '\n')
      n++;
  }
  return n;
}

// VGPU_CALL_COUNTS=FILE appends "name count" for every call made, counted
// as fault rules count (a call a rule failed counts), also when the process
// ends through VGPU_FAIL_EXIT_CODE.
static void Knob_CallCounts(void** state) {
  (void)state;
  bool cuda = strcmp(api.name, "cuda") == 0;
  const char* memset_name = cuda ? "cuMemsetD32Async" : "hipMemsetD32Async";
  const char* alloc_name = cuda ? "cuMemAlloc" : "hipMalloc";
  // In the test's working directory (the build tree under meson).
  char path[128];
  snprintf(path, sizeof(path), "vgpu-call-counts-%s-%d.txt", api.name,
           (int)getpid());
  unlink(path);
  char env[512];
  snprintf(env, sizeof(env), "VGPU_CALL_COUNTS=%s VGPU_FAULTS=%s:nth=1", path,
           memset_name);
  int st = 0;
  char* out = run_child_on(lib_path, env, "memset_child", &st);
  assert_int_equal(st, 0);
  char expect[64];
  snprintf(expect, sizeof(expect), "memset32_async=%d", api.unknown);
  assert_non_null(strstr(out, expect));
  free(out);
  char* text = read_file(path);
  char line[128];
  snprintf(line, sizeof(line), "%s 1", memset_name);
  assert_int_equal(count_lines(text, line), 1);
  snprintf(line, sizeof(line), "%s 1", alloc_name);
  assert_int_equal(count_lines(text, line), 1);
  // Every line is "name count".
  for (const char* p = text; *p != '\0';) {
    char name[128];
    unsigned long long n = 0;
    int used = 0;
    assert_int_equal(sscanf(p, "%127[A-Za-z0-9_] %llu\n%n", name, &n, &used),
                     2);
    assert_true(used > 0 && n > 0);
    p += used;
  }
  free(text);
  // A leaking child that exits through VGPU_FAIL_EXIT_CODE still writes,
  // and appends.
  snprintf(env, sizeof(env), "VGPU_CALL_COUNTS=%s VGPU_FAIL_EXIT_CODE=70",
           path);
  out = run_child(env, "leak_child", &st);
  assert_true(WIFEXITED(st));
  assert_int_equal(WEXITSTATUS(st), 70);
  free(out);
  text = read_file(path);
  snprintf(line, sizeof(line), "%s 1", alloc_name);
  assert_int_equal(count_lines(text, line), 2);
  free(text);
  unlink(path);
}

// Jitter delays every operation: 100 operations take visibly longer.
static void Knob_Jitter(void** state) {
  (void)state;
  void *s = NULL, *dev = NULL;
  OK(api.stream_create(&s, true));
  OK(api.malloc(&dev, 4));
  uint64_t t0 = testutil_now_ms();
  for (int i = 0; i < 100; ++i)
    OK(api.memset32_async(dev, 1, 1, s));
  OK(api.stream_sync(s));
  assert_true(testutil_now_ms() - t0 >= 5);  // mean 200 us per operation
  OK(api.free(dev));
  OK(api.stream_destroy(s));
}

typedef struct flag_wait {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  bool flag;
  atomic_int saw;
} flag_wait;

static void wait_flag_300ms(void* arg) {
  flag_wait* w = arg;
  struct timespec deadline;
  clock_gettime(CLOCK_REALTIME, &deadline);
  deadline.tv_nsec += 300 * 1000000L;
  if (deadline.tv_nsec >= 1000000000L) {
    deadline.tv_sec++;
    deadline.tv_nsec -= 1000000000L;
  }
  pthread_mutex_lock(&w->mu);
  while (!w->flag && pthread_cond_timedwait(&w->cv, &w->mu, &deadline) == 0) {
  }
  atomic_store(&w->saw, w->flag);
  pthread_mutex_unlock(&w->mu);
}

static void set_flag(void* arg) {
  flag_wait* w = arg;
  pthread_mutex_lock(&w->mu);
  w->flag = true;
  pthread_cond_broadcast(&w->cv);
  pthread_mutex_unlock(&w->mu);
}

// With one stream thread, independent streams are serialized: B's host
// function cannot run while A's blocks.
static void Knob_OneStreamThread(void** state) {
  (void)state;
  void *a = NULL, *b = NULL;
  OK(api.stream_create(&a, true));
  OK(api.stream_create(&b, true));
  flag_wait w = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false, 0};
  OK(api.host_fn(a, wait_flag_300ms, &w));
  OK(api.host_fn(b, set_flag, &w));
  OK(api.stream_sync(a));
  OK(api.stream_sync(b));
  assert_int_equal(atomic_load(&w.saw), 0);
  assert_true(w.flag);
  OK(api.stream_destroy(a));
  OK(api.stream_destroy(b));
}

static void Knob_DevicesAndMemory(void** state) {
  (void)state;
  int count = 0;
  void* p = NULL;
  OK(api.device_count(&count));
  assert_int_equal(count, 3);
  OK(api.init(2));
  assert_int_equal(api.malloc(&p, 2u << 20), api.out_of_memory);
  OK(api.malloc(&p, 512u << 10));
  OK(api.free(p));
  OK(api.init(0));
}

// Numbers are decimal whatever their leading zeros (VGPU_DEVICES=010 and
// VGPU_DEVICE_MEMORY_MB=010: ten devices of 10 MiB, not eight of 8 MiB).
static void Knob_NumbersAreDecimal(void** state) {
  (void)state;
  int count = 0;
  void* p = NULL;
  OK(api.device_count(&count));
  assert_int_equal(count, 10);
  OK(api.init(9));
  OK(api.malloc(&p, 9u << 20));
  OK(api.free(p));
  assert_int_equal(api.malloc(&p, 11u << 20), api.out_of_memory);
  OK(api.init(0));
}

// A host wait that runs past VGPU_MAX_WAIT_MS fails instead of hanging.
static void Knob_MaxWait(void** state) {
  (void)state;
  void* s = NULL;
  gate g;
  gate_init(&g);
  OK(api.stream_create(&s, true));
  OK(api.host_fn(s, gate_host_fn, &g));
  assert_int_equal(api.stream_sync(s), api.timeout);
  gate_open(&g);
  OK(api.stream_sync(s));
  OK(api.stream_destroy(s));
  gate_destroy(&g);
}

// Child mode: one misuse (VGPU_ABORT_ON_MISUSE=1 must abort right there).
static int misuse_child(void) {
  if (api.init(0) != api.ok)
    return 1;
  api.stream_query((void*)(uintptr_t)0xbad);
  return 0;  // not aborted: the parent fails
}

static void Knob_AbortOnMisuse(void** state) {
  (void)state;
  int st = 0;
  char* out = run_child("VGPU_ABORT_ON_MISUSE=1", "misuse_child", &st);
  assert_true(WIFSIGNALED(st) || (WIFEXITED(st) && WEXITSTATUS(st) != 0));
  assert_non_null(strstr(out, "aborting (VGPU_ABORT_ON_MISUSE=1)"));
  free(out);
  out = run_child("VGPU_ABORT_ON_MISUSE=0", "misuse_child", &st);
  assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  free(out);
}

// Every word a flag's message names is taken, with its meaning: a misuse
// aborts under VGPU_ABORT_ON_MISUSE=1, true or on, and is only reported
// under 0, false or off.
static void Knob_FlagWords(void** state) {
  (void)state;
  const char* words[] = {"1", "true", "on", "0", "false", "off"};
  for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); ++i) {
    bool set = i < 3;
    char env[64];
    snprintf(env, sizeof(env), "VGPU_ABORT_ON_MISUSE=%s", words[i]);
    int st = 0;
    char* out = run_child(env, "misuse_child", &st);
    // The shell popen runs may report the child's SIGABRT as 128 + 6.
    bool aborted = WIFSIGNALED(st) ? WTERMSIG(st) == SIGABRT
                                   : WIFEXITED(st) && WEXITSTATUS(st) == 134;
    bool returned = WIFEXITED(st) && WEXITSTATUS(st) == 0;
    if (set ? !aborted : !returned)
      fprintf(stderr, "%s: child status 0x%x, output:\n%s\n", env, st, out);
    assert_true(set ? aborted : returned);
    assert_true((strstr(out, "aborting (VGPU_ABORT_ON_MISUSE") != NULL) == set);
    free(out);
  }
}

// Child mode: leaks a stream, an event and memory, then unloads.
static int leak_child(void) {
  if (api.init(0) != api.ok)
    return 1;
  void *s = NULL, *e = NULL, *p = NULL;
  api.stream_create(&s, true);
  api.event_create(&e);
  api.malloc(&p, 4096);
  return 0;
}

static void Knob_LeakReport(void** state) {
  (void)state;
  int st = 0;
  char* out = run_child("", "leak_child", &st);
  assert_int_equal(st, 0);  // and no sanitizer report (teardown frees all)
  assert_non_null(strstr(out, "leak: stream"));
  assert_non_null(strstr(out, "leak: event"));
  assert_non_null(strstr(out, "leak: 4096 bytes of device memory"));
  free(out);
  out = run_child("VGPU_STRICT=0", "leak_child", &st);
  assert_null(strstr(out, "leak:"));
  free(out);
}

static void fork_sleep_fn(void* arg) {
  (void)arg;
  testutil_sleep_ms(300);
}

// Child mode: a fork() while the runtime is busy (a host function running,
// a memset queued behind it, a stream and memory alive). The fork's child
// calls into the runtime, prints the code, and exit()s with 5; the parent
// prints how its child ended, then finishes its own work.
static int fork_child(void) {
  void *s = NULL, *p = NULL;
  if (api.init(0) != api.ok || api.stream_create(&s, true) != api.ok ||
      api.malloc(&p, 4096) != api.ok ||
      api.host_fn(s, fork_sleep_fn, NULL) != api.ok ||
      api.memset32_async(p, 7, 1024, s) != api.ok) {
    return 1;
  }
  testutil_sleep_ms(50);  // the host function is running
  // The child's printf then finds stdout's buffer made: it allocates
  // nothing (fork_child.h).
  printf("the parent forks\n");
  fflush(stdout);
  pid_t pid = hal_test_fork();
  if (pid < 0)
    return 1;
  if (pid == 0) {
    printf("the fork's child's query: %d\n", api.stream_query(s));
    fflush(stdout);
    exit(5);
  }
  if (hal_test_report_child(pid, "the fork's child") < 0)
    return 1;
  uint32_t word = 0;
  if (api.stream_sync(s) != api.ok || api.dtoh(&word, p, 4) != api.ok)
    return 1;
  printf("the parent's memset: %u\n", word);
  return api.free(p) == api.ok && api.stream_destroy(s) == api.ok ? 0 : 1;
}

// A fork()ed child has none of the runtime's threads and only a copy of
// its state: its calls are refused with the "shutting down" code, and its
// exit() neither waits for the parent's work nor reports or frees the
// parent's objects (strict mode would count them as the child's leaks and
// VGPU_FAIL_EXIT_CODE would replace its status). The parent is untouched.
static void Knob_ForkedChild(void** state) {
  (void)state;
  int st = 0;
  char* out = run_child("VGPU_FAIL_EXIT_CODE=70", "fork_child", &st);
  if (st != 0 || !strstr(out, "the fork's child: exit 5\n"))
    fprintf(stderr, "the program said:\n%s", out);
  assert_int_equal(st, 0);
  assert_non_null(strstr(out, "the fork's child: exit 5\n"));
  const char* query = strstr(out, "the fork's child's query: ");
  assert_non_null(query);
  int code = atoi(query + strlen("the fork's child's query: "));
  assert_string_equal(api.error_name(code), strcmp(api.name, "cuda") == 0
                                                ? "CUDA_ERROR_DEINITIALIZED"
                                                : "hipErrorDeinitialized");
  assert_non_null(strstr(out, "the parent's memset: 7\n"));
  assert_null(strstr(out, "leak:"));
  free(out);
}

#ifdef VGPU_TEST_CUDA
// cuGetProcAddress: base names map to the versioned implementations,
// cuGetProcAddress(|name|, |version|) succeeds with the library's export
// |export_name|.
static void expect_proc(__typeof__(&cuGetProcAddress_v2) get, const char* name,
                        int version, const char* export_name) {
  void* fn = NULL;
  CUdriverProcAddressQueryResult q;
  assert_int_equal(get(name, &fn, version, 0, &q), CUDA_SUCCESS);
  assert_ptr_equal(fn, dlsym(api.lib, export_name));
}

// VGPU_HIDE_SYMBOLS hides names, old versions are refused.
static void Knob_HideSymbols(void** state) {
  (void)state;
  __typeof__(&cuGetProcAddress_v2) get = NULL;
  VAPI_LOAD(api.lib, get, "cuGetProcAddress_v2");
  assert_non_null(get);
  void* fn = NULL;
  CUdriverProcAddressQueryResult q;
  assert_int_equal(get("cuLaunchHostFunc", &fn, 12000, 0, &q),
                   CUDA_ERROR_NOT_FOUND);
  assert_int_equal(q, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
  assert_null(fn);
  assert_int_equal(get("cuGraphExecUpdate", &fn, 12000, 0, &q),
                   CUDA_ERROR_NOT_FOUND);
  expect_proc(get, "cuStreamAddCallback", 12000, "cuStreamAddCallback");
  expect_proc(get, "cuMemAlloc", 12000, "cuMemAlloc_v2");
  expect_proc(get, "cuStreamDestroy", 13000, "cuStreamDestroy_v2");
  // The name cuGraphInstantiate keeps its five-argument signature at every
  // version, as libcuda's does: the three-argument one has its own name.
  expect_proc(get, "cuGraphInstantiate", 13000, "cuGraphInstantiate_v2");
  expect_proc(get, "cuGraphInstantiateWithFlags", 13000,
              "cuGraphInstantiateWithFlags");
  expect_proc(get, "cuGraphInstantiate", 11000, "cuGraphInstantiate_v2");
  // CUDA 13 gave cuCtxGetDevice and cuCtxSynchronize a context argument
  // under the same names.
  expect_proc(get, "cuCtxSynchronize", 13000, "cuCtxSynchronize_v2");
  expect_proc(get, "cuCtxSynchronize", 12080, "cuCtxSynchronize");
  expect_proc(get, "cuCtxGetDevice", 13000, "cuCtxGetDevice_v2");
  assert_int_equal(get("cuGraphCreate", &fn, 9000, 0, &q),
                   CUDA_ERROR_NOT_FOUND);
  assert_int_equal(q, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
  assert_int_equal(get("cuNoSuchFunction", &fn, 13000, 0, &q),
                   CUDA_ERROR_NOT_FOUND);
  // Error names and strings.
  __typeof__(&cuGetErrorName) name = NULL;
  __typeof__(&cuGetErrorString) text = NULL;
  VAPI_LOAD(api.lib, name, "cuGetErrorName");
  VAPI_LOAD(api.lib, text, "cuGetErrorString");
  const char* s = NULL;
  assert_int_equal(name(CUDA_ERROR_INVALID_HANDLE, &s), CUDA_SUCCESS);
  assert_string_equal(s, "CUDA_ERROR_INVALID_HANDLE");
  assert_int_equal(text(CUDA_ERROR_INVALID_VALUE, &s), CUDA_SUCCESS);
  assert_string_equal(s, "invalid argument");
  assert_int_equal(name((CUresult)12345, &s), CUDA_ERROR_INVALID_VALUE);
}
#else
static void callback_fn(hipStream_t s, hipError_t status, void* user) {
  (void)s;
  atomic_store((atomic_int*)user, status == hipSuccess ? 1 : 2);
}

// libvgpu-hip-legacy.so has Debian 5.2.3's export set: no
// hipLaunchHostFunc; hipStreamAddCallback is the fallback.
static void Knob_HideSymbols(void** state) {
  (void)state;
  assert_non_null(dlsym(api.lib, "hipLaunchHostFunc"));
  assert_non_null(legacy_path);
  void* legacy = dlopen(legacy_path, RTLD_NOW | RTLD_LOCAL);
  assert_non_null(legacy);
  assert_null(dlsym(legacy, "hipLaunchHostFunc"));
  __typeof__(&hipStreamAddCallback) add_cb = NULL;
  __typeof__(&hipStreamCreate) create = NULL;
  __typeof__(&hipStreamSynchronize) sync = NULL;
  __typeof__(&hipStreamDestroy) destroy = NULL;
  VAPI_LOAD(legacy, add_cb, "hipStreamAddCallback");
  VAPI_LOAD(legacy, create, "hipStreamCreate");
  VAPI_LOAD(legacy, sync, "hipStreamSynchronize");
  VAPI_LOAD(legacy, destroy, "hipStreamDestroy");
  assert_non_null(add_cb);
  hipStream_t s = NULL;
  atomic_int ran = 0;
  assert_int_equal(create(&s), hipSuccess);
  assert_int_equal(add_cb(s, callback_fn, &ran, 0), hipSuccess);
  assert_int_equal(sync(s), hipSuccess);
  assert_int_equal(atomic_load(&ran), 1);
  assert_int_equal(destroy(s), hipSuccess);
  dlclose(legacy);
  // Error names, strings, last error.
  __typeof__(&hipGetErrorName) name = NULL;
  __typeof__(&hipGetLastError) last = NULL;
  __typeof__(&hipMemcpy) memcpy_fn = NULL;
  VAPI_LOAD(api.lib, name, "hipGetErrorName");
  VAPI_LOAD(api.lib, last, "hipGetLastError");
  VAPI_LOAD(api.lib, memcpy_fn, "hipMemcpy");
  assert_string_equal(name(hipErrorInvalidHandle), "hipErrorInvalidHandle");
  int x = 0, y = 0;
  assert_int_equal(memcpy_fn(&x, &y, 4, (hipMemcpyKind)77),
                   hipErrorInvalidMemcpyDirection);
  assert_int_equal(last(), hipErrorInvalidMemcpyDirection);
  assert_int_equal(last(), hipSuccess);
}
#endif

// The test list: CASE binds this program's fixture.
#define CASE(name) cmocka_unit_test_setup(name, setup)

int main(int argc, char** argv) {
  self_path = argv[0];
  const char* only = testutil_setup(argc, argv);
  lib_path = argv[2];
  legacy_path = argc > 4 ? argv[4] : NULL;
  int rc = -1;
  if (only != NULL && strcmp(only, "fault_pattern") == 0)
    rc = fault_pattern();
  if (only != NULL && strcmp(only, "misuse_child") == 0)
    rc = misuse_child();
  if (only != NULL && strcmp(only, "leak_child") == 0)
    rc = leak_child();
  if (only != NULL && strcmp(only, "memset_child") == 0)
    rc = memset_child();
  if (only != NULL && strcmp(only, "fork_child") == 0)
    rc = fork_child();
  if (rc >= 0) {
    testutil_teardown();
    return rc;
  }
  const struct CMUnitTest tests[] = {
      CASE(Knob_FaultNth),
      CASE(Knob_FaultProb),
      CASE(Knob_FaultLost),
      CASE(Knob_LostEventSyncDrains),
      CASE(Knob_LostStreamSyncDrains),
      CASE(Knob_LostDeviceSyncDrains),
      CASE(Knob_FaultUnknownCall),
      CASE(Knob_BadSettingsAreFatal),
      CASE(Knob_FlagWords),
      CASE(Knob_CallCounts),
      CASE(Knob_SeedReproducible),
      CASE(Knob_Jitter),
      CASE(Knob_OneStreamThread),
      CASE(Knob_DevicesAndMemory),
      CASE(Knob_NumbersAreDecimal),
      CASE(Knob_MaxWait),
      CASE(Knob_AbortOnMisuse),
      CASE(Knob_LeakReport),
      CASE(Knob_ForkedChild),
      CASE(Knob_HideSymbols),
  };
  if (only == NULL) {
    fprintf(stderr, "name one test: the knobs are set per test by meson\n");
    return 2;
  }
  return testutil_run(api.name, tests, sizeof(tests) / sizeof(tests[0]), only);
}
