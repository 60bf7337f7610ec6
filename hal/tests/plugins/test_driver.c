// Copyright 2026 The HAL Authors.
//
// A host-memory driver used only by the core tests (never installed). It
// exercises the plugin ABI and the validating wrappers of libhal: devices,
// buffers (malloc'd), and command buffers executed synchronously on the
// submitting thread. Semaphores are not supported (UNIMPLEMENTED): they come
// from the sync module.
//
// Built several times with different macros:
//   TEST_PLUGIN_NAME         driver name (must match the file name)
//   TEST_PLUGIN_ABI_VERSION  ABI version to report (default: the host's)
//   TEST_PLUGIN_DEVICE_COUNT devices to report (default 2)
//   TEST_PLUGIN_NAME_FROM_FILE  the name is the one of the file it is loaded
//                            from (hal-driver-NAME.so), so that copies of
//                            one build are as many drivers
// and told at run time by HAL_TEST_PLUGIN_FAIL_CREATE (creating the driver
// fails) and HAL_TEST_PLUGIN_NO_UUID (its devices have no UUID).

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hal/impl/api.h"
#include "hal/impl/recording.h"
#include "hal/plugin.h"

#if defined(TEST_PLUGIN_NAME_FROM_FILE)
#include <dlfcn.h>
static char test_plugin_name[HAL_DRIVER_NAME_MAX];
#define TEST_PLUGIN_NAME test_plugin_name
#elif !defined(TEST_PLUGIN_NAME)
#define TEST_PLUGIN_NAME "test"
#endif
#ifndef TEST_PLUGIN_ABI_VERSION
#define TEST_PLUGIN_ABI_VERSION HAL_PLUGIN_ABI_VERSION
#endif
#ifndef TEST_PLUGIN_DEVICE_COUNT
#define TEST_PLUGIN_DEVICE_COUNT 2
#endif

#define TEST_DEVICE_MEMORY (1ull << 30)
#define TEST_QUEUE_COUNT 2

//===----------------------------------------------------------------------===//
// Buffers
//===----------------------------------------------------------------------===//

typedef struct test_buffer_t {
  hal_buffer_t base;
  uint8_t* data;
} test_buffer_t;

typedef struct test_device_t {
  hal_device_t base;
  hal_device_allocator_t allocator;
  _Atomic uint64_t allocated_bytes;
  _Atomic uint64_t allocation_count;
} test_device_t;

static void test_buffer_destroy(hal_buffer_t* base) {
  test_buffer_t* buffer = (test_buffer_t*)base;
  test_device_t* device = (test_device_t*)base->device;
  device->allocated_bytes -= base->byte_length;
  device->allocation_count -= 1;
  free(buffer->data);
  hal_allocator_free(device->base.host_allocator, buffer);
}

static hal_status_t test_buffer_map_range(hal_buffer_t* base,
                                          hal_mapping_access_t access,
                                          uint64_t offset, uint64_t length,
                                          void** out_contents) {
  *out_contents = ((test_buffer_t*)base)->data + offset;
  return HAL_OK;
}

static void test_buffer_unmap_range(hal_buffer_t* base, uint64_t offset,
                                    uint64_t length, void* contents) {}

static hal_status_t test_buffer_read(hal_buffer_t* base, uint64_t offset,
                                     void* target, uint64_t length) {
  memcpy(target, ((test_buffer_t*)base)->data + offset, length);
  return HAL_OK;
}

static hal_status_t test_buffer_write(hal_buffer_t* base, uint64_t offset,
                                      const void* source, uint64_t length) {
  memcpy(((test_buffer_t*)base)->data + offset, source, length);
  return HAL_OK;
}

static const hal_buffer_vtable_t test_buffer_vtable = {
    .destroy = test_buffer_destroy,
    .map_range = test_buffer_map_range,
    .unmap_range = test_buffer_unmap_range,
    .read = test_buffer_read,
    .write = test_buffer_write,
};

static hal_status_t test_allocator_allocate_buffer(
    hal_device_allocator_t* allocator, hal_buffer_params_t params,
    uint64_t byte_length, hal_buffer_t** out_buffer) {
  test_device_t* device = (test_device_t*)allocator->device;
  if (byte_length > TEST_DEVICE_MEMORY) {
    return hal_make_status(HAL_STATUS_RESOURCE_EXHAUSTED,
                           "test device has %llu bytes of memory",
                           (unsigned long long)TEST_DEVICE_MEMORY);
  }
  test_buffer_t* buffer = NULL;
  HAL_RETURN_IF_ERROR(hal_allocator_malloc(device->base.host_allocator,
                                           sizeof(*buffer), (void**)&buffer));
  buffer->data = calloc(1, (size_t)byte_length);
  if (!buffer->data) {
    hal_allocator_free(device->base.host_allocator, buffer);
    return hal_make_status(HAL_STATUS_RESOURCE_EXHAUSTED,
                           "test device could not allocate %llu bytes",
                           (unsigned long long)byte_length);
  }
  hal_buffer_initialize(&test_buffer_vtable, &device->base, params, byte_length,
                        &buffer->base);
  device->allocated_bytes += byte_length;
  device->allocation_count += 1;
  *out_buffer = &buffer->base;
  return HAL_OK;
}

