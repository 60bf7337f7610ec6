// Copyright 2026 The HAL Authors.
//
// The HIP runtime adapter: every op, the loading hooks, the symbol and
// error tables and the vendor descriptor. cuda_ops.c is the same list for
// CUDA; the adapter tests run both, so the two keep the same behavior.
//
// Loading: libamdhip64.so, then its versioned names newest first (Debian
// installs libamdhip64.so.5 with the runtime and the unversioned link with
// -dev), or $HAL_HIP_LIBRARY. Every symbol is dlsym()ed.
//
// What real HIP runtimes lack, and the fallbacks (docs/adapters.md):
//  - hipLaunchHostFunc (declared but not exported by Debian's 5.2.3):
//    emulated with hipStreamAddCallback;
//  - graph entry points: capability bits off, graph ops UNIMPLEMENTED.
//
// Handles are converted with plain casts: gpu_stream_t and hipStream_t are
// both pointers to incomplete structs, never dereferenced on our side.

#include <dlfcn.h>
#include <string.h>

#include "hal/library.h"
#include "hip_vendor.h"

static gpu_hip_adapter_t* gpu_hip(gpu_adapter_t* adapter) {
  return (gpu_hip_adapter_t*)adapter;
}

static const gpu_hip_symbols_t* gpu_hip_syms(const gpu_adapter_base_t* base) {
  return &((const gpu_hip_adapter_t*)base)->syms;
}

static void* gpu_hip_pointer(gpu_device_ptr_t address) {
  return (void*)(uintptr_t)address;
}

// With no GPU, hipInit says hipErrorInvalidDevice and hipGetDeviceCount
// says hipErrorNoDevice (Debian's 5.2.3).
static bool gpu_hip_is_no_device(hipError_t result) {
  return result == hipErrorNoDevice || result == hipErrorInvalidDevice;
}

//===--- error names, initialization ---===//

// The runtime's name / description of |result| (NULL from a fake;
// "hipErrorUnknown" for unknown codes, which the error table makes moot).
static const char* gpu_hip_error_name(const gpu_adapter_base_t* base,
                                      int32_t result) {
  const gpu_hip_symbols_t* syms = gpu_hip_syms(base);
  return syms->hipGetErrorName ? syms->hipGetErrorName((hipError_t)result)
                               : NULL;
}

static const char* gpu_hip_error_string(const gpu_adapter_base_t* base,
                                        int32_t result) {
  const gpu_hip_symbols_t* syms = gpu_hip_syms(base);
  return syms->hipGetErrorString ? syms->hipGetErrorString((hipError_t)result)
                                 : NULL;
}

static hal_status_t gpu_hip_initialize(gpu_adapter_base_t* base,
                                       hal_status_t* out_no_device) {
  hipError_t result = gpu_hip_syms(base)->hipInit(0);
  return gpu_adapter_init_status(base, result, gpu_hip_is_no_device(result),
                                 "hipInit", __FILE__, __LINE__, out_no_device);
}

// roctx where its library is present: loaded, never linked, and absent
// means silently off (its own sonames, then the development name).
static void gpu_hip_ranges_initialize(gpu_hip_adapter_t* hip) {
  static const char* const kLibraries[] = {"libroctx64.so.4", "libroctx64.so.1",
                                           "libroctx64.so"};
  for (size_t i = 0; i < HAL_ARRAYSIZE(kLibraries) && !hip->base.tool_library;
       ++i) {
    hip->base.tool_library =
        hal_library_open(kLibraries[i], RTLD_NOW | RTLD_LOCAL);
  }
  if (!hip->base.tool_library)
    return;
  void* start = dlsym(hip->base.tool_library, "roctxRangeStartA");
  void* stop = dlsym(hip->base.tool_library, "roctxRangeStop");
  if (!start || !stop) {
    hal_library_close(hip->base.tool_library);
    hip->base.tool_library = NULL;
    return;
  }
  memcpy(&hip->roctxRangeStartA, &start, sizeof(start));
  memcpy(&hip->roctxRangeStop, &stop, sizeof(stop));
  hip->base.public.info.tool_ranges = "roctx";
}

static bool gpu_hip_range_start(gpu_adapter_t* adapter, const char* message,
                                uint64_t* out_range) {
  gpu_hip_adapter_t* hip = gpu_hip(adapter);
  *out_range = 0;
  if (!adapter->info.tool_ranges)
    return false;
  *out_range = hip->roctxRangeStartA(message);
  return true;
}

static void gpu_hip_range_end(gpu_adapter_t* adapter, uint64_t range) {
  if (adapter->info.tool_ranges)
    gpu_hip(adapter)->roctxRangeStop(range);
}

static hal_status_t gpu_hip_finish_initialize(gpu_adapter_base_t* base,
                                              hal_status_t* inout_no_device) {
  const gpu_hip_symbols_t* syms = gpu_hip_syms(base);
  gpu_adapter_info_t* info = &base->public.info;
  int version = 0;
  GPU_RETURN_IF_ERROR(base, syms->hipDriverGetVersion(&version),
                      "hipDriverGetVersion");
  info->driver_version = version;
  version = 0;
  GPU_RETURN_IF_ERROR(base, syms->hipRuntimeGetVersion(&version),
                      "hipRuntimeGetVersion");
  info->runtime_version = version;
  gpu_hip_ranges_initialize((gpu_hip_adapter_t*)base);
  if (*inout_no_device) {
    // hipInit said hipErrorInvalidDevice; the count says hipErrorNoDevice.
    int count = 0;
    hipError_t result = syms->hipGetDeviceCount(&count);
    gpu_adapter_explain_no_device(base, result, count, "hipGetDeviceCount",
                                  inout_no_device);
  }
  return HAL_OK;
}

static void gpu_hip_destroy(gpu_adapter_t* adapter) {
  gpu_adapter_base_destroy(gpu_adapter_base(adapter));
}

//===--- devices ---===//

