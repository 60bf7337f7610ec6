#!/usr/bin/env python3
"""The fault sweep: every vendor call the drivers make, failed at each index.

For each target (a workload on a driver, on the virtual GPU), a clean run
with VGPU_CALL_COUNTS says which entry points it calls and how often; then
one process per (call, index, mode) runs it again with
VGPU_FAULTS=CALL:nth=INDEX (mode `error`) or CALL:nth=INDEX:lost (mode
`lost`) and its outcome is checked (docs/testing.md). Mode `oom` fails the
HAL's own host allocations instead: the clean run counts them (call
`host_alloc`, tools/alloc_fault.c preloaded), and each run fails the one at
INDEX (HAL_ALLOC_FAULT_NTH):

  - it ends by itself (a per-run timeout; HAL_SYNC_MAX_WAIT_MS and
    VGPU_MAX_WAIT_MS turn a hang into a message, which is reported as one);
  - no signal, no sanitizer report, no strict-mode misuse, no leak
    (VGPU_STRICT=1, VGPU_FAIL_EXIT_CODE=70), except the one object a failed
    destroy/free call could not destroy;
  - a failure is clean: hal-run exits 1, the workload program reports it;
    after a vendor error the status names the injected call, after a loss
    it is DEVICE_LOST naming the vendor call that reported it, after a
    failed allocation it is RESOURCE_EXHAUSTED (or, where the status's own
    message could not be allocated, says "out of memory");
  - after a vendor error or a failed allocation an independent submission
    on the same device still works; after a loss it fails with DEVICE_LOST
    (the workload program's "after" line).

Targets: `hal-run` (build/tools/hal-run --driver=D), and the workload
program build/tools/hal-fault-sweep-workload (tools/fault_sweep.c) with
`pipeline` (hal-run's pipeline), `reuse` (a REUSABLE command buffer submitted
several times, re-recorded; graph drivers), `dispatch` (SAXPY) and `file`
(a file read into a buffer and written out again, in chunks).

  fault_sweep.py --build DIR --full          every call x every index x
                                             every mode (the documented sweep)
  fault_sweep.py --build DIR --short         the CI subset (suite `sweep`)
  fault_sweep.py --build DIR --only 'hal-run:cuda_graph:cuGraphLaunch:3:error'
                                             one run, its whole output

Randomness (the short form's indices and loss points) comes from --seed,
else HAL_TEST_SEED, else the clock; it is printed. Python 3 standard
library only.
"""
import argparse
import concurrent.futures
import os
import random
import re
import shlex
import subprocess
import sys
import tempfile
import time

TSAN_SUPPRESSIONS = os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts",
    "tsan.supp")

DRIVERS = ["cuda_stream", "cuda_graph", "hip_stream", "hip_graph"]
GRAPH_DRIVERS = ["cuda_graph", "hip_graph"]
WORKLOADS = ["hal-run", "pipeline", "reuse", "dispatch", "file"]
MODES = ["error", "lost", "oom"]
# The pseudo-call whose index mode `oom` fails: the HAL's host allocations.
HOST_ALLOC = "host_alloc"

SANITIZER_PATTERNS = [
    "ERROR: AddressSanitizer",
    "ERROR: LeakSanitizer",
    "WARNING: ThreadSanitizer",
    "ThreadSanitizer: ",
    "runtime error:",
    "UndefinedBehaviorSanitizer",
]
HANG_PATTERNS = [
    "HAL_SYNC_MAX_WAIT_MS=",
    "waited more than VGPU_MAX_WAIT_MS",
    "DEADLINE_EXCEEDED",
]

# A destroy/free call that fails leaves its object alive: the virtual GPU
# then reports exactly that object at exit. Keyword of the call name ->
# what the leak line says.
DESTROY_LEAKS = [
    ("MemPoolDestroy", "leak: memory pool "),
    ("GraphExecDestroy", "leak: executable graph "),
    ("GraphDestroy", "leak: graph "),
    ("StreamDestroy", "leak: stream "),
    ("EventDestroy", "leak: event "),
    ("ModuleUnload", "leak: module "),
    ("PrimaryCtxRelease", "leak: primary context "),
    # "bytes of pinned host memory" (the file transfers' staging).
    ("HostFree", " host memory "),
    ("FreeHost", " host memory "),
    ("Free", " of device memory "),
]


