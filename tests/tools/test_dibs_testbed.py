#!/usr/bin/python3
"""tools/dibs-testbed's parts that need no network namespaces, the tool
imported as a module: the 5-switch configuration it writes per scheme
(accepted by sluice --check; hosts placed and routed as documented; the
shared buffer holds exactly 100 full-size frames in one congested queue
under the dynamic threshold rule of docs/traffic-manager.md), the QCT
statistics and the timeout inference on synthetic client results, and the
report (table.md, results.json, NOT VALID marking and exit 3 when the
fidelity gate says so) with the testbed and each scheme's run replaced by
stand-ins. No namespaces are made and no traffic runs."""

import contextlib
import io
import json
import os
import subprocess
import tempfile
import unittest
from unittest import mock

import yaml

import common

SLUICE = os.environ.get("SLUICE_BINARY", os.path.join(common.ROOT, "build", "switch", "sluice"))


dt = common.load_tool("dibs-testbed")
NETNS = dt.load_netns()


def admitted_frames(buffer_bytes, alpha, frame):
    """Frames of `frame` bytes one queue takes, alone in the switch's shared
    buffer: a packet of b bytes enters a queue of q bytes while
    q + b <= alpha * (B - used), used = q (docs/traffic-manager.md)."""
    q = 0
    while q + frame <= alpha * (buffer_bytes - q):
        q += frame
    return q // frame


class Config(unittest.TestCase):
    def args(self, *extra):
        return dt.parse_args(["--out", "/nonexistent"] + list(extra))

    def conf(self, scheme, workers=5, *extra):
        text = dt.sluice_config(scheme, workers + 1, self.args(*extra), NETNS)
        return text, yaml.safe_load(text)

    def check(self, text, name, tmp):
        path = os.path.join(tmp, name + ".yaml")
        with open(path, "w") as f:
            f.write(text)
        proc = subprocess.run(
            [SLUICE, "--no-huge", "-m", "512", "--no-pci", "-l", "0",
             "--file-prefix", "tools-dibs-testbed-%d" % os.getpid(), "--",
             "--config", path, "--check"], capture_output=True, text=True, timeout=60)
        return proc.returncode, proc.stdout + proc.stderr

    def test_sluice_accepts_every_scheme(self):
        self.assertTrue(os.access(SLUICE, os.X_OK), "no sluice binary at " + SLUICE)
        with tempfile.TemporaryDirectory() as tmp:
            for scheme in dt.SCHEMES:
                for workers in (1, 5, 8):
                    text, _ = self.conf(scheme, workers)
                    rc, out = self.check(text, "%s-%d" % (scheme, workers), tmp)
                    self.assertEqual(rc, 0, "%s, %d workers: %s" % (scheme, workers, out))
                    self.assertIn("config OK: 5 switches, %d ports" % (workers + 1 + 6 + 6), out)
            # --check does judge: a link to a port that does not exist fails.
            text, _ = self.conf("dibs")
            rc, out = self.check(text.replace("link: a1/d2", "link: a1/d7"), "broken", tmp)
            self.assertNotEqual(rc, 0, out)

    def test_topology(self):
        _, c = self.conf("droptail", 8)
        sw = {s["name"]: s for s in c["switches"]}
        self.assertEqual(list(sw), ["e0", "e1", "e2", "a0", "a1"])
        # Aggregator h0 under e0, worker i under edge i mod 3.
        self.assertEqual([p["name"] for p in sw["e0"]["ports"] if p["role"] == "host"],
                         ["h0", "h3", "h6"])
        self.assertEqual([p["name"] for p in sw["e1"]["ports"] if p["role"] == "host"],
                         ["h1", "h4", "h7"])
        self.assertEqual([p["name"] for p in sw["e2"]["ports"] if p["role"] == "host"],
                         ["h2", "h5", "h8"])
        h4 = next(p for p in sw["e1"]["ports"] if p["name"] == "h4")
        self.assertEqual((h4["ipv4"], h4["peer_ip"], h4["rate"]),
                         ("10.0.4.1/24", "10.0.4.2", "1Gbps"))
        self.assertTrue(h4["device"].startswith("net_af_packet4,iface=dbtv4,"), h4["device"])
        self.assertIn("framecnt=1024", h4["device"])
        for e in range(3):
            ups = {p["name"]: p["link"] for p in sw["e%d" % e]["ports"] if "link" in p}
            self.assertEqual(ups, {"u0": "a0/d%d" % e, "u1": "a1/d%d" % e})
            routes = {r["prefix"]: r["ports"] for r in sw["e%d" % e]["routes"]}
            self.assertEqual(len(routes), 9 - 3)  # every host not under this edge
            self.assertTrue(all(p == ["u0", "u1"] for p in routes.values()))
        for g in range(2):
            routes = {r["prefix"]: r["ports"] for r in sw["a%d" % g]["routes"]}
            self.assertEqual(routes["10.0.7.0/24"], ["d1"])
            self.assertEqual(routes["10.0.0.0/24"], ["d0"])
            self.assertEqual(len(routes), 9)

    def test_buffers_and_schemes(self):
        for scheme in dt.SCHEMES:
            _, c = self.conf(scheme)
            for s in c["switches"]:
                self.assertEqual(s["queues_per_port"], 1)
                self.assertEqual(s["ecn"], {"mode": "step", "k": "%dB" % (20 * 1514)})
                self.assertEqual("dibs" in s, scheme == "dibs", scheme)
        _, c = self.conf("droptail")
        s = c["switches"][0]
        self.assertEqual(s["buffer"], {"size": "302800B", "alpha": 1.0})
        self.assertEqual(s["queue_capacity"], 128)  # above 100: the bytes bind
        self.assertEqual(c["mbufs"], 32768)
        size = int(s["buffer"]["size"][:-1])
        # One congested queue holds exactly 100 frames of 1514 B, not 101.
        self.assertEqual(admitted_frames(size, s["buffer"]["alpha"], 1514), 100)
        # (the helper does count: twice the buffer of 101 frames holds 101)
        self.assertEqual(admitted_frames(2 * 101 * 1514, 1.0, 1514), 101)
        _, c = self.conf("dibs", 5, "--policy", "load_aware", "--max-detours", "3")
        self.assertEqual(c["switches"][3]["dibs"],
                         {"enabled": True, "policy": "load_aware", "max_detours": 3})
        _, c = self.conf("unlimited")
        s = c["switches"][0]
        self.assertEqual((s["buffer"]["size"], s["queue_capacity"], c["mbufs"]),
                         ("256MB", 65536, 131072))
        _, c = self.conf("droptail", 5, "--rate", "10Gbps", "--link-delay", "7us")
        link = c["switches"][4]["ports"][0]
        self.assertEqual((link["rate"], link["delay"]), ("10Gbps", "7us"))


