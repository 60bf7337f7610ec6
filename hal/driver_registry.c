// Copyright 2026 The HAL Authors.
//
// Plugin discovery and loading. See driver_registry.h for the search order.

#include "hal/driver_registry.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hal/env.h"
#include "hal/impl/resource.h"
#include "hal/library.h"
#include "hal/plugin.h"

#ifndef HAL_PLUGIN_SUBDIR
#define HAL_PLUGIN_SUBDIR "hal/drivers"
#endif
#ifndef HAL_PLUGIN_INSTALL_DIR
#define HAL_PLUGIN_INSTALL_DIR "/usr/local/lib/hal/drivers"
#endif

#define HAL_PLUGIN_FILE_PREFIX "hal-driver-"
#define HAL_PLUGIN_FILE_SUFFIX ".so"

// One plugin file; the public record plus what only the registry sees.
typedef struct hal_plugin_entry_t {
  hal_plugin_record_t record;
  void* library;               // dlopen handle while usable, else NULL
  const hal_plugin_t* plugin;  // the entry point's answer while usable
  char* real_path;             // realpath of record.path, NULL if none
} hal_plugin_entry_t;

struct hal_driver_registry_t {
  hal_allocator_t host_allocator;
  // The loader switches, read once at creation (see driver_registry.h).
  bool debug;     // HAL_LOADER_DEBUG=1
  char* select;   // HAL_DRIVERS_SELECT (a copy), or NULL
  char* disable;  // HAL_DRIVERS_DISABLE (a copy), or NULL
  // As spelled on the search path (first spelling of each directory), and
  // parallel to it the key that identifies the directory: its realpath, or
  // the spelling without trailing slashes when it does not resolve.
  char** directories;
  char** directory_keys;
  size_t directory_count;
  hal_plugin_entry_t* entries;
  size_t entry_count;
  size_t entry_capacity;
};

// A loaded plugin library as a resource: the parent of every driver made
// from it, so dlclose happens after the driver's destroy has returned.
typedef struct hal_plugin_library_t {
  hal_resource_t resource;
  hal_allocator_t host_allocator;
  void* handle;
} hal_plugin_library_t;

static void hal_plugin_library_destroy(hal_resource_t* resource) {
  hal_plugin_library_t* library = (hal_plugin_library_t*)resource;
  hal_library_close(library->handle);
  hal_allocator_free(library->host_allocator, library);
}

static const hal_resource_destroy_fn_t hal_plugin_library_vtable[1] = {
    hal_plugin_library_destroy,
};

//===----------------------------------------------------------------------===//
// Search path
//===----------------------------------------------------------------------===//

static char hal_install_dir[PATH_MAX + sizeof(HAL_PLUGIN_SUBDIR) + 2];

// libhal's directory + HAL_PLUGIN_SUBDIR: the install dir of a relocated or
// staged install. Falls back to the configured absolute path.
static void hal_install_dir_compute(void) {
  Dl_info info;
  memset(&info, 0, sizeof(info));
  char resolved[PATH_MAX];
  if (dladdr(hal_install_dir, &info) && info.dli_fname &&
      realpath(info.dli_fname, resolved)) {
    char* slash = strrchr(resolved, '/');
    if (slash) {
      *slash = '\0';
      snprintf(hal_install_dir, sizeof(hal_install_dir), "%s/%s", resolved,
               HAL_PLUGIN_SUBDIR);
      return;
    }
  }
  snprintf(hal_install_dir, sizeof(hal_install_dir), "%s",
           HAL_PLUGIN_INSTALL_DIR);
}

HAL_API const char* hal_driver_registry_install_dir(void) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, hal_install_dir_compute);
  return hal_install_dir;
}

// The identity of directory |spelled|: its realpath, so "d", "d/", "d/."
// and a symlink to d are one directory; a directory that does not resolve
// (missing) is known by its spelling without trailing slashes.
static hal_status_t hal_registry_directory_key(hal_allocator_t allocator,
                                               const char* spelled,
                                               char** out_key) {
  char resolved[PATH_MAX];
  if (realpath(spelled, resolved))
    return hal_allocator_strdup(allocator, resolved, out_key);
  HAL_RETURN_IF_ERROR(hal_allocator_strdup(allocator, spelled, out_key));
  size_t length = strlen(*out_key);
  while (length > 1 && (*out_key)[length - 1] == '/')
    (*out_key)[--length] = '\0';
  return HAL_OK;
}

