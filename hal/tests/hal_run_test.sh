#!/bin/sh
# hal-run's command line: listings, exit codes, error messages.
# usage: hal_run_test.sh HAL_RUN TEST_PLUGIN_DIR BUILT_DRIVER_COUNT HAVE_CCL
#                        BY_FILE_PLUGIN
set -u
hal_run=$1
plugin_dir=$2
driver_count=${3:-0}
have_ccl=${4:-0}
by_file_plugin=${5:-}
passed=0
failed=0
out=$(mktemp)
err=$(mktemp)
scratch=$(mktemp -d)
trap 'rm -rf "$out" "$err" "$scratch"' EXIT

# check NAME EXPECTED_EXIT PATTERN_STDOUT PATTERN_STDERR -- COMMAND...
check() {
  name=$1 expected=$2 pattern_out=$3 pattern_err=$4
  shift 5
  "$@" >"$out" 2>"$err"
  rc=$?
  ok=1
  [ "$rc" -eq "$expected" ] || ok=0
  [ -z "$pattern_out" ] || grep -q -- "$pattern_out" "$out" || ok=0
  [ -z "$pattern_err" ] || grep -q -- "$pattern_err" "$err" || ok=0
  if [ $ok -eq 1 ]; then
    passed=$((passed + 1))
    echo "ok   $name"
  else
    failed=$((failed + 1))
    echo "FAIL $name (exit $rc, wanted $expected)"
    sed 's/^/  out: /' "$out"
    sed 's/^/  err: /' "$err"
  fi
}

export HAL_DRIVER_PATH="$plugin_dir"
check help 0 "--list-drivers" "" -- "$hal_run" --help
check list_drivers 0 "^test .* ok " "" -- "$hal_run" --list-drivers
check list_drivers_broken 0 "ABI version 99" "" -- "$hal_run" --list-drivers
check list_drivers_not_elf 0 "test_not_elf .* broken" "" -- \
  "$hal_run" --list-drivers
check list_devices 0 "test-device-1" "" -- \
  "$hal_run" --driver=test --list-devices
check unknown_driver 1 "" "no driver named 'nope'.*directories searched: .*$plugin_dir" -- \
  "$hal_run" --driver=nope --list-devices
check broken_driver 1 "" "INCOMPATIBLE" -- \
  "$hal_run" --driver=test_wrong_abi --list-devices
check no_devices 1 "" "no devices" -- \
  "$hal_run" --driver=test_no_devices --list-devices
# getopt's complaints, said as hal-run (not as argv[0], a build path).
check bad_option 2 "" "^hal-run: unrecognized option '--bogus'" -- \
  "$hal_run" --bogus
check bad_short_option 2 "" "^hal-run: unrecognized option '-x'" -- \
  "$hal_run" -x
check missing_argument 2 "" "^hal-run: option '--driver' requires an argument" -- \
  "$hal_run" --driver
check unwanted_argument 2 "" "^hal-run: option '--json' takes no argument" -- \
  "$hal_run" --json=1
check ambiguous_option 2 "" "^hal-run: option '--d' is ambiguous: --driver --device --dump-devices" -- \
  "$hal_run" --d=test
check no_action 2 "" "^hal-run: nothing to do: give --driver" -- "$hal_run"
check no_action_after_dashes 2 "" "^hal-run: nothing to do: give --driver" -- \
  "$hal_run" --
check list_devices_all 0 "test://1 *test-device-1" \
  "driver test_no_devices: NOT_FOUND" -- "$hal_run" --list-devices
check version 0 "^hal-run [0-9.]* (HAL plugin ABI [0-9]*)\$" "" -- \
  "$hal_run" --version
check help_lists_everything 0 "HAL_DRIVERS_SELECT" "" -- "$hal_run" -h

