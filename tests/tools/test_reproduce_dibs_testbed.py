#!/usr/bin/python3
"""tools/reproduce dibs-testbed, a short run (5 queries, one seed) against
build/switch/sluice: the DIBS paper's testbed claims hold in exact time with
its TCP hosts (section 5.2, Fig. 6): drop-tail drops and every query waits
out at least one 10 ms RTO (QCT at least the unlimited QCT + 10 ms), DIBS
detours instead of dropping and its queries are as fast as unlimited
buffers' (within 1 ms), unlimited buffers drop nothing; every query is
counted and every response finishes. It runs on two worker lcores
(--workers 2: each run's summary lists two, and the tool says which run of
how many is going)."""

import json
import os
import tempfile
import unittest

import common

SLUICE = os.environ.get("SLUICE_BINARY", os.path.join(common.ROOT, "build", "switch", "sluice"))


class DibsTestbed(unittest.TestCase):
    def test_the_papers_claims_hold(self):
        self.assertTrue(os.access(SLUICE, os.X_OK), f"{SLUICE} not built")
        with tempfile.TemporaryDirectory() as out:
            output = common.run_tool_serialised("reproduce", "dibs-testbed", "--workers", "2",
                                                "--queries", "5", "--seeds", "1", "--out", out,
                                                "--sluice", SLUICE)
            for i, scheme in enumerate(("unlimited", "droptail", "dibs"), 1):
                self.assertIn(f"sluice: run {i} of 3: {os.path.join(out, 'seed1', scheme)}",
                              output)
                with open(os.path.join(out, "seed1", scheme, "summary.json")) as f:
                    self.assertEqual(len(json.load(f)["workers"]), 2, scheme)
            with open(os.path.join(out, "results.json")) as f:
                res = json.load(f)
            rows = {r["scheme"]: r for r in res["rows"]}
            self.assertEqual(set(rows), {"unlimited", "droptail", "dibs"})
            for r in rows.values():
                self.assertEqual(r["queries"], 5, r)
                self.assertEqual(r["unfinished_flows"], 0, r)
            u, d, b = rows["unlimited"], rows["droptail"], rows["dibs"]
            self.assertEqual(u["drops"], 0, u)
            # 50 x 32 KB at 1 Gb/s is 13.1 ms of wire time.
            self.assertGreater(u["min"], 13.1)
            self.assertGreater(d["drops"], 0, d)
            self.assertGreaterEqual(d["min"], u["max"] + 10.0, (d, u))
            self.assertEqual(b["drops"], 0, b)
            self.assertGreater(b["detours"], 0, b)
            self.assertLessEqual(b["max"], u["max"] + 1.0, (b, u))
            self.assertTrue(os.path.exists(os.path.join(out, "qct_cdf.png")))

    def test_workers_must_be_a_count(self):
        for bad in ("0", "two"):
            proc = common.run_tool_status("reproduce", "dibs-testbed", "--workers", bad)
            self.assertEqual(proc.returncode, 2, proc.stderr)
            self.assertIn("--workers: expected a count of 1 or more", proc.stderr)



if __name__ == "__main__":
    unittest.main()
