"""Open-loop workload generation: flow arrivals, per-host scheduling, pcaps.

Load: each sending host offers `load x link_rate` on its link, counted in wire
bytes (frames plus FCS, preamble and inter-frame gap: payload.flow_wire_bytes).
Flow arrival rate per host = load x rate / (8 x E[wire bytes of a flow]), the
expectation taken exactly over the (capped) size distribution. Incast traffic
comes on top of that.

Scheduling: a host is one FIFO serialisation queue at its link rate. A flow is
queued at its arrival time and sent when the host is free, its packets back to
back at the exact line rate (each stamp rounded up to a whole ns, without
drift). So a host's packets never overlap (beyond that sub-ns rounding) and a
flow's start time is when its first packet leaves; the host is free again at
start + the flow's wire time, rounded up.
"""

import csv
import json
import math
import os
import random
from dataclasses import dataclass

from . import payload
from .pcapio import PcapWriter
from .units import format_ns


@dataclass
class Params:
    cdf_path: str
    load: float
    link_rate_bps: int
    duration_ns: int
    seed: int
    arrivals: str = "poisson"
    lognormal_sigma: float = 2.0
    mtu: int = payload.DEFAULT_MTU
    dst_port: int = payload.DEFAULT_DST_PORT
    ecn: bool = True
    dscp: int = 0
    max_flow_size: int = 0
    time_offset_ns: int = 1000
    incast_degree: int = 0
    incast_size: int = 0
    incast_period_ns: int = 0
    incast_receiver: str = ""
    incast_start_ns: int = 0
    incast_senders: tuple = ()  # names the senders are drawn from (default: every other host)
    snaplen: int = 0  # > 0: records keep that many bytes, their wire length stated


@dataclass
class Flow:
    flow_id: int
    src: int
    dst: int
    size: int
    arrival_ns: int
    is_incast: bool
    start_ns: int = 0
    end_ns: int = 0
    packets: int = 0


def mean_flow_wire_bytes(cdf, params):
    return cdf.expectation(lambda s: payload.flow_wire_bytes(s, params.mtu),
                           params.max_flow_size or None)


def flow_rate_per_host(cdf, params):
    """Background flow arrivals per second on each sending host."""
    if params.load <= 0:
        return 0.0
    return params.load * params.link_rate_bps / (8.0 * mean_flow_wire_bytes(cdf, params))


def _gap_sampler(rng, params, rate):
    mean = 1.0 / rate
    if params.arrivals == "poisson":
        return lambda: -math.log(1.0 - rng.random()) * mean
    if params.arrivals == "lognormal":
        sigma = params.lognormal_sigma
        mu = math.log(mean) - sigma * sigma / 2.0  # E[gap] = mean
        return lambda: math.exp(rng.normalvariate(mu, sigma))
    raise ValueError("unknown arrival process %r" % params.arrivals)


def background_flows(cdf, hosts, params):
    """(src, dst, size, arrival_ns) of every background flow; each host draws
    from its own generator, seeded by (seed, host name)."""
    rate = flow_rate_per_host(cdf, params)
    flows = []
    if rate == 0:
        return flows
    for h in hosts:
        rng = random.Random("%d/background/%s" % (params.seed, h.name))
        gap = _gap_sampler(rng, params, rate)
        others = [o.index for o in hosts if o.index != h.index]
        t = gap()
        while t < params.duration_ns / 1e9:
            dst = others[rng.randrange(len(others))]
            size = cdf.size_at(rng.random(), params.max_flow_size or None)
            flows.append((h.index, dst, size, params.time_offset_ns + round(t * 1e9)))
            t += gap()
    return flows


