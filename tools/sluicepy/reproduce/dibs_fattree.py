"""DIBS sections 5.3-5.4.1 and 5.7 (Figs. 7 and 13): the k = 8 fat-tree
with DCTCP hosts, background flows plus degree-40 queries, with and without
DIBS, in exact fabric time (docs/mechanisms/dibs-fattree.md).

    tools/reproduce dibs-fattree [--fabric-ms 300] [--seeds 1] [--bg-sweep 120ms,40ms,20ms]
                                 [--qps-sweep 2000,10000] [--size-sweep 50KB,160KB]
                                 [--out runs/reproduce/dibs-fattree]

The fabric is conf/fabrics/dibs-fattree-k8.yaml: 128 hosts, 80 switches,
1 Gb/s links, 100-frame port buffers, flow-level ECMP. Every host runs
sluice's DCTCP (docs/transports.md): initial window 10, minimum RTO
--min-rto (10 ms, Table 1), 1444-byte segments (1514-byte frames, the
1500-byte MTU), and the switches mark ECN step at K = 20 frames
(30,280 B). Two schemes:

  dctcp  marking only, drop-tail at the buffer; fast retransmit on (the
         paper turns it off only for DIBS, section 5.3);
  dibs   the same marking, and a packet its port's buffer refuses is
         detoured to a random other switch-facing port that admits it
         (and marked CE); fast retransmit off (sections 4 and 5.3).

Traffic (seeded; the same flows for both schemes): every host starts a
background flow after each exponential gap of mean --bg-interarrival
(120 ms), to a random other host, its size drawn from --cdf (the DCTCP web
search distribution); and --qps queries per second (Poisson) arrive, each
at a random target that --degree (40) random other hosts answer at once
with --response-size (20 KB) each. Arrivals for --fabric-ms, then
--drain-ms more for the flows to finish.

Figures, every query and every flow counted: QCT of a query = last
response's completion (the ACK of its last byte at its sender) minus the
query's arrival; a query with an unfinished response is infinite. The
paper's QCT figure is the 99th percentile (nearest rank here). Background
FCT: mean and p99 of all background flows, and p99 of the 1-10 KB ones (the
paper's background metric, section 5.3); an unfinished flow counts with
its time until the end of the run, and figures with any are lower bounds
('>=').

--bg-sweep repeats both schemes at other background inter-arrival times
(the paper's Fig. 7 axis, 10-120 ms), --qps-sweep at other query rates
(Fig. 13, section 5.7: DIBS stops helping above 10,000 queries per
second), --size-sweep at other response sizes (Fig. 9 and Table 2,
sections 5.4.3 and 5.7: 20-160 KB), each for --sweep-fabric-ms. With
several seeds each point is also summarised over the seeds (mean and
min-max). Writes OUT/results.json, OUT/qct_cdf.png and OUT/sweep.png.
"""

import argparse
import csv
import json
import math
import os
import random
import shutil
import time

import yaml

from .. import cli, counters, eal_memory, experiment as exp, provenance, sluice, spread
from .. import workload_gen
from ..cdf import FlowSizeCdf
from ..fct_analysis import nearest_rank as percentile
from ..hosts import hosts_from_config
from ..units import format_ns, parse_size, parse_time, seconds_to_ns

ROOT = sluice.ROOT
FABRIC = os.path.join(ROOT, "conf", "fabrics", "dibs-fattree-k8.yaml")
MSS = 1444          # 1500-byte MTU less sluice's 20 + 8 + 28 header bytes
ECN_K = "30280B"    # 20 frames of 1514 B (section 5.3: K = 20 packets)
SCHEMES = (
    # label, tools/experiment scheme, fast retransmit
    ("dctcp", "ecn", True),
    ("dibs", "dibs", False),
)

