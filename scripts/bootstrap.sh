#!/bin/sh
# The newcomer's first command: installs what is missing (Debian 12; as root
# or through sudo), builds into ./build, and runs the main job.
#
#   ./scripts/bootstrap.sh
#
# Safe to run again: it skips packages already present and reuses ./build.
set -eu
cd "$(dirname "$0")/.."

# Debian packages the build and tests need, each with a probe that says
# whether it is already there.
missing=""
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "ok installed"; }
command -v cc >/dev/null 2>&1 || missing="$missing gcc"
command -v pkg-config >/dev/null 2>&1 || missing="$missing pkg-config"
command -v python3 >/dev/null 2>&1 || missing="$missing python3"
command -v meson >/dev/null 2>&1 || missing="$missing meson"
command -v ninja >/dev/null 2>&1 || missing="$missing ninja-build"
command -v clang-format >/dev/null 2>&1 || missing="$missing clang-format"
command -v nm >/dev/null 2>&1 || missing="$missing binutils"
have_pkg libcmocka-dev || missing="$missing libcmocka-dev"
# Google Benchmark (hal-bench, docs/performance.md).
have_pkg libbenchmark-dev || missing="$missing libbenchmark-dev"
# Its plots (tools/bench/plot_bench.py).
have_pkg python3-matplotlib || missing="$missing python3-matplotlib"
# HIP headers (the HIP drivers build against them; the runtime is dlopen'd).
[ -f /usr/include/hip/hip_runtime_api.h ] || missing="$missing libamdhip64-dev"
# MLIR 14 (suite mlir_async: mlir-opt and mlir-cpu-runner compile and run the
# test programs on both runtimes; mlir-translate, and llvm-14-dev's opt, llc,
# headers and libLLVM with g++, build hal-bench's parallel-for modules and
# the shim into MLIR's own runtime).
have_pkg mlir-14-tools || missing="$missing mlir-14-tools"
have_pkg libmlir-14 || missing="$missing libmlir-14"
have_pkg llvm-14-dev || missing="$missing llvm-14-dev"
command -v g++ >/dev/null 2>&1 || missing="$missing g++"
# CMake (install_test builds the installed examples through
# find_package(hal)), clang++ (cxx_headers_test compiles the headers with
# g++ and clang++) and clang's runtimes (test.sh's fuzz build links
# libFuzzer: docs/fuzzing.md). Without them those tests are skipped.
command -v cmake >/dev/null 2>&1 || missing="$missing cmake"
command -v clang++ >/dev/null 2>&1 || missing="$missing clang"
have_pkg libclang-rt-14-dev || missing="$missing libclang-rt-14-dev"
# Spin (suite model: the Promela model of the sync protocol, docs/sync-model.md).
command -v spin >/dev/null 2>&1 || missing="$missing spin"

if [ -n "$missing" ]; then
  echo "bootstrap: installing:$missing"
  if [ "$(id -u)" -eq 0 ]; then sudo=""; else sudo="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -q
  # shellcheck disable=SC2086
  $sudo apt-get install -y -q --no-install-recommends $missing
else
  echo "bootstrap: all build dependencies are present"
fi

if [ ! -f /usr/local/cuda/include/cuda.h ]; then
  echo "bootstrap: note: no CUDA toolkit headers at /usr/local/cuda/include;" \
    "the CUDA drivers and the virtual GPU's CUDA facade are skipped" \
    "(pass -Dcudasdk_include=DIR to meson if cuda.h lives elsewhere)"
fi

# A folder without meson's state (a setup that was interrupted) is set up
# afresh: --reconfigure refuses it, and would refuse it on every run.
if [ -f build/meson-private/coredata.dat ]; then
  meson setup --reconfigure build >/dev/null
else
  meson setup build
fi
meson compile -C build

echo
echo "bootstrap: build ready in ./build; running the main job:"
echo "\$ build/tools/hal-run --list-drivers"
build/tools/hal-run --list-drivers
echo
echo "\$ build/tools/hal-run --driver=all"
build/tools/hal-run --driver=all
