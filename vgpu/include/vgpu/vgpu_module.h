// The virtual GPU's module format and kernel ABI.
//
// A vgpu module image is a host shared object (ELF, built for the host CPU)
// that defines one descriptor symbol per kernel. The image handed to
// cuModuleLoadData / hipModuleLoadData is either
//   - a vgpu_module_header followed by the bytes of the shared object, or
//   - the raw bytes of the shared object (an ELF file image; its size is
//     taken from the ELF header).
// The runtime writes the object to an anonymous file (memfd) and dlopen()s
// it; kernels are looked up by name as the symbol `vgpu_kernel_<name>` of
// type `const vgpu_kernel_desc`.
//
// A kernel runs over the grid on CPU threads: blocks are spread over the
// runtime's kernel threads; within a block, a PER_THREAD kernel is called
// once per thread index in order (no barrier between threads), a PER_BLOCK
// kernel is called once per block and loops over its threads itself (which is
// how a kernel with block-wide barriers is written: one loop per phase).
//
// This header is self-contained C11 and is meant to be included by kernel
// sources as well as by the runtime.
#ifndef VGPU_MODULE_H_
#define VGPU_MODULE_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define VGPU_MODULE_MAGIC "VGPUMOD1"
#define VGPU_MODULE_VERSION 1u
#define VGPU_KERNEL_ABI_VERSION 1u
#define VGPU_KERNEL_SYMBOL_PREFIX "vgpu_kernel_"
#define VGPU_KERNEL_MAX_ARGS 64u

// Both facades export this NUL-terminated string ("vgpu <module version>"):
// a real vendor runtime never does, so a loader can tell that modules must
// be in this format rather than PTX or AMDGPU code objects.
#define VGPU_RUNTIME_IDENTITY_SYMBOL "vgpu_runtime_identity"

// Header that may precede the shared object in a module image. All fields
// are host-endian.
typedef struct vgpu_module_header {
  char magic[8];         // VGPU_MODULE_MAGIC, not NUL terminated
  uint32_t version;      // VGPU_MODULE_VERSION
  uint32_t header_size;  // sizeof(vgpu_module_header)
  uint64_t image_size;   // bytes of the shared object that follow
} vgpu_module_header;

typedef struct vgpu_dim3 {
  uint32_t x, y, z;
} vgpu_dim3;

// What a kernel invocation sees. For PER_BLOCK kernels thread_idx is 0.
typedef struct vgpu_kernel_thread {
  vgpu_dim3 grid_dim;
  vgpu_dim3 block_dim;
  vgpu_dim3 block_idx;
  vgpu_dim3 thread_idx;
  void* shared;         // dynamic shared memory of this block (may be NULL)
  size_t shared_bytes;  // its size (the launch's sharedMemBytes)
} vgpu_kernel_thread;

// |args| has one pointer per declared argument, pointing at a copy of the
// argument value the launch captured (exactly as kernelParams does).
typedef void (*vgpu_kernel_fn)(const vgpu_kernel_thread* t, void* const* args);

enum vgpu_kernel_flags {
  VGPU_KERNEL_PER_THREAD = 0u,
  VGPU_KERNEL_PER_BLOCK = 1u,
};

typedef struct vgpu_kernel_desc {
  uint32_t abi_version;       // VGPU_KERNEL_ABI_VERSION
  uint32_t flags;             // vgpu_kernel_flags
  const char* name;           // the kernel name (without the prefix)
  uint32_t arg_count;         // <= VGPU_KERNEL_MAX_ARGS
  const uint32_t* arg_sizes;  // arg_count sizes in bytes
  vgpu_kernel_fn fn;
} vgpu_kernel_desc;

// Defines the descriptor of kernel |name| implemented by |fn|; the argument
// sizes follow, e.g.
//   VGPU_KERNEL_DEFINE(fill_u32, VGPU_KERNEL_PER_THREAD, fill_u32_impl,
//                      sizeof(uint32_t*), sizeof(uint32_t), sizeof(uint32_t))
#define VGPU_KERNEL_DEFINE(name, flags, fn, ...)                      \
  static const uint32_t vgpu_kernel_args_##name[] = {__VA_ARGS__};    \
  __attribute__((visibility(                                          \
      "default"))) extern const vgpu_kernel_desc vgpu_kernel_##name;  \
  const vgpu_kernel_desc vgpu_kernel_##name = {                       \
      VGPU_KERNEL_ABI_VERSION,                                        \
      (flags),                                                        \
      #name,                                                          \
      (uint32_t)(sizeof(vgpu_kernel_args_##name) / sizeof(uint32_t)), \
      vgpu_kernel_args_##name,                                        \
      (fn)}

// Flattened global thread index along x for PER_THREAD kernels.
static inline uint64_t vgpu_global_x(const vgpu_kernel_thread* t) {
  return (uint64_t)t->block_idx.x * t->block_dim.x + t->thread_idx.x;
}

#ifdef __cplusplus
}
#endif

#endif  // VGPU_MODULE_H_
