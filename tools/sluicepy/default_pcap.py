"""Writes the pcaps that conf/default.yaml replays through sluice.

conf/pcap/mixed_a.pcap arrives on port p0 (hosts 10.0.0.0/24) and is addressed
to hosts in 10.0.1.0/24 behind p1; conf/pcap/mixed_b.pcap is the reverse
direction. Mixed traffic: TCP and UDP over many flows, frame sizes 64..1514,
some ECT(0) packets, a few ARP requests for the port's own address, and a few
frames sluice must drop (bad IPv4 checksum, TTL 1, IPv6, unknown ethertype) so
the drop counters show something. The output is the same on every run.

  tools/workload default-pcaps [--out-dir DIR] [--packets N] [--force]
"""

import argparse
import os
import random

from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import ARP, Ether
from scapy.packet import Raw
from scapy.utils import wrpcap

# Must agree with conf/default.yaml.
SIDES = {
    "a": dict(port_mac="02:00:00:00:00:01", peer_mac="02:00:00:00:00:a1",
              port_ip="10.0.0.1", src_net="10.0.0.", dst_net="10.0.1."),
    "b": dict(port_mac="02:00:00:00:00:02", peer_mac="02:00:00:00:00:a2",
              port_ip="10.0.1.1", src_net="10.0.1.", dst_net="10.0.0."),
}

UNKNOWN_ETHERTYPE = 0x9000
FLOWS = 96


def frame_size(rng):
    """Frame length without FCS: a mix of minimum, mid-size and full frames."""
    r = rng.random()
    if r < 0.4:
        return 64
    if r < 0.7:
        return rng.randint(65, 1513)
    return 1514


def pad_to(pkt, size):
    missing = size - len(pkt)
    return pkt / Raw(b"\x00" * missing) if missing > 0 else pkt


def make_flows(rng, side):
    flows = []
    for i in range(FLOWS):
        flows.append(dict(
            src=side["src_net"] + str(rng.randint(2, 254)),
            dst=side["dst_net"] + str(rng.randint(2, 254)),
            proto="tcp" if i % 3 else "udp",
            sport=rng.randint(1024, 65535),
            dport=rng.choice([80, 443, 5201, 9000, rng.randint(1024, 65535)]),
            ect=(i % 4 == 0),
            seq=rng.randint(0, 2**31)))
    return flows


def data_packet(rng, side, flow, size, ttl=64, bad_checksum=False):
    eth = Ether(src=side["peer_mac"], dst=side["port_mac"])
    ip = IP(src=flow["src"], dst=flow["dst"], ttl=ttl,
            tos=0x02 if flow["ect"] else 0x00, id=rng.randint(0, 65535))
    if bad_checksum:
        ip.chksum = 0x1234
    if flow["proto"] == "tcp":
        l4 = TCP(sport=flow["sport"], dport=flow["dport"], seq=flow["seq"], flags="A")
    else:
        l4 = UDP(sport=flow["sport"], dport=flow["dport"])
    pkt = pad_to(eth / ip / l4, size)
    flow["seq"] = (flow["seq"] + len(pkt[l4.__class__].payload)) % 2**32
    return pkt


def odd_frame(rng, side, kind, flow):
    """One of the frames sluice must answer or drop."""
    eth = Ether(src=side["peer_mac"], dst=side["port_mac"])
    if kind == "arp":
        host = side["src_net"] + str(rng.randint(2, 254))
        return pad_to(Ether(src=side["peer_mac"], dst="ff:ff:ff:ff:ff:ff") /
                      ARP(op=1, hwsrc=side["peer_mac"], psrc=host, pdst=side["port_ip"]), 64)
    if kind == "bad_checksum":
        return data_packet(rng, side, flow, 128, bad_checksum=True)
    if kind == "ttl1":
        return data_packet(rng, side, flow, 128, ttl=1)
    if kind == "ipv6":
        return pad_to(eth / IPv6(src="fd00::1", dst="fd00::2") /
                      UDP(sport=1000, dport=2000), 128)
    if kind == "unknown_ethertype":
        return pad_to(Ether(src=side["peer_mac"], dst=side["port_mac"],
                            type=UNKNOWN_ETHERTYPE), 64)
    raise ValueError(kind)


def generate(side_name, count):
    side = SIDES[side_name]
    rng = random.Random(0x51CE + ord(side_name))
    flows = make_flows(rng, side)
    odd_kinds = ["arp", "bad_checksum", "ttl1", "ipv6", "unknown_ethertype"]
    packets = []
    for i in range(count):
        flow = rng.choice(flows)
        if i % 100 == 50:  # 1% of frames: the odd ones, in turn
            pkt = odd_frame(rng, side, odd_kinds[(i // 100) % len(odd_kinds)], flow)
        else:
            pkt = data_packet(rng, side, flow, frame_size(rng))
        pkt.time = 1700000000 + i * 1e-5  # 100k packets/s if paced by timestamps
        packets.append(pkt)
    return packets


def main(argv):
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap = argparse.ArgumentParser(prog="tools/workload default-pcaps",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("--out-dir", default=os.path.join(root, "conf", "pcap"))
    ap.add_argument("--packets", type=int, default=4000, help="frames per pcap")
    ap.add_argument("--force", action="store_true", help="rewrite existing pcaps")
    args = ap.parse_args(argv)
    os.makedirs(args.out_dir, exist_ok=True)
    for side_name in ("a", "b"):
        path = os.path.join(args.out_dir, f"mixed_{side_name}.pcap")
        if os.path.exists(path) and not args.force:
            continue
        tmp = path + ".tmp"
        wrpcap(tmp, generate(side_name, args.packets))
        os.replace(tmp, path)
        print(f"wrote {path}")
    return 0
