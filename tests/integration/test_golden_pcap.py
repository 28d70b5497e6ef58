#!/usr/bin/python3
"""Golden pcap: a crafted capture enters port p0 through net_pcap (rx_pcap,
read once) and every port writes what it transmits to its own tx_pcap. Each
output frame is checked field by field against the input frame it came from:

- egress port chosen by the route, longest prefix first;
- ECMP: each flow's packets all on one member, flows spread over both members,
  and the member predicted by an independent implementation of the documented
  flow hash (docs/packet-processing.md: flow_hash, ecmp_pick);
- TTL decremented by one, IPv4 header checksum valid, every other header and
  payload byte unchanged, order within a flow kept;
- source MAC = egress port MAC, destination MAC = the port's peer MAC;
- ECN: ECT packets to a shaped 10 Mbps port overloaded by a burst are marked
  CE once its queue passes K; non-ECT packets are never marked;
- malformed or unroutable frames never leave and are counted by reason with
  the exact counts crafted here;
- an ARP request for p0's address is answered on p0 with the right fields.
"""

import os
import struct

from scapy.layers.inet import ICMP, IP, TCP, UDP, IPOption_NOP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import ARP, Ether
from scapy.packet import Raw

import harness
from harness import TestFailure, check, check_eq

# name, mac, peer mac, address, role, rate
PORTS = [
    ("p0", "02:00:00:00:00:01", "02:00:00:00:00:a1", "10.0.0.1/24", "host", "0"),
    ("p1", "02:00:00:00:00:02", "02:00:00:00:00:a2", "10.0.1.1/24", "host", "0"),
    ("p2", "02:00:00:00:00:03", "02:00:00:00:00:a3", "10.0.2.1/24", "switch", "0"),
    ("p3", "02:00:00:00:00:04", "02:00:00:00:00:a4", "10.0.3.1/24", "switch", "0"),
    ("p4", "02:00:00:00:00:05", "02:00:00:00:00:a5", "10.0.4.1/24", "host", "10Mbps"),
]
ROUTES = [
    ("10.0.1.0/24", ["p1"]),
    ("10.1.0.0/16", ["p2", "p3"]),  # ECMP; members in port-index order
    ("10.1.5.0/24", ["p1"]),        # longer than the /16
    ("10.1.5.7/32", ["p2"]),        # longer still
    ("10.4.0.0/16", ["p4"]),        # the shaped port
]
ECN_K = 4000  # bytes
ECN_PREFIX = 160  # non-ECT frames that may leave before the queue passes K
PORT_INDEX = {p[0]: i for i, p in enumerate(PORTS)}
MAC = {p[0]: p[1] for p in PORTS}
PEER = {p[0]: p[2] for p in PORTS}
SRC_MAC, DST_MAC = PEER["p0"], MAC["p0"]  # every input frame arrives on p0

# ---------------------------------------------------------------- flow hash
# docs/packet-processing.md, "Flow hash":
#   a = src_ip << 32 | dst_ip;  b = proto << 32 | src_port << 16 | dst_port
#   h = fmix64(a ^ (b * 0x9E3779B97F4A7C15 mod 2^64)) >> 32
#   salt = derive_seed(seed, 1, switch index), the switch's ECMP salt, with
#   derive_seed(s, stream, i) = fmix64(fmix64(s ^ (stream << 56)) + i)
#   member = ((fmix64(h ^ salt) >> 32) * n) >> 32, the i-th smallest port
#   index of the group (the configuration's seed is 1, the switch index 0)
# Ports are 0 for fragments and for protocols other than TCP and UDP.
M64 = (1 << 64) - 1


def fmix64(k):
    k ^= k >> 33
    k = (k * 0xFF51AFD7ED558CCD) & M64
    k ^= k >> 33
    k = (k * 0xC4CEB9FE1A85EC53) & M64
    k ^= k >> 33
    return k


def ip_int(text):
    a, b, c, d = (int(x) for x in text.split("."))
    return a << 24 | b << 16 | c << 8 | d


