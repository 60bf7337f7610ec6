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
static void t_k1_call_in_host_function(void** state) {
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
static void t_destroy_with_pending_work(void** state) {
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
static void t_free_memory_in_use(void** state) {
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

// Out-of-bounds copies and memsets are refused in both modes.
static void t_out_of_bounds(void** state) {
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
static void t_invalid_handles(void** state) {
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

int main(int argc, char** argv) {
  const char* only = testutil_setup(argc, argv);
  const char* env = getenv("VGPU_STRICT");
  strict = env == NULL || strcmp(env, "0") != 0;
  const struct CMUnitTest all[] = {
      cmocka_unit_test_setup(t_k1_call_in_host_function, setup),
      cmocka_unit_test_setup(t_destroy_with_pending_work, setup),
      cmocka_unit_test_setup(t_free_memory_in_use, setup),
      cmocka_unit_test_setup(t_out_of_bounds, setup),
      cmocka_unit_test_setup(t_invalid_handles, setup),
  };
  if (only != NULL)
    cmocka_set_test_filter(only);
  int failed =
      cmocka_run_group_tests_name(strict ? "strict" : "lax", all, NULL, NULL);
  testutil_teardown();
  return failed;
}