# The paper's numbers this run is set beside (read off its text; the
# figures' own points are not printed in the paper).
PAPER = {
    "qct_gain_ms": "DIBS lowers the p99 QCT by up to 20 ms (5.4.1, Fig. 7); "
                   "22 ms at degree 40 (5.4.4)",
    "bg_cost_ms": "p99 background FCT up by less than 2 ms (5.4.1)",
    "breaks_qps": "DIBS breaks above 10,000 queries per second (5.7, Fig. 13)",
}


def make_flows(path, hosts, a, bg_ia_ns, qps, seed, response_size):
    """Writes the flow list; returns ({query: (arrival ns, [flow ids])},
    {background flow id: size}). The response size draws nothing from the
    generator, so a size sweep keeps the same arrivals and targets."""
    rng = random.Random(seed)
    cdf = FlowSizeCdf.from_file(a.cdf)
    horizon = a.fabric_ms * 1e6
    flows = []  # (t, src, dst, size, is_query)
    for i in range(len(hosts)):
        t = rng.expovariate(1.0 / bg_ia_ns)
        while t < horizon:
            j = rng.randrange(len(hosts) - 1)
            j += j >= i
            flows.append((int(t), i, j, cdf.size_at(rng.random()), None))
            t += rng.expovariate(1.0 / bg_ia_ns)
    queries = {}
    if qps > 0:
        t = rng.expovariate(qps / 1e9)
        q = 0
        while t < horizon:
            target = rng.randrange(len(hosts))
            others = [h for h in range(len(hosts)) if h != target]
            for s in rng.sample(others, a.degree):
                flows.append((int(t), s, target, response_size, q))
            queries[q] = (int(t), [])
            q += 1
            t += rng.expovariate(qps / 1e9)
    flows.sort(key=lambda f: (f[0], f[4] is None, f[1]))
    background = {}
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(workload_gen.FLOW_FIELDS)
        for fid, (t, s, d, size, q) in enumerate(flows, 1):
            t += 1_000
            w.writerow([fid, hosts[s][0], hosts[d][0], hosts[s][1], hosts[d][1], size,
                        0, format_ns(t), format_ns(t), format_ns(t), int(q is not None)])
            if q is None:
                background[fid] = size
            else:
                queries[q][1].append(fid)
    for q in queries:
        queries[q] = (queries[q][0] + 1_000, queries[q][1])
    return queries, background


def scheme_config(exp, fabric, scheme, fast_retransmit, a, seed):
    argv = ["--config", "x", "--schemes", scheme, "--workload", "w", "--out", "o",
            "--clock", "exact", "--seed", str(seed), "--transport", "dctcp",
            "--ecn-k", ECN_K, "--base-rtt", a.base_rtt,
            "--transport-param", f"mss={MSS}",
            "--transport-param", f"tcp.min_rto={a.min_rto}",
            "--transport-param", "tcp.init_cwnd=10",
            "--transport-param", f"ttl={a.ttl}",
            "--transport-param", f"tcp.fast_retransmit={str(fast_retransmit).lower()}"]
    conf = exp.apply_scheme(fabric, scheme, exp.parse_args(argv))
    conf["transport"]["flows"] = "flows.csv"
    for sw in conf["switches"]:
        for port in sw["ports"]:
            if port.get("role") == "host":
                port["pcap"] = {}
    return conf


def fct_stats(values):
    if not values:
        return None
    return {"n": len(values), "mean": sum(values) / len(values),
            "p99": percentile(values, 99)}


