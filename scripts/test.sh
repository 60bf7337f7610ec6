#!/bin/sh
# Builds and tests the three configurations every change must pass:
#   plain  (assertions on, -Werror)
#   asan   (AddressSanitizer + UndefinedBehaviorSanitizer + LeakSanitizer)
#   tsan   (ThreadSanitizer)
# plus the clang-format check. Build trees: ./build-test-{plain,asan,tsan}.
#
#   ./scripts/test.sh                 everything
#   ./scripts/test.sh --suite sync    extra arguments go to `meson test`
#   HAL_TEST_BUILDS="plain" ./scripts/test.sh   a subset of the builds
#
# Ends with one line "total: N passed, N failed, N skipped" over all builds.
set -u
cd "$(dirname "$0")/.."
builds=${HAL_TEST_BUILDS:-"plain asan tsan"}
jobs=${HAL_TEST_JOBS:-$(nproc 2>/dev/null || echo 2)}
status=0
summary=""

for build in $builds; do
  dir="build-test-$build"
  case "$build" in
    plain) options="" ;;
    asan) options="-Db_sanitize=address,undefined -Db_lundef=false" ;;
    tsan) options="-Db_sanitize=thread -Db_lundef=false" ;;
    *) echo "test.sh: unknown build '$build'"; exit 2 ;;
  esac
  echo "=== $build: configure and build ($dir)"
  if [ -d "$dir" ]; then
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
