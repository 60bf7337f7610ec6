// The virtual GPU core: everything both facades share.
//
// The CUDA and HIP facades are thin translations onto this API: they convert
// the vendor's argument shapes into the structs below, call one core
// function, and map the returned vgpu_status onto the vendor's error code.
// No CUDA- or HIP-specific logic lives in the core, and no semantics live in
// the facades.
//
// Handles. Every object the vendor API hands out (contexts, streams, events,
// graphs, graph nodes, executable graphs, modules, functions) is a 64-bit
// handle that indexes a registry slot and carries the slot's generation; it
// is never a pointer the core dereferences. A handle of the wrong kind, a
// destroyed one or garbage is detected and answered with
// VGPU_ERR_INVALID_HANDLE.
//
// Threads. Every function here may be called from any thread, except where
// noted. Work queued on streams runs on the runtime's worker threads
// (sched.c); kernel grids run on the kernel threads (kernel.c).
#ifndef VGPU_CORE_H_
#define VGPU_CORE_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vgpu/vgpu_module.h"

typedef enum vgpu_status {
  VGPU_OK = 0,
  VGPU_ERR_INVALID_VALUE,
  VGPU_ERR_OUT_OF_MEMORY,
  VGPU_ERR_NOT_INITIALIZED,
  VGPU_ERR_NO_DEVICE,
  VGPU_ERR_INVALID_DEVICE,
  VGPU_ERR_INVALID_CONTEXT,
  VGPU_ERR_INVALID_IMAGE,
  VGPU_ERR_INVALID_HANDLE,
  VGPU_ERR_NOT_FOUND,
  VGPU_ERR_NOT_READY,
  // The device is lost (sticky): CUDA_ERROR_LAUNCH_FAILED /
  // hipErrorLaunchFailure.
  VGPU_ERR_DEVICE_LOST,
  // API call from inside a host function or host node (K1).
  VGPU_ERR_NOT_PERMITTED,
  // Destroying or freeing something queued work still uses.
  VGPU_ERR_IN_USE,
  VGPU_ERR_NOT_SUPPORTED,
  VGPU_ERR_GRAPH_UPDATE,
  // A host wait ran past VGPU_MAX_WAIT_MS.
  VGPU_ERR_TIMEOUT,
  // An injected fault: the facade returns the vendor code it was given.
  VGPU_ERR_FAULT,
  VGPU_ERR_UNKNOWN,
} vgpu_status;

// Special stream handle values: the NULL stream and the vendors' legacy and
// per-thread default streams all mean "the default stream of the device".
#define VGPU_STREAM_IS_DEFAULT(h) ((h) <= 2u)

// --- lifetime, configuration, diagnostics (lifetime.c, config.c, report.c)

// A vendor error code and its name (the facades' generated tables).
typedef struct vgpu_code_name {
  int code;
  const char* name;
} vgpu_code_name;

// What a facade tells the core about itself, at load time.
typedef struct vgpu_facade {
  const char* vendor;  // "cuda" or "hip", used in messages
  // The vendor's error codes and names (generated from its header): what
  // a VGPU_FAULTS rule may name besides a number.
  const struct vgpu_code_name* codes;
  size_t code_count;
  int lost_code;     // vendor code of a lost device
  int unknown_code;  // default code of an injected fault
  // Every name the facade passes to vgpu_api_enter, sorted by strcmp
  // (generated from its sources by gen_call_table.py): what a VGPU_FAULTS
  // rule may name and what VGPU_CALL_COUNTS counts.
  const char* const* calls;
  size_t call_count;
} vgpu_facade;

// Called from each facade's constructor and destructor.
void vgpu_library_load(const vgpu_facade* facade);
void vgpu_library_unload(void);

