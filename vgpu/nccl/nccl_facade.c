// The NCCL API subset the HAL's collectives use, over the core's
// collectives engine (core/ccl.c): one source, compiled into each facade
// library that carries it, so that its communicators and its streams are
// one state. libvgpu-cuda.so exports it as NCCL
// (HAL_NCCL_LIBRARY=libvgpu-cuda.so), libvgpu-hip.so and
// libvgpu-hip-legacy.so as RCCL (HAL_RCCL_LIBRARY=libvgpu-hip.so), which
// keeps NCCL's names (ncclCommCuDevice too), codes and strings, with
// hipStream_t streams.
//
// What differs per facade comes from its nccl_vendor.h (cuda/, hip/; the
// facade's directory is on this file's include path through
// vgpu/meson.build): the API's declarations (nccl.h for CUDA,
// hip/rccl_api.h for HIP), the stream type vgpu_nccl_stream and its core
// handle vgpu_nccl_stream_h, VGPU_NCCL_FAULT_DEVICE for vgpu_api_enter, and
// vgpu_nccl_current_device with its VGPU_NCCL_NO_DEVICE message. Every
// definition here is checked by the compiler against those declarations.
//
// Ranks are in this process (one communicator per vgpu device, or several
// threads); joins and destroys are bounded by VGPU_MAX_WAIT_MS. Collectives
// run in stream order; one that fails (ranks that disagree, an abort, a
// rank that left) fails the communicator: ncclCommGetAsyncError says so.
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "nccl_vendor.h"

// The handle behind ncclComm_t. Live ones are listed, so a destroyed or
// made-up handle is refused instead of followed.
struct ncclComm {
  struct ncclComm* next;
  vgpu_ccl_comm* comm;
};

static struct {
  pthread_mutex_t mu;
  struct ncclComm* live;
} nccl_comms = {.mu = PTHREAD_MUTEX_INITIALIZER};

static _Thread_local char nccl_last_error[384];

static ncclResult_t nccl_fail(ncclResult_t result, const char* fmt, ...)
    __attribute__((format(printf, 2, 3)));
static ncclResult_t nccl_fail(ncclResult_t result, const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  vsnprintf(nccl_last_error, sizeof(nccl_last_error), fmt, args);
  va_end(args);
  return result;
}

static ncclResult_t nccl_result(vgpu_status status) {
  switch (status) {
    case VGPU_OK:
      return ncclSuccess;
    case VGPU_ERR_INVALID_VALUE:
    case VGPU_ERR_INVALID_DEVICE:
    case VGPU_ERR_INVALID_HANDLE:
    case VGPU_ERR_NOT_SUPPORTED:
      return ncclInvalidArgument;
    case VGPU_ERR_NOT_PERMITTED:
    case VGPU_ERR_INVALID_CONTEXT:
      return ncclInvalidUsage;
    case VGPU_ERR_DEVICE_LOST:
    case VGPU_ERR_TIMEOUT:
      return ncclRemoteError;
    case VGPU_ERR_OUT_OF_MEMORY:
      return ncclSystemError;
    default:
      return ncclInternalError;
  }
}

// K1 and VGPU_FAULTS, as every entry point of the facade (an injected
// fault is returned as the ncclResult_t it names, after |on_fault|, what
// the call still does when it fails that way).
#define VGPU_NCCL_ENTER_ON_FAULT(name, on_fault)                             \
  VGPU_CALL_GUARD(nccl_fail(ncclInternalError,                               \
                            "%s: the runtime is "                            \
                            "unloading",                                     \
                            name));                                          \
  do {                                                                       \
    int fault_ = 0;                                                          \
    vgpu_status st_ = vgpu_api_enter(name, VGPU_NCCL_FAULT_DEVICE, &fault_); \
    if (st_ == VGPU_ERR_FAULT) {                                             \
      on_fault;                                                              \
      return nccl_fail((ncclResult_t)fault_, "%s: injected fault", name);    \
    }                                                                        \
    if (st_ != VGPU_OK)                                                      \
      return nccl_fail(nccl_result(st_), "%s: not permitted here", name);    \
  } while (0)
#define VGPU_NCCL_ENTER(name) VGPU_NCCL_ENTER_ON_FAULT(name, (void)0)

