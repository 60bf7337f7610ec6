// Copyright 2026 The HAL Authors.
//
// A shared object that is not a HAL plugin: it exports a function, but not
// the entry point.

__attribute__((visibility("default"))) int not_a_plugin(void);

__attribute__((visibility("default"))) int not_a_plugin(void) {
  return 42;
}
