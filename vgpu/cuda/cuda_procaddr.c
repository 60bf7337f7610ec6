// CUDA facade: cuGetProcAddress.
//
// The table maps the base names drivers ask for ("cuMemAlloc") to the
// implementation matching the CUDA version they were built for, as libcuda
// does: several rows per name, newest first, each valid from a version on.
// Names listed in VGPU_HIDE_SYMBOLS are reported as not found, so drivers'
// fallbacks for symbols that older runtimes lack can be tested.
//
// Per-thread default stream variants are not distinguished: the flags are
// accepted and the default-stream implementation returned.
#include <string.h>

#include "cuda_facade.h"

// Exported elsewhere under names cuda.h does not declare.
#undef cuGraphInstantiate
#undef cuGraphAddKernelNode
#undef cuGraphExecUpdate
#undef cuGetProcAddress
#undef cuStreamDestroy
#undef cuEventDestroy
#undef cuEventElapsedTime
#undef cuDevicePrimaryCtxRelease
#undef cuDeviceGetUuid
CUresult CUDAAPI cuDeviceGetUuid(CUuuid*, CUdevice);
CUresult CUDAAPI cuGraphInstantiate(CUgraphExec*, CUgraph, CUgraphNode*, char*,
                                    size_t);
CUresult CUDAAPI cuGraphInstantiate_v2(CUgraphExec*, CUgraph, CUgraphNode*,
                                       char*, size_t);
CUresult CUDAAPI cuGraphAddKernelNode(CUgraphNode*, CUgraph, const CUgraphNode*,
                                      size_t,
                                      const CUDA_KERNEL_NODE_PARAMS_v1*);
CUresult CUDAAPI cuGraphExecUpdate(CUgraphExec, CUgraph, CUgraphNode*,
                                   CUgraphExecUpdateResult*);
CUresult CUDAAPI cuStreamDestroy(CUstream);
CUresult CUDAAPI cuEventDestroy(CUevent);
CUresult CUDAAPI cuEventElapsedTime(float*, CUevent, CUevent);
CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice);
VGPU_EXPORT CUresult CUDAAPI cuGetProcAddress(const char* symbol, void** pfn,
                                              int cudaVersion,
                                              cuuint64_t flags);

typedef struct proc_entry {
  const char* name;
  int version;  // first CUDA version this implementation answers
  void (*fn)(void);
} proc_entry;

#define P(name, version, fn) {name, version, (void (*)(void))(fn)},

