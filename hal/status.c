// Copyright 2026 The HAL Authors.

#include "hal/status.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

// A failed status. |is_static| marks the out-of-memory fallbacks below, which
// live in read-only-by-convention storage and are never freed.
struct hal_status_storage_t {
  hal_status_code_t code;
  bool is_static;
  size_t length;  // strlen(message)
  // Once annotations were elided (HAL_STATUS_MESSAGE_MAX): the message is
  // message[0, head_length), the elision marker, then message[tail_offset,
  // length), the newest annotations. Both 0 before.
  size_t head_length;
  size_t tail_offset;
  uint64_t elided_bytes;  // dropped so far, over every elision
  char* message;  // the bytes right after the struct, or a static string
};

// The oldest part of a message kept when annotations are elided: the
// failure itself and the first annotations, up to this many bytes.
#define HAL_STATUS_HEAD_MAX 1024
// Room for the marker: "; [... N bytes of annotations elided ...]".
#define HAL_STATUS_MARKER_MAX 64

// One fallback per code, used when a message cannot be allocated. They are
// only ever read after initialization, so sharing them between threads is
// safe.
#define HAL_STATIC_STATUS_MESSAGE "(out of memory while formatting the message)"
#define HAL_STATIC_STATUS(c)                         \
  {                                                  \
    .code = (c), .is_static = true,                  \
    .length = sizeof(HAL_STATIC_STATUS_MESSAGE) - 1, \
    .message = (char*)HAL_STATIC_STATUS_MESSAGE      \
  }

static struct hal_status_storage_t hal_static_statuses[HAL_STATUS_CODE_COUNT_] =
    {
        HAL_STATIC_STATUS(HAL_STATUS_OK),  // never handed out
        HAL_STATIC_STATUS(HAL_STATUS_CANCELLED),
        HAL_STATIC_STATUS(HAL_STATUS_UNKNOWN),
        HAL_STATIC_STATUS(HAL_STATUS_INVALID_ARGUMENT),
        HAL_STATIC_STATUS(HAL_STATUS_DEADLINE_EXCEEDED),
        HAL_STATIC_STATUS(HAL_STATUS_NOT_FOUND),
        HAL_STATIC_STATUS(HAL_STATUS_ALREADY_EXISTS),
        HAL_STATIC_STATUS(HAL_STATUS_PERMISSION_DENIED),
        HAL_STATIC_STATUS(HAL_STATUS_RESOURCE_EXHAUSTED),
        HAL_STATIC_STATUS(HAL_STATUS_FAILED_PRECONDITION),
        HAL_STATIC_STATUS(HAL_STATUS_ABORTED),
        HAL_STATIC_STATUS(HAL_STATUS_OUT_OF_RANGE),
        HAL_STATIC_STATUS(HAL_STATUS_UNIMPLEMENTED),
        HAL_STATIC_STATUS(HAL_STATUS_INTERNAL),
        HAL_STATIC_STATUS(HAL_STATUS_UNAVAILABLE),
        HAL_STATIC_STATUS(HAL_STATUS_DATA_LOSS),
        HAL_STATIC_STATUS(HAL_STATUS_UNAUTHENTICATED),
        HAL_STATIC_STATUS(HAL_STATUS_INCOMPATIBLE),
        HAL_STATIC_STATUS(HAL_STATUS_DEVICE_LOST),
};

static const char* const hal_status_code_names[HAL_STATUS_CODE_COUNT_] = {
    "OK",
    "CANCELLED",
    "UNKNOWN",
    "INVALID_ARGUMENT",
    "DEADLINE_EXCEEDED",
    "NOT_FOUND",
    "ALREADY_EXISTS",
    "PERMISSION_DENIED",
    "RESOURCE_EXHAUSTED",
    "FAILED_PRECONDITION",
    "ABORTED",
    "OUT_OF_RANGE",
    "UNIMPLEMENTED",
    "INTERNAL",
    "UNAVAILABLE",
    "DATA_LOSS",
    "UNAUTHENTICATED",
    "INCOMPATIBLE",
    "DEVICE_LOST",
};

