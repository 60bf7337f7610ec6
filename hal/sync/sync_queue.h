// Copyright 2026 The HAL Authors.
//
// hal_sync_queue_t: the deferred work queue every GPU driver uses for
// queue_execute, and the semaphore constructor drivers call.
//
// A driver creates one hal_sync_queue_t per hardware queue (stream), giving
// it a hal_sync_queue_interface_t (below) and the event pool of its device.
// hal_sync_queue_submit() takes a submission: a wait list, a signal list and
// an opaque payload (command buffers, a graph exec: whatever the driver
// issues). The queue then follows "the life of a submission":
//
//  1. submit (caller's thread): validate, copy the lists, retain every
//     semaphore. For each wait, under that semaphore's lock: already reached
//     -> dropped; a device timepoint of the same event pool, recorded for a
//     value >= the one needed -> its native event is kept (T4); otherwise a
//     host timepoint is registered and the submission is parked (S4).
//  2. when the last parked wait resolves (any thread, in a timepoint
//     callback that only hands off), the submission goes to the queue's
//     WORKER thread, which calls wait_event for each kept event, issue, then
//     record_event on one pooled native event; that event becomes a device
//     timepoint of every signal semaphore (so later submissions on queues
//     of the same pool wait for it on the device, S6).
//  3. the queue's COMPLETION thread takes issued submissions in issue order
//     and calls synchronize_event on each one's event; a wait kept as a
//     device event must also be reached on the host (its signaler may have
//     failed after the event fired: K13). Then it releases the payload (Q3)
//     and signals the semaphores (resolving their timepoints, which may
//     un-park other submissions, Q2).
//
// Failure (S2, Q5): a wait that resolves with a failure cancels the
// submission's other waits; the payload is never issued; every signal
// semaphore fails with the cause annotated ("submission on queue 'q0' did
// not run: ..."), whether the wait parked on the host or was kept as a
// device event whose signaler failed. A failing
// wait_event/issue/record_event/synchronize_event
// fails the signal semaphores with the driver's status (which names the
// vendor call); the queue keeps working for later, independent work.
//
// Teardown (Q4): hal_sync_queue_destroy() fails parked submissions (their
// signal semaphores fail with CANCELLED), lets ready ones issue, waits for
// every issued one to complete, joins both threads and frees everything.
// No interface member is called after it returns.
//
// Order: a queue issues submissions in the order they become ready, not in
// submission order; only semaphores order work (as in Vulkan and IREE).
//
// Thread-safety: submit may be called from any number of threads. destroy
// must not race submit on the same queue.

#ifndef HAL_SYNC_SYNC_QUEUE_H_
#define HAL_SYNC_SYNC_QUEUE_H_

#include "hal/allocator.h"
#include "hal/base.h"
#include "hal/resource.h"
#include "hal/semaphore.h"
#include "hal/status.h"
#include "sync_event_pool.h"

HAL_EXTERN_C_BEGIN

// A loss domain: what fails together when a device is lost (Q5, K14). A
// driver creates one per device and names it when it creates the device's
// queues and semaphores. hal_sync_loss_domain_fail() then, once:
//  - fails every parked submission of its queues with the loss (their
//    signals fail naming it, whatever they waited for) and makes the
//    queues refuse new submissions with it;
//  - fails every live semaphore created in it, so every current and future
//    wait on one returns the loss at once, and semaphores created in it
//    later are born failed.
// Ready and issued work is the driver's: its issue and synchronize calls
// fail on a lost device, which fails their signals as any vendor error
// does. Membership costs nothing on signal, wait or submit. Semaphores and
// queues keep the domain alive; it does not keep them.
typedef struct hal_sync_loss_domain_t hal_sync_loss_domain_t;

HAL_API HAL_MUST_USE_RESULT hal_status_t
hal_sync_loss_domain_create(hal_sync_loss_domain_t** out_domain);
// Drops the creator's reference.
HAL_API void hal_sync_loss_domain_release(hal_sync_loss_domain_t* domain);
// Fails the domain with |status| (owned; a DEVICE_LOST status from the
// vendor, typically). True for the call that failed it; later calls free
// their status and return false. Any thread, no sync lock held; the caller
// holds its reference. Runs semaphore callbacks on this thread (T2).
HAL_API bool hal_sync_loss_domain_fail(hal_sync_loss_domain_t* domain,
                                       hal_status_t status);

// Creates the sync module's semaphore (the only semaphore implementation:
// drivers' semaphore_create delegates here). |domain| (optional): the loss
// domain of the device that creates it (see above); host semaphores have
// none.
HAL_API HAL_MUST_USE_RESULT hal_status_t hal_sync_semaphore_create(
    hal_sync_loss_domain_t* domain, hal_allocator_t allocator,
    uint64_t initial_value, hal_semaphore_t** out_semaphore);

