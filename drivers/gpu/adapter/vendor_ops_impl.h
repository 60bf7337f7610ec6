// Copyright 2026 The HAL Authors.
//
// The adapter ops that CUDA and HIP share up to spelling, written once.
//
// NOT a normal header: cuda_ops.c and hip_ops.c each include their
// <vendor>_vendor.h and then this file, which compiles it for that vendor
// (as Mesa compiles its genX files once per hardware generation). The vendor
// header supplies GPU_VX(name) (the vendor's function prefix), the native
// types GPU_V_*_T, and one "spelling" macro per primitive that expands to
// `entry point, (arguments)`; e.g. stream creation is
//   CUDA: cuStreamCreate, (out, CU_STREAM_NON_BLOCKING)
//   HIP:  hipStreamCreateWithFlags, (out, hipStreamNonBlocking)
// Also generated here: the symbol and error tables and the vendor
// descriptor. What differs beyond spelling (contexts, memcpy and kernel
// graph nodes, CUDA's cuGetProcAddress lookup) lives in <vendor>_adapter.c
// and is only referenced here.
//
// Opaque handles are converted with plain casts: gpu_stream_t and CUstream
// are both pointers to incomplete structs, never dereferenced on our side.

#if !defined(GPU_VX) || !defined(GPU_V_ADAPTER_T)
#error "include cuda_vendor.h or hip_vendor.h before vendor_ops_impl.h"
#endif

#include <string.h>

// The vendor's symbol struct of |adapter| (a gpu_adapter_t* or base*).
#define GPU_SYMS(adapter) (&((GPU_V_ADAPTER_T*)(adapter))->syms)

// The name of the entry point a spelling calls (the exported name: cuda.h
// renames cuMemAlloc to cuMemAlloc_v2, and that is what runs).
// Variadic: a spelling that was already expanded reads as two arguments.
#define GPU_V_NAME(...) GPU_V_NAME_(__VA_ARGS__)
#define GPU_V_NAME_(fn, args) GPU_ADAPTER_XSTR_(fn)

// Calls a spelling and yields the vendor result as int32_t (0 = success).
#define GPU_V_INVOKE(adapter, ...) GPU_V_INVOKE_(adapter, __VA_ARGS__)
#define GPU_V_INVOKE_(adapter, fn, args) ((int32_t)(GPU_SYMS(adapter)->fn args))

// Calls a spelling; returns its converted status from the enclosing
// function on failure.
#define GPU_V_CALL(adapter, ...)                            \
  GPU_RETURN_IF_ERROR((const gpu_adapter_base_t*)(adapter), \
                      GPU_V_INVOKE(adapter, __VA_ARGS__),   \
                      GPU_V_NAME(__VA_ARGS__))

// For destroy/free ops: the object is gone either way; the error is dropped
// (a lost device shows in the next query or synchronize).
#define GPU_V_CALL_AND_DROP(adapter, ...) \
  (void)GPU_V_INVOKE(adapter, __VA_ARGS__)

//===--- the symbol and error tables ---===//

GPU_V_SYMBOLS(GPU_ADAPTER_SYMBOL_CHECK)

