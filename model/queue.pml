/*
 * The deferred queue of hal/sync/ (submission.c, queue.c, loss_domain.c,
 * event_pool.c, with hal_device_release from hal/device.c and the callback
 * bracket of timepoint.c) on top of sync_common.pml. One scenario per run:
 *
 *   -DSCENARIO_CHAIN     A on queue 0 waits for host semaphore H and
 *                        signals S; B on queue 1 waits for S (kept as A's
 *                        device event if A was recorded first, else
 *                        parked) and signals D. H is signaled or failed,
 *                        S may be failed by the host, A's device work may
 *                        fail (K10, K13, S2, S5, S6/T4, Q3, Q5).
 *   -DSCENARIO_CANCEL    A waits for H0 and H1 and signals D; H0 is
 *                        signaled or failed, H1 may never come: a failure
 *                        cancels the other parked wait (REGISTERED|FAILED,
 *                        K10), a host thread waits on D.
 *   -DSCENARIO_TEARDOWN  A parked on H, B with no waits; the device is
 *                        released by its user (the shutdown destroys the
 *                        queue) while H is signaled, failed, or never (Q4).
 *                        The worker issues A while the user issues B at
 *                        submit, or queues it: the issuing turn keeps issue
 *                        order = in-flight order.
 *                        With -DREVIVE an object of the device also retains
 *                        and releases it, after the count may have reached
 *                        zero: the shutdown must still run once.
 *   -DSCENARIO_CALLBACK  A parked on trigger T at 2; a callback at 1 on T
 *                        holds the device's last reference and releases it
 *                        inside the signal's batch (K15, T2).
 *   -DSCENARIO_LOSS      the device is lost while A is parked on a host
 *                        semaphore nobody signals, threads wait on an idle
 *                        device semaphore and on A's signal, and another
 *                        semaphore of the device is created (Q5, K14).
 *   -DSCENARIO_HELPED    A and B on one queue; a host thread waiting
 *                        without a deadline completes A, so the queue may
 *                        enter helped mode and B's issue not ring; B is
 *                        observed by a wait with a deadline, or by nobody,
 *                        and must complete all the same.
 *   -DSCENARIO_ORDER     A then B on one queue, waiting on host semaphore
 *                        H at 1 and at 1 or 2; two threads signal H to 1
 *                        and to 2, racing B's submit: B must issue after
 *                        A (queue order: docs/sync-design.md).
 *   -DSCENARIO_BUSY      A, B and C on one queue: the completion thread
 *                        completes A with B in flight, so the queue may
 *                        enter busy mode and C's issue not ring (FULL: a
 *                        host thread waiting for B may complete it,
 *                        holding the turn); C is observed by a wait with a
 *                        deadline, or by nobody, and must complete all the
 *                        same.
 *
 * Bug switches: BUG_INLINE_SHUTDOWN_IN_CALLBACK (sync_common.pml),
 * BUG_NO_DEVICE_WAIT_HOST_CHECK, BUG_LOSS_SKIPS_MEMBERS,
 * BUG_ATTACH_BEFORE_RECORD, BUG_PAYLOAD_AFTER_SIGNALS,
 * BUG_SHUTDOWN_NOT_CLAIMED, BUG_ISSUE_WITHOUT_TURN,
 * BUG_DESTROY_IGNORES_HELPERS, BUG_HELPED_SLEEP_FOREVER,
 * BUG_BUSY_SLEEP_FOREVER and BUG_HELPER_NO_BUSY_RING (here),
 * BUG_NO_LATE_PARK and BUG_SIGNAL_DURING_RELEASE_NOTIFIES
 * (sync_common.pml).
 */

#define MAXV 2
#ifdef SCENARIO_BUSY
#define NSUB 3
#define NEV 3
#else
#define NSUB 2
#define NEV 2
#endif
#define NSW 2   /* waits per submission (at most) */
#define NQ 2
#define NWAITER 2
#define NTP 5
#define NSEM 4
#define MAXPROC 12

#ifdef SCENARIO_CHAIN
/* A's work on the device may fail (a vendor error at synchronize) */
#define DEVICE_MAY_FAIL
#ifdef FULL
/* and issue may fail (a vendor error at launch: nothing enqueued) */
#define ISSUE_MAY_FAIL
#endif
#endif

/* hal_sync_semaphore_register_locked's request for the completion of the
 * issued work it waits for (see sync_common.pml): one device timepoint per
 * semaphore, one event pool, so only a host wait's registration can be
 * covered. */
#define REGISTER_REQUEST_HOOK(s, t, st)                                  \
  if                                                                     \
  :: st == TP_PENDING && sem[s].dtp_ev != NONE &&                        \
     sem[s].dtp_val >= tp[t].value ->                                    \
     wl_rq = ev[sem[s].dtp_ev].q + 1;                                    \
     assert(!queue[wl_rq - 1].destroyed);                                \
     queue[wl_rq - 1].helpers++                                          \
  :: else                                                                \
  fi
/* hal_sync_queue_request_completion: the ring, then under the queue's
 * lock the request and the helper counted out. */
#define REQUEST_COMPLETION_STEP                                          \
  if                                                                     \
  :: wl_rq != 0 ->                                                       \
     STEP                                                                \
       assert(!queue[wl_rq - 1].destroyed);                              \
       queue[wl_rq - 1].bell = 1                                         \
     ENDSTEP;                                                            \
     STEP                                                                \
       held[_pid]++;                                                     \
       assert(!queue[wl_rq - 1].destroyed);                              \
       queue[wl_rq - 1].requested = 1;                                   \
       queue[wl_rq - 1].helpers--;                                       \
       held[_pid]--;                                                     \
       TRACE("@%d registration: asks queue %d for its completion\n", _pid, \
             wl_rq - 1);                                                 \
       wl_rq = 0                                                         \
     ENDSTEP                                                             \
  :: else                                                                \
  fi

#define CB_SUB_WAIT 1
#define CB_USER 2
#define TP_IS_QUEUE_WAIT(t) (tp[t].kind == KIND_CALLBACK && tp[t].cb == CB_SUB_WAIT)

#include "sync_common.pml"

/* hal_sync_submission_t cancel_flags */
#define F_REGISTERED 1
#define F_FAILED 2

/*===------------------------------------------------------------------===*
 * Objects
 *===------------------------------------------------------------------===*/

/* hal_sync_submission_wait_t */
typedef swait_t {
  byte s;     /* semaphore, and the value it waits for */
  byte v;
  byte t;     /* registered CALLBACK timepoint (NONE), and its generation */
  byte tg;
  byte e;     /* device wait (T4): native event (NONE), and its generation */
  byte eg;
};

/* hal_sync_submission_t; the scenario fills q, nwait, w[].s/v, sig_*. */
typedef sub_t {
  bool live;
  byte q;
  byte ref;        /* ref_count */
  byte pending;    /* pending_count (submit's guard included) */
  byte flags;      /* cancel_flags: F_REGISTERED | F_FAILED */
  byte failure;    /* the first failure (CAS from OK) */
  bool payload;    /* held (release_payload not called yet) */
  byte releases;   /* ghost: release_payload calls (Q3: exactly one) */
  byte cev;        /* completion_event and its generation */
  byte cevg;
  bool parked;     /* in the queue's parked list */
  bool accepted;   /* ghost: submit returned OK */
  bool retired;    /* ghost */
  bool signaled_ok; /* ghost: its signal was published as a value */
  byte nwait;
  swait_t w[NSW];
  byte sig_s;      /* its one signal semaphore (NONE: none) and value */
  byte sig_v;
  byte seq;        /* ghost: 1 + its place in its queue's issue order */
};
sub_t sub[NSUB];

/* Pops the head of a FIFO array of NSUB entries. */
#if NSUB == 3
#define FIFO_POP(f) f[0] = f[1]; f[1] = f[2]; f[2] = 0
#else
#define FIFO_POP(f) f[0] = f[1]; f[1] = 0
#endif

/* hal_sync_queue_t */
typedef queue_t {
  byte ready[NSUB];    /* ready FIFO */
  byte nready;
  byte inflight[NSUB]; /* in-flight FIFO (issue order) */
  byte ninflight;
  byte live_count;
  bool issuing;        /* is_issuing: a thread holds the issuing turn */
  bool completing;     /* is_completing: a thread holds the completion turn */
  byte helpers;        /* helper_count: host waiters counted in */
  bool helped;         /* is_helped: helped mode, pushes do not ring */
  bool busy;           /* is_busy: busy mode, pushes do not ring */
  bool helped_since;   /* a helper completed work since the completion
                        * thread's last look (its helped_count moved) */
  bool bell;           /* the completion doorbell was rung after the
                        * completion thread's ticket */
  bool requested;      /* is_completion_requested */
  bool shutting_down;
  bool stop;
  bool loss;           /* the domain's loss: submit refuses */
  bool in_domain;
  bool worker_done;    /* joined */
  bool completion_done;
  bool destroyed;
  byte unturned_ev;    /* unturned_sync_event: the event the completion
                        * thread synchronizes with no turn held, or NONE */
  byte handed_ev;      /* handed_sync_event/_failure: a failure of that */
  byte handed_st;      /* synchronize, handed to the helper, or NONE */
  byte completed;      /* ghost: completions so far (issue order) */
  byte stream_seq;     /* device stream: records so far, and completed */
  byte stream_done;
};
queue_t queue[NQ];

/* hal_device_t (external_ref_count, shutdown_claimed) and libhal's release
 * thread (one deferred node). */
byte device_ext_ref;
bool device_shutdown_claimed;
bool deferred_shutdown;
bool device_shut_down;
byte shutdown_runs;  /* ghost: gpu_device_shutdown calls */

/* hal_sync_loss_domain_t */
bool domain_failed;

/* ghost: some device work completed with an error, or an issue failed */
bool gpu_failed;
/* ghost: bit n set when queue 0's work of issue order n completed with a
 * device error */
byte gpu_failed_seq;

/* Which submission signals each semaphore (Q3 check), NONE: the host. */
byte producer[NSEM];

#define T3_CHECK_SUB(x) assert(sub[x].live)

#define QUEUE_LOCALS \
  byte sf_prev, sf_prev1, cw_i, tk_list, tk_i, lf_i, lf_x, rw_i, rw_res; \
  byte cd_x; bool cd_zero, rw_hold; \
  byte is_st, cm_st, cm_s, cm_v, x, dr_last; bool is_ring, is_awaited

/*===------------------------------------------------------------------===*
 * Submission lifetime and failure (submission.c)
 *===------------------------------------------------------------------===*/

/* hal_sync_submission_release: the last reference drops the wait
 * timepoints. */