def run_point(a, exp, fabric, hosts, seed, bg_ia, qps, response_size, tag):
    """Both schemes on one traffic mix; returns their rows."""
    bg_ia_ns = seconds_to_ns(parse_time(bg_ia))
    base = os.path.join(a.out, tag)
    os.makedirs(base, exist_ok=True)
    flows_path = os.path.join(base, "flows.csv")
    queries, background = make_flows(flows_path, hosts, a, bg_ia_ns, qps, seed, response_size)
    sizes = FlowSizeCdf.from_file(a.cdf)
    rows = []
    for label, scheme, fr in SCHEMES:
        if label not in a.schemes:
            continue
        d = os.path.join(base, label)
        conf = scheme_config(exp, fabric, scheme, fr, a, seed)
        seconds = sluice.REPLAY_LEAD_S + (a.fabric_ms + a.drain_ms) / 1e3
        run = resumable(d, flows_path, conf, seconds) if a.resume else None
        if run is None:
            shutil.rmtree(d, ignore_errors=True)
            os.makedirs(d)
            shutil.copy(flows_path, os.path.join(d, "flows.csv"))
            with open(os.path.join(d, "sluice.yaml"), "w") as f:
                yaml.safe_dump(conf, f, sort_keys=False)
            summary, wall, cpu, rss = run_with_memory(a, d, seconds, label)
            with open(os.path.join(d, "run.json"), "w") as f:
                json.dump({"seconds": seconds, "wall_s": wall, "cpu_s": cpu, "rss_mb": rss}, f)
        else:
            summary = cli.load_json(os.path.join(d, "summary.json"), "sluice summary")
            wall, cpu, rss = run["wall_s"], run["cpu_s"], run["rss_mb"]
            print(f"reproduce: {tag} {label}: reusing the finished run in {d}")
        with open(os.path.join(d, "completions.csv"), newline="") as f:
            done = {int(r["flow_id"]): r for r in csv.DictReader(f)}
        qct = []
        for q, (t0, ids) in sorted(queries.items()):
            ends = []
            for i in ids:
                r = done[i]
                if r["finished"] != "1":
                    ends = None
                    break
                ends.append(float(r["finish_time"]) * 1e9)
            qct.append(float("inf") if ends is None else (max(ends) - t0) / 1e6)
        bg, short, unfinished = [], [], 0
        for i, size in background.items():
            r = done[i]
            if r["finished"] == "1":
                fct = float(r["fct_seconds"]) * 1e3
            else:
                unfinished += 1
                fct = (float(r["observed_until"]) - float(r["start_time"])) * 1e3
            bg.append(fct)
            if 1_000 <= size <= 10_000:
                short.append(fct)
        unfinished_short = sum(1 for i, s in background.items()
                               if 1_000 <= s <= 10_000 and done[i]["finished"] != "1")
        ports = [p for sw in summary["switches"] for p in sw["ports"]]
        drops = counters.total_drops(summary)
        detours = sum(p.get("dibs_detours", 0) for p in ports)
        t = summary.get("transport", {})
        hist = {}
        for sw in summary["switches"]:
            for k, v in (sw.get("dibs") or {}).get("detours_per_packet", {}).items():
                hist[k] = hist.get(k, 0) + v
        delivered = sum(hist.values())
        row = {"seed": seed, "tag": tag, "scheme": label, "bg_interarrival": bg_ia,
               "bg_load": mean_size_load(sizes, bg_ia_ns), "qps": qps,
               "response_size": response_size,
               "fabric_ms": a.fabric_ms,
               "queries": len(qct), "unfinished_queries": sum(1 for x in qct if x == float("inf")),
               "qct_p50": percentile(qct, 50) if qct else None,
               "qct_p99": percentile(qct, 99) if qct else None,
               "qct_max": max(qct) if qct else None,
               "bg_flows": len(bg), "bg_unfinished": unfinished,
               "bg_all": fct_stats(bg), "bg_short": fct_stats(short),
               "bg_short_unfinished": unfinished_short,
               "drops": drops, "detours": detours,
               "drop_reasons": counters.drop_reasons(summary),
               "detoured_share": (delivered - hist.get("le_0", 0)) / delivered if delivered
               else 0.0,
               "detours_per_packet": hist,
               "timeouts": t.get("timeouts", 0),
               "wall_s": wall, "cpu_s": cpu, "rss_mb": rss,
               "fabric_s": summary.get("clock", {}).get("fabric_seconds")}
        rows.append(row)
        rows[-1]["qct_ms"] = qct
        rows[-1]["bg_short_ms"] = short
        print(f"reproduce: {tag} {label}: {len(qct)} queries, QCT p99 {fmt_ms(row['qct_p99'])} "
              f"ms; background {len(bg)} flows ({unfinished} unfinished), short p99 "
              f"{fmt_ms((row['bg_short'] or {}).get('p99'))} ms; {drops} drops, {detours} "
              f"detours, {row['timeouts']} RTOs; wall {wall:.0f} s, cpu {cpu:.0f} s, "
              f"{rss:.0f} MB", flush=True)
    return rows


