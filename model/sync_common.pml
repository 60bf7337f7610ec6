/*
 * The core of hal/sync/ in Promela: semaphores, pooled timepoints and
 * waiters with reference counts and generations, the wake object, and the
 * host wait (wait.c). Included by semaphore.pml and queue.pml, which add
 * their processes, their callbacks (run_callback; queue.pml also
 * run_callback_nested) and their bounds:
 *
 *   MAXV  largest payload value a scenario signals (values 1..MAXV)
 *   NSEM  semaphores, NTP timepoint blocks, NWAITER waiter blocks,
 *   NEV   native event blocks, MAXPROC processes (init included)
 *
 * Modelling rules (docs/sync-model.md argues each one):
 *  - A critical section under one sync mutex is one transition (STEP).
 *    The thread-private work next to it is folded into the same
 *    transition: acquiring a private block and taking references before
 *    it (right movers), dropping references and recomputing locals after
 *    it (left movers). That is Lipton's reduction: it removes only
 *    interleavings that no other thread can tell apart.
 *  - An atomic read-modify-write (reference counts, the wake word, the
 *    submission's counters and flags) is one transition, and so is a plain
 *    atomic load.
 *  - held[] counts the sync locks a process holds; a callback asserts it
 *    is zero (T2).
 *  - Every kept pointer to a pooled object is a (slot, generation) pair and
 *    every use asserts the slot is live with that generation (T3,
 *    hal_sync_timepoint_check / hal_sync_pool_block_check). Pools hand out
 *    the lowest free slot, so a recycled block is reused as soon as it can
 *    be: a stale use is then a use of someone else's object.
 *  - Deadlines are a nondeterministic choice at the one place a thread
 *    sleeps on its wake object; an infinite timeout has no such choice.
 */

#define NONE 255

/* One indivisible transition: a d_step (no intermediate states) wrapped in
 * an atomic so that it may start at a merge point after if/do, where Spin
 * refuses a bare d_step. A guard may open it. */
#define STEP atomic { d_step {
#define ENDSTEP } }

/* Counterexample narration: printed when Spin replays a trail (spin -t),
 * never part of the state. Status codes are the ST_* numbers below. */
#define TRACE printf

/* HAL_SEMAPHORE_FAILURE_VALUE: above every payload value. */
#define FAILV (MAXV + 1)

/* hal_sync_timepoint_state_t */
#define TP_PENDING 0
#define TP_REACHED 1
#define TP_FAILED 2
#define TP_CANCELLED 3

/* hal_sync_timepoint_kind_t */
#define KIND_WAITER 0
#define KIND_CALLBACK 1

/* hal_wait_mode_t */
#define MODE_ALL 0
#define MODE_ANY 1

/* Status codes the model tells apart (hal_status_t, by code). */
#define ST_OK 0
#define ST_ABORTED 1     /* a host hal_semaphore_fail */
#define ST_CANCELLED 2   /* cancel, semaphore destroyed, queue destroyed */
#define ST_DEADLINE 3    /* DEADLINE_EXCEEDED */
#define ST_DEVICE 4      /* a vendor error (synchronize_event, issue) */
#define ST_LOST 5        /* DEVICE_LOST (loss domain) */

#ifndef NEV
#define NEV 1
#endif

/*===------------------------------------------------------------------===*
 * Per-thread state
 *===------------------------------------------------------------------===*/

/* Sync mutexes held by each process (T2: zero wherever a callback runs). */
byte held[MAXPROC];
/* hal_resource_defer_destruction_enter depth (queue threads: 1). */
byte defer_depth[MAXPROC];
/* hal_resource_defer_shutdown_enter depth (timepoint callback bracket). */
byte defer_shutdown_depth[MAXPROC];

/*===------------------------------------------------------------------===*
 * Objects
 *===------------------------------------------------------------------===*/

/* hal_sync_semaphore_t */
typedef sem_t {
  byte value;     /* FAILV once failed */
  bool failed;    /* failure != HAL_OK; set once (S2) */
  byte rel;       /* releasing_count: signals notifying a batch that
                   * releases parked queue submissions */
  byte fst;       /* the first failure's code */
  byte hist;      /* ghost: largest value reached before any failure */
  /* device_timepoints: at most one per semaphore in every scenario */
  byte dtp_ev;    /* native event slot, or NONE */
  byte dtp_val;
  byte dtp_gen;
  bool domain;    /* member of the device's loss domain */
  bool live;      /* T3 for the semaphore itself */
  byte ref;       /* hal_resource reference count */
};
sem_t sem[NSEM];

/* hal_timepoint_t (pool.c block + timepoint.h fields) */
typedef tp_t {
  bool live;      /* hal_sync_pool_block_t.is_live */
  byte gen;       /* hal_sync_pool_block_t.generation */
  byte ref;       /* ref_count */
  bit kind;
  byte value;
  byte sem;       /* set at registration (not retained), NONE before */
  byte state;
  bool in_heap;   /* heap_index != HAL_SYNC_HEAP_INDEX_NONE */
  byte reg;       /* heap_order: above every pending one of its semaphore
                   * at registration (kept when popped) */
  bool late;      /* is_late: a queue's wait registered reached while a
                   * signal released parked submissions (in_heap stands
                   * for the late list too) */
  byte waiter;    /* KIND_WAITER: retained waiter slot, and its generation */
  byte wgen;
  byte cb;        /* KIND_CALLBACK: which callback (model enum) and its argument */
  byte arg;
  byte handles;   /* handle_count */
  byte pinned;    /* pinned_semaphore, or NONE */
  byte calls;     /* ghost: times the callback ran (T1) */
};
tp_t tp[NTP];

