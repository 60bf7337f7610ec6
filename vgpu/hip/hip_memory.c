// HIP facade: allocation, copies and memsets.
#include "hip_facade.h"

bool vgpu_hip_copy_kinds(hipMemcpyKind kind, vgpu_ptr_kind* dst,
                         vgpu_ptr_kind* src) {
  switch (kind) {
    case hipMemcpyHostToHost:
      *dst = VGPU_PTR_HOST;
      *src = VGPU_PTR_HOST;
      return true;
    case hipMemcpyHostToDevice:
      *dst = VGPU_PTR_DEVICE;
      *src = VGPU_PTR_HOST;
      return true;
    case hipMemcpyDeviceToHost:
      *dst = VGPU_PTR_HOST;
      *src = VGPU_PTR_DEVICE;
      return true;
    case hipMemcpyDeviceToDevice:
      *dst = VGPU_PTR_DEVICE;
      *src = VGPU_PTR_DEVICE;
      return true;
    case hipMemcpyDefault:
      *dst = VGPU_PTR_ANY;
      *src = VGPU_PTR_ANY;
      return true;
  }
  return false;
}

VGPU_EXPORT hipError_t hipMalloc(void** ptr, size_t size) {
  VGPU_HIP_ENTER("hipMalloc");
  if (ptr == NULL)
    VGPU_HIP_RETURN(hipErrorInvalidValue);
  if (size == 0) {
    *ptr = NULL;
    return hipSuccess;
  }
  VGPU_HIP_RETURN_ST(vgpu_mem_alloc(vgpu_hip_device(), size, false, ptr));
}

VGPU_EXPORT hipError_t hipFree(void* ptr) {
  VGPU_HIP_ENTER("hipFree");
  VGPU_HIP_RETURN_ST(vgpu_mem_free(ptr, false));
}

VGPU_EXPORT hipError_t hipHostMalloc(void** ptr, size_t size,
                                     unsigned int flags) {
  VGPU_HIP_ENTER("hipHostMalloc");
  const unsigned known = hipHostMallocPortable | hipHostMallocMapped |
                         hipHostMallocWriteCombined | hipHostMallocNumaUser |
                         hipHostMallocCoherent | hipHostMallocNonCoherent;
  if (ptr == NULL || (flags & ~known) != 0)
    VGPU_HIP_RETURN(hipErrorInvalidValue);
  if (size == 0) {
    *ptr = NULL;
    return hipSuccess;
  }
  VGPU_HIP_RETURN_ST(vgpu_mem_alloc(vgpu_hip_device(), size, true, ptr));
}

VGPU_EXPORT hipError_t hipHostFree(void* ptr) {
  VGPU_HIP_ENTER("hipHostFree");
  VGPU_HIP_RETURN_ST(vgpu_mem_free(ptr, true));
}

static hipError_t copy(void* dst, vgpu_ptr_kind dk, const void* src,
                       vgpu_ptr_kind sk, size_t bytes, hipStream_t stream,
                       bool sync) {
  int dev = 0;
  vgpu_status st = vgpu_hip_stream_device(sync ? NULL : stream, &dev);
  if (st != VGPU_OK)
    return vgpu_hip_record(vgpu_hip_result(st));
  vgpu_copy c;
  vgpu_copy_init_1d(&c, dst, dk, src, sk, bytes);
  VGPU_HIP_RETURN_ST(vgpu_stream_copy(vgpu_hip_h(stream), dev, &c, sync));
}

static hipError_t copy_kind(void* dst, const void* src, size_t bytes,
                            hipMemcpyKind kind, hipStream_t stream, bool sync) {
  vgpu_ptr_kind dk, sk;
  if (!vgpu_hip_copy_kinds(kind, &dk, &sk))
    VGPU_HIP_RETURN(hipErrorInvalidMemcpyDirection);
  return copy(dst, dk, src, sk, bytes, stream, sync);
}

VGPU_EXPORT hipError_t hipMemcpy(void* dst, const void* src, size_t sizeBytes,
                                 hipMemcpyKind kind) {
  VGPU_HIP_ENTER("hipMemcpy");
  return copy_kind(dst, src, sizeBytes, kind, NULL, true);
}

