// Copyright 2026 The HAL Authors.

#include "hal_test.h"

static void Status_OkIsNullAndCheap(void** state) {
  hal_status_t status = HAL_OK;
  assert_null(status);
  assert_true(hal_status_is_ok(status));
  assert_int_equal(hal_status_code(status), HAL_STATUS_OK);
  assert_string_equal(hal_status_message(status), "");
  char text[16];
  assert_int_equal(hal_status_format(status, text, sizeof(text)), 2);
  assert_string_equal(text, "OK");
  hal_status_free(status);  // no-op
}

static void Status_MessageCarriesCodeAndCallSite(void** state) {
  hal_status_t status =
      hal_make_status(HAL_STATUS_INVALID_ARGUMENT, "bad value %d", 42);
  assert_non_null(status);
  assert_int_equal(hal_status_code(status), HAL_STATUS_INVALID_ARGUMENT);
  assert_true(hal_status_is(status, HAL_STATUS_INVALID_ARGUMENT));
  // "hal/tests/status_test.c:<line>: bad value 42"
  const char* message = hal_status_message(status);
  assert_true(strncmp(message, "hal/tests/status_test.c:", 24) == 0);
  assert_true(atoi(message + 24) > 0);
  assert_non_null(strstr(message, ": bad value 42"));
  // No leading "../" from the build directory.
  assert_null(strstr(hal_status_message(status), "../"));
  char text[256];
  hal_status_format(status, text, sizeof(text));
  assert_true(strncmp(text, "INVALID_ARGUMENT: ", 18) == 0);
  hal_status_free(status);
}

static hal_status_t FailingCallee(void) {
  return hal_make_status(HAL_STATUS_NOT_FOUND, "inner");
}

static hal_status_t AnnotatingCaller(void) {
  HAL_RETURN_AND_ANNOTATE_IF_ERROR(FailingCallee(), "outer %s", "context");
  return HAL_OK;
}

static void Status_AnnotationsAppendInOrder(void** state) {
  hal_status_t status = AnnotatingCaller();
  status = hal_status_annotatef(status, "outermost");
  assert_int_equal(hal_status_code(status), HAL_STATUS_NOT_FOUND);
  const char* message = hal_status_message(status);
  const char* inner = strstr(message, "inner");
  const char* outer = strstr(message, "outer context");
  const char* outermost = strstr(message, "outermost");
  assert_non_null(inner);
  assert_non_null(outer);
  assert_non_null(outermost);
  assert_true(inner < outer && outer < outermost);
  hal_status_free(status);
}

static void Status_AnnotateOkStaysOk(void** state) {
  assert_null(hal_status_annotatef(HAL_OK, "never formatted %s", "x"));
}

static void Status_CloneIsIndependent(void** state) {
  hal_status_t status = hal_make_status(HAL_STATUS_ABORTED, "original");
  hal_status_t clone = hal_status_clone(status);
  assert_ptr_not_equal(status, clone);
  assert_string_equal(hal_status_message(status), hal_status_message(clone));
  hal_status_free(status);
  assert_int_equal(hal_status_code(clone), HAL_STATUS_ABORTED);
  assert_non_null(strstr(hal_status_message(clone), "original"));
  hal_status_free(clone);
  assert_null(hal_status_clone(HAL_OK));
}

static void Status_CodeStringsCoverEveryCode(void** state) {
  for (int code = 0; code < HAL_STATUS_CODE_COUNT_; ++code) {
    const char* name = hal_status_code_string((hal_status_code_t)code);
    assert_non_null(name);
    assert_true(strlen(name) > 1);
    assert_string_not_equal(name, "UNKNOWN_CODE");
  }
  assert_string_equal(hal_status_code_string(HAL_STATUS_DEADLINE_EXCEEDED),
                      "DEADLINE_EXCEEDED");
  assert_string_equal(hal_status_code_string((hal_status_code_t)999),
                      "UNKNOWN");
}

static void Status_OutOfRangeCodeBecomesUnknown(void** state) {
  hal_status_t status = hal_make_status((hal_status_code_t)1234, "weird code");
  assert_int_equal(hal_status_code(status), HAL_STATUS_UNKNOWN);
  hal_status_free(status);
}

static void Status_FormatTruncatesAndReportsLength(void** state) {
  hal_status_t status =
      hal_make_status(HAL_STATUS_INTERNAL, "%s", "a fairly long message text");
  char small[8];
  size_t wanted = hal_status_format(status, small, sizeof(small));
  assert_true(wanted > sizeof(small));
  assert_int_equal(strlen(small), sizeof(small) - 1);
  hal_status_free(status);
}

static void Status_ConsumeCodeFrees(void** state) {
  assert_int_equal(
      hal_status_consume_code(hal_make_status(HAL_STATUS_CANCELLED, "x")),
      HAL_STATUS_CANCELLED);
  assert_int_equal(hal_status_consume_code(HAL_OK), HAL_STATUS_OK);
}

static hal_status_t ReturnIfErrorPassesOk(int* reached) {
  HAL_RETURN_IF_ERROR(HAL_OK);
  *reached = 1;
  return HAL_OK;
}

static void Status_ReturnIfErrorContinuesOnOk(void** state) {
  int reached = 0;
  HAL_ASSERT_OK(ReturnIfErrorPassesOk(&reached));
  assert_int_equal(reached, 1);
}

// The test list: CASE binds this program's fixture.
#define CASE(name) cmocka_unit_test(name)

int main(void) {
  const struct CMUnitTest tests[] = {
      CASE(Status_OkIsNullAndCheap),
      CASE(Status_MessageCarriesCodeAndCallSite),
      CASE(Status_AnnotationsAppendInOrder),
      CASE(Status_AnnotateOkStaysOk),
      CASE(Status_CloneIsIndependent),
      CASE(Status_CodeStringsCoverEveryCode),
      CASE(Status_OutOfRangeCodeBecomesUnknown),
      CASE(Status_FormatTruncatesAndReportsLength),
      CASE(Status_ConsumeCodeFrees),
      CASE(Status_ReturnIfErrorContinuesOnOk),
  };
  return cmocka_run_group_tests_name("core/status", tests, NULL, NULL);
}