static hal_status_code_t hal_status_code_sanitize(hal_status_code_t code) {
  if ((int)code <= 0 || code >= HAL_STATUS_CODE_COUNT_) {
    return HAL_STATUS_UNKNOWN;
  }
  return code;
}

static hal_status_t hal_status_static(hal_status_code_t code) {
  return &hal_static_statuses[hal_status_code_sanitize(code)];
}

// __FILE__ is relative to the build directory ("../hal/buffer.c", or
// "../../src/hal/hal/buffer.c" for an out-of-tree build). Keep the path from
// the project's top-level folder on, so messages read the same everywhere.
static const char* hal_status_trim_file(const char* file) {
  if (!file)
    return "?";
  static const char* const kTopFolders[] = {"hal/", "drivers/", "vgpu/",
                                            "tools/", "cts/"};
  for (const char* p = file; *p;
       p = strchr(p, '/') ? strchr(p, '/') + 1 : p + strlen(p)) {
    for (size_t i = 0; i < sizeof(kTopFolders) / sizeof(kTopFolders[0]); ++i) {
      if (strncmp(p, kTopFolders[i], strlen(kTopFolders[i])) == 0)
        return p;
    }
  }
  while (file[0] == '.' && file[1] == '.' && file[2] == '/')
    file += 3;
  return file;
}

// One part of a message, "SEPARATOR FILE:LINE: BODY": its two lengths
// (prefix, body), false when either cannot be formatted. A NULL format
// reads as an empty body; the callers pass "" for it rather than choose
// at each call, so no call formats with a literal "" (clang warns).
HAL_PRINTF_LIKE(4, 0)
static bool hal_status_part_measure(const char* separator, const char* file,
                                    int line, const char* format, va_list args,
                                    int lengths[2]) {
  va_list args_copy;
  va_copy(args_copy, args);
  lengths[0] = snprintf(NULL, 0, "%s%s:%d: ", separator, file, line);
  lengths[1] = vsnprintf(NULL, 0, format, args_copy);
  va_end(args_copy);
  return lengths[0] >= 0 && lengths[1] >= 0;
}

// Writes the part measured into |out| (lengths[0] + lengths[1] + 1 bytes).
HAL_PRINTF_LIKE(5, 0)
static void hal_status_part_write(char* out, const char* separator,
                                  const char* file, int line,
                                  const char* format, va_list args,
                                  const int lengths[2]) {
  snprintf(out, (size_t)lengths[0] + 1, "%s%s:%d: ", separator, file, line);
  vsnprintf(out + lengths[0], (size_t)lengths[1] + 1, format, args);
}

HAL_API hal_status_t hal_status_allocatev(hal_status_code_t code,
                                          const char* file, int line,
                                          const char* format, va_list args) {
  code = hal_status_code_sanitize(code);
  file = hal_status_trim_file(file);
  if (!format)
    format = "";
  int lengths[2];
  if (!hal_status_part_measure("", file, line, format, args, lengths))
    return hal_status_static(code);
  size_t length = (size_t)lengths[0] + (size_t)lengths[1];
  struct hal_status_storage_t* storage = malloc(sizeof(*storage) + length + 1);
  if (!storage)
    return hal_status_static(code);
  storage->code = code;
  storage->is_static = false;
  storage->length = length;
  storage->head_length = 0;
  storage->tail_offset = 0;
  storage->elided_bytes = 0;
  storage->message = (char*)(storage + 1);
  hal_status_part_write(storage->message, "", file, line, format, args,
                        lengths);
  if (length > HAL_STATUS_MESSAGE_MAX) {
    // Within the bound from the start (a message quoting a long input):
    // its head is kept, the rest said in a marker, as an elision does.
    char marker[HAL_STATUS_MARKER_MAX];
    int marker_length =
        snprintf(marker, sizeof(marker), " [... %zu more bytes elided ...]",
                 length - (HAL_STATUS_MESSAGE_MAX - HAL_STATUS_MARKER_MAX));
    if (marker_length > 0 && marker_length < (int)sizeof(marker)) {
      size_t kept = HAL_STATUS_MESSAGE_MAX - HAL_STATUS_MARKER_MAX;
      memcpy(storage->message + kept, marker, (size_t)marker_length + 1);
      storage->length = kept + (size_t)marker_length;
      struct hal_status_storage_t* shrunk =
          realloc(storage, sizeof(*storage) + storage->length + 1);
      if (shrunk) {
        storage = shrunk;
        storage->message = (char*)(storage + 1);
      }
    }
  }
  return storage;
}

