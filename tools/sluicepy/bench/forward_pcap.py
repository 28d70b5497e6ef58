"""The input pcaps that tools/bench forward replays through testpmd and sluice.

One pcap per frame size, each holding one frame of every flow: FLOWS flows
(half UDP, half TCP) from hosts in 10.0.0.0/16 to DESTINATIONS addresses spread
over the routed prefix 10.1.0.0/16, so the LPM sees many destinations and ECMP
or flow hashing sees many 5-tuples. Every frame is addressed to sluice's
ingress port MAC (forward.py's generated configuration uses the same constants).

Sizes are wire frame sizes including the 4-byte FCS, as in RFC 2544: a
"64-byte" frame is stored as 60 bytes in the pcap (DPDK never sees the FCS).
The output is the same on every run (fixed seed).

  write(out_dir, sizes=(64, 1024), flows=1024, destinations=256)
"""

import os
import random

from .. import cli

# Must agree with forward.py.
INGRESS_MAC = "02:00:00:00:00:01"
SENDER_MAC = "02:00:00:00:00:a1"
SRC_NET = (10, 0)   # senders: 10.0.0.0/16 behind p0
DST_NET = (10, 1)   # destinations: 10.1.0.0/16, routed to p1
FCS_LEN = 4
SEED = 20240611


def destinations_of(rng, count):
    """count distinct addresses in DST_NET, spread over the whole /16."""
    picked = set()
    while len(picked) < count:
        picked.add((rng.randint(0, 255), rng.randint(1, 254)))
    return sorted(picked)


def make_frame(rng, i, dst, wire_size):
    from scapy.layers.inet import IP, TCP, UDP
    from scapy.layers.l2 import Ether
    from scapy.packet import Raw
    src = "%d.%d.%d.%d" % (SRC_NET + (rng.randint(0, 255), rng.randint(1, 254)))
    ip = IP(src=src, dst="%d.%d.%d.%d" % (DST_NET + dst), ttl=64, id=i & 0xFFFF)
    sport, dport = rng.randint(1024, 65535), rng.randint(1, 65535)
    l4 = UDP(sport=sport, dport=dport) if i % 2 else TCP(sport=sport, dport=dport, flags="A")
    pkt = Ether(src=SENDER_MAC, dst=INGRESS_MAC) / ip / l4
    pad = wire_size - FCS_LEN - len(pkt)
    if pad < 0:
        raise cli.ToolError("%d-byte frames are too small for Ether/IPv4/TCP" % wire_size)
    # Build once so lengths and checksums are filled in, then freeze the bytes;
    # a fixed timestamp keeps the file identical from run to run.
    frame = Ether(bytes(pkt / Raw(b"\x00" * pad)))
    frame.time = i * 1e-6
    return frame


def write(out_dir, sizes=(64, 1024), flows=1024, destinations=256):
    """One pcap per wire frame size, out_dir/bench-<size>.pcap; returns
    their paths."""
    from scapy.utils import wrpcap
    if not 0 < destinations <= flows:
        raise cli.ToolError("need 0 < destinations <= flows")
    os.makedirs(out_dir, exist_ok=True)
    paths = []
    for size in sizes:
        rng = random.Random(SEED)  # same flows for every size
        dsts = destinations_of(rng, destinations)
        frames = [make_frame(rng, i, dsts[i % len(dsts)], size) for i in range(flows)]
        path = os.path.join(out_dir, "bench-%d.pcap" % size)
        wrpcap(path, frames)
        paths.append(path)
    return paths
