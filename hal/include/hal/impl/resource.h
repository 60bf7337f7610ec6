// Copyright 2026 The HAL Authors.
//
// hal_resource_t for implementations: the reference-counted base every HAL
// object starts with, its kinds, checks and casts, and libhal's deferred
// destruction.
//
// Every object type (driver, device, buffer, semaphore, command buffer...)
// starts with a hal_resource_t at offset 0, and every vtable starts with a
// destroy function taking the object. Each object header has a
// static_assert on that layout.
//
//   typedef struct my_buffer_t {
//     hal_buffer_t base;   // starts with hal_resource_t
//     ...
//   } my_buffer_t;
//
// Lifetime rules:
//  - create/retain/release: the creator holds one reference; retain adds
//    one; the release that drops the count to zero calls vtable->destroy.
//  - |parent| (optional) is a resource this one keeps alive, e.g. a device
//    keeps its driver alive. libhal releases the parent AFTER destroy has
//    returned, so a driver's code is never unloaded under its own feet (the
//    driver holds the plugin's shared object open; see driver_registry.h).
//    Drivers never release an object's parent themselves.
//  - The count is atomic: retain/release are thread-safe. Destroy runs on
//    whichever thread dropped the last reference, except on threads marked
//    with hal_resource_defer_destruction_enter() (see below).

#ifndef HAL_IMPL_RESOURCE_H_
#define HAL_IMPL_RESOURCE_H_

#include <assert.h>

#include "hal/base.h"
#include "hal/resource.h"
#include "hal/status.h"
#include "hal/time.h"

// An atomic member of a struct that implementations share (a resource's
// count, a command buffer's in-flight count). C code uses C11 atomics on
// it. A C++ implementation sees std::atomic of the same type, which GCC's
// and Clang's standard libraries lay out as C's _Atomic (the bridge C++23's
// <stdatomic.h> makes official), so the structs keep one layout.
#ifdef __cplusplus
#include <atomic>
#define HAL_ATOMIC(type) std::atomic<type>
#else
#include <stdatomic.h>
#define HAL_ATOMIC(type) _Atomic(type)
#endif

HAL_EXTERN_C_BEGIN

// A unit of work for libhal's release thread (see "Deferred destruction"
// below): intrusive, so handing work over never allocates.
typedef struct hal_deferred_node_t hal_deferred_node_t;
struct hal_deferred_node_t {
  hal_deferred_node_t* next;  // owned by the release thread's list
  void (*run)(hal_deferred_node_t* node);
};

// The first member of every vtable.
typedef void (*hal_resource_destroy_fn_t)(hal_resource_t* resource);

// What a resource is. Each kind's initializer (hal_buffer_initialize, ...)
// stamps it, and the public entry points check it: an object of another
// kind passed in (a caller's wrong pointer) is refused with
// INVALID_ARGUMENT, never called through a vtable that is not its kind's.
typedef enum hal_resource_kind_e {
  HAL_RESOURCE_KIND_OTHER = 0,  // hal_resource_initialize alone
  HAL_RESOURCE_KIND_DRIVER,
  HAL_RESOURCE_KIND_DEVICE,
  HAL_RESOURCE_KIND_BUFFER,
  HAL_RESOURCE_KIND_SEMAPHORE,
  HAL_RESOURCE_KIND_COMMAND_BUFFER,
  HAL_RESOURCE_KIND_EXECUTABLE,
  HAL_RESOURCE_KIND_FILE,
  HAL_RESOURCE_KIND_CHANNEL,
} hal_resource_kind_t;

struct hal_resource_t {
  HAL_ATOMIC(intptr_t) ref_count;
  // Points to a vtable whose first member is a hal_resource_destroy_fn_t.
  const void* vtable;
  hal_resource_kind_t kind;
  // Released after this resource is destroyed; may be NULL.
  hal_resource_t* parent;
  // Used when the last release is deferred (see below).
  hal_deferred_node_t deferred;
};

// Sets the count to 1 and the kind to OTHER. Retains |parent| (may be NULL).
HAL_API void hal_resource_initialize(const void* vtable, hal_resource_t* parent,
                                     hal_resource_t* out_resource);

// hal_resource_initialize, then the kind: what each kind's initializer
// (hal_buffer_initialize, ...) calls.
HAL_API void hal_resource_initialize_kind(hal_resource_kind_t kind,
                                          const void* vtable,
                                          hal_resource_t* parent,
                                          hal_resource_t* out_resource);

// True when |resource| is not NULL and of |kind|.
static inline bool hal_resource_is_kind(const void* resource,
                                        hal_resource_kind_t kind) {
  return resource && ((const hal_resource_t*)resource)->kind == kind;
}

// The error of hal_resource_check_kind (the check failed): INVALID_ARGUMENT,
// "|what| is NULL" or "|what| <pointer> is a <its kind>, not a <kind>"
// (with "an" where English wants it).
HAL_API hal_status_t hal_resource_kind_mismatch(const void* resource,
                                                hal_resource_kind_t kind,
                                                const char* what);

