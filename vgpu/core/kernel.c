// Kernel launches: argument capture and grid execution on CPU threads.
//
// A launch copies the argument values at call time (as the vendors do), so
// the caller may reuse its kernelParams array at once. Running a grid posts
// a job that the kernel threads (VGPU_KERNEL_THREADS) and the launching
// worker share: each takes the next block index from an atomic counter until
// none are left. The launching worker then waits until no kernel thread is
// inside the job; the job lives on its stack.
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

typedef struct kjob {
  struct kjob* next;
  const vgpu_launch* launch;
  atomic_uint_fast64_t next_block;
  uint64_t total_blocks;
  int active;   // kernel threads inside the job, guarded by pool.mu
  bool listed;  // in pool.jobs, guarded by pool.mu
} kjob;

static struct {
  pthread_mutex_t mu;
  pthread_cond_t work_cv;  // jobs listed, or shutdown
  pthread_cond_t done_cv;  // a job's |active| dropped to zero
  kjob* jobs;
  bool shutdown;
  bool started;
  pthread_t* threads;
  int count;
} pool = {.mu = PTHREAD_MUTEX_INITIALIZER,
          .work_cv = PTHREAD_COND_INITIALIZER,
          .done_cv = PTHREAD_COND_INITIALIZER};

void vgpu_launch_retain(vgpu_launch* l) {
  atomic_fetch_add_explicit(&l->refs, 1, memory_order_relaxed);
}

void vgpu_launch_release(vgpu_launch* l) {
  if (l == NULL)
    return;
  if (atomic_fetch_sub_explicit(&l->refs, 1, memory_order_acq_rel) != 1)
    return;
  vgpu_object_release(&l->function->base);
  free(l->arg_data);
  free(l->argv);
  free(l);
}

static size_t arg_align(uint32_t size) {
  size_t a = 1;
  while (a < size && a < 8)
    a <<= 1;
  return a;
}

vgpu_status vgpu_function_param(uint64_t function, size_t index,
                                size_t* out_offset, size_t* out_size) {
  vgpu_object* obj = NULL;
  vgpu_status st = vgpu_handle_lookup(function, VGPU_KIND_FUNCTION, &obj);
  if (st != VGPU_OK)
    return st;
  const vgpu_kernel_desc* kd = ((vgpu_function*)obj)->desc;
  if (index < kd->arg_count) {
    size_t offset = 0;
    for (size_t i = 0; i <= index; ++i) {
      size_t align = arg_align(kd->arg_sizes[i]);
      offset = (offset + align - 1) & ~(align - 1);
      if (i < index)
        offset += kd->arg_sizes[i];
    }
    *out_offset = offset;
    *out_size = kd->arg_sizes[index];
  } else {
    st = VGPU_ERR_INVALID_VALUE;
  }
  vgpu_object_release(obj);
  return st;
}

static bool dims_ok(vgpu_dim3 d, const int max[3]) {
  return d.x >= 1 && d.y >= 1 && d.z >= 1 && d.x <= (uint32_t)max[0] &&
         d.y <= (uint32_t)max[1] && d.z <= (uint32_t)max[2];
}

