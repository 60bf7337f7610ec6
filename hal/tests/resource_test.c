// Copyright 2026 The HAL Authors.

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

#include "hal/impl/api.h"
#include "hal_test.h"

typedef struct test_object_t {
  hal_resource_t resource;
  int* destroyed;  // incremented by destroy
  int* order;      // destroy order log
  int* order_length;
  int id;
} test_object_t;
HAL_RESOURCE_ASSERT_LAYOUT(test_object_t, resource);

static void test_object_destroy(hal_resource_t* resource) {
  test_object_t* object = (test_object_t*)resource;
  ++*object->destroyed;
  if (object->order)
    object->order[(*object->order_length)++] = object->id;
  free(object);
}

static const hal_resource_destroy_fn_t test_object_vtable[1] = {
    test_object_destroy,
};

static test_object_t* test_object_create(hal_resource_t* parent, int* destroyed,
                                         int* order, int* order_length,
                                         int id) {
  test_object_t* object = calloc(1, sizeof(*object));
  assert_non_null(object);
  object->destroyed = destroyed;
  object->order = order;
  object->order_length = order_length;
  object->id = id;
  hal_resource_initialize(test_object_vtable, parent, &object->resource);
  return object;
}

static void Resource_LastReleaseDestroys(void** state) {
  int destroyed = 0;
  test_object_t* object = test_object_create(NULL, &destroyed, NULL, NULL, 1);
  assert_true(hal_resource_is(object, test_object_vtable));
  hal_resource_retain(&object->resource);
  assert_int_equal(hal_resource_ref_count(&object->resource), 2);
  hal_resource_release(&object->resource);
  assert_int_equal(destroyed, 0);
  hal_resource_release(&object->resource);
  assert_int_equal(destroyed, 1);
  hal_resource_release(NULL);  // no-op
}

static void Resource_ParentOutlivesChildAndGoesAfterIt(void** state) {
  int destroyed = 0;
  int order[4];
  int order_length = 0;
  test_object_t* parent =
      test_object_create(NULL, &destroyed, order, &order_length, 1);
  test_object_t* child = test_object_create(&parent->resource, &destroyed,
                                            order, &order_length, 2);
  test_object_t* grandchild =
      test_object_create(&child->resource, &destroyed, order, &order_length, 3);
  hal_resource_release(&parent->resource);  // the child keeps it alive
  hal_resource_release(&child->resource);   // the grandchild keeps it
  assert_int_equal(destroyed, 0);
  hal_resource_release(&grandchild->resource);
  assert_int_equal(destroyed, 3);
  assert_int_equal(order_length, 3);
  assert_int_equal(order[0], 3);
  assert_int_equal(order[1], 2);
  assert_int_equal(order[2], 1);
}

typedef struct release_race_t {
  test_object_t* object;
  int rounds;
} release_race_t;

static void* release_race_thread(void* arg) {
  release_race_t* race = arg;
  for (int i = 0; i < race->rounds; ++i) {
    hal_resource_retain(&race->object->resource);
    hal_resource_release(&race->object->resource);
  }
  hal_resource_release(&race->object->resource);  // the thread's reference
  return NULL;
}

// Concurrent retain/release from several threads destroys exactly once,
// after every thread's last use (TSan checks the ordering).
static void Resource_ConcurrentReleaseDestroysOnce(void** state) {
  for (int round = 0; round < 50; ++round) {
    int destroyed = 0;
    test_object_t* object = test_object_create(NULL, &destroyed, NULL, NULL, 1);
    enum { kThreads = 4 };
    pthread_t threads[kThreads];
    release_race_t race = {object, 200};
    for (int i = 0; i < kThreads; ++i) {
      hal_resource_retain(&object->resource);
      assert_int_equal(
          pthread_create(&threads[i], NULL, release_race_thread, &race), 0);
    }
    hal_resource_release(&object->resource);
    for (int i = 0; i < kThreads; ++i)
      pthread_join(threads[i], NULL);
    assert_int_equal(destroyed, 1);
  }
}

typedef struct deferred_job_t {
  test_object_t* object;
  pthread_t releasing_thread;
} deferred_job_t;

static pthread_t destroyed_on;
static int deferred_destroyed;

static void deferred_object_destroy(hal_resource_t* resource) {
  destroyed_on = pthread_self();
  ++deferred_destroyed;
  free(resource);
}

static const hal_resource_destroy_fn_t deferred_object_vtable[1] = {
    deferred_object_destroy,
};

static void* release_in_defer_zone(void* arg) {
  deferred_job_t* job = arg;
  job->releasing_thread = pthread_self();
  hal_resource_defer_destruction_enter();
  hal_resource_defer_destruction_enter();  // brackets nest
  hal_resource_release(&job->object->resource);
  hal_resource_defer_destruction_exit();
  hal_resource_defer_destruction_exit();
  return NULL;
}

