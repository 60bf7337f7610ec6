// Copyright 2026 The HAL Authors.
//
// CTS suite "stress": randomized submission DAGs over several queues and
// devices checked against a host reference model, timeout-vs-signal races
// (K9), and destroy-while-busy loops (K2, K7). Short by default; set
// HAL_STRESS_ITERATIONS for a soak run. Every run prints its seed
// (HAL_TEST_SEED reproduces it).

#include "cts.h"

#define MAX_DEVICES 2
#define MAX_SEMAPHORES 6
#define MAX_SUBMISSIONS 96
#define SLOT_SIZE 4  // bytes per submission slot

typedef struct planned_submission_t {
  uint32_t device;
  uint32_t queue;
  uint32_t signal_semaphore;
  uint64_t signal_value;
  // Waits: the signal semaphore's previous value (its timeline order), and
  // maybe one more earlier (semaphore, value).
  uint32_t wait_count;
  uint32_t wait_semaphore[2];
  uint64_t wait_value[2];
  // The submission whose slot this one copies into its "seen" slot (same
  // device, earlier in the DAG, ordered before it by a wait), or -1.
  int32_t observed;
} planned_submission_t;

typedef struct dag_t {
  uint32_t device_count;
  hal_device_t* devices[MAX_DEVICES];
  uint32_t queue_counts[MAX_DEVICES];
  hal_buffer_t* slots[MAX_DEVICES];  // slot i: written by submission i
  hal_buffer_t* seen[MAX_DEVICES];   // slot i: copy of its observed slot
  hal_semaphore_t* semaphores[MAX_SEMAPHORES];
  uint32_t semaphore_device[MAX_SEMAPHORES];
  uint64_t final_value[MAX_SEMAPHORES];
  // Which submission signaled (semaphore, value); -1 for host signals.
  int32_t signaler[MAX_SEMAPHORES][MAX_SUBMISSIONS + 1];
  planned_submission_t plan[MAX_SUBMISSIONS];
  uint32_t count;
} dag_t;

static void dag_plan(dag_t* dag, cts_random_t* random) {
  for (uint32_t s = 0; s < MAX_SEMAPHORES; ++s) {
    dag->final_value[s] = 0;
    for (uint32_t v = 0; v <= MAX_SUBMISSIONS; ++v)
      dag->signaler[s][v] = -1;
  }
  for (uint32_t i = 0; i < dag->count; ++i) {
    planned_submission_t* p = &dag->plan[i];
    p->device = cts_random_below(random, dag->device_count);
    p->queue = cts_random_below(random, dag->queue_counts[p->device]);
    p->signal_semaphore = cts_random_below(random, MAX_SEMAPHORES);
    uint64_t previous = dag->final_value[p->signal_semaphore];
    p->signal_value = previous + 1;
    dag->final_value[p->signal_semaphore] = p->signal_value;
    dag->signaler[p->signal_semaphore][p->signal_value] = (int32_t)i;
    p->wait_count = 0;
    p->observed = -1;
    if (previous > 0) {
      p->wait_semaphore[p->wait_count] = p->signal_semaphore;
      p->wait_value[p->wait_count++] = previous;
    }
    // One more dependency on an earlier signal, sometimes.
    uint32_t other = cts_random_below(random, MAX_SEMAPHORES);
    if (cts_random_below(random, 2) && dag->final_value[other] > 0 &&
        other != p->signal_semaphore) {
      uint64_t value =
          1 + cts_random_below(random, (uint32_t)dag->final_value[other]);
      p->wait_semaphore[p->wait_count] = other;
      p->wait_value[p->wait_count++] = value;
    }
    // Observe a same-device dependency's slot: its write must be visible.
    for (uint32_t w = 0; w < p->wait_count; ++w) {
      int32_t j = dag->signaler[p->wait_semaphore[w]][p->wait_value[w]];
      if (j >= 0 && dag->plan[j].device == p->device)
        p->observed = j;
    }
  }
}

