#!/usr/bin/python3
"""Each data queue's counters on /metrics add up (docs/metrics.md,
sluice_queue_*). p0 replays a capture once (no infinite_rx) of full-size
frames that all go to p1, their DSCPs chosen for queues 0, 1 and 2 of p1's
four (class_map: dscp maps DSCP d to queue d x 4 / 64); once p0 has
received the whole capture and p1's queues are empty, /metrics is scraped
and, for p1:

  per queue:  enqueued + refused (all reasons) = the capture's frames for it
              enqueued = dequeued (packets and bytes); queue 3 saw nothing
  summed:     dequeued = tx_packets (p1 builds no frames), bytes = tx_bytes
              refused by reason = the port's drops for that reason
              ECN marks = the port's ECN marks

Three runs: p1 shaped to 100 Mbps behind a 256 KB buffer (queues overflow,
ECN marks); p1 unshaped (frames cut through idle queues, so the counts come
from the pass's accounting); and BFC on the switch with p1 shaped to
10 Gbps (p0 too: BFC needs its ports' rates), where the flow table
picks the queue (only the sums are known:
the queues the flows take are BFC's)."""

import os
import time

import harness
from harness import check, check_eq, metric_value

P0_MAC, P0_PEER = "02:00:00:00:00:01", "02:00:00:00:00:a1"
P1_MAC, P1_PEER = "02:00:00:00:00:02", "02:00:00:00:00:a2"
# DSCP -> p1's queue of four, and how many frames of the capture each gets.
CLASSES = ((0, 0, 700), (16, 1, 500), (40, 2, 900))
QUEUES = 4
TM_REASONS = ("buffer_full", "queue_threshold", "queue_full")


def write_capture(path):
    """The capture, classes interleaved; returns the frames per queue."""
    per_class = []
    for dscp, _, n in CLASSES:
        per_class.append(harness.udp_frames(P0_PEER, P0_MAC, "10.0.0.", "10.0.1.", n,
                                            sizes=(1514,), tos=dscp << 2 | 0x02))
    frames = []
    for i in range(max(n for _, _, n in CLASSES)):
        frames += [c[i] for c in per_class if i < len(c)]
    harness.write_pcap(path, frames)
    want = [0] * QUEUES
    for _, q, n in CLASSES:
        want[q] += n
    return len(frames), want


def per_queue(samples, name, **labels):
    return [metric_value(samples, name, switch="s1", port="p1", queue=q, **labels)
            for q in range(QUEUES)]


def scrape_when_drained(s, frames, name):
    """/metrics once p0 received the capture and p1 holds nothing, and two
    scrapes 0.3 s apart agree on p1's transmissions."""
    deadline = time.monotonic() + 60
    last = None
    while time.monotonic() < deadline:
        samples = harness.metric_samples(s.metrics_text(timeout=30))
        rx = metric_value(samples, "sluice_port_rx_packets_total", switch="s1", port="p0")
        queued = metric_value(samples, "sluice_port_queued_bytes", switch="s1", port="p1")
        tx = metric_value(samples, "sluice_port_tx_packets_total", switch="s1", port="p1")
        if rx == frames and queued == 0 and last == tx:
            return samples
        last = tx if rx == frames and queued == 0 else None
        time.sleep(0.3)
    raise harness.TestFailure(f"{name}: p1 did not drain within 60 s\n" + s.logs())


def run(binary, tmp, name, pcap, frames, want, p1_rate, bfc=False):
    ports = [
        harness.port("p0", f"net_pcap0,rx_pcap={pcap}", P0_MAC, P0_PEER, "10.0.0.1/24",
                     rate="10Gbps" if bfc else "0"),  # BFC's Th needs every port's rate
        harness.port("p1", "net_null0,no-rx=1", P1_MAC, P1_PEER, "10.0.1.1/24", rate=p1_rate),
    ]
    extra = {"buffer": {"size": "256KB", "alpha": 1.0}, "queues_per_port": QUEUES,
             "ecn": {"mode": "step", "k": "30KB"}}
    if bfc:
        extra["bfc"] = {"enabled": True}
    else:
        extra["class_map"] = "dscp"
    cfg = harness.write_config(os.path.join(tmp, name + ".yaml"),
                               [harness.switch("s1", ports, [], **extra)])
    with harness.Sluice(binary, tmp, cfg, name, duration=120) as s:
        m = scrape_when_drained(s, frames, name)
        check_eq(s.stop(), 0, f"{name}: exit status after SIGINT")

    enq = per_queue(m, "sluice_queue_enqueued_packets_total")
    deq = per_queue(m, "sluice_queue_dequeued_packets_total")
    enq_b = per_queue(m, "sluice_queue_enqueued_bytes_total")
    deq_b = per_queue(m, "sluice_queue_dequeued_bytes_total")
    marks = per_queue(m, "sluice_queue_ecn_marks_total")
    refused = {r: per_queue(m, "sluice_queue_refused_total", reason=r) for r in TM_REASONS}
    port = {k: metric_value(m, f"sluice_port_{k}_total", switch="s1", port="p1")
            for k in ("tx_packets", "tx_bytes", "generated_packets", "ecn_marks")}

    check_eq(enq, deq, f"{name}: packets each queue took and sent (drained)")
    check_eq(enq_b, deq_b, f"{name}: bytes each queue took and sent (drained)")
    check_eq(port["generated_packets"], 0.0, f"{name}: frames p1 built")
    check_eq(sum(deq), port["tx_packets"], f"{name}: the queues' packets against p1's tx")
    check_eq(sum(deq_b), port["tx_bytes"], f"{name}: the queues' bytes against p1's tx")
    check_eq(sum(marks), port["ecn_marks"], f"{name}: the queues' ECN marks against p1's")
    for r in TM_REASONS:
        drops = metric_value(m, "sluice_port_drops_total", switch="s1", port="p1", reason=r)
        check_eq(sum(refused[r]), drops, f"{name}: the queues' {r} against p1's drops")
    lost = [sum(refused[r][q] for r in TM_REASONS) for q in range(QUEUES)]
    if bfc:
        check_eq(sum(enq) + sum(lost), float(frames), f"{name}: frames the queues saw")
        check(sum(1 for n in enq if n > 0) >= 2, f"{name}: BFC's flows took one queue: {enq}")
    else:
        check_eq([e + x for e, x in zip(enq, lost)], [float(w) for w in want],
                 f"{name}: frames each queue saw (taken + refused)")
    print(f"{name}: enqueued {enq}, refused {lost}, marks {marks}")
    return enq, lost, marks


def test(binary, srcdir):
    with harness.TempDir("queue-counters") as tmp:
        pcap = os.path.join(tmp, "p0.pcap")
        frames, want = write_capture(pcap)
        _, lost, marks = run(binary, tmp, "shaped", pcap, frames, want, "100Mbps")
        check(sum(1 for q in range(3) if lost[q] > 0) >= 2,
              f"shaped: want refusals in at least two queues, got {lost}")
        check(sum(marks) > 0, "shaped: no ECN marks on the overloaded port")
        _, lost, _ = run(binary, tmp, "unshaped", pcap, frames, want, "0")
        check_eq(lost, [0] * QUEUES, "unshaped: refusals on a port faster than its input")
        run(binary, tmp, "bfc", pcap, frames, want, "10Gbps", bfc=True)


if __name__ == "__main__":
    harness.main(test)
