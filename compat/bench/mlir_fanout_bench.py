#!/usr/bin/env python3
# Copyright 2026 The HAL Authors.
#
# The fan-out benchmark (a program, not a test): the same MLIR-compiled fan-out
# (fanout_bench.mlir: 10,000 async.execute regions awaited through a group,
# 20 repetitions per process) run by mlir-cpu-runner on MLIR's runtime and
# on libhal-async-runtime, alternating processes, in one run. Prints the
# median time per fan-out on each and the ratio (ours must be faster).

import argparse
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))
from run_mlir_program import PIPELINE, add_toolchain_arguments  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    add_toolchain_arguments(parser)
    parser.add_argument("--processes", type=int, default=5)
    args = parser.parse_args()

    os.makedirs(args.workdir, exist_ok=True)
    lowered = os.path.join(args.workdir, "fanout_bench.llvm.mlir")
    subprocess.run([args.mlir_opt, args.program] + PIPELINE +
                   ["-o", lowered], check=True)
    runtimes = {"mlir": args.reference, "hal": args.ours}
    samples = {name: [] for name in runtimes}
    for _ in range(args.processes):
        for name, library in runtimes.items():
            out = subprocess.run(
                [args.runner, lowered, "-e", "main",
                 "-entry-point-result=void", "-O0",
                 "-shared-libs=" + args.c_runner_utils,
                 "-shared-libs=" + library],
                check=True, capture_output=True, text=True).stdout
            times = [float(line) for line in out.split()]
            # The first repetition of a process warms pools and threads.
            samples[name] += times[1:]
    mlir = statistics.median(samples["mlir"]) * 1e3
    hal = statistics.median(samples["hal"]) * 1e3
    print("fan-out of 10,000 async.execute awaited through a group "
          f"({len(samples['hal'])} samples each, median)")
    print(f"  MLIR 14 runtime (libmlir_async_runtime.so.14): {mlir:8.2f} ms")
    print(f"  libhal-async-runtime:                         {hal:8.2f} ms")
    print(f"  MLIR / ours: {mlir / hal:.2f}x "
          f"({'ours faster' if hal < mlir else 'ours SLOWER'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
