"""Runs the BFC paper's testbed experiment (its Fig. 6) end to end and plots it.

    tools/reproduce bfc-testbed --out runs/reproduce/bfc-testbed [--plots-dir docs/img]

Steps: tools/workload --matrix writes the traffic matrix of
conf/workloads/bfc-testbed.matrix.yaml for the hosts of conf/bfc-testbed.yaml;
tools/experiment runs it under bfc (dynamic assignment), bfc-stochastic and
bfc-single with a queue trace of s2/r2, s1/u and s3/u, and once more under
bfc with group 1's streams alone (OUT/alone: the same group-1 flows with no
group 2 or 3, the reference for "not slowed"); then this script writes to
OUT:

  bfc_testbed_queue.png  (a) the queues of the bottlenecked flows at s2
                         toward r2 under dynamic BFC, with Th and the bound
                         Th + one hop-RTT of arrivals + one MTU frame
  bfc_testbed_fct.png    (b) group-1 FCT under the three assignments:
                         mean and percentiles, and the distribution
  bfc_testbed.json       the figures behind both (docs/testbed.md)

and copies the PNGs to --plots-dir if given. sluice runs three times for
about half a second each; the whole takes ~30 s on two idle cores. Run it
alone (e.g. under `flock /tmp/sluice-heavy.lock`): a loaded machine shows as
shaper lost time and link lateness in the printed fidelity line.

Group-1 figures count every flow, an unfinished one with FCT = end of the
run (tools/fct): with any, they are lower bounds, marked ">=". Every run
(the three assignments and group 1 alone) is checked against the fidelity
limits (docs/testbed.md, "Fidelity gate"); when one exceeds them the
results are still written, marked "NOT VALID: fidelity limits exceeded", and
the tool exits with status 3 unless --allow-unfaithful is given.
"""

import argparse
import csv
import json
import os
import shutil
import statistics

import yaml

from .. import cli, counters, fct_report, fidelity, provenance, sluice
from ..fct_analysis import percentile, start_offset_from_file
from ..pcapio import read_pcap
from ..queue_trace import read_queue_trace
from ..units import parse_rate, parse_time

ROOT = sluice.ROOT

PY = "/usr/bin/python3"
SCHEMES = ("bfc", "bfc-stochastic", "bfc-single")
LABELS = {"bfc": "dynamic", "bfc-stochastic": "stochastic", "bfc-single": "single"}
BOTTLENECK = ("s2", "r2")   # the egress port every group-2/3 flow crosses
UPSTREAM = ("s1", "u")      # the link into s2 that group 2 arrives on
GROUP1 = "g1"
MTU_FRAME = 1514            # bytes a full frame adds to a queue (Ethernet + 1500 IP)
WIRE_EXTRA = 24             # FCS + preamble + inter-frame gap (wire_overhead)
WARMUP_S = 0.002            # left out at the start of the congested interval