#define GPU_V_SYMBOL_ENTRY(kind, capability, name, ret, params) \
  GPU_ADAPTER_SYMBOL_ENTRY(GPU_V_SYMBOLS_T, kind, capability, #name, name)
static const gpu_adapter_symbol_t GPU_VX(symbols)[] = {
    GPU_V_SYMBOLS(GPU_V_SYMBOL_ENTRY)};

static const gpu_adapter_error_t GPU_VX(errors)[] = {
    GPU_V_ERRORS(GPU_ADAPTER_ERROR)};

// The runtime's own name / description of |result|; NULL when it has no
// such function or the query fails (the CUDA stub fails them all).
static const char* GPU_VX(error_name)(const gpu_adapter_base_t* base,
                                      int32_t result) {
  const GPU_V_SYMBOLS_T* syms = GPU_SYMS(base);
  return syms->GPU_V_ERROR_NAME_FN
             ? GPU_V_ERROR_TEXT(syms->GPU_V_ERROR_NAME_FN, result)
             : NULL;
}

static const char* GPU_VX(error_string)(const gpu_adapter_base_t* base,
                                        int32_t result) {
  const GPU_V_SYMBOLS_T* syms = GPU_SYMS(base);
  return syms->GPU_V_ERROR_STRING_FN
             ? GPU_V_ERROR_TEXT(syms->GPU_V_ERROR_STRING_FN, result)
             : NULL;
}

//===--- initialization hooks (see gpu_adapter_vendor_desc_t) ---===//

static hal_status_t GPU_VX(initialize)(gpu_adapter_base_t* base,
                                       hal_status_t* out_no_device) {
  *out_no_device = HAL_OK;
  int32_t result = GPU_V_INVOKE(base, GPU_V_INIT());
  if (result == 0)
    return HAL_OK;
  hal_status_t status = gpu_adapter_result_status(
      base, result, GPU_V_NAME(GPU_V_INIT()), __FILE__, __LINE__);
  if (!GPU_V_IS_NO_DEVICE(result))
    return status;
  // A runtime without devices is a valid state: the driver lists zero
  // devices and says why.
  *out_no_device = status;
  return HAL_OK;
}

static hal_status_t GPU_VX(finish_initialize)(gpu_adapter_base_t* base,
                                              hal_status_t* inout_no_device) {
  gpu_adapter_info_t* info = &base->public.info;
  int version = 0;
  GPU_V_CALL(base, GPU_V_DRIVER_VERSION(&version));
  info->driver_version = version;
#if GPU_V_HAS_RUNTIME_VERSION
  version = 0;
  GPU_V_CALL(base, GPU_V_RUNTIME_VERSION(&version));
  info->runtime_version = version;
#endif
  if (*inout_no_device) {
    // Init said "no device"; the device count usually says it best
    // (HIP's init reports hipErrorInvalidDevice, its count hipErrorNoDevice).
    int count = 0;
    int32_t result = GPU_V_INVOKE(base, GPU_V_DEVICE_COUNT(&count));
    gpu_adapter_text_t text = {0};
    if (result != 0) {
      gpu_adapter_result_describe(
          base, result, GPU_V_NAME(GPU_V_DEVICE_COUNT(&count)), &text);
    } else {
      gpu_adapter_text_append(&text, "device count %d", count);
    }
    *inout_no_device = hal_status_annotatef(*inout_no_device, "%s", text.data);
  }
  return HAL_OK;
}

static void GPU_VX(destroy)(gpu_adapter_t* adapter) {
  gpu_adapter_base_destroy(gpu_adapter_base(adapter));
}

//===--- devices ---===//

static hal_status_t GPU_VX(device_count)(gpu_adapter_t* adapter,
                                         int* out_count) {
  *out_count = 0;
  if (adapter->info.no_device_reason)
    return HAL_OK;
  int count = 0;
  int32_t result = GPU_V_INVOKE(adapter, GPU_V_DEVICE_COUNT(&count));
  if (result != 0 && GPU_V_IS_NO_DEVICE(result))
    return HAL_OK;
  GPU_RETURN_IF_ERROR(gpu_adapter_base(adapter), result,
                      GPU_V_NAME(GPU_V_DEVICE_COUNT(&count)));
  *out_count = count;
  return HAL_OK;
}

static hal_status_t GPU_VX(device_get)(gpu_adapter_t* adapter, int ordinal,
                                       GPU_V_DEVICE_T* out_device) {
  GPU_V_CALL(adapter, GPU_V_DEVICE_GET(out_device, ordinal));
  return HAL_OK;
}

static hal_status_t GPU_VX(device_name)(gpu_adapter_t* adapter, int device,
                                        char* buffer, size_t capacity) {
  if (!buffer || capacity == 0 || capacity > INT32_MAX) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "device name buffer of %zu bytes", capacity);
  }
  buffer[0] = 0;
  GPU_V_DEVICE_T native = 0;
  HAL_RETURN_IF_ERROR(GPU_VX(device_get)(adapter, device, &native));
  GPU_V_CALL(adapter, GPU_V_DEVICE_NAME(buffer, (int)capacity, native));
  buffer[capacity - 1] = 0;
  return HAL_OK;
}

