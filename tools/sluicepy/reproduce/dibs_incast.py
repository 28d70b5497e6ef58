"""DIBS against the paper on one server: an open-loop incast on a leaf-spine
under drop-tail, ECN marking only, DIBS (random) and DIBS (load-aware):
drops by reason and tier, how many packets were detoured and where to, the
detours each packet took, and the FCT slowdown of incast and other flows
(docs/mechanisms/dibs.md).

    tools/reproduce dibs-incast --out runs/reproduce/dibs-incast --seeds 1,2

One tools/experiment study per seed: a Poisson background of --cdf at
--load on every host link plus an incast every --incast-period of
--incast-size bytes from --incast-degree hosts toward --incast-receiver
(tools/workload's own incast: senders drawn at random among the other
hosts), under every --schemes. Hosts are open loop (pcap replay): nothing
slows a sender, so what DIBS is measured on is the burst absorption alone.

Switch tiers come from the configuration: the receiver's switch is the
destination leaf, the other switches with host ports the source leaves,
switches without host ports the spines.

Definitions (per run):
  packets into the fabric  packets the hosts sent (rx_packets summed over the
                           host-facing ports);
  detours                  the switches' dibs.detours summed (each time any
                           switch sent a packet out of a port other than its
                           route's: a packet detoured k times counts k);
  detoured fraction        detours / packets into the fabric (the checked
                           figure; it bounds from above the share of packets
                           detoured at least once);
  packets detoured         packets that left the fabric having taken at least
                           one detour (the detours_per_packet histogram less
                           its le_0 bucket), also as a share of the packets
                           that left: the paper's own measure (sec. 5.4.1).

Checks (exit 4, FAIL printed): drop-tail dropped at least one packet in
every seed (otherwise the scenario shows nothing); under dibs and
dibs-load-aware every drop is of a DIBS reason (detour_no_port,
detour_max_detours, detour_refused: what no neighbour could take) and the
detoured fraction is below --bound (0.2, the paper's "less than 20% of the
packets", sec. 5.4.1).

OUT/report/ gets table.md, results.json, dibs_detours.png (where the
detoured packets went: dibs_detours per switch port, tiers coloured) and
dibs_hops.png (detours per packet). FCT figures count every flow, an
unfinished one with FCT = end of the run (tools/fct): '>=' marks lower
bounds. Every run is checked against the fidelity limits (docs/testbed.md,
"Fidelity gate"); when one exceeds them the report is still written, marked
"NOT VALID: fidelity limits exceeded", and the tool exits 3 unless
--allow-unfaithful.
"""

import argparse
import json
import os
import subprocess
import sys

from .. import cli, fct_report, fidelity, provenance, sluice

ROOT = sluice.ROOT

PY = "/usr/bin/python3"
TIERS = ("source leaf", "spine", "destination leaf")
TIER_COLOURS = {"source leaf": "tab:blue", "spine": "tab:orange", "destination leaf": "tab:red"}
DIBS_SCHEMES = ("dibs", "dibs-load-aware")
DIBS_REASONS = ("detour_no_port", "detour_max_detours", "detour_refused")
BUCKETS = ("le_0", "le_1", "le_2", "le_3", "le_7", "le_15", "le_31", "le_63", "le_255")
BUCKET_LABELS = ("0", "1", "2", "3", "4-7", "8-15", "16-31", "32-63", "64-255")
EXIT_CHECK_FAILED = 4


