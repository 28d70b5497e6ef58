#!/usr/bin/python3
"""Tests of the fidelity gate (tools/sluicepy/fidelity.py): violations found
in summary JSON fixtures (each kind, the limits' edges, missing fields,
other limits), the worker-cpu and machine-floor helpers with a fake
sluice-floor, the verdict's exit codes, and tools/experiment (also over
seeds), reproduce bfc-testbed and bfc-sweep end to end with a fake sluice:
exit 3 and marked results when a run is over the limits, exit 0 with
--allow-unfaithful or when every run held."""

import argparse
import contextlib
import io
import json
import os
import tempfile
import types
import unittest

import common
from sluicepy import fidelity

DEFAULTS = fidelity.Limits(max_lost_ns=1_000_000, max_lateness_ns=25_600)


def port(name, **fields):
    return dict(name=name, **fields)


def summary(*ports_by_switch, workers=None, duration=1.0):
    """{'switches': [...]} from (switch name, [ports]) pairs."""
    doc = {"duration_seconds": duration,
           "switches": [{"name": sw, "ports": ps} for sw, ps in ports_by_switch]}
    if workers is not None:
        doc["workers"] = workers
    return doc


CLEAN = summary(
    ("leaf0", [port("h0", shaper_lost_ns=0, shaper_lateness_p99_ns=3200,
                    shaper_lateness_samples=900, link_lateness_p99_ns=0,
                    link_lateness_samples=0, replay_lateness_p99_ns=25600,
                    replay_lateness_samples=400),
               port("up", shaper_lost_ns=1_000_000, shaper_lateness_p99_ns=12800,
                    shaper_lateness_samples=10, link_lateness_p99_ns=25600,
                    link_lateness_samples=10)]),
    ("spine0", [port("d0", shaper_lost_ns=5, link_lateness_p99_ns=100,
                     link_lateness_samples=1)]))


def texts(found):
    return [str(v) for v in found]


