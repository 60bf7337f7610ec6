// Copyright 2026 The HAL Authors.
//
// The CUDA Driver API adapter: every op, the loading hooks, the symbol and
// error tables and the vendor descriptor. hip_ops.c is the same list for
// HIP; the adapter tests run both, so the two keep the same behavior.
//
// Loading: libcuda.so.1 (or $HAL_CUDA_LIBRARY). Only cuInit,
// cuDriverGetVersion, cuGetProcAddress and the error-name functions are
// dlsym()ed; every other entry point comes from cuGetProcAddress at the
// CUDA_VERSION of the cuda.h we are built against, so a driver newer than
// the header hands out the ABI the header declares. Needs a CUDA 12+
// driver (cuGetProcAddress_v2).
//
// Names: cuda.h renames many entry points to versioned exports
// (cuMemAlloc -> cuMemAlloc_v2, cuGraphInstantiate ->
// cuGraphInstantiateWithFlags). A call written `cuda->syms.cuMemAlloc(...)`
// goes through that rename (the member is declared under it too); messages
// name the API name, "cuMemAlloc", as cuGetProcAddress and the virtual GPU
// do.
//
// Handles are converted with plain casts: gpu_stream_t and CUstream are
// both pointers to incomplete structs, never dereferenced on our side.

#include <string.h>

#include "cuda_vendor.h"

#if defined(GPU_ADAPTER_HAVE_NVTX)
#include <nvtx3/nvToolsExt.h>
#endif

static gpu_cuda_adapter_t* gpu_cuda(gpu_adapter_t* adapter) {
  return (gpu_cuda_adapter_t*)adapter;
}

static const gpu_cuda_symbols_t* gpu_cuda_syms(const gpu_adapter_base_t* base) {
  return &((const gpu_cuda_adapter_t*)base)->syms;
}

//===--- error names, initialization, symbol lookup ---===//

// The driver's name / description of |result|; NULL when it lacks the
// function or the query fails (the toolkit's stub fails them all).
static const char* gpu_cuda_error_name(const gpu_adapter_base_t* base,
                                       int32_t result) {
  const gpu_cuda_symbols_t* syms = gpu_cuda_syms(base);
  const char* text = NULL;
  if (!syms->cuGetErrorName ||
      syms->cuGetErrorName((CUresult)result, &text) != CUDA_SUCCESS) {
    return NULL;
  }
  return text;
}

static const char* gpu_cuda_error_string(const gpu_adapter_base_t* base,
                                         int32_t result) {
  const gpu_cuda_symbols_t* syms = gpu_cuda_syms(base);
  const char* text = NULL;
  if (!syms->cuGetErrorString ||
      syms->cuGetErrorString((CUresult)result, &text) != CUDA_SUCCESS) {
    return NULL;
  }
  return text;
}

static hal_status_t gpu_cuda_initialize(gpu_adapter_base_t* base,
                                        hal_status_t* out_no_device) {
  CUresult result = gpu_cuda_syms(base)->cuInit(0);
  return gpu_adapter_init_status(base, result, result == CUDA_ERROR_NO_DEVICE,
                                 "cuInit", __FILE__, __LINE__, out_no_device);
}

// NVTX ranges go to a tool only through NVTX_INJECTION64_PATH (Nsight
// Systems sets it): without it none is made, nor its message formatted.
static void gpu_cuda_ranges_initialize(gpu_cuda_adapter_t* cuda) {
#if defined(GPU_ADAPTER_HAVE_NVTX)
  const char* tool = getenv("NVTX_INJECTION64_PATH");
  if (!tool || !*tool)
    return;
  cuda->nvtx_domain = nvtxDomainCreateA("HAL");
  cuda->base.public.info.tool_ranges = "NVTX";
#else
  (void)cuda;
#endif
}

static bool gpu_cuda_range_start(gpu_adapter_t* adapter, const char* message,
                                 uint64_t* out_range) {
  *out_range = 0;
#if defined(GPU_ADAPTER_HAVE_NVTX)
  gpu_cuda_adapter_t* cuda = gpu_cuda(adapter);
  if (!adapter->info.tool_ranges)
    return false;
  nvtxEventAttributes_t attributes = {0};
  attributes.version = NVTX_VERSION;
  attributes.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  attributes.messageType = NVTX_MESSAGE_TYPE_ASCII;
  attributes.message.ascii = message;
  *out_range = nvtxDomainRangeStartEx((nvtxDomainHandle_t)cuda->nvtx_domain,
                                      &attributes);
  return true;
#else
  (void)adapter;
  (void)message;
  return false;
#endif
}

static void gpu_cuda_range_end(gpu_adapter_t* adapter, uint64_t range) {
#if defined(GPU_ADAPTER_HAVE_NVTX)
  if (adapter->info.tool_ranges) {
    nvtxDomainRangeEnd((nvtxDomainHandle_t)gpu_cuda(adapter)->nvtx_domain,
                       range);
  }
#else
  (void)adapter;
  (void)range;
#endif
}

static hal_status_t gpu_cuda_finish_initialize(gpu_adapter_base_t* base,
                                               hal_status_t* inout_no_device) {
  const gpu_cuda_symbols_t* syms = gpu_cuda_syms(base);
  int version = 0;
  GPU_RETURN_IF_ERROR(base, syms->cuDriverGetVersion(&version),
                      "cuDriverGetVersion");
  base->public.info.driver_version = version;
  gpu_cuda_ranges_initialize((gpu_cuda_adapter_t*)base);
  if (*inout_no_device) {
    int count = 0;
    CUresult result = syms->cuDeviceGetCount(&count);
    gpu_adapter_explain_no_device(base, result, count, "cuDeviceGetCount",
                                  inout_no_device);
  }
  return HAL_OK;
}

// Resolves the table's non-DLSYM entries by API name.
static hal_status_t gpu_cuda_lookup(gpu_adapter_base_t* base, const char* name,
                                    void** out_pointer) {
  *out_pointer = NULL;
  void* pointer = NULL;
  CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  // LEGACY_STREAM: the entry points whose stream 0 is the legacy default
  // stream (we never use stream 0; the flag only makes the choice explicit).
  CUresult result = gpu_cuda_syms(base)->cuGetProcAddress(
      name, &pointer, CUDA_VERSION, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &found);
  if (result == CUDA_SUCCESS && found == CU_GET_PROC_ADDRESS_SUCCESS) {
    *out_pointer = pointer;
    return HAL_OK;
  }
  // Not found, or only in a version newer than our header: missing.
  if (result == CUDA_SUCCESS || result == CUDA_ERROR_NOT_FOUND)
    return HAL_OK;
  return hal_status_annotatef(
      gpu_adapter_result_status(base, result, "cuGetProcAddress", __FILE__,
                                __LINE__),
      "looking up %s", name);
}