static hal_status_t gpu_hip_device_count(gpu_adapter_t* adapter,
                                         int* out_count) {
  gpu_hip_adapter_t* hip = gpu_hip(adapter);
  *out_count = 0;
  if (adapter->info.no_device_reason)
    return HAL_OK;
  int count = 0;
  hipError_t result = hip->syms.hipGetDeviceCount(&count);
  if (gpu_hip_is_no_device(result))
    return HAL_OK;
  GPU_RETURN_IF_ERROR(&hip->base, result, "hipGetDeviceCount");
  *out_count = count;
  return HAL_OK;
}

static hal_status_t gpu_hip_device_get(gpu_hip_adapter_t* hip, int ordinal,
                                       hipDevice_t* out_device) {
  *out_device = 0;
  GPU_RETURN_IF_ERROR(&hip->base, hip->syms.hipDeviceGet(out_device, ordinal),
                      "hipDeviceGet");
  return HAL_OK;
}

static hal_status_t gpu_hip_device_name(gpu_adapter_t* adapter, int device,
                                        char* buffer, size_t capacity) {
  gpu_hip_adapter_t* hip = gpu_hip(adapter);
  if (!buffer || capacity == 0 || capacity > INT32_MAX) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "device name buffer of %zu bytes", capacity);
  }
  buffer[0] = 0;
  hipDevice_t native = 0;
  HAL_RETURN_IF_ERROR(gpu_hip_device_get(hip, device, &native));
  GPU_RETURN_IF_ERROR(&hip->base,
                      hip->syms.hipDeviceGetName(buffer, (int)capacity, native),
                      "hipDeviceGetName");
  buffer[capacity - 1] = 0;
  return HAL_OK;
}

static hal_status_t gpu_hip_device_uuid(
    gpu_adapter_t* adapter, int device,
    uint8_t out_uuid[GPU_ADAPTER_UUID_SIZE]) {
  static_assert(sizeof(hipUUID) == GPU_ADAPTER_UUID_SIZE, "a hipUUID");
  gpu_hip_adapter_t* hip = gpu_hip(adapter);
  memset(out_uuid, 0, GPU_ADAPTER_UUID_SIZE);
  hipDevice_t native = 0;
  HAL_RETURN_IF_ERROR(gpu_hip_device_get(hip, device, &native));
  hipUUID uuid;
  memset(&uuid, 0, sizeof(uuid));
  GPU_RETURN_IF_ERROR(&hip->base, hip->syms.hipDeviceGetUuid(&uuid, native),
                      "hipDeviceGetUuid");
  return gpu_adapter_device_uuid_result(adapter, device, "hipDeviceGetUuid",
                                        uuid.bytes, out_uuid);
}

static hal_status_t gpu_hip_device_total_memory(gpu_adapter_t* adapter,
                                                int device,
                                                uint64_t* out_bytes) {
  gpu_hip_adapter_t* hip = gpu_hip(adapter);
  *out_bytes = 0;
  hipDevice_t native = 0;
  HAL_RETURN_IF_ERROR(gpu_hip_device_get(hip, device, &native));
  size_t bytes = 0;
  GPU_RETURN_IF_ERROR(&hip->base, hip->syms.hipDeviceTotalMem(&bytes, native),
                      "hipDeviceTotalMem");
  *out_bytes = bytes;
  return HAL_OK;
}

static hal_status_t gpu_hip_device_attribute(gpu_adapter_t* adapter, int device,
                                             gpu_device_attribute_t attribute,
                                             int* out_value) {
  static const hipDeviceAttribute_t kAttributes[] = {
      [GPU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT] =
          hipDeviceAttributeMultiprocessorCount,
      [GPU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR] =
          hipDeviceAttributeComputeCapabilityMajor,
      [GPU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR] =
          hipDeviceAttributeComputeCapabilityMinor,
      [GPU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK] =
          hipDeviceAttributeMaxThreadsPerBlock,
      [GPU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS] =
          hipDeviceAttributeConcurrentKernels,
      [GPU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY] =
          hipDeviceAttributeCanMapHostMemory,
      [GPU_DEVICE_ATTRIBUTE_PCI_BUS_ID] = hipDeviceAttributePciBusId,
      [GPU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X] = hipDeviceAttributeMaxBlockDimX,
      [GPU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y] = hipDeviceAttributeMaxBlockDimY,
      [GPU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z] = hipDeviceAttributeMaxBlockDimZ,
      [GPU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X] = hipDeviceAttributeMaxGridDimX,
      [GPU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y] = hipDeviceAttributeMaxGridDimY,
      [GPU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z] = hipDeviceAttributeMaxGridDimZ,
  };
  static_assert(HAL_ARRAYSIZE(kAttributes) == GPU_DEVICE_ATTRIBUTE_COUNT_,
                "every gpu_device_attribute_t needs a HIP attribute");
  gpu_hip_adapter_t* hip = gpu_hip(adapter);
  *out_value = 0;
  if ((unsigned)attribute >= GPU_DEVICE_ATTRIBUTE_COUNT_) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "unknown device attribute %d", (int)attribute);
  }
  hipDevice_t native = 0;
  HAL_RETURN_IF_ERROR(gpu_hip_device_get(hip, device, &native));
  int value = 0;
  GPU_RETURN_IF_ERROR(
      &hip->base,
      hip->syms.hipDeviceGetAttribute(&value, kAttributes[attribute], native),
      "hipDeviceGetAttribute");
  *out_value = value;
  return HAL_OK;
}

//===--- contexts: HIP's are implicit, one per device and thread ---===//

static hal_status_t gpu_hip_context_open(gpu_adapter_t* adapter, int device,
                                         gpu_context_t** out_context) {
  gpu_hip_adapter_t* hip = gpu_hip(adapter);
  *out_context = NULL;
  // Validates the ordinal; nothing to retain.
  hipDevice_t native_device = 0;
  HAL_RETURN_IF_ERROR(gpu_hip_device_get(hip, device, &native_device));
  return gpu_adapter_context_allocate(adapter, device, native_device, NULL,
                                      out_context);
}

static void gpu_hip_context_close(gpu_adapter_t* adapter,
                                  gpu_context_t* context) {
  gpu_adapter_context_free(adapter, context);
}

