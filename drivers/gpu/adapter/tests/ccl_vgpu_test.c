// Copyright 2026 The HAL Authors.
//
// The collectives through ccl.h on the virtual GPU's NCCL and RCCL (one
// library loaded both as the runtime and as its collectives:
// libvgpu-cuda.so as CUDA and NCCL, libvgpu-hip.so or
// libvgpu-hip-legacy.so as HIP and RCCL; meson.build runs this program
// once per library with GPU_ADAPTER_TEST_VENDOR, "cuda" or "hip", and
// GPU_ADAPTER_TEST_LIBRARY): two devices, one communicator each,
// collectives in stream order between a fill before them and a copy after;
// every element checked on the host. Communicators made all at once and
// rank by rank from threads; ranks that disagree fail the communicator
// with what differed; a buffer that is not the device's memory is refused;
// VGPU_FAULTS injects into the collectives' calls.

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "adapter.h"
#include "ccl.h"
#include "hal_test.h"

enum { kRanks = 2, kCount = 1000 };
// nccl.h's codes.
enum { kInt32 = 2, kFloat32 = 7, kSum = 0, kMax = 2 };

typedef struct rank_t {
  gpu_context_t* context;
  gpu_stream_t stream;
  gpu_device_ptr_t send;  // kCount * kRanks floats
  gpu_device_ptr_t recv;  // kCount * kRanks floats
  float* host;            // pinned, kCount * kRanks floats
} rank_t;

typedef struct fixture_t {
  gpu_adapter_t* adapter;
  gpu_ccl_t* ccl;
  rank_t ranks[kRanks];
} fixture_t;

static const size_t kBytes = sizeof(float) * kCount * kRanks;

static int setup(void** state) {
  const char* vendor = getenv("GPU_ADAPTER_TEST_VENDOR");
  const char* library = getenv("GPU_ADAPTER_TEST_LIBRARY");
  if (!vendor || !library) {
    fprintf(stderr, "GPU_ADAPTER_TEST_VENDOR/LIBRARY not set\n");
    return -1;
  }
  bool hip = strcmp(vendor, "hip") == 0;
  fixture_t* f = calloc(1, sizeof(*f));
  gpu_adapter_options_t options = {.library = library, .hide_symbols = NULL};
  HAL_ASSERT_OK(
      gpu_adapter_create(hip ? GPU_ADAPTER_VENDOR_HIP : GPU_ADAPTER_VENDOR_CUDA,
                         &options, hal_allocator_system(), &f->adapter));
  HAL_ASSERT_OK(gpu_ccl_create(hip ? GPU_CCL_VENDOR_RCCL : GPU_CCL_VENDOR_NCCL,
                               library, hal_allocator_system(), &f->ccl));
  const gpu_ccl_info_t* info = gpu_ccl_info(f->ccl);
  print_message("%s %s: version %d\n", info->name, info->library_path,
                info->version);
  assert_string_equal(info->name, hip ? "RCCL" : "NCCL");
  assert_true(info->is_virtual);
  // The version of the nccl.h the facade was built with (2.x).
  assert_in_range(info->version, 20000, 29999);
  gpu_adapter_t* a = f->adapter;
  for (int r = 0; r < kRanks; ++r) {
    rank_t* rank = &f->ranks[r];
    HAL_ASSERT_OK(a->ops->context_open(a, r, &rank->context));
    HAL_ASSERT_OK(a->ops->make_current(a, rank->context));
    HAL_ASSERT_OK(a->ops->stream_create(a, &rank->stream));
    HAL_ASSERT_OK(a->ops->device_alloc(a, kBytes, &rank->send));
    HAL_ASSERT_OK(a->ops->device_alloc(a, kBytes, &rank->recv));
    HAL_ASSERT_OK(a->ops->host_alloc(a, kBytes, (void**)&rank->host));
  }
  *state = f;
  return 0;
}

