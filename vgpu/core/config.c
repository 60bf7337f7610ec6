// Environment knobs, the seed, deterministic hashing and jitter.
//
// Every knob is read once, when the library is loaded (see docs/vgpu.md for
// the list), by one parser per kind (env_uint, env_bool). A malformed or
// out-of-range value would run something other than what was asked for
// (VGPU_DEVICES=1000 a two-device run; a VGPU_FAULTS rule that cannot be
// parsed, or names a call the facade does not implement, would inject
// nothing and let a fault test pass without its fault), so each is
// reported naming the variable and the accepted values, and together they
// are a fatal configuration error: the process exits with EX_CONFIG at
// load.
//
// The seed makes every random decision of the runtime a pure function of
// (seed, what, which): jitter of operation k of stream s, the n-th call of
// a probabilistic fault, the node order of graph launch n. Runs with the
// same seed therefore make the same decisions, whatever the thread
// interleaving.
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

vgpu_config vgpu_cfg;

// Settings that did not parse: each is reported, and together they are
// fatal at load (as a bad VGPU_FAULTS rule is): a knob that silently kept
// its default would run a different test than the one asked for.
static int bad_settings;

// The one parser of numeric knobs: false when unset; a malformed or
// out-of-range value is reported and counted. Decimal digits only, as in
// libhal's parser (hal/env.c): a leading zero is no octal prefix
// (VGPU_DEVICES=010 is ten devices), and a "0x" prefix, a sign or leading
// blanks (the last two of which strtoull accepts) are malformed.
static bool env_uint(const char* name, unsigned long long min,
                     unsigned long long max, unsigned long long* out) {
  const char* s = getenv(name);
  if (s == NULL || *s == '\0')
    return false;
  char* end = NULL;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  bool digits = *s >= '0' && *s <= '9';
  if (!digits || errno != 0 || *end != '\0' || v < min || v > max) {
    vgpu_log("%s=%s: expected an integer in [%llu, %llu]", name, s, min, max);
    ++bad_settings;
    return false;
  }
  *out = v;
  return true;
}

