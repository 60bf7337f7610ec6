// Streams: in-order queues of operations run by the worker threads.
//
// State machine (under the stream's |mu|):
//   IDLE    -> READY    an operation is enqueued (pushed to the scheduler)
//   READY   -> RUNNING  a worker takes the head operation
//   READY   -> BLOCKED  the head is a WAIT on a mark not done yet: the
//                       stream registers a waiter and no thread is held
//   BLOCKED -> READY    the mark completes (waiter callback)
//   RUNNING -> READY    the head completed and more operations are queued
//   RUNNING -> IDLE     the head completed and the queue is empty
// A stream is therefore in the ready list at most once and at most one
// worker runs it: operations of one stream never overlap, operations of
// different streams may.
//
// Completion order of one operation: its memory uses are released, then,
// in one critical section of |mu|, it leaves the queue, |seq_done| advances
// and, for a MARK operation, the mark completes (waking synchronizers of
// the stream and of the event). So a host that returns from any
// synchronize or query that saw the work done may free everything the
// work used and destroy the stream, the event or the executable graph at
// once: no check reads a count that is still behind. Streams blocked on
// the mark are released after |mu| is dropped (their callbacks take their
// own locks), so they, too, run only after the bookkeeping.
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static atomic_uint stream_ordinals;

static void stream_waiter_fn(vgpu_mark_waiter* waiter);

static void stream_free(vgpu_object* obj) {
  vgpu_stream* s = (vgpu_stream*)obj;
  vgpu_device_untrack_stream(s->device, s);
  pthread_mutex_lock(&s->mu);
  vgpu_stream_discard_locked(s);
  pthread_mutex_unlock(&s->mu);
  pthread_mutex_destroy(&s->mu);
  pthread_cond_destroy(&s->drained_cv);
  free(s);
}

vgpu_stream* vgpu_stream_new(int device, bool nonblocking, bool is_default) {
  vgpu_stream* s = calloc(1, sizeof(*s));
  if (s == NULL)
    return NULL;
  vgpu_object_init(&s->base, VGPU_KIND_STREAM, stream_free);
  s->device = device;
  s->nonblocking = nonblocking;
  s->is_default = is_default;
  s->ordinal = atomic_fetch_add(&stream_ordinals, 1);
  pthread_mutex_init(&s->mu, NULL);
  vgpu_cond_init(&s->drained_cv);
  s->waiter.fn = stream_waiter_fn;
  vgpu_device_track_stream(device, s);
  return s;
}

static vgpu_bin op_bin = VGPU_BIN_INIT(256);

vgpu_op* vgpu_op_new(vgpu_op_type type) {
  vgpu_op* op = vgpu_bin_take(&op_bin, sizeof(*op));
  if (op != NULL)
    op->type = type;
  return op;
}

// Releases what a finished (or discarded) operation holds on memory and
// modules; the rest goes with vgpu_op_free.
static void op_release_uses(vgpu_op* op) {
  vgpu_uses_release(&op->uses);
  if (op->module != NULL) {
    vgpu_module_inflight_add(op->module, -1);
    op->module = NULL;
  }
}

void vgpu_op_free(vgpu_op* op) {
  if (op == NULL)
    return;
  op_release_uses(op);
  vgpu_work_clear(&op->work);
  vgpu_mark_release(op->mark);
  if (op->graph != NULL)
    vgpu_exec_state_release(op->graph);
  vgpu_bin_put(&op_bin, op);
}

// vgpu_stream_get, on a lost device too.
static vgpu_status stream_get_any(uint64_t handle, int ordinal,
                                  vgpu_stream** out) {
  *out = NULL;
  if (VGPU_STREAM_IS_DEFAULT(handle))
    return vgpu_device_default_stream_any(ordinal, out);
  vgpu_object* obj = NULL;
  vgpu_status st = vgpu_handle_lookup(handle, VGPU_KIND_STREAM, &obj);
  if (st != VGPU_OK)
    return st;
  *out = (vgpu_stream*)obj;
  return VGPU_OK;
}

vgpu_status vgpu_stream_get(uint64_t handle, int ordinal, vgpu_stream** out) {
  vgpu_status st = stream_get_any(handle, ordinal, out);
  if (st != VGPU_OK)
    return st;
  st = vgpu_device_check((*out)->device);
  if (st != VGPU_OK) {
    vgpu_object_release(&(*out)->base);
    *out = NULL;
  }
  return st;
}

