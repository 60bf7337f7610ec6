// Copyright 2026 The HAL Authors.
//
// Tokens, values and groups of MLIR's async runtime ABI, built from the sync
// module's host semaphores and timepoints (the header hal/mlir_async.h has
// the contract).
//
// State lives in the semaphore, nowhere else:
//   token, value: payload 0 = pending, 1 = ready; failed = error (sticky).
//   group:        payload 2 once |size| member tokens are ready, 1 while
//                 one member is left (HAL_ASYNC_GROUP_LAST: a blocking
//                 await wakes there to be running when the last one comes);
//                 members that were in error are counted in |errors|.
// Waiting is hal_semaphore_wait; reacting is hal_semaphore_add_callback,
// whose callbacks run exactly once and after the semaphore's lock is
// dropped (T1, T2), which is what lets a callback drop the last reference
// to anything, including the object that became ready (K12).

#include <assert.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "async_internal.h"
#include "hal/timepoint.h"

typedef enum hal_async_kind_e {
  HAL_ASYNC_KIND_TOKEN = 0x70C0,
  HAL_ASYNC_KIND_VALUE = 0x7A10,
  HAL_ASYNC_KIND_GROUP = 0x6A0B,
  // Written just before an object is freed: a later use through a stale
  // pointer reads it (or ASan reports the use) instead of a live kind.
  HAL_ASYNC_KIND_DEAD = 0xDEAD,
} hal_async_kind_t;

typedef enum hal_async_resolution_e {
  HAL_ASYNC_UNRESOLVED = 0,
  HAL_ASYNC_RESOLVED_BY_PRODUCER,
  // A blocking await that HAL_SYNC_MAX_WAIT_MS (or a malformed value of it)
  // ended before the object was resolved put it in error; the producer's
  // resolution, if it ever comes, only drops its reference, and moves the
  // state on, so that a second one is reported as ever.
  HAL_ASYNC_FAILED_BY_AWAIT,
  HAL_ASYNC_FAILED_BY_AWAIT_THEN_RESOLVED,
} hal_async_resolution_t;

typedef struct hal_async_object_t {
  atomic_int_fast64_t ref_count;
  uint32_t kind;
  // Who resolves the object (hal_async_resolution_t): the first emplace or
  // set-error claims it (published or still a queued handoff), and a second
  // one is reported; or a blocking await cut short, which puts it in error.
  atomic_int resolution;
  // Link in the token cache.
  struct hal_async_object_t* cache_next;
  hal_semaphore_t* semaphore;
  // The payload at which the object is ready. Tokens are recycled with
  // their semaphore (payloads only grow, S1): a recycled token waits for
  // the next value; values and groups always use 1.
  uint64_t target;
} hal_async_object_t;

// Lowered code loads and stores the payload with the natural alignment of
// its type, which for vectors is their size (32 for vector<4xi64>: an
// aligned AVX store): the storage is aligned to a cache line.
#define HAL_ASYNC_VALUE_ALIGNMENT 64

typedef struct hal_async_value_t {
  hal_async_object_t base;
  int64_t size;
  unsigned char* storage;  // inside this allocation, aligned
  unsigned char bytes[];
} hal_async_value_t;

// A group's payloads (its |target| is HAL_ASYNC_GROUP_READY).
#define HAL_ASYNC_GROUP_LAST 1
#define HAL_ASYNC_GROUP_READY 2

// How long a blocking await of a group polls for its last member once it
// is the only one left, before it sleeps until the group is ready. The
// wake of a sleeping thread costs about as much as a short task; waking at
// the last member overlaps that cost with the member's run
// (docs/mlir-async.md).
#define HAL_ASYNC_GROUP_LAST_SPIN_NS 20000

typedef struct hal_async_group_t {
  hal_async_object_t base;
  int64_t size;
  // Members not yet ready; the member that takes it from 1 to 0 signals.
  atomic_int_fast64_t pending;
  atomic_int_fast64_t errors;
  atomic_int_fast64_t next_rank;
} hal_async_group_t;

// A coroutine waiting for an object (await-and-execute).
typedef struct hal_async_awaiter_t {
  hal_async_coro_handle_t handle;
  hal_async_coro_resume_t resume;
} hal_async_awaiter_t;

//===----------------------------------------------------------------------===//
// Handoffs of pool tasks
//===----------------------------------------------------------------------===//
//
// INVARIANT: while a pool thread runs a task (hal_async_deferring), nothing
// the task does lets another thread run a coroutine or see an object
// resolved. Emplace, set-error, await-and-execute registrations, group
// memberships, execute and the end of a token or value that loses its last
// reference unresolved (a program bug, which fails its groups and cancels
// its awaiters) are queued on the thread, in program order, and
// take effect in hal_async_flush_deferred once the task has returned into
// hal_async_worker_main (or just before a blocking await on a pool thread).
//
// Why: the task's thread is inside JIT'd code until resume() returns, and
// mlir-cpu-runner unmaps that code as soon as main's last await returns.
// Any handoff made from inside the code can complete the program on
// another thread first: publishing the coroutine's own token while its
// epilogue still runs (the first crash, under TSan), and, the same race
// with the roles swapped, registering an awaiter: the emplacing thread
// resumed the coroutine, ran it to its end and published its token while
// the thread that had suspended it was still returning from
// mlirAsyncRuntimeAwaitTokenAndExecute through JIT'd code (SIGSEGV in a
// plain build, ~2 runs in 1000 of execute_chain; a 2 ms delay after the
// registration made it 1 in 2). With every handoff queued, each stretch of
// a coroutine's code on a pool thread ends before anything it enabled can
// run elsewhere, so everything main's awaits depend on has left JIT'd code
// when they return.
//
// A queued await or membership holds a reference to the awaited token:
// the coroutine may drop its own before the queue is flushed.

