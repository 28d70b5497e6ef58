#!/usr/bin/python3
"""Tests of tools/workload: determinism, offered load, size distribution,
incast pattern, frame contents and checksums, per-host serialisation."""

import bisect
import csv
import hashlib
import math
import os
import struct
import tempfile
import unittest

import common
from sluicepy import pcapio, workload_gen as wg
from sluicepy.cdf import FlowSizeCdf
from sluicepy.hosts import Host, hosts_from_config, load_hosts

RATE = 10**10
APP = 1500 - 20 - 8 - 24          # application bytes in a full packet
PER_PACKET = 14 + 20 + 8 + 24 + 4 + 8 + 12  # headers + FCS + preamble + IFG


def wire_bytes(size):
    return size + math.ceil(size / APP) * PER_PACKET


def read_file_cdf(path):
    pts = []
    with open(path) as f:
        for line in f:
            line = line.split("#")[0].split()
            if line:
                pts.append((float(line[0]), float(line[1]) / 100))
    return pts


def file_cdf_at(pts, x):
    """Linear interpolation of the file's points (independent of sluicepy)."""
    if x <= pts[0][0]:
        return 0.0
    for (s0, p0), (s1, p1) in zip(pts, pts[1:]):
        if s0 < x <= s1:
            return p0 + (p1 - p0) * (x - s0) / (s1 - s0)
    return 1.0


def host_objects():
    return [Host(n, ip, m, g, i) for i, (n, ip, m, g) in enumerate(common.HOSTS)]


def read_flows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def ns(text):
    whole, frac = text.split(".")
    return int(whole) * 10**9 + int(frac)


