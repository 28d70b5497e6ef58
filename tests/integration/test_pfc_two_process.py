#!/usr/bin/python3
"""PFC between two sluice processes joined by net_memif, the downstream's
ingress with PFC settings of its own (docs/mechanisms/pfc.md, "Per port").

    upstream process                       downstream process
    h1 (capture replay) -- a -- memif ---- b -- h2 (net_null, 1 Gbps)
                                 client  server

h1 replays a 10 Gbps burst of 4,000 full frames (6 MB, 4.8 ms) to h2,
whose 1 Gbps port is the bottleneck, so the burst piles up in b. b's
buffer is 16 MB, and its switch-wide PFC threshold is alpha 1 of the free
pool: XOFF above about 7.8 MB, more than the burst, so by that alone b
would never pause a. Its port b/a sets alpha 1/16 (XOFF above about
920 KB), a reserve and a headroom of its own: a pause on the wire is the
port's own threshold at work. Two processes time-sharing CPUs react in a
millisecond or so, so what b holds at its peak is that threshold plus the
reaction's bytes. Checked (the two processes share 2 CPUs, so only
what real time can promise):

- b sent PFC frames on b/a, XOFF and XON, and a received them (none
  invalid or ignored) and was paused for a measurable time;
- a's queue toward b was held paused with packets in it (queue trace of
  a/b: rows with paused = 1 and bytes > 0): the backlog waited upstream;
- b never held as much as the burst: its h2 queue peaked below 6 MB;
- nothing was dropped anywhere and every frame of the burst reached h2;
- a/b ends unpaused and empty, b/a ends in XON;
- the downstream's data path ran before the burst (else the test proves
  nothing and says so)."""

import csv
import os

import harness
import test_bfc_two_process as two
from harness import check, check_eq

A_H1, H1 = "02:00:00:00:2a:01", "02:00:00:00:2a:a1"
A_B, B_A = "02:00:00:00:2a:02", "02:00:00:00:2b:01"
B_H2, H2 = "02:00:00:00:2b:02", "02:00:00:00:2b:a2"
BURST_FRAMES = 4000
BURST_BYTES = BURST_FRAMES * 1514
# Later than the BFC test's 6 s: this test also runs beside builds and
# sanitised tests, and the downstream must be up before the burst.
BURST_AT = 8.0
DURATION = 12
HOP_RTT = "200us"


def upstream_config(tmp, sock):
    # a honours b's frames; its own XOFF (12 MB) never fires: the replay
    # host is not the subject here.
    a = harness.switch("a", [
        {"name": "h1", "pcap": {"rx": "h1.pcap"}, "role": "host", "rate": "10Gbps",
         "mac": A_H1, "peer_mac": H1, "ipv4": "10.0.1.1/24"},
        {"name": "b", "device": two.memif("client", sock), "role": "switch", "rate": "10Gbps",
         "mac": A_B, "peer_mac": B_A, "hop_rtt": HOP_RTT},
    ], [harness.route("10.0.2.0/24", "b")], queues_per_port=1,
        buffer={"size": "16MB", "alpha": 1000.0}, pfc={"mode": "pfc", "xoff": "12MB"})
    return harness.write_config(os.path.join(tmp, "up.yaml"), [a], mbufs=16384)


def downstream_config(tmp, sock):
    b = harness.switch("b", [
        {"name": "a", "device": two.memif("server", sock), "role": "switch", "rate": "10Gbps",
         "mac": B_A, "peer_mac": A_B, "hop_rtt": HOP_RTT,
         "pfc": {"alpha": 0.0625, "reserve": "4KiB", "headroom": "300KB"}},
        harness.port("h2", "net_null0,no-rx=1", B_H2, H2, "10.0.2.1/24", rate="1Gbps"),
    ], [harness.route("10.0.1.0/24", "a")], queues_per_port=1,
        buffer={"size": "16MB", "alpha": 1000.0},
        pfc={"mode": "pfc", "xoff": "dynamic", "alpha": 1.0})
    return harness.write_config(os.path.join(tmp, "down.yaml"), [b], mbufs=16384)


