// Copyright 2026 The HAL Authors.
//
// Executables: a vendor module (loaded by the adapter, which knows the
// image formats) and one function per entry point; and the launch
// arguments of a recorded dispatch, shared by the stream and graph
// strategies.

#include <stdio.h>
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
  return device->adapter->info.executable_formats;
}

static void gpu_executable_destroy(hal_executable_t* base) {
  gpu_executable_t* executable =
      HAL_RESOURCE_CAST(gpu_executable_t, base, &gpu_executable_vtable);
  gpu_device_t* device = executable->device;
  if (executable->module) {
    hal_status_ignore(gpu_device_make_current(device));
    gpu_device_note_release(device, device->adapter->ops->module_unload(
                                        device->adapter, executable->module));
  }
  hal_executable_deinitialize(base);
  hal_allocator_free(device->base.host_allocator, executable);
}

static const hal_executable_vtable_t gpu_executable_vtable = {
    .destroy = gpu_executable_destroy,
};

// The entry point's declared layout against its kernel's own parameters,
// where the runtime says them (GPU_ADAPTER_CAP_PARAM_INFO): a binding is a
// device address (8 bytes), a constant 32 bits (docs/dispatch.md). A
// kernel launched with a layout it does not take reads wrong arguments.
static hal_status_t gpu_executable_check_layout(
    gpu_adapter_t* adapter, gpu_function_t function,
    const hal_entry_point_params_t* entry) {
  if (!(adapter->info.capabilities & GPU_ADAPTER_CAP_PARAM_INFO))
    return HAL_OK;
  size_t declared = (size_t)entry->binding_count + entry->constant_count;
  size_t sizes[HAL_MAX_DISPATCH_BINDINGS + HAL_MAX_DISPATCH_CONSTANTS];
  size_t count = 0;
  HAL_RETURN_AND_ANNOTATE_IF_ERROR(
      adapter->ops->function_param_sizes(adapter, function, sizes, declared,
                                         &count),
      "reading the parameters of entry point '%s'", entry->name);
  bool same = count == declared;
  for (size_t i = 0; same && i < declared; ++i)
    same = sizes[i] == (i < entry->binding_count ? 8u : 4u);
  if (same)
    return HAL_OK;
  // The kernel's sizes, as many as were read.
  char taken[160] = "";
  size_t length = 0;
  size_t shown = count < declared ? count : declared;
  for (size_t i = 0; i < shown && length < sizeof(taken); ++i) {
    length += (size_t)snprintf(taken + length, sizeof(taken) - length, "%s%zu",
                               i ? ", " : "", sizes[i]);
  }
  return hal_make_status(
      HAL_STATUS_INVALID_ARGUMENT,
      "entry point '%s' declares %u binding(s) (8 bytes each) and %u "
      "constant(s) (4 bytes each), but its kernel takes %s%zu parameter(s)%s"
      "%s%s%s",
      entry->name, entry->binding_count, entry->constant_count,
      count > declared ? "more than " : "", count > declared ? declared : count,
      shown ? " of " : "", taken, count > declared ? ", ..." : "",
      shown ? " bytes" : "");
}

hal_status_t gpu_executable_create(gpu_device_t* device,
                                   const hal_executable_params_t* params,
                                   hal_executable_t** out_executable) {
  gpu_adapter_t* adapter = device->adapter;
  gpu_executable_t* executable = NULL;
  hal_status_t status = hal_allocator_malloc(
      device->base.host_allocator,
      sizeof(*executable) + params->entry_point_count * sizeof(gpu_function_t),
      (void**)&executable);
  if (!status)
    status = gpu_device_make_current(device);
  gpu_module_t module = NULL;
  if (!status) {
    status = gpu_adapter_module_load(adapter, params->format, params->data,
                                     params->data_size,
                                     device->base.host_allocator, &module);
  }
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
    if (!status) {
      status = gpu_executable_check_layout(adapter, executable->functions[i],
                                           &params->entry_points[i]);
    }
  }
  if (!status) {
    status = hal_executable_initialize(&gpu_executable_vtable, &device->base,
                                       params, &executable->base);
  }
  if (status) {
    if (module)
      gpu_device_note_release(device,
                              adapter->ops->module_unload(adapter, module));
    hal_allocator_free(device->base.host_allocator, executable);
    return status;
  }
  executable->device = device;
  executable->module = module;
  *out_executable = &executable->base;
  return HAL_OK;
}

hal_status_t gpu_dispatch_prepare(const hal_op_t* op,
                                  gpu_dispatch_args_t* out) {
  const gpu_executable_t* executable = HAL_RESOURCE_CAST(
      const gpu_executable_t, op->dispatch.executable, &gpu_executable_vtable);
  size_t arg = 0;
  for (uint32_t i = 0; i < op->dispatch.binding_count; ++i) {
    const hal_dispatch_binding_t* binding = &op->dispatch.bindings[i];
    HAL_RETURN_IF_ERROR(gpu_buffer_issue_address(
        binding->buffer, binding->offset, &out->addresses[i]));
    out->args[arg++] = &out->addresses[i];
  }
  for (uint32_t i = 0; i < op->dispatch.constant_count; ++i) {
    out->args[arg++] = (void*)&op->dispatch.constants[i];
  }
  memset(&out->args[arg], 0, (HAL_ARRAYSIZE(out->args) - arg) * sizeof(void*));
  memset(&out->launch, 0, sizeof(out->launch));
  out->launch.function = executable->functions[op->dispatch.entry_point];
  for (int i = 0; i < 3; ++i) {
    out->launch.grid[i] = op->dispatch.workgroup_count[i];
    out->launch.block[i] = op->dispatch.workgroup_size[i];
  }
  out->launch.args = out->args;
  return HAL_OK;
}
