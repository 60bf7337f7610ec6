// Copyright 2026 The HAL Authors.
//
// Executables: a vendor module (cuModuleLoadData / hipModuleLoadData) and
// one function per entry point; and the launch arguments of a recorded
// dispatch, shared by the stream and graph strategies.

#include <string.h>

#include "gpu_core.h"

typedef struct gpu_executable_t {
  hal_executable_t base;
  gpu_device_t* device;
  gpu_module_t module;
  gpu_function_t functions[];  // [base.entry_point_count]
} gpu_executable_t;

static const hal_executable_vtable_t gpu_executable_vtable;

const char* gpu_device_executable_formats(const gpu_device_t* device) {
  const gpu_adapter_info_t* info = &device->adapter->info;
  if (!(info->capabilities & GPU_ADAPTER_CAP_MODULE))
    return "";
  if (info->is_virtual)
    return "vgpu-module";
  return info->vendor == GPU_ADAPTER_VENDOR_CUDA
             ? "cuda-ptx,cuda-cubin,cuda-fatbin"
             : "hip-code-object";
}

// The vendor load calls take no size: they read what the image's own
// headers say. Check those headers against the bytes we were given so a
// truncated image is an error here, not a read past the caller's buffer.
static hal_status_t gpu_executable_check_image(const char* format,
                                               const uint8_t* data,
                                               size_t size) {
  static const uint8_t kElf[4] = {0x7f, 'E', 'L', 'F'};
  if (strcmp(format, "vgpu-module") == 0) {
    uint64_t image_size = 0;
    size_t offset = 0;
    if (size >= 24 && memcmp(data, "VGPUMOD1", 8) == 0) {
      uint32_t header_size = 0;
      memcpy(&header_size, data + 12, 4);
      memcpy(&image_size, data + 16, 8);
      offset = header_size;
      if (header_size < 24 || header_size > size ||
          image_size > size - header_size) {
        return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                               "vgpu module header announces %llu bytes "
                               "after a %u-byte header; %zu bytes were given",
                               (unsigned long long)image_size, header_size,
                               size);
      }
    }
    const uint8_t* elf = data + offset;
    size_t elf_size = size - offset;
    if (elf_size < 64 || memcmp(elf, kElf, 4) != 0 || elf[4] != 2) {
      return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                             "not a vgpu module: no 64-bit ELF image");
    }
    // The runtime sizes the image from its own headers (a module load
    // takes no length), so every table and segment they name must lie in
    // what was given: the section header table, the program header table
    // and each segment's file bytes.
    uint64_t shoff = 0, phoff = 0;
    uint16_t shentsize = 0, shnum = 0, phentsize = 0, phnum = 0;
    memcpy(&phoff, elf + 32, 8);
    memcpy(&shoff, elf + 40, 8);
    memcpy(&phentsize, elf + 54, 2);
    memcpy(&phnum, elf + 56, 2);
    memcpy(&shentsize, elf + 58, 2);
    memcpy(&shnum, elf + 60, 2);
    uint64_t end = 0;
    if (shoff > elf_size || (uint64_t)shentsize * shnum > elf_size - shoff) {
      end = shoff + (uint64_t)shentsize * shnum;
    } else if (phnum && (phentsize < 56 || phoff > elf_size ||
                         (uint64_t)phentsize * phnum > elf_size - phoff)) {
      end = phoff + (uint64_t)phentsize * phnum;
    }
    for (uint16_t i = 0; !end && i < phnum; ++i) {
      const uint8_t* ph = elf + phoff + (uint64_t)i * phentsize;
      uint64_t segment_offset = 0, segment_size = 0;
      memcpy(&segment_offset, ph + 8, 8);
      memcpy(&segment_size, ph + 32, 8);
      if (segment_offset > elf_size ||
          segment_size > elf_size - segment_offset) {
        end = segment_offset + segment_size;
      }
    }
    if (end) {
      return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                             "truncated or corrupt vgpu module: its ELF "
                             "headers name bytes up to %llu, %zu were given",
                             (unsigned long long)end, elf_size);
    }
    return HAL_OK;
  }
  if (strcmp(format, "cuda-cubin") == 0 &&
      (size < 64 || memcmp(data, kElf, 4) != 0)) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "not a cubin: no ELF header");
  }
  return HAL_OK;
}

