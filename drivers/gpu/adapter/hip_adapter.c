// Copyright 2026 The HAL Authors.
//
// The HIP runtime adapter: what is HIP's own. Everything shared with CUDA
// up to spelling (most ops, the tables, the vendor descriptor, the
// host-function fallback) is in vendor_ops_impl.h, compiled for HIP by
// hip_ops.c.
//
// Loading: libamdhip64.so, then its versioned names newest first (Debian
// installs libamdhip64.so.5 with the runtime and the unversioned link with
// -dev), or $HAL_HIP_LIBRARY. Every symbol is dlsym()ed.
//
// What real HIP runtimes lack, and the fallbacks (docs/adapters.md):
//  - hipLaunchHostFunc (declared but not exported by Debian's 5.2.3):
//    emulated with hipStreamAddCallback;
//  - graph entry points: capability bits off, graph ops UNIMPLEMENTED.

#include <string.h>

#include "hip_vendor.h"

//===--- contexts: HIP's are implicit, one per device and thread ---===//

static gpu_hip_adapter_t* gpu_hip_cast(gpu_adapter_t* adapter) {
  return (gpu_hip_adapter_t*)adapter;
}

hal_status_t gpu_hip_context_open(gpu_adapter_t* adapter, int device,
                                  gpu_context_t** out_context) {
  gpu_hip_adapter_t* hip = gpu_hip_cast(adapter);
  *out_context = NULL;
  // Validates the ordinal; nothing to retain.
  hipDevice_t native_device = 0;
  GPU_RETURN_IF_ERROR(&hip->base,
                      hip->syms.hipDeviceGet(&native_device, device),
                      "hipDeviceGet");
  return gpu_adapter_context_allocate(adapter, device, native_device, NULL,
                                      out_context);
}

void gpu_hip_context_close(gpu_adapter_t* adapter, gpu_context_t* context) {
  gpu_adapter_context_free(adapter, context);
}

hal_status_t gpu_hip_make_current(gpu_adapter_t* adapter,
                                  gpu_context_t* context) {
  gpu_hip_adapter_t* hip = gpu_hip_cast(adapter);
  GPU_RETURN_IF_ERROR(&hip->base, hip->syms.hipSetDevice(context->device),
                      "hipSetDevice");
  return HAL_OK;
}

//===--- graph nodes whose parameters are HIP's own ---===//

hal_status_t gpu_hip_graph_add_memcpy_node(
    gpu_adapter_t* adapter, gpu_graph_t graph,
    const gpu_graph_node_t* dependencies, size_t dependency_count,
    gpu_device_ptr_t target, gpu_device_ptr_t source, uint64_t length,
    gpu_graph_node_t* out_node) {
  gpu_hip_adapter_t* hip = gpu_hip_cast(adapter);
  *out_node = NULL;
  GPU_ADAPTER_REQUIRE(adapter, GPU_ADAPTER_CAP_GRAPH_MEMCPY_NODE,
                      "graph memcpy nodes");
  // HIP has a 1-D memcpy node; hipMemcpyDefault infers the direction.
  hipGraphNode_t node = NULL;
  GPU_RETURN_IF_ERROR(
      &hip->base,
      hip->syms.hipGraphAddMemcpyNode1D(
          &node, (hipGraph_t)graph, (const hipGraphNode_t*)dependencies,
          dependency_count, (void*)(uintptr_t)target,
          (const void*)(uintptr_t)source, (size_t)length, hipMemcpyDefault),
      "hipGraphAddMemcpyNode1D");
  *out_node = (gpu_graph_node_t)node;
  return HAL_OK;
}

hal_status_t gpu_hip_graph_add_kernel_node(gpu_adapter_t* adapter,
                                           gpu_graph_t graph,
                                           const gpu_graph_node_t* dependencies,
                                           size_t dependency_count,
                                           const gpu_kernel_launch_t* launch,
                                           gpu_graph_node_t* out_node) {
  gpu_hip_adapter_t* hip = gpu_hip_cast(adapter);
  *out_node = NULL;
  GPU_ADAPTER_REQUIRE(adapter, GPU_ADAPTER_CAP_GRAPH_KERNEL_NODE,
                      "graph kernel nodes");
  // dim3 fields, and |func| is a void* taking the hipFunction_t.
  hipKernelNodeParams params;
  memset(&params, 0, sizeof(params));
  params.func = (void*)launch->function;
  params.gridDim.x = launch->grid[0];
  params.gridDim.y = launch->grid[1];
  params.gridDim.z = launch->grid[2];
  params.blockDim.x = launch->block[0];
  params.blockDim.y = launch->block[1];
  params.blockDim.z = launch->block[2];
  params.sharedMemBytes = launch->shared_memory_bytes;
  params.kernelParams = launch->args;
  hipGraphNode_t node = NULL;
  GPU_RETURN_IF_ERROR(
      &hip->base,
      hip->syms.hipGraphAddKernelNode(&node, (hipGraph_t)graph,
                                      (const hipGraphNode_t*)dependencies,
                                      dependency_count, &params),
      "hipGraphAddKernelNode");
  *out_node = (gpu_graph_node_t)node;
  return HAL_OK;
}
