// Stream-ordered allocation: memory pools whose allocations and frees run
// in stream order (vgpu_core.h has the rules the facades expose).
//
// A pool hands out blocks of device memory in size classes (256 B doubling
// up to 2 MiB, then multiples of 2 MiB) so freed blocks fit later
// requests. Each allocation is a vgpu_alloc of its own (one per life of a
// block), kept in the memory array like any device allocation so copies,
// fills and kernels are bounds-checked against it, and walking through
// vgpu_order_state: RESERVED at the call, LIVE when its stream runs the
// allocation, FREEING once a stream-ordered free is queued, DEAD when that
// free ran. Streams check, before an operation runs, that the stream-ordered
// memory it uses is LIVE or FREEING (memory.c, vgpu_uses_alive).
//
// Where a block goes when its life ends:
//  - the free ran and nothing queued still uses it: the pool's idle list
//    (or back to the device above the release threshold);
//  - the free ran while queued work still used it (misuse, reported): when
//    that work's last use is released (memory.c calls
//    vgpu_pool_block_idle_locked);
//  - an allocation on the stream of the queued free, of the same class,
//    takes it before the free ran: that allocation runs after the free in
//    stream order, so the block is never alive twice (block_taken).
//
// Locking: pool state (lists, counters, the flags of its allocations) is
// guarded by the memory mutex, a leaf lock: nothing here takes another lock
// while holding it. |pools.mu| guards the default and current pool tables
// and is taken before the registry's lock, never under the memory mutex.
#include <inttypes.h>
#include <stdlib.h>

#include "internal.h"

#define POOL_SMALL_CLASS ((size_t)256)
#define POOL_LARGE_CLASS ((size_t)2 << 20)

typedef struct pool_block {
  struct pool_block* next;
  uint8_t* base;
  size_t capacity;
} pool_block;

typedef struct vgpu_pool {
  vgpu_object base;
  int device;
  bool is_default;
  // Everything below: memory mutex.
  bool destroyed;    // its handle is gone; blocks go back to the device
  bool object_gone;  // the object's last reference went; the struct waits
                     // for its last block
  uint64_t release_threshold;
  size_t reserved, reserved_high;
  size_t idle_bytes, used_high;
  pool_block* idle;
  vgpu_alloc* freeing;  // FREEING lives whose block is still theirs
  struct vgpu_pool* all_next;
} vgpu_pool;

static struct {
  pthread_mutex_t mu;
  vgpu_pool* defaults[VGPU_MAX_DEVICES];  // alive while registered
  uint64_t current[VGPU_MAX_DEVICES];     // 0: the default pool
} pools = {.mu = PTHREAD_MUTEX_INITIALIZER};

// Every pool struct not yet freed (memory mutex), for teardown.
static vgpu_pool* all_pools;

static size_t block_class(size_t bytes) {
  if (bytes <= POOL_SMALL_CLASS)
    return POOL_SMALL_CLASS;
  if (bytes >= POOL_LARGE_CLASS) {
    size_t rounded = (bytes + POOL_LARGE_CLASS - 1) & ~(POOL_LARGE_CLASS - 1);
    return rounded < bytes ? 0 : rounded;
  }
  size_t c = POOL_SMALL_CLASS;
  while (c < bytes)
    c <<= 1;
  return c;
}

static size_t pool_used_locked(const vgpu_pool* p) {
  return p->reserved - p->idle_bytes;
}

static void pool_note_use_locked(vgpu_pool* p) {
  if (p->reserved > p->reserved_high)
    p->reserved_high = p->reserved;
  if (pool_used_locked(p) > p->used_high)
    p->used_high = pool_used_locked(p);
}

static void pool_unlink_all_locked(vgpu_pool* p) {
  for (vgpu_pool** link = &all_pools; *link != NULL;
       link = &(*link)->all_next) {
    if (*link == p) {
      *link = p->all_next;
      return;
    }
  }
}

