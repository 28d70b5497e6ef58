#!/usr/bin/python3
"""Oversize frames in capture replay: a capture holding frames longer than the
default mbuf data room (2048 bytes) is replayed without them, and sluice says
so: a line at start naming the port, the file and the count, the summary
(text: "left out of the replay"; JSON: replay_oversize_skipped) and the
metric sluice_replay_oversize_skipped_total{switch,port}. With `mbuf_size:
9KiB` the same capture is replayed whole and the long frames are forwarded
(out of a port with mtu 9000)."""

import os
import re

from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

import harness
from harness import check, check_eq

S_H0, H0 = "02:00:00:00:0e:01", "02:00:00:00:0e:a1"
S_H1, H1 = "02:00:00:00:0e:02", "02:00:00:00:0e:a2"
SMALL, LONG = 12, 3
LONG_BYTES = 4000


def frame(i, size):
    pkt = Ether(src=H0, dst=S_H0) / IP(src="10.0.0.2", dst="10.0.1.2", ttl=64, id=i) / UDP(
        sport=1000, dport=2000)
    return bytes(Ether(bytes(pkt / bytes(size - len(pkt)))))  # lengths and checksums set


def frames():
    out = [frame(i, 200) for i in range(SMALL)]
    for k in range(LONG):
        out.insert(3 + 4 * k, frame(100 + k, LONG_BYTES))
    return out


def config(tmp, name, mbuf_size):
    h1 = harness.replay_host("h1", S_H1, H1, "10.0.1.1/24", "10Gbps", tx=f"{name}_h1.pcap")
    h1["mtu"] = 9000
    s = harness.switch("s1", [
        harness.replay_host("h0", S_H0, H0, "10.0.0.1/24", "10Gbps", rx="in.pcap"),
        h1,
    ], [])
    return harness.write_config(os.path.join(tmp, name + ".yaml"), [s], mbufs=4096,
                                mbuf_size=mbuf_size)


def run(binary, tmp, name, mbuf_size):
    with harness.Sluice(binary, tmp, config(tmp, name, mbuf_size), name, duration=3) as s:
        metrics = harness.metric_samples(s.metrics_text())
        s.wait(timeout=60)
        s.expect_clean_exit()
        summary = s.summary()
        stdout, stderr = s.stdout(), s.stderr()
    harness.check_identity(summary)
    skipped = [v for labels, v in metrics.get("sluice_replay_oversize_skipped_total", [])
               if labels == {"switch": "s1", "port": "h0"}]
    check(len(skipped) == 1, f"{name}: no sluice_replay_oversize_skipped_total for s1/h0:"
                             f" {metrics.get('sluice_replay_oversize_skipped_total')}")
    others = [labels for labels, _ in metrics["sluice_replay_oversize_skipped_total"]
              if labels.get("port") != "h0"]
    check_eq(others, [], f"{name}: oversize metric for ports that replay nothing")
    return summary, skipped[0], stdout, stderr


def test(binary, srcdir):
    with harness.TempDir("oversize-replay") as tmp:
        harness.write_pcap(os.path.join(tmp, "in.pcap"), frames())

        summary, metric, stdout, stderr = run(binary, tmp, "default", None)
        h0 = harness.find_port(summary, "s1", "h0")
        check_eq(h0.get("replay_oversize_skipped"), LONG, "default: replay_oversize_skipped")
        check_eq(h0["rx_packets"], SMALL, "default: frames replayed")
        check_eq(metric, LONG, "default: sluice_replay_oversize_skipped_total")
        check_eq(harness.find_port(summary, "s1", "h1").get("replay_oversize_skipped"), 0,
                 "default: replay_oversize_skipped of a port without rx file")
        start_lines = [l for l in stderr.splitlines()
                       if "s1/h0" in l and "in.pcap" in l and f" {LONG} frame" in l]
        check(start_lines, f"default: no start line naming s1/h0, in.pcap and {LONG} frames:"
                           f"\n{stderr}")
        check(re.search(rf"left out of the replay\s+{LONG} ", stdout),
              f"default: summary has no 'left out of the replay {LONG}' line:\n{stdout}")
        out = harness.read_pcap(os.path.join(tmp, "default_h1.pcap"))
        check_eq(len(out), SMALL, "default: frames out of h1")

        summary, metric, stdout, stderr = run(binary, tmp, "jumbo", "9KiB")
        h0 = harness.find_port(summary, "s1", "h0")
        check_eq(h0.get("replay_oversize_skipped"), 0, "jumbo: replay_oversize_skipped")
        check_eq(h0["rx_packets"], SMALL + LONG, "jumbo: frames replayed")
        check_eq(metric, 0, "jumbo: sluice_replay_oversize_skipped_total")
        check("left out of the replay" not in stdout + stderr,
              f"jumbo: oversize reported:\n{stdout}{stderr}")
        out = harness.read_pcap(os.path.join(tmp, "jumbo_h1.pcap"))
        check_eq(sorted(len(f) for f in out), [200] * SMALL + [LONG_BYTES] * LONG,
                 "jumbo: lengths of the frames out of h1")


if __name__ == "__main__":
    harness.main(test)