def incast_flows(hosts, params):
    """Every period, `degree` random senders (not the receiver) each send
    size/degree bytes (the remainder spread one byte each over the first
    senders, so the total is exact) to the receiver at the same instant."""
    if params.incast_degree <= 0:
        return []
    by_name = {h.name: h for h in hosts}
    random_receiver = params.incast_receiver == "random"
    if not random_receiver and params.incast_receiver not in by_name:
        raise ValueError("incast receiver %r is not in the host list" % params.incast_receiver)
    if params.incast_senders:
        unknown = [n for n in params.incast_senders if n not in by_name]
        if unknown:
            raise ValueError("incast senders not in the host list: %s" % ", ".join(unknown))
        pool = [by_name[n].index for n in params.incast_senders]
        if not random_receiver and by_name[params.incast_receiver].index in pool:
            raise ValueError("the incast senders must not include the receiver")
        if params.incast_degree > len(pool) - (1 if random_receiver else 0):
            raise ValueError("incast degree %d > %d possible senders"
                             % (params.incast_degree, len(pool)))
    elif params.incast_degree > len(hosts) - 1:
        raise ValueError("incast degree %d > %d possible senders"
                         % (params.incast_degree, len(hosts) - 1))
    if params.incast_period_ns <= 0 or params.incast_size < params.incast_degree:
        raise ValueError("incast needs a positive period and at least one byte per sender")
    rng = random.Random("%d/incast" % params.seed)
    base, extra = divmod(params.incast_size, params.incast_degree)
    flows = []
    t = params.incast_start_ns
    while t < params.duration_ns:
        # "random": each event has its own receiver (the BFC paper's
        # incasts, several targets at once).
        recv = (rng.choice(hosts).index if random_receiver
                else by_name[params.incast_receiver].index)
        if params.incast_senders:
            others = [i for i in pool if i != recv]
        else:
            others = [h.index for h in hosts if h.index != recv]
        senders = sorted(rng.sample(others, params.incast_degree))
        for k, src in enumerate(senders):
            flows.append((src, recv, base + (1 if k < extra else 0), params.time_offset_ns + t, True))
        t += params.incast_period_ns
    return flows


def make_flows(cdf, hosts, params):
    """All flows, numbered from 1 in (arrival, sender) order, and scheduled."""
    raw = [f + (False,) for f in background_flows(cdf, hosts, params)]
    raw += incast_flows(hosts, params)
    raw.sort(key=lambda f: (f[3], f[0], f[4], f[1], f[2]))
    flows = [Flow(i + 1, src, dst, size, t, inc) for i, (src, dst, size, t, inc) in enumerate(raw)]
    schedule(flows, params)
    return flows


def schedule(flows, params):
    """Per-host FIFO at line rate (flows must be in arrival order)."""
    free = {}
    for f in flows:
        f.packets = payload.packet_count(f.size, params.mtu)
        f.start_ns = max(f.arrival_ns, free.get(f.src, 0))
        f.end_ns = f.start_ns + payload.serialisation_ns(
            payload.flow_wire_bytes(f.size, params.mtu), params.link_rate_bps)
        free[f.src] = f.end_ns


def open_pcap(path, params):
    """A host's workload capture: whole frames, or with params.snaplen their
    first bytes and their wire length."""
    return PcapWriter(path, params.snaplen) if params.snaplen else PcapWriter(path)


def write_frame(w, t, builder, seq, offset, app, ip_id, params):
    if params.snaplen:
        w.write(t, builder.frame(seq, offset, app, ip_id, keep=params.snaplen),
                payload.frame_len(app))
    else:
        w.write(t, builder.frame(seq, offset, app, ip_id))


def write_pcaps(flows, hosts, params, out_dir):
    """DIR/<host>.pcap for every host (empty if it sends nothing). Returns the
    number of packets written per host name."""
    full_app = payload.app_per_packet(params.mtu)
    full_wire = payload.wire_len(full_app)
    rate = params.link_rate_bps
    tos = (params.dscp << 2) | (payload.ECN_ECT0 if params.ecn else 0)
    per_host = {h.index: [] for h in hosts}
    for f in flows:
        per_host[f.src].append(f)
    counts = {}
    for h in hosts:
        ip_id = 0
        with open_pcap(os.path.join(out_dir, h.name + ".pcap"), params) as w:
            for f in per_host[h.index]:
                dst = hosts[f.dst]
                b = payload.FrameBuilder(h.mac, h.gateway_mac, h.ip, dst.ip, f.flow_id,
                                         f.size, h.index, params.dst_port, tos)
                # Packet k leaves when k full packets have been sent at the
                # exact line rate, rounded up to whole ns (no drift).
                for seq in range(f.packets - 1):
                    t = f.start_ns + payload.serialisation_ns(seq * full_wire, rate)
                    write_frame(w, t, b, seq, seq * full_app, full_app, ip_id, params)
                    ip_id = (ip_id + 1) & 0xFFFF
                seq = f.packets - 1
                t = f.start_ns + payload.serialisation_ns(seq * full_wire, rate)
                write_frame(w, t, b, seq, seq * full_app, f.size - seq * full_app, ip_id, params)
                ip_id = (ip_id + 1) & 0xFFFF
        counts[h.name] = sum(f.packets for f in per_host[h.index])
    return counts