static hal_status_t gpu_hip_make_current(gpu_adapter_t* adapter,
                                         gpu_context_t* context) {
  gpu_hip_adapter_t* hip = gpu_hip(adapter);
  GPU_RETURN_IF_ERROR(&hip->base, hip->syms.hipSetDevice(context->device),
                      "hipSetDevice");
  return HAL_OK;
}

//===--- memory ---===//

// Destroy and free ops drop the runtime's error: the object is gone either
// way, and a lost device shows in the next query or synchronize.

static hal_status_t gpu_hip_device_alloc(gpu_adapter_t* adapter, uint64_t size,
                                         gpu_device_ptr_t* out_pointer) {
  gpu_hip_adapter_t* hip = gpu_hip(adapter);
  *out_pointer = 0;
  void* native = NULL;
  GPU_RETURN_IF_ERROR(&hip->base, hip->syms.hipMalloc(&native, (size_t)size),
                      "hipMalloc");
  *out_pointer = (gpu_device_ptr_t)(uintptr_t)native;
  return HAL_OK;
}

static hal_status_t gpu_hip_device_free(gpu_adapter_t* adapter,
                                        gpu_device_ptr_t pointer) {
  if (!pointer)
    return HAL_OK;
  GPU_RETURN_IF_ERROR(&gpu_hip(adapter)->base,
                      gpu_hip(adapter)->syms.hipFree(gpu_hip_pointer(pointer)),
                      "hipFree");
  return HAL_OK;
}

static hal_status_t gpu_hip_host_alloc(gpu_adapter_t* adapter, uint64_t size,
                                       void** out_pointer) {
  gpu_hip_adapter_t* hip = gpu_hip(adapter);
  *out_pointer = NULL;
  void* pointer = NULL;
  GPU_RETURN_IF_ERROR(&hip->base,
                      hip->syms.hipHostMalloc(&pointer, (size_t)size, 0),
                      "hipHostMalloc");
  *out_pointer = pointer;
  return HAL_OK;
}

static hal_status_t gpu_hip_host_free(gpu_adapter_t* adapter, void* pointer) {
  if (!pointer)
    return HAL_OK;
  GPU_RETURN_IF_ERROR(&gpu_hip(adapter)->base,
                      gpu_hip(adapter)->syms.hipHostFree(pointer),
                      "hipHostFree");
  return HAL_OK;
}

// hipMemcpyDefault: the runtime infers host or device from the pointers.
static hal_status_t gpu_hip_memcpy_sync(gpu_adapter_t* adapter,
                                        gpu_device_ptr_t target,
                                        gpu_device_ptr_t source,
                                        uint64_t length) {
  gpu_hip_adapter_t* hip = gpu_hip(adapter);
  GPU_RETURN_IF_ERROR(
      &hip->base,
      hip->syms.hipMemcpy(gpu_hip_pointer(target), gpu_hip_pointer(source),
                          (size_t)length, hipMemcpyDefault),
      "hipMemcpy");
  // As cuda_ops.c: the null stream drained, whatever the runtime's rules
  // for pageable staging and device-to-device copies.
  GPU_RETURN_IF_ERROR(&hip->base, hip->syms.hipStreamSynchronize(NULL),
                      "hipStreamSynchronize");
  return HAL_OK;
}

static hal_status_t gpu_hip_memcpy_async(gpu_adapter_t* adapter,
                                         gpu_stream_t stream,
                                         gpu_device_ptr_t target,
                                         gpu_device_ptr_t source,
                                         uint64_t length) {
  gpu_hip_adapter_t* hip = gpu_hip(adapter);
  GPU_RETURN_IF_ERROR(
      &hip->base,
      hip->syms.hipMemcpyAsync(gpu_hip_pointer(target), gpu_hip_pointer(source),
                               (size_t)length, hipMemcpyDefault,
                               (hipStream_t)stream),
      "hipMemcpyAsync");
  return HAL_OK;
}

static hal_status_t gpu_hip_memset_async(
    gpu_adapter_t* adapter, gpu_stream_t stream, gpu_device_ptr_t target,
    uint32_t pattern, uint32_t pattern_size, uint64_t count) {
  gpu_hip_adapter_t* hip = gpu_hip(adapter);
  void* native = gpu_hip_pointer(target);
  hipStream_t native_stream = (hipStream_t)stream;
  switch (pattern_size) {
    case 1:
      GPU_RETURN_IF_ERROR(
          &hip->base,
          hip->syms.hipMemsetD8Async(native, (unsigned char)pattern,
                                     (size_t)count, native_stream),
          "hipMemsetD8Async");
      return HAL_OK;
    case 2:
      GPU_RETURN_IF_ERROR(
          &hip->base,
          hip->syms.hipMemsetD16Async(native, (unsigned short)pattern,
                                      (size_t)count, native_stream),
          "hipMemsetD16Async");
      return HAL_OK;
    case 4:
      GPU_RETURN_IF_ERROR(
          &hip->base,
          hip->syms.hipMemsetD32Async(native, (int)pattern, (size_t)count,
                                      native_stream),
          "hipMemsetD32Async");
      return HAL_OK;
  }
  return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                         "memset pattern size %u (must be 1, 2 or 4)",
                         pattern_size);
}

//===--- stream-ordered memory ---===//

static hal_status_t gpu_hip_pool_create(gpu_adapter_t* adapter,
                                        gpu_context_t* context,
                                        uint64_t release_threshold,
                                        gpu_pool_t* out_pool) {
  gpu_hip_adapter_t* hip = gpu_hip(adapter);
  *out_pool = NULL;
  GPU_ADAPTER_REQUIRE(adapter, GPU_ADAPTER_CAP_STREAM_ORDERED_ALLOC,
                      "stream-ordered allocation");
  hipMemPoolProps props;
  memset(&props, 0, sizeof(props));
  props.allocType = hipMemAllocationTypePinned;
  props.location.type = hipMemLocationTypeDevice;
  props.location.id = context->native_device;
  hipMemPool_t pool = NULL;
  GPU_RETURN_IF_ERROR(&hip->base, hip->syms.hipMemPoolCreate(&pool, &props),
                      "hipMemPoolCreate");
  uint64_t threshold = release_threshold;
  hipError_t result = hip->syms.hipMemPoolSetAttribute(
      pool, hipMemPoolAttrReleaseThreshold, &threshold);
  if (result != hipSuccess) {
    (void)hip->syms.hipMemPoolDestroy(pool);
    return gpu_adapter_result_status(
        &hip->base, result, "hipMemPoolSetAttribute", __FILE__, __LINE__);
  }
  *out_pool = (gpu_pool_t)pool;
  return HAL_OK;
}