static hal_status_t test_allocator_query_stats(
    hal_device_allocator_t* allocator, hal_memory_stats_t* out_stats) {
  test_device_t* device = (test_device_t*)allocator->device;
  out_stats->total_bytes = TEST_DEVICE_MEMORY;
  out_stats->allocated_bytes = device->allocated_bytes;
  out_stats->allocation_count = device->allocation_count;
  return HAL_OK;
}

static const hal_device_allocator_vtable_t test_allocator_vtable = {
    .allocate_buffer = test_allocator_allocate_buffer,
    .query_stats = test_allocator_query_stats,
};

//===----------------------------------------------------------------------===//
// Command buffers: libhal's recording, run on the host at submit
//===----------------------------------------------------------------------===//

static uint8_t* test_buffer_data(hal_buffer_t* buffer, uint64_t offset) {
  return ((test_buffer_t*)buffer)->data + offset;
}

static void test_command_buffer_run(hal_command_buffer_t* command_buffer) {
  size_t count = 0;
  const hal_op_t* ops =
      hal_recording_command_buffer_ops(command_buffer, &count);
  for (size_t i = 0; i < count; ++i) {
    const hal_op_t* op = &ops[i];
    switch (op->kind) {
      case HAL_OP_BARRIER:
        break;  // ops run in order on one thread
      case HAL_OP_DISPATCH:
        break;  // the test driver loads no executables, so never recorded
      case HAL_OP_COLLECTIVE:
        break;  // nor makes channels, so never recorded
      case HAL_OP_FILL: {
        uint8_t* target =
            test_buffer_data(op->fill.target, op->fill.target_offset);
        for (uint64_t j = 0; j < op->fill.length;
             j += op->fill.pattern_length) {
          memcpy(target + j, &op->fill.pattern, op->fill.pattern_length);
        }
        break;
      }
      case HAL_OP_UPDATE:
        memcpy(test_buffer_data(op->update.target, op->update.target_offset),
               op->update.data, (size_t)op->update.length);
        break;
      case HAL_OP_COPY:
        memcpy(test_buffer_data(op->copy.target, op->copy.target_offset),
               test_buffer_data(op->copy.source, op->copy.source_offset),
               (size_t)op->copy.length);
        break;
    }
  }
}

//===----------------------------------------------------------------------===//
// Device
//===----------------------------------------------------------------------===//

static void test_device_destroy(hal_device_t* base) {
  hal_allocator_free(base->host_allocator, base);
}

static hal_status_t test_device_query_properties(
    hal_device_t* base, hal_device_properties_t* out_properties) {
  out_properties->queue_count = TEST_QUEUE_COUNT;
  out_properties->total_memory = TEST_DEVICE_MEMORY;
  out_properties->supported_memory_types =
      HAL_MEMORY_TYPE_DEVICE_LOCAL | HAL_MEMORY_TYPE_HOST_VISIBLE;
  return HAL_OK;
}

static hal_device_allocator_t* test_device_allocator(hal_device_t* base) {
  return &((test_device_t*)base)->allocator;
}

static hal_status_t test_device_create_semaphore(
    hal_device_t* base, uint64_t initial_value,
    hal_semaphore_t** out_semaphore) {
  return hal_make_status(HAL_STATUS_UNIMPLEMENTED,
                         "the test driver has no semaphores");
}

static hal_status_t test_device_create_command_buffer(
    hal_device_t* base, hal_command_buffer_mode_t mode,
    hal_command_buffer_t** out_command_buffer) {
  return hal_recording_command_buffer_create(base, mode, NULL, NULL,
                                             out_command_buffer);
}

static hal_status_t test_device_queue_execute(
    hal_device_t* base, uint32_t queue_index,
    const hal_semaphore_list_t* wait_semaphores,
    const hal_semaphore_list_t* signal_semaphores, size_t command_buffer_count,
    hal_command_buffer_t* const* command_buffers) {
  if ((wait_semaphores && wait_semaphores->count) ||
      (signal_semaphores && signal_semaphores->count)) {
    return hal_make_status(HAL_STATUS_UNIMPLEMENTED,
                           "the test driver cannot wait or signal");
  }
  for (size_t i = 0; i < command_buffer_count; ++i) {
    test_command_buffer_run(command_buffers[i]);
  }
  return HAL_OK;
}

static hal_status_t test_device_wait_semaphores(
    hal_device_t* base, hal_wait_mode_t wait_mode,
    const hal_semaphore_list_t* semaphore_list, hal_timeout_t timeout) {
  return hal_make_status(HAL_STATUS_UNIMPLEMENTED,
                         "the test driver has no semaphores");
}

static const hal_device_vtable_t test_device_vtable = {
    .destroy = test_device_destroy,
    .query_properties = test_device_query_properties,
    .allocator = test_device_allocator,
    .create_semaphore = test_device_create_semaphore,
    .create_command_buffer = test_device_create_command_buffer,
    .queue_execute = test_device_queue_execute,
    .wait_semaphores = test_device_wait_semaphores,
};