static hal_status_t hal_registry_add_directory(hal_driver_registry_t* registry,
                                               const char* begin, size_t len) {
  if (len == 0)
    return HAL_OK;  // "a::b" and trailing ':' are ignored
  hal_allocator_t allocator = registry->host_allocator;
  char* copy = NULL;
  HAL_RETURN_IF_ERROR(hal_allocator_malloc(allocator, len + 1, (void**)&copy));
  memcpy(copy, begin, len);
  copy[len] = '\0';
  char* key = NULL;
  hal_status_t status = hal_registry_directory_key(allocator, copy, &key);
  for (size_t i = 0; status == HAL_OK && i < registry->directory_count; ++i) {
    if (strcmp(registry->directory_keys[i], key) == 0) {
      // Searched once, at its first position: a second search would list
      // every plugin in it as shadowed by itself.
      hal_allocator_free(allocator, key);
      hal_allocator_free(allocator, copy);
      return HAL_OK;
    }
  }
  size_t count = registry->directory_count + 1;
  if (status == HAL_OK) {
    status = hal_allocator_realloc(allocator, count * sizeof(char*),
                                   (void**)&registry->directories);
  }
  if (status == HAL_OK) {
    status = hal_allocator_realloc(allocator, count * sizeof(char*),
                                   (void**)&registry->directory_keys);
  }
  if (status != HAL_OK) {
    hal_allocator_free(allocator, key);
    hal_allocator_free(allocator, copy);
    return status;
  }
  registry->directories[registry->directory_count] = copy;
  registry->directory_keys[registry->directory_count] = key;
  registry->directory_count = count;
  return HAL_OK;
}

static hal_status_t hal_registry_add_path(hal_driver_registry_t* registry,
                                          const char* path) {
  if (!path)
    return HAL_OK;
  const char* begin = path;
  for (const char* p = path;; ++p) {
    if (*p == ':' || *p == '\0') {
      HAL_RETURN_IF_ERROR(
          hal_registry_add_directory(registry, begin, (size_t)(p - begin)));
      if (*p == '\0')
        break;
      begin = p + 1;
    }
  }
  return HAL_OK;
}

//===----------------------------------------------------------------------===//
// Loading one plugin
//===----------------------------------------------------------------------===//

// Asks the plugin at |entry->record.path| who it is. On failure the reason
// goes to record.load_status and the library is closed again.
// HAL_LOADER_DEBUG=1: one line on stderr per decision the loader makes.
static void hal_registry_debug(const hal_driver_registry_t* registry,
                               const char* format, ...) HAL_PRINTF_LIKE(2, 3);
static void hal_registry_debug(const hal_driver_registry_t* registry,
                               const char* format, ...) {
  if (!registry->debug)
    return;
  char line[2048];
  va_list args;
  va_start(args, format);
  vsnprintf(line, sizeof(line), format, args);
  va_end(args);
  fprintf(stderr, "hal loader: %s\n", line);
}

// The next element of the comma-separated |*cursor|: |*out_glob|,
// |*out_length| bytes long. False at the end.
static bool hal_registry_next_glob(const char** cursor, const char** out_glob,
                                   size_t* out_length) {
  if (!*cursor)
    return false;
  const char* end = strchr(*cursor, ',');
  *out_glob = *cursor;
  *out_length = end ? (size_t)(end - *cursor) : strlen(*cursor);
  *cursor = end ? end + 1 : NULL;
  return true;
}

// The longest glob; a longer one matches nothing.
#define HAL_REGISTRY_MAX_GLOB_LENGTH 255

// True when the glob of |length| bytes at |glob| matches |name|. An empty
// or overlong glob matches nothing.
static bool hal_registry_glob_matches(const char* glob, size_t length,
                                      const char* name) {
  char pattern[HAL_REGISTRY_MAX_GLOB_LENGTH + 1];
  if (length == 0 || length >= sizeof(pattern))
    return false;
  memcpy(pattern, glob, length);
  pattern[length] = '\0';
  return fnmatch(pattern, name, 0) == 0;
}

// True when |name| matches one of the comma-separated globs of |patterns|.
static bool hal_registry_matches(const char* patterns, const char* name) {
  const char* glob = NULL;
  size_t length = 0;
  for (const char* cursor = patterns;
       hal_registry_next_glob(&cursor, &glob, &length);) {
    if (hal_registry_glob_matches(glob, length, name))
      return true;
  }
  return false;
}

