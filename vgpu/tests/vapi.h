// The vendor API as the tests call it: one table per facade, filled by
// dlopen()ing the BUILT library and dlsym()ing the vendor's own symbol names
// (vapi_cuda.c, vapi_hip.c). Test bodies are written once over this table;
// each entry is a direct call of the vendor function of the same name.
#ifndef VGPU_TESTS_VAPI_H_
#define VGPU_TESTS_VAPI_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef void (*vapi_host_fn)(void* arg);

typedef struct vapi {
  const char* name;  // "cuda" or "hip"
  void* lib;
  // Vendor codes the tests expect.
  int ok, not_ready, invalid_value, invalid_handle, not_permitted, in_use,
      launch_failed, update_failure, out_of_memory, not_found, timeout,
      invalid_device, invalid_image, unknown;
  // Vendor call names, for messages (e.g. "cuStreamDestroy").
  const char* stream_destroy_name;

  int (*init)(int device);  // init + make |device| current
  int (*device_count)(int* n);
  int (*device_uuid)(int device, uint8_t out[16]);
  int (*device_name)(int device, char* out, int len);
  int (*device_total_mem)(int device, size_t* bytes);
  int (*malloc)(void** p, size_t n);
  int (*free)(void* p);
  int (*host_malloc)(void** p, size_t n);
  int (*host_free)(void* p);
  int (*htod)(void* dst, const void* src, size_t n);
  int (*dtoh)(void* dst, const void* src, size_t n);
  int (*htod_async)(void* dst, const void* src, size_t n, void* s);
  int (*dtoh_async)(void* dst, const void* src, size_t n, void* s);
  int (*dtod_async)(void* dst, const void* src, size_t n, void* s);
  int (*memset8)(void* dst, uint8_t v, size_t n);
  int (*memset16)(void* dst, uint16_t v, size_t n);
  int (*memset32)(void* dst, uint32_t v, size_t n);
  int (*memset8_async)(void* dst, uint8_t v, size_t n, void* s);
  int (*memset16_async)(void* dst, uint16_t v, size_t n, void* s);
  int (*memset32_async)(void* dst, uint32_t v, size_t n, void* s);
  int (*stream_create)(void** s, bool nonblocking);
  int (*stream_destroy)(void* s);
  int (*stream_sync)(void* s);
  int (*stream_query)(void* s);
  int (*stream_wait_event)(void* s, void* e);
  int (*host_fn)(void* s, vapi_host_fn fn, void* arg);
  int (*event_create)(void** e);
  int (*event_record)(void* e, void* s);
  int (*event_query)(void* e);
  int (*event_sync)(void* e);
  int (*event_destroy)(void* e);
  int (*device_sync)(void);
  int (*graph_create)(void** g);
  int (*graph_add_empty)(void** node, void* g, void** deps, size_t n);
  int (*graph_add_host)(void** node, void* g, void** deps, size_t n,
                        vapi_host_fn fn, void* arg);
  int (*graph_add_memset32)(void** node, void* g, void** deps, size_t n,
                            void* dst, uint32_t v, size_t count);
  int (*graph_add_dtoh)(void** node, void* g, void** deps, size_t n, void* dst,
                        const void* src, size_t bytes);
  int (*graph_add_kernel)(void** node, void* g, void** deps, size_t n,
                          void* func, unsigned grid, unsigned block,
                          void** params);
  int (*graph_instantiate)(void** exec, void* g);
  int (*graph_launch)(void* exec, void* s);
  int (*graph_exec_update)(void* exec, void* g);
  int (*graph_exec_destroy)(void* exec);
  int (*graph_destroy)(void* g);
  int (*module_load_data)(void** m, const void* image);
  int (*module_get_function)(void** f, void* m, const char* name);
  int (*module_unload)(void* m);
  int (*launch)(void* f, unsigned grid, unsigned block, unsigned shared,
                void* s, void** params);
  const char* (*error_name)(int code);
  // Stream-ordered allocation. |pool| NULL: the current pool of the
  // stream's device. pool_attr: 0 reserved, 1 used bytes now.
  int (*malloc_async)(void** p, size_t n, void* pool, void* s);
  int (*free_async)(void* p, void* s);
  int (*pool_default)(void** pool, int device);
  int (*pool_create)(void** pool, int device);
  int (*pool_destroy)(void* pool);
  int (*pool_set_threshold)(void* pool, uint64_t bytes);
  int (*pool_attr)(void* pool, int which, uint64_t* out);
  int (*pool_trim)(void* pool, size_t keep);
} vapi;

// Opens |path| as facade |name| ("cuda" or "hip"); fails the test on error.
// Each is defined by its own file; a program links the ones it needs (the
// declarations are weak so a missing facade is a NULL function, not a link
// error).
__attribute__((weak)) bool vapi_open_cuda(vapi* api, const char* path);
__attribute__((weak)) void vapi_cuda_release(void);
__attribute__((weak)) bool vapi_open_hip(vapi* api, const char* path);

// Symbol lookup that does not convert void* to a function pointer directly.
#define VAPI_LOAD(lib, var, name)        \
  do {                                   \
    void* sym_ = dlsym((lib), (name));   \
    memcpy(&(var), &sym_, sizeof(sym_)); \
  } while (0)

#endif  // VGPU_TESTS_VAPI_H_
