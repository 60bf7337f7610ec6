// Copyright 2026 The HAL Authors.
//
// CTS suite "queue_file": transfers between files and buffers
// (hal_device_queue_read / hal_device_queue_write) on the driver's device,
// from a descriptor and from host memory. meson.build runs it with
// HAL_FILE_CHUNK_BYTES=4096 so a few KiB cross several chunks and both
// staging buffers.
//
// Round trips with odd offsets and sizes read back byte for byte; a read
// waits for its waits and work after it sees what it read; a file shorter
// than the read fails at the call, or through the signals when it shrinks
// before the read runs; bad input is refused with nothing submitted; a
// failed wait fails the signals; the device's release cancels a transfer
// still waiting (Q4).

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cts.h"

typedef cts_fixture_t fixture_t;

enum { kChunk = 4096, kFileBytes = 3 * kChunk + 517 };

static hal_semaphore_list_t one(hal_semaphore_t** semaphore, uint64_t* value) {
  hal_semaphore_list_t list = {*semaphore ? 1 : 0, semaphore, value};
  return list;
}

// |length| seeded random bytes into |bytes|.
static void random_bytes(uint8_t* bytes, size_t length, uint64_t stream) {
  cts_random_t random = cts_random_make(stream);
  for (size_t i = 0; i < length; ++i)
    bytes[i] = (uint8_t)cts_random_next(&random);
}

// A temporary file of |length| seeded random bytes (also into |bytes|),
// opened read-write and already unlinked.
static int temp_file(uint8_t* bytes, size_t length, uint64_t stream) {
  const char* dir = getenv("TMPDIR");
  char path[512];
  snprintf(path, sizeof(path), "%s/cts-queue-file-XXXXXX",
           dir && dir[0] ? dir : "/tmp");
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  unlink(path);
  random_bytes(bytes, length, stream);
  assert_int_equal(pwrite(fd, bytes, length, 0), (ssize_t)length);
  return fd;
}

// A file over temp_file(bytes, length, stream), opened for |access|; the
// temporary descriptor is closed (the file holds its own).
static hal_file_t* temp_hal_file(uint8_t* bytes, size_t length, uint64_t stream,
                                 hal_file_access_t access) {
  int fd = temp_file(bytes, length, stream);
  hal_file_t* file = NULL;
  HAL_ASSERT_OK(hal_file_from_fd(fd, access, &file));
  close(fd);
  return file;
}

static hal_buffer_t* device_buffer(hal_device_t* device, uint64_t size) {
  return cts_zeroed_buffer(device, size);
}

// One file kind of the round trip: a descriptor or host memory.
static void round_trip(fixture_t* f, bool from_memory) {
  static uint8_t bytes[kFileBytes];
  static uint8_t memory[kFileBytes];
  int fd = temp_file(bytes, sizeof(bytes), from_memory ? 2 : 1);
  memcpy(memory, bytes, sizeof(memory));
  hal_file_t* file = NULL;
  if (from_memory) {
    HAL_ASSERT_OK(hal_file_from_memory(memory, sizeof(memory),
                                       HAL_FILE_ACCESS_READ_WRITE, &file));
  } else {
    HAL_ASSERT_OK(hal_file_from_fd(fd, HAL_FILE_ACCESS_READ_WRITE, &file));
  }
  hal_buffer_t* buffer = device_buffer(f->device, kFileBytes + 64);
  hal_semaphore_t* s = cts_create_semaphore(f->device, 0);
  uint64_t v1 = 1, v2 = 2;
  hal_semaphore_list_t signal1 = one(&s, &v1);
  hal_semaphore_list_t wait1 = one(&s, &v1);
  hal_semaphore_list_t signal2 = one(&s, &v2);
  // Read 3 chunks and a bit, from file offset 7 into buffer offset 13.
  const uint64_t length = 3 * kChunk + 300;
  HAL_ASSERT_OK(hal_device_queue_read(f->device, f->q0, NULL, &signal1, file, 7,
                                      buffer, 13, length));
  // Write it back from buffer offset 13 to file offset 5 (another queue,
  // after the read).
  HAL_ASSERT_OK(hal_device_queue_write(f->device, f->q1, &wait1, &signal2,
                                       buffer, 13, file, 5, length));
  HAL_ASSERT_OK(cts_wait(s, 2));
  static uint8_t back[kFileBytes + 64];
  HAL_ASSERT_OK(hal_buffer_read(buffer, 0, back, sizeof(back)));
  for (int i = 0; i < 13; ++i)
    assert_int_equal(back[i], 0);
  assert_memory_equal(back + 13, bytes + 7, length);
  assert_int_equal(back[13 + length], 0);
  static uint8_t written[kFileBytes];
  if (from_memory) {
    memcpy(written, memory, sizeof(written));
  } else {
    assert_int_equal(pread(fd, written, sizeof(written), 0),
                     (ssize_t)sizeof(written));
  }
  assert_memory_equal(written, bytes, 5);
  assert_memory_equal(written + 5, bytes + 7, length);
  assert_memory_equal(written + 5 + length, bytes + 5 + length,
                      kFileBytes - 5 - length);
  hal_semaphore_release(s);
  hal_buffer_release(buffer);
  hal_file_release(file);
  close(fd);
}

CTS_CASE(File_RoundTripFromDescriptor) {
  round_trip(*state, false);
}

CTS_CASE(File_RoundTripFromMemory) {
  round_trip(*state, true);
}

