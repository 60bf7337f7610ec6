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

// A failure annotated without end (handed down a chain) stays within
// HAL_STATUS_MESSAGE_MAX, keeping its cause, its first annotation and its
// newest ones, and says how much it elided.
static void Status_AnnotationsStayBoundedKeepingCauseAndNewest(void** state) {
  hal_status_t status = hal_make_status(HAL_STATUS_ABORTED, "root cause");
  status = hal_status_annotatef(status, "first hop");
  for (int i = 0; i < 20000; ++i) {
    status = hal_status_annotatef(status, "hop %d", i);
    assert_true(strlen(hal_status_message(status)) <= HAL_STATUS_MESSAGE_MAX);
    if (i == 10000) {  // a copy goes on eliding on its own
      hal_status_t copy = hal_status_annotatef(hal_status_clone(status), "c");
      assert_true(strlen(hal_status_message(copy)) <= HAL_STATUS_MESSAGE_MAX);
      assert_non_null(strstr(hal_status_message(copy), "hop 10000; "));
      hal_status_free(copy);
    }
  }
  assert_int_equal(hal_status_code(status), HAL_STATUS_ABORTED);
  const char* message = hal_status_message(status);
  const char* cause = strstr(message, "root cause");
  const char* first = strstr(message, "first hop");
  const char* marker = strstr(message, "bytes of annotations elided ...]");
  const char* newest = strstr(message, "hop 19999");
  assert_non_null(cause);
  assert_non_null(first);
  assert_non_null(marker);
  assert_non_null(newest);
  assert_true(cause < first && first < marker && marker < newest);
  assert_non_null(strstr(message, "hop 19998; "));
  assert_null(strstr(message, "hop 5000;"));
  assert_string_equal(newest + strlen("hop 19999"), "");
  hal_status_free(status);
}

// A cause longer than the head, or one annotation longer than the bound:
// the message stays bounded, starting with the cause's first bytes and
// ending with the newest annotation's last ones.
static void Status_OversizedPartsAreCutToTheBound(void** state) {
  char big[3 * HAL_STATUS_MESSAGE_MAX];
  memset(big, 'x', sizeof(big) - 2);
  big[sizeof(big) - 2] = 'Z';
  big[sizeof(big) - 1] = '\0';
  hal_status_t status = hal_make_status(HAL_STATUS_INTERNAL, "%s", big);
  status = hal_status_annotatef(status, "after a long cause");
  const char* message = hal_status_message(status);
  assert_true(strlen(message) <= HAL_STATUS_MESSAGE_MAX);
  assert_non_null(strstr(message, ": xxxx"));
  assert_non_null(strstr(message, "after a long cause"));
  status = hal_status_annotatef(status, "%s", big);
  message = hal_status_message(status);
  assert_true(strlen(message) <= HAL_STATUS_MESSAGE_MAX);
  assert_non_null(strstr(message, ": xxxx"));
  assert_int_equal(message[strlen(message) - 1], 'Z');
  hal_status_free(status);
}

// A message made longer than the bound (one quoting a long input) is cut
// as it is made: its beginning kept, how much followed said; a clone and
// the formatted text are bounded too.
static void Status_OversizedMessageIsBoundedWhenMade(void** state) {
  enum { kLength = 50 * HAL_STATUS_MESSAGE_MAX };
  char* big = malloc(kLength + 1);
  assert_non_null(big);
  memset(big, 'y', kLength);
  memcpy(big, "BEGIN", 5);
  big[kLength] = '\0';
  hal_status_t status =
      hal_make_status(HAL_STATUS_INVALID_ARGUMENT, "bad input '%s'", big);
  free(big);
  const char* message = hal_status_message(status);
  assert_true(strlen(message) <= HAL_STATUS_MESSAGE_MAX);
  assert_non_null(strstr(message, "bad input 'BEGINyyy"));
  assert_non_null(strstr(message, "more bytes elided ...]"));
  assert_int_equal(hal_status_code(status), HAL_STATUS_INVALID_ARGUMENT);
  hal_status_t clone = hal_status_clone(status);
  assert_string_equal(hal_status_message(clone), message);
  hal_status_free(clone);
  status = hal_status_annotatef(status, "while checking it");
  message = hal_status_message(status);
  assert_true(strlen(message) <= HAL_STATUS_MESSAGE_MAX);
  assert_non_null(strstr(message, "bad input 'BEGIN"));
  assert_non_null(strstr(message, "while checking it"));
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
      CASE(Status_AnnotationsStayBoundedKeepingCauseAndNewest),
      CASE(Status_OversizedPartsAreCutToTheBound),
      CASE(Status_OversizedMessageIsBoundedWhenMade),
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