// One entry per line: clang-format has no good layout for a macro table.
// clang-format off
static const proc_entry table[] = {
    P("cuInit", 2000, cuInit)
    P("cuDriverGetVersion", 2020, cuDriverGetVersion)
    P("cuGetErrorName", 6000, cuGetErrorName)
    P("cuGetErrorString", 6000, cuGetErrorString)
    P("cuGetProcAddress", 12000, cuGetProcAddress_v2)
    P("cuGetProcAddress", 11030, cuGetProcAddress)
    P("cuDeviceGetCount", 2000, cuDeviceGetCount)
    P("cuDeviceGet", 2000, cuDeviceGet)
    P("cuDeviceGetName", 2000, cuDeviceGetName)
    P("cuDeviceGetAttribute", 2000, cuDeviceGetAttribute)
    P("cuDeviceGetUuid", 11040, cuDeviceGetUuid_v2)
    P("cuDeviceGetUuid", 9020, cuDeviceGetUuid)
    P("cuDeviceTotalMem", 3020, cuDeviceTotalMem_v2)
    P("cuDeviceComputeCapability", 2000, cuDeviceComputeCapability)
    P("cuDevicePrimaryCtxRetain", 7000, cuDevicePrimaryCtxRetain)
    P("cuDevicePrimaryCtxRelease", 11000, cuDevicePrimaryCtxRelease_v2)
    P("cuDevicePrimaryCtxRelease", 7000, cuDevicePrimaryCtxRelease)
    P("cuCtxSetCurrent", 4000, cuCtxSetCurrent)
    P("cuCtxGetCurrent", 4000, cuCtxGetCurrent)
    P("cuCtxPushCurrent", 4000, cuCtxPushCurrent_v2)
    P("cuCtxPopCurrent", 4000, cuCtxPopCurrent_v2)
    P("cuCtxGetDevice", 13000, cuCtxGetDevice_v2)
    P("cuCtxGetDevice", 2000, cuCtxGetDevice)
    P("cuCtxSynchronize", 13000, cuCtxSynchronize_v2)
    P("cuCtxSynchronize", 2000, cuCtxSynchronize)
    P("cuMemGetInfo", 3020, cuMemGetInfo_v2)
    P("cuMemAlloc", 3020, cuMemAlloc_v2)
    P("cuMemFree", 3020, cuMemFree_v2)
    P("cuMemAllocHost", 3020, cuMemAllocHost_v2)
    P("cuMemHostAlloc", 2020, cuMemHostAlloc)
    P("cuMemFreeHost", 2000, cuMemFreeHost)
    P("cuMemAllocAsync", 11020, cuMemAllocAsync)
    P("cuMemAllocFromPoolAsync", 11020, cuMemAllocFromPoolAsync)
    P("cuMemFreeAsync", 11020, cuMemFreeAsync)
    P("cuMemPoolCreate", 11020, cuMemPoolCreate)
    P("cuMemPoolDestroy", 11020, cuMemPoolDestroy)
    P("cuMemPoolSetAttribute", 11020, cuMemPoolSetAttribute)
    P("cuMemPoolGetAttribute", 11020, cuMemPoolGetAttribute)
    P("cuMemPoolTrimTo", 11020, cuMemPoolTrimTo)
    P("cuDeviceGetDefaultMemPool", 11020, cuDeviceGetDefaultMemPool)
    P("cuDeviceGetMemPool", 11020, cuDeviceGetMemPool)
    P("cuDeviceSetMemPool", 11020, cuDeviceSetMemPool)
    P("cuMemcpy", 4000, cuMemcpy)
    P("cuMemcpyAsync", 4000, cuMemcpyAsync)
    P("cuMemcpyHtoD", 3020, cuMemcpyHtoD_v2)
    P("cuMemcpyDtoH", 3020, cuMemcpyDtoH_v2)
    P("cuMemcpyDtoD", 3020, cuMemcpyDtoD_v2)
    P("cuMemcpyHtoDAsync", 3020, cuMemcpyHtoDAsync_v2)
    P("cuMemcpyDtoHAsync", 3020, cuMemcpyDtoHAsync_v2)
    P("cuMemcpyDtoDAsync", 3020, cuMemcpyDtoDAsync_v2)
    P("cuMemsetD8", 3020, cuMemsetD8_v2)
    P("cuMemsetD16", 3020, cuMemsetD16_v2)
    P("cuMemsetD32", 3020, cuMemsetD32_v2)
    P("cuMemsetD8Async", 3020, cuMemsetD8Async)
    P("cuMemsetD16Async", 3020, cuMemsetD16Async)
    P("cuMemsetD32Async", 3020, cuMemsetD32Async)
    P("cuStreamCreate", 2000, cuStreamCreate)
    P("cuStreamCreateWithPriority", 5050, cuStreamCreateWithPriority)
    P("cuStreamDestroy", 4000, cuStreamDestroy_v2)
    P("cuStreamDestroy", 2000, cuStreamDestroy)
    P("cuStreamSynchronize", 2000, cuStreamSynchronize)
    P("cuStreamQuery", 2000, cuStreamQuery)
    P("cuStreamWaitEvent", 3020, cuStreamWaitEvent)
    P("cuStreamAddCallback", 5000, cuStreamAddCallback)
    P("cuLaunchHostFunc", 10000, cuLaunchHostFunc)
    P("cuEventCreate", 2000, cuEventCreate)
    P("cuEventRecord", 2000, cuEventRecord)
    P("cuEventQuery", 2000, cuEventQuery)
    P("cuEventSynchronize", 2000, cuEventSynchronize)
    P("cuEventDestroy", 4000, cuEventDestroy_v2)
    P("cuEventDestroy", 2000, cuEventDestroy)
    P("cuEventElapsedTime", 12080, cuEventElapsedTime_v2)
    P("cuEventElapsedTime", 2000, cuEventElapsedTime)
    P("cuGraphCreate", 10000, cuGraphCreate)
    P("cuGraphDestroy", 10000, cuGraphDestroy)
    P("cuGraphAddEmptyNode", 10000, cuGraphAddEmptyNode)
    P("cuGraphAddHostNode", 10000, cuGraphAddHostNode)
    P("cuGraphAddMemsetNode", 10000, cuGraphAddMemsetNode)
    P("cuGraphAddMemcpyNode", 10000, cuGraphAddMemcpyNode)
    P("cuGraphAddKernelNode", 12000, cuGraphAddKernelNode_v2)
    P("cuGraphAddKernelNode", 10000, cuGraphAddKernelNode)
    // As libcuda: the name keeps its pre-CUDA 12 signature at every
    // version (cudaTypedefs.h has no PFN_cuGraphInstantiate_v12000); cuda.h's
    // rename to cuGraphInstantiateWithFlags is the header's alone.
    P("cuGraphInstantiate", 11000, cuGraphInstantiate_v2)
    P("cuGraphInstantiate", 10000, cuGraphInstantiate)
    P("cuGraphInstantiateWithFlags", 11040, cuGraphInstantiateWithFlags)
    P("cuGraphLaunch", 10000, cuGraphLaunch)
    P("cuGraphExecUpdate", 12000, cuGraphExecUpdate_v2)
    P("cuGraphExecUpdate", 10020, cuGraphExecUpdate)
    P("cuGraphExecDestroy", 10000, cuGraphExecDestroy)
    P("cuModuleLoad", 2000, cuModuleLoad)
    P("cuModuleLoadData", 2000, cuModuleLoadData)
    P("cuModuleUnload", 2000, cuModuleUnload)
    P("cuModuleGetFunction", 2000, cuModuleGetFunction)
    P("cuFuncGetParamInfo", 12040, cuFuncGetParamInfo)
    P("cuLaunchKernel", 4000, cuLaunchKernel)
};
// clang-format on
#undef P

