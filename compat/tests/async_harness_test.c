// Copyright 2026 The HAL Authors.
//
// Suite mlir_async, C harness: drives libhal-async-runtime the way code
// lowered by MLIR 14 does (-async-to-async-runtime, -async-runtime-ref-
// counting, -convert-async-to-llvm): every async.execute is a token created
// with two references plus a coroutine started by mlirAsyncRuntimeExecute;
// awaits inside coroutines are await-and-execute with the coroutine
// resumed by the runtime; dependencies are retained for the coroutine and
// dropped after its await. Coroutines here are small state machines whose
// resume function may run before the await call that suspends them returns,
// as LLVM coroutines may.
//
// The race cases named after the bugs of the original runtime
// (SYNC-CONTRACT K12, Q4): GroupAddVsTokenEmplace,
// LastReferenceDroppedInsideEmplace, RuntimeUnloadedWithTasksPending; and
// HandoffsWaitForTheTaskToReturn (mlir-cpu-runner unmapping JIT'd code).
// Knobs: HAL_STRESS_ITERATIONS (multiplier), HAL_TEST_SEED (printed).
//
// Each test runs on a runtime of its own, destroyed in the teardown (which
// waits for every task), after which no token/value/group may be alive.

#include "hal_test.h"

#include "async_test_util.h"
#include "hal/mlir_async.h"

//===----------------------------------------------------------------------===//
// Fixture and helpers
//===----------------------------------------------------------------------===//

static int setup(void** state) {
  hal_async_runtime_t* runtime = NULL;
  HAL_ASSERT_OK(hal_async_runtime_create(hal_allocator_system(), 2, &runtime));
  hal_async_runtime_t* previous = hal_async_runtime_exchange_default(runtime);
  hal_async_runtime_destroy(previous);
  *state = runtime;
  return 0;
}

static int teardown(void** state) {
  hal_async_runtime_t* runtime = hal_async_runtime_exchange_default(NULL);
  assert_ptr_equal(runtime, *state);
  hal_async_runtime_destroy(runtime);
  hal_test_assert_no_thread_failures();
  assert_int_equal(hal_async_live_object_count(), 0);
  return 0;
}

// Busy delay of up to |max_ns| to shuffle interleavings.
static void jitter(uint64_t* rng, uint64_t max_ns) {
  uint64_t spins = hal_test_random_below(rng, max_ns / 4 + 1);
  for (volatile uint64_t i = 0; i < spins; ++i) {
  }
}

//===----------------------------------------------------------------------===//
// Bad input (first: forks before any runtime thread exists)
//===----------------------------------------------------------------------===//

static void over_release_child(void) {
  void* token = mlirAsyncRuntimeCreateToken();  // 2 references
  mlirAsyncRuntimeDropRef(token, 3);
}

static void double_emplace_child(void) {
  void* token = mlirAsyncRuntimeCreateToken();
  mlirAsyncRuntimeAddRef(token, 1);
  mlirAsyncRuntimeEmplaceToken(token);
  mlirAsyncRuntimeEmplaceToken(token);
}

static void group_overflow_child(void) {
  void* group = mlirAsyncRuntimeCreateGroup(1);
  for (int i = 0; i < 2; ++i) {
    void* token = mlirAsyncRuntimeCreateToken();
    mlirAsyncRuntimeEmplaceToken(token);
    mlirAsyncRuntimeAddTokenToGroup(token, group);
    mlirAsyncRuntimeDropRef(token, 1);
  }
}

// Dropping more references than held, emplacing twice and overfilling a
// group are caught in debug builds with a message naming the object.
static void BadInput_MisuseIsCaught(void** state) {
#ifdef NDEBUG
  HAL_TEST_SKIP("misuse is only caught in debug builds (this one has NDEBUG)");
#else
  char text[4096];
  assert_true(hal_test_run_in_child(over_release_child, text, sizeof(text)));
  assert_non_null(strstr(text, "dropping 3 reference(s) from token"));
  assert_non_null(strstr(text, "that holds 2"));
  assert_true(hal_test_run_in_child(double_emplace_child, text, sizeof(text)));
  assert_non_null(strstr(text, "is already ready"));
  assert_true(hal_test_run_in_child(group_overflow_child, text, sizeof(text)));
  assert_non_null(strstr(text, "of size 1 got token #2"));
#endif
}

static void noop_task(void* arg) {
  (void)arg;
}

// The first execute with no runtime creates the default one from the
// environment.
static void bad_worker_threads_default_child(void) {
  setenv("HAL_ASYNC_WORKER_THREADS", "abc", 1);
  spawn(noop_task, NULL);
}

// HAL_ASYNC_WORKER_THREADS sizes a runtime created with worker_count 0 (the
// default runtime among them); a value that is not an integer in [1, 1024]
// fails the creation with INVALID_ARGUMENT naming the variable and its range
// rather than falling back to one worker per CPU.
static void BadInput_WorkerThreadsSettingIsChecked(void** state) {
  (void)state;
  const char* expected =
      "HAL_ASYNC_WORKER_THREADS='abc': expected an integer in [1, 1024]";
  char text[4096];
  assert_true(hal_test_run_in_child(bad_worker_threads_default_child, text,
                                    sizeof(text)));
  assert_non_null(strstr(text, "creating the default runtime failed"));
  assert_non_null(strstr(text, expected));

  const char* values[] = {"abc", "0", "1025", "-1", " 2", "2x"};
  for (size_t i = 0; i < HAL_ARRAYSIZE(values); ++i) {
    setenv("HAL_ASYNC_WORKER_THREADS", values[i], 1);
    char needle[128];
    snprintf(needle, sizeof(needle),
             "HAL_ASYNC_WORKER_THREADS='%s': expected an integer in [1, 1024]",
             values[i]);
    hal_async_runtime_t* runtime = NULL;
    HAL_ASSERT_STATUS(
        HAL_STATUS_INVALID_ARGUMENT, needle,
        hal_async_runtime_create(hal_allocator_system(), 0, &runtime));
    assert_null(runtime);
  }
  // A valid value is the count; an explicit count does not read it.
  setenv("HAL_ASYNC_WORKER_THREADS", "3", 1);
  hal_async_runtime_t* runtime = NULL;
  HAL_ASSERT_OK(hal_async_runtime_create(hal_allocator_system(), 0, &runtime));
  assert_int_equal(hal_async_runtime_worker_count(runtime), 3);
  hal_async_runtime_destroy(runtime);
  setenv("HAL_ASYNC_WORKER_THREADS", "abc", 1);
  HAL_ASSERT_OK(hal_async_runtime_create(hal_allocator_system(), 2, &runtime));
  assert_int_equal(hal_async_runtime_worker_count(runtime), 2);
  hal_async_runtime_destroy(runtime);
  unsetenv("HAL_ASYNC_WORKER_THREADS");
  assert_int_equal(hal_async_live_object_count(), 0);
}

//===----------------------------------------------------------------------===//
// Basics
//===----------------------------------------------------------------------===//

static void emplace_token_task(void* token) {
  mlirAsyncRuntimeEmplaceToken(token);
}

static void Async_TokenLifecycle(void** state) {
  assert_true(mlirAsyncRuntimGetNumWorkerThreads() == 2);
  assert_true(mlirAsyncRuntimeGetNumWorkerThreads() == 2);
  for (int i = 0; i < 100; ++i) {
    void* token = mlirAsyncRuntimeCreateToken();
    spawn(emplace_token_task, token);  // the task owns the 2nd reference
    mlirAsyncRuntimeAwaitToken(token);
    assert_false(mlirAsyncRuntimeIsTokenError(token));
    mlirAsyncRuntimeDropRef(token, 1);
  }
  // An empty group is ready at once.
  void* group = mlirAsyncRuntimeCreateGroup(0);
  mlirAsyncRuntimeAwaitAllInGroup(group);
  assert_false(mlirAsyncRuntimeIsGroupError(group));
  mlirAsyncRuntimeDropRef(group, 1);
}

typedef struct value_task_t {
  void* value;
  int64_t payload;
  bool error;
} value_task_t;

static void emplace_value_task(void* arg) {
  value_task_t* task = (value_task_t*)arg;
  if (task->error) {
    mlirAsyncRuntimeSetValueError(task->value);
    return;
  }
  int64_t* storage = mlirAsyncRuntimeGetValueStorage(task->value);
  storage[0] = task->payload;
  storage[2] = -task->payload;
  mlirAsyncRuntimeEmplaceValue(task->value);
}

static void Async_ValueStorage(void** state) {
  for (int i = 0; i < 64; ++i) {
    value_task_t task = {mlirAsyncRuntimeCreateValue(24), 1000 + i, i % 5 == 4};
    int64_t* storage = mlirAsyncRuntimeGetValueStorage(task.value);
    assert_int_equal((uintptr_t)storage % 64, 0);
    spawn(emplace_value_task, &task);
    mlirAsyncRuntimeAwaitValue(task.value);
    assert_int_equal(mlirAsyncRuntimeIsValueError(task.value), task.error);
    if (!task.error) {
      assert_int_equal(storage[0], 1000 + i);
      assert_int_equal(storage[2], -(1000 + i));
    }
    mlirAsyncRuntimeDropRef(task.value, 1);
  }
}

//===----------------------------------------------------------------------===//
// Await-and-execute chains (coroutines as lowered code runs them)
//===----------------------------------------------------------------------===//

