"""Writes what tools/fct produces: per-flow CSV, summary table (text and JSON),
PNG plots, and the side-by-side comparison of several runs."""

import csv
import json
import os

from . import fct_analysis as fa
from .units import format_ns

FCT_FIELDS = ["flow_id", "src", "dst", "size", "packets", "is_incast", "size_bucket",
              "size_bin", "start_time", "finish_time", "fct_seconds", "ideal_seconds",
              "slowdown", "finished", "censored", "received_packets", "lost_packets",
              "duplicates", "reordered", "ce_marked", "clamped"]
CENSORED_TEXT = "counted with FCT = end of observation"


def _size_text(n):
    for unit, div in (("MB", 10**6), ("KB", 10**3)):
        if n >= div:
            return ("%.3g" % (n / div)) + unit
    return "%dB" % n


def summarise(results, bins, tops, label, params, note=None):
    """Statistics per size bucket, per equal-count bin and overall. Every
    flow counts: an unfinished one with its censored FCT (a lower bound)."""
    missing = sum(1 for r in results if r.slowdown is None)
    if missing:
        raise ValueError("%d unfinished flows have no end of observation to be counted at "
                         "(give --end-of-run)" % missing)
    by_bucket = [dict(bucket=name, **fa.result_stats(
        [r for r in results if fa.bucket_of(r.spec.size) == i]))
        for i, (_, _, name) in enumerate(fa.BUCKETS)]
    by_bin = [dict(bin=b, max_size=top, **fa.result_stats(
        [r for r, rb in zip(results, bins) if rb == b])) for b, top in enumerate(tops)]
    done = sum(1 for r in results if r.finished)
    return {
        "label": label,
        "note": note,
        "params": params,
        "flows": len(results),
        "finished": done,
        "unfinished": len(results) - done,
        "lost_packets": sum(r.lost for r in results),
        "duplicate_packets": sum(r.duplicates for r in results),
        "reordered_packets": sum(r.reordered for r in results),
        "ce_marked_packets": sum(r.ce for r in results),
        "clamped_slowdowns": sum(1 for r in results if r.clamped),
        "overall": fa.result_stats(results),
        "buckets": by_bucket,
        "size_bins": by_bin,
    }


def fmt_stat(v, lower_bound=False):
    """A slowdown figure; '>=' when it includes censored flows."""
    if v is None:
        return "-"
    return (">=" if lower_bound else "") + "%.2f" % v


def headline(stats):
    """'p99 >= 12.34, 3 flows unfinished counted at end of run'."""
    if stats["p99"] is None:
        return "no flows"
    if stats["unfinished"]:
        return "p99 >= %.2f, %d flows unfinished counted at end of run" % (
            stats["p99"], stats["unfinished"])
    return "p99 %.2f, every flow finished" % stats["p99"]


def _rows(summary):
    return summary["buckets"] + [dict(summary["overall"], bucket="all")]


def summary_table(summary):
    lines = [summary["note"]] if summary.get("note") else []
    lines += ["FCT slowdown, %s: %d flows, %d finished, %d unfinished, %d packets lost, "
              "%d duplicates, %d CE-marked, %d slowdowns clamped to 1"
              % (summary["label"], summary["flows"], summary["finished"], summary["unfinished"],
                 summary["lost_packets"], summary["duplicate_packets"],
                 summary["ce_marked_packets"], summary["clamped_slowdowns"]),
              "unfinished flows are %s: '>=' marks lower bounds" % CENSORED_TEXT,
              "%-12s %7s %10s %10s %10s %10s %10s" % ("size", "flows", "unfinished", "p50", "p95",
                                                     "p99", "mean")]
    for b in _rows(summary):
        lb = b["lower_bound"]
        lines.append("%-12s %7d %10d %10s %10s %10s %10s"
                     % (b["bucket"], b["count"], b["unfinished"], fmt_stat(b["p50"], lb),
                        fmt_stat(b["p95"], lb), fmt_stat(b["p99"], lb), fmt_stat(b["mean"], lb)))
    lines.append("%s: %s" % (summary["label"], headline(summary["overall"])))
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
                        int(r.finished), int(r.censored), r.received, r.lost, r.duplicates,
                        r.reordered, r.ce, int(r.clamped)])


def read_fct_csv(path):
    """The rows of a fct.csv for tools that compute their own figures from
    it: size, src, dst, finished, censored, fct_seconds and slowdown parsed;
    unfinished flows carry their censored FCT. A file from before that
    (unfinished flows without an FCT) is refused, not silently left out."""
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if rows and "censored" not in rows[0]:
        raise ValueError("%s: written by an older tools/fct that left unfinished flows out; "
                         "analyse that run again" % path)
    for r in rows:
        if not r["slowdown"]:
            raise ValueError("%s: flow %s has no FCT (no end of observation)" % (path, r["flow_id"]))
        r.update(size=int(r["size"]), finished=r["finished"] == "1", censored=r["censored"] == "1",
                 fct_seconds=float(r["fct_seconds"]), slowdown=float(r["slowdown"]))
    return rows


def row_stats(rows):
    """fa.stats() of read_fct_csv rows: censored flows included, counted."""
    return fa.stats([r["slowdown"] for r in rows], sum(1 for r in rows if r["censored"]))


def write_run(results, bins, tops, label, params, out_dir, note=None):
    os.makedirs(out_dir, exist_ok=True)
    write_fct_csv(results, bins, os.path.join(out_dir, "fct.csv"))
    summary = summarise(results, bins, tops, label, params, note)
    with open(os.path.join(out_dir, "summary.json"), "w") as f:
        json.dump(summary, f, indent=2)
        f.write("\n")
    table = summary_table(summary)
    with open(os.path.join(out_dir, "summary.txt"), "w") as f:
        f.write(table)
    plot_runs([summary], os.path.join(out_dir, "slowdown_by_size.png"),
              os.path.join(out_dir, "slowdown_buckets.png"), note)
    return summary, table


