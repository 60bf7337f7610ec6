#!/usr/bin/env python3
"""The trace checker must catch what it claims to: a test of tools/trace_check.py.

usage: trace_check_test.py PROGRAM [ARGS...]

Runs PROGRAM under HAL_TRACE (hal-run --driver=all: every driver, device
spans on each), checks that the trace passes, then breaks one thing at a
time in a copy (a lost submission end, a lost or doubled device span, a
device span outside its submission's life or overlapping its parent, a
flow arrow pointing back in time or starting outside its call, a dropped
count, a torn file) and checks that the checker fails each with a
message that names the fault. Exits 1 on the first mutation it lets pass.
"""
import copy
import json
import os
import subprocess
import sys
import tempfile

CHECKER = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                       "trace_check.py")


def run_checker(path):
    result = subprocess.run([sys.executable, CHECKER, path],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            universal_newlines=True)
    return result.returncode, result.stdout.strip()


def device_spans(data, name):
    return [e for e in data["traceEvents"]
            if e.get("cat") == "device" and e.get("ph") == "X" and
            e["name"] == name]


def first_op_in_command_buffer(data):
    """An op span and the command-buffer span that holds it."""
    ops = [e for e in data["traceEvents"] if e.get("cat") == "device" and
           e.get("ph") == "X" and e["name"] in ("fill", "copy", "update")]
    for op in ops:
        for parent in device_spans(data, "command buffer"):
            if (parent["tid"] == op["tid"] and parent["dur"] > 1.0 and
                    parent["ts"] <= op["ts"] and
                    op["ts"] + op["dur"] <= parent["ts"] + parent["dur"]):
                return op, parent
    raise AssertionError("no op span inside a command buffer span")


def drop_submission_end(data):
    for i, e in enumerate(data["traceEvents"]):
        if e.get("ph") == "e" and e.get("name") == "submission":
            del data["traceEvents"][i]
            return
    raise AssertionError("no submission end")


def drop_device_span(data):
    data["traceEvents"].remove(device_spans(data, "submission")[0])


def double_device_span(data):
    data["traceEvents"].append(copy.deepcopy(
        device_spans(data, "submission")[0]))


def device_span_before_ready(data):
    span = device_spans(data, "submission")[0]
    span["ts"] -= 100000.0  # 100 ms
    span["dur"] += 100000.0


def device_span_past_completion(data):
    device_spans(data, "submission")[0]["dur"] += 100000.0


def op_overlaps_parent(data):
    # Starts inside its command buffer, ends 50 us past it.
    op, parent = first_op_in_command_buffer(data)
    op["ts"] = parent["ts"] + parent["dur"] / 2
    op["dur"] = parent["dur"] / 2 + 50.0


def device_span_unknown_submission(data):
    device_spans(data, "submission")[0]["args"]["submission"] = "0xdeadbeef"


def dropped_events(data):
    data["otherData"]["dropped_events"] = 1


def dropped_device_spans_count(data):
    data["otherData"]["dropped_device_spans"] = 2


def dropped_device_spans(data):
    calibration = next(e for e in data["traceEvents"]
                       if e.get("name") == "clock calibration")
    data["traceEvents"].append(dict(calibration, name="device spans dropped",
                                    args={"spans": 1}))


def negative_counter(data):
    counter = next(e for e in data["traceEvents"]
                   if e.get("name") == "timepoints pending")
    counter["args"]["pending"] = -1


def flow(data, phase):
    return next(e for e in data["traceEvents"] if e.get("ph") == phase)


def flow_ends_before_it_starts(data):
    start = flow(data, "s")
    end = next(e for e in data["traceEvents"]
               if e.get("ph") == "f" and e["id"] == start["id"])
    start["ts"] = end["ts"] + 5.0


def flow_starts_after_its_submission(data):
    start = flow(data, "s")
    begin = next(e for e in data["traceEvents"]
                 if e.get("ph") == "b" and e.get("name") == "submission" and
                 e["id"] == start["id"])
    start["ts"] = begin["ts"] + 0.5


def flow_starts_outside_its_call(data):
    start = flow(data, "s")
    start["tid"] = next(e["tid"] for e in data["traceEvents"]
                        if e.get("ph") == "M" and e["tid"] != start["tid"])


MUTATIONS = [
    (flow_ends_before_it_starts, "before it starts"),
    (flow_starts_after_its_submission, "after its submission's begin"),
    (flow_starts_outside_its_call, "outside its queue_execute"),
    (drop_submission_end, "1 begin(s) and 0 end(s)"),
    (drop_device_span, "has 0 device span(s), expected 1"),
    (double_device_span, "has 2 device span(s)"),
    (device_span_before_ready, "before it was ready"),
    (device_span_past_completion, "past its completion"),
    (op_overlaps_parent, "overlaps the span it starts in"),
    (device_span_unknown_submission, "which did not complete OK"),
    (dropped_events, "events were dropped"),
    (dropped_device_spans, "dropped 1 device spans"),
    (dropped_device_spans_count, "2 device spans were dropped (otherData)"),
    (negative_counter, "is not a count"),
]


def main():
    if len(sys.argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "trace.json")
        result = subprocess.run(sys.argv[1:],
                                env=dict(os.environ, HAL_TRACE=path),
                                stdout=subprocess.DEVNULL)
        if result.returncode != 0:
            print("FAILED: %s exited with %d" % (sys.argv[1],
                                                 result.returncode))
            return 1
        code, output = run_checker(path)
        print(output)
        if code != 0 or " 0 device spans" in output:
            print("FAILED: the unbroken trace must pass, with device spans")
            return 1
        with open(path) as f:
            original = json.load(f)
        broken = os.path.join(directory, "broken.json")
        for mutate, expected in MUTATIONS:
            data = copy.deepcopy(original)
            mutate(data)
            with open(broken, "w") as f:
                json.dump(data, f)
            code, output = run_checker(broken)
            if code == 0 or expected not in output:
                print("FAILED: %s: the checker said (exit %d) %r; expected "
                      "a failure naming %r" % (mutate.__name__, code, output,
                                               expected))
                return 1
            print("caught %s: %s" % (mutate.__name__, output))
        with open(path) as f:
            text = f.read()
        with open(broken, "w") as f:
            f.write(text[:len(text) // 2])
        code, output = run_checker(broken)
        if code == 0 or "not a whole trace" not in output:
            print("FAILED: a torn file passed: %r" % output)
            return 1
        print("caught a torn file: %s" % output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