static int teardown(void** state) {
  fixture_t* f = *state;
  gpu_adapter_t* a = f->adapter;
  for (int r = 0; r < kRanks; ++r) {
    rank_t* rank = &f->ranks[r];
    HAL_ASSERT_OK(a->ops->make_current(a, rank->context));
    HAL_ASSERT_OK(a->ops->stream_synchronize(a, rank->stream));
    a->ops->host_free(a, rank->host);
    a->ops->device_free(a, rank->recv);
    a->ops->device_free(a, rank->send);
    a->ops->stream_destroy(a, rank->stream);
    a->ops->context_close(a, rank->context);
  }
  gpu_ccl_destroy(f->ccl);
  gpu_adapter_destroy(f->adapter);
  free(f);
  return 0;
}

static void make_all(fixture_t* f, gpu_ccl_comm_t* comms) {
  int devices[kRanks] = {0, 1};
  HAL_ASSERT_OK(gpu_ccl_comm_init_all(f->ccl, kRanks, devices, comms));
}

static void destroy_all(fixture_t* f, gpu_ccl_comm_t* comms) {
  for (int r = 0; r < kRanks; ++r)
    gpu_ccl_comm_destroy(f->ccl, comms[r], false);
}

// Each rank: its send buffer filled with |r + 1| by a memset on its stream,
// then |collective| (send/recv of the rank) in one group, then the receive
// buffer copied to the host, all in stream order; then every stream
// synchronized.
static void run_ordered(fixture_t* f, gpu_ccl_comm_t* comms,
                        gpu_ccl_collective_t collective, size_t in_count) {
  gpu_adapter_t* a = f->adapter;
  HAL_ASSERT_OK(gpu_ccl_group_start(f->ccl));
  for (int r = 0; r < kRanks; ++r) {
    rank_t* rank = &f->ranks[r];
    HAL_ASSERT_OK(a->ops->make_current(a, rank->context));
    float value = (float)(r + 1);
    uint32_t bits;
    memcpy(&bits, &value, sizeof(bits));
    HAL_ASSERT_OK(
        a->ops->memset_async(a, rank->stream, rank->send, bits, 4, in_count));
    HAL_ASSERT_OK(
        a->ops->memset_async(a, rank->stream, rank->recv, 0, 4, kCount * 2));
    gpu_ccl_collective_t c = collective;
    c.send = rank->send;
    c.recv = rank->recv;
    HAL_ASSERT_OK(gpu_ccl_enqueue(f->ccl, comms[r], &c, rank->stream));
  }
  // As NCCL, a group's calls go on their streams at its end: the copy out
  // is enqueued after it.
  HAL_ASSERT_OK(gpu_ccl_group_end(f->ccl));
  for (int r = 0; r < kRanks; ++r) {
    rank_t* rank = &f->ranks[r];
    HAL_ASSERT_OK(a->ops->make_current(a, rank->context));
    HAL_ASSERT_OK(a->ops->memcpy_async(
        a, rank->stream, gpu_host_address(rank->host), rank->recv, kBytes));
  }
  for (int r = 0; r < kRanks; ++r) {
    HAL_ASSERT_OK(a->ops->make_current(a, f->ranks[r].context));
    HAL_ASSERT_OK(a->ops->stream_synchronize(a, f->ranks[r].stream));
    HAL_ASSERT_OK(gpu_ccl_comm_check(f->ccl, comms[r]));
  }
}

static void Vgpu_AllReduceRunsBetweenTheWorkAroundIt(void** state) {
  fixture_t* f = *state;
  gpu_ccl_comm_t comms[kRanks];
  make_all(f, comms);
  gpu_ccl_collective_t sum = {.kind = GPU_CCL_ALL_REDUCE,
                              .count = kCount,
                              .type = kFloat32,
                              .reduction = kSum};
  run_ordered(f, comms, sum, kCount);
  for (int r = 0; r < kRanks; ++r) {
    for (int i = 0; i < kCount; ++i)
      assert_true(f->ranks[r].host[i] == 3.0f);     // 1 + 2
    assert_true(f->ranks[r].host[kCount] == 0.0f);  // past the count
  }
  destroy_all(f, comms);
}

