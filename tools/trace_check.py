#!/usr/bin/env python3
"""Checks a HAL_TRACE file (docs/tracing.md): nothing lost, nothing unpaired.

usage: trace_check.py TRACE.json
       trace_check.py --run PROGRAM [ARGS...]

With --run, runs PROGRAM with HAL_TRACE set to a fresh file (it must exit
0), then checks that file. The checks (K11):

  - the file is whole JSON and says no event was dropped;
  - every submission has exactly one begin and one end on its queue's track,
    the end with a status, and each of its phases (parked, ready, in
    flight) one begin and one end after it;
  - every flow that starts (queue_execute, on the caller's thread) ends
    exactly once (the submission's completion), and every submission's
    completion ends a flow that started: exactly one submission record per
    submission the HAL accepted, one completion per completion;
  - every queue_execute that returned OK names a submission of the trace;
  - spans have non-negative durations; every thread and track is named.

Prints one line of figures; exits 1 on the first failed check.
"""
import collections
import json
import os
import subprocess
import sys
import tempfile


def fail(message):
    print("trace_check: FAILED: " + message)
    sys.exit(1)


def check(path):
    try:
        with open(path) as f:
            data = json.load(f)
    except (OSError, ValueError) as error:
        fail("%s is not a whole trace: %s" % (path, error))
    events = data.get("traceEvents")
    if not isinstance(events, list):
        fail("no traceEvents list")
    dropped = data.get("otherData", {}).get("dropped_events")
    if dropped != 0:
        fail("%s events were dropped" % dropped)

    named = {e["tid"] for e in events if e.get("ph") == "M"}
    spans = collections.defaultdict(list)  # (name, id) -> [(ph, ts)]
    submissions = {}                   # id -> [begins, ends, status]
    flow_starts = collections.Counter()
    flow_ends = collections.Counter()
    executed_ok = []
    for e in events:
        ph = e.get("ph")
        if ph != "M" and e.get("tid") not in named:
            fail("event %s on an unnamed thread or track %s" %
                 (e.get("name"), e.get("tid")))
        if ph == "X" and e.get("dur", 0) < 0:
            fail("span %s has a negative duration" % e.get("name"))
        if ph in ("b", "e") and e.get("cat") == "submission":
            # Threads write their own buffers: pair by key, order by time.
            key = (e["name"], e["id"])
            spans[key].append((ph, e["ts"]))
            if e["name"] == "submission":
                record = submissions.setdefault(e["id"], [0, 0, None])
                record[0 if ph == "b" else 1] += 1
                if ph == "e":
                    record[2] = e.get("args", {}).get("status")
        elif ph == "s":
            flow_starts[e["id"]] += 1
        elif ph == "f":
            flow_ends[e["id"]] += 1
        elif ph == "X" and e.get("name") == "queue_execute":
            args = e.get("args", {})
            if args.get("status") == "OK":
                executed_ok.append(args.get("submission"))

    for key, marks in spans.items():
        begins = [ts for ph, ts in marks if ph == "b"]
        ends = [ts for ph, ts in marks if ph == "e"]
        if len(begins) != 1 or len(ends) != 1:
            fail("%s %s has %d begin(s) and %d end(s)" %
                 (key + (len(begins), len(ends))))
        if ends[0] < begins[0]:
            fail("%s %s ends before it begins" % key)
    for sid, (begins, ends, status) in submissions.items():
        if begins != 1 or ends != 1:
            fail("submission %s has %d begin(s) and %d end(s)" %
                 (sid, begins, ends))
        if status is None:
            fail("submission %s ended without a status" % sid)
    for fid, count in flow_starts.items():
        if count != 1 or flow_ends.get(fid) != 1:
            fail("flow %s started %d time(s) and ended %d time(s)" %
                 (fid, count, flow_ends.get(fid, 0)))
        if fid not in submissions:
            fail("flow %s starts at a queue_execute whose submission is not "
                 "in the trace" % fid)
    for fid, count in flow_ends.items():
        if count != 1:
            fail("flow %s ended %d times" % (fid, count))
    for sid in executed_ok:
        if sid not in submissions:
            fail("a queue_execute returned OK for submission %s, which the "
                 "trace does not hold" % sid)
    failed = sum(1 for s in submissions.values() if s[2] != "OK")
    host = sum(1 for e in events if e.get("cat") == "host")
    print("trace_check: %s: %d events, %d submissions (%d failed), %d from "
          "queue_execute, %d host events, 0 dropped" %
          (os.path.basename(path), len(events), len(submissions), failed,
           len(executed_ok), host))


def main():
    args = sys.argv[1:]
    if len(args) >= 2 and args[0] == "--run":
        with tempfile.TemporaryDirectory() as directory:
            path = os.path.join(directory, "trace.json")
            env = dict(os.environ, HAL_TRACE=path)
            result = subprocess.run(args[1:], env=env)
            if result.returncode != 0:
                fail("%s exited with %d" % (args[1], result.returncode))
            check(path)
        return 0
    if len(args) != 1:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    check(args[0])
    return 0


if __name__ == "__main__":
    sys.exit(main())
