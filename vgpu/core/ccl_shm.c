// Copyright 2026 The HAL Authors.
//
// The shared segment of a communicator across processes (ccl_shm.h has
// the contract; ccl.c the protocol that uses it).

#include "ccl_shm.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/futex.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define CCL_SHM_MAGIC 0x4c434356u  // "VCCL"
#define CCL_SHM_VERSION 2u
#define CCL_SHM_PAGE 4096u
#define CCL_SHM_MiB (1024u * 1024u)

enum { RANK_ABSENT = 0, RANK_JOINED = 1, RANK_LEFT = 2 };

typedef struct shm_rank {
  uint64_t token;  // the process's (shm_process_token)
  // The process's pid namespace (the inode of /proc/self/ns/pid; 0 when
  // unknown): |pid| names a process only to processes of the same one.
  uint64_t pid_namespace;
  int32_t pid;
  int32_t state;
} shm_rank;

// A call without its buffers; |seq| is the call's number plus one (0: none
// posted yet).
typedef struct shm_call {
  uint64_t seq;
  uint64_t count;
  int32_t kind, type, reduction, peer;
} shm_call;

typedef struct shm_pair {
  shm_call send, recv;
  uint64_t posted, taken;  // slot fills put and taken: full when they differ
  uint64_t length;         // bytes of the fill in the slot
} shm_pair;

typedef struct shm_header {
  _Atomic uint32_t magic;  // set last by the maker, once the rest is ready
  _Atomic uint32_t bell;   // a futex word, rung on every change
  uint32_t version;
  int32_t rank_count;
  uint64_t size;
  uint64_t slot_bytes, pair_bytes;
  uint64_t slots_offset, pairs_offset;
  pthread_mutex_t mu;  // process-shared, robust; guards what follows
  int32_t attached;    // processes that mapped it and did not close
  int32_t joined;
  int32_t processes;  // at completion: how many processes hold ranks
  int32_t unlinked;
  int32_t failure;  // vgpu_status; VGPU_OK while none
  char message[384];
  uint64_t barrier_generation;
  int32_t barrier_arrived;
  shm_rank ranks[VGPU_CCL_MAX_RANKS];
  shm_call calls[VGPU_CCL_MAX_RANKS];
  shm_pair pairs[];  // rank_count * rank_count, from-major
} shm_header;

struct ccl_shm {
  shm_header* h;
  size_t size;
  char name[64];
  char text[17];  // the id's first bytes, for messages (as ccl.c's)
  uint64_t token;
  uint64_t pid_namespace;  // this process's (shm_pid_namespace)
  bool completed;
  int processes;
  bool local[VGPU_CCL_MAX_RANKS];
  // Once complete, a pidfd per rank of another process (-1: none): it
  // turns readable when that process ends, zombie or reaped; kill(pid, 0)
  // cannot tell a zombie from the living.
  int pidfds[VGPU_CCL_MAX_RANKS];
};

void ccl_format(char* out, size_t size, const char* fmt, ...) {
  if (out == NULL || size == 0)
    return;
  va_list args;
  va_start(args, fmt);
  vsnprintf(out, size, fmt, args);
  va_end(args);
}

// Tells this process from every other, even one with the same pid in
// another pid namespace; a forked child gets its own.
static uint64_t shm_process_token(void) {
  static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
  static uint64_t token;
  static pid_t owner;
  pthread_mutex_lock(&mu);
  if (owner != getpid()) {
    owner = getpid();
    if (getrandom(&token, sizeof(token), 0) != (ssize_t)sizeof(token))
      token = (uint64_t)vgpu_now_ns() * 0x9e3779b97f4a7c15u;
    token ^= (uint64_t)owner;
    token |= 1u;  // never 0, an absent rank's
  }
  uint64_t result = token;
  pthread_mutex_unlock(&mu);
  return result;
}