// HAL_LOADER_DEBUG: names each glob of |variable| that matches no plugin
// found (a typo, or a space around a comma, filters nothing, which is
// otherwise silent). Not an error: a build without a vendor lacks its
// drivers.
static void hal_registry_debug_unmatched(const hal_driver_registry_t* registry,
                                         const char* variable,
                                         const char* patterns) {
  if (!registry->debug || !patterns)
    return;
  const char* glob = NULL;
  size_t length = 0;
  for (const char* cursor = patterns;
       hal_registry_next_glob(&cursor, &glob, &length);) {
    if (length == 0)
      continue;  // an empty element (",,") names nothing
    if (length > HAL_REGISTRY_MAX_GLOB_LENGTH) {
      hal_registry_debug(registry,
                         "%s: a glob of %zu bytes ('%.32s...') matches "
                         "nothing: the longest is %d",
                         variable, length, glob, HAL_REGISTRY_MAX_GLOB_LENGTH);
      continue;
    }
    bool matched = false;
    for (size_t i = 0; i < registry->entry_count && !matched; ++i) {
      matched = hal_registry_glob_matches(glob, length,
                                          registry->entries[i].record.name);
    }
    if (!matched) {
      hal_registry_debug(registry, "%s: '%.*s' matches no plugin found",
                         variable, (int)length, glob);
    }
  }
}

// Why the switches keep |name| from loading, into |reason|; false if
// they do not.
static bool hal_registry_filtered(const hal_driver_registry_t* registry,
                                  const char* name, char* reason,
                                  size_t reason_size) {
  if (registry->disable && hal_registry_matches(registry->disable, name)) {
    snprintf(reason, reason_size,
             "driver '%s' is disabled by HAL_DRIVERS_DISABLE=%s", name,
             registry->disable);
    return true;
  }
  if (registry->select && !hal_registry_matches(registry->select, name)) {
    snprintf(reason, reason_size,
             "driver '%s' is not selected by HAL_DRIVERS_SELECT=%s", name,
             registry->select);
    return true;
  }
  return false;
}

static void hal_registry_load_entry(hal_plugin_entry_t* entry) {
  hal_plugin_record_t* record = &entry->record;
  hal_status_t check = hal_library_check(record->path);
  if (check != HAL_OK) {
    record->load_status = check;
    return;
  }
  dlerror();
  void* library = hal_library_open(record->path, RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char* error = dlerror();
    record->load_status =
        hal_make_status(HAL_STATUS_UNAVAILABLE, "dlopen(\"%s\") failed: %s",
                        record->path, error ? error : "(no dlerror text)");
    return;
  }
  dlerror();
  void* symbol = dlsym(library, HAL_PLUGIN_ENTRY_SYMBOL);
  if (!symbol) {
    const char* error = dlerror();
    record->load_status = hal_make_status(
        HAL_STATUS_INCOMPATIBLE,
        "%s is not a HAL driver plugin: dlsym(\"%s\") failed: %s", record->path,
        HAL_PLUGIN_ENTRY_SYMBOL, error ? error : "(no dlerror text)");
    hal_library_close(library);
    return;
  }
  hal_plugin_query_fn_t query;
  memcpy(&query, &symbol, sizeof(query));  // object -> function pointer
  const hal_plugin_t* plugin = query(HAL_PLUGIN_ABI_VERSION);
  hal_status_t status = HAL_OK;
  if (!plugin) {
    status = hal_make_status(HAL_STATUS_INCOMPATIBLE,
                             "plugin %s declined host plugin ABI version %u",
                             record->path, HAL_PLUGIN_ABI_VERSION);
  } else if (plugin->abi_version != HAL_PLUGIN_ABI_VERSION) {
    record->abi_version = plugin->abi_version;
    status = hal_make_status(
        HAL_STATUS_INCOMPATIBLE,
        "plugin %s implements HAL plugin ABI version %u, but this libhal "
        "speaks version %u; rebuild the plugin against this libhal",
        record->path, plugin->abi_version, HAL_PLUGIN_ABI_VERSION);
  } else if (plugin->struct_size < sizeof(hal_plugin_t)) {
    record->abi_version = plugin->abi_version;
    status = hal_make_status(HAL_STATUS_INCOMPATIBLE,
                             "plugin %s reports a %u-byte hal_plugin_t; ABI "
                             "version %u needs %zu bytes",
                             record->path, plugin->struct_size,
                             HAL_PLUGIN_ABI_VERSION, sizeof(hal_plugin_t));
  } else if (!plugin->driver_name || !plugin->create_driver) {
    record->abi_version = plugin->abi_version;
    status = hal_make_status(HAL_STATUS_INCOMPATIBLE,
                             "plugin %s has no driver name or create_driver",
                             record->path);
  } else if (strcmp(plugin->driver_name, record->name) != 0) {
    record->abi_version = plugin->abi_version;
    status =
        hal_make_status(HAL_STATUS_INCOMPATIBLE,
                        "plugin file %s reports driver name '%s'; the "
                        "file must be named " HAL_PLUGIN_FILE_PREFIX
                        "%s" HAL_PLUGIN_FILE_SUFFIX,
                        record->path, plugin->driver_name, plugin->driver_name);
  }
  if (status != HAL_OK) {
    record->load_status = status;
    hal_library_close(library);
    return;
  }
  record->abi_version = plugin->abi_version;
  record->description = plugin->description ? plugin->description : "";
  entry->library = library;
  entry->plugin = plugin;
}