// HAL_WHOLE_BUFFER moves the rest of the buffer from its offset, in both
// directions; a length of 0 moves nothing but keeps the order: its signal
// follows its wait.
CTS_CASE(File_WholeBufferAndZeroLengths) {
  fixture_t* f = *state;
  static uint8_t bytes[kFileBytes];
  int fd = temp_file(bytes, sizeof(bytes), 8);
  hal_file_t* file = NULL;
  HAL_ASSERT_OK(hal_file_from_fd(fd, HAL_FILE_ACCESS_READ_WRITE, &file));
  const uint64_t size = 2 * kChunk + 99, at = 21;
  hal_buffer_t* buffer = device_buffer(f->device, size);
  hal_semaphore_t* s = cts_create_semaphore(f->device, 0);
  uint64_t v1 = 1, v2 = 2, v3 = 3, v4 = 4;
  hal_semaphore_list_t signal1 = one(&s, &v1), wait1 = one(&s, &v1);
  hal_semaphore_list_t signal2 = one(&s, &v2);
  hal_semaphore_list_t signal3 = one(&s, &v3), wait3 = one(&s, &v3);
  hal_semaphore_list_t signal4 = one(&s, &v4);
  // Read the buffer's tail (size - at bytes) from file offset 3, then write
  // the whole buffer from its offset 5 to file offset 1000.
  HAL_ASSERT_OK(hal_device_queue_read(f->device, f->q0, NULL, &signal1, file, 3,
                                      buffer, at, HAL_WHOLE_BUFFER));
  HAL_ASSERT_OK(hal_device_queue_write(f->device, f->q1, &wait1, &signal2,
                                       buffer, 5, file, 1000,
                                       HAL_WHOLE_BUFFER));
  HAL_ASSERT_OK(cts_wait(s, 2));
  static uint8_t back[2 * kChunk + 99];
  HAL_ASSERT_OK(hal_buffer_read(buffer, 0, back, size));
  for (uint64_t i = 0; i < at; ++i)
    assert_int_equal(back[i], 0);
  assert_memory_equal(back + at, bytes + 3, size - at);
  static uint8_t written[kFileBytes];
  assert_int_equal(pread(fd, written, sizeof(written), 0),
                   (ssize_t)sizeof(written));
  assert_memory_equal(written, bytes, 1000);
  assert_memory_equal(written + 1000, back + 5, size - 5);
  assert_memory_equal(written + 1000 + size - 5, bytes + 1000 + size - 5,
                      kFileBytes - 1000 - (size - 5));
  // Length 0, past the end of the file too: a barrier each, parked behind
  // its wait until the host signals it.
  hal_semaphore_t* gate = cts_create_semaphore(f->device, 0);
  hal_semaphore_list_t wait_gate = one(&gate, &v1);
  HAL_ASSERT_OK(hal_device_queue_read(f->device, f->q0, &wait_gate, &signal3,
                                      file, kFileBytes, buffer, size, 0));
  HAL_ASSERT_OK(hal_device_queue_write(f->device, f->q1, &wait3, &signal4,
                                       buffer, 0, file, 0, 0));
  assert_int_equal(cts_query(s), 2);
  HAL_ASSERT_OK(hal_semaphore_signal(gate, 1));
  HAL_ASSERT_OK(cts_wait(s, 4));
  static uint8_t after[kFileBytes];
  assert_int_equal(pread(fd, after, sizeof(after), 0), (ssize_t)sizeof(after));
  assert_memory_equal(after, written, sizeof(after));
  hal_semaphore_release(gate);
  hal_semaphore_release(s);
  hal_buffer_release(buffer);
  hal_file_release(file);
  close(fd);
}

// Submitted back to front: a copy after the read waits for it, the read
// waits for a fill of its buffer's tail it must not overwrite.
CTS_CASE(File_ReadOrderedWithWork) {
  fixture_t* f = *state;
  static uint8_t bytes[kFileBytes];
  hal_file_t* file =
      temp_hal_file(bytes, sizeof(bytes), 3, HAL_FILE_ACCESS_READ);
  hal_semaphore_t* s = cts_create_semaphore(f->device, 0);
  uint64_t v1 = 1, v2 = 2, v3 = 3;
  hal_semaphore_list_t w1 = one(&s, &v1), w2 = one(&s, &v2);
  hal_semaphore_list_t s1 = one(&s, &v1), s2 = one(&s, &v2), s3 = one(&s, &v3);
  HAL_ASSERT_OK(hal_device_queue_copy(f->device, f->q1, &w2, &s3, f->a, 0, f->b,
                                      0, CTS_FIXTURE_BUFFER_SIZE));
  HAL_ASSERT_OK(hal_device_queue_read(f->device, f->q0, &w1, &s2, file, 100,
                                      f->a, 0, 3000));
  uint8_t pattern = 0xD1;
  HAL_ASSERT_OK(hal_device_queue_fill(f->device, f->q1, NULL, &s1, f->a, 0,
                                      CTS_FIXTURE_BUFFER_SIZE, &pattern, 1));
  HAL_ASSERT_OK(cts_wait(s, 3));
  static uint8_t back[CTS_FIXTURE_BUFFER_SIZE];
  HAL_ASSERT_OK(hal_buffer_read(f->b, 0, back, sizeof(back)));
  assert_memory_equal(back, bytes + 100, 3000);
  for (size_t i = 3000; i < sizeof(back); ++i)
    assert_int_equal(back[i], 0xD1);
  hal_semaphore_release(s);
  hal_file_release(file);
}

