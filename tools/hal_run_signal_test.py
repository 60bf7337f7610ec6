#!/usr/bin/env python3
# Copyright 2026 The HAL Authors.
"""Sends a termination signal to a hal-run --ranks launcher alone.

usage: hal_run_signal_test.py --signal=NAME -- HAL_RUN ARGS...

The launcher runs in a session of its own; once it has started its
workers, SIGNAL (TERM, INT or HUP) goes to the launcher only, as `kill PID`,
a service manager or a batch scheduler sends it. The launcher must pass it
on to its workers, say so on stderr, reap them and end by the signal; no
process of its session may outlive it. A sanitizer's report in any output
fails the check.
"""

import argparse
import os
import signal
import subprocess
import sys
import time

from sanitizer_reports import sanitizer_problems


def children(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return f.read().split()
    except OSError:
        return []


def session_alive(pgid):
    try:
        os.killpg(pgid, 0)
        return True
    except ProcessLookupError:
        return False


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--signal", required=True, choices=["TERM", "INT", "HUP"])
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    number = getattr(signal, "SIG" + args.signal)

    def default_signals():
        # A signal this test runs with ignored (nohup's SIGHUP, a shell's
        # SIGINT for a background job) would stay ignored in the launcher,
        # which keeps ignoring what its own parent ignored.
        for stop in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(stop, signal.SIG_DFL)

    launcher = subprocess.Popen(command, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True,
                                start_new_session=True,
                                preexec_fn=default_signals)
    problems = []
    give_up = time.monotonic() + 60
    while len(children(launcher.pid)) == 0 and launcher.poll() is None:
        if time.monotonic() > give_up:
            problems.append("the launcher started no worker within 60 s")
            break
        time.sleep(0.05)
    workers = children(launcher.pid)
    if launcher.poll() is not None:
        problems.append(f"the launcher ended before the signal "
                        f"(status {launcher.returncode})")
    else:
        os.kill(launcher.pid, number)
    try:
        output, _ = launcher.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        problems.append("the launcher did not end within 60 s of the signal")
        os.killpg(launcher.pid, signal.SIGKILL)
        output, _ = launcher.communicate()
    sys.stdout.write(output)
    if not problems:
        if launcher.returncode != -number:
            problems.append(f"the launcher ended with {launcher.returncode}, "
                            f"expected {-number} (by the signal)")
        if "passing it to the" not in output:
            problems.append("no word of the signal passed on")
        # Its workers are reaped before it ends: nothing of its session is
        # left (a moment for the kernel to finish an exit).
        deadline = time.monotonic() + 2
        while session_alive(launcher.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        if session_alive(launcher.pid):
            problems.append(f"processes of the launcher's session outlive "
                            f"it (its workers were {' '.join(workers)})")
    if session_alive(launcher.pid):
        os.killpg(launcher.pid, signal.SIGKILL)
    problems += sanitizer_problems(output)
    for problem in problems:
        print(f"hal_run_signal_test: FAIL: {problem}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