// async.execute [%previous] { async.await %previous; record; yield }
typedef struct chain_coro_t {
  int step;
  int64_t index;
  void* previous;  // retained for the coroutine; NULL for the first
  void* token;     // its own token (the coroutine's emplace reference)
  bool fail;       // set_error instead of emplace (when not inherited)
  atomic_int_fast64_t* order;  // last index recorded
  atomic_int* errors_seen;
} chain_coro_t;

static void chain_resume(void* handle) {
  chain_coro_t* coro = (chain_coro_t*)handle;
  if (coro->step == 0 && coro->previous) {
    coro->step = 1;
    // May resume us (step 1) before returning: do not touch |coro| after.
    mlirAsyncRuntimeAwaitTokenAndExecute(coro->previous, coro, chain_resume);
    return;
  }
  bool error = coro->fail;
  if (coro->previous) {
    error |= mlirAsyncRuntimeIsTokenError(coro->previous);
    mlirAsyncRuntimeDropRef(coro->previous, 1);
  }
  if (error) {
    atomic_fetch_add(coro->errors_seen, 1);
    mlirAsyncRuntimeSetTokenError(coro->token);
  } else {
    int64_t last = atomic_exchange(coro->order, coro->index);
    HAL_THREAD_CHECK(last == coro->index - 1, "chain ran %lld after %lld",
                     (long long)coro->index, (long long)last);
    mlirAsyncRuntimeEmplaceToken(coro->token);
  }
  free(coro);
}

// Builds a chain of |length| executes (each awaiting the previous one),
// started in a random order; element |fail_at| (or none: -1) fails.
// Returns the last token (one reference).
static void* build_chain(uint64_t* rng, int64_t length, int64_t fail_at,
                         atomic_int_fast64_t* order, atomic_int* errors_seen) {
  chain_coro_t** coros = calloc((size_t)length, sizeof(*coros));
  assert_non_null(coros);
  void* previous = NULL;
  void* last = NULL;
  for (int64_t i = 0; i < length; ++i) {
    chain_coro_t* coro = calloc(1, sizeof(*coro));
    assert_non_null(coro);
    coro->index = i;
    coro->token = mlirAsyncRuntimeCreateToken();
    coro->fail = i == fail_at;
    coro->order = order;
    coro->errors_seen = errors_seen;
    if (previous) {
      mlirAsyncRuntimeAddRef(previous, 1);  // for the coroutine
      coro->previous = previous;
      mlirAsyncRuntimeDropRef(previous, 1);  // the caller's
    }
    previous = coro->token;
    coros[i] = coro;
  }
  last = previous;
  // Start in a random order: awaits meet tokens in every state.
  for (int64_t i = length - 1; i > 0; --i) {
    int64_t j = (int64_t)hal_test_random_below(rng, (uint64_t)i + 1);
    chain_coro_t* swap = coros[i];
    coros[i] = coros[j];
    coros[j] = swap;
  }
  for (int64_t i = 0; i < length; ++i) {
    mlirAsyncRuntimeExecute(coros[i], chain_resume);
  }
  free(coros);
  return last;
}

static void Async_AwaitAndExecuteChains(void** state) {
  uint64_t rng = hal_test_seed("AwaitAndExecuteChains");
  uint64_t rounds = hal_test_iterations(20);
  for (uint64_t round = 0; round < rounds; ++round) {
    atomic_int_fast64_t order = -1;
    atomic_int errors_seen = 0;
    int64_t length = 1 + (int64_t)hal_test_random_below(&rng, 3000);
    void* last = build_chain(&rng, length, -1, &order, &errors_seen);
    mlirAsyncRuntimeAwaitToken(last);
    assert_false(mlirAsyncRuntimeIsTokenError(last));
    assert_int_equal(atomic_load(&order), length - 1);
    assert_int_equal(atomic_load(&errors_seen), 0);
    mlirAsyncRuntimeDropRef(last, 1);
  }
}

// An error set mid-chain reaches the end through every await; the blocking
// await of the last token returns and is-error reports it.
static void Async_ErrorsThroughAwaits(void** state) {
  uint64_t rng = hal_test_seed("ErrorsThroughAwaits");
  uint64_t rounds = hal_test_iterations(10);
  for (uint64_t round = 0; round < rounds; ++round) {
    atomic_int_fast64_t order = -1;
    atomic_int errors_seen = 0;
    int64_t length = 2 + (int64_t)hal_test_random_below(&rng, 500);
    int64_t fail_at = (int64_t)hal_test_random_below(&rng, (uint64_t)length);
    void* last = build_chain(&rng, length, fail_at, &order, &errors_seen);
    mlirAsyncRuntimeAwaitToken(last);
    assert_true(mlirAsyncRuntimeIsTokenError(last));
    assert_int_equal(atomic_load(&order), fail_at - 1);
    assert_int_equal(atomic_load(&errors_seen), length - fail_at);
    // Awaiting again, and awaiting through a group, returns too.
    mlirAsyncRuntimeAwaitToken(last);
    void* group = mlirAsyncRuntimeCreateGroup(1);
    assert_int_equal(mlirAsyncRuntimeAddTokenToGroup(last, group), 0);
    mlirAsyncRuntimeAwaitAllInGroup(group);
    assert_true(mlirAsyncRuntimeIsGroupError(group));
    mlirAsyncRuntimeDropRef(group, 1);
    mlirAsyncRuntimeDropRef(last, 1);
  }
}

//===----------------------------------------------------------------------===//
// Groups
//===----------------------------------------------------------------------===//

typedef struct member_task_t {
  void* token;
  bool fail;
} member_task_t;

static void member_task(void* arg) {
  member_task_t* task = (member_task_t*)arg;
  if (task->fail) {
    mlirAsyncRuntimeSetTokenError(task->token);
  } else {
    mlirAsyncRuntimeEmplaceToken(task->token);
  }
  free(task);
}

// A coroutine awaiting the whole group (AwaitAllInGroupAndExecute).
typedef struct group_waiter_t {
  void* group;  // retained
  void* done;   // token it emplaces
  atomic_int* saw_error;
} group_waiter_t;

static void group_waiter_resume(void* handle) {
  group_waiter_t* waiter = (group_waiter_t*)handle;
  atomic_store(waiter->saw_error, mlirAsyncRuntimeIsGroupError(waiter->group));
  mlirAsyncRuntimeDropRef(waiter->group, 1);
  mlirAsyncRuntimeEmplaceToken(waiter->done);
  free(waiter);
}

static void Async_GroupOfThousands(void** state) {
  uint64_t rng = hal_test_seed("GroupOfThousands");
  uint64_t rounds = hal_test_iterations(4);
  for (uint64_t round = 0; round < rounds; ++round) {
    int64_t size = 1000 + (int64_t)hal_test_random_below(&rng, 5000);
    int64_t fail_at =
        round % 2 ? (int64_t)hal_test_random_below(&rng, (uint64_t)size) : -1;
    void* group = mlirAsyncRuntimeCreateGroup(size);
    bool* ranks = calloc((size_t)size, sizeof(bool));
    assert_non_null(ranks);
    // A coroutine awaits the group before any member exists.
    atomic_int saw_error = -1;
    group_waiter_t* waiter = malloc(sizeof(*waiter));
    assert_non_null(waiter);
    waiter->group = group;
    mlirAsyncRuntimeAddRef(group, 1);
    waiter->done = mlirAsyncRuntimeCreateToken();
    waiter->saw_error = &saw_error;
    void* done = waiter->done;
    mlirAsyncRuntimeAwaitAllInGroupAndExecute(group, waiter,
                                              group_waiter_resume);
    for (int64_t i = 0; i < size; ++i) {
      member_task_t* task = malloc(sizeof(*task));
      assert_non_null(task);
      task->token = mlirAsyncRuntimeCreateToken();
      task->fail = i == fail_at;
      void* token = task->token;
      spawn(member_task, task);
      int64_t rank = mlirAsyncRuntimeAddTokenToGroup(token, group);
      assert_true(rank >= 0 && rank < size && !ranks[rank]);
      ranks[rank] = true;
      mlirAsyncRuntimeDropRef(token, 1);
    }
    mlirAsyncRuntimeAwaitAllInGroup(group);
    assert_int_equal(mlirAsyncRuntimeIsGroupError(group), fail_at >= 0);
    mlirAsyncRuntimeAwaitToken(done);
    assert_int_equal(atomic_load(&saw_error), fail_at >= 0);
    mlirAsyncRuntimeDropRef(done, 1);
    mlirAsyncRuntimeDropRef(group, 1);
    free(ranks);
  }
}

// A continuation of a token (registered before the token joined a group)
// that records whether the group reads as in error when it runs.
typedef struct group_reader_t {
  void* group;
  int saw_group_error;  // -1: not run
} group_reader_t;

static void group_reader_resume(void* handle) {
  group_reader_t* reader = (group_reader_t*)handle;
  reader->saw_group_error = mlirAsyncRuntimeIsGroupError(reader->group);
}

// A chain of groups of one member each: the continuation awaiting group i
// puts member i+1 in error, nested in the set-error of member i, deeper
// than resumes nest on one thread.
#define GROUP_CHAIN_LENGTH 24
typedef struct group_chain_t {
  void* groups[GROUP_CHAIN_LENGTH];
  void* members[GROUP_CHAIN_LENGTH];
  int next;
} group_chain_t;

static void group_chain_resume(void* handle) {
  group_chain_t* chain = (group_chain_t*)handle;
  int i = chain->next++;
  if (i < GROUP_CHAIN_LENGTH)
    mlirAsyncRuntimeSetTokenError(chain->members[i]);
}