class Violations(unittest.TestCase):
    def test_within_the_limits_at_their_edges(self):
        # 1 ms lost and p99 in the 25.6 us bucket are allowed (<=).
        self.assertEqual(fidelity.violations(CLEAN, DEFAULTS), [])

    def test_lost_time(self):
        s = summary(("leaf0", [port("u0", shaper_lost_ns=3_620_000), port("u1", shaper_lost_ns=1_000_001)]))
        self.assertEqual(texts(fidelity.violations(s, DEFAULTS)),
                         ["leaf0/u0: lost 3.62 ms of transmit time exceeds 1.00 ms",
                          "leaf0/u1: lost 1.00 ms of transmit time exceeds 1.00 ms"])
        v = fidelity.violations(s, DEFAULTS)[0]
        self.assertEqual((v.switch, v.port, v.kind, v.value_ns, v.limit_ns),
                         ("leaf0", "u0", "lost", 3_620_000, 1_000_000))

    def test_records_left_out_of_a_capture(self):
        s = summary(("leaf0", [port("h0", capture_dropped_records=0),
                               port("h1", capture_dropped_records=12)]))
        found = fidelity.violations(s, DEFAULTS)
        self.assertEqual([(v.port, v.kind, v.value_ns) for v in found], [("h1", "capture", 12)])
        self.assertIn("12 records left out of its capture", str(found[0]))

    def test_each_lateness_kind(self):
        for kind in fidelity.LATENESS_KINDS:
            s = summary(("leaf0", [port("up", **{kind + "_lateness_p99_ns": 51200,
                                                 kind + "_lateness_samples": 3})]))
            self.assertEqual(texts(fidelity.violations(s, DEFAULTS)),
                             ["leaf0/up: %s lateness p99 <= 51.2 us exceeds 25.6 us" % kind])

    def test_above_the_histogram(self):
        s = summary(("s2", [port("r2", link_lateness_p99_ns=fidelity.ABOVE_HISTOGRAM,
                                 link_lateness_samples=7)]))
        self.assertEqual(texts(fidelity.violations(s, DEFAULTS)),
                         ["s2/r2: link lateness p99 > 105 ms exceeds 25.6 us"])

    def test_millisecond_lateness(self):
        s = summary(("s1", [port("u", link_lateness_p99_ns=3_276_800, link_lateness_samples=7)]))
        self.assertEqual(texts(fidelity.violations(s, DEFAULTS)),
                         ["s1/u: link lateness p99 <= 3.28 ms exceeds 25.6 us"])

    def test_allocator_lateness(self):
        line = ("sluice-allocator summary: 1.000 s, flows 0, hosts 6, iterations 796, "
                "updates sent 1 (0 lease re-sends, 48 bytes in 1 datagrams), datagrams 2, "
                "malformed 0, iteration late p99 %d ns max %d ns\n")
        # The p99 is judged, at most --max-lost-ms; the max is only printed.
        self.assertEqual(fidelity.allocator_violations(line % (1_000_000, 9_000_000), DEFAULTS),
                         [])
        self.assertEqual(texts(fidelity.allocator_violations(line % (2_000_000, 2_400_000),
                                                             DEFAULTS)),
                         ["sluice-allocator/loop: iteration lateness p99 <= 2 ms exceeds 1.00 ms"])
        # An older allocator's line without the figure is not judged.
        self.assertIsNone(fidelity.allocator_lateness("sluice-allocator summary: 1.000 s"))
        self.assertEqual(fidelity.allocator_violations("sluice-allocator summary: 1 s", DEFAULTS),
                         [])
        gate = fidelity.Gate("t", types.SimpleNamespace(max_lost_ms=1.0, max_lateness_us=25.6,
                                                        allow_unfaithful=False))
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            gate.check("flowtune", CLEAN, line % (5_000_000, 7_000_000))
            gate.check("baseline", CLEAN)
        self.assertEqual(gate.bad_runs, ["flowtune"])
        fig = gate.runs["flowtune"]["figures"]
        self.assertEqual((fig["allocator_late_p99_ns"], fig["allocator_late_max_ns"]),
                         (5_000_000, 7_000_000))
        self.assertIn("allocator: iteration lateness p99 <= 5 ms, max 7 ms", printed.getvalue())

    def test_only_ports_with_samples_count(self):
        s = summary(("leaf0", [port("h0", shaper_lateness_p99_ns=51200, shaper_lateness_samples=0),
                               # older summaries have no counts: p99 0 means none
                               port("h1", link_lateness_p99_ns=0)]))
        self.assertEqual(fidelity.violations(s, DEFAULTS), [])
        old = summary(("leaf0", [port("h1", link_lateness_p99_ns=51200)]))
        self.assertEqual(len(fidelity.violations(old, DEFAULTS)), 1)

    def test_missing_fields_are_absent_not_errors(self):
        s = summary(("leaf0", [port("h0")]), ("leaf1", []))
        self.assertEqual(fidelity.violations(s, DEFAULTS), [])
        self.assertEqual(fidelity.violations({}, DEFAULTS), [])
        fig = fidelity.figures(s)
        self.assertEqual(fidelity.format_figures(fig),
                         ["fidelity: no lost time reported, no lateness samples"])

    def test_limits_from_the_command_line(self):
        p = argparse.ArgumentParser()
        fidelity.add_arguments(p)
        a = p.parse_args([])
        self.assertEqual((a.max_lost_ms, a.max_lateness_us, a.allow_unfaithful, a.floor_seconds),
                         (1.0, 25.6, False, 2.0))
        self.assertEqual(fidelity.limits_from_args(a), DEFAULTS)
        a = p.parse_args(["--max-lost-ms", "5", "--max-lateness-us", "51.2"])
        s = summary(("leaf0", [port("u0", shaper_lost_ns=3_620_000, link_lateness_p99_ns=51200,
                                    link_lateness_samples=1)]))
        self.assertEqual(fidelity.violations(s, fidelity.limits_from_args(a)), [])
        self.assertEqual(len(fidelity.violations(s, DEFAULTS)), 2)

    def test_figures_name_the_worst_ports_and_the_workers(self):
        s = summary(("leaf0", [port("u0", shaper_lost_ns=3_620_000, link_lateness_p99_ns=51200,
                                    link_lateness_samples=4),
                               port("h0", shaper_lost_ns=10, replay_lateness_p99_ns=102400,
                                    replay_lateness_samples=9)]),
                    workers=[{"lcore": 1, "cpu": 1, "iterations": 10**6, "busy_fraction": 0.43,
                              "loop_gap_p99_ns": 3200, "loop_gap_max_ns": 310_000,
                              "loop_gaps_over_50us": 12, "loop_gaps_over_200us": 1}],
                    duration=1.1)
        self.assertEqual(fidelity.format_figures(fidelity.figures(s)), [
            "fidelity: worst lost time 3.62 ms (leaf0/u0), worst lateness p99 <= 102.4 us "
            "(leaf0/h0, replay)",
            "worker lcore 1 (cpu 1): busy 43%, loop gap p99 <= 3.2 us, max 310 us, "
            "gaps >50 us 12 (10.9/s), gaps >200 us 1 (0.9/s)"])


