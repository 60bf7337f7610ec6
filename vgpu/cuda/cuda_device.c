// CUDA facade: devices, attributes, primary contexts, the current context.
#include <stdio.h>
#include <string.h>

#include "cuda_facade.h"

// The calling thread's current context (0: none) and a small stack for
// cuCtxPushCurrent/cuCtxPopCurrent.
#define CTX_STACK 8
static _Thread_local uint64_t tls_ctx;
static _Thread_local uint64_t tls_stack[CTX_STACK];
static _Thread_local int tls_depth;

vgpu_status vgpu_cu_current_device(int* ordinal) {
  if (tls_ctx == 0)
    return VGPU_ERR_INVALID_CONTEXT;
  return vgpu_context_device(tls_ctx, ordinal);
}

int vgpu_cu_fault_device(void) {
  int d = 0;
  if (tls_ctx == 0 || vgpu_context_device(tls_ctx, &d) != VGPU_OK)
    return 0;
  return d;
}

vgpu_status vgpu_cu_stream_device(CUstream stream, int* ordinal) {
  uint64_t h = vgpu_cu_h(stream);
  if (VGPU_STREAM_IS_DEFAULT(h))
    return vgpu_cu_current_device(ordinal);
  return vgpu_stream_device(h, 0, ordinal);
}

static CUresult check_device(CUdevice dev) {
  return vgpu_cu_result(vgpu_device_check((int)dev));
}

// A lost device still answers the queries of its fixed properties.
static CUresult check_property_device(CUdevice dev) {
  return vgpu_cu_result(vgpu_device_check_ordinal((int)dev));
}