static void gpu_cuda_destroy(gpu_adapter_t* adapter) {
#if defined(GPU_ADAPTER_HAVE_NVTX)
  if (gpu_cuda(adapter)->nvtx_domain)
    nvtxDomainDestroy((nvtxDomainHandle_t)gpu_cuda(adapter)->nvtx_domain);
#endif
  gpu_adapter_base_destroy(gpu_adapter_base(adapter));
}

//===--- devices ---===//

static hal_status_t gpu_cuda_device_count(gpu_adapter_t* adapter,
                                          int* out_count) {
  gpu_cuda_adapter_t* cuda = gpu_cuda(adapter);
  *out_count = 0;
  if (adapter->info.no_device_reason)
    return HAL_OK;
  int count = 0;
  CUresult result = cuda->syms.cuDeviceGetCount(&count);
  if (result == CUDA_ERROR_NO_DEVICE)
    return HAL_OK;
  GPU_RETURN_IF_ERROR(&cuda->base, result, "cuDeviceGetCount");
  *out_count = count;
  return HAL_OK;
}

static hal_status_t gpu_cuda_device_get(gpu_cuda_adapter_t* cuda, int ordinal,
                                        CUdevice* out_device) {
  *out_device = 0;
  GPU_RETURN_IF_ERROR(&cuda->base, cuda->syms.cuDeviceGet(out_device, ordinal),
                      "cuDeviceGet");
  return HAL_OK;
}

static hal_status_t gpu_cuda_device_name(gpu_adapter_t* adapter, int device,
                                         char* buffer, size_t capacity) {
  gpu_cuda_adapter_t* cuda = gpu_cuda(adapter);
  if (!buffer || capacity == 0 || capacity > INT32_MAX) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "device name buffer of %zu bytes", capacity);
  }
  buffer[0] = 0;
  CUdevice native = 0;
  HAL_RETURN_IF_ERROR(gpu_cuda_device_get(cuda, device, &native));
  GPU_RETURN_IF_ERROR(&cuda->base,
                      cuda->syms.cuDeviceGetName(buffer, (int)capacity, native),
                      "cuDeviceGetName");
  buffer[capacity - 1] = 0;
  return HAL_OK;
}

static hal_status_t gpu_cuda_device_uuid(
    gpu_adapter_t* adapter, int device,
    uint8_t out_uuid[GPU_ADAPTER_UUID_SIZE]) {
  static_assert(sizeof(CUuuid) == GPU_ADAPTER_UUID_SIZE, "a CUuuid");
  gpu_cuda_adapter_t* cuda = gpu_cuda(adapter);
  memset(out_uuid, 0, GPU_ADAPTER_UUID_SIZE);
  CUdevice native = 0;
  HAL_RETURN_IF_ERROR(gpu_cuda_device_get(cuda, device, &native));
  CUuuid uuid;
  memset(&uuid, 0, sizeof(uuid));
  GPU_RETURN_IF_ERROR(&cuda->base, cuda->syms.cuDeviceGetUuid(&uuid, native),
                      "cuDeviceGetUuid");
  return gpu_adapter_device_uuid_result(adapter, device, "cuDeviceGetUuid",
                                        uuid.bytes, out_uuid);
}

static hal_status_t gpu_cuda_device_total_memory(gpu_adapter_t* adapter,
                                                 int device,
                                                 uint64_t* out_bytes) {
  gpu_cuda_adapter_t* cuda = gpu_cuda(adapter);
  *out_bytes = 0;
  CUdevice native = 0;
  HAL_RETURN_IF_ERROR(gpu_cuda_device_get(cuda, device, &native));
  size_t bytes = 0;
  GPU_RETURN_IF_ERROR(&cuda->base, cuda->syms.cuDeviceTotalMem(&bytes, native),
                      "cuDeviceTotalMem");
  *out_bytes = bytes;
  return HAL_OK;
}

static hal_status_t gpu_cuda_device_attribute(gpu_adapter_t* adapter,
                                              int device,
                                              gpu_device_attribute_t attribute,
                                              int* out_value) {
  static const CUdevice_attribute kAttributes[] = {
      [GPU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT] =
          CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
      [GPU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR] =
          CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
      [GPU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR] =
          CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
      [GPU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK] =
          CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
      [GPU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS] =
          CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS,
      [GPU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY] =
          CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY,
      [GPU_DEVICE_ATTRIBUTE_PCI_BUS_ID] = CU_DEVICE_ATTRIBUTE_PCI_BUS_ID,
      [GPU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X] =
          CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X,
      [GPU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y] =
          CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y,
      [GPU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z] =
          CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z,
      [GPU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X] =
          CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X,
      [GPU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y] =
          CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y,
      [GPU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z] =
          CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z,
  };
  static_assert(HAL_ARRAYSIZE(kAttributes) == GPU_DEVICE_ATTRIBUTE_COUNT_,
                "every gpu_device_attribute_t needs a CUDA attribute");
  gpu_cuda_adapter_t* cuda = gpu_cuda(adapter);
  *out_value = 0;
  if ((unsigned)attribute >= GPU_DEVICE_ATTRIBUTE_COUNT_) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "unknown device attribute %d", (int)attribute);
  }
  CUdevice native = 0;
  HAL_RETURN_IF_ERROR(gpu_cuda_device_get(cuda, device, &native));
  int value = 0;
  GPU_RETURN_IF_ERROR(
      &cuda->base,
      cuda->syms.cuDeviceGetAttribute(&value, kAttributes[attribute], native),
      "cuDeviceGetAttribute");
  *out_value = value;
  return HAL_OK;
}

//===--- contexts: the primary context of each device ---===//

static hal_status_t gpu_cuda_context_open(gpu_adapter_t* adapter, int device,
                                          gpu_context_t** out_context) {
  gpu_cuda_adapter_t* cuda = gpu_cuda(adapter);
  *out_context = NULL;
  CUdevice native_device = 0;
  HAL_RETURN_IF_ERROR(gpu_cuda_device_get(cuda, device, &native_device));
  CUcontext context = NULL;
  GPU_RETURN_IF_ERROR(
      &cuda->base, cuda->syms.cuDevicePrimaryCtxRetain(&context, native_device),
      "cuDevicePrimaryCtxRetain");
  hal_status_t status = gpu_adapter_context_allocate(
      adapter, device, native_device, context, out_context);
  if (status)
    (void)cuda->syms.cuDevicePrimaryCtxRelease(native_device);
  return status;
}

