// Copyright 2026 The HAL Authors.
//
// hal_executable_t: device code loaded from a module image, and its entry
// points, dispatched from command buffers.
//
// An executable is created from a format name and bytes. Each driver says
// which formats it loads in hal_device_properties_t.executable_formats:
//
//   "cuda-ptx"         NUL-terminated PTX text (JIT-compiled by the driver)
//   "cuda-cubin"       a cubin ELF image
//   "cuda-fatbin"      a fatbinary
//   "hip-code-object"  an AMDGPU code object (hipcc --genco)
//   "vgpu-module"      the virtual GPU's host shared object (vgpu/include/
//                      vgpu/vgpu_module.h)
//
// The caller names the entry points it will dispatch and the layout of each
// (how many buffer bindings, how many 32-bit constants); creation resolves
// every one and fails with NOT_FOUND naming an entry point the image lacks.
//
// Kernel argument convention (every target follows it; tools/kernels/
// hal_kernel.h writes it for kernel sources): the bindings' device addresses
// (one 64-bit pointer each, buffer address + binding offset), then the
// constants (32 bits each), in order.
//
// Thread-safety: executables are immutable after creation; all functions are
// thread-safe.

#ifndef HAL_EXECUTABLE_H_
#define HAL_EXECUTABLE_H_

#include "hal/allocator.h"
#include "hal/base.h"
#include "hal/resource.h"
#include "hal/status.h"

HAL_EXTERN_C_BEGIN

typedef struct hal_device_t hal_device_t;
typedef struct hal_executable_vtable_t hal_executable_vtable_t;

#define HAL_MAX_ENTRY_POINT_NAME 64
#define HAL_MAX_DISPATCH_BINDINGS 16
#define HAL_MAX_DISPATCH_CONSTANTS 32
#define HAL_MAX_EXECUTABLE_ENTRY_POINTS 64

// One entry point the caller will dispatch.
typedef struct hal_entry_point_params_t {
  const char* name;
  uint32_t binding_count;   // <= HAL_MAX_DISPATCH_BINDINGS
  uint32_t constant_count;  // <= HAL_MAX_DISPATCH_CONSTANTS
} hal_entry_point_params_t;

typedef struct hal_executable_params_t {
  const char* format;  // one of the device's executable_formats
  const void* data;    // the image; read during the call only
  size_t data_size;
  size_t entry_point_count;  // 1 .. HAL_MAX_EXECUTABLE_ENTRY_POINTS
  const hal_entry_point_params_t* entry_points;
} hal_executable_params_t;

typedef struct hal_entry_point_info_t {
  char name[HAL_MAX_ENTRY_POINT_NAME];
  uint32_t binding_count;
  uint32_t constant_count;
} hal_entry_point_info_t;

typedef struct hal_executable_t hal_executable_t;

// Loads an executable on |device|. Errors: INVALID_ARGUMENT (no data,
// malformed entry point list: none, a NULL, empty or too long name, a
// name listed twice; counts over the limits), UNIMPLEMENTED (a format the
// device does not load; the message lists those it does), the vendor's error
// for a corrupt or truncated image (naming the load call), NOT_FOUND (an entry
// point the image lacks), INVALID_ARGUMENT (an entry point declared with a
// layout its kernel does not take, where the runtime says a kernel's
// parameters: docs/dispatch.md). The driver checks what it can against the
// bytes given first (docs/dispatch.md); a "vgpu-module" is host code the
// virtual GPU hands to dlopen, so one corrupted within its bounds (a
// relocation, an initializer) may crash the process instead.
HAL_API HAL_MUST_USE_RESULT hal_status_t hal_device_create_executable(
    hal_device_t* device, const hal_executable_params_t* params,
    hal_executable_t** out_executable);

HAL_API void hal_executable_retain(hal_executable_t* executable);
HAL_API void hal_executable_release(hal_executable_t* executable);

HAL_API size_t
hal_executable_entry_point_count(const hal_executable_t* executable);

// The entry point at |index| (NULL past the count).
HAL_API const hal_entry_point_info_t* hal_executable_entry_point_info(
    const hal_executable_t* executable, size_t index);

// The index of entry point |name| in |*out_index|; NOT_FOUND otherwise.
HAL_API HAL_MUST_USE_RESULT hal_status_t hal_executable_lookup_entry_point(
    const hal_executable_t* executable, const char* name, size_t* out_index);

// True when the comma-separated |formats| list contains |format|.
HAL_API bool hal_executable_format_in_list(const char* formats,
                                           const char* format);

HAL_EXTERN_C_END

#endif  // HAL_EXECUTABLE_H_