#define SUB_RELEASE_BODY(y)                                    \
  T3_CHECK_SUB(y);                                             \
  assert(sub[y].ref > 0);                                      \
  sub[y].ref--;                                                \
  if                                                           \
  :: sub[y].ref == 0 ->                                        \
     if                                                        \
     :: sub[y].w[0].t != NONE ->                               \
        TP_RELEASE_BODY(sub[y].w[0].t, sub[y].w[0].tg);        \
        sub[y].w[0].t = NONE                                   \
     :: else                                                   \
     fi;                                                       \
     if                                                        \
     :: sub[y].w[1].t != NONE ->                               \
        TP_RELEASE_BODY(sub[y].w[1].t, sub[y].w[1].tg);        \
        sub[y].w[1].t = NONE                                   \
     :: else                                                   \
     fi;                                                       \
     sub[y].live = 0                                           \
  :: else                                                      \
  fi

/* hal_sync_queue_enqueue_ready (queue lock): unpark, push ready. */
#define ENQUEUE_READY_BODY(y)                                  \
  held[_pid]++;                                                \
  sub[y].parked = 0;                                           \
  queue[sub[y].q].ready[queue[sub[y].q].nready] = y;           \
  queue[sub[y].q].nready++;                                    \
  held[_pid]--

/* hal_sync_queue_end_issue_locked (queue lock): the issuing turn ends;
 * the worker is signaled if something is ready or stop is set. W: the
 * Worker ends its own turn (it is not waiting). The one state change left
 * unsignaled (the turn ending with nothing ready and no stop) makes no
 * predicate of a waiting worker true, which keeps the worker's guarded
 * wait exact; the model asserts the stronger fact that a submitter's turn
 * never ends with stop set (it ends before hal_sync_queue_submit returns,
 * and destroy does not race submit). */
#define END_ISSUE_LOCKED_BODY(qq, W)                           \
  assert(queue[qq].issuing);                                   \
  queue[qq].issuing = 0;                                       \
  assert(W || queue[qq].nready > 0 || !queue[qq].stop);        \
  TRACE("@%d queue %d: the issuing turn ends (%d ready)\n", _pid, qq, \
        queue[qq].nready)

#ifndef BUG_ISSUE_WITHOUT_TURN
#define END_ISSUE_BODY(qq, W) END_ISSUE_LOCKED_BODY(qq, W)
#else
/* Bug 11: the submitter issued without the turn; only the worker has one
 * to end. */
#define END_ISSUE_BODY(qq, W)                                  \
  if                                                           \
  :: W -> END_ISSUE_LOCKED_BODY(qq, W)                         \
  :: else                                                      \
  fi
#endif

/* hal_sync_submission_count_down: the thread taking pending_count to zero
 * (a timepoint callback, or cancel_waits inside submit or a failure) hands
 * the submission to the worker; callbacks never issue (Q1). */
inline hal_sync_submission_count_down(y) {
  STEP
    T3_CHECK_SUB(y);
    assert(sub[y].pending > 0);
    sub[y].pending--;
    cd_zero = (sub[y].pending == 0);
    cd_x = y
  ENDSTEP;
  if
  :: STEP
       cd_zero;
       ENQUEUE_READY_BODY(cd_x);
       TRACE("@%d submission %d: last wait resolved, to the worker\n", _pid, cd_x);
       cd_zero = 0;
       cd_x = 0
     ENDSTEP
  :: STEP !cd_zero; cd_x = 0 ENDSTEP
  fi
}

/* hal_sync_submission_fail inside cancel_waits: FAILED is set already, so
 * this call never cancels (asserted). */
inline hal_sync_submission_fail_nested(y, st) {
  STEP
    T3_CHECK_SUB(y);
    if
    :: sub[y].failure == ST_OK -> sub[y].failure = st
    :: else
    fi
  ENDSTEP;
  STEP
    sf_prev1 = sub[y].flags;
    sub[y].flags = sub[y].flags | F_FAILED;
    assert(sf_prev1 & F_FAILED);
    sf_prev1 = 0
  ENDSTEP
}

/* hal_sync_submission_wait_resolved at the nested level (CANCELLED). */
inline hal_sync_submission_wait_resolved_nested(y, i, st) {
  if
  :: st != ST_OK -> hal_sync_submission_fail_nested(y, st)
  :: else
  fi;
  hal_sync_submission_count_down(y)
}

inline run_callback_nested(which, a, v, st) {
  assert(which == CB_SUB_WAIT);
  hal_sync_submission_wait_resolved_nested(a / NSW, a % NSW, st)
}

/* hal_sync_submission_cancel_waits: each cancel that wins runs the wait's
 * callback (CANCELLED), which counts the wait down. */
inline hal_sync_submission_cancel_waits(y) {
  cw_i = 0;
  do
  :: cw_i < sub[y].nwait && sub[y].w[cw_i].t != NONE ->
     CALLBACK_CANCEL(sub[y].w[cw_i].t, sub[y].w[cw_i].tg, cn_state, cn_removed,
                     run_callback_nested, 1);
     STEP cn_removed = 0; cn_state = 0; cw_i++ ENDSTEP
  :: cw_i < sub[y].nwait && sub[y].w[cw_i].t == NONE -> cw_i++
  :: cw_i >= sub[y].nwait -> cw_i = 0; break
  od
}

/* hal_sync_submission_fail: the first failure is kept (CAS); the one
 * thread whose fetch_or completes REGISTERED|FAILED cancels the other
 * parked waits (K10). */
inline hal_sync_submission_fail(y, st) {
  STEP
    T3_CHECK_SUB(y);
    if
    :: sub[y].failure == ST_OK -> sub[y].failure = st
    :: else
    fi
  ENDSTEP;
  STEP
    sf_prev = sub[y].flags;
    sub[y].flags = sub[y].flags | F_FAILED;
    TRACE("@%d hal_sync_submission_fail(%d, status %d): flags were %d\n",
          _pid, y, sub[y].failure, sf_prev)
  ENDSTEP;
  if
  :: (sf_prev & F_REGISTERED) && !(sf_prev & F_FAILED) ->
     sf_prev = 0;
     hal_sync_submission_cancel_waits(y)
  :: else -> sf_prev = 0
  fi
}

/* hal_sync_submission_wait_resolved: a parked wait resolved (T1: once):
 * records a failure, counts down; never issues work (Q1). */
inline hal_sync_submission_wait_resolved(y, i, st) {
  if
  :: st != ST_OK -> hal_sync_submission_fail(y, st)
  :: else
  fi;
  hal_sync_submission_count_down(y)
}

/*===------------------------------------------------------------------===*
 * Device release (hal/device.c) and the queue's teardown (queue.c)
 *===------------------------------------------------------------------===*/

/* hal_sync_queue_take_parked (queue lock): the parked submissions, each
 * retained, into tk_list (a bit set); with |lost| the queue refuses more. */
#define TAKE_PARKED_BODY(qq, lost)                             \
  held[_pid]++;                                                \
  if                                                           \
  :: lost -> queue[qq].loss = 1                                \
  :: else                                                      \
  fi;                                                          \
  tk_i = 0;                                                    \
  do                                                           \
  :: tk_i < NSUB ->                                            \
     if                                                        \
     :: sub[tk_i].live && sub[tk_i].parked && sub[tk_i].q == qq -> \
        sub[tk_i].ref++;                                       \
        tk_list = tk_list | (1 << tk_i)                        \
     :: else                                                   \
     fi;                                                       \
     tk_i++                                                    \
  :: else -> break                                             \
  od;                                                          \
  tk_i = 0;                                                    \
  held[_pid]--

/* hal_sync_submission_list_fail: fail each taken submission, release it.
 * No lock held: failing runs callbacks (T2). */
inline hal_sync_submission_list_fail(st) {
  lf_i = 0;
  do
  :: lf_i < NSUB && (tk_list & (1 << lf_i)) ->
     lf_x = lf_i;
     hal_sync_submission_fail(lf_x, st);
     STEP SUB_RELEASE_BODY(lf_x); lf_x = 0; lf_i++ ENDSTEP
  :: lf_i < NSUB && !(tk_list & (1 << lf_i)) -> lf_i++
  :: lf_i >= NSUB -> lf_i = 0; tk_list = 0; break
  od
}

/* hal_sync_queue_destroy (Q4). The waits for retirement and for the
 * threads to be joined are not end states: blocking there forever is a
 * deadlock the checker reports. */
inline hal_sync_queue_destroy(qq) {
  /* leave the loss domain, then refuse new submits */
  STEP
    queue[qq].in_domain = 0;
    TRACE("@%d hal_sync_queue_destroy(%d)\n", _pid, qq)
  ENDSTEP;
  /* in helped mode issued work may be unrung: destroy rings for it (C:
   * after the unlock and the cancel below; a ring is a flag, so one step
   * here), and pushes ring from here on */
  STEP
    held[_pid]++; queue[qq].shutting_down = 1; held[_pid]--;
    queue[qq].bell = 1
  ENDSTEP;
  /* hal_sync_queue_cancel_parked: fail parked work with CANCELLED */
  STEP TAKE_PARKED_BODY(qq, 0) ENDSTEP;
  hal_sync_submission_list_fail(ST_CANCELLED);
  /* every accepted submission retires; then stop and join the threads */
  STEP
#ifndef BUG_DESTROY_IGNORES_HELPERS
    queue[qq].live_count == 0 && queue[qq].helpers == 0;
#else
    queue[qq].live_count == 0;
#endif
    queue[qq].stop = 1;
    TRACE("@%d hal_sync_queue_destroy: every submission retired\n", _pid)
  ENDSTEP;
  STEP queue[qq].bell = 1 ENDSTEP;
  STEP queue[qq].worker_done && queue[qq].completion_done;
       queue[qq].destroyed = 1 ENDSTEP
}

/* gpu_device_shutdown: destroys the device's queues, once (Q4). */
inline gpu_device_shutdown() {
  STEP assert(shutdown_runs == 0); shutdown_runs++ ENDSTEP;
  hal_sync_queue_destroy(0);
  STEP device_shut_down = 1 ENDSTEP
}

/* hal_device_release: the release that takes the caller count to zero
 * claims the shutdown; on a queue thread or inside a timepoint callback
 * (hal_resource_shutdown_deferred_here) it goes to the release thread. */