// Appends |op| without the legacy default stream's implicit ordering.
static void enqueue_raw(vgpu_stream* s, vgpu_op* op) {
  pthread_mutex_lock(&s->mu);
  op->seq = ++s->seq_enqueued;
  if (s->tail != NULL) {
    s->tail->next = op;
  } else {
    s->head = op;
  }
  s->tail = op;
  if (s->state == VGPU_STREAM_IDLE) {
    s->state = VGPU_STREAM_READY;
    vgpu_sched_push_locked(s);
  }
  pthread_mutex_unlock(&s->mu);
}

static vgpu_status record_raw(vgpu_stream* s, vgpu_mark** out) {
  vgpu_op* op = vgpu_op_new(VGPU_OP_MARK);
  vgpu_mark* m = vgpu_mark_create(s->device);
  if (op == NULL || m == NULL) {
    free(op);
    vgpu_mark_release(m);
    return VGPU_ERR_OUT_OF_MEMORY;
  }
  vgpu_mark_retain(m);
  op->mark = m;
  enqueue_raw(s, op);
  *out = m;
  return VGPU_OK;
}

static vgpu_status wait_raw(vgpu_stream* s, vgpu_mark* m) {
  if (vgpu_mark_done(m))
    return VGPU_OK;
  vgpu_op* op = vgpu_op_new(VGPU_OP_WAIT);
  if (op == NULL)
    return VGPU_ERR_OUT_OF_MEMORY;
  vgpu_mark_retain(m);
  op->mark = m;
  enqueue_raw(s, op);
  return VGPU_OK;
}

// Makes |s| wait for the queued work of |other| (a record and a wait).
static vgpu_status order_after(vgpu_stream* s, vgpu_stream* other) {
  if (!vgpu_stream_busy(other))
    return VGPU_OK;
  vgpu_mark* m = NULL;
  vgpu_status st = record_raw(other, &m);
  if (st != VGPU_OK)
    return st;
  st = wait_raw(s, m);
  vgpu_mark_release(m);
  return st;
}

// The legacy default stream: its work waits for all earlier work of the
// device's blocking streams, and their work waits for its earlier work.
static vgpu_status legacy_order(vgpu_stream* s) {
  if (s->nonblocking)
    return VGPU_OK;
  vgpu_status st = VGPU_OK;
  if (s->is_default) {
    vgpu_stream** list = NULL;
    size_t n = vgpu_device_streams(s->device, &list);
    if (list == NULL)
      return VGPU_ERR_OUT_OF_MEMORY;
    for (size_t i = 0; i < n; ++i) {
      if (st == VGPU_OK && list[i] != s && !list[i]->nonblocking)
        st = order_after(s, list[i]);
      vgpu_object_release(&list[i]->base);
    }
    free(list);
    return st;
  }
  vgpu_device* d = &vgpu_devices[s->device];
  pthread_mutex_lock(&d->mu);
  vgpu_stream* def = d->default_stream;
  if (def != NULL)
    vgpu_object_retain(&def->base);
  pthread_mutex_unlock(&d->mu);
  if (def != NULL) {
    st = order_after(s, def);
    vgpu_object_release(&def->base);
  }
  return st;
}

vgpu_status vgpu_stream_enqueue(vgpu_stream* s, vgpu_op* op) {
  vgpu_status st = legacy_order(s);
  if (st != VGPU_OK) {
    vgpu_op_free(op);
    return st;
  }
  enqueue_raw(s, op);
  return VGPU_OK;
}

vgpu_status vgpu_stream_signal_mark(vgpu_stream* s, vgpu_mark* m) {
  vgpu_op* op = vgpu_op_new(VGPU_OP_MARK);
  if (op == NULL)
    return VGPU_ERR_OUT_OF_MEMORY;
  vgpu_mark_retain(m);
  op->mark = m;
  enqueue_raw(s, op);
  return VGPU_OK;
}

vgpu_status vgpu_stream_record(vgpu_stream* s, vgpu_mark** out) {
  vgpu_status st = legacy_order(s);
  if (st != VGPU_OK)
    return st;
  return record_raw(s, out);
}