def parse_args(argv):
    p = argparse.ArgumentParser(prog="tools/reproduce bfc-testbed",
                                description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    p.add_argument("--out", required=True, help="run directory (created)")
    p.add_argument("--config", default=os.path.join(ROOT, "conf", "bfc-testbed.yaml"))
    p.add_argument("--matrix",
                   default=os.path.join(ROOT, "conf", "workloads", "bfc-testbed.matrix.yaml"))
    p.add_argument("--duration", default="50ms", help="window of group-1 arrivals")
    p.add_argument("--seed", default="1")
    p.add_argument("--drain", default="0.3", help="seconds sluice runs after the last packet")
    p.add_argument("--sluice", default=sluice.BINARY)
    p.add_argument("--plots-dir", help="also copy the PNGs here (e.g. docs/img)")
    p.add_argument("--no-run", action="store_true",
                   help="only analyse and plot an existing OUT")
    fidelity.add_arguments(p)
    return p.parse_args(argv)


def group1_only_matrix(matrix_path, out_path):
    """A copy of the matrix with only group 1's streams. They must come first
    in the file: streams are seeded by position, so the copy then draws the
    very same group-1 flows."""
    doc = cli.load_yaml(matrix_path)
    streams = doc["streams"]
    n = sum(1 for e in streams if e["src"] == GROUP1)
    if n == 0 or any(e["src"] != GROUP1 for e in streams[:n]):
        raise cli.ToolError(f"{matrix_path}: group 1 ({GROUP1}) streams must come first")
    base = os.path.dirname(os.path.abspath(matrix_path))
    for e in streams[:n]:
        if "cdf" in e and not os.path.isabs(e["cdf"]):
            e["cdf"] = os.path.join(base, e["cdf"])
    with open(out_path, "w") as f:
        yaml.safe_dump({"streams": streams[:n]}, f, sort_keys=False)


def port_conf(conf, sw_name, port_name):
    for sw in conf["switches"]:
        if sw["name"] == sw_name:
            for p in sw["ports"]:
                if p["name"] == port_name:
                    return sw, p
    raise KeyError(f"{sw_name}/{port_name} not in the configuration")


def params_from_config(conf):
    """Th, the overshoot bound and the rates, from the configuration alone."""
    sw, r2 = port_conf(conf, *BOTTLENECK)
    _, up = port_conf(conf, *UPSTREAM)
    hop_rtt_s = max(parse_time(p["hop_rtt"]) for p in sw["ports"])  # BFC's HRTT
    rate = parse_rate(r2["rate"])
    up_rate = parse_rate(up["rate"])
    return {"hop_rtt_seconds": hop_rtt_s, "bottleneck_bps": rate, "upstream_bps": up_rate,
            "host_bps": parse_rate(port_conf(conf, "s1", GROUP1)[1]["rate"]),
            "hop_bdp_bytes": hop_rtt_s * rate / 8,
            "hop_rtt_arrivals_bytes": hop_rtt_s * up_rate / 8,
            "queues_per_port": sw["queues_per_port"], "mtu_frame_bytes": MTU_FRAME}


def read_flows(workload):
    with open(os.path.join(workload, "flows.csv"), newline="") as f:
        return list(csv.DictReader(f))


def congested_interval(flows):
    """Sender time (s) during which every flow toward r2 still has packets to
    send: from WARMUP_S after the last of them starts to when the first of
    them has sent its last packet. Each sends faster than its share of r2
    from its start, so each has a backlog upstream all along."""
    long_flows = [f for f in flows if f["dst"] == BOTTLENECK[1]]
    start = max(float(f["start_time"]) for f in long_flows) + WARMUP_S
    end = min(float(f["end_time"]) for f in long_flows)
    return start, end, len(long_flows)


def queue_series(trace_path):
    """{queue: [(t, bytes)]} of the bottleneck port's data queues and the
    port's [(t, threshold)] from a queue trace."""
    _, queues, ports = read_queue_trace(trace_path)
    series = {q: [(t, b) for t, b, _ in pts] for q, pts in queues.get(BOTTLENECK, {}).items()}
    return series, [(t, th) for t, _, th, _ in ports.get(BOTTLENECK, [])]


def utilisation(capture, start_epoch, t0, t1, rate):
    """Share of the link rate the receiver's capture shows in [t0, t1) (s
    from the replay start), counting wire bytes."""
    bits = 0
    lo, hi = start_epoch + t0 * 1e9, start_epoch + t1 * 1e9
    for ts, _, orig in read_pcap(capture, 0):
        if lo <= ts < hi:
            bits += (orig + WIRE_EXTRA) * 8
    return bits / (rate * (t1 - t0))


def group1_fct(fct_csv):
    """Group 1's FCT figures over all its flows: an unfinished one counts
    with its FCT to the end of the run (tools/fct), so with any the figures
    are lower bounds. Percentiles as tools/fct computes them."""
    rows = [r for r in fct_report.read_fct_csv(fct_csv) if r["src"] == GROUP1]
    if not rows:
        raise cli.ToolError(f"{fct_csv}: no group-1 ({GROUP1}) flows")
    fcts = sorted(r["fct_seconds"] for r in rows)
    sd = [r["slowdown"] for r in rows]
    unfinished = sum(1 for r in rows if r["censored"])
    return {"flows": len(rows), "unfinished": unfinished, "lower_bound": unfinished > 0,
            "fcts": fcts, "mean_fct_seconds": statistics.fmean(fcts),
            "p50_fct_seconds": percentile(fcts, 50), "p99_fct_seconds": percentile(fcts, 99),
            "mean_slowdown": statistics.fmean(sd), "max_slowdown": max(sd)}


def analyse(out, conf):
    par = params_from_config(conf)
    flows = read_flows(os.path.join(out, "workload"))
    t0, t1, n_long = congested_interval(flows)
    res = {"params": par, "congested_interval_seconds": [t0, t1], "bottlenecked_flows": n_long,
           "threshold_bytes": par["hop_bdp_bytes"] / n_long,
           "schemes": {}}
    res["bound_bytes"] = (res["threshold_bytes"] + par["hop_rtt_arrivals_bytes"] + MTU_FRAME)
    alone = group1_fct(os.path.join(out, "alone", "bfc", "fct", "fct.csv"))
    res["group1_alone"] = {k: v for k, v in alone.items() if k != "fcts"}
    for scheme in SCHEMES:
        d = os.path.join(out, scheme)
        summary = cli.load_json(os.path.join(d, "summary.json"), "sluice summary")
        # Receiver-clock instant of sender time 0.
        start_ns = start_offset_from_file(os.path.join(d, "summary.json"))
        queues, _ = queue_series(os.path.join(d, "queue_trace.csv"))
        peak = max((b for pts in queues.values() for t, b in pts if t0 <= t < t1), default=0)
        drops = counters.total_drops(summary)
        r2 = counters.port(summary, *BOTTLENECK)
        g1 = group1_fct(os.path.join(d, "fct", "fct.csv"))
        res["schemes"][scheme] = {
            "drops": drops,
            "peak_queue_bytes": peak,
            "bfc_peak_excess_bytes": r2.get("bfc_peak_excess_bytes"),
            "utilisation": utilisation(os.path.join(d, "capture", "rx_r2.pcap"), start_ns,
                                       t0, t1, par["bottleneck_bps"]),
            "bottleneck_shaper_lost_ns": r2.get("shaper_lost_ns", 0),
            "max_link_lateness_p99_ns": max(p.get("link_lateness_p99_ns", 0)
                                            for sw in summary["switches"] for p in sw["ports"]),
            "group1": {k: v for k, v in g1.items() if k != "fcts"},
            "_fcts": g1["fcts"],
        }
    return res


def plot_queue(res, out, png):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    queues, th = queue_series(os.path.join(out, "bfc", "queue_trace.csv"))
    t0, t1 = res["congested_interval_seconds"]
    fig, axes = plt.subplots(2, 1, figsize=(10, 7.5))
    mid = t0 + (t1 - t0) / 2
    for ax, (lo, hi) in zip(axes, [(0, t1 + 0.01), (mid, mid + 0.006)]):
        for q, pts in sorted(queues.items()):
            sel = [(t, b) for t, b in pts if lo <= t <= hi]
            if sel:
                ax.plot([t * 1e3 for t, _ in sel], [b / 1e3 for _, b in sel], ".", ms=2,
                        label=f"queue {q}")
        sel = [(t, v) for t, v in th if lo <= t <= hi]
        ax.step([t * 1e3 for t, _ in sel], [v / 1e3 for _, v in sel], "k-", lw=0.8,
                where="post", label="Th in use")
        ax.axhline(res["bound_bytes"] / 1e3, color="r", ls="--", lw=1,
                   label=f"Th(N={res['bottlenecked_flows']}) + hop-RTT arrivals + MTU")
        ax.axhline(res["threshold_bytes"] / 1e3, color="gray", ls=":", lw=1,
                   label=f"Th(N={res['bottlenecked_flows']})")
        ax.axvspan(t0 * 1e3, t1 * 1e3, color="y", alpha=0.08)
        ax.set_xlim(lo * 1e3, hi * 1e3)
        ax.set_xlabel("time from replay start (ms)")
        ax.set_ylabel("queue (KB)")
    u = res["schemes"]["bfc"]["utilisation"]
    axes[0].set_title(f"BFC (dynamic) at s2 toward r2: {res['bottlenecked_flows']} bottlenecked "
                      f"flows, r2 {u * 100:.1f}% utilised in the shaded interval, "
                      f"{res['schemes']['bfc']['drops']} drops", fontsize=9)
    axes[1].set_title("zoom: 6 ms in the middle of the interval", fontsize=9)
    axes[0].legend(fontsize=7, ncol=3, loc="upper right")
    mark_not_valid(fig, res)
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    plt.close(fig)


def mark_not_valid(fig, res):
    if res.get("note"):
        fig.suptitle(res["note"], color="red", fontweight="bold")


def plot_fct(res, png):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.5))
    names = [LABELS[s] for s in SCHEMES]
    g = [res["schemes"][s]["group1"] for s in SCHEMES]
    x = range(len(SCHEMES))
    ax1.bar(x, [v["mean_fct_seconds"] * 1e3 for v in g], color=["C0", "C1", "C3"],
            label="mean")
    ax1.plot(x, [v["p50_fct_seconds"] * 1e3 for v in g], "kv", label="p50")
    ax1.plot(x, [v["p99_fct_seconds"] * 1e3 for v in g], "k^", label="p99")
    for i, v in enumerate(g):
        ax1.annotate(f"{ge(v['lower_bound'])}{v['mean_fct_seconds'] * 1e3:.2f} ms",
                     (i, v["mean_fct_seconds"] * 1e3), ha="center", va="bottom", fontsize=8)
    ax1.axhline(res["group1_alone"]["mean_fct_seconds"] * 1e3, color="k", ls=":", lw=1,
                label="mean, group 1 alone")
    ax1.set_yscale("log")
    ax1.set_xticks(list(x), names)
    ax1.set_ylabel("group-1 FCT (ms)")
    unfinished = ", ".join(f"{LABELS[s]} {v['unfinished']}" for s, v in zip(SCHEMES, g))
    ax1.set_title(f"group 1 (g1 -> r1, {g[0]['flows']} flows): FCT by queue assignment\n"
                  f"unfinished flows counted at end of run (>=): {unfinished}", fontsize=9)
    ax1.legend(fontsize=8)
    for s, c in zip(SCHEMES, ["C0", "C1", "C3"]):
        f = res["schemes"][s]["_fcts"]
        ax2.step([v * 1e3 for v in f], [(i + 1) / len(f) for i in range(len(f))], where="post",
                 color=c, label=LABELS[s])
    ax2.set_xscale("log")
    ax2.set_xlabel("group-1 FCT (ms)")
    ax2.set_ylabel("CDF")
    ax2.set_title("distribution", fontsize=9)
    ax2.legend(fontsize=8)
    mark_not_valid(fig, res)
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    plt.close(fig)


