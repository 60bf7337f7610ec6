// Copyright 2026 The HAL Authors.
//
// hal_device_t: one GPU (or virtual GPU) with its queues, memory and
// semaphores.
//
// A device has a fixed number of queues (hal_device_properties_t). Work is
// submitted to a queue with hal_device_queue_execute(): it waits on a list of
// (semaphore, value) pairs, runs command buffers in order, then signals a
// list of (semaphore, value) pairs. Waits may name values nobody has
// signaled yet (wait-before-signal, rule S4 of docs/sync-contract.md).
//
// Releasing a device with work in flight is legal (rule Q4): the caller's
// last release waits for issued work, fails parked work with CANCELLED (or
// with the failure of a wait that failed already: S2 decided it) and
// joins the device's threads (the device "shuts down"). Parked work is
// failed first, and a semaphore's first failure sticks (S2): a value that
// issued work would have reached on a semaphore that parked work also
// signals fails with CANCELLED too, though that work still runs. Its
// memory and
// context live on only while buffers or command buffers made from it do. A
// last release made from a timepoint callback or a host call returns at
// once instead, its shutdown run on libhal's release thread (T2 in
// hal/timepoint.h, and hal_device_queue_host_call).
//
// Two counts make that possible. hal_device_retain/release count the
// caller's references; objects made from the device (buffers, command
// buffers) hold it through hal_resource_t.parent, which keeps its memory
// alive but not its queues. Otherwise parked work, which holds command
// buffers, which hold buffers, which hold the device, would keep the device
// from ever shutting down (a cycle, K3).
//
// Thread-safety: all functions are thread-safe.

#ifndef HAL_DEVICE_H_
#define HAL_DEVICE_H_

#include "hal/allocator.h"
#include "hal/base.h"
#include "hal/buffer.h"
#include "hal/command_buffer.h"
#include "hal/driver.h"
#include "hal/executable.h"
#include "hal/resource.h"
#include "hal/semaphore.h"
#include "hal/status.h"
#include "hal/time.h"

HAL_EXTERN_C_BEGIN

typedef struct hal_device_vtable_t hal_device_vtable_t;

typedef struct hal_device_properties_t {
  uint32_t queue_count;
  uint64_t total_memory;
  // Memory types hal_device_allocator_allocate_buffer accepts.
  hal_memory_type_t supported_memory_types;
  // Executable formats the device loads, comma-separated ("cuda-ptx,...";
  // see executable.h). Static storage owned by the driver.
  const char* executable_formats;
  // Dispatch limits (0: none known): threads per workgroup, workgroups
  // per dimension, and threads per workgroup in each dimension (CUDA's
  // block dimensions: 1024 x 1024 x 64 on most devices).
  uint32_t max_workgroup_size;
  uint32_t max_workgroup_count[3];
  uint32_t max_workgroup_dims[3];
  // What runs it (zero or "" where a driver has no such thing): the
  // runtime library loaded (a path), its driver and runtime versions as the
  // vendor encodes them (cuDriverGetVersion: 1000 * major + 10 * minor;
  // hipDriverGetVersion, hipRuntimeGetVersion), the compute capability
  // (CUDA's SM version; HIP's gfx major and minor), and whether it is the
  // virtual GPU rather than a real one.
  const char* runtime_path;
  int driver_version;
  int runtime_version;
  uint32_t compute_capability_major;
  uint32_t compute_capability_minor;
  bool is_virtual;
} hal_device_properties_t;

typedef struct hal_device_t hal_device_t;

HAL_API void hal_device_retain(hal_device_t* device);
HAL_API void hal_device_release(hal_device_t* device);

HAL_API const hal_device_info_t* hal_device_info(const hal_device_t* device);
HAL_API hal_driver_t* hal_device_driver(const hal_device_t* device);

HAL_API HAL_MUST_USE_RESULT hal_status_t hal_device_query_properties(
    hal_device_t* device, hal_device_properties_t* out_properties);

// The device's buffer allocator; borrowed, valid while the device lives.
HAL_API hal_device_allocator_t* hal_device_allocator(hal_device_t* device);

// Shorthand for hal_device_allocator_allocate_buffer(hal_device_allocator()).
HAL_API HAL_MUST_USE_RESULT hal_status_t
hal_device_allocate_buffer(hal_device_t* device, hal_buffer_params_t params,
                           uint64_t byte_length, hal_buffer_t** out_buffer);

HAL_API HAL_MUST_USE_RESULT hal_status_t
hal_device_create_semaphore(hal_device_t* device, uint64_t initial_value,
                            hal_semaphore_t** out_semaphore);

HAL_API HAL_MUST_USE_RESULT hal_status_t hal_device_create_command_buffer(
    hal_device_t* device, hal_command_buffer_mode_t mode,
    hal_command_buffer_t** out_command_buffer);