// Extracts <name> from "hal-driver-<name>.so"; false if |file| is not one.
static bool hal_registry_parse_file_name(const char* file, size_t* out_begin,
                                         size_t* out_length) {
  size_t prefix = strlen(HAL_PLUGIN_FILE_PREFIX);
  size_t suffix = strlen(HAL_PLUGIN_FILE_SUFFIX);
  size_t length = strlen(file);
  if (length <= prefix + suffix)
    return false;
  if (strncmp(file, HAL_PLUGIN_FILE_PREFIX, prefix) != 0)
    return false;
  if (strcmp(file + length - suffix, HAL_PLUGIN_FILE_SUFFIX) != 0)
    return false;
  *out_begin = prefix;
  *out_length = length - prefix - suffix;
  return true;
}

static int hal_registry_compare_strings(const void* a, const void* b) {
  return strcmp(*(char* const*)a, *(char* const*)b);
}

static hal_status_t hal_registry_append_entry(hal_driver_registry_t* registry,
                                              hal_plugin_entry_t** out_entry) {
  if (registry->entry_count == registry->entry_capacity) {
    size_t capacity =
        registry->entry_capacity ? registry->entry_capacity * 2 : 8;
    HAL_RETURN_IF_ERROR(hal_allocator_realloc(
        registry->host_allocator, capacity * sizeof(hal_plugin_entry_t),
        (void**)&registry->entries));
    registry->entry_capacity = capacity;
  }
  hal_plugin_entry_t* entry = &registry->entries[registry->entry_count++];
  memset(entry, 0, sizeof(*entry));
  *out_entry = entry;
  return HAL_OK;
}

static const hal_plugin_entry_t* hal_registry_find_first(
    const hal_driver_registry_t* registry, const char* name) {
  for (size_t i = 0; i < registry->entry_count; ++i) {
    if (strcmp(registry->entries[i].record.name, name) == 0) {
      return &registry->entries[i];
    }
  }
  return NULL;
}

// True when an earlier entry named |name| is the file |real_path|: the same
// plugin reached again (through a symlink in another directory), not a
// second plugin of that name.
static bool hal_registry_has_file(const hal_driver_registry_t* registry,
                                  const char* name, const char* real_path) {
  if (!real_path)
    return false;
  for (size_t i = 0; i < registry->entry_count; ++i) {
    const hal_plugin_entry_t* entry = &registry->entries[i];
    if (entry->real_path && strcmp(entry->record.name, name) == 0 &&
        strcmp(entry->real_path, real_path) == 0) {
      return true;
    }
  }
  return false;
}

