// Memory: device and pinned host allocations with bookkeeping.
//
// Device memory is host memory. Every allocation is recorded (base, size,
// device, kind) in an array sorted by base address, so any pointer can be
// classified and any range bounds-checked. Queued work that touches an
// allocation holds a pending count on it from enqueue to completion; freeing
// an allocation with a pending count is misuse in strict mode and waits for
// the work in lax mode (the vendors' free synchronizes).
//
// |mu| guards the array, the freed ring and every allocation's |freed| and
// |pending|; it is a leaf lock.
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define FREED_RING 64

static struct {
  pthread_mutex_t mu;
  pthread_cond_t idle_cv;  // broadcast when a pending count drops to zero
  vgpu_alloc** items;      // sorted by base
  size_t count, cap;
  uint64_t next_id;
  struct {
    uintptr_t base;
    size_t size;
  } freed[FREED_RING];  // recently freed ranges, for messages only
  unsigned freed_next;
  bool cv_ready;
} mem = {.mu = PTHREAD_MUTEX_INITIALIZER};

static void mem_cv_init_locked(void) {
  if (!mem.cv_ready) {
    vgpu_cond_init(&mem.idle_cv);
    mem.cv_ready = true;
  }
}

void vgpu_copy_init_1d(vgpu_copy* c, void* dst, vgpu_ptr_kind dst_kind,
                       const void* src, vgpu_ptr_kind src_kind, size_t bytes) {
  memset(c, 0, sizeof(*c));
  c->dst = dst;
  c->src = src;
  c->width = bytes;
  c->height = 1;
  c->depth = 1;
  c->dst_pitch = c->src_pitch = bytes;
  c->dst_slice = c->src_slice = bytes;
  c->dst_kind = dst_kind;
  c->src_kind = src_kind;
}

void vgpu_fill_init_1d(vgpu_fill* f, void* dst, uint32_t value, unsigned elem,
                       size_t count) {
  memset(f, 0, sizeof(*f));
  f->dst = dst;
  f->value = value;
  f->elem = elem;
  f->width = count;
  f->height = 1;
  f->pitch = count * elem;
}