typedef enum hal_async_handoff_kind_e {
  HAL_ASYNC_HANDOFF_EMPLACE,     // |object|: the emplacing reference
  HAL_ASYNC_HANDOFF_SET_ERROR,   // |object|: the emplacing reference
  HAL_ASYNC_HANDOFF_AWAIT,       // |object| (a reference), |awaiter|
  HAL_ASYNC_HANDOFF_JOIN_GROUP,  // |object| token (a reference), |group|
  HAL_ASYNC_HANDOFF_EXECUTE,     // |runtime| (retained), |handle|, |resume|
  HAL_ASYNC_HANDOFF_DESTROY,     // |object| dropped unresolved: no reference
} hal_async_handoff_kind_t;

typedef struct hal_async_handoff_t {
  hal_async_handoff_kind_t kind;
  hal_async_object_t* object;
  hal_async_awaiter_t* awaiter;
  hal_async_group_t* group;
  hal_async_runtime_t* runtime;
  hal_async_coro_handle_t handle;
  hal_async_coro_resume_t resume;
} hal_async_handoff_t;

// This thread's queue, oldest first: [next, count) are pending. Flushes
// may nest (a coroutine resumed by a flush blocks in an await, which
// flushes): they share |next|, so each handoff takes effect once.
static _Thread_local hal_async_handoff_t* hal_async_handoffs;
static _Thread_local size_t hal_async_handoff_capacity;
static _Thread_local size_t hal_async_handoff_count;
static _Thread_local size_t hal_async_handoff_next;

static atomic_int_fast64_t hal_async_live_objects;

// Idle tokens whose semaphore reached their target without failing: no
// timepoint can be pending on them, so the next user only moves the target
// up by one. Saves a semaphore create/destroy per async.execute. Off under
// ASan, so that use of a dropped token is reported as use-after-free.
#if defined(__SANITIZE_ADDRESS__)
#define HAL_ASYNC_TOKEN_CACHE_CAP 0
#else
#define HAL_ASYNC_TOKEN_CACHE_CAP 4096
#endif
static pthread_mutex_t hal_async_token_cache_mutex = PTHREAD_MUTEX_INITIALIZER;
static hal_async_object_t* hal_async_token_cache;  // guarded; cache_next
static size_t hal_async_token_cache_count;         // guarded

void hal_async_token_cache_fork_child(void) {
  // Another of the parent's threads may have held the lock at the fork,
  // the list half changed: the child starts with an empty cache (the
  // parent's idle tokens stay the parent's memory).
  pthread_mutex_init(&hal_async_token_cache_mutex, NULL);
  hal_async_token_cache = NULL;
  hal_async_token_cache_count = 0;
}

_Thread_local int hal_async_inline_resume_depth;
_Thread_local bool hal_async_deferring;

void hal_async_report_misuse(const char* format, ...) {
  va_list args;
  va_start(args, format);
  fputs("hal-async: ", stderr);
  vfprintf(stderr, format, args);
  fputc('\n', stderr);
  va_end(args);
  fflush(stderr);
#ifndef NDEBUG
  abort();
#endif
}

static const char* hal_async_kind_name(uint32_t kind) {
  switch (kind) {
    case HAL_ASYNC_KIND_TOKEN:
      return "token";
    case HAL_ASYNC_KIND_VALUE:
      return "value";
    case HAL_ASYNC_KIND_GROUP:
      return "group";
    case HAL_ASYNC_KIND_DEAD:
      return "destroyed object";
    default:
      return "unknown object";
  }
}

// Fatal: the ABI has no way to return an error from create.
static void hal_async_die(const char* what, hal_status_t status) {
  fprintf(stderr, "hal-async: %s failed: ", what);
  hal_status_fprint(stderr, status);
  hal_status_free(status);
  abort();
}

// |object| as a live object of |kind| (0: any kind), or NULL after reporting.
static hal_async_object_t* hal_async_object_cast(void* pointer, uint32_t kind,
                                                 const char* entry_point) {
  hal_async_object_t* object = (hal_async_object_t*)pointer;
  if (HAL_UNLIKELY(!object)) {
    hal_async_report_misuse("%s: NULL object", entry_point);
    return NULL;
  }
  bool live = object->kind == HAL_ASYNC_KIND_TOKEN ||
              object->kind == HAL_ASYNC_KIND_VALUE ||
              object->kind == HAL_ASYNC_KIND_GROUP;
  if (HAL_UNLIKELY(!live || (kind && object->kind != kind))) {
    hal_async_report_misuse("%s: %p is a %s, expected a %s", entry_point,
                            pointer, hal_async_kind_name(object->kind),
                            kind ? hal_async_kind_name(kind) : "live object");
    return NULL;
  }
  return object;
}