static hal_status_t GPU_VX(device_total_memory)(gpu_adapter_t* adapter,
                                                int device,
                                                uint64_t* out_bytes) {
  *out_bytes = 0;
  GPU_V_DEVICE_T native = 0;
  HAL_RETURN_IF_ERROR(GPU_VX(device_get)(adapter, device, &native));
  size_t bytes = 0;
  GPU_V_CALL(adapter, GPU_V_DEVICE_TOTAL_MEM(&bytes, native));
  *out_bytes = bytes;
  return HAL_OK;
}

static hal_status_t GPU_VX(device_attribute)(gpu_adapter_t* adapter, int device,
                                             gpu_device_attribute_t attribute,
                                             int* out_value) {
  static const GPU_V_DEVICE_ATTRIBUTE_T kAttributes[] = {
      [GPU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT] =
          GPU_V_ATTRIBUTE_MULTIPROCESSOR_COUNT,
      [GPU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR] =
          GPU_V_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
      [GPU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR] =
          GPU_V_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
      [GPU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK] =
          GPU_V_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
      [GPU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS] =
          GPU_V_ATTRIBUTE_CONCURRENT_KERNELS,
      [GPU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY] =
          GPU_V_ATTRIBUTE_CAN_MAP_HOST_MEMORY,
      [GPU_DEVICE_ATTRIBUTE_PCI_BUS_ID] = GPU_V_ATTRIBUTE_PCI_BUS_ID,
  };
  static_assert(HAL_ARRAYSIZE(kAttributes) == GPU_DEVICE_ATTRIBUTE_COUNT_,
                "every gpu_device_attribute_t needs a vendor attribute");
  *out_value = 0;
  if ((unsigned)attribute >= GPU_DEVICE_ATTRIBUTE_COUNT_) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "unknown device attribute %d", (int)attribute);
  }
  GPU_V_DEVICE_T native = 0;
  HAL_RETURN_IF_ERROR(GPU_VX(device_get)(adapter, device, &native));
  int value = 0;
  GPU_V_CALL(adapter,
             GPU_V_DEVICE_ATTRIBUTE(&value, kAttributes[attribute], native));
  *out_value = value;
  return HAL_OK;
}

//===--- memory ---===//

static hal_status_t GPU_VX(device_alloc)(gpu_adapter_t* adapter, uint64_t size,
                                         gpu_device_ptr_t* out_pointer) {
  *out_pointer = 0;
  GPU_V_DEVICE_PTR_T native = 0;
  GPU_V_CALL(adapter, GPU_V_MALLOC(&native, (size_t)size));
  *out_pointer = GPU_V_ADDRESS(native);
  return HAL_OK;
}

static void GPU_VX(device_free)(gpu_adapter_t* adapter,
                                gpu_device_ptr_t pointer) {
  if (pointer)
    GPU_V_CALL_AND_DROP(adapter, GPU_V_FREE(GPU_V_NATIVE_PTR(pointer)));
}

static hal_status_t GPU_VX(host_alloc)(gpu_adapter_t* adapter, uint64_t size,
                                       void** out_pointer) {
  *out_pointer = NULL;
  void* pointer = NULL;
  GPU_V_CALL(adapter, GPU_V_HOST_MALLOC(&pointer, (size_t)size));
  *out_pointer = pointer;
  return HAL_OK;
}

static void GPU_VX(host_free)(gpu_adapter_t* adapter, void* pointer) {
  if (pointer)
    GPU_V_CALL_AND_DROP(adapter, GPU_V_HOST_FREE(pointer));
}

static hal_status_t GPU_VX(memcpy_sync)(gpu_adapter_t* adapter,
                                        gpu_device_ptr_t target,
                                        gpu_device_ptr_t source,
                                        uint64_t length) {
  GPU_V_CALL(adapter, GPU_V_MEMCPY(GPU_V_NATIVE_PTR(target),
                                   GPU_V_NATIVE_PTR(source), (size_t)length));
  return HAL_OK;
}

static hal_status_t GPU_VX(memcpy_async)(gpu_adapter_t* adapter,
                                         gpu_stream_t stream,
                                         gpu_device_ptr_t target,
                                         gpu_device_ptr_t source,
                                         uint64_t length) {
  GPU_V_CALL(adapter, GPU_V_MEMCPY_ASYNC(
                          GPU_V_NATIVE_PTR(target), GPU_V_NATIVE_PTR(source),
                          (size_t)length, (GPU_V_STREAM_T)stream));
  return HAL_OK;
}