//===----------------------------------------------------------------------===//
// Driver
//===----------------------------------------------------------------------===//

static void test_driver_destroy(hal_driver_t* driver) {
  hal_allocator_free(driver->host_allocator, driver);
}

static hal_status_t test_driver_query_device_count(hal_driver_t* driver,
                                                   uint32_t* out_count) {
  *out_count = TEST_PLUGIN_DEVICE_COUNT;
  return HAL_OK;
}

static hal_status_t test_driver_query_device_info(hal_driver_t* driver,
                                                  uint32_t index,
                                                  hal_device_info_t* out_info) {
  out_info->index = index;
  snprintf(out_info->name, sizeof(out_info->name), "test-device-%u", index);
  out_info->total_memory = TEST_DEVICE_MEMORY;
  out_info->queue_count = TEST_QUEUE_COUNT;
  // Fixed UUIDs, 7e57ab1e-0000-4000-8000-0000000000NN for device NN, with
  // letters so that URIs can be tested in either case; none at all with
  // HAL_TEST_PLUGIN_NO_UUID set (devices of runtimes that report none).
  if (!getenv("HAL_TEST_PLUGIN_NO_UUID")) {
    static const uint8_t kUuid[HAL_DEVICE_UUID_SIZE] = {
        0x7e, 0x57, 0xab, 0x1e, 0x00, 0x00, 0x40, 0x00,
        0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
    memcpy(out_info->uuid, kUuid, sizeof(kUuid));
    out_info->uuid[HAL_DEVICE_UUID_SIZE - 1] = (uint8_t)index;
    out_info->has_uuid = true;
  }
  return HAL_OK;
}

static hal_status_t test_driver_create_device(hal_driver_t* driver,
                                              uint32_t index,
                                              hal_allocator_t host_allocator,
                                              hal_device_t** out_device) {
  hal_device_info_t info;
  memset(&info, 0, sizeof(info));
  HAL_RETURN_IF_ERROR(test_driver_query_device_info(driver, index, &info));
  test_device_t* device = NULL;
  HAL_RETURN_IF_ERROR(
      hal_allocator_malloc(host_allocator, sizeof(*device), (void**)&device));
  hal_device_initialize(&test_device_vtable, driver, &info, host_allocator,
                        &device->base);
  device->allocator.vtable = &test_allocator_vtable;
  device->allocator.device = &device->base;
  *out_device = &device->base;
  return HAL_OK;
}

static const hal_driver_vtable_t test_driver_vtable = {
    .destroy = test_driver_destroy,
    .query_device_count = test_driver_query_device_count,
    .query_device_info = test_driver_query_device_info,
    .create_device = test_driver_create_device,
};

static hal_status_t test_plugin_create_driver(hal_allocator_t host_allocator,
                                              hal_driver_t** out_driver) {
  if (getenv("HAL_TEST_PLUGIN_FAIL_CREATE")) {
    return hal_make_status(HAL_STATUS_UNAVAILABLE,
                           "test plugin told to fail by "
                           "HAL_TEST_PLUGIN_FAIL_CREATE");
  }
  hal_driver_t* driver = NULL;
  HAL_RETURN_IF_ERROR(
      hal_allocator_malloc(host_allocator, sizeof(*driver), (void**)&driver));
  hal_driver_initialize(&test_driver_vtable, TEST_PLUGIN_NAME, host_allocator,
                        driver);
  *out_driver = driver;
  return HAL_OK;
}

#if defined(TEST_PLUGIN_NAME_FROM_FILE)
static hal_plugin_t test_plugin = {
#else
static const hal_plugin_t test_plugin = {
#endif
    .abi_version = TEST_PLUGIN_ABI_VERSION,
    .struct_size = sizeof(hal_plugin_t),
    .driver_name = TEST_PLUGIN_NAME,
    .description = "host-memory driver for the core tests",
    .create_driver = test_plugin_create_driver,
};

HAL_PLUGIN_EXPORT const hal_plugin_t* hal_plugin_query(
    uint32_t host_abi_version);

HAL_PLUGIN_EXPORT const hal_plugin_t* hal_plugin_query(
    uint32_t host_abi_version) {
#if defined(TEST_PLUGIN_NAME_FROM_FILE)
  // Each copy of the file is its own load, with its own name.
  Dl_info info;
  if (!dladdr((void*)&test_plugin, &info) || !info.dli_fname)
    return NULL;
  const char* base = strrchr(info.dli_fname, '/');
  base = base ? base + 1 : info.dli_fname;
  const char* prefix = "hal-driver-";
  size_t length = strlen(base);
  if (strncmp(base, prefix, strlen(prefix)) != 0 || length < 15)
    return NULL;
  snprintf(test_plugin_name, sizeof(test_plugin_name), "%.*s",
           (int)(length - strlen(prefix) - 3), base + strlen(prefix));
#endif
  return &test_plugin;
}
