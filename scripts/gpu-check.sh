#!/bin/sh
# The first contact with a real NVIDIA GPU, as one prepared
# script: it records the GPU and its driver, builds the project against the
# system CUDA runtime (-Dcts_runtime=system), runs the CTS of cuda_stream and
# cuda_graph, hal-run and the submit benchmark on the real GPU, the same
# tools on the virtual GPU for comparison, and writes what it saw under $OUT.
# Without a GPU it says so and exits 2 before building anything.
# docs/real-gpu.md says what it records and holds the results of real runs.
#
# 1. Here, on a machine that reaches the Debian mirror (no root needed):
#      ./scripts/gpu-check.sh --prepare
#    fills build-gpu-deps/ (ignored) with what the GPU machine may lack:
#    cmocka (libcmocka0, libcmocka-dev) with a relocatable cmocka.pc, Google
#    Benchmark (libbenchmark1debian, libbenchmark-dev: hal-bench), pkgconf
#    (used there only if it has no pkg-config), a copy of cuda.h (used only
#    if it has none) and the test kernels' PTX compiled by this machine's
#    nvcc (used only if it has no nvcc). About 3 MiB.
# 2. Carry build-gpu-deps with the working tree to the GPU machine, and
#    there, in the repository root (no network needed):
#      OUT=/some/dir ./scripts/gpu-check.sh       (OUT defaults to ./build-gpu-out)
#
# $OUT gets at most 8 files: summary.txt (each step, its exit code, its
# time; the verdict), logs.tar.gz (every log: build-gpu-logs/), nvidia-smi.txt,
# devices.json, cts-testlog.json, figures.txt (hal-run and hal-bench-submit
# on the real GPU and on the virtual GPU) and hal-bench-real.json (every
# hal-bench figure on the real GPU; the virtual GPU's is in the logs). summary.txt
# and logs.tar.gz are rewritten after every step, so a run cut short still
# leaves them. Build tree: build-gpu (made afresh each run; -Dvgpu=enabled
# only for the comparison runs).
#
# Exit status: 0 every step passed (skipped ones allowed), 1 a step failed,
# 2 no NVIDIA GPU found, 64 usage.
#
# Knobs: GPU_CHECK_BUDGET_S the whole run's wall time (default 480 s; every
# step's timeout is cut to what is left, and steps past it are not run);
# GPU_CHECK_TIMEOUT_SCALE multiplies the timeouts of the steps that run
# things (not configure and build; default 1); GPU_CHECK_BUILD_TIMEOUT_S;
# GPU_CHECK_JOBS (default: every CPU, 1 on a machine of 2 CPUs or fewer);
# HAL_CUDA_LIBRARY as everywhere (the probe and the runs use it).
#
# Testing knobs, for trying the device path on a machine without a GPU:
#   GPU_CHECK_FORCE=1           go on past a probe that found no device
#                               (the run steps' timeouts default to x0.25)
#   GPU_CHECK_PREFER_CARRIED=1  use the carried cuda.h and PTX even where the
#                               machine has its own CUDA toolkit
#   GPU_CHECK_PKG_CONFIG=system|carried|shim  which pkg-config finds cmocka
#                               (default: the machine's, else the carried
#                               pkgconf, else a shell stand-in for cmocka)
set -u
cd "$(dirname "$0")/.." || exit 1
root=$(pwd)
deps="$root/build-gpu-deps"
deps_usr="$deps/root/usr"
deps_libdir="$deps_usr/lib/x86_64-linux-gnu"
# The Debian packages --prepare fetches: cmocka, Google Benchmark (hal-bench),
# and pkgconf with its library.
deps_packages="libcmocka0 libcmocka-dev libbenchmark1debian libbenchmark-dev pkgconf-bin libpkgconf3"
# What tools/kernels/meson.build passes nvcc (--prepare compiles the same).
ptx_arch="-arch=compute_75"

usage() {
  sed -n '2,/^set -u/p' "$0" | sed -e '/^set -u/d' -e 's/^# \{0,1\}//'
}

# ---------------------------------------------------------------- --prepare

# Replaces every symbolic link under $1 by a copy of what it points to
# (links may not survive the trip to the GPU machine); drops dangling ones.
dereference_links() {
  find "$1" -type l | while read -r link; do
    target=$(readlink -f "$link")
    if [ -f "$target" ]; then
      cp "$target" "$link.copy" && mv -f "$link.copy" "$link"
    else
      rm -f "$link"
    fi
  done
}

