// Modules: host shared objects loaded from memory, and their kernels.
//
// See vgpu/vgpu_module.h for the image format. The image is copied into an
// anonymous memfd and dlopen()ed through /proc/self/fd (a temporary file when
// memfd is unavailable), so loading never needs a path on disk and the same
// image can be loaded twice as two independent modules.
//
// A module stays mapped while anything references it: its handle, its
// functions, and launches that hold those functions. Unloading a module that
// queued kernels still use is misuse in strict mode.
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"

struct vgpu_module {
  vgpu_object base;
  int device;
  void* dl;
  atomic_int inflight;    // queued kernel operations using it
  pthread_mutex_t mu;     // guards the function cache
  vgpu_function** funcs;  // borrowed: valid while their handles are live
  size_t func_count, func_cap;
};

void vgpu_module_inflight_add(vgpu_module* module, int delta) {
  atomic_fetch_add(&module->inflight, delta);
}

static void module_free(vgpu_object* obj) {
  vgpu_module* m = (vgpu_module*)obj;
  if (m->dl != NULL)
    dlclose(m->dl);
  free(m->funcs);
  pthread_mutex_destroy(&m->mu);
  free(m);
}

static void function_free(vgpu_object* obj) {
  vgpu_function* f = (vgpu_function*)obj;
  vgpu_object_release(&f->module->base);
  free(f);
}

// Size of a raw ELF image from its headers; 0 if not a 64-bit ELF.
static size_t elf_image_size(const uint8_t* p) {
  const Elf64_Ehdr* eh = (const Elf64_Ehdr*)(const void*)p;
  if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
      eh->e_ident[EI_CLASS] != ELFCLASS64)
    return 0;
  size_t size = (size_t)eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
  for (unsigned i = 0; i < eh->e_phnum; ++i) {
    const Elf64_Phdr* ph =
        (const Elf64_Phdr*)(const void*)(p + eh->e_phoff +
                                         (size_t)i * eh->e_phentsize);
    size_t end = (size_t)ph->p_offset + (size_t)ph->p_filesz;
    if (end > size)
      size = end;
  }
  return size < sizeof(*eh) ? sizeof(*eh) : size;
}

// Whether the ELF image at |p| has its headers, its header tables and its
// segments' bytes within |n| bytes (read no further than that).
static bool elf_image_fits(const uint8_t* p, size_t n) {
  if (n < sizeof(Elf64_Ehdr))
    return false;
  Elf64_Ehdr eh;
  memcpy(&eh, p, sizeof(eh));
  if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
      eh.e_ident[EI_CLASS] != ELFCLASS64)
    return false;
  uint64_t sh_bytes = (uint64_t)eh.e_shnum * eh.e_shentsize;
  uint64_t ph_bytes = (uint64_t)eh.e_phnum * eh.e_phentsize;
  if (eh.e_shoff > n || sh_bytes > n - eh.e_shoff || eh.e_phoff > n ||
      ph_bytes > n - eh.e_phoff ||
      (eh.e_phnum && eh.e_phentsize < sizeof(Elf64_Phdr)))
    return false;
  for (unsigned i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph;
    memcpy(&ph, p + eh.e_phoff + (size_t)i * eh.e_phentsize, sizeof(ph));
    if (ph.p_offset > n || ph.p_filesz > n - ph.p_offset)
      return false;
  }
  return true;
}

static bool write_all(int fd, const uint8_t* p, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w <= 0)
      return false;
    p += w;
    n -= (size_t)w;
  }
  return true;
}

// dlopen()s |n| bytes of shared object at |p|.
static void* open_image(const uint8_t* p, size_t n) {
  char path[64];
  int fd = memfd_create("vgpu-module", MFD_CLOEXEC);
  bool temp = false;
  char tmpl[] = "/tmp/vgpu-module-XXXXXX";
  if (fd < 0) {
    fd = mkstemp(tmpl);
    temp = true;
    if (fd < 0)
      return NULL;
  }
  void* dl = NULL;
  if (write_all(fd, p, n)) {
    if (temp) {
      dl = dlopen(tmpl, RTLD_NOW | RTLD_LOCAL);
    } else {
      snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
      dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    }
    if (dl == NULL)
      vgpu_log("module: dlopen failed: %s", dlerror());
  }
  close(fd);
  if (temp)
    unlink(tmpl);
  return dl;
}