// mlir_async.h: a group reads as in error once the set-error of one member
// returns, though the group is not complete (the member's own earlier
// awaiters run first and may see it not yet in error); a set-error nested
// deep in resumes reaches its group at the latest when the outermost call
// on the thread returns.
static void Async_GroupIsInErrorOnceAMembersSetErrorReturns(void** state) {
  void* group = mlirAsyncRuntimeCreateGroup(2);
  void* failing = mlirAsyncRuntimeCreateToken();
  group_reader_t reader = {group, -1};
  mlirAsyncRuntimeAwaitTokenAndExecute(failing, &reader, group_reader_resume);
  assert_true(mlirAsyncRuntimeAddTokenToGroup(failing, group) >= 0);
  assert_false(mlirAsyncRuntimeIsGroupError(group));
  mlirAsyncRuntimeSetTokenError(failing);
  assert_int_not_equal(reader.saw_group_error, -1);  // it ran, nested
  assert_true(mlirAsyncRuntimeIsTokenError(failing));
  assert_true(mlirAsyncRuntimeIsGroupError(group));
  // The group is still one member short: it completes with the second.
  void* second = mlirAsyncRuntimeCreateToken();
  assert_true(mlirAsyncRuntimeAddTokenToGroup(second, group) >= 0);
  mlirAsyncRuntimeEmplaceToken(second);
  mlirAsyncRuntimeAwaitAllInGroup(group);
  assert_true(mlirAsyncRuntimeIsGroupError(group));
  mlirAsyncRuntimeDropRef(second, 1);
  mlirAsyncRuntimeDropRef(failing, 1);
  mlirAsyncRuntimeDropRef(group, 1);

  group_chain_t chain = {.next = 1};
  for (int i = 0; i < GROUP_CHAIN_LENGTH; ++i) {
    chain.groups[i] = mlirAsyncRuntimeCreateGroup(1);
    chain.members[i] = mlirAsyncRuntimeCreateToken();
    assert_true(mlirAsyncRuntimeAddTokenToGroup(chain.members[i],
                                                chain.groups[i]) >= 0);
    mlirAsyncRuntimeAwaitAllInGroupAndExecute(chain.groups[i], &chain,
                                              group_chain_resume);
  }
  mlirAsyncRuntimeSetTokenError(chain.members[0]);
  assert_int_equal(chain.next, GROUP_CHAIN_LENGTH + 1);
  for (int i = 0; i < GROUP_CHAIN_LENGTH; ++i) {
    if (!mlirAsyncRuntimeIsGroupError(chain.groups[i]))
      HAL_TEST_FAIL("group %d of the chain is not in error", i);
    mlirAsyncRuntimeDropRef(chain.members[i], 1);
    mlirAsyncRuntimeDropRef(chain.groups[i], 1);
  }
}

//===----------------------------------------------------------------------===//
// Races of the original runtime
//===----------------------------------------------------------------------===//

typedef struct race_emplace_t {
  void* token;
  uint64_t rng;
  bool fail;
} race_emplace_t;

static void race_emplace_task(void* arg) {
  race_emplace_t* task = (race_emplace_t*)arg;
  jitter(&task->rng, 2000);
  if (task->fail) {
    mlirAsyncRuntimeSetTokenError(task->token);
  } else {
    mlirAsyncRuntimeEmplaceToken(task->token);
  }
  free(task);
}

// The group awaiter of the original runtime raced token emplace: adding a
// token to a group while another thread emplaces it must count the token
// exactly once, with its error, whichever side wins.
static void Async_GroupAddVsTokenEmplace(void** state) {
  uint64_t rng = hal_test_seed("GroupAddVsTokenEmplace");
  uint64_t iterations = hal_test_iterations(2000);
  for (uint64_t i = 0; i < iterations; ++i) {
    int64_t size = 1 + (int64_t)hal_test_random_below(&rng, 4);
    void* group = mlirAsyncRuntimeCreateGroup(size);
    int64_t errors = 0;
    for (int64_t m = 0; m < size; ++m) {
      race_emplace_t* task = malloc(sizeof(*task));
      assert_non_null(task);
      task->token = mlirAsyncRuntimeCreateToken();
      task->rng = hal_test_random(&rng) | 1;
      task->fail = hal_test_random_below(&rng, 8) == 0;
      errors += task->fail;
      void* token = task->token;
      spawn(race_emplace_task, task);
      jitter(&rng, 2000);
      mlirAsyncRuntimeAddTokenToGroup(token, group);
      mlirAsyncRuntimeDropRef(token, 1);
    }
    mlirAsyncRuntimeAwaitAllInGroup(group);
    assert_int_equal(mlirAsyncRuntimeIsGroupError(group), errors > 0);
    mlirAsyncRuntimeDropRef(group, 1);
  }
}

// A member resolved by a pool task after |delay_ns|, which marks |emplaced|
// just before it resolves the token.
typedef struct late_member_t {
  void* token;
  uint64_t delay_ns;
  bool fail;
  atomic_int* emplaced;
} late_member_t;

static void late_member_task(void* arg) {
  late_member_t* task = (late_member_t*)arg;
  if (task->delay_ns)
    hal_test_sleep_ns(task->delay_ns);
  atomic_store(task->emplaced, 1);
  if (task->fail) {
    mlirAsyncRuntimeSetTokenError(task->token);
  } else {
    mlirAsyncRuntimeEmplaceToken(task->token);
  }
  free(task);
}

// A blocking await of a group wakes when one member is left and polls for
// it for a while (docs/mlir-async.md): it still returns only once every
// member is ready, with the members' errors, whether the last one comes
// at once, within the poll, or long after it, with polling on and off.
static void Async_GroupAwaitReturnsOnlyOnceItsLastMemberIsReady(void** state) {
  (void)state;
  uint64_t rng = hal_test_seed("GroupAwaitReturnsOnlyOnceItsLastMemberIsReady");
  static const uint64_t kLastDelaysNs[] = {0, 5 * 1000, 30 * 1000, 2 * HAL_MS};
  uint64_t saved_spin = hal_semaphore_spin_ns();
  uint64_t rounds = hal_test_iterations(48);
  for (uint64_t round = 0; round < rounds; ++round) {
    hal_semaphore_set_spin_ns(round % 3 == 2 ? 0 : saved_spin);
    int64_t size = 1 + (int64_t)hal_test_random_below(&rng, 4);
    uint64_t delay_ns = kLastDelaysNs[hal_test_random_below(
        &rng, HAL_ARRAYSIZE(kLastDelaysNs))];
    void* group = mlirAsyncRuntimeCreateGroup(size);
    int64_t errors = 0;
    atomic_int last_emplaced = 0;
    atomic_int others_emplaced = 0;
    for (int64_t m = 0; m < size; ++m) {
      bool last = m == size - 1;
      late_member_t* task = malloc(sizeof(*task));
      assert_non_null(task);
      task->token = mlirAsyncRuntimeCreateToken();
      task->delay_ns = last ? delay_ns : 0;
      task->fail = hal_test_random_below(&rng, 6) == 0;
      task->emplaced = last ? &last_emplaced : &others_emplaced;
      errors += task->fail;
      void* token = task->token;
      mlirAsyncRuntimeAddTokenToGroup(token, group);
      spawn(late_member_task, task);
      mlirAsyncRuntimeDropRef(token, 1);
    }
    mlirAsyncRuntimeAwaitAllInGroup(group);
    assert_int_equal(atomic_load(&last_emplaced), 1);
    assert_int_equal(mlirAsyncRuntimeIsGroupError(group), errors > 0);
    mlirAsyncRuntimeDropRef(group, 1);
  }
  hal_semaphore_set_spin_ns(saved_spin);
}

// A coroutine that, once resumed, drops the last reference it shares to
// the token that woke it (and to a group containing it).
typedef struct dropper_coro_t {
  void* token;  // one reference (the awaiter's)
  void* group;  // one reference, or NULL
  atomic_int* resumed;
} dropper_coro_t;

static void dropper_resume(void* handle) {
  dropper_coro_t* coro = (dropper_coro_t*)handle;
  HAL_THREAD_CHECK(!mlirAsyncRuntimeIsTokenError(coro->token),
                   "unexpected error");
  mlirAsyncRuntimeDropRef(coro->token, 1);
  if (coro->group)
    mlirAsyncRuntimeDropRef(coro->group, 1);
  atomic_fetch_add(coro->resumed, 1);
  free(coro);
}

// Use-after-free of the original runtime: the last reference dropped from
// inside emplace. The awaiter (resumed inside emplace) and the caller drop
// their references while the emplacing task still runs; ASan reports any
// use of freed memory, TSan any unordered access.
static void Async_LastReferenceDroppedInsideEmplace(void** state) {
  uint64_t rng = hal_test_seed("LastReferenceDroppedInsideEmplace");
  uint64_t iterations = hal_test_iterations(3000);
  atomic_int resumed = 0;
  for (uint64_t i = 0; i < iterations; ++i) {
    race_emplace_t* task = malloc(sizeof(*task));
    assert_non_null(task);
    void* token = mlirAsyncRuntimeCreateToken();
    task->token = token;
    task->rng = hal_test_random(&rng) | 1;
    task->fail = false;
    dropper_coro_t* coro = malloc(sizeof(*coro));
    assert_non_null(coro);
    coro->token = token;
    coro->resumed = &resumed;
    coro->group = NULL;
    // A group whose only reference is its membership after the caller
    // drops: the membership callback inside emplace frees it.
    void* group = NULL;
    if (i % 2) {
      group = mlirAsyncRuntimeCreateGroup(1);
      coro->group = group;
      mlirAsyncRuntimeAddRef(group, 1);
      mlirAsyncRuntimeAddTokenToGroup(token, group);
    }
    // The awaiter holds the caller's reference: after it drops, only the
    // emplacing task's reference remains.
    spawn(race_emplace_task, task);
    jitter(&rng, 2000);
    mlirAsyncRuntimeAwaitTokenAndExecute(token, coro, dropper_resume);
    if (group)
      mlirAsyncRuntimeDropRef(group, 1);
  }
  // Teardown waits for the tasks; then every object must be gone.
  while (atomic_load(&resumed) != (int)iterations) {
    hal_test_sleep_ns(HAL_MS / 10);
  }
}

