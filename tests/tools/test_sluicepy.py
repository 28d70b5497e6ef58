#!/usr/bin/python3
"""The library every tool runs on (tools/sluicepy): the one way to start
sluice (command line, file prefix, summary, CPU time and memory from its own
wait4, failures named), the one set of counters, provenance.json, spreads
over seeds, and tools/experiment --seeds writing its report with them; the
transport frames of captures (docs/wire-formats.md). A fake sluice
(tests/tools/common.py) stands in for the emulator."""

import contextlib
import io
import json
import os
import struct
import tempfile
import unittest

import common
from sluicepy import cli, counters, provenance, sluice, spread, transport_frames

LEAFSPINE = os.path.join(common.ROOT, "conf", "leafspine.yaml")

SUMMARY = {
    "clock": {"fabric_seconds": 1.05},
    "switches": [
        {"name": "s1", "ports": [
            {"name": "a", "drops": {"buffer_full": 3, "ttl": 0}, "pfc_frames_sent": 2,
             "pfc_paused_ns": 500_000_000, "ecn_marks": 7, "bfc_pause_sent": 1,
             "bfc_resume_sent": 1, "shaper_lost_ns": 10},
            {"name": "b", "drops": {"buffer_full": 1, "no_route": 2}, "dibs_detours": 5,
             "shaper_lost_ns": 30}]},
        {"name": "s2", "ports": [{"name": "c", "drops": {}, "pfc_paused_ns": 0}]}]}


class Counters(unittest.TestCase):
    def test_sums(self):
        self.assertEqual(counters.drop_reasons(SUMMARY), {"buffer_full": 4, "no_route": 2})
        self.assertEqual(counters.total_drops(SUMMARY), 6)
        self.assertEqual(counters.drops_by_port(SUMMARY),
                         {"s1/a": {"buffer_full": 3}, "s1/b": {"buffer_full": 1, "no_route": 2}})
        self.assertEqual(counters.bfc_frames(SUMMARY), 2)
        self.assertEqual(counters.port(SUMMARY, "s2", "c")["name"], "c")
        self.assertIsNone(counters.port(SUMMARY, "s2", "x"))
        # 0.5 s paused of 3 ports x (1.05 - 0.05) s.
        self.assertAlmostEqual(counters.paused_pct(SUMMARY), 100 * 0.5 / 3.0)
        self.assertEqual(counters.totals(SUMMARY),
                         {"drops": 6, "pfc_frames_sent": 2, "bfc_frames_sent": 2,
                          "ecn_marks": 7, "dibs_detours": 5, "shaper_lost_ns": 30})


class Spread(unittest.TestCase):
    def test_text(self):
        self.assertEqual(spread.text([1.0, 2.0, 6.0]), "3 (1-6)")
        self.assertEqual(spread.text([1.0, 2.0, 6.0], centre="median"), "2 (1-6)")
        self.assertEqual(spread.text([4.0]), "4")
        self.assertEqual(spread.text([None]), "-")
        self.assertEqual(spread.range_text([3, 1]), "1-3")
        s = spread.stats([1, 3])
        self.assertEqual((s["n"], s["mean"], s["min"], s["max"]), (2, 2, 1, 3))
        self.assertAlmostEqual(s["std"], 2 ** 0.5)
        s = spread.stats([1.0, float("inf")])
        self.assertEqual((s["mean"], s["min"], s["max"], s["std"]),
                         (float("inf"), 1.0, float("inf"), float("inf")))
        self.assertEqual(spread.text([1.0, float("inf")], "%.1f"), "inf (1.0-inf)")


