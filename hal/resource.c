// Copyright 2026 The HAL Authors.

#include "hal/impl/resource.h"

#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "hal/status.h"
#include "hal/time.h"

HAL_API void hal_resource_initialize(const void* vtable, hal_resource_t* parent,
                                     hal_resource_t* out_resource) {
  atomic_init(&out_resource->ref_count, 1);
  out_resource->vtable = vtable;
  out_resource->kind = HAL_RESOURCE_KIND_OTHER;
  out_resource->parent = parent;
  out_resource->deferred.next = NULL;
  out_resource->deferred.run = NULL;
  if (parent)
    hal_resource_retain(parent);
}

// The kind with its article, for messages.
static const char* hal_resource_kind_name(hal_resource_kind_t kind) {
  switch (kind) {
    case HAL_RESOURCE_KIND_DRIVER:
      return "a driver";
    case HAL_RESOURCE_KIND_DEVICE:
      return "a device";
    case HAL_RESOURCE_KIND_BUFFER:
      return "a buffer";
    case HAL_RESOURCE_KIND_SEMAPHORE:
      return "a semaphore";
    case HAL_RESOURCE_KIND_COMMAND_BUFFER:
      return "a command buffer";
    case HAL_RESOURCE_KIND_EXECUTABLE:
      return "an executable";
    case HAL_RESOURCE_KIND_FILE:
      return "a file";
    case HAL_RESOURCE_KIND_CHANNEL:
      return "a channel";
    case HAL_RESOURCE_KIND_OTHER:
      break;
  }
  return "a resource of no public kind";
}

HAL_API void hal_resource_initialize_kind(hal_resource_kind_t kind,
                                          const void* vtable,
                                          hal_resource_t* parent,
                                          hal_resource_t* out_resource) {
  hal_resource_initialize(vtable, parent, out_resource);
  out_resource->kind = kind;
}

HAL_API hal_status_t hal_resource_kind_mismatch(const void* resource,
                                                hal_resource_kind_t kind,
                                                const char* what) {
  if (!resource)
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT, "%s is NULL", what);
  hal_resource_kind_t actual = ((const hal_resource_t*)resource)->kind;
  return hal_make_status(HAL_STATUS_INVALID_ARGUMENT, "%s %p is %s, not %s",
                         what, resource, hal_resource_kind_name(actual),
                         hal_resource_kind_name(kind));
}

HAL_API hal_status_t hal_resource_check_create(const void* parent,
                                               hal_resource_kind_t kind,
                                               const char* what, void** out,
                                               const char* out_name) {
  if (!out)
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT, "%s is NULL", out_name);
  *out = NULL;
  return hal_resource_check_kind(parent, kind, what);
}

HAL_API void hal_resource_cast_failed(const void* resource, const void* vtable,
                                      const char* type_name) {
  fprintf(stderr,
          "hal: %p is not a %s: its vtable is %p, a %s has %p (a cast of an "
          "object of another type)\n",
          resource, type_name, (void*)((const hal_resource_t*)resource)->vtable,
          type_name, vtable);
  abort();
}

HAL_API void hal_resource_retain(hal_resource_t* resource) {
  if (!resource)
    return;
  // Relaxed is enough: a reference can only be copied from one already held.
  intptr_t previous =
      atomic_fetch_add_explicit(&resource->ref_count, 1, memory_order_relaxed);
  if (HAL_UNLIKELY(previous <= 0)) {
    fprintf(stderr, "hal: retain of a destroyed resource %p\n",
            (void*)resource);
    abort();
  }
}

HAL_API bool hal_resource_try_retain(hal_resource_t* resource) {
  intptr_t count =
      atomic_load_explicit(&resource->ref_count, memory_order_relaxed);
  while (count > 0) {
    if (atomic_compare_exchange_weak_explicit(&resource->ref_count, &count,
                                              count + 1, memory_order_acquire,
                                              memory_order_relaxed)) {
      return true;
    }
  }
  return false;
}

//===----------------------------------------------------------------------===//
// Deferred destruction
//===----------------------------------------------------------------------===//

// Depth of hal_resource_defer_destruction_enter() on this thread.
static _Thread_local int hal_defer_depth;
// Depth of hal_resource_defer_shutdown_enter() on this thread.
static _Thread_local int hal_defer_shutdown_depth;

