#!/usr/bin/python3
"""BFC between two sluice processes over a wire that loses resumes: the
pauses take effect, and every pause whose BFC_RESUME was lost is healed by
the next BFC_BITMAP (SPEC 4.2, docs/mechanisms/bfc.md "Upstream side").

    upstream process (1 worker)                   downstream process (2 workers)
    h1 (replay) -- a -- slA ~ rlA [relay] rlB ~ slB -- b -- h2 (net_null, 20 Mbps)
                        net_pcap on veth pairs in a network namespace

The two processes reach each other through veth pairs and
tests/integration/lossy_relay.py, which forwards every frame and drops every
second BFC_RESUME on its way upstream (the kernel here has no netem). The
wire is a real kernel interface per side (net_pcap iface=...), as a NIC
would be between two servers, and the downstream runs more workers than the
upstream, so its frames carry a shard the upstream does not have.

h1 replays a burst of 8 UDP flows; a/b sends it at 200 Mb/s, b/h2 drains it
at 20 Mb/s, so b pauses a's queues and resumes them over and over. Checked:

- the relay dropped resumes, and forwarded pauses, resumes, bitmaps and
  every data frame;
- the upstream applied pauses, and fewer resumes than the downstream sent;
- its bitmaps repaired the lost resumes (bfc_bitmap_repaired_resumes > 0,
  at most one per lost resume) and no bitmap repaired a pause (none lost);
- every queue of a ends unpaused and empty, every frame of the burst reached
  h2, and no port of either process dropped anything.

Root only (network namespace, veth). Bounded: each process runs DURATION
seconds; the namespace is removed in `finally`."""

import json
import os
import signal
import subprocess
import sys
import time

import harness
import test_bfc_two_process as two
from harness import check, check_eq

NS = f"sluice-lossy-{os.getpid()}"
A_H1, H1 = "02:00:00:00:1c:01", "02:00:00:00:1c:a1"
A_B, B_A = "02:00:00:00:1c:02", "02:00:00:00:1d:01"
B_H2, H2 = "02:00:00:00:1d:02", "02:00:00:00:1d:a2"
QUEUES = 8
BURST_FRAMES = 600
BURST_AT = 6.0  # seconds into the upstream's replay: the downstream runs by then
DURATION = 10
HOP_RTT = "1ms"  # two processes and a Python relay time-sharing two CPUs
DROP_EVERY = 2


def ip(*args):
    subprocess.run(["ip"] + list(args), check=True, timeout=10)