// Past the end now: OUT_OF_RANGE at the call. Shrunk before the read runs:
// the signals fail DATA_LOSS naming where the file ends, and work after it
// fails too.
CTS_CASE(File_ShortFileFails) {
  fixture_t* f = *state;
  static uint8_t bytes[kFileBytes];
  int fd = temp_file(bytes, sizeof(bytes), 4);
  hal_file_t* file = NULL;
  HAL_ASSERT_OK(hal_file_from_fd(fd, HAL_FILE_ACCESS_READ, &file));
  hal_semaphore_t* gate = cts_create_semaphore(f->device, 0);
  hal_semaphore_t* s = cts_create_semaphore(f->device, 0);
  uint64_t v1 = 1, v2 = 2;
  hal_semaphore_list_t wait_gate = one(&gate, &v1);
  hal_semaphore_list_t s1 = one(&s, &v1), w1 = one(&s, &v1), s2 = one(&s, &v2);
  HAL_ASSERT_STATUS(HAL_STATUS_OUT_OF_RANGE, "past the end",
                    hal_device_queue_read(f->device, f->q0, NULL, &s1, file,
                                          kFileBytes - 10, f->a, 0, 11));
  assert_int_equal(cts_query(s), 0);
  hal_buffer_t* big = device_buffer(f->device, 3 * kChunk);
  HAL_ASSERT_OK(hal_device_queue_read(f->device, f->q0, &wait_gate, &s1, file,
                                      0, big, 0, 3 * kChunk));
  HAL_ASSERT_OK(
      hal_device_queue_copy(f->device, f->q1, &w1, &s2, big, 0, f->b, 0, 16));
  assert_int_equal(ftruncate(fd, kChunk + 10), 0);
  HAL_ASSERT_OK(hal_semaphore_signal(gate, 1));
  char ends_at[64];
  snprintf(ends_at, sizeof(ends_at), "the file ends at offset %d (it shrank",
           kChunk + 10);
  HAL_ASSERT_STATUS(HAL_STATUS_DATA_LOSS, ends_at, cts_wait(s, 1));
  HAL_ASSERT_STATUS(HAL_STATUS_DATA_LOSS, "the file ends at offset",
                    cts_wait(s, 2));
  cts_expect_bytes(f->b, 0, CTS_FIXTURE_BUFFER_SIZE, 0);
  hal_buffer_release(big);
  hal_semaphore_release(s);
  hal_semaphore_release(gate);
  hal_file_release(file);
  close(fd);
}

// A failed wait fails the signals; nothing is read.
CTS_CASE(File_FailedWaitFailsSignals) {
  fixture_t* f = *state;
  static uint8_t bytes[kFileBytes];
  hal_file_t* file =
      temp_hal_file(bytes, sizeof(bytes), 5, HAL_FILE_ACCESS_READ);
  hal_semaphore_t* gate = cts_create_semaphore(f->device, 0);
  hal_semaphore_t* s = cts_create_semaphore(f->device, 0);
  uint64_t v1 = 1;
  hal_semaphore_list_t wait_gate = one(&gate, &v1);
  hal_semaphore_list_t s1 = one(&s, &v1);
  hal_buffer_t* big = device_buffer(f->device, 2 * kChunk);
  HAL_ASSERT_OK(hal_device_queue_read(f->device, f->q1, &wait_gate, &s1, file,
                                      0, big, 0, 2 * kChunk));
  hal_semaphore_fail(gate, hal_make_status(HAL_STATUS_ABORTED, "no input"));
  HAL_ASSERT_STATUS(HAL_STATUS_ABORTED, "no input", cts_wait(s, 1));
  cts_expect_bytes(big, 0, 2 * kChunk, 0);
  hal_buffer_release(big);
  hal_semaphore_release(s);
  hal_semaphore_release(gate);
  hal_file_release(file);
}

// A wait reached, then failed, while another wait is never reached: S2
// makes that a failed wait, which decides a transfer at once, read and
// write alike; nothing of the file or the buffer moves.
CTS_CASE(File_ReachedWaitThatFailsDecidesTheTransfer) {
  fixture_t* f = *state;
  static uint8_t bytes[kFileBytes];
  for (int write = 0; write < 2; ++write) {
    hal_file_t* file =
        temp_hal_file(bytes, sizeof(bytes), 9, HAL_FILE_ACCESS_READ_WRITE);
    hal_semaphore_t* never = cts_create_semaphore(f->device, 0);
    hal_semaphore_t* broken = cts_create_semaphore(f->device, 0);
    hal_semaphore_t* s = cts_create_semaphore(f->device, 0);
    hal_semaphore_t* waits[2] = {never, broken};
    uint64_t values[2] = {1, 1}, v1 = 1;
    hal_semaphore_list_t wait_list = {2, waits, values};
    hal_semaphore_list_t s1 = one(&s, &v1);
    hal_buffer_t* big = device_buffer(f->device, 2 * kChunk);
    HAL_ASSERT_OK(write
                      ? hal_device_queue_write(f->device, f->q1, &wait_list,
                                               &s1, big, 0, file, 0, 2 * kChunk)
                      : hal_device_queue_read(f->device, f->q1, &wait_list, &s1,
                                              file, 0, big, 0, 2 * kChunk));
    HAL_ASSERT_OK(hal_semaphore_signal(broken, 1));
    HAL_ASSERT_STATUS(HAL_STATUS_DEADLINE_EXCEEDED, NULL,
                      hal_semaphore_wait(s, 1, hal_make_timeout_ns(20000000)));
    hal_semaphore_fail(
        broken, hal_make_status(HAL_STATUS_ABORTED, "failed once reached"));
    HAL_ASSERT_STATUS(HAL_STATUS_ABORTED, "failed once reached",
                      cts_wait(s, 1));
    cts_expect_bytes(big, 0, 2 * kChunk, 0);
    // The file as it was: read back whole.
    hal_semaphore_t* back = cts_create_semaphore(f->device, 0);
    hal_semaphore_list_t back1 = one(&back, &v1);
    HAL_ASSERT_OK(hal_device_queue_read(f->device, f->q0, NULL, &back1, file, 0,
                                        big, 0, 2 * kChunk));
    HAL_ASSERT_OK(cts_wait(back, 1));
    static uint8_t read_back[2 * kChunk];
    HAL_ASSERT_OK(hal_buffer_read(big, 0, read_back, sizeof(read_back)));
    assert_memory_equal(read_back, bytes, sizeof(read_back));
    hal_semaphore_release(back);
    hal_buffer_release(big);
    hal_semaphore_release(never);
    hal_semaphore_release(broken);
    hal_semaphore_release(s);
    hal_file_release(file);
  }
}

