// Copyright 2026 The HAL Authors.
//
// hal-bench: every performance figure of the project, each a HAL case and
// its baseline measured in the same run, with Google Benchmark.
//
// Every case first runs twice as a warm-up, which also sizes it (Google
// Benchmark's iteration count for about 0.1 s). Then the repetitions run in
// rounds, 15 by default: each round runs every case once, with its count
// fixed, a figure's two cases one right after the other, the HAL's first
// in even rounds and the baseline's in odd ones (A B B A A B ...), so that
// a drift of the machine, and whatever the case before leaves behind, hit
// both sides of a ratio alike. For each figure the program reports the
// median, min and max of both sides and the ratio of medians, and flags the
// ratio as noisy when the per-repetition ratios spread by more than
// kNoisySpread (their 10th to 90th percentile, over the median), or when
// fewer than kDefaultRepetitions pairs ran. The median of the
// per-repetition ratios is printed beside it: the i-th repetitions of the
// two sides ran one after the other, so it cancels a drift of the
// machine's speed within the run that the ratio of medians only averages
// out. The verdict is on the ratio of medians.
//
//   hal-bench [--json FILE] [--list] [--repetitions=N] [--driver=NAME]
//             [--graph-driver=NAME] [Google Benchmark flags...]
//
// The devices come from HAL_DRIVER_PATH (the stream and graph drivers of one
// vendor, cuda_stream and cuda_graph by default); the vendor baselines call
// the runtime those drivers load (HAL_CUDA_LIBRARY, else libcuda.so.1)
// directly. On the virtual GPU every figure is host work; on a real GPU the
// same program measures the real runtime.
//
// JSON (--json): {"ratios": {key: value}, "pair_ratios": {key: median of
// the per-repetition ratios}, "counts": {key: value},
// "figures": {case: {"median_ns", "min_ns", "max_ns", "samples_ns",
// "order"}}, "noisy": [keys], "targets": {key: {"target",
// "higher_is_better", "met"}}, "repetitions", plus the date and the
// drivers}. "order" is each repetition's place in the run; "met" is null
// where a figure has no target or too few repetitions to judge.

#include <benchmark/benchmark.h>
#include <dlfcn.h>
#include <execinfo.h>
#include <link.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cli_args.h"
#include "hal/api.h"
#include "hal/channel.h"

namespace {

constexpr double kNoisySpread = 0.25;
constexpr int kDefaultRepetitions = 15;
// Each round registers every case again (BenchMain): bounded.
constexpr int kMaxRepetitions = 1000;
constexpr uint32_t kParked = 100000;
// CU_MEMPOOL_ATTR_RELEASE_THRESHOLD (cuda.h is not included here).
constexpr int kReleaseThresholdAttribute = 4;
constexpr uint64_t kAllocaBytes = uint64_t{1} << 20;
constexpr uint64_t kFileBytes = uint64_t{64} << 20;
constexpr uint64_t kAllReduceBytes = uint64_t{16} << 20;

[[noreturn]] void Die(const char* what, hal_status_t status) {
  std::fprintf(stderr, "hal-bench: %s: ", what);
  hal_status_fprint(stderr, status);
  std::exit(1);
}

void Check(hal_status_t status, const char* what) {
  if (status)
    Die(what, status);
}

//===----------------------------------------------------------------------===//
// Counting heap allocations (warm_submit_allocations)
//===----------------------------------------------------------------------===//

std::atomic<bool> g_counting{false};
// Allocations made by libhal and its drivers (the figure), and by the rest
// of the process (the vendor runtime: reported beside it), told apart by
// the code that called the allocator.
std::atomic<uint64_t> g_allocations{0};
std::atomic<uint64_t> g_other_allocations{0};
// Executable segments of loaded libraries, collected before counting
// starts (CollectHalCode).
struct CodeRange {
  uintptr_t begin, end;
};
struct CodeRanges {
  CodeRange ranges[64];
  size_t count = 0;
  bool Contains(const void* address) const {
    uintptr_t at = reinterpret_cast<uintptr_t>(address);
    for (size_t i = 0; i < count; ++i) {
      if (at >= ranges[i].begin && at < ranges[i].end)
        return true;
    }
    return false;
  }
};
// libhal, its driver plugins and libhal-async-runtime.
CodeRanges g_hal_code;
// The libraries an allocation may pass through between the code that asks
// for it and the allocator: libc (strdup, realpath), libstdc++ (operator
// new), libgcc_s, the dynamic loader (a thread's first use of a TLS block).
CodeRanges g_helper_code;

bool NameStartsWith(const char* base, const char* prefix) {
  return std::strncmp(base, prefix, std::strlen(prefix)) == 0;
}

int CollectCodeOf(struct dl_phdr_info* info, size_t, void*) {
  const char* name = info->dlpi_name ? info->dlpi_name : "";
  const char* base = std::strrchr(name, '/');
  base = base ? base + 1 : name;
  CodeRanges* into = nullptr;
  if (NameStartsWith(base, "libhal.so") ||
      NameStartsWith(base, "libhal-async-runtime.so") ||
      NameStartsWith(base, "hal-driver-")) {
    into = &g_hal_code;
  } else if (NameStartsWith(base, "libc.so") ||
             NameStartsWith(base, "libstdc++.so") ||
             NameStartsWith(base, "libgcc_s.so") ||
             NameStartsWith(base, "ld-linux")) {
    into = &g_helper_code;
  } else {
    return 0;
  }
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& segment = info->dlpi_phdr[i];
    if (segment.p_type != PT_LOAD || !(segment.p_flags & PF_X) ||
        into->count == sizeof(into->ranges) / sizeof(into->ranges[0])) {
      continue;
    }
    uintptr_t begin = info->dlpi_addr + segment.p_vaddr;
    into->ranges[into->count++] = {begin, begin + segment.p_memsz};
  }
  return 0;
}

// Once the drivers are loaded, before any counting. backtrace() loads its
// unwinder at its first call, which allocates: that happens here.
void CollectHalCode() {
  g_hal_code.count = 0;
  g_helper_code.count = 0;
  dl_iterate_phdr(CollectCodeOf, nullptr);
  void* frames[4];
  backtrace(frames, 4);
}

thread_local bool t_walking_stack = false;

// Whether the allocation whose allocator returns to |caller| was asked for
// by libhal or its drivers: the first frame from |caller| outwards that is
// not in a helper library decides. One the walk cannot place counts as the
// HAL's: the figure may count too much, never too little.
bool IsHalAllocation(const void* caller) {
  if (g_hal_code.Contains(caller))
    return true;
  if (!g_helper_code.Contains(caller))
    return false;  // the vendor runtime's, or the program's own
  if (t_walking_stack)
    return true;
  t_walking_stack = true;
  void* frames[32];
  int count = backtrace(frames, 32);
  t_walking_stack = false;
  int at = 0;
  while (at < count && frames[at] != caller)
    ++at;
  for (; at < count; ++at) {
    if (!g_helper_code.Contains(frames[at]))
      return g_hal_code.Contains(frames[at]);
  }
  return true;
}

// The attribution must see libhal's allocations, or the figure would read 0
// for want of seeing any: a host semaphore's creation allocates in libhal.
bool HalAllocationsAreSeen() {
  g_allocations.store(0);
  g_counting.store(true);
  hal_semaphore_t* semaphore = nullptr;
  hal_status_t status =
      hal_semaphore_create_host(hal_allocator_system(), 0, &semaphore);
  g_counting.store(false);
  hal_semaphore_release(semaphore);
  bool seen = status == HAL_OK && g_allocations.load() > 0;
  hal_status_free(status);
  return seen;
}
// Heap bytes allocated minus freed while g_counting is set (each block's
// usable size): the memory figures.
std::atomic<int64_t> g_live_bytes{0};

}  // namespace

// glibc's allocator under the program's malloc: every thread's allocations
// are counted while g_counting is set (the queue threads' too).
extern "C" void* __libc_malloc(size_t size);
extern "C" void* __libc_calloc(size_t count, size_t size);
extern "C" void* __libc_realloc(void* pointer, size_t size);
extern "C" void __libc_free(void* pointer);
extern "C" size_t malloc_usable_size(void* pointer);
namespace {
void* Counted(void* block, const void* caller) {
  // Acquire: the code ranges were collected before counting began.
  if (block && g_counting.load(std::memory_order_acquire)) {
    (IsHalAllocation(caller) ? g_allocations : g_other_allocations)
        .fetch_add(1, std::memory_order_relaxed);
    g_live_bytes.fetch_add(static_cast<int64_t>(malloc_usable_size(block)),
                           std::memory_order_relaxed);
  }
  return block;
}
void Uncounted(void* block) {
  if (block && g_counting.load(std::memory_order_relaxed)) {
    g_live_bytes.fetch_sub(static_cast<int64_t>(malloc_usable_size(block)),
                           std::memory_order_relaxed);
  }
}
}  // namespace
extern "C" void* malloc(size_t size) {
  return Counted(__libc_malloc(size), __builtin_return_address(0));
}
extern "C" void* calloc(size_t count, size_t size) {
  return Counted(__libc_calloc(count, size), __builtin_return_address(0));
}
extern "C" void* realloc(void* pointer, size_t size) {
  Uncounted(pointer);
  return Counted(__libc_realloc(pointer, size), __builtin_return_address(0));
}
// The aligned forms, which libhal does not use today: counted all the same.
extern "C" void* __libc_memalign(size_t alignment, size_t size);
extern "C" void* memalign(size_t alignment, size_t size) {
  return Counted(__libc_memalign(alignment, size), __builtin_return_address(0));
}
extern "C" void* aligned_alloc(size_t alignment, size_t size) {
  return Counted(__libc_memalign(alignment, size), __builtin_return_address(0));
}
extern "C" int posix_memalign(void** out, size_t alignment, size_t size) {
  if (alignment % sizeof(void*) != 0 || (alignment & (alignment - 1)) != 0)
    return EINVAL;
  void* block = __libc_memalign(alignment, size);
  if (!block)
    return ENOMEM;
  *out = Counted(block, __builtin_return_address(0));
  return 0;
}
extern "C" void free(void* pointer) {
  Uncounted(pointer);
  __libc_free(pointer);
}

