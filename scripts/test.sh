#!/bin/sh
# Builds and tests the three configurations every change must pass:
#   plain  (assertions on, -Werror)
#   asan   (AddressSanitizer + UndefinedBehaviorSanitizer + LeakSanitizer)
#   tsan   (ThreadSanitizer)
# plus the clang-format check, and a bounded run of the API fuzzer
#   fuzz   (libFuzzer + ASan + UBSan, clang only; one test: docs/fuzzing.md)
# Build trees: ./build-test-{plain,asan,tsan,fuzz}.
#
#   ./scripts/test.sh                 everything
#   ./scripts/test.sh --suite sync    extra arguments go to `meson test`
#                                     (the fuzz run is then skipped)
#   HAL_TEST_BUILDS="plain" ./scripts/test.sh   a subset of the builds
#   HAL_FUZZ_SECONDS=60 HAL_FUZZ_SEED=N         the fuzz run's length, seed
#
# Ends with one line "total: N passed, N failed, N skipped" over all builds.
set -u
cd "$(dirname "$0")/.." || exit 1
builds=${HAL_TEST_BUILDS:-"plain asan tsan fuzz"}
jobs=${HAL_TEST_JOBS:-$(nproc 2>/dev/null || echo 2)}
status=0
summary=""
extra_args=$#

# The fuzz build: only the target and what it loads (libhal, the plugins,
# the virtual GPU), with coverage in all of them. Prints one
# "passed/failed/skipped" triple for the summary.
run_fuzz() {
  dir="build-test-fuzz"
  if [ "$extra_args" -ne 0 ]; then
    echo "=== fuzz: skipped: extra arguments select meson tests" >&2
    echo "0 0 1"
    return
  fi
  if ! command -v clang >/dev/null 2>&1; then
    echo "=== fuzz: skipped: clang not found (libFuzzer needs clang)" >&2
    echo "0 0 1"
    return
  fi
  mkdir -p "$dir"
  if ! printf '%s\n' '#include <stddef.h>' '#include <stdint.h>' \
      'int LLVMFuzzerTestOneInput(const uint8_t* d, size_t n);' \
      'int LLVMFuzzerTestOneInput(const uint8_t* d, size_t n) { return 0; }' |
      clang -x c -fsanitize=fuzzer - -o "$dir/fuzzer-probe" >/dev/null 2>&1; then
    echo "=== fuzz: skipped: clang cannot link -fsanitize=fuzzer" \
      "(libclang_rt.fuzzer is missing)" >&2
    echo "0 0 1"
    return
  fi
  echo "=== fuzz: configure and build ($dir)" >&2
  started=$(date +%s)
  # -Wno-format-zero-length: clang (not gcc) flags hal/status.c's
  # `format ? format : ""` under -Wformat=2, and --werror stops the build.
  reconfigure=""
  [ -f "$dir/meson-private/coredata.dat" ] && reconfigure="--reconfigure"
  # shellcheck disable=SC2086
  if ! CC=clang meson setup $reconfigure "$dir" --werror -Dfuzz=enabled \
      -Dtests=false -Db_sanitize=address,undefined -Db_lundef=false \
      "-Dc_args=-fsanitize=fuzzer-no-link -Wno-format-zero-length" \
      -Dc_link_args=-fsanitize=fuzzer-no-link >"$dir.setup.log" 2>&1; then
    cat "$dir.setup.log" >&2
    echo "FAILED: configure fuzz" >&2
    echo "0 1 0"
    return
  fi
  if ! meson compile -C "$dir" -j "$jobs" hal-api-fuzz-all \
      >"$dir.build.log" 2>&1; then
    grep -E -B2 -A10 "error|FAILED" "$dir.build.log" | head -80 >&2
    echo "FAILED: build fuzz" >&2
    echo "0 1 0"
    return
  fi
  built=$(date +%s)
  seconds=${HAL_FUZZ_SECONDS:-60}
  seed=${HAL_FUZZ_SEED:-$(date +%s)}
  echo "=== fuzz: hal-api-fuzz -seed=$seed -max_total_time=$seconds" \
    "over fuzz/corpus (HAL_FUZZ_SEED=$seed repeats it)" >&2
  rm -rf "$dir/corpus" "$dir/artifacts"
  mkdir -p "$dir/corpus" "$dir/artifacts"
  if timeout $((seconds + 120)) "$dir/fuzz/hal-api-fuzz" -seed="$seed" \
      -max_total_time="$seconds" -timeout=30 -print_final_stats=1 \
      -artifact_prefix="$dir/artifacts/" "$dir/corpus" fuzz/corpus \
      >"$dir.run.log" 2>&1; then
    grep -E "^#[0-9]+.*DONE" "$dir.run.log" >&2
    echo "=== fuzz: passed (build $((built - started)) s," \
      "run $(($(date +%s) - built)) s)" >&2
    echo "1 0 0"
  else
    grep -v '^"' "$dir.run.log" | tail -60 >&2
    echo "FAILED: fuzz (log $dir.run.log; inputs in $dir/artifacts/;" \
      "reproduce: $dir/fuzz/hal-api-fuzz FILE, docs/fuzzing.md)" >&2
    echo "0 1 0"
  fi
}

