// Copyright 2026 The HAL Authors.
//
// HAL_TRACE: per-thread event buffers and the Chrome Trace Event writer
// (hal/trace.h has the contract).
//
// Each thread appends to its own buffer, under the buffer's own mutex (the
// writer takes it too, for a few hundred events at a time, so a flush never
// reads half an event and an append waits for at most that; uncontended
// otherwise). Buffers are registered once in a global list and outlive
// their threads: a thread's events stay until the process ends. Tracks
// (queues) are numbered from kTrackBase, threads by their order of first
// event, so the two never collide. Both lists only grow, at their head,
// by a compare-and-swap: registering a thread or naming a track never
// waits for a flush, however often some thread flushes.

#include "hal/trace.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hal/env.h"
#include "hal/time.h"

HAL_API bool hal_trace_on;

// Longer args are replaced whole by a marker (cut JSON is not JSON).
#define HAL_TRACE_ARGS_MAX 1024
#define HAL_TRACE_TRACK_BASE 1000000u
// How the file begins; the records follow.
#define HAL_TRACE_OPENING "{\"displayTimeUnit\":\"ns\",\"traceEvents\":["
// Events a flush writes per hold of a buffer's lock (hal_trace_write).
#define HAL_TRACE_WRITE_BATCH 256

// Names are copied: an event may outlive the plugin whose literal named it.
typedef struct hal_trace_event_t {
  char category[16];
  char name[48];
  uint64_t ts_ns;
  uint64_t duration_ns;  // ph 'X'
  uint64_t id;           // async spans and flows
  uint32_t track;        // 0: the buffer's thread
  char phase;
  // Its place in the one order of every event of every thread
  // (hal_trace.next_seq): what a flush cuts at.
  uint64_t seq;
  // The args in the buffer's text: most events have a few bytes of them.
  uint32_t args_offset;
  uint32_t args_length;
} hal_trace_event_t;

typedef struct hal_trace_buffer_t {
  pthread_mutex_t mutex;
  uint32_t thread_id;
  char thread_name[16];
  hal_trace_event_t* events;
  size_t count;
  size_t capacity;
  char* text;  // every event's args, back to back
  size_t text_length;
  size_t text_capacity;
  struct hal_trace_buffer_t* next;  // the global list; set before it is in
  // The writer's alone (writes are one at a time): how many of |events| the
  // file on disk holds, and whether it names the thread.
  size_t written;
  bool named;
} hal_trace_buffer_t;

typedef struct hal_trace_track_t {
  uint32_t id;
  char name[64];
  struct hal_trace_track_t* next;  // set before it is in the list
} hal_trace_track_t;

static struct {
  char path[4096];
  // The file's permissions: those of the file HAL_TRACE named when it was
  // there at load, else a new file's under the process's umask.
  mode_t mode;
  uint64_t max_bytes;  // 0: unbounded
  // Pushed with release, read with acquire: a flush that saw an event's
  // number (next_seq) sees the buffer it is in and the track it names.
  _Atomic(hal_trace_buffer_t*) buffers;
  _Atomic(hal_trace_track_t*) tracks;
  _Atomic uint32_t next_thread_id;
  _Atomic uint32_t track_count;
  _Atomic uint64_t next_id;
  _Atomic uint64_t next_seq;  // hal_trace_event_t.seq
  _Atomic uint64_t bytes;     // event storage of every buffer
  _Atomic uint64_t dropped;   // events past max_bytes
  // Set by the first event dropped (past max_bytes, or out of memory):
  // every later event is dropped too, so the buffers keep a cut of the run
  // (an end whose begin was dropped must not be written by a thread whose
  // buffer still has room).
  atomic_bool full;
  _Atomic uint64_t dropped_spans;  // device spans drivers could not write
} hal_trace;

// Flushes are served in order of request, one write at a time: a write
// holds every event numbered before it began, so it answers every request
// made before then. A caller waits for at most the write under way when it
// asked and the next one, whoever makes it, and waits on a condition
// variable, not on the writer's lock: however often another thread
// flushes, it is not passed over (glibc's mutex is not fair).
static struct {
  pthread_mutex_t mutex;  // the fields below, never held while writing
  pthread_cond_t written;
  uint64_t requested;  // the last request's ticket
  uint64_t answered;   // every ticket up to this one has its file
  bool writing;
} hal_trace_flushes = {.mutex = PTHREAD_MUTEX_INITIALIZER,
                       .written = PTHREAD_COND_INITIALIZER};

