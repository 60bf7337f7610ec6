// Copyright 2026 The HAL Authors.
//
// hal_semaphore_t: timeline semaphores. Implemented once, for every driver,
// by the sync module in hal/sync/.
//
// THE CONTRACT (rule numbers as in docs/sync-contract.md, where each rule
// names the code that enforces it and the test that proves it):
//
// S1 Monotonic payload. A semaphore holds a 64-bit payload that starts at
//    its initial value and only strictly increases. A host signal to a value
//    <= the current one, or > HAL_SEMAPHORE_MAX_VALUE, returns
//    INVALID_ARGUMENT and changes nothing. Values >= HAL_SEMAPHORE_FAILURE_
//    VALUE are reserved for the failed state. Device signals (a queue
//    completing work) move the payload to at least their value: a device
//    signal below the current payload is a no-op.
// S2 Sticky failure. hal_semaphore_fail() moves the semaphore to a failed
//    state that never clears; the first failure's status (code and message)
//    is kept. Query returns a copy of it; every current and future wait
//    returns a copy of it, also one for a value reached before the
//    failure (and a callback added then gets it); queue work waiting on the
//    semaphore fails its own signal semaphores with a status that names the
//    cause, and never runs if the failure is known when it is issued. Work
//    already ordered behind the signaling work on the device (its wait kept as
//    a device event) may have run when the signaling work's failure comes only
//    later (a device error reported at completion, or a fail by the host
//    after the signaling work was issued): its signals fail all the same.
// S3 Waits. hal_semaphore_wait() and hal_semaphore_list_wait() (ALL or ANY;
//    an empty list is immediately OK) take immediate, relative, absolute and
//    infinite timeouts. The result is OK, DEADLINE_EXCEEDED or the failure;
//    with a malformed HAL_SYNC_MAX_WAIT_MS (hal/env.h), every wait not
//    already satisfied, immediate ones and those on a failed semaphore
//    included, returns INVALID_ARGUMENT naming it instead.
//    A wait never returns OK before the value is reached, returns soon after
//    its deadline, and wakes when the value is reached: each waiting thread
//    sleeps on exactly one wake-up object, posted by the signaler; nothing
//    polls, except for the bounded spin before sleeping of
//    hal_semaphore_set_spin_ns (HAL_SYNC_SPIN_NS; 1 us by default). A deadline
//    in the past (or a timeout <= 0) checks once and returns at once: that is
//    the documented result, not an error.
// S4 Wait-before-signal. Queue work may wait on values nobody has signaled
//    or submitted a signal for yet; it runs once they are reached.
// S5 Visibility. When a wait for value v returns OK, query returns >= v, and
//    everything the signaler wrote before signaling is visible to the waiter
//    (the payload is updated before any waiter is woken). The signals of
//    one submission are made one at a time in the order of its list: a
//    wait that this submission's signal of an entry ends finds every
//    earlier entry made (reached or failed), not always the later ones (a
//    device loss fails semaphores in no particular order).
// S6 Cross-queue order. Work waiting on (s, v) never starts before the
//    work that signals (s, v) completes, on the same queue, another queue,
//    or another device, of any driver; everything that work wrote is
//    visible to it.
//
// Callbacks and wake-ups (timepoints, hal/timepoint.h) run exactly once and
// never under a semaphore lock (T1, T2). Once the first callback it runs
// has started, a signal, fail or wait touches its semaphores only through
// references of its own, so a callback may release the last reference to
// its own semaphore (K12).
//
// List waits: the same semaphore may appear more than once in a list; each
// entry is an independent condition (ALL then needs the largest value, ANY
// the smallest). A list wait on failed semaphores: ALL returns the failure
// of the first failed entry in list order as soon as any entry fails, one
// whose value was reached before it failed included (S2: the wait is
// current until every entry is reached). ANY
// returns as soon as one entry is reached or failed, with one answer
// whether the failure came before the call or during it: OK if some entry
// is reached when the wait decides, else the failure of the first failed
// entry it saw. A failed entry is never slept through to the deadline.
//
// Thread-safety: every function is thread-safe. The caller of any function
// taking a semaphore holds a reference to it for the duration of the call
// (a reference it may have lent to a callback that releases it, see K12).

#ifndef HAL_SEMAPHORE_H_
#define HAL_SEMAPHORE_H_

#include "hal/allocator.h"
#include "hal/base.h"
#include "hal/resource.h"
#include "hal/status.h"
#include "hal/time.h"

HAL_EXTERN_C_BEGIN

// Payload values at or above this are reserved for the failed state.
#define HAL_SEMAPHORE_FAILURE_VALUE ((uint64_t)1 << 63)
// The largest value a host may signal or wait for.
#define HAL_SEMAPHORE_MAX_VALUE (HAL_SEMAPHORE_FAILURE_VALUE - 1)

typedef struct hal_semaphore_vtable_t hal_semaphore_vtable_t;

typedef struct hal_semaphore_t hal_semaphore_t;

