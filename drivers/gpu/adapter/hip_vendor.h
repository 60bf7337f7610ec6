// Copyright 2026 The HAL Authors.
//
// The HIP adapter's private declarations, and how each primitive of
// vendor_ops_impl.h is spelled in the HIP runtime API (cuda_vendor.h is
// the same list for CUDA).

#ifndef DRIVERS_GPU_ADAPTER_HIP_VENDOR_H_
#define DRIVERS_GPU_ADAPTER_HIP_VENDOR_H_

#include <hip/hip_runtime_api.h>

#include "adapter_impl.h"
#include "hip_symbols.h"

typedef struct gpu_hip_symbols_t {
  GPU_HIP_SYMBOLS(GPU_ADAPTER_SYMBOL_MEMBER)
} gpu_hip_symbols_t;

typedef struct gpu_hip_adapter_t {
  gpu_adapter_base_t base;
  gpu_hip_symbols_t syms;
} gpu_hip_adapter_t;
static_assert(offsetof(gpu_hip_adapter_t, base) == 0,
              "the base must be at offset 0");

//===--- vendor_ops_impl.h parameters ---===//

#define GPU_VX(name) gpu_hip_##name
#define GPU_V_ADAPTER_T gpu_hip_adapter_t
#define GPU_V_SYMBOLS_T gpu_hip_symbols_t
#define GPU_V_SYMBOLS(X) GPU_HIP_SYMBOLS(X)
#define GPU_V_ERRORS(X) GPU_HIP_ERRORS(X)
#define GPU_V_VENDOR GPU_ADAPTER_VENDOR_HIP
#define GPU_V_NAME_STRING "HIP"
#define GPU_V_LIBRARY_ENV "HAL_HIP_LIBRARY"
// The unversioned name (-dev), then the versioned ones, newest first.
#define GPU_V_LIBRARIES \
  "libamdhip64.so", "libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5"
#define GPU_V_HEADER_VERSION HIP_VERSION
#define GPU_V_LOOKUP NULL  // dlsym
// libamdhip64 stays mapped: its init-time objects are only reachable
// through its globals (LeakSanitizer reports them once unmapped), and ROCm
// does not support unloading the runtime.
#define GPU_V_KEEP_LOADED true
#define GPU_V_HAS_RUNTIME_VERSION 1

#define GPU_V_RESULT_T hipError_t
#define GPU_V_DEVICE_T hipDevice_t
#define GPU_V_DEVICE_PTR_T void*
#define GPU_V_STREAM_T hipStream_t
#define GPU_V_EVENT_T hipEvent_t
#define GPU_V_GRAPH_T hipGraph_t
#define GPU_V_GRAPH_NODE_T hipGraphNode_t
#define GPU_V_GRAPH_EXEC_T hipGraphExec_t
#define GPU_V_MODULE_T hipModule_t
#define GPU_V_FUNCTION_T hipFunction_t
#define GPU_V_HOST_NODE_PARAMS_T hipHostNodeParams
#define GPU_V_MEMSET_NODE_PARAMS_T hipMemsetParams
#define GPU_V_DEVICE_ATTRIBUTE_T hipDeviceAttribute_t

#define GPU_V_NATIVE_PTR(address) ((void*)(uintptr_t)(address))
#define GPU_V_ADDRESS(native_ptr) ((gpu_device_ptr_t)(uintptr_t)(native_ptr))

// With no GPU, hipInit says hipErrorInvalidDevice and hipGetDeviceCount
// says hipErrorNoDevice (Debian's 5.2.3).
#define GPU_V_IS_NO_DEVICE(result) \
  ((result) == hipErrorNoDevice || (result) == hipErrorInvalidDevice)
#define GPU_V_NOT_READY hipErrorNotReady
#define GPU_V_GRAPH_EXEC_UPDATE_REFUSED hipErrorGraphExecUpdateFailure

// Error names and descriptions are returned directly (NULL from a fake;
// "hipErrorUnknown" for unknown codes, which the table check makes moot).
#define GPU_V_ERROR_NAME_FN hipGetErrorName
#define GPU_V_ERROR_STRING_FN hipGetErrorString
#define GPU_V_ERROR_TEXT(fn, result) fn((hipError_t)(result))

#define GPU_V_ATTRIBUTE_MULTIPROCESSOR_COUNT \
  hipDeviceAttributeMultiprocessorCount
#define GPU_V_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR \
  hipDeviceAttributeComputeCapabilityMajor
#define GPU_V_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR \
  hipDeviceAttributeComputeCapabilityMinor
#define GPU_V_ATTRIBUTE_MAX_THREADS_PER_BLOCK \
  hipDeviceAttributeMaxThreadsPerBlock
