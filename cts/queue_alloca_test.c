// Copyright 2026 The HAL Authors.
//
// CTS suite "queue_alloca": queue-ordered allocation on the driver's device
// (hal_device_queue_alloca / hal_device_queue_dealloca).
//
// The memory of an alloca'd buffer exists from its alloca's signals to its
// dealloca's waits: work ordered in between sees what earlier work wrote,
// across queues; work outside fails at issue; a loop of pairs reuses the
// pool's memory (the virtual GPU's device memory is 64 MiB in this suite's
// runs); failures reach the signals and leak nothing; the device's release
// cancels what still waits (Q4). The suite also runs with the vendor's
// stream-ordered allocator hidden (the core's fallback). On the same small
// device: a released buffer's memory is back once its work is signaled,
// for an allocation and for an alloca ordered after that work.

#include "cts.h"
#include "kernel_images.h"

typedef cts_fixture_t fixture_t;

static const hal_buffer_params_t kDeviceLocal = {
    .memory_type = HAL_MEMORY_TYPE_DEVICE_LOCAL,
    .usage = HAL_BUFFER_USAGE_DEFAULT,
};

static hal_semaphore_list_t one(hal_semaphore_t** semaphore, uint64_t* value) {
  hal_semaphore_list_t list = {*semaphore ? 1 : 0, semaphore, value};
  return list;
}

// An alloca on |queue| waiting (wait, wait_value), signaling (signal,
// signal_value).
static hal_status_t alloca_on(hal_device_t* device, uint32_t queue,
                              hal_semaphore_t* wait, uint64_t wait_value,
                              hal_semaphore_t* signal, uint64_t signal_value,
                              uint64_t size, hal_buffer_t** out_buffer) {
  hal_semaphore_list_t waits = one(&wait, &wait_value);
  hal_semaphore_list_t signals = one(&signal, &signal_value);
  return hal_device_queue_alloca(device, queue, &waits, &signals, kDeviceLocal,
                                 size, out_buffer);
}

static hal_status_t dealloca_on(hal_device_t* device, uint32_t queue,
                                hal_semaphore_t* wait, uint64_t wait_value,
                                hal_semaphore_t* signal, uint64_t signal_value,
                                hal_buffer_t* buffer) {
  hal_semaphore_list_t waits = one(&wait, &wait_value);
  hal_semaphore_list_t signals = one(&signal, &signal_value);
  return hal_device_queue_dealloca(device, queue, &waits, &signals, buffer);
}

static hal_status_t fill_on(hal_device_t* device, uint32_t queue,
                            hal_semaphore_t* wait, uint64_t wait_value,
                            hal_semaphore_t* signal, uint64_t signal_value,
                            hal_buffer_t* buffer, uint64_t length,
                            uint8_t pattern) {
  hal_semaphore_list_t waits = one(&wait, &wait_value);
  hal_semaphore_list_t signals = one(&signal, &signal_value);
  return hal_device_queue_fill(device, queue, &waits, &signals, buffer, 0,
                               length, &pattern, 1);
}

static hal_status_t copy_on(hal_device_t* device, uint32_t queue,
                            hal_semaphore_t* wait, uint64_t wait_value,
                            hal_semaphore_t* signal, uint64_t signal_value,
                            hal_buffer_t* source, hal_buffer_t* target,
                            uint64_t length) {
  hal_semaphore_list_t waits = one(&wait, &wait_value);
  hal_semaphore_list_t signals = one(&signal, &signal_value);
  return hal_device_queue_copy(device, queue, &waits, &signals, source, 0,
                               target, 0, length);
}

// Work before and after, submitted back to front (wait-before-signal all
// the way, S4): a fill of a, the alloca, a copy a -> x, a reusable command
// buffer filling half of x submitted twice (graph drivers build its graph
// at the first issue), a copy x -> b, the dealloca. b holds what a got
// and the fill wrote over it.
CTS_CASE(Alloca_OrderedWithWorkBeforeAndAfter) {
  fixture_t* f = *state;
  hal_semaphore_t* s = cts_create_semaphore(f->device, 0);
  enum { kSize = CTS_FIXTURE_BUFFER_SIZE, kHalf = kSize / 2 };
  hal_buffer_t* x = NULL;
  HAL_ASSERT_OK(alloca_on(f->device, f->q0, s, 1, s, 2, kSize, &x));
  hal_command_buffer_t* half =
      cts_begin_command_buffer(f->device, HAL_COMMAND_BUFFER_MODE_REUSABLE);
  uint8_t pattern = 0x77;
  HAL_ASSERT_OK(hal_command_buffer_fill_buffer(half, x, 0, kHalf, &pattern, 1));
  HAL_ASSERT_OK(hal_command_buffer_end(half));
  HAL_ASSERT_OK(dealloca_on(f->device, f->q0, s, 6, s, 7, x));
  HAL_ASSERT_OK(copy_on(f->device, f->q1, s, 5, s, 6, x, f->b, kSize));
  HAL_ASSERT_OK(cts_submit(f->device, f->q1, s, 4, half, s, 5));
  HAL_ASSERT_OK(cts_submit(f->device, f->q0, s, 3, half, s, 4));
  HAL_ASSERT_OK(copy_on(f->device, f->q1, s, 2, s, 3, f->a, x, kSize));
  HAL_ASSERT_OK(fill_on(f->device, f->q0, NULL, 0, s, 1, f->a, kSize, 0x3C));
  HAL_ASSERT_OK(cts_wait(s, 7));
  cts_expect_bytes(f->b, 0, kHalf, 0x77);
  cts_expect_bytes(f->b, kHalf, kSize - kHalf, 0x3C);
  hal_command_buffer_release(half);
  hal_buffer_release(x);
  hal_semaphore_release(s);
}

