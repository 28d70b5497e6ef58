#!/usr/bin/python3
"""Default route: a switch with `0.0.0.0/0 -> p1` and `10.5.0.0/16 -> p2`
passes --check, starts, and forwards a frame whose destination only the
default route covers out of p1, while a destination inside 10.5.0.0/16 (also
covered by the default route) takes the more specific route out of p2, and a
destination in p0's connected subnet goes back out of p0. Without the default
route the same frames to uncovered destinations are counted as no_route
drops (so the first run's forwarding is the default route's doing)."""

import os
import subprocess

from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

import harness
from harness import check, check_eq

S_P0, P0 = "02:00:00:00:0d:01", "02:00:00:00:0d:a1"
S_P1, P1 = "02:00:00:00:0d:02", "02:00:00:00:0d:a2"
S_P2, P2 = "02:00:00:00:0d:03", "02:00:00:00:0d:a3"

# destination -> the port the frame must leave by (with the default route)
DESTINATIONS = {
    "8.8.8.8": "p1",        # only 0.0.0.0/0
    "203.0.113.9": "p1",    # only 0.0.0.0/0
    "10.5.1.1": "p2",       # 10.5.0.0/16 wins over 0.0.0.0/0
    "10.5.200.7": "p2",
    "10.0.0.9": "p0",       # p0's connected subnet wins over 0.0.0.0/0
}
UNCOVERED = ("8.8.8.8", "203.0.113.9")
PER_DESTINATION = 20


def frames():
    out = []
    for i in range(PER_DESTINATION):
        for dst in DESTINATIONS:
            pkt = (Ether(src=P0, dst=S_P0) / IP(src="10.0.0.2", dst=dst, ttl=64) /
                   UDP(sport=1000 + i, dport=2000))
            out.append(bytes(pkt) + bytes(64))
    return out


def config(tmp, name, default_route):
    routes = [harness.route("10.5.0.0/16", "p2")]
    if default_route:
        routes.insert(0, harness.route("0.0.0.0/0", "p1"))
    s = harness.switch("s1", [
        harness.replay_host("p0", S_P0, P0, "10.0.0.1/24", "10Gbps", rx="in.pcap",
                            tx=f"{name}_p0.pcap"),
        harness.replay_host("p1", S_P1, P1, "10.0.1.1/24", "10Gbps", tx=f"{name}_p1.pcap"),
        harness.replay_host("p2", S_P2, P2, "10.0.2.1/24", "10Gbps", tx=f"{name}_p2.pcap"),
    ], routes)
    return harness.write_config(os.path.join(tmp, name + ".yaml"), [s], mbufs=8192)


def destinations_in(path):
    """{destination address: frames} of an output capture (IPv4 frames only)."""
    out = {}
    for f in harness.read_pcap(path):
        if len(f) >= 34 and f[12:14] == b"\x08\x00":
            dst = ".".join(str(b) for b in f[30:34])
            out[dst] = out.get(dst, 0) + 1
    return out


def test(binary, srcdir):
    with harness.TempDir("default-route") as tmp:
        harness.write_pcap(os.path.join(tmp, "in.pcap"), frames())

        cfg = config(tmp, "with", default_route=True)
        r = subprocess.run([binary, "--", "--config", cfg, "--check"], cwd=tmp,
                           capture_output=True, text=True, timeout=30)
        check(r.returncode == 0 and "config OK" in r.stdout,
              f"--check of a default route: exit {r.returncode}\n{r.stdout}{r.stderr}")
        with harness.Sluice(binary, tmp, cfg, "with", duration=1) as s:
            s.wait(timeout=60)
            s.expect_clean_exit()
            summary = s.summary()
        harness.check_identity(summary)
        check_eq(harness.drops_by_reason(summary, "s1").get("no_route", 0), 0,
                 "no_route drops with a default route")
        for port in ("p0", "p1", "p2"):
            seen = destinations_in(os.path.join(tmp, f"with_{port}.pcap"))
            want = {d: PER_DESTINATION for d, p in DESTINATIONS.items() if p == port}
            check_eq(seen, want, f"destinations of the frames out of {port}")

        cfg = config(tmp, "without", default_route=False)
        with harness.Sluice(binary, tmp, cfg, "without", duration=1) as s:
            s.wait(timeout=60)
            s.expect_clean_exit()
            summary = s.summary()
        harness.check_identity(summary)
        check_eq(harness.drops_by_reason(summary, "s1").get("no_route", 0),
                 PER_DESTINATION * len(UNCOVERED), "no_route drops without a default route")
        check_eq(destinations_in(os.path.join(tmp, "without_p1.pcap")), {},
                 "frames out of p1 without a default route")


if __name__ == "__main__":
    harness.main(test)