VGPU_EXPORT hipError_t hipMemcpyAsync(void* dst, const void* src,
                                      size_t sizeBytes, hipMemcpyKind kind,
                                      hipStream_t stream) {
  VGPU_HIP_ENTER("hipMemcpyAsync");
  return copy_kind(dst, src, sizeBytes, kind, stream, false);
}

VGPU_EXPORT hipError_t hipMemcpyHtoD(hipDeviceptr_t dst, void* src,
                                     size_t sizeBytes) {
  VGPU_HIP_ENTER("hipMemcpyHtoD");
  return copy(dst, VGPU_PTR_DEVICE, src, VGPU_PTR_HOST, sizeBytes, NULL, true);
}

VGPU_EXPORT hipError_t hipMemcpyDtoH(void* dst, hipDeviceptr_t src,
                                     size_t sizeBytes) {
  VGPU_HIP_ENTER("hipMemcpyDtoH");
  return copy(dst, VGPU_PTR_HOST, src, VGPU_PTR_DEVICE, sizeBytes, NULL, true);
}

VGPU_EXPORT hipError_t hipMemcpyDtoD(hipDeviceptr_t dst, hipDeviceptr_t src,
                                     size_t sizeBytes) {
  VGPU_HIP_ENTER("hipMemcpyDtoD");
  return copy(dst, VGPU_PTR_DEVICE, src, VGPU_PTR_DEVICE, sizeBytes, NULL,
              true);
}

VGPU_EXPORT hipError_t hipMemcpyHtoDAsync(hipDeviceptr_t dst, void* src,
                                          size_t sizeBytes,
                                          hipStream_t stream) {
  VGPU_HIP_ENTER("hipMemcpyHtoDAsync");
  return copy(dst, VGPU_PTR_DEVICE, src, VGPU_PTR_HOST, sizeBytes, stream,
              false);
}

VGPU_EXPORT hipError_t hipMemcpyDtoHAsync(void* dst, hipDeviceptr_t src,
                                          size_t sizeBytes,
                                          hipStream_t stream) {
  VGPU_HIP_ENTER("hipMemcpyDtoHAsync");
  return copy(dst, VGPU_PTR_HOST, src, VGPU_PTR_DEVICE, sizeBytes, stream,
              false);
}

VGPU_EXPORT hipError_t hipMemcpyDtoDAsync(hipDeviceptr_t dst,
                                          hipDeviceptr_t src, size_t sizeBytes,
                                          hipStream_t stream) {
  VGPU_HIP_ENTER("hipMemcpyDtoDAsync");
  return copy(dst, VGPU_PTR_DEVICE, src, VGPU_PTR_DEVICE, sizeBytes, stream,
              false);
}

static hipError_t fill(void* dst, uint32_t value, unsigned elem, size_t n,
                       hipStream_t stream, bool sync) {
  int dev = 0;
  vgpu_status st = vgpu_hip_stream_device(sync ? NULL : stream, &dev);
  if (st != VGPU_OK)
    return vgpu_hip_record(vgpu_hip_result(st));
  vgpu_fill f;
  vgpu_fill_init_1d(&f, dst, value, elem, n);
  VGPU_HIP_RETURN_ST(vgpu_stream_fill(vgpu_hip_h(stream), dev, &f, sync));
}

VGPU_EXPORT hipError_t hipMemset(void* dst, int value, size_t sizeBytes) {
  VGPU_HIP_ENTER("hipMemset");
  return fill(dst, (uint8_t)value, 1, sizeBytes, NULL, true);
}

VGPU_EXPORT hipError_t hipMemsetAsync(void* dst, int value, size_t sizeBytes,
                                      hipStream_t stream) {
  VGPU_HIP_ENTER("hipMemsetAsync");
  return fill(dst, (uint8_t)value, 1, sizeBytes, stream, false);
}

VGPU_EXPORT hipError_t hipMemsetD8(hipDeviceptr_t dest, unsigned char value,
                                   size_t count) {
  VGPU_HIP_ENTER("hipMemsetD8");
  return fill(dest, value, 1, count, NULL, true);
}

VGPU_EXPORT hipError_t hipMemsetD16(hipDeviceptr_t dest, unsigned short value,
                                    size_t count) {
  VGPU_HIP_ENTER("hipMemsetD16");
  return fill(dest, value, 2, count, NULL, true);
}