// Submits |command_buffer_count| command buffers to queue |queue_index|:
// they run after every wait is reached and before any signal is made. A
// wait whose semaphore fails instead fails the signals, and the work never
// runs if the failure is known at its issue; work whose wait was kept as a
// device event may have run when the failure comes only later (S2 in
// hal/semaphore.h). On error nothing was submitted and no semaphore
// changed: a NULL command buffer or one of another device is refused
// with INVALID_ARGUMENT naming it; one not ended since its creation or
// last begin(), or a ONE_SHOT one submitted before or listed twice, with
// FAILED_PRECONDITION (a command buffer that uses a buffer of another
// device cannot have been recorded: hal/command_buffer.h). Lists are
// copied and every object is retained for as long as the device needs it
// (rule Q3).
// The signals are made one at a time, in the order of the list (S5 in
// docs/sync-contract.md): when this submission's signal of an entry ends
// a wait, every entry before it is made, reached or failed alike, and
// those after it follow within moments; an ALL wait over the list sees
// them all. (A wait on a semaphore that another signal or a failure
// already decided says nothing of this submission.) This holds for every
// call below that takes a signal list; a device loss fails semaphores in
// no particular order.
HAL_API HAL_MUST_USE_RESULT hal_status_t hal_device_queue_execute(
    hal_device_t* device, uint32_t queue_index,
    const hal_semaphore_list_t* wait_semaphores,
    const hal_semaphore_list_t* signal_semaphores, size_t command_buffer_count,
    hal_command_buffer_t* const* command_buffers);

// A submission with no command buffers: signals after waits are reached.
HAL_API HAL_MUST_USE_RESULT hal_status_t
hal_device_queue_barrier(hal_device_t* device, uint32_t queue_index,
                         const hal_semaphore_list_t* wait_semaphores,
                         const hal_semaphore_list_t* signal_semaphores);

// The three transfer ops without a command buffer: each records a ONE_SHOT
// command buffer holding the one op and submits it as
// hal_device_queue_execute does (the same validation as the op and the
// submission; on error nothing was submitted). update copies |source| at
// the call, so the caller may reuse it at once.
HAL_API HAL_MUST_USE_RESULT hal_status_t hal_device_queue_fill(
    hal_device_t* device, uint32_t queue_index,
    const hal_semaphore_list_t* wait_semaphores,
    const hal_semaphore_list_t* signal_semaphores, hal_buffer_t* target,
    uint64_t target_offset, uint64_t length, const void* pattern,
    size_t pattern_length);
HAL_API HAL_MUST_USE_RESULT hal_status_t hal_device_queue_update(
    hal_device_t* device, uint32_t queue_index,
    const hal_semaphore_list_t* wait_semaphores,
    const hal_semaphore_list_t* signal_semaphores, const void* source,
    size_t source_offset, hal_buffer_t* target, uint64_t target_offset,
    uint64_t length);
HAL_API HAL_MUST_USE_RESULT hal_status_t hal_device_queue_copy(
    hal_device_t* device, uint32_t queue_index,
    const hal_semaphore_list_t* wait_semaphores,
    const hal_semaphore_list_t* signal_semaphores, hal_buffer_t* source,
    uint64_t source_offset, hal_buffer_t* target, uint64_t target_offset,
    uint64_t length);

// The function of a host call (hal_device_queue_host_call), called exactly
// once, on a HAL-owned thread (never inside a vendor callback, Q1):
//  - with |status| OK once every wait was reached: it does its work and its
//    return decides the signals (OK signals them all; an error, owned by the
//    HAL, fails them all with it);
//  - or with the failure of a wait, or CANCELLED when the device shut down
//    before the call could run: it must not do its work, only release what
//    |user_data| holds; its return is ignored and the signals fail with
//    |status|.
// |status| is borrowed for the call. The function may call any HAL
// function, including submitting more work, host calls and waits, and
// releasing the device's last reference (the shutdown then runs on
// libhal's release thread; no call of the device starts after that
// release). One thread per device runs its host calls in the order they
// became ready, so a function must not wait for its own signals nor for
// anything that only another host call of the same device would signal:
// that wait could never end. A call that will not run (a failed wait, a
// loss, the shutdown) takes its turn on that thread too, and its signals
// fail when its function returns, with one exception: a device loss fails
// every semaphore of the lost device at once (Q5), a call's signals among
// them, whether or not its function was called yet (it still is, once).
// Its other signals are decided when the function returns, as ever: a call
// not yet called gets the loss as its status and they fail; one running
// at the loss decides them by its return. A program that frees
// |user_data| on learning of a failure should do it in the function. File
// transfers (hal_device_queue_read/_write) have a thread of their own: a
// function may wait for them.
typedef hal_status_t (*hal_host_call_fn_t)(void* user_data,
                                           hal_status_t status);