// A wait that failed before the call: the transfer is accepted and fails
// its signals with that failure; every step is decided at once, on other
// threads, while the call is still making the chain (50 times: the call
// must not touch the transfer after its steps let it go).
CTS_CASE(File_WaitFailedBeforeTheCall) {
  fixture_t* f = *state;
  static uint8_t bytes[kFileBytes];
  hal_file_t* file =
      temp_hal_file(bytes, sizeof(bytes), 8, HAL_FILE_ACCESS_READ_WRITE);
  hal_semaphore_t* failed = cts_create_semaphore(f->device, 0);
  hal_semaphore_fail(failed, hal_make_status(HAL_STATUS_ABORTED, "upstream"));
  uint64_t v1 = 1;
  hal_semaphore_list_t wait_failed = one(&failed, &v1);
  for (int i = 0; i < 50; ++i) {
    hal_semaphore_t* s = cts_create_semaphore(f->device, 0);
    hal_semaphore_list_t s1 = one(&s, &v1);
    if (i % 2) {
      HAL_ASSERT_OK(hal_device_queue_read(f->device, f->q0, &wait_failed, &s1,
                                          file, 0, f->a, 0, 3 * kChunk / 4));
    } else {
      HAL_ASSERT_OK(hal_device_queue_write(f->device, f->q1, &wait_failed, &s1,
                                           f->a, 0, file, 0, 100));
    }
    HAL_ASSERT_STATUS(HAL_STATUS_ABORTED, "upstream", cts_wait(s, 1));
    hal_semaphore_release(s);
  }
  cts_expect_bytes(f->a, 0, CTS_FIXTURE_BUFFER_SIZE, 0);
  hal_semaphore_release(failed);
  hal_file_release(file);
}

// A transfer into or out of an alloca'd buffer that is refused at the call,
// or whose wait failed and whose signals the caller saw fail, leaves no
// pending use of the buffer behind: a dealloca ordered after the alloca
// frees it (its chunk copies retired before the call returned or the
// signals failed).
CTS_CASE(File_RefusedOrFailedTransferLeavesNoPendingUse) {
  fixture_t* f = *state;
  static uint8_t bytes[kFileBytes];
  hal_file_t* file =
      temp_hal_file(bytes, sizeof(bytes), 9, HAL_FILE_ACCESS_READ_WRITE);
  const hal_buffer_params_t params = {HAL_MEMORY_TYPE_DEVICE_LOCAL,
                                      HAL_BUFFER_USAGE_DEFAULT};
  const uint32_t rounds = cts_iterations(40);
  for (uint32_t i = 0; i < rounds; ++i) {
    bool read = i % 2 == 0;
    bool refused = (i / 2) % 2 == 0;
    hal_semaphore_t* s = cts_create_semaphore(f->device, 0);
    hal_semaphore_t* t = cts_create_semaphore(f->device, 0);
    uint64_t v1 = 1, v2 = 2;
    hal_semaphore_list_t s1 = one(&s, &v1), s2 = one(&s, &v2);
    hal_buffer_t* x = NULL;
    HAL_ASSERT_OK(hal_device_queue_alloca(f->device, f->q0, NULL, &s1, params,
                                          3 * kChunk, &x));
    HAL_ASSERT_OK(cts_wait(s, 1));
    if (refused) {
      hal_semaphore_t* twice[2] = {t, t};
      uint64_t values[2] = {1, 2};
      hal_semaphore_list_t duplicated = {2, twice, values};
      hal_status_t status =
          read ? hal_device_queue_read(f->device, f->q1, NULL, &duplicated,
                                       file, 0, x, 0, 3 * kChunk)
               : hal_device_queue_write(f->device, f->q1, NULL, &duplicated, x,
                                        0, file, 0, 3 * kChunk);
      HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, "twice", status);
    } else {
      hal_semaphore_t* gate = cts_create_semaphore(f->device, 0);
      hal_semaphore_list_t wait_gate = one(&gate, &v1), t1 = one(&t, &v1);
      HAL_ASSERT_OK(read ? hal_device_queue_read(f->device, f->q1, &wait_gate,
                                                 &t1, file, 0, x, 0, 3 * kChunk)
                         : hal_device_queue_write(f->device, f->q1, &wait_gate,
                                                  &t1, x, 0, file, 0,
                                                  3 * kChunk));
      hal_semaphore_fail(gate, hal_make_status(HAL_STATUS_ABORTED, "no input"));
      HAL_ASSERT_STATUS(HAL_STATUS_ABORTED, "no input", cts_wait(t, 1));
      hal_semaphore_release(gate);
    }
    HAL_ASSERT_OK(hal_device_queue_dealloca(f->device, f->q0, &s1, &s2, x));
    HAL_ASSERT_OK(cts_wait(s, 2));
    hal_buffer_release(x);
    hal_semaphore_release(t);
    hal_semaphore_release(s);
  }
  hal_file_release(file);
}

