// Copyright 2026 The HAL Authors.

#include "wake.h"

#include "hal/env.h"

#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if !defined(HAL_TSAN)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#define HAL_SYNC_HAVE_FUTEX 1
#endif

static struct timespec hal_sync_timespec_from_ns(hal_time_t ns) {
  struct timespec ts = {
      .tv_sec = (time_t)(ns / 1000000000ll),
      .tv_nsec = (long)(ns % 1000000000ll),
  };
  return ts;
}

static void hal_sync_check_pthread(int result, const char* what) {
  if (HAL_UNLIKELY(result != 0)) {
    // A failing pthread call on a valid object is a broken invariant.
    fprintf(stderr, "hal/sync: %s failed: %s\n", what, strerror(result));
    abort();
  }
}

//===----------------------------------------------------------------------===//
// hal_sync_mutex_t
//===----------------------------------------------------------------------===//

void hal_sync_mutex_initialize(hal_sync_mutex_t* mutex) {
  hal_sync_check_pthread(pthread_mutex_init(&mutex->handle, NULL),
                         "pthread_mutex_init");
#ifndef NDEBUG
  mutex->is_held = false;
#endif
}

void hal_sync_mutex_deinitialize(hal_sync_mutex_t* mutex) {
  hal_sync_check_pthread(pthread_mutex_destroy(&mutex->handle),
                         "pthread_mutex_destroy");
}

void hal_sync_mutex_lock(hal_sync_mutex_t* mutex) {
  hal_sync_check_pthread(pthread_mutex_lock(&mutex->handle),
                         "pthread_mutex_lock");
#ifndef NDEBUG
  mutex->owner = pthread_self();
  mutex->is_held = true;
#endif
}

void hal_sync_mutex_unlock(hal_sync_mutex_t* mutex) {
#ifndef NDEBUG
  mutex->is_held = false;
#endif
  hal_sync_check_pthread(pthread_mutex_unlock(&mutex->handle),
                         "pthread_mutex_unlock");
}

void hal_sync_cond_initialize(pthread_cond_t* cond) {
  pthread_condattr_t attr;
  hal_sync_check_pthread(pthread_condattr_init(&attr), "pthread_condattr_init");
  hal_sync_check_pthread(pthread_condattr_setclock(&attr, CLOCK_MONOTONIC),
                         "pthread_condattr_setclock");
  hal_sync_check_pthread(pthread_cond_init(cond, &attr), "pthread_cond_init");
  pthread_condattr_destroy(&attr);
}

bool hal_sync_cond_wait(pthread_cond_t* cond, hal_sync_mutex_t* mutex,
                        hal_time_t deadline_ns) {
#ifndef NDEBUG
  mutex->is_held = false;
#endif
  int result;
  if (deadline_ns == HAL_TIME_INFINITE_FUTURE) {
    result = pthread_cond_wait(cond, &mutex->handle);
  } else {
    struct timespec ts =
        hal_sync_timespec_from_ns(deadline_ns < 0 ? 0 : deadline_ns);
    result = pthread_cond_timedwait(cond, &mutex->handle, &ts);
  }
#ifndef NDEBUG
  mutex->owner = pthread_self();
  mutex->is_held = true;
#endif
  if (result == ETIMEDOUT)
    return false;
  hal_sync_check_pthread(result, "pthread_cond_wait");
  return true;
}

//===----------------------------------------------------------------------===//
// hal_sync_wake_t
//===----------------------------------------------------------------------===//

bool hal_sync_wake_futex_enabled(void) {
  // Read once; racing first calls compute the same answer. Parsed in every
  // build, so a malformed value is said whether or not it could matter.
  static _Atomic int cached = -1;
  int value = atomic_load_explicit(&cached, memory_order_relaxed);
  if (value < 0) {
    // A malformed value keeps the futex path. No status reaches a waiter
    // here, so the call that loads it says so on stderr (hal_env_check,
    // which the registry runs, returns it).
    bool no_futex = false;
    hal_status_t status = hal_env_flag("HAL_SYNC_NO_FUTEX", &no_futex, NULL);
    int expected = -1;
    if (atomic_compare_exchange_strong_explicit(
            &cached, &expected, no_futex ? 0 : 1, memory_order_relaxed,
            memory_order_relaxed) &&
        status) {
      fprintf(stderr, "hal: %s; the default is kept\n",
              hal_status_message(status));
    }
    hal_status_free(status);
    value = atomic_load_explicit(&cached, memory_order_relaxed);
  }
#if defined(HAL_SYNC_HAVE_FUTEX)
  return value == 1;
#else
  return false;
#endif
}