def flow_hash(src, dst, proto, sport, dport):
    a = ip_int(src) << 32 | ip_int(dst)
    b = proto << 32 | sport << 16 | dport
    return fmix64(a ^ ((b * 0x9E3779B97F4A7C15) & M64)) >> 32


def derive_seed(seed, stream, index):
    return fmix64((fmix64(seed ^ (stream << 56)) + index) & M64)


ECMP_SALT = derive_seed(1, 1, 0)


def ecmp_member(ports, src, dst, proto, sport, dport):
    ordered = sorted(ports, key=lambda p: PORT_INDEX[p])
    salted = fmix64(flow_hash(src, dst, proto, sport, dport) ^ ECMP_SALT) >> 32
    return ordered[(salted * len(ordered)) >> 32]


# ---------------------------------------------------------------- crafting

class Input:
    """The input capture and what must become of each frame."""

    def __init__(self):
        self.frames = []        # bytes, in arrival order
        self.forward = {}       # ip id -> (port, original frame bytes, flow key)
        self.drops = {}         # reason -> count
        self.arp_requests = []  # (requester mac, requester ip)
        self.next_id = 1

    def ipv4(self, dst, port, src="10.0.0.2", proto="udp", sport=1000, dport=2000,
             tos=0, ttl=64, size=128, frag=False, options=None):
        ident = self.next_id
        self.next_id += 1
        ip = IP(src=src, dst=dst, tos=tos, ttl=ttl, id=ident,
                flags="MF" if frag else 0, options=options or [])
        if proto == "udp":
            l4, pnum = UDP(sport=sport, dport=dport), 17
        elif proto == "tcp":
            l4, pnum = TCP(sport=sport, dport=dport, flags="A", seq=ident), 6
        else:
            l4, pnum = ICMP(id=sport, seq=ident), 1
        pkt = Ether(src=SRC_MAC, dst=DST_MAC) / ip / l4
        pkt = pkt / Raw(bytes((ident + i) & 0xFF for i in range(max(0, size - len(pkt)))))
        data = bytes(pkt)
        has_ports = pnum in (6, 17) and not frag
        key = (src, dst, pnum, sport if has_ports else 0, dport if has_ports else 0)
        self.forward[ident] = (port, data, key)
        self.frames.append(data)
        return key

    def drop(self, data, reason):
        self.frames.append(bytes(data))
        self.drops[reason] = self.drops.get(reason, 0) + 1

    def arp_request(self, mac, ip, target):
        pkt = Ether(src=mac, dst="ff:ff:ff:ff:ff:ff") / ARP(
            op=1, hwsrc=mac, psrc=ip, hwdst="00:00:00:00:00:00", pdst=target)
        self.frames.append(bytes(pkt) + b"\x00" * 18)  # padded to 60 bytes
        self.arp_requests.append((mac, ip))


def ipv4_header(version=4, ihl=5, total=None, ttl=64, dst="10.0.1.9", payload=64,
                good_checksum=True):
    """A raw IPv4 header with exactly the given defects, followed by payload
    bytes; the checksum is right unless good_checksum is False."""
    hlen = ihl * 4 if ihl >= 5 else 20
    if total is None:
        total = hlen + payload
    hdr = bytearray(struct.pack("!BBHHHBBH4s4s", version << 4 | ihl, 0, total, 0x4242, 0,
                                ttl, 17, 0, bytes(map(int, "10.0.0.2".split("."))),
                                bytes(map(int, dst.split(".")))))
    hdr += b"\x00" * (hlen - 20)
    csum = checksum(bytes(hdr))
    if not good_checksum:
        csum ^= 0x5A5A
    hdr[10:12] = struct.pack("!H", csum)
    return bytes(hdr) + bytes(payload)


def eth(ethertype):
    return bytes(Ether(src=SRC_MAC, dst=DST_MAC, type=ethertype))


