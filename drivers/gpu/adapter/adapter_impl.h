// Copyright 2026 The HAL Authors.
//
// Internals shared by the vendor adapters: the symbol-table machinery, the
// vendor descriptor, the common adapter base and vendor-error conversion.
// Not for the GPU core (it includes adapter.h only).
//
// How a vendor is described (written once per vendor, read by shared code):
//
//  - <vendor>_symbols.h: ONE X-macro table of every runtime entry point,
//      X(kind, capability, name, return_type, (parameters))
//    kind: REQUIRED | OPTIONAL, with a _DLSYM suffix for the few symbols
//    looked up with dlsym() before the runtime is initialized (CUDA: init,
//    versions, error names, cuGetProcAddress; everything else goes through
//    cuGetProcAddress). capability: the GPU_ADAPTER_CAP_* bit (without the
//    prefix; NONE for none) the symbol is needed for; a bit is set only when
//    every symbol tagged with it was found. From the table come the
//    function-pointer struct (GPU_ADAPTER_SYMBOL_MEMBER), the lookup list
//    (GPU_ADAPTER_SYMBOL_ENTRY), a compile-time check of each signature
//    against the vendor header (GPU_ADAPTER_SYMBOL_CHECK) and the test fakes.
//  - <vendor>_vendor.h: the adapter struct (base + symbol struct) and the
//    error table.
//  - <vendor>_ops.c: every op as a plain function calling the runtime
//    through the symbol struct, the loading hooks and the vendor
//    descriptor. Messages name the API name of the entry point called
//    ("cuMemAlloc", never the versioned export "cuMemAlloc_v2").

#ifndef DRIVERS_GPU_ADAPTER_ADAPTER_IMPL_H_
#define DRIVERS_GPU_ADAPTER_ADAPTER_IMPL_H_

#include <assert.h>
#include <stddef.h>

#include "adapter.h"

HAL_EXTERN_C_BEGIN

//===----------------------------------------------------------------------===//
// Symbol tables
//===----------------------------------------------------------------------===//

#define GPU_ADAPTER_CAP_NONE 0u

enum {
  // Loading fails when the symbol is missing.
  GPU_ADAPTER_SYMBOL_REQUIRED = 1u << 0,
  // Looked up with dlsym() before the runtime's init, by its exported
  // (versioned) name; the others go through the vendor's lookup after init.
  GPU_ADAPTER_SYMBOL_DLSYM = 1u << 1,
};
#define GPU_ADAPTER_SYMBOL_KIND_REQUIRED GPU_ADAPTER_SYMBOL_REQUIRED
#define GPU_ADAPTER_SYMBOL_KIND_OPTIONAL 0u
#define GPU_ADAPTER_SYMBOL_KIND_REQUIRED_DLSYM \
  (GPU_ADAPTER_SYMBOL_REQUIRED | GPU_ADAPTER_SYMBOL_DLSYM)
#define GPU_ADAPTER_SYMBOL_KIND_OPTIONAL_DLSYM GPU_ADAPTER_SYMBOL_DLSYM

typedef struct gpu_adapter_symbol_t {
  // The API name ("cuMemAlloc"): what cuGetProcAddress takes, and what
  // error messages say.
  const char* name;
  // The name the library exports for this header version ("cuMemAlloc_v2"
  // after cuda.h's renames): what dlsym() takes. Messages never show it.
  const char* export_name;
  // Of the function pointer in the vendor's symbol struct.
  uint32_t offset;
  uint32_t flags;       // GPU_ADAPTER_SYMBOL_*
  uint32_t capability;  // GPU_ADAPTER_CAP_* bit it gates, or 0
} gpu_adapter_symbol_t;

#define GPU_ADAPTER_STR_(x) #x
#define GPU_ADAPTER_XSTR_(x) GPU_ADAPTER_STR_(x)

// Generators for the X-macro tables. |name| is expanded where it is used
// as an identifier (cuda.h renames cuMemAlloc to cuMemAlloc_v2; member and
// header declaration agree) and stringified unexpanded for the API name.
#define GPU_ADAPTER_SYMBOL_MEMBER(kind, capability, name, ret, params) \
  ret(*name) params;
