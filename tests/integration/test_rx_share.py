#!/usr/bin/python3
"""One port received on two worker lcores (workers[].receive, docs/
configuration.md "workers[]"): p0 has two rx queues; lcore 1 owns p0 and
p1 and receives queue 0, lcore 2 receives queue 1 and hands what it routes
to lcore 1, which owns every egress traffic manager.

The two queues are two captures (net_pcap has no RSS), split the way a
NIC's RSS would: the Toeplitz hash of each packet's IPv4 addresses and UDP
ports with the usual 40-byte key, the low bit of the hash picking the
queue. Many flows interleave in each queue. For each scheme (plain, ECN
marking, PFC, DIBS, TCD, BFC) the test checks that
  - every frame is counted once: p0's rx_packets is what both captures hold;
  - every packet of every flow leaves p1, and no flow is reordered;
  - the share hands its ARP reply to the owner in order with its data:
    queue 1 also holds packets routed back out of p0, whose peer MAC is not
    known, then the peer's ARP reply, then more such packets; those before
    the reply are dropped no_neighbor, those after leave p0 in order,
    addressed to the MAC the owner learned.
It also checks that --check refuses a share where a module takes a
forward step that keeps state on the receiving lcore (any port of a
Floodgate switch, a Flowtune edge's host port), a share of a port that is
not a device, and a worker that lists its own port."""

import os
import struct
import subprocess

import harness
from harness import check, check_eq

P0_MAC, P0_PEER, P0_PEER_IP = "02:00:00:00:00:01", "02:00:00:00:00:a1", "10.0.0.2"
P1_MAC, P1_PEER = "02:00:00:00:00:02", "02:00:00:00:00:a2"
FLOWS, PER_FLOW = 48, 24
BACK_BEFORE, BACK_AFTER = 6, 6  # routed back out of p0, around the ARP reply

# The Toeplitz key most NICs and DPDK's examples use by default.
RSS_KEY = bytes([
    0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3, 0x8f,
    0xb0, 0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3, 0x80, 0x30,
    0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa])


def toeplitz(data, key=RSS_KEY):
    """The Toeplitz hash of `data` (bytes) under `key`, as RSS computes it."""
    k = int.from_bytes(key, "big")
    klen = len(key) * 8
    h = 0
    for i, byte in enumerate(data):
        for b in range(8):
            if byte & (0x80 >> b):
                h ^= (k >> (klen - 32 - (i * 8 + b))) & 0xFFFFFFFF
    return h


def ip(s):
    return bytes(int(x) for x in s.split("."))


def rss_queue(src, dst, sport, dport, queues=2):
    return toeplitz(ip(src) + ip(dst) + struct.pack(">HH", sport, dport)) % queues


def udp(src, dst, sport, dport, ident, dst_mac=P0_MAC, src_mac=P0_PEER, tos=0):
    from scapy.layers.inet import IP, UDP
    from scapy.layers.l2 import Ether
    return bytes(Ether(src=src_mac, dst=dst_mac) /
                 IP(src=src, dst=dst, id=ident, tos=tos) /
                 UDP(sport=sport, dport=dport) / bytes(60))


def arp_reply():
    from scapy.layers.l2 import ARP, Ether
    return bytes(Ether(src=P0_PEER, dst=P0_MAC) /
                 ARP(op=2, hwsrc=P0_PEER, psrc=P0_PEER_IP, hwdst=P0_MAC,
                     pdst="10.0.0.1")) + bytes(18)


def flow(i):
    return (f"10.0.0.{10 + i}", f"10.0.1.{20 + i % 7}", 4000 + i, 5000 + i % 3)


def queues(tos):
    """The two captures: the flows toward p1 by RSS, interleaved; queue 1
    also carries the packets routed back out of p0 around the ARP reply."""
    qs = [[], []]
    for seq in range(PER_FLOW):
        for i in range(FLOWS):
            src, dst, sport, dport = flow(i)
            qs[rss_queue(src, dst, sport, dport)].append(udp(src, dst, sport, dport, seq, tos=tos))
    back = [udp("10.0.1.99", "10.0.0.77", 7000, 7001, 9000 + k) for k in
            range(BACK_BEFORE + BACK_AFTER)]
    at = len(qs[1]) // 2
    qs[1][at:at] = back[:BACK_BEFORE] + [arp_reply()] + back[BACK_BEFORE:]
    return qs