def parse_args(argv):
    p = argparse.ArgumentParser(prog="tools/reproduce dibs-incast",
                                description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    p.add_argument("--out", default=os.path.join(ROOT, "runs", "reproduce", "dibs-incast"))
    p.add_argument("--config", default=os.path.join(ROOT, "conf", "dibs-leafspine.yaml"))
    p.add_argument("--schemes", default="droptail,ecn,dibs,dibs-load-aware")
    p.add_argument("--seeds", default="1,2")
    g = p.add_argument_group("workload")
    g.add_argument("--cdf", default=os.path.join(ROOT, "conf", "workloads", "fb_hadoop.cdf"))
    g.add_argument("--load", type=float, default=0.1)
    g.add_argument("--duration", default="0.02")
    g.add_argument("--link-rate", default="10Gbps")
    g.add_argument("--incast-degree", type=int, default=7)
    g.add_argument("--incast-size", default="1MB", help="total bytes per incast")
    g.add_argument("--incast-period", default="5ms")
    g.add_argument("--incast-receiver", default="h0")
    g = p.add_argument_group("runs and checks")
    g.add_argument("--ecn-k", default="30KB",
                   help="ECN step threshold of ecn and the dibs schemes (the paper's 20 packets "
                        "of 1500 B)")
    g.add_argument("--bound", type=float, default=0.2,
                   help="the detoured fraction must stay below this (paper sec. 5.4.1: 20%%)")
    g.add_argument("--drain", type=float, default=0.05)
    g.add_argument("--sluice", default=sluice.BINARY)
    g.add_argument("--lock", default="", help="flock this file around each run (default: none)")
    g.add_argument("--rerun", action="store_true", help="run what already has results again")
    g.add_argument("--report-only", action="store_true")
    fidelity.add_arguments(p)
    a = p.parse_args(argv)
    a.schemes = [s for s in a.schemes.split(",") if s]
    a.seeds = [int(s) for s in a.seeds.split(",") if s]
    if not a.seeds or not a.schemes:
        p.error("--seeds and --schemes need at least one value")
    if not 0 < a.bound <= 1:
        p.error("--bound must be in (0, 1]")
    a.out = os.path.abspath(a.out)
    a.config = os.path.abspath(a.config)
    return a


# ---------------------------------------------------------------- fabric

class Fabric:
    """Tiers and host ports, read from the configuration."""

    def __init__(self, conf, receiver):
        self.leaf_of = {}
        self.host_ports = set()
        for sw in conf["switches"]:
            for p in sw["ports"]:
                if p.get("role") == "host":
                    self.host_ports.add((sw["name"], p["name"]))
                    self.leaf_of[p["name"]] = sw["name"]
        if receiver not in self.leaf_of:
            raise cli.ToolError("receiver %r is not a host port of the configuration" % receiver)
        self.dst_leaf = self.leaf_of[receiver]
        leaves = {sw for sw, _ in self.host_ports}
        self.tiers = {"source leaf": sorted(leaves - {self.dst_leaf}),
                      "spine": sorted(sw["name"] for sw in conf["switches"]
                                      if sw["name"] not in leaves),
                      "destination leaf": [self.dst_leaf]}
        self.order = [sw["name"] for sw in conf["switches"]]
        # "switch/port" -> the switch at the other end of the port's link
        self.peer = {"%s/%s" % (sw["name"], p["name"]): p["link"].split("/")[0]
                     for sw in conf["switches"] for p in sw["ports"] if "link" in p}

    def tier_of(self, switch):
        return next(t for t, sws in self.tiers.items() if switch in sws)


# ---------------------------------------------------------------- runs

def seed_dir(a, seed):
    return os.path.join(a.out, "seed%d" % seed)


def run_seed(a, seed):
    d = seed_dir(a, seed)
    done = all(os.path.exists(os.path.join(d, s, "fct", "fct.csv")) for s in a.schemes)
    if done and not a.rerun:
        print("reproduce dibs-incast: %s already run (--rerun to repeat)" % d, flush=True)
        return
    os.makedirs(d, exist_ok=True)
    cmd = [PY, os.path.join(ROOT, "tools", "experiment"), "--config", a.config,
           "--schemes", ",".join(a.schemes), "--cdf", a.cdf, "--load", str(a.load),
           "--duration", a.duration, "--seed", str(seed), "--link-rate", a.link_rate,
           "--ecn-k", a.ecn_k, "--drain", str(a.drain), "--sluice", a.sluice, "--out", d]
    cmd += fidelity.child_arguments(a)
    cmd += ["--", "--incast-degree", str(a.incast_degree), "--incast-size", a.incast_size,
            "--incast-period", a.incast_period, "--incast-receiver", a.incast_receiver]
    if a.lock:
        cmd = ["flock", a.lock] + cmd
    log_path = os.path.join(d, "experiment.log")
    print("reproduce dibs-incast: seed %d: tools/experiment (log in %s)" % (seed, log_path),
          flush=True)
    with open(log_path, "w") as log:
        cli.run_step(cmd, "tools/experiment in %s" % d, see=log_path, stdout=log,
                     stderr=subprocess.STDOUT)


# ---------------------------------------------------------------- analysis

def dibs_figures(fabric, summary):
    """Drops by tier and reason, packets in and out, DIBS's counters."""
    drops = {t: {} for t in TIERS}
    detours_at = {}
    into = delivered = 0
    detours = 0
    hist = {b: 0 for b in BUCKETS}
    detour_drops = {r: 0 for r in DIBS_REASONS}
    for sw in summary["switches"]:
        tier = fabric.tier_of(sw["name"])
        for p in sw["ports"]:
            for reason, n in p["drops"].items():
                if n:
                    drops[tier][reason] = drops[tier].get(reason, 0) + n
            if (sw["name"], p["name"]) in fabric.host_ports:
                into += p.get("rx_packets", 0)
                delivered += p.get("tx_packets", 0)
            if p.get("dibs_detours"):
                detours_at["%s/%s" % (sw["name"], p["name"])] = p["dibs_detours"]
        d = sw.get("dibs")
        if d:
            detours += d.get("detours", 0)
            for b in BUCKETS:
                hist[b] += d.get("detours_per_packet", {}).get(b, 0)
            for r in DIBS_REASONS:
                detour_drops[r] += d.get("detour_drops", {}).get(r, 0)
    total = sum(sum(r.values()) for r in drops.values())
    non_dibs = {t: {r: n for r, n in v.items() if r not in DIBS_REASONS} for t, v in drops.items()}
    left = sum(hist.values())
    detoured_packets = left - hist["le_0"]
    return {"packets_into_fabric": into, "packets_delivered": delivered,
            "drops": total, "drops_by_tier": drops,
            "drops_by_reason": merge([v for v in drops.values()]),
            "non_dibs_drops": sum(sum(v.values()) for v in non_dibs.values()),
            "detours": detours,
            "detoured_fraction": detours / into if into else None,
            "detours_at": detours_at,
            "detours_by_tier": {t: sum(n for k, n in detours_at.items()
                                       if fabric.tier_of(k.split("/")[0]) == t) for t in TIERS},
            "detours_per_packet": hist, "packets_left_fabric": left,
            "packets_detoured": detoured_packets,
            "packets_detoured_share": detoured_packets / left if left else None,
            "dibs_detour_drops": detour_drops}


def merge(dicts):
    out = {}
    for d in dicts:
        for k, v in d.items():
            out[k] = out.get(k, 0) + v
    return out


def fct_split(fct_csv):
    rows = fct_report.read_fct_csv(fct_csv)
    out = {}
    for name, want in (("incast", "1"), ("non_incast", "0")):
        st = fct_report.row_stats([r for r in rows if r["is_incast"] == want])
        out[name] = {"flows": st["count"], "unfinished": st["unfinished"],
                     "lower_bound": st["lower_bound"], "p50": st["p50"], "p99": st["p99"]}
    return out


def analyse_seed(a, gate, seed):
    res = {}
    for s in a.schemes:
        sd = os.path.join(seed_dir(a, seed), s)
        summary = cli.load_json(os.path.join(sd, "summary.json"), "sluice summary")
        gate.check("seed %d %s" % (seed, s), summary)
        r = dibs_figures(a.fabric, summary)
        r["fct"] = fct_split(os.path.join(sd, "fct", "fct.csv"))
        res[s] = r
    return res


def checks(a, results):
    """[(name, passed, text)] of the tool's checks over every seed."""
    out = []
    for seed in a.seeds:
        res = results[seed]
        if "droptail" in res:
            n = res["droptail"]["drops"]
            out.append(("droptail drops seed %d" % seed, n > 0,
                        "seed %d droptail: %d packets dropped (must be > 0, else the incast "
                        "shows nothing)" % (seed, n)))
        for s in DIBS_SCHEMES:
            if s not in res:
                continue
            r = res[s]
            other = {t: {k: v for k, v in d.items() if k not in DIBS_REASONS}
                     for t, d in r["drops_by_tier"].items()}
            other = {t: d for t, d in other.items() if d}
            out.append(("%s drops seed %d" % (s, seed), r["non_dibs_drops"] == 0,
                        "seed %d %s: %d drops, %d of other reasons than DIBS's%s" % (
                            seed, s, r["drops"], r["non_dibs_drops"],
                            (" (%s)" % json.dumps(other)) if other else "")))
            f = r["detoured_fraction"]
            out.append(("%s detoured fraction seed %d" % (s, seed), f is not None and f < a.bound,
                        "seed %d %s: detoured fraction %s = %d detours / %d packets into the "
                        "fabric (must be < %g)" % (seed, s, "—" if f is None else "%.4f" % f,
                                                   r["detours"], r["packets_into_fabric"],
                                                   a.bound)))
    for name, ok, text in out:
        print("reproduce dibs-incast: %s: %s" % ("PASS" if ok else "FAIL", text), flush=True)
    return out


# ---------------------------------------------------------------- report

def rng(values, fmt="%.0f", scale=1.0):
    v = [x * scale for x in values if x is not None]
    if not v:
        return "—"
    lo, hi = fmt % min(v), fmt % max(v)
    return lo if lo == hi else "%s–%s" % (lo, hi)


def reasons_text(d):
    return ", ".join("%s %d" % (k, v) for k, v in sorted(d.items())) or "0"


def table(a, results):
    seeds = ",".join(map(str, a.seeds))
    L = ["## DIBS under an open-loop incast", "",
         "%s; background %s at load %g, incast of %s from %d hosts toward %s every %s, %s s "
         "of arrivals; ECN step at %s for ecn and the dibs schemes. Ranges are min–max over "
         "seeds %s. Detoured fraction = switches' detours / packets the hosts sent into the "
         "fabric; packets detoured = packets that left the fabric with at least one detour "
         "(share of those that left)." % (
             os.path.relpath(a.config, ROOT) if a.config.startswith(ROOT) else a.config,
             os.path.basename(a.cdf), a.load, a.incast_size, a.incast_degree,
             a.incast_receiver, a.incast_period, a.duration, a.ecn_k, seeds), "",
         "| scheme | packets into fabric | drops | drops source leaves | drops spines | "
         "drops destination leaf | detours | detoured fraction | packets detoured (share) |",
         "|---|---|---|---|---|---|---|---|---|"]
    for s in a.schemes:
        runs = [results[seed][s] for seed in a.seeds]
        by_tier = []
        for t in TIERS:
            by_tier.append(" / ".join(reasons_text(r["drops_by_tier"][t]) for r in runs))
        dibs = s in DIBS_SCHEMES
        L.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            s, rng([r["packets_into_fabric"] for r in runs]), rng([r["drops"] for r in runs]),
            *by_tier,
            rng([r["detours"] for r in runs]) if dibs else "—",
            rng([r["detoured_fraction"] for r in runs], "%.2f%%", 100) if dibs else "—",
            ("%s (%s)" % (rng([r["packets_detoured"] for r in runs]),
                          rng([r["packets_detoured_share"] for r in runs], "%.2f%%", 100)))
            if dibs else "—"))
    L += ["", "Per-tier drops are by reason, one entry per seed (separated by /).", "",
          "FCT slowdown (FCT / ideal; unfinished flows counted with FCT = end of the run, "
          "'≥' marks lower bounds):", "",
          "| scheme | non-incast flows (unfinished) | p50 | p99 | incast flows (unfinished) | "
          "p50 | p99 |", "|---|---|---|---|---|---|---|"]
    for s in a.schemes:
        runs = [results[seed][s]["fct"] for seed in a.seeds]
        cells = []
        for k in ("non_incast", "incast"):
            lb = "≥" if any(r[k]["lower_bound"] for r in runs) else ""
            cells += ["%s (%s)" % (rng([r[k]["flows"] for r in runs]),
                                   rng([r[k]["unfinished"] for r in runs])),
                      lb + rng([r[k]["p50"] for r in runs], "%.2f"),
                      lb + rng([r[k]["p99"] for r in runs], "%.2f")]
        L.append("| %s | %s |" % (s, " | ".join(cells)))
    dibs = [s for s in a.schemes if s in DIBS_SCHEMES]
    if dibs:
        L += ["", "Detours per packet (packets that left the fabric, summed over seeds):", "",
              "| scheme | " + " | ".join(BUCKET_LABELS) + " |",
              "|---|" + "---|" * len(BUCKETS)]
        for s in dibs:
            h = merge([results[seed][s]["detours_per_packet"] for seed in a.seeds])
            L.append("| %s | %s |" % (s, " | ".join(str(h.get(b, 0)) for b in BUCKETS)))
        L += ["", "Where the detoured packets went (dibs_detours per port, summed over seeds; "
              "the tier is that of the switch that detoured; its port leads to the neighbour that took "
              "the packet):", "",
              "| scheme | " + " | ".join(TIERS) + " | busiest ports |", "|---|---|---|---|---|"]
        for s in dibs:
            at = merge([results[seed][s]["detours_at"] for seed in a.seeds])
            tiers = merge([results[seed][s]["detours_by_tier"] for seed in a.seeds])
            top = sorted(at.items(), key=lambda kv: -kv[1])[:4]
            L.append("| %s | %s | %s |" % (s, " | ".join(str(tiers.get(t, 0)) for t in TIERS),
                                           ", ".join("%s %d" % kv for kv in top) or "—"))
    return L


