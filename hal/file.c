// Copyright 2026 The HAL Authors.
//
// Files and the queue transfers between them and buffers, written once over
// the public API for every driver: host calls do the file I/O on a thread
// of the device's own for file transfers (not the one of its host calls,
// which may wait for a transfer), queue copies move each chunk between
// pinned staging memory and the buffer, and two private timeline
// semaphores chain them.
//
// A read of n chunks through two staging buffers (chunk i uses staging
// i % 2):
//
//   io_i   host call   waits  [the caller's waits]            (i == 0)
//                             io >= i, copied >= i - 1        (i > 0)
//                      does   pread/memcpy chunk i into staging i % 2
//                      signals io = i + 1
//   copy_i queue copy  waits  io >= i + 1
//                      signals copied = i + 1
//   done   host call   waits  copied >= n; signals the caller's signals
//
// so io_{i+1} (the file) overlaps copy_i (the device), and io_i reuses a
// staging buffer only after copy_{i-2} is done with it. A write mirrors it:
// copy_i (buffer -> staging) waits for write_{i-2}, write_i (pwrite) waits
// for copy_i and write_{i-1}; its first step is a host call that only
// waits for the caller's waits (so that a failure of one decides the
// transfer at once, as a read's first step does: S2), and copy_0 waits for
// it. Any failure fails the semaphore the step
// signals, so every later step is decided at once (S2) and the caller's
// signals fail with the first cause. A device's release cancels the steps
// still waiting in no particular order: a step the caller's failed wait
// decided may get that failure while a later step, whose own wait has not
// failed yet, gets CANCELLED. The cause wins over CANCELLED. Every host call is
// called exactly once (also when its wait failed or the device shut down), and
// each holds a reference on the transfer, so the last of them frees it.

#include "hal/file.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "device_private.h"
#include "hal/impl/api.h"
#include "semaphore_impl.h"

// The status code of an errno from file I/O.
static hal_status_code_t hal_file_errno_code(int error) {
  switch (error) {
    case ENOENT:
      return HAL_STATUS_NOT_FOUND;
    case EACCES:
    case EPERM:
    case EROFS:
      return HAL_STATUS_PERMISSION_DENIED;
    case ENOSPC:
    case EDQUOT:
    case EFBIG:
    case EMFILE:
    case ENFILE:
    case ENOMEM:
      return HAL_STATUS_RESOURCE_EXHAUSTED;
    case EBADF:
    case EINVAL:
    case ESPIPE:
      return HAL_STATUS_INVALID_ARGUMENT;
    case EIO:
      return HAL_STATUS_DATA_LOSS;
  }
  return HAL_STATUS_UNKNOWN;
}

struct hal_file_t {
  hal_resource_t resource;
  hal_file_access_t access;
  int fd;      // -1 for memory
  void* data;  // memory files
  uint64_t length;
};

static void hal_file_destroy(hal_resource_t* resource) {
  hal_file_t* file = (hal_file_t*)resource;
  if (file->fd >= 0)
    close(file->fd);
  hal_allocator_free(hal_allocator_system(), file);
}

static const struct {
  hal_resource_destroy_fn_t destroy;
} hal_file_vtable = {hal_file_destroy};

static hal_status_t hal_file_check_access(hal_file_access_t access) {
  if (access == 0 ||
      (access & ~(hal_file_access_t)HAL_FILE_ACCESS_READ_WRITE)) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "file access 0x%x is empty or has unknown bits",
                           access);
  }
  return HAL_OK;
}

static hal_status_t hal_file_create(int fd, void* data, uint64_t length,
                                    hal_file_access_t access,
                                    hal_file_t** out_file) {
  hal_file_t* file = NULL;
  HAL_RETURN_IF_ERROR(hal_allocator_malloc(hal_allocator_system(),
                                           sizeof(*file), (void**)&file));
  hal_resource_initialize_kind(HAL_RESOURCE_KIND_FILE, &hal_file_vtable, NULL,
                               &file->resource);
  file->access = access;
  file->fd = fd;
  file->data = data;
  file->length = length;
  *out_file = file;
  return HAL_OK;
}

