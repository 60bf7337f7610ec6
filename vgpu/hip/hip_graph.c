// HIP facade: graphs.
#include <stdlib.h>
#include <string.h>

#include "hip_facade.h"

static hipError_t add_node(hipGraphNode_t* ph, hipGraph_t g,
                           const hipGraphNode_t* deps, size_t n,
                           const vgpu_node_desc* desc) {
  if (ph == NULL || (n > 0 && deps == NULL))
    VGPU_HIP_RETURN(hipErrorInvalidValue);
  uint64_t* hs = malloc((n ? n : 1) * sizeof(uint64_t));
  if (hs == NULL)
    VGPU_HIP_RETURN(hipErrorOutOfMemory);
  for (size_t i = 0; i < n; ++i)
    hs[i] = vgpu_hip_h(deps[i]);
  uint64_t h = 0;
  vgpu_status st = vgpu_graph_add_node(vgpu_hip_h(g), hs, n, desc, &h);
  free(hs);
  if (st == VGPU_OK)
    *ph = (hipGraphNode_t)(uintptr_t)h;
  VGPU_HIP_RETURN_ST(st);
}

VGPU_EXPORT hipError_t hipGraphCreate(hipGraph_t* pGraph, unsigned int flags) {
  VGPU_HIP_ENTER("hipGraphCreate");
  if (pGraph == NULL || flags != 0)
    VGPU_HIP_RETURN(hipErrorInvalidValue);
  uint64_t h = 0;
  VGPU_HIP_TRY(vgpu_graph_create(&h));
  *pGraph = (hipGraph_t)(uintptr_t)h;
  return hipSuccess;
}

VGPU_EXPORT hipError_t hipGraphDestroy(hipGraph_t graph) {
  VGPU_HIP_ENTER("hipGraphDestroy");
  VGPU_HIP_RETURN_ST(vgpu_graph_destroy(vgpu_hip_h(graph)));
}

VGPU_EXPORT hipError_t hipGraphAddEmptyNode(hipGraphNode_t* pGraphNode,
                                            hipGraph_t graph,
                                            const hipGraphNode_t* pDependencies,
                                            size_t numDependencies) {
  VGPU_HIP_ENTER("hipGraphAddEmptyNode");
  vgpu_node_desc d = {.type = VGPU_NODE_EMPTY};
  return add_node(pGraphNode, graph, pDependencies, numDependencies, &d);
}

VGPU_EXPORT hipError_t
hipGraphAddHostNode(hipGraphNode_t* pGraphNode, hipGraph_t graph,
                    const hipGraphNode_t* pDependencies, size_t numDependencies,
                    const hipHostNodeParams* pNodeParams) {
  VGPU_HIP_ENTER("hipGraphAddHostNode");
  if (pNodeParams == NULL || pNodeParams->fn == NULL)
    VGPU_HIP_RETURN(hipErrorInvalidValue);
  vgpu_node_desc d = {.type = VGPU_NODE_HOST};
  d.host.invoke = vgpu_hip_invoke_host_fn;
  d.host.fn = (void (*)(void))pNodeParams->fn;
  d.host.user = pNodeParams->userData;
  return add_node(pGraphNode, graph, pDependencies, numDependencies, &d);
}

VGPU_EXPORT hipError_t hipGraphAddMemsetNode(
    hipGraphNode_t* pGraphNode, hipGraph_t graph,
    const hipGraphNode_t* pDependencies, size_t numDependencies,
    const hipMemsetParams* pMemsetParams) {
  VGPU_HIP_ENTER("hipGraphAddMemsetNode");
  const hipMemsetParams* p = pMemsetParams;
  if (p == NULL || p->width == 0 || p->height == 0)
    VGPU_HIP_RETURN(hipErrorInvalidValue);
  vgpu_node_desc d = {.type = VGPU_NODE_FILL};
  d.fill.dst = p->dst;
  d.fill.value = p->value;
  d.fill.elem = p->elementSize;
  d.fill.width = p->width;
  d.fill.height = p->height;
  d.fill.pitch = p->height > 1 ? p->pitch : p->width * p->elementSize;
  return add_node(pGraphNode, graph, pDependencies, numDependencies, &d);
}