def checksum(data):
    """RFC 1071 one's-complement sum, returned complemented."""
    if len(data) % 2:
        data += b"\x00"
    s = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def craft():
    inp = Input()
    ecmp_flows = {}
    # Routed by the most specific prefix.
    for i in range(20):
        inp.ipv4(f"10.0.1.{10 + i}", "p1", proto="tcp" if i % 2 else "udp",
                 sport=3000 + i, dport=80, size=64 + 70 * i)
    for i in range(6):
        inp.ipv4(f"10.1.5.{20 + i}", "p1", sport=4000 + i, size=200)
    for i in range(5):
        inp.ipv4("10.1.5.7", "p2", sport=4100 + i, size=300)
    # A route back out of the ingress port is followed (hairpin), as a router
    # does.
    inp.ipv4("10.0.0.9", "p0", sport=4200, size=90)
    # IPv4 options and first fragments are forwarded.
    inp.ipv4("10.0.1.50", "p1", options=[IPOption_NOP()] * 4, size=150)
    inp.ipv4("10.0.1.51", "p1", frag=True, size=400)
    # ECMP over p2/p3: 64 UDP/TCP flows of 3 packets, interleaved, plus ICMP
    # and fragments, which hash without ports.
    for rnd in range(3):
        for f in range(64):
            dst = f"10.1.{f % 4 + 1}.{f + 1}"
            src = f"10.0.0.{2 + f % 5}"
            proto = "tcp" if f % 2 else "udp"
            sport, dport = 10000 + f * 7, 5201 + f % 3
            member = ecmp_member(["p2", "p3"], src, dst, 6 if proto == "tcp" else 17,
                                 sport, dport)
            key = inp.ipv4(dst, member, src=src, proto=proto, sport=sport, dport=dport,
                           size=100 + 10 * f)
            ecmp_flows.setdefault(key, set()).add(member)
    for f in range(4):
        dst = f"10.1.{20 + f}.1"
        inp.ipv4(dst, ecmp_member(["p2", "p3"], "10.0.0.2", dst, 1, 0, 0), proto="icmp",
                 sport=f, size=98)
    for f in range(2):
        dst = f"10.1.30.{f + 1}"
        inp.ipv4(dst, ecmp_member(["p2", "p3"], "10.0.0.2", dst, 17, 0, 0), frag=True,
                 sport=7000 + f, dport=7000, size=600)

    # ARP requests for p0's own address.
    inp.arp_request(PEER["p0"], "10.0.0.2", "10.0.0.1")
    inp.arp_request("02:00:00:00:00:b7", "10.0.0.7", "10.0.0.1")

    # Malformed and unroutable frames.
    inp.drop(eth(0x0800)[:10], "runt")
    inp.drop(eth(0x0800)[:13], "runt")
    inp.drop(eth(0x0800) + ipv4_header()[:12], "truncated")        # half an IPv4 header
    inp.drop(eth(0x0800) + ipv4_header(ihl=8, payload=0)[:24], "truncated")  # options cut off
    inp.drop(eth(0x0800) + ipv4_header(version=6), "bad_ip_version")
    inp.drop(eth(0x0800) + ipv4_header(ihl=4), "bad_ihl")
    inp.drop(eth(0x0800) + ipv4_header(ihl=3), "bad_ihl")
    inp.drop(eth(0x0800) + ipv4_header(total=1000), "bad_ip_length")  # longer than frame
    inp.drop(eth(0x0800) + ipv4_header(total=12), "bad_ip_length")    # shorter than header
    for _ in range(3):
        inp.drop(eth(0x0800) + ipv4_header(good_checksum=False), "bad_ip_checksum")
    for ttl in (0, 1, 1):
        inp.drop(eth(0x0800) + ipv4_header(ttl=ttl), "ttl_expired")
    for _ in range(3):
        inp.drop(Ether(src=SRC_MAC, dst=DST_MAC) / IPv6(src="fd00::2", dst="fd00::1") /
                 UDP(sport=1, dport=2) / Raw(b"x" * 40), "ipv6")
    inp.drop(eth(0x9000) + bytes(46), "unknown_ethertype")
    inp.drop(eth(0x88B7) + bytes(46), "unknown_ethertype")
    for i in range(3):
        inp.drop(eth(0x0800) + ipv4_header(dst=f"10.9.0.{i + 1}"), "no_route")
    inp.drop(eth(0x0800) + ipv4_header(dst="127.0.0.1"), "martian")
    # A 9000-byte frame: larger than p1's 1500-byte MTU.
    inp.drop(eth(0x0800) + ipv4_header(dst="10.0.1.9", payload=9000 - 34), "too_big")

    # ECN: a burst of 1000-byte frames to the 10 Mbps port p4. The first
    # finds an empty queue and is not marked. The shaper lets a burst of 64
    # KiB (64 frames of 1024 wire bytes) leave at once (docs/traffic-manager.md)
    # and the ingress reads 32 frames per poll, so the first ~100 may find the
    # queue below K; ECN_PREFIX non-ECT frames go first, and every ECT frame
    # after them must find the queue above K (10 Mbps drains one frame in
    # 0.8 ms; the whole burst is read in well under that).
    ecn_ids = []
    for i in range(ECN_PREFIX + 90):
        ecn = 0x00 if i < ECN_PREFIX or i % 3 == 2 else 0x02  # then two thirds ECT(0)
        if i == 0:
            ecn = 0x02
        elif i >= ECN_PREFIX and i % 15 == 7:
            ecn = 0x01  # some ECT(1)
        inp.ipv4(f"10.4.0.{1 + i % 8}", "p4", proto="udp", sport=6000 + i % 8,
                 dport=6000, tos=0x20 | ecn, size=1000)
        ecn_ids.append(inp.next_id - 1)
    return inp, ecmp_flows, ecn_ids