HAL_API hal_status_t hal_file_from_fd(int fd, hal_file_access_t access,
                                      hal_file_t** out_file) {
  if (!out_file) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT, "out_file is NULL");
  }
  *out_file = NULL;
  HAL_RETURN_IF_ERROR(hal_file_check_access(access));
  int flags = fcntl(fd, F_GETFL);
  if (fd < 0 || flags < 0) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "file descriptor %d is not open", fd);
  }
  if (flags & O_PATH) {
    // A path handle: fstat works on it, reads and writes fail (EBADF),
    // whatever access mode F_GETFL reports beside O_PATH.
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "file descriptor %d was opened with O_PATH: it "
                           "cannot be read or written",
                           fd);
  }
  int mode = flags & O_ACCMODE;
  if (((access & HAL_FILE_ACCESS_READ) && mode == O_WRONLY) ||
      ((access & HAL_FILE_ACCESS_WRITE) && mode == O_RDONLY)) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "file descriptor %d was not opened for %s", fd,
                           mode == O_WRONLY ? "reading" : "writing");
  }
  if ((access & HAL_FILE_ACCESS_WRITE) && (flags & O_APPEND)) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "file descriptor %d was opened with O_APPEND: its "
                           "writes would land at its end, not at the offsets "
                           "transfers write at",
                           fd);
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || !(S_ISREG(st.st_mode) || S_ISBLK(st.st_mode))) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "file descriptor %d is not a regular file or block "
                           "device (transfers read and write at offsets)",
                           fd);
  }
  int copy = fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (copy < 0) {
    return hal_make_status(hal_file_errno_code(errno),
                           "duplicating file descriptor %d: %s", fd,
                           strerror(errno));
  }
  hal_status_t status = hal_file_create(copy, NULL, 0, access, out_file);
  if (status != HAL_OK)
    close(copy);
  return status;
}

HAL_API hal_status_t hal_file_from_memory(void* data, uint64_t length,
                                          hal_file_access_t access,
                                          hal_file_t** out_file) {
  if (!out_file) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT, "out_file is NULL");
  }
  *out_file = NULL;
  HAL_RETURN_IF_ERROR(hal_file_check_access(access));
  if (!data && length > 0) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "memory file of %" PRIu64 " bytes at NULL", length);
  }
  if (length > UINTPTR_MAX - (uintptr_t)data) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "memory file of %" PRIu64
                           " bytes at %p runs past the end of the address "
                           "space",
                           length, data);
  }
  return hal_file_create(-1, data, length, access, out_file);
}

HAL_API void hal_file_retain(hal_file_t* file) {
  if (hal_resource_is_kind(file, HAL_RESOURCE_KIND_FILE))
    hal_resource_retain(&file->resource);
}

HAL_API void hal_file_release(hal_file_t* file) {
  if (hal_resource_is_kind(file, HAL_RESOURCE_KIND_FILE))
    hal_resource_release(&file->resource);
}

// The file's length now (descriptors: fstat).
static hal_status_t hal_file_length(const hal_file_t* file,
                                    uint64_t* out_length) {
  if (file->fd < 0) {
    *out_length = file->length;
    return HAL_OK;
  }
  struct stat st;
  if (fstat(file->fd, &st) != 0) {
    return hal_make_status(hal_file_errno_code(errno), "fstat: %s",
                           strerror(errno));
  }
  *out_length = (uint64_t)st.st_size;
  return HAL_OK;
}

//===----------------------------------------------------------------------===//
// Transfers
//===----------------------------------------------------------------------===//

// Chunk bytes unless HAL_FILE_CHUNK_BYTES says otherwise.
#define HAL_FILE_DEFAULT_CHUNK ((uint64_t)4 << 20)

typedef struct hal_transfer_t hal_transfer_t;

// One host call's record: which chunk, and its transfer.
typedef struct hal_transfer_step_t {
  hal_transfer_t* transfer;
  uint64_t chunk;  // HAL_TRANSFER_FINAL, HAL_TRANSFER_START, or a chunk
} hal_transfer_step_t;

// The final host call, which publishes; a write's first, which only waits.
#define HAL_TRANSFER_FINAL UINT64_MAX
#define HAL_TRANSFER_START (UINT64_MAX - 1)

struct hal_transfer_t {
  // One per host call still to be called, one per copy whose retirement
  // is still to be seen, and the submitting call's own until it is done
  // with the transfer: a refused or failed chain can decide every
  // submitted step before the submitter finishes.
  atomic_int ref_count;
  // The caller's signals are published (hal_transfer_finish_part) once the
  // final host call ran AND every copy retired AND the submitter decided
  // whether to publish at all: a failed chain decides its
  // steps in no particular order, and a copy holds its buffer (a pending
  // use a dealloca must not see) until it retired. |unfinished| counts
  // those parts; |failure| is the first failure among them other than
  // CANCELLED, |cancelled| the first CANCELLED (published only when no
  // part failed otherwise: the shutdown is no cause when a wait's failure
  // decided the transfer before it).
  // A failed wait of the caller's comes between them: S2 decided the
  // transfer, whatever its code (a caller's own CANCELLED included), before
  // the shutdown could.
  atomic_int unfinished;
  _Atomic(hal_status_t) failure;
  _Atomic(hal_status_t) cancelled;
  size_t wait_count;
  hal_semaphore_t** waits;  // the caller's (retained), with |wait_values|
  uint64_t* wait_values;
  bool publish;  // false: the call was refused, the signals stay as they are
  size_t signal_count;
  hal_semaphore_t** signals;  // retained, with |signal_values|
  uint64_t* signal_values;
  hal_semaphore_t** retired;  // [chunk_count]: copy i signals retired[i] = 1
  bool is_read;
  hal_file_t* file;  // retained
  uint64_t file_offset;
  uint64_t length;
  uint64_t chunk_bytes;
  uint64_t chunk_count;
  hal_buffer_t* staging[2];  // host-visible, mapped below
  hal_buffer_mapping_t mappings[2];
  hal_semaphore_t* io;       // file steps done
  hal_semaphore_t* copied;   // queue copies done
  hal_semaphore_t* started;  // a write's first step done (NULL: a read)
  // Opened (1) once every step was submitted, so that no step runs for a
  // transfer the call then refuses; failed instead when one could not be.
  hal_semaphore_t* gate;
  // [chunk_count + 2]: chunk i's at i, the final call's at chunk_count, a
  // write's first at chunk_count + 1.
  hal_transfer_step_t steps[];
};