typedef struct unload_state_t {
  atomic_int_fast64_t ran;
  int64_t fan_out;
  int depth;
} unload_state_t;

typedef struct unload_task_t {
  unload_state_t* shared;
  int depth;
  void* token;  // emplaced when done (NULL: none)
} unload_task_t;

static void unload_task(void* arg) {
  unload_task_t* task = (unload_task_t*)arg;
  unload_state_t* shared = task->shared;
  // Tasks start more tasks on the runtime being destroyed.
  if (task->depth < shared->depth) {
    for (int64_t i = 0; i < shared->fan_out; ++i) {
      unload_task_t* child = malloc(sizeof(*child));
      HAL_THREAD_CHECK(child != NULL, "malloc");
      child->shared = shared;
      child->depth = task->depth + 1;
      child->token = NULL;
      spawn(unload_task, child);
    }
  }
  atomic_fetch_add(&shared->ran, 1);
  if (task->token)
    mlirAsyncRuntimeEmplaceToken(task->token);
  free(task);
}

static void late_resume(void* handle) {
  dropper_coro_t* coro = (dropper_coro_t*)handle;
  mlirAsyncRuntimeDropRef(coro->token, 1);
  atomic_fetch_add(coro->resumed, 1);
  free(coro);
}

// The thread pool outlived its runtime in the original: destroying a
// runtime with tasks queued and running (which start more tasks) must wait
// for all of them; a coroutine still suspended on a token emplaced after
// the destroy runs on the emplacing thread.
static void Async_RuntimeUnloadedWithTasksPending(void** state) {
  uint64_t rng = hal_test_seed("RuntimeUnloadedWithTasksPending");
  uint64_t iterations = hal_test_iterations(100);
  hal_async_runtime_t* fixture = hal_async_runtime_exchange_default(NULL);
  for (uint64_t i = 0; i < iterations; ++i) {
    hal_async_runtime_t* runtime = NULL;
    HAL_ASSERT_OK(hal_async_runtime_create(
        hal_allocator_system(), 1 + (int32_t)hal_test_random_below(&rng, 3),
        &runtime));
    assert_null(hal_async_runtime_exchange_default(runtime));
    unload_state_t shared = {0, 1 + (int64_t)hal_test_random_below(&rng, 4),
                             (int)hal_test_random_below(&rng, 4)};
    int64_t roots = 1 + (int64_t)hal_test_random_below(&rng, 16);
    int64_t per_root = 1;
    for (int d = 0, width = 1; d < shared.depth; ++d) {
      width *= (int)shared.fan_out;
      per_root += width;
    }
    for (int64_t r = 0; r < roots; ++r) {
      unload_task_t* task = malloc(sizeof(*task));
      assert_non_null(task);
      task->shared = &shared;
      task->depth = 0;
      task->token = NULL;
      spawn(unload_task, task);
    }
    // A coroutine suspended on a token nobody has emplaced yet.
    atomic_int late = 0;
    void* token = mlirAsyncRuntimeCreateToken();
    dropper_coro_t* coro = malloc(sizeof(*coro));
    assert_non_null(coro);
    coro->token = token;
    coro->group = NULL;
    coro->resumed = &late;
    mlirAsyncRuntimeAddRef(token, 1);
    mlirAsyncRuntimeAwaitTokenAndExecute(token, coro, late_resume);
    jitter(&rng, 20000);
    assert_ptr_equal(hal_async_runtime_exchange_default(NULL), runtime);
    hal_async_runtime_destroy(runtime);
    // Every task, and every task they started, has run.
    assert_int_equal(atomic_load(&shared.ran), roots * per_root);
    assert_int_equal(atomic_load(&late), 0);
    mlirAsyncRuntimeEmplaceToken(token);  // resumes the coroutine here
    assert_int_equal(atomic_load(&late), 1);
    mlirAsyncRuntimeDropRef(token, 1);
    assert_int_equal(hal_async_live_object_count(), 0);
  }
  assert_null(hal_async_runtime_exchange_default(fixture));
}

// A link of a chain of coroutines, each suspended on its own token; its
// resume emplaces the next link's token.
typedef struct late_link_t {
  void** tokens;
  int64_t index;
  int64_t count;
  atomic_int_fast64_t* last;  // the index that ran last
} late_link_t;

static void late_link_resume(void* handle) {
  late_link_t* link = (late_link_t*)handle;
  int64_t last = atomic_exchange(link->last, link->index);
  HAL_THREAD_CHECK(last == link->index - 1, "link %lld ran after %lld",
                   (long long)link->index, (long long)last);
  mlirAsyncRuntimeDropRef(link->tokens[link->index], 1);  // the coroutine's
  if (link->index + 1 < link->count)
    mlirAsyncRuntimeEmplaceToken(link->tokens[link->index + 1]);
  free(link);
}

// Registers links 0 .. count - 1 of a chain on |tokens| (link i awaits
// tokens[i] and emplaces tokens[i + 1] when i + 1 < |token_count|), each
// holding a reference to its token, on the current default runtime.
static void await_late_chain(void** tokens, int64_t count, int64_t token_count,
                             atomic_int_fast64_t* last) {
  for (int64_t i = 0; i < count; ++i) {
    late_link_t* link = malloc(sizeof(*link));
    assert_non_null(link);
    *link = (late_link_t){tokens, i, token_count, last};
    mlirAsyncRuntimeAddRef(tokens[i], 1);  // for the coroutine
    mlirAsyncRuntimeAwaitTokenAndExecute(tokens[i], link, late_link_resume);
  }
}

// Makes a fresh one-worker runtime the default instead of the fixture's
// (returned in |out_fixture|): what is registered next belongs to it, and
// runs late once it is destroyed.
static hal_async_runtime_t* make_doomed_default(
    hal_async_runtime_t** out_fixture) {
  *out_fixture = hal_async_runtime_exchange_default(NULL);
  hal_async_runtime_t* runtime = NULL;
  HAL_ASSERT_OK(hal_async_runtime_create(hal_allocator_system(), 1, &runtime));
  assert_null(hal_async_runtime_exchange_default(runtime));
  return runtime;
}

// Coroutines whose runtime is gone run on the emplacing thread. A chain of
// them resolved by one emplace (each resume emplaces the next link's token)
// runs one link after another there, not nested: 100 000 links nested on
// the stack overflow it (the bound on inline resumes sent the deeper links
// to the destroyed runtime, which ran each one inside the call that
// submitted it).
static void Async_LateChainDoesNotNestOnTheStack(void** state) {
  (void)state;
  const int64_t count = 100000;
  hal_async_runtime_t* fixture = NULL;
  hal_async_runtime_t* runtime = make_doomed_default(&fixture);
  void** tokens = calloc((size_t)count, sizeof(*tokens));
  assert_non_null(tokens);
  atomic_int_fast64_t last = -1;
  for (int64_t i = 0; i < count; ++i)
    tokens[i] = mlirAsyncRuntimeCreateToken();
  // Registered here: each awaiter belongs to |runtime|, the default.
  await_late_chain(tokens, count, count, &last);
  assert_ptr_equal(hal_async_runtime_exchange_default(NULL), runtime);
  hal_async_runtime_destroy(runtime);
  assert_int_equal(atomic_load(&last), -1);
  mlirAsyncRuntimeEmplaceToken(tokens[0]);  // runs the whole chain here
  assert_int_equal(atomic_load(&last), count - 1);
  for (int64_t i = 0; i < count; ++i)
    mlirAsyncRuntimeDropRef(tokens[i], 1);
  free(tokens);
  assert_int_equal(hal_async_live_object_count(), 0);
  assert_null(hal_async_runtime_exchange_default(fixture));
}

// Links before the head: more than the inline-resume bound (8).
#define HAL_ASYNC_TEST_PREFIX_LINKS 12

// The head of a late chain: resumed late (its runtime gone), it emplaces
// the first link's token, which resumes links nested up to the bound and
// queues the deeper ones on this thread, then blocks until the last link
// ran.
typedef struct late_head_t {
  void** tokens;
  int64_t count;
  atomic_int* finished;
} late_head_t;

static void late_head_resume(void* handle) {
  late_head_t* head = (late_head_t*)handle;
  mlirAsyncRuntimeEmplaceToken(head->tokens[0]);
  // Emplaced by the last link, which is queued behind this coroutine.
  void* last = head->tokens[head->count];
  mlirAsyncRuntimeAwaitToken(last);
  HAL_THREAD_CHECK(!mlirAsyncRuntimeIsTokenError(last), "the last link failed");
  atomic_store(head->finished, 1);
  mlirAsyncRuntimeDropRef(last, 1);  // the coroutine's
  free(head);
}

