// Copyright 2026 The HAL Authors.
//
// A fake NVTX tool (what Nsight Systems injects through
// NVTX_INJECTION64_PATH): it takes the CORE2 callbacks of every NVTX
// instance that initializes (each driver plugin has its own), counts the
// ranges of the "HAL" domain started and ended, and prints the counts and
// the first range's message at exit, for profiler_ranges_test.sh.

#include <nvtx3/nvToolsExt.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#define FAKE_EXPORT __attribute__((visibility("default")))

// What the NVTX loader looks up in a tool (nvtxDetail/nvtxInit.h).
FAKE_EXPORT int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get);

static struct {
  atomic_ullong started;
  atomic_ullong ended;
  atomic_ullong next_id;
  atomic_int domains;  // "HAL" domains created
  atomic_flag first_taken;
  char first[128];
} g_fake;

// Any non-NULL handle names the domain: only "HAL" ones are counted.
static struct nvtxDomainRegistration_st* fake_domain(void) {
  static char handle;
  return (struct nvtxDomainRegistration_st*)&handle;
}

static nvtxDomainHandle_t NVTX_API fake_domain_create(const char* name) {
  if (name && strcmp(name, "HAL") == 0) {
    atomic_fetch_add(&g_fake.domains, 1);
    return fake_domain();
  }
  return NULL;
}

static void NVTX_API fake_domain_destroy(nvtxDomainHandle_t domain) {
  (void)domain;
}

static nvtxRangeId_t NVTX_API fake_range_start(nvtxDomainHandle_t domain,
                                               const nvtxEventAttributes_t* e) {
  if (domain != fake_domain())
    return 0;
  if (!atomic_flag_test_and_set(&g_fake.first_taken) && e &&
      e->messageType == NVTX_MESSAGE_TYPE_ASCII && e->message.ascii) {
    snprintf(g_fake.first, sizeof(g_fake.first), "%s", e->message.ascii);
  }
  atomic_fetch_add(&g_fake.started, 1);
  return atomic_fetch_add(&g_fake.next_id, 1) + 1;
}

static void NVTX_API fake_range_end(nvtxDomainHandle_t domain,
                                    nvtxRangeId_t id) {
  if (domain == fake_domain() && id != 0)
    atomic_fetch_add(&g_fake.ended, 1);
}

FAKE_EXPORT int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get) {
  const NvtxExportTableCallbacks* callbacks = get(NVTX_ETID_CALLBACKS);
  NvtxFunctionTable table = NULL;
  unsigned int size = 0;
  if (!callbacks ||
      !callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &table, &size) ||
      size <= NVTX_CBID_CORE2_DomainDestroy) {
    return 0;
  }
  *table[NVTX_CBID_CORE2_DomainCreateA] =
      (NvtxFunctionPointer)fake_domain_create;
  *table[NVTX_CBID_CORE2_DomainDestroy] =
      (NvtxFunctionPointer)fake_domain_destroy;
  *table[NVTX_CBID_CORE2_DomainRangeStartEx] =
      (NvtxFunctionPointer)fake_range_start;
  *table[NVTX_CBID_CORE2_DomainRangeEnd] = (NvtxFunctionPointer)fake_range_end;
  return 1;
}

__attribute__((destructor)) static void fake_report(void) {
  fprintf(stderr,
          "fake-nvtx: %d HAL domain(s), %llu range(s) started, %llu ended, "
          "first '%s'\n",
          atomic_load(&g_fake.domains), atomic_load(&g_fake.started),
          atomic_load(&g_fake.ended), g_fake.first);
}