// A dispatch reads and writes alloca'd memory after the alloca's signal and
// sees what an earlier op wrote: a fill of words, add_u32 over them (a
// reusable command buffer, so graph drivers build its graph at the first
// issue), a copy out, the dealloca.
CTS_CASE(Alloca_DispatchSeesWhatAnEarlierOpWrote) {
  fixture_t* f = *state;
  enum { kWords = 500 };
  hal_executable_t* executable = NULL;
  HAL_ASSERT_OK(hal_kernel_create_executable(f->device, &executable));
  hal_semaphore_t* s = cts_create_semaphore(f->device, 0);
  hal_buffer_t* x = NULL;
  HAL_ASSERT_OK(alloca_on(f->device, f->q0, NULL, 0, s, 1, kWords * 4, &x));
  uint64_t v1 = 1, v2 = 2;
  hal_semaphore_list_t w1 = one(&s, &v1), s2 = one(&s, &v2);
  uint32_t word = 40;
  HAL_ASSERT_OK(hal_device_queue_fill(f->device, f->q1, &w1, &s2, x, 0,
                                      kWords * 4, &word, 4));
  hal_command_buffer_t* add =
      cts_begin_command_buffer(f->device, HAL_COMMAND_BUFFER_MODE_REUSABLE);
  uint32_t count[3] = {(kWords + 63) / 64, 1, 1};
  uint32_t size[3] = {64, 1, 1};
  uint32_t constants[2] = {2, kWords};
  hal_dispatch_binding_t binding = {x, 0, HAL_WHOLE_BUFFER};
  HAL_ASSERT_OK(hal_command_buffer_dispatch(add, executable, HAL_KERNEL_ADD_U32,
                                            count, size, constants, 2, &binding,
                                            1));
  HAL_ASSERT_OK(hal_command_buffer_end(add));
  HAL_ASSERT_OK(cts_submit(f->device, f->q0, s, 2, add, s, 3));
  hal_buffer_t* out = cts_zeroed_buffer(f->device, kWords * 4);
  HAL_ASSERT_OK(copy_on(f->device, f->q1, s, 3, s, 4, x, out, kWords * 4));
  HAL_ASSERT_OK(dealloca_on(f->device, f->q0, s, 4, NULL, 0, x));
  HAL_ASSERT_OK(cts_wait(s, 4));
  uint32_t words[kWords];
  HAL_ASSERT_OK(hal_buffer_read(out, 0, words, sizeof(words)));
  for (int i = 0; i < kWords; ++i)
    assert_int_equal(words[i], 42);
  hal_command_buffer_release(add);
  hal_buffer_release(out);
  hal_buffer_release(x);
  hal_semaphore_release(s);
  hal_executable_release(executable);
}

// Alloca on one queue, used on the other, deallocated on the first.
CTS_CASE(Alloca_AcrossQueues) {
  fixture_t* f = *state;
  hal_semaphore_t* s = cts_create_semaphore(f->device, 0);
  hal_buffer_t* x = NULL;
  HAL_ASSERT_OK(alloca_on(f->device, f->q0, NULL, 0, s, 1, 1000, &x));
  HAL_ASSERT_OK(fill_on(f->device, f->q1, s, 1, s, 2, x, 1000, 0xA5));
  HAL_ASSERT_OK(copy_on(f->device, f->q1, s, 2, s, 3, x, f->b, 1000));
  HAL_ASSERT_OK(dealloca_on(f->device, f->q0, s, 3, s, 4, x));
  HAL_ASSERT_OK(cts_wait(s, 4));
  cts_expect_bytes(f->b, 0, 1000, 0xA5);
  cts_expect_bytes(f->b, 1000, CTS_FIXTURE_BUFFER_SIZE - 1000, 0);
  hal_buffer_release(x);
  hal_semaphore_release(s);
}