// What a queue needs from its driver. Every member is required except
// where marked optional. Event handles are the |handle| of events from the
// queue's pool. No member is ever called under a sync-module lock, and none
// may call back into the same queue. None is called from a vendor callback.
typedef struct hal_sync_queue_interface_t {
  // Passed back to every member; must outlive hal_sync_queue_destroy().
  void* self;
  // WORKER thread. Makes everything issued after this call wait on the
  // device until |event_handle|'s last record completes (cuStreamWaitEvent).
  // The event was recorded before it was handed out (T4). Must not block
  // the host on device work. Returns a status naming the vendor call.
  hal_status_t (*wait_event)(void* self, void* event_handle);
  // WORKER thread. Issues |payload| (never NULL here: a submission without a
  // payload skips this call) after the waits: stream replay or graph
  // launch. Must not block on device work. A failure may come after part of
  // the payload was enqueued: the queue calls quiesce before it releases
  // the payload.
  hal_status_t (*issue)(void* self, void* payload);
  // WORKER thread. Records |event_handle| after everything issued so far
  // (cuEventRecord). If this fails after an issue succeeded, the queue
  // cannot tell when the device is done with the payload: the signals fail
  // and the payload is released only by hal_sync_queue_destroy(), after the
  // driver had the chance to synchronize (treat as device loss).
  hal_status_t (*record_event)(void* self, void* event_handle);
  // COMPLETION thread. Blocks until |event_handle|'s last record completes
  // (cuEventSynchronize); returns the device's error if the work failed.
  // Called in issue order, once per issued submission. A failure says
  // nothing about when the device is done, so the queue calls quiesce
  // before it releases the payload.
  hal_status_t (*synchronize_event)(void* self, void* event_handle);
  // WORKER or COMPLETION thread, exactly once per payload accepted by
  // submit, once the device is done with it or it will never run, and
  // before the submission's signal semaphores are signaled or failed, so a
  // waiter they wake may reuse what the payload held at once (a payload
  // orphaned by a failed record_event is the exception: its signals fail
  // first and it is released by hal_sync_queue_destroy()). Releases what
  // the payload holds (command buffers, buffers: Q3). Optional.
  void (*release_payload)(void* self, void* payload);
  // Blocks until the device finished everything issued on this queue so far
  // (stream synchronize); errors are the driver's to note. The queue calls
  // it wherever a payload is about to be released without proof that the
  // device is done with it (Q3): after a failed wait_event or issue (WORKER
  // thread), after a failed synchronize_event (COMPLETION thread), and in
  // hal_sync_queue_destroy() before payloads orphaned by a failed
  // record_event are released (its thread, the queue's threads stopped).
  // Optional: without it those payloads are released at once.
  void (*quiesce)(void* self);
} hal_sync_queue_interface_t;

typedef struct hal_sync_queue_t hal_sync_queue_t;

// Creates a queue and starts its worker and completion threads. |name|
// (copied) appears in statuses and thread names. |event_pool| must outlive
// the queue. |domain| (optional): the loss domain of the queue's device.
HAL_API HAL_MUST_USE_RESULT hal_status_t hal_sync_queue_create(
    hal_sync_queue_interface_t interface, hal_sync_event_pool_t* event_pool,
    hal_sync_loss_domain_t* domain, const char* name,
    hal_sync_queue_t** out_queue);

// Submits |payload| to run once every (semaphore, value) of |waits| is
// reached, then to signal every entry of |signals|. The lists are copied and
// their semaphores retained until the submission retires. On OK the queue
// owns |payload| (release_payload is called exactly once); errors found
// later are reported through the signal semaphores. On error nothing was
// submitted and |payload| is still the caller's.
// INVALID_ARGUMENT: a NULL array in a non-empty list, a NULL semaphore, a
// value > HAL_SEMAPHORE_MAX_VALUE, the same semaphore twice in |signals|.
// UNIMPLEMENTED: a semaphore that is not the sync module's.
// FAILED_PRECONDITION: the queue is being destroyed. The domain's loss
// (DEVICE_LOST, typically): the queue's loss domain failed.
HAL_API HAL_MUST_USE_RESULT hal_status_t
hal_sync_queue_submit(hal_sync_queue_t* queue, hal_semaphore_list_t waits,
                      hal_semaphore_list_t signals, void* payload);

// Tears the queue down (Q4, see above) and frees it.
HAL_API void hal_sync_queue_destroy(hal_sync_queue_t* queue);

HAL_EXTERN_C_END

#endif  // HAL_SYNC_SYNC_QUEUE_H_
