"""TCD's victim scenario (Zhang et al., "Congestion Detection in Lossless
Networks", SIGCOMM 2021, sections 5.2.3-5.2.4) on a leaf-spine in one
sluice process, in exact fabric time, as two experiments:
tools/reproduce tcd-victim runs the paper's transports at the hosts
(VICTIM_DOC), tools/reproduce tcd-marks open-loop replay hosts and reads the
marks and each port's state (MARKS_DOC). docs/mechanisms/tcd.md has the
figures.
"""

import argparse
import csv
import json
import os
import random
import shutil
import struct
import types

import yaml

from .. import cli, counters, provenance, sluice, spread, transport_frames, workload_gen
from ..fct_analysis import nearest_rank as percentile
from ..pcapio import PcapWriter, read_pcap
from ..queue_trace import read_queue_trace, read_tcd_trace
from ..units import format_ns, parse_size, parse_time, seconds_to_ns

ROOT = sluice.ROOT

VICTIM_DOC = """Victim flows (TCD section 5.2.3, Fig. 18a) with TIMELY and DCQCN hosts.

    tools/reproduce tcd-victim [--seeds 1,2,3] [--transports timely,dcqcn]
                               [--burst-senders 8] [--burst-size 400KB] [--out DIR]

The leaf-spine of tcd-marks (victims v0..v3 to r0, burst senders a0..a7 to
r1, whose 10 Gb/s link is the only bottleneck; PFC everywhere; 100 Gb/s
fabric, 10 Gb/s hosts) with transport hosts: each victim sends a 4 MB flow
from 200 us before the bursts and an 8 KB flow every 50 us from 1 ms before
them until --victim-time, to r0; from --burst-start (2 ms) each burst
sender sends --burst-size to r1. For TIMELY and DCQCN: ECN + PFC with the
plain transport against TCD + PFC with its UE-aware variant (TIMELY: beta
1.6, the paper's).

Victim FCT (mean and p99 of the 8 KB flows, mean of the 4 MB ones) beside
the paper's "2.2x and 2.3x better average FCT for flows < 10 KB and > 1 MB"
(TIMELY); the 8 KB flows' FCT slowdown (FCT over the flow's FCT alone on its
path, 11.36 us) beside the paper's TIMELY p99 slowdown 50.3 -> 36.6 (Fig.
19, Hadoop flows < 50 KB: another experiment). With several seeds, each
victim figure's mean and min-max over them.

Section 5.2.4's claim that congested flows reach their fair share: the
burst flows' payload rates at r1 (r1's tx capture), one sample every
--rate-interval from the instant l2/r1 turns congested (TCD state
congestion; plain ECN: queue above K), each over the --rate-window before
it, against r1's payload capacity / active flows: Jain's index, when every
flow is within 10 % of the fair share for a whole window and from when on
for good; l2/r1's queue trace at the same interval.

Writes results.json, tcd_rates.png (the first seed) and provenance.json.
"""

MARKS_DOC = """TCD's victim scenario with open-loop hosts: marks and port states.

    v0..v3 --\\                                 /-- r1 (--burst-rx-rate)
              l0 ==\\                    /== l2      truly congested
    a0..a3 --/      \\== s (spine) ====/     \\-- r0 (--victim-rx-rate)
    a4..a7 -- l1 ==/      s/l2: the paused         victim's receiver
                          port

The victims v0..v3 (--victim-host-rate links) each send one long ECT(0)
flow (--victim-rate) to r0 for --victim-seconds; from --burst-start the
burst senders a0..a7 (--host-rate links) each send --burst-frames ECT(0)
frames at line rate to r1, whose slower link at l2 is the only real
bottleneck. With PFC the bytes waiting for r1 at l2 pause the spine's port
toward l2 (s/l2), so the victims' frames queue at s behind a pause though
nothing on their path is short of capacity. Fabric links --fabric-rate,
1 us; one spine, so every flow crosses s/l2.

Schemes (--schemes): ecn+pfc (ECN step at --ecn-k, PFC XOFF --xoff on every
switch), tcd+pfc (the same plus tcd: {enabled: true}), ecn+bfc and tcd+bfc
(BFC on every switch instead of PFC, hosts with BFC NICs queueing per flow).

Per scheme: frames CE / UE (ECT(1)) / ECT(0) unmarked per flow class
(victim at r0, burst at r1) from the receivers' captures, the TCD counters of
s/l2 and l2/r1 from the summary JSON, and a queue trace of s/l2, l2/r1, l0/s
and l2/r0 (TCD state and paused, per queue). OUT/report/ gets table.md,
results.json, tcd_victim_states.png and tcd_victim_marks.png.

Checks (exit 4, FAIL printed): every frame delivered and no drop (both
fabrics are lossless); PFC schemes: s/l2 paused by l2; ecn+pfc: victims'
frames CE; tcd+pfc: victims' frames UE and never CE, burst frames CE, s/l2
OFF and undetermined; BFC schemes: victims' frames neither UE nor CE and
l2/r0 never paused nor congested (under BFC the victims' queues are their
own: nothing pauses them). Exit 1 on a failed step.

    tools/reproduce tcd-marks --out runs/reproduce/tcd-marks
"""

EXIT_CHECK_FAILED = 4
SCHEMES = ("ecn+pfc", "tcd+pfc", "ecn+bfc", "tcd+bfc")
NOT_ECT, UE, ECT0, CE = 0, 1, 2, 3
FRAME = 1514
START_NS = 1_700_000_000 * 10**9
VICTIMS = 4
BURST_L0, BURST_L1 = 4, 4  # burst senders under l0 and l1 (tcd-victim --burst-senders sets them)
STATES = ("non_congestion", "congestion", "undetermined")
# ECN schemes have no TCD state; the trace shows their queue against K.
ECN_STATES = ("below_k", "above_k")
STATE_COLOURS = {"non_congestion": "tab:green", "congestion": "tab:red",
                 "undetermined": "gold", "below_k": "palegreen", "above_k": "salmon"}
STATE_LABELS = {"non_congestion": "TCD non-congestion", "congestion": "TCD congestion (CE)",
                "undetermined": "TCD undetermined (UE)", "below_k": "ECN: queue <= K",
                "above_k": "ECN: queue > K (CE)"}
# (switch, port) traced; the first two are the ones the issue names.
TRACED = (("s", "l2"), ("l2", "r1"), ("l0", "s"), ("l2", "r0"))
PORT_ROLE = {("s", "l2"): "spine->dest leaf (paused)", ("l2", "r1"): "congested (to r1)",
             ("l0", "s"): "victims' leaf uplink", ("l2", "r0"): "to victim receiver r0"}


# ---------------------------------------------------------------- topology

def hosts(burst_l0=BURST_L0, burst_l1=BURST_L1):
    """[(name, leaf, ipv4 address, class, host index)] of every host."""
    out = []
    for i in range(VICTIMS):
        out.append((f"v{i}", "l0", f"10.0.{i}.2", "victim", i))
    for i in range(burst_l0 + burst_l1):
        leaf = "l0" if i < burst_l0 else "l1"
        out.append((f"a{i}", leaf, f"10.1.{i}.2", "burst", i))
    out.append(("r0", "l2", "10.2.0.2", "victim-rx", 0))
    out.append(("r1", "l2", "10.2.1.2", "burst-rx", 1))
    return out