class StartSluice(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name
        self.fake = common.write_script(os.path.join(self.dir, "sluice"), common.FAKE_SLUICE)
        with open(os.path.join(self.dir, "sluice.yaml"), "w") as f:
            f.write("switches: [{name: s1, ports: [{name: p0}]}]\n")

    def tearDown(self):
        self.tmp.cleanup()

    def test_run(self):
        run = sluice.run(self.fake, self.dir, 0.25, extra=["--queue-trace", "qt.csv"],
                         prefix="sluicepy-test", echo=False)
        # -m raised to what --check says the configuration needs (600 MiB).
        self.assertEqual(run.cmd[1:5], ["--no-huge", "-m", "600", "--no-pci"])
        self.assertIn("--file-prefix", run.cmd)
        self.assertEqual(run.cmd[run.cmd.index("--file-prefix") + 1], "sluicepy-test")
        self.assertEqual(run.cmd[run.cmd.index("--duration") + 1], "0.250000")
        self.assertEqual(run.rc, 0)
        self.assertEqual(run.summary["duration_seconds"], 0.25)
        self.assertGreater(run.cpu_s, 0)
        self.assertGreater(run.rss_mb, 1)
        self.assertTrue(os.path.exists(os.path.join(self.dir, "qt.csv")))
        self.assertEqual(set(run.record()), {"wall_s", "cpu_s", "rss_mb"})

    def test_peak_memory_is_sluices_own(self):
        # Where the summary reports the process's own peak it is taken, not
        # wait4's, which also counts this test's memory at the fork.
        os.environ["FAKE_SLUICE_RSS_BYTES"] = str(123 * 1048576)
        try:
            run = sluice.run(self.fake, self.dir, 0.25, prefix="sluicepy-test", echo=False)
        finally:
            del os.environ["FAKE_SLUICE_RSS_BYTES"]
        self.assertEqual(run.rss_mb, 123.0)
        ballast = bytearray(300 * 1048576)  # this process now holds 300 MB more
        ballast[::4096] = b"\1" * len(ballast[::4096])
        forked = sluice.run(self.fake, self.dir, 0.25, prefix="sluicepy-test", echo=False)
        self.assertGreater(forked.rss_mb, 300)  # wait4's ru_maxrss: the parent's at the fork
        del ballast

    def test_given_eal_keeps_its_options(self):
        run = sluice.run(self.fake, self.dir, 0.1, eal="--no-huge -m 2048 --no-pci -l 0,1",
                         echo=False)
        self.assertEqual(run.cmd[1:7], ["--no-huge", "-m", "2048", "--no-pci", "-l", "0,1"])

    def test_workers_default_in_fabric_time_only(self):
        # SLUICE_WORKERS (tools/reproduce --workers) gives a run without EAL
        # options that many worker lcores, in fabric time only.
        os.environ[sluice.WORKERS_ENV] = "3"
        try:
            run = sluice.run(self.fake, self.dir, 0.1, echo=False)
            self.assertIn("-l", run.cmd)  # real time: the configuration has no clock section
            self.assertNotIn("--lcores", run.cmd)
            # Both YAML styles: the tools' dumps write a block, tools/fabric a flow.
            for clock in ("clock:\n  mode: exact\n", "clock: {mode: exact}\n"):
                with open(os.path.join(self.dir, "sluice.yaml"), "w") as f:
                    f.write(clock + "switches: [{name: s1, ports: [{name: p0}]}]\n")
                run = sluice.run(self.fake, self.dir, 0.1, echo=False)
                lcores = run.cmd[run.cmd.index("--lcores") + 1]
                self.assertEqual(len(lcores.split(",")), 4, lcores)  # the main lcore and 3 workers
            os.environ[sluice.WORKERS_ENV] = "two"
            with self.assertRaisesRegex(cli.ToolError, "SLUICE_WORKERS"):
                sluice.run(self.fake, self.dir, 0.1, echo=False)
        finally:
            del os.environ[sluice.WORKERS_ENV]

    def test_expected_runs_say_which(self):
        sluice.expect_runs(2)
        try:
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                sluice.run(self.fake, self.dir, 0.1, echo=False)
                sluice.run(self.fake, self.dir, 0.1, echo=False)
            self.assertEqual(out.getvalue().splitlines(),
                             [f"sluice: run 1 of 2: {self.dir}", f"sluice: run 2 of 2: {self.dir}"])
        finally:
            sluice.expect_runs(None)

    def test_failure_names_the_log(self):
        os.environ["FAKE_SLUICE_EXIT"] = "7"
        try:
            with self.assertRaisesRegex(cli.ToolError, r"sluice failed \(exit 7\); see .*sluice.log"):
                sluice.run(self.fake, self.dir, 0.1, echo=False)
        finally:
            del os.environ["FAKE_SLUICE_EXIT"]

    def test_timeout_interrupts(self):
        started = os.path.join(self.dir, "started")
        env = {"FAKE_SLUICE_SLEEP": "30", "FAKE_SLUICE_STARTED": started}
        os.environ.update(env)
        try:
            run = sluice.run(self.fake, self.dir, 0.1, timeout=1.0, check=False, echo=False)
        finally:
            for k in env:
                del os.environ[k]
        self.assertEqual(run.rc, 130)  # the fake's answer to SIGINT
        self.assertLess(run.wall_s, 20)


class Provenance(unittest.TestCase):
    def test_record(self):
        with tempfile.TemporaryDirectory() as d:
            os.makedirs(os.path.join(d, "droptail"))
            with open(os.path.join(d, "droptail", "sluice.yaml"), "w") as f:
                f.write("switches: []\n")
            path = provenance.write(d, argv=["tools/x", "--seed", "3"], seeds=[3],
                                    configs=[LEAFSPINE], binaries=["/bin/true", "/nonexistent"])
            with open(path) as f:
                doc = json.load(f)
        self.assertEqual(doc["command"]["argv"], ["tools/x", "--seed", "3"])
        self.assertEqual(doc["seeds"], [3])
        self.assertRegex(doc["git"]["commit"], r"^[0-9a-f]{40}$")
        self.assertIn(doc["git"]["dirty"], (True, False))
        self.assertEqual(doc["configs"]["conf/leafspine.yaml"], provenance.sha256(LEAFSPINE))
        self.assertEqual(len(doc["configs"]["droptail/sluice.yaml"]), 64)
        self.assertEqual(doc["binaries"][0]["path"], "/bin/true")
        self.assertEqual(len(doc["binaries"][0]["sha256"]), 64)
        self.assertTrue(doc["binaries"][1]["missing"])
        for k in ("hostname", "cpu_model", "cores", "memory_bytes", "kernel"):
            self.assertTrue(doc["machine"][k], k)
        self.assertRegex(doc["date"], r"^\d{4}-\d\d-\d\dT")


class ExperimentSeeds(unittest.TestCase):
    """tools/experiment --seeds: one experiment per seed, then a report of
    medians with their min-max, and provenance.json."""

    def test_report(self):
        with tempfile.TemporaryDirectory() as d:
            fake = common.write_script(os.path.join(d, "sluice"), common.FAKE_SLUICE)
            out = os.path.join(d, "out")
            proc = common.run_tool_status(
                "experiment", "--config", LEAFSPINE, "--schemes", "droptail,pfc",
                "--cdf", os.path.join(common.CONF, "websearch.cdf"), "--load", "0.3",
                "--duration", "3ms", "--seeds", "4,5", "--queue-trace", "",
                "--floor-seconds", "0", "--sluice", fake, "--out", out)
            self.assertEqual(proc.returncode, 0, proc.stdout[-3000:] + proc.stderr)
            for seed in (4, 5):
                for scheme in ("droptail", "pfc"):
                    self.assertTrue(os.path.exists(os.path.join(
                        out, "seed%d" % seed, scheme, "fct", "fct.csv")))
                with open(os.path.join(out, "seed%d" % seed, "workload", "workload.json")) as f:
                    self.assertEqual(json.load(f)["seed"], seed)
            with open(os.path.join(out, "report", "table.md")) as f:
                text = f.read()
            self.assertIn("Median over seeds 4,5", text)
            self.assertIn("| droptail | 0 | - |", text)
            self.assertIn("leaf0 peak", text)
            with open(os.path.join(out, "report", "results.json")) as f:
                res = json.load(f)
            self.assertEqual(res["seeds"], [4, 5])
            self.assertEqual(res["spread"]["pfc"]["peak_buffer_kb"]["leaf0"]["max"], 1.0)
            for name in ("slowdown.png", "buffer.png"):
                self.assertTrue(os.path.exists(os.path.join(out, "report", name)), name)
            with open(os.path.join(out, "provenance.json")) as f:
                prov = json.load(f)
            self.assertEqual(prov["seeds"], [4, 5])
            self.assertIn("conf/leafspine.yaml", prov["configs"])
            self.assertIn("seed4/pfc/sluice.yaml", prov["configs"])

    def test_seeds_refuse_a_given_workload(self):
        proc = common.run_tool_status("experiment", "--config", LEAFSPINE, "--workload", "w",
                                      "--seeds", "1,2", "--out", "o")
        self.assertEqual(proc.returncode, 2)
        self.assertIn("--seeds", proc.stderr)


def slt_frame(kind, flags, options=b"", hops=0, tail=b"", seq=3000, nbytes=0):
    """Ethernet / IPv4 / UDP to 9001 / SLT1 (flow 9) with the given options."""
    slt = struct.pack("!4sBBBBIIIQ", b"SLT1", kind, flags, hops, 0, 9, seq, nbytes, 5)
    body = slt + options + tail
    udp = struct.pack("!HHHH", 9001, 49161, 8 + len(body), 0) + body
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 2, 20 + len(udp), 0, 0x4000, 64, 17, 0,
                     bytes([10, 0, 0, 2]), bytes([10, 0, 1, 2]))
    return bytes(12) + b"\x08\x00" + ip + udp


