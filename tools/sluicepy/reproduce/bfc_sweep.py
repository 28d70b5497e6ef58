"""Sweeps the BFC paper's testbed figures of its §6.1 (Fig. 7b and Fig. 8).

    tools/reproduce bfc-sweep th --out runs/bfc-th [--th 50us,100us,200us,400us,800us,1600us]
    tools/reproduce bfc-sweep flows --out runs/bfc-flows [--flows 4,8,12,16,20] [--seeds 1,2,3]

Both run the testbed of conf/bfc-testbed.yaml (the paper's Fig. 6: g1 -> s1
-> s2 -> r1, g2 -> s1 -> s2 -> r2, g3 -> s3 -> s2 -> r2) the way the paper
ran it (§6.1): every port at the same rate (the switch-to-switch links are
set to the host rate; --uplink-rate), 16 queues per port (--queues), open-
loop senders (the paper's on-chip packet generator, no end-to-end
congestion control: sluice's pcap replay hosts). Each point's configuration
is written beside its results (OUT/<point>/testbed.yaml).

th (Fig. 7b): one group-2 flow against one group-3 flow at s2 -> r2, each
  sender at line rate (--size each), under dynamic BFC with bfc.th set to
  each value (Th = th x rate / N_active). Per point, over the congested
  interval (from 2 ms after both start until the first has sent its last
  packet; both senders have a backlog upstream all along): r2's
  utilisation (wire bytes in its capture), and from the queue trace of
  s2/r2 (sampled every 10 us of fabric time, so the mean of the samples is
  the time average) the time-average and peak of the port's queue and
  their value per flow (port / 2). Writes bfc_sweep_th.png and
  bfc_sweep_th.json.

flows (Fig. 8): two group-1 flows, N group-2 flows, eight group-3 flows,
  all --size (the paper: 1.5 MB), under bfc-single, bfc-stochastic and bfc
  (dynamic), for each N and seed. A seed draws the start of every flow but
  each sender's first (at 0) uniformly in [0, --jitter), which changes the
  flow ids and so the UDP source ports that stochastic assignment hashes.
  Per run: group-1 mean FCT (tools/fct; unfinished flows counted to the end
  of the run, a lower bound marked ">="), and the evidence that group 1 is
  bottlenecked at s1 -> s2: while group 1 is in flight the s1 -> s2 link
  carries its rate (groups 1 + 2 delivered) while group 1 gets less than
  its sender's rate. Per (scheme, N): mean and sample standard deviation
  over the seeds. Writes bfc_sweep_flows.png and bfc_sweep_flows.json.

Every sluice run goes through the fidelity gate (docs/testbed.md); a run
over the limits is written, marked "NOT VALID", and the tool exits 3 unless
--allow-unfaithful. With --lock FILE each point's runs hold that flock while
they run, so other heavy jobs that take it interleave between points (do not
run the tool itself under the same lock). docs/mechanisms/bfc-testbed.md has
the figures.
"""

import argparse
import copy
import json
import math
import os
import random
import shutil
import statistics

import yaml

from .. import cli, counters, fidelity, provenance, sluice
from ..fct_analysis import start_offset_from_file
from ..pcapio import read_pcap
from ..queue_trace import read_queue_trace
from ..units import parse_rate, parse_size, parse_time
from . import bfc_testbed as tb

ROOT = sluice.ROOT

PY = "/usr/bin/python3"
FLOW_SCHEMES = ("bfc-single", "bfc-stochastic", "bfc")
LABELS = {"bfc": "BFC + dynamic", "bfc-stochastic": "BFC + stochastic",
          "bfc-single": "BFC + single"}
COLORS = {"bfc": "C0", "bfc-stochastic": "C1", "bfc-single": "C3"}
WIRE_FRAME = 1538          # wire bytes of a full workload frame (1514 + 24)
APP_PER_FRAME = 1448       # flow bytes it carries
G2_SRC_IP = bytes([10, 0, 2, 2])   # g2's peer_ip in conf/bfc-testbed.yaml
G3_SRC_IP = bytes([10, 0, 3, 2])
# A flow "has no packets at s2" (the paper's App. A) when r2 receives none of
# its frames for longer than this: with both flows served, DRR alternates and
# a flow's frames arrive every 2 frame times (24.6 us at 1 Gb/s).
NO_PACKETS_GAP_NS = 50_000
IP_SRC_OFFSET = 14 + 12