// Defines a facade from its generated tables (ERRORS and CALLS are the
// X-macros of the vendor's error enum and of the facade's entry points)
// and registers it with the core for the library's lifetime: loaded by the
// library's constructor, unloaded by its destructor.
#define VGPU_FACADE_NAME_ENTRY_(n) {(int)(n), #n},
#define VGPU_FACADE_CALL_ENTRY_(n) n,
#define VGPU_FACADE_DEFINE(vendor_name, ERRORS, CALLS, lost, unknown)         \
  static const vgpu_code_name vgpu_facade_codes[] = {                         \
      ERRORS(VGPU_FACADE_NAME_ENTRY_)};                                       \
  static const char* const vgpu_facade_calls[] = {                            \
      CALLS(VGPU_FACADE_CALL_ENTRY_)};                                        \
  static const vgpu_facade vgpu_facade_self = {                               \
      .vendor = (vendor_name),                                                \
      .codes = vgpu_facade_codes,                                             \
      .code_count = sizeof(vgpu_facade_codes) / sizeof(vgpu_facade_codes[0]), \
      .lost_code = (lost),                                                    \
      .unknown_code = (unknown),                                              \
      .calls = vgpu_facade_calls,                                             \
      .call_count = sizeof(vgpu_facade_calls) / sizeof(vgpu_facade_calls[0]), \
  };                                                                          \
  __attribute__((constructor)) static void vgpu_facade_load(void) {           \
    vgpu_library_load(&vgpu_facade_self);                                     \
  }                                                                           \
  __attribute__((destructor)) static void vgpu_facade_unload(void) {          \
    vgpu_library_unload();                                                    \
  }

// Calls in flight and the unload (lifetime.c). Every entry point that
// touches the runtime's state counts itself in for its whole body
// (VGPU_CALL_GUARD, first in the body). Once the unload began, a new call
// returns the vendor's "shutting down" code and touches nothing; an unload
// that finds calls in flight on other threads (a process exiting while its
// threads are still in the runtime, as the real runtimes allow) leaves
// everything as it is for the process's end instead of freeing it under
// them.
typedef struct vgpu_call_guard {
  bool entered;
} vgpu_call_guard;
bool vgpu_call_begin(void);
void vgpu_call_end(vgpu_call_guard* guard);
#define VGPU_CALL_GUARD(shutting_down)                    \
  __attribute__((cleanup(vgpu_call_end)))                 \
  vgpu_call_guard vgpu_call_guard_ = {vgpu_call_begin()}; \
  if (!vgpu_call_guard_.entered)                          \
  return (shutting_down)

// Every exported entry point starts here. Records |call| for messages, then
//   - returns VGPU_ERR_NOT_PERMITTED when called from inside a host function
//     or host node in strict mode (K1);
//   - returns VGPU_ERR_FAULT with *fault_code set when VGPU_FAULTS says this
//     call fails (a device-loss fault also marks lost the device the rule
//     names, or else the calling thread's device, from |current_device|);
//   - returns VGPU_OK otherwise.
vgpu_status vgpu_api_enter(const char* call, int (*current_device)(void),
                           int* fault_code);

// True when strict mode is on (VGPU_STRICT, default on).
bool vgpu_strict(void);
// Whether |name| is listed in VGPU_HIDE_SYMBOLS.
bool vgpu_symbol_hidden(const char* name);

// --- devices and contexts (device.c)

typedef struct vgpu_device_info {
  char name[64];
  size_t total_memory;
  int ordinal;
  int multiprocessor_count;
  int clock_rate_khz;
  int max_threads_per_block;
  int max_block_dim[3];
  int max_grid_dim[3];
  int shared_memory_per_block;
  int total_constant_memory;
  int warp_size;
  int registers_per_block;
  int compute_major;
  int compute_minor;
  int pci_bus_id;
  int l2_cache_size;
} vgpu_device_info;

int vgpu_device_count(void);
// VGPU_ERR_INVALID_DEVICE for a bad ordinal, VGPU_ERR_DEVICE_LOST for a lost
// device.
vgpu_status vgpu_device_check(int ordinal);
// VGPU_ERR_INVALID_DEVICE for a bad ordinal only: the check of the queries
// of a device's fixed properties (name, memory size, UUID, attributes),
// which a lost device still answers, as CUDA answers them for a device
// whose context met a sticky error, so a program can still list it.
vgpu_status vgpu_device_check_ordinal(int ordinal);
const vgpu_device_info* vgpu_device_info_get(int ordinal);
vgpu_status vgpu_device_synchronize(int ordinal);
vgpu_status vgpu_device_memory_info(int ordinal, size_t* free_bytes,
                                    size_t* total_bytes);