// A dealloca on the other queue that waits for nothing is not ordered after
// its alloca: the HAL orders the free after the allocation on the device
// itself (the virtual GPU's strict mode reports a free that ran before its
// allocation). Each round puts a fill ahead of the alloca on its queue, so
// the allocation runs late on the device while the host has issued it; the
// dealloca either frees after it (OK) or, issued before the alloca was,
// fails FAILED_PRECONDITION and leaves the memory to the buffer.
CTS_CASE(Alloca_UnorderedDeallocaOnAnotherQueueFreesAfterTheAllocation) {
  fixture_t* f = *state;
  const uint32_t rounds = cts_iterations(200);
  uint32_t freed = 0;
  for (uint32_t i = 0; i < rounds; ++i) {
    hal_semaphore_t* allocated = cts_create_semaphore(f->device, 0);
    hal_semaphore_t* deallocated = cts_create_semaphore(f->device, 0);
    HAL_ASSERT_OK(fill_on(f->device, f->q0, NULL, 0, NULL, 0, f->a,
                          CTS_FIXTURE_BUFFER_SIZE, (uint8_t)i));
    hal_buffer_t* x = NULL;
    HAL_ASSERT_OK(alloca_on(f->device, f->q0, NULL, 0, allocated, 1, 4096, &x));
    HAL_ASSERT_OK(dealloca_on(f->device, f->q1, NULL, 0, deallocated, 1, x));
    hal_status_t status = cts_wait(deallocated, 1);
    if (status == HAL_OK) {
      ++freed;
    } else {
      HAL_ASSERT_STATUS(HAL_STATUS_FAILED_PRECONDITION,
                        "its alloca was not reached yet", status);
    }
    HAL_ASSERT_OK(cts_wait(allocated, 1));
    hal_buffer_release(x);
    hal_semaphore_release(deallocated);
    hal_semaphore_release(allocated);
  }
  print_message("[          ] %u of %u deallocas freed after the allocation\n",
                freed, rounds);
}

// The same for a use: a fill on the other queue that waits for nothing
// runs after the allocation on the device (the virtual GPU's strict mode
// reports work on memory not allocated yet) or, issued before the alloca
// was, fails FAILED_PRECONDITION naming the buffer.
CTS_CASE(Alloca_UnorderedUseOnAnotherQueueRunsAfterTheAllocation) {
  fixture_t* f = *state;
  const uint32_t rounds = cts_iterations(200);
  uint32_t ran = 0;
  for (uint32_t i = 0; i < rounds; ++i) {
    hal_semaphore_t* s = cts_create_semaphore(f->device, 0);
    hal_semaphore_t* used = cts_create_semaphore(f->device, 0);
    HAL_ASSERT_OK(fill_on(f->device, f->q0, NULL, 0, NULL, 0, f->a,
                          CTS_FIXTURE_BUFFER_SIZE, (uint8_t)i));
    hal_buffer_t* x = NULL;
    HAL_ASSERT_OK(alloca_on(f->device, f->q0, NULL, 0, s, 1, 4096, &x));
    HAL_ASSERT_OK(fill_on(f->device, f->q1, NULL, 0, used, 1, x, 4096, 0x5A));
    hal_status_t status = cts_wait(used, 1);
    if (status == HAL_OK) {
      ++ran;
    } else {
      HAL_ASSERT_STATUS(HAL_STATUS_FAILED_PRECONDITION,
                        "its alloca was not reached yet", status);
    }
    HAL_ASSERT_OK(dealloca_on(f->device, f->q0, s, 1, s, 2, x));
    HAL_ASSERT_OK(cts_wait(s, 2));
    hal_buffer_release(x);
    hal_semaphore_release(used);
    hal_semaphore_release(s);
  }
  print_message("[          ] %u of %u fills ran after the allocation\n", ran,
                rounds);
}

// 10 000 pairs of 128 KiB (HAL_STRESS_ITERATIONS scales them), each alloca
// waiting for the previous dealloca, submitted 1000 pairs ahead of the
// device: the pool reuses one block. Without reuse the 64 MiB of the
// virtual GPU's device would run out after 512 and the chain would fail.
CTS_CASE(Alloca_ReuseLoopStaysWithinDeviceMemory) {
  fixture_t* f = *state;
  hal_semaphore_t* s = cts_create_semaphore(f->device, 0);
  const uint32_t pairs = cts_iterations(10000);
  const uint64_t size = 128u << 10;
  uint64_t value = 0;
  for (uint32_t i = 0; i < pairs; ++i) {
    hal_buffer_t* x = NULL;
    HAL_ASSERT_OK(
        alloca_on(f->device, f->q0, s, value, s, value + 1, size, &x));
    HAL_ASSERT_OK(fill_on(f->device, f->q0, s, value + 1, s, value + 2, x, size,
                          (uint8_t)i));
    HAL_ASSERT_OK(dealloca_on(f->device, f->q0, s, value + 2, s, value + 3, x));
    hal_buffer_release(x);  // the submissions keep it while they need it
    value += 3;
    // A bounded run-ahead keeps each wait short on a slow (sanitized)
    // build; 1000 pairs in flight are far more than the device could hold
    // without reuse.
    if (i % 1000 == 999)
      HAL_ASSERT_OK(cts_wait(s, value));
  }
  HAL_ASSERT_OK(cts_wait(s, value));
  hal_semaphore_release(s);
}

// 60 % of the fixture's device, which has at most 4 GiB; a larger one
// skips the case, since allocating that much |how_often| would be slow.
static uint64_t sixty_percent_of_a_small_device(fixture_t* f,
                                                const char* how_often) {
  const hal_device_info_t* info = hal_device_info(f->device);
  if (info->total_memory > (4ull << 30)) {
    print_message(
        "[  SKIPPED ] needs a device of at most 4 GiB, to allocate 60 %% "
        "of it %s quickly (this one has %" PRIu64
        " MiB); the virtual GPU's runs of this suite have 64 MiB\n",
        how_often, info->total_memory >> 20);
    skip();
  }
  return info->total_memory / 10 * 6;
}

