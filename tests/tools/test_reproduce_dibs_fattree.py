#!/usr/bin/python3
"""tools/reproduce dibs-fattree, a short run (40 ms of arrivals, one seed)
against build/switch/sluice: the DIBS paper's k = 8 fat-tree claims that
hold whatever the run's length (sections 5.3-5.4), with bounds from the
paper and from the scenario's arithmetic:

- every query and every background flow is counted, the same ones under
  both schemes;
- no query completes faster than its 40 responses take on the target's
  1 Gb/s link: 40 x (20,000 B + 14 frames x 94 B of headers, preamble and
  gap) = 852,640 B, 6.82 ms;
- DCTCP alone drops (40 initial windows of 10 frames, 400 frames, reach the
  target's 100-frame port over at least two 1 Gb/s links while it drains at
  one) and its queries wait out retransmission timeouts ("routinely suffer
  from timeouts", 5.4.3): some query waits at least the 10 ms minimum RTO
  and the median query does too;
- DIBS detours instead of dropping (the paper: no drops at all; sluice's
  shared buffer and TTL 64 may leave a few, at most 1 % of DCTCP's), and
  its median query completes without an RTO (under 10 ms)."""

import json
import math
import os
import tempfile
import unittest

import common

SLUICE = os.environ.get("SLUICE_BINARY", os.path.join(common.ROOT, "build", "switch", "sluice"))
MIN_RTO_MS = 10.0
WIRE_MS = 40 * (20_000 + 14 * 94) * 8 / 1e9 * 1e3  # 6.82 ms


class DibsFatTree(unittest.TestCase):
    def test_the_papers_claims_hold(self):
        self.assertTrue(os.access(SLUICE, os.X_OK), f"{SLUICE} not built")
        with tempfile.TemporaryDirectory() as out:
            common.run_tool_serialised("reproduce", "dibs-fattree", "--fabric-ms", "40",
                                       "--drain-ms", "20", "--seeds", "1", "--out", out,
                                       "--sluice", SLUICE)
            with open(os.path.join(out, "results.json")) as f:
                res = json.load(f)
            rows = {r["scheme"]: r for r in res["rows"]}
            self.assertEqual(set(rows), {"dctcp", "dibs"})
            c, b = rows["dctcp"], rows["dibs"]
            self.assertGreater(c["queries"], 0)
            self.assertEqual(c["queries"], b["queries"])
            self.assertEqual(c["bg_flows"], b["bg_flows"])
            for r in (c, b):
                self.assertEqual(len(r["qct_ms"]), r["queries"])
                for q in r["qct_ms"]:
                    self.assertGreaterEqual(q, WIRE_MS, r["scheme"])
            self.assertGreater(c["drops"], 0, c)
            self.assertGreater(c["timeouts"], 0, c)
            self.assertGreaterEqual(c["qct_max"], MIN_RTO_MS, c)
            self.assertGreaterEqual(c["qct_p50"], MIN_RTO_MS, c)
            self.assertGreater(b["detours"], 0, b)
            self.assertLessEqual(b["drops"], c["drops"] / 100, (b["drops"], c["drops"]))
            self.assertTrue(math.isfinite(b["qct_p50"]))
            self.assertLess(b["qct_p50"], MIN_RTO_MS, b)
            self.assertTrue(os.path.exists(os.path.join(out, "qct_cdf.png")))


if __name__ == "__main__":
    unittest.main()
