#!/usr/bin/python3
"""tools/reproduce dibs-incast against a fake sluice (tests/tools/common.py's, with
DIBS's summary fields added by a wrapper here): the figures it derives
(drops by tier and reason, detours and the detoured fraction, the detours
per packet, where detours went), its report and plots, and its exit codes:
0 when drop-tail drops and DIBS drops only for DIBS's reasons below the
20% bound, 4 (FAIL) when drop-tail drops nothing, when DIBS drops for
another reason or detours too much, 3 when a run is over the fidelity
limits (0 with --allow-unfaithful, the report marked NOT VALID)."""

import json
import os
import shutil
import tempfile
import unittest

import common

CONFIG = os.path.join(common.ROOT, "conf", "dibs-leafspine.yaml")

# Run after common.FAKE_SLUICE's body: adds what a DIBS run's summary has.
# Every host port received 1000 packets from its host (8000 into the
# fabric) and sent 1000 to it. drop-tail drops 40 at spine0/d0 (queue_full)
# unless FAKE_DROPTAIL_CLEAN; under a dibs scheme every switch-facing port
# has FAKE_DIBS_DETOURS (default 50) detours, 30 at leaf0/u0 more; the
# histogram is filled from them; FAKE_DIBS_DROP=<reason> drops 7 at
# leaf0/h0 for that reason (and, for a DIBS reason, counts it in the
# switch's detour_drops).
EXTRA = r'''
DIBS_REASONS = ("detour_no_port", "detour_max_detours", "detour_refused")
scheme = os.path.basename(os.getcwd())
per_port = int(os.environ.get("FAKE_DIBS_DETOURS", "50"))
with open(opt("--summary-json")) as f:
    summary = json.load(f)
confs = {sw["name"]: sw for sw in conf["switches"]}
for sw in summary["switches"]:
    c = confs[sw["name"]]
    on = (c.get("dibs") or {}).get("enabled")
    roles = {p["name"]: p.get("role") for p in c["ports"]}
    total = 0
    drops = {r: 0 for r in DIBS_REASONS}
    for p in sw["ports"]:
        if roles[p["name"]] == "host":
            p["rx_packets"] = 1000
            p["tx_packets"] = 1000
            reason = os.environ.get("FAKE_DIBS_DROP")
            if on and reason and (sw["name"], p["name"]) == ("leaf0", "h0"):
                p["drops"][reason] = 7
                if reason in drops:
                    drops[reason] += 7
        else:
            p["rx_packets"] = p["tx_packets"] = 500
        if scheme == "droptail" and not os.environ.get("FAKE_DROPTAIL_CLEAN") \
                and (sw["name"], p["name"]) == ("spine0", "d0"):
            p["drops"]["queue_full"] = 40
        if on:
            n = per_port + (30 if (sw["name"], p["name"]) == ("leaf0", "u0") else 0) \
                if roles[p["name"]] == "switch" else 0
            p["dibs_detours"] = n
            total += n
    if on:
        hosts = sum(1 for r in roles.values() if r == "host")
        hist = {b: 0 for b in ("le_0", "le_1", "le_2", "le_3", "le_7", "le_15", "le_31",
                               "le_63", "le_255")}
        if hosts:
            hist.update(le_0=1000 * hosts - 20, le_1=15, le_7=5)
        sw["dibs"] = {"detours": total, "detour_drops": drops, "detours_per_packet": hist}
with open(opt("--summary-json"), "w") as f:
    json.dump(summary, f)
'''

ARGS = ["--config", CONFIG, "--seeds", "1", "--duration", "0.002", "--load", "0.05",
        "--incast-size", "100KB", "--incast-period", "1ms", "--drain", "0.001"]


