// The test table over the CUDA Driver API of a dlopen()ed library.
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "vapi.h"

#define STR_(x) #x
#define XSTR(x) STR_(x)  // the exported name: cuda.h's macros apply

// One entry per line: clang-format has no good layout for this table.
// clang-format off
#define CU_FNS(X) \
  X(cuInit) \
  X(cuDeviceGet) \
  X(cuDeviceGetCount) \
  X(cuDeviceGetUuid) \
  X(cuDeviceGetName) \
  X(cuDeviceTotalMem) \
  X(cuDevicePrimaryCtxRetain) \
  X(cuDevicePrimaryCtxRelease) \
  X(cuCtxSetCurrent) \
  X(cuMemAlloc) \
  X(cuMemFree) \
  X(cuMemAllocHost) \
  X(cuMemFreeHost) \
  X(cuMemcpyHtoD) \
  X(cuMemcpyDtoH) \
  X(cuMemcpyHtoDAsync) \
  X(cuMemcpyDtoHAsync) \
  X(cuMemcpyDtoDAsync) \
  X(cuMemsetD8) \
  X(cuMemsetD16) \
  X(cuMemsetD32) \
  X(cuMemsetD8Async) \
  X(cuMemsetD16Async) \
  X(cuMemsetD32Async) \
  X(cuStreamCreate) \
  X(cuStreamDestroy) \
  X(cuStreamSynchronize) \
  X(cuStreamQuery) \
  X(cuStreamWaitEvent) \
  X(cuLaunchHostFunc) \
  X(cuEventCreate) \
  X(cuEventRecord) \
  X(cuEventQuery) \
  X(cuEventSynchronize) \
  X(cuEventDestroy) \
  X(cuCtxSynchronize) \
  X(cuGraphCreate) \
  X(cuGraphAddEmptyNode) \
  X(cuGraphAddHostNode) \
  X(cuGraphAddMemsetNode) \
  X(cuGraphAddMemcpyNode) \
  X(cuGraphAddKernelNode) \
  X(cuGraphInstantiate) \
  X(cuGraphLaunch) \
  X(cuGraphExecUpdate) \
  X(cuGraphExecDestroy) \
  X(cuGraphDestroy) \
  X(cuModuleLoadData) \
  X(cuModuleGetFunction) \
  X(cuModuleUnload) \
  X(cuLaunchKernel) \
  X(cuGetErrorName) \
  X(cuMemAllocAsync) \
  X(cuMemAllocFromPoolAsync) \
  X(cuMemFreeAsync) \
  X(cuDeviceGetDefaultMemPool) \
  X(cuMemPoolCreate) \
  X(cuMemPoolDestroy) \
  X(cuMemPoolSetAttribute) \
  X(cuMemPoolGetAttribute) \
  X(cuMemPoolTrimTo)
// clang-format on

#define DECLARE(f) static __typeof__(&f) p_##f;
CU_FNS(DECLARE)
#undef DECLARE

static CUcontext ctxs[16];

#define D(p) ((CUdeviceptr)(uintptr_t)(p))