# check_help NAME ITEM...: each ITEM (a fixed string) is in --help, read as
# one line so that the help's wrapping does not matter.
check_help() {
  name=$1
  shift
  help=$("$hal_run" --help | tr -s ' \n' '  ')
  missing=""
  for item in "$@"; do
    case "$help" in
      *"$item"*) ;;
      *) missing="$missing '$item'" ;;
    esac
  done
  if [ -z "$missing" ] && [ $# -gt 0 ]; then
    passed=$((passed + 1))
    echo "ok   $name"
  else
    failed=$((failed + 1))
    echo "FAIL $name (not in --help:${missing:- nothing to look for})"
  fi
}
# Every long option of hal-run's table, and -h and -v, has its entry in the
# help: read from the source, so a new option cannot be left out of it.
source_file="$(dirname "$0")/../../tools/hal_run.c"
options=$(sed -n 's/^ *{"\([a-z-]*\)", *[a-z]*_argument,.*/--\1/p' "$source_file")
if [ "$(echo "$options" | grep -c .)" -ge 10 ]; then
  # shellcheck disable=SC2086
  check_help help_lists_every_option "-h, --help" "-v, --verbose" $options
else
  failed=$((failed + 1))
  echo "FAIL help_lists_every_option (no option table read from $source_file)"
fi
# The variables hal-run and libhal read, and where the virtual GPU's are.
check_help help_lists_variables HAL_DRIVER_PATH HAL_DRIVERS_SELECT \
  HAL_DRIVERS_DISABLE HAL_LOADER_DEBUG HAL_CUDA_LIBRARY HAL_HIP_LIBRARY \
  HAL_GPU_ADAPTER_HIDE_SYMBOLS HAL_SYNC_MAX_WAIT_MS HAL_SYNC_NO_FUTEX \
  HAL_TRACE HAL_TRACE_MAX_MB "VGPU_*" README.md docs/vgpu.md \
  HAL_NCCL_LIBRARY HAL_RCCL_LIBRARY HAL_RUN_RANK HAL_RUN_RANKS \
  HAL_RUN_CHANNEL_ID HAL_RUN_KILL_RANK HAL_RUN_EXIT_RANK
# Everything --dump-devices prints ("    LABEL: value" lines) is named in
# its entry.
labels=$(HAL_DRIVER_PATH="$plugin_dir" "$hal_run" --dump-devices --driver=test |
  sed -n 's/^    \([a-z][a-z ]*\):.*/\1/p' | sort -u)
old_ifs=$IFS
IFS='
'
# shellcheck disable=SC2086
check_help help_lists_dump_fields $labels
IFS=$old_ifs
check help_exit_codes 0 "exit status: 0 success, 1 a failure" "" -- \
  "$hal_run" --help
check repeated_flag 2 "" "--driver=test given twice" -- \
  "$hal_run" --driver=test --driver=test --list-devices
check empty_driver 2 "" "^hal-run: --driver needs a driver name" -- \
  "$hal_run" --driver=
check empty_driver_listing 2 "" "^hal-run: --driver needs a driver name" -- \
  "$hal_run" --driver= --list-devices
check empty_device 2 "" "^hal-run: --device needs a device URI" -- \
  "$hal_run" --device=
check device_all 2 "" "--device names one device.*--driver=all runs every driver" -- \
  "$hal_run" --device=all
check conflicting_flags 2 "" "--driver and --device both choose" -- \
  "$hal_run" --driver=test --device=test://1
check device_and_list_devices 2 "" "list by --driver, not --device" -- \
  "$hal_run" --device=test://1 --list-devices
check device_and_dump_devices 2 "" "list by --driver, not --device" -- \
  "$hal_run" --device=test://1 --dump-devices
check driver_all_list_devices 0 "test://1 *test-device-1" \
  "driver test_no_devices: NOT_FOUND" -- \
  "$hal_run" --driver=all --list-devices
# "Every usable driver" says each plugin it leaves out, and why.
check driver_all_says_skipped 0 "test://1 *test-device-1" \
  "^hal-run: skipping plugin 'test_wrong_abi' ([^)]*hal-driver-test_wrong_abi.so): INCOMPATIBLE: .*ABI version 99" -- \
  "$hal_run" --driver=all --list-devices
