// Copyright 2026 The HAL Authors.
//
// The CUDA adapter's private declarations, and how each primitive of
// vendor_ops_impl.h is spelled in the CUDA Driver API. hip_vendor.h is the
// same list for HIP: read side by side, the two are the differences table
// of docs/adapters.md.

#ifndef DRIVERS_GPU_ADAPTER_CUDA_VENDOR_H_
#define DRIVERS_GPU_ADAPTER_CUDA_VENDOR_H_

#include <cuda.h>

#include "adapter_impl.h"
#include "cuda_symbols.h"

typedef struct gpu_cuda_symbols_t {
  GPU_CUDA_SYMBOLS(GPU_ADAPTER_SYMBOL_MEMBER)
} gpu_cuda_symbols_t;

typedef struct gpu_cuda_adapter_t {
  gpu_adapter_base_t base;
  gpu_cuda_symbols_t syms;
} gpu_cuda_adapter_t;
static_assert(offsetof(gpu_cuda_adapter_t, base) == 0,
              "the base must be at offset 0");

//===--- vendor_ops_impl.h parameters ---===//

#define GPU_VX(name) gpu_cuda_##name
#define GPU_V_ADAPTER_T gpu_cuda_adapter_t
#define GPU_V_SYMBOLS_T gpu_cuda_symbols_t
#define GPU_V_SYMBOLS(X) GPU_CUDA_SYMBOLS(X)
#define GPU_V_ERRORS(X) GPU_CUDA_ERRORS(X)
#define GPU_V_VENDOR GPU_ADAPTER_VENDOR_CUDA
#define GPU_V_NAME_STRING "CUDA"
#define GPU_V_LIBRARY_ENV "HAL_CUDA_LIBRARY"
#define GPU_V_LIBRARIES "libcuda.so.1"
#define GPU_V_HEADER_VERSION CUDA_VERSION
#define GPU_V_LOOKUP gpu_cuda_lookup
#define GPU_V_KEEP_LOADED false
#define GPU_V_HAS_RUNTIME_VERSION 0

#define GPU_V_RESULT_T CUresult
#define GPU_V_DEVICE_T CUdevice
#define GPU_V_DEVICE_PTR_T CUdeviceptr
#define GPU_V_STREAM_T CUstream
#define GPU_V_EVENT_T CUevent
#define GPU_V_GRAPH_T CUgraph
#define GPU_V_GRAPH_NODE_T CUgraphNode
#define GPU_V_GRAPH_EXEC_T CUgraphExec
#define GPU_V_MODULE_T CUmodule
#define GPU_V_FUNCTION_T CUfunction
#define GPU_V_HOST_NODE_PARAMS_T CUDA_HOST_NODE_PARAMS
#define GPU_V_MEMSET_NODE_PARAMS_T CUDA_MEMSET_NODE_PARAMS
#define GPU_V_DEVICE_ATTRIBUTE_T CUdevice_attribute

#define GPU_V_NATIVE_PTR(address) ((CUdeviceptr)(address))
#define GPU_V_ADDRESS(native_ptr) ((gpu_device_ptr_t)(native_ptr))

#define GPU_V_IS_NO_DEVICE(result) ((result) == CUDA_ERROR_NO_DEVICE)
#define GPU_V_NOT_READY CUDA_ERROR_NOT_READY
#define GPU_V_GRAPH_EXEC_UPDATE_REFUSED CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE

// Error names and descriptions come through an out-parameter.
#define GPU_V_ERROR_NAME_FN cuGetErrorName
#define GPU_V_ERROR_STRING_FN cuGetErrorString
static inline const char* gpu_cuda_error_text(CUresult (*fn)(CUresult error,
                                                             const char** text),
                                              int32_t result) {
  const char* text = NULL;
  return fn((CUresult)result, &text) == CUDA_SUCCESS ? text : NULL;
}
#define GPU_V_ERROR_TEXT(fn, result) gpu_cuda_error_text(fn, result)

#define GPU_V_ATTRIBUTE_MULTIPROCESSOR_COUNT \
  CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
#define GPU_V_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR \
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
#define GPU_V_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR \
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR
#define GPU_V_ATTRIBUTE_MAX_THREADS_PER_BLOCK \
  CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK
#define GPU_V_ATTRIBUTE_CONCURRENT_KERNELS \
  CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS
#define GPU_V_ATTRIBUTE_CAN_MAP_HOST_MEMORY \
  CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY
#define GPU_V_ATTRIBUTE_PCI_BUS_ID CU_DEVICE_ATTRIBUTE_PCI_BUS_ID

