// Fidelity of the virtual GPU to the vendor semantics, through the vendor
// API of the built library (CUDA or HIP, chosen on the command line): stream
// order, concurrency of independent streams, events, host functions, graphs,
// memsets, kernels, bad input. Run plain and under schedule shaking
// (VGPU_JITTER_US, VGPU_STREAM_THREADS) by meson.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
// cmocka after the standard headers it needs.
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "vgpu/vgpu_module.h"

#define OK(expr) assert_int_equal((expr), api.ok)

static int setup(void** state) {
  (void)state;
  return api.init(0) == api.ok ? 0 : -1;
}

// With VGPU_STREAM_THREADS=1 a host function that blocks holds the only
// worker: tests that need another stream to progress meanwhile are skipped
// (the knobs test checks that serialization itself).
static bool one_worker(void) {
  const char* threads = getenv("VGPU_STREAM_THREADS");
  return threads != NULL && atoi(threads) == 1;
}

// Appends |index| to a shared log (host functions).
typedef struct order_log {
  atomic_int count;
  int entries[256];
} order_log;

typedef struct order_entry {
  order_log* log;
  int value;
} order_entry;

static void log_host_fn(void* arg) {
  order_entry* e = arg;
  int i = atomic_fetch_add(&e->log->count, 1);
  if (i < 256)
    e->log->entries[i] = e->value;
}

// Copies and memsets on one stream run in order; host functions too.
static void Fidelity_StreamOrder(void** state) {
  (void)state;
  enum { N = 64 };
  void* s = NULL;
  void* dev = NULL;
  OK(api.stream_create(&s, true));
  OK(api.malloc(&dev, sizeof(uint32_t)));
  uint32_t host[N];
  memset(host, 0xff, sizeof(host));
  order_log log;
  memset(&log, 0, sizeof(log));
  order_entry entries[N];
  for (int i = 0; i < N; ++i) {
    OK(api.memset32_async(dev, (uint32_t)i * 3u, 1, s));
    OK(api.dtoh_async(&host[i], dev, sizeof(uint32_t), s));
    entries[i] = (order_entry){&log, i};
    OK(api.host_fn(s, log_host_fn, &entries[i]));
  }
  OK(api.stream_sync(s));
  OK(api.stream_query(s));
  for (int i = 0; i < N; ++i) {
    assert_int_equal(host[i], (uint32_t)i * 3u);
    assert_int_equal(log.entries[i], i);
  }
  assert_int_equal(atomic_load(&log.count), N);
  OK(api.free(dev));
  OK(api.stream_destroy(s));
}

typedef struct rendezvous {
  gate g;
  atomic_int other_ran;
} rendezvous;

static void set_flag_host_fn(void* arg) {
  rendezvous* r = arg;
  atomic_store(&r->other_ran, 1);
  gate_open(&r->g);
}

// A host function blocked on stream A does not hold up stream B: B's host
// function opens A's gate. Serialized streams would time out.
static void Fidelity_IndependentStreamsConcurrent(void** state) {
  (void)state;
  if (one_worker()) {
    printf(
        "[  SKIP    ] needs two stream workers (VGPU_STREAM_THREADS=1 "
        "serializes streams)\n");
    skip();
  }
  void *a = NULL, *b = NULL;
  OK(api.stream_create(&a, true));
  OK(api.stream_create(&b, true));
  rendezvous r;
  gate_init(&r.g);
  atomic_init(&r.other_ran, 0);
  uint64_t t0 = testutil_now_ms();
  OK(api.host_fn(a, gate_host_fn, &r.g));
  OK(api.host_fn(b, set_flag_host_fn, &r));
  OK(api.stream_sync(a));
  OK(api.stream_sync(b));
  assert_int_equal(atomic_load(&r.other_ran), 1);
  assert_true(testutil_now_ms() - t0 < 8000);  // not the gate's timeout
  gate_destroy(&r.g);
  OK(api.stream_destroy(a));
  OK(api.stream_destroy(b));
}

