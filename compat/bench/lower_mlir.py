#!/usr/bin/env python3
# Copyright 2026 The HAL Authors.
#
# Lowers an MLIR program to the LLVM dialect with the mlir_async suite's
# pipeline (tests/run_mlir_program.py), after the passes given with --pass,
# and on to a position-independent object file: mlir-translate to LLVM IR,
# opt -O3 (which lowers the coroutines, as mlir-cpu-runner's -O3 does
# before it compiles), llc -O3. The build's parallel-for kernel:
#
#   lower_mlir.py --mlir-opt BIN --mlir-translate BIN --opt BIN --llc BIN \
#       --pass=-async-parallel-for=num-workers=-1 IN OUT.o

import argparse
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))
from run_mlir_program import PIPELINE  # noqa: E402


def run(command):
    result = subprocess.run(command)
    if result.returncode != 0:
        sys.exit("lower_mlir.py: %s exited %d" %
                 (" ".join(command), result.returncode))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mlir-opt", required=True)
    parser.add_argument("--mlir-translate", required=True)
    parser.add_argument("--opt", required=True)
    parser.add_argument("--llc", required=True)
    parser.add_argument("--pass", dest="passes", action="append", default=[])
    parser.add_argument("input")
    parser.add_argument("output")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        lowered = os.path.join(work, "lowered.mlir")
        ir = os.path.join(work, "program.ll")
        optimized = os.path.join(work, "program.bc")
        run([args.mlir_opt, args.input] + args.passes + PIPELINE +
            ["-o", lowered])
        run([args.mlir_translate, "--mlir-to-llvmir", lowered, "-o", ir])
        run([args.opt, "-O3", ir, "-o", optimized])
        run([args.llc, "-O3", "-filetype=obj", "-relocation-model=pic",
             optimized, "-o", args.output])
    return 0


if __name__ == "__main__":
    sys.exit(main())