namespace {

//===----------------------------------------------------------------------===//
// The devices and the vendor runtime
//===----------------------------------------------------------------------===//

struct Hal {
  std::string stream_driver = "cuda_stream";
  std::string graph_driver = "cuda_graph";
  hal_driver_registry_t* registry = nullptr;
  hal_device_t* stream = nullptr;  // the stream driver's device 0
  hal_device_t* graph = nullptr;   // the graph driver's device 0
};
Hal g_hal;

// |named|: the name came from the command line, where one that no plugin
// provides is a bad argument (status 2).
hal_device_t* CreateDevice(const std::string& name, bool named = false) {
  hal_driver_t* driver = nullptr;
  hal_status_t status = hal_driver_registry_create_driver(
      g_hal.registry, name.c_str(), hal_allocator_system(), &driver);
  if (status && named && hal_status_code(status) == HAL_STATUS_NOT_FOUND) {
    std::fprintf(stderr, "hal-bench: --driver/--graph-driver: ");
    hal_status_fprint(stderr, status);
    std::exit(2);
  }
  Check(status, name.c_str());
  hal_device_t* device = nullptr;
  status = hal_driver_create_device_by_index(driver, 0, hal_allocator_system(),
                                             &device);
  hal_driver_release(driver);
  Check(status, name.c_str());
  return device;
}

// The CUDA driver API entry points a baseline calls, from the library the
// drivers load.
struct Vendor {
  void* library = nullptr;
  int (*cuInit)(unsigned) = nullptr;
  int (*cuDeviceGet)(int*, int) = nullptr;
  int (*cuDevicePrimaryCtxRetain)(void**, int) = nullptr;
  int (*cuCtxSetCurrent)(void*) = nullptr;
  int (*cuStreamCreate)(void**, unsigned) = nullptr;
  int (*cuEventCreate)(void**, unsigned) = nullptr;
  int (*cuEventRecord)(void*, void*) = nullptr;
  int (*cuEventSynchronize)(void*) = nullptr;
  int (*cuMemAlloc)(uint64_t*, size_t) = nullptr;
  int (*cuMemsetD32Async)(uint64_t, unsigned, size_t, void*) = nullptr;
  int (*cuStreamSynchronize)(void*) = nullptr;
  int (*cuStreamDestroy)(void*) = nullptr;
  int (*cuEventDestroy)(void*) = nullptr;
  int (*cuMemFree)(uint64_t) = nullptr;
  int (*cuDevicePrimaryCtxRelease)(int) = nullptr;
  int (*cuDeviceGetDefaultMemPool)(void**, int) = nullptr;
  int (*cuMemPoolSetAttribute)(void*, int, void*) = nullptr;
  int (*cuMemAllocFromPoolAsync)(uint64_t*, size_t, void*, void*) = nullptr;
  int (*cuMemFreeAsync)(uint64_t, void*) = nullptr;
  int (*cuMemcpyHtoD)(uint64_t, const void*, size_t) = nullptr;
  void* context = nullptr;
  void* pool = nullptr;  // the device's default pool
  void* stream = nullptr;
  void* event = nullptr;
  uint64_t memory = 0;
};
Vendor g_vendor;

template <typename T>
void Load(T* fn, const char* name, const char* versioned = nullptr) {
  void* symbol = versioned ? dlsym(g_vendor.library, versioned) : nullptr;
  if (!symbol)
    symbol = dlsym(g_vendor.library, name);
  if (!symbol) {
    std::fprintf(stderr, "hal-bench: the vendor runtime lacks %s\n", name);
    std::exit(1);
  }
  *fn = reinterpret_cast<T>(symbol);
}

void VendorCheck(int result, const char* call) {
  if (result != 0) {
    std::fprintf(stderr, "hal-bench: %s failed: %d\n", call, result);
    std::exit(1);
  }
}

void OpenVendor() {
  const char* path = std::getenv("HAL_CUDA_LIBRARY");
  if (!path || !*path)
    path = "libcuda.so.1";
  g_vendor.library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!g_vendor.library) {
    std::fprintf(stderr, "hal-bench: cannot load %s: %s\n", path, dlerror());
    std::exit(1);
  }
  Load(&g_vendor.cuInit, "cuInit");
  Load(&g_vendor.cuDeviceGet, "cuDeviceGet");
  Load(&g_vendor.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
  Load(&g_vendor.cuCtxSetCurrent, "cuCtxSetCurrent");
  Load(&g_vendor.cuStreamCreate, "cuStreamCreate");
  Load(&g_vendor.cuEventCreate, "cuEventCreate");
  Load(&g_vendor.cuEventRecord, "cuEventRecord");
  Load(&g_vendor.cuEventSynchronize, "cuEventSynchronize");
  Load(&g_vendor.cuMemAlloc, "cuMemAlloc", "cuMemAlloc_v2");
  Load(&g_vendor.cuMemsetD32Async, "cuMemsetD32Async");
  Load(&g_vendor.cuStreamSynchronize, "cuStreamSynchronize");
  Load(&g_vendor.cuStreamDestroy, "cuStreamDestroy", "cuStreamDestroy_v2");
  Load(&g_vendor.cuEventDestroy, "cuEventDestroy", "cuEventDestroy_v2");
  Load(&g_vendor.cuMemFree, "cuMemFree", "cuMemFree_v2");
  Load(&g_vendor.cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease",
       "cuDevicePrimaryCtxRelease_v2");
  Load(&g_vendor.cuDeviceGetDefaultMemPool, "cuDeviceGetDefaultMemPool");
  Load(&g_vendor.cuMemPoolSetAttribute, "cuMemPoolSetAttribute");
  Load(&g_vendor.cuMemAllocFromPoolAsync, "cuMemAllocFromPoolAsync");
  Load(&g_vendor.cuMemFreeAsync, "cuMemFreeAsync");
  Load(&g_vendor.cuMemcpyHtoD, "cuMemcpyHtoD", "cuMemcpyHtoD_v2");
  VendorCheck(g_vendor.cuInit(0), "cuInit");
  int device = 0;
  VendorCheck(g_vendor.cuDeviceGet(&device, 0), "cuDeviceGet");
  VendorCheck(g_vendor.cuDevicePrimaryCtxRetain(&g_vendor.context, device),
              "cuDevicePrimaryCtxRetain");
  VendorCheck(g_vendor.cuCtxSetCurrent(g_vendor.context), "cuCtxSetCurrent");
  VendorCheck(g_vendor.cuStreamCreate(&g_vendor.stream, 1), "cuStreamCreate");
  VendorCheck(g_vendor.cuEventCreate(&g_vendor.event, 2), "cuEventCreate");
  VendorCheck(g_vendor.cuMemAlloc(&g_vendor.memory, 4096), "cuMemAlloc");
  VendorCheck(g_vendor.cuDeviceGetDefaultMemPool(&g_vendor.pool, device),
              "cuDeviceGetDefaultMemPool");
  // The idle memory the HAL's pool keeps by default, so both sides reuse.
  uint64_t threshold = uint64_t{64} << 20;
  VendorCheck(g_vendor.cuMemPoolSetAttribute(
                  g_vendor.pool, kReleaseThresholdAttribute, &threshold),
              "cuMemPoolSetAttribute");
}

// The vendor's context is per thread: benchmarks run on the main thread,
// but make it current each time for the peer-less baselines.
void VendorCurrent() {
  VendorCheck(g_vendor.cuCtxSetCurrent(g_vendor.context), "cuCtxSetCurrent");
}

void CloseVendor() {
  VendorCurrent();
  VendorCheck(g_vendor.cuMemFree(g_vendor.memory), "cuMemFree");
  VendorCheck(g_vendor.cuEventDestroy(g_vendor.event), "cuEventDestroy");
  VendorCheck(g_vendor.cuStreamDestroy(g_vendor.stream), "cuStreamDestroy");
  VendorCheck(g_vendor.cuDevicePrimaryCtxRelease(0),
              "cuDevicePrimaryCtxRelease");
  dlclose(g_vendor.library);
}

//===----------------------------------------------------------------------===//
// signal_wake_vs_futex
//===----------------------------------------------------------------------===//

uint64_t ThreadCpuNs() {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000u +
         static_cast<uint64_t>(ts.tv_nsec);
}

// CPU time both threads of a ping-pong case spent, and the waits they made
// (two per round trip), summed over every repetition of the case.
struct CpuCost {
  uint64_t cpu_ns = 0;
  uint64_t waits = 0;
  double PerWait() const {
    return waits ? static_cast<double>(cpu_ns) / static_cast<double>(waits)
                 : NAN;
  }
};
std::map<std::string, CpuCost> g_cpu;

// The spin the spin figure runs with: HAL_SYNC_SPIN_NS when it is set and
// not 0, else this (long enough for the peer's answer to come within it:
// the figure measures the spinning path, not the default's choice).
constexpr uint64_t kFigureSpinNs = 10000;
uint64_t g_figure_spin_ns = kFigureSpinNs;

// Host signal -> host wait round trips between two threads on two host
// semaphores, with host waits spinning for |spin_ns| before they sleep.
void SignalWakeRoundTrips(benchmark::State& state, uint64_t spin_ns,
                          const char* name) {
  uint64_t saved_spin = hal_semaphore_spin_ns();
  hal_semaphore_set_spin_ns(spin_ns);
  hal_semaphore_t* ping = nullptr;
  hal_semaphore_t* pong = nullptr;
  Check(hal_semaphore_create_host(hal_allocator_system(), 0, &ping), "ping");
  Check(hal_semaphore_create_host(hal_allocator_system(), 0, &pong), "pong");
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> peer_cpu{0};
  std::thread peer([&] {
    uint64_t start = ThreadCpuNs();
    for (uint64_t v = 1;; ++v) {
      Check(hal_semaphore_wait(ping, v, hal_infinite_timeout()), "peer wait");
      if (stop.load(std::memory_order_acquire))
        break;
      Check(hal_semaphore_signal(pong, v), "peer signal");
    }
    peer_cpu.store(ThreadCpuNs() - start, std::memory_order_release);
  });
  uint64_t value = 0;
  uint64_t start = ThreadCpuNs();
  for (auto _ : state) {
    ++value;
    Check(hal_semaphore_signal(ping, value), "signal");
    Check(hal_semaphore_wait(pong, value, hal_infinite_timeout()), "wait");
  }
  uint64_t main_cpu = ThreadCpuNs() - start;
  stop.store(true, std::memory_order_release);
  Check(hal_semaphore_signal(ping, value + 1), "stop");
  peer.join();
  CpuCost& cost = g_cpu[name];
  cost.cpu_ns += main_cpu + peer_cpu.load(std::memory_order_acquire);
  cost.waits += 2 * value;
  hal_semaphore_release(ping);
  hal_semaphore_release(pong);
  hal_semaphore_set_spin_ns(saved_spin);
}

// The sleeping figure: waits never spin, whatever the process's setting.
void BM_SignalWake_Hal(benchmark::State& state) {
  SignalWakeRoundTrips(state, 0, "BM_SignalWake_Hal");
}

void BM_SignalWakeSpin_Hal(benchmark::State& state) {
  SignalWakeRoundTrips(state, g_figure_spin_ns, "BM_SignalWakeSpin_Hal");
}

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

// The raw spin baseline: two words counting up, each side polling the
// other's until it reaches the round; it never sleeps.
void BM_SignalWake_Spin(benchmark::State& state) {
  std::atomic<uint64_t> ping{0}, pong{0};
  std::atomic<bool> stop{false};
  std::thread peer([&] {
    for (uint64_t v = 1;; ++v) {
      while (ping.load(std::memory_order_acquire) < v)
        CpuRelax();
      if (stop.load(std::memory_order_acquire))
        return;
      pong.store(v, std::memory_order_release);
    }
  });
  uint64_t value = 0;
  for (auto _ : state) {
    ++value;
    ping.store(value, std::memory_order_release);
    while (pong.load(std::memory_order_acquire) < value)
      CpuRelax();
  }
  stop.store(true, std::memory_order_release);
  ping.store(value + 1, std::memory_order_release);
  peer.join();
}

// CPU time (ns) a host wait burns when it blocks for 1 ms with waits
// spinning for |spin_ns|: the waiting thread's CPU time over |count| waits
// on a semaphore nobody signals, each timing out after 1 ms.
double BlockedWaitCpuNs(uint64_t spin_ns, int count) {
  uint64_t saved_spin = hal_semaphore_spin_ns();
  hal_semaphore_set_spin_ns(spin_ns);
  hal_semaphore_t* never = nullptr;
  Check(hal_semaphore_create_host(hal_allocator_system(), 0, &never), "never");
  uint64_t start = ThreadCpuNs();
  for (int i = 0; i < count; ++i) {
    hal_status_t status =
        hal_semaphore_wait(never, 1, hal_make_timeout_ns(1000000));
    if (hal_status_code(status) != HAL_STATUS_DEADLINE_EXCEEDED)
      Die("blocked wait", status);
    hal_status_free(status);
  }
  uint64_t cpu = ThreadCpuNs() - start;
  hal_semaphore_release(never);
  hal_semaphore_set_spin_ns(saved_spin);
  return static_cast<double>(cpu) / count;
}

long Futex(std::atomic<uint32_t>* word, int op, uint32_t value) {
  return syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), op, value,
                 nullptr, nullptr, 0);
}

