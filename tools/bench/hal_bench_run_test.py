#!/usr/bin/env python3
# Copyright 2026 The HAL Authors.
#
# A short run of hal-bench, checked from its JSON (docs/performance.md):
# the repetitions run in rounds, each figure's two cases one right after
# the other, the HAL's first in even rounds and the baseline's in odd ones;
# the ratio is the ratio of the medians; a run of fewer than 15 repetitions
# is flagged noisy and not judged; a filter that matches no case is refused
# (status 2) and writes no JSON; the plot script draws the file.
# The environment is the benchmark's (meson.build).
#
#   hal_bench_run_test.py HAL_BENCH PLOT_SCRIPT OUT_DIR

import json
import os
import shutil
import subprocess
import sys
from statistics import median

REPETITIONS = 3
# The figures of the run: key -> (HAL case, baseline case).
FIGURES = {
    "signal_wake_vs_futex": ("BM_SignalWake_Hal", "BM_SignalWake_Futex"),
    "empty_submit_vs_vendor": ("BM_EmptySubmit_Hal", "BM_EmptySubmit_Vendor"),
}


def run(command, timeout=240):
    return subprocess.run(command, capture_output=True, text=True,
                          timeout=timeout)


def fail(what, result=None):
    if result is not None:
        what += "\n--- stdout\n%s--- stderr\n%s" % (result.stdout,
                                                    result.stderr)
    sys.exit(what)


def check_rounds(hal_bench, out_dir):
    json_path = os.path.join(out_dir, "rounds.json")
    # The space-separated form of --json, as the usage writes it.
    result = run([hal_bench,
                  "--benchmark_filter=^BM_(SignalWake|EmptySubmit)_(Hal|Futex|"
                  "Vendor)/",
                  "--repetitions=%d" % REPETITIONS,
                  "--benchmark_min_time=0.01", "--json", json_path])
    if result.returncode != 0:
        fail("hal-bench exited %d" % result.returncode, result)
    with open(json_path) as f:
        report = json.load(f)
    if report.get("repetitions") != REPETITIONS:
        fail("repetitions: %r, expected %d" % (report.get("repetitions"),
                                               REPETITIONS))
    for key, (hal_case, base_case) in FIGURES.items():
        hal, base = report["figures"][hal_case], report["figures"][base_case]
        for case, figure in ((hal_case, hal), (base_case, base)):
            if len(figure["samples_ns"]) != REPETITIONS or \
                    len(figure["order"]) != REPETITIONS:
                fail("%s: %d samples, %d places, expected %d" %
                     (case, len(figure["samples_ns"]), len(figure["order"]),
                      REPETITIONS))
        # A B, B A, ...: the i-th repetitions of the two sides run one
        # right after the other, the HAL's first in even rounds.
        for i, (a, b) in enumerate(zip(hal["order"], base["order"])):
            if b != (a + 1 if i % 2 == 0 else a - 1):
                fail("%s: repetition %d of the HAL case ran at %d, of the "
                     "baseline at %d: not one right after the other, %s "
                     "(orders %r and %r)" %
                     (key, i, a, b,
                      "the HAL's first" if i % 2 == 0 else "the baseline's "
                      "first", hal["order"], base["order"]))
        expected = median(hal["samples_ns"]) / median(base["samples_ns"])
        ratio = report["ratios"][key]
        if abs(ratio - expected) > 1e-3 * expected:
            fail("%s: ratio %r, the medians' ratio is %r" %
                 (key, ratio, expected))
        if key not in report["noisy"]:
            fail("%s: %d repetitions, yet not flagged noisy" %
                 (key, REPETITIONS))
        if report["targets"][key]["met"] is not None:
            fail("%s: judged (met: %r) on %d repetitions" %
                 (key, report["targets"][key]["met"], REPETITIONS))
    if "unjudged (%d of 15 pairs) (noisy)" % REPETITIONS not in result.stdout:
        fail("the table does not say the ratios are unjudged", result)
    # Every place in the run is one repetition's.
    places = sorted(p for figure in report["figures"].values()
                    for p in figure["order"])
    if places != list(range(len(places))):
        fail("the places of the repetitions are not 0..%d: %r" %
             (len(places) - 1, places))
    return json_path


def check_no_match(hal_bench, out_dir):
    json_path = os.path.join(out_dir, "no-match.json")
    result = run([hal_bench, "--benchmark_filter=NoSuchCase",
                  "--json=" + json_path])
    if result.returncode != 2 or "matches no case" not in result.stderr:
        fail("a filter that matches nothing: status %d, expected 2 and "
             "\"matches no case\"" % result.returncode, result)
    if os.path.exists(json_path):
        fail("a filter that matches nothing left %s" % json_path)


def plotting_python():
    """A Python with matplotlib: this one, else Debian's."""
    for python in (sys.executable, "/usr/bin/python3"):
        if python and os.path.exists(python) and run(
                [python, "-c", "import matplotlib"]).returncode == 0:
            return python
    fail("no Python here imports matplotlib (scripts/bootstrap.sh installs "
         "python3-matplotlib)")


def check_plots(plot_script, json_path, out_dir):
    python = plotting_python()
    plots = os.path.join(out_dir, "plots")
    result = run([python, plot_script, json_path, plots])
    if result.returncode != 0:
        fail("plot_bench.py exited %d" % result.returncode, result)
    for name in list(FIGURES) + ["ratios"]:
        path = os.path.join(plots, name + ".png")
        if not os.path.isfile(path) or os.path.getsize(path) == 0:
            fail("plot_bench.py did not write %s" % path, result)
    # A file that is not hal-bench's is refused with a line, not a trace.
    bad = os.path.join(out_dir, "not-hal-bench.json")
    for text in ('{}', '{"ratios": {"signal_wake_vs_futex": 1.0}, '
                 '"targets": {}, "figures": {}}'):
        with open(bad, "w") as f:
            f.write(text + "\n")
        result = run([python, plot_script, bad, os.path.join(out_dir, "bad")])
        if result.returncode != 1 or "Traceback" in result.stderr or \
                "not hal-bench's JSON" not in result.stderr:
            fail("plot_bench.py on %s: status %d" % (text, result.returncode),
                 result)


def main():
    hal_bench, plot_script, out_dir = sys.argv[1:4]
    shutil.rmtree(out_dir, ignore_errors=True)
    os.makedirs(out_dir)
    json_path = check_rounds(hal_bench, out_dir)
    check_no_match(hal_bench, out_dir)
    check_plots(plot_script, json_path, out_dir)
    print("rounds A B, B A, %d repetitions unjudged, no-match refused, "
          "plots drawn" % REPETITIONS)
    return 0


if __name__ == "__main__":
    sys.exit(main())
