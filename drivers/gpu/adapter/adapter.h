// Copyright 2026 The HAL Authors.
//
// gpu_adapter_t: the narrow vendor interface under the shared GPU core.
//
// The four GPU drivers (cuda_stream, cuda_graph, hip_stream, hip_graph) are
// one core written over this interface; CUDA and HIP differ only in the
// adapter behind it. An adapter dlopen()s its vendor runtime (never linked at
// build time), resolves its symbols from one X-macro table, and turns vendor
// error codes into hal_status_t values that name the call, the vendor error
// and the file:line. No vendor type crosses this header: handles are opaque
// pointers, device memory is a 64-bit address in the unified address space.
//
// Rules for every op (the contract; docs/adapters.md has the long form):
//
//  - Ops that return a status return OK or a status naming the vendor call
//    and the vendor error (e.g. "cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY
//    (2): out of memory"). Out-parameters are cleared first and written only
//    on success.
//  - Ops that use device state (memory, streams, events, graphs, modules)
//    run in the calling thread's current context: the caller made it current
//    with make_current() on that thread. Each op's comment says "any thread"
//    for ops that need no current context.
//  - Ops are thread-safe exactly as the vendor runtimes are: any thread may
//    call them concurrently on different objects; one stream or graph is
//    used by one thread at a time (the core's queue worker or recorder).
//  - No op may be called from inside a host function or host graph node
//    (SYNC-CONTRACT Q1): host functions hand off to a driver-owned thread.
//  - Async ops report only enqueue errors; execution errors surface in a
//    later query/synchronize. A status for which
//    gpu_adapter_status_is_device_lost() is true means the context is
//    unusable: the driver fails every semaphore of the device (Q5).
//  - destroy/free/unload/close ops cannot fail from the caller's point of
//    view: a vendor error there is dropped (the object is gone either way).
//
// Thread-safety of the adapter object itself: created and destroyed by one
// owner (the driver); |info| is immutable after creation; ops may be called
// from any thread between the two.

#ifndef DRIVERS_GPU_ADAPTER_ADAPTER_H_
#define DRIVERS_GPU_ADAPTER_ADAPTER_H_

#include "hal/allocator.h"
#include "hal/base.h"
#include "hal/status.h"

HAL_EXTERN_C_BEGIN

typedef enum gpu_adapter_vendor_e {
  GPU_ADAPTER_VENDOR_CUDA = 0,  // CUDA Driver API (libcuda.so.1)
  GPU_ADAPTER_VENDOR_HIP = 1,   // HIP runtime (libamdhip64.so)
} gpu_adapter_vendor_t;

// Capability bits (gpu_adapter_info_t.capabilities), computed once at
// creation from the symbols the runtime exports. An op whose capability is
// off returns UNIMPLEMENTED naming the missing entry point; a driver checks
// the bits at creation and refuses clearly instead (a strategy's
// required_capabilities, core/gpu_core.h).
enum {
  // launch_host_func() uses the vendor's host-function launch
  // (cuLaunchHostFunc, hipLaunchHostFunc). Off: the adapter emulates it
  // with cuStreamAddCallback / hipStreamAddCallback (Debian's HIP 5.2.3);
  // the observable behavior is the same.
  GPU_ADAPTER_CAP_HOST_FUNC_NATIVE = 1u << 0,
  // graph_create/destroy, add_empty_node, instantiate, launch, exec_destroy.
  GPU_ADAPTER_CAP_GRAPH = 1u << 1,
  GPU_ADAPTER_CAP_GRAPH_MEMSET_NODE = 1u << 2,
  GPU_ADAPTER_CAP_GRAPH_MEMCPY_NODE = 1u << 3,
  GPU_ADAPTER_CAP_GRAPH_HOST_NODE = 1u << 4,
  GPU_ADAPTER_CAP_GRAPH_KERNEL_NODE = 1u << 5,
  // graph_exec_update() can update an executable graph in place.
  GPU_ADAPTER_CAP_GRAPH_EXEC_UPDATE = 1u << 6,
  // module_load_data, module_get_function, module_unload, launch_kernel.
  GPU_ADAPTER_CAP_MODULE = 1u << 7,
  // timed_event_create, event_elapsed_ms (cuEventElapsedTime,
  // hipEventElapsedTime): tracing's device spans.
  GPU_ADAPTER_CAP_EVENT_TIMING = 1u << 8,
  // pool_create, pool_destroy, pool_reserved_bytes, alloc_async,
  // free_async (cuMemPoolCreate + cuMemAllocFromPoolAsync + cuMemFreeAsync,
  // hipMemPoolCreate + hipMallocFromPoolAsync + hipFreeAsync): queue-ordered
  // allocation on the vendor's stream-ordered allocator.
  GPU_ADAPTER_CAP_STREAM_ORDERED_ALLOC = 1u << 9,
  // function_param_sizes (cuFuncGetParamInfo, CUDA 12.4): a kernel says
  // its parameters, so an executable's declared layout is checked at
  // creation. HIP has no such call.
  GPU_ADAPTER_CAP_PARAM_INFO = 1u << 10,
};