#define VGPU_UUID_SIZE 16
// The device's UUID (cuDeviceGetUuid, hipDeviceGetUuid) into |out|: the
// same for a device whichever facade asks, the same in every run, distinct
// per device, never the nil UUID. Fails as vgpu_device_check_ordinal().
vgpu_status vgpu_device_uuid(int ordinal, uint8_t out[VGPU_UUID_SIZE]);

// Primary contexts (one per device, reference counted by retain/release).
vgpu_status vgpu_context_primary_retain(int ordinal, uint64_t* out);
vgpu_status vgpu_context_primary_release(int ordinal);
// Resolves a context handle to its device; VGPU_ERR_INVALID_CONTEXT when
// the handle is not a live context.
vgpu_status vgpu_context_device(uint64_t ctx, int* ordinal);

// --- memory (memory.c)

typedef enum vgpu_ptr_kind {
  VGPU_PTR_ANY = 0,  // unified addressing: whatever it is
  VGPU_PTR_DEVICE,   // must lie inside a live device allocation
  VGPU_PTR_HOST,     // host memory (pinned or pageable)
} vgpu_ptr_kind;

// A 1D/2D/3D copy of |width| bytes by |height| rows by |depth| slices.
typedef struct vgpu_copy {
  void* dst;
  const void* src;
  size_t width, height, depth;
  size_t dst_pitch, dst_slice;
  size_t src_pitch, src_slice;
  vgpu_ptr_kind dst_kind, src_kind;
} vgpu_copy;

// A 1D/2D fill of |width| elements of |elem| bytes (1, 2 or 4) by |height|
// rows |pitch| bytes apart.
typedef struct vgpu_fill {
  void* dst;
  uint32_t value;
  unsigned elem;
  size_t width, height, pitch;
} vgpu_fill;

void vgpu_copy_init_1d(vgpu_copy* c, void* dst, vgpu_ptr_kind dst_kind,
                       const void* src, vgpu_ptr_kind src_kind, size_t bytes);
void vgpu_fill_init_1d(vgpu_fill* f, void* dst, uint32_t value, unsigned elem,
                       size_t count);

vgpu_status vgpu_mem_alloc(int ordinal, size_t bytes, bool host, void** out);
// |host| says which kind the caller frees (pinned host or device memory).
vgpu_status vgpu_mem_free(void* ptr, bool host);
// Which kind a pointer is: VGPU_PTR_DEVICE inside a live device
// allocation, VGPU_PTR_HOST otherwise; |*ordinal| its device (or -1).
vgpu_ptr_kind vgpu_mem_classify(const void* ptr, int* ordinal);

// --- stream-ordered allocation (pool.c)
//
// Pools of device memory whose allocations and frees run in stream order
// (cuMemAllocFromPoolAsync / cuMemFreeAsync, hipMallocFromPoolAsync /
// hipFreeAsync). The address is chosen at the call; the memory is alive
// from when the stream runs the allocation until it runs the free. Strict
// mode reports work that reaches the memory outside that life (and skips
// it), a free that runs while queued work still uses the memory, and work
// queued after the free. A block returns to its pool when its free ran; an
// allocation on the stream of a queued free may take that block at once
// (it runs after the free). Idle blocks above the release threshold go back
// to the device at once. docs/vgpu.md has the rules.

typedef enum vgpu_pool_attr {
  VGPU_POOL_RELEASE_THRESHOLD = 0,  // bytes kept idle; settable
  VGPU_POOL_RESERVED_CURRENT,       // bytes of blocks the pool holds
  VGPU_POOL_RESERVED_HIGH,          // high mark; set to 0 resets it
  VGPU_POOL_USED_CURRENT,           // bytes of blocks allocations hold
  VGPU_POOL_USED_HIGH,              // high mark; set to 0 resets it
  VGPU_POOL_REUSE,                  // the reuse policies: accepted, always 1
} vgpu_pool_attr;

