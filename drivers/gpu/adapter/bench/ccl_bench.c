// Copyright 2026 The HAL Authors.
//
// hal-ccl-bench: all-reduce bus bandwidth through the collectives layer
// (ccl.h) against this machine's memcpy bandwidth, measured in the same
// run. For each rank count (2 and 4 by default, one communicator per
// device), repetitions alternate an all-reduce of --mib MiB of float32 per
// rank (enqueued on every rank's stream, then every stream synchronized)
// with a host memcpy of the same bytes; after warm-up, the medians of each
// give
//
//   algbw = bytes / time, busbw = algbw * 2 (ranks - 1) / ranks
//
// (the bus-bandwidth formula of NVIDIA's nccl-tests), and the ratio
// busbw / memcpy bandwidth, with min and max so a noisy run shows.
//
// The runtime and NCCL come from HAL_CUDA_LIBRARY and HAL_NCCL_LIBRARY
// (the virtual GPU: both libvgpu-cuda.so, with VGPU_DEVICES=4); on a real
// GPU machine the defaults load libcuda.so.1 and libnccl.so.2.
//
// usage: hal-ccl-bench [--mib=N] [--repetitions=N] [--ranks=A,B,...]

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adapter.h"
#include "ccl.h"
#include "hal/time.h"

enum { kMaxRanks = 8, kFloat32 = 7, kSum = 0 };

typedef struct rank_t {
  gpu_context_t* context;
  gpu_stream_t stream;
  gpu_device_ptr_t send;
  gpu_device_ptr_t recv;
} rank_t;

static int fail(hal_status_t status, const char* what) {
  fprintf(stderr, "hal-ccl-bench: %s: ", what);
  hal_status_fprint(stderr, status);
  hal_status_free(status);
  return 1;
}

#define CHECK(expr, what)           \
  do {                              \
    hal_status_t status_ = (expr);  \
    if (status_ != HAL_OK)          \
      return fail(status_, (what)); \
  } while (0)

