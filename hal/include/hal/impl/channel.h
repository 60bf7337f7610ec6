// Copyright 2026 The HAL Authors.
//
// hal_channel_t for drivers: the shared fields a driver's channel type
// embeds first, and the vtable it implements. A driver makes channels in
// its device vtable's channel members (hal/impl/device.h).

#ifndef HAL_IMPL_CHANNEL_H_
#define HAL_IMPL_CHANNEL_H_

#include "hal/channel.h"
#include "hal/impl/resource.h"

HAL_EXTERN_C_BEGIN

typedef struct hal_channel_vtable_t hal_channel_vtable_t;

// Shared fields; drivers embed this first in their channel type.
typedef struct hal_channel_t {
  hal_resource_t resource;  // parent: the device
  hal_device_t* device;     // borrowed: kept alive by resource.parent
  int32_t rank;
  int32_t rank_count;
} hal_channel_t;
HAL_RESOURCE_ASSERT_LAYOUT(hal_channel_t, resource);

// Fills the shared fields and makes |device| the channel's parent.
HAL_API void hal_channel_initialize(const hal_channel_vtable_t* vtable,
                                    hal_device_t* device, int32_t rank,
                                    int32_t rank_count,
                                    hal_channel_t* out_channel);

struct hal_channel_vtable_t {
  // Destroys the communicator. Any thread; no submission uses it any more.
  // Required.
  void (*destroy)(hal_channel_t* channel);
  // OK, or the communicator's asynchronous failure. Required.
  hal_status_t (*check)(hal_channel_t* channel);
  // hal_channel_split, arguments checked (color >= -1). NULL:
  // UNIMPLEMENTED.
  hal_status_t (*split)(hal_channel_t* channel, int32_t color, int32_t key,
                        hal_channel_t** out_channel);
};

HAL_EXTERN_C_END

#endif  // HAL_IMPL_CHANNEL_H_