// A buffer of 60 % of the device, used by queue work (a fill of its first
// 4 KiB), released by its caller at once and reallocated as soon as the
// work's signal is seen, 60 times (work ready at submit and work parked
// first, on both queues): the memory the released buffer held must be back
// for the next allocation. Its destroy runs on libhal's release thread a
// moment after the signal (never on a queue thread), and an allocation
// that runs out of memory meanwhile waits for it instead of failing.
CTS_CASE(Memory_ReleasedBufferIsReusableOnceItsWorkIsSignaled) {
  fixture_t* f = *state;
  const uint64_t size = sixty_percent_of_a_small_device(f, "60 times");
  hal_semaphore_t* gate = cts_create_semaphore(NULL, 0);
  hal_semaphore_t* s = cts_create_semaphore(f->device, 0);
  const uint32_t rounds = cts_iterations(60);
  for (uint32_t i = 1; i <= rounds; ++i) {
    hal_buffer_t* x = NULL;
    HAL_ASSERT_OK(
        hal_device_allocate_buffer(f->device, kDeviceLocal, size, &x));
    bool parked = i % 2 == 0;
    HAL_ASSERT_OK(fill_on(f->device, i % 4 < 2 ? f->q0 : f->q1,
                          parked ? gate : NULL, i, s, i, x, 4096, (uint8_t)i));
    hal_buffer_release(x);  // the fill keeps it while it needs it
    HAL_ASSERT_OK(hal_semaphore_signal(gate, i));
    HAL_ASSERT_OK(cts_wait(s, i));
  }
  hal_semaphore_release(s);
  hal_semaphore_release(gate);
}

// The same for an alloca: a buffer of 60 % of the device, used by a fill
// and released at once, then an alloca of as much on the other queue,
// ordered after the fill's signal. The alloca takes its memory on the host
// as it issues, which may be before the device finished the fill (a wait
// on another queue's work is a device-side wait), and the released
// buffer's destroy comes a moment after the fill's signal: it must get the
// memory all the same.
CTS_CASE(Memory_AllocaOrderedAfterAReleasedBuffersWorkGetsItsMemory) {
  fixture_t* f = *state;
  const uint64_t size = sixty_percent_of_a_small_device(f, "twice");
  hal_semaphore_t* s = cts_create_semaphore(f->device, 0);
  hal_buffer_t* x = NULL;
  HAL_ASSERT_OK(hal_device_allocate_buffer(f->device, kDeviceLocal, size, &x));
  HAL_ASSERT_OK(fill_on(f->device, f->q0, NULL, 0, s, 1, x, 4096, 0x11));
  hal_buffer_release(x);  // the fill keeps it while it needs it
  hal_buffer_t* y = NULL;
  HAL_ASSERT_OK(alloca_on(f->device, f->q1, s, 1, s, 2, size, &y));
  HAL_ASSERT_OK(fill_on(f->device, f->q1, s, 2, s, 3, y, 4096, 0x22));
  HAL_ASSERT_OK(dealloca_on(f->device, f->q1, s, 3, s, 4, y));
  HAL_ASSERT_OK(cts_wait(s, 4));
  hal_buffer_release(y);
  hal_semaphore_release(s);
}

// An alloca ordered after a dealloca of another queue: 60 % of the device
// alloca'd, then given back by a dealloca queued behind 16 fills of
// another buffer (its wait is reached, so it issues at once and its free
// runs once the fills are done), and an alloca of as much on the other
// queue ordered after the dealloca's signal, submitted a moment later.
// That alloca issues, device-side wait and all, before the free ran, and
// the vendor's pool reuses a free of another stream only once it ran: the
// alloca must wait for its waits and try again rather than fail
// RESOURCE_EXHAUSTED. Both pairings of queues (one queue: the pool reuses
// a free of its own stream at once).
CTS_CASE(Memory_AllocaOrderedAfterADeallocaGetsItsMemory) {
  fixture_t* f = *state;
  const uint64_t size = sixty_percent_of_a_small_device(f, "8 times");
  const uint64_t busy_size = size / 2;
  hal_buffer_t* busy = NULL;
  HAL_ASSERT_OK(
      hal_device_allocate_buffer(f->device, kDeviceLocal, busy_size, &busy));
  // One reusable command buffer, kept here: nothing the device finishes in
  // the round is destroyed on libhal's release thread, whose destroys send
  // a failed alloca to its second try on their own.
  hal_command_buffer_t* fills =
      cts_begin_command_buffer(f->device, HAL_COMMAND_BUFFER_MODE_REUSABLE);
  for (int k = 0; k < 16; ++k) {
    uint8_t pattern = (uint8_t)k;
    HAL_ASSERT_OK(
        hal_command_buffer_fill_buffer(fills, busy, 0, busy_size, &pattern, 1));
  }
  HAL_ASSERT_OK(hal_command_buffer_end(fills));
  hal_semaphore_t* s = cts_create_semaphore(f->device, 0);
  const uint32_t rounds = cts_iterations(8);
  for (uint32_t i = 0; i < rounds; ++i) {
    uint32_t dealloca_queue = f->q0;
    uint32_t alloca_queue = (i & 1) ? f->q0 : f->q1;
    uint64_t v = 4 * (uint64_t)i;
    hal_buffer_t* x = NULL;
    HAL_ASSERT_OK(alloca_on(f->device, f->q0, NULL, 0, s, v + 1, size, &x));
    HAL_ASSERT_OK(cts_wait(s, v + 1));
    HAL_ASSERT_OK(
        cts_submit(f->device, dealloca_queue, NULL, 0, fills, NULL, 0));
    HAL_ASSERT_OK(
        dealloca_on(f->device, dealloca_queue, s, v + 1, s, v + 2, x));
    // Time for the queue to issue the dealloca; the fills outlast it.
    struct timespec moment = {0, 2 * 1000 * 1000};
    nanosleep(&moment, NULL);
    hal_buffer_t* y = NULL;
    HAL_ASSERT_OK(
        alloca_on(f->device, alloca_queue, s, v + 2, s, v + 3, size, &y));
    HAL_ASSERT_OK(dealloca_on(f->device, alloca_queue, s, v + 3, s, v + 4, y));
    HAL_ASSERT_OK(cts_wait(s, v + 4));
    hal_buffer_release(x);
    hal_buffer_release(y);
  }
  hal_semaphore_release(s);
  hal_command_buffer_release(fills);
  hal_buffer_release(busy);
}

