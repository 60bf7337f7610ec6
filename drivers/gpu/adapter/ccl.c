// Copyright 2026 The HAL Authors.
//
// NCCL and RCCL through the vendor loader (loader.c, status.c): one symbol
// table checked against nccl.h, one error table, two descriptors that differ
// in the soname, the variable and the name (ccl.h has the contract).

#include "ccl.h"

#include <dlfcn.h>
#include <nccl.h>
#include <stdlib.h>
#include <string.h>

#include "adapter_impl.h"
#include "hal/library.h"

// X(kind, capability, name, return type, parameters): adapter_impl.h's
// table shape. Only what the channels use is required.
// clang-format off
#define GPU_CCL_SYMBOLS(X)                                                     \
  X(REQUIRED, NONE, ncclGetVersion, ncclResult_t, (int* version))              \
  X(REQUIRED, NONE, ncclGetErrorString, const char*, (ncclResult_t result))    \
  X(OPTIONAL, NONE, ncclGetLastError, const char*, (ncclComm_t comm))          \
  X(REQUIRED, NONE, ncclGetUniqueId, ncclResult_t, (ncclUniqueId* uniqueId))   \
  X(REQUIRED, NONE, ncclCommInitRank, ncclResult_t,                            \
    (ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank))             \
  X(REQUIRED, NONE, ncclCommInitAll, ncclResult_t,                             \
    (ncclComm_t* comm, int ndev, const int* devlist))                          \
  X(REQUIRED, NONE, ncclCommDestroy, ncclResult_t, (ncclComm_t comm))          \
  X(REQUIRED, NONE, ncclCommAbort, ncclResult_t, (ncclComm_t comm))            \
  X(REQUIRED, NONE, ncclCommGetAsyncError, ncclResult_t,                       \
    (ncclComm_t comm, ncclResult_t* asyncError))                               \
  X(REQUIRED, NONE, ncclCommCount, ncclResult_t,                               \
    (const ncclComm_t comm, int* count))                                       \
  X(REQUIRED, NONE, ncclCommUserRank, ncclResult_t,                            \
    (const ncclComm_t comm, int* rank))                                        \
  X(OPTIONAL, NONE, ncclCommSplit, ncclResult_t,                               \
    (ncclComm_t comm, int color, int key, ncclComm_t* newcomm,                 \
     ncclConfig_t* config))                                                    \
  X(REQUIRED, NONE, ncclAllReduce, ncclResult_t,                               \
    (const void* sendbuff, void* recvbuff, size_t count,                       \
     ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,                 \
     cudaStream_t stream))                                                     \
  X(REQUIRED, NONE, ncclBroadcast, ncclResult_t,                               \
    (const void* sendbuff, void* recvbuff, size_t count,                       \
     ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream)) \
  X(REQUIRED, NONE, ncclReduce, ncclResult_t,                                  \
    (const void* sendbuff, void* recvbuff, size_t count,                       \
     ncclDataType_t datatype, ncclRedOp_t op, int root, ncclComm_t comm,       \
     cudaStream_t stream))                                                     \
  X(REQUIRED, NONE, ncclAllGather, ncclResult_t,                               \
    (const void* sendbuff, void* recvbuff, size_t sendcount,                   \
     ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream))           \
  X(REQUIRED, NONE, ncclReduceScatter, ncclResult_t,                           \
    (const void* sendbuff, void* recvbuff, size_t recvcount,                   \
     ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,                 \
     cudaStream_t stream))                                                     \
  X(REQUIRED, NONE, ncclSend, ncclResult_t,                                    \
    (const void* sendbuff, size_t count, ncclDataType_t datatype, int peer,    \
     ncclComm_t comm, cudaStream_t stream))                                    \
  X(REQUIRED, NONE, ncclRecv, ncclResult_t,                                    \
    (void* recvbuff, size_t count, ncclDataType_t datatype, int peer,          \
     ncclComm_t comm, cudaStream_t stream))                                    \
  X(REQUIRED, NONE, ncclGroupStart, ncclResult_t, (void))                      \
  X(REQUIRED, NONE, ncclGroupEnd, ncclResult_t, (void))

// What each result means for a caller. A failed CUDA call inside the
// library (no GPU, an old driver), a system call or a peer that went away
// are the machine's state, not the caller's mistake.
#define GPU_CCL_ERRORS(X)                                                      \
  X(ncclUnhandledCudaError, UNAVAILABLE)                                       \
  X(ncclSystemError, UNAVAILABLE)                                              \
  X(ncclInternalError, INTERNAL)                                               \
  X(ncclInvalidArgument, INVALID_ARGUMENT)                                     \
  X(ncclInvalidUsage, FAILED_PRECONDITION)                                     \
  X(ncclRemoteError, UNAVAILABLE)                                              \
  X(ncclInProgress, UNAVAILABLE)