// The raw baseline: two futex words counting up, each side sleeping on the
// other's word until it reaches the round (FUTEX_WAIT only when behind).
void FutexSignal(std::atomic<uint32_t>* word, uint32_t value) {
  word->store(value, std::memory_order_release);
  Futex(word, FUTEX_WAKE_PRIVATE, INT32_MAX);
}

void FutexWait(std::atomic<uint32_t>* word, uint32_t value) {
  for (;;) {
    uint32_t seen = word->load(std::memory_order_acquire);
    if (seen >= value)
      return;
    Futex(word, FUTEX_WAIT_PRIVATE, seen);
  }
}

void BM_SignalWake_Futex(benchmark::State& state) {
  std::atomic<uint32_t> ping{0}, pong{0};
  std::atomic<bool> stop{false};
  std::thread peer([&] {
    for (uint32_t v = 1;; ++v) {
      FutexWait(&ping, v);
      if (stop.load(std::memory_order_acquire))
        return;
      FutexSignal(&pong, v);
    }
  });
  uint32_t value = 0;
  for (auto _ : state) {
    ++value;
    FutexSignal(&ping, value);
    FutexWait(&pong, value);
  }
  stop.store(true, std::memory_order_release);
  FutexSignal(&ping, value + 1);
  peer.join();
}

//===----------------------------------------------------------------------===//
// Submissions
//===----------------------------------------------------------------------===//

// A submission with no command buffer and one signal, then a host wait.
void EmptySubmit(hal_device_t* device, hal_semaphore_t* timeline,
                 uint64_t* value) {
  ++*value;
  hal_semaphore_list_t signals = {1, &timeline, value};
  Check(hal_device_queue_execute(device, 0, nullptr, &signals, 0, nullptr),
        "queue_execute");
  Check(hal_semaphore_wait(timeline, *value, hal_infinite_timeout()), "wait");
}

// Empty submissions and waits on |device| (the empty-submit figure, and
// both sides of the parked one).
void EmptySubmits(benchmark::State& state, hal_device_t* device) {
  hal_semaphore_t* timeline = nullptr;
  Check(hal_device_create_semaphore(device, 0, &timeline), "semaphore");
  uint64_t value = 0;
  for (auto _ : state)
    EmptySubmit(device, timeline, &value);
  hal_semaphore_release(timeline);
}

void BM_EmptySubmit_Hal(benchmark::State& state) {
  EmptySubmits(state, g_hal.stream);
}

void BM_EmptySubmit_Vendor(benchmark::State& state) {
  VendorCurrent();
  for (auto _ : state) {
    VendorCheck(g_vendor.cuEventRecord(g_vendor.event, g_vendor.stream),
                "cuEventRecord");
    VendorCheck(g_vendor.cuEventSynchronize(g_vendor.event),
                "cuEventSynchronize");
  }
}

// A REUSABLE command buffer of |ops| 4-byte fills of |buffer|.
hal_command_buffer_t* FillCommandBuffer(hal_device_t* device,
                                        hal_buffer_t* buffer, uint32_t ops) {
  hal_command_buffer_t* cb = nullptr;
  Check(hal_device_create_command_buffer(device,
                                         HAL_COMMAND_BUFFER_MODE_REUSABLE, &cb),
        "command buffer");
  Check(hal_command_buffer_begin(cb), "begin");
  for (uint32_t i = 0; i < ops; ++i) {
    Check(hal_command_buffer_fill_buffer(cb, buffer, uint64_t{i} * 4, 4, &i, 4),
          "fill");
  }
  Check(hal_command_buffer_end(cb), "end");
  return cb;
}

hal_buffer_t* DeviceBuffer(hal_device_t* device, uint64_t size) {
  hal_buffer_params_t params = {HAL_MEMORY_TYPE_DEVICE_LOCAL,
                                HAL_BUFFER_USAGE_DEFAULT};
  hal_buffer_t* buffer = nullptr;
  Check(hal_device_allocate_buffer(device, params, size, &buffer), "buffer");
  return buffer;
}

// Back-to-back submissions of a one-fill command buffer, each signaling;
// the last iteration also waits for all of them, inside the timed loop, so
// the figure is the rate the device completes them, not only the enqueue.
void BM_SubmitThroughput_Hal(benchmark::State& state) {
  hal_buffer_t* buffer = DeviceBuffer(g_hal.stream, 4096);
  hal_command_buffer_t* cb = FillCommandBuffer(g_hal.stream, buffer, 1);
  hal_semaphore_t* timeline = nullptr;
  Check(hal_device_create_semaphore(g_hal.stream, 0, &timeline), "semaphore");
  uint64_t value = 0;
  for (auto _ : state) {
    ++value;
    hal_semaphore_list_t signals = {1, &timeline, &value};
    Check(hal_device_queue_execute(g_hal.stream, 0, nullptr, &signals, 1, &cb),
          "queue_execute");
    if (value == static_cast<uint64_t>(state.max_iterations)) {
      Check(hal_semaphore_wait(timeline, value, hal_infinite_timeout()),
            "wait");
    }
  }
  state.SetItemsProcessed(state.iterations());
  hal_semaphore_release(timeline);
  hal_command_buffer_release(cb);
  hal_buffer_release(buffer);
}

void BM_SubmitThroughput_Vendor(benchmark::State& state) {
  VendorCurrent();
  uint64_t count = 0;
  for (auto _ : state) {
    VendorCheck(
        g_vendor.cuMemsetD32Async(g_vendor.memory, 7, 1, g_vendor.stream),
        "cuMemsetD32Async");
    VendorCheck(g_vendor.cuEventRecord(g_vendor.event, g_vendor.stream),
                "cuEventRecord");
    if (++count == static_cast<uint64_t>(state.max_iterations)) {
      VendorCheck(g_vendor.cuStreamSynchronize(g_vendor.stream),
                  "cuStreamSynchronize");
    }
  }
  state.SetItemsProcessed(state.iterations());
}

// A reused command buffer of state.range(0) fills, submitted and waited
// for: the submit cost against the ops per command buffer, per strategy.
void SubmitOps(benchmark::State& state, hal_device_t* device) {
  uint32_t ops = static_cast<uint32_t>(state.range(0));
  hal_buffer_t* buffer = DeviceBuffer(device, uint64_t{ops} * 4);
  hal_command_buffer_t* cb = FillCommandBuffer(device, buffer, ops);
  hal_semaphore_t* timeline = nullptr;
  Check(hal_device_create_semaphore(device, 0, &timeline), "semaphore");
  uint64_t value = 0;
  for (auto _ : state) {
    ++value;
    hal_semaphore_list_t signals = {1, &timeline, &value};
    Check(hal_device_queue_execute(device, 0, nullptr, &signals, 1, &cb),
          "queue_execute");
    Check(hal_semaphore_wait(timeline, value, hal_infinite_timeout()), "wait");
  }
  hal_semaphore_release(timeline);
  hal_command_buffer_release(cb);
  hal_buffer_release(buffer);
}

void BM_SubmitOps_Graph(benchmark::State& state) {
  SubmitOps(state, g_hal.graph);
}
void BM_SubmitOps_Stream(benchmark::State& state) {
  SubmitOps(state, g_hal.stream);
}

// Submissions parked on a gate nobody signals until the end of the run,
// one device per count, each on its queue 0, where its measured
// submissions go too (made once, before the first repetition, parked
// across all of them). Count 0 is the stream device, which holds none, as
// every other case's device.
const uint32_t kParkedCounts[] = {1000, 10000, kParked};

struct Parked {
  uint32_t count = 0;
  hal_device_t* device = nullptr;
  hal_semaphore_t* gate = nullptr;
  hal_semaphore_t* done = nullptr;
};
Parked g_parked[HAL_ARRAYSIZE(kParkedCounts)];

void ParkSubmissions() {
  for (size_t p = 0; p < HAL_ARRAYSIZE(kParkedCounts); ++p) {
    Parked* parked = &g_parked[p];
    parked->count = kParkedCounts[p];
    parked->device = CreateDevice(g_hal.stream_driver);
    Check(hal_device_create_semaphore(parked->device, 0, &parked->gate),
          "gate");
    Check(hal_device_create_semaphore(parked->device, 0, &parked->done),
          "done");
    for (uint32_t i = 0; i < parked->count; ++i) {
      uint64_t one = 1;
      uint64_t value = uint64_t{i} + 1;
      hal_semaphore_list_t waits = {1, &parked->gate, &one};
      hal_semaphore_list_t signals = {1, &parked->done, &value};
      Check(hal_device_queue_execute(parked->device, 0, &waits, &signals, 0,
                                     nullptr),
            "park");
    }
  }
}

void UnparkSubmissions() {
  for (Parked& parked : g_parked) {
    if (!parked.device)
      continue;
    Check(hal_semaphore_signal(parked.gate, 1), "unpark");
    Check(hal_semaphore_wait(parked.done, parked.count, hal_infinite_timeout()),
          "drain");
    hal_semaphore_release(parked.gate);
    hal_semaphore_release(parked.done);
    hal_device_release(parked.device);
  }
}

// Empty submit + wait with state.range(0) submissions parked on its queue.
void BM_SubmitParked(benchmark::State& state) {
  hal_device_t* device = g_hal.stream;
  for (Parked& parked : g_parked) {
    if (parked.count == static_cast<uint32_t>(state.range(0)))
      device = parked.device;
  }
  EmptySubmits(state, device);
}

//===----------------------------------------------------------------------===//
// Queue-ordered allocation and file transfers
//===----------------------------------------------------------------------===//

// alloca of 1 MiB, dealloca after it, host wait for the dealloca.
void BM_Alloca_Hal(benchmark::State& state) {
  hal_semaphore_t* timeline = nullptr;
  Check(hal_device_create_semaphore(g_hal.stream, 0, &timeline), "semaphore");
  hal_buffer_params_t params = {HAL_MEMORY_TYPE_DEVICE_LOCAL,
                                HAL_BUFFER_USAGE_DEFAULT};
  uint64_t value = 0;
  for (auto _ : state) {
    uint64_t allocated = value + 1, freed = value + 2;
    hal_semaphore_list_t alloca_signal = {1, &timeline, &allocated};
    hal_semaphore_list_t dealloca_wait = {1, &timeline, &allocated};
    hal_semaphore_list_t dealloca_signal = {1, &timeline, &freed};
    hal_buffer_t* buffer = nullptr;
    Check(hal_device_queue_alloca(g_hal.stream, 0, nullptr, &alloca_signal,
                                  params, kAllocaBytes, &buffer),
          "queue_alloca");
    Check(hal_device_queue_dealloca(g_hal.stream, 0, &dealloca_wait,
                                    &dealloca_signal, buffer),
          "queue_dealloca");
    hal_buffer_release(buffer);
    Check(hal_semaphore_wait(timeline, freed, hal_infinite_timeout()), "wait");
    value = freed;
  }
  hal_semaphore_release(timeline);
}