static hal_status_t GPU_VX(memset_async)(
    gpu_adapter_t* adapter, gpu_stream_t stream, gpu_device_ptr_t target,
    uint32_t pattern, uint32_t pattern_size, uint64_t count) {
  GPU_V_DEVICE_PTR_T native = GPU_V_NATIVE_PTR(target);
  GPU_V_STREAM_T native_stream = (GPU_V_STREAM_T)stream;
  switch (pattern_size) {
    case 1:
      GPU_V_CALL(adapter, GPU_V_MEMSET_D8_ASYNC(native, pattern, (size_t)count,
                                                native_stream));
      return HAL_OK;
    case 2:
      GPU_V_CALL(adapter, GPU_V_MEMSET_D16_ASYNC(native, pattern, (size_t)count,
                                                 native_stream));
      return HAL_OK;
    case 4:
      GPU_V_CALL(adapter, GPU_V_MEMSET_D32_ASYNC(native, pattern, (size_t)count,
                                                 native_stream));
      return HAL_OK;
  }
  return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                         "memset pattern size %u (must be 1, 2 or 4)",
                         pattern_size);
}

//===--- streams ---===//

static hal_status_t GPU_VX(stream_create)(gpu_adapter_t* adapter,
                                          gpu_stream_t* out_stream) {
  *out_stream = NULL;
  GPU_V_STREAM_T native = NULL;
  GPU_V_CALL(adapter, GPU_V_STREAM_CREATE(&native));
  *out_stream = (gpu_stream_t)native;
  return HAL_OK;
}

static void GPU_VX(stream_destroy)(gpu_adapter_t* adapter,
                                   gpu_stream_t stream) {
  if (stream) {
    GPU_V_CALL_AND_DROP(adapter, GPU_V_STREAM_DESTROY((GPU_V_STREAM_T)stream));
  }
}

static hal_status_t GPU_VX(stream_synchronize)(gpu_adapter_t* adapter,
                                               gpu_stream_t stream) {
  GPU_V_CALL(adapter, GPU_V_STREAM_SYNCHRONIZE((GPU_V_STREAM_T)stream));
  return HAL_OK;
}

// Query results: success -> true, not-ready -> false, else the error.
static hal_status_t GPU_VX(query_result)(gpu_adapter_t* adapter, int32_t result,
                                         const char* call, bool* out_done) {
  *out_done = result == 0;
  if (result == 0 || result == (int32_t)GPU_V_NOT_READY)
    return HAL_OK;
  return gpu_adapter_result_status(gpu_adapter_base(adapter), result, call,
                                   __FILE__, __LINE__);
}

static hal_status_t GPU_VX(stream_query)(gpu_adapter_t* adapter,
                                         gpu_stream_t stream, bool* out_idle) {
  GPU_V_STREAM_T native = (GPU_V_STREAM_T)stream;
  return GPU_VX(query_result)(adapter,
                              GPU_V_INVOKE(adapter, GPU_V_STREAM_QUERY(native)),
                              GPU_V_NAME(GPU_V_STREAM_QUERY(native)), out_idle);
}

static hal_status_t GPU_VX(stream_wait_event)(gpu_adapter_t* adapter,
                                              gpu_stream_t stream,
                                              gpu_event_t event) {
  GPU_V_CALL(adapter, GPU_V_STREAM_WAIT_EVENT((GPU_V_STREAM_T)stream,
                                              (GPU_V_EVENT_T)event));
  return HAL_OK;
}

//===--- host functions, with a stream-callback fallback ---===//
//
// Native (cuLaunchHostFunc, hipLaunchHostFunc) when the runtime exports it;
// otherwise cuStreamAddCallback / hipStreamAddCallback through a
// trampoline. Debian's HIP 5.2.3 takes the fallback.

// What the trampoline needs; owned by the callback once enqueued.
typedef struct {
  gpu_host_fn_t fn;
  void* user_data;
  hal_allocator_t allocator;
} GPU_VX(host_call_t);

