// Copyright 2026 The HAL Authors.
//
// hal-run: the host runtime CLI.
//
//   hal-run --list-drivers               every plugin found, and why a broken
//                                        one is broken
//   hal-run --driver=NAME --list-devices the devices a driver sees
//   hal-run --help
//
// Plugins are found through HAL_DRIVER_PATH, then (when run from a build
// tree) the build's drivers folder named in hal-run.build-paths beside the
// executable, then the install's plugin directory.

#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hal/api.h"
#include "hal/plugin.h"

#define HAL_RUN_EXIT_OK 0
#define HAL_RUN_EXIT_FAILURE 1
#define HAL_RUN_EXIT_USAGE 2

static void hal_run_print_usage(FILE* stream) {
  fprintf(
      stream,
      "usage: hal-run [options]\n"
      "\n"
      "  --list-drivers        list driver plugins found (name, ABI, file,\n"
      "                        status) and the directories searched\n"
      "  --driver=NAME         the driver to use\n"
      "  --list-devices        list the devices of --driver\n"
      "  --help                this text\n"
      "\n"
      "environment:\n"
      "  HAL_DRIVER_PATH       colon-separated directories searched for\n"
      "                        hal-driver-<name>.so before the install's\n"
      "                        plugin directory\n");
}

// Reads "<dir of this executable>/hal-run.build-paths": present only in a
// build tree, it names the build's plugin directory. Returns a malloc'd
// colon-separated path or NULL.
static char* hal_run_read_build_paths(void) {
  char exe[PATH_MAX];
  ssize_t length = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (length <= 0)
    return NULL;
  exe[length] = '\0';
  char* slash = strrchr(exe, '/');
  if (!slash)
    return NULL;
  *slash = '\0';
  char file_path[PATH_MAX + 32];
  snprintf(file_path, sizeof(file_path), "%s/hal-run.build-paths", exe);
  FILE* file = fopen(file_path, "r");
  if (!file)
    return NULL;
  char line[PATH_MAX];
  char* result = NULL;
  if (fgets(line, sizeof(line), file)) {
    line[strcspn(line, "\r\n")] = '\0';
    if (line[0])
      result = strdup(line);
  }
  fclose(file);
  return result;
}

static hal_status_t hal_run_create_registry(hal_driver_registry_t** out) {
  char* build_paths = hal_run_read_build_paths();
  hal_driver_registry_options_t options = {
      .search_path = NULL,  // HAL_DRIVER_PATH
      .extra_search_path = build_paths,
      // A build tree's hal-run uses the build's plugins, never stale
      // installed ones.
      .skip_install_dir = build_paths != NULL,
  };
  hal_status_t status =
      hal_driver_registry_create(&options, hal_allocator_system(), out);
  free(build_paths);
  return status;
}

static void hal_run_print_directories(FILE* stream,
                                      const hal_driver_registry_t* registry) {
  fprintf(stream, "directories searched:\n");
  size_t count = hal_driver_registry_directory_count(registry);
  for (size_t i = 0; i < count; ++i) {
    const char* dir = hal_driver_registry_directory_at(registry, i);
    fprintf(stream, "  %s%s\n", dir,
            access(dir, R_OK) == 0 ? "" : " (missing)");
  }
  if (count == 0)
    fprintf(stream, "  (none)\n");
}

static int hal_run_list_drivers(void) {
  hal_driver_registry_t* registry = NULL;
  hal_status_t status = hal_run_create_registry(&registry);
  if (status) {
    fprintf(stderr, "hal-run: ");
    hal_status_fprint(stderr, status);
    hal_status_free(status);
    return HAL_RUN_EXIT_FAILURE;
  }
  size_t count = hal_driver_registry_plugin_count(registry);
  printf("%-16s %-4s %-10s %s\n", "DRIVER", "ABI", "STATUS", "FILE");
  for (size_t i = 0; i < count; ++i) {
    const hal_plugin_record_t* record =
        hal_driver_registry_plugin_at(registry, i);
    const char* state = record->shadowed_by   ? "shadowed"
                        : record->load_status ? "broken"
                                              : "ok";
    char abi[16] = "-";
    if (record->abi_version) {
      snprintf(abi, sizeof(abi), "%u", record->abi_version);
    }
    printf("%-16s %-4s %-10s %s\n", record->name, abi, state, record->path);
    if (record->shadowed_by) {
      printf("    not used: %s of the same name comes first\n",
             record->shadowed_by);
    } else if (record->load_status) {
      char message[2048];
      hal_status_format(record->load_status, message, sizeof(message));
      printf("    %s\n", message);
    } else if (record->description[0]) {
      printf("    %s\n", record->description);
    }
  }
  if (count == 0)
    printf("(no driver plugins found)\n");
  hal_run_print_directories(stdout, registry);
  hal_driver_registry_free(registry);
  return HAL_RUN_EXIT_OK;
}