inline hal_device_release() {
  STEP
    assert(device_ext_ref > 0);
    device_ext_ref--;
#ifdef BUG_SHUTDOWN_NOT_CLAIMED
    /* every release that reaches zero shuts down, a revived one again */
    dr_last = (device_ext_ref == 0)
#else
    dr_last = (device_ext_ref == 0 && !device_shutdown_claimed);
    if
    :: dr_last -> device_shutdown_claimed = 1
    :: else
    fi
#endif
  ENDSTEP;
  if
  :: STEP dr_last && (defer_depth[_pid] > 0 || defer_shutdown_depth[_pid] > 0);
       /* hal_resource_defer_node */
       deferred_shutdown = 1;
       dr_last = 0;
       TRACE("@%d hal_device_release: last reference; shutdown deferred\n", _pid)
     ENDSTEP
  :: STEP dr_last && defer_depth[_pid] == 0 && defer_shutdown_depth[_pid] == 0;
       dr_last = 0;
       TRACE("@%d hal_device_release: last reference; shutdown runs here\n", _pid)
     ENDSTEP;
     gpu_device_shutdown()
  :: STEP !dr_last ENDSTEP
  fi
}

/* The timepoint callbacks: a parked wait of a submission, or (K15) the
 * user's callback that drops the last device reference. */
inline run_callback(which, a, v, st) {
  if
  :: which == CB_SUB_WAIT -> hal_sync_submission_wait_resolved(a / NSW, a % NSW, st)
#ifdef SCENARIO_CALLBACK
  :: which == CB_USER -> hal_device_release()
#endif
  fi
}

/*===------------------------------------------------------------------===*
 * Submit (submission.c: hal_sync_queue_submit)
 *===------------------------------------------------------------------===*/

#define RESOLVE_REACHED 0
#define RESOLVE_FAILED 1
#define RESOLVE_EVENT 2
#define RESOLVE_PARKED 3

/* hal_sync_submission_resolve_wait for wait i of y: acquire the CALLBACK
 * timepoint (two references: the heap's and ours), count it as pending
 * before registering (the callback may run at once elsewhere), and decide
 * under the semaphore's lock (hal_sync_semaphore_resolve_wait): reached;
 * failed; a recorded device timepoint of the same event pool with a value
 * >= the one needed (T4: its event is retained), unless a parked wait of
 * an earlier submission of the same queue is pending on the semaphore at
 * or below the value or a signal is handing parked submissions over; or
 * registered (parked, also when reached while such a signal is).
 * Not registered: both references and the count go again. */
#define RESOLVE_WAIT_BODY(y, i)                                          \
  TP_ACQUIRE_CALLBACK_BODY(CB_SUB_WAIT, y * NSW + i, sub[y].w[i].v, wl_t); \
  wl_st = tp[wl_t].gen;                                                  \
  TP_RETAIN_BODY(wl_t, wl_st);                                           \
  sub[y].pending++;                                                      \
  held[_pid]++;                                                          \
  T3_CHECK_SEM(sub[y].w[i].s);                                           \
  /* an earlier parked wait of the same queue at or below the value      \
   * keeps this one off the device path (order_key) */                   \
  rw_hold = 0;                                                           \
  rg_i = 0;                                                              \
  do                                                                     \
  :: rg_i < NTP ->                                                       \
     if                                                                  \
     :: tp[rg_i].live && tp[rg_i].in_heap &&                             \
        tp[rg_i].sem == sub[y].w[i].s && tp[rg_i].cb == CB_SUB_WAIT &&   \
        tp[rg_i].value <= sub[y].w[i].v &&                               \
        sub[tp[rg_i].arg / NSW].q == sub[y].q -> rw_hold = 1             \
     :: else                                                             \
     fi;                                                                 \
     rg_i++                                                              \
  :: else -> break                                                       \
  od;                                                                    \
  rg_i = 0;                                                              \
  if                                                                     \
  :: !sem[sub[y].w[i].s].failed &&                                       \
     sem[sub[y].w[i].s].value < sub[y].w[i].v &&                         \
     sem[sub[y].w[i].s].dtp_ev != NONE &&                                \
     sem[sub[y].w[i].s].dtp_val >= sub[y].w[i].v &&                      \
     sem[sub[y].w[i].s].rel == 0 && !rw_hold ->                          \
     T3_CHECK_EVENT(sem[sub[y].w[i].s].dtp_ev, sem[sub[y].w[i].s].dtp_gen); \
     assert(ev[sem[sub[y].w[i].s].dtp_ev].records > 0); /* T4 */         \
     ev[sem[sub[y].w[i].s].dtp_ev].ref++;                                \
     sub[y].w[i].e = sem[sub[y].w[i].s].dtp_ev;                          \
     sub[y].w[i].eg = sem[sub[y].w[i].s].dtp_gen;                        \
     rw_res = RESOLVE_EVENT                                              \
  :: else ->                                                             \
     REGISTER_LOCKED_BODY(sub[y].w[i].s, wl_t, wl_state[0]);             \
     rw_res = (wl_state[0] == TP_PENDING -> RESOLVE_PARKED :             \
               (wl_state[0] == TP_FAILED -> RESOLVE_FAILED : RESOLVE_REACHED)); \
     wl_state[0] = 0                                                     \
  fi;                                                                    \
  rw_hold = 0;                                                           \
  held[_pid]--;                                                          \
  if                                                                     \
  :: rw_res == RESOLVE_PARKED ->                                         \
     sub[y].w[i].t = wl_t;                                               \
     sub[y].w[i].tg = wl_st                                              \
  :: else ->                                                             \
     sub[y].pending--;                                                   \
     TP_RELEASE_BODY(wl_t, wl_st);                                       \
     TP_RELEASE_BODY(wl_t, wl_st)                                        \
  fi;                                                                    \
  TRACE("@%d submit %d: wait %d on semaphore %d resolved under its lock: %d\n", \
        _pid, y, i, sub[y].w[i].s, rw_res);                               \
  wl_t = 0;                                                              \
  wl_st = 0

inline hal_sync_queue_submit(y) {
  /* allocate (private), then accepted or refused under the queue lock */
  STEP
    sub[y].live = 1;
    sub[y].ref = 1;
    sub[y].pending = 1; /* submit's guard */
    sub[y].flags = 0;
    sub[y].failure = ST_OK;
    sub[y].payload = 1;
    sub[y].cev = NONE;
    sub[y].w[0].t = NONE; sub[y].w[0].e = NONE;
    sub[y].w[1].t = NONE; sub[y].w[1].e = NONE;
    held[_pid]++;
    if
    :: queue[sub[y].q].shutting_down || queue[sub[y].q].loss ->
       /* refused: the payload is still the caller's */
       sub[y].payload = 0;
       sub[y].live = 0;
       sub[y].ref = 0;
       sub[y].pending = 0
    :: else ->
       queue[sub[y].q].live_count++;
       sub[y].parked = 1;
       sub[y].accepted = 1
    fi;
    held[_pid]--;
    TRACE("@%d hal_sync_queue_submit(%d): accepted %d\n", _pid, y, sub[y].accepted)
  ENDSTEP;
  if
  :: sub[y].accepted ->
     rw_i = 0;
     do
     :: rw_i < sub[y].nwait ->
        STEP RESOLVE_WAIT_BODY(y, rw_i) ENDSTEP;
        if
        :: rw_res == RESOLVE_FAILED ->
           rw_res = 0;
           hal_sync_submission_fail(y, sem[sub[y].w[rw_i].s].fst);
           break
        :: else -> rw_res = 0; rw_i++
        fi
     :: else -> break
     od;
     rw_i = 0;
     /* registration complete: a recorded failure's cancel falls to us */
     STEP
       sf_prev = sub[y].flags;
       sub[y].flags = sub[y].flags | F_REGISTERED
     ENDSTEP;
     if
     :: sf_prev & F_FAILED -> sf_prev = 0; hal_sync_submission_cancel_waits(y)
     :: else -> sf_prev = 0
     fi;
     /* drop the guard; if it was the last, every wait is resolved and this
      * thread hands the submission on (not touched after this otherwise) */
     STEP
       T3_CHECK_SUB(y);
       assert(sub[y].pending > 0);
       sub[y].pending--;
       cd_zero = (sub[y].pending == 0)
     ENDSTEP;
     if
     :: STEP cd_zero; cd_zero = 0 ENDSTEP;
        hal_sync_queue_ready_at_submit(y)
     :: STEP !cd_zero ENDSTEP
     fi
  :: else
  fi
}

/* hal_sync_queue_ready_at_submit (queue.c): the driver's
 * may_issue_on_submitter is a nondeterministic yes or no. Allowed, with no
 * turn held and nothing ready, the submitting thread takes the turn and
 * issues (or fails) the submission itself, as the worker would; otherwise
 * it is queued for the worker. C checks under one lock and enqueues under
 * the next: the check only reads, and "not allowed" may enqueue in any
 * state, so one step for the fallback loses no behaviour. */
inline hal_sync_queue_ready_at_submit(y) {
  if
#ifndef BUG_ISSUE_WITHOUT_TURN
  :: STEP
       !queue[sub[y].q].issuing && queue[sub[y].q].nready == 0;
       held[_pid]++;
       T3_CHECK_SUB(y);
       sub[y].parked = 0; /* hal_sync_queue_unpark_locked */
       queue[sub[y].q].issuing = 1;
       held[_pid]--;
       TRACE("@%d submission %d: every wait resolved at submit; the submitter takes the turn\n",
             _pid, y)
     ENDSTEP;
#else
  /* Bug 11: issued at submit with no turn taken and ahead of ready work:
   * the worker may be issuing at the same time */
  :: STEP
       held[_pid]++;
       T3_CHECK_SUB(y);
       sub[y].parked = 0;
       held[_pid]--;
       TRACE("@%d submission %d: every wait resolved at submit; issued here, no turn taken\n",
             _pid, y)
     ENDSTEP;
#endif
     hal_sync_submission_issue_or_fail(y, sub[y].q, 0)
  :: STEP
       ENQUEUE_READY_BODY(y);
       TRACE("@%d submission %d: every wait resolved at submit, to the worker\n", _pid, y)
     ENDSTEP
  fi
}

/*===------------------------------------------------------------------===*
 * Completion and issue (submission.c)
 *===------------------------------------------------------------------===*/

/* hal_sync_submission_retire: payload (idempotent) and events go, the
 * queue counts it out, the queue's reference goes. */
inline hal_sync_submission_retire(y) {
  STEP
    T3_CHECK_SUB(y);
    if
    :: sub[y].payload -> sub[y].payload = 0; sub[y].releases++
    :: else
    fi;
    if
    :: sub[y].w[0].e != NONE ->
       EVENT_RELEASE_BODY(sub[y].w[0].e, sub[y].w[0].eg); sub[y].w[0].e = NONE
    :: else
    fi;
    if
    :: sub[y].w[1].e != NONE ->
       EVENT_RELEASE_BODY(sub[y].w[1].e, sub[y].w[1].eg); sub[y].w[1].e = NONE
    :: else
    fi;
    if
    :: sub[y].cev != NONE ->
       EVENT_RELEASE_BODY(sub[y].cev, sub[y].cevg); sub[y].cev = NONE
    :: else
    fi
  ENDSTEP;
  STEP
    held[_pid]++;
    assert(queue[sub[y].q].live_count > 0);
    queue[sub[y].q].live_count--;
    held[_pid]--;
    sub[y].retired = 1;
    SUB_RELEASE_BODY(y)
  ENDSTEP
}