VGPU_EXPORT hipError_t hipGraphAddMemcpyNode(
    hipGraphNode_t* pGraphNode, hipGraph_t graph,
    const hipGraphNode_t* pDependencies, size_t numDependencies,
    const hipMemcpy3DParms* pCopyParams) {
  VGPU_HIP_ENTER("hipGraphAddMemcpyNode");
  const hipMemcpy3DParms* p = pCopyParams;
  if (p == NULL || p->srcArray != NULL || p->dstArray != NULL)
    VGPU_HIP_RETURN(hipErrorInvalidValue);
  vgpu_node_desc d = {.type = VGPU_NODE_COPY};
  vgpu_copy* c = &d.copy;
  if (!vgpu_hip_copy_kinds(p->kind, &c->dst_kind, &c->src_kind))
    VGPU_HIP_RETURN(hipErrorInvalidMemcpyDirection);
  c->width = p->extent.width;
  c->height = p->extent.height;
  c->depth = p->extent.depth;
  if (c->width == 0 || c->height == 0 || c->depth == 0)
    VGPU_HIP_RETURN(hipErrorInvalidValue);
  c->src_pitch = p->srcPtr.pitch ? p->srcPtr.pitch : c->width;
  c->dst_pitch = p->dstPtr.pitch ? p->dstPtr.pitch : c->width;
  c->src_slice = c->src_pitch * (p->srcPtr.ysize ? p->srcPtr.ysize : c->height);
  c->dst_slice = c->dst_pitch * (p->dstPtr.ysize ? p->dstPtr.ysize : c->height);
  c->src = (const uint8_t*)p->srcPtr.ptr + p->srcPos.z * c->src_slice +
           p->srcPos.y * c->src_pitch + p->srcPos.x;
  c->dst = (uint8_t*)p->dstPtr.ptr + p->dstPos.z * c->dst_slice +
           p->dstPos.y * c->dst_pitch + p->dstPos.x;
  return add_node(pGraphNode, graph, pDependencies, numDependencies, &d);
}

VGPU_EXPORT hipError_t hipGraphAddMemcpyNode1D(
    hipGraphNode_t* pGraphNode, hipGraph_t graph,
    const hipGraphNode_t* pDependencies, size_t numDependencies, void* dst,
    const void* src, size_t count, hipMemcpyKind kind) {
  VGPU_HIP_ENTER("hipGraphAddMemcpyNode1D");
  vgpu_node_desc d = {.type = VGPU_NODE_COPY};
  vgpu_ptr_kind dk, sk;
  if (!vgpu_hip_copy_kinds(kind, &dk, &sk))
    VGPU_HIP_RETURN(hipErrorInvalidMemcpyDirection);
  if (count == 0)
    VGPU_HIP_RETURN(hipErrorInvalidValue);
  vgpu_copy_init_1d(&d.copy, dst, dk, src, sk, count);
  return add_node(pGraphNode, graph, pDependencies, numDependencies, &d);
}

VGPU_EXPORT hipError_t hipGraphAddKernelNode(
    hipGraphNode_t* pGraphNode, hipGraph_t graph,
    const hipGraphNode_t* pDependencies, size_t numDependencies,
    const hipKernelNodeParams* pNodeParams) {
  VGPU_HIP_ENTER("hipGraphAddKernelNode");
  const hipKernelNodeParams* p = pNodeParams;
  if (p == NULL || p->func == NULL)
    VGPU_HIP_RETURN(hipErrorInvalidValue);
  // |func| carries a hipFunction_t from hipModuleGetFunction.
  vgpu_node_desc d = {.type = VGPU_NODE_KERNEL};
  d.launch.function = vgpu_hip_h(p->func);
  d.launch.grid = (vgpu_dim3){p->gridDim.x, p->gridDim.y, p->gridDim.z};
  d.launch.block = (vgpu_dim3){p->blockDim.x, p->blockDim.y, p->blockDim.z};
  d.launch.shared_bytes = p->sharedMemBytes;
  d.launch.params = p->kernelParams;
  if (p->kernelParams == NULL && p->extra != NULL &&
      !vgpu_hip_parse_extra(p->extra, &d.launch))
    VGPU_HIP_RETURN(hipErrorInvalidValue);
  return add_node(pGraphNode, graph, pDependencies, numDependencies, &d);
}