class Floor(unittest.TestCase):
    def test_worker_cpu_from_eal_options(self):
        cases = {"--no-huge -m 2048 --no-pci -l 0,1": 1, "-l 2-5": 3, "-l0,3": 3,
                 "--lcores=1,0": 1, "--main-lcore 1 -l 0,1": 0, "--lcores 4,6 --main-lcore=6": 4,
                 "-l 0": None, "--no-pci": None, "-l 0@1,1@2": None}
        for eal, cpu in cases.items():
            self.assertEqual(fidelity.worker_cpu(eal), cpu, eal)

    def test_format_floor(self):
        d, why = fidelity.parse_floor_output(
            'noise\n{"cpu": 1, "seconds": 2.0, "loops": 5, "max_gap_ns": 310000, '
            '"gaps_over_10us": 40, "gaps_over_50us": 24, "gaps_over_200us": 1, "gap_p99_ns": 100}\n')
        self.assertIsNone(why)
        self.assertEqual(fidelity.format_floor(d),
                         "machine floor on cpu 1 (2.0 s busy loop): gaps >50 us 12.0/s, "
                         ">200 us 0.5/s, max 310 us")
        d, why = fidelity.parse_floor_output('{"cpu": 1}\n')
        self.assertIsNone(d)
        self.assertIn("no floor figures", why)

    def test_measure_floor_with_a_fake_binary(self):
        with tempfile.TemporaryDirectory() as tmp:
            fake = common.write_script(os.path.join(tmp, "sluice-floor"), common.FAKE_FLOOR)
            d, why = fidelity.measure_floor(fake, 3, 0.5)
            self.assertIsNone(why)
            self.assertEqual((d["cpu"], d["gaps_over_50us"]), (3, 24))
            with open(fake + ".args") as f:
                self.assertEqual(f.read(), "--cpu 3 --seconds 0.5 --json")
            failing = common.write_script(os.path.join(tmp, "failing"),
                                          "#!/bin/sh\necho cannot pin >&2\nexit 1\n")
            d, why = fidelity.measure_floor(failing, 1, 0.5)
            self.assertIsNone(d)
            self.assertIn("failed (exit 1) cannot pin", why)
            d, why = fidelity.measure_floor(os.path.join(tmp, "missing"), 1, 0.5)
            self.assertIsNone(d)
            self.assertIn("is not built", why)


