"""Flowtune's simulation results in exact fabric time (Perry et al.,
"Flowtune: Flowlet Control for Datacenter Networks", NSDI 2017, section
5.3; issue 29 item 5; docs/mechanisms/flowtune.md, "Section 6 end to end").

    tools/reproduce flowtune [--parts fct,convergence] [--load 0.6]
                             [--fabric-ms 10] [--drain-ms 20] [--seeds 1]
                             [--out runs/reproduce/flowtune]

The fabric is the paper's: 4 spines, 9 racks of 16 servers, 10 Gb/s server
links and 40 Gb/s leaf-spine links (full bisection), 1.5 us per link and
2 us per server (each host link carries 1.5 + 2 us one way, so the 2-hop
RTT is the paper's 14 us and the 4-hop RTT 20 us), written by tools/fabric
leafspine into OUT/fabric.yaml (the command is in its header). Switches
have one FIFO queue per port; the buffer, which the paper does not give,
is --port-buffer packets per port (tools/fabric --port-buffer-packets).

fct: Poisson flow arrivals between uniformly random servers at --load of
the server links for --fabric-ms, then --drain-ms for the flows to finish.
Sizes: --cdf, by default the Facebook Hadoop CDF (conf/workloads/
fb_hadoop.cdf); the paper's default, Facebook's Web workload, is not at
hand (section 5.3 names Web, Cache and Hadoop; Hadoop is one of them).
Schemes:
  dctcp     DCTCP hosts, switches mark ECN at a step of --ecn-k.
  flowtune  the allocator in the fabric (NED over each flow's full path:
            its host links and the leaf-spine links its ECMP choice
            crosses, --paths; an iteration every 10 us, 8.5 us control
            path each way) and hosts that pace each flow
            at its allocated rate (flowtune.pace_at: host) over
            --flowtune-transport (tcp: "a regular TCP connection", the
            paper's servers); drop-tail switches, no ECN. A rate holds
            --lease (100us) at the host.
  flowtune-lease10ms  the same with sluice's default lease, 10 ms.
  pfabric   pFabric (--schemes pfabric): its hosts (line-rate start, rank
            = remaining bytes, docs/transports.md) and its switch port (a
            36 KB buffer served smallest rank first, the largest dropped).
  sfq-codel the paper's Cubic over sfqCoDel as near as sluice has it:
            NewReno TCP (no Cubic) over SFQ of 32 queues with CoDel in
            each (target 5 us, interval 100 us), no ECN.
Every flow counts. Reported per size bucket in packets of --mss bytes
(the paper's Fig. 12: 1, 1-10, 10-100, 100-1000, over 1000 packets): mean
and p99 FCT and normalised FCT (FCT over the flow's time on an empty
network: its frames at 10 Gb/s plus its path's RTT), and DCTCP's p99 over
Flowtune's beside the paper's 8.6-10.9x (1 packet) and 2.1-2.9x (1-10
packets); the p99 and largest queueing delay of the leaves' ports toward
the hosts (paper Fig. 13: DCTCP's queues 12x Flowtune's) and of the
leaf-spine ports.

XCP is not run: it needs an explicit feedback header the routers rewrite
and hosts that follow it, neither of which sluice has.

convergence: the paper's experiment (D), Fig. 8: five senders (one in each
of racks 1-5) and a receiver in rack 0; every --step a sender starts a
flow, then every --step one stops: 1, 2, 3, 4, 5, 4, 3, 2, 1 flows. A
transport flow cannot be stopped at an instant, so each flow's size is
what it would send at its fair share until its stop (the ideal schedule),
and a departure is when its last data frame reaches the receiver. From
the receiver's capture each flow's throughput over 100 us windows (the
paper's averaging) sliding by --resolution (10 us): per event, when every
active flow is within 10 % of C(1 - 0.01)/N and stays so for 5 windows
("fair from", us after the event; "converged" = that window's end, the
paper's "within one averaging interval (100 us)"). DCTCP against
Flowtune, on the same fabric.

Scaled: --fabric-ms of arrivals (the paper does not say how long it ran);
a run of 10 ms at load 0.6 is about 9,000 flows. Writes results.json,
fct_p99.png (Fig. 12's shape: the improvement of Flowtune's p99 normalised
FCT over DCTCP's by size), fct_cdf.png, convergence.png (Fig. 8's shape)
and each run's directory (sluice.yaml, completions.csv, summary.json).
"""

import argparse
import csv
import json
import os
import shutil
import subprocess

import yaml

from .. import cli, counters, experiment as exp, fct_analysis, provenance, queue_trace, sluice
from .. import spread
from .. import transport_frames, workload_gen
from ..units import format_ns, parse_size, parse_time, seconds_to_ns