// Runs on a runtime thread (Q1): no vendor call, no blocking. Frees its
// record (ours, not the runtime's) and, as the native launch does, skips
// the function when the stream has failed.
static void GPU_VX(host_callback)(GPU_V_STREAM_T stream, GPU_V_RESULT_T status,
                                  void* user_data) {
  GPU_VX(host_call_t)* call = user_data;
  gpu_host_fn_t fn = call->fn;
  void* fn_data = call->user_data;
  hal_allocator_free(call->allocator, call);
  if (status == 0)
    fn(fn_data);
}

static hal_status_t GPU_VX(launch_host_func)(gpu_adapter_t* adapter,
                                             gpu_stream_t stream,
                                             gpu_host_fn_t fn,
                                             void* user_data) {
  GPU_V_STREAM_T native = (GPU_V_STREAM_T)stream;
  if (adapter->info.capabilities & GPU_ADAPTER_CAP_HOST_FUNC_NATIVE) {
    GPU_V_CALL(adapter, GPU_V_LAUNCH_HOST_FUNC(native, fn, user_data));
    return HAL_OK;
  }
  hal_allocator_t allocator = gpu_adapter_base(adapter)->allocator;
  GPU_VX(host_call_t)* call = NULL;
  HAL_RETURN_IF_ERROR(
      hal_allocator_malloc(allocator, sizeof(*call), (void**)&call));
  call->fn = fn;
  call->user_data = user_data;
  call->allocator = allocator;
  int32_t result = GPU_V_INVOKE(
      adapter, GPU_V_STREAM_ADD_CALLBACK(native, GPU_VX(host_callback), call));
  if (result == 0)
    return HAL_OK;
  // Not enqueued: the callback never runs, the record is still ours.
  hal_allocator_free(allocator, call);
  return gpu_adapter_result_status(gpu_adapter_base(adapter), result,
                                   GPU_V_NAME(GPU_V_STREAM_ADD_CALLBACK(
                                       native, GPU_VX(host_callback), call)),
                                   __FILE__, __LINE__);
}

//===--- events ---===//

static hal_status_t GPU_VX(event_create)(gpu_adapter_t* adapter,
                                         gpu_event_t* out_event) {
  *out_event = NULL;
  GPU_V_EVENT_T native = NULL;
  GPU_V_CALL(adapter, GPU_V_EVENT_CREATE(&native));
  *out_event = (gpu_event_t)native;
  return HAL_OK;
}

static void GPU_VX(event_destroy)(gpu_adapter_t* adapter, gpu_event_t event) {
  if (event)
    GPU_V_CALL_AND_DROP(adapter, GPU_V_EVENT_DESTROY((GPU_V_EVENT_T)event));
}

static hal_status_t GPU_VX(event_record)(gpu_adapter_t* adapter,
                                         gpu_event_t event,
                                         gpu_stream_t stream) {
  GPU_V_CALL(adapter,
             GPU_V_EVENT_RECORD((GPU_V_EVENT_T)event, (GPU_V_STREAM_T)stream));
  return HAL_OK;
}

static hal_status_t GPU_VX(event_query)(gpu_adapter_t* adapter,
                                        gpu_event_t event, bool* out_ready) {
  GPU_V_EVENT_T native = (GPU_V_EVENT_T)event;
  return GPU_VX(query_result)(adapter,
                              GPU_V_INVOKE(adapter, GPU_V_EVENT_QUERY(native)),
                              GPU_V_NAME(GPU_V_EVENT_QUERY(native)), out_ready);
}

static hal_status_t GPU_VX(event_synchronize)(gpu_adapter_t* adapter,
                                              gpu_event_t event) {
  GPU_V_CALL(adapter, GPU_V_EVENT_SYNCHRONIZE((GPU_V_EVENT_T)event));
  return HAL_OK;
}

//===--- graphs ---===//
//
// Dependency arrays are passed through with a cast: an array of opaque
// node pointers has the representation of an array of native node handles.

#define GPU_V_NODES(dependencies) ((const GPU_V_GRAPH_NODE_T*)(dependencies))

static hal_status_t GPU_VX(graph_create)(gpu_adapter_t* adapter,
                                         gpu_graph_t* out_graph) {
  *out_graph = NULL;
  GPU_ADAPTER_REQUIRE(adapter, GPU_ADAPTER_CAP_GRAPH, "graphs");
  GPU_V_GRAPH_T native = NULL;
  GPU_V_CALL(adapter, GPU_V_GRAPH_CREATE(&native));
  *out_graph = (gpu_graph_t)native;
  return HAL_OK;
}

