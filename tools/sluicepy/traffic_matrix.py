"""A fixed traffic matrix (tools/workload --matrix FILE, docs/workloads.md):
who sends to whom, each entry with its own flow sizes and load, instead of
every host sending to uniformly drawn destinations.

    streams:
      - {src: g1, dst: r1, cdf: websearch.cdf, load: 0.4, max_flow_size: 200KB}
      - {src: g2, dst: r2, size: 20MB, count: 2}

An entry with `cdf` and `load` is one stream of flows arriving as a Poisson
(or lognormal) process that offers `load` x link rate on the sender's link,
sizes from the CDF (a relative path is relative to the matrix file), in
[start, stop) (default [0, --duration)). An entry with `size` is `count`
streams (default 1) of one flow each, all arriving at `start` (default 0):
long-lived flows. `dst` is a host name or a list (drawn uniformly per flow).

Scheduling: a host's streams share its link packet by packet, round robin
over the streams that have a packet ready (several connections on one NIC);
the flows of one stream go one after the other, each as soon as it has
arrived and the previous one has left (as a host without --matrix). Stamps
are exact at line rate within a busy period (rounded up to whole ns, no
drift).
"""

import json
import os
import random

import yaml

from . import payload, workload_gen
from .cdf import FlowSizeCdf
from .units import parse_size, parse_time, seconds_to_ns
from .workload_gen import Flow, _gap_sampler, write_flows_csv

_POISSON_KEYS = {"src", "dst", "cdf", "load", "max_flow_size", "arrivals", "start", "stop"}
_FIXED_KEYS = {"src", "dst", "size", "count", "start"}


class Stream:
    """One sender-side FIFO of flows."""

    def __init__(self, number, src, entry):
        self.number, self.src, self.entry = number, src, entry
        self.flows = []


def load_matrix(path, hosts):
    """Parses the matrix file into a list of entry dicts with resolved values."""
    with open(path) as f:
        doc = yaml.safe_load(f)
    items = doc.get("streams") if isinstance(doc, dict) else None
    if not isinstance(items, list) or not items:
        raise ValueError("%s: expected a non-empty 'streams:' list" % path)
    by_name = {h.name: h for h in hosts}
    base = os.path.dirname(os.path.abspath(path))
    entries = []
    for i, item in enumerate(items, 1):
        where = "%s: stream %d" % (path, i)
        if not isinstance(item, dict):
            raise ValueError("%s: expected a map" % where)
        fixed = "size" in item
        allowed = _FIXED_KEYS if fixed else _POISSON_KEYS
        unknown = set(item) - allowed
        if unknown:
            raise ValueError("%s: unknown key(s) %s for a %s stream" % (
                where, ", ".join(sorted(unknown)), "fixed-size" if fixed else "cdf"))
        e = {"index": i}
        for key in ("src", "dst"):
            if key not in item:
                raise ValueError("%s: needs %s" % (where, key))
        if str(item["src"]) not in by_name:
            raise ValueError("%s: unknown src host %r" % (where, item["src"]))
        e["src"] = by_name[str(item["src"])].index
        dsts = item["dst"] if isinstance(item["dst"], list) else [item["dst"]]
        e["dst"] = []
        for d in dsts:
            if str(d) not in by_name:
                raise ValueError("%s: unknown dst host %r" % (where, d))
            if by_name[str(d)].index == e["src"]:
                raise ValueError("%s: a host cannot send to itself (%s)" % (where, d))
            e["dst"].append(by_name[str(d)].index)
        e["start_ns"] = seconds_to_ns(parse_time(item.get("start", 0)))
        if fixed:
            e["size"] = parse_size(item["size"])
            e["count"] = int(item.get("count", 1))
            if e["size"] < 1 or e["count"] < 1:
                raise ValueError("%s: size and count must be positive" % where)
        else:
            if "cdf" not in item or "load" not in item:
                raise ValueError("%s: needs either size, or cdf and load" % where)
            cdf_path = str(item["cdf"])
            if not os.path.isabs(cdf_path):
                cdf_path = os.path.join(base, cdf_path)
            e["cdf_path"] = cdf_path
            e["cdf"] = FlowSizeCdf.from_file(cdf_path)
            e["load"] = float(item["load"])
            if not 0 < e["load"] < 1:
                raise ValueError("%s: load must be in (0, 1)" % where)
            e["max_flow_size"] = parse_size(item.get("max_flow_size", 0))
            e["arrivals"] = str(item.get("arrivals", ""))
            e["stop_ns"] = (seconds_to_ns(parse_time(item["stop"])) if "stop" in item else None)
        entries.append(e)
    return entries