def run_all(a, conf, out):
    """The workloads and the four sluice runs (through tools/experiment)."""
    host_rate = port_conf(conf, "s1", GROUP1)[1]["rate"]
    workload = os.path.join(out, "workload")
    shutil.rmtree(workload, ignore_errors=True)
    cli.run_step([PY, os.path.join(ROOT, "tools", "workload"), "--matrix", a.matrix,
                  "--link-rate", host_rate, "--hosts-from-config", a.config,
                  "--duration", a.duration, "--seed", a.seed, "--out", workload], "tools/workload")
    # base RTT: twice the one-way propagation g1 -> r1 (one internal link),
    # so the ideal FCT includes it and a slowdown of 1 means "not delayed".
    delay = parse_time(port_conf(conf, *UPSTREAM)[1]["delay"])
    # The child presents every run; this tool judges them all at the end.
    # Open-loop hosts (--host-nic plain): the paper's traffic came from the
    # switch's on-chip packet generator, with no congestion control (6.1).
    experiment = [PY, os.path.join(ROOT, "tools", "experiment"), "--config", a.config,
                  "--host-nic", "plain", "--seed", str(a.seed),
                  "--link-rate", host_rate, "--base-rtt", f"{2 * delay:.9f}",
                  "--drain", a.drain, "--sluice", a.sluice] + fidelity.child_arguments(a)
    cli.run_step(experiment + ["--schemes", ",".join(SCHEMES), "--workload", workload,
                               "--queue-trace",
                               f"{'/'.join(BOTTLENECK)},{'/'.join(UPSTREAM)},s3/u",
                               "--out", out], "tools/experiment")
    alone = os.path.join(out, "alone")
    os.makedirs(alone, exist_ok=True)
    group1_only_matrix(a.matrix, os.path.join(alone, "matrix.yaml"))
    cli.run_step([PY, os.path.join(ROOT, "tools", "workload"), "--matrix",
                  os.path.join(alone, "matrix.yaml"), "--link-rate", host_rate,
                  "--hosts-from-config", a.config, "--duration", a.duration, "--seed", a.seed,
                  "--out", os.path.join(alone, "workload")], "tools/workload (group 1 alone)")
    cli.run_step(experiment + ["--schemes", "bfc", "--workload",
                               os.path.join(alone, "workload"), "--out", alone],
                 "tools/experiment (group 1 alone)")