// The vendor's pool calls on a stream, then an event round trip.
void BM_Alloca_Vendor(benchmark::State& state) {
  VendorCurrent();
  for (auto _ : state) {
    uint64_t pointer = 0;
    VendorCheck(g_vendor.cuMemAllocFromPoolAsync(
                    &pointer, kAllocaBytes, g_vendor.pool, g_vendor.stream),
                "cuMemAllocFromPoolAsync");
    VendorCheck(g_vendor.cuMemFreeAsync(pointer, g_vendor.stream),
                "cuMemFreeAsync");
    VendorCheck(g_vendor.cuEventRecord(g_vendor.event, g_vendor.stream),
                "cuEventRecord");
    VendorCheck(g_vendor.cuEventSynchronize(g_vendor.event),
                "cuEventSynchronize");
  }
}

// A 64 MiB file of the temporary directory (in the page cache once
// written), opened for both sides of the read figure.
struct ReadFile {
  int fd = -1;
  hal_file_t* file = nullptr;
  hal_buffer_t* target = nullptr;
  std::vector<uint8_t> host;
};
ReadFile g_read;

void OpenReadFile() {
  const char* dir = std::getenv("TMPDIR");
  std::string path =
      std::string(dir && *dir ? dir : "/tmp") + "/hal-bench-read-XXXXXX";
  g_read.fd = mkstemp(path.data());
  if (g_read.fd < 0) {
    std::fprintf(stderr, "hal-bench: cannot create %s\n", path.c_str());
    std::exit(1);
  }
  unlink(path.c_str());
  std::vector<uint8_t> chunk(1 << 20);
  for (size_t i = 0; i < chunk.size(); ++i)
    chunk[i] = static_cast<uint8_t>(i * 31);
  for (uint64_t written = 0; written < kFileBytes; written += chunk.size()) {
    if (pwrite(g_read.fd, chunk.data(), chunk.size(),
               static_cast<off_t>(written)) !=
        static_cast<ssize_t>(chunk.size())) {
      std::fprintf(stderr, "hal-bench: cannot write the read file\n");
      std::exit(1);
    }
  }
  Check(hal_file_from_fd(g_read.fd, HAL_FILE_ACCESS_READ, &g_read.file),
        "file");
  g_read.target = DeviceBuffer(g_hal.stream, kFileBytes);
  g_read.host.resize(kFileBytes);
}

void CloseReadFile() {
  hal_buffer_release(g_read.target);
  hal_file_release(g_read.file);
  close(g_read.fd);
}

// hal_device_queue_read of the whole file, then a host wait.
void BM_FileRead_Hal(benchmark::State& state) {
  hal_semaphore_t* timeline = nullptr;
  Check(hal_device_create_semaphore(g_hal.stream, 0, &timeline), "semaphore");
  uint64_t value = 0;
  for (auto _ : state) {
    ++value;
    hal_semaphore_list_t signals = {1, &timeline, &value};
    Check(hal_device_queue_read(g_hal.stream, 0, nullptr, &signals, g_read.file,
                                0, g_read.target, 0, kFileBytes),
          "queue_read");
    Check(hal_semaphore_wait(timeline, value, hal_infinite_timeout()), "wait");
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(kFileBytes));
  hal_semaphore_release(timeline);
}

// pread of the whole file into host memory, then one copy to the device.
void BM_FileRead_PreadCopy(benchmark::State& state) {
  VendorCurrent();
  uint64_t device_memory = 0;
  VendorCheck(g_vendor.cuMemAlloc(&device_memory, kFileBytes), "cuMemAlloc");
  for (auto _ : state) {
    uint64_t done = 0;
    while (done < kFileBytes) {
      ssize_t n = pread(g_read.fd, g_read.host.data() + done, kFileBytes - done,
                        static_cast<off_t>(done));
      if (n <= 0) {
        std::fprintf(stderr, "hal-bench: pread failed\n");
        std::exit(1);
      }
      done += static_cast<uint64_t>(n);
    }
    VendorCheck(
        g_vendor.cuMemcpyHtoD(device_memory, g_read.host.data(), kFileBytes),
        "cuMemcpyHtoD");
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(kFileBytes));
  VendorCheck(g_vendor.cuMemFree(device_memory), "cuMemFree");
}

//===----------------------------------------------------------------------===//
// All-reduce bus bandwidth (allreduce_busbw_vs_memcpy_2, _4)
//===----------------------------------------------------------------------===//
//
// nccl-tests' bus bandwidth: an all-reduce of S bytes over n ranks moves
// S * 2(n-1)/n bytes through each rank's link, so busbw = that / time. The
// baseline copies as many bytes with memcpy on the host, so the ratio of
// times is busbw over the machine's memcpy bandwidth.

struct AllReduceRanks {
  std::vector<hal_device_t*> devices;
  std::vector<hal_channel_t*> channels;
  std::vector<hal_buffer_t*> buffers;
  std::vector<hal_command_buffer_t*> command_buffers;
  std::vector<hal_semaphore_t*> timelines;
  std::string skipped;  // why there are none ("" when there are)
};
AllReduceRanks g_all_reduce[5];  // by rank count: 2 and 4

double BusFactor(int ranks) {
  return 2.0 * (ranks - 1) / ranks;
}

// |ranks| devices of the stream driver (a URI each), a channel group over
// them and on each a reusable command buffer of one in-place all-reduce.
void OpenAllReduce(int ranks) {
  AllReduceRanks& set = g_all_reduce[ranks];
  for (int r = 0; r < ranks; ++r) {
    std::string uri =
        g_hal.stream_driver + std::string("://") + std::to_string(r);
    hal_device_t* device = nullptr;
    hal_status_t status = hal_driver_registry_create_device(
        g_hal.registry, uri.c_str(), hal_allocator_system(), &device);
    if (status) {
      char text[256];
      hal_status_format(status, text, sizeof(text));
      hal_status_free(status);
      set.skipped = "no device " + uri + " (" + text + ")";
      return;
    }
    set.devices.push_back(device);
  }
  set.channels.resize(ranks);
  hal_status_t status = hal_channel_create_group(
      static_cast<size_t>(ranks), set.devices.data(), set.channels.data());
  if (status) {
    char text[256];
    hal_status_format(status, text, sizeof(text));
    hal_status_free(status);
    set.channels.clear();
    set.skipped = std::string("no channels: ") + text;
    return;
  }
  for (int r = 0; r < ranks; ++r) {
    hal_buffer_t* buffer = DeviceBuffer(set.devices[r], kAllReduceBytes);
    hal_command_buffer_t* cb = nullptr;
    Check(hal_device_create_command_buffer(
              set.devices[r], HAL_COMMAND_BUFFER_MODE_REUSABLE, &cb),
          "command buffer");
    Check(hal_command_buffer_begin(cb), "begin");
    hal_collective_params_t params = {};
    params.kind = HAL_COLLECTIVE_ALL_REDUCE;
    params.element_type = HAL_ELEMENT_TYPE_FLOAT32;
    params.reduction = HAL_REDUCTION_SUM;
    params.count = kAllReduceBytes / 4;
    Check(hal_command_buffer_collective(cb, set.channels[r], &params, buffer, 0,
                                        buffer, 0),
          "collective");
    Check(hal_command_buffer_end(cb), "end");
    hal_semaphore_t* timeline = nullptr;
    Check(hal_device_create_semaphore(set.devices[r], 0, &timeline),
          "semaphore");
    set.buffers.push_back(buffer);
    set.command_buffers.push_back(cb);
    set.timelines.push_back(timeline);
  }
}

void CloseAllReduce(int ranks) {
  AllReduceRanks& set = g_all_reduce[ranks];
  for (hal_semaphore_t* timeline : set.timelines)
    hal_semaphore_release(timeline);
  for (hal_command_buffer_t* cb : set.command_buffers)
    hal_command_buffer_release(cb);
  for (hal_buffer_t* buffer : set.buffers)
    hal_buffer_release(buffer);
  for (hal_channel_t* channel : set.channels)
    hal_channel_release(channel);
  for (hal_device_t* device : set.devices)
    hal_device_release(device);
}

// Every rank submits its all-reduce; then the host waits for all of them.
void BM_AllReduce_Hal(benchmark::State& state) {
  int ranks = static_cast<int>(state.range(0));
  AllReduceRanks& set = g_all_reduce[ranks];
  if (!set.skipped.empty()) {
    state.SkipWithError(set.skipped.c_str());
    return;
  }
  std::vector<uint64_t> values(ranks, 0);
  for (int r = 0; r < ranks; ++r)
    Check(hal_semaphore_query(set.timelines[r], &values[r]), "query");
  for (auto _ : state) {
    for (int r = 0; r < ranks; ++r) {
      ++values[r];
      hal_semaphore_list_t signals = {1, &set.timelines[r], &values[r]};
      Check(hal_device_queue_execute(set.devices[r], 0, nullptr, &signals, 1,
                                     &set.command_buffers[r]),
            "queue_execute");
    }
    for (int r = 0; r < ranks; ++r) {
      Check(hal_semaphore_wait(set.timelines[r], values[r],
                               hal_infinite_timeout()),
            "wait");
    }
  }
  state.SetBytesProcessed(
      static_cast<int64_t>(static_cast<double>(state.iterations()) *
                           kAllReduceBytes * BusFactor(ranks)));
}