// Adds one plugin file found in |directory|.
static hal_status_t hal_registry_add_file(hal_driver_registry_t* registry,
                                          const char* directory,
                                          const char* file) {
  size_t name_begin = 0, name_length = 0;
  if (!hal_registry_parse_file_name(file, &name_begin, &name_length)) {
    return HAL_OK;
  }
  hal_allocator_t allocator = registry->host_allocator;
  char* name = NULL;
  char* path = NULL;
  char* real_path = NULL;
  HAL_RETURN_IF_ERROR(
      hal_allocator_malloc(allocator, name_length + 1, (void**)&name));
  memcpy(name, file + name_begin, name_length);
  size_t directory_length = strlen(directory);
  // "dir/" on the search path: no doubled slash in the plugin's path.
  const char* separator =
      directory_length > 0 && directory[directory_length - 1] == '/' ? "" : "/";
  size_t path_length = directory_length + 1 + strlen(file) + 1;
  hal_status_t status =
      hal_allocator_malloc(allocator, path_length, (void**)&path);
  if (status == HAL_OK) {
    snprintf(path, path_length, "%s%s%s", directory, separator, file);
    char resolved[PATH_MAX];
    if (realpath(path, resolved))
      status = hal_allocator_strdup(allocator, resolved, &real_path);
  }
  if (status == HAL_OK && hal_registry_has_file(registry, name, real_path)) {
    hal_registry_debug(registry, "%s: listed already (the same file)", path);
    hal_allocator_free(allocator, real_path);
    hal_allocator_free(allocator, path);
    hal_allocator_free(allocator, name);
    return HAL_OK;  // listed once, where first reached
  }
  const hal_plugin_entry_t* first = hal_registry_find_first(registry, name);
  const char* shadowed_by = first ? first->record.path : NULL;
  hal_plugin_entry_t* entry = NULL;
  if (status == HAL_OK)
    status = hal_registry_append_entry(registry, &entry);
  if (status != HAL_OK) {
    hal_allocator_free(allocator, real_path);
    hal_allocator_free(allocator, path);
    hal_allocator_free(allocator, name);
    return status;
  }
  entry->record.name = name;
  entry->record.path = path;
  entry->record.directory = directory;
  entry->record.description = "";
  entry->real_path = real_path;
  // |shadowed_by| points into an earlier entry, which the realloc above may
  // have moved: look it up again.
  if (shadowed_by) {
    entry->record.shadowed_by =
        hal_registry_find_first(registry, name)->record.path;
    hal_registry_debug(registry, "%s: shadowed by %s, not loaded", path,
                       entry->record.shadowed_by);
    return HAL_OK;  // the first one wins; this one is never loaded
  }
  if (strchr(name, ':')) {
    // A device URI ends the driver's name at its first ':'.
    entry->record.load_status = hal_make_status(
        HAL_STATUS_INVALID_ARGUMENT,
        "plugin %s: a driver name cannot hold ':' (no device URI could name "
        "it)",
        path);
    hal_registry_debug(registry, "%s: not loaded: its name holds ':'", path);
    return HAL_OK;
  }
  if (strlen(name) >= HAL_DRIVER_NAME_MAX) {
    // A driver keeps its name in HAL_DRIVER_NAME_MAX bytes: a longer one
    // would be listed under one name and created under another.
    entry->record.load_status = hal_make_status(
        HAL_STATUS_INVALID_ARGUMENT,
        "plugin %s: a driver name is at most %d bytes, this one is %zu", path,
        HAL_DRIVER_NAME_MAX - 1, strlen(name));
    hal_registry_debug(registry, "%s: not loaded: its name is too long", path);
    return HAL_OK;
  }
  char reason[1024];
  if (hal_registry_filtered(registry, name, reason, sizeof(reason))) {
    entry->record.load_status =
        hal_make_status(HAL_STATUS_UNAVAILABLE, "%s", reason);
    hal_registry_debug(registry, "%s: not loaded: %s", path, reason);
    return HAL_OK;
  }
  hal_registry_load_entry(entry);
  if (entry->record.load_status) {
    char text[1024];
    hal_status_format(entry->record.load_status, text, sizeof(text));
    hal_registry_debug(registry, "%s: rejected: %s", path, text);
  } else {
    hal_registry_debug(registry, "%s: loaded driver '%s' (ABI %u): %s", path,
                       name, entry->record.abi_version,
                       entry->record.description);
  }
  return HAL_OK;
}