static vgpu_ccl_comm* nccl_comm_get(ncclComm_t handle) {
  vgpu_ccl_comm* found = NULL;
  pthread_mutex_lock(&nccl_comms.mu);
  for (struct ncclComm* c = nccl_comms.live; c != NULL; c = c->next) {
    if (c == handle)
      found = c->comm;
  }
  pthread_mutex_unlock(&nccl_comms.mu);
  return found;
}

static ncclResult_t nccl_comm_publish(vgpu_ccl_comm* comm, ncclComm_t* out) {
  struct ncclComm* handle = calloc(1, sizeof(*handle));
  if (handle == NULL) {
    vgpu_ccl_comm_destroy(comm, false);
    return nccl_fail(ncclSystemError, "out of memory for a communicator");
  }
  handle->comm = comm;
  pthread_mutex_lock(&nccl_comms.mu);
  handle->next = nccl_comms.live;
  nccl_comms.live = handle;
  pthread_mutex_unlock(&nccl_comms.mu);
  *out = handle;
  return ncclSuccess;
}

// Takes |handle| off the list: the caller destroys what it held.
static vgpu_ccl_comm* nccl_comm_unpublish(ncclComm_t handle) {
  vgpu_ccl_comm* comm = NULL;
  pthread_mutex_lock(&nccl_comms.mu);
  for (struct ncclComm** p = &nccl_comms.live; *p != NULL; p = &(*p)->next) {
    if (*p == handle) {
      comm = handle->comm;
      *p = handle->next;
      break;
    }
  }
  pthread_mutex_unlock(&nccl_comms.mu);
  if (comm != NULL)
    free(handle);
  return comm;
}

VGPU_EXPORT ncclResult_t ncclGetVersion(int* version) {
  if (version == NULL)
    return nccl_fail(ncclInvalidArgument, "ncclGetVersion: version is NULL");
  *version = NCCL_VERSION_CODE;
  return ncclSuccess;
}

VGPU_EXPORT const char* ncclGetErrorString(ncclResult_t result) {
  switch (result) {
    case ncclSuccess:
      return "no error";
    case ncclUnhandledCudaError:
      return "unhandled cuda error";
    case ncclSystemError:
      return "unhandled system error";
    case ncclInternalError:
      return "internal error";
    case ncclInvalidArgument:
      return "invalid argument";
    case ncclInvalidUsage:
      return "invalid usage";
    case ncclRemoteError:
      return "remote process exited or there was a network error";
    case ncclInProgress:
      return "NCCL operation in progress";
    default:
      return "unknown result code";
  }
}

// The communicator's async error when it has one, else this thread's last
// failed call.
VGPU_EXPORT const char* ncclGetLastError(ncclComm_t comm) {
  vgpu_ccl_comm* c = comm ? nccl_comm_get(comm) : NULL;
  if (c != NULL) {
    static _Thread_local char message[384];
    if (vgpu_ccl_async_error(c, message, sizeof(message)) != VGPU_OK)
      return message;
  }
  return nccl_last_error;
}

VGPU_EXPORT ncclResult_t ncclGetUniqueId(ncclUniqueId* uniqueId) {
  VGPU_NCCL_ENTER("ncclGetUniqueId");
  if (uniqueId == NULL)
    return nccl_fail(ncclInvalidArgument, "ncclGetUniqueId: uniqueId is NULL");
  _Static_assert(sizeof(*uniqueId) == VGPU_CCL_ID_BYTES, "ncclUniqueId");
  size_t got = 0;
  while (got < sizeof(*uniqueId)) {
    ssize_t n = getrandom((char*)uniqueId + got, sizeof(*uniqueId) - got, 0);
    if (n <= 0)
      return nccl_fail(ncclSystemError, "ncclGetUniqueId: getrandom failed");
    got += (size_t)n;
  }
  return ncclSuccess;
}

