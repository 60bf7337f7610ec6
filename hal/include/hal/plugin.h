// Copyright 2026 The HAL Authors.
//
// The driver plugin ABI: what a `hal-driver-<name>.so` exports.
//
// A plugin exports exactly ONE dynamic symbol, HAL_PLUGIN_ENTRY_SYMBOL, a
// function the host calls with the newest plugin ABI version it speaks. The
// plugin answers with a static hal_plugin_t describing itself, whose first
// two fields never change across versions:
//
//   const hal_plugin_t* hal_plugin_query(uint32_t host_abi_version);
//
// The host accepts the answer only if plugin->abi_version is one it supports
// (today exactly HAL_PLUGIN_ABI_VERSION) and plugin->struct_size covers the
// fields of that version; anything else is refused with INCOMPATIBLE naming
// both versions, before any other plugin code runs. A plugin that cannot
// serve the host's version returns its own newest version and lets the host
// refuse, or NULL (refused as "declined the host's ABI version").
//
// Plugins are built with hidden visibility and a version script; a test
// checks each built plugin's dynamic symbol table. Plugins link libhal for
// status, resource and sync code, so one copy of those is shared by the host
// and every plugin.

#ifndef HAL_PLUGIN_H_
#define HAL_PLUGIN_H_

#include "hal/allocator.h"
#include "hal/base.h"
#include "hal/impl/api.h"
#include "hal/status.h"

HAL_EXTERN_C_BEGIN

// The version of hal_plugin_t this libhal speaks. Bumped on any change to
// hal_plugin_t, to the vtables a plugin implements, to the layout of the
// objects it embeds or to what a libhal function it calls takes (hal/impl/:
// hal_device_t gained its file executor in 6; in 7
// hal_resource_wait_deferred_destroys takes the caller's count; in 8
// hal_device_t gained its loss domain; in 9 hal_device_properties_t, which
// a plugin fills, gained max_workgroup_dims).
#define HAL_PLUGIN_ABI_VERSION 9u

#define HAL_PLUGIN_ENTRY_SYMBOL "hal_plugin_query"

typedef struct hal_plugin_t {
  // Never moved or resized, in any version.
  uint32_t abi_version;
  uint32_t struct_size;
  // Version 1 fields.
  // The driver name; must equal the <name> of the file hal-driver-<name>.so.
  const char* driver_name;
  // One line for listings, e.g. "CUDA Driver API, stream replay".
  const char* description;
  // Creates the driver (loads the vendor runtime, enumerates devices). A
  // driver whose runtime is missing fails here with a status that names
  // every library tried and why.
  hal_status_t (*create_driver)(hal_allocator_t host_allocator,
                                hal_driver_t** out_driver);
} hal_plugin_t;

typedef const hal_plugin_t* (*hal_plugin_query_fn_t)(uint32_t host_abi_version);

// Declares the entry point inside a plugin:
//   HAL_PLUGIN_EXPORT const hal_plugin_t* hal_plugin_query(uint32_t v) {...}
#define HAL_PLUGIN_EXPORT __attribute__((visibility("default")))

HAL_EXTERN_C_END

#endif  // HAL_PLUGIN_H_