// The stream scheduler under churn: streams that run dry and are listed
// again (the posting path), streams that re-list themselves after each op
// (the worker keeps them, no post), and streams released from a wait on
// another stream's event (the waiter path), in seeded random mixes. Every
// host function checks that it runs in its stream's order; every round
// ends with a device synchronize, which a stream left listed while every
// worker sleeps turns into a hang (the test's timeout).
enum { kChurnStreams = 12, kChurnOpsMax = 8 };

typedef struct churn_op {
  atomic_int* counter;
  int expected;
  atomic_int* wrong;
} churn_op;

static void churn_host_fn(void* arg) {
  churn_op* op = arg;
  if (atomic_fetch_add(op->counter, 1) != op->expected)
    atomic_fetch_add(op->wrong, 1);
}

static void Fidelity_SchedulerChurnLosesNoStream(void** state) {
  (void)state;
  uint64_t seed = testutil_seed();
  unsigned rounds = 200 * testutil_stress_scale();
  void* streams[kChurnStreams];
  void* events[kChurnStreams];
  atomic_int counters[kChurnStreams];
  atomic_int wrong;
  atomic_init(&wrong, 0);
  int expected[kChurnStreams] = {0};
  for (int i = 0; i < kChurnStreams; ++i) {
    OK(api.stream_create(&streams[i], true));
    OK(api.event_create(&events[i]));
    atomic_init(&counters[i], 0);
  }
  churn_op* ops = calloc(kChurnStreams * kChurnOpsMax, sizeof(*ops));
  assert_non_null(ops);
  uint64_t x = seed | 1;
  for (unsigned round = 0; round < rounds; ++round) {
    for (int i = 0; i < kChurnStreams; ++i) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;  // xorshift64
      int n = 1 + (int)(x % kChurnOpsMax);
      if (x % 3 == 0) {  // wait on another stream's latest work first
        int other = (int)((x >> 8) % kChurnStreams);
        if (other != i) {
          OK(api.event_record(events[other], streams[other]));
          OK(api.stream_wait_event(streams[i], events[other]));
        }
      }
      for (int k = 0; k < n; ++k) {
        churn_op* op = &ops[i * kChurnOpsMax + k];
        *op = (churn_op){&counters[i], expected[i]++, &wrong};
        OK(api.host_fn(streams[i], churn_host_fn, op));
      }
    }
    OK(api.device_sync());
    for (int i = 0; i < kChurnStreams; ++i)
      assert_int_equal(atomic_load(&counters[i]), expected[i]);
  }
  assert_int_equal(atomic_load(&wrong), 0);
  printf("[          ] %u rounds over %d streams, seed %llu\n", rounds,
         kChurnStreams, (unsigned long long)seed);
  free(ops);
  for (int i = 0; i < kChurnStreams; ++i) {
    OK(api.event_destroy(events[i]));
    OK(api.stream_destroy(streams[i]));
  }
}

// Record captures the work queued before it; query is not-ready until that
// work is done; synchronize waits for it.
static void Fidelity_EventRecordQuerySync(void** state) {
  (void)state;
  void *s = NULL, *e = NULL, *never = NULL;
  OK(api.stream_create(&s, true));
  OK(api.event_create(&e));
  OK(api.event_create(&never));
  OK(api.event_query(never));  // never recorded: complete
  OK(api.event_sync(never));
  gate g;
  gate_init(&g);
  OK(api.host_fn(s, gate_host_fn, &g));
  OK(api.event_record(e, s));
  assert_int_equal(api.event_query(e), api.not_ready);
  assert_int_equal(api.stream_query(s), api.not_ready);
  gate_open(&g);
  OK(api.event_sync(e));
  OK(api.event_query(e));
  OK(api.stream_sync(s));
  gate_destroy(&g);
  OK(api.event_destroy(e));
  OK(api.event_destroy(never));
  OK(api.stream_destroy(s));
}