// What the file on disk holds, so that a write appends to it instead of
// formatting the whole run again (hal_trace_write). The writer's alone.
static struct {
  bool valid;    // the rest describes the file at |hal_trace.path|
  dev_t device;  // which file: a file put in its place is not ours
  ino_t inode;
  struct timespec modified;
  struct timespec changed;
  off_t body_end;     // where the closing part begins (after the last record)
  char closing[192];  // the closing part, as written: the file ends with it
  hal_trace_track_t* tracks_named;  // the head of the tracks it names
} hal_trace_file;

static _Thread_local hal_trace_buffer_t* hal_trace_this_thread;
static _Thread_local uint64_t hal_trace_last_submission;
static _Thread_local uint64_t hal_trace_last_submission_ns;
static _Thread_local uint64_t hal_trace_issuing;

HAL_API void hal_trace_set_issuing_submission(uint64_t id) {
  hal_trace_issuing = id;
}

HAL_API uint64_t hal_trace_issuing_submission(void) {
  return hal_trace_issuing;
}

HAL_API void hal_trace_set_last_submission(uint64_t id) {
  hal_trace_last_submission = id;
  hal_trace_last_submission_ns = id ? (uint64_t)hal_time_now() : 0;
}

HAL_API uint64_t hal_trace_take_last_submission(uint64_t* out_at_ns) {
  uint64_t id = hal_trace_last_submission;
  *out_at_ns = hal_trace_last_submission_ns;
  hal_trace_last_submission = 0;
  hal_trace_last_submission_ns = 0;
  return id;
}

HAL_API bool hal_trace_append_semaphore(char* out, size_t capacity,
                                        size_t* length, const void* semaphore,
                                        uint64_t value) {
  // Room is kept for the " +N more" a caller adds when one does not fit.
  char entry[48];
  int written = snprintf(entry, sizeof(entry), "%s%p@%" PRIu64,
                         *length ? " " : "", semaphore, value);
  if (written < 0 || *length + (size_t)written + 16 >= capacity)
    return false;
  memcpy(out + *length, entry, (size_t)written + 1);
  *length += (size_t)written;
  return true;
}

HAL_API void hal_trace_append_more(char* out, size_t capacity, size_t* length,
                                   size_t more) {
  if (!more || *length >= capacity)
    return;
  snprintf(out + *length, capacity - *length, "%s+%zu more", *length ? " " : "",
           more);
  *length += strlen(out + *length);
}

HAL_API void hal_trace_json_text(char* out, size_t capacity, const char* text) {
  size_t length = 0;
  for (const char* c = text; *c && length + 1 < capacity; ++c) {
    unsigned char byte = (unsigned char)*c;
    out[length++] =
        byte == '"' || byte == '\\' || byte < 0x20 || byte >= 0x7f ? '?' : *c;
  }
  if (capacity)
    out[length] = '\0';
}

HAL_API void hal_trace_status_args(hal_status_t status, char* args,
                                   size_t capacity) {
  const char* code = hal_status_code_string(hal_status_code(status));
  // The message gets what room is left, so the args always close.
  int prefix = status == HAL_OK
                   ? -1
                   : snprintf(args, capacity,
                              "\"status\": \"%s\", \"message\": \"", code);
  if (prefix < 0 || (size_t)prefix + 2 >= capacity) {
    // No message; and no args at all where the code alone does not fit,
    // rather than half a member.
    int length = snprintf(args, capacity, "\"status\": \"%s\"", code);
    if (capacity && (length < 0 || (size_t)length >= capacity))
      args[0] = '\0';
    return;
  }
  hal_trace_json_text(args + prefix, capacity - (size_t)prefix - 1,
                      hal_status_message(status));
  size_t length = strlen(args);
  args[length] = '"';
  args[length + 1] = '\0';
}

// Set once the exit's flush was asked for: a flush of another thread then
// does nothing (the exit's holds every event it would).
static atomic_bool hal_trace_exiting;

static void hal_trace_write_in_turn(void);

static void hal_trace_at_exit(void) {
  atomic_store_explicit(&hal_trace_exiting, true, memory_order_relaxed);
  if (hal_trace_enabled())
    hal_trace_write_in_turn();
}

// A fork() child neither records nor writes: the trace is the process's
// that loaded the library. Its buffers in the child are copies of the
// parent's, their locks perhaps held by threads the child does not have,
// and its flush would replace the parent's file with them.
static void hal_trace_fork_child(void) {
  hal_trace_on = false;
}