vgpu_status vgpu_pool_create(int ordinal, uint64_t* out);
// The pool must not be a device's default pool. Its outstanding blocks go
// back to the device as their frees run.
vgpu_status vgpu_pool_destroy(uint64_t pool);
vgpu_status vgpu_pool_default(int ordinal, uint64_t* out);
// The pool cuMemAllocAsync / hipMallocAsync take on |ordinal| (the default
// pool until set).
vgpu_status vgpu_pool_current(int ordinal, uint64_t* out);
vgpu_status vgpu_pool_set_current(int ordinal, uint64_t pool);
vgpu_status vgpu_pool_set_attribute(uint64_t pool, vgpu_pool_attr attr,
                                    uint64_t value);
vgpu_status vgpu_pool_get_attribute(uint64_t pool, vgpu_pool_attr attr,
                                    uint64_t* out);
// Releases idle blocks until the pool holds at most |keep_bytes|.
vgpu_status vgpu_pool_trim(uint64_t pool, size_t keep_bytes);
// |bytes| from |pool| (0: the current pool of the stream's device), alive
// once |stream| runs the allocation. *out is set at the call.
vgpu_status vgpu_alloc_async(uint64_t pool, size_t bytes, uint64_t stream,
                             int ordinal, void** out);
// Frees a stream-ordered allocation once |stream| runs the free.
vgpu_status vgpu_free_async(void* ptr, uint64_t stream, int ordinal);

// --- streams, events, host functions (stream.c, event.c)

// A host function as the vendor hands it over. The facade supplies
// |invoke|, which casts |fn| back to the vendor's type and calls it; the
// core calls invoke on a runtime thread, in stream order, with the status of
// the device (VGPU_OK, or VGPU_ERR_DEVICE_LOST).
typedef struct vgpu_host_call {
  void (*invoke)(const struct vgpu_host_call* call, vgpu_status status);
  void (*fn)(void);
  void* user;
  uint64_t stream;
} vgpu_host_call;

// Streams: |stream| may be a default-stream value (0, 1, 2), meaning the
// default stream of |ordinal|. |nonblocking| streams do not synchronize with
// the default stream.
vgpu_status vgpu_stream_create(int ordinal, bool nonblocking, int priority,
                               uint64_t* out);
vgpu_status vgpu_stream_destroy(uint64_t stream);
vgpu_status vgpu_stream_synchronize(uint64_t stream, int ordinal);
vgpu_status vgpu_stream_query(uint64_t stream, int ordinal);
// The device of |stream|, also when it is lost.
vgpu_status vgpu_stream_device(uint64_t stream, int ordinal, int* out);
vgpu_status vgpu_stream_wait_event(uint64_t stream, int ordinal,
                                   uint64_t event);
vgpu_status vgpu_stream_host_call(uint64_t stream, int ordinal,
                                  const vgpu_host_call* call);
// Copies and fills; |sync| ones run on the default stream and return when
// done (but see VGPU_PAGEABLE_COPY_DELAY_US in stream.c).
vgpu_status vgpu_stream_copy(uint64_t stream, int ordinal,
                             const vgpu_copy* copy, bool sync);
vgpu_status vgpu_stream_fill(uint64_t stream, int ordinal,
                             const vgpu_fill* fill, bool sync);

vgpu_status vgpu_event_create(int ordinal, unsigned flags, uint64_t* out);
vgpu_status vgpu_event_record(uint64_t event, uint64_t stream, int ordinal);
vgpu_status vgpu_event_query(uint64_t event);
vgpu_status vgpu_event_synchronize(uint64_t event);
vgpu_status vgpu_event_elapsed_ms(uint64_t start, uint64_t end, float* ms);
vgpu_status vgpu_event_destroy(uint64_t event);

// --- modules and kernels (module.c, kernel.c)

vgpu_status vgpu_module_load_image(int ordinal, const void* image,
                                   uint64_t* out);