# Failures the sweep found in code it does not own, open until their owner
# fixes them: (workload or None, call regex, mode, detail regex, what is
# wrong). They are printed as KNOWN with their reproduction and do not fail
# the run (--no-known: they do).
KNOWN = []


def known_issue(target, call, mode, detail):
    for workload, call_re, known_mode, detail_re, what in KNOWN:
        if workload not in (None, target.workload) or mode != known_mode:
            continue
        if re.fullmatch(call_re, call) and re.search(detail_re, detail):
            return what
    return None


def destroy_leak_text(call):
    for key, text in DESTROY_LEAKS:
        if key in call:
            return text
    return None


class Target:
    def __init__(self, workload, driver, args):
        self.workload = workload
        self.driver = driver
        self.command = self.base_command(args)
        self.vendor = "cuda" if driver.startswith("cuda") else "hip"
        self.counts = {}

    def base_command(self, args):
        if self.workload == "hal-run":
            return [args.hal_run, "--driver=" + self.driver]
        return [args.workload_program, "--driver=" + self.driver,
                "--workload=" + self.workload]

    @property
    def name(self):
        return "%s:%s" % (self.workload, self.driver)


def base_env(args):
    env = dict(os.environ)
    for key in list(env):
        if key.startswith("VGPU_") or key in ("HAL_GPU_ADAPTER_HIDE_SYMBOLS",):
            del env[key]
    env.update({
        "HAL_DRIVER_PATH": args.driver_dir,
        "HAL_CUDA_LIBRARY": args.cuda_library,
        "HAL_HIP_LIBRARY": args.hip_library,
        "VGPU_STRICT": "1",
        "VGPU_FAIL_EXIT_CODE": "70",
        "VGPU_SEED": str(args.seed),
        "HAL_SYNC_MAX_WAIT_MS": str(args.hang_ms),
        "VGPU_MAX_WAIT_MS": str(args.hang_ms),
        # verify_asan_link_order=0: mode oom preloads its allocator shim
        # before the ASan runtime, which forwards to it.
        "ASAN_OPTIONS": "detect_leaks=1:halt_on_error=1:abort_on_error=1:"
                        "verify_asan_link_order=0",
        "UBSAN_OPTIONS": "halt_on_error=1:print_stacktrace=1",
        # As every test's (meson.build): scripts/tsan.supp says why.
        "TSAN_OPTIONS": "halt_on_error=1:second_deadlock_stack=1:"
                        "suppressions=" + TSAN_SUPPRESSIONS,
    })
    return env


def run(command, env, timeout):
    """Returns (exit code or -signal, output, timed out, seconds)."""
    start = time.monotonic()
    try:
        p = subprocess.run(command, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=timeout)
        out = p.stdout.decode("utf-8", "replace")
        return p.returncode, out, False, time.monotonic() - start
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode("utf-8", "replace")
        return None, out, True, time.monotonic() - start


def clean_ok(target, rc, out):
    if rc != 0:
        return False
    if target.workload == "hal-run":
        return "pipeline ok:" in out
    return "workload: ok" in out and "after: ok" in out


def count_calls(target, args, env):
    """Runs |target| clean |args.clean_runs| times; the largest count of
    each call over the runs (a few, like event pool growth, vary)."""
    counts = {}
    for _ in range(args.clean_runs):
        fd, path = tempfile.mkstemp(prefix="fault-sweep-counts-")
        os.close(fd)
        os.unlink(path)
        e = dict(env, VGPU_CALL_COUNTS=path)
        if "oom" in args.modes:
            e.update(LD_PRELOAD=args.alloc_fault,
                     HAL_ALLOC_FAULT_COUNTS=path + ".host")
        rc, out, timed_out, _ = run(target.command, e, args.timeout)
        text = ""
        for p in (path, path + ".host"):
            if os.path.exists(p):
                with open(p) as f:
                    text += f.read()
                os.unlink(p)
        if timed_out or not clean_ok(target, rc, out):
            raise SystemExit("fault_sweep: the clean run of %s failed "
                             "(exit %s):\n%s" % (target.name, rc, out))
        for line in text.splitlines():
            name, n = line.split()
            counts[name] = max(counts.get(name, 0), int(n))
    if not counts:
        raise SystemExit("fault_sweep: %s made no vendor calls (is it "
                         "running on the virtual GPU?)" % target.name)
    return counts


