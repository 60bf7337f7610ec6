// Copyright 2026 The HAL Authors.

#include "fake_device.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hal/time.h"

typedef struct fake_event_t {
  pthread_mutex_t mutex;
  pthread_cond_t cond;
  uint64_t recorded;   // records issued
  uint64_t completed;  // records executed by a stream
  // The record whose synchronize failed (0: none): every synchronize of it
  // fails, as a device error stays reported (the completion thread and a
  // host waiter helping it may both synchronize one record).
  uint64_t failed_epoch;
} fake_event_t;

typedef enum fake_op_kind_e {
  FAKE_OP_WAIT,
  FAKE_OP_RUN,
  FAKE_OP_RECORD,
} fake_op_kind_t;

typedef struct fake_op_t {
  fake_op_kind_t kind;
  fake_event_t* event;
  uint64_t epoch;
  fake_payload_t* payload;
  struct fake_op_t* next;
} fake_op_t;

struct fake_stream_t {
  fake_device_t* device;
  hal_sync_queue_t* queue;
  pthread_mutex_t mutex;
  pthread_cond_t cond;
  fake_op_t* head;
  fake_op_t* tail;
  bool stop;
  // Fail the next record_event (fake_stream_fail_next_record()).
  atomic_bool fail_next_record;
  // Fail the next synchronize_event, after the event completed
  // (fake_stream_fail_next_synchronize()).
  atomic_bool fail_next_synchronize;
  // The next synchronize_event fails alone (a later one of the same event
  // succeeds), and returns only once released
  // (fake_stream_hold_next_synchronize_failure()).
  atomic_bool hold_next_synchronize_failure;
  atomic_bool held_synchronize_released;
  // synchronize_event calls begun and returned.
  _Atomic int64_t synchronize_calls;
  _Atomic int64_t synchronize_returns;
  uint64_t seed;  // stream thread only
  pthread_t thread;
  // may_issue_on_submitter calls so far (FAKE_ISSUE_MIXED alternates).
  _Atomic uint64_t issue_asks;
  // Threads between the start of an issue and its record (at most one).
  _Atomic int issuing;
};

static uint64_t fake_random(uint64_t* state) {
  uint64_t x = *state;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *state = x;
  return x * UINT64_C(2685821657736338717);
}

//===----------------------------------------------------------------------===//
// Events
//===----------------------------------------------------------------------===//

static hal_status_t fake_event_create(void* self, void** out_handle) {
  fake_device_t* device = (fake_device_t*)self;
  fake_event_t* event = calloc(1, sizeof(*event));
  if (!event)
    return hal_make_status(HAL_STATUS_RESOURCE_EXHAUSTED, "fake");
  pthread_mutex_init(&event->mutex, NULL);
  pthread_cond_init(&event->cond, NULL);
  atomic_fetch_add(&device->live_events, 1);
  *out_handle = event;
  return HAL_OK;
}

static void fake_event_destroy(void* self, void* handle) {
  fake_device_t* device = (fake_device_t*)self;
  fake_event_t* event = (fake_event_t*)handle;
  pthread_cond_destroy(&event->cond);
  pthread_mutex_destroy(&event->mutex);
  free(event);
  atomic_fetch_sub(&device->live_events, 1);
}

static void fake_event_wait_for(fake_event_t* event, uint64_t epoch) {
  pthread_mutex_lock(&event->mutex);
  while (event->completed < epoch) {
    pthread_cond_wait(&event->cond, &event->mutex);
  }
  pthread_mutex_unlock(&event->mutex);
}

void fake_device_initialize(int64_t max_delay_ns, fake_device_t* out_device) {
  atomic_init(&out_device->t4_violations, 0);
  atomic_init(&out_device->device_waits, 0);
  atomic_init(&out_device->live_events, 0);
  atomic_init(&out_device->worker_records, 0);
  atomic_init(&out_device->submitter_records, 0);
  atomic_init(&out_device->overlapping_issues, 0);
  out_device->max_delay_ns = max_delay_ns;
  out_device->issue_policy = FAKE_ISSUE_MIXED;
  hal_sync_event_interface_t interface = {out_device, fake_event_create,
                                          fake_event_destroy};
  hal_status_t status =
      hal_sync_event_pool_create(interface, 8, &out_device->event_pool);
  if (status)
    abort();
}

void fake_device_deinitialize(fake_device_t* device) {
  hal_sync_event_pool_destroy(device->event_pool);
  if (atomic_load(&device->live_events) != 0) {
    fprintf(stderr, "fake device: %lld events leaked\n",
            (long long)atomic_load(&device->live_events));
    abort();
  }
}

//===----------------------------------------------------------------------===//
// Stream thread
//===----------------------------------------------------------------------===//

static void fake_stream_push(fake_stream_t* stream, fake_op_t op) {
  fake_op_t* copy = malloc(sizeof(*copy));
  if (!copy)
    abort();
  *copy = op;
  copy->next = NULL;
  pthread_mutex_lock(&stream->mutex);
  if (stream->tail) {
    stream->tail->next = copy;
  } else {
    stream->head = copy;
  }
  stream->tail = copy;
  pthread_cond_signal(&stream->cond);
  pthread_mutex_unlock(&stream->mutex);
}