static void GPU_VX(graph_destroy)(gpu_adapter_t* adapter, gpu_graph_t graph) {
  if (graph)
    GPU_V_CALL_AND_DROP(adapter, GPU_V_GRAPH_DESTROY((GPU_V_GRAPH_T)graph));
}

static hal_status_t GPU_VX(graph_add_empty_node)(
    gpu_adapter_t* adapter, gpu_graph_t graph,
    const gpu_graph_node_t* dependencies, size_t dependency_count,
    gpu_graph_node_t* out_node) {
  *out_node = NULL;
  GPU_ADAPTER_REQUIRE(adapter, GPU_ADAPTER_CAP_GRAPH, "graphs");
  GPU_V_GRAPH_NODE_T node = NULL;
  GPU_V_CALL(adapter, GPU_V_GRAPH_ADD_EMPTY_NODE(&node, (GPU_V_GRAPH_T)graph,
                                                 GPU_V_NODES(dependencies),
                                                 dependency_count));
  *out_node = (gpu_graph_node_t)node;
  return HAL_OK;
}

static hal_status_t GPU_VX(graph_add_host_node)(
    gpu_adapter_t* adapter, gpu_graph_t graph,
    const gpu_graph_node_t* dependencies, size_t dependency_count,
    gpu_host_fn_t fn, void* user_data, gpu_graph_node_t* out_node) {
  *out_node = NULL;
  GPU_ADAPTER_REQUIRE(adapter, GPU_ADAPTER_CAP_GRAPH_HOST_NODE,
                      "graph host nodes");
  // Same field names in both APIs; the function types are identical.
  GPU_V_HOST_NODE_PARAMS_T params;
  memset(&params, 0, sizeof(params));
  params.fn = fn;
  params.userData = user_data;
  GPU_V_GRAPH_NODE_T node = NULL;
  GPU_V_CALL(adapter, GPU_V_GRAPH_ADD_HOST_NODE(&node, (GPU_V_GRAPH_T)graph,
                                                GPU_V_NODES(dependencies),
                                                dependency_count, &params));
  *out_node = (gpu_graph_node_t)node;
  return HAL_OK;
}

static hal_status_t GPU_VX(graph_add_memset_node)(
    gpu_adapter_t* adapter, gpu_graph_t graph,
    const gpu_graph_node_t* dependencies, size_t dependency_count,
    gpu_device_ptr_t target, uint32_t pattern, uint32_t pattern_size,
    uint64_t count, gpu_graph_node_t* out_node) {
  *out_node = NULL;
  GPU_ADAPTER_REQUIRE(adapter, GPU_ADAPTER_CAP_GRAPH_MEMSET_NODE,
                      "graph memset nodes");
  uint32_t value = 0;
  HAL_RETURN_IF_ERROR(gpu_adapter_memset_value(pattern, pattern_size, &value));
  // CUDA names the node's context (the current one); HIP has none.
  GPU_V_GRAPH_CONTEXT_T context = NULL;
  HAL_RETURN_IF_ERROR(GPU_V_GRAPH_CONTEXT(adapter, &context));
  // One row of |count| elements. The field names are the same in both
  // APIs; the order and |dst|'s type are not.
  GPU_V_MEMSET_NODE_PARAMS_T params;
  memset(&params, 0, sizeof(params));
  params.dst = GPU_V_NATIVE_PTR(target);
  params.elementSize = pattern_size;
  params.value = value;
  params.width = (size_t)count;
  params.height = 1;
  GPU_V_GRAPH_NODE_T node = NULL;
  GPU_V_CALL(adapter,
             GPU_V_GRAPH_ADD_MEMSET_NODE(&node, (GPU_V_GRAPH_T)graph,
                                         GPU_V_NODES(dependencies),
                                         dependency_count, &params, context));
  *out_node = (gpu_graph_node_t)node;
  return HAL_OK;
}

