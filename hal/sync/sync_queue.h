// Copyright 2026 The HAL Authors.
//
// The sync module's one driver-facing header: native event pools, the
// deferred work queue every GPU driver uses for queue_execute
// (hal_sync_queue_t), and the semaphore constructor drivers call.
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
//     of the same pool wait for it on the device, S6). A submission with
//     every wait resolved at submit is issued the same way by the
//     submitting thread itself, when the driver allows it
//     (may_issue_on_submitter) and the queue has nothing else being issued
//     or ready: that saves waking the worker on the common path. The
//     ISSUING thread below is whichever of the two it is; one issues at a
//     time.
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
// Submissions released by one signal become ready in submission order (a
// signal notifies its timepoints in registration order), before the
// signal returns, unless another signal of the semaphore is still handing
// released submissions over: then when that hand-over ends, perhaps after
// the later signal returned. A submission waiting on a semaphore for the
// same or a larger value than a pending wait of an earlier submission of
// the same queue on that semaphore is not made ready by that semaphore
// before the earlier wait resolves (semaphore.c: "Queue order"; the
// earlier one may still wait for other semaphores).
//
// Thread-safety: submit may be called from any number of threads. destroy
// must not race submit on the same queue.

#ifndef HAL_SYNC_SYNC_QUEUE_H_
#define HAL_SYNC_SYNC_QUEUE_H_

#include "hal/allocator.h"
#include "hal/base.h"
#include "hal/impl/device.h"
#include "hal/impl/resource.h"
#include "hal/impl/semaphore.h"
#include "hal/status.h"
#include "pool.h"
#include "wake.h"

HAL_EXTERN_C_BEGIN

//===----------------------------------------------------------------------===//
// Native event pools
//===----------------------------------------------------------------------===//
//
// hal_sync_event_pool_t: a driver's native GPU events (CUevent, hipEvent_t),
// pooled and reference counted for the sync module's device timepoints.
//
// A driver creates one pool per event domain: the set of queues whose
// streams can wait on each other's events on the device (for CUDA and HIP,
// one pool per device). A queue only uses an event for a device-side wait
// when the event belongs to its own pool; any other wait parks on the host
// (T4 stays true across devices and drivers).
//
// Ownership (K3: no cycle between device and pool): the driver owns the
// pool, creates its queues with it, destroys every queue, then destroys the
// pool. Events hold no reference on the pool or the device. By the time all
// queues of a pool are destroyed, every event is back in it (queues drain
// their work; semaphores drop device timepoints when reached or failed);
// destroying a pool with an event still out is a broken invariant (abort
// with a message).
//
// Thread-safety: acquire/retain/release are thread-safe; create/destroy are
// not (one owner).

// The driver's native event hooks. Each member is required.
typedef struct hal_sync_event_interface_t {
  // Passed back to every hook. Must stay valid until the pool is destroyed.
  void* self;
  // Creates a native event into |*out_handle| (non-NULL on success).
  // Called by hal_sync_event_pool_acquire(): on a queue's issuing thread
  // (its worker or a submitter), only while the pool is cold. May call the
  // vendor API; never called from a vendor callback (Q1).
  hal_status_t (*create)(void* self, void** out_handle);
  // Destroys a native event no device work references any more. Called by
  // hal_sync_event_pool_trim() and hal_sync_event_pool_destroy() on the
  // thread calling them.
  void (*destroy)(void* self, void* handle);
} hal_sync_event_interface_t;

typedef struct hal_sync_event_pool_t hal_sync_event_pool_t;

// A pooled native event: a block of the sync module's one pool (pool.c),
// whose header keeps the free-list link and the generation bumped each
// time the event returns (stale-use check, T3). |handle| is the driver's
// event, created the first time the block is handed out and kept while it
// is pooled.
typedef struct hal_sync_native_event_t {
  hal_sync_pool_block_t block;  // first: pool.c's header
  _Atomic intptr_t ref_count;
  hal_sync_event_pool_t* pool;
  void* handle;
  // Times a queue recorded this event in its current use; an event is only
  // waited on by a device after it was recorded (T4, asserted).
  _Atomic uint64_t record_count;
} hal_sync_native_event_t;

struct hal_sync_event_pool_t {
  hal_sync_event_interface_t interface;
  // Never frees on release (release runs under semaphore locks, where no
  // driver hook may run); trimmed where hooks may run.
  hal_sync_pool_t blocks;
  size_t max_free_count;
};

// Creates a pool. Released events always return to it; idle events above
// |max_free_count| are destroyed where a driver hook may run: whenever a
// queue of the pool has completed all its work (so a burst does not keep
// its events for the device's life), and when a queue is destroyed.
HAL_API HAL_MUST_USE_RESULT hal_status_t hal_sync_event_pool_create(
    hal_sync_event_interface_t interface, size_t max_free_count,
    hal_sync_event_pool_t** out_pool);