def run(qct_ms, flows=None, summary=None, tcp=None):
    q = [None if x is None else int(x * 1e6) for x in qct_ms]
    return {"client": {"qct_ns": q, "flow_ns": flows if flows is not None else [[x] for x in q],
                       "unfinished_flows": [0] * len(q), "reconnects": 0,
                       "flows_per_query": 1},
            "summary": summary or {"switches": []},
            "tcp": tcp or {"TCPTimeouts": 0, "TCPLossProbes": 0},
            "wall_seconds": 1.5, "violations": 0}


DIBS_SUMMARY = {"switches": [
    {"name": "e0", "ports": [{"name": "h0", "drops": {"queue_full": 2, "buffer_full": 1}},
                             {"name": "u0", "drops": {}}],
     "dibs": {"detours": 40, "detours_per_packet": {"le_0": 90, "le_1": 6, "le_3": 4}}},
    {"name": "a0", "ports": [{"name": "d0", "drops": {"queue_full": 3}}],
     "dibs": {"detours": 2, "detours_per_packet": {"le_0": 0}}}]}


class Statistics(unittest.TestCase):
    def test_pct_nearest_rank(self):
        vals = list(range(1, 101))
        self.assertEqual(dt.pct(vals, 50), 50)
        self.assertEqual(dt.pct(vals, 99), 99)
        self.assertEqual(dt.pct(vals, 100), 100)
        self.assertEqual(dt.pct(vals, 0), 1)
        self.assertEqual(dt.pct([3, 5, None], 90), None)  # unfinished sorts last
        self.assertEqual(dt.pct([3, 5, None], 50), 5)
        self.assertIsNone(dt.pct([], 50))

    def test_parse_ms(self):
        self.assertEqual(dt.parse_ms("10ms"), 10.0)
        self.assertEqual(dt.parse_ms("200us"), 0.2)
        self.assertEqual(dt.parse_ms("1s"), 1000.0)
        self.assertEqual(dt.parse_ms("0.01"), 10.0)

    def test_qct_and_timeout_inference(self):
        a = dt.parse_args(["--out", "/nonexistent"])  # rto_min 10ms
        runs = {"droptail": run([20, 5, 16.5, None, 13.9, 15.1] + [6] * 4),
                "unlimited": run([9, 4, 5, 4.5]),
                "dibs": run([4.2, 14.1, 13.9], summary=DIBS_SUMMARY,
                            tcp={"TCPTimeouts": 3, "TCPLossProbes": 1})}
        st = dt.analyse(runs, a)
        d = st["droptail"]
        self.assertEqual((d["queries"], d["unfinished"]), (10, 1))
        self.assertEqual(d["qct_min_ms"], 5.0)
        self.assertEqual(d["qct_ms"][0], 5.0)
        self.assertEqual(d["qct_ms"][50], 6.0)
        self.assertEqual(d["qct_ms"][90], 20.0)
        self.assertIsNone(d["qct_ms"][99])   # the unfinished query is the slowest
        self.assertIsNone(d["qct_ms"][100])
        # ideal = the fastest unlimited query (4 ms); over 14 ms waited for an
        # RTO: 20, 16.5, 15.1 and the unfinished one, not 13.9.
        self.assertEqual(d["queries_over_ideal_plus_rto"], 4)
        self.assertEqual((d["flows"], d["flows_unfinished"]), (10, 1))
        self.assertEqual(st["unlimited"]["queries_over_ideal_plus_rto"], 0)
        self.assertEqual(st["unlimited"]["qct_ms"][100], 9.0)
        x = st["dibs"]
        self.assertEqual(x["queries_over_ideal_plus_rto"], 1)
        self.assertEqual(x["tcp"]["TCPTimeouts"], 3)
        sw = x["switches"]
        self.assertEqual(sw["drops"], 6)
        self.assertEqual(sw["drops_by_reason"], {"queue_full": 5, "buffer_full": 1})
        self.assertEqual(sw["detours"], 42)
        self.assertEqual((sw["packets_to_hosts_counted"], sw["packets_detoured"]), (100, 10))
        self.assertAlmostEqual(sw["fraction_detoured"], 0.1)
        self.assertIsNone(st["droptail"]["switches"]["fraction_detoured"])

    def test_timeout_floor_without_unlimited(self):
        # No unlimited run: the scheme's own fastest query is the floor.
        a = dt.parse_args(["--out", "/nonexistent", "--rto-min", "5ms"])
        st = dt.analyse({"droptail": run([3, 7.9, 8.1, None])}, a)
        self.assertEqual(st["droptail"]["queries_over_ideal_plus_rto"], 2)


