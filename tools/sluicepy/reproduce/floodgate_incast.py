"""Floodgate against the paper on one server: per-tier buffers under incast
(drop-tail, PFC, Floodgate, Floodgate with dstPause), the spine's buffer
bound, successive incasts with and without dstPause, and random loss on the
internal links with FG_SYNC (docs/mechanisms/floodgate.md).

    tools/reproduce floodgate-incast --out runs/reproduce/floodgate-incast --seeds 1,2

Studies (--studies, default all three), each per seed:

  tiers       background traffic (--cdf, --load, --duration) plus a periodic
              incast toward --incast-receiver from the hosts under the other
              leaves, under every --schemes; then the same incast alone under
              floodgate (one destination, so a spine's whole buffer is its
              bytes toward that destination) for the spine bound, W the
              source leaf's initial window (alpha x rate x hop_rtt + rate x
              credit_interval of its uplink): asserted per spine as peak <=
              W x (source leaves whose flows hash through it), and for the
              spines together as mean peak <= W x fan-in / fan-out; the
              per-spine peak against W x fan-in / fan-out (which holds only
              for an even ECMP split) is reported, not asserted.
  successive  --succ-count incasts --succ-period apart, nothing else, under
              floodgate and floodgate-dstpause: the source leaves' buffer
              before each incast.
  loss        one incast, floodgate with sync on, --losses on every internal
              link port (and 0, the reference): bytes delivered, h0's receive
              rate while busy, and every window back at its initial value.

OUT/report/ gets table.md, results.json, buffer_tiers.png and, with those
studies, successive.png. Switch tiers come from the configuration: the
switch of the receiver's port is the destination leaf, the other switches
with host ports the source leaves, switches without host ports the spines.

FCT figures (non-incast flows only) count every flow, an unfinished one with
FCT = end of the run (tools/fct): '>=' marks lower bounds. Every run is
checked against the fidelity limits (docs/testbed.md, "Fidelity gate"); when
one exceeds them the report is still written, marked "NOT VALID: fidelity
limits exceeded", and the tool exits 3 unless --allow-unfaithful. It exits 4
when the spine bound fails or a loss run ends with a window not back at its
initial value (printed FAIL).
"""

import argparse
import json
import os
import subprocess
import sys
from types import SimpleNamespace

import yaml

from .. import cli, counters, fct_report, fidelity, provenance, sluice, workload_gen
from ..cdf import FlowSizeCdf
from ..hosts import hosts_from_config
from ..pcapio import read_pcap
from ..queue_trace import read_queue_trace
from ..units import parse_rate, parse_size, parse_time, seconds_to_ns

ROOT = sluice.ROOT

PY = "/usr/bin/python3"
STUDIES = ("tiers", "successive", "loss")
TIERS = ("source leaf", "spine", "destination leaf")
EXIT_CHECK_FAILED = 4
COLOURS = {"droptail": "tab:red", "pfc": "tab:blue", "floodgate": "tab:green",
           "floodgate-dstpause": "tab:purple", "floodgate+pfc": "tab:brown"}
# Floodgate's defaults (docs/configuration.md, switches[].floodgate).
FG_ALPHA, FG_CREDIT_INTERVAL = 1.5, "10us"


