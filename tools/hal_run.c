// Copyright 2026 The HAL Authors.
//
// hal-run: the host runtime CLI.
//
//   hal-run --list-drivers               every plugin found, and why a broken
//                                        one is broken
//   hal-run --list-devices [--driver=N]  the devices of every usable driver,
//                                        or of one
//   hal-run --driver=NAME                the pipeline workload (main job)
//   hal-run --driver=all                 the pipeline on every driver found
//   hal-run --device=URI                 the pipeline on one device
//                                        (cuda_graph://1:
//                                        hal/driver_registry.h)
//   hal-run --ranks=N [--devices-per-rank=D] [--elements=E] [--driver=NAME]
//                                        a collective job of N rank
//                                        processes (ranks.h), on every
//                                        driver with collectives or one
//   hal-run --help | --version
//
// Plugins are found through HAL_DRIVER_PATH, then (when run from a build
// tree) the build's drivers folder named in hal-run.build-paths beside the
// executable, then the install's plugin directory.
//
// Runtime choice (a CLI convenience; libhal never falls back silently): a
// CUDA or HIP driver first loads the system runtime; if that fails or sees
// no device, and the virtual GPU is available (built beside hal-run, or
// installed), hal-run points HAL_CUDA_LIBRARY / HAL_HIP_LIBRARY at it and
// says so, and HAL_NCCL_LIBRARY / HAL_RCCL_LIBRARY at the same library (the
// virtual GPU's runtime is also its NCCL or RCCL). A variable the user set
// is always respected. The environment is set before any worker of
// --ranks starts, so workers inherit the choice.

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_args.h"
#include "cli_plugins.h"
#include "collectives.h"
#include "hal/api.h"
#include "hal/plugin.h"
#include "hal/trace.h"
#include "pipeline.h"
#include "ranks.h"

#define HAL_RUN_EXIT_OK 0
#define HAL_RUN_EXIT_FAILURE 1
#define HAL_RUN_EXIT_USAGE 2

#ifndef HAL_RUN_VERSION
#define HAL_RUN_VERSION "unknown"
#endif

// Set by -v: the full chain of why a system runtime was not used.
static bool hal_run_verbose;
// Set by --json: listings as one JSON document on stdout.
static bool hal_run_json;

// The length of the well-formed UTF-8 sequence at |c| (RFC 3629: no
// overlong forms, no surrogates, nothing past U+10FFFF), or 0.
static size_t hal_run_utf8_length(const unsigned char* c) {
  size_t length;
  unsigned char low = 0x80, high = 0xBF;  // the second byte's range
  if (c[0] >= 0xC2 && c[0] <= 0xDF) {
    length = 2;
  } else if (c[0] >= 0xE0 && c[0] <= 0xEF) {
    length = 3;
    if (c[0] == 0xE0)
      low = 0xA0;
    if (c[0] == 0xED)
      high = 0x9F;
  } else if (c[0] >= 0xF0 && c[0] <= 0xF4) {
    length = 4;
    if (c[0] == 0xF0)
      low = 0x90;
    if (c[0] == 0xF4)
      high = 0x8F;
  } else {
    return 0;
  }
  if (c[1] < low || c[1] > high)
    return 0;
  for (size_t i = 2; i < length; ++i) {
    if (c[i] < 0x80 || c[i] > 0xBF)
      return 0;
  }
  return length;
}

// |text| as a JSON string. Paths and names are bytes, JSON text is UTF-8:
// a byte that starts no well-formed UTF-8 sequence is written as U+FFFD.
static void hal_run_json_string(const char* text) {
  putchar('"');
  for (const unsigned char* c = (const unsigned char*)text; *c;) {
    if (*c == '"' || *c == '\\') {
      printf("\\%c", *c++);
    } else if (*c < 0x20) {
      printf("\\u%04x", *c++);
    } else if (*c < 0x80) {
      putchar(*c++);
    } else {
      size_t length = hal_run_utf8_length(c);
      if (length == 0) {
        fputs("\\ufffd", stdout);
        ++c;
      } else {
        fwrite(c, 1, length, stdout);
        c += length;
      }
    }
  }
  putchar('"');
}

// A status as text (for JSON and listings).
static void hal_run_status_text(hal_status_t status, char* text,
                                size_t capacity) {
  hal_status_format(status, text, capacity);
}

