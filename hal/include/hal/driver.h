// Copyright 2026 The HAL Authors.
//
// hal_driver_t: one loaded driver (a plugin such as cuda_stream) and the
// devices it can see.
//
// A driver is created by the registry (driver_registry.h) from a plugin. Its
// hal_resource_t.parent is the plugin's loaded shared object, closed only
// after the driver is destroyed; every object a driver makes keeps the
// driver alive the same way, so plugin code is never unloaded while anything
// it made is still in use.
//
// Thread-safety: all functions are thread-safe.

#ifndef HAL_DRIVER_H_
#define HAL_DRIVER_H_

#include "hal/allocator.h"
#include "hal/base.h"
#include "hal/resource.h"
#include "hal/status.h"

HAL_EXTERN_C_BEGIN

typedef struct hal_device_t hal_device_t;
typedef struct hal_driver_vtable_t hal_driver_vtable_t;

#define HAL_DEVICE_NAME_MAX 128
#define HAL_DRIVER_NAME_MAX 64
// Bytes of a device UUID, and of its text with the NUL
// ("xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx").
#define HAL_DEVICE_UUID_SIZE 16
#define HAL_DEVICE_UUID_TEXT_SIZE 37

typedef struct hal_device_info_t {
  // Position in the driver's enumeration order (0 .. count-1).
  uint32_t index;
  // Human-readable name, e.g. "NVIDIA H200" or "vgpu device 0".
  char name[HAL_DEVICE_NAME_MAX];
  // Device memory in bytes.
  uint64_t total_memory;
  // Number of queues a device made from this entry will have.
  uint32_t queue_count;
  // Whether |uuid| holds the device's UUID. A device has one when its
  // runtime reports one (CUDA and HIP, the virtual GPU too); it stays the
  // same when devices are renumbered (CUDA_VISIBLE_DEVICES), so it names a
  // device for good (DRIVER://UUID, driver_registry.h).
  bool has_uuid;
  // The UUID's bytes, in the vendor's order (the order nvidia-smi prints
  // them in); all zero without |has_uuid|.
  uint8_t uuid[HAL_DEVICE_UUID_SIZE];
} hal_device_info_t;

// |uuid| as lowercase 8-4-4-4-12 hex digits ("76677075-2d64-...") into
// |out_text|.
HAL_API void hal_device_uuid_format(const uint8_t uuid[HAL_DEVICE_UUID_SIZE],
                                    char out_text[HAL_DEVICE_UUID_TEXT_SIZE]);

// Whether |text| is a UUID: 32 hex digits in the 8-4-4-4-12 form, either
// case, optionally after "GPU-" (as nvidia-smi prints it; also in either
// case), nothing else.
// When it is, its bytes go to |out_uuid|; otherwise |out_uuid| is zeroed.
HAL_API bool hal_device_uuid_parse(const char* text,
                                   uint8_t out_uuid[HAL_DEVICE_UUID_SIZE]);

typedef struct hal_driver_t hal_driver_t;

HAL_API void hal_driver_retain(hal_driver_t* driver);
HAL_API void hal_driver_release(hal_driver_t* driver);

HAL_API const char* hal_driver_name(const hal_driver_t* driver);

// Number of devices the driver sees now (may be 0: then creating a device
// fails with NOT_FOUND "no devices").
HAL_API HAL_MUST_USE_RESULT hal_status_t
hal_driver_query_device_count(hal_driver_t* driver, uint32_t* out_count);

// Fills |*out_info| for the device at |index| (OUT_OF_RANGE past the count).
HAL_API HAL_MUST_USE_RESULT hal_status_t hal_driver_query_device_info(
    hal_driver_t* driver, uint32_t index, hal_device_info_t* out_info);

// Creates the device at |index| (OUT_OF_RANGE naming the count otherwise).
HAL_API HAL_MUST_USE_RESULT hal_status_t hal_driver_create_device_by_index(
    hal_driver_t* driver, uint32_t index, hal_allocator_t host_allocator,
    hal_device_t** out_device);

// Creates the first device whose name is |name| (NOT_FOUND listing the
// names otherwise).
HAL_API HAL_MUST_USE_RESULT hal_status_t hal_driver_create_device_by_name(
    hal_driver_t* driver, const char* name, hal_allocator_t host_allocator,
    hal_device_t** out_device);

// Creates the device whose UUID is |uuid| (NOT_FOUND naming it and listing
// the UUIDs there are otherwise; devices without one never match).
HAL_API HAL_MUST_USE_RESULT hal_status_t hal_driver_create_device_by_uuid(
    hal_driver_t* driver, const uint8_t uuid[HAL_DEVICE_UUID_SIZE],
    hal_allocator_t host_allocator, hal_device_t** out_device);

HAL_EXTERN_C_END

#endif  // HAL_DRIVER_H_
