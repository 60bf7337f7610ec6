// The test table over the HIP runtime API of a dlopen()ed library.
#include <dlfcn.h>
#include <hip/hip_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vapi.h"

// One entry per line: clang-format has no good layout for this table.
// clang-format off
#define HIP_FNS(X) \
  X(hipInit) \
  X(hipSetDevice) \
  X(hipGetDeviceCount) \
  X(hipDeviceGetUuid) \
  X(hipDeviceGetName) \
  X(hipDeviceTotalMem) \
  X(hipMalloc) \
  X(hipFree) \
  X(hipHostMalloc) \
  X(hipHostFree) \
  X(hipMemcpy) \
  X(hipMemcpyAsync) \
  X(hipMemsetD8) \
  X(hipMemsetD16) \
  X(hipMemsetD32) \
  X(hipMemsetD8Async) \
  X(hipMemsetD16Async) \
  X(hipMemsetD32Async) \
  X(hipStreamCreateWithFlags) \
  X(hipStreamDestroy) \
  X(hipStreamSynchronize) \
  X(hipStreamQuery) \
  X(hipStreamWaitEvent) \
  X(hipStreamAddCallback) \
  X(hipEventCreate) \
  X(hipEventRecord) \
  X(hipEventQuery) \
  X(hipEventSynchronize) \
  X(hipEventDestroy) \
  X(hipDeviceSynchronize) \
  X(hipGraphCreate) \
  X(hipGraphAddEmptyNode) \
  X(hipGraphAddHostNode) \
  X(hipGraphAddMemsetNode) \
  X(hipGraphAddMemcpyNode1D) \
  X(hipGraphAddKernelNode) \
  X(hipGraphInstantiate) \
  X(hipGraphLaunch) \
  X(hipGraphExecUpdate) \
  X(hipGraphExecDestroy) \
  X(hipGraphDestroy) \
  X(hipModuleLoadData) \
  X(hipModuleGetFunction) \
  X(hipModuleUnload) \
  X(hipModuleLaunchKernel) \
  X(hipGetErrorName) \
  X(hipMallocAsync) \
  X(hipMallocFromPoolAsync) \
  X(hipFreeAsync) \
  X(hipDeviceGetDefaultMemPool) \
  X(hipMemPoolCreate) \
  X(hipMemPoolDestroy) \
  X(hipMemPoolSetAttribute) \
  X(hipMemPoolGetAttribute) \
  X(hipMemPoolTrimTo)
// clang-format on

#define DECLARE(f) static __typeof__(&f) p_##f;
HIP_FNS(DECLARE)
#undef DECLARE
// Optional: absent from Debian's 5.2.3 export set (libvgpu-hip-legacy.so).
static __typeof__(&hipLaunchHostFunc) p_hipLaunchHostFunc;

