"""BFC section 6.2.2 (Goyal et al., "Backpressure Flow Control", NSDI
2022; Figs. 9 and 10, App. C Fig. 16) in exact fabric time.

    tools/reproduce bfc [--seeds 1,2,3] [--fabric-ms 5] [--drain-ms 20]
                        [--incast on|off] [--core-load 0.55] [--out DIR]

The 128-host, 100 Gb/s leaf-spine (conf/fabrics/bfc-leafspine.yaml, 2:1
oversubscribed), the Google RPC sizes with lognormal (sigma 2) arrivals at
--core-load of the core links (55 %), plus (--incast, the default)
100-to-1 incasts of 20 MB every 500 us to a random receiver (about 5 % of
the core); BFC (BFC switches and NICs, hosts at line rate with no cap on
a flow's bytes in flight; with --bfc-host-nic plain, the paper's BFC - NIC,
the one-BDP cap) against DCQCN, DCTCP (starting at line rate: an initial window of one
BDP, as the paper's modified DCTCP) and HPCC, each over PFC (XOFF at 11 %
of the free buffer, the paper's), DCQCN and DCTCP with RED marking between
100 and 400 KB. Every host's NIC keeps a send queue per flow (up to
4095), as an RDMA NIC a queue pair per flow, and sends its replies first
from its last queue, which BFC never pauses (HPCC's ns-3 NIC). Switches
serve DCQCN's replies first, in a queue of their own, as HPCC's ns-3 does
for it (ACK_HIGH_PRIO 1 in its run.py); the other schemes' replies are
data, as there.

Background FCT slowdown (mean, p95, p99) by size bucket, the incast flows'
separately, the 99th-percentile and peak switch buffer (every switch, every
10 us), and the share of time the switch ports were paused; per seed and as
the mean (min-max) over --seeds. Where the <10KB flows at or above the p99
slowdown spent their time: their FCTs split at the segment that completed
each flow (completions' sender_seconds, network_seconds,
receiver_seconds, ack_seconds: until it left the sender's NIC, its trip,
until the receiver's ACK left its NIC, the ACK's trip). Plots: fct_slowdown.png (mean, p95, p99 by
flow size, as Figs. 9 and 10), buffer_cdf.png, incast_slowdown.png (App. C,
Fig. 16). --reanalyse reports the runs already in --out. Diagnostics (not
the paper's settings): --scheme-param, --bfc-queues, --nic-queues, --reply-queue,
--bfc-host-nic plain, --nic-reply-queue off. Scaled: --fabric-ms of arrivals
(the paper runs far longer).

Writes results.json and provenance.json beside the plots; each run's
directory holds its sluice.yaml, completions.csv, summary.json and run.json
(wall and CPU seconds, peak RSS). docs/mechanisms/bfc.md has the figures.
"""

import argparse
import csv
import json
import os
import shutil

import yaml

from .. import cli, counters, experiment as exp, fct_analysis, provenance, queue_trace, sluice
from ..fct_analysis import nearest_rank as percentile

ROOT = sluice.ROOT
PY = "/usr/bin/python3"
FABRIC = os.path.join(ROOT, "conf", "fabrics", "bfc-leafspine.yaml")
CDF = os.path.join(ROOT, "conf", "workloads", "google_rpc.cdf")


# The RDMA hosts have no sender timer, as in HPCC's ns-3, the simulator the
# paper ran its baselines in (go-back-N on NACKs only): nothing is lost in
# these lossless fabrics, and a 500 us timer fires behind BFC's pauses and
# PFC's incast queues and resends whole windows (257,000 times under BFC in
# a first measurement). --scheme-param bfc:rdma.timeout=500us gives it back.
NO_TIMER = ["rdma.timeout=0"]
# Full BFC's hosts have no end-to-end congestion control (section 5: "in a
# full deployment, BFC would not require" it): no cap on a flow's bytes in
# flight (4 GB, beyond any flow here). The paper caps each flow at one BDP
# only where the NICs ignore BFC (BFC - NIC, App. E.1) and for Ideal-FQ:
# --bfc-host-nic plain keeps bfc-nic's default, that cap.
NO_CAP = ["bfc_nic.window=4000000000"]
BFC_SCHEMES = (
    # label, tools/experiment scheme, transport, transport params
    ("BFC", "bfc", "bfc-nic", NO_TIMER),
    ("DCQCN", "ecn+pfc", "dcqcn", NO_TIMER),
    ("DCTCP", "ecn+pfc", "dctcp", ["tcp.init_cwnd=100", "tcp.min_rto=1ms"]),
    ("HPCC", "ecn+pfc", "hpcc", NO_TIMER),
)
SIZE_BUCKETS = ((0, 10_000, "<10KB"), (10_000, 100_000, "10KB-100KB"),
                (100_000, 1_000_000, "100KB-1MB"), (1_000_000, float("inf"), ">=1MB"))