/* hal_sync_waiter_t with its hal_sync_wake_t word. */
typedef waiter_t {
  bool live;
  byte gen;
  byte ref;
  byte posts;     /* HAL_SYNC_WAKE_COUNT_MASK part of the word */
  bool wfailed;   /* HAL_SYNC_WAKE_FAILED_BIT */
  /* ghost: what the thread sleeping on it waits for (lost wake-up check) */
  bool sleeping;
  bool infinite;
  bit wmode;
  byte wn;
  byte ws[2];
  byte wv[2];
};
waiter_t wk[NWAITER];

/* hal_sync_native_event_t (event_pool.c); queue.pml adds the device side. */
typedef ev_t {
  bool live;
  byte gen;
  byte ref;
  byte records;   /* record_count */
  bool done;      /* ghost device state: its last record completed */
  bool err;       /* ... with a device error */
  byte q;         /* stream (queue) it was recorded on */
  byte seq;       /* position in that stream */
  byte dep;       /* event the recorded work waits for on the device, or NONE */
};
ev_t ev[NEV];

#define T3_CHECK_TP(t, g) assert(tp[t].live && tp[t].gen == (g))
#define T3_CHECK_WAITER(w, g) assert(wk[w].live && wk[w].gen == (g))
#define T3_CHECK_EVENT(e, g) assert(ev[e].live && ev[e].gen == (g))
#define T3_CHECK_SEM(s) assert(sem[s].live)

/*===------------------------------------------------------------------===*
 * Locals: declared once per proctype (inline bodies share them). Nesting
 * levels that may be active at the same time use different names.
 *===------------------------------------------------------------------===*/

#define SYNC_LOCALS \
  byte pd_i, pd_v, pd_f, rg_i; bool pd_r, pd_l; \
  byte bt[NTP]; byte bg[NTP]; byte bn, bi; \
  byte nr_cb0, nr_arg0, nr_v0, nr_st0; \
  byte nr_cb1, nr_arg1, nr_v1, nr_st1; \
  byte cn_state; bool cn_removed

#define WAIT_LOCALS \
  byte wl_w, wl_wg, wl_t, wl_st, wl_reg, wl_needed, wl_count, wl_fast, wl_rq; \
  byte wl_i, wl_sv, wl_vv; \
  bool wl_r, wl_decided; \
  byte wl_tp[2]; byte wl_gen[2]; byte wl_state[2]; \
  byte wl_reached, wl_first_failed

/*===------------------------------------------------------------------===*
 * Pools (pool.c, timepoint.c): lowest free slot; generation bumped at
 * recycle. The *_BODY macros are plain statements, composed into STEPs.
 *===------------------------------------------------------------------===*/

/* hal_sync_timepoint_acquire: one reference, not registered anywhere. */
#define TP_ACQUIRE_BODY(v, out)                   \
  out = 0;                                        \
  do                                              \
  :: out < NTP && tp[out].live -> out++           \
  :: else -> break                                \
  od;                                             \
  assert(out < NTP); /* the scenario's pool bound */ \
  tp[out].live = 1;                               \
  tp[out].ref = 1;                                \
  tp[out].value = v;                              \
  tp[out].sem = NONE;                             \
  tp[out].state = TP_PENDING;                     \
  tp[out].in_heap = 0;                            \
  tp[out].reg = 0;                                \
  tp[out].late = 0;                               \
  tp[out].waiter = NONE;                          \
  tp[out].wgen = 0;                               \
  tp[out].cb = 0;                                 \
  tp[out].arg = 0;                                \
  tp[out].handles = 0;                            \
  tp[out].pinned = NONE;                          \
  tp[out].calls = 0

/* hal_sync_timepoint_acquire_waiter: retains the waiter. */
#define TP_ACQUIRE_WAITER_BODY(w, wg, v, out)     \
  TP_ACQUIRE_BODY(v, out);                        \
  tp[out].kind = KIND_WAITER;                     \
  T3_CHECK_WAITER(w, wg);                         \
  assert(wk[w].ref > 0);                          \
  wk[w].ref++;                                    \
  tp[out].waiter = w;                             \
  tp[out].wgen = wg

/* hal_sync_timepoint_acquire_callback */
#define TP_ACQUIRE_CALLBACK_BODY(which, a, v, out) \
  TP_ACQUIRE_BODY(v, out);                         \
  tp[out].kind = KIND_CALLBACK;                    \
  tp[out].cb = which;                              \
  tp[out].arg = a

/* hal_sync_timepoint_retain through a kept pointer (T3). */
#define TP_RETAIN_BODY(t, g)                      \
  T3_CHECK_TP(t, g);                              \
  assert(tp[t].ref > 0);                          \
  tp[t].ref++

/* hal_sync_waiter_release: recycled at zero. */
#define WAITER_RELEASE_BODY(w, g)                 \
  T3_CHECK_WAITER(w, g);                          \
  assert(wk[w].ref > 0);                          \
  wk[w].ref--;                                    \
  if                                              \
  :: wk[w].ref == 0 ->                            \
     wk[w].live = 0;                              \
     wk[w].gen++;                                 \
     wk[w].posts = 0;                             \
     wk[w].wfailed = 0;                           \
     wk[w].sleeping = 0;                          \
     wk[w].infinite = 0;                          \
     wk[w].wmode = 0;                             \
     wk[w].wn = 0;                                \
     wk[w].ws[0] = 0; wk[w].ws[1] = 0;            \
     wk[w].wv[0] = 0; wk[w].wv[1] = 0             \
  :: else                                         \
  fi

/* hal_sync_timepoint_release: recycled at zero, then its waiter reference
 * goes (folded into the same transition: a left mover). */