static void* hal_async_object_allocate(size_t size, uint32_t kind,
                                       int64_t ref_count,
                                       uint64_t initial_value) {
  hal_async_object_t* object = NULL;
  hal_status_t status =
      hal_allocator_malloc(hal_allocator_system(), size, (void**)&object);
  if (status)
    hal_async_die("allocating an async object", status);
  status = hal_semaphore_create_host(hal_allocator_system(), initial_value,
                                     &object->semaphore);
  if (status)
    hal_async_die("creating an async object's semaphore", status);
  atomic_init(&object->ref_count, ref_count);
  atomic_init(&object->resolution, HAL_ASYNC_UNRESOLVED);
  object->kind = kind;
  object->target = 1;
  atomic_fetch_add_explicit(&hal_async_live_objects, 1, memory_order_relaxed);
  return object;
}

static hal_async_object_t* hal_async_token_create(void) {
  pthread_mutex_lock(&hal_async_token_cache_mutex);
  hal_async_object_t* token = hal_async_token_cache;
  if (token) {
    hal_async_token_cache = token->cache_next;
    --hal_async_token_cache_count;
  }
  pthread_mutex_unlock(&hal_async_token_cache_mutex);
  if (!token) {
    return hal_async_object_allocate(sizeof(hal_async_object_t),
                                     HAL_ASYNC_KIND_TOKEN, 2, 0);
  }
  token->cache_next = NULL;
  atomic_store_explicit(&token->resolution, HAL_ASYNC_UNRESOLVED,
                        memory_order_relaxed);
  token->kind = HAL_ASYNC_KIND_TOKEN;
  ++token->target;
  atomic_store_explicit(&token->ref_count, 2, memory_order_relaxed);
  atomic_fetch_add_explicit(&hal_async_live_objects, 1, memory_order_relaxed);
  return token;
}

// Keeps |object| for reuse when it is a token that reached its target.
static bool hal_async_token_recycle(hal_async_object_t* object) {
#if HAL_ASYNC_TOKEN_CACHE_CAP == 0
  return false;
#else
  if (object->kind != HAL_ASYNC_KIND_TOKEN ||
      object->target >= HAL_SEMAPHORE_MAX_VALUE) {
    return false;
  }
  uint64_t value = 0;
  hal_status_t status = hal_semaphore_query(object->semaphore, &value);
  if (status || value != object->target) {
    hal_status_free(status);
    return false;  // failed, or dropped without being resolved
  }
  object->kind = HAL_ASYNC_KIND_DEAD;
  atomic_fetch_sub_explicit(&hal_async_live_objects, 1, memory_order_relaxed);
  pthread_mutex_lock(&hal_async_token_cache_mutex);
  bool kept = hal_async_token_cache_count < HAL_ASYNC_TOKEN_CACHE_CAP;
  if (kept) {
    object->cache_next = hal_async_token_cache;
    hal_async_token_cache = object;
    ++hal_async_token_cache_count;
  }
  pthread_mutex_unlock(&hal_async_token_cache_mutex);
  if (!kept) {
    atomic_fetch_add_explicit(&hal_async_live_objects, 1, memory_order_relaxed);
  }
  return kept;
#endif
}

static void hal_async_object_destroy(hal_async_object_t* object) {
  if (hal_async_token_recycle(object))
    return;
  hal_semaphore_release(object->semaphore);
  object->kind = HAL_ASYNC_KIND_DEAD;
  hal_allocator_free(hal_allocator_system(), object);
  atomic_fetch_sub_explicit(&hal_async_live_objects, 1, memory_order_relaxed);
}

static void hal_async_object_add_ref(hal_async_object_t* object,
                                     int64_t count) {
  atomic_fetch_add_explicit(&object->ref_count, count, memory_order_relaxed);
}

static void hal_async_handoff_push(const hal_async_handoff_t* handoff);

static void hal_async_object_drop_ref(hal_async_object_t* object,
                                      int64_t count) {
  // acq_rel on the counter itself: the thread that frees sees every write
  // made by the threads that dropped before it.
  int64_t previous = atomic_fetch_sub_explicit(&object->ref_count, count,
                                               memory_order_acq_rel);
  if (HAL_UNLIKELY(previous < count)) {
    // The count stays negative: in NDEBUG builds the object is leaked
    // rather than freed twice.
    hal_async_report_misuse(
        "dropping %lld reference(s) from %s %p that holds %lld",
        (long long)count, hal_async_kind_name(object->kind), (void*)object,
        (long long)previous);
    return;
  }
  if (previous == count) {
    // Unresolved, its end fails its groups: a handoff inside a pool task
    // (the invariant above). Resolved, it is no news to anyone.
    if (hal_async_deferring && object->kind != HAL_ASYNC_KIND_GROUP &&
        atomic_load_explicit(&object->resolution, memory_order_relaxed) ==
            HAL_ASYNC_UNRESOLVED) {
      hal_async_handoff_t handoff = {
          .kind = HAL_ASYNC_HANDOFF_DESTROY,
          .object = object,
      };
      hal_async_handoff_push(&handoff);
      return;
    }
    hal_async_object_destroy(object);
  }
}

// True once |object| is ready or in error.
static bool hal_async_object_is_resolved(hal_async_object_t* object) {
  uint64_t value = 0;
  hal_status_t status = hal_semaphore_query(object->semaphore, &value);
  if (status) {
    hal_status_free(status);
    return true;
  }
  return value >= object->target;
}

static bool hal_async_object_is_error(hal_async_object_t* object) {
  uint64_t value = 0;
  hal_status_t status = hal_semaphore_query(object->semaphore, &value);
  if (!status)
    return false;
  hal_status_free(status);
  return true;
}

