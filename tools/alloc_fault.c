// Copyright 2026 The HAL Authors.
//
// libhal-alloc-fault.so: host allocation failure injection for the fault
// sweep (tools/fault_sweep.py, mode `oom`; docs/testing.md). Preloaded
// (LD_PRELOAD), it stands in front of the process's allocator and counts
// the allocations the HAL's own code makes: those whose caller lies in
// libhal, a hal-driver-*.so plugin or libhal-async-runtime. The vendor
// runtime, the C library and the program around the HAL are not counted,
// so the count stays close from run to run; where threads allocate at the
// same time, which allocation an index names may vary between runs.
// Allocations the C library makes for the HAL (strndup, asprintf,
// realpath(p, NULL)) are not seen, nor those after exit() begins.
//
//   HAL_ALLOC_FAULT_NTH=N      the Nth counted allocation (1-based) fails:
//                              NULL, errno ENOMEM, once; the ones after it
//                              succeed. 0 or unset: none fails.
//   HAL_ALLOC_FAULT_COUNTS=F   at exit, write "host_alloc COUNT" to F.
//
// When it fails one it says so on stderr, with its caller:
//   HAL_ALLOC_FAULT: injected fault in host_alloc #N (malloc from
//   hal_sync_queue_create+0x2a in libhal.so.0)
//
// Every call goes to the allocator next in the lookup order (glibc's, or a
// sanitizer's, which then still sees every block: ASan needs
// verify_asan_link_order=0 to accept a library preloaded before it).

#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_args.h"

#define HAL_ALLOC_FAULT_EXPORT __attribute__((visibility("default")))
#define HAL_ALLOC_FAULT_TLS __thread __attribute__((tls_model("initial-exec")))

typedef void* (*malloc_fn)(size_t);
typedef void* (*calloc_fn)(size_t, size_t);
typedef void* (*realloc_fn)(void*, size_t);
typedef void (*free_fn)(void*);
typedef int (*posix_memalign_fn)(void**, size_t, size_t);
typedef void* (*aligned_alloc_fn)(size_t, size_t);

static malloc_fn real_malloc;
static calloc_fn real_calloc;
static realloc_fn real_realloc;
static free_fn real_free;
static posix_memalign_fn real_posix_memalign;
static aligned_alloc_fn real_aligned_alloc;

// dlsym() may allocate before the real functions are known: those blocks
// come from here, each after a 16-byte header holding its size, and are
// never freed (free() recognizes them).
#define BOOTSTRAP_HEADER 16
static _Alignas(max_align_t) char bootstrap_arena[16384];
static atomic_size_t bootstrap_used;

static bool in_bootstrap_arena(const void* pointer) {
  return (const char*)pointer >= bootstrap_arena &&
         (const char*)pointer < bootstrap_arena + sizeof(bootstrap_arena);
}

static void* bootstrap_alloc(size_t size) {
  if (size > sizeof(bootstrap_arena))
    return NULL;
  size_t rounded = BOOTSTRAP_HEADER + ((size + 15) & ~(size_t)15);
  size_t offset = atomic_fetch_add(&bootstrap_used, rounded);
  if (offset + rounded > sizeof(bootstrap_arena))
    return NULL;
  memcpy(bootstrap_arena + offset, &size, sizeof(size));
  return bootstrap_arena + offset + BOOTSTRAP_HEADER;  // zeroed storage
}

static size_t bootstrap_size(const void* pointer) {
  size_t size;
  memcpy(&size, (const char*)pointer - BOOTSTRAP_HEADER, sizeof(size));
  return size;
}

static HAL_ALLOC_FAULT_TLS int resolving;
static atomic_int resolved;

