// Copyright 2026 The HAL Authors.
//
// Module images: what each format is, checked against the bytes given,
// before the vendor's load call (which takes no size) reads them.

#include <string.h>

#include "adapter.h"

// A 64-bit ELF image of |size| bytes at |elf| (|what| names the format in
// messages): every table and segment its headers name lies in those bytes.
static hal_status_t gpu_adapter_check_elf(const uint8_t* elf, size_t size,
                                          const char* what) {
  static const uint8_t kElf[4] = {0x7f, 'E', 'L', 'F'};
  if (size < 64 || memcmp(elf, kElf, 4) != 0 || elf[4] != 2) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "not a %s: no 64-bit ELF image", what);
  }
  // The section header table, the program header table and each segment's
  // file bytes.
  uint64_t shoff = 0, phoff = 0;
  uint16_t shentsize = 0, shnum = 0, phentsize = 0, phnum = 0;
  memcpy(&phoff, elf + 32, 8);
  memcpy(&shoff, elf + 40, 8);
  memcpy(&phentsize, elf + 54, 2);
  memcpy(&phnum, elf + 56, 2);
  memcpy(&shentsize, elf + 58, 2);
  memcpy(&shnum, elf + 60, 2);
  // The first table or segment found outside the bytes given: its offset
  // and length as the headers say them. Compared, never added: the sum of
  // a corrupt offset and length may wrap to anything.
  const char* bad = NULL;
  uint64_t bad_offset = 0, bad_length = 0;
  if (shoff > size || (uint64_t)shentsize * shnum > size - shoff) {
    bad = "section header table";
    bad_offset = shoff;
    bad_length = (uint64_t)shentsize * shnum;
  } else if (phnum && (phentsize < 56 || phoff > size ||
                       (uint64_t)phentsize * phnum > size - phoff)) {
    bad = "program header table";
    bad_offset = phoff;
    bad_length = (uint64_t)phentsize * phnum;
  }
  for (uint16_t i = 0; !bad && i < phnum; ++i) {
    const uint8_t* ph = elf + phoff + (uint64_t)i * phentsize;
    uint64_t segment_offset = 0, segment_size = 0;
    memcpy(&segment_offset, ph + 8, 8);
    memcpy(&segment_size, ph + 32, 8);
    if (segment_offset > size || segment_size > size - segment_offset) {
      bad = "segment";
      bad_offset = segment_offset;
      bad_length = segment_size;
    }
  }
  if (bad) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "truncated or corrupt %s: its ELF headers place a "
                           "%s of %llu bytes at offset %llu, past the %zu "
                           "bytes given",
                           what, bad, (unsigned long long)bad_length,
                           (unsigned long long)bad_offset, size);
  }
  return HAL_OK;
}

// The vendor load calls take no size: they read what the image's own
// headers say. Check those headers against the bytes we were given so a
// truncated image is an error here, not a read past the caller's buffer.
static hal_status_t gpu_adapter_check_image(const char* format,
                                            const uint8_t* data, size_t size) {
  if (strcmp(format, "vgpu-module") == 0) {
    size_t offset = 0;
    size_t elf_size = size;
    if (size >= 24 && memcmp(data, "VGPUMOD1", 8) == 0) {
      uint32_t header_size = 0;
      uint64_t image_size = 0;
      memcpy(&header_size, data + 12, 4);
      memcpy(&image_size, data + 16, 8);
      if (header_size < 24 || header_size > size ||
          image_size > size - header_size) {
        return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                               "vgpu module header announces %llu bytes "
                               "after a %u-byte header; %zu bytes were given",
                               (unsigned long long)image_size, header_size,
                               size);
      }
      // The runtime takes the header's word for the image's length: the
      // ELF's tables must lie in those bytes, whatever follows them.
      offset = header_size;
      elf_size = (size_t)image_size;
    }
    return gpu_adapter_check_elf(data + offset, elf_size, "vgpu module");
  }
  if (strcmp(format, "cuda-cubin") == 0)
    return gpu_adapter_check_elf(data, size, "cubin");
  if (strcmp(format, "hip-code-object") == 0 && size >= 4 &&
      memcmp(data,
             "\x7f"
             "ELF",
             4) == 0) {
    // A code object; an offload bundle (clang's) is left to the runtime.
    return gpu_adapter_check_elf(data, size, "code object");
  }
  if (strcmp(format, "cuda-fatbin") == 0 && size < 16) {
    return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                           "not a fatbinary: %zu bytes, fewer than its header",
                           size);
  }
  if (strcmp(format, "cuda-fatbin") == 0) {
    // A fatbinary's header: magic, version (2 bytes), header size (2),
    // then the bytes that follow it (8).
    uint32_t magic = 0;
    uint16_t header_size = 0;
    uint64_t fat_size = 0;
    memcpy(&magic, data, 4);
    memcpy(&header_size, data + 6, 2);
    memcpy(&fat_size, data + 8, 8);
    if (magic == 0xBA55ED50u && (header_size < 16 || header_size > size ||
                                 fat_size > size - header_size)) {
      return hal_make_status(HAL_STATUS_INVALID_ARGUMENT,
                             "truncated or corrupt fatbinary: its header "
                             "announces %llu bytes after a %u-byte header; "
                             "%zu were given",
                             (unsigned long long)fat_size, header_size, size);
    }
  }
  return HAL_OK;
}

hal_status_t gpu_adapter_module_load(gpu_adapter_t* adapter, const char* format,
                                     const void* data, size_t size,
                                     hal_allocator_t allocator,
                                     gpu_module_t* out_module) {
  *out_module = NULL;
  HAL_RETURN_IF_ERROR(gpu_adapter_check_image(format, data, size));
  // PTX is text the driver reads up to its NUL: give it one.
  const void* image = data;
  char* ptx = NULL;
  if (strcmp(format, "cuda-ptx") == 0) {
    HAL_RETURN_IF_ERROR(
        hal_allocator_malloc(allocator, size + 1, (void**)&ptx));
    memcpy(ptx, data, size);
    image = ptx;
  }
  hal_status_t status =
      adapter->ops->module_load_data(adapter, image, out_module);
  hal_allocator_free(allocator, ptx);
  return status;
}