typedef struct ran_flag {
  atomic_int ran;
} ran_flag;

static void mark_ran(void* arg) {
  atomic_store(&((ran_flag*)arg)->ran, 1);
}

// Stream-wait-event waits for the record current at call time, not for a
// later re-record of the same event.
static void Fidelity_WaitEventUsesRecordAtCallTime(void** state) {
  (void)state;
  if (one_worker()) {
    printf(
        "[  SKIP    ] needs two stream workers (VGPU_STREAM_THREADS=1 "
        "serializes streams)\n");
    skip();
  }
  void *a = NULL, *b = NULL, *c = NULL, *e = NULL;
  OK(api.stream_create(&a, true));
  OK(api.stream_create(&b, true));
  OK(api.stream_create(&c, true));
  OK(api.event_create(&e));
  gate g;
  gate_init(&g);
  OK(api.host_fn(a, gate_host_fn, &g));
  OK(api.event_record(e, a));  // record 1: behind the gate
  OK(api.stream_wait_event(b, e));
  ran_flag flag = {0};
  OK(api.host_fn(b, mark_ran, &flag));
  OK(api.event_record(e, c));  // record 2 on an idle stream: done at once
  OK(api.stream_sync(c));
  OK(api.event_sync(e));
  testutil_sleep_ms(50);
  assert_int_equal(atomic_load(&flag.ran), 0);  // still waits for record 1
  gate_open(&g);
  OK(api.stream_sync(b));
  assert_int_equal(atomic_load(&flag.ran), 1);
  OK(api.stream_sync(a));
  gate_destroy(&g);
  OK(api.event_destroy(e));
  OK(api.stream_destroy(a));
  OK(api.stream_destroy(b));
  OK(api.stream_destroy(c));
}

// Waiting on an event that was never recorded does not block (T4: this is
// why drivers must not do it).
static void Fidelity_NeverRecordedEventDoesNotBlock(void** state) {
  (void)state;
  void *s = NULL, *e = NULL;
  OK(api.stream_create(&s, true));
  OK(api.event_create(&e));
  OK(api.stream_wait_event(s, e));
  ran_flag flag = {0};
  OK(api.host_fn(s, mark_ran, &flag));
  uint64_t t0 = testutil_now_ms();
  OK(api.stream_sync(s));
  assert_int_equal(atomic_load(&flag.ran), 1);
  assert_true(testutil_now_ms() - t0 < 5000);
  OK(api.event_destroy(e));
  OK(api.stream_destroy(s));
}

// Host nodes record their order; D depends on B and C, which depend on A.
static void Fidelity_GraphDependencyOrder(void** state) {
  (void)state;
  void *s = NULL, *g = NULL, *exec = NULL, *dev = NULL;
  OK(api.stream_create(&s, true));
  OK(api.malloc(&dev, 16 * sizeof(uint32_t)));
  OK(api.graph_create(&g));
  order_log log;
  memset(&log, 0, sizeof(log));
  order_entry ea = {&log, 'A'}, eb = {&log, 'B'}, ec = {&log, 'C'},
              ed = {&log, 'D'};
  void *na, *nb, *nc, *nd, *nset, *ncopy;
  OK(api.graph_add_host(&na, g, NULL, 0, log_host_fn, &ea));
  OK(api.graph_add_host(&nb, g, &na, 1, log_host_fn, &eb));
  OK(api.graph_add_host(&nc, g, &na, 1, log_host_fn, &ec));
  void* bc[2] = {nb, nc};
  OK(api.graph_add_host(&nd, g, bc, 2, log_host_fn, &ed));
  uint32_t host[16];
  memset(host, 0, sizeof(host));
  OK(api.graph_add_memset32(&nset, g, NULL, 0, dev, 0x5a5a5a5au, 16));
  OK(api.graph_add_dtoh(&ncopy, g, &nset, 1, host, dev, sizeof(host)));
  OK(api.graph_instantiate(&exec, g));
  enum { LAUNCHES = 8 };
  for (int i = 0; i < LAUNCHES; ++i)
    OK(api.graph_launch(exec, s));
  OK(api.stream_sync(s));
  assert_int_equal(atomic_load(&log.count), 4 * LAUNCHES);
  for (int i = 0; i < LAUNCHES; ++i) {
    const int* e = &log.entries[4 * i];
    assert_int_equal(e[0], 'A');
    assert_int_equal(e[3], 'D');
    assert_true((e[1] == 'B' && e[2] == 'C') || (e[1] == 'C' && e[2] == 'B'));
  }
  for (int i = 0; i < 16; ++i)
    assert_int_equal(host[i], 0x5a5a5a5au);
  OK(api.graph_exec_destroy(exec));
  OK(api.graph_destroy(g));
  OK(api.free(dev));
  OK(api.stream_destroy(s));
}