VGPU_EXPORT CUresult CUDAAPI cuDeviceGetCount(int* count) {
  VGPU_CU_ENTER("cuDeviceGetCount");
  if (count == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  *count = vgpu_device_count();
  return CUDA_SUCCESS;
}

VGPU_EXPORT CUresult CUDAAPI cuDeviceGet(CUdevice* device, int ordinal) {
  VGPU_CU_ENTER("cuDeviceGet");
  if (device == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  if (ordinal < 0 || ordinal >= vgpu_device_count())
    return CUDA_ERROR_INVALID_DEVICE;
  *device = ordinal;
  return CUDA_SUCCESS;
}

VGPU_EXPORT CUresult CUDAAPI cuDeviceGetName(char* name, int len,
                                             CUdevice dev) {
  VGPU_CU_ENTER("cuDeviceGetName");
  if (name == NULL || len <= 0)
    return CUDA_ERROR_INVALID_VALUE;
  CUresult r = check_property_device(dev);
  if (r != CUDA_SUCCESS)
    return r;
  snprintf(name, (size_t)len, "%s", vgpu_device_info_get((int)dev)->name);
  return CUDA_SUCCESS;
}

VGPU_EXPORT CUresult CUDAAPI cuDeviceTotalMem(size_t* bytes, CUdevice dev) {
  VGPU_CU_ENTER("cuDeviceTotalMem");
  if (bytes == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  CUresult r = check_property_device(dev);
  if (r != CUDA_SUCCESS)
    return r;
  *bytes = vgpu_device_info_get((int)dev)->total_memory;
  return CUDA_SUCCESS;
}

VGPU_EXPORT CUresult CUDAAPI cuDeviceComputeCapability(int* major, int* minor,
                                                       CUdevice dev) {
  VGPU_CU_ENTER("cuDeviceComputeCapability");
  if (major == NULL || minor == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  CUresult r = check_property_device(dev);
  if (r != CUDA_SUCCESS)
    return r;
  *major = vgpu_device_info_get((int)dev)->compute_major;
  *minor = vgpu_device_info_get((int)dev)->compute_minor;
  return CUDA_SUCCESS;
}

VGPU_EXPORT CUresult CUDAAPI cuDeviceGetUuid(CUuuid* uuid, CUdevice dev) {
  VGPU_CU_ENTER("cuDeviceGetUuid");
  if (uuid == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  uint8_t bytes[VGPU_UUID_SIZE];
  VGPU_CU_TRY(vgpu_device_uuid((int)dev, bytes));
  _Static_assert(sizeof(uuid->bytes) == VGPU_UUID_SIZE, "16 bytes");
  memcpy(uuid->bytes, bytes, sizeof(uuid->bytes));
  return CUDA_SUCCESS;
}

static int attribute_value(const vgpu_device_info* in, CUdevice_attribute a,
                           bool* known) {
  *known = true;
  switch (a) {
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
      return in->max_threads_per_block;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X:
      return in->max_block_dim[0];
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y:
      return in->max_block_dim[1];
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z:
      return in->max_block_dim[2];
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X:
      return in->max_grid_dim[0];
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y:
      return in->max_grid_dim[1];
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z:
      return in->max_grid_dim[2];
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK:
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN:
      return in->shared_memory_per_block;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR:
      return 2 * in->shared_memory_per_block;
    case CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY:
      return in->total_constant_memory;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE:
      return in->warp_size;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK:
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR:
      return in->registers_per_block;
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE:
    case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE:
      return in->clock_rate_khz;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
      return in->multiprocessor_count;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
      return in->compute_major;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
      return in->compute_minor;
    case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID:
      return in->pci_bus_id;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE:
      return in->l2_cache_size;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH:
      return 256;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR:
      return 2 * in->max_threads_per_block;
    case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING:
    case CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS:
    case CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY:
    case CU_DEVICE_ATTRIBUTE_GPU_OVERLAP:
    case CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED:
    case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED:
      return 1;
    case CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT:
      return 2;
    case CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT:
      return 512;
    case CU_DEVICE_ATTRIBUTE_MAX_PITCH:
      return 2147483647;
    default:
      *known = a > 0 && a < CU_DEVICE_ATTRIBUTE_MAX;
      return 0;  // a real attribute the virtual GPU does not have
  }
}

VGPU_EXPORT CUresult CUDAAPI cuDeviceGetAttribute(int* pi,
                                                  CUdevice_attribute attrib,
                                                  CUdevice dev) {
  VGPU_CU_ENTER("cuDeviceGetAttribute");
  if (pi == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  CUresult r = check_property_device(dev);
  if (r != CUDA_SUCCESS)
    return r;
  bool known = false;
  int v = attribute_value(vgpu_device_info_get((int)dev), attrib, &known);
  if (!known)
    return CUDA_ERROR_INVALID_VALUE;
  *pi = v;
  return CUDA_SUCCESS;
}

VGPU_EXPORT CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext* pctx,
                                                      CUdevice dev) {
  VGPU_CU_ENTER("cuDevicePrimaryCtxRetain");
  if (pctx == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  CUresult r = check_device(dev);
  if (r != CUDA_SUCCESS)
    return r;
  uint64_t h = 0;
  VGPU_CU_TRY(vgpu_context_primary_retain((int)dev, &h));
  *pctx = (CUcontext)(uintptr_t)h;
  return CUDA_SUCCESS;
}

VGPU_EXPORT CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice dev) {
  VGPU_CU_ENTER("cuDevicePrimaryCtxRelease");
  return vgpu_cu_result(vgpu_context_primary_release((int)dev));
}

// libcuda also exports the unversioned name (same signature).
#undef cuDevicePrimaryCtxRelease
VGPU_EXPORT CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice dev);
VGPU_EXPORT CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice dev) {
  return cuDevicePrimaryCtxRelease_v2(dev);
}

VGPU_EXPORT CUresult CUDAAPI cuCtxSetCurrent(CUcontext ctx) {
  VGPU_CU_ENTER("cuCtxSetCurrent");
  uint64_t h = vgpu_cu_h(ctx);
  if (h != 0) {
    int dev = 0;
    VGPU_CU_TRY(vgpu_context_device(h, &dev));
  }
  tls_ctx = h;
  return CUDA_SUCCESS;
}

VGPU_EXPORT CUresult CUDAAPI cuCtxGetCurrent(CUcontext* pctx) {
  VGPU_CU_ENTER("cuCtxGetCurrent");
  if (pctx == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  *pctx = (CUcontext)(uintptr_t)tls_ctx;
  return CUDA_SUCCESS;
}

VGPU_EXPORT CUresult CUDAAPI cuCtxPushCurrent(CUcontext ctx) {
  VGPU_CU_ENTER("cuCtxPushCurrent");
  int dev = 0;
  VGPU_CU_TRY(vgpu_context_device(vgpu_cu_h(ctx), &dev));
  if (tls_depth == CTX_STACK)
    return CUDA_ERROR_INVALID_VALUE;
  tls_stack[tls_depth++] = tls_ctx;
  tls_ctx = vgpu_cu_h(ctx);
  return CUDA_SUCCESS;
}

VGPU_EXPORT CUresult CUDAAPI cuCtxPopCurrent(CUcontext* pctx) {
  VGPU_CU_ENTER("cuCtxPopCurrent");
  if (tls_ctx == 0)
    return CUDA_ERROR_INVALID_CONTEXT;
  if (pctx != NULL)
    *pctx = (CUcontext)(uintptr_t)tls_ctx;
  tls_ctx = tls_depth > 0 ? tls_stack[--tls_depth] : 0;
  return CUDA_SUCCESS;
}

// CUDA 13's forms, which take the context (NULL: the current one); what
// cuGetProcAddress hands out for "cuCtxGetDevice" and "cuCtxSynchronize"
// at 13000, as libcuda does.
static vgpu_status context_device(CUcontext ctx, int* ordinal) {
  if (ctx == NULL)
    return vgpu_cu_current_device(ordinal);
  return vgpu_context_device((uint64_t)(uintptr_t)ctx, ordinal);
}

VGPU_EXPORT CUresult CUDAAPI cuCtxGetDevice_v2(CUdevice* device,
                                               CUcontext ctx) {
  VGPU_CU_ENTER("cuCtxGetDevice");
  if (device == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  int dev = 0;
  VGPU_CU_TRY(context_device(ctx, &dev));
  *device = dev;
  return CUDA_SUCCESS;
}

VGPU_EXPORT CUresult CUDAAPI cuCtxSynchronize_v2(CUcontext ctx) {
  VGPU_CU_ENTER_SYNC("cuCtxSynchronize", fault);
  int dev = 0;
  VGPU_CU_TRY(context_device(ctx, &dev));
  vgpu_status st = vgpu_device_synchronize(dev);
  return fault ? (CUresult)fault : vgpu_cu_result(st);
}

// The pre-13 forms: the current context's.
VGPU_EXPORT CUresult CUDAAPI cuCtxGetDevice(CUdevice* device) {
  return cuCtxGetDevice_v2(device, NULL);
}

VGPU_EXPORT CUresult CUDAAPI cuCtxSynchronize(void) {
  return cuCtxSynchronize_v2(NULL);
}

VGPU_EXPORT CUresult CUDAAPI cuMemGetInfo(size_t* free, size_t* total) {
  VGPU_CU_ENTER("cuMemGetInfo");
  if (free == NULL || total == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  int dev = 0;
  VGPU_CU_TRY(vgpu_cu_current_device(&dev));
  return vgpu_cu_result(vgpu_device_memory_info(dev, free, total));
}

// The CUDA 9.2 name, which libcuda still exports beside cuDeviceGetUuid_v2
// (cuda.h renames the name to the latter) and which cuGetProcAddress hands
// out below CUDA 11.4.
#undef cuDeviceGetUuid
VGPU_EXPORT CUresult CUDAAPI cuDeviceGetUuid(CUuuid* uuid, CUdevice dev);
VGPU_EXPORT CUresult CUDAAPI cuDeviceGetUuid(CUuuid* uuid, CUdevice dev) {
  return cuDeviceGetUuid_v2(uuid, dev);
}
