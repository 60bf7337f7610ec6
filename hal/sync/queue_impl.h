// Copyright 2026 The HAL Authors.
//
// The deferred queue's private types, shared by queue.c (threads, teardown)
// and submission.c (submit, wait resolution, failure, retirement).

#ifndef HAL_SYNC_QUEUE_IMPL_H_
#define HAL_SYNC_QUEUE_IMPL_H_

#include "semaphore_impl.h"
#include "sync_queue.h"

typedef struct hal_sync_submission_t hal_sync_submission_t;

typedef struct hal_sync_submission_wait_t {
  hal_sync_submission_t* submission;
  hal_semaphore_t* semaphore;  // retained
  uint64_t value;
  // Written by submit before |registration_flags| gets REGISTERED; read by
  // whoever cancels (after observing REGISTERED).
  hal_timepoint_t* timepoint;      // registered CALLBACK timepoint, or NULL
  hal_sync_native_event_t* event;  // device wait (T4), or NULL
  // Generations of |timepoint| and |event| when kept (T3 checks).
  uint32_t timepoint_generation;
  uint32_t event_generation;
} hal_sync_submission_wait_t;

// |cancel_flags| bits: see hal_sync_submission_fail().
#define HAL_SYNC_SUBMISSION_REGISTERED 1u
#define HAL_SYNC_SUBMISSION_FAILED 2u

// Submissions of up to this many waits and signals come from their queue's
// cache of blocks, so that a warm queue does not allocate per submission;
// larger ones are allocated alone. A block is what a parked submission
// costs (docs/performance.md: bytes_per_parked_submission), so it holds
// what most submissions have: a few waits (fan-in), one or two signals.
#define HAL_SYNC_SUBMISSION_CACHED_WAITS 4
#define HAL_SYNC_SUBMISSION_CACHED_SIGNALS 2

// A queue's cache of submission blocks. It outlives the queue while a
// block is out: the last reference to a submission may be dropped after
// its queue was destroyed (by a teardown snapshot), and it returns its
// block here.
typedef struct hal_sync_submission_cache_t {
  _Atomic intptr_t ref_count;  // the queue's, and one per block out
  hal_sync_pool_t pool;
} hal_sync_submission_cache_t;

struct hal_sync_submission_t {
  hal_sync_queue_t* queue;
  // The cache its block came from, or NULL (allocated alone).
  hal_sync_submission_cache_t* cache;
  // One reference for the queue (dropped at retirement), one per teardown
  // snapshot.
  _Atomic intptr_t ref_count;
  // Parked waits not resolved yet, plus one guard held by submit. The
  // thread that takes it to zero hands the submission to the worker.
  _Atomic intptr_t pending_count;
  // REGISTERED | FAILED. The one thread whose fetch_or completes both bits
  // cancels the remaining parked waits (so a failure never waits for the
  // other semaphores: K10).
  _Atomic unsigned cancel_flags;
  uint32_t completion_event_generation;  // when acquired (T3 check)
  // The first failure (CAS from NULL), owned.
  _Atomic(hal_status_t) failure;
  void* payload;
  hal_sync_native_event_t* completion_event;
  // Links in the queue's ready or in-flight FIFO (under the queue lock).
  hal_sync_submission_t* next;
  // Links in the queue's parked list (under the queue lock).
  hal_sync_submission_t* parked_prev;
  hal_sync_submission_t* parked_next;
  // HAL_TRACE: the submission's id and the phase it is in (0 none, 1
  // parked, 2 ready, 3 in flight), handed along with the submission.
  uint64_t trace_id;
  uint8_t trace_phase;
  bool is_parked;
  // Fields kept together so that the block stays small (see above).
  uint32_t wait_count;
  uint32_t signal_count;
  hal_sync_submission_wait_t* waits;
  hal_semaphore_t** signal_semaphores;  // retained
  uint64_t* signal_values;
};

typedef struct hal_sync_submission_fifo_t {
  hal_sync_submission_t* head;
  hal_sync_submission_t* tail;
} hal_sync_submission_fifo_t;