// FNV-1a over the whole id, two ways: 128 bits of name.
void ccl_shm_name(const uint8_t id[VGPU_CCL_ID_BYTES], char* out, size_t size) {
  uint64_t a = 0xcbf29ce484222325u, b = 0x84222325cbf29ce4u;
  for (int i = 0; i < VGPU_CCL_ID_BYTES; ++i) {
    a = (a ^ id[i]) * 0x100000001b3u;
    b = (b ^ id[VGPU_CCL_ID_BYTES - 1 - i]) * 0x100000001b3u;
  }
  snprintf(out, size, "/vgpu-ccl-%u-%016" PRIx64 "%016" PRIx64,
           (unsigned)getuid(), a, b);
}

static void shm_layout(int ranks, uint64_t* slot_bytes, uint64_t* pair_bytes,
                       uint64_t* slots_offset, uint64_t* pairs_offset,
                       uint64_t* size) {
  // At most 16 MiB of slots for the collectives and 16 MiB for the pairs,
  // touched only as used: chunks of 1 MiB (and 256 KiB per pair) for a few
  // ranks, smaller for many.
  uint64_t n = (uint64_t)ranks;
  uint64_t slot = 16u * CCL_SHM_MiB / n / CCL_SHM_PAGE * CCL_SHM_PAGE;
  *slot_bytes = slot > CCL_SHM_MiB ? CCL_SHM_MiB : slot;
  uint64_t pair = 16u * CCL_SHM_MiB / (n * n) / CCL_SHM_PAGE * CCL_SHM_PAGE;
  *pair_bytes = pair > CCL_SHM_MiB / 4 ? CCL_SHM_MiB / 4
                : pair < CCL_SHM_PAGE  ? CCL_SHM_PAGE
                                       : pair;
  uint64_t header = sizeof(shm_header) + n * n * sizeof(shm_pair);
  *slots_offset = (header + CCL_SHM_PAGE - 1) / CCL_SHM_PAGE * CCL_SHM_PAGE;
  *pairs_offset = *slots_offset + n * *slot_bytes;
  *size = *pairs_offset + n * n * *pair_bytes;
}

static void shm_header_fail_locked(shm_header* h, vgpu_status status,
                                   const char* message) {
  if (h->failure != VGPU_OK)
    return;
  h->failure = status;
  ccl_format(h->message, sizeof(h->message), "%s", message);
}

static void shm_fail_locked(ccl_shm* s, vgpu_status status,
                            const char* message) {
  shm_header_fail_locked(s->h, status, message);
}

// Takes |h|'s lock (only if free, with |try|: false when it was not).
// An owner that died inside leaves what it was changing suspect, so the
// communicator (|text| names it) fails; the fields stay readable.
static bool shm_header_lock(shm_header* h, const char* text, bool try) {
  int rc = try ? pthread_mutex_trylock(&h->mu) : pthread_mutex_lock(&h->mu);
  if (rc == EOWNERDEAD) {
    pthread_mutex_consistent(&h->mu);
    char message[160];
    snprintf(message, sizeof(message),
             "a process of communicator %s exited holding its shared lock",
             text);
    shm_header_fail_locked(h, VGPU_ERR_DEVICE_LOST, message);
    return true;
  }
  return rc == 0;
}

static void shm_lock(ccl_shm* s) {
  (void)shm_header_lock(s->h, s->text, false);
}

static void shm_unlock(ccl_shm* s) {
  pthread_mutex_unlock(&s->h->mu);
}

static void shm_init_header(shm_header* h, int rank_count, uint64_t size,
                            uint64_t slot_bytes, uint64_t pair_bytes,
                            uint64_t slots_offset, uint64_t pairs_offset) {
  h->version = CCL_SHM_VERSION;
  h->rank_count = rank_count;
  h->size = size;
  h->slot_bytes = slot_bytes;
  h->pair_bytes = pair_bytes;
  h->slots_offset = slots_offset;
  h->pairs_offset = pairs_offset;
  pthread_mutexattr_t attr;
  pthread_mutexattr_init(&attr);
  pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
  pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
  pthread_mutex_init(&h->mu, &attr);
  pthread_mutexattr_destroy(&attr);
  atomic_store_explicit(&h->magic, CCL_SHM_MAGIC, memory_order_release);
}