# ---------------------------------------------------------------- checking

def mac_bytes(text):
    return bytes(int(x, 16) for x in text.split(":"))


def check_output(port, frames, inp, seen, problems):
    """Checks every frame port transmitted; records ip ids in seen."""
    arp_replies = []
    for n, f in enumerate(frames):
        where = f"{port} frame {n + 1}"
        if len(f) < 14:
            problems.append(f"{where}: runt output frame ({len(f)} bytes)")
            continue
        dst, src, etype = f[0:6], f[6:12], struct.unpack("!H", f[12:14])[0]
        if etype == 0x0806:
            arp_replies.append(f)
            continue
        if etype != 0x0800:
            problems.append(f"{where}: unexpected ethertype {etype:#06x}")
            continue
        ip = f[14:]
        ihl = (ip[0] & 0xF) * 4
        ident = struct.unpack("!H", ip[4:6])[0]
        if ident not in inp.forward:
            problems.append(f"{where}: frame with IP id {ident} was never meant to leave")
            continue
        want_port, orig, _ = inp.forward[ident]
        if ident in seen:
            problems.append(f"{where}: IP id {ident} sent twice (also on {seen[ident]})")
        seen[ident] = port
        if port != want_port:
            problems.append(f"{where}: IP id {ident} left on {port}, expected {want_port}")
        if dst != mac_bytes(PEER[port]):
            problems.append(f"{where}: dst MAC {dst.hex(':')}, expected peer {PEER[port]}")
        if src != mac_bytes(MAC[port]):
            problems.append(f"{where}: src MAC {src.hex(':')}, expected port MAC {MAC[port]}")
        if len(f) != len(orig):
            problems.append(f"{where}: length {len(f)}, input was {len(orig)}")
            continue
        oip = orig[14:]
        if ip[8] != oip[8] - 1:
            problems.append(f"{where}: TTL {ip[8]}, input had {oip[8]}")
        if checksum(ip[:ihl]) != 0:
            problems.append(f"{where}: IPv4 header checksum wrong")
        ecn_in, ecn_out = oip[1] & 3, ip[1] & 3
        if ip[1] >> 2 != oip[1] >> 2:
            problems.append(f"{where}: DSCP changed {oip[1] >> 2} -> {ip[1] >> 2}")
        if ecn_out != ecn_in and not (ecn_in in (1, 2) and ecn_out == 3):
            problems.append(f"{where}: ECN {ecn_in} -> {ecn_out} (only ECT -> CE allowed)")
        if ip[0:1] + ip[2:8] + ip[9:10] + ip[12:] != oip[0:1] + oip[2:8] + oip[9:10] + oip[12:]:
            problems.append(f"{where}: IPv4 header or payload changed beyond TTL/checksum/ECN")
    return arp_replies


