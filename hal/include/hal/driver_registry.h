// Copyright 2026 The HAL Authors.
//
// hal_driver_registry_t: finds driver plugins and creates drivers from them.
//
// Search order (first match of a name wins; later files with the same name
// are listed as shadowed, never loaded in its place):
//   1. each directory of the search path: the options' |search_path| if
//      given, else the HAL_DRIVER_PATH environment variable (colon-separated,
//      empty entries ignored; a directory already listed under another
//      spelling, by realpath, is searched once, where first listed);
//   2. the install's plugin directory, found relative to libhal's own
//      location (<libdir>/hal/drivers), so relocated and DESTDIR-staged
//      installs work; unless |skip_install_dir| is set.
// A plugin is a file named hal-driver-<name>.so, <name> not empty; the same
// file reached twice under one name (by realpath) is listed once. Reached
// under another name (a link hal-driver-b.so to hal-driver-a.so), it is
// listed under each, and refused (INCOMPATIBLE) under a name that is not
// the one its driver reports. A <name> holding ':' is
// listed as refused (INVALID_ARGUMENT), never loaded: a device URI ends the
// driver's name there. So is a <name> of HAL_DRIVER_NAME_MAX bytes or more:
// a driver holds its name in HAL_DRIVER_NAME_MAX bytes with the NUL. Each one
// found is checked against its own ELF headers (a truncated ELF file or one for
// another machine is listed as broken, never dlopen()ed; a file that is no ELF
// at all is left to dlopen, which refuses it from its first bytes before
// mapping anything, and is listed as broken with dlopen's message), then loaded
// (dlopen, RTLD_LOCAL) and its entry point queried at registry creation, so a
// listing can say why a broken plugin is broken. Plugin code other than the
// entry point runs only when a driver is created.
//
// Loader switches, read at registry creation: HAL_DRIVERS_SELECT and
// HAL_DRIVERS_DISABLE (comma-separated fnmatch globs over driver names, each
// of 255 bytes at most: a longer one, or an empty one, matches nothing):
// a plugin whose name matches no SELECT glob, or any DISABLE glob, is
// listed with an UNAVAILABLE load_status saying which variable filtered it,
// and never dlopen()ed. HAL_LOADER_DEBUG=1 prints every decision on stderr
// ("hal loader: "), and each SELECT or DISABLE glob that matches no plugin
// found (not an error: a build may lack a vendor's drivers); a value other
// than 0 or 1 fails the creation with INVALID_ARGUMENT naming the variable.
//
// Thread-safety: a registry is immutable after creation; all functions are
// thread-safe.

#ifndef HAL_DRIVER_REGISTRY_H_
#define HAL_DRIVER_REGISTRY_H_

#include "hal/allocator.h"
#include "hal/base.h"
#include "hal/driver.h"
#include "hal/status.h"

HAL_EXTERN_C_BEGIN

typedef struct hal_driver_registry_t hal_driver_registry_t;

typedef struct hal_driver_registry_options_t {
  // Colon-separated directories searched first; NULL means $HAL_DRIVER_PATH.
  const char* search_path;
  // Directories searched after |search_path| and before the install dir
  // (colon-separated, may be NULL). Used by hal-run for its build tree.
  const char* extra_search_path;
  // Do not search the install's plugin directory.
  bool skip_install_dir;
} hal_driver_registry_options_t;

// One plugin file found on the search path.
typedef struct hal_plugin_record_t {
  // <name> of hal-driver-<name>.so.
  const char* name;
  // Full path of the file.
  const char* path;
  // The directory it was found in (one of the searched directories).
  const char* directory;
  // ABI version the plugin reported (0 if it could not be asked).
  uint32_t abi_version;
  // The plugin's one-line description ("" if it failed to load).
  const char* description;
  // OK, or why it cannot be used (truncated or foreign ELF file, dlopen/dlsym
  // text, ABI mismatch...). Owned by the registry.
  hal_status_t load_status;
  // Non-NULL when an earlier plugin of the same name wins: its path.
  const char* shadowed_by;
} hal_plugin_record_t;

HAL_API HAL_MUST_USE_RESULT hal_status_t hal_driver_registry_create(
    const hal_driver_registry_options_t* options,  // may be NULL
    hal_allocator_t host_allocator, hal_driver_registry_t** out_registry);

// Frees the registry. Drivers made from it stay valid (they hold their
// plugin open).
HAL_API void hal_driver_registry_free(hal_driver_registry_t* registry);

// Every plugin file found, in search order (including broken and shadowed).
HAL_API size_t
hal_driver_registry_plugin_count(const hal_driver_registry_t* registry);
HAL_API const hal_plugin_record_t* hal_driver_registry_plugin_at(
    const hal_driver_registry_t* registry, size_t index);

// The directories searched, in order, whether or not they exist.
HAL_API size_t
hal_driver_registry_directory_count(const hal_driver_registry_t* registry);
HAL_API const char* hal_driver_registry_directory_at(
    const hal_driver_registry_t* registry, size_t index);

// The install's plugin directory as libhal computed it.
HAL_API const char* hal_driver_registry_install_dir(void);

// Creates driver |name|. NOT_FOUND lists the usable drivers and the
// directories searched; a plugin that failed to load returns its load error;
// otherwise the plugin's create_driver result.
HAL_API HAL_MUST_USE_RESULT hal_status_t hal_driver_registry_create_driver(
    hal_driver_registry_t* registry, const char* name,
    hal_allocator_t host_allocator, hal_driver_t** out_driver);

// Creates the device a URI names, with its driver:
//   DRIVER             device 0 of driver DRIVER ("cuda_graph")
//   DRIVER://INDEX     the device at INDEX, decimal ("cuda_graph://1")
//   DRIVER://UUID      the device whose UUID is UUID: 32 hex digits as
//                      8-4-4-4-12, either case, optionally after "GPU-"
//                      as nvidia-smi prints it ("cuda_graph://GPU-
//                      76677075-2d64-6576-0000-000000000001"); stays right
//                      when devices are renumbered
//   DRIVER://NAME      the first device named NAME ("hip_stream://vgpu
//                      virtual GPU 1"); a name of digits only is an index,
//                      one in UUID form a UUID
// The device holds its driver; nothing else needs releasing. A malformed
// URI is INVALID_ARGUMENT showing the forms; an unknown driver, index,
// UUID or name is the registry's or the driver's NOT_FOUND / OUT_OF_RANGE,
// which name it and list what there is.
HAL_API HAL_MUST_USE_RESULT hal_status_t hal_driver_registry_create_device(
    hal_driver_registry_t* registry, const char* uri,
    hal_allocator_t host_allocator, hal_device_t** out_device);

HAL_EXTERN_C_END

#endif  // HAL_DRIVER_REGISTRY_H_