def ip_header(frame):
    """Offset of the IPv4 header in a frame sluice sent (after the 0x88B6
    shim where the port's data carries one)."""
    etype = struct.unpack(">H", frame[12:14])[0]
    if etype == 0x88B6:
        check_eq(struct.unpack(">H", frame[18:20])[0], 0x0800, "ethertype after the shim")
        return 20
    check_eq(etype, 0x0800, "ethertype of a forwarded frame")
    return 14


def data_frames(path):
    """(src, dst, sport, dport, ip id, dst mac) of each IPv4 frame in `path`."""
    out = []
    for f in harness.read_pcap(path):
        if struct.unpack(">H", f[12:14])[0] not in (0x0800, 0x88B6):
            continue
        o = ip_header(f)
        ihl = (f[o] & 0x0F) * 4
        out.append((".".join(str(b) for b in f[o + 12:o + 16]),
                    ".".join(str(b) for b in f[o + 16:o + 20]),
                    struct.unpack(">H", f[o + ihl:o + ihl + 2])[0],
                    struct.unpack(">H", f[o + ihl + 2:o + ihl + 4])[0],
                    struct.unpack(">H", f[o + 4:o + 6])[0],
                    ":".join(f"{b:02x}" for b in f[0:6])))
    return out


SCHEMES = {
    "plain": ({}, "host", "0"),
    "ecn": ({"ecn": {"mode": "step", "k": "10KB"}}, "host", "1Gbps"),
    "pfc": ({"buffer": {"size": "16MB", "alpha": 1000.0},
             "pfc": {"mode": "pfc", "xoff": "12MB"}}, "host", "1Gbps"),
    "dibs": ({"dibs": {}}, "switch", "0"),
    "tcd": ({"tcd": {"q_th": "100KB"}}, "host", "1Gbps"),
    "bfc": ({"bfc": {}, "queues_per_port": 32}, "switch", "10Gbps"),
}


def config(tmp, name, extra, role, rate, q0, q1, p0_tx, p1_tx, empty):
    p0 = {"name": "p0", "device": f"net_pcap0,rx_pcap={q0},rx_pcap={q1},tx_pcap={p0_tx}",
          "role": role, "rate": rate, "mac": P0_MAC, "peer_ip": P0_PEER_IP,
          "ipv4": "10.0.0.1/24"}
    p1 = harness.port("p1", f"net_pcap1,rx_pcap={empty},tx_pcap={p1_tx}", P1_MAC, P1_PEER,
                      "10.0.1.1/24", rate=rate, role=role)
    path = harness.write_config(os.path.join(tmp, name + ".yaml"),
                                [harness.switch("s1", [p0, p1], [], **extra)],
                                workers=[(1, ["s1/p0", "s1/p1"])])
    return with_receive(path, [{"lcore": 2, "receive": ["s1/p0"]}])


def with_receive(path, workers):
    """Adds workers that receive shares to a configuration file."""
    import yaml
    with open(path) as f:
        doc = yaml.safe_load(f)
    doc["workers"] = doc.get("workers", []) + workers
    with open(path, "w") as f:
        yaml.safe_dump(doc, f, sort_keys=False)
    return path