static int c_init(int device) {
  CUresult r = p_cuInit(0);
  CUdevice dev = 0;
  if (r == CUDA_SUCCESS)
    r = p_cuDeviceGet(&dev, device);
  if (r == CUDA_SUCCESS && ctxs[device] == NULL)
    r = p_cuDevicePrimaryCtxRetain(&ctxs[device], dev);
  if (r == CUDA_SUCCESS)
    r = p_cuCtxSetCurrent(ctxs[device]);
  return (int)r;
}
static int c_device_count(int* n) {
  return (int)p_cuDeviceGetCount(n);
}
static int c_device_uuid(int device, uint8_t out[16]) {
  CUuuid uuid;
  CUresult r = p_cuDeviceGetUuid(&uuid, device);
  if (r == CUDA_SUCCESS)
    memcpy(out, uuid.bytes, 16);
  return (int)r;
}
static int c_device_name(int device, char* out, int len) {
  return (int)p_cuDeviceGetName(out, len, device);
}
static int c_device_total_mem(int device, size_t* bytes) {
  return (int)p_cuDeviceTotalMem(bytes, device);
}
static int c_malloc(void** p, size_t n) {
  if (p == NULL)
    return (int)p_cuMemAlloc(NULL, n);
  CUdeviceptr d = 0;
  CUresult r = p_cuMemAlloc(&d, n);
  *p = (void*)(uintptr_t)d;
  return (int)r;
}
static int c_free(void* p) {
  return (int)p_cuMemFree(D(p));
}
static int c_host_malloc(void** p, size_t n) {
  return (int)p_cuMemAllocHost(p, n);
}
static int c_host_free(void* p) {
  return (int)p_cuMemFreeHost(p);
}
static int c_htod(void* d, const void* s, size_t n) {
  return (int)p_cuMemcpyHtoD(D(d), s, n);
}
static int c_dtoh(void* d, const void* s, size_t n) {
  return (int)p_cuMemcpyDtoH(d, D(s), n);
}
static int c_htod_async(void* d, const void* s, size_t n, void* st) {
  return (int)p_cuMemcpyHtoDAsync(D(d), s, n, st);
}
static int c_dtoh_async(void* d, const void* s, size_t n, void* st) {
  return (int)p_cuMemcpyDtoHAsync(d, D(s), n, st);
}
static int c_dtod_async(void* d, const void* s, size_t n, void* st) {
  return (int)p_cuMemcpyDtoDAsync(D(d), D(s), n, st);
}
static int c_memset8(void* d, uint8_t v, size_t n) {
  return (int)p_cuMemsetD8(D(d), v, n);
}
static int c_memset16(void* d, uint16_t v, size_t n) {
  return (int)p_cuMemsetD16(D(d), v, n);
}
static int c_memset32(void* d, uint32_t v, size_t n) {
  return (int)p_cuMemsetD32(D(d), v, n);
}
static int c_memset8_async(void* d, uint8_t v, size_t n, void* s) {
  return (int)p_cuMemsetD8Async(D(d), v, n, s);
}
static int c_memset16_async(void* d, uint16_t v, size_t n, void* s) {
  return (int)p_cuMemsetD16Async(D(d), v, n, s);
}
static int c_memset32_async(void* d, uint32_t v, size_t n, void* s) {
  return (int)p_cuMemsetD32Async(D(d), v, n, s);
}
static int c_stream_create(void** s, bool nonblocking) {
  return (int)p_cuStreamCreate((CUstream*)s,
                               nonblocking ? CU_STREAM_NON_BLOCKING : 0);
}
static int c_stream_destroy(void* s) {
  return (int)p_cuStreamDestroy(s);
}
static int c_stream_sync(void* s) {
  return (int)p_cuStreamSynchronize(s);
}
static int c_stream_query(void* s) {
  return (int)p_cuStreamQuery(s);
}
static int c_stream_wait_event(void* s, void* e) {
  return (int)p_cuStreamWaitEvent(s, e, 0);
}
static int c_host_fn(void* s, vapi_host_fn fn, void* arg) {
  return (int)p_cuLaunchHostFunc(s, fn, arg);
}
static int c_event_create(void** e) {
  return (int)p_cuEventCreate((CUevent*)e, CU_EVENT_DEFAULT);
}
static int c_event_record(void* e, void* s) {
  return (int)p_cuEventRecord(e, s);
}
static int c_event_query(void* e) {
  return (int)p_cuEventQuery(e);
}
static int c_event_sync(void* e) {
  return (int)p_cuEventSynchronize(e);
}
static int c_event_destroy(void* e) {
  return (int)p_cuEventDestroy(e);
}
static int c_device_sync(void) {
  return (int)p_cuCtxSynchronize();
}
static int c_graph_create(void** g) {
  return (int)p_cuGraphCreate((CUgraph*)g, 0);
}
static int c_graph_add_empty(void** node, void* g, void** deps, size_t n) {
  return (int)p_cuGraphAddEmptyNode((CUgraphNode*)node, g, (CUgraphNode*)deps,
                                    n);
}
static int c_graph_add_host(void** node, void* g, void** deps, size_t n,
                            vapi_host_fn fn, void* arg) {
  CUDA_HOST_NODE_PARAMS p = {fn, arg};
  return (int)p_cuGraphAddHostNode((CUgraphNode*)node, g, (CUgraphNode*)deps, n,
                                   &p);
}
static int c_graph_add_memset32(void** node, void* g, void** deps, size_t n,
                                void* dst, uint32_t v, size_t count) {
  CUDA_MEMSET_NODE_PARAMS p;
  memset(&p, 0, sizeof(p));
  p.dst = D(dst);
  p.value = v;
  p.elementSize = 4;
  p.width = count;
  p.height = 1;
  CUcontext ctx = NULL;
  for (int i = 0; i < 16 && ctx == NULL; ++i)
    ctx = ctxs[i];
  return (int)p_cuGraphAddMemsetNode((CUgraphNode*)node, g, (CUgraphNode*)deps,
                                     n, &p, ctx);
}
static int c_graph_add_dtoh(void** node, void* g, void** deps, size_t n,
                            void* dst, const void* src, size_t bytes) {
  CUDA_MEMCPY3D p;
  memset(&p, 0, sizeof(p));
  p.srcMemoryType = CU_MEMORYTYPE_DEVICE;
  p.srcDevice = D(src);
  p.dstMemoryType = CU_MEMORYTYPE_HOST;
  p.dstHost = dst;
  p.WidthInBytes = bytes;
  p.Height = 1;
  p.Depth = 1;
  return (int)p_cuGraphAddMemcpyNode((CUgraphNode*)node, g, (CUgraphNode*)deps,
                                     n, &p, ctxs[0]);
}
static int c_graph_add_kernel(void** node, void* g, void** deps, size_t n,
                              void* func, unsigned grid, unsigned block,
                              void** params) {
  CUDA_KERNEL_NODE_PARAMS p;
  memset(&p, 0, sizeof(p));
  p.func = func;
  p.gridDimX = grid;
  p.gridDimY = p.gridDimZ = 1;
  p.blockDimX = block;
  p.blockDimY = p.blockDimZ = 1;
  p.kernelParams = params;
  return (int)p_cuGraphAddKernelNode((CUgraphNode*)node, g, (CUgraphNode*)deps,
                                     n, &p);
}
static int c_graph_instantiate(void** exec, void* g) {
  return (int)p_cuGraphInstantiate((CUgraphExec*)exec, g, 0);
}
static int c_graph_launch(void* exec, void* s) {
  return (int)p_cuGraphLaunch(exec, s);
}
static int c_graph_exec_update(void* exec, void* g) {
  CUgraphExecUpdateResultInfo info;
  return (int)p_cuGraphExecUpdate(exec, g, &info);
}
static int c_graph_exec_destroy(void* exec) {
  return (int)p_cuGraphExecDestroy(exec);
}
static int c_graph_destroy(void* g) {
  return (int)p_cuGraphDestroy(g);
}
static int c_module_load_data(void** m, const void* image) {
  return (int)p_cuModuleLoadData((CUmodule*)m, image);
}
static int c_module_get_function(void** f, void* m, const char* name) {
  return (int)p_cuModuleGetFunction((CUfunction*)f, m, name);
}
static int c_module_unload(void* m) {
  return (int)p_cuModuleUnload(m);
}
static int c_launch(void* f, unsigned grid, unsigned block, unsigned shared,
                    void* s, void** params) {
  return (int)p_cuLaunchKernel(f, grid, 1, 1, block, 1, 1, shared, s, params,
                               NULL);
}
static const char* c_error_name(int code) {
  const char* s = NULL;
  if (p_cuGetErrorName((CUresult)code, &s) != CUDA_SUCCESS)
    return "?";
  return s;
}

