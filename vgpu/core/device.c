// Devices, primary contexts and per-device stream bookkeeping.
//
// Devices are a fixed array set up at load time (VGPU_DEVICES). A device's
// |mu| guards its default stream, its stream list and its primary context.
// A lost device (fault injection) stays lost: every later call that touches
// it fails with VGPU_ERR_DEVICE_LOST.
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

vgpu_device vgpu_devices[VGPU_MAX_DEVICES];
int vgpu_device_total;

typedef struct vgpu_context {
  vgpu_object base;
  int device;
} vgpu_context;

static void context_free(vgpu_object* obj) {
  free(obj);
}

void vgpu_devices_init(void) {
  vgpu_device_total = vgpu_cfg.devices;
  for (int i = 0; i < vgpu_device_total; ++i) {
    vgpu_device* d = &vgpu_devices[i];
    memset(d, 0, sizeof(*d));
    pthread_mutex_init(&d->mu, NULL);
    atomic_init(&d->lost, false);
    atomic_init(&d->used_memory, 0);
    vgpu_device_info* in = &d->info;
    snprintf(in->name, sizeof(in->name), "vgpu virtual GPU %d", i);
    in->ordinal = i;
    in->total_memory = vgpu_cfg.device_memory;
    in->multiprocessor_count = vgpu_cfg.kernel_threads + 1;
    in->clock_rate_khz = 1000000;
    in->max_threads_per_block = 1024;
    in->max_block_dim[0] = 1024;
    in->max_block_dim[1] = 1024;
    in->max_block_dim[2] = 64;
    in->max_grid_dim[0] = 2147483647;
    in->max_grid_dim[1] = 65535;
    in->max_grid_dim[2] = 65535;
    in->shared_memory_per_block = 48 * 1024;
    in->total_constant_memory = 64 * 1024;
    in->warp_size = 32;
    in->registers_per_block = 65536;
    in->compute_major = 8;
    in->compute_minor = 0;
    in->pci_bus_id = i + 1;
    in->l2_cache_size = 4 * 1024 * 1024;
  }
}

void vgpu_devices_teardown(void) {
  for (int i = 0; i < vgpu_device_total; ++i) {
    vgpu_device* d = &vgpu_devices[i];
    if (d->default_stream != NULL) {
      vgpu_stream* s = d->default_stream;
      d->default_stream = NULL;
      vgpu_object_release(&s->base);
    }
    free(d->streams);
    d->streams = NULL;
    d->stream_count = d->stream_cap = 0;
    pthread_mutex_destroy(&d->mu);
  }
  vgpu_device_total = 0;
}

int vgpu_device_count(void) {
  return vgpu_device_total;
}

vgpu_status vgpu_device_check_ordinal(int ordinal) {
  return ordinal < 0 || ordinal >= vgpu_device_total ? VGPU_ERR_INVALID_DEVICE
                                                     : VGPU_OK;
}

vgpu_status vgpu_device_check(int ordinal) {
  vgpu_status st = vgpu_device_check_ordinal(ordinal);
  if (st != VGPU_OK)
    return st;
  if (atomic_load(&vgpu_devices[ordinal].lost))
    return VGPU_ERR_DEVICE_LOST;
  return VGPU_OK;
}

const vgpu_device_info* vgpu_device_info_get(int ordinal) {
  if (ordinal < 0 || ordinal >= vgpu_device_total)
    return NULL;
  return &vgpu_devices[ordinal].info;
}

bool vgpu_device_is_lost(int ordinal) {
  return ordinal >= 0 && ordinal < vgpu_device_total &&
         atomic_load(&vgpu_devices[ordinal].lost);
}

void vgpu_device_mark_lost(int ordinal, const char* why) {
  if (ordinal < 0 || ordinal >= vgpu_device_total)
    return;
  if (!atomic_exchange(&vgpu_devices[ordinal].lost, true))
    vgpu_log("device %d lost (%s)", ordinal, why);
}