// Bytes of a device UUID (device_uuid).
#define GPU_ADAPTER_UUID_SIZE 16

// An address in the unified (host + device) address space: device memory
// from device_alloc(), pinned host memory from host_alloc(), or any host
// pointer cast with gpu_host_address().
typedef uint64_t gpu_device_ptr_t;

static inline gpu_device_ptr_t gpu_host_address(const void* pointer) {
  return (gpu_device_ptr_t)(uintptr_t)pointer;
}

// Opaque vendor handles. The adapter casts them to and from CUstream,
// hipStream_t, ...; the core never dereferences them. Distinct types keep a
// stream from being passed where an event is expected.
typedef struct gpu_stream_opaque_t* gpu_stream_t;
typedef struct gpu_event_opaque_t* gpu_event_t;
typedef struct gpu_graph_opaque_t* gpu_graph_t;
typedef struct gpu_graph_node_opaque_t* gpu_graph_node_t;
typedef struct gpu_graph_exec_opaque_t* gpu_graph_exec_t;
typedef struct gpu_module_opaque_t* gpu_module_t;
typedef struct gpu_pool_opaque_t* gpu_pool_t;
typedef struct gpu_function_opaque_t* gpu_function_t;

// A device context, owned by the adapter between context_open() and
// context_close() (CUDA: the retained primary context; HIP: the ordinal).
typedef struct gpu_context_t gpu_context_t;

// A host function run in stream order (launch_host_func, host graph nodes).
// Runs on a vendor thread: must not call the vendor API or any adapter op,
// must not block on GPU work, must not free what the vendor may still touch
// (Q1). Not called when the stream is in an error state (as
// cuLaunchHostFunc), so the core must not rely on it to learn of errors.
typedef void (*gpu_host_fn_t)(void* user_data);

typedef enum gpu_device_attribute_e {
  GPU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 0,
  GPU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 1,
  GPU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 2,
  GPU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 3,
  GPU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS = 4,
  GPU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY = 5,
  GPU_DEVICE_ATTRIBUTE_PCI_BUS_ID = 6,
  GPU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X = 7,  // then Y, Z
  GPU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y = 8,
  GPU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z = 9,
  GPU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X = 10,  // then Y, Z
  GPU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y = 11,
  GPU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z = 12,
  GPU_DEVICE_ATTRIBUTE_COUNT_ = 13,
} gpu_device_attribute_t;

// A kernel launch (launch_kernel, graph_add_kernel_node).
typedef struct gpu_kernel_launch_t {
  gpu_function_t function;
  uint32_t grid[3];   // blocks in x, y, z (each >= 1)
  uint32_t block[3];  // threads per block in x, y, z (each >= 1)
  uint32_t shared_memory_bytes;
  // One pointer per kernel argument to a copy of its value (kernelParams);
  // read during the call only.
  void** args;
} gpu_kernel_launch_t;

// Fixed after creation; strings are owned by the adapter.
typedef struct gpu_adapter_info_t {
  gpu_adapter_vendor_t vendor;
  const char* vendor_name;   // "CUDA" or "HIP"
  const char* library_path;  // the file actually loaded (after symlinks)
  int driver_version;        // cuDriverGetVersion / hipDriverGetVersion
  int runtime_version;       // hipRuntimeGetVersion; 0 for CUDA
  int header_version;        // CUDA_VERSION / HIP_VERSION built against
  uint32_t capabilities;     // GPU_ADAPTER_CAP_*
  // Non-NULL when the runtime loaded but reported that it has no device
  // (e.g. "hipGetDeviceCount failed: hipErrorNoDevice (100): ..."); then
  // device_count() is 0 and no other device op may be called.
  const char* no_device_reason;
  // Optional symbols the runtime lacks, comma-separated ("" when none).
  const char* missing_optional_symbols;
  // The runtime is the virtual GPU (it exports
  // GPU_ADAPTER_VIRTUAL_GPU_SYMBOL): modules are in its format
  // ("vgpu-module"), not the vendor's.
  bool is_virtual;
  // The vendor profiler's ranges (range_start, range_end), or NULL when
  // no profiler can see them: "NVTX" when NVTX_INJECTION64_PATH names a
  // tool (Nsight Systems sets it), "roctx" when libroctx64 loads (never
  // linked; absent means off).
  const char* tool_ranges;
  // The module image formats gpu_adapter_module_load() takes,
  // comma-separated (executable.h's names): "cuda-ptx,cuda-cubin,
  // cuda-fatbin", "hip-code-object" or "vgpu-module"; "" without
  // GPU_ADAPTER_CAP_MODULE.
  const char* executable_formats;
} gpu_adapter_info_t;