// Helped mode (see is_helped below): the completion thread enters it once
// this many of its looks found new completions by host waits since it last
// completed work itself, and sleeps at most this long while in it.
#define HAL_SYNC_QUEUE_HELPED_LOOKS 4
#define HAL_SYNC_QUEUE_HELPED_SLEEP_NS ((hal_time_t)1000000)
// Busy mode (see is_busy below): the completion thread's longest sleep
// between looks while it is in it.
#define HAL_SYNC_QUEUE_BUSY_SLEEP_NS ((hal_time_t)50000)

struct hal_sync_queue_t {
  hal_sync_queue_interface_t interface;
  hal_sync_event_pool_t* event_pool;
  char* name;

  // Lock order: queue mutex -> semaphore mutex -> pool mutexes. Callbacks
  // and interface members are never called with it held.
  hal_sync_mutex_t mutex;
  pthread_cond_t worker_cond;  // ready FIFO non-empty, or stop
  // Rung when the in-flight FIFO gets a submission, and at stop.
  hal_sync_doorbell_t completion_bell;
  pthread_cond_t idle_cond;           // live_count reached zero
  pthread_cond_t unturned_sync_cond;  // see |unturned_sync_event|
  // Everything below is guarded by |mutex|.
  hal_sync_submission_fifo_t ready;
  hal_sync_submission_fifo_t in_flight;
  hal_sync_submission_t* parked_head;
  size_t parked_count;  // the parked list's length (a trace counter)
  // Issued submissions whose event could not be recorded: released at
  // destroy (see record_event in queue.h).
  hal_sync_submission_fifo_t orphaned;
  size_t live_count;  // accepted and not retired
  // Host waiters counted in by hal_sync_queue_help_enter and not yet out:
  // destroy waits for none. Counted in under a semaphore's lock, out under
  // |mutex|.
  _Atomic size_t helper_count;
  // A thread is between popping (or taking at submit) a ready submission
  // and handing it to the in-flight FIFO: the worker, or a submitting
  // thread issuing its own (hal_sync_queue_ready_at_submit). One at a time,
  // so submissions issue in the order they became ready.
  bool is_issuing;
  // Submissions that took the issuing turn so far (pushed to |ready| or
  // issued on their submitter), and turns ended: the turns are taken in
  // that order, so every submission ready when |ready_count| read N is
  // issued (or failed) once |issued_count| reaches N
  // (hal_sync_queue_await_ready_issued, woken through |issued_cond| while
  // |issued_waiters| is not 0).
  uint64_t ready_count;
  uint64_t issued_count;
  uint32_t issued_waiters;
  pthread_cond_t issued_cond;
  // The submission inside interface.issue now; read by its issuing thread
  // only (hal_sync_queue_await_issuing_waits).
  hal_sync_submission_t* issuing;
  // A thread is between popping an in-flight submission and completing
  // it: the completion thread, or a host waiter helping
  // (hal_sync_queue_help_complete). One at a time, so submissions complete
  // in issue order.
  bool is_completing;
  // The event the completion thread synchronizes with no turn held (NULL:
  // none), and a failure of that synchronize handed to the helper that
  // holds the turn for the same submission (NULL: none), with its event.
  // Two synchronizes of one event may disagree (an error reported to one
  // call only): the helper waits for this one before it completes the
  // submission and fails it with either failure, so none is dropped (Q5).
  // |unturned_sync_cond| is broadcast when the synchronize returns.
  hal_sync_native_event_t* unturned_sync_event;
  hal_sync_native_event_t* handed_sync_event;
  hal_status_t handed_sync_failure;
  // Submissions completed by helpers so far (tests; the completion thread
  // trims the event pool after them too).
  uint64_t helped_count;
  // Helped mode ("Helped queues", docs/sync-design.md): host waits have
  // been completing this queue's work (HAL_SYNC_QUEUE_HELPED_LOOKS of the
  // completion thread's looks found their completions since it last
  // completed work itself), so the issue of a submission nobody is
  // registered for does not ring the completion doorbell. Set and cleared by
  // the completion thread only, and read at the in-flight push, all under
  // |mutex|; the completion thread never sleeps without a deadline while it is
  // set. So every in-flight submission was rung for, or the completion thread
  // looks at it within HAL_SYNC_QUEUE_HELPED_SLEEP_NS. Atomic for tests and
  // traces that read it with no lock.
  _Atomic bool is_helped;
  // Busy mode ("Busy queues", docs/sync-design.md): the completion thread
  // completed a submission of its own with another already in flight
  // behind it, so work is coming faster than one wake-up per submission
  // pays for. Pushes of work nobody is registered for do not ring; the
  // completion thread takes the in-flight head when it has a successor,
  // when rung or asked, or after a sleep of at most
  // HAL_SYNC_QUEUE_BUSY_SLEEP_NS, and leaves the mode at a look after such
  // a sleep that finds nothing in flight. Never set with |is_helped|.
  // Written and read as |is_helped| is.
  _Atomic bool is_busy;
  // Set by a registration for this queue's issued work by a thread that
  // does not help (hal_sync_queue_request_completion); cleared when helped
  // or busy mode ends. While set, the completion thread takes work as if rung
  // and every push rings: the registration may have found a device timepoint
  // whose submission is not pushed yet, and its ring alone would find no
  // work, or the work may be taken by a helper before the one it waits for
  // is pushed.
  bool is_completion_requested;
  // The completion thread's longest sleep in helped mode:
  // HAL_SYNC_QUEUE_HELPED_SLEEP_NS (tests change it).
  hal_duration_t helped_sleep_ns;
  // The completion thread's longest sleep in busy mode:
  // HAL_SYNC_QUEUE_BUSY_SLEEP_NS (tests change it).
  hal_duration_t busy_sleep_ns;
  bool is_shutting_down;
  bool stop;
  // Set once the queue's loss domain failed: submit refuses with a copy.
  hal_status_t loss;