typedef struct overlap {
  atomic_int inside;
  atomic_int max_inside;
  atomic_int runs;
} overlap;

static void overlap_host_fn(void* arg) {
  overlap* o = arg;
  int now = atomic_fetch_add(&o->inside, 1) + 1;
  int max = atomic_load(&o->max_inside);
  while (now > max &&
         !atomic_compare_exchange_weak(&o->max_inside, &max, now)) {
  }
  testutil_sleep_ms(5);
  atomic_fetch_sub(&o->inside, 1);
  atomic_fetch_add(&o->runs, 1);
}

// Launches of one executable graph on different streams never overlap.
static void Fidelity_GraphLaunchesSerialized(void** state) {
  (void)state;
  void *a = NULL, *b = NULL, *g = NULL, *exec = NULL, *n = NULL;
  OK(api.stream_create(&a, true));
  OK(api.stream_create(&b, true));
  OK(api.graph_create(&g));
  overlap o;
  memset(&o, 0, sizeof(o));
  OK(api.graph_add_host(&n, g, NULL, 0, overlap_host_fn, &o));
  OK(api.graph_instantiate(&exec, g));
  for (int i = 0; i < 4; ++i) {
    OK(api.graph_launch(exec, a));
    OK(api.graph_launch(exec, b));
  }
  OK(api.stream_sync(a));
  OK(api.stream_sync(b));
  assert_int_equal(atomic_load(&o.runs), 8);
  assert_int_equal(atomic_load(&o.max_inside), 1);
  OK(api.graph_exec_destroy(exec));
  OK(api.graph_destroy(g));
  OK(api.stream_destroy(a));
  OK(api.stream_destroy(b));
}

// memset node + copy node graph with value |v|.
static void* make_fill_graph(void* dev, uint32_t* host, uint32_t v,
                             bool extra_node, bool swap_type) {
  void *g = NULL, *n1 = NULL, *n2 = NULL, *n3 = NULL;
  OK(api.graph_create(&g));
  if (swap_type) {
    OK(api.graph_add_empty(&n1, g, NULL, 0));
  } else {
    OK(api.graph_add_memset32(&n1, g, NULL, 0, dev, v, 4));
  }
  OK(api.graph_add_dtoh(&n2, g, &n1, 1, host, dev, 4 * sizeof(uint32_t)));
  if (extra_node)
    OK(api.graph_add_empty(&n3, g, &n2, 1));
  return g;
}