class Verdict(unittest.TestCase):
    def verdict(self, bad, allow):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = fidelity.verdict("tool", bad, allow)
        return rc, out.getvalue() + err.getvalue()

    def test_exit_codes(self):
        rc, text = self.verdict([], False)
        self.assertEqual(rc, 0)
        self.assertIn("held in every run", text)
        rc, text = self.verdict(["droptail", "pfc"], False)
        self.assertEqual(rc, fidelity.EXIT_UNFAITHFUL)
        self.assertEqual(rc, 3)
        self.assertIn("tool: NOT VALID: fidelity limits exceeded in droptail, pfc", text)
        self.assertIn("--allow-unfaithful", text)
        rc, text = self.verdict(["droptail"], True)
        self.assertEqual(rc, 0)
        self.assertIn("WARNING", text)

    def test_gate_records_runs(self):
        a = argparse.Namespace(max_lost_ms=1.0, max_lateness_us=25.6, allow_unfaithful=False)
        gate = fidelity.Gate("tool", a, "machine floor on cpu 1 (...)")
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            gate.check("a", CLEAN)
            gate.check("b", summary(("leaf0", [port("u0", shaper_lost_ns=2_000_000)])))
        lines = out.getvalue().splitlines()
        self.assertIn("tool: b: leaf0/u0: lost 2.00 ms of transmit time exceeds 1.00 ms", lines)
        self.assertIn("tool: a machine floor on cpu 1 (...)", lines)
        self.assertEqual((gate.valid, gate.bad_runs, gate.note),
                         (False, ["b"], "NOT VALID: fidelity limits exceeded"))
        rec = gate.record()
        self.assertEqual(rec["runs"]["a"]["violations"], [])
        self.assertEqual(rec["runs"]["b"]["violations"][0]["kind"], "lost")
        json.dumps(rec)  # written as JSON by the tools

    def test_mark_not_valid_once(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "compare.txt")
            with open(path, "w") as f:
                f.write("table\n")
            fidelity.mark_not_valid(path)
            fidelity.mark_not_valid(path)
            with open(path) as f:
                self.assertEqual(f.read(), "NOT VALID: fidelity limits exceeded\n\ntable\n")


