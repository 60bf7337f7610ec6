// HIP facade: devices, attributes, properties, the current device.
#include <stdio.h>
#include <string.h>

#include "hip_facade.h"

static _Thread_local int tls_device;

int vgpu_hip_device(void) {
  return tls_device;
}

vgpu_status vgpu_hip_stream_device(hipStream_t stream, int* ordinal) {
  uint64_t h = vgpu_hip_h(stream);
  if (VGPU_STREAM_IS_DEFAULT(h)) {
    // Lost or not: each call checks the loss itself (a synchronize drains
    // first).
    *ordinal = tls_device;
    vgpu_status st = vgpu_device_check(tls_device);
    return st == VGPU_ERR_DEVICE_LOST ? VGPU_OK : st;
  }
  return vgpu_stream_device(h, 0, ordinal);
}

// A lost device still answers the queries of its fixed properties.
static hipError_t check_property_device(int dev) {
  return vgpu_hip_result(vgpu_device_check_ordinal(dev));
}

VGPU_EXPORT hipError_t hipGetDeviceCount(int* count) {
  VGPU_HIP_ENTER("hipGetDeviceCount");
  if (count == NULL)
    VGPU_HIP_RETURN(hipErrorInvalidValue);
  *count = vgpu_device_count();
  if (*count == 0)
    VGPU_HIP_RETURN(hipErrorNoDevice);
  return hipSuccess;
}

VGPU_EXPORT hipError_t hipSetDevice(int deviceId) {
  VGPU_HIP_ENTER("hipSetDevice");
  if (deviceId < 0 || deviceId >= vgpu_device_count())
    VGPU_HIP_RETURN(hipErrorInvalidDevice);
  tls_device = deviceId;
  return hipSuccess;
}

VGPU_EXPORT hipError_t hipGetDevice(int* deviceId) {
  VGPU_HIP_ENTER("hipGetDevice");
  if (deviceId == NULL)
    VGPU_HIP_RETURN(hipErrorInvalidValue);
  *deviceId = tls_device;
  return hipSuccess;
}

VGPU_EXPORT hipError_t hipDeviceGet(hipDevice_t* device, int ordinal) {
  VGPU_HIP_ENTER("hipDeviceGet");
  if (device == NULL)
    VGPU_HIP_RETURN(hipErrorInvalidValue);
  if (ordinal < 0 || ordinal >= vgpu_device_count())
    VGPU_HIP_RETURN(hipErrorInvalidDevice);
  *device = ordinal;
  return hipSuccess;
}

VGPU_EXPORT hipError_t hipDeviceGetName(char* name, int len,
                                        hipDevice_t device) {
  VGPU_HIP_ENTER("hipDeviceGetName");
  if (name == NULL || len <= 0)
    VGPU_HIP_RETURN(hipErrorInvalidValue);
  hipError_t r = check_property_device(device);
  if (r != hipSuccess)
    VGPU_HIP_RETURN(r);
  snprintf(name, (size_t)len, "%s", vgpu_device_info_get(device)->name);
  return hipSuccess;
}

VGPU_EXPORT hipError_t hipDeviceTotalMem(size_t* bytes, hipDevice_t device) {
  VGPU_HIP_ENTER("hipDeviceTotalMem");
  if (bytes == NULL)
    VGPU_HIP_RETURN(hipErrorInvalidValue);
  hipError_t r = check_property_device(device);
  if (r != hipSuccess)
    VGPU_HIP_RETURN(r);
  *bytes = vgpu_device_info_get(device)->total_memory;
  return hipSuccess;
}

VGPU_EXPORT hipError_t hipDeviceComputeCapability(int* major, int* minor,
                                                  hipDevice_t device) {
  VGPU_HIP_ENTER("hipDeviceComputeCapability");
  if (major == NULL || minor == NULL)
    VGPU_HIP_RETURN(hipErrorInvalidValue);
  hipError_t r = check_property_device(device);
  if (r != hipSuccess)
    VGPU_HIP_RETURN(r);
  *major = vgpu_device_info_get(device)->compute_major;
  *minor = vgpu_device_info_get(device)->compute_minor;
  return hipSuccess;
}

VGPU_EXPORT hipError_t hipDeviceGetUuid(hipUUID* uuid, hipDevice_t device) {
  VGPU_HIP_ENTER("hipDeviceGetUuid");
  if (uuid == NULL)
    VGPU_HIP_RETURN(hipErrorInvalidValue);
  uint8_t bytes[VGPU_UUID_SIZE];
  VGPU_HIP_TRY(vgpu_device_uuid(device, bytes));
  _Static_assert(sizeof(uuid->bytes) == VGPU_UUID_SIZE, "16 bytes");
  memcpy(uuid->bytes, bytes, sizeof(uuid->bytes));
  return hipSuccess;
}

