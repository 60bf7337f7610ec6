// Copyright 2026 The HAL Authors.
//
// Loading vendor runtimes through the adapter: missing libraries, the CUDA
// toolkit's stub libcuda, the real Debian libamdhip64 (no AMD GPU needed),
// and fake runtimes generated from the adapters' symbol tables that lack
// required or optional symbols. Paths come from meson.build through
// GPU_ADAPTER_TEST_* variables; a test whose library is absent is skipped.

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "adapter.h"
#include "hal_test.h"

// A library path from the environment, or NULL (the test then skips).
static const char* test_library(const char* variable) {
  const char* path = getenv(variable);
  return path && path[0] ? path : NULL;
}

static hal_status_t create_adapter(gpu_adapter_vendor_t vendor,
                                   const char* library, const char* hide,
                                   gpu_adapter_t** out_adapter) {
  gpu_adapter_options_t options = {.library = library, .hide_symbols = hide};
  return gpu_adapter_create(vendor, &options, hal_allocator_system(),
                            out_adapter);
}

static int setup(void** state) {
  // The runs below choose their libraries explicitly.
  unsetenv("HAL_CUDA_LIBRARY");
  unsetenv("HAL_HIP_LIBRARY");
  unsetenv("HAL_GPU_ADAPTER_HIDE_SYMBOLS");
  unsetenv("GPU_FAKE_CUDA_MISSING");
  return 0;
}

static void Load_BadArguments(void** state) {
  gpu_adapter_t* adapter = (gpu_adapter_t*)1;
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, "unknown GPU vendor 7",
                    gpu_adapter_create((gpu_adapter_vendor_t)7, NULL,
                                       hal_allocator_system(), &adapter));
  assert_null(adapter);
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, "out_adapter",
                    gpu_adapter_create(GPU_ADAPTER_VENDOR_CUDA, NULL,
                                       hal_allocator_system(), NULL));
  gpu_adapter_destroy(NULL);
}

// A hide list naming what no runtime has (a typo) hides nothing: refused
// before anything is loaded, naming the name and where the list came from,
// whether from the options or the environment. Names of either vendor are
// accepted by both (one environment serves every driver of a process).
static void Load_HideListNamesOnlyEntryPoints(void** state) {
  gpu_adapter_t* adapter = (gpu_adapter_t*)1;
#if defined(GPU_ADAPTER_HAVE_CUDA)
  HAL_ASSERT_STATUS(
      HAL_STATUS_INVALID_ARGUMENT,
      "the adapter options' hide_symbols names 'cuGraphAddKernelNod', which "
      "is not the API name of an entry point",
      create_adapter(GPU_ADAPTER_VENDOR_CUDA, "/nonexistent/libcuda.so.1",
                     "cuGraphLaunch, cuGraphAddKernelNod", &adapter));
  assert_null(adapter);
#endif
#if defined(GPU_ADAPTER_HAVE_HIP)
  setenv("HAL_GPU_ADAPTER_HIDE_SYMBOLS", "hipGraphLaunch,HIPMALLOC", 1);
  adapter = (gpu_adapter_t*)1;
  hal_status_t status = gpu_adapter_create(GPU_ADAPTER_VENDOR_HIP, NULL,
                                           hal_allocator_system(), &adapter);
  unsetenv("HAL_GPU_ADAPTER_HIDE_SYMBOLS");
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT,
                    "HAL_GPU_ADAPTER_HIDE_SYMBOLS names 'HIPMALLOC'", status);
  assert_null(adapter);
#endif
#if defined(GPU_ADAPTER_HAVE_CUDA) && defined(GPU_ADAPTER_HAVE_HIP)
  // Known names pass the check; the load then fails on the library alone.
  HAL_ASSERT_STATUS(
      HAL_STATUS_NOT_FOUND, "/nonexistent/libcuda.so.1",
      create_adapter(GPU_ADAPTER_VENDOR_CUDA, "/nonexistent/libcuda.so.1",
                     " hipGraphExecUpdate,,cuGraphExecUpdate ", &adapter));
  assert_null(adapter);