// Gives a block back to the device; frees the struct of a pool whose
// object went once its last block did.
static void pool_release_block_locked(vgpu_pool* p, uint8_t* base,
                                      size_t capacity) {
  free(base);
  p->reserved -= capacity;
  atomic_fetch_sub(&vgpu_devices[p->device].used_memory, capacity);
  if (p->object_gone && p->reserved == 0) {
    pool_unlink_all_locked(p);
    free(p);
  }
}

// Releases idle blocks while the pool holds more than |keep| bytes.
static void pool_trim_locked(vgpu_pool* p, size_t keep) {
  while (p->idle != NULL && p->reserved > keep) {
    pool_block* b = p->idle;
    p->idle = b->next;
    p->idle_bytes -= b->capacity;
    bool last = p->object_gone && p->reserved == b->capacity;
    pool_release_block_locked(p, b->base, b->capacity);
    free(b);
    if (last)
      return;  // |p| is gone
  }
}

static void pool_unlink_freeing_locked(vgpu_alloc* a) {
  vgpu_pool* p = a->pool;
  for (vgpu_alloc** link = &p->freeing; *link != NULL;
       link = &(*link)->freeing_next) {
    if (*link == a) {
      *link = a->freeing_next;
      a->freeing_next = NULL;
      return;
    }
  }
}

void vgpu_pool_block_idle_locked(vgpu_alloc* a) {
  if (a->block_taken)
    return;  // another allocation owns the block, or it went back already
  a->block_taken = true;
  a->freed = true;
  vgpu_pool* p = a->pool;
  pool_block* b = p->destroyed ? NULL : malloc(sizeof(*b));
  if (b == NULL) {
    pool_release_block_locked(p, a->base, a->capacity);
    return;
  }
  b->base = a->base;
  b->capacity = a->capacity;
  b->next = p->idle;
  p->idle = b;
  p->idle_bytes += b->capacity;
  pool_trim_locked(p, (size_t)p->release_threshold);
}

void vgpu_pool_free_now_locked(vgpu_alloc* a) {
  if (atomic_load(&a->order_state) == VGPU_ORDER_FREEING)
    pool_unlink_freeing_locked(a);  // teardown: a free never ran
  atomic_store(&a->order_state, VGPU_ORDER_DEAD);
  a->free_stream = NULL;
  vgpu_pool_block_idle_locked(a);
}

// Takes |a| out of the memory array and drops the array's reference; the
// caller holds another one (the operation of its free).
static void pool_untrack_locked(vgpu_alloc* a) {
  if (!a->tracked)
    return;
  vgpu_mem_untrack_locked(a);
  vgpu_alloc_release(a);
}

// ------------------------------------------------------------- pools

static void pool_free_fn(vgpu_object* obj) {
  vgpu_pool* p = (vgpu_pool*)obj;
  vgpu_mem_lock();
  p->destroyed = true;
  pool_trim_locked(p, 0);
  if (p->reserved == 0) {
    pool_unlink_all_locked(p);
    free(p);
  } else {
    p->object_gone = true;  // freed with its last block
  }
  vgpu_mem_unlock();
}

static vgpu_status pool_new(int ordinal, bool is_default, vgpu_pool** out) {
  vgpu_status st = vgpu_device_check(ordinal);
  if (st != VGPU_OK)
    return st;
  vgpu_pool* p = calloc(1, sizeof(*p));
  if (p == NULL)
    return VGPU_ERR_OUT_OF_MEMORY;
  vgpu_object_init(&p->base, VGPU_KIND_POOL, pool_free_fn);
  p->device = ordinal;
  p->is_default = is_default;
  st = vgpu_handle_register(&p->base);
  if (st != VGPU_OK) {
    free(p);
    return st;
  }
  vgpu_mem_lock();
  p->all_next = all_pools;
  all_pools = p;
  vgpu_mem_unlock();
  *out = p;
  return VGPU_OK;
}

vgpu_status vgpu_pool_create(int ordinal, uint64_t* out) {
  if (out == NULL)
    return VGPU_ERR_INVALID_VALUE;
  vgpu_pool* p = NULL;
  vgpu_status st = pool_new(ordinal, false, &p);
  if (st == VGPU_OK)
    *out = p->base.handle;
  return st;
}

