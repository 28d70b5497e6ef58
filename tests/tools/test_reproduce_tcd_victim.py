#!/usr/bin/python3
"""tools/reproduce tcd-victim's DCQCN + TCD burst flows reach their fair share
(the TCD paper's section 5.2.4), one seed against build/switch/sluice."""

import json
import os
import tempfile
import unittest

import common

SLUICE = os.environ.get("SLUICE_BINARY", os.path.join(common.ROOT, "build", "switch", "sluice"))


class TcdVictimRates(unittest.TestCase):
    """tools/reproduce tcd-victim with DCQCN hosts, one seed (two runs of
    about 0.11 s of fabric time): the TCD paper's section 5.2.4 says that
    with TCD, DCQCN's congested flows reach their fair-share rate. The eight
    burst flows into r1 (10 Gb/s, the only bottleneck) must, under DCQCN +
    TCD, all be within 10 % of r1's payload capacity / 8 for a whole
    100 us window, and Jain's index stay at or above 0.99 from some instant
    on. By the path: no victim 8 KB flow finishes sooner than its segments
    at 10 Gb/s, three store-and-forward hops and 4 us of propagation for it
    and its ACK (11.36 us); every flow finishes, nothing is dropped."""

    def test_dcqcn_tcd_congested_flows_reach_fair_share(self):
        self.assertTrue(os.access(SLUICE, os.X_OK), f"{SLUICE} not built")
        with tempfile.TemporaryDirectory() as out:
            common.run_tool_serialised("reproduce", "tcd-victim", "--seeds", "1",
                                       "--transports", "dcqcn", "--out", out,
                                       "--sluice", SLUICE)
            with open(os.path.join(out, "results.json")) as f:
                res = json.load(f)
            rows = {r["label"]: r for r in res["rows"]}
            self.assertEqual(set(rows), {"dcqcn", "dcqcn+tcd"})
            for r in rows.values():
                self.assertEqual(r["unfinished"], 0, r)
                self.assertEqual(r["drops"], 0, r)
                self.assertGreaterEqual(r["small_min_us"], 11.36 - 0.001, r)
                q = r["rates"]
                self.assertAlmostEqual(q["capacity_gbps"], 10 * 1000 / 1094, places=6)
                self.assertGreater(q["judged"], 100, q)
            q = rows["dcqcn+tcd"]["rates"]
            self.assertIsNotNone(q["reach_us"], q)
            self.assertIsNotNone(q["jain099_us"], q)
            self.assertTrue(os.path.exists(os.path.join(out, "tcd_rates.png")))



if __name__ == "__main__":
    unittest.main()
