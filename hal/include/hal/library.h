// Copyright 2026 The HAL Authors.
//
// Checking a shared library file before dlopen.
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

HAL_EXTERN_C_END

#endif  // HAL_LIBRARY_H_
