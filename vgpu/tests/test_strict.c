// Strict-mode checks, each made to fire, and the same misuse in lax mode
// (VGPU_STRICT=0), where the virtual GPU behaves like the vendor runtime.
// Bad handles and values return the vendor codes in both modes.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
// cmocka after the standard headers it needs.
#include <cmocka.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#define OK(expr) assert_int_equal((expr), api.ok)

static bool strict;

static int setup(void** state) {
  (void)state;
  return api.init(0) == api.ok ? 0 : -1;
}

typedef struct k1_probe {
  void* stream;
  void* event;
  atomic_int rc_stream;
  atomic_int rc_event;
} k1_probe;

static void k1_host_fn(void* arg) {
  k1_probe* p = arg;
  atomic_store(&p->rc_stream, api.stream_query(p->stream));
}

static void k1_node_fn(void* arg) {
  k1_probe* p = arg;
  atomic_store(&p->rc_event, api.event_query(p->event));
}

// K1: a vendor API call from a host function or host node.
static void K1_CallInHostFunction(void** state) {
  (void)state;
  void *s = NULL, *other = NULL, *e = NULL, *g = NULL, *n = NULL, *x = NULL;
  OK(api.stream_create(&s, true));
  OK(api.stream_create(&other, true));
  OK(api.event_create(&e));
  k1_probe p = {other, e, -1, -1};
  OK(api.host_fn(s, k1_host_fn, &p));
  OK(api.graph_create(&g));
  OK(api.graph_add_host(&n, g, NULL, 0, k1_node_fn, &p));
  OK(api.graph_instantiate(&x, g));
  OK(api.graph_launch(x, s));
  OK(api.stream_sync(s));
  int want = strict ? api.not_permitted : api.ok;
  assert_int_equal(atomic_load(&p.rc_stream), want);
  assert_int_equal(atomic_load(&p.rc_event), want);
  OK(api.graph_exec_destroy(x));
  OK(api.graph_destroy(g));
  OK(api.event_destroy(e));
  OK(api.stream_destroy(s));
  OK(api.stream_destroy(other));
}

// Destroying a stream, an event or an executable graph with pending work.
static void Strict_DestroyWithPendingWork(void** state) {
  (void)state;
  void *s = NULL, *e = NULL, *g = NULL, *n = NULL, *x = NULL;
  gate gs, gg;
  gate_init(&gs);
  gate_init(&gg);
  OK(api.stream_create(&s, true));
  OK(api.event_create(&e));
  OK(api.graph_create(&g));
  OK(api.graph_add_host(&n, g, NULL, 0, gate_host_fn, &gg));
  OK(api.graph_instantiate(&x, g));
  OK(api.host_fn(s, gate_host_fn, &gs));
  OK(api.event_record(e, s));
  OK(api.graph_launch(x, s));
  if (strict) {
    capture_begin();
    int rc = api.stream_destroy(s);
    char* text = capture_end();
    assert_int_equal(rc, api.in_use);
    // The message names the call and the object.
    assert_non_null(strstr(text, api.stream_destroy_name));
    assert_non_null(strstr(text, "stream 0x"));
    free(text);
    assert_int_equal(api.event_destroy(e), api.in_use);
    assert_int_equal(api.graph_exec_destroy(x), api.in_use);
    gate_open(&gs);
    gate_open(&gg);
    OK(api.stream_sync(s));
    OK(api.graph_exec_destroy(x));
    OK(api.event_destroy(e));
    OK(api.stream_destroy(s));
  } else {
    capture_begin();
    int rc = api.stream_destroy(s);
    char* text = capture_end();
    OK(rc);
    assert_null(strstr(text, "strict"));
    free(text);
    OK(api.event_destroy(e));
    OK(api.graph_exec_destroy(x));
    gate_open(&gs);
    gate_open(&gg);
    OK(api.device_sync());  // the destroyed stream's work still completes
  }
  OK(api.graph_destroy(g));
  gate_destroy(&gs);
  gate_destroy(&gg);
}