prepare() {
  for tool in apt-get dpkg-deb sha256sum; do
    command -v "$tool" >/dev/null 2>&1 ||
      { echo "gpu-check: --prepare needs $tool"; exit 1; }
  done
  rm -rf "$deps"
  mkdir -p "$deps/debs" "$deps/root" "$deps/bin" || exit 1
  echo "gpu-check: downloading $deps_packages"
  # apt-get download writes into the current directory; as root it warns
  # that _apt cannot write there, which is harmless.
  # shellcheck disable=SC2086  # the package names are words
  if ! (cd "$deps/debs" && apt-get download $deps_packages) \
      >"$deps/download.log" 2>&1; then
    cat "$deps/download.log"
    echo "gpu-check: apt-get download failed"
    exit 1
  fi
  for deb in "$deps"/debs/*.deb; do
    dpkg-deb -x "$deb" "$deps/root" || { echo "gpu-check: cannot unpack $deb"; exit 1; }
  done
  rm -rf "$deps_usr/share/doc" "$deps_usr/share/man" "$deps_usr/include/cmockery" \
    "$deps_libdir/libcmockery.so" "$deps_libdir/cmake"
  dereference_links "$deps/root"

  # cmocka.pc, relocatable: Debian's names /usr outright; this one's prefix
  # is where the file lies, whatever directory the tree lands in.
  pc="$deps_libdir/pkgconfig/cmocka.pc"
  [ -f "$pc" ] || { echo "gpu-check: $pc is missing from libcmocka-dev"; exit 1; }
  {
    # shellcheck disable=SC2016  # ${pcfiledir} and the rest are pkg-config's
    printf '%s\n' 'prefix=${pcfiledir}/../../..' \
      'libdir=${prefix}/lib/x86_64-linux-gnu' 'includedir=${prefix}/include' ''
    grep -E '^(Name|Description|Version|URL):' "$pc"
    # shellcheck disable=SC2016
    printf '%s\n' 'Libs: -L${libdir} -lcmocka' 'Cflags: -I${includedir}'
  } >"$pc.new" && mv -f "$pc.new" "$pc"
  # benchmark.pc likewise (hal-bench is built where pkg-config finds it).
  pc="$deps_libdir/pkgconfig/benchmark.pc"
  [ -f "$pc" ] || { echo "gpu-check: $pc is missing from libbenchmark-dev"; exit 1; }
  {
    # shellcheck disable=SC2016
    printf '%s\n' 'prefix=${pcfiledir}/../../..' \
      'libdir=${prefix}/lib/x86_64-linux-gnu' 'includedir=${prefix}/include' ''
    grep -E '^(Name|Description|Version|URL):' "$pc"
    # shellcheck disable=SC2016
    printf '%s\n' 'Libs: -L${libdir} -lbenchmark' 'Libs.private: -lpthread' \
      'Cflags: -I${includedir}'
  } >"$pc.new" && mv -f "$pc.new" "$pc"

  # pkgconf, for a machine without pkg-config.
  cat >"$deps/bin/pkg-config" <<'EOF'
#!/bin/sh
# Debian's pkgconf, carried by scripts/gpu-check.sh --prepare.
here=$(cd "$(dirname "$0")/.." && pwd)
LD_LIBRARY_PATH="$here/root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
  exec "$here/root/usr/bin/pkgconf" "$@"
EOF
  # The last resort where the carried pkgconf does not run either (its glibc
  # is newer than the machine's): a stand-in that knows the carried cmocka
  # alone, which is the one package the build asks pkg-config for.
  cat >"$deps/bin/pkg-config-cmocka" <<'EOF'
#!/bin/sh
# A stand-in for pkg-config that knows one package, the cmocka carried by
# scripts/gpu-check.sh --prepare (read from its cmocka.pc).
usr=$(cd "$(dirname "$0")/../root/usr" && pwd)
pc="$usr/lib/x86_64-linux-gnu/pkgconfig/cmocka.pc"
version=$(sed -n 's/^Version: *//p' "$pc")
out="" known=0
for arg in "$@"; do
  case $arg in
    --version) echo 0.29.2; exit 0 ;;
    --modversion) out="$out $version" ;;
    --cflags|--cflags-only-I) out="$out -I$usr/include" ;;
    --libs) out="$out -L$usr/lib/x86_64-linux-gnu -lcmocka" ;;
    --variable=prefix) out="$out $usr" ;;
    --variable=libdir) out="$out $usr/lib/x86_64-linux-gnu" ;;
    --variable=includedir) out="$out $usr/include" ;;
    --*) ;;
    cmocka) known=1 ;;
    *) echo "Package $arg was not found (pkg-config-cmocka knows cmocka only)" >&2
       exit 1 ;;
  esac
done
[ "$known" = 1 ] || exit 1
echo $out
EOF

  # cuda.h: the adapters and the virtual GPU compile against it.
  cuda_h=""
  for dir in /usr/local/cuda/include "$(dirname "$(command -v nvcc 2>/dev/null || echo /nonexistent/bin/nvcc)")/../include"; do
    [ -f "$dir/cuda.h" ] && { cuda_h="$dir/cuda.h"; break; }
  done
  if [ -n "$cuda_h" ]; then
    mkdir -p "$deps/cuda/include"
    cp "$cuda_h" "$deps/cuda/include/cuda.h"
  else
    echo "gpu-check: warning: no cuda.h here; the GPU machine must have its own"
  fi

  # The test kernels' PTX, compiled as tools/kernels/meson.build compiles it,
  # and a stand-in for nvcc that hands it over (after checking the sources).
  nvcc=""
  [ -x /usr/local/cuda/bin/nvcc ] && nvcc=/usr/local/cuda/bin/nvcc
  [ -z "$nvcc" ] && nvcc=$(command -v nvcc 2>/dev/null)
  if [ -n "$nvcc" ]; then
    mkdir -p "$deps/ptx"
    if "$nvcc" -x cu -ptx "$ptx_arch" -I tools/kernels/include \
        -o "$deps/ptx/hal-kernels.ptx" tools/kernels/kernels.c \
        >"$deps/ptx/nvcc.log" 2>&1; then
      sha256sum tools/kernels/kernels.c tools/kernels/include/hal/hal_kernel.h \
        >"$deps/ptx/sources.sha256"
      echo "$ptx_arch" >"$deps/ptx/arch"
      "$nvcc" --version >>"$deps/ptx/nvcc.log" 2>&1
    else
      cat "$deps/ptx/nvcc.log"
      echo "gpu-check: warning: nvcc failed; no PTX carried"
      rm -rf "$deps/ptx"
    fi
  else
    echo "gpu-check: warning: no nvcc here; no PTX carried"
  fi
  cat >"$deps/bin/nvcc-carried" <<'EOF'
