#!/usr/bin/env python3
# Copyright 2026 The HAL Authors.
#
# Lowers an MLIR program to the LLVM dialect with the mlir_async suite's
# pipeline (tests/run_mlir_program.py), after the passes given with --pass
# (the build's parallel-for benchmark: -async-parallel-for).
#
#   lower_mlir.py --mlir-opt BIN --pass=-async-parallel-for IN OUT

import argparse
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))
from run_mlir_program import PIPELINE  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mlir-opt", required=True)
    parser.add_argument("--pass", dest="passes", action="append", default=[])
    parser.add_argument("input")
    parser.add_argument("output")
    args = parser.parse_args()
    return subprocess.run([args.mlir_opt, args.input] + args.passes +
                          PIPELINE + ["-o", args.output]).returncode


if __name__ == "__main__":
    sys.exit(main())
