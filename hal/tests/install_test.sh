#!/bin/sh
# A staged install (meson install --destdir) is complete and relocatable:
# the staged hal-run finds libhal through its rpath and the plugins in the
# install's plugin directory with no environment variable set.
# The installed example (examples/first_program.c) builds against the
# staged prefix through `pkg-config hal` and runs, with the build's virtual
# GPU, on a CUDA and a HIP driver.
# usage: install_test.sh BUILD_ROOT TEST_PLUGIN.so SANITIZE VGPU_CUDA VGPU_HIP
set -eu
build=$1
plugin=$2
sanitize=${3:-none}
vgpu_cuda=${4:-}
vgpu_hip=${5:-}
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
# The example, from the installed docs, built as a user would.
example=$(find "$stage" -path '*/examples/first_program.c' | head -n1)
[ -n "$example" ] || fail "examples/first_program.c not installed"
cflags=$(PKG_CONFIG_SYSROOT_DIR="$stage" PKG_CONFIG_PATH="$libdir/pkgconfig" \
  pkg-config --cflags hal) || fail "pkg-config --cflags hal"
libs=$(PKG_CONFIG_SYSROOT_DIR="$stage" PKG_CONFIG_PATH="$libdir/pkgconfig" \
  pkg-config --libs hal) || fail "pkg-config --libs hal"
sanitize_flags=""
case "$sanitize" in
  none) ;;
  *) sanitize_flags="-fsanitize=$sanitize" ;;
esac
# shellcheck disable=SC2086
cc -std=c11 -Wall -Wextra -Werror $sanitize_flags $cflags "$example" $libs \
  -o "$stage/first_program" || fail "the example does not build"
run_example() {
  env -u HAL_DRIVER_PATH LD_LIBRARY_PATH="$libdir" "$@" \
    "$stage/first_program" --device="$device" >"$stage/example.log" 2>&1 ||
    { cat "$stage/example.log"; fail "first_program --device=$device"; }
  grep -q "^ok: 0 of 1024 words wrong" "$stage/example.log" ||
    { cat "$stage/example.log"; fail "first_program --device=$device: no ok"; }
  echo "first_program --device=$device: $(tail -n1 "$stage/example.log")"
}
grep -q 'vgpudir=${libdir}/hal/vgpu' "$libdir/pkgconfig/hal.pc" ||
  fail "hal.pc lacks vgpudir"
vgpu_dir="$libdir/hal/vgpu"
# The test plugin has no semaphores: the example runs on the GPU drivers,
# over the installed virtual GPU when the build has one.
run_examples() {
  if [ -n "$vgpu_cuda" ]; then
    [ -f "$vgpu_dir/libvgpu-cuda.so" ] || fail "no libvgpu-cuda.so in $vgpu_dir"
    device=cuda_graph://1
    run_example HAL_CUDA_LIBRARY="$vgpu_dir/libvgpu-cuda.so"
  fi
  if [ -n "$vgpu_hip" ]; then
    [ -f "$vgpu_dir/libvgpu-hip.so" ] || fail "no libvgpu-hip.so in $vgpu_dir"
    device=hip_stream
    run_example HAL_HIP_LIBRARY="$vgpu_dir/libvgpu-hip.so"
  fi
  [ -n "$vgpu_cuda$vgpu_hip" ] ||
    echo "first_program built; not run (this build has no virtual GPU)"
}
run_examples

# The dispatch example with a kernel of the user's own, built from the
# installed authoring header for the virtual GPU.
for file in dispatch.c scale_kernel.c; do
  find "$stage" -path "*/examples/$file" | grep -q . || fail "examples/$file not installed"
done
examples_dir=$(dirname "$example")
# shellcheck disable=SC2086
cc -std=c11 -Wall -Wextra -Werror -shared -fPIC $cflags \
  "$examples_dir/scale_kernel.c" -o "$stage/scale_kernel.vgpu" ||
  fail "the example kernel does not build from the installed headers"
# shellcheck disable=SC2086
cc -std=c11 -Wall -Wextra -Werror $sanitize_flags $cflags \
  "$examples_dir/dispatch.c" $libs -o "$stage/dispatch" ||
  fail "the dispatch example does not build"
if [ -n "$vgpu_cuda" ]; then
  env -u HAL_DRIVER_PATH LD_LIBRARY_PATH="$libdir" \
    HAL_CUDA_LIBRARY="$vgpu_dir/libvgpu-cuda.so" "$stage/dispatch" \
    --device=cuda_graph --kernel="$stage/scale_kernel.vgpu" \
    >"$stage/dispatch.log" 2>&1 ||
    { cat "$stage/dispatch.log"; fail "dispatch --device=cuda_graph"; }
  grep -q ": ok: 0 of 1000 words wrong" "$stage/dispatch.log" ||
    { cat "$stage/dispatch.log"; fail "dispatch: no ok"; }
  echo "$(cat "$stage/dispatch.log")"
fi

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
fi

# The same example through CMake's find_package(hal) and hal::hal.
config=$(find "$stage" -name halConfig.cmake | head -n1)
[ -n "$config" ] || fail "halConfig.cmake not installed"
[ -f "$(dirname "$config")/halConfigVersion.cmake" ] ||
  fail "halConfigVersion.cmake not installed"
if command -v cmake >/dev/null 2>&1; then
  mkdir -p "$stage/cmake-src"
  cp "$example" "$stage/cmake-src/"
  cat >"$stage/cmake-src/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.16)
project(first_program C)
find_package(hal 0.1 REQUIRED)
add_executable(first_program first_program.c)
target_link_libraries(first_program PRIVATE hal::hal)
CMAKE
  rm -f "$stage/first_program"
  cmake -S "$stage/cmake-src" -B "$stage/cmake-build" \
    -Dhal_DIR="$(dirname "$config")" \
    -DCMAKE_C_FLAGS="-Wall -Wextra -Werror $sanitize_flags" \
    -DCMAKE_EXE_LINKER_FLAGS="$sanitize_flags" >"$stage/cmake.log" 2>&1 &&
    cmake --build "$stage/cmake-build" >>"$stage/cmake.log" 2>&1 ||
    { cat "$stage/cmake.log"; fail "the example does not build with find_package(hal)"; }
  cp "$stage/cmake-build/first_program" "$stage/first_program"
  echo "first_program built with find_package(hal)"
  run_examples
else
  echo "cmake not found: the find_package(hal) build is not checked"
fi
echo "1 passed, 0 failed"
