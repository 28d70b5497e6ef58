#!/usr/bin/python3
"""sluice-allocator (docs/mechanisms/flowtune.md, "The allocator program"):
two flows into one destination converge to about half the host rate each and
the survivor to about the host rate after a FLOWLET_END; a stable rate is
re-sent within the lease; malformed datagrams are counted by reason and
dropped without harm; the metrics pass promtool; SIGTERM stops it with exit
status 0 and a summary line. Messages are built with struct as in
docs/wire-formats.md ("Flowtune")."""

import os
import re
import signal
import socket
import struct
import subprocess
import time
import urllib.request

import harness
from harness import check, check_eq, metric_value

HOST_RATE_KBPS = 10_000_000  # --host-rate 10Gbps
LEASE_S = 0.2
TOLERANCE = 0.03


def ip(s):
    return struct.unpack("!I", socket.inet_aton(s))[0]


def header(typ, count):
    return struct.pack("!2sBBHH", b"FT", 1, typ, count, 0)


def flowlet_start(entries):
    """entries: (flow id, src, dst, weight)."""
    return header(1, len(entries)) + b"".join(
        struct.pack("!IIIHH", f, ip(s), ip(d), w, 0) for f, s, d, w in entries)


def flowlet_end(ids):
    return header(2, len(ids)) + b"".join(struct.pack("!I", f) for f in ids)


def parse_rate_update(data):
    magic, ver, typ, count, _ = struct.unpack_from("!2sBBHH", data)
    check(magic == b"FT" and ver == 1 and typ == 3, f"not a RATE_UPDATE: {data[:8]!r}")
    check_eq(len(data), 8 + 8 * count, "RATE_UPDATE length")
    return [struct.unpack_from("!II", data, 8 + 8 * i) for i in range(count)]


