// Copyright 2026 The HAL Authors.
//
// Checking a shared library file against its own ELF headers before
// dlopen, and the one lock of every load (see hal/library.h).

#include "hal/library.h"

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

HAL_API hal_status_t hal_library_check(const char* path) {
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
// Loading under one lock
//===----------------------------------------------------------------------===//

// Only under ThreadSanitizer (hal/library.h says why). Recursive: a
// library's constructor or destructor, run inside dlopen or dlclose, may
// itself load or unload one through these functions.
#if defined(HAL_TSAN)
static pthread_once_t hal_library_lock_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t hal_library_mutex;

static void hal_library_lock_initialize(void) {
  pthread_mutexattr_t attr;
  pthread_mutexattr_init(&attr);
  pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
  pthread_mutex_init(&hal_library_mutex, &attr);
  pthread_mutexattr_destroy(&attr);
}

static void hal_library_lock(void) {
  pthread_once(&hal_library_lock_once, hal_library_lock_initialize);
  pthread_mutex_lock(&hal_library_mutex);
}

static void hal_library_unlock(void) {
  pthread_mutex_unlock(&hal_library_mutex);
}
#else
static void hal_library_lock(void) {}
static void hal_library_unlock(void) {}
#endif

HAL_API void* hal_library_open(const char* path, int flags) {
  hal_library_lock();
  void* handle = dlopen(path, flags);
  hal_library_unlock();
  return handle;
}

HAL_API int hal_library_close(void* handle) {
  if (!handle)
    return 0;
  hal_library_lock();
  int result = dlclose(handle);
  hal_library_unlock();
  return result;
}

HAL_API hal_status_t hal_library_path(void* handle, hal_allocator_t allocator,
                                      char** out_path) {
  if (!out_path) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT, "out_path is NULL");
  }
  *out_path = NULL;
  char resolved[PATH_MAX];
  const char* path = "(unknown path)";
  // The link map is the loader's: copied out before the lock is let go
  // (a dlclose of the last reference may free it after).
  hal_library_lock();
  struct link_map* map = NULL;
  if (handle && dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map &&
      map->l_name && map->l_name[0]) {
    path = realpath(map->l_name, resolved) ? resolved : map->l_name;
  }
  hal_status_t status = hal_allocator_strdup(allocator, path, out_path);
  hal_library_unlock();
  return status;
}