vgpu_status vgpu_device_memory_info(int ordinal, size_t* free_bytes,
                                    size_t* total_bytes) {
  vgpu_status st = vgpu_device_check(ordinal);
  if (st != VGPU_OK)
    return st;
  vgpu_device* d = &vgpu_devices[ordinal];
  size_t used = atomic_load(&d->used_memory);
  *total_bytes = d->info.total_memory;
  *free_bytes = used < d->info.total_memory ? d->info.total_memory - used : 0;
  return VGPU_OK;
}

vgpu_status vgpu_device_uuid(int ordinal, uint8_t out[VGPU_UUID_SIZE]) {
  vgpu_status st = vgpu_device_check_ordinal(ordinal);
  if (st != VGPU_OK)
    return st;
  // "vgpu-dev", four zero bytes, the ordinal big-endian: readable in a
  // dump (76677075-2d64-6576-0000-00000000000N) and derived from nothing
  // but the ordinal, so both facades and every run agree.
  memset(out, 0, VGPU_UUID_SIZE);
  memcpy(out, "vgpu-dev", 8);
  for (int i = 0; i < 4; ++i)
    out[VGPU_UUID_SIZE - 1 - i] = (uint8_t)((unsigned)ordinal >> (8 * i));
  return VGPU_OK;
}

vgpu_status vgpu_device_default_stream(int ordinal, vgpu_stream** out) {
  vgpu_status st = vgpu_device_check(ordinal);
  if (st != VGPU_OK)
    return st;
  return vgpu_device_default_stream_any(ordinal, out);
}

vgpu_status vgpu_device_default_stream_any(int ordinal, vgpu_stream** out) {
  if (ordinal < 0 || ordinal >= vgpu_device_total)
    return VGPU_ERR_INVALID_DEVICE;
  vgpu_device* d = &vgpu_devices[ordinal];
  pthread_mutex_lock(&d->mu);
  vgpu_stream* s = d->default_stream;
  if (s != NULL)
    vgpu_object_retain(&s->base);
  pthread_mutex_unlock(&d->mu);
  if (s == NULL) {
    // Created outside the lock (creation tracks the stream under it).
    vgpu_stream* fresh = vgpu_stream_new(ordinal, false, true);
    if (fresh == NULL)
      return VGPU_ERR_OUT_OF_MEMORY;
    pthread_mutex_lock(&d->mu);
    if (d->default_stream == NULL) {
      d->default_stream = fresh;
      fresh = NULL;
    }
    s = d->default_stream;
    vgpu_object_retain(&s->base);
    pthread_mutex_unlock(&d->mu);
    if (fresh != NULL)
      vgpu_object_release(&fresh->base);  // lost the race
  }
  *out = s;
  return VGPU_OK;
}

// Streams are tracked (without a reference) from creation to free, for
// device synchronize and the legacy default stream's implicit ordering.
void vgpu_device_track_stream(int ordinal, vgpu_stream* stream) {
  vgpu_device* d = &vgpu_devices[ordinal];
  pthread_mutex_lock(&d->mu);
  if (d->stream_count == d->stream_cap) {
    size_t cap = d->stream_cap ? d->stream_cap * 2 : 16;
    vgpu_stream** p = realloc(d->streams, cap * sizeof(*p));
    if (p == NULL)
      abort();  // internal invariant: cannot track the stream
    d->streams = p;
    d->stream_cap = cap;
  }
  d->streams[d->stream_count++] = stream;
  pthread_mutex_unlock(&d->mu);
}

void vgpu_device_untrack_stream(int ordinal, vgpu_stream* stream) {
  vgpu_device* d = &vgpu_devices[ordinal];
  pthread_mutex_lock(&d->mu);
  for (size_t i = 0; i < d->stream_count; ++i) {
    if (d->streams[i] == stream) {
      d->streams[i] = d->streams[--d->stream_count];
      break;
    }
  }
  pthread_mutex_unlock(&d->mu);
}