def line_value(out, prefix):
    for line in out.splitlines():
        if line.startswith(prefix):
            return line[len(prefix):].strip()
    return None


VENDOR_FAILURE = re.compile(r"\b(cu|hip)[A-Za-z0-9_]+ failed: ")


def lost_status_ok(status):
    """After a loss the first failure is DEVICE_LOST and names the vendor
    call that reported it (the injected one, or a later one if the
    injected call's error had nowhere to go)."""
    return status.startswith("DEVICE_LOST") and bool(
        VENDOR_FAILURE.search(status))


def fault_env(call, nth, mode, args):
    """The environment that injects one fault."""
    if mode == "oom":
        return {"LD_PRELOAD": args.alloc_fault,
                "HAL_ALLOC_FAULT_NTH": str(nth)}
    return {"VGPU_FAULTS": spec_of(call, nth, mode)}


def names_fault(call, mode, status):
    """Whether a failure's status says what was injected."""
    if mode == "oom":
        # The code, or hal/status.c's fallback for a status whose own
        # message could not be allocated (it keeps the original code).
        return (status.startswith("RESOURCE_EXHAUSTED") or
                "(out of memory while formatting the message)" in status)
    return call in status


def fault_phase(target, call, out):
    """Where the fault fired: 'workload' (driver and device creation
    included), 'after' (the independent submission) or 'teardown' (device
    and driver release, library unload). stdout is line-buffered and
    stderr unbuffered into one pipe, so lines keep their order."""
    marker = ("HAL_ALLOC_FAULT: injected fault in %s " if call == HOST_ALLOC
              else "VGPU_FAULTS: injected fault in %s ") % call
    phase = "workload"
    ends = (["pipeline ok:", "hal-run: pipeline failed: "]
            if target.workload == "hal-run" else ["workload: ", "after: "])
    for line in out.splitlines():
        if marker in line:
            return phase
        if target.workload == "hal-run":
            if any(line.startswith(e) for e in ends):
                phase = "teardown"
        elif line.startswith("workload: "):
            phase = "after"
        elif line.startswith("after: "):
            phase = "teardown"
    return None


