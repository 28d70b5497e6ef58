"""tools/experiment --seeds: the report over seeds (OUT/report/). Per scheme
and seed the figures come from OUT/seed<N>/<scheme>/ (summary.json,
fct/fct.csv, queue_trace.csv when traced); each table gives the median over
the seeds with the min-max beside it.

  table.md       counters (drops and where, PFC frames, BFC pauses and
                 resumes, ECN marks, DIBS detours, unfinished flows, the
                 most frames held in one host NIC), with a queue trace the
                 peak and time-average shared buffer of every switch, and
                 the FCT slowdown (p50, p99) per size bucket
  results.json   every seed's figures and the spreads
  slowdown.png   p50 and p99 slowdown per bucket and scheme (median over
                 seeds, bars min-max; hatched: includes unfinished flows)
  buffer.png     with a queue trace: each switch's shared buffer over time
                 under each scheme (the first seed)

FCT figures count every flow, an unfinished one with FCT = end of the run
(tools/fct): figures that include one are lower bounds, marked '>='.
"""

import json
import math
import os

from . import cli, counters, fct_report, spread, units
from .queue_trace import read_queue_trace

BUCKETS = [(0, 10_000, "<10KB"), (10_000, 100_000, "10KB-100KB"),
           (100_000, 1_000_000, "100KB-1MB"), (1_000_000, math.inf, ">=1MB")]
COLOURS = {"droptail": "tab:red", "pfc": "tab:blue", "bfc": "tab:green",
           "bfc-open-loop": "tab:gray", "bfc-stochastic": "tab:olive", "bfc-single": "tab:purple",
           "ecn": "tab:orange", "bfc+pfc": "tab:brown", "floodgate": "tab:cyan",
           "dibs": "tab:pink"}


def seed_dir(out, seed):
    return os.path.join(out, "seed%d" % seed)


def flow_stats(fct_csv):
    """Per bucket: flows, unfinished, p50 and p99 of the slowdown of every
    flow (the unfinished counted at the end of the run, as tools/fct does)."""
    rows = fct_report.read_fct_csv(fct_csv)
    out = {}
    for lo, hi, name in BUCKETS:
        st = fct_report.row_stats([r for r in rows if lo <= r["size"] < hi])
        out[name] = {"flows": st["count"], "unfinished": st["unfinished"],
                     "lower_bound": st["lower_bound"], "p50": st["p50"], "p99": st["p99"]}
    return out


def counter_stats(s):
    """A run's counters as the report shows them."""
    return {"drops": counters.total_drops(s), "drops_where": counters.drops_by_port(s),
            "pfc_frames": counters.total(s, "pfc_frames_sent"),
            "bfc_pause_resume_frames": counters.bfc_frames(s),
            "ecn_marks": counters.total(s, "ecn_marks"),
            "dibs_detours": counters.total(s, "dibs_detours"),
            "host_nic_peak_held_frames": max(
                (p.get("host_nic_peak_held_frames", 0) for _, p in counters.ports(s)), default=0),
            "max_shaper_lost_ms": counters.max_lost_ns(s) / 1e6}


def trace_stats(path, window_s=math.inf):
    """Peak and time-average shared buffer per switch from a queue trace
    (the average over the samples of the first window_s seconds: the
    workload, not the drain after it), and the trace itself."""
    buffer, queues, ports = read_queue_trace(path)
    peak = {sw: max((b for _, b in v), default=0) for sw, v in buffer.items()}
    mean = {}
    for sw, v in buffer.items():
        inside = [b for t, b in v if t <= window_s]
        mean[sw] = sum(inside) / len(inside) if inside else 0
    return {"peak_buffer_bytes": peak, "mean_buffer_bytes": mean}, (buffer, queues, ports)


def collect(schemes, seeds, out, window_s):
    """{scheme: {seed: figures}} of every run."""
    res = {}
    for seed in seeds:
        for s in schemes:
            d = os.path.join(seed_dir(out, seed), s)
            summary = cli.load_json(os.path.join(d, "summary.json"), "sluice summary")
            r = {"buckets": flow_stats(os.path.join(d, "fct", "fct.csv")),
                 "counters": counter_stats(summary)}
            trace = os.path.join(d, "queue_trace.csv")
            if os.path.exists(trace):
                r.update(trace_stats(trace, window_s)[0])
            res.setdefault(s, {})[seed] = r
    return res