# A broken plugin earlier on the path hides the good one of its name: both
# are said, not only the broken one.
mkdir "$scratch/shadow"
cp "$plugin_dir/hal-driver-test_not_elf.so" "$scratch/shadow/hal-driver-test.so"
check driver_all_says_shadowed 0 "" \
  "^hal-run: skipping plugin 'test' ($plugin_dir/hal-driver-test.so): shadowed by the unusable $scratch/shadow/hal-driver-test.so\$" -- \
  env HAL_DRIVER_PATH="$scratch/shadow:$plugin_dir" "$hal_run" --driver=all --list-devices
check list_drivers_alone 2 "" "--list-drivers takes no other option" -- \
  "$hal_run" --list-drivers --driver=test
check dump_devices 0 "max workgroup size:" "" -- \
  "$hal_run" --dump-devices --driver=test
check list_devices_json 0 "^ok\$" "" -- sh -c "\"$hal_run\" --list-devices --json |
  python3 -c 'import json, sys
d = json.load(sys.stdin)
t = [x for x in d[\"drivers\"] if x[\"name\"] == \"test\"][0]
assert [v[\"uri\"] for v in t[\"devices\"]] == [\"test://0\", \"test://1\"]
assert [x for x in d[\"drivers\"] if x[\"name\"] == \"test_no_devices\"][0][\"error\"]
print(\"ok\")'"
# More usable drivers than any fixed table holds: 70 copies of a plugin
# named by its file, each its own driver; every one is listed.
if [ -n "$by_file_plugin" ]; then
  many="$scratch/many"
  mkdir "$many"
  for i in $(seq -w 0 69); do
    cp "$by_file_plugin" "$many/hal-driver-many$i.so"
  done
  check many_drivers_list_devices 0 "^ *many69://1 *test-device-1" "" -- \
    env HAL_DRIVER_PATH="$many" "$hal_run" --list-devices
  check many_drivers_json 0 "^70 drivers, 140 devices\$" "" -- sh -c "HAL_DRIVER_PATH='$many' \"$hal_run\" --list-devices --json |
    python3 -c 'import json, sys
d = [x for x in json.load(sys.stdin)[\"drivers\"] if x[\"name\"].startswith(\"many\")]
print(len(d), \"drivers,\", sum(len(x[\"devices\"]) for x in d), \"devices\")'"
  # Paths are bytes, JSON is UTF-8: a byte that is not UTF-8 is U+FFFD,
  # well-formed UTF-8 stays as it is.
  odd="$scratch/$(printf 'bad\351\300\257 good\303\251')"
  mkdir "$odd"
  cp "$by_file_plugin" "$odd/hal-driver-$(printf 'x\377').so"
  check json_not_utf8 0 "^ok\$" "" -- sh -c "HAL_DRIVER_PATH='$odd' \"$hal_run\" --list-drivers --json |
    python3 -c 'import json, sys
d = json.loads(sys.stdin.buffer.read().decode(\"utf-8\"))
assert any(p.endswith(\"bad\\ufffd\\ufffd\\ufffd good\\u00e9\") for p in d[\"directories\"]), d
assert any(p[\"name\"] == \"x\\ufffd\" for p in d[\"drivers\"]), d
print(\"ok\")'"
else
  echo "skip many_drivers, json_not_utf8: no plugin named by its file given"
fi
# A driver name longer than a driver can hold is not found as given.
long_name=$(printf 'L%.0s' $(seq 70))
check long_driver_name 1 "" "no driver named '$long_name'" -- \
  "$hal_run" --device="$long_name://0"

# Output that cannot be written is a failure, said on stderr.
check list_devices_full 1 "" "writing to stdout failed: No space left on device" -- \
  sh -c "\"$hal_run\" --list-devices >/dev/full"
# A listing that fails says why on stderr; its JSON, on stdout, stays whole.
check list_devices_json_none 1 "" "no usable driver has a device" -- \
  env HAL_DRIVERS_DISABLE='*' "$hal_run" --list-devices --json
check list_devices_json_none_whole 0 "^ok\$" "" -- sh -c "HAL_DRIVERS_DISABLE='*' \"$hal_run\" --list-devices --json 2>/dev/null |
  python3 -c 'import json, sys; json.load(sys.stdin); print(\"ok\")'"
check dump_devices_json 0 "^ok\$" "" -- sh -c "\"$hal_run\" --dump-devices --driver=test --json |
  python3 -c 'import json, sys
devices = json.load(sys.stdin)[\"drivers\"][0][\"devices\"]
d = devices[1]
assert d[\"uri\"] == \"test://1\" and \"executable_formats\" in d
assert \"max_workgroup_size\" in d and len(d[\"max_workgroup_count\"]) == 3
assert [v[\"uuid\"] for v in devices] == [
    \"7e57ab1e-0000-4000-8000-000000000000\",
    \"7e57ab1e-0000-4000-8000-000000000001\"], devices
assert d[\"compute_capability\"] == [0, 0], d
assert d[\"virtual\"] is False and d[\"driver_version\"] == 0, d
print(\"ok\")'"
# The UUID, lowercase 8-4-4-4-12, in the text dump; absent there and null
# in JSON for devices whose runtime reports none.
check dump_devices_uuid 0 "^    uuid:                7e57ab1e-0000-4000-8000-000000000001\$" "" -- \
  "$hal_run" --dump-devices --driver=test
check dump_devices_no_uuid 0 "^ok\$" "" -- sh -c "out=\$(HAL_TEST_PLUGIN_NO_UUID=1 \"$hal_run\" --dump-devices --driver=test) &&
  echo \"\$out\" | grep -q '^    memory types:' && ! echo \"\$out\" | grep -q uuid && echo ok"
check dump_devices_json_no_uuid 0 "^ok\$" "" -- sh -c "HAL_TEST_PLUGIN_NO_UUID=1 \"$hal_run\" --dump-devices --driver=test --json |
  python3 -c 'import json, sys
devices = json.load(sys.stdin)[\"drivers\"][0][\"devices\"]
assert len(devices) == 2 and all(d[\"uuid\"] is None for d in devices), devices
print(\"ok\")'"
# --device by the UUID the dump printed, as printed and as nvidia-smi -L
# writes one (GPU-, uppercase): that device is created (the test driver's
# pipeline then stops for want of semaphores).
uuid=$("$hal_run" --dump-devices --driver=test | sed -n 's/^    uuid: *//p' | sed -n 2p)
check device_by_uuid 1 "^  device test://$uuid: test-device-1, " "no semaphores" -- \
  "$hal_run" --device="test://$uuid"
upper_uuid=GPU-$(echo "$uuid" | tr 'a-f' 'A-F')
check device_by_nvidia_smi_uuid 1 "^  device test://$upper_uuid: test-device-1, " "no semaphores" -- \
  "$hal_run" --device="test://$upper_uuid"
check device_unknown_uuid 1 "" "NOT_FOUND: .*driver 'test' has no device with UUID 7e57ab1e-0000-4000-8000-0000000000ff; it has 2: 7e57ab1e-" -- \
  "$hal_run" --device=test://7e57ab1e-0000-4000-8000-0000000000FF
check list_drivers_json 0 "^ok\$" "" -- sh -c "\"$hal_run\" --list-drivers --json |
  python3 -c 'import json, sys
d = json.load(sys.stdin)
s = {x[\"name\"]: x[\"status\"] for x in d[\"drivers\"]}
assert s[\"test\"] == \"ok\" and s[\"test_wrong_abi\"] == \"broken\", s
print(\"ok\")'"
check json_needs_listing 2 "" "--json is for" -- "$hal_run" --json --driver=test
check list_and_dump 2 "" "give one of --list-devices, --dump-devices" -- \
  "$hal_run" --list-devices --dump-devices
check device_out_of_range 1 "" "creating device 'test://7'.*OUT_OF_RANGE\|OUT_OF_RANGE.*test://7" -- \
  "$hal_run" --device=test://7
# --ranks: its values and what it combines with are checked before any
# driver loads.
check ranks_zero 2 "" "^hal-run: --ranks=0: expected an integer in \[1, 64\]" -- \
  "$hal_run" --ranks=0
check ranks_too_many 2 "" "^hal-run: --ranks=65: expected an integer in \[1, 64\]" -- \
  "$hal_run" --ranks=65
check ranks_not_a_number 2 "" "^hal-run: --ranks=2x: expected an integer" -- \
  "$hal_run" --ranks=2x
check ranks_signed 2 "" "^hal-run: --ranks=+2: expected an integer" -- \
  "$hal_run" --ranks=+2
check ranks_devices_per_rank_zero 2 "" "^hal-run: --devices-per-rank=0: expected an integer in \[1, 64\]" -- \
  "$hal_run" --ranks=2 --devices-per-rank=0
check ranks_too_many_global 2 "" "^hal-run: --ranks=8 --devices-per-rank=16 make 128 global ranks; at most 64" -- \
  "$hal_run" --ranks=8 --devices-per-rank=16
check ranks_elements_zero 2 "" "^hal-run: --elements=0: expected an integer in \[1, 1073741824\]" -- \
  "$hal_run" --ranks=2 --elements=0
check ranks_options_alone 2 "" "^hal-run: --devices-per-rank and --elements are options of --ranks" -- \
  "$hal_run" --driver=test --elements=5
check ranks_and_device 2 "" "give --driver, not --device" -- \
  "$hal_run" --ranks=2 --device=test://1
check ranks_and_list_devices 2 "" "^hal-run: --ranks runs a job" -- \
  "$hal_run" --ranks=2 --list-devices
check ranks_and_list_drivers 2 "" "--list-drivers takes no other option" -- \
  "$hal_run" --ranks=2 --list-drivers
check ranks_json 2 "" "--json is for" -- "$hal_run" --ranks=2 --json
# A driver without collectives is skipped, saying why; a run of it alone
# ran nothing, which fails.
check ranks_no_collectives 1 "^collectives skipped: driver=test: UNIMPLEMENTED: .*has no collectives" \
  "no driver asked for has collectives" -- "$hal_run" --ranks=1 --driver=test
# A worker (HAL_RUN_RANK set) never launches, and takes its settings
# strictly.
check ranks_worker_driver_all 2 "" "a worker (HAL_RUN_RANK is set) .*give --driver=NAME" -- \
  env HAL_RUN_RANK=0 "$hal_run" --ranks=2
check ranks_worker_rank_count 2 "" "HAL_RUN_RANKS=3 but --ranks=2" -- \
  env HAL_RUN_RANK=0 HAL_RUN_RANKS=3 "$hal_run" --ranks=2 --driver=test
check ranks_worker_rank 2 "" "HAL_RUN_RANK='2': expected an integer in \[0, 1\]" -- \
  env HAL_RUN_RANK=2 HAL_RUN_RANKS=2 "$hal_run" --ranks=2 --driver=test
check ranks_worker_id 2 "" "HAL_RUN_CHANNEL_ID: expected 256 hex digits (the channel id), got 3 characters" -- \
  env HAL_RUN_RANK=0 HAL_RUN_RANKS=2 HAL_RUN_CHANNEL_ID=abc "$hal_run" --ranks=2 --driver=test
check ranks_kill_in_process 1 "" "HAL_RUN_KILL_RANK kills a worker process; --ranks=1 runs in hal-run's own process" -- \
  env HAL_RUN_KILL_RANK=0 "$hal_run" --ranks=1 --driver=test
check ranks_exit_in_process 1 "" "HAL_RUN_EXIT_RANK ends a worker process; --ranks=1 runs in hal-run's own process" -- \
  env HAL_RUN_EXIT_RANK=0 "$hal_run" --ranks=1 --driver=test
zero_id=$(printf '%0256d' 0)
check ranks_worker_exit_rank 2 "" "HAL_RUN_EXIT_RANK='5': expected an integer in \[0, 1\]" -- \
  env HAL_RUN_RANK=0 HAL_RUN_RANKS=2 HAL_RUN_CHANNEL_ID="$zero_id" \
  HAL_RUN_EXIT_RANK=5 "$hal_run" --ranks=2 --driver=test
unset HAL_DRIVER_PATH
# From the build tree, with no environment: the build's drivers folder.
check build_tree 0 "/drivers\$" "" -- "$hal_run" --list-drivers
if [ "$driver_count" -gt 0 ]; then
  # The main job: the pipeline on every driver built, each saying what it
  # runs on (the virtual GPU when the machine has no GPU) and verifying.
  unset HAL_CUDA_LIBRARY HAL_HIP_LIBRARY
  check pipeline_all 0 "^pipeline: $driver_count driver(s) passed, 0 failed" "" -- \
    "$hal_run" --driver=all
  # The timings are the host's, and the summary says so.
  check pipeline_host_time 0 "^pipeline ok: driver=cuda_stream .* total=[0-9.]* ms (host time)\$" "" -- \
    "$hal_run" --driver=cuda_stream
  # --trace: the whole run in one trace, every submission accounted for.
  trace=$(mktemp)
  check trace_all 0 "^pipeline: $driver_count driver(s) passed" \
    "trace written to $trace (0 events dropped, 0 device spans dropped)" -- \
    "$hal_run" --driver=all --trace="$trace"
  check trace_valid 0 "trace_check: .* 0 dropped" "" -- \
    python3 "$(dirname "$0")/../../tools/trace_check.py" "$trace"
  rm -f "$trace" "$trace.tmp"
  # A trace that cannot be written: said at the start, the run untraced.
  check trace_unwritable 0 "^pipeline ok: driver=cuda_stream" \
    "^hal: HAL_TRACE=/nonexistent-dir/t.json cannot be written (No such file or directory): not tracing" -- \
    "$hal_run" --driver=cuda_stream --trace=/nonexistent-dir/t.json
  if [ -f "$(dirname "$hal_run")/../drivers/hal-driver-cuda_graph.so" ]; then
    # One device by URI; the fallback said in one line, in full with -v.
    check pipeline_device 0 "^  device cuda_graph://1: vgpu virtual GPU 1" "" -- \
      "$hal_run" --device=cuda_graph://1
    check dump_devices_runtime 0 "runtime: .*libvgpu-cuda.so (the virtual GPU), driver version [1-9]" "" -- \
      "$hal_run" --dump-devices --driver=cuda_graph
    # The GPU core's UUIDs are the runtime's (the virtual GPU's here, the
    # same through CUDA and HIP); the pipeline runs on the device the
    # dumped UUID names.
    vgpu_dir="$(dirname "$hal_run")/../vgpu"
    gpu_uuid=$(HAL_CUDA_LIBRARY="$vgpu_dir/libvgpu-cuda.so" "$hal_run" --dump-devices --driver=cuda_graph --json |
      python3 -c 'import json, sys
print(json.load(sys.stdin)["drivers"][0]["devices"][1]["uuid"])')
    check gpu_dump_uuid 0 "^ok\$" "" -- sh -c "[ '$gpu_uuid' = 76677075-2d64-6576-0000-000000000001 ] && echo ok"
    check gpu_device_by_uuid 0 "^  device cuda_graph://$gpu_uuid: vgpu virtual GPU 1" "" -- \
      env HAL_CUDA_LIBRARY="$vgpu_dir/libvgpu-cuda.so" "$hal_run" --device="cuda_graph://$gpu_uuid"
    if [ -f "$(dirname "$hal_run")/../drivers/hal-driver-hip_stream.so" ]; then
      check gpu_hip_same_uuid 0 "^    uuid:                $gpu_uuid\$" "" -- \
        env HAL_HIP_LIBRARY="$vgpu_dir/libvgpu-hip.so" "$hal_run" --dump-devices --driver=hip_stream
    fi
    # A runtime without a UUID for its devices (not supported): the
    # driver loads, its devices have none. Any other failure of the query
    # fails the driver, as a failed name query does.
    check gpu_no_uuid 0 "^ok\$" "" -- sh -c "VGPU_FAULTS=cuDeviceGetUuid:always:error=CUDA_ERROR_NOT_SUPPORTED \
      HAL_CUDA_LIBRARY='$vgpu_dir/libvgpu-cuda.so' \"$hal_run\" --dump-devices --driver=cuda_graph --json |
      python3 -c 'import json, sys
devices = json.load(sys.stdin)[\"drivers\"][0][\"devices\"]
assert devices and all(d[\"uuid\"] is None for d in devices), devices
print(\"ok\")'"
    check gpu_uuid_failure 1 "" "cuDeviceGetUuid failed: CUDA_ERROR_INVALID_VALUE (1).*creating driver 'cuda_graph'" -- \
      env VGPU_FAULTS=cuDeviceGetUuid:always:error=CUDA_ERROR_INVALID_VALUE \
      HAL_CUDA_LIBRARY="$vgpu_dir/libvgpu-cuda.so" "$hal_run" --dump-devices --driver=cuda_graph
    if ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 '; then
      echo "skip fallback_one_line: a system libcuda.so.1 is installed"
    else
      check fallback_one_line 0 "not usable: NOT_FOUND: could not load the CUDA runtime (-v: why)" "" -- \
        env HAL_DRIVERS_SELECT=cuda_graph "$hal_run" --device=cuda_graph
      # The whole chain, however long: from the loader's first link to the
      # registry's last, which names the plugin file.
      # The fallback names the virtual GPU's NCCL too (it is the runtime
      # library itself), and the workers inherit both.
      if [ "$have_ccl" = 1 ]; then
        check fallback_ranks 0 "^collectives ok: driver=cuda_graph ranks=2 devices-per-rank=1 elements=1000 " "" -- \
          env -u HAL_NCCL_LIBRARY HAL_DRIVERS_SELECT=cuda_graph "$hal_run" --ranks=2 --driver=cuda_graph --elements=1000
      fi
      check fallback_verbose 0 "not usable: .*loader.c:[0-9]*: could not load the CUDA runtime; tried.*creating driver 'cuda_graph' from [^ ]*/hal-driver-cuda_graph\.so\$" "" -- \
        env HAL_DRIVERS_SELECT=cuda_graph "$hal_run" -v --device=cuda_graph
    fi
  fi
  # Real runtimes with no GPU behind them: a clean "no devices" with the
  # vendor's error name, and a non-zero exit. Skipped (with a line saying
  # so) where the machine lacks the library.
  drivers_dir="$(dirname "$hal_run")/../drivers"
  hip_runtime=$(ldconfig -p 2>/dev/null | grep -o '/[^ ]*libamdhip64\.so\.[0-9]*$' | head -n1)
  if [ -n "$hip_runtime" ] && [ -f "$drivers_dir/hal-driver-hip_stream.so" ]; then
    check real_hip_no_devices 1 "" "found no devices: .*hipErrorNoDevice" -- \
      env HAL_HIP_LIBRARY="$hip_runtime" "$hal_run" --driver=hip_stream --list-devices
  else
    echo "skip real_hip_no_devices: no libamdhip64 runtime or hip_stream driver"
  fi
  cuda_stub=/usr/local/cuda/lib64/stubs/libcuda.so
  if [ -f "$cuda_stub" ] && [ -f "$drivers_dir/hal-driver-cuda_stream.so" ]; then
    check real_cuda_stub 1 "" "cuInit failed: CUDA_ERROR_STUB_LIBRARY" -- \
      env HAL_CUDA_LIBRARY="$cuda_stub" "$hal_run" --driver=cuda_stream --list-devices
    check real_cuda_stub_pipeline 1 "" "CUDA_ERROR_STUB_LIBRARY" -- \
      env HAL_CUDA_LIBRARY="$cuda_stub" "$hal_run" --driver=cuda_graph
  else
    echo "skip real_cuda_stub: no CUDA toolkit stub or cuda_stream driver"
  fi
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