static void dag_submit(dag_t* dag, uint32_t i) {
  planned_submission_t* p = &dag->plan[i];
  hal_device_t* device = dag->devices[p->device];
  hal_command_buffer_t* cb =
      cts_begin_command_buffer(device, HAL_COMMAND_BUFFER_MODE_ONE_SHOT);
  if (p->observed >= 0) {
    HAL_ASSERT_OK(hal_command_buffer_copy_buffer(
        cb, dag->slots[p->device], (uint64_t)p->observed * SLOT_SIZE,
        dag->seen[p->device], (uint64_t)i * SLOT_SIZE, SLOT_SIZE));
    HAL_ASSERT_OK(hal_command_buffer_execution_barrier(cb));
  }
  uint32_t value = i + 1;
  HAL_ASSERT_OK(hal_command_buffer_fill_buffer(cb, dag->slots[p->device],
                                               (uint64_t)i * SLOT_SIZE,
                                               SLOT_SIZE, &value, 4));
  HAL_ASSERT_OK(hal_command_buffer_end(cb));
  hal_semaphore_t* waits[2];
  for (uint32_t w = 0; w < p->wait_count; ++w) {
    waits[w] = dag->semaphores[p->wait_semaphore[w]];
  }
  hal_semaphore_list_t wait_list = {p->wait_count, waits, p->wait_value};
  hal_semaphore_t* signal = dag->semaphores[p->signal_semaphore];
  hal_semaphore_list_t signal_list = {1, &signal, &p->signal_value};
  HAL_ASSERT_OK(hal_device_queue_execute(device, p->queue, &wait_list,
                                         &signal_list, 1, &cb));
  hal_command_buffer_release(cb);  // the queue keeps it alive (Q3)
}

static void run_random_dag(uint64_t stream, uint32_t submissions) {
  dag_t* dag = calloc(1, sizeof(*dag));
  assert_non_null(dag);
  cts_random_t random = cts_random_make(stream);
  dag->device_count = cts_context.device_count < MAX_DEVICES
                          ? cts_context.device_count
                          : MAX_DEVICES;
  dag->count = submissions < MAX_SUBMISSIONS ? submissions : MAX_SUBMISSIONS;
  for (uint32_t d = 0; d < dag->device_count; ++d) {
    dag->devices[d] = cts_create_device(d);
    dag->queue_counts[d] = hal_device_info(dag->devices[d])->queue_count;
    dag->slots[d] =
        cts_allocate_buffer(dag->devices[d], HAL_MEMORY_TYPE_DEVICE_LOCAL,
                            MAX_SUBMISSIONS * SLOT_SIZE);
    dag->seen[d] =
        cts_allocate_buffer(dag->devices[d], HAL_MEMORY_TYPE_DEVICE_LOCAL,
                            MAX_SUBMISSIONS * SLOT_SIZE);
    uint8_t zeros[MAX_SUBMISSIONS * SLOT_SIZE] = {0};
    HAL_ASSERT_OK(hal_buffer_write(dag->slots[d], 0, zeros, sizeof(zeros)));
    HAL_ASSERT_OK(hal_buffer_write(dag->seen[d], 0, zeros, sizeof(zeros)));
  }
  for (uint32_t s = 0; s < MAX_SEMAPHORES; ++s) {
    dag->semaphore_device[s] = s % dag->device_count;
    dag->semaphores[s] =
        cts_create_semaphore(dag->devices[dag->semaphore_device[s]], 0);
  }
  dag_plan(dag, &random);

  // Submit in a random order: most waits come before their signals (S4).
  uint32_t order[MAX_SUBMISSIONS];
  for (uint32_t i = 0; i < dag->count; ++i)
    order[i] = i;
  for (uint32_t i = dag->count; i > 1; --i) {
    uint32_t j = cts_random_below(&random, i);
    uint32_t t = order[i - 1];
    order[i - 1] = order[j];
    order[j] = t;
  }
  for (uint32_t i = 0; i < dag->count; ++i)
    dag_submit(dag, order[i]);

  // Wait for every semaphore's final value and check the model.
  for (uint32_t s = 0; s < MAX_SEMAPHORES; ++s) {
    if (dag->final_value[s] == 0)
      continue;
    hal_status_t status = cts_wait(dag->semaphores[s], dag->final_value[s]);
    if (status) {
      char text[1024];
      hal_status_format(status, text, sizeof(text));
      hal_status_free(status);
      fail_msg("semaphore %u never reached %" PRIu64 ": %s", s,
               dag->final_value[s], text);
    }
    assert_int_equal(cts_query(dag->semaphores[s]), dag->final_value[s]);
  }
  for (uint32_t d = 0; d < dag->device_count; ++d) {
    uint32_t slots[MAX_SUBMISSIONS], seen[MAX_SUBMISSIONS];
    HAL_ASSERT_OK(hal_buffer_read(dag->slots[d], 0, slots, sizeof(slots)));
    HAL_ASSERT_OK(hal_buffer_read(dag->seen[d], 0, seen, sizeof(seen)));
    for (uint32_t i = 0; i < dag->count; ++i) {
      const planned_submission_t* p = &dag->plan[i];
      if (p->device != d)
        continue;
      assert_int_equal(slots[i], i + 1);
      if (p->observed >= 0) {
        // The observed submission completed before this one started (S6).
        if (seen[i] != (uint32_t)p->observed + 1) {
          fail_msg(
              "submission %u saw %u in slot %d, expected %d: it ran "
              "before its wait was satisfied",
              i, seen[i], p->observed, p->observed + 1);
        }
      }
    }
  }
  for (uint32_t s = 0; s < MAX_SEMAPHORES; ++s) {
    hal_semaphore_release(dag->semaphores[s]);
  }
  for (uint32_t d = 0; d < dag->device_count; ++d) {
    hal_buffer_release(dag->slots[d]);
    hal_buffer_release(dag->seen[d]);
    hal_device_release(dag->devices[d]);
  }
  free(dag);
}

