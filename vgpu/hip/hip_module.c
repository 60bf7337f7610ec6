// HIP facade: modules and kernel launch.
#include <string.h>

#include "hip_facade.h"

VGPU_EXPORT hipError_t hipModuleLoadData(hipModule_t* module,
                                         const void* image) {
  VGPU_HIP_ENTER("hipModuleLoadData");
  if (module == NULL || image == NULL)
    VGPU_HIP_RETURN(hipErrorInvalidValue);
  uint64_t h = 0;
  VGPU_HIP_TRY(vgpu_module_load_image(vgpu_hip_device(), image, &h));
  *module = (hipModule_t)(uintptr_t)h;
  return hipSuccess;
}

VGPU_EXPORT hipError_t hipModuleLoad(hipModule_t* module, const char* fname) {
  VGPU_HIP_ENTER("hipModuleLoad");
  if (module == NULL || fname == NULL)
    VGPU_HIP_RETURN(hipErrorInvalidValue);
  uint64_t h = 0;
  VGPU_HIP_TRY(vgpu_module_load_file(vgpu_hip_device(), fname, &h));
  *module = (hipModule_t)(uintptr_t)h;
  return hipSuccess;
}

VGPU_EXPORT hipError_t hipModuleUnload(hipModule_t module) {
  VGPU_HIP_ENTER("hipModuleUnload");
  VGPU_HIP_RETURN_ST(vgpu_module_unload(vgpu_hip_h(module)));
}

VGPU_EXPORT hipError_t hipModuleGetFunction(hipFunction_t* function,
                                            hipModule_t module,
                                            const char* kname) {
  VGPU_HIP_ENTER("hipModuleGetFunction");
  if (function == NULL || kname == NULL)
    VGPU_HIP_RETURN(hipErrorInvalidValue);
  uint64_t h = 0;
  VGPU_HIP_TRY(vgpu_module_function(vgpu_hip_h(module), kname, &h));
  *function = (hipFunction_t)(uintptr_t)h;
  return hipSuccess;
}

bool vgpu_hip_parse_extra(void** extra, vgpu_launch_desc* d) {
  for (void** e = extra; *e != HIP_LAUNCH_PARAM_END; e += 2) {
    if (e[0] == HIP_LAUNCH_PARAM_BUFFER_POINTER) {
      d->buffer = e[1];
    } else if (e[0] == HIP_LAUNCH_PARAM_BUFFER_SIZE && e[1] != NULL) {
      memcpy(&d->buffer_size, e[1], sizeof(size_t));
    } else {
      return false;
    }
  }
  return true;
}

VGPU_EXPORT hipError_t hipModuleLaunchKernel(
    hipFunction_t f, unsigned int gridDimX, unsigned int gridDimY,
    unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
    unsigned int blockDimZ, unsigned int sharedMemBytes, hipStream_t stream,
    void** kernelParams, void** extra) {
  VGPU_HIP_ENTER("hipModuleLaunchKernel");
  int dev = 0;
  VGPU_HIP_TRY(vgpu_hip_stream_device(stream, &dev));
  vgpu_launch_desc d;
  memset(&d, 0, sizeof(d));
  d.function = vgpu_hip_h(f);
  d.grid = (vgpu_dim3){gridDimX, gridDimY, gridDimZ};
  d.block = (vgpu_dim3){blockDimX, blockDimY, blockDimZ};
  d.shared_bytes = sharedMemBytes;
  d.params = kernelParams;
  if (kernelParams != NULL && extra != NULL)
    VGPU_HIP_RETURN(hipErrorInvalidValue);
  if (extra != NULL && !vgpu_hip_parse_extra(extra, &d))
    VGPU_HIP_RETURN(hipErrorInvalidValue);
  VGPU_HIP_RETURN_ST(vgpu_kernel_launch(vgpu_hip_h(stream), dev, &d));
}