// A late coroutine that blocks until late work queued behind it on its
// thread ran: the blocking await runs that work first instead of waiting
// for it forever.
static void Async_LateBlockingAwaitRunsTheLateWorkBehindIt(void** state) {
  (void)state;
  const int64_t count = 64;  // links, past the inline-resume bound
  hal_async_runtime_t* fixture = NULL;
  hal_async_runtime_t* runtime = make_doomed_default(&fixture);
  // tokens[0, count): the links' own; tokens[count]: emplaced by the last
  // link; start: the head's.
  void** tokens = calloc((size_t)count + 1, sizeof(*tokens));
  assert_non_null(tokens);
  atomic_int_fast64_t last = -1;
  for (int64_t i = 0; i <= count; ++i)
    tokens[i] = mlirAsyncRuntimeCreateToken();
  await_late_chain(tokens, count, count + 1, &last);
  // The head runs as late work, not nested in an inline resume: it awaits
  // the end of a prefix chain longer than the bound, whose links past the
  // bound run late (and the head behind them).
  enum { kPrefix = HAL_ASYNC_TEST_PREFIX_LINKS };
  void* prefix[kPrefix + 1];
  atomic_int_fast64_t prefix_last = -1;
  for (int64_t i = 0; i <= kPrefix; ++i)
    prefix[i] = mlirAsyncRuntimeCreateToken();
  await_late_chain(prefix, kPrefix, kPrefix + 1, &prefix_last);
  atomic_int finished = 0;
  void* start = prefix[kPrefix];
  late_head_t* head = malloc(sizeof(*head));
  assert_non_null(head);
  *head = (late_head_t){tokens, count, &finished};
  mlirAsyncRuntimeAddRef(tokens[count], 1);  // for the head
  mlirAsyncRuntimeAwaitTokenAndExecute(start, head, late_head_resume);
  assert_ptr_equal(hal_async_runtime_exchange_default(NULL), runtime);
  hal_async_runtime_destroy(runtime);
  mlirAsyncRuntimeEmplaceToken(prefix[0]);  // everything runs here, late
  assert_int_equal(atomic_load(&prefix_last), kPrefix - 1);
  assert_int_equal(atomic_load(&finished), 1);
  assert_int_equal(atomic_load(&last), count - 1);
  for (int64_t i = 0; i <= kPrefix; ++i)
    mlirAsyncRuntimeDropRef(prefix[i], 1);
  for (int64_t i = 0; i <= count; ++i)
    mlirAsyncRuntimeDropRef(tokens[i], 1);
  free(tokens);
  assert_int_equal(hal_async_live_object_count(), 0);
  assert_null(hal_async_runtime_exchange_default(fixture));
}

// A late chain whose links block: every kBlockEvery-th link emplaces the
// next link's token, then waits (blocking) for a token that the link three
// further on emplaces. Started from a pool task of a live runtime, where
// what a link hands over takes effect in flushes and the deeper links run
// as late work queued on that pool thread.
enum { kBlockEvery = 20 };

typedef struct blocking_chain_t {
  int64_t count;
  void** tokens;    // [count]: link i awaits tokens[i]
  void** blockers;  // [count]: link i blocks on blockers[i] (every 20th)
  atomic_int_fast64_t last;
  // Links that returned. Not "the last link ran": links blocked below it
  // on the stack still read the chain's arrays after their await returns.
  atomic_int_fast64_t returned;
} blocking_chain_t;

typedef struct blocking_link_t {
  blocking_chain_t* chain;
  int64_t index;
} blocking_link_t;

static void blocking_link_resume(void* handle) {
  blocking_link_t* link = (blocking_link_t*)handle;
  blocking_chain_t* chain = link->chain;
  int64_t i = link->index;
  free(link);
  int64_t last = atomic_exchange(&chain->last, i);
  HAL_THREAD_CHECK(last == i - 1, "link %lld ran after %lld", (long long)i,
                   (long long)last);
  mlirAsyncRuntimeDropRef(chain->tokens[i], 1);  // the coroutine's
  if (i + 1 < chain->count)
    mlirAsyncRuntimeEmplaceToken(chain->tokens[i + 1]);
  if (chain->blockers[i]) {
    mlirAsyncRuntimeAwaitToken(chain->blockers[i]);
    HAL_THREAD_CHECK(atomic_load(&chain->last) >= i + 3,
                     "link %lld's wait returned before link %lld ran",
                     (long long)i, (long long)(i + 3));
  }
  if (i >= 3 && chain->blockers[i - 3])
    mlirAsyncRuntimeEmplaceToken(chain->blockers[i - 3]);
  atomic_fetch_add(&chain->returned, 1);  // the last use of |chain|
}

static void start_blocking_chain(void* arg) {
  blocking_chain_t* chain = arg;
  mlirAsyncRuntimeEmplaceToken(chain->tokens[0]);
}

static void Async_LateChainThatBlocksRunsFromAPoolTask(void** state) {
  hal_async_runtime_t* fixture = NULL;
  hal_async_runtime_t* runtime = make_doomed_default(&fixture);
  blocking_chain_t chain = {.count = 1000, .last = -1};
  chain.tokens = calloc((size_t)chain.count, sizeof(void*));
  chain.blockers = calloc((size_t)chain.count, sizeof(void*));
  assert_true(chain.tokens && chain.blockers);
  for (int64_t i = 0; i < chain.count; ++i) {
    chain.tokens[i] = mlirAsyncRuntimeCreateToken();
    if (i % kBlockEvery == 0 && i + 3 < chain.count)
      chain.blockers[i] = mlirAsyncRuntimeCreateToken();
    blocking_link_t* link = malloc(sizeof(*link));
    assert_non_null(link);
    *link = (blocking_link_t){&chain, i};
    mlirAsyncRuntimeAddRef(chain.tokens[i], 1);
    mlirAsyncRuntimeAwaitTokenAndExecute(chain.tokens[i], link,
                                         blocking_link_resume);
  }
  assert_ptr_equal(hal_async_runtime_exchange_default(NULL), runtime);
  hal_async_runtime_destroy(runtime);
  // The fixture's runtime is alive: the chain starts in one of its tasks.
  assert_null(hal_async_runtime_exchange_default(fixture));
  spawn(start_blocking_chain, &chain);
  hal_time_t deadline = hal_time_now() + INT64_C(20000000000);
  while (atomic_load(&chain.returned) < chain.count &&
         hal_time_now() < deadline) {
    usleep(1000);
  }
  assert_int_equal(atomic_load(&chain.returned), chain.count);
  assert_int_equal(atomic_load(&chain.last), chain.count - 1);
  for (int64_t i = 0; i < chain.count; ++i) {
    mlirAsyncRuntimeDropRef(chain.tokens[i], 1);
    if (chain.blockers[i])
      mlirAsyncRuntimeDropRef(chain.blockers[i], 1);
  }
  free(chain.tokens);
  free(chain.blockers);
  (void)state;
}

