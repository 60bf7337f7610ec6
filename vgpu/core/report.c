// Diagnostics: strict-mode misuse reports and plain log lines.
//
// Every message names the vendor ("vgpu[cuda]"), the API call the thread is
// in and the object, so a failing test or driver log points at the culprit.
// With VGPU_ABORT_ON_MISUSE=1 a misuse report aborts right there, so a
// debugger or core dump shows the culprit's stack.
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"

_Thread_local int vgpu_tls_in_callback;
_Thread_local const char* vgpu_tls_call;

static const char* vendor(void) {
  return vgpu_facade_current != NULL ? vgpu_facade_current->vendor : "core";
}

void vgpu_log(const char* fmt, ...) {
  char line[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof(line), fmt, ap);
  va_end(ap);
  // One fprintf per line so concurrent reports do not interleave.
  fprintf(stderr, "vgpu[%s]: %s\n", vendor(), line);
}

atomic_uint_fast64_t vgpu_misuse_count;

vgpu_status vgpu_misuse(vgpu_status status, const char* fmt, ...) {
  if (!vgpu_cfg.strict)
    return status;
  char line[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof(line), fmt, ap);
  va_end(ap);
  const char* call = vgpu_tls_call != NULL ? vgpu_tls_call : "(runtime)";
  fprintf(stderr, "vgpu[%s] strict: %s: %s\n", vendor(), call, line);
  atomic_fetch_add(&vgpu_misuse_count, 1);
  if (vgpu_cfg.abort_on_misuse) {
    fprintf(stderr, "vgpu[%s]: aborting (VGPU_ABORT_ON_MISUSE=1)\n", vendor());
    abort();
  }
  return status;
}