VGPU_EXPORT ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks,
                                          ncclUniqueId commId, int rank) {
  VGPU_NCCL_ENTER("ncclCommInitRank");
  if (comm == NULL)
    return nccl_fail(ncclInvalidArgument, "ncclCommInitRank: comm is NULL");
  *comm = NULL;
  int device = 0;
  vgpu_status st = vgpu_nccl_current_device(&device);
  if (st != VGPU_OK)
    return nccl_fail(ncclInvalidUsage,
                     "ncclCommInitRank: " VGPU_NCCL_NO_DEVICE);
  vgpu_ccl_comm* c = NULL;
  st = vgpu_ccl_comm_init((const uint8_t*)&commId, nranks, rank, device, &c,
                          nccl_last_error, sizeof(nccl_last_error));
  if (st != VGPU_OK)
    return st == VGPU_ERR_TIMEOUT ? ncclRemoteError : nccl_result(st);
  return nccl_comm_publish(c, comm);
}

VGPU_EXPORT ncclResult_t ncclCommInitAll(ncclComm_t* comms, int ndev,
                                         const int* devlist) {
  VGPU_NCCL_ENTER("ncclCommInitAll");
  if (comms == NULL || ndev < 1 || ndev > VGPU_CCL_MAX_RANKS) {
    return nccl_fail(ncclInvalidArgument,
                     "ncclCommInitAll: %d devices (1 to %d, comms not NULL)",
                     ndev, VGPU_CCL_MAX_RANKS);
  }
  int devices[VGPU_CCL_MAX_RANKS];
  for (int i = 0; i < ndev; ++i)
    devices[i] = devlist ? devlist[i] : i;
  ncclUniqueId id;
  ncclResult_t result = ncclGetUniqueId(&id);
  if (result != ncclSuccess)
    return result;
  vgpu_ccl_comm* made[VGPU_CCL_MAX_RANKS];
  vgpu_status st =
      vgpu_ccl_comm_init_all((const uint8_t*)&id, ndev, devices, made,
                             nccl_last_error, sizeof(nccl_last_error));
  if (st != VGPU_OK)
    return nccl_result(st);
  for (int i = 0; i < ndev; ++i) {
    result = nccl_comm_publish(made[i], &comms[i]);
    if (result != ncclSuccess) {
      for (int j = i + 1; j < ndev; ++j)
        vgpu_ccl_comm_destroy(made[j], true);
      for (int j = 0; j < i; ++j)
        vgpu_ccl_comm_destroy(nccl_comm_unpublish(comms[j]), true);
      return result;
    }
  }
  return ncclSuccess;
}

VGPU_EXPORT ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key,
                                       ncclComm_t* newcomm,
                                       ncclConfig_t* config) {
  VGPU_NCCL_ENTER("ncclCommSplit");
  (void)config;  // blocking and default: what the HAL asks for
  vgpu_ccl_comm* c = comm ? nccl_comm_get(comm) : NULL;
  if (c == NULL || newcomm == NULL) {
    return nccl_fail(ncclInvalidArgument,
                     "ncclCommSplit: not a communicator, or newcomm is NULL");
  }
  *newcomm = NULL;
  vgpu_ccl_comm* made = NULL;
  vgpu_status st = vgpu_ccl_comm_split(c, color, key, &made, nccl_last_error,
                                       sizeof(nccl_last_error));
  if (st != VGPU_OK)
    return st == VGPU_ERR_TIMEOUT ? ncclRemoteError : nccl_result(st);
  return made ? nccl_comm_publish(made, newcomm) : ncclSuccess;
}

static ncclResult_t nccl_destroy(ncclComm_t comm, bool abort,
                                 const char* name) {
  vgpu_ccl_comm* c = comm ? nccl_comm_unpublish(comm) : NULL;
  if (c == NULL)
    return nccl_fail(ncclInvalidArgument, "%s: not a communicator", name);
  vgpu_status st = vgpu_ccl_comm_destroy(c, abort);
  return st == VGPU_OK
             ? ncclSuccess
             : nccl_fail(nccl_result(st),
                         "%s: its queued collectives did not run", name);
}

VGPU_EXPORT ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  VGPU_NCCL_ENTER("ncclCommDestroy");
  return nccl_destroy(comm, false, "ncclCommDestroy");
}

VGPU_EXPORT ncclResult_t ncclCommAbort(ncclComm_t comm) {
  VGPU_NCCL_ENTER("ncclCommAbort");
  return nccl_destroy(comm, true, "ncclCommAbort");
}