/* hal_sync_submission_complete: the payload is released BEFORE the signal
 * is published (Q3), then the signal is advanced (OK) or failed. */
inline hal_sync_submission_complete(y, st) {
  STEP
    T3_CHECK_SUB(y);
    assert(sub[y].payload && sub[y].releases == 0);
#ifndef BUG_PAYLOAD_AFTER_SIGNALS
    sub[y].payload = 0;
    sub[y].releases++;
#endif
    cm_st = st;
    TRACE("@%d hal_sync_submission_complete(%d, status %d): payload released %d\n",
          _pid, y, cm_st, sub[y].releases);
    if
    :: cm_st == ST_OK ->
       /* K10, K13, S2: OK only when every wait was reached on the host */
       assert(sub[y].nwait < 1 || ENTRY_REACHED(sub[y].w[0].s, sub[y].w[0].v));
       assert(sub[y].nwait < 2 || ENTRY_REACHED(sub[y].w[1].s, sub[y].w[1].v));
       sub[y].signaled_ok = 1
    :: else
    fi
  ENDSTEP;
  if
  :: STEP sub[y].sig_s != NONE;
       cm_s = sub[y].sig_s;
       cm_v = sub[y].sig_v
     ENDSTEP;
     /* hal_sync_semaphore_advance (OK) or hal_sync_submission_fail_signals */
     hal_sync_semaphore_signal_or_fail(cm_s, cm_v, cm_st)
  :: sub[y].sig_s == NONE
  fi;
#ifdef BUG_PAYLOAD_AFTER_SIGNALS
  /* the payload (the command buffer's in-flight count) let go only after
   * the signal was published: a woken waiter may re-record it in flight */
  STEP sub[y].payload = 0; sub[y].releases++ ENDSTEP;
#endif
  STEP cm_st = 0; cm_s = 0; cm_v = 0 ENDSTEP;
  hal_sync_submission_retire(y)
}

/* hal_sync_semaphore_attach_event: the completion event becomes a device
 * timepoint of the signal semaphore (skipped if reached or failed). */
#define TP_AWAITS(i, y) (tp[i].live && tp[i].in_heap &&                 \
                         tp[i].sem == sub[y].sig_s && tp[i].value <= sub[y].sig_v)
#define ATTACH_EVENT(y)                                                  \
  if                                                                     \
  :: STEP                                                                \
       sub[y].sig_s != NONE;                                             \
       held[_pid]++;                                                     \
       T3_CHECK_SEM(sub[y].sig_s);                                       \
       if                                                                \
       :: !sem[sub[y].sig_s].failed && sem[sub[y].sig_s].value < sub[y].sig_v -> \
          /* a timepoint registered for the value: the push rings */     \
          is_awaited = TP_AWAITS(0, y) || TP_AWAITS(1, y) ||             \
                       TP_AWAITS(2, y) || TP_AWAITS(3, y) || TP_AWAITS(4, y); \
          assert(sem[sub[y].sig_s].dtp_ev == NONE);                      \
          ev[sub[y].cev].ref++;                                          \
          sem[sub[y].sig_s].dtp_ev = sub[y].cev;                         \
          sem[sub[y].sig_s].dtp_val = sub[y].sig_v;                      \
          sem[sub[y].sig_s].dtp_gen = sub[y].cevg                        \
       :: else                                                           \
       fi;                                                               \
       held[_pid]--;                                                     \
       TRACE("@%d attach event %d to semaphore %d (value %d)\n", _pid,  \
             sub[y].cev, sub[y].sig_s, sub[y].sig_v)                     \
     ENDSTEP                                                             \
  :: sub[y].sig_s == NONE                                                \
  fi

/* hal_sync_submission_issue (the ISSUING thread, holding the turn; W: the
 * Worker). On a failure before the event is in flight, is_st says why and
 * the caller completes the submission and ends the turn (one expansion of
 * hal_sync_submission_complete per thread). */
inline hal_sync_submission_issue(y, W) {
#ifndef BUG_NO_DEVICE_WAIT_HOST_CHECK
  /* hal_sync_submission_waits_failed, for the device-waited semaphore: one
   * that failed already: never run (S2) */
  STEP
    is_st = ST_OK;
    if
    :: sub[y].w[0].e != NONE && sem[sub[y].w[0].s].value == FAILV ->
       is_st = sem[sub[y].w[0].s].fst
    :: else
    fi;
    if
    :: is_st == ST_OK && sub[y].w[1].e != NONE && sem[sub[y].w[1].s].value == FAILV ->
       is_st = sem[sub[y].w[1].s].fst
    :: else
    fi
  ENDSTEP;
#else
  /* Bug 3 (K10, K13): a device wait was trusted to mean success */
  is_st = ST_OK;
#endif
  if
  :: is_st != ST_OK
  :: else ->
     /* the event first; wait_event per kept event (T4), issue */
     STEP
       sub[y].cev = 0;
       do
       :: sub[y].cev < NEV && ev[sub[y].cev].live -> sub[y].cev++
       :: else -> break
       od;
       assert(sub[y].cev < NEV);
       ev[sub[y].cev].live = 1;
       ev[sub[y].cev].ref = 1;
       ev[sub[y].cev].records = 0;
       ev[sub[y].cev].dep = NONE;
       sub[y].cevg = ev[sub[y].cev].gen;
       if
       :: sub[y].w[0].e != NONE ->
          T3_CHECK_EVENT(sub[y].w[0].e, sub[y].w[0].eg);
          assert(ev[sub[y].w[0].e].records > 0); /* T4 */
          ev[sub[y].cev].dep = sub[y].w[0].e
       :: else
       fi;
       if
       :: sub[y].w[1].e != NONE ->
          T3_CHECK_EVENT(sub[y].w[1].e, sub[y].w[1].eg);
          assert(ev[sub[y].w[1].e].records > 0); /* T4 */
          assert(ev[sub[y].cev].dep == NONE); /* one device wait per scenario */
          ev[sub[y].cev].dep = sub[y].w[1].e
       :: else
       fi
     ENDSTEP;
#ifdef BUG_ATTACH_BEFORE_RECORD
     /* T4 negative test: the event is attached before it is recorded */
     ATTACH_EVENT(y);
#endif
     if
     :: STEP
          /* record_event: after everything issued on this stream */
          ev[sub[y].cev].records++;
          ev[sub[y].cev].q = sub[y].q;
          ev[sub[y].cev].seq = queue[sub[y].q].stream_seq;
          queue[sub[y].q].stream_seq++;
          sub[y].seq = queue[sub[y].q].stream_seq;
          is_st = ST_OK;
          TRACE("@%d issue %d: wait_event %d, issue, record_event %d\n", _pid, y,
                ev[sub[y].cev].dep, sub[y].cev)
        ENDSTEP
#ifdef ISSUE_MAY_FAIL
     :: STEP
          /* issue failed: nothing was enqueued */
          is_st = ST_DEVICE;
          gpu_failed = 1;
          TRACE("@%d issue %d: the vendor call failed\n", _pid, y)
        ENDSTEP
#endif
     fi;
     if
     :: is_st != ST_OK
     :: else ->
#ifndef BUG_ATTACH_BEFORE_RECORD
        /* recorded (T4): a device timepoint of the signal semaphore */
        ATTACH_EVENT(y);
#endif
        /* one critical section ends the turn and hands it on, and reads
         * helped and busy modes: the completion doorbell rings after the
         * unlock unless the queue is helped or busy (a registration for
         * the work rings it then, a latency measure: the sleeps' deadlines
         * cover it here) */
        STEP
          held[_pid]++;
          END_ISSUE_BODY(sub[y].q, W);
          queue[sub[y].q].inflight[queue[sub[y].q].ninflight] = y;
          queue[sub[y].q].ninflight++;
          is_ring = (is_awaited || queue[sub[y].q].shutting_down ||
                     queue[sub[y].q].requested ||
                     !(queue[sub[y].q].helped || queue[sub[y].q].busy));
          is_awaited = 0;
          held[_pid]--;
          /* the ring after the unlock, in the same step: a ring is a flag
           * the completion thread clears when it takes its ticket, so a
           * later ring could only wake it once more (a spurious look) */
          if
          :: is_ring -> queue[sub[y].q].bell = 1
          :: else
          fi;
          TRACE("@%d submission %d: in flight on queue %d (ring %d)\n", _pid, y,
                sub[y].q, is_ring);
          is_ring = 0
        ENDSTEP
     fi
  fi
}

/* hal_sync_submission_issue_or_fail (the ISSUING thread: the Worker, W 1,
 * or the submitting thread, W 0): a submission failed while parked is
 * completed with its failure (S2: never issued), else issued. Every path
 * ends the turn: the in-flight push's step, or, after
 * hal_sync_submission_complete returns, a step of its own (qq: the queue,
 * kept before the submission may retire). */
inline hal_sync_submission_issue_or_fail(y, qq, W) {
  if
  :: STEP sub[y].failure != ST_OK; is_st = sub[y].failure ENDSTEP
  :: STEP sub[y].failure == ST_OK ENDSTEP;
     hal_sync_submission_issue(y, W)
  fi;
  if
  :: is_st != ST_OK ->
     hal_sync_submission_complete(y, is_st);
     STEP held[_pid]++; END_ISSUE_BODY(qq, W); held[_pid]--; is_st = 0 ENDSTEP
  :: else
  fi
}

/*===------------------------------------------------------------------===*
 * Threads (queue.c)
 *===------------------------------------------------------------------===*/

/* hal_sync_queue_worker_main: pops only when no thread holds the issuing
 * turn, and takes the turn with the pop; exits at stop once nothing is
 * ready and no turn is held. */
proctype Worker(byte qq) {
  SYNC_LOCALS;
  QUEUE_LOCALS;
  defer_depth[_pid] = 1; /* hal_resource_defer_destruction_enter */
end_hal_sync_queue_worker_main_cond_wait:
  do
  :: STEP
       queue[qq].nready > 0 && !queue[qq].issuing;
       held[_pid]++;
       x = queue[qq].ready[0];
       FIFO_POP(queue[qq].ready);
       queue[qq].nready--;
       queue[qq].issuing = 1;
       held[_pid]--;
       TRACE("@%d worker %d: pops submission %d, takes the turn\n", _pid, qq, x)
     ENDSTEP;
     hal_sync_submission_issue_or_fail(x, qq, 1);
     x = 0
  :: STEP queue[qq].nready == 0 && queue[qq].stop && !queue[qq].issuing;
       queue[qq].worker_done = 1
     ENDSTEP;
     break
  od
}