# The plots' finer buckets (Fig. 9 and 10 plot slowdown against size on a
# log axis): edges in bytes.
BFC_PLOT_EDGES = (0, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000,
                  200_000, 500_000, 1_000_000, 2_000_000, 5_000_000, float("inf"))
# What the paper says in words (its figures' values are not in its text):
# 6.2.2 and the abstract.
BFC_PAPER = ("paper (6.2.2, abstract): BFC's short-flow p99 slowdown 2.3-60x better than "
             "DCQCN/DCTCP/HPCC (HPCC 5-30x worse with incast, 2.3-3x without), long flows' "
             "mean 1.6-5x better; incast flows' tail about 2x better than HPCC's (App. C; "
             "best case mean 50, p95 95, p99 99); DCTCP better than DCQCN on short flows")


def slowdown_stats(values, censored=0):
    """mean / p95 / p99 of slowdowns (every value counts); censored: how
    many are unfinished flows measured to the end (then lower bounds)."""
    if not values:
        return None
    return {"n": len(values), "mean": sum(values) / len(values),
            "p95": percentile(values, 95), "p99": percentile(values, 99), "censored": censored}


def bfc_stats(results):
    return slowdown_stats([r.slowdown for r in results], sum(1 for r in results if r.censored))


def replies_first(a, label):
    """Whether the switches serve the scheme's replies first, in a queue of
    their own: as the simulators the paper ran each scheme in (6.2): for
    DCQCN, ns3-rdma (CNPs and NACKs first) and HPCC's ns-3 run.py
    (ACK_HIGH_PRIO 1 for DCQCN without a window); HPCC and DCTCP in HPCC's
    ns-3 (0); BFC, whose treatment the paper does not give, HPCC's ns-3
    default (0). --reply-queue on or off says it for all."""
    if a.reply_queue != "scheme":
        return a.reply_queue == "on"
    return label == "DCQCN"


