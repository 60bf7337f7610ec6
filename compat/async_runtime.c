// Copyright 2026 The HAL Authors.
//
// Runtime instances of libhal-async-runtime: each owns a thread pool that
// runs the coroutines of mlirAsyncRuntimeExecute.
//
// The pool's queue is a FIFO under |mutex|. Its blocking is a timeline
// semaphore, |work|, whose payload counts the tasks published so far: a
// worker takes ticket t (1, 2, ...) and waits for work >= t, so each
// published task wakes exactly the one worker holding its ticket and no
// worker sleeps on anything but the sync module's waits. Counting argument:
// every worker that pops holds a distinct ticket <= the published count, so
// the FIFO is never empty when a woken worker pops (until shutdown, which
// signals the largest value to wake everyone).
//
// Unload (hal_async_runtime_destroy): |outstanding| counts tasks queued or
// running. The destroyer sets |draining| and, if tasks remain, waits on the
// |drained| semaphore, which the task that brings |outstanding| to zero
// signals. Then |stopping| is set under the mutex (later submissions run on
// the submitting thread), |work| jumps to its maximum, workers drain what is
// left and exit, and they are joined. The memory lives on while handoffs
// queued on pool threads or callers of hal_async_runtime_acquire_current
// still reference the runtime. Awaiters (coroutines suspended on objects)
// hold none: they resume on the thread that resolves their object.

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "async_internal.h"
#include "hal/env.h"

typedef struct hal_async_task_t {
  struct hal_async_task_t* next;
  hal_async_coro_handle_t handle;
  hal_async_coro_resume_t resume;
} hal_async_task_t;

// Idle task nodes kept for reuse: no allocation per task once warm.
#define HAL_ASYNC_TASK_FREE_LIST_CAP 4096

struct hal_async_runtime_t {
  // Memory lifetime: the owner's reference plus one per queued execute
  // handoff and per caller of hal_async_runtime_acquire_current.
  atomic_intptr_t ref_count;
  hal_allocator_t allocator;
  int32_t worker_count;
  int32_t started_count;
  pthread_t* threads;

  hal_semaphore_t* work;     // payload: tasks published; max when stopping
  hal_semaphore_t* drained;  // 1: nothing queued or running while draining
  atomic_uint_fast64_t next_ticket;
  atomic_int_fast64_t outstanding;  // queued + running
  atomic_bool draining;
  atomic_bool drained_signaled;

  pthread_mutex_t mutex;
  // Guarded by |mutex|:
  hal_async_task_t* head;
  hal_async_task_t* tail;
  hal_async_task_t* free_list;
  size_t free_count;
  uint64_t published;
  bool stopping;

  // hal_async_fork_generation when made: another value means this process
  // is a fork() child of the one whose pool this is.
  unsigned fork_generation;
};

// The runtime whose pool runs this thread; NULL on other threads.
static _Thread_local hal_async_runtime_t* hal_async_thread_runtime;

// The default runtime: created on first use, destroyed at unload.
static pthread_mutex_t hal_async_default_mutex = PTHREAD_MUTEX_INITIALIZER;
static hal_async_runtime_t* hal_async_default_runtime;  // guarded

// Raised in a fork() child. The child has none of the pool threads of the
// runtimes made before the fork: they, and the tasks they queued or ran,
// stay the parent's. So the child forgets the default runtime (its first
// use there makes one of its own), a destroy there of a runtime made
// before frees nothing and waits for nothing, and the unload at the
// child's exit waits for no thread of the parent's. Its count of live
// objects holds the parent's copies: the unload does not report it.
static atomic_uint hal_async_fork_generation;

static void hal_async_fork_child(void) {
  // The only thread of the child, before it runs anything else.
  atomic_fetch_add_explicit(&hal_async_fork_generation, 1,
                            memory_order_relaxed);
  hal_async_thread_runtime = NULL;
  hal_async_default_runtime = NULL;
  // It may have been held by another of the parent's threads at the fork.
  pthread_mutex_init(&hal_async_default_mutex, NULL);
  hal_async_token_cache_fork_child();
}