  // Membership of |domain| (links under the domain's lock).
  hal_sync_loss_domain_t* domain;  // retained, or NULL
  hal_sync_domain_link_t domain_link;

  pthread_t worker_thread;
  pthread_t completion_thread;
  uint32_t trace_track;  // HAL_TRACE: the queue's row (0: off)
  hal_sync_submission_cache_t* submission_cache;
};

// Creates a queue's cache (NULL: out of memory) / drops one reference (the
// last frees it; NULL: nothing).
hal_sync_submission_cache_t* hal_sync_submission_cache_create(void);
void hal_sync_submission_cache_release(hal_sync_submission_cache_t* cache);

// HAL_TRACE: ends the submission's current phase (with |end_args|, may be
// NULL) and begins |phase| (0: none). Called by whoever hands it on.
void hal_sync_submission_trace_phase(hal_sync_submission_t* submission,
                                     uint8_t phase, const char* end_args);
// HAL_TRACE: the queue's parked count as a counter event.
void hal_sync_queue_trace_parked_locked(hal_sync_queue_t* queue);

void hal_sync_submission_fifo_push(hal_sync_submission_fifo_t* fifo,
                                   hal_sync_submission_t* submission);
hal_sync_submission_t* hal_sync_submission_fifo_pop(
    hal_sync_submission_fifo_t* fifo);

// A growable list of retained submissions.
typedef struct hal_sync_submission_list_t {
  hal_sync_submission_t** items;
  size_t count;
  size_t capacity;
} hal_sync_submission_list_t;

// Appends |queue|'s parked submissions, each retained, to |list|. With
// |loss| (borrowed, not OK) the queue also refuses later submissions with a
// copy of it. Takes only the queue lock (the loss domain calls it under
// its own, which comes first in the lock order).
void hal_sync_queue_take_parked(hal_sync_queue_t* queue, hal_status_t loss,
                                hal_sync_submission_list_t* list);