def bfc_conf(a, fabric, exp, seed, wl, label, scheme, transport, params):
    """The run's configuration: the preset with the scheme applied, and the
    PFC baselines made lossless as the paper's."""
    argv = ["--config", "x", "--schemes", scheme, "--workload", "w", "--out", "o",
            "--clock", "exact", "--seed", str(seed), "--transport", transport,
            "--base-rtt", "8us", "--transport-param", "mss=1000"]
    if label == "BFC" and a.bfc_host_nic == "bfc":
        params = list(params) + NO_CAP
    for p_ in list(params) + a.scheme_params.get(label.lower(), []):
        argv += ["--transport-param", p_]
    conf = exp.apply_scheme(fabric, scheme, exp.parse_args(argv))
    conf["transport"]["flows"] = os.path.join(wl, "flows.csv")
    for sw in conf["switches"]:
        if "pfc" in sw:
            sw["pfc"] = {"mode": "pfc", "xoff": "dynamic", "alpha": 0.11}
            # Lossless as the paper's PFC baselines: nothing but PFC
            # may hold traffic back. Its XOFF at 11 % of the free
            # buffer lets 24 ingress ports fill 8.7 of the 12 MB, more
            # than the preset's 8,192-frame ring of one queue and
            # beyond the dynamic threshold's alpha 1; and a queue
            # of ACKs holds many frames in few bytes, so the ring
            # holds the whole buffer in 64-byte frames. The class
            # map uses queue 0 only: one deep queue per port.
            sw["queues_per_port"] = 1
            sw["queue_capacity"] = 1 << 18
            sw["buffer"] = dict(sw.get("buffer") or {}, alpha=1000.0)
        if "ecn" in sw:
            sw["ecn"] = {"mode": "red", "min": "100KB", "max": "400KB", "pmax": 0.2}
        if replies_first(a, label):
            sw["reply_queue"] = True
        if label == "BFC" and a.bfc_queues:
            sw["queues_per_port"] = a.bfc_queues  # a diagnostic, not the paper's 32
        for port in sw["ports"]:
            if port.get("role") == "host":
                port["pcap"] = {}
                if label == "BFC" and a.bfc_host_nic == "plain":
                    # The paper's "BFC - NIC" (App. E.1): the NICs ignore
                    # BFC's pauses; the one-BDP cap still holds each flow.
                    port["nic"] = dict(port["nic"] if isinstance(port.get("nic"), dict) else {},
                                       mode="plain")
                # Every scheme's NIC keeps a send queue per flow, as an RDMA
                # NIC a queue pair per flow (HPCC's ns-3, where the paper ran
                # its baselines; BFC 3.3.2 for its own NIC), round robin
                # among those not paused.
                nic = port.get("nic")
                port["nic"] = dict(nic if isinstance(nic, dict) else {"mode": nic or "plain"},
                                   queue_by="flow", queues=a.nic_queues)
                if a.nic_reply_queue == "on":
                    # Replies in a queue of their own, served first, which
                    # BFC never pauses (HPCC's ns-3 NIC: its ACK queue goes
                    # first, held only by PFC).
                    port["nic"]["reply_queue"] = True
    return conf


def bfc_run(a, fabric, exp, seed, wl, label, scheme, transport, params):
    """Runs one scheme on one seed's workload in its own directory; writes
    run.json (wall, CPU and peak RSS of the sluice process)."""
    d = os.path.join(a.out, f"seed{seed}", label.lower())
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    conf = bfc_conf(a, fabric, exp, seed, wl, label, scheme, transport, params)
    with open(os.path.join(d, "sluice.yaml"), "w") as f:
        yaml.safe_dump(conf, f, sort_keys=False)
    seconds = sluice.REPLAY_LEAD_S + a.fabric_ms / 1000 + a.drain_ms / 1000
    # One port per switch, for the buffer of every switch (the trace has a
    # switch's buffer row only with one of its ports).
    ports = [f"{sw['name']}/{sw['ports'][0]['name']}" for sw in conf["switches"]]
    trace = ["--queue-trace", "qt.csv", "--queue-trace-interval", "0.00001",
             "--queue-trace-ports", ",".join(ports)]
    run = sluice.run(a.sluice, d, seconds, prefix=f"reproduce-{os.getpid()}-{label}", extra=trace)
    with open(os.path.join(d, "run.json"), "w") as f:
        json.dump(dict(run.record(), loadavg=os.getloadavg()), f, indent=2)
    return d