FLOW_FIELDS = ["flow_id", "src", "dst", "src_ip", "dst_ip", "size", "packets",
               "arrival_time", "start_time", "end_time", "is_incast"]


def write_flows_csv(flows, hosts, path):
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(FLOW_FIELDS)
        for fl in flows:
            s, d = hosts[fl.src], hosts[fl.dst]
            w.writerow([fl.flow_id, s.name, d.name, s.ip, d.ip, fl.size, fl.packets,
                        format_ns(fl.arrival_ns), format_ns(fl.start_ns),
                        format_ns(fl.end_ns), int(fl.is_incast)])


def summary(cdf, hosts, params, flows):
    """Parameters and derived numbers, for workload.json."""
    mean_wire = mean_flow_wire_bytes(cdf, params)
    bg = [f for f in flows if not f.is_incast]
    window_s = params.duration_ns / 1e9
    offered = sum(payload.flow_wire_bytes(f.size, params.mtu) for f in bg) * 8
    inc_bytes = sum(payload.flow_wire_bytes(f.size, params.mtu) for f in flows if f.is_incast) * 8
    return {
        "format": "sluice-workload-1",
        "cdf": params.cdf_path,
        "load": params.load,
        "link_rate_bps": params.link_rate_bps,
        "duration_seconds": window_s,
        "seed": params.seed,
        "arrivals": params.arrivals,
        "lognormal_sigma": params.lognormal_sigma if params.arrivals == "lognormal" else None,
        "mtu": params.mtu,
        "dst_port": params.dst_port,
        "ecn": params.ecn,
        "dscp": params.dscp,
        "max_flow_size": params.max_flow_size or None,
        "time_offset_seconds": params.time_offset_ns / 1e9,
        "incast": None if params.incast_degree <= 0 else {
            "degree": params.incast_degree, "size": params.incast_size,
            "period_seconds": params.incast_period_ns / 1e9,
            "start_seconds": params.incast_start_ns / 1e9,
            "receiver": params.incast_receiver,
            **({"senders": list(params.incast_senders)} if params.incast_senders else {})},
        "hosts": [{"name": h.name, "ip": h.ip, "mac": h.mac, "gateway_mac": h.gateway_mac}
                  for h in hosts],
        "derived": {
            "app_bytes_per_full_packet": payload.app_per_packet(params.mtu),
            "wire_overhead_per_packet": payload.HEADERS_LEN + payload.WIRE_EXTRA,
            "mean_flow_size": cdf.expectation(lambda s: s, params.max_flow_size or None),
            "mean_flow_wire_bytes": mean_wire,
            "flow_arrivals_per_host_per_second": flow_rate_per_host(cdf, params),
            "flows": len(flows),
            "background_flows": len(bg),
            "incast_flows": len(flows) - len(bg),
            "packets": sum(f.packets for f in flows),
            "offered_background_load": offered / (window_s * params.link_rate_bps * len(hosts)),
            "offered_incast_load": inc_bytes / (window_s * params.link_rate_bps * len(hosts)),
            "last_packet_end_seconds": max((f.end_ns for f in flows), default=0) / 1e9,
        },
    }


def generate(cdf, hosts, params, out_dir, pcaps=True):
    """Flows, their captures (unless pcaps is False: transport hosts need
    only flows.csv), flows.csv and workload.json."""
    os.makedirs(out_dir, exist_ok=True)
    flows = make_flows(cdf, hosts, params)
    if pcaps:
        write_pcaps(flows, hosts, params, out_dir)
    write_flows_csv(flows, hosts, os.path.join(out_dir, "flows.csv"))
    info = summary(cdf, hosts, params, flows)
    with open(os.path.join(out_dir, "workload.json"), "w") as f:
        json.dump(info, f, indent=2, sort_keys=True)
        f.write("\n")
    return flows, info
