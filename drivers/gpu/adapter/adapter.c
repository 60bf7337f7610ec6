// Copyright 2026 The HAL Authors.
//
// gpu_adapter_create(): the one loading sequence every vendor goes through.
//
//   1. dlopen() the runtime (override or default list; loader.c);
//   2. dlsym() the few symbols needed before init (DLSYM entries);
//   3. the runtime's init; "no device" is remembered, not fatal;
//   4. resolve the rest through the vendor's lookup (cuGetProcAddress for
//      CUDA, so versioned entry points match the header);
//   5. versions; capability bits from what was found.

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "adapter_impl.h"
#include "hal/library.h"

// Names the override variable in messages and docs/adapters.md.
#define GPU_ADAPTER_HIDE_SYMBOLS_ENV "HAL_GPU_ADAPTER_HIDE_SYMBOLS"

// Graph capabilities mean nothing without graphs themselves.
#define GPU_ADAPTER_CAP_GRAPH_DEPENDENT                                    \
  (GPU_ADAPTER_CAP_GRAPH_MEMSET_NODE | GPU_ADAPTER_CAP_GRAPH_MEMCPY_NODE | \
   GPU_ADAPTER_CAP_GRAPH_HOST_NODE | GPU_ADAPTER_CAP_GRAPH_KERNEL_NODE |   \
   GPU_ADAPTER_CAP_GRAPH_EXEC_UPDATE)

const char* gpu_adapter_vendor_name(gpu_adapter_vendor_t vendor) {
  switch (vendor) {
    case GPU_ADAPTER_VENDOR_CUDA:
      return "CUDA";
    case GPU_ADAPTER_VENDOR_HIP:
      return "HIP";
  }
  return "unknown vendor";
}

static const gpu_adapter_vendor_desc_t* gpu_adapter_vendor_desc(
    gpu_adapter_vendor_t vendor) {
  switch (vendor) {
    case GPU_ADAPTER_VENDOR_CUDA:
#if defined(GPU_ADAPTER_HAVE_CUDA)
      return &gpu_cuda_vendor_desc;
#else
      return NULL;
#endif
    case GPU_ADAPTER_VENDOR_HIP:
#if defined(GPU_ADAPTER_HAVE_HIP)
      return &gpu_hip_vendor_desc;
#else
      return NULL;
#endif
  }
  return NULL;
}

void gpu_adapter_base_destroy(gpu_adapter_base_t* base) {
  if (!base)
    return;
  if (base->library && !base->vendor->keep_loaded)
    hal_library_close(base->library);
  if (base->tool_library)
    hal_library_close(base->tool_library);
  hal_allocator_t allocator = base->allocator;
  hal_allocator_free(allocator, base->library_path);
  hal_allocator_free(allocator, base->missing_optional_symbols);
  hal_allocator_free(allocator, base->no_device_reason);
  hal_allocator_free(allocator, base);
}

void gpu_adapter_destroy(gpu_adapter_t* adapter) {
  if (adapter)
    adapter->ops->destroy(adapter);
}

hal_status_t gpu_adapter_unsupported(const gpu_adapter_t* adapter,
                                     const char* what) {
  return hal_make_status(
      HAL_STATUS_UNIMPLEMENTED,
      "the %s runtime %s does not support %s (missing optional symbols: %s)",
      adapter->info.vendor_name, adapter->info.library_path, what,
      adapter->info.missing_optional_symbols);
}

hal_status_t gpu_adapter_device_uuid_result(
    const gpu_adapter_t* adapter, int device, const char* call,
    const void* vendor_uuid, uint8_t out_uuid[GPU_ADAPTER_UUID_SIZE]) {
  static const uint8_t kNil[GPU_ADAPTER_UUID_SIZE] = {0};
  if (memcmp(vendor_uuid, kNil, sizeof(kNil)) == 0) {
    return hal_make_status(HAL_STATUS_UNIMPLEMENTED,
                           "%s gave the nil UUID for device %d: the %s "
                           "runtime %s has no UUID for it",
                           call, device, adapter->info.vendor_name,
                           adapter->info.library_path);
  }
  memcpy(out_uuid, vendor_uuid, GPU_ADAPTER_UUID_SIZE);
  return HAL_OK;
}