vgpu_status vgpu_module_load_image(int ordinal, const void* image,
                                   uint64_t* out) {
  vgpu_status st = vgpu_device_check(ordinal);
  if (st != VGPU_OK)
    return st;
  if (image == NULL)
    return VGPU_ERR_INVALID_VALUE;
  const uint8_t* p = image;
  size_t n = 0;
  vgpu_module_header h;
  memcpy(&h, p, sizeof(h.magic));
  if (memcmp(h.magic, VGPU_MODULE_MAGIC, sizeof(h.magic)) == 0) {
    memcpy(&h, p, sizeof(h));
    if (h.version != VGPU_MODULE_VERSION || h.header_size < sizeof(h)) {
      return vgpu_misuse(VGPU_ERR_INVALID_IMAGE,
                         "module image version %u (header %u bytes) is not "
                         "supported (want version %u)",
                         h.version, h.header_size, VGPU_MODULE_VERSION);
    }
    p += h.header_size;
    n = (size_t)h.image_size;
    // Only |n| bytes are mapped: an ELF whose headers name more (or that
    // is no ELF) would fault in dlopen, where a driver refuses the image.
    if (!elf_image_fits(p, n)) {
      return vgpu_misuse(VGPU_ERR_INVALID_IMAGE,
                         "module image header announces %zu bytes, fewer "
                         "than its ELF's headers name (or no 64-bit ELF)",
                         n);
    }
  } else if (memcmp(p, ELFMAG, SELFMAG) == 0) {
    n = elf_image_size(p);
  }
  if (n == 0) {
    return vgpu_misuse(VGPU_ERR_INVALID_IMAGE,
                       "not a vgpu module image (no " VGPU_MODULE_MAGIC
                       " header, not a 64-bit ELF shared object)");
  }
  vgpu_module* m = calloc(1, sizeof(*m));
  if (m == NULL)
    return VGPU_ERR_OUT_OF_MEMORY;
  vgpu_object_init(&m->base, VGPU_KIND_MODULE, module_free);
  m->device = ordinal;
  atomic_init(&m->inflight, 0);
  pthread_mutex_init(&m->mu, NULL);
  m->dl = open_image(p, n);
  if (m->dl == NULL) {
    vgpu_object_release(&m->base);
    return vgpu_misuse(VGPU_ERR_INVALID_IMAGE,
                       "module image of %zu bytes could not be loaded", n);
  }
  st = vgpu_handle_register(&m->base);
  if (st != VGPU_OK) {
    vgpu_object_release(&m->base);
    return st;
  }
  *out = m->base.handle;
  return VGPU_OK;
}

vgpu_status vgpu_module_load_file(int ordinal, const char* path,
                                  uint64_t* out) {
  if (path == NULL)
    return VGPU_ERR_INVALID_VALUE;
  FILE* f = fopen(path, "rb");
  if (f == NULL)
    return VGPU_ERR_NOT_FOUND;
  vgpu_status st = VGPU_ERR_INVALID_IMAGE;
  uint8_t* buf = NULL;
  long size = 0;
  if (fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) <= 0 ||
      fseek(f, 0, SEEK_SET) != 0)
    goto out_close;
  // Zero padding so header probes never read past the end.
  buf = calloc(1, (size_t)size + sizeof(vgpu_module_header));
  if (buf == NULL) {
    st = VGPU_ERR_OUT_OF_MEMORY;
    goto out_close;
  }
  if (fread(buf, 1, (size_t)size, f) != (size_t)size)
    goto out_free;
  st = vgpu_module_load_image(ordinal, buf, out);
out_free:
  free(buf);
out_close:
  fclose(f);
  return st;
}