static void* open_later(void* arg) {
  testutil_sleep_ms(50);
  gate_open(arg);
  return NULL;
}

// Freeing memory that queued work still uses.
static void Strict_FreeMemoryInUse(void** state) {
  (void)state;
  void *s = NULL, *dev = NULL;
  gate g;
  gate_init(&g);
  OK(api.stream_create(&s, true));
  OK(api.malloc(&dev, 256));
  OK(api.host_fn(s, gate_host_fn, &g));
  OK(api.memset32_async(dev, 1, 64, s));
  if (strict) {
    assert_int_equal(api.free(dev), api.in_use);
    gate_open(&g);
    OK(api.stream_sync(s));
    OK(api.free(dev));
  } else {
    pthread_t t;
    pthread_create(&t, NULL, open_later, &g);
    OK(api.free(dev));  // waits for the memset, like the vendors' free
    OK(api.stream_query(s));
    pthread_join(t, NULL);
  }
  OK(api.stream_destroy(s));
  gate_destroy(&g);
}

static void count_host_fn(void* arg) {
  atomic_fetch_add((atomic_int*)arg, 1);
}

// How a sync-then-destroy round waits for its event.
typedef enum round_wait {
  ROUND_EVENT_SYNC = 0,
  ROUND_EVENT_QUERY,   // polls the event until it is complete
  ROUND_OTHER_STREAM,  // another stream waits for the event; sync that one
  ROUND_WAIT_COUNT,
} round_wait;

static const char* const round_wait_names[ROUND_WAIT_COUNT] = {
    "event synchronize", "event query",
    "synchronize of a stream waiting for the event"};

static void wait_round_event(void* e, round_wait wait, void* other) {
  switch (wait) {
    case ROUND_EVENT_SYNC:
      OK(api.event_sync(e));
      break;
    case ROUND_EVENT_QUERY: {
      int rc;
      while ((rc = api.event_query(e)) == api.not_ready) {
      }
      OK(rc);
      break;
    }
    case ROUND_OTHER_STREAM:
      OK(api.stream_wait_event(other, e));
      OK(api.stream_sync(other));
      break;
    case ROUND_WAIT_COUNT:
      break;
  }
}