// Publishes a resolution: signal or fail the semaphore, which runs the
// awaiters (after the semaphore lock is dropped), then drop the reference
// the task held for this purpose. The awaiters run while that reference
// still keeps the object alive, so an awaiter dropping the last other
// reference never frees it under our feet (the K12 bug of the original
// runtime).
static void hal_async_object_publish(hal_async_object_t* object, bool error) {
  if (error) {
    hal_semaphore_fail(
        object->semaphore,
        hal_make_status(HAL_STATUS_ABORTED, "async %s set to the error state",
                        hal_async_kind_name(object->kind)));
  } else {
    hal_status_t status =
        hal_semaphore_signal(object->semaphore, object->target);
    if (HAL_UNLIKELY(status)) {
      // Only a concurrent second resolution gets here.
      hal_status_free(status);
      hal_async_report_misuse("%s %p resolved twice",
                              hal_async_kind_name(object->kind), (void*)object);
      return;
    }
  }
  hal_async_object_drop_ref(object, 1);
}

static void hal_async_handoff_push(const hal_async_handoff_t* handoff) {
  if (hal_async_handoff_count == hal_async_handoff_capacity) {
    size_t capacity =
        hal_async_handoff_capacity ? 2 * hal_async_handoff_capacity : 64;
    void* handoffs = hal_async_handoffs;
    hal_status_t status =
        handoffs ? hal_allocator_realloc(hal_allocator_system(),
                                         capacity * sizeof(*handoff), &handoffs)
                 : hal_allocator_malloc_array(hal_allocator_system(), capacity,
                                              sizeof(*handoff), &handoffs);
    if (status)
      hal_async_die("growing the handoff queue", status);
    hal_async_handoffs = (hal_async_handoff_t*)handoffs;
    hal_async_handoff_capacity = capacity;
  }
  hal_async_handoffs[hal_async_handoff_count++] = *handoff;
}

void hal_async_release_thread_handoffs(void) {
  hal_allocator_free(hal_allocator_system(), hal_async_handoffs);
  hal_async_handoffs = NULL;
  hal_async_handoff_capacity = 0;
  hal_async_handoff_count = 0;
  hal_async_handoff_next = 0;
}

void hal_async_defer_execute(hal_async_runtime_t* runtime,
                             hal_async_coro_handle_t handle,
                             hal_async_coro_resume_t resume) {
  hal_async_runtime_retain(runtime);
  hal_async_handoff_t handoff = {
      .kind = HAL_ASYNC_HANDOFF_EXECUTE,
      .runtime = runtime,
      .handle = handle,
      .resume = resume,
  };
  hal_async_handoff_push(&handoff);
}

// Emplace or set-error; queued inside a pool task (the invariant above).
static void hal_async_object_resolve(void* pointer, uint32_t kind, bool error,
                                     const char* entry_point) {
  hal_async_object_t* object =
      hal_async_object_cast(pointer, kind, entry_point);
  if (!object)
    return;
  int claimed = HAL_ASYNC_UNRESOLVED;
  if (HAL_UNLIKELY(!atomic_compare_exchange_strong(
          &object->resolution, &claimed, HAL_ASYNC_RESOLVED_BY_PRODUCER))) {
    if (claimed == HAL_ASYNC_FAILED_BY_AWAIT &&
        atomic_compare_exchange_strong(
            &object->resolution, &claimed,
            HAL_ASYNC_FAILED_BY_AWAIT_THEN_RESOLVED)) {
      // A cut await put it in error and said so: this resolution came too
      // late to count, and its reference is all there is left to drop.
      hal_async_object_drop_ref(object, 1);
      return;
    }
    hal_async_report_misuse(
        "%s: %s %p is already %s", entry_point, hal_async_kind_name(kind),
        pointer, hal_async_object_is_error(object) ? "in error" : "ready");
    return;
  }
  if (!hal_async_deferring) {
    hal_async_object_publish(object, error);
    return;
  }
  hal_async_handoff_t handoff = {
      .kind = error ? HAL_ASYNC_HANDOFF_SET_ERROR : HAL_ASYNC_HANDOFF_EMPLACE,
      .object = object,
  };
  hal_async_handoff_push(&handoff);
}

static bool hal_async_object_is_resolved(hal_async_object_t* object);

// A blocking await of |object| whose wait failed with |status| (ownership
// taken), not by the object's failure: puts |object| in error, says so on
// stderr, and returns true; or returns false when its producer (or another
// cut await) has already claimed it, whose resolution is on its way. A group
// counts the cut as a member in error (its is-error); it still becomes ready
// when its members are.
static bool hal_async_object_fail_by_await(hal_async_object_t* object,
                                           hal_status_t status,
                                           const char* entry_point) {
  if (object->kind != HAL_ASYNC_KIND_GROUP) {
    int claimed = HAL_ASYNC_UNRESOLVED;
    if (!atomic_compare_exchange_strong(&object->resolution, &claimed,
                                        HAL_ASYNC_FAILED_BY_AWAIT)) {
      // Its producer's resolution, or another await's failure, is on its
      // way: the next wait returns with it.
      hal_status_free(status);
      return false;
    }
  }
  char text[1024];
  hal_status_format(status, text, sizeof(text));
  fprintf(stderr, "hal-async: %s: %s; %s %p is now in error\n", entry_point,
          text, hal_async_kind_name(object->kind), (void*)object);
  fflush(stderr);
  if (object->kind == HAL_ASYNC_KIND_GROUP) {
    atomic_fetch_add(&((hal_async_group_t*)object)->errors, 1);
    hal_status_free(status);
  } else {
    hal_semaphore_fail(object->semaphore, status);
  }
  return true;
}