vgpu_status vgpu_module_unload(uint64_t handle) {
  vgpu_object* obj = NULL;
  vgpu_status st = vgpu_handle_lookup(handle, VGPU_KIND_MODULE, &obj);
  if (st != VGPU_OK)
    return st;
  vgpu_module* m = (vgpu_module*)obj;
  int inflight = atomic_load(&m->inflight);
  if (inflight > 0 && vgpu_cfg.strict) {
    vgpu_object_release(obj);
    return vgpu_misuse(VGPU_ERR_IN_USE,
                       "unloading module 0x%" PRIx64
                       " while %d queued "
                       "kernel launch(es) use it",
                       handle, inflight);
  }
  pthread_mutex_lock(&m->mu);
  vgpu_function** funcs = m->funcs;
  size_t count = m->func_count;
  m->funcs = NULL;
  m->func_count = m->func_cap = 0;
  pthread_mutex_unlock(&m->mu);
  for (size_t i = 0; i < count; ++i)
    vgpu_handle_unregister(&funcs[i]->base);
  free(funcs);
  vgpu_handle_unregister(obj);
  vgpu_object_release(obj);
  return VGPU_OK;
}

static vgpu_status check_desc(const vgpu_kernel_desc* d, const char* name) {
  if (d->abi_version != VGPU_KERNEL_ABI_VERSION || d->fn == NULL ||
      d->arg_count > VGPU_KERNEL_MAX_ARGS ||
      (d->arg_count > 0 && d->arg_sizes == NULL) ||
      d->flags > VGPU_KERNEL_PER_BLOCK) {
    return vgpu_misuse(VGPU_ERR_INVALID_IMAGE,
                       "kernel descriptor " VGPU_KERNEL_SYMBOL_PREFIX
                       "%s is malformed (abi %u, %u args)",
                       name, d->abi_version, d->arg_count);
  }
  for (uint32_t i = 0; i < d->arg_count; ++i) {
    if (d->arg_sizes[i] == 0 || d->arg_sizes[i] > 4096)
      return VGPU_ERR_INVALID_IMAGE;
  }
  return VGPU_OK;
}

vgpu_status vgpu_module_function(uint64_t handle, const char* name,
                                 uint64_t* out) {
  if (name == NULL || out == NULL)
    return VGPU_ERR_INVALID_VALUE;
  vgpu_object* obj = NULL;
  vgpu_status st = vgpu_handle_lookup(handle, VGPU_KIND_MODULE, &obj);
  if (st != VGPU_OK)
    return st;
  vgpu_module* m = (vgpu_module*)obj;
  char sym[256];
  if (snprintf(sym, sizeof(sym), VGPU_KERNEL_SYMBOL_PREFIX "%s", name) >=
      (int)sizeof(sym)) {
    st = VGPU_ERR_INVALID_VALUE;
    goto out;
  }
  pthread_mutex_lock(&m->mu);
  for (size_t i = 0; i < m->func_count; ++i) {
    if (strcmp(m->funcs[i]->desc->name, name) == 0) {
      *out = m->funcs[i]->base.handle;
      pthread_mutex_unlock(&m->mu);
      goto out;
    }
  }
  const vgpu_kernel_desc* d = dlsym(m->dl, sym);
  if (d == NULL) {
    st = VGPU_ERR_NOT_FOUND;
    goto out_unlock;
  }
  st = check_desc(d, name);
  if (st != VGPU_OK)
    goto out_unlock;
  if (m->func_count == m->func_cap) {
    size_t cap = m->func_cap ? m->func_cap * 2 : 8;
    vgpu_function** funcs = realloc(m->funcs, cap * sizeof(*funcs));
    if (funcs == NULL) {
      st = VGPU_ERR_OUT_OF_MEMORY;
      goto out_unlock;
    }
    m->funcs = funcs;
    m->func_cap = cap;
  }
  vgpu_function* f = calloc(1, sizeof(*f));
  if (f == NULL) {
    st = VGPU_ERR_OUT_OF_MEMORY;
    goto out_unlock;
  }
  vgpu_object_init(&f->base, VGPU_KIND_FUNCTION, function_free);
  vgpu_object_retain(&m->base);
  f->module = m;
  f->desc = d;
  st = vgpu_handle_register(&f->base);
  if (st != VGPU_OK) {
    vgpu_object_release(&f->base);
    goto out_unlock;
  }
  m->funcs[m->func_count++] = f;
  *out = f->base.handle;
out_unlock:
  pthread_mutex_unlock(&m->mu);
out:
  vgpu_object_release(obj);
  return st;
}
