#!/usr/bin/python3
"""The ned-bench program (tools/bench allocator runs it) runs its smallest
size briefly and prints the machine line and a markdown table with one row
per model and variant. The output format only: no timing is asserted."""

import os
import re
import subprocess
import tempfile
import unittest

import common

BUILD = os.path.dirname(os.path.dirname(os.environ.get(
    "SLUICE_BINARY", os.path.join(common.ROOT, "build", "switch", "sluice"))))
BENCH = os.path.join(BUILD, "tools", "ned-bench", "ned-bench")
ROW = re.compile(r"^\| 384 \| (full-path|one-big-switch) \| (\d+) \| (\d+) \| (iterate|iter\+norm|churn) "
                 r"\| \d+\.\d\d \| \d+\.\d\d \| \d+\.\d \|$")


class NedBenchFormat(unittest.TestCase):
    def run_bench(self, *args):
        cpu = min(os.sched_getaffinity(0))
        return subprocess.run([BENCH, "--cpu", str(cpu)] + list(args),
                              capture_output=True, text=True, timeout=120)

    def test_smallest_size_table(self):
        r = self.run_bench("--sizes", "384", "--iterations", "20", "--warmup", "2",
                           "--flows-per-server", "1")
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.splitlines()
        self.assertTrue(lines[0].startswith("machine: "), lines[0])
        self.assertIn("single thread", lines[0])
        header = [l for l in lines if l.startswith("| servers |")]
        self.assertEqual(len(header), 1)
        rows = [ROW.match(l) for l in lines if l.startswith("| 384 ")]
        self.assertEqual(len(rows), 6, r.stdout)
        self.assertTrue(all(rows), r.stdout)
        seen = {(m.group(1), m.group(4)) for m in rows}
        self.assertEqual(len(seen), 6)
        for m in rows:
            links = int(m.group(2))
            self.assertEqual(links, 960 if m.group(1) == "full-path" else 768)
            self.assertEqual(int(m.group(3)), 384)

    def test_through_bench_allocator(self):
        with tempfile.TemporaryDirectory() as d:
            r = common.run_tool_status("bench", "allocator", "--out", d, "--program", BENCH,
                                       "--", "--sizes", "384", "--iterations", "20",
                                       "--warmup", "2", "--flows-per-server", "1")
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            with open(os.path.join(d, "table.md")) as f:
                table = f.read()
            self.assertTrue(table.startswith("machine: "), table)
            self.assertEqual(len([l for l in table.splitlines() if l.startswith("| 384 ")]), 6)
            self.assertTrue(os.path.exists(os.path.join(d, "provenance.json")))

    def test_bad_arguments_refused(self):
        for args in (["--sizes", "100"], ["--iterations", "0"], ["--bogus", "1"], ["--cpu"]):
            r = self.run_bench(*args)
            self.assertEqual(r.returncode, 2, args)
            self.assertIn("usage: ned-bench", r.stderr)


if __name__ == "__main__":
    unittest.main()