def classify(target, call, nth, mode, rc, out, timed_out, timeout):
    """(verdict, detail): verdict is 'fail', 'not-reached' or 'ok';
    detail says which kind of ok (or what failed)."""
    if timed_out:
        return "fail", "timed out after %ds (hang)" % timeout
    for p in SANITIZER_PATTERNS:
        if p in out:
            return "fail", "sanitizer report (%s)" % p.strip()
    if rc is not None and rc < 0:
        return "fail", "killed by signal %d" % -rc
    if rc == 78 or "VGPU_FAULTS: rule" in out:
        return "fail", "VGPU_FAULTS refused (a bug of the sweep)"
    for p in HANG_PATTERNS:
        if p in out:
            return "fail", "a wait ran into its bound (%s): a hang" % p
    phase = fault_phase(target, call, out)
    fired = phase is not None
    misuse = [l for l in out.splitlines() if " strict: " in l]
    if misuse:
        return "fail", "strict-mode misuse: " + misuse[0].strip()
    leaks = [l for l in out.splitlines() if "]: leak: " in l]
    expected_leak = False
    if leaks:
        text = destroy_leak_text(call)
        if fired and text and len(leaks) == 1 and text in leaks[0]:
            expected_leak = True
        else:
            return "fail", "leak: " + leaks[0].split("]: ", 1)[1].strip()
    if rc == 70:
        if not expected_leak:
            return "fail", "exit 70 (VGPU_FAIL_EXIT_CODE) without a leak line"
        rc = None  # the exit code the program chose is lost
    if not fired:
        if clean_ok(target, rc, out):
            return "not-reached", "index beyond this run's calls"
        return "fail", "failed although the fault never fired (exit %s)" % rc
    suffix = ", the destroyed object leaked" if expected_leak else ""
    if phase == "teardown":
        # Nothing runs after it to be affected (but leaks, checked above).
        return "ok", "in teardown" + suffix

    if target.workload == "hal-run":
        if rc in (0, None) and "pipeline ok:" in out:
            return "ok", "absorbed (pipeline ok)" + suffix
        if rc not in (1, None):
            return "fail", "hal-run exited %s" % rc
        status = line_value(out, "hal-run: pipeline failed: ")
        if status is None:
            # Before any pipeline: the registry (hal-run: CODE: message).
            m = re.search(r"^hal-run: ([A-Z_]+: .*)$", out, re.M)
            status = m.group(1) if m else None
        if status is None:
            return "fail", "hal-run failed without a status line"
        if mode != "lost" and not names_fault(call, mode, status):
            return "fail", "status does not name %s: %s" % (call, status)
        if mode == "lost" and not lost_status_ok(status):
            return "fail", ("status after a loss is not DEVICE_LOST naming "
                            "a vendor call: " + status)
        return "ok", "failed cleanly" + suffix

    workload = line_value(out, "workload: ")
    after = line_value(out, "after: ")
    if workload is None or after is None:
        return "fail", "exit %s without its workload/after lines" % rc
    want_rc = 3 if after.startswith("failed") else (
        0 if workload == "ok" else 1)
    if rc not in (want_rc, None):
        return "fail", "exit %s, expected %d" % (rc, want_rc)
    if phase == "after":
        # The workload is done: the fault is the independent submission's.
        if workload != "ok":
            return "fail", "workload failed before its fault: " + workload
        if after == "ok":
            return "ok", "absorbed by the independent submission" + suffix
        after_status = after[len("failed: "):]
        if mode != "lost" and not names_fault(call, mode, after_status):
            return "fail", "status does not name %s: %s" % (call, after)
        if mode == "lost" and not lost_status_ok(after_status):
            return "fail", ("status after a loss is not DEVICE_LOST naming "
                            "a vendor call: " + after)
        return "ok", "failed the independent submission cleanly" + suffix
    if mode != "lost":
        if workload == "ok":
            if after == "ok":
                return "ok", "absorbed by the workload" + suffix
            return "fail", ("workload absorbed the fault, then the "
                            "independent submission failed: " + after)
        status = workload[len("failed: "):]
        if not names_fault(call, mode, status):
            return "fail", "status does not name %s: %s" % (call, status)
        if after != "ok" and not after.startswith("skipped"):
            return "fail", ("after a %s an independent submission failed: "
                            "%s" % ("failed allocation" if mode == "oom" else
                                    "vendor error", after))
        return "ok", ("failed cleanly, later submission ok"
                      if after == "ok" else "failed cleanly, no device") + \
            suffix
    # lost
    if workload != "ok" and not lost_status_ok(workload[len("failed: "):]):
        return "fail", ("status after a loss is not DEVICE_LOST naming a "
                        "vendor call: " + workload)
    if after.startswith("skipped"):
        return "ok", "failed cleanly, no device" + suffix
    if not after.startswith("failed: DEVICE_LOST"):
        return "fail", ("after a loss the independent submission did not "
                        "fail with DEVICE_LOST: " + after)
    return "ok", ("failed cleanly, later submission DEVICE_LOST"
                  if workload != "ok" else
                  "loss absorbed by the workload, seen by the independent "
                  "submission") + suffix


def spec_of(call, nth, mode):
    return "%s:nth=%d%s" % (call, nth, ":lost" if mode == "lost" else "")


def reproduce(target, call, nth, mode, args):
    env = base_env(args)
    keys = ["HAL_DRIVER_PATH", "HAL_CUDA_LIBRARY", "HAL_HIP_LIBRARY",
            "VGPU_STRICT", "VGPU_FAIL_EXIT_CODE", "VGPU_SEED",
            "HAL_SYNC_MAX_WAIT_MS", "VGPU_MAX_WAIT_MS"]
    if mode == "oom" and "ASAN_OPTIONS" in env:
        keys.append("ASAN_OPTIONS")
    parts = ["%s=%s" % (k, shlex.quote(env[k])) for k in keys]
    parts += ["%s=%s" % (k, shlex.quote(v))
              for k, v in fault_env(call, nth, mode, args).items()]
    return " ".join(parts + [shlex.quote(c) for c in target.command])


