// Copyright 2026 The HAL Authors.
//
// The adapter against the virtual GPU (libvgpu-cuda.so, libvgpu-hip.so and
// libvgpu-hip-legacy.so, the export set of Debian's HIP 5.2.3): a small
// round trip through every op family the stream drivers use, and a graph
// when the runtime has graphs. One program; meson.build runs it once per
// library with GPU_ADAPTER_TEST_VENDOR ("cuda" or "hip") and
// GPU_ADAPTER_TEST_LIBRARY.

#include <dlfcn.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "adapter.h"
#include "hal/time.h"
#include "hal_test.h"

enum { kElements = 1024, kBytes = kElements * 4 };

typedef struct fixture_t {
  gpu_adapter_t* adapter;
  gpu_context_t* context;
  gpu_stream_t stream;
  gpu_device_ptr_t device_memory;
  uint8_t* host;  // pinned, kBytes
} fixture_t;

static atomic_int g_host_calls;

// Runs on a runtime thread: no vendor call, no blocking (Q1).
static void count_host_call(void* user_data) {
  atomic_fetch_add_explicit((atomic_int*)user_data, 1, memory_order_release);
}

static int setup(void** state) {
  const char* vendor = getenv("GPU_ADAPTER_TEST_VENDOR");
  const char* library = getenv("GPU_ADAPTER_TEST_LIBRARY");
  if (!vendor || !library) {
    fprintf(stderr, "GPU_ADAPTER_TEST_VENDOR/LIBRARY not set\n");
    return -1;
  }
  fixture_t* f = calloc(1, sizeof(*f));
  gpu_adapter_options_t options = {.library = library, .hide_symbols = NULL};
  HAL_ASSERT_OK(
      gpu_adapter_create(strcmp(vendor, "cuda") == 0 ? GPU_ADAPTER_VENDOR_CUDA
                                                     : GPU_ADAPTER_VENDOR_HIP,
                         &options, hal_allocator_system(), &f->adapter));
  gpu_adapter_t* a = f->adapter;
  print_message("%s %s: caps 0x%x, missing optional: '%s'\n",
                a->info.vendor_name, a->info.library_path, a->info.capabilities,
                a->info.missing_optional_symbols);
  HAL_ASSERT_OK(a->ops->context_open(a, 0, &f->context));
  HAL_ASSERT_OK(a->ops->make_current(a, f->context));
  HAL_ASSERT_OK(a->ops->stream_create(a, &f->stream));
  HAL_ASSERT_OK(a->ops->device_alloc(a, kBytes, &f->device_memory));
  HAL_ASSERT_OK(a->ops->host_alloc(a, kBytes, (void**)&f->host));
  *state = f;
  return 0;
}

static int teardown(void** state) {
  fixture_t* f = *state;
  gpu_adapter_t* a = f->adapter;
  a->ops->host_free(a, f->host);
  a->ops->device_free(a, f->device_memory);
  a->ops->stream_destroy(a, f->stream);
  a->ops->context_close(a, f->context);
  gpu_adapter_destroy(a);
  free(f);
  return 0;
}