static void Vgpu_GatheringAndRootedCollectivesArriveWhole(void** state) {
  fixture_t* f = *state;
  gpu_ccl_comm_t comms[kRanks];
  make_all(f, comms);
  gpu_ccl_collective_t gather = {
      .kind = GPU_CCL_ALL_GATHER, .count = kCount, .type = kFloat32};
  run_ordered(f, comms, gather, kCount);
  for (int r = 0; r < kRanks; ++r) {
    for (int i = 0; i < kCount * kRanks; ++i)
      assert_true(f->ranks[r].host[i] == (float)(i / kCount + 1));
  }
  gpu_ccl_collective_t broadcast = {
      .kind = GPU_CCL_BROADCAST, .count = kCount, .type = kFloat32, .peer = 1};
  run_ordered(f, comms, broadcast, kCount);
  for (int r = 0; r < kRanks; ++r) {
    for (int i = 0; i < kCount; ++i)
      assert_true(f->ranks[r].host[i] == 2.0f);
  }
  gpu_ccl_collective_t scatter = {.kind = GPU_CCL_REDUCE_SCATTER,
                                  .count = kCount,
                                  .type = kFloat32,
                                  .reduction = kMax};
  run_ordered(f, comms, scatter, kCount * kRanks);
  for (int r = 0; r < kRanks; ++r) {
    for (int i = 0; i < kCount; ++i)
      assert_true(f->ranks[r].host[i] == 2.0f);
  }
  destroy_all(f, comms);
}

typedef struct join_t {
  fixture_t* f;
  int rank;
  gpu_ccl_unique_id_t id;
  gpu_ccl_comm_t comm;
  hal_status_t status;
} join_t;

static void* join_main(void* arg) {
  join_t* j = arg;
  gpu_adapter_t* a = j->f->adapter;
  j->status = a->ops->make_current(a, j->f->ranks[j->rank].context);
  if (j->status == HAL_OK) {
    j->status =
        gpu_ccl_comm_init_rank(j->f->ccl, kRanks, &j->id, j->rank, &j->comm);
  }
  return NULL;
}

// As one process per rank would: an id made once, each rank joining on
// its own thread with its device current.
static void Vgpu_RanksJoinFromTheirOwnThreads(void** state) {
  fixture_t* f = *state;
  join_t joins[kRanks];
  gpu_ccl_unique_id_t id;
  HAL_ASSERT_OK(gpu_ccl_unique_id(f->ccl, &id));
  pthread_t threads[kRanks];
  for (int r = 0; r < kRanks; ++r) {
    joins[r] = (join_t){.f = f, .rank = r, .id = id};
    assert_int_equal(pthread_create(&threads[r], NULL, join_main, &joins[r]),
                     0);
  }
  for (int r = 0; r < kRanks; ++r)
    pthread_join(threads[r], NULL);
  gpu_ccl_comm_t comms[kRanks];
  for (int r = 0; r < kRanks; ++r) {
    HAL_ASSERT_OK(joins[r].status);
    comms[r] = joins[r].comm;
  }
  gpu_ccl_collective_t sum = {.kind = GPU_CCL_ALL_REDUCE,
                              .count = kCount,
                              .type = kFloat32,
                              .reduction = kSum};
  run_ordered(f, comms, sum, kCount);
  assert_true(f->ranks[1].host[kCount - 1] == 3.0f);
  destroy_all(f, comms);
}

// Ranks that disagree: the stream goes on, the communicator is failed and
// says what differed.
static void Vgpu_RanksThatDisagreeFailTheCommunicator(void** state) {
  fixture_t* f = *state;
  gpu_ccl_comm_t comms[kRanks];
  make_all(f, comms);
  gpu_adapter_t* a = f->adapter;
  HAL_ASSERT_OK(gpu_ccl_group_start(f->ccl));
  for (int r = 0; r < kRanks; ++r) {
    HAL_ASSERT_OK(a->ops->make_current(a, f->ranks[r].context));
    gpu_ccl_collective_t c = {.kind = GPU_CCL_ALL_REDUCE,
                              .send = f->ranks[r].send,
                              .recv = f->ranks[r].recv,
                              .count = r == 0 ? kCount : kCount - 1,
                              .type = kFloat32,
                              .reduction = kSum};
    HAL_ASSERT_OK(gpu_ccl_enqueue(f->ccl, comms[r], &c, f->ranks[r].stream));
  }
  HAL_ASSERT_OK(gpu_ccl_group_end(f->ccl));
  for (int r = 0; r < kRanks; ++r) {
    HAL_ASSERT_OK(a->ops->make_current(a, f->ranks[r].context));
    HAL_ASSERT_OK(a->ops->stream_synchronize(a, f->ranks[r].stream));
    HAL_ASSERT_STATUS(HAL_STATUS_FAILED_PRECONDITION,
                      "rank 1 called all_reduce of 999 elements",
                      gpu_ccl_comm_check(f->ccl, comms[r]));
  }
  destroy_all(f, comms);
}