// Collects a referenced snapshot of the device's streams (including its
// default stream) into |*out|.
size_t vgpu_device_streams(int ordinal, vgpu_stream*** out) {
  vgpu_device* d = &vgpu_devices[ordinal];
  pthread_mutex_lock(&d->mu);
  size_t n = 0;
  vgpu_stream** list = malloc((d->stream_count + 1) * sizeof(*list));
  if (list != NULL) {
    for (size_t i = 0; i < d->stream_count; ++i) {
      vgpu_stream* s = d->streams[i];
      // A stream being freed has no references left: skip it.
      int refs = atomic_load(&s->base.refs);
      while (refs > 0 &&
             !atomic_compare_exchange_weak(&s->base.refs, &refs, refs + 1)) {
      }
      if (refs > 0)
        list[n++] = s;
    }
  }
  pthread_mutex_unlock(&d->mu);
  *out = list;
  return n;
}

// On a lost device too: the loss is returned once the work queued before
// the call has retired (skipped), like every synchronizing call, so the
// host may then free what that work used.
vgpu_status vgpu_device_synchronize(int ordinal) {
  vgpu_status st = vgpu_device_check(ordinal);
  if (st == VGPU_ERR_INVALID_DEVICE)
    return st;
  st = VGPU_OK;
  vgpu_stream** list = NULL;
  size_t n = vgpu_device_streams(ordinal, &list);
  if (list == NULL)
    return VGPU_ERR_OUT_OF_MEMORY;
  for (size_t i = 0; i < n; ++i) {
    vgpu_status s = vgpu_stream_drain(list[i], "device");
    if (st == VGPU_OK)
      st = s;
    vgpu_object_release(&list[i]->base);
  }
  free(list);
  if (st == VGPU_OK)
    st = vgpu_device_check(ordinal);
  return st;
}

vgpu_status vgpu_context_primary_retain(int ordinal, uint64_t* out) {
  if (ordinal < 0 || ordinal >= vgpu_device_total)
    return VGPU_ERR_INVALID_DEVICE;
  vgpu_device* d = &vgpu_devices[ordinal];
  vgpu_status st = VGPU_OK;
  pthread_mutex_lock(&d->mu);
  if (d->primary == NULL) {
    vgpu_context* c = calloc(1, sizeof(*c));
    if (c == NULL) {
      st = VGPU_ERR_OUT_OF_MEMORY;
      goto done;
    }
    vgpu_object_init(&c->base, VGPU_KIND_CONTEXT, context_free);
    c->device = ordinal;
    st = vgpu_handle_register(&c->base);
    if (st != VGPU_OK) {
      free(c);
      goto done;
    }
    d->primary = &c->base;
  }
  d->primary_refs++;
  *out = d->primary->handle;
done:
  pthread_mutex_unlock(&d->mu);
  return st;
}

vgpu_status vgpu_context_primary_release(int ordinal) {
  if (ordinal < 0 || ordinal >= vgpu_device_total)
    return VGPU_ERR_INVALID_DEVICE;
  vgpu_device* d = &vgpu_devices[ordinal];
  vgpu_status st = VGPU_OK;
  pthread_mutex_lock(&d->mu);
  if (d->primary_refs == 0) {
    st = VGPU_ERR_INVALID_CONTEXT;
  } else {
    d->primary_refs--;
  }
  pthread_mutex_unlock(&d->mu);
  if (st != VGPU_OK) {
    return vgpu_misuse(st,
                       "primary context of device %d released more "
                       "often than retained",
                       ordinal);
  }
  return st;
}

vgpu_status vgpu_context_device(uint64_t ctx, int* ordinal) {
  vgpu_object* obj = NULL;
  if (ctx == 0)
    return VGPU_ERR_INVALID_CONTEXT;
  vgpu_status st = vgpu_handle_lookup(ctx, VGPU_KIND_CONTEXT, &obj);
  if (st != VGPU_OK)
    return VGPU_ERR_INVALID_CONTEXT;
  int dev = ((vgpu_context*)obj)->device;
  vgpu_object_release(obj);
  vgpu_device* d = &vgpu_devices[dev];
  pthread_mutex_lock(&d->mu);
  bool active = d->primary_refs > 0;
  pthread_mutex_unlock(&d->mu);
  if (!active) {
    return vgpu_misuse(VGPU_ERR_INVALID_CONTEXT,
                       "context 0x%" PRIx64
                       " of device %d is not active "
                       "(primary context released)",
                       ctx, dev);
  }
  *ordinal = dev;
  return VGPU_OK;
}
