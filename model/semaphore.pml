/*
 * hal/sync/ semaphores, timepoints and host waits (semaphore.c, wait.c,
 * wake.c, timepoint.c, pool.c) as Promela. One scenario per run:
 *
 *   -DSCENARIO_WAIT      two waiter threads, each a wait ALL or ANY over
 *                        two semaphores with values 1..2 and an infinite
 *                        or finite timeout (all chosen nondeterministically),
 *                        against one signaler per semaphore that signals
 *                        upwards, fails, or stops at any point.
 *   -DSCENARIO_CALLBACK  hal_semaphore_add_callback with a handle, cancel
 *                        through the handle after the caller dropped its
 *                        semaphore reference, racing a signal or a failure;
 *                        a second callback left pending until the semaphore
 *                        is destroyed.
 *
 * Properties: assertions (T1, T2, T3, S2, S3, S5/K5, K9, T5), the invalid
 * end-state check (no deadlock) and, at quiescence, the Observer's
 * no_lost_wakeup (K6, K8). Bug switches re-introducing historical bugs:
 * BUG_ANY_FAILED_ENTRY, BUG_REGISTER_OUTSIDE_LOCK,
 * BUG_WAITER_REF_AFTER_REGISTER (sync_common.pml), BUG_HANDLE_NO_PIN
 * (here, scenario CALLBACK).
 */

#define MAXV 2
#define NSEM 2
#ifndef WAITERS
#define WAITERS 2
#endif
/* The default pair (CI): an ALL over both semaphores with no deadline,
 * and a wait with a deadline on semaphore 0 alone at the other value, so
 * that semaphore 0's heap holds both waiters' timepoints at different
 * values and a timeout's cancel races the other waiter's pop. The full
 * sweep (run.py --full) pairs every shape over both semaphores. */
#ifndef W0_MODE
#define W0_MODE MODE_ALL
#define W0_V0 1
#define W0_V1 2
#define W0_TIMEOUT INFINITE
#endif
#ifndef W1_MODE
#define W1_N 1
#define W1_MODE MODE_ALL
#define W1_V0 2
#define W1_V1 1
#define W1_TIMEOUT FINITE
#endif
#ifndef W1_N
#define W1_N 2
#endif
#define NTP 4
#define NWAITER 2
#define MAXPROC 8

#include "sync_common.pml"

#define CB_USER 1

/* Ghost record of each user callback (by id): T1 exactly once, T5. */
byte user_calls[2];
byte user_st[2];

/* The user callback: records that it ran (T1 and T2 are asserted by
 * NOTIFY_AND_RELEASE around every callback). */
inline run_callback(which, a, v, st) {
  STEP
    assert(which == CB_USER);
    user_calls[a]++;
    user_st[a] = st
  ENDSTEP
}

/* ------------------------------------------------------------------ */
#ifdef SCENARIO_WAIT

/* A thread calling hal_semaphore_list_wait (hal_sync_semaphore_wait_list)
 * over (semaphore 0, v0), (semaphore 1, v1). Each of the four shape
 * parameters is fixed or CHOOSE (nondeterministic): the mode (MODE_ALL,
 * MODE_ANY), the values (1..MAXV), the timeout (INFINITE, FINITE). */
#define CHOOSE 9
#define INFINITE 0
#define FINITE 1

proctype Waiter(byte n; byte mode_sel; byte v0_sel; byte v1_sel; byte timeout_sel) {
  SYNC_LOCALS;
  WAIT_LOCALS;
  byte mode, v0, v1, result;
  bool finite;
  if
  :: mode_sel != MODE_ANY -> mode = MODE_ALL
  :: mode_sel != MODE_ALL -> mode = MODE_ANY
  fi;
  if
  :: v0_sel == CHOOSE || v0_sel == 1 -> v0 = 1
  :: v0_sel == CHOOSE || v0_sel == 2 -> v0 = 2
  fi;
  if
  :: v1_sel == CHOOSE || v1_sel == 1 -> v1 = 1
  :: v1_sel == CHOOSE || v1_sel == 2 -> v1 = 2
  fi;
  if
  :: timeout_sel != FINITE -> finite = 0
  :: timeout_sel != INFINITE -> finite = 1
  fi;
  hal_sync_semaphore_wait_list(mode, n, 0, v0, 1, v1, finite, result);
  /* What the return says is true: */
  if
  :: result == ST_OK ->
     /* S5, K5: never OK before the value; a query now returns at least it */
     if
     :: n == 1 ->
        assert(sem[0].hist >= v0);
        assert(sem[0].value >= v0)
     :: n == 2 && mode == MODE_ALL ->
        assert(sem[0].hist >= v0 && sem[1].hist >= v1);
        assert(sem[0].value >= v0 && sem[1].value >= v1)
     :: n == 2 && mode == MODE_ANY ->
        assert(sem[0].hist >= v0 || sem[1].hist >= v1);
        assert(sem[0].value >= v0 || sem[1].value >= v1)
     fi
  :: result == ST_DEADLINE ->
     /* K6, K8: with no deadline a wait returns only when decided */
     assert(finite)
  :: else ->
     /* S2: a failure is one of its semaphores' (first) failure */
     assert(result == ST_ABORTED && (sem[0].failed || (n == 2 && sem[1].failed)))
  fi
}