static bool hal_async_runtime_is_the_parents(
    const hal_async_runtime_t* runtime) {
  return runtime->fork_generation !=
         atomic_load_explicit(&hal_async_fork_generation, memory_order_relaxed);
}

void hal_async_runtime_retain(hal_async_runtime_t* runtime) {
  atomic_fetch_add_explicit(&runtime->ref_count, 1, memory_order_relaxed);
}

static void hal_async_runtime_free(hal_async_runtime_t* runtime) {
  hal_async_task_t* task = runtime->free_list;
  while (task) {
    hal_async_task_t* next = task->next;
    hal_allocator_free(runtime->allocator, task);
    task = next;
  }
  hal_semaphore_release(runtime->work);
  hal_semaphore_release(runtime->drained);
  pthread_mutex_destroy(&runtime->mutex);
  hal_allocator_free(runtime->allocator, runtime->threads);
  hal_allocator_free(runtime->allocator, runtime);
}

void hal_async_runtime_release(hal_async_runtime_t* runtime) {
  if (atomic_fetch_sub_explicit(&runtime->ref_count, 1, memory_order_acq_rel) ==
      1) {
    hal_async_runtime_free(runtime);
  }
}

// Called after a pool task returned.
static void hal_async_runtime_task_finished(hal_async_runtime_t* runtime) {
  // seq_cst pairs with the destroyer's store of |draining| and load of
  // |outstanding|: at least one of the two sees the other.
  if (atomic_fetch_sub(&runtime->outstanding, 1) == 1 &&
      atomic_load(&runtime->draining) &&
      !atomic_exchange(&runtime->drained_signaled, true)) {
    hal_status_t status = hal_semaphore_signal(runtime->drained, 1);
    if (status) {
      hal_status_fprint(stderr, status);
      hal_status_free(status);
      abort();
    }
  }
}

static void* hal_async_worker_main(void* arg) {
  hal_async_runtime_t* runtime = (hal_async_runtime_t*)arg;
  hal_async_thread_runtime = runtime;
  for (;;) {
    uint64_t ticket = atomic_fetch_add(&runtime->next_ticket, 1) + 1;
    if (ticket > HAL_SEMAPHORE_MAX_VALUE)
      ticket = HAL_SEMAPHORE_MAX_VALUE;
    hal_status_t status =
        hal_semaphore_wait(runtime->work, ticket, hal_infinite_timeout());
    while (hal_status_is(status, HAL_STATUS_DEADLINE_EXCEEDED)) {
      // HAL_SYNC_MAX_WAIT_MS bounds waits that may hang; an idle worker
      // waits for work that may never come, and that is no hang.
      hal_status_free(status);
      status =
          hal_semaphore_wait(runtime->work, ticket, hal_infinite_timeout());
    }
    if (status) {
      // |work| is never failed: a malformed HAL_SYNC_MAX_WAIT_MS set after
      // the runtime's creation checked it, or a bug.
      hal_status_fprint(stderr, status);
      hal_status_free(status);
      abort();
    }
    pthread_mutex_lock(&runtime->mutex);
    hal_async_task_t* task = runtime->head;
    if (!task) {
      // Only after |stopping|: the counting argument at the top.
      pthread_mutex_unlock(&runtime->mutex);
      break;
    }
    runtime->head = task->next;
    if (!runtime->head)
      runtime->tail = NULL;
    hal_async_coro_handle_t handle = task->handle;
    hal_async_coro_resume_t resume = task->resume;
    if (runtime->free_count < HAL_ASYNC_TASK_FREE_LIST_CAP) {
      task->next = runtime->free_list;
      runtime->free_list = task;
      ++runtime->free_count;
      task = NULL;
    }
    pthread_mutex_unlock(&runtime->mutex);
    hal_allocator_free(runtime->allocator, task);
    hal_async_deferring = true;
    resume(handle);
    // Back in our code, out of the task's JIT'd code: only now may another
    // thread run or see anything the task started or resolved (the
    // handoff invariant in async_object.c). Its submissions are counted in
    // |outstanding| before the task itself stops being counted.
    hal_async_flush_deferred();
    hal_async_deferring = false;
    hal_async_runtime_task_finished(runtime);
  }
  hal_async_release_thread_handoffs();
  return NULL;
}