class ExperimentGate(common.FakeExperimentCase):
    """tools/experiment on conf/leafspine.yaml with a fake sluice and a fake
    floor program: the gate's exit codes and what it writes."""

    def experiment(self, name, *extra, unfaithful=""):
        out = os.path.join(self.tmp.name, name)
        proc = common.run_tool_status(
            "experiment", "--config", os.path.join(common.ROOT, "conf", "leafspine.yaml"),
            "--schemes", "droptail,ecn", "--workload", self.workload, "--drain", "0.01",
            "--sluice", self.sluice, "--sluice-floor", self.floor, "--floor-seconds", "0.2",
            "--out", out, *extra, env=dict(os.environ, FAKE_UNFAITHFUL=unfaithful))
        self.assertNotIn("Traceback", proc.stdout + proc.stderr)
        return proc, out

    def read(self, *path):
        with open(os.path.join(*path)) as f:
            return f.read()

    def test_exact_time_measures_no_floor(self):
        proc, out = self.experiment("exact-clean")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertFalse(os.path.exists(os.path.join(out, "floor.json")))
        self.assertNotIn("machine floor", proc.stdout)

    def test_faithful_runs_pass(self):
        # Real time: the machine's floor is measured and printed beside each run.
        proc, out = self.experiment("clean", "--clock", "real")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("experiment: fidelity limits held in every run", proc.stdout)
        floor_line = ("machine floor on cpu 1 (2.0 s busy loop): gaps >50 us 12.0/s, "
                      ">200 us 0.5/s, max 310 us")
        for scheme in ("droptail", "ecn"):
            self.assertIn("experiment: %s fidelity: worst lost time 200 us" % scheme, proc.stdout)
            self.assertIn("experiment: %s %s" % (scheme, floor_line), proc.stdout)
            self.assertIn("experiment: %s worker lcore 1 (cpu 1): busy 25%%" % scheme, proc.stdout)
        self.assertEqual(json.loads(self.read(out, "floor.json"))["floor"]["cpu"], 1)
        self.assertEqual(self.read(self.floor + ".args"), "--cpu 1 --seconds 0.2 --json")
        self.assertTrue(json.loads(self.read(out, "fidelity.json"))["valid"])
        self.assertFalse(self.read(out, "compare", "compare.txt").startswith("NOT VALID"))
        # Every flow is unfinished (the fake captures nothing): the table
        # counts them and its p99 is a lower bound.
        flows = len(self.read(self.workload, "flows.csv").splitlines()) - 1
        row = [line for line in proc.stdout.splitlines() if line.startswith("droptail ")][-1]
        unfinished, p99, verdict = row.split()[-3:]
        self.assertEqual((unfinished, verdict), (str(flows), "ok"), row)
        self.assertTrue(p99.startswith(">="), row)

    def test_unfaithful_run_is_refused(self):
        proc, out = self.experiment("bad", unfaithful="droptail")
        self.assertEqual(proc.returncode, fidelity.EXIT_UNFAITHFUL, proc.stderr)
        self.assertIn("experiment: droptail: leaf0/u0: lost 3.62 ms of transmit time exceeds "
                      "1.00 ms", proc.stdout)
        self.assertIn("experiment: droptail: leaf0/u0: link lateness p99 <= 51.2 us exceeds "
                      "25.6 us", proc.stdout)
        self.assertNotIn("experiment: ecn: leaf0", proc.stdout)
        self.assertIn("experiment: NOT VALID: fidelity limits exceeded in droptail", proc.stderr)
        self.assertIn("--allow-unfaithful", proc.stderr)
        # What was measured is written, and marked.
        self.assertTrue(self.read(out, "compare", "compare.txt").startswith(
            "NOT VALID: fidelity limits exceeded\n"))
        self.assertTrue(self.read(out, "droptail", "fct", "summary.txt").startswith("NOT VALID"))
        self.assertFalse(self.read(out, "ecn", "fct", "summary.txt").startswith("NOT VALID"))
        rec = json.loads(self.read(out, "fidelity.json"))
        self.assertEqual((rec["valid"], len(rec["runs"]["droptail"]["violations"])), (False, 2))
        self.assertRegex(proc.stdout, r"\ndroptail .* NOT VALID\n")

    def test_override_presents_marked_results(self):
        proc, out = self.experiment("allowed", "--allow-unfaithful", unfaithful="ecn")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("experiment: WARNING: fidelity limits exceeded in ecn", proc.stderr)
        self.assertTrue(self.read(out, "compare", "compare.txt").startswith(
            "NOT VALID: fidelity limits exceeded\n"))

    def test_clock_reaches_every_scheme_config(self):
        _, out = self.experiment("exact")
        for scheme in ("droptail", "ecn"):
            self.assertIn("clock:\n  mode: exact\n", self.read(out, scheme, "sluice.yaml"))
        _, out = self.experiment("real", "--clock", "real")
        self.assertIn("clock:\n  mode: real\n", self.read(out, "droptail", "sluice.yaml"))

    def test_looser_limits(self):
        proc, _ = self.experiment("loose", "--max-lost-ms", "4", "--max-lateness-us", "51.2",
                                  unfaithful="droptail")
        self.assertEqual(proc.returncode, 0, proc.stderr)