// Fails each submission of |list| with a copy of |status| (borrowed), or,
// when |failed_waits_first|, with the failure of a wait of it that failed
// already (hal_sync_submission_waits_failed), releases them and empties
// the list. No lock held: failing runs the submissions' wait callbacks,
// and a release may destroy semaphores.
void hal_sync_submission_list_fail(hal_sync_submission_list_t* list,
                                   hal_status_t status,
                                   bool failed_waits_first);

// Loss-domain membership of a queue (loss_domain.c; semaphores: see
// semaphore_impl.h).
void hal_sync_loss_domain_add_queue(hal_sync_loss_domain_t* domain,
                                    hal_sync_queue_t* queue);
void hal_sync_loss_domain_remove_queue(hal_sync_queue_t* queue);

// Hands a submission whose waits are all resolved to the worker. Any thread,
// no lock held.
void hal_sync_queue_enqueue_ready(hal_sync_queue_t* queue,
                                  hal_sync_submission_t* submission);

// The submitting thread's hand-off of a submission whose waits were all
// resolved at submit: issued right there when the driver allows it
// (interface.may_issue_on_submitter) and nothing else is being issued or
// waits to be, which saves waking the worker; else queued for the worker
// as by hal_sync_queue_enqueue_ready. Only from hal_sync_queue_submit,
// whose caller keeps the queue alive.
void hal_sync_queue_ready_at_submit(hal_sync_queue_t* queue,
                                    hal_sync_submission_t* submission);

// Records |status| (owned) as the submission's failure (the first wins) and
// cancels its parked waits once registration is complete. Any thread, no
// lock held; the caller keeps the submission alive.
void hal_sync_submission_fail(hal_sync_submission_t* submission,
                              hal_status_t status);

void hal_sync_submission_retain(hal_sync_submission_t* submission);
void hal_sync_submission_release(hal_sync_submission_t* submission);

// OK while no semaphore the submission waits on has failed, else a clone of
// the first such failure naming the wait (S2: the work must never run, and
// its signals fail with that cause). Any thread that keeps the submission
// alive; one acquire load per wait.
hal_status_t hal_sync_submission_waits_failed(
    hal_sync_submission_t* submission);

// The issuing thread (the worker, or a submitter: |is_issuing| set by it):
// waits, issue, record, attach; then hands to completion. Every path ends
// the issuing turn (hal_sync_queue_end_issue_locked) once the submission
// is out of its hands.
void hal_sync_submission_issue(hal_sync_submission_t* submission);
// The same for a ready submission that may have failed while parked: a
// failed one is completed with its failure instead (S2: never issued).
void hal_sync_submission_issue_or_fail(hal_sync_submission_t* submission);
// Ends the issuing thread's turn (clears |is_issuing|), waking the worker
// for what became ready meanwhile. Under the queue's lock.
void hal_sync_queue_end_issue_locked(hal_sync_queue_t* queue);

// COMPLETION thread, once the device finished |submission|: blocks until
// every semaphore it waited on through a device event is reached on the
// host; returns the failure of one that failed instead (K13).
HAL_MUST_USE_RESULT hal_status_t
hal_sync_submission_await_device_waits(hal_sync_submission_t* submission);

// ISSUING or COMPLETION thread: fails every signal semaphore with a copy of
// |status| (borrowed).
void hal_sync_submission_fail_signals(hal_sync_submission_t* submission,
                                      hal_status_t status);

// ISSUING or COMPLETION thread, once the device is done with |submission| or
// it will never run: releases the payload (Q3) first, so that whoever its
// signals wake finds what the payload held free to reuse; then signals
// every semaphore (|status| OK) or fails them with |status| (borrowed);
// then retires it.
void hal_sync_submission_complete(hal_sync_submission_t* submission,
                                  hal_status_t status);

// ISSUING or COMPLETION thread: releases the payload (Q3) and the native
// events, counts the submission out of the queue, then drops the queue's
// reference. Its semaphores and timepoints go with the last reference
// (a teardown snapshot may hold one). Not touched by the caller afterwards.
void hal_sync_submission_retire(hal_sync_submission_t* submission);

#endif  // HAL_SYNC_QUEUE_IMPL_H_
