// Copyright 2026 The HAL Authors.
//
// libhal-async-runtime: MLIR's async runtime ABI (LLVM 14) on the sync module.
//
// Code compiled from MLIR's `async` dialect (lowered by -async-to-async-
// runtime, -async-runtime-ref-counting, -convert-async-to-llvm) calls the
// mlirAsyncRuntime* entry points below. This library provides them as plain
// C exports, so `mlir-cpu-runner -shared-libs=libhal-async-runtime.so` runs
// such programs on our runtime in place of libmlir_async_runtime.so.14. The
// declarations are written from the ABI the lowering emits (pointer and i64
// arguments, i1 results); nothing here comes from LLVM.
//
// Objects. Tokens, values and groups are reference counted and built from
// the sync module's host semaphores: a token or value is "ready" when its
// semaphore reaches 1 and "in error" when the semaphore failed (S2, sticky);
// a group's semaphore reaches 1 when all |size| tokens added to it are ready.
// Awaits are semaphore waits; await-and-execute and group membership are
// timepoint callbacks (hal_semaphore_add_callback), which run exactly once
// and never under a lock (T1, T2). There is no other waiting mechanism.
//
// Reference counting, exactly as the lowering expects:
//  - a token or value is created with 2 references: one for the code that
//    receives it, one for the task that will emplace it. Emplace and
//    set-error drop that second reference (after every awaiter has been
//    notified, so an awaiter may drop the last other reference: K12);
//  - a group is created with 1 reference; a token added to a group keeps
//    the group alive (its own reference) until the token is ready;
//  - await, is-error, get-storage and add-to-group do not change counts.
// Dropping more references than are held is a program bug: debug builds
// (assertions on) print a message naming the object and abort. The ABI
// returns no errors, so other bad input is reported the same way: a
// reference count below 1 passed to add-ref or drop-ref (other builds print
// and ignore the call), a negative size passed to create-value or
// create-group (other builds print and use 0). Storage that cannot be
// allocated ends the process with a message in every build.
//
// Bad input: awaiting an errored token or value returns, and the error is
// visible through the is-error entry points (MLIR's lowering checks them
// after every await). A group reads as in error once one member's error
// has reached it: when the call that put the member in error returns; for
// a call made in a task (Handoffs, below), once the task has carried it
// out; for one made in a resume nested too deeply on the thread that made
// an object ready (mlirAsyncRuntimeAwaitTokenAndExecute), once the resume
// it would have nested in returns, at the latest when the outermost call
// on that thread does. Awaits registered on the member before it joined the
// group resolve before it, so a continuation the member's error resumes may
// still read the group as not in error (as in MLIR, which counts the
// member's error in the group the same way). An
// await on a group returns once every member is ready or in error (as in
// MLIR), whether or not an earlier await of it was cut short (each await
// is bounded on its own by HAL_SYNC_MAX_WAIT_MS, below, when set). Emplacing an
// object twice is reported like an over-release. A group with more tokens than
// its size is reported; one with fewer is waited on until the rest arrive (as
// in MLIR). A token that loses its last reference before it is ready or in
// error counts in its groups as a member in error. HAL_SYNC_MAX_WAIT_MS
// (docs/sync-design.md) bounds blocking awaits: one it cuts short puts the
// token or value in error and says so on stderr; the emplace or set-error that
// comes later only drops its reference (a second one is reported as ever). A
// token or value already emplaced, its emplace still queued in a task
// (Handoffs, below), is waited for instead. A group has no producer: a cut
// counts as a member in error, whatever its members' state, and the group still
// becomes ready when they are. Idle workers are not bounded by it, nor is
// destroy's wait for the tasks.
//
// Threads. Tasks (mlirAsyncRuntimeExecute) run on the thread pool of a
// runtime instance. Calls made from a pool thread use that thread's runtime;
// other calls use the default runtime, created on first use and destroyed
// when the library is unloaded (dlclose, or process exit), except
// when a task calls exit(): the unload then runs on a pool thread, which
// cannot wait for the task it is in, so it destroys nothing, and the
// process ends with the task's status (the other workers may run queued
// tasks until it does; nothing waits for them). A dlclose() of the library
// from a task unmaps its code under its own workers: said on stderr, then
// it crashes (so does an exit() from a task, said the same way but with
// the task's status kept, when the first runtime was made before main, in
// a constructor: the two cannot be told apart then). Destroying
// a runtime waits for every task queued or running on it, including tasks
// those tasks start, then joins its threads. A coroutine resumed after its
// runtime was destroyed (a token emplaced later by another thread) runs on
// the emplacing thread: late work is never lost and never touches freed
// memory. A chain of them (each resume emplacing the token the next one
// awaits) runs there in order, nested no deeper than the bound on inline
// resumes, however long the chain; so does a chain resolved by one call on
// any thread, a pool worker included: it runs on that thread (from a pool
// task, once the task returns: Handoffs, below), never through the pool's
// queue, whose workers may all be blocked awaiting the chain.
//
// Handoffs. Inside a pool task, what the task hands to other threads
// (emplace, set-error, await-and-execute, add-to-group, execute, and the
// end of a token or value whose last reference it drops unresolved, which
// fails its groups) takes effect when the task returns to its worker, or before
// a blocking await of the task: no other thread runs or sees anything of it
// while the task's thread is still in its (JIT'd) code, which mlir-cpu-runner
// unmaps as soon as main returns. Elsewhere (the main thread) they are
// immediate. The task's own thread sees them take effect at the same points: an
// is-error query right after the task's own set-error (or after adding an
// errored token to a group) reads the state before it, until the task
// returns or blocks in an await. (MLIR's lowering sets its error and
// returns; it never queries it.)
//
// Blocking awaits inside a task hold the task's worker while they wait. As
// with MLIR's runtime, a task that blocks on work queued behind it on the
// same pool waits forever once every worker is blocked so; the lowering
// never blocks inside a task (its awaits there suspend the coroutine).
//
// Thread-safety: every function is thread-safe, given that the caller holds
// a reference to each object it passes.