// clang-format on

typedef struct gpu_ccl_symbols_t {
  GPU_CCL_SYMBOLS(GPU_ADAPTER_SYMBOL_MEMBER)
} gpu_ccl_symbols_t;

// The loader works on a gpu_adapter_base_t (the library, its path, the
// descriptor); a collective library has no device ops, so its
// base.public is unused.
struct gpu_ccl_t {
  gpu_adapter_base_t base;
  gpu_ccl_symbols_t syms;
  gpu_ccl_info_t info;
};
static_assert(offsetof(gpu_ccl_t, base) == 0, "the base must be at offset 0");

GPU_CCL_SYMBOLS(GPU_ADAPTER_SYMBOL_CHECK)

#define GPU_CCL_SYMBOL_ENTRY(kind, capability, name, ret, params) \
  GPU_ADAPTER_SYMBOL_ENTRY(gpu_ccl_symbols_t, kind, capability, #name, name)
static const gpu_adapter_symbol_t gpu_ccl_symbols[] = {
    GPU_CCL_SYMBOLS(GPU_CCL_SYMBOL_ENTRY)};

static const gpu_adapter_error_t gpu_ccl_errors[] = {
    GPU_CCL_ERRORS(GPU_ADAPTER_ERROR)};

static const char* gpu_ccl_error_string(const gpu_adapter_base_t* base,
                                        int32_t result) {
  const gpu_ccl_t* ccl = (const gpu_ccl_t*)base;
  return ccl->syms.ncclGetErrorString
             ? ccl->syms.ncclGetErrorString((ncclResult_t)result)
             : NULL;
}

static const char* const gpu_nccl_libraries[] = {"libnccl.so.2"};
static const char* const gpu_rccl_libraries[] = {"librccl.so.1"};

// The fields the loader and the status conversion read; the rest of a
// GPU runtime's descriptor (ops, init hooks) does not apply. Never
// unloaded: ncclGetUniqueId leaves a bootstrap thread running in the
// library until every rank has joined. The virtual GPU's libraries carry
// the collectives themselves: NCCL's API in its CUDA library, RCCL's in
// its HIP library.
#define GPU_CCL_DESC(vendor_name, env, library_list, virtual)                 \
  {                                                                           \
    .name = vendor_name, .library_env = env, .libraries = library_list,       \
    .library_count = HAL_ARRAYSIZE(library_list),                             \
    .header_version = NCCL_VERSION_CODE, .adapter_size = sizeof(gpu_ccl_t),   \
    .symbols_offset = offsetof(gpu_ccl_t, syms), .symbols = gpu_ccl_symbols,  \
    .symbol_count = HAL_ARRAYSIZE(gpu_ccl_symbols), .errors = gpu_ccl_errors, \
    .error_count = HAL_ARRAYSIZE(gpu_ccl_errors),                             \
    .error_string = gpu_ccl_error_string, .keep_loaded = true,                \
    .virtual_library = virtual,                                               \
  }
static const gpu_adapter_vendor_desc_t gpu_ccl_descs[] = {
    [GPU_CCL_VENDOR_NCCL] = GPU_CCL_DESC("NCCL", "HAL_NCCL_LIBRARY",
                                         gpu_nccl_libraries, "libvgpu-cuda.so"),
    [GPU_CCL_VENDOR_RCCL] = GPU_CCL_DESC("RCCL", "HAL_RCCL_LIBRARY",
                                         gpu_rccl_libraries, "libvgpu-hip.so"),
};

// |result| as a status naming |call|, with the library's last error (the
// CUDA failure behind ncclUnhandledCudaError, say) when it has one.
static hal_status_t gpu_ccl_status(const gpu_ccl_t* ccl, ncclResult_t result,
                                   const char* call, ncclComm_t comm,
                                   const char* file, int line) {
  if (result == ncclSuccess)
    return HAL_OK;
  hal_status_t status =
      gpu_adapter_result_status(&ccl->base, (int32_t)result, call, file, line);
  const char* last =
      ccl->syms.ncclGetLastError ? ccl->syms.ncclGetLastError(comm) : NULL;
  if (last && last[0])
    status = hal_status_annotatef(status, "%s says: %s", ccl->info.name, last);
  return status;
}
#define GPU_CCL_RETURN_IF_ERROR(ccl, expr, call, comm) \
  HAL_RETURN_IF_ERROR(                                 \
      gpu_ccl_status((ccl), (expr), (call), (comm), __FILE__, __LINE__))

hal_status_t gpu_ccl_create(gpu_ccl_vendor_t vendor, const char* library,
                            hal_allocator_t allocator, gpu_ccl_t** out_ccl) {
  if (!out_ccl) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "out_ccl must not be NULL");
  }
  *out_ccl = NULL;
  if (vendor != GPU_CCL_VENDOR_NCCL && vendor != GPU_CCL_VENDOR_RCCL) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "unknown collective library %d", (int)vendor);
  }
  const gpu_adapter_vendor_desc_t* desc = &gpu_ccl_descs[vendor];
  if (!library)
    library = getenv(desc->library_env);
  gpu_ccl_t* ccl = NULL;
  HAL_RETURN_IF_ERROR(
      hal_allocator_malloc(allocator, sizeof(*ccl), (void**)&ccl));
  memset(ccl, 0, sizeof(*ccl));
  ccl->base.vendor = desc;
  ccl->base.allocator = allocator;
  ccl->info.name = desc->name;
  ccl->info.library_path = "";
  hal_status_t status =
      gpu_adapter_library_open(desc, library, &ccl->base.library);
  if (status == HAL_OK) {
    status =
        hal_library_path(ccl->base.library, allocator, &ccl->base.library_path);
  }
  if (status == HAL_OK) {
    ccl->info.library_path = ccl->base.library_path;
    ccl->info.is_virtual =
        dlsym(ccl->base.library, GPU_ADAPTER_VIRTUAL_GPU_SYMBOL) != NULL;
    gpu_adapter_text_t missing_optional = {0};
    uint32_t capabilities = 0;
    status = gpu_adapter_symbols_resolve(&ccl->base, /*dlsym_pass=*/false, NULL,
                                         &missing_optional, &capabilities);
  }
  if (status == HAL_OK) {
    status = gpu_ccl_status(ccl, ccl->syms.ncclGetVersion(&ccl->info.version),
                            "ncclGetVersion", NULL, __FILE__, __LINE__);
  }
  if (status != HAL_OK) {
    gpu_adapter_base_destroy(&ccl->base);
    return hal_status_annotatef(status, "loading the %s library", desc->name);
  }
  *out_ccl = ccl;
  return HAL_OK;
}