// And the other way round: 60 % of the device alloca'd, filled, then given
// back by a dealloca, or by the handle's release without one; once that is
// seen signaled, hal_device_allocate_buffer gets as much. The vendor's pool
// keeps what a dealloca frees for the next alloca; the allocation makes it
// give that back rather than run out of memory.
CTS_CASE(Memory_DeallocatedMemoryIsAllocatableOnceSignaled) {
  fixture_t* f = *state;
  const uint64_t size = sixty_percent_of_a_small_device(f, "four times");
  hal_semaphore_t* s = cts_create_semaphore(f->device, 0);
  uint64_t value = 0;
  for (int round = 0; round < 4; ++round) {
    bool dealloca = round % 2 == 0;
    hal_buffer_t* x = NULL;
    HAL_ASSERT_OK(
        alloca_on(f->device, f->q0, s, value, s, value + 1, size, &x));
    HAL_ASSERT_OK(fill_on(f->device, f->q0, s, value + 1, s, value + 2, x, 4096,
                          (uint8_t)round));
    value += 2;
    if (dealloca) {
      HAL_ASSERT_OK(dealloca_on(f->device, f->q1, s, value, s, value + 1, x));
      ++value;
    }
    hal_buffer_release(x);  // without a dealloca: the memory goes with it
    HAL_ASSERT_OK(cts_wait(s, value));
    hal_buffer_t* y = NULL;
    HAL_ASSERT_OK(
        hal_device_allocate_buffer(f->device, kDeviceLocal, size, &y));
    hal_buffer_release(y);
  }
  hal_semaphore_release(s);
}

// A failed wait fails the alloca's signals; the buffer never gets memory:
// work using it and its dealloca fail too, host transfers refuse, and the
// handle's release frees nothing it does not own.
CTS_CASE(Alloca_FailedWaitFailsSignalsAndWorkUsingIt) {
  fixture_t* f = *state;
  hal_semaphore_t* gate = cts_create_semaphore(f->device, 0);
  hal_semaphore_t* s = cts_create_semaphore(f->device, 0);
  hal_buffer_t* x = NULL;
  HAL_ASSERT_OK(alloca_on(f->device, f->q0, gate, 1, s, 1, 256, &x));
  HAL_ASSERT_OK(fill_on(f->device, f->q1, s, 1, s, 2, x, 256, 1));
  HAL_ASSERT_OK(dealloca_on(f->device, f->q0, s, 2, s, 3, x));
  uint8_t byte = 0;
  HAL_ASSERT_STATUS(HAL_STATUS_FAILED_PRECONDITION, "alloca was not reached",
                    hal_buffer_read(x, 0, &byte, 1));
  hal_semaphore_fail(gate, hal_make_status(HAL_STATUS_ABORTED, "no input"));
  HAL_ASSERT_STATUS(HAL_STATUS_ABORTED, "no input", cts_wait(s, 3));
  HAL_ASSERT_STATUS(HAL_STATUS_FAILED_PRECONDITION, "alloca failed",
                    hal_buffer_write(x, 0, &byte, 1));
  hal_buffer_release(x);
  hal_semaphore_release(s);
  hal_semaphore_release(gate);
}