vgpu_status vgpu_stream_wait_mark(vgpu_stream* s, vgpu_mark* m) {
  vgpu_status st = legacy_order(s);
  if (st != VGPU_OK)
    return st;
  return wait_raw(s, m);
}

bool vgpu_stream_busy(vgpu_stream* s) {
  pthread_mutex_lock(&s->mu);
  bool busy = s->seq_done < s->seq_enqueued;
  pthread_mutex_unlock(&s->mu);
  return busy;
}

// Waits until every operation enqueued before the call has completed.
static vgpu_status wait_seq(vgpu_stream* s, uint64_t target, const char* what) {
  uint64_t deadline = vgpu_wait_deadline();
  bool timed_out = false;
  pthread_mutex_lock(&s->mu);
  s->sync_waiters++;
  while (s->seq_done < target) {
    if (!vgpu_cond_wait_bounded(&s->drained_cv, &s->mu, deadline)) {
      timed_out = true;
      break;
    }
  }
  s->sync_waiters--;
  pthread_mutex_unlock(&s->mu);
  if (timed_out) {
    vgpu_log(
        "%s: waited more than VGPU_MAX_WAIT_MS=%u ms for %s stream "
        "0x%" PRIx64 " (device %d)",
        vgpu_tls_call ? vgpu_tls_call : "?", vgpu_cfg.max_wait_ms, what,
        s->base.handle, s->device);
    return VGPU_ERR_TIMEOUT;
  }
  return vgpu_device_is_lost(s->device) ? VGPU_ERR_DEVICE_LOST : VGPU_OK;
}

vgpu_status vgpu_stream_drain(vgpu_stream* s, const char* what) {
  pthread_mutex_lock(&s->mu);
  uint64_t target = s->seq_enqueued;
  pthread_mutex_unlock(&s->mu);
  return wait_seq(s, target, what);
}

// Mark waiter callback: the WAIT at the head of a BLOCKED stream is
// satisfied. Runs on the thread that completed the mark, no lock held.
static void stream_waiter_fn(vgpu_mark_waiter* waiter) {
  vgpu_stream* s =
      (vgpu_stream*)((char*)waiter - offsetof(vgpu_stream, waiter));
  pthread_mutex_lock(&s->mu);
  if (s->state == VGPU_STREAM_BLOCKED) {
    s->state = VGPU_STREAM_READY;
    s->blocked_on = NULL;
    vgpu_sched_push_locked(s);
  }
  pthread_mutex_unlock(&s->mu);
  vgpu_object_release(&s->base);  // the reference taken when blocking
}

bool vgpu_stream_run_head(vgpu_stream* s) {
  pthread_mutex_lock(&s->mu);
  vgpu_op* op = s->head;
  if (op == NULL || s->state != VGPU_STREAM_READY) {
    pthread_mutex_unlock(&s->mu);  // discarded at teardown
    return false;
  }
  if (op->type == VGPU_OP_WAIT && !vgpu_mark_done(op->mark)) {
    s->state = VGPU_STREAM_BLOCKED;
    s->blocked_on = op->mark;
    vgpu_object_retain(&s->base);  // owned by the waiter registration
    if (vgpu_mark_add_waiter(op->mark, &s->waiter)) {
      pthread_mutex_unlock(&s->mu);
      return false;
    }
    // Completed in between: run on. The worker still holds a reference.
    s->blocked_on = NULL;
    atomic_fetch_sub(&s->base.refs, 1);
  }
  s->state = VGPU_STREAM_RUNNING;
  pthread_mutex_unlock(&s->mu);

  // The head operation runs without the stream lock: only this worker
  // touches it, and enqueuers only append behind it.
  vgpu_status status =
      vgpu_device_is_lost(s->device) ? VGPU_ERR_DEVICE_LOST : VGPU_OK;
  vgpu_jitter(s->ordinal, op->seq);
  bool alive =
      op->uses.count == 0 || vgpu_uses_alive(&op->uses, "an operation");
  switch (op->type) {
    case VGPU_OP_WORK:
      if (alive)
        vgpu_work_run(&op->work, status);
      break;
    case VGPU_OP_MARK:
      break;  // completed below, with the bookkeeping
    case VGPU_OP_WAIT:
      break;
    case VGPU_OP_GRAPH:
      if (alive)
        vgpu_exec_state_run(op->graph, op->graph_launch, status);
      break;
  }
  op_release_uses(op);

  vgpu_mark_waiter* released = NULL;
  pthread_mutex_lock(&s->mu);
  s->head = op->next;
  if (s->head == NULL)
    s->tail = NULL;
  s->seq_done = op->seq;
  if (op->type == VGPU_OP_MARK)
    released = vgpu_mark_complete_deferred(op->mark, status);
  if (s->sync_waiters > 0)
    pthread_cond_broadcast(&s->drained_cv);
  bool relisted = s->head != NULL;
  if (relisted) {
    s->state = VGPU_STREAM_READY;
    vgpu_sched_relist_locked(s);
  } else {
    s->state = VGPU_STREAM_IDLE;
  }
  pthread_mutex_unlock(&s->mu);
  vgpu_mark_run_waiters(released);
  vgpu_op_free(op);
  return relisted;
}