def _where(cs):
    where = {}
    for x in cs:
        for port, reasons in x["drops_where"].items():
            for reason, n in reasons.items():
                where[(port, reason)] = where.get((port, reason), 0) + n
    return ", ".join("%s %s" % (p, reason) for (p, reason), _ in
                     sorted(where.items(), key=lambda kv: -kv[1])[:2]) or "-"


def tables(schemes, seeds, res, switches, note=None):
    """The report's text and the spreads behind it."""
    med = lambda v, fmt="%.0f": spread.text(v, fmt, "median")  # noqa: E731
    lines = ([note, ""] if note else []) + [
        "Median over seeds %s, min-max in brackets. FCT figures count every flow, an "
        "unfinished one with FCT = end of the run: '>=' marks lower bounds."
        % ",".join(map(str, seeds)), "",
        "| scheme | drops | where most | PFC frames | BFC pause+resume | ECN marks | "
        "DIBS detours | unfinished flows | most frames held in a host NIC |",
        "|---|---|---|---|---|---|---|---|---|"]
    agg = {}
    for s in schemes:
        runs = [res[s][seed] for seed in seeds]
        c = [r["counters"] for r in runs]
        unfinished = [sum(b["unfinished"] for b in r["buckets"].values()) for r in runs]
        row = {k: spread.stats([x[k] for x in c])
               for k in ("drops", "pfc_frames", "bfc_pause_resume_frames", "ecn_marks",
                         "dibs_detours", "host_nic_peak_held_frames")}
        row["unfinished"] = spread.stats(unfinished)
        agg[s] = row
        lines.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            s, med([x["drops"] for x in c]), _where(c), med([x["pfc_frames"] for x in c]),
            med([x["bfc_pause_resume_frames"] for x in c]), med([x["ecn_marks"] for x in c]),
            med([x["dibs_detours"] for x in c]), med(unfinished),
            med([x["host_nic_peak_held_frames"] for x in c])))
    traced = [s for s in schemes if all("peak_buffer_bytes" in res[s][seed] for seed in seeds)]
    if traced:
        lines += ["", "Shared buffer per switch (KB; from the queue trace; time average over "
                  "the workload's duration):", "",
                  "| scheme | " + " | ".join("%s peak | %s average" % (sw, sw) for sw in switches)
                  + " |", "|---|" + "---|---|" * len(switches)]
        for s in traced:
            runs = [res[s][seed] for seed in seeds]
            cells = []
            for sw in switches:
                peak = [r["peak_buffer_bytes"].get(sw, 0) / 1e3 for r in runs]
                mean = [r["mean_buffer_bytes"].get(sw, 0) / 1e3 for r in runs]
                agg[s].setdefault("peak_buffer_kb", {})[sw] = spread.stats(peak)
                agg[s].setdefault("mean_buffer_kb", {})[sw] = spread.stats(mean)
                cells += [med(peak), med(mean)]
            lines.append("| %s | %s |" % (s, " | ".join(cells)))
    lines += ["", "FCT slowdown:", "",
              "| scheme | bucket | flows per seed | p50 | p99 |", "|---|---|---|---|---|"]
    for s in schemes:
        for _, _, b in BUCKETS:
            bs = [res[s][seed]["buckets"][b] for seed in seeds]
            lower = any(x["lower_bound"] for x in bs)
            p50, p99 = [x["p50"] for x in bs], [x["p99"] for x in bs]
            agg[s].setdefault("buckets", {})[b] = {"p50": spread.stats(p50),
                                                   "p99": spread.stats(p99),
                                                   "lower_bound": lower}
            lb = ">=" if lower else ""
            lines.append("| %s | %s | %s | %s | %s |" % (
                s, b, spread.range_text([x["flows"] for x in bs]),
                "-" if spread.stats(p50) is None else lb + med(p50, "%.3g"),
                "-" if spread.stats(p99) is None else lb + med(p99, "%.3g")))
    return "\n".join(lines) + "\n", agg