// Work issued after the dealloca was reached fails at issue, naming the
// buffer; host transfers refuse; a second dealloca is refused at the call.
// A reusable command buffer over alloca'd memory, re-recorded with the
// same shape: a graph driver builds its graph at the first issue of each
// recording (the buffer's address is known then) and, as for any
// re-record, offers the second to the first's executable as an update,
// which a runtime updating executables takes (one build, one update).
// Each recording's fill lands.
CTS_CASE(Alloca_ReRecordedCommandBufferIsUpdatedInPlace) {
  fixture_t* f = *state;
  enum { kSize = 512 };
  hal_semaphore_t* s = cts_create_semaphore(f->device, 0);
  hal_buffer_t* x = NULL;
  HAL_ASSERT_OK(alloca_on(f->device, f->q0, NULL, 0, s, 1, kSize, &x));
  hal_command_buffer_t* cb =
      cts_begin_command_buffer(f->device, HAL_COMMAND_BUFFER_MODE_REUSABLE);
  for (uint32_t round = 0; round < 2; ++round) {
    if (round > 0)
      HAL_ASSERT_OK(hal_command_buffer_begin(cb));
    uint8_t pattern = (uint8_t)(0x11 * (round + 1));
    HAL_ASSERT_OK(hal_command_buffer_fill_buffer(cb, x, 0, kSize, &pattern, 1));
    // Ops between barriers may run in any order (a graph's nodes do).
    HAL_ASSERT_OK(hal_command_buffer_execution_barrier(cb));
    HAL_ASSERT_OK(hal_command_buffer_copy_buffer(cb, x, 0, f->b, 0, kSize));
    HAL_ASSERT_OK(hal_command_buffer_end(cb));
    HAL_ASSERT_OK(cts_submit(f->device, f->q0, s, 1 + round, cb, s, 2 + round));
    HAL_ASSERT_OK(cts_wait(s, 2 + round));
    cts_expect_bytes(f->b, 0, kSize, pattern);
  }
  hal_command_buffer_info_t info;
  HAL_ASSERT_OK(hal_command_buffer_query_info(cb, &info));
  if (info.native_build_count + info.native_update_count > 0) {
    assert_int_equal(info.native_build_count, 1);
    assert_int_equal(info.native_update_count, 1);
  }
  HAL_ASSERT_OK(dealloca_on(f->device, f->q0, s, 3, s, 4, x));
  HAL_ASSERT_OK(cts_wait(s, 4));
  hal_command_buffer_release(cb);
  hal_buffer_release(x);
  hal_semaphore_release(s);
}

static void* open_the_gate(void* gate) {
  HAL_ASSERT_OK(hal_semaphore_signal((hal_semaphore_t*)gate, 1));
  return NULL;
}

// A recording over a queue-ordered buffer is built by its first issue
// (graph drivers), on whichever thread issues it: queries of its info from
// another thread meanwhile read the counts safely (ThreadSanitizer saw a
// race on them), and see the one build once the work is done.
CTS_CASE(Alloca_InfoQueriedWhileTheFirstIssueBuilds) {
  fixture_t* f = *state;
  enum { kSize = 512 };
  hal_semaphore_t* s = cts_create_semaphore(f->device, 0);
  hal_semaphore_t* gate = NULL;
  HAL_ASSERT_OK(hal_semaphore_create_host(hal_allocator_system(), 0, &gate));
  hal_buffer_t* x = NULL;
  HAL_ASSERT_OK(alloca_on(f->device, f->q0, NULL, 0, s, 1, kSize, &x));
  hal_command_buffer_t* cb =
      cts_begin_command_buffer(f->device, HAL_COMMAND_BUFFER_MODE_REUSABLE);
  uint8_t pattern = 0x5A;
  HAL_ASSERT_OK(hal_command_buffer_fill_buffer(cb, x, 0, kSize, &pattern, 1));
  HAL_ASSERT_OK(hal_command_buffer_execution_barrier(cb));
  HAL_ASSERT_OK(hal_command_buffer_copy_buffer(cb, x, 0, f->b, 0, kSize));
  HAL_ASSERT_OK(hal_command_buffer_end(cb));
  hal_semaphore_t* waits[2] = {s, gate};
  uint64_t wait_values[2] = {1, 1}, done = 2;
  hal_semaphore_list_t wait_list = {2, waits, wait_values};
  hal_semaphore_list_t signal_list = {1, &s, &done};
  HAL_ASSERT_OK(hal_device_queue_execute(f->device, f->q0, &wait_list,
                                         &signal_list, 1, &cb));
  pthread_t opener;
  assert_int_equal(pthread_create(&opener, NULL, open_the_gate, gate), 0);
  hal_time_t deadline = hal_time_now() + 20ll * 1000 * 1000 * 1000;
  hal_command_buffer_info_t info;
  do {
    HAL_ASSERT_OK(hal_command_buffer_query_info(cb, &info));
    assert_true(info.native_build_count <= 1);
  } while (cts_query(s) < done && hal_time_now() < deadline);
  assert_int_equal(pthread_join(opener, NULL), 0);
  HAL_ASSERT_OK(cts_wait(s, done));
  cts_expect_bytes(f->b, 0, kSize, pattern);
  HAL_ASSERT_OK(hal_command_buffer_query_info(cb, &info));
  assert_int_equal(info.native_update_count, 0);
  if (info.native_build_count > 0)  // graph drivers; stream drivers build none
    assert_int_equal(info.native_build_count, 1);
  HAL_ASSERT_OK(dealloca_on(f->device, f->q0, s, 2, s, 3, x));
  HAL_ASSERT_OK(cts_wait(s, 3));
  hal_command_buffer_release(cb);
  hal_buffer_release(x);
  hal_semaphore_release(gate);
  hal_semaphore_release(s);
}

