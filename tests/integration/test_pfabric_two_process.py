#!/usr/bin/python3
"""pFabric's rank between two sluice processes joined by net_memif (the
bare-metal case: two servers joined by NICs; docs/wire-formats.md,
"Transport frames"; docs/traffic-manager.md, "pFabric's port"):

    upstream process                        downstream process
    h1 (capture replay) -- a -- memif ---- b -- h2 (capture file, 100 Mb/s)

The upstream queues by class and carries the rank untouched; the
downstream's port to h2 is a pFabric port (`queueing: {mode: pfabric}`,
a 15 KB buffer) at 100 Mb/s, so a burst that h1 sends at up to 10 Gb/s
stands there. The burst is two flows: flow 1 (rank 1,000,000) and, one
frame in twenty, flow 2 (rank 100), which alone needs a twentieth of what
arrives. Checked in what h2 receives and in the summaries:

- every frame of flow 2 arrives (admission always finds a larger rank to
  drop), in order, and ahead of flow-1 frames sent before it that were
  still queued (service by rank jumps the queue; in arrival order no frame
  would);
- only flow 1 loses frames, as many as the downstream counts as
  priority_drop, and what arrives of flow 1 arrives in order;
- the ranks arrive as sent.

Real time on a busy machine promises no exact count; the 100:1 ratio of
the rates leaves the queue standing even if the replay runs slow."""

import os
import struct
import sys

import harness
import test_bfc_two_process as two
from harness import check, check_eq

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
from sluicepy import payload, pcapio  # noqa: E402

FRAMES = 400
APP_BYTES = 1000
DURATION = 9
BUFFER = 15_000


def frame(flow, seq, rank):
    """Ethernet / IPv4 / UDP / SLT1 data of `flow` with a rank (flag bit 3)."""
    slt = struct.pack("!4sBBBBIIIQ", b"SLT1", 1, 8, 0, 0, flow, seq * APP_BYTES, APP_BYTES, 0)
    body = slt + struct.pack("!I", rank) + bytes(APP_BYTES)
    udp = struct.pack("!HHHH", 49152 + flow, 9001, 8 + len(body), 0) + body
    ip = bytearray(struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0x4000, 64, 17, 0,
                               bytes([10, 0, 1, 2]), bytes([10, 0, 2, 2])))
    ip[10:12] = struct.pack("!H", payload.ipv4_checksum(bytes(ip)))
    return (payload.mac_bytes(two.A_H1) + payload.mac_bytes(two.H1) + b"\x08\x00" + bytes(ip)
            + udp)


def h1_frames():
    """An ARP request at 0 (it fixes the replay's origin), then from
    BURST_AT the burst, 1.2 us apart: one frame in twenty is flow 2's."""
    arp = harness.arp_request(two.H1, "10.0.1.2", "10.0.1.1")
    out, seqs = [(0.0, arp)], {1: 0, 2: 0}
    for i in range(FRAMES):
        flow = 2 if i % 20 == 10 else 1
        out.append((two.BURST_AT + i * 1.2e-6,
                    frame(flow, seqs[flow], 100 if flow == 2 else 1_000_000)))
        seqs[flow] += 1
    return out


def upstream_config(tmp, sock):
    a = harness.switch("a", [
        {"name": "h1", "pcap": {"rx": "h1.pcap"}, "role": "host", "rate": "10Gbps",
         "mac": two.A_H1, "peer_mac": two.H1, "ipv4": "10.0.1.1/24"},
        {"name": "b", "device": two.memif("client", sock), "role": "switch", "rate": "10Gbps",
         "mac": two.A_B, "peer_mac": two.B_A},
    ], [harness.route("10.0.2.0/24", "b")], buffer={"size": "16MB", "alpha": 8.0})
    return harness.write_config(os.path.join(tmp, "up.yaml"), [a], mbufs=16384)


def downstream_config(tmp, sock):
    b = harness.switch("b", [
        {"name": "a", "device": two.memif("server", sock), "role": "switch", "rate": "10Gbps",
         "mac": two.B_A, "peer_mac": two.A_B},
        {"name": "h2", "pcap": {"tx": "h2.pcap"}, "role": "host", "rate": "100Mbps",
         "mac": two.B_H2, "peer_mac": two.H2, "ipv4": "10.0.2.1/24",
         "queueing": {"mode": "pfabric", "buffer": f"{BUFFER}B"}},
    ], [harness.route("10.0.1.0/24", "a")], buffer={"size": "16MB", "alpha": 8.0})
    return harness.write_config(os.path.join(tmp, "down.yaml"), [b], mbufs=16384)


def received(path):
    """(flow, seq, rank) of each SLT1 frame h2 received, in order."""
    out = []
    for _, f, _ in pcapio.read_pcap(path):
        if len(f) < 74 or f[12:14] != b"\x08\x00" or f[42:46] != b"SLT1":
            continue
        flow, seq = struct.unpack_from("!II", f, 50)
        out.append((flow, seq // APP_BYTES, struct.unpack_from("!I", f, 70)[0]))
    return out


def test(binary, srcdir):
    with harness.TempDir("pfabric2p") as tmp:
        sock = os.path.join(tmp, "memif.sock")
        timed = h1_frames()
        two.write_timed_pcap(os.path.join(tmp, "h1.pcap"), timed)
        up = harness.Sluice(binary, tmp, upstream_config(tmp, sock), "pfabric2p-up",
                            lcores="0@0,1@1")
        down = harness.Sluice(binary, tmp, downstream_config(tmp, sock), "pfabric2p-down",
                              lcores="0@0,1@1", metrics=False)
        two.run_pair(up, down, sock, DURATION)
        got = received(os.path.join(tmp, "h2.pcap"))
        sent2 = sum(1 for i in range(FRAMES) if i % 20 == 10)
        flow2 = [g for g in got if g[0] == 2]
        flow1 = [g for g in got if g[0] == 1]
        check_eq(len(flow2), sent2, "flow 2's frames that reached h2")
        check_eq([s for _, s, _ in flow2], list(range(sent2)), "flow 2's order")
        check_eq([s for _, s, _ in flow1], sorted(s for _, s, _ in flow1), "flow 1's order")
        check({r for f, _, r in got} == {100, 1_000_000}, "ranks arrived changed")
        lost = FRAMES - len(got)
        drops = harness.find_port(down.summary(), "b", "h2")["drops"]
        check(lost > 0, "nothing was dropped: the queue never stood")
        check_eq(drops.get("priority_drop", 0), lost, "priority_drop against frames lost")
        # Jumping the queue: a flow-2 frame leaves ahead of the flow-1
        # frames sent before it and still queued when it arrived. In arrival
        # order none would; count the pairs (flow-1 frame sent earlier,
        # delivered later).
        sent_at = {}
        seqs = {1: 0, 2: 0}
        for i in range(FRAMES):
            flow = 2 if i % 20 == 10 else 1
            sent_at[(flow, seqs[flow])] = i
            seqs[flow] += 1
        jumped = 0
        for i, (f, s, _) in enumerate(got):
            if f == 2:
                jumped += sum(1 for g in got[i + 1:]
                              if g[0] == 1 and sent_at[(1, g[1])] < sent_at[(2, s)])
        check(jumped >= sent2, f"flow 2's frames went ahead of only {jumped} flow-1 frames sent "
                               "before them (arrival order: none)")
        print(f"{len(got)} of {FRAMES} frames reached h2 across two processes; flow 2 all "
              f"{sent2} in order, ahead of {jumped} flow-1 frames sent before them; {lost} "
              "flow-1 frames dropped as priority_drop")


if __name__ == "__main__":
    harness.main(test)