// O_APPEND would put every write at the file's end: a descriptor opened
// with it is refused for writing, and one that got it later fails the
// write at the call.
CTS_CASE(File_AppendDescriptorIsRefusedForWrites) {
  fixture_t* f = *state;
  static uint8_t bytes[kFileBytes];
  int fd = temp_file(bytes, sizeof(bytes), 10);
  int flags = fcntl(fd, F_GETFL);
  assert_int_equal(fcntl(fd, F_SETFL, flags | O_APPEND), 0);
  hal_file_t* file = NULL;
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, "O_APPEND",
                    hal_file_from_fd(fd, HAL_FILE_ACCESS_WRITE, &file));
  HAL_ASSERT_OK(hal_file_from_fd(fd, HAL_FILE_ACCESS_READ, &file));
  hal_file_release(file);
  assert_int_equal(fcntl(fd, F_SETFL, flags), 0);
  HAL_ASSERT_OK(hal_file_from_fd(fd, HAL_FILE_ACCESS_WRITE, &file));
  assert_int_equal(fcntl(fd, F_SETFL, flags | O_APPEND), 0);  // shared flags
  hal_semaphore_t* s = cts_create_semaphore(f->device, 0);
  uint64_t v1 = 1;
  hal_semaphore_list_t s1 = one(&s, &v1);
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, "O_APPEND",
                    hal_device_queue_write(f->device, f->q0, NULL, &s1, f->a, 0,
                                           file, 0, 16));
  assert_int_equal(cts_query(s), 0);
  struct stat st;
  assert_int_equal(fstat(fd, &st), 0);
  assert_int_equal(st.st_size, kFileBytes);  // nothing appended
  hal_semaphore_release(s);
  hal_file_release(file);
  close(fd);
}

// The flag set after the call, before the write ran (it waits on a gate):
// the write fails its signals naming the flag, and nothing lands at the
// file's end.
CTS_CASE(File_AppendSetBeforeTheWriteRunsFailsIt) {
  fixture_t* f = *state;
  static uint8_t bytes[kFileBytes];
  int fd = temp_file(bytes, sizeof(bytes), 11);
  hal_file_t* file = NULL;
  HAL_ASSERT_OK(hal_file_from_fd(fd, HAL_FILE_ACCESS_WRITE, &file));
  hal_semaphore_t* gate = cts_create_semaphore(f->device, 0);
  hal_semaphore_t* s = cts_create_semaphore(f->device, 0);
  uint64_t v1 = 1;
  hal_semaphore_list_t wait_gate = one(&gate, &v1), s1 = one(&s, &v1);
  HAL_ASSERT_OK(hal_device_queue_write(f->device, f->q0, &wait_gate, &s1, f->a,
                                       0, file, 0, 16));
  int flags = fcntl(fd, F_GETFL);
  assert_int_equal(fcntl(fd, F_SETFL, flags | O_APPEND), 0);  // shared flags
  HAL_ASSERT_OK(hal_semaphore_signal(gate, 1));
  HAL_ASSERT_STATUS(HAL_STATUS_FAILED_PRECONDITION, "O_APPEND", cts_wait(s, 1));
  struct stat st;
  assert_int_equal(fstat(fd, &st), 0);
  assert_int_equal(st.st_size, kFileBytes);  // nothing appended
  hal_semaphore_release(s);
  hal_semaphore_release(gate);
  hal_file_release(file);
  close(fd);
}