def _mean_wire(entry, params):
    return entry["cdf"].expectation(lambda s: payload.flow_wire_bytes(s, params.mtu),
                                    entry["max_flow_size"] or None)


def make_streams(entries, params):
    """Streams with their flows (src, dst, size, arrival_ns) drawn; each entry
    has its own random generator, seeded by (seed, entry number)."""
    streams = []
    for e in entries:
        rng = random.Random("%d/matrix/%d" % (params.seed, e["index"]))
        if "size" in e:
            for _ in range(e["count"]):
                s = Stream(len(streams), e["src"], e)
                dst = e["dst"][rng.randrange(len(e["dst"]))]
                s.flows.append([dst, e["size"], params.time_offset_ns + e["start_ns"]])
                streams.append(s)
            continue
        s = Stream(len(streams), e["src"], e)
        rate = e["load"] * params.link_rate_bps / (8.0 * _mean_wire(e, params))
        sampler_params = params
        if e["arrivals"]:
            sampler_params = type(params)(**{**params.__dict__, "arrivals": e["arrivals"]})
        gap = _gap_sampler(rng, sampler_params, rate)
        stop_ns = e["stop_ns"] if e["stop_ns"] is not None else params.duration_ns
        t = e["start_ns"] / 1e9 + gap()
        while t < stop_ns / 1e9:
            dst = e["dst"][rng.randrange(len(e["dst"]))]
            size = e["cdf"].size_at(rng.random(), e["max_flow_size"] or None)
            s.flows.append([dst, size, params.time_offset_ns + round(t * 1e9)])
            t += gap()
        streams.append(s)
    return streams


def number_flows(streams):
    """Flow objects numbered from 1 in (arrival, sender, stream) order; each
    stream's list is replaced by its Flow objects, in arrival order."""
    raw = [(arr, s.src, s.number, k, dst, size)
           for s in streams for k, (dst, size, arr) in enumerate(s.flows)]
    raw.sort()
    flows = []
    per_stream = {s.number: [] for s in streams}
    for i, (arr, src, number, _, dst, size) in enumerate(raw):
        f = Flow(i + 1, src, dst, size, arr, False)
        flows.append(f)
        per_stream[number].append(f)
    for s in streams:
        s.flows = per_stream[s.number]
    return flows