static void gpu_cuda_context_close(gpu_adapter_t* adapter,
                                   gpu_context_t* context) {
  if (!context)
    return;
  // Every retain is paired with one release; the driver destroys the
  // primary context when the last one goes.
  (void)gpu_cuda(adapter)->syms.cuDevicePrimaryCtxRelease(
      context->native_device);
  gpu_adapter_context_free(adapter, context);
}

static hal_status_t gpu_cuda_make_current(gpu_adapter_t* adapter,
                                          gpu_context_t* context) {
  gpu_cuda_adapter_t* cuda = gpu_cuda(adapter);
  // Every queue operation makes its context current, on threads that
  // mostly have it already. Reading the thread's current context is a
  // thread-local load; setting it validates the context in the driver.
  // Read each time, not cached here: the application may make another
  // context current on the same thread between two calls.
  CUcontext current = NULL;
  if (cuda->syms.cuCtxGetCurrent(&current) == CUDA_SUCCESS &&
      current == (CUcontext)context->native) {
    return HAL_OK;
  }
  GPU_RETURN_IF_ERROR(&cuda->base,
                      cuda->syms.cuCtxSetCurrent((CUcontext)context->native),
                      "cuCtxSetCurrent");
  return HAL_OK;
}

// Memset and memcpy graph nodes name their context: the current one.
static hal_status_t gpu_cuda_current_context(gpu_cuda_adapter_t* cuda,
                                             CUcontext* out_context) {
  *out_context = NULL;
  GPU_RETURN_IF_ERROR(&cuda->base, cuda->syms.cuCtxGetCurrent(out_context),
                      "cuCtxGetCurrent");
  if (!*out_context) {
    return hal_make_status(HAL_STATUS_FAILED_PRECONDITION,
                           "no current CUDA context on this thread (call "
                           "make_current first)");
  }
  return HAL_OK;
}

//===--- memory ---===//

// Destroy and free ops drop the driver's error: the object is gone either
// way, and a lost device shows in the next query or synchronize.

static hal_status_t gpu_cuda_device_alloc(gpu_adapter_t* adapter, uint64_t size,
                                          gpu_device_ptr_t* out_pointer) {
  gpu_cuda_adapter_t* cuda = gpu_cuda(adapter);
  *out_pointer = 0;
  CUdeviceptr native = 0;
  GPU_RETURN_IF_ERROR(&cuda->base, cuda->syms.cuMemAlloc(&native, (size_t)size),
                      "cuMemAlloc");
  *out_pointer = (gpu_device_ptr_t)native;
  return HAL_OK;
}

static hal_status_t gpu_cuda_device_free(gpu_adapter_t* adapter,
                                         gpu_device_ptr_t pointer) {
  if (!pointer)
    return HAL_OK;
  GPU_RETURN_IF_ERROR(&gpu_cuda(adapter)->base,
                      gpu_cuda(adapter)->syms.cuMemFree((CUdeviceptr)pointer),
                      "cuMemFree");
  return HAL_OK;
}

static hal_status_t gpu_cuda_host_alloc(gpu_adapter_t* adapter, uint64_t size,
                                        void** out_pointer) {
  gpu_cuda_adapter_t* cuda = gpu_cuda(adapter);
  *out_pointer = NULL;
  void* pointer = NULL;
  GPU_RETURN_IF_ERROR(&cuda->base,
                      cuda->syms.cuMemAllocHost(&pointer, (size_t)size),
                      "cuMemAllocHost");
  *out_pointer = pointer;
  return HAL_OK;
}

static hal_status_t gpu_cuda_host_free(gpu_adapter_t* adapter, void* pointer) {
  if (!pointer)
    return HAL_OK;
  GPU_RETURN_IF_ERROR(&gpu_cuda(adapter)->base,
                      gpu_cuda(adapter)->syms.cuMemFreeHost(pointer),
                      "cuMemFreeHost");
  return HAL_OK;
}

// Unified addressing: the driver infers host or device from the pointers.
static hal_status_t gpu_cuda_memcpy_sync(gpu_adapter_t* adapter,
                                         gpu_device_ptr_t target,
                                         gpu_device_ptr_t source,
                                         uint64_t length) {
  gpu_cuda_adapter_t* cuda = gpu_cuda(adapter);
  GPU_RETURN_IF_ERROR(&cuda->base,
                      cuda->syms.cuMemcpy((CUdeviceptr)target,
                                          (CUdeviceptr)source, (size_t)length),
                      "cuMemcpy");
  // cuMemcpy returns once pageable host memory is staged, before the DMA
  // into device memory ran (and a device-to-device copy does not wait at
  // all), on the legacy stream, which the queues' non-blocking streams do
  // not wait for: work submitted next could run before the copy landed.
  // "Done" means the legacy stream drained.
  GPU_RETURN_IF_ERROR(&cuda->base, cuda->syms.cuStreamSynchronize(NULL),
                      "cuStreamSynchronize");
  return HAL_OK;
}

static hal_status_t gpu_cuda_memcpy_async(gpu_adapter_t* adapter,
                                          gpu_stream_t stream,
                                          gpu_device_ptr_t target,
                                          gpu_device_ptr_t source,
                                          uint64_t length) {
  gpu_cuda_adapter_t* cuda = gpu_cuda(adapter);
  GPU_RETURN_IF_ERROR(
      &cuda->base,
      cuda->syms.cuMemcpyAsync((CUdeviceptr)target, (CUdeviceptr)source,
                               (size_t)length, (CUstream)stream),
      "cuMemcpyAsync");
  return HAL_OK;
}

static hal_status_t gpu_cuda_memset_async(
    gpu_adapter_t* adapter, gpu_stream_t stream, gpu_device_ptr_t target,
    uint32_t pattern, uint32_t pattern_size, uint64_t count) {
  gpu_cuda_adapter_t* cuda = gpu_cuda(adapter);
  CUdeviceptr native = (CUdeviceptr)target;
  CUstream native_stream = (CUstream)stream;
  switch (pattern_size) {
    case 1:
      GPU_RETURN_IF_ERROR(
          &cuda->base,
          cuda->syms.cuMemsetD8Async(native, (unsigned char)pattern,
                                     (size_t)count, native_stream),
          "cuMemsetD8Async");
      return HAL_OK;
    case 2:
      GPU_RETURN_IF_ERROR(
          &cuda->base,
          cuda->syms.cuMemsetD16Async(native, (unsigned short)pattern,
                                      (size_t)count, native_stream),
          "cuMemsetD16Async");
      return HAL_OK;
    case 4:
      GPU_RETURN_IF_ERROR(
          &cuda->base,
          cuda->syms.cuMemsetD32Async(native, (unsigned int)pattern,
                                      (size_t)count, native_stream),
          "cuMemsetD32Async");
      return HAL_OK;
  }
  return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                         "memset pattern size %u (must be 1, 2 or 4)",
                         pattern_size);
}

