"""Transport frames in captures (docs/wire-formats.md, "Transport frames"):
Ethernet / IPv4 / UDP / the SLT1 header. What a host port's tx capture holds
is what the switch sent that host: data of the flows it receives, replies to
the flows it sends."""

import struct

from .pcapio import read_pcap

KINDS = {1: "data", 2: "ack", 3: "nack", 4: "cnp"}
_SLT = struct.Struct("!4sBBBBIIIQ")  # magic kind flags hops reserved flow seq bytes ts
HEADER_BYTES = 14 + 20 + 8 + _SLT.size  # 70
INT_RECORD = struct.Struct("!IIII")
UDP_PORT = 9001
# Flag bits of the SLT1 header; bits 3 and 4 add options after the header,
# in this order, before the INT records.
FLAG_INT, FLAG_RANK, FLAG_SACK, KNOWN_FLAGS = 4, 8, 16, 31


def parse(frame):
    """(kind, flow, seq, payload bytes, ecn, hops, rank, sack) of a transport
    frame, or None. rank is pFabric's priority (None without one); sack a
    (start, end) block of an ACK (None without one)."""
    if len(frame) < HEADER_BYTES or frame[12:14] != b"\x08\x00" or frame[14] != 0x45:
        return None
    if frame[23] != 17:
        return None
    sport, dport = struct.unpack_from("!HH", frame, 34)
    if UDP_PORT not in (sport, dport):
        return None
    magic, kind, flags, hops, _, flow, seq, nbytes, _ = _SLT.unpack_from(frame, 42)
    if magic != b"SLT1" or kind not in KINDS or flags & ~KNOWN_FLAGS:
        return None
    at = HEADER_BYTES
    rank = sack = None
    if flags & FLAG_RANK:
        if at + 4 > len(frame):
            return None
        (rank,) = struct.unpack_from("!I", frame, at)
        at += 4
    if flags & FLAG_SACK:
        if at + 8 > len(frame):
            return None
        sack = struct.unpack_from("!II", frame, at)
        at += 8
    records = []
    if flags & FLAG_INT:
        for i in range(min(hops, 5)):
            rec = at + i * INT_RECORD.size
            if rec + INT_RECORD.size > len(frame):
                break
            records.append(INT_RECORD.unpack_from(frame, rec))
    return KINDS[kind], flow, seq, nbytes, frame[15] & 3, records, rank, sack


def data_arrivals(path):
    """[(ns, flow, payload bytes, ecn)] of the data frames in a capture."""
    out = []
    for ts, frame, _ in read_pcap(path, 200):
        p = parse(frame)
        if p and p[0] == "data":
            out.append((ts, p[1], p[3], p[4]))
    return out


def throughput(arrivals, start_ns, end_ns, flows=None):
    """Payload bits per second of each flow over [start_ns, end_ns)."""
    got = {}
    for ts, flow, nbytes, _ in arrivals:
        if start_ns <= ts < end_ns and (flows is None or flow in flows):
            got[flow] = got.get(flow, 0) + nbytes
    return {f: b * 8e9 / (end_ns - start_ns) for f, b in got.items()}