void hal_sync_wake_initialize(hal_sync_wake_t* wake) {
  atomic_init(&wake->word, 0);
  wake->use_futex = hal_sync_wake_futex_enabled();
  hal_sync_mutex_initialize(&wake->mutex);
  hal_sync_cond_initialize(&wake->cond);
}

void hal_sync_wake_deinitialize(hal_sync_wake_t* wake) {
  pthread_cond_destroy(&wake->cond);
  hal_sync_mutex_deinitialize(&wake->mutex);
}

void hal_sync_wake_reset(hal_sync_wake_t* wake) {
  atomic_store_explicit(&wake->word, 0, memory_order_relaxed);
}

static uint32_t hal_sync_wake_add(hal_sync_wake_t* wake, bool failed) {
  uint32_t observed = atomic_load_explicit(&wake->word, memory_order_relaxed);
  uint32_t desired;
  do {
    desired = ((observed & HAL_SYNC_WAKE_COUNT_MASK) + 1) |
              (observed & HAL_SYNC_WAKE_FAILED_BIT) |
              (failed ? HAL_SYNC_WAKE_FAILED_BIT : 0);
    // Release: the waiter that sees this post sees what we wrote before it.
  } while (!atomic_compare_exchange_weak_explicit(&wake->word, &observed,
                                                  desired, memory_order_release,
                                                  memory_order_relaxed));
  return desired;
}

static bool hal_sync_wake_is_done(uint32_t word, uint32_t needed) {
  return (word & HAL_SYNC_WAKE_FAILED_BIT) ||
         (word & HAL_SYNC_WAKE_COUNT_MASK) >= needed;
}

#if defined(HAL_SYNC_HAVE_FUTEX)

static void hal_sync_futex_wake_all(_Atomic uint32_t* word) {
  syscall(SYS_futex, (uint32_t*)word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL,
          0);
}

// Sleeps while *word == expected, until |deadline_ns|. Returns false on
// timeout. FUTEX_WAIT_BITSET takes an absolute CLOCK_MONOTONIC deadline.
static bool hal_sync_futex_wait(_Atomic uint32_t* word, uint32_t expected,
                                hal_time_t deadline_ns) {
  struct timespec ts;
  struct timespec* timeout = NULL;
  if (deadline_ns != HAL_TIME_INFINITE_FUTURE) {
    ts = hal_sync_timespec_from_ns(deadline_ns < 0 ? 0 : deadline_ns);
    timeout = &ts;
  }
  long result = syscall(SYS_futex, (uint32_t*)word, FUTEX_WAIT_BITSET_PRIVATE,
                        expected, timeout, NULL, FUTEX_BITSET_MATCH_ANY);
  return !(result == -1 && errno == ETIMEDOUT);
}

#endif  // HAL_SYNC_HAVE_FUTEX

void hal_sync_wake_post(hal_sync_wake_t* wake, bool failed) {
#if defined(HAL_SYNC_HAVE_FUTEX)
  if (wake->use_futex) {
    hal_sync_wake_add(wake, failed);
    hal_sync_futex_wake_all(&wake->word);
    return;
  }
#endif
  // The word changes under the mutex so a waiter between its check and its
  // cond wait cannot miss the broadcast.
  hal_sync_mutex_lock(&wake->mutex);
  hal_sync_wake_add(wake, failed);
  pthread_cond_broadcast(&wake->cond);
  hal_sync_mutex_unlock(&wake->mutex);
}

uint32_t hal_sync_wake_wait(hal_sync_wake_t* wake, uint32_t needed,
                            hal_time_t deadline_ns) {
  uint32_t word = atomic_load_explicit(&wake->word, memory_order_acquire);
  if (hal_sync_wake_is_done(word, needed))
    return word;
  if (deadline_ns != HAL_TIME_INFINITE_FUTURE &&
      hal_time_now() >= deadline_ns) {
    return word;
  }
#if defined(HAL_SYNC_HAVE_FUTEX)
  if (wake->use_futex) {
    for (;;) {
      bool in_time = hal_sync_futex_wait(&wake->word, word, deadline_ns);
      word = atomic_load_explicit(&wake->word, memory_order_acquire);
      if (hal_sync_wake_is_done(word, needed) || !in_time)
        return word;
      // Spurious wake-up or a post that is not enough yet: sleep again.
      if (deadline_ns != HAL_TIME_INFINITE_FUTURE &&
          hal_time_now() >= deadline_ns) {
        return word;
      }
    }
  }
#endif
  hal_sync_mutex_lock(&wake->mutex);
  for (;;) {
    word = atomic_load_explicit(&wake->word, memory_order_acquire);
    if (hal_sync_wake_is_done(word, needed))
      break;
    if (!hal_sync_cond_wait(&wake->cond, &wake->mutex, deadline_ns)) {
      word = atomic_load_explicit(&wake->word, memory_order_acquire);
      break;
    }
  }
  hal_sync_mutex_unlock(&wake->mutex);
  return word;
}