#define TP_RELEASE_BODY(t, g)                     \
  T3_CHECK_TP(t, g);                              \
  assert(tp[t].ref > 0);                          \
  tp[t].ref--;                                    \
  if                                              \
  :: tp[t].ref == 0 ->                            \
     /* only a resolved or never-registered timepoint reaches zero */ \
     assert(!tp[t].in_heap);                      \
     if                                           \
     :: tp[t].waiter != NONE ->                   \
        WAITER_RELEASE_BODY(tp[t].waiter, tp[t].wgen) \
     :: else                                      \
     fi;                                          \
     tp[t].live = 0;                              \
     tp[t].gen++;                                 \
     tp[t].waiter = NONE;                         \
     tp[t].wgen = 0;                              \
     tp[t].sem = NONE;                            \
     tp[t].state = 0;                             \
     tp[t].value = 0;                             \
     tp[t].cb = 0;                                \
     tp[t].arg = 0;                               \
     tp[t].calls = 0                              \
  :: else                                         \
  fi

/* Both references of a timepoint that was never registered (private to
 * this thread, so its two releases are one transition; the second one
 * recycles it). */
#define TP_DROP_UNREGISTERED_BODY(t, g)           \
  T3_CHECK_TP(t, g);                              \
  assert(tp[t].ref == 2 && !tp[t].in_heap);       \
  tp[t].ref = 1;                                  \
  TP_RELEASE_BODY(t, g)

inline hal_sync_timepoint_release(t, g) {
  STEP TP_RELEASE_BODY(t, g) ENDSTEP
}

inline hal_sync_timepoint_retain(t, g) {
  STEP TP_RETAIN_BODY(t, g) ENDSTEP
}

/* hal_sync_waiter_acquire */
#define WAITER_ACQUIRE_BODY(out, outg)            \
  out = 0;                                        \
  do                                              \
  :: out < NWAITER && wk[out].live -> out++       \
  :: else -> break                                \
  od;                                             \
  assert(out < NWAITER);                          \
  wk[out].live = 1;                               \
  wk[out].ref = 1;                                \
  wk[out].posts = 0; /* hal_sync_wake_reset */    \
  wk[out].wfailed = 0;                            \
  outg = wk[out].gen

/* hal_sync_native_event_release: always back to the pool. */
#define EVENT_RELEASE_BODY(e, g)                  \
  T3_CHECK_EVENT(e, g);                           \
  assert(ev[e].ref > 0);                          \
  ev[e].ref--;                                    \
  if                                              \
  :: ev[e].ref == 0 ->                            \
     ev[e].live = 0;                              \
     ev[e].gen++;                                 \
     ev[e].records = 0;                           \
     ev[e].done = 0;                              \
     ev[e].err = 0;                               \
     ev[e].q = 0;                                 \
     ev[e].seq = 0;                               \
     ev[e].dep = NONE                             \
  :: else                                         \
  fi

/* hal_sync_wake_post: one CAS on the word (+ FUTEX_WAKE / broadcast). */
#define WAKE_POST_BODY(w, g, f)                   \
  T3_CHECK_WAITER(w, g);                          \
  wk[w].posts++;                                  \
  if                                              \
  :: f -> wk[w].wfailed = 1                       \
  :: else                                         \
  fi

/*===------------------------------------------------------------------===*
 * Semaphore (semaphore.c)
 *===------------------------------------------------------------------===*/

/* Bug 16 (queue order): a queue's wait registered while a signal was
 * handing that queue's parked submissions over found the value reached. */
#ifndef BUG_NO_LATE_PARK
#define LATE_PARK 1
#else
#define LATE_PARK 0
#endif

/* Whether timepoint t is a parked queue submission's wait (a scenario with
 * queues defines it before including this file). */
#ifndef TP_IS_QUEUE_WAIT
#define TP_IS_QUEUE_WAIT(t) 0
#endif

/* pd_r = whether the private batch holds a queue submission's wait. */
#define BATCH_RELEASES_BODY                                           \
  pd_r = 0;                                                           \
  rg_i = 0;                                                           \
  do                                                                  \
  :: rg_i < bn ->                                                     \
     if                                                               \
     :: TP_IS_QUEUE_WAIT(bt[rg_i]) -> pd_r = 1                        \
     :: else                                                          \
     fi;                                                              \
     rg_i++                                                           \
  :: else -> break                                                    \
  od;                                                                 \
  rg_i = 0

/* hal_sync_semaphore_defer_submissions_locked: a signal that pops queue
 * submissions' waits while another signal is still handing such waits
 * over puts them back, late (pending, popped only after that batch); the
 * rest of the batch stays. */
#define DEFER_BODY                                                    \
  rg_i = 0;                                                           \
  pd_i = 0;                                                           \
  do                                                                  \
  :: rg_i < bn ->                                                     \
     if                                                               \
     :: TP_IS_QUEUE_WAIT(bt[rg_i]) ->                                 \
        tp[bt[rg_i]].in_heap = 1;                                     \
        tp[bt[rg_i]].late = 1;                                        \
        tp[bt[rg_i]].state = TP_PENDING                               \
     :: else ->                                                       \
        bt[pd_i] = bt[rg_i];                                          \
        bg[pd_i] = bg[rg_i];                                          \
        pd_i++                                                        \
     fi;                                                              \
     rg_i++                                                           \
  :: else -> break                                                    \
  od;                                                                 \
  rg_i = pd_i;                                                        \
  do                                                                  \
  :: rg_i < bn -> bt[rg_i] = 0; bg[rg_i] = 0; rg_i++                  \
  :: else -> break                                                    \
  od;                                                                 \
  bn = pd_i;                                                          \
  rg_i = 0;                                                           \
  pd_i = 0;                                                           \
  pd_r = 0
/* Bug 17 (queue order): a signal during another's release notified the
 * submissions it popped at once, ahead of that batch's. */