static int c_malloc_async(void** p, size_t n, void* pool, void* s) {
  CUdeviceptr d = 0;
  CUresult r = pool == NULL ? p_cuMemAllocAsync(&d, n, s)
                            : p_cuMemAllocFromPoolAsync(&d, n, pool, s);
  *p = (void*)(uintptr_t)d;
  return (int)r;
}
static int c_free_async(void* p, void* s) {
  return (int)p_cuMemFreeAsync(D(p), s);
}
static int c_pool_default(void** pool, int device) {
  return (int)p_cuDeviceGetDefaultMemPool((CUmemoryPool*)pool, device);
}
static int c_pool_create(void** pool, int device) {
  CUmemPoolProps props;
  memset(&props, 0, sizeof(props));
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  props.location.id = device;
  return (int)p_cuMemPoolCreate((CUmemoryPool*)pool, &props);
}
static int c_pool_destroy(void* pool) {
  return (int)p_cuMemPoolDestroy(pool);
}
static int c_pool_set_threshold(void* pool, uint64_t bytes) {
  cuuint64_t v = bytes;
  return (int)p_cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                                      &v);
}
static int c_pool_attr(void* pool, int which, uint64_t* out) {
  cuuint64_t v = 0;
  CUresult r =
      p_cuMemPoolGetAttribute(pool,
                              which == 0 ? CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT
                                         : CU_MEMPOOL_ATTR_USED_MEM_CURRENT,
                              &v);
  *out = v;
  return (int)r;
}
static int c_pool_trim(void* pool, size_t keep) {
  return (int)p_cuMemPoolTrimTo(pool, keep);
}