/* hal_sync_submission_await_device_waits: a host wait (no deadline) for
 * each semaphore waited on through an event: the event orders the work,
 * only the semaphore says whether the signaler succeeded (K10, K13). */
inline hal_sync_submission_await_device_waits(y, out_st) {
  out_st = ST_OK;
#ifndef BUG_NO_DEVICE_WAIT_HOST_CHECK
  rw_i = 0;
  do
  :: rw_i < sub[y].nwait && out_st == ST_OK && sub[y].w[rw_i].e != NONE ->
     hal_sync_semaphore_wait_list(MODE_ALL, 1, sub[y].w[rw_i].s, sub[y].w[rw_i].v,
                                  sub[y].w[rw_i].s, sub[y].w[rw_i].v, 0, out_st);
     rw_i++
  :: rw_i < sub[y].nwait && (out_st != ST_OK || sub[y].w[rw_i].e == NONE) -> rw_i++
  :: rw_i >= sub[y].nwait -> rw_i = 0; break
  od
#endif
}

/* synchronize_event's status: the device's error. With
 * SYNC_ERROR_ONE_CALL only the first synchronize of the event that sees it
 * reports it (an error reported to one call, as the virtual GPU's one-shot
 * faults are); a later one of the same event returns OK. */
#ifdef SYNC_ERROR_ONE_CALL
#define SYNC_STATUS(e, st) st = (ev[e].err -> ST_DEVICE : ST_OK); ev[e].err = 0
#else
#define SYNC_STATUS(e, st) st = (ev[e].err -> ST_DEVICE : ST_OK)
#endif

/* hal_sync_queue_completion_main: issue order. It peeks at the in-flight
 * head, retains its event and synchronizes with no turn held (blocks
 * until the device completed the record: not an end state, the device
 * always completes recorded work), then takes the completion turn with
 * the pop only if the head is unchanged and no helper holds the turn; else
 * it looks again. It sleeps on the completion doorbell while the FIFO is
 * empty, a helper holds the turn, or, in helped mode, it was not rung: the
 * ticket is taken under the queue lock at that look (bell cleared), and
 * pushes (unless helped), stop, destroy and a helper's end of turn with
 * work left ring after their unlock (bell set), so no ring is missed. In
 * helped mode the sleep has a deadline: it may end unrung at any time, and
 * ends the mode if no helper completed anything since the look. A ring
 * that lands while it is awake is seen at its next look (C: each look
 * compares the ring count with the last one seen). A wait's registration
 * for issued work rings and leaves a request that lasts until the mode
 * ends: pushes ring and looks take work while it is there. Helped mode is
 * entered at a look that finds helpers' completions (C: after several),
 * left when this thread completes work itself or the deadline passes with
 * no helper's completion. Busy mode is entered when this thread completes
 * work with more in flight behind it (not from helped mode; entering
 * helped mode leaves it): pushes do not ring, a look takes the head only
 * when rung, asked, the head has a successor, or after a sleep in the
 * mode (which has a deadline); a look after such a sleep that finds
 * nothing in flight leaves the mode and drops the request. */
#define CM_MAY_TAKE(qq) \
  ((!queue[qq].helped && !queue[qq].busy) || cm_rung || queue[qq].bell || \
   queue[qq].requested || \
   (queue[qq].busy && (cm_slept || queue[qq].ninflight > 1)))
#define CM_BUSY_OVER(qq) \
  (queue[qq].busy && cm_slept && queue[qq].ninflight == 0 && \
   !queue[qq].completing)
proctype Completion(byte qq) {
  SYNC_LOCALS;
  WAIT_LOCALS;
  QUEUE_LOCALS;
  byte cm_e, cm_g;
  bool cm_take, cm_asleep, cm_timed, cm_rung;
  bool cm_slept, cm_sleep_busy;
  defer_depth[_pid] = 1; /* hal_resource_defer_destruction_enter */
end_hal_sync_queue_completion_main_doorbell_wait:
  do
  :: STEP
       /* a look that finds helpers' completions may enter helped mode */
       !cm_asleep && queue[qq].helped_since;
       held[_pid]++;
       queue[qq].helped_since = 0;
       queue[qq].busy = 0;
       queue[qq].helped = 1;
       held[_pid]--
     ENDSTEP
  :: STEP
       /* busy: a look after a busy sleep finds nothing in flight */
       !cm_asleep && CM_BUSY_OVER(qq);
       held[_pid]++;
       queue[qq].busy = 0;
       queue[qq].requested = 0;
       held[_pid]--
     ENDSTEP
  :: STEP
       /* a look: a ring since the last one counts (is_rung until it
        * sleeps); it takes the head when the mode lets it */
       !cm_asleep && queue[qq].ninflight > 0 && !queue[qq].completing &&
       CM_MAY_TAKE(qq);
       held[_pid]++;
       cm_slept = 0;
       cm_rung = cm_rung || queue[qq].bell;
       queue[qq].bell = 0;
       x = queue[qq].inflight[0];
       cm_e = sub[x].cev;
       cm_g = sub[x].cevg;
       T3_CHECK_EVENT(cm_e, cm_g);
       ev[cm_e].ref++;
#ifndef BUG_SYNC_FAILURE_DROPPED
       /* a helper that pops x after this look waits for the synchronize */
       queue[qq].unturned_ev = cm_e;
#endif
       held[_pid]--
     ENDSTEP;
     /* synchronize_event, no turn held */
     STEP
       ev[cm_e].done;
       T3_CHECK_EVENT(cm_e, cm_g);
       SYNC_STATUS(cm_e, cm_st);
       TRACE("@%d synchronize_event(%d) of submission %d: status %d\n", _pid,
             cm_e, x, cm_st)
     ENDSTEP;
     STEP
       held[_pid]++;
       cm_take = queue[qq].ninflight > 0 && queue[qq].inflight[0] == x &&
                 !queue[qq].completing;
#ifndef BUG_SYNC_FAILURE_DROPPED
       queue[qq].unturned_ev = NONE;
       if
       :: !cm_take && cm_st != ST_OK ->
          /* a helper popped x since the look: the failure is its (Q5) */
          assert(queue[qq].handed_ev == NONE);
          queue[qq].handed_ev = cm_e;
          queue[qq].handed_st = cm_st
       :: else
       fi;
#endif
       if
       :: cm_take ->
          FIFO_POP(queue[qq].inflight);
          queue[qq].ninflight--;
          queue[qq].completing = 1;
          if
          :: queue[qq].helped ->
             /* nobody else completed it: back to ringing at issue */
             queue[qq].helped = 0;
             queue[qq].requested = 0
          :: !queue[qq].helped && !queue[qq].busy && queue[qq].ninflight > 0 ->
             /* more came while it ran: busy mode, the request kept */
             queue[qq].busy = 1
          :: !queue[qq].helped && !queue[qq].busy && queue[qq].ninflight == 0 ->
             queue[qq].requested = 0
          :: !queue[qq].helped && queue[qq].busy
          fi;
          /* issue order */
          assert(ev[cm_e].seq == queue[qq].completed);
          queue[qq].completed++
       :: else
       fi;
       held[_pid]--;
       EVENT_RELEASE_BODY(cm_e, cm_g);
       cm_e = 0;
       cm_g = 0
     ENDSTEP;
     if
     :: cm_take ->
        if
        :: cm_st == ST_OK -> hal_sync_submission_await_device_waits(x, is_st)
        :: else -> is_st = cm_st
        fi;
        cm_st = 0;
        hal_sync_submission_complete(x, is_st);
        is_st = 0;
        STEP queue[qq].completing = 0 ENDSTEP
     :: else -> cm_st = 0
     fi;
     cm_take = 0;
     x = 0
  :: STEP
       /* a look that finds nothing it may take: a ring since the last look
        * is seen here (the ticket includes it), then it sleeps */
       !cm_asleep &&
       !(queue[qq].ninflight > 0 && !queue[qq].completing && CM_MAY_TAKE(qq)) &&
       !(queue[qq].ninflight == 0 && !queue[qq].completing && queue[qq].stop) &&
       !CM_BUSY_OVER(qq);
       held[_pid]++;
       queue[qq].bell = 0;
       queue[qq].helped_since = 0;
#if defined(BUG_HELPED_SLEEP_FOREVER)
       /* Bug 13: the helped sleep has no deadline */
       cm_timed = queue[qq].busy && !queue[qq].completing;
#elif defined(BUG_BUSY_SLEEP_FOREVER)
       /* Bug 14: the busy sleep has no deadline */
       cm_timed = queue[qq].helped;
#else
       /* busy with a helper holding the turn: the helper rings at its end */
       cm_timed = queue[qq].helped || (queue[qq].busy && !queue[qq].completing);
#endif
       cm_sleep_busy = queue[qq].busy;
       cm_rung = 0;
       cm_asleep = 1;
       held[_pid]--
     ENDSTEP
  :: STEP
       /* a ring after the ticket: the next look sees it */
       cm_asleep && queue[qq].bell;
       cm_slept = cm_sleep_busy;
       cm_asleep = 0
     ENDSTEP
  :: STEP
       /* the deadline passes unrung. Helped: with no helper's completion
        * since the look, the mode ends. Busy: the next look takes the head
        * or ends the mode. */
       cm_asleep && cm_timed && !queue[qq].bell;
       held[_pid]++;
       if
       :: queue[qq].helped && !queue[qq].helped_since ->
          queue[qq].helped = 0;
          queue[qq].requested = 0
       :: else
       fi;
       cm_slept = cm_sleep_busy;
       cm_asleep = 0;
       held[_pid]--
     ENDSTEP
  :: STEP !cm_asleep && queue[qq].ninflight == 0 && !queue[qq].completing &&
          queue[qq].stop;
       queue[qq].completion_done = 1
     ENDSTEP;
     break
  od
}

/* The helping branch of hal_sync_semaphore_wait_list (wait.c) +
 * hal_sync_queue_help_complete: a host wait without a
 * deadline that finds issued work publishing its value (a device
 * timepoint) counts itself in as a helper of that work's queue under the
 * semaphore's lock, retains the event, then completes the queue's
 * in-flight submissions in issue order up to that one, each under the
 * completion turn, while the turn is free; then releases the event and
 * counts itself out. Destroy waits for no helper to be counted in
 * (negative test BUG_DESTROY_IGNORES_HELPERS). Payload releases and
 * callbacks run inside a defer-destruction bracket, as on queue threads. */