class ClockFigures(unittest.TestCase):
    def test_exact_time_line_beside_the_run(self):
        doc = summary(("s", [port("p", shaper_lost_ns=0)]), duration=1.0)
        doc["clock"] = {"mode": "exact", "fabric_seconds": 0.25, "wall_seconds": 2.0,
                        "transmissions": 3_000_000, "stopped_stuck": 0, "calendar_misses": 0}
        doc["workers"] = [{"lcore": 1, "cpu": 1, "loop_gaps_over_50us": 0}]
        lines = fidelity.format_figures(fidelity.figures(doc))
        self.assertEqual(lines[1], "exact time: 0.250 s of fabric time in 2.00 s wall, "
                                   "1.50 M port transmissions per wall second")
        # No loop gaps to read: exact time has no real-time loop.
        self.assertEqual(len(lines), 2)

    def test_exact_time_stuck_or_missed_is_a_violation(self):
        doc = summary(("s", [port("p", shaper_lost_ns=0)]))
        doc["clock"] = {"mode": "exact", "stopped_stuck": 1, "calendar_misses": 3}
        found = fidelity.violations(doc, fidelity.Limits(1_000_000, 25_600))
        self.assertEqual([v.kind for v in found], ["stuck", "missed"])
        self.assertIn("did not cover its duration", str(found[0]))

    def test_real_time_worker_line(self):
        doc = summary(("s", [port("p", shaper_lost_ns=0)]), duration=1.0)
        doc["clock"] = {"mode": "real", "wall_seconds": 1.25}
        doc["workers"] = [{"lcore": 1, "cpu": 1, "loop_gaps_over_50us": 125}]
        lines = fidelity.format_figures(fidelity.figures(doc))
        # Loop gaps are the machine's: per wall second.
        self.assertIn("gaps >50 us 125 (100.0/s)", lines[1])

    def test_idle_pass_gaps_are_per_idle_second(self):
        doc = summary(("s", [port("p", shaper_lost_ns=0)]), duration=1.0)
        doc["workers"] = [{"lcore": 1, "cpu": 1, "loop_gaps_over_50us": 125,
                           "idle_loop_gaps_over_50us": 40, "idle_loop_seconds": 0.8}]
        line = fidelity.format_figures(fidelity.figures(doc))[1]
        self.assertTrue(line.endswith("idle passes 50.0 gaps/s >50 us"), line)

    def test_real_time_prints_no_clock_line(self):
        doc = summary(("s", [port("p", shaper_lost_ns=0)]))
        doc["clock"] = {"mode": "real", "wall_seconds": 1.0}
        self.assertEqual(len(fidelity.format_figures(fidelity.figures(doc))), 1)

    def test_apply_clock(self):
        a = argparse.Namespace(clock="exact")
        self.assertEqual(fidelity.apply_clock({}, a)["clock"], {"mode": "exact"})
        a.clock = "real"
        self.assertEqual(fidelity.apply_clock({}, a)["clock"], {"mode": "real"})