static hal_status_t gpu_hip_pool_destroy(gpu_adapter_t* adapter,
                                         gpu_pool_t pool) {
  if (!pool)
    return HAL_OK;
  GPU_RETURN_IF_ERROR(
      &gpu_hip(adapter)->base,
      gpu_hip(adapter)->syms.hipMemPoolDestroy((hipMemPool_t)pool),
      "hipMemPoolDestroy");
  return HAL_OK;
}

static hal_status_t gpu_hip_pool_trim(gpu_adapter_t* adapter, gpu_pool_t pool,
                                      uint64_t keep_bytes) {
  gpu_hip_adapter_t* hip = gpu_hip(adapter);
  GPU_ADAPTER_REQUIRE(adapter, GPU_ADAPTER_CAP_STREAM_ORDERED_ALLOC,
                      "stream-ordered allocation");
  GPU_RETURN_IF_ERROR(
      &hip->base,
      hip->syms.hipMemPoolTrimTo((hipMemPool_t)pool, (size_t)keep_bytes),
      "hipMemPoolTrimTo");
  return HAL_OK;
}

static hal_status_t gpu_hip_pool_reserved_bytes(gpu_adapter_t* adapter,
                                                gpu_pool_t pool,
                                                uint64_t* out_bytes) {
  gpu_hip_adapter_t* hip = gpu_hip(adapter);
  *out_bytes = 0;
  GPU_ADAPTER_REQUIRE(adapter, GPU_ADAPTER_CAP_STREAM_ORDERED_ALLOC,
                      "stream-ordered allocation");
  uint64_t bytes = 0;
  GPU_RETURN_IF_ERROR(
      &hip->base,
      hip->syms.hipMemPoolGetAttribute(
          (hipMemPool_t)pool, hipMemPoolAttrReservedMemCurrent, &bytes),
      "hipMemPoolGetAttribute");
  *out_bytes = bytes;
  return HAL_OK;
}

static hal_status_t gpu_hip_alloc_async(gpu_adapter_t* adapter, gpu_pool_t pool,
                                        gpu_stream_t stream, uint64_t size,
                                        gpu_device_ptr_t* out_pointer) {
  gpu_hip_adapter_t* hip = gpu_hip(adapter);
  *out_pointer = 0;
  GPU_ADAPTER_REQUIRE(adapter, GPU_ADAPTER_CAP_STREAM_ORDERED_ALLOC,
                      "stream-ordered allocation");
  void* native = NULL;
  GPU_RETURN_IF_ERROR(
      &hip->base,
      hip->syms.hipMallocFromPoolAsync(&native, (size_t)size,
                                       (hipMemPool_t)pool, (hipStream_t)stream),
      "hipMallocFromPoolAsync");
  *out_pointer = (gpu_device_ptr_t)(uintptr_t)native;
  return HAL_OK;
}

static hal_status_t gpu_hip_free_async(gpu_adapter_t* adapter,
                                       gpu_stream_t stream,
                                       gpu_device_ptr_t pointer) {
  gpu_hip_adapter_t* hip = gpu_hip(adapter);
  GPU_ADAPTER_REQUIRE(adapter, GPU_ADAPTER_CAP_STREAM_ORDERED_ALLOC,
                      "stream-ordered allocation");
  GPU_RETURN_IF_ERROR(
      &hip->base,
      hip->syms.hipFreeAsync(gpu_hip_pointer(pointer), (hipStream_t)stream),
      "hipFreeAsync");
  return HAL_OK;
}

//===--- streams ---===//

static hal_status_t gpu_hip_stream_create(gpu_adapter_t* adapter,
                                          gpu_stream_t* out_stream) {
  gpu_hip_adapter_t* hip = gpu_hip(adapter);
  *out_stream = NULL;
  hipStream_t native = NULL;
  GPU_RETURN_IF_ERROR(
      &hip->base,
      hip->syms.hipStreamCreateWithFlags(&native, hipStreamNonBlocking),
      "hipStreamCreateWithFlags");
  *out_stream = (gpu_stream_t)native;
  return HAL_OK;
}

static hal_status_t gpu_hip_stream_destroy(gpu_adapter_t* adapter,
                                           gpu_stream_t stream) {
  if (!stream)
    return HAL_OK;
  GPU_RETURN_IF_ERROR(
      &gpu_hip(adapter)->base,
      gpu_hip(adapter)->syms.hipStreamDestroy((hipStream_t)stream),
      "hipStreamDestroy");
  return HAL_OK;
}

static hal_status_t gpu_hip_stream_synchronize(gpu_adapter_t* adapter,
                                               gpu_stream_t stream) {
  gpu_hip_adapter_t* hip = gpu_hip(adapter);
  GPU_RETURN_IF_ERROR(&hip->base,
                      hip->syms.hipStreamSynchronize((hipStream_t)stream),
                      "hipStreamSynchronize");
  return HAL_OK;
}

static hal_status_t gpu_hip_stream_query(gpu_adapter_t* adapter,
                                         gpu_stream_t stream, bool* out_idle) {
  gpu_hip_adapter_t* hip = gpu_hip(adapter);
  return GPU_QUERY_STATUS(&hip->base,
                          hip->syms.hipStreamQuery((hipStream_t)stream),
                          hipErrorNotReady, "hipStreamQuery", out_idle);
}

static hal_status_t gpu_hip_stream_wait_event(gpu_adapter_t* adapter,
                                              gpu_stream_t stream,
                                              gpu_event_t event) {
  gpu_hip_adapter_t* hip = gpu_hip(adapter);
  GPU_RETURN_IF_ERROR(
      &hip->base,
      hip->syms.hipStreamWaitEvent((hipStream_t)stream, (hipEvent_t)event, 0),
      "hipStreamWaitEvent");
  return HAL_OK;
}