static hal_status_t GPU_VX(graph_instantiate)(gpu_adapter_t* adapter,
                                              gpu_graph_t graph,
                                              gpu_graph_exec_t* out_exec) {
  *out_exec = NULL;
  GPU_ADAPTER_REQUIRE(adapter, GPU_ADAPTER_CAP_GRAPH, "graphs");
  GPU_V_GRAPH_EXEC_T exec = NULL;
  GPU_V_CALL(adapter, GPU_V_GRAPH_INSTANTIATE(&exec, (GPU_V_GRAPH_T)graph));
  *out_exec = (gpu_graph_exec_t)exec;
  return HAL_OK;
}

static void GPU_VX(graph_exec_destroy)(gpu_adapter_t* adapter,
                                       gpu_graph_exec_t exec) {
  if (exec) {
    GPU_V_CALL_AND_DROP(adapter,
                        GPU_V_GRAPH_EXEC_DESTROY((GPU_V_GRAPH_EXEC_T)exec));
  }
}

static hal_status_t GPU_VX(graph_launch)(gpu_adapter_t* adapter,
                                         gpu_graph_exec_t exec,
                                         gpu_stream_t stream) {
  GPU_ADAPTER_REQUIRE(adapter, GPU_ADAPTER_CAP_GRAPH, "graphs");
  GPU_V_CALL(adapter, GPU_V_GRAPH_LAUNCH((GPU_V_GRAPH_EXEC_T)exec,
                                         (GPU_V_STREAM_T)stream));
  return HAL_OK;
}

static hal_status_t GPU_VX(graph_exec_update)(gpu_adapter_t* adapter,
                                              gpu_graph_exec_t exec,
                                              gpu_graph_t graph,
                                              bool* out_accepted) {
  *out_accepted = false;
  if (!(adapter->info.capabilities & GPU_ADAPTER_CAP_GRAPH_EXEC_UPDATE))
    return HAL_OK;  // the caller instantiates anew
  GPU_V_GRAPH_EXEC_T native_exec = (GPU_V_GRAPH_EXEC_T)exec;
  GPU_V_GRAPH_T native_graph = (GPU_V_GRAPH_T)graph;
  int32_t result =
      GPU_V_INVOKE(adapter, GPU_V_GRAPH_EXEC_UPDATE(native_exec, native_graph));
  // A refusal leaves |exec| as it was: not an error.
  if (result == (int32_t)GPU_V_GRAPH_EXEC_UPDATE_REFUSED)
    return HAL_OK;
  GPU_RETURN_IF_ERROR(
      gpu_adapter_base(adapter), result,
      GPU_V_NAME(GPU_V_GRAPH_EXEC_UPDATE(native_exec, native_graph)));
  *out_accepted = true;
  return HAL_OK;
}

//===--- modules ---===//

static hal_status_t GPU_VX(module_load_data)(gpu_adapter_t* adapter,
                                             const void* image,
                                             gpu_module_t* out_module) {
  *out_module = NULL;
  GPU_ADAPTER_REQUIRE(adapter, GPU_ADAPTER_CAP_MODULE, "modules");
  GPU_V_MODULE_T module = NULL;
  GPU_V_CALL(adapter, GPU_V_MODULE_LOAD_DATA(&module, image));
  *out_module = (gpu_module_t)module;
  return HAL_OK;
}

static void GPU_VX(module_unload)(gpu_adapter_t* adapter, gpu_module_t module) {
  if (module)
    GPU_V_CALL_AND_DROP(adapter, GPU_V_MODULE_UNLOAD((GPU_V_MODULE_T)module));
}

static hal_status_t GPU_VX(module_get_function)(gpu_adapter_t* adapter,
                                                gpu_module_t module,
                                                const char* name,
                                                gpu_function_t* out_function) {
  *out_function = NULL;
  GPU_ADAPTER_REQUIRE(adapter, GPU_ADAPTER_CAP_MODULE, "modules");
  GPU_V_FUNCTION_T function = NULL;
  GPU_V_CALL(adapter, GPU_V_MODULE_GET_FUNCTION(&function,
                                                (GPU_V_MODULE_T)module, name));
  *out_function = (gpu_function_t)function;
  return HAL_OK;
}