static int hal_run_list_devices(const char* driver_name) {
  hal_driver_registry_t* registry = NULL;
  hal_status_t status = hal_run_create_registry(&registry);
  hal_driver_t* driver = NULL;
  if (!status) {
    status = hal_driver_registry_create_driver(registry, driver_name,
                                               hal_allocator_system(), &driver);
  }
  uint32_t count = 0;
  if (!status)
    status = hal_driver_query_device_count(driver, &count);
  if (!status) {
    printf("driver %s: %u device(s)\n", driver_name, count);
    for (uint32_t i = 0; i < count && !status; ++i) {
      hal_device_info_t info;
      status = hal_driver_query_device_info(driver, i, &info);
      if (!status) {
        printf("  [%u] %-32s %8llu MiB  %u queue(s)\n", info.index, info.name,
               (unsigned long long)(info.total_memory >> 20), info.queue_count);
      }
    }
    if (!status && count == 0) {
      status = hal_make_status(HAL_STATUS_NOT_FOUND,
                               "driver '%s' found no devices", driver_name);
    }
  }
  hal_driver_release(driver);
  hal_driver_registry_free(registry);
  if (status) {
    fprintf(stderr, "hal-run: ");
    hal_status_fprint(stderr, status);
    hal_status_free(status);
    return HAL_RUN_EXIT_FAILURE;
  }
  return HAL_RUN_EXIT_OK;
}

int main(int argc, char** argv) {
  enum { OPT_LIST_DRIVERS = 256, OPT_LIST_DEVICES, OPT_DRIVER, OPT_HELP };
  static const struct option long_options[] = {
      {"list-drivers", no_argument, NULL, OPT_LIST_DRIVERS},
      {"list-devices", no_argument, NULL, OPT_LIST_DEVICES},
      {"driver", required_argument, NULL, OPT_DRIVER},
      {"help", no_argument, NULL, OPT_HELP},
      {NULL, 0, NULL, 0},
  };
  bool list_drivers = false;
  bool list_devices = false;
  const char* driver_name = NULL;
  int option;
  while ((option = getopt_long(argc, argv, "h", long_options, NULL)) != -1) {
    switch (option) {
      case OPT_LIST_DRIVERS:
        list_drivers = true;
        break;
      case OPT_LIST_DEVICES:
        list_devices = true;
        break;
      case OPT_DRIVER:
        driver_name = optarg;
        break;
      case OPT_HELP:
      case 'h':
        hal_run_print_usage(stdout);
        return HAL_RUN_EXIT_OK;
      default:
        hal_run_print_usage(stderr);
        return HAL_RUN_EXIT_USAGE;
    }
  }
  if (optind < argc) {
    fprintf(stderr, "hal-run: unexpected argument '%s'\n", argv[optind]);
    hal_run_print_usage(stderr);
    return HAL_RUN_EXIT_USAGE;
  }
  if (list_drivers)
    return hal_run_list_drivers();
  if (driver_name) {
    // Workloads arrive with the drivers; today a driver lists its devices.
    (void)list_devices;
    return hal_run_list_devices(driver_name);
  }
  if (list_devices) {
    fprintf(stderr, "hal-run: --list-devices needs --driver=NAME\n");
    return HAL_RUN_EXIT_USAGE;
  }
  hal_run_print_usage(stderr);
  return HAL_RUN_EXIT_USAGE;
}