static hal_status_t hal_registry_scan_directory(hal_driver_registry_t* registry,
                                                const char* directory) {
  DIR* dir = opendir(directory);
  if (!dir) {
    hal_registry_debug(registry, "searching %s: %s (skipped)", directory,
                       strerror(errno));
    return HAL_OK;  // a missing directory is not an error
  }
  hal_registry_debug(registry, "searching %s", directory);
  hal_allocator_t allocator = registry->host_allocator;
  char** files = NULL;
  size_t file_count = 0;
  hal_status_t status = HAL_OK;
  struct dirent* dirent;
  while (status == HAL_OK && (dirent = readdir(dir)) != NULL) {
    size_t begin, length;
    if (!hal_registry_parse_file_name(dirent->d_name, &begin, &length)) {
      if (strcmp(dirent->d_name,
                 HAL_PLUGIN_FILE_PREFIX HAL_PLUGIN_FILE_SUFFIX) == 0) {
        hal_registry_debug(registry, "%s/%s: no driver name, not a plugin",
                           directory, dirent->d_name);
      }
      continue;
    }
    status = hal_allocator_realloc(allocator, (file_count + 1) * sizeof(char*),
                                   (void**)&files);
    char* copy = NULL;
    if (status == HAL_OK) {
      status = hal_allocator_strdup(allocator, dirent->d_name, &copy);
    }
    if (status == HAL_OK)
      files[file_count++] = copy;
  }
  closedir(dir);
  // readdir order is arbitrary; sort so the result is reproducible.
  if (file_count) {
    qsort(files, file_count, sizeof(char*), hal_registry_compare_strings);
  }
  for (size_t i = 0; i < file_count; ++i) {
    if (status == HAL_OK) {
      status = hal_registry_add_file(registry, directory, files[i]);
    }
    hal_allocator_free(allocator, files[i]);
  }
  hal_allocator_free(allocator, files);
  return status;
}

//===----------------------------------------------------------------------===//
// Public API
//===----------------------------------------------------------------------===//

HAL_API hal_status_t hal_driver_registry_create(
    const hal_driver_registry_options_t* options,
    hal_allocator_t host_allocator, hal_driver_registry_t** out_registry) {
  if (!out_registry) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT, "out_registry is NULL");
  }
  *out_registry = NULL;
  hal_driver_registry_options_t defaults;
  memset(&defaults, 0, sizeof(defaults));
  if (!options)
    options = &defaults;

  hal_driver_registry_t* registry = NULL;
  HAL_RETURN_IF_ERROR(hal_allocator_malloc(host_allocator, sizeof(*registry),
                                           (void**)&registry));
  registry->host_allocator = host_allocator;
  // Every setting libhal reads is checked here, where a program can be
  // told (HAL_LOADER_DEBUG among them).
  hal_status_t env_status = hal_env_check();
  if (env_status == HAL_OK)
    env_status = hal_env_flag("HAL_LOADER_DEBUG", &registry->debug, NULL);
  if (env_status != HAL_OK) {
    hal_allocator_free(host_allocator, registry);
    return hal_status_annotatef(env_status, "creating the driver registry");
  }
  const char* select = getenv("HAL_DRIVERS_SELECT");
  const char* disable = getenv("HAL_DRIVERS_DISABLE");
  hal_status_t status = HAL_OK;
  if (select && *select)
    status = hal_allocator_strdup(host_allocator, select, &registry->select);
  if (status == HAL_OK && disable && *disable)
    status = hal_allocator_strdup(host_allocator, disable, &registry->disable);
  if (status != HAL_OK) {
    hal_driver_registry_free(registry);
    return status;
  }
  if (registry->select)
    hal_registry_debug(registry, "HAL_DRIVERS_SELECT=%s", registry->select);
  if (registry->disable)
    hal_registry_debug(registry, "HAL_DRIVERS_DISABLE=%s", registry->disable);

  const char* search_path =
      options->search_path ? options->search_path : getenv("HAL_DRIVER_PATH");
  status = hal_registry_add_path(registry, search_path);
  if (status == HAL_OK) {
    status = hal_registry_add_path(registry, options->extra_search_path);
  }
  if (status == HAL_OK && !options->skip_install_dir) {
    status = hal_registry_add_path(registry, hal_driver_registry_install_dir());
  }
  for (size_t i = 0; status == HAL_OK && i < registry->directory_count; ++i) {
    status = hal_registry_scan_directory(registry, registry->directories[i]);
  }
  if (status != HAL_OK) {
    hal_driver_registry_free(registry);
    return status;
  }
  hal_registry_debug_unmatched(registry, "HAL_DRIVERS_SELECT",
                               registry->select);
  hal_registry_debug_unmatched(registry, "HAL_DRIVERS_DISABLE",
                               registry->disable);
  *out_registry = registry;
  return HAL_OK;
}