def check_fidelity(gate, out):
    """Every run of the testbed, group 1 alone included, through the gate."""
    runs = [(s, os.path.join(out, s)) for s in SCHEMES] + [("alone", os.path.join(out, "alone", "bfc"))]
    for label, d in runs:
        gate.check(label, cli.load_json(os.path.join(d, "summary.json"), "sluice summary"))


def ge(lower_bound):
    """'>=' before figures that include unfinished flows (lower bounds)."""
    return ">=" if lower_bound else ""


def print_results(res, out):
    t0, t1 = res["congested_interval_seconds"]
    if res.get("note"):
        print(f"\n{res['note']}")
    print(f"\ncongested interval {t0 * 1e3:.1f}-{t1 * 1e3:.1f} ms; Th(N={res['bottlenecked_flows']})"
          f" = {res['threshold_bytes']:.0f} B, bound {res['bound_bytes']:.0f} B")
    print(f"{'scheme':15} {'drops':>6} {'peak q B':>9} {'util':>6} {'g1 unfinished':>13} "
          f"{'g1 mean FCT us':>15} {'g1 mean slowdown':>17} {'r2 lost us':>10} "
          f"{'link late p99 us':>16}")
    for s in SCHEMES:
        d = res["schemes"][s]
        g = d["group1"]
        lb = ge(g["lower_bound"])
        print(f"{s:15} {d['drops']:>6} {d['peak_queue_bytes']:>9} {d['utilisation']:>6.3f} "
              f"{g['unfinished']:>13} {lb + '%.1f' % (g['mean_fct_seconds'] * 1e6):>15} "
              f"{lb + '%.3f' % g['mean_slowdown']:>17} "
              f"{d['bottleneck_shaper_lost_ns'] / 1e3:>10.1f}"
              f" {d['max_link_lateness_p99_ns'] / 1e3:>16.1f}")
    al = res["group1_alone"]
    lb = ge(al["lower_bound"])
    print(f"group 1 alone: mean FCT {lb}{al['mean_fct_seconds'] * 1e6:.1f} us, mean slowdown "
          f"{lb}{al['mean_slowdown']:.3f}, {al['unfinished']} unfinished")
    print("('>=': unfinished flows counted with FCT = end of the run, a lower bound)")
    print(f"reproduce bfc-testbed: results in {out}")