static void Vgpu_Devices(void** state) {
  fixture_t* f = *state;
  gpu_adapter_t* a = f->adapter;
  int count = 0;
  HAL_ASSERT_OK(a->ops->device_count(a, &count));
  assert_true(count >= 1);
  assert_null(a->info.no_device_reason);
  char name[128];
  HAL_ASSERT_OK(a->ops->device_name(a, 0, name, sizeof(name)));
  assert_true(name[0] != 0);
  uint64_t bytes = 0;
  HAL_ASSERT_OK(a->ops->device_total_memory(a, 0, &bytes));
  assert_true(bytes > 0);
  // The virtual GPU's UUID of device 0 (docs/vgpu.md), whichever vendor.
  static const uint8_t kUuid0[GPU_ADAPTER_UUID_SIZE] = {
      'v', 'g', 'p', 'u', '-', 'd', 'e', 'v', 0, 0, 0, 0, 0, 0, 0, 0};
  uint8_t uuid[GPU_ADAPTER_UUID_SIZE];
  HAL_ASSERT_OK(a->ops->device_uuid(a, 0, uuid));
  assert_memory_equal(uuid, kUuid0, sizeof(uuid));
  // A device that does not exist: the vendor's error, named.
  gpu_context_t* context = NULL;
  hal_status_t status = a->ops->context_open(a, count + 5, &context);
  assert_int_equal(hal_status_code(status), HAL_STATUS_INVALID_ARGUMENT);
  assert_non_null(strstr(hal_status_message(status), "failed: "));
  hal_status_free(status);
  assert_null(context);
  memset(uuid, 0xAB, sizeof(uuid));
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT,
                    "failed: ", a->ops->device_uuid(a, count + 5, uuid));
  static const uint8_t kZero[GPU_ADAPTER_UUID_SIZE] = {0};
  assert_memory_equal(uuid, kZero, sizeof(uuid));
}

// memset (8/16/32-bit), copies, an event, a host function, a second stream
// waiting on the event.
static void Vgpu_StreamRoundTrip(void** state) {
  fixture_t* f = *state;
  gpu_adapter_t* a = f->adapter;
  gpu_device_ptr_t d = f->device_memory;
  HAL_ASSERT_OK(
      a->ops->memset_async(a, f->stream, d, 0xA1B2C3D4u, 4, kElements));
  HAL_ASSERT_OK(a->ops->memset_async(a, f->stream, d + 8, 0xBEEFu, 2, 2));
  HAL_ASSERT_OK(a->ops->memset_async(a, f->stream, d + 16, 0x5Au, 1, 3));
  memset(f->host, 0, kBytes);
  HAL_ASSERT_OK(
      a->ops->memcpy_async(a, f->stream, gpu_host_address(f->host), d, kBytes));
  atomic_store(&g_host_calls, 0);
  HAL_ASSERT_OK(
      a->ops->launch_host_func(a, f->stream, count_host_call, &g_host_calls));
  gpu_event_t event = NULL;
  HAL_ASSERT_OK(a->ops->event_create(a, &event));
  HAL_ASSERT_OK(a->ops->event_record(a, event, f->stream));

  gpu_stream_t waiter = NULL;
  HAL_ASSERT_OK(a->ops->stream_create(a, &waiter));
  HAL_ASSERT_OK(a->ops->stream_wait_event(a, waiter, event));
  HAL_ASSERT_OK(a->ops->stream_synchronize(a, waiter));
  HAL_ASSERT_OK(a->ops->event_synchronize(a, event));
  bool ready = false;
  HAL_ASSERT_OK(a->ops->event_query(a, event, &ready));
  assert_true(ready);
  HAL_ASSERT_OK(a->ops->stream_synchronize(a, f->stream));
  bool idle = false;
  HAL_ASSERT_OK(a->ops->stream_query(a, f->stream, &idle));
  assert_true(idle);
  assert_int_equal(atomic_load_explicit(&g_host_calls, memory_order_acquire),
                   1);

  static const uint8_t expected_head[20] = {
      0xD4, 0xC3, 0xB2, 0xA1, 0xD4, 0xC3, 0xB2, 0xA1, 0xEF, 0xBE,
      0xEF, 0xBE, 0xD4, 0xC3, 0xB2, 0xA1, 0x5A, 0x5A, 0x5A, 0xA1};
  assert_memory_equal(f->host, expected_head, sizeof(expected_head));
  assert_int_equal(f->host[kBytes - 1], 0xA1);

  // Synchronous copies: host -> device -> host.
  uint8_t pattern[64];
  for (size_t i = 0; i < sizeof(pattern); ++i)
    pattern[i] = (uint8_t)(i * 7);
  HAL_ASSERT_OK(a->ops->memcpy_sync(a, d + 64, gpu_host_address(pattern),
                                    sizeof(pattern)));
  uint8_t back[64] = {0};
  HAL_ASSERT_OK(
      a->ops->memcpy_sync(a, gpu_host_address(back), d + 64, sizeof(back)));
  assert_memory_equal(back, pattern, sizeof(pattern));

  a->ops->stream_destroy(a, waiter);
  a->ops->event_destroy(a, event);
}

