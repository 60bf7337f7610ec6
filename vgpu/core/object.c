// Reference-counted objects and the handle registry.
//
// A handle is 0x56 (the 'V' marker) in bits 56..63, the kind in bits 48..55,
// the slot's generation in bits 32..47 and the slot index in bits 0..31. A
// slot's generation is bumped when its handle is unregistered, so a stale
// handle no longer matches; freed slots are reused in FIFO order, so the
// same slot comes back as late as possible. The marker keeps handles away
// from the special values 0, 1 and 2 (default streams) and from anything a
// caller may mistake for a pointer the runtime dereferences: nothing here
// ever dereferences a handle.
#include <inttypes.h>
#include <stdlib.h>

#include "internal.h"

#define HANDLE_MARKER 0x56ull
#define NO_SLOT UINT32_MAX

typedef struct slot {
  vgpu_object* obj;  // NULL when free
  uint16_t gen;
  uint32_t next_free;
} slot;

// |mu| guards everything; it is a leaf lock (object frees happen outside).
static struct {
  pthread_mutex_t mu;
  slot* slots;
  uint32_t count, cap;
  uint32_t free_head, free_tail;
} reg = {PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0, NO_SLOT, NO_SLOT};

static const char* const kind_names[VGPU_KIND_COUNT] = {
    "none",       "context",          "stream", "event",    "graph",
    "graph node", "executable graph", "module", "function", "memory pool",
};

const char* vgpu_kind_name(vgpu_kind kind) {
  return kind < VGPU_KIND_COUNT ? kind_names[kind] : "?";
}

void vgpu_object_init(vgpu_object* obj, vgpu_kind kind,
                      void (*free_fn)(vgpu_object*)) {
  atomic_init(&obj->refs, 1);
  obj->kind = kind;
  obj->handle = 0;
  obj->creator = vgpu_tls_call;
  obj->free_fn = free_fn;
}

void vgpu_object_retain(vgpu_object* obj) {
  atomic_fetch_add_explicit(&obj->refs, 1, memory_order_relaxed);
}

void vgpu_object_release(vgpu_object* obj) {
  if (obj == NULL)
    return;
  // acq_rel: the freeing thread sees every write made under earlier refs.
  if (atomic_fetch_sub_explicit(&obj->refs, 1, memory_order_acq_rel) == 1)
    obj->free_fn(obj);
}

static uint64_t make_handle(vgpu_kind kind, uint16_t gen, uint32_t index) {
  return (HANDLE_MARKER << 56) | ((uint64_t)kind << 48) |
         ((uint64_t)gen << 32) | index;
}

vgpu_status vgpu_handle_register(vgpu_object* obj) {
  pthread_mutex_lock(&reg.mu);
  uint32_t index = reg.free_head;
  if (index != NO_SLOT) {
    reg.free_head = reg.slots[index].next_free;
    if (reg.free_head == NO_SLOT)
      reg.free_tail = NO_SLOT;
  } else {
    if (reg.count == reg.cap) {
      uint32_t cap = reg.cap ? reg.cap * 2 : 64;
      slot* s = realloc(reg.slots, cap * sizeof(slot));
      if (s == NULL) {
        pthread_mutex_unlock(&reg.mu);
        return VGPU_ERR_OUT_OF_MEMORY;
      }
      reg.slots = s;
      reg.cap = cap;
    }
    index = reg.count++;
    reg.slots[index].gen = 1;
  }
  slot* s = &reg.slots[index];
  s->obj = obj;
  s->next_free = NO_SLOT;
  obj->handle = make_handle(obj->kind, s->gen, index);
  pthread_mutex_unlock(&reg.mu);
  return VGPU_OK;
}

void vgpu_handle_unregister(vgpu_object* obj) {
  uint64_t h = obj->handle;
  if (h == 0)
    return;
  uint32_t index = (uint32_t)h;
  pthread_mutex_lock(&reg.mu);
  slot* s = &reg.slots[index];
  if (s->obj == obj) {
    s->obj = NULL;
    s->gen = (uint16_t)(s->gen + 1);
    if (s->gen == 0)
      s->gen = 1;
    if (reg.free_tail == NO_SLOT) {
      reg.free_head = index;
    } else {
      reg.slots[reg.free_tail].next_free = index;
    }
    reg.free_tail = index;
  }
  obj->handle = 0;
  pthread_mutex_unlock(&reg.mu);
  vgpu_object_release(obj);
}

vgpu_status vgpu_handle_lookup(uint64_t handle, vgpu_kind kind,
                               vgpu_object** out) {
  *out = NULL;
  if (handle == 0) {
    return vgpu_misuse(VGPU_ERR_INVALID_HANDLE, "NULL %s handle",
                       vgpu_kind_name(kind));
  }
  if ((handle >> 56) != HANDLE_MARKER) {
    return vgpu_misuse(VGPU_ERR_INVALID_HANDLE,
                       "0x%" PRIx64 " is not a %s handle (not a vgpu handle)",
                       handle, vgpu_kind_name(kind));
  }
  vgpu_kind got = (vgpu_kind)((handle >> 48) & 0xff);
  if (got != kind) {
    return vgpu_misuse(VGPU_ERR_INVALID_HANDLE,
                       "%s handle 0x%" PRIx64 " passed where a %s is expected",
                       vgpu_kind_name(got), handle, vgpu_kind_name(kind));
  }
  uint32_t index = (uint32_t)handle;
  uint16_t gen = (uint16_t)(handle >> 32);
  pthread_mutex_lock(&reg.mu);
  vgpu_object* obj = NULL;
  if (index < reg.count && reg.slots[index].gen == gen &&
      reg.slots[index].obj != NULL) {
    obj = reg.slots[index].obj;
    vgpu_object_retain(obj);
  }
  pthread_mutex_unlock(&reg.mu);
  if (obj == NULL) {
    return vgpu_misuse(VGPU_ERR_INVALID_HANDLE,
                       "use of destroyed %s 0x%" PRIx64, vgpu_kind_name(kind),
                       handle);
  }
  *out = obj;
  return VGPU_OK;
}

size_t vgpu_handle_for_each(vgpu_kind kind, void (*fn)(vgpu_object*, void*),
                            void* arg) {
  size_t n = 0;
  pthread_mutex_lock(&reg.mu);
  for (uint32_t i = 0; i < reg.count; ++i) {
    vgpu_object* obj = reg.slots[i].obj;
    if (obj == NULL || obj->kind != kind)
      continue;
    ++n;
    if (fn != NULL)
      fn(obj, arg);
  }
  pthread_mutex_unlock(&reg.mu);
  return n;
}

void vgpu_handle_unregister_all(vgpu_kind kind) {
  for (;;) {
    vgpu_object* found = NULL;
    pthread_mutex_lock(&reg.mu);
    for (uint32_t i = 0; i < reg.count && found == NULL; ++i) {
      vgpu_object* obj = reg.slots[i].obj;
      if (obj != NULL && obj->kind == kind)
        found = obj;
    }
    pthread_mutex_unlock(&reg.mu);
    if (found == NULL)
      return;
    vgpu_handle_unregister(found);
  }
}

void vgpu_registry_teardown(void) {
  pthread_mutex_lock(&reg.mu);
  free(reg.slots);
  reg.slots = NULL;
  reg.count = reg.cap = 0;
  reg.free_head = reg.free_tail = NO_SLOT;
  pthread_mutex_unlock(&reg.mu);
}