#endif
}

// The override comes from the environment; the message names every library
// tried with its dlerror() text and the variable that chose it.
static void check_missing_library(gpu_adapter_vendor_t vendor,
                                  const char* variable) {
  setenv(variable, "/nonexistent/libvendor.so.1", 1);
  gpu_adapter_t* adapter = NULL;
  hal_status_t status =
      gpu_adapter_create(vendor, NULL, hal_allocator_system(), &adapter);
  unsetenv(variable);
  assert_null(adapter);
  const char* message = hal_status_message(status);
  assert_int_equal(hal_status_code(status), HAL_STATUS_NOT_FOUND);
  assert_non_null(strstr(message, "tried 1 library"));
  assert_non_null(strstr(message,
                         "/nonexistent/libvendor.so.1 (/nonexistent/"
                         "libvendor.so.1: cannot open shared object file"));
  assert_non_null(strstr(message, variable));
  // It says how to run on the virtual GPU instead.
  char hint[256];
  snprintf(hint, sizeof(hint),
           "to run on the virtual GPU instead, set %s to its libvgpu-%s.so "
           "(in the directory that `pkg-config --variable=vgpudir hal` names",
           variable, vendor == GPU_ADAPTER_VENDOR_CUDA ? "cuda" : "hip");
  assert_non_null(strstr(message, hint));
  hal_status_free(status);
}

// The fake runtime answers every UUID query with success and the nil UUID
// (it writes nothing): the runtime has no UUID for the device, said as
// UNIMPLEMENTED naming the call, with the output cleared.
static void check_fake_has_no_uuid(gpu_adapter_t* adapter, const char* call) {
  uint8_t uuid[GPU_ADAPTER_UUID_SIZE];
  memset(uuid, 0xAB, sizeof(uuid));
  char expected[96];
  snprintf(expected, sizeof(expected), "%s gave the nil UUID for device 0",
           call);
  HAL_ASSERT_STATUS(HAL_STATUS_UNIMPLEMENTED, expected,
                    adapter->ops->device_uuid(adapter, 0, uuid));
  static const uint8_t kZero[GPU_ADAPTER_UUID_SIZE] = {0};
  assert_memory_equal(uuid, kZero, sizeof(uuid));
}

#if defined(GPU_ADAPTER_HAVE_CUDA)

static void Cuda_MissingLibrary(void** state) {
  check_missing_library(GPU_ADAPTER_VENDOR_CUDA, "HAL_CUDA_LIBRARY");
}

// With no override the default libcuda.so.1 is tried: on a machine without
// the driver the failure names it.
static void Cuda_DefaultLibrary(void** state) {
  gpu_adapter_t* adapter = NULL;
  hal_status_t status =
      create_adapter(GPU_ADAPTER_VENDOR_CUDA, NULL, NULL, &adapter);
  if (hal_status_code(status) == HAL_STATUS_NOT_FOUND) {
    assert_non_null(strstr(hal_status_message(status), "libcuda.so.1 ("));
  }
  hal_status_free(status);
  gpu_adapter_destroy(adapter);
}

// The toolkit's stub libcuda.so answers every call with
// CUDA_ERROR_STUB_LIBRARY, cuGetErrorName included: the name comes from
// the adapter's table.
static void Cuda_StubLibrary(void** state) {
  const char* stub = test_library("GPU_ADAPTER_TEST_CUDA_STUB");
  if (!stub)
    HAL_TEST_SKIP(
        "GPU_ADAPTER_TEST_CUDA_STUB is not set: no such library on this "
        "machine");
  gpu_adapter_t* adapter = NULL;
  HAL_ASSERT_STATUS(
      HAL_STATUS_UNAVAILABLE, "cuInit failed: CUDA_ERROR_STUB_LIBRARY (34)",
      create_adapter(GPU_ADAPTER_VENDOR_CUDA, stub, NULL, &adapter));
  assert_null(adapter);
}