//===----------------------------------------------------------------------===//
// hal_sync_doorbell_t
//===----------------------------------------------------------------------===//

#define HAL_SYNC_DOORBELL_SLEEPER UINT32_C(1)
#define HAL_SYNC_DOORBELL_RING UINT32_C(2)

void hal_sync_doorbell_initialize(hal_sync_doorbell_t* doorbell) {
  atomic_init(&doorbell->word, 0);
  doorbell->use_futex = hal_sync_wake_futex_enabled();
  hal_sync_mutex_initialize(&doorbell->mutex);
  hal_sync_cond_initialize(&doorbell->cond);
}

void hal_sync_doorbell_deinitialize(hal_sync_doorbell_t* doorbell) {
  pthread_cond_destroy(&doorbell->cond);
  hal_sync_mutex_deinitialize(&doorbell->mutex);
}

uint32_t hal_sync_doorbell_prepare(hal_sync_doorbell_t* doorbell) {
  return atomic_load_explicit(&doorbell->word, memory_order_acquire) &
         ~HAL_SYNC_DOORBELL_SLEEPER;
}

void hal_sync_doorbell_wait(hal_sync_doorbell_t* doorbell, uint32_t ticket,
                            hal_time_t deadline_ns) {
#if defined(HAL_SYNC_HAVE_FUTEX)
  if (doorbell->use_futex) {
    uint32_t word = atomic_load_explicit(&doorbell->word, memory_order_acquire);
    while ((word & ~HAL_SYNC_DOORBELL_SLEEPER) == ticket) {
      if (!(word & HAL_SYNC_DOORBELL_SLEEPER)) {
        // Announce the sleep; a ring that lands first changes the count
        // and fails the exchange, and the loop sees it.
        if (!atomic_compare_exchange_weak_explicit(
                &doorbell->word, &word, word | HAL_SYNC_DOORBELL_SLEEPER,
                memory_order_acquire, memory_order_acquire)) {
          continue;
        }
        word |= HAL_SYNC_DOORBELL_SLEEPER;
      }
      if (!hal_sync_futex_wait(&doorbell->word, word, deadline_ns))
        return;  // the deadline passed
      word = atomic_load_explicit(&doorbell->word, memory_order_acquire);
    }
    return;
  }
#endif
  hal_sync_mutex_lock(&doorbell->mutex);
  while (atomic_load_explicit(&doorbell->word, memory_order_acquire) ==
         ticket) {
    if (!hal_sync_cond_wait(&doorbell->cond, &doorbell->mutex, deadline_ns))
      break;  // the deadline passed
  }
  hal_sync_mutex_unlock(&doorbell->mutex);
}

void hal_sync_doorbell_ring(hal_sync_doorbell_t* doorbell) {
#if defined(HAL_SYNC_HAVE_FUTEX)
  if (doorbell->use_futex) {
    // Count the ring and clear SLEEPER in one step: a sleeper woken here
    // announces itself again before it sleeps again.
    uint32_t word = atomic_load_explicit(&doorbell->word, memory_order_relaxed);
    uint32_t rung;
    do {
      rung = (word + HAL_SYNC_DOORBELL_RING) & ~HAL_SYNC_DOORBELL_SLEEPER;
    } while (!atomic_compare_exchange_weak_explicit(&doorbell->word, &word,
                                                    rung, memory_order_release,
                                                    memory_order_relaxed));
    if (word & HAL_SYNC_DOORBELL_SLEEPER)
      hal_sync_futex_wake_all(&doorbell->word);
    return;
  }
#endif
  // The count changes under the mutex, so a sleeper between its check and
  // its cond wait cannot miss the broadcast.
  hal_sync_mutex_lock(&doorbell->mutex);
  atomic_fetch_add_explicit(&doorbell->word, HAL_SYNC_DOORBELL_RING,
                            memory_order_release);
  pthread_cond_broadcast(&doorbell->cond);
  hal_sync_mutex_unlock(&doorbell->mutex);
}