static void hal_run_print_usage(FILE* stream) {
  fprintf(
      stream,
      "usage: hal-run [options]\n"
      "\n"
      "  --driver=NAME         run the pipeline on device 0 of driver NAME\n"
      "                        (all: on every usable driver, each plugin\n"
      "                        left out said on stderr)\n"
      "  --device=URI          run the pipeline on one device: DRIVER,\n"
      "                        DRIVER://INDEX, DRIVER://UUID (as\n"
      "                        --dump-devices prints it, or GPU-<uuid> as\n"
      "                        nvidia-smi -L does) or DRIVER://NAME\n"
      "  --ranks=N             run a collective job of N rank processes (1 to\n"
      "                        64) on device 0 onwards of --driver (default\n"
      "                        all: every usable driver with collectives):\n"
      "                        all-reduce, all-gather, broadcast and\n"
      "                        reduce-scatter of int32, every element checked\n"
      "                        on the host, and the all-reduce's algbw and\n"
      "                        busbw (nccl-tests' formula); N=1 runs in this\n"
      "                        process, N>1 starts N workers (this program,\n"
      "                        HAL_RUN_RANK set) and relays their lines as\n"
      "                        'rank R: ...'\n"
      "  --devices-per-rank=D  devices of each rank process, one thread each\n"
      "                        (1 to 64, default 1; N x D at most 64): rank "
      "r's\n"
      "                        device d is global rank r*D+d, on device\n"
      "                        (r*D+d) modulo the driver's device count\n"
      "  --elements=E          int32 elements per global rank (default\n"
      "                        1048576; 1 to 1073741824)\n"
      "  --list-drivers        list driver plugins found (name, ABI, file,\n"
      "                        status) and the directories searched\n"
      "  --list-devices        list the devices of every usable driver, or\n"
      "                        of --driver\n"
      "  --dump-devices        the same with each device's properties:\n"
      "                        uuid (absent when the runtime reports none),\n"
      "                        memory types, executable formats, max\n"
      "                        workgroup size, max workgroup dims, max\n"
      "                        workgroup count, compute capability,\n"
      "                        runtime (its library, whether it\n"
      "                        is the virtual GPU, driver and runtime\n"
      "                        versions)\n"
      "  --json                the listings above as JSON on stdout (a\n"
      "                        byte of a path or name that is not UTF-8\n"
      "                        as U+FFFD)\n"
      "  --trace=FILE          write a trace of the run to FILE (Chrome\n"
      "                        Trace Event JSON: Perfetto UI, "
      "chrome://tracing;\n"
      "                        the same as HAL_TRACE=FILE)\n"
      "  -v, --verbose         say in full why a system runtime was not used\n"
      "  --version             hal-run's version and plugin ABI\n"
      "  -h, --help            this text\n"
      "Each option may be given once.\n");
  // Two strings: ISO C bounds a string literal's length.
  fprintf(
      stream,
      "\n"
      "environment:\n"
      "  HAL_DRIVER_PATH       colon-separated directories searched for\n"
      "                        hal-driver-<name>.so before the install's\n"
      "                        plugin directory\n"
      "  HAL_DRIVERS_SELECT, HAL_DRIVERS_DISABLE\n"
      "                        comma-separated globs of drivers to load, or\n"
      "                        not to\n"
      "  HAL_LOADER_DEBUG=1    print what the loader searches, loads and\n"
      "                        rejects\n"
      "  HAL_CUDA_LIBRARY, HAL_HIP_LIBRARY\n"
      "                        the vendor runtime to load; unset, hal-run\n"
      "                        tries the system runtime, then the virtual GPU\n"
      "  HAL_NCCL_LIBRARY, HAL_RCCL_LIBRARY\n"
      "                        the collective library (--ranks); unset,\n"
      "                        libnccl.so.2 / librccl.so.1, or the virtual\n"
      "                        GPU's runtime itself when hal-run falls back\n"
      "  HAL_RUN_RANK, HAL_RUN_RANKS, HAL_RUN_CHANNEL_ID\n"
      "                        what --ranks hands each worker: its rank, the\n"
      "                        rank count, the channel id (256 hex digits);\n"
      "                        a hal-run started with HAL_RUN_RANK set is a\n"
      "                        worker and never launches\n"
      "  HAL_RUN_KILL_RANK=R   a test hook: worker R kills itself (SIGKILL)\n"
      "                        once its channel exists, before submitting\n"
      "  HAL_RUN_EXIT_RANK=R   a test hook: worker R calls exit(3) once it\n"
      "                        has submitted collectives, before they end\n"
      "  HAL_GPU_ADAPTER_HIDE_SYMBOLS\n"
      "                        comma-separated vendor entry points treated\n"
      "                        as missing (to test the fallbacks)\n"
      "  HAL_SYNC_MAX_WAIT_MS  bound every host wait (a hang becomes an "
      "error),\n"
      "                        and --ranks' wait for its workers (else 300 s;\n"
      "                        0: none), past which it kills them\n"
      "  HAL_SYNC_NO_FUTEX=1   host waits block on condition variables, not\n"
      "                        futexes\n"
      "  HAL_TRACE=FILE        trace to FILE (docs/tracing.md; --ranks'\n"
      "                        workers: FILE.rank<R>);\n"
      "  HAL_TRACE_MAX_MB      bound its memory (events from the bound on are "
      "counted)\n"
      "  VGPU_*                the virtual GPU's knobs (device count, strict\n"
      "                        mode, faults, VGPU_CCL_TIMEOUT_MS, ...): the\n"
      "                        table in README.md, in full in docs/vgpu.md;\n"
      "                        each process has its own virtual devices\n"
      "\n"
      "exit status: 0 success, 1 a failure (its status on stderr), 2 usage\n");
}

// The directory of this executable (no trailing slash) into |out|.
static bool hal_run_exe_dir(char* out, size_t capacity) {
  ssize_t length = readlink("/proc/self/exe", out, capacity - 1);
  if (length <= 0)
    return false;
  out[length] = '\0';
  char* slash = strrchr(out, '/');
  if (!slash)
    return false;
  *slash = '\0';
  return true;
}

// Copies |source| into |target| of |capacity| bytes, truncating.
static void hal_run_copy(char* target, size_t capacity, const char* source) {
  size_t length = strlen(source);
  if (length >= capacity)
    length = capacity - 1;
  memcpy(target, source, length);
  target[length] = '\0';
}

// Paths a build tree writes into "<exe dir>/hal-run.build-paths" (never
// installed): "drivers=<dir>" and "vgpu=<dir>" lines.
typedef struct hal_run_paths_t {
  bool in_build_tree;
  char drivers[PATH_MAX];  // extra plugin dir ("" when none)
  char vgpu[PATH_MAX];     // where libvgpu-*.so live ("" when unknown)
} hal_run_paths_t;

static void hal_run_find_paths(hal_run_paths_t* paths) {
  memset(paths, 0, sizeof(*paths));
  char exe_dir[PATH_MAX];
  if (!hal_run_exe_dir(exe_dir, sizeof(exe_dir)))
    return;
  char file_path[PATH_MAX + 32];
  snprintf(file_path, sizeof(file_path), "%s/hal-run.build-paths", exe_dir);
  FILE* file = fopen(file_path, "r");
  if (file) {
    paths->in_build_tree = true;
    char line[PATH_MAX + 16];
    while (fgets(line, sizeof(line), file)) {
      line[strcspn(line, "\r\n")] = '\0';
      if (strncmp(line, "drivers=", 8) == 0) {
        hal_run_copy(paths->drivers, sizeof(paths->drivers), line + 8);
      } else if (strncmp(line, "vgpu=", 5) == 0) {
        hal_run_copy(paths->vgpu, sizeof(paths->vgpu), line + 5);
      }
    }
    fclose(file);
    return;
  }
  // Installed: the virtual GPU sits in <libdir>/hal/vgpu (hal.pc's
  // vgpudir).
  int length = snprintf(paths->vgpu, sizeof(paths->vgpu), "%s/%s/hal/vgpu",
                        exe_dir, HAL_RUN_LIBDIR_FROM_BINDIR);
  if (length < 0 || (size_t)length >= sizeof(paths->vgpu)) {
    paths->vgpu[0] = '\0';  // too long to be a usable path
  }
}

