#!/usr/bin/python3
"""The counters add up. Two ports replay captures forever (net_pcap
infinite_rx); p1 is shaped to 100 Mbps and fed about 10 Gbps of full-size
frames, so its queue overflows the small shared buffer; the captures also hold
frames sluice must drop (bad checksum, TTL 1, no route, IPv6) and ARP requests
it must answer. After a --duration stop, per switch:

  Σ rx_packets = Σ (tx_packets − tx_generated_packets) + Σ drops (all reasons)
                 + Σ queued_at_stop + Σ rx_consumed_packets

exactly; overload drops, ECN marks and each ingress drop reason are nonzero;
and because infinite_rx replays the capture in order, each ingress drop
reason and the ARP count on a port follow exactly from its rx_packets.
Run with one worker lcore, with p0 and p1 on different workers (packets
cross on rings), and with p0 unshaped, so that what p1 receives for it is
cut through its idle queue to the device (docs/traffic-manager.md,
"Straight through an idle port")."""

import os

import harness
from harness import check, check_eq

P0_MAC, P0_PEER = "02:00:00:00:00:01", "02:00:00:00:00:a1"
P1_MAC, P1_PEER = "02:00:00:00:00:02", "02:00:00:00:00:a2"
TM_REASONS = {"buffer_full", "queue_threshold", "queue_full"}


def ttl1_frame(src_mac, dst_mac, src, dst):
    from scapy.layers.inet import IP, UDP
    from scapy.layers.l2 import Ether
    return bytes(Ether(src=src_mac, dst=dst_mac) / IP(src=src, dst=dst, ttl=1) /
                 UDP(sport=1, dport=2) / bytes(32))


def ipv6_frame(src_mac, dst_mac):
    from scapy.layers.inet import UDP
    from scapy.layers.inet6 import IPv6
    from scapy.layers.l2 import Ether
    return bytes(Ether(src=src_mac, dst=dst_mac) / IPv6(src="fd00::2", dst="fd00::1") /
                 UDP(sport=1, dport=2) / bytes(16))


def capture(peer, mac, src_net, dst_net, own_ip, sizes, tos):
    """Frames and, for each, what sluice must do with it on ingress."""
    frames = harness.udp_frames(peer, mac, src_net, dst_net, 300, sizes=sizes, tos=tos)
    kinds = ["forward"] * len(frames)
    extra = [
        (harness.bad_checksum_frame(peer, mac, src_net + "2", dst_net + "2"), "bad_ip_checksum"),
        (ttl1_frame(peer, mac, src_net + "3", dst_net + "3"), "ttl_expired"),
        (harness.udp_frames(peer, mac, src_net, "10.9.0.", 1)[0], "no_route"),
        (ipv6_frame(peer, mac), "ipv6"),
        (harness.arp_request(peer, src_net + "2", own_ip), "arp"),
    ]
    # Spread the odd frames through the capture.
    for n, (frame, kind) in enumerate(extra * 3):
        at = 17 + n * 19
        frames.insert(at, frame)
        kinds.insert(at, kind)
    return frames, kinds


def expected_count(kinds, kind, rx):
    """How many frames of `kind` the first rx frames of the endless replay hold."""
    full, rest = divmod(rx, len(kinds))
    return full * kinds.count(kind) + kinds[:rest].count(kind)


def run(binary, tmp, name, workers, lcores, p0_rate="10Gbps"):
    a, ka = capture(P0_PEER, P0_MAC, "10.0.0.", "10.0.1.", "10.0.0.1", (1514,), tos=0x02)
    b, kb = capture(P1_PEER, P1_MAC, "10.0.1.", "10.0.0.", "10.0.1.1", (64, 128), tos=0)
    pa, pb = os.path.join(tmp, "a.pcap"), os.path.join(tmp, "b.pcap")
    harness.write_pcap(pa, a)
    harness.write_pcap(pb, b)
    ports = [
        harness.port("p0", f"net_pcap0,rx_pcap={pa},infinite_rx=1", P0_MAC, P0_PEER,
                     "10.0.0.1/24", rate=p0_rate),
        harness.port("p1", f"net_pcap1,rx_pcap={pb},infinite_rx=1", P1_MAC, P1_PEER,
                     "10.0.1.1/24", rate="100Mbps"),
    ]
    cfg = harness.write_config(
        os.path.join(tmp, name + ".yaml"),
        [harness.switch("s1", ports, [], buffer={"size": "256KB", "alpha": 1.0},
                        queues_per_port=4, ecn={"mode": "step", "k": "30KB"})],
        workers=workers)
    _, summary = harness.run_to_end(binary, tmp, cfg, name, duration=3, lcores=lcores)

    harness.check_identity(summary)
    p0 = harness.find_port(summary, "s1", "p0")
    p1 = harness.find_port(summary, "s1", "p1")
    check(p0["rx_packets"] > len(a) and p1["rx_packets"] > len(b),
          f"{name}: captures not even replayed once (rx {p0['rx_packets']}, {p1['rx_packets']})")
    overload = sum(p1["drops"].get(r, 0) for r in TM_REASONS)
    check(overload > 0, f"{name}: no overload drops on the 100 Mbps port p1: {p1['drops']}")
    check(p1["ecn_marks"] > 0, f"{name}: no ECN marks on the overloaded port p1")
    check(p1["tx_packets"] > 0 and p0["tx_packets"] > 0, f"{name}: a port sent nothing")
    for port, kinds in (("p0", ka), ("p1", kb)):
        p = harness.find_port(summary, "s1", port)
        rx = p["rx_packets"]
        for reason in ("bad_ip_checksum", "ttl_expired", "no_route", "ipv6"):
            want = expected_count(kinds, reason, rx)
            check(want > 0, "test bug: no frames of " + reason)
            check_eq(p["drops"].get(reason, 0), want,
                     f"{name}: {port} drops[{reason}] after {rx} frames of the replay")
        arps = expected_count(kinds, "arp", rx)
        check_eq(p["rx_consumed_packets"], arps, f"{name}: {port} rx_consumed_packets (ARP)")
        # Never more replies than requests. Replies go ahead of data, but on a
        # loaded machine the 100 Mbps port's control queue can overflow while
        # the worker is descheduled, so only most must have left.
        check(arps / 2 <= p["tx_generated_packets"] <= arps,
              f"{name}: {port} sent {p['tx_generated_packets']} ARP replies for {arps} requests")
    print(f"{name}: p0 rx {p0['rx_packets']} p1 tx {p1['tx_packets']} overload drops {overload}"
          f" queued {p1['queued_at_stop']} marks {p1['ecn_marks']}")


def test(binary, srcdir):
    with harness.TempDir("counters") as tmp:
        run(binary, tmp, "one-worker", None, None)
        run(binary, tmp, "two-workers", [(1, ["s1/p0"]), (2, ["s1/p1"])], "0@0,1@0,2@1")
        run(binary, tmp, "unshaped-p0", None, None, p0_rate="0")


if __name__ == "__main__":
    harness.main(test)
