#!/usr/bin/env python3
# Copyright 2026 The HAL Authors.
#
# Suite mlir_async: lowers one .mlir program with mlir-opt 14, runs it with
# mlir-cpu-runner on MLIR's own runtime (the reference output), then
# HAL_MLIR_RUNS times (default --runs) on libhal-async-runtime; every run
# must exit 0 within the timeout, print exactly the reference output, and
# print nothing on stderr that our library or a sanitizer reports.
#
# Sanitizer builds: our library is instrumented, mlir-cpu-runner is not, so
# the sanitizer runtime is preloaded (--preload) for our runs only; LSan is
# off there (LLVM's own allocations at exit are not ours) and TSan ignores
# the uninstrumented modules' interceptors (LLVM's JIT threads race in
# ways that are not ours to fix).

import argparse
import concurrent.futures
import os
import subprocess
import sys

# MLIR's async lowering pipeline plus the usual lowering to LLVM. SCF is lowered
# after the async passes: LLVM 14 cannot outline regions with several
# blocks, and cannot convert async values carried by block arguments.
PIPELINE = [
    "-async-to-async-runtime",
    "-async-runtime-ref-counting",
    "-async-runtime-ref-counting-opt",
    "-convert-scf-to-std",
    "-convert-async-to-llvm",
    "-convert-vector-to-llvm",
    "-convert-memref-to-llvm",
    "-arith-expand",
    "-convert-arith-to-llvm",
    "-convert-std-to-llvm",
    "-reconcile-unrealized-casts",
]

REPORT_MARKERS = ("hal-async:", "Sanitizer", "runtime error:", "hal/sync:")


def add_toolchain_arguments(parser):
    """The tools, libraries and paths shared with the fan-out benchmark."""
    for name in ("--mlir-opt", "--runner", "--c-runner-utils", "--reference",
                 "--ours", "--program", "--workdir"):
        parser.add_argument(name, required=True)


def run(cmd, env, timeout):
    try:
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True,
                              timeout=timeout)
        return proc.returncode, proc.stdout, proc.stderr
    except subprocess.TimeoutExpired as e:
        # The partial output arrives as bytes even with text=True.
        def text(data):
            if isinstance(data, bytes):
                return data.decode("utf-8", "replace")
            return data or ""
        return "timeout", text(e.stdout), text(e.stderr)


def main():
    parser = argparse.ArgumentParser()
    add_toolchain_arguments(parser)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=60)
    parser.add_argument("--preload", default="")
    parser.add_argument("--sanitizer-options", default="")
    args = parser.parse_args()

    runs = int(os.environ.get("HAL_MLIR_RUNS", args.runs))
    name = os.path.splitext(os.path.basename(args.program))[0]
    os.makedirs(args.workdir, exist_ok=True)
    lowered = os.path.join(args.workdir, name + ".llvm.mlir")
    code, out, err = run([args.mlir_opt, args.program] + PIPELINE +
                         ["-o", lowered], dict(os.environ), args.timeout)
    if code != 0:
        print(f"mlir-opt failed ({code}):\n{err}")
        return 1

    def runner_cmd(runtime):
        return [args.runner, lowered, "-e", "main",
                "-entry-point-result=void", "-O0",
                "-shared-libs=" + args.c_runner_utils,
                "-shared-libs=" + runtime]

    base_env = dict(os.environ)
    base_env.pop("LD_PRELOAD", None)
    code, expected, err = run(runner_cmd(args.reference), base_env,
                              args.timeout)
    if code != 0:
        print(f"reference run on MLIR's runtime failed ({code}):\n{err}")
        return 1
    print(f"{name}: reference output ({len(expected.splitlines())} lines):")
    print(expected, end="")

    ours_env = dict(base_env)
    if args.preload:
        ours_env["LD_PRELOAD"] = args.preload
    for option in filter(None, args.sanitizer_options.split(";")):
        key, _, value = option.partition("=")
        ours_env[key] = value

    def one(index):
        code, out, err = run(runner_cmd(args.ours), ours_env, args.timeout)
        problems = []
        if code != 0:
            problems.append(f"exit {code}")
        if out != expected:
            problems.append(f"output differs:\n{out}")
        if any(marker in err for marker in REPORT_MARKERS):
            problems.append("reports on stderr")
        return index, problems, err

    failures = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for index, problems, err in pool.map(one, range(runs)):
            if problems:
                failures += 1
                if failures <= 3:
                    print(f"run {index} on libhal-async-runtime: " +
                          "; ".join(problems))
                    print(err[-4000:])
    print(f"{name}: {runs - failures}/{runs} runs on libhal-async-runtime "
          "matched the reference")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
