// The stream worker threads (VGPU_STREAM_THREADS, default 4).
//
// Runnable streams wait in one FIFO ready list; a worker pops a stream, runs
// its head operation (stream.c) and the stream goes back to the tail of the
// list if it has more, so streams share workers fairly and independent
// streams run concurrently when there are several workers. A stream blocked
// on a mark holds no worker. With one worker, everything is serialized:
// the knob that shakes out assumptions of concurrency.
//
// |mu| guards the ready list, |shutdown|, |paused| and |running|; it is the
// innermost lock after stream locks (vgpu_sched_push_locked is called with
// a stream lock held). The unload pauses the workers first (lifetime.c):
// they take no more work and sleep until stopped, and it waits for those
// still running an operation.
// Workers sleep on a counting semaphore, |ready|, not on a condition
// variable: glibc's pthread_cond_signal can lose a wake-up when several
// threads wait on one condition variable (sourceware bug 25847, in Debian
// 12's glibc), which left a stream listed as ready with every worker asleep.
// A post is never lost. The accounting, all under |mu| except the waits:
// - a worker looks at the list before it sleeps, and a look is "paid" when
//   the worker comes from a wait that returned (it took a post) or from a
//   run_head that re-listed its stream without a post;
// - vgpu_sched_push_locked posts once per listing; vgpu_sched_relist_locked
//   (the worker re-listing the stream it ran) posts nothing, so the common
//   case of one busy stream wakes nobody: that worker runs it on;
// - an unpaid look that pops a stream takes a post back (sem_trywait; none
//   left means a paid look elsewhere covers it).
// So the count plus the paid looks to come never falls below the streams
// listed: no listed stream waits while every worker sleeps, and the count
// stays near the list's length (it cannot overflow).
#include <errno.h>
#include <semaphore.h>
#include <stdlib.h>

#include "internal.h"

static struct {
  pthread_mutex_t mu;
  sem_t ready;  // posts: streams listed + workers to stop
  vgpu_stream* head;
  vgpu_stream* tail;
  bool shutdown;
  bool started;
  bool closed;  // after vgpu_sched_stop: never start again (unload)
  bool paused;  // after vgpu_sched_pause: workers take no more work
  int running;  // workers between popping a stream and their next look
  pthread_cond_t idle_cv;  // broadcast when |running| drops while paused
  bool cv_ready;
  pthread_t* threads;
  int count;
} sched = {.mu = PTHREAD_MUTEX_INITIALIZER};

static _Thread_local bool sched_on_worker;

static void* worker_main(void* arg) {
  (void)arg;
  sched_on_worker = true;
  bool paid = false;  // this look at the list is paid for (see above)
  bool ran = false;   // this worker counts in |running|
  for (;;) {
    pthread_mutex_lock(&sched.mu);
    if (ran) {
      ran = false;
      sched.running--;
      if (sched.paused)
        pthread_cond_broadcast(&sched.idle_cv);
    }
    if (sched.shutdown) {
      pthread_mutex_unlock(&sched.mu);
      break;
    }
    if (sched.paused) {
      // Sleeps until vgpu_sched_stop (or the process's end): a worker that
      // returned unjoined would be a thread leaked.
      pthread_mutex_unlock(&sched.mu);
      (void)sem_wait(&sched.ready);
      continue;
    }
    vgpu_stream* s = sched.head;
    if (s != NULL) {
      sched.running++;
      ran = true;
      sched.head = s->ready_next;
      if (sched.head == NULL)
        sched.tail = NULL;
      s->ready_next = NULL;
      if (!paid)
        (void)sem_trywait(&sched.ready);  // EAGAIN: a paid look covers it
    }
    pthread_mutex_unlock(&sched.mu);
    paid = false;
    if (s == NULL) {
      if (sem_wait(&sched.ready) == 0) {
        paid = true;
      } else if (errno != EINTR) {
        vgpu_log("stream worker: sem_wait failed (errno %d)", errno);
        abort();  // internal invariant: nothing would ever run
      }
      continue;
    }
    paid = vgpu_stream_run_head(s);
    vgpu_object_release(&s->base);  // the ready list's reference
  }
  return NULL;
}

// Starts the workers on first use. Called with sched.mu held.
static void start_locked(void) {
  if (!sched.cv_ready) {
    vgpu_cond_init(&sched.idle_cv);
    sched.cv_ready = true;
  }
  sched.started = true;
  sched.shutdown = false;
  if (sem_init(&sched.ready, 0, 0) != 0) {
    vgpu_log("cannot create the stream workers' semaphore");
    abort();
  }
  sched.threads = calloc((size_t)vgpu_cfg.stream_threads, sizeof(pthread_t));
  sched.count = 0;
  for (int i = 0; sched.threads != NULL && i < vgpu_cfg.stream_threads; ++i) {
    if (pthread_create(&sched.threads[i], NULL, worker_main, NULL) != 0)
      break;
    sched.count++;
  }
  if (sched.count == 0) {
    vgpu_log("cannot start any stream worker thread");
    abort();  // internal invariant: nothing would ever run
  }
}

// Lists |s|; |post| says whether a sleeping worker may be needed for it.
static void list(vgpu_stream* s, bool post) {
  pthread_mutex_lock(&sched.mu);
  if (sched.closed) {
    pthread_mutex_unlock(&sched.mu);  // unloading: work is discarded
    return;
  }
  vgpu_object_retain(&s->base);
  if (!sched.started)
    start_locked();
  s->ready_next = NULL;
  if (sched.tail != NULL) {
    sched.tail->ready_next = s;
  } else {
    sched.head = s;
  }
  sched.tail = s;
  if (post)
    sem_post(&sched.ready);
  pthread_mutex_unlock(&sched.mu);
}

void vgpu_sched_push_locked(vgpu_stream* s) {
  list(s, true);
}

void vgpu_sched_relist_locked(vgpu_stream* s) {
  list(s, false);
}

bool vgpu_sched_pause(uint64_t deadline_ns) {
  pthread_mutex_lock(&sched.mu);
  sched.paused = true;
  // A worker that runs the unload (a host function that exits the process)
  // is one of |running| and cannot finish its operation first.
  int self = sched_on_worker ? 1 : 0;
  bool idle = true;
  while (sched.started && sched.running > self) {
    if (!vgpu_cond_wait_bounded(&sched.idle_cv, &sched.mu, deadline_ns)) {
      idle = sched.running <= self;
      break;
    }
  }
  pthread_mutex_unlock(&sched.mu);
  return idle;
}

void vgpu_sched_stop(void) {
  pthread_mutex_lock(&sched.mu);
  sched.closed = true;
  if (!sched.started) {
    pthread_mutex_unlock(&sched.mu);
    return;
  }
  sched.shutdown = true;
  for (int i = 0; i < sched.count; ++i)
    sem_post(&sched.ready);
  pthread_mutex_unlock(&sched.mu);
  for (int i = 0; i < sched.count; ++i)
    pthread_join(sched.threads[i], NULL);
  sem_destroy(&sched.ready);
  free(sched.threads);
  sched.threads = NULL;
  sched.count = 0;
  // Streams still listed lose their list reference (their operations are
  // discarded by the caller).
  pthread_mutex_lock(&sched.mu);
  vgpu_stream* s = sched.head;
  sched.head = sched.tail = NULL;
  sched.started = false;
  pthread_mutex_unlock(&sched.mu);
  while (s != NULL) {
    vgpu_stream* next = s->ready_next;
    s->ready_next = NULL;
    vgpu_object_release(&s->base);
    s = next;
  }
}