def pick(seed, *what):
    """A seeded choice in [0, 2**32): a pure function of the seed and of
    what it decides, so one decision does not move when another call's
    count (which varies a little between runs) changes."""
    return random.Random("%d:%s" % (seed, ":".join(map(str, what)))).randrange(
        1 << 32)


def plan(targets, args):
    """The (target, call, nth, mode) runs of this sweep."""
    jobs = []
    for t in targets:
        calls = sorted(c for c in t.counts if c != HOST_ALLOC)
        if args.calls:
            calls = [c for c in calls if c in args.calls]
        allocs = t.counts.get(HOST_ALLOC, 0) if "oom" in args.modes else 0
        if args.mode == "full":
            for c in calls:
                for k in range(1, t.counts[c] + 1):
                    for m in args.modes:
                        if m != "oom":
                            jobs.append((t, c, k, m))
            for k in range(1, allocs + 1):
                jobs.append((t, HOST_ALLOC, k, "oom"))
            continue
        # Host allocations: the first and seeded others.
        picked = {1} if allocs else set()
        for n in range(args.alloc_points if allocs else 0):
            picked.add(1 + pick(args.seed, t.name, HOST_ALLOC, n) % allocs)
        jobs += [(t, HOST_ALLOC, k, "oom") for k in sorted(picked)]

        def index(c, what):
            return 1 + pick(args.seed, t.name, c, what) % t.counts[c]

        def some(n, what):
            ranked = sorted(calls, key=lambda c: pick(args.seed, t.name, c,
                                                      what))
            return sorted(ranked[:n])

        if args.mode == "short":
            # Every call at its first index and at one seeded index; loss
            # at a few seeded points.
            for c in calls:
                if "error" in args.modes:
                    jobs.append((t, c, 1, "error"))
                    k = index(c, "error")
                    if k > 1:
                        jobs.append((t, c, k, "error"))
        else:  # sample: sanitizer builds
            if "error" in args.modes:
                for c in some(args.sample, "sample"):
                    jobs.append((t, c, index(c, "error"), "error"))
        if "lost" in args.modes:
            for c in some(args.loss_points, "lost"):
                jobs.append((t, c, index(c, "lost"), "lost"))
    return jobs


