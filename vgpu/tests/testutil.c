// Helpers shared by the vgpu test programs.
#include "testutil.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

// clang-format off
#include <stdarg.h>
#include <setjmp.h>
#include <cmocka.h>
// clang-format on

#include "vgpu/vgpu_module.h"

vapi api;

static uint64_t seed;

uint64_t testutil_seed(void) {
  return seed;
}

unsigned testutil_stress_scale(void) {
  const char* s = getenv("HAL_STRESS_ITERATIONS");
  if (s == NULL || *s == '\0')
    return 1;
  char* end = NULL;
  unsigned long v = strtoul(s, &end, 10);
  if (*end != '\0' || v == 0 || v > 1000000) {
    fprintf(stderr, "ignoring HAL_STRESS_ITERATIONS=%s\n", s);
    return 1;
  }
  return (unsigned)v;
}

const char* testutil_setup(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s cuda|hip LIBRARY [TEST]\n", argv[0]);
    exit(2);
  }
  const char* s = getenv("VGPU_SEED");
  if (s == NULL || *s == '\0')
    s = getenv("HAL_TEST_SEED");
  if (s != NULL && *s != '\0') {
    seed = strtoull(s, NULL, 0);
  } else {
    seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 16);
  }
  fprintf(stderr, "test seed: %llu (set VGPU_SEED or HAL_TEST_SEED)\n",
          (unsigned long long)seed);
  bool cuda = strcmp(argv[1], "cuda") == 0;
  bool ok = cuda ? vapi_open_cuda != NULL && vapi_open_cuda(&api, argv[2])
                 : vapi_open_hip != NULL && vapi_open_hip(&api, argv[2]);
  if (!ok) {
    fprintf(stderr, "cannot open %s facade %s\n", argv[1], argv[2]);
    exit(1);
  }
  return argc > 3 ? argv[3] : NULL;
}

int testutil_run(const char* group, const struct CMUnitTest* tests,
                 size_t count, const char* only) {
  if (only != NULL) {
    size_t i = 0;
    while (i < count && strcmp(tests[i].name, only) != 0)
      ++i;
    if (i == count) {
      fprintf(stderr, "no case named %s in %s\n", only, group);
      testutil_teardown();
      return 2;
    }
    cmocka_set_test_filter(only);
  }
  int failed = _cmocka_run_group_tests(group, tests, count, NULL, NULL);
  testutil_teardown();
  return failed;
}

void testutil_teardown(void) {
  if (strcmp(api.name, "cuda") == 0 && vapi_cuda_release != NULL)
    vapi_cuda_release();
  dlclose(api.lib);
}

uint64_t testutil_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

void testutil_sleep_ms(unsigned ms) {
  struct timespec ts = {(time_t)(ms / 1000u), (long)(ms % 1000u) * 1000000L};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

void gate_init(gate* g) {
  pthread_mutex_init(&g->mu, NULL);
  pthread_cond_init(&g->cv, NULL);
  g->open = false;
  atomic_init(&g->entered, 0);
}

void gate_open(gate* g) {
  pthread_mutex_lock(&g->mu);
  g->open = true;
  pthread_cond_broadcast(&g->cv);
  pthread_mutex_unlock(&g->mu);
}

void gate_destroy(gate* g) {
  pthread_mutex_destroy(&g->mu);
  pthread_cond_destroy(&g->cv);
}

void gate_host_fn(void* arg) {
  gate* g = arg;
  atomic_fetch_add(&g->entered, 1);
  struct timespec deadline;
  clock_gettime(CLOCK_REALTIME, &deadline);
  deadline.tv_sec += 10;
  pthread_mutex_lock(&g->mu);
  while (!g->open) {
    if (pthread_cond_timedwait(&g->cv, &g->mu, &deadline) == ETIMEDOUT)
      break;
  }
  pthread_mutex_unlock(&g->mu);
}

void* testutil_module_image(void) {
  const char* path = getenv("VGPU_TEST_KERNELS");
  if (path == NULL)
    return NULL;
  FILE* f = fopen(path, "rb");
  if (f == NULL)
    return NULL;
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  vgpu_module_header h;
  memset(&h, 0, sizeof(h));
  memcpy(h.magic, VGPU_MODULE_MAGIC, sizeof(h.magic));
  h.version = VGPU_MODULE_VERSION;
  h.header_size = sizeof(h);
  h.image_size = (uint64_t)size;
  uint8_t* image = malloc(sizeof(h) + (size_t)size);
  memcpy(image, &h, sizeof(h));
  if (fread(image + sizeof(h), 1, (size_t)size, f) != (size_t)size) {
    free(image);
    image = NULL;
  }
  fclose(f);
  return image;
}

static int saved_stderr = -1;
static FILE* capture_file;

void capture_begin(void) {
  fflush(stderr);
  capture_file = tmpfile();
  saved_stderr = dup(2);
  dup2(fileno(capture_file), 2);
}

char* capture_end(void) {
  fflush(stderr);
  dup2(saved_stderr, 2);
  close(saved_stderr);
  long size = ftell(capture_file);
  if (size < 0)
    size = 0;
  char* text = calloc(1, (size_t)size + 1);
  rewind(capture_file);
  size_t n = fread(text, 1, (size_t)size, capture_file);
  text[n] = '\0';
  fclose(capture_file);
  fputs(text, stderr);  // keep it in the test log
  return text;
}