// The release thread and its list. The thread is started on first use,
// detached, and lives until the process exits; it runs libhal code between
// destroys, so it may release the last reference to a plugin's driver (and
// unload the plugin) safely.
static struct {
  pthread_once_t once;
  pthread_mutex_t mutex;
  pthread_cond_t work_cond;   // list became non-empty
  pthread_cond_t idle_cond;   // list empty and nothing being destroyed
  hal_deferred_node_t* head;  // under |mutex|
  hal_deferred_node_t* tail;  // under |mutex|
  int busy;                   // destroys running now; under |mutex|
  bool started;               // the thread exists; under |mutex|
  // Resource destroys handed over and not finished; under |mutex|.
  int destroys;
  // Resource destroys finished; written under |mutex|, read without it.
  _Atomic uint64_t destroys_finished;
  // Other work running now (a device shutdown), which may join the thread
  // of a waiter for destroys; under |mutex|.
  int others_running;
  pthread_cond_t destroys_cond;  // |destroys| fell to zero
} hal_deferred = {
    .once = PTHREAD_ONCE_INIT,
    .mutex = PTHREAD_MUTEX_INITIALIZER,
    .work_cond = PTHREAD_COND_INITIALIZER,
    .idle_cond = PTHREAD_COND_INITIALIZER,
    .destroys_cond = PTHREAD_COND_INITIALIZER,
};

static void hal_resource_destroy_chain(hal_resource_t* resource);
static void hal_resource_run_deferred_destroy(hal_deferred_node_t* node);

static void* hal_deferred_thread_main(void* arg) {
  (void)arg;
  // Threads inherit their creator's name (often a queue's): say what this
  // one is in debuggers and ps.
  pthread_setname_np(pthread_self(), "hal-release");
  pthread_mutex_lock(&hal_deferred.mutex);
  for (;;) {
    while (!hal_deferred.head) {
      pthread_cond_wait(&hal_deferred.work_cond, &hal_deferred.mutex);
    }
    hal_deferred_node_t* node = hal_deferred.head;
    hal_deferred.head = node->next;
    if (!hal_deferred.head)
      hal_deferred.tail = NULL;
    node->next = NULL;
    ++hal_deferred.busy;
    // Read now: the node's memory may be gone once it ran.
    bool is_destroy = node->run == hal_resource_run_deferred_destroy;
    if (!is_destroy) {
      // A waiter for destroys on a queue thread may be what this work
      // joins: it stops waiting (hal_resource_wait_deferred_destroys).
      ++hal_deferred.others_running;
      pthread_cond_broadcast(&hal_deferred.destroys_cond);
      pthread_cond_broadcast(&hal_deferred.idle_cond);
    }
    pthread_mutex_unlock(&hal_deferred.mutex);
    // Never under the lock: the work may defer more.
    node->run(node);
    pthread_mutex_lock(&hal_deferred.mutex);
    if (!is_destroy)
      --hal_deferred.others_running;
    --hal_deferred.busy;
    if (!hal_deferred.head && hal_deferred.busy == 0) {
      pthread_cond_broadcast(&hal_deferred.idle_cond);
    }
  }
  return NULL;
}

// At exit, finish what was handed over so no destroy races the process's
// own teardown (and LeakSanitizer sees a quiet heap). Bounded: a destroy
// that hangs is reported rather than hanging the exit forever.
static void hal_deferred_drain_at_exit(void) {
  pthread_mutex_lock(&hal_deferred.mutex);
  hal_time_t deadline = hal_time_now() + 30ll * 1000 * 1000 * 1000;
  while (hal_deferred.head || hal_deferred.busy) {
    struct timespec ts = {.tv_sec = (time_t)(deadline / 1000000000ll),
                          .tv_nsec = (long)(deadline % 1000000000ll)};
    if (pthread_cond_timedwait(&hal_deferred.idle_cond, &hal_deferred.mutex,
                               &ts) != 0 &&
        hal_time_now() >= deadline) {
      fprintf(stderr,
              "hal: deferred resource destruction still running at exit\n");
      break;
    }
  }
  pthread_mutex_unlock(&hal_deferred.mutex);
}

// The conditions waited with CLOCK_MONOTONIC deadlines.
static void hal_deferred_init_timed_conds(void) {
  pthread_condattr_t attr;
  pthread_condattr_init(&attr);
  pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
  pthread_cond_init(&hal_deferred.idle_cond, &attr);
  pthread_cond_init(&hal_deferred.destroys_cond, &attr);
  pthread_condattr_destroy(&attr);
}