// Call spellings: `entry point, (arguments)`.
// clang-format off
#define GPU_V_INIT()                        cuInit, (0)
#define GPU_V_DRIVER_VERSION(out)           cuDriverGetVersion, (out)
#define GPU_V_DEVICE_COUNT(out)             cuDeviceGetCount, (out)
#define GPU_V_DEVICE_GET(out, ordinal)      cuDeviceGet, (out, ordinal)
#define GPU_V_DEVICE_NAME(buf, len, dev)    cuDeviceGetName, (buf, len, dev)
#define GPU_V_DEVICE_TOTAL_MEM(out, dev)    cuDeviceTotalMem, (out, dev)
#define GPU_V_DEVICE_ATTRIBUTE(out, a, dev) cuDeviceGetAttribute, (out, a, dev)
#define GPU_V_MALLOC(out, size)             cuMemAlloc, (out, size)
#define GPU_V_FREE(ptr)                     cuMemFree, (ptr)
#define GPU_V_HOST_MALLOC(out, size)        cuMemAllocHost, (out, size)
#define GPU_V_HOST_FREE(ptr)                cuMemFreeHost, (ptr)
#define GPU_V_MEMCPY(dst, src, n)           cuMemcpy, (dst, src, n)
#define GPU_V_MEMCPY_ASYNC(dst, src, n, s)  cuMemcpyAsync, (dst, src, n, s)
#define GPU_V_MEMSET_D8_ASYNC(dst, v, n, s) \
  cuMemsetD8Async, (dst, (unsigned char)(v), n, s)
#define GPU_V_MEMSET_D16_ASYNC(dst, v, n, s) \
  cuMemsetD16Async, (dst, (unsigned short)(v), n, s)
#define GPU_V_MEMSET_D32_ASYNC(dst, v, n, s) \
  cuMemsetD32Async, (dst, (unsigned int)(v), n, s)
#define GPU_V_STREAM_CREATE(out)  cuStreamCreate, (out, CU_STREAM_NON_BLOCKING)
#define GPU_V_STREAM_DESTROY(s)             cuStreamDestroy, (s)
#define GPU_V_STREAM_SYNCHRONIZE(s)         cuStreamSynchronize, (s)
#define GPU_V_STREAM_QUERY(s)               cuStreamQuery, (s)
#define GPU_V_STREAM_WAIT_EVENT(s, e)       cuStreamWaitEvent, (s, e, 0)
#define GPU_V_EVENT_CREATE(out)   cuEventCreate, (out, CU_EVENT_DISABLE_TIMING)
#define GPU_V_EVENT_DESTROY(e)              cuEventDestroy, (e)
#define GPU_V_EVENT_RECORD(e, s)            cuEventRecord, (e, s)
#define GPU_V_EVENT_QUERY(e)                cuEventQuery, (e)
#define GPU_V_EVENT_SYNCHRONIZE(e)          cuEventSynchronize, (e)
#define GPU_V_GRAPH_CREATE(out)             cuGraphCreate, (out, 0)
#define GPU_V_GRAPH_DESTROY(g)              cuGraphDestroy, (g)
#define GPU_V_GRAPH_ADD_EMPTY_NODE(out, g, deps, n) \
  cuGraphAddEmptyNode, (out, g, deps, n)
#define GPU_V_GRAPH_ADD_HOST_NODE(out, g, deps, n, params) \
  cuGraphAddHostNode, (out, g, deps, n, params)
#define GPU_V_GRAPH_INSTANTIATE(out, g)     cuGraphInstantiate, (out, g, 0)
#define GPU_V_GRAPH_EXEC_DESTROY(e)         cuGraphExecDestroy, (e)
#define GPU_V_GRAPH_LAUNCH(e, s)            cuGraphLaunch, (e, s)
#define GPU_V_MODULE_LOAD_DATA(out, image)  cuModuleLoadData, (out, image)
#define GPU_V_MODULE_UNLOAD(m)              cuModuleUnload, (m)
#define GPU_V_MODULE_GET_FUNCTION(out, m, name) \
  cuModuleGetFunction, (out, m, name)
#define GPU_V_LAUNCH_HOST_FUNC(s, fn, data) cuLaunchHostFunc, (s, fn, data)
#define GPU_V_STREAM_ADD_CALLBACK(s, callback, data) \
  cuStreamAddCallback, (s, callback, data, 0)
#define GPU_V_GRAPH_ADD_MEMSET_NODE(out, g, deps, n, params, context) \
  cuGraphAddMemsetNode, (out, g, deps, n, params, context)
#define GPU_V_GRAPH_EXEC_UPDATE(e, g) \
  cuGraphExecUpdate, (e, g, &(CUgraphExecUpdateResultInfo){.errorNode = NULL})
#define GPU_V_LAUNCH_KERNEL(f, gx, gy, gz, bx, by, bz, shared, s, args) \
  cuLaunchKernel, (f, gx, gy, gz, bx, by, bz, shared, s, args, NULL)
// clang-format on