// The one parser of flags: 0/1 (also false/true, off/on).
static bool env_bool(const char* name, bool def) {
  const char* s = getenv(name);
  if (s == NULL || *s == '\0')
    return def;
  if (strcmp(s, "0") == 0 || strcmp(s, "false") == 0 || strcmp(s, "off") == 0)
    return false;
  if (strcmp(s, "1") == 0 || strcmp(s, "true") == 0 || strcmp(s, "on") == 0)
    return true;
  vgpu_log("%s=%s: expected 0, 1, false, true, off or on", name, s);
  ++bad_settings;
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
      if (!vgpu_code_from_name(facade->codes, facade->code_count, value,
                               &rule->code))
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

// Index of |call| in the facade's sorted call table, or -1.
int vgpu_call_index(const vgpu_facade* facade, const char* call) {
  size_t lo = 0, hi = facade->call_count;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int c = strcmp(facade->calls[mid], call);
    if (c == 0)
      return (int)mid;
    if (c < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return -1;
}

// Case-insensitive Levenshtein distance of two names shorter than 128
// bytes (longer tails are ignored: only used to rank suggestions).
static size_t edit_distance(const char* a, const char* b) {
  enum { MAX = 128 };
  size_t n = strnlen(a, MAX - 1), m = strnlen(b, MAX - 1);
  size_t prev[MAX], cur[MAX];
  for (size_t j = 0; j <= m; ++j)
    prev[j] = j;
  for (size_t i = 1; i <= n; ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= m; ++j) {
      size_t sub = prev[j - 1] + (tolower((unsigned char)a[i - 1]) !=
                                  tolower((unsigned char)b[j - 1]));
      size_t del = prev[j] + 1, ins = cur[j - 1] + 1;
      cur[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
    }
    memcpy(prev, cur, (m + 1) * sizeof(size_t));
  }
  return prev[m];
}

// Writes the (up to) three known call names closest to |call| into |out|,
// comma-separated, closest first (ties in table order).
static void closest_calls(const vgpu_facade* facade, const char* call,
                          char* out, size_t capacity) {
  enum { KEEP = 3 };
  size_t best[KEEP], dist[KEEP];
  size_t kept = 0;
  for (size_t i = 0; i < facade->call_count; ++i) {
    size_t d = edit_distance(call, facade->calls[i]);
    size_t at = kept;
    while (at > 0 && dist[at - 1] > d)
      at--;
    if (at == KEEP)
      continue;
    if (kept < KEEP)
      kept++;
    for (size_t k = kept - 1; k > at; --k) {
      best[k] = best[k - 1];
      dist[k] = dist[k - 1];
    }
    best[at] = i;
    dist[at] = d;
  }
  size_t len = 0;
  out[0] = '\0';
  for (size_t k = 0; k < kept && len < capacity; ++k) {
    int w = snprintf(out + len, capacity - len, "%s%s", k ? ", " : "",
                     facade->calls[best[k]]);
    if (w < 0)
      break;
    len += (size_t)w;
  }
}

// Parses VGPU_FAULTS into vgpu_cfg.faults. Returns the number of bad rules,
// each reported on stderr.
static int load_faults(const vgpu_facade* facade) {
  const char* env = getenv("VGPU_FAULTS");
  if (env == NULL || *env == '\0')
    return 0;
  char* copy = strdup(env);
  if (copy == NULL) {
    vgpu_log("VGPU_FAULTS: out of memory reading the rules");
    return 1;
  }
  int bad = 0;
  char* save = NULL;
  for (char* r = strtok_r(copy, ";,", &save); r != NULL;
       r = strtok_r(NULL, ";,", &save)) {
    if (vgpu_cfg.fault_count == VGPU_MAX_FAULT_RULES) {
      vgpu_log("VGPU_FAULTS: more than %d rules (from '%s' on)",
               VGPU_MAX_FAULT_RULES, r);
      bad++;
      break;
    }
    char text[256];
    snprintf(text, sizeof(text), "%s", r);
    vgpu_fault_rule* rule = &vgpu_cfg.faults[vgpu_cfg.fault_count];
    if (strlen(r) >= sizeof(text) || !parse_fault_rule(text, facade, rule)) {
      vgpu_log(
          "VGPU_FAULTS: rule '%s' is malformed (expected "
          "call:nth=N|prob=P|always[:times=K][:error=CODE|:lost[=DEV]])",
          r);
      bad++;
      continue;
    }
    if (strcmp(rule->call, "*") != 0 &&
        vgpu_call_index(facade, rule->call) < 0) {
      char closest[256];
      closest_calls(facade, rule->call, closest, sizeof(closest));
      vgpu_log(
          "VGPU_FAULTS: rule '%s' names '%s', which is no entry point of "
          "the %s runtime (closest: %s); a rule must name a call the "
          "runtime implements, or '*'",
          r, rule->call, facade->vendor, closest);
      bad++;
      continue;
    }
    vgpu_cfg.fault_count++;
  }
  free(copy);
  return bad;
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
  if (env_uint("VGPU_PAGEABLE_COPY_DELAY_US", 0, 10000000, &v))
    vgpu_cfg.pageable_copy_delay_us = (unsigned)v;
  if (env_uint("VGPU_MAX_WAIT_MS", 0, 86400000, &v))
    vgpu_cfg.max_wait_ms = (unsigned)v;
  if (env_uint("VGPU_CCL_TIMEOUT_MS", 0, 86400000, &v))
    vgpu_cfg.ccl_timeout_ms = (unsigned)v;
  vgpu_cfg.fail_exit_code = 0;
  if (env_uint("VGPU_FAIL_EXIT_CODE", 0, 255, &v))
    vgpu_cfg.fail_exit_code = (int)v;
  const char* hide = getenv("VGPU_HIDE_SYMBOLS");
  if (hide != NULL)
    snprintf(vgpu_cfg.hide_symbols, sizeof(vgpu_cfg.hide_symbols), "%s", hide);
  const char* counts = getenv("VGPU_CALL_COUNTS");
  if (counts != NULL && *counts != '\0') {
    snprintf(vgpu_cfg.call_counts_path, sizeof(vgpu_cfg.call_counts_path), "%s",
             counts);
    vgpu_cfg.call_counts = calloc(facade->call_count ? facade->call_count : 1,
                                  sizeof(*vgpu_cfg.call_counts));
    if (vgpu_cfg.call_counts == NULL)
      vgpu_log("VGPU_CALL_COUNTS: out of memory, not counting");
  }
  int bad_rules = load_faults(facade);
  bool seeded = env_uint("VGPU_SEED", 0, UINT64_MAX, &v);
  if (bad_rules > 0 || bad_settings > 0) {
    // Fatal (see the top of this file). _exit: nothing else of the runtime
    // exists yet, and exit() would run other libraries' destructors inside
    // the dlopen() that loads this one.
    if (bad_rules > 0) {
      vgpu_log(
          "exiting with %d (EX_CONFIG): %d bad VGPU_FAULTS rule(s) in "
          "'%s'",
          EX_CONFIG, bad_rules, getenv("VGPU_FAULTS"));
    } else {
      vgpu_log("exiting with %d (EX_CONFIG): %d bad VGPU_* setting(s)",
               EX_CONFIG, bad_settings);
    }
    fflush(stdout);
    fflush(stderr);
    _exit(EX_CONFIG);
  }

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

void vgpu_call_counts_flush(void) {
  atomic_uint_fast64_t* counts = vgpu_cfg.call_counts;
  if (counts == NULL)
    return;
  vgpu_cfg.call_counts = NULL;
  const vgpu_facade* facade = vgpu_facade_current;
  size_t cap = 64 * (facade->call_count + 1), len = 0;
  char* text = malloc(cap);
  if (text != NULL) {
    for (size_t i = 0; i < facade->call_count; ++i) {
      unsigned long long n = atomic_load(&counts[i]);
      if (n == 0)
        continue;
      int w = snprintf(text + len, cap - len, "%s %llu\n", facade->calls[i], n);
      if (w < 0 || (size_t)w >= cap - len)
        break;
      len += (size_t)w;
    }
    // Appended in one write: both facades of one process may share the file.
    int fd = open(vgpu_cfg.call_counts_path,
                  O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0 || (len > 0 && write(fd, text, len) != (ssize_t)len)) {
      vgpu_log("VGPU_CALL_COUNTS: cannot write %s: %s",
               vgpu_cfg.call_counts_path, strerror(errno));
    }
    if (fd >= 0)
      close(fd);
  }
  free(text);
  free(counts);
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
  vgpu_sleep_us(vgpu_hash(0x6a17, a, b) % ((uint64_t)vgpu_cfg.jitter_us + 1));
}

void vgpu_sleep_us(uint64_t us) {
  if (us == 0)
    return;
  struct timespec ts = {(time_t)(us / 1000000u), (long)(us % 1000000u) * 1000L};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

const char* vgpu_name_of_code(const vgpu_code_name* table, size_t count,
                              int code) {
  for (size_t i = 0; i < count; ++i) {
    if (table[i].code == code)
      return table[i].name;
  }
  return NULL;
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