//===--- stream-ordered memory ---===//

static hal_status_t gpu_cuda_pool_create(gpu_adapter_t* adapter,
                                         gpu_context_t* context,
                                         uint64_t release_threshold,
                                         gpu_pool_t* out_pool) {
  gpu_cuda_adapter_t* cuda = gpu_cuda(adapter);
  *out_pool = NULL;
  GPU_ADAPTER_REQUIRE(adapter, GPU_ADAPTER_CAP_STREAM_ORDERED_ALLOC,
                      "stream-ordered allocation");
  CUmemPoolProps props;
  memset(&props, 0, sizeof(props));
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  props.location.id = context->native_device;
  CUmemoryPool pool = NULL;
  GPU_RETURN_IF_ERROR(&cuda->base, cuda->syms.cuMemPoolCreate(&pool, &props),
                      "cuMemPoolCreate");
  cuuint64_t threshold = release_threshold;
  CUresult result = cuda->syms.cuMemPoolSetAttribute(
      pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold);
  if (result != CUDA_SUCCESS) {
    (void)cuda->syms.cuMemPoolDestroy(pool);
    return gpu_adapter_result_status(
        &cuda->base, result, "cuMemPoolSetAttribute", __FILE__, __LINE__);
  }
  *out_pool = (gpu_pool_t)pool;
  return HAL_OK;
}

static hal_status_t gpu_cuda_pool_destroy(gpu_adapter_t* adapter,
                                          gpu_pool_t pool) {
  if (!pool)
    return HAL_OK;
  GPU_RETURN_IF_ERROR(
      &gpu_cuda(adapter)->base,
      gpu_cuda(adapter)->syms.cuMemPoolDestroy((CUmemoryPool)pool),
      "cuMemPoolDestroy");
  return HAL_OK;
}

static hal_status_t gpu_cuda_pool_trim(gpu_adapter_t* adapter, gpu_pool_t pool,
                                       uint64_t keep_bytes) {
  gpu_cuda_adapter_t* cuda = gpu_cuda(adapter);
  GPU_ADAPTER_REQUIRE(adapter, GPU_ADAPTER_CAP_STREAM_ORDERED_ALLOC,
                      "stream-ordered allocation");
  GPU_RETURN_IF_ERROR(
      &cuda->base,
      cuda->syms.cuMemPoolTrimTo((CUmemoryPool)pool, (size_t)keep_bytes),
      "cuMemPoolTrimTo");
  return HAL_OK;
}

static hal_status_t gpu_cuda_pool_reserved_bytes(gpu_adapter_t* adapter,
                                                 gpu_pool_t pool,
                                                 uint64_t* out_bytes) {
  gpu_cuda_adapter_t* cuda = gpu_cuda(adapter);
  *out_bytes = 0;
  GPU_ADAPTER_REQUIRE(adapter, GPU_ADAPTER_CAP_STREAM_ORDERED_ALLOC,
                      "stream-ordered allocation");
  cuuint64_t bytes = 0;
  GPU_RETURN_IF_ERROR(
      &cuda->base,
      cuda->syms.cuMemPoolGetAttribute(
          (CUmemoryPool)pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &bytes),
      "cuMemPoolGetAttribute");
  *out_bytes = bytes;
  return HAL_OK;
}

static hal_status_t gpu_cuda_alloc_async(gpu_adapter_t* adapter,
                                         gpu_pool_t pool, gpu_stream_t stream,
                                         uint64_t size,
                                         gpu_device_ptr_t* out_pointer) {
  gpu_cuda_adapter_t* cuda = gpu_cuda(adapter);
  *out_pointer = 0;
  GPU_ADAPTER_REQUIRE(adapter, GPU_ADAPTER_CAP_STREAM_ORDERED_ALLOC,
                      "stream-ordered allocation");
  CUdeviceptr native = 0;
  GPU_RETURN_IF_ERROR(
      &cuda->base,
      cuda->syms.cuMemAllocFromPoolAsync(&native, (size_t)size,
                                         (CUmemoryPool)pool, (CUstream)stream),
      "cuMemAllocFromPoolAsync");
  *out_pointer = (gpu_device_ptr_t)native;
  return HAL_OK;
}

static hal_status_t gpu_cuda_free_async(gpu_adapter_t* adapter,
                                        gpu_stream_t stream,
                                        gpu_device_ptr_t pointer) {
  gpu_cuda_adapter_t* cuda = gpu_cuda(adapter);
  GPU_ADAPTER_REQUIRE(adapter, GPU_ADAPTER_CAP_STREAM_ORDERED_ALLOC,
                      "stream-ordered allocation");
  GPU_RETURN_IF_ERROR(
      &cuda->base,
      cuda->syms.cuMemFreeAsync((CUdeviceptr)pointer, (CUstream)stream),
      "cuMemFreeAsync");
  return HAL_OK;
}

//===--- streams ---===//

static hal_status_t gpu_cuda_stream_create(gpu_adapter_t* adapter,
                                           gpu_stream_t* out_stream) {
  gpu_cuda_adapter_t* cuda = gpu_cuda(adapter);
  *out_stream = NULL;
  CUstream native = NULL;
  GPU_RETURN_IF_ERROR(
      &cuda->base, cuda->syms.cuStreamCreate(&native, CU_STREAM_NON_BLOCKING),
      "cuStreamCreate");
  *out_stream = (gpu_stream_t)native;
  return HAL_OK;
}

static hal_status_t gpu_cuda_stream_destroy(gpu_adapter_t* adapter,
                                            gpu_stream_t stream) {
  if (!stream)
    return HAL_OK;
  GPU_RETURN_IF_ERROR(&gpu_cuda(adapter)->base,
                      gpu_cuda(adapter)->syms.cuStreamDestroy((CUstream)stream),
                      "cuStreamDestroy");
  return HAL_OK;
}

static hal_status_t gpu_cuda_stream_synchronize(gpu_adapter_t* adapter,
                                                gpu_stream_t stream) {
  gpu_cuda_adapter_t* cuda = gpu_cuda(adapter);
  GPU_RETURN_IF_ERROR(&cuda->base,
                      cuda->syms.cuStreamSynchronize((CUstream)stream),
                      "cuStreamSynchronize");
  return HAL_OK;
}

