// Copyright 2026 The HAL Authors.
//
// Internals of libhal-async-runtime shared by async_object.c (tokens, values,
// groups) and async_runtime.c (runtime instances and their thread pools).

#ifndef HAL_COMPAT_ASYNC_INTERNAL_H_
#define HAL_COMPAT_ASYNC_INTERNAL_H_

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "hal/mlir_async.h"
#include "hal/semaphore.h"

// Reports a misuse of the ABI (over-release, double emplace, group
// overflow): prints "hal-async: <message>" to stderr and, in builds with
// assertions, aborts. Returns in NDEBUG builds so the caller can recover.
void hal_async_report_misuse(const char* format, ...)
    __attribute__((format(printf, 1, 2)));

//===----------------------------------------------------------------------===//
// Runtime
//===----------------------------------------------------------------------===//

// The runtime to which a call made on this thread belongs: the pool's own
// runtime on a pool thread, else the default one (created on first use).
// The returned runtime is retained; release with hal_async_runtime_release.
hal_async_runtime_t* hal_async_runtime_acquire_current(void);

void hal_async_runtime_retain(hal_async_runtime_t* runtime);
void hal_async_runtime_release(hal_async_runtime_t* runtime);

// Queues resume(handle) on |runtime|'s pool; runs it on this thread when the
// runtime has been destroyed already (late work is never dropped), after
// the late work this thread is running, if any (never nested in it).
void hal_async_runtime_submit(hal_async_runtime_t* runtime,
                              hal_async_coro_handle_t handle,
                              hal_async_coro_resume_t resume);
// Runs resume(handle) on this thread as late work: at once, or, while this
// thread already runs late work, queued behind it (never nested in it).
void hal_async_run_late(hal_async_coro_handle_t handle,
                        hal_async_coro_resume_t resume);
// Runs the oldest late work queued on this thread, if any (false: none). A
// blocking await runs it until what it waits for is ready, since that may
// be queued behind it here; no further, so that the next blocking await in
// the queue does not nest inside this one.
bool hal_async_run_queued_late_task(void);

// async_object.c: the token cache a fork() child starts with (empty, its
// lock made anew).
void hal_async_token_cache_fork_child(void);
bool hal_async_has_queued_late_work(void);

// Nesting depth of coroutine resumes run inline by timepoint callbacks on
// this thread; bounded so chains of awaits cannot overflow the stack (the
// deeper links run on the same thread as late work, one at a time).
#define HAL_ASYNC_MAX_INLINE_RESUME_DEPTH 8
extern _Thread_local int hal_async_inline_resume_depth;

// Handoffs (async_object.c has the invariant they protect). True on a pool
// thread while it runs a task: everything the task does that could let
// another thread run or observe the program (emplace, set-error,
// await-and-execute registration, group membership, execute) is queued on
// this thread and takes effect in hal_async_flush_deferred, which the
// worker calls once the task has returned to it (and blocking awaits on a
// pool thread call before they block).
extern _Thread_local bool hal_async_deferring;
void hal_async_flush_deferred(void);
// Queues resume(handle) on |runtime| (retained by the handoff) once the
// running task has returned; only while hal_async_deferring.
void hal_async_defer_execute(hal_async_runtime_t* runtime,
                             hal_async_coro_handle_t handle,
                             hal_async_coro_resume_t resume);
// Frees this thread's handoff queue (a pool thread, when it exits).
void hal_async_release_thread_handoffs(void);

#endif  // HAL_COMPAT_ASYNC_INTERNAL_H_
