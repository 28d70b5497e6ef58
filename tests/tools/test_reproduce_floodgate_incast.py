#!/usr/bin/python3
"""tools/reproduce floodgate-incast end to end on conf/leafspine-4x2.yaml with a tiny
workload (one seed, drop-tail and Floodgate, small incasts): the per-tier
shape (Floodgate lowers the spine and destination-leaf peaks and drops
nothing), credit overhead reported, the spine bound checked, the source
leaves' buffer growing with successive incasts only without dstPause, and
windows back at their initial value after 10% loss with FG_SYNC. Then the
report is re-made from doctored summaries to show that a spine over the
bound, or a window left in use, makes the tool fail (exit 4)."""

import json
import os
import shutil
import tempfile
import unittest

import common

SLUICE = os.environ.get("SLUICE_BINARY", os.path.join(common.ROOT, "build", "switch", "sluice"))
ARGS = ["--seeds", "1", "--schemes", "droptail,floodgate", "--duration", "0.003",
        "--load", "0.05", "--incast-size", "600KB", "--incast-period", "2ms",
        "--succ-count", "3", "--succ-size", "600KB", "--succ-period", "0.25ms",
        "--losses", "0.1", "--loss-incast-size", "600KB", "--drain", "0.02",
        "--floor-seconds", "0", "--allow-unfaithful", "--sluice", SLUICE]


class FloodgateIncast(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="fg-incast-test-")
        cls.out = os.path.join(cls.tmp, "run")
        cls.proc = common.run_tool_status("reproduce", "floodgate-incast", "--out", cls.out,
                                          *ARGS, timeout=600)
        path = os.path.join(cls.out, "report", "results.json")
        cls.res = None
        if os.path.exists(path):
            with open(path) as f:
                cls.res = json.load(f)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def setUp(self):
        self.assertEqual(self.proc.returncode, 0, self.proc.stdout[-3000:] + self.proc.stderr)
        self.assertIsNotNone(self.res)

    def test_report_files(self):
        for name in ("table.md", "results.json", "buffer_tiers.png", "successive.png"):
            self.assertTrue(os.path.getsize(os.path.join(self.out, "report", name)) > 0, name)
        self.assertEqual(self.res["tiers"]["destination leaf"], ["leaf0"])
        self.assertEqual(self.res["tiers"]["spine"], ["spine0", "spine1"])

    def test_tiers_shape(self):
        t = self.res["results"]["tiers"]["1"]
        dt, fg = t["droptail"], t["floodgate"]
        self.assertEqual(fg["counters"]["drops"], 0)
        peak = lambda r, tier: r["tiers"][tier]["peak_bytes"]  # noqa: E731
        self.assertLess(peak(fg, "spine"), peak(dt, "spine") / 2)
        # Where drop-tail's backlog sits downstream depends on how ECMP hashed
        # the few flows (both spines, or one spine feeding leaf0 at line rate);
        # together the two tiers hold far less under Floodgate.
        self.assertLess(peak(fg, "spine") + peak(fg, "destination leaf"),
                        (peak(dt, "spine") + peak(dt, "destination leaf")) / 2)
        # The backlog waits in the source leaves' VOQs.
        voq = max(v["voq_peak_bytes"] for sw, v in fg["floodgate"].items()
                  if sw in ("leaf1", "leaf2", "leaf3"))
        self.assertGreater(voq, 100_000)
        co = fg["credit_overhead"]
        self.assertGreater(co["aggregate_fraction"], 0)
        self.assertLess(co["aggregate_fraction"], 0.05)
        self.assertLess(co["aggregate_fraction"], co["per_packet_aggregate_fraction"])
        with open(os.path.join(self.out, "report", "table.md")) as f:
            self.assertIn("droptail", f.read())

    def test_spine_bound(self):
        b = self.res["results"]["bound"]["1"]
        self.assertEqual(b["window_bytes"], 59375)  # 1.5 x 10G x 25us + 10G x 10us
        self.assertEqual((b["fan_in"], b["fan_out"]), (3, 2))
        self.assertTrue(b["pass"])
        for v in b["spines"].values():
            self.assertLessEqual(v["conservative_peak_bytes"], v["per_spine_bound_bytes"])
            self.assertGreater(v["conservative_peak_bytes"], 0)
        self.assertIn("PASS", self.proc.stdout)

    def test_successive_incasts(self):
        s = self.res["results"]["successive"]["1"]
        fg = [r["source leaf"] for r in s["floodgate"]["per_incast_peak_bytes"]]
        dp = [r["source leaf"] for r in s["floodgate-dstpause"]["per_incast_peak_bytes"]]
        self.assertGreater(fg[-1], fg[0] + 200_000, fg)      # grows with each incast
        self.assertLess(max(dp), fg[-1] / 2, (dp, fg))       # stays small with dstPause
        self.assertGreater(s["floodgate-dstpause"]["dst_pause_sent"], 0)
        self.assertEqual(s["floodgate"]["dst_pause_sent"], 0)

    def test_loss_windows_return(self):
        runs = self.res["results"]["loss"]["1"]
        self.assertEqual(set(runs), {"0", "0.1"})
        for k, v in runs.items():
            self.assertTrue(v["windows_back"], k)
            self.assertEqual(v["invalid_credit_bytes"], 0, k)
            self.assertEqual(v["sent_packets"], v["delivered_packets"] + v["data_lost_packets"], k)
        self.assertEqual(runs["0"]["data_lost_packets"], 0)
        self.assertGreater(runs["0.1"]["data_lost_packets"], 0)
        self.assertGreater(runs["0.1"]["sync_healed_data_bytes"], 0)

    def doctored(self, name, path_parts, edit):
        """A copy of the run with one summary edited, reported again."""
        copy = os.path.join(self.tmp, name)
        shutil.copytree(self.out, copy, symlinks=True)
        path = os.path.join(copy, *path_parts)
        with open(path) as f:
            summary = json.load(f)
        edit(summary)
        with open(path, "w") as f:
            json.dump(summary, f)
        return common.run_tool_status("reproduce", "floodgate-incast", "--out", copy,
                                      "--report-only", *ARGS, timeout=300)

    def test_bound_failure_exits_nonzero(self):
        def edit(s):
            sw = next(x for x in s["switches"] if x["name"] == "spine0")
            sw["floodgate"]["voq_peak_bytes"] = 10**7
        proc = self.doctored("over-bound", ["bound", "seed1", "floodgate", "summary.json"], edit)
        self.assertEqual(proc.returncode, 4, proc.stdout[-2000:] + proc.stderr)
        self.assertIn("FAIL", proc.stdout)

    def test_window_left_in_use_exits_nonzero(self):
        def edit(s):
            s["switches"][1]["floodgate"]["windows_in_use_at_stop"] = 1
        proc = self.doctored("window-left", ["loss", "seed1", "loss0.1", "floodgate",
                                             "summary.json"], edit)
        self.assertEqual(proc.returncode, 4, proc.stdout[-2000:] + proc.stderr)
        self.assertIn("windows after loss 0.1 seed 1", proc.stderr)


if __name__ == "__main__":
    unittest.main()
