#!/usr/bin/python3
"""SIGTERM and SIGINT each stop a running sluice (no --duration) cleanly: exit
status 0, the final summary on stdout, the summary JSON written with the
traffic it forwarded, and the counters identity holding at the stop."""

import os
import signal
import time

import harness
from harness import check, check_eq

P0_MAC, P0_PEER = "02:00:00:00:00:01", "02:00:00:00:00:a1"
P1_MAC, P1_PEER = "02:00:00:00:00:02", "02:00:00:00:00:a2"


def test(binary, srcdir):
    with harness.TempDir("signals") as tmp:
        pa = os.path.join(tmp, "a.pcap")
        harness.write_pcap(pa, harness.udp_frames(P0_PEER, P0_MAC, "10.0.0.", "10.0.1.", 64))
        ports = [
            harness.port("p0", f"net_pcap0,rx_pcap={pa},infinite_rx=1", P0_MAC, P0_PEER,
                         "10.0.0.1/24", rate="1Gbps"),
            harness.port("p1", "net_null0,no-rx=1", P1_MAC, P1_PEER, "10.0.1.1/24",
                         rate="1Gbps"),
        ]
        cfg = harness.write_config(os.path.join(tmp, "signals.yaml"),
                                   [harness.switch("s1", ports, [])])
        for sig in (signal.SIGTERM, signal.SIGINT):
            name = signal.Signals(sig).name.lower()
            with harness.Sluice(binary, tmp, cfg, name) as s:
                s.metrics_text(timeout=30)  # up and forwarding
                time.sleep(1.0)
                check(s.running(), f"{name}: sluice exited before the signal")
                rc = s.stop(sig, timeout=20)
                check_eq(rc, 0, f"exit status after {name.upper()}\n{s.logs()}")
                out = s.stdout()
                check("sluice summary" in out, f"no summary line on stdout after"
                                               f" {name.upper()}:\n{out[-2000:]}")
                summary = s.summary()
                p1 = harness.find_port(summary, "s1", "p1")
                check(p1["tx_packets"] > 0, f"{name}: p1 transmitted nothing before the stop")
                check(summary["duration_seconds"] > 0.5, f"{name}: duration"
                      f" {summary['duration_seconds']}")
                harness.check_identity(summary)


if __name__ == "__main__":
    harness.main(test)
