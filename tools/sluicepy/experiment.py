"""Runs one workload through a fabric configuration under several schemes and
compares their flow completion times.

    tools/experiment --config conf/leafspine.yaml --schemes droptail,ecn,pfc \\
        --cdf conf/workloads/websearch.cdf --load 0.3 --duration 0.02 --out runs/ws

Steps: tools/workload writes one pcap per host (hosts taken from the
configuration's host ports) into OUT/workload; for each scheme a copy of the
configuration with that scheme applied is written to OUT/<scheme>/, sluice
runs there (its capture ports read workload/ and write capture/), then
tools/fct analyses the captures; finally `tools/fct compare` puts the schemes
side by side in OUT/compare. Everything is bounded in time; see
docs/testbed.md.

Schemes (SCHEMES below): droptail, ecn, pfc, ecn+pfc, the BFC ones (bfc,
bfc-stochastic, bfc-single, bfc-open-loop, bfc+pfc), the Floodgate ones
(floodgate, floodgate+pfc, floodgate-dstpause), dibs and dibs-load-aware
(DIBS with ECN step marking, lossy), tcd+pfc and tcd+bfc (TCD over PFC or
BFC, q_th = --ecn-k), flowtune (edge pacing at the rates of the allocator
in the fabric in exact time, or in real time of a sluice-allocator this
tool starts for the scheme). Each
scheme sets ecn and pfc and turns bfc, floodgate, dibs, tcd and flowtune on
or off in every switch, so no section of the configuration stays on under a
scheme that is not about it.

--transport runs the hosts' transport instead of replaying the workload
open loop (docs/transports.md): none (the default: the workload's captures
replayed, as before), tcp, dctcp, dcqcn, hpcc, timely, bfc-nic or pfabric
(pFabric's hosts; the switches keep their own queues). The hosts
then run each flow of the workload's flows.csv from its arrival, sluice
writes each flow's completion (the ACK of its last byte) to
<scheme>/completions.csv, and tools/fct reads that instead of captures.
--transport-param KEY=VALUE sets any key of the configuration's transport
section (docs/configuration.md "Emulated hosts running transports"), e.g. tcp.min_rto=10ms,
dcqcn.ue_aware=true, base_rtt=8us; hpcc turns on INT in every switch.
Transport hosts run in exact fabric time only.

Each run is checked against the fidelity limits (docs/testbed.md, "Fidelity
gate"). When a run exceeds them the results are still written, marked
"NOT VALID: fidelity limits exceeded", and the tool exits with status 3
unless --allow-unfaithful is given. Status 1 is an error, 2 a usage error.
"""

import argparse
import decimal
import json
import os
import shutil
import sys

import yaml

from . import allocator_proc, cli, counters, fidelity, pfc_profiles, provenance, sluice, units

ROOT = sluice.ROOT

PY = "/usr/bin/python3"
# sluice starts replaying this long after its workers start (kReplayLeadNs
# in switch/main.cc); its --duration counts from the workers' start.
REPLAY_LEAD_S = decimal.Decimal("0.05")

