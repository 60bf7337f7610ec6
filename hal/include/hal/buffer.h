// Copyright 2026 The HAL Authors.
//
// hal_buffer_t: a range of memory owned by a device, and the device allocator
// that makes buffers.
//
// Memory types say where the bytes live; usage says what the buffer may be
// used for. Both are fixed at allocation:
//
//   HAL_MEMORY_TYPE_DEVICE_LOCAL   fast for the device; the host reaches it
//                                  only through hal_buffer_read/write (a
//                                  synchronous transfer)
//   HAL_MEMORY_TYPE_HOST_VISIBLE   host-mappable (pinned host memory on a
//                                  discrete GPU); required for MAPPING usage
//
// Every offset/length pair is checked against the buffer's size with
// overflow-safe arithmetic; a bad range is OUT_OF_RANGE naming the numbers,
// and nothing is touched.
//
// Thread-safety: buffers may be shared between threads; concurrent writes to
// overlapping bytes are the caller's race, as with any memory.

#ifndef HAL_BUFFER_H_
#define HAL_BUFFER_H_

#include "hal/allocator.h"
#include "hal/base.h"
#include "hal/resource.h"
#include "hal/status.h"

HAL_EXTERN_C_BEGIN

typedef struct hal_device_t hal_device_t;
typedef struct hal_buffer_vtable_t hal_buffer_vtable_t;
typedef struct hal_device_allocator_vtable_t hal_device_allocator_vtable_t;

typedef uint32_t hal_memory_type_t;
enum hal_memory_type_bits_e {
  HAL_MEMORY_TYPE_DEVICE_LOCAL = 1u << 0,
  HAL_MEMORY_TYPE_HOST_VISIBLE = 1u << 1,
  HAL_MEMORY_TYPE_ALL_ = (1u << 2) - 1,
};

typedef uint32_t hal_buffer_usage_t;
enum hal_buffer_usage_bits_e {
  HAL_BUFFER_USAGE_TRANSFER_SOURCE = 1u << 0,
  HAL_BUFFER_USAGE_TRANSFER_TARGET = 1u << 1,
  HAL_BUFFER_USAGE_DISPATCH_STORAGE = 1u << 2,
  HAL_BUFFER_USAGE_MAPPING = 1u << 3,  // needs HOST_VISIBLE memory
  HAL_BUFFER_USAGE_TRANSFER =
      HAL_BUFFER_USAGE_TRANSFER_SOURCE | HAL_BUFFER_USAGE_TRANSFER_TARGET,
  HAL_BUFFER_USAGE_DEFAULT =
      HAL_BUFFER_USAGE_TRANSFER | HAL_BUFFER_USAGE_DISPATCH_STORAGE,
  HAL_BUFFER_USAGE_ALL_ = (1u << 4) - 1,
};

typedef uint32_t hal_mapping_access_t;
enum hal_mapping_access_bits_e {
  HAL_MAPPING_ACCESS_READ = 1u << 0,
  HAL_MAPPING_ACCESS_WRITE = 1u << 1,
  HAL_MAPPING_ACCESS_READ_WRITE = 3u,
};

typedef struct hal_buffer_params_t {
  hal_memory_type_t memory_type;
  hal_buffer_usage_t usage;
} hal_buffer_params_t;

typedef struct hal_buffer_t hal_buffer_t;

// A host view of bytes [offset, offset + length) of a host-visible buffer.
typedef struct hal_buffer_mapping_t {
  hal_buffer_t* buffer;  // retained while mapped
  uint64_t offset;
  uint64_t length;
  void* contents;  // NULL-free: valid even for a zero-length mapping
  hal_mapping_access_t access;
} hal_buffer_mapping_t;

HAL_API void hal_buffer_retain(hal_buffer_t* buffer);
HAL_API void hal_buffer_release(hal_buffer_t* buffer);

HAL_API uint64_t hal_buffer_byte_length(const hal_buffer_t* buffer);
HAL_API hal_memory_type_t hal_buffer_memory_type(const hal_buffer_t* buffer);
HAL_API hal_buffer_usage_t hal_buffer_usage(const hal_buffer_t* buffer);
HAL_API hal_device_t* hal_buffer_device(const hal_buffer_t* buffer);

