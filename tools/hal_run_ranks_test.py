#!/usr/bin/env python3
# Copyright 2026 The HAL Authors.
"""Runs hal-run --ranks and checks its summary lines (tools/ranks.h).

usage: hal_run_ranks_test.py --drivers=N [--killed=R | --exited=R | --traced=R]
                              -- HAL_RUN ARGS...

Without --killed: hal-run exits 0 with a "collectives ok:" line for each of
the N drivers and the total "N driver(s) passed, 0 failed, 0 skipped".

With --killed=R (HAL_RUN_KILL_RANK=R is set for the run): hal-run exits 1,
and each of the N drivers' "collectives failed:" lines names rank R as
killed by signal 9 and every other rank as having exited on its own with a
failure: none was killed by hal-run's bound, so the peers of the dead rank
failed instead of hanging.

With --exited=R (HAL_RUN_EXIT_RANK=R is set for the run): the same, rank R
named as having exited with the hook's status 3 (a sanitizer's report or a
crash in its exit, with its collectives in flight, gives another status).

With --traced=R (no --killed or --exited; hal-run runs --driver=all):
--trace=FILE is added in a fresh folder, and each driver that passed must
have left FILE.DRIVER.rank<r> for each of the R ranks, a JSON trace with
events: the drivers run in turn, and none may overwrite another's.

In every mode a sanitizer's report in any rank's output fails the check,
even when the rank's status does not show it (a report cut short by the
process's exit).
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

from sanitizer_reports import sanitizer_problems


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--drivers", type=int, required=True)
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--killed", type=int)
    group.add_argument("--exited", type=int)
    group.add_argument("--traced", type=int)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    env = dict(os.environ)
    if args.killed is not None:
        env["HAL_RUN_KILL_RANK"] = str(args.killed)
    if args.exited is not None:
        env["HAL_RUN_EXIT_RANK"] = str(args.exited)
    ended = args.killed if args.killed is not None else args.exited
    folder = tempfile.TemporaryDirectory() if args.traced else None
    trace = os.path.join(folder.name, "t.json") if folder else None
    if trace:
        command = command + ["--trace=" + trace]
    run = subprocess.run(command, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, check=False)
    sys.stdout.write(run.stdout)
    sys.stderr.write(run.stderr)
    lines = run.stdout.splitlines()
    problems = []
    expected_exit = 0 if ended is None else 1
    if run.returncode != expected_exit:
        problems.append(f"exit status {run.returncode}, expected {expected_exit}")
    ok = [line for line in lines if line.startswith("collectives ok: ")]
    failed = [line for line in lines if line.startswith("collectives failed: ")]
    if ended is None:
        if len(ok) != args.drivers or failed:
            problems.append(f"{len(ok)} drivers passed and {len(failed)} "
                            f"failed, expected {args.drivers} passed")
        total = (f"collectives: {args.drivers} driver(s) passed, 0 failed, "
                 "0 skipped")
    else:
        if len(failed) != args.drivers or ok:
            problems.append(f"{len(failed)} drivers failed and {len(ok)} "
                            f"passed, expected {args.drivers} failed")
        # The signal's name follows "killed by signal 9"; the hook's status
        # ends its part.
        if args.killed is not None:
            what = "killed by signal 9"
            pattern = re.compile(rf"rank {ended} killed by signal 9 \(.*\)")
        else:
            what = "exited with status 3"
            pattern = re.compile(rf"rank {ended} exited with status 3")
        for line in failed:
            how = line.split(": ", 1)[1].split(": ", 1)[-1]
            parts = how.split("; ")
            for part in parts:
                if pattern.fullmatch(part):
                    continue
                if not re.fullmatch(r"rank \d+ exited with status [1-9]\d*",
                                    part):
                    problems.append(f"'{part}' in: {line}")
            if not any(pattern.fullmatch(part) for part in parts):
                problems.append(f"rank {ended} is not named {what} in: "
                                f"{line}")
        total = (f"collectives: 0 driver(s) passed, {args.drivers} failed, "
                 "0 skipped")
    if total not in lines:
        problems.append(f"no line '{total}'")
    if trace:
        for line in ok:
            driver = re.search(r"driver=(\S+)", line).group(1)
            for rank in range(args.traced):
                path = f"{trace}.{driver}.rank{rank}"
                try:
                    with open(path) as f:
                        events = json.load(f).get("traceEvents", [])
                except (OSError, ValueError) as error:
                    problems.append(f"{path}: {error}")
                    continue
                if not events:
                    problems.append(f"{path} holds no event")
        folder.cleanup()
    problems += sanitizer_problems(run.stdout + run.stderr)
    for problem in problems:
        print(f"hal_run_ranks_test: FAIL: {problem}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