HAL_API hal_status_t hal_status_allocate(hal_status_code_t code,
                                         const char* file, int line,
                                         const char* format, ...) {
  va_list args;
  va_start(args, format);
  hal_status_t status = hal_status_allocatev(code, file, line, format, args);
  va_end(args);
  return status;
}

// Where a first elision cuts |message|: after the longest run of whole
// parts ("; "-separated) that fits HAL_STATUS_HEAD_MAX, or inside the first
// part when that alone is longer.
static size_t hal_status_head_length(const char* message, size_t length) {
  size_t head = 0;
  for (const char* p = strstr(message, "; ");
       p && (size_t)(p - message) <= HAL_STATUS_HEAD_MAX;
       p = strstr(p + 2, "; ")) {
    head = (size_t)(p - message);
  }
  if (head == 0)
    head = length < HAL_STATUS_HEAD_MAX ? length : HAL_STATUS_HEAD_MAX;
  return head;
}

// |status| with |part| appended, its middle annotations elided so that the
// message stays within HAL_STATUS_MESSAGE_MAX: the head (the failure and
// its first annotations) and the newest annotations are kept. NULL when
// out of memory (|status| untouched).
static struct hal_status_storage_t* hal_status_elide(
    struct hal_status_storage_t* status, const char* part, size_t part_length) {
  size_t head = status->head_length
                    ? status->head_length
                    : hal_status_head_length(status->message, status->length);
  size_t tail_start = status->head_length ? status->tail_offset : head;
  const char* old_tail = status->message + tail_start;
  size_t old_tail_length = status->length - tail_start;
  size_t budget = HAL_STATUS_MESSAGE_MAX - head - HAL_STATUS_MARKER_MAX;
  // Drop the oldest tail bytes, at an annotation's "; " where one lies in
  // reach, until the tail and the new part fit the budget.
  size_t total = old_tail_length + part_length;
  size_t cut = total > budget ? total - budget : 0;
  if (cut > 0 && cut < old_tail_length) {
    const char* boundary = strstr(old_tail + cut, "; ");
    cut = boundary ? (size_t)(boundary - old_tail) : old_tail_length;
  }
  uint64_t elided = status->elided_bytes + cut;
  char marker[HAL_STATUS_MARKER_MAX];
  int marker_length =
      snprintf(marker, sizeof(marker),
               "; [... %" PRIu64 " bytes of annotations elided ...]", elided);
  if (marker_length < 0 || marker_length >= (int)sizeof(marker))
    return NULL;
  // What is kept of the old tail, then of the part (all of it unless the
  // part alone overflows the budget: then its newest bytes).
  size_t old_kept = cut < old_tail_length ? old_tail_length - cut : 0;
  size_t part_cut = cut > old_tail_length ? cut - old_tail_length : 0;
  size_t length =
      head + (size_t)marker_length + old_kept + (part_length - part_cut);
  struct hal_status_storage_t* grown = malloc(sizeof(*grown) + length + 1);
  if (!grown)
    return NULL;
  *grown = *status;
  grown->message = (char*)(grown + 1);
  char* out = grown->message;
  memcpy(out, status->message, head);
  out += head;
  memcpy(out, marker, (size_t)marker_length);
  out += marker_length;
  memcpy(out, old_tail + cut, old_kept);
  out += old_kept;
  memcpy(out, part + part_cut, part_length - part_cut);
  out += part_length - part_cut;
  *out = '\0';
  grown->length = length;
  grown->head_length = head;
  grown->tail_offset = head + (size_t)marker_length;
  grown->elided_bytes = elided;
  free(status);
  return grown;
}

