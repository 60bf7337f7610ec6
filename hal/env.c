// Copyright 2026 The HAL Authors.

#include "hal/env.h"

#include "hal/semaphore.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

HAL_API hal_status_t hal_env_uint(const char* name, uint64_t min, uint64_t max,
                                  uint64_t* out_value, bool* out_set) {
  if (out_set)
    *out_set = false;
  const char* text = getenv(name);
  if (!text || !*text)
    return HAL_OK;
  char* end = NULL;
  errno = 0;
  unsigned long long value = strtoull(text, &end, 10);
  // Digits only: strtoull would also take a sign or leading blanks.
  bool digits = text[0] >= '0' && text[0] <= '9';
  if (!digits || errno != 0 || *end != '\0' || value < min || value > max) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "%s='%s': expected an integer in [%" PRIu64
                           ", %" PRIu64 "]",
                           name, text, min, max);
  }
  *out_value = value;
  if (out_set)
    *out_set = true;
  return HAL_OK;
}

HAL_API hal_status_t hal_env_flag(const char* name, bool* out_value,
                                  bool* out_set) {
  if (out_set)
    *out_set = false;
  const char* text = getenv(name);
  if (!text || !*text)
    return HAL_OK;
  if (strcmp(text, "0") != 0 && strcmp(text, "1") != 0) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "%s='%s': expected 0 or 1", name, text);
  }
  *out_value = text[0] == '1';
  if (out_set)
    *out_set = true;
  return HAL_OK;
}

HAL_API hal_status_t hal_env_check(void) {
  uint64_t ms = 0;
  bool flag = false;
  HAL_RETURN_IF_ERROR(
      hal_env_uint("HAL_SYNC_MAX_WAIT_MS", 0, 86400000, &ms, NULL));
  HAL_RETURN_IF_ERROR(hal_env_flag("HAL_SYNC_NO_FUTEX", &flag, NULL));
  HAL_RETURN_IF_ERROR(hal_env_uint("HAL_SYNC_SPIN_NS", 0,
                                   HAL_SEMAPHORE_MAX_SPIN_NS, &ms, NULL));
  HAL_RETURN_IF_ERROR(hal_env_flag("HAL_LOADER_DEBUG", &flag, NULL));
  HAL_RETURN_IF_ERROR(
      hal_env_uint("HAL_TRACE_MAX_MB", 0, UINT32_MAX, &ms, NULL));
  HAL_RETURN_IF_ERROR(
      hal_env_uint("HAL_FILE_CHUNK_BYTES", 4096, (uint64_t)1 << 30, &ms, NULL));
  HAL_RETURN_IF_ERROR(
      hal_env_uint("HAL_ALLOCA_RELEASE_THRESHOLD", 0, UINT64_MAX, &ms, NULL));
  return HAL_OK;
}