// Exported by libvgpu-*.so (vgpu/include/vgpu/vgpu_module.h).
#define GPU_ADAPTER_VIRTUAL_GPU_SYMBOL "vgpu_runtime_identity"

typedef struct gpu_adapter_options_t {
  // Path or soname of the runtime to load. NULL: $HAL_CUDA_LIBRARY or
  // $HAL_HIP_LIBRARY when set and non-empty, else the vendor's default list.
  const char* library;
  // Comma-separated symbols to treat as missing even if exported, to test
  // fallbacks on any runtime. NULL: $HAL_GPU_ADAPTER_HIDE_SYMBOLS.
  const char* hide_symbols;
} gpu_adapter_options_t;

typedef struct gpu_adapter_t gpu_adapter_t;

// The ops. Every member is non-NULL in every adapter (ops a runtime cannot
// do return UNIMPLEMENTED, see the capability bits). |adapter| is the
// adapter the ops belong to.
typedef struct gpu_adapter_ops_t {
  // Unloads the runtime and frees the adapter. Every context, stream,
  // event, graph, module and allocation made through it must be gone.
  // Owner thread only.
  void (*destroy)(gpu_adapter_t* adapter);

  //===--- devices (any thread; no current context needed) ---===//

  // Number of devices; 0 when info.no_device_reason is set.
  hal_status_t (*device_count)(gpu_adapter_t* adapter, int* out_count);
  // NUL-terminated device name into |buffer| of |capacity| bytes.
  hal_status_t (*device_name)(gpu_adapter_t* adapter, int device, char* buffer,
                              size_t capacity);
  // The device's UUID into |out_uuid| (cuDeviceGetUuid, whose _v2 gives a
  // MIG instance its own; hipDeviceGetUuid), cleared first. UNIMPLEMENTED
  // when the runtime has none for the device: its not-supported error, or
  // the nil UUID (all zero), which would name no device in particular.
  hal_status_t (*device_uuid)(gpu_adapter_t* adapter, int device,
                              uint8_t out_uuid[GPU_ADAPTER_UUID_SIZE]);
  hal_status_t (*device_total_memory)(gpu_adapter_t* adapter, int device,
                                      uint64_t* out_bytes);
  hal_status_t (*device_attribute)(gpu_adapter_t* adapter, int device,
                                   gpu_device_attribute_t attribute,
                                   int* out_value);

  //===--- contexts ---===//

  // Opens |device| for use (CUDA: retains its primary context). The
  // returned context is owned by the caller until context_close(). Any
  // thread; opening a device twice gives two contexts of the same device.
  hal_status_t (*context_open)(gpu_adapter_t* adapter, int device,
                               gpu_context_t** out_context);
  // Closes a context no object made in it is alive any more. Any thread.
  void (*context_close)(gpu_adapter_t* adapter, gpu_context_t* context);
  // Makes |context| current on the CALLING thread (cuCtxSetCurrent,
  // hipSetDevice). Cheap; call it at the top of every thread-entry that
  // uses device ops.
  hal_status_t (*make_current)(gpu_adapter_t* adapter, gpu_context_t* context);

  //===--- memory (current context) ---===//

  hal_status_t (*device_alloc)(gpu_adapter_t* adapter, uint64_t size,
                               gpu_device_ptr_t* out_pointer);
  // Frees and destroys (here and below) return the vendor's status: nobody
  // waits for it, but a loss it reports is the device's (the core records
  // it, gpu_device_note_release).
  // |pointer| must not be used by pending work. 0 is a no-op.
  hal_status_t (*device_free)(gpu_adapter_t* adapter, gpu_device_ptr_t pointer);
  // Page-locked host memory, device-accessible (cuMemAllocHost,
  // hipHostMalloc).
  hal_status_t (*host_alloc)(gpu_adapter_t* adapter, uint64_t size,
                             void** out_pointer);
  hal_status_t (*host_free)(gpu_adapter_t* adapter, void* pointer);
  // Synchronous copy between any two addresses (host or device); returns
  // when the copy is done.
  hal_status_t (*memcpy_sync)(gpu_adapter_t* adapter, gpu_device_ptr_t target,
                              gpu_device_ptr_t source, uint64_t length);
  // Copy enqueued on |stream|; both ranges must stay valid until it ran.
  hal_status_t (*memcpy_async)(gpu_adapter_t* adapter, gpu_stream_t stream,
                               gpu_device_ptr_t target, gpu_device_ptr_t source,
                               uint64_t length);
  // Fills |count| elements of |pattern_size| (1, 2 or 4) bytes at |target|
  // (aligned to |pattern_size|) with the low bytes of |pattern|.
  hal_status_t (*memset_async)(gpu_adapter_t* adapter, gpu_stream_t stream,
                               gpu_device_ptr_t target, uint32_t pattern,
                               uint32_t pattern_size, uint64_t count);

  //===--- stream-ordered memory (current context; STREAM_ORDERED_ALLOC)
  //---===//

  // A pool of |context|'s device memory whose idle memory up to
  // |release_threshold| bytes is kept for reuse (cuMemPoolCreate with
  // CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, hipMemPoolCreate likewise).
  hal_status_t (*pool_create)(gpu_adapter_t* adapter, gpu_context_t* context,
                              uint64_t release_threshold, gpu_pool_t* out_pool);
  // Every allocation from the pool must be freed (and its free done).
  hal_status_t (*pool_destroy)(gpu_adapter_t* adapter, gpu_pool_t pool);
  // Bytes the pool holds from the device now (reserved, used or idle).
  hal_status_t (*pool_reserved_bytes)(gpu_adapter_t* adapter, gpu_pool_t pool,
                                      uint64_t* out_bytes);
  // Gives the device back what the pool holds idle beyond |keep_bytes|
  // (memory whose frees are done; cuMemPoolTrimTo, hipMemPoolTrimTo).
  hal_status_t (*pool_trim)(gpu_adapter_t* adapter, gpu_pool_t pool,
                            uint64_t keep_bytes);
  // |size| bytes from |pool|, valid for work enqueued on |stream| after
  // this call (and on other streams ordered after it); *out_pointer is set
  // at once.
  hal_status_t (*alloc_async)(gpu_adapter_t* adapter, gpu_pool_t pool,
                              gpu_stream_t stream, uint64_t size,
                              gpu_device_ptr_t* out_pointer);
  // Frees |pointer| (from alloc_async) once |stream| reaches this point;
  // work enqueued before it, and work ordered before it, may still use it.
  hal_status_t (*free_async)(gpu_adapter_t* adapter, gpu_stream_t stream,
                             gpu_device_ptr_t pointer);

  //===--- streams (current context) ---===//

  // A stream that does not synchronize with the legacy default stream.
  hal_status_t (*stream_create)(gpu_adapter_t* adapter,
                                gpu_stream_t* out_stream);
  // The stream must have no pending work the caller still depends on.
  hal_status_t (*stream_destroy)(gpu_adapter_t* adapter, gpu_stream_t stream);
  // Blocks until all work enqueued on |stream| so far is done.
  hal_status_t (*stream_synchronize)(gpu_adapter_t* adapter,
                                     gpu_stream_t stream);
  // *out_idle: whether all work enqueued so far is done. Never blocks.
  hal_status_t (*stream_query)(gpu_adapter_t* adapter, gpu_stream_t stream,
                               bool* out_idle);
  // Work enqueued on |stream| after this waits for the work captured by
  // the most recent record of |event|. Waiting on a never-recorded event
  // does NOT wait (vendor behavior; T4: the core never does it).
  hal_status_t (*stream_wait_event)(gpu_adapter_t* adapter, gpu_stream_t stream,
                                    gpu_event_t event);
  // Enqueues |fn|(|user_data|) on |stream| (see gpu_host_fn_t). Native
  // with GPU_ADAPTER_CAP_HOST_FUNC_NATIVE, emulated otherwise.
  hal_status_t (*launch_host_func)(gpu_adapter_t* adapter, gpu_stream_t stream,
                                   gpu_host_fn_t fn, void* user_data);

  //===--- events (current context) ---===//

  // An event with timing disabled (cheapest to record and query).
  hal_status_t (*event_create)(gpu_adapter_t* adapter, gpu_event_t* out_event);
  // Legal with a record pending (the vendor defers the release).
  hal_status_t (*event_destroy)(gpu_adapter_t* adapter, gpu_event_t event);
  // Captures the work enqueued on |stream| so far.
  hal_status_t (*event_record)(gpu_adapter_t* adapter, gpu_event_t event,
                               gpu_stream_t stream);
  // *out_ready: whether the captured work is done (true for a never
  // recorded event). Not-ready is not an error. Never blocks.
  hal_status_t (*event_query)(gpu_adapter_t* adapter, gpu_event_t event,
                              bool* out_ready);
  // Blocks until the captured work is done.
  hal_status_t (*event_synchronize)(gpu_adapter_t* adapter, gpu_event_t event);
  // An event with timing (GPU_ADAPTER_CAP_EVENT_TIMING): its record takes
  // a device timestamp when the captured work is done. Destroyed with
  // event_destroy.
  hal_status_t (*timed_event_create)(gpu_adapter_t* adapter,
                                     gpu_event_t* out_event);
  // *out_ms: device time from |start|'s last record to |end|'s, two timed
  // events of one context whose records are done (the vendor's
  // resolution, about 0.5 us); negative when |end| was earlier. A record
  // not done yet is UNAVAILABLE (not ready), not a loss.
  hal_status_t (*event_elapsed_ms)(gpu_adapter_t* adapter, gpu_event_t start,
                                   gpu_event_t end, float* out_ms);

  //===--- graphs (current context; GPU_ADAPTER_CAP_GRAPH*) ---===//
  //
  // A graph and its nodes are built by one thread at a time. |dependencies|
  // lists |dependency_count| nodes of the same graph (NULL when 0).

  hal_status_t (*graph_create)(gpu_adapter_t* adapter, gpu_graph_t* out_graph);
  // Also frees its nodes. Legal while executables made from it are alive.
  hal_status_t (*graph_destroy)(gpu_adapter_t* adapter, gpu_graph_t graph);
  hal_status_t (*graph_add_empty_node)(gpu_adapter_t* adapter,
                                       gpu_graph_t graph,
                                       const gpu_graph_node_t* dependencies,
                                       size_t dependency_count,
                                       gpu_graph_node_t* out_node);
  // As memset_async, as a node.
  hal_status_t (*graph_add_memset_node)(
      gpu_adapter_t* adapter, gpu_graph_t graph,
      const gpu_graph_node_t* dependencies, size_t dependency_count,
      gpu_device_ptr_t target, uint32_t pattern, uint32_t pattern_size,
      uint64_t count, gpu_graph_node_t* out_node);
  // A 1-D copy between any two addresses, as a node.
  hal_status_t (*graph_add_memcpy_node)(
      gpu_adapter_t* adapter, gpu_graph_t graph,
      const gpu_graph_node_t* dependencies, size_t dependency_count,
      gpu_device_ptr_t target, gpu_device_ptr_t source, uint64_t length,
      gpu_graph_node_t* out_node);
  // A host function node (same rules as gpu_host_fn_t).
  hal_status_t (*graph_add_host_node)(gpu_adapter_t* adapter, gpu_graph_t graph,
                                      const gpu_graph_node_t* dependencies,
                                      size_t dependency_count, gpu_host_fn_t fn,
                                      void* user_data,
                                      gpu_graph_node_t* out_node);
  hal_status_t (*graph_add_kernel_node)(gpu_adapter_t* adapter,
                                        gpu_graph_t graph,
                                        const gpu_graph_node_t* dependencies,
                                        size_t dependency_count,
                                        const gpu_kernel_launch_t* launch,
                                        gpu_graph_node_t* out_node);
  hal_status_t (*graph_instantiate)(gpu_adapter_t* adapter, gpu_graph_t graph,
                                    gpu_graph_exec_t* out_exec);
  // The executable must have no pending launch.
  hal_status_t (*graph_exec_destroy)(gpu_adapter_t* adapter,
                                     gpu_graph_exec_t exec);
  hal_status_t (*graph_launch)(gpu_adapter_t* adapter, gpu_graph_exec_t exec,
                               gpu_stream_t stream);
  // Updates |exec| in place from |graph| (same topology, new parameters).
  // *out_accepted false: the vendor refused (topology differs or the
  // update is not supported); |exec| is unchanged and still valid, the
  // caller instantiates anew. Without GPU_ADAPTER_CAP_GRAPH_EXEC_UPDATE
  // this returns OK with *out_accepted false.
  hal_status_t (*graph_exec_update)(gpu_adapter_t* adapter,
                                    gpu_graph_exec_t exec, gpu_graph_t graph,
                                    bool* out_accepted);

  //===--- modules (current context; GPU_ADAPTER_CAP_MODULE) ---===//

  // Loads a module image (cubin/fatbin/PTX, a HIP code object, or a vgpu
  // module); |image| is read during the call only.
  hal_status_t (*module_load_data)(gpu_adapter_t* adapter, const void* image,
                                   gpu_module_t* out_module);
  // Functions of |module| die with it.
  hal_status_t (*module_unload)(gpu_adapter_t* adapter, gpu_module_t module);
  hal_status_t (*module_get_function)(gpu_adapter_t* adapter,
                                      gpu_module_t module, const char* name,
                                      gpu_function_t* out_function);
  hal_status_t (*launch_kernel)(gpu_adapter_t* adapter, gpu_stream_t stream,
                                const gpu_kernel_launch_t* launch);
  // The sizes of |function|'s parameters, in order, into |sizes| (at most
  // |capacity| of them); |*out_count| is their number, or |capacity| + 1
  // when there are more. UNIMPLEMENTED without GPU_ADAPTER_CAP_PARAM_INFO.
  hal_status_t (*function_param_sizes)(gpu_adapter_t* adapter,
                                       gpu_function_t function, size_t* sizes,
                                       size_t capacity, size_t* out_count);

  //===--- profiler ranges (any thread; info.tool_ranges) ---===//

  // Starts a range named |message| on the vendor profiler's timeline (an
  // NVTX range of the "HAL" domain, a roctx range), ended by range_end on
  // any thread. false (nothing started) without info.tool_ranges.
  bool (*range_start)(gpu_adapter_t* adapter, const char* message,
                      uint64_t* out_range);
  void (*range_end)(gpu_adapter_t* adapter, uint64_t range);
} gpu_adapter_ops_t;

