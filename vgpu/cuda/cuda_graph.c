// CUDA facade: graphs.
#include <stdlib.h>
#include <string.h>

#include "cuda_facade.h"

static CUresult add_node(CUgraphNode* ph, CUgraph g, const CUgraphNode* deps,
                         size_t n, const vgpu_node_desc* desc) {
  if (ph == NULL || (n > 0 && deps == NULL))
    return CUDA_ERROR_INVALID_VALUE;
  uint64_t* hs = malloc((n ? n : 1) * sizeof(uint64_t));
  if (hs == NULL)
    return CUDA_ERROR_OUT_OF_MEMORY;
  for (size_t i = 0; i < n; ++i)
    hs[i] = vgpu_cu_h(deps[i]);
  uint64_t h = 0;
  vgpu_status st = vgpu_graph_add_node(vgpu_cu_h(g), hs, n, desc, &h);
  free(hs);
  if (st == VGPU_OK)
    *ph = (CUgraphNode)(uintptr_t)h;
  return vgpu_cu_result(st);
}

static CUresult check_ctx(CUcontext ctx) {
  int dev = 0;
  if (ctx == NULL)
    return CUDA_SUCCESS;
  return vgpu_cu_result(vgpu_context_device(vgpu_cu_h(ctx), &dev));
}

VGPU_EXPORT CUresult CUDAAPI cuGraphCreate(CUgraph* phGraph,
                                           unsigned int flags) {
  VGPU_CU_ENTER("cuGraphCreate");
  if (phGraph == NULL || flags != 0)
    return CUDA_ERROR_INVALID_VALUE;
  uint64_t h = 0;
  VGPU_CU_TRY(vgpu_graph_create(&h));
  *phGraph = (CUgraph)(uintptr_t)h;
  return CUDA_SUCCESS;
}

VGPU_EXPORT CUresult CUDAAPI cuGraphDestroy(CUgraph hGraph) {
  VGPU_CU_ENTER("cuGraphDestroy");
  return vgpu_cu_result(vgpu_graph_destroy(vgpu_cu_h(hGraph)));
}

VGPU_EXPORT CUresult CUDAAPI
cuGraphAddEmptyNode(CUgraphNode* phGraphNode, CUgraph hGraph,
                    const CUgraphNode* dependencies, size_t numDependencies) {
  VGPU_CU_ENTER("cuGraphAddEmptyNode");
  vgpu_node_desc d = {.type = VGPU_NODE_EMPTY};
  return add_node(phGraphNode, hGraph, dependencies, numDependencies, &d);
}