# What each scheme changes in every switch of the configuration, and the NIC
# of every replaying host port ("nic", docs/pcap-ports.md "The host NIC").
# A bfc section already in the configuration (deadlock-avoidance pairs,
# timers) is kept; the scheme turns it on or off and sets the assignment.
# The BFC schemes give the hosts BFC NICs (paper 3.3.2: the sending NIC is
# paused per queue like a switch) with a queue per flow, as an RDMA NIC has
# one per connection, unless the configuration's nic says queue_by;
# bfc-open-loop's hosts honour PAUSE/PFC only, so the first switch cannot
# push back on them.
SCHEMES = {
    "droptail": {"ecn": None, "pfc": None, "bfc": None, "nic": "plain"},
    "ecn": {"ecn": "step", "pfc": None, "bfc": None, "nic": "plain"},
    "pfc": {"ecn": None, "pfc": "pfc", "bfc": None, "nic": "plain"},
    "ecn+pfc": {"ecn": "step", "pfc": "pfc", "bfc": None, "nic": "plain"},
    "bfc": {"ecn": None, "pfc": None, "bfc": "dynamic", "nic": "bfc"},
    "bfc-stochastic": {"ecn": None, "pfc": None, "bfc": "stochastic", "nic": "bfc"},
    "bfc-single": {"ecn": None, "pfc": None, "bfc": "single", "nic": "bfc"},
    "bfc-open-loop": {"ecn": None, "pfc": None, "bfc": "dynamic", "nic": "plain"},
    # BFC between switches, PFC from the first switch toward its hosts.
    "bfc+pfc": {"ecn": None, "pfc": "pfc", "bfc": "dynamic", "nic": "bfc"},
    # Floodgate on every switch (docs/mechanisms/floodgate.md). Its hosts are
    # open loop, as the paper's are toward Floodgate itself (their transport
    # reacts to ECN, not to windows): the backlog waits in the source leaf's
    # VOQs. floodgate-dstpause adds the paper's ideal per-destination pause
    # toward the hosts (section 5.4), which their NICs honour.
    "floodgate": {"ecn": None, "pfc": None, "bfc": None, "nic": "plain", "floodgate": {}},
    "floodgate+pfc": {"ecn": None, "pfc": "pfc", "bfc": None, "nic": "plain", "floodgate": {}},
    "floodgate-dstpause": {"ecn": None, "pfc": None, "bfc": None, "nic": "floodgate",
                           "floodgate": {"dst_pause": True}},
    # DIBS on every switch (docs/mechanisms/dibs.md): a packet buffer
    # admission refuses is detoured out of another switch-facing port. The
    # fabric stays lossy (no PFC, no BFC: sluice refuses DIBS with either)
    # and the switches also mark ECN step at --ecn-k, as the paper's do
    # besides detouring (its hosts run DCTCP-style ECN, K = 20 packets); a
    # detoured ECN-capable packet is marked CE too. dibs uses the paper's
    # random policy, dibs-load-aware the least-loaded admitting port; a
    # max_detours already in the configuration is kept.
    "dibs": {"ecn": "step", "pfc": None, "bfc": None, "nic": "plain",
             "dibs": {"policy": "random"}},
    "dibs-load-aware": {"ecn": "step", "pfc": None, "bfc": None, "nic": "plain",
                        "dibs": {"policy": "load_aware"}},
    # TCD on every switch (docs/mechanisms/tcd.md) over a lossless fabric:
    # PFC as in pfc, or BFC as in bfc (its hosts' BFC NICs included). ECN is
    # step at --ecn-k, which TCD takes as its q_th (unless the configuration's
    # tcd section sets one); TCD replaces the marking at enqueue, marking CE
    # or UE at departure instead.
    "tcd+pfc": {"ecn": "step", "pfc": "pfc", "bfc": None, "nic": "plain", "tcd": {}},
    "tcd+bfc": {"ecn": "step", "pfc": None, "bfc": "dynamic", "nic": "bfc", "tcd": {}},
    # Flowtune (docs/mechanisms/flowtune.md): every switch with host ports
    # paces what its hosts send at the rates of one allocator: in exact time
    # the allocator in the fabric (apply_scheme), in real time a
    # sluice-allocator run_scheme starts for this scheme; nothing else on
    # (sluice refuses flowtune beside floodgate). Its replay hosts are open loop, so a
    # flow's excess over its rate is dropped at the edge (pacer_full).
    "flowtune": {"ecn": None, "pfc": None, "bfc": None, "nic": "plain", "flowtune": {}},
    # Queueing by flow at every egress port (docs/traffic-manager.md,
    # "Queueing by flow"), the baselines BFC and Flowtune compare against:
    # sfq hashes flows over --sfq-queues queues (BFC section 6.2.2's HPCC +
    # SFQ: 32, with PFC as its HPCC runs have: sfq+pfc); ideal-fq gives
    # every flow its own queue and an unlimited buffer (BFC section 6.2's
    # Ideal-FQ, whose NICs cap a flow at one BDP: run it with --transport
    # bfc-nic); sfq-codel adds CoDel to each SFQ queue (Flowtune section
    # 5.3's sfqCoDel), dropping, at --codel-target / --codel-interval.
    "sfq": {"ecn": None, "pfc": None, "bfc": None, "nic": "plain", "queueing": "sfq"},
    "sfq+pfc": {"ecn": None, "pfc": "pfc", "bfc": None, "nic": "plain", "queueing": "sfq"},
    "ideal-fq": {"ecn": None, "pfc": None, "bfc": None, "nic": "plain", "queueing": "ideal-fq"},
    "sfq-codel": {"ecn": None, "pfc": None, "bfc": None, "nic": "plain",
                  "queueing": "sfq-codel"},
    # pFabric's switches (docs/traffic-manager.md, "pFabric's port"): one
    # priority queue per port in a buffer of --pfabric-buffer; its hosts
    # are --transport pfabric (docs/transports.md, "pFabric").
    "pfabric": {"ecn": None, "pfc": None, "bfc": None, "nic": "plain", "queueing": "pfabric"},
}
# Sections that every scheme turns on or off: a section already in the
# configuration (its keys) is kept, the scheme sets enabled and its own keys,
# so a scheme without it runs with it explicitly off.
TOGGLED_SECTIONS = ("floodgate", "dibs", "tcd", "flowtune")
# Where sluice-allocator listens when apply_scheme is not told (sluice's
# own default); run_scheme passes the address of the allocator it started.
DEFAULT_ALLOCATOR = "127.0.0.1:9750"
TRANSPORTS = ("none", "tcp", "dctcp", "dcqcn", "hpcc", "timely", "bfc-nic", "pfabric")