inline hal_sync_wait_help(s, v) {
  STEP
    held[_pid]++;
    hw_q = NONE;
    if
    :: !sem[s].failed && sem[s].value < v && sem[s].dtp_ev != NONE &&
       sem[s].dtp_val >= v ->
       hw_e = sem[s].dtp_ev;
       hw_g = sem[s].dtp_gen;
       T3_CHECK_EVENT(hw_e, hw_g);
       hw_q = ev[hw_e].q;
       assert(!queue[hw_q].destroyed);
       queue[hw_q].helpers++;
       ev[hw_e].ref++
    :: else
    fi;
    held[_pid]--
  ENDSTEP;
  if
  :: hw_q != NONE ->
     defer_depth[_pid]++;
     do
     :: STEP
          held[_pid]++;
          assert(!queue[hw_q].destroyed);
          /* is the event's submission in flight? */
          hw_x = NONE;
          hw_i = 0;
          do
          :: hw_i < queue[hw_q].ninflight ->
             if
             :: sub[queue[hw_q].inflight[hw_i]].cev == hw_e -> hw_x = 0
             :: else
             fi;
             hw_i++
          :: else -> break
          od;
          hw_i = 0;
          if
          :: hw_x != NONE && !queue[hw_q].completing ->
             hw_x = queue[hw_q].inflight[0];
             FIFO_POP(queue[hw_q].inflight);
             queue[hw_q].ninflight--;
             queue[hw_q].completing = 1;
             hw_last = (sub[hw_x].cev == hw_e)
          :: else -> hw_x = NONE
          fi;
          held[_pid]--
        ENDSTEP;
        if
        :: hw_x == NONE -> break
        :: else ->
           /* synchronize_event with the turn held */
           STEP
             ev[sub[hw_x].cev].done;
             T3_CHECK_EVENT(sub[hw_x].cev, sub[hw_x].cevg);
             /* issue order */
             assert(ev[sub[hw_x].cev].seq == queue[hw_q].completed);
             queue[hw_q].completed++;
             SYNC_STATUS(sub[hw_x].cev, cm_st);
             TRACE("@%d helper: synchronize_event(%d) of submission %d: status %d\n",
                   _pid, sub[hw_x].cev, hw_x, cm_st)
           ENDSTEP;
#ifndef BUG_SYNC_FAILURE_DROPPED
           /* hal_sync_queue_join_unturned_sync_locked: the completion
            * thread's synchronize of the same event returned; its failure,
            * if it handed one, is this submission's unless it has one */
           STEP
             queue[hw_q].unturned_ev != sub[hw_x].cev;
             held[_pid]++;
             if
             :: queue[hw_q].handed_ev == sub[hw_x].cev ->
                if
                :: cm_st == ST_OK -> cm_st = queue[hw_q].handed_st
                :: else
                fi;
                queue[hw_q].handed_ev = NONE;
                queue[hw_q].handed_st = 0
             :: else
             fi;
             held[_pid]--
           ENDSTEP;
#endif
           if
           :: cm_st == ST_OK -> hal_sync_submission_await_device_waits(hw_x, is_st)
           :: else -> is_st = cm_st
           fi;
           cm_st = 0;
           hal_sync_submission_complete(hw_x, is_st);
           is_st = 0;
           STEP
             held[_pid]++;
             assert(!queue[hw_q].destroyed);
             queue[hw_q].completing = 0;
             queue[hw_q].helped_since = 1;
             held[_pid]--;
             /* the completion thread may have found the turn taken and
              * slept: ring (after the unlock; one step, as the push's) if
              * work is left, or the queue is busy (that sleep has no
              * deadline there, and a later push would not ring) */
             if
#ifndef BUG_HELPER_NO_BUSY_RING
             :: queue[hw_q].ninflight > 0 || queue[hw_q].busy ->
#else
             /* Bug 15: no ring for a busy queue with nothing left */
             :: queue[hw_q].ninflight > 0 ->
#endif
                queue[hw_q].bell = 1
             :: else
             fi
           ENDSTEP;
           hw_x = 0;
           if
           :: hw_last -> hw_last = 0; break
           :: else
           fi
        fi
     od;
     defer_depth[_pid]--;
     STEP EVENT_RELEASE_BODY(hw_e, hw_g); hw_e = 0; hw_g = 0 ENDSTEP;
     STEP
       held[_pid]++;
       assert(!queue[hw_q].destroyed);
       queue[hw_q].helpers--;
       held[_pid]--;
       hw_q = 0
     ENDSTEP
  :: else -> hw_q = 0
  fi
}

/* The device: completes recorded work in stream order, after the event it
 * waits for on the device (wait_event). With DEVICE_MAY_FAIL the work on
 * queue 0 may complete with a device error. */
#define GPU_READY(e) (ev[e].live && ev[e].records > 0 && !ev[e].done && \
                      ev[e].seq == queue[ev[e].q].stream_done &&        \
                      (ev[e].dep == NONE || ev[ev[e].dep].done))
#define GPU_DONE(e, failed)                                   \
  TRACE("@%d device: work before event %d completes (error %d)\n", \
        _pid, e, failed);                                     \
  ev[e].done = 1;                                             \
  ev[e].err = failed;                                         \
  gpu_failed = gpu_failed || failed;                          \
  if                                                          \
  :: failed && ev[e].q == 0 ->                                \
     gpu_failed_seq = gpu_failed_seq | (1 << ev[e].seq)      \
  :: else                                                     \
  fi;                                                         \
  queue[ev[e].q].stream_done++

proctype Gpu() {
end_device_idle:
  do
  :: STEP GPU_READY(0); GPU_DONE(0, 0) ENDSTEP
  :: STEP GPU_READY(1); GPU_DONE(1, 0) ENDSTEP
#if NEV > 2
  :: STEP GPU_READY(2); GPU_DONE(2, 0) ENDSTEP
#endif
#ifdef DEVICE_MAY_FAIL
  :: STEP GPU_READY(0) && ev[0].q == 0; GPU_DONE(0, 1) ENDSTEP
  :: STEP GPU_READY(1) && ev[1].q == 0; GPU_DONE(1, 1) ENDSTEP
#endif
  od
}

/* A host thread waiting (no deadline) for (s, v), then checking what the
 * return says (S5, Q3). */
proctype HostWaiter(byte s; byte v) {
  SYNC_LOCALS;
  WAIT_LOCALS;
  QUEUE_LOCALS;
  byte hw_q, hw_e, hw_g, hw_x, hw_i;
  bool hw_last;
  byte result;
  hal_sync_wait_help(s, v);
  hal_sync_semaphore_wait_list(MODE_ALL, 1, s, v, s, v, 0, result);
  if
  :: result == ST_OK -> assert(sem[s].hist >= v)
  :: else -> assert(result != ST_DEADLINE && sem[s].failed)
  fi;
  /* Q3: a value published by the producer comes after its payload was
   * released (failures may come from elsewhere: a loss, the host) */
  assert(result != ST_OK || producer[s] == NONE || sub[producer[s]].releases == 1)
}

/* hal_sync_loss_domain_add_semaphore / creation of a device semaphore */
inline hal_sync_semaphore_create_in_domain(s) {
  STEP
    sem[s].live = 1;
    sem[s].ref = 1;
    sem[s].dtp_ev = NONE;
    sem[s].domain = 1;
#ifdef BUG_LOSS_SKIPS_MEMBERS
    /* no loss domain: a semaphore is never born failed */
    skip
#else
    if
    :: domain_failed ->
       /* born failed with the loss, before it is listed */
       sem[s].failed = 1;
       sem[s].fst = ST_LOST;
       sem[s].value = FAILV
    :: else
    fi
#endif
  ENDSTEP
}

/* The Observer's checks at quiescence shared by every scenario. */
inline check_queue_quiescence() {
  check_no_lost_wakeup();
  /* no issuing or completion turn is left held, no helper counted in */
  assert(!queue[0].issuing && !queue[1].issuing);
  assert(!queue[0].completing && !queue[1].completing);
  assert(queue[0].helpers == 0 && queue[1].helpers == 0);
  ob_i = 0;
  do
  :: ob_i < NSUB ->
     if
     :: sub[ob_i].accepted && sub[ob_i].retired ->
        /* Q3: release_payload exactly once */
        assert(sub[ob_i].releases == 1);
        /* S2: a failure reaches the downstream signal */
        if
        :: sub[ob_i].sig_s != NONE &&
           ((sub[ob_i].nwait >= 1 && ENTRY_FAILED(sub[ob_i].w[0].s, sub[ob_i].w[0].v)) ||
            (sub[ob_i].nwait >= 2 && ENTRY_FAILED(sub[ob_i].w[1].s, sub[ob_i].w[1].v))) ->
           assert(!sub[ob_i].signaled_ok && sem[sub[ob_i].sig_s].failed)
        :: else
        fi
     :: sub[ob_i].accepted && !sub[ob_i].retired ->
        /* Q2: still there only while parked on a wait that is undecided */
        assert(sub[ob_i].parked && queue[sub[ob_i].q].live_count > 0);
        assert((sub[ob_i].nwait >= 1 && sub[ob_i].w[0].t != NONE &&
                tp[sub[ob_i].w[0].t].state == TP_PENDING &&
                !ENTRY_REACHED(sub[ob_i].w[0].s, sub[ob_i].w[0].v) &&
                !sem[sub[ob_i].w[0].s].failed) ||
               (sub[ob_i].nwait >= 2 && sub[ob_i].w[1].t != NONE &&
                tp[sub[ob_i].w[1].t].state == TP_PENDING &&
                !ENTRY_REACHED(sub[ob_i].w[1].s, sub[ob_i].w[1].v) &&
                !sem[sub[ob_i].w[1].s].failed))
     :: else
     fi;
     ob_i++
  :: else -> break
  od;
  /* T3: once every accepted submission retired and no thread waits, every
   * reference was dropped exactly once: no timepoint, waiter or submission
   * is left, and a native event only as a semaphore's device timepoint */
  if
  :: (!sub[0].accepted || sub[0].retired) && (!sub[1].accepted || sub[1].retired) &&
     !wk[0].live && !wk[1].live ->
     ob_i = 0;
     do
     :: ob_i < NTP -> assert(!tp[ob_i].live); ob_i++
     :: else -> break
     od;
     assert(!sub[0].live && !sub[1].live);
     ob_i = 0;
     do
     :: ob_i < NEV ->
        assert(!ev[ob_i].live || sem[0].dtp_ev == ob_i || sem[1].dtp_ev == ob_i ||
               sem[2].dtp_ev == ob_i || sem[3].dtp_ev == ob_i);
        ob_i++
     :: else -> break
     od
  :: else
  fi
}

