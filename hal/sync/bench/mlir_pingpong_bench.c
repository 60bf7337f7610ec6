// Copyright 2026 The HAL Authors.
//
// The ping-pong benchmark, MLIR peer: signal -> woken round trip through
//   1. our host semaphores (two semaphores, increasing payloads);
//   2. MLIR 14's async runtime tokens (libmlir_async_runtime.so.14, reached
//      through the C++ shim compat/mlir_ref): create, emplace, await;
//   3. the same token protocol on libhal-async-runtime (tokens on our
//      semaphores), for reference.
// Usage: mlir_pingpong_bench [rounds] (default 20000). Prints ns per round
// trip and the ratio MLIR / ours (target: ours faster).

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "hal/mlir_async.h"
#include "hal/semaphore.h"
#include "hal/time.h"
#include "mlir_ref.h"

static int64_t rounds = 20000;

//===----------------------------------------------------------------------===//
// Semaphores
//===----------------------------------------------------------------------===//

typedef struct semaphore_pair_t {
  hal_semaphore_t* ping;
  hal_semaphore_t* pong;
} semaphore_pair_t;

static void check(hal_status_t status) {
  if (status) {
    hal_status_fprint(stderr, status);
    abort();
  }
}

static void* semaphore_echo(void* arg) {
  semaphore_pair_t* pair = (semaphore_pair_t*)arg;
  for (int64_t i = 1; i <= rounds; ++i) {
    check(hal_semaphore_wait(pair->ping, (uint64_t)i, hal_infinite_timeout()));
    check(hal_semaphore_signal(pair->pong, (uint64_t)i));
  }
  return NULL;
}

static double semaphore_round_trip_ns(void) {
  semaphore_pair_t pair;
  check(hal_semaphore_create_host(hal_allocator_system(), 0, &pair.ping));
  check(hal_semaphore_create_host(hal_allocator_system(), 0, &pair.pong));
  pthread_t thread;
  pthread_create(&thread, NULL, semaphore_echo, &pair);
  hal_time_t start = hal_time_now();
  for (int64_t i = 1; i <= rounds; ++i) {
    check(hal_semaphore_signal(pair.ping, (uint64_t)i));
    check(hal_semaphore_wait(pair.pong, (uint64_t)i, hal_infinite_timeout()));
  }
  hal_time_t end = hal_time_now();
  pthread_join(thread, NULL);
  hal_semaphore_release(pair.ping);
  hal_semaphore_release(pair.pong);
  return (double)(end - start) / (double)rounds;
}

//===----------------------------------------------------------------------===//
// Tokens (either runtime, through the same table)
//===----------------------------------------------------------------------===//

typedef struct token_pingpong_t {
  const hal_mlir_ref_api_t* api;
  // Round i's tokens; main creates round i + 1's before emplacing ping[i],
  // so the echo thread (which awaited ping[i]) finds them.
  void** ping;
  void** pong;
} token_pingpong_t;

static void* token_echo(void* arg) {
  token_pingpong_t* state = (token_pingpong_t*)arg;
  const hal_mlir_ref_api_t* api = state->api;
  for (int64_t i = 0; i < rounds; ++i) {
    api->await_token(state->ping[i]);
    api->drop_ref(state->ping[i], 1);
    api->emplace_token(state->pong[i]);  // drops the emplacer's reference
  }
  return NULL;
}

static double token_round_trip_ns(const hal_mlir_ref_api_t* api) {
  token_pingpong_t state = {api, calloc((size_t)rounds + 1, sizeof(void*)),
                            calloc((size_t)rounds + 1, sizeof(void*))};
  if (!state.ping || !state.pong)
    abort();
  state.ping[0] = api->create_token();
  state.pong[0] = api->create_token();
  pthread_t thread;
  pthread_create(&thread, NULL, token_echo, &state);
  hal_time_t start = hal_time_now();
  for (int64_t i = 0; i < rounds; ++i) {
    state.ping[i + 1] = api->create_token();
    state.pong[i + 1] = api->create_token();
    api->emplace_token(state.ping[i]);
    api->await_token(state.pong[i]);
    api->drop_ref(state.pong[i], 1);
  }
  hal_time_t end = hal_time_now();
  pthread_join(thread, NULL);
  // The spare last round's tokens: 2 references each.
  api->drop_ref(state.ping[rounds], 2);
  api->drop_ref(state.pong[rounds], 2);
  free(state.ping);
  free(state.pong);
  return (double)(end - start) / (double)rounds;
}

int main(int argc, char** argv) {
  if (argc > 1)
    rounds = strtoll(argv[1], NULL, 10);
  if (rounds <= 0)
    rounds = 20000;

  hal_mlir_ref_api_t ours = {
      .add_ref = mlirAsyncRuntimeAddRef,
      .drop_ref = mlirAsyncRuntimeDropRef,
      .create_token = mlirAsyncRuntimeCreateToken,
      .create_group = mlirAsyncRuntimeCreateGroup,
      .emplace_token = mlirAsyncRuntimeEmplaceToken,
      .set_token_error = mlirAsyncRuntimeSetTokenError,
      .is_token_error = mlirAsyncRuntimeIsTokenError,
      .await_token = mlirAsyncRuntimeAwaitToken,
      .add_token_to_group = mlirAsyncRuntimeAddTokenToGroup,
      .await_all_in_group = mlirAsyncRuntimeAwaitAllInGroup,
      .execute = mlirAsyncRuntimeExecute,
      .await_token_and_execute = mlirAsyncRuntimeAwaitTokenAndExecute,
      .is_group_error = mlirAsyncRuntimeIsGroupError,
      .num_worker_threads = mlirAsyncRuntimGetNumWorkerThreads,
  };
  hal_mlir_ref_api_t mlir;
  char error[512];
  bool have_mlir = hal_mlir_ref_load(NULL, &mlir, error, sizeof(error));
  if (!have_mlir)
    fprintf(stderr, "MLIR runtime unavailable: %s\n", error);

  // Warm up each path once, then measure interleaved.
  int64_t measured = rounds;
  rounds = measured / 10 + 1;
  (void)semaphore_round_trip_ns();
  (void)token_round_trip_ns(&ours);
  if (have_mlir)
    (void)token_round_trip_ns(&mlir);
  rounds = measured;
  double semaphore_ns = semaphore_round_trip_ns();
  double ours_ns = token_round_trip_ns(&ours);
  double mlir_ns = have_mlir ? token_round_trip_ns(&mlir) : 0.0;

  printf("signal -> woken round trip, %" PRId64 " rounds (ns)\n", rounds);
  printf("  hal semaphores                          %10.0f\n", semaphore_ns);
  printf("  libhal-async-runtime tokens             %10.0f\n", ours_ns);
  if (have_mlir) {
    printf("  MLIR 14 runtime tokens                  %10.0f\n", mlir_ns);
    printf("  MLIR tokens / hal semaphores            %10.2fx\n",
           mlir_ns / semaphore_ns);
    printf("  MLIR tokens / libhal-async-runtime      %10.2fx\n",
           mlir_ns / ours_ns);
    hal_mlir_ref_unload();
  }
  return 0;
}