class DibsIncast(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="dibs-incast-test-")
        cls.sluice = common.write_script(os.path.join(cls.tmp, "sluice"),
                                         common.FAKE_SLUICE + EXTRA)
        cls.floor = common.write_script(os.path.join(cls.tmp, "sluice-floor"), common.FAKE_FLOOR)
        cls.out, cls.proc = cls.run_tool("clean")
        with open(os.path.join(cls.out, "report", "results.json")) as f:
            cls.res = json.load(f)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    @classmethod
    def run_tool(cls, name, *extra, **env):
        out = os.path.join(cls.tmp, name)
        old = dict(os.environ)
        os.environ.update(env)
        try:
            proc = common.run_tool_status("reproduce", "dibs-incast", "--out", out,
                                          "--sluice", cls.sluice, "--sluice-floor", cls.floor,
                                          *ARGS, *extra, timeout=300)
        finally:
            os.environ.clear()
            os.environ.update(old)
        return out, proc

    def test_clean_run_passes(self):
        self.assertEqual(self.proc.returncode, 0, self.proc.stdout[-3000:] + self.proc.stderr)
        for name in ("table.md", "results.json", "dibs_detours.png", "dibs_hops.png"):
            self.assertGreater(os.path.getsize(os.path.join(self.out, "report", name)), 0, name)
        self.assertEqual(self.res["tiers"], {"source leaf": ["leaf1", "leaf2", "leaf3"],
                                             "spine": ["spine0", "spine1"],
                                             "destination leaf": ["leaf0"]})
        self.assertEqual(self.res["checks_failed"], [])
        self.assertIn("PASS", self.proc.stdout)

    def test_figures(self):
        r = self.res["results"]["1"]
        dt = r["droptail"]
        self.assertEqual(dt["drops"], 40)
        self.assertEqual(dt["drops_by_tier"]["spine"], {"queue_full": 40})
        self.assertEqual(dt["drops_by_tier"]["source leaf"], {})
        self.assertEqual(dt["detours"], 0)
        self.assertEqual(r["ecn"]["drops"], 0)
        d = r["dibs"]
        self.assertEqual(d["packets_into_fabric"], 8000)
        self.assertEqual(d["packets_delivered"], 8000)
        # 4 leaves x 2 uplinks + 2 spines x 4 downlinks = 16 switch ports,
        # 50 detours each, and 30 more at leaf0/u0.
        self.assertEqual(d["detours"], 16 * 50 + 30)
        self.assertAlmostEqual(d["detoured_fraction"], 830 / 8000)
        self.assertEqual(d["detours_at"]["leaf0/u0"], 80)
        self.assertEqual(d["detours_by_tier"], {"source leaf": 300, "spine": 400,
                                                "destination leaf": 130})
        self.assertEqual(d["packets_left_fabric"], 8000)
        self.assertEqual(d["packets_detoured"], 4 * 20)
        self.assertAlmostEqual(d["packets_detoured_share"], 80 / 8000)
        self.assertEqual(d["detours_per_packet"]["le_1"], 60)
        for s in ("droptail", "ecn", "dibs", "dibs-load-aware"):
            fct = r[s]["fct"]
            self.assertGreater(fct["incast"]["flows"], 0, s)
            self.assertEqual(fct["incast"]["unfinished"], fct["incast"]["flows"], s)  # no capture
            self.assertTrue(fct["non_incast"]["lower_bound"] or fct["non_incast"]["flows"] == 0)
        with open(os.path.join(self.out, "report", "table.md")) as f:
            table = f.read()
        self.assertIn("| dibs | 8000 | 0 |", table)
        self.assertIn("10.38%", table)

    def test_dibs_reason_drops_are_allowed(self):
        _, proc = self.run_tool("no-port", FAKE_DIBS_DROP="detour_no_port")
        self.assertEqual(proc.returncode, 0, proc.stdout[-2000:] + proc.stderr)
        self.assertIn("detour_no_port 7", proc.stdout)

    def test_other_drops_under_dibs_fail(self):
        out, proc = self.run_tool("queue-full", FAKE_DIBS_DROP="queue_full")
        self.assertEqual(proc.returncode, 4, proc.stdout[-2000:] + proc.stderr)
        self.assertIn("FAIL", proc.stdout)
        self.assertIn("dibs drops seed 1", proc.stderr)
        self.assertIn("dibs-load-aware drops seed 1", proc.stderr)
        with open(os.path.join(out, "report", "table.md")) as f:
            self.assertTrue(f.read().startswith("CHECK FAILED"))

    def test_too_many_detours_fail(self):
        # 16 x 100 + 30 = 1630 detours / 8000 packets = 20.4%.
        _, proc = self.run_tool("many", FAKE_DIBS_DETOURS="100")
        self.assertEqual(proc.returncode, 4, proc.stdout[-2000:] + proc.stderr)
        self.assertIn("dibs detoured fraction seed 1", proc.stderr)
        self.assertIn("FAIL: seed 1 dibs: detoured fraction 0.2037", proc.stdout)

    def test_droptail_without_drops_fails(self):
        _, proc = self.run_tool("quiet", FAKE_DROPTAIL_CLEAN="1")
        self.assertEqual(proc.returncode, 4, proc.stdout[-2000:] + proc.stderr)
        self.assertIn("droptail drops seed 1", proc.stderr)

    def test_unfaithful_run(self):
        out, proc = self.run_tool("unfaithful", FAKE_UNFAITHFUL="dibs")
        self.assertEqual(proc.returncode, 3, proc.stdout[-2000:] + proc.stderr)
        self.assertIn("NOT VALID", proc.stderr)
        with open(os.path.join(out, "report", "table.md")) as f:
            self.assertTrue(f.read().startswith("NOT VALID"))
        # Presented anyway with --allow-unfaithful, still marked.
        _, proc = self.run_tool("unfaithful", "--allow-unfaithful", "--report-only",
                                FAKE_UNFAITHFUL="dibs")
        self.assertEqual(proc.returncode, 0, proc.stdout[-2000:] + proc.stderr)
        self.assertIn("NOT VALID", proc.stdout)

    def test_check_failure_wins_over_allowed_unfaithfulness(self):
        _, proc = self.run_tool("both", "--allow-unfaithful", FAKE_UNFAITHFUL="dibs",
                                FAKE_DROPTAIL_CLEAN="1")
        self.assertEqual(proc.returncode, 4, proc.stdout[-2000:] + proc.stderr)


if __name__ == "__main__":
    unittest.main()