// The handoff invariant (async_object.c): mlir-cpu-runner unmaps the JIT'd
// code as soon as main's last await returns, so nothing a pool task does
// may let another thread run or see anything before the task has returned
// to its worker (it was still in its code: SIGSEGV). The task registers an
// awaiter, joins a group and starts a child, then stays inside while the
// main thread emplaces/fails the awaited tokens: the awaiter, the group and
// the child must all wait for the task to return. So must the failure of a
// group whose member the task drops unresolved.
// cmocka's assertions are for the main thread only.
#define HANDOFF_THREAD_OK(expr)                         \
  do {                                                  \
    hal_status_t status_ = (expr);                      \
    HAL_THREAD_CHECK(hal_status_is_ok(status_), #expr); \
    hal_status_free(status_);                           \
  } while (0)

typedef struct handoff_state_t {
  void* token;   // awaited by |awaiter|; emplaced by the main thread
  void* member;  // joins |group|; failed by the main thread
  void* group;
  // Joined |dropped_group| from the main thread; the task drops both its
  // references unresolved (a program bug), which fails the group.
  void* dropped;
  void* dropped_group;
  hal_semaphore_t* inside;  // 1: the task made its handoffs
  hal_semaphore_t* go;      // 1: the task may return
  hal_semaphore_t* done;    // +1 per resumed awaiter or child
  atomic_bool task_left;
  atomic_int too_early;
} handoff_state_t;

static void handoff_check(handoff_state_t* shared) {
  if (!atomic_load(&shared->task_left))
    atomic_fetch_add(&shared->too_early, 1);
  HANDOFF_THREAD_OK(hal_semaphore_signal(shared->done, 2));
}

static void handoff_awaiter_resume(void* handle) {
  handoff_state_t* shared = (handoff_state_t*)handle;
  mlirAsyncRuntimeDropRef(shared->token, 1);  // the coroutine's
  handoff_check(shared);
}

static void handoff_child_resume(void* handle) {
  handoff_state_t* shared = (handoff_state_t*)handle;
  // Signaled in order after the awaiter's (value 2): wait for it first.
  HANDOFF_THREAD_OK(
      hal_semaphore_wait(shared->done, 2, hal_make_timeout_ns(60000 * HAL_MS)));
  if (!atomic_load(&shared->task_left))
    atomic_fetch_add(&shared->too_early, 1);
  HANDOFF_THREAD_OK(hal_semaphore_signal(shared->done, 3));
}

static void handoff_task(void* arg) {
  handoff_state_t* shared = (handoff_state_t*)arg;
  mlirAsyncRuntimeAwaitTokenAndExecute(shared->token, shared,
                                       handoff_awaiter_resume);
  mlirAsyncRuntimeAddTokenToGroup(shared->member, shared->group);
  mlirAsyncRuntimeDropRef(shared->member, 1);  // the task's
  mlirAsyncRuntimeExecute(shared, handoff_child_resume);
  mlirAsyncRuntimeDropRef(shared->dropped, 2);
  HANDOFF_THREAD_OK(hal_semaphore_signal(shared->inside, 1));
  // A plain semaphore wait, not an ABI await: the task stays inside.
  HANDOFF_THREAD_OK(hal_semaphore_wait(shared->go, 1, hal_infinite_timeout()));
  atomic_store(&shared->task_left, true);
}

static void Async_HandoffsWaitForTheTaskToReturn(void** state) {
  uint64_t iterations = hal_test_iterations(20);
  for (uint64_t i = 0; i < iterations; ++i) {
    handoff_state_t shared = {
        .token = mlirAsyncRuntimeCreateToken(),   // main's + coroutine's
        .member = mlirAsyncRuntimeCreateToken(),  // main's + task's
        .group = mlirAsyncRuntimeCreateGroup(1),
        .dropped = mlirAsyncRuntimeCreateToken(),
        .dropped_group = mlirAsyncRuntimeCreateGroup(1),
    };
    mlirAsyncRuntimeAddTokenToGroup(shared.dropped, shared.dropped_group);
    atomic_init(&shared.task_left, false);
    atomic_init(&shared.too_early, 0);
    HAL_ASSERT_OK(
        hal_semaphore_create_host(hal_allocator_system(), 0, &shared.inside));
    HAL_ASSERT_OK(
        hal_semaphore_create_host(hal_allocator_system(), 0, &shared.go));
    HAL_ASSERT_OK(
        hal_semaphore_create_host(hal_allocator_system(), 0, &shared.done));
    spawn(handoff_task, &shared);
    HAL_ASSERT_OK(hal_semaphore_wait(shared.inside, 1, hal_infinite_timeout()));
    // Published from this (non-pool) thread at once: an awaiter registered
    // already would resume right here, a membership would fail the group.
    mlirAsyncRuntimeEmplaceToken(shared.token);
    mlirAsyncRuntimeSetTokenError(shared.member);
    bool group_done_early = mlirAsyncRuntimeIsGroupError(shared.group);
    bool dropped_early = mlirAsyncRuntimeIsGroupError(shared.dropped_group);
    // The other worker is idle: a child submitted already would run now.
    hal_status_t status =
        hal_semaphore_wait(shared.done, 1, hal_make_timeout_ns(5 * HAL_MS));
    bool ran_early = !hal_status_is(status, HAL_STATUS_DEADLINE_EXCEEDED);
    hal_status_free(status);
    // Asserted after the task is let go, so a failure cannot hang the test.
    HAL_ASSERT_OK(hal_semaphore_signal(shared.go, 1));
    // Once the task returned, everything it handed off takes effect.
    mlirAsyncRuntimeAwaitAllInGroup(shared.group);
    assert_true(mlirAsyncRuntimeIsGroupError(shared.group));
    HAL_ASSERT_OK(hal_semaphore_wait(shared.done, 3, hal_infinite_timeout()));
    mlirAsyncRuntimeAwaitAllInGroup(shared.dropped_group);
    assert_true(mlirAsyncRuntimeIsGroupError(shared.dropped_group));
    assert_false(group_done_early);
    assert_false(dropped_early);
    assert_false(ran_early);
    assert_int_equal(atomic_load(&shared.too_early), 0);
    mlirAsyncRuntimeDropRef(shared.group, 1);
    mlirAsyncRuntimeDropRef(shared.dropped_group, 1);
    hal_semaphore_release(shared.inside);
    hal_semaphore_release(shared.go);
    hal_semaphore_release(shared.done);
  }
}

//===----------------------------------------------------------------------===//
// Chains and dropped objects against MLIR's runtime semantics
//===----------------------------------------------------------------------===//

// A pool task that holds its worker in a blocking await until |end|.
typedef struct blocked_worker_t {
  void* end;
  atomic_int* started;
} blocked_worker_t;

static void blocked_worker_task(void* arg) {
  blocked_worker_t* worker = (blocked_worker_t*)arg;
  atomic_fetch_add(worker->started, 1);
  mlirAsyncRuntimeAwaitToken(worker->end);
  HAL_THREAD_CHECK(!mlirAsyncRuntimeIsTokenError(worker->end),
                   "the chain's end is in error");
  mlirAsyncRuntimeDropRef(worker->end, 1);  // the task's
  free(worker);
}

// Every worker blocks until a chain of await-and-execute links ends; main
// emplaces the chain's head. MLIR's runtime resumes every link on the
// emplacing thread, so the chain ends before the emplace returns. Links
// past the inline-resume bound must not wait for a pool worker: every
// worker waits for this chain.
static void Async_DeepChainRunsWhileEveryWorkerIsBlocked(void** state) {
  hal_async_runtime_t* runtime = (hal_async_runtime_t*)*state;
  const int32_t workers = hal_async_runtime_worker_count(runtime);
  const int64_t count = 64;  // links, far past the bound (8)
  void** tokens = calloc((size_t)count + 1, sizeof(*tokens));
  assert_non_null(tokens);
  for (int64_t i = 0; i <= count; ++i)
    tokens[i] = mlirAsyncRuntimeCreateToken();
  void* end = tokens[count];
  atomic_int started = 0;
  for (int32_t i = 0; i < workers; ++i) {
    blocked_worker_t* worker = malloc(sizeof(*worker));
    assert_non_null(worker);
    *worker = (blocked_worker_t){end, &started};
    mlirAsyncRuntimeAddRef(end, 1);  // for the task
    spawn(blocked_worker_task, worker);
  }
  // Every worker holds a task: nothing queued now runs until |end|.
  hal_time_t deadline = hal_time_now() + INT64_C(60000000000);
  while (atomic_load(&started) < workers && hal_time_now() < deadline)
    usleep(1000);
  assert_int_equal(atomic_load(&started), workers);
  atomic_int_fast64_t last = -1;
  await_late_chain(tokens, count, count + 1, &last);
  mlirAsyncRuntimeEmplaceToken(tokens[0]);
  if (atomic_load(&last) != count - 1) {
    // The rest of the chain waits for a worker that waits for the chain:
    // the fixture's teardown would wait forever.
    fprintf(stderr,
            "FAILED: emplacing the head ran links 0..%lld of %lld; the rest "
            "wait for a blocked worker\n",
            (long long)atomic_load(&last), (long long)count);
    abort();
  }
  assert_false(mlirAsyncRuntimeIsTokenError(end));
  for (int64_t i = 0; i <= count; ++i)
    mlirAsyncRuntimeDropRef(tokens[i], 1);  // ours
  free(tokens);
}

// A chain of 2 * kNestedHalf links, each awaiting its own token and
// emplacing the next link's: links i < kNestedHalf then block in an await
// on a token that link 2 * kNestedHalf - 1 - i emplaces (so they unwind in
// order). Each worker nests 8 links before the bound: 24 blocking links
// outlast two workers.
enum { kNestedHalf = 24 };

typedef struct nested_chain_t {
  void* tokens[2 * kNestedHalf + 1];
  void* blockers[kNestedHalf];
  atomic_int returned;  // the links' last use of the chain
} nested_chain_t;

typedef struct nested_link_t {
  nested_chain_t* chain;
  int index;
} nested_link_t;

static void nested_link_resume(void* handle) {
  nested_link_t* link = (nested_link_t*)handle;
  nested_chain_t* chain = link->chain;
  int i = link->index;
  free(link);
  mlirAsyncRuntimeDropRef(chain->tokens[i], 1);  // the coroutine's
  mlirAsyncRuntimeEmplaceToken(chain->tokens[i + 1]);
  if (i < kNestedHalf) {
    mlirAsyncRuntimeAwaitToken(chain->blockers[i]);
    HAL_THREAD_CHECK(!mlirAsyncRuntimeIsTokenError(chain->blockers[i]),
                     "blocker %d in error", i);
  } else {
    mlirAsyncRuntimeEmplaceToken(chain->blockers[2 * kNestedHalf - 1 - i]);
  }
  atomic_fetch_add(&chain->returned, 1);
}

static void start_nested_chain(void* arg) {
  mlirAsyncRuntimeEmplaceToken(((nested_chain_t*)arg)->tokens[0]);
}

// The same chain resolved inside a pool task, with half of its links
// blocking in awaits: each blocking await first hands over what its link
// did, which resumes the next link nested on the worker, past the
// inline-resume bound. Those deeper links must run on that worker too (as
// MLIR's runtime runs the whole chain there): sent to the pool, they waited
// for the one other worker, blocked in the same chain.
static void Async_DeepChainInATaskRunsWhileItsLinksBlock(void** state) {
  (void)state;
  enum { kLinks = 2 * kNestedHalf };
  nested_chain_t* chain = calloc(1, sizeof(*chain));
  assert_non_null(chain);
  for (int i = 0; i <= kLinks; ++i)
    chain->tokens[i] = mlirAsyncRuntimeCreateToken();
  for (int i = 0; i < kNestedHalf; ++i)
    chain->blockers[i] = mlirAsyncRuntimeCreateToken();
  for (int i = 0; i < kLinks; ++i) {
    nested_link_t* link = malloc(sizeof(*link));
    assert_non_null(link);
    *link = (nested_link_t){chain, i};
    mlirAsyncRuntimeAddRef(chain->tokens[i], 1);  // for the coroutine
    mlirAsyncRuntimeAwaitTokenAndExecute(chain->tokens[i], link,
                                         nested_link_resume);
  }
  spawn(start_nested_chain, chain);
  hal_time_t deadline = hal_time_now() + INT64_C(60000000000);
  while (atomic_load(&chain->returned) < kLinks && hal_time_now() < deadline)
    usleep(1000);
  if (atomic_load(&chain->returned) < kLinks) {
    // The rest waits for a worker that waits for the chain: the fixture's
    // teardown would wait forever.
    fprintf(stderr, "FAILED: %d of %d links returned in 60 s\n",
            atomic_load(&chain->returned), kLinks);
    abort();
  }
  mlirAsyncRuntimeAwaitToken(chain->tokens[kLinks]);
  assert_false(mlirAsyncRuntimeIsTokenError(chain->tokens[kLinks]));
  for (int i = 0; i <= kLinks; ++i)
    mlirAsyncRuntimeDropRef(chain->tokens[i], 1);  // ours
  for (int i = 0; i < kNestedHalf; ++i)
    mlirAsyncRuntimeDropRef(chain->blockers[i], 1);  // ours
  free(chain);
}

static void never_resumed(void* handle) {
  atomic_fetch_add((atomic_int*)handle, 1);
}

// A token, value or group whose last reference goes before it is ready or
// in error (a reference-counting bug of the program) takes its awaiters
// with it, as MLIR's runtime does: they are not resumed, since they would
// query an object being freed and find it neither ready nor in error.
static void Async_AwaitersOfAnObjectDroppedUnresolvedAreNotResumed(
    void** state) {
  (void)state;
  atomic_int resumed = 0;
  void* token = mlirAsyncRuntimeCreateToken();
  mlirAsyncRuntimeAwaitTokenAndExecute(token, &resumed, never_resumed);
  mlirAsyncRuntimeDropRef(token, 2);
  void* value = mlirAsyncRuntimeCreateValue(8);
  mlirAsyncRuntimeAwaitValueAndExecute(value, &resumed, never_resumed);
  mlirAsyncRuntimeDropRef(value, 2);
  void* group = mlirAsyncRuntimeCreateGroup(2);
  mlirAsyncRuntimeAwaitAllInGroupAndExecute(group, &resumed, never_resumed);
  mlirAsyncRuntimeDropRef(group, 1);
  assert_int_equal(atomic_load(&resumed), 0);
  // Resolved objects still resume theirs, once.
  token = mlirAsyncRuntimeCreateToken();
  mlirAsyncRuntimeAwaitTokenAndExecute(token, &resumed, never_resumed);
  mlirAsyncRuntimeEmplaceToken(token);
  assert_int_equal(atomic_load(&resumed), 1);
  mlirAsyncRuntimeDropRef(token, 1);
  assert_int_equal(hal_async_live_object_count(), 0);
}

// A coroutine that awaits a resolved object again from its own resume,
// |remaining| times: each await-and-execute resumes it on this thread, at
// once. Its frames on the stack: |depth| now, |max_depth| at the most.
typedef struct reawait_t {
  void* objects[3];  // a token, a value and a group, all resolved
  uint64_t rng;
  int64_t remaining;
  int64_t resumed;
  int32_t depth;
  int32_t max_depth;
  void* done;  // emplaced after the last resume; NULL: none
} reawait_t;

static void reawait_resume(void* handle) {
  reawait_t* coro = (reawait_t*)handle;
  ++coro->resumed;
  if (++coro->depth > coro->max_depth)
    coro->max_depth = coro->depth;
  if (coro->remaining > 0) {
    --coro->remaining;
    uint64_t kind = hal_test_random_below(&coro->rng, 3);
    void* object = coro->objects[kind];
    if (kind == 0) {
      mlirAsyncRuntimeAwaitTokenAndExecute(object, coro, reawait_resume);
    } else if (kind == 1) {
      mlirAsyncRuntimeAwaitValueAndExecute(object, coro, reawait_resume);
    } else {
      mlirAsyncRuntimeAwaitAllInGroupAndExecute(object, coro, reawait_resume);
    }
  } else if (coro->done) {
    mlirAsyncRuntimeEmplaceToken(coro->done);  // takes the task's reference
  }
  --coro->depth;
}

// Awaiting an object that is already resolved resumes the coroutine at
// once on this thread, as in MLIR's runtime, and under the same bound on
// nesting as every inline resume: a coroutine that awaits resolved objects
// again from its resume, 20 000 times (the main thread) and on a pool
// thread, nests no deeper than the bound (8) plus the frames that run the
// deeper resumes one after another, and every resume has run when the
// first call returns. Unbounded, 600 000 such awaits overflowed the stack.
static void Async_ReawaitingResolvedObjectsDoesNotNest(void** state) {
  (void)state;
  uint64_t rng = hal_test_seed("ReawaitingResolvedObjectsDoesNotNest");
  const int64_t count = 20000 * (int64_t)hal_test_iterations(1);
  reawait_t coro = {{NULL}, 0, 0, 0, 0, 0, NULL};
  coro.objects[0] = mlirAsyncRuntimeCreateToken();
  mlirAsyncRuntimeEmplaceToken(coro.objects[0]);
  coro.objects[1] = mlirAsyncRuntimeCreateValue(8);
  mlirAsyncRuntimeEmplaceValue(coro.objects[1]);
  coro.objects[2] = mlirAsyncRuntimeCreateGroup(0);
  for (int on_pool = 0; on_pool <= 1; ++on_pool) {
    coro.rng = hal_test_random(&rng) | 1;
    coro.remaining = count;
    coro.resumed = 0;
    coro.max_depth = 0;
    if (on_pool) {
      coro.done = mlirAsyncRuntimeCreateToken();
      spawn(reawait_resume, &coro);
      mlirAsyncRuntimeAwaitToken(coro.done);
      assert_false(mlirAsyncRuntimeIsTokenError(coro.done));
      mlirAsyncRuntimeDropRef(coro.done, 1);  // ours; the emplace took its
      coro.done = NULL;
    } else {
      reawait_resume(&coro);
    }
    if (coro.resumed != count + 1 || coro.max_depth > 10) {
      HAL_TEST_FAIL("%s: %" PRId64 " of %" PRId64
                    " resumes ran, nested %d deep (at most 10 expected)",
                    on_pool ? "pool thread" : "main thread", coro.resumed,
                    count + 1, coro.max_depth);
    }
    assert_int_equal(coro.depth, 0);
  }
  // The emplaces took one reference each of the token and the value.
  for (int i = 0; i < 3; ++i)
    mlirAsyncRuntimeDropRef(coro.objects[i], 1);
}

static void exit_with_seven(void* arg) {
  (void)arg;
  exit(7);
}

static void block_forever(void* arg) {
  (void)arg;
  for (;;)
    pause();
}

// The child of hal_test_run_in_child_status ended by exit(|code|), and its
// stderr (|text|) has nothing from the library.
static void expect_quiet_exit(int wstatus, int code, const char* text) {
  if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != code) {
    HAL_TEST_FAIL("the child ended %s %d, not by exit(%d); its stderr: %s",
                  WIFEXITED(wstatus) ? "with status" : "by signal",
                  WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : WTERMSIG(wstatus),
                  code, text);
  }
  assert_null(strstr(text, "hal-async"));
}