def mean_size_load(cdf, bg_ia_ns):
    """Offered background load per host link: mean size / gap at 1 Gb/s."""
    mean = sum((cdf.sizes[i] + cdf.sizes[i - 1]) / 2 * (cdf.cum[i] - cdf.cum[i - 1])
               for i in range(1, len(cdf.sizes)))
    return mean * 8 / bg_ia_ns


def resumable(d, flows_path, conf, seconds):
    """The finished run in d (its run.json) when it ran these flows, this
    configuration and this long; else None."""
    try:
        with open(os.path.join(d, "run.json")) as f:
            run = json.load(f)
        with open(os.path.join(d, "flows.csv")) as f1, open(flows_path) as f2:
            if f1.read() != f2.read():
                return None
        with open(os.path.join(d, "sluice.yaml")) as f:
            if yaml.safe_load(f) != json.loads(json.dumps(conf)):
                return None
        if abs(run["seconds"] - seconds) > 1e-9 or \
                not os.path.exists(os.path.join(d, "completions.csv")):
            return None
        return run
    except (OSError, ValueError, KeyError):
        return None


def available_mib():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) // 1024
    return 0


def run_with_memory(a, d, seconds, label):
    """One sluice run, started only when the machine has the memory it needs
    (other processes share it; the kernel kills the largest when it runs
    out): waits up to --memory-wait for MemAvailable to exceed what sluice
    --check says plus 512 MiB, and runs again (up to twice) when killed."""
    need = eal_memory.needed_mib(a.sluice, "sluice.yaml", d) + 512
    for attempt in range(3):
        deadline = time.monotonic() + a.memory_wait
        while available_mib() < need and time.monotonic() < deadline:
            time.sleep(5)
        try:
            run = sluice.run(a.sluice, d, seconds, prefix=f"reproduce-dibsft-{os.getpid()}-{label}")
            return run.summary, run.wall_s, run.cpu_s, run.rss_mb
        except cli.ToolError as e:
            if "signal 9" not in str(e) or attempt == 2:
                raise
            print(f"reproduce: {d}: sluice was killed (out of memory?); running it again",
                  flush=True)
            time.sleep(30)


def fmt_ms(x):
    if x is None:
        return "-"
    return "inf" if x == float("inf") else f"{x:.2f}"


def lower_bound(row, key):
    st = row[key]
    if not st:
        return "-"
    unf = row["bg_unfinished"] if key == "bg_all" else row["bg_short_unfinished"]
    mark = ">= " if unf else ""
    return f"{mark}{st['mean']:.2f} / {mark}{st['p99']:.2f}"


def point_label(tag):
    """The point a run belongs to, whatever its seed: 'qps2000-s3' -> 'qps2000'."""
    head, sep, seed = tag.rpartition("-s")
    return head if sep and seed.isdigit() else tag


def over_seeds(rows):
    """{(point, scheme): {figure: [one value per seed]}}, in the rows' order."""
    out = {}
    for r in rows:
        o = out.setdefault((point_label(r["tag"]), r["scheme"]),
                           {"seeds": [], "qct_p99": [], "bg_short_p99": [], "drops": [],
                            "detoured_share": [], "unfinished_queries": []})
        o["seeds"].append(r["seed"])
        o["qct_p99"].append(r["qct_p99"])
        o["bg_short_p99"].append((r["bg_short"] or {}).get("p99"))
        o["drops"].append(r["drops"])
        o["detoured_share"].append(r.get("detoured_share", 0.0))
        o["unfinished_queries"].append(r["unfinished_queries"])
    return out