// A host that has seen an event complete may destroy the stream (and the
// executable graph) whose work the event followed, at once: the event's
// completion is visible only after the stream's and the graph's bookkeeping
// counts that work as done. Each round: a new stream, one operation (a
// memset, a host function or a graph launch), an event record, a wait on
// the event (synchronize, query, or a synchronize of another stream made to
// wait for it), then the destroys, which must succeed with no misuse. The
// operation and the wait are drawn from the test seed; the jittered run
// (VGPU_JITTER_US) also shakes the order of the runtime's threads. In lax
// mode the destroys succeed anyway; the rounds still run.
static void Strict_SyncThenDestroy(void** state) {
  (void)state;
  void *e = NULL, *dev = NULL, *g = NULL, *node = NULL, *g_host = NULL;
  void* other = NULL;
  OK(api.stream_create(&other, true));
  OK(api.event_create(&e));
  OK(api.malloc(&dev, 256));
  OK(api.graph_create(&g));
  OK(api.graph_add_memset32(&node, g, NULL, 0, dev, 7, 64));
  atomic_int host_calls = 0;
  OK(api.graph_create(&g_host));
  OK(api.graph_add_host(&node, g_host, NULL, 0, count_host_fn, &host_calls));
  uint64_t seed = testutil_seed();
  uint64_t rng = seed ^ 0x9e3779b97f4a7c15ull;
  // Jitter sleeps before each operation: fewer rounds keep the run short.
  const char* jitter = getenv("VGPU_JITTER_US");
  bool jittered = jitter != NULL && *jitter != '\0' && strcmp(jitter, "0");
  unsigned rounds = (jittered ? 500 : 4000) * testutil_stress_scale();
  int host_fn_calls = 0;
  for (unsigned i = 0; i < rounds; ++i) {
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    unsigned op = (unsigned)(rng >> 33) % 4;
    round_wait wait = (round_wait)((rng >> 40) % ROUND_WAIT_COUNT);
    void *s = NULL, *x = NULL;
    OK(api.stream_create(&s, true));
    static const char* const op_names[] = {"memset", "host function",
                                           "memset graph", "host-node graph"};
    switch (op) {
      case 0:
        OK(api.memset32_async(dev, i, 64, s));
        break;
      case 1:
        OK(api.host_fn(s, count_host_fn, &host_calls));
        host_fn_calls++;
        break;
      case 2:
        OK(api.graph_instantiate(&x, g));
        OK(api.graph_launch(x, s));
        break;
      case 3:
        OK(api.graph_instantiate(&x, g_host));
        OK(api.graph_launch(x, s));
        host_fn_calls++;
        break;
    }
    OK(api.event_record(e, s));
    wait_round_event(e, wait, other);
    int rc_exec = x != NULL ? api.graph_exec_destroy(x) : api.ok;
    int rc_stream = api.stream_destroy(s);
    if (rc_exec != api.ok || rc_stream != api.ok) {
      fail_msg(
          "round %u (%s, then %s): graph exec destroy %s, stream destroy %s "
          "(test seed %llu)",
          i, op_names[op], round_wait_names[wait], api.error_name(rc_exec),
          api.error_name(rc_stream), (unsigned long long)seed);
    }
  }
  assert_int_equal(atomic_load(&host_calls), host_fn_calls);
  OK(api.graph_destroy(g));
  OK(api.graph_destroy(g_host));
  OK(api.free(dev));
  OK(api.event_destroy(e));
  OK(api.stream_destroy(other));
}

// Out-of-bounds copies and memsets are refused in both modes.
static void Strict_OutOfBounds(void** state) {
  (void)state;
  void *s = NULL, *dev = NULL;
  uint8_t host[256] = {0};
  OK(api.stream_create(&s, true));
  OK(api.malloc(&dev, 64));
  assert_int_equal(api.htod_async(dev, host, 128, s), api.invalid_value);
  assert_int_equal(api.dtoh_async(host, (uint8_t*)dev + 32, 64, s),
                   api.invalid_value);
  assert_int_equal(api.memset32_async(dev, 0, 17, s), api.invalid_value);
  assert_int_equal(api.memset16(dev, 0, 33), api.invalid_value);
  OK(api.memset32_async(dev, 0, 16, s));  // exactly fits
  OK(api.dtod_async((uint8_t*)dev + 32, dev, 32, s));
  OK(api.stream_sync(s));
  OK(api.free(dev));
  assert_int_equal(api.htod(dev, host, 4), api.invalid_value);  // freed
  OK(api.stream_destroy(s));
}

// Handles are checked, never trusted: garbage, destroyed and wrong-kind
// handles return the vendor code.
static void Strict_InvalidHandles(void** state) {
  (void)state;
  void *s = NULL, *e = NULL;
  OK(api.stream_create(&s, true));
  OK(api.event_create(&e));
  static const uintptr_t garbage[] = {0x10, 0xdeadbeef, UINTPTR_MAX,
                                      0x5600000000000001ull};
  for (size_t i = 0; i < sizeof(garbage) / sizeof(garbage[0]); ++i) {
    void* h = (void*)garbage[i];
    assert_int_equal(api.stream_sync(h), api.invalid_handle);
    assert_int_equal(api.stream_query(h), api.invalid_handle);
    assert_int_equal(api.event_query(h), api.invalid_handle);
    assert_int_equal(api.event_record(h, s), api.invalid_handle);
    assert_int_equal(api.stream_wait_event(s, h), api.invalid_handle);
    assert_int_equal(api.graph_exec_destroy(h), api.invalid_handle);
  }
  assert_int_equal(api.stream_query(e), api.invalid_handle);
  assert_int_equal(api.event_query(s), api.invalid_handle);
  OK(api.event_destroy(e));
  OK(api.stream_destroy(s));
  assert_int_equal(api.event_record(e, NULL), api.invalid_handle);
  assert_int_equal(api.host_fn(s, gate_host_fn, NULL), api.invalid_handle);
}

