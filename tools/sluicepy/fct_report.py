"""Writes what tools/fct produces: per-flow CSV, summary table (text and JSON),
PNG plots, and the side-by-side comparison of several runs."""

import csv
import json
import os

from . import fct_analysis as fa
from .units import format_ns

FCT_FIELDS = ["flow_id", "src", "dst", "size", "packets", "is_incast", "size_bucket",
              "size_bin", "start_time", "finish_time", "fct_seconds", "ideal_seconds",
              "slowdown", "finished", "received_packets", "lost_packets", "duplicates",
              "reordered", "ce_marked", "clamped"]


def _size_text(n):
    for unit, div in (("MB", 10**6), ("KB", 10**3)):
        if n >= div:
            return ("%.3g" % (n / div)) + unit
    return "%dB" % n


def summarise(results, bins, tops, label, params):
    done = [r for r in results if r.finished]
    by_bucket = []
    for i, (lo, hi, name) in enumerate(fa.BUCKETS):
        sd = [r.slowdown for r in done if fa.bucket_of(r.spec.size) == i]
        unfinished = sum(1 for r in results if not r.finished and fa.bucket_of(r.spec.size) == i)
        by_bucket.append(dict(bucket=name, unfinished=unfinished, **fa.stats(sd)))
    by_bin = []
    for b, top in enumerate(tops):
        sd = [r.slowdown for r, rb in zip(results, bins) if rb == b and r.finished]
        by_bin.append(dict(bin=b, max_size=top, **fa.stats(sd)))
    return {
        "label": label,
        "params": params,
        "flows": len(results),
        "finished": len(done),
        "unfinished": len(results) - len(done),
        "lost_packets": sum(r.lost for r in results),
        "duplicate_packets": sum(r.duplicates for r in results),
        "reordered_packets": sum(r.reordered for r in results),
        "ce_marked_packets": sum(r.ce for r in results),
        "clamped_slowdowns": sum(1 for r in results if r.clamped),
        "overall": fa.stats([r.slowdown for r in done]),
        "buckets": by_bucket,
        "size_bins": by_bin,
    }


def _fmt(v):
    return "-" if v is None else "%.2f" % v


def summary_table(summary):
    lines = ["FCT slowdown, %s: %d flows, %d finished, %d unfinished, %d packets lost, "
             "%d duplicates, %d CE-marked, %d slowdowns clamped to 1"
             % (summary["label"], summary["flows"], summary["finished"], summary["unfinished"],
                summary["lost_packets"], summary["duplicate_packets"],
                summary["ce_marked_packets"], summary["clamped_slowdowns"]),
             "%-12s %7s %10s %8s %8s %8s %8s" % ("size", "flows", "unfinished", "p50", "p95", "p99", "mean")]
    for b in summary["buckets"] + [dict(bucket="all", unfinished=summary["unfinished"],
                                        **summary["overall"])]:
        lines.append("%-12s %7d %10d %8s %8s %8s %8s"
                     % (b["bucket"], b["count"], b["unfinished"], _fmt(b["p50"]),
                        _fmt(b["p95"]), _fmt(b["p99"]), _fmt(b["mean"])))
    return "\n".join(lines) + "\n"


def write_fct_csv(results, bins, path):
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(FCT_FIELDS)
        for r, b in zip(results, bins):
            s = r.spec
            w.writerow([s.flow_id, s.src, s.dst, s.size, s.packets, int(s.is_incast),
                        fa.BUCKETS[fa.bucket_of(s.size)][2], b, format_ns(r.start_ns),
                        "" if r.finish_ns is None else format_ns(r.finish_ns),
                        "" if r.fct_ns is None else "%.9f" % (r.fct_ns / 1e9),
                        "%.9f" % (r.ideal_ns / 1e9),
                        "" if r.slowdown is None else "%.6f" % r.slowdown,
                        int(r.finished), r.received, r.lost, r.duplicates, r.reordered,
                        r.ce, int(r.clamped)])


