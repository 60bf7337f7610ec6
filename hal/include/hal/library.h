// Copyright 2026 The HAL Authors.
//
// Loading shared libraries: checking a file before dlopen, and dlopen,
// dlclose and dlinfo under the one lock of every HAL loader.
//
// dlopen maps each loadable segment of a file where the file's program
// headers say it lies, and touches the mapping before checking that the
// file is that long: a truncated file (an interrupted copy or build, a full
// disk) kills the process with SIGBUS inside dlopen. So every library HAL
// loads by path (plugins, the vendor runtime a driver is pointed at) is
// first checked against its own headers, and one that does not fit is
// reported with the reason, never passed to dlopen. A file changed between
// the check and dlopen is beyond what this can see.

#ifndef HAL_LIBRARY_H_
#define HAL_LIBRARY_H_

#include "hal/allocator.h"
#include "hal/base.h"
#include "hal/status.h"

HAL_EXTERN_C_BEGIN

// Why |path| must not be passed to dlopen, from its own headers; OK when
// dlopen may try it (including files it refuses safely by itself: ones it
// cannot open, ones without the ELF magic). DATA_LOSS: truncated (a table
// or a segment ends past the end of the file); INCOMPATIBLE: an ELF file
// of another class, byte order, machine or type; UNAVAILABLE: not a regular
// file (a FIFO would block dlopen).
HAL_API HAL_MUST_USE_RESULT hal_status_t hal_library_check(const char* path);

// dlopen(|path|, |flags|) and dlclose(|handle|), as libhal and its drivers
// load and unload every library (plugins, vendor runtimes, tool
// libraries). In a ThreadSanitizer build (HAL_TSAN) they, and
// hal_library_path, take one process-wide lock: glibc runs loads and
// unloads one at a time already, under a lock of its own that the
// sanitizer cannot see, and taking this one too makes that order visible
// to it, so two threads loading one library at once (two drivers of one
// vendor) are not reported as racing on what the load wrote (the
// loader's records, what the library's constructors set). Elsewhere they
// take no lock of their own: glibc runs constructors under its lock, so a
// constructor loading through these on one thread, while another thread
// held this lock and waited for glibc's, would deadlock. A NULL from
// hal_library_open leaves its reason to dlerror() on the calling thread,
// as dlopen does; hal_library_close(NULL) does nothing and returns 0.
HAL_API void* hal_library_open(const char* path, int flags);
HAL_API int hal_library_close(void* handle);

// The file |handle| (from hal_library_open) was loaded from, as the
// dynamic loader records it, resolved by realpath where it resolves, or
// "(unknown path)"; a copy from |allocator| in |*out_path|.
HAL_API HAL_MUST_USE_RESULT hal_status_t
hal_library_path(void* handle, hal_allocator_t allocator, char** out_path);

HAL_EXTERN_C_END

#endif  // HAL_LIBRARY_H_