static void resolve(void) {
  if (atomic_load_explicit(&resolved, memory_order_acquire))
    return;
  ++resolving;
  // dlsym's object pointer into a function pointer, as POSIX allows and
  // ISO C does not say: through memcpy.
#define RESOLVE(target, name)                   \
  do {                                          \
    void* symbol = dlsym(RTLD_NEXT, name);      \
    memcpy(&(target), &symbol, sizeof(symbol)); \
  } while (0)
  RESOLVE(real_malloc, "malloc");
  RESOLVE(real_calloc, "calloc");
  RESOLVE(real_realloc, "realloc");
  RESOLVE(real_free, "free");
  RESOLVE(real_posix_memalign, "posix_memalign");
  RESOLVE(real_aligned_alloc, "aligned_alloc");
#undef RESOLVE
  --resolving;
  if (!real_malloc || !real_calloc || !real_realloc || !real_free ||
      !real_posix_memalign || !real_aligned_alloc) {
    static const char message[] =
        "HAL_ALLOC_FAULT: the allocator's functions are not found\n";
    ssize_t ignored = write(2, message, sizeof(message) - 1);
    (void)ignored;
    abort();
  }
  atomic_store_explicit(&resolved, 1, memory_order_release);
}

//===----------------------------------------------------------------------===//
// Which allocations count
//===----------------------------------------------------------------------===//

static uint64_t fault_nth;  // 0: none
static atomic_uint_fast64_t counted;
static char counts_path[4096];

// Inside the hook (dladdr, the message): allocations pass straight through.
static HAL_ALLOC_FAULT_TLS int in_hook;

// Caller addresses already classified, per thread (no lock in the path).
#define CALLER_CACHE_SIZE 256
static HAL_ALLOC_FAULT_TLS struct {
  uintptr_t address;
  bool is_hal;
} caller_cache[CALLER_CACHE_SIZE];

static bool name_is_hal(const char* path) {
  const char* base = strrchr(path, '/');
  base = base ? base + 1 : path;
  return strncmp(base, "libhal.so", 9) == 0 ||
         strncmp(base, "hal-driver-", 11) == 0 ||
         strncmp(base, "libhal-async-runtime.so", 23) == 0;
}

static bool caller_is_hal(const void* caller) {
  uintptr_t address = (uintptr_t)caller;
  size_t slot = (address >> 2) % CALLER_CACHE_SIZE;
  if (caller_cache[slot].address == address)
    return caller_cache[slot].is_hal;
  Dl_info info;
  bool is_hal =
      dladdr(caller, &info) && info.dli_fname && name_is_hal(info.dli_fname);
  caller_cache[slot].address = address;
  caller_cache[slot].is_hal = is_hal;
  return is_hal;
}

