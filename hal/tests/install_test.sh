#!/bin/sh
# A staged install (meson install --destdir) is complete and relocatable:
# the staged hal-run finds libhal through its rpath and the plugins in the
# install's plugin directory with no environment variable set.
# usage: install_test.sh BUILD_ROOT TEST_PLUGIN.so
set -eu
build=$1
plugin=$2
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
echo "1 passed, 0 failed"