static int h_init(int device) {
  int r = (int)p_hipInit(0);
  return r != hipSuccess ? r : (int)p_hipSetDevice(device);
}
static int h_device_count(int* n) {
  return p_hipGetDeviceCount(n);
}
static int h_device_uuid(int device, uint8_t out[16]) {
  hipUUID uuid;
  int r = p_hipDeviceGetUuid(&uuid, device);
  if (r == hipSuccess)
    memcpy(out, uuid.bytes, 16);
  return r;
}
static int h_device_name(int device, char* out, int len) {
  return p_hipDeviceGetName(out, len, device);
}
static int h_device_total_mem(int device, size_t* bytes) {
  return p_hipDeviceTotalMem(bytes, device);
}
static int h_malloc(void** p, size_t n) {
  return p_hipMalloc(p, n);
}
static int h_free(void* p) {
  return p_hipFree(p);
}
static int h_host_malloc(void** p, size_t n) {
  return p_hipHostMalloc(p, n, hipHostMallocDefault);
}
static int h_host_free(void* p) {
  return p_hipHostFree(p);
}
static int h_htod(void* d, const void* s, size_t n) {
  return p_hipMemcpy(d, s, n, hipMemcpyHostToDevice);
}
static int h_dtoh(void* d, const void* s, size_t n) {
  return p_hipMemcpy(d, s, n, hipMemcpyDeviceToHost);
}
static int h_htod_async(void* d, const void* s, size_t n, void* st) {
  return p_hipMemcpyAsync(d, s, n, hipMemcpyHostToDevice, st);
}
static int h_dtoh_async(void* d, const void* s, size_t n, void* st) {
  return p_hipMemcpyAsync(d, s, n, hipMemcpyDeviceToHost, st);
}
static int h_dtod_async(void* d, const void* s, size_t n, void* st) {
  return p_hipMemcpyAsync(d, s, n, hipMemcpyDeviceToDevice, st);
}
static int h_memset8(void* d, uint8_t v, size_t n) {
  return p_hipMemsetD8(d, v, n);
}
static int h_memset16(void* d, uint16_t v, size_t n) {
  return p_hipMemsetD16(d, v, n);
}
static int h_memset32(void* d, uint32_t v, size_t n) {
  return p_hipMemsetD32(d, (int)v, n);
}
static int h_memset8_async(void* d, uint8_t v, size_t n, void* s) {
  return p_hipMemsetD8Async(d, v, n, s);
}
static int h_memset16_async(void* d, uint16_t v, size_t n, void* s) {
  return p_hipMemsetD16Async(d, v, n, s);
}
static int h_memset32_async(void* d, uint32_t v, size_t n, void* s) {
  return p_hipMemsetD32Async(d, (int)v, n, s);
}
static int h_stream_create(void** s, bool nonblocking) {
  return p_hipStreamCreateWithFlags(
      (hipStream_t*)s, nonblocking ? hipStreamNonBlocking : hipStreamDefault);
}
static int h_stream_destroy(void* s) {
  return p_hipStreamDestroy(s);
}
static int h_stream_sync(void* s) {
  return p_hipStreamSynchronize(s);
}
static int h_stream_query(void* s) {
  return p_hipStreamQuery(s);
}
static int h_stream_wait_event(void* s, void* e) {
  return p_hipStreamWaitEvent(s, e, 0);
}

