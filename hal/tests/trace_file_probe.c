// Copyright 2026 The HAL Authors.
//
// Driven by trace_file_test.py under HAL_TRACE (hal/trace.c):
//   trace_file_probe tracks
//     names a track and records nothing else: the file written at exit
//     must still be JSON.
//   trace_file_probe chdir DIR
//     records an event, then changes the working folder to DIR: a relative
//     HAL_TRACE still names the file where the program started.
//   trace_file_probe snapshots DIR FLUSHES
//     two pairs of threads: one begins async spans, the other ends each
//     after the first handed it over, while the main thread flushes (at
//     most FLUSHES times, while they run) and moves each file to
//     DIR/snapshot.K. In every snapshot each end must have its begin.
//   trace_file_probe capped
//     under HAL_TRACE_MAX_MB=1: one thread makes room in its buffer, a
//     second begins async spans until the bound drops one and then ten
//     more, and the first, which still has room, ends the dropped ones and
//     the last kept one. The file written at exit must have no end
//     without its begin.
//   trace_file_probe unreleased DRIVER
//     runs SUBMISSIONS fills on a device, waits for the last, and returns
//     without releasing the device: the file written at exit must count
//     the device spans the driver could not write.
//   trace_file_probe exit_flushing
//     three threads signal host semaphores without end (events all the
//     while), a fourth calls hal_trace_flush in a loop, and main exit()s
//     after 7 ms: the exit must end, its file whole, however often the
//     looping thread takes the writer's lock back.
//   trace_file_probe register_flushing
//     three threads signal host semaphores, a fourth calls hal_trace_flush
//     in a loop, and main starts 16 threads, one at a time, each recording
//     its first event (which registers its buffer) and naming a track:
//     neither may wait for the looping thread's writes.
//   trace_file_probe forked DRIVER
//     records "before the fork", parks a submission on a device of DRIVER
//     behind a host semaphore, then forks: the child records "in the
//     child" and exit()s with 3. The parent prints how the child ended and
//     whether the trace file exists yet (the child must write none), then
//     opens the gate, records "after the fork" and releases everything:
//     the file written at its exit is the parent's alone.
//   trace_file_probe appends DIR ROUNDS
//     each round: main and a new thread record three instants named
//     "round R" (on their own tracks), the thread names track "track R",
//     main flushes and copies the file to DIR/snapshot.R. After round 2 the
//     file is replaced by another one of its size, after round 4 its
//     middle is overwritten in place, its size, ends and times kept: the
//     writes after them must not append to what is then there.

#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fork_child.h"
#include "hal/api.h"
#include "hal/trace.h"
#include "probe.h"

enum { kSpans = 40000 };

static atomic_int ends_done;  // end threads that finished

typedef struct {
  uint32_t track;
  _Atomic uint64_t* handed;  // span i's id once begun, 0 before
  atomic_bool registered;    // the end thread has its trace buffer
} pair_t;

// A registry and a device of |driver|.
static hal_status_t create_device(const char* driver,
                                  hal_driver_registry_t** out_registry,
                                  hal_device_t** out_device) {
  HAL_RETURN_IF_ERROR(
      hal_driver_registry_create(NULL, hal_allocator_system(), out_registry));
  return hal_driver_registry_create_device(*out_registry, driver,
                                           hal_allocator_system(), out_device);
}

static int unreleased(const char* driver) {
  enum { kSubmissions = 8 };
  hal_driver_registry_t* registry = NULL;
  hal_device_t* device = NULL;
  PROBE_CHECK(create_device(driver, &registry, &device));
  hal_buffer_t* buffer = NULL;
  PROBE_CHECK(hal_device_allocate_buffer(
      device,
      (hal_buffer_params_t){HAL_MEMORY_TYPE_DEVICE_LOCAL,
                            HAL_BUFFER_USAGE_DEFAULT},
      4096, &buffer));
  hal_semaphore_t* timeline = NULL;
  PROBE_CHECK(hal_device_create_semaphore(device, 0, &timeline));
  for (uint64_t i = 0; i < kSubmissions; ++i) {
    uint64_t signal = i + 1;
    uint32_t pattern = (uint32_t)i;
    hal_semaphore_list_t signals = {1, &timeline, &signal};
    PROBE_CHECK(hal_device_queue_fill(device, 0, NULL, &signals, buffer, 0,
                                      4096, &pattern, 4));
  }
  PROBE_CHECK(hal_semaphore_wait(timeline, kSubmissions,
                                 hal_make_timeout_ns(20ull * 1000000000)));
  return 0;  // the device, its buffer and semaphore are never released
}

