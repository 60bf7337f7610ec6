// Copyright 2026 The HAL Authors.
//
// Vendor results -> hal_status_t: names, codes, the device-lost marker,
// for a table of CUDA and HIP codes, with no runtime loaded (the names
// come from the adapters' own tables, as with the CUDA stub library).

#include "adapter_impl.h"
#include "hal_test.h"

#if defined(GPU_ADAPTER_HAVE_CUDA)
#include <cuda.h>
#endif
#if defined(GPU_ADAPTER_HAVE_HIP)
#include <hip/hip_runtime_api.h>
#endif

typedef struct expected_status_t {
  int32_t result;
  const char* name;
  hal_status_code_t code;
  bool device_lost;
} expected_status_t;

#define EXPECT(result, code, lost) \
  { (int32_t)(result), #result, code, lost }

static void check_conversions(const gpu_adapter_vendor_desc_t* vendor,
                              const expected_status_t* rows, size_t count) {
  // Not loaded: only |vendor| is set, as in an adapter whose init failed.
  gpu_adapter_base_t base;
  memset(&base, 0, sizeof(base));
  base.vendor = vendor;
  for (size_t i = 0; i < count; ++i) {
    hal_status_t status = gpu_adapter_result_status(
        &base, rows[i].result, "vendorCall", __FILE__, __LINE__);
    char expected[256];
    snprintf(expected, sizeof(expected), "vendorCall failed: %s (%d)",
             rows[i].name, (int)rows[i].result);
    const char* message = hal_status_message(status);
    if (!strstr(message, expected))
      fail_msg("message \"%s\" lacks \"%s\"", message, expected);
    // file:line of the call site, trimmed to the project's folders.
    assert_non_null(strstr(message, "adapter_status_test.c:"));
    if (hal_status_code(status) != rows[i].code) {
      fail_msg("%s: got %s, want %s", rows[i].name,
               hal_status_code_string(hal_status_code(status)),
               hal_status_code_string(rows[i].code));
    }
    assert_int_equal(gpu_adapter_status_is_device_lost(status),
                     rows[i].device_lost);
    hal_status_free(status);
  }
}

// Each vendor table lists a code once (header aliases such as
// hipErrorMemoryAllocation must not shadow the canonical name).
static void check_unique_codes(const gpu_adapter_vendor_desc_t* vendor) {
  for (size_t i = 0; i < vendor->error_count; ++i) {
    assert_ptr_equal(gpu_adapter_error_lookup(vendor, vendor->errors[i].code),
                     &vendor->errors[i]);
  }
}

static void check_unknown_code(const gpu_adapter_vendor_desc_t* vendor,
                               const char* expected) {
  gpu_adapter_base_t base;
  memset(&base, 0, sizeof(base));
  base.vendor = vendor;
  HAL_ASSERT_STATUS(HAL_STATUS_UNKNOWN, expected,
                    gpu_adapter_result_status(&base, 123456, "vendorCall",
                                              __FILE__, __LINE__));
}

#if defined(GPU_ADAPTER_HAVE_CUDA)
static void Cuda_Codes(void** state) {
  static const expected_status_t rows[] = {
      EXPECT(CUDA_ERROR_OUT_OF_MEMORY, HAL_STATUS_RESOURCE_EXHAUSTED, false),
      EXPECT(CUDA_ERROR_INVALID_VALUE, HAL_STATUS_INVALID_ARGUMENT, false),
      EXPECT(CUDA_ERROR_INVALID_HANDLE, HAL_STATUS_INVALID_ARGUMENT, false),
      EXPECT(CUDA_ERROR_NO_DEVICE, HAL_STATUS_NOT_FOUND, false),
      EXPECT(CUDA_ERROR_NOT_READY, HAL_STATUS_UNAVAILABLE, false),
      EXPECT(CUDA_ERROR_STUB_LIBRARY, HAL_STATUS_UNAVAILABLE, false),
      EXPECT(CUDA_ERROR_NOT_SUPPORTED, HAL_STATUS_UNIMPLEMENTED, false),
      EXPECT(CUDA_ERROR_ILLEGAL_ADDRESS, HAL_STATUS_DEVICE_LOST, true),
      EXPECT(CUDA_ERROR_LAUNCH_FAILED, HAL_STATUS_DEVICE_LOST, true),
      EXPECT(CUDA_ERROR_ECC_UNCORRECTABLE, HAL_STATUS_DEVICE_LOST, true),
      EXPECT(CUDA_ERROR_DEINITIALIZED, HAL_STATUS_DEVICE_LOST, true),
      EXPECT(CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE,
             HAL_STATUS_FAILED_PRECONDITION, false),
  };
  check_conversions(&gpu_cuda_vendor_desc, rows, HAL_ARRAYSIZE(rows));
  check_unique_codes(&gpu_cuda_vendor_desc);
  check_unknown_code(&gpu_cuda_vendor_desc,
                     "vendorCall failed: unknown CUDA error (123456)");
}
#endif

#if defined(GPU_ADAPTER_HAVE_HIP)
static void Hip_Codes(void** state) {
  static const expected_status_t rows[] = {
      EXPECT(hipErrorOutOfMemory, HAL_STATUS_RESOURCE_EXHAUSTED, false),
      EXPECT(hipErrorInvalidValue, HAL_STATUS_INVALID_ARGUMENT, false),
      EXPECT(hipErrorInvalidHandle, HAL_STATUS_INVALID_ARGUMENT, false),
      EXPECT(hipErrorNoDevice, HAL_STATUS_NOT_FOUND, false),
      EXPECT(hipErrorInvalidDevice, HAL_STATUS_INVALID_ARGUMENT, false),
      EXPECT(hipErrorNotReady, HAL_STATUS_UNAVAILABLE, false),
      EXPECT(hipErrorNotSupported, HAL_STATUS_UNIMPLEMENTED, false),
      EXPECT(hipErrorIllegalAddress, HAL_STATUS_DEVICE_LOST, true),
      EXPECT(hipErrorLaunchFailure, HAL_STATUS_DEVICE_LOST, true),
      EXPECT(hipErrorECCNotCorrectable, HAL_STATUS_DEVICE_LOST, true),
      EXPECT(hipErrorGraphExecUpdateFailure, HAL_STATUS_FAILED_PRECONDITION,
             false),
  };
  check_conversions(&gpu_hip_vendor_desc, rows, HAL_ARRAYSIZE(rows));
  check_unique_codes(&gpu_hip_vendor_desc);
  check_unknown_code(&gpu_hip_vendor_desc,
                     "vendorCall failed: unknown HIP error (123456)");
}
#endif

// GPU_RETURN_IF_ERROR: returns the converted status with the call site.
static hal_status_t failing_call(const gpu_adapter_base_t* base,
                                 int32_t result) {
  GPU_RETURN_IF_ERROR(base, result, "someCall");
  return HAL_OK;
}

static void Status_ReturnIfError(void** state) {
  gpu_adapter_vendor_desc_t vendor;
  memset(&vendor, 0, sizeof(vendor));
  vendor.name = "TEST";
  gpu_adapter_base_t base;
  memset(&base, 0, sizeof(base));
  base.vendor = &vendor;
  HAL_ASSERT_OK(failing_call(&base, 0));
  HAL_ASSERT_STATUS(HAL_STATUS_UNKNOWN,
                    "adapter_status_test.c:", failing_call(&base, 7));
  assert_false(gpu_adapter_status_is_device_lost(HAL_OK));
}

// Q5: loss is the code the adapter's conversion gives, never text. A
// status from elsewhere that quotes a loss message (annotated with one, or
// cloned from another device's failure text) does not mark a device lost;
// the converted status stays a loss through annotations and clones.
static void Q5_DeviceLossIsACodeNotAMessage(void** state) {
  hal_status_t quoted = hal_status_annotatef(
      hal_make_status(HAL_STATUS_INTERNAL,
                      "cuLaunchKernel failed: CUDA_ERROR_LAUNCH_FAILED "
                      "(719) [device lost]"),
      "device lost; [device lost]");
  assert_false(gpu_adapter_status_is_device_lost(quoted));
  hal_status_t copy = hal_status_clone(quoted);
  assert_false(gpu_adapter_status_is_device_lost(copy));
  hal_status_free(copy);
  hal_status_free(quoted);

  gpu_adapter_vendor_desc_t vendor;
  memset(&vendor, 0, sizeof(vendor));
  vendor.name = "TEST";
  gpu_adapter_error_t errors[] = {
      {5, "TEST_ERROR_LOST", HAL_STATUS_DEVICE_LOST},
      {6, "TEST_ERROR_BAD", HAL_STATUS_INTERNAL}};
  vendor.errors = errors;
  vendor.error_count = HAL_ARRAYSIZE(errors);
  gpu_adapter_base_t base;
  memset(&base, 0, sizeof(base));
  base.vendor = &vendor;
  hal_status_t lost = hal_status_annotatef(failing_call(&base, 5), "issuing");
  assert_true(gpu_adapter_status_is_device_lost(lost));
  copy = hal_status_clone(lost);
  assert_true(gpu_adapter_status_is_device_lost(copy));
  hal_status_free(copy);
  hal_status_free(lost);
  hal_status_t bad = failing_call(&base, 6);
  assert_false(gpu_adapter_status_is_device_lost(bad));
  hal_status_free(bad);
}

static void Status_NameList(void** state) {
  assert_true(gpu_adapter_name_in_list("a, bc,d", "bc"));
  assert_true(gpu_adapter_name_in_list("a, bc,d", "d"));
  assert_false(gpu_adapter_name_in_list("a, bc,d", "b"));
  assert_false(gpu_adapter_name_in_list("abc", "ab"));
  assert_false(gpu_adapter_name_in_list(NULL, "a"));
  assert_false(gpu_adapter_name_in_list("", "a"));
}

static void Status_TextTruncates(void** state) {
  gpu_adapter_text_t text = {0};
  for (int i = 0; i < 1000; ++i)
    gpu_adapter_text_append(&text, "%d,", i);
  assert_true(text.truncated);
  assert_int_equal(strlen(text.data), sizeof(text.data) - 1);
  assert_string_equal(text.data + sizeof(text.data) - 4, "...");
}

// The test list: CASE binds this program's fixture.
#define CASE(name) cmocka_unit_test(name)

int main(void) {
  const struct CMUnitTest tests[] = {
#if defined(GPU_ADAPTER_HAVE_CUDA)
    CASE(Cuda_Codes),
#endif
#if defined(GPU_ADAPTER_HAVE_HIP)
    CASE(Hip_Codes),
#endif
    CASE(Status_ReturnIfError),
    CASE(Q5_DeviceLossIsACodeNotAMessage),
    CASE(Status_NameList),
    CASE(Status_TextTruncates),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