class GeneratorCli(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.hosts = common.write_hosts_text(os.path.join(cls.tmp.name, "hosts.txt"))
        cls.out = os.path.join(cls.tmp.name, "a")
        cls.args = ["--cdf", os.path.join(common.CONF, "websearch.cdf"), "--load", "0.4",
                    "--link-rate", "10Gbps", "--hosts", cls.hosts, "--duration", "5ms",
                    "--seed", "7", "--incast-degree", "3", "--incast-size", "300KB",
                    "--incast-period", "2ms", "--incast-receiver", "h0"]
        common.run_tool("workload", *cls.args, "--out", cls.out)
        cls.flows = read_flows(os.path.join(cls.out, "flows.csv"))
        cls.pcaps = {h[0]: common.read_pcap_ns(os.path.join(cls.out, h[0] + ".pcap"))
                     for h in common.HOSTS}

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def digest(self, out):
        h = hashlib.sha256()
        for name in sorted(os.listdir(out)):
            h.update(name.encode())
            with open(os.path.join(out, name), "rb") as f:
                h.update(f.read())
        return h.hexdigest()

    def test_same_seed_same_bytes(self):
        again = os.path.join(self.tmp.name, "b")
        common.run_tool("workload", *self.args, "--out", again)
        self.assertEqual(self.digest(self.out), self.digest(again))

    def test_other_seed_other_flows(self):
        other = os.path.join(self.tmp.name, "c")
        args = list(self.args)
        args[args.index("--seed") + 1] = "8"
        common.run_tool("workload", *args, "--out", other)
        with open(os.path.join(other, "flows.csv")) as a, \
                open(os.path.join(self.out, "flows.csv")) as b:
            self.assertNotEqual(a.read(), b.read())

    def test_snaplen_keeps_the_heads_and_the_wire_lengths(self):
        """--snaplen 128: the same records, each cut to its first 128 bytes,
        with the length the whole frame has."""
        cut = os.path.join(self.tmp.name, "s")
        common.run_tool("workload", *self.args, "--snaplen", "128", "--out", cut)
        for h in common.HOSTS:
            whole = list(pcapio.read_pcap(os.path.join(self.out, h[0] + ".pcap")))
            heads = list(pcapio.read_pcap(os.path.join(cut, h[0] + ".pcap")))
            self.assertEqual(len(heads), len(whole), h[0])
            for (ts, frame, orig), (ts2, head, orig2) in zip(whole, heads):
                self.assertEqual((ts2, orig2), (ts, len(frame)))
                self.assertEqual(head, frame[:128])
        with open(os.path.join(cut, "flows.csv")) as a, \
                open(os.path.join(self.out, "flows.csv")) as b:
            self.assertEqual(a.read(), b.read())

    def test_yaml_hosts_same_output(self):
        yaml_hosts = common.write_hosts_yaml(os.path.join(self.tmp.name, "hosts.yaml"))
        out = os.path.join(self.tmp.name, "y")
        args = list(self.args)
        args[args.index("--hosts") + 1] = yaml_hosts
        common.run_tool("workload", *args, "--out", out)
        self.assertEqual(self.digest(self.out).encode(), self.digest(out).encode())

    def test_frames_parse_back_with_valid_checksums(self):
        by_id = {int(f["flow_id"]): f for f in self.flows}
        host_of = {h[0]: h for h in common.HOSTS}
        seen = {}
        for name, records in self.pcaps.items():
            _, ip, mac, gw = host_of[name]
            for ts, frame in records:
                self.assertGreaterEqual(len(frame), 60)
                dst_mac, src_mac, etype = struct.unpack_from("!6s6sH", frame)
                self.assertEqual(etype, 0x0800)
                self.assertEqual(src_mac, bytes.fromhex(mac.replace(":", "")))
                self.assertEqual(dst_mac, bytes.fromhex(gw.replace(":", "")))
                iph = frame[14:34]
                self.assertEqual(common.checksum16(iph), 0xFFFF)
                ver, tos, total, _, _, ttl, proto = struct.unpack_from("!BBHHHBB", iph)
                self.assertEqual((ver, proto), (0x45, 17))
                self.assertEqual(tos & 3, 2)  # ECT(0)
                sport, dport, ulen, ucsum = struct.unpack_from("!HHHH", frame, 34)
                self.assertEqual((dport, ulen, ucsum), (9000, total - 20, 0))
                magic, fid, seq, size, offset, sender = struct.unpack_from("!4sIIIII", frame, 42)
                self.assertEqual(magic, b"SLW1")
                app = total - 20 - 8 - 24
                flow = by_id[fid]
                self.assertEqual(flow["src"], name)
                self.assertEqual(sender, common.HOSTS.index(host_of[name]))
                self.assertEqual(".".join(str(b) for b in iph[16:20]), flow["dst_ip"])
                self.assertEqual(size, int(flow["size"]))
                self.assertEqual(offset, seq * APP)
                if seq + 1 < int(flow["packets"]):
                    self.assertEqual(total, 1500)
                else:
                    self.assertEqual(offset + app, size)
                if seq == 0:
                    self.assertEqual(ts, ns(flow["start_time"]))
                seen.setdefault(fid, []).append((seq, sport))
        self.assertEqual(set(seen), set(by_id))
        for fid, pkts in seen.items():
            self.assertEqual([s for s, _ in pkts], list(range(int(by_id[fid]["packets"]))))
            self.assertEqual(len({p for _, p in pkts}), 1)  # one source port per flow

    def test_host_packets_never_overlap(self):
        for name, records in self.pcaps.items():
            for (t0, f0), (t1, _) in zip(records, records[1:]):
                wire_ns = (len(f0) + 24) * 8 * 1e9 / RATE
                # Stamps are the exact schedule rounded up to whole ns.
                self.assertGreater(t1 - t0, wire_ns - 1, name)

    def test_flow_packets_back_to_back(self):
        for name, records in self.pcaps.items():
            first = {}
            for (t0, f0), (t1, f1) in zip(records, records[1:]):
                if f0[46:50] == f1[46:50]:  # same flow id
                    wire_ns = (len(f0) + 24) * 8 * 1e9 / RATE
                    self.assertLess(t1 - t0, wire_ns + 1, name)
            # and no drift: packet k of a flow leaves k full wire times after
            # the first (all but the last packet are full, 1538 B on the wire).
            for t, f in records:
                fid, seq = struct.unpack_from("!II", f, 46)
                first.setdefault(fid, t)
                self.assertEqual(t, first[fid] + math.ceil(seq * 1538 * 8 * 1e9 / RATE - 1e-6))

    def test_flow_starts_respect_arrivals_and_fifo(self):
        last_end = {}
        for f in self.flows:  # flows.csv is in arrival order
            start, arrival = ns(f["start_time"]), ns(f["arrival_time"])
            self.assertEqual(start, max(arrival, last_end.get(f["src"], 0)))
            last_end[f["src"]] = ns(f["end_time"])


class GeneratorModel(unittest.TestCase):
    """Flow-level properties on long windows (no pcaps written)."""

    def flows(self, cdf_name, arrivals, duration_s, load=0.5, **kw):
        cdf = FlowSizeCdf.from_file(os.path.join(common.CONF, cdf_name))
        p = wg.Params(cdf_path=cdf_name, load=load, link_rate_bps=RATE,
                      duration_ns=int(duration_s * 1e9), seed=1, arrivals=arrivals, **kw)
        return wg.make_flows(cdf, host_objects(), p)

    def offered_load(self, flows, duration_s):
        total = sum(wire_bytes(f.size) for f in flows if not f.is_incast)
        return total * 8 / (duration_s * RATE * len(common.HOSTS))

    def test_poisson_load_within_5_percent(self):
        flows = self.flows("websearch.cdf", "poisson", 20)
        self.assertGreater(len(flows), 40000)
        self.assertAlmostEqual(self.offered_load(flows, 20), 0.5, delta=0.025)

    def test_lognormal_load_within_5_percent(self):
        flows = self.flows("websearch.cdf", "lognormal", 20)
        self.assertAlmostEqual(self.offered_load(flows, 20), 0.5, delta=0.025)

    def test_lognormal_gaps_are_burstier_than_poisson(self):
        def gap_cv(flows):
            t = sorted(f.arrival_ns for f in flows if f.src == 0)
            g = [b - a for a, b in zip(t, t[1:])]
            m = sum(g) / len(g)
            return math.sqrt(sum((x - m) ** 2 for x in g) / len(g)) / m
        self.assertAlmostEqual(gap_cv(self.flows("fb_hadoop.cdf", "poisson", 2)), 1.0, delta=0.1)
        self.assertGreater(gap_cv(self.flows("fb_hadoop.cdf", "lognormal", 2)), 3.0)

    def test_mean_flow_size_matches_file(self):
        for name in ("websearch.cdf", "fb_hadoop.cdf", "google_rpc.cdf"):
            pts = read_file_cdf(os.path.join(common.CONF, name))
            # Uniform within each segment; ceil to whole bytes adds ~0.5.
            mean = sum((p1 - p0) * (s0 + s1) / 2 for (s0, p0), (s1, p1) in zip(pts, pts[1:]))
            cdf = FlowSizeCdf.from_file(os.path.join(common.CONF, name))
            got = cdf.expectation(lambda s: s)
            self.assertAlmostEqual(got, mean + 0.5, delta=mean * 1e-4 + 0.1, msg=name)

    def test_sizes_follow_the_cdf_file(self):
        for name, duration in (("websearch.cdf", 10), ("fb_hadoop.cdf", 1)):
            pts = read_file_cdf(os.path.join(common.CONF, name))
            sizes = sorted(f.size for f in self.flows(name, "poisson", duration))
            n = len(sizes)
            # KS statistic against the file's piecewise-linear CDF; sizes are
            # whole bytes (ceil), so P(S <= x) = F(x) and P(S < x) = F(x - 1).
            d = 0.0
            for x in sorted(set(sizes)):
                d = max(d, abs(bisect.bisect_right(sizes, x) / n - file_cdf_at(pts, x)),
                        abs(bisect.bisect_left(sizes, x) / n - file_cdf_at(pts, x - 1)))
            self.assertLess(d, 1.63 / math.sqrt(n), "%s: KS D=%.4f, n=%d" % (name, d, n))
            for s, p in pts[1:-1]:  # and each listed percentile directly
                self.assertAlmostEqual(bisect.bisect_right(sizes, s) / n, p, delta=0.02)

    def test_max_flow_size_caps_and_load_still_holds(self):
        flows = self.flows("websearch.cdf", "poisson", 5, max_flow_size=1_000_000)
        self.assertEqual(max(f.size for f in flows), 1_000_000)
        self.assertAlmostEqual(self.offered_load(flows, 5), 0.5, delta=0.025)

    def test_incast_instants_and_sizes_exact(self):
        flows = self.flows("websearch.cdf", "poisson", 0.05, load=0.3, incast_degree=4,
                           incast_size=1_000_003, incast_period_ns=10_000_000,
                           incast_receiver="h5", time_offset_ns=1000)
        inc = [f for f in flows if f.is_incast]
        events = {}
        for f in inc:
            events.setdefault(f.arrival_ns, []).append(f)
        self.assertEqual(sorted(events), [1000 + k * 10_000_000 for k in range(5)])
        for t, fs in events.items():
            self.assertEqual(len(fs), 4)
            self.assertEqual(sum(f.size for f in fs), 1_000_003)
            self.assertEqual(sorted(f.size for f in fs), [250_000, 250_001, 250_001, 250_001])
            self.assertTrue(all(f.dst == 5 and f.src != 5 for f in fs))
            self.assertEqual(len({f.src for f in fs}), 4)

    def test_incast_random_receiver_per_event(self):
        flows = self.flows("websearch.cdf", "poisson", 0.1, load=0, incast_degree=3,
                           incast_size=300_000, incast_period_ns=5_000_000,
                           incast_receiver="random", time_offset_ns=0)
        events = {}
        for f in flows:
            events.setdefault(f.arrival_ns, []).append(f)
        self.assertEqual(len(events), 20)
        receivers = set()
        for fs in events.values():
            dst = {f.dst for f in fs}
            self.assertEqual(len(dst), 1)  # one receiver per event
            self.assertEqual(len({f.src for f in fs}), 3)
            self.assertNotIn(fs[0].dst, {f.src for f in fs})
            self.assertEqual(sum(f.size for f in fs), 300_000)
            receivers |= dst
        self.assertGreater(len(receivers), 2)  # drawn, not fixed

    def test_incast_alone_starts_at_its_instants(self):
        flows = self.flows("websearch.cdf", "poisson", 0.02, load=0, incast_degree=7,
                           incast_size=700_000, incast_period_ns=5_000_000,
                           incast_receiver="h0", time_offset_ns=0)
        self.assertEqual(len(flows), 4 * 7)
        for f in flows:
            self.assertEqual(f.start_ns, f.arrival_ns)
            self.assertEqual(f.start_ns % 5_000_000, 0)
            self.assertEqual(f.size, 100_000)

    def test_hosts_from_sluice_config(self):
        conf = """
switches:
  - name: leaf1
    ports:
      - {name: p0, device: net_null0, role: host, rate: 10Gbps, mac: "02:00:00:00:01:00",
         peer_mac: "02:00:00:00:00:10", peer_ip: 10.0.0.2, ipv4: 10.0.0.1/24}
      - {name: up0, link: leaf2/up0, role: switch, rate: 10Gbps, mac: "02:00:00:00:01:09"}
  - name: leaf2
    ports:
      - {name: p0, device: net_null1, role: host, rate: 10Gbps, mac: "02:00:00:00:02:00",
         peer_mac: "02:00:00:00:00:20", peer_ip: 10.1.0.2, ipv4: 10.1.0.1/24}
      - {name: up0, link: leaf1/up0, role: switch, rate: 10Gbps, mac: "02:00:00:00:02:09"}
"""
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "fabric.yaml")
            with open(path, "w") as f:
                f.write(conf)
            hosts = hosts_from_config(path)
        self.assertEqual([(h.name, h.ip, h.mac, h.gateway_mac, h.index) for h in hosts],
                         [("leaf1-p0", "10.0.0.2", "02:00:00:00:00:10", "02:00:00:00:01:00", 0),
                          ("leaf2-p0", "10.1.0.2", "02:00:00:00:00:20", "02:00:00:00:02:00", 1)])

    def test_hosts_file_errors(self):
        with tempfile.TemporaryDirectory() as d:
            bad = os.path.join(d, "h.txt")
            with open(bad, "w") as f:
                f.write("h0 10.0.0.300 02:00:00:00:00:01 02:00:00:00:00:02\n"
                        "h1 10.0.0.3 02:00:00:00:00:03 02:00:00:00:00:02\n")
            with self.assertRaises(ValueError):
                load_hosts(bad)


if __name__ == "__main__":
    unittest.main()