// memcpy of as many bytes as one rank's link carries in the all-reduce.
void BM_AllReduce_Memcpy(benchmark::State& state) {
  int ranks = static_cast<int>(state.range(0));
  size_t bytes = static_cast<size_t>(kAllReduceBytes * BusFactor(ranks));
  static std::vector<uint8_t> from(kAllReduceBytes * 2, 1), to(from.size());
  for (auto _ : state) {
    std::memcpy(to.data(), from.data(), bytes);
    benchmark::DoNotOptimize(to.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(
      static_cast<int64_t>(state.iterations() * static_cast<int64_t>(bytes)));
}

//===----------------------------------------------------------------------===//
// mlir_parallel_for_vs_mlir
//===----------------------------------------------------------------------===//

// compat/bench/parallel_for_bench.mlir, lowered with -async-parallel-for
// and linked into two modules (compat/bench/parallel_for_bridge.c): one on
// libhal-async-runtime, one on MLIR 14's own runtime. Both are loaded into
// this process; each module says which library its kernel's runtime calls
// reach, and OpenMlir checks it. Every iteration of either case calls both
// kernels, the other runtime's untimed first: the two cases run in the same
// conditions, and the machine's changes of pace (tens to hundreds of
// milliseconds long on a virtual machine) reach both alike. A call is
// timed from the host around it. The paths come from the environment
// (meson's benchmark run sets them): HAL_BENCH_PARALLEL_FOR_HAL and
// HAL_BENCH_PARALLEL_FOR_MLIR.
struct MemRef2d {
  float* allocated;
  float* aligned;
  int64_t offset;
  int64_t sizes[2];
  int64_t strides[2];
};
using ParallelForFn = void (*)(MemRef2d*, MemRef2d*, MemRef2d*);

struct MlirRun {
  void* modules[2] = {nullptr, nullptr};  // ours, MLIR's
  ParallelForFn kernels[2] = {nullptr, nullptr};
  std::vector<float> a, b, c;
  MemRef2d views[3];
  std::string skipped;  // why the figure does not run, or empty
};
MlirRun g_mlir;
constexpr int64_t kParallelForSide = 1024;
// The sum is checked at the first and last cell of every run of this many
// (512 cells in all): each of the kernel's blocks (whole multiples of it:
// 16 of 65536 on two workers) is checked where it begins and ends, and no
// block can be skipped unseen. Those cells are zeroed before each call; the
// rest keep the 2 of the call before.
constexpr size_t kParallelForProbeStride = 4096;

void OpenMlir() {
  const char* names[] = {"HAL_BENCH_PARALLEL_FOR_HAL",
                         "HAL_BENCH_PARALLEL_FOR_MLIR"};
  for (int i = 0; i < 2; ++i) {
    const char* path = std::getenv(names[i]);
    if (!path || !*path) {
      g_mlir.skipped = std::string(names[i]) +
                       " is not set (meson's benchmark run sets it when MLIR "
                       "14 is installed)";
      return;
    }
    void* module = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!module) {
      g_mlir.skipped = std::string("dlopen ") + path + ": " + dlerror();
      return;
    }
    g_mlir.modules[i] = module;
    auto open = reinterpret_cast<int (*)(char*, size_t)>(
        dlsym(module, "hal_bench_parallel_for_open"));
    auto kernel = reinterpret_cast<ParallelForFn>(
        dlsym(module, "_mlir_ciface_parallel_for_add"));
    char error[512] = "";
    if (!open || !kernel) {
      g_mlir.skipped = std::string(path) + " lacks its entry points";
      return;
    }
    if (!open(error, sizeof(error))) {
      g_mlir.skipped = std::string(path) + ": " + error;
      return;
    }
    // A module that reaches the other runtime (the two variables swapped,
    // one module named twice) would make a figure of nothing.
    auto runtime = reinterpret_cast<const char* (*)()>(
        dlsym(module, "hal_bench_parallel_for_runtime"));
    const char* reached = runtime ? runtime() : nullptr;
    const char* expected =
        i == 0 ? "libhal-async-runtime" : "libmlir_async_runtime";
    if (!reached || !std::strstr(reached, expected)) {
      g_mlir.skipped = std::string(names[i]) + "=" + path +
                       ": its kernel reaches mlirAsyncRuntimeExecute in " +
                       (reached ? reached : "an unknown library") +
                       ", expected " + expected;
      return;
    }
    g_mlir.kernels[i] = kernel;
  }
  size_t count = static_cast<size_t>(kParallelForSide * kParallelForSide);
  g_mlir.a.assign(count, 1.0f);
  g_mlir.b.assign(count, 1.0f);
  g_mlir.c.assign(count, 0.0f);
  std::vector<float>* arrays[] = {&g_mlir.a, &g_mlir.b, &g_mlir.c};
  for (int i = 0; i < 3; ++i) {
    float* data = arrays[i]->data();
    g_mlir.views[i] = {data,
                       data,
                       0,
                       {kParallelForSide, kParallelForSide},
                       {kParallelForSide, 1}};
  }
}

void CloseMlir() {
  for (void* module : g_mlir.modules) {
    if (!module)
      continue;
    auto close = reinterpret_cast<void (*)()>(
        dlsym(module, "hal_bench_parallel_for_close"));
    if (close)
      close();
  }
}

// One parallel-for on runtime |which| (0 ours, 1 MLIR's); its host time in
// seconds. Dies if a probed cell of the sum is wrong.
double RunParallelFor(int which) {
  std::vector<float>& c = g_mlir.c;
  for (size_t probe = 0; probe < c.size(); probe += kParallelForProbeStride) {
    c[probe] = 0.0f;
    c[probe + kParallelForProbeStride - 1] = 0.0f;
  }
  auto start = std::chrono::steady_clock::now();
  g_mlir.kernels[which](&g_mlir.views[0], &g_mlir.views[1], &g_mlir.views[2]);
  std::chrono::duration<double> seconds =
      std::chrono::steady_clock::now() - start;
  for (size_t first = 0; first < c.size(); first += kParallelForProbeStride) {
    for (size_t probe : {first, first + kParallelForProbeStride - 1}) {
      if (c[probe] != 2.0f) {
        std::fprintf(stderr,
                     "hal-bench: the parallel-for on %s left C[%zu] = %g, "
                     "expected 2\n",
                     which == 0 ? "libhal-async-runtime" : "MLIR's runtime",
                     probe, static_cast<double>(c[probe]));
        std::exit(1);
      }
    }
  }
  return seconds.count();
}

void MlirParallelFor(benchmark::State& state, int which) {
  for (auto _ : state) {
    RunParallelFor(1 - which);
    state.SetIterationTime(RunParallelFor(which));
  }
}

void BM_MlirParallelFor_Hal(benchmark::State& state) {
  MlirParallelFor(state, 0);
}

void BM_MlirParallelFor_Mlir(benchmark::State& state) {
  MlirParallelFor(state, 1);
}

//===----------------------------------------------------------------------===//
// Figures
//===----------------------------------------------------------------------===//

struct Figure {
  const char* key;
  const char* hal_case;
  const char* baseline_case;
  const char* what;
  bool higher_is_better;  // the ratio is baseline time / HAL time
  // The ratio must be <= (or >= when higher) this; NAN: reported, no
  // target.
  double target;
};

const Figure kFigures[] = {
    {"signal_wake_vs_futex", "BM_SignalWake_Hal", "BM_SignalWake_Futex",
     "host signal -> waiter woken round trip / raw futex ping-pong", false,
     1.1},
    {"signal_wake_spin_vs_spin", "BM_SignalWakeSpin_Hal", "BM_SignalWake_Spin",
     "the same round trip, waits spinning before they sleep / raw spin "
     "ping-pong",
     false, 2.0},
    {"empty_submit_vs_vendor", "BM_EmptySubmit_Hal", "BM_EmptySubmit_Vendor",
     "queue_execute (no command buffer, one signal) + host wait / "
     "cuEventRecord + cuEventSynchronize",
     false, 1.5},
    {"submit_throughput_vs_vendor", "BM_SubmitThroughput_Hal",
     "BM_SubmitThroughput_Vendor",
     "one-fill submissions per second / cuMemsetD32Async + cuEventRecord per "
     "second",
     true, 0.5},
    {"graph_vs_stream_256", "BM_SubmitOps_Graph/256", "BM_SubmitOps_Stream/256",
     "reused 256-op command buffer: graph driver / stream driver", false, 0.1},
    {"parked_100k_vs_0", "BM_SubmitParked/100000", "BM_SubmitParked/0",
     "empty submit + wait with 100 000 submissions parked / with none", false,
     1.5},
    {"alloca_vs_vendor_pool", "BM_Alloca_Hal", "BM_Alloca_Vendor",
     "queue_alloca + queue_dealloca of 1 MiB + host wait / "
     "cuMemAllocFromPoolAsync + cuMemFreeAsync + event round trip",
     false, NAN},
    {"file_read_vs_pread_copy", "BM_FileRead_Hal", "BM_FileRead_PreadCopy",
     "queue_read of a 64 MiB file + host wait, bytes per second / pread into "
     "host memory + one cuMemcpyHtoD, bytes per second",
     true, 0.8},
    {"allreduce_busbw_vs_memcpy_2", "BM_AllReduce_Hal/2",
     "BM_AllReduce_Memcpy/2",
     "all-reduce of 16 MiB float32 over 2 devices, bus bandwidth "
     "(nccl-tests) / host memcpy bandwidth",
     true, NAN},
    {"allreduce_busbw_vs_memcpy_4", "BM_AllReduce_Hal/4",
     "BM_AllReduce_Memcpy/4", "the same over 4 devices", true, NAN},
    {"mlir_parallel_for_vs_mlir", "BM_MlirParallelFor_Hal",
     "BM_MlirParallelFor_Mlir",
     "MLIR parallel-for (1024 x 1024 f32 add, -async-parallel-for) on "
     "libhal-async-runtime / on MLIR 14's runtime, in-process time",
     false, 0.9},
};

// Every repetition's time per iteration (ns) of each case, and its place
// in the run, in run order.
std::map<std::string, std::vector<double>> g_samples;
std::map<std::string, std::vector<int>> g_order;
// Each case's iteration count, as its warm-up sized it.
std::map<std::string, benchmark::IterationCount> g_iterations;

class Collector : public benchmark::ConsoleReporter {
 public:
  // |warm_up|: record each case's iteration count, not its time.
  explicit Collector(bool warm_up)
      : ConsoleReporter(OO_None),  // plain text: logs and pipes
        warm_up_(warm_up) {}

  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      if (run.run_type != Run::RT_Iteration || run.error_occurred)
        continue;
      std::string name = run.run_name.function_name;
      if (!run.run_name.args.empty())
        name += "/" + run.run_name.args;
      if (warm_up_) {
        g_iterations[name] = run.iterations;
        continue;
      }
      double ns = run.GetAdjustedRealTime() *
                  (1e9 / benchmark::GetTimeUnitMultiplier(run.time_unit));
      g_samples[name].push_back(ns);
      g_order[name].push_back(next_order_++);
    }
    ConsoleReporter::ReportRuns(runs);
  }

 private:
  bool warm_up_;
  int next_order_ = 0;
};

double Percentile(std::vector<double> values, double p) {
  std::sort(values.begin(), values.end());
  if (values.empty())
    return NAN;
  double index = p * static_cast<double>(values.size() - 1);
  size_t low = static_cast<size_t>(index);
  size_t high = std::min(low + 1, values.size() - 1);
  double fraction = index - static_cast<double>(low);
  return values[low] * (1 - fraction) + values[high] * fraction;
}

struct Stats {
  double median = NAN, min = NAN, max = NAN;
};

Stats StatsOf(const std::vector<double>& values) {
  Stats stats;
  if (values.empty())
    return stats;
  stats.median = Percentile(values, 0.5);
  stats.min = *std::min_element(values.begin(), values.end());
  stats.max = *std::max_element(values.begin(), values.end());
  return stats;
}

void JsonNumber(FILE* out, double value) {
  if (std::isfinite(value))
    std::fprintf(out, "%.6g", value);
  else
    std::fprintf(out, "null");
}

// The memory figures: heap bytes each of |kMemoryCount| objects holds,
// counted (net of frees) while they are made, on a fresh device.
constexpr uint32_t kMemoryCount = 10000;
// Heap allocations per warm submission (CountWarmAllocations): empty
// submissions on the stream device, one-fill command buffers on the stream
// and graph devices. The figure is the largest of libhal's and its
// drivers'; |other|, the largest of the rest of the process's (the vendor
// runtime's), is reported beside it.
struct WarmAllocations {
  uint32_t submits = 0;
  double empty = 0;
  double fill_stream = 0;
  double fill_graph = 0;
  double other = 0;
  double Worst() const {
    return std::max({empty, fill_stream, fill_graph});
  }
};