inline define_sub(y, qq, s0, v0, s1, v1, nw, ss, sv) {
  sub[y].q = qq;
  sub[y].nwait = nw;
  sub[y].w[0].s = s0; sub[y].w[0].v = v0;
  sub[y].w[1].s = s1; sub[y].w[1].v = v1;
  sub[y].w[0].t = NONE; sub[y].w[1].t = NONE;
  sub[y].w[0].e = NONE; sub[y].w[1].e = NONE;
  sub[y].cev = NONE;
  sub[y].sig_s = ss;
  sub[y].sig_v = sv;
  if
  :: ss != NONE -> producer[ss] = y
  :: else
  fi
}

inline init_common() {
  ob_i = 0;
  do
  :: ob_i < NSEM ->
     sem[ob_i].dtp_ev = NONE;
     producer[ob_i] = NONE;
     ob_i++
  :: else -> break
  od;
  ob_i = 0;
  do
  :: ob_i < NEV -> ev[ob_i].dep = NONE; ob_i++
  :: else -> break
  od;
  ob_i = 0;
  do
  :: ob_i < NQ ->
     queue[ob_i].unturned_ev = NONE;
     queue[ob_i].handed_ev = NONE;
     ob_i++
  :: else -> break
  od;
  ob_i = 0
}

#define H 0

/* ------------------------------------------------------------------ */
#ifdef SCENARIO_CHAIN
#define S 1
#define D 2

proctype Submitter() {
  SYNC_LOCALS;
  WAIT_LOCALS;
  QUEUE_LOCALS;
  byte y;
  do
  :: y < 2 -> hal_sync_queue_submit(y); y++
  :: else -> break
  od
}

/* H is signaled or failed; then S may be failed by the host too
 * (K13_DeviceWaitOnSemaphoreFailedByHost). */
proctype HostSignaler() {
  SYNC_LOCALS;
  WAIT_LOCALS;
  QUEUE_LOCALS;
  byte hs, nv, st;
  if
  :: nv = 1; st = ST_OK
  :: nv = 0; st = ST_ABORTED
  fi;
  hs = H;
  do
  :: hs != NONE ->
     hal_sync_semaphore_signal_or_fail(hs, nv, st);
     if
#ifdef FULL
     :: hs == H -> hs = S; nv = 0; st = ST_ABORTED
#else
     :: hs == H -> hs = NONE /* FULL: then S may be failed too */
#endif
     :: else -> hs = NONE
     fi
  :: hs == S -> break /* S is not failed by the host */
  :: hs == NONE -> break
  od
}

proctype Observer() {
  byte ob_i;
  timeout ->
  check_queue_quiescence();
  /* everything submitted retired: nothing parks forever here */
  assert(sub[0].retired && sub[1].retired);
  /* D is decided; OK only if H and S were reached (S5, K13); failed only
   * because something upstream failed (S2) */
  assert(sem[D].failed || sem[D].hist >= 1);
  assert(sem[D].hist < 1 || (sem[H].hist >= 1 && sem[S].hist >= 1));
  assert(!sem[D].failed || sem[H].failed || sem[S].failed || gpu_failed)
}

init {
  byte ob_i;
  atomic {
    init_common();
    sem[H].live = 1;
    sem[S].live = 1; sem[S].domain = 1;
    sem[D].live = 1; sem[D].domain = 1;
    define_sub(0, 0, H, 1, H, 1, 1, S, 1);
    define_sub(1, 1, S, 1, S, 1, 1, D, 1);
    run Worker(0);
    run Completion(0);
    run Worker(1);
    run Completion(1);
    run Gpu();
    run Submitter();
    run HostSignaler();
    run Observer()
  }
}
#endif /* SCENARIO_CHAIN */

/* ------------------------------------------------------------------ */
#ifdef SCENARIO_CANCEL
#define H1 1
#define D 2

proctype Submitter() {
  SYNC_LOCALS;
  WAIT_LOCALS;
  QUEUE_LOCALS;
  hal_sync_queue_submit(0)
}

proctype HostSignaler0() {
  SYNC_LOCALS;
  WAIT_LOCALS;
  QUEUE_LOCALS;
  byte st;
  if
  :: st = ST_OK
  :: st = ST_ABORTED
  fi;
  hal_sync_semaphore_signal_or_fail(H, 1, st)
}

/* H1 may never be signaled: only a failure of H decides A then. */
proctype HostSignaler1() {
  SYNC_LOCALS;
  WAIT_LOCALS;
  QUEUE_LOCALS;
  if
  :: hal_sync_semaphore_signal_or_fail(H1, 1, ST_OK)
  :: skip
  fi
}

proctype Observer() {
  byte ob_i;
  timeout ->
  check_queue_quiescence();
  /* K10: a failure of H never waits for H1 */
  assert(!sem[H].failed || (sub[0].retired && sem[D].failed))
}

init {
  byte ob_i;
  atomic {
    init_common();
    sem[H].live = 1;
    sem[H1].live = 1;
    sem[D].live = 1; sem[D].domain = 1;
    define_sub(0, 0, H, 1, H1, 1, 2, D, 1);
    run Worker(0);
    run Completion(0);
    run Gpu();
    run Submitter();
    run HostSignaler0();
    run HostSignaler1();
    run HostWaiter(D, 1);
    run Observer()
  }
}
#endif /* SCENARIO_CANCEL */

/* ------------------------------------------------------------------ */
#ifdef SCENARIO_TEARDOWN
#define D1 1
#define D2 2

/* Submits A (parked on H) and B (no waits), then drops its device
 * reference: the shutdown runs on this thread and destroys the queue
 * while A is parked or ready and B ready, issued or complete. */
proctype User() {
  SYNC_LOCALS;
  WAIT_LOCALS;
  QUEUE_LOCALS;
  byte y;
  do
  :: y < 2 -> hal_sync_queue_submit(y); y++
  :: else -> break
  od;
  hal_device_release()
}

#ifdef REVIVE
/* An object of the device (a buffer) holds a pointer to it and retains
 * and releases it: hal_device_retain may come after the count reached
 * zero, and the release that takes it back to zero must not shut down
 * again (Q4, hal_device_release's claim). */
proctype Reviver() {
  SYNC_LOCALS;
  WAIT_LOCALS;
  QUEUE_LOCALS;
  STEP
    device_ext_ref++;
    TRACE("@%d hal_device_retain: count %d\n", _pid, device_ext_ref)
  ENDSTEP;
  hal_device_release()
}
#endif

proctype HostSignaler() {
  SYNC_LOCALS;
  WAIT_LOCALS;
  QUEUE_LOCALS;
  byte st;
  if
  :: st = ST_OK
  :: st = ST_ABORTED
  :: st = NONE /* never */
  fi;
  if
  :: st != NONE -> hal_sync_semaphore_signal_or_fail(H, 1, st)
  :: else
  fi
}

proctype Observer() {
  byte ob_i;
  timeout ->
  /* Q4: the shutdown returned, every accepted submission retired, the
   * threads were joined */
  assert(device_shut_down && queue[0].destroyed && queue[0].live_count == 0);
  check_queue_quiescence();
  assert(!sub[0].accepted || sub[0].retired);
  assert(!sub[1].accepted || sub[1].retired);
  /* their signals were decided: a value or a failure */
  assert(!sub[0].accepted || sem[D1].hist >= 1 || sem[D1].failed);
  assert(!sub[1].accepted || sem[D2].hist >= 1 || sem[D2].failed)
}

init {
  byte ob_i;
  atomic {
    init_common();
    sem[H].live = 1;
    sem[D1].live = 1; sem[D1].domain = 1;
    sem[D2].live = 1; sem[D2].domain = 1;
    define_sub(0, 0, H, 1, H, 1, 1, D1, 1);
    define_sub(1, 0, H, 1, H, 1, 0, D2, 1);
    device_ext_ref = 1;
    run Worker(0);
    run Completion(0);
    run Gpu();
    run User();
    run HostSignaler();
#ifdef FULL
    /* a host thread waiting on A's signal through the teardown */
    run HostWaiter(D1, 1);
#endif
#ifdef REVIVE
    run Reviver();
#endif
    run Observer()
  }
}
#endif /* SCENARIO_TEARDOWN */

/* ------------------------------------------------------------------ */
#ifdef SCENARIO_CALLBACK
#define T 0
#define D 1

/* The CTS case K15_DeviceReleasedFromCallbackInSameBatch: the callback at
 * 1 holds the device's last reference; then A waits for T at 2; a user
 * thread signals T straight to 2 (one batch: the callback, then A's wait,
 * in registration order), or to 1 then 2, or fails it. */
proctype Setup() {
  SYNC_LOCALS;
  WAIT_LOCALS;
  QUEUE_LOCALS;
  byte nv, st;
  /* hal_semaphore_add_callback(T, 1, release_in_batch_callback), before
   * A's wait registers: a batch notifies in registration order, so the
   * callback runs first and A's wait is the rest of its batch. */
  STEP
    TP_ACQUIRE_CALLBACK_BODY(CB_USER, 0, 1, wl_t);
    wl_st = tp[wl_t].gen;
    held[_pid]++;
    REGISTER_LOCKED_BODY(T, wl_t, wl_state[0]);
    held[_pid]--;
    assert(wl_state[0] == TP_PENDING);
    wl_t = 0; wl_st = 0; wl_state[0] = 0
  ENDSTEP;
  hal_sync_queue_submit(0);
  if
  :: nv = 2; st = ST_OK
  :: nv = 1; st = ST_OK
  :: nv = 0; st = ST_ABORTED
  fi;
  do
  :: hal_sync_semaphore_signal_or_fail(T, nv, st);
     if
     :: nv == 1 -> nv = 2
     :: else -> break
     fi
  od
}

/* libhal's release thread (hal_deferred_thread_main). */
proctype ReleaseThread() {
  SYNC_LOCALS;
  WAIT_LOCALS;
  QUEUE_LOCALS;
end_hal_deferred_thread_main_cond_wait:
  STEP deferred_shutdown; deferred_shutdown = 0 ENDSTEP;
  /* hal_device_run_deferred_shutdown */
  gpu_device_shutdown()
}

proctype Observer() {
  byte ob_i;
  timeout ->
  /* the device shut down (once), and the queue with it: first, so that a
   * shutdown that never returned is what a counterexample reports */
  assert(device_shutdown_claimed && device_shut_down && queue[0].destroyed);
  check_queue_quiescence();
  assert(sub[0].retired && (sem[D].hist >= 1 || sem[D].failed))
}

