#!/usr/bin/python3
"""Tests of tools/workload --matrix: long flows at their start instant,
round robin between a host's streams with exact line-rate stamps, FIFO within
a stream, offered load of a CDF stream, destination lists, flows.csv as
tools/fct reads it, and the errors."""

import csv
import math
import os
import struct
import tempfile
import unittest

import common

RATE = 10**8                      # 100 Mb/s: small files, same arithmetic
APP = 1448
FULL_WIRE = 1500 + 14 + 24        # a full packet on the wire


def wire(app):
    return max(60, 66 + app) + 24


def flows_of(out):
    with open(os.path.join(out, "flows.csv"), newline="") as f:
        return list(csv.DictReader(f))


def ns(text):
    whole, frac = text.split(".")
    return int(whole) * 10**9 + int(frac)


def flow_and_seq(frame):
    """Flow id and sequence from the SLW1 header (offset 42)."""
    magic, flow, seq = struct.unpack_from("!4sII", frame, 42)
    assert magic == b"SLW1"
    return flow, seq


class Matrix(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.hosts = common.write_hosts_text(os.path.join(self.tmp.name, "hosts.txt"))

    def tearDown(self):
        self.tmp.cleanup()

    def generate(self, matrix, duration="20ms", seed=1, name="out"):
        path = os.path.join(self.tmp.name, name + ".yaml")
        with open(path, "w") as f:
            f.write(matrix)
        out = os.path.join(self.tmp.name, name)
        common.run_tool("workload", "--matrix", path, "--link-rate", "100Mbps", "--hosts",
                        self.hosts, "--duration", duration, "--seed", seed, "--out", out)
        return out

    def test_two_long_flows_share_the_link_packet_by_packet(self):
        out = self.generate("streams:\n  - {src: h0, dst: h1, size: 14480, count: 2}\n")
        flows = flows_of(out)
        self.assertEqual([(f["src"], f["dst"], f["size"], f["packets"]) for f in flows],
                         [("h0", "h1", "14480", "10")] * 2)
        self.assertEqual([f["arrival_time"] for f in flows], ["0.000001000"] * 2)
        pkts = common.read_pcap_ns(os.path.join(out, "h0.pcap"))
        self.assertEqual(len(pkts), 20)
        ids = [flow_and_seq(fr) for _, fr in pkts]
        # Alternating flows 1, 2, 1, 2, ... each in sequence order.
        self.assertEqual(ids, [(1 + k % 2, k // 2) for k in range(20)])
        # Back to back at line rate from 1 us: packet k at 1000 + ceil(k x 1538 x 8 / rate) ns.
        for k, (ts, _) in enumerate(pkts):
            self.assertEqual(ts, 1000 + -(-k * FULL_WIRE * 8 * 10**9 // RATE))
        # Flow 1 ends after its last packet (the 19th on the wire), flow 2 after the 20th.
        self.assertEqual(ns(flows[0]["start_time"]), 1000)
        self.assertEqual(ns(flows[1]["start_time"]), 1000 + FULL_WIRE * 8 * 10**9 // RATE)
        self.assertEqual(ns(flows[0]["end_time"]), 1000 + -(-19 * FULL_WIRE * 80))
        self.assertEqual(ns(flows[1]["end_time"]), 1000 + -(-20 * FULL_WIRE * 80))
        # Hosts that send nothing still get a capture (header only).
        self.assertEqual(common.read_pcap_ns(os.path.join(out, "h1.pcap")), [])

    def test_streams_of_different_hosts_and_start_times(self):
        out = self.generate("streams:\n"
                            "  - {src: h0, dst: h1, size: 100}\n"
                            "  - {src: h2, dst: h3, size: 3000, start: 2ms}\n")
        flows = {f["src"]: f for f in flows_of(out)}
        self.assertEqual(ns(flows["h0"]["start_time"]), 1000)
        self.assertEqual(ns(flows["h0"]["end_time"]), 1000 + wire(100) * 80)
        self.assertEqual(ns(flows["h2"]["start_time"]), 2_001_000)
        self.assertEqual(flows["h2"]["packets"], "3")
        self.assertEqual(ns(flows["h2"]["end_time"]),
                         2_001_000 + -(-(2 * FULL_WIRE + wire(3000 - 2 * APP)) * 80))

    def test_cdf_stream_is_fifo_and_offers_its_load(self):
        cdf = os.path.join(common.CONF, "fb_hadoop.cdf")
        out = self.generate("streams:\n  - {src: h0, dst: [h1, h2, h3], cdf: %s, load: 0.4,"
                            " max_flow_size: 10KB}\n" % cdf, duration="2s", seed=3)
        flows = flows_of(out)
        self.assertGreater(len(flows), 2000)
        self.assertEqual({f["dst"] for f in flows}, {"h1", "h2", "h3"})
        offered = 0
        free = 0
        for f in flows:  # FIFO: each starts when it arrived and the previous one left
            size, n = int(f["size"]), int(f["packets"])
            self.assertLessEqual(int(f["size"]), 10_000)
            self.assertEqual(n, max(1, math.ceil(size / APP)))
            self.assertEqual(ns(f["start_time"]), max(ns(f["arrival_time"]), free))
            w = size + n * 90
            self.assertEqual(ns(f["end_time"]), ns(f["start_time"]) + -(-w * 80))
            free = ns(f["end_time"])
            offered += w * 8
        self.assertAlmostEqual(offered / (2.0 * RATE), 0.4, delta=0.4 * 0.05)
        # Packets of one FIFO stream never overlap and follow the flows in order.
        pkts = common.read_pcap_ns(os.path.join(out, "h0.pcap"))
        self.assertEqual(len(pkts), sum(int(f["packets"]) for f in flows))
        for (t0, f0), (t1, _) in zip(pkts, pkts[1:]):
            self.assertGreaterEqual(t1 - t0, (len(f0) + 24) * 80 - 1)

    def test_fct_reads_the_flow_list(self):
        out = self.generate("streams:\n  - {src: h0, dst: h1, size: 5000}\n")
        fct_out = os.path.join(self.tmp.name, "fct")
        # The sender's own capture as the receiver's: FCT = line-rate time.
        common.run_tool("fct", "--flows", os.path.join(out, "flows.csv"), "--rx",
                        os.path.join(out, "h0.pcap"), "--link-rate", "100Mbps",
                        "--out", fct_out)
        with open(os.path.join(fct_out, "fct.csv"), newline="") as f:
            row = next(csv.DictReader(f))
        self.assertEqual(row["finished"], "1")
        self.assertAlmostEqual(float(row["slowdown"]), 1.0, places=6)

    def test_errors(self):
        bad = {
            "streams:\n  - {src: nope, dst: h1, size: 10}\n": "unknown src",
            "streams:\n  - {src: h0, dst: h0, size: 10}\n": "itself",
            "streams:\n  - {src: h0, dst: h1, size: 10, load: 0.2}\n": "unknown key",
            "streams:\n  - {src: h0, dst: h1}\n": "needs either size",
            "streams: []\n": "non-empty",
        }
        for i, (text, msg) in enumerate(bad.items()):
            with self.assertRaises(AssertionError) as e:
                self.generate(text, name="bad%d" % i)
            self.assertIn(msg, str(e.exception))
        with self.assertRaises(AssertionError) as e:
            common.run_tool("workload", "--matrix", "x.yaml", "--cdf", "y", "--load", "0.1",
                            "--link-rate", "1Gbps", "--hosts", self.hosts, "--duration", "1ms",
                            "--out", os.path.join(self.tmp.name, "z"))
        self.assertIn("--matrix replaces", str(e.exception))


if __name__ == "__main__":
    unittest.main()