static hal_status_t GPU_VX(launch_kernel)(gpu_adapter_t* adapter,
                                          gpu_stream_t stream,
                                          const gpu_kernel_launch_t* launch) {
  GPU_ADAPTER_REQUIRE(adapter, GPU_ADAPTER_CAP_MODULE, "modules");
  GPU_V_CALL(
      adapter,
      GPU_V_LAUNCH_KERNEL(
          (GPU_V_FUNCTION_T)launch->function, launch->grid[0], launch->grid[1],
          launch->grid[2], launch->block[0], launch->block[1], launch->block[2],
          launch->shared_memory_bytes, (GPU_V_STREAM_T)stream, launch->args));
  return HAL_OK;
}

//===--- the ops table ---===//

static const gpu_adapter_ops_t GPU_VX(ops) = {
    .destroy = GPU_VX(destroy),
    .device_count = GPU_VX(device_count),
    .device_name = GPU_VX(device_name),
    .device_total_memory = GPU_VX(device_total_memory),
    .device_attribute = GPU_VX(device_attribute),
    .context_open = GPU_VX(context_open),
    .context_close = GPU_VX(context_close),
    .make_current = GPU_VX(make_current),
    .device_alloc = GPU_VX(device_alloc),
    .device_free = GPU_VX(device_free),
    .host_alloc = GPU_VX(host_alloc),
    .host_free = GPU_VX(host_free),
    .memcpy_sync = GPU_VX(memcpy_sync),
    .memcpy_async = GPU_VX(memcpy_async),
    .memset_async = GPU_VX(memset_async),
    .stream_create = GPU_VX(stream_create),
    .stream_destroy = GPU_VX(stream_destroy),
    .stream_synchronize = GPU_VX(stream_synchronize),
    .stream_query = GPU_VX(stream_query),
    .stream_wait_event = GPU_VX(stream_wait_event),
    .launch_host_func = GPU_VX(launch_host_func),
    .event_create = GPU_VX(event_create),
    .event_destroy = GPU_VX(event_destroy),
    .event_record = GPU_VX(event_record),
    .event_query = GPU_VX(event_query),
    .event_synchronize = GPU_VX(event_synchronize),
    .graph_create = GPU_VX(graph_create),
    .graph_destroy = GPU_VX(graph_destroy),
    .graph_add_empty_node = GPU_VX(graph_add_empty_node),
    .graph_add_memset_node = GPU_VX(graph_add_memset_node),
    .graph_add_memcpy_node = GPU_VX(graph_add_memcpy_node),
    .graph_add_host_node = GPU_VX(graph_add_host_node),
    .graph_add_kernel_node = GPU_VX(graph_add_kernel_node),
    .graph_instantiate = GPU_VX(graph_instantiate),
    .graph_exec_destroy = GPU_VX(graph_exec_destroy),
    .graph_launch = GPU_VX(graph_launch),
    .graph_exec_update = GPU_VX(graph_exec_update),
    .module_load_data = GPU_VX(module_load_data),
    .module_unload = GPU_VX(module_unload),
    .module_get_function = GPU_VX(module_get_function),
    .launch_kernel = GPU_VX(launch_kernel),
};

//===--- the vendor descriptor ---===//

static const char* const GPU_VX(libraries)[] = {GPU_V_LIBRARIES};

const gpu_adapter_vendor_desc_t GPU_VX(vendor_desc) = {
    .vendor = GPU_V_VENDOR,
    .name = GPU_V_NAME_STRING,
    .library_env = GPU_V_LIBRARY_ENV,
    .libraries = GPU_VX(libraries),
    .library_count = HAL_ARRAYSIZE(GPU_VX(libraries)),
    .header_version = GPU_V_HEADER_VERSION,
    .adapter_size = sizeof(GPU_V_ADAPTER_T),
    .symbols_offset = offsetof(GPU_V_ADAPTER_T, syms),
    .symbols = GPU_VX(symbols),
    .symbol_count = HAL_ARRAYSIZE(GPU_VX(symbols)),
    .errors = GPU_VX(errors),
    .error_count = HAL_ARRAYSIZE(GPU_VX(errors)),
    .ops = &GPU_VX(ops),
    .lookup = GPU_V_LOOKUP,
    .initialize = GPU_VX(initialize),
    .finish_initialize = GPU_VX(finish_initialize),
    .error_name = GPU_VX(error_name),
    .error_string = GPU_VX(error_string),
    .keep_loaded = GPU_V_KEEP_LOADED,
};