// Stream-ordered memory through a pool of the adapter: allocated, filled,
// copied out and freed on the stream; the pool holds what the release
// threshold lets it keep; the legacy HIP export set has the family too.
static void Vgpu_StreamOrderedAllocation(void** state) {
  fixture_t* f = *state;
  gpu_adapter_t* a = f->adapter;
  assert_true(a->info.capabilities & GPU_ADAPTER_CAP_STREAM_ORDERED_ALLOC);
  gpu_pool_t pool = NULL;
  HAL_ASSERT_OK(a->ops->pool_create(a, f->context, 1u << 20, &pool));
  gpu_device_ptr_t d = 0;
  HAL_ASSERT_OK(a->ops->alloc_async(a, pool, f->stream, kBytes, &d));
  assert_true(d != 0);
  HAL_ASSERT_OK(
      a->ops->memset_async(a, f->stream, d, 0x01020304u, 4, kElements));
  memset(f->host, 0, kBytes);
  HAL_ASSERT_OK(
      a->ops->memcpy_async(a, f->stream, gpu_host_address(f->host), d, kBytes));
  HAL_ASSERT_OK(a->ops->free_async(a, f->stream, d));
  HAL_ASSERT_OK(a->ops->stream_synchronize(a, f->stream));
  assert_int_equal(f->host[0], 0x04);
  assert_int_equal(f->host[kBytes - 1], 0x01);
  uint64_t reserved = 0;
  HAL_ASSERT_OK(a->ops->pool_reserved_bytes(a, pool, &reserved));
  assert_true(reserved >= kBytes);  // kept: under the threshold
  // The same size again reuses it.
  gpu_device_ptr_t again = 0;
  HAL_ASSERT_OK(a->ops->alloc_async(a, pool, f->stream, kBytes, &again));
  assert_true(again == d);
  HAL_ASSERT_OK(a->ops->free_async(a, f->stream, again));
  HAL_ASSERT_OK(a->ops->stream_synchronize(a, f->stream));
  // A trim gives the idle memory back to the device.
  HAL_ASSERT_OK(a->ops->pool_trim(a, pool, 0));
  HAL_ASSERT_OK(a->ops->pool_reserved_bytes(a, pool, &reserved));
  assert_int_equal(reserved, 0);
  a->ops->pool_destroy(a, pool);
}

// Sleeps in stream order: the span between two timed events around it.
static void sleep_host_call(void* user_data) {
  hal_sleep_until(hal_time_now() + *(const int64_t*)user_data);
}

// Timed events time the device: two records around a 20 ms host function
// are at least 20 ms apart and no further apart than the host saw them;
// the order of the arguments gives the sign. An untimed event or one whose
// record is not done yet is refused, clearly.
static void Vgpu_TimedEventsMeasureDeviceTime(void** state) {
  fixture_t* f = *state;
  gpu_adapter_t* a = f->adapter;
  assert_true(a->info.capabilities & GPU_ADAPTER_CAP_EVENT_TIMING);
  gpu_event_t start = NULL, end = NULL, untimed = NULL;
  HAL_ASSERT_OK(a->ops->timed_event_create(a, &start));
  HAL_ASSERT_OK(a->ops->timed_event_create(a, &end));
  HAL_ASSERT_OK(a->ops->event_create(a, &untimed));
  static const int64_t kSleepNs = 20 * 1000 * 1000;
  hal_time_t host_before = hal_time_now();
  HAL_ASSERT_OK(a->ops->event_record(a, start, f->stream));
  HAL_ASSERT_OK(a->ops->launch_host_func(a, f->stream, sleep_host_call,
                                         (void*)&kSleepNs));
  HAL_ASSERT_OK(a->ops->event_record(a, end, f->stream));
  HAL_ASSERT_OK(a->ops->event_record(a, untimed, f->stream));
  float ms = -1.0f;
  hal_status_t early = a->ops->event_elapsed_ms(a, start, end, &ms);
  if (early != HAL_OK) {  // the 20 ms are likely not over yet
    HAL_ASSERT_STATUS(HAL_STATUS_UNAVAILABLE, "ElapsedTime", early);
    assert_true(ms == 0.0f);
  }
  HAL_ASSERT_OK(a->ops->event_synchronize(a, untimed));
  double host_ms = (double)(hal_time_now() - host_before) / 1e6;
  HAL_ASSERT_OK(a->ops->event_elapsed_ms(a, start, end, &ms));
  print_message("device %.3f ms, host %.3f ms\n", ms, host_ms);
  assert_true(ms >= 20.0f - 0.01f);
  assert_true((double)ms <= host_ms + 0.01);
  float back = 0.0f;
  HAL_ASSERT_OK(a->ops->event_elapsed_ms(a, end, start, &back));
  assert_true(back == -ms);
  ms = -1.0f;
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, "ElapsedTime",
                    a->ops->event_elapsed_ms(a, start, untimed, &ms));
  assert_true(ms == 0.0f);
  a->ops->event_destroy(a, untimed);
  a->ops->event_destroy(a, end);
  a->ops->event_destroy(a, start);
}