vgpu_status vgpu_pool_default(int ordinal, uint64_t* out) {
  if (out == NULL)
    return VGPU_ERR_INVALID_VALUE;
  vgpu_status st = vgpu_device_check(ordinal);
  if (st != VGPU_OK)
    return st;
  pthread_mutex_lock(&pools.mu);
  if (pools.defaults[ordinal] == NULL)
    st = pool_new(ordinal, true, &pools.defaults[ordinal]);
  if (st == VGPU_OK)
    *out = pools.defaults[ordinal]->base.handle;
  pthread_mutex_unlock(&pools.mu);
  return st;
}

vgpu_status vgpu_pool_current(int ordinal, uint64_t* out) {
  if (out == NULL)
    return VGPU_ERR_INVALID_VALUE;
  vgpu_status st = vgpu_device_check(ordinal);
  if (st != VGPU_OK)
    return st;
  pthread_mutex_lock(&pools.mu);
  uint64_t current = pools.current[ordinal];
  pthread_mutex_unlock(&pools.mu);
  if (current != 0) {
    *out = current;
    return VGPU_OK;
  }
  return vgpu_pool_default(ordinal, out);
}

static vgpu_status pool_get(uint64_t handle, vgpu_pool** out) {
  vgpu_object* obj = NULL;
  vgpu_status st = vgpu_handle_lookup(handle, VGPU_KIND_POOL, &obj);
  *out = (vgpu_pool*)obj;
  return st;
}

vgpu_status vgpu_pool_set_current(int ordinal, uint64_t handle) {
  vgpu_status st = vgpu_device_check(ordinal);
  if (st != VGPU_OK)
    return st;
  vgpu_pool* p = NULL;
  st = pool_get(handle, &p);
  if (st != VGPU_OK)
    return st;
  if (p->device != ordinal) {
    st = vgpu_misuse(VGPU_ERR_INVALID_VALUE,
                     "memory pool 0x%" PRIx64
                     " is of device %d, not of device %d",
                     handle, p->device, ordinal);
  } else {
    pthread_mutex_lock(&pools.mu);
    pools.current[ordinal] = p->is_default ? 0 : handle;
    pthread_mutex_unlock(&pools.mu);
  }
  vgpu_object_release(&p->base);
  return st;
}

vgpu_status vgpu_pool_destroy(uint64_t handle) {
  vgpu_pool* p = NULL;
  vgpu_status st = pool_get(handle, &p);
  if (st != VGPU_OK)
    return st;
  if (p->is_default) {
    vgpu_object_release(&p->base);
    return vgpu_misuse(VGPU_ERR_INVALID_VALUE,
                       "memory pool 0x%" PRIx64
                       " is the default pool of device %d: it cannot be "
                       "destroyed",
                       handle, p->device);
  }
  pthread_mutex_lock(&pools.mu);
  if (pools.current[p->device] == handle)
    pools.current[p->device] = 0;
  pthread_mutex_unlock(&pools.mu);
  vgpu_mem_lock();
  p->destroyed = true;
  pool_trim_locked(p, 0);
  vgpu_mem_unlock();
  vgpu_handle_unregister(&p->base);
  vgpu_object_release(&p->base);
  return VGPU_OK;
}

vgpu_status vgpu_pool_set_attribute(uint64_t handle, vgpu_pool_attr attr,
                                    uint64_t value) {
  vgpu_pool* p = NULL;
  vgpu_status st = pool_get(handle, &p);
  if (st != VGPU_OK)
    return st;
  vgpu_mem_lock();
  switch (attr) {
    case VGPU_POOL_RELEASE_THRESHOLD:
      p->release_threshold = value;
      pool_trim_locked(p, value > SIZE_MAX ? SIZE_MAX : (size_t)value);
      break;
    case VGPU_POOL_RESERVED_HIGH:
    case VGPU_POOL_USED_HIGH:
      if (value != 0) {
        st = VGPU_ERR_INVALID_VALUE;  // only a reset is settable
      } else if (attr == VGPU_POOL_RESERVED_HIGH) {
        p->reserved_high = p->reserved;
      } else {
        p->used_high = pool_used_locked(p);
      }
      break;
    case VGPU_POOL_REUSE:
      break;  // every policy is followed where it is safe
    default:
      st = VGPU_ERR_INVALID_VALUE;
      break;
  }
  vgpu_mem_unlock();
  vgpu_object_release(&p->base);
  return st;
}