ROOT = sluice.ROOT
PY = "/usr/bin/python3"
REPLAY_LEAD_S = sluice.REPLAY_LEAD_S
HOST_RATE = 10e9
FRAME_EXTRA = 70 + 24  # a transport frame's headers and its wire overhead
THRESHOLD = 0.01  # the allocator's headroom (flowtune_allocator.threshold)
STABLE = 5        # windows a fair allocation must hold for
# The paper's size ranges (Fig. 12), in packets.
BUCKETS = ((1, 1, "1"), (2, 10, "1-10"), (11, 100, "10-100"), (101, 1000, "100-1000"),
           (1001, float("inf"), ">1000"))
# The paper's improvement of p99 FCT, Flowtune over DCTCP (5.3, (H)),
# across its loads.
PAPER_VS_DCTCP = {"1": "8.6-10.9x", "1-10": "2.1-2.9x"}
# The baselines' p99 FCT over Flowtune's, as section 5.3 (H) words them.
PAPER_VS = {
    "dctcp": PAPER_VS_DCTCP,
    "pfabric": {"1": "about 1x (1-100 packets: 'similar ratios')",
                "1-10": "about 1x", "10-100": "about 1x"},
    "sfq-codel": {"10-100": "3.5-3.8x at high load", "100-1000": "2.1-2.4x at low load",
                  ">1000": "about 1x ('comparable on large flows')"},
}
SCHEMES = ("dctcp", "flowtune", "flowtune-lease10ms", "pfabric", "sfq-codel")
# Per scheme: tools/experiment's scheme, the hosts' transport (None: the
# flowtune transport) and whether the hosts are ECN-capable.
SCHEME_SETUP = {
    "dctcp": ("ecn", "dctcp", True),
    "flowtune": ("flowtune", None, False),
    "flowtune-lease10ms": ("flowtune", None, False),
    # pFabric: its transport and its switch port (36 KB buffer, rank order).
    "pfabric": ("pfabric", "pfabric", False),
    # The paper's Cubic over sfqCoDel: sluice's hosts have no Cubic, so
    # NewReno TCP, over SFQ (32 queues) with CoDel in each (5 us / 100 us).
    "sfq-codel": ("sfq-codel", "tcp", False),
}


def fabric_command(a, path):
    return [PY, os.path.join(ROOT, "tools", "fabric"), "leafspine", "--leaves", "9",
            "--hosts-per-leaf", "16", "--spines", "4", "--links-per-spine", "1",
            "--rate", "40Gbps", "--host-rate", "10Gbps", "--delay", "1.5us",
            "--host-delay", "3.5us", "--port-buffer-packets", str(a.port_buffer),
            "--queues-per-port", "1", "--mtu", str(a.mss + 56), "-o", path]


def make_fabric(a):
    path = os.path.join(a.out, "fabric.yaml")
    cli.run_step(fabric_command(a, path), "tools/fabric", stdout=subprocess.DEVNULL)
    with open(path) as f:
        return yaml.safe_load(f)


def hosts_of(conf):
    """[(leaf index, port name, ip)] of the fabric's host ports, in order."""
    out = []
    for sw in conf["switches"]:
        if not sw["name"].startswith("leaf"):
            continue
        for p in sw["ports"]:
            if p.get("role") == "host":
                out.append((int(sw["name"][4:]), p["name"], p["peer_ip"]))
    return out


def scheme_conf(a, fabric, scheme, flows_path, seed, capture=()):
    """The fabric under one scheme: DCTCP hosts with ECN step marking, or
    Flowtune's allocator with hosts pacing at their rates; captures of what
    the switch sends the hosts in `capture` (port names), none elsewhere."""
    exp_scheme, transport, ecn = SCHEME_SETUP[scheme]
    transport = transport or a.flowtune_transport
    lease = "10ms" if scheme == "flowtune-lease10ms" else a.lease
    argv = ["--config", "x", "--schemes", exp_scheme,
            "--workload", "w", "--out", "o", "--clock", "exact", "--seed", str(seed),
            "--flowtune-lease", lease,
            "--transport", transport, "--base-rtt", "20us", "--ecn-k", a.ecn_k,
            "--transport-param", f"mss={a.mss}",
            "--transport-param", f"tcp.min_rto={a.min_rto}",
            "--transport-param", f"tcp.init_cwnd={a.init_cwnd}",
            "--transport-param", f"tcp.ecn={'true' if ecn else 'false'}"]
    args = exp.parse_args(argv)
    conf = exp.apply_scheme(fabric, args.schemes[0], args)
    conf["transport"]["flows"] = flows_path
    if "flowtune_allocator" in conf:
        conf["flowtune_allocator"]["threshold"] = a.threshold
        conf["flowtune_allocator"]["paths"] = a.paths
    for sw in conf["switches"]:
        if (sw.get("flowtune") or {}).get("enabled"):
            sw["flowtune"]["pace_at"] = "host"
            sw["flowtune"]["idle_gap"] = a.idle_gap
        for port in sw["ports"]:
            if scheme == "pfabric":
                # Its segments carry a 4-byte rank and its ACKs an 8-byte SACK.
                port["mtu"] = a.mss + 56 + 12
            if port.get("role") == "host":
                if port["name"] in capture and sw["name"] == "leaf0":
                    port["pcap"] = {"tx": f"rx_{port['name']}.pcap", "snaplen": 128}
                else:
                    port["pcap"] = {}
    return conf