static inline void hal_async_cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

// Before a blocking await of |group| sleeps until the group is ready:
// sleeps until one member is left (HAL_ASYNC_GROUP_LAST), then polls for
// that one for up to HAL_ASYNC_GROUP_LAST_SPIN_NS. A group awaited this
// way is typically the blocks of a parallel loop, whose last block runs
// for about as long as a sleeping thread takes to wake: woken then, the
// awaiter is running when the block ends instead of starting to wake. Not
// where polling cannot help or is unwanted: one online CPU, or host waits
// told not to spin (HAL_SYNC_SPIN_NS=0, hal_semaphore_set_spin_ns(0)).
// The await's own wait follows and decides; a failure of the first wait
// (HAL_SYNC_MAX_WAIT_MS cut it) is returned for the await to take as its
// wait's, so that the bound cuts the await once, not once per wait.
static hal_status_t hal_async_group_await_last(hal_async_group_t* group) {
  static atomic_int online_cpus;  // 0: not read yet
  int cpus = atomic_load_explicit(&online_cpus, memory_order_relaxed);
  if (cpus == 0) {
    cpus = sysconf(_SC_NPROCESSORS_ONLN) > 1 ? 2 : 1;
    atomic_store_explicit(&online_cpus, cpus, memory_order_relaxed);
  }
  if (cpus < 2 || hal_semaphore_spin_ns() == 0)
    return HAL_OK;
  if (atomic_load(&group->pending) > 1) {
    HAL_RETURN_IF_ERROR(hal_semaphore_wait(
        group->base.semaphore, HAL_ASYNC_GROUP_LAST, hal_infinite_timeout()));
  }
  hal_time_t end = hal_time_now() + HAL_ASYNC_GROUP_LAST_SPIN_NS;
  for (;;) {
    // The clock is read every few polls: a poll is one load.
    for (int poll = 0; poll < 16; ++poll) {
      if (atomic_load(&group->pending) <= 0)
        return HAL_OK;
      hal_async_cpu_relax();
    }
    if (hal_time_now() >= end)
      return HAL_OK;
  }
}

static void hal_async_object_await(void* pointer, uint32_t kind,
                                   const char* entry_point) {
  hal_async_object_t* object =
      hal_async_object_cast(pointer, kind, entry_point);
  if (!object)
    return;
  // On a pool thread, the handoffs queued so far take effect before it
  // blocks: what it waits for may depend on them. So may late work queued
  // on this thread behind the late work now blocking; each piece of it run
  // here may queue more handoffs, which take effect before the next. So
  // may the callbacks the sync module deferred on this thread past its
  // nesting bound (a chain through groups nests two callbacks a link):
  // the wait would run them itself, but what they queue here would then
  // be left behind it. Each runs here, and what it queued, in turn.
  for (;;) {
    if (hal_async_deferring)
      hal_async_flush_deferred();
    // The queues are empty except on a thread running late work or deep
    // in callbacks: an ordinary await adds a load of the object's state
    // and one of the thread's deferred callbacks before its wait.
    if (hal_async_has_queued_late_work()) {
      if (hal_async_object_is_resolved(object))
        break;
      hal_async_run_queued_late_task();
      continue;
    }
    if (hal_async_object_is_resolved(object) || !hal_timepoint_run_deferred())
      break;
  }
  hal_status_t early = HAL_OK;
  if (object->kind == HAL_ASYNC_KIND_GROUP)
    early = hal_async_group_await_last((hal_async_group_t*)object);
  for (;;) {
    hal_status_t status =
        early ? early
              : hal_semaphore_wait(object->semaphore, object->target,
                                   hal_infinite_timeout());
    early = HAL_OK;
    // A failure is the object's error state: visible through is-error.
    if (!status || hal_async_object_is_error(object)) {
      hal_status_free(status);
      return;
    }
    // The wait itself failed: HAL_SYNC_MAX_WAIT_MS cut it short (or is
    // malformed). Unless its producer resolved it meanwhile, the object
    // goes in error, so that the await returns as the header says.
    if (hal_async_object_fail_by_await(object, status, entry_point))
      return;
  }
}

//===----------------------------------------------------------------------===//
// Await-and-execute
//===----------------------------------------------------------------------===//

// Resumes the coroutine on this thread (as MLIR's runtime does): nested in
// the call that resolved its object, unless inline resumes have nested too
// deeply here (a chain of awaits resolved by one emplace, or links of one
// that block in awaits, each of which flushes the next); then as late work,
// after the resume it would have nested in. Not on the pool, from a pool
// thread either: every worker may be blocked awaiting the end of the chain.
static void hal_async_resume(hal_async_coro_handle_t handle,
                             hal_async_coro_resume_t resume) {
  if (hal_async_inline_resume_depth < HAL_ASYNC_MAX_INLINE_RESUME_DEPTH) {
    ++hal_async_inline_resume_depth;
    resume(handle);
    --hal_async_inline_resume_depth;
  } else {
    hal_async_run_late(handle, resume);
  }
}

