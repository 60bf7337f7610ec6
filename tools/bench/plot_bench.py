#!/usr/bin/env python3
"""Plots the figures of a hal-bench JSON file (docs/performance.md).

usage: plot_bench.py HAL_BENCH_JSON OUTPUT_DIR

Writes, for every figure of the file, the per-repetition times of the HAL
case beside its baseline (one strip each, the median marked), as
<key>.png; ratios.png: each figure's ratio of medians against its target
(where it has one); submit_vs_ops.png: the submit cost of a reused command
buffer against its ops, stream and graph strategies; and
submit_vs_parked.png: the cost of an empty submission against the
submissions parked on its queue. A file that is not hal-bench's JSON, or in
which no figure has a ratio, is refused with one line and status 1. Needs
matplotlib (Debian's python3-matplotlib).
"""
import json
import os
import sys
from statistics import median

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

# The cases behind each ratio key, as hal-bench names them.
FIGURES = {
    "signal_wake_vs_futex": ("BM_SignalWake_Hal", "BM_SignalWake_Futex"),
    "empty_submit_vs_vendor": ("BM_EmptySubmit_Hal", "BM_EmptySubmit_Vendor"),
    "submit_throughput_vs_vendor": ("BM_SubmitThroughput_Hal",
                                    "BM_SubmitThroughput_Vendor"),
    "graph_vs_stream_256": ("BM_SubmitOps_Graph/256", "BM_SubmitOps_Stream/256"),
    "parked_100k_vs_0": ("BM_SubmitParked/100000", "BM_SubmitParked/0"),
    "signal_wake_spin_vs_spin": ("BM_SignalWakeSpin_Hal", "BM_SignalWake_Spin"),
    "mlir_parallel_for_vs_mlir": ("BM_MlirParallelFor_Hal",
                                  "BM_MlirParallelFor_Mlir"),
    "alloca_vs_vendor_pool": ("BM_Alloca_Hal", "BM_Alloca_Vendor"),
    "file_read_vs_pread_copy": ("BM_FileRead_Hal", "BM_FileRead_PreadCopy"),
    "allreduce_busbw_vs_memcpy_2": ("BM_AllReduce_Hal/2",
                                    "BM_AllReduce_Memcpy/2"),
    "allreduce_busbw_vs_memcpy_4": ("BM_AllReduce_Hal/4",
                                    "BM_AllReduce_Memcpy/4"),
}


