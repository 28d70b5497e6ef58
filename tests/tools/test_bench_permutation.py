#!/usr/bin/python3
"""tools/bench permutation: the occupancy figures on made-up samples (empty
samples counted, nearest-rank p99, tiers named from both simulators' link
names), and one short run of the k = 4 fat-tree against build/switch/sluice
on one and two worker lcores with the queues sampled: the runs agree byte
for byte (the tool fails otherwise) and every tier of switch queues has its
figures. htsim is not run here (it is built outside the repository)."""

import os
import tempfile
import unittest

import common
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
            rows = [line for line in text.splitlines() if line.startswith("| ") and " to " in line]
            self.assertEqual([r.split(" | ")[0][2:] for r in rows],
                             ["ToR to host", "ToR to agg", "agg to core", "core to agg",
                              "agg to ToR"])
            # 16 long flows cross the core in 1 ms: the uplinks' queues are not always empty.
            up = [r for r in rows if r.startswith("| ToR to agg")][0]
            self.assertNotIn(" 0 % ", up)


if __name__ == "__main__":
    unittest.main()