def plot_detours(a, results, path, note):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch
    dibs = [s for s in a.schemes if s in DIBS_SCHEMES]
    fig, axes = plt.subplots(len(dibs), 1, figsize=(11, 2.8 * len(dibs) + 0.6), squeeze=False)
    ports = []
    for s in dibs:
        for seed in a.seeds:
            ports += [k for k in results[seed][s]["detours_at"] if k not in ports]
    ports.sort(key=lambda k: (a.fabric.order.index(k.split("/")[0]), k))
    for ax, s in zip(axes[:, 0], dibs):
        vals = [[results[seed][s]["detours_at"].get(k, 0) for seed in a.seeds] for k in ports]
        mean = [sum(v) / len(v) for v in vals]
        ax.bar(range(len(ports)), mean,
               yerr=[[m - min(v) for m, v in zip(mean, vals)],
                     [max(v) - m for m, v in zip(mean, vals)]], capsize=2,
               color=[TIER_COLOURS[a.fabric.tier_of(k.split("/")[0])] for k in ports])
        ax.set_xticks(range(len(ports)))
        ax.set_xticklabels(["%s\n→%s" % (k, a.fabric.peer[k]) if k in a.fabric.peer else k
                            for k in ports], fontsize=7)
        ax.set_ylabel("packets detoured\nout of the port")
        f = [results[seed][s]["detoured_fraction"] or 0 for seed in a.seeds]
        ax.set_title("%s: detoured fraction %s" % (s, rng(f, "%.2f%%", 100)), fontsize=9,
                     loc="left")
        ax.grid(True, axis="y", alpha=0.3)
    axes[0, 0].legend(handles=[Patch(color=TIER_COLOURS[t], label="%s (%s)" % (
        t, ",".join(a.fabric.tiers[t]))) for t in TIERS], fontsize=7)
    fig.suptitle("%swhere detoured packets went (port that sent the detour → the neighbour "
                 "that took it;\ncolour: tier of the detouring switch): %s, %s incast x%d toward %s every %s; mean of "
                 "%d seed(s), bars min–max" % (note + "\n" if note else "",
                                              os.path.basename(a.config), a.incast_size,
                                              a.incast_degree, a.incast_receiver,
                                              a.incast_period, len(a.seeds)),
                 color="red" if note else "black", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_hops(a, results, path, note):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    dibs = [s for s in a.schemes if s in DIBS_SCHEMES]
    fig, ax = plt.subplots(figsize=(8, 3.8))
    width = 0.8 / max(len(dibs), 1)
    for i, s in enumerate(dibs):
        h = merge([results[seed][s]["detours_per_packet"] for seed in a.seeds])
        total = sum(h.values()) or 1
        ax.bar([j + (i - (len(dibs) - 1) / 2) * width for j in range(len(BUCKETS))],
               [h.get(b, 0) / total for b in BUCKETS], width, label="%s (%d packets)" % (s, total),
               color="C%d" % i)
    ax.set_yscale("log")
    ax.set_xticks(range(len(BUCKETS)))
    ax.set_xticklabels(BUCKET_LABELS)
    ax.set_xlabel("detours taken by a packet before it left the fabric")
    ax.set_ylabel("share of packets")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title("%sdetours per packet, %d seed(s) summed" % (note + "\n" if note else "",
                                                             len(a.seeds)),
                 color="red" if note else "black", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv):
    a = parse_args(argv)
    os.makedirs(a.out, exist_ok=True)
    conf = cli.load_yaml(a.config)
    a.fabric = Fabric(conf, a.incast_receiver)
    if a.report_only:
        floor_line = fidelity.recorded_floor(a.out)
    else:
        floor_line = fidelity.floor_step(a, fidelity.DEFAULT_EAL, a.out, "reproduce dibs-incast",
                                         ["flock", a.lock] if a.lock else ())
        for seed in a.seeds:
            run_seed(a, seed)
    gate = fidelity.Gate("reproduce dibs-incast", a, floor_line)
    results = {seed: analyse_seed(a, gate, seed) for seed in a.seeds}
    found = checks(a, results)
    failed = [name for name, ok, _ in found if not ok]
    report = os.path.join(a.out, "report")
    os.makedirs(report, exist_ok=True)
    head = ([gate.note, ""] if gate.note else []) + (
        ["CHECK FAILED: " + ", ".join(failed), ""] if failed else [])
    lines = table(a, results) + ["", "Checks:", ""] + [
        "- %s: %s" % ("PASS" if ok else "FAIL", text) for _, ok, text in found]
    text = "\n".join(head + lines) + "\n"
    with open(os.path.join(report, "table.md"), "w") as f:
        f.write(text)
    args = {k: v for k, v in vars(a).items() if k != "fabric"}
    with open(os.path.join(report, "results.json"), "w") as f:
        json.dump({"args": args, "fidelity": gate.record(), "tiers": a.fabric.tiers,
                   "checks": [{"name": n, "pass": ok, "text": t} for n, ok, t in found],
                   "checks_failed": failed, "results": results}, f, indent=1, default=str)
    if any(s in DIBS_SCHEMES for s in a.schemes):
        plot_detours(a, results, os.path.join(report, "dibs_detours.png"), gate.note)
        plot_hops(a, results, os.path.join(report, "dibs_hops.png"), gate.note)
    print(text)
    provenance.write(a.out, seeds=a.seeds, configs=[a.config], inputs=[a.cdf],
                     binaries=[a.sluice])
    print("reproduce dibs-incast: report in %s" % report)
    rc = gate.verdict()
    if failed:
        print("reproduce dibs-incast: FAIL: %s" % ", ".join(failed), file=sys.stderr,
              flush=True)
        return rc or EXIT_CHECK_FAILED
    return rc