static int compare_doubles(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

typedef struct summary_t {
  double median, min, max;
} summary_t;

static summary_t summarize(double* values, int count) {
  qsort(values, (size_t)count, sizeof(double), compare_doubles);
  summary_t s = {values[count / 2], values[0], values[count - 1]};
  if (count % 2 == 0)
    s.median = (values[count / 2 - 1] + values[count / 2]) / 2;
  return s;
}

// One all-reduce over |ranks| ranks; its time in seconds.
static int all_reduce_once(gpu_adapter_t* a, gpu_ccl_t* ccl,
                           gpu_ccl_comm_t* comms, rank_t* ranks, int count,
                           size_t elements, double* out_seconds) {
  hal_time_t start = hal_time_now();
  CHECK(gpu_ccl_group_start(ccl), "ncclGroupStart");
  for (int r = 0; r < count; ++r) {
    CHECK(a->ops->make_current(a, ranks[r].context), "make current");
    gpu_ccl_collective_t c = {.kind = GPU_CCL_ALL_REDUCE,
                              .send = ranks[r].send,
                              .recv = ranks[r].recv,
                              .count = elements,
                              .type = kFloat32,
                              .reduction = kSum};
    CHECK(gpu_ccl_enqueue(ccl, comms[r], &c, ranks[r].stream), "all-reduce");
  }
  CHECK(gpu_ccl_group_end(ccl), "ncclGroupEnd");
  for (int r = 0; r < count; ++r) {
    CHECK(a->ops->make_current(a, ranks[r].context), "make current");
    CHECK(a->ops->stream_synchronize(a, ranks[r].stream), "synchronize");
    CHECK(gpu_ccl_comm_check(ccl, comms[r]), "the all-reduce");
  }
  *out_seconds = (double)(hal_time_now() - start) / 1e9;
  return 0;
}

static int run(gpu_adapter_t* a, gpu_ccl_t* ccl, int count, size_t bytes,
               int repetitions) {
  rank_t ranks[kMaxRanks];
  memset(ranks, 0, sizeof(ranks));
  int devices[kMaxRanks];
  for (int r = 0; r < count; ++r) {
    devices[r] = r;
    CHECK(a->ops->context_open(a, r, &ranks[r].context), "open device");
    CHECK(a->ops->make_current(a, ranks[r].context), "make current");
    CHECK(a->ops->stream_create(a, &ranks[r].stream), "create stream");
    CHECK(a->ops->device_alloc(a, bytes, &ranks[r].send), "allocate");
    CHECK(a->ops->device_alloc(a, bytes, &ranks[r].recv), "allocate");
    CHECK(a->ops->memset_async(a, ranks[r].stream, ranks[r].send, 0x3f800000u,
                               4, bytes / 4),
          "fill");  // 1.0f
  }
  gpu_ccl_comm_t comms[kMaxRanks];
  CHECK(gpu_ccl_comm_init_all(ccl, count, devices, comms), "communicators");
  char* host_src = malloc(bytes);
  char* host_dst = malloc(bytes);
  if (!host_src || !host_dst) {
    fprintf(stderr, "hal-ccl-bench: out of host memory\n");
    return 1;
  }
  memset(host_src, 1, bytes);
  memset(host_dst, 0, bytes);
  double* reduce_seconds = calloc((size_t)repetitions, sizeof(double));
  double* copy_seconds = calloc((size_t)repetitions, sizeof(double));
  size_t elements = bytes / sizeof(float);
  // Two warm-up rounds, then A B A B ...: the machine's drift hits both.
  for (int i = -2; i < repetitions; ++i) {
    double seconds = 0;
    if (all_reduce_once(a, ccl, comms, ranks, count, elements, &seconds))
      return 1;
    hal_time_t start = hal_time_now();
    memcpy(host_dst, host_src, bytes);
    double copy = (double)(hal_time_now() - start) / 1e9;
    if (i >= 0) {
      reduce_seconds[i] = seconds;
      copy_seconds[i] = copy;
    }
  }
  // Rank 0's first element: the sum of the ranks' 1.0f (the send buffers
  // are never written, so every repetition sums the same input).
  float first = 0;
  CHECK(a->ops->make_current(a, ranks[0].context), "make current");
  CHECK(a->ops->memcpy_sync(a, gpu_host_address(&first), ranks[0].recv,
                            sizeof(first)),
        "read back");
  if (first != (float)count) {
    fprintf(stderr, "hal-ccl-bench: all-reduce gave %g, not %d\n", first,
            count);
    return 1;
  }
  summary_t reduce = summarize(reduce_seconds, repetitions);
  summary_t copy = summarize(copy_seconds, repetitions);
  double factor = 2.0 * (count - 1) / count;
  double busbw = (double)bytes / reduce.median * factor / 1e9;
  double copybw = (double)bytes / copy.median / 1e9;
  double ratio = busbw / copybw;
  // The ratio from the extremes: a wide range means a noisy run.
  double low = (double)bytes / reduce.max * factor / ((double)bytes / copy.min);
  double high =
      (double)bytes / reduce.min * factor / ((double)bytes / copy.max);
  printf(
      "ranks %d, %zu MiB per rank, %d repetitions: all-reduce median "
      "%.3f ms (min %.3f, max %.3f), busbw %.2f GB/s; memcpy median "
      "%.3f ms (min %.3f, max %.3f), %.2f GB/s; busbw / memcpy = %.3f "
      "(from the extremes %.3f to %.3f)%s\n",
      count, bytes >> 20, repetitions, reduce.median * 1e3, reduce.min * 1e3,
      reduce.max * 1e3, busbw, copy.median * 1e3, copy.min * 1e3,
      copy.max * 1e3, copybw, ratio, low, high, high > 2 * low ? " NOISY" : "");
  free(reduce_seconds);
  free(copy_seconds);
  free(host_src);
  free(host_dst);
  for (int r = 0; r < count; ++r)
    gpu_ccl_comm_destroy(ccl, comms[r], false);
  for (int r = 0; r < count; ++r) {
    CHECK(a->ops->make_current(a, ranks[r].context), "make current");
    CHECK(a->ops->stream_synchronize(a, ranks[r].stream), "synchronize");
    a->ops->device_free(a, ranks[r].send);
    a->ops->device_free(a, ranks[r].recv);
    a->ops->stream_destroy(a, ranks[r].stream);
    a->ops->context_close(a, ranks[r].context);
  }
  return 0;
}

int main(int argc, char** argv) {
  size_t mib = 16;
  int repetitions = 15;
  int rank_counts[kMaxRanks] = {2, 4};
  int rank_count_count = 2;
  for (int i = 1; i < argc; ++i) {
    if (strncmp(argv[i], "--mib=", 6) == 0) {
      mib = strtoul(argv[i] + 6, NULL, 10);
    } else if (strncmp(argv[i], "--repetitions=", 14) == 0) {
      repetitions = atoi(argv[i] + 14);
    } else if (strncmp(argv[i], "--ranks=", 8) == 0) {
      rank_count_count = 0;
      for (char* p = argv[i] + 8; *p && rank_count_count < kMaxRanks;) {
        rank_counts[rank_count_count++] = (int)strtol(p, &p, 10);
        if (*p == ',')
          ++p;
      }
    } else {
      fprintf(stderr,
              "usage: hal-ccl-bench [--mib=N] [--repetitions=N] "
              "[--ranks=A,B,...]\n");
      return 2;
    }
  }
  if (mib < 1 || mib > 4096 || repetitions < 3 || rank_count_count < 1) {
    fprintf(stderr,
            "hal-ccl-bench: --mib is 1 to 4096, --repetitions at least 3, "
            "--ranks at least one count\n");
    return 2;
  }
  gpu_adapter_t* adapter = NULL;
  CHECK(gpu_adapter_create(GPU_ADAPTER_VENDOR_CUDA, NULL,
                           hal_allocator_system(), &adapter),
        "the CUDA runtime");
  gpu_ccl_t* ccl = NULL;
  CHECK(gpu_ccl_create(GPU_CCL_VENDOR_NCCL, NULL, hal_allocator_system(), &ccl),
        "NCCL");
  int devices = 0;
  CHECK(adapter->ops->device_count(adapter, &devices), "device count");
  printf("hal-ccl-bench: %s (%s), %s %d (%s), %d device(s)\n",
         adapter->info.vendor_name, adapter->info.library_path,
         gpu_ccl_info(ccl)->name, gpu_ccl_info(ccl)->version,
         gpu_ccl_info(ccl)->library_path, devices);
  int status = 0;
  for (int i = 0; i < rank_count_count && status == 0; ++i) {
    int count = rank_counts[i];
    if (count < 2 || count > kMaxRanks || count > devices) {
      printf(
          "ranks %d: skipped, %d device(s) (2 to %d ranks, one per "
          "device)\n",
          count, devices, kMaxRanks);
      continue;
    }
    status = run(adapter, ccl, count, mib << 20, repetitions);
  }
  gpu_ccl_destroy(ccl);
  gpu_adapter_destroy(adapter);
  return status;
}