vgpu_status vgpu_launch_create(const vgpu_launch_desc* desc,
                               vgpu_launch** out) {
  vgpu_object* obj = NULL;
  vgpu_status st = vgpu_handle_lookup(desc->function, VGPU_KIND_FUNCTION, &obj);
  if (st != VGPU_OK)
    return st;
  vgpu_function* f = (vgpu_function*)obj;
  const vgpu_kernel_desc* kd = f->desc;
  const vgpu_device_info* info = vgpu_device_info_get(0);
  vgpu_launch* l = NULL;
  uint64_t threads =
      (uint64_t)desc->block.x * desc->block.y * (uint64_t)desc->block.z;
  if (info == NULL || !dims_ok(desc->grid, info->max_grid_dim) ||
      !dims_ok(desc->block, info->max_block_dim) ||
      threads > (uint64_t)info->max_threads_per_block ||
      desc->shared_bytes > (unsigned)info->shared_memory_per_block) {
    st = VGPU_ERR_INVALID_VALUE;
    goto fail;
  }
  if (kd->arg_count > 0 && desc->params == NULL && desc->buffer == NULL) {
    st = vgpu_misuse(VGPU_ERR_INVALID_VALUE,
                     "kernel %s takes %u arguments but none were passed",
                     kd->name, kd->arg_count);
    goto fail;
  }
  l = calloc(1, sizeof(*l));
  size_t total = 0;
  for (uint32_t i = 0; i < kd->arg_count; ++i)
    total += (kd->arg_sizes[i] + 7u) & ~7u;
  if (l == NULL) {
    st = VGPU_ERR_OUT_OF_MEMORY;
    goto fail;
  }
  atomic_init(&l->refs, 1);
  l->function = f;
  l->grid = desc->grid;
  l->block = desc->block;
  l->shared_bytes = desc->shared_bytes;
  l->argc = kd->arg_count;
  l->arg_data = calloc(1, total ? total : 1);
  l->argv = calloc(kd->arg_count ? kd->arg_count : 1, sizeof(void*));
  if (l->arg_data == NULL || l->argv == NULL) {
    st = VGPU_ERR_OUT_OF_MEMORY;
    goto fail_launch;
  }
  size_t dst = 0, src = 0;
  for (uint32_t i = 0; i < kd->arg_count; ++i) {
    uint32_t size = kd->arg_sizes[i];
    const void* from = NULL;
    if (desc->params != NULL) {
      from = desc->params[i];
    } else {
      src = (src + arg_align(size) - 1) & ~(arg_align(size) - 1);
      if (src + size > desc->buffer_size) {
        st = vgpu_misuse(VGPU_ERR_INVALID_VALUE,
                         "argument buffer of %zu bytes too small for kernel "
                         "%s (argument %u)",
                         desc->buffer_size, kd->name, i);
        goto fail_launch;
      }
      from = (const uint8_t*)desc->buffer + src;
      src += size;
    }
    if (from == NULL) {
      st = VGPU_ERR_INVALID_VALUE;
      goto fail_launch;
    }
    memcpy(l->arg_data + dst, from, size);
    l->argv[i] = l->arg_data + dst;
    dst += (size + 7u) & ~7u;
  }
  *out = l;
  return VGPU_OK;
fail_launch:
  free(l->arg_data);
  free(l->argv);
  free(l);
fail:
  vgpu_object_release(obj);
  return st;
}

vgpu_status vgpu_launch_uses(const vgpu_launch* l, vgpu_uses* uses) {
  const vgpu_kernel_desc* kd = l->function->desc;
  for (uint32_t i = 0; i < l->argc; ++i) {
    if (kd->arg_sizes[i] != sizeof(void*))
      continue;
    void* p = NULL;
    memcpy(&p, l->argv[i], sizeof(p));
    vgpu_status st = vgpu_uses_add_ptr(uses, p);
    if (st != VGPU_OK)
      return st;
  }
  return VGPU_OK;
}

static void run_block(const vgpu_launch* l, uint64_t b, void* shared) {
  const vgpu_kernel_desc* kd = l->function->desc;
  vgpu_kernel_thread t;
  memset(&t, 0, sizeof(t));
  t.grid_dim = l->grid;
  t.block_dim = l->block;
  t.block_idx.x = (uint32_t)(b % l->grid.x);
  t.block_idx.y = (uint32_t)(b / l->grid.x % l->grid.y);
  t.block_idx.z = (uint32_t)(b / l->grid.x / l->grid.y);
  t.shared = shared;
  t.shared_bytes = l->shared_bytes;
  if (kd->flags & VGPU_KERNEL_PER_BLOCK) {
    kd->fn(&t, l->argv);
    return;
  }
  for (uint32_t z = 0; z < l->block.z; ++z) {
    for (uint32_t y = 0; y < l->block.y; ++y) {
      for (uint32_t x = 0; x < l->block.x; ++x) {
        t.thread_idx.x = x;
        t.thread_idx.y = y;
        t.thread_idx.z = z;
        kd->fn(&t, l->argv);
      }
    }
  }
}

