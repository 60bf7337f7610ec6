// The check every exported entry point makes first: host-callback context
// (K1) and injected faults.
#include <string.h>

#include "internal.h"
#include "vgpu/vgpu_module.h"

// Exported from both facades (the one symbol that is not the vendor's):
// see VGPU_RUNTIME_IDENTITY_SYMBOL.
__attribute__((
    visibility("default"))) extern const char vgpu_runtime_identity[];
const char vgpu_runtime_identity[] = "vgpu 1";

// True when rule |r| fires for this call (counts the call).
static bool fault_fires(vgpu_fault_rule* r) {
  uint64_t n = atomic_fetch_add(&r->calls, 1) + 1;
  bool hit = false;
  switch (r->trigger) {
    case VGPU_FAULT_ALWAYS:
      hit = true;
      break;
    case VGPU_FAULT_NTH:
      hit = n >= r->nth;
      break;
    case VGPU_FAULT_PROB: {
      // A pure function of (seed, rule, call number): reproducible.
      uint64_t h = vgpu_hash(0xfa17, (uint64_t)(r - vgpu_cfg.faults), n);
      hit = (double)(h >> 11) * 0x1.0p-53 < r->prob;
      break;
    }
  }
  if (!hit)
    return false;
  if (r->times == 0)
    return true;
  // Claim one of the |times| firings.
  uint64_t fired = atomic_load(&r->fired);
  while (fired < r->times) {
    if (atomic_compare_exchange_weak(&r->fired, &fired, fired + 1))
      return true;
  }
  return false;
}

vgpu_status vgpu_api_enter(const char* call, int (*current_device)(void),
                           int* fault_code) {
  vgpu_tls_call = call;
  if (vgpu_tls_in_callback && vgpu_cfg.strict) {
    return vgpu_misuse(VGPU_ERR_NOT_PERMITTED,
                       "called from inside a host function or host graph "
                       "node (rule K1: no vendor API calls in vendor "
                       "callbacks)");
  }
  // Counted where the fault rules count, so call k of the counts is the
  // call a rule's nth=k fails.
  if (vgpu_cfg.call_counts != NULL) {
    // Every name is in the table: it is generated from every call site.
    int index = vgpu_call_index(vgpu_facade_current, call);
    if (index >= 0)
      atomic_fetch_add(&vgpu_cfg.call_counts[index], 1);
  }
  for (int i = 0; i < vgpu_cfg.fault_count; ++i) {
    vgpu_fault_rule* r = &vgpu_cfg.faults[i];
    if (strcmp(r->call, "*") != 0 && strcmp(r->call, call) != 0)
      continue;
    if (!fault_fires(r))
      continue;
    // Logged before the loss is marked: the line precedes every effect of
    // the fault, on any thread (a log reader can tell what came after).
    vgpu_log("VGPU_FAULTS: injected fault in %s (code %d%s)", call, r->code,
             r->lost ? ", device lost" : "");
    if (r->lost) {
      int d = r->lost_device >= 0 ? r->lost_device : current_device();
      vgpu_device_mark_lost(d, call);
    }
    *fault_code = r->code;
    return VGPU_ERR_FAULT;
  }
  return VGPU_OK;
}
