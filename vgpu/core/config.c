// Environment knobs, the seed, deterministic hashing and jitter.
//
// Every knob is read once, when the library is loaded (see docs/vgpu.md for
// the list). The seed makes every random decision of the runtime a pure
// function of (seed, what, which): jitter of operation k of stream s, the
// n-th call of a probabilistic fault, the node order of graph launch n.
// Runs with the same seed therefore make the same decisions, whatever the
// thread interleaving.
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

vgpu_config vgpu_cfg;

static bool env_uint(const char* name, unsigned long long min,
                     unsigned long long max, unsigned long long* out) {
  const char* s = getenv(name);
  if (s == NULL || *s == '\0')
    return false;
  char* end = NULL;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 0);
  if (errno != 0 || end == s || *end != '\0' || v < min || v > max) {
    vgpu_log("ignoring %s=%s (expected an integer in [%llu, %llu])", name, s,
             min, max);
    return false;
  }
  *out = v;
  return true;
}

static bool env_bool(const char* name, bool def) {
  const char* s = getenv(name);
  if (s == NULL || *s == '\0')
    return def;
  if (strcmp(s, "0") == 0 || strcmp(s, "false") == 0 || strcmp(s, "off") == 0)
    return false;
  if (strcmp(s, "1") == 0 || strcmp(s, "true") == 0 || strcmp(s, "on") == 0)
    return true;
  vgpu_log("ignoring %s=%s (expected 0 or 1)", name, s);
  return def;
}

// Parses one VGPU_FAULTS rule "call:trigger[:field...]" into |rule|.
static bool parse_fault_rule(char* text, const vgpu_facade* facade,
                             vgpu_fault_rule* rule) {
  memset(rule, 0, sizeof(*rule));
  rule->code = facade->unknown_code;
  rule->lost_device = -1;
  char* save = NULL;
  char* call = strtok_r(text, ":", &save);
  if (call == NULL || strlen(call) >= sizeof(rule->call))
    return false;
  strcpy(rule->call, call);
  bool have_trigger = false;
  for (char* f = strtok_r(NULL, ":", &save); f != NULL;
       f = strtok_r(NULL, ":", &save)) {
    char* value = strchr(f, '=');
    if (value != NULL)
      *value++ = '\0';
    char* end = NULL;
    if (strcmp(f, "always") == 0 && value == NULL) {
      rule->trigger = VGPU_FAULT_ALWAYS;
      have_trigger = true;
    } else if (strcmp(f, "nth") == 0 && value != NULL) {
      rule->trigger = VGPU_FAULT_NTH;
      rule->nth = strtoull(value, &end, 10);
      if (*end != '\0' || rule->nth == 0)
        return false;
      if (rule->times == 0)
        rule->times = 1;
      have_trigger = true;
    } else if (strcmp(f, "prob") == 0 && value != NULL) {
      rule->trigger = VGPU_FAULT_PROB;
      rule->prob = strtod(value, &end);
      if (*end != '\0' || rule->prob < 0.0 || rule->prob > 1.0)
        return false;
      have_trigger = true;
    } else if (strcmp(f, "times") == 0 && value != NULL) {
      rule->times = strtoull(value, &end, 10);
      if (*end != '\0')
        return false;
    } else if (strcmp(f, "error") == 0 && value != NULL) {
      if (!facade->code_from_name(value, &rule->code))
        return false;
    } else if (strcmp(f, "lost") == 0) {
      rule->lost = true;
      rule->code = facade->lost_code;
      if (value != NULL) {
        long d = strtol(value, &end, 10);
        if (*end != '\0' || d < 0 || d >= VGPU_MAX_DEVICES)
          return false;
        rule->lost_device = (int)d;
      }
    } else {
      return false;
    }
  }
  return have_trigger;
}

static void load_faults(const vgpu_facade* facade) {
  const char* env = getenv("VGPU_FAULTS");
  if (env == NULL || *env == '\0')
    return;
  char* copy = strdup(env);
  if (copy == NULL)
    return;
  char* save = NULL;
  for (char* r = strtok_r(copy, ";,", &save); r != NULL;
       r = strtok_r(NULL, ";,", &save)) {
    if (vgpu_cfg.fault_count == VGPU_MAX_FAULT_RULES) {
      vgpu_log("VGPU_FAULTS: more than %d rules, rest ignored",
               VGPU_MAX_FAULT_RULES);
      break;
    }
    char text[256];
    snprintf(text, sizeof(text), "%s", r);
    vgpu_fault_rule* rule = &vgpu_cfg.faults[vgpu_cfg.fault_count];
    if (!parse_fault_rule(text, facade, rule)) {
      vgpu_log(
          "VGPU_FAULTS: ignoring rule '%s' (expected "
          "call:nth=N|prob=P|always[:times=K][:error=CODE|:lost[=DEV]])",
          r);
      continue;
    }
    vgpu_cfg.fault_count++;
  }
  free(copy);
}