//===--- host functions ---===//

// Runs on a runtime thread (Q1): hands the record back to shared code,
// which frees it and runs the function unless the stream has failed.
static void gpu_hip_host_callback(hipStream_t stream, hipError_t status,
                                  void* user_data) {
  (void)stream;
  gpu_adapter_host_call_run(user_data, status != hipSuccess);
}

// hipLaunchHostFunc when the runtime exports it (and it is not hidden),
// else hipStreamAddCallback through gpu_hip_host_callback.
static hal_status_t gpu_hip_launch_host_func(gpu_adapter_t* adapter,
                                             gpu_stream_t stream,
                                             gpu_host_fn_t fn,
                                             void* user_data) {
  gpu_hip_adapter_t* hip = gpu_hip(adapter);
  if (adapter->info.capabilities & GPU_ADAPTER_CAP_HOST_FUNC_NATIVE) {
    GPU_RETURN_IF_ERROR(
        &hip->base,
        hip->syms.hipLaunchHostFunc((hipStream_t)stream, fn, user_data),
        "hipLaunchHostFunc");
    return HAL_OK;
  }
  gpu_adapter_host_call_t* call = NULL;
  HAL_RETURN_IF_ERROR(
      gpu_adapter_host_call_create(&hip->base, fn, user_data, &call));
  hipError_t result = hip->syms.hipStreamAddCallback(
      (hipStream_t)stream, gpu_hip_host_callback, call, 0);
  if (result != hipSuccess) {
    // Not enqueued: the callback never runs, the record is still ours.
    gpu_adapter_host_call_discard(call);
    return gpu_adapter_result_status(&hip->base, result, "hipStreamAddCallback",
                                     __FILE__, __LINE__);
  }
  return HAL_OK;
}

//===--- events ---===//

static hal_status_t gpu_hip_event_create(gpu_adapter_t* adapter,
                                         gpu_event_t* out_event) {
  gpu_hip_adapter_t* hip = gpu_hip(adapter);
  *out_event = NULL;
  hipEvent_t native = NULL;
  GPU_RETURN_IF_ERROR(
      &hip->base,
      hip->syms.hipEventCreateWithFlags(&native, hipEventDisableTiming),
      "hipEventCreateWithFlags");
  *out_event = (gpu_event_t)native;
  return HAL_OK;
}

static hal_status_t gpu_hip_event_destroy(gpu_adapter_t* adapter,
                                          gpu_event_t event) {
  if (!event)
    return HAL_OK;
  GPU_RETURN_IF_ERROR(&gpu_hip(adapter)->base,
                      gpu_hip(adapter)->syms.hipEventDestroy((hipEvent_t)event),
                      "hipEventDestroy");
  return HAL_OK;
}

static hal_status_t gpu_hip_event_record(gpu_adapter_t* adapter,
                                         gpu_event_t event,
                                         gpu_stream_t stream) {
  gpu_hip_adapter_t* hip = gpu_hip(adapter);
  GPU_RETURN_IF_ERROR(
      &hip->base,
      hip->syms.hipEventRecord((hipEvent_t)event, (hipStream_t)stream),
      "hipEventRecord");
  return HAL_OK;
}

static hal_status_t gpu_hip_event_query(gpu_adapter_t* adapter,
                                        gpu_event_t event, bool* out_ready) {
  gpu_hip_adapter_t* hip = gpu_hip(adapter);
  return GPU_QUERY_STATUS(&hip->base,
                          hip->syms.hipEventQuery((hipEvent_t)event),
                          hipErrorNotReady, "hipEventQuery", out_ready);
}

static hal_status_t gpu_hip_event_synchronize(gpu_adapter_t* adapter,
                                              gpu_event_t event) {
  gpu_hip_adapter_t* hip = gpu_hip(adapter);
  GPU_RETURN_IF_ERROR(&hip->base,
                      hip->syms.hipEventSynchronize((hipEvent_t)event),
                      "hipEventSynchronize");
  return HAL_OK;
}

static hal_status_t gpu_hip_timed_event_create(gpu_adapter_t* adapter,
                                               gpu_event_t* out_event) {
  gpu_hip_adapter_t* hip = gpu_hip(adapter);
  *out_event = NULL;
  GPU_ADAPTER_REQUIRE(adapter, GPU_ADAPTER_CAP_EVENT_TIMING, "event timing");
  hipEvent_t native = NULL;
  GPU_RETURN_IF_ERROR(
      &hip->base, hip->syms.hipEventCreateWithFlags(&native, hipEventDefault),
      "hipEventCreateWithFlags");
  *out_event = (gpu_event_t)native;
  return HAL_OK;
}

static hal_status_t gpu_hip_event_elapsed_ms(gpu_adapter_t* adapter,
                                             gpu_event_t start, gpu_event_t end,
                                             float* out_ms) {
  gpu_hip_adapter_t* hip = gpu_hip(adapter);
  *out_ms = 0.0f;
  GPU_ADAPTER_REQUIRE(adapter, GPU_ADAPTER_CAP_EVENT_TIMING, "event timing");
  float ms = 0.0f;
  GPU_RETURN_IF_ERROR(
      &hip->base,
      hip->syms.hipEventElapsedTime(&ms, (hipEvent_t)start, (hipEvent_t)end),
      "hipEventElapsedTime");
  *out_ms = ms;
  return HAL_OK;
}

//===--- graphs ---===//
//
// Dependency arrays are passed through with a cast: an array of opaque
// node pointers has the representation of an array of hipGraphNode_t.

static hal_status_t gpu_hip_graph_create(gpu_adapter_t* adapter,
                                         gpu_graph_t* out_graph) {
  gpu_hip_adapter_t* hip = gpu_hip(adapter);
  *out_graph = NULL;
  GPU_ADAPTER_REQUIRE(adapter, GPU_ADAPTER_CAP_GRAPH, "graphs");
  hipGraph_t native = NULL;
  GPU_RETURN_IF_ERROR(&hip->base, hip->syms.hipGraphCreate(&native, 0),
                      "hipGraphCreate");
  *out_graph = (gpu_graph_t)native;
  return HAL_OK;
}