static int forked(const char* driver) {
  hal_driver_registry_t* registry = NULL;
  hal_device_t* device = NULL;
  PROBE_CHECK(create_device(driver, &registry, &device));
  hal_semaphore_t* gate = NULL;
  hal_semaphore_t* done = NULL;
  PROBE_CHECK(hal_semaphore_create_host(hal_allocator_system(), 0, &gate));
  PROBE_CHECK(hal_device_create_semaphore(device, 0, &done));
  uint64_t one = 1;
  hal_semaphore_list_t waits = {1, &gate, &one};
  hal_semaphore_list_t signals = {1, &done, &one};
  PROBE_CHECK(hal_device_queue_execute(device, 0, &waits, &signals, 0, NULL));
  hal_trace_instant(0, "probe", "before the fork", NULL);
  fflush(stdout);
  pid_t pid = hal_test_fork();
  if (pid < 0)
    return 1;
  if (pid == 0) {
    hal_trace_instant(0, "probe", "in the child", NULL);
    exit(3);
  }
  if (hal_test_report_child(pid, "child") < 0)
    return 1;
  printf("file after the child: %s\n",
         access(getenv("HAL_TRACE"), F_OK) == 0 ? "yes" : "no");
  PROBE_CHECK(hal_semaphore_signal(gate, 1));
  PROBE_CHECK(
      hal_semaphore_wait(done, 1, hal_make_timeout_ns(20ull * 1000000000)));
  hal_trace_instant(0, "probe", "after the fork", NULL);
  hal_semaphore_release(done);
  hal_semaphore_release(gate);
  hal_device_release(device);
  hal_driver_registry_free(registry);
  return 0;
}

// The capped mode: the span ids the begin thread made, which of them the
// bound dropped, and its hand-overs with the end thread.
enum { kCappedSpans = 1 << 20, kCappedRoom = 1025 };
static uint64_t* capped_ids;
static bool* capped_dropped;
static size_t capped_count;
static atomic_int capped_stage;  // 1: room made; 2: spans begun

static void* capped_begin_main(void* arg) {
  (void)arg;
  size_t dropped_after = 0;
  for (size_t i = 0; i < kCappedSpans && dropped_after < 10; ++i) {
    uint64_t before = hal_trace_dropped();
    capped_ids[i] = hal_trace_next_id();
    hal_trace_begin(0, "probe", "capped", capped_ids[i], NULL);
    capped_dropped[i] = hal_trace_dropped() != before;
    if (capped_dropped[i])
      ++dropped_after;
    capped_count = i + 1;
  }
  atomic_store_explicit(&capped_stage, 2, memory_order_release);
  return NULL;
}

static void* capped_end_main(void* arg) {
  (void)arg;
  // Room: the buffer doubles, so one event past a power of two leaves
  // space for almost as many again.
  for (int i = 0; i < kCappedRoom; ++i)
    hal_trace_instant(0, "probe", "room", NULL);
  atomic_store_explicit(&capped_stage, 1, memory_order_release);
  while (atomic_load_explicit(&capped_stage, memory_order_acquire) != 2) {
  }
  size_t last_kept = 0;
  for (size_t i = 0; i < capped_count; ++i) {
    if (capped_dropped[i])
      hal_trace_end(0, "probe", "capped", capped_ids[i], NULL);
    else
      last_kept = i;
  }
  hal_trace_end(0, "probe", "capped", capped_ids[last_kept], NULL);
  return NULL;
}

static int capped(void) {
  capped_ids = calloc(kCappedSpans, sizeof(*capped_ids));
  capped_dropped = calloc(kCappedSpans, sizeof(*capped_dropped));
  if (!capped_ids || !capped_dropped)
    return 1;
  pthread_t threads[2];
  pthread_create(&threads[0], NULL, capped_end_main, NULL);
  while (atomic_load_explicit(&capped_stage, memory_order_acquire) != 1) {
  }
  pthread_create(&threads[1], NULL, capped_begin_main, NULL);
  pthread_join(threads[1], NULL);
  pthread_join(threads[0], NULL);
  int result = hal_trace_dropped() ? 0 : 1;  // the bound must have been met
  if (result)
    fprintf(stderr, "trace_file_probe: nothing was dropped\n");
  free(capped_ids);
  free(capped_dropped);
  return result;
}

static void* begin_main(void* arg) {
  pair_t* pair = arg;
  for (size_t i = 0; i < kSpans; ++i) {
    uint64_t id = hal_trace_next_id();
    hal_trace_begin(pair->track, "probe", "span", id, NULL);
    atomic_store_explicit(&pair->handed[i], id, memory_order_release);
  }
  return NULL;
}