// memset -> memcpy -> host node, launched twice; exec update in place.
static void Vgpu_GraphRoundTrip(void** state) {
  fixture_t* f = *state;
  gpu_adapter_t* a = f->adapter;
  uint32_t needed = GPU_ADAPTER_CAP_GRAPH | GPU_ADAPTER_CAP_GRAPH_MEMSET_NODE |
                    GPU_ADAPTER_CAP_GRAPH_MEMCPY_NODE |
                    GPU_ADAPTER_CAP_GRAPH_HOST_NODE;
  if ((a->info.capabilities & needed) != needed)
    skip();
  gpu_graph_t graph = NULL;
  HAL_ASSERT_OK(a->ops->graph_create(a, &graph));
  gpu_graph_node_t memset_node = NULL, copy_node = NULL, host_node = NULL;
  HAL_ASSERT_OK(a->ops->graph_add_memset_node(a, graph, NULL, 0,
                                              f->device_memory, 0x1234u, 2,
                                              kElements * 2, &memset_node));
  HAL_ASSERT_OK(a->ops->graph_add_memcpy_node(
      a, graph, &memset_node, 1, gpu_host_address(f->host), f->device_memory,
      kBytes, &copy_node));
  atomic_store(&g_host_calls, 0);
  HAL_ASSERT_OK(a->ops->graph_add_host_node(
      a, graph, &copy_node, 1, count_host_call, &g_host_calls, &host_node));
  gpu_graph_exec_t exec = NULL;
  HAL_ASSERT_OK(a->ops->graph_instantiate(a, graph, &exec));
  memset(f->host, 0, kBytes);
  HAL_ASSERT_OK(a->ops->graph_launch(a, exec, f->stream));
  HAL_ASSERT_OK(a->ops->graph_launch(a, exec, f->stream));
  HAL_ASSERT_OK(a->ops->stream_synchronize(a, f->stream));
  assert_int_equal(atomic_load_explicit(&g_host_calls, memory_order_acquire),
                   2);
  assert_int_equal(f->host[0], 0x34);
  assert_int_equal(f->host[kBytes - 1], 0x12);

  bool accepted = false;
  HAL_ASSERT_OK(a->ops->graph_exec_update(a, exec, graph, &accepted));
  assert_int_equal(accepted, (a->info.capabilities &
                              GPU_ADAPTER_CAP_GRAPH_EXEC_UPDATE) != 0);
  a->ops->graph_exec_destroy(a, exec);
  a->ops->graph_destroy(a, graph);
}