// A new temporary file beside |path| (PATH.XXXXXX, its name in
// |temporary|) with permissions |mode|, made exclusively: never a file,
// FIFO, device or link that was there before, whatever waits or points
// behind such a name. NULL with errno set when it cannot be made.
static FILE* hal_trace_open_temporary(const char* path, mode_t mode,
                                      char* temporary, size_t capacity) {
  if (snprintf(temporary, capacity, "%s.XXXXXX", path) >= (int)capacity) {
    errno = ENAMETOOLONG;
    return NULL;
  }
  int fd = mkstemp(temporary);
  if (fd < 0)
    return NULL;
  // mkstemp makes it private; the trace replaces FILE, so it takes FILE's
  // permissions (or a new file's).
  if (fchmod(fd, mode) != 0 && errno != EPERM) {
    int error = errno;
    close(fd);
    unlink(temporary);
    errno = error;
    return NULL;
  }
  FILE* file = fdopen(fd, "w");
  if (!file) {
    int error = errno;
    close(fd);
    unlink(temporary);
    errno = error;
  }
  return file;
}

// The process's umask, read without changing it (umask() would, for a
// moment, under threads a dlopen may find running); 022 where the kernel
// does not say.
static mode_t hal_trace_umask(void) {
  mode_t mask = 022;
  FILE* status = fopen("/proc/self/status", "re");
  if (!status)
    return mask;
  char line[256];
  unsigned value;
  while (fgets(line, sizeof(line), status)) {
    if (sscanf(line, "Umask: %o", &value) == 1) {
      mask = (mode_t)(value & 0777);
      break;
    }
  }
  fclose(status);
  return mask;
}

__attribute__((constructor)) static void hal_trace_load(void) {
  const char* path = getenv("HAL_TRACE");
  if (!path || !*path)
    return;
  if (strlen(path) >= sizeof(hal_trace.path)) {
    fprintf(stderr, "hal: HAL_TRACE is longer than %zu bytes: not tracing\n",
            sizeof(hal_trace.path) - 1);
    return;
  }
  uint64_t max_mb = 0;
  hal_status_t status =
      hal_env_uint("HAL_TRACE_MAX_MB", 0, UINT32_MAX, &max_mb, NULL);
  if (status) {
    // A malformed bound must not trace unbounded nor silently not at all.
    fprintf(stderr, "hal: ");
    hal_status_fprint(stderr, status);
    hal_status_free(status);
    exit(78);
  }
  // Flushes may come after the program changed its working folder: a
  // relative FILE is made absolute now, where the program started.
  char absolute[sizeof(hal_trace.path)];
  if (path[0] != '/') {
    char folder[sizeof(hal_trace.path)];
    if (!getcwd(folder, sizeof(folder)) ||
        snprintf(absolute, sizeof(absolute), "%s/%s", folder, path) >=
            (int)sizeof(absolute)) {
      fprintf(stderr,
              "hal: HAL_TRACE=%s cannot be made absolute (%s): not tracing\n",
              path, strerror(errno ? errno : ENAMETOOLONG));
      return;
    }
    path = absolute;
  }
  // The file is written beside FILE and renamed over it: a FILE that is not
  // a regular file (a device, a folder) would be replaced or never written,
  // so it is refused; a link is followed, so its target gets the trace.
  char* resolved = NULL;
  struct stat info;
  mode_t mode = 0666 & ~hal_trace_umask();
  if (lstat(path, &info) == 0) {
    if (S_ISLNK(info.st_mode)) {
      resolved = realpath(path, NULL);
      if (!resolved || stat(resolved, &info) != 0) {
        fprintf(stderr, "hal: HAL_TRACE=%s is a link to nothing: not tracing\n",
                path);
        free(resolved);
        return;
      }
      if (strlen(resolved) >= sizeof(hal_trace.path)) {
        fprintf(stderr,
                "hal: HAL_TRACE=%s leads to a path longer than %zu bytes: not "
                "tracing\n",
                path, sizeof(hal_trace.path) - 1);
        free(resolved);
        return;
      }
      path = resolved;
    }
    if (!S_ISREG(info.st_mode)) {
      fprintf(stderr,
              "hal: HAL_TRACE=%s is not a regular file (the trace replaces "
              "FILE whole): not tracing\n",
              path);
      free(resolved);
      return;
    }
    // The rename would replace a file this process may not write: one
    // kept read-only is refused and left as it was.
    if (access(path, W_OK) != 0) {
      fprintf(stderr, "hal: HAL_TRACE=%s is not writable (%s): not tracing\n",
              path, strerror(errno));
      free(resolved);
      return;
    }
    mode = info.st_mode & 07777;
  }
  // Found out now, not at the first flush: a trace that cannot be written
  // is said at the start and the program runs untraced.
  char probe[sizeof(hal_trace.path) + 8];
  FILE* file = hal_trace_open_temporary(path, mode, probe, sizeof(probe));
  if (!file) {
    fprintf(stderr, "hal: HAL_TRACE=%s cannot be written (%s): not tracing\n",
            path, strerror(errno));
    free(resolved);
    return;
  }
  fclose(file);
  remove(probe);
  memcpy(hal_trace.path, path, strlen(path) + 1);
  hal_trace.mode = mode;
  free(resolved);
  hal_trace.max_bytes = max_mb * 1024 * 1024;
  hal_trace_on = true;
  atexit(hal_trace_at_exit);
  pthread_atfork(NULL, NULL, hal_trace_fork_child);
}