// Index of the first allocation with base > p.
static size_t upper_bound_locked(uintptr_t p) {
  size_t lo = 0, hi = mem.count;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if ((uintptr_t)mem.items[mid]->base <= p) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

static vgpu_alloc* find_locked(const void* ptr) {
  uintptr_t p = (uintptr_t)ptr;
  size_t i = upper_bound_locked(p);
  if (i == 0)
    return NULL;
  vgpu_alloc* a = mem.items[i - 1];
  return p < (uintptr_t)a->base + a->size ? a : NULL;
}

static bool recently_freed_locked(const void* ptr) {
  uintptr_t p = (uintptr_t)ptr;
  for (unsigned i = 0; i < FREED_RING; ++i) {
    if (mem.freed[i].size != 0 && p >= mem.freed[i].base &&
        p < mem.freed[i].base + mem.freed[i].size)
      return true;
  }
  return false;
}

vgpu_status vgpu_mem_alloc(int ordinal, size_t bytes, bool host, void** out) {
  vgpu_status st = vgpu_device_check(ordinal);
  if (st != VGPU_OK)
    return st;
  if (bytes == 0)
    return VGPU_ERR_INVALID_VALUE;
  vgpu_device* d = &vgpu_devices[ordinal];
  if (!host) {
    size_t used = atomic_fetch_add(&d->used_memory, bytes);
    if (used + bytes > d->info.total_memory || used + bytes < used) {
      atomic_fetch_sub(&d->used_memory, bytes);
      return VGPU_ERR_OUT_OF_MEMORY;
    }
  }
  vgpu_alloc* a = calloc(1, sizeof(*a));
  size_t align = host ? 4096 : 256;
  size_t rounded = (bytes + align - 1) / align * align;
  void* base = NULL;
  if (a == NULL || rounded < bytes || posix_memalign(&base, align, rounded)) {
    free(a);
    if (!host)
      atomic_fetch_sub(&d->used_memory, bytes);
    return VGPU_ERR_OUT_OF_MEMORY;
  }
  atomic_init(&a->refs, 1);
  a->base = base;
  a->size = bytes;
  a->device = ordinal;
  a->host = host;
  a->creator = vgpu_tls_call;

  pthread_mutex_lock(&mem.mu);
  if (vgpu_mem_track_locked(a) != VGPU_OK) {
    pthread_mutex_unlock(&mem.mu);
    free(base);
    free(a);
    if (!host)
      atomic_fetch_sub(&d->used_memory, bytes);
    return VGPU_ERR_OUT_OF_MEMORY;
  }
  pthread_mutex_unlock(&mem.mu);
  *out = base;
  return VGPU_OK;
}

static void alloc_release(vgpu_alloc* a) {
  if (atomic_fetch_sub_explicit(&a->refs, 1, memory_order_acq_rel) == 1)
    free(a);
}

void vgpu_alloc_release(vgpu_alloc* a) {
  alloc_release(a);
}

void vgpu_mem_lock(void) {
  pthread_mutex_lock(&mem.mu);
}

void vgpu_mem_unlock(void) {
  pthread_mutex_unlock(&mem.mu);
}

vgpu_alloc* vgpu_mem_find_locked(const void* ptr) {
  return find_locked(ptr);
}

vgpu_status vgpu_mem_track_locked(vgpu_alloc* a) {
  if (mem.count == mem.cap) {
    size_t cap = mem.cap ? mem.cap * 2 : 64;
    vgpu_alloc** items = realloc(mem.items, cap * sizeof(*items));
    if (items == NULL)
      return VGPU_ERR_OUT_OF_MEMORY;
    mem.items = items;
    mem.cap = cap;
  }
  a->id = ++mem.next_id;
  size_t i = upper_bound_locked((uintptr_t)a->base);
  memmove(&mem.items[i + 1], &mem.items[i],
          (mem.count - i) * sizeof(*mem.items));
  mem.items[i] = a;
  mem.count++;
  a->tracked = true;
  return VGPU_OK;
}

void vgpu_mem_untrack_locked(vgpu_alloc* a) {
  if (!a->tracked)
    return;
  size_t i = upper_bound_locked((uintptr_t)a->base);
  if (i > 0 && mem.items[i - 1] == a) {
    memmove(&mem.items[i - 1], &mem.items[i],
            (mem.count - i) * sizeof(*mem.items));
    mem.count--;
  }
  mem.freed[mem.freed_next].base = (uintptr_t)a->base;
  mem.freed[mem.freed_next].size = a->size;
  mem.freed_next = (mem.freed_next + 1) % FREED_RING;
  a->tracked = false;
}

// Removes |a| from the array and frees its memory. Called with mem.mu held.
static void remove_locked(vgpu_alloc* a) {
  vgpu_mem_untrack_locked(a);
  a->freed = true;
  if (a->pool != NULL) {
    vgpu_pool_free_now_locked(a);  // the block goes back to its pool
    return;
  }
  if (!a->host)
    atomic_fetch_sub(&vgpu_devices[a->device].used_memory, a->size);
  free(a->base);
  a->base = NULL;
}

vgpu_status vgpu_mem_free(void* ptr, bool host) {
  if (ptr == NULL)
    return VGPU_OK;
  const char* kind = host ? "pinned host memory" : "device memory";
  pthread_mutex_lock(&mem.mu);
  vgpu_alloc* a = find_locked(ptr);
  if (a == NULL || a->base != ptr || a->host != host) {
    bool freed = a == NULL && recently_freed_locked(ptr);
    bool interior = a != NULL && a->base != ptr;
    pthread_mutex_unlock(&mem.mu);
    if (freed) {
      return vgpu_misuse(VGPU_ERR_INVALID_VALUE,
                         "%p was already freed (double free of %s)", ptr, kind);
    }
    if (interior) {
      return vgpu_misuse(VGPU_ERR_INVALID_VALUE,
                         "%p points inside an allocation, not at its start",
                         ptr);
    }
    return vgpu_misuse(VGPU_ERR_INVALID_VALUE, "%p is not %s allocated here",
                       ptr, kind);
  }
  if (a->pool != NULL && atomic_load(&a->order_state) == VGPU_ORDER_FREEING) {
    pthread_mutex_unlock(&mem.mu);
    return vgpu_misuse(VGPU_ERR_INVALID_VALUE,
                       "%p was already passed to a stream-ordered free "
                       "(double free of %s)",
                       ptr, kind);
  }
  if (a->pending > 0) {
    if (vgpu_cfg.strict) {
      unsigned pending = a->pending;
      pthread_mutex_unlock(&mem.mu);
      return vgpu_misuse(VGPU_ERR_IN_USE,
                         "freeing %s %p (%zu bytes, device %d) that %u queued "
                         "operation(s) still use",
                         kind, ptr, a->size, a->device, pending);
    }
    // Lax: like the vendors' free, synchronize the owning device first
    // (so its streams report the work done, not just the memory idle),
    // then wait for any other user of the memory.
    int device = a->device;
    pthread_mutex_unlock(&mem.mu);
    vgpu_status synced = vgpu_device_synchronize(device);
    (void)synced;  // a failed device still frees; its work was dropped
    pthread_mutex_lock(&mem.mu);
    mem_cv_init_locked();
    while (a->pending > 0)
      pthread_cond_wait(&mem.idle_cv, &mem.mu);
  }
  remove_locked(a);
  pthread_mutex_unlock(&mem.mu);
  alloc_release(a);
  return VGPU_OK;
}

vgpu_ptr_kind vgpu_mem_classify(const void* ptr, int* ordinal) {
  pthread_mutex_lock(&mem.mu);
  vgpu_alloc* a = find_locked(ptr);
  vgpu_ptr_kind k = a != NULL && !a->host ? VGPU_PTR_DEVICE : VGPU_PTR_HOST;
  if (ordinal != NULL)
    *ordinal = a != NULL ? a->device : -1;
  pthread_mutex_unlock(&mem.mu);
  return k;
}

static vgpu_status uses_push(vgpu_uses* uses, vgpu_alloc* a) {
  for (uint32_t i = 0; i < uses->count; ++i) {
    if (uses->items[i] == a)
      return VGPU_OK;
  }
  if (uses->cap == 0) {
    uses->items = uses->inline_items;
    uses->cap = VGPU_USES_INLINE;
  }
  if (uses->count == uses->cap) {
    uint32_t cap = uses->cap * 2;
    vgpu_alloc** items;
    if (uses->items == uses->inline_items) {
      items = malloc(cap * sizeof(*items));
      if (items != NULL)
        memcpy(items, uses->inline_items, sizeof(uses->inline_items));
    } else {
      items = realloc(uses->items, cap * sizeof(*items));
    }
    if (items == NULL)
      return VGPU_ERR_OUT_OF_MEMORY;
    uses->items = items;
    uses->cap = cap;
  }
  uses->items[uses->count++] = a;
  atomic_fetch_add(&a->refs, 1);
  a->pending++;
  return VGPU_OK;
}

// Checks one side of a transfer: |extent| bytes from |ptr|.
static vgpu_status check_range_locked(const char* side, const void* ptr,
                                      size_t extent, vgpu_ptr_kind kind,
                                      vgpu_uses* uses) {
  vgpu_alloc* a = find_locked(ptr);
  if (a == NULL) {
    if (kind != VGPU_PTR_DEVICE)
      return VGPU_OK;  // host memory: unchecked
    if (recently_freed_locked(ptr)) {
      return vgpu_misuse(VGPU_ERR_INVALID_VALUE, "%s %p is freed device memory",
                         side, ptr);
    }
    return vgpu_misuse(VGPU_ERR_INVALID_VALUE,
                       "%s %p is not device memory allocated here", side, ptr);
  }
  if (a->pool != NULL && atomic_load(&a->order_state) == VGPU_ORDER_FREEING) {
    // Queued after its free: whatever stream it is on, it cannot be
    // ordered before the free any more.
    return vgpu_misuse(VGPU_ERR_INVALID_VALUE,
                       "%s %p is memory already passed to a stream-ordered "
                       "free (%zu bytes, device %d)",
                       side, ptr, a->size, a->device);
  }
  uintptr_t end = (uintptr_t)a->base + a->size;
  if (extent > end - (uintptr_t)ptr) {
    return vgpu_misuse(VGPU_ERR_INVALID_VALUE,
                       "out of bounds: %s range [%p, +%zu) overruns the "
                       "%zu-byte allocation at %p (device %d) by %zu bytes",
                       side, ptr, extent, a->size, (void*)a->base, a->device,
                       (size_t)(extent - (end - (uintptr_t)ptr)));
  }
  return uses != NULL ? uses_push(uses, a) : VGPU_OK;
}

// Bytes from the first to one past the last byte of a strided region;
// SIZE_MAX on overflow.
static size_t region_extent(size_t width, size_t height, size_t depth,
                            size_t pitch, size_t slice) {
  size_t a = 0, b = 0, e = 0;
  if (__builtin_mul_overflow(depth - 1, slice, &a) ||
      __builtin_mul_overflow(height - 1, pitch, &b) ||
      __builtin_add_overflow(a, b, &e) || __builtin_add_overflow(e, width, &e))
    return SIZE_MAX;
  return e;
}

vgpu_status vgpu_copy_check(const vgpu_copy* c, vgpu_uses* uses) {
  if (c->width == 0 || c->height == 0 || c->depth == 0)
    return VGPU_OK;
  if (c->dst == NULL || c->src == NULL)
    return VGPU_ERR_INVALID_VALUE;
  if ((c->height > 1 && (c->dst_pitch < c->width || c->src_pitch < c->width)) ||
      (c->depth > 1 && (c->dst_slice < c->dst_pitch * c->height ||
                        c->src_slice < c->src_pitch * c->height)))
    return VGPU_ERR_INVALID_VALUE;
  size_t dst_extent =
      region_extent(c->width, c->height, c->depth, c->dst_pitch, c->dst_slice);
  size_t src_extent =
      region_extent(c->width, c->height, c->depth, c->src_pitch, c->src_slice);
  pthread_mutex_lock(&mem.mu);
  vgpu_status st =
      check_range_locked("destination", c->dst, dst_extent, c->dst_kind, uses);
  if (st == VGPU_OK)
    st = check_range_locked("source", c->src, src_extent, c->src_kind, uses);
  pthread_mutex_unlock(&mem.mu);
  return st;
}

vgpu_status vgpu_fill_check(const vgpu_fill* f, vgpu_uses* uses) {
  if (f->elem != 1 && f->elem != 2 && f->elem != 4)
    return VGPU_ERR_INVALID_VALUE;
  if (f->width == 0 || f->height == 0)
    return VGPU_OK;
  if (f->dst == NULL)
    return VGPU_ERR_INVALID_VALUE;
  if ((uintptr_t)f->dst % f->elem != 0)
    return VGPU_ERR_INVALID_VALUE;
  if (f->width > SIZE_MAX / f->elem)
    return VGPU_ERR_INVALID_VALUE;
  size_t row = f->width * f->elem;
  if (f->height > 1 && (f->pitch < row || f->pitch % f->elem != 0))
    return VGPU_ERR_INVALID_VALUE;
  size_t extent = region_extent(row, f->height, 1, f->pitch, 0);
  pthread_mutex_lock(&mem.mu);
  vgpu_status st =
      check_range_locked("destination", f->dst, extent, VGPU_PTR_DEVICE, uses);
  pthread_mutex_unlock(&mem.mu);
  return st;
}

vgpu_status vgpu_range_check(const char* side, const void* ptr, size_t bytes,
                             int device, vgpu_uses* uses) {
  if (bytes == 0)
    return VGPU_OK;
  if (ptr == NULL)
    return VGPU_ERR_INVALID_VALUE;
  pthread_mutex_lock(&mem.mu);
  vgpu_status st = check_range_locked(side, ptr, bytes, VGPU_PTR_DEVICE, NULL);
  vgpu_alloc* a = st == VGPU_OK ? find_locked(ptr) : NULL;
  if (a != NULL && a->host) {
    st = vgpu_misuse(VGPU_ERR_INVALID_VALUE,
                     "%s %p is pinned host memory, not device memory", side,
                     ptr);
  } else if (a != NULL && device >= 0 && a->device != device) {
    st = vgpu_misuse(VGPU_ERR_INVALID_VALUE,
                     "%s %p is memory of device %d, not of device %d", side,
                     ptr, a->device, device);
  } else if (a != NULL && uses != NULL) {
    st = uses_push(uses, a);
  }
  pthread_mutex_unlock(&mem.mu);
  return st;
}

vgpu_status vgpu_uses_add_ptr(vgpu_uses* uses, const void* ptr) {
  vgpu_status st = VGPU_OK;
  pthread_mutex_lock(&mem.mu);
  vgpu_alloc* a = find_locked(ptr);
  if (a != NULL)
    st = uses_push(uses, a);
  pthread_mutex_unlock(&mem.mu);
  return st;
}

void vgpu_mem_pending_drop_locked(vgpu_alloc* a) {
  if (--a->pending > 0)
    return;
  if (mem.cv_ready)
    pthread_cond_broadcast(&mem.idle_cv);
  // A stream-ordered free that ran while this use was queued left the
  // block to its last use.
  if (a->pool != NULL && atomic_load(&a->order_state) == VGPU_ORDER_DEAD)
    vgpu_pool_block_idle_locked(a);
}

void vgpu_uses_release(vgpu_uses* uses) {
  if (uses->count > 0) {
    pthread_mutex_lock(&mem.mu);
    for (uint32_t i = 0; i < uses->count; ++i)
      vgpu_mem_pending_drop_locked(uses->items[i]);
    pthread_mutex_unlock(&mem.mu);
    for (uint32_t i = 0; i < uses->count; ++i)
      alloc_release(uses->items[i]);
  }
  if (uses->items != uses->inline_items)
    free(uses->items);
  uses->items = NULL;
  uses->count = uses->cap = 0;
}

bool vgpu_uses_alive(const vgpu_uses* uses, const char* what) {
  for (uint32_t i = 0; i < uses->count; ++i) {
    const vgpu_alloc* a = uses->items[i];
    if (a->pool == NULL)
      continue;
    int state = atomic_load(&a->order_state);
    if (state == VGPU_ORDER_LIVE || state == VGPU_ORDER_FREEING)
      continue;
    vgpu_misuse(VGPU_ERR_INVALID_VALUE,
                "%s reached %zu bytes at %p (device %d) %s: not ordered "
                "within the allocation's stream-ordered lifetime; skipped",
                what, a->size, (void*)a->base, a->device,
                state == VGPU_ORDER_RESERVED
                    ? "before its stream-ordered allocation ran"
                    : "after its stream-ordered free ran");
    return false;
  }
  return true;
}

void vgpu_copy_run(const vgpu_copy* c) {
  if (c->width == 0 || c->height == 0 || c->depth == 0)
    return;
  for (size_t z = 0; z < c->depth; ++z) {
    for (size_t y = 0; y < c->height; ++y) {
      uint8_t* d = (uint8_t*)c->dst + z * c->dst_slice + y * c->dst_pitch;
      const uint8_t* s =
          (const uint8_t*)c->src + z * c->src_slice + y * c->src_pitch;
      memmove(d, s, c->width);
    }
  }
}

void vgpu_fill_run(const vgpu_fill* f) {
  for (size_t y = 0; y < f->height; ++y) {
    uint8_t* row = (uint8_t*)f->dst + y * f->pitch;
    switch (f->elem) {
      case 1:
        memset(row, (int)(f->value & 0xffu), f->width);
        break;
      case 2: {
        uint16_t v = (uint16_t)f->value;
        for (size_t i = 0; i < f->width; ++i)
          memcpy(row + 2 * i, &v, 2);
        break;
      }
      default: {
        uint32_t v = f->value;
        for (size_t i = 0; i < f->width; ++i)
          memcpy(row + 4 * i, &v, 4);
        break;
      }
    }
  }
}

size_t vgpu_memory_report_leaks(void) {
  pthread_mutex_lock(&mem.mu);
  size_t n = mem.count;
  for (size_t i = 0; i < mem.count; ++i) {
    vgpu_alloc* a = mem.items[i];
    vgpu_log("leak: %zu bytes of %s at %p (device %d, allocated by %s)",
             a->size, a->host ? "pinned host memory" : "device memory",
             (void*)a->base, a->device, a->creator ? a->creator : "?");
  }
  pthread_mutex_unlock(&mem.mu);
  return n;
}

void vgpu_memory_teardown(void) {
  pthread_mutex_lock(&mem.mu);
  // Pinned host memory still allocated stays: the program reaches it
  // without a call (a thread of a process that exits may still write it),
  // so freeing it here would be a use-after-free of the program's, not a
  // leak of ours. Strict mode reported it as a leak.
  // Backwards: removing item i moves only those after it, all kept.
  for (size_t i = mem.count; i-- > 0;) {
    vgpu_alloc* a = mem.items[i];
    if (a->host && a->pool == NULL)
      continue;
    remove_locked(a);
    alloc_release(a);
  }
  if (mem.count == 0) {
    free(mem.items);
    mem.items = NULL;
    mem.cap = 0;
  }
  memset(mem.freed, 0, sizeof(mem.freed));
  if (mem.cv_ready) {
    pthread_cond_destroy(&mem.idle_cv);
    mem.cv_ready = false;
  }
  pthread_mutex_unlock(&mem.mu);
}
