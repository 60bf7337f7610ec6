// Library load and unload: configuration, devices, the leak report and
// teardown.
//
// Unload (the facade's destructor: dlclose or process exit) stops the
// stream workers, reports, in strict mode, every object and allocation
// still alive, then joins the runtime's threads, drops queued work and
// frees all it alone reaches (docs/vgpu.md, "Strict mode": the teardown).
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <unistd.h>

#include "internal.h"

const vgpu_facade* vgpu_facade_current;

// Calls in flight, and whether the unload began (vgpu_core.h). Sequentially
// consistent on both sides: a call counts itself in, then looks at the
// flag; the unload sets the flag, then looks at the count; so a call the
// unload does not count sees the flag and touches nothing.
static atomic_int vgpu_calls_in_flight;
static atomic_bool vgpu_unloading;

bool vgpu_call_begin(void) {
  atomic_fetch_add_explicit(&vgpu_calls_in_flight, 1, memory_order_seq_cst);
  if (atomic_load_explicit(&vgpu_unloading, memory_order_seq_cst)) {
    atomic_fetch_sub_explicit(&vgpu_calls_in_flight, 1, memory_order_release);
    return false;
  }
  return true;
}

void vgpu_call_end(vgpu_call_guard* guard) {
  if (guard->entered)
    atomic_fetch_sub_explicit(&vgpu_calls_in_flight, 1, memory_order_release);
}

// Set in a fork()ed child, before it runs anything else. The child has
// none of the runtime's threads, and its copy of the runtime's state is
// the parent's, in whatever state the fork caught it (the vendors' runtimes
// do not support use in the child either). So every call there returns the
// "shutting down" code and touches nothing, and the child's unload leaves
// everything as it is: it neither waits for the parent's work, nor reports,
// counts or frees what the parent holds.
static bool vgpu_forked;

static void vgpu_fork_child(void) {
  vgpu_forked = true;
  atomic_store_explicit(&vgpu_unloading, true, memory_order_seq_cst);
}

void vgpu_library_load(const vgpu_facade* facade) {
  // Unregistered by the loader with the library, were it ever unmapped.
  pthread_atfork(NULL, NULL, vgpu_fork_child);
  vgpu_facade_current = facade;
  vgpu_config_load(facade);
  vgpu_devices_init();
}

static void report_object(vgpu_object* obj, void* arg) {
  (void)arg;
  vgpu_log("leak: %s 0x%" PRIx64 " (created by %s) was never destroyed",
           vgpu_kind_name(obj->kind), obj->handle,
           obj->creator ? obj->creator : "?");
}

static size_t report_leaks(void) {
  static const vgpu_kind kinds[] = {
      VGPU_KIND_STREAM, VGPU_KIND_EVENT,  VGPU_KIND_GRAPH,
      VGPU_KIND_EXEC,   VGPU_KIND_MODULE,
  };
  size_t n = 0;
  for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); ++i)
    n += vgpu_handle_for_each(kinds[i], report_object, NULL);
  for (int d = 0; d < vgpu_device_total; ++d) {
    pthread_mutex_lock(&vgpu_devices[d].mu);
    int refs = vgpu_devices[d].primary_refs;
    pthread_mutex_unlock(&vgpu_devices[d].mu);
    if (refs > 0) {
      vgpu_log(
          "leak: primary context of device %d retained %d more "
          "time(s) than released",
          d, refs);
      n++;
    }
  }
  n += vgpu_memory_report_leaks();
  n += vgpu_pools_report_leaks();
  return n;
}

// How long the unload waits for operations the workers are running.
#define VGPU_UNLOAD_PAUSE_NS (2000ull * 1000 * 1000)

void vgpu_library_unload(void) {
  if (vgpu_forked)
    return;
  vgpu_tls_call = "unload";
  // The runtime stops moving data before any call can see "deinitialized":
  // a program told so may free what queued work reads or writes (a loss
  // ends the device's use of memory), so no worker may still run it then.
  // Queued work that has not started never will.
  if (!vgpu_sched_pause(vgpu_now_ns() + VGPU_UNLOAD_PAUSE_NS))
    vgpu_log(
        "unload: a stream worker still runs an operation (a host function "
        "that does not return?); unloading under it");
  atomic_store_explicit(&vgpu_unloading, true, memory_order_seq_cst);
  int in_flight =
      atomic_load_explicit(&vgpu_calls_in_flight, memory_order_seq_cst);
  // First: a VGPU_FAIL_EXIT_CODE exit below must not lose the counts.
  vgpu_call_counts_flush();
  if (vgpu_cfg.strict) {
    size_t n = report_leaks();
    if (n > 0)
      vgpu_log("%zu leak(s) at unload (strict mode)", n);
    uint64_t misuses = atomic_load(&vgpu_misuse_count);
    if (vgpu_cfg.fail_exit_code != 0 && (n > 0 || misuses > 0)) {
      // A test that passed but misused the runtime or leaked from it did
      // not pass: make the process say so.
      vgpu_log(
          "exiting with %d (VGPU_FAIL_EXIT_CODE): %llu misuse(s), %zu "
          "leak(s)",
          vgpu_cfg.fail_exit_code, (unsigned long long)misuses, n);
      fflush(stdout);
      fflush(stderr);
      _exit(vgpu_cfg.fail_exit_code);
    }
  }
  if (in_flight > 0) {
    // Only a process's exit unloads under its own threads' calls (a
    // dlclose with calls in flight is the caller's bug): what they use
    // stays, and the runtime's threads run on until the process ends.
    vgpu_log(
        "unload with %d call(s) in flight on other threads: the "
        "runtime is left as it is for the process's end",
        in_flight);
    return;
  }
  vgpu_sched_stop();
  vgpu_kernel_pool_stop();
  // No runtime thread is left: drop whatever work is still queued.
  for (int d = 0; d < vgpu_device_total; ++d) {
    vgpu_stream** list = NULL;
    size_t n = vgpu_device_streams(d, &list);
    for (size_t i = 0; i < n; ++i) {
      pthread_mutex_lock(&list[i]->mu);
      vgpu_stream_discard_locked(list[i]);
      pthread_mutex_unlock(&list[i]->mu);
    }
    for (size_t i = 0; i < n; ++i)
      vgpu_object_release(&list[i]->base);
    free(list);
  }
  static const vgpu_kind order[] = {
      VGPU_KIND_EXEC,   VGPU_KIND_NODE,     VGPU_KIND_GRAPH,  VGPU_KIND_EVENT,
      VGPU_KIND_STREAM, VGPU_KIND_FUNCTION, VGPU_KIND_MODULE, VGPU_KIND_CONTEXT,
  };
  for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); ++i)
    vgpu_handle_unregister_all(order[i]);
  vgpu_devices_teardown();
  vgpu_memory_teardown();
  vgpu_pools_teardown();
  vgpu_handle_unregister_all(VGPU_KIND_POOL);
  vgpu_registry_teardown();
}