def host_mac(kind, idx):
    prefix = {"victim": 0x10, "burst": 0x20, "victim-rx": 0x30, "burst-rx": 0x30}[kind]
    return "02:00:00:00:%02x:%02x" % (prefix, idx)


def gw_mac(kind, idx):
    prefix = {"victim": 0x10, "burst": 0x20, "victim-rx": 0x30, "burst-rx": 0x30}[kind]
    return "02:00:00:01:%02x:%02x" % (prefix, idx)


def mac_bytes(mac):
    return bytes(int(x, 16) for x in mac.split(":"))


def ip_bytes(ip):
    return bytes(int(x) for x in ip.split("."))


def udp_frame(src_mac, dst_mac, src_ip, dst_ip, sport, dport, seq, size=FRAME, tos=ECT0):
    """An untagged IPv4/UDP frame of `size` bytes, valid IPv4 checksum, UDP
    checksum 0."""
    ip_len = size - 14
    hdr = bytearray(struct.pack("!BBHHHBBH4s4s", 0x45, tos, ip_len, seq & 0xFFFF, 0, 64, 17, 0,
                                ip_bytes(src_ip), ip_bytes(dst_ip)))
    s = sum(struct.unpack("!10H", bytes(hdr)))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    struct.pack_into("!H", hdr, 10, ~s & 0xFFFF)
    udp = struct.pack("!HHHH", sport, dport, ip_len - 20, 0)
    return (mac_bytes(dst_mac) + mac_bytes(src_mac) + b"\x08\x00" + bytes(hdr) + udp
            + bytes(size - 42))


def rate_bps(text):
    t = str(text).strip()
    for suf, mult in (("Gbps", 1e9), ("Mbps", 1e6), ("Kbps", 1e3), ("bps", 1)):
        if t.endswith(suf):
            return float(t[:-len(suf)]) * mult
    return float(t)


def write_captures(args, tmp):
    """The hosts' rx captures; returns (victim frames, burst frames) in all."""
    by_name = {h[0]: h for h in hosts()}
    r0, r1 = by_name["r0"], by_name["r1"]
    victim_gap = int(FRAME * 8 / rate_bps(args.victim_rate) * 1e9)
    victim_frames = int(args.victim_seconds * 1e9 / victim_gap)
    for name, _leaf, ip, kind, idx in hosts():
        if kind == "victim":
            dst, n, gap, t0 = r0, victim_frames, victim_gap, 0
        elif kind == "burst":
            # due all at once, paced by the host NIC at its line rate
            dst, n, gap, t0 = r1, args.burst_frames, 0, int(args.burst_start * 1e9)
        else:
            continue
        with PcapWriter(os.path.join(tmp, f"{name}.pcap")) as w:
            for k in range(n):
                w.write(START_NS + t0 + k * gap,
                        udp_frame(host_mac(kind, idx), gw_mac(kind, idx), ip, dst[2],
                                  20000 + idx, 5000, k))
    return VICTIMS * victim_frames, (BURST_L0 + BURST_L1) * args.burst_frames


def host_port(name, kind, idx, ip, rate, rx=None, tx=None, nic=None):
    p = {"name": name, "role": "host", "rate": rate, "mac": gw_mac(kind, idx),
         "peer_mac": host_mac(kind, idx), "ipv4": ip.rsplit(".", 1)[0] + ".1/24",
         "hop_rtt": "10us", "pcap": {}}
    if rx:
        p["pcap"]["rx"] = rx
    if tx:
        p["pcap"]["tx"] = tx
    if nic:
        p["nic"] = nic
    return p


def config(args, tmp, scheme, host_list=None):
    pfc = scheme.endswith("+pfc")
    nic = None if pfc else {"mode": "bfc", "queue_by": "flow"}
    extra = {"buffer": {"size": "16MB", "alpha": 8.0}, "ecn": {"mode": "step", "k": args.ecn_k}}
    if pfc:
        extra["pfc"] = {"mode": "pfc", "xoff": args.xoff}
    else:
        extra["queues_per_port"] = 32
        extra["bfc"] = {"assignment": "dynamic"}
    if scheme.startswith("tcd"):
        extra["tcd"] = {"enabled": True}
    link = {"delay": "1us", "role": "switch", "rate": args.fabric_rate, "hop_rtt": "10us"}
    ports = {"l0": [], "l1": [], "l2": []}
    routes = {"l0": [], "l1": [], "l2": []}
    spine_routes = []
    for name, leaf, ip, kind, idx in host_list or hosts():
        net = ip.rsplit(".", 1)[0] + ".0/24"
        if kind in ("victim", "burst"):
            rate = args.victim_host_rate if kind == "victim" else args.host_rate
            ports[leaf].append(host_port(name, kind, idx, ip, rate, rx=f"{name}.pcap", nic=nic))
        else:
            rate = args.victim_rx_rate if name == "r0" else args.burst_rx_rate
            ports[leaf].append(host_port(name, kind, idx, ip, rate,
                                         tx=f"{scheme}_{name}.pcap"))
        routes[leaf].append({"prefix": net, "ports": [name]})
        for other in ports:
            if other != leaf:
                routes[other].append({"prefix": net, "ports": ["s"]})
        spine_routes.append({"prefix": net, "ports": [leaf]})
    switches = []
    for leaf in ("l0", "l1", "l2"):
        ps = ports[leaf] + [dict(link, name="s", link=f"s/{leaf}")]
        switches.append(dict(extra, name=leaf, ports=ps, routes=routes[leaf]))
    switches.append(dict(extra, name="s",
                         ports=[dict(link, name=leaf, link=f"{leaf}/s")
                                for leaf in ("l0", "l1", "l2")],
                         routes=spine_routes))
    doc = {"clock": {"mode": "exact"}, "mbufs": args.mbufs, "switches": switches}
    path = os.path.join(tmp, f"{scheme}.yaml")
    with open(path, "w") as f:
        yaml.safe_dump(doc, f, sort_keys=False)
    return path


def run_sluice(args, tmp, scheme):
    config(args, tmp, scheme)
    trace = ["--queue-trace", f"{scheme}_trace.csv",
             "--queue-trace-ports", ",".join(f"{sw}/{p}" for sw, p in TRACED),
             "--queue-trace-interval", f"{args.trace_interval:.7f}"]
    run = sluice.run(args.sluice, tmp, sluice.REPLAY_LEAD_S + args.duration,
                     config=f"{scheme}.yaml", summary=f"{scheme}.summary.json",
                     log=f"{scheme}.log", eal="--no-huge -m 1024 --no-pci -l 0,1",
                     prefix=sluice.new_prefix("tcd-marks"), extra=trace, timeout=args.timeout)
    if run.timed_out:
        raise cli.ToolError("sluice (%s) still running after %d s; stopped; see %s"
                            % (scheme, args.timeout, os.path.join(tmp, f"{scheme}.log")))
    print(f"  {scheme}: sluice took {run.wall_s:.1f} s", flush=True)
    return run.summary


# ---------------------------------------------------------------- analysis

