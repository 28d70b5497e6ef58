"""tools/reproduce floodgate: Floodgate's incast-mix simulation (Liu et al.,
"Floodgate: Taming Incast in Datacenter Networks", sections 5.1-5.2) in
exact fabric time, with the transports at the hosts.

    tools/reproduce floodgate [--cdf websearch|hadoop] [--seeds 1]
        [--poisson-ms 2] [--drain-ms 20] [--schemes dcqcn,dcqcn+fg,...]
        [--ports floodgate-ns3|switch] [--incast-packets 30-40]
        [--out runs/reproduce/floodgate]
    tools/reproduce floodgate [--cdf ...] [--seeds 1] --ns3-flows --out DIR
    tools/reproduce floodgate --report-only [--seeds 1] --out DIR
        --ns3-run dcqcn=NS3_OUT/dcqcn [--ns3-run dcqcn+fg=...]

The scenario is the one the authors' public ns-3 code builds (mix/README.md
"Incastmix" and scratch/third.cc of NASA-NJU/Floodgate-NS3, read for the
facts): conf/fabrics/floodgate-10tor-4core.yaml (160 hosts, 10 ToRs, 4
cores, 100 Gb/s hosts, 400 Gb/s ToR-core links, 600 ns links, 20 MiB per
switch); Poisson flows at --load 0.8 of each host's link (payload bytes,
their lambda), each to a host under another ToR chosen uniformly, sizes from
--cdf, arriving from 30 us on; one incast of --incast-flows 720 flows from
hosts under other ToRs to the first host of the first ToR at 100-200 ns,
each 30-40 packets of 1460 bytes (their INCAST_CDF 9: 3-4 x the host's
bytes per second / 1.25e9, at 100 Gb/s; --incast-packets), incast i at i x the period that
gives --incast-load 0.5 of the receiver's link (5.9 ms) to the first host
of ToR i, as many as the Poisson arrivals span (at least one); Poisson flows from or to an incast receiver
are dropped, as theirs are. Schemes: DCQCN, DCTCP and HPCC, each over PFC
without and with Floodgate. PFC and ECN are set per port by link rate as
theirs (--ports floodgate-ns3, tools/sluicepy/pfc_profiles.py): a dynamic
threshold of alpha 1/4 on 100 Gb/s ports and 1 on 400 Gb/s ones, headroom
8 x rate x delay, a 4 KiB reserve, a 3 KiB resume offset; every queue pair with their one-BDP window and no timeout (their
HAS_WIN 1 and RTO_us 0); DCQCN with their reaction point and their window
that follows the rate (--dcqcn ns3, the default; --dcqcn paper: the DCQCN
paper's timers and a fixed window); DCTCP is sluice's TCP DCTCP (theirs is a
rate-based RDMA DCTCP) with an initial window of one BDP. Floodgate is
sluice's defaults, the authors' mix/floodgate-config (a window of 1.5
BDP + 10 us, a credit per 10 KiB or 10 us). RED marking for DCQCN and
DCTCP between 400 KB and 1,600 KB on 100 Gb/s ports and 1,600 KB and
6,400 KB on 400 Gb/s ones, pmax 0.2.

Reports, beside the paper's direction (its copy holds no numbers): mean and
p99 FCT (and slowdown) of the Poisson flows, every one counted (unfinished
ones to the end of the run: figures with any are lower bounds); the incast
flows' completion; the maximum buffer per tier, sampled every
--trace-interval: ToR-up (a ToR's shared buffer less its host ports' queues:
its uplink queues and Floodgate's VOQs), core (a core switch's shared
buffer) and ToR-down (a ToR's host ports' queues), and the incast
receiver's port alone; and the share of time
ports were paused by PFC. Scaled: --poisson-ms of arrivals (theirs: 50,000
flows).

Beside their ns-3 on the same flows (floodgate_ns3.py): --ns3-flows writes
each seed's flow list as their flow file (seedN/workload/ns3-flows.txt, for
their FLOW_FROM_FILE 1 and FLOW_FILE) and runs nothing; --ns3-run
SCHEME=DIR/PREFIX, with --report-only, reads a run of theirs (PREFIX-fct.txt,
PREFIX-pfc.txt, PREFIX-buffer<i>.log) for the first seed and prints its
figures beside sluice's run of SCHEME, into ns3.json too.
"""