// This process's pid namespace (see shm_rank), 0 when unknown.
static uint64_t shm_pid_namespace(void) {
  struct stat st;
  return stat("/proc/self/ns/pid", &st) == 0 ? (uint64_t)st.st_ino : 0;
}

// Whether process |pid| (of this pid namespace) runs. A pidfd answers
// without /proc (which may belong to another namespace, or be missing):
// it turns readable once every thread of the process ended, zombie or
// reaped, so a process whose main thread ended while others run still
// runs. Without pidfds (Linux before 5.3), kill(pid, 0) decides, which
// takes a zombie for a live process.
static bool shm_process_runs(int32_t pid) {
  int fd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0u);
  if (fd < 0) {
    if (errno == ESRCH)
      return false;
    return kill(pid, 0) == 0 || errno != ESRCH;
  }
  struct pollfd ended = {.fd = fd, .events = POLLIN};
  bool runs = poll(&ended, 1, 0) != 1;
  close(fd);
  return runs;
}

// Whether the process of |rank| (joined) may still run, as this process
// can tell: one of another pid namespace may (its pid means nothing here).
// Namespaces both unknown (0: no /proc) are taken for the same one.
static bool shm_rank_may_run(const shm_rank* rank, uint64_t pid_namespace) {
  if (rank->pid_namespace != pid_namespace)
    return true;
  return shm_process_runs(rank->pid);
}

// Under |h|'s lock: whether its communicator can never complete and no
// process is left to remove its name: none completed it, the processes
// that gave up did not unlink it (they unlink once every other joined
// rank's process is gone, so only a process killed while joining, with
// no live peer, leaves a name behind), and at least one rank joined (the
// caller then checks that each is in a process of this pid namespace that
// no longer runs). |ranks| gets the joined ranks' tokens, to tell a later
// look whether anyone joined since.
static bool shm_looks_stale_locked(const shm_header* h,
                                   uint64_t ranks[VGPU_CCL_MAX_RANKS]) {
  if (h->unlinked || h->processes != 0)
    return false;
  int joined = 0;
  for (int r = 0; r < h->rank_count; ++r) {
    ranks[r] = h->ranks[r].state == RANK_JOINED ? h->ranks[r].token : 0;
    joined += ranks[r] != 0;
  }
  return joined > 0;
}

// Removes the name |entry| (under /dev/shm) when shm_looks_stale_locked
// says so and its joined ranks' processes no longer run. A live process
// that maps it but has not joined yet keeps its mapping; it could not
// complete either, as ranks that joined are never given back by a dead
// process. The segment's lock is only tried, and not held while the
// processes are looked at: a job stopped holding it (a debugger, ^Z)
// must not stop the opens of every other job.
static void shm_reap_if_stale(const char* entry, uint64_t pid_namespace) {
  char name[NAME_MAX + 2];
  snprintf(name, sizeof(name), "/%s", entry);
  int fd = shm_open(name, O_RDWR, 0600);
  if (fd < 0)
    return;
  struct stat st;
  void* map = MAP_FAILED;
  if (fstat(fd, &st) == 0 && (uint64_t)st.st_size >= sizeof(shm_header)) {
    map = mmap(NULL, sizeof(shm_header), PROT_READ | PROT_WRITE, MAP_SHARED, fd,
               0);
  }
  close(fd);
  if (map == MAP_FAILED)
    return;
  shm_header* h = map;
  bool stale = false;
  uint64_t ranks[VGPU_CCL_MAX_RANKS] = {0};
  shm_rank seen[VGPU_CCL_MAX_RANKS];
  int rank_count = 0;
  if (atomic_load_explicit(&h->magic, memory_order_acquire) == CCL_SHM_MAGIC &&
      h->version == CCL_SHM_VERSION && h->rank_count > 0 &&
      h->rank_count <= VGPU_CCL_MAX_RANKS && shm_header_lock(h, entry, true)) {
    rank_count = h->rank_count;
    stale = shm_looks_stale_locked(h, ranks);
    memcpy(seen, h->ranks, sizeof(shm_rank) * (size_t)rank_count);
    pthread_mutex_unlock(&h->mu);
  }
  for (int r = 0; stale && r < rank_count; ++r) {
    if (ranks[r] != 0 && shm_rank_may_run(&seen[r], pid_namespace))
      stale = false;
  }
  if (stale && shm_header_lock(h, entry, true)) {
    // Nobody joined, completed or unlinked it meanwhile.
    uint64_t now[VGPU_CCL_MAX_RANKS] = {0};
    stale =
        shm_looks_stale_locked(h, now) && memcmp(now, ranks, sizeof(now)) == 0;
    if (stale)
      h->unlinked = 1;
    pthread_mutex_unlock(&h->mu);
  } else {
    stale = false;
  }
  munmap(map, sizeof(shm_header));
  if (stale)
    shm_unlink(name);
}

