// Copyright 2026 The HAL Authors.
//
// hal_status_t: the one error convention of the project.
//
// A status is a pointer: NULL means OK, so returning and testing success is a
// register compare and costs no allocation. A failure owns a heap message
// that carries a code, the file:line where it was made and any number of
// annotations added as it propagates up the stack:
//
//   INVALID_ARGUMENT: hal/buffer.c:88: offset 12 + length 8 exceeds buffer
//   size 16; hal/device.c:40: while writing buffer 'weights'
//
// Ownership: whoever holds a non-OK status must pass it on (return it, store
// it) or free it with hal_status_free()/hal_status_ignore(). Statuses are
// immutable once returned and may be read from any thread; annotating
// consumes the status it is given and returns the (possibly reallocated) one.
//
// A message is at most HAL_STATUS_MESSAGE_MAX bytes, as made (a longer one
// keeps its beginning and says how many bytes followed) and once annotated,
// so a failure handed down a chain of any length (each semaphore,
// submission or token it fails annotates its own copy) costs a bounded
// amount per copy.
// An annotation that would pass the bound elides the middle: the message
// keeps its head (the failure itself and its first annotations, up to 1 KiB)
// and its newest annotations, with "[... N bytes of annotations elided ...]"
// between them.
//
// When memory for a message cannot be allocated, a static status with the
// right code and a fixed message is returned instead; freeing it is a no-op.
// Error paths therefore never fail a second time.
//
// Thread-safety: all functions are thread-safe.

#ifndef HAL_STATUS_H_
#define HAL_STATUS_H_

#include <stdarg.h>
#include <stdio.h>

#include "hal/base.h"

HAL_EXTERN_C_BEGIN

// Codes follow the usual canonical set (absl/gRPC) so they map onto other
// runtimes' conventions without surprise. Values are stable ABI.
typedef enum hal_status_code_e {
  HAL_STATUS_OK = 0,
  HAL_STATUS_CANCELLED = 1,
  HAL_STATUS_UNKNOWN = 2,
  HAL_STATUS_INVALID_ARGUMENT = 3,
  HAL_STATUS_DEADLINE_EXCEEDED = 4,
  HAL_STATUS_NOT_FOUND = 5,
  HAL_STATUS_ALREADY_EXISTS = 6,
  HAL_STATUS_PERMISSION_DENIED = 7,
  HAL_STATUS_RESOURCE_EXHAUSTED = 8,
  HAL_STATUS_FAILED_PRECONDITION = 9,
  HAL_STATUS_ABORTED = 10,
  HAL_STATUS_OUT_OF_RANGE = 11,
  HAL_STATUS_UNIMPLEMENTED = 12,
  HAL_STATUS_INTERNAL = 13,
  HAL_STATUS_UNAVAILABLE = 14,
  HAL_STATUS_DATA_LOSS = 15,
  HAL_STATUS_UNAUTHENTICATED = 16,
  // An interface version does not match (plugin ABI, struct size).
  HAL_STATUS_INCOMPATIBLE = 17,
  // The device can run no more work (the vendor reported an error after
  // which its context is unusable: illegal address, ECC, ...). Every later
  // operation on it fails, and so does every semaphore it created (Q5).
  // Only a driver's own conversion of a vendor result makes this code, so
  // a status never becomes a device loss through its message.
  HAL_STATUS_DEVICE_LOST = 18,
  HAL_STATUS_CODE_COUNT_ = 19,
} hal_status_code_t;

typedef struct hal_status_storage_t* hal_status_t;

// The longest message annotating makes (above).
#define HAL_STATUS_MESSAGE_MAX 4096

#define HAL_OK ((hal_status_t)NULL)

// Makes a status with |code| (not OK) and a printf-style message. The call
// site is recorded: use the hal_make_status() macro.
HAL_API hal_status_t hal_status_allocate(hal_status_code_t code,
                                         const char* file, int line,
                                         const char* format, ...)
    HAL_PRINTF_LIKE(4, 5);
HAL_API hal_status_t hal_status_allocatev(hal_status_code_t code,
                                          const char* file, int line,
                                          const char* format, va_list args)
    HAL_PRINTF_LIKE(4, 0);

// Appends context to |status| and returns it (OK stays OK and no message is
// formatted). Consumes |status|: use only the returned value afterwards.
HAL_API hal_status_t hal_status_annotate(hal_status_t status, const char* file,
                                         int line, const char* format, ...)
    HAL_PRINTF_LIKE(4, 5);

// A new status with the same code and message, owned by the caller.
HAL_API hal_status_t hal_status_clone(hal_status_t status);

HAL_API void hal_status_free(hal_status_t status);

// The code of |status|; HAL_STATUS_OK for NULL.
HAL_API hal_status_code_t hal_status_code(hal_status_t status);

// The message with its annotations ("" for OK). Valid until freed.
HAL_API const char* hal_status_message(hal_status_t status);

// "INVALID_ARGUMENT" etc; "UNKNOWN_CODE(n)" is never returned: out-of-range
// codes read "UNKNOWN".
HAL_API const char* hal_status_code_string(hal_status_code_t code);

// Writes "CODE: message" (or "OK") into |buffer| of |capacity| bytes,
// truncating; returns the full length it wanted, like snprintf.
HAL_API size_t hal_status_format(hal_status_t status, char* buffer,
                                 size_t capacity);

// Prints "CODE: message\n" to |stream|.
HAL_API void hal_status_fprint(FILE* stream, hal_status_t status);

// Frees |status| and returns its code: for callers that only branch on it.
HAL_API hal_status_code_t hal_status_consume_code(hal_status_t status);

static inline bool hal_status_is_ok(hal_status_t status) {
  return HAL_LIKELY(status == HAL_OK);
}

static inline bool hal_status_is(hal_status_t status, hal_status_code_t code) {
  return hal_status_code(status) == code;
}

// Explicitly drops a status whose failure does not matter here. Prefer
// handling it; a call to this is a statement that the error is benign.
static inline void hal_status_ignore(hal_status_t status) {
  hal_status_free(status);
}

#define hal_make_status(code, ...) \
  hal_status_allocate((code), __FILE__, __LINE__, __VA_ARGS__)

#define hal_status_annotatef(status, ...) \
  hal_status_annotate((status), __FILE__, __LINE__, __VA_ARGS__)

#define HAL_STATUS_CONCAT_INNER_(a, b) a##b
#define HAL_STATUS_CONCAT_(a, b) HAL_STATUS_CONCAT_INNER_(a, b)

// Returns from the enclosing function if |expr| fails.
#define HAL_RETURN_IF_ERROR(expr)                                    \
  do {                                                               \
    hal_status_t HAL_STATUS_CONCAT_(status_, __LINE__) = (expr);     \
    if (HAL_UNLIKELY(HAL_STATUS_CONCAT_(status_, __LINE__) != NULL)) \
      return HAL_STATUS_CONCAT_(status_, __LINE__);                  \
  } while (0)

// Returns from the enclosing function if |expr| fails, adding context.
#define HAL_RETURN_AND_ANNOTATE_IF_ERROR(expr, ...)                     \
  do {                                                                  \
    hal_status_t HAL_STATUS_CONCAT_(status_, __LINE__) = (expr);        \
    if (HAL_UNLIKELY(HAL_STATUS_CONCAT_(status_, __LINE__) != NULL))    \
      return hal_status_annotate(HAL_STATUS_CONCAT_(status_, __LINE__), \
                                 __FILE__, __LINE__, __VA_ARGS__);      \
  } while (0)

HAL_EXTERN_C_END

#endif  // HAL_STATUS_H_
