// Copyright 2026 The HAL Authors.
//
// hal_device_t for drivers: the shared fields a driver's device type embeds
// first, and the vtable it implements.

#ifndef HAL_IMPL_DEVICE_H_
#define HAL_IMPL_DEVICE_H_

#include "hal/channel.h"
#include "hal/device.h"
#include "hal/impl/buffer.h"
#include "hal/impl/channel.h"
#include "hal/impl/command_buffer.h"
#include "hal/impl/driver.h"
#include "hal/impl/executable.h"
#include "hal/impl/resource.h"
#include "hal/impl/semaphore.h"

HAL_EXTERN_C_BEGIN

// Shared fields; drivers embed this first in their device type.
struct hal_device_t {
  hal_resource_t resource;  // parent: the driver
  hal_driver_t* driver;     // borrowed: kept alive by resource.parent
  hal_device_info_t info;
  hal_allocator_t host_allocator;
  // The caller's references (hal_device_retain/release); at zero the device
  // shuts down. Starts at 1.
  HAL_ATOMIC(intptr_t) external_ref_count;
  // Set by the release that runs the shutdown: it runs once even if a
  // retain revives |external_ref_count| after it reached zero.
  HAL_ATOMIC(bool) shutdown_claimed;
  // Runs the shutdown on libhal's release thread when the last caller
  // reference is dropped on a thread that must not run it (a queue thread
  // running a user callback: shutdown would join it).
  hal_deferred_node_t shutdown_node;
  // The host call thread and its calls (hal_device_queue_host_call),
  // started by the first one; shut down before the driver's shutdown.
  HAL_ATOMIC(struct hal_sync_host_executor_t*) host_executor;
  // The same for the host side of file transfers (hal_device_queue_read
  // and _write), apart so that a host call may wait for a transfer of its
  // own device and a long host call does not hold transfers up. Started
  // by the first transfer; shut down before |host_executor|, so that a
  // transfer a running host call waits for is cancelled, not waited for.
  HAL_ATOMIC(struct hal_sync_host_executor_t*) file_executor;
  // Optional, set by the driver after hal_device_initialize: the loss
  // domain of the device's queues and semaphores (hal/sync/sync_queue.h),
  // kept alive by the driver until the device is destroyed. Both executors
  // join it: a loss refuses later host calls and transfers and fails those
  // not yet started (Q5).
  struct hal_sync_loss_domain_t* loss_domain;
};
HAL_RESOURCE_ASSERT_LAYOUT(hal_device_t, resource);

// |device| for a message that tells two devices apart, also two made of
// one vendor device by two drivers or twice by one: "'NAME' (DRIVER://INDEX
// at ADDRESS)".
#define HAL_DEVICE_DESCRIPTION_MAX \
  (HAL_DEVICE_NAME_MAX + HAL_DRIVER_NAME_MAX + 48)
HAL_API void hal_device_describe(const hal_device_t* device, char* out,
                                 size_t capacity);

// Fills the shared fields and makes |driver| the device's parent.
HAL_API void hal_device_initialize(const hal_device_vtable_t* vtable,
                                   hal_driver_t* driver,
                                   const hal_device_info_t* info,
                                   hal_allocator_t host_allocator,
                                   hal_device_t* out_device);