vgpu_status vgpu_pool_get_attribute(uint64_t handle, vgpu_pool_attr attr,
                                    uint64_t* out) {
  if (out == NULL)
    return VGPU_ERR_INVALID_VALUE;
  vgpu_pool* p = NULL;
  vgpu_status st = pool_get(handle, &p);
  if (st != VGPU_OK)
    return st;
  vgpu_mem_lock();
  switch (attr) {
    case VGPU_POOL_RELEASE_THRESHOLD:
      *out = p->release_threshold;
      break;
    case VGPU_POOL_RESERVED_CURRENT:
      *out = p->reserved;
      break;
    case VGPU_POOL_RESERVED_HIGH:
      *out = p->reserved_high;
      break;
    case VGPU_POOL_USED_CURRENT:
      *out = pool_used_locked(p);
      break;
    case VGPU_POOL_USED_HIGH:
      *out = p->used_high;
      break;
    case VGPU_POOL_REUSE:
      *out = 1;
      break;
    default:
      st = VGPU_ERR_INVALID_VALUE;
      break;
  }
  vgpu_mem_unlock();
  vgpu_object_release(&p->base);
  return st;
}

vgpu_status vgpu_pool_trim(uint64_t handle, size_t keep_bytes) {
  vgpu_pool* p = NULL;
  vgpu_status st = pool_get(handle, &p);
  if (st != VGPU_OK)
    return st;
  vgpu_mem_lock();
  pool_trim_locked(p, keep_bytes);
  vgpu_mem_unlock();
  vgpu_object_release(&p->base);
  return VGPU_OK;
}

// ------------------------------------------------- allocation and free

// A block of |cls| bytes for an allocation on |stream|: the block of a free
// queued on the same stream, an idle one, or a new one.
static vgpu_status pool_take_block_locked(vgpu_pool* p, size_t cls,
                                          vgpu_stream* stream, uint8_t** out) {
  for (vgpu_alloc** link = &p->freeing; *link != NULL;
       link = &(*link)->freeing_next) {
    vgpu_alloc* f = *link;
    if (f->free_stream == stream && f->capacity == cls && !f->block_taken) {
      // Runs after that free on this stream: the block is never alive twice.
      *link = f->freeing_next;
      f->freeing_next = NULL;
      f->block_taken = true;
      pool_untrack_locked(f);
      *out = f->base;
      return VGPU_OK;
    }
  }
  for (pool_block** link = &p->idle; *link != NULL; link = &(*link)->next) {
    pool_block* b = *link;
    if (b->capacity == cls) {
      *link = b->next;
      p->idle_bytes -= cls;
      *out = b->base;
      free(b);
      return VGPU_OK;
    }
  }
  vgpu_device* d = &vgpu_devices[p->device];
  for (int attempt = 0; attempt < 2; ++attempt) {
    size_t used = atomic_fetch_add(&d->used_memory, cls);
    if (used + cls <= d->info.total_memory && used + cls >= used)
      break;
    atomic_fetch_sub(&d->used_memory, cls);
    if (attempt == 1 || p->idle == NULL)
      return VGPU_ERR_OUT_OF_MEMORY;
    pool_trim_locked(p, 0);  // idle blocks of other classes make room
  }
  void* base = NULL;
  if (posix_memalign(&base, POOL_SMALL_CLASS, cls) != 0) {
    atomic_fetch_sub(&d->used_memory, cls);
    return VGPU_ERR_OUT_OF_MEMORY;
  }
  p->reserved += cls;
  *out = base;
  return VGPU_OK;
}