def plot_figure(key, figures, out_dir):
    hal_case, base_case = FIGURES[key]
    if hal_case not in figures or base_case not in figures:
        return None
    fig, ax = plt.subplots(figsize=(5, 3))
    for x, case in enumerate((hal_case, base_case)):
        samples = [s / 1000.0 for s in figures[case]["samples_ns"]]
        ax.scatter([x] * len(samples), samples, alpha=0.6, s=14)
        ax.hlines(median(samples), x - 0.25, x + 0.25, colors="black")
    ax.set_xticks([0, 1])
    ax.set_xticklabels(["HAL", "baseline"])
    ax.set_xlim(-0.6, 1.6)
    ax.set_ylim(bottom=0)
    ax.set_ylabel("µs per iteration (each repetition)")
    ax.set_title(key, fontsize=9)
    fig.tight_layout()
    path = os.path.join(out_dir, key + ".png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_ratios(data, out_dir):
    keys = [k for k in FIGURES if data["ratios"].get(k) is not None]
    fig, ax = plt.subplots(figsize=(7, 3.4))
    ratios = [data["ratios"][k] for k in keys]
    # Figures only reported have no target to mark.
    marked = [(x, data["targets"][k]["target"]) for x, k in enumerate(keys)
              if data["targets"][k]["target"] is not None]
    ax.bar(range(len(keys)), ratios, color="tab:blue", label="ratio")
    ax.scatter([m[0] for m in marked], [m[1] for m in marked],
               color="tab:red", marker="_", s=400, label="target")
    # A figure whose higher ratio is better compares rates (HAL's over the
    # baseline's), the others times: the label says which bound holds.
    labels = [k + (" (≥)" if data["targets"][k]["higher_is_better"] else
                   " (≤)") for k in keys]
    ax.set_xticks(range(len(keys)))
    ax.set_xticklabels(labels, rotation=25, ha="right", fontsize=7)
    ax.set_ylabel("HAL / baseline, medians\n(time; rate where ≥)",
                  fontsize=8)
    ax.legend(fontsize=7)
    fig.tight_layout()
    path = os.path.join(out_dir, "ratios.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def series(figures):
    """Medians (µs) of |figures| and their min-max as error bars."""
    medians = [f["median_ns"] / 1000.0 for f in figures]
    low = [m - f["min_ns"] / 1000.0 for m, f in zip(medians, figures)]
    high = [f["max_ns"] / 1000.0 - m for m, f in zip(medians, figures)]
    return medians, [low, high]


def plot_ops(figures, out_dir):
    fig, ax = plt.subplots(figsize=(5, 3))
    plotted = False
    for strategy in ("Stream", "Graph"):
        points = []
        for name, figure in figures.items():
            prefix = "BM_SubmitOps_%s/" % strategy
            if name.startswith(prefix) and figure["median_ns"] is not None:
                points.append((int(name[len(prefix):]), figure))
        if not points:
            continue
        points.sort()
        medians, bars = series([p[1] for p in points])
        ax.errorbar([p[0] for p in points], medians, yerr=bars, marker="o",
                    capsize=3, label=strategy.lower() + " driver")
        plotted = True
    if not plotted:
        plt.close(fig)
        return None
    ax.set_xscale("log", base=2)
    ax.set_xlabel("fills per command buffer")
    ax.set_ylabel("µs per submit + wait")
    ax.legend(fontsize=7)
    fig.tight_layout()
    path = os.path.join(out_dir, "submit_vs_ops.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_parked(figures, out_dir):
    points = sorted((int(name.split("/")[1]), figure)
                    for name, figure in figures.items()
                    if name.startswith("BM_SubmitParked/") and
                    figure["median_ns"] is not None)
    if not points:
        return None
    fig, ax = plt.subplots(figsize=(5, 3))
    xs = range(len(points))
    medians, bars = series([p[1] for p in points])
    ax.errorbar(xs, medians, yerr=bars, marker="o", capsize=3)
    ax.set_xticks(list(xs))
    ax.set_xticklabels(["{:,}".format(p[0]) for p in points])
    ax.set_ylim(bottom=0)
    ax.set_xlabel("submissions parked on the queue")
    ax.set_ylabel("µs per empty submit + wait")
    fig.tight_layout()
    path = os.path.join(out_dir, "submit_vs_parked.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def why_not_hal_bench(data):
    """What in |data| is not as hal-bench writes it, or None."""
    if not isinstance(data, dict) or not all(
            isinstance(data.get(key), dict)
            for key in ("ratios", "targets", "figures")):
        return 'not an object with "ratios", "targets" and "figures"'
    for key, ratio in data["ratios"].items():
        if key not in FIGURES or ratio is None:
            continue
        target = data["targets"].get(key)
        if not is_number(ratio):
            return "ratio %s is %r, not a number" % (key, ratio)
        if not isinstance(target, dict) or not isinstance(
                target.get("higher_is_better"), bool) or not (
                target.get("target") is None or is_number(target["target"])):
            return "target of %s is %r" % (key, target)
    for case, figure in data["figures"].items():
        if not isinstance(figure, dict) or not isinstance(
                figure.get("samples_ns"), list) or not all(
                is_number(v) for v in figure["samples_ns"]) or not all(
                figure.get(k) is None or is_number(figure[k])
                for k in ("median_ns", "min_ns", "max_ns")):
            return "figure %s is %r" % (case, figure)
    return None


def load(path):
    """hal-bench's JSON at |path|, or None after saying why it is not."""
    try:
        with open(path) as f:
            data = json.load(f)
    except (OSError, ValueError) as error:
        print("plot_bench.py: %s: %s" % (path, error), file=sys.stderr)
        return None
    why = why_not_hal_bench(data)
    if why:
        print("plot_bench.py: %s: not hal-bench's JSON: %s" % (path, why),
              file=sys.stderr)
        return None
    if not any(data["ratios"].get(key) is not None for key in FIGURES):
        print("plot_bench.py: %s: no figure has a ratio (a run whose filter "
              "left them all out?): nothing to plot" % path, file=sys.stderr)
        return None
    return data


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    data = load(sys.argv[1])
    if data is None:
        return 1
    try:
        os.makedirs(sys.argv[2], exist_ok=True)
        written = [plot_figure(key, data["figures"], sys.argv[2])
                   for key in FIGURES]
        written.append(plot_ratios(data, sys.argv[2]))
        written.append(plot_ops(data["figures"], sys.argv[2]))
        written.append(plot_parked(data["figures"], sys.argv[2]))
    except OSError as error:
        print("plot_bench.py: %s: %s" % (sys.argv[2], error),
              file=sys.stderr)
        return 1
    for path in written:
        if path:
            print("wrote", path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