// Update is accepted from a topologically identical graph (new parameters
// apply to later launches) and refused otherwise.
static void Fidelity_GraphUpdate(void** state) {
  (void)state;
  void *s = NULL, *dev = NULL, *exec = NULL;
  uint32_t host[4] = {0};
  OK(api.stream_create(&s, true));
  OK(api.malloc(&dev, 4 * sizeof(uint32_t)));
  void* g1 = make_fill_graph(dev, host, 1, false, false);
  void* g2 = make_fill_graph(dev, host, 2, false, false);
  void* g3 = make_fill_graph(dev, host, 3, true, false);
  void* g4 = make_fill_graph(dev, host, 4, false, true);
  OK(api.graph_instantiate(&exec, g1));
  OK(api.graph_launch(exec, s));
  OK(api.stream_sync(s));
  assert_int_equal(host[3], 1);
  OK(api.graph_exec_update(exec, g2));
  OK(api.graph_launch(exec, s));
  OK(api.stream_sync(s));
  assert_int_equal(host[3], 2);
  assert_int_equal(api.graph_exec_update(exec, g3), api.update_failure);
  assert_int_equal(api.graph_exec_update(exec, g4), api.update_failure);
  OK(api.graph_launch(exec, s));  // still the accepted parameters
  OK(api.stream_sync(s));
  assert_int_equal(host[0], 2);
  OK(api.graph_exec_destroy(exec));
  OK(api.graph_destroy(g1));
  OK(api.graph_destroy(g2));
  OK(api.graph_destroy(g3));
  OK(api.graph_destroy(g4));
  OK(api.free(dev));
  OK(api.stream_destroy(s));
}

// 8-, 16- and 32-bit memsets write exactly their elements, sync and async.
static void Fidelity_MemsetElementSizes(void** state) {
  (void)state;
  void *s = NULL, *dev = NULL;
  OK(api.stream_create(&s, true));
  OK(api.malloc(&dev, 64));
  uint8_t host[64];
  OK(api.memset8(dev, 0x11, 64));
  OK(api.memset16((uint8_t*)dev + 8, 0xA1B2, 4));            // bytes 8..15
  OK(api.memset32((uint8_t*)dev + 16, 0xC1D2E3F4u, 2));      // bytes 16..23
  OK(api.memset8_async((uint8_t*)dev + 32, 0x22, 3, s));     // 32..34
  OK(api.memset16_async((uint8_t*)dev + 40, 0x3344, 1, s));  // 40..41
  OK(api.memset32_async((uint8_t*)dev + 48, 0x55667788u, 1, s));  // 48..51
  OK(api.stream_sync(s));
  OK(api.dtoh(host, dev, 64));
  for (int i = 0; i < 64; ++i) {
    uint8_t want = 0x11;
    if (i >= 8 && i < 16)
      want = (i % 2 == 0) ? 0xB2 : 0xA1;
    if (i >= 16 && i < 24) {
      static const uint8_t w[4] = {0xF4, 0xE3, 0xD2, 0xC1};
      want = w[i % 4];
    }
    if (i >= 32 && i < 35)
      want = 0x22;
    if (i == 40)
      want = 0x44;
    if (i == 41)
      want = 0x33;
    if (i >= 48 && i < 52) {
      static const uint8_t w[4] = {0x88, 0x77, 0x66, 0x55};
      want = w[i % 4];
    }
    assert_int_equal(host[i], want);
  }
  OK(api.free(dev));
  OK(api.stream_destroy(s));
}