#define GPU_V_ATTRIBUTE_CONCURRENT_KERNELS hipDeviceAttributeConcurrentKernels
#define GPU_V_ATTRIBUTE_CAN_MAP_HOST_MEMORY hipDeviceAttributeCanMapHostMemory
#define GPU_V_ATTRIBUTE_PCI_BUS_ID hipDeviceAttributePciBusId

// Call spellings: `entry point, (arguments)`.
// clang-format off
#define GPU_V_INIT()                        hipInit, (0)
#define GPU_V_DRIVER_VERSION(out)           hipDriverGetVersion, (out)
#define GPU_V_RUNTIME_VERSION(out)          hipRuntimeGetVersion, (out)
#define GPU_V_DEVICE_COUNT(out)             hipGetDeviceCount, (out)
#define GPU_V_DEVICE_GET(out, ordinal)      hipDeviceGet, (out, ordinal)
#define GPU_V_DEVICE_NAME(buf, len, dev)    hipDeviceGetName, (buf, len, dev)
#define GPU_V_DEVICE_TOTAL_MEM(out, dev)    hipDeviceTotalMem, (out, dev)
#define GPU_V_DEVICE_ATTRIBUTE(out, a, dev) hipDeviceGetAttribute, (out, a, dev)
#define GPU_V_MALLOC(out, size)             hipMalloc, (out, size)
#define GPU_V_FREE(ptr)                     hipFree, (ptr)
#define GPU_V_HOST_MALLOC(out, size)        hipHostMalloc, (out, size, 0)
#define GPU_V_HOST_FREE(ptr)                hipHostFree, (ptr)
#define GPU_V_MEMCPY(dst, src, n)   hipMemcpy, (dst, src, n, hipMemcpyDefault)
#define GPU_V_MEMCPY_ASYNC(dst, src, n, s) \
  hipMemcpyAsync, (dst, src, n, hipMemcpyDefault, s)
#define GPU_V_MEMSET_D8_ASYNC(dst, v, n, s) \
  hipMemsetD8Async, (dst, (unsigned char)(v), n, s)
#define GPU_V_MEMSET_D16_ASYNC(dst, v, n, s) \
  hipMemsetD16Async, (dst, (unsigned short)(v), n, s)
#define GPU_V_MEMSET_D32_ASYNC(dst, v, n, s) \
  hipMemsetD32Async, (dst, (int)(v), n, s)
#define GPU_V_STREAM_CREATE(out) \
  hipStreamCreateWithFlags, (out, hipStreamNonBlocking)
#define GPU_V_STREAM_DESTROY(s)             hipStreamDestroy, (s)
#define GPU_V_STREAM_SYNCHRONIZE(s)         hipStreamSynchronize, (s)
#define GPU_V_STREAM_QUERY(s)               hipStreamQuery, (s)
#define GPU_V_STREAM_WAIT_EVENT(s, e)       hipStreamWaitEvent, (s, e, 0)
#define GPU_V_EVENT_CREATE(out) \
  hipEventCreateWithFlags, (out, hipEventDisableTiming)
#define GPU_V_EVENT_DESTROY(e)              hipEventDestroy, (e)
#define GPU_V_EVENT_RECORD(e, s)            hipEventRecord, (e, s)
#define GPU_V_EVENT_QUERY(e)                hipEventQuery, (e)
#define GPU_V_EVENT_SYNCHRONIZE(e)          hipEventSynchronize, (e)
#define GPU_V_GRAPH_CREATE(out)             hipGraphCreate, (out, 0)
#define GPU_V_GRAPH_DESTROY(g)              hipGraphDestroy, (g)
#define GPU_V_GRAPH_ADD_EMPTY_NODE(out, g, deps, n) \
  hipGraphAddEmptyNode, (out, g, deps, n)
#define GPU_V_GRAPH_ADD_HOST_NODE(out, g, deps, n, params) \
  hipGraphAddHostNode, (out, g, deps, n, params)
#define GPU_V_GRAPH_INSTANTIATE(out, g) \
  hipGraphInstantiate, (out, g, NULL, NULL, 0)
#define GPU_V_GRAPH_EXEC_DESTROY(e)         hipGraphExecDestroy, (e)
#define GPU_V_GRAPH_LAUNCH(e, s)            hipGraphLaunch, (e, s)
#define GPU_V_MODULE_LOAD_DATA(out, image)  hipModuleLoadData, (out, image)
#define GPU_V_MODULE_UNLOAD(m)              hipModuleUnload, (m)
#define GPU_V_MODULE_GET_FUNCTION(out, m, name) \
  hipModuleGetFunction, (out, m, name)
#define GPU_V_LAUNCH_HOST_FUNC(s, fn, data) hipLaunchHostFunc, (s, fn, data)
#define GPU_V_STREAM_ADD_CALLBACK(s, callback, data) \
  hipStreamAddCallback, (s, callback, data, 0)
