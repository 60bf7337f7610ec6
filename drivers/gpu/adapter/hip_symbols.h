// Copyright 2026 The HAL Authors.
//
// The HIP runtime entry points the adapter uses: ONE table, from which the
// symbol struct, the lookup list, the signature checks and the test fakes
// are generated (see adapter_impl.h for the columns). HIP has no
// cuGetProcAddress: every symbol is looked up with dlsym(); the *_DLSYM
// ones before hipInit.
//
// OPTIONAL entries are those real runtimes lack. Debian's libamdhip64 5.2.3
// declares hipLaunchHostFunc in its header but does not export it (the
// adapter falls back to hipStreamAddCallback); newer graph entry points are
// not used at all.
//
// Needs hip/hip_runtime_api.h included first.

#ifndef DRIVERS_GPU_ADAPTER_HIP_SYMBOLS_H_
#define DRIVERS_GPU_ADAPTER_HIP_SYMBOLS_H_

// clang-format off
#define GPU_HIP_SYMBOLS(X)                                                     \
  /* Before hipInit. */                                                        \
  X(REQUIRED_DLSYM, NONE, hipInit, hipError_t, (unsigned int flags))           \
  X(OPTIONAL_DLSYM, NONE, hipGetErrorName, const char*, (hipError_t hip_error))\
  X(OPTIONAL_DLSYM, NONE, hipGetErrorString, const char*,                      \
    (hipError_t hipError))                                                     \
  /* Versions, devices. */                                                     \
  X(REQUIRED, NONE, hipDriverGetVersion, hipError_t, (int* driverVersion))     \
  X(REQUIRED, NONE, hipRuntimeGetVersion, hipError_t, (int* runtimeVersion))   \
  X(REQUIRED, NONE, hipGetDeviceCount, hipError_t, (int* count))               \
  X(REQUIRED, NONE, hipDeviceGet, hipError_t,                                  \
    (hipDevice_t* device, int ordinal))                                        \
  X(REQUIRED, NONE, hipDeviceGetName, hipError_t,                              \
    (char* name, int len, hipDevice_t device))                                 \
  X(REQUIRED, NONE, hipDeviceGetUuid, hipError_t,                              \
    (hipUUID* uuid, hipDevice_t device))                                       \
  X(REQUIRED, NONE, hipDeviceTotalMem, hipError_t,                             \
    (size_t* bytes, hipDevice_t device))                                       \
  X(REQUIRED, NONE, hipDeviceGetAttribute, hipError_t,                         \
    (int* pi, hipDeviceAttribute_t attr, int deviceId))                        \
  X(REQUIRED, NONE, hipSetDevice, hipError_t, (int deviceId))                  \
  /* Memory. */                                                                \
  X(REQUIRED, NONE, hipMalloc, hipError_t, (void** ptr, size_t size))          \
  X(REQUIRED, NONE, hipFree, hipError_t, (void* ptr))                          \
  X(REQUIRED, NONE, hipHostMalloc, hipError_t,                                 \
    (void** ptr, size_t size, unsigned int flags))                             \
  X(REQUIRED, NONE, hipHostFree, hipError_t, (void* ptr))                      \
  X(REQUIRED, NONE, hipMemcpy, hipError_t,                                     \
    (void* dst, const void* src, size_t sizeBytes, hipMemcpyKind kind))        \
  X(REQUIRED, NONE, hipMemcpyAsync, hipError_t,                                \
    (void* dst, const void* src, size_t sizeBytes, hipMemcpyKind kind,         \
     hipStream_t stream))                                                      \
  X(REQUIRED, NONE, hipMemsetD8Async, hipError_t,                              \
    (hipDeviceptr_t dest, unsigned char value, size_t count,                   \
     hipStream_t stream))                                                      \
  X(REQUIRED, NONE, hipMemsetD16Async, hipError_t,                             \
    (hipDeviceptr_t dest, unsigned short value, size_t count,                  \
     hipStream_t stream))                                                      \
  X(REQUIRED, NONE, hipMemsetD32Async, hipError_t,                             \
    (hipDeviceptr_t dst, int value, size_t count, hipStream_t stream))         \
  /* Stream-ordered allocation. */                                             \
  X(OPTIONAL, STREAM_ORDERED_ALLOC, hipMemPoolCreate, hipError_t,              \
    (hipMemPool_t* mem_pool, const hipMemPoolProps* pool_props))               \
  X(OPTIONAL, STREAM_ORDERED_ALLOC, hipMemPoolDestroy, hipError_t,             \
    (hipMemPool_t mem_pool))                                                   \
  X(OPTIONAL, STREAM_ORDERED_ALLOC, hipMemPoolSetAttribute, hipError_t,        \
    (hipMemPool_t mem_pool, hipMemPoolAttr attr, void* value))                 \
  X(OPTIONAL, STREAM_ORDERED_ALLOC, hipMemPoolGetAttribute, hipError_t,        \
    (hipMemPool_t mem_pool, hipMemPoolAttr attr, void* value))                 \
  X(OPTIONAL, STREAM_ORDERED_ALLOC, hipMemPoolTrimTo, hipError_t,              \
    (hipMemPool_t mem_pool, size_t min_bytes_to_hold))                         \
  X(OPTIONAL, STREAM_ORDERED_ALLOC, hipMallocFromPoolAsync, hipError_t,        \
    (void** dev_ptr, size_t size, hipMemPool_t mem_pool, hipStream_t stream))  \
  X(OPTIONAL, STREAM_ORDERED_ALLOC, hipFreeAsync, hipError_t,                  \
    (void* dev_ptr, hipStream_t stream))                                       \
  /* Streams and events. */                                                    \
  X(REQUIRED, NONE, hipStreamCreateWithFlags, hipError_t,                      \
    (hipStream_t* stream, unsigned int flags))                                 \
  X(REQUIRED, NONE, hipStreamDestroy, hipError_t, (hipStream_t stream))        \
  X(REQUIRED, NONE, hipStreamSynchronize, hipError_t, (hipStream_t stream))    \
  X(REQUIRED, NONE, hipStreamQuery, hipError_t, (hipStream_t stream))          \
  X(REQUIRED, NONE, hipStreamWaitEvent, hipError_t,                            \
    (hipStream_t stream, hipEvent_t event, unsigned int flags))                \
  X(REQUIRED, NONE, hipStreamAddCallback, hipError_t,                          \
    (hipStream_t stream, hipStreamCallback_t callback, void* userData,         \
     unsigned int flags))                                                      \
  X(OPTIONAL, HOST_FUNC_NATIVE, hipLaunchHostFunc, hipError_t,                 \
    (hipStream_t stream, hipHostFn_t fn, void* userData))                      \
  X(REQUIRED, NONE, hipEventCreateWithFlags, hipError_t,                       \
    (hipEvent_t* event, unsigned flags))                                       \
  X(REQUIRED, NONE, hipEventDestroy, hipError_t, (hipEvent_t event))           \
  X(REQUIRED, NONE, hipEventRecord, hipError_t,                                \
    (hipEvent_t event, hipStream_t stream))                                    \
  X(REQUIRED, NONE, hipEventQuery, hipError_t, (hipEvent_t event))             \
  X(REQUIRED, NONE, hipEventSynchronize, hipError_t, (hipEvent_t event))       \
  X(OPTIONAL, EVENT_TIMING, hipEventElapsedTime, hipError_t,                   \
    (float* ms, hipEvent_t start, hipEvent_t stop))                            \
  /* Graphs. */                                                                \
  X(OPTIONAL, GRAPH, hipGraphCreate, hipError_t,                               \
    (hipGraph_t* pGraph, unsigned int flags))                                  \
  X(OPTIONAL, GRAPH, hipGraphDestroy, hipError_t, (hipGraph_t graph))          \
  X(OPTIONAL, GRAPH, hipGraphAddEmptyNode, hipError_t,                         \
    (hipGraphNode_t* pGraphNode, hipGraph_t graph,                             \
     const hipGraphNode_t* pDependencies, size_t numDependencies))             \
  X(OPTIONAL, GRAPH, hipGraphInstantiate, hipError_t,                          \
    (hipGraphExec_t* pGraphExec, hipGraph_t graph, hipGraphNode_t* pErrorNode, \
     char* pLogBuffer, size_t bufferSize))                                     \
  X(OPTIONAL, GRAPH, hipGraphLaunch, hipError_t,                               \
    (hipGraphExec_t graphExec, hipStream_t stream))                            \
  X(OPTIONAL, GRAPH, hipGraphExecDestroy, hipError_t,                          \
    (hipGraphExec_t graphExec))                                                \
  X(OPTIONAL, GRAPH_MEMSET_NODE, hipGraphAddMemsetNode, hipError_t,            \
    (hipGraphNode_t* pGraphNode, hipGraph_t graph,                             \
     const hipGraphNode_t* pDependencies, size_t numDependencies,              \
     const hipMemsetParams* pMemsetParams))                                    \
  X(OPTIONAL, GRAPH_MEMCPY_NODE, hipGraphAddMemcpyNode1D, hipError_t,          \
    (hipGraphNode_t* pGraphNode, hipGraph_t graph,                             \
     const hipGraphNode_t* pDependencies, size_t numDependencies, void* dst,   \
     const void* src, size_t count, hipMemcpyKind kind))                       \
  X(OPTIONAL, GRAPH_HOST_NODE, hipGraphAddHostNode, hipError_t,                \
    (hipGraphNode_t* pGraphNode, hipGraph_t graph,                             \
     const hipGraphNode_t* pDependencies, size_t numDependencies,              \
     const hipHostNodeParams* pNodeParams))                                    \
  X(OPTIONAL, GRAPH_KERNEL_NODE, hipGraphAddKernelNode, hipError_t,            \
    (hipGraphNode_t* pGraphNode, hipGraph_t graph,                             \
     const hipGraphNode_t* pDependencies, size_t numDependencies,              \
     const hipKernelNodeParams* pNodeParams))                                  \
  X(OPTIONAL, GRAPH_EXEC_UPDATE, hipGraphExecUpdate, hipError_t,               \
    (hipGraphExec_t hGraphExec, hipGraph_t hGraph,                             \
     hipGraphNode_t* hErrorNode_out,                                           \
     hipGraphExecUpdateResult* updateResult_out))                              \
  /* Modules. */                                                               \
  X(OPTIONAL, MODULE, hipModuleLoadData, hipError_t,                           \
    (hipModule_t* module, const void* image))                                  \
  X(OPTIONAL, MODULE, hipModuleUnload, hipError_t, (hipModule_t module))       \
  X(OPTIONAL, MODULE, hipModuleGetFunction, hipError_t,                        \
    (hipFunction_t* function, hipModule_t module, const char* kname))          \
  X(OPTIONAL, MODULE, hipModuleLaunchKernel, hipError_t,                       \
    (hipFunction_t f, unsigned int gridDimX, unsigned int gridDimY,            \
     unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,    \
     unsigned int blockDimZ, unsigned int sharedMemBytes, hipStream_t stream,  \
     void** kernelParams, void** extra))
// clang-format on

#endif  // DRIVERS_GPU_ADAPTER_HIP_SYMBOLS_H_