// OK when |resource| is of |kind|; else the error above. Inline: every
// public call (signal, wait, submit) checks its objects, and the right
// kind costs one compare.
static inline hal_status_t hal_resource_check_kind(const void* resource,
                                                   hal_resource_kind_t kind,
                                                   const char* what) {
  return hal_resource_is_kind(resource, kind)
             ? HAL_OK
             : hal_resource_kind_mismatch(resource, kind, what);
}

// The prologue of a create call: INVALID_ARGUMENT "|out_name| is NULL" when
// |out| is NULL; else clears *|out| and checks |parent| as
// hal_resource_check_kind does.
HAL_API hal_status_t hal_resource_check_create(const void* parent,
                                               hal_resource_kind_t kind,
                                               const char* what, void** out,
                                               const char* out_name);

// Takes a reference only if |resource| still has one (its count is above
// zero): for a registry that lists objects without owning them and must
// skip one whose destroy has begun. The memory must still be valid (the
// registry unlinks an object in its destroy, under the lock the caller of
// this function holds).
HAL_API HAL_MUST_USE_RESULT bool hal_resource_try_retain(
    hal_resource_t* resource);

// Deferred destruction. A thread that must never run a destroy (a queue's
// worker or completion thread: destroying the device that owns it would
// join the thread from itself) brackets such code with enter/exit. A last
// release inside the bracket hands the resource to libhal's release thread,
// which destroys it (and its parents) soon after, never on the marked
// thread. Brackets nest; they are per thread.
HAL_API void hal_resource_defer_destruction_enter(void);
HAL_API void hal_resource_defer_destruction_exit(void);

// True inside a hal_resource_defer_destruction_enter() bracket.
HAL_API bool hal_resource_destruction_deferred_here(void);

// Deferred shutdown. Code that runs in the middle of work it must let
// finish (a timepoint callback: the rest of its signal's batch is still to
// be notified) brackets itself with enter/exit. A blocking teardown asked
// for inside the bracket (a device's last release: shutdown waits for
// parked work, which the rest of the batch may be what wakes) runs on
// libhal's release thread instead. Destruction itself is not deferred.
// Brackets nest; they are per thread.
HAL_API void hal_resource_defer_shutdown_enter(void);
HAL_API void hal_resource_defer_shutdown_exit(void);

// True where a blocking teardown must not run on this thread: inside a
// defer-destruction or a defer-shutdown bracket.
HAL_API bool hal_resource_shutdown_deferred_here(void);

// How many resource destroys handed to the release thread have finished,
// since the process started. A caller that may fail for lack of memory a
// released object still holds reads it before it tries.
HAL_API uint64_t hal_resource_deferred_destroys_finished(void);

// Waits until every resource destroy handed to the release thread so far
// (and any those hand on) has run, or |deadline_ns| passes. True when a
// destroy finished after |finished_before| was read (from
// hal_resource_deferred_destroys_finished()): it may have given back what
// the caller lacked, so one more try is worth it (see
// hal_device_allocator_allocate_buffer). A destroy that finished between
// the caller's failed try and this call counts, as does one still running
// at the call. Inside a bracket above, where the release thread may run
// work that waits for this very thread (a device shutdown joining it), the
// wait ends as soon as the release thread runs anything but a resource
// destroy.
HAL_API bool hal_resource_wait_deferred_destroys(uint64_t finished_before,
                                                 hal_time_t deadline_ns);

// Hands |node| to the release thread, which calls node->run(node) soon, on
// its own thread (never under a lock). For work that must not run on the
// calling thread, like a device shutdown that joins the caller.
HAL_API void hal_resource_defer_node(hal_deferred_node_t* node);

// True when |resource| is of the type whose vtable is |vtable|: a type
// test, for code that takes objects of more than one type.
static inline bool hal_resource_is(const void* resource, const void* vtable) {
  return resource && ((const hal_resource_t*)resource)->vtable == vtable;
}

// Reports a resource of the wrong type on stderr (what was expected, the
// vtable found) and aborts. HAL_RESOURCE_CAST calls it.
HAL_API __attribute__((noreturn)) void hal_resource_cast_failed(
    const void* resource, const void* vtable, const char* type_name);

static inline void* hal_resource_cast_checked(const void* resource,
                                              const void* vtable,
                                              const char* type_name) {
#ifndef NDEBUG
  if (resource && !hal_resource_is(resource, vtable))
    hal_resource_cast_failed(resource, vtable, type_name);
#else
  (void)vtable;
  (void)type_name;
#endif
  return (void*)resource;
}

// The one cast from a resource to its implementation type, for code that
// knows the type by construction (a vtable function's own object, a
// driver's buffers, a list validated before): in builds with assertions an
// object of another type aborts there, naming the type; otherwise it is a
// plain cast. NULL stays NULL.
#define HAL_RESOURCE_CAST(type, resource, vtable) \
  ((type*)hal_resource_cast_checked((resource), (vtable), #type))

// Declares that hal_resource_t is at offset 0 of |type|.
#define HAL_RESOURCE_ASSERT_LAYOUT(type, member) \
  static_assert(offsetof(type, member) == 0,     \
                #type " must start with its hal_resource_t base")

HAL_EXTERN_C_END

#endif  // HAL_IMPL_RESOURCE_H_