#!/bin/sh
# Stands in for nvcc on a machine without one: hands over the PTX that
# scripts/gpu-check.sh --prepare compiled, once the kernel sources and the
# architecture are checked to be those it was compiled from.
here=$(cd "$(dirname "$0")/.." && pwd)
out="" input="" include="" arch=""
while [ $# -gt 0 ]; do
  case $1 in
    -o) out=$2; shift ;;
    -I) include=$2; shift ;;
    -x) shift ;;
    -arch=*) arch=$1 ;;
    -*) ;;
    *) input=$1 ;;
  esac
  shift
done
[ -f "$here/ptx/hal-kernels.ptx" ] || { echo "nvcc-carried: no carried PTX" >&2; exit 1; }
want=$(cut -d' ' -f1 "$here/ptx/sources.sha256" | tr '\n' ' ')
have=$(sha256sum "$input" "$include/hal/hal_kernel.h" | cut -d' ' -f1 | tr '\n' ' ')
if [ "$want" != "$have" ] || [ "$arch" != "$(cat "$here/ptx/arch")" ]; then
  echo "nvcc-carried: $input or hal_kernel.h or $arch differ from what the" \
    "carried PTX was compiled from: run scripts/gpu-check.sh --prepare again" >&2
  exit 1
fi
cp "$here/ptx/hal-kernels.ptx" "$out"
EOF
  chmod +x "$deps/bin/pkg-config" "$deps/bin/pkg-config-cmocka" "$deps/bin/nvcc-carried"
  # Both ways of reading the carried cmocka.pc must name the carried files.
  for tool in pkg-config pkg-config-cmocka; do
    flags=$(PKG_CONFIG_PATH="$deps_libdir/pkgconfig" "$deps/bin/$tool" --cflags --libs cmocka)
    echo "gpu-check: $tool: cmocka $flags"
    case $flags in
      *"-I$deps"*"/include"*"-L$deps"*) ;;
      *) echo "gpu-check: $tool does not find the carried cmocka"; exit 1 ;;
    esac
  done

  # What this is, for whoever reads the GPU run.
  {
    echo "prepared by scripts/gpu-check.sh --prepare, $(date -u '+%Y-%m-%d %H:%M:%S UTC'), on $(uname -m)"
    echo "commit: $(git rev-parse HEAD 2>/dev/null || echo unknown)" \
      "($(git status --porcelain 2>/dev/null | grep -c .) paths modified or untracked)"
    for deb in "$deps"/debs/*.deb; do
      echo "deb: $(dpkg-deb -f "$deb" Package Version Architecture | tr '\n' ' ')"
    done
    [ -f "$deps/cuda/include/cuda.h" ] &&
      echo "cuda.h: from $cuda_h, $(grep -m1 '^#define CUDA_VERSION ' "$deps/cuda/include/cuda.h")"
    [ -f "$deps/ptx/hal-kernels.ptx" ] &&
      echo "ptx: $nvcc -x cu -ptx $ptx_arch ($(grep -m1 '^\.version' "$deps/ptx/hal-kernels.ptx"))," \
        "$(grep -m1 'release' "$deps/ptx/nvcc.log")"
  } >"$deps/MANIFEST.txt"
  cat "$deps/MANIFEST.txt"

  # The whole working tree that travels is limited to 64 MiB: stay far below.
  kib=$(du -sk "$deps" | cut -f1)
  if [ "$kib" -gt 16384 ]; then
    echo "gpu-check: build-gpu-deps is $kib KiB, more than the 16 MiB it should take"
    exit 1
  fi
  echo "gpu-check: prepared build-gpu-deps ($kib KiB, $(find "$deps" -type f | wc -l) files)"
  echo "carry: build-gpu-deps"
  echo "then, on the GPU machine: OUT=/some/dir ./scripts/gpu-check.sh"
}

case "${1:-}" in
  --prepare) prepare; exit 0 ;;
  -h|--help) usage; exit 0 ;;
  "") ;;
  *) echo "usage: $0 [--prepare]  (--help: what it does)" >&2; exit 64 ;;
esac

# ------------------------------------------------------------------ the run

OUT=${OUT:-$root/build-gpu-out}
mkdir -p "$OUT" || exit 1
OUT=$(cd "$OUT" && pwd)
logs=${GPU_CHECK_LOGS:-$root/build-gpu-logs}
rm -rf "$logs"
mkdir -p "$logs/bin" || exit 1
rm -f "$OUT/summary.txt" "$OUT/logs.tar.gz" "$OUT/nvidia-smi.txt" \
  "$OUT/devices.json" "$OUT/cts-testlog.json" "$OUT/figures.txt" \
  "$OUT/hal-bench-real.json"
summary="$OUT/summary.txt"

force=${GPU_CHECK_FORCE:-0}
prefer_carried=${GPU_CHECK_PREFER_CARRIED:-0}
cpus=$(nproc 2>/dev/null || echo 2)
if [ "$cpus" -le 2 ]; then
  # A small shared machine: leave the other core to whoever shares it.
  jobs=${GPU_CHECK_JOBS:-1}
  build_timeout=${GPU_CHECK_BUILD_TIMEOUT_S:-2400}
  budget=${GPU_CHECK_BUDGET_S:-3600}
else
  jobs=${GPU_CHECK_JOBS:-$cpus}
  build_timeout=${GPU_CHECK_BUILD_TIMEOUT_S:-300}
  budget=${GPU_CHECK_BUDGET_S:-480}
fi
if [ "$force" = 1 ]; then
  scale=${GPU_CHECK_TIMEOUT_SCALE:-0.25}
else
  scale=${GPU_CHECK_TIMEOUT_SCALE:-1}
fi
started=$(date +%s)
deadline=$((started + budget))
n_ok=0 n_fail=0 n_skip=0

have() { command -v "$1" >/dev/null 2>&1; }

# A run step's timeout: $1 seconds times the scale, at least 1.
t() { awk -v t="$1" -v s="$scale" 'BEGIN { v = int(t * s + 0.5); print (v < 1 ? 1 : v) }'; }

# Packs the logs into $OUT (after every step: a run cut short keeps them).
pack() {
  tar -czf "$OUT/logs.tar.gz.part" -C "$(dirname "$logs")" "$(basename "$logs")" \
    2>/dev/null && mv -f "$OUT/logs.tar.gz.part" "$OUT/logs.tar.gz"
}

# record NAME RC SECONDS RESULT: one line of the summary.
record() {
  printf '%-24s %-5s %5s s  %s\n' "$1" "$2" "$3" "$4" >>"$summary"
  printf 'gpu-check: %-24s %s (%s s)\n' "$1" "$4" "$3"
  pack
}

skip() {
  n_skip=$((n_skip + 1))
  record "$1" - 0 "SKIP: $2"
}

# step NAME TIMEOUT COMMAND...: runs COMMAND (no stdin) under a timeout cut
# to the budget left, its output in $logs/NAME.log, and records the result.
# Set before the call: step_stdout=FILE (stdout there, stderr in the log);
# step_fail_if=TEXT (output containing it fails the step: step_fail_why);
# step_soft=TEXT (a nonzero status that is no timeout is recorded as TEXT and
# counted neither as passed nor failed: the probe's "no device").
# Returns COMMAND's status (or 1 if not run).
step_stdout="" step_fail_if="" step_fail_why="" step_soft=""
step() {
  name=$1 limit=$2
  shift 2
  log="$logs/$name.log"
  left=$((deadline - $(date +%s)))
  if [ "$left" -lt 5 ]; then
    n_fail=$((n_fail + 1))
    record "$name" - 0 "NOT RUN: the time budget (${budget} s) is spent"
    step_stdout="" step_fail_if="" step_fail_why="" step_soft=""
    return 1
  fi
  [ "$limit" -gt "$left" ] && limit=$left
  echo "\$ $* (timeout ${limit} s)" >"$log"
  begin=$(date +%s)
  if have timeout; then
    set -- timeout -k 10 "$limit" "$@"
  fi
  if [ -n "$step_stdout" ]; then
    "$@" </dev/null >"$step_stdout" 2>>"$log"
  else
    "$@" </dev/null >>"$log" 2>&1
  fi
  rc=$?
  seconds=$(($(date +%s) - begin))
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    result="TIMEOUT after ${limit} s"
  elif [ "$rc" -ne 0 ] && [ -n "$step_soft" ]; then
    result=$step_soft
  elif [ "$rc" -ne 0 ]; then
    result="FAIL"
  elif [ -n "$step_fail_if" ] &&
      grep -qF "$step_fail_if" "$log" ${step_stdout:+"$step_stdout"}; then
    result="FAIL: $step_fail_why"
  else
    result="ok"
  fi
  if [ "$result" = ok ]; then
    n_ok=$((n_ok + 1))
  elif [ "$result" != "$step_soft" ]; then
    n_fail=$((n_fail + 1))
  fi
  record "$name" "$rc" "$seconds" "$result"
  if [ "$result" != ok ]; then
    tail -n 12 "$log" | sed 's/^/    | /'
  fi
  step_stdout="" step_fail_if="" step_fail_why="" step_soft=""
  [ "$result" = ok ] && return 0
  [ "$rc" -ne 0 ] && return "$rc"
  return 1
}

finish() {
  status=$1 verdict=$2
  {
    echo "verdict: $verdict"
    echo "total: $n_ok ok, $n_fail failed, $n_skip skipped; wall $(($(date +%s) - started)) s; exit $status"
  } >>"$summary"
  pack
  echo "--- $summary"
  cat "$summary"
  exit "$status"
}

{
  echo "gpu-check $(date -u '+%Y-%m-%d %H:%M:%S UTC') on $(hostname 2>/dev/null || echo '?')," \
    "$cpus CPUs, jobs $jobs, budget $budget s, timeout scale $scale${GPU_CHECK_FORCE:+, GPU_CHECK_FORCE=$force}"
  echo "commit: $(git rev-parse HEAD 2>/dev/null ||
    sed -n 's/^commit: //p' "$deps/MANIFEST.txt" 2>/dev/null || echo unknown)"
  printf '%-24s %-5s %7s  %s\n' step rc time result
} >"$summary"

# --- the machine (quick, each bounded)
{
  bounded() { if have timeout; then timeout 20 "$@"; else "$@"; fi; }
  echo "date: $(date -u)"
  echo "uname: $(uname -a)"
  sed -n 's/^PRETTY_NAME=//p' /etc/os-release 2>/dev/null
  echo "cpus: $cpus"
  bounded free -m 2>/dev/null
  echo "--- compiler: $(bounded "${CC:-cc}" --version 2>&1 | head -n 1)"
  echo "--- python3: $(bounded python3 --version 2>&1)"
  echo "--- environment"
  env | grep -E '^(CUDA|NVIDIA|HAL_|VGPU_|LD_LIBRARY_PATH=|PATH=|PKG_CONFIG|CC=)' | sort
  echo "--- CUDA libraries known to the loader"
  bounded ldconfig -p 2>/dev/null | grep -E 'libcuda|libnvidia-ml|libnccl'
  ls -ld /usr/local/cuda* /usr/local/nvidia 2>/dev/null
  echo "--- build-gpu-deps"
  cat "$deps/MANIFEST.txt" 2>/dev/null || echo "(not carried)"
} >"$logs/host.log" 2>&1
arch=$(uname -m)
if [ -d "$deps/root" ] && [ "$arch" != x86_64 ]; then
  echo "gpu-check: warning: build-gpu-deps holds x86_64 packages; this machine is $arch" |
    tee -a "$logs/host.log"
fi
record host 0 0 "ok: $(uname -r), $cpus CPUs (host.log)"

# --- the GPU: nvidia-smi, then the driver library itself
smi_gpus=0
smi_note="nvidia-smi: not found"
if have nvidia-smi; then
  step nvidia-smi "$(t 30)" nvidia-smi
  cp "$logs/nvidia-smi.log" "$OUT/nvidia-smi.txt"
  step nvidia-smi-L "$(t 30)" nvidia-smi -L
  smi_gpus=$(grep -c '^GPU [0-9]' "$logs/nvidia-smi-L.log")
  smi_note="nvidia-smi lists $smi_gpus GPU(s)"
  step nvidia-smi-q "$(t 60)" nvidia-smi -q
else
  skip nvidia-smi "not found on PATH"
fi

cat >"$logs/cuda_probe.c" <<'EOF'
// gpu-check's device probe (written and compiled by scripts/gpu-check.sh):
// loads each CUDA driver library named on the command line until one
// initializes and has a device; prints what it saw. Exit 0: a device.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

typedef int (*init_fn)(unsigned int);
typedef int (*int_out_fn)(int*);
typedef int (*device_get_fn)(int*, int);
typedef int (*name_fn)(char*, int, int);
typedef int (*mem_fn)(size_t*, int);
typedef int (*attribute_fn)(int*, int, int);
typedef int (*error_name_fn)(int, const char**);

static char reasons[4096];

static void note(const char* format, ...) {
  size_t used = strlen(reasons);
  if (used && used + 2 < sizeof(reasons)) {
    strcat(reasons, "; ");
    used += 2;
  }
  va_list args;
  va_start(args, format);
  vsnprintf(reasons + used, sizeof(reasons) - used, format, args);
  va_end(args);
}

static int try_library(const char* library) {
  if (strchr(library, '/') && access(library, F_OK) != 0) {
    note("%s: not present", library);
    return 0;
  }
  void* handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    note("dlopen %s: %s", library, dlerror());
    return 0;
  }
  struct link_map* map = NULL;
  const char* path = library;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name[0])
    path = map->l_name;
  init_fn init = (init_fn)dlsym(handle, "cuInit");
  int_out_fn get_version = (int_out_fn)dlsym(handle, "cuDriverGetVersion");
  int_out_fn get_count = (int_out_fn)dlsym(handle, "cuDeviceGetCount");
  device_get_fn get_device = (device_get_fn)dlsym(handle, "cuDeviceGet");
  name_fn get_name = (name_fn)dlsym(handle, "cuDeviceGetName");
  mem_fn total_mem = (mem_fn)dlsym(handle, "cuDeviceTotalMem_v2");
  attribute_fn attribute = (attribute_fn)dlsym(handle, "cuDeviceGetAttribute");
  error_name_fn error_name = (error_name_fn)dlsym(handle, "cuGetErrorName");
  if (!init || !get_count || !get_device) {
    note("%s: not a CUDA driver library (no cuInit/cuDeviceGetCount)", path);
    return 0;
  }
  int version = 0;
  if (get_version)
    get_version(&version);
  int result = init(0);
  if (result != 0) {
    const char* what = NULL;
    if (!error_name || error_name(result, &what) != 0 || !what) {
      // The stub library names no errors: the ones cuInit returns.
      what = result == 34    ? "CUDA_ERROR_STUB_LIBRARY"
             : result == 35  ? "CUDA_ERROR_INSUFFICIENT_DRIVER"
             : result == 46  ? "CUDA_ERROR_DEVICES_UNAVAILABLE"
             : result == 100 ? "CUDA_ERROR_NO_DEVICE"
             : result == 304 ? "CUDA_ERROR_OPERATING_SYSTEM"
             : result == 999 ? "CUDA_ERROR_UNKNOWN"
                             : "?";
    }
    note("%s: cuInit failed: %s (%d)", path, what, result);
    return 0;
  }
  int count = 0;
  result = get_count(&count);
  printf("probe: %s: %s, CUDA driver API %d.%d, %d device(s)\n", library, path,
         version / 1000, version % 1000 / 10, count);
  for (int i = 0; i < count; ++i) {
    int device = 0, major = 0, minor = 0;
    char name[256] = "?";
    size_t bytes = 0;
    if (get_device(&device, i) != 0)
      continue;
    if (get_name)
      get_name(name, (int)sizeof(name), device);
    if (total_mem)
      total_mem(&bytes, device);
    if (attribute) {
      attribute(&major, 75, device);  // COMPUTE_CAPABILITY_MAJOR
      attribute(&minor, 76, device);  // COMPUTE_CAPABILITY_MINOR
    }
    printf("probe: device %d: %s, compute capability %d.%d, %zu MiB\n", i,
           name, major, minor, bytes >> 20);
  }
  if (result != 0 || count == 0)
    note("%s: cuInit ok, but no device (cuDeviceGetCount: %d, count %d)",
         path, result, count);
  return result == 0 ? count : 0;
}

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (!argv[i][0])
      continue;
    if (try_library(argv[i]) > 0) {
      printf("probe: device found with %s\n", argv[i]);
      return 0;
    }
  }
  printf("probe: no device: %s\n", reasons[0] ? reasons : "nothing to try");
  return 1;
}
EOF
probe_note="libcuda probe: not compiled (no C compiler?)"
probe_library=""
# A HAL_CUDA_LIBRARY of yours is what every run loads: the probe tries it alone.
cuda_candidates=${HAL_CUDA_LIBRARY:-"libcuda.so.1 /usr/local/nvidia/lib64/libcuda.so.1
  /usr/lib/x86_64-linux-gnu/libcuda.so.1 /usr/lib64/libcuda.so.1"}
if step probe-compile "$(t 60)" "${CC:-cc}" -O1 -o "$logs/cuda_probe" \
    "$logs/cuda_probe.c" -ldl; then
  step_soft="no device (probe.log)"
  # shellcheck disable=SC2086  # the candidates are words
  if step probe "$(t 60)" "$logs/cuda_probe" $cuda_candidates; then
    probe_library=$(sed -n 's/^probe: device found with //p' "$logs/probe.log")
    probe_note="libcuda probe: a device with $probe_library"
  else
    probe_note="libcuda probe: $(sed -n 's/^probe: no device: //p' "$logs/probe.log")"
    [ "$probe_note" = "libcuda probe: " ] && probe_note="libcuda probe: failed (probe.log)"
  fi
fi

if [ "$smi_gpus" -eq 0 ] && [ -z "$probe_library" ]; then
  message="no NVIDIA GPU found ($smi_note; $probe_note)"
  if [ "$force" != 1 ]; then
    echo "gpu-check: $message"
    finish 2 "$message"
  fi
  echo "gpu-check: $message; GPU_CHECK_FORCE=1: going on"
  echo "forced (GPU_CHECK_FORCE=1) past: $message" >>"$summary"
elif [ -z "$probe_library" ]; then
  echo "gpu-check: warning: $smi_note, but $probe_note: the CUDA runs will fail"
fi
# The library that worked, where the default name did not find it.
if [ -n "$probe_library" ] && [ -z "${HAL_CUDA_LIBRARY:-}" ] &&
    [ "$probe_library" != libcuda.so.1 ]; then
  HAL_CUDA_LIBRARY=$probe_library
  export HAL_CUDA_LIBRARY
  echo "HAL_CUDA_LIBRARY=$HAL_CUDA_LIBRARY (found by the probe)" >>"$summary"
fi

# --- the tools: meson and ninja, as commands or Python modules
meson=""
if have meson; then
  meson=$(command -v meson)
elif python3 -m mesonbuild.mesonmain --version >/dev/null 2>&1; then
  meson="$logs/bin/meson"
  printf '#!/bin/sh\nexec python3 -m mesonbuild.mesonmain "$@"\n' >"$meson"
  chmod +x "$meson"
fi
# Wrappers made here go on PATH too: CMake (which meson asks for the
# package files of hal) looks for ninja by name.
PATH="$logs/bin:$PATH"
if have ninja; then
  NINJA=$(command -v ninja)
elif have samu; then
  NINJA=$(command -v samu)
elif python3 -m ninja --version >/dev/null 2>&1; then
  NINJA="$logs/bin/ninja"
  printf '#!/bin/sh\nexec python3 -m ninja "$@"\n' >"$NINJA"
  chmod +x "$NINJA"
else
  NINJA=""
fi
export NINJA  # meson runs the ninja this names
if [ -z "$meson" ] || [ -z "$NINJA" ]; then
  n_fail=$((n_fail + 1))
  record tools - 0 "FAIL: meson ${meson:-missing} (tried meson, python3 -m mesonbuild.mesonmain), ninja ${NINJA:-missing} (tried ninja, samu, python3 -m ninja)"
  finish 1 "no meson or no ninja: nothing built"
fi
record tools 0 0 "ok: meson $("$meson" --version 2>/dev/null) ($meson), ninja $("$NINJA" --version 2>/dev/null) ($NINJA)"

# --- what the build takes from the machine, and what from build-gpu-deps
native="$logs/native.ini"
echo "[binaries]" >"$native"
choices=""
# cmocka: the carried one when there is one, put first on PKG_CONFIG_PATH
# whichever pkg-config reads it, and found at run time through an rpath.
link_args=""
if [ -f "$deps_libdir/pkgconfig/cmocka.pc" ]; then
  PKG_CONFIG_PATH="$deps_libdir/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
  export PKG_CONFIG_PATH
  link_args="-Wl,-rpath,$deps_libdir"
  # hal-bench (C++) links the carried Google Benchmark: the same rpath.
  LDFLAGS="$link_args${LDFLAGS:+ $LDFLAGS}"
  export LDFLAGS
  choices="$choices cmocka: carried;"
else
  choices="$choices cmocka: the machine's (none carried);"
fi
pkg_config=${GPU_CHECK_PKG_CONFIG:-auto}
if [ "$pkg_config" = auto ]; then
  if have pkg-config && pkg-config --version >/dev/null 2>&1; then
    pkg_config=system
  elif [ -x "$deps/bin/pkg-config" ] && "$deps/bin/pkg-config" --version >/dev/null 2>&1; then
    pkg_config=carried
  else
    pkg_config=shim
  fi
fi
# Meson takes the pkg-config that PKG_CONFIG names (its machine-file key is
# `pkgconfig` up to meson 1.2 and `pkg-config` after: the variable is both's).
case $pkg_config in
  system) choices="$choices pkg-config: the machine's;" ;;
  carried) PKG_CONFIG="$deps/bin/pkg-config"; export PKG_CONFIG
    choices="$choices pkg-config: carried pkgconf;" ;;
  shim) PKG_CONFIG="$deps/bin/pkg-config-cmocka"; export PKG_CONFIG
    choices="$choices pkg-config: carried stand-in (cmocka only);" ;;
  *) echo "gpu-check: GPU_CHECK_PKG_CONFIG=$pkg_config: expected system, carried or shim"; exit 64 ;;
esac
# cuda.h: the machine's toolkit, else the carried copy.
nvcc_path=""
[ -x /usr/local/cuda/bin/nvcc ] && nvcc_path=/usr/local/cuda/bin/nvcc
[ -z "$nvcc_path" ] && nvcc_path=$(command -v nvcc 2>/dev/null)
cuda_include=${GPU_CHECK_CUDA_INCLUDE:-}
if [ -z "$cuda_include" ] && [ "$prefer_carried" != 1 ]; then
  for dir in /usr/local/cuda/include ${nvcc_path:+"$(dirname "$nvcc_path")/../include"}; do
    [ -f "$dir/cuda.h" ] && { cuda_include=$dir; break; }
  done
fi
if [ -z "$cuda_include" ] && [ -f "$deps/cuda/include/cuda.h" ]; then
  cuda_include="$deps/cuda/include"
fi
choices="$choices cuda.h: ${cuda_include:-none found};"
# PTX for the dispatch tests: the machine's nvcc, else the carried PTX.
if [ -f "$deps/ptx/hal-kernels.ptx" ] &&
    { [ -z "$nvcc_path" ] || [ "$prefer_carried" = 1 ]; }; then
  echo "nvcc = '$deps/bin/nvcc-carried'" >>"$native"
  choices="$choices PTX: carried ($(grep -m1 release "$deps/ptx/nvcc.log" 2>/dev/null));"
else
  choices="$choices PTX: ${nvcc_path:-no nvcc (no CUDA kernel image)}"
fi
echo "build:$choices" >>"$summary"

# --- configure and build (afresh)
rm -rf build-gpu
set -- setup build-gpu --native-file "$native" -Dbuildtype=debugoptimized \
  -Dcts_runtime=system -Dcuda=enabled -Dhip=disabled -Dvgpu=enabled -Dtests=true
[ -n "$cuda_include" ] && set -- "$@" "-Dcudasdk_include=$cuda_include"
[ -n "$link_args" ] && set -- "$@" "-Dc_link_args=$link_args"
if ! step configure "$build_timeout" "$meson" "$@"; then
  cp build-gpu/meson-logs/meson-log.txt "$logs/meson-log.txt" 2>/dev/null
  finish 1 "configure failed: nothing built (configure.log, meson-log.txt)"
fi
cp build-gpu/meson-logs/meson-log.txt "$logs/meson-log.txt" 2>/dev/null
grep -i -m1 -E '^Found pkg-config: ' "$logs/meson-log.txt" | sed 's/^/meson: /' >>"$summary"
if [ -f "$deps/root/usr/include/cmocka.h" ]; then
  if grep -qF -- "-I$deps/" build-gpu/build.ninja; then
    echo "cmocka: the carried one (build.ninja has -I$deps/...)" >>"$summary"
  else
    echo "cmocka: NOT the carried one (build.ninja does not name it)" >>"$summary"
  fi
fi
if ! step build "$build_timeout" "$meson" compile -C build-gpu -j "$jobs"; then
  # Build what can be built: the steps below then fail one by one.
  step build-keep-going "$build_timeout" "$NINJA" -C build-gpu -k 0 -j "$jobs"
fi

# --- the real GPU: hal-run (which says what it runs on), the benchmark, the CTS
hal_run="$root/build-gpu/tools/hal-run"
bench="$root/build-gpu/tools/hal-bench-submit"
vgpu_cuda="$root/build-gpu/vgpu/libvgpu-cuda.so"
real_cuda=${HAL_CUDA_LIBRARY:-libcuda.so.1}
step hal-run-version "$(t 20)" "$hal_run" --version
step hal-run-list-drivers "$(t 30)" "$hal_run" --list-drivers
step_stdout="$OUT/devices.json"
step_fail_if='"virtual": true' step_fail_why="a device listed is the virtual GPU"
step hal-run-dump-devices "$(t 30)" "$hal_run" --dump-devices --json
cp "$OUT/devices.json" "$logs/devices.json" 2>/dev/null
for driver in cuda_stream cuda_graph; do
  step_fail_if="the virtual GPU (" step_fail_why="ran on the virtual GPU, not the real one"
  step "hal-run-$driver" "$(t 60)" env HAL_SYNC_MAX_WAIT_MS=60000 \
    "$hal_run" --driver="$driver" -v
done
step_fail_if="skipped:" step_fail_why="a driver was skipped"
step bench-real "$(t 90)" env HAL_DRIVER_PATH="$root/build-gpu/drivers" \
  HAL_CUDA_LIBRARY="$real_cuda" HAL_SYNC_MAX_WAIT_MS=120000 \
  "$bench" --drivers=cuda_stream,cuda_graph --submits=1000
# hal-bench (every figure against the raw CUDA calls, its default 15
# interleaved repetitions) where Google Benchmark was there to build it.
if [ -x "$root/build-gpu/tools/hal-bench" ]; then
  step hal-bench-real "$(t 180)" env HAL_DRIVER_PATH="$root/build-gpu/drivers" \
    HAL_CUDA_LIBRARY="$real_cuda" HAL_SYNC_MAX_WAIT_MS=120000 \
    "$root/build-gpu/tools/hal-bench" --json="$logs/hal-bench-real.json"
  cp "$logs/hal-bench-real.json" "$OUT/hal-bench-real.json" 2>/dev/null
else
  echo "hal-bench-real: not built (no Google Benchmark on this machine)" >>"$summary"
fi

step meson-test-list "$(t 30)" "$meson" test -C build-gpu --no-rebuild --list \
  --suite cuda_stream --suite cuda_graph
rm -f build-gpu/meson-logs/testlog.txt build-gpu/meson-logs/testlog.json
step cts "$(t 240)" "$meson" test -C build-gpu --no-rebuild --print-errorlogs \
  --suite cuda_stream --suite cuda_graph --num-processes "$jobs" \
  --timeout-multiplier "$scale"
for ext in txt json; do
  if [ -f "build-gpu/meson-logs/testlog.$ext" ]; then
    [ "$ext" = json ] && cp "build-gpu/meson-logs/testlog.$ext" "$OUT/cts-testlog.$ext"
    cp "build-gpu/meson-logs/testlog.$ext" "$logs/cts-testlog.$ext"
  fi
done
if [ -f "$OUT/cts-testlog.json" ]; then
  python3 - "$OUT/cts-testlog.json" >>"$summary" <<'PY'
import json, sys
counts, lines = {}, []
for line in open(sys.argv[1]):
    try:
        r = json.loads(line)
    except ValueError:
        continue
    counts[r["result"]] = counts.get(r["result"], 0) + 1
    name = r["name"].split(" / ")[-1]  # "hal:cuda_graph+cts / cuda_graph/driver"
    lines.append("  %-34s %-8s %6.1f s" % (name, r["result"], r.get("duration", 0)))
print("cts: " + ", ".join("%d %s" % (n, k) for k, n in sorted(counts.items())))
print("\n".join(lines))
PY
fi

# --- the virtual GPU, for comparison
if [ -f "$vgpu_cuda" ]; then
  for driver in cuda_stream cuda_graph; do
    step "vgpu-hal-run-$driver" "$(t 60)" env HAL_CUDA_LIBRARY="$vgpu_cuda" \
      HAL_SYNC_MAX_WAIT_MS=60000 "$hal_run" --driver="$driver"
  done
  step_fail_if="skipped:" step_fail_why="a driver was skipped"
  step bench-vgpu "$(t 90)" env HAL_DRIVER_PATH="$root/build-gpu/drivers" \
    HAL_CUDA_LIBRARY="$vgpu_cuda" HAL_SYNC_MAX_WAIT_MS=120000 \
    "$bench" --drivers=cuda_stream,cuda_graph --submits=1000
else
  skip vgpu-comparison "the virtual GPU was not built ($vgpu_cuda)"
fi
{
  for name in hal-run-cuda_stream hal-run-cuda_graph bench-real \
      vgpu-hal-run-cuda_stream vgpu-hal-run-cuda_graph bench-vgpu; do
    [ -f "$logs/$name.log" ] && { echo "=== $name"; cat "$logs/$name.log"; }
  done
} >"$OUT/figures.txt"

# --- whatever `meson test --benchmark` registers (in this configuration)
if step benchmark-list "$(t 30)" "$meson" test -C build-gpu --no-rebuild --benchmark --list; then
  if [ "$(grep -vc -e '^\$ ' -e '^$' -e 'No tests defined' "$logs/benchmark-list.log")" -gt 0 ]; then
    step benchmarks "$(t 150)" "$meson" test -C build-gpu --no-rebuild --benchmark \
      --print-errorlogs
    cp build-gpu/meson-logs/testlog.txt "$logs/benchmark-testlog.txt" 2>/dev/null
  else
    skip benchmarks "none registered (submit_cost needs both virtual GPU facades, mlir_fanout MLIR 14)"
  fi
fi

# --- collectives: one rank on the one GPU (NCCL refuses two ranks on one
# device), through the machine's libnccl.so.2: the loader's, else the one a
# Python package carries.
{
  echo "What NCCL this machine has:"
  ls -l /usr/lib/x86_64-linux-gnu/libnccl* /usr/local/cuda/lib*/libnccl* 2>&1
  if have ldconfig; then ldconfig -p | grep -i nccl; fi
  if have timeout && have nvidia-smi; then timeout 20 nvidia-smi topo -m; fi
} >"$logs/collectives.log" 2>&1
nccl=${HAL_NCCL_LIBRARY:-}
if [ -z "$nccl" ] && have ldconfig && ldconfig -p | grep -q 'libnccl\.so\.2 '; then
  nccl=libnccl.so.2
fi
if [ -z "$nccl" ] && have python3; then
  nccl=$(python3 -c 'import glob, os, nvidia.nccl as n; print((glob.glob(os.path.join(list(n.__path__)[0], "lib", "libnccl.so.2")) or [""])[0])' 2>/dev/null)
fi
if [ -n "$nccl" ]; then
  echo "HAL_NCCL_LIBRARY=$nccl" >>"$logs/collectives.log"
  step_fail_if="the virtual GPU (" step_fail_why="ran on the virtual GPU, not the real one"
  step all-reduce-1-rank "$(t 90)" env HAL_NCCL_LIBRARY="$nccl" HAL_SYNC_MAX_WAIT_MS=60000 \
    "$hal_run" --ranks=1 --driver=cuda_stream --elements=1048576
else
  skip all-reduce-1-rank "no libnccl.so.2 found (collectives.log)"
fi

if [ "$n_fail" -eq 0 ]; then
  finish 0 "every step passed"
fi
finish 1 "$n_fail step(s) failed"