void gpu_ccl_destroy(gpu_ccl_t* ccl) {
  if (ccl)
    gpu_adapter_base_destroy(&ccl->base);
}

const gpu_ccl_info_t* gpu_ccl_info(const gpu_ccl_t* ccl) {
  return &ccl->info;
}

hal_status_t gpu_ccl_unique_id(gpu_ccl_t* ccl, gpu_ccl_unique_id_t* out_id) {
  memset(out_id, 0, sizeof(*out_id));
  ncclUniqueId id;
  GPU_CCL_RETURN_IF_ERROR(ccl, ccl->syms.ncclGetUniqueId(&id),
                          "ncclGetUniqueId", NULL);
  static_assert(sizeof(id) == sizeof(out_id->bytes), "ncclUniqueId's size");
  memcpy(out_id->bytes, &id, sizeof(id));
  return HAL_OK;
}

hal_status_t gpu_ccl_comm_init_rank(gpu_ccl_t* ccl, int rank_count,
                                    const gpu_ccl_unique_id_t* id, int rank,
                                    gpu_ccl_comm_t* out_comm) {
  *out_comm = NULL;
  if (rank_count < 1 || rank < 0 || rank >= rank_count) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "rank %d of %d: a rank is in [0, count) and the "
                           "count at least 1",
                           rank, rank_count);
  }
  ncclUniqueId native;
  memcpy(&native, id->bytes, sizeof(native));
  ncclComm_t comm = NULL;
  GPU_CCL_RETURN_IF_ERROR(
      ccl, ccl->syms.ncclCommInitRank(&comm, rank_count, native, rank),
      "ncclCommInitRank", NULL);
  *out_comm = (gpu_ccl_comm_t)comm;
  return HAL_OK;
}

hal_status_t gpu_ccl_comm_split(gpu_ccl_t* ccl, gpu_ccl_comm_t comm, int color,
                                int key, gpu_ccl_comm_t* out_comm) {
  *out_comm = NULL;
  if (!ccl->syms.ncclCommSplit) {
    return hal_make_status(HAL_STATUS_UNIMPLEMENTED,
                           "%s (%s, version %d) has no ncclCommSplit (NCCL "
                           "2.18 and later have it)",
                           ccl->info.name, ccl->info.library_path,
                           ccl->info.version);
  }
  ncclComm_t made = NULL;
  GPU_CCL_RETURN_IF_ERROR(
      ccl, ccl->syms.ncclCommSplit((ncclComm_t)comm, color, key, &made, NULL),
      "ncclCommSplit", (ncclComm_t)comm);
  *out_comm = (gpu_ccl_comm_t)made;
  return HAL_OK;
}