static hal_status_t gpu_hip_graph_destroy(gpu_adapter_t* adapter,
                                          gpu_graph_t graph) {
  if (!graph)
    return HAL_OK;
  GPU_RETURN_IF_ERROR(&gpu_hip(adapter)->base,
                      gpu_hip(adapter)->syms.hipGraphDestroy((hipGraph_t)graph),
                      "hipGraphDestroy");
  return HAL_OK;
}

static hal_status_t gpu_hip_graph_add_empty_node(
    gpu_adapter_t* adapter, gpu_graph_t graph,
    const gpu_graph_node_t* dependencies, size_t dependency_count,
    gpu_graph_node_t* out_node) {
  gpu_hip_adapter_t* hip = gpu_hip(adapter);
  *out_node = NULL;
  GPU_ADAPTER_REQUIRE(adapter, GPU_ADAPTER_CAP_GRAPH, "graphs");
  hipGraphNode_t node = NULL;
  GPU_RETURN_IF_ERROR(
      &hip->base,
      hip->syms.hipGraphAddEmptyNode(&node, (hipGraph_t)graph,
                                     (const hipGraphNode_t*)dependencies,
                                     dependency_count),
      "hipGraphAddEmptyNode");
  *out_node = (gpu_graph_node_t)node;
  return HAL_OK;
}

static hal_status_t gpu_hip_graph_add_memset_node(
    gpu_adapter_t* adapter, gpu_graph_t graph,
    const gpu_graph_node_t* dependencies, size_t dependency_count,
    gpu_device_ptr_t target, uint32_t pattern, uint32_t pattern_size,
    uint64_t count, gpu_graph_node_t* out_node) {
  gpu_hip_adapter_t* hip = gpu_hip(adapter);
  *out_node = NULL;
  GPU_ADAPTER_REQUIRE(adapter, GPU_ADAPTER_CAP_GRAPH_MEMSET_NODE,
                      "graph memset nodes");
  uint32_t value = 0;
  HAL_RETURN_IF_ERROR(gpu_adapter_memset_value(pattern, pattern_size, &value));
  // One row of |count| elements; HIP nodes take no context.
  hipMemsetParams params;
  memset(&params, 0, sizeof(params));
  params.dst = gpu_hip_pointer(target);
  params.elementSize = pattern_size;
  params.value = value;
  params.width = (size_t)count;
  params.height = 1;
  hipGraphNode_t node = NULL;
  GPU_RETURN_IF_ERROR(
      &hip->base,
      hip->syms.hipGraphAddMemsetNode(&node, (hipGraph_t)graph,
                                      (const hipGraphNode_t*)dependencies,
                                      dependency_count, &params),
      "hipGraphAddMemsetNode");
  *out_node = (gpu_graph_node_t)node;
  return HAL_OK;
}

static hal_status_t gpu_hip_graph_add_memcpy_node(
    gpu_adapter_t* adapter, gpu_graph_t graph,
    const gpu_graph_node_t* dependencies, size_t dependency_count,
    gpu_device_ptr_t target, gpu_device_ptr_t source, uint64_t length,
    gpu_graph_node_t* out_node) {
  gpu_hip_adapter_t* hip = gpu_hip(adapter);
  *out_node = NULL;
  GPU_ADAPTER_REQUIRE(adapter, GPU_ADAPTER_CAP_GRAPH_MEMCPY_NODE,
                      "graph memcpy nodes");
  // HIP has a 1-D memcpy node; hipMemcpyDefault infers the direction.
  hipGraphNode_t node = NULL;
  GPU_RETURN_IF_ERROR(
      &hip->base,
      hip->syms.hipGraphAddMemcpyNode1D(
          &node, (hipGraph_t)graph, (const hipGraphNode_t*)dependencies,
          dependency_count, gpu_hip_pointer(target), gpu_hip_pointer(source),
          (size_t)length, hipMemcpyDefault),
      "hipGraphAddMemcpyNode1D");
  *out_node = (gpu_graph_node_t)node;
  return HAL_OK;
}

static hal_status_t gpu_hip_graph_add_host_node(
    gpu_adapter_t* adapter, gpu_graph_t graph,
    const gpu_graph_node_t* dependencies, size_t dependency_count,
    gpu_host_fn_t fn, void* user_data, gpu_graph_node_t* out_node) {
  gpu_hip_adapter_t* hip = gpu_hip(adapter);
  *out_node = NULL;
  GPU_ADAPTER_REQUIRE(adapter, GPU_ADAPTER_CAP_GRAPH_HOST_NODE,
                      "graph host nodes");
  hipHostNodeParams params;
  memset(&params, 0, sizeof(params));
  params.fn = fn;
  params.userData = user_data;
  hipGraphNode_t node = NULL;
  GPU_RETURN_IF_ERROR(
      &hip->base,
      hip->syms.hipGraphAddHostNode(&node, (hipGraph_t)graph,
                                    (const hipGraphNode_t*)dependencies,
                                    dependency_count, &params),
      "hipGraphAddHostNode");
  *out_node = (gpu_graph_node_t)node;
  return HAL_OK;
}