// Timepoint callback: OK (ready), the object's failure, or CANCELLED if the
// object was destroyed while awaited, never resolved (a reference-counting
// bug of the program). On the first two the coroutine resumes and reads
// the outcome through is-error, as the lowering does after each await. On
// the last it is not resumed, as in MLIR's runtime: the object it would
// query is being freed, and it was neither ready nor in error.
static void hal_async_awaiter_ready(void* user_data, uint64_t value,
                                    hal_status_t status) {
  (void)value;
  hal_async_awaiter_t* awaiter = (hal_async_awaiter_t*)user_data;
  hal_async_coro_handle_t handle = awaiter->handle;
  hal_async_coro_resume_t resume = awaiter->resume;
  hal_allocator_free(hal_allocator_system(), awaiter);
  if (HAL_UNLIKELY(status && hal_status_code(status) == HAL_STATUS_CANCELLED)) {
    fprintf(stderr,
            "hal-async: an object awaited by coroutine %p lost its last "
            "reference before it was ready or in error; the coroutine is "
            "never resumed\n",
            handle);
    fflush(stderr);
  } else {
    hal_async_resume(handle, resume);
  }
}

static void hal_async_awaiter_register(hal_async_object_t* object,
                                       hal_async_awaiter_t* awaiter) {
  // Registration and the value check happen under the semaphore's lock
  // (T3): an emplace racing this call either finds the timepoint or made
  // the callback run here, before add_callback returns.
  hal_status_t status =
      hal_semaphore_add_callback(object->semaphore, object->target,
                                 hal_async_awaiter_ready, awaiter, NULL);
  if (status)
    hal_async_die("registering an awaiter", status);
}

static void hal_async_object_await_and_execute(void* pointer, uint32_t kind,
                                               hal_async_coro_handle_t handle,
                                               hal_async_coro_resume_t resume,
                                               const char* entry_point) {
  hal_async_object_t* object =
      hal_async_object_cast(pointer, kind, entry_point);
  if (!object)
    return;
  // Fast path, as in MLIR's runtime: already resolved, resume here, under
  // the same bound as every inline resume (a coroutine that awaits a
  // resolved object again from its resume, a million times, must not
  // nest a million frames).
  if (hal_async_object_is_resolved(object)) {
    hal_async_resume(handle, resume);
    return;
  }
  hal_async_awaiter_t* awaiter = NULL;
  hal_status_t status = hal_allocator_malloc(
      hal_allocator_system(), sizeof(*awaiter), (void**)&awaiter);
  if (status)
    hal_async_die("allocating an awaiter", status);
  awaiter->handle = handle;
  awaiter->resume = resume;
  if (hal_async_deferring) {
    // Registered once this thread has left the coroutine's code: until
    // then no other thread may resume it (the invariant above).
    hal_async_object_add_ref(object, 1);
    hal_async_handoff_t handoff = {
        .kind = HAL_ASYNC_HANDOFF_AWAIT,
        .object = object,
        .awaiter = awaiter,
    };
    hal_async_handoff_push(&handoff);
    return;
  }
  hal_async_awaiter_register(object, awaiter);
}

//===----------------------------------------------------------------------===//
// Groups
//===----------------------------------------------------------------------===//

// Timepoint callback of a member token: counts it (and its error), signals
// the group when it was the last one, then drops the membership's group
// reference, which may be the group's last.
static void hal_async_group_member_ready(void* user_data, uint64_t value,
                                         hal_status_t status) {
  hal_async_group_t* group = (hal_async_group_t*)user_data;
  if (status)
    atomic_fetch_add(&group->errors, 1);
  // The error count is written before the count-down that publishes it:
  // whoever sees the group ready sees every member's error.
  int_fast64_t left = atomic_fetch_sub(&group->pending, 1) - 1;
  if (left == 0) {
    hal_status_t signal_status =
        hal_semaphore_signal(group->base.semaphore, HAL_ASYNC_GROUP_READY);
    if (signal_status)
      hal_async_die("signaling a group", signal_status);
  } else if (left == 1) {
    // The last member's callback may run first on another thread and have
    // made the group ready: then this payload is below it, and refused.
    hal_status_t signal_status =
        hal_semaphore_signal(group->base.semaphore, HAL_ASYNC_GROUP_LAST);
    if (hal_status_is(signal_status, HAL_STATUS_INVALID_ARGUMENT)) {
      hal_status_free(signal_status);
    } else if (signal_status) {
      hal_async_die("signaling a group's last member", signal_status);
    }
  }
  hal_async_object_drop_ref(&group->base, 1);
}

static void hal_async_group_join(hal_async_object_t* token,
                                 hal_async_group_t* group) {
  hal_status_t status =
      hal_semaphore_add_callback(token->semaphore, token->target,
                                 hal_async_group_member_ready, group, NULL);
  if (status)
    hal_async_die("adding a token to a group", status);
}

//===----------------------------------------------------------------------===//
// Flushing handoffs
//===----------------------------------------------------------------------===//

