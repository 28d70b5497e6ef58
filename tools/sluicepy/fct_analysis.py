"""Flow completion times from receiver captures.

Clocks: flows.csv times are sender (pcap) time. The replaying switch starts
sender time 0 at receiver-clock instant `start_offset` (optionally stretched by
`time_scale`), so a flow starts at start_offset + scale x start_time.

Arrival of a packet's last byte: the capture stamp plus the packet's wire time
at the link rate when the stamp is the first bit (default, a port writing what
it sends stamps the send instant), or the stamp itself with rx_stamp="last-bit".
A flow finishes when every sequence number has arrived; its completion time is
the last of those first arrivals minus its start.

Ideal FCT = wire bytes of the flow x 8 / link rate + base RTT / 2, wire bytes =
size + packets x 90 (66 bytes of Ethernet/IPv4/UDP/SLW1 headers and 24 of FCS,
preamble and inter-frame gap per packet). Slowdown = FCT / ideal, clamped at 1.

Unfinished flows are not left out (that would let a scheme that strands
flows look better): a flow still unfinished at the end of observation gets
FCT = end of observation - its start, flagged as censored. Its true FCT is at
least that, so every statistic that includes one is a lower bound.
"""

import csv
import decimal
import json
import math
from dataclasses import dataclass, field

from . import payload
from .pcapio import read_pcap
from .units import parse_ns

PER_PACKET_WIRE = payload.HEADERS_LEN + payload.WIRE_EXTRA  # 90
BUCKETS = [(0, 10_000, "<10KB"), (10_000, 100_000, "10KB-100KB"),
           (100_000, 1_000_000, "100KB-1MB"), (1_000_000, math.inf, ">=1MB")]
PERCENTILES = (50, 95, 99)


@dataclass
class FlowSpec:
    flow_id: int
    src: str
    dst: str
    size: int
    packets: int
    start_ns: int  # sender clock
    is_incast: bool = False


@dataclass
class FlowRx:
    seen: bytearray
    unique: int = 0
    duplicates: int = 0
    reordered: int = 0
    ce: int = 0
    max_seq: int = -1
    last_ts: int | None = None  # stamp of the packet whose last byte came last
    last_wire: float = 0.0      # its wire time, added when stamps mark the first bit


@dataclass
class FlowResult:
    spec: FlowSpec
    start_ns: int  # receiver clock
    finish_ns: int | None
    fct_ns: float | None
    ideal_ns: float
    slowdown: float | None
    received: int
    duplicates: int
    reordered: int
    ce: int
    clamped: bool
    censored: bool = False  # unfinished: fct/slowdown measured to the end of observation

    @property
    def finished(self):
        return self.finish_ns is not None

    @property
    def lost(self):
        return self.spec.packets - self.received


@dataclass
class RxStats:
    packets: int = 0
    non_workload: int = 0
    stray: int = 0  # workload packets of flows not in the flow list
    bad_seq: int = 0
    last_ns: int | None = None  # latest last-bit instant of any captured frame
    per_flow: dict = field(default_factory=dict)


