#!/bin/sh
# A staged install (meson install --destdir) is complete and relocatable:
# the staged hal-run finds libhal through its rpath and the plugins in the
# install's plugin directory with no environment variable set.
# The installed examples (examples/first_program.c, examples/dispatch.c
# with its kernel examples/scale_kernel.c) build against the staged prefix
# through `pkg-config hal` and through CMake's find_package(hal), and each
# build runs, with the installed virtual GPU, on all four drivers. The
# installed hal-bench runs when the build has one.
# Exits 77 (a meson skip) without cmake: the find_package(hal) build is
# half of what it checks.
# usage: install_test.sh BUILD_ROOT TEST_PLUGIN.so SANITIZE HAL_BENCH
#                        [VGPU_CUDA VGPU_HIP]
#   HAL_BENCH: 1 when the build has hal-bench, 0 when not
set -eu
build=$1
plugin=$2
sanitize=${3:-none}
has_bench=${4:-0}
vgpu_cuda=${5:-}
vgpu_hip=${6:-}
stage=$(mktemp -d /tmp/hal-install-test-XXXXXX)
trap 'rm -rf "$stage"' EXIT

fail() { echo "FAIL: $*"; exit 1; }

meson install -C "$build" --destdir "$stage" --no-rebuild >"$stage.log" 2>&1 ||
  { cat "$stage.log"; rm -f "$stage.log"; fail "meson install"; }
rm -f "$stage.log"

hal_run=$(find "$stage" -type f -name hal-run | head -n1)
libhal=$(find "$stage" -name 'libhal.so.0' | head -n1)
[ -n "$hal_run" ] || fail "hal-run not installed"
[ -n "$libhal" ] || fail "libhal.so.0 not installed"
libdir=$(dirname "$libhal")
[ -f "$libdir/pkgconfig/hal.pc" ] || fail "hal.pc not installed in $libdir/pkgconfig"
grep -q 'plugindir=${libdir}/hal/drivers' "$libdir/pkgconfig/hal.pc" ||
  fail "hal.pc lacks plugindir"
header=$(find "$stage" -path '*/include/hal/device.h' | head -n1)
[ -n "$header" ] || fail "public headers not installed"
# What a user builds on: the async runtime's header and .pc, the kernel
# authoring headers, the docs and the licence.
for file in include/hal/mlir_async.h include/hal/hal_kernel.h \
    include/vgpu/vgpu_module.h share/doc/hal/LICENSE share/doc/hal/README.md \
    share/doc/hal/sync-contract.md share/doc/hal/collectives.md; do
  find "$stage" -path "*/$file" | grep -q . || fail "$file not installed"
done
[ -f "$libdir/pkgconfig/hal-async-runtime.pc" ] ||
  fail "hal-async-runtime.pc not installed"
async=$(find "$stage" -name 'libhal-async-runtime.so' | head -n1)
[ -n "$async" ] || fail "libhal-async-runtime.so not installed"
readelf -d "$async" | grep -q 'R.*PATH.*\$ORIGIN' ||
  fail "libhal-async-runtime.so has no \$ORIGIN run path"
# Test plugins are never installed.
if find "$stage" -name 'hal-driver-test*' | grep -q .; then
  fail "a test plugin was installed"
fi

plugin_dir="$libdir/hal/drivers"
mkdir -p "$plugin_dir"
cp "$plugin" "$plugin_dir/"

out=$(env -u HAL_DRIVER_PATH -u LD_LIBRARY_PATH "$hal_run" --list-drivers) ||
  fail "staged hal-run --list-drivers exited $?"
echo "$out"
echo "$out" | grep -q "^test .* ok .*$plugin_dir/hal-driver-test.so" ||
  fail "the staged plugin was not found in $plugin_dir"
echo "$out" | grep -q "  $plugin_dir\$" ||
  fail "the install plugin dir is not among the directories searched"

out=$(env -u HAL_DRIVER_PATH -u LD_LIBRARY_PATH "$hal_run" --driver=test \
  --list-devices) || fail "staged hal-run --driver=test exited $?"
