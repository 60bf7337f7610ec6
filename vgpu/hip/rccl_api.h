// The RCCL API subset libvgpu-hip.so exports (nccl/nccl_facade.c): NCCL's
// nccl.h declarations with hipStream_t where nccl.h has cudaStream_t, as
// RCCL's own header has them (same names, codes and ABI).
//
// Declared here rather than taken from the CUDA toolkit's nccl.h because
// nccl.h includes cuda_runtime.h, whose vector types (char1, uchar1, ...)
// conflict with hip_runtime_api.h's in one translation unit, and no RCCL
// header is installed. So that they cannot drift from NCCL's, the values
// and the signatures are X-macro lists: hip/rccl_api_check.c, compiled
// with nccl.h (and without HIP) into every library that includes this
// header, asserts each value against nccl.h's and redeclares each function
// with cudaStream_t, which the compiler refuses if a type differs.
#ifndef VGPU_HIP_RCCL_API_H_
#define VGPU_HIP_RCCL_API_H_

#include <stddef.h>

#define VGPU_RCCL_UNIQUE_ID_BYTES 128

// ncclResult_t: every code the facade returns or names.
#define VGPU_RCCL_RESULTS(X)   \
  X(ncclSuccess, 0)            \
  X(ncclUnhandledCudaError, 1) \
  X(ncclSystemError, 2)        \
  X(ncclInternalError, 3)      \
  X(ncclInvalidArgument, 4)    \
  X(ncclInvalidUsage, 5)       \
  X(ncclRemoteError, 6)        \
  X(ncclInProgress, 7)

// ncclDataType_t: the types NCCL and RCCL spell alike (the engine's own,
// core/ccl.h; the float8 types, which it refuses, are named differently).
#define VGPU_RCCL_TYPES(X) \
  X(ncclInt8, 0)           \
  X(ncclUint8, 1)          \
  X(ncclInt32, 2)          \
  X(ncclUint32, 3)         \
  X(ncclInt64, 4)          \
  X(ncclUint64, 5)         \
  X(ncclFloat16, 6)        \
  X(ncclFloat32, 7)        \
  X(ncclFloat64, 8)        \
  X(ncclBfloat16, 9)

// ncclRedOp_t: the built-in reductions.
#define VGPU_RCCL_OPS(X) \
  X(ncclSum, 0)          \
  X(ncclProd, 1)         \
  X(ncclMax, 2)          \
  X(ncclMin, 3)          \
  X(ncclAvg, 4)

// X(return type, name, parameters), |S| the stream type.
#define VGPU_RCCL_FUNCTIONS(X, S)                                           \
  X(ncclResult_t, ncclGetVersion, (int* version))                           \
  X(const char*, ncclGetErrorString, (ncclResult_t result))                 \
  X(const char*, ncclGetLastError, (ncclComm_t comm))                       \
  X(ncclResult_t, ncclGetUniqueId, (ncclUniqueId * uniqueId))               \
  X(ncclResult_t, ncclCommInitRank,                                         \
    (ncclComm_t * comm, int nranks, ncclUniqueId commId, int rank))         \
  X(ncclResult_t, ncclCommInitAll,                                          \
    (ncclComm_t * comm, int ndev, const int* devlist))                      \
  X(ncclResult_t, ncclCommDestroy, (ncclComm_t comm))                       \
  X(ncclResult_t, ncclCommAbort, (ncclComm_t comm))                         \
  X(ncclResult_t, ncclCommSplit,                                            \
    (ncclComm_t comm, int color, int key, ncclComm_t* newcomm,              \
     ncclConfig_t* config))                                                 \
  X(ncclResult_t, ncclCommGetAsyncError,                                    \
    (ncclComm_t comm, ncclResult_t * asyncError))                           \
  X(ncclResult_t, ncclCommCount, (const ncclComm_t comm, int* count))       \
  X(ncclResult_t, ncclCommCuDevice, (const ncclComm_t comm, int* device))   \
  X(ncclResult_t, ncclCommUserRank, (const ncclComm_t comm, int* rank))     \
  X(ncclResult_t, ncclGroupStart, (void))                                   \
  X(ncclResult_t, ncclGroupEnd, (void))                                     \
  X(ncclResult_t, ncclAllReduce,                                            \
    (const void* sendbuff, void* recvbuff, size_t count,                    \
     ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm, S stream))   \
  X(ncclResult_t, ncclBroadcast,                                            \
    (const void* sendbuff, void* recvbuff, size_t count,                    \
     ncclDataType_t datatype, int root, ncclComm_t comm, S stream))         \
  X(ncclResult_t, ncclReduce,                                               \
    (const void* sendbuff, void* recvbuff, size_t count,                    \
     ncclDataType_t datatype, ncclRedOp_t op, int root, ncclComm_t comm,    \
     S stream))                                                             \
  X(ncclResult_t, ncclAllGather,                                            \
    (const void* sendbuff, void* recvbuff, size_t sendcount,                \
     ncclDataType_t datatype, ncclComm_t comm, S stream))                   \
  X(ncclResult_t, ncclReduceScatter,                                        \
    (const void* sendbuff, void* recvbuff, size_t recvcount,                \
     ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm, S stream))   \
  X(ncclResult_t, ncclSend,                                                 \
    (const void* sendbuff, size_t count, ncclDataType_t datatype, int peer, \
     ncclComm_t comm, S stream))                                            \
  X(ncclResult_t, ncclRecv,                                                 \
    (void* recvbuff, size_t count, ncclDataType_t datatype, int peer,       \
     ncclComm_t comm, S stream))

// The declarations themselves; rccl_api_check.c takes only the lists.
#ifndef VGPU_RCCL_LISTS_ONLY

#include <hip/hip_runtime_api.h>

// ncclGetVersion's answer: the version of the nccl.h these declarations
// are checked against (vgpu/meson.build reads it from nccl.h).
#define NCCL_VERSION_CODE VGPU_NCCL_VERSION_CODE

#define VGPU_RCCL_ENUMERATOR(name, value) name = value,
typedef enum { VGPU_RCCL_RESULTS(VGPU_RCCL_ENUMERATOR) } ncclResult_t;
typedef enum { VGPU_RCCL_TYPES(VGPU_RCCL_ENUMERATOR) } ncclDataType_t;
typedef enum { VGPU_RCCL_OPS(VGPU_RCCL_ENUMERATOR) } ncclRedOp_t;
#undef VGPU_RCCL_ENUMERATOR
// Passed by value: int-sized, as nccl.h's (rccl_api_check.c).
_Static_assert(sizeof(ncclResult_t) == sizeof(int), "ncclResult_t");
_Static_assert(sizeof(ncclDataType_t) == sizeof(int), "ncclDataType_t");
_Static_assert(sizeof(ncclRedOp_t) == sizeof(int), "ncclRedOp_t");

typedef struct ncclComm* ncclComm_t;
// Only passed through (a split's options, which the virtual GPU ignores).
typedef struct vgpu_rccl_config ncclConfig_t;
typedef struct {
  char internal[VGPU_RCCL_UNIQUE_ID_BYTES];
} ncclUniqueId;

#define VGPU_RCCL_DECLARE(ret, name, params) ret name params;
VGPU_RCCL_FUNCTIONS(VGPU_RCCL_DECLARE, hipStream_t)
#undef VGPU_RCCL_DECLARE

#endif  // VGPU_RCCL_LISTS_ONLY

#endif  // VGPU_HIP_RCCL_API_H_