void vgpu_stream_discard_locked(vgpu_stream* s) {
  if (s->state == VGPU_STREAM_BLOCKED && s->blocked_on != NULL) {
    if (vgpu_mark_remove_waiter(s->blocked_on, &s->waiter))
      atomic_fetch_sub(&s->base.refs, 1);  // the waiter's reference
    s->blocked_on = NULL;
  }
  while (s->head != NULL) {
    vgpu_op* op = s->head;
    s->head = op->next;
    s->seq_done = op->seq;  // bookkeeping first, as in run_head
    if (op->type == VGPU_OP_MARK)
      vgpu_mark_complete(op->mark, VGPU_OK);
    vgpu_op_free(op);
  }
  s->tail = NULL;
  s->state = VGPU_STREAM_IDLE;
  pthread_cond_broadcast(&s->drained_cv);
}

// ------------------------------------------------------------ public API

vgpu_status vgpu_stream_create(int ordinal, bool nonblocking, int priority,
                               uint64_t* out) {
  (void)priority;
  vgpu_status st = vgpu_device_check(ordinal);
  if (st != VGPU_OK)
    return st;
  vgpu_stream* s = vgpu_stream_new(ordinal, nonblocking, false);
  if (s == NULL)
    return VGPU_ERR_OUT_OF_MEMORY;
  st = vgpu_handle_register(&s->base);
  if (st != VGPU_OK) {
    vgpu_object_release(&s->base);
    return st;
  }
  *out = s->base.handle;
  return VGPU_OK;
}

vgpu_status vgpu_stream_destroy(uint64_t handle) {
  vgpu_object* obj = NULL;
  vgpu_status st = vgpu_handle_lookup(handle, VGPU_KIND_STREAM, &obj);
  if (st != VGPU_OK)
    return st;
  vgpu_stream* s = (vgpu_stream*)obj;
  pthread_mutex_lock(&s->mu);
  uint64_t pending = s->seq_enqueued - s->seq_done;
  pthread_mutex_unlock(&s->mu);
  if (pending > 0 && vgpu_cfg.strict) {
    vgpu_object_release(obj);
    return vgpu_misuse(VGPU_ERR_IN_USE,
                       "destroying stream 0x%" PRIx64
                       " (device %d) with %" PRIu64
                       " pending operation(s); synchronize it first",
                       handle, s->device, pending);
  }
  // Lax: the vendors' behaviour; queued work completes, then the stream
  // goes away (the scheduler holds references while work is queued).
  vgpu_handle_unregister(obj);
  vgpu_object_release(obj);
  return VGPU_OK;
}

// On a lost device too: the work queued before the call retires (skipped,
// host functions run) before the loss is returned, so the host may then
// free what it used and destroy the stream, as after any error.
vgpu_status vgpu_stream_synchronize(uint64_t handle, int ordinal) {
  vgpu_stream* s = NULL;
  vgpu_status st = stream_get_any(handle, ordinal, &s);
  if (st != VGPU_OK)
    return st;
  st = vgpu_stream_drain(s, "stream");
  vgpu_object_release(&s->base);
  return st;
}

vgpu_status vgpu_stream_query(uint64_t handle, int ordinal) {
  vgpu_stream* s = NULL;
  vgpu_status st = vgpu_stream_get(handle, ordinal, &s);
  if (st != VGPU_OK)
    return st;
  st = vgpu_stream_busy(s) ? VGPU_ERR_NOT_READY : VGPU_OK;
  vgpu_object_release(&s->base);
  return st;
}