echo "$out" | grep -q "test-device-0" || fail "devices not listed: $out"
# hal-bench, when the build has it, is installed and runs from the stage
# (its rpath finds libhal).
hal_bench=$(find "$stage" -type f -path '*/bin/hal-bench' | head -n1)
if [ "$has_bench" = 1 ]; then
  [ -n "$hal_bench" ] || fail "bin/hal-bench not installed"
  out=$(env -u LD_LIBRARY_PATH "$hal_bench" --list) ||
    fail "staged hal-bench --list exited $?"
  echo "$out" | grep -q "^warm_submit_allocations " ||
    fail "staged hal-bench --list does not name its figures: $out"
  echo "staged hal-bench --list: $(echo "$out" | grep -c .) figures"
else
  [ -z "$hal_bench" ] || fail "hal-bench installed by a build that has none"
  echo "hal-bench not built (no Google Benchmark or C++ compiler, or a" \
    "sanitizer build): not checked"
fi

# The examples, from the installed docs, built as a user would.
examples_dir=$(dirname "$(find "$stage" -path '*/examples/first_program.c' | head -n1)")
for file in first_program.c dispatch.c scale_kernel.c; do
  [ -f "$examples_dir/$file" ] || fail "examples/$file not installed"
done
cflags=$(PKG_CONFIG_SYSROOT_DIR="$stage" PKG_CONFIG_PATH="$libdir/pkgconfig" \
  pkg-config --cflags hal) || fail "pkg-config --cflags hal"
libs=$(PKG_CONFIG_SYSROOT_DIR="$stage" PKG_CONFIG_PATH="$libdir/pkgconfig" \
  pkg-config --libs hal) || fail "pkg-config --libs hal"
sanitize_flags=""
case "$sanitize" in
  none) ;;
  *) sanitize_flags="-fsanitize=$sanitize" ;;
esac
mkdir -p "$stage/pkg-config"
for program in first_program dispatch; do
  # shellcheck disable=SC2086
  cc -std=c11 -Wall -Wextra -Werror $sanitize_flags $cflags \
    "$examples_dir/$program.c" $libs -o "$stage/pkg-config/$program" ||
    fail "examples/$program.c does not build through pkg-config"
done
# The dispatch example's kernel, built from the installed authoring header
# for the virtual GPU; both builds of dispatch load it.
# shellcheck disable=SC2086
cc -std=c11 -Wall -Wextra -Werror -shared -fPIC $cflags \
  "$examples_dir/scale_kernel.c" -o "$stage/scale_kernel.vgpu" ||
  fail "the example kernel does not build from the installed headers"

grep -q 'vgpudir=${libdir}/hal/vgpu' "$libdir/pkgconfig/hal.pc" ||
  fail "hal.pc lacks vgpudir"
vgpu_dir="$libdir/hal/vgpu"
# run_example BUILD SETTING PROGRAM PATTERN ARG...: BUILD's PROGRAM with the
# runtime variable SETTING, no HAL_DRIVER_PATH (libhal finds the installed
# plugins), and strict-mode findings fatal as in suite `examples`.
run_example() {
  how=$1 setting=$2 program=$3 pattern=$4
  shift 4
  log="$stage/$how/$program.log"
  env -u HAL_DRIVER_PATH LD_LIBRARY_PATH="$libdir" VGPU_FAIL_EXIT_CODE=70 \
    "$setting" "$stage/$how/$program" "$@" >"$log" 2>&1 ||
    { rc=$?; cat "$log"; fail "$program $* ($how) exited $rc"; }
  grep -q -- "$pattern" "$log" ||
    { cat "$log"; fail "$program $* ($how): no '$pattern'"; }
  echo "$program $1 ($how): $(tail -n1 "$log")"
}
# run_examples BUILD: both examples on every driver, each URI form once
# (as suite `examples` runs them in the build tree), over the installed
# virtual GPU. The test plugin has no semaphores: it is not among them.
run_examples() {
  ran=0
  for device in cuda_stream cuda_graph://1 hip_stream://0 hip_graph; do
    driver=${device%%:*}
    case "$driver" in
      cuda_*) built=$vgpu_cuda variable=HAL_CUDA_LIBRARY vgpu=libvgpu-cuda.so ;;
      *) built=$vgpu_hip variable=HAL_HIP_LIBRARY vgpu=libvgpu-hip.so ;;
    esac
    [ -n "$built" ] || continue
    [ -f "$vgpu_dir/$vgpu" ] || fail "no $vgpu in $vgpu_dir"
    if [ ! -f "$build/drivers/hal-driver-$driver.so" ]; then
      echo "examples not run on $driver: the build has no such driver"
      continue
    fi
    [ -f "$plugin_dir/hal-driver-$driver.so" ] ||
      fail "hal-driver-$driver.so not installed in $plugin_dir"
    run_example "$1" "$variable=$vgpu_dir/$vgpu" first_program \
      "^ok: 0 of 1024 words wrong" --device="$device"
    run_example "$1" "$variable=$vgpu_dir/$vgpu" dispatch \
      ": ok: 0 of 1000 words wrong" --device="$device" \
      --kernel="$stage/scale_kernel.vgpu"
    ran=$((ran + 1))
  done
  [ "$ran" -gt 0 ] ||
    echo "examples built ($1); not run (this build has no virtual GPU)"
}
run_examples pkg-config