vgpu_status vgpu_alloc_async(uint64_t pool, size_t bytes, uint64_t stream,
                             int ordinal, void** out) {
  if (out == NULL || bytes == 0)
    return VGPU_ERR_INVALID_VALUE;
  *out = NULL;
  size_t cls = block_class(bytes);
  if (cls == 0)
    return VGPU_ERR_OUT_OF_MEMORY;
  vgpu_stream* s = NULL;
  vgpu_status st = vgpu_stream_get(stream, ordinal, &s);
  if (st != VGPU_OK)
    return st;
  if (pool == 0)
    st = vgpu_pool_current(s->device, &pool);
  vgpu_pool* p = NULL;
  if (st == VGPU_OK)
    st = pool_get(pool, &p);
  if (st != VGPU_OK) {
    vgpu_object_release(&s->base);
    return st;
  }
  if (p->device != s->device) {
    st = vgpu_misuse(VGPU_ERR_INVALID_VALUE,
                     "memory pool 0x%" PRIx64
                     " is of device %d; the stream is of device %d",
                     pool, p->device, s->device);
    goto out;
  }
  vgpu_alloc* a = calloc(1, sizeof(*a));
  vgpu_op* op = vgpu_op_new(VGPU_OP_WORK);
  if (a == NULL || op == NULL) {
    free(a);
    free(op);
    st = VGPU_ERR_OUT_OF_MEMORY;
    goto out;
  }
  uint8_t* base = NULL;
  vgpu_mem_lock();
  st = pool_take_block_locked(p, cls, s, &base);
  if (st == VGPU_OK) {
    atomic_init(&a->refs, 2);  // the array's and the operation's
    a->base = base;
    a->size = bytes;
    a->capacity = cls;
    a->device = p->device;
    a->creator = vgpu_tls_call;
    a->pool = p;
    atomic_init(&a->order_state, VGPU_ORDER_RESERVED);
    a->pending = 1;  // the allocation's own operation
    st = vgpu_mem_track_locked(a);
    if (st != VGPU_OK) {
      a->block_taken = false;
      atomic_store(&a->order_state, VGPU_ORDER_DEAD);
      vgpu_pool_block_idle_locked(a);
    } else {
      pool_note_use_locked(p);
    }
  }
  vgpu_mem_unlock();
  if (st != VGPU_OK) {
    free(a);
    free(op);
    goto out;
  }
  op->work.type = VGPU_WORK_MEM_ALLOC;
  op->work.ordered = a;
  st = vgpu_stream_enqueue(s, op);  // frees |op| on failure
  if (st != VGPU_OK) {
    vgpu_mem_lock();
    a->pending = 0;
    vgpu_mem_untrack_locked(a);
    atomic_store(&a->order_state, VGPU_ORDER_DEAD);
    vgpu_pool_block_idle_locked(a);
    vgpu_mem_unlock();
    vgpu_alloc_release(a);
    goto out;
  }
  *out = base;
out:
  vgpu_object_release(&p->base);
  vgpu_object_release(&s->base);
  return st;
}

vgpu_status vgpu_free_async(void* ptr, uint64_t stream, int ordinal) {
  if (ptr == NULL)
    return VGPU_OK;
  vgpu_stream* s = NULL;
  vgpu_status st = vgpu_stream_get(stream, ordinal, &s);
  if (st != VGPU_OK)
    return st;
  vgpu_op* op = vgpu_op_new(VGPU_OP_WORK);
  if (op == NULL) {
    vgpu_object_release(&s->base);
    return VGPU_ERR_OUT_OF_MEMORY;
  }
  vgpu_mem_lock();
  vgpu_alloc* a = vgpu_mem_find_locked(ptr);
  if (a == NULL || a->base != ptr || a->pool == NULL) {
    vgpu_mem_unlock();
    free(op);
    vgpu_object_release(&s->base);
    return vgpu_misuse(VGPU_ERR_INVALID_VALUE,
                       a == NULL ? "%p is not memory allocated here, or was "
                                   "freed already"
                       : a->base != ptr
                           ? "%p points inside an allocation, not at its start"
                           : "%p was not allocated in stream order (free it "
                             "with the synchronous free)",
                       ptr);
  }
  if (atomic_load(&a->order_state) == VGPU_ORDER_FREEING) {
    vgpu_mem_unlock();
    free(op);
    vgpu_object_release(&s->base);
    return vgpu_misuse(VGPU_ERR_INVALID_VALUE,
                       "%p was already passed to a stream-ordered free "
                       "(double free)",
                       ptr);
  }
  atomic_store(&a->order_state, VGPU_ORDER_FREEING);
  a->free_stream = s;
  a->freeing_next = a->pool->freeing;
  a->pool->freeing = a;
  atomic_fetch_add(&a->refs, 1);  // the operation's
  vgpu_mem_unlock();
  op->work.type = VGPU_WORK_MEM_FREE;
  op->work.ordered = a;
  st = vgpu_stream_enqueue(s, op);  // on failure the op's clear unlinks |a|
  vgpu_object_release(&s->base);
  return st;
}