// Late work: submitted to a runtime already destroyed, it runs on the
// submitting thread rather than being lost; so do the links of an await
// chain past the inline-resume bound. Late work can make more (a chain of
// coroutines suspended on tokens, each resume emplacing the next): while a
// thread runs late work, what it makes late is queued on the thread and
// run, in order, by the outermost late run once the current one returns.
// The stack then holds one late resume at a time, however long the chain.
static _Thread_local bool hal_async_late_running;
static _Thread_local hal_async_task_t* hal_async_late_head;
static _Thread_local hal_async_task_t* hal_async_late_tail;

void hal_async_run_late(hal_async_coro_handle_t handle,
                        hal_async_coro_resume_t resume) {
  if (hal_async_late_running) {
    hal_async_task_t* task = NULL;
    hal_status_t status = hal_allocator_malloc(hal_allocator_system(),
                                               sizeof(*task), (void**)&task);
    if (status) {
      fputs("hal-async: queueing late work: ", stderr);
      hal_status_fprint(stderr, status);
      hal_status_free(status);
      abort();
    }
    *task = (hal_async_task_t){NULL, handle, resume};
    if (hal_async_late_tail) {
      hal_async_late_tail->next = task;
    } else {
      hal_async_late_head = task;
    }
    hal_async_late_tail = task;
    return;
  }
  hal_async_late_running = true;
  resume(handle);
  while (hal_async_run_queued_late_task()) {
  }
  hal_async_late_running = false;
}

bool hal_async_has_queued_late_work(void) {
  return hal_async_late_head != NULL;
}

bool hal_async_run_queued_late_task(void) {
  hal_async_task_t* task = hal_async_late_head;
  if (!task)
    return false;
  hal_async_late_head = task->next;
  if (!hal_async_late_head)
    hal_async_late_tail = NULL;
  hal_async_coro_handle_t handle = task->handle;
  hal_async_coro_resume_t resume = task->resume;
  hal_allocator_free(hal_allocator_system(), task);
  resume(handle);
  return true;
}

void hal_async_runtime_submit(hal_async_runtime_t* runtime,
                              hal_async_coro_handle_t handle,
                              hal_async_coro_resume_t resume) {
  pthread_mutex_lock(&runtime->mutex);
  if (HAL_UNLIKELY(runtime->stopping)) {
    pthread_mutex_unlock(&runtime->mutex);
    hal_async_run_late(handle, resume);
    return;
  }
  hal_async_task_t* task = runtime->free_list;
  if (task) {
    runtime->free_list = task->next;
    --runtime->free_count;
  } else {
    hal_status_t status =
        hal_allocator_malloc(runtime->allocator, sizeof(*task), (void**)&task);
    if (status) {
      hal_status_fprint(stderr, status);
      hal_status_free(status);
      abort();
    }
  }
  task->next = NULL;
  task->handle = handle;
  task->resume = resume;
  if (runtime->tail) {
    runtime->tail->next = task;
  } else {
    runtime->head = task;
  }
  runtime->tail = task;
  // Counted before it is published, so it cannot finish first.
  atomic_fetch_add(&runtime->outstanding, 1);
  // Signaled under |mutex| so payloads are published in order (S1); |work|
  // has only waiter timepoints, so no callback runs under our lock.
  hal_status_t status =
      hal_semaphore_signal(runtime->work, ++runtime->published);
  pthread_mutex_unlock(&runtime->mutex);
  if (status) {
    hal_status_fprint(stderr, status);
    hal_status_free(status);
    abort();
  }
}