class TransportFrames(unittest.TestCase):
    def test_rank_sack_and_int_records(self):
        plain = transport_frames.parse(slt_frame(2, 0))
        self.assertEqual(plain, ("ack", 9, 3000, 0, 2, [], None, None))
        ranked = transport_frames.parse(slt_frame(2, 8 | 16, struct.pack("!III", 0, 4000, 5000)))
        self.assertEqual(ranked[6], 0)
        self.assertEqual(ranked[7], (4000, 5000))
        rec = struct.pack("!IIII", 1, 2, 3, 4)
        data = transport_frames.parse(slt_frame(1, 8 | 4, struct.pack("!I", 1234), hops=1,
                                                tail=rec + bytes(64) + bytes(10), nbytes=10))
        self.assertEqual(data[0], "data")
        self.assertEqual(data[5], [(1, 2, 3, 4)])  # the record after the rank
        self.assertEqual(data[6], 1234)
        self.assertIsNone(data[7])

    def test_refuses_unknown_flags_and_short_options(self):
        self.assertIsNone(transport_frames.parse(slt_frame(1, 32)))
        self.assertIsNone(transport_frames.parse(slt_frame(2, 16, struct.pack("!I", 1))))
        self.assertIsNone(transport_frames.parse(slt_frame(1, 8)))  # rank missing


if __name__ == "__main__":
    unittest.main()