#ifndef BUG_SIGNAL_DURING_RELEASE_NOTIFIES
#define DEFER_ON 1
#else
#define DEFER_ON 0
#endif

/* hal_sync_semaphore_pop_due_locked, inside the caller's critical section:
 * pops what is due (every timepoint, late ones included, when |f| is 1;
 * f 0 leaves late registrations) in registration order (the min-heap pops
 * by value; the C code sorts the popped list by heap_order); the heap's
 * reference of each passes to the private batch bt/bg; the reached device
 * timepoint is dropped (its event release takes the pool's leaf lock).
 * f 2 is hal_sync_semaphore_pop_late_locked after the last releasing
 * batch: only the late registrations, reached. */
#define POP_DUE_BODY(s, v, f)                                         \
  do                                                                  \
  :: pd_v = NONE;                                                     \
     pd_i = 0;                                                        \
     do                                                               \
     :: pd_i < NTP ->                                                 \
        if                                                            \
        :: tp[pd_i].live && tp[pd_i].in_heap && tp[pd_i].sem == s &&  \
           (f == 1 ||                                                 \
            (f == 0 && !tp[pd_i].late &&                              \
             tp[pd_i].value <= v) ||                                  \
            (f == 2 && tp[pd_i].late)) &&                             \
           (pd_v == NONE || tp[pd_i].reg < tp[pd_v].reg) ->           \
           pd_v = pd_i                                                \
        :: else                                                       \
        fi;                                                           \
        pd_i++                                                        \
     :: else -> break                                                 \
     od;                                                              \
     if                                                               \
     :: pd_v == NONE -> break                                         \
     :: else ->                                                       \
        tp[pd_v].in_heap = 0;                                         \
        /* reg kept: a signal may defer it back (DEFER_BODY) */       \
        tp[pd_v].late = 0;                                            \
        /* the state changes under the lock: a cancel sees PENDING    \
         * or a final state (T5) */                                   \
        tp[pd_v].state = (f == 1 -> TP_FAILED : TP_REACHED);          \
        bt[bn] = pd_v;                                                \
        bg[bn] = tp[pd_v].gen;                                        \
        bn++                                                          \
     fi                                                               \
  od;                                                                 \
  pd_v = 0;                                                           \
  pd_i = 0;                                                           \
  if                                                                  \
  :: sem[s].dtp_ev != NONE && (f == 1 || (f == 0 && sem[s].dtp_val <= v)) -> \
     EVENT_RELEASE_BODY(sem[s].dtp_ev, sem[s].dtp_gen);               \
     sem[s].dtp_ev = NONE;                                            \
     sem[s].dtp_val = 0;                                              \
     sem[s].dtp_gen = 0                                               \
  :: else                                                             \
  fi

/* hal_sync_timepoint_notify_and_release for a CALLBACK timepoint, with
 * the dispatcher RUN (run_callback at the top level, run_callback_nested
 * inside a cancel that a callback started) and the level L of its locals
 * (0, 1). Runs with no lock held (T2), exactly once (T1), inside the
 * defer-shutdown bracket (K15). GUARD opens the first transition. */
#ifndef BUG_INLINE_SHUTDOWN_IN_CALLBACK
#define DEFER_SHUTDOWN_ENTER defer_shutdown_depth[_pid]++
#define DEFER_SHUTDOWN_EXIT defer_shutdown_depth[_pid]--
#else
/* Bug 2 (K15): callbacks ran outside a defer-shutdown bracket. */
#define DEFER_SHUTDOWN_ENTER skip
#define DEFER_SHUTDOWN_EXIT skip
#endif