static void Cuda_FakeLoads(void** state) {
  const char* fake = test_library("GPU_ADAPTER_TEST_FAKE_CUDA");
  if (!fake)
    HAL_TEST_SKIP(
        "GPU_ADAPTER_TEST_FAKE_CUDA is not set: no such library on this "
        "machine");
  gpu_adapter_t* adapter = NULL;
  HAL_ASSERT_OK(create_adapter(GPU_ADAPTER_VENDOR_CUDA, fake, NULL, &adapter));
  assert_string_equal(adapter->info.vendor_name, "CUDA");
  assert_non_null(strstr(adapter->info.library_path, "fake-cuda"));
  assert_string_equal(adapter->info.missing_optional_symbols, "");
  assert_null(adapter->info.no_device_reason);
  uint32_t all =
      GPU_ADAPTER_CAP_HOST_FUNC_NATIVE | GPU_ADAPTER_CAP_GRAPH |
      GPU_ADAPTER_CAP_GRAPH_MEMSET_NODE | GPU_ADAPTER_CAP_GRAPH_MEMCPY_NODE |
      GPU_ADAPTER_CAP_GRAPH_HOST_NODE | GPU_ADAPTER_CAP_GRAPH_KERNEL_NODE |
      GPU_ADAPTER_CAP_GRAPH_EXEC_UPDATE | GPU_ADAPTER_CAP_MODULE |
      GPU_ADAPTER_CAP_EVENT_TIMING | GPU_ADAPTER_CAP_STREAM_ORDERED_ALLOC |
      GPU_ADAPTER_CAP_PARAM_INFO;
  assert_int_equal(adapter->info.capabilities, all);
  int count = -1;
  HAL_ASSERT_OK(adapter->ops->device_count(adapter, &count));
  assert_int_equal(count, 0);
  check_fake_has_no_uuid(adapter, "cuDeviceGetUuid");
  gpu_adapter_destroy(adapter);
}

// K16 for vendor runtimes: a truncated copy of a runtime named by path
// (HAL_CUDA_LIBRARY=/some/file) is refused with the reason, never handed to
// dlopen, which would die of SIGBUS mapping segments past the file's end.
static void Cuda_TruncatedLibraryIsRefused(void** state) {
  const char* fake = test_library("GPU_ADAPTER_TEST_FAKE_CUDA");
  if (!fake)
    HAL_TEST_SKIP(
        "GPU_ADAPTER_TEST_FAKE_CUDA is not set: no such library on this "
        "machine");
  FILE* source = fopen(fake, "rb");
  assert_non_null(source);
  static char bytes[1 << 20];
  size_t length = fread(bytes, 1, sizeof(bytes), source);
  fclose(source);
  assert_true(length > 8192);
  const char* tmpdir = getenv("TMPDIR");
  char template_path[512];
  snprintf(template_path, sizeof(template_path), "%s/hal-adapter-XXXXXX",
           tmpdir && tmpdir[0] ? tmpdir : "/tmp");
  assert_non_null(mkdtemp(template_path));
  // Cut inside the program headers and inside a loaded segment.
  const size_t cuts[] = {100, length / 2};
  for (size_t c = 0; c < HAL_ARRAYSIZE(cuts); ++c) {
    char path[600];
    snprintf(path, sizeof(path), "%s/libcuda.so.1", template_path);
    FILE* target = fopen(path, "wb");
    assert_non_null(target);
    assert_int_equal(fwrite(bytes, 1, cuts[c], target), cuts[c]);
    fclose(target);
    gpu_adapter_t* adapter = NULL;
    HAL_ASSERT_STATUS(
        HAL_STATUS_NOT_FOUND, "truncated ELF file",
        create_adapter(GPU_ADAPTER_VENDOR_CUDA, path, NULL, &adapter));
    assert_null(adapter);
    unlink(path);
  }
  rmdir(template_path);
}