// A kernel from a module image runs over the grid; arguments are captured
// at launch; per-block kernels get dynamic shared memory; kernel nodes work.
static void Fidelity_KernelLaunch(void** state) {
  (void)state;
  void* image = testutil_module_image();
  assert_non_null(image);
  void *m = NULL, *fill = NULL, *sum = NULL, *add = NULL, *s = NULL;
  OK(api.module_load_data(&m, image));
  free(image);
  OK(api.module_get_function(&fill, m, "fill_u32"));
  OK(api.module_get_function(&sum, m, "block_sum"));
  OK(api.module_get_function(&add, m, "add_u32"));
  void* missing = NULL;
  assert_int_equal(api.module_get_function(&missing, m, "no_such_kernel"),
                   api.not_found);
  OK(api.stream_create(&s, true));
  enum { N = 1000 };
  void *buf = NULL, *sums = NULL;
  OK(api.malloc(&buf, N * sizeof(uint32_t)));
  OK(api.malloc(&sums, 8 * sizeof(uint32_t)));
  uint32_t value = 7, n = N, delta = 5;
  void* params[3] = {&buf, &value, &n};
  OK(api.launch(fill, (N + 127) / 128, 128, 0, s, params));
  value = 99;  // captured at launch: no effect
  void* add_params[3] = {&buf, &delta, &n};
  OK(api.launch(add, (N + 255) / 256, 256, 0, s, add_params));
  void* sum_params[2] = {&buf, &sums};
  OK(api.launch(sum, 8, 125, 125 * sizeof(uint32_t), s, sum_params));
  uint32_t host[N], host_sums[8];
  OK(api.dtoh_async(host, buf, sizeof(host), s));
  OK(api.dtoh_async(host_sums, sums, sizeof(host_sums), s));
  OK(api.stream_sync(s));
  for (int i = 0; i < N; ++i)
    assert_int_equal(host[i], 12);
  for (int i = 0; i < 8; ++i)
    assert_int_equal(host_sums[i], 125 * 12);
  // The same kernel as a graph node.
  void *g = NULL, *node = NULL, *exec = NULL;
  OK(api.graph_create(&g));
  OK(api.graph_add_kernel(&node, g, NULL, 0, add, (N + 63) / 64, 64,
                          add_params));
  OK(api.graph_instantiate(&exec, g));
  OK(api.graph_launch(exec, s));
  OK(api.graph_launch(exec, s));
  OK(api.dtoh_async(host, buf, sizeof(host), s));
  OK(api.stream_sync(s));
  for (int i = 0; i < N; ++i)
    assert_int_equal(host[i], 22);
  // Bad launches.
  assert_int_equal(api.launch(fill, 1, 2048, 0, s, params), api.invalid_value);
  assert_int_equal(api.launch(fill, 1, 1, 0, s, NULL), api.invalid_value);
  assert_int_equal(api.launch((void*)(uintptr_t)0x1234, 1, 1, 0, s, params),
                   api.invalid_handle);
  OK(api.graph_exec_destroy(exec));
  OK(api.graph_destroy(g));
  OK(api.free(buf));
  OK(api.free(sums));
  OK(api.stream_destroy(s));
  OK(api.module_unload(m));
  assert_int_equal(api.launch(fill, 1, 1, 0, NULL, params),
                   api.invalid_handle);  // function of an unloaded module
}

// Each device has one UUID, the same through either facade (this body runs
// on both, against one expected value) and in every run, distinct per
// device; a device that does not exist is the vendor's invalid device.
static void Fidelity_DeviceUuid(void** state) {
  (void)state;
  static const uint8_t expected[2][16] = {
      {'v', 'g', 'p', 'u', '-', 'd', 'e', 'v', 0, 0, 0, 0, 0, 0, 0, 0},
      {'v', 'g', 'p', 'u', '-', 'd', 'e', 'v', 0, 0, 0, 0, 0, 0, 0, 1},
  };
  int count = 0;
  OK(api.device_count(&count));
  assert_int_equal(count, 2);
  for (int i = 0; i < count; ++i) {
    uint8_t uuid[16];
    OK(api.device_uuid(i, uuid));
    assert_memory_equal(uuid, expected[i], 16);
    uint8_t again[16];
    OK(api.device_uuid(i, again));
    assert_memory_equal(again, uuid, 16);
  }
  uint8_t uuid[16];
  assert_int_equal(api.device_uuid(count, uuid), api.invalid_device);
  assert_int_equal(api.device_uuid(-1, uuid), api.invalid_device);
}

