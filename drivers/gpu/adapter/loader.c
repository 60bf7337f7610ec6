// Copyright 2026 The HAL Authors.
//
// Loading a vendor runtime, written once for every vendor: the library
// candidates, dlopen() with every failure recorded, and the walk over the
// vendor's symbol table.

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adapter_impl.h"
#include "hal/library.h"

// Symbols are stored through memcpy() into function-pointer slots: ISO C
// has no conversion from void* to a function pointer, POSIX guarantees the
// representations agree.
static_assert(sizeof(void*) == sizeof(void (*)(void)),
              "function and data pointers must have the same size");

void gpu_adapter_text_append(gpu_adapter_text_t* text, const char* format,
                             ...) {
  if (text->truncated)
    return;
  size_t capacity = sizeof(text->data) - text->length;
  va_list args;
  va_start(args, format);
  int written = vsnprintf(text->data + text->length, capacity, format, args);
  va_end(args);
  if (written < 0)
    return;
  if ((size_t)written < capacity) {
    text->length += (size_t)written;
    return;
  }
  // Cut: keep what fit and say so.
  static const char kEllipsis[] = "...";
  text->truncated = true;
  text->length = sizeof(text->data) - 1;
  memcpy(text->data + sizeof(text->data) - sizeof(kEllipsis), kEllipsis,
         sizeof(kEllipsis));
}

const char* gpu_adapter_list_next(const char** cursor, size_t* out_length) {
  const char* p = *cursor;
  while (*p == ',' || *p == ' ')
    ++p;
  *out_length = strcspn(p, ", ");
  *cursor = p + *out_length;
  return *out_length ? p : NULL;
}

bool gpu_adapter_name_in_list(const char* list, const char* name) {
  if (!list || !name)
    return false;
  size_t name_length = strlen(name);
  size_t length = 0;
  for (const char* entry; (entry = gpu_adapter_list_next(&list, &length));) {
    if (length == name_length && strncmp(entry, name, length) == 0)
      return true;
  }
  return false;
}

hal_status_t gpu_adapter_library_open(const gpu_adapter_vendor_desc_t* vendor,
                                      const char* override, void** out_handle) {
  *out_handle = NULL;
  const char* const* candidates = vendor->libraries;
  size_t candidate_count = vendor->library_count;
  const char* single[1] = {override};
  if (override && override[0]) {
    // An explicit choice replaces the default list: falling back to another
    // runtime behind the user's back would hide the failure.
    candidates = single;
    candidate_count = 1;
  }
  gpu_adapter_text_t tried = {0};
  for (size_t i = 0; i < candidate_count; ++i) {
    // A library named by path (HAL_CUDA_LIBRARY=/some/file) is checked
    // against its own headers first: a truncated file would kill the
    // process inside dlopen (K16). A bare soname is the system's to find.
    if (strchr(candidates[i], '/')) {
      hal_status_t check = hal_library_check(candidates[i]);
      if (check != HAL_OK) {
        gpu_adapter_text_append(&tried, "%s%s (%s)", i ? "; " : "",
                                candidates[i], hal_status_message(check));
        hal_status_free(check);
        continue;
      }
    }
    (void)dlerror();  // clear any stale message
    void* handle = hal_library_open(candidates[i], RTLD_NOW | RTLD_LOCAL);
    if (handle) {
      *out_handle = handle;
      return HAL_OK;
    }
    const char* error = dlerror();
    gpu_adapter_text_append(&tried, "%s%s (%s)", i ? "; " : "", candidates[i],
                            error ? error : "dlopen failed, no dlerror text");
  }
  // Without the vendor's runtime (no GPU, or none installed) a user can
  // still run on the virtual GPU: say how, with its file name.
  gpu_adapter_text_t hint = {0};
  if (vendor->virtual_library) {
    gpu_adapter_text_append(
        &hint,
        "; to run on the virtual GPU instead, set %s to its %s (in the "
        "directory that `pkg-config --variable=vgpudir hal` names, or a "
        "build's vgpu/)",
        vendor->library_env, vendor->virtual_library);
  }
  return hal_make_status(
      HAL_STATUS_NOT_FOUND,
      "could not load the %s runtime; tried %zu librar%s: %s%s%s%s",
      vendor->name, candidate_count, candidate_count == 1 ? "y" : "ies",
      tried.data, candidates == single ? "; set by " : "",
      candidates == single ? vendor->library_env : "", hint.data);
}

hal_status_t gpu_adapter_symbols_resolve(gpu_adapter_base_t* base,
                                         bool dlsym_pass, const char* hide_list,
                                         gpu_adapter_text_t* missing_optional,
                                         uint32_t* inout_capabilities) {
  const gpu_adapter_vendor_desc_t* vendor = base->vendor;
  char* table = gpu_adapter_base_symbols(base);
  gpu_adapter_text_t missing_required = {0};
  size_t missing_required_count = 0;
  for (size_t i = 0; i < vendor->symbol_count; ++i) {
    const gpu_adapter_symbol_t* symbol = &vendor->symbols[i];
    bool is_dlsym = (symbol->flags & GPU_ADAPTER_SYMBOL_DLSYM) != 0;
    if (is_dlsym != dlsym_pass)
      continue;
    void* pointer = NULL;
    bool hidden = gpu_adapter_name_in_list(hide_list, symbol->name);
    if (hidden) {
      // Reads as missing: exercises the same path as an old runtime.
    } else if (is_dlsym || !vendor->lookup) {
      pointer = dlsym(base->library, symbol->export_name);
    } else {
      HAL_RETURN_IF_ERROR(vendor->lookup(base, symbol->name, &pointer));
    }
    memcpy(table + symbol->offset, &pointer, sizeof(pointer));
    if (pointer)
      continue;
    const char* note = hidden ? " (hidden)" : "";
    if (symbol->flags & GPU_ADAPTER_SYMBOL_REQUIRED) {
      gpu_adapter_text_append(&missing_required, "%s%s%s",
                              missing_required_count ? ", " : "", symbol->name,
                              note);
      ++missing_required_count;
    } else {
      gpu_adapter_text_append(missing_optional, "%s%s%s",
                              missing_optional->length ? "," : "", symbol->name,
                              note);
      *inout_capabilities &= ~symbol->capability;
    }
  }
  if (missing_required_count == 0)
    return HAL_OK;
  return hal_make_status(
      HAL_STATUS_INCOMPATIBLE,
      "%s (the %s runtime) lacks %zu required symbol%s: %s",
      base->library_path ? base->library_path : "the library", vendor->name,
      missing_required_count, missing_required_count == 1 ? "" : "s",
      missing_required.data);
}