# ------------------------------------------------------------ FCT

def packets_of(size, mss):
    return max(1, -(-size // mss))


def ideal_ns(size, mss, same_leaf):
    """A flow alone on the empty fabric: its frames at the host rate plus its
    path's RTT (14 us in a rack, 20 us across the spines)."""
    wire = size + packets_of(size, mss) * FRAME_EXTRA
    return wire * 8 / HOST_RATE * 1e9 + (14_000 if same_leaf else 20_000)


def fct_runs(a, fabric, rows, per_flow):
    leaf_of = {ip: leaf for leaf, _, ip in hosts_of(fabric)}
    for seed in a.seeds:
        wl = os.path.join(a.out, f"fct-seed{seed}", "workload")
        if not os.path.exists(os.path.join(wl, "flows.csv")):
            cli.run_step([PY, os.path.join(ROOT, "tools", "workload"), "--cdf", a.cdf,
                          "--load", "%.6f" % a.load, "--link-rate", "10Gbps",
                          "--hosts-from-config", os.path.join(a.out, "fabric.yaml"),
                          "--duration", "%gms" % a.fabric_ms, "--seed", str(seed),
                          "--mtu", str(a.mss + 52), "--no-pcaps", "--out", wl], "tools/workload",
                         stdout=subprocess.DEVNULL)
        for scheme in a.schemes:
            d = os.path.join(a.out, f"fct-seed{seed}", scheme)
            shutil.rmtree(d, ignore_errors=True)
            os.makedirs(d)
            conf = scheme_conf(a, fabric, scheme, os.path.join(wl, "flows.csv"), seed)
            with open(os.path.join(d, "sluice.yaml"), "w") as f:
                yaml.safe_dump(conf, f, sort_keys=False)
            seconds = REPLAY_LEAD_S + (a.fabric_ms + a.drain_ms) / 1000
            trace = ["--queue-trace", "qt.csv", "--queue-trace-interval", "0.0001"]
            run = sluice.run(a.sluice, d, seconds, prefix=f"reproduce-ft-{os.getpid()}-{scheme}",
                             extra=trace)
            summary, wall, cpu, rss = run.summary, run.wall_s, run.cpu_s, run.rss_mb
            results, _ = fct_analysis.results_from_completions(os.path.join(d, "completions.csv"))
            flows = []
            for r in results:
                same = leaf_of[r.spec.src] == leaf_of[r.spec.dst]
                fct = r.fct_ns
                flows.append({"size": r.spec.size, "packets": packets_of(r.spec.size, a.mss),
                              "fct_us": fct / 1e3, "norm": fct / ideal_ns(r.spec.size, a.mss, same),
                              "finished": r.finished})
            per_flow[(seed, scheme)] = flows
            row = {"seed": seed, "scheme": scheme, "flows": len(flows),
                   "unfinished": sum(1 for f in flows if not f["finished"]),
                   "all": fct_stats(flows), "buckets": {}}
            for lo, hi, name in BUCKETS:
                row["buckets"][name] = fct_stats([f for f in flows if lo <= f["packets"] <= hi])
            row.update(queue_delay(os.path.join(d, "qt.csv"), fabric))
            row["drops"] = counters.total_drops(summary)
            t = summary.get("transport", {})
            row["timeouts"] = t.get("timeouts", 0)
            ft = [sw.get("flowtune") for sw in summary["switches"] if sw.get("flowtune")]
            row["rate_updates"] = sum(x.get("rate_updates", 0) for x in ft)
            alloc = summary.get("flowtune_allocator") or {}
            row["allocator"] = {k: v for k, v in alloc.items() if not isinstance(v, (dict, list))}
            row.update(wall_s=wall, cpu_s=cpu, rss_mb=rss,
                       fabric_s=summary.get("clock", {}).get("fabric_seconds"))
            rows.append(row)
            b1, b10 = row["buckets"]["1"], row["buckets"]["1-10"]
            print(f"reproduce: seed {seed} {scheme}: {row['flows']} flows "
                  f"({row['unfinished']} unfinished); p99 FCT 1 packet "
                  f"{b1['p99_us'] if b1 else 0:.1f} us, 1-10 packets "
                  f"{b10['p99_us'] if b10 else 0:.1f} us; {row['drops']} drops, "
                  f"{row['timeouts']} RTOs; wall {wall:.0f} s, cpu {cpu:.0f} s, "
                  f"{rss:.0f} MB", flush=True)


def fct_stats(flows):
    if not flows:
        return None
    fct = [f["fct_us"] for f in flows]
    norm = [f["norm"] for f in flows]
    return {"n": len(flows), "unfinished": sum(1 for f in flows if not f["finished"]),
            "mean_us": sum(fct) / len(fct), "p99_us": fct_analysis.nearest_rank(fct, 99),
            "norm_mean": sum(norm) / len(norm), "norm_p99": fct_analysis.nearest_rank(norm, 99)}


def queue_delay(path, fabric):
    """p99 and max queueing delay (us) of the leaves' ports toward the hosts
    (10 Gb/s) and of the fabric's ports between leaves and spines, both
    ways (40 Gb/s), over every 100 us sample (an empty queue counts as 0)."""
    kinds = {}
    for sw in fabric["switches"]:
        for p in sw["ports"]:
            kinds[(sw["name"], p["name"])] = ("queue", HOST_RATE) if p.get("role") == "host" \
                else ("uplink_queue", 4 * HOST_RATE)
    _, _, ports = queue_trace.read_queue_trace(path)
    delays = {"queue": [], "uplink_queue": []}
    for key, samples in ports.items():
        if key in kinds:
            kind, rate = kinds[key]
            delays[kind] += [b * 8 / rate * 1e6 for t, b, _, _ in samples if t >= 0]
    out = {}
    for kind, v in delays.items():
        out[f"{kind}_p99_us"] = fct_analysis.nearest_rank(v, 99) if v else 0.0
        out[f"{kind}_max_us"] = max(v) if v else 0.0
    return out


# ------------------------------------------------------------ convergence

def conv_schedule(a):
    """Flow i from i x step to (9 - i) x step (ns), and its size: what it
    sends at its fair share G(1 - 0.01)/N until then."""
    step = a.step_ns
    goodput = HOST_RATE * (1 - THRESHOLD) * a.mss / (a.mss + FRAME_EXTRA)
    active = [min(k + 1, 9 - k) for k in range(9)]
    out = []
    for i in range(5):
        size = sum(goodput * step / 1e9 / 8 / active[k] for k in range(i, 9 - i))
        out.append((i * step, (9 - i) * step, int(size)))
    return out


def conv_flows(path, fabric, sched):
    hosts = hosts_of(fabric)
    recv = next(h for h in hosts if h[0] == 0)
    senders = [next(h for h in hosts if h[0] == leaf) for leaf in range(1, 6)]
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(workload_gen.FLOW_FIELDS)
        for i, ((start, _, size), s) in enumerate(zip(sched, senders)):
            t = start + 1_000
            w.writerow([i + 1, s[1], recv[1], s[2], recv[2], size, 0, format_ns(t),
                        format_ns(t), format_ns(t), 0])
    return recv


def conv_runs(a, fabric, out):
    sched = conv_schedule(a)
    res_ns = a.resolution_ns
    k = a.window_ns // res_ns
    for scheme in [s for s in a.schemes if s in ("dctcp", "flowtune")]:
        d = os.path.join(a.out, "convergence", scheme)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        recv = conv_flows(os.path.join(d, "flows.csv"), fabric, sched)
        conf = scheme_conf(a, fabric, scheme, "flows.csv", 1, capture=(recv[1],))
        with open(os.path.join(d, "sluice.yaml"), "w") as f:
            yaml.safe_dump(conf, f, sort_keys=False)
        seconds = REPLAY_LEAD_S + 11 * a.step_ns / 1e9
        run = sluice.run(a.sluice, d, seconds, prefix=f"reproduce-ftc-{os.getpid()}-{scheme}")
        summary, wall, cpu, rss = run.summary, run.wall_s, run.cpu_s, run.rss_mb
        origin = fct_analysis.find_key(summary, "replay_start_epoch_seconds")
        if origin is None:
            raise cli.ToolError(f"{d}/summary.json has no replay_start_epoch_seconds")
        origin = round(float(origin) * 1e9)  # capture time of the flow list's time 0
        arrivals = transport_frames.data_arrivals(os.path.join(d, f"rx_{recv[1]}.pcap"))
        n_bins = 10 * a.step_ns // res_ns + 1
        bins = [[0] * n_bins for _ in range(5)]
        first, last = [None] * 5, [None] * 5
        for ts, flow, nbytes, _ in arrivals:
            t = ts - origin
            i = flow - 1
            if 0 <= i < 5 and 0 <= t // res_ns < n_bins:
                bins[i][t // res_ns] += nbytes * 8
                first[i] = t if first[i] is None else first[i]
                last[i] = t
        starts = [s + 1_000 for s, _, _ in sched]
        events = sorted([(t, "arrival", i) for i, t in enumerate(starts)] +
                        [(t, "departure", i) for i, t in enumerate(last) if t is not None])
        cap = HOST_RATE * res_ns / 1e9 * a.mss / (a.mss + FRAME_EXTRA)  # payload bits per bin
        evs = []
        for n, (t, kind, who) in enumerate(events):
            act = [i for i in range(5) if starts[i] <= t and (last[i] is None or last[i] > t)]
            nxt = events[n + 1][0] if n + 1 < len(events) else 10 * a.step_ns
            ev = {"t_ms": t / 1e6, "event": kind, "flow": who, "flows": len(act),
                  "fair_from_us": None, "converged_us": None}
            if act:
                share = cap * (1 - a.threshold) / len(act)

                def fair(w):
                    return all(abs(sum(bins[i][w:w + k]) / k - share) <= 0.1 * share
                               for i in act)
                b0 = -(-t // res_ns)
                for b in range(b0, nxt // res_ns - (STABLE - 1) * k - k + 1):
                    if all(fair(w) for w in range(b, b + (STABLE - 1) * k + 1)):
                        ev["fair_from_us"] = (b * res_ns - t) / 1e3
                        ev["converged_us"] = ev["fair_from_us"] + a.window_ns / 1e3
                        break
            if kind == "departure":
                ev["planned_ms"] = sched[who][1] / 1e6
            evs.append(ev)
        out[scheme] = {"events": evs, "bins": bins, "wall_s": wall, "cpu_s": cpu, "rss_mb": rss,
                       "drops": counters.total_drops(summary),
                       "sizes": [s for _, _, s in sched]}
        done = ", ".join("-" if e["fair_from_us"] is None else "%.0f" % e["fair_from_us"]
                         for e in evs)
        print(f"reproduce: convergence {scheme}: fair from (us after each event) {done}; "
              f"wall {wall:.0f} s, cpu {cpu:.0f} s, {rss:.0f} MB", flush=True)


# ------------------------------------------------------------ output

def fmt(st, key, unit=""):
    if not st:
        return "-"
    lb = ">= " if st["unfinished"] else ""
    return f"{lb}{st[key]:.1f}{unit}" if key.endswith("us") else f"{lb}{st[key]:.2f}"


def print_ratios(base, flowtune, paper):
    """Per size bucket: base's p99 normalised FCT over Flowtune's, beside the
    paper's figure for that bucket."""
    for _, _, n in BUCKETS:
        if base["buckets"][n] and flowtune["buckets"][n]:
            ratio = base["buckets"][n]["norm_p99"] / flowtune["buckets"][n]["norm_p99"]
            print(f"  {n:>8} packets: {ratio:.2f}x  (paper {paper.get(n, '-')})")


def print_fct(a, rows):
    print()
    print("| seed | scheme | flows (unfinished) | " +
          " | ".join(f"{n} pkt: n, mean / p99 us, p99 norm." for _, _, n in BUCKETS) +
          " | all: mean / p99 us | leaf-to-host queue p99 / max us | leaf-spine queue p99 / max us "
          "| drops | RTOs "
          "| wall s | CPU s | RSS MB |")
    print("|---|---|---|" + "---|" * len(BUCKETS) + "---|---|---|---:|---:|---:|---:|---:|")
    for r in rows:
        cells = []
        for _, _, n in BUCKETS:
            st = r["buckets"][n]
            cells.append("-" if not st else
                         f"{st['n']}, {fmt(st, 'mean_us')} / {fmt(st, 'p99_us')}, "
                         f"{fmt(st, 'norm_p99')}")
        al = r["all"]
        print(f"| {r['seed']} | {r['scheme']} | {r['flows']} ({r['unfinished']}) | " +
              " | ".join(cells) + f" | {fmt(al, 'mean_us')} / {fmt(al, 'p99_us')} | "
              f"{r['queue_p99_us']:.1f} / {r['queue_max_us']:.1f} | "
              f"{r['uplink_queue_p99_us']:.1f} / {r['uplink_queue_max_us']:.1f} | {r['drops']} | "
              f"{r['timeouts']} | {r['wall_s']:.0f} | {r['cpu_s']:.0f} | {r['rss_mb']:.0f} |")
    print("(FCT from arrival to the ACK of the last byte; norm. = FCT / the flow's time on an "
          "empty fabric; '>=' marks figures with unfinished flows, counted to the run's end)")
    by = {(r["seed"], r["scheme"]): r for r in rows}
    for seed in a.seeds:
        f = by.get((seed, "flowtune"))
        for base in ("pfabric", "sfq-codel"):
            b = by.get((seed, base))
            if not b or not f:
                continue
            print(f"seed {seed}: {base}'s p99 normalised FCT over Flowtune's, by size "
                  "(paper, section 5.3 (H), in words):")
            print_ratios(b, f, PAPER_VS[base])
        d = by.get((seed, "dctcp"))
        if not d or not f:
            continue
        print(f"seed {seed}: DCTCP's p99 normalised FCT over Flowtune's, by size (paper, "
              "Fig. 12: 8.6-10.9x at 1 packet, 2.1-2.9x at 1-10 packets):")
        print_ratios(d, f, PAPER_VS_DCTCP)
        if d["queue_p99_us"] and f["queue_p99_us"]:
            print(f"  leaf-to-host queue p99: DCTCP {d['queue_p99_us']:.1f} us, Flowtune "
                  f"{f['queue_p99_us']:.1f} us (paper, Fig. 13: DCTCP's queues 12x longer)")
    seeds = [s for s in a.seeds if (s, "dctcp") in by and (s, "flowtune") in by]
    if len(seeds) > 1:
        print(f"seeds {','.join(map(str, seeds))}: mean (min-max) of the ratios:")
        for _, _, n in BUCKETS:
            ratios = [by[(s, "dctcp")]["buckets"][n]["norm_p99"] /
                      by[(s, "flowtune")]["buckets"][n]["norm_p99"] for s in seeds
                      if by[(s, "dctcp")]["buckets"][n] and by[(s, "flowtune")]["buckets"][n]]
            print(f"  {n:>8} packets: {spread.text(ratios, '%.2f')}x")
        for scheme in ("dctcp", "flowtune"):
            print(f"  leaf-to-host queue p99, {scheme}: "
                  f"{spread.text([by[(s, scheme)]['queue_p99_us'] for s in seeds], '%.1f')} us")


def print_conv(conv):
    """One row per planned event (arrivals of flows 0..4, then departures of
    4..0), each scheme's actual instant and convergence beside."""
    print()
    schemes = list(conv)
    print("| event | flows after (planned) | " +
          " | ".join(f"{s}: at ms | {s}: fair from / converged us" for s in schemes) + " |")
    print("|---|---:|" + "---:|---|" * len(schemes))
    order = [("arrival", i) for i in range(5)] + [("departure", i) for i in range(4, -1, -1)]
    for kind, flow in order:
        cells = []
        flows = flow + 1 if kind == "arrival" else flow  # as planned
        for s in schemes:
            e = next((x for x in conv[s]["events"] if (x["event"], x["flow"]) == (kind, flow)),
                     None)
            if e is None:
                cells += ["-", "-"]
                continue
            if e["flows"] == 0:
                ff = "(none left)"
            elif e["fair_from_us"] is None:
                ff = "not before the next event"
            else:
                ff = f"{e['fair_from_us']:.0f} / {e['converged_us']:.0f}"
            cells += [f"{e['t_ms']:.3f}", ff + ("" if e["flows"] == flows else
                                                 f" ({e['flows']} flows)")]
        print(f"| {kind} of flow {flow} | {flows} | " + " | ".join(cells) + " |")
    print("(100 us windows sliding by 10 us; fair: every active flow within 10 % of "
          "C(1 - 0.01)/N for 5 windows; a departure is the flow's last data frame at the "
          "receiver; paper: Flowtune within one 100 us interval)")


def plots(a, rows, per_flow, conv):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise cli.ToolError("Python module 'matplotlib' is missing "
                            "(Debian: apt-get install python3-matplotlib)")
    written = []
    by = {(r["seed"], r["scheme"]): r for r in rows}
    if rows and all((s, sc) in by for s in a.seeds for sc in ("dctcp", "flowtune")):
        fig, ax = plt.subplots(figsize=(6, 3.4))
        names = [n for _, _, n in BUCKETS]
        width = 0.8 / len(a.seeds)
        for j, seed in enumerate(a.seeds):
            d, f = by[(seed, "dctcp")], by[(seed, "flowtune")]
            vals = [(d["buckets"][n]["norm_p99"] / f["buckets"][n]["norm_p99"])
                    if d["buckets"][n] and f["buckets"][n] else 0 for n in names]
            ax.bar([i + j * width for i in range(len(names))], vals, width,
                   label=f"sluice, seed {seed}")
        ax.plot([-0.3, 0.7], [8.6, 8.6], "k--", lw=0.8)
        ax.plot([-0.3, 0.7], [10.9, 10.9], "k--", lw=0.8, label="paper (Web workload)")
        ax.plot([0.7, 1.7], [2.1, 2.1], "k--", lw=0.8)
        ax.plot([0.7, 1.7], [2.9, 2.9], "k--", lw=0.8)
        ax.axhline(1.0, color="0.6", lw=0.8)
        ax.set_xticks(range(len(names)))
        ax.set_xticklabels(names)
        ax.set_xlabel("flow size (packets)")
        ax.set_ylabel("DCTCP p99 / Flowtune p99\n(normalised FCT)")
        ax.set_title(f"p99 FCT improvement, load {a.load}, {os.path.basename(a.cdf)}, "
                     f"{a.fabric_ms:g} ms", fontsize=9)
        ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(os.path.join(a.out, "fct_p99.png"), dpi=110)
        written.append("fct_p99.png")
        fig, axes = plt.subplots(1, 2, figsize=(8, 3.2))
        for ax, (lo, hi, name) in zip(axes, BUCKETS[:2]):
            for scheme, style in (("dctcp", "--"), ("flowtune", "-")):
                v = sorted(f["fct_us"] for s in a.seeds for f in per_flow[(s, scheme)]
                           if lo <= f["packets"] <= hi)
                if v:
                    ax.plot(v, [(i + 1) / len(v) for i in range(len(v))], style, label=scheme)
            ax.set_xscale("log")
            ax.set_xlabel("FCT (us)")
            ax.set_title(f"{name}-packet flows", fontsize=9)
            ax.set_ylim(0.9, 1.0)
            ax.legend(fontsize=7)
        axes[0].set_ylabel("CDF (upper 10 %)")
        fig.tight_layout()
        fig.savefig(os.path.join(a.out, "fct_cdf.png"), dpi=110)
        written.append("fct_cdf.png")
    if conv:
        fig, axes = plt.subplots(len(conv), 1, figsize=(7, 2.4 * len(conv)), sharex=True,
                                 squeeze=False)
        k = a.window_ns // a.resolution_ns
        for ax, (scheme, c) in zip(axes[:, 0], conv.items()):
            for i, b in enumerate(c["bins"]):
                avg = [sum(b[w:w + k]) / k / (a.resolution_ns / 1e9) / 1e9
                       for w in range(0, len(b) - k)]
                ax.plot([(w + k) * a.resolution_ns / 1e6 for w in range(len(avg))], avg,
                        lw=0.7, label=f"flow {i}")
            ax.set_ylabel(f"{scheme}\nGb/s")
            ax.set_ylim(0, 10)
        axes[0, 0].legend(fontsize=6, ncol=5, loc="upper right")
        axes[-1, 0].set_xlabel("time (ms); throughput over 100 us windows, every 10 us")
        fig.tight_layout()
        fig.savefig(os.path.join(a.out, "convergence.png"), dpi=110)
        written.append("convergence.png")
    return written


def main(argv):
    p = argparse.ArgumentParser(prog="tools/reproduce flowtune",
                                description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="\n".join(__doc__.split("\n")[2:]))
    p.add_argument("--parts", default="fct,convergence", help="fct, convergence (both)")
    p.add_argument("--schemes", default="dctcp,flowtune,flowtune-lease10ms",
                   help="fct: some of " + ", ".join(SCHEMES) + " (the first three); "
                        "convergence runs dctcp and flowtune of these")
    p.add_argument("--load", type=float, default=0.6,
                   help="fct: load of the server links (0.6; the paper runs 0.2-0.8)")
    p.add_argument("--cdf", default=os.path.join(ROOT, "conf", "workloads", "fb_hadoop.cdf"),
                   help="fct: flow sizes (Facebook Hadoop; the paper's Web is not at hand)")
    p.add_argument("--fabric-ms", type=float, default=10.0, help="fct: ms of arrivals (10)")
    p.add_argument("--drain-ms", type=float, default=20.0,
                   help="fct: ms the run goes on after the last arrival (20)")
    p.add_argument("--seeds", default="1", help="fct: comma-separated seeds (1)")
    p.add_argument("--step", default="10ms",
                   help="convergence: time between flow events (10ms, the paper's)")
    p.add_argument("--resolution", default="10us",
                   help="convergence: the 100 us window slides by this much (10us)")
    p.add_argument("--window", default="100us",
                   help="convergence: throughput averaging window (100us, the paper's)")
    p.add_argument("--mss", type=int, default=1460, help="payload bytes per packet (1460)")
    p.add_argument("--ecn-k", default="100KB",
                   help="dctcp: ECN step threshold (100KB, about 65 full frames)")
    p.add_argument("--min-rto", default="1ms", help="both: TCP minimum RTO (1ms)")
    p.add_argument("--init-cwnd", type=int, default=10,
                   help="the TCP hosts' initial window in segments (10, RFC 6928; the paper "
                        "does not give its ns-2 TCP's)")
    p.add_argument("--port-buffer", type=int, default=600,
                   help="switch buffer in full packets per port (600; the paper gives none and "
                        "reports DCTCP dropping negligible amounts, 5.3 (J); at 150 DCTCP "
                        "dropped 3,733 packets in 10 ms)")
    p.add_argument("--flowtune-transport", choices=("tcp", "dctcp"), default="tcp",
                   help="flowtune: the hosts' TCP under the allocated rates (tcp)")
    p.add_argument("--lease", default="100us",
                   help="flowtune: how long a rate holds at the host (100us, sluice's least: "
                        "the paper's rates 'must arrive every few tens of microseconds', "
                        "section 6); flowtune-lease10ms runs sluice's default 10ms")
    p.add_argument("--threshold", type=float, default=THRESHOLD,
                   help="flowtune: the allocator's headroom and notification threshold "
                        "(0.01, the paper's)")
    p.add_argument("--paths", choices=("fabric", "hosts"), default="fabric",
                   help="flowtune: the allocator's model, the links each flow crosses (fabric, "
                        "the paper's full paths) or its host links only (hosts: one big switch)")
    p.add_argument("--idle-gap", default="100us",
                   help="flowtune: the edge ends a flowlet after this long idle (100us)")
    p.add_argument("--out", default=os.path.join(ROOT, "runs", "reproduce", "flowtune"))
    p.add_argument("--sluice", default=os.path.join(ROOT, "build", "switch", "sluice"))
    a = p.parse_args(argv)
    a.parts = [x.strip() for x in a.parts.split(",") if x.strip()]
    a.schemes = [x.strip().lower() for x in a.schemes.split(",") if x.strip()]
    for x in a.parts:
        if x not in ("fct", "convergence"):
            raise cli.ToolError(f"--parts: unknown part {x!r} (fct, convergence)")
    for x in a.schemes:
        if x not in SCHEMES:
            raise cli.ToolError(f"--schemes: unknown scheme {x!r} ({', '.join(SCHEMES)})")
    try:
        a.seeds = [int(s) for s in a.seeds.split(",") if s.strip()]
        a.step_ns = seconds_to_ns(parse_time(a.step))
        a.resolution_ns = seconds_to_ns(parse_time(a.resolution))
        a.window_ns = seconds_to_ns(parse_time(a.window))
        parse_size(a.ecn_k)
    except ValueError as e:
        raise cli.ToolError(str(e))
    if a.window_ns % a.resolution_ns:
        raise cli.ToolError("--window must be a multiple of --resolution")
    a.sluice = os.path.abspath(a.sluice)
    a.cdf = os.path.abspath(a.cdf)
    a.out = os.path.abspath(a.out)
    os.makedirs(a.out, exist_ok=True)
    fabric = make_fabric(a)
    rows, per_flow, conv = [], {}, {}
    sluice.expect_runs(
        (len(a.seeds) * len(a.schemes) if "fct" in a.parts else 0) +
        (sum(1 for s in a.schemes if s in ("dctcp", "flowtune")) if "convergence" in a.parts
         else 0))
    if "fct" in a.parts:
        fct_runs(a, fabric, rows, per_flow)
        print_fct(a, rows)
    if "convergence" in a.parts:
        conv_runs(a, fabric, conv)
        print_conv(conv)
    written = plots(a, rows, per_flow, conv)
    with open(os.path.join(a.out, "results.json"), "w") as f:
        json.dump({"rows": rows, "args": vars(a), "fabric_command":
                   " ".join(fabric_command(a, "fabric.yaml")[1:]),
                   "convergence": {s: {k: v for k, v in c.items() if k != "bins"}
                                   for s, c in conv.items()}},
                  f, indent=2, default=str)
    provenance.write(a.out, seeds=a.seeds, inputs=[a.cdf], binaries=[a.sluice])
    print(f"reproduce: wrote {a.out}/results.json, provenance.json" +
          "".join(f", {w}" for w in written))
    return 0