VGPU_EXPORT CUresult CUDAAPI cuGraphAddHostNode(
    CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
    size_t numDependencies, const CUDA_HOST_NODE_PARAMS* nodeParams) {
  VGPU_CU_ENTER("cuGraphAddHostNode");
  if (nodeParams == NULL || nodeParams->fn == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  vgpu_node_desc d = {.type = VGPU_NODE_HOST};
  d.host.invoke = vgpu_cu_invoke_host_fn;
  d.host.fn = (void (*)(void))nodeParams->fn;
  d.host.user = nodeParams->userData;
  return add_node(phGraphNode, hGraph, dependencies, numDependencies, &d);
}

VGPU_EXPORT CUresult CUDAAPI cuGraphAddMemsetNode(
    CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
    size_t numDependencies, const CUDA_MEMSET_NODE_PARAMS* memsetParams,
    CUcontext ctx) {
  VGPU_CU_ENTER("cuGraphAddMemsetNode");
  if (memsetParams == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  CUresult r = check_ctx(ctx);
  if (r != CUDA_SUCCESS)
    return r;
  vgpu_node_desc d = {.type = VGPU_NODE_FILL};
  d.fill.dst = vgpu_cu_ptr(memsetParams->dst);
  d.fill.value = memsetParams->value;
  d.fill.elem = memsetParams->elementSize;
  d.fill.width = memsetParams->width;
  d.fill.height = memsetParams->height;
  d.fill.pitch = memsetParams->height > 1
                     ? memsetParams->pitch
                     : memsetParams->width * memsetParams->elementSize;
  if (d.fill.width == 0 || d.fill.height == 0)
    return CUDA_ERROR_INVALID_VALUE;
  return add_node(phGraphNode, hGraph, dependencies, numDependencies, &d);
}

// One side of a CUDA_MEMCPY3D: base pointer, pitch and slice.
static CUresult copy_side(CUmemorytype type, const void* host,
                          CUdeviceptr device, const void* array,
                          const void* reserved, size_t x, size_t y, size_t z,
                          size_t lod, size_t pitch, size_t height, size_t width,
                          const CUDA_MEMCPY3D* p, void** base,
                          size_t* out_pitch, size_t* out_slice,
                          vgpu_ptr_kind* kind) {
  if (array != NULL || reserved != NULL || lod != 0)
    return CUDA_ERROR_INVALID_VALUE;
  const uint8_t* ptr = NULL;
  switch (type) {
    case CU_MEMORYTYPE_HOST:
      ptr = host;
      *kind = VGPU_PTR_HOST;
      break;
    case CU_MEMORYTYPE_DEVICE:
      ptr = vgpu_cu_ptr(device);
      *kind = VGPU_PTR_DEVICE;
      break;
    case CU_MEMORYTYPE_UNIFIED:
      ptr = vgpu_cu_ptr(device);
      *kind = VGPU_PTR_ANY;
      break;
    default:
      return CUDA_ERROR_INVALID_VALUE;  // arrays are not supported
  }
  if (pitch == 0)
    pitch = width;
  if (height == 0)
    height = p->Height;
  *out_pitch = pitch;
  *out_slice = pitch * height;
  *base = (void*)(uintptr_t)(ptr + z * (*out_slice) + y * pitch + x);
  return CUDA_SUCCESS;
}

VGPU_EXPORT CUresult CUDAAPI cuGraphAddMemcpyNode(
    CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
    size_t numDependencies, const CUDA_MEMCPY3D* p, CUcontext ctx) {
  VGPU_CU_ENTER("cuGraphAddMemcpyNode");
  if (p == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  CUresult r = check_ctx(ctx);
  if (r != CUDA_SUCCESS)
    return r;
  vgpu_node_desc d = {.type = VGPU_NODE_COPY};
  vgpu_copy* c = &d.copy;
  void* src = NULL;
  r = copy_side(p->srcMemoryType, p->srcHost, p->srcDevice, p->srcArray,
                p->reserved0, p->srcXInBytes, p->srcY, p->srcZ, p->srcLOD,
                p->srcPitch, p->srcHeight, p->WidthInBytes, p, &src,
                &c->src_pitch, &c->src_slice, &c->src_kind);
  if (r != CUDA_SUCCESS)
    return r;
  r = copy_side(p->dstMemoryType, p->dstHost, p->dstDevice, p->dstArray,
                p->reserved1, p->dstXInBytes, p->dstY, p->dstZ, p->dstLOD,
                p->dstPitch, p->dstHeight, p->WidthInBytes, p, &c->dst,
                &c->dst_pitch, &c->dst_slice, &c->dst_kind);
  if (r != CUDA_SUCCESS)
    return r;
  c->src = src;
  c->width = p->WidthInBytes;
  c->height = p->Height;
  c->depth = p->Depth;
  if (c->width == 0 || c->height == 0 || c->depth == 0)
    return CUDA_ERROR_INVALID_VALUE;
  return add_node(phGraphNode, hGraph, dependencies, numDependencies, &d);
}

static CUresult add_kernel_node(CUgraphNode* ph, CUgraph g,
                                const CUgraphNode* deps, size_t n,
                                const CUDA_KERNEL_NODE_PARAMS_v1* p) {
  if (p == NULL || p->func == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  vgpu_node_desc d = {.type = VGPU_NODE_KERNEL};
  d.launch.function = vgpu_cu_h(p->func);
  d.launch.grid = (vgpu_dim3){p->gridDimX, p->gridDimY, p->gridDimZ};
  d.launch.block = (vgpu_dim3){p->blockDimX, p->blockDimY, p->blockDimZ};
  d.launch.shared_bytes = p->sharedMemBytes;
  d.launch.params = p->kernelParams;
  if (p->kernelParams == NULL && p->extra != NULL) {
    // extra: {BUFFER_POINTER, p, BUFFER_SIZE, &size, END}
    for (void** e = p->extra; *e != CU_LAUNCH_PARAM_END; e += 2) {
      if (e[0] == CU_LAUNCH_PARAM_BUFFER_POINTER) {
        d.launch.buffer = e[1];
      } else if (e[0] == CU_LAUNCH_PARAM_BUFFER_SIZE && e[1] != NULL) {
        memcpy(&d.launch.buffer_size, e[1], sizeof(size_t));
      } else {
        return CUDA_ERROR_INVALID_VALUE;
      }
    }
  }
  return add_node(ph, g, deps, n, &d);
}

VGPU_EXPORT CUresult CUDAAPI cuGraphAddKernelNode(
    CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
    size_t numDependencies, const CUDA_KERNEL_NODE_PARAMS* nodeParams) {
  VGPU_CU_ENTER("cuGraphAddKernelNode");
  if (nodeParams == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  if (nodeParams->func == NULL)
    return CUDA_ERROR_INVALID_VALUE;  // CUkernel
  CUDA_KERNEL_NODE_PARAMS_v1 v1;
  memcpy(&v1, nodeParams, sizeof(v1));  // v2 extends v1
  return add_kernel_node(phGraphNode, hGraph, dependencies, numDependencies,
                         &v1);
}

#undef cuGraphAddKernelNode
VGPU_EXPORT CUresult CUDAAPI cuGraphAddKernelNode(
    CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
    size_t numDependencies, const CUDA_KERNEL_NODE_PARAMS_v1* nodeParams);
VGPU_EXPORT CUresult CUDAAPI cuGraphAddKernelNode(
    CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
    size_t numDependencies, const CUDA_KERNEL_NODE_PARAMS_v1* nodeParams) {
  VGPU_CU_ENTER("cuGraphAddKernelNode");
  return add_kernel_node(phGraphNode, hGraph, dependencies, numDependencies,
                         nodeParams);
}

VGPU_EXPORT CUresult CUDAAPI cuGraphInstantiateWithFlags(
    CUgraphExec* phGraphExec, CUgraph hGraph, unsigned long long flags) {
  VGPU_CU_ENTER("cuGraphInstantiate");
  const unsigned long long known =
      CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH |
      CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD |
      CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY;
  if (phGraphExec == NULL || (flags & ~known) != 0)
    return CUDA_ERROR_INVALID_VALUE;
  uint64_t h = 0;
  VGPU_CU_TRY(vgpu_graph_instantiate(vgpu_cu_h(hGraph), &h));
  *phGraphExec = (CUgraphExec)(uintptr_t)h;
  return CUDA_SUCCESS;
}

// Pre-CUDA 12 signature, still exported by libcuda (and as _v2).
#undef cuGraphInstantiate
VGPU_EXPORT CUresult CUDAAPI cuGraphInstantiate(CUgraphExec* phGraphExec,
                                                CUgraph hGraph,
                                                CUgraphNode* phErrorNode,
                                                char* logBuffer,
                                                size_t bufferSize);
VGPU_EXPORT CUresult CUDAAPI cuGraphInstantiate(CUgraphExec* phGraphExec,
                                                CUgraph hGraph,
                                                CUgraphNode* phErrorNode,
                                                char* logBuffer,
                                                size_t bufferSize) {
  if (phErrorNode != NULL)
    *phErrorNode = NULL;
  if (logBuffer != NULL && bufferSize > 0)
    logBuffer[0] = '\0';
  return cuGraphInstantiateWithFlags(phGraphExec, hGraph, 0);
}

VGPU_EXPORT CUresult CUDAAPI cuGraphInstantiate_v2(CUgraphExec* phGraphExec,
                                                   CUgraph hGraph,
                                                   CUgraphNode* phErrorNode,
                                                   char* logBuffer,
                                                   size_t bufferSize);
VGPU_EXPORT CUresult CUDAAPI cuGraphInstantiate_v2(CUgraphExec* phGraphExec,
                                                   CUgraph hGraph,
                                                   CUgraphNode* phErrorNode,
                                                   char* logBuffer,
                                                   size_t bufferSize) {
  return cuGraphInstantiate(phGraphExec, hGraph, phErrorNode, logBuffer,
                            bufferSize);
}

VGPU_EXPORT CUresult CUDAAPI cuGraphLaunch(CUgraphExec hGraphExec,
                                           CUstream hStream) {
  VGPU_CU_ENTER("cuGraphLaunch");
  int dev = 0;
  VGPU_CU_TRY(vgpu_cu_stream_device(hStream, &dev));
  return vgpu_cu_result(
      vgpu_graph_launch(vgpu_cu_h(hGraphExec), vgpu_cu_h(hStream), dev));
}

static CUgraphExecUpdateResult update_result(vgpu_update_result r) {
  switch (r) {
    case VGPU_UPDATE_OK:
      return CU_GRAPH_EXEC_UPDATE_SUCCESS;
    case VGPU_UPDATE_TOPOLOGY_CHANGED:
      return CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
    case VGPU_UPDATE_NODE_TYPE_CHANGED:
      return CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED;
    case VGPU_UPDATE_PARAMETERS_CHANGED:
      return CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED;
    case VGPU_UPDATE_ERROR:
      break;
  }
  return CU_GRAPH_EXEC_UPDATE_ERROR;
}

VGPU_EXPORT CUresult CUDAAPI
cuGraphExecUpdate(CUgraphExec hGraphExec, CUgraph hGraph,
                  CUgraphExecUpdateResultInfo* resultInfo) {
  VGPU_CU_ENTER("cuGraphExecUpdate");
  if (resultInfo == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  vgpu_update_result r = VGPU_UPDATE_ERROR;
  uint64_t bad = 0, from = 0;
  vgpu_status st = vgpu_graph_exec_update(vgpu_cu_h(hGraphExec),
                                          vgpu_cu_h(hGraph), &r, &bad, &from);
  resultInfo->result = update_result(r);
  resultInfo->errorNode = (CUgraphNode)(uintptr_t)bad;
  resultInfo->errorFromNode = (CUgraphNode)(uintptr_t)from;
  return vgpu_cu_result(st);
}

#undef cuGraphExecUpdate
VGPU_EXPORT CUresult CUDAAPI cuGraphExecUpdate(
    CUgraphExec hGraphExec, CUgraph hGraph, CUgraphNode* hErrorNode_out,
    CUgraphExecUpdateResult* updateResult_out);
VGPU_EXPORT CUresult CUDAAPI cuGraphExecUpdate(
    CUgraphExec hGraphExec, CUgraph hGraph, CUgraphNode* hErrorNode_out,
    CUgraphExecUpdateResult* updateResult_out) {
  if (hErrorNode_out == NULL || updateResult_out == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  CUgraphExecUpdateResultInfo info;
  memset(&info, 0, sizeof(info));
  CUresult r = cuGraphExecUpdate_v2(hGraphExec, hGraph, &info);
  *hErrorNode_out = info.errorNode;
  *updateResult_out = info.result;
  return r;
}

VGPU_EXPORT CUresult CUDAAPI cuGraphExecDestroy(CUgraphExec hGraphExec) {
  VGPU_CU_ENTER("cuGraphExecDestroy");
  return vgpu_cu_result(vgpu_graph_exec_destroy(vgpu_cu_h(hGraphExec)));
}