// Runs blocks of |j| until none are left.
static void run_blocks(kjob* j) {
  const vgpu_launch* l = j->launch;
  void* shared = l->shared_bytes ? malloc(l->shared_bytes) : NULL;
  for (;;) {
    uint64_t b = atomic_fetch_add(&j->next_block, 1);
    if (b >= j->total_blocks)
      break;
    run_block(l, b, shared);
  }
  free(shared);
}

static void unlist_locked(kjob* j) {
  if (!j->listed)
    return;
  for (kjob** p = &pool.jobs; *p != NULL; p = &(*p)->next) {
    if (*p == j) {
      *p = j->next;
      break;
    }
  }
  j->listed = false;
}

static void* kernel_thread_main(void* arg) {
  (void)arg;
  pthread_mutex_lock(&pool.mu);
  for (;;) {
    while (pool.jobs == NULL && !pool.shutdown)
      pthread_cond_wait(&pool.work_cv, &pool.mu);
    if (pool.shutdown)
      break;
    kjob* j = pool.jobs;
    j->active++;
    pthread_mutex_unlock(&pool.mu);
    run_blocks(j);
    pthread_mutex_lock(&pool.mu);
    unlist_locked(j);  // exhausted: nobody else should pick it up
    if (--j->active == 0)
      pthread_cond_broadcast(&pool.done_cv);
  }
  pthread_mutex_unlock(&pool.mu);
  return NULL;
}

// Starts the kernel threads on first use. Called with pool.mu held.
static void start_locked(void) {
  pool.started = true;
  pool.shutdown = false;
  pool.count = 0;
  pool.threads = calloc((size_t)vgpu_cfg.kernel_threads, sizeof(pthread_t));
  for (int i = 0; pool.threads != NULL && i < vgpu_cfg.kernel_threads; ++i) {
    if (pthread_create(&pool.threads[i], NULL, kernel_thread_main, NULL) != 0)
      break;
    pool.count++;
  }
}

void vgpu_launch_run(const vgpu_launch* l) {
  kjob j;
  memset(&j, 0, sizeof(j));
  j.launch = l;
  atomic_init(&j.next_block, 0);
  j.total_blocks = (uint64_t)l->grid.x * l->grid.y * l->grid.z;
  if (j.total_blocks == 1 || vgpu_cfg.kernel_threads == 0) {
    run_blocks(&j);
    return;
  }
  pthread_mutex_lock(&pool.mu);
  if (!pool.started)
    start_locked();
  j.listed = true;
  j.next = pool.jobs;
  pool.jobs = &j;
  pthread_cond_broadcast(&pool.work_cv);
  pthread_mutex_unlock(&pool.mu);

  run_blocks(&j);

  // No kernel thread may touch |j| once it is unlisted and inactive.
  pthread_mutex_lock(&pool.mu);
  unlist_locked(&j);
  while (j.active > 0)
    pthread_cond_wait(&pool.done_cv, &pool.mu);
  pthread_mutex_unlock(&pool.mu);
}

void vgpu_kernel_pool_stop(void) {
  pthread_mutex_lock(&pool.mu);
  if (!pool.started) {
    pthread_mutex_unlock(&pool.mu);
    return;
  }
  pool.shutdown = true;
  pthread_cond_broadcast(&pool.work_cv);
  pthread_mutex_unlock(&pool.mu);
  for (int i = 0; i < pool.count; ++i)
    pthread_join(pool.threads[i], NULL);
  pthread_mutex_lock(&pool.mu);
  free(pool.threads);
  pool.threads = NULL;
  pool.count = 0;
  pool.started = false;
  pthread_mutex_unlock(&pool.mu);
}

vgpu_status vgpu_kernel_launch(uint64_t stream, int ordinal,
                               const vgpu_launch_desc* desc) {
  vgpu_launch* l = NULL;
  vgpu_status st = vgpu_launch_create(desc, &l);
  if (st != VGPU_OK)
    return st;
  vgpu_work w = {.type = VGPU_WORK_KERNEL, .launch = l};
  return vgpu_stream_submit_work(stream, ordinal, &w);
}
