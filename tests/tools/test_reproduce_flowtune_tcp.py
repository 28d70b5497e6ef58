#!/usr/bin/python3
"""tools/reproduce flowtune-tcp's parts that need no namespaces, its module
imported: the flows' schedules, the per-step measures (convergence to the
fair share and Jain's index) and the failure run's before/after means on
made-up receiver bins, and the edge configuration it writes (accepted by
sluice --check). The real run is the system test flowtune_tcp."""

import os
import subprocess
import tempfile
import types
import unittest

import yaml

import common
from sluicepy.reproduce import flowtune_tcp

SLUICE = os.environ.get("SLUICE_BINARY", os.path.join(common.ROOT, "build", "switch", "sluice"))


class Measures(unittest.TestCase):
    def setUp(self):
        self.t = flowtune_tcp
        self.a = types.SimpleNamespace(rate_bps=200e6, bin_s=0.01, tolerance=0.2, step=0.5,
                                       lease="10ms")
        self.share = 200 * self.t.GOODPUT * (1 - self.t.HEADROOM)  # Mb/s for one flow

    def bins_at(self, run, late=None):
        """Receiver bins (bytes) at the fair share; late = (flow, first
        bin, bins) at zero."""
        sched = self.t.schedule(run, self.a.step)
        n = int(max(e for _, e in sched) / self.a.bin_s)
        bins = [[0] * n for _ in range(self.t.SENDERS)]
        for b in range(n):
            act = self.t.active_at(sched, b * self.a.bin_s)
            for i in act:
                bins[i][b] = self.share / len(act) * 1e6 * self.a.bin_s / 8
        if late:
            flow, first, count = late
            for b in range(first, first + count):
                bins[flow][b] = 0
        return bins

    def test_schedules(self):
        self.assertEqual(self.t.schedule("flowtune", 1.0),
                         [(0, 9), (1, 8), (2, 7), (3, 6), (4, 5)])
        self.assertEqual(self.t.schedule("failure", 1.0), [(0.0, 4.0)] * 5)

    def test_fair_bins_converge_at_once_with_a_jain_index_of_1(self):
        steps = self.t.analyse_steps(self.bins_at("flowtune"),
                                     self.t.schedule("flowtune", 0.5), self.a)
        self.assertEqual([s["flows"] for s in steps], [1, 2, 3, 4, 5, 4, 3, 2, 1])
        self.assertEqual([s["converged_ms"] for s in steps], [0] * 9)
        self.assertEqual([s["jain_second_half"] for s in steps], [1.0] * 9)

    def test_a_starved_flow_delays_convergence_and_lowers_jain(self):
        # Flow 2 starts at 1.0 s (bin 100) and gets nothing for 7 bins.
        steps = self.t.analyse_steps(self.bins_at("flowtune", late=(2, 100, 7)),
                                     self.t.schedule("flowtune", 0.5), self.a)
        self.assertEqual(steps[2]["converged_ms"], 70)
        # Starved for the whole step: never, and the others' shares are
        # only 1/3 of the link each, so Jain's index is 2/3.
        steps = self.t.analyse_steps(self.bins_at("flowtune", late=(2, 100, 50)),
                                     self.t.schedule("flowtune", 0.5), self.a)
        self.assertIsNone(steps[2]["converged_ms"])
        self.assertAlmostEqual(steps[2]["jain_second_half"], 2 / 3, places=3)

    def test_failure_means(self):
        f = self.t.analyse_failure(self.bins_at("failure"), self.a)
        self.assertEqual(f["paced_mbps"], [round(self.share / 5, 1)] * 5)
        self.assertEqual(f["after_lease_mbps"], [round(self.share / 5, 1)] * 5)


class Updates(unittest.TestCase):
    def setUp(self):
        self.t = flowtune_tcp

    def test_flow_schedule_offers_the_load(self):
        a = types.SimpleNamespace(cdf=os.path.join(common.ROOT, "conf", "workloads",
                                                   "fb_hadoop.cdf"),
                                  seed=1, host=2, hosts=6, load=0.8, rate_bps=200e6, seconds=60.0)
        flows = self.t.flow_schedule(a)
        self.assertEqual(flows, self.t.flow_schedule(a))  # seeded
        self.assertTrue(all(0 <= t < 60 and dst != 2 and 0 <= dst < 6 and size >= 1
                            for t, dst, size in flows))
        self.assertEqual(sorted(flows), flows)
        offered = sum(size for _, _, size in flows) * 8 / 60 / 200e6
        self.assertAlmostEqual(offered, 0.8, delta=0.15)

    def test_update_figures_count_the_wire(self):
        a = types.SimpleNamespace(load=0.8, update_seconds=2.0, rate_bps=200e6)
        summary = {"switches": [{"ports": [], "flowtune": {
            "datagrams_sent": 10, "starts_sent": 30, "ends_sent": 20, "flowlets_started": 30}}]}
        out = ("sluice-allocator summary: 2.0 s, flows 0, hosts 6, iterations 9, updates sent "
               "40 (4 lease re-sends, 1000 bytes in 8 datagrams), datagrams 10, malformed 0, "
               "iteration late p99 0 ns max 0 ns\n")
        f = self.t.update_figures("fb_hadoop", a, summary, out,
                                  [{"started": 3, "done": 2}, {"started": 4, "done": 4}])
        capacity = 6 * 200e6 * 2.0
        # Edge: 8 B per datagram + 16 per start + 4 per end + 66 B of headers per datagram.
        edge = 8 * 10 + 16 * 30 + 4 * 20 + 66 * 10
        self.assertAlmostEqual(f["edge_to_allocator_pct"], 100 * edge * 8 / capacity)
        self.assertAlmostEqual(f["allocator_to_edge_pct"], 100 * (1000 + 38 * 8) * 8 / capacity)
        self.assertEqual((f["tcp_flows"], f["tcp_flows_done"], f["paper_pct"]), (7, 6, 0.17))
        with self.assertRaises(self.t.ToolError):
            self.t.update_figures("fb_hadoop", a, summary, "no summary", [])


class Configuration(unittest.TestCase):
    def test_the_edge_configuration_passes_check(self):
        t = flowtune_tcp
        a = types.SimpleNamespace(rate="200Mbps", subnet_base="10.0", prefix="ftt", framecnt=1024,
                                  queue_packets=100, idle_gap="100us", lease="10ms")
        tb = types.SimpleNamespace(nm=types.SimpleNamespace(
            AF_PACKET_ARGS="qpairs=1,blocksz=4096,framesz=2048,framecnt={framecnt}"))
        for port in (None, 9750):
            conf = t.config(a, tb, "flowtune", port)
            sw = conf["switches"][0]
            self.assertEqual([p["name"] for p in sw["ports"]], [f"h{i}" for i in range(6)])
            self.assertEqual("flowtune" in sw, port is not None)
            if port:
                self.assertEqual(sw["flowtune"]["allocator"], "127.0.0.1:9750")
            with tempfile.NamedTemporaryFile("w", suffix=".yaml") as f:
                yaml.safe_dump(conf, f)
                f.flush()
                r = subprocess.run([SLUICE, "--no-huge", "-m", "512", "--no-pci", "-l", "0",
                                    "--file-prefix", f"tools-ft-tcp-{os.getpid()}", "--",
                                    "--config", f.name, "--check"],
                                   capture_output=True, text=True, timeout=60)
                self.assertEqual(r.returncode, 0, r.stdout + r.stderr)


if __name__ == "__main__":
    unittest.main()