#ifndef HAL_MLIR_ASYNC_H_
#define HAL_MLIR_ASYNC_H_

#include <stdbool.h>
#include <stdint.h>

#include "hal/allocator.h"
#include "hal/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HAL_ASYNC_API __attribute__((visibility("default")))

// The lowering passes every object as an opaque pointer.
typedef void* hal_async_object_ptr_t;
// A coroutine handle and the function that resumes it.
typedef void* hal_async_coro_handle_t;
typedef void (*hal_async_coro_resume_t)(void* handle);

//===----------------------------------------------------------------------===//
// The ABI (LLVM 14 names and signatures)
//===----------------------------------------------------------------------===//

HAL_ASYNC_API void mlirAsyncRuntimeAddRef(hal_async_object_ptr_t object,
                                          int64_t count);
HAL_ASYNC_API void mlirAsyncRuntimeDropRef(hal_async_object_ptr_t object,
                                           int64_t count);

HAL_ASYNC_API hal_async_object_ptr_t mlirAsyncRuntimeCreateToken(void);
// |size| bytes of storage, aligned for any type, zero-filled.
HAL_ASYNC_API hal_async_object_ptr_t mlirAsyncRuntimeCreateValue(int64_t size);
// A group that becomes ready when |size| tokens added to it are ready.
HAL_ASYNC_API hal_async_object_ptr_t mlirAsyncRuntimeCreateGroup(int64_t size);

HAL_ASYNC_API void mlirAsyncRuntimeEmplaceToken(hal_async_object_ptr_t token);
HAL_ASYNC_API void mlirAsyncRuntimeEmplaceValue(hal_async_object_ptr_t value);
HAL_ASYNC_API void mlirAsyncRuntimeSetTokenError(hal_async_object_ptr_t token);
HAL_ASYNC_API void mlirAsyncRuntimeSetValueError(hal_async_object_ptr_t value);
HAL_ASYNC_API bool mlirAsyncRuntimeIsTokenError(hal_async_object_ptr_t token);
HAL_ASYNC_API bool mlirAsyncRuntimeIsValueError(hal_async_object_ptr_t value);
HAL_ASYNC_API bool mlirAsyncRuntimeIsGroupError(hal_async_object_ptr_t group);

// Block the calling thread until ready or in error.
HAL_ASYNC_API void mlirAsyncRuntimeAwaitToken(hal_async_object_ptr_t token);
HAL_ASYNC_API void mlirAsyncRuntimeAwaitValue(hal_async_object_ptr_t value);
HAL_ASYNC_API void mlirAsyncRuntimeAwaitAllInGroup(
    hal_async_object_ptr_t group);

HAL_ASYNC_API void* mlirAsyncRuntimeGetValueStorage(
    hal_async_object_ptr_t value);