// Reaps this user's names that shm_reap_if_stale finds stale, each time a
// process opens a communicator: a name left by a process killed while
// joining goes with the next communicator made on the machine.
static void shm_reap_stale(void) {
  DIR* dir = opendir("/dev/shm");
  if (dir == NULL)
    return;
  char prefix[32];
  int prefix_length =
      snprintf(prefix, sizeof(prefix), "vgpu-ccl-%u-", (unsigned)getuid());
  uint64_t pid_namespace = shm_pid_namespace();
  struct dirent* entry;
  while ((entry = readdir(dir)) != NULL) {
    if (strncmp(entry->d_name, prefix, (size_t)prefix_length) == 0)
      shm_reap_if_stale(entry->d_name, pid_namespace);
  }
  closedir(dir);
}

vgpu_status ccl_shm_open(const uint8_t id[VGPU_CCL_ID_BYTES], int rank_count,
                         ccl_shm** out, char* error, size_t error_size) {
  *out = NULL;
  ccl_shm* s = calloc(1, sizeof(*s));
  if (s == NULL)
    return VGPU_ERR_OUT_OF_MEMORY;
  ccl_shm_name(id, s->name, sizeof(s->name));
  for (int i = 0; i < 8; ++i)
    snprintf(s->text + 2 * i, 3, "%02x", id[i]);
  s->token = shm_process_token();
  s->pid_namespace = shm_pid_namespace();
  for (int r = 0; r < VGPU_CCL_MAX_RANKS; ++r)
    s->pidfds[r] = -1;
  uint64_t slot_bytes, pair_bytes, slots_offset, pairs_offset, size;
  shm_layout(rank_count, &slot_bytes, &pair_bytes, &slots_offset, &pairs_offset,
             &size);
  shm_reap_stale();
  vgpu_status status = VGPU_OK;
  int fd = -1;
  bool maker = false;
  // The name may vanish between a failed exclusive make and the open (its
  // communicator completed): then make it again.
  for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
    fd = shm_open(s->name, O_RDWR | O_CREAT | O_EXCL, 0600);
    maker = fd >= 0;
    if (fd < 0 && errno == EEXIST)
      fd = shm_open(s->name, O_RDWR, 0600);
    if (fd < 0 && errno != ENOENT)
      break;
  }
  if (fd < 0) {
    ccl_format(error, error_size,
               "communicator %s: no shared memory for ranks in other "
               "processes (shm_open %s: %s)",
               s->text, s->name, strerror(errno));
    free(s);
    return VGPU_ERR_NOT_SUPPORTED;
  }
  if (maker) {
    if (ftruncate(fd, (off_t)size) != 0) {
      ccl_format(error, error_size,
                 "communicator %s: shared memory of %" PRIu64 " bytes: %s",
                 s->text, size, strerror(errno));
      status = VGPU_ERR_NOT_SUPPORTED;
    }
  } else {
    // The maker sizes it, then sets the magic last: wait (bounded) for
    // both, then check that this process sees the same communicator.
    uint64_t deadline = vgpu_now_ns() + 5000000000u;
    struct stat st;
    while (fstat(fd, &st) == 0 && (uint64_t)st.st_size < sizeof(shm_header) &&
           vgpu_now_ns() < deadline) {
      usleep(1000);
    }
    if (fstat(fd, &st) != 0 || (uint64_t)st.st_size < sizeof(shm_header)) {
      ccl_format(error, error_size,
                 "communicator %s: the process that made its shared memory "
                 "never sized it",
                 s->text);
      status = VGPU_ERR_TIMEOUT;
    } else {
      size = (uint64_t)st.st_size;
    }
  }
  void* map = MAP_FAILED;
  if (status == VGPU_OK) {
    map = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED) {
      ccl_format(error, error_size, "communicator %s: mmap: %s", s->text,
                 strerror(errno));
      status = VGPU_ERR_NOT_SUPPORTED;
    }
  }
  close(fd);
  if (status != VGPU_OK) {
    if (maker)
      shm_unlink(s->name);
    free(s);
    return status;
  }
  s->h = map;
  s->size = (size_t)size;
  if (maker) {
    shm_init_header(s->h, rank_count, size, slot_bytes, pair_bytes,
                    slots_offset, pairs_offset);
  } else {
    uint64_t deadline = vgpu_now_ns() + 5000000000u;
    while (atomic_load_explicit(&s->h->magic, memory_order_acquire) !=
               CCL_SHM_MAGIC &&
           vgpu_now_ns() < deadline) {
      usleep(1000);
    }
    if (atomic_load_explicit(&s->h->magic, memory_order_acquire) !=
            CCL_SHM_MAGIC ||
        s->h->version != CCL_SHM_VERSION) {
      ccl_format(error, error_size,
                 "communicator %s: its shared memory was never made ready",
                 s->text);
      status = VGPU_ERR_TIMEOUT;
    } else if (s->h->rank_count != rank_count) {
      ccl_format(error, error_size,
                 "communicator %s: this process joins with %d ranks, "
                 "another process with %d",
                 s->text, rank_count, s->h->rank_count);
      status = VGPU_ERR_INVALID_VALUE;
      // The ranks already waiting learn it now, not at their bound.
      char message[192];
      snprintf(message, sizeof(message),
               "communicator %s: process %d came with %d ranks, the others "
               "with %d",
               s->text, (int)getpid(), rank_count, s->h->rank_count);
      shm_lock(s);
      shm_fail_locked(s, VGPU_ERR_INVALID_VALUE, message);
      shm_unlock(s);
      ccl_shm_ring(s);
    } else if (s->h->size != size) {
      ccl_format(
          error, error_size,
          "communicator %s: its shared memory is %zu bytes, not %" PRIu64,
          s->text, s->size, s->h->size);
      status = VGPU_ERR_INVALID_VALUE;
    }
    if (status != VGPU_OK) {
      munmap(map, s->size);
      free(s);
      return status;
    }
  }
  shm_lock(s);
  ++s->h->attached;
  shm_unlock(s);
  *out = s;
  return VGPU_OK;
}

