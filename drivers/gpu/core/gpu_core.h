// Copyright 2026 The HAL Authors.
//
// The shared GPU core: driver, device, queues, buffers and command-buffer
// strategies, written once over the vendor adapter (adapter/adapter.h). The
// four plugins (cuda_stream, cuda_graph, hip_stream, hip_graph) are each one
// GPU_DEFINE_PLUGIN line naming a vendor adapter and a strategy
// (gpu_stream_strategy in gpu_stream.c, gpu_graph_strategy in gpu_graph.c).
//
// Objects and threads:
//
//   gpu_driver_t   the loaded vendor runtime (gpu_adapter_t) and the device
//                  list; parent of its devices.
//   gpu_device_t   one context on one GPU, an event pool (the sync module's
//                  device timepoints), and GPU_QUEUE_COUNT queues.
//   gpu_queue_t    one vendor stream and one hal_sync_queue_t. The sync
//                  queue's WORKER thread issues ready submissions into the
//                  stream (wait events, replay or launch, record event); its
//                  COMPLETION thread synchronizes each submission's event and
//                  signals. Both call the vendor API only from those
//                  threads, never from a vendor callback (Q1), making the
//                  device's context current first.
//   gpu_buffer_t   device memory (device_alloc) or pinned host memory
//                  (host_alloc, HOST_VISIBLE); parent: its device.
//
// Lifetime: the caller's last hal_device_release() shuts the device down
// (Q4: parked work cancelled, issued work drained, queue threads joined).
// A submission's payload retains its command buffers (which retain their
// buffers, which retain the device's memory, not its queues). The payload is
// released on a queue thread inside a defer-destruction bracket, so if that
// is the device's last reference the device's memory is freed on libhal's
// release thread.

#ifndef DRIVERS_GPU_CORE_GPU_CORE_H_
#define DRIVERS_GPU_CORE_GPU_CORE_H_

#include <pthread.h>
#include <stdatomic.h>

#include "adapter/adapter.h"
#include "hal/impl/api.h"
#include "hal/plugin.h"
#include "sync_queue.h"

HAL_EXTERN_C_BEGIN

// Queues per device (each its own stream).
#define GPU_QUEUE_COUNT 2

typedef struct gpu_device_t gpu_device_t;
typedef struct gpu_queue_t gpu_queue_t;
// A submission's device spans under HAL_TRACE (gpu_trace.c); NULL when off.
typedef struct gpu_trace_spans_t gpu_trace_spans_t;

// How command buffers become device work: what a stream driver and a graph
// driver differ in, and all they differ in.
typedef struct gpu_strategy_t {
  const char* name;  // "stream", "graph"
  // GPU_ADAPTER_CAP_* bits the strategy cannot do without: a driver whose
  // runtime lacks one refuses to create (gpu_driver.c), naming them.
  uint32_t required_capabilities;
  // Creates a command buffer recording for |device|.
  hal_status_t (*create_command_buffer)(
      gpu_device_t* device, hal_command_buffer_mode_t mode,
      hal_command_buffer_t** out_command_buffer);
  // WORKER thread, context current: enqueues |command_buffer| on |queue|'s
  // stream. Must not block on device work. A strategy that issues op by
  // op marks each op's end into |trace| (gpu_trace_mark, gpu_trace_span;
  // both no-ops on NULL); the core marks the command buffer around it.
  hal_status_t (*issue)(gpu_queue_t* queue,
                        hal_command_buffer_t* command_buffer,
                        gpu_trace_spans_t* trace);
} gpu_strategy_t;

// Command buffers are libhal's recorded op lists, replayed op by op into
// the queue's stream at issue (gpu_stream.c).
extern const gpu_strategy_t gpu_stream_strategy;
// Command buffers become a vendor graph at end() (instantiated, or updated
// in place), launched per issue (gpu_graph.c).
extern const gpu_strategy_t gpu_graph_strategy;

typedef struct gpu_driver_params_t {
  const char* name;  // "cuda_stream" ...
  gpu_adapter_vendor_t vendor;
  const gpu_strategy_t* strategy;
} gpu_driver_params_t;

