#!/usr/bin/python3
"""Floodgate between two sluice processes joined by net_memif (the
bare-metal case: two servers joined by NICs), the downstream one running
more worker lcores than the upstream one. The same set-up as
test_bfc_two_process.py, whose helpers it uses:

    upstream process (1 worker)            downstream process (2 workers)
    h1 (capture replay) -- a -- memif ---- b -- h2 (net_null, 1 Gbps)

The downstream's host port b/h2 is on its second worker, so the credit its
departures earn is aggregated there and crosses to b/a's worker on the
control ring before it leaves as FG_CREDIT. h1's 10 Gbps burst of 4,000
frames to one destination meets h2's 1 Gbps port. Checked:

- credit crossed the processes for every byte delivered: b/a sent, and a/b
  received, exactly the burst's bytes, and none was refused as invalid;
- the upstream's window held the burst back: its VOQ held packets, and the
  downstream, whose buffer is smaller than the burst, dropped nothing;
- every frame reached h2, and the upstream's windows end whole (none in
  use, nothing outstanding, the VOQ empty);
- the upstream's metrics pass promtool and carry the Floodgate families;
- the downstream's data path ran before the burst."""

import os

import harness
import test_bfc_two_process as two
from harness import check, check_eq

FRAME = 1514


def upstream_config(tmp, sock):
    a = harness.switch("a", [
        {"name": "h1", "pcap": {"rx": "h1.pcap"}, "role": "host", "rate": "10Gbps",
         "mac": two.A_H1, "peer_mac": two.H1, "ipv4": "10.0.1.1/24"},
        {"name": "b", "device": two.memif("client", sock), "role": "switch", "rate": "10Gbps",
         "mac": two.A_B, "peer_mac": two.B_A, "hop_rtt": two.HOP_RTT},
    ], [harness.route("10.0.2.0/24", "b")], buffer={"size": "16MB", "alpha": 8.0},
        floodgate={})
    return harness.write_config(os.path.join(tmp, "up.yaml"), [a], mbufs=16384)


def downstream_config(tmp, sock):
    # Room for the upstream's window (1.5 x 10 Gb/s x 200 us + 10 Gb/s x
    # 10 us = 387.5 KB) under the dynamic threshold, not for the burst (6 MB).
    b = harness.switch("b", [
        {"name": "a", "device": two.memif("server", sock), "role": "switch", "rate": "10Gbps",
         "mac": two.B_A, "peer_mac": two.A_B, "hop_rtt": two.HOP_RTT},
        harness.port("h2", "net_null0,no-rx=1", two.B_H2, two.H2, "10.0.2.1/24", rate="1Gbps"),
    ], [harness.route("10.0.1.0/24", "a")], buffer={"size": "1MB", "alpha": 8.0},
        floodgate={})
    return harness.write_config(os.path.join(tmp, "down.yaml"), [b],
                                workers=[(1, ["b/a"]), (2, ["b/h2"])], mbufs=16384)


def h1_frames():
    """As test_bfc_two_process's burst, but all to one destination: the
    window bounds the bytes in flight per destination, so the downstream's
    buffer needs room for one window, not one per flow."""
    arp = harness.arp_request(two.H1, "10.0.1.2", "10.0.1.1")
    burst = harness.udp_frames(two.H1, two.A_H1, "10.0.1.", "10.0.2.", two.BURST_FRAMES,
                               sizes=(FRAME,), flows=1)
    return [(0.0, arp)] + [(two.BURST_AT + i * 1.2e-6, f) for i, f in enumerate(burst)]


def check_metrics(text):
    harness.promtool_check(text)
    samples = harness.metric_samples(text)
    for family in ("sluice_floodgate_frames_received_total",
                   "sluice_floodgate_credit_received_bytes_total",
                   "sluice_floodgate_window_outstanding_bytes"):
        check(family in samples, f"upstream metrics lack {family}")


def check_telemetry(up):
    """/sluice/port on the upstream's switch-facing port gives its Floodgate
    frames and credit while it runs."""
    answer = up.telemetry("/sluice/port,a/b")["/sluice/port"]
    for key in ("fg_credit_received", "fg_sync_sent", "fg_credit_received_bytes",
                "fg_credit_lost_bytes"):
        check(key in answer, f"telemetry /sluice/port,a/b lacks {key}: {answer}")


def check_summaries(up, down):
    two.check_downstream_ran_first(up, down)
    harness.check_identity(up)
    harness.check_identity(down)
    a_b = harness.find_port(up, "a", "b")
    b_a = harness.find_port(down, "b", "a")
    b_h2 = harness.find_port(down, "b", "h2")
    check_eq(len(down["workers"]), 2, "downstream worker lcores")
    burst = two.BURST_FRAMES * FRAME
    check_eq(b_a["fg_credit_sent_bytes"], burst, "credit bytes the downstream sent")
    check_eq(a_b["fg_credit_received_bytes"], burst, "credit bytes the upstream received")
    check_eq(a_b["fg_credit_received"], b_a["fg_credit_sent"], "credit frames across memif")
    fg = next(s for s in up["switches"] if s["name"] == "a")["floodgate"]
    check_eq(fg["invalid_credit_bytes"], 0, "credit the upstream refused")
    check_eq(a_b["fg_credit_lost_bytes"], 0, "credit the upstream lost")
    check(fg["held_packets"] > 0, f"the upstream's VOQ never held a packet: {fg}")
    check_eq((fg["windows_in_use_at_stop"], fg["window_outstanding_bytes_at_stop"],
              fg["voq_packets_at_stop"]), (0, 0, 0), "the upstream's windows at the end")
    check_eq(b_h2["tx_packets"], two.BURST_FRAMES, "burst frames delivered to h2")
    for s in (up, down):
        for name, p in harness.summary_ports(s):
            check_eq(p["drops"], {}, f"drops at {name}")
    print(f"downstream (2 workers) sent {b_a['fg_credit_sent']} credit frames for "
          f"{burst} B; upstream (1 worker) held {fg['held_packets']} packets in its VOQ "
          f"(peak {fg['voq_peak_bytes']} B); {b_h2['tx_packets']} frames to h2, no drops")


def test(binary, srcdir):
    with harness.TempDir("fg2p") as tmp:
        sock = os.path.join(tmp, "memif.sock")
        two.write_timed_pcap(os.path.join(tmp, "h1.pcap"), h1_frames())
        up = harness.Sluice(binary, tmp, upstream_config(tmp, sock), "fg2p-up",
                            lcores="0@0,1@1")
        down = harness.Sluice(binary, tmp, downstream_config(tmp, sock), "fg2p-down",
                              lcores="0@0,1@1,2@1", metrics=False)

        def during():
            check_metrics(up.metrics_text())
            check_telemetry(up)

        two.run_pair(up, down, sock, two.DURATION, during)
        check_summaries(up.summary(), down.summary())


if __name__ == "__main__":
    harness.main(test)