// Under the lock: whether a rank of another process that still runs has
// joined.
static bool shm_others_alive_locked(const ccl_shm* shm) {
  for (int r = 0; r < shm->h->rank_count; ++r) {
    const shm_rank* rank = &shm->h->ranks[r];
    if (rank->state == RANK_JOINED && rank->token != shm->token &&
        shm_rank_may_run(rank, shm->pid_namespace)) {
      return true;
    }
  }
  return false;
}

void ccl_shm_close(ccl_shm* shm) {
  if (shm == NULL)
    return;
  shm_lock(shm);
  // The last to close unlinks the name; so does one that gives up when
  // every other rank that joined is in a process that died (killed while
  // joining): nobody else would.
  bool last = --shm->h->attached == 0;
  bool unlink_now =
      !shm->h->unlinked && (last || !shm_others_alive_locked(shm));
  if (unlink_now)
    shm->h->unlinked = 1;
  shm_unlock(shm);
  if (unlink_now)
    shm_unlink(shm->name);
  munmap(shm->h, shm->size);
  for (int r = 0; r < VGPU_CCL_MAX_RANKS; ++r) {
    if (shm->pidfds[r] >= 0)
      close(shm->pidfds[r]);
  }
  free(shm);
}

vgpu_status ccl_shm_join(ccl_shm* shm, int rank, char* error,
                         size_t error_size) {
  shm_header* h = shm->h;
  vgpu_status status = VGPU_OK;
  shm_lock(shm);
  shm_rank* r = &h->ranks[rank];
  if (r->state != RANK_ABSENT) {
    ccl_format(error, error_size,
               "communicator %s: rank %d %s already (process %d)", shm->text,
               rank, r->state == RANK_JOINED ? "joined" : "joined and left",
               (int)r->pid);
    status = VGPU_ERR_INVALID_VALUE;
    // Every rank's failure: the communicator cannot be what they asked for.
    char message[192];
    snprintf(message, sizeof(message),
             "communicator %s: rank %d joined twice (processes %d and %d)",
             shm->text, rank, (int)r->pid, (int)getpid());
    shm_fail_locked(shm, VGPU_ERR_INVALID_VALUE, message);
  } else {
    r->state = RANK_JOINED;
    r->token = shm->token;
    r->pid_namespace = shm->pid_namespace;
    r->pid = (int32_t)getpid();
    if (++h->joined == h->rank_count) {
      int processes = 0;
      for (int i = 0; i < h->rank_count; ++i) {
        bool first = true;
        for (int j = 0; j < i && first; ++j)
          first = h->ranks[j].token != h->ranks[i].token;
        processes += first;
      }
      h->processes = processes;
    }
  }
  shm_unlock(shm);
  ccl_shm_ring(shm);
  return status;
}