def parse_args(argv):
    p = argparse.ArgumentParser(prog="tools/experiment", description=__doc__.split("\n\n")[0])
    p.add_argument("--config", required=True, help="fabric configuration (capture-file host ports)")
    p.add_argument("--schemes", default="droptail,ecn,pfc",
                   help="comma-separated, from: " + ", ".join(SCHEMES) +
                        " (default %(default)s)")
    p.add_argument("--cdf", help="flow-size CDF (conf/workloads/*.cdf)")
    p.add_argument("--load", type=float,
                   help="average load on host links (required unless --workload; no default)")
    p.add_argument("--duration",
                   help="workload duration in seconds, e.g. 0.02 (required unless --workload; "
                        "no default)")
    p.add_argument("--workload", metavar="DIR",
                   help="use this tools/workload output instead of generating one "
                        "(then --cdf, --load, --duration and options after -- are not used)")
    p.add_argument("--link-rate", default="10Gbps",
                   help="host link rate, for the load and the ideal FCT (default %(default)s)")
    p.add_argument("--workload-snaplen", type=int, default=128,
                   help="bytes of each frame the workload's captures keep (their wire length "
                        "stated; sluice replays full frames): 0 keeps whole frames "
                        "(default %(default)s)")
    p.add_argument("--seed", type=int, default=1,
                   help="seeds the workload and every random choice of the fabric (default %(default)s)")
    p.add_argument("--seeds", default="",
                   help="comma-separated seeds: the whole experiment once per seed (OUT/seed<N>/), "
                        "then OUT/report/ with every figure's median and min-max over the seeds "
                        "(instead of --seed; not with --workload)")
    p.add_argument("--title", default="", help="--seeds: prefix of the report's figure titles")
    p.add_argument("--plot-ms", type=float, default=12.0,
                   help="--seeds with --queue-trace: ms of the buffer plot (default %(default)s)")
    p.add_argument("--ecn-k", default="100KB",
                   help="ECN step threshold for the schemes that mark (ecn, ecn+pfc, dibs, "
                        "dibs-load-aware, tcd+pfc, tcd+bfc; TCD's default q_th)")
    p.add_argument("--sfq-queues", default=32, type=int,
                   help="queues per port of the sfq schemes (default 32, as BFC's HPCC + SFQ)")
    p.add_argument("--codel-target", default="5us",
                   help="sfq-codel's CoDel target (default 5us: RFC 8289's 1:20 of the interval)")
    p.add_argument("--codel-interval", default="100us",
                   help="sfq-codel's CoDel interval (default 100us: about a datacenter's "
                        "longest RTT, where the RFC's 100ms is the Internet's)")
    p.add_argument("--pfabric-buffer", default="36KB",
                   help="the pfabric scheme's buffer per port (default 36KB: 24 frames of 1500 "
                        "bytes, as the DIBS paper's comparison sets it, section 5.8)")
    p.add_argument("--pfc-xoff", default="50KB",
                   help="PFC XOFF threshold for the pfc schemes (pfc, ecn+pfc, bfc+pfc, "
                        "floodgate+pfc, tcd+pfc), per ingress port; see docs/testbed.md")
    p.add_argument("--pfc-profile", choices=pfc_profiles.PROFILES, default="switch",
                   help="PFC per port as a public simulator sets it: floodgate-ns3 (alpha 1/4 at "
                        "the hosts' rate, doubling with each doubling of a port's rate; headroom "
                        "8 x rate x delay) or hpcc-ns3 (1/8; 3 x rate x delay), each with a 4 KiB "
                        "reserve and a 3 KiB resume offset, instead of --pfc-xoff on every port "
                        "(switch, the default); docs/mechanisms/pfc.md, \"Per port\"")
    p.add_argument("--drain", type=float, default=1.0,
                   help="seconds sluice keeps running after the last packet is due (default "
                        "%(default)s; in exact time idle seconds cost no wall time)")
    p.add_argument("--host-nic", choices=("scheme", "plain", "bfc", "floodgate"), default="scheme",
                   help="NIC of the replaying hosts: the scheme's (default), or plain / bfc / "
                        "floodgate for every scheme (bfc only where the scheme runs BFC, "
                        "floodgate only where it sends dstPause)")
    p.add_argument("--base-rtt", default="10us",
                   help="passed to tools/fct; with --transport also the hosts' base RTT "
                        "(transport.base_rtt) unless --transport-param sets base_rtt")
    p.add_argument("--transport", default="none", choices=TRANSPORTS,
                   help="what the hosts run: none (open-loop replay of the workload's captures) "
                        "or a transport (docs/transports.md); default %(default)s")
    p.add_argument("--transport-param", action="append", default=[], metavar="KEY=VALUE",
                   help="a key of the transport section, dotted for its sub-sections "
                        "(e.g. tcp.min_rto=10ms, rdma.ack_every=2); repeatable")
    p.add_argument("--queue-trace", metavar="PORTS", nargs="?", const="",
                   help="record queue depths of these egress ports (sw/port,...; all when "
                        "given no value) into <scheme>/queue_trace.csv")
    p.add_argument("--queue-trace-interval", default="0.00001", help="seconds between samples")
    p.add_argument("--out", required=True, help="run directory (created)")
    p.add_argument("--sluice", default=os.path.join(ROOT, "build", "switch", "sluice"))
    p.add_argument("--allocator", default=os.path.join(ROOT, "build", "allocator",
                                                       "sluice-allocator"),
                   help="sluice-allocator, for the flowtune scheme")
    p.add_argument("--flowtune-lease", default="10ms",
                   help="flowtune: rate lease, given to the edges and the allocator alike")
    p.add_argument("--flowtune-iteration", default=None,
                   help="flowtune: the allocator's NED iteration period (default: 10us, the "
                        "paper's, in exact time; 200us in real time, where 10us makes "
                        "sluice-allocator spin on cpu 0, sluice's main lcore)")
    p.add_argument("--flowtune-control-delay", default="8.5us",
                   help="flowtune in exact time: one-way delay between an edge and the "
                        "allocator in the fabric (default %(default)s, docs/configuration.md)")
    p.add_argument("--eal", default=fidelity.DEFAULT_EAL,
                   help="EAL options for sluice (a --file-prefix is added)")
    p.add_argument("--workers", type=int, default=None,
                   help="worker lcores in fabric time: the switches partitioned over them, "
                        "the same bytes as on one (docs/emulator.md, \"Several lcores\"); "
                        "replaces the -l of --eal (default: SLUICE_WORKERS in fabric time, "
                        "which tools/reproduce --workers sets, else 1)")
    fidelity.add_arguments(p)
    p.add_argument("workload_args", nargs=argparse.REMAINDER,
                   help="after --: more tools/workload options (e.g. --incast-degree 6 ...)")
    a = p.parse_args(argv)
    a.schemes = [s.strip() for s in a.schemes.split(",") if s.strip()]
    for s in a.schemes:
        if s not in SCHEMES:
            p.error(f"unknown scheme {s!r}; known: {', '.join(SCHEMES)}")
    if a.workload_args and a.workload_args[0] == "--":
        a.workload_args = a.workload_args[1:]
    if a.workload is None and (a.cdf is None or a.load is None or a.duration is None):
        p.error("--cdf, --load and --duration are required unless --workload is given")
    try:
        a.seeds = [int(x) for x in a.seeds.split(",") if x.strip()]
    except ValueError:
        p.error("--seeds: expected comma-separated integers")
    if a.seeds and a.workload:
        p.error("--seeds makes a workload per seed: not with --workload")
    if a.workers is None:
        a.workers = sluice.default_workers() if a.clock == "exact" else 1
    if a.workers < 1:
        p.error("--workers must be 1 or more")
    if a.workers > 1:
        if a.clock != "exact":
            p.error("--workers N runs fabric time on N lcores; in real time give --eal's -l")
        tokens = a.eal.split()
        for flag in ("-l", "--lcores"):
            while flag in tokens:
                i = tokens.index(flag)
                del tokens[i:i + 2]
        a.eal = " ".join(tokens + sluice.lcores(a.workers))
    if a.transport != "none" and a.clock != "exact":
        p.error("--transport runs in exact fabric time only (--clock exact)")
    try:
        a.transport_section = transport_section(a.transport, a.transport_param, a.base_rtt)
    except ValueError as e:
        p.error(str(e))
    # Exact time runs the allocator in the fabric; real time sluice-allocator,
    # which spins at 10 us.
    if a.flowtune_iteration is None:
        a.flowtune_iteration = "10us" if a.clock == "exact" else "200us"
    return a