// Invalid handles and values return the vendor codes, never crash.
static void Fidelity_BadInput(void** state) {
  (void)state;
  void *s = NULL, *e = NULL, *dev = NULL;
  void* garbage = (void*)(uintptr_t)0xdeadbeef;
  OK(api.stream_create(&s, true));
  OK(api.event_create(&e));
  OK(api.stream_destroy(s));
  assert_int_equal(api.stream_sync(s), api.invalid_handle);  // destroyed
  assert_int_equal(api.stream_destroy(s), api.invalid_handle);
  assert_int_equal(api.stream_query(garbage), api.invalid_handle);
  assert_int_equal(api.stream_sync(e), api.invalid_handle);  // wrong kind
  assert_int_equal(api.event_query(garbage), api.invalid_handle);
  assert_int_equal(api.event_record(e, garbage), api.invalid_handle);
  assert_int_equal(api.stream_wait_event(NULL, garbage), api.invalid_handle);
  OK(api.event_destroy(e));
  assert_int_equal(api.event_sync(e), api.invalid_handle);
  assert_int_equal(api.stream_create(NULL, false), api.invalid_value);
  assert_int_equal(api.event_create(NULL), api.invalid_value);
  assert_int_equal(api.malloc(NULL, 16), api.invalid_value);
  assert_int_equal(api.graph_launch(garbage, NULL), api.invalid_handle);
  assert_int_equal(api.graph_destroy(garbage), api.invalid_handle);
  assert_int_equal(api.module_unload(garbage), api.invalid_handle);
  assert_int_equal(api.free(garbage), api.invalid_value);
  OK(api.malloc(&dev, 64));
  assert_int_equal(api.htod(dev, &s, 65), api.invalid_value);  // bounds
  assert_int_equal(api.free((uint8_t*)dev + 8), api.invalid_value);
  OK(api.free(dev));
  assert_int_equal(api.free(dev), api.invalid_value);  // double free
  assert_int_equal(api.init(99), api.invalid_device);
  OK(api.init(0));
  assert_string_not_equal(api.error_name(api.invalid_handle), "?");
  // A module header announcing fewer bytes than its ELF's headers name:
  // refused, never mapped short (dlopen would fault past the bytes).
  uint8_t* image = testutil_module_image();
  assert_non_null(image);
  vgpu_module_header h;
  memcpy(&h, image, sizeof(h));
  h.image_size /= 2;
  memcpy(image, &h, sizeof(h));
  void* m = NULL;
  assert_int_equal(api.module_load_data(&m, image), api.invalid_image);
  h.image_size = 40;  // not even an ELF header
  memcpy(image, &h, sizeof(h));
  assert_int_equal(api.module_load_data(&m, image), api.invalid_image);
  free(image);
}

