// Copyright 2026 The HAL Authors.
//
// Loading the collective libraries (ccl.h) with no GPU: the CUDA toolkit's
// real libnccl.so.2 loads and reports its version, makes a unique id, and
// fails to create a communicator with a status that names the call, the
// NCCL error and the CUDA failure behind it, never a crash; a missing
// library names what was tried and the variable that overrides it (and,
// for RCCL, the virtual GPU's library to set it to); a library without
// NCCL's symbols names every one missing.

#include <stdlib.h>
#include <string.h>

#include "ccl.h"
#include "hal_test.h"

static const char* test_library(const char* variable) {
  const char* value = getenv(variable);
  return value && value[0] ? value : NULL;
}

static const char kNoNcclReason[] =
    "GPU_ADAPTER_TEST_NCCL is not set: no libnccl.so.2 beside the CUDA "
    "toolkit's headers on this machine";

// The toolkit's real NCCL, loaded; NULL where the machine has none.
static gpu_ccl_t* load_real_nccl(void) {
  const char* nccl = test_library("GPU_ADAPTER_TEST_NCCL");
  if (!nccl)
    return NULL;
  gpu_ccl_t* ccl = NULL;
  HAL_ASSERT_OK(
      gpu_ccl_create(GPU_CCL_VENDOR_NCCL, nccl, hal_allocator_system(), &ccl));
  return ccl;
}

static void Nccl_RealLibraryReportsItsVersion(void** state) {
  gpu_ccl_t* ccl = load_real_nccl();
  if (!ccl)
    HAL_TEST_SKIP("%s", kNoNcclReason);
  const gpu_ccl_info_t* info = gpu_ccl_info(ccl);
  print_message("%s %s: version %d\n", info->name, info->library_path,
                info->version);
  assert_string_equal(info->name, "NCCL");
  assert_non_null(strstr(info->library_path, "libnccl.so.2"));
  assert_false(info->is_virtual);
  // NCCL 2.x codes its version as major * 10000 + minor * 100 + patch.
  assert_in_range(info->version, 20000, 29999);
  gpu_ccl_destroy(ccl);
}

static void Nccl_CommInitFailsCleanlyWithoutGpu(void** state) {
  gpu_ccl_t* ccl = load_real_nccl();
  if (!ccl)
    HAL_TEST_SKIP("%s", kNoNcclReason);
  gpu_ccl_unique_id_t id;
  HAL_ASSERT_OK(gpu_ccl_unique_id(ccl, &id));
  gpu_ccl_unique_id_t zero = {{0}};
  assert_memory_not_equal(id.bytes, zero.bytes, sizeof(id.bytes));
  gpu_ccl_comm_t comm = (gpu_ccl_comm_t)1;
  hal_status_t status = gpu_ccl_comm_init_rank(ccl, 1, &id, 0, &comm);
  print_message("%s\n", hal_status_message(status));
  assert_null(comm);
  HAL_ASSERT_STATUS(HAL_STATUS_UNAVAILABLE,
                    "ncclCommInitRank failed: ncclUnhandledCudaError (1)",
                    status);
  gpu_ccl_destroy(ccl);
}

static void Nccl_BadRanksAreRefusedBeforeTheLibrary(void** state) {
  gpu_ccl_t* ccl = load_real_nccl();
  if (!ccl)
    HAL_TEST_SKIP("%s", kNoNcclReason);
  gpu_ccl_unique_id_t id = {{0}};
  gpu_ccl_comm_t comm = NULL;
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, "rank 2 of 2",
                    gpu_ccl_comm_init_rank(ccl, 2, &id, 2, &comm));
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, "rank 0 of 0",
                    gpu_ccl_comm_init_rank(ccl, 0, &id, 0, &comm));
  assert_null(comm);
  gpu_ccl_destroy(ccl);
}

static void Ccl_MissingLibraryNamesWhatWasTried(void** state) {
  gpu_ccl_t* ccl = (gpu_ccl_t*)1;
  HAL_ASSERT_STATUS(
      HAL_STATUS_NOT_FOUND,
      "could not load the NCCL runtime; tried 1 library: "
      "/nonexistent/libnccl.so.2 (",
      gpu_ccl_create(GPU_CCL_VENDOR_NCCL, "/nonexistent/libnccl.so.2",
                     hal_allocator_system(), &ccl));
  assert_null(ccl);
  // The default soname, when the machine has none: named with its
  // variable. (Debian ships no RCCL.)
  if (test_library("HAL_RCCL_LIBRARY"))
    HAL_TEST_SKIP("HAL_RCCL_LIBRARY is set: the default is not tried");
  hal_status_t status =
      gpu_ccl_create(GPU_CCL_VENDOR_RCCL, NULL, hal_allocator_system(), &ccl);
  if (status == HAL_OK) {
    gpu_ccl_destroy(ccl);
    HAL_TEST_SKIP("this machine has a librccl.so.1");
  }
  // It says how to run on the virtual GPU's RCCL instead.
  assert_non_null(strstr(hal_status_message(status),
                         "to run on the virtual GPU instead, set "
                         "HAL_RCCL_LIBRARY to its libvgpu-hip.so"));
  HAL_ASSERT_STATUS(HAL_STATUS_NOT_FOUND,
                    "could not load the RCCL runtime; tried 1 library: "
                    "librccl.so.1 (",
                    status);
}

// Any shared library without NCCL's exports: every missing one is named.
static void Ccl_LibraryWithoutItsSymbolsIsIncompatible(void** state) {
  const char* other = test_library("GPU_ADAPTER_TEST_FAKE_CUDA");
  if (!other)
    HAL_TEST_SKIP("GPU_ADAPTER_TEST_FAKE_CUDA is not set: no such library");
  gpu_ccl_t* ccl = (gpu_ccl_t*)1;
  hal_status_t status =
      gpu_ccl_create(GPU_CCL_VENDOR_RCCL, other, hal_allocator_system(), &ccl);
  assert_null(ccl);
  assert_non_null(strstr(hal_status_message(status), "ncclGroupEnd"));
  HAL_ASSERT_STATUS(HAL_STATUS_INCOMPATIBLE,
                    "(the RCCL runtime) lacks 19 required symbols: "
                    "ncclGetVersion, ncclGetErrorString, ncclGetUniqueId",
                    status);
}

#define CASE(name) cmocka_unit_test(name)

int main(void) {
  const struct CMUnitTest tests[] = {
      CASE(Nccl_RealLibraryReportsItsVersion),
      CASE(Nccl_CommInitFailsCleanlyWithoutGpu),
      CASE(Nccl_BadRanksAreRefusedBeforeTheLibrary),
      CASE(Ccl_MissingLibraryNamesWhatWasTried),
      CASE(Ccl_LibraryWithoutItsSymbolsIsIncompatible),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