def parse_value(text):
    """A --transport-param value as YAML reads it (numbers, true/false, text)."""
    return yaml.safe_load(text) if text.strip() else text


def transport_section(kind, params, base_rtt):
    """The configuration's transport section for --transport and its
    --transport-param KEY=VALUE settings (None for none)."""
    if kind == "none":
        if params:
            raise ValueError("--transport-param needs a --transport")
        return None
    section = {"kind": kind, "flows": "workload/flows.csv", "completions": "completions.csv",
               "base_rtt": base_rtt}
    for item in params:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ValueError(f"--transport-param {item!r}: expected KEY=VALUE")
        node = section
        parts = key.split(".")
        for part in parts[:-1]:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise ValueError(f"--transport-param {item!r}: {part} is not a section")
        node[parts[-1]] = parse_value(value)
    return section


def set_transport(conf, args):
    """Transport hosts: every capture-file host port stops replaying (its rx
    goes) and runs the transport; HPCC needs INT in every switch."""
    section = args.transport_section
    conf.pop("transport", None)
    if section is None:
        return
    conf["transport"] = json.loads(json.dumps(section))
    for sw in conf["switches"]:
        if section["kind"] == "hpcc":
            sw["int"] = {"enabled": True}
        for port in host_ports(sw):
            if isinstance(port.get("pcap"), dict):
                port["pcap"].pop("rx", None)