// Without hipLaunchHostFunc (legacy export set): the documented fallback.
typedef struct cb_arg {
  vapi_host_fn fn;
  void* arg;
} cb_arg;
static void callback_trampoline(hipStream_t s, hipError_t st, void* user) {
  (void)s;
  (void)st;
  cb_arg a = *(cb_arg*)user;
  free(user);
  a.fn(a.arg);
}
static int h_host_fn(void* s, vapi_host_fn fn, void* arg) {
  if (p_hipLaunchHostFunc != NULL)
    return p_hipLaunchHostFunc(s, fn, arg);
  cb_arg* a = malloc(sizeof(*a));
  a->fn = fn;
  a->arg = arg;
  int r = p_hipStreamAddCallback(s, callback_trampoline, a, 0);
  if (r != hipSuccess)
    free(a);
  return r;
}
static int h_event_create(void** e) {
  return p_hipEventCreate((hipEvent_t*)e);
}
static int h_event_record(void* e, void* s) {
  return p_hipEventRecord(e, s);
}
static int h_event_query(void* e) {
  return p_hipEventQuery(e);
}
static int h_event_sync(void* e) {
  return p_hipEventSynchronize(e);
}
static int h_event_destroy(void* e) {
  return p_hipEventDestroy(e);
}
static int h_device_sync(void) {
  return p_hipDeviceSynchronize();
}
static int h_graph_create(void** g) {
  return p_hipGraphCreate((hipGraph_t*)g, 0);
}
static int h_graph_add_empty(void** node, void* g, void** deps, size_t n) {
  return p_hipGraphAddEmptyNode((hipGraphNode_t*)node, g, (hipGraphNode_t*)deps,
                                n);
}
static int h_graph_add_host(void** node, void* g, void** deps, size_t n,
                            vapi_host_fn fn, void* arg) {
  hipHostNodeParams p = {fn, arg};
  return p_hipGraphAddHostNode((hipGraphNode_t*)node, g, (hipGraphNode_t*)deps,
                               n, &p);
}
static int h_graph_add_memset32(void** node, void* g, void** deps, size_t n,
                                void* dst, uint32_t v, size_t count) {
  hipMemsetParams p;
  memset(&p, 0, sizeof(p));
  p.dst = dst;
  p.elementSize = 4;
  p.height = 1;
  p.value = v;
  p.width = count;
  return p_hipGraphAddMemsetNode((hipGraphNode_t*)node, g,
                                 (hipGraphNode_t*)deps, n, &p);
}
static int h_graph_add_dtoh(void** node, void* g, void** deps, size_t n,
                            void* dst, const void* src, size_t bytes) {
  return p_hipGraphAddMemcpyNode1D((hipGraphNode_t*)node, g,
                                   (hipGraphNode_t*)deps, n, dst, src, bytes,
                                   hipMemcpyDeviceToHost);
}
static int h_graph_add_kernel(void** node, void* g, void** deps, size_t n,
                              void* func, unsigned grid, unsigned block,
                              void** params) {
  hipKernelNodeParams p;
  memset(&p, 0, sizeof(p));
  p.func = func;
  p.gridDim.x = grid;
  p.gridDim.y = p.gridDim.z = 1;
  p.blockDim.x = block;
  p.blockDim.y = p.blockDim.z = 1;
  p.kernelParams = params;
  return p_hipGraphAddKernelNode((hipGraphNode_t*)node, g,
                                 (hipGraphNode_t*)deps, n, &p);
}
static int h_graph_instantiate(void** exec, void* g) {
  return p_hipGraphInstantiate((hipGraphExec_t*)exec, g, NULL, NULL, 0);
}
static int h_graph_launch(void* exec, void* s) {
  return p_hipGraphLaunch(exec, s);
}
static int h_graph_exec_update(void* exec, void* g) {
  hipGraphNode_t bad = NULL;
  hipGraphExecUpdateResult r;
  return p_hipGraphExecUpdate(exec, g, &bad, &r);
}
static int h_graph_exec_destroy(void* exec) {
  return p_hipGraphExecDestroy(exec);
}
static int h_graph_destroy(void* g) {
  return p_hipGraphDestroy(g);
}
static int h_module_load_data(void** m, const void* image) {
  return p_hipModuleLoadData((hipModule_t*)m, image);
}
static int h_module_get_function(void** f, void* m, const char* name) {
  return p_hipModuleGetFunction((hipFunction_t*)f, m, name);
}
static int h_module_unload(void* m) {
  return p_hipModuleUnload(m);
}
static int h_launch(void* f, unsigned grid, unsigned block, unsigned shared,
                    void* s, void** params) {
  return p_hipModuleLaunchKernel(f, grid, 1, 1, block, 1, 1, shared, s, params,
                                 NULL);
}
static const char* h_error_name(int code) {
  return p_hipGetErrorName((hipError_t)code);
}

static int h_malloc_async(void** p, size_t n, void* pool, void* s) {
  return (int)(pool == NULL ? p_hipMallocAsync(p, n, s)
                            : p_hipMallocFromPoolAsync(p, n, pool, s));
}
static int h_free_async(void* p, void* s) {
  return (int)p_hipFreeAsync(p, s);
}
static int h_pool_default(void** pool, int device) {
  return (int)p_hipDeviceGetDefaultMemPool((hipMemPool_t*)pool, device);
}
static int h_pool_create(void** pool, int device) {
  hipMemPoolProps props;
  memset(&props, 0, sizeof(props));
  props.allocType = hipMemAllocationTypePinned;
  props.location.type = hipMemLocationTypeDevice;
  props.location.id = device;
  return (int)p_hipMemPoolCreate((hipMemPool_t*)pool, &props);
}
static int h_pool_destroy(void* pool) {
  return (int)p_hipMemPoolDestroy(pool);
}
static int h_pool_set_threshold(void* pool, uint64_t bytes) {
  uint64_t v = bytes;
  return (int)p_hipMemPoolSetAttribute(pool, hipMemPoolAttrReleaseThreshold,
                                       &v);
}
static int h_pool_attr(void* pool, int which, uint64_t* out) {
  return (int)p_hipMemPoolGetAttribute(pool,
                                       which == 0
                                           ? hipMemPoolAttrReservedMemCurrent
                                           : hipMemPoolAttrUsedMemCurrent,
                                       out);
}
static int h_pool_trim(void* pool, size_t keep) {
  return (int)p_hipMemPoolTrimTo(pool, keep);
}