static hal_status_t gpu_cuda_stream_query(gpu_adapter_t* adapter,
                                          gpu_stream_t stream, bool* out_idle) {
  gpu_cuda_adapter_t* cuda = gpu_cuda(adapter);
  return GPU_QUERY_STATUS(&cuda->base,
                          cuda->syms.cuStreamQuery((CUstream)stream),
                          CUDA_ERROR_NOT_READY, "cuStreamQuery", out_idle);
}

static hal_status_t gpu_cuda_stream_wait_event(gpu_adapter_t* adapter,
                                               gpu_stream_t stream,
                                               gpu_event_t event) {
  gpu_cuda_adapter_t* cuda = gpu_cuda(adapter);
  GPU_RETURN_IF_ERROR(
      &cuda->base,
      cuda->syms.cuStreamWaitEvent((CUstream)stream, (CUevent)event, 0),
      "cuStreamWaitEvent");
  return HAL_OK;
}

//===--- host functions ---===//

// Runs on a driver thread (Q1): hands the record back to shared code,
// which frees it and runs the function unless the stream has failed.
static void CUDA_CB gpu_cuda_host_callback(CUstream stream, CUresult status,
                                           void* user_data) {
  (void)stream;
  gpu_adapter_host_call_run(user_data, status != CUDA_SUCCESS);
}

// cuLaunchHostFunc when the driver has it (and it is not hidden), else
// cuStreamAddCallback through gpu_cuda_host_callback.
static hal_status_t gpu_cuda_launch_host_func(gpu_adapter_t* adapter,
                                              gpu_stream_t stream,
                                              gpu_host_fn_t fn,
                                              void* user_data) {
  gpu_cuda_adapter_t* cuda = gpu_cuda(adapter);
  if (adapter->info.capabilities & GPU_ADAPTER_CAP_HOST_FUNC_NATIVE) {
    GPU_RETURN_IF_ERROR(
        &cuda->base,
        cuda->syms.cuLaunchHostFunc((CUstream)stream, fn, user_data),
        "cuLaunchHostFunc");
    return HAL_OK;
  }
  gpu_adapter_host_call_t* call = NULL;
  HAL_RETURN_IF_ERROR(
      gpu_adapter_host_call_create(&cuda->base, fn, user_data, &call));
  CUresult result = cuda->syms.cuStreamAddCallback(
      (CUstream)stream, gpu_cuda_host_callback, call, 0);
  if (result != CUDA_SUCCESS) {
    // Not enqueued: the callback never runs, the record is still ours.
    gpu_adapter_host_call_discard(call);
    return gpu_adapter_result_status(&cuda->base, result, "cuStreamAddCallback",
                                     __FILE__, __LINE__);
  }
  return HAL_OK;
}

//===--- events ---===//

static hal_status_t gpu_cuda_event_create(gpu_adapter_t* adapter,
                                          gpu_event_t* out_event) {
  gpu_cuda_adapter_t* cuda = gpu_cuda(adapter);
  *out_event = NULL;
  CUevent native = NULL;
  GPU_RETURN_IF_ERROR(
      &cuda->base, cuda->syms.cuEventCreate(&native, CU_EVENT_DISABLE_TIMING),
      "cuEventCreate");
  *out_event = (gpu_event_t)native;
  return HAL_OK;
}

static hal_status_t gpu_cuda_event_destroy(gpu_adapter_t* adapter,
                                           gpu_event_t event) {
  if (!event)
    return HAL_OK;
  GPU_RETURN_IF_ERROR(&gpu_cuda(adapter)->base,
                      gpu_cuda(adapter)->syms.cuEventDestroy((CUevent)event),
                      "cuEventDestroy");
  return HAL_OK;
}

static hal_status_t gpu_cuda_event_record(gpu_adapter_t* adapter,
                                          gpu_event_t event,
                                          gpu_stream_t stream) {
  gpu_cuda_adapter_t* cuda = gpu_cuda(adapter);
  GPU_RETURN_IF_ERROR(
      &cuda->base, cuda->syms.cuEventRecord((CUevent)event, (CUstream)stream),
      "cuEventRecord");
  return HAL_OK;
}

static hal_status_t gpu_cuda_event_query(gpu_adapter_t* adapter,
                                         gpu_event_t event, bool* out_ready) {
  gpu_cuda_adapter_t* cuda = gpu_cuda(adapter);
  return GPU_QUERY_STATUS(&cuda->base, cuda->syms.cuEventQuery((CUevent)event),
                          CUDA_ERROR_NOT_READY, "cuEventQuery", out_ready);
}

static hal_status_t gpu_cuda_event_synchronize(gpu_adapter_t* adapter,
                                               gpu_event_t event) {
  gpu_cuda_adapter_t* cuda = gpu_cuda(adapter);
  GPU_RETURN_IF_ERROR(&cuda->base,
                      cuda->syms.cuEventSynchronize((CUevent)event),
                      "cuEventSynchronize");
  return HAL_OK;
}

static hal_status_t gpu_cuda_timed_event_create(gpu_adapter_t* adapter,
                                                gpu_event_t* out_event) {
  gpu_cuda_adapter_t* cuda = gpu_cuda(adapter);
  *out_event = NULL;
  GPU_ADAPTER_REQUIRE(adapter, GPU_ADAPTER_CAP_EVENT_TIMING, "event timing");
  CUevent native = NULL;
  GPU_RETURN_IF_ERROR(&cuda->base,
                      cuda->syms.cuEventCreate(&native, CU_EVENT_DEFAULT),
                      "cuEventCreate");
  *out_event = (gpu_event_t)native;
  return HAL_OK;
}

static hal_status_t gpu_cuda_event_elapsed_ms(gpu_adapter_t* adapter,
                                              gpu_event_t start,
                                              gpu_event_t end, float* out_ms) {
  gpu_cuda_adapter_t* cuda = gpu_cuda(adapter);
  *out_ms = 0.0f;
  GPU_ADAPTER_REQUIRE(adapter, GPU_ADAPTER_CAP_EVENT_TIMING, "event timing");
  float ms = 0.0f;
  GPU_RETURN_IF_ERROR(
      &cuda->base,
      cuda->syms.cuEventElapsedTime(&ms, (CUevent)start, (CUevent)end),
      "cuEventElapsedTime");
  *out_ms = ms;
  return HAL_OK;
}

//===--- graphs ---===//
//
// Dependency arrays are passed through with a cast: an array of opaque
// node pointers has the representation of an array of CUgraphNode.