struct MemoryFigures {
  double parked_submission;  // one wait, one signal, no command buffer
  double pending_wait;       // one more wait on a submission
  double semaphore;          // a device semaphore
};
// What waiting costs in CPU time (ns per wait): in the ping-pong figures
// (both threads' CPU time over their waits) and in waits that block 1 ms.
struct SpinCosts {
  uint64_t spin_ns;
  double spin_per_wait, sleep_per_wait;
  double spin_per_blocked_wait, sleep_per_blocked_wait;
  // The same 1 ms waits with the default spin (HAL_SEMAPHORE_DEFAULT_SPIN_NS).
  double default_per_blocked_wait;
};

SpinCosts MeasureSpinCosts() {
  SpinCosts costs = {};
  costs.spin_ns = g_figure_spin_ns;
  costs.spin_per_wait = g_cpu["BM_SignalWakeSpin_Hal"].PerWait();
  costs.sleep_per_wait = g_cpu["BM_SignalWake_Hal"].PerWait();
  costs.spin_per_blocked_wait = BlockedWaitCpuNs(g_figure_spin_ns, 200);
  costs.sleep_per_blocked_wait = BlockedWaitCpuNs(0, 200);
  costs.default_per_blocked_wait =
      BlockedWaitCpuNs(HAL_SEMAPHORE_DEFAULT_SPIN_NS, 200);
  return costs;
}

// The parked submission's target (bytes).
constexpr double kParkedSubmissionBytesTarget = 512;

int Report(const char* json_path, int repetitions, const WarmAllocations& warm,
           const MemoryFigures& memory, const SpinCosts& spin) {
  std::printf("\n%-28s %12s %12s %12s %12s %8s %8s %8s  %s\n", "figure",
              "HAL median", "HAL min-max", "base median", "base min-max",
              "ratio", "pairs", "target", "verdict");
  struct Row {
    const Figure* figure;
    Stats hal, base;
    double ratio;
    double pair_ratio;  // the median of the per-repetition ratios
    size_t pairs;
    bool noisy;
    // Judged: a target, and at least kDefaultRepetitions pairs to judge by.
    bool judged, met;
  };
  std::vector<Row> rows;
  for (const Figure& figure : kFigures) {
    static const std::vector<double> kNone;
    auto samples = [](const char* name) -> const std::vector<double>& {
      auto found = g_samples.find(name);
      return found == g_samples.end() ? kNone : found->second;
    };
    const std::vector<double>& hal = samples(figure.hal_case);
    const std::vector<double>& base = samples(figure.baseline_case);
    Row row{&figure, StatsOf(hal), StatsOf(base), NAN,  NAN,
            0,       false,        false,         false};
    if (hal.empty() || base.empty()) {
      rows.push_back(row);
      continue;
    }
    row.ratio = figure.higher_is_better ? row.base.median / row.hal.median
                                        : row.hal.median / row.base.median;
    // The repetitions pair up in run order: the i-th of each ran one right
    // after the other (BenchMain).
    std::vector<double> ratios;
    row.pairs = std::min(hal.size(), base.size());
    for (size_t i = 0; i < row.pairs; ++i) {
      ratios.push_back(figure.higher_is_better ? base[i] / hal[i]
                                               : hal[i] / base[i]);
    }
    row.pair_ratio = Percentile(ratios, 0.5);
    double spread =
        (Percentile(ratios, 0.9) - Percentile(ratios, 0.1)) / row.pair_ratio;
    // Too few pairs cannot show a spread: said, not taken for calm.
    bool too_few = row.pairs < static_cast<size_t>(kDefaultRepetitions);
    row.noisy = spread > kNoisySpread || too_few;
    row.judged = !std::isnan(figure.target) && !too_few;
    row.met = figure.higher_is_better ? row.ratio >= figure.target
                                      : row.ratio <= figure.target;
    rows.push_back(row);
  }
  for (const Row& row : rows) {
    if (!std::isfinite(row.ratio)) {
      // Why: the MLIR figure's missing tools, an all-reduce's missing
      // devices or channels, else the filter left the cases out.
      const char* why = "--benchmark_filter";
      const char* hal_case = row.figure->hal_case;
      if (std::strcmp(hal_case, "BM_MlirParallelFor_Hal") == 0 &&
          !g_mlir.skipped.empty())
        why = g_mlir.skipped.c_str();
      for (int ranks : {2, 4}) {
        std::string name = "BM_AllReduce_Hal/" + std::to_string(ranks);
        if (name == hal_case && !g_all_reduce[ranks].skipped.empty())
          why = g_all_reduce[ranks].skipped.c_str();
      }
      std::printf("%-28s not run (%s)\n", row.figure->key, why);
      continue;
    }
    char hal_range[32], base_range[32];
    std::snprintf(hal_range, sizeof(hal_range), "%.0f-%.0f", row.hal.min,
                  row.hal.max);
    std::snprintf(base_range, sizeof(base_range), "%.0f-%.0f", row.base.min,
                  row.base.max);
    char target[16] = "       -";
    if (!std::isnan(row.figure->target)) {
      std::snprintf(target, sizeof(target), "%s%7.2f",
                    row.figure->higher_is_better ? ">" : "<",
                    row.figure->target);
    }
    char unjudged[48];
    std::snprintf(unjudged, sizeof(unjudged), "unjudged (%zu of %d pairs)",
                  row.pairs, kDefaultRepetitions);
    std::printf("%-28s %10.0fns %12s %10.0fns %12s %8.3f %8.3f %s  %s%s\n",
                row.figure->key, row.hal.median, hal_range, row.base.median,
                base_range, row.ratio, row.pair_ratio, target,
                std::isnan(row.figure->target) ? "reported"
                : !row.judged                  ? unjudged
                : row.met                      ? "met"
                                               : "MISSED",
                row.noisy ? " (noisy)" : "");
  }
  std::printf(
      "%-28s %.3f heap allocations per warm submission, the largest of: "
      "empty %.3f, one fill on the stream driver %.3f, on the graph driver "
      "%.3f (%u of each counted, made by libhal and its drivers; target 0: "
      "%s); the vendor runtime and the rest of the process: %.3f\n",
      "warm_submit_allocations", warm.Worst(), warm.empty, warm.fill_stream,
      warm.fill_graph, warm.submits, warm.Worst() == 0 ? "met" : "MISSED",
      warm.other);
  std::printf(
      "%-28s %.0f heap bytes per parked submission (one wait, one "
      "signal; target <= %.0f: %s)\n",
      "bytes_per_parked_submission", memory.parked_submission,
      kParkedSubmissionBytesTarget,
      memory.parked_submission <= kParkedSubmissionBytesTarget ? "met"
                                                               : "MISSED");
  std::printf(
      "%-28s %.0f heap bytes per further wait of a parked "
      "submission (reported)\n",
      "bytes_per_pending_wait", memory.pending_wait);
  std::printf("%-28s %.0f heap bytes per device semaphore (reported)\n",
              "bytes_per_semaphore", memory.semaphore);
  // Each side of the ping-pong figures when its case ran (a filter may
  // leave either out).
  char spinning[64] = "not measured (BM_SignalWakeSpin_Hal did not run)";
  char sleeping[64] = "not measured (BM_SignalWake_Hal did not run)";
  if (!std::isnan(spin.spin_per_wait)) {
    std::snprintf(spinning, sizeof(spinning), "%.0f ns", spin.spin_per_wait);
  }
  if (!std::isnan(spin.sleep_per_wait))
    std::snprintf(sleeping, sizeof(sleeping), "%.0f ns", spin.sleep_per_wait);
  std::printf("%-28s CPU per wait spinning up to %" PRIu64
              " ns: %s; sleeping at once: %s (ping-pong, both threads)\n",
              "spin_cpu_ns_per_wait", spin.spin_ns, spinning, sleeping);
  std::printf("%-28s %.0f ns of CPU per 1 ms wait spinning up to %" PRIu64
              " ns, %.0f ns sleeping at once\n",
              "spin_cpu_ns_per_blocked_wait", spin.spin_per_blocked_wait,
              spin.spin_ns, spin.sleep_per_blocked_wait);
  std::printf(
      "%-28s %.0f ns of CPU per 1 ms wait with the default spin "
      "(%" PRIu64 " ns)\n",
      "default_cpu_ns_per_blocked_wait", spin.default_per_blocked_wait,
      static_cast<uint64_t>(HAL_SEMAPHORE_DEFAULT_SPIN_NS));
  if (!json_path)
    return 0;
  FILE* out = std::fopen(json_path, "w");
  if (!out) {
    std::fprintf(stderr, "hal-bench: cannot write %s: %s\n", json_path,
                 std::strerror(errno));
    return 1;
  }
  time_t now = time(nullptr);
  char date[32];
  strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
  std::fprintf(out, "{\n  \"date\": \"%s\",\n", date);
  std::fprintf(out, "  \"drivers\": {\"stream\": \"%s\", \"graph\": \"%s\"},\n",
               g_hal.stream_driver.c_str(), g_hal.graph_driver.c_str());
  std::fprintf(out, "  \"ratios\": {");
  for (size_t i = 0; i < rows.size(); ++i) {
    std::fprintf(out, "%s\n    \"%s\": ", i ? "," : "", rows[i].figure->key);
    JsonNumber(out, rows[i].ratio);
  }
  std::fprintf(out, "\n  },\n  \"pair_ratios\": {");
  for (size_t i = 0; i < rows.size(); ++i) {
    std::fprintf(out, "%s\n    \"%s\": ", i ? "," : "", rows[i].figure->key);
    JsonNumber(out, rows[i].pair_ratio);
  }
  const std::pair<const char*, double> counts[] = {
      {"warm_submit_allocations", warm.Worst()},
      {"warm_submit_allocations_empty", warm.empty},
      {"warm_submit_allocations_fill_stream", warm.fill_stream},
      {"warm_submit_allocations_fill_graph", warm.fill_graph},
      {"warm_submit_allocations_other", warm.other},
      {"bytes_per_parked_submission", memory.parked_submission},
      {"bytes_per_pending_wait", memory.pending_wait},
      {"bytes_per_semaphore", memory.semaphore},
      {"spin_ns", static_cast<double>(spin.spin_ns)},
      {"spin_cpu_ns_per_wait", spin.spin_per_wait},
      {"sleep_cpu_ns_per_wait", spin.sleep_per_wait},
      {"spin_cpu_ns_per_blocked_wait", spin.spin_per_blocked_wait},
      {"sleep_cpu_ns_per_blocked_wait", spin.sleep_per_blocked_wait},
      {"default_cpu_ns_per_blocked_wait", spin.default_per_blocked_wait},
  };
  std::fprintf(out, "\n  },\n  \"counts\": {");
  for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); ++i) {
    std::fprintf(out, "%s\n    \"%s\": ", i ? "," : "", counts[i].first);
    JsonNumber(out, counts[i].second);
  }
  std::fprintf(out, "\n  },\n  \"targets\": {");
  for (size_t i = 0; i < rows.size(); ++i) {
    std::fprintf(out, "%s\n    \"%s\": {\"target\": ", i ? "," : "",
                 rows[i].figure->key);
    JsonNumber(out, rows[i].figure->target);  // null: reported only
    std::fprintf(out, ", \"higher_is_better\": %s, \"met\": %s}",
                 rows[i].figure->higher_is_better ? "true" : "false",
                 !rows[i].judged ? "null"
                 : rows[i].met   ? "true"
                                 : "false");
  }
  std::fprintf(out, "\n  },\n  \"noisy\": [");
  bool first = true;
  for (const Row& row : rows) {
    if (row.noisy) {
      std::fprintf(out, "%s\"%s\"", first ? "" : ", ", row.figure->key);
      first = false;
    }
  }
  std::fprintf(out, "],\n  \"repetitions\": %d,\n  \"figures\": {",
               repetitions);
  first = true;
  for (const auto& [name, samples] : g_samples) {
    Stats stats = StatsOf(samples);
    std::fprintf(out, "%s\n    \"%s\": {\"median_ns\": ", first ? "" : ",",
                 name.c_str());
    JsonNumber(out, stats.median);
    std::fprintf(out, ", \"min_ns\": ");
    JsonNumber(out, stats.min);
    std::fprintf(out, ", \"max_ns\": ");
    JsonNumber(out, stats.max);
    std::fprintf(out, ", \"samples_ns\": [");
    for (size_t i = 0; i < samples.size(); ++i)
      std::fprintf(out, "%s%.1f", i ? ", " : "", samples[i]);
    std::fprintf(out, "], \"order\": [");
    const std::vector<int>& order = g_order[name];
    for (size_t i = 0; i < order.size(); ++i)
      std::fprintf(out, "%s%d", i ? ", " : "", order[i]);
    std::fprintf(out, "]}");
    first = false;
  }
  std::fprintf(out, "\n  }\n}\n");
  // A full disk shows at the flush or the close, not at the open.
  bool failed = std::ferror(out) != 0;
  failed = std::fclose(out) != 0 || failed;
  if (failed) {
    std::fprintf(stderr, "hal-bench: cannot write %s: %s\n", json_path,
                 std::strerror(errno));
    return 1;
  }
  std::printf("hal-bench: wrote %s\n", json_path);
  return 0;
}