def scrape(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
        return r.read().decode()


def test(sluice_binary, srcdir):
    binary = os.path.join(os.path.dirname(os.path.dirname(sluice_binary)), "allocator",
                          "sluice-allocator")
    check(os.access(binary, os.X_OK), f"{binary} not built")
    mport = harness.free_port()
    proc = subprocess.Popen(
        [binary, "--address", "127.0.0.1:0", "--metrics-address", f"127.0.0.1:{mport}",
         "--host-rate", "10Gbps", "--iteration", "100us", "--lease", f"{int(LEASE_S * 1000)}ms",
         "--duration", "60s"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = proc.stdout.readline()
        check("listening on 127.0.0.1:" in first, f"no listening line: {first!r}")
        port = int(first.split("listening on 127.0.0.1:")[1].split()[0])
        alloc = ("127.0.0.1", port)
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sock.bind(("127.0.0.1", 0))
        rates = {}

        def receive_until(pred, timeout, what):
            end = time.monotonic() + timeout
            while time.monotonic() < end:
                sock.settimeout(max(0.01, end - time.monotonic()))
                try:
                    data, src = sock.recvfrom(65536)
                except socket.timeout:
                    break
                check_eq(src, alloc, "RATE_UPDATE source")
                for f, r in parse_rate_update(data):
                    rates[f] = r
                if pred():
                    return
            raise harness.TestFailure(f"{what} within {timeout} s; last rates {rates}")

        def near(f, target):
            return f in rates and abs(rates[f] - target) <= TOLERANCE * target

        # Two flows from two hosts into one destination: its down link is shared.
        sock.sendto(flowlet_start([(1, "10.0.0.2", "10.0.2.2", 1),
                                   (2, "10.0.1.2", "10.0.2.2", 1)]), alloc)
        half = HOST_RATE_KBPS / 2
        receive_until(lambda: near(1, half) and near(2, half), 5, "rates near host-rate/2")
        time.sleep(0.3)  # settle, then take the latest values
        sock.settimeout(0.01)
        try:
            while True:
                data, _ = sock.recvfrom(65536)
                for f, r in parse_rate_update(data):
                    rates[f] = r
        except socket.timeout:
            pass
        check(near(1, half) and near(2, half), f"converged rates {rates}, want ~{half:.0f} kbit/s")

        # Lease: nothing sent, nothing changes; the rate still comes again in time.
        t0 = time.monotonic()
        rates.clear()
        receive_until(lambda: 2 in rates and 1 in rates, LEASE_S, "a lease re-send")
        lease_gap = time.monotonic() - t0

        # FLOWLET_END for flow 1: flow 2 gets the whole down link.
        sock.sendto(flowlet_end([1]), alloc)
        receive_until(lambda: near(2, HOST_RATE_KBPS), 5, "flow 2 near the host rate")

        # Duplicates and unknowns, then garbage of every kind.
        sock.sendto(flowlet_start([(2, "10.0.1.2", "10.0.2.2", 1)]), alloc)
        sock.sendto(flowlet_end([77]), alloc)
        garbage = [
            b"", b"F", b"XT\x01\x01\x00\x00\x00\x00",            # too short, bad magic
            b"FT\x02\x01\x00\x00\x00\x00",                        # bad version
            b"FT\x01\x09\x00\x00\x00\x00",                        # unknown type
            header(2, 3) + b"\x00" * 8,                           # count mismatch
            header(1, 1) + struct.pack("!IIIHH", 5, 1, 2, 0, 0),  # zero weight
        ]
        rnd = [os.urandom(n) for n in (3, 9, 40, 200, 1500, 9000)]
        for g in garbage + rnd * 5:
            sock.sendto(g, alloc)
        time.sleep(1.1)  # one whole per-second window for the rate gauges
        check(proc.poll() is None, "allocator exited after garbage")
        text = scrape(mport)
        harness.promtool_check(text)
        s = harness.metric_samples(text)
        check_eq(metric_value(s, "sluice_allocator_flows"), 1.0, "flows gauge")
        check_eq(metric_value(s, "sluice_allocator_hosts"), 3.0, "hosts gauge")
        check_eq(metric_value(s, "sluice_allocator_links"), 6.0, "links gauge")
        for reason in ("too_short", "bad_magic", "bad_version", "unknown_type",
                       "count_mismatch", "zero_weight"):
            check(metric_value(s, "sluice_allocator_malformed_total", reason=reason) >= 1,
                  f"malformed {reason} not counted")
        malformed = sum(v for _, v in s["sluice_allocator_malformed_total"])
        check(malformed >= len(garbage) + 5 * len(rnd) - 6,  # random bytes may start "FT"
              f"malformed total {malformed}")
        check_eq(metric_value(s, "sluice_allocator_flowlet_entries_total", type="flowlet_start",
                       outcome="duplicate"), 1.0, "duplicate FLOWLET_START")
        check_eq(metric_value(s, "sluice_allocator_flowlet_entries_total", type="flowlet_end",
                       outcome="unknown"), 1.0, "unknown FLOWLET_END")
        check(metric_value(s, "sluice_allocator_iterations_total") > 100, "iterations")
        check(metric_value(s, "sluice_allocator_lease_resends_total") >= 2, "lease re-sends")
        check(metric_value(s, "sluice_allocator_updates_sent_total") > 0, "updates sent")
        check(metric_value(s, "sluice_allocator_iteration_seconds_count") > 0,
              "iteration histogram")
        frac = metric_value(s, "sluice_allocator_update_capacity_fraction")
        check(0 < frac < 0.01, f"update capacity fraction {frac}")

        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=10)
        check_eq(proc.returncode, 0, f"exit status after SIGTERM\n{err}")
        check("sluice-allocator summary" in out, f"no summary line:\n{out}")
        late = re.search(r"iteration late p99 (\d+) ns max (\d+) ns", out)
        check(late is not None, f"no iteration lateness in the summary:\n{out}")
        check(metric_value(s, "sluice_allocator_iteration_lateness_seconds_count") > 0,
              "lateness histogram")
        print(f"lease re-send after {lease_gap * 1000:.0f} ms; {out.strip().splitlines()[-1]}")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


if __name__ == "__main__":
    harness.main(test)