// All members are required and thread-safe; the public wrappers validate
// arguments (queue index, lists, command buffer states and devices) first.
struct hal_device_vtable_t {
  // Frees the device once nothing refers to it. Any thread (possibly
  // libhal's release thread). If shutdown did not run (a failed create),
  // destroy does its work first.
  void (*destroy)(hal_device_t* device);
  // Optional. The caller released its last reference: wait for issued
  // work, fail parked work with CANCELLED, stop and join the device's
  // threads. Runs once, on the releasing thread, before the resource
  // reference that came with the caller's is dropped. Afterwards only
  // buffer and command-buffer destruction (and their host transfers) may
  // still touch the device; queue_execute must refuse.
  void (*shutdown)(hal_device_t* device);
  // Optional. The shutdown's first step, before the device's host calls
  // are stopped and the one running is waited for: fail the queues' parked
  // work with CANCELLED, as shutdown would, so that a running host call
  // that waits for such work returns. Ready and issued work goes on.
  void (*cancel_parked)(hal_device_t* device);
  hal_status_t (*query_properties)(hal_device_t* device,
                                   hal_device_properties_t* out_properties);
  hal_device_allocator_t* (*allocator)(hal_device_t* device);
  hal_status_t (*create_semaphore)(hal_device_t* device, uint64_t initial_value,
                                   hal_semaphore_t** out_semaphore);
  hal_status_t (*create_command_buffer)(
      hal_device_t* device, hal_command_buffer_mode_t mode,
      hal_command_buffer_t** out_command_buffer);
  // Optional (NULL: no executables). |params| are validated and the format
  // is one of the device's executable_formats. Resolves every entry point
  // (NOT_FOUND otherwise) and calls hal_executable_initialize().
  hal_status_t (*create_executable)(hal_device_t* device,
                                    const hal_executable_params_t* params,
                                    hal_executable_t** out_executable);
  // |command_buffers| are EXECUTABLE, belong to this device, and ONE_SHOT
  // ones are already marked submitted by the wrapper (which unmarks them if
  // this returns an error). May be called with zero command buffers (a
  // barrier). On error nothing may have been submitted.
  hal_status_t (*queue_execute)(hal_device_t* device, uint32_t queue_index,
                                const hal_semaphore_list_t* wait_semaphores,
                                const hal_semaphore_list_t* signal_semaphores,
                                size_t command_buffer_count,
                                hal_command_buffer_t* const* command_buffers);
  hal_status_t (*wait_semaphores)(hal_device_t* device,
                                  hal_wait_mode_t wait_mode,
                                  const hal_semaphore_list_t* semaphore_list,
                                  hal_timeout_t timeout);
  // Optional (NULL: UNIMPLEMENTED). |params| and |byte_length| are
  // validated (device-local, > 0, within the device's memory), as are the
  // lists; the contract is hal_device_queue_alloca's.
  hal_status_t (*queue_alloca)(hal_device_t* device, uint32_t queue_index,
                               const hal_semaphore_list_t* wait_semaphores,
                               const hal_semaphore_list_t* signal_semaphores,
                               hal_buffer_params_t params, uint64_t byte_length,
                               hal_buffer_t** out_buffer);
  // Optional, with queue_alloca. |buffer| is a buffer of this device; the
  // driver checks that it came from its queue_alloca and was not
  // deallocated before.
  hal_status_t (*queue_dealloca)(hal_device_t* device, uint32_t queue_index,
                                 const hal_semaphore_list_t* wait_semaphores,
                                 const hal_semaphore_list_t* signal_semaphores,
                                 hal_buffer_t* buffer);
  // Optional (NULL: no collectives, UNIMPLEMENTED), all three together.
  // A fresh communicator id from the device's collective library.
  hal_status_t (*channel_id_generate)(hal_device_t* device,
                                      hal_channel_id_t* out_id);
  // Rank |rank| (validated: in [0, rank_count)) of the communicator of
  // |id|, on this device; calls hal_channel_initialize().
  hal_status_t (*create_channel)(hal_device_t* device,
                                 const hal_channel_id_t* id, int32_t rank,
                                 int32_t rank_count,
                                 hal_channel_t** out_channel);
  // Called on devices[0]: one channel per device of |devices| (validated:
  // |count| >= 1 devices of this device's driver, each once), rank i on
  // devices[i]. On error no channel is left.
  hal_status_t (*create_channel_group)(hal_device_t* device, size_t count,
                                       hal_device_t* const* devices,
                                       hal_channel_t** out_channels);
};

HAL_EXTERN_C_END

#endif  // HAL_IMPL_DEVICE_H_