static void hal_transfer_release(hal_transfer_t* transfer) {
  if (atomic_fetch_sub_explicit(&transfer->ref_count, 1,
                                memory_order_acq_rel) != 1) {
    return;
  }
  for (int i = 0; i < 2; ++i) {
    hal_buffer_unmap(&transfer->mappings[i]);
    hal_buffer_release(transfer->staging[i]);
  }
  hal_semaphore_release(transfer->io);
  hal_semaphore_release(transfer->copied);
  hal_semaphore_release(transfer->started);
  hal_semaphore_release(transfer->gate);
  for (uint64_t i = 0; transfer->retired && i < transfer->chunk_count; ++i)
    hal_semaphore_release(transfer->retired[i]);
  for (size_t i = 0; i < transfer->signal_count; ++i)
    hal_semaphore_release(transfer->signals[i]);
  for (size_t i = 0; i < transfer->wait_count; ++i)
    hal_semaphore_release(transfer->waits[i]);
  hal_allocator_free(hal_allocator_system(), transfer->retired);
  hal_allocator_free(hal_allocator_system(), transfer->signals);
  hal_allocator_free(hal_allocator_system(), transfer->waits);
  hal_status_free(atomic_load(&transfer->failure));
  hal_status_free(atomic_load(&transfer->cancelled));
  hal_file_release(transfer->file);
  hal_allocator_free(hal_allocator_system(), transfer);
}

// The bytes of chunk |i|.
static uint64_t hal_transfer_chunk_length(const hal_transfer_t* transfer,
                                          uint64_t i) {
  uint64_t start = i * transfer->chunk_bytes;
  uint64_t rest = transfer->length - start;
  return rest < transfer->chunk_bytes ? rest : transfer->chunk_bytes;
}

// FAILED_PRECONDITION (nothing of the chunk at |offset| written yet) or
// DATA_LOSS (|written|: its bytes may have gone to the file's end) when the
// transfer's descriptor has O_APPEND set.
static hal_status_t hal_transfer_check_no_append(hal_transfer_t* transfer,
                                                 uint64_t offset,
                                                 bool written) {
  int flags = fcntl(transfer->file->fd, F_GETFL);
  if (flags < 0 || !(flags & O_APPEND))
    return HAL_OK;
  if (!written) {
    return hal_make_status(HAL_STATUS_FAILED_PRECONDITION,
                           "writing at file offset %" PRIu64
                           ": the file's descriptor has O_APPEND set (set "
                           "after the write was submitted), so the bytes "
                           "would land at its end; nothing of this chunk was "
                           "written",
                           offset);
  }
  return hal_make_status(HAL_STATUS_DATA_LOSS,
                         "writing at file offset %" PRIu64
                         ": O_APPEND was set on the file's descriptor while "
                         "the write ran, so its bytes may have landed at the "
                         "file's end instead",
                         offset);
}

// The file side of chunk |i|: into staging (read) or out of it (write).
static hal_status_t hal_transfer_io(hal_transfer_t* transfer, uint64_t i) {
  uint8_t* staging = transfer->mappings[i % 2].contents;
  uint64_t length = hal_transfer_chunk_length(transfer, i);
  uint64_t offset = transfer->file_offset + i * transfer->chunk_bytes;
  hal_file_t* file = transfer->file;
  if (file->fd < 0) {
    if (transfer->is_read) {
      memcpy(staging, (uint8_t*)file->data + offset, length);
    } else {
      memcpy((uint8_t*)file->data + offset, staging, length);
    }
    return HAL_OK;
  }
  // O_APPEND is a status flag of the open file description, which the
  // caller's descriptor shares: it may be set after queue_write checked it,
  // and pwrite would then ignore the offset. A flag already set when the
  // chunk runs fails it with nothing written; one set while it writes may
  // have moved its bytes to the end, which fails it too (not an OK signal
  // over misplaced data).
  if (!transfer->is_read)
    HAL_RETURN_IF_ERROR(hal_transfer_check_no_append(transfer, offset, false));
  uint64_t done = 0;
  while (done < length) {
    ssize_t n = transfer->is_read
                    ? pread(file->fd, staging + done, length - done,
                            (off_t)(offset + done))
                    : pwrite(file->fd, staging + done, length - done,
                             (off_t)(offset + done));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      return hal_make_status(hal_file_errno_code(errno),
                             "%s %" PRIu64 " bytes at file offset %" PRIu64
                             ": %s",
                             transfer->is_read ? "reading" : "writing",
                             length - done, offset + done, strerror(errno));
    }
    if (n == 0) {
      // The file shrank after the call checked its length: name its end
      // now, not only where this chunk stopped.
      uint64_t end = offset + done;
      struct stat st;
      if (fstat(file->fd, &st) == 0 && S_ISREG(st.st_mode))
        end = (uint64_t)st.st_size;
      return hal_make_status(HAL_STATUS_DATA_LOSS,
                             "the file ends at offset %" PRIu64
                             " (it shrank after the read "
                             "was submitted), before the %" PRIu64
                             " bytes the read asked for from offset %" PRIu64
                             "; the read stopped at offset %" PRIu64,
                             end, transfer->length, transfer->file_offset,
                             offset + done);
    }
    done += (uint64_t)n;
  }
  if (!transfer->is_read)
    return hal_transfer_check_no_append(transfer, offset, true);
  return HAL_OK;
}

