// vgpu-bench: the virtual GPU must not be the bottleneck of the CTS.
//
// Measures, in one run and per facade:
//   - an empty host-function round trip: launch an empty host function on a
//     stream and synchronize the stream;
//   - an event record/query cycle: record an event on an idle stream and
//     query it until it reports completion;
// against the raw baseline, a pthread condvar ping-pong round trip between
// two threads, and prints the ratios (target: within 3x).
//
// usage: vgpu-bench [ITERATIONS] cuda LIB [hip LIB]
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../tests/vapi.h"

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static struct {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int turn;  // 0: main's turn, 1: partner's
  int rounds;
} pp = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0};

static void* partner(void* arg) {
  (void)arg;
  pthread_mutex_lock(&pp.mu);
  for (int i = 0; i < pp.rounds; ++i) {
    while (pp.turn != 1)
      pthread_cond_wait(&pp.cv, &pp.mu);
    pp.turn = 0;
    pthread_cond_broadcast(&pp.cv);
  }
  pthread_mutex_unlock(&pp.mu);
  return NULL;
}

static double bench_pingpong(int n) {
  pp.rounds = n;
  pp.turn = 0;
  pthread_t t;
  pthread_create(&t, NULL, partner, NULL);
  double t0 = now_us();
  pthread_mutex_lock(&pp.mu);
  for (int i = 0; i < n; ++i) {
    pp.turn = 1;
    pthread_cond_broadcast(&pp.cv);
    while (pp.turn != 0)
      pthread_cond_wait(&pp.cv, &pp.mu);
  }
  pthread_mutex_unlock(&pp.mu);
  double dt = now_us() - t0;
  pthread_join(t, NULL);
  return dt / n;
}

static void empty_fn(void* arg) {
  (void)arg;
}

static int bench_facade(vapi* api, int n, double base) {
  void *s = NULL, *e = NULL;
  if (api->init(0) != api->ok || api->stream_create(&s, true) != api->ok ||
      api->event_create(&e) != api->ok) {
    fprintf(stderr, "%s: setup failed\n", api->name);
    return 1;
  }
  for (int i = 0; i < n / 10; ++i) {  // warm up the worker threads
    api->host_fn(s, empty_fn, NULL);
    api->stream_sync(s);
  }
  double t0 = now_us();
  for (int i = 0; i < n; ++i) {
    api->host_fn(s, empty_fn, NULL);
    api->stream_sync(s);
  }
  double host = (now_us() - t0) / n;
  t0 = now_us();
  for (int i = 0; i < n; ++i) {
    api->event_record(e, s);
    while (api->event_query(e) == api->not_ready)
      sched_yield();
  }
  double event = (now_us() - t0) / n;
  printf("%-5s host-function round trip  %8.2f us  (%.2fx baseline)\n",
         api->name, host, host / base);
  printf("%-5s event record/query cycle  %8.2f us  (%.2fx baseline)\n",
         api->name, event, event / base);
  api->event_destroy(e);
  api->stream_destroy(s);
  return 0;
}

int main(int argc, char** argv) {
  int arg = 1;
  int n = 20000;
  if (argc > 1 && argv[1][0] >= '0' && argv[1][0] <= '9')
    n = atoi(argv[arg++]);
  double base = bench_pingpong(n);
  printf("baseline condvar ping-pong round trip %8.2f us  (%d iterations)\n",
         base, n);
  int rc = 0;
  for (; arg + 1 < argc; arg += 2) {
    vapi api;
    bool cuda = strcmp(argv[arg], "cuda") == 0;
    bool ok =
        cuda ? vapi_open_cuda != NULL && vapi_open_cuda(&api, argv[arg + 1])
             : vapi_open_hip != NULL && vapi_open_hip(&api, argv[arg + 1]);
    if (!ok)
      return 1;
    rc |= bench_facade(&api, n, base);
    if (cuda && vapi_cuda_release != NULL)
      vapi_cuda_release();
  }
  base = bench_pingpong(n);
  printf("baseline again                        %8.2f us\n", base);
  return rc;
}