CTS_CASE(Alloca_UseAfterDeallocaFailsAtIssue) {
  fixture_t* f = *state;
  hal_semaphore_t* s = cts_create_semaphore(f->device, 0);
  hal_buffer_t* x = NULL;
  HAL_ASSERT_OK(alloca_on(f->device, f->q0, NULL, 0, s, 1, 512, &x));
  HAL_ASSERT_OK(dealloca_on(f->device, f->q1, s, 1, s, 2, x));
  HAL_ASSERT_OK(cts_wait(s, 2));
  HAL_ASSERT_STATUS(HAL_STATUS_FAILED_PRECONDITION, "already passed",
                    dealloca_on(f->device, f->q0, NULL, 0, NULL, 0, x));
  HAL_ASSERT_OK(fill_on(f->device, f->q0, s, 2, s, 3, x, 512, 9));
  HAL_ASSERT_STATUS(HAL_STATUS_FAILED_PRECONDITION, "dealloca was reached",
                    cts_wait(s, 3));
  uint8_t byte = 0;
  HAL_ASSERT_STATUS(HAL_STATUS_FAILED_PRECONDITION, "dealloca was reached",
                    hal_buffer_read(x, 0, &byte, 1));
  hal_buffer_release(x);
  hal_semaphore_release(s);
}

// A dealloca reached while a use of the buffer is still waiting to be
// issued is not ordered after it: it fails FAILED_PRECONDITION saying so,
// and the memory stays with the buffer, so the use runs on live memory
// when its wait comes; the buffer's release frees it.
CTS_CASE(Alloca_DeallocaBeforeAPendingUseFailsAndKeepsTheMemory) {
  fixture_t* f = *state;
  hal_semaphore_t* s = cts_create_semaphore(f->device, 0);
  hal_semaphore_t* gate = cts_create_semaphore(f->device, 0);
  hal_semaphore_t* used = cts_create_semaphore(f->device, 0);
  hal_buffer_t* x = NULL;
  HAL_ASSERT_OK(alloca_on(f->device, f->q0, NULL, 0, s, 1, 256, &x));
  HAL_ASSERT_OK(fill_on(f->device, f->q1, gate, 1, used, 1, x, 256, 0x6B));
  HAL_ASSERT_OK(dealloca_on(f->device, f->q0, s, 1, s, 2, x));
  HAL_ASSERT_STATUS(HAL_STATUS_FAILED_PRECONDITION,
                    "not ordered before the dealloca", cts_wait(s, 2));
  HAL_ASSERT_OK(hal_semaphore_signal(gate, 1));
  HAL_ASSERT_OK(copy_on(f->device, f->q1, used, 1, used, 2, x, f->b, 256));
  HAL_ASSERT_OK(cts_wait(used, 2));
  cts_expect_bytes(f->b, 0, 256, 0x6B);
  hal_buffer_release(x);
  hal_semaphore_release(used);
  hal_semaphore_release(gate);
  hal_semaphore_release(s);
}

// A buffer never deallocated keeps its memory until its last reference
// goes (the virtual GPU reports a leak otherwise); one written by the host
// between its alloca and its release reads back.
CTS_CASE(Alloca_ReleaseWithoutDeallocaFreesTheMemory) {
  fixture_t* f = *state;
  hal_semaphore_t* s = cts_create_semaphore(f->device, 0);
  hal_buffer_t* x = NULL;
  HAL_ASSERT_OK(alloca_on(f->device, f->q1, NULL, 0, s, 1, 64, &x));
  HAL_ASSERT_OK(cts_wait(s, 1));
  uint8_t bytes[64];
  memset(bytes, 0xEE, sizeof(bytes));
  HAL_ASSERT_OK(hal_buffer_write(x, 0, bytes, sizeof(bytes)));
  memset(bytes, 0, sizeof(bytes));
  HAL_ASSERT_OK(hal_buffer_read(x, 0, bytes, sizeof(bytes)));
  assert_int_equal(bytes[63], 0xEE);
  hal_buffer_release(x);
  hal_semaphore_release(s);
}