typedef struct gpu_driver_t {
  hal_driver_t base;
  gpu_adapter_t* adapter;
  const gpu_strategy_t* strategy;
  uint32_t device_count;
  hal_device_info_t* device_infos;  // [device_count]
  // The collective library (NCCL or RCCL), loaded by the first channel
  // call (gpu_channel.c); under |ccl_mutex| until set.
  pthread_mutex_t ccl_mutex;
  struct gpu_ccl_t* ccl;
  // The channels with collectives in flight and the thread that watches
  // them (gpu_channel.c); NULL until the first channel is made.
  struct gpu_channel_watch_t* ccl_watch;
} gpu_driver_t;

struct gpu_queue_t {
  gpu_device_t* device;
  uint32_t index;
  gpu_stream_t stream;
  hal_sync_queue_t* sync_queue;
  uint32_t trace_device_track;  // HAL_TRACE's device spans; 0 when off
  uint64_t range_count;         // profiler ranges started (WORKER only)
  // Idle payloads of submissions with few command buffers, kept so that a
  // warm submission allocates nothing (gpu_device.c: gpu_payload_acquire).
  // Taken by submitters, given back by whichever thread releases the
  // payload; freed with the device.
  pthread_mutex_t payload_mutex;
  struct gpu_payload_t* free_payloads;  // under |payload_mutex|
  size_t free_payload_count;            // under |payload_mutex|
};

struct gpu_device_t {
  hal_device_t base;
  gpu_adapter_t* adapter;          // the driver's; the driver is our parent
  const gpu_strategy_t* strategy;  // the driver's
  int ordinal;                     // the vendor's device index
  uint32_t max_threads_per_block;  // the vendor's limit, read at creation
  uint32_t max_block_dim[3];       // per dimension, likewise
  uint32_t max_grid_dim[3];        // blocks per dimension, likewise
  uint32_t compute_capability[2];  // major, minor; read at creation
  gpu_context_t* context;
  hal_device_allocator_t allocator;
  _Atomic uint64_t allocated_bytes;
  _Atomic uint64_t allocation_count;
  hal_sync_event_pool_t* event_pool;
  // The loss domain of the device's queues and semaphores (and libhal's
  // host-call executors) is |base.loss_domain|: all fail together (Q5).
  // Device loss (Q5): set once the loss domain failed, by the first vendor
  // call reporting it; every later issue and submission fails with a copy
  // of |lost_status|.
  _Atomic bool lost;
  // Set by shutdown (the caller's last release): no more submissions.
  _Atomic bool shut_down;
  pthread_mutex_t lost_mutex;
  hal_status_t lost_status;  // under |lost_mutex|
  uint32_t queue_count;
  gpu_queue_t queues[GPU_QUEUE_COUNT];
  // HAL_TRACE's clock calibration (gpu_trace.c): a timed event recorded at
  // creation and the host time it maps to. NULL: no device spans.
  gpu_event_t trace_epoch;
  hal_time_t trace_epoch_ns;
  _Atomic uint64_t trace_dropped_spans;
  // Queue-ordered allocation's vendor pool (NULL without the adapter's
  // STREAM_ORDERED_ALLOC: allocas then use device_alloc at issue).
  gpu_pool_t alloca_pool;
  // The fallback's deallocas issued and not yet freed, those freed, and
  // their signal: an alloca that finds the device full waits for the
  // pending ones once, then retries if any was freed since it tried.
  pthread_mutex_t alloca_mutex;
  pthread_cond_t alloca_freed;
  uint32_t alloca_frees_pending;  // under |alloca_mutex|
  uint64_t alloca_frees_done;     // under |alloca_mutex|
  // Timed events whose records are done, for the next marks (under
  // |trace_mutex|): creating one per mark would double a traced submit.
  pthread_mutex_t trace_mutex;
  gpu_event_t* trace_free_events;
  uint32_t trace_free_count;
};