// Bad input: a clear status, nothing submitted, no semaphore moved.
CTS_CASE(File_BadArgumentsSubmitNothing) {
  fixture_t* f = *state;
  static uint8_t bytes[kFileBytes];
  int fd = temp_file(bytes, sizeof(bytes), 6);
  hal_file_t* file = NULL;
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, "not open",
                    hal_file_from_fd(-1, HAL_FILE_ACCESS_READ, &file));
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, "unknown bits",
                    hal_file_from_fd(fd, 8, &file));
  int pipes[2];
  assert_int_equal(pipe(pipes), 0);
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, "regular file",
                    hal_file_from_fd(pipes[0], HAL_FILE_ACCESS_READ, &file));
  close(pipes[0]);
  close(pipes[1]);
  int read_only = open("/proc/self/exe", O_RDONLY);
  assert_true(read_only >= 0);
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, "not opened for writing",
                    hal_file_from_fd(read_only, HAL_FILE_ACCESS_WRITE, &file));
  close(read_only);
  // A path handle: F_GETFL says O_RDONLY beside O_PATH, and every read of
  // it fails (EBADF).
  int path_only = open("/proc/self/exe", O_PATH);
  assert_true(path_only >= 0);
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, "O_PATH",
                    hal_file_from_fd(path_only, HAL_FILE_ACCESS_READ, &file));
  close(path_only);
  int null_device = open("/dev/null", O_RDWR);
  assert_true(null_device >= 0);
  HAL_ASSERT_STATUS(
      HAL_STATUS_INVALID_ARGUMENT, "regular file",
      hal_file_from_fd(null_device, HAL_FILE_ACCESS_READ_WRITE, &file));
  close(null_device);
  HAL_ASSERT_STATUS(
      HAL_STATUS_INVALID_ARGUMENT, "at NULL",
      hal_file_from_memory(NULL, 10, HAL_FILE_ACCESS_READ, &file));
  assert_null(file);
  // A file of no bytes: reading one byte of it is out of range.
  HAL_ASSERT_OK(hal_file_from_memory(bytes, 0, HAL_FILE_ACCESS_READ, &file));
  HAL_ASSERT_STATUS(
      HAL_STATUS_OUT_OF_RANGE, "past the end of the 0-byte file",
      hal_device_queue_read(f->device, 0, NULL, NULL, file, 0, f->a, 0, 1));
  hal_file_release(file);
  file = NULL;

  HAL_ASSERT_OK(hal_file_from_fd(fd, HAL_FILE_ACCESS_READ, &file));
  hal_semaphore_t* s = cts_create_semaphore(f->device, 0);
  uint64_t v1 = 1;
  hal_semaphore_list_t s1 = one(&s, &v1);
  HAL_ASSERT_STATUS(
      HAL_STATUS_INVALID_ARGUMENT, "not opened for writing",
      hal_device_queue_write(f->device, 0, NULL, &s1, f->a, 0, file, 0, 16));
  HAL_ASSERT_STATUS(
      HAL_STATUS_OUT_OF_RANGE, "",
      hal_device_queue_read(f->device, 0, NULL, &s1, file, 0, f->a, 0,
                            CTS_FIXTURE_BUFFER_SIZE + 1));
  // A write may grow the file, but not past the largest offset.
  int writable = temp_file(bytes, 16, 7);
  hal_file_t* out = NULL;
  HAL_ASSERT_OK(hal_file_from_fd(writable, HAL_FILE_ACCESS_WRITE, &out));
  HAL_ASSERT_STATUS(HAL_STATUS_OUT_OF_RANGE, "largest file offset",
                    hal_device_queue_write(f->device, 0, NULL, &s1, f->a, 0,
                                           out, UINT64_MAX - 8, 16));
  HAL_ASSERT_STATUS(HAL_STATUS_OUT_OF_RANGE, "largest file offset",
                    hal_device_queue_write(f->device, 0, NULL, &s1, f->a, 0,
                                           out, (uint64_t)INT64_MAX - 8, 16));
  hal_file_release(out);
  close(writable);
  HAL_ASSERT_STATUS(
      HAL_STATUS_INVALID_ARGUMENT, "file is NULL",
      hal_device_queue_read(f->device, 0, NULL, &s1, NULL, 0, f->a, 0, 16));
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, "not a file",
                    hal_device_queue_read(f->device, 0, NULL, &s1,
                                          (hal_file_t*)f->b, 0, f->a, 0, 16));
  HAL_ASSERT_STATUS(
      HAL_STATUS_OUT_OF_RANGE, "out of range",
      hal_device_queue_read(f->device, 99, NULL, &s1, file, 0, f->a, 0, 16));
  // Refused after its steps were made (the last one names the semaphore
  // twice): none of them runs, nothing is written.
  hal_semaphore_t* twice[2] = {s, s};
  uint64_t twice_values[2] = {1, 2};
  hal_semaphore_list_t duplicated = {2, twice, twice_values};
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, "twice",
                    hal_device_queue_read(f->device, 0, NULL, &duplicated, file,
                                          0, f->a, 0, 3 * kChunk / 4));
  assert_int_equal(cts_query(s), 0);
  cts_expect_bytes(f->a, 0, CTS_FIXTURE_BUFFER_SIZE, 0);
  hal_semaphore_release(s);
  hal_file_release(file);
  close(fd);
}

// A host call that reads a file into a buffer and writes it back out,
// waiting for each transfer (bounded: a hang is a failure, not a stuck
// test). File transfers are queue operations like a copy: a host call of
// the same device may wait for them.
typedef struct transfer_call_t {
  fixture_t* f;
  hal_file_t* source;
  hal_file_t* target;
  hal_buffer_t* buffer;  // kFileBytes
  hal_status_t read;
  hal_status_t write;
} transfer_call_t;

static hal_status_t transfer_and_wait(void* user_data, hal_status_t status) {
  transfer_call_t* call = user_data;
  if (status != HAL_OK)
    return HAL_OK;
  fixture_t* f = call->f;
  hal_semaphore_t* s = NULL;
  call->read = hal_device_create_semaphore(f->device, 0, &s);
  if (call->read != HAL_OK)
    return HAL_OK;
  uint64_t v1 = 1, v2 = 2;
  hal_semaphore_list_t s1 = one(&s, &v1), w1 = one(&s, &v1);
  hal_semaphore_list_t s2 = one(&s, &v2);
  const hal_timeout_t bound = hal_make_timeout_ns(INT64_C(20000000000));
  call->read = hal_device_queue_read(f->device, f->q1, NULL, &s1, call->source,
                                     0, call->buffer, 0, kFileBytes);
  if (call->read == HAL_OK)
    call->read = hal_semaphore_wait(s, 1, bound);
  if (call->read == HAL_OK) {
    call->write =
        hal_device_queue_write(f->device, f->q0, &w1, &s2, call->buffer, 0,
                               call->target, 0, kFileBytes);
    if (call->write == HAL_OK)
      call->write = hal_semaphore_wait(s, 2, bound);
  }
  hal_semaphore_release(s);
  return HAL_OK;
}