// HAL_ASYNC_WORKER_THREADS (1..1024), else one worker per online CPU; a
// malformed value is the parser's INVALID_ARGUMENT naming it.
static hal_status_t hal_async_default_worker_count(int32_t* out_count) {
  uint64_t count = 0;
  bool set = false;
  HAL_RETURN_IF_ERROR(
      hal_env_uint("HAL_ASYNC_WORKER_THREADS", 1, 1024, &count, &set));
  if (set) {
    *out_count = (int32_t)count;
    return HAL_OK;
  }
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  *out_count = online > 0 ? (int32_t)online : 1;
  return HAL_OK;
}

// Set by an exit handler of this library. exit() runs the process's exit
// handlers before any library's destructors; dlclose() runs the
// destructors of the library it unloads first, and that library's exit
// handlers after them (__cxa_finalize). So the unload below sees it set
// only when the process exits.
static atomic_bool hal_async_process_exiting;

static void hal_async_note_exit(void* unused) {
  (void)unused;
  atomic_store_explicit(&hal_async_process_exiting, true, memory_order_relaxed);
}

// The C++ ABI's registration, tied to this library (__dso_handle), so that
// a dlclose() runs the handler, or drops it, before the code goes: plain
// atexit() may register it for the whole process (sanitizer runtimes do),
// to be called at exit into unmapped code.
extern void* __dso_handle;
extern int __cxa_atexit(void (*fn)(void*), void* arg, void* dso_handle);

static pthread_once_t hal_async_exit_handler_once = PTHREAD_ONCE_INIT;

// Registered with the first runtime, from a running program: a handler
// registered before main (by a constructor of a library the program links)
// would run after the loader's destructor pass, too late: the unload below
// then cannot tell an exit() from a task from a dlclose() from one.
static void hal_async_register_exit_handler(void) {
  (void)__cxa_atexit(hal_async_note_exit, NULL, &__dso_handle);
}

// The fork handler needs no such care, and is there from the load: a
// child forked with objects alive but no runtime made yet is a fork child
// too. The loader drops it with the library.
__attribute__((constructor)) static void hal_async_library_load(void) {
  (void)pthread_atfork(NULL, NULL, hal_async_fork_child);
}

HAL_ASYNC_API hal_status_t
hal_async_runtime_create(hal_allocator_t allocator, int32_t worker_count,
                         hal_async_runtime_t** out_runtime) {
  if (!out_runtime) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT, "out_runtime is NULL");
  }
  *out_runtime = NULL;
  pthread_once(&hal_async_exit_handler_once, hal_async_register_exit_handler);
  if (worker_count < 0 || worker_count > 1024) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "worker_count %d not in [0, 1024]", worker_count);
  }
  if (worker_count == 0)
    HAL_RETURN_IF_ERROR(hal_async_default_worker_count(&worker_count));
  // A malformed setting (HAL_SYNC_MAX_WAIT_MS among them) would fail every
  // wait of the workers and of destroy: said here, where it can be.
  hal_status_t env_status = hal_env_check();
  if (env_status)
    return hal_status_annotatef(env_status, "creating an async runtime");

  hal_async_runtime_t* runtime = NULL;
  HAL_RETURN_IF_ERROR(
      hal_allocator_malloc(allocator, sizeof(*runtime), (void**)&runtime));
  runtime->allocator = allocator;
  atomic_init(&runtime->ref_count, 1);
  atomic_init(&runtime->next_ticket, 0);
  atomic_init(&runtime->outstanding, 0);
  atomic_init(&runtime->draining, false);
  atomic_init(&runtime->drained_signaled, false);
  runtime->worker_count = worker_count;
  runtime->fork_generation =
      atomic_load_explicit(&hal_async_fork_generation, memory_order_relaxed);
  pthread_mutex_init(&runtime->mutex, NULL);

  hal_status_t status =
      hal_allocator_malloc_array(allocator, (size_t)worker_count,
                                 sizeof(pthread_t), (void**)&runtime->threads);
  if (status)
    goto error_threads;
  status = hal_semaphore_create_host(allocator, 0, &runtime->work);
  if (status)
    goto error_work;
  status = hal_semaphore_create_host(allocator, 0, &runtime->drained);
  if (status)
    goto error_drained;
  for (; runtime->started_count < worker_count; ++runtime->started_count) {
    int result = pthread_create(&runtime->threads[runtime->started_count], NULL,
                                hal_async_worker_main, runtime);
    if (result != 0) {
      status = hal_make_status(HAL_STATUS_RESOURCE_EXHAUSTED,
                               "pthread_create of async worker %d: %s",
                               runtime->started_count, strerror(result));
      goto error_start;
    }
  }
  *out_runtime = runtime;
  return HAL_OK;