// Where a buffer of hal_device_queue_alloca is in its queue-ordered life
// (gpu_alloca.c). Other buffers have memory for their whole life.
typedef enum gpu_buffer_life_e {
  GPU_BUFFER_LIFE_PENDING = 0,  // the alloca was not reached: no memory
  GPU_BUFFER_LIFE_LIVE = 1,     // reached: |address| is set
  GPU_BUFFER_LIFE_FREED = 2,    // the dealloca was reached: memory gone
  // The alloca never ran, or ran and its signals failed (its completion
  // could not be recorded or synchronized): no work may use it; memory it
  // got (|address| set) goes with the buffer.
  GPU_BUFFER_LIFE_FAILED = 3,
} gpu_buffer_life_t;

typedef struct gpu_buffer_t {
  hal_buffer_t base;
  // Unified address of the first byte (device memory or pinned host). For
  // a queue-ordered buffer, written by the alloca's issue before |life|
  // becomes LIVE (release), read after an acquire of |life|.
  gpu_device_ptr_t address;
  // The host address for HOST_VISIBLE buffers; NULL otherwise.
  void* host_pointer;
  // Made by hal_device_queue_alloca: |life| says whether it has memory.
  bool queue_ordered;
  _Atomic uint32_t life;  // gpu_buffer_life_t
  atomic_bool dealloca_submitted;
  // Submissions that use it and were accepted but not issued yet: a
  // dealloca reached while one is pending is not ordered after it.
  _Atomic uint32_t unissued_uses;
  // The memory came from the device's vendor pool (alloc_async), not from
  // device_alloc (the fallback without stream-ordered allocation).
  bool pooled;
  // Pooled: recorded on the alloca's stream right after the allocation, so
  // a use or dealloca on another queue orders after the allocation even
  // when nothing else orders the two streams. Written before |life| becomes
  // LIVE; released when the buffer is destroyed.
  hal_sync_native_event_t* alloc_event;
  uint32_t alloc_queue_index;
  // The fallback's free at the dealloca's completion was refused: the
  // memory stays with the buffer, freed (tried again) when it goes.
  bool free_refused;
} gpu_buffer_t;

// Creates a driver: loads the vendor runtime and lists its devices. A
// runtime with no device fails with NOT_FOUND carrying the vendor's reason.
hal_status_t gpu_driver_create(const gpu_driver_params_t* params,
                               hal_allocator_t host_allocator,
                               hal_driver_t** out_driver);

// Creates device |index| of |driver|.
hal_status_t gpu_device_create(gpu_driver_t* driver, uint32_t index,
                               hal_allocator_t host_allocator,
                               hal_device_t** out_device);

// Device loss (Q5, gpu_device.c). gpu_device_note records |status| as the
// device's loss if it is one (the first wins), fails the device's loss
// domain, and returns |status|. gpu_device_check_lost returns OK or a copy
// of the loss ("device '...' was lost"): every operation that would call
// the vendor on the device checks it first, so the caller learns the loss
// itself, not some later call's error. gpu_device_note_release takes the
// status of a free or destroy (which has no caller to tell): a loss is
// recorded, anything else dropped.
hal_status_t gpu_device_note(gpu_device_t* device, hal_status_t status);
void gpu_device_note_release(gpu_device_t* device, hal_status_t status);
hal_status_t gpu_device_check_lost(gpu_device_t* device);

// The device allocator's vtable (gpu_buffer.c).
extern const hal_device_allocator_vtable_t gpu_device_allocator_vtable;

// The devices' and the buffers' vtables (gpu_device.c, gpu_buffer.c).
extern const hal_device_vtable_t gpu_device_vtable;
extern const hal_buffer_vtable_t gpu_buffer_vtable;

static inline gpu_device_t* gpu_device_cast(hal_device_t* device) {
  return HAL_RESOURCE_CAST(gpu_device_t, device, &gpu_device_vtable);
}

static inline gpu_buffer_t* gpu_buffer_cast(hal_buffer_t* buffer) {
  return HAL_RESOURCE_CAST(gpu_buffer_t, buffer, &gpu_buffer_vtable);
}