// Destroys every idle event and frees the pool. Every event must be back.
HAL_API void hal_sync_event_pool_destroy(hal_sync_event_pool_t* pool);

// Destroys idle events down to |keep_count|.
HAL_API void hal_sync_event_pool_trim(hal_sync_event_pool_t* pool,
                                      size_t keep_count);

// An event with one reference (recycled, or created through the hooks).
HAL_API HAL_MUST_USE_RESULT hal_status_t hal_sync_event_pool_acquire(
    hal_sync_event_pool_t* pool, hal_sync_native_event_t** out_event);

// The generation of |event| now, to keep beside a pointer to it (T3).
static inline uint32_t hal_sync_native_event_generation(
    hal_sync_native_event_t* event) {
  return hal_sync_pool_block_generation(&event->block);
}

// Assertion builds: aborts if |event| went back to its pool since its
// holder read |generation| (a stale kept pointer, T3). Every use of an
// event through a kept pointer checks it; compiled out with NDEBUG.
#define hal_sync_native_event_check(event, generation)                     \
  assert(atomic_load_explicit(&(event)->ref_count, memory_order_relaxed) > \
             0 &&                                                          \
         hal_sync_native_event_generation(event) == (generation) &&        \
         "stale pointer to a pooled native event")

HAL_API void hal_sync_native_event_retain(hal_sync_native_event_t* event);
// At zero the event goes back to its pool (never destroyed here). Takes
// only the pool's leaf lock, so it may be called under a semaphore lock.
HAL_API void hal_sync_native_event_release(hal_sync_native_event_t* event);

// Events handed out now (for tests and teardown checks).
HAL_API size_t hal_sync_event_pool_live_count(hal_sync_event_pool_t* pool);

// Idle events kept now (for tests).
HAL_API size_t hal_sync_event_pool_free_count(hal_sync_event_pool_t* pool);

//===----------------------------------------------------------------------===//
// Queues
//===----------------------------------------------------------------------===//

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
  // ISSUING thread. Makes everything issued after this call wait on the
  // device until |event_handle|'s last record completes (cuStreamWaitEvent).
  // The event was recorded before it was handed out (T4). Must not block
  // the host on device work. Returns a status naming the vendor call.
  hal_status_t (*wait_event)(void* self, void* event_handle);
  // ISSUING thread. Issues |payload| (never NULL here: a submission without a
  // payload skips this call) after the waits: stream replay or graph
  // launch. Must not block on device work. A failure may come after part of
  // the payload was enqueued: the queue calls quiesce before it releases
  // the payload.
  hal_status_t (*issue)(void* self, void* payload);
  // ISSUING thread. Records |event_handle| after everything issued so far
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
  // COMPLETION thread, after synchronize_event succeeded for a submission
  // with a payload: OK, or a failure the device's event does not carry (a
  // collective library's asynchronous error), which fails the signals as a
  // device error does. The device is done with the payload. Optional.
  hal_status_t (*check_completion)(void* self, void* payload);
  // ISSUING or COMPLETION thread, a host waiter completing the work it
  // waits for, or the thread in hal_sync_queue_destroy() (orphans below);
  // exactly once per payload accepted by submit, before the queue's destroy
  // returns, once the device is done with it or it will never run, and
  // before the submission's signal semaphores are signaled or failed, so a
  // waiter they wake may reuse what the payload held at once (a payload
  // orphaned by a failed record_event is the exception: its signals fail
  // first and it is released by hal_sync_queue_destroy()). Releases what
  // the payload holds (command buffers, buffers: Q3). |completed|: the
  // submission completed OK (its signals are about to be signaled); false
  // when it failed, ran after a failed signaler, or never ran. Optional.
  void (*release_payload)(void* self, void* payload, bool completed);
  // Blocks until the device finished everything issued on this queue so far
  // (stream synchronize); errors are the driver's to note. The queue calls
  // it wherever a payload is about to be released without proof that the
  // device is done with it (Q3): after a failed wait_event or issue (ISSUING
  // thread), after a failed synchronize_event (COMPLETION thread), and in
  // hal_sync_queue_destroy() before payloads orphaned by a failed
  // record_event are released (its thread, the queue's threads stopped).
  // Optional: without it those payloads are released at once.
  void (*quiesce)(void* self);
  // Any thread submitting |payload| (NULL for a submission without one),
  // before it is issued: whether the thread that submits it may issue it
  // (wait_event, issue, record_event, and on failure quiesce and
  // release_payload, on that thread). No for a payload whose issue may
  // block until other submissions issue (a collective whose peer ranks one
  // thread submits in turn), or for hooks that must run on one thread.
  // Optional: without it every submission is issued by the worker.
  bool (*may_issue_on_submitter)(void* self, void* payload);
  // ISSUING thread, for a payload orphaned by a failed record_event, before
  // its signals fail: the submission failed, though the device may still
  // use the payload (released at destroy). What the payload promised to
  // make usable once its signals were reached must not become usable now.
  // Optional.
  void (*orphan_payload)(void* self, void* payload);
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
// INVALID_ARGUMENT: a NULL array in a non-empty list, a NULL semaphore or
// an object that is not one, a value > HAL_SEMAPHORE_MAX_VALUE, the same
// semaphore twice in |signals|.
// FAILED_PRECONDITION: the queue is being destroyed. The domain's loss
// (DEVICE_LOST, typically): the queue's loss domain failed.
HAL_API HAL_MUST_USE_RESULT hal_status_t
hal_sync_queue_submit(hal_sync_queue_t* queue, hal_semaphore_list_t waits,
                      hal_semaphore_list_t signals, void* payload);

