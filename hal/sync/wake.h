// Copyright 2026 The HAL Authors.
//
// The blocking layer of the sync module: a mutex with a "held" assertion and
// a wake-up object (hal_sync_wake_t), the one thing a blocked host thread
// sleeps on.
//
// A wake object is a 32-bit word counting posts (bits 0..30) plus a FAILED
// flag (bit 31). Posters add to it; a waiter sleeps until the count reaches
// what it needs, the flag is set, or its deadline passes. Two
// implementations sit behind the same functions:
//  - futex: the word itself is the futex; post = one atomic RMW + FUTEX_WAKE.
//  - pthread: a mutex + condition variable on CLOCK_MONOTONIC.
// Under ThreadSanitizer (HAL_TSAN) only the pthread path is compiled, since
// TSan cannot see futexes. Elsewhere the futex path is the default and
// HAL_SYNC_NO_FUTEX=1 in the environment selects the pthread path (the test
// suite runs both).
//
// Memory ordering uses acquire/release on the word itself (no standalone
// fences): a waiter that observes a post also observes every write the
// poster made before posting.

#ifndef HAL_SYNC_WAKE_H_
#define HAL_SYNC_WAKE_H_

#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>

#include "hal/base.h"
#include "hal/time.h"

//===----------------------------------------------------------------------===//
// hal_sync_mutex_t
//===----------------------------------------------------------------------===//

// A pthread mutex that remembers its owner in debug builds so `_locked`
// functions can assert that their caller holds it.
typedef struct hal_sync_mutex_t {
  pthread_mutex_t handle;
#ifndef NDEBUG
  // Written only by the thread holding |handle|; read only by assertions in
  // that same thread.
  pthread_t owner;
  bool is_held;
#endif
} hal_sync_mutex_t;

void hal_sync_mutex_initialize(hal_sync_mutex_t* mutex);
void hal_sync_mutex_deinitialize(hal_sync_mutex_t* mutex);
void hal_sync_mutex_lock(hal_sync_mutex_t* mutex);
void hal_sync_mutex_unlock(hal_sync_mutex_t* mutex);

#ifndef NDEBUG
#define hal_sync_mutex_assert_held(mutex) \
  assert((mutex)->is_held&& pthread_equal((mutex)->owner, pthread_self()))
#else
#define hal_sync_mutex_assert_held(mutex) ((void)0)
#endif

// Initializes |cond| to measure timeouts on CLOCK_MONOTONIC.
void hal_sync_cond_initialize(pthread_cond_t* cond);

// Waits on |cond| until signaled or |deadline_ns| (CLOCK_MONOTONIC) passes.
// Returns false on timeout. HAL_TIME_INFINITE_FUTURE waits without a limit.
bool hal_sync_cond_wait(pthread_cond_t* cond, hal_sync_mutex_t* mutex,
                        hal_time_t deadline_ns);

//===----------------------------------------------------------------------===//
// hal_sync_wake_t
//===----------------------------------------------------------------------===//

#define HAL_SYNC_WAKE_FAILED_BIT (UINT32_C(1) << 31)
#define HAL_SYNC_WAKE_COUNT_MASK (HAL_SYNC_WAKE_FAILED_BIT - 1)

typedef struct hal_sync_wake_t {
  // Post count | FAILED flag. The futex word on the futex path.
  _Atomic uint32_t word;
  bool use_futex;
  // Used only on the pthread path.
  hal_sync_mutex_t mutex;
  pthread_cond_t cond;
} hal_sync_wake_t;

// True when new wake objects use the futex path in this process.
bool hal_sync_wake_futex_enabled(void);

void hal_sync_wake_initialize(hal_sync_wake_t* wake);
void hal_sync_wake_deinitialize(hal_sync_wake_t* wake);

// Resets the count and flag to zero. Only while no poster can reach |wake|.
void hal_sync_wake_reset(hal_sync_wake_t* wake);

// Adds one post (and sets FAILED when |failed|) and wakes the waiter.
// Any thread; never blocks except briefly on the pthread path's mutex.
void hal_sync_wake_post(hal_sync_wake_t* wake, bool failed);

// Blocks until the post count is >= |needed|, FAILED is set, or
// |deadline_ns| passes. Returns the word observed last (acquire).
uint32_t hal_sync_wake_wait(hal_sync_wake_t* wake, uint32_t needed,
                            hal_time_t deadline_ns);

//===----------------------------------------------------------------------===//
// hal_sync_doorbell_t
//===----------------------------------------------------------------------===//

// How a queue thread sleeps until there is work for it, without a condition
// variable: a thread woken from pthread_cond_wait gets its mutex back in the
// "contended" state, so its next unlock is a FUTEX_WAKE syscall whether or
// not anyone waits, on the path of every submission. The doorbell is a word
// counting rings (bits 1..31) with a SLEEPER flag (bit 0); the owner's
// state (a FIFO) stays under the owner's own mutex:
//
//   sleeper:  lock; check the state; ticket = prepare(); unlock;
//             wait(ticket); lock; check again ...
//   ringer:   lock; change the state; unlock; ring();
//
// A ring after the ticket was taken makes wait return at once; a ring
// costs a syscall only while a thread sleeps. One sleeper per doorbell.
// Futex or pthread path as hal_sync_wake_t (pthread under TSan and with
// HAL_SYNC_NO_FUTEX=1).
typedef struct hal_sync_doorbell_t {
  _Atomic uint32_t word;  // rings << 1 | SLEEPER
  bool use_futex;
  // Used only on the pthread path.
  hal_sync_mutex_t mutex;
  pthread_cond_t cond;
} hal_sync_doorbell_t;

void hal_sync_doorbell_initialize(hal_sync_doorbell_t* doorbell);
void hal_sync_doorbell_deinitialize(hal_sync_doorbell_t* doorbell);
// The rings so far: what wait() compares against. Take it before the last
// look at the state (under the owner's mutex), so that no ring is missed.
uint32_t hal_sync_doorbell_prepare(hal_sync_doorbell_t* doorbell);
// Sleeps until a ring after |ticket| (returns at once if there was one) or
// until |deadline_ns| (HAL_TIME_INFINITE_FUTURE: none). May return early
// (spuriously): the caller looks at its state, and the clock, again.
void hal_sync_doorbell_wait(hal_sync_doorbell_t* doorbell, uint32_t ticket,
                            hal_time_t deadline_ns);
// Rings: wakes the sleeper, if any. Any thread, no lock held.
void hal_sync_doorbell_ring(hal_sync_doorbell_t* doorbell);

#endif  // HAL_SYNC_WAKE_H_