static void gpu_executable_destroy(hal_executable_t* base) {
  gpu_executable_t* executable =
      HAL_RESOURCE_CAST(gpu_executable_t, base, &gpu_executable_vtable);
  gpu_device_t* device = executable->device;
  if (executable->module) {
    hal_status_ignore(gpu_device_make_current(device));
    device->adapter->ops->module_unload(device->adapter, executable->module);
  }
  hal_executable_deinitialize(base);
  hal_allocator_free(device->base.host_allocator, executable);
}

static const hal_executable_vtable_t gpu_executable_vtable = {
    .destroy = gpu_executable_destroy,
};

hal_status_t gpu_executable_create(gpu_device_t* device,
                                   const hal_executable_params_t* params,
                                   hal_executable_t** out_executable) {
  gpu_adapter_t* adapter = device->adapter;
  HAL_RETURN_IF_ERROR(gpu_executable_check_image(params->format, params->data,
                                                 params->data_size));
  // PTX is text the driver reads up to its NUL: give it one.
  const void* image = params->data;
  char* ptx = NULL;
  if (strcmp(params->format, "cuda-ptx") == 0) {
    HAL_RETURN_IF_ERROR(hal_allocator_malloc(
        device->base.host_allocator, params->data_size + 1, (void**)&ptx));
    memcpy(ptx, params->data, params->data_size);
    image = ptx;
  }
  gpu_executable_t* executable = NULL;
  hal_status_t status = hal_allocator_malloc(
      device->base.host_allocator,
      sizeof(*executable) + params->entry_point_count * sizeof(gpu_function_t),
      (void**)&executable);
  if (!status)
    status = gpu_device_make_current(device);
  gpu_module_t module = NULL;
  if (!status)
    status = adapter->ops->module_load_data(adapter, image, &module);
  hal_allocator_free(device->base.host_allocator, ptx);
  for (size_t i = 0; i < params->entry_point_count && !status; ++i) {
    status = adapter->ops->module_get_function(adapter, module,
                                               params->entry_points[i].name,
                                               &executable->functions[i]);
    if (hal_status_is(status, HAL_STATUS_NOT_FOUND)) {
      // The vendor says "not found" in its own words; keep them, with the
      // HAL's message for a missing entry point.
      hal_status_t vendor = status;
      status = hal_make_status(
          HAL_STATUS_NOT_FOUND, "the module has no entry point '%s' (%s)",
          params->entry_points[i].name, hal_status_message(vendor));
      hal_status_free(vendor);
    } else if (status) {
      // Any other error (a device loss above all) keeps its code.
      status = hal_status_annotatef(status, "looking up entry point '%s'",
                                    params->entry_points[i].name);
    }
  }
  if (!status) {
    status = hal_executable_initialize(&gpu_executable_vtable, &device->base,
                                       params, &executable->base);
  }
  if (status) {
    if (module)
      adapter->ops->module_unload(adapter, module);
    hal_allocator_free(device->base.host_allocator, executable);
    return status;
  }
  executable->device = device;
  executable->module = module;
  *out_executable = &executable->base;
  return HAL_OK;
}

void gpu_dispatch_prepare(const hal_op_t* op, gpu_dispatch_args_t* out) {
  const gpu_executable_t* executable = HAL_RESOURCE_CAST(
      const gpu_executable_t, op->dispatch.executable, &gpu_executable_vtable);
  size_t arg = 0;
  for (uint32_t i = 0; i < op->dispatch.binding_count; ++i) {
    const hal_dispatch_binding_t* binding = &op->dispatch.bindings[i];
    out->addresses[i] =
        gpu_buffer_cast(binding->buffer)->address + binding->offset;
    out->args[arg++] = &out->addresses[i];
  }
  for (uint32_t i = 0; i < op->dispatch.constant_count; ++i) {
    out->args[arg++] = (void*)&op->dispatch.constants[i];
  }
  memset(&out->launch, 0, sizeof(out->launch));
  out->launch.function = executable->functions[op->dispatch.entry_point];
  for (int i = 0; i < 3; ++i) {
    out->launch.grid[i] = op->dispatch.workgroup_count[i];
    out->launch.block[i] = op->dispatch.workgroup_size[i];
  }
  out->launch.args = out->args;
}