static void say_injected(uint64_t index, const char* function,
                         const void* caller) {
  char line[512];
  Dl_info info;
  int n;
  if (dladdr(caller, &info) && info.dli_fname) {
    const char* base = strrchr(info.dli_fname, '/');
    base = base ? base + 1 : info.dli_fname;
    if (info.dli_sname) {
      n = snprintf(
          line, sizeof(line),
          "HAL_ALLOC_FAULT: injected fault in host_alloc #%llu "
          "(%s from %s+0x%lx in %s)\n",
          (unsigned long long)index, function, info.dli_sname,
          (unsigned long)((uintptr_t)caller - (uintptr_t)info.dli_saddr), base);
    } else {
      n = snprintf(
          line, sizeof(line),
          "HAL_ALLOC_FAULT: injected fault in host_alloc #%llu "
          "(%s from %s+0x%lx)\n",
          (unsigned long long)index, function, base,
          (unsigned long)((uintptr_t)caller - (uintptr_t)info.dli_fbase));
    }
  } else {
    n = snprintf(line, sizeof(line),
                 "HAL_ALLOC_FAULT: injected fault in host_alloc #%llu "
                 "(%s from %p)\n",
                 (unsigned long long)index, function, caller);
  }
  if (n > 0) {
    size_t length = (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1;
    ssize_t ignored = write(2, line, length);
    (void)ignored;
  }
}

// True when this allocation must fail.
static bool should_fail(const char* function, const void* caller) {
  if (in_hook || resolving)
    return false;
  ++in_hook;
  bool fail = false;
  if (caller_is_hal(caller)) {
    uint64_t index = atomic_fetch_add(&counted, 1) + 1;
    if (index == fault_nth) {
      say_injected(index, function, caller);
      fail = true;
    }
  }
  --in_hook;
  return fail;
}

static void write_counts(void) {
  if (!counts_path[0])
    return;
  ++in_hook;
  FILE* file = fopen(counts_path, "w");
  if (file) {
    fprintf(file, "host_alloc %llu\n",
            (unsigned long long)atomic_load(&counted));
    fclose(file);
  }
  --in_hook;
}

__attribute__((constructor)) static void hal_alloc_fault_initialize(void) {
  resolve();
  const char* nth = getenv("HAL_ALLOC_FAULT_NTH");
  if (nth && *nth) {
    uint64_t value = 0;
    if (!hal_cli_parse_uint(nth, 0, UINT64_MAX, &value)) {
      fprintf(stderr,
              "HAL_ALLOC_FAULT_NTH='%s': expected an index (1, 2, ...) or "
              "0\n",
              nth);
      exit(2);
    }
    fault_nth = value;
  }
  const char* path = getenv("HAL_ALLOC_FAULT_COUNTS");
  if (path && *path) {
    if (strlen(path) >= sizeof(counts_path)) {
      fprintf(stderr, "HAL_ALLOC_FAULT_COUNTS: path too long\n");
      exit(2);
    }
    strcpy(counts_path, path);
    atexit(write_counts);
  }
}

//===----------------------------------------------------------------------===//
// The allocator's entry points
//===----------------------------------------------------------------------===//

HAL_ALLOC_FAULT_EXPORT void* malloc(size_t size) {
  if (!atomic_load_explicit(&resolved, memory_order_acquire)) {
    if (resolving)
      return bootstrap_alloc(size);
    resolve();
  }
  if (should_fail("malloc", __builtin_return_address(0))) {
    errno = ENOMEM;
    return NULL;
  }
  return real_malloc(size);
}

HAL_ALLOC_FAULT_EXPORT void* calloc(size_t count, size_t size) {
  if (!atomic_load_explicit(&resolved, memory_order_acquire)) {
    if (resolving) {
      if (size && count > SIZE_MAX / size)
        return NULL;
      return bootstrap_alloc(count * size);
    }
    resolve();
  }
  if (should_fail("calloc", __builtin_return_address(0))) {
    errno = ENOMEM;
    return NULL;
  }
  return real_calloc(count, size);
}

HAL_ALLOC_FAULT_EXPORT void* realloc(void* pointer, size_t size) {
  if (in_bootstrap_arena(pointer)) {
    // Never grown in practice; a copy keeps the contract if it is.
    void* grown = malloc(size);
    size_t old_size = bootstrap_size(pointer);
    if (grown)
      memcpy(grown, pointer, old_size < size ? old_size : size);
    return grown;
  }
  resolve();
  if (should_fail("realloc", __builtin_return_address(0))) {
    errno = ENOMEM;
    return NULL;
  }
  return real_realloc(pointer, size);
}

HAL_ALLOC_FAULT_EXPORT void free(void* pointer) {
  if (!pointer || in_bootstrap_arena(pointer))
    return;
  resolve();
  real_free(pointer);
}

HAL_ALLOC_FAULT_EXPORT int posix_memalign(void** out, size_t alignment,
                                          size_t size) {
  resolve();
  if (should_fail("posix_memalign", __builtin_return_address(0)))
    return ENOMEM;
  return real_posix_memalign(out, alignment, size);
}

HAL_ALLOC_FAULT_EXPORT void* aligned_alloc(size_t alignment, size_t size) {
  resolve();
  if (should_fail("aligned_alloc", __builtin_return_address(0))) {
    errno = ENOMEM;
    return NULL;
  }
  return real_aligned_alloc(alignment, size);
}

HAL_ALLOC_FAULT_EXPORT char* strdup(const char* text) {
  if (should_fail("strdup", __builtin_return_address(0))) {
    errno = ENOMEM;
    return NULL;
  }
  size_t length = strlen(text) + 1;
  ++in_hook;  // the copy's block is this call's, counted above
  char* copy = malloc(length);
  --in_hook;
  if (copy)
    memcpy(copy, text, length);
  return copy;
}