// The child: a pool task calls exit(7) while another task of the pool is
// blocked and more are queued.
static void exit_from_task_child(void) {
  alarm(60);  // a hang fails the test by SIGALRM
  spawn(block_forever, NULL);
  for (int i = 0; i < 100; ++i)
    spawn(noop_task, NULL);
  spawn(exit_with_seven, NULL);
  for (int i = 0; i < 100; ++i)
    spawn(noop_task, NULL);
  block_forever(NULL);
}

// A task that calls exit() ends the process with its status: the library's
// unload, run on that pool thread, cannot drain or join the pool the
// exiting task never returns to, and leaves the runtimes to the process's
// end (it aborted with "hal_async_runtime_destroy called from one of its
// own threads").
static void Async_ExitFromATaskEndsTheProcessWithItsStatus(void** state) {
  (void)state;
  char text[4096];
  int wstatus =
      hal_test_run_in_child_status(exit_from_task_child, text, sizeof(text));
  expect_quiet_exit(wstatus, 7, text);
}

static hal_async_runtime_t* fork_parent_runtime;
static hal_semaphore_t* fork_started[2];  // 1: blocked; 2: done with both
static hal_semaphore_t* fork_gate;

static void block_until_the_gate(void* arg) {
  hal_semaphore_t* started = arg;
  HAL_ASSERT_OK(hal_semaphore_signal(started, 1));
  HAL_ASSERT_OK(hal_semaphore_wait(fork_gate, 1, hal_infinite_timeout()));
  HAL_ASSERT_OK(hal_semaphore_signal(started, 2));
}

#ifndef HAL_TSAN
static void emplace_token(void* token) {
  mlirAsyncRuntimeEmplaceToken(token);
}
#endif

// The child of a fork made while the parent's default runtime has both its
// workers in a task and more tasks queued.
static void forked_child(void) {
  alarm(60);  // a hang fails the test by SIGALRM
  // The parent's runtime: its workers and tasks are the parent's, so a
  // destroy here frees nothing and waits for nothing.
  hal_async_runtime_destroy(fork_parent_runtime);
#ifndef HAL_TSAN
  // The child's first use makes a runtime of its own, which runs its task.
  // (ThreadSanitizer does not support threads started after a fork of a
  // process with threads: it ends such a child, so the TSan build checks
  // the rest only.)
  void* token = mlirAsyncRuntimeCreateToken();
  spawn(emplace_token, token);
  mlirAsyncRuntimeAwaitToken(token);
  if (mlirAsyncRuntimeIsTokenError(token))
    exit(1);
  mlirAsyncRuntimeDropRef(token, 1);  // ours; the emplace took its
  hal_async_runtime_t* own = hal_async_runtime_exchange_default(NULL);
  if (!own || own == fork_parent_runtime)
    exit(2);
  hal_async_runtime_exchange_default(own);  // for the unload to destroy
#endif
  exit(9);  // the unload waits for no thread of the parent's
}