def load_run(run_dir):
    path = os.path.join(run_dir, "summary.json")
    with open(path) as f:
        summary = json.load(f)
    if "lower_bound" not in summary.get("overall", {}):
        raise ValueError("%s: written by an older tools/fct that left unfinished flows out; "
                         "analyse that run again" % path)
    return summary


_STYLES = {50: "-", 95: "--", 99: ":"}


def _title(ax, fig, summaries, note):
    ax.set_title("all flows; unfinished %s (lower bounds, open markers/hatched): %s"
                 % (CENSORED_TEXT, ", ".join("%s %d" % (s["label"], s["unfinished"])
                                              for s in summaries)), fontsize=8)
    if note:
        fig.suptitle(note, color="red", fontsize=11, fontweight="bold")


def plot_runs(summaries, by_size_path, buckets_path, note=None):
    """Slowdown (log y) against flow-size bin, and per fixed size bucket; one
    colour per run, line style per percentile. Points and bars that include
    censored flows (lower bounds) are drawn open or hatched."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for k, s in enumerate(summaries):
        colour = colours[k % len(colours)]
        bins = s["size_bins"]
        for p in fa.PERCENTILES:
            pts = [(b["bin"], b["p%d" % p], b["lower_bound"]) for b in bins
                   if b["p%d" % p] is not None]
            ax.plot([x for x, _, _ in pts], [y for _, y, _ in pts], _STYLES[p], color=colour,
                    label="%s p%d" % (s["label"], p))
            for x, y, lower in pts:
                ax.plot([x], [y], "^" if lower else "o", markersize=4 if lower else 3,
                        color=colour, markerfacecolor="none" if lower else colour)
    ref = summaries[0]["size_bins"]
    ax.set_xticks([b["bin"] for b in ref])
    ax.set_xticklabels([_size_text(b["max_size"]) for b in ref], rotation=45, ha="right")
    ax.set_xlabel("flow size (upper edge of equal-count bin, %d bins)" % len(ref))
    _title(ax, fig, summaries, note)
    _finish(ax, fig, by_size_path)

    fig, ax = plt.subplots(figsize=(8, 4.5))
    names = [b[2] for b in fa.BUCKETS]
    width = 0.8 / max(1, len(summaries))
    legend = []  # plain patches: a hatched bar would read as "lower bound" there
    for k, s in enumerate(summaries):
        for p, alpha in ((50, 1.0), (99, 0.45)):
            colour = colours[k % len(colours)]
            legend.append(Patch(color=colour, alpha=alpha, label="%s p%d" % (s["label"], p)))
            for i, b in enumerate(s["buckets"]):
                ax.bar(i - 0.4 + width * (k + 0.5), b["p%d" % p] or 0, width, color=colour,
                       alpha=alpha, hatch="//" if b["lower_bound"] else None,
                       zorder=2 if p == 50 else 1)
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(names)
    ax.set_xlabel("flow size bucket (p50 solid over p99 light)")
    _title(ax, fig, summaries, note)
    _finish(ax, fig, buckets_path, legend)


def _finish(ax, fig, path, handles=None):
    import matplotlib.pyplot as plt
    ax.set_yscale("log")
    ax.set_ylabel("FCT slowdown")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(handles=handles, fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def compare(run_dirs, labels, out_dir, note=None):
    """compare.{txt,csv} and the two figures of several runs. Notes (the
    given one, then each run's own) head the text and the figures."""
    summaries = [load_run(d) for d in run_dirs]
    for s, label in zip(summaries, labels or []):
        s["label"] = label
    notes = ([note] if note else []) + ["%s: %s" % (s["label"], s["note"])
                                         for s in summaries if s.get("note")]
    os.makedirs(out_dir, exist_ok=True)
    plot_runs(summaries, os.path.join(out_dir, "compare_by_size.png"),
              os.path.join(out_dir, "compare_buckets.png"), "; ".join(notes) or None)
    head = ["run", "bucket", "flows", "unfinished", "p50", "p95", "p99", "mean"]
    csv_rows, text_rows = [head + ["lower_bound"]], [head]
    for s in summaries:
        for b in _rows(s):
            lb = b["lower_bound"]
            stat = [b["p50"], b["p95"], b["p99"], b["mean"]]
            csv_rows.append([s["label"], b["bucket"], b["count"], b["unfinished"]] +
                            [fmt_stat(v) for v in stat] + [int(lb)])
            text_rows.append([s["label"], b["bucket"], b["count"], b["unfinished"]] +
                             [fmt_stat(v, lb) for v in stat])
    with open(os.path.join(out_dir, "compare.csv"), "w", newline="") as f:
        csv.writer(f, lineterminator="\n").writerows(csv_rows)
    width = max(len(str(r[0])) for r in text_rows) + 2
    lines = notes + ["unfinished flows are %s: '>=' marks lower bounds" % CENSORED_TEXT]
    lines += [("%-*s %-12s %6s %10s %10s %10s %10s %10s" % ((width,) + tuple(r)))
              for r in text_rows]
    lines += ["%s: %s" % (s["label"], headline(s["overall"])) for s in summaries]
    text = "\n".join(lines) + "\n"
    with open(os.path.join(out_dir, "compare.txt"), "w") as f:
        f.write(text)
    return text
