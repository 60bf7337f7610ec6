#!/usr/bin/env python3
# Copyright 2026 The HAL Authors.
"""The trace file itself (hal/trace.c, docs/tracing.md), case by case.

  trace_file_test.py PROBE [HAL_RUN TRACE_CHECK]

PROBE is hal/tests/trace_file_probe. With HAL_RUN (and the environment that
runs it on the virtual GPU's CUDA: HAL_DRIVER_PATH, HAL_CUDA_LIBRARY) the
device-span cases run too; TRACE_CHECK is tools/trace_check.py.
"""

import json
import os
import stat
import subprocess
import sys
import tempfile

failures = []


def expect(condition, what):
    print("%s: %s" % ("ok" if condition else "FAILED", what))
    if not condition:
        failures.append(what)


def run(command, trace, extra=None, timeout=120, **kwargs):
    env = dict(os.environ, HAL_TRACE=trace)
    env.update(extra or {})
    return subprocess.run(command, env=env, capture_output=True, text=True,
                          timeout=timeout, **kwargs)


def loads(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as error:
        print("  %s: %s" % (path, error))
        return None


def main():
    probe = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory() as directory:
        # A file with a track and no thread's event is still JSON.
        trace = os.path.join(directory, "tracks.json")
        result = run([probe, "tracks"], trace)
        expect(result.returncode == 0 and loads(trace) is not None,
               "a trace with a track and no event is whole JSON")

        # Every flush is one cut of every thread's buffer: no end is
        # written without its begin, which another thread appended.
        snapshots = os.path.join(directory, "snapshots")
        os.mkdir(snapshots)
        trace = os.path.join(directory, "live.json")
        result = run([probe, "snapshots", snapshots, "10"], trace)
        expect(result.returncode == 0, "the snapshot probe ran: %s" %
               result.stderr.strip())
        torn = []
        for name in sorted(os.listdir(snapshots)):
            data = loads(os.path.join(snapshots, name))
            if data is None:
                torn.append(name + " (not JSON)")
                continue
            begun = {e["id"] for e in data["traceEvents"] if e.get("ph") == "b"}
            ended = [e["id"] for e in data["traceEvents"] if e.get("ph") == "e"]
            missing = [i for i in ended if i not in begun]
            if missing:
                torn.append("%s (%d ends without a begin)" %
                            (name, len(missing)))
        expect(os.listdir(snapshots) and not torn,
               "each of %d flushes under load is a consistent cut %s" %
               (len(os.listdir(snapshots)), torn or ""))

        # A write appends: the file's records are those of the write before
        # it, as bytes, then the ones since (each event formatted once, not
        # again at every device release), and every write holds the whole
        # run so far. A file put in its place, or emptied, between two
        # writes is not appended to: the next write is whole again.
        snapshots = os.path.join(directory, "appends")
        os.mkdir(snapshots)
        trace = os.path.join(directory, "appends.json")
        rounds = 7
        result = run([probe, "appends", snapshots, str(rounds)], trace)
        expect(result.returncode == 0, "the append probe ran: %s" %
               result.stderr.strip())
        bodies = []
        wrong = []
        for r in range(rounds):
            name = os.path.join(snapshots, "snapshot.%d" % r)
            data = loads(name)
            if data is None:
                wrong.append("write %d is not JSON" % r)
                bodies.append(None)
                continue
            events = data["traceEvents"]
            for k in range(r + 1):
                kept = sum(1 for e in events
                           if e.get("name") == "round %d" % k)
                named = sum(1 for e in events if e.get("ph") == "M" and
                            e["args"]["name"] == "track %d" % k)
                if kept != 6 or named != 1:
                    wrong.append("write %d holds %d of round %d's 6 events "
                                 "and names its track %d times" %
                                 (r, kept, k, named))
            with open(name, "rb") as f:
                text = f.read()
            bodies.append(text[:text.rfind(b'\n],"otherData"')])
        for r in range(1, rounds):
            if r - 1 in (2, 4) or bodies[r - 1] is None or bodies[r] is None:
                continue  # replaced or emptied after write r - 1
            if not bodies[r].startswith(bodies[r - 1]):
                wrong.append("write %d does not begin with write %d's "
                             "records" % (r, r - 1))
        expect(not wrong, "each write appends to the one before and holds "
               "the whole run %s" % (wrong or ""))

        # A thread flushing in a loop while others record: the exit still
        # ends, its file whole (it waited forever for the writer's lock,
        # which the looping thread kept taking back). Eight runs.
        trace = os.path.join(directory, "exit_flushing.json")
        ended = 0
        for _ in range(8):
            try:
                result = run([probe, "exit_flushing"], trace, timeout=30)
                ended += result.returncode == 0 and loads(trace) is not None
            except subprocess.TimeoutExpired:
                print("  exit_flushing: still in exit() after 30 s")
                break
        expect(ended == 8, "exit ends, its file whole, while a thread "
               "flushes in a loop (%d of 8 runs)" % ended)

        # The same looping flusher while threads record their first event
        # (which registers their buffer) and name tracks: neither waits for
        # a write (both waited for the writer's lock, which the looping
        # thread kept taking back). Eight runs.
        trace = os.path.join(directory, "register_flushing.json")
        ended = 0
        for _ in range(8):
            try:
                result = run([probe, "register_flushing"], trace, timeout=30)
                ended += (result.returncode == 0
                          and "registered" in result.stdout
                          and loads(trace) is not None)
            except subprocess.TimeoutExpired:
                print("  register_flushing: threads still registering after "
                      "30 s")
                break
        expect(ended == 8, "a thread's first event and a new track never "
               "wait behind a thread that flushes in a loop (%d of 8 runs)" %
               ended)

        # HAL_TRACE_MAX_MB keeps the cut: once an event is dropped, every
        # later one is, so an end whose begin was dropped is not written,
        # even by a thread whose buffer has room.
        trace = os.path.join(directory, "capped.json")
        result = run([probe, "capped"], trace, {"HAL_TRACE_MAX_MB": "1"})
        data = loads(trace)
        events = (data or {}).get("traceEvents", [])
        begun = {e["id"] for e in events if e.get("ph") == "b"}
        orphans = [e["id"] for e in events
                   if e.get("ph") == "e" and e["id"] not in begun]
        dropped = (data or {}).get("otherData", {}).get("dropped_events", 0)
        expect(result.returncode == 0 and data is not None and dropped > 0
               and not orphans,
               "a bounded trace is a cut: %d dropped, %d end(s) without a "
               "begin %s" % (dropped, len(orphans), result.stderr.strip()))

        # A HAL_TRACE that the trace cannot replace is refused at load,
        # and left as it was.
        folder = os.path.join(directory, "folder")
        os.mkdir(folder)
        result = run([probe, "tracks"], folder)
        expect(result.returncode == 0 and "not a regular file" in result.stderr
               and os.path.isdir(folder) and not os.listdir(folder)
               and not os.path.exists(folder + ".tmp"),
               "a folder is refused, untouched, no .tmp left: %s" %
               result.stderr.strip())
        fifo = os.path.join(directory, "fifo")
        os.mkfifo(fifo)
        result = run([probe, "tracks"], fifo)
        expect(result.returncode == 0 and "not a regular file" in result.stderr
               and stat.S_ISFIFO(os.lstat(fifo).st_mode),
               "a FIFO is refused and stays a FIFO: %s" % result.stderr.strip())
        # A link is followed: its target gets the trace, the link stays.
        target = os.path.join(directory, "target.json")
        open(target, "w").close()
        link = os.path.join(directory, "link.json")
        os.symlink(target, link)
        result = run([probe, "tracks"], link)
        expect(result.returncode == 0 and os.path.islink(link)
               and loads(target) is not None,
               "a link stays a link, its target holds the trace")
        # The trace replaces FILE with FILE's permissions; a new FILE gets
        # a new file's, under the umask.
        for mode in (0o600, 0o640, 0o444):
            trace = os.path.join(directory, "mode%o.json" % mode)
            with open(trace, "w") as f:
                f.write("precious")
            os.chmod(trace, mode)
            writable = os.access(trace, os.W_OK)
            result = run([probe, "tracks"], trace)
            kept = stat.S_IMODE(os.stat(trace).st_mode)
            if writable:
                expect(result.returncode == 0 and loads(trace) is not None
                       and kept == mode,
                       "a %o file gets the trace and stays %o (now %o)" %
                       (mode, mode, kept))
            else:
                with open(trace) as f:
                    untouched = f.read() == "precious"
                expect(result.returncode == 0 and untouched and kept == mode
                       and "not writable" in result.stderr,
                       "a %o file this user cannot write is refused and "
                       "left as it was: %s" % (mode, result.stderr.strip()))
        for umask in (0o077, 0o022):
            trace = os.path.join(directory, "umask%o.json" % umask)
            result = run([probe, "tracks"], trace,
                         preexec_fn=lambda: os.umask(umask))
            made = (stat.S_IMODE(os.stat(trace).st_mode)
                    if os.path.exists(trace) else None)
            expect(result.returncode == 0 and made == 0o666 & ~umask,
                   "a new trace under umask %03o is %o (got %s)" %
                   (umask, 0o666 & ~umask, made if made is None else
                    "%o" % made))
        dangling = os.path.join(directory, "dangling.json")
        os.symlink(os.path.join(directory, "nowhere", "x.json"), dangling)
        result = run([probe, "tracks"], dangling)
        expect(result.returncode == 0 and "link to nothing" in result.stderr,
               "a link to nothing is refused: %s" % result.stderr.strip())

        # The temporary beside FILE is made anew: a FIFO waiting under the
        # name FILE.tmp is not opened (nothing hangs), a link planted there
        # does not lead the trace into its target.
        trace = os.path.join(directory, "beside.json")
        os.mkfifo(trace + ".tmp")
        try:
            result = run([probe, "tracks"], trace, timeout=30)
            finished = result.returncode == 0
        except subprocess.TimeoutExpired:
            finished = False
        expect(finished and loads(trace) is not None and
               stat.S_ISFIFO(os.lstat(trace + ".tmp").st_mode),
               "a FIFO named FILE.tmp is not opened")
        trace = os.path.join(directory, "planted.json")
        victim = os.path.join(directory, "victim.txt")
        with open(victim, "w") as f:
            f.write("precious")
        os.symlink(victim, trace + ".tmp")
        result = run([probe, "tracks"], trace)
        with open(victim) as f:
            kept = f.read() == "precious"
        expect(result.returncode == 0 and loads(trace) is not None and kept,
               "a link named FILE.tmp does not lead the trace to its target")
        # A relative HAL_TRACE names the file where the program started,
        # whatever folder it is in when the file is written.
        sub = os.path.join(directory, "sub")
        os.mkdir(sub)
        result = run([probe, "chdir", sub], "relative.json", cwd=directory)
        expect(result.returncode == 0 and
               loads(os.path.join(directory, "relative.json")) is not None and
               not os.path.exists(os.path.join(sub, "relative.json")),
               "a relative HAL_TRACE is where the program started: %s" %
               result.stderr.strip())

        if len(sys.argv) >= 4:
            hal_run, trace_check = sys.argv[2], sys.argv[3]
            # Work that ran but failed (its completion reports the error)
            # has no device span; the checker finds the trace whole.
            trace = os.path.join(directory, "failed.json")
            result = run([hal_run, "--driver=cuda_stream"], trace,
                         {"VGPU_FAULTS": "cuEventSynchronize:nth=6"})
            check = subprocess.run([sys.executable, trace_check, trace],
                                   capture_output=True, text=True)
            expect(result.returncode == 1 and check.returncode == 0,
                   "a submission that failed at completion has no device "
                   "span (hal-run %d; %s)" % (result.returncode,
                                              (check.stdout +
                                               check.stderr).strip()))
            # Device times that cannot be read: the spans are counted as
            # dropped, never lost without a word.
            trace = os.path.join(directory, "untimed.json")
            result = run([hal_run, "--driver=cuda_stream"], trace,
                         {"VGPU_FAULTS": "cuEventElapsedTime:always"})
            check = subprocess.run([sys.executable, trace_check, trace],
                                   capture_output=True, text=True)
            said = check.stdout + check.stderr
            expect(result.returncode == 0 and check.returncode != 0 and
                   "dropped" in said and "device span(s), expected" not in said,
                   "spans whose times cannot be read are counted as dropped "
                   "(%s)" % said.strip())
            # A vendor error while the tracer calibrates a device's clock
            # (the first event record of the process) does not fail the
            # device's creation: the device records no spans and its track
            # says why.
            trace = os.path.join(directory, "uncalibrated.json")
            result = run([hal_run, "--driver=cuda_stream"], trace,
                         {"VGPU_FAULTS": "cuEventRecord:nth=1"})
            check = subprocess.run([sys.executable, trace_check, trace],
                                   capture_output=True, text=True)
            data = loads(trace) or {}
            reasons = [e.get("args", {}).get("reason", "")
                       for e in data.get("traceEvents", [])
                       if e.get("name") == "no device spans"]
            expect(result.returncode == 0 and check.returncode == 0 and
                   any("calibrating" in r and "cuEventRecord" in r
                       for r in reasons),
                   "a failed clock calibration leaves the device without "
                   "spans, saying why (hal-run %d, reasons %s; %s)" %
                   (result.returncode, reasons,
                    (result.stderr + check.stdout + check.stderr).strip()))
            # A program that never releases its device: the file written at
            # its exit still counts the spans lost (the device's own count
            # is written at its release, which never comes). Strict mode
            # and leak checking would report the device unreleased, which
            # is this case's design.
            trace = os.path.join(directory, "unreleased.json")
            result = run([probe, "unreleased", "cuda_stream"], trace,
                         {"VGPU_FAULTS": "cuEventElapsedTime:always",
                          "VGPU_STRICT": "0",
                          "ASAN_OPTIONS": os.environ.get("ASAN_OPTIONS", "") +
                          ":detect_leaks=0"})
            data = loads(trace)
            dropped = (data or {}).get("otherData", {}).get(
                "dropped_device_spans")
            expect(result.returncode == 0 and dropped is not None and
                   dropped >= 8,
                   "the exit trace of a device never released counts its "
                   "dropped device spans (exit %d, dropped_device_spans %s)%s"
                   % (result.returncode, dropped, result.stderr.strip()))
            # A fork() child of a traced program with device work in
            # flight exits with its own status and neither records nor
            # writes: the file is the parent's, written at its exit.
            trace = os.path.join(directory, "forked.json")
            result = run([probe, "forked", "cuda_stream"], trace, timeout=60)
            data = loads(trace)
            names = {e.get("name") for e in (data or {}).get("traceEvents", [])}
            expect(result.returncode == 0 and
                   "child: exit 3\n" in result.stdout and
                   "file after the child: no\n" in result.stdout and
                   "before the fork" in names and "after the fork" in names
                   and "in the child" not in names,
                   "a fork() child exits with its status and writes no "
                   "trace (exit %d; %s; %s)" %
                   (result.returncode, result.stdout.strip(),
                    result.stderr.strip()))
    if failures:
        print("%d case(s) failed" % len(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