void vgpu_pool_work_run(const vgpu_work* work) {
  vgpu_alloc* a = work->ordered;
  unsigned pending = 0;
  bool early = false;
  vgpu_mem_lock();
  if (work->type == VGPU_WORK_MEM_ALLOC) {
    if (atomic_load(&a->order_state) == VGPU_ORDER_RESERVED)
      atomic_store(&a->order_state, VGPU_ORDER_LIVE);
    a->alloc_ran = true;
    vgpu_mem_pending_drop_locked(a);
  } else {
    early = !a->alloc_ran;
    if (!a->block_taken)
      pool_unlink_freeing_locked(a);
    a->free_stream = NULL;
    pool_untrack_locked(a);
    atomic_store(&a->order_state, VGPU_ORDER_DEAD);
    pending = a->pending;
    // With uses still queued, the block goes back when the last is
    // released (memory.c).
    if (pending == 0)
      vgpu_pool_block_idle_locked(a);
  }
  vgpu_mem_unlock();
  if (early) {
    vgpu_misuse(VGPU_ERR_INVALID_VALUE,
                "the stream-ordered free of %zu bytes at %p (device %d) ran "
                "before its allocation did: order the free after it",
                a->size, (void*)a->base, a->device);
  } else if (pending > 0) {
    vgpu_misuse(VGPU_ERR_IN_USE,
                "the stream-ordered free of %zu bytes at %p (device %d) ran "
                "while %u queued operation(s) still use it: they are not "
                "ordered before the free",
                a->size, (void*)a->base, a->device, pending);
  }
}

// A MEM_FREE operation dropped before it ran (teardown, a failed enqueue):
// the allocation is alive again.
void vgpu_pool_work_dropped(const vgpu_work* work) {
  vgpu_alloc* a = work->ordered;
  if (work->type != VGPU_WORK_MEM_FREE)
    return;
  vgpu_mem_lock();
  if (atomic_load(&a->order_state) == VGPU_ORDER_FREEING && !a->block_taken) {
    pool_unlink_freeing_locked(a);
    a->free_stream = NULL;
    atomic_store(&a->order_state,
                 a->alloc_ran ? VGPU_ORDER_LIVE : VGPU_ORDER_RESERVED);
  }
  vgpu_mem_unlock();
}

size_t vgpu_pools_report_leaks(void) {
  size_t n = 0;
  vgpu_mem_lock();
  for (vgpu_pool* p = all_pools; p != NULL; p = p->all_next) {
    if (!p->is_default && !p->destroyed) {
      vgpu_log("leak: memory pool 0x%" PRIx64
               " of device %d (created by %s) was never destroyed",
               p->base.handle, p->device,
               p->base.creator ? p->base.creator : "?");
      n++;
    }
  }
  vgpu_mem_unlock();
  return n;
}

void vgpu_pools_teardown(void) {
  pthread_mutex_lock(&pools.mu);
  for (int d = 0; d < VGPU_MAX_DEVICES; ++d) {
    pools.defaults[d] = NULL;  // the registry's teardown frees them
    pools.current[d] = 0;
  }
  pthread_mutex_unlock(&pools.mu);
  vgpu_mem_lock();
  // Every allocation is gone (memory teardown ran): idle blocks are all
  // that is left. Pools whose object went are freed with their last one.
  vgpu_pool* p = all_pools;
  while (p != NULL) {
    vgpu_pool* next = p->all_next;
    pool_trim_locked(p, 0);
    p = next;
  }
  vgpu_mem_unlock();
}