def apply_scheme(conf, scheme, args, allocator=DEFAULT_ALLOCATOR):
    """A copy of the configuration with the scheme's ECN/PFC/BFC/Floodgate/
    DIBS/TCD/Flowtune settings; allocator: the "IP:port" of sluice-allocator
    for the flowtune scheme in real time (in exact time the allocator runs
    in the fabric: flowtune_allocator)."""
    conf = json.loads(json.dumps(conf))  # deep copy
    s = SCHEMES[scheme]
    conf.pop("flowtune_allocator", None)
    if "flowtune" in s and args.clock == "exact":
        allocator = None
        conf["flowtune_allocator"] = {"control_delay": args.flowtune_control_delay,
                                      "iteration": args.flowtune_iteration,
                                      "host_rate": allocator_host_rate(conf)}
    for sw in conf["switches"]:
        sw.pop("ecn", None)
        sw.pop("pfc", None)
        if s["ecn"]:
            sw["ecn"] = {"mode": s["ecn"], "k": args.ecn_k}
        if s["pfc"]:
            sw["pfc"] = {"mode": s["pfc"], "xoff": args.pfc_xoff}
        for port in sw.get("ports", []):
            # A port's own PFC settings (the configuration's, or a
            # profile's) need PFC on its switch: kept only where it is on.
            if isinstance(port.get("pfc"), dict) and not s["pfc"]:
                del port["pfc"]
        bfc = sw.setdefault("bfc", {})
        bfc["enabled"] = s["bfc"] is not None
        if s["bfc"]:
            bfc["assignment"] = s["bfc"]
        # A floodgate, dibs or tcd section already in the configuration
        # (its keys) is kept; the scheme turns it on or off.
        for name in TOGGLED_SECTIONS:
            section = dict(sw.get(name) or {})
            section["enabled"] = s.get(name) is not None
            section.update(s.get(name) or {})
            sw[name] = section
        sw.pop("queueing", None)
        if s.get("queueing"):
            sw["queueing"] = queueing_section(s["queueing"], args)
        set_flowtune(sw, s, args, allocator)
        set_host_nics(sw, host_nic_mode(s, args))
    pfc_profiles.apply(conf, getattr(args, "pfc_profile", "switch"))
    set_transport(conf, args)
    conf.setdefault("metrics", {})["enabled"] = False
    # The fabric's random choices (ECMP, BFC, DIBS, loss) follow the
    # workload's seed, so one --seed names one whole run.
    conf["seed"] = int(args.seed)
    return fidelity.apply_clock(conf, args)


