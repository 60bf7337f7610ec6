#!/bin/sh
# The public API keeps implementations out of sight: every HAL object is an
# opaque handle to a program that includes hal/api.h (its layout, vtable
# and helpers are in hal/impl/, for drivers), and no public header needs
# atomics, so C++ sees nothing of C11's <stdatomic.h>.
#  1. No public header (hal/include/hal/*.h, hal/impl/ aside) declares an
#     atomic, a vtable's members or a "For implementations" section, or
#     includes hal/impl/ (hal/plugin.h, the driver-facing ABI, does).
#  2. Through hal/api.h alone, each handle type is incomplete: a C and a
#     C++ translation unit taking its size fail to compile, and one using
#     every handle as a pointer compiles.
#  3. hal/api.h includes every public header but the two its comment
#     leaves out (hal/plugin.h, hal/trace.h): a header added beside them is
#     in "the whole public API" or is said not to be.
# Usage: public_headers_test.sh HAL_INCLUDE_DIR
set -u
[ $# -eq 1 ] || { echo "usage: public_headers_test.sh HAL_INCLUDE_DIR"; exit 2; }
dir=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0
for h in "$dir"/hal/*.h; do
  name=${h#"$dir"/}
  [ "$name" = hal/plugin.h ] && continue
  if grep -nE '_Atomic|HAL_ATOMIC|std::atomic|stdatomic\.h|<atomic>' "$h"; then
    echo "FAILED: $name declares an atomic"
    failed=$((failed + 1))
  fi
  if grep -n 'For implementations' "$h"; then
    echo "FAILED: $name has a section for implementations"
    failed=$((failed + 1))
  fi
  if grep -nE '^struct hal_[a-z_]*_vtable_t \{' "$h"; then
    echo "FAILED: $name defines a vtable"
    failed=$((failed + 1))
  fi
  if grep -n '#include "hal/impl/' "$h"; then
    echo "FAILED: $name includes an implementation header"
    failed=$((failed + 1))
  fi
done
for h in "$dir"/hal/*.h; do
  name=${h#"$dir"/}
  case $name in hal/api.h | hal/plugin.h | hal/trace.h) continue ;; esac
  if ! grep -q "^#include \"$name\"" "$dir/hal/api.h"; then
    echo "FAILED: hal/api.h does not include $name"
    failed=$((failed + 1))
  fi
done
handles="hal_resource_t hal_driver_t hal_device_t hal_buffer_t
hal_device_allocator_t hal_semaphore_t hal_command_buffer_t hal_executable_t
hal_file_t hal_timepoint_t hal_driver_registry_t"
compilers=""
for cc in cc c++; do
  command -v "$cc" >/dev/null 2>&1 && compilers="$compilers $cc"
done
checked=0
for cc in $compilers; do
  ext=c
  std=-std=c11
  [ "$cc" = c++ ] && { ext=cc; std=-std=c++17; }
  {
    echo '#include "hal/api.h"'
    for t in $handles; do echo "$t* use_$t(void* p) { return ($t*)p; }"; done
    echo 'int main(void) { return 0; }'
  } >"$work/pointers.$ext"
  checked=$((checked + 1))
  if ! "$cc" $std -Wall -Wextra -Werror -I"$dir" -fsyntax-only \
      "$work/pointers.$ext" >"$work/log" 2>&1; then
    echo "FAILED: $cc: the handles as pointers through hal/api.h:"
    head -20 "$work/log"
    failed=$((failed + 1))
  fi
  for t in $handles; do
    printf '#include "hal/api.h"\nunsigned long size_of_it(void) { return sizeof(%s); }\n' \
      "$t" >"$work/size.$ext"
    checked=$((checked + 1))
    if "$cc" $std -I"$dir" -fsyntax-only "$work/size.$ext" >"$work/log" 2>&1; then
      echo "FAILED: $cc: sizeof($t) compiles through hal/api.h: its layout is public"
      failed=$((failed + 1))
    elif ! grep -q 'incomplete' "$work/log"; then
      echo "FAILED: $cc: sizeof($t) failed for another reason than an incomplete type:"
      head -5 "$work/log"
      failed=$((failed + 1))
    fi
  done
done
echo "public_headers_test: $checked compilations ($compilers), $failed failed"
[ "$failed" -eq 0 ] || exit 1
[ -n "$compilers" ] || { echo "SKIP: no C or C++ compiler"; exit 77; }
