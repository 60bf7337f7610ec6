// CUDA facade: modules and kernel launch.
#include <string.h>

#include "cuda_facade.h"

VGPU_EXPORT CUresult CUDAAPI cuModuleLoadData(CUmodule* module,
                                              const void* image) {
  VGPU_CU_ENTER("cuModuleLoadData");
  if (module == NULL || image == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  int dev = 0;
  VGPU_CU_TRY(vgpu_cu_current_device(&dev));
  uint64_t h = 0;
  VGPU_CU_TRY(vgpu_module_load_image(dev, image, &h));
  *module = (CUmodule)(uintptr_t)h;
  return CUDA_SUCCESS;
}

VGPU_EXPORT CUresult CUDAAPI cuModuleLoad(CUmodule* module, const char* fname) {
  VGPU_CU_ENTER("cuModuleLoad");
  if (module == NULL || fname == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  int dev = 0;
  VGPU_CU_TRY(vgpu_cu_current_device(&dev));
  uint64_t h = 0;
  VGPU_CU_TRY(vgpu_module_load_file(dev, fname, &h));
  *module = (CUmodule)(uintptr_t)h;
  return CUDA_SUCCESS;
}

VGPU_EXPORT CUresult CUDAAPI cuModuleUnload(CUmodule hmod) {
  VGPU_CU_ENTER("cuModuleUnload");
  return vgpu_cu_result(vgpu_module_unload(vgpu_cu_h(hmod)));
}

VGPU_EXPORT CUresult CUDAAPI cuModuleGetFunction(CUfunction* hfunc,
                                                 CUmodule hmod,
                                                 const char* name) {
  VGPU_CU_ENTER("cuModuleGetFunction");
  if (hfunc == NULL || name == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  uint64_t h = 0;
  VGPU_CU_TRY(vgpu_module_function(vgpu_cu_h(hmod), name, &h));
  *hfunc = (CUfunction)(uintptr_t)h;
  return CUDA_SUCCESS;
}

VGPU_EXPORT CUresult CUDAAPI cuFuncGetParamInfo(CUfunction func,
                                                size_t paramIndex,
                                                size_t* paramOffset,
                                                size_t* paramSize) {
  VGPU_CU_ENTER("cuFuncGetParamInfo");
  if (paramOffset == NULL || paramSize == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  VGPU_CU_TRY(
      vgpu_function_param(vgpu_cu_h(func), paramIndex, paramOffset, paramSize));
  return CUDA_SUCCESS;
}

VGPU_EXPORT CUresult CUDAAPI cuLaunchKernel(
    CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
    unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
    unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
    void** kernelParams, void** extra) {
  VGPU_CU_ENTER("cuLaunchKernel");
  int dev = 0;
  VGPU_CU_TRY(vgpu_cu_stream_device(hStream, &dev));
  vgpu_launch_desc d;
  memset(&d, 0, sizeof(d));
  d.function = vgpu_cu_h(f);
  d.grid = (vgpu_dim3){gridDimX, gridDimY, gridDimZ};
  d.block = (vgpu_dim3){blockDimX, blockDimY, blockDimZ};
  d.shared_bytes = sharedMemBytes;
  d.params = kernelParams;
  if (kernelParams != NULL && extra != NULL)
    return CUDA_ERROR_INVALID_VALUE;
  if (extra != NULL) {
    for (void** e = extra; *e != CU_LAUNCH_PARAM_END; e += 2) {
      if (e[0] == CU_LAUNCH_PARAM_BUFFER_POINTER) {
        d.buffer = e[1];
      } else if (e[0] == CU_LAUNCH_PARAM_BUFFER_SIZE && e[1] != NULL) {
        memcpy(&d.buffer_size, e[1], sizeof(size_t));
      } else {
        return CUDA_ERROR_INVALID_VALUE;
      }
    }
  }
  return vgpu_cu_result(vgpu_kernel_launch(vgpu_cu_h(hStream), dev, &d));
}
