// One unit of device work (copy, fill, kernel, host function), shared by
// stream operations and graph nodes.
#include <stdlib.h>
#include <string.h>

#include "ccl.h"
#include "internal.h"

vgpu_status vgpu_work_uses(const vgpu_work* work, vgpu_uses* uses) {
  switch (work->type) {
    case VGPU_WORK_COPY:
      return vgpu_copy_check(&work->copy, uses);
    case VGPU_WORK_FILL:
      return vgpu_fill_check(&work->fill, uses);
    case VGPU_WORK_KERNEL:
      return vgpu_launch_uses(work->launch, uses);
    case VGPU_WORK_EMPTY:
    case VGPU_WORK_HOST:
    case VGPU_WORK_COLLECTIVE:  // checked by vgpu_ccl_enqueue
    case VGPU_WORK_MEM_ALLOC:   // checked by vgpu_alloc_async
    case VGPU_WORK_MEM_FREE:    // checked by vgpu_free_async
      break;
  }
  return VGPU_OK;
}

void vgpu_work_run(const vgpu_work* work, vgpu_status status) {
  switch (work->type) {
    case VGPU_WORK_EMPTY:
      break;
    case VGPU_WORK_COPY:
      vgpu_sleep_us(work->delay_us);
      if (status == VGPU_OK)
        vgpu_copy_run(&work->copy);
      break;
    case VGPU_WORK_FILL:
      if (status == VGPU_OK)
        vgpu_fill_run(&work->fill);
      break;
    case VGPU_WORK_KERNEL:
      if (status == VGPU_OK)
        vgpu_launch_run(work->launch);
      break;
    case VGPU_WORK_HOST:
      // Any API call the function makes is a K1 violation (entry.c).
      vgpu_tls_in_callback = 1;
      work->host.invoke(&work->host, status);
      vgpu_tls_in_callback = 0;
      break;
    case VGPU_WORK_COLLECTIVE:
      vgpu_ccl_work_run(&work->collective, status);
      break;
    case VGPU_WORK_MEM_ALLOC:
    case VGPU_WORK_MEM_FREE:
      // On a lost device too: the memory's life goes on as queued.
      vgpu_pool_work_run(work);
      break;
  }
}

void vgpu_work_copy_from(vgpu_work* dst, const vgpu_work* src) {
  *dst = *src;
  dst->staged = NULL;  // stream copies only: never a graph node's
  if (dst->launch != NULL)
    vgpu_launch_retain(dst->launch);
  if (dst->collective.done != NULL)
    vgpu_mark_retain(dst->collective.done);
  if (dst->ordered != NULL)
    atomic_fetch_add(&dst->ordered->refs, 1);
}

void vgpu_work_clear(vgpu_work* work) {
  free(work->staged);
  if (work->launch != NULL)
    vgpu_launch_release(work->launch);
  if (work->collective.done != NULL)
    vgpu_mark_release(work->collective.done);
  if (work->ordered != NULL) {
    vgpu_pool_work_dropped(work);  // no-op once it ran
    vgpu_alloc_release(work->ordered);
  }
  memset(work, 0, sizeof(*work));
}