HAL_API void hal_driver_registry_free(hal_driver_registry_t* registry) {
  if (!registry)
    return;
  hal_allocator_t allocator = registry->host_allocator;
  for (size_t i = 0; i < registry->entry_count; ++i) {
    hal_plugin_entry_t* entry = &registry->entries[i];
    // Drivers made from this plugin opened the library again for
    // themselves, so this close never unloads code still in use.
    if (entry->library)
      hal_library_close(entry->library);
    hal_status_free(entry->record.load_status);
    hal_allocator_free(allocator, (void*)entry->record.name);
    hal_allocator_free(allocator, (void*)entry->record.path);
    hal_allocator_free(allocator, entry->real_path);
  }
  hal_allocator_free(allocator, registry->entries);
  for (size_t i = 0; i < registry->directory_count; ++i) {
    hal_allocator_free(allocator, registry->directories[i]);
    hal_allocator_free(allocator, registry->directory_keys[i]);
  }
  hal_allocator_free(allocator, registry->directories);
  hal_allocator_free(allocator, registry->directory_keys);
  hal_allocator_free(allocator, registry->select);
  hal_allocator_free(allocator, registry->disable);
  hal_allocator_free(allocator, registry);
}

HAL_API size_t
hal_driver_registry_plugin_count(const hal_driver_registry_t* registry) {
  return registry ? registry->entry_count : 0;
}

HAL_API const hal_plugin_record_t* hal_driver_registry_plugin_at(
    const hal_driver_registry_t* registry, size_t index) {
  if (!registry || index >= registry->entry_count)
    return NULL;
  return &registry->entries[index].record;
}

HAL_API size_t
hal_driver_registry_directory_count(const hal_driver_registry_t* registry) {
  return registry ? registry->directory_count : 0;
}

HAL_API const char* hal_driver_registry_directory_at(
    const hal_driver_registry_t* registry, size_t index) {
  if (!registry || index >= registry->directory_count)
    return NULL;
  return registry->directories[index];
}

// Builds the NOT_FOUND message for an unknown driver name.
static hal_status_t hal_registry_not_found(
    const hal_driver_registry_t* registry, const char* name) {
  char found[1024] = "";
  size_t used = 0;
  size_t usable = 0;
  for (size_t i = 0; i < registry->entry_count && used < sizeof(found); ++i) {
    const hal_plugin_record_t* record = &registry->entries[i].record;
    if (record->shadowed_by)
      continue;
    int n = snprintf(found + used, sizeof(found) - used, "%s%s%s",
                     usable ? ", " : "", record->name,
                     record->load_status ? " (fails to load)" : "");
    if (n > 0)
      used += (size_t)n;
    ++usable;
  }
  char searched[2048] = "";
  used = 0;
  for (size_t i = 0; i < registry->directory_count && used < sizeof(searched);
       ++i) {
    struct stat st;
    bool exists = stat(registry->directories[i], &st) == 0;
    int n = snprintf(searched + used, sizeof(searched) - used, "%s%s%s",
                     i ? ", " : "", registry->directories[i],
                     exists ? "" : " (missing)");
    if (n > 0)
      used += (size_t)n;
  }
  return hal_make_status(
      HAL_STATUS_NOT_FOUND,
      "no driver named '%s'; drivers found: %s; directories searched: %s "
      "(set HAL_DRIVER_PATH to add directories)",
      name, usable ? found : "(none)",
      registry->directory_count ? searched : "(none)");
}