// A pinned host buffer is not the device's memory: refused at the call,
// naming it (the strict report says more on stderr).
static void Vgpu_BufferNotOfTheDeviceIsRefused(void** state) {
  fixture_t* f = *state;
  gpu_ccl_comm_t comms[kRanks];
  make_all(f, comms);
  gpu_adapter_t* a = f->adapter;
  HAL_ASSERT_OK(a->ops->make_current(a, f->ranks[0].context));
  gpu_ccl_collective_t c = {.kind = GPU_CCL_ALL_REDUCE,
                            .send = gpu_host_address(f->ranks[0].host),
                            .recv = f->ranks[0].recv,
                            .count = kCount,
                            .type = kFloat32,
                            .reduction = kSum};
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT,
                    "ncclAllReduce failed: ncclInvalidArgument",
                    gpu_ccl_enqueue(f->ccl, comms[0], &c, f->ranks[0].stream));
  // Rank 1's buffer on rank 0's device: the other device's memory.
  c.send = f->ranks[1].send;
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, "ncclInvalidArgument",
                    gpu_ccl_enqueue(f->ccl, comms[0], &c, f->ranks[0].stream));
  HAL_ASSERT_OK(gpu_ccl_comm_check(f->ccl, comms[0]));
  destroy_all(f, comms);
}

// VGPU_FAULTS names the collectives' entry points in the library that
// exports them (meson.build sets ncclSend:nth=1:error=5): the send fails
// at the call with the rule's code, ncclInvalidUsage, and the library's
// text says it was injected; nothing was enqueued.
static void Vgpu_FaultsNameTheCollectives(void** state) {
  if (!getenv("VGPU_FAULTS"))
    HAL_TEST_SKIP("VGPU_FAULTS is not set: no fault to see");
  fixture_t* f = *state;
  gpu_ccl_comm_t comms[kRanks];
  make_all(f, comms);
  gpu_adapter_t* a = f->adapter;
  HAL_ASSERT_OK(a->ops->make_current(a, f->ranks[0].context));
  gpu_ccl_collective_t c = {.kind = GPU_CCL_SEND,
                            .send = f->ranks[0].send,
                            .count = kCount,
                            .type = kFloat32,
                            .peer = 1};
  char says[64];
  snprintf(says, sizeof(says), "%s says: ncclSend: injected fault",
           gpu_ccl_info(f->ccl)->name);
  HAL_ASSERT_STATUS(HAL_STATUS_FAILED_PRECONDITION, says,
                    gpu_ccl_enqueue(f->ccl, comms[0], &c, f->ranks[0].stream));
  HAL_ASSERT_OK(gpu_ccl_comm_check(f->ccl, comms[0]));
  destroy_all(f, comms);
}

#define CASE(name) cmocka_unit_test(name)

int main(void) {
  const struct CMUnitTest tests[] = {
      CASE(Vgpu_AllReduceRunsBetweenTheWorkAroundIt),
      CASE(Vgpu_GatheringAndRootedCollectivesArriveWhole),
      CASE(Vgpu_RanksJoinFromTheirOwnThreads),
      CASE(Vgpu_RanksThatDisagreeFailTheCommunicator),
      CASE(Vgpu_BufferNotOfTheDeviceIsRefused),
      CASE(Vgpu_FaultsNameTheCollectives),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
