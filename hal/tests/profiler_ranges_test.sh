#!/bin/sh
# The vendor profilers' ranges (docs/tracing.md, "Native tools"): every
# submission with device work is one NVTX range of the "HAL" domain on the
# CUDA drivers when a tool is attached (NVTX_INJECTION64_PATH), and one
# roctx range on the HIP drivers when libroctx64 loads; every range started
# is ended. Fakes of both tools count them.
# usage: profiler_ranges_test.sh HAL_RUN FAKE_NVTX_TOOL|"" FAKE_ROCTX_DIR|""
set -u
hal_run=$1
nvtx_tool=$2
roctx_dir=$3
drivers="$(dirname "$hal_run")/../drivers"
failed=0
err=$(mktemp)
trap 'rm -f "$err"' EXIT
unset HAL_DRIVER_PATH  # the build tree's drivers and virtual GPU

# ranges NAME TOOL_LINE_PREFIX DRIVER -- ENV...: the tool saw N > 0 ranges
# started, as many ended, the first one named after the driver's queue.
ranges() {
  name=$1 prefix=$2 driver=$3
  shift 4
  if ! env "$@" "$hal_run" --driver="$driver" >/dev/null 2>"$err"; then
    echo "FAIL $name: hal-run failed"; sed 's/^/  err: /' "$err"
    failed=$((failed + 1)); return
  fi
  line=$(grep "^$prefix: " "$err" | grep -v " 0 range(s) started" | tail -n1)
  started=$(echo "$line" | sed -n 's/.* \([0-9]*\) range(s) started.*/\1/p')
  ended=$(echo "$line" | sed -n 's/.* started, \([0-9]*\) \(ended\|stopped\).*/\1/p')
  if [ -n "$started" ] && [ "$started" -gt 0 ] && [ "$started" = "$ended" ] &&
     echo "$line" | grep -q "first 'HAL $driver:0:q[01] submission 1'"; then
    echo "ok   $name: $line"
  else
    echo "FAIL $name: '$line'"; sed 's/^/  err: /' "$err"
    failed=$((failed + 1))
  fi
}

for driver in cuda_stream cuda_graph; do
  [ -f "$drivers/hal-driver-$driver.so" ] || continue
  if [ -z "$nvtx_tool" ]; then
    echo "skip nvtx_$driver: built without NVTX 3 headers"
    continue
  fi
  ranges "nvtx_$driver" fake-nvtx "$driver" -- NVTX_INJECTION64_PATH="$nvtx_tool"
done
for driver in hip_stream hip_graph; do
  [ -f "$drivers/hal-driver-$driver.so" ] || continue
  ranges "roctx_$driver" fake-roctx "$driver" -- \
    LD_LIBRARY_PATH="$roctx_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
# No tool, no library: silently off (nothing printed about it), runs. The
# test's environment may list the fake's folder already: not here.
path_without_fake=$(echo "${LD_LIBRARY_PATH:-}" | tr ':' '\n' |
  grep -vxF "$roctx_dir" | paste -sd: -)
for driver in cuda_stream hip_stream; do
  [ -f "$drivers/hal-driver-$driver.so" ] || continue
  if env -u NVTX_INJECTION64_PATH LD_LIBRARY_PATH="$path_without_fake" \
       "$hal_run" --driver=$driver >/dev/null 2>"$err" &&
     ! grep -qi "nvtx\|roctx" "$err"; then
    echo "ok   off_$driver"
  else
    echo "FAIL off_$driver"; sed 's/^/  err: /' "$err"; failed=$((failed + 1))
  fi
done
echo "profiler_ranges_test: $failed failed"
[ "$failed" -eq 0 ]