bool ccl_shm_unjoin(ccl_shm* shm, int rank) {
  shm_lock(shm);
  bool unjoined = shm->h->processes == 0;
  shm_rank* r = &shm->h->ranks[rank];
  if (unjoined && r->state == RANK_JOINED && r->token == shm->token) {
    r->state = RANK_ABSENT;
    --shm->h->joined;
  }
  shm_unlock(shm);
  ccl_shm_ring(shm);
  return unjoined;
}

bool ccl_shm_complete(ccl_shm* shm, uint64_t* absent) {
  if (shm->completed)
    return true;
  shm_header* h = shm->h;
  bool unlink_now = false;
  shm_lock(shm);
  bool complete = h->processes > 0;
  if (complete) {
    shm->processes = h->processes;
    for (int r = 0; r < h->rank_count; ++r) {
      shm->local[r] = h->ranks[r].token == shm->token;
      // A process of another pid namespace cannot be watched from here:
      // its death is found by the bound.
      if (!shm->local[r] && h->ranks[r].pid_namespace == shm->pid_namespace) {
        shm->pidfds[r] =
            (int)syscall(SYS_pidfd_open, (pid_t)h->ranks[r].pid, 0u);
      }
    }
    unlink_now = !h->unlinked;
    h->unlinked = 1;
  } else if (absent != NULL) {
    *absent = 0;
    for (int r = 0; r < h->rank_count; ++r) {
      if (h->ranks[r].state != RANK_JOINED)
        *absent |= (uint64_t)1 << r;
    }
  }
  shm_unlock(shm);
  if (unlink_now)
    shm_unlink(shm->name);  // every rank has it mapped: the name is done
  shm->completed = complete;
  return complete;
}

bool ccl_shm_is_local(const ccl_shm* shm, int rank) {
  return shm->local[rank];
}

int ccl_shm_process_count(const ccl_shm* shm) {
  return shm->processes;
}

void ccl_shm_leave(ccl_shm* shm, int rank) {
  shm_lock(shm);
  shm->h->ranks[rank].state = RANK_LEFT;
  shm_unlock(shm);
  ccl_shm_ring(shm);
}

void ccl_shm_fail(ccl_shm* shm, vgpu_status status, const char* message) {
  shm_lock(shm);
  shm_fail_locked(shm, status, message);
  shm_unlock(shm);
  ccl_shm_ring(shm);
}