// A last release inside a defer bracket destroys on libhal's release thread,
// not on the releasing one; parents still go after their child.
static void Resource_DeferredDestructionRunsElsewhere(void** state) {
  int destroyed = 0;
  int order[2];
  int order_length = 0;
  test_object_t* parent =
      test_object_create(NULL, &destroyed, order, &order_length, 1);
  test_object_t* child = calloc(1, sizeof(*child));
  hal_resource_initialize(deferred_object_vtable, &parent->resource,
                          &child->resource);
  hal_resource_release(&parent->resource);
  deferred_job_t job = {child, 0};
  pthread_t thread;
  assert_int_equal(pthread_create(&thread, NULL, release_in_defer_zone, &job),
                   0);
  pthread_join(thread, NULL);
  hal_resource_wait_deferred();
  assert_int_equal(deferred_destroyed, 1);
  assert_int_equal(destroyed, 1);  // the parent followed
  assert_false(pthread_equal(destroyed_on, job.releasing_thread));
  assert_false(pthread_equal(destroyed_on, pthread_self()));
  // Outside a bracket, destruction is immediate again.
  test_object_t* plain = test_object_create(NULL, &destroyed, NULL, NULL, 3);
  hal_resource_release(&plain->resource);
  assert_int_equal(destroyed, 2);
}

static _Atomic int slow_destroyed;

// A destroy that takes a while: a wait that starts while it runs must see
// it through.
static void slow_object_destroy(hal_resource_t* resource) {
  usleep(50 * 1000);
  atomic_fetch_add_explicit(&slow_destroyed, 1, memory_order_relaxed);
  free(resource);
}

static const hal_resource_destroy_fn_t slow_object_vtable[1] = {
    slow_object_destroy,
};

// Hands a new slow object's destroy to the release thread.
static void release_slow_object_deferred(void) {
  hal_resource_t* object = calloc(1, sizeof(*object));
  assert_non_null(object);
  hal_resource_initialize(slow_object_vtable, NULL, object);
  hal_resource_defer_destruction_enter();
  hal_resource_release(object);
  hal_resource_defer_destruction_exit();
}

// What an allocation that ran out of memory relies on: the wait for the
// release thread's destroys says whether one finished since the caller read
// the count, including one that finished before the wait began (the
// caller's try failed while it ran). It waits for one still running; with
// nothing new it says no at once; inside a bracket it never waits.
static void Resource_WaitForDeferredDestroysCountsFromTheCallersRead(
    void** state) {
  hal_time_t deadline = hal_time_now() + 20ll * 1000 * 1000 * 1000;
  uint64_t before = hal_resource_deferred_destroys_finished();
  assert_false(hal_resource_wait_deferred_destroys(before, deadline));

  // Finished before the wait: still counts.
  release_slow_object_deferred();
  hal_resource_wait_deferred();
  assert_int_equal(atomic_load(&slow_destroyed), 1);
  assert_true(hal_resource_wait_deferred_destroys(before, deadline));
  uint64_t after_first = hal_resource_deferred_destroys_finished();
  assert_int_equal(after_first, before + 1);
  assert_false(hal_resource_wait_deferred_destroys(after_first, deadline));

  // Running at the wait: waited for.
  release_slow_object_deferred();
  assert_true(hal_resource_wait_deferred_destroys(after_first, deadline));
  assert_int_equal(atomic_load(&slow_destroyed), 2);

  // Inside a bracket, with nothing else on the release thread: the same.
  uint64_t after_second = hal_resource_deferred_destroys_finished();
  release_slow_object_deferred();
  hal_resource_defer_destruction_enter();
  assert_true(hal_resource_wait_deferred_destroys(after_second, deadline));
  hal_resource_defer_destruction_exit();
  assert_int_equal(atomic_load(&slow_destroyed), 3);
}

// A queue thread's waiter, and the shutdown that joins it.
typedef struct {
  hal_deferred_node_t node;  // first: the run function's cast
  pthread_t waiter;
  _Atomic bool go;
  uint64_t finished_before;
  bool result;
  hal_time_t elapsed_ns;
} joined_waiter_t;

static void* wait_for_destroys_in_bracket(void* arg) {
  joined_waiter_t* job = arg;
  hal_resource_defer_destruction_enter();
  while (!atomic_load(&job->go))
    usleep(1000);
  hal_time_t start = hal_time_now();
  job->result = hal_resource_wait_deferred_destroys(
      job->finished_before, start + 30ll * 1000 * 1000 * 1000);
  job->elapsed_ns = hal_time_now() - start;
  hal_resource_defer_destruction_exit();
  return NULL;
}

static void join_the_waiter(hal_deferred_node_t* node) {
  joined_waiter_t* job = (joined_waiter_t*)node;
  pthread_join(job->waiter, NULL);
}