def queueing_section(kind, args):
    """A switch's queueing: section for a scheme's queueing by flow."""
    if kind == "ideal-fq":
        return {"mode": "fq", "buffer": "unlimited"}
    if kind == "pfabric":
        return {"mode": "pfabric", "buffer": args.pfabric_buffer}
    section = {"mode": "sfq", "queues": int(args.sfq_queues)}
    if kind == "sfq-codel":
        section["codel"] = {"target": args.codel_target, "interval": args.codel_interval}
    return section


def host_ports(sw):
    return [p for p in sw.get("ports", []) if p.get("role") == "host"]


def set_flowtune(sw, scheme, args, allocator):
    """Flowtune on a switch with host ports, pointed at sluice-allocator
    (allocator; None: the allocator in the fabric) with the lease the
    allocator is given; sluice refuses it on a switch without (nothing to
    pace there), so that one keeps it off."""
    section = sw["flowtune"]
    if not section["enabled"]:
        return
    if not host_ports(sw):
        section["enabled"] = False
        return
    section.pop("allocator", None)
    if allocator is not None:
        section["allocator"] = allocator
    section["lease"] = args.flowtune_lease


def allocator_host_rate(conf):
    """The rate every host port runs at, for sluice-allocator's --host-rate
    (its rates are fractions of it, one rate for every host link)."""
    rates = {}
    for sw in conf["switches"]:
        for p in host_ports(sw):
            where = f"{sw.get('name')}/{p.get('name')}"
            if p.get("rate") is None:
                raise cli.ToolError(f"flowtune: host port {where} has no rate; sluice-allocator "
                                    "needs the host ports' rate")
            try:
                rates.setdefault(units.parse_rate(p["rate"]), (str(p["rate"]), where))
            except ValueError as e:
                raise cli.ToolError(f"flowtune: host port {where}: {e}")
    if not rates:
        raise cli.ToolError("flowtune: the configuration has no host ports (role: host)")
    if len(rates) > 1:
        found = ", ".join(f"{text} at {where}" for text, where in rates.values())
        raise cli.ToolError(f"flowtune: host ports run at different rates ({found}); "
                            "sluice-allocator takes one host rate")
    return next(iter(rates.values()))[0]


def start_allocator(args, conf, scheme_dir, seconds):
    """Starts sluice-allocator for the flowtune scheme on cpu 0 (sluice's main
    lcore, away from the worker); returns the process and its "IP:port"."""
    # Its own --duration is past sluice's, in case this tool dies without stopping it.
    cmd = allocator_proc.command(args.allocator, allocator_host_rate(conf),
                                 args.flowtune_iteration, args.flowtune_lease,
                                 f"{int(seconds) + 120}s", prefix=allocator_proc.ON_CPU0)
    proc, port = allocator_proc.start(cmd, os.path.join(scheme_dir, "allocator.log"))
    return proc, f"127.0.0.1:{port}"


def host_nic_mode(scheme, args):
    mode = scheme["nic"] if args.host_nic == "scheme" else args.host_nic
    if mode == "bfc" and scheme["bfc"] is None:
        return "plain"
    if mode == "floodgate" and not (scheme.get("floodgate") or {}).get("dst_pause"):
        return "plain"
    return mode


def set_host_nics(sw, mode):
    """Every replaying host port of the switch gets a NIC of this mode (a BFC
    NIC queues per flow unless queue_by is configured); other NIC keys
    already in the configuration are kept."""
    for port in sw.get("ports", []):
        if port.get("role") != "host" or not isinstance(port.get("pcap"), dict):
            continue
        nic = port.get("nic")
        nic = dict(nic) if isinstance(nic, dict) else {}
        nic["mode"] = mode
        if mode == "bfc":
            nic.setdefault("queue_by", "flow")
        port["nic"] = nic


def workload_end_seconds(workload_dir):
    with open(os.path.join(workload_dir, "flows.csv")) as f:
        header = f.readline().strip().split(",")
        end = header.index("end_time")
        return max((float(line.split(",")[end]) for line in f if line.strip()), default=0.0)