bool vapi_open_hip(vapi* api, const char* path) {
  memset(api, 0, sizeof(*api));
  api->name = "hip";
  api->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (api->lib == NULL) {
    fprintf(stderr, "dlopen(%s): %s\n", path, dlerror());
    return false;
  }
#define LOAD(f)                                           \
  VAPI_LOAD(api->lib, p_##f, #f);                         \
  if (p_##f == NULL) {                                    \
    fprintf(stderr, "%s: missing symbol %s\n", path, #f); \
    return false;                                         \
  }
  HIP_FNS(LOAD)
#undef LOAD
  VAPI_LOAD(api->lib, p_hipLaunchHostFunc, "hipLaunchHostFunc");
  api->ok = hipSuccess;
  api->not_ready = hipErrorNotReady;
  api->invalid_value = hipErrorInvalidValue;
  api->invalid_handle = hipErrorInvalidHandle;
  api->not_permitted = hipErrorNotSupported;
  api->in_use = hipErrorIllegalState;
  api->launch_failed = hipErrorLaunchFailure;
  api->update_failure = hipErrorGraphExecUpdateFailure;
  api->out_of_memory = hipErrorOutOfMemory;
  api->not_found = hipErrorNotFound;
  api->timeout = hipErrorLaunchTimeOut;
  api->invalid_device = hipErrorInvalidDevice;
  api->invalid_image = hipErrorInvalidImage;
  api->unknown = hipErrorUnknown;
  api->stream_destroy_name = "hipStreamDestroy";
  api->init = h_init;
  api->malloc_async = h_malloc_async;
  api->free_async = h_free_async;
  api->pool_default = h_pool_default;
  api->pool_create = h_pool_create;
  api->pool_destroy = h_pool_destroy;
  api->pool_set_threshold = h_pool_set_threshold;
  api->pool_attr = h_pool_attr;
  api->pool_trim = h_pool_trim;
  api->device_count = h_device_count;
  api->device_uuid = h_device_uuid;
  api->device_name = h_device_name;
  api->device_total_mem = h_device_total_mem;
  api->malloc = h_malloc;
  api->free = h_free;
  api->host_malloc = h_host_malloc;
  api->host_free = h_host_free;
  api->htod = h_htod;
  api->dtoh = h_dtoh;
  api->htod_async = h_htod_async;
  api->dtoh_async = h_dtoh_async;
  api->dtod_async = h_dtod_async;
  api->memset8 = h_memset8;
  api->memset16 = h_memset16;
  api->memset32 = h_memset32;
  api->memset8_async = h_memset8_async;
  api->memset16_async = h_memset16_async;
  api->memset32_async = h_memset32_async;
  api->stream_create = h_stream_create;
  api->stream_destroy = h_stream_destroy;
  api->stream_sync = h_stream_sync;
  api->stream_query = h_stream_query;
  api->stream_wait_event = h_stream_wait_event;
  api->host_fn = h_host_fn;
  api->event_create = h_event_create;
  api->event_record = h_event_record;
  api->event_query = h_event_query;
  api->event_sync = h_event_sync;
  api->event_destroy = h_event_destroy;
  api->device_sync = h_device_sync;
  api->graph_create = h_graph_create;
  api->graph_add_empty = h_graph_add_empty;
  api->graph_add_host = h_graph_add_host;
  api->graph_add_memset32 = h_graph_add_memset32;
  api->graph_add_dtoh = h_graph_add_dtoh;
  api->graph_add_kernel = h_graph_add_kernel;
  api->graph_instantiate = h_graph_instantiate;
  api->graph_launch = h_graph_launch;
  api->graph_exec_update = h_graph_exec_update;
  api->graph_exec_destroy = h_graph_exec_destroy;
  api->graph_destroy = h_graph_destroy;
  api->module_load_data = h_module_load_data;
  api->module_get_function = h_module_get_function;
  api->module_unload = h_module_unload;
  api->launch = h_launch;
  api->error_name = h_error_name;
  return true;
}
