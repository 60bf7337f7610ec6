// Kernels for the vgpu tests, built as a vgpu module (a host shared object).
#include <stdint.h>
#include <string.h>

#include "vgpu/vgpu_module.h"

// out[i] = value for i < n.
static void fill_u32(const vgpu_kernel_thread* t, void* const* args) {
  uint32_t* out;
  uint32_t value, n;
  memcpy(&out, args[0], sizeof(out));
  memcpy(&value, args[1], sizeof(value));
  memcpy(&n, args[2], sizeof(n));
  uint64_t i = vgpu_global_x(t);
  if (i < n)
    out[i] = value;
}
VGPU_KERNEL_DEFINE(fill_u32, VGPU_KERNEL_PER_THREAD, fill_u32,
                   sizeof(uint32_t*), sizeof(uint32_t), sizeof(uint32_t));

// data[i] += delta for i < n.
static void add_u32(const vgpu_kernel_thread* t, void* const* args) {
  uint32_t* data;
  uint32_t delta, n;
  memcpy(&data, args[0], sizeof(data));
  memcpy(&delta, args[1], sizeof(delta));
  memcpy(&n, args[2], sizeof(n));
  uint64_t i = vgpu_global_x(t);
  if (i < n)
    data[i] += delta;
}
VGPU_KERNEL_DEFINE(add_u32, VGPU_KERNEL_PER_THREAD, add_u32, sizeof(uint32_t*),
                   sizeof(uint32_t), sizeof(uint32_t));

// out[block] = sum of in[block * block_dim .. +block_dim), staged through
// dynamic shared memory: the per-block form with two phases.
static void block_sum(const vgpu_kernel_thread* t, void* const* args) {
  const uint32_t* in;
  uint32_t* out;
  memcpy(&in, args[0], sizeof(in));
  memcpy(&out, args[1], sizeof(out));
  uint32_t* shared = t->shared;
  uint32_t base = t->block_idx.x * t->block_dim.x;
  for (uint32_t x = 0; x < t->block_dim.x; ++x)
    shared[x] = in[base + x];
  uint32_t sum = 0;
  for (uint32_t x = 0; x < t->block_dim.x; ++x)
    sum += shared[x];
  out[t->block_idx.x] = sum;
}
VGPU_KERNEL_DEFINE(block_sum, VGPU_KERNEL_PER_BLOCK, block_sum,
                   sizeof(uint32_t*), sizeof(uint32_t*));
