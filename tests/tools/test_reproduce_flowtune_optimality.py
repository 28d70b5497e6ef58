#!/usr/bin/python3
"""tools/flowtune-sim/flowtune-optimality (tools/reproduce
flowtune-optimality runs it) on a tiny instance (a few thousand
10 us steps, both topology models): it runs, the separately converged
optimum converges at every check, and NED with F-NORM keeps at least 95% of
the optimal throughput on average while U-NORM stays below F-NORM
(docs/mechanisms/flowtune.md, "Optimality"; paper: F-NORM > 99.7%)."""

import csv
import os
import subprocess
import tempfile
import unittest

import common


def binary():
    # SLUICE_BINARY is <build>/switch/sluice; the tool is beside it in <build>.
    sluice = os.environ.get("SLUICE_BINARY",
                            os.path.join(common.ROOT, "build", "switch", "sluice"))
    build = os.path.dirname(os.path.dirname(os.path.abspath(sluice)))
    return os.path.join(build, "tools", "flowtune-sim", "flowtune-optimality")


class FlowtuneOptimality(unittest.TestCase):
    def run_tool(self, *extra):
        exe = binary()
        # tools/test builds it: a missing binary is a failure, not a skip.
        self.assertTrue(os.path.exists(exe), "not built: " + exe)
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "opt.csv")
            proc = subprocess.run(
                [exe, "--steps", "3000", "--warmup", "500", "--every", "10", "--seed", "3",
                 "--cdf", os.path.join(common.CONF, "websearch.cdf"), "--out", out] + list(extra),
                capture_output=True, text=True, timeout=120)
            self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
            with open(out) as f:
                rows = list(csv.DictReader(f))
        self.assertEqual(len(rows), 250)
        for r in rows:
            self.assertGreater(int(r["opt_iterations"]), 0)
            self.assertGreater(float(r["opt_throughput"]), 0)
        mean = lambda k: sum(float(r[k]) for r in rows) / len(rows)
        return mean("ned_fnorm_ratio"), mean("ned_unorm_ratio"), proc.stdout

    def check(self, *extra):
        f, u, out = self.run_tool(*extra)
        self.assertGreaterEqual(f, 0.95, out)
        self.assertLessEqual(u, f, out)
        self.assertIn("NED F-NORM", out)

    def test_leaf_spine(self):
        self.check("--topology", "leafspine")

    def test_one_big_switch(self):
        self.check("--topology", "obs")

    def test_through_reproduce(self):
        """tools/reproduce flowtune-optimality runs the same program, keeps
        its table and its checks and writes provenance.json."""
        exe = binary()
        self.assertTrue(os.path.exists(exe), "not built: " + exe)
        with tempfile.TemporaryDirectory() as d:
            proc = common.run_tool_status(
                "reproduce", "flowtune-optimality", "--out", d, "--program", exe, "--",
                "--steps", "1500", "--warmup", "500", "--every", "10", "--seed", "3")
            self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
            with open(os.path.join(d, "opt.csv")) as f:
                self.assertEqual(len(list(csv.DictReader(f))), 100)
            with open(os.path.join(d, "table.txt")) as f:
                self.assertIn("NED F-NORM", f.read())
            self.assertTrue(os.path.exists(os.path.join(d, "provenance.json")))

    def test_bad_option(self):
        exe = binary()
        self.assertTrue(os.path.exists(exe), "not built: " + exe)
        proc = subprocess.run([exe, "--topology", "torus"], capture_output=True, text=True)
        self.assertEqual(proc.returncode, 2)


if __name__ == "__main__":
    unittest.main()