def run_sluice(args, scheme_dir, seconds):
    """Runs sluice in scheme_dir for a bounded time; returns its summary."""
    extra = []
    if args.queue_trace is not None:
        extra += ["--queue-trace", "queue_trace.csv", "--queue-trace-interval",
                  args.queue_trace_interval]
        if args.queue_trace:
            extra += ["--queue-trace-ports", args.queue_trace]
    # Exact time runs at whatever speed the work allows: bound it generously.
    timeout = sluice.exact_timeout(seconds) if args.clock == "exact" else seconds + 60
    run = sluice.run(args.sluice, scheme_dir, float("%.3f" % seconds), eal=args.eal,
                     prefix=sluice.new_prefix("exp"), extra=extra, timeout=timeout)
    with open(os.path.join(scheme_dir, "run.json"), "w") as f:
        json.dump(run.record(), f, indent=2)
        f.write("\n")
    return run.summary


def run_end_epoch(summary_path, seconds):
    """The receiver-clock instant (epoch seconds, exact decimals) the run's
    captures ended: sluice's own figure when it gives one, else its start
    (the replay start less the lead) plus the --duration it was given."""
    with open(summary_path) as f:
        doc = json.load(f, parse_float=decimal.Decimal)
    if doc.get("run_end_epoch_seconds") is not None:
        return str(doc["run_end_epoch_seconds"])
    start = decimal.Decimal(doc["replay_start_epoch_seconds"]) - REPLAY_LEAD_S
    return str(start + decimal.Decimal(f"{seconds:.3f}"))


def fct_overall(fct_dir):
    """(unfinished flows, p99 slowdown text) of a tools/fct run: '>=' when
    unfinished flows are in it (counted at the end of the run)."""
    with open(os.path.join(fct_dir, "summary.json")) as f:
        overall = json.load(f)["overall"]
    p99 = overall["p99"]
    text = "-" if p99 is None else ("%s%.2f" % (">=" if overall["lower_bound"] else "", p99))
    return overall["unfinished"], text


def make_workload(args, out):
    if args.workload:
        return os.path.abspath(args.workload)
    workload = os.path.join(out, "workload")
    shutil.rmtree(workload, ignore_errors=True)
    cli.run_step([PY, os.path.join(ROOT, "tools", "workload"), "--cdf", args.cdf, "--load",
                  str(args.load), "--link-rate", args.link_rate, "--hosts-from-config",
                  args.config, "--duration", args.duration, "--seed", str(args.seed),
                  "--snaplen", str(args.workload_snaplen), "--out", workload] +
                 # Transport hosts run the flow list; nobody replays captures.
                 (["--no-pcaps"] if args.transport != "none" else []) +
                 args.workload_args, "tools/workload")
    return workload


def run_scheme(args, conf, scheme, workload, out, seconds, gate):
    """One scheme: sluice, the fidelity check, tools/fct. Returns its fct dir
    and table row."""
    d = os.path.join(out, scheme)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(os.path.join(d, "capture"))
    os.symlink(workload, os.path.join(d, "workload"))
    proc, allocator, allocator_out = None, DEFAULT_ALLOCATOR, None
    if "flowtune" in SCHEMES[scheme] and args.clock == "real":
        proc, allocator = start_allocator(args, conf, d, seconds)
    try:
        with open(os.path.join(d, "sluice.yaml"), "w") as f:
            yaml.safe_dump(apply_scheme(conf, scheme, args, allocator), f, sort_keys=False)
        summary = run_sluice(args, d, seconds)
    finally:
        if proc:
            allocator_out = allocator_proc.stop(proc, os.path.join(d, "allocator.out"))
    unfaithful = gate.check(scheme, summary, allocator_out)
    summary_path = os.path.join(d, "summary.json")
    fct = os.path.join(d, "fct")
    if args.transport != "none":
        cli.run_step([PY, os.path.join(ROOT, "tools", "fct"), "--completions",
                      os.path.join(d, "completions.csv"), "--label", scheme, "--out", fct] +
                     (["--note", fidelity.NOT_VALID] if unfaithful else []), "tools/fct")
        return fct, (scheme, counters.totals(summary), fct_overall(fct), not unfaithful)
    rx = sorted(os.path.join(d, "capture", n) for n in os.listdir(os.path.join(d, "capture")))
    cli.run_step([PY, os.path.join(ROOT, "tools", "fct"), "--flows",
                  os.path.join(workload, "flows.csv"), "--rx"] + rx +
                 ["--link-rate", args.link_rate, "--base-rtt", args.base_rtt,
                  "--rx-stamp", "last-bit", "--start-offset-file", summary_path,
                  "--end-of-run", run_end_epoch(summary_path, seconds), "--label", scheme,
                  "--out", fct] + (["--note", fidelity.NOT_VALID] if unfaithful else []),
                 "tools/fct")
    return fct, (scheme, counters.totals(summary), fct_overall(fct), not unfaithful)