// One part of the transfer is done (|status| borrowed): the final host
// call, or a copy that retired. The last part publishes the caller's
// signals: reached, or failed with the first failure.
static void hal_transfer_finish_part(hal_transfer_t* transfer,
                                     hal_status_t status) {
  if (status != HAL_OK) {
    _Atomic(hal_status_t)* first = hal_status_is(status, HAL_STATUS_CANCELLED)
                                       ? &transfer->cancelled
                                       : &transfer->failure;
    hal_status_t expected = HAL_OK;
    hal_status_t mine = hal_status_clone(status);
    if (!atomic_compare_exchange_strong(first, &expected, mine))
      hal_status_free(mine);
  }
  if (atomic_fetch_sub_explicit(&transfer->unfinished, 1,
                                memory_order_acq_rel) != 1) {
    return;
  }
  if (!transfer->publish)
    return;
  hal_status_t failure = atomic_load(&transfer->failure);
  hal_status_t failed_wait = HAL_OK;
  // Only against the shutdown's CANCELLED: a transfer that ran whole keeps
  // its outcome though a wait's semaphore failed after it was reached.
  bool cancelled = atomic_load(&transfer->cancelled) != HAL_OK;
  for (size_t i = 0; failure == HAL_OK && cancelled && i < transfer->wait_count;
       ++i) {
    failed_wait = hal_sync_semaphore_wait_failure(transfer->waits[i],
                                                  transfer->wait_values[i]);
    if (failed_wait != HAL_OK)
      failure = failed_wait;
  }
  if (failure == HAL_OK)
    failure = atomic_load(&transfer->cancelled);
  for (size_t i = 0; i < transfer->signal_count; ++i) {
    if (failure == HAL_OK) {
      // At least the value, as a queue's signal: a semaphore already past
      // it stays where it is.
      hal_sync_semaphore_advance(hal_sync_semaphore_cast(transfer->signals[i]),
                                 transfer->signal_values[i]);
    } else {
      hal_semaphore_fail(transfer->signals[i], hal_status_clone(failure));
    }
  }
  hal_status_free(failed_wait);
}

// A copy's retirement semaphore was reached or failed: its submission has
// released what it held.
static void hal_transfer_copy_retired(void* user_data, uint64_t value,
                                      hal_status_t status) {
  (void)value;
  hal_transfer_t* transfer = user_data;
  hal_transfer_finish_part(transfer, status);
  hal_transfer_release(transfer);
}

static hal_status_t hal_transfer_step(void* user_data, hal_status_t status) {
  hal_transfer_step_t* step = user_data;
  hal_transfer_t* transfer = step->transfer;
  hal_status_t result = HAL_OK;
  if (step->chunk == HAL_TRANSFER_FINAL) {
    hal_transfer_finish_part(transfer, status);
  } else if (step->chunk == HAL_TRANSFER_START) {
    // Only its waits: a failed one fails its signal (|started|) for it.
  } else if (status == HAL_OK) {
    result = hal_transfer_io(transfer, step->chunk);
  }
  hal_transfer_release(transfer);
  return result;
}

// The one-entry list (semaphore, value); empty for a NULL semaphore.
static hal_semaphore_list_t hal_transfer_list(hal_semaphore_t** semaphore,
                                              uint64_t* value) {
  hal_semaphore_list_t list = {*semaphore ? 1 : 0, semaphore, value};
  return list;
}

// The host calls of |t|: one per chunk, the final one, and a write's first.
static uint64_t hal_transfer_host_call_count(const hal_transfer_t* t) {
  return t->chunk_count + (t->is_read ? 1 : 2);
}

