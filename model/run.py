#!/usr/bin/env python3
# Copyright 2026 The HAL Authors.
"""Runs one check of the Promela model of hal/sync/ with Spin.

One check is a (model, scenario, defines, bug switch, mode) combination:
spin generates the verifier (pan.c) in a scratch directory, the C compiler
builds it, and pan explores the state space exhaustively within a time and
memory bound. Prints one summary line and exits 0 when the outcome is the
expected one, 1 otherwise, 77 (skipped) when spin is not installed.

  model/run.py semaphore WAIT -D WAITERS=1
  model/run.py queue CALLBACK --bug BUG_INLINE_SHUTDOWN_IN_CALLBACK --expect counterexample
  model/run.py queue CHAIN --mode progress        # no infinite execution
  model/run.py --full                             # every full-depth check

Modes:
  safety    assertions and invalid end states (deadlocks); the Observer
            process checks the quiescent states (lost wake-ups, S2, Q4)
  progress  non-progress cycles (-DNP, pan -l): the model has no progress
            labels, so "none" means every execution is finite, which makes
            the quiescent-state checks of the safety mode cover liveness

Expectations:
  pass            exhaustive search, no error (a truncated search fails)
  counterexample  Spin must report an error (a bug switch re-introducing a
                  historical bug); "no error found" is a test failure
"""

import argparse
import itertools
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = ("semaphore", "queue")


def parse_pan(text):
    """The numbers and verdicts a pan run printed."""
    out = {"errors": None, "states": None, "depth": None, "elapsed": None}
    m = re.search(r"errors: (\d+)", text)
    if m:
        out["errors"] = int(m.group(1))
    m = re.search(r"^\s*([\d.e+]+) states, stored", text, re.M)
    if m:
        out["states"] = int(float(m.group(1)))
    m = re.search(r"depth reached (\d+)", text)
    if m:
        out["depth"] = int(m.group(1))
    m = re.search(r"pan: elapsed time ([\d.e+-]+)", text)
    if m:
        out["elapsed"] = float(m.group(1))
    out["violation"] = None
    m = re.search(r"^pan:\d+: (.*)$", text, re.M)
    if m:
        out["violation"] = m.group(1).strip()
    out["truncated"] = None
    if "reached -DMEMLIM bound" in text:
        out["truncated"] = "memory bound (-DMEMLIM) reached"
    elif "max search depth too small" in text:
        out["truncated"] = "search depth bound (-m) reached"
    return out


def describe(args):
    parts = [args.model, args.scenario.lower()]
    extra = [d for d in args.define]
    if args.bug:
        extra.append(args.bug)
    if args.noreduce:
        extra.append("no partial order reduction")
    if extra:
        parts.append("(" + ", ".join(extra) + ")")
    parts.append(args.mode)
    return " ".join(parts)


def replay(workdir, model_path, spin_defines, limit):
    """The counterexample as the model narrates it (its TRACE lines), each
    line led by the process that took the step."""
    cmd = ["spin", "-t", "-T"] + spin_defines + [model_path]
    try:
        text = subprocess.run(cmd, cwd=workdir, capture_output=True,
                              text=True, timeout=120).stdout
    except subprocess.TimeoutExpired:
        return ["  (replay timed out)"]
    names = {}
    for m in re.finditer(r"proc\s+(\d+) \((\w+):", text):
        names[m.group(1)] = m.group(2)
    lines = []
    for line in text.splitlines():
        m = re.match(r"\s*@(\d+) (.*)$", line)
        if m:
            lines.append("  %s(%s): %s" % (names.get(m.group(1), "proc"),
                                           m.group(1), m.group(2)))
        elif line.startswith("spin: text of failed assertion"):
            lines.append("  " + line[len("spin: "):])
        elif "invalid end state" in line:
            lines.append("  " + line.strip())
    if len(lines) > limit:
        lines = ["  ... %d earlier steps" % (len(lines) - limit)] + lines[-limit:]
    return [LEGEND] + lines


LEGEND = ("  (timepoint states 0 PENDING 1 REACHED 2 FAILED 3 CANCELLED; "
          "statuses 0 OK 1 ABORTED 2 CANCELLED 3 DEADLINE_EXCEEDED "
          "4 device error 5 DEVICE_LOST; wait resolutions 0 reached 1 failed "
          "2 device event 3 parked)")