// cuGetProcAddress says "not found" for a required symbol: every missing
// one is named by its API name, also where cuda.h renames it
// (cuMemAlloc -> cuMemAlloc_v2).
static void Cuda_FakeMissingRequired(void** state) {
  const char* fake = test_library("GPU_ADAPTER_TEST_FAKE_CUDA");
  if (!fake)
    HAL_TEST_SKIP(
        "GPU_ADAPTER_TEST_FAKE_CUDA is not set: no such library on this "
        "machine");
  setenv("GPU_FAKE_CUDA_MISSING", "cuStreamCreate,cuMemAlloc", 1);
  gpu_adapter_t* adapter = NULL;
  hal_status_t status =
      create_adapter(GPU_ADAPTER_VENDOR_CUDA, fake, NULL, &adapter);
  unsetenv("GPU_FAKE_CUDA_MISSING");
  assert_null(adapter);
  HAL_ASSERT_STATUS(HAL_STATUS_INCOMPATIBLE,
                    "lacks 2 required symbols: cuMemAlloc, cuStreamCreate",
                    status);
}

static void Cuda_FakeMissingOptional(void** state) {
  const char* fake = test_library("GPU_ADAPTER_TEST_FAKE_CUDA");
  if (!fake)
    HAL_TEST_SKIP(
        "GPU_ADAPTER_TEST_FAKE_CUDA is not set: no such library on this "
        "machine");
  setenv("GPU_FAKE_CUDA_MISSING", "cuGraphExecUpdate,cuGraphAddMemcpyNode", 1);
  gpu_adapter_t* adapter = NULL;
  hal_status_t status =
      create_adapter(GPU_ADAPTER_VENDOR_CUDA, fake, NULL, &adapter);
  unsetenv("GPU_FAKE_CUDA_MISSING");
  HAL_ASSERT_OK(status);
  uint32_t caps = adapter->info.capabilities;
  assert_true(caps & GPU_ADAPTER_CAP_GRAPH);
  assert_true(caps & GPU_ADAPTER_CAP_GRAPH_MEMSET_NODE);
  assert_false(caps & GPU_ADAPTER_CAP_GRAPH_MEMCPY_NODE);
  assert_false(caps & GPU_ADAPTER_CAP_GRAPH_EXEC_UPDATE);
  assert_string_equal(adapter->info.missing_optional_symbols,
                      "cuGraphAddMemcpyNode,cuGraphExecUpdate");
  // An op without its capability refuses clearly; exec update reports a
  // refusal (the caller re-instantiates).
  gpu_graph_node_t node = (gpu_graph_node_t)1;
  HAL_ASSERT_STATUS(HAL_STATUS_UNIMPLEMENTED,
                    "does not support graph memcpy nodes (missing optional "
                    "symbols: cuGraphAddMemcpyNode",
                    adapter->ops->graph_add_memcpy_node(adapter, NULL, NULL, 0,
                                                        0, 0, 4, &node));
  assert_null(node);
  bool accepted = true;
  HAL_ASSERT_OK(
      adapter->ops->graph_exec_update(adapter, NULL, NULL, &accepted));
  assert_false(accepted);
  gpu_adapter_destroy(adapter);
}

// Without graphs, no graph-dependent bit survives.
static void Cuda_FakeWithoutGraphs(void** state) {
  const char* fake = test_library("GPU_ADAPTER_TEST_FAKE_CUDA");
  if (!fake)
    HAL_TEST_SKIP(
        "GPU_ADAPTER_TEST_FAKE_CUDA is not set: no such library on this "
        "machine");
  gpu_adapter_t* adapter = NULL;
  HAL_ASSERT_OK(
      create_adapter(GPU_ADAPTER_VENDOR_CUDA, fake, "cuGraphLaunch", &adapter));
  assert_int_equal(adapter->info.capabilities,
                   GPU_ADAPTER_CAP_HOST_FUNC_NATIVE | GPU_ADAPTER_CAP_MODULE |
                       GPU_ADAPTER_CAP_EVENT_TIMING |
                       GPU_ADAPTER_CAP_STREAM_ORDERED_ALLOC |
                       GPU_ADAPTER_CAP_PARAM_INFO);
  assert_string_equal(adapter->info.missing_optional_symbols,
                      "cuGraphLaunch (hidden)");
  gpu_graph_t graph = (gpu_graph_t)1;
  HAL_ASSERT_STATUS(HAL_STATUS_UNIMPLEMENTED, "does not support graphs",
                    adapter->ops->graph_create(adapter, &graph));
  assert_null(graph);
  gpu_adapter_destroy(adapter);
}