hal_status_t gpu_ccl_comm_rank(gpu_ccl_t* ccl, gpu_ccl_comm_t comm,
                               int* out_rank, int* out_count) {
  ncclComm_t native = (ncclComm_t)comm;
  GPU_CCL_RETURN_IF_ERROR(ccl, ccl->syms.ncclCommUserRank(native, out_rank),
                          "ncclCommUserRank", native);
  GPU_CCL_RETURN_IF_ERROR(ccl, ccl->syms.ncclCommCount(native, out_count),
                          "ncclCommCount", native);
  return HAL_OK;
}

void gpu_ccl_comm_destroy(gpu_ccl_t* ccl, gpu_ccl_comm_t comm, bool abort) {
  if (!comm)
    return;
  ncclComm_t native = (ncclComm_t)comm;
  (void)(abort ? ccl->syms.ncclCommAbort(native)
               : ccl->syms.ncclCommDestroy(native));
}

hal_status_t gpu_ccl_comm_init_all(gpu_ccl_t* ccl, int count,
                                   const int* devices, gpu_ccl_comm_t* out) {
  if (count < 1 || !devices || !out) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "%d devices: at least one, with a device list and "
                           "room for the communicators",
                           count);
  }
  for (int i = 0; i < count; ++i)
    out[i] = NULL;
  GPU_CCL_RETURN_IF_ERROR(
      ccl, ccl->syms.ncclCommInitAll((ncclComm_t*)out, count, devices),
      "ncclCommInitAll", NULL);
  return HAL_OK;
}

hal_status_t gpu_ccl_comm_check(gpu_ccl_t* ccl, gpu_ccl_comm_t comm) {
  ncclComm_t native = (ncclComm_t)comm;
  ncclResult_t failure = ncclSuccess;
  GPU_CCL_RETURN_IF_ERROR(ccl,
                          ccl->syms.ncclCommGetAsyncError(native, &failure),
                          "ncclCommGetAsyncError", native);
  return gpu_ccl_status(ccl, failure, "a collective", native, __FILE__,
                        __LINE__);
}

hal_status_t gpu_ccl_enqueue(gpu_ccl_t* ccl, gpu_ccl_comm_t comm,
                             const gpu_ccl_collective_t* c,
                             gpu_stream_t stream) {
  ncclComm_t native = (ncclComm_t)comm;
  cudaStream_t s = (cudaStream_t)stream;
  const void* send = (const void*)(uintptr_t)c->send;
  void* recv = (void*)(uintptr_t)c->recv;
  ncclDataType_t type = (ncclDataType_t)c->type;
  ncclRedOp_t op = (ncclRedOp_t)c->reduction;
  ncclResult_t result = ncclInvalidArgument;
  const char* call = "a collective";
  switch (c->kind) {
    case GPU_CCL_ALL_REDUCE:
      call = "ncclAllReduce";
      result =
          ccl->syms.ncclAllReduce(send, recv, c->count, type, op, native, s);
      break;
    case GPU_CCL_BROADCAST:
      call = "ncclBroadcast";
      result = ccl->syms.ncclBroadcast(send, recv, c->count, type, c->peer,
                                       native, s);
      break;
    case GPU_CCL_REDUCE:
      call = "ncclReduce";
      result = ccl->syms.ncclReduce(send, recv, c->count, type, op, c->peer,
                                    native, s);
      break;
    case GPU_CCL_ALL_GATHER:
      call = "ncclAllGather";
      result = ccl->syms.ncclAllGather(send, recv, c->count, type, native, s);
      break;
    case GPU_CCL_REDUCE_SCATTER:
      call = "ncclReduceScatter";
      result = ccl->syms.ncclReduceScatter(send, recv, c->count, type, op,
                                           native, s);
      break;
    case GPU_CCL_SEND:
      call = "ncclSend";
      result = ccl->syms.ncclSend(send, c->count, type, c->peer, native, s);
      break;
    case GPU_CCL_RECV:
      call = "ncclRecv";
      result = ccl->syms.ncclRecv(recv, c->count, type, c->peer, native, s);
      break;
    default:
      return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                             "unknown collective %d", (int)c->kind);
  }
  return gpu_ccl_status(ccl, result, call, native, __FILE__, __LINE__);
}

hal_status_t gpu_ccl_group_start(gpu_ccl_t* ccl) {
  GPU_CCL_RETURN_IF_ERROR(ccl, ccl->syms.ncclGroupStart(), "ncclGroupStart",
                          NULL);
  return HAL_OK;
}

hal_status_t gpu_ccl_group_end(gpu_ccl_t* ccl) {
  GPU_CCL_RETURN_IF_ERROR(ccl, ccl->syms.ncclGroupEnd(), "ncclGroupEnd", NULL);
  return HAL_OK;
}