static void* end_main(void* arg) {
  pair_t* pair = arg;
  // Registers this thread's buffer before the begin thread's: a flush that
  // wrote buffers one at a time, newest first, would then write the begins
  // before the ends appended meanwhile.
  hal_trace_instant(0, "probe", "ends", NULL);
  atomic_store_explicit(&pair->registered, true, memory_order_release);
  for (size_t i = 0; i < kSpans; ++i) {
    uint64_t id;
    while (
        !(id = atomic_load_explicit(&pair->handed[i], memory_order_acquire))) {
    }
    hal_trace_end(pair->track, "probe", "span", id, NULL);
  }
  atomic_fetch_add_explicit(&ends_done, 1, memory_order_release);
  return NULL;
}

static atomic_bool stop_signaling;

// Events all the while, until stop_signaling (exit_flushing never sets
// it): the looping flusher's writes grow, and the exit's write is of what
// was there when they stopped.
static void* signal_until_stopped(void* arg) {
  (void)arg;
  while (!atomic_load_explicit(&stop_signaling, memory_order_relaxed)) {
    hal_semaphore_t* semaphore = NULL;
    if (hal_semaphore_create_host(hal_allocator_system(), 0, &semaphore))
      abort();
    for (uint64_t value = 1; value <= 64; ++value)
      hal_status_ignore(hal_semaphore_signal(semaphore, value));
    hal_semaphore_release(semaphore);
  }
  return NULL;
}

static void* flush_forever(void* arg) {
  (void)arg;
  for (;;)
    hal_trace_flush();
  return NULL;
}

static int exit_flushing(void) {
  pthread_t thread;
  for (int i = 0; i < 3; ++i) {
    if (pthread_create(&thread, NULL, signal_until_stopped, NULL) != 0)
      return 1;
  }
  if (pthread_create(&thread, NULL, flush_forever, NULL) != 0)
    return 1;
  struct timespec moment = {0, 7 * 1000 * 1000};
  nanosleep(&moment, NULL);
  exit(0);
}

static void* register_once(void* arg) {
  hal_trace_instant(0, "probe", "first event", NULL);
  hal_trace_track(arg);
  return NULL;
}

static int register_flushing(void) {
  pthread_t signalers[3];
  for (int i = 0; i < 3; ++i) {
    if (pthread_create(&signalers[i], NULL, signal_until_stopped, NULL) != 0)
      return 1;
  }
  pthread_t thread;
  if (pthread_create(&thread, NULL, flush_forever, NULL) != 0)
    return 1;
  for (int i = 0; i < 16; ++i) {
    char name[16];
    snprintf(name, sizeof(name), "track %d", i);
    if (pthread_create(&thread, NULL, register_once, name) != 0 ||
        pthread_join(thread, NULL) != 0) {
      return 1;
    }
  }
  atomic_store_explicit(&stop_signaling, true, memory_order_relaxed);
  for (int i = 0; i < 3; ++i) {
    if (pthread_join(signalers[i], NULL) != 0)
      return 1;
  }
  printf("registered\n");
  fflush(stdout);
  exit(0);
}

static void record_round(int round) {
  char name[32];
  snprintf(name, sizeof(name), "round %d", round);
  for (int i = 0; i < 3; ++i)
    hal_trace_instant(0, "probe", name, NULL);
}

static void* round_main(void* arg) {
  int round = (int)(intptr_t)arg;
  record_round(round);
  char name[32];
  snprintf(name, sizeof(name), "track %d", round);
  hal_trace_track(name);
  return NULL;
}

// |from| copied to |to| as bytes; false (said) when it cannot be.
static bool copy_file(const char* from, const char* to) {
  FILE* in = fopen(from, "rb");
  FILE* out = in ? fopen(to, "wb") : NULL;
  bool ok = in && out;
  char chunk[65536];
  size_t n;
  while (ok && (n = fread(chunk, 1, sizeof(chunk), in)) > 0)
    ok = fwrite(chunk, 1, n, out) == n;
  ok = ok && !ferror(in);
  if (in)
    fclose(in);
  if (out && fclose(out) != 0)
    ok = false;
  if (!ok)
    fprintf(stderr, "trace_file_probe: cannot copy %s to %s\n", from, to);
  return ok;
}

// The trace at |path| replaced by a file of its size holding an empty
// trace and spaces, through |other| renamed over it.
static bool same_size_stranger(const char* path, const char* other) {
  struct stat st;
  if (stat(path, &st) != 0) {
    perror("stat");
    return false;
  }
  const char* text = "{\"traceEvents\":[]}";
  FILE* file = fopen(other, "w");
  bool ok = file && fputs(text, file) >= 0;
  for (off_t i = (off_t)strlen(text); ok && i < st.st_size; ++i)
    ok = fputc(' ', file) != EOF;
  if (file && fclose(file) != 0)
    ok = false;
  ok = ok && rename(other, path) == 0;
  if (!ok)
    perror("replacing the trace");
  return ok;
}