// The calling thread's buffer, registered at its first event; NULL when
// out of memory (the event is then counted as dropped).
static hal_trace_buffer_t* hal_trace_buffer(void) {
  hal_trace_buffer_t* buffer = hal_trace_this_thread;
  if (buffer)
    return buffer;
  buffer = calloc(1, sizeof(*buffer));
  if (!buffer)
    return NULL;
  pthread_mutex_init(&buffer->mutex, NULL);
  if (pthread_getname_np(pthread_self(), buffer->thread_name,
                         sizeof(buffer->thread_name)) != 0) {
    buffer->thread_name[0] = '\0';
  }
  buffer->thread_id = atomic_fetch_add_explicit(&hal_trace.next_thread_id, 1,
                                                memory_order_relaxed) +
                      1;
  buffer->next = atomic_load_explicit(&hal_trace.buffers, memory_order_relaxed);
  while (!atomic_compare_exchange_weak_explicit(
      &hal_trace.buffers, &buffer->next, buffer, memory_order_release,
      memory_order_relaxed)) {
  }
  hal_trace_this_thread = buffer;
  return buffer;
}

// Grows |*data| (|*capacity| elements of |size| bytes) to hold |needed|,
// doubling, within HAL_TRACE_MAX_MB over every buffer. false: it did not
// fit (the event is dropped and counted, never written half).
static bool hal_trace_reserve(void** data, size_t* capacity, size_t needed,
                              size_t size) {
  if (needed <= *capacity)
    return true;
  size_t grown = *capacity ? *capacity : 1024;
  while (grown < needed)
    grown *= 2;
  uint64_t grow = (uint64_t)(grown - *capacity) * size;
  if (hal_trace.max_bytes &&
      atomic_load_explicit(&hal_trace.bytes, memory_order_relaxed) + grow >
          hal_trace.max_bytes) {
    return false;
  }
  void* resized = realloc(*data, grown * size);
  if (!resized)
    return false;
  atomic_fetch_add_explicit(&hal_trace.bytes, grow, memory_order_relaxed);
  *data = resized;
  *capacity = grown;
  return true;
}

static void hal_trace_append(char phase, uint32_t track, const char* category,
                             const char* name, uint64_t ts_ns,
                             uint64_t duration_ns, uint64_t id,
                             const char* args) {
  // Relaxed is enough: an event that happened after a dropped one (in the
  // program's order, or through the synchronization that ordered them)
  // reads the flag that the dropping call set before it returned.
  hal_trace_buffer_t* buffer =
      atomic_load_explicit(&hal_trace.full, memory_order_relaxed)
          ? NULL
          : hal_trace_buffer();
  if (!buffer) {
    atomic_store_explicit(&hal_trace.full, true, memory_order_relaxed);
    atomic_fetch_add_explicit(&hal_trace.dropped, 1, memory_order_relaxed);
    return;
  }
  static const char kTruncated[] = "\"args_truncated\": true";
  size_t args_length = args ? strlen(args) : 0;
  if (args_length > HAL_TRACE_ARGS_MAX) {
    args = kTruncated;
    args_length = sizeof(kTruncated) - 1;
  }
  pthread_mutex_lock(&buffer->mutex);
  if (!hal_trace_reserve((void**)&buffer->events, &buffer->capacity,
                         buffer->count + 1, sizeof(hal_trace_event_t)) ||
      !hal_trace_reserve((void**)&buffer->text, &buffer->text_capacity,
                         buffer->text_length + args_length, 1)) {
    atomic_store_explicit(&hal_trace.full, true, memory_order_relaxed);
    pthread_mutex_unlock(&buffer->mutex);
    atomic_fetch_add_explicit(&hal_trace.dropped, 1, memory_order_relaxed);
    return;
  }
  hal_trace_event_t* event = &buffer->events[buffer->count++];
  // Taken under the buffer's lock, so a buffer's events are in this order;
  // one counter for all, so an event that happened before another has the
  // smaller number (hal_trace_flush). Release: a flush that reads a number
  // past this one sees this buffer in the list.
  event->seq =
      atomic_fetch_add_explicit(&hal_trace.next_seq, 1, memory_order_release);
  snprintf(event->category, sizeof(event->category), "%s", category);
  snprintf(event->name, sizeof(event->name), "%s", name);
  event->ts_ns = ts_ns;
  event->duration_ns = duration_ns;
  event->id = id;
  event->track = track;
  event->phase = phase;
  event->args_offset = (uint32_t)buffer->text_length;
  event->args_length = (uint32_t)args_length;
  if (args_length)
    memcpy(buffer->text + buffer->text_length, args, args_length);
  buffer->text_length += args_length;
  pthread_mutex_unlock(&buffer->mutex);
}