def check_arp(frames, inp, problems):
    expected = {mac: ip for mac, ip in inp.arp_requests}
    answered = set()
    for f in frames:
        if len(f) < 42:
            problems.append(f"p0: ARP frame too short ({len(f)} bytes)")
            continue
        htype, ptype, hlen, plen, op = struct.unpack("!HHBBH", f[14:22])
        sha, spa, tha, tpa = f[22:28], f[28:32], f[32:38], f[38:42]
        what = f"ARP frame to {f[0:6].hex(':')}"
        tha_text = tha.hex(":")
        if (htype, ptype, hlen, plen, op) != (1, 0x0800, 6, 4, 2):
            problems.append(f"{what}: not an Ethernet/IPv4 reply: {(htype, ptype, hlen, plen, op)}")
            continue
        if f[6:12] != mac_bytes(MAC["p0"]) or sha != mac_bytes(MAC["p0"]):
            problems.append(f"{what}: sender MAC {sha.hex(':')} / {f[6:12].hex(':')}, expected"
                            f" {MAC['p0']}")
        if spa != bytes([10, 0, 0, 1]):
            problems.append(f"{what}: sender IP {'.'.join(map(str, spa))}, expected 10.0.0.1")
        if tha_text not in expected or f[0:6] != tha:
            problems.append(f"{what}: target MAC {tha_text} is not a requester")
            continue
        if '.'.join(map(str, tpa)) != expected[tha_text]:
            problems.append(f"{what}: target IP {'.'.join(map(str, tpa))}, expected"
                            f" {expected[tha_text]}")
        answered.add(tha_text)
    for mac in expected:
        if mac not in answered:
            problems.append(f"ARP request from {mac} for 10.0.0.1 not answered on p0")
    if len(frames) != len(inp.arp_requests):
        problems.append(f"p0: {len(frames)} ARP frames sent, expected {len(inp.arp_requests)}"
                        " replies")