CTS_CASE(File_TransfersWaitedForInsideAHostCall) {
  fixture_t* f = *state;
  static uint8_t bytes[kFileBytes];
  static uint8_t copy[kFileBytes];
  random_bytes(bytes, sizeof(bytes), 8);
  memset(copy, 0, sizeof(copy));
  transfer_call_t call = {.f = f,
                          .buffer = device_buffer(f->device, kFileBytes)};
  HAL_ASSERT_OK(hal_file_from_memory(bytes, sizeof(bytes), HAL_FILE_ACCESS_READ,
                                     &call.source));
  HAL_ASSERT_OK(hal_file_from_memory(copy, sizeof(copy), HAL_FILE_ACCESS_WRITE,
                                     &call.target));
  hal_semaphore_t* done = cts_create_semaphore(f->device, 0);
  uint64_t v1 = 1;
  hal_semaphore_list_t signal = one(&done, &v1);
  HAL_ASSERT_OK(hal_device_queue_host_call(f->device, f->q0, NULL, &signal,
                                           transfer_and_wait, &call));
  HAL_ASSERT_OK(cts_wait(done, 1));
  HAL_ASSERT_OK(call.read);
  HAL_ASSERT_OK(call.write);
  assert_memory_equal(copy, bytes, sizeof(bytes));
  hal_semaphore_release(done);
  hal_buffer_release(call.buffer);
  hal_file_release(call.source);
  hal_file_release(call.target);
}

// A host call that blocks until the caller saw a file read complete: the
// read does not wait for the device's host calls to return.
static hal_status_t wait_for_gate(void* user_data, hal_status_t status) {
  if (status != HAL_OK)
    return HAL_OK;
  return hal_semaphore_wait((hal_semaphore_t*)user_data, 1,
                            hal_make_timeout_ns(INT64_C(40000000000)));
}

CTS_CASE(File_ReadRunsWhileAHostCallBlocks) {
  fixture_t* f = *state;
  static uint8_t bytes[kFileBytes];
  hal_file_t* file =
      temp_hal_file(bytes, sizeof(bytes), 9, HAL_FILE_ACCESS_READ);
  hal_buffer_t* buffer = device_buffer(f->device, kFileBytes);
  hal_semaphore_t* gate = cts_create_semaphore(NULL, 0);
  hal_semaphore_t* called = cts_create_semaphore(f->device, 0);
  hal_semaphore_t* s = cts_create_semaphore(f->device, 0);
  uint64_t v1 = 1;
  hal_semaphore_list_t called1 = one(&called, &v1), s1 = one(&s, &v1);
  HAL_ASSERT_OK(hal_device_queue_host_call(f->device, f->q0, NULL, &called1,
                                           wait_for_gate, gate));
  HAL_ASSERT_OK(hal_device_queue_read(f->device, f->q1, NULL, &s1, file, 0,
                                      buffer, 0, kFileBytes));
  // The host call returns only after this wait: the read must not need it.
  hal_status_t read = cts_wait_list(NULL, HAL_WAIT_MODE_ALL, 1, &s, &v1,
                                    hal_make_timeout_ns(INT64_C(20000000000)));
  HAL_ASSERT_OK(hal_semaphore_signal(gate, 1));
  HAL_ASSERT_OK(read);
  HAL_ASSERT_OK(cts_wait(called, 1));
  static uint8_t back[kFileBytes];
  HAL_ASSERT_OK(hal_buffer_read(buffer, 0, back, sizeof(back)));
  assert_memory_equal(back, bytes, sizeof(bytes));
  hal_buffer_release(buffer);
  hal_semaphore_release(called);
  hal_semaphore_release(s);
  hal_semaphore_release(gate);
  hal_file_release(file);
}

// Released with a read still waiting: its signals fail CANCELLED, and the
// file and buffer are released after (no hang, no leak).
CTS_CASE(Q4_FileReadWaitingAtReleaseIsCancelled) {
  (void)state;
  static uint8_t bytes[kFileBytes];
  hal_file_t* file =
      temp_hal_file(bytes, sizeof(bytes), 7, HAL_FILE_ACCESS_READ);
  hal_device_t* device = cts_create_device(0);
  hal_buffer_t* buffer = device_buffer(device, kFileBytes);
  hal_semaphore_t* never = cts_create_semaphore(device, 0);
  hal_semaphore_t* s = cts_create_semaphore(device, 0);
  uint64_t v1 = 1;
  hal_semaphore_list_t wait_never = one(&never, &v1);
  hal_semaphore_list_t s1 = one(&s, &v1);
  HAL_ASSERT_OK(hal_device_queue_read(device, 0, &wait_never, &s1, file, 0,
                                      buffer, 0, kFileBytes));
  hal_device_release(device);
  HAL_ASSERT_STATUS(HAL_STATUS_CANCELLED, "", cts_wait(s, 1));
  hal_buffer_release(buffer);
  hal_semaphore_release(s);
  hal_semaphore_release(never);
  hal_file_release(file);
}