def bfc_analyse(d, seed, label):
    """The figures of one run directory: (row for the tables, data for the
    plots)."""
    summary = cli.load_json(os.path.join(d, "summary.json"), "sluice summary")
    run = cli.load_json(os.path.join(d, "run.json"), "run record")
    results, observed = fct_analysis.results_from_completions(os.path.join(d, "completions.csv"))
    bg = [r for r in results if not r.spec.is_incast]
    inc = [r for r in results if r.spec.is_incast]
    with open(os.path.join(d, "completions.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    timed_out = {int(c["flow_id"]) for c in rows if int(c["timeouts"] or 0)}
    split = {int(c["flow_id"]): c for c in rows if c.get("sender_seconds")}
    # Where the incasts were: per receiver, the spans from an incast flow's
    # start to its end (or the end of the run).
    spans = {}
    for r in inc:
        end = r.finish_ns if r.finished else observed
        spans.setdefault(r.spec.dst, []).append((r.start_ns, end))

    def at_incast_receiver(r):
        end = r.finish_ns if r.finished else observed
        return any(s < end and r.start_ns < e for s, e in spans.get(r.spec.dst, ()))
    per_bucket = {name: bfc_stats([r for r in bg if lo <= r.spec.size < hi])
                  for lo, hi, name in SIZE_BUCKETS}
    short = [r for r in bg if r.spec.size < 10_000]
    short_inc = [r for r in short if at_incast_receiver(r)]
    short_other = [r for r in short if not at_incast_receiver(r)]
    long_ = [r for r in bg if r.spec.size >= 1_000_000]
    fine = []
    for lo, hi in zip(BFC_PLOT_EDGES, BFC_PLOT_EDGES[1:]):
        sel = [r for r in bg if lo <= r.spec.size < hi]
        st = bfc_stats(sel)
        if st:
            st["size_median"] = percentile([r.spec.size for r in sel], 50)
        fine.append(st)
    buffer, _, _ = queue_trace.read_queue_trace(os.path.join(d, "qt.csv"))
    occ = sorted(b for samples in buffer.values() for t, b in samples if t >= 0)
    leaf = sorted(b for sw, s in buffer.items() if sw.startswith("leaf") for t, b in s if t >= 0)
    spine = sorted(b for sw, s in buffer.items() if sw.startswith("spine") for t, b in s if t >= 0)
    row = {"seed": seed, "scheme": label, "flows": len(bg), "incast_flows": len(inc),
           "unfinished": sum(1 for r in results if not r.finished),
           "all": bfc_stats(bg), "incast": bfc_stats(inc), "buckets": per_bucket,
           "short_at_incast_receiver": bfc_stats(short_inc),
           "short_elsewhere": bfc_stats(short_other),
           "long_at_incast_receiver": bfc_stats([r for r in long_ if at_incast_receiver(r)]),
           "long_elsewhere": bfc_stats([r for r in long_ if not at_incast_receiver(r)]),
           "buffer_switches": len(buffer),
           "buffer_p99_kb": percentile(occ, 99) / 1e3 if occ else 0,
           "buffer_max_kb": occ[-1] / 1e3 if occ else 0,
           "buffer_leaf_p99_kb": percentile(leaf, 99) / 1e3 if leaf else 0,
           "buffer_spine_p99_kb": percentile(spine, 99) / 1e3 if spine else 0,
           "paused_pct": counters.paused_pct(summary),
           "drops": counters.total_drops(summary),
           "transmissions": summary["clock"]["transmissions"],
           "data_segments": summary.get("transport", {}).get("data_segments", 0),
           "retransmitted": summary.get("transport", {}).get("retransmitted", 0),
           "timeouts": summary.get("transport", {}).get("timeouts", 0),
           "short_with_timeout_pct": 100.0 * sum(1 for r in short if r.spec.flow_id in timed_out) / max(1, len(short)),
           "short_tail_split": tail_split(short, split),
           "wall_s": run["wall_s"], "cpu_s": run["cpu_s"], "rss_mb": run["rss_mb"]}
    data = {"fine": fine,
            "buffer_cdf_kb": [percentile(occ, q / 10) / 1e3 for q in range(1, 1001)] if occ else [],
            "incast_slowdowns": sorted(r.slowdown for r in inc)}
    return row, data


def run(a):
    fabric_path = FABRIC
    with open(fabric_path) as f:
        fabric = yaml.safe_load(f)
    # Core load -> host load: 2:1 oversubscribed, and 112 of every 127
    # uniformly chosen destinations are on another leaf.
    host_load = a.core_load / (2 * 112 / 127)
    rows, data = [], {}
    if not a.reanalyse:
        sluice.expect_runs(len(a.seeds) * sum(1 for label, _, _, _ in BFC_SCHEMES
                                              if not a.schemes or label.lower() in a.schemes))
    for seed in a.seeds:
        wl = os.path.join(a.out, f"seed{seed}", "workload")
        if not a.reanalyse and not os.path.exists(os.path.join(wl, "flows.csv")):
            cmd = [PY, os.path.join(ROOT, "tools", "workload"), "--cdf", CDF, "--load",
                   "%.6f" % host_load, "--arrivals", "lognormal", "--lognormal-sigma", "2",
                   "--link-rate", "100Gbps", "--hosts-from-config", fabric_path, "--duration",
                   "%gms" % a.fabric_ms, "--seed", str(seed), "--mtu", "1000", "--no-pcaps",
                   "--out", wl]
            if a.incast == "on":
                cmd += ["--incast-degree", "100", "--incast-size", "20MB", "--incast-period",
                        "500us", "--incast-receiver", "random"]
            cli.run_step(cmd, "tools/workload")
        for label, scheme, transport, params in BFC_SCHEMES:
            if a.schemes and label.lower() not in a.schemes:
                continue
            d = os.path.join(a.out, f"seed{seed}", label.lower())
            if a.reanalyse:
                if not os.path.exists(os.path.join(d, "run.json")):
                    continue
            else:
                d = bfc_run(a, fabric, exp, seed, wl, label, scheme, transport, params)
            row, data[(seed, label)] = bfc_analyse(d, seed, label)
            rows.append(row)
            b = row["buckets"]
            print(f"reproduce: seed {seed} {label}: p99 slowdown <10KB "
                  f"{(b['<10KB'] or {}).get('p99', 0):.2f}, >=1MB mean "
                  f"{(b['>=1MB'] or {}).get('mean', 0):.2f}; {row['unfinished']} "
                  f"unfinished; buffer p99 {row['buffer_p99_kb']:.0f} KB; paused "
                  f"{row['paused_pct']:.3f} %; wall {row['wall_s']:.0f} s, CPU "
                  f"{row['cpu_s']:.0f} s, {row['rss_mb']:.0f} MB", flush=True)
    if not rows:
        raise cli.ToolError(f"{a.out}: no bfc runs to report")
    write_bfc_results(a, rows, data)


def bfc_fmt(st, key=None):
    """mean / p95 / p99 (or one of them), >= when unfinished flows count."""
    if not st:
        return "-"
    lb = "≥ " if st.get("censored") else ""
    keys = (key,) if key else ("mean", "p95", "p99")
    return lb + " / ".join(f"{st[k]:.3g}" for k in keys)


def bfc_spread(values):
    """'mean (min-max)' over seeds."""
    if not values:
        return "-"
    m = sum(values) / len(values)
    if len(values) == 1:
        return f"{m:.3g}"
    return f"{m:.3g} ({min(values):.3g}-{max(values):.3g})"


SPLIT_PARTS = ("sender", "network", "receiver", "ack")


def tail_split(flows, split):
    """Where the flows at or above the p99 slowdown spent their time: the
    mean of each part of their FCT (completions' sender_seconds,
    network_seconds, receiver_seconds, ack_seconds), in us, over those that
    finished."""
    if not flows:
        return None
    p99 = percentile([r.slowdown for r in flows], 99)
    tail = [r for r in flows if r.slowdown >= p99]
    parts = [split[r.spec.flow_id] for r in tail if r.spec.flow_id in split]
    out = {"n": len(tail), "unfinished": len(tail) - len(parts)}
    for k in SPLIT_PARTS:
        out[k + "_us"] = (sum(float(c[k + "_seconds"]) for c in parts) / len(parts) * 1e6
                          if parts else 0.0)
    return out


def write_tail_split(rows):
    print()
    print("Where the <10KB flows at or above the p99 slowdown spent their time: mean us "
          "(share of their FCT) until the segment that completed the flow left the "
          "sender's NIC / its trip / until the receiver's ACK left its NIC / the ACK's trip")
    print("| seed | scheme | flows (unfinished) | sender | network | receiver | ACK |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for r in rows:
        t = r.get("short_tail_split")
        if not t:
            continue
        total = sum(t[k + "_us"] for k in SPLIT_PARTS)
        cells = [f"{t[k + '_us']:.1f} ({100 * t[k + '_us'] / total:.0f} %)" if total else "-"
                 for k in SPLIT_PARTS]
        print(f"| {r['seed']} | {r['scheme']} | {t['n']} ({t['unfinished']}) | " +
              " | ".join(cells) + " |")


def write_bfc_results(a, rows, data):
    print()
    print("Per seed: background FCT slowdown by size, mean / p95 / p99")
    print("| seed | scheme | flows (unfinished) | " +
          " | ".join(n for _, _, n in SIZE_BUCKETS) +
          " | incast flows | <10KB p99 at incast receivers / elsewhere | buffer p99 / max KB "
          "(leaf / spine p99) | paused | drops | timeouts (<10KB flows with one) | resent "
          "segments | wall s | CPU s | RSS MB |")
    print("|---|---|---|" + "---|" * len(SIZE_BUCKETS) +
          "---|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        si, so = r["short_at_incast_receiver"], r["short_elsewhere"]
        print(f"| {r['seed']} | {r['scheme']} | {r['flows']} ({r['unfinished']}) | " +
              " | ".join(bfc_fmt(r["buckets"][n]) for _, _, n in SIZE_BUCKETS) +
              f" | {bfc_fmt(r['incast'])} | {bfc_fmt(si, 'p99')} ({si['n'] if si else 0}) / "
              f"{bfc_fmt(so, 'p99')} | {r['buffer_p99_kb']:.0f} / {r['buffer_max_kb']:.0f} "
              f"({r['buffer_leaf_p99_kb']:.0f} / {r['buffer_spine_p99_kb']:.0f}) | "
              f"{r['paused_pct']:.3f} % | {r['drops']} | {r.get('timeouts', 0)} "
              f"({r.get('short_with_timeout_pct', 0):.1f} %) | {r.get('retransmitted', 0)} | "
              f"{r['wall_s']:.0f} | {r['cpu_s']:.0f} | "
              f"{r['rss_mb']:.0f} |")
    print("(slowdown = FCT / the flow's frames at line rate plus one base RTT; unfinished flows "
          "counted to the end of the run, so figures marked ≥ are lower bounds)")
    write_tail_split(rows)
    labels = [s[0] for s in BFC_SCHEMES if any(r["scheme"] == s[0] for r in rows)]
    seeds = sorted({r["seed"] for r in rows})
    by = {(r["seed"], r["scheme"]): r for r in rows}
    print()
    print(f"Mean over seeds {','.join(map(str, seeds))} (min-max)")
    print("| scheme | " + " | ".join(f"{n} mean | {n} p99" for _, _, n in SIZE_BUCKETS) +
          " | incast mean | incast p99 | buffer p99 MB | paused % | unfinished |")
    print("|---|" + "---|" * (2 * len(SIZE_BUCKETS) + 5))
    summary = {}
    for lab in labels:
        rs = [by[(s, lab)] for s in seeds if (s, lab) in by]
        cells, summ = [], {}
        for _, _, n in SIZE_BUCKETS:
            for k in ("mean", "p99"):
                v = [r["buckets"][n][k] for r in rs if r["buckets"][n]]
                lb = "≥ " if any(r["buckets"][n] and r["buckets"][n]["censored"] for r in rs) else ""
                cells.append(lb + bfc_spread(v))
                summ[f"{n} {k}"] = v
        for k in ("mean", "p99"):
            v = [r["incast"][k] for r in rs if r["incast"]]
            cells.append(bfc_spread(v))
            summ[f"incast {k}"] = v
        for key, scale in (("buffer_p99_kb", 1e3), ("paused_pct", 1), ("unfinished", 1)):
            v = [r[key] / scale for r in rs]
            cells.append(bfc_spread(v))
            summ[key] = v
        summary[lab] = summ
        print(f"| {lab} | " + " | ".join(cells) + " |")
    print()
    for lab in labels:
        if lab == "BFC" or "BFC" not in labels:
            continue
        rat = []
        for s in seeds:
            b, r = by.get((s, "BFC")), by.get((s, lab))
            if b and r and all(x["buckets"][n] for x in (b, r) for n in ("<10KB", ">=1MB")):
                rat.append((r["buckets"]["<10KB"]["p99"] / b["buckets"]["<10KB"]["p99"],
                            r["buckets"][">=1MB"]["mean"] / b["buckets"][">=1MB"]["mean"]))
        if rat:
            print(f"{lab} / BFC: p99 slowdown of <10KB flows {bfc_spread([x[0] for x in rat])}x, "
                  f"mean of >=1MB flows {bfc_spread([x[1] for x in rat])}x")
    print(BFC_PAPER)
    with open(os.path.join(a.out, "results.json"), "w") as f:
        json.dump({"rows": rows, "mean_over_seeds": summary, "args": vars(a),
                   "plot_edges": [e if e != float("inf") else None for e in BFC_PLOT_EDGES],
                   "plots": {f"seed{k[0]}/{k[1]}": v for k, v in data.items()}},
                  f, indent=2, default=str)
    bfc_plots(a, labels, seeds, data)
    print(f"reproduce: wrote {a.out}/results.json, fct_slowdown.png, buffer_cdf.png" +
          (", incast_slowdown.png" if any(r["incast"] for r in rows) else ""))


def bfc_plots(a, labels, seeds, data):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise cli.ToolError("Python module 'matplotlib' is missing "
                            "(Debian: apt-get install python3-matplotlib)")
    colours = {"BFC": "tab:blue", "DCQCN": "tab:red", "DCTCP": "tab:green", "HPCC": "tab:orange"}
    what = ("%d %% load%s, %g ms of arrivals, seeds %s"
            % (round(a.core_load * 100), " + 100-1 incasts" if a.incast == "on" else "",
               a.fabric_ms, ",".join(map(str, seeds))))
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))
    for ax, key in zip(axes, ("mean", "p95", "p99")):
        for lab in labels:
            xs, ys, lo, hi = [], [], [], []
            for i in range(len(BFC_PLOT_EDGES) - 1):
                v = [data[(s, lab)]["fine"][i] for s in seeds if (s, lab) in data]
                v = [x for x in v if x]
                if not v:
                    continue
                vals = [x[key] for x in v]
                xs.append(percentile([x["size_median"] for x in v], 50))
                m = sum(vals) / len(vals)
                ys.append(m)
                lo.append(m - min(vals))
                hi.append(max(vals) - m)
            ax.errorbar(xs, ys, yerr=[lo, hi], marker="o", ms=3, capsize=2, label=lab,
                        color=colours.get(lab))
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("flow size (bytes)")
        ax.set_ylabel(f"FCT slowdown, {key}")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.suptitle(f"BFC 6.2.2 in exact time: {what} (mean over seeds, bars min-max)",
                 fontsize=10)
    fig.tight_layout()
    fig.savefig(os.path.join(a.out, "fct_slowdown.png"), dpi=110)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(6, 3.8))
    for lab in labels:
        v = sorted(x for s in seeds if (s, lab) in data for x in data[(s, lab)]["buffer_cdf_kb"])
        if v:
            ax.plot([x / 1e3 for x in v], [(i + 1) / len(v) for i in range(len(v))], label=lab,
                    color=colours.get(lab))
    ax.set_xlabel("switch buffer occupancy (MB), every switch every 10 us")
    ax.set_ylabel("CDF")
    ax.set_ylim(0.9, 1.0005)
    ax.set_title(f"Buffer occupancy (tail): {what}", fontsize=9)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(a.out, "buffer_cdf.png"), dpi=110)
    plt.close(fig)

    have = [lab for lab in labels if any(data[(s, lab)]["incast_slowdowns"]
                                         for s in seeds if (s, lab) in data)]
    if have:
        fig, ax = plt.subplots(figsize=(6, 3.8))
        width = 0.8 / len(have)
        for j, lab in enumerate(have):
            means, lo, hi = [], [], []
            for key, p in (("mean", None), ("p95", 95), ("p99", 99)):
                vals = []
                for s in seeds:
                    v = data.get((s, lab), {}).get("incast_slowdowns")
                    if v:
                        vals.append(sum(v) / len(v) if p is None else percentile(v, p))
                m = sum(vals) / len(vals)
                means.append(m)
                lo.append(m - min(vals))
                hi.append(max(vals) - m)
            ax.bar([i + j * width for i in range(3)], means, width, yerr=[lo, hi], capsize=2,
                   label=lab, color=colours.get(lab))
        for i, best in enumerate((50, 95, 99)):
            ax.plot([i - 0.1, i + 0.8], [best, best], "k--", lw=1,
                    label="best case (paper)" if i == 0 else None)
        ax.set_xticks([i + 0.4 - width / 2 for i in range(3)], ["mean", "p95", "p99"])
        ax.set_ylabel("incast flows' FCT slowdown")
        ax.set_title(f"Incast flows (App. C, Fig. 16): {what}", fontsize=9)
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(os.path.join(a.out, "incast_slowdown.png"), dpi=110)
        plt.close(fig)