def run(binary, tmp, name):
    extra, role, rate = SCHEMES[name]
    tos = 0x02 if name in ("ecn", "tcd") else 0
    qs = queues(tos)
    check(all(qs[0]) and len(qs[0]) > FLOWS * PER_FLOW // 4 and
          len(qs[1]) > FLOWS * PER_FLOW // 4, "test bug: RSS left a queue (nearly) empty")
    paths = [os.path.join(tmp, f"{name}-q{i}.pcap") for i in range(2)]
    for p, frames in zip(paths, qs):
        harness.write_pcap(p, frames)
    empty = os.path.join(tmp, "empty.pcap")
    harness.write_pcap(empty, [])
    p0_tx, p1_tx = os.path.join(tmp, name + "-p0tx.pcap"), os.path.join(tmp, name + "-p1tx.pcap")
    cfg = config(tmp, name, extra, role, rate, paths[0], paths[1], p0_tx, p1_tx, empty)
    _, summary = harness.run_to_end(binary, tmp, cfg, name, duration=3, lcores="0@0,1@1,2@0")
    harness.check_identity(summary)
    p0 = harness.find_port(summary, "s1", "p0")
    p1 = harness.find_port(summary, "s1", "p1")
    check_eq(p0["rx_packets"], len(qs[0]) + len(qs[1]),
             f"{name}: p0 rx_packets, both queues' frames counted once")
    check_eq(p0["rx_consumed_packets"], 1, f"{name}: the ARP reply consumed (by the owner)")
    check_eq(p0["drops"].get("no_neighbor", 0), BACK_BEFORE,
             f"{name}: packets ahead of the ARP reply dropped no_neighbor")

    sent = data_frames(p1_tx)
    check_eq(len(sent), FLOWS * PER_FLOW, f"{name}: data packets out of p1")
    by_flow = {}
    for src, dst, sport, dport, ident, _ in sent:
        by_flow.setdefault((src, dst, sport, dport), []).append(ident)
    check_eq(len(by_flow), FLOWS, f"{name}: flows out of p1")
    for key, ids in by_flow.items():
        check_eq(ids, list(range(PER_FLOW)), f"{name}: IP ids of flow {key}, in order")
    back = data_frames(p0_tx)
    check_eq([(b[4], b[5]) for b in back],
             [(9000 + BACK_BEFORE + k, P0_PEER) for k in range(BACK_AFTER)],
             f"{name}: packets after the ARP reply out of p0 (ip id, destination MAC)")
    print(f"{name}: {len(qs[0])} + {len(qs[1])} frames on the two queues; {len(sent)} packets of "
          f"{FLOWS} flows out of p1 in order; ARP reply handed to the owner in order")
    return summary


def expect_refused(binary, tmp, name, switches, workers, words):
    """--check refuses the configuration, naming what `words` hold."""
    path = harness.write_config(os.path.join(tmp, name + ".yaml"), switches)
    with_receive(path, workers)
    r = subprocess.run([binary, "--", "--config", path, "--check"], capture_output=True, text=True,
                       timeout=60)
    check(r.returncode != 0, f"{name}: --check accepted it:\n{r.stdout}{r.stderr}")
    for w in words:
        check(w in r.stderr, f"{name}: --check's error does not say {w!r}:\n{r.stderr}")
    print(f"{name}: refused: {r.stderr.strip().splitlines()[0]}")


def refusals(binary, tmp):
    def dev(name, n, role="switch"):
        return harness.port(name, f"net_null{n}", f"02:00:00:00:01:0{n}",
                            f"02:00:00:00:02:0{n}", f"10.0.{n}.1/24", role=role, rate="10Gbps")

    owner = {"lcore": 1, "ports": ["s1/p0", "s1/p1"]}
    expect_refused(binary, tmp, "refuse-floodgate",
                   [harness.switch("s1", [dev("p0", 0, "host"), dev("p1", 1)], [],
                                   floodgate={})],
                   [owner, {"lcore": 2, "receive": ["s1/p0"]}],
                   ["workers[1].receive[0]", "s1/p0", "floodgate"])
    expect_refused(binary, tmp, "refuse-flowtune",
                   [harness.switch("s1", [dev("p0", 0, "host"), dev("p1", 1)], [],
                                   flowtune={})],
                   [owner, {"lcore": 2, "receive": ["s1/p0"]}],
                   ["workers[1].receive[0]", "s1/p0", "flowtune"])
    link_a = {"name": "p1", "link": "s2/p0", "role": "switch", "rate": "10Gbps"}
    link_b = {"name": "p0", "link": "s1/p1", "role": "switch", "rate": "10Gbps"}
    expect_refused(binary, tmp, "refuse-link",
                   [harness.switch("s1", [dev("p0", 0), link_a], []),
                    harness.switch("s2", [link_b], [])],
                   [{"lcore": 1, "ports": ["s1/p0", "s1/p1", "s2/p0"]},
                    {"lcore": 2, "receive": ["s1/p1"]}],
                   ["workers[1].receive[0]", "s1/p1", "not a device port"])
    expect_refused(binary, tmp, "refuse-own",
                   [harness.switch("s1", [dev("p0", 0), dev("p1", 1)], [])],
                   [{"lcore": 1, "ports": ["s1/p0", "s1/p1"], "receive": ["s1/p0"]}],
                   ["workers[0].receive[0]", "s1/p0", "this worker's own"])


def test(binary, srcdir):
    # Microsoft's RSS verification example (IPv4 with TCP ports).
    check_eq(hex(toeplitz(ip("66.9.149.187") + ip("161.142.100.80") +
                          struct.pack(">HH", 2794, 1766))), "0x51ccc178", "test bug: Toeplitz hash")
    with harness.TempDir("rx-share") as tmp:
        refusals(binary, tmp)
        for name in SCHEMES:
            run(binary, tmp, name)


if __name__ == "__main__":
    harness.main(test)