def parse_args(argv):
    p = argparse.ArgumentParser(prog="tools/reproduce floodgate-incast",
                                description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    p.add_argument("--out", default=os.path.join(ROOT, "runs", "reproduce", "floodgate-incast"))
    p.add_argument("--config", default=os.path.join(ROOT, "conf", "leafspine-4x2.yaml"))
    p.add_argument("--studies", default=",".join(STUDIES))
    p.add_argument("--schemes", default="droptail,pfc,floodgate,floodgate-dstpause",
                   help="schemes of the tiers study")
    p.add_argument("--seeds", default="1,2")
    g = p.add_argument_group("tiers workload")
    g.add_argument("--cdf", default=os.path.join(ROOT, "conf", "workloads", "fb_hadoop.cdf"))
    g.add_argument("--load", type=float, default=0.2)
    g.add_argument("--duration", default="0.02")
    g.add_argument("--link-rate", default="10Gbps")
    g.add_argument("--incast-degree", type=int, default=6)
    g.add_argument("--incast-size", default="3MB", help="total bytes per incast")
    g.add_argument("--incast-period", default="5ms")
    g.add_argument("--incast-receiver", default="h0")
    g.add_argument("--incast-senders", help="comma-separated hosts the senders are drawn from "
                   "(default: every host not under the receiver's leaf)")
    g = p.add_argument_group("successive and loss studies (incast only)")
    g.add_argument("--succ-count", type=int, default=8)
    g.add_argument("--succ-size", default="1MB")
    g.add_argument("--succ-period", default="0.5ms")
    g.add_argument("--losses", default="0.05,0.1")
    g.add_argument("--loss-incast-size", default="3MB")
    g.add_argument("--sync-interval", help="floodgate sync_interval in the loss study "
                   "(default: the configuration's, else 1ms)")
    g = p.add_argument_group("runs")
    g.add_argument("--drain", type=float, default=0.1)
    g.add_argument("--pfc-xoff", default="50KB")
    g.add_argument("--trace-interval", default="0.00001")
    g.add_argument("--bound-trace-interval", default="0.000002",
                   help="queue-trace interval of the incast-only bound run")
    g.add_argument("--sluice", default=sluice.BINARY)
    g.add_argument("--lock", default="", help="flock this file around each run (default: none)")
    g.add_argument("--rerun", action="store_true", help="run what already has results again")
    g.add_argument("--report-only", action="store_true")
    fidelity.add_arguments(p)
    a = p.parse_args(argv)
    a.studies = [s for s in a.studies.split(",") if s]
    for s in a.studies:
        if s not in STUDIES:
            p.error("unknown study %r; known: %s" % (s, ", ".join(STUDIES)))
    a.schemes = [s for s in a.schemes.split(",") if s]
    a.seeds = [int(s) for s in a.seeds.split(",") if s]
    a.losses = [float(x) for x in a.losses.split(",") if x]
    a.out = os.path.abspath(a.out)
    a.config = os.path.abspath(a.config)
    return a


# ---------------------------------------------------------------- fabric

class Fabric:
    """Tiers, links and Floodgate's window, read from the configuration."""

    def __init__(self, conf, receiver):
        self.conf = conf
        self.hosts, self.leaf_of = {}, {}
        for sw in conf["switches"]:
            for p in sw["ports"]:
                if p.get("role") == "host" and p.get("peer_ip"):
                    self.leaf_of[p["name"]] = sw["name"]
        if receiver not in self.leaf_of:
            raise cli.ToolError("receiver %r is not a host port of the configuration" % receiver)
        self.receiver = receiver
        self.dst_leaf = self.leaf_of[receiver]
        leaves = {sw["name"] for sw in conf["switches"]
                  if any(p.get("role") == "host" for p in sw["ports"])}
        self.tiers = {"destination leaf": [self.dst_leaf],
                      "source leaf": sorted(leaves - {self.dst_leaf}),
                      "spine": sorted(sw["name"] for sw in conf["switches"]
                                      if sw["name"] not in leaves)}
        self.ports = {(sw["name"], p["name"]): p for sw in conf["switches"] for p in sw["ports"]}
        self.floodgate = {sw["name"]: sw.get("floodgate") or {} for sw in conf["switches"]}

    def tier_of(self, switch):
        return next(t for t, sws in self.tiers.items() if switch in sws)

    def uplinks(self, leaf):
        return [(leaf, p["name"]) for (sw, _), p in self.ports.items()
                if sw == leaf and "link" in p]

    def link_ports(self):
        return [k for k, p in self.ports.items() if "link" in p]

    def trace_ports(self):
        return ",".join("%s/%s" % k for k in self.link_ports() + [(self.dst_leaf, self.receiver)])

    def spine_port_toward(self, spine, leaf):
        for (sw, name), p in self.ports.items():
            if sw == spine and p.get("link", "").split("/")[0] == leaf:
                return name
        return None

    def window(self, leaf):
        """Initial window (bytes) of a source leaf toward a remote host:
        alpha x rate x hop_rtt + rate x credit_interval of its uplink."""
        fg = self.floodgate.get(leaf, {})
        alpha = float(fg.get("alpha", FG_ALPHA))
        t = parse_time(str(fg.get("credit_interval", FG_CREDIT_INTERVAL)))
        up = self.ports[self.uplinks(leaf)[0]]
        rate = parse_rate(str(up["rate"])) / 8
        hop_rtt = parse_time(str(up.get("hop_rtt", "10us")))
        # Rounded down as sluice does (initial_window_bytes); the 1e-6
        # keeps binary floating point from taking a byte off an exact figure.
        return int(alpha * rate * hop_rtt + rate * t + 1e-6), {
            "alpha": alpha, "credit_interval_s": t, "rate_bytes_per_s": rate, "hop_rtt_s": hop_rtt}

    def default_senders(self):
        return [h for h, leaf in sorted(self.leaf_of.items(), key=lambda kv: host_key(kv[0]))
                if leaf != self.dst_leaf]


def host_key(name):
    digits = "".join(c for c in name if c.isdigit())
    return (name.rstrip("0123456789"), int(digits) if digits else 0)


# ---------------------------------------------------------------- runs

def workload_args(a, **over):
    w = SimpleNamespace(cdf=a.cdf, load=a.load, link_rate=a.link_rate, duration=a.duration,
                        incast_degree=a.incast_degree, incast_size=a.incast_size,
                        incast_period=a.incast_period, incast_receiver=a.incast_receiver,
                        incast_senders=a.incast_senders)
    for k, v in over.items():
        setattr(w, k, v)
    return w


def generate_workload(w, config, seed, out_dir):
    """The workload of one run (as tools/workload writes it), the incast
    senders drawn from w.incast_senders."""
    hosts = hosts_from_config(config)
    params = workload_gen.Params(
        cdf_path=os.path.relpath(w.cdf, ROOT), load=w.load,
        link_rate_bps=parse_rate(w.link_rate),
        duration_ns=seconds_to_ns(parse_time(w.duration)), seed=seed,
        incast_degree=w.incast_degree, incast_size=parse_size(w.incast_size),
        incast_period_ns=seconds_to_ns(parse_time(w.incast_period)),
        incast_receiver=w.incast_receiver,
        incast_senders=tuple(n for n in (w.incast_senders or "").split(",") if n))
    workload_gen.generate(FlowSizeCdf.from_file(w.cdf), hosts, params, out_dir)


def run_experiment(a, config, workload, schemes, d, trace_interval):
    """tools/experiment on one workload; skipped when its results exist."""
    done = all(os.path.exists(os.path.join(d, s, "fct", "fct.csv")) for s in schemes)
    if done and not a.rerun:
        print("reproduce floodgate-incast: %s already run (--rerun to repeat)" % d, flush=True)
        return
    os.makedirs(d, exist_ok=True)
    wl = os.path.join(d, "workload")
    if a.rerun or not os.path.exists(os.path.join(wl, "flows.csv")):
        generate_workload(workload, config, workload.seed, wl)
    cmd = [PY, os.path.join(ROOT, "tools", "experiment"), "--config", config,
           "--workload", wl, "--seed", str(workload.seed), "--schemes", ",".join(schemes),
           "--link-rate", a.link_rate, "--pfc-xoff", a.pfc_xoff, "--drain", str(a.drain),
           "--queue-trace", a.fabric.trace_ports(), "--queue-trace-interval", trace_interval,
           "--sluice", a.sluice, "--out", d] + fidelity.child_arguments(a)
    if a.lock:
        cmd = ["flock", a.lock] + cmd
    log_path = os.path.join(d, "experiment.log")
    with open(log_path, "w") as log:
        cli.run_step(cmd, "tools/experiment in %s" % d, see=log_path, stdout=log,
                     stderr=subprocess.STDOUT)


def lossy_config(a, loss):
    """A copy of the configuration with loss on every internal link port and
    Floodgate's loss recovery (sync) on in every switch."""
    conf = json.loads(json.dumps(a.conf))
    for sw in conf["switches"]:
        fg = dict(sw.get("floodgate") or {})
        fg["sync"] = True
        if a.sync_interval:
            fg["sync_interval"] = a.sync_interval
        sw["floodgate"] = fg
        for p in sw["ports"]:
            if "link" in p:
                if loss > 0:
                    p["loss"] = loss
                else:
                    p.pop("loss", None)
    path = os.path.join(a.out, "loss", "config-loss%g.yaml" % loss)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        yaml.safe_dump(conf, f, sort_keys=False)
    return path


def senders(a):
    return a.incast_senders or ",".join(a.fabric.default_senders())


def run_all(a):
    for seed in a.seeds:
        if "tiers" in a.studies:
            w = workload_args(a, seed=seed, incast_senders=senders(a))
            run_experiment(a, a.config, w, a.schemes, dirs(a, "tiers", seed), a.trace_interval)
            w = workload_args(a, seed=seed, load=0.0, incast_senders=senders(a))
            run_experiment(a, a.config, w, ["floodgate"], dirs(a, "bound", seed),
                           a.bound_trace_interval)
        if "successive" in a.studies:
            period = parse_time(a.succ_period)
            w = workload_args(a, seed=seed, load=0.0, incast_size=a.succ_size,
                              incast_period=a.succ_period, duration=str(period * a.succ_count),
                              incast_senders=senders(a))
            run_experiment(a, a.config, w, ["floodgate", "floodgate-dstpause"],
                           dirs(a, "successive", seed), a.trace_interval)
        if "loss" in a.studies:
            for loss in [0.0] + a.losses:
                w = workload_args(a, seed=seed, load=0.0, incast_size=a.loss_incast_size,
                                  incast_period="1s", duration="0.001",
                                  incast_senders=senders(a))
                run_experiment(a, lossy_config(a, loss), w, ["floodgate"],
                               dirs(a, "loss", seed, loss), a.trace_interval)


def dirs(a, study, seed, loss=None):
    if study == "loss":
        return os.path.join(a.out, "loss", "seed%d" % seed, "loss%g" % loss)
    return os.path.join(a.out, study, "seed%d" % seed)


# ---------------------------------------------------------------- analysis

def first_start(run_dir):
    """The workload time of the capture origin (the first flow's start):
    the queue trace counts from there."""
    import csv
    with open(os.path.join(run_dir, "workload", "flows.csv"), newline="") as f:
        return min(float(r["start_time"]) for r in csv.DictReader(f))


def tier_buffers(fabric, buffer, t0, t1):
    """Per tier: the peak of any switch's shared buffer, and the time
    average (over the samples in [t0, t1]) of the tier's switches' mean."""
    out = {}
    for tier, sws in fabric.tiers.items():
        peaks, means = [], []
        for sw in sws:
            v = buffer.get(sw, [])
            peaks.append(max((b for _, b in v), default=0))
            inside = [b for t, b in v if t0 <= t <= t1]
            means.append(sum(inside) / len(inside) if inside else 0.0)
        out[tier] = {"peak_bytes": max(peaks, default=0),
                     "mean_bytes": sum(means) / len(means) if means else 0.0,
                     "peak_per_switch": dict(zip(sws, peaks))}
    return out


def run_counters(summary):
    return {"drops": counters.total_drops(summary), "drops_where": counters.drops_by_port(summary),
            "pfc_frames": counters.total(summary, "pfc_frames_sent"),
            "link_lost_packets": counters.total(summary, "link_lost_packets"),
            "fg_control_lost": counters.total(summary, "fg_control_lost")}


def floodgate_state(summary):
    """Per switch, the summary's floodgate object (absent without Floodgate)."""
    return {sw["name"]: sw["floodgate"] for sw in summary["switches"] if sw.get("floodgate")}


def credit_overhead(fabric, summary, seconds):
    """Floodgate's control bytes on the links that carried credit, as a
    fraction of their capacity over `seconds` and per data byte credited;
    beside it what one credit frame per data packet would have cost."""
    links, ctrl, credited, data_packets, frames = [], 0, 0, 0, 0
    for sw in summary["switches"]:
        for p in sw["ports"]:
            if not p.get("fg_credit_sent"):
                continue
            rate = parse_rate(str(fabric.ports[(sw["name"], p["name"])]["rate"])) / 8
            links.append(p["fg_control_tx_bytes"] / (rate * seconds))
            ctrl += p["fg_control_tx_bytes"]
            credited += p["fg_credit_sent_bytes"]
            frames += p["fg_credit_sent"] + p.get("fg_sync_sent", 0)
            data_packets += p["rx_packets"] - sum(p.get(k, 0) for k in (
                "fg_credit_received", "fg_sync_received", "fg_dst_pause_received"))
    if not links:
        return None
    frame_bytes = ctrl / frames if frames else 0
    smallest = min((p["fg_control_tx_bytes"] / p["fg_credit_sent"]
                    for sw in summary["switches"] for p in sw["ports"]
                    if p.get("fg_credit_sent")), default=0)
    rate_sum = sum(parse_rate(str(fabric.ports[(sw["name"], p["name"])]["rate"])) / 8
                   for sw in summary["switches"] for p in sw["ports"] if p.get("fg_credit_sent"))
    return {"links": len(links), "seconds": seconds,
            "mean_link_fraction": sum(links) / len(links), "max_link_fraction": max(links),
            "aggregate_fraction": ctrl / (rate_sum * seconds),
            "control_bytes": ctrl, "credited_data_bytes": credited,
            "per_data_byte": ctrl / credited if credited else None,
            "mean_frame_bytes": frame_bytes, "smallest_frame_bytes": smallest,
            "data_packets_credited": data_packets,
            "per_packet_aggregate_fraction": data_packets * smallest / (rate_sum * seconds),
            "per_packet_per_data_byte": (data_packets * smallest / credited) if credited else None}


def nonincast_fct(fct_csv, avoid_dst=None):
    """Slowdown of the non-incast flows (with avoid_dst, only those toward
    another host than the incast's receiver)."""
    rows = [r for r in fct_report.read_fct_csv(fct_csv) if r["is_incast"] == "0" and
            (avoid_dst is None or r["dst"] != avoid_dst)]
    st = fct_report.row_stats(rows)
    return {"flows": st["count"], "unfinished": st["unfinished"],
            "lower_bound": st["lower_bound"], "p50": st["p50"], "p99": st["p99"]}


def all_unfinished(fct_csv):
    rows = fct_report.read_fct_csv(fct_csv)
    return sum(1 for r in rows if not r["finished"])


def analyse_tiers(a, gate, seed):
    d = dirs(a, "tiers", seed)
    t_start = first_start(d)
    span = parse_time(a.duration)
    res = {}
    for s in a.schemes:
        sd = os.path.join(d, s)
        summary = cli.load_json(os.path.join(sd, "summary.json"), "sluice summary")
        gate.check("tiers seed %d %s" % (seed, s), summary)
        buffer, _, ports = read_queue_trace(os.path.join(sd, "queue_trace.csv"))
        # The destination leaf's switch buffer also holds its own hosts'
        # outgoing traffic (VOQs); its port toward the receiver is the
        # paper's "ToR-Down" figure.
        down = ports.get((a.fabric.dst_leaf, a.receiver), [])
        r = {"counters": run_counters(summary),
             "receiver_port_peak_bytes": max((b for _, b, _, _ in down), default=0),
             "unfinished_all": all_unfinished(os.path.join(sd, "fct", "fct.csv")),
             "fct_nonincast": nonincast_fct(os.path.join(sd, "fct", "fct.csv")),
             "fct_other_dst": nonincast_fct(os.path.join(sd, "fct", "fct.csv"), a.receiver),
             "tiers": tier_buffers(a.fabric, buffer, -t_start, span - t_start)}
        fg = floodgate_state(summary)
        if fg:
            r["floodgate"] = fg
            r["credit_overhead"] = credit_overhead(a.fabric, summary, span)
        res[s] = r
    return res


def analyse_bound(a, gate, seed):
    """The spine bound on the incast-only run: per spine, its shared buffer
    (all of it is toward the one destination) against W x fan-in / fan-out."""
    d = os.path.join(dirs(a, "bound", seed), "floodgate")
    summary = cli.load_json(os.path.join(d, "summary.json"), "sluice summary")
    gate.check("bound seed %d floodgate" % seed, summary)
    buffer, _, ports = read_queue_trace(os.path.join(d, "queue_trace.csv"))
    fab = a.fabric
    send = senders(a).split(",")
    src_leaves = sorted({fab.leaf_of[h] for h in send})
    w, wparts = fab.window(src_leaves[0])
    fan_in = len(src_leaves)
    fan_out = len(fab.uplinks(src_leaves[0]))
    bound = w * fan_in / fan_out
    tx = {(sw["name"], p["name"]): p for sw in summary["switches"] for p in sw["ports"]}
    fg = floodgate_state(summary)
    spines = {}
    ok = True
    for spine in fab.tiers["spine"]:
        # Which source leaves' flows hashed through this spine (their uplink
        # toward it carried data).
        n_in = 0
        for leaf in src_leaves:
            for key in fab.uplinks(leaf):
                p = fab.ports[key]
                data = tx[key]["tx_bytes"] - tx[key].get("fg_control_tx_bytes", 0)
                if p["link"].split("/")[0] == spine and data > 0:
                    n_in += 1
        sampled = max((b for _, b in buffer.get(spine, [])), default=0)
        egress = fab.spine_port_toward(spine, fab.dst_leaf)
        egress_peak = max((b for _, b, _, _ in ports.get((spine, egress), [])), default=0)
        voq_peak = fg.get(spine, {}).get("voq_peak_bytes", 0)
        conservative = max(sampled, voq_peak + egress_peak)
        passed = conservative <= w * n_in
        ok = ok and passed
        spines[spine] = {"sampled_peak_bytes": sampled, "voq_peak_bytes": voq_peak,
                         "egress_peak_bytes": egress_peak,
                         "conservative_peak_bytes": conservative, "source_leaves_through": n_in,
                         "per_spine_bound_bytes": w * n_in, "pass": passed,
                         "within_even_split_bound": conservative <= bound}
        print("reproduce floodgate-incast: spine bound seed %d %s: peak %d B (sampled buffer %d, exact VOQ "
              "peak %d + sampled egress peak %d) <= W x source leaves through it = %d x %d = %d B: "
              "%s; against W x fan-in / fan-out = %.0f B (an even ECMP split): %s"
              % (seed, spine, conservative, sampled, voq_peak, egress_peak, w, n_in, w * n_in,
                 "PASS" if passed else "FAIL", bound,
                 "within" if conservative <= bound else "above"), flush=True)
    # What the windows guarantee for the spines together: at any instant the
    # bytes all spines hold toward the destination are at most fan-in x W,
    # so their mean is at most W x fan-in / fan-out.
    at = {}
    for spine in fab.tiers["spine"]:
        for t, b in buffer.get(spine, []):
            at[round(t, 7)] = at.get(round(t, 7), 0) + b
    peak_t, peak_sum = max(at.items(), key=lambda kv: kv[1], default=(None, 0))
    mean_ok = peak_sum / len(fab.tiers["spine"]) <= bound
    ok = ok and mean_ok
    print("reproduce floodgate-incast: spine bound seed %d all spines: peak of the sampled sum %d B (at %s s), "
          "mean per spine %.0f B <= W x fan-in / fan-out = %.0f B: %s"
          % (seed, peak_sum, peak_t, peak_sum / len(fab.tiers["spine"]), bound,
             "PASS" if mean_ok else "FAIL"), flush=True)
    return {"window_bytes": w, "window_parts": wparts, "fan_in": fan_in, "fan_out": fan_out,
            "bound_bytes": bound, "spines": spines, "pass": ok,
            "sum_peak_bytes": peak_sum, "sum_peak_time": peak_t, "mean_pass": mean_ok,
            "counters": run_counters(summary), "floodgate": fg,
            "dst_leaf_peak_bytes": max((b for _, b in buffer.get(fab.dst_leaf, [])), default=0)}


def analyse_successive(a, gate, seed):
    d = dirs(a, "successive", seed)
    t_start = first_start(d)
    period = parse_time(a.succ_period)
    res = {}
    for s in ("floodgate", "floodgate-dstpause"):
        sd = os.path.join(d, s)
        summary = cli.load_json(os.path.join(sd, "summary.json"), "sluice summary")
        gate.check("successive seed %d %s" % (seed, s), summary)
        buffer, _, _ = read_queue_trace(os.path.join(sd, "queue_trace.csv"))
        per = []
        for i in range(a.succ_count):
            t0, t1 = i * period - t_start, (i + 1) * period - t_start
            row = {}
            for tier, sws in a.fabric.tiers.items():
                # The tier's total (source leaves summed) at its peak in this period.
                series = {}
                for sw in sws:
                    for t, b in buffer.get(sw, []):
                        if t0 <= t < t1:
                            series[round(t, 7)] = series.get(round(t, 7), 0) + b
                row[tier] = max(series.values(), default=0)
            per.append(row)
        src = [r["source leaf"] for r in per]
        res[s] = {"per_incast_peak_bytes": per, "source_slope_bytes_per_incast": slope(src),
                  "counters": run_counters(summary),
                  "host_nic_peak_held_frames": max(p.get("host_nic_peak_held_frames", 0)
                                                   for sw in summary["switches"]
                                                   for p in sw["ports"]),
                  "dst_pause_sent": sum(p.get("fg_dst_pause_sent", 0) for sw in summary["switches"]
                                        for p in sw["ports"]),
                  "trace_start": t_start}
    return res


def slope(ys):
    n = len(ys)
    if n < 2:
        return None
    mx, my = (n - 1) / 2, sum(ys) / n
    return sum((i - mx) * (y - my) for i, y in enumerate(ys)) / sum((i - mx) ** 2 for i in range(n))


def rx_busy(capture):
    """Frames, bytes and the receive rate (bytes/s, frame lengths) between
    the first and the last frame of a capture."""
    times, size = [], 0
    for ts, _, orig in read_pcap(capture, max_bytes=0):
        times.append(ts)
        size += orig
    if len(times) < 2:
        return {"frames": len(times), "bytes": size, "busy_seconds": 0, "rate_bps": None}
    span = (times[-1] - times[0]) / 1e9
    return {"frames": len(times), "bytes": size, "busy_seconds": span,
            "rate_bps": 8 * size / span, "last_seconds": times[-1] / 1e9}


def analyse_loss(a, gate, seed):
    res = {}
    for loss in [0.0] + a.losses:
        sd = os.path.join(dirs(a, "loss", seed, loss), "floodgate")
        summary = cli.load_json(os.path.join(sd, "summary.json"), "sluice summary")
        gate.check("loss %g seed %d" % (loss, seed), summary)
        fg = floodgate_state(summary)
        recv = next(p for sw in summary["switches"] for p in sw["ports"]
                    if sw["name"] == a.fabric.dst_leaf and p["name"] == a.receiver)
        c = run_counters(summary)
        # Data the hosts sent that never arrived (no switch drops here: a
        # drop would show in counters) was lost on a link; the rest of the
        # links' losses were Floodgate's control frames.
        sent = sum(p["rx_packets"] for sw in summary["switches"] for p in sw["ports"]
                   if (sw["name"], p["name"]) in a.fabric.ports and
                   a.fabric.ports[(sw["name"], p["name"])].get("role") == "host")
        data_lost = sent - recv["tx_packets"] - c["drops"]
        windows_ok = all(v["windows_in_use_at_stop"] == 0 and
                         v["window_outstanding_bytes_at_stop"] == 0 for v in fg.values())
        busy = rx_busy(os.path.join(sd, "capture", "rx_%s.pcap" % a.receiver))
        res["%g" % loss] = {
            "loss": loss, "delivered_packets": recv["tx_packets"],
            "delivered_bytes": recv["tx_bytes"],
            "sent_packets": sent, "data_lost_packets": data_lost,
            "control_lost": c["link_lost_packets"] - data_lost, "counters": c, "rx": busy,
            "windows_back": windows_ok,
            "windows_in_use_at_stop": {k: v["windows_in_use_at_stop"] for k, v in fg.items()},
            "window_outstanding_bytes_at_stop": {k: v["window_outstanding_bytes_at_stop"]
                                                 for k, v in fg.items()},
            "invalid_credit_bytes": sum(v["invalid_credit_bytes"] for v in fg.values()),
            "sync_healed_data_bytes": sum(v["sync_healed_data_bytes"] for v in fg.values()),
            "sync_healed_credit_bytes": sum(v["sync_healed_credit_bytes"] for v in fg.values())}
        print("reproduce floodgate-incast: loss %g seed %d: windows back at their initial value in every "
              "switch: %s" % (loss, seed, "PASS" if windows_ok else "FAIL"), flush=True)
    return res


# ---------------------------------------------------------------- report

def spread(values):
    v = [x for x in values if x is not None]
    if not v:
        return None
    return {"min": min(v), "max": max(v)}


def rng(values, fmt="%.0f", scale=1.0):
    r = spread([None if x is None else x * scale for x in values])
    if r is None:
        return "—"
    lo, hi = fmt % r["min"], fmt % r["max"]
    return lo if lo == hi else "%s–%s" % (lo, hi)


def pct(x):
    return None if x is None else 100 * x


def tiers_table(a, res):
    seeds = ",".join(map(str, a.seeds))
    L = ["## Per-tier buffer under incast (tiers study)", "",
         "Ranges are min–max over seeds %s. Buffer = a switch's shared-buffer use (Floodgate's "
         "VOQ bytes included), sampled every %s s; peak = the largest of any switch in the tier, "
         "time-average = the tier's switches' mean over the workload's %s s. FCT slowdown of "
         "non-incast flows counts unfinished flows at the end of the run: '≥' marks lower "
         "bounds." % (seeds, a.trace_interval, a.duration), "",
         "| scheme | drops | where (most) | PFC frames | unfinished flows (all / non-incast) | "
         "non-incast p50 | non-incast p99 | peak KB source leaf | spine | destination leaf | "
         "avg KB source leaf | spine | destination leaf | peak KB dst leaf port to receiver |",
         "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for s in a.schemes:
        runs = [res[seed][s] for seed in a.seeds]
        where = {}
        for r in runs:
            for port, reasons in r["counters"]["drops_where"].items():
                where[port] = where.get(port, 0) + sum(reasons.values())
        where_txt = ", ".join(p for p, _ in sorted(where.items(), key=lambda kv: -kv[1])[:2]) or "—"
        lb = "≥" if any(r["fct_nonincast"]["lower_bound"] for r in runs) else ""
        L.append("| %s | %s | %s | %s | %s / %s | %s%s | %s%s | %s | %s | %s | %s | %s | %s | %s |" % (
            s, rng([r["counters"]["drops"] for r in runs]), where_txt,
            rng([r["counters"]["pfc_frames"] for r in runs]),
            rng([r["unfinished_all"] for r in runs]),
            rng([r["fct_nonincast"]["unfinished"] for r in runs]),
            lb, rng([r["fct_nonincast"]["p50"] for r in runs], "%.1f"),
            lb, rng([r["fct_nonincast"]["p99"] for r in runs], "%.1f"),
            *[rng([r["tiers"][t]["peak_bytes"] for r in runs], "%.0f", 1e-3) for t in TIERS],
            *[rng([r["tiers"][t]["mean_bytes"] for r in runs], "%.0f", 1e-3) for t in TIERS],
            rng([r["receiver_port_peak_bytes"] for r in runs], "%.0f", 1e-3)))
    L += ["", "Non-incast flows toward other hosts than %s (the flows VOQs should isolate):" %
          a.receiver, "", "| scheme | flows | unfinished | p50 | p99 |", "|---|---|---|---|---|"]
    for s in a.schemes:
        runs = [res[seed][s]["fct_other_dst"] for seed in a.seeds]
        lb = "≥" if any(r["lower_bound"] for r in runs) else ""
        L.append("| %s | %s | %s | %s%s | %s%s |" % (
            s, rng([r["flows"] for r in runs]), rng([r["unfinished"] for r in runs]),
            lb, rng([r["p50"] for r in runs], "%.1f"), lb, rng([r["p99"] for r in runs], "%.1f")))
    fg = [s for s in a.schemes if all("credit_overhead" in res[seed][s] for seed in a.seeds)]
    if fg:
        L += ["", "Floodgate's control frames on the links that carried credit, over the "
              "workload's %s s (paper §6.2: 0.175%% of bandwidth aggregated, 3.0%% with a "
              "credit per packet). 'per packet' is what one smallest credit frame per credited "
              "data packet would have cost here." % a.duration, "",
              "| scheme | links | mean per link (% of capacity) | max per link | all links | "
              "per data byte | per packet: all links | per packet: per data byte |",
              "|---|---|---|---|---|---|---|---|"]
        for s in fg:
            co = [res[seed][s]["credit_overhead"] for seed in a.seeds]
            L.append("| %s | %s | %s%% | %s%% | %s%% | %s%% | %s%% | %s%% |" % (
                s, rng([c["links"] for c in co]),
                rng([pct(c["mean_link_fraction"]) for c in co], "%.3f"),
                rng([pct(c["max_link_fraction"]) for c in co], "%.3f"),
                rng([pct(c["aggregate_fraction"]) for c in co], "%.3f"),
                rng([pct(c["per_data_byte"]) for c in co], "%.3f"),
                rng([pct(c["per_packet_aggregate_fraction"]) for c in co], "%.3f"),
                rng([pct(c["per_packet_per_data_byte"]) for c in co], "%.3f")))
        L += ["", "| scheme | Floodgate per switch (seed %d) | VOQ peak KB | credit withheld KB | "
              "invalid credit B | windows in use at stop |" % a.seeds[0], "|---|---|---|---|---|---|"]
        for s in fg:
            for sw, v in sorted(res[a.seeds[0]][s]["floodgate"].items()):
                L.append("| %s | %s | %.0f | %.0f | %d | %d |" % (
                    s, sw, v["voq_peak_bytes"] / 1e3, v["credit_withheld_bytes"] / 1e3,
                    v["invalid_credit_bytes"], v["windows_in_use_at_stop"]))
    return L


def bound_table(a, res):
    b0 = res[a.seeds[0]]
    L = ["", "## Spine bound (incast alone, floodgate)", "",
         "W = %.1f x %.3g B/s x %.0f us + %.3g B/s x %.0f us = %d B (source leaf's initial "
         "window); bound = W x fan-in %d / fan-out %d = %.0f B toward the one destination. "
         "Peak = max(sampled shared buffer, exact VOQ peak + sampled egress-queue peak). The "
         "windows guarantee the spines' simultaneous sum <= fan-in x W (mean per spine <= the "
         "bound) and each spine <= W x the source leaves whose flows hash through it; one "
         "spine is within W x fan-in / fan-out only when ECMP splits evenly."
         % (b0["window_parts"]["alpha"], b0["window_parts"]["rate_bytes_per_s"],
            b0["window_parts"]["hop_rtt_s"] * 1e6, b0["window_parts"]["rate_bytes_per_s"],
            b0["window_parts"]["credit_interval_s"] * 1e6, b0["window_bytes"], b0["fan_in"],
            b0["fan_out"], b0["bound_bytes"]), "",
         "| seed | spine | source leaves through it | peak B | sampled buffer B | VOQ peak B | "
         "egress peak B | W x fan-in / fan-out B | W x leaves through it B | result |",
         "|---|---|---|---|---|---|---|---|---|---|"]
    for seed in a.seeds:
        b = res[seed]
        for sp, v in b["spines"].items():
            L.append("| %d | %s | %d | %d | %d | %d | %d | %.0f | %d | %s |" % (
                seed, sp, v["source_leaves_through"], v["conservative_peak_bytes"],
                v["sampled_peak_bytes"], v["voq_peak_bytes"], v["egress_peak_bytes"],
                b["bound_bytes"], v["per_spine_bound_bytes"],
                ("PASS" if v["pass"] else "FAIL") +
                ("" if v["within_even_split_bound"] else " (above the even-split figure)")))
        L.append("| %d | all: peak of the sum / %d | | %d | | | | %.0f | | %s |" % (
            seed, len(b["spines"]), b["sum_peak_bytes"] / len(b["spines"]), b["bound_bytes"],
            "PASS" if b["mean_pass"] else "FAIL"))
    return L


def successive_table(a, res):
    L = ["", "## Successive incasts (%d incasts of %s every %s, nothing else)" % (
        a.succ_count, a.succ_size, a.succ_period), "",
        "Peak of the tier's summed buffer in each incast's period (KB), seed %d; slope by "
        "least squares over the incasts, all seeds." % a.seeds[0], "",
        "| scheme | tier | " + " | ".join("#%d" % (i + 1) for i in range(a.succ_count)) +
        " | slope KB/incast (seeds) |", "|---|---|" + "---|" * (a.succ_count + 1)]
    for s in ("floodgate", "floodgate-dstpause"):
        for t in TIERS:
            per = res[a.seeds[0]][s]["per_incast_peak_bytes"]
            sl = [slope([r[t] for r in res[seed][s]["per_incast_peak_bytes"]]) for seed in a.seeds]
            L.append("| %s | %s | %s | %s |" % (s, t, " | ".join("%.0f" % (r[t] / 1e3) for r in per),
                                                rng(sl, "%.1f", 1e-3)))
    L += ["", "| scheme | drops | dstPause frames | most frames held in a host NIC |",
          "|---|---|---|---|"]
    for s in ("floodgate", "floodgate-dstpause"):
        runs = [res[seed][s] for seed in a.seeds]
        L.append("| %s | %s | %s | %s |" % (s, rng([r["counters"]["drops"] for r in runs]),
                                            rng([r["dst_pause_sent"] for r in runs]),
                                            rng([r["host_nic_peak_held_frames"] for r in runs])))
    return L


def loss_table(a, res):
    L = ["", "## Random loss on every internal link (one incast of %s, floodgate, sync on)" %
         a.loss_incast_size, "",
         "| seed | loss | sent by hosts (packets) | delivered to %s | data lost on links | "
         "control frames lost on links | %s receive rate while busy (Gb/s) | busy ms | healed data KB | "
         "healed credit KB | invalid credit B | windows back |" % (a.receiver, a.receiver),
         "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for seed in a.seeds:
        for k, v in res[seed].items():
            L.append("| %d | %s | %d | %d | %d | %d | %s | %.2f | %.1f | %.1f | %d | %s |" % (
                seed, k, v["sent_packets"], v["delivered_packets"], v["data_lost_packets"],
                v["control_lost"],
                "—" if v["rx"]["rate_bps"] is None else "%.2f" % (v["rx"]["rate_bps"] / 1e9),
                v["rx"]["busy_seconds"] * 1e3, v["sync_healed_data_bytes"] / 1e3,
                v["sync_healed_credit_bytes"] / 1e3, v["invalid_credit_bytes"],
                "PASS" if v["windows_back"] else "FAIL"))
    return L


def plot_tiers(a, res, path, note):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    width = 0.8 / len(a.schemes)
    for ax, key, title in ((axes[0], "peak_bytes", "peak buffer"),
                           (axes[1], "mean_bytes", "time-average buffer")):
        for i, s in enumerate(a.schemes):
            for j, t in enumerate(TIERS):
                vals = [res[seed][s]["tiers"][t][key] / 1e3 for seed in a.seeds]
                mid = sorted(vals)[len(vals) // 2]
                ax.bar(j + (i - (len(a.schemes) - 1) / 2) * width, mid, width,
                       yerr=[[mid - min(vals)], [max(vals) - mid]], capsize=3,
                       color=COLOURS.get(s, "C%d" % i), label=s if j == 0 else None)
        ax.set_xticks(range(len(TIERS)))
        ax.set_xticklabels(["%s\n(%s)" % (t, ",".join(a.fabric.tiers[t])) for t in TIERS],
                           fontsize=8)
        ax.set_ylabel("KB")
        ax.set_title(title)
        ax.grid(True, axis="y", alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.suptitle("%smax buffer per tier: %s, %s incast x%d toward %s every %s; %d seed(s), bars "
                 "min–max" % (note + "\n" if note else "", os.path.basename(a.config),
                              a.incast_size, a.incast_degree, a.receiver, a.incast_period,
                              len(a.seeds)),
                 color="red" if note else "black", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_successive(a, path, note):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    d = dirs(a, "successive", a.seeds[0])
    t_start = first_start(d)
    period = parse_time(a.succ_period)
    fig, axes = plt.subplots(2, 1, figsize=(10, 5.5), sharex=True, sharey=True)
    end = (a.succ_count + 4) * period
    for ax, s in zip(axes, ("floodgate", "floodgate-dstpause")):
        buffer, _, _ = read_queue_trace(os.path.join(d, s, "queue_trace.csv"))
        for tier, sws in a.fabric.tiers.items():
            tot = {}
            for sw in sws:
                for t, b in buffer.get(sw, []):
                    if -t_start <= t <= end:
                        tot[round(t, 7)] = tot.get(round(t, 7), 0) + b
            ts = sorted(tot)
            ax.plot([(t + t_start) * 1e3 for t in ts], [tot[t] / 1e3 for t in ts], lw=0.8,
                    label="%s (sum)" % tier)
        for i in range(a.succ_count):
            ax.axvline(i * period * 1e3, color="grey", lw=0.4, ls=":")
        ax.set_title(s, fontsize=9, loc="left")
        ax.set_ylabel("buffer KB")
        ax.grid(True, alpha=0.3)
    axes[0].legend(fontsize=8)
    axes[-1].set_xlabel("ms (workload time; dotted: incast starts), seed %d" % a.seeds[0])
    fig.suptitle("%ssuccessive incasts: %d x %s every %s" % (note + "\n" if note else "",
                                                            a.succ_count, a.succ_size,
                                                            a.succ_period),
                 color="red" if note else "black", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv):
    a = parse_args(argv)
    os.makedirs(a.out, exist_ok=True)
    a.conf = cli.load_yaml(a.config)
    a.fabric = Fabric(a.conf, a.incast_receiver)
    a.receiver = a.incast_receiver
    for h in senders(a).split(","):
        if h not in a.fabric.leaf_of:
            raise cli.ToolError("incast sender %r is not a host of %s" % (h, a.config))
    if a.report_only:
        floor_line = fidelity.recorded_floor(a.out)
    else:
        floor_line = fidelity.floor_step(a, fidelity.DEFAULT_EAL, a.out, "reproduce floodgate-incast",
                                         ["flock", a.lock] if a.lock else ())
        run_all(a)
    gate = fidelity.Gate("reproduce floodgate-incast", a, floor_line)
    results, lines, failed = {}, [], []
    if "tiers" in a.studies:
        results["tiers"] = {seed: analyse_tiers(a, gate, seed) for seed in a.seeds}
        results["bound"] = {seed: analyse_bound(a, gate, seed) for seed in a.seeds}
        lines += tiers_table(a, results["tiers"]) + bound_table(a, results["bound"])
        failed += ["spine bound seed %d" % s for s, b in results["bound"].items() if not b["pass"]]
    if "successive" in a.studies:
        results["successive"] = {seed: analyse_successive(a, gate, seed) for seed in a.seeds}
        lines += successive_table(a, results["successive"])
    if "loss" in a.studies:
        results["loss"] = {seed: analyse_loss(a, gate, seed) for seed in a.seeds}
        lines += loss_table(a, results["loss"])
        failed += ["windows after loss %s seed %d" % (k, s) for s, r in results["loss"].items()
                   for k, v in r.items() if not v["windows_back"]]
    report = os.path.join(a.out, "report")
    os.makedirs(report, exist_ok=True)
    head = ([gate.note, ""] if gate.note else []) + (
        ["CHECK FAILED: " + ", ".join(failed), ""] if failed else [])
    text = "\n".join(head + lines) + "\n"
    with open(os.path.join(report, "table.md"), "w") as f:
        f.write(text)
    args = {k: v for k, v in vars(a).items() if k not in ("conf", "fabric")}
    with open(os.path.join(report, "results.json"), "w") as f:
        json.dump({"args": args, "fidelity": gate.record(), "tiers": a.fabric.tiers,
                   "checks_failed": failed, "results": results}, f, indent=1, default=str)
    if "tiers" in a.studies:
        plot_tiers(a, results["tiers"], os.path.join(report, "buffer_tiers.png"), gate.note)
    if "successive" in a.studies:
        plot_successive(a, os.path.join(report, "successive.png"), gate.note)
    print(text)
    provenance.write(a.out, seeds=a.seeds, configs=[a.config], inputs=[a.cdf],
                     binaries=[a.sluice])
    print("reproduce floodgate-incast: report in %s" % report)
    rc = gate.verdict()
    if failed:
        print("reproduce floodgate-incast: FAIL: %s" % ", ".join(failed), file=sys.stderr,
              flush=True)
        return rc or EXIT_CHECK_FAILED
    return rc