vgpu_status vgpu_module_load_file(int ordinal, const char* path, uint64_t* out);
vgpu_status vgpu_module_unload(uint64_t module);
vgpu_status vgpu_module_function(uint64_t module, const char* name,
                                 uint64_t* out);
// Argument |index| of |function|: its size and its offset in a packed
// argument buffer (each argument aligned to its size, at most 8).
// VGPU_ERR_INVALID_VALUE past the last argument (how a caller learns the
// count: not a misuse).
vgpu_status vgpu_function_param(uint64_t function, size_t index,
                                size_t* out_offset, size_t* out_size);

// A kernel launch as the caller describes it. Arguments come either from
// |params| (one pointer per argument) or from a packed |buffer| of
// |buffer_size| bytes (each argument aligned to its size, at most 8).
typedef struct vgpu_launch_desc {
  uint64_t function;
  vgpu_dim3 grid;
  vgpu_dim3 block;
  unsigned shared_bytes;
  void** params;
  const void* buffer;
  size_t buffer_size;
} vgpu_launch_desc;

vgpu_status vgpu_kernel_launch(uint64_t stream, int ordinal,
                               const vgpu_launch_desc* desc);

// --- graphs (graph.c, graph_exec.c)

typedef enum vgpu_node_type {
  VGPU_NODE_EMPTY = 0,
  VGPU_NODE_COPY,
  VGPU_NODE_FILL,
  VGPU_NODE_KERNEL,
  VGPU_NODE_HOST,
} vgpu_node_type;

typedef struct vgpu_node_desc {
  vgpu_node_type type;
  vgpu_copy copy;
  vgpu_fill fill;
  vgpu_launch_desc launch;
  vgpu_host_call host;
} vgpu_node_desc;

typedef enum vgpu_update_result {
  VGPU_UPDATE_OK = 0,
  VGPU_UPDATE_ERROR,
  VGPU_UPDATE_TOPOLOGY_CHANGED,
  VGPU_UPDATE_NODE_TYPE_CHANGED,
  VGPU_UPDATE_PARAMETERS_CHANGED,
} vgpu_update_result;

vgpu_status vgpu_graph_create(uint64_t* out);
vgpu_status vgpu_graph_destroy(uint64_t graph);
vgpu_status vgpu_graph_add_node(uint64_t graph, const uint64_t* deps,
                                size_t dep_count, const vgpu_node_desc* desc,
                                uint64_t* out);
vgpu_status vgpu_graph_instantiate(uint64_t graph, uint64_t* out);
vgpu_status vgpu_graph_exec_update(uint64_t exec, uint64_t graph,
                                   vgpu_update_result* result,
                                   uint64_t* error_node, uint64_t* error_from);
vgpu_status vgpu_graph_launch(uint64_t exec, uint64_t stream, int ordinal);
vgpu_status vgpu_graph_exec_destroy(uint64_t exec);

// The code named |name| in |table|, or |name| read as a number; false if
// neither.
bool vgpu_code_from_name(const vgpu_code_name* table, size_t count,
                         const char* name, int* code);
// The name of |code| in |table|, or NULL.
const char* vgpu_name_of_code(const vgpu_code_name* table, size_t count,
                              int code);

// ------------------------------------------------------------ collectives

// Communicators of ranks in this process, and their collectives in stream
// order (ccl.c; docs/collectives.md has the semantics and the failures).
// Types and reductions are NCCL's codes (nccl.h).
#define VGPU_CCL_ID_BYTES 128
#define VGPU_CCL_MAX_RANKS 64

typedef enum vgpu_ccl_kind {
  VGPU_CCL_ALL_REDUCE = 0,
  VGPU_CCL_BROADCAST,
  VGPU_CCL_REDUCE,
  VGPU_CCL_ALL_GATHER,      // |count| per rank in, count * ranks out
  VGPU_CCL_REDUCE_SCATTER,  // count * ranks in, |count| per rank out
  VGPU_CCL_SEND,            // to |peer|
  VGPU_CCL_RECV,            // from |peer|
} vgpu_ccl_kind;