static uint64_t hal_trace_now(void) {
  return (uint64_t)hal_time_now();
}

HAL_API uint32_t hal_trace_track(const char* name) {
  if (!hal_trace_enabled())
    return 0;
  // Kept until the process ends, like the buffers: events name it.
  hal_trace_track_t* track = malloc(sizeof(*track));
  if (!track)
    return 0;  // its events go to the calling thread's track
  track->id =
      HAL_TRACE_TRACK_BASE + atomic_fetch_add_explicit(&hal_trace.track_count,
                                                       1, memory_order_relaxed);
  snprintf(track->name, sizeof(track->name), "%s", name);
  track->next = atomic_load_explicit(&hal_trace.tracks, memory_order_relaxed);
  while (!atomic_compare_exchange_weak_explicit(&hal_trace.tracks, &track->next,
                                                track, memory_order_release,
                                                memory_order_relaxed)) {
  }
  return track->id;
}

HAL_API uint64_t hal_trace_next_id(void) {
  return atomic_fetch_add_explicit(&hal_trace.next_id, 1,
                                   memory_order_relaxed) +
         1;
}

HAL_API void hal_trace_complete(const char* category, const char* name,
                                uint64_t start_ns, const char* args) {
  if (!hal_trace_enabled())
    return;
  uint64_t now = hal_trace_now();
  hal_trace_append('X', 0, category, name, start_ns,
                   now > start_ns ? now - start_ns : 0, 0, args);
}

HAL_API void hal_trace_span(uint32_t track, const char* category,
                            const char* name, uint64_t start_ns,
                            uint64_t duration_ns, const char* args) {
  if (hal_trace_enabled())
    hal_trace_append('X', track, category, name, start_ns, duration_ns, 0,
                     args);
}

HAL_API void hal_trace_instant(uint32_t track, const char* category,
                               const char* name, const char* args) {
  if (hal_trace_enabled())
    hal_trace_append('i', track, category, name, hal_trace_now(), 0, 0, args);
}

HAL_API void hal_trace_begin(uint32_t track, const char* category,
                             const char* name, uint64_t id, const char* args) {
  if (hal_trace_enabled())
    hal_trace_append('b', track, category, name, hal_trace_now(), 0, id, args);
}

HAL_API void hal_trace_end(uint32_t track, const char* category,
                           const char* name, uint64_t id, const char* args) {
  if (hal_trace_enabled())
    hal_trace_append('e', track, category, name, hal_trace_now(), 0, id, args);
}

HAL_API void hal_trace_flow_start(uint32_t track, const char* category,
                                  uint64_t id) {
  if (hal_trace_enabled()) {
    hal_trace_append('s', track, category, "submission", hal_trace_now(), 0, id,
                     NULL);
  }
}

HAL_API void hal_trace_flow_start_at(uint32_t track, const char* category,
                                     uint64_t id, uint64_t at_ns) {
  if (hal_trace_enabled())
    hal_trace_append('s', track, category, "submission", at_ns, 0, id, NULL);
}

HAL_API void hal_trace_flow_end(uint32_t track, const char* category,
                                uint64_t id) {
  if (hal_trace_enabled()) {
    hal_trace_append('f', track, category, "submission", hal_trace_now(), 0, id,
                     NULL);
  }
}

HAL_API void hal_trace_counter(uint32_t track, const char* name,
                               const char* args) {
  if (hal_trace_enabled())
    hal_trace_append('C', track, "counter", name, hal_trace_now(), 0, 0, args);
}

HAL_API uint64_t hal_trace_dropped(void) {
  return atomic_load_explicit(&hal_trace.dropped, memory_order_relaxed);
}

HAL_API void hal_trace_count_dropped_spans(uint64_t count) {
  atomic_fetch_add_explicit(&hal_trace.dropped_spans, count,
                            memory_order_relaxed);
}