// In a fork() child: the release thread and the destroys handed to it are
// the parent's (so are the threads and devices of what they destroy). The
// child forgets them, so its exit waits for none of them, and its own
// first hand-over starts a thread of its own. Its locks and conditions are
// made anew: another of the parent's threads may have held or waited on
// them at the fork (destroying a condition with waiters would block).
static void hal_deferred_fork_child(void) {
  pthread_mutex_init(&hal_deferred.mutex, NULL);
  pthread_cond_init(&hal_deferred.work_cond, NULL);
  hal_deferred_init_timed_conds();
  hal_deferred.head = NULL;
  hal_deferred.tail = NULL;
  hal_deferred.busy = 0;
  hal_deferred.started = false;
  hal_deferred.destroys = 0;
  hal_deferred.others_running = 0;
}

static void hal_deferred_init(void) {
  pthread_cond_destroy(&hal_deferred.idle_cond);
  pthread_cond_destroy(&hal_deferred.destroys_cond);
  hal_deferred_init_timed_conds();
  atexit(hal_deferred_drain_at_exit);
  pthread_atfork(NULL, NULL, hal_deferred_fork_child);
}

HAL_API void hal_resource_defer_node(hal_deferred_node_t* node) {
  pthread_once(&hal_deferred.once, hal_deferred_init);
  pthread_mutex_lock(&hal_deferred.mutex);
  if (!hal_deferred.started) {
    pthread_t thread;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int error = pthread_create(&thread, &attr, hal_deferred_thread_main, NULL);
    pthread_attr_destroy(&attr);
    if (error != 0) {
      // Without the thread nothing can be destroyed safely here: this is a
      // process out of threads, not a recoverable user error.
      fprintf(stderr, "hal: cannot start the release thread (error %d)\n",
              error);
      abort();
    }
    hal_deferred.started = true;
  }
  node->next = NULL;
  if (hal_deferred.tail) {
    hal_deferred.tail->next = node;
  } else {
    hal_deferred.head = node;
  }
  hal_deferred.tail = node;
  pthread_cond_signal(&hal_deferred.work_cond);
  pthread_mutex_unlock(&hal_deferred.mutex);
}

HAL_API void hal_resource_defer_destruction_enter(void) {
  ++hal_defer_depth;
}

HAL_API bool hal_resource_destruction_deferred_here(void) {
  return hal_defer_depth > 0;
}

HAL_API void hal_resource_defer_destruction_exit(void) {
  if (hal_defer_depth <= 0) {
    fprintf(stderr, "hal: unbalanced hal_resource_defer_destruction_exit\n");
    abort();
  }
  --hal_defer_depth;
}

HAL_API void hal_resource_defer_shutdown_enter(void) {
  ++hal_defer_shutdown_depth;
}

HAL_API void hal_resource_defer_shutdown_exit(void) {
  if (hal_defer_shutdown_depth <= 0) {
    fprintf(stderr, "hal: unbalanced hal_resource_defer_shutdown_exit\n");
    abort();
  }
  --hal_defer_shutdown_depth;
}

HAL_API bool hal_resource_shutdown_deferred_here(void) {
  return hal_defer_depth > 0 || hal_defer_shutdown_depth > 0;
}

HAL_API void hal_resource_wait_deferred(void) {
  // Inside a bracket (a host call, a timepoint callback, a queue thread)
  // the release thread may be running a device shutdown that joins this
  // very thread: such a waiter stops once it runs anything but a destroy,
  // as hal_resource_wait_deferred_destroys does.
  bool may_be_joined = hal_resource_shutdown_deferred_here();
  pthread_once(&hal_deferred.once, hal_deferred_init);
  pthread_mutex_lock(&hal_deferred.mutex);
  while ((hal_deferred.head || hal_deferred.busy) &&
         !(may_be_joined && hal_deferred.others_running > 0)) {
    pthread_cond_wait(&hal_deferred.idle_cond, &hal_deferred.mutex);
  }
  pthread_mutex_unlock(&hal_deferred.mutex);
}

//===----------------------------------------------------------------------===//
// Release
//===----------------------------------------------------------------------===//