// Runs |fn| after every wait of |wait_semaphores| is reached and before any
// signal of |signal_semaphores| is made, like a command buffer submitted to
// |queue_index| would (ordered by its semaphores only, as every
// submission). A failed wait decides it at once (S2), one whose value was
// reached before it failed too, while another wait keeps the call waiting
// (queue work learns of that one only at its issue). Returns at once; on
// error |fn| is never called and no semaphore changed. Releasing the device
// with host calls waiting, or ready and not started, cancels them (Q4):
// |fn| gets CANCELLED, their signals fail with it (with the failure of a
// wait that had failed already instead, which decided the call (S2) even if
// the call had not learnt of it yet; with the loss instead when the device
// was lost before); one running is waited for. A device loss
// fails those not yet started with it, whatever they wait for, and refuses
// later ones with a copy (Q5).
HAL_API HAL_MUST_USE_RESULT hal_status_t
hal_device_queue_host_call(hal_device_t* device, uint32_t queue_index,
                           const hal_semaphore_list_t* wait_semaphores,
                           const hal_semaphore_list_t* signal_semaphores,
                           hal_host_call_fn_t fn, void* user_data);

// Queue-ordered allocation (docs/queue-ops.md has the long form).
//
// hal_device_queue_alloca returns at once a buffer handle of |byte_length|
// (> 0) bytes of DEVICE_LOCAL memory (|params| may not ask for
// HOST_VISIBLE memory or MAPPING usage). Its memory comes from the device's
// pool when queue |queue_index| reaches the alloca (after its waits), and
// may be used by queue work ordered after |signal_semaphores| only: before
// that, nothing may touch it (queue work that does fails FAILED_PRECONDITION
// at issue; hal_buffer_read/write return FAILED_PRECONDITION). A failed
// wait fails the signals and the buffer never gets memory. A pool that
// cannot grow, after the work the alloca waits for is done and the memory
// it gave back is free (buffers released under it), fails the signals with
// RESOURCE_EXHAUSTED.
//
// hal_device_queue_dealloca gives |buffer|'s memory back to the pool once
// queue |queue_index| reaches it (after its waits), then signals. Every use
// must be ordered before |wait_semaphores|. After the dealloca is reached
// nothing may touch the memory again: queue work issued after it that
// references the buffer fails FAILED_PRECONDITION; a dealloca reached while
// a submission that uses the buffer is not issued yet (so not ordered
// before it) fails FAILED_PRECONDITION and leaves the memory to the buffer.
// So a use ordered after the dealloca (a program error) fails either way:
// submitted once the dealloca was reached, it fails at issue; submitted
// before, the dealloca fails as just said and the use with its failure.
// The handle itself stays the caller's to release. A failed wait fails the
// signals and leaves the memory with the buffer, freed when its last
// reference goes (nothing is leaked, nothing freed under running work), as
// does a free the vendor refuses. A vendor error reported after the free
// was issued (recording or waiting for its completion) fails the signals
// too, but the memory is gone: the buffer then reads as deallocated. A buffer
// released without a dealloca frees its memory when its last reference goes
// too.
//
// Errors (nothing submitted): INVALID_ARGUMENT for a size of 0, memory
// types or usage an alloca cannot have, a buffer not made by
// hal_device_queue_alloca, or one of another device; RESOURCE_EXHAUSTED
// for a size beyond the device's memory; FAILED_PRECONDITION for a second
// dealloca of one buffer, the first one failed included (the memory then
// goes when the buffer's last reference does). As hal_device_queue_execute
// otherwise.
HAL_API HAL_MUST_USE_RESULT hal_status_t hal_device_queue_alloca(
    hal_device_t* device, uint32_t queue_index,
    const hal_semaphore_list_t* wait_semaphores,
    const hal_semaphore_list_t* signal_semaphores, hal_buffer_params_t params,
    uint64_t byte_length, hal_buffer_t** out_buffer);
HAL_API HAL_MUST_USE_RESULT hal_status_t hal_device_queue_dealloca(
    hal_device_t* device, uint32_t queue_index,
    const hal_semaphore_list_t* wait_semaphores,
    const hal_semaphore_list_t* signal_semaphores, hal_buffer_t* buffer);

// Blocks until ALL/ANY of |semaphore_list| reached their values, one failed
// (its status is returned), or |timeout| passed (DEADLINE_EXCEEDED). An
// empty list returns OK at once. Failed entries decide as in
// hal_semaphore_list_wait (hal/semaphore.h): ANY returns OK if some entry is
// reached when the wait decides.
HAL_API HAL_MUST_USE_RESULT hal_status_t hal_device_wait_semaphores(
    hal_device_t* device, hal_wait_mode_t wait_mode,
    const hal_semaphore_list_t* semaphore_list, hal_timeout_t timeout);

HAL_EXTERN_C_END

#endif  // HAL_DEVICE_H_
