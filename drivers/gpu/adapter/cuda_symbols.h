// Copyright 2026 The HAL Authors.
//
// The CUDA Driver API entry points the adapter uses: ONE table, from which
// the symbol struct, the lookup list, the signature checks and the test
// fakes are generated (see adapter_impl.h for the columns).
//
// Only the *_DLSYM entries are looked up with dlsym() (by their exported,
// possibly versioned name, e.g. cuGetProcAddress_v2); all others go through
// cuGetProcAddress at the version of the cuda.h we are built against, so
// versioned entry points (cuMemAlloc -> cuMemAlloc_v2, cuDeviceGetUuid ->
// cuDeviceGetUuid_v2...) match the signatures below. cuda.h's renaming
// macros apply to |name| where it is an identifier. Where cuda.h renames
// an entry point to another API name rather than a versioned export, the
// table names the new one: cuGetProcAddress("cuGraphInstantiate") hands out
// the pre-CUDA 12 five-argument function at every version (cudaTypedefs.h
// has no PFN_cuGraphInstantiate_v12000), so the three-argument one is asked
// for as cuGraphInstantiateWithFlags. cuda_procaddr_test checks every row
// against the library's export of the header's name.
//
// Needs cuda.h included first.

#ifndef DRIVERS_GPU_ADAPTER_CUDA_SYMBOLS_H_
#define DRIVERS_GPU_ADAPTER_CUDA_SYMBOLS_H_