static hipError_t instantiate(hipGraphExec_t* pGraphExec, hipGraph_t graph) {
  if (pGraphExec == NULL)
    VGPU_HIP_RETURN(hipErrorInvalidValue);
  uint64_t h = 0;
  VGPU_HIP_TRY(vgpu_graph_instantiate(vgpu_hip_h(graph), &h));
  *pGraphExec = (hipGraphExec_t)(uintptr_t)h;
  return hipSuccess;
}

VGPU_EXPORT hipError_t hipGraphInstantiate(hipGraphExec_t* pGraphExec,
                                           hipGraph_t graph,
                                           hipGraphNode_t* pErrorNode,
                                           char* pLogBuffer,
                                           size_t bufferSize) {
  VGPU_HIP_ENTER("hipGraphInstantiate");
  if (pErrorNode != NULL)
    *pErrorNode = NULL;
  if (pLogBuffer != NULL && bufferSize > 0)
    pLogBuffer[0] = '\0';
  return instantiate(pGraphExec, graph);
}

VGPU_EXPORT hipError_t hipGraphInstantiateWithFlags(hipGraphExec_t* pGraphExec,
                                                    hipGraph_t graph,
                                                    unsigned long long flags) {
  VGPU_HIP_ENTER("hipGraphInstantiateWithFlags");
  if ((flags & ~(unsigned long long)hipGraphInstantiateFlagAutoFreeOnLaunch) !=
      0)
    VGPU_HIP_RETURN(hipErrorInvalidValue);
  return instantiate(pGraphExec, graph);
}

VGPU_EXPORT hipError_t hipGraphLaunch(hipGraphExec_t graphExec,
                                      hipStream_t stream) {
  VGPU_HIP_ENTER("hipGraphLaunch");
  int dev = 0;
  VGPU_HIP_TRY(vgpu_hip_stream_device(stream, &dev));
  VGPU_HIP_RETURN_ST(
      vgpu_graph_launch(vgpu_hip_h(graphExec), vgpu_hip_h(stream), dev));
}

VGPU_EXPORT hipError_t
hipGraphExecUpdate(hipGraphExec_t hGraphExec, hipGraph_t hGraph,
                   hipGraphNode_t* hErrorNode_out,
                   hipGraphExecUpdateResult* updateResult_out) {
  VGPU_HIP_ENTER("hipGraphExecUpdate");
  if (hErrorNode_out == NULL || updateResult_out == NULL)
    VGPU_HIP_RETURN(hipErrorInvalidValue);
  vgpu_update_result r = VGPU_UPDATE_ERROR;
  uint64_t bad = 0, from = 0;
  vgpu_status st = vgpu_graph_exec_update(vgpu_hip_h(hGraphExec),
                                          vgpu_hip_h(hGraph), &r, &bad, &from);
  switch (r) {
    case VGPU_UPDATE_OK:
      *updateResult_out = hipGraphExecUpdateSuccess;
      break;
    case VGPU_UPDATE_TOPOLOGY_CHANGED:
      *updateResult_out = hipGraphExecUpdateErrorTopologyChanged;
      break;
    case VGPU_UPDATE_NODE_TYPE_CHANGED:
      *updateResult_out = hipGraphExecUpdateErrorNodeTypeChanged;
      break;
    case VGPU_UPDATE_PARAMETERS_CHANGED:
      *updateResult_out = hipGraphExecUpdateErrorParametersChanged;
      break;
    case VGPU_UPDATE_ERROR:
      *updateResult_out = hipGraphExecUpdateError;
      break;
  }
  *hErrorNode_out = (hipGraphNode_t)(uintptr_t)bad;
  VGPU_HIP_RETURN_ST(st);
}

VGPU_EXPORT hipError_t hipGraphExecDestroy(hipGraphExec_t graphExec) {
  VGPU_HIP_ENTER("hipGraphExecDestroy");
  VGPU_HIP_RETURN_ST(vgpu_graph_exec_destroy(vgpu_hip_h(graphExec)));
}
