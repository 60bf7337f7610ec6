// Library load and unload: configuration, devices, the leak report and
// teardown.
//
// Unload (the facade's destructor: dlclose or process exit) reports, in
// strict mode, every object and allocation still alive, then stops and
// joins the runtime's threads, drops queued work and frees everything, so
// a load/unload loop leaks nothing.
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <unistd.h>

#include "internal.h"

const vgpu_facade* vgpu_facade_current;

void vgpu_library_load(const vgpu_facade* facade) {
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

void vgpu_library_unload(void) {
  vgpu_tls_call = "unload";
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