def run_check(args):
    name = describe(args)
    if shutil.which("spin") is None:
        print("SKIP: spin not installed (bootstrap installs it): " + name)
        return 77
    model_path = args.model + ".pml"  # copied into the scratch directory
    spin_defines = ["-DSCENARIO_" + args.scenario]
    spin_defines += ["-D" + d for d in args.define]
    if args.bug:
        spin_defines.append("-D" + args.bug)
    cc = args.cc.split()
    cc_flags = [args.opt, "-DCOLLAPSE", "-DMEMLIM=%d" % args.memlim,
                "-w", "-o", "pan", "pan.c"]
    cc_flags.insert(0, "-DNP" if args.mode == "progress" else "-DSAFETY")
    if args.noreduce:
        cc_flags.insert(0, "-DNOREDUCE")
    pan_flags = ["-m%d" % args.depth, "-w%d" % args.hash]
    if args.mode == "progress":
        pan_flags.append("-l")
    workdir = tempfile.mkdtemp(prefix="hal-model-")
    start = time.monotonic()
    try:
        # The models and the trail a counterexample leaves stay in here.
        for entry in os.listdir(HERE):
            if entry.endswith(".pml"):
                shutil.copy(os.path.join(HERE, entry), workdir)
        # -o3: no statement merging (it hid quiescent states from the
        # Observer's timeout under partial order reduction).
        gen = subprocess.run(["spin", "-o3", "-a"] + spin_defines + [model_path],
                             cwd=workdir, capture_output=True, text=True)
        if gen.returncode != 0 or not os.path.exists(os.path.join(workdir, "pan.c")):
            print("FAIL %s: spin could not generate the verifier:\n%s%s"
                  % (name, gen.stdout, gen.stderr))
            return 1
        build = subprocess.run(cc + cc_flags, cwd=workdir, capture_output=True,
                               text=True)
        if build.returncode != 0:
            print("FAIL %s: the verifier did not compile:\n%s"
                  % (name, build.stderr[-4000:]))
            return 1
        compiled = time.monotonic()
        remaining = args.timeout - (compiled - start)
        if remaining <= 0:
            print("FAIL %s: out of time before the search started" % name)
            return 1
        try:
            pan = subprocess.run(["./pan"] + pan_flags, cwd=workdir,
                                 capture_output=True, text=True,
                                 timeout=remaining)
        except subprocess.TimeoutExpired:
            print("FAIL %s: no verdict within %ds (time bound)" % (name, args.timeout))
            return 1
        searched = time.monotonic()
        result = parse_pan(pan.stdout)
        if args.verbose:
            print(pan.stdout)
        if result["errors"] is None:
            print("FAIL %s: pan printed no verdict:\n%s%s"
                  % (name, pan.stdout[-2000:], pan.stderr[-2000:]))
            return 1
        stats = "%s states, depth %s, search %.1fs (+%.1fs to build)" % (
            "{:,}".format(result["states"] or 0), result["depth"],
            searched - compiled, compiled - start)
        if args.expect == "pass":
            if result["errors"]:
                print("FAIL %s: %s; %s" % (name, result["violation"], stats))
                for line in replay(workdir, model_path, spin_defines, args.trail):
                    print(line)
                return 1
            if result["truncated"]:
                print("FAIL %s: not exhaustive: %s; %s"
                      % (name, result["truncated"], stats))
                return 1
            print("PASS %s: exhaustive, no error; %s" % (name, stats))
            return 0
        # A counterexample is expected.
        if not result["errors"]:
            print("FAIL %s: expected a counterexample, no error found%s; %s"
                  % (name, " (" + result["truncated"] + ")" if result["truncated"] else "",
                     stats))
            return 1
        print("PASS %s: counterexample as expected: %s; %s"
              % (name, result["violation"], stats))
        if args.trail:
            for line in replay(workdir, model_path, spin_defines, args.trail):
                print(line)
        return 0
    finally:
        if args.keep:
            print("(kept %s)" % workdir)
        else:
            shutil.rmtree(workdir, ignore_errors=True)