VGPU_EXPORT CUresult CUDAAPI cuGetProcAddress_v2(
    const char* symbol, void** pfn, int cudaVersion, cuuint64_t flags,
    CUdriverProcAddressQueryResult* symbolStatus) {
  VGPU_CALL_GUARD(CUDA_ERROR_DEINITIALIZED);
  int fault = 0;
  vgpu_status st =
      vgpu_api_enter("cuGetProcAddress", vgpu_cu_fault_device, &fault);
  if (st == VGPU_ERR_FAULT)
    return (CUresult)fault;
  if (st != VGPU_OK)
    return vgpu_cu_result(st);
  (void)flags;
  if (symbol == NULL || pfn == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  *pfn = NULL;
  CUdriverProcAddressQueryResult result = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  if (!vgpu_symbol_hidden(symbol)) {
    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); ++i) {
      if (strcmp(table[i].name, symbol) != 0)
        continue;
      if (cudaVersion < table[i].version) {
        result = CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
        continue;
      }
      // A function pointer travels through void** by its bytes.
      memcpy(pfn, &table[i].fn, sizeof(table[i].fn));
      result = CU_GET_PROC_ADDRESS_SUCCESS;
      break;
    }
  }
  if (symbolStatus != NULL)
    *symbolStatus = result;
  return result == CU_GET_PROC_ADDRESS_SUCCESS ? CUDA_SUCCESS
                                               : CUDA_ERROR_NOT_FOUND;
}

VGPU_EXPORT CUresult CUDAAPI cuGetProcAddress(const char* symbol, void** pfn,
                                              int cudaVersion,
                                              cuuint64_t flags) {
  return cuGetProcAddress_v2(symbol, pfn, cudaVersion, flags, NULL);
}
