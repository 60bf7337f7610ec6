// Marks: completion points in a stream (what an event record captures).
//
// A mark completes exactly once, on the worker that runs the MARK operation
// (or at teardown). Completion sets |done| under |mu|, wakes host waiters
// through |cv| and then, with |mu| dropped, runs the callbacks of streams
// blocked on it. A stream completes its MARK operation's mark inside the
// critical section that retires the operation (stream.c) and runs the
// callbacks after leaving it, hence the two halves of vgpu_mark_complete.
// |done| is also read without the lock (event query) with acquire ordering,
// pairing with the release store, so a caller that sees done also sees
// everything the device wrote before.
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <time.h>

#include <string.h>

#include "internal.h"

void vgpu_cond_init(pthread_cond_t* cv) {
  pthread_condattr_t attr;
  pthread_condattr_init(&attr);
  pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
  pthread_cond_init(cv, &attr);
  pthread_condattr_destroy(&attr);
}

uint64_t vgpu_wait_deadline(void) {
  if (vgpu_cfg.max_wait_ms == 0)
    return 0;
  return vgpu_now_ns() + (uint64_t)vgpu_cfg.max_wait_ms * 1000000ull;
}

bool vgpu_cond_wait_bounded(pthread_cond_t* cv, pthread_mutex_t* mu,
                            uint64_t deadline_ns) {
  if (deadline_ns == 0) {
    pthread_cond_wait(cv, mu);
    return true;
  }
  struct timespec ts = {(time_t)(deadline_ns / 1000000000ull),
                        (long)(deadline_ns % 1000000000ull)};
  return pthread_cond_timedwait(cv, mu, &ts) != ETIMEDOUT;
}

void* vgpu_bin_take(vgpu_bin* bin, size_t size) {
  pthread_mutex_lock(&bin->mu);
  void* block = bin->head;
  if (block != NULL) {
    bin->head = *(void**)block;
    --bin->count;
  }
  pthread_mutex_unlock(&bin->mu);
  if (block == NULL)
    return calloc(1, size);
  memset(block, 0, size);
  return block;
}

void vgpu_bin_put(vgpu_bin* bin, void* block) {
  pthread_mutex_lock(&bin->mu);
  if (bin->count < bin->limit) {
    *(void**)block = bin->head;
    bin->head = block;
    ++bin->count;
    block = NULL;
  }
  pthread_mutex_unlock(&bin->mu);
  free(block);
}

static vgpu_bin mark_bin = VGPU_BIN_INIT(256);

vgpu_mark* vgpu_mark_create(int device) {
  vgpu_mark* m = vgpu_bin_take(&mark_bin, sizeof(*m));
  if (m == NULL)
    return NULL;
  atomic_init(&m->refs, 1);
  atomic_init(&m->done, false);
  pthread_mutex_init(&m->mu, NULL);
  vgpu_cond_init(&m->cv);
  m->device = device;
  return m;
}

void vgpu_mark_retain(vgpu_mark* mark) {
  atomic_fetch_add_explicit(&mark->refs, 1, memory_order_relaxed);
}

void vgpu_mark_release(vgpu_mark* mark) {
  if (mark == NULL)
    return;
  if (atomic_fetch_sub_explicit(&mark->refs, 1, memory_order_acq_rel) != 1)
    return;
  pthread_mutex_destroy(&mark->mu);
  pthread_cond_destroy(&mark->cv);
  vgpu_bin_put(&mark_bin, mark);
}

bool vgpu_mark_done(vgpu_mark* mark) {
  return atomic_load_explicit(&mark->done, memory_order_acquire);
}

vgpu_mark_waiter* vgpu_mark_complete_deferred(vgpu_mark* mark,
                                              vgpu_status status) {
  pthread_mutex_lock(&mark->mu);
  if (atomic_load_explicit(&mark->done, memory_order_relaxed)) {
    pthread_mutex_unlock(&mark->mu);
    return NULL;
  }
  mark->status = status;
  mark->time_ns = vgpu_now_ns();
  atomic_store_explicit(&mark->done, true, memory_order_release);
  vgpu_mark_waiter* waiters = mark->waiters;
  mark->waiters = NULL;
  pthread_cond_broadcast(&mark->cv);
  pthread_mutex_unlock(&mark->mu);
  return waiters;
}

void vgpu_mark_run_waiters(vgpu_mark_waiter* waiters) {
  // Callbacks run without the mark's lock (they take stream locks).
  while (waiters != NULL) {
    vgpu_mark_waiter* next = waiters->next;
    waiters->next = NULL;
    waiters->fn(waiters);
    waiters = next;
  }
}

void vgpu_mark_complete(vgpu_mark* mark, vgpu_status status) {
  vgpu_mark_run_waiters(vgpu_mark_complete_deferred(mark, status));
}

bool vgpu_mark_add_waiter(vgpu_mark* mark, vgpu_mark_waiter* waiter) {
  pthread_mutex_lock(&mark->mu);
  bool registered = !atomic_load_explicit(&mark->done, memory_order_relaxed);
  if (registered) {
    waiter->next = mark->waiters;
    mark->waiters = waiter;
  }
  pthread_mutex_unlock(&mark->mu);
  return registered;
}

bool vgpu_mark_remove_waiter(vgpu_mark* mark, vgpu_mark_waiter* waiter) {
  bool removed = false;
  pthread_mutex_lock(&mark->mu);
  for (vgpu_mark_waiter** p = &mark->waiters; *p != NULL; p = &(*p)->next) {
    if (*p == waiter) {
      *p = waiter->next;
      removed = true;
      break;
    }
  }
  pthread_mutex_unlock(&mark->mu);
  return removed;
}

vgpu_status vgpu_mark_wait(vgpu_mark* mark, const char* what, uint64_t handle) {
  if (vgpu_mark_done(mark))
    return mark->status;
  uint64_t deadline = vgpu_wait_deadline();
  vgpu_status status = VGPU_OK;
  pthread_mutex_lock(&mark->mu);
  while (!atomic_load_explicit(&mark->done, memory_order_relaxed)) {
    if (!vgpu_cond_wait_bounded(&mark->cv, &mark->mu, deadline)) {
      status = VGPU_ERR_TIMEOUT;
      break;
    }
  }
  if (status == VGPU_OK)
    status = mark->status;
  pthread_mutex_unlock(&mark->mu);
  if (status == VGPU_ERR_TIMEOUT) {
    vgpu_log("%s: waited more than VGPU_MAX_WAIT_MS=%u ms on %s 0x%" PRIx64,
             vgpu_tls_call ? vgpu_tls_call : "?", vgpu_cfg.max_wait_ms, what,
             handle);
  }
  return status;
}
