// CUDA facade: allocation, copies and memsets.
#include "cuda_facade.h"

VGPU_EXPORT CUresult CUDAAPI cuMemAlloc(CUdeviceptr* dptr, size_t bytesize) {
  VGPU_CU_ENTER("cuMemAlloc");
  if (dptr == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  int dev = 0;
  VGPU_CU_TRY(vgpu_cu_current_device(&dev));
  void* p = NULL;
  VGPU_CU_TRY(vgpu_mem_alloc(dev, bytesize, false, &p));
  *dptr = (CUdeviceptr)(uintptr_t)p;
  return CUDA_SUCCESS;
}

VGPU_EXPORT CUresult CUDAAPI cuMemFree(CUdeviceptr dptr) {
  VGPU_CU_ENTER("cuMemFree");
  return vgpu_cu_result(vgpu_mem_free(vgpu_cu_ptr(dptr), false));
}

VGPU_EXPORT CUresult CUDAAPI cuMemHostAlloc(void** pp, size_t bytesize,
                                            unsigned int Flags) {
  VGPU_CU_ENTER("cuMemHostAlloc");
  if (pp == NULL || (Flags & ~(unsigned)(CU_MEMHOSTALLOC_PORTABLE |
                                         CU_MEMHOSTALLOC_DEVICEMAP |
                                         CU_MEMHOSTALLOC_WRITECOMBINED)) != 0)
    return CUDA_ERROR_INVALID_VALUE;
  int dev = 0;
  VGPU_CU_TRY(vgpu_cu_current_device(&dev));
  return vgpu_cu_result(vgpu_mem_alloc(dev, bytesize, true, pp));
}

VGPU_EXPORT CUresult CUDAAPI cuMemAllocHost(void** pp, size_t bytesize) {
  VGPU_CU_ENTER("cuMemAllocHost");
  if (pp == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  int dev = 0;
  VGPU_CU_TRY(vgpu_cu_current_device(&dev));
  return vgpu_cu_result(vgpu_mem_alloc(dev, bytesize, true, pp));
}

VGPU_EXPORT CUresult CUDAAPI cuMemFreeHost(void* p) {
  VGPU_CU_ENTER("cuMemFreeHost");
  return vgpu_cu_result(vgpu_mem_free(p, true));
}

// One copy, synchronous (default stream) or on |stream|.
static CUresult copy(void* dst, vgpu_ptr_kind dk, const void* src,
                     vgpu_ptr_kind sk, size_t bytes, CUstream stream,
                     bool sync) {
  int dev = 0;
  VGPU_CU_TRY(vgpu_cu_stream_device(sync ? NULL : stream, &dev));
  vgpu_copy c;
  vgpu_copy_init_1d(&c, dst, dk, src, sk, bytes);
  return vgpu_cu_result(vgpu_stream_copy(vgpu_cu_h(stream), dev, &c, sync));
}

VGPU_EXPORT CUresult CUDAAPI cuMemcpy(CUdeviceptr dst, CUdeviceptr src,
                                      size_t ByteCount) {
  VGPU_CU_ENTER("cuMemcpy");
  return copy(vgpu_cu_ptr(dst), VGPU_PTR_ANY, vgpu_cu_ptr(src), VGPU_PTR_ANY,
              ByteCount, NULL, true);
}

VGPU_EXPORT CUresult CUDAAPI cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src,
                                           size_t ByteCount, CUstream hStream) {
  VGPU_CU_ENTER("cuMemcpyAsync");
  return copy(vgpu_cu_ptr(dst), VGPU_PTR_ANY, vgpu_cu_ptr(src), VGPU_PTR_ANY,
              ByteCount, hStream, false);
}

VGPU_EXPORT CUresult CUDAAPI cuMemcpyHtoD(CUdeviceptr dstDevice,
                                          const void* srcHost,
                                          size_t ByteCount) {
  VGPU_CU_ENTER("cuMemcpyHtoD");
  return copy(vgpu_cu_ptr(dstDevice), VGPU_PTR_DEVICE, srcHost, VGPU_PTR_HOST,
              ByteCount, NULL, true);
}

VGPU_EXPORT CUresult CUDAAPI cuMemcpyDtoH(void* dstHost, CUdeviceptr srcDevice,
                                          size_t ByteCount) {
  VGPU_CU_ENTER("cuMemcpyDtoH");
  return copy(dstHost, VGPU_PTR_HOST, vgpu_cu_ptr(srcDevice), VGPU_PTR_DEVICE,
              ByteCount, NULL, true);
}

VGPU_EXPORT CUresult CUDAAPI cuMemcpyDtoD(CUdeviceptr dstDevice,
                                          CUdeviceptr srcDevice,
                                          size_t ByteCount) {
  VGPU_CU_ENTER("cuMemcpyDtoD");
  return copy(vgpu_cu_ptr(dstDevice), VGPU_PTR_DEVICE, vgpu_cu_ptr(srcDevice),
              VGPU_PTR_DEVICE, ByteCount, NULL, true);
}

VGPU_EXPORT CUresult CUDAAPI cuMemcpyHtoDAsync(CUdeviceptr dstDevice,
                                               const void* srcHost,
                                               size_t ByteCount,
                                               CUstream hStream) {
  VGPU_CU_ENTER("cuMemcpyHtoDAsync");
  return copy(vgpu_cu_ptr(dstDevice), VGPU_PTR_DEVICE, srcHost, VGPU_PTR_HOST,
              ByteCount, hStream, false);
}

VGPU_EXPORT CUresult CUDAAPI cuMemcpyDtoHAsync(void* dstHost,
                                               CUdeviceptr srcDevice,
                                               size_t ByteCount,
                                               CUstream hStream) {
  VGPU_CU_ENTER("cuMemcpyDtoHAsync");
  return copy(dstHost, VGPU_PTR_HOST, vgpu_cu_ptr(srcDevice), VGPU_PTR_DEVICE,
              ByteCount, hStream, false);
}

VGPU_EXPORT CUresult CUDAAPI cuMemcpyDtoDAsync(CUdeviceptr dstDevice,
                                               CUdeviceptr srcDevice,
                                               size_t ByteCount,
                                               CUstream hStream) {
  VGPU_CU_ENTER("cuMemcpyDtoDAsync");
  return copy(vgpu_cu_ptr(dstDevice), VGPU_PTR_DEVICE, vgpu_cu_ptr(srcDevice),
              VGPU_PTR_DEVICE, ByteCount, hStream, false);
}

static CUresult fill(CUdeviceptr dst, uint32_t value, unsigned elem, size_t n,
                     CUstream stream, bool sync) {
  int dev = 0;
  VGPU_CU_TRY(vgpu_cu_stream_device(sync ? NULL : stream, &dev));
  vgpu_fill f;
  vgpu_fill_init_1d(&f, vgpu_cu_ptr(dst), value, elem, n);
  return vgpu_cu_result(vgpu_stream_fill(vgpu_cu_h(stream), dev, &f, sync));
}

VGPU_EXPORT CUresult CUDAAPI cuMemsetD8(CUdeviceptr dstDevice, unsigned char uc,
                                        size_t N) {
  VGPU_CU_ENTER("cuMemsetD8");
  return fill(dstDevice, uc, 1, N, NULL, true);
}

VGPU_EXPORT CUresult CUDAAPI cuMemsetD16(CUdeviceptr dstDevice,
                                         unsigned short us, size_t N) {
  VGPU_CU_ENTER("cuMemsetD16");
  return fill(dstDevice, us, 2, N, NULL, true);
}

VGPU_EXPORT CUresult CUDAAPI cuMemsetD32(CUdeviceptr dstDevice, unsigned int ui,
                                         size_t N) {
  VGPU_CU_ENTER("cuMemsetD32");
  return fill(dstDevice, ui, 4, N, NULL, true);
}

VGPU_EXPORT CUresult CUDAAPI cuMemsetD8Async(CUdeviceptr dstDevice,
                                             unsigned char uc, size_t N,
                                             CUstream hStream) {
  VGPU_CU_ENTER("cuMemsetD8Async");
  return fill(dstDevice, uc, 1, N, hStream, false);
}

VGPU_EXPORT CUresult CUDAAPI cuMemsetD16Async(CUdeviceptr dstDevice,
                                              unsigned short us, size_t N,
                                              CUstream hStream) {
  VGPU_CU_ENTER("cuMemsetD16Async");
  return fill(dstDevice, us, 2, N, hStream, false);
}

VGPU_EXPORT CUresult CUDAAPI cuMemsetD32Async(CUdeviceptr dstDevice,
                                              unsigned int ui, size_t N,
                                              CUstream hStream) {
  VGPU_CU_ENTER("cuMemsetD32Async");
  return fill(dstDevice, ui, 4, N, hStream, false);
}

// ------------------------------------------------ stream-ordered allocation

static CUmemoryPool pool_handle(uint64_t h) {
  return (CUmemoryPool)(uintptr_t)h;
}

// The core's attribute for |attr|, and whether its value is an int (the
// reuse policies) rather than a cuuint64_t.
static bool pool_attribute(CUmemPool_attribute attr, vgpu_pool_attr* out,
                           bool* is_int) {
  *is_int = false;
  switch (attr) {
    case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
      *out = VGPU_POOL_REUSE;
      *is_int = true;
      return true;
    case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
      *out = VGPU_POOL_RELEASE_THRESHOLD;
      return true;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT:
      *out = VGPU_POOL_RESERVED_CURRENT;
      return true;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
      *out = VGPU_POOL_RESERVED_HIGH;
      return true;
    case CU_MEMPOOL_ATTR_USED_MEM_CURRENT:
      *out = VGPU_POOL_USED_CURRENT;
      return true;
    case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
      *out = VGPU_POOL_USED_HIGH;
      return true;
  }
  return false;
}

VGPU_EXPORT CUresult CUDAAPI cuMemPoolCreate(CUmemoryPool* pool,
                                             const CUmemPoolProps* poolProps) {
  VGPU_CU_ENTER("cuMemPoolCreate");
  if (pool == NULL || poolProps == NULL ||
      poolProps->allocType != CU_MEM_ALLOCATION_TYPE_PINNED ||
      poolProps->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
    return CUDA_ERROR_INVALID_VALUE;
  if (poolProps->handleTypes != CU_MEM_HANDLE_TYPE_NONE)
    return CUDA_ERROR_NOT_SUPPORTED;  // no interprocess handles
  uint64_t h = 0;
  VGPU_CU_TRY(vgpu_pool_create(poolProps->location.id, &h));
  *pool = pool_handle(h);
  return CUDA_SUCCESS;
}

VGPU_EXPORT CUresult CUDAAPI cuMemPoolDestroy(CUmemoryPool pool) {
  VGPU_CU_ENTER("cuMemPoolDestroy");
  return vgpu_cu_result(vgpu_pool_destroy(vgpu_cu_h(pool)));
}

VGPU_EXPORT CUresult CUDAAPI cuMemPoolSetAttribute(CUmemoryPool pool,
                                                   CUmemPool_attribute attr,
                                                   void* value) {
  VGPU_CU_ENTER("cuMemPoolSetAttribute");
  vgpu_pool_attr a;
  bool is_int = false;
  if (value == NULL || !pool_attribute(attr, &a, &is_int))
    return CUDA_ERROR_INVALID_VALUE;
  uint64_t v = is_int ? (uint64_t)(*(int*)value != 0) : *(cuuint64_t*)value;
  return vgpu_cu_result(vgpu_pool_set_attribute(vgpu_cu_h(pool), a, v));
}

VGPU_EXPORT CUresult CUDAAPI cuMemPoolGetAttribute(CUmemoryPool pool,
                                                   CUmemPool_attribute attr,
                                                   void* value) {
  VGPU_CU_ENTER("cuMemPoolGetAttribute");
  vgpu_pool_attr a;
  bool is_int = false;
  if (value == NULL || !pool_attribute(attr, &a, &is_int))
    return CUDA_ERROR_INVALID_VALUE;
  uint64_t v = 0;
  VGPU_CU_TRY(vgpu_pool_get_attribute(vgpu_cu_h(pool), a, &v));
  if (is_int) {
    *(int*)value = (int)v;
  } else {
    *(cuuint64_t*)value = v;
  }
  return CUDA_SUCCESS;
}

VGPU_EXPORT CUresult CUDAAPI cuMemPoolTrimTo(CUmemoryPool pool,
                                             size_t minBytesToKeep) {
  VGPU_CU_ENTER("cuMemPoolTrimTo");
  return vgpu_cu_result(vgpu_pool_trim(vgpu_cu_h(pool), minBytesToKeep));
}

VGPU_EXPORT CUresult CUDAAPI cuDeviceGetDefaultMemPool(CUmemoryPool* pool_out,
                                                       CUdevice dev) {
  VGPU_CU_ENTER("cuDeviceGetDefaultMemPool");
  if (pool_out == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  uint64_t h = 0;
  VGPU_CU_TRY(vgpu_pool_default((int)dev, &h));
  *pool_out = pool_handle(h);
  return CUDA_SUCCESS;
}

VGPU_EXPORT CUresult CUDAAPI cuDeviceGetMemPool(CUmemoryPool* pool,
                                                CUdevice dev) {
  VGPU_CU_ENTER("cuDeviceGetMemPool");
  if (pool == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  uint64_t h = 0;
  VGPU_CU_TRY(vgpu_pool_current((int)dev, &h));
  *pool = pool_handle(h);
  return CUDA_SUCCESS;
}

VGPU_EXPORT CUresult CUDAAPI cuDeviceSetMemPool(CUdevice dev,
                                                CUmemoryPool pool) {
  VGPU_CU_ENTER("cuDeviceSetMemPool");
  return vgpu_cu_result(vgpu_pool_set_current((int)dev, vgpu_cu_h(pool)));
}

static CUresult alloc_async(CUdeviceptr* dptr, size_t bytesize, uint64_t pool,
                            CUstream hStream) {
  if (dptr == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  int dev = 0;
  VGPU_CU_TRY(vgpu_cu_stream_device(hStream, &dev));
  void* p = NULL;
  VGPU_CU_TRY(vgpu_alloc_async(pool, bytesize, vgpu_cu_h(hStream), dev, &p));
  *dptr = (CUdeviceptr)(uintptr_t)p;
  return CUDA_SUCCESS;
}

VGPU_EXPORT CUresult CUDAAPI cuMemAllocAsync(CUdeviceptr* dptr, size_t bytesize,
                                             CUstream hStream) {
  VGPU_CU_ENTER("cuMemAllocAsync");
  return alloc_async(dptr, bytesize, 0, hStream);
}

VGPU_EXPORT CUresult CUDAAPI cuMemAllocFromPoolAsync(CUdeviceptr* dptr,
                                                     size_t bytesize,
                                                     CUmemoryPool pool,
                                                     CUstream hStream) {
  VGPU_CU_ENTER("cuMemAllocFromPoolAsync");
  if (pool == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  return alloc_async(dptr, bytesize, vgpu_cu_h(pool), hStream);
}

VGPU_EXPORT CUresult CUDAAPI cuMemFreeAsync(CUdeviceptr dptr,
                                            CUstream hStream) {
  VGPU_CU_ENTER("cuMemFreeAsync");
  int dev = 0;
  VGPU_CU_TRY(vgpu_cu_stream_device(hStream, &dev));
  return vgpu_cu_result(
      vgpu_free_async(vgpu_cu_ptr(dptr), vgpu_cu_h(hStream), dev));
}