hal_status_t gpu_adapter_context_allocate(gpu_adapter_t* adapter, int device,
                                          int native_device, void* native,
                                          gpu_context_t** out_context) {
  *out_context = NULL;
  gpu_context_t* context = NULL;
  HAL_RETURN_IF_ERROR(hal_allocator_malloc(gpu_adapter_base(adapter)->allocator,
                                           sizeof(*context), (void**)&context));
  context->device = device;
  context->native_device = native_device;
  context->native = native;
  *out_context = context;
  return HAL_OK;
}

void gpu_adapter_context_free(gpu_adapter_t* adapter, gpu_context_t* context) {
  hal_allocator_free(gpu_adapter_base(adapter)->allocator, context);
}

struct gpu_adapter_host_call_t {
  gpu_host_fn_t fn;
  void* user_data;
  hal_allocator_t allocator;
};

hal_status_t gpu_adapter_host_call_create(gpu_adapter_base_t* base,
                                          gpu_host_fn_t fn, void* user_data,
                                          gpu_adapter_host_call_t** out_call) {
  *out_call = NULL;
  gpu_adapter_host_call_t* call = NULL;
  HAL_RETURN_IF_ERROR(
      hal_allocator_malloc(base->allocator, sizeof(*call), (void**)&call));
  call->fn = fn;
  call->user_data = user_data;
  call->allocator = base->allocator;
  *out_call = call;
  return HAL_OK;
}

void gpu_adapter_host_call_run(gpu_adapter_host_call_t* call,
                               bool stream_failed) {
  // Freed before the function runs: the wait it ends may be followed by
  // the adapter's destruction, allocator included.
  gpu_host_fn_t fn = call->fn;
  void* user_data = call->user_data;
  gpu_adapter_host_call_discard(call);
  if (!stream_failed)
    fn(user_data);
}

void gpu_adapter_host_call_discard(gpu_adapter_host_call_t* call) {
  hal_allocator_free(call->allocator, call);
}

hal_status_t gpu_adapter_memset_value(uint32_t pattern, uint32_t pattern_size,
                                      uint32_t* out_value) {
  *out_value = 0;
  switch (pattern_size) {
    case 1:
      *out_value = pattern & 0xFFu;
      return HAL_OK;
    case 2:
      *out_value = pattern & 0xFFFFu;
      return HAL_OK;
    case 4:
      *out_value = pattern;
      return HAL_OK;
  }
  return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                         "memset pattern size %u (must be 1, 2 or 4)",
                         pattern_size);
}

static uint32_t gpu_adapter_table_capabilities(
    const gpu_adapter_vendor_desc_t* vendor) {
  uint32_t capabilities = 0;
  for (size_t i = 0; i < vendor->symbol_count; ++i)
    capabilities |= vendor->symbols[i].capability;
  return capabilities;
}

// OK when every name in |list| is an entry point of a runtime a driver
// here loads (CUDA's or HIP's tables, whichever were built): a name that
// is neither, a typo, would hide nothing, and a test of a fallback would
// pass without taking it (hal/env.h: a setting never keeps its default
// because of a typo). |source| names where the list came from.
static hal_status_t gpu_adapter_hide_list_check(const char* list,
                                                const char* source) {
  if (!list)
    return HAL_OK;
  const gpu_adapter_vendor_desc_t* descs[] = {
      gpu_adapter_vendor_desc(GPU_ADAPTER_VENDOR_CUDA),
      gpu_adapter_vendor_desc(GPU_ADAPTER_VENDOR_HIP),
  };
  size_t length = 0;
  for (const char* p; (p = gpu_adapter_list_next(&list, &length));) {
    bool known = false;
    for (size_t d = 0; d < HAL_ARRAYSIZE(descs) && !known; ++d) {
      for (size_t i = 0; descs[d] && i < descs[d]->symbol_count && !known;
           ++i) {
        const char* name = descs[d]->symbols[i].name;
        known = strlen(name) == length && strncmp(name, p, length) == 0;
      }
    }
    if (!known) {
      return hal_make_status(
          HAL_STATUS_INVALID_ARGUMENT,
          "%s names '%.*s', which is not the API name of an entry point "
          "the drivers load from the %s runtime (an exported versioned name "
          "such as cuMemAlloc_v2 is not one), so it would hide nothing",
          source, (int)length, p,
          descs[0] && descs[1] ? "CUDA or HIP"
          : descs[0]           ? "CUDA"
                               : "HIP");
    }
  }
  return HAL_OK;
}