// The trace at |path| forged in place: its middle spaces, its first 64
// and last 256 bytes (its closing counts and a record before them), its
// size and its times as they were (a change of its records that only its
// change time, which no one can set back, shows).
static bool forged_in_place(const char* path) {
  struct stat st;
  if (stat(path, &st) != 0 || st.st_size < 1024) {
    fprintf(stderr, "trace_file_probe: no trace of 1 KiB to forge\n");
    return false;
  }
  FILE* file = fopen(path, "r+");
  bool ok = file && fseeko(file, 64, SEEK_SET) == 0;
  for (off_t i = 64; ok && i < st.st_size - 256; ++i)
    ok = fputc(' ', file) != EOF;
  if (file && fclose(file) != 0)
    ok = false;
  struct timespec times[2] = {st.st_atim, st.st_mtim};
  ok = ok && utimensat(AT_FDCWD, path, times, 0) == 0;
  if (!ok)
    perror("forging the trace");
  return ok;
}

static int appends(const char* directory, int rounds) {
  const char* path = getenv("HAL_TRACE");
  char other[4200];
  snprintf(other, sizeof(other), "%s.other", path);
  for (int round = 0; round < rounds; ++round) {
    record_round(round);
    pthread_t thread;
    pthread_create(&thread, NULL, round_main, (void*)(intptr_t)round);
    pthread_join(thread, NULL);
    hal_trace_flush();
    char snapshot[4200];
    snprintf(snapshot, sizeof(snapshot), "%s/snapshot.%d", directory, round);
    if (!copy_file(path, snapshot))
      return 1;
    // Another file in its place after round 2, the file itself forged in
    // place after round 4: a write appending to either would leave no
    // JSON.
    if (round == 2 && !same_size_stranger(path, other))
      return 1;
    if (round == 4 && !forged_in_place(path))
      return 1;
  }
  return 0;
}

int main(int argc, char** argv) {
  if (!hal_trace_enabled()) {
    fprintf(stderr, "trace_file_probe: HAL_TRACE is not on\n");
    return 0;  // the refusal cases run untraced by design
  }
  if (argc == 2 && strcmp(argv[1], "tracks") == 0) {
    hal_trace_track("lonely track");
    return 0;
  }
  if (argc == 3 && strcmp(argv[1], "chdir") == 0) {
    // The file is written at exit, after the working folder changed.
    hal_trace_instant(0, "probe", "before chdir", NULL);
    return chdir(argv[2]) == 0 ? 0 : 1;
  }
  if (argc == 3 && strcmp(argv[1], "unreleased") == 0)
    return unreleased(argv[2]);
  if (argc == 3 && strcmp(argv[1], "forked") == 0)
    return forked(argv[2]);
  if (argc == 2 && strcmp(argv[1], "capped") == 0)
    return capped();
  if (argc == 2 && strcmp(argv[1], "exit_flushing") == 0)
    return exit_flushing();
  if (argc == 2 && strcmp(argv[1], "register_flushing") == 0)
    return register_flushing();
  if (argc == 4 && strcmp(argv[1], "appends") == 0)
    return appends(argv[2], atoi(argv[3]));
  if (argc != 4 || strcmp(argv[1], "snapshots") != 0) {
    fprintf(stderr,
            "usage: trace_file_probe tracks | chdir DIR | snapshots DIR N | "
            "appends DIR N | capped | exit_flushing | register_flushing | "
            "unreleased DRIVER | forked DRIVER\n");
    return 2;
  }
  const char* path = getenv("HAL_TRACE");
  int flushes = atoi(argv[3]);
  pair_t pairs[2];
  pthread_t threads[4];
  for (int p = 0; p < 2; ++p) {
    pairs[p].track = hal_trace_track(p ? "pair 1" : "pair 0");
    pairs[p].handed = calloc(kSpans, sizeof(*pairs[p].handed));
    if (!pairs[p].handed)
      return 1;
    atomic_init(&pairs[p].registered, false);
    pthread_create(&threads[2 * p + 1], NULL, end_main, &pairs[p]);
    while (!atomic_load_explicit(&pairs[p].registered, memory_order_acquire)) {
    }
    pthread_create(&threads[2 * p], NULL, begin_main, &pairs[p]);
  }
  // Flushes while the pairs run (the first always), at most FLUSHES.
  for (int k = 0;
       k < flushes &&
       (k == 0 || atomic_load_explicit(&ends_done, memory_order_acquire) < 2);
       ++k) {
    hal_trace_flush();
    char snapshot[4096];
    snprintf(snapshot, sizeof(snapshot), "%s/snapshot.%d", argv[2], k);
    if (rename(path, snapshot) != 0) {
      perror("rename");
      return 1;
    }
  }
  for (int t = 0; t < 4; ++t)
    pthread_join(threads[t], NULL);
  for (int p = 0; p < 2; ++p)
    free(pairs[p].handed);
  return 0;
}