# The installed hal-run falls back to the installed virtual GPU.
if [ -n "$vgpu_cuda" ]; then
  out=$(env -u HAL_DRIVER_PATH -u LD_LIBRARY_PATH -u HAL_CUDA_LIBRARY \
    "$hal_run" --driver=cuda_stream 2>&1) ||
    { echo "$out"; fail "staged hal-run --driver=cuda_stream exited $?"; }
  echo "$out" | grep -q "virtual GPU (HAL_CUDA_LIBRARY=.*/hal/vgpu/libvgpu-cuda.so)" ||
    { echo "$out"; fail "the staged hal-run did not use the installed virtual GPU"; }
  echo "$out" | grep -q "^pipeline ok: driver=cuda_stream" ||
    { echo "$out"; fail "the staged pipeline did not pass"; }
  echo "staged hal-run --driver=cuda_stream: on the installed virtual GPU, ok"
  # A fallback that fails too says that it was the virtual GPU, and why the
  # system runtime was passed over.
  if out=$(env -u HAL_DRIVER_PATH -u LD_LIBRARY_PATH -u HAL_CUDA_LIBRARY \
    VGPU_DEVICES=0 "$hal_run" --driver=cuda_stream 2>&1); then
    echo "$out"
    fail "staged hal-run on a virtual GPU with no device succeeded"
  fi
  echo "$out" | grep -q "creating it on the virtual GPU (HAL_CUDA_LIBRARY=.*), because the system runtime is not usable" ||
    { echo "$out"; fail "a failed fallback does not name the virtual GPU"; }
  echo "staged hal-run --driver=cuda_stream: a failed fallback names it, ok"
fi

# The same examples through CMake's find_package(hal) and hal::hal.
config=$(find "$stage" -name halConfig.cmake | head -n1)
[ -n "$config" ] || fail "halConfig.cmake not installed"
[ -f "$(dirname "$config")/halConfigVersion.cmake" ] ||
  fail "halConfigVersion.cmake not installed"
if ! command -v cmake >/dev/null 2>&1; then
  echo "SKIP: cmake not found: the find_package(hal) build is not checked" \
    "(scripts/bootstrap.sh installs it)"
  exit 77
fi
mkdir -p "$stage/cmake-src"
cp "$examples_dir/first_program.c" "$examples_dir/dispatch.c" "$stage/cmake-src/"
cat >"$stage/cmake-src/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.16)
project(hal_examples C)
find_package(hal 0.1 REQUIRED)
add_executable(first_program first_program.c)
target_link_libraries(first_program PRIVATE hal::hal)
add_executable(dispatch dispatch.c)
target_link_libraries(dispatch PRIVATE hal::hal)
CMAKE
cmake -S "$stage/cmake-src" -B "$stage/cmake" \
  -Dhal_DIR="$(dirname "$config")" \
  -DCMAKE_C_FLAGS="-Wall -Wextra -Werror $sanitize_flags" \
  -DCMAKE_EXE_LINKER_FLAGS="$sanitize_flags" >"$stage/cmake.log" 2>&1 &&
  cmake --build "$stage/cmake" >>"$stage/cmake.log" 2>&1 ||
  { cat "$stage/cmake.log"; fail "the examples do not build with find_package(hal)"; }
echo "first_program and dispatch built with find_package(hal)"
run_examples cmake
echo "1 passed, 0 failed"