void vgpu_config_load(const vgpu_facade* facade) {
  memset(&vgpu_cfg, 0, sizeof(vgpu_cfg));
  unsigned long long v = 0;
  vgpu_cfg.devices = 2;
  if (env_uint("VGPU_DEVICES", 0, VGPU_MAX_DEVICES, &v))
    vgpu_cfg.devices = (int)v;
  vgpu_cfg.device_memory = (size_t)2048 << 20;
  if (env_uint("VGPU_DEVICE_MEMORY_MB", 1, 1u << 20, &v))
    vgpu_cfg.device_memory = (size_t)v << 20;
  vgpu_cfg.strict = env_bool("VGPU_STRICT", true);
  vgpu_cfg.abort_on_misuse = env_bool("VGPU_ABORT_ON_MISUSE", false);

  vgpu_cfg.stream_threads = 4;
  if (env_uint("VGPU_STREAM_THREADS", 1, 256, &v))
    vgpu_cfg.stream_threads = (int)v;
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  vgpu_cfg.kernel_threads = cpus > 1 ? (int)(cpus < 8 ? cpus : 8) - 1 : 0;
  if (env_uint("VGPU_KERNEL_THREADS", 0, 256, &v))
    vgpu_cfg.kernel_threads = (int)v;
  if (env_uint("VGPU_JITTER_US", 0, 1000000, &v))
    vgpu_cfg.jitter_us = (unsigned)v;
  if (env_uint("VGPU_MAX_WAIT_MS", 0, 86400000, &v))
    vgpu_cfg.max_wait_ms = (unsigned)v;
  vgpu_cfg.fail_exit_code = 0;
  if (env_uint("VGPU_FAIL_EXIT_CODE", 0, 255, &v))
    vgpu_cfg.fail_exit_code = (int)v;
  const char* hide = getenv("VGPU_HIDE_SYMBOLS");
  if (hide != NULL)
    snprintf(vgpu_cfg.hide_symbols, sizeof(vgpu_cfg.hide_symbols), "%s", hide);
  load_faults(facade);

  bool seeded = env_uint("VGPU_SEED", 0, UINT64_MAX, &v);
  if (seeded) {
    vgpu_cfg.seed = v;
  } else {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    vgpu_cfg.seed = vgpu_hash((uint64_t)ts.tv_nsec, (uint64_t)ts.tv_sec,
                              (uint64_t)getpid()) >>
                    1;
  }
  if (vgpu_cfg.jitter_us > 0 || vgpu_cfg.fault_count > 0) {
    vgpu_log("VGPU_SEED=%llu (VGPU_JITTER_US=%u, %d fault rule(s))",
             (unsigned long long)vgpu_cfg.seed, vgpu_cfg.jitter_us,
             vgpu_cfg.fault_count);
  }
}

bool vgpu_strict(void) {
  return vgpu_cfg.strict;
}

bool vgpu_symbol_hidden(const char* name) {
  const char* list = vgpu_cfg.hide_symbols;
  size_t n = strlen(name);
  while (*list != '\0') {
    size_t len = strcspn(list, ",; ");
    if (len == n && strncmp(list, name, n) == 0)
      return true;
    list += len;
    while (*list == ',' || *list == ';' || *list == ' ')
      list++;
  }
  return false;
}

static uint64_t splitmix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

uint64_t vgpu_hash(uint64_t a, uint64_t b, uint64_t c) {
  return splitmix(splitmix(splitmix(vgpu_cfg.seed ^ a) ^ b) ^ c);
}

uint64_t vgpu_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void vgpu_jitter(uint64_t a, uint64_t b) {
  if (vgpu_cfg.jitter_us == 0)
    return;
  uint64_t us = vgpu_hash(0x6a17, a, b) % ((uint64_t)vgpu_cfg.jitter_us + 1);
  if (us == 0)
    return;
  struct timespec ts = {(time_t)(us / 1000000u), (long)(us % 1000000u) * 1000L};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

bool vgpu_code_from_name(const vgpu_code_name* table, size_t count,
                         const char* name, int* code) {
  for (size_t i = 0; i < count; ++i) {
    if (strcmp(table[i].name, name) == 0) {
      *code = table[i].code;
      return true;
    }
  }
  char* end = NULL;
  long v = strtol(name, &end, 0);
  if (*name == '\0' || *end != '\0' || v < 0)
    return false;
  *code = (int)v;
  return true;
}