// One rank's call. |send| and |recv| stay valid until it completed.
typedef struct vgpu_ccl_call {
  vgpu_ccl_kind kind;
  const void* send;
  void* recv;
  size_t count;
  int type;       // ncclDataType_t
  int reduction;  // ncclRedOp_t (reductions only)
  int peer;       // the root (broadcast, reduce) or the peer (send, recv)
} vgpu_ccl_call;

typedef struct vgpu_ccl_comm vgpu_ccl_comm;

// Rank |rank| of |rank_count| of the communicator of |id|, on |device|:
// returns once every rank joined, or fails after VGPU_MAX_WAIT_MS (60 s
// when it is 0, unbounded elsewhere) naming the ranks that never came. |error|
// gets the message of any failure.
vgpu_status vgpu_ccl_comm_init(const uint8_t id[VGPU_CCL_ID_BYTES],
                               int rank_count, int rank, int device,
                               vgpu_ccl_comm** out, char* error,
                               size_t error_size);
// Every rank of a new communicator at once, rank i on |devices|[i]
// (ncclCommInitAll).
vgpu_status vgpu_ccl_comm_init_all(const uint8_t id[VGPU_CCL_ID_BYTES],
                                   int rank_count, const int* devices,
                                   vgpu_ccl_comm** out_comms, char* error,
                                   size_t error_size);
// Waits (bounded by VGPU_MAX_WAIT_MS) until no work of |comm| is queued on
// a stream, then leaves and frees it. |abort|: first fails every
// collective of the communicator not yet completed (ncclCommAbort).
vgpu_status vgpu_ccl_comm_destroy(vgpu_ccl_comm* comm, bool abort);
int vgpu_ccl_comm_device(const vgpu_ccl_comm* comm);
// ncclCommSplit: every rank of |comm| calls it (in the same order as its
// other splits); the ranks that pass one |color| (>= 0) make a new
// communicator on |comm|'s device, ranked by |key|, then by their rank in
// |comm|; |color| -1 (NCCL_SPLIT_NOCOLOR) makes none (*out NULL). Works
// across processes like a join; bounded like one.
vgpu_status vgpu_ccl_comm_split(vgpu_ccl_comm* comm, int color, int key,
                                vgpu_ccl_comm** out, char* error,
                                size_t error_size);
int vgpu_ccl_rank(const vgpu_ccl_comm* comm);
int vgpu_ccl_rank_count(const vgpu_ccl_comm* comm);
// The communicator's first error (VGPU_OK: none) and its message.
vgpu_status vgpu_ccl_async_error(vgpu_ccl_comm* comm, char* message,
                                 size_t message_size);
// Checks |call| (its buffers are device memory of the communicator's
// device, in bounds, in strict mode) and enqueues it on |stream| (of the
// communicator's device): when the stream reaches it, it meets the other
// ranks' calls, and the stream's later work waits for the collective
// without holding a thread. A collective that fails (ranks that disagree,
// an abort, a rank that left) fails the communicator, not the stream:
// vgpu_ccl_async_error says so.
vgpu_status vgpu_ccl_enqueue(vgpu_ccl_comm* comm, const vgpu_ccl_call* call,
                             uint64_t stream, char* error, size_t error_size);

// ncclGroupStart / ncclGroupEnd on the calling thread (they nest). Inside a
// group each call is checked at once but held back to the outermost end,
// which puts every call on its stream, then makes each stream wait for its
// calls: every call of the group arrives before any of its streams waits,
// so a rank that sends, then receives, meets a peer that does the same
// instead of waiting for it forever.
void vgpu_ccl_group_start(void);
// VGPU_ERR_INVALID_VALUE: an end without a start (nothing done).
vgpu_status vgpu_ccl_group_end(void);
// An end that fails (an injected fault): the group ends all the same, and
// at the outermost end its held calls are dropped, none put on a stream.
// Without a group, nothing.
void vgpu_ccl_group_drop(void);
// Whether the calling thread is inside a group.
bool vgpu_ccl_group_is_open(void);

#endif  // VGPU_CORE_H_