// A waiter inside a bracket whose destroy is queued behind work that joins
// the waiter's thread (a device shutdown joining its queue threads): the
// waiter stops waiting once that work runs, rather than both waiting out
// the deadline.
static void Resource_WaitForDeferredDestroysYieldsToWorkThatJoinsIt(
    void** state) {
  joined_waiter_t job = {.finished_before =
                             hal_resource_deferred_destroys_finished()};
  atomic_init(&job.go, false);
  assert_int_equal(
      pthread_create(&job.waiter, NULL, wait_for_destroys_in_bracket, &job), 0);
  job.node.run = join_the_waiter;
  hal_resource_defer_node(&job.node);
  release_slow_object_deferred();  // behind the join
  atomic_store(&job.go, true);
  hal_resource_wait_deferred();
  print_message("[          ] the waiter returned after %.1f ms\n",
                job.elapsed_ns / 1e6);
  assert_true(job.elapsed_ns < 10ll * 1000 * 1000 * 1000);
  assert_false(job.result);  // nothing finished while it waited
  assert_int_equal(atomic_load(&slow_destroyed), 4);
}

// Release-thread work that runs until a byte comes down its pipe.
typedef struct {
  hal_deferred_node_t node;  // first: the run function's cast
  int pipe_fds[2];
  atomic_bool running;
} blocking_job_t;

static void run_until_a_byte_comes(hal_deferred_node_t* node) {
  blocking_job_t* job = (blocking_job_t*)node;
  atomic_store(&job->running, true);
  char byte;
  assert_int_equal(read(job->pipe_fds[0], &byte, 1), 1);
}

static void exit_with_3(void) {
  exit(3);
}

// A fork() child has none of the parent's threads: its exit() waits for
// none of the release thread's work, which stays the parent's (it used to
// wait for its copy to finish, 30 s, then said it was still running).
static void Resource_AForkedChildsExitWaitsForNoReleaseOfItsParent(
    void** state) {
  blocking_job_t job = {.node.run = run_until_a_byte_comes};
  atomic_init(&job.running, false);
  assert_int_equal(pipe(job.pipe_fds), 0);
  hal_resource_defer_node(&job.node);
  while (!atomic_load(&job.running))
    usleep(1000);
  char text[1024];
  hal_time_t start = hal_time_now();
  int wstatus = hal_test_run_in_child_status(exit_with_3, text, sizeof(text));
  hal_time_t elapsed_ns = hal_time_now() - start;
  assert_int_equal(write(job.pipe_fds[1], "x", 1), 1);
  hal_resource_wait_deferred();
  close(job.pipe_fds[0]);
  close(job.pipe_fds[1]);
  print_message("[          ] the child ended after %.1f ms: %s\n",
                elapsed_ns / 1e6, text);
  assert_true(WIFEXITED(wstatus));
  assert_int_equal(WEXITSTATUS(wstatus), 3);
  assert_null(strstr(text, "still running at exit"));
  assert_true(elapsed_ns < 10ll * 1000 * 1000 * 1000);
}

static const hal_resource_destroy_fn_t other_vtable[1] = {
    test_object_destroy,
};

// The one cast: the right type passes through, NULL stays NULL.
static void Resource_CastOfTheRightTypeIsThePointer(void** state) {
  int destroyed = 0;
  test_object_t* object = test_object_create(NULL, &destroyed, NULL, NULL, 1);
  void* base = &object->resource;
  assert_ptr_equal(HAL_RESOURCE_CAST(test_object_t, base, test_object_vtable),
                   object);
  assert_null(HAL_RESOURCE_CAST(test_object_t, NULL, test_object_vtable));
  hal_resource_release(&object->resource);
  assert_int_equal(destroyed, 1);
}

#ifndef NDEBUG
static void cast_to_another_type(void) {
  int destroyed = 0;
  test_object_t* object = test_object_create(NULL, &destroyed, NULL, NULL, 1);
  void* base = &object->resource;
  (void)HAL_RESOURCE_CAST(test_object_t, base, other_vtable);
}

// A cast of an object of another type aborts in assertion builds, with the
// type named on stderr (the one answer every *_cast gives).
static void Resource_CastOfAnotherTypeAbortsInAssertionBuilds(void** state) {
  char report[512] = "";
  assert_true(
      hal_test_run_in_child(cast_to_another_type, report, sizeof(report)));
  assert_non_null(strstr(report, "is not a test_object_t"));
}
#endif  // NDEBUG

// The test list: CASE binds this program's fixture.
#define CASE(name) cmocka_unit_test(name)

int main(void) {
  const struct CMUnitTest tests[] = {
      CASE(Resource_CastOfTheRightTypeIsThePointer),
#ifndef NDEBUG
      CASE(Resource_CastOfAnotherTypeAbortsInAssertionBuilds),
#endif
      CASE(Resource_LastReleaseDestroys),
      CASE(Resource_ParentOutlivesChildAndGoesAfterIt),
      CASE(Resource_ConcurrentReleaseDestroysOnce),
      CASE(Resource_DeferredDestructionRunsElsewhere),
      CASE(Resource_WaitForDeferredDestroysCountsFromTheCallersRead),
      CASE(Resource_WaitForDeferredDestroysYieldsToWorkThatJoinsIt),
      CASE(Resource_AForkedChildsExitWaitsForNoReleaseOfItsParent),
  };
  return cmocka_run_group_tests_name("core/resource", tests, NULL, NULL);
}