static hal_status_t gpu_hip_graph_add_kernel_node(
    gpu_adapter_t* adapter, gpu_graph_t graph,
    const gpu_graph_node_t* dependencies, size_t dependency_count,
    const gpu_kernel_launch_t* launch, gpu_graph_node_t* out_node) {
  gpu_hip_adapter_t* hip = gpu_hip(adapter);
  *out_node = NULL;
  GPU_ADAPTER_REQUIRE(adapter, GPU_ADAPTER_CAP_GRAPH_KERNEL_NODE,
                      "graph kernel nodes");
  // dim3 fields, and |func| is a void* taking the hipFunction_t.
  hipKernelNodeParams params;
  memset(&params, 0, sizeof(params));
  params.func = (void*)launch->function;
  params.gridDim.x = launch->grid[0];
  params.gridDim.y = launch->grid[1];
  params.gridDim.z = launch->grid[2];
  params.blockDim.x = launch->block[0];
  params.blockDim.y = launch->block[1];
  params.blockDim.z = launch->block[2];
  params.sharedMemBytes = launch->shared_memory_bytes;
  params.kernelParams = launch->args;
  hipGraphNode_t node = NULL;
  GPU_RETURN_IF_ERROR(
      &hip->base,
      hip->syms.hipGraphAddKernelNode(&node, (hipGraph_t)graph,
                                      (const hipGraphNode_t*)dependencies,
                                      dependency_count, &params),
      "hipGraphAddKernelNode");
  *out_node = (gpu_graph_node_t)node;
  return HAL_OK;
}

static hal_status_t gpu_hip_graph_instantiate(gpu_adapter_t* adapter,
                                              gpu_graph_t graph,
                                              gpu_graph_exec_t* out_exec) {
  gpu_hip_adapter_t* hip = gpu_hip(adapter);
  *out_exec = NULL;
  GPU_ADAPTER_REQUIRE(adapter, GPU_ADAPTER_CAP_GRAPH, "graphs");
  hipGraphExec_t exec = NULL;
  GPU_RETURN_IF_ERROR(
      &hip->base,
      hip->syms.hipGraphInstantiate(&exec, (hipGraph_t)graph, NULL, NULL, 0),
      "hipGraphInstantiate");
  *out_exec = (gpu_graph_exec_t)exec;
  return HAL_OK;
}

static hal_status_t gpu_hip_graph_exec_destroy(gpu_adapter_t* adapter,
                                               gpu_graph_exec_t exec) {
  if (!exec)
    return HAL_OK;
  GPU_RETURN_IF_ERROR(
      &gpu_hip(adapter)->base,
      gpu_hip(adapter)->syms.hipGraphExecDestroy((hipGraphExec_t)exec),
      "hipGraphExecDestroy");
  return HAL_OK;
}

static hal_status_t gpu_hip_graph_launch(gpu_adapter_t* adapter,
                                         gpu_graph_exec_t exec,
                                         gpu_stream_t stream) {
  gpu_hip_adapter_t* hip = gpu_hip(adapter);
  GPU_ADAPTER_REQUIRE(adapter, GPU_ADAPTER_CAP_GRAPH, "graphs");
  GPU_RETURN_IF_ERROR(
      &hip->base,
      hip->syms.hipGraphLaunch((hipGraphExec_t)exec, (hipStream_t)stream),
      "hipGraphLaunch");
  return HAL_OK;
}

static hal_status_t gpu_hip_graph_exec_update(gpu_adapter_t* adapter,
                                              gpu_graph_exec_t exec,
                                              gpu_graph_t graph,
                                              bool* out_accepted) {
  gpu_hip_adapter_t* hip = gpu_hip(adapter);
  *out_accepted = false;
  if (!(adapter->info.capabilities & GPU_ADAPTER_CAP_GRAPH_EXEC_UPDATE))
    return HAL_OK;  // the caller instantiates anew
  hipGraphNode_t error_node = NULL;
  hipGraphExecUpdateResult update_result = hipGraphExecUpdateSuccess;
  hipError_t result = hip->syms.hipGraphExecUpdate(
      (hipGraphExec_t)exec, (hipGraph_t)graph, &error_node, &update_result);
  // A refusal leaves |exec| as it was: not an error.
  if (result == hipErrorGraphExecUpdateFailure)
    return HAL_OK;
  GPU_RETURN_IF_ERROR(&hip->base, result, "hipGraphExecUpdate");
  *out_accepted = true;
  return HAL_OK;
}

//===--- modules ---===//

static hal_status_t gpu_hip_module_load_data(gpu_adapter_t* adapter,
                                             const void* image,
                                             gpu_module_t* out_module) {
  gpu_hip_adapter_t* hip = gpu_hip(adapter);
  *out_module = NULL;
  GPU_ADAPTER_REQUIRE(adapter, GPU_ADAPTER_CAP_MODULE, "modules");
  hipModule_t module = NULL;
  GPU_RETURN_IF_ERROR(&hip->base, hip->syms.hipModuleLoadData(&module, image),
                      "hipModuleLoadData");
  *out_module = (gpu_module_t)module;
  return HAL_OK;
}

static hal_status_t gpu_hip_module_unload(gpu_adapter_t* adapter,
                                          gpu_module_t module) {
  if (!module)
    return HAL_OK;
  GPU_RETURN_IF_ERROR(
      &gpu_hip(adapter)->base,
      gpu_hip(adapter)->syms.hipModuleUnload((hipModule_t)module),
      "hipModuleUnload");
  return HAL_OK;
}

static hal_status_t gpu_hip_module_get_function(gpu_adapter_t* adapter,
                                                gpu_module_t module,
                                                const char* name,
                                                gpu_function_t* out_function) {
  gpu_hip_adapter_t* hip = gpu_hip(adapter);
  *out_function = NULL;
  GPU_ADAPTER_REQUIRE(adapter, GPU_ADAPTER_CAP_MODULE, "modules");
  hipFunction_t function = NULL;
  GPU_RETURN_IF_ERROR(
      &hip->base,
      hip->syms.hipModuleGetFunction(&function, (hipModule_t)module, name),
      "hipModuleGetFunction");
  *out_function = (gpu_function_t)function;
  return HAL_OK;
}

// HIP has no call that says a kernel's parameters.
static hal_status_t gpu_hip_function_param_sizes(gpu_adapter_t* adapter,
                                                 gpu_function_t function,
                                                 size_t* sizes, size_t capacity,
                                                 size_t* out_count) {
  *out_count = 0;
  GPU_ADAPTER_REQUIRE(adapter, GPU_ADAPTER_CAP_PARAM_INFO,
                      "kernel parameter queries");
  return HAL_OK;
}