def write_run(results, bins, tops, label, params, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    write_fct_csv(results, bins, os.path.join(out_dir, "fct.csv"))
    summary = summarise(results, bins, tops, label, params)
    with open(os.path.join(out_dir, "summary.json"), "w") as f:
        json.dump(summary, f, indent=2)
        f.write("\n")
    table = summary_table(summary)
    with open(os.path.join(out_dir, "summary.txt"), "w") as f:
        f.write(table)
    plot_runs([summary], os.path.join(out_dir, "slowdown_by_size.png"),
              os.path.join(out_dir, "slowdown_buckets.png"))
    return summary, table


def load_run(run_dir):
    with open(os.path.join(run_dir, "summary.json")) as f:
        return json.load(f)


_STYLES = {50: "-", 95: "--", 99: ":"}


def plot_runs(summaries, by_size_path, buckets_path):
    """Slowdown (log y) against flow-size bin, and per fixed size bucket; one
    colour per run, line style per percentile."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for k, s in enumerate(summaries):
        bins = s["size_bins"]
        for p in fa.PERCENTILES:
            xs = [b["bin"] for b in bins if b["p%d" % p] is not None]
            ys = [b["p%d" % p] for b in bins if b["p%d" % p] is not None]
            ax.plot(xs, ys, _STYLES[p], marker="o", markersize=3, color=colours[k % len(colours)],
                    label="%s p%d" % (s["label"], p))
    ref = summaries[0]["size_bins"]
    ax.set_xticks([b["bin"] for b in ref])
    ax.set_xticklabels([_size_text(b["max_size"]) for b in ref], rotation=45, ha="right")
    ax.set_xlabel("flow size (upper edge of equal-count bin, %d bins)" % len(ref))
    ax.set_title("finished flows only; unfinished: " + ", ".join(
        "%s %d" % (s["label"], s["unfinished"]) for s in summaries), fontsize=9)
    _finish(ax, fig, by_size_path)

    fig, ax = plt.subplots(figsize=(8, 4.5))
    names = [b[2] for b in fa.BUCKETS]
    width = 0.8 / max(1, len(summaries))
    for k, s in enumerate(summaries):
        for p, alpha in ((50, 1.0), (99, 0.45)):
            ys = [b["p%d" % p] or 0 for b in s["buckets"]]
            xs = [i - 0.4 + width * (k + 0.5) for i in range(len(names))]
            ax.bar(xs, ys, width, color=colours[k % len(colours)], alpha=alpha,
                   label="%s p%d" % (s["label"], p), zorder=2 if p == 50 else 1)
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(names)
    ax.set_xlabel("flow size bucket (p50 solid over p99 light)")
    _finish(ax, fig, buckets_path)


def _finish(ax, fig, path):
    import matplotlib.pyplot as plt
    ax.set_yscale("log")
    ax.set_ylabel("FCT slowdown")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def compare(run_dirs, labels, out_dir):
    summaries = [load_run(d) for d in run_dirs]
    for s, label in zip(summaries, labels or []):
        s["label"] = label
    os.makedirs(out_dir, exist_ok=True)
    plot_runs(summaries, os.path.join(out_dir, "compare_by_size.png"),
              os.path.join(out_dir, "compare_buckets.png"))
    rows = [["run", "bucket", "flows", "unfinished", "p50", "p95", "p99", "mean"]]
    for s in summaries:
        for b in s["buckets"] + [dict(bucket="all", unfinished=s["unfinished"], **s["overall"])]:
            rows.append([s["label"], b["bucket"], b["count"], b["unfinished"],
                         _fmt(b["p50"]), _fmt(b["p95"]), _fmt(b["p99"]), _fmt(b["mean"])])
    with open(os.path.join(out_dir, "compare.csv"), "w", newline="") as f:
        csv.writer(f, lineterminator="\n").writerows(rows)
    width = max(len(str(r[0])) for r in rows) + 2
    text = "\n".join(("%-*s %-12s %6s %10s %8s %8s %8s %8s" % ((width,) + tuple(r))) for r in rows) + "\n"
    with open(os.path.join(out_dir, "compare.txt"), "w") as f:
        f.write(text)
    return text