HAL_API hal_status_t hal_status_annotate(hal_status_t status, const char* file,
                                         int line, const char* format, ...) {
  if (status == HAL_OK)
    return HAL_OK;
  if (status->is_static)
    return status;  // nothing more can be said
  file = hal_status_trim_file(file);
  if (!format)
    format = "";
  va_list args;
  va_start(args, format);
  int lengths[2];
  struct hal_status_storage_t* grown = NULL;
  if (hal_status_part_measure("; ", file, line, format, args, lengths)) {
    size_t old_length = status->length;
    size_t part_length = (size_t)lengths[0] + (size_t)lengths[1];
    size_t new_length = old_length + part_length;
    if (new_length <= HAL_STATUS_MESSAGE_MAX) {
      // On failure the original message is kept rather than lost.
      grown = realloc(status, sizeof(*status) + new_length + 1);
      if (grown) {
        grown->message = (char*)(grown + 1);
        hal_status_part_write(grown->message + old_length, "; ", file, line,
                              format, args, lengths);
        grown->length = new_length;
      }
    } else {
      char* part = malloc(part_length + 1);
      if (part) {
        hal_status_part_write(part, "; ", file, line, format, args, lengths);
        grown = hal_status_elide(status, part, part_length);
        free(part);
      }
    }
  }
  va_end(args);
  return grown ? grown : status;
}

HAL_API hal_status_t hal_status_clone(hal_status_t status) {
  if (status == HAL_OK || status->is_static)
    return status;
  struct hal_status_storage_t* copy =
      malloc(sizeof(*status) + status->length + 1);
  if (!copy)
    return hal_status_static(status->code);
  memcpy(copy, status, sizeof(*status) + status->length + 1);
  copy->message = (char*)(copy + 1);
  return copy;
}

HAL_API void hal_status_free(hal_status_t status) {
  if (status == HAL_OK || status->is_static)
    return;
  free(status);
}

HAL_API hal_status_code_t hal_status_code(hal_status_t status) {
  return status == HAL_OK ? HAL_STATUS_OK : status->code;
}

HAL_API const char* hal_status_message(hal_status_t status) {
  return status == HAL_OK ? "" : status->message;
}

HAL_API const char* hal_status_code_string(hal_status_code_t code) {
  if ((int)code < 0 || code >= HAL_STATUS_CODE_COUNT_)
    return "UNKNOWN";
  return hal_status_code_names[code];
}

HAL_API size_t hal_status_format(hal_status_t status, char* buffer,
                                 size_t capacity) {
  int length;
  if (status == HAL_OK) {
    length = snprintf(buffer, capacity, "OK");
  } else {
    length = snprintf(buffer, capacity, "%s: %s",
                      hal_status_code_string(status->code), status->message);
  }
  return length < 0 ? 0 : (size_t)length;
}

HAL_API void hal_status_fprint(FILE* stream, hal_status_t status) {
  if (status == HAL_OK) {
    fprintf(stream, "OK\n");
  } else {
    fprintf(stream, "%s: %s\n", hal_status_code_string(status->code),
            status->message);
  }
}

HAL_API hal_status_code_t hal_status_consume_code(hal_status_t status) {
  hal_status_code_t code = hal_status_code(status);
  hal_status_free(status);
  return code;
}