def write_results(a, rows):
    print()
    print("| run | scheme | bg gap (load) | qps | response | queries (unfinished) | QCT p50 | "
          "QCT p99 | QCT max | bg flows (unfinished) | bg FCT mean / p99 | "
          "1-10 KB FCT mean / p99 | drops | detours (packets detoured) | RTOs | wall s | CPU s | "
          "peak RSS MB |")
    print("|---|---|---|---:|---:|---|---:|---:|---:|---|---|---|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['tag']} | {r['scheme']} | {r['bg_interarrival']} ({r['bg_load']:.2f}) | "
              f"{r['qps']:g} | {r['response_size'] / 1e3:g} KB | "
              f"{r['queries']} ({r['unfinished_queries']}) | "
              f"{fmt_ms(r['qct_p50'])} | {fmt_ms(r['qct_p99'])} | {fmt_ms(r['qct_max'])} | "
              f"{r['bg_flows']} ({r['bg_unfinished']}) | {lower_bound(r, 'bg_all')} | "
              f"{lower_bound(r, 'bg_short')} | {r['drops']} | {r['detours']} "
              f"({100 * r.get('detoured_share', 0):.1f} %) | "
              f"{r['timeouts']} | {r['wall_s']:.0f} | {r['cpu_s']:.0f} | {r['rss_mb']:.0f} |")
    print("(ms; every query counted, a query with an unfinished response is inf; background "
          "FCT counts every flow, '>=' where some did not finish by the end of the run)")
    pairs = {}
    for r in rows:
        pairs.setdefault((r["seed"], r["tag"]), {})[r["scheme"]] = r
    by_point = {}
    for (seed, tag), p in pairs.items():
        if "dctcp" in p and "dibs" in p:
            c, b = p["dctcp"], p["dibs"]
            gain = c["qct_p99"] - b["qct_p99"] if math.isfinite(c["qct_p99"]) and \
                math.isfinite(b["qct_p99"]) else float("nan")
            sc, sb = (c["bg_short"] or {}).get("p99"), (b["bg_short"] or {}).get("p99")
            cost = (sb - sc) if sc is not None and sb is not None else float("nan")
            print(f"seed {seed} {tag}: DIBS lowers the p99 QCT by {gain:.2f} ms; the p99 FCT "
                  f"of 1-10 KB background flows moves by {cost:+.2f} ms")
            o = by_point.setdefault(point_label(tag), {"seeds": [], "gain": [], "cost": []})
            o["seeds"].append(seed)
            o["gain"].append(gain if math.isfinite(gain) else None)
            o["cost"].append(cost if math.isfinite(cost) else None)
    for tag, o in by_point.items():
        if len(o["seeds"]) > 1:
            print(f"seeds {','.join(map(str, o['seeds']))} {tag}: DIBS lowers the p99 QCT by "
                  f"{spread.text(o['gain'], '%.2f')} ms, mean (min-max); the p99 FCT of 1-10 KB "
                  f"background flows moves by {spread.text(o['cost'], '%+.2f')} ms")
    seeds = over_seeds(rows)
    summary = []
    if any(len(o["seeds"]) > 1 for o in seeds.values()):
        print()
        print("| point | scheme | seeds | QCT p99 | 1-10 KB FCT p99 | drops | packets detoured | "
              "unfinished queries |")
        print("|---|---|---|---:|---:|---:|---:|---:|")
        for (point, scheme), o in seeds.items():
            print(f"| {point} | {scheme} | {','.join(map(str, o['seeds']))} | "
                  f"{spread.text(o['qct_p99'], '%.2f')} | "
                  f"{spread.text(o['bg_short_p99'], '%.2f')} | "
                  f"{spread.text(o['drops'], '%.0f')} | "
                  f"{spread.text([100 * x for x in o['detoured_share']], '%.1f')} % | "
                  f"{spread.range_text(o['unfinished_queries'])} |")
            summary.append({"point": point, "scheme": scheme,
                            **{k: v if k == "seeds" else spread.stats(v) for k, v in o.items()}})
        print("(ms; mean (min-max) over the seeds; a p99 is inf when more than 1 % of a "
              "run's queries did not finish)")
    for k, v in PAPER.items():
        print(f"paper: {v}")
    with open(os.path.join(a.out, "results.json"), "w") as f:
        json.dump({"rows": rows, "over_seeds": summary, "paper": PAPER, "args": vars(a)}, f,
                  indent=2, default=str)
    plot(a, rows)


