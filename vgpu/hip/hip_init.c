// HIP facade: load/unload, init, versions, error codes, names, last error.
#include <stdlib.h>
#include <string.h>

#include "hip_calls_gen.h"
#include "hip_errors_gen.h"
#include "hip_facade.h"

static _Thread_local hipError_t tls_last_error;

static const struct {
  hipError_t code;
  const char* text;
} code_texts[] = {
    {hipSuccess, "no error"},
    {hipErrorInvalidValue, "invalid argument"},
    {hipErrorOutOfMemory, "out of memory"},
    {hipErrorNotInitialized, "initialization error"},
    {hipErrorNoDevice, "no ROCm-capable device is detected"},
    {hipErrorInvalidDevice, "invalid device ordinal"},
    {hipErrorInvalidImage, "device kernel image is invalid"},
    {hipErrorInvalidContext, "invalid device context"},
    {hipErrorInvalidHandle, "invalid resource handle"},
    {hipErrorNotFound, "named symbol not found"},
    {hipErrorNotReady, "device not ready"},
    {hipErrorInvalidMemcpyDirection, "invalid copy direction for memcpy"},
    {hipErrorLaunchFailure, "unspecified launch failure"},
    {hipErrorLaunchTimeOut, "the launch timed out and was terminated"},
    {hipErrorIllegalState,
     "the operation cannot be performed in the "
     "present state"},
    {hipErrorNotSupported, "operation not supported"},
    {hipErrorGraphExecUpdateFailure, "the graph update was not performed"},
    {hipErrorUnknown, "unknown error"},
};

hipError_t vgpu_hip_result(vgpu_status st) {
  switch (st) {
    case VGPU_OK:
      return hipSuccess;
    case VGPU_ERR_INVALID_VALUE:
      return hipErrorInvalidValue;
    case VGPU_ERR_OUT_OF_MEMORY:
      return hipErrorOutOfMemory;
    case VGPU_ERR_NOT_INITIALIZED:
      return hipErrorNotInitialized;
    case VGPU_ERR_NO_DEVICE:
      return hipErrorNoDevice;
    case VGPU_ERR_INVALID_DEVICE:
      return hipErrorInvalidDevice;
    case VGPU_ERR_INVALID_CONTEXT:
      return hipErrorInvalidContext;
    case VGPU_ERR_INVALID_IMAGE:
      return hipErrorInvalidImage;
    case VGPU_ERR_INVALID_HANDLE:
      return hipErrorInvalidHandle;
    case VGPU_ERR_NOT_FOUND:
      return hipErrorNotFound;
    case VGPU_ERR_NOT_READY:
      return hipErrorNotReady;
    case VGPU_ERR_DEVICE_LOST:
      return hipErrorLaunchFailure;
    case VGPU_ERR_NOT_PERMITTED:
      return hipErrorNotSupported;
    case VGPU_ERR_IN_USE:
      return hipErrorIllegalState;
    case VGPU_ERR_NOT_SUPPORTED:
      return hipErrorNotSupported;
    case VGPU_ERR_GRAPH_UPDATE:
      return hipErrorGraphExecUpdateFailure;
    case VGPU_ERR_TIMEOUT:
      return hipErrorLaunchTimeOut;
    case VGPU_ERR_FAULT:
    case VGPU_ERR_UNKNOWN:
      break;
  }
  return hipErrorUnknown;
}

hipError_t vgpu_hip_record(hipError_t e) {
  if (e != hipSuccess && e != hipErrorNotReady)
    tls_last_error = e;
  return e;
}

VGPU_FACADE_DEFINE("hip", VGPU_HIP_ERRORS, VGPU_HIP_CALLS,
                   hipErrorLaunchFailure, hipErrorUnknown)

VGPU_EXPORT hipError_t hipInit(unsigned int flags) {
  VGPU_HIP_ENTER("hipInit");
  if (flags != 0)
    VGPU_HIP_RETURN(hipErrorInvalidValue);
  if (vgpu_device_count() == 0)
    VGPU_HIP_RETURN(hipErrorNoDevice);
  return hipSuccess;
}

VGPU_EXPORT hipError_t hipDriverGetVersion(int* driverVersion) {
  VGPU_HIP_ENTER("hipDriverGetVersion");
  if (driverVersion == NULL)
    VGPU_HIP_RETURN(hipErrorInvalidValue);
  *driverVersion = HIP_VERSION;
  return hipSuccess;
}

VGPU_EXPORT hipError_t hipRuntimeGetVersion(int* runtimeVersion) {
  VGPU_HIP_ENTER("hipRuntimeGetVersion");
  if (runtimeVersion == NULL)
    VGPU_HIP_RETURN(hipErrorInvalidValue);
  *runtimeVersion = HIP_VERSION;
  return hipSuccess;
}

// Pure lookups: allowed anywhere, even inside host functions.
VGPU_EXPORT const char* hipGetErrorName(hipError_t hip_error) {
  const char* name = vgpu_name_of_code(
      vgpu_facade_self.codes, vgpu_facade_self.code_count, (int)hip_error);
  return name ? name : "hipErrorUnknown";
}

VGPU_EXPORT const char* hipGetErrorString(hipError_t hipError) {
  for (size_t i = 0; i < sizeof(code_texts) / sizeof(code_texts[0]); ++i) {
    if (code_texts[i].code == hipError)
      return code_texts[i].text;
  }
  return hipGetErrorName(hipError);
}

VGPU_EXPORT hipError_t hipGetLastError(void) {
  hipError_t e = tls_last_error;
  tls_last_error = hipSuccess;
  return e;
}

VGPU_EXPORT hipError_t hipPeekAtLastError(void) {
  return tls_last_error;
}
