// Copyright 2026 The HAL Authors.
//
// The drivers a tool's --driver=all runs, as the command-line tools share
// them.

#ifndef HAL_TOOLS_CLI_PLUGINS_H_
#define HAL_TOOLS_CLI_PLUGINS_H_

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hal/driver_registry.h"
#include "hal/status.h"

// "Every usable driver" leaves out plugins that cannot be used: each one is
// said on stderr as |tool|, so that a driver missing from a run is never a
// surprise. A plugin shadowed by a usable one of its name is not said (its
// driver runs); one shadowed by an unusable one is, since its driver does
// not.
static inline void hal_cli_say_unused_plugin(
    const char* tool, const hal_driver_registry_t* registry,
    const hal_plugin_record_t* record) {
  if (record->load_status) {
    char message[1024];
    hal_status_format(record->load_status, message, sizeof(message));
    fprintf(stderr, "%s: skipping plugin '%s' (%s): %s\n", tool, record->name,
            record->path, message);
    return;
  }
  size_t plugins = hal_driver_registry_plugin_count(registry);
  for (size_t i = 0; i < plugins; ++i) {
    const hal_plugin_record_t* winner =
        hal_driver_registry_plugin_at(registry, i);
    if (strcmp(winner->path, record->shadowed_by) == 0) {
      if (winner->load_status)
        fprintf(stderr,
                "%s: skipping plugin '%s' (%s): shadowed by the unusable %s\n",
                tool, record->name, record->path, winner->path);
      return;
    }
  }
}

// The drivers that loaded (neither shadowed nor broken), in search order,
// however many: their names, |*out_count| of them, in an array of one more
// than the registry's plugin count (free() it; the names are the
// registry's); the others are said on stderr. NULL when out of memory
// (said).
static inline const char** hal_cli_usable_drivers(
    const char* tool, const hal_driver_registry_t* registry,
    size_t* out_count) {
  size_t plugins = hal_driver_registry_plugin_count(registry);
  const char** names = (const char**)calloc(plugins + 1, sizeof(*names));
  *out_count = 0;
  if (!names) {
    fprintf(stderr, "%s: out of memory listing %zu driver(s)\n", tool, plugins);
    return NULL;
  }
  for (size_t i = 0; i < plugins; ++i) {
    const hal_plugin_record_t* record =
        hal_driver_registry_plugin_at(registry, i);
    if (!record->shadowed_by && !record->load_status)
      names[(*out_count)++] = record->name;
    else
      hal_cli_say_unused_plugin(tool, registry, record);
  }
  return names;
}

#endif  // HAL_TOOLS_CLI_PLUGINS_H_
