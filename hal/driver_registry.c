// Copyright 2026 The HAL Authors.
//
// Plugin discovery and loading. See driver_registry.h for the search order.

#include "hal/driver_registry.h"

#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hal/plugin.h"
#include "hal/resource.h"

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
  dlclose(library->handle);
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
// Checking a plugin file before dlopen
//===----------------------------------------------------------------------===//
//
// dlopen maps each loadable segment of a file where the file's program
// headers say it lies, and touches the mapping before checking that the
// file is that long: a truncated file (an interrupted copy or build, a full
// disk) kills the process with SIGBUS inside dlopen, whichever driver it
// wanted. So every plugin file is first checked against its own headers,
// and one that does not fit is listed as broken with the reason, never
// passed to dlopen. A file changed between the check and dlopen is beyond
// what this can see.

// The ELF identity of this host (what libhal itself is built as).
#if UINTPTR_MAX == UINT64_MAX
#define HAL_ELF_HOST_CLASS ELFCLASS64
#else
#define HAL_ELF_HOST_CLASS ELFCLASS32
#endif
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define HAL_ELF_HOST_DATA ELFDATA2LSB
#else
#define HAL_ELF_HOST_DATA ELFDATA2MSB
#endif
#if defined(__x86_64__)
#define HAL_ELF_HOST_MACHINE EM_X86_64
#elif defined(__i386__)
#define HAL_ELF_HOST_MACHINE EM_386
#elif defined(__aarch64__)
#define HAL_ELF_HOST_MACHINE EM_AARCH64
#elif defined(__arm__)
#define HAL_ELF_HOST_MACHINE EM_ARM
#elif defined(__powerpc64__)
#define HAL_ELF_HOST_MACHINE EM_PPC64
#elif defined(__powerpc__)
#define HAL_ELF_HOST_MACHINE EM_PPC
#elif defined(__riscv)
#define HAL_ELF_HOST_MACHINE EM_RISCV
#elif defined(__s390__)
#define HAL_ELF_HOST_MACHINE EM_S390
#elif defined(__mips__)
#define HAL_ELF_HOST_MACHINE EM_MIPS
#endif
// Elsewhere the machine is left to dlopen, which refuses a foreign one from
// the header without mapping anything.

static int hal_elf_class_bits(unsigned char elf_class) {
  return elf_class == ELFCLASS32 ? 32 : elf_class == ELFCLASS64 ? 64 : 0;
}

static const char* hal_elf_type_name(unsigned type) {
  switch (type) {
    case ET_NONE:
      return "an ELF file of no type (ET_NONE)";
    case ET_REL:
      return "a relocatable object (ET_REL)";
    case ET_EXEC:
      return "an executable (ET_EXEC)";
    case ET_CORE:
      return "a core dump (ET_CORE)";
    default:
      return "an ELF file of an unknown type";
  }
}

// Reads exactly |size| bytes at |offset|. NULL on success, else why not.
static const char* hal_elf_read(int fd, void* buffer, size_t size,
                                uint64_t offset) {
  uint8_t* bytes = buffer;
  while (size > 0) {
    ssize_t n = pread(fd, bytes, size, (off_t)offset);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return strerror(errno);
    if (n == 0)
      return "the file ended early (it changed while being checked)";
    bytes += n;
    size -= (size_t)n;
    offset += (uint64_t)n;
  }
  return NULL;
}

// DATA_LOSS unless |count| entries of |entry_size| bytes at |offset| lie
// within the file's |file_size| bytes. |what| names them in the message.
static hal_status_t hal_elf_check_range(const char* path, const char* what,
                                        uint64_t offset, uint64_t count,
                                        uint64_t entry_size,
                                        uint64_t file_size) {
  uint64_t bytes = 0;
  uint64_t end = 0;
  if (__builtin_mul_overflow(count, entry_size, &bytes) ||
      __builtin_add_overflow(offset, bytes, &end)) {
    return hal_make_status(HAL_STATUS_DATA_LOSS,
                           "%s: truncated ELF file: %s at byte %" PRIu64
                           " ends past any file size (the file has %" PRIu64
                           " bytes)",
                           path, what, offset, file_size);
  }
  if (end > file_size) {
    return hal_make_status(HAL_STATUS_DATA_LOSS,
                           "%s: truncated ELF file: %s ends at byte %" PRIu64
                           " but the file has %" PRIu64 " bytes",
                           path, what, end, file_size);
  }
  return HAL_OK;
}