import argparse
import csv
import json
import os
import random
import shutil

import yaml

from .. import cli, counters, experiment as exp, fct_analysis, pfc_profiles, provenance
from .. import queue_trace, sluice
from .. import spread, workload_gen
from . import floodgate_ns3
from ..cdf import FlowSizeCdf
from ..fct_analysis import nearest_rank as percentile
from ..hosts import hosts_from_config
from .. import units
from ..units import format_ns, parse_time, seconds_to_ns

ROOT = sluice.ROOT
FABRIC = os.path.join(ROOT, "conf", "fabrics", "floodgate-10tor-4core.yaml")
CDFS = {"websearch": "websearch.cdf", "hadoop": "fb_hadoop.cdf"}
HOSTS_PER_TOR = 16
HOST_RATE_BPS = 100e9
PAYLOAD = 1460  # their PACKET_PAYLOAD_SIZE; sluice's mss
# host - ToR - core - ToR - host: 8 x 600 ns of propagation and a data frame's
# serialisation on two 100 and two 400 Gb/s links (about 0.33 us).
BASE_RTT = "5.2us"
BDP_SEGMENTS = 45  # 100 Gb/s x 5.2 us / 1460 B (DCTCP's initial window)
# Their hosts never time out (RTO_us 0): PFC loses nothing, and a 500 us
# timer would fire behind the incast's milliseconds of paused queues and
# resend whole windows. TCP keeps a timer, far above any queueing here.
NO_TIMEOUT = ["rdma.timeout=0"]
# Their queue pairs' window (HAS_WIN 1, GLOBAL_T 1): the largest BDP, here
# 100 Gb/s x 5.2 us (HPCC keeps its own window, which starts there).
BDP_BYTES = 65_000
# DCQCN: their steps, minimum, F and clamp (mix/config-dcqcn.ini).
DCQCN_PARAMS = NO_TIMEOUT + [
    f"rdma.window={BDP_BYTES}B", "dcqcn.rate_ai=50Mbps", "dcqcn.rate_hai=100Mbps", "dcqcn.min_rate=100Mbps",
    "dcqcn.fast_recovery_stages=1", "dcqcn.clamp_target_rate=false"]
# --dcqcn ns3 (the default) adds their reaction point ("Mellanox's
# version": alpha every 1 us, a cut at most every 4 us, increases by a
# 900 us timer alone), a CNP per microsecond of marks (theirs is a flag on
# every ACK of marked data, read by each 1 us alpha update) and the window
# that follows the rate (VAR_WIN 1). --dcqcn paper keeps the DCQCN paper's
# timers and a fixed window.
DCQCN_NS3 = ["dcqcn.rules=ns3-mlx", "dcqcn.alpha_interval=1us", "dcqcn.decrease_interval=4us",
             "dcqcn.rate_timer=900us", "rdma.cnp_interval=1us", "rdma.window_follows_rate=true"]
DCTCP_PARAMS = [f"tcp.init_cwnd={BDP_SEGMENTS}", "tcp.min_rto=100ms"]
SCHEMES = (
    # label, tools/experiment scheme, transport, transport params
    ("DCQCN", "pfc", "dcqcn", DCQCN_PARAMS),
    ("DCQCN+FG", "floodgate+pfc", "dcqcn", DCQCN_PARAMS),
    ("DCTCP", "pfc", "dctcp", DCTCP_PARAMS),
    ("DCTCP+FG", "floodgate+pfc", "dctcp", DCTCP_PARAMS),
    ("HPCC", "pfc", "hpcc", NO_TIMEOUT),
    ("HPCC+FG", "floodgate+pfc", "hpcc", NO_TIMEOUT),
)
PAPER = ("Floodgate section 5.1: the Poisson flows' mean and p99 FCT fall with Floodgate; "
         "5.2.1: the core and ToR-down maximum buffers fall, ToR-up rises slightly")


