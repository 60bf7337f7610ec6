// Checks rccl_api.h's lists against the CUDA toolkit's nccl.h, at compile
// time (the object has no code): every value is nccl.h's, every function
// is redeclared with cudaStream_t for the stream, which the compiler
// refuses if a parameter or return type differs from nccl.h's, and the
// types passed by value have nccl.h's sizes. Built without the HIP headers,
// which cannot share a translation unit with nccl.h (rccl_api.h says why).
#include <nccl.h>

#define VGPU_RCCL_LISTS_ONLY
#include "rccl_api.h"

#define VGPU_RCCL_CHECK_VALUE(name, value) \
  _Static_assert(name == value, #name " is " #value " in rccl_api.h");
VGPU_RCCL_RESULTS(VGPU_RCCL_CHECK_VALUE)
VGPU_RCCL_TYPES(VGPU_RCCL_CHECK_VALUE)
VGPU_RCCL_OPS(VGPU_RCCL_CHECK_VALUE)

_Static_assert(NCCL_UNIQUE_ID_BYTES == VGPU_RCCL_UNIQUE_ID_BYTES,
               "ncclUniqueId's size");
_Static_assert(sizeof(ncclUniqueId) == VGPU_RCCL_UNIQUE_ID_BYTES,
               "ncclUniqueId's size");
_Static_assert(sizeof(ncclResult_t) == sizeof(int), "ncclResult_t");
_Static_assert(sizeof(ncclDataType_t) == sizeof(int), "ncclDataType_t");
_Static_assert(sizeof(ncclRedOp_t) == sizeof(int), "ncclRedOp_t");
// The version the HIP facade reports is this nccl.h's (vgpu/meson.build).
_Static_assert(VGPU_NCCL_VERSION_CODE == NCCL_VERSION_CODE,
               "VGPU_NCCL_VERSION_CODE");

#define VGPU_RCCL_REDECLARE(ret, name, params) ret name params;
VGPU_RCCL_FUNCTIONS(VGPU_RCCL_REDECLARE, cudaStream_t)