// Stream-ordered allocation: memory allocated, used and freed in stream
// order reads back what was written; a free queued on a stream gives its
// block to the next allocation of the same size on that stream (so a loop
// of them holds one block); an idle block is kept under the release
// threshold and given back above it; another stream reaches the memory in
// order through an event; a pool of its own behaves the same.
static void Fidelity_StreamOrderedAllocation(void** state) {
  (void)state;
  void *s = NULL, *s2 = NULL, *e = NULL, *pool = NULL;
  OK(api.stream_create(&s, true));
  OK(api.stream_create(&s2, true));
  OK(api.event_create(&e));
  OK(api.pool_default(&pool, 0));
  enum { kBytes = 3000, kWords = kBytes / 4 };
  uint32_t host[kWords];

  // Alloc, fill, copy out, free: all queued, one synchronize.
  void* a = NULL;
  OK(api.malloc_async(&a, kBytes, NULL, s));
  assert_non_null(a);
  OK(api.memset32_async(a, 0x5eed, kWords, s));
  OK(api.dtoh_async(host, a, sizeof(host), s));
  OK(api.free_async(a, s));
  OK(api.stream_sync(s));
  for (int i = 0; i < kWords; ++i)
    assert_int_equal(host[i], 0x5eed);

  // A loop on one stream holds one block: the previous free's, taken while
  // still queued, or (once it ran and went back) a new one.
  uint64_t reserved = 0, used = 0;
  for (int i = 0; i < 200; ++i) {
    void* p = NULL;
    OK(api.malloc_async(&p, kBytes, NULL, s));
    OK(api.pool_attr(pool, 0, &reserved));
    assert_true(reserved <= 4096);
    OK(api.memset32_async(p, (uint32_t)i, kWords, s));
    OK(api.free_async(p, s));
  }
  OK(api.stream_sync(s));
  // Default threshold 0: the idle block went back to the device.
  OK(api.pool_attr(pool, 0, &reserved));
  OK(api.pool_attr(pool, 1, &used));
  assert_int_equal(used, 0);
  assert_int_equal(reserved, 0);

  // Under a threshold an idle block is kept and handed out again.
  OK(api.pool_set_threshold(pool, 1u << 20));
  OK(api.malloc_async(&a, kBytes, NULL, s));
  OK(api.free_async(a, s));
  OK(api.stream_sync(s));
  OK(api.pool_attr(pool, 0, &reserved));
  assert_int_equal(reserved, 4096);
  void* again = NULL;
  OK(api.malloc_async(&again, kBytes, NULL, s2));
  assert_ptr_equal(again, a);
  OK(api.pool_attr(pool, 1, &used));
  assert_int_equal(used, 4096);

  // Another stream, ordered by an event: fill on s2, read and free on s.
  OK(api.memset32_async(again, 0xabcd, kWords, s2));
  OK(api.event_record(e, s2));
  OK(api.stream_wait_event(s, e));
  memset(host, 0, sizeof(host));
  OK(api.dtoh_async(host, again, sizeof(host), s));
  OK(api.free_async(again, s));
  OK(api.stream_sync(s));
  for (int i = 0; i < kWords; ++i)
    assert_int_equal(host[i], 0xabcd);
  OK(api.pool_trim(pool, 0));
  OK(api.pool_attr(pool, 0, &reserved));
  assert_int_equal(reserved, 0);
  OK(api.pool_set_threshold(pool, 0));

  // A pool of its own; destroying it with nothing outstanding.
  void* own = NULL;
  OK(api.pool_create(&own, 0));
  OK(api.malloc_async(&a, 100, own, s));
  OK(api.memset8_async(a, 7, 100, s));
  OK(api.dtoh_async(host, a, 100, s));
  OK(api.free_async(a, s));
  OK(api.stream_sync(s));
  assert_int_equal(((uint8_t*)host)[99], 7);
  OK(api.pool_destroy(own));
  // The default pool cannot be destroyed; zero bytes is refused.
  assert_int_equal(api.pool_destroy(pool), api.invalid_value);
  assert_int_equal(api.malloc_async(&a, 0, NULL, s), api.invalid_value);

  OK(api.event_destroy(e));
  OK(api.stream_destroy(s2));
  OK(api.stream_destroy(s));
}

// The test list: CASE binds this program's fixture.
#define CASE(name) cmocka_unit_test_setup(name, setup)

int main(int argc, char** argv) {
  const char* only = testutil_setup(argc, argv);
  const struct CMUnitTest tests[] = {
      CASE(Fidelity_StreamOrder),
      CASE(Fidelity_IndependentStreamsConcurrent),
      CASE(Fidelity_SchedulerChurnLosesNoStream),
      CASE(Fidelity_EventRecordQuerySync),
      CASE(Fidelity_WaitEventUsesRecordAtCallTime),
      CASE(Fidelity_NeverRecordedEventDoesNotBlock),
      CASE(Fidelity_GraphDependencyOrder),
      CASE(Fidelity_GraphLaunchesSerialized),
      CASE(Fidelity_GraphUpdate),
      CASE(Fidelity_MemsetElementSizes),
      CASE(Fidelity_KernelLaunch),
      CASE(Fidelity_BadInput),
      CASE(Fidelity_DeviceUuid),
      CASE(Fidelity_StreamOrderedAllocation),
  };
  return testutil_run(api.name, tests, sizeof(tests) / sizeof(tests[0]), only);
}
