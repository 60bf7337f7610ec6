// Copyright 2026 The HAL Authors.
//
// hal_timepoint_t: the moment a semaphore reaches a value, as a callback.
//
// THE CONTRACT (docs/sync-contract.md, rules T1-T5; T4, how device work
// waits on native events, is the drivers' and is not seen through this
// header):
//
// T1 Exactly once. The callback of a timepoint runs exactly once: when the
//    semaphore reaches the value (status OK), when it fails (a borrowed copy
//    of the failure), when the timepoint is cancelled (CANCELLED), or when
//    the semaphore is destroyed with the timepoint pending (CANCELLED).
// T2 No callbacks under locks. Callbacks run on the thread that signaled,
//    failed, cancelled or added (device work signals from its queue's
//    completion thread, or from a thread waiting for it without a deadline,
//    which may complete it), after every sync lock was dropped. They may
//    call any HAL function, including signal/fail/wait on the same semaphore
//    and release of its last reference, but should be short: they hold up
//    the signaling thread, and a signal made in a callback runs its own
//    callbacks nested in it, up to 16 callbacks one inside another on a
//    thread. Deeper, a callback resolved runs on the same thread once the
//    16th returns, in order of resolution (so a chain of callbacks each
//    signaling the next runs whole within the first signal, in bounded
//    stack, however long); it is already resolved meanwhile (a cancel
//    returns false). A host wait on that thread, a poll too, first runs
//    such callbacks, in order, until its values are reached. They run
//    nested in the wait, those deferred before what it waits for too: a
//    chain whose links wait in their callbacks nests in those waits, up
//    to as deep as it is long.
//    They must not block on GPU work (Q1). Releasing
//    the last reference to a device from a callback returns at once: the
//    device's shutdown runs on libhal's release thread, so it never waits
//    for work that the rest of the same signal would wake (K15).
// T3 Lifetime by reference. Timepoints are reference counted and pooled; a
//    pooled timepoint is recycled only when its count reaches zero, and a
//    generation count makes use of a stale pointer an assertion failure in
//    debug builds. Registration happens under the same lock as the value
//    check: no signal can fall between them.
// T5 Cancellation is safe. hal_timepoint_cancel() racing a signal resolves
//    to exactly one of: the timepoint was removed (cancel returns true and
//    the callback ran with CANCELLED before it returned), or it was already
//    resolved (false: the callback ran, is running, or is still to run on
//    the resolver's thread, and owns |user_data| until it returns). The
//    last case includes a callback that cancels another one resolved by
//    the same signal, still to run after it on this very thread: false,
//    and that one then runs with the signal's outcome. So false never means
//    that |user_data| may be freed; the callback itself should free it.
//    Either way the caller may release its timepoint reference at once.
//
// Registering a callback does not keep the semaphore alive: destroying it
// with the timepoint pending runs the callback with CANCELLED (T1). A
// timepoint handle does: while the caller holds one (from |out_timepoint|
// or hal_timepoint_retain()), the semaphore lives, so hal_timepoint_cancel()
// is safe whatever happened to the caller's semaphore references. Releasing
// the last handle lets the semaphore go.
//
// Thread-safety: all functions are thread-safe.

#ifndef HAL_TIMEPOINT_H_
#define HAL_TIMEPOINT_H_

#include "hal/base.h"
#include "hal/semaphore.h"
#include "hal/status.h"

HAL_EXTERN_C_BEGIN

typedef struct hal_timepoint_t hal_timepoint_t;

// |status| is borrowed for the call: OK, the semaphore's failure, or
// CANCELLED. |value| is the value the timepoint waited for.
typedef void (*hal_timepoint_callback_fn_t)(void* user_data, uint64_t value,
                                            hal_status_t status);

// Calls |callback| once |semaphore| reaches |value| (<= MAX_VALUE) or fails.
// If that is already the case, the callback runs on this thread before the
// call returns. |out_timepoint| (optional) receives a reference, released
// with hal_timepoint_release(), to cancel with; it is set even when the
// callback already ran. On error nothing was registered and the callback
// never runs. An object that is not a semaphore gets INVALID_ARGUMENT.
HAL_API HAL_MUST_USE_RESULT hal_status_t
hal_semaphore_add_callback(hal_semaphore_t* semaphore, uint64_t value,
                           hal_timepoint_callback_fn_t callback,
                           void* user_data, hal_timepoint_t** out_timepoint);

// Removes |timepoint| (a handle) if it is still pending (T5): true when
// removed (its callback ran with CANCELLED on this thread), false when it
// had already resolved (its callback may still be to run, even on this
// thread: T5). Safe after the caller released every reference to
// the semaphore: the handle keeps it alive.
HAL_API bool hal_timepoint_cancel(hal_timepoint_t* timepoint);

// Copies / drops a handle. The last release also drops the handle's
// reference to the semaphore.
HAL_API void hal_timepoint_retain(hal_timepoint_t* timepoint);
HAL_API void hal_timepoint_release(hal_timepoint_t* timepoint);

// Runs the first of the callbacks this thread deferred past the nesting
// bound (T2), if any; true when it ran one. A host wait runs them before
// it blocks; a runtime whose callbacks queue work of its own on the thread
// (the MLIR async runtime) runs them one at a time, with its own queue
// between them, before it blocks, so that no such work is left behind.
HAL_API bool hal_timepoint_run_deferred(void);

HAL_EXTERN_C_END

#endif  // HAL_TIMEPOINT_H_