void hal_async_flush_deferred(void) {
  // Coroutines resumed here (awaiters of what is published) queue their
  // own handoffs, which this same loop then makes take effect, in order.
  while (hal_async_handoff_next < hal_async_handoff_count) {
    // A copy: the queue may grow (and move) while this one takes effect.
    hal_async_handoff_t handoff = hal_async_handoffs[hal_async_handoff_next++];
    switch (handoff.kind) {
      case HAL_ASYNC_HANDOFF_EMPLACE:
      case HAL_ASYNC_HANDOFF_SET_ERROR:
        hal_async_object_publish(handoff.object,
                                 handoff.kind == HAL_ASYNC_HANDOFF_SET_ERROR);
        break;
      case HAL_ASYNC_HANDOFF_AWAIT:
        hal_async_awaiter_register(handoff.object, handoff.awaiter);
        hal_async_object_drop_ref(handoff.object, 1);
        break;
      case HAL_ASYNC_HANDOFF_JOIN_GROUP:
        hal_async_group_join(handoff.object, handoff.group);
        hal_async_object_drop_ref(handoff.object, 1);
        break;
      case HAL_ASYNC_HANDOFF_EXECUTE:
        hal_async_runtime_submit(handoff.runtime, handoff.handle,
                                 handoff.resume);
        hal_async_runtime_release(handoff.runtime);
        break;
      case HAL_ASYNC_HANDOFF_DESTROY:
        hal_async_object_destroy(handoff.object);
        break;
    }
  }
  hal_async_handoff_count = 0;
  hal_async_handoff_next = 0;
}

//===----------------------------------------------------------------------===//
// The ABI
//===----------------------------------------------------------------------===//

HAL_ASYNC_API void mlirAsyncRuntimeAddRef(hal_async_object_ptr_t pointer,
                                          int64_t count) {
  hal_async_object_t* object =
      hal_async_object_cast(pointer, 0, "mlirAsyncRuntimeAddRef");
  if (!object)
    return;
  if (HAL_UNLIKELY(count <= 0)) {
    hal_async_report_misuse("mlirAsyncRuntimeAddRef: count %lld",
                            (long long)count);
    return;
  }
  hal_async_object_add_ref(object, count);
}

HAL_ASYNC_API void mlirAsyncRuntimeDropRef(hal_async_object_ptr_t pointer,
                                           int64_t count) {
  hal_async_object_t* object =
      hal_async_object_cast(pointer, 0, "mlirAsyncRuntimeDropRef");
  if (!object)
    return;
  if (HAL_UNLIKELY(count <= 0)) {
    hal_async_report_misuse("mlirAsyncRuntimeDropRef: count %lld",
                            (long long)count);
    return;
  }
  hal_async_object_drop_ref(object, count);
}

HAL_ASYNC_API hal_async_object_ptr_t mlirAsyncRuntimeCreateToken(void) {
  return hal_async_token_create();
}

HAL_ASYNC_API hal_async_object_ptr_t mlirAsyncRuntimeCreateValue(int64_t size) {
  if (HAL_UNLIKELY(size < 0)) {
    hal_async_report_misuse("mlirAsyncRuntimeCreateValue: size %lld",
                            (long long)size);
    size = 0;
  }
  hal_async_value_t* value = hal_async_object_allocate(
      sizeof(hal_async_value_t) + (size_t)size + HAL_ASYNC_VALUE_ALIGNMENT - 1,
      HAL_ASYNC_KIND_VALUE, 2, 0);
  value->size = size;
  uintptr_t bytes = (uintptr_t)value->bytes;
  value->storage =
      (unsigned char*)((bytes + HAL_ASYNC_VALUE_ALIGNMENT - 1) &
                       ~(uintptr_t)(HAL_ASYNC_VALUE_ALIGNMENT - 1));
  return value;
}

HAL_ASYNC_API hal_async_object_ptr_t mlirAsyncRuntimeCreateGroup(int64_t size) {
  if (HAL_UNLIKELY(size < 0)) {
    hal_async_report_misuse("mlirAsyncRuntimeCreateGroup: size %lld",
                            (long long)size);
    size = 0;
  }
  // An empty group is ready from the start.
  hal_async_group_t* group = hal_async_object_allocate(
      sizeof(hal_async_group_t), HAL_ASYNC_KIND_GROUP, 1,
      size == 0   ? HAL_ASYNC_GROUP_READY
      : size == 1 ? HAL_ASYNC_GROUP_LAST
                  : 0);
  group->base.target = HAL_ASYNC_GROUP_READY;
  group->size = size;
  atomic_init(&group->pending, size);
  atomic_init(&group->errors, 0);
  atomic_init(&group->next_rank, 0);
  return group;
}

HAL_ASYNC_API void mlirAsyncRuntimeEmplaceToken(hal_async_object_ptr_t token) {
  hal_async_object_resolve(token, HAL_ASYNC_KIND_TOKEN, false,
                           "mlirAsyncRuntimeEmplaceToken");
}

HAL_ASYNC_API void mlirAsyncRuntimeEmplaceValue(hal_async_object_ptr_t value) {
  hal_async_object_resolve(value, HAL_ASYNC_KIND_VALUE, false,
                           "mlirAsyncRuntimeEmplaceValue");
}

HAL_ASYNC_API void mlirAsyncRuntimeSetTokenError(hal_async_object_ptr_t token) {
  hal_async_object_resolve(token, HAL_ASYNC_KIND_TOKEN, true,
                           "mlirAsyncRuntimeSetTokenError");
}

HAL_ASYNC_API void mlirAsyncRuntimeSetValueError(hal_async_object_ptr_t value) {
  hal_async_object_resolve(value, HAL_ASYNC_KIND_VALUE, true,
                           "mlirAsyncRuntimeSetValueError");
}

