// Copyright 2026 The HAL Authors.
//
// libhal's own device entry points, shared by its source files and not
// exported.

#ifndef HAL_DEVICE_PRIVATE_H_
#define HAL_DEVICE_PRIVATE_H_

#include "hal/device.h"

HAL_EXTERN_C_BEGIN

// hal_device_queue_host_call for the host side of a file transfer
// (file.c): the same contract, run by a thread of its own per device, so
// that the device's host calls may wait for file transfers and a long host
// call does not hold them up.
HAL_MUST_USE_RESULT hal_status_t
hal_device_queue_file_host_call(hal_device_t* device, uint32_t queue_index,
                                const hal_semaphore_list_t* wait_semaphores,
                                const hal_semaphore_list_t* signal_semaphores,
                                hal_host_call_fn_t fn, void* user_data);

HAL_EXTERN_C_END

#endif  // HAL_DEVICE_PRIVATE_H_