def parse_args():
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--build", help="the build tree; the paths below "
                   "default to its outputs")
    p.add_argument("--hal-run")
    p.add_argument("--workload-program")
    p.add_argument("--driver-dir")
    p.add_argument("--cuda-library")
    p.add_argument("--hip-library")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--full", dest="mode", action="store_const", const="full")
    g.add_argument("--short", dest="mode", action="store_const",
                   const="short")
    g.add_argument("--sample", type=int, metavar="N",
                   help="N seeded calls per target at a seeded index (the "
                   "short form of sanitizer builds)")
    p.add_argument("--sanitizer", default="none",
                   help="meson's b_sanitize: with --short, a sanitizer "
                   "build runs --sample 8 (thread: 3) without the pipeline "
                   "targets, with longer timeouts")
    p.add_argument("--only", help="TARGET:DRIVER:CALL:NTH:MODE: one run, "
                   "printed in full")
    p.add_argument("--workloads", help="default: all (%s); in the "
                   "sanitizer short form all but pipeline, which hal-run "
                   "covers" % ",".join(WORKLOADS))
    p.add_argument("--drivers", default=",".join(DRIVERS))
    p.add_argument("--calls", help="comma-separated: only these calls")
    p.add_argument("--modes", default=",".join(MODES))
    p.add_argument("--loss-points", type=int, default=2,
                   help="loss faults per target in --short/--sample")
    p.add_argument("--alloc-points", type=int,
                   help="failed host allocations per target in "
                   "--short/--sample besides the first (default 6; 2 with "
                   "--sample)")
    p.add_argument("--alloc-fault", help="the allocation shim mode oom "
                   "preloads (default BUILD/tools/libhal-alloc-fault.so)")
    p.add_argument("--seed", type=int)
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    p.add_argument("--timeout", type=int, default=60,
                   help="seconds per run (x4 in sanitizer builds)")
    p.add_argument("--hang-ms", type=int, default=20000,
                   help="HAL_SYNC_MAX_WAIT_MS and VGPU_MAX_WAIT_MS")
    p.add_argument("--clean-runs", type=int,
                   help="clean runs counting the calls of each target "
                   "(default 2, the largest count wins; 1 with --sample)")
    p.add_argument("--no-known", action="store_true",
                   help="known open issues (KNOWN in this file) fail too")
    p.add_argument("--log", help="write one line per run to this file: "
                   "target call nth mode verdict detail")
    p.add_argument("--show", type=int, default=3,
                   help="reproductions printed per kind of failure")
    args = p.parse_args()
    if args.sample is not None:
        args.mode = "sample"
    if args.mode is None and not args.only:
        args.mode = "short"
    if args.mode == "short" and args.sanitizer not in ("", "none"):
        # 3x (ASan) to 10x (TSan) slower: a smaller subset keeps the CI
        # test well under a minute.
        args.mode = "sample"
        args.sample = 3 if "thread" in args.sanitizer else 8
        if args.workloads is None:
            args.workloads = ",".join(w for w in WORKLOADS
                                      if w != "pipeline")
    if args.workloads is None:
        args.workloads = ",".join(WORKLOADS)
    if args.clean_runs is None:
        args.clean_runs = 1 if args.mode == "sample" else 2
    if args.alloc_points is None:
        args.alloc_points = 2 if args.mode == "sample" else 6
    if args.sanitizer not in ("", "none"):
        args.timeout *= 4
        args.hang_ms *= 3
    b = args.build
    defaults = {
        "hal_run": "tools/hal-run",
        "workload_program": "tools/hal-fault-sweep-workload",
        "driver_dir": "drivers",
        "cuda_library": "vgpu/libvgpu-cuda.so",
        "hip_library": "vgpu/libvgpu-hip.so",
        "alloc_fault": "tools/libhal-alloc-fault.so",
    }
    for key, rel in defaults.items():
        if getattr(args, key) is None:
            if b is None:
                p.error("--build DIR (or every path option) is needed")
            setattr(args, key, os.path.join(b, rel))
        setattr(args, key, os.path.abspath(getattr(args, key)))
    if args.seed is None:
        s = os.environ.get("HAL_TEST_SEED", "")
        args.seed = int(s, 0) if s else random.SystemRandom().randrange(
            1 << 32)
    args.workloads = [w for w in args.workloads.split(",") if w]
    args.drivers = [d for d in args.drivers.split(",") if d]
    args.modes = [m for m in args.modes.split(",") if m]
    args.calls = set(args.calls.split(",")) if args.calls else None
    for w in args.workloads:
        if w not in WORKLOADS:
            p.error("unknown workload %r (%s)" % (w, ", ".join(WORKLOADS)))
    for m in args.modes:
        if m not in MODES:
            p.error("unknown mode %r (%s)" % (m, ", ".join(MODES)))
    return args


def make_targets(args):
    targets = []
    for w in args.workloads:
        for d in args.drivers:
            if w == "reuse" and d not in GRAPH_DRIVERS:
                continue
            targets.append(Target(w, d, args))
    return targets


def run_only(args):
    parts = args.only.split(":")
    if len(parts) != 5 or parts[4] not in MODES:
        raise SystemExit("--only TARGET:DRIVER:CALL:NTH:MODE")
    t = Target(parts[0], parts[1], args)
    call, nth, mode = parts[2], int(parts[3]), parts[4]
    env = dict(base_env(args), **fault_env(call, nth, mode, args))
    print("fault_sweep: " + reproduce(t, call, nth, mode, args))
    rc, out, timed_out, secs = run(t.command, env, args.timeout)
    sys.stdout.write(out)
    verdict, detail = classify(t, call, nth, mode, rc, out, timed_out,
                               args.timeout)
    print("fault_sweep: exit %s in %.2fs: %s: %s" % (rc, secs, verdict,
                                                     detail))
    return 1 if verdict == "fail" else 0