// The address of |buffer| for device work issued now. A queue-ordered
// buffer whose alloca was not reached, or whose dealloca was, is
// FAILED_PRECONDITION (gpu_alloca.c).
hal_status_t gpu_buffer_queue_ordered_address(const gpu_buffer_t* buffer,
                                              gpu_device_ptr_t* out_address);
static inline hal_status_t gpu_buffer_issue_address(hal_buffer_t* buffer,
                                                    uint64_t offset,
                                                    gpu_device_ptr_t* out) {
  const gpu_buffer_t* b = gpu_buffer_cast(buffer);
  if (HAL_LIKELY(!b->queue_ordered)) {
    *out = b->address + offset;
    return HAL_OK;
  }
  HAL_RETURN_IF_ERROR(gpu_buffer_queue_ordered_address(b, out));
  *out += offset;
  return HAL_OK;
}

// Queue-ordered allocation (gpu_alloca.c): the device's vtable members,
// what a payload of each does at issue and when it is released, and the
// device's pool.
hal_status_t gpu_device_queue_alloca(
    hal_device_t* device, uint32_t queue_index,
    const hal_semaphore_list_t* wait_semaphores,
    const hal_semaphore_list_t* signal_semaphores, hal_buffer_params_t params,
    uint64_t byte_length, hal_buffer_t** out_buffer);
hal_status_t gpu_device_queue_dealloca(
    hal_device_t* device, uint32_t queue_index,
    const hal_semaphore_list_t* wait_semaphores,
    const hal_semaphore_list_t* signal_semaphores, hal_buffer_t* buffer);
// The queue-ordered buffers a recording uses, each once (retained by the
// recording). Every strategy's recording state starts with one, filled at
// end() (gpu_recording_queue_ordered finds it).
typedef struct gpu_buffer_set_t {
  hal_buffer_t** items;
  size_t count;
  // The channels its collectives use, each once (retained by the
  // recording): a completed submission checks each (gpu_channels_check).
  hal_channel_t** channels;
  size_t channel_count;
  hal_allocator_t allocator;
} gpu_buffer_set_t;
// Refills |set| from |ops|.
hal_status_t gpu_buffer_set_collect(gpu_buffer_set_t* set, const hal_op_t* ops,
                                    size_t count);
void gpu_buffer_set_deinitialize(gpu_buffer_set_t* set);
static inline const gpu_buffer_set_t* gpu_recording_queue_ordered(
    hal_command_buffer_t* command_buffer) {
  return (const gpu_buffer_set_t*)hal_recording_command_buffer_user(
      command_buffer);
}
// Submit: counts the submission as a pending use of each; issue (or a
// release without issue) uncounts it.
void gpu_buffer_set_add_uses(const gpu_buffer_set_t* set, int32_t delta);

// Collectives (gpu_channel.c). The device's channel members, where the
// build has the collective library's header.
#if defined(GPU_CORE_HAVE_CCL)
hal_status_t gpu_device_channel_id_generate(hal_device_t* device,
                                            hal_channel_id_t* out_id);
hal_status_t gpu_device_create_channel(hal_device_t* device,
                                       const hal_channel_id_t* id, int32_t rank,
                                       int32_t rank_count,
                                       hal_channel_t** out_channel);
hal_status_t gpu_device_create_channel_group(hal_device_t* device, size_t count,
                                             hal_device_t* const* devices,
                                             hal_channel_t** out_channels);
#endif
// WORKER thread, context current: enqueues |count| collective ops on
// |queue|'s stream, each run of sends and receives as one group.
hal_status_t gpu_collectives_issue(gpu_queue_t* queue, const hal_op_t* ops,
                                   size_t count);