def schedule_host(streams, params):
    """Round robin over one host's streams, one packet at a time. Returns the
    host's packets as (time_ns, flow, seq, app_bytes) in sending order and
    sets each flow's start_ns, end_ns and packets."""
    full = payload.app_per_packet(params.mtu)
    rate = params.link_rate_bps
    heads = [0] * len(streams)   # index of the stream's current flow
    seqs = [0] * len(streams)    # next packet of that flow
    for s in streams:
        for f in s.flows:
            f.packets = payload.packet_count(f.size, params.mtu)
    out = []
    busy_start, busy_bits, now = None, 0, 0
    turn = 0
    while True:
        ready = [k for k, s in enumerate(streams)
                 if heads[k] < len(s.flows) and s.flows[heads[k]].arrival_ns <= now]
        if not ready:
            waiting = [s.flows[heads[k]].arrival_ns for k, s in enumerate(streams)
                       if heads[k] < len(s.flows)]
            if not waiting:
                return out
            now = max(now, min(waiting))
            busy_start, busy_bits = now, 0  # the wire was idle: a new busy period
            continue
        k = min(ready, key=lambda j: (j - turn) % len(streams))
        turn = k + 1
        f = streams[k].flows[heads[k]]
        seq = seqs[k]
        app = full if seq < f.packets - 1 else f.size - (f.packets - 1) * full
        if seq == 0:
            f.start_ns = now
        out.append((now, f, seq, app))
        busy_bits += payload.wire_len(app) * 8
        now = busy_start + -(-busy_bits * 10**9 // rate)
        if seq == f.packets - 1:
            f.end_ns = now
            heads[k] += 1
            seqs[k] = 0
        else:
            seqs[k] = seq + 1


def write_host_pcap(path, host, hosts, packets, params):
    tos = (params.dscp << 2) | (payload.ECN_ECT0 if params.ecn else 0)
    builders = {}
    ip_id = 0
    with workload_gen.open_pcap(path, params) as w:
        for t, f, seq, app in packets:
            b = builders.get(f.flow_id)
            if b is None:
                dst = hosts[f.dst]
                b = builders[f.flow_id] = payload.FrameBuilder(
                    host.mac, host.gateway_mac, host.ip, dst.ip, f.flow_id, f.size,
                    host.index, params.dst_port, tos)
            workload_gen.write_frame(w, t, b, seq, seq * payload.app_per_packet(params.mtu), app,
                                     ip_id, params)
            ip_id = (ip_id + 1) & 0xFFFF


def describe(entries, hosts, streams, params):
    """The matrix part of workload.json: each entry and what it offered."""
    out = []
    for e in entries:
        flows = [f for s in streams if s.entry is e for f in s.flows]
        d = {"src": hosts[e["src"]].name, "dst": [hosts[i].name for i in e["dst"]],
             "start_seconds": e["start_ns"] / 1e9, "flows": len(flows),
             "bytes": sum(f.size for f in flows)}
        if "size" in e:
            d.update(size=e["size"], count=e["count"])
        else:
            wire = sum(payload.flow_wire_bytes(f.size, params.mtu) for f in flows) * 8
            stop = e["stop_ns"] if e["stop_ns"] is not None else params.duration_ns
            span = (stop - e["start_ns"]) / 1e9
            d.update(cdf=e["cdf_path"], load=e["load"],
                     max_flow_size=e["max_flow_size"] or None,
                     arrivals=e["arrivals"] or params.arrivals,
                     stop_seconds=stop / 1e9,
                     mean_flow_wire_bytes=_mean_wire(e, params),
                     offered_load=wire / (span * params.link_rate_bps) if span > 0 else None)
        out.append(d)
    return out


def generate(hosts, params, matrix_path, out_dir):
    """Writes DIR/<host>.pcap for every host (empty if it sends nothing),
    flows.csv and workload.json; returns (flows, workload.json contents)."""
    os.makedirs(out_dir, exist_ok=True)
    entries = load_matrix(matrix_path, hosts)
    streams = make_streams(entries, params)
    flows = number_flows(streams)
    for h in hosts:
        mine = [s for s in streams if s.src == h.index]
        packets = schedule_host(mine, params)
        write_host_pcap(os.path.join(out_dir, h.name + ".pcap"), h, hosts, packets, params)
    write_flows_csv(flows, hosts, os.path.join(out_dir, "flows.csv"))
    info = summary(hosts, params, matrix_path, describe(entries, hosts, streams, params), flows)
    with open(os.path.join(out_dir, "workload.json"), "w") as f:
        json.dump(info, f, indent=2, sort_keys=True)
        f.write("\n")
    return flows, info


def summary(hosts, params, matrix_path, streams_info, flows):
    """workload.json of a matrix workload (the fields of the uniform mode that
    apply, plus the streams)."""
    return {
        "format": "sluice-workload-1",
        "matrix": matrix_path,
        "streams": streams_info,
        "link_rate_bps": params.link_rate_bps,
        "duration_seconds": params.duration_ns / 1e9,
        "seed": params.seed,
        "arrivals": params.arrivals,
        "mtu": params.mtu,
        "dst_port": params.dst_port,
        "ecn": params.ecn,
        "dscp": params.dscp,
        "time_offset_seconds": params.time_offset_ns / 1e9,
        "hosts": [{"name": h.name, "ip": h.ip, "mac": h.mac, "gateway_mac": h.gateway_mac}
                  for h in hosts],
        "derived": {
            "app_bytes_per_full_packet": payload.app_per_packet(params.mtu),
            "wire_overhead_per_packet": payload.HEADERS_LEN + payload.WIRE_EXTRA,
            "flows": len(flows),
            "background_flows": len(flows),
            "incast_flows": 0,
            "packets": sum(f.packets for f in flows),
            "last_packet_end_seconds": max((f.end_ns for f in flows), default=0) / 1e9,
        },
    }