CTS_CASE(Stress_RandomSubmissionDag) {
  uint32_t rounds = cts_iterations(4);
  for (uint32_t round = 0; round < rounds; ++round) {
    run_random_dag(round + 1, 64);
  }
}

// K9: waits with short timeouts race signals; an OK wait always sees its
// value, and every waiter finishes.
typedef struct timeout_race_t {
  hal_semaphore_t* semaphore;
  uint64_t last_value;
  cts_random_t random;
  uint32_t violations;
  uint32_t oks;
} timeout_race_t;

static void* timeout_race_waiter(void* arg) {
  timeout_race_t* race = arg;
  for (;;) {
    uint64_t current = 0;
    hal_status_t query = hal_semaphore_query(race->semaphore, &current);
    hal_status_free(query);
    if (current >= race->last_value)
      break;
    uint64_t target = current + 1 + cts_random_below(&race->random, 3);
    hal_duration_t timeout =
        (hal_duration_t)cts_random_below(&race->random, 200) * 1000;
    hal_status_t status = hal_semaphore_wait(race->semaphore, target,
                                             hal_make_timeout_ns(timeout));
    if (status == HAL_OK) {
      uint64_t seen = 0;
      hal_status_t again = hal_semaphore_query(race->semaphore, &seen);
      if (again != HAL_OK || seen < target)
        ++race->violations;
      hal_status_free(again);
      ++race->oks;
    } else if (hal_status_code(status) != HAL_STATUS_DEADLINE_EXCEEDED) {
      ++race->violations;
    }
    hal_status_free(status);
  }
  return NULL;
}

CTS_CASE(Stress_WaitTimeoutVersusSignalRace) {
  hal_device_t* device = cts_create_device(0);
  hal_semaphore_t* semaphore = cts_create_semaphore(device, 0);
  enum { kWaiters = 3 };
  uint64_t last = cts_iterations(2000);
  timeout_race_t races[kWaiters];
  pthread_t threads[kWaiters];
  for (int i = 0; i < kWaiters; ++i) {
    races[i] = (timeout_race_t){semaphore, last,
                                cts_random_make(100 + (uint64_t)i), 0, 0};
    assert_int_equal(
        pthread_create(&threads[i], NULL, timeout_race_waiter, &races[i]), 0);
  }
  cts_random_t random = cts_random_make(99);
  for (uint64_t v = 1; v <= last; ++v) {
    HAL_ASSERT_OK(hal_semaphore_signal(semaphore, v));
    if (cts_random_below(&random, 8) == 0) {
      hal_sleep_until(hal_time_now() +
                      (hal_duration_t)cts_random_below(&random, 100) * 1000);
    }
  }
  for (int i = 0; i < kWaiters; ++i) {
    pthread_join(threads[i], NULL);
    assert_int_equal(races[i].violations, 0);
  }
  hal_semaphore_release(semaphore);
  hal_device_release(device);
}

// K2/K7: create a device, submit chains (some parked, some with no
// signals), release everything at once; thousands of times in a soak run.
CTS_CASE(Stress_DestroyWhileBusy) {
  uint32_t rounds = cts_iterations(20);
  for (uint32_t round = 0; round < rounds; ++round) {
    hal_device_t* device = cts_create_device(round % cts_context.device_count);
    hal_semaphore_t* gate = cts_create_semaphore(device, 0);
    hal_semaphore_t* chain = cts_create_semaphore(device, 0);
    hal_buffer_t* buffer =
        cts_allocate_buffer(device, HAL_MEMORY_TYPE_DEVICE_LOCAL, 1024);
    uint32_t queues = hal_device_info(device)->queue_count;
    for (uint32_t i = 0; i < 6; ++i) {
      hal_command_buffer_t* cb =
          cts_begin_command_buffer(device, HAL_COMMAND_BUFFER_MODE_ONE_SHOT);
      uint8_t value = (uint8_t)i;
      HAL_ASSERT_OK(
          hal_command_buffer_fill_buffer(cb, buffer, 0, 1024, &value, 1));
      HAL_ASSERT_OK(hal_command_buffer_end(cb));
      // Even submissions run now; odd ones wait on a gate nobody opens.
      hal_semaphore_t* wait = (i % 2) ? gate : NULL;
      hal_semaphore_t* signal = (i % 3 == 2) ? NULL : chain;
      HAL_ASSERT_OK(
          cts_submit(device, i % queues, wait, 1, cb, signal, (uint64_t)i + 1));
      hal_command_buffer_release(cb);
    }
    hal_buffer_release(buffer);
    hal_device_release(device);  // parked work is cancelled, not hung
    hal_semaphore_release(gate);
    hal_semaphore_release(chain);
  }
}