// COMPLETION thread: OK, or the first asynchronous failure of |set|'s
// channels.
hal_status_t gpu_channels_check(const gpu_buffer_set_t* set);
// A submission whose collectives on |set|'s channels will not all be
// issued (a wait failed, the device shut down with it parked, its issue
// failed): every rank must make every collective, so its peers would wait
// for this rank's part forever. Each channel's communicator is aborted
// instead (ncclCommAbort): what its ranks have not completed fails, on
// every rank, and this rank's later collectives on it fail at issue and
// its check reports why. WORKER or COMPLETION thread.
void gpu_channels_abort(const gpu_buffer_set_t* set, const char* why);
// A submission with collectives on |set|'s channels was issued, or it
// retired after that (the device is done with it). While any of its
// channels has collectives in flight, a thread polls the library for the
// channel's asynchronous error, and, when HAL_SYNC_MAX_WAIT_MS is set,
// watches for a channel none of whose submissions retired for that long:
// either aborts the channel (gpu_channels_abort), so a collective waiting
// for a peer that died or stalls ends instead of holding its stream, and
// the device's shutdown, forever.
void gpu_channels_issued(const gpu_buffer_set_t* set);
void gpu_channels_retired(const gpu_buffer_set_t* set);
// Unloads the driver's collective library, if loaded (every channel gone),
// after stopping the watch thread.
void gpu_driver_ccl_destroy(gpu_driver_t* driver);

// What a submission does besides command buffers (gpu_device.c).
typedef enum gpu_payload_kind_e {
  GPU_PAYLOAD_COMMAND_BUFFERS = 0,
  GPU_PAYLOAD_ALLOCA = 1,
  GPU_PAYLOAD_DEALLOCA = 2,
} gpu_payload_kind_t;
// Submits an alloca or dealloca of |buffer| (retained until released) to
// queue |queue_index| of |device|.
hal_status_t gpu_device_submit_memory_op(
    gpu_device_t* device, uint32_t queue_index,
    const hal_semaphore_list_t* wait_semaphores,
    const hal_semaphore_list_t* signal_semaphores, gpu_payload_kind_t kind,
    gpu_buffer_t* buffer);
// WORKER thread, context current.
hal_status_t gpu_queue_issue_alloca(gpu_queue_t* queue, gpu_buffer_t* buffer);
hal_status_t gpu_queue_issue_dealloca(gpu_queue_t* queue, gpu_buffer_t* buffer);
// The payload is released (or orphaned, gpu_queue_orphan_payload):
// |completed| whether its submission completed OK, |issued| whether its
// issue succeeded.
void gpu_alloca_released(gpu_buffer_t* buffer, bool completed);
void gpu_dealloca_released(gpu_device_t* device, gpu_buffer_t* buffer,
                           bool issued);
// At device creation (context current) and destruction.
hal_status_t gpu_device_alloca_initialize(gpu_device_t* device);
void gpu_device_alloca_deinitialize(gpu_device_t* device);
// A queue-ordered buffer's memory when the buffer goes (gpu_buffer.c).
void gpu_buffer_queue_ordered_free(gpu_device_t* device, gpu_buffer_t* buffer);
// WORKER thread: a use of queue-ordered |buffer| (work, or its dealloca)
// about to issue on |queue|: when its pooled allocation was enqueued on
// another queue's stream, |queue|'s stream waits for it there first. The
// vendor pool orders an allocation only within its stream; a use ordered
// after the alloca's signals is ordered anyway, but one the host reached
// without a device edge (a semaphore signaled from the host, no waits at
// all) would otherwise touch or free memory not allocated yet.
hal_status_t gpu_alloca_order_use(gpu_queue_t* queue, gpu_buffer_t* buffer);

// Returns a queue-ordered buffer's allocation event to the device's pool.
void gpu_alloca_release_event(gpu_buffer_t* buffer);

// Makes the device's context current on the calling thread.
static inline hal_status_t gpu_device_make_current(gpu_device_t* device) {
  return device->adapter->ops->make_current(device->adapter, device->context);
}

// Executables (gpu_executable.c).
const char* gpu_device_executable_formats(const gpu_device_t* device);
hal_status_t gpu_executable_create(gpu_device_t* device,
                                   const hal_executable_params_t* params,
                                   hal_executable_t** out_executable);

