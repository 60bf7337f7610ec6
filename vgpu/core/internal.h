// Internal structures of the virtual GPU core. Not seen by the facades.
//
// Lock order (outer to inner); never take an outer lock while holding an
// inner one:
//   graph/exec mutex -> stream mutex -> scheduler mutex
//   stream mutex -> mark mutex            (registering a waiter,
//                                          completing a MARK operation)
//   registry mutex and memory mutex are leaves (nothing is taken inside).
// Mark completion runs its waiters' callbacks after dropping the mark mutex
// (the T2 rule of the sync contract, applied here).
#ifndef VGPU_INTERNAL_H_
#define VGPU_INTERNAL_H_

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>

#include "vgpu_core.h"

#define VGPU_MAX_DEVICES 16

// ---------------------------------------------------------------- config.c

typedef enum vgpu_fault_trigger {
  VGPU_FAULT_ALWAYS = 0,
  VGPU_FAULT_NTH,
  VGPU_FAULT_PROB,
} vgpu_fault_trigger;

typedef struct vgpu_fault_rule {
  char call[64];  // API name, or "*"
  vgpu_fault_trigger trigger;
  uint64_t nth;
  double prob;
  uint64_t times;   // maximum number of firings (0: unlimited)
  int code;         // vendor code returned
  bool lost;        // device loss
  int lost_device;  // -1: the calling thread's device
  atomic_uint_fast64_t calls;
  atomic_uint_fast64_t fired;
} vgpu_fault_rule;

#define VGPU_MAX_FAULT_RULES 16

typedef struct vgpu_config {
  int devices;
  size_t device_memory;
  bool strict;
  bool abort_on_misuse;
  // VGPU_FAIL_EXIT_CODE: when non-zero, a process in which strict mode
  // reported any misuse or leak exits with this code at unload.
  int fail_exit_code;
  uint64_t seed;
  unsigned jitter_us;
  // VGPU_PAGEABLE_COPY_DELAY_US: when non-zero, a synchronous copy from
  // pageable host memory to device memory returns once the source is
  // staged, and lands this long later on the default stream (stream.c).
  unsigned pageable_copy_delay_us;
  int stream_threads;
  int kernel_threads;
  unsigned max_wait_ms;
  // How long a collective's join or meeting waits for its ranks
  // (VGPU_CCL_TIMEOUT_MS; 0: VGPU_MAX_WAIT_MS, else 60 s).
  unsigned ccl_timeout_ms;
  char hide_symbols[1024];
  vgpu_fault_rule faults[VGPU_MAX_FAULT_RULES];
  int fault_count;
  // VGPU_CALL_COUNTS: where the per-call counts go at unload ("" when off),
  // and the counts, indexed like the facade's call table (NULL when off).
  char call_counts_path[1024];
  atomic_uint_fast64_t* call_counts;
} vgpu_config;

extern vgpu_config vgpu_cfg;
extern const vgpu_facade* vgpu_facade_current;

// Reads the environment; errors in knobs are reported on stderr and the
// knob keeps its default, except a bad VGPU_FAULTS rule, which ends the
// process with EX_CONFIG (docs/vgpu.md).
void vgpu_config_load(const vgpu_facade* facade);
// Index of |call| in |facade|'s call table, or -1 if it has no such call.
int vgpu_call_index(const vgpu_facade* facade, const char* call);
// Writes the VGPU_CALL_COUNTS file (if on) and frees the counts.
void vgpu_call_counts_flush(void);
// Deterministic hash of the seed and up to three values (splitmix64).
uint64_t vgpu_hash(uint64_t a, uint64_t b, uint64_t c);
// Sleeps the jitter for operation (a, b), if jitter is on.
void vgpu_jitter(uint64_t a, uint64_t b);
// Sleeps |us| microseconds (EINTR resumed).
void vgpu_sleep_us(uint64_t us);
uint64_t vgpu_now_ns(void);
// Strict-mode misuse reports so far (for VGPU_FAIL_EXIT_CODE).
extern atomic_uint_fast64_t vgpu_misuse_count;

// ---------------------------------------------------------------- report.c

// Set while a runtime thread runs a host function or host node (K1).
extern _Thread_local int vgpu_tls_in_callback;
// The API call this thread is in, for messages.
extern _Thread_local const char* vgpu_tls_call;

