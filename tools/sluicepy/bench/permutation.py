"""The emulator beside htsim on one scenario (docs/benchmarks.md, "The
emulator beside htsim"): a k-ary fat-tree (k^3/4 hosts, 5k^2/4 switches),
every link 100 Gb/s with 1 us of delay, 1500-byte MTU, 1000-packet drop-tail
queues marking ECN at K = 65 packets, DCTCP hosts, one long flow from each
host to another (a random permutation without fixed points), 10 ms of
fabric time.

    tools/bench permutation [--k 8] [--ms 10] [--workers 1,2] [--htsim BINARY]
                            [--same-paths] [--dctcp-cut on_echo|every_window]
                            [--queues US] [--repeat 1] [--out runs/bench/permutation]

For sluice and (with --htsim, the path to htsim's permutation driver, built
outside this repository) for htsim, on the same flows, it prints from one
invocation: CPU seconds (user + sys of the whole process, start-up
included), transmissions (a frame entering a link, host uplinks included, as
htsim counts them), transmissions per CPU second, aggregate goodput, the
per-flow goodput's spread and peak RSS. With --repeat N it runs N rounds,
each one sluice on every worker count and then htsim, so that a machine
whose speed drifts weighs on both alike; figures are medians. sluice's runs
on several --workers must give the same captures, completions and summary
(the machine's fields aside): the tool compares their digests and fails if
they differ.

sluice's goodput per flow is the unique payload its sender put on the wire,
(data segments - retransmissions) x MSS, from the completions file: at most
one window above what the receiver got. htsim's is the bytes its receivers
acknowledged. htsim models no headers: its 1500-byte packet carries 1500
bytes, where sluice's 1538-byte frame carries 1444.

Each flow's goodput is also read against the max-min fair share of the
links its path crosses (tools/sluicepy/fattree_paths.py): sluice's paths
follow its ECMP rule, checked against the ports that sent in the run;
htsim's are those its driver prints. With --same-paths htsim is given
sluice's paths, so the two differ only in what the hosts and queues do;
--dctcp-cut every_window gives sluice's hosts htsim's DCTCP cut.

With --queues US, one more run of each samples every switch egress queue
every US microseconds and the tool prints, per tier of the fat-tree, the
queues' occupancy over the run: the mean over every link and sample (empty
ones included), the share of samples that were not empty, the p99 and the
maximum. htsim counts the packet being serialised in its queue; sluice's
queue holds what has not started onto the wire, so a busy queue reads up
to one frame (1,514 bytes) lower in sluice.
"""

import argparse
import csv
import json
import os
import re
import statistics
import time

import yaml

from .. import cli, experiment as exp, fattree_paths, fingerprint, provenance, sluice
from .. import htsim as htsim_run
from ..hosts import hosts_from_config

ROOT = sluice.ROOT
PY = "/usr/bin/python3"
MTU = 1500
MSS = 1444                 # MTU less sluice's IPv4, UDP and transport headers (20 + 8 + 28)
FLOW_BYTES = 1_000_000_000  # more than 10 ms at 100 Gb/s carries: every flow stays open
K_PACKETS = 65
QUEUE_PACKETS = 1000


def base_rtt_ns(hops, rate_bps=100e9, delay_ns=1000, data=1538, ack=94):
    """An inter-pod round trip: `hops` links each way, one data frame and
    one ACK serialised per link."""
    return int(2 * hops * delay_ns + hops * (data + ack) * 8e9 / rate_bps + 0.999)