// Heap allocations per warm submission of each kind (|count| of each
// after as many to warm the pools, each submitted and waited for), every
// thread's counted: libhal's and its drivers' returned, the rest of the
// process's added to |*other|.
double CountWarmSubmitAllocations(hal_device_t* device, uint32_t count,
                                  bool with_fill, double* other) {
  hal_buffer_t* buffer = nullptr;
  hal_command_buffer_t* cb = nullptr;
  if (with_fill) {
    buffer = DeviceBuffer(device, 4096);
    cb = FillCommandBuffer(device, buffer, 1);
  }
  hal_semaphore_t* timeline = nullptr;
  Check(hal_device_create_semaphore(device, 0, &timeline), "semaphore");
  uint64_t value = 0;
  auto submit = [&] {
    ++value;
    hal_semaphore_list_t signals = {1, &timeline, &value};
    Check(hal_device_queue_execute(device, 0, nullptr, &signals, cb ? 1 : 0,
                                   cb ? &cb : nullptr),
          "queue_execute");
    Check(hal_semaphore_wait(timeline, value, hal_infinite_timeout()), "wait");
  };
  for (uint32_t i = 0; i < count; ++i)
    submit();
  g_allocations.store(0);
  g_other_allocations.store(0);
  g_counting.store(true);
  for (uint32_t i = 0; i < count; ++i)
    submit();
  g_counting.store(false);
  *other =
      std::max(*other, static_cast<double>(g_other_allocations.load()) / count);
  hal_semaphore_release(timeline);
  hal_command_buffer_release(cb);
  hal_buffer_release(buffer);
  return static_cast<double>(g_allocations.load()) / count;
}

WarmAllocations CountWarmAllocations(uint32_t count) {
  WarmAllocations counts;
  counts.submits = count;
  CollectHalCode();
  if (!HalAllocationsAreSeen()) {
    std::fprintf(stderr,
                 "hal-bench: no allocation by libhal seen while counting "
                 "(%zu code ranges of libhal and its drivers found)\n",
                 g_hal_code.count);
    std::exit(1);
  }
  counts.empty =
      CountWarmSubmitAllocations(g_hal.stream, count, false, &counts.other);
  counts.fill_stream =
      CountWarmSubmitAllocations(g_hal.stream, count, true, &counts.other);
  counts.fill_graph =
      CountWarmSubmitAllocations(g_hal.graph, count, true, &counts.other);
  return counts;
}

// Bytes per parked submission with |waits| waits (on gates never
// signaled until the end) and one signal.
double ParkedBytes(hal_device_t* device, uint32_t waits) {
  hal_semaphore_t* gates[2] = {nullptr, nullptr};
  hal_semaphore_t* done = nullptr;
  for (uint32_t w = 0; w < waits; ++w)
    Check(hal_device_create_semaphore(device, 0, &gates[w]), "gate");
  Check(hal_device_create_semaphore(device, 0, &done), "done");
  uint64_t ones[2] = {1, 1};
  g_live_bytes.store(0);
  g_counting.store(true);
  for (uint32_t i = 0; i < kMemoryCount; ++i) {
    uint64_t value = uint64_t{i} + 1;
    hal_semaphore_list_t wait_list = {waits, gates, ones};
    hal_semaphore_list_t signals = {1, &done, &value};
    Check(hal_device_queue_execute(device, 0, &wait_list, &signals, 0, nullptr),
          "park");
  }
  g_counting.store(false);
  double bytes = static_cast<double>(g_live_bytes.load()) / kMemoryCount;
  for (uint32_t w = 0; w < waits; ++w)
    Check(hal_semaphore_signal(gates[w], 1), "unpark");
  Check(hal_semaphore_wait(done, kMemoryCount, hal_infinite_timeout()),
        "drain");
  for (uint32_t w = 0; w < waits; ++w)
    hal_semaphore_release(gates[w]);
  hal_semaphore_release(done);
  return bytes;
}

// Each on a fresh device: a queue keeps the blocks of retired submissions
// for reuse, which would hide the next count's.
MemoryFigures MeasureMemory() {
  MemoryFigures figures = {};
  for (uint32_t waits = 1; waits <= 2; ++waits) {
    hal_device_t* fresh = CreateDevice(g_hal.stream_driver);
    double bytes = ParkedBytes(fresh, waits);
    hal_device_release(fresh);
    if (waits == 1)
      figures.parked_submission = bytes;
    else
      figures.pending_wait = bytes - figures.parked_submission;
  }
  hal_device_t* device = CreateDevice(g_hal.stream_driver);
  std::vector<hal_semaphore_t*> semaphores(kMemoryCount);
  g_live_bytes.store(0);
  g_counting.store(true);
  for (hal_semaphore_t*& semaphore : semaphores)
    Check(hal_device_create_semaphore(device, 0, &semaphore), "semaphore");
  g_counting.store(false);
  figures.semaphore = static_cast<double>(g_live_bytes.load()) / kMemoryCount;
  for (hal_semaphore_t* semaphore : semaphores)
    hal_semaphore_release(semaphore);
  hal_device_release(device);
  return figures;
}

void Usage(FILE* out) {
  std::fprintf(out,
               "usage: hal-bench [--json FILE] [--list] [--repetitions=N]\n"
               "                 [--driver=NAME] [--graph-driver=NAME] "
               "[--benchmark_*...]\n"
               "  --json          write every figure, ratio and count to FILE\n"
               "  --list          name the figures and exit\n"
               "  --repetitions   rounds of every case, each figure's two "
               "sides in turn\n"
               "                  (default %d; fewer are not judged)\n"
               "  --driver        the stream driver (default cuda_stream)\n"
               "  --graph-driver  the graph driver (default cuda_graph)\n"
               "Other --benchmark_* flags go to Google Benchmark "
               "(--benchmark_filter,\n"
               "--benchmark_min_time, --benchmark_out...).\n",
               kDefaultRepetitions);
}

}  // namespace

// Why hal-bench refuses Google Benchmark flag |arg|, or null.
const char* RefusedBenchmarkFlag(const std::string& arg) {
  static const std::pair<const char*, const char*> kRefused[] = {
      // hal-bench orders the repetitions itself (A B, B A, ...).
      {"--benchmark_repetitions",
       "hal-bench runs its own rounds; give --repetitions=N"},
      {"--benchmark_enable_random_interleaving",
       "hal-bench runs its own rounds; give --repetitions=N"},
      // Both passes would list instead of run: a run that measured nothing.
      {"--benchmark_list_tests",
       "give --list (the figures) or a filter that matches no case (the "
       "cases)"},
  };
  for (const auto& [prefix, why] : kRefused) {
    if (arg.rfind(prefix, 0) == 0)
      return why;
  }
  return nullptr;
}

// One case of the run: a function and its argument (-1: none).
struct Case {
  const char* name;
  void (*fn)(benchmark::State&);
  int64_t arg;
  // Timed by the case itself (SetIterationTime), else by wall time: the
  // measuring thread mostly sleeps in a wait, so its CPU time would ask for
  // many times the iterations.
  bool manual_time;
  std::string Key() const {
    return arg < 0 ? name : std::string(name) + "/" + std::to_string(arg);
  }
};

benchmark::internal::Benchmark* RegisterCase(const Case& c) {
  benchmark::internal::Benchmark* bm =
      benchmark::RegisterBenchmark(c.name, c.fn);
  if (c.manual_time)
    bm->UseManualTime();
  else
    bm->UseRealTime();
  if (c.arg >= 0)
    bm->Arg(c.arg);
  return bm;
}

// Says now, not after minutes of measuring, that |path| cannot be written.
// Appending does not truncate a file there; one it creates is removed
// again, so that a run that stops early leaves nothing.
bool CanWrite(const char* path) {
  bool existed = access(path, F_OK) == 0;
  FILE* probe = std::fopen(path, "a");
  if (!probe) {
    std::fprintf(stderr, "hal-bench: cannot write %s: %s\n", path,
                 std::strerror(errno));
    return false;
  }
  std::fclose(probe);
  if (!existed)
    std::remove(path);
  return true;
}

static int BenchMain(int argc, char** argv);

int main(int argc, char** argv) {
  return hal_cli_finish_stdout("hal-bench", BenchMain(argc, argv), 1);
}