for build in $builds; do
  if [ "$build" = fuzz ]; then
    counts=$(run_fuzz)  # messages on stderr, the counts on stdout
    [ "$counts" = "0 1 0" ] && status=1
    summary="$summary $counts"
    echo "=== fuzz: $(echo "$counts" | awk '{print $1" passed, "$2" failed, "$3" skipped"}')"
    continue
  fi
  dir="build-test-$build"
  case "$build" in
    plain) options="" ;;
    asan) options="-Db_sanitize=address,undefined -Db_lundef=false" ;;
    tsan) options="-Db_sanitize=thread -Db_lundef=false" ;;
    *) echo "test.sh: unknown build '$build'"; exit 2 ;;
  esac
  echo "=== $build: configure and build ($dir)"
  # Only a tree meson has set up is reconfigured: a folder left by a setup
  # that was interrupted holds no state, and --reconfigure would refuse it
  # on every later run.
  if [ -f "$dir/meson-private/coredata.dat" ]; then
    # shellcheck disable=SC2086
    meson setup --reconfigure "$dir" --werror $options >"$dir.setup.log" 2>&1
  else
    # shellcheck disable=SC2086
    meson setup "$dir" --werror $options >"$dir.setup.log" 2>&1
  fi || { cat "$dir.setup.log"; echo "FAILED: configure $build"; status=1; continue; }
  if ! meson compile -C "$dir" -j "$jobs" >"$dir.build.log" 2>&1; then
    grep -E -B2 -A10 "error|FAILED" "$dir.build.log" | head -80
    echo "FAILED: build $build"
    status=1
    continue
  fi
  if [ "$build" = plain ] && [ $# -eq 0 ]; then
    echo "=== clang-format check"
    if ! ninja -C "$dir" clang-format-check >"$dir.format.log" 2>&1; then
      tail -40 "$dir.format.log"
      echo "FAILED: clang-format (run: ninja -C $dir clang-format)"
      status=1
    fi
  fi
  echo "=== $build: test"
  # Sanitizers slow everything down: scale the per-test timeouts.
  multiplier=1
  [ "$build" = plain ] || multiplier=3
  meson test -C "$dir" --no-rebuild --print-errorlogs \
    --num-processes "$jobs" --timeout-multiplier "$multiplier" "$@" ||
    status=1
  counts=$(python3 - "$dir/meson-logs/testlog.json" <<'PY'
import json, sys
ok = fail = skip = 0
try:
    for line in open(sys.argv[1]):
        r = json.loads(line)["result"]
        if r in ("OK", "EXPECTEDFAIL"): ok += 1
        elif r == "SKIP": skip += 1
        else: fail += 1
except FileNotFoundError:
    pass
print(ok, fail, skip)
PY
)
  summary="$summary $counts"
  echo "=== $build: $(echo "$counts" | awk '{print $1" passed, "$2" failed, "$3" skipped"}')"
done

echo "$summary" | awk '{for (i = 1; i <= NF; i += 3) {p += $i; f += $(i+1); s += $(i+2)}}
  END {printf "total: %d passed, %d failed, %d skipped\n", p, f, s}'
exit $status