// Tears the queue down (Q4, see above) and frees it.
HAL_API void hal_sync_queue_destroy(hal_sync_queue_t* queue);

// The first step of hal_sync_queue_destroy, ahead of it: fails the parked
// submissions (CANCELLED, or a wait's failure) while ready and issued work
// goes on. For a device's shutdown, before it waits for host calls that
// may wait for parked work; what parks after it is cancelled by destroy.
HAL_API void hal_sync_queue_cancel_parked(hal_sync_queue_t* queue);

// ISSUING thread, inside interface.issue only: waits on the host until
// every value that the submission being issued waits for on the device is
// published (reached: OK; failed: its failure). Those signalers were
// issued before it, so their queues' completion threads resolve them
// without waiting for this thread. For an issue that needs what that work
// gives back once it is done and its payload released: a queue-ordered
// allocation that ran out of memory a buffer released under that work
// still holds.
HAL_API HAL_MUST_USE_RESULT hal_status_t
hal_sync_queue_await_issuing_waits(hal_sync_queue_t* queue);

// Any thread but the queue's own, no lock held: returns once every
// submission that was ready when it was called (waiting for nothing, or
// released by the signals it waited for) has been issued or failed. What
// is still parked is not waited for. For a driver call that must come
// after the issue of work submitted before it: a collective library's
// communicator split after the collectives enqueued at their issue.
HAL_API void hal_sync_queue_await_ready_issued(hal_sync_queue_t* queue);

//===----------------------------------------------------------------------===//
// Host calls
//===----------------------------------------------------------------------===//

// The executor of a device's host calls (host_call.c): one thread, the
// calls not finished, the ones ready to run. libhal's device code owns it
// (hal_device_queue_host_call, and a second one for the host side of file
// transfers); drivers do not see it.
typedef struct hal_sync_host_executor_t hal_sync_host_executor_t;

// Starts the executor's thread, named |prefix| (at most 4 characters) and
// the end of |name| (the device's). |domain| (optional): the device's loss
// domain, which the executor joins: a loss refuses later calls and fails
// those not yet started with it, whatever they wait for (Q5).
HAL_API HAL_MUST_USE_RESULT hal_status_t hal_sync_host_executor_create(
    const char* prefix, const char* name, hal_sync_loss_domain_t* domain,
    hal_sync_host_executor_t** out_executor);

// Submits one host call (hal_host_call_fn_t has the contract); the lists
// are validated by the caller, copied, and their semaphores retained until
// the call finishes. FAILED_PRECONDITION once shut down; a copy of the loss
// once the domain is lost.
HAL_API HAL_MUST_USE_RESULT hal_status_t hal_sync_host_executor_submit(
    hal_sync_host_executor_t* executor, hal_semaphore_list_t waits,
    hal_semaphore_list_t signals, hal_host_call_fn_t fn, void* user_data);

// The first step of the shutdown, from any thread (the executor's own
// included: a call that drops the device's last reference): no call starts
// any more (those ready get CANCELLED) and new ones are refused. NULL:
// nothing.
HAL_API void hal_sync_host_executor_stop(hal_sync_host_executor_t* executor);

// Cancels every call still waiting (CANCELLED), waits for the one running
// and the ready ones (cancelled too), joins the thread and frees the
// executor. Never from the executor's own thread. NULL: nothing.
HAL_API void hal_sync_host_executor_shutdown(
    hal_sync_host_executor_t* executor);

HAL_EXTERN_C_END

#endif  // HAL_SYNC_SYNC_QUEUE_H_