static int BenchMain(int argc, char** argv) {
  const char* json_path = nullptr;
  bool list = false;
  int repetitions = kDefaultRepetitions;
  bool drivers_given = false;
  std::vector<char*> args = {argv[0]};
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--json=", 0) == 0 || arg == "--json") {
      if (arg == "--json" &&
          (i + 1 == argc || std::strncmp(argv[i + 1], "--", 2) == 0)) {
        std::fprintf(stderr, "hal-bench: --json needs a FILE\n");
        Usage(stderr);
        return 2;
      }
      json_path = arg == "--json" ? argv[++i] : argv[i] + 7;
    } else if (arg == "--list") {
      list = true;
    } else if (arg.rfind("--repetitions=", 0) == 0) {
      const char* text = argv[i] + 14;
      uint64_t count = 0;
      if (!hal_cli_parse_uint(text, 1, kMaxRepetitions, &count)) {
        std::fprintf(stderr,
                     "hal-bench: --repetitions='%s': expected a count in "
                     "[1, %d]\n",
                     text, kMaxRepetitions);
        return 2;
      }
      repetitions = static_cast<int>(count);
    } else if (arg.rfind("--driver=", 0) == 0) {
      g_hal.stream_driver = argv[i] + 9;
      drivers_given = true;
    } else if (arg.rfind("--graph-driver=", 0) == 0) {
      g_hal.graph_driver = argv[i] + 15;
      drivers_given = true;
    } else if (arg == "--help" || arg == "-h") {
      Usage(stdout);
      return 0;
    } else if (const char* why = RefusedBenchmarkFlag(arg)) {
      std::fprintf(stderr, "hal-bench: %s: %s\n", argv[i], why);
      return 2;
    } else if (arg.rfind("--benchmark_", 0) == 0) {
      // Google Benchmark answers a format it does not know with its usage
      // and exit status 0, as if it had measured: refused here instead.
      for (const char* flag :
           {"--benchmark_format=", "--benchmark_out_format="}) {
        if (arg.rfind(flag, 0) != 0)
          continue;
        std::string format = arg.substr(std::strlen(flag));
        if (format != "console" && format != "json" && format != "csv") {
          std::fprintf(stderr, "hal-bench: %s: expected console, json or csv\n",
                       argv[i]);
          return 2;
        }
      }
      args.push_back(argv[i]);
    } else {
      std::fprintf(stderr, "hal-bench: unknown argument %s\n", argv[i]);
      Usage(stderr);
      return 2;
    }
  }
  if (json_path && !CanWrite(json_path))
    return 2;
  for (char* arg : args) {
    // Google Benchmark's own output file, checked as early.
    if (std::strncmp(arg, "--benchmark_out=", 16) == 0 && !CanWrite(arg + 16))
      return 2;
  }
  // Each registered case runs once (BenchMain's rounds repeat it).
  std::string repetitions_flag = "--benchmark_repetitions=1";
  args.push_back(repetitions_flag.data());
  // 0.1 s a repetition unless asked otherwise: 15 rounds of every case then
  // take about half a minute (of wall time: Case).
  bool min_time_given = false;
  for (char* arg : args)
    min_time_given |= std::strncmp(arg, "--benchmark_min_time", 20) == 0;
  std::string min_time_flag = "--benchmark_min_time=0.1";
  if (!min_time_given)
    args.push_back(min_time_flag.data());
  int benchmark_argc = static_cast<int>(args.size());
  benchmark::Initialize(&benchmark_argc, args.data());
  if (benchmark::ReportUnrecognizedArguments(benchmark_argc, args.data()))
    return 2;
  if (list) {
    // After every argument is checked (Google Benchmark's flags too): a
    // bad one is refused with it. What needs the devices (a driver's name,
    // what a filter matches) is not looked at: the listing is fixed.
    for (const Figure& figure : kFigures) {
      if (std::isnan(figure.target)) {
        std::printf("%-28s %s (reported)\n", figure.key, figure.what);
      } else {
        std::printf("%-28s %s (%s %g)\n", figure.key, figure.what,
                    figure.higher_is_better ? ">=" : "<=", figure.target);
      }
    }
    std::printf(
        "%-28s heap allocations by libhal and its drivers per warm "
        "submission (0)\n",
        "warm_submit_allocations");
    std::printf("%-28s heap bytes per parked submission (<= 512)\n",
                "bytes_per_parked_submission");
    std::printf("%-28s heap bytes per further wait (reported)\n",
                "bytes_per_pending_wait");
    std::printf("%-28s heap bytes per device semaphore (reported)\n",
                "bytes_per_semaphore");
    std::printf("%-28s CPU time per wait, spinning and not (reported)\n",
                "spin_cpu_ns_per_wait");
    std::printf("%-28s CPU time per 1 ms wait, spinning and not (reported)\n",
                "spin_cpu_ns_per_blocked_wait");
    std::printf("%-28s CPU time per 1 ms wait, default spin (reported)\n",
                "default_cpu_ns_per_blocked_wait");
    std::printf(
        "%-28s the kinds warm_submit_allocations is the largest of, and "
        "the rest of the process's (reported)\n",
        "warm_submit_allocations_*");
    std::printf("%-28s the spin of the spin figure and its blocked waits\n",
                "spin_ns");
    std::printf("%-28s CPU time per wait, sleeping at once (reported)\n",
                "sleep_cpu_ns_per_wait");
    std::printf("%-28s CPU time per 1 ms wait, sleeping at once (reported)\n",
                "sleep_cpu_ns_per_blocked_wait");
    return 0;
  }

  Check(hal_driver_registry_create(nullptr, hal_allocator_system(),
                                   &g_hal.registry),
        "registry");
  g_hal.stream = CreateDevice(g_hal.stream_driver, drivers_given);
  g_hal.graph = CreateDevice(g_hal.graph_driver, drivers_given);
  OpenVendor();

  const char* spin_env = std::getenv("HAL_SYNC_SPIN_NS");
  if (spin_env && *spin_env && hal_semaphore_spin_ns() != 0)
    g_figure_spin_ns = hal_semaphore_spin_ns();
  // In run order, in pairs (the rounds swap each pair's two in odd
  // rounds): each figure's HAL case, then its baseline (kFigures); the
  // series beside them, in pairs too.
  std::vector<Case> cases = {
      {"BM_SignalWake_Hal", BM_SignalWake_Hal, -1, false},
      {"BM_SignalWake_Futex", BM_SignalWake_Futex, -1, false},
      {"BM_SignalWakeSpin_Hal", BM_SignalWakeSpin_Hal, -1, false},
      {"BM_SignalWake_Spin", BM_SignalWake_Spin, -1, false},
      {"BM_EmptySubmit_Hal", BM_EmptySubmit_Hal, -1, false},
      {"BM_EmptySubmit_Vendor", BM_EmptySubmit_Vendor, -1, false},
      {"BM_SubmitThroughput_Hal", BM_SubmitThroughput_Hal, -1, false},
      {"BM_SubmitThroughput_Vendor", BM_SubmitThroughput_Vendor, -1, false},
  };
  for (int64_t ops : {1, 16, 64, 256}) {
    cases.push_back({"BM_SubmitOps_Graph", BM_SubmitOps_Graph, ops, false});
    cases.push_back({"BM_SubmitOps_Stream", BM_SubmitOps_Stream, ops, false});
  }
  cases.push_back({"BM_Alloca_Hal", BM_Alloca_Hal, -1, false});
  cases.push_back({"BM_Alloca_Vendor", BM_Alloca_Vendor, -1, false});
  OpenReadFile();
  cases.push_back({"BM_FileRead_Hal", BM_FileRead_Hal, -1, false});
  cases.push_back({"BM_FileRead_PreadCopy", BM_FileRead_PreadCopy, -1, false});
  for (int ranks : {2, 4}) {
    OpenAllReduce(ranks);
    if (!g_all_reduce[ranks].skipped.empty()) {
      std::fprintf(stderr,
                   "hal-bench: all-reduce over %d devices skipped: %s\n", ranks,
                   g_all_reduce[ranks].skipped.c_str());
    }
    cases.push_back({"BM_AllReduce_Hal", BM_AllReduce_Hal, ranks, false});
    cases.push_back({"BM_AllReduce_Memcpy", BM_AllReduce_Memcpy, ranks, false});
  }
  OpenMlir();
  if (g_mlir.skipped.empty()) {
    cases.push_back(
        {"BM_MlirParallelFor_Hal", BM_MlirParallelFor_Hal, -1, true});
    cases.push_back(
        {"BM_MlirParallelFor_Mlir", BM_MlirParallelFor_Mlir, -1, true});
  } else {
    std::fprintf(stderr,
                 "hal-bench: the MLIR parallel-for figure is skipped: %s\n",
                 g_mlir.skipped.c_str());
  }
  // The parked case's submissions are made once, before every repetition.
  ParkSubmissions();
  for (int64_t parked : {static_cast<int64_t>(kParked), int64_t{0},
                         int64_t{1000}, int64_t{10000}}) {
    cases.push_back({"BM_SubmitParked", BM_SubmitParked, parked, false});
  }

  if (cases.size() % 2 != 0) {
    std::fprintf(stderr, "hal-bench: %zu cases, not pairs\n", cases.size());
    std::abort();
  }
  // The warm-up: every case twice, sized by Google Benchmark to the
  // minimum time; the second sizing, of a warm case (a first call can take
  // the whole minimum time alone), fixes its count, so a repetition is only
  // a measurement.
  for (int pass = 0; pass < 2; ++pass) {
    for (const Case& c : cases)
      RegisterCase(c);
  }
  std::printf(
      "hal-bench: warm-up, every case twice, sized to the minimum "
      "time\n");
  std::fflush(stdout);
  Collector warm_up(true);
  size_t matched = benchmark::RunSpecifiedBenchmarks(&warm_up) / 2;
  benchmark::ClearRegisteredBenchmarks();
  int result = 2;  // the filter matched no case: a bad argument
  if (matched == 0) {
    std::fprintf(stderr,
                 "hal-bench: --benchmark_filter='%s' matches no case; the "
                 "cases here:",
                 benchmark::GetBenchmarkFilter().c_str());
    for (size_t i = 0; i < cases.size(); ++i) {
      std::fprintf(stderr, "%s %s", i ? "," : "", cases[i].Key().c_str());
    }
    std::fprintf(stderr, "\n");
    if (!g_mlir.skipped.empty()) {
      std::fprintf(stderr,
                   "hal-bench: (BM_MlirParallelFor_Hal and _Mlir are not "
                   "among them here: %s)\n",
                   g_mlir.skipped.c_str());
    }
    UnparkSubmissions();
  } else if (g_iterations.empty()) {
    // Every case the filter chose stopped itself (an all-reduce without
    // its devices): the reasons are on stderr above; nothing to report.
    std::fprintf(stderr,
                 "hal-bench: no case the filter chose could run here\n");
    result = 1;
    UnparkSubmissions();
  } else {
    // The rounds: every case once each, in |cases|' order, the two of
    // each pair swapped in odd rounds (A B, B A, ...): a case that runs
    // better, or worse, right after what came before it (another figure's
    // threads still winding down) gets that place in half the rounds.
    for (int round = 0; round < repetitions; ++round) {
      for (size_t i = 0; i < cases.size(); ++i) {
        const Case& c = cases[round % 2 ? i ^ 1 : i];
        auto found = g_iterations.find(c.Key());
        if (found != g_iterations.end())
          RegisterCase(c)->Iterations(found->second);
      }
    }
    std::printf(
        "hal-bench: %d rounds of every case, each figure's two sides one "
        "after the other, HAL first in even rounds\n",
        repetitions);
    std::fflush(stdout);
    Collector collector(false);
    // Every registered case: the filter chose them in the warm-up, and
    // a fixed count changes their names.
    benchmark::RunSpecifiedBenchmarks(&collector, ".");
    // Counted while the parked devices are idle: their parked submissions
    // retiring would count their own allocations.
    WarmAllocations allocations = CountWarmAllocations(1000);
    UnparkSubmissions();
    MemoryFigures memory = MeasureMemory();
    SpinCosts spin = MeasureSpinCosts();
    result = Report(json_path, repetitions, allocations, memory, spin);
  }
  benchmark::Shutdown();
  CloseReadFile();
  CloseMlir();
  for (int ranks : {2, 4})
    CloseAllReduce(ranks);
  CloseVendor();
  hal_device_release(g_hal.graph);
  hal_device_release(g_hal.stream);
  hal_driver_registry_free(g_hal.registry);
  return result;
}