VGPU_EXPORT ncclResult_t ncclCommGetAsyncError(ncclComm_t comm,
                                               ncclResult_t* asyncError) {
  VGPU_NCCL_ENTER("ncclCommGetAsyncError");
  vgpu_ccl_comm* c = nccl_comm_get(comm);
  if (c == NULL || asyncError == NULL)
    return nccl_fail(ncclInvalidArgument,
                     "ncclCommGetAsyncError: not a communicator");
  vgpu_status st = vgpu_ccl_async_error(c, NULL, 0);
  // A collective that disagreed is a usage error; an abort or a rank gone
  // is a peer's failure.
  *asyncError = st == VGPU_OK                  ? ncclSuccess
                : st == VGPU_ERR_INVALID_VALUE ? ncclInvalidUsage
                                               : nccl_result(st);
  return ncclSuccess;
}

// The integer queries: |get| of the communicator behind |comm| into *out.
static ncclResult_t nccl_comm_query(const char* name, ncclComm_t comm,
                                    int (*get)(const vgpu_ccl_comm*),
                                    int* out) {
  vgpu_ccl_comm* c = nccl_comm_get(comm);
  if (c == NULL || out == NULL)
    return nccl_fail(ncclInvalidArgument, "%s: not a communicator", name);
  *out = get(c);
  return ncclSuccess;
}

VGPU_EXPORT ncclResult_t ncclCommCount(const ncclComm_t comm, int* count) {
  return nccl_comm_query("ncclCommCount", comm, vgpu_ccl_rank_count, count);
}

VGPU_EXPORT ncclResult_t ncclCommUserRank(const ncclComm_t comm, int* rank) {
  return nccl_comm_query("ncclCommUserRank", comm, vgpu_ccl_rank, rank);
}

VGPU_EXPORT ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int* device) {
  return nccl_comm_query("ncclCommCuDevice", comm, vgpu_ccl_comm_device,
                         device);
}

// nccl.h declares these without a prototype (-Wmissing-prototypes).
VGPU_EXPORT ncclResult_t ncclGroupStart(void);
VGPU_EXPORT ncclResult_t ncclGroupEnd(void);

// Enqueuing never waits for the other ranks; inside a group the calls are
// held back to the outermost end (vgpu_ccl_group_start), so a group's
// sends and receives all arrive before any of them is waited for, as NCCL
// fuses them. An end without a start is refused. An injected
// fault at a start opens no group; at an end it ends the group all the
// same, as NCCL's end does when the launch fails, and the outermost end
// drops the group's calls: none reaches its stream.
VGPU_EXPORT ncclResult_t ncclGroupStart(void) {
  VGPU_NCCL_ENTER("ncclGroupStart");
  vgpu_ccl_group_start();
  return ncclSuccess;
}

VGPU_EXPORT ncclResult_t ncclGroupEnd(void) {
  VGPU_NCCL_ENTER_ON_FAULT("ncclGroupEnd", vgpu_ccl_group_drop());
  if (!vgpu_ccl_group_is_open())
    return nccl_fail(ncclInvalidUsage, "ncclGroupEnd without ncclGroupStart");
  vgpu_status st = vgpu_ccl_group_end();
  if (st != VGPU_OK)
    return nccl_fail(nccl_result(st),
                     "ncclGroupEnd: a stream could not wait "
                     "for the group's calls");
  return ncclSuccess;
}

static ncclResult_t nccl_enqueue(const char* name, ncclComm_t comm,
                                 const vgpu_ccl_call* call,
                                 vgpu_nccl_stream stream) {
  vgpu_ccl_comm* c = nccl_comm_get(comm);
  if (c == NULL)
    return nccl_fail(ncclInvalidArgument, "%s: not a communicator", name);
  char error[384] = "";
  vgpu_status st = vgpu_ccl_enqueue(c, call, vgpu_nccl_stream_h(stream), error,
                                    sizeof(error));
  if (st == VGPU_OK)
    return ncclSuccess;
  return nccl_fail(nccl_result(st), "%s: %s", name,
                   error[0] ? error : "refused by the virtual GPU");
}

