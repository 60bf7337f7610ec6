// Copyright 2026 The HAL Authors.
//
// Vendor results (CUresult, hipError_t) -> hal_status_t, for every vendor.
//
// A converted status reads
//   <file>:<line>: <call> failed: <NAME> (<number>): <description>
// and has the code DEVICE_LOST when the vendor's table says the context is
// unusable after that error. Names come from the vendor's
// table first (spelled by the compiler from the header's enum, so they are
// right even when the runtime cannot answer: the CUDA stub library fails
// cuGetErrorName with CUDA_ERROR_STUB_LIBRARY), then from the runtime.

#include <string.h>

#include "adapter_impl.h"

const gpu_adapter_error_t* gpu_adapter_error_lookup(
    const gpu_adapter_vendor_desc_t* vendor, int32_t result) {
  for (size_t i = 0; i < vendor->error_count; ++i) {
    if (vendor->errors[i].code == result)
      return &vendor->errors[i];
  }
  return NULL;
}

hal_status_code_t gpu_adapter_result_describe(const gpu_adapter_base_t* base,
                                              int32_t result, const char* call,
                                              gpu_adapter_text_t* out_text) {
  const gpu_adapter_vendor_desc_t* vendor = base->vendor;
  const gpu_adapter_error_t* entry = gpu_adapter_error_lookup(vendor, result);
  // The runtime is asked only once it is loaded (its functions resolved).
  bool loaded = base->library != NULL;
  const char* name = entry ? entry->name : NULL;
  if (!name && loaded && vendor->error_name)
    name = vendor->error_name(base, result);
  const char* description = loaded && vendor->error_string
                                ? vendor->error_string(base, result)
                                : NULL;
  // HIP answers some codes with the name as the description: say it once.
  if (description && (!description[0] || (name && !strcmp(description, name))))
    description = NULL;
  if (name) {
    gpu_adapter_text_append(out_text, "%s failed: %s (%d)", call, name,
                            (int)result);
  } else {
    gpu_adapter_text_append(out_text, "%s failed: unknown %s error (%d)", call,
                            vendor->name, (int)result);
  }
  if (description)
    gpu_adapter_text_append(out_text, ": %s", description);
  return entry ? entry->status_code : HAL_STATUS_UNKNOWN;
}

hal_status_t gpu_adapter_result_status(const gpu_adapter_base_t* base,
                                       int32_t result, const char* call,
                                       const char* file, int line) {
  gpu_adapter_text_t text = {0};
  hal_status_code_t code =
      gpu_adapter_result_describe(base, result, call, &text);
  return hal_status_allocate(code, file, line, "%s", text.data);
}

hal_status_t gpu_adapter_init_status(const gpu_adapter_base_t* base,
                                     int32_t result, bool no_device,
                                     const char* call, const char* file,
                                     int line, hal_status_t* out_no_device) {
  *out_no_device = HAL_OK;
  if (result == 0)
    return HAL_OK;
  hal_status_t status =
      gpu_adapter_result_status(base, result, call, file, line);
  if (!no_device)
    return status;
  *out_no_device = status;
  return HAL_OK;
}

void gpu_adapter_explain_no_device(const gpu_adapter_base_t* base,
                                   int32_t result, int count, const char* call,
                                   hal_status_t* inout_no_device) {
  gpu_adapter_text_t text = {0};
  if (result != 0) {
    gpu_adapter_result_describe(base, result, call, &text);
  } else {
    gpu_adapter_text_append(&text, "device count %d", count);
  }
  *inout_no_device = hal_status_annotatef(*inout_no_device, "%s", text.data);
}

hal_status_t gpu_adapter_query_status(const gpu_adapter_base_t* base,
                                      int32_t result, int32_t not_ready,
                                      const char* call, const char* file,
                                      int line, bool* out_done) {
  *out_done = result == 0;
  if (result == 0 || result == not_ready)
    return HAL_OK;
  return gpu_adapter_result_status(base, result, call, file, line);
}

bool gpu_adapter_status_is_device_lost(hal_status_t status) {
  return hal_status_is(status, HAL_STATUS_DEVICE_LOST);
}