static void* fake_stream_main(void* arg) {
  fake_stream_t* stream = (fake_stream_t*)arg;
  pthread_mutex_lock(&stream->mutex);
  for (;;) {
    fake_op_t* op = stream->head;
    if (!op) {
      if (stream->stop)
        break;
      pthread_cond_wait(&stream->cond, &stream->mutex);
      continue;
    }
    stream->head = op->next;
    if (!stream->head)
      stream->tail = NULL;
    pthread_mutex_unlock(&stream->mutex);
    int64_t max_delay = stream->device->max_delay_ns;
    if (max_delay > 0) {
      hal_sleep_until(hal_time_now() + (int64_t)(fake_random(&stream->seed) %
                                                 (uint64_t)max_delay));
    }
    switch (op->kind) {
      case FAKE_OP_WAIT:
        fake_event_wait_for(op->event, op->epoch);
        break;
      case FAKE_OP_RUN:
        op->payload->run(op->payload);
        break;
      case FAKE_OP_RECORD:
        pthread_mutex_lock(&op->event->mutex);
        if (op->event->completed < op->epoch)
          op->event->completed = op->epoch;
        pthread_cond_broadcast(&op->event->cond);
        pthread_mutex_unlock(&op->event->mutex);
        break;
    }
    free(op);
    pthread_mutex_lock(&stream->mutex);
  }
  pthread_mutex_unlock(&stream->mutex);
  return NULL;
}

//===----------------------------------------------------------------------===//
// hal_sync_queue_interface_t
//===----------------------------------------------------------------------===//

static hal_status_t fake_wait_event(void* self, void* handle) {
  fake_stream_t* stream = (fake_stream_t*)self;
  fake_event_t* event = (fake_event_t*)handle;
  atomic_fetch_add(&stream->device->device_waits, 1);
  pthread_mutex_lock(&event->mutex);
  uint64_t epoch = event->recorded;
  pthread_mutex_unlock(&event->mutex);
  if (epoch == 0)
    atomic_fetch_add(&stream->device->t4_violations, 1);
  fake_stream_push(stream, (fake_op_t){FAKE_OP_WAIT, event, epoch, NULL, NULL});
  return HAL_OK;
}

static hal_status_t fake_issue(void* self, void* payload) {
  fake_stream_t* stream = (fake_stream_t*)self;
  fake_payload_t* fake_payload = (fake_payload_t*)payload;
  if (atomic_fetch_add(&stream->issuing, 1) != 0)
    atomic_fetch_add(&stream->device->overlapping_issues, 1);
  // A chance for another issuer, were it let in, to overlap this one.
  sched_yield();
  hal_status_t status = HAL_OK;
  if (fake_payload->fail_issue) {
    status = hal_make_status(HAL_STATUS_INTERNAL,
                             "fakeLaunchKernel failed: FAKE_ERROR_INJECTED");
  } else {
    fake_stream_push(stream,
                     (fake_op_t){FAKE_OP_RUN, NULL, 0, fake_payload, NULL});
  }
  atomic_fetch_sub(&stream->issuing, 1);
  return status;
}

static hal_status_t fake_record_event(void* self, void* handle) {
  fake_stream_t* stream = (fake_stream_t*)self;
  fake_event_t* event = (fake_event_t*)handle;
  if (atomic_exchange(&stream->fail_next_record, false)) {
    return hal_make_status(HAL_STATUS_INTERNAL,
                           "fakeEventRecord failed: FAKE_ERROR_INJECTED");
  }
  pthread_mutex_lock(&event->mutex);
  uint64_t epoch = ++event->recorded;
  pthread_mutex_unlock(&event->mutex);
  fake_stream_push(stream,
                   (fake_op_t){FAKE_OP_RECORD, event, epoch, NULL, NULL});
  // The queue names its worker "w-<queue name>".
  char name[16] = "";
  pthread_getname_np(pthread_self(), name, sizeof(name));
  atomic_fetch_add(strncmp(name, "w-", 2) == 0
                       ? &stream->device->worker_records
                       : &stream->device->submitter_records,
                   1);
  return HAL_OK;
}

