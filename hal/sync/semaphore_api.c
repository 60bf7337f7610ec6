// Copyright 2026 The HAL Authors.
//
// The public hal_semaphore_* entry points: argument validation, then the
// vtable (S1 range checks live here so every implementation gets them).

#include <stdlib.h>

#include "semaphore_impl.h"

#include <stdio.h>

#include "hal/trace.h"

// HAL_TRACE: a host wait as a span (what it waited for, how it ended), a
// host signal or failure as an instant.
static hal_status_t hal_semaphore_trace_wait(const char* name, size_t count,
                                             uint64_t value, uint64_t start_ns,
                                             hal_status_t status) {
  char result[HAL_TRACE_STATUS_ARGS];
  hal_trace_status_args(status, result, sizeof(result));
  char args[HAL_TRACE_STATUS_ARGS + 64];
  snprintf(args, sizeof(args),
           "\"semaphores\": %zu, \"value\": %" PRIu64 ", %s", count, value,
           result);
  hal_trace_complete("host", name, start_ns, args);
  return status;
}

static const hal_semaphore_vtable_t* hal_semaphore_vtable(
    hal_semaphore_t* semaphore) {
  return (const hal_semaphore_vtable_t*)semaphore->resource.vtable;
}

// NULL, or an object of another type passed as a semaphore: the same
// answer as in a list (hal_semaphore_list_validate), never a call through
// a vtable that is not a semaphore's.
static hal_status_t hal_semaphore_check(const hal_semaphore_t* semaphore) {
  return hal_resource_check_kind(semaphore, HAL_RESOURCE_KIND_SEMAPHORE,
                                 "semaphore");
}

HAL_API void hal_semaphore_retain(hal_semaphore_t* semaphore) {
  if (semaphore)
    hal_resource_retain(&semaphore->resource);
}

HAL_API void hal_semaphore_release(hal_semaphore_t* semaphore) {
  if (semaphore)
    hal_resource_release(&semaphore->resource);
}

HAL_API hal_status_t hal_semaphore_list_validate(hal_semaphore_list_t list,
                                                 const char* what) {
  if (list.count == 0)
    return HAL_OK;
  if (!list.semaphores || !list.payload_values) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "%s list of %zu entries has a NULL array", what,
                           list.count);
  }
  for (size_t i = 0; i < list.count; ++i) {
    if (!list.semaphores[i]) {
      return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                             "%s list entry %zu is NULL", what, i);
    }
    // The sync module's semaphore is the only implementation: anything
    // else in a list is a wrong pointer, not another kind of semaphore.
    if (!hal_sync_semaphore_is_sync(list.semaphores[i])) {
      return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                             "%s list entry %zu is not a semaphore", what, i);
    }
    if (list.payload_values[i] > HAL_SEMAPHORE_MAX_VALUE) {
      return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                             "%s list entry %zu has value %" PRIu64
                             ", in the reserved failure range",
                             what, i, list.payload_values[i]);
    }
  }
  return HAL_OK;
}

HAL_API hal_status_t hal_semaphore_query(hal_semaphore_t* semaphore,
                                         uint64_t* out_value) {
  if (!semaphore || !out_value) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "semaphore or out_value is NULL");
  }
  *out_value = 0;
  HAL_RETURN_IF_ERROR(hal_semaphore_check(semaphore));
  return hal_semaphore_vtable(semaphore)->query(semaphore, out_value);
}

HAL_API hal_status_t hal_semaphore_signal(hal_semaphore_t* semaphore,
                                          uint64_t new_value) {
  HAL_RETURN_IF_ERROR(hal_semaphore_check(semaphore));
  if (new_value > HAL_SEMAPHORE_MAX_VALUE) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "signal value %" PRIu64
                           " is in the reserved failure range (max %" PRIu64
                           "); use hal_semaphore_fail()",
                           new_value, HAL_SEMAPHORE_MAX_VALUE);
  }
  hal_status_t status =
      hal_semaphore_vtable(semaphore)->signal(semaphore, new_value);
  if (hal_trace_enabled()) {
    char result[HAL_TRACE_STATUS_ARGS];
    hal_trace_status_args(status, result, sizeof(result));
    char args[HAL_TRACE_STATUS_ARGS + 48];
    snprintf(args, sizeof(args), "\"value\": %" PRIu64 ", %s", new_value,
             result);
    hal_trace_instant(0, "host", "semaphore_signal", args);
  }
  return status;
}

HAL_API void hal_semaphore_fail(hal_semaphore_t* semaphore,
                                hal_status_t status) {
  hal_status_t check = hal_semaphore_check(semaphore);
  if (check) {
    hal_status_free(check);
    hal_status_free(status);
    return;
  }
  if (hal_trace_enabled()) {
    char args[HAL_TRACE_STATUS_ARGS];
    hal_trace_status_args(status ? status : HAL_OK, args, sizeof(args));
    hal_trace_instant(0, "host", "semaphore_fail", args);
  }
  hal_semaphore_vtable(semaphore)->fail(semaphore, status);
}

HAL_API hal_status_t hal_semaphore_wait(hal_semaphore_t* semaphore,
                                        uint64_t value, hal_timeout_t timeout) {
  HAL_RETURN_IF_ERROR(hal_semaphore_check(semaphore));
  if (value > HAL_SEMAPHORE_MAX_VALUE) {
    return hal_make_status(
        HAL_STATUS_INVALID_ARGUMENT,
        "wait value %" PRIu64 " is in the reserved failure range", value);
  }
  if (!hal_trace_enabled())
    return hal_semaphore_vtable(semaphore)->wait(semaphore, value, timeout);
  uint64_t start = (uint64_t)hal_time_now();
  return hal_semaphore_trace_wait(
      "semaphore_wait", 1, value, start,
      hal_semaphore_vtable(semaphore)->wait(semaphore, value, timeout));
}

HAL_API hal_status_t hal_semaphore_list_wait(hal_wait_mode_t mode,
                                             hal_semaphore_list_t list,
                                             hal_timeout_t timeout) {
  // The deadline is fixed once, before anything else (time.h).
  hal_time_t deadline_ns = hal_timeout_as_deadline(timeout);
  if (mode != HAL_WAIT_MODE_ALL && mode != HAL_WAIT_MODE_ANY) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT, "bad wait mode %d",
                           (int)mode);
  }
  if (list.count == 0)
    return HAL_OK;
  HAL_RETURN_IF_ERROR(hal_semaphore_list_validate(list, "wait"));
  if (!hal_trace_enabled()) {
    return hal_sync_semaphore_wait_list(mode, list.count, list.semaphores,
                                        list.payload_values, deadline_ns);
  }
  uint64_t start = (uint64_t)hal_time_now();
  return hal_semaphore_trace_wait(
      mode == HAL_WAIT_MODE_ALL ? "wait_all" : "wait_any", list.count,
      list.payload_values[0], start,
      hal_sync_semaphore_wait_list(mode, list.count, list.semaphores,
                                   list.payload_values, deadline_ns));
}