// Whether the process of |rank| ended: its pidfd, opened when the
// communicator completed, or, without one, the test every other look makes.
static bool shm_process_ended(const ccl_shm* shm, int rank,
                              const shm_rank* record) {
  if (shm->pidfds[rank] >= 0) {
    struct pollfd fd = {.fd = shm->pidfds[rank], .events = POLLIN};
    return poll(&fd, 1, 0) == 1;
  }
  return !shm_rank_may_run(record, shm->pid_namespace);
}

vgpu_status ccl_shm_failure(ccl_shm* shm, bool check_peers, char* message,
                            size_t message_size) {
  shm_header* h = shm->h;
  bool found = false;
  shm_lock(shm);
  for (int r = 0; check_peers && h->failure == VGPU_OK && r < h->rank_count;
       ++r) {
    const shm_rank* rank = &h->ranks[r];
    if (rank->state == RANK_JOINED && rank->token != shm->token &&
        shm_process_ended(shm, r, rank)) {
      char text[192];
      snprintf(text, sizeof(text),
               "rank %d (process %d) of communicator %s exited without "
               "leaving it",
               r, (int)rank->pid, shm->text);
      shm_fail_locked(shm, VGPU_ERR_DEVICE_LOST, text);
      found = true;
    }
  }
  vgpu_status status = (vgpu_status)h->failure;
  if (status != VGPU_OK)
    ccl_format(message, message_size, "%s", h->message);
  shm_unlock(shm);
  if (found)
    ccl_shm_ring(shm);
  return status;
}

int ccl_shm_gone(ccl_shm* shm, uint64_t ranks) {
  int gone = -1;
  shm_lock(shm);
  for (int r = 0; r < shm->h->rank_count && gone < 0; ++r) {
    if ((ranks >> r & 1u) && shm->h->ranks[r].state == RANK_LEFT)
      gone = r;
  }
  shm_unlock(shm);
  return gone;
}

uint32_t ccl_shm_bell(const ccl_shm* shm) {
  return atomic_load_explicit(&shm->h->bell, memory_order_acquire);
}

void ccl_shm_ring(ccl_shm* shm) {
  atomic_fetch_add_explicit(&shm->h->bell, 1u, memory_order_release);
  // Not FUTEX_PRIVATE: the waiters are in other processes too.
  syscall(SYS_futex, (uint32_t*)&shm->h->bell, FUTEX_WAKE, INT_MAX, NULL, NULL,
          0);
}

void ccl_shm_sleep(ccl_shm* shm, uint32_t seen, uint64_t timeout_ns) {
  struct timespec timeout = {.tv_sec = (time_t)(timeout_ns / 1000000000u),
                             .tv_nsec = (long)(timeout_ns % 1000000000u)};
  syscall(SYS_futex, (uint32_t*)&shm->h->bell, FUTEX_WAIT, seen, &timeout, NULL,
          0);
}

uint64_t ccl_shm_barrier_arrive(ccl_shm* shm) {
  shm_header* h = shm->h;
  shm_lock(shm);
  uint64_t target = h->barrier_generation + 1;
  if (++h->barrier_arrived == h->processes) {
    h->barrier_arrived = 0;
    h->barrier_generation = target;
  }
  shm_unlock(shm);
  ccl_shm_ring(shm);
  return target;
}

bool ccl_shm_barrier_passed(ccl_shm* shm, uint64_t target) {
  shm_lock(shm);
  bool passed = shm->h->barrier_generation >= target;
  shm_unlock(shm);
  return passed;
}

static void shm_call_store(shm_call* out, uint64_t seq,
                           const vgpu_ccl_call* call) {
  *out = (shm_call){.seq = seq + 1,
                    .count = call->count,
                    .kind = (int32_t)call->kind,
                    .type = call->type,
                    .reduction = call->reduction,
                    .peer = call->peer};
}

static vgpu_ccl_call shm_call_load(const shm_call* in) {
  return (vgpu_ccl_call){.kind = (vgpu_ccl_kind)in->kind,
                         .count = (size_t)in->count,
                         .type = in->type,
                         .reduction = in->reduction,
                         .peer = in->peer};
}

