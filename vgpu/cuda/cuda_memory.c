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