def plot_slowdown(schemes, seeds, agg, path, title="", note=None):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    names = [b for _, _, b in BUCKETS]
    width = 0.8 / len(schemes)
    for ax, p in zip(axes, ("p50", "p99")):
        for i, s in enumerate(schemes):
            for j, b in enumerate(names):
                r = agg[s]["buckets"][b][p]
                if r is None:
                    continue
                # Hatched: the figure includes unfinished flows (a lower bound).
                ax.bar(j + (i - (len(schemes) - 1) / 2) * width, r["median"], width,
                       yerr=[[r["median"] - r["min"]], [r["max"] - r["median"]]], capsize=3,
                       color=COLOURS.get(s, "C%d" % i), alpha=0.85,
                       hatch="//" if agg[s]["buckets"][b]["lower_bound"] else None)
        ax.set_xticks(range(len(names)))
        ax.set_xticklabels(names)
        ax.set_yscale("log")
        ax.set_title("%s FCT slowdown" % p)
        ax.grid(True, axis="y", which="both", alpha=0.3)
    axes[0].set_ylabel("slowdown (median over seeds; bars: min-max)")
    axes[1].legend(handles=[Patch(color=COLOURS.get(s, "C%d" % i), alpha=0.85, label=s)
                            for i, s in enumerate(schemes)])
    fig.suptitle("%s%s%d seeds; hatched: includes unfinished flows counted at end of run "
                 "(lower bound)" % (note + "\n" if note else "", title + ": " if title else "",
                                    len(seeds)), color="red" if note else "black")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_buffer(schemes, seed, out, switches, path, window_s, title=""):
    """Each switch's shared buffer over the first window_s seconds, per
    scheme, from the first seed's queue traces."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(len(schemes), 1, figsize=(10, 2.3 * len(schemes)),
                             sharex=True, sharey=True, squeeze=False)
    axes = axes[:, 0]
    for ax, s in zip(axes, schemes):
        buffer = trace_stats(os.path.join(seed_dir(out, seed), s, "queue_trace.csv"))[1][0]
        for sw in switches:
            pts = [(t, b) for t, b in buffer.get(sw, []) if 0 <= t <= window_s]
            ax.plot([t * 1e3 for t, _ in pts], [b / 1e3 for _, b in pts], lw=0.8, label=sw)
        ax.set_title(s, fontsize=9, loc="left")
        ax.set_ylabel("buffer KB")
        ax.grid(True, alpha=0.3)
    axes[0].legend(fontsize=8, ncol=4, loc="upper right")
    axes[-1].set_xlabel("ms since replay start (seed %d)" % seed)
    fig.suptitle("%sshared-buffer use per switch" % (title + ": " if title else ""))
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write(args, out, conf, note=None):
    """OUT/report/ for the seeds run under OUT; returns the report's text."""
    schemes, seeds = args.schemes, args.seeds
    window_s = units.parse_time(args.duration) if args.duration else math.inf
    switches = [sw["name"] for sw in conf["switches"]]
    res = collect(schemes, seeds, out, window_s)
    text, agg = tables(schemes, seeds, res, switches, note)
    report = os.path.join(out, "report")
    os.makedirs(report, exist_ok=True)
    with open(os.path.join(report, "table.md"), "w") as f:
        f.write(text)
    with open(os.path.join(report, "results.json"), "w") as f:
        json.dump({"seeds": seeds, "schemes": schemes, "per_seed": res, "spread": agg},
                  f, indent=1, default=str)
    plot_slowdown(schemes, seeds, agg, os.path.join(report, "slowdown.png"), args.title, note)
    traced = [s for s in schemes if "peak_buffer_bytes" in res[s][seeds[0]]]
    if traced:
        plot_buffer(traced, seeds[0], out, switches, os.path.join(report, "buffer.png"),
                    min(window_s, args.plot_ms / 1e3), args.title)
    return text
