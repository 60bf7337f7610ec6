// Copyright 2026 The HAL Authors.

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
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
  int pipe_fds[2];
  assert_int_equal(pipe(pipe_fds), 0);
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    dup2(pipe_fds[1], STDERR_FILENO);
    close(pipe_fds[0]);
    cast_to_another_type();
    _exit(0);  // the check did not fire
  }
  close(pipe_fds[1]);
  char report[512] = "";
  size_t length = 0;
  ssize_t got;
  while (length + 1 < sizeof(report) &&
         (got = read(pipe_fds[0], report + length,
                     sizeof(report) - 1 - length)) > 0) {
    length += (size_t)got;
  }
  report[length] = '\0';
  close(pipe_fds[0]);
  int wstatus = 0;
  assert_int_equal(waitpid(pid, &wstatus, 0), pid);
  assert_true(WIFSIGNALED(wstatus));
  assert_int_equal(WTERMSIG(wstatus), SIGABRT);
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
  };
  return cmocka_run_group_tests_name("core/resource", tests, NULL, NULL);
}