/* hal_semaphore_signal / hal_semaphore_fail from one host thread per
 * semaphore: upwards by one (with FULL also straight to MAXV, so that one
 * signal pops several values), a failure, or nothing more (the value may
 * stay below a wait's: only a deadline ends that). */
proctype Signaler(byte s) {
  SYNC_LOCALS;
  byte k = 1, nv, st;
  do
  :: k <= MAXV ->
     if
     :: STEP nv = k; st = ST_OK; k++ ENDSTEP
#ifdef FULL
     :: STEP k < MAXV; nv = MAXV; st = ST_OK; k = MAXV + 1 ENDSTEP
#endif
     :: STEP nv = 0; st = ST_ABORTED; k = MAXV + 1 ENDSTEP
     fi;
     hal_sync_semaphore_signal_or_fail(s, nv, st);
     STEP nv = 0; st = 0 ENDSTEP
  :: break
  od
}

/* At quiescence (nothing else can move, or everything ended). */
proctype Observer() {
  byte ob_i;
  timeout ->
  check_no_lost_wakeup();
  /* T3: once no waiter holds any, every timepoint and waiter went back
   * to its pool (reference counts reached zero exactly) */
  if
  :: !wk[0].live && !wk[1].live ->
     ob_i = 0;
     do
     :: ob_i < NTP -> assert(!tp[ob_i].live); ob_i++
     :: else -> break
     od
  :: else
  fi
}

init {
  atomic {
    sem[0].live = 1; sem[0].ref = 1; sem[0].dtp_ev = NONE;
    sem[1].live = 1; sem[1].ref = 1; sem[1].dtp_ev = NONE;
#if WAITERS == 1
    /* every shape of one wait */
    run Waiter(2, CHOOSE, CHOOSE, CHOOSE, CHOOSE);
#else
    /* two waits at once, of the shapes W0 and W1 (run.sh --full sweeps
     * every pair) */
    run Waiter(2, W0_MODE, W0_V0, W0_V1, W0_TIMEOUT);
    run Waiter(W1_N, W1_MODE, W1_V0, W1_V1, W1_TIMEOUT);
#endif
    run Signaler(0);
    run Signaler(1);
    run Observer()
  }
}

#endif /* SCENARIO_WAIT */

/* ------------------------------------------------------------------ */
#ifdef SCENARIO_CALLBACK

#define CALLBACK_LOCALS \
  byte ac_t, ac_g, ac_state, ac_st; \
  bool sr_last; \
  byte hr_unpin

/* hal_sync_semaphore_destroy: pending CALLBACK timepoints resolve as
 * CANCELLED (T1); a waiter holds a reference, so none is a WAITER. */
inline hal_sync_semaphore_destroy(s) {
  STEP
    held[_pid]++;
    POP_DUE_BODY(s, 0, 1);
    held[_pid]--;
    bi = 0;
    do
    :: bi < bn ->
       assert(tp[bt[bi]].kind == KIND_CALLBACK);
       tp[bt[bi]].state = TP_CANCELLED;
       bi++
    :: else -> break
    od;
    bi = 0
  ENDSTEP;
  hal_sync_resolved_batch_notify(ST_CANCELLED);
  STEP sem[s].live = 0 ENDSTEP
}

/* hal_semaphore_release: the last reference destroys. */
inline hal_semaphore_release(s) {
  STEP
    T3_CHECK_SEM(s);
    assert(sem[s].ref > 0);
    sem[s].ref--;
    sr_last = (sem[s].ref == 0)
  ENDSTEP;
  if
  :: STEP sr_last; sr_last = 0 ENDSTEP; hal_sync_semaphore_destroy(s)
  :: !sr_last
  fi
}

/* hal_semaphore_add_callback: the caller holds a reference to |s|. With
 * |want_handle| the handle (a second timepoint reference) pins |s| (T5).
 * Acquire, handle and registration are one transition (the first two are
 * private to this thread until the registration publishes the timepoint). */