// Stream-ordered memory reached outside its life: each misuse reported
// (strict) and refused or skipped (both modes), so no host memory is
// touched after it went back.
static void Strict_StreamOrderedLifetime(void** state) {
  (void)state;
  void *s1 = NULL, *s2 = NULL, *plain = NULL, *p = NULL;
  gate g;
  OK(api.stream_create(&s1, true));
  OK(api.stream_create(&s2, true));
  uint32_t host = 0;

  // Used on another stream before its allocation ran: skipped.
  gate_init(&g);
  OK(api.host_fn(s1, gate_host_fn, &g));
  OK(api.malloc_async(&p, 256, NULL, s1));
  host = 1;
  capture_begin();
  OK(api.memset32_async(p, 9, 64, s2));
  OK(api.dtoh_async(&host, p, 4, s2));
  OK(api.stream_sync(s2));
  char* out = capture_end();
  if (strict)
    assert_non_null(strstr(out, "before its stream-ordered allocation ran"));
  free(out);
  assert_int_equal(host, 1);  // skipped: never written
  gate_open(&g);
  OK(api.stream_sync(s1));
  gate_destroy(&g);

  // Queued after its free was queued: refused at the call.
  gate_init(&g);
  OK(api.host_fn(s1, gate_host_fn, &g));
  OK(api.free_async(p, s1));
  assert_int_equal(api.memset32_async(p, 1, 64, s2), api.invalid_value);
  assert_int_equal(api.free_async(p, s1), api.invalid_value);  // double
  gate_open(&g);
  OK(api.stream_sync(s1));
  gate_destroy(&g);
  // After the free ran: freed memory.
  assert_int_equal(api.memset32_async(p, 1, 64, s2), api.invalid_value);

  // The free runs while another stream's use is still queued: reported;
  // the use is skipped when it comes.
  OK(api.malloc_async(&p, 256, NULL, s1));
  OK(api.stream_sync(s1));
  gate_init(&g);
  OK(api.host_fn(s2, gate_host_fn, &g));
  OK(api.memset32_async(p, 3, 64, s2));
  capture_begin();
  OK(api.free_async(p, s1));
  OK(api.stream_sync(s1));
  gate_open(&g);
  OK(api.stream_sync(s2));
  out = capture_end();
  if (strict) {
    assert_non_null(strstr(out, "still use it"));
    assert_non_null(strstr(out, "after its stream-ordered free ran"));
  }
  free(out);
  gate_destroy(&g);

  // Memory not from a pool is not freed in stream order.
  OK(api.malloc(&plain, 256));
  assert_int_equal(api.free_async(plain, s1), api.invalid_value);
  OK(api.free(plain));
  OK(api.stream_destroy(s2));
  OK(api.stream_destroy(s1));
}

// The test list: CASE binds this program's fixture.
#define CASE(name) cmocka_unit_test_setup(name, setup)

int main(int argc, char** argv) {
  const char* only = testutil_setup(argc, argv);
  const char* env = getenv("VGPU_STRICT");
  strict = env == NULL || strcmp(env, "0") != 0;
  const struct CMUnitTest tests[] = {
      CASE(K1_CallInHostFunction),        CASE(Strict_DestroyWithPendingWork),
      CASE(Strict_FreeMemoryInUse),       CASE(Strict_SyncThenDestroy),
      CASE(Strict_OutOfBounds),           CASE(Strict_InvalidHandles),
      CASE(Strict_StreamOrderedLifetime),
  };
  return testutil_run(strict ? "strict" : "lax", tests,
                      sizeof(tests) / sizeof(tests[0]), only);
}