// Submits step |i|'s host call (the final one for i == chunk_count, a
// write's first for chunk_count + 1).
static hal_status_t hal_transfer_submit_io(
    hal_device_t* device, uint32_t queue, hal_transfer_t* t, uint64_t i,
    const hal_semaphore_list_t* waits, const hal_semaphore_list_t* signals) {
  t->steps[i].transfer = t;
  t->steps[i].chunk = i == t->chunk_count       ? HAL_TRANSFER_FINAL
                      : i == t->chunk_count + 1 ? HAL_TRANSFER_START
                                                : i;
  return hal_device_queue_file_host_call(device, queue, waits, signals,
                                         hal_transfer_step, &t->steps[i]);
}

// Submits chunk |i|'s copy, signaling |t->copied| to |copied_value| and
// its own retirement semaphore, watched (a reference of |t| until seen).
static hal_status_t hal_transfer_submit_copy(
    hal_device_t* device, uint32_t queue, hal_transfer_t* t, uint64_t i,
    const hal_semaphore_list_t* waits, uint64_t copied_value,
    hal_buffer_t* source, uint64_t source_offset, hal_buffer_t* target,
    uint64_t target_offset, uint64_t length, uint64_t* inout_copies) {
  hal_semaphore_t* semaphores[2] = {t->copied, t->retired[i]};
  uint64_t values[2] = {copied_value, 1};
  hal_semaphore_list_t signals = {2, semaphores, values};
  HAL_RETURN_IF_ERROR(hal_device_queue_copy(device, queue, waits, &signals,
                                            source, source_offset, target,
                                            target_offset, length));
  ++*inout_copies;
  atomic_fetch_add_explicit(&t->ref_count, 1, memory_order_relaxed);
  hal_status_t status = hal_semaphore_add_callback(
      t->retired[i], 1, hal_transfer_copy_retired, t, NULL);
  if (status != HAL_OK) {
    // Submitted but not watched: the chain is refused below, which waits
    // for this copy's retirement like every submitted one's.
    atomic_fetch_sub_explicit(&t->ref_count, 1, memory_order_relaxed);
    hal_transfer_finish_part(t, HAL_OK);
  }
  return status;
}