bool vapi_open_cuda(vapi* api, const char* path) {
  memset(api, 0, sizeof(*api));
  memset(ctxs, 0, sizeof(ctxs));
  api->name = "cuda";
  api->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (api->lib == NULL) {
    fprintf(stderr, "dlopen(%s): %s\n", path, dlerror());
    return false;
  }
#define LOAD(f)                                                \
  VAPI_LOAD(api->lib, p_##f, XSTR(f));                         \
  if (p_##f == NULL) {                                         \
    fprintf(stderr, "%s: missing symbol %s\n", path, XSTR(f)); \
    return false;                                              \
  }
  CU_FNS(LOAD)
#undef LOAD
  api->ok = CUDA_SUCCESS;
  api->not_ready = CUDA_ERROR_NOT_READY;
  api->invalid_value = CUDA_ERROR_INVALID_VALUE;
  api->invalid_handle = CUDA_ERROR_INVALID_HANDLE;
  api->not_permitted = CUDA_ERROR_NOT_PERMITTED;
  api->in_use = CUDA_ERROR_ILLEGAL_STATE;
  api->launch_failed = CUDA_ERROR_LAUNCH_FAILED;
  api->update_failure = CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
  api->out_of_memory = CUDA_ERROR_OUT_OF_MEMORY;
  api->not_found = CUDA_ERROR_NOT_FOUND;
  api->timeout = CUDA_ERROR_LAUNCH_TIMEOUT;
  api->invalid_device = CUDA_ERROR_INVALID_DEVICE;
  api->invalid_image = CUDA_ERROR_INVALID_IMAGE;
  api->unknown = CUDA_ERROR_UNKNOWN;
  api->stream_destroy_name = "cuStreamDestroy";
  api->init = c_init;
  api->malloc_async = c_malloc_async;
  api->free_async = c_free_async;
  api->pool_default = c_pool_default;
  api->pool_create = c_pool_create;
  api->pool_destroy = c_pool_destroy;
  api->pool_set_threshold = c_pool_set_threshold;
  api->pool_attr = c_pool_attr;
  api->pool_trim = c_pool_trim;
  api->device_count = c_device_count;
  api->device_uuid = c_device_uuid;
  api->device_name = c_device_name;
  api->device_total_mem = c_device_total_mem;
  api->malloc = c_malloc;
  api->free = c_free;
  api->host_malloc = c_host_malloc;
  api->host_free = c_host_free;
  api->htod = c_htod;
  api->dtoh = c_dtoh;
  api->htod_async = c_htod_async;
  api->dtoh_async = c_dtoh_async;
  api->dtod_async = c_dtod_async;
  api->memset8 = c_memset8;
  api->memset16 = c_memset16;
  api->memset32 = c_memset32;
  api->memset8_async = c_memset8_async;
  api->memset16_async = c_memset16_async;
  api->memset32_async = c_memset32_async;
  api->stream_create = c_stream_create;
  api->stream_destroy = c_stream_destroy;
  api->stream_sync = c_stream_sync;
  api->stream_query = c_stream_query;
  api->stream_wait_event = c_stream_wait_event;
  api->host_fn = c_host_fn;
  api->event_create = c_event_create;
  api->event_record = c_event_record;
  api->event_query = c_event_query;
  api->event_sync = c_event_sync;
  api->event_destroy = c_event_destroy;
  api->device_sync = c_device_sync;
  api->graph_create = c_graph_create;
  api->graph_add_empty = c_graph_add_empty;
  api->graph_add_host = c_graph_add_host;
  api->graph_add_memset32 = c_graph_add_memset32;
  api->graph_add_dtoh = c_graph_add_dtoh;
  api->graph_add_kernel = c_graph_add_kernel;
  api->graph_instantiate = c_graph_instantiate;
  api->graph_launch = c_graph_launch;
  api->graph_exec_update = c_graph_exec_update;
  api->graph_exec_destroy = c_graph_exec_destroy;
  api->graph_destroy = c_graph_destroy;
  api->module_load_data = c_module_load_data;
  api->module_get_function = c_module_get_function;
  api->module_unload = c_module_unload;
  api->launch = c_launch;
  api->error_name = c_error_name;
  return true;
}

// Releases the primary contexts the table retained.
void vapi_cuda_release(void) {
  for (int i = 0; i < 16; ++i) {
    if (ctxs[i] != NULL)
      p_cuDevicePrimaryCtxRelease(i);
    ctxs[i] = NULL;
  }
}
