#!/usr/bin/env python3
"""The virtual GPU's cuGetProcAddress table against the CUDA headers.

libcuda answers cuGetProcAddress(name, version) with the newest entry point
of that name whose version is at most the one asked for; cudaTypedefs.h
declares each of them as PFN_<name>_v<version>. A row of the virtual GPU's
table (vgpu/cuda/cuda_procaddr.c) must name a version the headers know for
that name, and for each name the newest row must be the newest version the
headers know up to their CUDA_VERSION: otherwise the virtual GPU hands a
program another ABI than libcuda would, and hides the bug (the name
cuGraphInstantiate keeps its five-argument signature at CUDA 13;
cuCtxGetDevice and cuCtxSynchronize take a context from 13.0 on).

Usage: procaddr_table_test.py CUDA_PROCADDR_C CUDA_INCLUDE_DIR
"""

import os
import re
import sys


def main() -> int:
    table_path, include_dir = sys.argv[1], sys.argv[2]
    with open(table_path) as f:
        rows = re.findall(r'P\("(\w+)",\s*(\d+),', f.read())
    with open(os.path.join(include_dir, "cudaTypedefs.h")) as f:
        typedefs = f.read()
    with open(os.path.join(include_dir, "cuda.h")) as f:
        match = re.search(r"#define CUDA_VERSION (\d+)", f.read())
    header_version = int(match.group(1))
    known = {}
    for name, version in re.findall(r"\bPFN_(\w+?)_v(\d+)\b", typedefs):
        if int(version) <= header_version:
            known.setdefault(name, set()).add(int(version))

    problems = []
    newest = {}
    for name, version in rows:
        version = int(version)
        newest[name] = max(newest.get(name, 0), version)
        if version not in known.get(name, set()):
            problems.append(
                "%s at %d: cudaTypedefs.h has no PFN_%s_v%d (it knows %s)"
                % (name, version, name, version,
                   sorted(known.get(name, set())) or "none"))
    for name, version in sorted(newest.items()):
        versions = known.get(name)
        if versions and max(versions) != version:
            problems.append(
                "%s: the table's newest row is %d, libcuda's is %d at CUDA %d"
                % (name, version, max(versions), header_version))
    for problem in problems:
        print("procaddr: " + problem)
    print("procaddr: %d rows, %d names, CUDA_VERSION %d: %d problem(s)"
          % (len(rows), len(newest), header_version, len(problems)))
    return 1 if problems or not rows else 0


if __name__ == "__main__":
    sys.exit(main())