def load_flows_csv(path):
    flows = {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            spec = FlowSpec(int(row["flow_id"]), row["src"], row["dst"], int(row["size"]),
                            int(row["packets"]), parse_ns(row["start_time"]),
                            row.get("is_incast", "0") in ("1", "true", "True"))
            flows[spec.flow_id] = spec
    return flows


def flows_from_tx(paths):
    """Flow list from the senders' pcaps: start = first packet's stamp, packets
    = distinct sequence numbers sent."""
    flows, seqs = {}, {}
    for path in paths:
        for ts, frame, _ in read_pcap(path, payload.PARSE_BYTES):
            r = payload.parse_frame(frame)
            if r is None:
                continue
            spec = flows.get(r.flow_id)
            if spec is None:
                spec = flows[r.flow_id] = FlowSpec(r.flow_id, "id%d" % r.sender_id,
                                                   ".".join(map(str, r.dst_ip)), r.flow_size, 0, ts)
                seqs[r.flow_id] = set()
            spec.start_ns = min(spec.start_ns, ts)
            seqs[r.flow_id].add(r.seq)
    for fid, spec in flows.items():
        spec.packets = len(seqs[fid])
    return flows


def find_key(node, key):
    """The value of the first `key` found anywhere in a parsed JSON document."""
    if isinstance(node, dict):
        if key in node:
            return node[key]
        for v in node.values():
            got = find_key(v, key)
            if got is not None:
                return got
    elif isinstance(node, list):
        for v in node:
            got = find_key(v, key)
            if got is not None:
                return got
    return None


def start_offset_from_file(path, key="replay_start_epoch_seconds"):
    """Receiver-clock ns of sender time 0: `key` found anywhere in a JSON
    document (exact decimals), less sluice's replay origin when present."""
    with open(path) as f:
        doc = json.load(f, parse_float=decimal.Decimal)
    value = find_key(doc, key)
    if value is None:
        raise ValueError("%s: no key %r" % (path, key))
    # sluice maps its captures' earliest timestamp (not time 0) to the replay
    # start; sender time 0 is that much earlier.
    origin = find_key(doc, "replay_origin_capture_seconds")
    return int(decimal.Decimal(value) * 10**9) - int(decimal.Decimal(origin or 0) * 10**9)


def run_end_from_file(path, key="run_end_epoch_seconds"):
    """Receiver-clock ns of the end of the run from a JSON document (exact
    decimals), or None when it has no such key."""
    with open(path) as f:
        doc = json.load(f, parse_float=decimal.Decimal)
    value = find_key(doc, key)
    return None if value is None else int(decimal.Decimal(value) * 10**9)


def collect_rx(paths, flows, link_rate_bps, rx_stamp="first-bit"):
    """Per-flow arrival bookkeeping from the receivers' captures."""
    st = RxStats()
    per_flow = st.per_flow
    last_bit = rx_stamp == "last-bit"
    for path in paths:
        for ts, frame, orig in read_pcap(path, payload.PARSE_BYTES):
            st.packets += 1
            # Any frame, workload or not, shows the capture was still running.
            end = ts if last_bit else ts + round((orig + payload.WIRE_EXTRA) * 8e9 / link_rate_bps)
            st.last_ns = end if st.last_ns is None else max(st.last_ns, end)
            r = payload.parse_frame(frame)
            if r is None:
                st.non_workload += 1
                continue
            spec = flows.get(r.flow_id)
            if spec is None:
                st.stray += 1
                continue
            if r.seq >= spec.packets:
                st.bad_seq += 1
                continue
            rx = per_flow.get(r.flow_id)
            if rx is None:
                rx = per_flow[r.flow_id] = FlowRx(bytearray(spec.packets))
            if rx.seen[r.seq]:
                rx.duplicates += 1
                continue
            rx.seen[r.seq] = 1
            rx.unique += 1
            if r.seq < rx.max_seq:
                rx.reordered += 1
            rx.max_seq = max(rx.max_seq, r.seq)
            if r.ecn == 3:
                rx.ce += 1
            # Integer stamp and fractional wire time kept apart: a float of
            # epoch nanoseconds has a 256 ns resolution.
            wire_ns = 0.0 if last_bit else payload.wire_len(r.app) * 8e9 / link_rate_bps
            if rx.last_ts is None or (ts - rx.last_ts) + (wire_ns - rx.last_wire) > 0:
                rx.last_ts, rx.last_wire = ts, wire_ns
    return st


def ideal_ns(spec, link_rate_bps, base_rtt_ns):
    wire = spec.size + spec.packets * PER_PACKET_WIRE
    return wire * 8e9 / link_rate_bps + base_rtt_ns / 2.0


def end_of_observation(rx_stats, declared_ns=None):
    """Receiver-clock ns until which the captures observed the flows: the
    declared end of the run, but never before the last frame captured (the
    capture plainly ran until then); without a declared end, that frame."""
    ends = [t for t in (declared_ns, rx_stats.last_ns) if t is not None]
    return max(ends) if ends else None


def analyse(flows, rx_stats, link_rate_bps, base_rtt_ns=0, start_offset_ns=0, time_scale=1.0,
            end_ns=None):
    """One FlowResult per flow. Unfinished flows are censored at end_ns
    (receiver clock): FCT = end_ns - start, a lower bound. Without end_ns
    they keep no FCT (callers that report statistics must give one)."""
    results = []
    for fid in sorted(flows):
        spec = flows[fid]
        rx = rx_stats.per_flow.get(fid)
        start = start_offset_ns + round(spec.start_ns * time_scale)
        ideal = ideal_ns(spec, link_rate_bps, base_rtt_ns)
        received = rx.unique if rx else 0
        finish = fct = None
        censored = False
        if received == spec.packets:
            finish = rx.last_ts + round(rx.last_wire)  # whole ns, for display
            fct = (rx.last_ts - start) + rx.last_wire
        elif end_ns is not None:
            fct, censored = float(max(0, end_ns - start)), True
        slowdown, clamped = slowdown_of(fct, ideal)
        clamped = clamped and not censored  # a clamp flags clock trouble, not censoring
        results.append(FlowResult(spec, start, finish, fct, ideal, slowdown, received,
                                  rx.duplicates if rx else 0, rx.reordered if rx else 0,
                                  rx.ce if rx else 0, clamped, censored))
    return results


def slowdown_of(fct, ideal):
    """(FCT / ideal clamped at 1, whether it was clamped); (None, False) without an FCT."""
    if fct is None:
        return None, False
    slowdown = fct / ideal
    return (1.0, True) if slowdown < 1.0 else (slowdown, False)


def bucket_of(size):
    for i, (lo, hi, _) in enumerate(BUCKETS):
        if lo <= size < hi:
            return i
    return len(BUCKETS) - 1


def size_bins(results, nbins):
    """Equal-count bins of flows ordered by (size, id): list of bin index per
    result (same order) and the largest size in each bin."""
    order = sorted(range(len(results)), key=lambda i: (results[i].spec.size, results[i].spec.flow_id))
    nbins = max(1, min(nbins, len(order)))
    bins = [0] * len(results)
    tops = []
    for b in range(nbins):
        lo, hi = len(order) * b // nbins, len(order) * (b + 1) // nbins
        for i in order[lo:hi]:
            bins[i] = b
        tops.append(results[order[hi - 1]].spec.size if hi > lo else 0)
    return bins, tops


def nearest_rank(values, p):
    """Nearest-rank percentile of a non-empty list: a value that occurred,
    so every value counts (a query's worst response, an unfinished flow's
    infinity)."""
    s = sorted(values)
    k = max(0, min(len(s) - 1, -(-len(s) * p // 100) - 1))
    return s[int(k)]


def percentile(values, p):
    """Linear interpolation between closest ranks (numpy's default)."""
    if not values:
        return None
    v = sorted(values)
    pos = (len(v) - 1) * p / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


def stats(slowdowns, unfinished=0):
    """Percentiles and mean of slowdowns that include `unfinished` censored
    values; with any, each figure is a lower bound."""
    out = {"count": len(slowdowns), "unfinished": unfinished, "lower_bound": unfinished > 0}
    for p in PERCENTILES:
        out["p%d" % p] = percentile(slowdowns, p)
    out["mean"] = sum(slowdowns) / len(slowdowns) if slowdowns else None
    return out


def result_stats(results):
    """stats() of FlowResults: every flow with a slowdown, censored or not."""
    counted = [r for r in results if r.slowdown is not None]
    return stats([r.slowdown for r in counted], sum(1 for r in counted if r.censored))


def results_from_completions(path):
    """FlowResults of a transport-host run from sluice's completions file
    (docs/transports.md, "Completions"): a flow's FCT is from its arrival to
    the ACK of its last byte at the sender; its ideal is the file's (its
    frames back to back at the host's rate plus one base RTT). Unfinished
    flows get FCT = observed_until - start, censored. Returns (results,
    observed_until ns)."""
    results, observed = [], None
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if rows and "fct_seconds" not in rows[0]:
        raise ValueError("%s: not a sluice completions file (no fct_seconds column)" % path)
    for row in rows:
        size = int(row["size"])
        start = parse_ns(row["start_time"])
        ideal = parse_ns(row["ideal_seconds"])
        end = parse_ns(row["observed_until"])
        observed = end if observed is None else max(observed, end)
        finished = row["finished"] == "1"
        spec = FlowSpec(int(row["flow_id"]), row["src_ip"], row["dst_ip"], size,
                        int(row["data_segments"]), start, row["is_incast"] == "1")
        if finished:
            finish = parse_ns(row["finish_time"])
            fct, censored = finish - start, False
        else:
            finish, fct, censored = None, max(end - start, 0), True
        sd, clamped = slowdown_of(fct, ideal)
        # Loss is the transport's to repair (its retransmissions are in the
        # file): every segment counts as received.
        results.append(FlowResult(spec, start, finish, fct, ideal, sd, spec.packets, 0, 0,
                                  int(row["ecn_echoes"]), clamped, censored))
    return results, observed