def prepare(d, k, pairs, seed, dctcp_cut="on_echo"):
    """d/sluice.yaml (tools/fabric fattree with tools/experiment's ecn
    scheme and DCTCP hosts cutting their windows by dctcp_cut) and
    d/flows.csv for the permutation."""
    os.makedirs(d, exist_ok=True)
    fabric = os.path.join(d, "fabric.yaml")
    cli.run_step([PY, os.path.join(ROOT, "tools", "fabric"), "fattree", "--k", str(k), "--rate",
                  "100Gbps", "--delay", "1us", "--host-delay", "1us", "--port-buffer-packets",
                  str(QUEUE_PACKETS), "--queues-per-port", "1", "--mtu", str(MTU), "-o", fabric],
                 "tools/fabric")
    hosts = hosts_from_config(fabric)
    with open(os.path.join(d, "flows.csv"), "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["flow_id", "src", "dst", "src_ip", "dst_ip", "size", "packets",
                    "arrival_time", "start_time", "end_time", "is_incast"])
        for fid, (s, t) in enumerate(pairs, 1):
            w.writerow([fid, hosts[s].name, hosts[t].name, hosts[s].ip, hosts[t].ip, FLOW_BYTES,
                        -(-FLOW_BYTES // MSS), "0.000000000", "0.000000000", "0.000000000", 0])
    args = exp.parse_args([
        "--config", "x", "--schemes", "ecn", "--workload", "w", "--out", "o", "--clock", "exact",
        "--seed", str(seed), "--transport", "dctcp", "--ecn-k", "%dB" % (K_PACKETS * (MTU + 14)),
        "--base-rtt", "%dns" % base_rtt_ns(6), "--transport-param", "mss=%d" % MSS,
        # htsim's TCP floors its RTO at 250 ms and starts at 10 packets.
        "--transport-param", "tcp.min_rto=250ms", "--transport-param", "tcp.init_cwnd=10",
        "--transport-param", "tcp.dctcp_cut=" + dctcp_cut])
    conf = exp.apply_scheme(cli.load_yaml(fabric), "ecn", args)
    conf["transport"]["flows"] = "flows.csv"
    conf["transport"]["completions"] = "completions.csv"
    for sw in conf["switches"]:
        for port in sw["ports"]:
            if port.get("role") == "host":
                port["pcap"] = {}  # captures off, as htsim writes none
    with open(os.path.join(d, "sluice.yaml"), "w") as f:
        yaml.safe_dump(conf, f, sort_keys=False)


def run_sluice(a, d, workers):
    eal = ["--no-huge", "-m", "64", "--no-pci"] + sluice.lcores(workers)
    r = sluice.run(a.sluice, d, sluice.REPLAY_LEAD_S + a.ms / 1e3, eal=eal, echo=False,
                   timeout=sluice.exact_timeout(a.ms / 1e3 + 0.05))
    s = r.summary
    # The hosts' NICs put on their links what the switches' host ports take in.
    conf = cli.load_yaml(os.path.join(d, "sluice.yaml"))
    host_ports = {(sw["name"], p["name"]) for sw in conf["switches"] for p in sw["ports"]
                  if p.get("role") == "host"}
    host_tx = sum(p.get("rx_packets", 0) for sw in s["switches"] for p in sw["ports"]
                  if (sw["name"], p["name"]) in host_ports)
    with open(os.path.join(d, "completions.csv"), newline="") as f:
        per_flow = [(int(row["data_segments"]) - int(row["retransmitted"])) * MSS
                    for row in csv.DictReader(f)]
    return {"who": "sluice, %d worker%s" % (workers, "s" if workers > 1 else ""),
            "cpu_s": r.cpu_s, "wall_s": r.wall_s, "rss_mb": r.rss_mb,
            "transmissions": s["clock"]["transmissions"] + host_tx,
            "goodput_bytes": sum(per_flow), "per_flow_bytes": per_flow,
            "choices": sluice_choices(conf, d, s, every_path_used=a.ms >= 0.1),
            "digests": fingerprint.run_digests(d)}


def sluice_choices(conf, d, summary, every_path_used=True):
    """Each flow's uplink choices [(tor_up, agg_up)] in flows.csv order, from
    the ECMP rule (tools/sluicepy/fattree_paths.py); a ToolError if a switch
    port outside the paths that rule gives data and replies sent frames in
    the run, or (every_path_used: a run long enough for every flow's frames
    to have crossed the fabric) if one on them sent none."""
    tree = fattree_paths.FatTree(conf)
    choices, predicted = [], set()
    with open(os.path.join(d, "flows.csv"), newline="") as f:
        for row in csv.DictReader(f):
            data, reply = tree.flow_paths(int(row["flow_id"]), row["src_ip"], row["dst_ip"])
            choices.append(fattree_paths.uplink_choices(data))
            predicted.update(data + reply)
    sent = {(sw["name"], p["name"]) for sw in summary["switches"] for p in sw["ports"]
            if p.get("tx_packets", 0) > 0}
    if sent - predicted or (every_path_used and predicted - sent):
        raise cli.ToolError("%s: the ECMP paths predicted for the flows (%d ports) are not the "
                            "ports that sent frames (%d); fattree_paths no longer follows the "
                            "switch's rule" % (d, len(predicted), len(sent)))
    return choices


# The fat-tree's tiers of egress queues: htsim's link names without their
# numbers, and sluice's (switch kind, port kind) from tools/fabric fattree's
# names (edgeP-E/hN, uN; aggP-A/dN, uN; coreC/dN).
TIERS = (("ToR to host", "tor->host", ("edge", "h")), ("ToR to agg", "tor->agg", ("edge", "u")),
         ("agg to core", "agg->core", ("agg", "u")), ("core to agg", "core->agg", ("core", "d")),
         ("agg to ToR", "agg->tor", ("agg", "d")))


def sluice_tier(switch, port):
    key = (re.sub(r"[\d-]+$", "", switch), port[:1])
    for name, _, k in TIERS:
        if k == key:
            return name
    return None


def htsim_tier(link):
    key = re.sub(r"\d+", "", link)
    for name, k, _ in TIERS:
        if k == key:
            return name
    return None


def occupancy(nonzero, links, samples):
    """Per tier: (mean bytes, share of samples not empty, p99, max) over
    links[tier] x samples link-samples, of which nonzero[tier] lists the
    non-empty ones' bytes."""
    out = {}
    for name, _, _ in TIERS:
        total = links.get(name, 0) * samples
        v = sorted(nonzero.get(name, []))
        if total == 0:
            continue
        zeros = max(0, total - len(v))
        rank = -(-total * 99 // 100)  # nearest rank, zeros first
        p99 = 0 if rank <= zeros else v[min(len(v), rank - zeros) - 1]
        out[name] = (sum(v) / total, len(v) / total, p99, v[-1] if v else 0)
    return out


def sluice_queues(a, d, pairs, interval_us):
    """The permutation once more in sluice with the queue trace on."""
    prepare(d, a.k, pairs, a.seed, a.dctcp_cut)
    eal = ["--no-huge", "-m", "64", "--no-pci"] + sluice.lcores(1)
    sluice.run(a.sluice, d, sluice.REPLAY_LEAD_S + a.ms / 1e3, eal=eal, echo=False,
               timeout=sluice.exact_timeout(a.ms / 1e3 + 0.05),
               extra=["--queue-trace", "qt.csv", "--queue-trace-interval",
                      "%.9f" % (interval_us / 1e6), "--queue-trace-max-rows", "50000000"])
    conf = cli.load_yaml(os.path.join(d, "sluice.yaml"))
    links = {}
    for sw in conf["switches"]:
        for p in sw["ports"]:
            tier = sluice_tier(sw["name"], p["name"])
            if tier:
                links[tier] = links.get(tier, 0) + 1
    nonzero = {}
    with open(os.path.join(d, "qt.csv"), newline="") as f:
        for row in csv.DictReader(f):
            t = float(row["time_seconds"])
            if not 0 < t <= a.ms / 1e3 or row["queue"] in ("buffer", "port"):
                continue
            tier = sluice_tier(row["switch"], row["port"])
            if tier and int(row["bytes"]) > 0:
                nonzero.setdefault(tier, []).append(int(row["bytes"]))
    return nonzero, links


def htsim_queues(a, perm, interval_us, pathfile):
    d = os.path.join(a.out, "htsim-k%d-queues" % a.k)
    htsim_run.run(a.htsim, perm, d, timeout=3600, k=a.k, speed_gbps=100.0, delay_us=1.0, mtu=MTU,
                  queue_packets=QUEUE_PACKETS, ecn_k_packets=K_PACKETS,
                  ssthresh_packets=a.htsim_ssthresh, end_ms=a.ms, seed=a.seed,
                  qsample_us=interval_us, pathfile=pathfile)
    nonzero = {}
    with open(os.path.join(d, "queues.csv"), newline="") as f:
        for row in csv.DictReader(f):
            if not 0 < float(row["time_us"]) <= a.ms * 1000:
                continue
            tier = htsim_tier(row["link"])
            if tier and int(row["bytes"]) > 0:
                nonzero.setdefault(tier, []).append(int(row["bytes"]))
    per_tier = a.k ** 3 // 4  # every tier of a k-ary fat-tree has k^3/4 links
    return nonzero, {name: per_tier for name, _, _ in TIERS}


def quantiles(values):
    """min, p10, median, p90, max (nearest rank)."""
    v = sorted(values)
    return [v[0]] + [v[max(0, -(-len(v) * p // 100) - 1)] for p in (10, 50, 90)] + [v[-1]]


def spread(values):
    v = sorted(values)
    if not v:
        return "-"

    return " / ".join("%.1f" % (x / 1e6) for x in quantiles(v))


def fairness(k, pairs, choices, per_flow_bytes):
    """Per-flow goodput against the max-min fair share of the paths taken:
    (links shared by two or more flows, the most flows on one link, the
    shares' min and median, x = bytes / share: its min over its median, and
    Jain's index of x (1: every flow got in proportion to its fair share))."""
    paths = {i: fattree_paths.links(k, src, dst, *c)
             for i, ((src, dst), c) in enumerate(zip(pairs, choices))}
    load = {}
    for p in paths.values():
        for link in p:
            load[link] = load.get(link, 0) + 1
    share = fattree_paths.max_min_shares(paths)
    x = [per_flow_bytes[i] / share[i] for i in paths]
    v = sorted(share.values())
    x_mid, squares = statistics.median(x), sum(y * y for y in x)
    # Nothing delivered yet (a run too short): no ratio, no index.
    return (sum(1 for n in load.values() if n > 1), max(load.values()), v[0], statistics.median(v),
            min(x) / x_mid if x_mid > 0 else None,
            sum(x) ** 2 / (len(x) * squares) if squares > 0 else None)


def main(argv):
    p = argparse.ArgumentParser(prog="tools/bench permutation",
                                description=" ".join(__doc__.split("\n\n")[0].split()),
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--k", type=int, default=8, help="fat-tree arity (even, 4 or more)")
    p.add_argument("--ms", type=float, default=10.0, help="fabric time of traffic")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--workers", default="1",
                   help="comma-separated worker lcore counts to run sluice on")
    p.add_argument("--repeat", type=int, default=1, help="runs of each; figures are medians")
    p.add_argument("--queues", type=float, metavar="US", default=0,
                   help="one more run of each sampling the switch queues every US "
                        "microseconds: occupancy per tier side by side (0: not)")
    p.add_argument("--htsim", metavar="BINARY",
                   help="htsim's permutation driver (docs/benchmarks.md says how it is built)")
    p.add_argument("--htsim-ssthresh", type=int, default=1000000,
                   help="htsim's initial ssthresh in packets (sluice's DCTCP has none: the "
                        "default matches it)")
    p.add_argument("--same-paths", action="store_true",
                   help="htsim's flows take the paths sluice's ECMP gives them (its driver's "
                        "-pathfile) instead of paths it draws at random")
    p.add_argument("--dctcp-cut", choices=("on_echo", "every_window"), default="on_echo",
                   help="when sluice's DCTCP hosts cut their windows: on an ECE once per "
                        "window (the DCTCP paper), or every window while alpha > 0 (htsim's "
                        "DCTCPSrc); docs/transports.md")
    p.add_argument("--out", default=os.path.join(ROOT, "runs", "bench", "permutation"))
    p.add_argument("--sluice", default=sluice.BINARY)
    a = p.parse_args(argv)
    if a.k < 4 or a.k % 2:
        p.error("--k must be even and at least 4")
    try:
        workers = [int(w) for w in a.workers.split(",") if w.strip()]
    except ValueError:
        p.error("--workers takes comma-separated counts, e.g. 1,2")
    if not workers or min(workers) < 1:
        p.error("--workers takes counts of 1 or more")
    if a.queues < 0 or (a.queues and a.queues * 1000 > a.ms * 1e6):
        p.error("--queues takes a sampling period in microseconds within --ms")
    if a.htsim and not os.access(a.htsim, os.X_OK):
        p.error("--htsim %s is not an executable" % a.htsim)
    if a.same_paths and not a.htsim:
        p.error("--same-paths gives htsim sluice's paths: it needs --htsim")
    a.out = os.path.abspath(a.out)
    os.makedirs(a.out, exist_ok=True)
    hosts = a.k ** 3 // 4
    perm = os.path.join(a.out, "perm-k%d-seed%d.txt" % (a.k, a.seed))
    pairs = htsim_run.write_permutation(perm, hosts, a.seed)

    def median_row(runs):
        row = dict(runs[0])
        for key in ("cpu_s", "wall_s"):
            row[key] = statistics.median(r[key] for r in runs)
        row["rss_mb"] = max(r["rss_mb"] for r in runs)
        row["cpus"] = [round(r["cpu_s"], 2) for r in runs]
        return row

    # Rounds: each round runs sluice on every worker count, then htsim, so
    # that a machine whose speed drifts weighs on both alike.
    sluice_runs = {w: [] for w in workers}
    htsim_runs = []
    pathfile = None
    for i in range(a.repeat):
        for w in workers:
            d = os.path.join(a.out, "sluice-k%d-w%d-%d" % (a.k, w, i))
            prepare(d, a.k, pairs, a.seed, a.dctcp_cut)
            sluice_runs[w].append(run_sluice(a, d, w))
            print("bench permutation: sluice on %d worker(s), run %d of %d: %.1f CPU s"
                  % (w, i + 1, a.repeat, sluice_runs[w][-1]["cpu_s"]), flush=True)
        if a.same_paths and pathfile is None:
            pathfile = os.path.join(a.out, "paths-k%d-seed%d.txt" % (a.k, a.seed))
            with open(pathfile, "w") as f:
                f.write("# src dst tor_up agg_up: the uplinks sluice's ECMP takes each flow by\n")
                f.writelines("%d %d %d %d\n" % (pr + c)
                             for pr, c in zip(pairs, sluice_runs[workers[0]][0]["choices"]))
        if a.htsim:
            htsim_runs.append(htsim_run.run(
                a.htsim, perm, os.path.join(a.out, "htsim-k%d-%d" % (a.k, i)),
                timeout=3600, k=a.k, speed_gbps=100.0, delay_us=1.0, mtu=MTU,
                queue_packets=QUEUE_PACKETS, ecn_k_packets=K_PACKETS,
                ssthresh_packets=a.htsim_ssthresh, end_ms=a.ms, seed=a.seed, pathfile=pathfile))
            if htsim_runs[-1]["pairs"] != pairs:
                raise cli.ToolError("htsim's flows are not the permutation's")
            if pathfile and htsim_runs[-1].get("choices") != sluice_runs[workers[0]][0]["choices"]:
                raise cli.ToolError("htsim did not take the paths of %s" % pathfile)
            htsim_runs[-1]["who"] = "htsim"
            print("bench permutation: htsim, run %d of %d: %.1f CPU s"
                  % (i + 1, a.repeat, htsim_runs[-1]["cpu_s"]), flush=True)
    rows = [median_row(sluice_runs[w]) for w in workers]
    first = rows[0]
    for r in rows[1:]:
        if r["digests"] != first["digests"]:
            raise cli.ToolError("sluice on %s and on %s differ: %s vs %s"
                                % (first["who"], r["who"], first["digests"], r["digests"]))
    if a.htsim:
        rows.append(median_row(htsim_runs))
    ref = rows[-1] if a.htsim else None
    lines = ["k = %d, %d hosts, %g ms of fabric time, seed %d%s"
             % (a.k, hosts, a.ms, a.seed, ", sluice's DCTCP cutting every window (htsim's rule)"
                if a.dctcp_cut == "every_window" else ""), "",
             "| run | CPU s | vs htsim | transmissions | M per CPU s | goodput GB | "
             "vs htsim | per-flow MB min / p10 / median / p90 / max | peak RSS MB |",
             "|---|---:|---:|---:|---:|---:|---:|---|---:|"]
    for r in rows:
        lines.append("| %s | %.2f | %s | %.2f M | %.2f | %.3f | %s | %s | %.0f |" % (
            r["who"], r["cpu_s"],
            "%.2fx" % (r["cpu_s"] / ref["cpu_s"]) if ref and r is not ref else "-",
            r["transmissions"] / 1e6, r["transmissions"] / r["cpu_s"] / 1e6,
            r["goodput_bytes"] / 1e9,
            "%+.1f %%" % (100 * (r["goodput_bytes"] / ref["goodput_bytes"] - 1))
            if ref and r is not ref else "-",
            spread(r["per_flow_bytes"]), r["rss_mb"]))
    lines += ["", "Per-flow goodput against the max-min fair share of the paths each took "
              "(x = bytes / share)%s:" % (" (htsim given sluice's paths)" if pathfile else ""), "",
              "| run | links shared | most flows on a link | fair share min / median | "
              "x min / x median | Jain's index of x |", "|---|---:|---:|---|---:|---:|"]
    for r in rows:
        if "choices" not in r:
            lines.append("| %s | - | - | - | - | - |" % r["who"])
            continue
        shared, most, lo, mid, xlow, jain = fairness(a.k, pairs, r["choices"], r["per_flow_bytes"])
        lines.append("| %s | %d | %d | %.3f / %.3f | %s | %s |"
                     % (r["who"], shared, most, lo, mid, "-" if xlow is None else "%.2f" % xlow,
                        "-" if jain is None else "%.3f" % jain))
    if pathfile:
        ratio = [h / s if s else float("inf")
                 for h, s in zip(rows[-1]["per_flow_bytes"], first["per_flow_bytes"])]
        lines += ["", "The same flows on the same paths, htsim's bytes over sluice's, per flow: "
                  "min / p10 / median / p90 / max " + " / ".join(
                      "%.2f" % q for q in quantiles(ratio))]
    if len(workers) > 1:
        lines.append("")
        lines.append("sluice's runs on %s workers: identical captures, completions and summary"
                     % ", ".join(map(str, workers)))
    if a.queues:
        samples = int(a.ms * 1000 // a.queues)
        who = [("sluice", occupancy(*sluice_queues(
            a, os.path.join(a.out, "sluice-k%d-queues" % a.k), pairs, a.queues), samples))]
        if a.htsim:
            who.append(("htsim", occupancy(*htsim_queues(a, perm, a.queues, pathfile), samples)))
        lines += ["", "Switch queues every %g us (%d samples): mean KB / share not empty / "
                  "p99 KB / max KB" % (a.queues, samples), "",
                  "| tier | " + " | ".join(w for w, _ in who) + " |",
                  "|---|" + "---|" * len(who)]
        for name, _, _ in TIERS:
            cells = []
            for _, occ in who:
                m = occ.get(name)
                cells.append("%.1f / %.0f %% / %.1f / %.1f" % (m[0] / 1e3, 100 * m[1],
                                                               m[2] / 1e3, m[3] / 1e3)
                             if m else "-")
            lines.append("| %s | %s |" % (name, " | ".join(cells)))
    print("\n".join(lines))
    with open(os.path.join(a.out, "table.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(os.path.join(a.out, "permutation.json"), "w") as f:
        json.dump({"time": time.strftime("%Y-%m-%d %H:%M:%S"), "k": a.k, "ms": a.ms,
                   "rows": [{k: v for k, v in r.items() if k != "cmd"} for r in rows]}, f,
                  indent=1)
    provenance.write(a.out, seeds=[a.seed], binaries=[a.sluice] + ([a.htsim] if a.htsim else []))
    return 0
