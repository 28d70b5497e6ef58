#!/usr/bin/python3
"""tools/bench permutation: the occupancy figures on made-up samples (empty
samples counted, nearest-rank p99, tiers named from both simulators' link
names), the fat-tree's links and max-min fair shares on small cases worked
by hand, and one short run of the k = 4 fat-tree against build/switch/sluice
on one and two worker lcores with the queues sampled: the runs agree byte
for byte (the tool fails otherwise) and every tier of switch queues has its
figures, and the tool's ECMP paths are the ports that sent (the tool fails
otherwise). htsim is not run here (it is built outside the repository)."""

import os
import tempfile
import unittest

import common
from sluicepy import fattree_paths
from sluicepy.bench import permutation

SLUICE = os.environ.get("SLUICE_BINARY", os.path.join(common.ROOT, "build", "switch", "sluice"))


class Occupancy(unittest.TestCase):
    def test_figures(self):
        # Two links sampled 100 times: 200 link-samples, of which 4 not empty.
        occ = permutation.occupancy({"ToR to agg": [1000, 3000, 1500, 1500]},
                                    {"ToR to agg": 2, "agg to core": 2}, 100)
        mean, busy, p99, top = occ["ToR to agg"]
        self.assertAlmostEqual(mean, 7000 / 200)
        self.assertAlmostEqual(busy, 0.02)
        # Rank 198 of 200 (196 empty, then 1000, 1500, 1500, 3000): 1500.
        self.assertEqual(p99, 1500)
        self.assertEqual(top, 3000)
        self.assertEqual(occ["agg to core"], (0.0, 0.0, 0, 0))

    def test_tier_names(self):
        self.assertEqual(permutation.sluice_tier("edge1-0", "h3"), "ToR to host")
        self.assertEqual(permutation.sluice_tier("edge1-0", "u0"), "ToR to agg")
        self.assertEqual(permutation.sluice_tier("agg3-1", "u1"), "agg to core")
        self.assertEqual(permutation.sluice_tier("agg3-1", "d0"), "agg to ToR")
        self.assertEqual(permutation.sluice_tier("core12", "d7"), "core to agg")
        self.assertEqual(permutation.htsim_tier("tor4->host18"), "ToR to host")
        self.assertEqual(permutation.htsim_tier("core3->agg1"), "core to agg")
        self.assertIsNone(permutation.htsim_tier("host1->tor0"))


class Paths(unittest.TestCase):
    def test_max_min_shares(self):
        # B carries three flows: a third each; A's other flow takes the two
        # thirds f2 leaves it.
        share = fattree_paths.max_min_shares({"f1": ["A"], "f2": ["A", "B"], "f3": ["B"],
                                              "f4": ["B"]})
        self.assertAlmostEqual(share["f1"], 2 / 3)
        for f in ("f2", "f3", "f4"):
            self.assertAlmostEqual(share[f], 1 / 3)

    def test_links(self):
        # k = 4: two hosts a ToR, four a pod. Host 0 to host 1: one ToR.
        self.assertEqual(fattree_paths.links(4, 0, 1, -1, -1), [("to host", 1)])
        # Host 0 to host 3: ToR 0 up by agg 1, down from agg 1 to ToR 1.
        self.assertEqual(fattree_paths.links(4, 0, 3, 1, -1),
                         [("edge up", 0, 1), ("agg down", 0, 1, 1), ("to host", 3)])
        # Host 5 (pod 1, ToR 2) to host 14 (pod 3, ToR 7) by agg 1, its up
        # port 0: core 2, which reaches agg 1 of pod 3.
        self.assertEqual(fattree_paths.links(4, 5, 14, 1, 0),
                         [("edge up", 2, 1), ("agg up", 1, 1, 0), ("core down", 2, 3),
                          ("agg down", 3, 1, 7), ("to host", 14)])

    def test_uplink_choices(self):
        self.assertEqual(fattree_paths.uplink_choices(
            [("edge0-0", "u1"), ("agg0-1", "u0"), ("core2", "d3"), ("agg3-1", "d1"),
             ("edge3-1", "h14")]), (1, 0))
        self.assertEqual(fattree_paths.uplink_choices([("edge0-0", "h1")]), (-1, -1))

    def test_fairness(self):
        # Hosts 0 and 2 (k = 4, two ToRs of pod 0) send to hosts 4 and 5 (one
        # ToR of pod 1) by agg 0 and its up port 0: they share the agg's link
        # up, the core's link down and the far agg's link down, a half each.
        pairs, choices = [(0, 4), (2, 5)], [(0, 0), (0, 0)]
        shared, most, lo, mid, xlow, jain = permutation.fairness(4, pairs, choices, [10, 30])
        self.assertEqual((shared, most), (3, 2))
        self.assertEqual((lo, mid), (0.5, 0.5))
        # x = 20 and 60: the lower over the median (40); Jain 80^2 / (2 x 4000).
        self.assertAlmostEqual(xlow, 0.5)
        self.assertAlmostEqual(jain, 0.8)
        # Nothing delivered: no ratio and no index, rather than a division by 0.
        self.assertEqual(permutation.fairness(4, pairs, choices, [0, 0])[4:], (None, None))


class ShortRun(unittest.TestCase):
    def test_k4(self):
        self.assertTrue(os.access(SLUICE, os.X_OK), f"{SLUICE} not built")
        with tempfile.TemporaryDirectory() as out:
            text = common.run_tool_serialised("bench", "permutation", "--k", "4", "--ms", "1",
                                              "--workers", "1,2", "--queues", "10", "--out", out,
                                              "--sluice", SLUICE)
            self.assertIn("sluice's runs on 1, 2 workers: identical captures, completions and "
                          "summary", text)
            self.assertIn("Switch queues every 10 us (100 samples)", text)
            # The tool checked its ECMP paths against the ports that sent.
            fair = [line for line in text.splitlines() if line.startswith("| sluice, 1 worker |")]
            self.assertEqual(len(fair), 2)
            self.assertRegex(fair[1], r"^\| sluice, 1 worker \| \d+ \| \d \| 0\.\d+ / "
                                      r"0\.\d+ \| [01]\.\d\d \| 0\.\d+ \|$")
            rows = [line for line in text.splitlines() if line.startswith("| ") and " to " in line]
            self.assertEqual([r.split(" | ")[0][2:] for r in rows],
                             ["ToR to host", "ToR to agg", "agg to core", "core to agg",
                              "agg to ToR"])
            # 16 long flows cross the core in 1 ms: the uplinks' queues are not always empty.
            up = [r for r in rows if r.startswith("| ToR to agg")][0]
            self.assertNotIn(" 0 % ", up)


if __name__ == "__main__":
    unittest.main()