def parse_args(argv):
    p = argparse.ArgumentParser(prog="tools/reproduce bfc-sweep",
                                description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    sub = p.add_subparsers(dest="sweep", required=True)
    for name in ("th", "flows"):
        s = sub.add_parser(name)
        s.add_argument("--out", required=True, help="run directory (created)")
        s.add_argument("--config", default=os.path.join(ROOT, "conf", "bfc-testbed.yaml"))
        s.add_argument("--queues", type=int, default=16,
                       help="queues per port (the paper's SwitchX in loopback mode: 16)")
        s.add_argument("--queue-capacity", type=int, default=16384,
                       help="frames per queue (conf/bfc-testbed.yaml: 8192)")
        s.add_argument("--buffer", default="32MB",
                       help="shared buffer per switch (conf/bfc-testbed.yaml: 16MB). Open-loop "
                            "senders leave their backlog upstream: under single assignment "
                            "s1's one queue holds up to ~21 MB at 20 group-2 flows")
        s.add_argument("--uplink-rate",
                       help="rate of the switch-to-switch links (default: the host rate, as "
                            "the paper's testbed: every port 100 Gbps)")
        s.add_argument("--shaper-burst", default="3076B",
                       help="shaper_burst of every host-facing port: how far a traffic manager "
                            "may run ahead of the emulated wire (default two full frames, so "
                            "the backlog stays in the queues BFC sees; 'default' = sluice's "
                            "64 KiB; docs/configuration.md)")
        s.add_argument("--sluice", default=sluice.BINARY)
        s.add_argument("--plots-dir", help="also copy the PNG here")
        s.add_argument("--lock", default="",
                       help="flock this file around each point's runs (default: none)")
        s.add_argument("--no-run", action="store_true",
                       help="only analyse and plot an existing OUT")
        fidelity.add_arguments(s)
    th = sub.choices["th"]
    th.add_argument("--th", default="10us,25us,50us,100us,200us,400us,800us,1600us",
                    help="bfc.th values (Th = th x rate / N_active)")
    th.add_argument("--size", default="4MB", help="bytes of each of the two flows")
    th.add_argument("--compare", metavar="DIR",
                    help="also draw the points of an earlier th sweep (its bfc_sweep_th.json), "
                         "e.g. one with another --shaper-burst")
    flows = sub.choices["flows"]
    flows.add_argument("--flows", default="4,8,12,16,20", help="numbers of group-2 flows")
    flows.add_argument("--seeds", default="1,2,3")
    flows.add_argument("--size", default="1.5MB", help="bytes of every flow (paper: 1.5 MB)")
    flows.add_argument("--jitter", default="500us",
                       help="flow starts after each sender's first are uniform in [0, this)")
    flows.add_argument("--schemes", default=",".join(FLOW_SCHEMES))
    a = p.parse_args(argv)
    return a


# ------------------------------------------------------------------ set-up

def host_rate(conf):
    return tb.port_conf(conf, "s1", tb.GROUP1)[1]["rate"]


def derive_config(conf, a, th=None):
    """The testbed as the paper ran it: every switch-to-switch link at
    --uplink-rate (default the host rate), --queues per port, bfc.th, and
    --shaper-burst on the host-facing ports, --queue-capacity frames a queue,
    a --buffer per switch (lossless for these open-loop senders)."""
    c = copy.deepcopy(conf)
    up = a.uplink_rate or host_rate(conf)
    for sw in c["switches"]:
        sw["queues_per_port"] = a.queues
        sw["queue_capacity"] = a.queue_capacity
        sw["buffer"] = {**sw.get("buffer", {}), "size": a.buffer}
        for p in sw["ports"]:
            if p.get("role") == "switch":
                p["rate"] = up
            elif a.shaper_burst != "default":
                p["shaper_burst"] = a.shaper_burst
        if th is not None:
            sw.setdefault("bfc", {"enabled": False})["th"] = th
    return c


def write_yaml(doc, path):
    with open(path, "w") as f:
        yaml.safe_dump(doc, f, sort_keys=False)


def locked(a, cmd):
    return (["flock", a.lock] + cmd) if a.lock else cmd


def make_workload(config_path, matrix, out, seed=1):
    write_yaml({"streams": matrix}, os.path.join(out, "matrix.yaml"))
    shutil.rmtree(os.path.join(out, "workload"), ignore_errors=True)
    conf = cli.load_yaml(config_path)
    cli.run_step([PY, os.path.join(ROOT, "tools", "workload"), "--matrix",
                  os.path.join(out, "matrix.yaml"), "--link-rate", host_rate(conf),
                  "--hosts-from-config", config_path, "--duration", "1ms",
                  "--seed", str(seed), "--out",
                  os.path.join(out, "workload")], "tools/workload")


def drain_seconds(out, conf):
    """Long enough for r2 to carry every byte sent to it after the senders
    stop (they are open loop: the backlog waits upstream) even when it is
    busy only two thirds of the time (single assignment), plus 20 ms."""
    flows = tb.read_flows(os.path.join(out, "workload"))
    rate = parse_rate(tb.port_conf(conf, *tb.BOTTLENECK)[1]["rate"])
    wire = sum(math.ceil(int(f["size"]) / APP_PER_FRAME) * WIRE_FRAME
               for f in flows if f["dst"] == tb.BOTTLENECK[1])
    sent = max(float(f["end_time"]) for f in flows)
    return max(0.02, 1.5 * wire * 8 / rate - sent + 0.02)


def run_point(a, config_path, out, schemes, queue_trace):
    conf = cli.load_yaml(config_path)
    delay = parse_time(tb.port_conf(conf, *tb.UPSTREAM)[1]["delay"])
    # Open-loop hosts (--host-nic plain), as bfc-testbed: the paper's
    # traffic came from the switch's on-chip generator (6.1).
    cmd = [PY, os.path.join(ROOT, "tools", "experiment"), "--config", config_path,
           "--host-nic", "plain", "--link-rate", host_rate(conf), "--base-rtt", f"{2 * delay:.9f}",
           "--drain", f"{drain_seconds(out, conf):.4f}", "--sluice", a.sluice,
           "--schemes", ",".join(schemes), "--workload", os.path.join(out, "workload"),
           "--out", out] + fidelity.child_arguments(a)
    if queue_trace:
        cmd += ["--queue-trace", queue_trace]
    cli.run_step(locked(a, cmd), "tools/experiment")


# ------------------------------------------------------------------ Fig. 7b

def th_label(th):
    return "th-" + th


def th_matrix(size):
    return [{"src": "g1", "dst": "r1", "size": 1448, "count": 1},  # time origin (see matrix)
            {"src": "g2", "dst": "r2", "size": size, "count": 1},
            {"src": "g3", "dst": "r2", "size": size, "count": 1}]


def out_of_packets_share(capture, start_ns, t0, t1):
    """Per flow toward r2 (by source address): the share of [t0, t1) (s of
    sender time) in gaps between its frames at r2 longer than
    NO_PACKETS_GAP_NS, i.e. while it had no packets at s2 to send."""
    lo, hi = start_ns + t0 * 1e9, start_ns + t1 * 1e9
    last = {G2_SRC_IP: lo, G3_SRC_IP: lo}
    idle = {G2_SRC_IP: 0.0, G3_SRC_IP: 0.0}
    for ts, frame, _ in read_pcap(capture, 30):
        src = frame[IP_SRC_OFFSET:IP_SRC_OFFSET + 4]
        if src not in last or not lo <= ts < hi:
            continue
        if ts - last[src] > NO_PACKETS_GAP_NS:
            idle[src] += ts - last[src]
        last[src] = ts
    for src in idle:
        if hi - last[src] > NO_PACKETS_GAP_NS:
            idle[src] += hi - last[src]
    return {"g2": idle[G2_SRC_IP] / (hi - lo), "g3": idle[G3_SRC_IP] / (hi - lo)}


def analyse_th_point(out, conf):
    flows = tb.read_flows(os.path.join(out, "workload"))
    t0, t1, n = tb.congested_interval(flows)
    d = os.path.join(out, "bfc")
    summary = cli.load_json(os.path.join(d, "summary.json"), "sluice summary")
    s2 = next(sw for sw in summary["switches"] if sw["name"] == "s2")
    rate = parse_rate(tb.port_conf(conf, *tb.BOTTLENECK)[1]["rate"])
    _, queues, ports = read_queue_trace(os.path.join(d, "queue_trace.csv"))
    port_rows = [(t, b, th) for t, b, th, _ in ports.get(tb.BOTTLENECK, []) if t0 <= t < t1]
    if not port_rows:
        raise cli.ToolError(f"{d}: no queue-trace samples of s2/r2 in the congested interval")
    port_bytes = [b for _, b, _ in port_rows]
    per_queue_peak = max((b for pts in queues.get(tb.BOTTLENECK, {}).values()
                          for t, b, _ in pts if t0 <= t < t1), default=0)
    th_ns = s2["bfc"]["th_ns"]
    hop_rtt_ns = s2["bfc"]["hop_rtt_ns"]
    capture = os.path.join(d, "capture", "rx_r2.pcap")
    start_ns = start_offset_from_file(os.path.join(d, "summary.json"))
    util = tb.utilisation(capture, start_ns, t0, t1, rate)
    no_packets = out_of_packets_share(capture, start_ns, t0, t1)
    return {
        "th_ns": th_ns, "hop_rtt_ns": hop_rtt_ns, "bottlenecked_flows": n,
        "th_n2_bytes": th_ns * rate / 8e9 / 2, "th_n1_bytes": th_ns * rate / 8e9,
        "congested_interval_seconds": [t0, t1], "samples": len(port_rows),
        "utilisation": util,
        "avg_port_queue_bytes": statistics.fmean(port_bytes),
        "avg_queue_per_flow_bytes": statistics.fmean(port_bytes) / n,
        "peak_port_queue_bytes": max(port_bytes),
        "peak_queue_bytes": per_queue_peak,
        # samples with nothing waiting at s2/r2: not idle time (a lone
        # flow arriving at line rate passes with its queue at 0)
        "port_queue_zero_share": sum(1 for b in port_bytes if b == 0) / len(port_bytes),
        "no_packets_share": no_packets,
        "avg_th_in_use_bytes": statistics.fmean(th for _, _, th in port_rows),
        "bfc_pauses_sent": sum(p.get("bfc_pause_sent", 0) for p in s2["ports"]),
        "drops": counters.total_drops(summary),
        "model_empty_share": appendix_a_empty_share(th_ns, hop_rtt_ns),
    }


def appendix_a_empty_share(th_ns, hop_rtt_ns, x=2.0):
    """The paper's App. A, eq. (4): the share of time one of the two flows
    has no packets at s2 (x = 2: each arrives at line rate, drains at half);
    with Th = th x rate / 2 and mu_f = rate / 2, Th / (HRTT mu_f) = th / HRTT."""
    r = th_ns / hop_rtt_ns
    return (x - 1) / (r * x + x * x - 1)


def sweep_th(a, conf, out):
    values = [v.strip() for v in a.th.split(",") if v.strip()]
    points = []
    for th in values:
        d = os.path.join(out, th_label(th))
        os.makedirs(d, exist_ok=True)
        cfg = os.path.join(d, "testbed.yaml")
        if not a.no_run:
            write_yaml(derive_config(conf, a, th), cfg)
            make_workload(cfg, th_matrix(a.size), d)
            run_point(a, cfg, d, ["bfc"], "/".join(tb.BOTTLENECK))
        points.append((th, d))
    return points


def plot_th(res, png, other=None):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    pts = res["points"]
    x = [p["th_ns"] / 1e3 for p in pts]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
    ax1.plot(x, [p["avg_queue_per_flow_bytes"] / 1e3 for p in pts], "o-", label="time average")
    ax1.plot(x, [p["peak_queue_bytes"] / 1e3 for p in pts], "^--", label="peak")
    ax1.plot(x, [p["th_n2_bytes"] / 1e3 for p in pts], "k:", label="Th (2 active queues)")
    if other:
        ox = [p["th_ns"] / 1e3 for p in other["points"]]
        ax1.plot(ox, [p["avg_queue_per_flow_bytes"] / 1e3 for p in other["points"]], "o-",
                 color="0.6", label=f"time average, shaper_burst {other['shaper_burst']}")
    ax1.set_xscale("log")
    ax1.set_xlabel("pause threshold bfc.th (us at 1 Gb/s; /100 for the paper's 100 Gb/s us)")
    ax1.set_ylabel("queue per flow at s2 -> r2 (KB)")
    ax1.set_title(f"queue (port bytes / 2 flows, trace every 10 us); shaper_burst "
                  f"{res['shaper_burst']}", fontsize=9)
    ax1.legend(fontsize=8)
    ax2.plot(x, [(1 - p["utilisation"]) * 100 for p in pts], "o-",
             label="s2 -> r2 under-utilisation (1 - utilisation)")
    if other:
        ax2.plot([p["th_ns"] / 1e3 for p in other["points"]],
                 [(1 - p["utilisation"]) * 100 for p in other["points"]], "o-", color="0.6",
                 label=f"under-utilisation, shaper_burst {other['shaper_burst']}")
    ax2.plot(x, [p["no_packets_share"]["g2"] * 100 for p in pts], "s--",
             label="group-2 flow: share of time with no packets at s2")
    ax2.plot(x, [p["no_packets_share"]["g3"] * 100 for p in pts], "v--",
             label="group-3 flow: same")
    ax2.plot(x, [p["model_empty_share"] * 100 for p in pts], "k:",
             label="App. A eq. (4), x = 2, HRTT = hop_rtt")
    ax2.set_xscale("log")
    ax2.set_xlabel("pause threshold bfc.th (us)")
    ax2.set_ylabel("% of the congested interval")
    ax2.set_title("utilisation, and flows running out of packets", fontsize=9)
    ax2.set_ylim(bottom=0)
    ax2.legend(fontsize=8)
    tb.mark_not_valid(fig, res)
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    plt.close(fig)


def print_th(res):
    print(f"\n{'th':>8} {'Th(N=2) B':>10} {'util':>7} {'avg q/flow B':>12} {'peak q B':>9} "
          f"{'avg port B':>10} {'g2 none':>7} {'g3 none':>7} {'App.A':>6} {'pauses':>7} "
          f"{'drops':>6}")
    for p in res["points"]:
        print(f"{p['th_ns'] / 1e3:>6.0f}us {p['th_n2_bytes']:>10.0f} {p['utilisation']:>7.4f} "
              f"{p['avg_queue_per_flow_bytes']:>12.0f} {p['peak_queue_bytes']:>9} "
              f"{p['avg_port_queue_bytes']:>10.0f} {p['no_packets_share']['g2']:>7.3f} "
              f"{p['no_packets_share']['g3']:>7.3f} {p['model_empty_share']:>6.3f} "
              f"{p['bfc_pauses_sent']:>7} {p['drops']:>6}")


# ------------------------------------------------------------------ Fig. 8

def flows_label(n, seed):
    return f"n{n:02d}-s{seed}"


def flows_matrix(n, size, seed, jitter_s):
    """Each flow its own stream; each sender's first at 0 (sluice maps every
    capture's first frame to the common start), the others uniform in
    [0, jitter)."""
    rng = random.Random(f"bfc-sweep/{seed}/{n}")
    out = []
    for src, dst, count in (("g1", "r1", 2), ("g2", "r2", n), ("g3", "r2", 8)):
        for i in range(count):
            start = 0 if i == 0 else rng.uniform(0, jitter_s)
            out.append({"src": src, "dst": dst, "size": size, "start": f"{start * 1e6:.3f}us"})
    return out


def group1_bottleneck(d, summary, rate):
    """While group 1 is in flight (first to last of its frames at r1): the
    rate r1 receives (group 1) and r2 receives from g2 (group 2); the two
    crossed s1 -> s2 together. Wire bytes, as shares of the link rate."""
    t0, t1, g1_bits, g2_bits = None, None, 0, 0
    recs = [(ts, orig) for ts, _, orig in read_pcap(os.path.join(d, "capture", "rx_r1.pcap"), 0)]
    if len(recs) < 2:
        return None
    t0, t1 = recs[0][0], recs[-1][0]
    g1_bits = sum((o + tb.WIRE_EXTRA) * 8 for _, o in recs)
    for ts, frame, orig in read_pcap(os.path.join(d, "capture", "rx_r2.pcap"), 30):
        if t0 <= ts <= t1 and frame[IP_SRC_OFFSET:IP_SRC_OFFSET + 4] == G2_SRC_IP:
            g2_bits += (orig + tb.WIRE_EXTRA) * 8
    span = (t1 - t0) / 1e9
    return {"seconds": span, "group1_share": g1_bits / (rate * span),
            "group2_share": g2_bits / (rate * span),
            "s1_s2_share": (g1_bits + g2_bits) / (rate * span)}


def analyse_flows_run(d, conf):
    summary = cli.load_json(os.path.join(d, "summary.json"), "sluice summary")
    rate = parse_rate(tb.port_conf(conf, *tb.UPSTREAM)[1]["rate"])
    g1 = tb.group1_fct(os.path.join(d, "fct", "fct.csv"))
    s1 = next(sw for sw in summary["switches"] if sw["name"] == "s1")
    return {"group1": {k: v for k, v in g1.items() if k != "fcts"}, "fcts": g1["fcts"],
            "drops": counters.total_drops(summary),
            "s1_queue_collisions": s1.get("bfc", {}).get("queue_collisions"),
            "bottleneck": group1_bottleneck(d, summary, rate)}


def sweep_flows(a, conf, out):
    ns = [int(v) for v in a.flows.split(",")]
    seeds = [int(v) for v in a.seeds.split(",")]
    size = parse_size(a.size)
    jitter = parse_time(a.jitter)
    runs = []
    for n in ns:
        for seed in seeds:
            d = os.path.join(out, flows_label(n, seed))
            os.makedirs(d, exist_ok=True)
            cfg = os.path.join(d, "testbed.yaml")
            if not a.no_run:
                write_yaml(derive_config(conf, a), cfg)
                make_workload(cfg, flows_matrix(n, size, seed, jitter), d, seed)
                run_point(a, cfg, d, a.schemes, None)
            runs.append((n, seed, d))
    return runs


def aggregate_flows(runs_res, schemes, ns):
    table = {}
    for s in schemes:
        table[s] = {}
        for n in ns:
            vals = [r["schemes"][s]["group1"]["mean_fct_seconds"] for r in runs_res if r["n"] == n]
            lb = any(r["schemes"][s]["group1"]["lower_bound"] for r in runs_res if r["n"] == n)
            table[s][n] = {"mean": statistics.fmean(vals),
                           "sd": statistics.stdev(vals) if len(vals) > 1 else 0.0,
                           "min": min(vals), "max": max(vals), "runs": len(vals),
                           "lower_bound": lb}
    return table


def plot_flows(res, png):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    ns = res["flows"]
    width = 0.8 / len(res["schemes"])
    for i, s in enumerate(res["schemes"]):
        t = res["table"][s]
        xs = [j + (i - (len(res["schemes"]) - 1) / 2) * width for j in range(len(ns))]
        ax.bar(xs, [t[str(n)]["mean"] * 1e3 for n in ns], width,
               yerr=[t[str(n)]["sd"] * 1e3 for n in ns], capsize=3, color=COLORS[s],
               label=LABELS[s])
    ax.axhline(res["ideal_fct_seconds"] * 1e3, color="k", ls=":", lw=1,
               label="group 1 alone at line rate")
    ax.set_xticks(range(len(ns)), [str(n) for n in ns])
    ax.set_xlabel(f"group-2 flows (queues per port: {res['queues']})")
    ax.set_ylabel("group-1 mean FCT (ms)")
    ax.set_title(f"group 1 (2 x {res['size_bytes'] / 1e6:g} MB): mean over "
                 f"{len(res['seeds'])} runs, whiskers one standard deviation", fontsize=9)
    ax.legend(fontsize=8)
    tb.mark_not_valid(fig, res)
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    plt.close(fig)


def print_flows(res):
    print(f"\ngroup-1 mean FCT (ms), mean +- sd over seeds {res['seeds']}:")
    print(f"{'N':>4} " + " ".join(f"{LABELS[s]:>22}" for s in res["schemes"]))
    for n in res["flows"]:
        cells = []
        for s in res["schemes"]:
            c = res["table"][s][str(n)]
            cells.append(f"{'>=' if c['lower_bound'] else ''}{c['mean'] * 1e3:.2f} +- "
                         f"{c['sd'] * 1e3:.2f}")
        print(f"{n:>4} " + " ".join(f"{c:>22}" for c in cells))
    print("\ns1 -> s2 while group 1 is in flight (dynamic; min over seeds): link busy, "
          "group-1 share of its own 1x rate:")
    for n in res["flows"]:
        bs = [r["schemes"]["bfc"]["bottleneck"] for r in res["runs"]
              if r["n"] == n and "bfc" in r["schemes"] and r["schemes"]["bfc"]["bottleneck"]]
        if bs:
            print(f"{n:>4} s1->s2 {min(b['s1_s2_share'] for b in bs):.3f}, group 1 "
                  f"{min(b['group1_share'] for b in bs):.3f}-{max(b['group1_share'] for b in bs):.3f}")


# ------------------------------------------------------------------ main

def main(argv):
    a = parse_args(argv)
    out = os.path.abspath(a.out)
    os.makedirs(out, exist_ok=True)
    conf = cli.load_yaml(a.config)
    prog = "reproduce bfc-sweep"
    if a.no_run:
        floor_line = fidelity.recorded_floor(out)
    else:
        floor_line = fidelity.floor_step(a, fidelity.DEFAULT_EAL, out, prog)
    gate = fidelity.Gate(prog, a, floor_line)
    if a.sweep == "th":
        points = sweep_th(a, conf, out)
        res = {"sweep": "th", "queues": a.queues, "size": a.size,
               "shaper_burst": a.shaper_burst, "points": []}
        for th, d in points:
            gate.check(th_label(th), cli.load_json(os.path.join(d, "bfc", "summary.json"),
                                                   "sluice summary"))
            p = analyse_th_point(d, cli.load_yaml(os.path.join(d, "testbed.yaml")))
            p["th"] = th
            res["points"].append(p)
        name = "bfc_sweep_th"
        res["note"], res["fidelity"] = gate.note, gate.record()
        other = cli.load_json(os.path.join(a.compare, "bfc_sweep_th.json"),
                              "th sweep") if a.compare else None
        plot_th(res, os.path.join(out, name + ".png"), other)
        print_th(res)
    else:
        schemes = [s.strip() for s in a.schemes.split(",") if s.strip()]
        a.schemes = schemes
        runs = sweep_flows(a, conf, out)
        runs_res = []
        for n, seed, d in runs:
            cfg = cli.load_yaml(os.path.join(d, "testbed.yaml"))
            r = {"n": n, "seed": seed, "schemes": {}}
            for s in schemes:
                sd = os.path.join(d, s)
                gate.check(f"{flows_label(n, seed)}/{s}",
                           cli.load_json(os.path.join(sd, "summary.json"), "sluice summary"))
                r["schemes"][s] = analyse_flows_run(sd, cfg)
            runs_res.append(r)
        ns = sorted({n for n, _, _ in runs})
        size = parse_size(a.size)
        rate = parse_rate(host_rate(conf))
        res = {"sweep": "flows", "queues": a.queues, "size_bytes": size, "flows": ns,
               "shaper_burst": a.shaper_burst,
               "seeds": sorted({s for _, s, _ in runs}), "schemes": schemes,
               # two flows sharing g1's link at line rate: both end at ~2 x size
               "ideal_fct_seconds": 2 * math.ceil(size / APP_PER_FRAME) * WIRE_FRAME * 8 / rate,
               "table": {s: {str(n): v for n, v in t.items()}
                         for s, t in aggregate_flows(runs_res, schemes, ns).items()},
               "runs": [{**r, "schemes": {s: {k: v for k, v in d.items() if k != "fcts"}
                                          for s, d in r["schemes"].items()}}
                        for r in runs_res]}
        name = "bfc_sweep_flows"
        res["note"], res["fidelity"] = gate.note, gate.record()
        plot_flows(res, os.path.join(out, name + ".png"))
        print_flows(res)
    with open(os.path.join(out, name + ".json"), "w") as f:
        json.dump(res, f, indent=2)
    if a.plots_dir:
        os.makedirs(a.plots_dir, exist_ok=True)
        shutil.copy(os.path.join(out, name + ".png"), os.path.join(a.plots_dir, name + ".png"))
    if res.get("note"):
        print(res["note"])
    provenance.write(out, seeds=res.get("seeds", [1]), configs=[a.config], binaries=[a.sluice])
    print(f"reproduce bfc-sweep: results in {out}")
    return gate.verdict()
