// Copyright 2026 The HAL Authors.
//
// hal_file_t: bytes outside the device a queue reads into buffers or writes
// from them (model weights, checkpoints), and the two queue operations.
//
// A file is a file descriptor (duplicated at creation: the caller may close
// its own) or a range of host memory (borrowed: it must stay valid until
// every transfer using it has signaled). hal_device_queue_read and
// hal_device_queue_write are queue operations like hal_device_queue_copy:
// they run after their waits and before their signals, ordered by those
// semaphores only. docs/queue-ops.md has the long form.
//
// Thread-safety: a file may be used by any number of transfers at once;
// transfers that write overlapping bytes of one file are the caller's race.

#ifndef HAL_FILE_H_
#define HAL_FILE_H_

#include "hal/base.h"
#include "hal/buffer.h"
#include "hal/semaphore.h"
#include "hal/status.h"

HAL_EXTERN_C_BEGIN

typedef struct hal_file_t hal_file_t;

typedef uint32_t hal_file_access_t;
enum hal_file_access_bits_e {
  HAL_FILE_ACCESS_READ = 1u << 0,   // queue_read may read from it
  HAL_FILE_ACCESS_WRITE = 1u << 1,  // queue_write may write to it
  HAL_FILE_ACCESS_READ_WRITE = 3u,
};

// A file over descriptor |fd| (duplicated; the HAL closes its copy when the
// file goes). INVALID_ARGUMENT for a descriptor that is not open, an access
// it was not opened for (an O_PATH handle is opened for neither), one that
// is neither a regular file nor a block device (a pipe, a socket, a
// character device such as /dev/null, a directory), or O_APPEND with WRITE
// access, which queue_write also refuses if the flag was set later.
HAL_API HAL_MUST_USE_RESULT hal_status_t
hal_file_from_fd(int fd, hal_file_access_t access, hal_file_t** out_file);

// A file over |length| bytes of host memory at |data| (borrowed: it must
// stay valid until every transfer given the file has reached or failed its
// signals, whenever the file is released; a failure that other work or the
// host puts on a semaphore the transfer also signals does not end the
// transfer, so give each transfer a signal of its own to know when it is
// done; a transfer refused at its call is done with them when the call
// returns; a range
// that wraps the address space, or a NULL |data| with a |length| above 0,
// is INVALID_ARGUMENT; a |length| of 0 makes a file of no bytes). Reads and
// writes beyond |length| are OUT_OF_RANGE at the call.
HAL_API HAL_MUST_USE_RESULT hal_status_t
hal_file_from_memory(void* data, uint64_t length, hal_file_access_t access,
                     hal_file_t** out_file);

HAL_API void hal_file_retain(hal_file_t* file);
HAL_API void hal_file_release(hal_file_t* file);

// Reads |length| bytes of |source| at |source_offset| into |target| at
// |target_offset|, in chunks through pinned staging memory, the next
// chunk's read overlapping the previous chunk's copy. |length| may be
// HAL_WHOLE_BUFFER: the rest of |target| from |target_offset|. A length of
// 0 moves nothing and is a barrier: the signals follow the waits. Errors at
// the call
// (nothing submitted, no semaphore moved): OUT_OF_RANGE for a range past
// the buffer, or past the end of the file as it is now; INVALID_ARGUMENT
// for a file not opened for reading, a buffer of another device; the
// queue and list errors of hal_device_queue_execute (a signal list naming a
// semaphore twice included). The signals are reached or failed only after
// every chunk's copy let go of |target|. A file that turns out
// shorter when it is read, or a read that fails, fails the signals
// (DATA_LOSS, or the errno's status) and nothing after it runs. The file
// I/O runs on a thread of the device's own for transfers, not the one of
// its host calls: a host call (hal_device_queue_host_call) may wait for a
// transfer, and one that blocks does not hold transfers up.
HAL_API HAL_MUST_USE_RESULT hal_status_t hal_device_queue_read(
    hal_device_t* device, uint32_t queue_index,
    const hal_semaphore_list_t* wait_semaphores,
    const hal_semaphore_list_t* signal_semaphores, hal_file_t* source,
    uint64_t source_offset, hal_buffer_t* target, uint64_t target_offset,
    uint64_t length);

// Writes |length| bytes of |source| at |source_offset| into |target| at
// |target_offset| (a descriptor's file grows as needed, up to the largest
// off_t: a range ending past it is OUT_OF_RANGE; host memory must hold the
// range), in chunks likewise; |length| as hal_device_queue_read's
// (HAL_WHOLE_BUFFER: the rest of |source|). Errors as
// hal_device_queue_read's. The file system may hold less than the largest
// off_t: a pwrite it refuses (EFBIG past its own limit, ENOSPC) fails the
// signals with the errno's status, as a failed read does. A
// descriptor that got O_APPEND after the call fails the signals when the
// write runs: FAILED_PRECONDITION if the flag is found before a chunk's
// pwrite (nothing of that chunk written), DATA_LOSS if it is found set
// after (its bytes may have gone to the file's end).
HAL_API HAL_MUST_USE_RESULT hal_status_t hal_device_queue_write(
    hal_device_t* device, uint32_t queue_index,
    const hal_semaphore_list_t* wait_semaphores,
    const hal_semaphore_list_t* signal_semaphores, hal_buffer_t* source,
    uint64_t source_offset, hal_file_t* target, uint64_t target_offset,
    uint64_t length);

HAL_EXTERN_C_END

#endif  // HAL_FILE_H_