def classify(src_ip):
    """Flow class of a source address (victims 10.0.x, burst 10.1.x)."""
    return {10 << 8 | 0: "victim", 10 << 8 | 1: "burst"}.get(src_ip[0] << 8 | src_ip[1], "other")


def ecn_by_class(path):
    """{class: {"ce", "ue", "ect0", "not_ect", "frames", "first_ns", "last_ns",
    "ce_times", "ue_times"}} of the IPv4 frames of a capture (control frames
    such as PFC toward the host are skipped); times in ns since the first
    frame of the run (START_NS)."""
    out = {}
    names = {CE: "ce", UE: "ue", ECT0: "ect0", NOT_ECT: "not_ect"}
    for ts, frame, _orig in read_pcap(path, max_bytes=34):
        if len(frame) < 34 or frame[12:14] != b"\x08\x00":
            continue
        c = out.setdefault(classify(frame[26:30]), {"ce": 0, "ue": 0, "ect0": 0, "not_ect": 0,
                                                   "frames": 0, "ce_times": [],
                                                   "ue_times": []})
        e = frame[15] & 3
        c[names[e]] += 1
        c["frames"] += 1
        if e in (CE, UE):
            c[names[e] + "_times"].append(ts - START_NS)
    for c in out.values():
        for k in ("ce_times", "ue_times"):
            ts = c.pop(k)
            c[k.replace("_times", "_first_ms")] = round(min(ts) / 1e6, 3) if ts else None
            c[k.replace("_times", "_last_ms")] = round(max(ts) / 1e6, 3) if ts else None
    return out


TCD_FIELDS = ("tcd_pauses", "tcd_ce_marks", "tcd_ue_marks", "tcd_non_congestion_ns",
              "tcd_congestion_ns", "tcd_undetermined_ns", "tcd_on_periods",
              "tcd_on_period_p50_ns", "tcd_on_period_p99_ns", "tcd_max_t_on_ns",
              "tcd_undetermined_to_congestion", "tcd_non_congestion_to_undetermined",
              "tcd_congestion_to_undetermined", "tcd_undetermined_to_non_congestion")
PORT_FIELDS = ("drops", "ecn_marks", "pfc_frames_received", "pfc_paused_ns", "pfc_frames_sent",
               "bfc_pause_sent", "bfc_resume_sent", "bfc_pause_received")


def port_counters(summary, sw, port):
    p = counters.port(summary, sw, port) or {}
    return {k: p[k] for k in TCD_FIELDS + PORT_FIELDS if k in p}


def ecn_states(path, k_bytes):
    """The queue rows of a trace without TCD, as read_tcd_trace gives them,
    the state being below_k / above_k (the ECN step threshold)."""
    _buffer, queues, _ports = read_queue_trace(path)
    return {key: {q: [(t, "above_k" if b > k_bytes else "below_k", b, p) for t, b, p in rows]
                  for q, rows in qs.items()} for key, qs in queues.items()}


def trace_intervals(states):
    """Per (switch, port): {queue: {"runs": [(t0, t1, state, paused)],
    "peak_bytes"}}: runs of equal (state, paused) in the sampled trace, t in
    seconds since the run's first frame was due."""
    t_first = START_NS / 1e9  # capture time of the run's first frame
    out = {}
    for key, qs in states.items():
        for q, rows in qs.items():
            runs, peak = [], 0
            for i, (t, st, b, paused) in enumerate(rows):
                peak = max(peak, b)
                t_next = rows[i + 1][0] if i + 1 < len(rows) else t
                cur = (st, bool(paused))
                if runs and runs[-1][2:] == cur and abs(runs[-1][1] - (t - t_first)) < 1e-12:
                    runs[-1] = (runs[-1][0], t_next - t_first) + cur
                else:
                    runs.append((t - t_first, t_next - t_first) + cur)
            out.setdefault(key, {})[q] = {"runs": runs, "peak_bytes": peak}
    return out, t_first


def trace_summary(intervals):
    """Per traced port: seconds sampled in each state and paused (summed over
    queues that ever held bytes or were paused), queues active, and the
    first and last time (ms) it was sampled undetermined / congestion."""
    out = {}
    for (sw, port), qs in intervals.items():
        d = {"queues_active": 0, "paused_s": 0.0,
             "undetermined_first_ms": None, "undetermined_last_ms": None,
             "congestion_first_ms": None, "congestion_last_ms": None,
             "above_k_first_ms": None, "above_k_last_ms": None}
        for q, info in qs.items():
            runs = info["runs"]
            if not info["peak_bytes"]:
                continue  # (PFC also pauses the port's empty queues)
            d["queues_active"] += 1
            for t0, t1, st, paused in runs:
                d[f"{st}_s"] = d.get(f"{st}_s", 0.0) + (t1 - t0)
                if paused:
                    d["paused_s"] += t1 - t0
                if st in ("undetermined", "congestion", "above_k"):
                    f, l = f"{st}_first_ms", f"{st}_last_ms"
                    d[f] = t0 * 1e3 if d[f] is None else min(d[f], t0 * 1e3)
                    d[l] = t1 * 1e3 if d[l] is None else max(d[l], t1 * 1e3)
        for k, v in list(d.items()):
            if isinstance(v, float):
                d[k] = round(v, 6)
        out[f"{sw}/{port}"] = d
    return out


def victim_queues_paused_bfc(intervals):
    """Under BFC (a queue per flow): s/l2's queues, split by whether they
    were ever paused; the trace does not name a queue's flows, so this is
    reported, not asserted per flow."""
    qs = intervals.get(("s", "l2"), {})
    paused = sorted(q for q, info in qs.items() if any(p for *_x, p in info["runs"]))
    active = sorted(q for q, info in qs.items() if info["peak_bytes"])
    return {"queues_with_bytes": active, "queues_ever_paused": paused}


def checks(scheme, res, sent):
    """[(ok, text)] of the rules the issue states for this scheme."""
    v, b = res["marks"].get("victim", {}), res["marks"].get("burst", {})
    sl2 = res["ports"]["s/l2"]
    out = [(v.get("frames", 0) == sent["victim"],
            f"victim frames at r0 {v.get('frames', 0)} of {sent['victim']}"),
           (b.get("frames", 0) == sent["burst"],
            f"burst frames at r1 {b.get('frames', 0)} of {sent['burst']}"),
           (not res["drops"], f"no drops (lossless fabric): {res['drops'] or 'none'}")]
    if scheme.endswith("+pfc"):
        out.append((sl2.get("pfc_frames_received", 0) > 0 and sl2.get("pfc_paused_ns", 0) > 0,
                    f"s/l2 paused by l2's PFC ({sl2.get('pfc_frames_received', 0)} frames, "
                    f"{sl2.get('pfc_paused_ns', 0) / 1e6:.3f} ms)"))
    if scheme == "ecn+pfc":
        out.append((v.get("ce", 0) > 0, f"victim frames CE ({v.get('ce', 0)})"))
    if scheme == "tcd+pfc":
        out += [(v.get("ue", 0) > 0, f"victim frames UE ({v.get('ue', 0)})"),
                (v.get("ce", 0) == 0, f"victim frames never CE ({v.get('ce', 0)})"),
                (b.get("ce", 0) > 0, f"burst frames CE ({b.get('ce', 0)})"),
                (sl2.get("tcd_pauses", 0) > 0 and sl2.get("tcd_undetermined_ns", 0) > 0,
                 f"s/l2 OFF and undetermined ({sl2.get('tcd_pauses', 0)} pauses, "
                 f"{sl2.get('tcd_undetermined_ns', 0) / 1e6:.3f} ms)")]
    if scheme.endswith("+bfc"):
        # Dynamic assignment gives each of the (at most 12) flows of a port its
        # own queue of 32; the victims' downstream queues (l2/r0, as fast as
        # the fabric) never reach Th, so nothing pauses a victim's queue and
        # no queue of theirs grows past K: neither UE nor CE.
        r0 = res["trace"].get("l2/r0", {})
        out += [(v.get("ue", 0) == 0 and v.get("ce", 0) == 0,
                 f"victim frames neither UE nor CE ({v.get('ue', 0)} UE, "
                 f"{v.get('ce', 0)} CE): their queues are their own"),
                (r0.get("paused_s", 0) == 0 and not r0.get("congestion_first_ms"),
                 "l2/r0 (victims' receiver port) never paused nor congested")]
    return out