// The vendor launch of a recorded dispatch. |args| point into this struct
// and into the op, so it lives as long as the launch call (vendors copy
// kernelParams at launch and at kernel-node creation). The slots past the
// dispatch's arguments are NULL, one at least: a runtime that reads as
// many as the kernel takes, for an entry point declared with fewer (HIP
// cannot check a layout at creation), reads NULL where it can refuse the
// launch (the virtual GPU does), never what an earlier dispatch left.
typedef struct gpu_dispatch_args_t {
  gpu_device_ptr_t addresses[HAL_MAX_DISPATCH_BINDINGS];
  void* args[HAL_MAX_DISPATCH_BINDINGS + HAL_MAX_DISPATCH_CONSTANTS + 1];
  gpu_kernel_launch_t launch;
} gpu_dispatch_args_t;
// FAILED_PRECONDITION for a binding whose queue-ordered memory is not alive.
hal_status_t gpu_dispatch_prepare(const hal_op_t* op, gpu_dispatch_args_t* out);

//===----------------------------------------------------------------------===//
// Tracing's device spans (gpu_trace.c)
//===----------------------------------------------------------------------===//

// At device creation, queues made, context current: the device tracks and
// the clock calibration (no-op unless HAL_TRACE is on). Tracing never fails
// the creation: a calibration that fails leaves the device without device
// spans, its track saying why (a loss met there is the device's).
void gpu_device_trace_initialize(gpu_device_t* device);
// At device destruction, context current, before the context closes.
void gpu_device_trace_deinitialize(gpu_device_t* device);
// WORKER: a submission's spans (NULL when the device records none).
gpu_trace_spans_t* gpu_trace_spans_create(gpu_queue_t* queue);
// WORKER: records a timed event on |queue|'s stream; its index, or
// UINT32_MAX when |trace| is NULL or the event could not be made.
uint32_t gpu_trace_mark(gpu_queue_t* queue, gpu_trace_spans_t* trace);
// The last mark made (UINT32_MAX: none).
uint32_t gpu_trace_last_mark(const gpu_trace_spans_t* trace);
// A span from mark |begin| to mark |end|: |level| 0 the submission, 1 a
// command buffer, 2 an op; |name| a literal; |index| its place in its list.
void gpu_trace_span(gpu_trace_spans_t* trace, uint32_t begin, uint32_t end,
                    uint8_t level, const char* name, uint32_t index);
// An issue that failed: its spans are not written (the events still go
// at finish).
void gpu_trace_spans_discard(gpu_trace_spans_t* trace);
// When the device is done with the submission: writes its spans if it
// |completed| OK (a span whose times cannot be read is counted as dropped)
// and frees |trace| (NULL: no-op).
void gpu_trace_spans_finish(gpu_queue_t* queue, gpu_trace_spans_t* trace,
                            bool completed);

//===----------------------------------------------------------------------===//
// Plugins
//===----------------------------------------------------------------------===//

// Defines a plugin's one exported entry point.
#define GPU_DEFINE_PLUGIN(NAME, VENDOR, STRATEGY, DESCRIPTION)               \
  static hal_status_t gpu_plugin_create_driver(hal_allocator_t allocator,    \
                                               hal_driver_t** out_driver) {  \
    gpu_driver_params_t params = {NAME, VENDOR, STRATEGY};                   \
    return gpu_driver_create(&params, allocator, out_driver);                \
  }                                                                          \
  static const hal_plugin_t gpu_plugin = {                                   \
      .abi_version = HAL_PLUGIN_ABI_VERSION,                                 \
      .struct_size = sizeof(hal_plugin_t),                                   \
      .driver_name = NAME,                                                   \
      .description = DESCRIPTION,                                            \
      .create_driver = gpu_plugin_create_driver,                             \
  };                                                                         \
  HAL_PLUGIN_EXPORT const hal_plugin_t* hal_plugin_query(uint32_t version);  \
  HAL_PLUGIN_EXPORT const hal_plugin_t* hal_plugin_query(uint32_t version) { \
    (void)version;                                                           \
    return &gpu_plugin;                                                      \
  }

HAL_EXTERN_C_END

#endif  // DRIVERS_GPU_CORE_GPU_CORE_H_