// make_current skips the vendor's set when the thread already has the
// context; the application may change the thread's current context (or
// device) behind the adapter's back between two ops, and make_current
// must then set it again, not trust what it set last.
static void Vgpu_MakeCurrentFollowsTheApplication(void** state) {
  fixture_t* f = *state;
  gpu_adapter_t* a = f->adapter;
  int count = 0;
  HAL_ASSERT_OK(a->ops->device_count(a, &count));
  assert_true(count >= 2);  // the virtual GPU has two by default
  void* library =
      dlopen(getenv("GPU_ADAPTER_TEST_LIBRARY"), RTLD_NOW | RTLD_NOLOAD);
  assert_non_null(library);
  bool is_cuda = strcmp(getenv("GPU_ADAPTER_TEST_VENDOR"), "cuda") == 0;
  // The thread's current context (CUDA) or device (HIP) as one pointer.
  int (*get_current)(void**) = NULL;
  int (*set_current)(void*) = NULL;
  int (*get_device)(int*) = NULL;
  int (*set_device)(int) = NULL;
  if (is_cuda) {
    *(void**)&get_current = dlsym(library, "cuCtxGetCurrent");
    *(void**)&set_current = dlsym(library, "cuCtxSetCurrent");
    assert_true(get_current && set_current);
  } else {
    *(void**)&get_device = dlsym(library, "hipGetDevice");
    *(void**)&set_device = dlsym(library, "hipSetDevice");
    assert_true(get_device && set_device);
  }
  gpu_context_t* other = NULL;
  HAL_ASSERT_OK(a->ops->context_open(a, 1, &other));
  void* mine = NULL;
  void* theirs = NULL;
  int mine_device = -1, theirs_device = -1;
  for (int round = 0; round < 3; ++round) {
    HAL_ASSERT_OK(a->ops->make_current(a, other));
    if (is_cuda) {
      assert_int_equal(get_current(&theirs), 0);
    } else {
      assert_int_equal(get_device(&theirs_device), 0);
    }
    HAL_ASSERT_OK(a->ops->make_current(a, f->context));
    if (is_cuda) {
      assert_int_equal(get_current(&mine), 0);
      assert_non_null(mine);
      assert_ptr_not_equal(mine, theirs);
    } else {
      assert_int_equal(get_device(&mine_device), 0);
      assert_int_equal(mine_device, 0);
      assert_int_equal(theirs_device, 1);
    }
    // The application switches the thread: to the other context, then
    // (CUDA) to none at all.
    if (is_cuda) {
      assert_int_equal(set_current(round == 1 ? NULL : theirs), 0);
    } else {
      assert_int_equal(set_device(1), 0);
    }
    HAL_ASSERT_OK(a->ops->make_current(a, f->context));
    void* now = NULL;
    int now_device = -1;
    if (is_cuda) {
      assert_int_equal(get_current(&now), 0);
      assert_ptr_equal(now, mine);
    } else {
      assert_int_equal(get_device(&now_device), 0);
      assert_int_equal(now_device, 0);
    }
    // Work issued now goes where the adapter's context is.
    memset(f->host, 0, kBytes);
    HAL_ASSERT_OK(a->ops->memset_async(a, f->stream, f->device_memory,
                                       0x5A + round, 1, kBytes));
    HAL_ASSERT_OK(a->ops->memcpy_async(a, f->stream, gpu_host_address(f->host),
                                       f->device_memory, kBytes));
    HAL_ASSERT_OK(a->ops->stream_synchronize(a, f->stream));
    assert_int_equal(f->host[kBytes - 1], 0x5A + round);
  }
  a->ops->context_close(a, other);
  HAL_ASSERT_OK(a->ops->make_current(a, f->context));
  dlclose(library);
}

// The test list: CASE binds this program's fixture.
#define CASE(name) cmocka_unit_test(name)

int main(void) {
  const struct CMUnitTest tests[] = {
      CASE(Vgpu_Devices),
      CASE(Vgpu_StreamRoundTrip),
      CASE(Vgpu_TimedEventsMeasureDeviceTime),
      CASE(Vgpu_GraphRoundTrip),
      CASE(Vgpu_StreamOrderedAllocation),
      CASE(Vgpu_MakeCurrentFollowsTheApplication),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