// The device of a stream, lost or not: each call checks the loss itself.
vgpu_status vgpu_stream_device(uint64_t handle, int ordinal, int* out) {
  vgpu_stream* s = NULL;
  vgpu_status st = stream_get_any(handle, ordinal, &s);
  if (st != VGPU_OK)
    return st;
  *out = s->device;
  vgpu_object_release(&s->base);
  return VGPU_OK;
}

// Enqueues |work| (ownership passes) after checking it; waits for it when
// |sync|.
static vgpu_status submit_work(uint64_t handle, int ordinal, vgpu_work* work,
                               bool sync) {
  vgpu_stream* s = NULL;
  vgpu_status st = vgpu_stream_get(sync ? 0 : handle, ordinal, &s);
  if (st != VGPU_OK) {
    vgpu_work_clear(work);
    return st;
  }
  vgpu_op* op = vgpu_op_new(VGPU_OP_WORK);
  if (op == NULL) {
    st = VGPU_ERR_OUT_OF_MEMORY;
    vgpu_work_clear(work);
    goto out_release_stream;
  }
  op->work = *work;
  st = vgpu_work_uses(&op->work, &op->uses);
  if (st != VGPU_OK) {
    vgpu_op_free(op);
    goto out_release_stream;
  }
  if (op->work.type == VGPU_WORK_KERNEL) {
    op->module = op->work.launch->function->module;
    vgpu_module_inflight_add(op->module, 1);
  }
  st = vgpu_stream_enqueue(s, op);
  if (st == VGPU_OK && sync)
    st = vgpu_stream_drain(s, "default");
out_release_stream:
  vgpu_object_release(&s->base);
  return st;
}

vgpu_status vgpu_stream_host_call(uint64_t stream, int ordinal,
                                  const vgpu_host_call* call) {
  if (call == NULL || call->invoke == NULL || call->fn == NULL)
    return VGPU_ERR_INVALID_VALUE;
  vgpu_work w = {.type = VGPU_WORK_HOST, .host = *call};
  return submit_work(stream, ordinal, &w, false);
}

// CUDA's synchronous copy from pageable host memory to device memory
// "returns once the pageable buffer has been copied to the staging memory
// for DMA transfer to device memory, but the DMA to final destination may
// not have completed", on the legacy stream. With
// VGPU_PAGEABLE_COPY_DELAY_US set, a synchronous 1D copy of that kind does
// that: the source is copied to the heap and the copy lands on the default
// stream that long later, so a runtime that takes the return for
// completion sees its later work on other streams overtaken.
static bool copy_is_staged(const vgpu_copy* copy, bool sync) {
  if (!sync || vgpu_cfg.pageable_copy_delay_us == 0 || copy->width == 0 ||
      copy->height != 1 || copy->depth != 1)
    return false;
  int src_device = 0;  // -1: inside no allocation, so pageable
  return vgpu_mem_classify(copy->dst, NULL) == VGPU_PTR_DEVICE &&
         vgpu_mem_classify(copy->src, &src_device) == VGPU_PTR_HOST &&
         src_device == -1;
}

vgpu_status vgpu_stream_copy(uint64_t stream, int ordinal,
                             const vgpu_copy* copy, bool sync) {
  vgpu_work w = {.type = VGPU_WORK_COPY, .copy = *copy};
  if (copy_is_staged(copy, sync)) {
    w.staged = malloc(copy->width);
    if (w.staged == NULL)
      return VGPU_ERR_OUT_OF_MEMORY;
    memcpy(w.staged, copy->src, copy->width);
    w.copy.src = w.staged;
    w.delay_us = vgpu_cfg.pageable_copy_delay_us;
    return submit_work(0, ordinal, &w, false);
  }
  return submit_work(stream, ordinal, &w, sync);
}

vgpu_status vgpu_stream_fill(uint64_t stream, int ordinal,
                             const vgpu_fill* fill, bool sync) {
  vgpu_work w = {.type = VGPU_WORK_FILL, .fill = *fill};
  return submit_work(stream, ordinal, &w, sync);
}

vgpu_status vgpu_stream_submit_work(uint64_t stream, int ordinal,
                                    vgpu_work* work) {
  return submit_work(stream, ordinal, work, false);
}