HAL_API uint64_t hal_trace_dropped_spans(void) {
  return atomic_load_explicit(&hal_trace.dropped_spans, memory_order_relaxed);
}

// The length of the well-formed UTF-8 sequence at |text| (RFC 3629: no
// overlong form, no surrogate, nothing past U+10FFFF), or 0.
static size_t hal_trace_utf8_length(const unsigned char* text) {
  unsigned char lead = text[0];
  size_t length;
  uint32_t low;  // the smallest code point of that length
  uint32_t code;
  if (lead >= 0xc2 && lead <= 0xdf) {
    length = 2, low = 0x80, code = lead & 0x1f;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3, low = 0x800, code = lead & 0x0f;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4, low = 0x10000, code = lead & 0x07;
  } else {
    return 0;
  }
  for (size_t i = 1; i < length; ++i) {
    if ((text[i] & 0xc0) != 0x80)
      return 0;  // also the terminating NUL
    code = code << 6 | (text[i] & 0x3f);
  }
  if (code < low || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff))
    return 0;
  return length;
}

// |text| as the inside of a JSON string: UTF-8 kept as it is, quotes,
// backslashes and control characters escaped, and each byte that is not
// part of well-formed UTF-8 written as U+FFFD, so the file stays UTF-8.
static void hal_trace_write_string(FILE* file, const char* text) {
  for (const unsigned char* c = (const unsigned char*)text; *c;) {
    if (*c == '"' || *c == '\\') {
      fprintf(file, "\\%c", *c);
      ++c;
    } else if (*c < 0x20) {
      fprintf(file, "\\u%04x", *c);
      ++c;
    } else if (*c < 0x80) {
      fputc(*c, file);
      ++c;
    } else {
      size_t length = hal_trace_utf8_length(c);
      if (length) {
        fwrite(c, 1, length, file);
        c += length;
      } else {
        fputs("\\ufffd", file);
        ++c;
      }
    }
  }
}

static void hal_trace_write_event(FILE* file, const hal_trace_buffer_t* buffer,
                                  const hal_trace_event_t* event, bool* first) {
  uint32_t tid = event->track ? event->track : buffer->thread_id;
  fprintf(file, "%s\n{\"ph\":\"%c\",\"cat\":\"", *first ? "" : ",",
          event->phase);
  hal_trace_write_string(file, event->category);
  fprintf(file, "\",\"name\":\"");
  hal_trace_write_string(file, event->name);
  fprintf(file, "\",\"pid\":1,\"tid\":%" PRIu32 ",\"ts\":%.3f", tid,
          (double)event->ts_ns / 1000.0);
  if (event->phase == 'X')
    fprintf(file, ",\"dur\":%.3f", (double)event->duration_ns / 1000.0);
  if (event->phase == 'b' || event->phase == 'e' || event->phase == 's' ||
      event->phase == 'f') {
    fprintf(file, ",\"id\":\"0x%" PRIx64 "\"", event->id);
  }
  if (event->phase == 'f')
    fprintf(file, ",\"bp\":\"e\"");
  if (event->phase == 'i')
    fprintf(file, ",\"s\":\"t\"");
  fprintf(file, ",\"args\":{%.*s}}", (int)event->args_length,
          event->args_length ? buffer->text + event->args_offset : "");
  *first = false;
}

static void hal_trace_write(void);

HAL_API void hal_trace_flush(void) {
  if (!hal_trace_enabled() ||
      atomic_load_explicit(&hal_trace_exiting, memory_order_relaxed)) {
    return;
  }
  hal_trace_write_in_turn();
}

static void hal_trace_write_in_turn(void) {
  pthread_mutex_lock(&hal_trace_flushes.mutex);
  uint64_t ticket = ++hal_trace_flushes.requested;
  while (hal_trace_flushes.answered < ticket) {
    if (hal_trace_flushes.writing) {
      pthread_cond_wait(&hal_trace_flushes.written, &hal_trace_flushes.mutex);
      continue;
    }
    // This write begins after every request made so far: it answers them.
    uint64_t answers = hal_trace_flushes.requested;
    hal_trace_flushes.writing = true;
    pthread_mutex_unlock(&hal_trace_flushes.mutex);
    hal_trace_write();
    pthread_mutex_lock(&hal_trace_flushes.mutex);
    hal_trace_flushes.writing = false;
    hal_trace_flushes.answered = answers;
    pthread_cond_broadcast(&hal_trace_flushes.written);
  }
  pthread_mutex_unlock(&hal_trace_flushes.mutex);
}