def parse_args(argv):
    p = argparse.ArgumentParser(prog="tools/reproduce floodgate", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="\n".join(__doc__.split("\n")[2:]))
    p.add_argument("--cdf", choices=tuple(CDFS), default="websearch",
                   help="flow sizes of the Poisson flows (websearch: their FLOW_CDF 8)")
    p.add_argument("--load", type=float, default=0.8, help="Poisson load per host (0.8)")
    p.add_argument("--incast-flows", type=int, default=720, help="flows per incast (720)")
    p.add_argument("--incast-packets", default="30-40",
                   help="packets of 1,460 bytes per incast flow, LO-HI, drawn uniformly (30-40, "
                        "their INCAST_CDF 9; 240-320 gives the incast 8 times theirs on which "
                        "their ns-3 was run, docs/mechanisms/floodgate-incast.md)")
    p.add_argument("--incast-load", type=float, default=0.5,
                   help="incast load on the receiver's link, sets the period (0.5)")
    p.add_argument("--poisson-ms", type=float, default=2.0, help="ms of Poisson arrivals (2)")
    p.add_argument("--drain-ms", type=float, default=20.0,
                   help="ms the run goes on after the last arrival (20)")
    p.add_argument("--seeds", default="1", help="comma-separated seeds (1)")
    p.add_argument("--path-seed", type=int, default=None,
                   help="the switches' seed (each switch's ECMP salt, RED's coin) apart from the "
                        "flows' seed, to see what the path draw alone changes (default: each "
                        "run's flow seed)")
    p.add_argument("--schemes", default="",
                   help="some of " + ",".join(s[0].lower() for s in SCHEMES) + " (all)")
    p.add_argument("--trace-interval", default="20us", help="buffer sampling period (20us)")
    p.add_argument("--ports", choices=("floodgate-ns3", "switch"), default="floodgate-ns3",
                   help="PFC and ECN per port by link rate as the authors' ns-3 sets them "
                        "(floodgate-ns3, the default), or one PFC alpha of 1/4 and the 100 Gb/s "
                        "ECN on every port with nothing set aside (switch)")
    p.add_argument("--dcqcn", choices=("ns3", "paper"), default="ns3",
                   help="DCQCN's reaction point and window: their ns-3's (ns3, the default: "
                        "dcqcn.rules ns3-mlx with their clocks, the window following the rate) "
                        "or the DCQCN paper's timers with a fixed window (paper)")
    p.add_argument("--ecmp", choices=("per-switch", "symmetric", "ns3"), default="per-switch",
                   help="the switches' ecmp_hash (docs/configuration.md): per-switch (the "
                        "default), symmetric (ACKs retrace their data's path), or ns3: as the "
                        "authors' configurations route, symmetric without Floodgate "
                        "(SYMMETRIC_ROUTING_MODE 1) and per-switch with it (0)")
    p.add_argument("--report-only", action="store_true",
                   help="run nothing: print the table of the runs already in --out")
    p.add_argument("--ns3-flows", action="store_true",
                   help="write each seed's flows as the authors' ns-3 flow file "
                        "(seedN/workload/ns3-flows.txt) and run nothing")
    p.add_argument("--ns3-run", action="append", default=[], metavar="SCHEME=DIR/PREFIX",
                   help="with --report-only: a run of the authors' ns-3 on the first seed's "
                        "flows, set beside sluice's SCHEME run (repeatable)")
    p.add_argument("--out", default=os.path.join(ROOT, "runs", "reproduce", "floodgate"))
    p.add_argument("--sluice", default=os.path.join(ROOT, "build", "switch", "sluice"))
    a = p.parse_args(argv)
    a.seeds = [int(s) for s in a.seeds.split(",") if s.strip()]
    lo, _, hi = a.incast_packets.partition("-")
    try:
        a.incast_packets = (int(lo), int(hi or lo))
    except ValueError:
        p.error(f"--incast-packets {a.incast_packets!r}: expected LO-HI, e.g. 30-40")
    if not 0 < a.incast_packets[0] <= a.incast_packets[1]:
        p.error("--incast-packets: LO-HI with 0 < LO <= HI")
    a.schemes = [s.strip().lower() for s in a.schemes.split(",") if s.strip()]
    known = {s[0].lower() for s in SCHEMES}
    peers = []
    for item in a.ns3_run:
        label, eq, prefix = item.partition("=")
        if not eq or label.strip().lower() not in known or not prefix:
            p.error(f"--ns3-run {item!r}: expected SCHEME=DIR/PREFIX with SCHEME one of "
                    f"{', '.join(sorted(known))}")
        peers.append((label.strip().lower(), os.path.abspath(prefix)))
    a.ns3_run = peers
    if peers and not a.report_only:
        p.error("--ns3-run reads runs already made: give it with --report-only")
    if a.ns3_flows and a.report_only:
        p.error("--ns3-flows writes flow files; --report-only runs nothing: give one")
    for s in a.schemes:
        if s not in known:
            p.error(f"unknown scheme {s!r}; known: {', '.join(sorted(known))}")
    if a.path_seed is not None and not 0 <= a.path_seed < 2**32:
        p.error("--path-seed in 0..4294967295")
    if not 0 < a.load < 1 or a.incast_flows < 0 or not 0 < a.incast_load <= 1:
        p.error("--load in (0, 1), --incast-flows >= 0, --incast-load in (0, 1]")
    a.sluice = os.path.abspath(a.sluice)
    a.out = os.path.abspath(a.out)
    return a