static hal_status_t gpu_cuda_graph_create(gpu_adapter_t* adapter,
                                          gpu_graph_t* out_graph) {
  gpu_cuda_adapter_t* cuda = gpu_cuda(adapter);
  *out_graph = NULL;
  GPU_ADAPTER_REQUIRE(adapter, GPU_ADAPTER_CAP_GRAPH, "graphs");
  CUgraph native = NULL;
  GPU_RETURN_IF_ERROR(&cuda->base, cuda->syms.cuGraphCreate(&native, 0),
                      "cuGraphCreate");
  *out_graph = (gpu_graph_t)native;
  return HAL_OK;
}

static hal_status_t gpu_cuda_graph_destroy(gpu_adapter_t* adapter,
                                           gpu_graph_t graph) {
  if (!graph)
    return HAL_OK;
  GPU_RETURN_IF_ERROR(&gpu_cuda(adapter)->base,
                      gpu_cuda(adapter)->syms.cuGraphDestroy((CUgraph)graph),
                      "cuGraphDestroy");
  return HAL_OK;
}

static hal_status_t gpu_cuda_graph_add_empty_node(
    gpu_adapter_t* adapter, gpu_graph_t graph,
    const gpu_graph_node_t* dependencies, size_t dependency_count,
    gpu_graph_node_t* out_node) {
  gpu_cuda_adapter_t* cuda = gpu_cuda(adapter);
  *out_node = NULL;
  GPU_ADAPTER_REQUIRE(adapter, GPU_ADAPTER_CAP_GRAPH, "graphs");
  CUgraphNode node = NULL;
  GPU_RETURN_IF_ERROR(&cuda->base,
                      cuda->syms.cuGraphAddEmptyNode(
                          &node, (CUgraph)graph,
                          (const CUgraphNode*)dependencies, dependency_count),
                      "cuGraphAddEmptyNode");
  *out_node = (gpu_graph_node_t)node;
  return HAL_OK;
}

static hal_status_t gpu_cuda_graph_add_memset_node(
    gpu_adapter_t* adapter, gpu_graph_t graph,
    const gpu_graph_node_t* dependencies, size_t dependency_count,
    gpu_device_ptr_t target, uint32_t pattern, uint32_t pattern_size,
    uint64_t count, gpu_graph_node_t* out_node) {
  gpu_cuda_adapter_t* cuda = gpu_cuda(adapter);
  *out_node = NULL;
  GPU_ADAPTER_REQUIRE(adapter, GPU_ADAPTER_CAP_GRAPH_MEMSET_NODE,
                      "graph memset nodes");
  uint32_t value = 0;
  HAL_RETURN_IF_ERROR(gpu_adapter_memset_value(pattern, pattern_size, &value));
  CUcontext context = NULL;
  HAL_RETURN_IF_ERROR(gpu_cuda_current_context(cuda, &context));
  // One row of |count| elements.
  CUDA_MEMSET_NODE_PARAMS params;
  memset(&params, 0, sizeof(params));
  params.dst = (CUdeviceptr)target;
  params.elementSize = pattern_size;
  params.value = value;
  params.width = (size_t)count;
  params.height = 1;
  CUgraphNode node = NULL;
  GPU_RETURN_IF_ERROR(
      &cuda->base,
      cuda->syms.cuGraphAddMemsetNode(&node, (CUgraph)graph,
                                      (const CUgraphNode*)dependencies,
                                      dependency_count, &params, context),
      "cuGraphAddMemsetNode");
  *out_node = (gpu_graph_node_t)node;
  return HAL_OK;
}

static hal_status_t gpu_cuda_graph_add_memcpy_node(
    gpu_adapter_t* adapter, gpu_graph_t graph,
    const gpu_graph_node_t* dependencies, size_t dependency_count,
    gpu_device_ptr_t target, gpu_device_ptr_t source, uint64_t length,
    gpu_graph_node_t* out_node) {
  gpu_cuda_adapter_t* cuda = gpu_cuda(adapter);
  *out_node = NULL;
  GPU_ADAPTER_REQUIRE(adapter, GPU_ADAPTER_CAP_GRAPH_MEMCPY_NODE,
                      "graph memcpy nodes");
  CUcontext context = NULL;
  HAL_RETURN_IF_ERROR(gpu_cuda_current_context(cuda, &context));
  // CUDA has no 1-D memcpy node: a 3-D copy of one row, with unified
  // addressing on both sides (the driver infers host or device).
  CUDA_MEMCPY3D params;
  memset(&params, 0, sizeof(params));
  params.srcMemoryType = CU_MEMORYTYPE_UNIFIED;
  params.srcDevice = (CUdeviceptr)source;
  params.srcPitch = (size_t)length;
  params.srcHeight = 1;
  params.dstMemoryType = CU_MEMORYTYPE_UNIFIED;
  params.dstDevice = (CUdeviceptr)target;
  params.dstPitch = (size_t)length;
  params.dstHeight = 1;
  params.WidthInBytes = (size_t)length;
  params.Height = 1;
  params.Depth = 1;
  CUgraphNode node = NULL;
  GPU_RETURN_IF_ERROR(
      &cuda->base,
      cuda->syms.cuGraphAddMemcpyNode(&node, (CUgraph)graph,
                                      (const CUgraphNode*)dependencies,
                                      dependency_count, &params, context),
      "cuGraphAddMemcpyNode");
  *out_node = (gpu_graph_node_t)node;
  return HAL_OK;
}

static hal_status_t gpu_cuda_graph_add_host_node(
    gpu_adapter_t* adapter, gpu_graph_t graph,
    const gpu_graph_node_t* dependencies, size_t dependency_count,
    gpu_host_fn_t fn, void* user_data, gpu_graph_node_t* out_node) {
  gpu_cuda_adapter_t* cuda = gpu_cuda(adapter);
  *out_node = NULL;
  GPU_ADAPTER_REQUIRE(adapter, GPU_ADAPTER_CAP_GRAPH_HOST_NODE,
                      "graph host nodes");
  CUDA_HOST_NODE_PARAMS params;
  memset(&params, 0, sizeof(params));
  params.fn = fn;
  params.userData = user_data;
  CUgraphNode node = NULL;
  GPU_RETURN_IF_ERROR(
      &cuda->base,
      cuda->syms.cuGraphAddHostNode(&node, (CUgraph)graph,
                                    (const CUgraphNode*)dependencies,
                                    dependency_count, &params),
      "cuGraphAddHostNode");
  *out_node = (gpu_graph_node_t)node;
  return HAL_OK;
}