// Drops one reference; true when it was the last.
static bool hal_resource_drop(hal_resource_t* resource) {
  // acq_rel on the count itself (no standalone fence, which TSan cannot
  // see): the last releaser observes every write made under the other
  // references before it destroys.
  intptr_t previous =
      atomic_fetch_sub_explicit(&resource->ref_count, 1, memory_order_acq_rel);
  if (HAL_UNLIKELY(previous <= 0)) {
    fprintf(stderr, "hal: release of a destroyed resource %p\n",
            (void*)resource);
    abort();
  }
  return previous == 1;
}

// Destroys |resource| (count zero), then releases its parents in turn.
static void hal_resource_destroy_chain(hal_resource_t* resource) {
  while (resource) {
    hal_resource_t* parent = resource->parent;
    hal_resource_destroy_fn_t destroy =
        *(const hal_resource_destroy_fn_t*)resource->vtable;
    destroy(resource);
    // The parent goes last: its code (a plugin) must outlive the child's
    // destroy. Iterate instead of recursing so long chains cannot overflow.
    resource = (parent && hal_resource_drop(parent)) ? parent : NULL;
  }
}

static void hal_resource_run_deferred_destroy(hal_deferred_node_t* node) {
  hal_resource_t* resource =
      (hal_resource_t*)((char*)node - offsetof(hal_resource_t, deferred));
  hal_resource_destroy_chain(resource);
  pthread_mutex_lock(&hal_deferred.mutex);
  // Release: what the destroy gave back is visible to a caller that reads
  // the new count (hal_resource_wait_deferred_destroys).
  atomic_fetch_add_explicit(&hal_deferred.destroys_finished, 1,
                            memory_order_release);
  if (--hal_deferred.destroys == 0)
    pthread_cond_broadcast(&hal_deferred.destroys_cond);
  pthread_mutex_unlock(&hal_deferred.mutex);
}

HAL_API void hal_resource_release(hal_resource_t* resource) {
  if (!resource || !hal_resource_drop(resource))
    return;
  if (hal_defer_depth > 0) {
    pthread_once(&hal_deferred.once, hal_deferred_init);
    pthread_mutex_lock(&hal_deferred.mutex);
    ++hal_deferred.destroys;
    pthread_mutex_unlock(&hal_deferred.mutex);
    resource->deferred.run = hal_resource_run_deferred_destroy;
    hal_resource_defer_node(&resource->deferred);
  } else {
    hal_resource_destroy_chain(resource);
  }
}

HAL_API uint64_t hal_resource_deferred_destroys_finished(void) {
  return atomic_load_explicit(&hal_deferred.destroys_finished,
                              memory_order_acquire);
}

HAL_API bool hal_resource_wait_deferred_destroys(uint64_t finished_before,
                                                 hal_time_t deadline_ns) {
  // Inside a bracket (a queue thread, a host call, a timepoint callback)
  // the release thread may run work that waits for this very thread: a
  // device shutdown joining it, or waiting for the callback's batch. Such
  // a waiter stops once the release thread runs anything but a destroy.
  // Resource destroys never wait for a queue thread: a device's queues are
  // stopped by its shutdown, before its last resource reference can go.
  bool may_be_joined = hal_resource_shutdown_deferred_here();
  pthread_once(&hal_deferred.once, hal_deferred_init);
  pthread_mutex_lock(&hal_deferred.mutex);
  while (hal_deferred.destroys > 0 &&
         !(may_be_joined && hal_deferred.others_running > 0)) {
    struct timespec ts = {.tv_sec = (time_t)(deadline_ns / 1000000000ll),
                          .tv_nsec = (long)(deadline_ns % 1000000000ll)};
    if (pthread_cond_timedwait(&hal_deferred.destroys_cond, &hal_deferred.mutex,
                               &ts) != 0 &&
        hal_time_now() >= deadline_ns) {
      break;
    }
  }
  // Not "was one pending at the call": the caller's try may have failed
  // while a destroy was running, and that destroy may have finished before
  // this call took the lock. Its memory is back all the same.
  bool finished = hal_resource_deferred_destroys_finished() != finished_before;
  pthread_mutex_unlock(&hal_deferred.mutex);
  return finished;
}

HAL_API intptr_t hal_resource_ref_count(const void* resource) {
  return atomic_load_explicit(&((hal_resource_t*)resource)->ref_count,
                              memory_order_relaxed);
}