error_start:
  // Workers already started exit through the normal unload path.
  hal_async_runtime_destroy(runtime);
  return status;
error_drained:
  hal_semaphore_release(runtime->work);
error_work:
  hal_allocator_free(allocator, runtime->threads);
error_threads:
  pthread_mutex_destroy(&runtime->mutex);
  hal_allocator_free(allocator, runtime);
  return status;
}

HAL_ASYNC_API void hal_async_runtime_destroy(hal_async_runtime_t* runtime) {
  if (!runtime || hal_async_runtime_is_the_parents(runtime))
    return;
  if (hal_async_thread_runtime == runtime) {
    hal_async_report_misuse(
        "hal_async_runtime_destroy called from one of its own threads");
    return;
  }
  atomic_store(&runtime->draining, true);
  if (atomic_load(&runtime->outstanding) != 0) {
    hal_status_t status =
        hal_semaphore_wait(runtime->drained, 1, hal_infinite_timeout());
    if (hal_status_is(status, HAL_STATUS_DEADLINE_EXCEEDED)) {
      // HAL_SYNC_MAX_WAIT_MS cut the wait short while tasks still run:
      // said once, and they are still waited for, as the header promises.
      fprintf(stderr, "hal-async: destroying runtime %p: ", (void*)runtime);
      hal_status_fprint(stderr, status);
      fprintf(stderr,
              "hal-async: %lld task(s) still queued or running; waiting for "
              "them\n",
              (long long)atomic_load(&runtime->outstanding));
      fflush(stderr);
    }
    while (hal_status_is(status, HAL_STATUS_DEADLINE_EXCEEDED)) {
      hal_status_free(status);
      status = hal_semaphore_wait(runtime->drained, 1, hal_infinite_timeout());
    }
    // |drained| is never failed, and the setting was checked at creation.
    hal_status_ignore(status);
  }
  pthread_mutex_lock(&runtime->mutex);
  runtime->stopping = true;
  hal_status_t status =
      hal_semaphore_signal(runtime->work, HAL_SEMAPHORE_MAX_VALUE);
  pthread_mutex_unlock(&runtime->mutex);
  // Fails only if the payload is already at the maximum: workers awake.
  hal_status_ignore(status);
  for (int32_t i = 0; i < runtime->started_count; ++i) {
    pthread_join(runtime->threads[i], NULL);
  }
  hal_async_runtime_release(runtime);
}

HAL_ASYNC_API hal_async_runtime_t* hal_async_runtime_exchange_default(
    hal_async_runtime_t* runtime) {
  pthread_mutex_lock(&hal_async_default_mutex);
  hal_async_runtime_t* previous = hal_async_default_runtime;
  hal_async_default_runtime = runtime;
  pthread_mutex_unlock(&hal_async_default_mutex);
  return previous;
}

HAL_ASYNC_API int32_t
hal_async_runtime_worker_count(const hal_async_runtime_t* runtime) {
  return runtime ? runtime->worker_count : 0;
}