static bool attribute_value(const vgpu_device_info* in, hipDeviceAttribute_t a,
                            int* v) {
  switch (a) {
    case hipDeviceAttributeMaxThreadsPerBlock:
      *v = in->max_threads_per_block;
      return true;
    case hipDeviceAttributeMaxBlockDimX:
      *v = in->max_block_dim[0];
      return true;
    case hipDeviceAttributeMaxBlockDimY:
      *v = in->max_block_dim[1];
      return true;
    case hipDeviceAttributeMaxBlockDimZ:
      *v = in->max_block_dim[2];
      return true;
    case hipDeviceAttributeMaxGridDimX:
      *v = in->max_grid_dim[0];
      return true;
    case hipDeviceAttributeMaxGridDimY:
      *v = in->max_grid_dim[1];
      return true;
    case hipDeviceAttributeMaxGridDimZ:
      *v = in->max_grid_dim[2];
      return true;
    case hipDeviceAttributeMaxSharedMemoryPerBlock:
    case hipDeviceAttributeSharedMemPerBlockOptin:
      *v = in->shared_memory_per_block;
      return true;
    case hipDeviceAttributeSharedMemPerMultiprocessor:
    case hipDeviceAttributeMaxSharedMemoryPerMultiprocessor:
      *v = 2 * in->shared_memory_per_block;
      return true;
    case hipDeviceAttributeTotalConstantMemory:
      *v = in->total_constant_memory;
      return true;
    case hipDeviceAttributeWarpSize:
      *v = in->warp_size;
      return true;
    case hipDeviceAttributeMaxRegistersPerBlock:
    case hipDeviceAttributeMaxRegistersPerMultiprocessor:
      *v = in->registers_per_block;
      return true;
    case hipDeviceAttributeClockRate:
    case hipDeviceAttributeMemoryClockRate:
      *v = in->clock_rate_khz;
      return true;
    case hipDeviceAttributeMultiprocessorCount:
    case hipDeviceAttributePhysicalMultiProcessorCount:
      *v = in->multiprocessor_count;
      return true;
    case hipDeviceAttributeComputeCapabilityMajor:
      *v = in->compute_major;
      return true;
    case hipDeviceAttributeComputeCapabilityMinor:
      *v = in->compute_minor;
      return true;
    case hipDeviceAttributePciBusId:
      *v = in->pci_bus_id;
      return true;
    case hipDeviceAttributeL2CacheSize:
      *v = in->l2_cache_size;
      return true;
    case hipDeviceAttributeMemoryBusWidth:
      *v = 256;
      return true;
    case hipDeviceAttributeMaxThreadsPerMultiProcessor:
      *v = 2 * in->max_threads_per_block;
      return true;
    case hipDeviceAttributeUnifiedAddressing:
    case hipDeviceAttributeConcurrentKernels:
    case hipDeviceAttributeCanMapHostMemory:
    case hipDeviceAttributeDeviceOverlap:
    case hipDeviceAttributeStreamPrioritiesSupported:
    case hipDeviceAttributeMemoryPoolsSupported:
      *v = 1;
      return true;
    case hipDeviceAttributeAsyncEngineCount:
      *v = 2;
      return true;
    default:
      *v = 0;  // a real attribute the virtual GPU does not have
      return a >= hipDeviceAttributeCudaCompatibleBegin &&
             a < hipDeviceAttributeAmdSpecificEnd;
  }
}

VGPU_EXPORT hipError_t hipDeviceGetAttribute(int* pi, hipDeviceAttribute_t attr,
                                             int deviceId) {
  VGPU_HIP_ENTER("hipDeviceGetAttribute");
  if (pi == NULL)
    VGPU_HIP_RETURN(hipErrorInvalidValue);
  hipError_t r = check_property_device(deviceId);
  if (r != hipSuccess)
    VGPU_HIP_RETURN(r);
  int v = 0;
  if (!attribute_value(vgpu_device_info_get(deviceId), attr, &v))
    VGPU_HIP_RETURN(hipErrorInvalidValue);
  *pi = v;
  return hipSuccess;
}

VGPU_EXPORT hipError_t hipGetDeviceProperties(hipDeviceProp_t* prop,
                                              int deviceId) {
  VGPU_HIP_ENTER("hipGetDeviceProperties");
  if (prop == NULL)
    VGPU_HIP_RETURN(hipErrorInvalidValue);
  hipError_t r = check_property_device(deviceId);
  if (r != hipSuccess)
    VGPU_HIP_RETURN(r);
  const vgpu_device_info* in = vgpu_device_info_get(deviceId);
  memset(prop, 0, sizeof(*prop));
  snprintf(prop->name, sizeof(prop->name), "%s", in->name);
  prop->totalGlobalMem = in->total_memory;
  prop->sharedMemPerBlock = (size_t)in->shared_memory_per_block;
  prop->regsPerBlock = in->registers_per_block;
  prop->warpSize = in->warp_size;
  prop->maxThreadsPerBlock = in->max_threads_per_block;
  for (int i = 0; i < 3; ++i) {
    prop->maxThreadsDim[i] = in->max_block_dim[i];
    prop->maxGridSize[i] = in->max_grid_dim[i];
  }
  prop->clockRate = in->clock_rate_khz;
  prop->memoryClockRate = in->clock_rate_khz;
  prop->memoryBusWidth = 256;
  prop->totalConstMem = (size_t)in->total_constant_memory;
  prop->major = in->compute_major;
  prop->minor = in->compute_minor;
  prop->multiProcessorCount = in->multiprocessor_count;
  prop->l2CacheSize = in->l2_cache_size;
  prop->maxThreadsPerMultiProcessor = 2 * in->max_threads_per_block;
  prop->pciBusID = in->pci_bus_id;
  prop->concurrentKernels = 1;
  prop->canMapHostMemory = 1;
  snprintf(prop->gcnArchName, sizeof(prop->gcnArchName), "vgpu");
  return hipSuccess;
}

VGPU_EXPORT hipError_t hipDeviceSynchronize(void) {
  VGPU_HIP_ENTER_SYNC("hipDeviceSynchronize", fault);
  vgpu_status st = vgpu_device_synchronize(tls_device);
  if (fault)
    VGPU_HIP_RETURN((hipError_t)fault);
  VGPU_HIP_RETURN_ST(st);
}

VGPU_EXPORT hipError_t hipMemGetInfo(size_t* free, size_t* total) {
  VGPU_HIP_ENTER("hipMemGetInfo");
  if (free == NULL || total == NULL)
    VGPU_HIP_RETURN(hipErrorInvalidValue);
  VGPU_HIP_RETURN_ST(vgpu_device_memory_info(tls_device, free, total));
}