// Without one stream-ordered allocation symbol the capability is off and
// each of its ops refuses clearly (the GPU core then orders allocations
// itself).
static void Cuda_FakeWithoutStreamOrderedAlloc(void** state) {
  const char* fake = test_library("GPU_ADAPTER_TEST_FAKE_CUDA");
  if (!fake)
    HAL_TEST_SKIP(
        "GPU_ADAPTER_TEST_FAKE_CUDA is not set: no such library on this "
        "machine");
  gpu_adapter_t* adapter = NULL;
  HAL_ASSERT_OK(create_adapter(GPU_ADAPTER_VENDOR_CUDA, fake, "cuMemFreeAsync",
                               &adapter));
  assert_false(adapter->info.capabilities &
               GPU_ADAPTER_CAP_STREAM_ORDERED_ALLOC);
  assert_true(adapter->info.capabilities & GPU_ADAPTER_CAP_GRAPH);
  gpu_pool_t pool = (gpu_pool_t)1;
  HAL_ASSERT_STATUS(HAL_STATUS_UNIMPLEMENTED, "stream-ordered allocation",
                    adapter->ops->pool_create(adapter, NULL, 0, &pool));
  assert_null(pool);
  gpu_device_ptr_t pointer = 1;
  HAL_ASSERT_STATUS(
      HAL_STATUS_UNIMPLEMENTED, "stream-ordered allocation",
      adapter->ops->alloc_async(adapter, NULL, NULL, 64, &pointer));
  assert_int_equal(pointer, 0);
  HAL_ASSERT_STATUS(HAL_STATUS_UNIMPLEMENTED, "stream-ordered allocation",
                    adapter->ops->free_async(adapter, NULL, 64));
  gpu_adapter_destroy(adapter);
}

#endif  // GPU_ADAPTER_HAVE_CUDA

#if defined(GPU_ADAPTER_HAVE_HIP)

static void Hip_MissingLibrary(void** state) {
  check_missing_library(GPU_ADAPTER_VENDOR_HIP, "HAL_HIP_LIBRARY");
}

// The real runtime, found through the default list (libamdhip64.so, then
// the versioned names). With no AMD GPU it loads and reports no device
// with the vendor's error names; Debian's 5.2.3 lacks hipLaunchHostFunc.
static void Hip_RealRuntime(void** state) {
  gpu_adapter_t* adapter = NULL;
  hal_status_t status =
      create_adapter(GPU_ADAPTER_VENDOR_HIP, NULL, NULL, &adapter);
  if (hal_status_code(status) == HAL_STATUS_NOT_FOUND) {
    hal_status_free(status);
    HAL_TEST_SKIP("no HIP runtime installed");
  }
  HAL_ASSERT_OK(status);
  const gpu_adapter_info_t* info = &adapter->info;
  assert_non_null(strstr(info->library_path, "libamdhip64.so"));
  assert_true(info->runtime_version > 0);
  assert_true(info->driver_version > 0);
  int count = -1;
  HAL_ASSERT_OK(adapter->ops->device_count(adapter, &count));
  if (info->no_device_reason) {
    print_message("no device: %s\n", info->no_device_reason);
    assert_int_equal(count, 0);
    assert_non_null(strstr(info->no_device_reason, "hipInit failed: hipError"));
    assert_non_null(strstr(info->no_device_reason,
                           "hipGetDeviceCount failed: hipErrorNoDevice"));
  }
  bool native = info->capabilities & GPU_ADAPTER_CAP_HOST_FUNC_NATIVE;
  assert_int_equal(!native, strstr(info->missing_optional_symbols,
                                   "hipLaunchHostFunc") != NULL);
  assert_true(info->capabilities & GPU_ADAPTER_CAP_GRAPH);
  gpu_adapter_destroy(adapter);
}

