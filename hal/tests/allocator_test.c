// Copyright 2026 The HAL Authors.

#include "hal_test.h"

// Counts allocations and can be told to fail.
typedef struct counting_allocator_t {
  int live;
  int total;
  int fail_after;  // fail allocations once |total| reaches this (-1: never)
} counting_allocator_t;

static void* counting_malloc(void* self, size_t size) {
  counting_allocator_t* counter = self;
  if (counter->fail_after >= 0 && counter->total >= counter->fail_after) {
    return NULL;
  }
  ++counter->total;
  ++counter->live;
  return malloc(size);
}

static void* counting_realloc(void* self, void* ptr, size_t size) {
  return realloc(ptr, size);
}

static void counting_free(void* self, void* ptr) {
  --((counting_allocator_t*)self)->live;
  free(ptr);
}

static hal_allocator_t counting_allocator(counting_allocator_t* counter) {
  hal_allocator_t allocator = {counter, counting_malloc, counting_realloc,
                               counting_free};
  return allocator;
}

static void Allocator_SystemAllocatorZeroFills(void** state) {
  unsigned char* bytes = NULL;
  HAL_ASSERT_OK(
      hal_allocator_malloc(hal_allocator_system(), 64, (void**)&bytes));
  for (int i = 0; i < 64; ++i)
    assert_int_equal(bytes[i], 0);
  HAL_ASSERT_OK(
      hal_allocator_realloc(hal_allocator_system(), 128, (void**)&bytes));
  hal_allocator_free(hal_allocator_system(), bytes);
  hal_allocator_free(hal_allocator_system(), NULL);
}

static void Allocator_HooksAreUsed(void** state) {
  counting_allocator_t counter = {0, 0, -1};
  hal_allocator_t allocator = counting_allocator(&counter);
  void* a = NULL;
  char* s = NULL;
  HAL_ASSERT_OK(hal_allocator_malloc(allocator, 10, &a));
  HAL_ASSERT_OK(hal_allocator_strdup(allocator, "hello", &s));
  assert_string_equal(s, "hello");
  assert_int_equal(counter.live, 2);
  hal_allocator_free(allocator, a);
  hal_allocator_free(allocator, s);
  assert_int_equal(counter.live, 0);
}

static void Allocator_ExhaustionIsResourceExhausted(void** state) {
  counting_allocator_t counter = {0, 0, 0};
  void* ptr = (void*)1;
  HAL_ASSERT_STATUS(
      HAL_STATUS_RESOURCE_EXHAUSTED, "123 bytes",
      hal_allocator_malloc(counting_allocator(&counter), 123, &ptr));
  assert_null(ptr);
}

static void Allocator_OverflowIsRejectedBeforeAllocating(void** state) {
  counting_allocator_t counter = {0, 0, -1};
  void* ptr = (void*)1;
  HAL_ASSERT_STATUS(HAL_STATUS_OUT_OF_RANGE, "overflows",
                    hal_allocator_malloc_array(counting_allocator(&counter),
                                               SIZE_MAX / 2, 4, &ptr));
  assert_null(ptr);
  assert_int_equal(counter.total, 0);
}

static void Allocator_BadArgumentsAreRejected(void** state) {
  void* ptr = NULL;
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, "zero-byte",
                    hal_allocator_malloc(hal_allocator_system(), 0, &ptr));
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, NULL,
                    hal_allocator_malloc(hal_allocator_system(), 1, NULL));
  char* s = NULL;
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, NULL,
                    hal_allocator_strdup(hal_allocator_system(), NULL, &s));
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, NULL,
                    hal_allocator_clone(hal_allocator_system(), NULL, 4, &ptr));
}

static void Allocator_FailedReallocKeepsOriginal(void** state) {
  counting_allocator_t counter = {0, 0, -1};
  hal_allocator_t allocator = counting_allocator(&counter);
  void* ptr = NULL;
  HAL_ASSERT_OK(hal_allocator_malloc(allocator, 8, &ptr));
  void* original = ptr;
  HAL_ASSERT_STATUS(HAL_STATUS_INVALID_ARGUMENT, NULL,
                    hal_allocator_realloc(allocator, 0, &ptr));
  assert_ptr_equal(ptr, original);
  hal_allocator_free(allocator, ptr);
  assert_int_equal(counter.live, 0);
}

// The test list: CASE binds this program's fixture.
#define CASE(name) cmocka_unit_test(name)

int main(void) {
  const struct CMUnitTest tests[] = {
      CASE(Allocator_SystemAllocatorZeroFills),
      CASE(Allocator_HooksAreUsed),
      CASE(Allocator_ExhaustionIsResourceExhausted),
      CASE(Allocator_OverflowIsRejectedBeforeAllocating),
      CASE(Allocator_BadArgumentsAreRejected),
      CASE(Allocator_FailedReallocKeepsOriginal),
  };
  return cmocka_run_group_tests_name("core/allocator", tests, NULL, NULL);
}