// A fork() child has none of the parent's pool threads. Its exit() and a
// destroy there of the parent's runtime wait for none of the parent's
// tasks (they used to wait for the running one forever), the child's own
// use of the runtime gets workers of its own, and its exit reports no
// copy of the parent's objects as still referenced.
static void Async_AForkedChildWaitsForNoTaskOfItsParent(void** state) {
  fork_parent_runtime = *state;
  assert_int_equal(hal_async_runtime_worker_count(fork_parent_runtime), 2);
  HAL_ASSERT_OK(
      hal_semaphore_create_host(hal_allocator_system(), 0, &fork_gate));
  // Both workers blocked at the fork, so outside the allocator: the
  // child allocates, which under AddressSanitizer takes the allocator's
  // locks as the fork left them (fork_child.h).
  for (int i = 0; i < 2; ++i) {
    HAL_ASSERT_OK(
        hal_semaphore_create_host(hal_allocator_system(), 0, &fork_started[i]));
    spawn(block_until_the_gate, fork_started[i]);
    HAL_ASSERT_OK(
        hal_semaphore_wait(fork_started[i], 1, hal_infinite_timeout()));
  }
  for (int i = 0; i < 100; ++i)
    spawn(noop_task, NULL);
  // Alive at the fork: the child's copy is the parent's object, not one
  // the child leaked.
  void* parents_token = mlirAsyncRuntimeCreateToken();
  char text[4096];
  int wstatus = hal_test_run_in_child_status(forked_child, text, sizeof(text));
  mlirAsyncRuntimeEmplaceToken(parents_token);
  mlirAsyncRuntimeDropRef(parents_token, 1);  // ours; the emplace took its
  HAL_ASSERT_OK(hal_semaphore_signal(fork_gate, 1));
  expect_quiet_exit(wstatus, 9, text);
  for (int i = 0; i < 2; ++i) {
    HAL_ASSERT_OK(
        hal_semaphore_wait(fork_started[i], 2, hal_infinite_timeout()));
    hal_semaphore_release(fork_started[i]);
  }
  hal_semaphore_release(fork_gate);
}

// A chain whose links resume through groups of one and block in awaits:
// link k emplaces the token of link k+1's group, then blocks until link
// k+1 emplaces what it waits for. A link through a group nests two sync
// callbacks (the member's, the group's awaiter), so deep in the chain the
// sync module defers them past its nesting bound, and the blocking await
// runs them; what they queued on the thread (a pool task's handoffs, late
// work) was left behind the await, which slept for ever. Run from a pool
// task and from a thread outside the pool (the chain then runs on it).
enum { kGroupChainLinks = 24 };

typedef struct blocking_group_chain_t {
  void* member[kGroupChainLinks + 1];   // link k's group's member
  void* unblock[kGroupChainLinks + 1];  // link k waits for it (k < count)
  void* group[kGroupChainLinks + 1];
  atomic_int returned;
} blocking_group_chain_t;

static blocking_group_chain_t* blocking_group_chain;

static void blocking_group_link_resume(void* handle) {
  int k = (int)(intptr_t)handle;
  blocking_group_chain_t* chain = blocking_group_chain;
  if (k > 1)
    mlirAsyncRuntimeEmplaceToken(chain->unblock[k - 1]);
  if (k < kGroupChainLinks) {
    mlirAsyncRuntimeEmplaceToken(chain->member[k + 1]);
    mlirAsyncRuntimeAwaitToken(chain->unblock[k]);
  }
  atomic_fetch_add(&chain->returned, 1);
}

static void start_blocking_group_chain(void* arg) {
  mlirAsyncRuntimeEmplaceToken(((blocking_group_chain_t*)arg)->member[1]);
}

static void* start_blocking_group_chain_thread(void* arg) {
  start_blocking_group_chain(arg);
  return NULL;
}

static void Async_BlockingChainThroughGroupsRuns(void** state) {
  for (int from_pool = 0; from_pool < 2; ++from_pool) {
    blocking_group_chain_t* chain = calloc(1, sizeof(*chain));
    assert_non_null(chain);
    blocking_group_chain = chain;
    for (int k = 1; k <= kGroupChainLinks; ++k) {
      chain->member[k] = mlirAsyncRuntimeCreateToken();
      chain->unblock[k] = mlirAsyncRuntimeCreateToken();
      chain->group[k] = mlirAsyncRuntimeCreateGroup(1);
      mlirAsyncRuntimeAddTokenToGroup(chain->member[k], chain->group[k]);
      mlirAsyncRuntimeAwaitAllInGroupAndExecute(
          chain->group[k], (void*)(intptr_t)k, blocking_group_link_resume);
    }
    pthread_t thread;
    if (from_pool) {
      spawn(start_blocking_group_chain, chain);
    } else {
      assert_int_equal(pthread_create(&thread, NULL,
                                      start_blocking_group_chain_thread, chain),
                       0);
    }
    hal_time_t deadline = hal_time_now() + INT64_C(20000000000);
    while (atomic_load(&chain->returned) < kGroupChainLinks &&
           hal_time_now() < deadline) {
      usleep(1000);
    }
    assert_int_equal(atomic_load(&chain->returned), kGroupChainLinks);
    if (!from_pool)
      assert_int_equal(pthread_join(thread, NULL), 0);
    mlirAsyncRuntimeEmplaceToken(chain->unblock[kGroupChainLinks]);  // unused
    for (int k = 1; k <= kGroupChainLinks; ++k) {
      mlirAsyncRuntimeDropRef(chain->member[k], 1);
      mlirAsyncRuntimeDropRef(chain->unblock[k], 1);
      mlirAsyncRuntimeDropRef(chain->group[k], 1);
    }
    free(chain);
  }
  (void)state;
}

// A fork() while other threads make and drop tokens: the child makes one
// of its own. The parent's threads may hold the idle tokens' lock at the
// fork (the child hung on it) or be changing their list. Not in
// sanitizer builds: AddressSanitizer's allocator has no token cache to
// test and its locks may be held at the fork (fork_child.h), and
// ThreadSanitizer does not follow a fork of a process whose threads run.
#if !defined(__SANITIZE_ADDRESS__) && !defined(HAL_TSAN)
static atomic_int fork_churn_stop;

static void* fork_churn_main(void* arg) {
  while (!atomic_load(&fork_churn_stop)) {
    void* token = mlirAsyncRuntimeCreateToken();
    mlirAsyncRuntimeEmplaceToken(token);
    mlirAsyncRuntimeDropRef(token, 1);
  }
  return arg;
}
#endif

static void Async_AForkedChildMakesTokensWhileItsParentDoes(void** state) {
#if defined(__SANITIZE_ADDRESS__) || defined(HAL_TSAN)
  print_message(
      "[  SKIPPED ] a fork while threads allocate: not in "
      "sanitizer builds (above)\n");
  skip();
#else
  pthread_t threads[2];
  for (int i = 0; i < 2; ++i)
    assert_int_equal(pthread_create(&threads[i], NULL, fork_churn_main, NULL),
                     0);
  int hung = 0;
  for (int i = 0; i < 200 && hung == 0; ++i) {
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
      alarm(5);
      void* token = mlirAsyncRuntimeCreateToken();
      mlirAsyncRuntimeEmplaceToken(token);
      mlirAsyncRuntimeDropRef(token, 1);
      _exit(0);
    }
    int wstatus = 0;
    assert_int_equal(waitpid(pid, &wstatus, 0), pid);
    if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
      print_message("[          ] fork %d: the child did not exit 0\n", i);
      ++hung;
    }
  }
  atomic_store(&fork_churn_stop, 1);
  for (int i = 0; i < 2; ++i)
    assert_int_equal(pthread_join(threads[i], NULL), 0);
  assert_int_equal(hung, 0);
#endif
  (void)state;
}

// The test list: CASE binds this program's fixture.
#define CASE(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(BadInput_MisuseIsCaught),
      cmocka_unit_test(BadInput_WorkerThreadsSettingIsChecked),
      cmocka_unit_test(Async_ExitFromATaskEndsTheProcessWithItsStatus),
      CASE(Async_TokenLifecycle),
      CASE(Async_AForkedChildWaitsForNoTaskOfItsParent),
      CASE(Async_ValueStorage),
      CASE(Async_AwaitAndExecuteChains),
      CASE(Async_ErrorsThroughAwaits),
      CASE(Async_GroupOfThousands),
      CASE(Async_GroupIsInErrorOnceAMembersSetErrorReturns),
      CASE(Async_GroupAddVsTokenEmplace),
      CASE(Async_GroupAwaitReturnsOnlyOnceItsLastMemberIsReady),
      CASE(Async_LastReferenceDroppedInsideEmplace),
      CASE(Async_RuntimeUnloadedWithTasksPending),
      CASE(Async_LateChainDoesNotNestOnTheStack),
      CASE(Async_LateBlockingAwaitRunsTheLateWorkBehindIt),
      CASE(Async_LateChainThatBlocksRunsFromAPoolTask),
      CASE(Async_BlockingChainThroughGroupsRuns),
      CASE(Async_AForkedChildMakesTokensWhileItsParentDoes),
      CASE(Async_HandoffsWaitForTheTaskToReturn),
      CASE(Async_DeepChainRunsWhileEveryWorkerIsBlocked),
      CASE(Async_DeepChainInATaskRunsWhileItsLinksBlock),
      CASE(Async_AwaitersOfAnObjectDroppedUnresolvedAreNotResumed),
      CASE(Async_ReawaitingResolvedObjectsDoesNotNest),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