static void Hip_RealRuntimeHiddenRequired(void** state) {
  gpu_adapter_t* adapter = NULL;
  hal_status_t status = create_adapter(GPU_ADAPTER_VENDOR_HIP, NULL,
                                       "hipStreamAddCallback", &adapter);
  if (hal_status_code(status) == HAL_STATUS_NOT_FOUND) {
    hal_status_free(status);
    HAL_TEST_SKIP("no HIP runtime installed");
  }
  assert_null(adapter);
  HAL_ASSERT_STATUS(HAL_STATUS_INCOMPATIBLE,
                    "lacks 1 required symbol: hipStreamAddCallback (hidden)",
                    status);
}

static void Hip_FakeLoads(void** state) {
  const char* fake = test_library("GPU_ADAPTER_TEST_FAKE_HIP_FULL");
  if (!fake)
    HAL_TEST_SKIP(
        "GPU_ADAPTER_TEST_FAKE_HIP_FULL is not set: no such library on this "
        "machine");
  gpu_adapter_t* adapter = NULL;
  HAL_ASSERT_OK(create_adapter(GPU_ADAPTER_VENDOR_HIP, fake, NULL, &adapter));
  assert_string_equal(adapter->info.vendor_name, "HIP");
  assert_string_equal(adapter->info.missing_optional_symbols, "");
  assert_true(adapter->info.capabilities & GPU_ADAPTER_CAP_HOST_FUNC_NATIVE);
  assert_true(adapter->info.capabilities & GPU_ADAPTER_CAP_GRAPH_EXEC_UPDATE);
  check_fake_has_no_uuid(adapter, "hipDeviceGetUuid");
  gpu_adapter_destroy(adapter);
}

// Missing required symbols are all named (plain dlsym, no versioning).
static void Hip_FakeMissingRequired(void** state) {
  const char* fake = test_library("GPU_ADAPTER_TEST_FAKE_HIP_NO_REQUIRED");
  if (!fake)
    HAL_TEST_SKIP(
        "GPU_ADAPTER_TEST_FAKE_HIP_NO_REQUIRED is not set: no such library on "
        "this machine");
  gpu_adapter_t* adapter = NULL;
  HAL_ASSERT_STATUS(
      HAL_STATUS_INCOMPATIBLE,
      "(the HIP runtime) lacks 2 required symbols: "
      "hipMemcpyAsync, hipStreamCreateWithFlags",
      create_adapter(GPU_ADAPTER_VENDOR_HIP, fake, NULL, &adapter));
  assert_null(adapter);
}

static int g_host_calls;
static void count_host_call(void* user_data) {
  ++*(int*)user_data;
}

// Missing optional symbols load fine with their capability off; the host
// function falls back to hipStreamAddCallback (the fake runs callbacks at
// once) and, as hipLaunchHostFunc, skips the function on a failed stream.
static void Hip_FakeMissingOptional(void** state) {
  const char* fake = test_library("GPU_ADAPTER_TEST_FAKE_HIP_NO_OPTIONAL");
  if (!fake)
    HAL_TEST_SKIP(
        "GPU_ADAPTER_TEST_FAKE_HIP_NO_OPTIONAL is not set: no such library on "
        "this machine");
  gpu_adapter_t* adapter = NULL;
  HAL_ASSERT_OK(create_adapter(GPU_ADAPTER_VENDOR_HIP, fake, NULL, &adapter));
  uint32_t caps = adapter->info.capabilities;
  assert_false(caps & GPU_ADAPTER_CAP_HOST_FUNC_NATIVE);
  assert_false(caps & GPU_ADAPTER_CAP_GRAPH_EXEC_UPDATE);
  assert_false(caps & GPU_ADAPTER_CAP_GRAPH_MEMCPY_NODE);
  assert_true(caps & GPU_ADAPTER_CAP_GRAPH);
  assert_string_equal(adapter->info.missing_optional_symbols,
                      "hipLaunchHostFunc,hipGraphAddMemcpyNode1D,"
                      "hipGraphExecUpdate");
  g_host_calls = 0;
  HAL_ASSERT_OK(adapter->ops->launch_host_func(adapter, (gpu_stream_t)0x1,
                                               count_host_call, &g_host_calls));
  assert_int_equal(g_host_calls, 1);
  HAL_ASSERT_OK(adapter->ops->launch_host_func(adapter, (gpu_stream_t)0xbad,
                                               count_host_call, &g_host_calls));
  assert_int_equal(g_host_calls, 1);
  gpu_adapter_destroy(adapter);
}