#define GPU_V_GRAPH_ADD_MEMSET_NODE(out, g, deps, n, params, context) \
  hipGraphAddMemsetNode, (out, g, deps, n, params)
#define GPU_V_GRAPH_EXEC_UPDATE(e, g)                      \
  hipGraphExecUpdate, (e, g, &(hipGraphNode_t){NULL},     \
                       &(hipGraphExecUpdateResult){hipGraphExecUpdateSuccess})
#define GPU_V_LAUNCH_KERNEL(f, gx, gy, gz, bx, by, bz, shared, s, args) \
  hipModuleLaunchKernel, (f, gx, gy, gz, bx, by, bz, shared, s, args, NULL)
// clang-format on

// HIP graph nodes take no context.
#define GPU_V_GRAPH_CONTEXT_T void*
#define GPU_V_GRAPH_CONTEXT(adapter, out) (*(out) = NULL, HAL_OK)

// How each HIP error maps (adapter_impl.h, GPU_ADAPTER_ERROR).
// clang-format off
#define GPU_HIP_ERRORS(X)                                                      \
  X(hipErrorInvalidValue, INVALID_ARGUMENT)                                    \
  X(hipErrorOutOfMemory, RESOURCE_EXHAUSTED)                                   \
  X(hipErrorNotInitialized, FAILED_PRECONDITION)                               \
  X(hipErrorDeinitialized, DEVICE_LOST)                                        \
  X(hipErrorInvalidConfiguration, INVALID_ARGUMENT)                            \
  X(hipErrorInvalidPitchValue, INVALID_ARGUMENT)                               \
  X(hipErrorInvalidSymbol, INVALID_ARGUMENT)                                   \
  X(hipErrorInvalidDevicePointer, INVALID_ARGUMENT)                            \
  X(hipErrorInvalidMemcpyDirection, INVALID_ARGUMENT)                          \
  X(hipErrorInsufficientDriver, INCOMPATIBLE)                                  \
  X(hipErrorMissingConfiguration, INVALID_ARGUMENT)                            \
  X(hipErrorPriorLaunchFailure, DEVICE_LOST)                                   \
  X(hipErrorInvalidDeviceFunction, INVALID_ARGUMENT)                           \
  X(hipErrorNoDevice, NOT_FOUND)                                               \
  X(hipErrorInvalidDevice, INVALID_ARGUMENT)                                   \
  X(hipErrorInvalidImage, INVALID_ARGUMENT)                                    \
  X(hipErrorInvalidContext, FAILED_PRECONDITION)                               \
  X(hipErrorNoBinaryForGpu, FAILED_PRECONDITION)                               \
  X(hipErrorECCNotCorrectable, DEVICE_LOST)                                    \
  X(hipErrorInvalidKernelFile, INVALID_ARGUMENT)                               \
  X(hipErrorInvalidSource, INVALID_ARGUMENT)                                   \
  X(hipErrorFileNotFound, NOT_FOUND)                                           \
  X(hipErrorSharedObjectSymbolNotFound, NOT_FOUND)                             \
  X(hipErrorSharedObjectInitFailed, INTERNAL)                                  \
  X(hipErrorOperatingSystem, INTERNAL)                                         \
  X(hipErrorInvalidHandle, INVALID_ARGUMENT)                                   \
  X(hipErrorIllegalState, FAILED_PRECONDITION)                                 \
  X(hipErrorNotFound, NOT_FOUND)                                               \
  X(hipErrorNotReady, UNAVAILABLE)                                             \
  X(hipErrorIllegalAddress, DEVICE_LOST)                                       \
  X(hipErrorLaunchOutOfResources, RESOURCE_EXHAUSTED)                          \
  X(hipErrorLaunchTimeOut, DEVICE_LOST)                                        \
  X(hipErrorContextIsDestroyed, FAILED_PRECONDITION)                           \
  X(hipErrorAssert, DEVICE_LOST)                                               \
  X(hipErrorLaunchFailure, DEVICE_LOST)                                        \
  X(hipErrorCooperativeLaunchTooLarge, INVALID_ARGUMENT)                       \
  X(hipErrorNotSupported, UNIMPLEMENTED)                                       \
  X(hipErrorStreamCaptureUnsupported, FAILED_PRECONDITION)                     \
  X(hipErrorStreamCaptureInvalidated, FAILED_PRECONDITION)                     \
  X(hipErrorGraphExecUpdateFailure, FAILED_PRECONDITION)                       \
  X(hipErrorUnknown, UNKNOWN)                                                  \
  X(hipErrorRuntimeMemory, INTERNAL)                                           \
  X(hipErrorRuntimeOther, INTERNAL)
// clang-format on

GPU_ADAPTER_DECLARE_VENDOR_FUNCTIONS(GPU_VX)

#endif  // DRIVERS_GPU_ADAPTER_HIP_VENDOR_H_
