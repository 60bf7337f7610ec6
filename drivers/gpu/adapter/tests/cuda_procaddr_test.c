// Copyright 2026 The HAL Authors.
//
// Every entry point of the CUDA adapter's table that goes through
// cuGetProcAddress must come back as the function the library exports
// under the header's name for it: what cuGetProcAddress hands out for an
// API name at CUDA_VERSION is called with the signature cuda.h declares
// for that (possibly renamed) name. A row whose API name cuGetProcAddress
// maps to another ABI (the name cuGraphInstantiate keeps its pre-CUDA 12
// five-argument signature, cuda.h's three-argument one is
// cuGraphInstantiateWithFlags) would be called with the wrong arguments:
// on a real driver, a crash at the first graph instantiated.
//
// Runs against the library GPU_ADAPTER_TEST_LIBRARY names (the virtual
// GPU's libvgpu-cuda.so in the build; libcuda.so.1 on a GPU machine).

#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adapter_impl.h"
#include "cuda_symbols.h"
#include "hal_test.h"

typedef struct row_t {
  const char* api_name;     // what cuGetProcAddress is asked for
  const char* export_name;  // the header's name for it, as exported
  uint32_t kind;
} row_t;

#define ROW(kind, capability, name, ret, params) \
  {#name, GPU_ADAPTER_XSTR_(name), GPU_ADAPTER_SYMBOL_KIND_##kind},
static const row_t kRows[] = {GPU_CUDA_SYMBOLS(ROW)};
#undef ROW

static void ProcAddress_EveryRowIsTheHeadersExport(void** state) {
  (void)state;
  const char* library = getenv("GPU_ADAPTER_TEST_LIBRARY");
  assert_non_null(library);
  void* lib = dlopen(library, RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL)
    fail_msg("dlopen %s: %s", library, dlerror());
  // dlsym's object pointers become function pointers by copy (ISO C has
  // no conversion between the two).
  CUresult (*init)(unsigned int) = NULL;
  CUresult (*get)(const char*, void**, int, cuuint64_t,
                  CUdriverProcAddressQueryResult*) = NULL;
  void* symbol = dlsym(lib, "cuInit");
  memcpy(&init, &symbol, sizeof(symbol));
  symbol = dlsym(lib, "cuGetProcAddress_v2");
  memcpy(&get, &symbol, sizeof(symbol));
  assert_non_null(init);
  assert_non_null(get);
  assert_int_equal(init(0), CUDA_SUCCESS);
  int checked = 0, wrong = 0;
  for (size_t i = 0; i < HAL_ARRAYSIZE(kRows); ++i) {
    const row_t* row = &kRows[i];
    if (row->kind & GPU_ADAPTER_SYMBOL_DLSYM)
      continue;  // looked up by its export name already
    void* exported = dlsym(lib, row->export_name);
    void* fn = NULL;
    CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SUCCESS;
    CUresult result = get(row->api_name, &fn, CUDA_VERSION,
                          CU_GET_PROC_ADDRESS_DEFAULT, &found);
    if (exported == NULL && result != CUDA_SUCCESS)
      continue;  // an optional entry point this library lacks altogether
    ++checked;
    if (result != CUDA_SUCCESS || fn != exported) {
      ++wrong;
      print_message(
          "%s at %d: cuGetProcAddress gave %p (result %d), the "
          "export %s is %p\n",
          row->api_name, CUDA_VERSION, fn, (int)result, row->export_name,
          exported);
    }
  }
  print_message("%d of %zu rows checked through cuGetProcAddress, %d wrong\n",
                checked, HAL_ARRAYSIZE(kRows), wrong);
  assert_int_equal(wrong, 0);
  assert_true(checked > 30);
  dlclose(lib);
}

// The test list: CASE binds this program's (empty) fixture.
#define CASE(name) cmocka_unit_test(name)

int main(void) {
  const struct CMUnitTest tests[] = {
      CASE(ProcAddress_EveryRowIsTheHeadersExport),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