VGPU_EXPORT ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff,
                                       size_t count, ncclDataType_t datatype,
                                       ncclRedOp_t op, ncclComm_t comm,
                                       vgpu_nccl_stream stream) {
  VGPU_NCCL_ENTER("ncclAllReduce");
  vgpu_ccl_call call = {.kind = VGPU_CCL_ALL_REDUCE,
                        .send = sendbuff,
                        .recv = recvbuff,
                        .count = count,
                        .type = (int)datatype,
                        .reduction = (int)op};
  return nccl_enqueue("ncclAllReduce", comm, &call, stream);
}

VGPU_EXPORT ncclResult_t ncclBroadcast(const void* sendbuff, void* recvbuff,
                                       size_t count, ncclDataType_t datatype,
                                       int root, ncclComm_t comm,
                                       vgpu_nccl_stream stream) {
  VGPU_NCCL_ENTER("ncclBroadcast");
  vgpu_ccl_call call = {.kind = VGPU_CCL_BROADCAST,
                        .send = sendbuff,
                        .recv = recvbuff,
                        .count = count,
                        .type = (int)datatype,
                        .peer = root};
  return nccl_enqueue("ncclBroadcast", comm, &call, stream);
}

VGPU_EXPORT ncclResult_t ncclReduce(const void* sendbuff, void* recvbuff,
                                    size_t count, ncclDataType_t datatype,
                                    ncclRedOp_t op, int root, ncclComm_t comm,
                                    vgpu_nccl_stream stream) {
  VGPU_NCCL_ENTER("ncclReduce");
  vgpu_ccl_call call = {.kind = VGPU_CCL_REDUCE,
                        .send = sendbuff,
                        .recv = recvbuff,
                        .count = count,
                        .type = (int)datatype,
                        .reduction = (int)op,
                        .peer = root};
  return nccl_enqueue("ncclReduce", comm, &call, stream);
}

VGPU_EXPORT ncclResult_t ncclAllGather(const void* sendbuff, void* recvbuff,
                                       size_t sendcount,
                                       ncclDataType_t datatype, ncclComm_t comm,
                                       vgpu_nccl_stream stream) {
  VGPU_NCCL_ENTER("ncclAllGather");
  vgpu_ccl_call call = {.kind = VGPU_CCL_ALL_GATHER,
                        .send = sendbuff,
                        .recv = recvbuff,
                        .count = sendcount,
                        .type = (int)datatype};
  return nccl_enqueue("ncclAllGather", comm, &call, stream);
}

VGPU_EXPORT ncclResult_t ncclReduceScatter(const void* sendbuff, void* recvbuff,
                                           size_t recvcount,
                                           ncclDataType_t datatype,
                                           ncclRedOp_t op, ncclComm_t comm,
                                           vgpu_nccl_stream stream) {
  VGPU_NCCL_ENTER("ncclReduceScatter");
  vgpu_ccl_call call = {.kind = VGPU_CCL_REDUCE_SCATTER,
                        .send = sendbuff,
                        .recv = recvbuff,
                        .count = recvcount,
                        .type = (int)datatype,
                        .reduction = (int)op};
  return nccl_enqueue("ncclReduceScatter", comm, &call, stream);
}

VGPU_EXPORT ncclResult_t ncclSend(const void* sendbuff, size_t count,
                                  ncclDataType_t datatype, int peer,
                                  ncclComm_t comm, vgpu_nccl_stream stream) {
  VGPU_NCCL_ENTER("ncclSend");
  vgpu_ccl_call call = {.kind = VGPU_CCL_SEND,
                        .send = sendbuff,
                        .count = count,
                        .type = (int)datatype,
                        .peer = peer};
  return nccl_enqueue("ncclSend", comm, &call, stream);
}

VGPU_EXPORT ncclResult_t ncclRecv(void* recvbuff, size_t count,
                                  ncclDataType_t datatype, int peer,
                                  ncclComm_t comm, vgpu_nccl_stream stream) {
  VGPU_NCCL_ENTER("ncclRecv");
  vgpu_ccl_call call = {.kind = VGPU_CCL_RECV,
                        .recv = recvbuff,
                        .count = count,
                        .type = (int)datatype,
                        .peer = peer};
  return nccl_enqueue("ncclRecv", comm, &call, stream);
}