// Checks that [offset, offset + length) lies inside |buffer| and resolves
// HAL_WHOLE_BUFFER into |*out_length| (may be NULL).
HAL_API HAL_MUST_USE_RESULT hal_status_t
hal_buffer_validate_range(const hal_buffer_t* buffer, uint64_t offset,
                          uint64_t length, uint64_t* out_length);

// Maps a range of a HOST_VISIBLE buffer allocated with MAPPING usage. The
// mapping retains the buffer until hal_buffer_unmap(). Zero-length ranges
// (including offset == size) are valid and map nothing. A buffer that is
// not HOST_VISIBLE, or was allocated without MAPPING usage, is
// FAILED_PRECONDITION; an access other than READ, WRITE or both is
// INVALID_ARGUMENT.
HAL_API HAL_MUST_USE_RESULT hal_status_t hal_buffer_map_range(
    hal_buffer_t* buffer, hal_mapping_access_t access, uint64_t offset,
    uint64_t length, hal_buffer_mapping_t* out_mapping);

// Ends a mapping; writes are visible to later device work. Safe on a
// zero-initialized mapping.
HAL_API void hal_buffer_unmap(hal_buffer_mapping_t* mapping);

// Copies |length| bytes of the buffer at |offset| into |target|, for any
// memory type (device-local memory through a synchronous transfer). The
// caller orders this against device work (e.g. waits on a semaphore first).
// Here and in hal_buffer_write |length| is the host memory's size:
// HAL_WHOLE_BUFFER is INVALID_ARGUMENT, as is a NULL host pointer with a
// length; a buffer without the transfer usage (TRANSFER_SOURCE to read,
// TRANSFER_TARGET to write) or MAPPING is FAILED_PRECONDITION.
HAL_API HAL_MUST_USE_RESULT hal_status_t hal_buffer_read(hal_buffer_t* buffer,
                                                         uint64_t offset,
                                                         void* target,
                                                         uint64_t length);

// Copies |length| bytes from |source| into the buffer at |offset|.
HAL_API HAL_MUST_USE_RESULT hal_status_t hal_buffer_write(hal_buffer_t* buffer,
                                                          uint64_t offset,
                                                          const void* source,
                                                          uint64_t length);

//===----------------------------------------------------------------------===//
// hal_device_allocator_t
//===----------------------------------------------------------------------===//

// Makes buffers for one device; owned by the device (it lives exactly as
// long as its device).
typedef struct hal_device_allocator_t hal_device_allocator_t;

// A buffer counts until it is destroyed. One whose last reference went
// with a submission's completion (its caller released it while queue work
// still used it) is destroyed on libhal's release thread, a moment after
// that submission's signals: queue threads never run a destroy, and a
// vendor's free may synchronize the whole device. A submission that was
// issued but whose completion could not be recorded (the vendor's event
// record failed: its signals fail) holds what it used until the device is
// released, since nothing then says when the device is done with it
// (docs/sync-contract.md, Q3).
typedef struct hal_memory_stats_t {
  uint64_t total_bytes;       // what the device reports
  uint64_t allocated_bytes;   // live buffers made by this allocator
  uint64_t allocation_count;  // live buffers made by this allocator
} hal_memory_stats_t;

// Allocates a buffer of |byte_length| (> 0) bytes. A memory type with neither
// DEVICE_LOCAL nor HOST_VISIBLE, an empty usage, unknown bits, MAPPING without
// HOST_VISIBLE, or 0 bytes are INVALID_ARGUMENT; a size the device cannot hold
// is RESOURCE_EXHAUSTED (OUT_OF_RANGE past the host's address space, a size
// above SIZE_MAX, which only a 32-bit host has); each says why.
// An allocation that runs out of memory while released buffers are still being
// destroyed (see above) waits for those destroys (up to 10 s) and tries once
// more, so memory whose last use was seen signaled is available to it; memory
// that queue-ordered deallocation gave back to the device's pool
// (hal_device_queue_dealloca, seen signaled) is given back to the device for it
// first.
HAL_API HAL_MUST_USE_RESULT hal_status_t hal_device_allocator_allocate_buffer(
    hal_device_allocator_t* allocator, hal_buffer_params_t params,
    uint64_t byte_length, hal_buffer_t** out_buffer);

HAL_API HAL_MUST_USE_RESULT hal_status_t hal_device_allocator_query_stats(
    hal_device_allocator_t* allocator, hal_memory_stats_t* out_stats);

HAL_EXTERN_C_END

#endif  // HAL_BUFFER_H_