// Queue-ordered memory in a chain over every queue, submitted back to front
// (wait-before-signal) in random-sized rounds: each round an alloca, a fill
// of it with the round's byte, a copy into the round's slot of a plain
// buffer, the dealloca, each step on a random queue and waiting for the
// step before. Every slot holds its round's byte at the end. Under
// HAL_TRACE (stress_traced) each alloca and dealloca is a submission with
// device work, which trace_check requires one device span of.
CTS_CASE(Stress_QueueOrderedAllocationChain) {
  enum { kSlot = 4096, kMaxRounds = 24, kSteps = 4 };
  cts_random_t random = cts_random_make(11);
  uint32_t rounds = 8 + cts_random_below(&random, kMaxRounds - 8 + 1);
  hal_device_t* device = cts_create_device(0);
  uint32_t queues = hal_device_info(device)->queue_count;
  hal_semaphore_t* chain = cts_create_semaphore(device, 0);
  hal_buffer_t* slots = cts_zeroed_buffer(device, (uint64_t)kSlot * rounds);
  hal_buffer_t* memory[kMaxRounds] = {NULL};
  const hal_buffer_params_t params = {
      .memory_type = HAL_MEMORY_TYPE_DEVICE_LOCAL,
      .usage = HAL_BUFFER_USAGE_DEFAULT,
  };
  // The allocas first (they make the handles the later steps name), each
  // waiting for the end of the round before it; then the other steps, the
  // last round's first.
  for (uint32_t r = 0; r < rounds; ++r) {
    uint64_t wait_value = (uint64_t)r * kSteps, signal_value = wait_value + 1;
    hal_semaphore_list_t waits = {r ? 1 : 0, &chain, &wait_value};
    hal_semaphore_list_t signals = {1, &chain, &signal_value};
    HAL_ASSERT_OK(
        hal_device_queue_alloca(device, cts_random_below(&random, queues),
                                &waits, &signals, params, kSlot, &memory[r]));
  }
  for (uint32_t i = rounds; i-- > 0;) {
    for (uint32_t step = kSteps - 1; step >= 1; --step) {
      uint64_t wait_value = (uint64_t)i * kSteps + step;
      uint64_t signal_value = wait_value + 1;
      hal_semaphore_list_t waits = {1, &chain, &wait_value};
      hal_semaphore_list_t signals = {1, &chain, &signal_value};
      uint32_t queue = cts_random_below(&random, queues);
      uint8_t pattern = (uint8_t)(0x40 + i);
      if (step == 1) {
        HAL_ASSERT_OK(hal_device_queue_fill(device, queue, &waits, &signals,
                                            memory[i], 0, kSlot, &pattern, 1));
      } else if (step == 2) {
        HAL_ASSERT_OK(hal_device_queue_copy(device, queue, &waits, &signals,
                                            memory[i], 0, slots,
                                            (uint64_t)kSlot * i, kSlot));
      } else {
        HAL_ASSERT_OK(hal_device_queue_dealloca(device, queue, &waits, &signals,
                                                memory[i]));
      }
    }
  }
  HAL_ASSERT_OK(cts_wait(chain, (uint64_t)rounds * kSteps));
  for (uint32_t i = 0; i < rounds; ++i) {
    cts_expect_bytes(slots, (uint64_t)kSlot * i, kSlot, (uint8_t)(0x40 + i));
    hal_buffer_release(memory[i]);
  }
  hal_buffer_release(slots);
  hal_semaphore_release(chain);
  hal_device_release(device);
}

// The test list: CASE binds this program's fixture.
#define CASE(name) cmocka_unit_test(name)

int main(void) {
  const struct CMUnitTest tests[] = {
      CASE(Stress_RandomSubmissionDag),
      CASE(Stress_WaitTimeoutVersusSignalRace),
      CASE(Stress_DestroyWhileBusy),
      CASE(Stress_QueueOrderedAllocationChain),
  };
  return cts_main("stress", tests, HAL_ARRAYSIZE(tests));
}
