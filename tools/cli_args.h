// Copyright 2026 The HAL Authors.
//
// Argument parsing the command-line tools share (C and C++).

#ifndef HAL_TOOLS_CLI_ARGS_H_
#define HAL_TOOLS_CLI_ARGS_H_

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// |text| as a decimal count in [min, max] into |*out_value| (untouched on
// failure). Digits only: no sign, no space, no base prefix ("-1" is no huge
// count, "010" is ten, "5x" is no count), within 64 bits.
static inline bool hal_cli_parse_uint(const char* text, uint64_t min,
                                      uint64_t max, uint64_t* out_value) {
  if (!text || !*text)
    return false;
  for (const char* c = text; *c; ++c) {
    if (*c < '0' || *c > '9')
      return false;
  }
  errno = 0;
  unsigned long long value = strtoull(text, NULL, 10);
  if (errno == ERANGE || value < min || value > max)
    return false;
  *out_value = value;
  return true;
}

// Whether |list| names something between every two commas: not empty, no
// leading or trailing comma, no ",,".
static inline bool hal_cli_list_is_complete(const char* list) {
  if (!list || !*list || *list == ',')
    return false;
  const char* c = list;
  for (; c[1]; ++c) {
    if (c[0] == ',' && c[1] == ',')
      return false;
  }
  return *c != ',';
}

// How many names a comma-separated |list| holds at most: one per comma,
// and one (a table sized by it fits every name strtok finds).
static inline size_t hal_cli_list_count(const char* list) {
  size_t count = 1;
  for (const char* c = list; *c; ++c)
    count += *c == ',';
  return count;
}

// The exit code of |tool| once what it printed must have reached stdout:
// a listing or a summary lost on the way (a full disk, a closed stdout or
// pipe) is no success, so |exit_code| 0 becomes |failure_code|; any other
// is kept.
static inline int hal_cli_finish_stdout(const char* tool, int exit_code,
                                        int failure_code) {
  if (fflush(stdout) != 0 || ferror(stdout)) {
    fprintf(stderr, "%s: writing to stdout failed: %s\n", tool,
            strerror(errno));
    if (exit_code == 0)
      exit_code = failure_code;
  }
  return exit_code;
}

#endif  // HAL_TOOLS_CLI_ARGS_H_