// Checks the ELF header of the open file |fd| against this host and its
// program and section header tables and segments against the file's size.
static hal_status_t hal_elf_check_fd(const char* path, int fd,
                                     uint64_t file_size) {
  ElfW(Ehdr) ehdr;
  memset(&ehdr, 0, sizeof(ehdr));
  size_t have = file_size < sizeof(ehdr) ? (size_t)file_size : sizeof(ehdr);
  const char* error = hal_elf_read(fd, &ehdr, have, 0);
  if (error) {
    return hal_make_status(HAL_STATUS_UNAVAILABLE,
                           "%s: reading its ELF header failed: %s", path,
                           error);
  }
  // Not an ELF file at all: dlopen refuses it from these bytes, before it
  // maps anything, and its message is the one kept for such files.
  if (have < SELFMAG || memcmp(ehdr.e_ident, ELFMAG, SELFMAG) != 0)
    return HAL_OK;

  if (have > EI_CLASS && ehdr.e_ident[EI_CLASS] != HAL_ELF_HOST_CLASS) {
    int bits = hal_elf_class_bits(ehdr.e_ident[EI_CLASS]);
    if (bits == 0) {
      return hal_make_status(HAL_STATUS_INCOMPATIBLE,
                             "%s: invalid ELF class %u (neither 32-bit nor "
                             "64-bit ELF)",
                             path, ehdr.e_ident[EI_CLASS]);
    }
    return hal_make_status(HAL_STATUS_INCOMPATIBLE,
                           "%s is a %d-bit ELF file; this host loads %d-bit "
                           "plugins",
                           path, bits, hal_elf_class_bits(HAL_ELF_HOST_CLASS));
  }
  if (have > EI_DATA && ehdr.e_ident[EI_DATA] != HAL_ELF_HOST_DATA) {
    return hal_make_status(
        HAL_STATUS_INCOMPATIBLE, "%s is a %s ELF file; this host is %s", path,
        ehdr.e_ident[EI_DATA] == ELFDATA2MSB   ? "big-endian"
        : ehdr.e_ident[EI_DATA] == ELFDATA2LSB ? "little-endian"
                                               : "unknown-endian",
        HAL_ELF_HOST_DATA == ELFDATA2LSB ? "little-endian" : "big-endian");
  }
  if (have < sizeof(ehdr)) {
    return hal_make_status(HAL_STATUS_DATA_LOSS,
                           "%s: truncated ELF file: the ELF header needs %zu "
                           "bytes but the file has %zu bytes",
                           path, sizeof(ehdr), have);
  }
  if (ehdr.e_ident[EI_VERSION] != EV_CURRENT || ehdr.e_version != EV_CURRENT) {
    return hal_make_status(HAL_STATUS_INCOMPATIBLE,
                           "%s: unknown ELF version %u (only %u exists)", path,
                           ehdr.e_ident[EI_VERSION] != EV_CURRENT
                               ? (unsigned)ehdr.e_ident[EI_VERSION]
                               : (unsigned)ehdr.e_version,
                           (unsigned)EV_CURRENT);
  }
#ifdef HAL_ELF_HOST_MACHINE
  if (ehdr.e_machine != HAL_ELF_HOST_MACHINE) {
    return hal_make_status(HAL_STATUS_INCOMPATIBLE,
                           "%s is built for ELF machine %u; this host is "
                           "machine %u",
                           path, (unsigned)ehdr.e_machine,
                           (unsigned)HAL_ELF_HOST_MACHINE);
  }
#endif
  if (ehdr.e_type != ET_DYN) {
    return hal_make_status(HAL_STATUS_INCOMPATIBLE,
                           "%s is %s, not a shared object (ET_DYN)", path,
                           hal_elf_type_name(ehdr.e_type));
  }

  // Program headers. ld.so reads e_phnum as it is (no PN_XNUM extension),
  // so this does too.
  if (ehdr.e_phnum > 0 && ehdr.e_phentsize != sizeof(ElfW(Phdr))) {
    return hal_make_status(HAL_STATUS_DATA_LOSS,
                           "%s: corrupt ELF header: program header entries "
                           "of %u bytes; this ELF class has %zu",
                           path, (unsigned)ehdr.e_phentsize,
                           sizeof(ElfW(Phdr)));
  }
  HAL_RETURN_IF_ERROR(hal_elf_check_range(path, "the program header table",
                                          ehdr.e_phoff, ehdr.e_phnum,
                                          sizeof(ElfW(Phdr)), file_size));
  for (unsigned i = 0; i < ehdr.e_phnum; ++i) {
    ElfW(Phdr) phdr;
    error = hal_elf_read(fd, &phdr, sizeof(phdr),
                         ehdr.e_phoff + (uint64_t)i * sizeof(phdr));
    if (error) {
      return hal_make_status(HAL_STATUS_UNAVAILABLE,
                             "%s: reading program header %u failed: %s", path,
                             i, error);
    }
    // Every segment with file bytes, not only PT_LOAD: ld.so reads the
    // others (dynamic section, notes) from the same file.
    if (phdr.p_filesz == 0)
      continue;
    char what[32];
    snprintf(what, sizeof(what), "segment %u", i);
    HAL_RETURN_IF_ERROR(hal_elf_check_range(path, what, phdr.p_offset, 1,
                                            phdr.p_filesz, file_size));
  }

  // Section headers: ld.so does not need them, but a table past the end is
  // the same damage and says the file is not what the linker wrote.
  if (ehdr.e_shoff != 0) {
    if (ehdr.e_shentsize != sizeof(ElfW(Shdr))) {
      return hal_make_status(HAL_STATUS_DATA_LOSS,
                             "%s: corrupt ELF header: section header entries "
                             "of %u bytes; this ELF class has %zu",
                             path, (unsigned)ehdr.e_shentsize,
                             sizeof(ElfW(Shdr)));
    }
    uint64_t section_count = ehdr.e_shnum;
    if (section_count == 0) {
      // Extended numbering: section 0's sh_size holds the count.
      HAL_RETURN_IF_ERROR(hal_elf_check_range(path, "the section header table",
                                              ehdr.e_shoff, 1,
                                              sizeof(ElfW(Shdr)), file_size));
      ElfW(Shdr) shdr;
      error = hal_elf_read(fd, &shdr, sizeof(shdr), ehdr.e_shoff);
      if (error) {
        return hal_make_status(HAL_STATUS_UNAVAILABLE,
                               "%s: reading section header 0 failed: %s", path,
                               error);
      }
      section_count = shdr.sh_size;
    }
    HAL_RETURN_IF_ERROR(hal_elf_check_range(path, "the section header table",
                                            ehdr.e_shoff, section_count,
                                            sizeof(ElfW(Shdr)), file_size));
  }
  return HAL_OK;
}

