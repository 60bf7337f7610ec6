#!/usr/bin/env python3
"""Checks a HAL_TRACE file (docs/tracing.md): nothing lost, nothing unpaired.

usage: trace_check.py TRACE.json
       trace_check.py --run PROGRAM [ARGS...]

With --run, runs PROGRAM with HAL_TRACE set to a fresh file (it must exit
0), then checks that file. The checks (K11):

  - the file is whole JSON and says no event and no device span was
    dropped (otherData);
  - every submission has exactly one begin and one end on its queue's track,
    the end with a status, and each of its phases (parked, ready, in
    flight) one begin and one end after it;
  - every flow that starts (queue_execute, queue_alloca or queue_dealloca,
    on the caller's thread) ends
    exactly once (the submission's completion), and every submission's
    completion ends a flow that started: exactly one submission record per
    submission the HAL accepted, one completion per completion;
  - every queue_execute that returned OK names a submission of the trace;
    its flow starts inside its span, on its thread, no later than the
    submission's begin, and ends no earlier than it starts (an arrow never
    points back in time, not even for a submission that completes before
    the call returns);
  - spans have non-negative durations, counters non-negative values;
    every thread and track is named;
  - device spans (each queue's "device" track): they nest (a span either
    holds the next or ends before it); each device "submission" span names
    a submission that completed OK, on the same queue, and lies inside its
    host life (from "ready" to its end, give or take the clock
    calibration's uncertainty); on a device whose clock was calibrated,
    every OK submission with device work has exactly one; none dropped.

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
    dropped = data.get("otherData", {}).get("dropped_device_spans")
    if dropped != 0:
        fail("%s device spans were dropped (otherData)" % dropped)

    named = {e["tid"] for e in events if e.get("ph") == "M"}
    spans = collections.defaultdict(list)  # (name, id) -> [(ph, ts)]
    submissions = {}                   # id -> [begins, ends, status]
    flow_starts = collections.Counter()
    flow_ends = collections.Counter()
    flow_times = {}                    # id -> {"s": event, "f": event}
    executions = {}                    # submission id -> its queue_execute
    executed_ok = []
    for e in events:
        ph = e.get("ph")
        if ph != "M" and e.get("tid") not in named:
            fail("event %s on an unnamed thread or track %s" %
                 (e.get("name"), e.get("tid")))
        if ph == "C" and any(not isinstance(v, (int, float)) or v < 0
                             for v in e.get("args", {}).values()):
            fail("counter %s has a value that is not a count: %s" %
                 (e.get("name"), e.get("args")))
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
            flow_times.setdefault(e["id"], {})["s"] = e
        elif ph == "f":
            flow_ends[e["id"]] += 1
            flow_times.setdefault(e["id"], {})["f"] = e
        elif ph == "X" and e.get("name") in ("queue_execute", "queue_alloca",
                                             "queue_dealloca"):
            args = e.get("args", {})
            if args.get("status") == "OK":
                executed_ok.append(args.get("submission"))
                executions[args.get("submission")] = e

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
    # Times are microseconds written with three decimals: a nanosecond of
    # rounding either way.
    slack = 0.002
    for fid in flow_starts:
        start, end = flow_times[fid]["s"], flow_times[fid]["f"]
        if end["ts"] + slack < start["ts"]:
            fail("flow %s ends at %.3f, before it starts at %.3f" %
                 (fid, end["ts"], start["ts"]))
        begin = min(ts for ph, ts in spans[("submission", fid)] if ph == "b")
        if begin + slack < start["ts"]:
            fail("flow %s starts at %.3f, after its submission's begin at "
                 "%.3f" % (fid, start["ts"], begin))
        call = executions.get(fid)
        if call is not None and (
                call["tid"] != start["tid"] or
                start["ts"] + slack < call["ts"] or
                start["ts"] > call["ts"] + call.get("dur", 0) + slack):
            fail("flow %s starts at %.3f on thread %s, outside its "
                 "queue_execute [%.3f, +%.3f] on thread %s" %
                 (fid, start["ts"], start["tid"], call["ts"],
                  call.get("dur", 0), call["tid"]))
    for fid, count in flow_ends.items():
        if count != 1:
            fail("flow %s ended %d times" % (fid, count))
        if fid not in flow_starts:
            fail("flow %s ends (a submission's completion) but no call "
                 "started it" % fid)
    for sid in executed_ok:
        if sid not in submissions:
            fail("a queue_execute returned OK for submission %s, which the "
                 "trace does not hold" % sid)
    device_spans = check_device(events, spans, submissions)
    failed = sum(1 for s in submissions.values() if s[2] != "OK")
    host = sum(1 for e in events if e.get("cat") == "host")
    print("trace_check: %s: %d events, %d submissions (%d failed), %d from "
          "queue_execute, %d host events, %d device spans, 0 dropped" %
          (os.path.basename(path), len(events), len(submissions), failed,
           len(executed_ok), host, device_spans))


# Printed times are in us with 3 decimals: boundaries that are one device
# timestamp may differ by the rounding.
EPSILON_US = 0.002
# Float milliseconds from the calibration event: their resolution over a
# run of minutes, on top of the calibration's own uncertainty.
DRIFT_US = 20.0


def check_device(events, phases, submissions):
    """The device-track checks (see the module doc); returns the span count."""
    names = {e["tid"]: e["args"]["name"] for e in events if e.get("ph") == "M"}
    uncertainty = {}   # device track (tid) -> us
    timed = set()      # names of queues whose device tracks are calibrated
    tracks = collections.defaultdict(list)  # device track -> [X events]
    queue_of = {}      # submission id -> queue track name
    device_work = {}   # submission id -> bool
    for e in events:
        name = names.get(e.get("tid"), "")
        if e.get("cat") == "device" and e.get("ph") == "i":
            if e["name"] == "clock calibration":
                uncertainty[e["tid"]] = e["args"]["uncertainty_us"]
                timed.add(name[:-len(" device")])
            elif e["name"] == "device spans dropped":
                fail("%s dropped %s device spans" %
                     (name, e["args"].get("spans")))
        elif e.get("cat") == "device" and e.get("ph") == "X":
            tracks[e["tid"]].append(e)
        elif (e.get("ph") == "b" and e.get("cat") == "submission" and
              e["name"] == "submission"):
            queue_of[e["id"]] = name
            device_work[e["id"]] = e.get("args", {}).get("device_work", False)
    count = 0
    spans_of = collections.Counter()
    for tid, spans in tracks.items():
        track = names[tid]
        if not track.endswith(" device"):
            fail("device span on track %s" % track)
        queue = track[:-len(" device")]
        spans.sort(key=lambda e: (e["ts"], -e["dur"]))
        stack = []  # the ends of the spans that hold this one
        for e in spans:
            count += 1
            end = e["ts"] + e["dur"]
            while stack and e["ts"] >= stack[-1] - EPSILON_US:
                stack.pop()  # it ended before this one starts
            if stack and end > stack[-1] + EPSILON_US:
                fail("device span %s at %.3f on %s overlaps the span it "
                     "starts in" % (e["name"], e["ts"], track))
            stack.append(end)
            if e["name"] != "submission":
                continue
            sid = e["args"].get("submission")
            record = submissions.get(sid)
            if record is None or record[2] != "OK":
                fail("device span on %s names submission %s, which did not "
                     "complete OK" % (track, sid))
            if queue_of.get(sid) != queue:
                fail("device span of submission %s is on %s, its queue is %s"
                     % (sid, track, queue_of.get(sid)))
            spans_of[sid] += 1
            slack = uncertainty.get(tid, 0.0) + DRIFT_US
            ready = [ts for ph, ts in phases.get(("ready", sid), [])
                     if ph == "b"]
            done = [ts for ph, ts in phases.get(("submission", sid), [])
                    if ph == "e"]
            if ready and e["ts"] < ready[0] - slack:
                fail("submission %s ran on the device %.3f us before it was "
                     "ready" % (sid, ready[0] - e["ts"]))
            if done and end > done[0] + slack:
                fail("submission %s ran on the device %.3f us past its "
                     "completion" % (sid, end - done[0]))
    for sid, (begins, ends, status) in submissions.items():
        calibrated = queue_of.get(sid) in timed
        expected = 1 if calibrated and status == "OK" and \
            device_work.get(sid) else 0
        if spans_of[sid] > 1 or (calibrated and spans_of[sid] != expected):
            fail("submission %s (%s, device work: %s) has %d device "
                 "span(s), expected %d" % (sid, status, device_work.get(sid),
                                          spans_of[sid], expected))
    return count


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