// Memset and memcpy graph nodes name their context: the current one.
#define GPU_V_GRAPH_CONTEXT_T CUcontext
static inline hal_status_t gpu_cuda_graph_context(gpu_adapter_t* adapter,
                                                  CUcontext* out_context) {
  gpu_cuda_adapter_t* cuda = (gpu_cuda_adapter_t*)adapter;
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
#define GPU_V_GRAPH_CONTEXT(adapter, out) gpu_cuda_graph_context(adapter, out)

// How each CUDA error maps (adapter_impl.h, GPU_ADAPTER_ERROR).
// clang-format off
#define GPU_CUDA_ERRORS(X)                                                     \
  X(CUDA_ERROR_INVALID_VALUE, INVALID_ARGUMENT)                                \
  X(CUDA_ERROR_OUT_OF_MEMORY, RESOURCE_EXHAUSTED)                              \
  X(CUDA_ERROR_NOT_INITIALIZED, FAILED_PRECONDITION)                           \
  X(CUDA_ERROR_DEINITIALIZED, DEVICE_LOST)                                     \
  X(CUDA_ERROR_STUB_LIBRARY, UNAVAILABLE)                                      \
  X(CUDA_ERROR_DEVICE_UNAVAILABLE, UNAVAILABLE)                                \
  X(CUDA_ERROR_NO_DEVICE, NOT_FOUND)                                           \
  X(CUDA_ERROR_INVALID_DEVICE, INVALID_ARGUMENT)                               \
  X(CUDA_ERROR_DEVICE_NOT_LICENSED, PERMISSION_DENIED)                         \
  X(CUDA_ERROR_INVALID_IMAGE, INVALID_ARGUMENT)                                \
  X(CUDA_ERROR_INVALID_CONTEXT, FAILED_PRECONDITION)                           \
  X(CUDA_ERROR_NO_BINARY_FOR_GPU, FAILED_PRECONDITION)                         \
  X(CUDA_ERROR_ECC_UNCORRECTABLE, DEVICE_LOST)                                 \
  X(CUDA_ERROR_NVLINK_UNCORRECTABLE, DEVICE_LOST)                              \
  X(CUDA_ERROR_INVALID_PTX, INVALID_ARGUMENT)                                  \
  X(CUDA_ERROR_INVALID_SOURCE, INVALID_ARGUMENT)                               \
  X(CUDA_ERROR_FILE_NOT_FOUND, NOT_FOUND)                                      \
  X(CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND, NOT_FOUND)                      \
  X(CUDA_ERROR_SHARED_OBJECT_INIT_FAILED, INTERNAL)                            \
  X(CUDA_ERROR_OPERATING_SYSTEM, INTERNAL)                                     \
  X(CUDA_ERROR_INVALID_HANDLE, INVALID_ARGUMENT)                               \
  X(CUDA_ERROR_ILLEGAL_STATE, FAILED_PRECONDITION)                             \
  X(CUDA_ERROR_NOT_FOUND, NOT_FOUND)                                           \
  X(CUDA_ERROR_NOT_READY, UNAVAILABLE)                                         \
  X(CUDA_ERROR_ILLEGAL_ADDRESS, DEVICE_LOST)                                   \
  X(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, RESOURCE_EXHAUSTED)                    \
  X(CUDA_ERROR_LAUNCH_TIMEOUT, DEVICE_LOST)                                    \
  X(CUDA_ERROR_CONTEXT_IS_DESTROYED, FAILED_PRECONDITION)                      \
  X(CUDA_ERROR_ASSERT, DEVICE_LOST)                                            \
  X(CUDA_ERROR_HARDWARE_STACK_ERROR, DEVICE_LOST)                              \
  X(CUDA_ERROR_ILLEGAL_INSTRUCTION, DEVICE_LOST)                               \
  X(CUDA_ERROR_MISALIGNED_ADDRESS, DEVICE_LOST)                                \
  X(CUDA_ERROR_INVALID_ADDRESS_SPACE, DEVICE_LOST)                             \
  X(CUDA_ERROR_INVALID_PC, DEVICE_LOST)                                        \
  X(CUDA_ERROR_LAUNCH_FAILED, DEVICE_LOST)                                     \
  X(CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE, INVALID_ARGUMENT)                 \
  X(CUDA_ERROR_NOT_PERMITTED, PERMISSION_DENIED)                               \
  X(CUDA_ERROR_NOT_SUPPORTED, UNIMPLEMENTED)                                   \
  X(CUDA_ERROR_SYSTEM_NOT_READY, UNAVAILABLE)                                  \
  X(CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, INCOMPATIBLE)                           \
  X(CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE, INCOMPATIBLE)                   \
  X(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, FAILED_PRECONDITION)                \
  X(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, FAILED_PRECONDITION)                \
  X(CUDA_ERROR_TIMEOUT, DEADLINE_EXCEEDED)                                     \
  X(CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE, FAILED_PRECONDITION)                 \
  X(CUDA_ERROR_UNKNOWN, UNKNOWN)
// clang-format on

// Resolves the table's non-DLSYM entries through cuGetProcAddress.
hal_status_t gpu_cuda_lookup(gpu_adapter_base_t* base, const char* name,
                             void** out_pointer);

GPU_ADAPTER_DECLARE_VENDOR_FUNCTIONS(GPU_VX)

#endif  // DRIVERS_GPU_ADAPTER_CUDA_VENDOR_H_