HAL_API hal_status_t hal_driver_registry_create_driver(
    hal_driver_registry_t* registry, const char* name,
    hal_allocator_t host_allocator, hal_driver_t** out_driver) {
  if (!out_driver) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT, "out_driver is NULL");
  }
  *out_driver = NULL;
  if (!registry || !name) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "registry and name must not be NULL");
  }
  const hal_plugin_entry_t* entry = hal_registry_find_first(registry, name);
  if (!entry) {
    hal_registry_debug(registry, "no driver named '%s'", name);
    return hal_registry_not_found(registry, name);
  }
  hal_registry_debug(registry, "creating driver '%s' from %s", name,
                     entry->record.path);
  if (entry->record.load_status) {
    return hal_status_annotatef(hal_status_clone(entry->record.load_status),
                                "driver '%s' cannot be used", name);
  }

  // The driver keeps its own reference to the library (dlopen counts), so
  // it outlives this registry.
  hal_plugin_library_t* library = NULL;
  HAL_RETURN_IF_ERROR(
      hal_allocator_malloc(host_allocator, sizeof(*library), (void**)&library));
  dlerror();
  library->handle = hal_library_open(entry->record.path, RTLD_NOW | RTLD_LOCAL);
  if (!library->handle) {
    const char* error = dlerror();
    hal_allocator_free(host_allocator, library);
    return hal_make_status(HAL_STATUS_UNAVAILABLE, "dlopen(\"%s\") failed: %s",
                           entry->record.path,
                           error ? error : "(no dlerror text)");
  }
  library->host_allocator = host_allocator;
  hal_resource_initialize(hal_plugin_library_vtable, NULL, &library->resource);

  hal_driver_t* driver = NULL;
  hal_status_t status = entry->plugin->create_driver(host_allocator, &driver);
  if (status == HAL_OK && !driver) {
    status = hal_make_status(HAL_STATUS_INTERNAL,
                             "plugin %s returned OK but no driver",
                             entry->record.path);
  }
  if (status != HAL_OK) {
    hal_resource_release(&library->resource);
    return hal_status_annotatef(status, "creating driver '%s' from %s", name,
                                entry->record.path);
  }
  // The library becomes the driver's parent: released (closed) only after
  // the driver's destroy returns. The driver is new and not yet shared.
  driver->resource.parent = &library->resource;
  *out_driver = driver;
  return HAL_OK;
}

HAL_API hal_status_t hal_driver_registry_create_device(
    hal_driver_registry_t* registry, const char* uri,
    hal_allocator_t host_allocator, hal_device_t** out_device) {
  if (!out_device) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT, "out_device is NULL");
  }
  *out_device = NULL;
  if (!registry || !uri) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "registry and uri must not be NULL");
  }
  const char* separator = strstr(uri, "://");
  size_t name_length = separator ? (size_t)(separator - uri) : strlen(uri);
  const char* selector = separator ? separator + 3 : NULL;
  char name[HAL_DRIVER_NAME_MAX];
  bool name_ok = name_length > 0 && name_length < sizeof(name) &&
                 strcspn(uri, "/:") >= name_length;
  if (!name_ok || (selector && !*selector)) {
    return hal_make_status(
        HAL_STATUS_INVALID_ARGUMENT,
        "device URI '%s' is not DRIVER, DRIVER://INDEX, DRIVER://UUID or "
        "DRIVER://NAME (e.g. 'cuda_graph', 'cuda_graph://1', "
        "'cuda_graph://GPU-<uuid as nvidia-smi -L prints it>')",
        uri);
  }
  memcpy(name, uri, name_length);
  name[name_length] = '\0';
  hal_driver_t* driver = NULL;
  HAL_RETURN_IF_ERROR(hal_driver_registry_create_driver(
      registry, name, host_allocator, &driver));
  hal_status_t status;
  bool is_index =
      selector && strspn(selector, "0123456789") == strlen(selector);
  uint8_t uuid[HAL_DEVICE_UUID_SIZE];
  // A selector in UUID form is a UUID even if a device were named so: the
  // UUID is the one name that cannot be ambiguous.
  bool is_uuid = selector && !is_index && hal_device_uuid_parse(selector, uuid);
  if (!selector) {
    status = hal_driver_create_device_by_index(driver, 0, host_allocator,
                                               out_device);
  } else if (is_index) {
    errno = 0;
    char* end = NULL;
    unsigned long index = strtoul(selector, &end, 10);
    status =
        errno || index > UINT32_MAX
            ? hal_make_status(HAL_STATUS_OUT_OF_RANGE,
                              "device index '%s' is out of range", selector)
            : hal_driver_create_device_by_index(driver, (uint32_t)index,
                                                host_allocator, out_device);
  } else if (is_uuid) {
    status = hal_driver_create_device_by_uuid(driver, uuid, host_allocator,
                                              out_device);
  } else {
    status = hal_driver_create_device_by_name(driver, selector, host_allocator,
                                              out_device);
  }
  // The device holds the driver (its parent) from here on.
  hal_driver_release(driver);
  if (status != HAL_OK)
    return hal_status_annotatef(status, "creating device '%s'", uri);
  hal_registry_debug(registry, "created device '%s'", uri);
  return HAL_OK;
}