def print_table(rows, transport):
    print(f"\n{'scheme':15} {'transport':>9} {'drops':>10} {'pfc frames':>11} {'bfc frames':>11} "
          f"{'ecn marks':>10} {'max lost ms':>12} {'unfinished':>10} {'p99 slowdown':>13} "
          f"{'fidelity':>9}")
    for scheme, t, (unfinished, p99), ok in rows:
        print(f"{scheme:15} {transport:>9} {t['drops']:>10} {t['pfc_frames_sent']:>11} "
              f"{t['bfc_frames_sent']:>11} {t['ecn_marks']:>10} "
              f"{t['shaper_lost_ns'] / 1e6:>12.3f} {unfinished:>10} {p99:>13} "
              f"{'ok' if ok else 'NOT VALID':>9}")
    print("(p99 slowdown of all flows; '>=': unfinished flows counted at the end of the run)")


def run_experiment(args):
    """One workload under every scheme in args.out; returns the fidelity
    verdict (0, or 3 when a run exceeded the limits)."""
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    conf = load_config(args.config)
    workload = make_workload(args, out)
    seconds = 0.05 + workload_end_seconds(workload) + args.drain
    gate = fidelity.Gate("experiment", args, fidelity.floor_step(args, args.eal, out, "experiment"))
    fct_dirs, rows = [], []
    for i, scheme in enumerate(args.schemes, 1):
        print(f"experiment: run {i} of {len(args.schemes)}: {scheme}", flush=True)
        fct, row = run_scheme(args, conf, scheme, workload, out, seconds, gate)
        fct_dirs.append(fct)
        rows.append(row)
    if len(fct_dirs) > 1:
        cli.run_step([PY, os.path.join(ROOT, "tools", "fct"), "compare"] + fct_dirs +
                     ["--labels", ",".join(args.schemes), "--out", os.path.join(out, "compare")] +
                     (["--note", gate.note] if gate.note else []), "tools/fct compare")
    print_table(rows, args.transport)
    with open(os.path.join(out, "fidelity.json"), "w") as f:
        json.dump(gate.record(), f, indent=2)
        f.write("\n")
    print(f"\nexperiment: results in {out} (per scheme: summary.json, fct/; compare/; "
          f"fidelity.json)")
    return gate.verdict()


def load_config(path):
    conf = cli.load_yaml(path)
    if not isinstance(conf, dict) or not isinstance(conf.get("switches"), list):
        raise cli.ToolError(f"{path}: no 'switches:' list")
    return conf


def main(argv):
    args = parse_args(argv)
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    binaries = [args.sluice] + ([args.allocator] if args.clock == "real" and any(
        "flowtune" in SCHEMES[s] for s in args.schemes) else [])
    if not args.seeds:
        rc = run_experiment(args)
        provenance.write(out, argv=sys.argv, seeds=[args.seed], configs=[args.config],
                         inputs=[args.cdf], binaries=binaries)
        return rc
    from . import experiment_report
    conf = load_config(args.config)
    rc, notes = 0, []
    for seed in args.seeds:
        one = argparse.Namespace(**vars(args))
        one.seed, one.out = seed, experiment_report.seed_dir(out, seed)
        print(f"experiment: seed {seed} in {one.out}", flush=True)
        verdict = run_experiment(one)
        rc = max(rc, verdict)
        record = cli.load_json(os.path.join(one.out, "fidelity.json"), "fidelity record")
        if not record.get("valid", True):
            notes.append(f"seed {seed}")
    note = (f"{fidelity.NOT_VALID} ({', '.join(notes)})" if notes else None)
    text = experiment_report.write(args, out, conf, note)
    print("\n" + text)
    print(f"experiment: report in {os.path.join(out, 'report')}")
    provenance.write(out, argv=sys.argv, seeds=args.seeds, configs=[args.config],
                     inputs=[args.cdf], binaries=binaries)
    return rc
