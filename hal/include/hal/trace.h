// Copyright 2026 The HAL Authors.
//
// Tracing: HAL_TRACE=FILE writes a Chrome Trace Event file (JSON) of what
// the HAL did, which Perfetto UI (ui.perfetto.dev), chrome://tracing and
// speedscope open. docs/tracing.md has what it holds.
//
// Nothing is lost (K11): every thread appends to its own buffer, which
// grows (never overwrites); HAL_TRACE_MAX_MB bounds them all together, and
// then the first event that did not fit and every one after it are counted,
// not written, and the file says how many (otherData.dropped_events): a
// bounded file is the run up to the bound, never an end without its begin. The
// file is written whole, so it is valid after any flush: at every device's last
// release and at process exit. A fork() child records and writes nothing:
// the file is the process's that loaded libhal.
//
// Off (HAL_TRACE unset), each event site costs one predictable branch on
// hal_trace_enabled().
//
// For libhal and drivers; programs only set HAL_TRACE (hal-run --trace).

#ifndef HAL_TRACE_H_
#define HAL_TRACE_H_

#include "hal/base.h"
#include "hal/status.h"

HAL_EXTERN_C_BEGIN

// Set once at load when HAL_TRACE names a file; never changes after, but
// for its clearing in a fork() child.
extern HAL_API bool hal_trace_on;
static inline bool hal_trace_enabled(void) {
  return __builtin_expect(hal_trace_on, 0);
}

// A track (a row in the viewer) for a queue: its events are the queue's
// submissions. |name| is copied. Returns its id (0 when tracing is off).
HAL_API uint32_t hal_trace_track(const char* name);

// The events. |name| and |category| are copied (cut at 47 and 15 bytes);
// |args| is a JSON object body without braces ("\"queue\": 1") or NULL,
// copied. A plugin may be unloaded before the file is written. |track| 0 means
// the calling thread.
//   complete: a span [start_ns, start_ns + duration) (ph "X");
//   instant:  a moment (ph "i");
//   begin/end: an async span on a track, paired by |id| (ph "b"/"e");
//   flow_start/flow_end: an arrow from one event to another (ph "s"/"f");
//   counter: a value over time (ph "C"), |args| the series.
HAL_API void hal_trace_complete(const char* category, const char* name,
                                uint64_t start_ns, const char* args);
// A span [start_ns, start_ns + duration_ns) on |track| (ph "X") whose
// times were measured elsewhere (a device's timed events, mapped to host
// time). Spans on one track nest by containment.
HAL_API void hal_trace_span(uint32_t track, const char* category,
                            const char* name, uint64_t start_ns,
                            uint64_t duration_ns, const char* args);
HAL_API void hal_trace_instant(uint32_t track, const char* category,
                               const char* name, const char* args);
HAL_API void hal_trace_begin(uint32_t track, const char* category,
                             const char* name, uint64_t id, const char* args);
HAL_API void hal_trace_end(uint32_t track, const char* category,
                           const char* name, uint64_t id, const char* args);
HAL_API void hal_trace_flow_start(uint32_t track, const char* category,
                                  uint64_t id);
// A flow's start at |at_ns| (host time, hal_time_now()) rather than now.
HAL_API void hal_trace_flow_start_at(uint32_t track, const char* category,
                                     uint64_t id, uint64_t at_ns);
HAL_API void hal_trace_flow_end(uint32_t track, const char* category,
                                uint64_t id);
HAL_API void hal_trace_counter(uint32_t track, const char* name,
                               const char* args);

// A fresh id for an async span or a flow.
HAL_API uint64_t hal_trace_next_id(void);

// The id of the last submission the calling thread handed to a queue (0:
// none), for the flow from the call that made it (queue_execute) to its
// completion. Set by the sync module's submit, before it traces the
// submission's begin; read and cleared by libhal, with the time it was set
// in |*out_at_ns|: the flow starts then, so its arrow never ends before it
// starts, even for a submission that completes before the call returns.
HAL_API void hal_trace_set_last_submission(uint64_t id);
HAL_API uint64_t hal_trace_take_last_submission(uint64_t* out_at_ns);

// The submission the calling thread (a queue's WORKER) is issuing now (0:
// none), so a driver can name it in the device spans it records. Set and
// cleared by the sync module around its issue hook.
HAL_API void hal_trace_set_issuing_submission(uint64_t id);
HAL_API uint64_t hal_trace_issuing_submission(void);

// |status| as args: "\"status\": \"OK\"", or its code and as much of its
// message as fits, always closed (quotes, backslashes, control characters,
// DEL included, and bytes past ASCII become '?'); an empty string where
// |capacity| does not hold even the code.
#define HAL_TRACE_STATUS_ARGS 160
HAL_API void hal_trace_status_args(hal_status_t status, char* args,
                                   size_t capacity);

// A list of (semaphore, value) pairs as the text of an args string:
// "0x55d0c1a0@3 0x55d0c1b0@7 +2 more". Each call appends one pair to |out|
// (|capacity| bytes, |*length| used, NUL-terminated), or returns false,
// appending nothing, when it would leave no room for the " +N more" that
// hal_trace_append_more() then writes.
HAL_API bool hal_trace_append_semaphore(char* out, size_t capacity,
                                        size_t* length, const void* semaphore,
                                        uint64_t value);
HAL_API void hal_trace_append_more(char* out, size_t capacity, size_t* length,
                                   size_t more);

// |text| made safe inside a JSON string of args (as above), cut to fit.
HAL_API void hal_trace_json_text(char* out, size_t capacity, const char* text);

// Writes the file now (whole: every event so far). Any thread. Flushes are
// served in turn: a caller waits for at most the write under way when it
// asked and the next one, so a thread flushing in a loop keeps no other
// flush waiting longer; a thread's first event and hal_trace_track() never
// wait for a write, and recording an event waits at most for the write of
// a few hundred events of the thread's own buffer. Once the process's exit
// has asked for its write, a flush does nothing (the exit's file holds
// every event the flush would have).
HAL_API void hal_trace_flush(void);

// Events dropped so far: the first that did not fit under
// HAL_TRACE_MAX_MB, and every one after it.
HAL_API uint64_t hal_trace_dropped(void);

// Device spans a driver could not write (an event it could not make or
// record, a time it could not read), counted as they are lost, so every
// flush says how many so far (otherData.dropped_device_spans), the one at
// the exit of a program that never released its device included.
HAL_API void hal_trace_count_dropped_spans(uint64_t count);
HAL_API uint64_t hal_trace_dropped_spans(void);

HAL_EXTERN_C_END

#endif  // HAL_TRACE_H_