// Every submission of |t|. On error the steps not submitted drop their
// references (the submitted ones are decided by the failed semaphores).
static hal_status_t hal_transfer_submit(
    hal_device_t* device, uint32_t queue, hal_transfer_t* t,
    hal_buffer_t* buffer, uint64_t buffer_offset,
    const hal_semaphore_list_t* wait_semaphores,
    const hal_semaphore_list_t* signal_semaphores) {
  // The first step, a host call (a read's first chunk's I/O, a write's
  // start), waits for the caller's waits and the gate: a host call learns
  // at once of a failure of a wait, one reached before it failed included
  // (S2), where a queue copy would learn of the latter only at its issue.
  size_t wait_count = wait_semaphores ? wait_semaphores->count : 0;
  hal_semaphore_t** first_semaphores = NULL;
  uint64_t* first_values = NULL;
  hal_status_t status = hal_allocator_malloc(
      hal_allocator_system(),
      (wait_count + 1) * (sizeof(*first_semaphores) + sizeof(*first_values)),
      (void**)&first_semaphores);
  if (status != HAL_OK) {
    // Nothing submitted: every reference is still ours (count first: the
    // last release frees |t|).
    uint64_t references = hal_transfer_host_call_count(t) + 1;
    for (uint64_t i = 0; i < references; ++i)
      hal_transfer_release(t);
    return status;
  }
  first_values = (uint64_t*)(first_semaphores + wait_count + 1);
  for (size_t i = 0; i < wait_count; ++i) {
    first_semaphores[i] = wait_semaphores->semaphores[i];
    first_values[i] = wait_semaphores->payload_values[i];
    hal_semaphore_retain(first_semaphores[i]);
  }
  first_semaphores[wait_count] = t->gate;
  first_values[wait_count] = 1;
  // The caller's waits stay with |t| (the list's head), for publishing.
  t->waits = first_semaphores;
  t->wait_values = first_values;
  t->wait_count = wait_count;
  hal_semaphore_list_t first_waits = {wait_count + 1, first_semaphores,
                                      first_values};
  uint64_t submitted = 0;  // host calls submitted
  uint64_t copies = 0;     // copies submitted, each watched
  // A write's copy 0 waits for its start.
  uint64_t started = 1;
  hal_semaphore_list_t start_wait = hal_transfer_list(&t->started, &started);
  if (!t->is_read) {
    status = hal_transfer_submit_io(device, queue, t, t->chunk_count + 1,
                                    &first_waits, &start_wait);
    if (status == HAL_OK)
      ++submitted;
  }
  for (uint64_t i = 0; i < t->chunk_count && status == HAL_OK; ++i) {
    uint64_t length = hal_transfer_chunk_length(t, i);
    uint64_t at = buffer_offset + i * t->chunk_bytes;
    hal_buffer_t* staging = t->staging[i % 2];
    uint64_t io_done = i + 1, io_before = i, copy_done = i + 1;
    uint64_t copy_before2 = i >= 1 ? i - 1 : 0;
    hal_semaphore_t* waits2[2] = {t->io, t->copied};
    if (t->is_read) {
      // io_i after io_{i-1} and copy_{i-2}; io_0 after the caller's waits.
      uint64_t values[2] = {io_before, copy_before2};
      hal_semaphore_list_t io_waits = {i >= 2 ? 2 : 1, waits2, values};
      hal_semaphore_list_t io_signal = hal_transfer_list(&t->io, &io_done);
      status = hal_transfer_submit_io(
          device, queue, t, i, i == 0 ? &first_waits : &io_waits, &io_signal);
      if (status != HAL_OK)
        break;
      ++submitted;
      hal_semaphore_list_t copy_wait = hal_transfer_list(&t->io, &io_done);
      status =
          hal_transfer_submit_copy(device, queue, t, i, &copy_wait, copy_done,
                                   staging, 0, buffer, at, length, &copies);
    } else {
      // copy_i after copy_{i-1} and write_{i-2}; copy_0 after the caller's
      // waits. write_i after copy_i and write_{i-1}.
      uint64_t values[2] = {copy_before2, i};  // io >= i - 1, copied >= i
      hal_semaphore_t* copy_sems[2] = {t->io, t->copied};
      hal_semaphore_list_t copy_waits = {2, copy_sems, values};
      if (i < 2) {
        copy_sems[0] = t->copied;
        values[0] = i;
        copy_waits.count = 1;
      }
      status = hal_transfer_submit_copy(
          device, queue, t, i, i == 0 ? &start_wait : &copy_waits, copy_done,
          buffer, at, staging, 0, length, &copies);
      if (status != HAL_OK)
        break;
      uint64_t write_values[2] = {copy_done, io_before};
      hal_semaphore_t* write_sems[2] = {t->copied, t->io};
      hal_semaphore_list_t write_waits = {2, write_sems, write_values};
      hal_semaphore_list_t write_signal = hal_transfer_list(&t->io, &io_done);
      status = hal_transfer_submit_io(device, queue, t, i, &write_waits,
                                      &write_signal);
      if (status == HAL_OK)
        ++submitted;
    }
  }
  if (status == HAL_OK) {
    // The caller's signals once the last step is done: the final host call
    // frees nothing it does not own (its reference, like every step's).
    uint64_t last = t->chunk_count;
    hal_semaphore_list_t final_wait =
        hal_transfer_list(t->is_read ? &t->copied : &t->io, &last);
    status = hal_transfer_submit_io(device, queue, t, t->chunk_count,
                                    &final_wait, NULL);
    if (status == HAL_OK)
      ++submitted;
  }
  if (status == HAL_OK) {
    // Steps may already be decided (a wait that had failed before the
    // call): the submitter's own part keeps the publication until now.
    t->publish = true;
    hal_transfer_finish_part(t, HAL_OK);
    hal_status_t opened = hal_semaphore_signal(t->gate, 1);
    if (opened != HAL_OK) {
      // The gate could not open (it failed: the device was lost since the
      // steps were submitted). The transfer was accepted, and publishes:
      // the steps fail with the gate's status and the caller's signals
      // with them, as any accepted work of a lost device does. An error
      // here would say that nothing was submitted.
      hal_semaphore_fail(t->gate, opened);
    }
    hal_transfer_release(t);  // ours: the steps now hold it alone
    return HAL_OK;
  }
  // The gate never opened: failing the chain decides every submitted step
  // without running one (each then drops its own reference). The
  // references of the steps not submitted, and the submitter's, are ours,
  // so |t| lives until the last release below (count first: it may free).
  hal_semaphore_fail(t->gate, hal_status_clone(status));
  hal_semaphore_fail(t->io, hal_status_clone(status));
  hal_semaphore_fail(t->copied, hal_status_clone(status));
  if (t->started)
    hal_semaphore_fail(t->started, hal_status_clone(status));
  // Nothing is published, but a copy refused with the call must have let
  // its buffer go before the call returns: a dealloca right after must not
  // see it pending. Each retires soon (its wait failed with the gate).
  for (uint64_t i = 0; i < copies; ++i) {
    // Not cut short by HAL_SYNC_MAX_WAIT_MS: the promise above holds
    // however slow the retirement, and it is no hang.
    hal_status_t retired;
    while (hal_status_is(
        retired = hal_semaphore_wait(t->retired[i], 1, hal_infinite_timeout()),
        HAL_STATUS_DEADLINE_EXCEEDED)) {
      hal_status_free(retired);
    }
    hal_status_ignore(retired);
  }
  // The parts never submitted will not finish: the copies not submitted
  // and the final host call (always the last submission); and ours.
  uint64_t unsubmitted_parts = (t->chunk_count - copies) + 2;
  for (uint64_t i = 0; i < unsubmitted_parts; ++i)
    hal_transfer_finish_part(t, HAL_OK);
  uint64_t references = hal_transfer_host_call_count(t) + 1 - submitted;
  for (uint64_t i = 0; i < references; ++i)
    hal_transfer_release(t);
  return status;
}

