#!/usr/bin/env python3
# Copyright 2026 The HAL Authors.
"""A program that exits with work in flight and its device unreleased ends
cleanly, on every driver, whenever it exits (exit_probe.c).

  exit_in_flight_test.py PROBE DRIVER...

Each driver runs the probe at a spread of delays, so that the exit finds
libhal's queue and release threads inside the vendor runtime, between
calls, or done. Every run must exit 0 with no sanitizer report. The
virtual GPU's strict mode would report the objects never released as
leaks, which is this program's design: strict mode and leak checking are
off here.
"""

import os
import subprocess
import sys

REPORTS = ("ERROR: AddressSanitizer", "WARNING: ThreadSanitizer",
           "runtime error:", "LeakSanitizer")


def main():
    probe, drivers = sys.argv[1], sys.argv[2:]
    env = dict(os.environ, VGPU_STRICT="0")
    env["ASAN_OPTIONS"] = env.get("ASAN_OPTIONS", "") + ":detect_leaks=0"
    env.pop("VGPU_FAIL_EXIT_CODE", None)
    failures = 0
    runs = 0
    for driver in drivers:
        for step in range(8):
            delay_us = step * 900
            result = subprocess.run([probe, driver, "300", str(delay_us)],
                                    env=env, capture_output=True, text=True,
                                    timeout=120)
            runs += 1
            said = result.stdout + result.stderr
            if result.returncode != 0 or any(r in said for r in REPORTS):
                failures += 1
                print("FAILED: %s, exit after %d us: exit code %d\n%s" %
                      (driver, delay_us, result.returncode, said[-3000:]))
    print("%d of %d runs failed" % (failures, runs))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