def test(binary, srcdir):
    inp, ecmp_flows, ecn_ids = craft()
    with harness.TempDir("golden") as tmp:
        in_pcap = os.path.join(tmp, "in.pcap")
        harness.write_pcap(in_pcap, inp.frames)
        ports = []
        for i, (name, mac, peer, addr, role, rate) in enumerate(PORTS):
            dev = f"net_pcap{i}," + (f"rx_pcap={in_pcap}," if name == "p0" else "")
            dev += f"tx_pcap={os.path.join(tmp, name + '.out.pcap')}"
            ports.append(harness.port(name, dev, mac, peer, addr, rate=rate, role=role))
        config = harness.write_config(
            os.path.join(tmp, "golden.yaml"),
            [harness.switch("s1", ports, [harness.route(p, *ps) for p, ps in ROUTES],
                            ecn={"mode": "step", "k": f"{ECN_K}B"})])
        run, summary = harness.run_to_end(binary, tmp, config, "golden", duration=3)

        problems = []
        seen = {}
        outputs = {}
        for name, *_ in PORTS:
            path = os.path.join(tmp, name + ".out.pcap")
            check(os.path.exists(path), f"{path} was not written")
            outputs[name] = harness.read_pcap(path)
        arp = {}
        for name in outputs:
            arp[name] = check_output(name, outputs[name], inp, seen, problems)
            if name != "p0" and arp[name]:
                problems.append(f"{name}: {len(arp[name])} unexpected ARP frames")
        check_arp(arp["p0"], inp, problems)
        missing = sorted(i for i in inp.forward if i not in seen)
        if missing:
            problems.append(f"{len(missing)} forwardable packets never left, IP ids {missing[:20]}"
                            f" (expected ports {[inp.forward[i][0] for i in missing[:20]]})")

        # Order within each flow is kept.
        last = {}
        for name, frames in outputs.items():
            for f in frames:
                if struct.unpack("!H", f[12:14])[0] != 0x0800:
                    continue
                ident = struct.unpack("!H", f[18:20])[0]
                if ident not in inp.forward:
                    continue
                key = inp.forward[ident][2]
                if last.get(key, 0) > ident:
                    problems.append(f"flow {key}: IP id {ident} after {last[key]} (reordered)")
                last[key] = max(last.get(key, 0), ident)

        # ECMP spreads flows over both members (each flow on one member is
        # covered by the per-packet port check against the predicted member).
        members = {next(iter(m)) for m in ecmp_flows.values()}
        if members != {"p2", "p3"}:
            problems.append(f"ECMP: the 64 flows all hash to {members} by the documented hash")
        used = {seen[i] for i, (p, _, k) in inp.forward.items() if k in ecmp_flows and i in seen}
        if used != {"p2", "p3"}:
            problems.append(f"ECMP: flows left only on {used}")

        # ECN on the overloaded 10 Mbps port.
        out_tos = {}
        for f in outputs["p4"]:
            if struct.unpack("!H", f[12:14])[0] == 0x0800:
                out_tos[struct.unpack("!H", f[18:20])[0]] = f[15]
        ect = [i for i in ecn_ids if inp.forward[i][1][15] & 3 in (1, 2)]
        non_ect = [i for i in ecn_ids if inp.forward[i][1][15] & 3 == 0]
        marked = [i for i in ect if out_tos.get(i, 0) & 3 == 3]
        if ecn_ids[0] in out_tos and out_tos[ecn_ids[0]] & 3 == 3:
            problems.append("ECN: the first packet to p4 (empty queue) was marked CE")
        late_ect = [i for i in ect if ecn_ids.index(i) >= ECN_PREFIX]
        late_marked = [i for i in late_ect if out_tos.get(i, 0) & 3 == 3]
        if len(late_marked) != len(late_ect) or not late_ect:
            problems.append(f"ECN: only {len(late_marked)} of {len(late_ect)} ECT packets after"
                            f" the first {ECN_PREFIX} of the burst were marked CE")
        if any(out_tos.get(i, 0) & 3 for i in non_ect):
            problems.append("ECN: a non-ECT packet left p4 with ECN bits set")

        # Counters in the summary JSON.
        p = {name: harness.find_port(summary, "s1", name) for name, *_ in PORTS}
        check_eq(p["p0"]["rx_packets"], len(inp.frames), "p0 rx_packets")
        for name in outputs:
            if p[name]["tx_packets"] != len(outputs[name]):
                problems.append(f"{name}: tx_packets {p[name]['tx_packets']} but"
                                f" {len(outputs[name])} frames in its tx_pcap")
            if p[name]["queued_at_stop"] != 0:
                problems.append(f"{name}: queued_at_stop {p[name]['queued_at_stop']}")
        if p["p0"]["rx_consumed_packets"] != len(inp.arp_requests):
            problems.append(f"p0 rx_consumed_packets {p['p0']['rx_consumed_packets']}, expected"
                            f" {len(inp.arp_requests)} (the ARP requests)")
        if p["p0"]["tx_generated_packets"] != len(inp.arp_requests):
            problems.append(f"p0 tx_generated_packets {p['p0']['tx_generated_packets']},"
                            f" expected {len(inp.arp_requests)} (the ARP replies)")
        marks = sum(q["ecn_marks"] for q in p.values())
        if marks != len(marked):
            problems.append(f"ecn_marks {marks} in the summary, {len(marked)} CE frames in p4's"
                            " output")
        drops = harness.drops_by_reason(summary, "s1")
        for reason in sorted(set(drops) | set(inp.drops)):
            if drops.get(reason, 0) != inp.drops.get(reason, 0):
                problems.append(f"drops[{reason}] = {drops.get(reason, 0)}, expected"
                                f" {inp.drops.get(reason, 0)}")
        try:
            harness.check_identity(summary)
        except TestFailure as e:
            problems.append(str(e))
        if problems:
            raise TestFailure(f"{len(problems)} problems:\n  " + "\n  ".join(problems[:60]))
        print(f"{len(inp.frames)} frames in; {len(seen)} forwarded and checked;"
              f" {sum(inp.drops.values())} dropped by reason; {len(marked)}/{len(ect)} ECT marked;"
              f" ECMP flows on p2/p3")


if __name__ == "__main__":
    harness.main(test)