// Copies the first |length| bytes of |from| into |to|, which holds nothing
// yet and is left at |length|: in the kernel where it can (no formatting,
// and a filesystem that shares extents shares them), else through a
// buffer. false on any failure.
static bool hal_trace_copy_prefix(int from, int to, off_t length) {
  off_t in = 0;
  bool in_kernel = true;
  char* chunk = NULL;
  enum { kChunk = 1 << 16 };
  while (in < length) {
    if (in_kernel) {
      ssize_t n =
          copy_file_range(from, &in, to, NULL, (size_t)(length - in), 0);
      if (n > 0 || (n < 0 && errno == EINTR))
        continue;
      // Not between these two files (another filesystem, an old kernel):
      // the same bytes through user space.
      if (n < 0 && in == 0 &&
          (errno == EXDEV || errno == ENOSYS || errno == EINVAL ||
           errno == EOPNOTSUPP)) {
        in_kernel = false;
        continue;
      }
      break;  // a failure, or the file is shorter than it was
    }
    if (!chunk && !(chunk = malloc(kChunk)))
      break;
    size_t want = length - in < kChunk ? (size_t)(length - in) : kChunk;
    ssize_t n = pread(from, chunk, want, in);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    ssize_t done = 0;
    while (done < n) {
      ssize_t w = write(to, chunk + done, (size_t)(n - done));
      if (w < 0 && errno == EINTR)
        continue;
      if (w <= 0)
        break;
      done += w;
    }
    if (done < n)
      break;
    in += n;
  }
  free(chunk);
  return in == length;
}