def analyse(scheme, tmp, summary, sent, k_text):
    marks = {}
    for rx in ("r0", "r1"):
        for cls, c in ecn_by_class(os.path.join(tmp, f"{scheme}_{rx}.pcap")).items():
            marks[cls] = c
    trace = os.path.join(tmp, f"{scheme}_trace.csv")
    states = (read_tcd_trace(trace) if scheme.startswith("tcd")
              else ecn_states(trace, parse_size(k_text)))
    intervals, _ = trace_intervals(states)
    res = {"marks": marks,
           "ports": {f"{sw}/{p}": port_counters(summary, sw, p) for sw, p in TRACED},
           "drops": {k: sum(v.values()) for k, v in counters.drops_by_port(summary).items()},
           "trace": trace_summary(intervals)}
    if scheme.endswith("+bfc"):
        res["bfc_s_l2_queues"] = victim_queues_paused_bfc(intervals)
    res["checks"] = [{"ok": ok, "rule": text} for ok, text in checks(scheme, res, sent)]
    return res, intervals


# ---------------------------------------------------------------- report

def fmt_ms(ns):
    return "%.3f" % (ns / 1e6) if ns else "0"


def table(results, args):
    lines = ["# TCD victim scenario (tools/reproduce tcd-marks)", "",
             f"Victims: {VICTIMS} flows x {args.victim_rate} to r0 ({args.victim_rx_rate}) for "
             f"{args.victim_seconds * 1e3:.0f} ms; burst: {BURST_L0 + BURST_L1} senders x "
             f"{args.burst_frames} frames of {FRAME} B at {args.host_rate} to r1 "
             f"({args.burst_rx_rate}) from {args.burst_start * 1e3:.0f} ms; fabric "
             f"{args.fabric_rate}; ECN step K {args.ecn_k}; PFC XOFF {args.xoff}; exact fabric time.",
             "", "## Marks at the receivers (frames)", "",
             "| scheme | victim CE | victim UE | victim unmarked | burst CE | burst UE | "
             "burst unmarked |", "|---|---:|---:|---:|---:|---:|---:|"]
    for s, r in results.items():
        v, b = r["marks"].get("victim", {}), r["marks"].get("burst", {})
        lines.append(f"| {s} | {v.get('ce', 0)} | {v.get('ue', 0)} | {v.get('ect0', 0)} | "
                     f"{b.get('ce', 0)} | {b.get('ue', 0)} | {b.get('ect0', 0)} |")
    lines += ["", "## TCD counters (summary JSON; ms are queue-time summed over the port's "
              "queues)", "",
              "| scheme | port | pauses | CE marks | UE marks | ms undetermined | "
              "ms congestion | ON periods | ON p50 / p99 (us) | max_T_on (us) | "
              "PFC paused (ms) |", "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for s, r in results.items():
        for port in ("s/l2", "l2/r1"):
            c = r["ports"][port]
            if "tcd_pauses" not in c:
                lines.append(f"| {s} | {port} | – | – | – | – | – | – | – | – | "
                             f"{fmt_ms(c.get('pfc_paused_ns', 0))} |")
                continue
            lines.append(
                f"| {s} | {port} | {c['tcd_pauses']} | {c['tcd_ce_marks']} | "
                f"{c['tcd_ue_marks']} | {fmt_ms(c['tcd_undetermined_ns'])} | "
                f"{fmt_ms(c['tcd_congestion_ns'])} | {c['tcd_on_periods']} | "
                f"{c['tcd_on_period_p50_ns'] / 1e3:.1f} / {c['tcd_on_period_p99_ns'] / 1e3:.1f} | "
                f"{c['tcd_max_t_on_ns'] / 1e3:.1f} | {fmt_ms(c.get('pfc_paused_ns', 0))} |")
    lines += ["", "## State changes (queue trace, every %g us)" % (args.trace_interval * 1e6), "",
              "| scheme | port | queues with bytes | ms paused (queue-time) | "
              "undetermined from..to (ms) | congestion (TCD) or queue > K (ECN) from..to (ms) |",
              "|---|---|---:|---:|---|---|"]
    for s, r in results.items():
        for port, d in sorted(r["trace"].items(),
                              key=lambda kv: [f"{a}/{b}" for a, b in TRACED].index(kv[0])):
            def span(st):
                f, l = d[f"{st}_first_ms"], d[f"{st}_last_ms"]
                return "–" if f is None else f"{f:.2f}..{l:.2f}"
            lines.append(f"| {s} | {port} | {d['queues_active']} | {d['paused_s'] * 1e3:.2f} | "
                         f"{span('undetermined')} | "
                         f"{span('congestion' if s.startswith('tcd') else 'above_k')} |")
    lines += ["", "## Checks", ""]
    for s, r in results.items():
        for c in r["checks"]:
            lines.append(f"- {'ok' if c['ok'] else 'FAIL'} {s}: {c['rule']}")
    return "\n".join(lines) + "\n"


def plot_states(path, all_intervals, args):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    schemes = [s for s in all_intervals]
    fig, axes = plt.subplots(len(schemes), 1, figsize=(11, 2.4 + 1.6 * len(schemes)),
                             squeeze=False, sharex=True)
    for ax, s in zip(axes[:, 0], schemes):
        rows, labels = [], []
        for key in (("s", "l2"), ("l2", "r1")):
            qs = all_intervals[s].get(key, {})
            for q in sorted(qs):
                info = qs[q]
                if not info["peak_bytes"]:
                    continue
                rows.append(info["runs"])
                labels.append(f"{key[0]}/{key[1]} q{q}")
        for y, runs in enumerate(rows):
            for st in STATES + ECN_STATES:
                segs = [(t0 * 1e3, (t1 - t0) * 1e3) for t0, t1, st2, _p in runs if st2 == st]
                ax.broken_barh(segs, (y - 0.35, 0.7), facecolors=STATE_COLOURS[st])
            psegs = [(t0 * 1e3, (t1 - t0) * 1e3) for t0, t1, _st, p in runs if p]
            ax.broken_barh(psegs, (y - 0.35, 0.7), facecolors="none", edgecolors="black",
                           hatch="////", linewidth=0)
        ax.set_yticks(range(len(rows)))
        ax.set_yticklabels(labels, fontsize=7)
        ax.set_ylim(-0.6, max(len(rows), 1) - 0.4)
        ax.set_title(s, fontsize=10, loc="left")
        ax.axvline(args.burst_start * 1e3, color="grey", linestyle=":", linewidth=0.8)
    axes[-1, 0].set_xlabel("time (ms of fabric time; dotted: burst starts)")
    axes[-1, 0].set_xlim(0, args.duration * 1e3)
    handles = [Patch(facecolor=STATE_COLOURS[st], label=STATE_LABELS[st])
               for st in STATES + ECN_STATES]
    handles.append(Patch(facecolor="white", edgecolor="black", hatch="////", label="paused"))
    fig.legend(handles=handles, loc="upper right", ncol=3, fontsize=8)
    fig.suptitle("State of the spine->leaf port s/l2 and the congested port l2/r1\n"
                 "(queues that held bytes; 20 us samples)", fontsize=10, x=0.02, ha="left")
    fig.tight_layout(rect=(0, 0, 1, 0.93))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_marks(path, results):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    schemes = list(results)
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
    for ax, cls in zip(axes, ("victim", "burst")):
        bottom = [0] * len(schemes)
        for key, colour, label in (("ce", "tab:red", "CE"), ("ue", "gold", "UE (ECT(1))"),
                                   ("ect0", "tab:green", "unmarked (ECT(0))")):
            vals = [results[s]["marks"].get(cls, {}).get(key, 0) for s in schemes]
            ax.bar(schemes, vals, bottom=bottom, color=colour, label=label)
            bottom = [a + b for a, b in zip(bottom, vals)]
        ax.set_title(f"{cls} frames at {'r0' if cls == 'victim' else 'r1'}", fontsize=10)
        ax.set_ylabel("frames")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


# ---------------------------------------------------------------- main

def parse_marks_args(argv):
    p = argparse.ArgumentParser(prog="tools/reproduce tcd-marks",
                                description=MARKS_DOC.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog=MARKS_DOC.split("\n\n", 1)[1])
    p.add_argument("--out", default=os.path.join(ROOT, "runs", "reproduce", "tcd-marks"))
    p.add_argument("--schemes", default=",".join(SCHEMES))
    p.add_argument("--sluice", default=sluice.BINARY)
    p.add_argument("--ecn-k", default="20KB", help="ECN step K (and TCD's q_th)")
    p.add_argument("--xoff", default="50KB", help="PFC XOFF per ingress port")
    p.add_argument("--host-rate", default="10Gbps", help="burst senders' links")
    p.add_argument("--victim-host-rate", default="2.5Gbps", help="victim senders' links")
    p.add_argument("--fabric-rate", default="100Gbps")
    p.add_argument("--victim-rate", default="1.5Gbps", help="each victim flow's rate")
    p.add_argument("--victim-rx-rate", default="100Gbps", help="r0's link")
    p.add_argument("--burst-rx-rate", default="10Gbps", help="r1's link (the bottleneck)")
    p.add_argument("--victim-seconds", type=float, default=0.010)
    p.add_argument("--burst-start", type=float, default=0.002)
    p.add_argument("--burst-frames", type=int, default=300, help="per burst sender")
    p.add_argument("--duration", type=float, default=0.030,
                   help="fabric seconds per run (exact time: idle seconds cost nothing; the "
                        "victims need ~20 ms to get every frame through the pauses)")
    p.add_argument("--trace-interval", type=float, default=0.00002)
    p.add_argument("--mbufs", type=int, default=65536)
    p.add_argument("--timeout", type=int, default=100, help="wall seconds per sluice run")
    return p.parse_args(argv)


def marks_main(argv):
    args = parse_marks_args(argv)
    args.out = os.path.abspath(args.out)
    schemes = [s for s in args.schemes.split(",") if s]
    for s in schemes:
        if s not in SCHEMES:
            raise cli.ToolError(f"unknown scheme {s!r} (known: {', '.join(SCHEMES)})")
    if not os.access(args.sluice, os.X_OK):
        raise cli.ToolError(f"no sluice binary at {args.sluice}")
    tmp = os.path.join(args.out, "runs")
    report = os.path.join(args.out, "report")
    os.makedirs(tmp, exist_ok=True)
    os.makedirs(report, exist_ok=True)
    victim, burst = write_captures(args, tmp)
    sent = {"victim": victim, "burst": burst}
    results, intervals = {}, {}
    for s in schemes:
        summary = run_sluice(args, tmp, s)
        results[s], intervals[s] = analyse(s, tmp, summary, sent, args.ecn_k)
    with open(os.path.join(report, "results.json"), "w") as f:
        json.dump({"parameters": vars(args), "frames_sent": sent, "schemes": results}, f,
                  indent=1)
    text = table(results, args)
    with open(os.path.join(report, "table.md"), "w") as f:
        f.write(text)
    plot_states(os.path.join(report, "tcd_victim_states.png"), intervals, args)
    plot_marks(os.path.join(report, "tcd_victim_marks.png"), results)
    print(text)
    failed = [(s, c["rule"]) for s, r in results.items() for c in r["checks"] if not c["ok"]]
    for s, rule in failed:
        print(f"FAIL {s}: {rule}")
    provenance.write(args.out, configs=[os.path.join(tmp, f"{s}.yaml") for s in schemes],
                     binaries=[args.sluice])
    print(f"report: {report}/table.md")
    return EXIT_CHECK_FAILED if failed else 0


# ---------------------------------------------------------------- tcd-victim (transport hosts)

def tcd_flows(path, victims, bursts, r0, r1, a, seed):
    """Victims' 4 MB and 8 KB flows to r0, the bursts to r1; returns
    {flow id: (class, size)}."""
    rng = random.Random(seed)
    kinds = {}
    fid = 1
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(workload_gen.FLOW_FIELDS)

        def flow(src, dst, size, t, kind):
            nonlocal fid
            w.writerow([fid, src[0], dst[0], src[1], dst[1], size, 0, format_ns(t),
                        format_ns(t), format_ns(t), int(kind == "burst")])
            kinds[fid] = (kind, size)
            fid += 1

        # The victims' traffic overlaps the bursts: a 4 MB flow each from
        # 200 us before them, 8 KB flows every 50 us from 1 ms before.
        for v in victims:
            flow(v, r0, 4_000_000, a.burst_start_ns - 200_000 + rng.randrange(1_000),
                 "victim-large")
            t = a.burst_start_ns - 1_000_000 + rng.randrange(50_000)
            while t < a.victim_ns:
                flow(v, r0, 8_000, t, "victim-small")
                t += 50_000
        for b in bursts:
            flow(b, r1, a.burst_bytes, a.burst_start_ns + rng.randrange(1_000), "burst")
    return kinds


TCD_MSS = 1000       # the transports' default segment (docs/configuration.md)
TCD_WIRE = 70 + 24   # a segment's headers and wire overhead (docs/transports.md)
TCD_PAPER_P99 = (50.3, 36.6)  # TIMELY, TIMELY + TCD: Hadoop, flows < 50 KB (Fig. 19)


def tcd_ideal_ns(size):
    """An 8 KB victim flow's FCT on the idle fabric, by the path: its
    segments back to back at the 10 Gb/s host link, the last one stored and
    forwarded at the three 100 Gb/s hops (l0, s, l2) and 1 us on each of the
    two fabric links; its ACK (one header-only frame) back the same way, the
    last hop at 10 Gb/s. Host links have no delay."""
    pkts = -(-size // TCD_MSS)
    data = (size + pkts * TCD_WIRE) * 8 / 10 + 3 * (TCD_MSS + TCD_WIRE) * 8 / 100 + 2_000
    ack = 3 * TCD_WIRE * 8 / 100 + TCD_WIRE * 8 / 10 + 2_000
    return data + ack


def tcd_rates(d, burst_ids, a, tcd):
    """The burst flows' payload rates at r1 from r1's tx capture, sampled every
    --rate-interval from the instant l2/r1 turns congested (TCD: its first
    sample in the congestion state; plain ECN: its queue first above K, the
    instant ECN starts marking), each sample the payload that reached r1 over
    the --rate-window ending there. A sample counts the flows active through
    its whole window (first segment at r1 before it, last one after it);
    samples whose window holds a flow's first or last segment are left out.
    Fair share: r1's payload capacity (10 Gb/s x MSS / (MSS + 94)) over the
    active flows."""
    k_bytes = parse_size(a.ecn_k)
    t_cong = None
    with open(os.path.join(d, "qt.csv"), newline="") as f:
        for row in csv.DictReader(f):
            if row["switch"] != "l2" or row["port"] != "r1" or row["queue"] == "buffer":
                continue
            hit = (row["tcd_state"] == "congestion") if tcd else (
                row["queue"] == "port" and int(row["bytes"]) > k_bytes)
            if hit:
                t_cong = seconds_to_ns(float(row["time_seconds"]))
                break
    arr = [x for x in transport_frames.data_arrivals(os.path.join(d, "r1.pcap"))
           if x[1] in burst_ids]
    first, last = {}, {}
    for ts, fl, _, _ in arr:
        first.setdefault(fl, ts)
        last[fl] = ts
    capacity = 10e9 * TCD_MSS / (TCD_MSS + TCD_WIRE)
    out = {"t_congested_ms": None if t_cong is None else t_cong / 1e6,
           "capacity_gbps": capacity / 1e9, "samples": []}
    if t_cong is None or not arr:
        return out
    step, win = a.rate_interval_ns, a.rate_window_ns
    bins = {}
    for ts, fl, nb, _ in arr:
        b = ts // step
        bins.setdefault(b, {}).setdefault(fl, 0)
        bins[b][fl] += nb
    per_bin = win // step
    t = -(-t_cong // step) * step
    end = max(last.values())
    samples = []
    while t <= end:
        lo = t - per_bin * step
        edge = any(lo < first[fl] <= t or lo <= last[fl] < t for fl in first)
        active = [fl for fl in first if first[fl] <= lo and last[fl] >= t]
        if not edge and len(active) >= 2:  # one flow alone is trivially fair
            got = {fl: 0 for fl in active}
            for b in range(lo // step, t // step):
                for fl, nb in bins.get(b, {}).items():
                    if fl in got:
                        got[fl] += nb
            rates = [got[fl] * 8e9 / (per_bin * step) for fl in active]
            fair = capacity / len(active)
            jain = sum(rates) ** 2 / (len(rates) * sum(x * x for x in rates)) if any(rates) else 0.0
            samples.append({"t_ms": t / 1e6, "since_us": (t - t_cong) / 1e3, "n": len(active),
                            "fair_gbps": fair / 1e9, "rates_gbps": [x / 1e9 for x in rates],
                            "flows": active, "jain": jain,
                            "within10": all(abs(x - fair) <= 0.1 * fair for x in rates),
                            "util": sum(rates) / capacity})
        t += step
    out["samples"] = samples
    if samples:
        jains = [s["jain"] for s in samples]
        # Reached: every flow within 10 % of the fair share for one whole
        # window's worth of consecutive samples (a single sample can be a
        # crossing); settled: within 10 % at every later sample.
        reach, run_ = None, 0
        for i, s in enumerate(samples):
            run_ = run_ + 1 if s["within10"] and (
                run_ == 0 or s["since_us"] - samples[i - 1]["since_us"] <= step / 1e3) else (
                1 if s["within10"] else 0)
            if run_ >= per_bin:
                reach = samples[i - per_bin + 1]
                break
        settled = jain_settled = None
        for s in reversed(samples):
            if not s["within10"]:
                break
            settled = s
        for s in reversed(samples):
            if s["jain"] < 0.99:
                break
            jain_settled = s
        out.update({
            "judged": len(samples), "jain_min": min(jains), "jain_median": percentile(jains, 50),
            "jain_mean": sum(jains) / len(jains),
            "within10_pct": 100.0 * sum(s["within10"] for s in samples) / len(samples),
            "reach_us": None if reach is None else reach["since_us"],
            "jain099_us": None if jain_settled is None else jain_settled["since_us"],
            "settled_us": None if settled is None else settled["since_us"],
            "util_mean": sum(s["util"] for s in samples) / len(samples),
            "burst_end_ms": end / 1e6})
    return out


def run(a):
    if not 2 <= a.burst_senders <= 15:
        raise cli.ToolError("--burst-senders must be 2..15")
    # l0 holds the four 10 Gb/s victims and some burst senders, l1 the
    # rest; neither leaf's 100 Gb/s uplink is oversubscribed by its hosts'
    # links (l0 at most 5, l1 at most 10).
    burst_l0 = max(a.burst_senders - 10, min(a.burst_senders // 2, 5))
    host_list = hosts(burst_l0, a.burst_senders - burst_l0)
    hosts_ = host_list
    victims = [(h[0], h[2]) for h in hosts_ if h[3] == "victim"]
    bursts = [(h[0], h[2]) for h in hosts_ if h[3] == "burst"]
    r0 = next((h[0], h[2]) for h in hosts_ if h[0] == "r0")
    r1 = next((h[0], h[2]) for h in hosts_ if h[0] == "r1")
    a.victim_ns = seconds_to_ns(parse_time(a.victim_time))
    a.burst_start_ns = seconds_to_ns(parse_time(a.burst_start))
    a.rate_interval_ns = seconds_to_ns(parse_time(a.rate_interval))
    a.rate_window_ns = seconds_to_ns(parse_time(a.rate_window))
    if not 0 < a.rate_interval_ns <= a.rate_window_ns:
        raise cli.ToolError("--rate-interval must be positive and at most --rate-window")
    a.burst_bytes = parse_size(a.burst_size)
    topo = types.SimpleNamespace(ecn_k=a.ecn_k, xoff=a.xoff, fabric_rate="100Gbps",
                                 victim_host_rate="10Gbps", host_rate="10Gbps",
                                 victim_rx_rate="100Gbps", burst_rx_rate="10Gbps",
                                 mbufs=131072)
    variants = {
        "timely": (("ecn+pfc", {}), ("tcd+pfc", {"ue_aware": True, "beta": 1.6})),
        "dcqcn": (("ecn+pfc", {}), ("tcd+pfc", {"ue_aware": True})),
    }
    rows, series = [], {}
    sluice.expect_runs(len(a.seeds) * sum(len(variants[t]) for t in a.transports))
    for seed in a.seeds:
        for transport in a.transports:
            for scheme, params in variants[transport]:
                label = f"{transport}{'+tcd' if params else ''}"
                d = os.path.join(a.out, f"seed{seed}", label)
                shutil.rmtree(d, ignore_errors=True)
                os.makedirs(d)
                kinds = tcd_flows(os.path.join(d, "flows.csv"), victims, bursts, r0, r1, a,
                                  seed)
                cfg_path = config(topo, d, scheme, host_list)
                with open(cfg_path) as f:
                    conf = yaml.safe_load(f)
                ip_of = {h[0]: h[2] for h in hosts_}
                for sw in conf["switches"]:
                    for port in sw["ports"]:
                        if port.get("role") == "host":
                            # r1's tx capture: the bursts' data as it reaches r1.
                            port["pcap"] = ({"tx": "r1.pcap", "snaplen": 200}
                                            if port["name"] == "r1" else {})
                            port["peer_ip"] = ip_of[port["name"]]
                section = {"kind": transport, "flows": "flows.csv",
                           "completions": "completions.csv", "base_rtt": "12us"}
                if params:
                    section[transport] = dict(params)
                conf["transport"] = section
                conf["seed"] = seed
                conf["metrics"] = {"enabled": False}
                with open(os.path.join(d, "sluice.yaml"), "w") as f:
                    yaml.safe_dump(conf, f, sort_keys=False)
                seconds = sluice.REPLAY_LEAD_S + a.victim_ns / 1e9 + 0.05
                trace = ["--queue-trace", "qt.csv", "--queue-trace-interval",
                         "%.9f" % (a.rate_interval_ns / 1e9), "--queue-trace-ports", "l2/r1"]
                run_ = sluice.run(a.sluice, d, seconds, prefix=f"reproduce-{os.getpid()}-{label}",
                                  extra=trace)
                summary, wall, cpu, rss = run_.summary, run_.wall_s, run_.cpu_s, run_.rss_mb
                with open(os.path.join(d, "completions.csv"), newline="") as f:
                    done = list(csv.DictReader(f))
                by = {}
                unfinished = 0
                for r in done:
                    kind = kinds[int(r["flow_id"])][0]
                    if r["finished"] != "1":
                        unfinished += 1
                        fct = float(r["observed_until"]) - float(r["start_time"])
                    else:
                        fct = float(r["fct_seconds"])
                    by.setdefault(kind, []).append(fct * 1e6)
                small, large, burst = by["victim-small"], by["victim-large"], by["burst"]
                small_sd = [max(1.0, x * 1e3 / tcd_ideal_ns(8_000)) for x in small]
                rates = tcd_rates(d, {i for i, (k, _) in kinds.items() if k == "burst"}, a,
                                  scheme.startswith("tcd"))
                tcd = [p for sw in summary["switches"] for p in sw["ports"] if "tcd_ue_marks" in p]
                row = {"seed": seed, "transport": transport, "label": label, "scheme": scheme,
                       "small_mean_us": sum(small) / len(small),
                       "small_p99_us": percentile(small, 99),
                       "small_min_us": min(small),
                       "small_mean_slowdown": sum(small_sd) / len(small_sd),
                       "small_p99_slowdown": percentile(small_sd, 99),
                       "large_mean_us": sum(large) / len(large),
                       "burst_mean_us": sum(burst) / len(burst),
                       "flows": len(done), "unfinished": unfinished,
                       "pfc_frames": sum(p.get("pfc_frames_sent", 0) for sw in summary["switches"]
                                         for p in sw["ports"]),
                       "ue_marked": sum(p.get("tcd_ue_marks", 0) for p in tcd),
                       "ce_marked": sum(p.get("tcd_ce_marks", 0) for p in tcd),
                       "drops": counters.total_drops(summary),
                       "wall_s": wall, "cpu_s": cpu, "rss_mb": rss,
                       "rates": {k: v for k, v in rates.items() if k != "samples"}}
                rows.append(row)
                series[(seed, label)] = rates
                print(f"reproduce: seed {seed} {label}: victims 8 KB mean "
                      f"{row['small_mean_us']:.1f} us p99 {row['small_p99_us']:.1f} us, 4 MB "
                      f"mean {row['large_mean_us']:.0f} us; wall {wall:.1f} s", flush=True)
    print()
    print("| seed | transport | switches | victims 8 KB mean us | p99 us | victims 4 MB mean us "
          "| bursts mean us | unfinished | PFC frames | UE / CE marked | drops | wall s |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---|---:|---:|")
    for r in rows:
        print(f"| {r['seed']} | {r['label']} | {r['scheme']} | {r['small_mean_us']:.1f} | "
              f"{r['small_p99_us']:.1f} | {r['large_mean_us']:.0f} | {r['burst_mean_us']:.0f} | "
              f"{r['unfinished']} | {r['pfc_frames']} | {r['ue_marked']} / {r['ce_marked']} | "
              f"{r['drops']} | {r['wall_s']:.1f} |")
    by_key = {(r["seed"], r["label"]): r for r in rows}
    for seed in a.seeds:
        for transport in a.transports:
            base, tcd = by_key[(seed, transport)], by_key[(seed, transport + "+tcd")]
            print(f"seed {seed} {transport}: with TCD the victims' 8 KB mean FCT is "
                  f"{base['small_mean_us'] / tcd['small_mean_us']:.2f}x better, 4 MB "
                  f"{base['large_mean_us'] / tcd['large_mean_us']:.2f}x (paper, TIMELY: 2.2x "
                  f"and 2.3x)")
    if len(a.seeds) > 1:
        print()
        print(f"Mean over seeds {','.join(map(str, a.seeds))} (min-max)")
        print("| transport | victims 8 KB mean us | p99 us | victims 4 MB mean us | "
              "bursts mean us | 8 KB mean slowdown | 8 KB p99 slowdown | PFC frames | drops |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        for label in [lb for t in a.transports for lb in (t, t + "+tcd")]:
            rs = [r for r in rows if r["label"] == label]
            cell = lambda k, fmt="%.3g": spread.text([r[k] for r in rs], fmt)  # noqa: E731
            print(f"| {label} | {cell('small_mean_us')} | {cell('small_p99_us')} | "
                  f"{cell('large_mean_us')} | {cell('burst_mean_us')} | "
                  f"{cell('small_mean_slowdown')} | {cell('small_p99_slowdown')} | "
                  f"{cell('pfc_frames', '%.0f')} | {cell('drops', '%.0f')} |")
    write_tcd_rates(a, rows, series)


def write_tcd_rates(a, rows, series):
    """The victims' 8 KB slowdown beside the paper's p99, the bursts' rates
    against their fair share, results.json and tcd_rates.png."""
    ideal = tcd_ideal_ns(8_000) / 1e3
    print()
    print(f"Victims' 8 KB flows, FCT slowdown (FCT / {ideal:.2f} us, the flow alone on its "
          "path), beside the paper's TIMELY p99 50.3 -> 36.6 (Fig. 19: Hadoop workload, "
          "flows < 50 KB; not this scenario):")
    print("| seed | transport | mean slowdown | p99 slowdown | p99 FCT us | paper p99 |")
    print("|---|---|---:|---:|---:|---:|")
    for r in rows:
        paper = {"timely": TCD_PAPER_P99[0], "timely+tcd": TCD_PAPER_P99[1]}.get(r["label"])
        print(f"| {r['seed']} | {r['label']} | {r['small_mean_slowdown']:.2f} | "
              f"{r['small_p99_slowdown']:.2f} | {r['small_p99_us']:.1f} | "
              f"{'-' if paper is None else paper} |")
    print()
    print(f"Burst flows at r1 (congested at l2/r1), rates over {a.rate_window} windows every "
          f"{a.rate_interval} from l2/r1's congestion; fair share = r1's payload capacity / "
          "active flows; paper (section 5.2.4, Fig. 20): congested flows reach their fair "
          "share (8 Gb/s there) with TCD, no time given:")
    print("| seed | transport | congested at ms | bursts end ms | samples | Jain min / median "
          "| Jain >= 0.99 from us on | within 10 % for a window from us | within 10 % from us "
          "on | samples within 10 % | link used | wall s | CPU s | RSS MB |")
    print("|---|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")

    def us(x):
        return "never" if x is None else "%.0f" % x
    for r in rows:
        q = r["rates"]
        if not q.get("judged"):
            print(f"| {r['seed']} | {r['label']} | {q['t_congested_ms']} | - | 0 | - | - | - | - "
                  f"| - | - | {r['wall_s']:.1f} | {r['cpu_s']:.1f} | {r['rss_mb']:.0f} |")
            continue
        print(f"| {r['seed']} | {r['label']} | {q['t_congested_ms']:.3f} | {q['burst_end_ms']:.3f} "
              f"| {q['judged']} | {q['jain_min']:.3f} / {q['jain_median']:.3f} | "
              f"{us(q['jain099_us'])} | {us(q['reach_us'])} | {us(q['settled_us'])} | {q['within10_pct']:.0f} % | "
              f"{100 * q['util_mean']:.0f} % | {r['wall_s']:.1f} | {r['cpu_s']:.1f} | "
              f"{r['rss_mb']:.0f} |")
    with open(os.path.join(a.out, "results.json"), "w") as f:
        json.dump({"rows": rows, "args": vars(a),
                   "rate_samples": {f"seed{k[0]}/{k[1]}": v["samples"]
                                    for k, v in series.items()}}, f, indent=2, default=str)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise cli.ToolError("Python module 'matplotlib' is missing "
                            "(Debian: apt-get install python3-matplotlib)")
    seed = a.seeds[0]
    labels = [lb for t in a.transports for lb in (t, t + "+tcd")]
    fig, axes = plt.subplots(2, len(labels), figsize=(3.2 * len(labels), 5.2), sharex=True,
                             sharey="row", squeeze=False, gridspec_kw={"height_ratios": [3, 1]})
    for col, label in enumerate(labels):
        q = series[(seed, label)]
        top, bottom = axes[0][col], axes[1][col]
        flows = sorted({fl for s_ in q["samples"] for fl in s_["flows"]})
        for fl in flows:
            pts = [(s_["since_us"], s_["rates_gbps"][s_["flows"].index(fl)])
                   for s_ in q["samples"] if fl in s_["flows"]]
            top.plot([p[0] for p in pts], [p[1] for p in pts], ".", ms=1.5)
        xs = [s_["since_us"] for s_ in q["samples"]]
        fair = [s_["fair_gbps"] for s_ in q["samples"]]
        top.plot(xs, fair, "k-", lw=0.8, label="fair share")
        top.fill_between(xs, [0.9 * f_ for f_ in fair], [1.1 * f_ for f_ in fair], color="0.85",
                         label="fair share +-10 %")
        top.set_title(label.replace("+tcd", " + TCD").upper().replace("TIMELY + TCD",
                      "TIMELY + TCD"), fontsize=9)
        bottom.plot(xs, [s_["jain"] for s_ in q["samples"]], "k.", ms=1.5)
        bottom.set_xlabel("us since l2/r1 turned congested")
        if col == 0:
            top.set_ylabel(f"burst flow rate at r1 (Gb/s, {a.rate_window} window)")
            bottom.set_ylabel("Jain's index")
            top.legend(fontsize=7, loc="upper right")
        bottom.set_ylim(0, 1.05)
    fig.suptitle(f"TCD victim scenario: the {a.burst_senders} burst flows of {a.burst_size} "
                 f"into r1 (10 Gb/s), seed {seed}", fontsize=10)
    fig.tight_layout()
    fig.savefig(os.path.join(a.out, "tcd_rates.png"), dpi=110)
    print(f"reproduce: wrote {a.out}/results.json and tcd_rates.png")


def main(argv):
    p = argparse.ArgumentParser(prog="tools/reproduce tcd-victim",
                                description=VICTIM_DOC.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog=VICTIM_DOC.split("\n\n", 1)[1])
    p.add_argument("--seeds", default="1", help="comma-separated seeds (1)")
    p.add_argument("--transports", default="timely,dcqcn", help="timely, dcqcn (both)")
    p.add_argument("--burst-size", default="400KB", help="each burst sender's flow (400KB)")
    p.add_argument("--burst-senders", type=int, default=8,
                   help="how many hosts send a burst to r1 (8; the paper's section 5.2.4 has "
                        "15, A0..A14)")
    p.add_argument("--burst-start", default="2ms", help="when the bursts start (2ms)")
    p.add_argument("--victim-time", default="10ms",
                   help="the victims send 8 KB flows until then (10ms)")
    p.add_argument("--ecn-k", default="20KB", help="ECN K and TCD's q_th (20KB)")
    p.add_argument("--xoff", default="50KB", help="PFC XOFF (50KB)")
    p.add_argument("--rate-interval", default="10us",
                   help="the bursts' rates at r1 (and l2/r1's queue trace) are sampled this "
                        "often (10us)")
    p.add_argument("--rate-window", default="100us",
                   help="each rate sample is the payload that reached r1 over this window "
                        "ending at the sample (100us; at the fair share a burst flow gets "
                        "about one 1 KB segment per 10 us)")
    p.add_argument("--out", default=os.path.join(ROOT, "runs", "reproduce", "tcd-victim"))
    p.add_argument("--sluice", default=sluice.BINARY)
    a = p.parse_args(argv)
    try:
        a.seeds = [int(s) for s in a.seeds.split(",") if s.strip()]
    except ValueError:
        p.error("--seeds: expected comma-separated integers")
    a.transports = [t for t in a.transports.split(",") if t]
    for t in a.transports:
        if t not in ("timely", "dcqcn"):
            p.error(f"--transports: unknown transport {t!r} (timely, dcqcn)")
    a.sluice = os.path.abspath(a.sluice)
    a.out = os.path.abspath(a.out)
    os.makedirs(a.out, exist_ok=True)
    run(a)
    provenance.write(a.out, seeds=a.seeds, binaries=[a.sluice])
    return 0
