// Helpers shared by the vgpu test programs.
#ifndef VGPU_TESTS_TESTUTIL_H_
#define VGPU_TESTS_TESTUTIL_H_

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vapi.h"

// The table of the facade under test, opened by testutil_main.
extern vapi api;

// Parses "API LIBRARY [TEST]" from the command line, prints the seed, opens
// the library. Returns the selected test name (or NULL for all).
const char* testutil_setup(int argc, char** argv);
void testutil_teardown(void);
// Runs |tests| as |group| (only the case named |only| when not NULL: a name
// that matches no case is an error, never a run of nothing), then tears
// down. Returns the exit code.
struct CMUnitTest;
int testutil_run(const char* group, const struct CMUnitTest* tests,
                 size_t count, const char* only);
// The test seed: VGPU_SEED, else HAL_TEST_SEED, else time-based (printed).
uint64_t testutil_seed(void);
// Multiplier of stress loops' iteration counts: HAL_STRESS_ITERATIONS (a
// positive integer), else 1.
unsigned testutil_stress_scale(void);
uint64_t testutil_now_ms(void);
void testutil_sleep_ms(unsigned ms);

// A gate a host function blocks on until the test opens it (bounded by
// 10 s so a broken runtime fails instead of hanging).
typedef struct gate {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  bool open;
  atomic_int entered;
} gate;
void gate_init(gate* g);
void gate_open(gate* g);
void gate_destroy(gate* g);
void gate_host_fn(void* arg);  // host function: waits for the gate

// A module image: vgpu_module_header + the test kernels' shared object
// (path from VGPU_TEST_KERNELS). free() it.
void* testutil_module_image(void);

// Captures what the library writes on stderr between begin and end.
void capture_begin(void);
char* capture_end(void);  // malloc'd text

#endif  // VGPU_TESTS_TESTUTIL_H_
