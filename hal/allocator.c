// Copyright 2026 The HAL Authors.

#include "hal/allocator.h"

#include <stdlib.h>
#include <string.h>

HAL_API hal_status_t hal_allocator_malloc(hal_allocator_t allocator,
                                          size_t size, void** out_ptr) {
  if (!out_ptr) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT, "out_ptr is NULL");
  }
  *out_ptr = NULL;
  if (size == 0) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "zero-byte host allocation requested");
  }
  void* ptr = hal_allocator_is_system(allocator)
                  ? malloc(size)
                  : allocator.malloc_fn(allocator.self, size);
  if (!ptr) {
    return hal_make_status(HAL_STATUS_RESOURCE_EXHAUSTED,
                           "host allocation of %zu bytes failed", size);
  }
  memset(ptr, 0, size);
  *out_ptr = ptr;
  return HAL_OK;
}

HAL_API hal_status_t hal_allocator_malloc_array(hal_allocator_t allocator,
                                                size_t count,
                                                size_t element_size,
                                                void** out_ptr) {
  size_t size = 0;
  if (__builtin_mul_overflow(count, element_size, &size)) {
    if (out_ptr)
      *out_ptr = NULL;
    return hal_make_status(HAL_STATUS_OUT_OF_RANGE,
                           "host allocation of %zu elements of %zu bytes "
                           "overflows size_t",
                           count, element_size);
  }
  return hal_allocator_malloc(allocator, size, out_ptr);
}

HAL_API hal_status_t hal_allocator_realloc(hal_allocator_t allocator,
                                           size_t size, void** inout_ptr) {
  if (!inout_ptr) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT, "inout_ptr is NULL");
  }
  if (!*inout_ptr)
    return hal_allocator_malloc(allocator, size, inout_ptr);
  if (size == 0) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "reallocation to zero bytes requested");
  }
  void* ptr = hal_allocator_is_system(allocator)
                  ? realloc(*inout_ptr, size)
                  : allocator.realloc_fn(allocator.self, *inout_ptr, size);
  if (!ptr) {
    return hal_make_status(HAL_STATUS_RESOURCE_EXHAUSTED,
                           "host reallocation to %zu bytes failed", size);
  }
  *inout_ptr = ptr;
  return HAL_OK;
}

HAL_API void hal_allocator_free(hal_allocator_t allocator, void* ptr) {
  if (!ptr)
    return;
  if (hal_allocator_is_system(allocator)) {
    free(ptr);
  } else {
    allocator.free_fn(allocator.self, ptr);
  }
}

HAL_API hal_status_t hal_allocator_clone(hal_allocator_t allocator,
                                         const void* source, size_t length,
                                         void** out_ptr) {
  if (!source && length) {
    if (out_ptr)
      *out_ptr = NULL;
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT, "source is NULL");
  }
  HAL_RETURN_IF_ERROR(
      hal_allocator_malloc(allocator, length ? length : 1, out_ptr));
  if (length)
    memcpy(*out_ptr, source, length);
  return HAL_OK;
}

HAL_API hal_status_t hal_allocator_strdup(hal_allocator_t allocator,
                                          const char* string,
                                          char** out_string) {
  if (!string) {
    if (out_string)
      *out_string = NULL;
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT, "string is NULL");
  }
  void* copy = NULL;
  HAL_RETURN_IF_ERROR(
      hal_allocator_clone(allocator, string, strlen(string) + 1, &copy));
  *out_string = copy;
  return HAL_OK;
}
