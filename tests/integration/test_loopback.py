#!/usr/bin/python3
"""Loopback on virtual devices: two ports whose net_pcap devices replay
traffic forever (infinite_rx), each addressed to hosts behind the other port;
what sluice transmits is dropped by the rx-only pcap device. sluice must start,
forward in both directions, serve Prometheus metrics that pass `promtool check
metrics` while it runs, and stop cleanly on SIGINT with exit 0 and a summary.

A second run maps three lcores onto the two cores (--lcores 0@0,1@0,2@1)
with p0 on worker lcore 1 and p1 on worker lcore 2, so every forwarded packet
crosses between lcores on a ring."""

import os
import signal
import time

import harness
from harness import check, check_eq, metric_value

P0_MAC, P0_PEER = "02:00:00:00:00:01", "02:00:00:00:00:a1"
P1_MAC, P1_PEER = "02:00:00:00:00:02", "02:00:00:00:00:a2"

MBUFS_DEFAULT = 32768  # lib/config/config.h

METRICS = {
    # name: labels every sample must carry
    "sluice_port_rx_packets_total": {"switch", "port"},
    "sluice_port_rx_bytes_total": {"switch", "port"},
    "sluice_port_tx_packets_total": {"switch", "port"},
    "sluice_port_tx_bytes_total": {"switch", "port"},
    "sluice_port_drops_total": {"switch", "port", "reason"},
    "sluice_port_ecn_marks_total": {"switch", "port"},
    "sluice_queue_depth_bytes": {"switch", "port", "queue"},
    "sluice_buffer_occupancy_bytes": {"switch"},
    "sluice_queue_residence_seconds_bucket": {"switch", "port", "le"},
    "sluice_queue_residence_seconds_sum": {"switch", "port"},
    "sluice_queue_residence_seconds_count": {"switch", "port"},
    "sluice_lcore_busy_ratio": {"lcore"},
    "sluice_mbuf_pool_size": {"socket"},
    "sluice_mbuf_pool_in_use": {"socket"},
}


def write_inputs(tmp):
    a = harness.udp_frames(P0_PEER, P0_MAC, "10.0.0.", "10.0.1.", 240)
    b = harness.udp_frames(P1_PEER, P1_MAC, "10.0.1.", "10.0.0.", 240)
    a.append(harness.bad_checksum_frame(P0_PEER, P0_MAC, "10.0.0.2", "10.0.1.2"))
    pa, pb = os.path.join(tmp, "a.pcap"), os.path.join(tmp, "b.pcap")
    harness.write_pcap(pa, a)
    harness.write_pcap(pb, b)
    return pa, pb


def config(tmp, pa, pb, name, workers=None):
    ports = [
        harness.port("p0", f"net_pcap0,rx_pcap={pa},infinite_rx=1", P0_MAC, P0_PEER,
                     "10.0.0.1/24", rate="10Gbps"),
        harness.port("p1", f"net_pcap1,rx_pcap={pb},infinite_rx=1", P1_MAC, P1_PEER,
                     "10.0.1.1/24", rate="10Gbps"),
    ]
    routes = [harness.route("10.0.0.0/24", "p0"), harness.route("10.0.1.0/24", "p1")]
    return harness.write_config(os.path.join(tmp, name + ".yaml"),
                                [harness.switch("s1", ports, routes, queues_per_port=4)],
                                workers=workers)


def check_metrics(text, expect_lcores):
    harness.promtool_check(text)
    samples = harness.metric_samples(text)
    for name, labels in METRICS.items():
        check(samples.get(name), f"metric {name} missing from /metrics")
        for lab, _ in samples[name]:
            check(labels <= set(lab), f"{name}{lab}: expected labels {sorted(labels)}")
    for port in ("p0", "p1"):
        check(metric_value(samples, "sluice_port_rx_packets_total", switch="s1", port=port) > 0,
              f"sluice_port_rx_packets_total for {port} is 0 while traffic flows")
        check(metric_value(samples, "sluice_port_tx_packets_total", switch="s1", port=port) > 0,
              f"sluice_port_tx_packets_total for {port} is 0 while traffic flows")
    lcores = {lab["lcore"] for lab, _ in samples["sluice_lcore_busy_ratio"]}
    check(expect_lcores <= lcores, f"sluice_lcore_busy_ratio lcores {lcores}, expected"
                                   f" at least {expect_lcores}")
    for lab, v in samples["sluice_lcore_busy_ratio"]:
        check(0.0 <= v <= 1.0, f"sluice_lcore_busy_ratio{lab} = {v}, not a ratio")
    check(metric_value(samples, "sluice_port_drops_total", switch="s1", port="p0",
                reason="bad_ip_checksum") > 0, "bad_ip_checksum drops not counted on p0")
    # The default 'mbufs' (docs/configuration.md); the device rings of the
    # two net_pcap ports hold some while traffic flows.
    for lab, size in samples["sluice_mbuf_pool_size"]:
        in_use = metric_value(samples, "sluice_mbuf_pool_in_use", socket=lab["socket"])
        check(size == MBUFS_DEFAULT and 0 < in_use <= size,
              f"mbuf pool {lab}: {in_use} in use of {size} (want {MBUFS_DEFAULT})")
    return samples


def check_summary(summary):
    for port in ("p0", "p1"):
        p = harness.find_port(summary, "s1", port)
        check(p["rx_packets"] > 0, f"{port}: nothing received")
        check(p["tx_packets"] > 0, f"{port}: nothing transmitted")
        check(p["tx_bytes"] > 0, f"{port}: tx_bytes 0")
    harness.check_identity(summary)


def test(binary, srcdir):
    with harness.TempDir("loopback") as tmp:
        pa, pb = write_inputs(tmp)

        # One worker lcore; stopped by SIGINT.
        cfg = config(tmp, pa, pb, "one-worker")
        with harness.Sluice(binary, tmp, cfg, "one-worker", duration=60) as s:
            first = harness.metric_samples(s.metrics_text(timeout=30))
            time.sleep(1.5)
            text = s.metrics_text()
            samples = check_metrics(text, {"1"})
            before = metric_value(first, "sluice_port_tx_packets_total", switch="s1", port="p1")
            after = metric_value(samples, "sluice_port_tx_packets_total", switch="s1", port="p1")
            check(after > before, f"tx counter of p1 did not move between scrapes"
                                  f" ({before} -> {after})")
            check(s.running(), "sluice exited before SIGINT")
            check_eq(s.stop(signal.SIGINT), 0, "exit status after SIGINT")
            check("summary" in s.stdout(), "no summary printed after SIGINT:\n" + s.logs())
            check_summary(s.summary())

        # Three lcores on two cores; p0 and p1 owned by different workers.
        cfg = config(tmp, pa, pb, "two-workers", workers=[(1, ["s1/p0"]), (2, ["s1/p1"])])
        with harness.Sluice(binary, tmp, cfg, "two-workers", duration=60,
                            lcores="0@0,1@0,2@1") as s:
            harness.metric_samples(s.metrics_text(timeout=30))
            time.sleep(1.5)
            check_metrics(s.metrics_text(), {"1", "2"})
            check_eq(s.stop(signal.SIGINT), 0, "exit status after SIGINT (two workers)")
            summary = s.summary()
            check_summary(summary)
            drops = harness.drops_by_reason(summary, "s1")
            print(f"two workers: p0 tx {harness.find_port(summary, 's1', 'p0')['tx_packets']},"
                  f" p1 tx {harness.find_port(summary, 's1', 'p1')['tx_packets']}, drops {drops}")


if __name__ == "__main__":
    harness.main(test)