// The public part of every adapter; vendor adapters embed it at offset 0.
struct gpu_adapter_t {
  const gpu_adapter_ops_t* ops;
  gpu_adapter_info_t info;
};

// Loads the |vendor|'s runtime, resolves its symbols, initializes it and
// reads its versions. |options| may be NULL. Failures:
//  - NOT_FOUND: no library could be loaded; the message lists every
//    library tried with its dlerror() text;
//  - INCOMPATIBLE: the library lacks required symbols (all named);
//  - the mapped vendor error of the init call (e.g. UNAVAILABLE for the
//    CUDA toolkit's stub libcuda.so: "cuInit failed:
//    CUDA_ERROR_STUB_LIBRARY (34): ...");
//  - UNIMPLEMENTED: the adapter was built without the vendor's headers.
// A runtime that loads but has no device is NOT a failure: see
// info.no_device_reason.
HAL_MUST_USE_RESULT hal_status_t gpu_adapter_create(
    gpu_adapter_vendor_t vendor, const gpu_adapter_options_t* options,
    hal_allocator_t allocator, gpu_adapter_t** out_adapter);

// adapter->ops->destroy(adapter); NULL is a no-op.
void gpu_adapter_destroy(gpu_adapter_t* adapter);

// Loads a module from an image of |format| (one of info.executable_formats)
// of |size| bytes, in the current context (module_image.c). The vendor load
// calls take no size and read what the image's own headers say: the image
// is checked against them first, so a truncated one is INVALID_ARGUMENT
// here, never a read past the caller's buffer; PTX text gets the NUL the
// vendor reads up to. |allocator| for that copy.
HAL_MUST_USE_RESULT hal_status_t gpu_adapter_module_load(
    gpu_adapter_t* adapter, const char* format, const void* data, size_t size,
    hal_allocator_t allocator, gpu_module_t* out_module);

// Whether |status| came from a vendor error after which the device's
// context is unusable (illegal address, launch failure, ECC, device
// removed...): its code is HAL_STATUS_DEVICE_LOST, which only the adapter's
// conversion of a vendor result makes. A message never decides it.
bool gpu_adapter_status_is_device_lost(hal_status_t status);

// "CUDA" / "HIP".
const char* gpu_adapter_vendor_name(gpu_adapter_vendor_t vendor);

HAL_EXTERN_C_END

#endif  // DRIVERS_GPU_ADAPTER_ADAPTER_H_