void ccl_shm_post(ccl_shm* shm, int rank, uint64_t seq,
                  const vgpu_ccl_call* call) {
  shm_lock(shm);
  shm_call_store(&shm->h->calls[rank], seq, call);
  shm_unlock(shm);
  ccl_shm_ring(shm);
}

bool ccl_shm_posted(ccl_shm* shm, uint64_t seq, vgpu_ccl_call* calls,
                    char* missing, size_t missing_size) {
  shm_header* h = shm->h;
  bool all = true;
  size_t length = 0;
  if (missing != NULL && missing_size > 0)
    missing[0] = '\0';
  shm_lock(shm);
  for (int r = 0; r < h->rank_count; ++r) {
    if (h->calls[r].seq != seq + 1) {
      all = false;
      if (missing != NULL && length + 8 < missing_size) {
        length += (size_t)snprintf(missing + length, missing_size - length,
                                   "%s%d", length ? ", " : "", r);
      }
    } else if (calls != NULL) {
      calls[r] = shm_call_load(&h->calls[r]);
    }
  }
  shm_unlock(shm);
  return all;
}

void* ccl_shm_slot(const ccl_shm* shm, int rank) {
  return (uint8_t*)shm->h + shm->h->slots_offset +
         (uint64_t)rank * shm->h->slot_bytes;
}

size_t ccl_shm_slot_bytes(const ccl_shm* shm) {
  return (size_t)shm->h->slot_bytes;
}

static shm_pair* shm_pair_at(const ccl_shm* shm, int from, int to) {
  return &shm->h->pairs[from * shm->h->rank_count + to];
}

void ccl_shm_pair_post(ccl_shm* shm, int from, int to, bool send, uint64_t seq,
                       const vgpu_ccl_call* call) {
  shm_lock(shm);
  shm_pair* p = shm_pair_at(shm, from, to);
  shm_call_store(send ? &p->send : &p->recv, seq, call);
  shm_unlock(shm);
  ccl_shm_ring(shm);
}

bool ccl_shm_pair_posted(ccl_shm* shm, int from, int to, uint64_t seq,
                         vgpu_ccl_call* send, vgpu_ccl_call* recv) {
  shm_lock(shm);
  shm_pair* p = shm_pair_at(shm, from, to);
  bool posted = p->send.seq == seq + 1 && p->recv.seq == seq + 1;
  if (posted) {
    *send = shm_call_load(&p->send);
    *recv = shm_call_load(&p->recv);
  }
  shm_unlock(shm);
  return posted;
}

void* ccl_shm_pair_slot(const ccl_shm* shm, int from, int to) {
  return (uint8_t*)shm->h + shm->h->pairs_offset +
         (uint64_t)(from * shm->h->rank_count + to) * shm->h->pair_bytes;
}

size_t ccl_shm_pair_bytes(const ccl_shm* shm) {
  return (size_t)shm->h->pair_bytes;
}

bool ccl_shm_pair_empty(ccl_shm* shm, int from, int to) {
  shm_lock(shm);
  shm_pair* p = shm_pair_at(shm, from, to);
  bool empty = p->posted == p->taken;
  shm_unlock(shm);
  return empty;
}

void ccl_shm_pair_put(ccl_shm* shm, int from, int to, size_t length) {
  shm_lock(shm);
  shm_pair* p = shm_pair_at(shm, from, to);
  p->length = length;
  ++p->posted;
  shm_unlock(shm);
  ccl_shm_ring(shm);
}

bool ccl_shm_pair_full(ccl_shm* shm, int from, int to, size_t* length) {
  shm_lock(shm);
  shm_pair* p = shm_pair_at(shm, from, to);
  bool full = p->posted != p->taken;
  if (full)
    *length = (size_t)p->length;
  shm_unlock(shm);
  return full;
}

void ccl_shm_pair_take(ccl_shm* shm, int from, int to) {
  shm_lock(shm);
  ++shm_pair_at(shm, from, to)->taken;
  shm_unlock(shm);
  ccl_shm_ring(shm);
}