class FakeTestbed:
    """Testbed's interface, doing nothing (no namespaces, no processes)."""

    def __init__(self, a, netns_mod):
        self.a, self.nm, self.file_prefix = a, netns_mod, "fake"
        self.torn_down = False

    def up(self, n_hosts):
        self.n_hosts = n_hosts

    def ns(self, h):
        return "fakeh%d" % h

    def start(self, cmd, out, err=None):
        with open(out, "w") as f:
            f.write("ready\n")
        return mock.Mock(poll=lambda: None)

    def teardown(self):
        self.torn_down = True


def fidelity_summary(bad):
    port = {"name": "u0", "drops": {}, "shaper_lost_ns": 3620000 if bad else 200000,
            "shaper_lateness_p99_ns": 3200, "shaper_lateness_samples": 100,
            "link_lateness_p99_ns": 6400, "link_lateness_samples": 50}
    return {"duration_seconds": 10.0, "switches": [{"name": "e0", "ports": [port]}]}


class Report(unittest.TestCase):
    def main(self, out, unfaithful=(), *extra):
        """dt.main with the testbed and run_scheme replaced; (status, stdout,
        stderr, results.json, table.md)."""
        qcts = {"droptail": [5, 18, None], "dibs": [5, 6, 7], "unlimited": [4, 5, 5]}

        def fake_run_scheme(tb, scheme, n_hosts, a, gate, server_log):
            os.makedirs(os.path.join(a.out, scheme), exist_ok=True)
            r = run(qcts[scheme], summary=fidelity_summary(scheme in unfaithful),
                    tcp={"TCPTimeouts": 2, "TCPLossProbes": 1})
            r["violations"] = len(gate.check(scheme, r["summary"]))
            return r

        stdout, stderr = io.StringIO(), io.StringIO()
        with mock.patch.object(dt, "Testbed", FakeTestbed), \
                mock.patch.object(dt, "run_scheme", fake_run_scheme), \
                mock.patch.object(dt.os, "geteuid", return_value=0), \
                contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            rc = dt.main(["--out", out, "--workers", "3", "--queries", "3",
                          "--floor-seconds", "0", "--sluice", SLUICE] + list(extra))
        with open(os.path.join(out, "report", "results.json")) as f:
            res = json.load(f)
        with open(os.path.join(out, "report", "table.md")) as f:
            table = f.read()
        return rc, stdout.getvalue(), stderr.getvalue(), res, table

    def test_valid_report(self):
        with tempfile.TemporaryDirectory() as out:
            rc, stdout, _, res, table = self.main(out)
            self.assertGreater(os.path.getsize(os.path.join(out, "report", "qct_cdf.png")), 0)
            for s in dt.SCHEMES:
                with open(os.path.join(out, s, "raw.json")) as f:
                    self.assertEqual(len(json.load(f)["client"]["qct_ns"]), 3)
        self.assertEqual(rc, 0)
        self.assertNotIn("NOT VALID", table)
        self.assertTrue(table.startswith("# DIBS closed-loop testbed: 3 workers x 1 "
                                         "connection(s) x 32768 B responses, 3 queries"), table)
        self.assertIn("| droptail | 5.0 | 18.0 | unfinished | unfinished | unfinished | "
                      "26–51 (range) | 1/3 | 2 | 2 | 1 | 0 | – | – |", table)
        self.assertIn("| dibs | 5.0 | 6.0 | 7.0 | 7.0 | 7.0 | all ≤ 27 | 0/3 | 0 |", table)
        self.assertIn("Fidelity: held in every run.", table)
        self.assertEqual(res["hosts"], 4)
        self.assertEqual(set(res["schemes"]), set(dt.SCHEMES))
        self.assertEqual(res["schemes"]["droptail"]["unfinished"], 1)
        self.assertEqual(res["schemes"]["droptail"]["queries_over_ideal_plus_rto"], 2)
        self.assertTrue(res["fidelity"]["valid"])
        self.assertIsNone(res["note"])
        self.assertIn("fidelity limits held in every run", stdout)

    def test_not_valid_report(self):
        with tempfile.TemporaryDirectory() as out:
            rc, _, stderr, res, table = self.main(out, ("dibs",))
        self.assertEqual(rc, 3)
        self.assertTrue(table.startswith("NOT VALID: fidelity limits exceeded\n"), table[:200])
        self.assertIn("Fidelity: limits exceeded in dibs.", table)
        self.assertFalse(res["fidelity"]["valid"])
        self.assertEqual(res["note"], "NOT VALID: fidelity limits exceeded")
        self.assertEqual(res["fidelity"]["runs"]["droptail"]["violations"], [])
        self.assertTrue(res["fidelity"]["runs"]["dibs"]["violations"])
        self.assertIn("NOT VALID", stderr)
        # --allow-unfaithful: exit 0, still marked.
        with tempfile.TemporaryDirectory() as out:
            rc, _, _, res, table = self.main(out, ("droptail", "unlimited"),
                                             "--allow-unfaithful")
        self.assertEqual(rc, 0)
        self.assertTrue(table.startswith("NOT VALID"))
        self.assertIn("limits exceeded in droptail, unlimited", table)
        self.assertTrue(res["fidelity"]["allow_unfaithful"])

    def test_needs_root(self):
        with tempfile.TemporaryDirectory() as out, \
                mock.patch.object(dt.os, "geteuid", return_value=1000):
            with self.assertRaisesRegex(dt.ToolError, "must run as root"):
                dt.main(["--out", out])


if __name__ == "__main__":
    unittest.main()