#endif  // GPU_ADAPTER_HAVE_HIP

// A 64-bit ELF header (the rest of |image| zero) whose section header
// table lies at |shoff|: 10 entries of 64 bytes.
static void make_elf_header(uint8_t image[128], uint64_t shoff) {
  memset(image, 0, 128);
  memcpy(image,
         "\x7f"
         "ELF",
         4);
  image[4] = 2;  // ELFCLASS64
  image[5] = 1;  // little-endian
  uint16_t shentsize = 64, shnum = 10;
  memcpy(image + 40, &shoff, 8);
  memcpy(image + 58, &shentsize, 2);
  memcpy(image + 60, &shnum, 2);
}

// The vendor load calls take no size: an image whose own headers name more
// bytes than were given is refused before the runtime reads past them.
static void check_truncated_images(gpu_adapter_t* adapter,
                                   const char* elf_format, const char* what) {
  uint8_t image[128];
  make_elf_header(image, 4096);
  gpu_module_t module = (gpu_module_t)1;
  char expected[64];
  snprintf(expected, sizeof(expected), "truncated or corrupt %s", what);
  HAL_ASSERT_STATUS(
      HAL_STATUS_INVALID_ARGUMENT, expected,
      gpu_adapter_module_load(adapter, elf_format, image, sizeof(image),
                              hal_allocator_system(), &module));
  assert_null(module);
  make_elf_header(image, 64);  // 640 bytes of section headers in 128
  HAL_ASSERT_STATUS(
      HAL_STATUS_INVALID_ARGUMENT, "table of 640 bytes at offset 64",
      gpu_adapter_module_load(adapter, elf_format, image, sizeof(image),
                              hal_allocator_system(), &module));
  // Offsets whose sum with their length wraps to 0 (or near it): a table
  // or segment before the image is outside it too.
  make_elf_header(image, (uint64_t)-640);
  HAL_ASSERT_STATUS(
      HAL_STATUS_INVALID_ARGUMENT, "section header table",
      gpu_adapter_module_load(adapter, elf_format, image, sizeof(image),
                              hal_allocator_system(), &module));
  uint16_t no_sections = 0, phentsize = 56, phnum = 1;
  for (int wrap = 0; wrap < 2; ++wrap) {
    make_elf_header(image, 0);
    memcpy(image + 60, &no_sections, 2);
    memcpy(image + 54, &phentsize, 2);
    memcpy(image + 56, &phnum, 2);
    // wrap 0: the program header table before the image; 1: the table in
    // it (at 64), its segment before it.
    uint64_t phoff = wrap ? 64 : (uint64_t)-56;
    memcpy(image + 32, &phoff, 8);
    uint64_t segment_offset = (uint64_t)-8, segment_size = 8;
    memcpy(image + 64 + 8, &segment_offset, 8);
    memcpy(image + 64 + 32, &segment_size, 8);
    HAL_ASSERT_STATUS(
        HAL_STATUS_INVALID_ARGUMENT,
        wrap ? "segment of 8 bytes" : "program header table of 56 bytes",
        gpu_adapter_module_load(adapter, elf_format, image, sizeof(image),
                                hal_allocator_system(), &module));
    assert_null(module);
  }
}