// Bad input: a clear status, nothing submitted, no semaphore moved.
CTS_CASE(Alloca_BadArgumentsSubmitNothing) {
  fixture_t* f = *state;
  hal_semaphore_t* s = cts_create_semaphore(f->device, 0);
  uint64_t one_value = 1;
  hal_semaphore_list_t signal = {1, &s, &one_value};
  hal_buffer_t* x = (hal_buffer_t*)1;
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, "at least one byte",
                    hal_device_queue_alloca(f->device, 0, NULL, &signal,
                                            kDeviceLocal, 0, &x));
  assert_null(x);
  hal_buffer_params_t visible = {
      HAL_MEMORY_TYPE_HOST_VISIBLE,
      HAL_BUFFER_USAGE_DEFAULT | HAL_BUFFER_USAGE_MAPPING};
  HAL_ASSERT_STATUS(
      HAL_STATUS_INVALID_ARGUMENT, "DEVICE_LOCAL memory only",
      hal_device_queue_alloca(f->device, 0, NULL, &signal, visible, 64, &x));
  hal_buffer_params_t mapped = {HAL_MEMORY_TYPE_DEVICE_LOCAL,
                                HAL_BUFFER_USAGE_MAPPING};
  HAL_ASSERT_STATUS(
      HAL_STATUS_INVALID_ARGUMENT, "MAPPING",
      hal_device_queue_alloca(f->device, 0, NULL, &signal, mapped, 64, &x));
  const hal_device_info_t* info = hal_device_info(f->device);
  HAL_ASSERT_STATUS(
      HAL_STATUS_RESOURCE_EXHAUSTED, "exceeds",
      hal_device_queue_alloca(f->device, 0, NULL, &signal, kDeviceLocal,
                              info->total_memory + 1, &x));
  HAL_ASSERT_STATUS(HAL_STATUS_OUT_OF_RANGE, "out of range",
                    hal_device_queue_alloca(f->device, 99, NULL, &signal,
                                            kDeviceLocal, 64, &x));
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, "out_buffer",
                    hal_device_queue_alloca(f->device, 0, NULL, &signal,
                                            kDeviceLocal, 64, NULL));
  HAL_ASSERT_STATUS(
      HAL_STATUS_INVALID_ARGUMENT, "not made by hal_device_queue_alloca",
      hal_device_queue_dealloca(f->device, 0, NULL, &signal, f->a));
  HAL_ASSERT_STATUS(
      HAL_STATUS_INVALID_ARGUMENT, "NULL",
      hal_device_queue_dealloca(f->device, 0, NULL, &signal, NULL));
  HAL_ASSERT_STATUS(
      HAL_STATUS_INVALID_ARGUMENT, "not a buffer",
      hal_device_queue_dealloca(f->device, 0, NULL, &signal, (hal_buffer_t*)s));
  assert_int_equal(cts_query(s), 0);
  hal_semaphore_release(s);
}

// Releasing the device with an alloca parked on a semaphore nobody signals
// cancels it (its signals fail CANCELLED); the handle, released after the
// device, frees without touching the device's queues. A live buffer that
// outlives the device's last release frees its memory then.
CTS_CASE(Q4_AllocaParkedAtReleaseIsCancelled) {
  (void)state;
  hal_device_t* device = cts_create_device(0);
  hal_semaphore_t* never = cts_create_semaphore(device, 0);
  hal_semaphore_t* s = cts_create_semaphore(device, 0);
  hal_semaphore_t* reached = cts_create_semaphore(device, 0);
  hal_buffer_t* parked = NULL;
  hal_buffer_t* live = NULL;
  HAL_ASSERT_OK(alloca_on(device, 0, never, 1, s, 1, 4096, &parked));
  HAL_ASSERT_OK(alloca_on(device, 1, NULL, 0, reached, 1, 4096, &live));
  HAL_ASSERT_OK(cts_wait(reached, 1));
  hal_device_release(device);
  HAL_ASSERT_STATUS(HAL_STATUS_CANCELLED, "", cts_wait(s, 1));
  hal_buffer_release(parked);
  hal_buffer_release(live);
  hal_semaphore_release(reached);
  hal_semaphore_release(s);
  hal_semaphore_release(never);
}

// The test list: CASE binds this program's fixture.
#define CASE(name) CTS_ON_FIXTURE(name)

int main(void) {
  const struct CMUnitTest tests[] = {
      CASE(Alloca_OrderedWithWorkBeforeAndAfter),
      CASE(Alloca_DispatchSeesWhatAnEarlierOpWrote),
      CASE(Alloca_AcrossQueues),
      CASE(Alloca_UnorderedDeallocaOnAnotherQueueFreesAfterTheAllocation),
      CASE(Alloca_UnorderedUseOnAnotherQueueRunsAfterTheAllocation),
      CASE(Alloca_ReuseLoopStaysWithinDeviceMemory),
      CASE(Alloca_FailedWaitFailsSignalsAndWorkUsingIt),
      CASE(Alloca_ReRecordedCommandBufferIsUpdatedInPlace),
      CASE(Alloca_InfoQueriedWhileTheFirstIssueBuilds),
      CASE(Alloca_UseAfterDeallocaFailsAtIssue),
      CASE(Alloca_DeallocaBeforeAPendingUseFailsAndKeepsTheMemory),
      CASE(Alloca_ReleaseWithoutDeallocaFreesTheMemory),
      CASE(Alloca_BadArgumentsSubmitNothing),
      CASE(Memory_ReleasedBufferIsReusableOnceItsWorkIsSignaled),
      CASE(Memory_AllocaOrderedAfterAReleasedBuffersWorkGetsItsMemory),
      CASE(Memory_AllocaOrderedAfterADeallocaGetsItsMemory),
      CASE(Memory_DeallocatedMemoryIsAllocatableOnceSignaled),
      cmocka_unit_test(Q4_AllocaParkedAtReleaseIsCancelled),
  };
  return cts_main("queue_alloca", tests, HAL_ARRAYSIZE(tests));
}
