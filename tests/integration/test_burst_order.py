#!/usr/bin/python3
"""A received burst is forwarded whole, in the order it arrived. A port
whose modules take no arrival or forward step routes every packet of a
burst first and then admits them one after another (Worker::forward_burst,
docs/architecture.md, "A packet's path"); a frame that is not IPv4 in the
middle of the burst must still be handled between the packets before it
and those after it.

p0 has no peer MAC yet (only its `peer_ip`), and its capture, read in one
burst, holds 10 UDP packets routed back out of p0, then the peer's ARP
reply, then 10 more: the first 10 find no neighbour and are dropped, the
ARP reply teaches p0 its peer's MAC, and the last 10 leave p0 addressed to
it, in their order. Handling the ARP reply before the burst's data would
forward all 20, after it none. Run with p0 shaped (every packet queued) and
unshaped (each cut through its idle queue)."""

import os

import harness
from harness import check, check_eq

P0_MAC, PEER_MAC = "02:00:00:00:00:01", "02:00:00:00:00:a1"
PEER_IP = "10.0.0.2"
BEFORE, AFTER = 10, 10


def arp_reply():
    from scapy.layers.l2 import ARP, Ether
    return bytes(Ether(src=PEER_MAC, dst=P0_MAC) /
                 ARP(op=2, hwsrc=PEER_MAC, psrc=PEER_IP, hwdst=P0_MAC, pdst="10.0.0.1")) + bytes(18)


def udp(i):
    from scapy.layers.inet import IP, UDP
    from scapy.layers.l2 import Ether
    return bytes(Ether(src=PEER_MAC, dst=P0_MAC) /
                 IP(src=PEER_IP, dst=f"10.0.7.{i + 1}", id=1000 + i) /
                 UDP(sport=4000 + i, dport=5000) / bytes(40))


def run(binary, tmp, name, rate):
    frames = [udp(i) for i in range(BEFORE)] + [arp_reply()] + \
             [udp(BEFORE + i) for i in range(AFTER)]
    check(len(frames) <= 32, "test bug: the capture must fit one receive burst")
    rx, tx = os.path.join(tmp, name + "-rx.pcap"), os.path.join(tmp, name + "-tx.pcap")
    harness.write_pcap(rx, frames)
    p0 = {"name": "p0", "device": f"net_pcap0,rx_pcap={rx},tx_pcap={tx}", "role": "host",
          "rate": rate, "mac": P0_MAC, "peer_ip": PEER_IP, "ipv4": "10.0.0.1/16"}
    cfg = harness.write_config(os.path.join(tmp, name + ".yaml"),
                               [harness.switch("s1", [p0], [harness.route("10.0.0.0/16", "p0")])])
    _, summary = harness.run_to_end(binary, tmp, cfg, name, duration=2)
    harness.check_identity(summary)
    p = harness.find_port(summary, "s1", "p0")
    check_eq(p["rx_packets"], len(frames), f"{name}: p0 rx_packets")
    check_eq(p["drops"].get("no_neighbor", 0), BEFORE, f"{name}: data before the ARP reply dropped")
    check_eq(p["rx_consumed_packets"], 1, f"{name}: the ARP reply consumed")
    check_eq(p["tx_packets"] - p["tx_generated_packets"], AFTER,
             f"{name}: data after the ARP reply forwarded")

    from scapy.layers.inet import IP
    from scapy.layers.l2 import Ether
    sent = [Ether(f) for f in harness.read_pcap(tx)]
    data = [e for e in sent if IP in e]
    check_eq([e[IP].id for e in data], [1000 + BEFORE + i for i in range(AFTER)],
             f"{name}: IP ids of the forwarded packets, in order")
    check(all(e.dst == PEER_MAC and e.src == P0_MAC for e in data),
          f"{name}: forwarded packets not addressed to the learned peer: "
          f"{sorted({(e.src, e.dst) for e in data})}")
    print(f"{name}: {len(data)} forwarded in order, {BEFORE} dropped before the ARP reply")


def test(binary, srcdir):
    with harness.TempDir("burst-order") as tmp:
        run(binary, tmp, "unshaped", "0")
        run(binary, tmp, "shaped", "1Gbps")


if __name__ == "__main__":
    harness.main(test)
