#!/usr/bin/env python3
"""One track of a HAL_TRACE file, for viewers that show one thread at a time.

usage: trace_track.py TRACE.json TRACK_NAME OUT.json [FROM_MS TO_MS]

Writes the spans (ph "X") of the track named TRACK_NAME ("cuda_stream:0:q1
device", "hal-run", ...) as begin/end pairs (ph "B"/"E") in nesting order.
Perfetto UI and chrome://tracing read HAL_TRACE files as they are;
speedscope pairs the end of a span with the last begin, so spans that share
a boundary (a command buffer's last op ends when the command buffer does)
must come out child-first at their end and parent-first at their start,
which the pairs here do. FROM_MS and TO_MS keep the spans that start in
that window, in ms from the track's first span. docs/tracing.md shows the
result.
"""
import json
import sys


def main():
    if len(sys.argv) not in (4, 6):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    source, track, target = sys.argv[1:4]
    with open(source) as f:
        events = json.load(f)["traceEvents"]
    tids = [e["tid"] for e in events
            if e.get("ph") == "M" and e["args"].get("name") == track]
    if not tids:
        print("trace_track: no track named %r" % track, file=sys.stderr)
        return 1
    spans = [e for e in events if e.get("ph") == "X" and e["tid"] in tids]
    if len(sys.argv) == 6 and spans:
        first = min(e["ts"] for e in spans)
        low, high = (first + float(v) * 1000.0 for v in sys.argv[4:6])
        spans = [e for e in spans if low <= e["ts"] < high]
    # At a shared start the parent opens first: the longer span, and at
    # equal lengths the submission, then its command buffer, then the op.
    rank = {"submission": 0, "command buffer": 1}
    spans.sort(key=lambda e: (e["ts"], -e["dur"], rank.get(e["name"], 2)))
    out = [{"ph": "M", "name": "thread_name", "pid": 1, "tid": 1,
            "args": {"name": track}}]
    stack = []  # the ends of the open spans
    for e in spans:
        while stack and stack[-1][0] <= e["ts"]:
            out.append(stack.pop()[1])  # innermost closes first
        out.append({"ph": "B", "name": e["name"], "cat": e.get("cat", ""),
                    "pid": 1, "tid": 1, "ts": e["ts"], "args": e["args"]})
        # A child never ends after its parent in the output, even when the
        # printed times round it a nanosecond past.
        end = e["ts"] + e["dur"]
        if stack:
            end = min(end, stack[-1][0])
        stack.append((end, {"ph": "E", "name": e["name"], "pid": 1, "tid": 1,
                            "ts": end}))
    while stack:
        out.append(stack.pop()[1])
    with open(target, "w") as f:
        json.dump({"traceEvents": out}, f)
    print("trace_track: %d spans of %s to %s" % (len(spans), track, target))
    return 0


if __name__ == "__main__":
    sys.exit(main())