#define NOTIFY_CALLBACK(GUARD, t, g, st, RUN, L)                \
  STEP                                                          \
    GUARD;                                                      \
    T3_CHECK_TP(t, g);                                          \
    assert(tp[t].kind == KIND_CALLBACK);                        \
    assert(held[_pid] == 0); /* T2 */                           \
    tp[t].calls++;                                              \
    assert(tp[t].calls == 1); /* T1 */                          \
    nr_cb##L = tp[t].cb;                                        \
    nr_arg##L = tp[t].arg;                                      \
    nr_v##L = tp[t].value;                                      \
    nr_st##L = (st);                                            \
    TRACE("@%d   callback of timepoint %d (status %d), no lock held\n", \
          _pid, t, nr_st##L);                                   \
    DEFER_SHUTDOWN_ENTER                                        \
  ENDSTEP;                                                      \
  RUN(nr_cb##L, nr_arg##L, nr_v##L, nr_st##L);                  \
  STEP                                                          \
    DEFER_SHUTDOWN_EXIT;                                        \
    nr_cb##L = 0; nr_arg##L = 0; nr_v##L = 0; nr_st##L = 0;     \
    TP_RELEASE_BODY(t, g)                                       \
  ENDSTEP

/* hal_sync_resolved_batch_notify: after the unlock, in pop order; bt/bg
 * are private to this thread. A WAITER timepoint's post and the release of
 * the heap's reference are one transition. */
inline hal_sync_resolved_batch_notify(st) {
  do
  :: STEP
       bi < bn && tp[bt[bi]].kind == KIND_WAITER;
       T3_CHECK_TP(bt[bi], bg[bi]);
       TRACE("@%d   after unlock: post waiter %d (failed %d)\n", _pid,
             tp[bt[bi]].waiter, (st) != ST_OK);
       WAKE_POST_BODY(tp[bt[bi]].waiter, tp[bt[bi]].wgen, (st) != ST_OK);
       TP_RELEASE_BODY(bt[bi], bg[bi]);
       bt[bi] = 0; bg[bi] = 0;
       bi++
     ENDSTEP
  :: NOTIFY_CALLBACK(bi < bn && tp[bt[bi]].kind == KIND_CALLBACK,
                     bt[bi], bg[bi], st, run_callback, 0);
     STEP bt[bi] = 0; bg[bi] = 0; bi++ ENDSTEP
  :: STEP bi >= bn; bi = 0; bn = 0 ENDSTEP;
     break
  od
}

/* hal_sync_semaphore_register_locked: REACHED, FAILED, or PENDING with the
 * heap holding one of the caller's references (T3). */
#define REGISTER_LOCKED_BODY(s, t, out_state)                      \
  T3_CHECK_SEM(s);                                                 \
  if                                                               \
  :: sem[s].failed -> out_state = TP_FAILED                        \
  :: !sem[s].failed && sem[s].value >= tp[t].value &&              \
     !(LATE_PARK && TP_IS_QUEUE_WAIT(t) && sem[s].rel > 0) ->       \
     out_state = TP_REACHED                                        \
  :: else ->                                                       \
     /* pending; or a queue's wait reached while a signal is still   \
      * handing that queue's submissions over: it pops it after them */ \
     tp[t].in_heap = 1;                                            \
     tp[t].late = (sem[s].value >= tp[t].value);                   \
     tp[t].reg = 1;                                                \
     rg_i = 0;                                                     \
     do                                                            \
     :: rg_i < NTP ->                                              \
        if                                                         \
        :: rg_i != t && tp[rg_i].live && tp[rg_i].in_heap &&       \
           tp[rg_i].sem == s && tp[rg_i].reg >= tp[t].reg ->       \
           tp[t].reg = tp[rg_i].reg + 1                            \
        :: else                                                    \
        fi;                                                        \
        rg_i++                                                     \
     :: else -> break                                              \
     od;                                                           \
     rg_i = 0;                                                     \
     tp[t].sem = s;                                                \
     tp[t].state = TP_PENDING;                                     \
     out_state = TP_PENDING                                        \
  fi

/* hal_sync_semaphore_set_value (st == ST_OK: a host signal or a device
 * advance to nv; a non-increase or a failed semaphore changes nothing) and
 * hal_sync_semaphore_fail (st != ST_OK: the first failure wins, S2), as one
 * inline so that each thread expands the notification code once: the
 * critical section pops what is due into the private batch, which is
 * notified after the unlock (T2). The value is published before any
 * waiter is notified (S5, K5). */
inline hal_sync_semaphore_signal_or_fail(s, nv, st) {
  STEP
    held[_pid]++;
    T3_CHECK_SEM(s);
    if
    :: st == ST_OK && !sem[s].failed && nv > sem[s].value ->
       sem[s].value = nv;
       if
       :: sem[s].hist < nv -> sem[s].hist = nv
       :: else
       fi;
       pd_f = 1
    :: st != ST_OK && !sem[s].failed ->
       sem[s].failed = 1;
       sem[s].fst = st;
       sem[s].value = FAILV;
       pd_f = 2
    :: else -> pd_f = 0
    fi;
    if
    :: pd_f != 0 -> POP_DUE_BODY(s, nv, pd_f == 2)
    :: else
    fi;
    pd_r = 0;
    if
    :: pd_f == 1 ->
       /* queue order: late registrations of queues park behind this
        * batch; the semaphore is retained for the look after it */
       BATCH_RELEASES_BODY;
       if
       :: pd_r && sem[s].rel > 0 && DEFER_ON -> DEFER_BODY
       :: pd_r && (sem[s].rel == 0 || !DEFER_ON) -> sem[s].rel++; sem[s].ref++
       :: else
       fi
    :: else
    fi;
    pd_f = 0;
    held[_pid]--;
    TRACE("@%d signal/fail semaphore %d (value %d, status %d) under its lock: %d timepoints due\n",
          _pid, s, nv, st, bn)
  ENDSTEP;
  /* hal_sync_semaphore_release_late, folded in (one expansion of the
   * notification): the last signal to finish a releasing batch pops the
   * queue registrations that parked behind it (the late list; a later
   * signal's pop leaves them) and notifies them, which may park more
   * behind them; then it drops its
   * reference (no semaphore is destroyed by it in any scenario). pd_r is
   * set only for a signal (st OK). */
  pd_l = pd_r;
  do
  :: hal_sync_resolved_batch_notify(st);
     if
     :: pd_r ->
        STEP
          held[_pid]++;
          T3_CHECK_SEM(s);
          assert(sem[s].rel > 0);
          sem[s].rel--;
          if
          :: sem[s].rel == 0 -> POP_DUE_BODY(s, 0, 2)
          :: else
          fi;
          BATCH_RELEASES_BODY;
          if
          :: pd_r -> sem[s].rel++
          :: else
          fi;
          held[_pid]--;
          TRACE("@%d semaphore %d: after a releasing batch, %d late registrations due\n",
                _pid, s, bn)
        ENDSTEP
     :: else -> break
     fi
  od;
  if
  :: pd_l ->
     STEP
       assert(sem[s].ref > 0);
       sem[s].ref--;
       pd_l = 0
     ENDSTEP
  :: else
  fi
}

/* hal_sync_timepoint_cancel for a CALLBACK timepoint (T5): removes it if
 * still pending; the state read under the lock is the final one. The
 * removing call owns the heap's reference and runs the callback
 * (CANCELLED) through RUN at level L. REMOVED (the caller's variable,
 * which the caller resets) says whether this call removed it. The caller
 * keeps its own reference. timepoint->semaphore is read without the lock:
 * it was set at registration, before the caller kept the pointer. */
#define CALLBACK_CANCEL(t, g, out_state, REMOVED, RUN, L)           \
  STEP                                                              \
    T3_CHECK_TP(t, g);                                              \
    if                                                              \
    :: tp[t].sem == NONE ->                                         \
       /* never registered */                                       \
       out_state = tp[t].state;                                     \
       REMOVED = 0                                                  \
    :: else ->                                                      \
       held[_pid]++;                                                \
       T3_CHECK_SEM(tp[t].sem);                                     \
       out_state = tp[t].state;                                     \
       if                                                           \
       :: out_state == TP_PENDING ->                                \
          tp[t].in_heap = 0;                                        \
          tp[t].reg = 0;                                            \
          tp[t].late = 0;                                           \
          tp[t].state = TP_CANCELLED;                               \
          out_state = TP_CANCELLED;                                 \
          REMOVED = 1                                               \
       :: else -> REMOVED = 0                                       \
       fi;                                                          \
       held[_pid]--                                                 \
    fi;                                                             \
    TRACE("@%d hal_sync_timepoint_cancel(timepoint %d): state %d, removed %d\n", \
          _pid, t, out_state, REMOVED)                              \
  ENDSTEP;                                                          \
  if                                                                \
  :: NOTIFY_CALLBACK(REMOVED, t, g, ST_CANCELLED, RUN, L)           \
  :: !REMOVED                                                       \
  fi

/*===------------------------------------------------------------------===*
 * Host waits (wait.c: hal_sync_semaphore_wait_list)
 *===------------------------------------------------------------------===*/

#define REACHED_NOW(s, v) (sem[s].value >= (v) && sem[s].value < FAILV)

#define FAST_OK 1
#define FAST_NEXT 2
#define FAST_SLOW 3

/* What registration found for entry i decides the wait early: a failed
 * entry decides both modes, a reached one ANY (S2, S3). */
#ifndef BUG_ANY_FAILED_ENTRY
#define DECIDES(i) (wl_state[i] == TP_FAILED || mode == MODE_ANY)
#else
/* Bug 1: a failed entry decided only ALL; ANY slept until its deadline. */
#define DECIDES(i) ((mode == MODE_ANY && wl_state[i] == TP_REACHED) || \
                    (mode == MODE_ALL && wl_state[i] == TP_FAILED))
#endif

/* After registering entry wl_i (timepoint wl_t at generation wl_st): keep
 * it if pending, else drop both references (never registered: private). */
#define AFTER_REGISTER                                     \
  TRACE("@%d wait: entry %d after registration: state %d\n", \
        _pid, wl_i, wl_state[wl_i]);                       \
  if                                                       \
  :: wl_state[wl_i] == TP_PENDING ->                       \
     wl_tp[wl_i] = wl_t;                                   \
     wl_gen[wl_i] = wl_st;                                 \
     wl_reg++                                              \
  :: else ->                                               \
     TP_DROP_UNREGISTERED_BODY(wl_t, wl_st);               \
     if                                                    \
     :: DECIDES(wl_i) -> wl_decided = 1                    \
     :: else                                               \
     fi                                                    \
  fi;                                                      \
  wl_i++;                                                  \
  wl_t = 0;                                                \
  wl_st = 0

/* Step 2 for entry wl_i over (wl_sv, wl_vv): acquire a WAITER timepoint,
 * take our own reference BEFORE registering (K9: once in the heap, a
 * signal may pop, notify and drop the heap's reference at any moment),
 * register under the lock that checks the value (T3, K6, K8). */
/* queue.pml: a wait's registration covered by issued work of a helped
 * queue counts itself in as a helper of that queue (wl_rq) under the
 * semaphore's lock, and asks for its completion after the unlock
 * (hal_sync_queue_request_completion). Nothing here otherwise. */
#ifndef REGISTER_REQUEST_HOOK
#define REGISTER_REQUEST_HOOK(s, t, st) skip
#define REQUEST_COMPLETION_STEP skip
#endif

#ifndef BUG_REGISTER_OUTSIDE_LOCK
#define REGISTER_CRITICAL                                  \
  held[_pid]++;                                            \
  REGISTER_LOCKED_BODY(wl_sv, wl_t, wl_state[wl_i]);       \
  REGISTER_REQUEST_HOOK(wl_sv, wl_t, wl_state[wl_i]);      \
  held[_pid]--
#define REGISTER_PUSH_LATE skip
#else
/* Bug 5 (K6): the value was checked under one lock and the timepoint pushed
 * under a later one; a signal in between pops nothing. */
#define REGISTER_CRITICAL                                  \
  held[_pid]++;                                            \
  T3_CHECK_SEM(wl_sv);                                     \
  if                                                       \
  :: sem[wl_sv].failed -> wl_state[wl_i] = TP_FAILED       \
  :: !sem[wl_sv].failed && sem[wl_sv].value >= tp[wl_t].value -> \
     wl_state[wl_i] = TP_REACHED                           \
  :: else -> wl_state[wl_i] = TP_PENDING                   \
  fi;                                                      \
  held[_pid]--;                                            \
  TRACE("@%d wait: entry %d checked under the lock: state %d; lock dropped\n", \
        _pid, wl_i, wl_state[wl_i])
#define REGISTER_PUSH_LATE                                 \
  STEP                                                     \
    if                                                     \
    :: wl_state[wl_i] == TP_PENDING ->                     \
       held[_pid]++;                                       \
       tp[wl_t].in_heap = 1;                               \
       tp[wl_t].sem = wl_sv;                               \
       tp[wl_t].state = TP_PENDING;                        \
       held[_pid]--;                                       \
       TRACE("@%d wait: entry %d pushed under a second lock\n", _pid, wl_i) \
    :: else                                                \
    fi                                                     \
  ENDSTEP
#endif

#ifndef BUG_WAITER_REF_AFTER_REGISTER
#define OWN_REF_BEFORE TP_RETAIN_BODY(wl_t, wl_st)
#define OWN_REF_AFTER skip
#else
/* Bug 6 (K9): the waiter took its own reference after registering, when
 * the heap's was the only one: a signal could recycle the timepoint
 * first. */
#define OWN_REF_BEFORE skip
#define OWN_REF_AFTER STEP TP_RETAIN_BODY(wl_t, wl_st) ENDSTEP
#endif

#define REGISTER_PREPARE(s0, v0, s1, v1)                   \
  if                                                       \
  :: wl_i == 0 -> wl_sv = s0; wl_vv = v0                   \
  :: else -> wl_sv = s1; wl_vv = v1                        \
  fi;                                                      \
  TP_ACQUIRE_WAITER_BODY(wl_w, wl_wg, wl_vv, wl_t);        \
  wl_st = tp[wl_t].gen;                                    \
  OWN_REF_BEFORE

#if !defined(BUG_REGISTER_OUTSIDE_LOCK) && !defined(BUG_WAITER_REF_AFTER_REGISTER)
/* Acquire and own reference (private: right movers), the critical
 * section, then the bookkeeping and the drops of a never-registered
 * timepoint (private: left movers): one transition. */
#define REGISTER_ENTRY(s0, v0, s1, v1)                     \
  STEP                                                     \
    wl_i < n && !wl_decided;                               \
    REGISTER_PREPARE(s0, v0, s1, v1);                      \
    REGISTER_CRITICAL;                                     \
    AFTER_REGISTER;                                        \
    wl_sv = 0; wl_vv = 0                                   \
  ENDSTEP;                                                 \
  REQUEST_COMPLETION_STEP
#else
#define REGISTER_ENTRY(s0, v0, s1, v1)                     \
  STEP                                                     \
    wl_i < n && !wl_decided;                               \
    REGISTER_PREPARE(s0, v0, s1, v1);                      \
    REGISTER_CRITICAL                                      \
  ENDSTEP;                                                 \
  REGISTER_PUSH_LATE;                                      \
  OWN_REF_AFTER;                                           \
  STEP AFTER_REGISTER; wl_sv = 0; wl_vv = 0 ENDSTEP
#endif

/* Step 4 for entry i: cancel (T5), read the final state under the lock,
 * drop the heap's reference if this call removed it and then our own. */
#define WAIT_CANCEL_BODY(i)                                \
  T3_CHECK_TP(wl_tp[i], wl_gen[i]);                        \
  held[_pid]++;                                            \
  T3_CHECK_SEM(tp[wl_tp[i]].sem);                          \
  wl_state[i] = tp[wl_tp[i]].state;                        \
  if                                                       \
  :: wl_state[i] == TP_PENDING ->                          \
     tp[wl_tp[i]].in_heap = 0;                             \
     tp[wl_tp[i]].reg = 0;                                 \
     tp[wl_tp[i]].late = 0;                                \
     tp[wl_tp[i]].state = TP_CANCELLED;                    \
     wl_state[i] = TP_CANCELLED;                           \
     held[_pid]--;                                         \
     /* the heap's reference: not the last (ours is left) */ \
     assert(tp[wl_tp[i]].ref > 1);                         \
     tp[wl_tp[i]].ref--                                    \
  :: else -> held[_pid]--                                  \
  fi;                                                      \
  TP_RELEASE_BODY(wl_tp[i], wl_gen[i]);                    \
  wl_tp[i] = NONE;                                         \
  wl_gen[i] = 0

/* hal_sync_wait_result (entries never examined count as not reached),
 * then the waiter reference goes (a left mover). */
#define WAIT_RESULT_BODY(mode, n, s0, s1, result)          \
  wl_reached = 0;                                          \
  wl_first_failed = NONE;                                  \
  if                                                       \
  :: wl_count < 1 -> wl_state[0] = TP_CANCELLED            \
  :: else                                                  \
  fi;                                                      \
  if                                                       \
  :: wl_count < 2 -> wl_state[1] = TP_CANCELLED            \
  :: else                                                  \
  fi;                                                      \
  if                                                       \
  :: wl_state[0] == TP_REACHED -> wl_reached++             \
  :: wl_state[0] == TP_FAILED -> wl_first_failed = 0       \
  :: else                                                  \
  fi;                                                      \
  if                                                       \
  :: n == 2 && wl_state[1] == TP_REACHED -> wl_reached++   \
  :: n == 2 && wl_state[1] == TP_FAILED && wl_first_failed == NONE -> \
     wl_first_failed = 1                                   \
  :: else                                                  \
  fi;                                                      \
  if                                                       \
  :: (mode == MODE_ALL && wl_reached == n && wl_first_failed == NONE) || \
     (mode == MODE_ANY && wl_reached > 0) ->               \
     result = ST_OK                                        \
  :: else ->                                               \
     if                                                    \
     :: wl_first_failed == 0 -> result = sem[s0].fst       \
     :: wl_first_failed == 1 -> result = sem[s1].fst       \
     :: else -> result = ST_DEADLINE                       \
     fi                                                    \
  fi;                                                      \
  TRACE("@%d wait returns status %d\n", _pid, result);     \
  WAITER_RELEASE_BODY(wl_w, wl_wg);                        \
  wl_w = 0; wl_wg = 0; wl_reg = 0; wl_count = 0; wl_decided = 0; wl_i = 0; \
  wl_reached = 0; wl_first_failed = 0;                     \
  wl_tp[0] = 0; wl_tp[1] = 0;                              \
  wl_state[0] = 0; wl_state[1] = 0

/* One wait over n (1 or 2) entries (s0, v0), (s1, v1). |finite|: the
 * deadline may pass (nondeterministically) while it sleeps. The status
 * lands in |result|. The label end_hal_sync_wake_wait makes sleeping a
 * valid end state; whether that sleep is legitimate is the Observer's
 * check (check_no_lost_wakeup). Expand at most once per proctype. */
inline hal_sync_semaphore_wait_list(mode, n, s0, v0, s1, v1, finite, result) {
  /* hal_sync_wait_fast_path: one lock-free load (acquire) per entry */
  STEP
    wl_r = REACHED_NOW(s0, v0);
    if
    :: (mode == MODE_ANY && wl_r) || (mode == MODE_ALL && wl_r && n == 1) ->
       wl_fast = FAST_OK
    :: n == 2 && ((mode == MODE_ANY && !wl_r) || (mode == MODE_ALL && wl_r)) ->
       wl_fast = FAST_NEXT
    :: else -> wl_fast = FAST_SLOW
    fi;
    wl_r = 0
  ENDSTEP;
  if
  :: STEP
       wl_fast == FAST_NEXT;
       wl_fast = (REACHED_NOW(s1, v1) -> FAST_OK : FAST_SLOW)
     ENDSTEP
  :: wl_fast != FAST_NEXT
  fi;
  if
  :: STEP
       wl_fast == FAST_OK;
       wl_fast = 0;
       result = ST_OK;
       TRACE("@%d wait: fast path, reached\n", _pid)
     ENDSTEP
  :: STEP
       wl_fast == FAST_SLOW;
       wl_fast = 0;
       /* 1. the one wake object (private until a timepoint is registered) */
       WAITER_ACQUIRE_BODY(wl_w, wl_wg);
       wl_reg = 0;
       wl_decided = 0;
       wl_tp[0] = NONE; wl_tp[1] = NONE;
       wl_state[0] = TP_CANCELLED; wl_state[1] = TP_CANCELLED
     ENDSTEP;

     /* 2. register one WAITER timepoint per entry, each under its lock,
      * until one decides the wait */
     do
     :: REGISTER_ENTRY(s0, v0, s1, v1)
     :: STEP wl_i >= n || wl_decided; wl_count = wl_i; wl_i = 0 ENDSTEP; break
     od;

     /* 3. sleep on the one wake object until enough posts (ALL: every
      * registered entry; ANY: one), a failure post, or the deadline */
     if
     :: STEP
          !wl_decided && wl_reg > 0;
          wl_needed = (mode == MODE_ALL -> wl_reg : 1);
          wk[wl_w].sleeping = 1;
          wk[wl_w].infinite = !(finite);
          wk[wl_w].wmode = mode;
          wk[wl_w].wn = n;
          wk[wl_w].ws[0] = s0; wk[wl_w].wv[0] = v0;
          wk[wl_w].ws[1] = s1; wk[wl_w].wv[1] = v1;
          TRACE("@%d wait: sleeps on waiter %d for %d posts (deadline %d)\n",
                _pid, wl_w, wl_needed, finite)
        ENDSTEP;
end_hal_sync_wake_wait:
        if
        :: STEP
             wk[wl_w].posts >= wl_needed || wk[wl_w].wfailed;
             TRACE("@%d wait: woken\n", _pid);
             wk[wl_w].sleeping = 0;
             wl_needed = 0
           ENDSTEP
        :: STEP
             finite; /* the deadline passed */
             TRACE("@%d wait: deadline passed\n", _pid);
             wk[wl_w].sleeping = 0;
             wl_needed = 0
           ENDSTEP
        fi
     :: wl_decided || wl_reg == 0
     fi;

     /* 4. cancel what is still pending; the final states decide (K9) */
     do
     :: STEP wl_i < wl_count && wl_tp[wl_i] != NONE; WAIT_CANCEL_BODY(wl_i); wl_i++ ENDSTEP
     :: STEP wl_i < wl_count && wl_tp[wl_i] == NONE; wl_i++ ENDSTEP
     :: STEP wl_i >= wl_count; WAIT_RESULT_BODY(mode, n, s0, s1, result) ENDSTEP; break
     od
  fi
}

/* An entry of a wait is decided once its semaphore reached the value
 * (hist: even if it failed later) or failed before reaching it. */
#define ENTRY_REACHED(s, v) (sem[s].hist >= (v))
#define ENTRY_FAILED(s, v) (sem[s].failed && sem[s].hist < (v))

/* The Observer's lost-wake-up check: a thread still sleeping (with no
 * deadline) when nothing else can move must be waiting for something that
 * has not happened (K6, K8, S2, S3): no entry failed before reaching its
 * value, and ALL: an entry not reached; ANY: no entry reached. */
inline check_no_lost_wakeup() {
  ob_i = 0;
  do
  :: ob_i < NWAITER ->
     if
     :: wk[ob_i].live && wk[ob_i].sleeping && wk[ob_i].infinite ->
        assert(!ENTRY_FAILED(wk[ob_i].ws[0], wk[ob_i].wv[0]) &&
               (wk[ob_i].wn == 1 || !ENTRY_FAILED(wk[ob_i].ws[1], wk[ob_i].wv[1])));
        if
        :: wk[ob_i].wmode == MODE_ALL ->
           assert(!ENTRY_REACHED(wk[ob_i].ws[0], wk[ob_i].wv[0]) ||
                  (wk[ob_i].wn == 2 && !ENTRY_REACHED(wk[ob_i].ws[1], wk[ob_i].wv[1])))
        :: else ->
           assert(!ENTRY_REACHED(wk[ob_i].ws[0], wk[ob_i].wv[0]) &&
                  (wk[ob_i].wn == 1 || !ENTRY_REACHED(wk[ob_i].ws[1], wk[ob_i].wv[1])))
        fi
     :: else
     fi;
     ob_i++
  :: else -> break
  od
}