# The bug switches and the scenario that must expose each.
BUGS = (
    ("semaphore", "WAIT", ["-D", "WAITERS=1"], "BUG_ANY_FAILED_ENTRY"),
    ("queue", "CALLBACK", [], "BUG_INLINE_SHUTDOWN_IN_CALLBACK"),
    ("queue", "CHAIN", [], "BUG_NO_DEVICE_WAIT_HOST_CHECK"),
    ("queue", "LOSS", [], "BUG_LOSS_SKIPS_MEMBERS"),
    ("semaphore", "WAIT", ["-D", "WAITERS=1"], "BUG_REGISTER_OUTSIDE_LOCK"),
    ("semaphore", "WAIT", ["-D", "WAITERS=1"], "BUG_WAITER_REF_AFTER_REGISTER"),
    ("queue", "CHAIN", [], "BUG_ATTACH_BEFORE_RECORD"),
    ("queue", "CANCEL", [], "BUG_PAYLOAD_AFTER_SIGNALS"),
    ("semaphore", "CALLBACK", [], "BUG_HANDLE_NO_PIN"),
    ("queue", "TEARDOWN", ["-D", "REVIVE"], "BUG_SHUTDOWN_NOT_CLAIMED"),
    ("queue", "TEARDOWN", [], "BUG_ISSUE_WITHOUT_TURN"),
    ("queue", "CALLBACK", [], "BUG_DESTROY_IGNORES_HELPERS"),
    ("queue", "HELPED", [], "BUG_HELPED_SLEEP_FOREVER"),
    ("queue", "BUSY", [], "BUG_BUSY_SLEEP_FOREVER"),
    # a host waiter helping in busy mode: the FULL scenario, which the list
    # below runs every bug against (the registered check names FULL)
    ("queue", "BUSY", [], "BUG_HELPER_NO_BUSY_RING"),
    ("queue", "ORDER", [], "BUG_NO_LATE_PARK"),
    ("queue", "ORDER", [], "BUG_SIGNAL_DURING_RELEASE_NOTIFIES"),
)


# The full-depth checks (docs/sync-model.md records their sizes and times).
def full_checks():
    checks = []
    for scenario in ("CHAIN", "CANCEL", "TEARDOWN", "CALLBACK", "LOSS", "HELPED"):
        # teardown's progress search outgrows 2 GB since helped mode, and
        # its safety search 1 GB since queue order
        memlim = ["--memlim", "4096"] if scenario == "TEARDOWN" else []
        checks.append(["queue", scenario, "-D", "FULL"] + memlim)
        checks.append(["queue", scenario, "-D", "FULL", "--mode", "progress"]
                      + memlim)
    # busy's FULL form adds a helping waiter (25.7 M states): its progress
    # check runs at the CI bounds.
    checks.append(["queue", "BUSY", "-D", "FULL", "--memlim", "4096"])
    checks.append(["queue", "BUSY", "--mode", "progress"])
    checks.append(["queue", "ORDER", "--mode", "progress"])
    checks.append(["queue", "TEARDOWN", "-D", "REVIVE", "-D", "FULL",
                   "--memlim", "6144"])
    # The revival adds a process: its progress check runs at the CI
    # bounds (with FULL it outgrows 2 GB).
    checks.append(["queue", "TEARDOWN", "-D", "REVIVE", "--mode", "progress"])
    checks.append(["semaphore", "CALLBACK"])
    checks.append(["semaphore", "CALLBACK", "--mode", "progress"])
    checks.append(["semaphore", "WAIT", "-D", "WAITERS=1", "-D", "FULL"])
    checks.append(["semaphore", "WAIT", "-D", "WAITERS=1", "-D", "FULL",
                   "--mode", "progress"])
    # The reduced searches against unreduced ones (same verdicts).
    checks.append(["semaphore", "CALLBACK", "--noreduce"])
    checks.append(["semaphore", "WAIT", "-D", "WAITERS=1", "-D", "FULL", "--noreduce"])
    for scenario in ("CHAIN", "CANCEL", "TEARDOWN", "CALLBACK", "LOSS", "HELPED",
                     "BUSY", "ORDER"):
        # helped's unreduced search outgrows 1 GB
        memlim = ["--memlim", "3072"] if scenario == "HELPED" else []
        checks.append(["queue", scenario, "--noreduce"] + memlim)
    checks.append(["queue", "TEARDOWN", "-D", "REVIVE", "--noreduce"])
    # Every bug switch, against the full-depth scenario too.
    for model, scenario, defines, bug in BUGS:
        # the revival's search needs more than 1 GB before it finds its bug
        memlim = ["--memlim", "6144"] if "REVIVE" in defines else []
        checks.append([model, scenario] + defines + ["-D", "FULL", "--bug", bug,
                                                     "--expect", "counterexample"]
                      + memlim)
    # Every pair of shapes of two concurrent waits, each pair exhaustively
    # (one run per unordered pair: the two waiters run the same code).
    shapes = list(itertools.product(("MODE_ALL", "MODE_ANY"), (1, 2), (1, 2),
                                    ("INFINITE", "FINITE")))
    for a, b in itertools.combinations_with_replacement(range(len(shapes)), 2):
        defines = ["-D", "WAITERS=2", "-D", "FULL"]
        for prefix, shape in (("W0", shapes[a]), ("W1", shapes[b])):
            for key, value in zip(("MODE", "V0", "V1", "TIMEOUT"), shape):
                defines += ["-D", "%s_%s=%s" % (prefix, key, value)]
        checks.append(["semaphore", "WAIT"] + defines)
    return checks