static hal_status_t gpu_hip_launch_kernel(gpu_adapter_t* adapter,
                                          gpu_stream_t stream,
                                          const gpu_kernel_launch_t* launch) {
  gpu_hip_adapter_t* hip = gpu_hip(adapter);
  GPU_ADAPTER_REQUIRE(adapter, GPU_ADAPTER_CAP_MODULE, "modules");
  GPU_RETURN_IF_ERROR(
      &hip->base,
      hip->syms.hipModuleLaunchKernel(
          (hipFunction_t)launch->function, launch->grid[0], launch->grid[1],
          launch->grid[2], launch->block[0], launch->block[1], launch->block[2],
          launch->shared_memory_bytes, (hipStream_t)stream, launch->args, NULL),
      "hipModuleLaunchKernel");
  return HAL_OK;
}

//===--- the ops table ---===//

static const gpu_adapter_ops_t gpu_hip_ops = {
    .destroy = gpu_hip_destroy,
    .device_count = gpu_hip_device_count,
    .device_name = gpu_hip_device_name,
    .device_uuid = gpu_hip_device_uuid,
    .device_total_memory = gpu_hip_device_total_memory,
    .device_attribute = gpu_hip_device_attribute,
    .context_open = gpu_hip_context_open,
    .context_close = gpu_hip_context_close,
    .make_current = gpu_hip_make_current,
    .device_alloc = gpu_hip_device_alloc,
    .device_free = gpu_hip_device_free,
    .host_alloc = gpu_hip_host_alloc,
    .host_free = gpu_hip_host_free,
    .memcpy_sync = gpu_hip_memcpy_sync,
    .pool_create = gpu_hip_pool_create,
    .pool_destroy = gpu_hip_pool_destroy,
    .pool_trim = gpu_hip_pool_trim,
    .pool_reserved_bytes = gpu_hip_pool_reserved_bytes,
    .alloc_async = gpu_hip_alloc_async,
    .free_async = gpu_hip_free_async,
    .memcpy_async = gpu_hip_memcpy_async,
    .memset_async = gpu_hip_memset_async,
    .stream_create = gpu_hip_stream_create,
    .stream_destroy = gpu_hip_stream_destroy,
    .stream_synchronize = gpu_hip_stream_synchronize,
    .stream_query = gpu_hip_stream_query,
    .stream_wait_event = gpu_hip_stream_wait_event,
    .launch_host_func = gpu_hip_launch_host_func,
    .event_create = gpu_hip_event_create,
    .event_destroy = gpu_hip_event_destroy,
    .event_record = gpu_hip_event_record,
    .event_query = gpu_hip_event_query,
    .event_synchronize = gpu_hip_event_synchronize,
    .timed_event_create = gpu_hip_timed_event_create,
    .event_elapsed_ms = gpu_hip_event_elapsed_ms,
    .graph_create = gpu_hip_graph_create,
    .graph_destroy = gpu_hip_graph_destroy,
    .graph_add_empty_node = gpu_hip_graph_add_empty_node,
    .graph_add_memset_node = gpu_hip_graph_add_memset_node,
    .graph_add_memcpy_node = gpu_hip_graph_add_memcpy_node,
    .graph_add_host_node = gpu_hip_graph_add_host_node,
    .graph_add_kernel_node = gpu_hip_graph_add_kernel_node,
    .graph_instantiate = gpu_hip_graph_instantiate,
    .graph_exec_destroy = gpu_hip_graph_exec_destroy,
    .graph_launch = gpu_hip_graph_launch,
    .graph_exec_update = gpu_hip_graph_exec_update,
    .module_load_data = gpu_hip_module_load_data,
    .module_unload = gpu_hip_module_unload,
    .module_get_function = gpu_hip_module_get_function,
    .launch_kernel = gpu_hip_launch_kernel,
    .function_param_sizes = gpu_hip_function_param_sizes,
    .range_start = gpu_hip_range_start,
    .range_end = gpu_hip_range_end,
};

//===--- the symbol and error tables, the vendor descriptor ---===//

GPU_HIP_SYMBOLS(GPU_ADAPTER_SYMBOL_CHECK)

#define GPU_HIP_SYMBOL_ENTRY(kind, capability, name, ret, params) \
  GPU_ADAPTER_SYMBOL_ENTRY(gpu_hip_symbols_t, kind, capability, #name, name)
static const gpu_adapter_symbol_t gpu_hip_symbols[] = {
    GPU_HIP_SYMBOLS(GPU_HIP_SYMBOL_ENTRY)};

static const gpu_adapter_error_t gpu_hip_errors[] = {
    GPU_HIP_ERRORS(GPU_ADAPTER_ERROR)};

// The unversioned name (-dev), then the versioned ones, newest first.
static const char* const gpu_hip_libraries[] = {
    "libamdhip64.so", "libamdhip64.so.7", "libamdhip64.so.6",
    "libamdhip64.so.5"};

const gpu_adapter_vendor_desc_t gpu_hip_vendor_desc = {
    .vendor = GPU_ADAPTER_VENDOR_HIP,
    .name = "HIP",
    .library_env = "HAL_HIP_LIBRARY",
    .libraries = gpu_hip_libraries,
    .library_count = HAL_ARRAYSIZE(gpu_hip_libraries),
    .header_version = HIP_VERSION,
    .adapter_size = sizeof(gpu_hip_adapter_t),
    .symbols_offset = offsetof(gpu_hip_adapter_t, syms),
    .symbols = gpu_hip_symbols,
    .symbol_count = HAL_ARRAYSIZE(gpu_hip_symbols),
    .errors = gpu_hip_errors,
    .error_count = HAL_ARRAYSIZE(gpu_hip_errors),
    .ops = &gpu_hip_ops,
    .lookup = NULL,  // dlsym by export name
    .initialize = gpu_hip_initialize,
    .finish_initialize = gpu_hip_finish_initialize,
    .error_name = gpu_hip_error_name,
    .error_string = gpu_hip_error_string,
    // libamdhip64 stays mapped: its init-time objects are only reachable
    // through its globals (LeakSanitizer reports them once unmapped), and
    // ROCm does not support unloading the runtime.
    .keep_loaded = true,
    .virtual_library = "libvgpu-hip.so",
};