// S2 against Q4 for a transfer: its first step waits on the caller's
// semaphore, its later steps on the transfer's own. Released right after
// the caller's wait failed (the failing thread held in its batch before the
// transfer's callback), the steps are cancelled in no particular order, but
// the signals must fail with the wait's failure, not the shutdown's
// CANCELLED: also when the caller failed it with a CANCELLED of its own.
CTS_CASE(S2_FileTransferWithAFailedWaitIsNotCancelledAtRelease) {
  (void)state;
  static uint8_t bytes[kFileBytes];
  for (int round = 0; round < 4; ++round) {
    bool write = round % 2;
    hal_file_t* file =
        temp_hal_file(bytes, sizeof(bytes), 8,
                      write ? HAL_FILE_ACCESS_WRITE : HAL_FILE_ACCESS_READ);
    cts_failed_wait_t scene;
    // Held up to 300 ms: the release waits for the queues' parked copies.
    cts_failed_wait_begin(
        &scene, 1, 300, round < 2 ? HAL_STATUS_ABORTED : HAL_STATUS_CANCELLED);
    hal_buffer_t* buffer = device_buffer(scene.device, kFileBytes);
    HAL_ASSERT_OK(write ? hal_device_queue_write(scene.device, 0, &scene.waits,
                                                 &scene.signals, buffer, 0,
                                                 file, 0, kFileBytes)
                        : hal_device_queue_read(scene.device, 0, &scene.waits,
                                                &scene.signals, file, 0, buffer,
                                                0, kFileBytes));
    cts_failed_wait_release(&scene);
    cts_failed_wait_end(&scene);
    hal_buffer_release(buffer);
    hal_file_release(file);
  }
}

// Released while a host call waits for a transfer of the device that waits
// itself (on a semaphore nobody signals): the transfer is cancelled, so the
// host call's wait returns and the release does not wait for ever.
typedef struct pending_transfer_call_t {
  hal_device_t* device;
  hal_file_t* file;
  hal_buffer_t* buffer;
  hal_semaphore_t* never;
  hal_semaphore_t* entered;  // host: the call is about to wait
  hal_status_t wait;         // what the call's wait returned
} pending_transfer_call_t;

static hal_status_t wait_for_pending_transfer(void* user_data,
                                              hal_status_t status) {
  pending_transfer_call_t* call = user_data;
  if (status != HAL_OK)
    return HAL_OK;
  hal_semaphore_t* s = NULL;
  call->wait = hal_device_create_semaphore(call->device, 0, &s);
  if (call->wait != HAL_OK)
    return HAL_OK;
  uint64_t v1 = 1;
  hal_semaphore_list_t wait_never = one(&call->never, &v1), s1 = one(&s, &v1);
  call->wait = hal_device_queue_read(call->device, 0, &wait_never, &s1,
                                     call->file, 0, call->buffer, 0, 100);
  if (call->wait == HAL_OK) {
    hal_status_ignore(hal_semaphore_signal(call->entered, 1));
    call->wait =
        hal_semaphore_wait(s, 1, hal_make_timeout_ns(INT64_C(20000000000)));
  }
  hal_semaphore_release(s);
  return HAL_OK;
}

CTS_CASE(Q4_ReleaseWhileAHostCallWaitsForAPendingTransfer) {
  (void)state;
  static uint8_t bytes[kFileBytes];
  pending_transfer_call_t call = {
      .device = cts_create_device(0),
      .file = temp_hal_file(bytes, sizeof(bytes), 10, HAL_FILE_ACCESS_READ)};
  call.buffer = device_buffer(call.device, 100);
  call.never = cts_create_semaphore(NULL, 0);
  call.entered = cts_create_semaphore(NULL, 0);
  HAL_ASSERT_OK(hal_device_queue_host_call(call.device, 0, NULL, NULL,
                                           wait_for_pending_transfer, &call));
  HAL_ASSERT_OK(cts_wait(call.entered, 1));
  hal_device_release(call.device);  // waits for the running host call
  HAL_ASSERT_STATUS(HAL_STATUS_CANCELLED, "", call.wait);
  hal_buffer_release(call.buffer);
  hal_semaphore_release(call.entered);
  hal_semaphore_release(call.never);
  hal_file_release(call.file);
}

// The test list: CASE binds this program's fixture.
#define CASE(name) CTS_ON_FIXTURE(name)

int main(void) {
  const struct CMUnitTest tests[] = {
      CASE(File_RoundTripFromDescriptor),
      CASE(File_RoundTripFromMemory),
      CASE(File_WholeBufferAndZeroLengths),
      CASE(File_ReadOrderedWithWork),
      CASE(File_ShortFileFails),
      CASE(File_FailedWaitFailsSignals),
      CASE(File_ReachedWaitThatFailsDecidesTheTransfer),
      CASE(File_WaitFailedBeforeTheCall),
      CASE(File_BadArgumentsSubmitNothing),
      CASE(File_RefusedOrFailedTransferLeavesNoPendingUse),
      CASE(File_AppendDescriptorIsRefusedForWrites),
      CASE(File_AppendSetBeforeTheWriteRunsFailsIt),
      CASE(File_TransfersWaitedForInsideAHostCall),
      CASE(File_ReadRunsWhileAHostCallBlocks),
      cmocka_unit_test(Q4_FileReadWaitingAtReleaseIsCancelled),
      cmocka_unit_test(S2_FileTransferWithAFailedWaitIsNotCancelledAtRelease),
      cmocka_unit_test(Q4_ReleaseWhileAHostCallWaitsForAPendingTransfer),
  };
  return cts_main("queue_file", tests, HAL_ARRAYSIZE(tests));
}