static void Cuda_TruncatedImagesAreRefused(void** state) {
  const char* fake = test_library("GPU_ADAPTER_TEST_FAKE_CUDA");
  if (!fake)
    HAL_TEST_SKIP(
        "GPU_ADAPTER_TEST_FAKE_CUDA is not set: no such library on this "
        "machine");
  gpu_adapter_t* adapter = NULL;
  HAL_ASSERT_OK(create_adapter(GPU_ADAPTER_VENDOR_CUDA, fake, NULL, &adapter));
  check_truncated_images(adapter, "cuda-cubin", "cubin");
  gpu_module_t module = NULL;
  uint8_t image[128] = {0};
  HAL_ASSERT_STATUS(
      HAL_STATUS_INVALID_ARGUMENT, "not a cubin",
      gpu_adapter_module_load(adapter, "cuda-cubin", image, sizeof(image),
                              hal_allocator_system(), &module));
  // A fatbinary header announcing more than was given.
  uint32_t magic = 0xBA55ED50u;
  uint16_t version = 1, header_size = 16;
  uint64_t fat_size = 1000;
  memcpy(image, &magic, 4);
  memcpy(image + 4, &version, 2);
  memcpy(image + 6, &header_size, 2);
  memcpy(image + 8, &fat_size, 8);
  HAL_ASSERT_STATUS(
      HAL_STATUS_INVALID_ARGUMENT, "truncated or corrupt fatbinary",
      gpu_adapter_module_load(adapter, "cuda-fatbin", image, sizeof(image),
                              hal_allocator_system(), &module));
  assert_null(module);
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, "fewer than its header",
                    gpu_adapter_module_load(adapter, "cuda-fatbin", image, 12,
                                            hal_allocator_system(), &module));
  assert_null(module);
  gpu_adapter_destroy(adapter);
}

static void Hip_TruncatedImagesAreRefused(void** state) {
  const char* fake = test_library("GPU_ADAPTER_TEST_FAKE_HIP_FULL");
  if (!fake)
    HAL_TEST_SKIP(
        "GPU_ADAPTER_TEST_FAKE_HIP_FULL is not set: no such library on this "
        "machine");
  gpu_adapter_t* adapter = NULL;
  HAL_ASSERT_OK(create_adapter(GPU_ADAPTER_VENDOR_HIP, fake, NULL, &adapter));
  check_truncated_images(adapter, "hip-code-object", "code object");
  gpu_adapter_destroy(adapter);
}

// The test list: CASE binds this program's fixture.
#define CASE(name) cmocka_unit_test_setup(name, setup)

int main(void) {
  const struct CMUnitTest tests[] = {
    CASE(Load_BadArguments),
    CASE(Load_HideListNamesOnlyEntryPoints),
#if defined(GPU_ADAPTER_HAVE_CUDA)
    CASE(Cuda_MissingLibrary),
    CASE(Cuda_DefaultLibrary),
    CASE(Cuda_StubLibrary),
    CASE(Cuda_FakeLoads),
    CASE(Cuda_TruncatedLibraryIsRefused),
    CASE(Cuda_TruncatedImagesAreRefused),
    CASE(Cuda_FakeMissingRequired),
    CASE(Cuda_FakeMissingOptional),
    CASE(Cuda_FakeWithoutGraphs),
    CASE(Cuda_FakeWithoutStreamOrderedAlloc),
#endif
#if defined(GPU_ADAPTER_HAVE_HIP)
    CASE(Hip_MissingLibrary),
    CASE(Hip_RealRuntime),
    CASE(Hip_RealRuntimeHiddenRequired),
    CASE(Hip_FakeLoads),
    CASE(Hip_TruncatedImagesAreRefused),
    CASE(Hip_FakeMissingRequired),
    CASE(Hip_FakeMissingOptional),
#endif
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