// Returns the token's rank in the group (0, 1, ... in the order of adds).
HAL_ASYNC_API int64_t mlirAsyncRuntimeAddTokenToGroup(
    hal_async_object_ptr_t token, hal_async_object_ptr_t group);

// Runs resume(handle) on the runtime's thread pool.
HAL_ASYNC_API void mlirAsyncRuntimeExecute(hal_async_coro_handle_t handle,
                                           hal_async_coro_resume_t resume);

// Resume(handle) once ready or in error: at once on this thread when it
// already is, else on the thread that makes it ready, before that call
// returns (as in MLIR). Either way nested in the call, or, where resumes
// would nest too deeply (a chain of awaits, or a coroutine that awaits a
// resolved object again from its resume), one after another on that
// thread, after the resume they would have nested in. An object that loses its
// last reference before it is ready or in error (a program bug) never
// resumes its awaiters, as in MLIR; a message on stderr says so.
HAL_ASYNC_API void mlirAsyncRuntimeAwaitTokenAndExecute(
    hal_async_object_ptr_t token, hal_async_coro_handle_t handle,
    hal_async_coro_resume_t resume);
HAL_ASYNC_API void mlirAsyncRuntimeAwaitValueAndExecute(
    hal_async_object_ptr_t value, hal_async_coro_handle_t handle,
    hal_async_coro_resume_t resume);
HAL_ASYNC_API void mlirAsyncRuntimeAwaitAllInGroupAndExecute(
    hal_async_object_ptr_t group, hal_async_coro_handle_t handle,
    hal_async_coro_resume_t resume);

// LLVM 14 spells this entry point without the second 'e' and the lowering
// calls it by that name; both spellings are exported.
HAL_ASYNC_API int64_t mlirAsyncRuntimGetNumWorkerThreads(void);
HAL_ASYNC_API int64_t mlirAsyncRuntimeGetNumWorkerThreads(void);

// Prints "Current thread id: <id>" and a newline to stdout.
HAL_ASYNC_API void mlirAsyncRuntimePrintCurrentThreadId(void);

//===----------------------------------------------------------------------===//
// Runtime instances (embedding and tests)
//===----------------------------------------------------------------------===//

typedef struct hal_async_runtime_t hal_async_runtime_t;

// Creates a runtime with |worker_count| pool threads (0: one per online CPU,
// or HAL_ASYNC_WORKER_THREADS when set, an integer in [1, 1024]; anything
// else fails the creation with INVALID_ARGUMENT naming it). Every HAL_* setting
// libhal reads is checked first (hal_env_check in hal/env.h): a malformed one,
// whether or not the runtime uses it, fails the creation with INVALID_ARGUMENT
// naming it, as it fails a driver registry's; the default runtime's creation
// then ends the process with that message.
HAL_ASYNC_API HAL_MUST_USE_RESULT hal_status_t
hal_async_runtime_create(hal_allocator_t allocator, int32_t worker_count,
                         hal_async_runtime_t** out_runtime);

// Unloads |runtime|: waits until no task is queued or running on it
// (tasks may start more tasks while it waits), joins its threads and drops
// the caller's reference. Must not be called from one of its own threads.
// Coroutines still suspended on tokens run later on the emplacing thread.
// In a fork() child, a runtime made before the fork is the parent's (its
// threads and tasks stayed there): destroying it there does nothing.
HAL_ASYNC_API void hal_async_runtime_destroy(hal_async_runtime_t* runtime);

// Makes |runtime| (may be NULL: the next use creates a fresh one) the
// default and returns the previous default (may be NULL); ownership moves
// both ways: the library destroys the default it holds at unload. A fork()
// child starts with none (the parent's stays the parent's): its first use
// makes one of its own, so its tasks run and its exit() waits for none of
// the parent's. Tokens, values and groups made before the fork are
// copies: one that only a task of the parent was to resolve never is in
// the child.
HAL_ASYNC_API hal_async_runtime_t* hal_async_runtime_exchange_default(
    hal_async_runtime_t* runtime);

// Worker thread count of |runtime|.
HAL_ASYNC_API int32_t
hal_async_runtime_worker_count(const hal_async_runtime_t* runtime);

// Tokens, values and groups currently alive in the process (tests: zero
// once a program has dropped everything). Debug builds also report a
// non-zero count when the library is unloaded, but in a fork() child,
// whose count holds its copies of the parent's objects.
HAL_ASYNC_API int64_t hal_async_live_object_count(void);

#ifdef __cplusplus
}
#endif

#endif  // HAL_MLIR_ASYNC_H_