// A list of (semaphore, value) pairs: what a submission waits on or signals,
// or what a host waits on. The arrays are borrowed for the call and never
// written through (constant arrays may be passed).
typedef struct hal_semaphore_list_t {
  size_t count;
  hal_semaphore_t* const* semaphores;
  const uint64_t* payload_values;
} hal_semaphore_list_t;

static inline hal_semaphore_list_t hal_semaphore_list_empty(void) {
  hal_semaphore_list_t list = {0, NULL, NULL};
  return list;
}

typedef enum hal_wait_mode_e {
  HAL_WAIT_MODE_ALL = 0,  // every (semaphore, value) reached
  HAL_WAIT_MODE_ANY = 1,  // at least one reached
} hal_wait_mode_t;

// Creates a semaphore that needs no driver: host signals and waits, and it
// may be waited on and signaled by any driver's queues. |initial_value| must
// be <= HAL_SEMAPHORE_MAX_VALUE.
HAL_API HAL_MUST_USE_RESULT hal_status_t
hal_semaphore_create_host(hal_allocator_t allocator, uint64_t initial_value,
                          hal_semaphore_t** out_semaphore);

HAL_API void hal_semaphore_retain(hal_semaphore_t* semaphore);
HAL_API void hal_semaphore_release(hal_semaphore_t* semaphore);

// The current payload in |*out_value|. A failed semaphore returns a clone of
// its failure status and sets |*out_value| to HAL_SEMAPHORE_FAILURE_VALUE.
// A query registers nothing: a value that device work publishes and that
// only queries look for may show up a millisecond or two after the work
// finished, on a queue whose host waits have been completing its work
// (docs/sync-design.md "Helped queues"), or some tens of microseconds
// after it on a queue busy with a burst of work ("Busy queues"); waits and
// callbacks see it as soon as the work is done.
HAL_API HAL_MUST_USE_RESULT hal_status_t
hal_semaphore_query(hal_semaphore_t* semaphore, uint64_t* out_value);

// Host signal to |new_value|, which must be greater than the current value
// and <= HAL_SEMAPHORE_MAX_VALUE (else INVALID_ARGUMENT, nothing changed).
// Signaling a failed semaphore returns a clone of its failure, whatever
// the value (below the current one too), except a value past
// HAL_SEMAPHORE_MAX_VALUE, which is INVALID_ARGUMENT first. Runs the
// callbacks that became due on the calling thread, after the lock is
// dropped (nested in a callback, timepoint.h T2 bounds how deep).
HAL_API HAL_MUST_USE_RESULT hal_status_t
hal_semaphore_signal(hal_semaphore_t* semaphore, uint64_t new_value);

// Moves |semaphore| to the failed state with |status| (ownership taken;
// an OK status becomes UNKNOWN). The first failure wins; later ones are
// freed. Every pending timepoint resolves with the failure.
HAL_API void hal_semaphore_fail(hal_semaphore_t* semaphore,
                                hal_status_t status);

// Blocks until the payload >= |value|, the semaphore fails, or |timeout|
// passes (DEADLINE_EXCEEDED). |value| > HAL_SEMAPHORE_MAX_VALUE is
// INVALID_ARGUMENT.
HAL_API HAL_MUST_USE_RESULT hal_status_t hal_semaphore_wait(
    hal_semaphore_t* semaphore, uint64_t value, hal_timeout_t timeout);

// Waits for ALL or ANY of |list| in one call (see the list rules above).
// INVALID_ARGUMENT: a non-empty list with NULL arrays, a NULL semaphore, a
// value > HAL_SEMAPHORE_MAX_VALUE. Drivers' device-level waits delegate here.
HAL_API HAL_MUST_USE_RESULT hal_status_t hal_semaphore_list_wait(
    hal_wait_mode_t mode, hal_semaphore_list_t list, hal_timeout_t timeout);

// The bounded spin of host waits, process-wide. A wait that would block
// first polls the values it waits for, for up to this many nanoseconds (or
// until its deadline), then registers and sleeps as S3 says. Polling sees a
// signal from a thread running on another core within a cache-line
// transfer, where a sleep costs a kernel wake-up of microseconds; the price
// is a busy core for up to that long on every wait that does block. 0 never
// polls; on a machine with one online CPU nothing polls either.
// The starting value is HAL_SYNC_SPIN_NS from the environment, an integer
// in [0, HAL_SEMAPHORE_MAX_SPIN_NS], else HAL_SEMAPHORE_DEFAULT_SPIN_NS
// (docs/performance.md has the measurement that chose it); a value outside
// that keeps the default and says so on stderr (hal/env.h). Values above
// HAL_SEMAPHORE_MAX_SPIN_NS given here are clamped to it.
// Thread-safe; a wait already spinning keeps the value it read.
#define HAL_SEMAPHORE_DEFAULT_SPIN_NS ((uint64_t)1000)
#define HAL_SEMAPHORE_MAX_SPIN_NS ((uint64_t)1000000000)
HAL_API void hal_semaphore_set_spin_ns(uint64_t ns);
HAL_API uint64_t hal_semaphore_spin_ns(void);

HAL_EXTERN_C_END

#endif  // HAL_SEMAPHORE_H_