// The file at HAL_TRACE as the last write left it, open for reading; -1
// when the last write failed, or the file there is another one (removed,
// replaced, or written since: its inode, size, times or ends differ). The
// next write then formats the whole run again.
static int hal_trace_open_previous(void) {
  if (!hal_trace_file.valid)
    return -1;
  // Non-blocking: a FIFO planted under the name is no file to wait on.
  int fd = open(hal_trace.path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    return -1;
  size_t closing = strlen(hal_trace_file.closing);
  struct stat st;
  bool same = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
              st.st_dev == hal_trace_file.device &&
              st.st_ino == hal_trace_file.inode &&
              st.st_size == hal_trace_file.body_end + (off_t)closing &&
              st.st_mtim.tv_sec == hal_trace_file.modified.tv_sec &&
              st.st_mtim.tv_nsec == hal_trace_file.modified.tv_nsec &&
              st.st_ctim.tv_sec == hal_trace_file.changed.tv_sec &&
              st.st_ctim.tv_nsec == hal_trace_file.changed.tv_nsec;
  // Its times are as coarse as the kernel's tick: a write into it in place
  // that kept its size may keep them too, so its two ends are read back.
  size_t opening = strlen(HAL_TRACE_OPENING);
  char read_back[sizeof(hal_trace_file.closing)];
  same = same &&
         pread(fd, read_back, closing, hal_trace_file.body_end) ==
             (ssize_t)closing &&
         memcmp(read_back, hal_trace_file.closing, closing) == 0 &&
         pread(fd, read_back, opening, 0) == (ssize_t)opening &&
         memcmp(read_back, HAL_TRACE_OPENING, opening) == 0;
  if (!same) {
    close(fd);
    return -1;
  }
  return fd;
}

// The metadata record that names track or thread |id|.
static void hal_trace_write_name(FILE* file, uint32_t id, const char* name,
                                 bool* first) {
  fprintf(file,
          "%s\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,"
          "\"tid\":%" PRIu32 ",\"args\":{\"name\":\"",
          *first ? "" : ",", id);
  hal_trace_write_string(file, name);
  fprintf(file, "\"}}");
  *first = false;
}

// One write at a time (hal_trace_write_in_turn).
//
// The file is records (events, and the metadata that names threads and
// tracks) then a closing part (the counts). A write makes a new file beside
// it and renames it over it: a reader never sees half a file, and a crash
// during the write keeps the last complete one. The new file is the old
// one's records, copied as bytes, then the records since, then the closing
// part: each event is formatted once, so a program that writes its trace
// at every device release (each one is a write) pays for its events once,
// not once per release. Within a thread's track the records keep their
// order; across tracks it is the order of the writes.
static void hal_trace_write(void) {
  char temporary[sizeof(hal_trace.path) + 8];
  FILE* file = hal_trace_open_temporary(hal_trace.path, hal_trace.mode,
                                        temporary, sizeof(temporary));
  if (!file) {
    fprintf(stderr, "hal: cannot write the trace %s\n", hal_trace.path);
    return;
  }
  int previous = hal_trace_open_previous();
  bool appending =
      previous >= 0 &&
      hal_trace_copy_prefix(previous, fileno(file), hal_trace_file.body_end) &&
      fseeko(file, hal_trace_file.body_end, SEEK_SET) == 0;
  if (previous >= 0)
    close(previous);
  hal_trace_file.valid = false;  // until this write is in place
  bool ok = true;
  if (!appending) {
    // The whole run, from the start (nothing of a failed copy kept).
    ok = ftruncate(fileno(file), 0) == 0 && fseeko(file, 0, SEEK_SET) == 0;
    hal_trace_file.tracks_named = NULL;
    for (hal_trace_buffer_t* buffer =
             atomic_load_explicit(&hal_trace.buffers, memory_order_acquire);
         buffer; buffer = buffer->next) {
      buffer->written = 0;
      buffer->named = false;
    }
    fputs(HAL_TRACE_OPENING, file);
  }
  // One cut of the run: the events numbered below |cut|. Every one of them
  // is in its buffer by the time this takes that buffer's lock (it was
  // numbered under it), none numbered after is, and an event that happened
  // before one written has the smaller number: an end is never written
  // without its begin, whichever threads appended them. A buffer's events
  // are in the order of their numbers, so the file holds, of each buffer,
  // the events before |written|, and adds those from there below the cut.
  uint64_t cut =
      atomic_load_explicit(&hal_trace.next_seq, memory_order_acquire);
  // The first record takes no comma before it.
  bool first =
      !appending || hal_trace_file.body_end == (off_t)strlen(HAL_TRACE_OPENING);
  for (hal_trace_buffer_t* buffer =
           atomic_load_explicit(&hal_trace.buffers, memory_order_acquire);
       buffer; buffer = buffer->next) {
    if (!buffer->named) {
      hal_trace_write_name(
          file, buffer->thread_id,
          buffer->thread_name[0] ? buffer->thread_name : "thread", &first);
      buffer->named = true;
    }
    // A few hundred events per hold of the buffer's lock: its thread, which
    // appends under it, waits for at most that much of the write. Between
    // holds the arrays may move (re-read under the lock) but the events
    // below the cut stay as they are: only events numbered later come.
    size_t i = buffer->written;
    for (bool more = true; more;) {
      pthread_mutex_lock(&buffer->mutex);
      size_t end = i + HAL_TRACE_WRITE_BATCH;
      for (; i < buffer->count && i < end && buffer->events[i].seq < cut; ++i)
        hal_trace_write_event(file, buffer, &buffer->events[i], &first);
      more = i < buffer->count && buffer->events[i].seq < cut;
      pthread_mutex_unlock(&buffer->mutex);
    }
    buffer->written = i;
  }
  // Tracks are named once each: those pushed since the last write are
  // the list's head down to the first the file names.
  hal_trace_track_t* tracks =
      atomic_load_explicit(&hal_trace.tracks, memory_order_acquire);
  for (hal_trace_track_t* track = tracks;
       track && track != hal_trace_file.tracks_named; track = track->next) {
    hal_trace_write_name(file, track->id, track->name, &first);
  }
  off_t body_end = ftello(file);
  snprintf(hal_trace_file.closing, sizeof(hal_trace_file.closing),
           "\n],\"otherData\":{\"dropped_events\":%" PRIu64
           ",\"dropped_device_spans\":%" PRIu64 ",\"max_mb\":%" PRIu64 "}}\n",
           hal_trace_dropped(), hal_trace_dropped_spans(),
           hal_trace.max_bytes / (1024 * 1024));
  fputs(hal_trace_file.closing, file);
  // The file's identity is read once it is in place: the rename sets its
  // change time, which no one can set back (utime sets only the others).
  int kept = ok && body_end >= 0 ? fcntl(fileno(file), F_DUPFD_CLOEXEC, 0) : -1;
  ok = fclose(file) == 0 && kept >= 0;
  ok = ok && rename(temporary, hal_trace.path) == 0;
  if (!ok) {
    unlink(temporary);
    fprintf(stderr, "hal: cannot write the trace %s\n", hal_trace.path);
  }
  struct stat st;
  bool known = ok && fstat(kept, &st) == 0;
  if (kept >= 0)
    close(kept);
  if (!known)
    return;  // the next write starts over
  hal_trace_file.valid = true;
  hal_trace_file.device = st.st_dev;
  hal_trace_file.inode = st.st_ino;
  hal_trace_file.modified = st.st_mtim;
  hal_trace_file.changed = st.st_ctim;
  hal_trace_file.body_end = body_end;
  hal_trace_file.tracks_named = tracks;
}