def make_flows(path, a, seed):
    """The authors' incast-mix flow list (see the module's docstring);
    returns (Poisson flows, incast flows, incast period ns)."""
    hosts = hosts_from_config(FABRIC)
    cdf = FlowSizeCdf.from_file(os.path.join(ROOT, "conf", "workloads", CDFS[a.cdf]))
    rng = random.Random(f"{seed}/floodgate-mix")
    tors = len(hosts) // HOSTS_PER_TOR
    lo, hi = a.incast_packets
    incast_size_mean = (lo + hi) / 2 * PAYLOAD
    period_ns = round(incast_size_mean * a.incast_flows * 8 / (HOST_RATE_BPS * a.incast_load) * 1e9)
    incasts = max(1, int(seconds_to_ns(a.poisson_ms / 1e3) // period_ns)) if a.incast_flows else 0
    receivers = {(i % tors) * HOSTS_PER_TOR for i in range(incasts)}
    rows = []
    for i in range(incasts):
        dst = (i % tors) * HOSTS_PER_TOR
        for _ in range(a.incast_flows):
            src = rng.choice([h for h in range(len(hosts))
                              if h // HOSTS_PER_TOR != dst // HOSTS_PER_TOR])
            t = 100 + rng.randrange(100) + i * period_ns
            rows.append((t, src, dst, rng.randint(lo, hi) * PAYLOAD, 1))
    rate = a.load * HOST_RATE_BPS / 8 / cdf.expectation(lambda s: s)  # flows/s per host
    end_ns = 30_000 + seconds_to_ns(a.poisson_ms / 1e3)
    for h in range(len(hosts)):
        if h in receivers:
            continue
        hr = random.Random(f"{seed}/floodgate-mix/{h}")
        t = 30_000 + hr.expovariate(rate) * 1e9
        while t < end_ns:
            dst = hr.choice([d for d in range(len(hosts))
                             if d // HOSTS_PER_TOR != h // HOSTS_PER_TOR and d not in receivers])
            rows.append((round(t), h, dst, cdf.size_at(hr.random()), 0))
            t += hr.expovariate(rate) * 1e9
    rows.sort()
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(workload_gen.FLOW_FIELDS)
        for i, (t, s, d, size, inc) in enumerate(rows):
            hs, hd = hosts[s], hosts[d]
            w.writerow([i + 1, hs.name, hd.name, hs.ip, hd.ip, size, -(-size // PAYLOAD),
                        format_ns(t), format_ns(t), format_ns(t), inc])
    return (sum(1 for r in rows if not r[4]), sum(1 for r in rows if r[4]), period_ns)


# Their ECN (mix/config-*.ini KMIN_MAP, KMAX_MAP, PMAX_MAP; KB = 1000 bytes)
# by link rate, for the transports that react to marks.
ECN_BY_RATE = {100 * 10**9: ("400KB", "1600KB", 0.2), 400 * 10**9: ("1600KB", "6400KB", 0.2)}


def configure(fabric, exp, scheme, transport, params, seed, flows, ports="floodgate-ns3"):
    argv = ["--config", "x", "--schemes", scheme, "--workload", "w", "--out", "o",
            "--clock", "exact", "--seed", str(seed), "--transport", transport,
            "--base-rtt", BASE_RTT, "--transport-param", f"mss={PAYLOAD}"]
    for p_ in params:
        argv += ["--transport-param", p_]
    args = exp.parse_args(argv)
    conf = exp.apply_scheme(fabric, scheme, args)
    conf["transport"]["flows"] = flows
    for sw in conf["switches"]:
        # Their PFC and ECN are per port, by link rate (ports "floodgate-ns3":
        # PFC alpha 1/4 on 100 Gb/s ports and 1 on 400 Gb/s ones, headroom
        # 8 x rate x delay, 4 KiB reserve, 3 KiB resume offset, ECN_BY_RATE);
        # "switch": alpha 1/4 and the 100 Gb/s marking on every port,
        # nothing set aside.
        sw["pfc"] = {"mode": "pfc", "xoff": "dynamic", "alpha": 0.25}
        if transport in ("dcqcn", "dctcp"):
            sw["ecn"] = {"mode": "red", "min": "400KB", "max": "1600KB", "pmax": 0.2}
            for port in sw["ports"] if ports == "floodgate-ns3" else []:
                kmin, kmax, pmax = ECN_BY_RATE[units.parse_rate(port["rate"])]
                if kmin != "400KB":
                    port["ecn"] = {"mode": "red", "min": kmin, "max": kmax, "pmax": pmax}
        # Lossless as theirs: their egress has no dynamic threshold (alpha
        # 1000 stands for none), and one deep queue per port so a queue of
        # ACKs, many frames in few bytes, never fills a ring first.
        sw["queues_per_port"] = 1
        sw["queue_capacity"] = 1 << 17
        sw["buffer"] = dict(sw.get("buffer") or {}, alpha=1000.0)
        for port in sw["ports"]:
            # 1460-byte payload + SLT1, UDP and IP headers + HPCC's INT room.
            port["mtu"] = 1600
            if port.get("role") == "host":
                port["pcap"] = {}
    return pfc_profiles.apply(conf, "floodgate-ns3" if ports == "floodgate-ns3" else "switch")


def ecmp_hash(choice, scheme):
    """The configuration's ecmp_hash for --ecmp CHOICE and a scheme."""
    if choice == "ns3":
        return "per-switch" if scheme.startswith("floodgate") else "symmetric"
    return choice


def tiers(fabric):
    """{switch: "tor"|"core"} and {tor: [host port names]}."""
    kind, host_ports = {}, {}
    for sw in fabric["switches"]:
        hp = [p["name"] for p in sw["ports"] if p.get("role") == "host"]
        kind[sw["name"]] = "tor" if hp else "core"
        if hp:
            host_ports[sw["name"]] = set(hp)
    return kind, host_ports


def tier_buffers(trace_path, fabric):
    """Maximum over time and switches of each tier's bytes (see the
    docstring), and the time of each maximum."""
    kind, host_ports = tiers(fabric)
    buffer, _, ports = queue_trace.read_queue_trace(trace_path)
    down = {}  # (tor, t) -> bytes in host-port queues
    for (sw, port), samples in ports.items():
        if sw in host_ports and port in host_ports[sw]:
            for t, b, _, _ in samples:
                down[(sw, t)] = down.get((sw, t), 0) + b
    best = {"tor_up": (0, 0.0), "core": (0, 0.0), "tor_down": (0, 0.0), "receiver": (0, 0.0)}
    # The first incast's receiver: the first host port of the first ToR.
    first_tor = next(sw for sw in fabric["switches"] if sw["name"] in host_ports)
    receiver = (first_tor["name"],
                next(p["name"] for p in first_tor["ports"] if p.get("role") == "host"))
    for t, b, _, _ in ports.get(receiver, []):
        if b > best["receiver"][0]:
            best["receiver"] = (b, t)

    def keep(tier, b, t):
        if b > best[tier][0]:
            best[tier] = (b, t)
    for sw, samples in buffer.items():
        for t, b in samples:
            if kind.get(sw) == "core":
                keep("core", b, t)
            else:
                d = down.get((sw, t), 0)
                keep("tor_down", d, t)
                keep("tor_up", max(0, b - d), t)
    return best


def run(a):
    with open(FABRIC) as f:
        fabric = yaml.safe_load(f)
    interval_s = parse_time(a.trace_interval)
    if not a.ns3_flows:
        sluice.expect_runs(len(a.seeds) * sum(1 for label, _, _, _ in SCHEMES
                                              if not a.schemes or label.lower() in a.schemes))
    for seed in a.seeds:
        wl = os.path.join(a.out, f"seed{seed}", "workload")
        os.makedirs(wl, exist_ok=True)
        flows = os.path.join(wl, "flows.csv")
        n_poisson, n_incast, period = make_flows(flows, a, seed)
        print(f"reproduce: seed {seed}: {n_poisson} Poisson flows ({a.cdf}, load {a.load}), "
              f"{n_incast} incast flows; incast period {period / 1e6:.1f} ms", flush=True)
        if a.ns3_flows:
            path = os.path.join(wl, "ns3-flows.txt")
            floodgate_ns3.write_flow_file(flows, path)
            print(f"reproduce: wrote {path} (their FLOW_FILE, flows from {floodgate_ns3.START_NS / 1e9:g} s)")
            continue
        for label, scheme, transport, params in SCHEMES:
            if a.schemes and label.lower() not in a.schemes:
                continue
            d = os.path.join(a.out, f"seed{seed}", label.lower())
            shutil.rmtree(d, ignore_errors=True)
            os.makedirs(d)
            if transport == "dcqcn" and a.dcqcn == "ns3":
                params = params + DCQCN_NS3
            path_seed = seed if a.path_seed is None else a.path_seed
            conf = configure(fabric, exp, scheme, transport, params, path_seed, flows, a.ports)
            hashing = ecmp_hash(a.ecmp, scheme)
            if hashing != "per-switch":  # the default: configurations stay as they were
                conf["ecmp_hash"] = hashing
            with open(os.path.join(d, "sluice.yaml"), "w") as f:
                yaml.safe_dump(conf, f, sort_keys=False)
            seconds = sluice.REPLAY_LEAD_S + (a.poisson_ms + a.drain_ms) / 1e3
            trace = ["--queue-trace", "qt.csv", "--queue-trace-interval", "%.9f" % interval_s,
                     "--queue-trace-max-rows", "20000000"]
            run = sluice.run(a.sluice, d, seconds,
                             prefix=f"reproduce-{os.getpid()}-{label.replace('+', '')}", extra=trace)
            row = measure(a, seed, label, d, run.summary, fabric, run.wall_s, run.rss_mb)
            row["cpu_s"] = run.cpu_s
            row["path_seed"] = path_seed
            row["ecmp_hash"] = hashing
            with open(os.path.join(d, "row.json"), "w") as f:
                json.dump(row, f, indent=2)
            os.remove(os.path.join(d, "qt.csv"))
    if a.ns3_flows:
        return 0
    write_results(a, collect(a))
    provenance.write(a.out, seeds=a.seeds, configs=[FABRIC],
                     inputs=[os.path.join(ROOT, "conf", "workloads", CDFS[a.cdf])],
                     binaries=[a.sluice])
    return 0


def collect(a):
    """The rows of every run in --out for the seeds asked (each run keeps
    its own row.json, so schemes run apart make one table)."""
    rows = []
    for seed in a.seeds:
        for label, _, _, _ in SCHEMES:
            path = os.path.join(a.out, f"seed{seed}", label.lower(), "row.json")
            if os.path.exists(path) and (not a.schemes or label.lower() in a.schemes):
                rows.append(cli.load_json(path, "a floodgate run's row"))
    return rows


def measure(a, seed, label, d, summary, fabric, wall, rss):
    results, _ = fct_analysis.results_from_completions(os.path.join(d, "completions.csv"))
    poisson = [r for r in results if not r.spec.is_incast]
    incast = [r for r in results if r.spec.is_incast]
    fct_us = [r.fct_ns / 1e3 for r in poisson]
    slow = [r.slowdown for r in poisson]
    best = tier_buffers(os.path.join(d, "qt.csv"), fabric)
    drops = counters.drop_reasons(summary)
    inc_done = [r for r in incast if r.finished]
    row = {"seed": seed, "scheme": label, "cdf": a.cdf,
           "poisson_flows": len(poisson), "poisson_unfinished": sum(1 for r in poisson if not r.finished),
           "incast_flows": len(incast), "incast_unfinished": len(incast) - len(inc_done),
           "fct_mean_us": sum(fct_us) / len(fct_us) if fct_us else 0,
           "fct_p99_us": percentile(fct_us, 99) if fct_us else 0,
           "slowdown_mean": sum(slow) / len(slow) if slow else 0,
           "slowdown_p99": percentile(slow, 99) if slow else 0,
           "incast_last_finish_ms": (max(r.finish_ns for r in inc_done) / 1e6 if inc_done else 0),
           "max_tor_up_kb": best["tor_up"][0] / 1e3, "max_core_kb": best["core"][0] / 1e3,
           "max_tor_down_kb": best["tor_down"][0] / 1e3,
           "max_receiver_port_kb": best["receiver"][0] / 1e3,
           # When each maximum was sampled (the trace's seconds, the flows'
           # clock), to set a run beside one that stopped early.
           "max_at_s": {tier: best[tier][1] for tier in best},
           "paused_pct": counters.paused_pct(summary),
           "pfc_paused_ms": counters.total(summary, "pfc_paused_ns") / 1e6,
           "pfc_frames_sent": counters.total(summary, "pfc_frames_sent"),
           "drops": drops, "transmissions": summary["clock"]["transmissions"],
           "wall_s": wall, "rss_mb": rss}
    print(f"reproduce: seed {seed} {label}: Poisson FCT mean {row['fct_mean_us']:.1f} us, "
          f"p99 {row['fct_p99_us']:.1f} us ({row['poisson_unfinished']} unfinished); max buffer "
          f"ToR-up/core/ToR-down {row['max_tor_up_kb']:.0f}/{row['max_core_kb']:.0f}/"
          f"{row['max_tor_down_kb']:.0f} KB; paused {row['paused_pct']:.3f} %; drops {drops}; "
          f"wall {wall:.0f} s, {rss:.0f} MB", flush=True)
    return row


def write_results(a, rows):
    print()
    print("| seed | scheme | Poisson flows (unfinished) | FCT mean / p99 us | slowdown mean / p99 "
          "| incast flows (unfinished), last done ms | max KB ToR-up / core / ToR-down "
          "| ports paused | drops | wall s (CPU s) | RSS MB |")
    print("|---|---|---|---|---|---|---|---:|---:|---:|---:|")
    for r in rows:
        lb = "≥ " if r["poisson_unfinished"] else ""
        print(f"| {r['seed']} | {r['scheme']} | {r['poisson_flows']} ({r['poisson_unfinished']}) | "
              f"{lb}{r['fct_mean_us']:.1f} / {lb}{r['fct_p99_us']:.1f} | "
              f"{lb}{r['slowdown_mean']:.2f} / {lb}{r['slowdown_p99']:.2f} | "
              f"{r['incast_flows']} ({r['incast_unfinished']}), {r['incast_last_finish_ms']:.2f} | "
              f"{r['max_tor_up_kb']:.0f} / {r['max_core_kb']:.0f} / {r['max_tor_down_kb']:.0f} | "
              f"{r['paused_pct']:.3f} % | {sum(r['drops'].values())} | {r['wall_s']:.0f} "
              f"({r.get('cpu_s', float('nan')):.0f}) | "
              f"{r['rss_mb']:.0f} |")
    by = {(r["seed"], r["scheme"]): r for r in rows}
    over_seeds = {}
    for (seed, label), r in sorted(by.items()):
        if label.endswith("+FG") or (seed, label + "+FG") not in by:
            continue
        f = by[(seed, label + "+FG")]
        print(f"seed {seed} {label} -> {label}+FG: FCT mean x{f['fct_mean_us'] / r['fct_mean_us']:.2f}, "
              f"p99 x{f['fct_p99_us'] / r['fct_p99_us']:.2f}; max buffer ToR-up "
              f"{r['max_tor_up_kb']:.0f} -> {f['max_tor_up_kb']:.0f}, core {r['max_core_kb']:.0f} -> "
              f"{f['max_core_kb']:.0f}, ToR-down {r['max_tor_down_kb']:.0f} -> "
              f"{f['max_tor_down_kb']:.0f} KB")
        o = over_seeds.setdefault(label, {"seeds": [], "mean": [], "p99": []})
        o["seeds"].append(seed)
        o["mean"].append(f["fct_mean_us"] / r["fct_mean_us"])
        o["p99"].append(f["fct_p99_us"] / r["fct_p99_us"])
    for label, o in over_seeds.items():
        if len(o["seeds"]) > 1:
            print(f"seeds {','.join(map(str, o['seeds']))} {label} -> {label}+FG, mean (min-max): "
                  f"FCT mean x{spread.text(o['mean'], '%.2f')}, p99 x{spread.text(o['p99'], '%.2f')}")
    print("(" + PAPER + ")")
    if rows:
        plot(a, rows)
    with open(os.path.join(a.out, "results.json"), "w") as f:
        json.dump({"rows": rows, "args": vars(a), "paper": PAPER}, f, indent=2, default=str)


def compare_ns3(a):
    """Their runs (--ns3-run) on the first seed's flows beside sluice's."""
    seed = a.seeds[0]
    flows = os.path.join(a.out, f"seed{seed}", "workload", "flows.csv")
    if not os.path.exists(flows):
        raise cli.ToolError(f"{flows}: no flow list for seed {seed} in --out")
    with open(FABRIC) as f:
        kind, _ = tiers(yaml.safe_load(f))
    tors = sum(1 for k in kind.values() if k == "tor")
    cores = len(kind) - tors
    out = {}
    for label, prefix in a.ns3_run:
        row = os.path.join(a.out, f"seed{seed}", label, "row.json")
        if not os.path.exists(row):
            raise cli.ToolError(f"{row}: no sluice run of {label} for seed {seed} in --out")
        ours = cli.load_json(row, "a floodgate run's row")
        try:
            theirs = floodgate_ns3.read_run(flows, prefix, tors, cores, HOSTS_PER_TOR)
        except (OSError, ValueError) as e:
            raise cli.ToolError(f"--ns3-run {label}={prefix}: {e}")
        print()
        print("\n".join(floodgate_ns3.table(f"{ours['scheme']}, seed {seed}", theirs, ours)))
        out[label] = {"ns3": theirs, "ns3_prefix": prefix, "sluice": ours}
    with open(os.path.join(a.out, "ns3.json"), "w") as f:
        json.dump(out, f, indent=2)


def plot(a, rows):
    """floodgate_mix.png: per scheme, the Poisson flows' mean and p99 FCT
    (the paper's section 5.1 figure) and each tier's maximum buffer
    (section 5.2.1)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    seed = rows[0]["seed"]
    rs = [r for r in rows if r["seed"] == seed]
    names = [r["scheme"] for r in rs]
    x = range(len(rs))
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    w = 0.4
    ax1.bar([i - w / 2 for i in x], [r["fct_mean_us"] / 1e3 for r in rs], w, label="mean")
    ax1.bar([i + w / 2 for i in x], [r["fct_p99_us"] / 1e3 for r in rs], w, label="p99")
    ax1.set_ylabel("Poisson flows' FCT (ms)")
    ax1.set_title(f"FCT, {a.cdf}, seed {seed} (unfinished flows to the end: lower bounds)",
                  fontsize=9)
    w = 0.27
    for k, (key, label) in enumerate((("max_tor_up_kb", "ToR-up"), ("max_core_kb", "core"),
                                      ("max_tor_down_kb", "ToR-down"))):
        ax2.bar([i + (k - 1) * w for i in x], [r[key] / 1e3 for r in rs], w, label=label)
    ax2.set_ylabel("maximum buffer (MB)")
    ax2.set_title("maximum buffer per tier", fontsize=9)
    for ax in (ax1, ax2):
        ax.set_xticks(list(x))
        ax.set_xticklabels(names, rotation=20)
        ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(a.out, "floodgate_mix.png"), dpi=110)
    plt.close(fig)


def main(argv):
    a = parse_args(argv)
    os.makedirs(a.out, exist_ok=True)
    if not os.access(a.sluice, os.X_OK):
        raise cli.ToolError(f"{a.sluice}: not built (ninja -C build)")
    if a.report_only:
        write_results(a, collect(a))
        if a.ns3_run:
            compare_ns3(a)
        return 0
    return run(a)