hal_async_runtime_t* hal_async_runtime_acquire_current(void) {
  hal_async_runtime_t* runtime = hal_async_thread_runtime;
  if (runtime) {
    hal_async_runtime_retain(runtime);
    return runtime;
  }
  // Under the mutex so an exchange + destroy cannot free it in between.
  pthread_mutex_lock(&hal_async_default_mutex);
  if (!hal_async_default_runtime) {
    hal_status_t status = hal_async_runtime_create(hal_allocator_system(), 0,
                                                   &hal_async_default_runtime);
    if (status) {
      fputs("hal-async: creating the default runtime failed: ", stderr);
      hal_status_fprint(stderr, status);
      hal_status_free(status);
      abort();
    }
  }
  runtime = hal_async_default_runtime;
  hal_async_runtime_retain(runtime);
  pthread_mutex_unlock(&hal_async_default_mutex);
  return runtime;
}

HAL_ASYNC_API void mlirAsyncRuntimeExecute(hal_async_coro_handle_t handle,
                                           hal_async_coro_resume_t resume) {
  hal_async_runtime_t* runtime = hal_async_thread_runtime;
  if (runtime && hal_async_deferring) {
    // From a pool task: queued until the task has returned to its worker
    // (the handoff invariant in async_object.c).
    hal_async_defer_execute(runtime, handle, resume);
    return;
  }
  if (runtime) {
    // A pool thread: its runtime outlives the task that is calling.
    hal_async_runtime_submit(runtime, handle, resume);
    return;
  }
  runtime = hal_async_runtime_acquire_current();
  hal_async_runtime_submit(runtime, handle, resume);
  hal_async_runtime_release(runtime);
}

HAL_ASYNC_API int64_t mlirAsyncRuntimGetNumWorkerThreads(void) {
  hal_async_runtime_t* runtime = hal_async_runtime_acquire_current();
  int64_t count = runtime->worker_count;
  hal_async_runtime_release(runtime);
  return count;
}

HAL_ASYNC_API int64_t mlirAsyncRuntimeGetNumWorkerThreads(void) {
  return mlirAsyncRuntimGetNumWorkerThreads();
}

HAL_ASYNC_API void mlirAsyncRuntimePrintCurrentThreadId(void) {
  printf("Current thread id: %lu\n", (unsigned long)pthread_self());
  fflush(stdout);
}

// Library unload (dlclose, or process exit): the default runtime waits for
// its tasks. Not on a pool thread: that thread's task never returns, so no
// runtime can be drained or joined from it, and the unload leaves the
// runtimes as they are. When the process exits (a task called exit()) it
// ends with the task's status. A dlclose() from a task is a misuse that
// cannot end well (this library's code is unmapped under its own
// workers): said on stderr first. The exit handler tells the two apart;
// when it was registered before main (the first runtime made in a
// constructor of a library the program links) it runs too late to, and
// an exit() is then said to be either. A fork() child reports no live
// objects: its count holds the parent's copies.
__attribute__((destructor)) static void hal_async_library_unload(void) {
  if (hal_async_thread_runtime) {
    if (!atomic_load_explicit(&hal_async_process_exiting,
                              memory_order_relaxed)) {
      fputs(
          "hal-async: the library is unloaded on one of its pool threads, "
          "by a dlclose() from a task (its code goes away under its own "
          "workers) or by an exit() from a task of a program whose first "
          "runtime was made before main; its runtimes are left as they "
          "are\n",
          stderr);
      fflush(stderr);
    }
    return;
  }
  hal_async_runtime_t* runtime = hal_async_runtime_exchange_default(NULL);
  hal_async_runtime_destroy(runtime);
#ifndef NDEBUG
  int64_t live = hal_async_live_object_count();
  if (live != 0 && atomic_load_explicit(&hal_async_fork_generation,
                                        memory_order_relaxed) == 0) {
    fprintf(stderr,
            "hal-async: %lld token(s)/value(s)/group(s) still referenced "
            "when the library was unloaded\n",
            (long long)live);
  }
#endif
}
