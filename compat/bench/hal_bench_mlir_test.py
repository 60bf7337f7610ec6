#!/usr/bin/env python3
# Copyright 2026 The HAL Authors.
#
# The MLIR figure of hal-bench runs: both parallel-for modules load, each
# kernel binds its own runtime and computes the sum hal-bench checks, and
# the figure gets a ratio. A short run (two repetitions of 10 ms per case);
# the environment is the benchmark's (meson.build).
#
#   hal_bench_mlir_test.py HAL_BENCH JSON_OUT

import json
import math
import subprocess
import sys


def main():
    hal_bench, json_out = sys.argv[1], sys.argv[2]
    result = subprocess.run(
        [hal_bench, "--benchmark_filter=MlirParallelFor", "--repetitions=2",
         "--benchmark_min_time=0.01", "--json=" + json_out],
        capture_output=True, text=True, timeout=240)
    if result.returncode != 0:
        sys.exit("hal-bench exited %d:\n%s%s" %
                 (result.returncode, result.stdout, result.stderr))
    if "MLIR parallel-for figure is skipped" in result.stderr:
        sys.exit("the MLIR figure was skipped:\n" + result.stderr)
    with open(json_out) as f:
        report = json.load(f)
    ratio = report["ratios"].get("mlir_parallel_for_vs_mlir")
    if not isinstance(ratio, (int, float)) or not math.isfinite(ratio) or \
            ratio <= 0:
        sys.exit("mlir_parallel_for_vs_mlir is %r, expected a ratio" % ratio)
    for case in ("BM_MlirParallelFor_Hal", "BM_MlirParallelFor_Mlir"):
        figure = report["figures"].get(case)
        if not figure or len(figure.get("samples_ns", [])) != 2:
            sys.exit("%s: expected two repetitions, got %r" % (case, figure))
    print("mlir_parallel_for_vs_mlir = %.3f (two short repetitions)" % ratio)
    return 0


if __name__ == "__main__":
    sys.exit(main())