static void hal_run_print_status(const char* prefix, hal_status_t status) {
  fprintf(stderr, "hal-run: %s", prefix);
  hal_status_fprint(stderr, status);
}

// The exit code of one command's |status|: OK, or FAILURE after printing it
// with |prefix| on stderr (a JSON document, on stdout, stays whole) and
// freeing it.
static int hal_run_report(const char* prefix, hal_status_t status) {
  if (!status)
    return HAL_RUN_EXIT_OK;
  hal_run_print_status(prefix, status);
  hal_status_free(status);
  return HAL_RUN_EXIT_FAILURE;
}

// The registry every command uses, or NULL after printing why there is
// none.
static hal_driver_registry_t* hal_run_open_registry(
    const hal_run_paths_t* paths) {
  hal_driver_registry_options_t options = {
      .search_path = NULL,  // HAL_DRIVER_PATH
      .extra_search_path = paths->drivers[0] ? paths->drivers : NULL,
      // A build tree's hal-run uses the build's plugins, never stale
      // installed ones.
      .skip_install_dir = paths->in_build_tree,
  };
  hal_driver_registry_t* registry = NULL;
  hal_status_t status =
      hal_driver_registry_create(&options, hal_allocator_system(), &registry);
  if (status) {
    hal_run_print_status("", status);
    hal_status_free(status);
  }
  return registry;
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

static int hal_run_list_drivers(const hal_run_paths_t* paths) {
  hal_driver_registry_t* registry = hal_run_open_registry(paths);
  if (!registry)
    return HAL_RUN_EXIT_FAILURE;
  size_t count = hal_driver_registry_plugin_count(registry);
  if (hal_run_json)
    printf("{\"drivers\": [");
  else
    printf("%-16s %-4s %-10s %s\n", "DRIVER", "ABI", "STATUS", "FILE");
  for (size_t i = 0; i < count; ++i) {
    const hal_plugin_record_t* record =
        hal_driver_registry_plugin_at(registry, i);
    const char* state = record->shadowed_by   ? "shadowed"
                        : record->load_status ? "broken"
                                              : "ok";
    char message[2048] = "";
    if (record->load_status)
      hal_run_status_text(record->load_status, message, sizeof(message));
    if (hal_run_json) {
      printf("%s\n  {\"name\": ", i ? "," : "");
      hal_run_json_string(record->name);
      printf(", \"abi\": %u, \"status\": \"%s\", \"path\": ",
             record->abi_version, state);
      hal_run_json_string(record->path);
      if (record->shadowed_by) {
        printf(", \"shadowed_by\": ");
        hal_run_json_string(record->shadowed_by);
      } else if (record->load_status) {
        printf(", \"error\": ");
        hal_run_json_string(message);
      } else {
        printf(", \"description\": ");
        hal_run_json_string(record->description);
      }
      printf("}");
      continue;
    }
    char abi[16] = "-";
    if (record->abi_version) {
      snprintf(abi, sizeof(abi), "%u", record->abi_version);
    }
    printf("%-16s %-4s %-10s %s\n", record->name, abi, state, record->path);
    if (record->shadowed_by) {
      printf("    not used: %s of the same name comes first\n",
             record->shadowed_by);
    } else if (record->load_status) {
      printf("    %s\n", message);
    } else if (record->description[0]) {
      printf("    %s\n", record->description);
    }
  }
  if (hal_run_json) {
    printf("%s], \"directories\": [", count ? "\n" : "");
    size_t directories = hal_driver_registry_directory_count(registry);
    for (size_t i = 0; i < directories; ++i) {
      printf("%s", i ? ", " : "");
      hal_run_json_string(hal_driver_registry_directory_at(registry, i));
    }
    printf("]}\n");
  } else {
    if (count == 0)
      printf("(no driver plugins found)\n");
    hal_run_print_directories(stdout, registry);
  }
  hal_driver_registry_free(registry);
  return HAL_RUN_EXIT_OK;
}

// The runtime variables and virtual GPU library of a driver's vendor.
typedef struct hal_run_vendor_t {
  const char* prefix;        // driver names starting with it
  const char* variable;      // HAL_CUDA_LIBRARY ...
  const char* ccl_variable;  // its collective library's: HAL_NCCL_LIBRARY ...
  const char* vgpu;          // file name of the virtual GPU's facade
  bool fell_back;            // hal-run pointed |variable| at the virtual GPU
} hal_run_vendor_t;

static hal_run_vendor_t hal_run_vendors[] = {
    {"cuda_", "HAL_CUDA_LIBRARY", "HAL_NCCL_LIBRARY", "libvgpu-cuda.so", false},
    {"hip_", "HAL_HIP_LIBRARY", "HAL_RCCL_LIBRARY", "libvgpu-hip.so", false},
};

static hal_run_vendor_t* hal_run_vendor_of(const char* driver_name) {
  for (size_t i = 0; i < HAL_ARRAYSIZE(hal_run_vendors); ++i) {
    if (strncmp(driver_name, hal_run_vendors[i].prefix,
                strlen(hal_run_vendors[i].prefix)) == 0) {
      return &hal_run_vendors[i];
    }
  }
  return NULL;
}

// A malloc'd string formatted as printf does, or NULL when out of memory.
static char* hal_run_format(const char* format, ...) HAL_PRINTF_LIKE(1, 2);
static char* hal_run_format(const char* format, ...) {
  va_list args;
  va_start(args, format);
  int length = vsnprintf(NULL, 0, format, args);
  va_end(args);
  char* text = length < 0 ? NULL : malloc((size_t)length + 1);
  if (!text)
    return NULL;
  va_start(args, format);
  vsnprintf(text, (size_t)length + 1, format, args);
  va_end(args);
  return text;
}

// Why the system runtime of |status| is not usable, malloc'd (NULL when out
// of memory): the whole chain with -v, else its first link without its
// source location.
static char* hal_run_system_reason(hal_status_t status) {
  // Room for " (-v: why)", which replaces "; " and may outgrow the rest.
  enum { kSlack = 16 };
  size_t length = hal_status_format(status, NULL, 0);
  char* reason = malloc(length + kSlack);
  if (!reason)
    return NULL;
  hal_status_format(status, reason, length + 1);
  if (hal_run_verbose)
    return reason;
  char* cut = strstr(reason, "; ");
  if (cut)
    snprintf(cut, length + kSlack - (size_t)(cut - reason), " (-v: why)");
  // "CODE: file.c:123: message" -> "CODE: message"
  char* location = strstr(reason, ": ");
  char* message = location ? strstr(location + 2, ": ") : NULL;
  if (location && message &&
      memchr(location, '.', (size_t)(message - location)))
    memmove(location + 2, message + 2, strlen(message + 2) + 1);
  return reason;
}

// Creates |driver_name|, choosing the runtime (see the top of this file).
// |out_note| receives a line saying what it runs on (malloc'd, whole however
// long the chain of why the system runtime is not usable); the caller frees
// it.
static hal_status_t hal_run_create_driver(const hal_run_paths_t* paths,
                                          hal_driver_registry_t* registry,
                                          const char* driver_name,
                                          hal_driver_t** out_driver,
                                          char** out_note) {
  *out_note = NULL;
  hal_run_vendor_t* vendor = hal_run_vendor_of(driver_name);
  const char* chosen = vendor ? getenv(vendor->variable) : NULL;
  char* note = NULL;
  hal_status_t status = HAL_OK;
  if (vendor && vendor->fell_back && chosen) {
    // An earlier driver of this vendor already fell back (--driver=all).
    note = hal_run_format("the virtual GPU (%s=%s)", vendor->variable, chosen);
    status = hal_driver_registry_create_driver(
        registry, driver_name, hal_allocator_system(), out_driver);
  } else if (!vendor || (chosen && *chosen)) {
    note =
        hal_run_format("%s%s%s", vendor ? vendor->variable : "its own runtime",
                       vendor ? "=" : "", vendor ? chosen : "");
    status = hal_driver_registry_create_driver(
        registry, driver_name, hal_allocator_system(), out_driver);
  } else {
    hal_status_t system_status = hal_driver_registry_create_driver(
        registry, driver_name, hal_allocator_system(), out_driver);
    if (system_status == HAL_OK) {
      note = hal_run_format("the system %s runtime (a real GPU)",
                            vendor->prefix[0] == 'c' ? "CUDA" : "HIP");
    } else {
      char vgpu_path[PATH_MAX * 2];
      snprintf(vgpu_path, sizeof(vgpu_path), "%s/%s", paths->vgpu,
               vendor->vgpu);
      if (!paths->vgpu[0] || access(vgpu_path, R_OK) != 0) {
        return hal_status_annotatef(system_status,
                                    "and no virtual GPU was found (looked "
                                    "for %s)",
                                    vgpu_path);
      }
      char* reason = hal_run_system_reason(system_status);
      hal_status_free(system_status);
      if (reason) {
        setenv(vendor->variable, vgpu_path, 1);
        // The virtual GPU's runtime is its collective library too; a
        // library the user named stays.
        setenv(vendor->ccl_variable, vgpu_path, 0);
        vendor->fell_back = true;
        note = hal_run_format(
            "the virtual GPU (%s=%s), because the system runtime is not "
            "usable: %s",
            vendor->variable, vgpu_path, reason);
        free(reason);
        status = hal_driver_registry_create_driver(
            registry, driver_name, hal_allocator_system(), out_driver);
      }
    }
  }
  if (!status && !note) {
    hal_driver_release(*out_driver);
    *out_driver = NULL;
    status = hal_make_status(HAL_STATUS_RESOURCE_EXHAUSTED,
                             "out of memory saying what driver '%s' runs on",
                             driver_name);
  }
  if (status) {
    // What it was to run on says where the failure came from (the virtual
    // GPU the fallback chose, and why).
    if (note)
      status = hal_status_annotatef(status, "creating it on %s", note);
    free(note);
    return status;
  }
  *out_note = note;
  return HAL_OK;
}

// Prints one device of |driver|: a line (and with |dump| its properties),
// or a JSON object.
static hal_status_t hal_run_print_device(hal_driver_t* driver,
                                         const char* driver_name,
                                         uint32_t index, bool dump,
                                         bool first) {
  hal_device_info_t info;
  HAL_RETURN_IF_ERROR(hal_driver_query_device_info(driver, index, &info));
  char uri[HAL_DRIVER_NAME_MAX + 16];
  snprintf(uri, sizeof(uri), "%s://%u", driver_name, info.index);
  hal_device_properties_t properties;
  memset(&properties, 0, sizeof(properties));
  hal_device_t* device = NULL;
  if (dump) {
    HAL_RETURN_IF_ERROR(hal_driver_create_device_by_index(
        driver, index, hal_allocator_system(), &device));
    hal_status_t status = hal_device_query_properties(device, &properties);
    if (status) {
      hal_device_release(device);
      return status;
    }
  }
  const char* formats =
      properties.executable_formats && *properties.executable_formats
          ? properties.executable_formats
          : "none";
  char uuid[HAL_DEVICE_UUID_TEXT_SIZE] = "";
  if (info.has_uuid)
    hal_device_uuid_format(info.uuid, uuid);
  if (hal_run_json) {
    printf("%s\n      {\"uri\": ", first ? "" : ",");
    hal_run_json_string(uri);
    printf(", \"name\": ");
    hal_run_json_string(info.name);
    printf(", \"total_memory\": %llu, \"queue_count\": %u",
           (unsigned long long)info.total_memory, info.queue_count);
    if (dump) {
      printf(", \"uuid\": ");
      if (info.has_uuid)
        hal_run_json_string(uuid);
      else
        printf("null");
      printf(", \"device_local\": %s, \"host_visible\": %s",
             properties.supported_memory_types & HAL_MEMORY_TYPE_DEVICE_LOCAL
                 ? "true"
                 : "false",
             properties.supported_memory_types & HAL_MEMORY_TYPE_HOST_VISIBLE
                 ? "true"
                 : "false");
      printf(", \"executable_formats\": ");
      hal_run_json_string(
          properties.executable_formats ? properties.executable_formats : "");
      printf(
          ", \"max_workgroup_size\": %u, \"max_workgroup_count\": "
          "[%u, %u, %u], \"max_workgroup_dims\": [%u, %u, %u]",
          properties.max_workgroup_size, properties.max_workgroup_count[0],
          properties.max_workgroup_count[1], properties.max_workgroup_count[2],
          properties.max_workgroup_dims[0], properties.max_workgroup_dims[1],
          properties.max_workgroup_dims[2]);
      printf(", \"virtual\": %s, \"runtime_path\": ",
             properties.is_virtual ? "true" : "false");
      hal_run_json_string(properties.runtime_path ? properties.runtime_path
                                                  : "");
      printf(
          ", \"driver_version\": %d, \"runtime_version\": %d, "
          "\"compute_capability\": [%u, %u]",
          properties.driver_version, properties.runtime_version,
          properties.compute_capability_major,
          properties.compute_capability_minor);
    }
    printf("}");
  } else {
    printf("  %-18s %-32s %8llu MiB  %u queue(s)\n", uri, info.name,
           (unsigned long long)(info.total_memory >> 20), info.queue_count);
    if (dump) {
      if (info.has_uuid)
        printf("    uuid:                %s\n", uuid);
      printf(
          "    memory types:        %s%s%s\n",
          properties.supported_memory_types & HAL_MEMORY_TYPE_DEVICE_LOCAL
              ? "device-local"
              : "",
          properties.supported_memory_types ==
                  (HAL_MEMORY_TYPE_DEVICE_LOCAL | HAL_MEMORY_TYPE_HOST_VISIBLE)
              ? ", "
              : "",
          properties.supported_memory_types & HAL_MEMORY_TYPE_HOST_VISIBLE
              ? "host-visible"
              : "");
      printf("    executable formats:  %s\n", formats);
      printf("    max workgroup size:  %u threads\n",
             properties.max_workgroup_size);
      printf("    max workgroup dims:  %u x %u x %u threads\n",
             properties.max_workgroup_dims[0], properties.max_workgroup_dims[1],
             properties.max_workgroup_dims[2]);
      printf("    max workgroup count: %u x %u x %u\n",
             properties.max_workgroup_count[0],
             properties.max_workgroup_count[1],
             properties.max_workgroup_count[2]);
      printf("    compute capability:  %u.%u\n",
             properties.compute_capability_major,
             properties.compute_capability_minor);
      printf(
          "    runtime:             %s (%s), driver version %d, runtime "
          "version %d\n",
          properties.runtime_path && *properties.runtime_path
              ? properties.runtime_path
              : "none",
          properties.is_virtual ? "the virtual GPU" : "not virtual",
          properties.driver_version, properties.runtime_version);
    }
  }
  hal_device_release(device);
  return HAL_OK;
}

// Lists the devices of |driver_name| into stdout (|dump|: with their
// properties); |first| for the JSON separators.
static hal_status_t hal_run_list_driver_devices(const hal_run_paths_t* paths,
                                                hal_driver_registry_t* registry,
                                                const char* driver_name,
                                                bool dump, bool first) {
  hal_driver_t* driver = NULL;
  char* note = NULL;
  hal_status_t status =
      hal_run_create_driver(paths, registry, driver_name, &driver, &note);
  uint32_t count = 0;
  if (!status)
    status = hal_driver_query_device_count(driver, &count);
  if (hal_run_json) {
    printf("%s\n  {\"name\": ", first ? "" : ",");
    hal_run_json_string(driver_name);
  }
  if (!status && count == 0) {
    status = hal_make_status(HAL_STATUS_NOT_FOUND,
                             "driver '%s' found no devices", driver_name);
  }
  if (!status) {
    if (hal_run_json) {
      printf(", \"runtime\": ");
      hal_run_json_string(note);
      printf(", \"devices\": [");
    } else {
      printf("driver %s on %s: %u device(s)\n", driver_name, note, count);
    }
    for (uint32_t i = 0; i < count && !status; ++i)
      status = hal_run_print_device(driver, driver_name, i, dump, i == 0);
    if (hal_run_json)
      printf("]");
  }
  if (hal_run_json) {
    if (status) {
      char text[2048];
      hal_run_status_text(status, text, sizeof(text));
      printf(", \"error\": ");
      hal_run_json_string(text);
    }
    printf("}");
  }
  free(note);
  hal_driver_release(driver);
  return status;
}

// The devices of |driver_name|, or of every usable driver when NULL (a
// driver that fails is reported and the listing goes on).
static int hal_run_list_devices(const hal_run_paths_t* paths,
                                const char* driver_name, bool dump) {
  hal_driver_registry_t* registry = hal_run_open_registry(paths);
  if (!registry)
    return HAL_RUN_EXIT_FAILURE;
  hal_status_t status = HAL_OK;
  if (hal_run_json)
    printf("{\"drivers\": [");
  int exit_code = HAL_RUN_EXIT_OK;
  if (driver_name) {
    exit_code = hal_run_report(
        "",
        hal_run_list_driver_devices(paths, registry, driver_name, dump, true));
  } else {
    size_t count = 0;
    const char** names = hal_cli_usable_drivers("hal-run", registry, &count);
    if (!names) {
      hal_driver_registry_free(registry);
      return HAL_RUN_EXIT_FAILURE;
    }
    uint32_t listed = 0;
    for (size_t i = 0; i < count; ++i) {
      status =
          hal_run_list_driver_devices(paths, registry, names[i], dump, i == 0);
      if (status) {
        if (!hal_run_json) {
          char prefix[128];
          snprintf(prefix, sizeof(prefix), "driver %s: ", names[i]);
          hal_run_print_status(prefix, status);
        }
        hal_status_free(status);
      } else {
        ++listed;
      }
    }
    free(names);
    // A listing of every driver succeeds when one of them lists devices;
    // the others were reported.
    if (listed == 0) {
      // On stderr: a JSON document on stdout stays whole.
      fprintf(stderr, "hal-run: no usable driver has a device\n");
      hal_run_print_directories(stderr, registry);
      exit_code = HAL_RUN_EXIT_FAILURE;
    }
  }
  if (hal_run_json)
    printf("\n]}\n");
  hal_driver_registry_free(registry);
  return exit_code;
}

// The pipeline on the device |uri| names, of the driver |driver_name|.
static hal_status_t hal_run_pipeline_on_driver(const hal_run_paths_t* paths,
                                               hal_driver_registry_t* registry,
                                               const char* uri,
                                               const char* driver_name) {
  // The driver first, choosing its runtime; then the device by its URI
  // (the library parses it), on the runtime chosen.
  hal_driver_t* driver = NULL;
  char* note = NULL;
  HAL_RETURN_IF_ERROR(
      hal_run_create_driver(paths, registry, driver_name, &driver, &note));
  printf("driver %s: running on %s\n", driver_name, note);
  free(note);
  hal_device_t* device = NULL;
  hal_status_t status = hal_driver_registry_create_device(
      registry, uri, hal_allocator_system(), &device);
  hal_driver_release(driver);
  driver = NULL;
  hal_pipeline_result_t result;
  memset(&result, 0, sizeof(result));
  if (!status) {
    printf("  device %s: %s, %u queue(s)\n", uri, hal_device_info(device)->name,
           hal_device_info(device)->queue_count);
    hal_pipeline_options_t options = hal_pipeline_default_options();
    status = hal_pipeline_run(device, &options, true, &result);
  }
  hal_device_release(device);
  hal_driver_release(driver);
  if (!status) {
    printf(
        "pipeline ok: driver=%s submissions=%u verified=%llu bytes "
        "chain=%.2f ms fan=%.2f ms compute=%.2f ms total=%.2f ms (host "
        "time)\n",
        driver_name, result.submissions,
        (unsigned long long)result.bytes_verified, result.chain_ms,
        result.fan_ms, result.compute_ms, result.total_ms);
  }
  return status;
}

// Runs the pipeline on the device |uri| names (a driver name alone: its
// device 0); prints its summary line.
static hal_status_t hal_run_pipeline_on(const hal_run_paths_t* paths,
                                        hal_driver_registry_t* registry,
                                        const char* uri) {
  // Whole, however long: a name no driver can hold is then not found as
  // given, not as a prefix of it.
  size_t name_length = strcspn(uri, ":");
  char* driver_name = strndup(uri, name_length);
  if (!driver_name)
    return hal_make_status(HAL_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  hal_status_t status =
      hal_run_pipeline_on_driver(paths, registry, uri, driver_name);
  free(driver_name);
  return status;
}

static int hal_run_pipeline(const hal_run_paths_t* paths,
                            const char* driver_name) {
  hal_driver_registry_t* registry = hal_run_open_registry(paths);
  if (!registry)
    return HAL_RUN_EXIT_FAILURE;
  hal_status_t status = HAL_OK;
  int exit_code = HAL_RUN_EXIT_OK;
  if (strcmp(driver_name, "all") != 0) {
    exit_code = hal_run_report(
        "pipeline failed: ", hal_run_pipeline_on(paths, registry, driver_name));
  } else {
    size_t count = 0;
    const char** names = hal_cli_usable_drivers("hal-run", registry, &count);
    if (!names) {
      hal_driver_registry_free(registry);
      return HAL_RUN_EXIT_FAILURE;
    }
    uint32_t ran = (uint32_t)count, failed = 0;
    for (size_t i = 0; i < count; ++i) {
      status = hal_run_pipeline_on(paths, registry, names[i]);
      if (status) {
        ++failed;
        char prefix[128];
        snprintf(prefix, sizeof(prefix), "pipeline failed on %s: ", names[i]);
        hal_run_print_status(prefix, status);
        hal_status_free(status);
      }
    }
    free(names);
    printf("pipeline: %u driver(s) passed, %u failed\n", ran - failed, failed);
    if (ran == 0) {
      fprintf(stderr, "hal-run: no usable driver found\n");
      hal_run_print_directories(stderr, registry);
    }
    if (ran == 0 || failed)
      exit_code = HAL_RUN_EXIT_FAILURE;
  }
  hal_driver_registry_free(registry);
  return exit_code;
}

// --ranks: the collective job on |driver_name| (all: on every usable driver,
// those without collectives skipped), as its launcher, or, with HAL_RUN_RANK
// set, as one of a launcher's workers.
static int hal_run_ranks(const hal_run_paths_t* paths, const char* driver_name,
                         const hal_ranks_options_t* options) {
  bool all = strcmp(driver_name, "all") == 0;
  if (hal_ranks_is_worker() && all) {
    fprintf(stderr,
            "hal-run: a worker (HAL_RUN_RANK is set) runs the driver of its "
            "launcher's channel id: give --driver=NAME\n");
    return HAL_RUN_EXIT_USAGE;
  }
  hal_driver_registry_t* registry = hal_run_open_registry(paths);
  if (!registry)
    return HAL_RUN_EXIT_FAILURE;
  const char* one[1] = {driver_name};
  size_t count = 1;
  const char** names = one;
  if (all && !(names = hal_cli_usable_drivers("hal-run", registry, &count))) {
    hal_driver_registry_free(registry);
    return HAL_RUN_EXIT_FAILURE;
  }
  uint32_t passed = 0, failed = 0, skipped = 0;
  int exit_code = HAL_RUN_EXIT_OK;
  for (size_t i = 0; i < count; ++i) {
    hal_driver_t* driver = NULL;
    char* note = NULL;
    hal_status_t status =
        hal_run_create_driver(paths, registry, names[i], &driver, &note);
    if (status) {
      char prefix[128];
      snprintf(prefix, sizeof(prefix), "collectives failed on %s: ", names[i]);
      hal_run_print_status(prefix, status);
      char how[2048];
      hal_run_status_text(status, how, sizeof(how));
      hal_status_free(status);
      if (hal_ranks_is_worker())
        exit_code = HAL_RUN_EXIT_FAILURE;
      else
        hal_ranks_print_failed(names[i], options, how);
      ++failed;
      continue;
    }
    if (hal_ranks_is_worker()) {
      exit_code = hal_ranks_work(driver, options);
    } else {
      printf("driver %s: running on %s\n", names[i], note);
      hal_ranks_outcome_t outcome = hal_ranks_launch(driver, options);
      passed += outcome == HAL_RANKS_PASSED;
      failed += outcome == HAL_RANKS_FAILED;
      skipped += outcome == HAL_RANKS_SKIPPED;
    }
    free(note);
    hal_driver_release(driver);
  }
  if (!hal_ranks_is_worker()) {
    if (all) {
      printf("collectives: %u driver(s) passed, %u failed, %u skipped\n",
             passed, failed, skipped);
    }
    if (count == 0) {
      fprintf(stderr, "hal-run: no usable driver found\n");
      hal_run_print_directories(stderr, registry);
    } else if (passed == 0 && failed == 0) {
      fprintf(stderr, "hal-run: no driver asked for has collectives\n");
    }
    if (failed || passed == 0)
      exit_code = HAL_RUN_EXIT_FAILURE;
  }
  if (names != one)
    free(names);
  hal_driver_registry_free(registry);
  return exit_code;
}

// At exit, after libhal's own flush (atexit runs in reverse): what the
// trace holds and what it lost.
static void hal_run_report_trace(void) {
  hal_trace_flush();
  fprintf(stderr,
          "hal-run: trace written to %s (%" PRIu64 " events dropped, %" PRIu64
          " device spans dropped)\n",
          getenv("HAL_TRACE"), hal_trace_dropped(), hal_trace_dropped_spans());
}

// getopt_long's complaint about the option it stopped at, said as hal-run
// (getopt would name argv[0], a build path). |result| is what getopt_long
// returned (':' a missing argument, '?' anything else), |short_option| its
// optopt and |argument| the command-line element of a long option.
static void hal_run_print_option_error(int result, int short_option,
                                       const char* argument,
                                       const struct option* options) {
  // optopt is the character of a bad short option, 0 for an unknown or
  // ambiguous long one, and the (larger) value of a known long one.
  if (short_option > 0 && short_option <= UCHAR_MAX) {
    fprintf(stderr, "hal-run: unrecognized option '-%c'\n", short_option);
    return;
  }
  if (result == ':') {
    fprintf(stderr, "hal-run: option '%s' requires an argument\n", argument);
    return;
  }
  const char* name = argument + 2;
  size_t length = strcspn(name, "=");
  size_t matches = 0;
  const struct option* match = NULL;
  // "--=x" names no option rather than every one.
  for (const struct option* o = options; o->name && length > 0; ++o) {
    if (strncmp(o->name, name, length) != 0)
      continue;
    if (strlen(o->name) == length) {
      match = o;  // an exact name is never ambiguous
      matches = 1;
      break;
    }
    match = o;
    ++matches;
  }
  if (matches == 1 && name[length] == '=' && match->has_arg == no_argument) {
    fprintf(stderr, "hal-run: option '--%s' takes no argument\n", match->name);
  } else if (matches > 1) {
    fprintf(stderr, "hal-run: option '--%.*s' is ambiguous:", (int)length,
            name);
    for (const struct option* o = options; o->name; ++o) {
      if (strncmp(o->name, name, length) == 0)
        fprintf(stderr, " --%s", o->name);
    }
    fprintf(stderr, "\n");
  } else {
    fprintf(stderr, "hal-run: unrecognized option '%s'\n", argument);
  }
}

static int hal_run_main(int argc, char** argv);

int main(int argc, char** argv) {
  return hal_cli_finish_stdout("hal-run", hal_run_main(argc, argv),
                               HAL_RUN_EXIT_FAILURE);
}

static int hal_run_main(int argc, char** argv) {
  enum {
    OPT_LIST_DRIVERS = 256,
    OPT_LIST_DEVICES,
    OPT_DRIVER,
    OPT_DEVICE,
    OPT_VERSION,
    OPT_HELP,
    OPT_VERBOSE,
    OPT_DUMP_DEVICES,
    OPT_JSON,
    OPT_TRACE,
    OPT_RANKS,
    OPT_DEVICES_PER_RANK,
    OPT_ELEMENTS,
    OPT_COUNT_
  };
  static const struct option long_options[] = {
      {"list-drivers", no_argument, NULL, OPT_LIST_DRIVERS},
      {"list-devices", no_argument, NULL, OPT_LIST_DEVICES},
      {"driver", required_argument, NULL, OPT_DRIVER},
      {"device", required_argument, NULL, OPT_DEVICE},
      {"version", no_argument, NULL, OPT_VERSION},
      {"verbose", no_argument, NULL, OPT_VERBOSE},
      {"dump-devices", no_argument, NULL, OPT_DUMP_DEVICES},
      {"json", no_argument, NULL, OPT_JSON},
      {"trace", required_argument, NULL, OPT_TRACE},
      {"ranks", required_argument, NULL, OPT_RANKS},
      {"devices-per-rank", required_argument, NULL, OPT_DEVICES_PER_RANK},
      {"elements", required_argument, NULL, OPT_ELEMENTS},
      {"help", no_argument, NULL, OPT_HELP},
      {NULL, 0, NULL, 0},
  };
  int seen[OPT_COUNT_] = {0};
  const char* driver_name = NULL;
  const char* device_uri = NULL;
  const char* trace_path = NULL;
  const char* ranks_text = NULL;
  const char* per_rank_text = NULL;
  const char* elements_text = NULL;
  int option;
  // ':' first: a missing argument is told from an unknown option.
  opterr = 0;
  while ((option = getopt_long(argc, argv, ":hv", long_options, NULL)) != -1) {
    if (option == 'h')
      option = OPT_HELP;
    if (option == 'v')
      option = OPT_VERBOSE;
    if (option < OPT_LIST_DRIVERS || option >= OPT_COUNT_) {
      hal_run_print_option_error(option, optopt, argv[optind - 1],
                                 long_options);
      hal_run_print_usage(stderr);
      return HAL_RUN_EXIT_USAGE;
    }
    if (seen[option]++) {
      fprintf(stderr, "hal-run: %s given twice\n", argv[optind - 1]);
      return HAL_RUN_EXIT_USAGE;
    }
    if (option == OPT_DRIVER)
      driver_name = optarg;
    if (option == OPT_DEVICE)
      device_uri = optarg;
    if (option == OPT_TRACE)
      trace_path = optarg;
    if (option == OPT_RANKS)
      ranks_text = optarg;
    if (option == OPT_DEVICES_PER_RANK)
      per_rank_text = optarg;
    if (option == OPT_ELEMENTS)
      elements_text = optarg;
  }
  if (device_uri && strcmp(device_uri, "all") == 0) {
    // "all" is a value of --driver; a device URI names one device.
    fprintf(stderr,
            "hal-run: --device names one device (DRIVER, DRIVER://INDEX, "
            "...); --driver=all runs every driver\n");
    return HAL_RUN_EXIT_USAGE;
  }
  if (optind < argc) {
    fprintf(stderr, "hal-run: unexpected argument '%s'\n", argv[optind]);
    hal_run_print_usage(stderr);
    return HAL_RUN_EXIT_USAGE;
  }
  if (seen[OPT_HELP]) {
    hal_run_print_usage(stdout);
    return HAL_RUN_EXIT_OK;
  }
  if (seen[OPT_VERSION]) {
    printf("hal-run %s (HAL plugin ABI %u)\n", HAL_RUN_VERSION,
           HAL_PLUGIN_ABI_VERSION);
    return HAL_RUN_EXIT_OK;
  }
  // An empty name would only fail later as "no driver named ''".
  if (driver_name && !*driver_name) {
    fprintf(stderr, "hal-run: --driver needs a driver name (or all)\n");
    return HAL_RUN_EXIT_USAGE;
  }
  if (device_uri && !*device_uri) {
    fprintf(stderr, "hal-run: --device needs a device URI\n");
    return HAL_RUN_EXIT_USAGE;
  }
  if (trace_path) {
    // libhal reads HAL_TRACE when it loads, before main: run again with it
    // set (and without --trace).
    const char* current = getenv("HAL_TRACE");
    if (!*trace_path) {
      fprintf(stderr, "hal-run: --trace needs a file name\n");
      return HAL_RUN_EXIT_USAGE;
    }
    if (!current || strcmp(current, trace_path) != 0) {
      setenv("HAL_TRACE", trace_path, 1);
      char** args = calloc((size_t)argc + 1, sizeof(char*));
      int count = 0;
      for (int i = 0; args && i < argc; ++i) {
        if (strncmp(argv[i], "--trace", 7) != 0)
          args[count++] = argv[i];
        else if (strcmp(argv[i], "--trace") == 0)
          ++i;  // "--trace FILE"
      }
      if (args)
        execv("/proc/self/exe", args);
      fprintf(stderr, "hal-run: cannot run again with HAL_TRACE set: %s\n",
              strerror(errno));
      return HAL_RUN_EXIT_FAILURE;
    }
  }
  if (hal_trace_enabled())
    atexit(hal_run_report_trace);
  hal_run_verbose = seen[OPT_VERBOSE] > 0;
  hal_run_json = seen[OPT_JSON] > 0;
  bool list_devices = seen[OPT_LIST_DEVICES] || seen[OPT_DUMP_DEVICES];
  if (seen[OPT_LIST_DEVICES] && seen[OPT_DUMP_DEVICES]) {
    fprintf(stderr,
            "hal-run: --dump-devices lists the devices already: give "
            "one of --list-devices, --dump-devices\n");
    return HAL_RUN_EXIT_USAGE;
  }
  if (hal_run_json && !list_devices && !seen[OPT_LIST_DRIVERS]) {
    fprintf(stderr,
            "hal-run: --json is for --list-drivers, --list-devices "
            "and --dump-devices\n");
    return HAL_RUN_EXIT_USAGE;
  }
  if (driver_name && device_uri) {
    fprintf(stderr,
            "hal-run: --driver and --device both choose the device: give "
            "one\n");
    return HAL_RUN_EXIT_USAGE;
  }
  if (seen[OPT_LIST_DRIVERS] &&
      (driver_name || device_uri || list_devices || ranks_text)) {
    fprintf(stderr, "hal-run: --list-drivers takes no other option\n");
    return HAL_RUN_EXIT_USAGE;
  }
  if (device_uri && list_devices) {
    fprintf(stderr,
            "hal-run: --list-devices and --dump-devices list by "
            "--driver, not --device\n");
    return HAL_RUN_EXIT_USAGE;
  }
  hal_ranks_options_t ranks_options;
  if ((per_rank_text || elements_text) && !ranks_text) {
    fprintf(stderr,
            "hal-run: --devices-per-rank and --elements are options of "
            "--ranks\n");
    return HAL_RUN_EXIT_USAGE;
  }
  if (ranks_text) {
    if (!hal_ranks_parse_options(ranks_text, per_rank_text, elements_text,
                                 &ranks_options)) {
      return HAL_RUN_EXIT_USAGE;
    }
    ranks_options.verbose = hal_run_verbose;
    ranks_options.argv0 = argv[0];
    ranks_options.trace_per_driver =
        !driver_name || strcmp(driver_name, "all") == 0;
    if (device_uri) {
      fprintf(stderr,
              "hal-run: --ranks runs on the devices of --driver (device 0 "
              "onwards): give --driver, not --device\n");
      return HAL_RUN_EXIT_USAGE;
    }
    if (list_devices) {
      fprintf(stderr,
              "hal-run: --ranks runs a job; --list-devices and "
              "--dump-devices list\n");
      return HAL_RUN_EXIT_USAGE;
    }
  }
  if (driver_name && strcmp(driver_name, "all") == 0 && list_devices) {
    driver_name = NULL;  // every driver is what --list-devices lists anyway
  }
  hal_run_paths_t paths;
  hal_run_find_paths(&paths);
  if (seen[OPT_LIST_DRIVERS])
    return hal_run_list_drivers(&paths);
  if (list_devices) {
    return hal_run_list_devices(&paths, driver_name,
                                seen[OPT_DUMP_DEVICES] > 0);
  }
  if (ranks_text) {
    return hal_run_ranks(&paths, driver_name ? driver_name : "all",
                         &ranks_options);
  }
  if (driver_name)
    return hal_run_pipeline(&paths, driver_name);
  if (device_uri)
    return hal_run_pipeline(&paths, device_uri);
  fprintf(stderr,
          "hal-run: nothing to do: give --driver, --device, --ranks, "
          "--list-drivers, --list-devices or --dump-devices\n");
  hal_run_print_usage(stderr);
  return HAL_RUN_EXIT_USAGE;
}