static hal_status_t fake_synchronize_event(void* self, void* handle) {
  fake_stream_t* stream = (fake_stream_t*)self;
  fake_event_t* event = (fake_event_t*)handle;
  atomic_fetch_add(&stream->synchronize_calls, 1);
  bool held = atomic_exchange(&stream->hold_next_synchronize_failure, false);
  pthread_mutex_lock(&event->mutex);
  uint64_t epoch = event->recorded;
  pthread_mutex_unlock(&event->mutex);
  fake_event_wait_for(event, epoch);
  if (held) {
    while (!atomic_load(&stream->held_synchronize_released))
      hal_sleep_until(hal_time_now() + 100 * 1000);
    atomic_fetch_add(&stream->synchronize_returns, 1);
    return hal_make_status(HAL_STATUS_INTERNAL,
                           "fakeEventSynchronize failed: "
                           "FAKE_ERROR_INJECTED_IN_ONE_CALL");
  }
  pthread_mutex_lock(&event->mutex);
  if (event->failed_epoch != epoch &&
      atomic_exchange(&stream->fail_next_synchronize, false)) {
    event->failed_epoch = epoch;
  }
  bool failed = epoch != 0 && event->failed_epoch == epoch;
  pthread_mutex_unlock(&event->mutex);
  atomic_fetch_add(&stream->synchronize_returns, 1);
  if (failed) {
    return hal_make_status(HAL_STATUS_INTERNAL,
                           "fakeEventSynchronize failed: FAKE_ERROR_INJECTED");
  }
  return HAL_OK;
}

// Waits until the stream ran everything pushed so far: a record of a
// private event, pushed last, completes only after them.
static void fake_quiesce(void* self) {
  fake_stream_t* stream = (fake_stream_t*)self;
  fake_event_t event;
  pthread_mutex_init(&event.mutex, NULL);
  pthread_cond_init(&event.cond, NULL);
  event.recorded = 1;
  event.completed = 0;
  fake_stream_push(stream, (fake_op_t){FAKE_OP_RECORD, &event, 1, NULL, NULL});
  fake_event_wait_for(&event, 1);
  pthread_cond_destroy(&event.cond);
  pthread_mutex_destroy(&event.mutex);
}

void fake_stream_fail_next_record(fake_stream_t* stream) {
  atomic_store(&stream->fail_next_record, true);
}

void fake_stream_fail_next_synchronize(fake_stream_t* stream) {
  atomic_store(&stream->fail_next_synchronize, true);
}

void fake_stream_hold_next_synchronize_failure(fake_stream_t* stream) {
  atomic_store(&stream->held_synchronize_released, false);
  atomic_store(&stream->hold_next_synchronize_failure, true);
}

void fake_stream_release_held_synchronize(fake_stream_t* stream) {
  atomic_store(&stream->held_synchronize_released, true);
}

int64_t fake_stream_synchronize_calls(fake_stream_t* stream) {
  return atomic_load(&stream->synchronize_calls);
}

int64_t fake_stream_synchronize_returns(fake_stream_t* stream) {
  return atomic_load(&stream->synchronize_returns);
}

static bool fake_may_issue_on_submitter(void* self, void* payload) {
  fake_stream_t* stream = (fake_stream_t*)self;
  (void)payload;
  if (stream->device->issue_policy == FAKE_ISSUE_SUBMITTER)
    return true;
  return atomic_fetch_add(&stream->issue_asks, 1) % 2 == 0;
}

static void fake_release_payload(void* self, void* payload, bool completed) {
  (void)completed;
  fake_payload_t* fake_payload = (fake_payload_t*)payload;
  if (fake_payload->release)
    fake_payload->release(fake_payload);
}

fake_stream_t* fake_stream_create(fake_device_t* device, const char* name,
                                  uint64_t seed) {
  return fake_stream_create_in_domain(device, name, seed, NULL);
}

fake_stream_t* fake_stream_create_in_domain(fake_device_t* device,
                                            const char* name, uint64_t seed,
                                            hal_sync_loss_domain_t* domain) {
  fake_stream_t* stream = calloc(1, sizeof(*stream));
  if (!stream)
    abort();
  stream->device = device;
  stream->seed = seed ? seed : 1;
  pthread_mutex_init(&stream->mutex, NULL);
  pthread_cond_init(&stream->cond, NULL);
  if (pthread_create(&stream->thread, NULL, fake_stream_main, stream) != 0) {
    abort();
  }
  hal_sync_queue_interface_t interface = {
      .self = stream,
      .wait_event = fake_wait_event,
      .issue = fake_issue,
      .record_event = fake_record_event,
      .synchronize_event = fake_synchronize_event,
      .release_payload = fake_release_payload,
      .quiesce = fake_quiesce,
      .may_issue_on_submitter = device->issue_policy == FAKE_ISSUE_WORKER_ONLY
                                    ? NULL
                                    : fake_may_issue_on_submitter,
  };
  hal_status_t status = hal_sync_queue_create(interface, device->event_pool,
                                              domain, name, &stream->queue);
  if (status) {
    hal_status_fprint(stderr, status);
    abort();
  }
  return stream;
}

hal_sync_queue_t* fake_stream_queue(fake_stream_t* stream) {
  return stream->queue;
}

void fake_stream_destroy(fake_stream_t* stream) {
  hal_sync_queue_destroy(stream->queue);
  pthread_mutex_lock(&stream->mutex);
  stream->stop = true;
  pthread_cond_signal(&stream->cond);
  pthread_mutex_unlock(&stream->mutex);
  pthread_join(stream->thread, NULL);
  pthread_cond_destroy(&stream->cond);
  pthread_mutex_destroy(&stream->mutex);
  free(stream);
}
