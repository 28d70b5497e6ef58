#!/usr/bin/python3
"""tools/flowtune-convergence: its convergence measure on made-up throughput
bins (converged at the first bin from which every active flow stays within
the tolerance of C(1 - 0.01)/N for 5 bins; never, when a flow stays out),
and a real run of both variants against build/switch/sluice and
build/allocator/sluice-allocator (the first of up to 3 that passes the
fidelity gate; when none passes, the timing is reported as NOT JUDGED with
the gate's reasons and the rest is still asserted): with Flowtune every
step (but at most one, for a machine stall) ends with each flow within 20 % of its fair share
and the receiver's port drops nothing (the excess is dropped at the edge as
pacer_full); without it the receiver's port drops."""

import json
import os
import sys
import tempfile
import time
import types
import unittest

import common
from sluicepy import cpu_use

SLUICE = os.environ.get("SLUICE_BINARY", os.path.join(common.ROOT, "build", "switch", "sluice"))
ALLOCATOR = os.path.join(os.path.dirname(os.path.dirname(SLUICE)), "allocator", "sluice-allocator")


class ConvergenceMeasure(unittest.TestCase):
    def setUp(self):
        self.t = common.load_tool("flowtune-convergence")
        # 1 Gb/s, 10 ms steps: flows start at 0, 10, 20, 30, 40 ms and end
        # at 90, 80, 70, 60, 50 ms.
        self.a = types.SimpleNamespace(rate_bps=10**9, step_ns=10_000_000, tolerance=0.1)
        self.cap = 10**9 * self.t.BIN_NS / 1e9

    def ideal(self, late=None):
        """Bins at the fair share; `late`: (flow, first bin, bins) at 0."""
        n = 90
        bins = [[0] * n for _ in range(self.t.SENDERS)]
        for b in range(n):
            act = self.t.active_at(self.a, b * self.t.BIN_NS)
            for i in act:
                bins[i][b] = self.cap * 0.99 / len(act)
        if late:
            flow, first, count = late
            for b in range(first, first + count):
                bins[flow][b] = 0
        return bins

    def test_fair_bins_converge_in_the_first_bin(self):
        conv = self.t.convergence(self.a, self.ideal())
        self.assertEqual([c["flows"] for c in conv], [1, 2, 3, 4, 5, 4, 3, 2, 1])
        self.assertEqual([c["converged_ms"] for c in conv], [1] * 9)

    def test_a_flow_that_arrives_late_delays_convergence(self):
        # The third flow (starts at 20 ms) gets nothing for 3 bins.
        conv = self.t.convergence(self.a, self.ideal(late=(2, 20, 3)))
        self.assertEqual(conv[2]["converged_ms"], 4)
        # Out for the whole step: never converged within it.
        conv = self.t.convergence(self.a, self.ideal(late=(2, 20, 10)))
        self.assertIsNone(conv[2]["converged_ms"])


ATTEMPTS = 3
PAUSE_S = 5


class RealRun(unittest.TestCase):
    def faithful_run(self, out):
        """(directory, results.json, judged) of the first of ATTEMPTS runs
        that passed the fidelity gate (sluice's ports and the allocator's
        lateness): timing is asserted only on a run in which the emulator
        kept up. When every attempt failed the gate, the last one is
        returned unjudged: its timing is not asserted (the gate's
        violations are printed), the rest is (docs/mechanisms/flowtune.md,
        "The allocator is judged too")."""
        gates = []
        for attempt in range(ATTEMPTS):
            rdir = os.path.join(out, str(attempt))
            before = cpu_use.Snapshot()
            common.run_tool_serialised("flowtune-convergence", "--out", rdir, "--floor-seconds",
                                       "0", "--allow-unfaithful", "--sluice", SLUICE,
                                       "--allocator", ALLOCATOR)
            with open(os.path.join(rdir, "results.json")) as f:
                res = json.load(f)
            if res["gate"]["valid"]:
                return rdir, res, True
            gates.append(res["gate"]["runs"])
            # Which other process ran meanwhile: the open question of
            # docs/mechanisms/flowtune.md ("Convergence").
            print(f"attempt {attempt + 1} failed the gate; "
                  f"{cpu_use.describe(before, cpu_use.Snapshot(), exclude={os.getpid()})}",
                  file=sys.stderr)
            if attempt + 1 < ATTEMPTS:
                time.sleep(PAUSE_S)  # let whatever disturbed the machine pass
        why = sorted({v["text"] for g in gates for run in g.values() for v in run["violations"]})
        print(f"flowtune convergence timing NOT JUDGED: no faithful run in {ATTEMPTS} "
              f"attempts: {why}", file=sys.stderr)
        return rdir, res, False

    def test_flowtune_converges_and_the_receiver_port_does_not_drop(self):
        for b in (SLUICE, ALLOCATOR):
            self.assertTrue(os.access(b, os.X_OK), f"{b} not built")
        with tempfile.TemporaryDirectory() as tmp:
            out, res, judged = self.faithful_run(tmp)
            ft, base = res["runs"]["flowtune"], res["runs"]["baseline"]
            self.assertEqual(len(ft["convergence"]), 9)
            # Steady state within every 20 ms step: in the step's last 5
            # bins (before the next event) each active flow is within 20 %
            # of C(1 - 0.01)/N. One step may miss, as a stall of a loaded
            # machine can spoil a window; the baseline misses most (its
            # drop-tail queue locks flows out).
            t = common.load_tool("flowtune-convergence")
            a = types.SimpleNamespace(step_ns=20_000_000)
            def steady_misses(run):
                with open(os.path.join(out, f"throughput_{run}.csv")) as f:
                    rows = [list(map(float, line.split(",")))
                            for line in f.read().splitlines()[1:]]
                misses = 0
                for k in range(9):
                    end = 20 * (k + 1) - 1
                    act = t.active_at(a, (end - 1) * t.BIN_NS)
                    share = 1000 * 0.99 / len(act)
                    ok = all(abs(rows[b][1 + i] - share) <= 0.2 * share
                             for b in range(end - 5, end) for i in act)
                    misses += not ok
                return misses
            if judged:  # both depend on rates arriving on time
                self.assertLessEqual(steady_misses("flowtune"), 1,
                                     (ft["convergence"], res["gate"]["runs"]["flowtune"]))
                self.assertFalse([k for k in ft["drops"] if k.startswith("h5/")], ft["drops"])
            self.assertGreaterEqual(steady_misses("baseline"), 3, base["convergence"])
            self.assertTrue(any(k.endswith("/pacer_full") for k in ft["drops"]), ft["drops"])
            self.assertTrue(any(k.startswith("h5/") for k in base["drops"]), base["drops"])
            self.assertGreater(ft["flowtune"]["rate_updates"], 0)
            for name in ("convergence.png", "results.md", "throughput_flowtune.csv"):
                self.assertTrue(os.path.exists(os.path.join(out, name)), name)


if __name__ == "__main__":
    unittest.main()
