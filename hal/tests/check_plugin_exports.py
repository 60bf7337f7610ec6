#!/usr/bin/env python3
"""Checks that every plugin given exports exactly one dynamic symbol.

A HAL driver plugin's ABI is its single entry point, hal_plugin_query; any
other exported symbol would be a second, unversioned ABI (and a symbol clash
waiting to happen between plugins). Reads the dynamic symbol table with
`nm -D --defined-only`.
"""
import subprocess
import sys

ENTRY = "hal_plugin_query"


def defined_dynamic_symbols(path):
    out = subprocess.run(["nm", "-D", "--defined-only", path], check=True,
                         capture_output=True, text=True).stdout
    symbols = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 3:
            symbols.append(parts[2].split("@")[0])
    return symbols


def main(paths):
    if not paths:
        print("usage: check_plugin_exports.py PLUGIN.so...", file=sys.stderr)
        return 2
    failures = 0
    for path in paths:
        symbols = defined_dynamic_symbols(path)
        if symbols == [ENTRY]:
            print(f"ok   {path}: exports only {ENTRY}")
        else:
            failures += 1
            print(f"FAIL {path}: exports {symbols}, expected [{ENTRY!r}]")
    print(f"{len(paths) - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
