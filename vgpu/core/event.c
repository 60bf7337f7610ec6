// Events: a handle to the most recent record (mark) made on a stream.
//
// Record captures the stream's work at call time: it enqueues a MARK
// operation and makes that mark the event's current one. Query and
// synchronize look at the current mark, which completes in the critical
// section where its stream retires the MARK operation (stream.c): a host
// that sees the event complete may destroy that stream at once;
// stream-wait-event enqueues a WAIT on the mark that is current at call time,
// so a later re-record does not change what an earlier wait waits for. An event
// never recorded has no mark: query says complete and a wait on it does not
// block (what the vendors do, and why drivers must not rely on it, rule T4).
#include <inttypes.h>
#include <stdlib.h>

#include "internal.h"

#define EVENT_DISABLE_TIMING 0x2u

typedef struct vgpu_event {
  vgpu_object base;
  int device;
  unsigned flags;
  pthread_mutex_t mu;  // guards |mark|
  vgpu_mark* mark;     // most recent record, NULL if never recorded
} vgpu_event;

static void event_free(vgpu_object* obj) {
  vgpu_event* e = (vgpu_event*)obj;
  vgpu_mark_release(e->mark);
  pthread_mutex_destroy(&e->mu);
  free(e);
}

static vgpu_status event_get(uint64_t handle, vgpu_event** out) {
  vgpu_object* obj = NULL;
  vgpu_status st = vgpu_handle_lookup(handle, VGPU_KIND_EVENT, &obj);
  *out = (vgpu_event*)obj;
  return st;
}

// The current mark with a new reference, or NULL.
static vgpu_mark* event_mark(vgpu_event* e) {
  pthread_mutex_lock(&e->mu);
  vgpu_mark* m = e->mark;
  if (m != NULL)
    vgpu_mark_retain(m);
  pthread_mutex_unlock(&e->mu);
  return m;
}

vgpu_status vgpu_event_create(int ordinal, unsigned flags, uint64_t* out) {
  vgpu_status st = vgpu_device_check(ordinal);
  if (st != VGPU_OK)
    return st;
  vgpu_event* e = calloc(1, sizeof(*e));
  if (e == NULL)
    return VGPU_ERR_OUT_OF_MEMORY;
  vgpu_object_init(&e->base, VGPU_KIND_EVENT, event_free);
  e->device = ordinal;
  e->flags = flags;
  pthread_mutex_init(&e->mu, NULL);
  st = vgpu_handle_register(&e->base);
  if (st != VGPU_OK) {
    vgpu_object_release(&e->base);
    return st;
  }
  *out = e->base.handle;
  return VGPU_OK;
}

vgpu_status vgpu_event_record(uint64_t event, uint64_t stream, int ordinal) {
  vgpu_event* e = NULL;
  vgpu_status st = event_get(event, &e);
  if (st != VGPU_OK)
    return st;
  vgpu_stream* s = NULL;
  st = vgpu_stream_get(
      stream, VGPU_STREAM_IS_DEFAULT(stream) ? e->device : ordinal, &s);
  if (st != VGPU_OK)
    goto out_event;
  if (s->device != e->device) {
    st = vgpu_misuse(VGPU_ERR_INVALID_HANDLE,
                     "event 0x%" PRIx64
                     " (device %d) recorded on stream "
                     "0x%" PRIx64 " of device %d",
                     event, e->device, stream, s->device);
    goto out_stream;
  }
  vgpu_mark* m = NULL;
  st = vgpu_stream_record(s, &m);
  if (st != VGPU_OK)
    goto out_stream;
  pthread_mutex_lock(&e->mu);
  vgpu_mark* old = e->mark;
  e->mark = m;
  pthread_mutex_unlock(&e->mu);
  vgpu_mark_release(old);
out_stream:
  vgpu_object_release(&s->base);
out_event:
  vgpu_object_release(&e->base);
  return st;
}

vgpu_status vgpu_event_query(uint64_t event) {
  vgpu_event* e = NULL;
  vgpu_status st = event_get(event, &e);
  if (st != VGPU_OK)
    return st;
  st = vgpu_device_check(e->device);
  vgpu_mark* m = event_mark(e);
  if (st == VGPU_OK && m != NULL)
    st = vgpu_mark_done(m) ? m->status : VGPU_ERR_NOT_READY;
  vgpu_mark_release(m);
  vgpu_object_release(&e->base);
  return st;
}

// On a lost device too: the recorded work retires (skipped) before the
// loss is returned, as for a stream synchronize.
vgpu_status vgpu_event_synchronize(uint64_t event) {
  vgpu_event* e = NULL;
  vgpu_status st = event_get(event, &e);
  if (st != VGPU_OK)
    return st;
  vgpu_mark* m = event_mark(e);
  if (m != NULL)
    st = vgpu_mark_wait(m, "event", event);
  if (st == VGPU_OK)
    st = vgpu_device_check(e->device);
  vgpu_mark_release(m);
  vgpu_object_release(&e->base);
  return st;
}

vgpu_status vgpu_event_elapsed_ms(uint64_t start, uint64_t end, float* ms) {
  vgpu_event* a = NULL;
  vgpu_event* b = NULL;
  vgpu_status st = event_get(start, &a);
  if (st != VGPU_OK)
    return st;
  st = event_get(end, &b);
  if (st != VGPU_OK)
    goto out_a;
  vgpu_mark* ma = event_mark(a);
  vgpu_mark* mb = event_mark(b);
  if (((a->flags | b->flags) & EVENT_DISABLE_TIMING) != 0 || ma == NULL ||
      mb == NULL) {
    st = VGPU_ERR_INVALID_HANDLE;
  } else if (!vgpu_mark_done(ma) || !vgpu_mark_done(mb)) {
    st = VGPU_ERR_NOT_READY;
  } else {
    *ms = (float)((double)((int64_t)mb->time_ns - (int64_t)ma->time_ns) / 1e6);
  }
  vgpu_mark_release(ma);
  vgpu_mark_release(mb);
  vgpu_object_release(&b->base);
out_a:
  vgpu_object_release(&a->base);
  return st;
}

vgpu_status vgpu_event_destroy(uint64_t event) {
  vgpu_event* e = NULL;
  vgpu_status st = event_get(event, &e);
  if (st != VGPU_OK)
    return st;
  vgpu_mark* m = event_mark(e);
  bool pending = m != NULL && !vgpu_mark_done(m);
  vgpu_mark_release(m);
  if (pending && vgpu_cfg.strict) {
    vgpu_object_release(&e->base);
    return vgpu_misuse(VGPU_ERR_IN_USE,
                       "destroying event 0x%" PRIx64
                       " (device %d) whose "
                       "last record has not completed; synchronize it first",
                       event, e->device);
  }
  vgpu_handle_unregister(&e->base);
  vgpu_object_release(&e->base);
  return VGPU_OK;
}

vgpu_status vgpu_stream_wait_event(uint64_t stream, int ordinal,
                                   uint64_t event) {
  vgpu_stream* s = NULL;
  vgpu_status st = vgpu_stream_get(stream, ordinal, &s);
  if (st != VGPU_OK)
    return st;
  vgpu_event* e = NULL;
  st = event_get(event, &e);
  if (st != VGPU_OK)
    goto out_stream;
  // The record current at call time; none: nothing to wait for.
  vgpu_mark* m = event_mark(e);
  if (m != NULL) {
    st = vgpu_stream_wait_mark(s, m);
    vgpu_mark_release(m);
  }
  vgpu_object_release(&e->base);
out_stream:
  vgpu_object_release(&s->base);
  return st;
}