hal_status_t gpu_adapter_create(gpu_adapter_vendor_t vendor,
                                const gpu_adapter_options_t* options,
                                hal_allocator_t allocator,
                                gpu_adapter_t** out_adapter) {
  if (!out_adapter) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "out_adapter must not be NULL");
  }
  *out_adapter = NULL;
  if (vendor != GPU_ADAPTER_VENDOR_CUDA && vendor != GPU_ADAPTER_VENDOR_HIP) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT, "unknown GPU vendor %d",
                           (int)vendor);
  }
  const gpu_adapter_vendor_desc_t* desc = gpu_adapter_vendor_desc(vendor);
  if (!desc) {
    return hal_make_status(HAL_STATUS_UNIMPLEMENTED,
                           "the %s adapter was not built (its headers were "
                           "not found at build time)",
                           gpu_adapter_vendor_name(vendor));
  }
  const char* library = options && options->library ? options->library
                                                    : getenv(desc->library_env);
  const char* hide = options && options->hide_symbols
                         ? options->hide_symbols
                         : getenv(GPU_ADAPTER_HIDE_SYMBOLS_ENV);
  HAL_RETURN_IF_ERROR(gpu_adapter_hide_list_check(
      hide, options && options->hide_symbols
                ? "the adapter options' hide_symbols"
                : GPU_ADAPTER_HIDE_SYMBOLS_ENV));

  gpu_adapter_base_t* base = NULL;
  HAL_RETURN_IF_ERROR(
      hal_allocator_malloc(allocator, desc->adapter_size, (void**)&base));
  base->vendor = desc;
  base->allocator = allocator;
  base->public.ops = desc->ops;
  gpu_adapter_info_t* info = &base->public.info;
  info->vendor = vendor;
  info->vendor_name = desc->name;
  info->header_version = desc->header_version;
  info->library_path = "";
  info->missing_optional_symbols = "";

  hal_status_t no_device = HAL_OK;
  hal_status_t status = gpu_adapter_library_open(desc, library, &base->library);
  if (status)
    goto fail_open;
  status = hal_library_path(base->library, allocator, &base->library_path);
  if (status)
    goto fail_resolve;
  info->library_path = base->library_path;
  // The virtual GPU announces itself (its module format is not the
  // vendor's); a real runtime never exports this.
  info->is_virtual =
      dlsym(base->library, GPU_ADAPTER_VIRTUAL_GPU_SYMBOL) != NULL;

  uint32_t capabilities = gpu_adapter_table_capabilities(desc);
  gpu_adapter_text_t missing_optional = {0};
  status = gpu_adapter_symbols_resolve(base, /*dlsym_pass=*/true, hide,
                                       &missing_optional, &capabilities);
  if (status)
    goto fail_resolve;
  status = desc->initialize(base, &no_device);
  if (status)
    goto fail_initialize;
  status = gpu_adapter_symbols_resolve(base, /*dlsym_pass=*/false, hide,
                                       &missing_optional, &capabilities);
  if (status)
    goto fail_resolve;
  status = desc->finish_initialize(base, &no_device);
  if (status)
    goto fail_initialize;

  if (!(capabilities & GPU_ADAPTER_CAP_GRAPH))
    capabilities &= ~(uint32_t)GPU_ADAPTER_CAP_GRAPH_DEPENDENT;
  info->capabilities = capabilities;
  // The virtual GPU loads its own module format, a real runtime its
  // vendor's.
  info->executable_formats = !(capabilities & GPU_ADAPTER_CAP_MODULE) ? ""
                             : info->is_virtual ? "vgpu-module"
                             : vendor == GPU_ADAPTER_VENDOR_CUDA
                                 ? "cuda-ptx,cuda-cubin,cuda-fatbin"
                                 : "hip-code-object";
  status = hal_allocator_strdup(allocator, missing_optional.data,
                                &base->missing_optional_symbols);
  if (status)
    goto fail_initialize;
  info->missing_optional_symbols = base->missing_optional_symbols;
  if (no_device) {
    status = hal_allocator_strdup(allocator, hal_status_message(no_device),
                                  &base->no_device_reason);
    if (status)
      goto fail_initialize;
    info->no_device_reason = base->no_device_reason;
    hal_status_free(no_device);
  }
  *out_adapter = &base->public;
  return HAL_OK;

fail_initialize:
  status = hal_status_annotatef(status, "initializing the %s runtime %s",
                                desc->name, base->library_path);
  goto fail;
fail_resolve:
  status = hal_status_annotatef(status, "resolving the %s runtime's symbols",
                                desc->name);
  goto fail;
fail_open:
fail:
  hal_status_free(no_device);
  gpu_adapter_base_destroy(base);
  return status;
}
