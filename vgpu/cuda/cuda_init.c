// CUDA facade: load/unload, cuInit, versions, error codes and names.
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_calls_gen.h"
#include "cuda_errors_gen.h"
#include "cuda_facade.h"

static atomic_bool initialized;

static const struct {
  CUresult code;
  const char* text;
} code_texts[] = {
    {CUDA_SUCCESS, "no error"},
    {CUDA_ERROR_INVALID_VALUE, "invalid argument"},
    {CUDA_ERROR_OUT_OF_MEMORY, "out of memory"},
    {CUDA_ERROR_NOT_INITIALIZED, "initialization error"},
    {CUDA_ERROR_DEINITIALIZED, "driver shutting down"},
    {CUDA_ERROR_NO_DEVICE, "no CUDA-capable device is detected"},
    {CUDA_ERROR_INVALID_DEVICE, "invalid device ordinal"},
    {CUDA_ERROR_INVALID_IMAGE, "device kernel image is invalid"},
    {CUDA_ERROR_INVALID_CONTEXT, "invalid device context"},
    {CUDA_ERROR_INVALID_HANDLE, "invalid resource handle"},
    {CUDA_ERROR_NOT_FOUND, "named symbol not found"},
    {CUDA_ERROR_NOT_READY, "device not ready"},
    {CUDA_ERROR_ILLEGAL_ADDRESS, "an illegal memory access was encountered"},
    {CUDA_ERROR_LAUNCH_TIMEOUT, "the launch timed out and was terminated"},
    {CUDA_ERROR_LAUNCH_FAILED, "unspecified launch failure"},
    {CUDA_ERROR_ILLEGAL_STATE,
     "the operation cannot be performed in the "
     "present state"},
    {CUDA_ERROR_NOT_PERMITTED, "operation not permitted"},
    {CUDA_ERROR_NOT_SUPPORTED, "operation not supported"},
    {CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE,
     "the graph update was not "
     "performed because it included "
     "changes which violated "
     "constraints specific to "
     "instantiated graph update"},
    {CUDA_ERROR_UNKNOWN, "unknown error"},
};

CUresult vgpu_cu_result(vgpu_status st) {
  switch (st) {
    case VGPU_OK:
      return CUDA_SUCCESS;
    case VGPU_ERR_INVALID_VALUE:
      return CUDA_ERROR_INVALID_VALUE;
    case VGPU_ERR_OUT_OF_MEMORY:
      return CUDA_ERROR_OUT_OF_MEMORY;
    case VGPU_ERR_NOT_INITIALIZED:
      return CUDA_ERROR_NOT_INITIALIZED;
    case VGPU_ERR_NO_DEVICE:
      return CUDA_ERROR_NO_DEVICE;
    case VGPU_ERR_INVALID_DEVICE:
      return CUDA_ERROR_INVALID_DEVICE;
    case VGPU_ERR_INVALID_CONTEXT:
      return CUDA_ERROR_INVALID_CONTEXT;
    case VGPU_ERR_INVALID_IMAGE:
      return CUDA_ERROR_INVALID_IMAGE;
    case VGPU_ERR_INVALID_HANDLE:
      return CUDA_ERROR_INVALID_HANDLE;
    case VGPU_ERR_NOT_FOUND:
      return CUDA_ERROR_NOT_FOUND;
    case VGPU_ERR_NOT_READY:
      return CUDA_ERROR_NOT_READY;
    case VGPU_ERR_DEVICE_LOST:
      return CUDA_ERROR_LAUNCH_FAILED;
    case VGPU_ERR_NOT_PERMITTED:
      return CUDA_ERROR_NOT_PERMITTED;
    case VGPU_ERR_IN_USE:
      return CUDA_ERROR_ILLEGAL_STATE;
    case VGPU_ERR_NOT_SUPPORTED:
      return CUDA_ERROR_NOT_SUPPORTED;
    case VGPU_ERR_GRAPH_UPDATE:
      return CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
    case VGPU_ERR_TIMEOUT:
      return CUDA_ERROR_LAUNCH_TIMEOUT;
    case VGPU_ERR_FAULT:
    case VGPU_ERR_UNKNOWN:
      break;
  }
  return CUDA_ERROR_UNKNOWN;
}

VGPU_FACADE_DEFINE("cuda", VGPU_CUDA_ERRORS, VGPU_CUDA_CALLS,
                   CUDA_ERROR_LAUNCH_FAILED, CUDA_ERROR_UNKNOWN)

bool vgpu_cu_initialized(void) {
  return atomic_load_explicit(&initialized, memory_order_acquire);
}

VGPU_EXPORT CUresult CUDAAPI cuInit(unsigned int Flags) {
  VGPU_CALL_GUARD(CUDA_ERROR_DEINITIALIZED);
  int fault = 0;
  vgpu_status st = vgpu_api_enter("cuInit", vgpu_cu_fault_device, &fault);
  if (st == VGPU_ERR_FAULT)
    return (CUresult)fault;
  if (st != VGPU_OK)
    return vgpu_cu_result(st);
  if (Flags != 0)
    return CUDA_ERROR_INVALID_VALUE;
  if (vgpu_device_count() == 0)
    return CUDA_ERROR_NO_DEVICE;
  atomic_store_explicit(&initialized, true, memory_order_release);
  return CUDA_SUCCESS;
}

VGPU_EXPORT CUresult CUDAAPI cuDriverGetVersion(int* driverVersion) {
  VGPU_CALL_GUARD(CUDA_ERROR_DEINITIALIZED);
  int fault = 0;
  vgpu_status st =
      vgpu_api_enter("cuDriverGetVersion", vgpu_cu_fault_device, &fault);
  if (st == VGPU_ERR_FAULT)
    return (CUresult)fault;
  if (st != VGPU_OK)
    return vgpu_cu_result(st);
  if (driverVersion == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  *driverVersion = CUDA_VERSION;
  return CUDA_SUCCESS;
}

// Pure lookups: allowed anywhere, even inside host functions.
VGPU_EXPORT CUresult CUDAAPI cuGetErrorName(CUresult error, const char** pStr) {
  if (pStr == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  *pStr = vgpu_name_of_code(vgpu_facade_self.codes, vgpu_facade_self.code_count,
                            (int)error);
  return *pStr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

VGPU_EXPORT CUresult CUDAAPI cuGetErrorString(CUresult error,
                                              const char** pStr) {
  if (pStr == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  for (size_t i = 0; i < sizeof(code_texts) / sizeof(code_texts[0]); ++i) {
    if (code_texts[i].code == error) {
      *pStr = code_texts[i].text;
      return CUDA_SUCCESS;
    }
  }
  const char* name = NULL;
  if (cuGetErrorName(error, &name) != CUDA_SUCCESS) {
    *pStr = NULL;
    return CUDA_ERROR_INVALID_VALUE;
  }
  *pStr = name;  // no text of its own: the name says it
  return CUDA_SUCCESS;
}