inline hal_semaphore_add_callback(s, v, id, want_handle, out_t, out_g) {
  STEP
    TP_ACQUIRE_CALLBACK_BODY(CB_USER, id, v, ac_t);
    ac_g = tp[ac_t].gen;
    if
    :: want_handle ->
       TP_RETAIN_BODY(ac_t, ac_g);
       /* hal_sync_timepoint_make_handle */
#ifdef BUG_HANDLE_NO_PIN
       /* the handle keeps the timepoint only: cancel through it may find
        * its semaphore destroyed */
       tp[ac_t].pinned = NONE;
#else
       T3_CHECK_SEM(s);
       sem[s].ref++;
       tp[ac_t].pinned = s;
#endif
       tp[ac_t].handles = 1;
       out_t = ac_t;
       out_g = ac_g
    :: else
    fi;
    held[_pid]++;
    REGISTER_LOCKED_BODY(s, ac_t, ac_state);
    held[_pid]--;
    if
    :: ac_state != TP_PENDING ->
       /* already resolved: never registered; the callback runs now */
       tp[ac_t].state = ac_state;
       ac_st = (ac_state == TP_FAILED -> sem[s].fst : ST_OK)
    :: else
    fi
  ENDSTEP;
  if
  :: NOTIFY_CALLBACK(ac_state != TP_PENDING, ac_t, ac_g, ac_st, run_callback, 0)
  :: ac_state == TP_PENDING
  fi;
  STEP ac_t = 0; ac_g = 0; ac_state = 0; ac_st = 0 ENDSTEP
}

/* hal_timepoint_release: the last handle unpins the semaphore, released
 * last, outside every lock (it may destroy it, cancelling what pends). */
inline hal_timepoint_release(t, g) {
  STEP
    T3_CHECK_TP(t, g);
    assert(tp[t].handles > 0);
    tp[t].handles--;
    if
    :: tp[t].handles == 0 -> hr_unpin = tp[t].pinned; tp[t].pinned = NONE
    :: else -> hr_unpin = NONE
    fi;
    TP_RELEASE_BODY(t, g)
  ENDSTEP;
  if
  :: hr_unpin != NONE -> hal_semaphore_release(hr_unpin)
  :: hr_unpin == NONE
  fi;
  hr_unpin = 0
}

bool cancel_removed;   /* what hal_timepoint_cancel returned */
bool cancel_called;

/* The user thread: a callback at 1 with a handle; drops its semaphore
 * reference; maybe cancels through the handle; drops the handle. */
proctype User() {
  SYNC_LOCALS;
  CALLBACK_LOCALS;
  byte h, hg;
  hal_semaphore_add_callback(0, 1, 0, 1, h, hg);
  hal_semaphore_release(0);
  if
  :: /* hal_timepoint_cancel(handle) */
     CALLBACK_CANCEL(h, hg, cn_state, cn_removed, run_callback, 0);
     STEP
       cancel_called = 1;
       cancel_removed = cn_removed;
       cn_removed = 0;
       cn_state = 0
     ENDSTEP
  :: skip
  fi;
  hal_timepoint_release(h, hg)
}

/* A second thread with its own reference: a callback at 2 without a
 * handle, then a signal, a failure or nothing, then its release (which
 * may destroy the semaphore with the callback pending). */
proctype Signaler() {
  SYNC_LOCALS;
  CALLBACK_LOCALS;
  byte unused_t, unused_g, nv, st;
  hal_semaphore_add_callback(0, 2, 1, 0, unused_t, unused_g);
  if
  :: nv = 1; st = ST_OK
  :: nv = 2; st = ST_OK
  :: nv = 0; st = ST_ABORTED
  :: nv = 0; st = NONE /* neither */
  fi;
  if
  :: st != NONE -> hal_sync_semaphore_signal_or_fail(0, nv, st)
  :: else
  fi;
  hal_semaphore_release(0)
}

proctype Observer() {
  byte ob_i;
  timeout ->
  /* T1: each callback ran exactly once (reached, failed, cancelled, or
   * its semaphore destroyed) */
  assert(user_calls[0] == 1 && user_calls[1] == 1);
  /* T5: cancel removed it exactly when the callback got CANCELLED */
  assert(!cancel_called || (cancel_removed == (user_st[0] == ST_CANCELLED)));
  /* T3: the semaphore went with its last reference; nothing leaked */
  assert(!sem[0].live);
  ob_i = 0;
  do
  :: ob_i < NTP -> assert(!tp[ob_i].live); ob_i++
  :: else -> break
  od
}

init {
  atomic {
    sem[0].live = 1;
    sem[0].ref = 2; /* the user's and the signaler's */
    sem[0].dtp_ev = NONE;
    run User();
    run Signaler();
    run Observer()
  }
}

#endif /* SCENARIO_CALLBACK */
