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
  shared buffer may leave a few, at most 1 % of DCTCP's), and
  its median query completes without an RTO (under 10 ms)."""

import argparse
import csv
import json
import math
import os
import tempfile
import unittest

import common
from sluicepy.reproduce import dibs_fattree

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


class SweepPoints(unittest.TestCase):
    """A response-size point changes the responses and nothing else, and a
    point's seeds are summarised together."""

    HOSTS = [("h%d" % i, "10.0.%d.2" % i) for i in range(8)]

    def flows(self, size):
        a = argparse.Namespace(cdf=os.path.join(common.CONF, "websearch.cdf"), fabric_ms=50.0,
                               degree=3)
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "flows.csv")
            queries, background = dibs_fattree.make_flows(path, self.HOSTS, a, 5_000_000, 2000.0,
                                                           7, size)
            with open(path, newline="") as f:
                return queries, background, list(csv.DictReader(f))

    def test_a_size_point_changes_only_the_responses(self):
        q20, bg20, rows20 = self.flows(20_000)
        q160, bg160, rows160 = self.flows(160_000)
        self.assertGreater(len(q20), 10)
        self.assertEqual(q20, q160)
        self.assertEqual(bg20, bg160)
        self.assertEqual(len(rows20), len(rows160))
        responses = {i for _, ids in q20.values() for i in ids}
        self.assertEqual(len(responses), 3 * len(q20))
        for r20, r160 in zip(rows20, rows160):
            fid = int(r20["flow_id"])
            want = (("20000", "160000") if fid in responses
                    else (r20["size"], r20["size"]))
            self.assertEqual((r20["size"], r160["size"]), want, fid)
            self.assertEqual({k: v for k, v in r20.items() if k != "size"},
                             {k: v for k, v in r160.items() if k != "size"})

    def test_seeds_of_a_point_are_summarised_together(self):
        self.assertEqual(dibs_fattree.point_label("size160KB-s12"), "size160KB")
        self.assertEqual(dibs_fattree.point_label("bg120ms-s1"), "bg120ms")
        self.assertEqual(dibs_fattree.point_label("qps2000"), "qps2000")

        def row(tag, seed, scheme, p99):
            return {"tag": tag, "seed": seed, "scheme": scheme, "qct_p99": p99,
                    "bg_short": {"p99": 1.0}, "drops": 4, "detoured_share": 0.5,
                    "unfinished_queries": 0}
        out = dibs_fattree.over_seeds([row("qps2000-s1", 1, "dibs", 10.0),
                                       row("qps2000-s2", 2, "dibs", math.inf),
                                       row("qps2000-s1", 1, "dctcp", 30.0)])
        self.assertEqual(set(out), {("qps2000", "dibs"), ("qps2000", "dctcp")})
        self.assertEqual(out[("qps2000", "dibs")]["seeds"], [1, 2])
        self.assertEqual(out[("qps2000", "dibs")]["qct_p99"], [10.0, math.inf])
        self.assertEqual(out[("qps2000", "dctcp")]["qct_p99"], [30.0])


if __name__ == "__main__":
    unittest.main()