VGPU_EXPORT hipError_t hipMemsetD32(hipDeviceptr_t dest, int value,
                                    size_t count) {
  VGPU_HIP_ENTER("hipMemsetD32");
  return fill(dest, (uint32_t)value, 4, count, NULL, true);
}

VGPU_EXPORT hipError_t hipMemsetD8Async(hipDeviceptr_t dest,
                                        unsigned char value, size_t count,
                                        hipStream_t stream) {
  VGPU_HIP_ENTER("hipMemsetD8Async");
  return fill(dest, value, 1, count, stream, false);
}

VGPU_EXPORT hipError_t hipMemsetD16Async(hipDeviceptr_t dest,
                                         unsigned short value, size_t count,
                                         hipStream_t stream) {
  VGPU_HIP_ENTER("hipMemsetD16Async");
  return fill(dest, value, 2, count, stream, false);
}

VGPU_EXPORT hipError_t hipMemsetD32Async(hipDeviceptr_t dst, int value,
                                         size_t count, hipStream_t stream) {
  VGPU_HIP_ENTER("hipMemsetD32Async");
  return fill(dst, (uint32_t)value, 4, count, stream, false);
}

// ------------------------------------------------ stream-ordered allocation

static hipMemPool_t pool_handle(uint64_t h) {
  return (hipMemPool_t)(uintptr_t)h;
}

// The core's attribute for |attr|, and whether its value is an int (the
// reuse policies) rather than a uint64_t.
static bool pool_attribute(hipMemPoolAttr attr, vgpu_pool_attr* out,
                           bool* is_int) {
  *is_int = false;
  switch (attr) {
    case hipMemPoolReuseFollowEventDependencies:
    case hipMemPoolReuseAllowOpportunistic:
    case hipMemPoolReuseAllowInternalDependencies:
      *out = VGPU_POOL_REUSE;
      *is_int = true;
      return true;
    case hipMemPoolAttrReleaseThreshold:
      *out = VGPU_POOL_RELEASE_THRESHOLD;
      return true;
    case hipMemPoolAttrReservedMemCurrent:
      *out = VGPU_POOL_RESERVED_CURRENT;
      return true;
    case hipMemPoolAttrReservedMemHigh:
      *out = VGPU_POOL_RESERVED_HIGH;
      return true;
    case hipMemPoolAttrUsedMemCurrent:
      *out = VGPU_POOL_USED_CURRENT;
      return true;
    case hipMemPoolAttrUsedMemHigh:
      *out = VGPU_POOL_USED_HIGH;
      return true;
  }
  return false;
}

VGPU_EXPORT hipError_t hipMemPoolCreate(hipMemPool_t* mem_pool,
                                        const hipMemPoolProps* pool_props) {
  VGPU_HIP_ENTER("hipMemPoolCreate");
  if (mem_pool == NULL || pool_props == NULL ||
      pool_props->allocType != hipMemAllocationTypePinned ||
      pool_props->location.type != hipMemLocationTypeDevice)
    VGPU_HIP_RETURN(hipErrorInvalidValue);
  if (pool_props->handleTypes != hipMemHandleTypeNone)
    VGPU_HIP_RETURN(hipErrorNotSupported);  // no interprocess handles
  uint64_t h = 0;
  VGPU_HIP_TRY(vgpu_pool_create(pool_props->location.id, &h));
  *mem_pool = pool_handle(h);
  return hipSuccess;
}

VGPU_EXPORT hipError_t hipMemPoolDestroy(hipMemPool_t mem_pool) {
  VGPU_HIP_ENTER("hipMemPoolDestroy");
  VGPU_HIP_RETURN_ST(vgpu_pool_destroy(vgpu_hip_h(mem_pool)));
}

VGPU_EXPORT hipError_t hipMemPoolSetAttribute(hipMemPool_t mem_pool,
                                              hipMemPoolAttr attr,
                                              void* value) {
  VGPU_HIP_ENTER("hipMemPoolSetAttribute");
  vgpu_pool_attr a;
  bool is_int = false;
  if (value == NULL || !pool_attribute(attr, &a, &is_int))
    VGPU_HIP_RETURN(hipErrorInvalidValue);
  uint64_t v = is_int ? (uint64_t)(*(int*)value != 0) : *(uint64_t*)value;
  VGPU_HIP_RETURN_ST(vgpu_pool_set_attribute(vgpu_hip_h(mem_pool), a, v));
}