// Why |path| must not be passed to dlopen, from its own headers; OK when
// dlopen may try it (including files it refuses safely by itself: ones it
// cannot open, ones without the ELF magic).
static hal_status_t hal_elf_check_file(const char* path) {
  // O_NONBLOCK: a FIFO named like a plugin must not block the open.
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0)
    return HAL_OK;  // dlopen cannot open it either and says why
  struct stat st;
  hal_status_t status = HAL_OK;
  if (fstat(fd, &st) != 0) {
    status = hal_make_status(HAL_STATUS_UNAVAILABLE, "%s: fstat failed: %s",
                             path, strerror(errno));
  } else if (!S_ISREG(st.st_mode)) {
    status = hal_make_status(HAL_STATUS_UNAVAILABLE, "%s is not a regular file",
                             path);
  } else {
    status = hal_elf_check_fd(path, fd, (uint64_t)st.st_size);
  }
  close(fd);
  return status;
}

//===----------------------------------------------------------------------===//
// Loading one plugin
//===----------------------------------------------------------------------===//

// Asks the plugin at |entry->record.path| who it is. On failure the reason
// goes to record.load_status and the library is closed again.
static void hal_registry_load_entry(hal_plugin_entry_t* entry) {
  hal_plugin_record_t* record = &entry->record;
  hal_status_t check = hal_elf_check_file(record->path);
  if (check != HAL_OK) {
    record->load_status = check;
    return;
  }
  dlerror();
  void* library = dlopen(record->path, RTLD_NOW | RTLD_LOCAL);
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
    dlclose(library);
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
    dlclose(library);
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
    return HAL_OK;  // the first one wins; this one is never loaded
  }
  hal_registry_load_entry(entry);
  return HAL_OK;
}

static hal_status_t hal_registry_scan_directory(hal_driver_registry_t* registry,
                                                const char* directory) {
  DIR* dir = opendir(directory);
  if (!dir)
    return HAL_OK;  // a missing directory is not an error
  hal_allocator_t allocator = registry->host_allocator;
  char** files = NULL;
  size_t file_count = 0;
  hal_status_t status = HAL_OK;
  struct dirent* dirent;
  while (status == HAL_OK && (dirent = readdir(dir)) != NULL) {
    size_t begin, length;
    if (!hal_registry_parse_file_name(dirent->d_name, &begin, &length)) {
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

  const char* search_path =
      options->search_path ? options->search_path : getenv("HAL_DRIVER_PATH");
  hal_status_t status = hal_registry_add_path(registry, search_path);
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
      dlclose(entry->library);
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
  if (!entry)
    return hal_registry_not_found(registry, name);
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
  library->handle = dlopen(entry->record.path, RTLD_NOW | RTLD_LOCAL);
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