// Reports misuse: in strict mode prints "vgpu[vendor] strict: CALL: ..."
// and aborts when VGPU_ABORT_ON_MISUSE is set. Returns |status|.
vgpu_status vgpu_misuse(vgpu_status status, const char* fmt, ...)
    __attribute__((format(printf, 2, 3)));
// Unconditional diagnostic line on stderr.
void vgpu_log(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

// --------------------------------------------------------------- object.c

typedef enum vgpu_kind {
  VGPU_KIND_NONE = 0,
  VGPU_KIND_CONTEXT,
  VGPU_KIND_STREAM,
  VGPU_KIND_EVENT,
  VGPU_KIND_GRAPH,
  VGPU_KIND_NODE,
  VGPU_KIND_EXEC,
  VGPU_KIND_MODULE,
  VGPU_KIND_FUNCTION,
  VGPU_KIND_POOL,
  VGPU_KIND_COUNT,
} vgpu_kind;

// Base of every handle-backed object. The registry holds one reference
// while the handle is live; lookups return a new reference.
typedef struct vgpu_object {
  atomic_int refs;
  vgpu_kind kind;
  uint64_t handle;      // 0 once unregistered
  const char* creator;  // the API call that created it
  void (*free_fn)(struct vgpu_object* obj);
} vgpu_object;

void vgpu_object_init(vgpu_object* obj, vgpu_kind kind,
                      void (*free_fn)(vgpu_object*));
void vgpu_object_retain(vgpu_object* obj);
void vgpu_object_release(vgpu_object* obj);
const char* vgpu_kind_name(vgpu_kind kind);

vgpu_status vgpu_handle_register(vgpu_object* obj);
// Removes the handle (later lookups fail) and drops the registry reference.
void vgpu_handle_unregister(vgpu_object* obj);
// Returns a new reference to the live object behind |handle|, or
// VGPU_ERR_INVALID_HANDLE (reported as misuse in strict mode).
vgpu_status vgpu_handle_lookup(uint64_t handle, vgpu_kind kind,
                               vgpu_object** out);
// Calls |fn| on every live object of |kind| (registry locked: |fn| must not
// call back into the registry). Returns the count.
size_t vgpu_handle_for_each(vgpu_kind kind, void (*fn)(vgpu_object*, void*),
                            void* arg);
// Unregisters every live object of |kind| (teardown).
void vgpu_handle_unregister_all(vgpu_kind kind);
void vgpu_registry_teardown(void);

// ----------------------------------------------------------------- mark.c

// A completion point in a stream: what an event record captures. Marks are
// reference counted; |done| never goes back to false.
typedef struct vgpu_mark_waiter {
  struct vgpu_mark_waiter* next;
  void (*fn)(struct vgpu_mark_waiter* waiter);
} vgpu_mark_waiter;

// A free list of blocks of one size, kept for reuse (at most |limit|): a
// warm stream then allocates nothing per operation (an op and its mark),
// as a real runtime's pools do. Thread-safe; the first word of a free block
// is the link.
typedef struct vgpu_bin {
  pthread_mutex_t mu;
  void* head;
  int count;
  int limit;
} vgpu_bin;
#define VGPU_BIN_INIT(n) \
  { PTHREAD_MUTEX_INITIALIZER, NULL, 0, (n) }
// A zeroed block of |size| bytes: a kept one, or a new one (NULL when out of
// memory).
void* vgpu_bin_take(vgpu_bin* bin, size_t size);
// Keeps |block| for reuse, or frees it when the bin is full.
void vgpu_bin_put(vgpu_bin* bin, void* block);

typedef struct vgpu_mark {
  atomic_int refs;
  atomic_bool done;  // release-stored under |mu|, readable without it
  pthread_mutex_t mu;
  pthread_cond_t cv;
  vgpu_status status;  // of the device when it completed
  uint64_t time_ns;
  int device;
  vgpu_mark_waiter* waiters;  // guarded by mu
} vgpu_mark;

vgpu_mark* vgpu_mark_create(int device);
void vgpu_mark_retain(vgpu_mark* mark);
void vgpu_mark_release(vgpu_mark* mark);
bool vgpu_mark_done(vgpu_mark* mark);
void vgpu_mark_complete(vgpu_mark* mark, vgpu_status status);
// vgpu_mark_complete in two halves: completes |mark| (done, host waiters
// woken) and returns its stream waiters, whose callbacks
// vgpu_mark_run_waiters runs. The first half may run under a stream lock
// (stream mutex -> mark mutex); the second must not (callbacks take stream
// locks).
vgpu_mark_waiter* vgpu_mark_complete_deferred(vgpu_mark* mark,
                                              vgpu_status status);
void vgpu_mark_run_waiters(vgpu_mark_waiter* waiters);
// Registers |waiter| unless the mark is already done; returns true when
// registered (|waiter->fn| will run once, on the completing thread, after
// the mark's lock is dropped).
bool vgpu_mark_add_waiter(vgpu_mark* mark, vgpu_mark_waiter* waiter);
// Removes a registered waiter that has not run; true if removed.
bool vgpu_mark_remove_waiter(vgpu_mark* mark, vgpu_mark_waiter* waiter);
// Blocks until done (bounded by VGPU_MAX_WAIT_MS); returns the mark status.
vgpu_status vgpu_mark_wait(vgpu_mark* mark, const char* what, uint64_t handle);

// Waits on |cv| with |mu| held, bounded by VGPU_MAX_WAIT_MS. Returns false
// on timeout.
bool vgpu_cond_wait_bounded(pthread_cond_t* cv, pthread_mutex_t* mu,
                            uint64_t deadline_ns);
uint64_t vgpu_wait_deadline(void);
void vgpu_cond_init(pthread_cond_t* cv);

// --------------------------------------------------------------- device.c

typedef struct vgpu_stream vgpu_stream;

typedef struct vgpu_device {
  vgpu_device_info info;
  atomic_bool lost;
  atomic_size_t used_memory;
  // The default (legacy NULL) stream: created on first use.
  pthread_mutex_t mu;
  vgpu_stream* default_stream;  // guarded by mu
  // Every stream of this device (no references), for device synchronize
  // and the legacy default stream's implicit ordering. Guarded by mu.
  vgpu_stream** streams;
  size_t stream_count, stream_cap;
  int primary_refs;      // guarded by mu
  vgpu_object* primary;  // the primary context object, guarded by mu
} vgpu_device;

extern vgpu_device vgpu_devices[VGPU_MAX_DEVICES];
extern int vgpu_device_total;

void vgpu_devices_init(void);
void vgpu_devices_teardown(void);
void vgpu_device_mark_lost(int ordinal, const char* why);
bool vgpu_device_is_lost(int ordinal);
// Returns the default stream of |ordinal| with a new reference.
vgpu_status vgpu_device_default_stream(int ordinal, vgpu_stream** out);
// The same on a lost device too (for synchronizing calls, which drain it).
vgpu_status vgpu_device_default_stream_any(int ordinal, vgpu_stream** out);
void vgpu_device_track_stream(int ordinal, vgpu_stream* stream);
void vgpu_device_untrack_stream(int ordinal, vgpu_stream* stream);
// A referenced snapshot of the device's streams (malloc'd array in *out,
// NULL on allocation failure); returns the count.
size_t vgpu_device_streams(int ordinal, vgpu_stream*** out);

// --------------------------------------------------------------- memory.c

// Where a stream-ordered allocation is in its life (pool.c). Read without
// the memory mutex when work runs, so it is atomic; written under it.
typedef enum vgpu_order_state {
  VGPU_ORDER_RESERVED = 0,  // allocated at the call, its stream not there yet
  VGPU_ORDER_LIVE,          // its stream ran the allocation
  VGPU_ORDER_FREEING,       // a stream-ordered free is queued, not run
  VGPU_ORDER_DEAD,          // the free ran (or a synchronous free)
} vgpu_order_state;

struct vgpu_pool;
struct vgpu_work;
struct vgpu_stream;

typedef struct vgpu_alloc {
  atomic_int refs;
  uint8_t* base;
  size_t size;
  int device;
  bool host;
  bool freed;        // guarded by the memory mutex
  unsigned pending;  // queued operations using it, guarded by the mutex
  uint64_t id;
  const char* creator;
  // Stream-ordered allocations only (pool.c); the rest guarded by the
  // memory mutex. |base| is a block of |pool| of |capacity| bytes.
  struct vgpu_pool* pool;  // holds a reference until the block returns
  size_t capacity;
  atomic_int order_state;           // vgpu_order_state
  struct vgpu_stream* free_stream;  // FREEING: the stream of the free
  struct vgpu_alloc* freeing_next;  // the pool's list of FREEING lives
  bool block_taken;                 // the block is not this life's any more
  bool alloc_ran;                   // its stream ran the allocation
  bool tracked;                     // in the memory array (lookups find it)
} vgpu_alloc;

// A set of allocations an operation uses: each has a reference and a
// pending count held until vgpu_uses_release. The first few live in the
// set itself (|items| points at |inline_items| then), so that an operation
// on a buffer or two allocates nothing, as a driver's pushbuffer would
// not; a set is never copied by value for that reason. A zeroed set is
// empty.
#define VGPU_USES_INLINE 4
typedef struct vgpu_uses {
  vgpu_alloc** items;
  uint32_t count, cap;
  vgpu_alloc* inline_items[VGPU_USES_INLINE];
} vgpu_uses;

// Checks |copy| (bounds, liveness, kinds) and adds the allocations it
// touches to |uses| (may be NULL). Reports misuse.
vgpu_status vgpu_copy_check(const vgpu_copy* copy, vgpu_uses* uses);
vgpu_status vgpu_fill_check(const vgpu_fill* fill, vgpu_uses* uses);
// Checks that [ptr, ptr + bytes) is live device memory (of |device|, or of
// any device when it is -1) and adds its allocation to |uses| (may be
// NULL). Reports misuse.
vgpu_status vgpu_range_check(const char* side, const void* ptr, size_t bytes,
                             int device, vgpu_uses* uses);
// Adds the allocation containing |ptr| if any (kernel arguments).
vgpu_status vgpu_uses_add_ptr(vgpu_uses* uses, const void* ptr);
void vgpu_uses_release(vgpu_uses* uses);
void vgpu_copy_run(const vgpu_copy* copy);
void vgpu_fill_run(const vgpu_fill* fill);
// Logs every live allocation; returns the count.
size_t vgpu_memory_report_leaks(void);
// Before a stream runs an operation: whether every stream-ordered
// allocation it uses is alive now (its allocation ran, its free did not);
// otherwise reports the misuse naming |what| and returns false, and the
// operation is skipped (the memory may belong to another allocation).
bool vgpu_uses_alive(const vgpu_uses* uses, const char* what);

// For pool.c: the memory mutex and the array of allocations.
void vgpu_mem_lock(void);
void vgpu_mem_unlock(void);
vgpu_alloc* vgpu_mem_find_locked(const void* ptr);
// Adds |a| (base, size and device set) to the array.
vgpu_status vgpu_mem_track_locked(vgpu_alloc* a);
// Removes |a| from the array; its memory is left to the caller (a block).
void vgpu_mem_untrack_locked(vgpu_alloc* a);
void vgpu_alloc_release(vgpu_alloc* a);
// Drops one pending use of |a|: wakes synchronous frees waiting for it to
// be idle, and gives a dead stream-ordered block back to its pool.
void vgpu_mem_pending_drop_locked(vgpu_alloc* a);

// ----------------------------------------------------------------- pool.c

// A synchronous free (cuMemFree, hipFree) of a stream-ordered allocation
// nothing uses: its block goes back to its pool. Memory mutex held.
void vgpu_pool_free_now_locked(vgpu_alloc* a);
// A dead allocation's last queued user completed: its block goes back.
// Memory mutex held.
void vgpu_pool_block_idle_locked(vgpu_alloc* a);
// MEM_ALLOC and MEM_FREE work, run in stream order.
void vgpu_pool_work_run(const struct vgpu_work* work);
// A MEM_FREE operation dropped unrun: the allocation is alive again.
void vgpu_pool_work_dropped(const struct vgpu_work* work);
// Logs every pool created and never destroyed; returns the count.
size_t vgpu_pools_report_leaks(void);
// Unload, after the memory teardown: gives every idle block back and
// forgets the default pools (their objects go with the registry's).
void vgpu_pools_teardown(void);
void vgpu_memory_teardown(void);

// --------------------------------------------------------------- kernel.c

typedef struct vgpu_function vgpu_function;

// An immutable, reference-counted kernel launch: function, geometry and a
// private copy of the argument values.
typedef struct vgpu_launch {
  atomic_int refs;
  vgpu_function* function;  // holds a reference
  vgpu_dim3 grid, block;
  unsigned shared_bytes;
  uint8_t* arg_data;
  void** argv;
  uint32_t argc;
} vgpu_launch;

vgpu_status vgpu_launch_create(const vgpu_launch_desc* desc, vgpu_launch** out);
void vgpu_launch_retain(vgpu_launch* launch);
void vgpu_launch_release(vgpu_launch* launch);
// Adds device allocations passed as pointer arguments to |uses|.
vgpu_status vgpu_launch_uses(const vgpu_launch* launch, vgpu_uses* uses);
// Runs the grid on the kernel threads and the calling thread; returns when
// every block is done.
void vgpu_launch_run(const vgpu_launch* launch);
void vgpu_kernel_pool_stop(void);

// --------------------------------------------------------------- module.c

typedef struct vgpu_module vgpu_module;

struct vgpu_function {
  vgpu_object base;
  vgpu_module* module;  // holds a reference
  const vgpu_kernel_desc* desc;
};

void vgpu_module_inflight_add(vgpu_module* module, int delta);

// ----------------------------------------------------------------- work.c

typedef enum vgpu_work_type {
  VGPU_WORK_EMPTY = 0,
  VGPU_WORK_COPY,
  VGPU_WORK_FILL,
  VGPU_WORK_KERNEL,
  VGPU_WORK_HOST,
  VGPU_WORK_COLLECTIVE,  // ccl.h
  VGPU_WORK_MEM_ALLOC,   // a stream-ordered allocation reached (pool.c)
  VGPU_WORK_MEM_FREE,    // a stream-ordered free reached (pool.c)
} vgpu_work_type;

struct vgpu_ccl_comm;
// A collective's arrival in stream order (ccl.h, vgpu_ccl_work).
typedef struct vgpu_work_collective {
  struct vgpu_ccl_comm* comm;
  vgpu_ccl_call call;
  vgpu_mark* done;  // held
} vgpu_work_collective;

// One unit of device work, shared by stream operations and graph nodes.
typedef struct vgpu_work {
  vgpu_work_type type;
  vgpu_copy copy;
  vgpu_fill fill;
  vgpu_launch* launch;  // holds a reference
  vgpu_host_call host;
  vgpu_work_collective collective;
  vgpu_alloc* ordered;  // MEM_ALLOC, MEM_FREE: holds a reference
  // COPY of a staged pageable source: the heap copy (freed with the work)
  // and how long the copy waits before it lands.
  void* staged;
  unsigned delay_us;
} vgpu_work;

// Checks |work| at enqueue time and collects the memory it uses.
vgpu_status vgpu_work_uses(const vgpu_work* work, vgpu_uses* uses);
// Runs |work| on a runtime thread; |status| is the device status passed to
// host functions. Device work is skipped when the device is lost.
void vgpu_work_run(const vgpu_work* work, vgpu_status status);
void vgpu_work_copy_from(vgpu_work* dst, const vgpu_work* src);
void vgpu_work_clear(vgpu_work* work);

// --------------------------------------------------------------- stream.c

typedef struct vgpu_exec_state vgpu_exec_state;

typedef enum vgpu_op_type {
  VGPU_OP_WORK = 0,
  VGPU_OP_MARK,   // completes |mark| (event record, stream sync point)
  VGPU_OP_WAIT,   // waits for |mark| without holding a thread
  VGPU_OP_GRAPH,  // runs every node of |graph| in dependency order
} vgpu_op_type;

typedef struct vgpu_op {
  struct vgpu_op* next;
  vgpu_op_type type;
  uint64_t seq;
  vgpu_work work;
  vgpu_mark* mark;         // MARK, WAIT: holds a reference
  vgpu_exec_state* graph;  // GRAPH: holds a reference
  uint64_t graph_launch;   // GRAPH: launch number, for jitter
  vgpu_uses uses;
  vgpu_module* module;  // kernel ops: module kept in flight
} vgpu_op;

typedef enum vgpu_stream_state {
  VGPU_STREAM_IDLE = 0,  // nothing runnable queued
  VGPU_STREAM_READY,     // in the scheduler's ready list
  VGPU_STREAM_RUNNING,   // a worker runs its head operation
  VGPU_STREAM_BLOCKED,   // head is a WAIT on a mark not yet done
} vgpu_stream_state;

struct vgpu_stream {
  vgpu_object base;
  int device;
  bool nonblocking;
  bool is_default;
  uint32_t ordinal;  // creation number, for jitter
  // |mu| guards everything below. Operations run in queue order; only the
  // worker that moved the stream to RUNNING touches |head| while running.
  pthread_mutex_t mu;
  pthread_cond_t drained_cv;  // broadcast when seq_done advances
  vgpu_op* head;
  vgpu_op* tail;
  uint64_t seq_enqueued;
  // Operations retired. Advances in the same critical section that
  // completes a retired MARK operation's mark, so whoever sees one (stream
  // synchronize or query, event synchronize or query) sees the other.
  uint64_t seq_done;
  vgpu_stream_state state;
  unsigned sync_waiters;
  vgpu_mark_waiter waiter;  // registered while BLOCKED
  vgpu_mark* blocked_on;    // the mark it waits for while BLOCKED
  vgpu_stream* ready_next;  // scheduler list link, guarded by sched mutex
};

// Resolves |handle| (or the default stream of |ordinal|) with a reference;
// VGPU_ERR_DEVICE_LOST when its device is lost.
vgpu_status vgpu_stream_get(uint64_t handle, int ordinal, vgpu_stream** out);
vgpu_stream* vgpu_stream_new(int device, bool nonblocking, bool is_default);
// Appends |op| (ownership passes to the stream) and makes the stream
// runnable. Applies the legacy default stream's implicit ordering.
vgpu_status vgpu_stream_enqueue(vgpu_stream* stream, vgpu_op* op);
vgpu_op* vgpu_op_new(vgpu_op_type type);
void vgpu_op_free(vgpu_op* op);
// Enqueues a MARK op and returns the mark (new reference).
vgpu_status vgpu_stream_record(vgpu_stream* stream, vgpu_mark** out);
// Enqueues a MARK op completing |mark| (no implicit ordering: for a mark
// that follows an operation just enqueued).
vgpu_status vgpu_stream_signal_mark(vgpu_stream* stream, vgpu_mark* mark);
// Enqueues a WAIT for |mark| (takes a new reference to it).
vgpu_status vgpu_stream_wait_mark(vgpu_stream* stream, vgpu_mark* mark);
// Checks |work| and enqueues it (ownership of |work| passes).
vgpu_status vgpu_stream_submit_work(uint64_t stream, int ordinal,
                                    vgpu_work* work);
bool vgpu_stream_busy(vgpu_stream* stream);
vgpu_status vgpu_stream_drain(vgpu_stream* stream, const char* what);
// Teardown: drops queued operations of a stream whose workers are gone.
void vgpu_stream_discard_locked(vgpu_stream* stream);

// ---------------------------------------------------------------- sched.c

// Pushes |stream| (which the caller holds locked, state READY) onto the
// ready list; takes a reference for the list.
void vgpu_sched_push_locked(vgpu_stream* stream);
// The same for the worker that ran |stream|'s head, at the end of
// vgpu_stream_run_head: it wakes nobody, since that worker looks at the
// list next (its run_head returns true).
void vgpu_sched_relist_locked(vgpu_stream* stream);
void vgpu_sched_stop(void);
// The unload's first step: workers take no more work, and this waits, until
// |deadline_ns| (vgpu_now_ns's clock), for those running an operation to
// finish it (the calling thread's own, when it is a worker, excepted).
// Returns false when one still runs at the deadline. The workers stay
// joinable for vgpu_sched_stop.
bool vgpu_sched_pause(uint64_t deadline_ns);
// Runs one op of a stream on the current worker (stream.c). Returns true
// when the stream went back on the ready list through
// vgpu_sched_relist_locked, which the worker must look at before it sleeps.
bool vgpu_stream_run_head(vgpu_stream* stream);

// ------------------------------------------------------------ graph_exec.c

void vgpu_exec_state_release(vgpu_exec_state* state);
// Runs the nodes of |state| in a dependency order (randomized by the seed
// when jitter is on).
void vgpu_exec_state_run(vgpu_exec_state* state, uint64_t launch,
                         vgpu_status status);

#endif  // VGPU_INTERNAL_H_