static hal_status_t gpu_cuda_graph_add_kernel_node(
    gpu_adapter_t* adapter, gpu_graph_t graph,
    const gpu_graph_node_t* dependencies, size_t dependency_count,
    const gpu_kernel_launch_t* launch, gpu_graph_node_t* out_node) {
  gpu_cuda_adapter_t* cuda = gpu_cuda(adapter);
  *out_node = NULL;
  GPU_ADAPTER_REQUIRE(adapter, GPU_ADAPTER_CAP_GRAPH_KERNEL_NODE,
                      "graph kernel nodes");
  CUDA_KERNEL_NODE_PARAMS params;
  memset(&params, 0, sizeof(params));  // kern = NULL, ctx = NULL: use func
  params.func = (CUfunction)launch->function;
  params.gridDimX = launch->grid[0];
  params.gridDimY = launch->grid[1];
  params.gridDimZ = launch->grid[2];
  params.blockDimX = launch->block[0];
  params.blockDimY = launch->block[1];
  params.blockDimZ = launch->block[2];
  params.sharedMemBytes = launch->shared_memory_bytes;
  params.kernelParams = launch->args;
  CUgraphNode node = NULL;
  GPU_RETURN_IF_ERROR(
      &cuda->base,
      cuda->syms.cuGraphAddKernelNode(&node, (CUgraph)graph,
                                      (const CUgraphNode*)dependencies,
                                      dependency_count, &params),
      "cuGraphAddKernelNode");
  *out_node = (gpu_graph_node_t)node;
  return HAL_OK;
}

static hal_status_t gpu_cuda_graph_instantiate(gpu_adapter_t* adapter,
                                               gpu_graph_t graph,
                                               gpu_graph_exec_t* out_exec) {
  gpu_cuda_adapter_t* cuda = gpu_cuda(adapter);
  *out_exec = NULL;
  GPU_ADAPTER_REQUIRE(adapter, GPU_ADAPTER_CAP_GRAPH, "graphs");
  CUgraphExec exec = NULL;
  GPU_RETURN_IF_ERROR(
      &cuda->base,
      cuda->syms.cuGraphInstantiateWithFlags(&exec, (CUgraph)graph, 0),
      "cuGraphInstantiate");
  *out_exec = (gpu_graph_exec_t)exec;
  return HAL_OK;
}

static hal_status_t gpu_cuda_graph_exec_destroy(gpu_adapter_t* adapter,
                                                gpu_graph_exec_t exec) {
  if (!exec)
    return HAL_OK;
  GPU_RETURN_IF_ERROR(
      &gpu_cuda(adapter)->base,
      gpu_cuda(adapter)->syms.cuGraphExecDestroy((CUgraphExec)exec),
      "cuGraphExecDestroy");
  return HAL_OK;
}

static hal_status_t gpu_cuda_graph_launch(gpu_adapter_t* adapter,
                                          gpu_graph_exec_t exec,
                                          gpu_stream_t stream) {
  gpu_cuda_adapter_t* cuda = gpu_cuda(adapter);
  GPU_ADAPTER_REQUIRE(adapter, GPU_ADAPTER_CAP_GRAPH, "graphs");
  GPU_RETURN_IF_ERROR(
      &cuda->base,
      cuda->syms.cuGraphLaunch((CUgraphExec)exec, (CUstream)stream),
      "cuGraphLaunch");
  return HAL_OK;
}

static hal_status_t gpu_cuda_graph_exec_update(gpu_adapter_t* adapter,
                                               gpu_graph_exec_t exec,
                                               gpu_graph_t graph,
                                               bool* out_accepted) {
  gpu_cuda_adapter_t* cuda = gpu_cuda(adapter);
  *out_accepted = false;
  if (!(adapter->info.capabilities & GPU_ADAPTER_CAP_GRAPH_EXEC_UPDATE))
    return HAL_OK;  // the caller instantiates anew
  CUgraphExecUpdateResultInfo info;
  memset(&info, 0, sizeof(info));
  CUresult result =
      cuda->syms.cuGraphExecUpdate((CUgraphExec)exec, (CUgraph)graph, &info);
  // A refusal leaves |exec| as it was: not an error.
  if (result == CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE)
    return HAL_OK;
  GPU_RETURN_IF_ERROR(&cuda->base, result, "cuGraphExecUpdate");
  *out_accepted = true;
  return HAL_OK;
}

//===--- modules ---===//

static hal_status_t gpu_cuda_module_load_data(gpu_adapter_t* adapter,
                                              const void* image,
                                              gpu_module_t* out_module) {
  gpu_cuda_adapter_t* cuda = gpu_cuda(adapter);
  *out_module = NULL;
  GPU_ADAPTER_REQUIRE(adapter, GPU_ADAPTER_CAP_MODULE, "modules");
  CUmodule module = NULL;
  GPU_RETURN_IF_ERROR(&cuda->base, cuda->syms.cuModuleLoadData(&module, image),
                      "cuModuleLoadData");
  *out_module = (gpu_module_t)module;
  return HAL_OK;
}

static hal_status_t gpu_cuda_module_unload(gpu_adapter_t* adapter,
                                           gpu_module_t module) {
  if (!module)
    return HAL_OK;
  GPU_RETURN_IF_ERROR(&gpu_cuda(adapter)->base,
                      gpu_cuda(adapter)->syms.cuModuleUnload((CUmodule)module),
                      "cuModuleUnload");
  return HAL_OK;
}

static hal_status_t gpu_cuda_module_get_function(gpu_adapter_t* adapter,
                                                 gpu_module_t module,
                                                 const char* name,
                                                 gpu_function_t* out_function) {
  gpu_cuda_adapter_t* cuda = gpu_cuda(adapter);
  *out_function = NULL;
  GPU_ADAPTER_REQUIRE(adapter, GPU_ADAPTER_CAP_MODULE, "modules");
  CUfunction function = NULL;
  GPU_RETURN_IF_ERROR(
      &cuda->base,
      cuda->syms.cuModuleGetFunction(&function, (CUmodule)module, name),
      "cuModuleGetFunction");
  *out_function = (gpu_function_t)function;
  return HAL_OK;
}

static hal_status_t gpu_cuda_function_param_sizes(gpu_adapter_t* adapter,
                                                  gpu_function_t function,
                                                  size_t* sizes,
                                                  size_t capacity,
                                                  size_t* out_count) {
  gpu_cuda_adapter_t* cuda = gpu_cuda(adapter);
  *out_count = 0;
  GPU_ADAPTER_REQUIRE(adapter, GPU_ADAPTER_CAP_PARAM_INFO,
                      "kernel parameter queries");
  // Past the last parameter the call says CUDA_ERROR_INVALID_VALUE.
  for (size_t i = 0; i <= capacity; ++i) {
    size_t offset = 0, size = 0;
    CUresult result =
        cuda->syms.cuFuncGetParamInfo((CUfunction)function, i, &offset, &size);
    if (result == CUDA_ERROR_INVALID_VALUE)
      return HAL_OK;
    GPU_RETURN_IF_ERROR(&cuda->base, result, "cuFuncGetParamInfo");
    if (i < capacity)
      sizes[i] = size;
    *out_count = i + 1;
  }
  return HAL_OK;
}