class ParentToolsGate(unittest.TestCase):
    """tools/experiment --seeds, tools/reproduce bfc-testbed and bfc-sweep
    judge every run (fake sluice and floor program)."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        d = self.tmp.name
        self.sluice = common.write_script(os.path.join(d, "sluice"), common.FAKE_SLUICE)
        self.floor = common.write_script(os.path.join(d, "sluice-floor"), common.FAKE_FLOOR)

    def tearDown(self):
        self.tmp.cleanup()

    def run_tool(self, tool, *args, unfaithful):
        tool = tool.split()
        proc = common.run_tool_status(*tool, "--sluice", self.sluice, "--sluice-floor",
                                      self.floor, "--floor-seconds", "0.1", *args,
                                      env=dict(os.environ, FAKE_UNFAITHFUL=unfaithful))
        self.assertNotIn("Traceback", proc.stdout + proc.stderr)
        return proc

    SEEDS_ARGS = ("--config", os.path.join(common.ROOT, "conf", "leafspine.yaml"), "--cdf",
                  os.path.join(common.CONF, "websearch.cdf"), "--load", "0.3",
                  "--duration", "0.003")

    def test_experiment_seeds_refuses_an_unfaithful_seed(self):
        out = os.path.join(self.tmp.name, "incast")
        proc = self.run_tool("experiment", "--out", out, "--seeds", "1,2", "--schemes",
                             "droptail,pfc", *self.SEEDS_ARGS, "--clock", "real",
                             unfaithful="pfc")
        self.assertEqual(proc.returncode, fidelity.EXIT_UNFAITHFUL, proc.stderr)
        self.assertIn("experiment: pfc: leaf0/u0: lost 3.62 ms of transmit time exceeds "
                      "1.00 ms", proc.stdout)
        self.assertIn("experiment: NOT VALID: fidelity limits exceeded in pfc", proc.stderr)
        with open(os.path.join(out, "report", "table.md")) as f:
            self.assertTrue(f.read().startswith(
                "NOT VALID: fidelity limits exceeded (seed 1, seed 2)\n"))
        for seed in (1, 2):
            with open(os.path.join(out, "seed%d" % seed, "fidelity.json")) as f:
                self.assertFalse(json.load(f)["valid"])
            with open(os.path.join(out, "seed%d" % seed, "floor.json")) as f:
                self.assertEqual(json.load(f)["floor"]["cpu"], 1)

    def test_experiment_seeds_pass_the_clock_on(self):
        out = os.path.join(self.tmp.name, "incast-real")
        proc = self.run_tool("experiment", "--out", out, "--seeds", "1", "--schemes", "droptail",
                             *self.SEEDS_ARGS, "--clock", "real", unfaithful="")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        with open(os.path.join(out, "seed1", "droptail", "sluice.yaml")) as f:
            self.assertIn("clock:\n  mode: real\n", f.read())

    def test_bfc_testbed_override(self):
        out = os.path.join(self.tmp.name, "tb")
        proc = self.run_tool("reproduce bfc-testbed", "--out", out, "--duration", "5ms",
                             "--allow-unfaithful", unfaithful="bfc-single")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("reproduce bfc-testbed: bfc-single: s1/u: link lateness p99 <= 51.2 us "
                      "exceeds 25.6 us", proc.stdout)
        self.assertNotIn("reproduce bfc-testbed: alone: ", proc.stdout)
        self.assertIn("reproduce bfc-testbed: WARNING: fidelity limits exceeded in bfc-single",
                      proc.stderr)
        with open(os.path.join(out, "bfc_testbed.json")) as f:
            res = json.load(f)
        self.assertEqual(res["note"], "NOT VALID: fidelity limits exceeded")
        self.assertEqual(res["fidelity"]["runs"]["bfc"]["violations"], [])
        self.assertTrue(res["schemes"]["bfc"]["group1"]["lower_bound"])

    def test_bfc_sweep_refuses_an_unfaithful_run(self):
        out = os.path.join(self.tmp.name, "sweep")
        # (The sweep's options follow its subcommand.)
        proc = common.run_tool_status(
            "reproduce", "bfc-sweep", "flows", "--sluice", self.sluice, "--sluice-floor", self.floor,
            "--floor-seconds", "0.1", "--out", out, "--flows", "4", "--seeds", "1", "--schemes",
            "bfc-single,bfc", "--size", "20KB", "--lock", "",
            env=dict(os.environ, FAKE_UNFAITHFUL="bfc-single"))
        self.assertNotIn("Traceback", proc.stdout + proc.stderr)
        self.assertEqual(proc.returncode, fidelity.EXIT_UNFAITHFUL, proc.stderr)
        self.assertIn("reproduce bfc-sweep: n04-s1/bfc-single: s1/u: link lateness p99 <= 51.2 us "
                      "exceeds 25.6 us", proc.stdout)
        self.assertIn("reproduce bfc-sweep: NOT VALID: fidelity limits exceeded in "
                      "n04-s1/bfc-single", proc.stderr)
        with open(os.path.join(out, "bfc_sweep_flows.json")) as f:
            res = json.load(f)
        self.assertEqual(res["note"], "NOT VALID: fidelity limits exceeded")
        self.assertEqual(res["fidelity"]["runs"]["n04-s1/bfc"]["violations"], [])
        # The fake delivers nothing: group 1 counted unfinished, a lower bound.
        self.assertTrue(res["table"]["bfc"]["4"]["lower_bound"])
        # The sweep's configuration: every port at the host rate, 16 queues.
        with open(os.path.join(out, "n04-s1", "testbed.yaml")) as f:
            text = f.read()
        self.assertNotIn("2Gbps", text)
        self.assertIn("queues_per_port: 16", text)
        self.assertIn("shaper_burst: 3076B", text)


if __name__ == "__main__":
    unittest.main()