def make_wires():
    """Namespace NS with veth pairs slA-rlA and slB-rlB, up, without IPv6 (no
    router solicitations on the wire), offloads off, and an MTU with room for
    the 6-byte BFC shim that full-size frames carry between the switches."""
    ip("netns", "add", NS)
    ip("-n", NS, "link", "set", "lo", "up")  # each process serves metrics on loopback
    for side in ("A", "B"):
        ip("-n", NS, "link", "add", f"sl{side}", "type", "veth", "peer", "name", f"rl{side}")
        for dev in (f"sl{side}", f"rl{side}"):
            subprocess.run(["ip", "netns", "exec", NS, "sysctl", "-q", "-w",
                            f"net.ipv6.conf.{dev}.disable_ipv6=1"], check=True, timeout=10)
            ip("-n", NS, "link", "set", dev, "mtu", "1600", "up")
            subprocess.run(["ip", "netns", "exec", NS, "ethtool", "-K", dev, "gro", "off",
                            "gso", "off", "tso", "off", "tx", "off"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=10)


def upstream_config(tmp):
    a = harness.switch("a", [
        {"name": "h1", "pcap": {"rx": "h1.pcap"}, "role": "host", "rate": "10Gbps",
         "mac": A_H1, "peer_mac": H1, "ipv4": "10.0.1.1/24"},
        {"name": "b", "device": "net_pcap0,iface=slA", "role": "switch", "rate": "200Mbps",
         "mac": A_B, "peer_mac": B_A, "hop_rtt": HOP_RTT},
    ], [harness.route("10.0.2.0/24", "b")], queues_per_port=QUEUES,
        buffer={"size": "16MB", "alpha": 8.0}, bfc={"assignment": "dynamic"})
    return harness.write_config(os.path.join(tmp, "up.yaml"), [a], mbufs=16384)


def downstream_config(tmp):
    b = harness.switch("b", [
        {"name": "a", "device": "net_pcap1,iface=slB", "role": "switch", "rate": "200Mbps",
         "mac": B_A, "peer_mac": A_B, "hop_rtt": HOP_RTT},
        harness.port("h2", "net_null0,no-rx=1", B_H2, H2, "10.0.2.1/24", rate="20Mbps"),
    ], [harness.route("10.0.1.0/24", "a")], queues_per_port=QUEUES,
        buffer={"size": "16MB", "alpha": 8.0}, bfc={"assignment": "dynamic"})
    return harness.write_config(os.path.join(tmp, "down.yaml"), [b],
                                workers=[(1, ["b/a"]), (2, ["b/h2"])], mbufs=16384)


def h1_frames():
    arp = harness.arp_request(H1, "10.0.1.2", "10.0.1.1")
    burst = harness.udp_frames(H1, A_H1, "10.0.1.", "10.0.2.", BURST_FRAMES, sizes=(1514,),
                               flows=8)
    return [(0.0, arp)] + [(BURST_AT + i * 1.2e-6, f) for i, f in enumerate(burst)]


def in_ns(sluice):
    sluice.cmd = ["ip", "netns", "exec", NS] + sluice.cmd
    return sluice


def check_relay(counts):
    fwd, dropped = counts["forwarded"], counts["dropped"]
    check(dropped.get("bfc_resume", 0) > 0, f"the relay dropped no resume: {counts}")
    for kind in ("bfc_pause", "bfc_resume", "bfc_bitmap"):
        check(fwd.get(kind, 0) > 0, f"the relay forwarded no {kind}: {counts}")
    check(fwd.get("data", 0) >= BURST_FRAMES, f"the relay lost data frames: {counts}")
    check_eq(counts["send_errors"], 0, "relay send errors")


def check_summaries(up, down, counts):
    two.check_downstream_ran_first(up, down)
    a_b = harness.find_port(up, "a", "b")
    b_a = harness.find_port(down, "b", "a")
    b_h2 = harness.find_port(down, "b", "h2")
    lost = counts["dropped"]["bfc_resume"]
    check(a_b["bfc_pause_received"] > 0, f"the upstream applied no pause: {a_b}")
    check_eq(a_b["bfc_resume_received"], b_a["bfc_resume_sent"] - lost,
             "resumes the upstream applied (sent less lost)")
    repaired = a_b["bfc_bitmap_repaired_resumes"]
    check(0 < repaired <= lost, f"{lost} resumes lost, {repaired} repaired by bitmaps")
    check_eq(a_b["bfc_bitmap_repaired_pauses"], 0, "pauses repaired (none was lost)")
    check_eq(a_b["bfc_queues_paused"], 0, "a/b queues still paused at the end")
    check_eq(a_b["queued_at_stop"], 0, "packets left in a/b at the end")
    check_eq(b_h2["tx_packets"], BURST_FRAMES, "burst frames delivered to h2")
    for s in (up, down):
        for name, p in harness.summary_ports(s):
            check_eq(p["drops"], {}, f"drops at {name}")
    print(f"downstream (2 workers) sent {b_a['bfc_pause_sent']} pauses, "
          f"{b_a['bfc_resume_sent']} resumes, {b_a['bfc_bitmap_sent']} bitmaps; the relay "
          f"dropped {lost} resumes; upstream (1 worker) applied {a_b['bfc_pause_received']} "
          f"pauses, {a_b['bfc_resume_received']} resumes, {a_b['bfc_bitmap_received']} "
          f"bitmaps, which repaired {repaired} lost resumes; {b_h2['tx_packets']} frames to h2")


def run(binary, tmp):
    two.write_timed_pcap(os.path.join(tmp, "h1.pcap"), h1_frames())
    counts_path = os.path.join(tmp, "relay.json")
    relay = subprocess.Popen(["ip", "netns", "exec", NS, sys.executable,
                              os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                           "lossy_relay.py"), "rlA", "rlB",
                              "--drop-every", str(DROP_EVERY), "--counts", counts_path])
    try:
        up = in_ns(harness.Sluice(binary, tmp, upstream_config(tmp), "bfclossy-up",
                                  duration=DURATION, lcores="0@0,1@1"))
        down = in_ns(harness.Sluice(binary, tmp, downstream_config(tmp), "bfclossy-down",
                                    duration=DURATION, lcores="0@0,1@1,2@1"))
        time.sleep(0.5)
        check(relay.poll() is None, f"the relay exited at start (status {relay.returncode})")
        with up:
            time.sleep(1.0)
            with down:
                down.wait(timeout=DURATION + 30)
                up.wait(timeout=DURATION + 30)
        up.expect_clean_exit()
        down.expect_clean_exit()
    finally:
        relay.send_signal(signal.SIGTERM)
        try:
            relay.wait(timeout=10)
        except subprocess.TimeoutExpired:
            relay.kill()
            relay.wait()
    check_eq(relay.returncode, 0, "the relay's exit status")
    with open(counts_path) as f:
        counts = json.load(f)
    check_relay(counts)
    check_summaries(up.summary(), down.summary(), counts)


def test(binary, srcdir):
    if os.geteuid() != 0:
        raise harness.TestFailure("needs root (network namespace, veth)")
    with harness.TempDir("bfclossy") as tmp:
        try:
            make_wires()
            run(binary, tmp)
        finally:
            subprocess.run(["ip", "netns", "del", NS], stderr=subprocess.DEVNULL, timeout=10)


if __name__ == "__main__":
    harness.main(test)