static hal_status_t gpu_cuda_launch_kernel(gpu_adapter_t* adapter,
                                           gpu_stream_t stream,
                                           const gpu_kernel_launch_t* launch) {
  gpu_cuda_adapter_t* cuda = gpu_cuda(adapter);
  GPU_ADAPTER_REQUIRE(adapter, GPU_ADAPTER_CAP_MODULE, "modules");
  GPU_RETURN_IF_ERROR(
      &cuda->base,
      cuda->syms.cuLaunchKernel(
          (CUfunction)launch->function, launch->grid[0], launch->grid[1],
          launch->grid[2], launch->block[0], launch->block[1], launch->block[2],
          launch->shared_memory_bytes, (CUstream)stream, launch->args, NULL),
      "cuLaunchKernel");
  return HAL_OK;
}

//===--- the ops table ---===//

static const gpu_adapter_ops_t gpu_cuda_ops = {
    .destroy = gpu_cuda_destroy,
    .device_count = gpu_cuda_device_count,
    .device_name = gpu_cuda_device_name,
    .device_uuid = gpu_cuda_device_uuid,
    .device_total_memory = gpu_cuda_device_total_memory,
    .device_attribute = gpu_cuda_device_attribute,
    .context_open = gpu_cuda_context_open,
    .context_close = gpu_cuda_context_close,
    .make_current = gpu_cuda_make_current,
    .device_alloc = gpu_cuda_device_alloc,
    .device_free = gpu_cuda_device_free,
    .host_alloc = gpu_cuda_host_alloc,
    .host_free = gpu_cuda_host_free,
    .memcpy_sync = gpu_cuda_memcpy_sync,
    .pool_create = gpu_cuda_pool_create,
    .pool_destroy = gpu_cuda_pool_destroy,
    .pool_trim = gpu_cuda_pool_trim,
    .pool_reserved_bytes = gpu_cuda_pool_reserved_bytes,
    .alloc_async = gpu_cuda_alloc_async,
    .free_async = gpu_cuda_free_async,
    .memcpy_async = gpu_cuda_memcpy_async,
    .memset_async = gpu_cuda_memset_async,
    .stream_create = gpu_cuda_stream_create,
    .stream_destroy = gpu_cuda_stream_destroy,
    .stream_synchronize = gpu_cuda_stream_synchronize,
    .stream_query = gpu_cuda_stream_query,
    .stream_wait_event = gpu_cuda_stream_wait_event,
    .launch_host_func = gpu_cuda_launch_host_func,
    .event_create = gpu_cuda_event_create,
    .event_destroy = gpu_cuda_event_destroy,
    .event_record = gpu_cuda_event_record,
    .event_query = gpu_cuda_event_query,
    .event_synchronize = gpu_cuda_event_synchronize,
    .timed_event_create = gpu_cuda_timed_event_create,
    .event_elapsed_ms = gpu_cuda_event_elapsed_ms,
    .graph_create = gpu_cuda_graph_create,
    .graph_destroy = gpu_cuda_graph_destroy,
    .graph_add_empty_node = gpu_cuda_graph_add_empty_node,
    .graph_add_memset_node = gpu_cuda_graph_add_memset_node,
    .graph_add_memcpy_node = gpu_cuda_graph_add_memcpy_node,
    .graph_add_host_node = gpu_cuda_graph_add_host_node,
    .graph_add_kernel_node = gpu_cuda_graph_add_kernel_node,
    .graph_instantiate = gpu_cuda_graph_instantiate,
    .graph_exec_destroy = gpu_cuda_graph_exec_destroy,
    .graph_launch = gpu_cuda_graph_launch,
    .graph_exec_update = gpu_cuda_graph_exec_update,
    .module_load_data = gpu_cuda_module_load_data,
    .module_unload = gpu_cuda_module_unload,
    .module_get_function = gpu_cuda_module_get_function,
    .function_param_sizes = gpu_cuda_function_param_sizes,
    .launch_kernel = gpu_cuda_launch_kernel,
    .range_start = gpu_cuda_range_start,
    .range_end = gpu_cuda_range_end,
};

//===--- the symbol and error tables, the vendor descriptor ---===//

GPU_CUDA_SYMBOLS(GPU_ADAPTER_SYMBOL_CHECK)

#define GPU_CUDA_SYMBOL_ENTRY(kind, capability, name, ret, params) \
  GPU_ADAPTER_SYMBOL_ENTRY(gpu_cuda_symbols_t, kind, capability, #name, name)
static const gpu_adapter_symbol_t gpu_cuda_symbols[] = {
    GPU_CUDA_SYMBOLS(GPU_CUDA_SYMBOL_ENTRY)};

static const gpu_adapter_error_t gpu_cuda_errors[] = {
    GPU_CUDA_ERRORS(GPU_ADAPTER_ERROR)};

static const char* const gpu_cuda_libraries[] = {"libcuda.so.1"};

const gpu_adapter_vendor_desc_t gpu_cuda_vendor_desc = {
    .vendor = GPU_ADAPTER_VENDOR_CUDA,
    .name = "CUDA",
    .library_env = "HAL_CUDA_LIBRARY",
    .libraries = gpu_cuda_libraries,
    .library_count = HAL_ARRAYSIZE(gpu_cuda_libraries),
    .header_version = CUDA_VERSION,
    .adapter_size = sizeof(gpu_cuda_adapter_t),
    .symbols_offset = offsetof(gpu_cuda_adapter_t, syms),
    .symbols = gpu_cuda_symbols,
    .symbol_count = HAL_ARRAYSIZE(gpu_cuda_symbols),
    .errors = gpu_cuda_errors,
    .error_count = HAL_ARRAYSIZE(gpu_cuda_errors),
    .ops = &gpu_cuda_ops,
    .lookup = gpu_cuda_lookup,
    .initialize = gpu_cuda_initialize,
    .finish_initialize = gpu_cuda_finish_initialize,
    .error_name = gpu_cuda_error_name,
    .error_string = gpu_cuda_error_string,
    .keep_loaded = false,
    .virtual_library = "libvgpu-cuda.so",
};
