#!/bin/sh
# The installed headers compile as C++ with -Wall -Wextra -Werror: each
# alone (C++17, the first compiler found), and all together in C++17 and
# C++20 with each C++ compiler (g++, clang++). The headers are every
# SUBDIR/*.h and SUBDIR/*/*.h of each INCLUDE_DIR given (hal/include: the
# public API and, under hal/impl/, the implementations' headers;
# compat/include: the async runtime's; tools/kernels/include and
# vgpu/include: the kernel authoring headers), all of them on -I.
# Exits 77 (a meson skip) when g++ or clang++ is missing, after checking
# with the one found: a pass would claim what was not checked.
# Usage: cxx_headers_test.sh INCLUDE_DIR...
set -u
[ $# -gt 0 ] || { echo "usage: cxx_headers_test.sh INCLUDE_DIR..."; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
compilers=""
missing=""
for cxx in g++ clang++; do
  if command -v "$cxx" >/dev/null 2>&1; then
    compilers="$compilers $cxx"
  else
    missing="$missing $cxx"
  fi
done
compilers=$(echo $compilers)
if [ -z "$compilers" ]; then
  echo "SKIP: no C++ compiler (g++, clang++) found"
  exit 77
fi
includes=""
headers=""
for dir in "$@"; do
  includes="$includes -I$dir"
  for h in "$dir"/*/*.h "$dir"/*/*/*.h; do
    [ -f "$h" ] || case "$h" in *"/*/*/*.h") continue ;; esac
    [ -f "$h" ] || { echo "FAILED: no SUBDIR/*.h in $dir"; exit 1; }
    headers="$headers ${h#"$dir"/}"
  done
done
failed=0
checked=0
for header in $headers ALL; do
  if [ "$header" = ALL ]; then
    name="every header"
    for h in $headers; do
      echo "#include \"$h\""
    done >"$work/unit.cc"
  else
    name=$header
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
      # shellcheck disable=SC2086
      if ! "$cxx" -std="$std" -Wall -Wextra -Werror $includes \
          -fsyntax-only "$work/unit.cc" >"$work/log" 2>&1; then
        echo "FAILED: $name with $cxx -std=$std:"
        head -20 "$work/log"
        failed=$((failed + 1))
      fi
    done
  done
done
echo "cxx_headers_test: $checked compilations ($compilers) of$headers," \
  "$failed failed"
[ "$failed" -eq 0 ] || exit 1
if [ -n "$missing" ]; then
  echo "SKIP: not found:$missing (scripts/bootstrap.sh installs g++ and clang)"
  exit 77
fi