def main(argv):
    p = argparse.ArgumentParser(prog="tools/reproduce bfc", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    p.add_argument("--seeds", default="1", help="comma-separated seeds (1)")
    p.add_argument("--core-load", type=float, default=0.55, help="background load of the core "
                   "links (0.55; Fig. 10: 0.6 with --incast off)")
    p.add_argument("--incast", choices=("on", "off"), default="on", help="the incasts (on)")
    p.add_argument("--fabric-ms", type=float, default=5.0, help="ms of arrivals (5)")
    p.add_argument("--drain-ms", type=float, default=20.0,
                   help="ms the run goes on after the last arrival (20)")
    p.add_argument("--schemes", default="", help="some of bfc,dcqcn,dctcp,hpcc (all)")
    p.add_argument("--reanalyse", action="store_true",
                   help="run nothing; report the runs already in --out")
    p.add_argument("--scheme-param", action="append", default=[], metavar="SCHEME:KEY=VALUE",
                   help="one more transport parameter for one scheme, e.g. "
                   "dctcp:tcp.init_cwnd=10 (a diagnostic; the paper's settings are the default)")
    p.add_argument("--bfc-queues", type=int, default=0,
                   help="BFC's queues per switch port (default the preset's 32, the paper's; "
                   "a diagnostic)")
    p.add_argument("--bfc-host-nic", choices=("bfc", "plain"), default="bfc",
                   help="plain: BFC's hosts ignore its pauses (the paper's BFC - NIC, App. E.1; "
                   "a diagnostic)")
    p.add_argument("--nic-queues", type=int, default=4096,
                   help="every host NIC's send queues, one per flow (4096, the most: a queue "
                   "pair per flow as the paper's NICs; fewer are shared, a diagnostic)")
    p.add_argument("--reply-queue", choices=("scheme", "on", "off"), default="scheme",
                   help="switches serve replies first, in a queue of their own: per scheme as "
                   "HPCC's ns-3 (DCQCN only; the default), or on / off for all (a diagnostic)")
    p.add_argument("--nic-reply-queue", choices=("on", "off"), default="on",
                   help="every host's replies in a NIC queue of their own, served first and "
                   "never paused by BFC (on, HPCC's ns-3 NIC), or in their flows' queues "
                   "(off, a diagnostic)")
    p.add_argument("--out", default=os.path.join(ROOT, "runs", "reproduce", "bfc"))
    p.add_argument("--sluice", default=sluice.BINARY)
    a = p.parse_args(argv)
    try:
        a.seeds = [int(s) for s in a.seeds.split(",") if s.strip()]
    except ValueError:
        p.error("--seeds: expected comma-separated integers")
    if not 1 <= a.nic_queues <= 4096:
        p.error(f"--nic-queues {a.nic_queues}: expected 1 to 4096")
    if a.nic_reply_queue == "on" and a.nic_queues < 2:
        p.error(f"--nic-queues {a.nic_queues}: the NIC's reply queue takes one, expected 2 or "
                "more (or --nic-reply-queue off)")
    a.schemes = [t.strip().lower() for t in a.schemes.split(",") if t.strip()]
    known = [s[0].lower() for s in BFC_SCHEMES]
    for s in a.schemes:
        if s not in known:
            p.error(f"--schemes: unknown scheme {s!r} ({', '.join(known)})")
    a.scheme_params = {}
    for item in a.scheme_param:
        scheme, sep, kv = item.partition(":")
        if not sep or "=" not in kv:
            p.error(f"--scheme-param {item!r}: expected SCHEME:KEY=VALUE")
        a.scheme_params.setdefault(scheme.strip().lower(), []).append(kv)
    a.sluice = os.path.abspath(a.sluice)
    a.out = os.path.abspath(a.out)
    os.makedirs(a.out, exist_ok=True)
    run(a)
    provenance.write(a.out, seeds=a.seeds, configs=[FABRIC], inputs=[CDF], binaries=[a.sluice])
    return 0