init {
  byte ob_i;
  atomic {
    init_common();
    sem[T].live = 1;
    sem[D].live = 1; sem[D].domain = 1;
    define_sub(0, 0, T, 2, T, 2, 1, D, 1);
    device_ext_ref = 1; /* held by the callback's job */
    run Worker(0);
    run Completion(0);
    run Gpu();
    run Setup();
    run ReleaseThread();
    run HostWaiter(D, 1);
    run Observer()
  }
}
#endif /* SCENARIO_CALLBACK */

/* ------------------------------------------------------------------ */
#ifdef SCENARIO_LOSS
#define S 1
#define D 2
#define N 3

/* hal_sync_loss_domain_fail: under the domain lock, take the parked work of
 * every member queue (which then refuses more) and a reference to every
 * live member semaphore; fail them all after unlocking (T2). */
inline hal_sync_loss_domain_fail() {
  STEP
    domain_failed = 1;
    TRACE("@%d hal_sync_loss_domain_fail\n", _pid);
#ifndef BUG_LOSS_SKIPS_MEMBERS
    if
    :: queue[0].in_domain -> TAKE_PARKED_BODY(0, 1)
    :: else
    fi;
    ob_i = 0;
    do
    :: ob_i < NSEM ->
       if
       :: sem[ob_i].live && sem[ob_i].domain -> ob_list = ob_list | (1 << ob_i)
       :: else
       fi;
       ob_i++
    :: else -> break
    od;
    ob_i = 0
#endif
  ENDSTEP;
#ifndef BUG_LOSS_SKIPS_MEMBERS
  hal_sync_submission_list_fail(ST_LOST);
  do
  :: ob_i < NSEM && (ob_list & (1 << ob_i)) ->
     hal_sync_semaphore_signal_or_fail(ob_i, 0, ST_LOST);
     ob_i++
  :: ob_i < NSEM && !(ob_list & (1 << ob_i)) -> ob_i++
  :: ob_i >= NSEM -> ob_i = 0; ob_list = 0; break
  od
#endif
}

proctype Submitter() {
  SYNC_LOCALS;
  WAIT_LOCALS;
  QUEUE_LOCALS;
  hal_sync_queue_submit(0)
}

/* The driver saw DEVICE_LOST. */
proctype Loss() {
  SYNC_LOCALS;
  WAIT_LOCALS;
  QUEUE_LOCALS;
  byte ob_i, ob_list;
  hal_sync_loss_domain_fail()
}

/* Creates a semaphore N of the device (before or after the loss: born
 * failed, or listed and failed by it), then waits (no deadline) on the
 * idle device semaphore S, on A's signal D, and on N: every one of these
 * waits must return DEVICE_LOST. */
proctype LossWaiter() {
  SYNC_LOCALS;
  WAIT_LOCALS;
  byte s = S, result;
  hal_sync_semaphore_create_in_domain(N);
  do
  :: hal_sync_semaphore_wait_list(MODE_ALL, 1, s, 1, s, 1, 0, result);
     assert(result == ST_LOST);
     if
     :: s == S -> s = D
     :: s == D -> s = N
     :: s == N -> break
     fi
  od
}

proctype Observer() {
  byte ob_i;
  timeout ->
  check_queue_quiescence();
  /* K14: after the loss no wait on a semaphore of the device sleeps, and
   * nothing of the device's queue stays parked */
  assert(domain_failed);
  ob_i = 0;
  do
  :: ob_i < NWAITER ->
     assert(!(wk[ob_i].live && wk[ob_i].sleeping && sem[wk[ob_i].ws[0]].domain));
     ob_i++
  :: else -> break
  od;
  assert(!sub[0].accepted || sub[0].retired);
  assert(sem[S].failed && sem[D].failed && sem[N].failed)
}

init {
  byte ob_i;
  atomic {
    init_common();
    sem[H].live = 1;
    sem[S].live = 1; sem[S].domain = 1;
    sem[D].live = 1; sem[D].domain = 1;
    define_sub(0, 0, H, 1, H, 1, 1, D, 1);
    queue[0].in_domain = 1;
    run Worker(0);
    run Completion(0);
    run Gpu();
    run Submitter();
    run Loss();
    run LossWaiter();
    run Observer()
  }
}
#endif /* SCENARIO_LOSS */

/* ------------------------------------------------------------------ */
#ifdef SCENARIO_HELPED
#define S1 1
#define S2 2

/* Helped mode: A and B on queue 0, no waits, signaling S1 and S2. A host
 * thread waits (no deadline) for S1 and may complete A itself; the
 * completion thread may then enter helped mode, and B's issue not ring.
 * B's signal is observed by a wait with a deadline (a registration), or by
 * nobody: B must complete all the same, after A (issue order). */
proctype Submitter() {
  SYNC_LOCALS;
  WAIT_LOCALS;
  QUEUE_LOCALS;
  byte y;
  do
  :: y < 2 -> hal_sync_queue_submit(y); y++
  :: else -> break
  od
}

proctype Watcher() {
  SYNC_LOCALS;
  WAIT_LOCALS;
  byte result;
  if
  :: hal_sync_semaphore_wait_list(MODE_ALL, 1, S2, 1, S2, 1, 1, result);
     assert(result != ST_OK || sem[S2].hist >= 1)
  :: skip
  fi
}

proctype Observer() {
  byte ob_i;
  timeout ->
  check_queue_quiescence();
  /* both completed, though nobody may have waited for B */
  assert(sub[0].retired && sub[1].retired);
#ifdef DEVICE_MAY_FAIL
  /* a device error fails the work's signal, whichever synchronize of its
   * event saw the error and whoever completed it, and nothing else does
   * (Q5); the rest is signaled */
  assert(((gpu_failed_seq & 1) != 0) == sem[S1].failed);
  assert(((gpu_failed_seq & 2) != 0) == sem[S2].failed);
  assert(sem[S1].failed || sem[S1].hist >= 1);
  assert(sem[S2].failed || sem[S2].hist >= 1)
#else
  assert(sem[S1].hist >= 1 && sem[S2].hist >= 1)
#endif
}

init {
  byte ob_i;
  atomic {
    init_common();
    sem[S1].live = 1; sem[S1].domain = 1;
    sem[S2].live = 1; sem[S2].domain = 1;
    define_sub(0, 0, NONE, 0, NONE, 0, 0, S1, 1);
    define_sub(1, 0, NONE, 0, NONE, 0, 0, S2, 1);
    run Worker(0);
    run Completion(0);
    run Gpu();
    run Submitter();
    run HostWaiter(S1, 1);
    run Watcher();
    run Observer()
  }
}
#endif /* SCENARIO_HELPED */

/* ------------------------------------------------------------------ */
#ifdef SCENARIO_BUSY
#define S1 1
#define S2 2
#define S3 3

/* Busy mode: A, B and C on queue 0, no waits, signaling S1, S2 and S3.
 * The completion thread completes A with B in flight and may enter busy
 * mode: C's issue then does not ring. With FULL, a host thread waits (no
 * deadline) for S2 and may complete B itself, holding the completion turn
 * while the completion thread sleeps. C's signal is observed by a wait with a
 * deadline (a registration), or by nobody: all three must complete all the
 * same, in issue order. */
proctype Submitter() {
  SYNC_LOCALS;
  WAIT_LOCALS;
  QUEUE_LOCALS;
  byte y;
  do
  :: y < 3 -> hal_sync_queue_submit(y); y++
  :: else -> break
  od
}

proctype Watcher() {
  SYNC_LOCALS;
  WAIT_LOCALS;
  byte result;
  if
  :: hal_sync_semaphore_wait_list(MODE_ALL, 1, S3, 1, S3, 1, 1, result);
     assert(result != ST_OK || sem[S3].hist >= 1)
  :: skip
  fi
}

proctype Observer() {
  byte ob_i;
  timeout ->
  check_queue_quiescence();
  /* all three completed, though nobody may have waited for them */
  assert(sub[0].retired && sub[1].retired && sub[2].retired);
  assert(sem[S1].hist >= 1 && sem[S2].hist >= 1 && sem[S3].hist >= 1)
}

init {
  byte ob_i;
  atomic {
    init_common();
    sem[S1].live = 1; sem[S1].domain = 1;
    sem[S2].live = 1; sem[S2].domain = 1;
    sem[S3].live = 1; sem[S3].domain = 1;
    define_sub(0, 0, NONE, 0, NONE, 0, 0, S1, 1);
    define_sub(1, 0, NONE, 0, NONE, 0, 0, S2, 1);
    define_sub(2, 0, NONE, 0, NONE, 0, 0, S3, 1);
    run Worker(0);
    run Completion(0);
    run Gpu();
    run Submitter();
#ifdef FULL
    run HostWaiter(S2, 1);
#endif
    run Watcher();
    run Observer()
  }
}
#endif /* SCENARIO_BUSY */

/* ------------------------------------------------------------------ */
#ifdef SCENARIO_ORDER
#define D1 1
#define D2 2

/* Queue order: A then B on queue 0, A waiting for host semaphore H at 1,
 * B at 1 or 2. One thread signals H to 1, another to 2, racing each other
 * and B's submit: B's wait may park with A's, register while the signal
 * that releases A is still notifying (it must park behind A, not find H
 * reached), or come after; the signal to 2 may run during A's release (it
 * must not release B first, whether B registered late or parked before
 * at 2). B must issue after A. */
proctype Submitter() {
  SYNC_LOCALS;
  WAIT_LOCALS;
  QUEUE_LOCALS;
  byte y;
  do
  :: y < 2 -> hal_sync_queue_submit(y); y++
  :: else -> break
  od
}

proctype Signaler(byte v) {
  SYNC_LOCALS;
  WAIT_LOCALS;
  QUEUE_LOCALS;
  hal_sync_semaphore_signal_or_fail(H, v, ST_OK)
}

proctype Observer() {
  byte ob_i;
  timeout ->
  check_queue_quiescence();
  assert(sub[0].retired && sub[1].retired);
  /* the point: issue order is submission order */
  assert(sub[0].seq != 0 && sub[1].seq != 0 && sub[0].seq < sub[1].seq);
  assert(sem[H].rel == 0)
}

init {
  byte ob_i;
  atomic {
    init_common();
    sem[H].live = 1;
    sem[D1].live = 1; sem[D1].domain = 1;
    sem[D2].live = 1; sem[D2].domain = 1;
    define_sub(0, 0, H, 1, NONE, 0, 1, D1, 1);
    /* B waits for 1, or for 2, which the second signal alone releases */
    if
    :: define_sub(1, 0, H, 1, NONE, 0, 1, D2, 1)
    :: define_sub(1, 0, H, 2, NONE, 0, 1, D2, 1)
    fi;
    run Worker(0);
    run Completion(0);
    run Gpu();
    run Submitter();
    run Signaler(1);
    run Signaler(2);
    run Observer()
  }
}
#endif /* SCENARIO_ORDER */