// Validation shared by both directions, then the transfer.
static hal_status_t hal_device_queue_transfer(
    hal_device_t* device, uint32_t queue_index,
    const hal_semaphore_list_t* wait_semaphores,
    const hal_semaphore_list_t* signal_semaphores, bool is_read,
    hal_file_t* file, uint64_t file_offset, hal_buffer_t* buffer,
    uint64_t buffer_offset, uint64_t length) {
  const char* what = is_read ? "queue_read" : "queue_write";
  HAL_RETURN_IF_ERROR(
      hal_resource_check_kind(device, HAL_RESOURCE_KIND_DEVICE, "device"));
  if (queue_index >= device->info.queue_count) {
    return hal_make_status(HAL_STATUS_OUT_OF_RANGE,
                           "%s: queue index %u is out of range: device '%s' "
                           "has %u queue(s)",
                           what, queue_index, device->info.name,
                           device->info.queue_count);
  }
  if (wait_semaphores) {
    HAL_RETURN_IF_ERROR(hal_semaphore_list_validate(*wait_semaphores, "wait"));
  }
  if (signal_semaphores) {
    HAL_RETURN_IF_ERROR(
        hal_semaphore_list_validate(*signal_semaphores, "signal"));
    // The transfer publishes the signals itself, after its last step: the
    // queue's checks of them are made here.
    for (size_t i = 0; i < signal_semaphores->count; ++i) {
      for (size_t j = 0; j < i; ++j) {
        if (signal_semaphores->semaphores[i] ==
            signal_semaphores->semaphores[j]) {
          return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                                 "%s: signal list names semaphore %p twice "
                                 "(entries %zu and %zu)",
                                 what, (void*)signal_semaphores->semaphores[i],
                                 j, i);
        }
      }
    }
  }
  HAL_RETURN_IF_ERROR(
      hal_resource_check_kind(file, HAL_RESOURCE_KIND_FILE, "file"));
  HAL_RETURN_IF_ERROR(
      hal_resource_check_kind(buffer, HAL_RESOURCE_KIND_BUFFER, "buffer"));
  if (hal_buffer_device(buffer) != device) {
    char owner[HAL_DEVICE_DESCRIPTION_MAX], target[HAL_DEVICE_DESCRIPTION_MAX];
    hal_device_describe(hal_buffer_device(buffer), owner, sizeof(owner));
    hal_device_describe(device, target, sizeof(target));
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "%s: the buffer is of device %s, not of %s", what,
                           owner, target);
  }
  hal_file_access_t needed =
      is_read ? HAL_FILE_ACCESS_READ : HAL_FILE_ACCESS_WRITE;
  if (!(file->access & needed)) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "%s: the file was not opened for %s", what,
                           is_read ? "reading" : "writing");
  }
  uint64_t resolved = 0;
  HAL_RETURN_IF_ERROR(hal_status_annotatef(
      hal_buffer_validate_range(buffer, buffer_offset, length, &resolved), "%s",
      what));
  if (!is_read && file->fd >= 0) {
    // The descriptor's status flags are shared with the caller's: O_APPEND
    // may have been set after hal_file_from_fd.
    int flags = fcntl(file->fd, F_GETFL);
    if (flags >= 0 && (flags & O_APPEND)) {
      return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                             "%s: the file's descriptor has O_APPEND set: "
                             "writes would land at its end, not at offset "
                             "%" PRIu64,
                             what, file_offset);
    }
  }
  uint64_t file_length = 0;
  HAL_RETURN_IF_ERROR(hal_file_length(file, &file_length));
  if (file->fd >= 0 && (file_offset > (uint64_t)INT64_MAX ||
                        resolved > (uint64_t)INT64_MAX - file_offset)) {
    // pread/pwrite take an off_t: the last byte must be addressable.
    return hal_make_status(HAL_STATUS_OUT_OF_RANGE,
                           "%s: bytes [%" PRIu64 ", +%" PRIu64
                           ") end past the largest file offset (%" PRId64 ")",
                           what, file_offset, resolved, (int64_t)INT64_MAX);
  }
  bool must_fit = is_read || file->fd < 0;
  if (must_fit &&
      (file_offset > file_length || resolved > file_length - file_offset)) {
    return hal_make_status(HAL_STATUS_OUT_OF_RANGE,
                           "%s: bytes [%" PRIu64 ", +%" PRIu64
                           ") are past the end of the %" PRIu64 "-byte file",
                           what, file_offset, resolved, file_length);
  }
  uint64_t chunk = HAL_FILE_DEFAULT_CHUNK;
  HAL_RETURN_IF_ERROR(hal_env_uint("HAL_FILE_CHUNK_BYTES", 4096,
                                   (uint64_t)1 << 30, &chunk, NULL));
  if (resolved == 0) {
    // Nothing to move: a barrier keeps the waits-before-signals order.
    return hal_device_queue_barrier(device, queue_index, wait_semaphores,
                                    signal_semaphores);
  }
  uint64_t chunk_count = (resolved + chunk - 1) / chunk;
  hal_transfer_t* t = NULL;
  HAL_RETURN_IF_ERROR(hal_allocator_malloc(
      hal_allocator_system(),
      sizeof(*t) + (chunk_count + 2) * sizeof(hal_transfer_step_t),
      (void**)&t));
  memset(t, 0, sizeof(*t));
  // A reference per host call and the submitter's (the copies add theirs).
  atomic_init(&t->ref_count, (int)(chunk_count + (is_read ? 1 : 2) + 1));
  atomic_init(&t->unfinished, (int)(chunk_count + 2));
  atomic_init(&t->failure, HAL_OK);
  atomic_init(&t->cancelled, HAL_OK);
  t->is_read = is_read;
  t->file = file;
  hal_file_retain(file);
  t->file_offset = file_offset;
  t->length = resolved;
  t->chunk_bytes = chunk;
  t->chunk_count = chunk_count;
  uint64_t staging_bytes = resolved < chunk ? resolved : chunk;
  hal_buffer_params_t params = {
      HAL_MEMORY_TYPE_HOST_VISIBLE,
      HAL_BUFFER_USAGE_TRANSFER | HAL_BUFFER_USAGE_MAPPING};
  hal_status_t status = HAL_OK;
  for (int i = 0; i < 2 && status == HAL_OK; ++i) {
    status = hal_device_allocate_buffer(device, params, staging_bytes,
                                        &t->staging[i]);
    if (status == HAL_OK) {
      status =
          hal_buffer_map_range(t->staging[i], HAL_MAPPING_ACCESS_READ_WRITE, 0,
                               staging_bytes, &t->mappings[i]);
    }
  }
  if (status == HAL_OK)
    status = hal_device_create_semaphore(device, 0, &t->io);
  if (status == HAL_OK)
    status = hal_device_create_semaphore(device, 0, &t->copied);
  if (status == HAL_OK)
    status = hal_device_create_semaphore(device, 0, &t->gate);
  if (status == HAL_OK && !is_read)
    status = hal_device_create_semaphore(device, 0, &t->started);
  if (status == HAL_OK) {
    status = hal_allocator_malloc_array(hal_allocator_system(), chunk_count,
                                        sizeof(hal_semaphore_t*),
                                        (void**)&t->retired);
    if (status == HAL_OK)
      memset(t->retired, 0, chunk_count * sizeof(hal_semaphore_t*));
  }
  for (uint64_t i = 0; status == HAL_OK && i < chunk_count; ++i)
    status = hal_device_create_semaphore(device, 0, &t->retired[i]);
  size_t signal_count = signal_semaphores ? signal_semaphores->count : 0;
  if (status == HAL_OK && signal_count > 0) {
    status = hal_allocator_malloc(
        hal_allocator_system(),
        signal_count * (sizeof(hal_semaphore_t*) + sizeof(uint64_t)),
        (void**)&t->signals);
    if (status == HAL_OK) {
      t->signal_values = (uint64_t*)(t->signals + signal_count);
      t->signal_count = signal_count;
      for (size_t i = 0; i < signal_count; ++i) {
        t->signals[i] = signal_semaphores->semaphores[i];
        t->signal_values[i] = signal_semaphores->payload_values[i];
        hal_semaphore_retain(t->signals[i]);
      }
    }
  }
  if (status != HAL_OK) {
    atomic_store(&t->ref_count, 1);
    hal_transfer_release(t);
    return hal_status_annotatef(status, "%s", what);
  }
  return hal_status_annotatef(
      hal_transfer_submit(device, queue_index, t, buffer, buffer_offset,
                          wait_semaphores, signal_semaphores),
      "%s", what);
}

HAL_API hal_status_t hal_device_queue_read(
    hal_device_t* device, uint32_t queue_index,
    const hal_semaphore_list_t* wait_semaphores,
    const hal_semaphore_list_t* signal_semaphores, hal_file_t* source,
    uint64_t source_offset, hal_buffer_t* target, uint64_t target_offset,
    uint64_t length) {
  return hal_device_queue_transfer(
      device, queue_index, wait_semaphores, signal_semaphores, true, source,
      source_offset, target, target_offset, length);
}

HAL_API hal_status_t hal_device_queue_write(
    hal_device_t* device, uint32_t queue_index,
    const hal_semaphore_list_t* wait_semaphores,
    const hal_semaphore_list_t* signal_semaphores, hal_buffer_t* source,
    uint64_t source_offset, hal_file_t* target, uint64_t target_offset,
    uint64_t length) {
  return hal_device_queue_transfer(
      device, queue_index, wait_semaphores, signal_semaphores, false, target,
      target_offset, source, source_offset, length);
}