def errorbars(ax, points, style, label):
    """Plots each (x, [values]) at the values' mean with a min-max bar."""
    xs = [x for x, _ in points]
    mean = [sum(v) / len(v) for _, v in points]
    lo = [m - min(v) for m, (_, v) in zip(mean, points)]
    hi = [max(v) - m for m, (_, v) in zip(mean, points)]
    return ax.errorbar(xs, mean, yerr=[lo, hi], fmt=style, capsize=3, label=label).lines[0]


def plot(a, rows):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise cli.ToolError("Python module 'matplotlib' is missing "
                            "(Debian: apt-get install python3-matplotlib)")
    base = [r for r in rows if r["tag"].startswith("baseline")]
    if base:
        fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
        for scheme, style in (("dctcp", "--"), ("dibs", "-")):
            for ax, key, what in ((axes[0], "qct_ms", "queries"),
                                  (axes[1], "bg_short_ms", "1-10 KB flows")):
                v = sorted(x for r in base if r["scheme"] == scheme for x in r[key])
                if not v:
                    continue
                fin = [x for x in v if math.isfinite(x)]
                line, = ax.plot(fin, [(i + 1) / len(v) for i in range(len(fin))], style,
                                label=f"{scheme} ({len(v)} {what})")
                q = sorted(v)[max(0, -(-len(v) * 99 // 100) - 1)]
                if math.isfinite(q):
                    ax.axvline(q, color=line.get_color(), lw=0.8, ls=":")
        axes[0].set_xlabel("query completion time (ms)")
        axes[0].set_ylabel("CDF of queries")
        axes[1].set_xlabel("FCT of 1-10 KB background flows (ms)")
        axes[1].set_ylabel("CDF of flows")
        axes[1].set_xscale("log")
        for ax in axes:
            ax.axhline(0.99, color="0.6", lw=0.8)
            ax.legend(fontsize=8, loc="lower right")
        fig.suptitle("DIBS k=8 fat-tree, exact time: background gap %s, %g qps, degree %d, "
                     "%d ms of arrivals (dotted: p99)" % (a.bg_interarrival, a.qps, a.degree,
                                                         base[0]["fabric_ms"]), fontsize=9)
        fig.tight_layout()
        fig.savefig(os.path.join(a.out, "qct_cdf.png"), dpi=110)
        plt.close(fig)
    sweeps = (("bg", "background flow inter-arrival per host (ms)", "bg_interarrival",
               lambda r: parse_time(r["bg_interarrival"]) * 1e3),
              ("qps", "query arrival rate (queries/s)", "qps", lambda r: r["qps"]),
              ("size", "response size (KB)", "response_size",
               lambda r: r["response_size"] / 1e3))
    panels = [(k, xl, f, xf) for k, xl, f, xf in sweeps
              if len({xf(r) for r in rows if r["tag"].startswith(k)}) > 1]
    if not panels:
        return
    fig, axes = plt.subplots(len(panels), 2, figsize=(9, 3.3 * len(panels)), squeeze=False)
    for row_ax, (k, xlabel, _, xf) in zip(axes, panels):
        pts = [r for r in rows if r["tag"].startswith(k)]
        for scheme, style in (("dctcp", "o--"), ("dibs", "s-")):
            # One point per x: the mean over the seeds, bars from min to max.
            by_x = {}
            for r in pts:
                if r["scheme"] == scheme:
                    by_x.setdefault(xf(r), []).append(r)
            xs = sorted(by_x)
            q = [[r["qct_p99"] for r in by_x[x]] for x in xs]
            fs = [[(r["bg_short"] or {}).get("p99", float("nan")) for r in by_x[x]] for x in xs]
            fin = [(x, v) for x, v in zip(xs, q) if all(math.isfinite(y) for y in v)]
            line = errorbars(row_ax[0], fin, style, scheme)
            top = [x for x, v in zip(xs, q) if not all(math.isfinite(y) for y in v)]
            if top:
                # p99 infinite: more than 1 % of some seed's queries never finished.
                row_ax[0].plot(top, [2e3] * len(top), "^", color=line.get_color(), mfc="none",
                               label=f"{scheme}: p99 infinite (> 1 % unfinished)")
            errorbars(row_ax[1], list(zip(xs, fs)), style, scheme)
        row_ax[0].set_ylabel("99th pct QCT (ms)")
        row_ax[1].set_ylabel("99th pct FCT, 1-10 KB bg (ms)")
        for ax in row_ax:
            ax.set_xlabel(xlabel)
            if k == "qps":
                ax.set_xscale("log")
            ax.set_yscale("log")
            ax.legend(fontsize=8)
    fig.suptitle("DIBS k=8 fat-tree in exact time (paper Figs. 7, 9 and 13; "
                 "mean over seeds, bars min-max)", fontsize=10)
    fig.tight_layout()
    fig.savefig(os.path.join(a.out, "sweep.png"), dpi=110)
    plt.close(fig)


def main(argv):
    p = argparse.ArgumentParser(prog="tools/reproduce dibs-fattree",
                                description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="\n".join(__doc__.split("\n")[2:]))
    p.add_argument("--seeds", default="1", help="comma-separated seeds (1)")
    p.add_argument("--fabric-ms", type=float, default=300.0,
                   help="ms of arrivals of the baseline runs (300)")
    p.add_argument("--drain-ms", type=float, default=100.0,
                   help="ms the run goes on after the last arrival (100)")
    p.add_argument("--bg-interarrival", default="120ms",
                   help="mean gap between one host's background flows (120ms)")
    p.add_argument("--qps", type=float, default=300.0, help="queries per second (300)")
    p.add_argument("--degree", type=int, default=40, help="responders per query (40)")
    p.add_argument("--response-size", default="20KB", help="each response (20KB)")
    p.add_argument("--cdf", default=os.path.join(ROOT, "conf", "workloads", "websearch.cdf"),
                   help="background flow sizes (the DCTCP web search CDF)")
    p.add_argument("--min-rto", default="10ms", help="TCP minimum RTO (10ms, Table 1)")
    p.add_argument("--ttl", type=int, default=255,
                   help="hosts' IPv4 TTL (255, the paper's section 5.5.3; a detoured "
                        "packet whose TTL runs out is dropped)")
    p.add_argument("--base-rtt", default="90us",
                   help="transport base_rtt (90us: six 1 Gb/s hops of one frame and back)")
    p.add_argument("--bg-sweep", default="",
                   help="more background gaps, e.g. 60ms,30ms,20ms (none)")
    p.add_argument("--qps-sweep", default="", help="more query rates, e.g. 2000,10000 (none)")
    p.add_argument("--size-sweep", default="",
                   help="more response sizes, e.g. 50KB,160KB (none)")
    p.add_argument("--sweep-fabric-ms", type=float, default=None,
                   help="ms of arrivals of the sweep runs (--fabric-ms)")
    p.add_argument("--no-baseline", action="store_true", help="only the sweeps")
    p.add_argument("--schemes", default="dctcp,dibs", help="dctcp, dibs (both)")
    p.add_argument("--resume", action="store_true",
                   help="reuse a finished run in OUT when it ran the same flows and "
                        "configuration")
    p.add_argument("--memory-wait", type=float, default=900.0,
                   help="seconds to wait for free memory before each run (900; each run "
                        "needs about 6 GB)")
    p.add_argument("--out", default=os.path.join(ROOT, "runs", "reproduce", "dibs-fattree"))
    p.add_argument("--sluice", default=os.path.join(ROOT, "build", "switch", "sluice"))
    a = p.parse_args(argv)
    try:
        a.seeds = [int(s) for s in a.seeds.split(",") if s.strip()]
        a.response_size = parse_size(a.response_size)
        parse_time(a.bg_interarrival)
        bg_sweep = [s.strip() for s in a.bg_sweep.split(",") if s.strip()]
        for s in bg_sweep:
            parse_time(s)
        qps_sweep = [float(s) for s in a.qps_sweep.split(",") if s.strip()]
        size_sweep = [parse_size(s.strip()) for s in a.size_sweep.split(",") if s.strip()]
    except ValueError as e:
        raise cli.ToolError(str(e))
    a.schemes = [s.strip() for s in a.schemes.split(",") if s.strip()]
    bad = set(a.schemes) - {s for s, _, _ in SCHEMES}
    if bad:
        raise cli.ToolError(f"unknown scheme(s) {sorted(bad)}; known: dctcp, dibs")
    if any(q <= 0 for q in qps_sweep) or a.qps <= 0:
        raise cli.ToolError("query rates must be above 0")
    if any(x <= 0 for x in size_sweep + [a.response_size]):
        raise cli.ToolError("response sizes must be above 0")
    if not 1 <= a.degree <= 127:
        raise cli.ToolError("--degree must be 1..127 (128 hosts)")
    a.sluice = os.path.abspath(a.sluice)
    a.out = os.path.abspath(a.out)
    os.makedirs(a.out, exist_ok=True)
    with open(FABRIC) as f:
        fabric = yaml.safe_load(f)
    hosts = [(h.name, h.ip) for h in hosts_from_config(FABRIC)]
    # Every point to run, in order: (seed, ms of arrivals, background gap,
    # qps, response size, tag). Points that repeat another's traffic under
    # a new tag (a sweep's value equal to the baseline's) run once.
    plan = []
    base_ms = a.fabric_ms
    sweep_ms = a.sweep_fabric_ms or base_ms
    bg, qps, size = a.bg_interarrival, a.qps, a.response_size
    for seed in a.seeds:
        if not a.no_baseline:
            plan.append((seed, base_ms, bg, qps, size, f"baseline-s{seed}"))
        plan += [(seed, sweep_ms, g, qps, size, f"bg{g}-s{seed}") for g in bg_sweep]
        plan += [(seed, sweep_ms, bg, q, size, f"qps{q:g}-s{seed}") for q in qps_sweep]
        plan += [(seed, sweep_ms, bg, qps, z, f"size{z / 1e3:g}KB-s{seed}") for z in size_sweep]

    def key(p):
        seed, ms, gap, q, z, _ = p
        return (seed, seconds_to_ns(parse_time(gap)), q, z, ms)

    sluice.expect_runs(len({key(p) for p in plan}) * len(a.schemes))
    t0 = time.monotonic()
    rows = []
    done = {}  # key(point): its rows
    for p in plan:
        seed, ms, gap, q, z, tag = p
        if key(p) in done:  # the same traffic ran under another tag
            rows += [dict(r, tag=tag) for r in done[key(p)]]
            continue
        a.fabric_ms = ms  # run_point and make_flows read it
        done[key(p)] = run_point(a, exp, fabric, hosts, seed, gap, q, z, tag)
        rows += done[key(p)]
    a.fabric_ms = base_ms  # results.json's args keep the baseline's
    print(f"reproduce: {len(rows)} runs in {time.monotonic() - t0:.0f} s")
    write_results(a, rows)
    provenance.write(a.out, seeds=a.seeds, configs=[FABRIC], inputs=[a.cdf],
                     binaries=[a.sluice])
    return 0