HAL_ASYNC_API bool mlirAsyncRuntimeIsTokenError(hal_async_object_ptr_t token) {
  hal_async_object_t* object = hal_async_object_cast(
      token, HAL_ASYNC_KIND_TOKEN, "mlirAsyncRuntimeIsTokenError");
  return object ? hal_async_object_is_error(object) : true;
}

HAL_ASYNC_API bool mlirAsyncRuntimeIsValueError(hal_async_object_ptr_t value) {
  hal_async_object_t* object = hal_async_object_cast(
      value, HAL_ASYNC_KIND_VALUE, "mlirAsyncRuntimeIsValueError");
  return object ? hal_async_object_is_error(object) : true;
}

HAL_ASYNC_API bool mlirAsyncRuntimeIsGroupError(hal_async_object_ptr_t group) {
  hal_async_object_t* object = hal_async_object_cast(
      group, HAL_ASYNC_KIND_GROUP, "mlirAsyncRuntimeIsGroupError");
  if (!object)
    return true;
  return atomic_load(&((hal_async_group_t*)object)->errors) > 0;
}

HAL_ASYNC_API void mlirAsyncRuntimeAwaitToken(hal_async_object_ptr_t token) {
  hal_async_object_await(token, HAL_ASYNC_KIND_TOKEN,
                         "mlirAsyncRuntimeAwaitToken");
}

HAL_ASYNC_API void mlirAsyncRuntimeAwaitValue(hal_async_object_ptr_t value) {
  hal_async_object_await(value, HAL_ASYNC_KIND_VALUE,
                         "mlirAsyncRuntimeAwaitValue");
}

HAL_ASYNC_API void mlirAsyncRuntimeAwaitAllInGroup(
    hal_async_object_ptr_t group) {
  hal_async_object_await(group, HAL_ASYNC_KIND_GROUP,
                         "mlirAsyncRuntimeAwaitAllInGroup");
}

HAL_ASYNC_API void* mlirAsyncRuntimeGetValueStorage(
    hal_async_object_ptr_t pointer) {
  hal_async_object_t* object = hal_async_object_cast(
      pointer, HAL_ASYNC_KIND_VALUE, "mlirAsyncRuntimeGetValueStorage");
  return object ? ((hal_async_value_t*)object)->storage : NULL;
}

HAL_ASYNC_API int64_t
mlirAsyncRuntimeAddTokenToGroup(hal_async_object_ptr_t token_pointer,
                                hal_async_object_ptr_t group_pointer) {
  hal_async_object_t* token = hal_async_object_cast(
      token_pointer, HAL_ASYNC_KIND_TOKEN, "mlirAsyncRuntimeAddTokenToGroup");
  hal_async_object_t* object = hal_async_object_cast(
      group_pointer, HAL_ASYNC_KIND_GROUP, "mlirAsyncRuntimeAddTokenToGroup");
  if (!token || !object)
    return -1;
  hal_async_group_t* group = (hal_async_group_t*)object;
  int64_t rank = atomic_fetch_add(&group->next_rank, 1);
  if (HAL_UNLIKELY(rank >= group->size)) {
    // The extra member is still counted for errors; it never re-signals.
    hal_async_report_misuse(
        "mlirAsyncRuntimeAddTokenToGroup: group %p of size %lld got token "
        "#%lld",
        group_pointer, (long long)group->size, (long long)rank + 1);
  }
  // The membership keeps the group alive until the token is ready; the
  // callback may run right here when the token already is.
  hal_async_object_add_ref(&group->base, 1);
  if (hal_async_deferring) {
    // Joined once this thread has left the coroutine's code (the invariant
    // above): the group cannot complete while it is still there.
    hal_async_object_add_ref(token, 1);
    hal_async_handoff_t handoff = {
        .kind = HAL_ASYNC_HANDOFF_JOIN_GROUP,
        .object = token,
        .group = group,
    };
    hal_async_handoff_push(&handoff);
    return rank;
  }
  hal_async_group_join(token, group);
  return rank;
}

HAL_ASYNC_API void mlirAsyncRuntimeAwaitTokenAndExecute(
    hal_async_object_ptr_t token, hal_async_coro_handle_t handle,
    hal_async_coro_resume_t resume) {
  hal_async_object_await_and_execute(token, HAL_ASYNC_KIND_TOKEN, handle,
                                     resume,
                                     "mlirAsyncRuntimeAwaitTokenAndExecute");
}

HAL_ASYNC_API void mlirAsyncRuntimeAwaitValueAndExecute(
    hal_async_object_ptr_t value, hal_async_coro_handle_t handle,
    hal_async_coro_resume_t resume) {
  hal_async_object_await_and_execute(value, HAL_ASYNC_KIND_VALUE, handle,
                                     resume,
                                     "mlirAsyncRuntimeAwaitValueAndExecute");
}

HAL_ASYNC_API void mlirAsyncRuntimeAwaitAllInGroupAndExecute(
    hal_async_object_ptr_t group, hal_async_coro_handle_t handle,
    hal_async_coro_resume_t resume) {
  hal_async_object_await_and_execute(
      group, HAL_ASYNC_KIND_GROUP, handle, resume,
      "mlirAsyncRuntimeAwaitAllInGroupAndExecute");
}

HAL_ASYNC_API int64_t hal_async_live_object_count(void) {
  return atomic_load_explicit(&hal_async_live_objects, memory_order_relaxed);
}