def main():
    args = parse_args()
    if args.only:
        return run_only(args)
    print("fault_sweep: seed %d (replay: --seed=%d), mode %s, %d job(s)" %
          (args.seed, args.seed, args.mode, args.jobs))
    sys.stdout.flush()
    start = time.monotonic()
    env = base_env(args)
    targets = make_targets(args)
    for t in targets:
        t.counts = count_calls(t, args, env)
    jobs = plan(targets, args)

    def one(job):
        t, c, k, m = job
        e = dict(env, **fault_env(c, k, m, args))
        rc, out, timed_out, secs = run(t.command, e, args.timeout)
        verdict, detail = classify(t, c, k, m, rc, out, timed_out,
                                   args.timeout)
        return job, verdict, detail, out

    results = []
    known = []
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for r in pool.map(one, jobs):
            (t, c, k, m), verdict, detail, out = r
            what = known_issue(t, c, m, detail) if verdict == "fail" else None
            if what and not args.no_known:
                known.append((r, what))
                r = ((t, c, k, m), "known", detail, out)
            results.append(r)
    wall = time.monotonic() - start
    if args.log:
        with open(args.log, "w") as f:
            for (t, c, k, m), verdict, detail, _ in results:
                f.write("%s %s %d %s %s %s\n" % (t.name, c, k, m, verdict,
                                                 detail))

    # Per target: calls, indices, runs, outcomes.
    print("%-22s %5s %7s %6s %8s %6s %6s %6s" %
          ("target", "calls", "indices", "runs", "reached", "clean", "known",
           "fail"))
    totals = [0, 0, 0, 0, 0, 0, 0]
    for t in targets:
        mine = [r for r in results if r[0][0] is t]
        calls = len({r[0][1] for r in mine})
        indices = len({(r[0][1], r[0][2]) for r in mine})
        reached = sum(1 for r in mine if r[1] != "not-reached")
        clean = sum(1 for r in mine if r[1] == "ok")
        kn = sum(1 for r in mine if r[1] == "known")
        fail = sum(1 for r in mine if r[1] == "fail")
        row = [calls, indices, len(mine), reached, clean, kn, fail]
        totals = [a + b for a, b in zip(totals, row)]
        print("%-22s %5d %7d %6d %8d %6d %6d %6d" % tuple([t.name] + row))
    print("%-22s %5d %7d %6d %8d %6d %6d %6d" % tuple(["total"] + totals))

    # Each kind of clean outcome, with the calls it happened for.
    kinds = {}
    for (t, c, k, m), verdict, detail, _ in results:
        if verdict == "ok":
            n, calls = kinds.get((m, detail), (0, set()))
            kinds[(m, detail)] = (n + 1, calls | {c})
    for (m, detail) in sorted(kinds):
        n, calls = kinds[(m, detail)]
        names = sorted(calls)
        print("  %-5s %6d  %s: %s%s" % (m, n, detail, ", ".join(names[:8]),
                                      " ..." if len(names) > 8 else ""))

    failures = [r for r in results if r[1] == "fail"]
    groups = {}
    for r in failures:
        (t, c, k, m), _, detail, _ = r
        key = (t.workload, c, m, re.sub(r"0x[0-9a-f]+|\d+", "N", detail))
        groups.setdefault(key, []).append(r)
    for key in sorted(groups):
        rs = groups[key]
        idx = sorted(r[0][2] for r in rs)
        drivers = sorted({r[0][0].driver for r in rs})
        print("FAIL %s %s %s on %s at nth=%s: %s" %
              (key[0], key[1], key[2], ",".join(drivers),
               ",".join(map(str, idx[:12])) + ("..." if len(idx) > 12
                                                else ""), rs[0][2]))
        for r in rs[:args.show]:
            (t, c, k, m), _, _, out = r
            print("  reproduce: " + reproduce(t, c, k, m, args))
            tail = [l for l in out.splitlines() if l.strip()][-6:]
            for l in tail:
                print("    | " + l[:300])
    seen = {}
    for r, what in known:
        seen.setdefault(what, []).append(r)
    for what, rs in sorted(seen.items()):
        print("KNOWN (%d run(s)): %s" % (len(rs), what))
        (t, c, k, m), _, detail, _ = rs[0]
        print("  e.g. %s: %s" % (t.name, detail[:300]))
        print("  reproduce: " + reproduce(t, c, k, m, args))
    print("fault_sweep: %d target(s), %d run(s), %d reached, %d known, "
          "%d failure(s) in %d group(s), %.1f s wall, seed %d" %
          (len(targets), totals[2], totals[3], totals[5], totals[6],
           len(groups), wall, args.seed))
    if totals[3] == 0:
        print("fault_sweep: no fault fired: the sweep proved nothing")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