def h1_frames():
    """An ARP request at 0 (fixes the replay's origin), then the burst from
    BURST_AT at 10 Gbps (1.2 us apart)."""
    arp = harness.arp_request(H1, "10.0.1.2", "10.0.1.1")
    burst = harness.udp_frames(H1, A_H1, "10.0.1.", "10.0.2.", BURST_FRAMES, sizes=(1514,),
                               flows=8)
    return [(0.0, arp)] + [(BURST_AT + i * 1.2e-6, f) for i, f in enumerate(burst)]


def trace_rows(path, port):
    with open(path, newline="") as f:
        return [r for r in csv.DictReader(f) if r["port"] == port and r["queue"].isdigit()]


def check_run(up, down, up_rows, down_rows):
    two.check_downstream_ran_first(up, down, BURST_AT)
    a_b = harness.find_port(up, "a", "b")
    b_a = harness.find_port(down, "b", "a")
    b_h2 = harness.find_port(down, "b", "h2")
    check(b_a.get("pfc_frames_sent", 0) >= 2,
          f"b/a sent {b_a.get('pfc_frames_sent', 0)} PFC frames: no XOFF and XON; its own "
          f"alpha did not take effect: {b_a}")
    check(a_b.get("pfc_frames_received", 0) > 0, f"a/b applied no PFC frame: {a_b}")
    check(a_b.get("pfc_paused_ns", 0) > 0, f"a/b was never paused: {a_b}")
    paused = [r for r in up_rows if r["paused"] == "1" and int(r["bytes"]) > 0]
    check(len(paused) > 0, "the queue trace of a/b shows no paused queue holding packets")
    peak = max((int(r["bytes"]) for r in down_rows), default=0)
    check(0 < peak < BURST_BYTES,
          f"b/h2 peaked at {peak} B against a burst of {BURST_BYTES} B: b did not hold a back")
    for p in (a_b, b_a, b_h2):
        check_eq(p["drops"], {}, f"drops at {p['name']}")
    check_eq(b_h2["tx_packets"], BURST_FRAMES, "burst frames delivered to h2")
    check_eq(a_b["queued_at_stop"], 0, "packets left in a/b at the end")
    print(f"b/a sent {b_a['pfc_frames_sent']} PFC frames; a/b applied "
          f"{a_b['pfc_frames_received']} and was paused {a_b['pfc_paused_ns'] / 1e3:.0f} us; "
          f"{len(paused)} trace samples of a paused a/b holding packets; b/h2 peaked at "
          f"{peak} B of a {BURST_BYTES} B burst; {b_h2['tx_packets']} frames to h2")


def test(binary, srcdir):
    with harness.TempDir("pfc2p") as tmp:
        sock = os.path.join(tmp, "memif.sock")
        two.write_timed_pcap(os.path.join(tmp, "h1.pcap"), h1_frames())
        up_trace = os.path.join(tmp, "up_trace.csv")
        down_trace = os.path.join(tmp, "down_trace.csv")
        trace = ["--queue-trace-interval", "0.0001"]
        up = harness.Sluice(binary, tmp, upstream_config(tmp, sock), "pfc2p-up",
                            lcores="0@0,1@1",
                            app_extra=["--queue-trace", up_trace, "--queue-trace-ports", "a/b"] +
                            trace)
        # Upstream's worker on CPU 1, the downstream's on CPU 0.
        down = harness.Sluice(binary, tmp, downstream_config(tmp, sock), "pfc2p-down",
                              lcores="0@1,1@0", metrics=False,
                              app_extra=["--queue-trace", down_trace, "--queue-trace-ports",
                                         "b/h2"] + trace)
        two.run_pair(up, down, sock, DURATION)
        check_run(up.summary(), down.summary(), trace_rows(up_trace, "b"),
                  trace_rows(down_trace, "h2"))


if __name__ == "__main__":
    harness.main(test)