VGPU_EXPORT hipError_t hipMemPoolGetAttribute(hipMemPool_t mem_pool,
                                              hipMemPoolAttr attr,
                                              void* value) {
  VGPU_HIP_ENTER("hipMemPoolGetAttribute");
  vgpu_pool_attr a;
  bool is_int = false;
  if (value == NULL || !pool_attribute(attr, &a, &is_int))
    VGPU_HIP_RETURN(hipErrorInvalidValue);
  uint64_t v = 0;
  VGPU_HIP_TRY(vgpu_pool_get_attribute(vgpu_hip_h(mem_pool), a, &v));
  if (is_int) {
    *(int*)value = (int)v;
  } else {
    *(uint64_t*)value = v;
  }
  return hipSuccess;
}

VGPU_EXPORT hipError_t hipMemPoolTrimTo(hipMemPool_t mem_pool,
                                        size_t min_bytes_to_hold) {
  VGPU_HIP_ENTER("hipMemPoolTrimTo");
  VGPU_HIP_RETURN_ST(vgpu_pool_trim(vgpu_hip_h(mem_pool), min_bytes_to_hold));
}

VGPU_EXPORT hipError_t hipDeviceGetDefaultMemPool(hipMemPool_t* mem_pool,
                                                  int device) {
  VGPU_HIP_ENTER("hipDeviceGetDefaultMemPool");
  if (mem_pool == NULL)
    VGPU_HIP_RETURN(hipErrorInvalidValue);
  uint64_t h = 0;
  VGPU_HIP_TRY(vgpu_pool_default(device, &h));
  *mem_pool = pool_handle(h);
  return hipSuccess;
}

VGPU_EXPORT hipError_t hipDeviceGetMemPool(hipMemPool_t* mem_pool, int device) {
  VGPU_HIP_ENTER("hipDeviceGetMemPool");
  if (mem_pool == NULL)
    VGPU_HIP_RETURN(hipErrorInvalidValue);
  uint64_t h = 0;
  VGPU_HIP_TRY(vgpu_pool_current(device, &h));
  *mem_pool = pool_handle(h);
  return hipSuccess;
}

VGPU_EXPORT hipError_t hipDeviceSetMemPool(int device, hipMemPool_t mem_pool) {
  VGPU_HIP_ENTER("hipDeviceSetMemPool");
  VGPU_HIP_RETURN_ST(vgpu_pool_set_current(device, vgpu_hip_h(mem_pool)));
}

static hipError_t malloc_async(void** dev_ptr, size_t size, uint64_t pool,
                               hipStream_t stream) {
  if (dev_ptr == NULL)
    VGPU_HIP_RETURN(hipErrorInvalidValue);
  int dev = 0;
  VGPU_HIP_TRY(vgpu_hip_stream_device(stream, &dev));
  VGPU_HIP_RETURN_ST(
      vgpu_alloc_async(pool, size, vgpu_hip_h(stream), dev, dev_ptr));
}

VGPU_EXPORT hipError_t hipMallocAsync(void** dev_ptr, size_t size,
                                      hipStream_t stream) {
  VGPU_HIP_ENTER("hipMallocAsync");
  return malloc_async(dev_ptr, size, 0, stream);
}

VGPU_EXPORT hipError_t hipMallocFromPoolAsync(void** dev_ptr, size_t size,
                                              hipMemPool_t mem_pool,
                                              hipStream_t stream) {
  VGPU_HIP_ENTER("hipMallocFromPoolAsync");
  if (mem_pool == NULL)
    VGPU_HIP_RETURN(hipErrorInvalidValue);
  return malloc_async(dev_ptr, size, vgpu_hip_h(mem_pool), stream);
}

VGPU_EXPORT hipError_t hipFreeAsync(void* dev_ptr, hipStream_t stream) {
  VGPU_HIP_ENTER("hipFreeAsync");
  int dev = 0;
  VGPU_HIP_TRY(vgpu_hip_stream_device(stream, &dev));
  VGPU_HIP_RETURN_ST(vgpu_free_async(dev_ptr, vgpu_hip_h(stream), dev));
}
