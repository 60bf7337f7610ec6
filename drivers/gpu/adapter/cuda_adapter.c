// Copyright 2026 The HAL Authors.
//
// The CUDA Driver API adapter: what is CUDA's own. Everything shared with
// HIP up to spelling (most ops, the tables, the vendor descriptor) is in
// vendor_ops_impl.h, compiled for CUDA by cuda_ops.c.
//
// Loading: libcuda.so.1 (or $HAL_CUDA_LIBRARY). Only cuInit,
// cuDriverGetVersion, cuGetProcAddress_v2 and the error-name functions are
// dlsym()ed; every other entry point comes from cuGetProcAddress at the
// CUDA_VERSION of the cuda.h we are built against, so a driver newer than
// the header hands out the ABI the header declares (cuMemAlloc_v2, not a
// later revision). Needs a CUDA 12+ driver (cuGetProcAddress_v2).

#include <string.h>

#include "cuda_vendor.h"

//===--- symbols through cuGetProcAddress ---===//

hal_status_t gpu_cuda_lookup(gpu_adapter_base_t* base, const char* name,
                             void** out_pointer) {
  gpu_cuda_adapter_t* cuda = (gpu_cuda_adapter_t*)base;
  *out_pointer = NULL;
  void* pointer = NULL;
  CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  // LEGACY_STREAM: the entry points whose stream 0 is the legacy default
  // stream (we never use stream 0; the flag only makes the choice explicit).
  CUresult result = cuda->syms.cuGetProcAddress(
      name, &pointer, CUDA_VERSION, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &found);
  if (result == CUDA_SUCCESS && found == CU_GET_PROC_ADDRESS_SUCCESS) {
    *out_pointer = pointer;
    return HAL_OK;
  }
  // Not found, or only in a version newer than our header: missing.
  if (result == CUDA_SUCCESS || result == CUDA_ERROR_NOT_FOUND)
    return HAL_OK;
  return hal_status_annotatef(
      gpu_adapter_result_status(base, result, "cuGetProcAddress", __FILE__,
                                __LINE__),
      "looking up %s", name);
}

//===--- contexts: the primary context of each device ---===//

static gpu_cuda_adapter_t* gpu_cuda_cast(gpu_adapter_t* adapter) {
  return (gpu_cuda_adapter_t*)adapter;
}

hal_status_t gpu_cuda_context_open(gpu_adapter_t* adapter, int device,
                                   gpu_context_t** out_context) {
  gpu_cuda_adapter_t* cuda = gpu_cuda_cast(adapter);
  *out_context = NULL;
  CUdevice native_device = 0;
  GPU_RETURN_IF_ERROR(&cuda->base,
                      cuda->syms.cuDeviceGet(&native_device, device),
                      "cuDeviceGet");
  CUcontext context = NULL;
  GPU_RETURN_IF_ERROR(
      &cuda->base, cuda->syms.cuDevicePrimaryCtxRetain(&context, native_device),
      "cuDevicePrimaryCtxRetain");
  hal_status_t status = gpu_adapter_context_allocate(
      adapter, device, native_device, context, out_context);
  if (status)
    (void)cuda->syms.cuDevicePrimaryCtxRelease(native_device);
  return status;
}

void gpu_cuda_context_close(gpu_adapter_t* adapter, gpu_context_t* context) {
  if (!context)
    return;
  // Every retain is paired with one release; the driver destroys the
  // primary context when the last one goes.
  (void)gpu_cuda_cast(adapter)->syms.cuDevicePrimaryCtxRelease(
      context->native_device);
  gpu_adapter_context_free(adapter, context);
}

hal_status_t gpu_cuda_make_current(gpu_adapter_t* adapter,
                                   gpu_context_t* context) {
  gpu_cuda_adapter_t* cuda = gpu_cuda_cast(adapter);
  GPU_RETURN_IF_ERROR(&cuda->base,
                      cuda->syms.cuCtxSetCurrent((CUcontext)context->native),
                      "cuCtxSetCurrent");
  return HAL_OK;
}

//===--- graph nodes whose parameters are CUDA's own ---===//

hal_status_t gpu_cuda_graph_add_memcpy_node(
    gpu_adapter_t* adapter, gpu_graph_t graph,
    const gpu_graph_node_t* dependencies, size_t dependency_count,
    gpu_device_ptr_t target, gpu_device_ptr_t source, uint64_t length,
    gpu_graph_node_t* out_node) {
  gpu_cuda_adapter_t* cuda = gpu_cuda_cast(adapter);
  *out_node = NULL;
  GPU_ADAPTER_REQUIRE(adapter, GPU_ADAPTER_CAP_GRAPH_MEMCPY_NODE,
                      "graph memcpy nodes");
  CUcontext context = NULL;
  HAL_RETURN_IF_ERROR(gpu_cuda_graph_context(adapter, &context));
  // CUDA has no 1-D memcpy node: a 3-D copy of one row, with unified
  // addressing on both sides (the driver infers host or device).
  CUDA_MEMCPY3D params;
  memset(&params, 0, sizeof(params));
  params.srcMemoryType = CU_MEMORYTYPE_UNIFIED;
  params.srcDevice = (CUdeviceptr)source;
  params.srcPitch = (size_t)length;
  params.srcHeight = 1;
  params.dstMemoryType = CU_MEMORYTYPE_UNIFIED;
  params.dstDevice = (CUdeviceptr)target;
  params.dstPitch = (size_t)length;
  params.dstHeight = 1;
  params.WidthInBytes = (size_t)length;
  params.Height = 1;
  params.Depth = 1;
  CUgraphNode node = NULL;
  GPU_RETURN_IF_ERROR(
      &cuda->base,
      cuda->syms.cuGraphAddMemcpyNode(&node, (CUgraph)graph,
                                      (const CUgraphNode*)dependencies,
                                      dependency_count, &params, context),
      "cuGraphAddMemcpyNode");
  *out_node = (gpu_graph_node_t)node;
  return HAL_OK;
}

hal_status_t gpu_cuda_graph_add_kernel_node(
    gpu_adapter_t* adapter, gpu_graph_t graph,
    const gpu_graph_node_t* dependencies, size_t dependency_count,
    const gpu_kernel_launch_t* launch, gpu_graph_node_t* out_node) {
  gpu_cuda_adapter_t* cuda = gpu_cuda_cast(adapter);
  *out_node = NULL;
  GPU_ADAPTER_REQUIRE(adapter, GPU_ADAPTER_CAP_GRAPH_KERNEL_NODE,
                      "graph kernel nodes");
  CUDA_KERNEL_NODE_PARAMS params;
  memset(&params, 0, sizeof(params));  // kern = NULL, ctx = NULL: use func
  params.func = (CUfunction)launch->function;
  params.gridDimX = launch->grid[0];
  params.gridDimY = launch->grid[1];
  params.gridDimZ = launch->grid[2];
  params.blockDimX = launch->block[0];
  params.blockDimY = launch->block[1];
  params.blockDimZ = launch->block[2];
  params.sharedMemBytes = launch->shared_memory_bytes;
  params.kernelParams = launch->args;
  CUgraphNode node = NULL;
  GPU_RETURN_IF_ERROR(
      &cuda->base,
      cuda->syms.cuGraphAddKernelNode(&node, (CUgraph)graph,
                                      (const CUgraphNode*)dependencies,
                                      dependency_count, &params),
      "cuGraphAddKernelNode");
  *out_node = (gpu_graph_node_t)node;
  return HAL_OK;
}