def main(argv):
    a = parse_args(argv)
    out = os.path.abspath(a.out)
    conf = cli.load_yaml(a.config)
    if a.no_run:
        floor_line = fidelity.recorded_floor(out)
    else:
        floor_line = fidelity.floor_step(a, fidelity.DEFAULT_EAL, out, "reproduce bfc-testbed")
        run_all(a, conf, out)
    gate = fidelity.Gate("reproduce bfc-testbed", a, floor_line)
    check_fidelity(gate, out)
    res = analyse(out, conf)
    res["note"], res["fidelity"] = gate.note, gate.record()
    plot_queue(res, out, os.path.join(out, "bfc_testbed_queue.png"))
    plot_fct(res, os.path.join(out, "bfc_testbed_fct.png"))
    with open(os.path.join(out, "bfc_testbed.json"), "w") as f:
        json.dump({**res, "schemes": {s: {k: v for k, v in d.items() if not k.startswith("_")}
                                      for s, d in res["schemes"].items()}}, f, indent=2)
    if a.plots_dir:
        os.makedirs(a.plots_dir, exist_ok=True)
        for n in ("bfc_testbed_queue.png", "bfc_testbed_fct.png"):
            shutil.copy(os.path.join(out, n), os.path.join(a.plots_dir, n))
    print_results(res, out)
    provenance.write(out, seeds=[int(a.seed)], configs=[a.config], inputs=[a.matrix],
                     binaries=[a.sluice])
    return gate.verdict()
