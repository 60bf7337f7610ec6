// Copyright 2026 The HAL Authors.
//
// A fake native-event device for the sync tests: each fake stream is a
// thread that executes its operations (wait on an event, run a payload,
// record an event) in order, each after a random delay, so the deferred
// queue runs without a GPU. Events follow CUDA semantics: a wait or
// synchronize refers to the event's last record at the time of the call.
// A device wait on an event never recorded counts a T4 violation (on a real
// GPU it would return at once and break ordering).

#ifndef HAL_SYNC_TESTS_FAKE_DEVICE_H_
#define HAL_SYNC_TESTS_FAKE_DEVICE_H_

#include <pthread.h>
#include <stdatomic.h>

#include "sync_queue.h"

typedef struct fake_payload_t fake_payload_t;
struct fake_payload_t {
  // Runs on the fake stream thread, in stream order.
  void (*run)(fake_payload_t* payload);
  // Called by release_payload (queue's worker or completion thread).
  void (*release)(fake_payload_t* payload);
  // When set, issue() fails with a vendor-like error (Q5).
  bool fail_issue;
};

typedef struct fake_stream_t fake_stream_t;

// Which submissions a fake stream lets their submitting thread issue
// (hal_sync_queue_interface_t.may_issue_on_submitter).
typedef enum fake_issue_policy_e {
  // Every other submission, by a counter: both paths run in every test.
  FAKE_ISSUE_MIXED = 0,
  FAKE_ISSUE_WORKER_ONLY,  // no hook: the worker issues everything
  FAKE_ISSUE_SUBMITTER,    // always yes
} fake_issue_policy_t;

typedef struct fake_device_t {
  hal_sync_event_pool_t* event_pool;
  _Atomic int64_t t4_violations;
  _Atomic int64_t device_waits;  // wait_event calls
  _Atomic int64_t live_events;   // created - destroyed
  int64_t max_delay_ns;
  // Set before streams are created (FAKE_ISSUE_MIXED by default).
  fake_issue_policy_t issue_policy;
  // Completion events recorded by a queue's worker thread, and by any
  // other thread (a submitter issuing its own submission).
  _Atomic int64_t worker_records;
  _Atomic int64_t submitter_records;
  // Issues that overlapped another issue on the same stream: the queue
  // lets one thread issue at a time.
  _Atomic int64_t overlapping_issues;
} fake_device_t;

void fake_device_initialize(int64_t max_delay_ns, fake_device_t* out_device);
// Destroys the event pool; every queue must be destroyed first.
void fake_device_deinitialize(fake_device_t* device);

// A stream + the hal_sync_queue_t that drives it.
fake_stream_t* fake_stream_create(fake_device_t* device, const char* name,
                                  uint64_t seed);
// The same, its queue a member of |domain| (the device's loss domain).
fake_stream_t* fake_stream_create_in_domain(fake_device_t* device,
                                            const char* name, uint64_t seed,
                                            hal_sync_loss_domain_t* domain);
hal_sync_queue_t* fake_stream_queue(fake_stream_t* stream);
// Destroys the queue (Q4), then stops the stream thread.
void fake_stream_destroy(fake_stream_t* stream);
// The next record_event fails (after its payload was issued): the
// submission is orphaned until the queue is destroyed.
void fake_stream_fail_next_record(fake_stream_t* stream);
// The next synchronize_event fails once the event completed, as a device
// error reported at synchronize does: the work ran, its result is bad.
void fake_stream_fail_next_synchronize(fake_stream_t* stream);
// The next synchronize_event fails alone, as an error reported to one call
// only (another synchronize of the same event succeeds), and returns only
// after fake_stream_release_held_synchronize().
void fake_stream_hold_next_synchronize_failure(fake_stream_t* stream);
void fake_stream_release_held_synchronize(fake_stream_t* stream);
// synchronize_event calls begun, and returned, so far.
int64_t fake_stream_synchronize_calls(fake_stream_t* stream);
int64_t fake_stream_synchronize_returns(fake_stream_t* stream);

#endif  // HAL_SYNC_TESTS_FAKE_DEVICE_H_