// Use through a one-line vendor wrapper that passes its own struct type,
// #name and name (the wrapper must stringify: arguments are expanded).
#define GPU_ADAPTER_SYMBOL_ENTRY(table_type, kind, capability, api_name, name) \
  {api_name, GPU_ADAPTER_XSTR_(name), (uint32_t)offsetof(table_type, name),    \
   GPU_ADAPTER_SYMBOL_KIND_##kind, GPU_ADAPTER_CAP_##capability},
// The table's signature must be the header's: a wrong table entry would
// call the runtime with the wrong ABI.
#define GPU_ADAPTER_SYMBOL_CHECK(kind, capability, name, ret, params) \
  _Static_assert(_Generic(&name, ret(*) params : 1, default : 0),     \
                 "the table's signature of " #name                    \
                 " differs from the vendor header");

//===----------------------------------------------------------------------===//
// Vendor errors
//===----------------------------------------------------------------------===//

// How one vendor error code reads and maps. The table gives names even
// when the runtime cannot (the CUDA stub library fails cuGetErrorName too).
typedef struct gpu_adapter_error_t {
  int32_t code;
  const char* name;
  // DEVICE_LOST for errors after which the context is unusable (Q5).
  hal_status_code_t status_code;
} gpu_adapter_error_t;

#define GPU_ADAPTER_ERROR(code, status) \
  {(int32_t)(code), #code, HAL_STATUS_##status},

//===----------------------------------------------------------------------===//
// The vendor descriptor and the common base
//===----------------------------------------------------------------------===//

typedef struct gpu_adapter_base_t gpu_adapter_base_t;

typedef struct gpu_adapter_vendor_desc_t {
  gpu_adapter_vendor_t vendor;
  const char* name;         // "CUDA"
  const char* library_env;  // "HAL_CUDA_LIBRARY"
  // Default libraries, tried in order when no override is given.
  const char* const* libraries;
  size_t library_count;
  int header_version;  // CUDA_VERSION / HIP_VERSION
  // The vendor adapter struct: its size, and where its symbol struct is.
  size_t adapter_size;
  size_t symbols_offset;
  const gpu_adapter_symbol_t* symbols;
  size_t symbol_count;
  // Sorted by nothing; looked up linearly (only on error paths).
  const gpu_adapter_error_t* errors;
  size_t error_count;
  const gpu_adapter_ops_t* ops;
  // Resolves a non-DLSYM symbol by API name into *out_pointer (NULL when
  // the runtime does not have it). NULL: dlsym() by export name.
  hal_status_t (*lookup)(gpu_adapter_base_t* base, const char* name,
                         void** out_pointer);
  // Runs the runtime's init after the DLSYM pass. Returns OK; or OK with
  // *out_no_device set to the init failure when it means "no device"; or
  // the init failure.
  hal_status_t (*initialize)(gpu_adapter_base_t* base,
                             hal_status_t* out_no_device);
  // After every symbol is resolved: fills info's versions and adds what
  // the device count says to *inout_no_device (when set).
  hal_status_t (*finish_initialize)(gpu_adapter_base_t* base,
                                    hal_status_t* inout_no_device);
  // The runtime's name / description of |result|, or NULL when unknown or
  // when the query fails. Called on error paths only, from any thread.
  const char* (*error_name)(const gpu_adapter_base_t* base, int32_t result);
  const char* (*error_string)(const gpu_adapter_base_t* base, int32_t result);
  // Keep the library mapped at destroy (runtimes whose static destructors
  // are unsafe to run at dlclose()).
  bool keep_loaded;
  // The virtual GPU's stand-in for the library ("libvgpu-cuda.so"), named
  // by the could-not-load message; NULL: the virtual GPU has none.
  const char* virtual_library;
} gpu_adapter_vendor_desc_t;

// A device opened by context_open(). CUDA: the retained primary context;
// HIP: no native object (contexts are implicit, per device and thread).
struct gpu_context_t {
  int device;         // ordinal
  int native_device;  // CUdevice / hipDevice_t of the ordinal
  void* native;       // CUcontext, or NULL
};

// Every vendor adapter starts with this.
struct gpu_adapter_base_t {
  gpu_adapter_t public;  // ops + info, for the core
  const gpu_adapter_vendor_desc_t* vendor;
  hal_allocator_t allocator;
  void* library;  // dlopen() handle
  // The profiler-range library (roctx) when the vendor loads one; closed
  // with the adapter.
  void* tool_library;
  // Storage behind info's strings.
  char* library_path;
  char* missing_optional_symbols;
  char* no_device_reason;
};
static_assert(offsetof(gpu_adapter_base_t, public) == 0,
              "the public adapter must be at offset 0");

static inline gpu_adapter_base_t* gpu_adapter_base(gpu_adapter_t* adapter) {
  return (gpu_adapter_base_t*)adapter;
}

// The vendor's symbol struct inside |base|.
static inline void* gpu_adapter_base_symbols(const gpu_adapter_base_t* base) {
  return (char*)base + base->vendor->symbols_offset;
}

#if defined(GPU_ADAPTER_HAVE_CUDA)
extern const gpu_adapter_vendor_desc_t gpu_cuda_vendor_desc;
#endif
#if defined(GPU_ADAPTER_HAVE_HIP)
extern const gpu_adapter_vendor_desc_t gpu_hip_vendor_desc;
#endif

// The memset value for |pattern_size| (1, 2 or 4) bytes: |pattern|'s low
// bytes. INVALID_ARGUMENT for other sizes.
HAL_MUST_USE_RESULT hal_status_t gpu_adapter_memset_value(uint32_t pattern,
                                                          uint32_t pattern_size,
                                                          uint32_t* out_value);

// The device_uuid op's result from the |vendor_uuid| bytes that |call|
// gave for |device|: copied to |out_uuid|, or UNIMPLEMENTED for the nil
// UUID (what a runtime without one for the device reports).
HAL_MUST_USE_RESULT hal_status_t gpu_adapter_device_uuid_result(
    const gpu_adapter_t* adapter, int device, const char* call,
    const void* vendor_uuid, uint8_t out_uuid[GPU_ADAPTER_UUID_SIZE]);

// Allocates a gpu_context_t for context_open() / frees it.
HAL_MUST_USE_RESULT hal_status_t gpu_adapter_context_allocate(
    gpu_adapter_t* adapter, int device, int native_device, void* native,
    gpu_context_t** out_context);
void gpu_adapter_context_free(gpu_adapter_t* adapter, gpu_context_t* context);

// The host-function fallback: when the runtime lacks cuLaunchHostFunc /
// hipLaunchHostFunc (or it is hidden), the vendor enqueues a stream callback
// whose user data is one of these records. The record is the callback's once
// enqueued.
typedef struct gpu_adapter_host_call_t gpu_adapter_host_call_t;

HAL_MUST_USE_RESULT hal_status_t gpu_adapter_host_call_create(
    gpu_adapter_base_t* base, gpu_host_fn_t fn, void* user_data,
    gpu_adapter_host_call_t** out_call);

// For the vendor's stream callback, on a runtime thread (Q1: no vendor
// call, no blocking): frees |call| and, as the native launch does, runs its
// function only when the stream has not failed.
void gpu_adapter_host_call_run(gpu_adapter_host_call_t* call,
                               bool stream_failed);

// Frees a record the runtime refused to enqueue (its callback never runs).
void gpu_adapter_host_call_discard(gpu_adapter_host_call_t* call);

// Frees what gpu_adapter_create() made: unloads the library, frees the
// strings and the adapter. For the vendors' destroy op.
void gpu_adapter_base_destroy(gpu_adapter_base_t* base);

// UNIMPLEMENTED: the runtime lacks what an op needs; names the optional
// symbols it lacks.
HAL_MUST_USE_RESULT hal_status_t
gpu_adapter_unsupported(const gpu_adapter_t* adapter, const char* what);

// Ops behind a capability bit return UNIMPLEMENTED when the runtime lacks
// it: the symbols they need are NULL then and must not be called.
#define GPU_ADAPTER_REQUIRE(adapter, capability, what)                  \
  do {                                                                  \
    if (HAL_UNLIKELY(!((adapter)->info.capabilities & (capability)))) { \
      return gpu_adapter_unsupported((adapter), (what));                \
    }                                                                   \
  } while (0)

//===----------------------------------------------------------------------===//
// Loading (loader.c)
//===----------------------------------------------------------------------===//

// A bounded text accumulator for messages built on error paths: appending
// never fails; what does not fit is cut and marked "...".
typedef struct gpu_adapter_text_t {
  size_t length;
  bool truncated;
  char data[2048];
} gpu_adapter_text_t;

void gpu_adapter_text_append(gpu_adapter_text_t* text, const char* format, ...)
    HAL_PRINTF_LIKE(2, 3);

// The next element of a list separated by commas and spaces, from
// |*cursor| on: its start (|*out_length| bytes long), the cursor moved past
// it; NULL at the list's end.
const char* gpu_adapter_list_next(const char** cursor, size_t* out_length);

// Whether |name| is an element of the comma-separated |list| (NULL: none).
bool gpu_adapter_name_in_list(const char* list, const char* name);

// dlopen()s |override| when non-NULL and non-empty, else the vendor's
// default libraries in order; the first that loads wins. NOT_FOUND lists
// every library tried with its dlerror() text.
HAL_MUST_USE_RESULT hal_status_t
gpu_adapter_library_open(const gpu_adapter_vendor_desc_t* vendor,
                         const char* override, void** out_handle);

// Resolves the vendor's symbols whose DLSYM flag equals |dlsym_pass| into
// the symbol struct: by dlsym() in the DLSYM pass, else via vendor->lookup.
// Names in |hide_list| read as missing. Missing optional names are appended
// to |missing_optional| (comma-separated) and their capability bits
// cleared from |*inout_capabilities|. INCOMPATIBLE names every missing
// required symbol.
HAL_MUST_USE_RESULT hal_status_t gpu_adapter_symbols_resolve(
    gpu_adapter_base_t* base, bool dlsym_pass, const char* hide_list,
    gpu_adapter_text_t* missing_optional, uint32_t* inout_capabilities);

//===----------------------------------------------------------------------===//
// Vendor results -> hal_status_t (status.c)
//===----------------------------------------------------------------------===//

// The table entry of |result|, or NULL.
const gpu_adapter_error_t* gpu_adapter_error_lookup(
    const gpu_adapter_vendor_desc_t* vendor, int32_t result);

// Appends "<call> failed: <NAME> (<result>): <description>" (and the
// device-lost marker) to |out_text|; returns the mapped status code.
hal_status_code_t gpu_adapter_result_describe(const gpu_adapter_base_t* base,
                                              int32_t result, const char* call,
                                              gpu_adapter_text_t* out_text);

// A status for the failed vendor call |call| that returned |result| (not
// success): "<call> failed: <NAME> (<result>): <description>". The code
// comes from the vendor's table (UNKNOWN for codes it does not list;
// DEVICE_LOST when the context is unusable after the error). |base|
// supplies the runtime's name/description functions when loaded; a base
// with only |vendor| set works (table names only).
HAL_MUST_USE_RESULT hal_status_t
gpu_adapter_result_status(const gpu_adapter_base_t* base, int32_t result,
                          const char* call, const char* file, int line);

// The status of the runtime's init that returned |result|: OK on success;
// OK with *out_no_device set to the converted failure when |no_device| (a
// runtime without devices is a valid state: the driver lists zero devices
// and says why); else the converted failure.
HAL_MUST_USE_RESULT hal_status_t gpu_adapter_init_status(
    const gpu_adapter_base_t* base, int32_t result, bool no_device,
    const char* call, const char* file, int line, hal_status_t* out_no_device);

// Adds to *inout_no_device (set by init) what the device count call |call|
// says: its failure, or the count it returned.
void gpu_adapter_explain_no_device(const gpu_adapter_base_t* base,
                                   int32_t result, int count, const char* call,
                                   hal_status_t* inout_no_device);

// The status of a stream or event query that returned |result|: OK with
// *out_done true on success, OK with false on |not_ready| (not an error),
// else the converted failure.
HAL_MUST_USE_RESULT hal_status_t gpu_adapter_query_status(
    const gpu_adapter_base_t* base, int32_t result, int32_t not_ready,
    const char* call, const char* file, int line, bool* out_done);

// gpu_adapter_query_status() of |expr| (a query call) at the call site:
//   return GPU_QUERY_STATUS(base, syms->cuStreamQuery(s),
//                           CUDA_ERROR_NOT_READY, "cuStreamQuery", out_idle);
#define GPU_QUERY_STATUS(base, expr, not_ready, call, out_done)           \
  gpu_adapter_query_status((base), (int32_t)(expr), (int32_t)(not_ready), \
                           (call), __FILE__, __LINE__, (out_done))

// The status of |expr| (a vendor call returning CUresult/hipError_t; 0 is
// success) named |call|.
#define GPU_RESULT_STATUS(base, expr, call)                           \
  gpu_adapter_result_status_if_error((base), (int32_t)(expr), (call), \
                                     __FILE__, __LINE__)

// Returns the converted status from the enclosing function if |expr| fails:
//   GPU_RETURN_IF_ERROR(base, syms->cuMemAlloc(&p, n), "cuMemAlloc");
#define GPU_RETURN_IF_ERROR(base, expr, call)                                 \
  do {                                                                        \
    int32_t gpu_result_ = (int32_t)(expr);                                    \
    if (HAL_UNLIKELY(gpu_result_ != 0)) {                                     \
      return gpu_adapter_result_status((base), gpu_result_, (call), __FILE__, \
                                       __LINE__);                             \
    }                                                                         \
  } while (0)

static inline hal_status_t gpu_adapter_result_status_if_error(
    const gpu_adapter_base_t* base, int32_t result, const char* call,
    const char* file, int line) {
  if (HAL_LIKELY(result == 0))
    return HAL_OK;
  return gpu_adapter_result_status(base, result, call, file, line);
}

HAL_EXTERN_C_END

#endif  // DRIVERS_GPU_ADAPTER_ADAPTER_IMPL_H_