// clang-format off
#define GPU_CUDA_SYMBOLS(X)                                                    \
  /* Before cuInit: dlsym. */                                                  \
  X(REQUIRED_DLSYM, NONE, cuInit, CUresult, (unsigned int Flags))              \
  X(REQUIRED_DLSYM, NONE, cuDriverGetVersion, CUresult, (int* driverVersion))  \
  X(REQUIRED_DLSYM, NONE, cuGetProcAddress, CUresult,                          \
    (const char* symbol, void** pfn, int cudaVersion, cuuint64_t flags,        \
     CUdriverProcAddressQueryResult* symbolStatus))                            \
  X(OPTIONAL_DLSYM, NONE, cuGetErrorName, CUresult,                            \
    (CUresult error, const char** pStr))                                       \
  X(OPTIONAL_DLSYM, NONE, cuGetErrorString, CUresult,                          \
    (CUresult error, const char** pStr))                                       \
  /* Devices and contexts. */                                                  \
  X(REQUIRED, NONE, cuDeviceGetCount, CUresult, (int* count))                  \
  X(REQUIRED, NONE, cuDeviceGet, CUresult, (CUdevice* device, int ordinal))    \
  X(REQUIRED, NONE, cuDeviceGetName, CUresult,                                 \
    (char* name, int len, CUdevice dev))                                       \
  X(REQUIRED, NONE, cuDeviceGetUuid, CUresult, (CUuuid* uuid, CUdevice dev))   \
  X(REQUIRED, NONE, cuDeviceTotalMem, CUresult,                                \
    (size_t* bytes, CUdevice dev))                                             \
  X(REQUIRED, NONE, cuDeviceGetAttribute, CUresult,                            \
    (int* pi, CUdevice_attribute attrib, CUdevice dev))                        \
  X(REQUIRED, NONE, cuDevicePrimaryCtxRetain, CUresult,                        \
    (CUcontext* pctx, CUdevice dev))                                           \
  X(REQUIRED, NONE, cuDevicePrimaryCtxRelease, CUresult, (CUdevice dev))       \
  X(REQUIRED, NONE, cuCtxSetCurrent, CUresult, (CUcontext ctx))                \
  X(REQUIRED, NONE, cuCtxGetCurrent, CUresult, (CUcontext* pctx))              \
  /* Memory. */                                                                \
  X(REQUIRED, NONE, cuMemAlloc, CUresult,                                      \
    (CUdeviceptr* dptr, size_t bytesize))                                      \
  X(REQUIRED, NONE, cuMemFree, CUresult, (CUdeviceptr dptr))                   \
  X(REQUIRED, NONE, cuMemAllocHost, CUresult, (void** pp, size_t bytesize))    \
  X(REQUIRED, NONE, cuMemFreeHost, CUresult, (void* p))                        \
  X(REQUIRED, NONE, cuMemcpy, CUresult,                                        \
    (CUdeviceptr dst, CUdeviceptr src, size_t ByteCount))                      \
  X(REQUIRED, NONE, cuMemcpyAsync, CUresult,                                   \
    (CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream))    \
  X(REQUIRED, NONE, cuMemsetD8Async, CUresult,                                 \
    (CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream))     \
  X(REQUIRED, NONE, cuMemsetD16Async, CUresult,                                \
    (CUdeviceptr dstDevice, unsigned short us, size_t N, CUstream hStream))    \
  X(REQUIRED, NONE, cuMemsetD32Async, CUresult,                                \
    (CUdeviceptr dstDevice, unsigned int ui, size_t N, CUstream hStream))      \
  /* Stream-ordered allocation. */                                             \
  X(OPTIONAL, STREAM_ORDERED_ALLOC, cuMemPoolCreate, CUresult,                 \
    (CUmemoryPool* pool, const CUmemPoolProps* poolProps))                     \
  X(OPTIONAL, STREAM_ORDERED_ALLOC, cuMemPoolDestroy, CUresult,                \
    (CUmemoryPool pool))                                                       \
  X(OPTIONAL, STREAM_ORDERED_ALLOC, cuMemPoolSetAttribute, CUresult,           \
    (CUmemoryPool pool, CUmemPool_attribute attr, void* value))                \
  X(OPTIONAL, STREAM_ORDERED_ALLOC, cuMemPoolGetAttribute, CUresult,           \
    (CUmemoryPool pool, CUmemPool_attribute attr, void* value))                \
  X(OPTIONAL, STREAM_ORDERED_ALLOC, cuMemPoolTrimTo, CUresult,                 \
    (CUmemoryPool pool, size_t minBytesToKeep))                                \
  X(OPTIONAL, STREAM_ORDERED_ALLOC, cuMemAllocFromPoolAsync, CUresult,         \
    (CUdeviceptr* dptr, size_t bytesize, CUmemoryPool pool, CUstream hStream)) \
  X(OPTIONAL, STREAM_ORDERED_ALLOC, cuMemFreeAsync, CUresult,                  \
    (CUdeviceptr dptr, CUstream hStream))                                      \
  /* Streams and events. */                                                    \
  X(REQUIRED, NONE, cuStreamCreate, CUresult,                                  \
    (CUstream* phStream, unsigned int Flags))                                  \
  X(REQUIRED, NONE, cuStreamDestroy, CUresult, (CUstream hStream))             \
  X(REQUIRED, NONE, cuStreamSynchronize, CUresult, (CUstream hStream))         \
  X(REQUIRED, NONE, cuStreamQuery, CUresult, (CUstream hStream))               \
  X(REQUIRED, NONE, cuStreamWaitEvent, CUresult,                               \
    (CUstream hStream, CUevent hEvent, unsigned int Flags))                    \
  X(OPTIONAL, HOST_FUNC_NATIVE, cuLaunchHostFunc, CUresult,                    \
    (CUstream hStream, CUhostFn fn, void* userData))                           \
  X(REQUIRED, NONE, cuStreamAddCallback, CUresult,                             \
    (CUstream hStream, CUstreamCallback callback, void* userData,              \
     unsigned int flags))                                                      \
  X(REQUIRED, NONE, cuEventCreate, CUresult,                                   \
    (CUevent* phEvent, unsigned int Flags))                                    \
  X(REQUIRED, NONE, cuEventDestroy, CUresult, (CUevent hEvent))                \
  X(REQUIRED, NONE, cuEventRecord, CUresult,                                   \
    (CUevent hEvent, CUstream hStream))                                        \
  X(REQUIRED, NONE, cuEventQuery, CUresult, (CUevent hEvent))                  \
  X(REQUIRED, NONE, cuEventSynchronize, CUresult, (CUevent hEvent))            \
  X(OPTIONAL, EVENT_TIMING, cuEventElapsedTime, CUresult,                       \
    (float* pMilliseconds, CUevent hStart, CUevent hEnd))                      \
  /* Graphs. */                                                                \
  X(OPTIONAL, GRAPH, cuGraphCreate, CUresult,                                  \
    (CUgraph* phGraph, unsigned int flags))                                    \
  X(OPTIONAL, GRAPH, cuGraphDestroy, CUresult, (CUgraph hGraph))               \
  X(OPTIONAL, GRAPH, cuGraphAddEmptyNode, CUresult,                            \
    (CUgraphNode* phGraphNode, CUgraph hGraph,                                 \
     const CUgraphNode* dependencies, size_t numDependencies))                 \
  X(OPTIONAL, GRAPH, cuGraphInstantiateWithFlags, CUresult,                    \
    (CUgraphExec* phGraphExec, CUgraph hGraph, unsigned long long flags))      \
  X(OPTIONAL, GRAPH, cuGraphLaunch, CUresult,                                  \
    (CUgraphExec hGraphExec, CUstream hStream))                                \
  X(OPTIONAL, GRAPH, cuGraphExecDestroy, CUresult, (CUgraphExec hGraphExec))   \
  X(OPTIONAL, GRAPH_MEMSET_NODE, cuGraphAddMemsetNode, CUresult,               \
    (CUgraphNode* phGraphNode, CUgraph hGraph,                                 \
     const CUgraphNode* dependencies, size_t numDependencies,                  \
     const CUDA_MEMSET_NODE_PARAMS* memsetParams, CUcontext ctx))              \
  X(OPTIONAL, GRAPH_MEMCPY_NODE, cuGraphAddMemcpyNode, CUresult,               \
    (CUgraphNode* phGraphNode, CUgraph hGraph,                                 \
     const CUgraphNode* dependencies, size_t numDependencies,                  \
     const CUDA_MEMCPY3D* copyParams, CUcontext ctx))                          \
  X(OPTIONAL, GRAPH_HOST_NODE, cuGraphAddHostNode, CUresult,                   \
    (CUgraphNode* phGraphNode, CUgraph hGraph,                                 \
     const CUgraphNode* dependencies, size_t numDependencies,                  \
     const CUDA_HOST_NODE_PARAMS* nodeParams))                                 \
  X(OPTIONAL, GRAPH_KERNEL_NODE, cuGraphAddKernelNode, CUresult,               \
    (CUgraphNode* phGraphNode, CUgraph hGraph,                                 \
     const CUgraphNode* dependencies, size_t numDependencies,                  \
     const CUDA_KERNEL_NODE_PARAMS* nodeParams))                               \
  X(OPTIONAL, GRAPH_EXEC_UPDATE, cuGraphExecUpdate, CUresult,                  \
    (CUgraphExec hGraphExec, CUgraph hGraph,                                   \
     CUgraphExecUpdateResultInfo* resultInfo))                                 \
  /* Modules. */                                                               \
  X(OPTIONAL, MODULE, cuModuleLoadData, CUresult,                              \
    (CUmodule* module, const void* image))                                     \
  X(OPTIONAL, MODULE, cuModuleUnload, CUresult, (CUmodule hmod))               \
  X(OPTIONAL, PARAM_INFO, cuFuncGetParamInfo, CUresult,                        \
    (CUfunction func, size_t paramIndex, size_t* paramOffset,                  \
     size_t* paramSize))                                                       \
  X(OPTIONAL, MODULE, cuModuleGetFunction, CUresult,                           \
    (CUfunction* hfunc, CUmodule hmod, const char* name))                      \
  X(OPTIONAL, MODULE, cuLaunchKernel, CUresult,                                \
    (CUfunction f, unsigned int gridDimX, unsigned int gridDimY,               \
     unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,    \
     unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,    \
     void** kernelParams, void** extra))
// clang-format on

#endif  // DRIVERS_GPU_ADAPTER_CUDA_SYMBOLS_H_