def run_full(args):
    """Every full-depth check, args.jobs at a time; one line each."""
    checks = full_checks()
    start = time.monotonic()
    running = []
    failed = 0
    done = 0

    def reap(block):
        nonlocal failed, done
        for proc in list(running):
            if block or proc.poll() is not None:
                out, _ = proc.communicate()
                running.remove(proc)
                done += 1
                sys.stdout.write("[%d/%d] %s" % (done, len(checks), out))
                sys.stdout.flush()
                if proc.returncode != 0:
                    failed += 1
                if block:
                    return

    for check in checks:
        while len(running) >= max(1, args.jobs):
            reap(False)
            if len(running) >= max(1, args.jobs):
                time.sleep(0.2)
        # The semaphore model's verifier is small: optimizing it pays off;
        # the queue model's builds several times slower than it searches.
        opt = "--opt=-O1" if check[0] == "semaphore" else "--opt=-O0"
        # A check may ask for more memory than the default bound.
        memlim = [] if "--memlim" in check else ["--memlim", str(args.memlim)]
        cmd = [sys.executable, os.path.abspath(__file__)] + check + [
            opt, "--timeout", str(args.timeout), "--hash", "22",
            "--cc", args.cc] + memlim
        running.append(subprocess.Popen(cmd, stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT, text=True))
    while running:
        reap(True)
    print("full depth: %d checks, %d failed, %.0fs wall"
          % (len(checks), failed, time.monotonic() - start))
    return 1 if failed else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("model", nargs="?", choices=MODELS)
    parser.add_argument("scenario", nargs="?",
                        help="WAIT, CALLBACK (semaphore); CHAIN, CANCEL, "
                        "TEARDOWN, CALLBACK, LOSS, HELPED, BUSY (queue)")
    parser.add_argument("-D", "--define", action="append", default=[],
                        help="a model define, e.g. WAITERS=1")
    parser.add_argument("--bug", help="a bug switch, e.g. BUG_ANY_FAILED_ENTRY")
    parser.add_argument("--expect", choices=("pass", "counterexample"),
                        default="pass")
    parser.add_argument("--mode", choices=("safety", "progress"), default="safety")
    parser.add_argument("--timeout", type=int, default=300,
                        help="seconds for generation, build and search")
    parser.add_argument("--memlim", type=int, default=1024,
                        help="MB the search may use (pan -DMEMLIM)")
    parser.add_argument("--depth", type=int, default=200000, help="pan -m")
    parser.add_argument("--hash", type=int, default=20, help="pan -w")
    parser.add_argument("--opt", default="-O0",
                        help="optimization for pan.c (-O0 builds fastest)")
    parser.add_argument("--cc", default=os.environ.get("CC", "cc"))
    parser.add_argument("--noreduce", action="store_true",
                        help="no partial order reduction (a cross-check of "
                        "the reduced search)")
    parser.add_argument("-j", "--jobs", type=int, default=1,
                        help="with --full: checks run at once")
    parser.add_argument("--trail", type=int, default=0,
                        help="print the last N steps of a counterexample")
    parser.add_argument("--keep", action="store_true",
                        help="keep the scratch directory (pan.c, the trail)")
    parser.add_argument("-v", "--verbose", action="store_true")
    parser.add_argument("--full", action="store_true",
                        help="run every full-depth check, one after another")
    args = parser.parse_args()

    if args.full:
        return run_full(args)
    if not args.model or not args.scenario:
        parser.error("a model and a scenario (or --full)")
    return run_check(args)


if __name__ == "__main__":
    sys.exit(main())
