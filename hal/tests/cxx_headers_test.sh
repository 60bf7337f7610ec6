#!/bin/sh
# The public headers of hal/include/hal compile as C++ with -Wall -Wextra
# -Werror: each alone (C++17, the first compiler found), and all together
# in C++17 and C++20 with each C++ compiler found (g++, clang++).
# Usage: cxx_headers_test.sh INCLUDE_DIR
set -u
include_dir=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
compilers=""
for cxx in g++ clang++; do
  command -v "$cxx" >/dev/null 2>&1 && compilers="$compilers $cxx"
done
compilers=$(echo $compilers)
if [ -z "$compilers" ]; then
  echo "SKIP: no C++ compiler (g++, clang++) found"
  exit 77
fi
failed=0
checked=0
for header in "$include_dir"/hal/*.h ALL; do
  if [ "$header" = ALL ]; then
    name="every header"
    for h in "$include_dir"/hal/*.h; do
      echo "#include \"hal/$(basename "$h")\""
    done >"$work/unit.cc"
  else
    name="hal/$(basename "$header")"
    echo "#include \"$name\"" >"$work/unit.cc"
  fi
  echo "int main() { return 0; }" >>"$work/unit.cc"
  # Alone, each header must include what it uses (one compiler, one
  # standard); together, every compiler and standard.
  combinations="$compilers"
  [ "$header" = ALL ] || combinations=${compilers%% *}
  for cxx in $combinations; do
    stds="c++17 c++20"
    [ "$header" = ALL ] || stds=c++17
    for std in $stds; do
      checked=$((checked + 1))
      if ! "$cxx" -std="$std" -Wall -Wextra -Werror -I"$include_dir" \
          -fsyntax-only "$work/unit.cc" >"$work/log" 2>&1; then
        echo "FAILED: $name with $cxx -std=$std:"
        head -20 "$work/log"
        failed=$((failed + 1))
      fi
    done
  done
done
echo "cxx_headers_test: $checked compilations ($compilers), $failed failed"
[ "$failed" -eq 0 ]
