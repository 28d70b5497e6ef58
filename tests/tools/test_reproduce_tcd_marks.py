#!/usr/bin/python3
"""tools/reproduce tcd-marks against a fake sluice written here (common.py's fake
writes neither host-facing frames nor a tcd_state column): the fake forwards
every frame of the senders' captures to r0 (victims) or r1 (burst), setting
the ECN field of the first frames of each class as FAKE_MARKS says, writes a
summary JSON with PFC and TCD counters at s/l2 and l2/r1 and a queue trace
of fixed rows (tcd_state filled for tcd schemes). Checked: the CE / UE /
unmarked counts per flow class, the state intervals taken from the trace,
the table and results.json, and the exit codes: 0 when the scheme's rules
hold, 4 with FAIL when one does not (a victim frame CE under tcd+pfc, a
frame missing, no PFC pause, victims unmarked under ecn+pfc), 1 when sluice
fails. One real run of tcd+pfc (shortened) against build/switch/sluice."""

import json
import os
import shutil
import subprocess
import tempfile
import time
import unittest

import common

SLUICE = os.environ.get("SLUICE_BINARY", os.path.join(common.ROOT, "build", "switch", "sluice"))
TOOL = os.path.join(common.TOOLS, "reproduce")

# Small runs: 4 victims x int(1 ms / 8074 ns) = 4 x 123 frames, 8 x 10 burst.
VICTIM_FRAMES = 4 * 123
BURST_FRAMES = 8 * 10
ARGS = ["--victim-seconds", "0.001", "--burst-frames", "10", "--burst-start", "0.0005",
        "--duration", "0.002"]

FAKE = r'''#!/usr/bin/python3
import json, os, struct, sys
import yaml
app = sys.argv[sys.argv.index("--") + 1:]
opt = lambda name: app[app.index(name) + 1]
if "--check" in app:  # what the tools ask before a run: the memory it needs
    print("DPDK memory: about 600 MiB")
    sys.exit(0)
if os.environ.get("FAKE_SLUICE_EXIT"):
    print("sluice: fake failure", file=sys.stderr)
    sys.exit(int(os.environ["FAKE_SLUICE_EXIT"]))
cfg = opt("--config")
scheme = os.path.basename(cfg)[:-len(".yaml")]
with open(cfg) as f:
    conf = yaml.safe_load(f)

def read(path):
    with open(path, "rb") as f:
        data = f.read()
    out, pos = [], 24
    while pos < len(data):
        sec, nsec, incl, _ = struct.unpack_from("<IIII", data, pos)
        out.append((sec * 10**9 + nsec, bytearray(data[pos + 16:pos + 16 + incl])))
        pos += 16 + incl
    return out

def write(path, recs):
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, 65535, 1))
        for ts, fr in recs:
            f.write(struct.pack("<IIII", ts // 10**9, ts % 10**9, len(fr), len(fr)))
            f.write(fr)

# FAKE_MARKS: {"victim": [["ue", 5], ["ce", 1]], ...}: the first 5 victim
# frames (in time order) leave UE, the next CE, the rest as sent; -1 = all.
marks = json.loads(os.environ.get("FAKE_MARKS", "{}"))
code = {"ce": 3, "ue": 1, "ect0": 2, "not_ect": 0}
frames = []
tx = {}
for sw in conf["switches"]:
    for p in sw["ports"]:
        pc = p.get("pcap") or {}
        if "rx" in pc:
            frames += read(pc["rx"])
        if "tx" in pc:
            tx[p["name"]] = pc["tx"]
frames.sort(key=lambda r: r[0])
out = {"r0": [], "r1": []}
seen = {"victim": 0, "burst": 0}
drop = {"victim": int(os.environ.get("FAKE_DROP_VICTIM", "0")), "burst": 0}
for ts, fr in frames:
    cls = "victim" if fr[27] == 0 else "burst"   # source 10.0.x / 10.1.x
    k = seen[cls]
    seen[cls] += 1
    if k < drop[cls]:
        continue
    n = 0
    for what, count in marks.get(cls, []):
        if count < 0 or k < n + count:
            fr[15] = (fr[15] & 0xFC) | code[what]
            break
        n += count
    out["r0" if fr[32] == 0 else "r1"].append((ts + 10000, fr))
# A PFC frame toward r0: not IPv4, the tool must skip it.
out["r0"].insert(0, (out["r0"][0][0] - 1, bytearray(b"\x01\x80\xc2\x00\x00\x01" + bytes(6)
                                                   + b"\x88\x08" + bytes(46))))
for name, recs in out.items():
    write(tx[name], recs)

tcd = scheme.startswith("tcd")
pfc = scheme.endswith("+pfc")
def counters(sw, port):
    c = {"name": port, "drops": {}, "ecn_marks": 0}
    if (sw, port) == ("s", "l2") and pfc and not os.environ.get("FAKE_NO_PAUSE"):
        c.update(pfc_frames_received=12, pfc_paused_ns=1500000)
    if tcd and (sw, port) in (("s", "l2"), ("l2", "r1")):
        base = 1 if port == "l2" else 10
        c.update({k: base * (i + 1) for i, k in enumerate((
            "tcd_pauses", "tcd_ce_marks", "tcd_ue_marks", "tcd_non_congestion_ns",
            "tcd_congestion_ns", "tcd_undetermined_ns", "tcd_on_periods",
            "tcd_on_period_p50_ns", "tcd_on_period_p99_ns", "tcd_max_t_on_ns",
            "tcd_undetermined_to_congestion", "tcd_non_congestion_to_undetermined",
            "tcd_congestion_to_undetermined", "tcd_undetermined_to_non_congestion"))})
        c["tcd_undetermined_ns"] = 2000000 if port == "l2" else 0
    if os.environ.get("FAKE_DROP_AT") == "%s/%s" % (sw, port):
        c["drops"] = {"queue_full": 3}
    return c
summary = {"duration_seconds": float(opt("--duration")),
           "switches": [{"name": sw["name"], "ports": [counters(sw["name"], p["name"])
                                                      for p in sw["ports"]]}
                        for sw in conf["switches"]]}
with open(opt("--summary-json"), "w") as f:
    json.dump(summary, f)

# Trace rows (ms after the first frame, bytes, paused, TCD state) per traced
# (switch, port, queue); queue 1 of s/l2 is paused but never holds a byte.
T0 = 1700000000
rows = {("s", "l2", 0): [(0, 0, 0, "non_congestion"), (1, 1000, 0, "non_congestion"),
                         (2, 30000, 1, "undetermined"), (3, 40000, 1, "undetermined"),
                         (4, 0, 0, "non_congestion")],
        ("s", "l2", 1): [(2, 0, 1, "non_congestion"), (3, 0, 1, "non_congestion")],
        ("l2", "r1", 0): [(1, 0, 0, "non_congestion"), (2, 50000, 0, "congestion"),
                          (3, 60000, 0, "congestion"), (4, 0, 0, "non_congestion")],
        ("l0", "s", 0): [(1, 1514, 0, "non_congestion"), (2, 1514, 0, "non_congestion")],
        ("l2", "r0", 0): [(1, 0, 0, "non_congestion"), (2, 0, 0, "non_congestion")]}
assert opt("--queue-trace-ports") == "s/l2,l2/r1,l0/s,l2/r0", opt("--queue-trace-ports")
with open(opt("--queue-trace"), "w") as f:
    f.write("time_seconds,switch,port,queue,bytes,threshold_bytes,paused,tcd_state\n")
    f.write("%.6f,s,,buffer,1000,0,0,\n" % T0)
    for (sw, port, q), rs in rows.items():
        for ms, b, paused, st in rs:
            t = "%.6f" % (T0 + ms / 1000)
            f.write("%s,%s,%s,port,%d,15625,%d,\n" % (t, sw, port, b, paused))
            f.write("%s,%s,%s,%d,%d,15625,%d,%s\n" % (t, sw, port, q, b, paused,
                                                      st if tcd else ""))
'''


class TcdVictimFake(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="tcd-victim-test-")
        cls.sluice = common.write_script(os.path.join(cls.tmp, "sluice"), FAKE)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def run_tool(self, name, schemes, marks=None, **env):
        out = os.path.join(self.tmp, name)
        old = dict(os.environ)
        os.environ.update(env)
        if marks is not None:
            os.environ["FAKE_MARKS"] = json.dumps(marks)
        try:
            proc = common.run_tool_status("reproduce", "tcd-marks", "--out", out,
                                          "--sluice", self.sluice, "--schemes", schemes, *ARGS,
                                          timeout=120)
        finally:
            os.environ.clear()
            os.environ.update(old)
        res = None
        path = os.path.join(out, "report", "results.json")
        if os.path.exists(path):
            with open(path) as f:
                res = json.load(f)
        return out, proc, res

    def table(self, out):
        with open(os.path.join(out, "report", "table.md")) as f:
            return f.read()

    def test_tcd_pfc_victims_ue_only_pass(self):
        out, proc, res = self.run_tool("tcd-ok", "tcd+pfc",
                                       {"victim": [["ue", -1]], "burst": [["ce", 30]]})
        self.assertEqual(proc.returncode, 0, proc.stdout[-3000:] + proc.stderr)
        self.assertNotIn("FAIL", proc.stdout)
        self.assertEqual(res["frames_sent"], {"victim": VICTIM_FRAMES, "burst": BURST_FRAMES})
        m = res["schemes"]["tcd+pfc"]["marks"]
        self.assertEqual({k: m["victim"][k] for k in ("ce", "ue", "ect0", "not_ect", "frames")},
                         {"ce": 0, "ue": VICTIM_FRAMES, "ect0": 0, "not_ect": 0,
                          "frames": VICTIM_FRAMES})
        self.assertEqual((m["burst"]["ce"], m["burst"]["ue"], m["burst"]["ect0"]),
                         (30, 0, BURST_FRAMES - 30))
        table = self.table(out)
        self.assertIn("| tcd+pfc | 0 | %d | 0 | 30 | 0 | %d |" % (VICTIM_FRAMES,
                                                                  BURST_FRAMES - 30), table)
        self.assertIn("- ok tcd+pfc: victim frames UE (%d)" % VICTIM_FRAMES, table)
        self.assertIn("- ok tcd+pfc: victim frames never CE (0)", table)
        self.assertIn("- ok tcd+pfc: s/l2 OFF and undetermined (1 pauses, 2.000 ms)", table)
        # The TCD counters of s/l2 and l2/r1 come from the summary.
        self.assertIn("| tcd+pfc | s/l2 | 1 | 2 | 3 | 2.000 | 0.000 | 7 | 0.0 / 0.0 | 0.0 | "
                      "1.500 |", table)
        self.assertIn("| tcd+pfc | l2/r1 | 10 | 20 | 30 | 0 | 0.000 | 70 | 0.1 / 0.1 | 0.1 | 0 |", table)
        for name in ("tcd_victim_states.png", "tcd_victim_marks.png"):
            self.assertGreater(os.path.getsize(os.path.join(out, "report", name)), 0)

    def test_victim_ce_under_tcd_fails(self):
        out, proc, res = self.run_tool("tcd-ce", "tcd+pfc",
                                       {"victim": [["ce", 1], ["ue", -1]], "burst": [["ce", 5]]})
        self.assertEqual(proc.returncode, 4, proc.stdout[-3000:] + proc.stderr)
        self.assertIn("FAIL tcd+pfc: victim frames never CE (1)", proc.stdout)
        self.assertIn("- FAIL tcd+pfc: victim frames never CE (1)", self.table(out))
        self.assertEqual(res["schemes"]["tcd+pfc"]["marks"]["victim"]["ue"], VICTIM_FRAMES - 1)

    def test_burst_never_ce_under_tcd_fails(self):
        _, proc, _ = self.run_tool("tcd-no-burst-ce", "tcd+pfc", {"victim": [["ue", -1]]})
        self.assertEqual(proc.returncode, 4, proc.stdout[-3000:] + proc.stderr)
        self.assertIn("FAIL tcd+pfc: burst frames CE (0)", proc.stdout)

    def test_counting_per_class(self):
        marks = {"victim": [["ce", 3], ["ue", 5], ["not_ect", 2]],
                 "burst": [["ue", 4], ["ce", 6]]}
        _, proc, res = self.run_tool("count", "ecn+pfc", marks)
        self.assertEqual(proc.returncode, 0, proc.stdout[-3000:] + proc.stderr)
        m = res["schemes"]["ecn+pfc"]["marks"]
        self.assertEqual(set(m), {"victim", "burst"})  # the PFC frame counted nowhere
        v, b = m["victim"], m["burst"]
        self.assertEqual((v["ce"], v["ue"], v["not_ect"], v["ect0"], v["frames"]),
                         (3, 5, 2, VICTIM_FRAMES - 10, VICTIM_FRAMES))
        self.assertEqual((b["ce"], b["ue"], b["not_ect"], b["ect0"], b["frames"]),
                         (6, 4, 0, BURST_FRAMES - 10, BURST_FRAMES))
        # The victims' first frames are due at 0; the fake delays each 10 us.
        self.assertEqual(v["ce_first_ms"], 0.01)
        self.assertGreaterEqual(b["ue_first_ms"], 0.5)  # the burst starts at 0.5 ms
        self.assertGreaterEqual(b["ce_first_ms"], b["ue_last_ms"])  # UE first, then CE
        # Four victims' frames due at 0 (CE, CE, CE, UE), four at 8.074 us (UE).
        self.assertEqual((v["ce_last_ms"], v["ue_first_ms"], v["ue_last_ms"]),
                         (0.01, 0.01, 0.018))
        self.assertIn("ok ecn+pfc: victim frames CE (3)", proc.stdout)

    def test_ecn_pfc_victims_unmarked_fails(self):
        _, proc, _ = self.run_tool("ecn-none", "ecn+pfc", {})
        self.assertEqual(proc.returncode, 4, proc.stdout[-3000:] + proc.stderr)
        self.assertIn("FAIL ecn+pfc: victim frames CE (0)", proc.stdout)

    def test_missing_frame_drop_and_no_pause_fail(self):
        _, proc, _ = self.run_tool("lossy", "ecn+pfc", {"victim": [["ce", -1]]},
                                   FAKE_DROP_VICTIM="2", FAKE_DROP_AT="l0/s",
                                   FAKE_NO_PAUSE="1")
        self.assertEqual(proc.returncode, 4, proc.stdout[-3000:] + proc.stderr)
        self.assertIn("FAIL ecn+pfc: victim frames at r0 %d of %d"
                      % (VICTIM_FRAMES - 2, VICTIM_FRAMES), proc.stdout)
        self.assertIn("FAIL ecn+pfc: no drops (lossless fabric): {'l0/s': 3}", proc.stdout)
        self.assertIn("FAIL ecn+pfc: s/l2 paused by l2's PFC (0 frames, 0.000 ms)", proc.stdout)
        self.assertNotIn("FAIL ecn+pfc: burst", proc.stdout)

    def test_bfc_victims_marked_fail(self):
        _, proc, _ = self.run_tool("bfc", "ecn+bfc,tcd+bfc", {"burst": [["ce", 5]]})
        self.assertEqual(proc.returncode, 0, proc.stdout[-3000:] + proc.stderr)
        _, proc, _ = self.run_tool("bfc-ue", "ecn+bfc,tcd+bfc", {"victim": [["ue", 1]]})
        self.assertEqual(proc.returncode, 4, proc.stdout[-3000:] + proc.stderr)
        self.assertIn("FAIL tcd+bfc: victim frames neither UE nor CE (1 UE, 0 CE)", proc.stdout)
        self.assertIn("FAIL ecn+bfc: victim frames neither UE nor CE (1 UE, 0 CE)", proc.stdout)

    def test_trace_state_intervals(self):
        out, proc, res = self.run_tool("trace", "tcd+pfc,ecn+pfc",
                                       {"victim": [["ue", 1], ["ce", 1]], "burst": [["ce", 1]]})
        self.assertEqual(proc.returncode, 4, proc.stdout[-3000:] + proc.stderr)
        tr = res["schemes"]["tcd+pfc"]["trace"]
        sl2 = tr["s/l2"]
        self.assertEqual(sl2["queues_active"], 1)  # queue 1 paused but empty: left out
        self.assertAlmostEqual(sl2["non_congestion_s"], 0.002, places=5)
        self.assertAlmostEqual(sl2["undetermined_s"], 0.002, places=5)
        self.assertAlmostEqual(sl2["paused_s"], 0.002, places=5)
        self.assertAlmostEqual(sl2["undetermined_first_ms"], 2.0, places=2)
        self.assertAlmostEqual(sl2["undetermined_last_ms"], 4.0, places=2)
        self.assertIsNone(sl2["congestion_first_ms"])
        r1 = tr["l2/r1"]
        self.assertAlmostEqual(r1["congestion_s"], 0.002, places=5)
        self.assertAlmostEqual(r1["congestion_first_ms"], 2.0, places=2)
        self.assertAlmostEqual(r1["congestion_last_ms"], 4.0, places=2)
        self.assertEqual(r1["paused_s"], 0)
        self.assertEqual(tr["l2/r0"]["queues_active"], 0)
        # ECN schemes: the same rows judged against K = 20 KB.
        e = res["schemes"]["ecn+pfc"]["trace"]
        self.assertAlmostEqual(e["s/l2"]["above_k_s"], 0.002, places=5)
        self.assertAlmostEqual(e["s/l2"]["below_k_s"], 0.002, places=5)
        self.assertAlmostEqual(e["l2/r1"]["above_k_first_ms"], 2.0, places=2)
        self.assertNotIn("undetermined_s", e["s/l2"])
        table = self.table(out)
        self.assertIn("| tcd+pfc | s/l2 | 1 | 2.00 | 2.00..4.00 | – |", table)
        self.assertIn("| tcd+pfc | l2/r1 | 1 | 0.00 | – | 2.00..4.00 |", table)
        self.assertIn("| ecn+pfc | s/l2 | 1 | 2.00 | – | 2.00..4.00 |", table)

    def test_trace_runs_directly(self):
        from sluicepy.reproduce import tcd_victim as tool
        path = os.path.join(self.tmp, "direct.csv")
        t0 = tool.START_NS / 1e9
        with open(path, "w") as f:
            f.write("time_seconds,switch,port,queue,bytes,threshold_bytes,paused,tcd_state\n")
            for ms, b, p, st in ((0, 0, 0, "non_congestion"), (1, 9, 0, "non_congestion"),
                                 (2, 9, 1, "undetermined"), (3, 9, 0, "undetermined"),
                                 (4, 9, 0, "congestion"), (5, 0, 0, "non_congestion")):
                f.write("%r,s,l2,0,%d,0,%d,%s\n" % (t0 + ms / 1000, b, p, st))
        intervals, first = tool.trace_intervals(tool.read_tcd_trace(path))
        self.assertEqual(first, t0)
        runs = intervals[("s", "l2")][0]["runs"]
        self.assertEqual([(st, p) for _a, _b, st, p in runs],
                         [("non_congestion", False), ("undetermined", True),
                          ("undetermined", False), ("congestion", False),
                          ("non_congestion", False)])
        for (a, b, _s, _p), (ea, eb) in zip(runs, ((0, 2), (2, 3), (3, 4), (4, 5), (5, 5))):
            self.assertAlmostEqual(a * 1e3, ea, places=3)
            self.assertAlmostEqual(b * 1e3, eb, places=3)
        self.assertEqual(intervals[("s", "l2")][0]["peak_bytes"], 9)

    def test_sluice_failure_exits_1(self):
        _, proc, res = self.run_tool("broken", "tcd+pfc", {}, FAKE_SLUICE_EXIT="2")
        self.assertEqual(proc.returncode, 1, proc.stdout[-3000:] + proc.stderr)
        self.assertRegex(proc.stderr, r"sluice failed \(exit 2\); see .*tcd\+pfc\.log")
        self.assertIsNone(res)

    def test_unknown_scheme(self):
        _, proc, _ = self.run_tool("unknown", "tcd+ecn", {})
        self.assertEqual(proc.returncode, 1, proc.stdout + proc.stderr)
        self.assertIn("unknown scheme 'tcd+ecn'", proc.stderr)


class TcdVictimReal(unittest.TestCase):
    def test_real_tcd_pfc_run(self):
        """tcd+pfc alone, default scenario (30 ms of exact fabric time, about 3 s of
        sluice) against build/switch/sluice: exit 0, victims UE, never CE."""
        self.assertTrue(os.access(SLUICE, os.X_OK), "no sluice binary at " + SLUICE)
        with tempfile.TemporaryDirectory(prefix="tcd-victim-real-") as out:
            t0 = time.monotonic()
            proc = subprocess.run(
                ["flock", "/tmp/sluice-heavy.lock", common.PYTHON, TOOL, "tcd-marks", "--out", out,
                 "--sluice", SLUICE, "--schemes", "tcd+pfc"],
                capture_output=True, text=True, timeout=250)
            self.assertEqual(proc.returncode, 0, proc.stdout[-4000:] + proc.stderr)
            self.assertRegex(proc.stdout, r"- ok tcd\+pfc: victim frames UE \([1-9]\d*\)")
            self.assertIn("- ok tcd+pfc: victim frames never CE (0)", proc.stdout)
            self.assertNotIn("FAIL", proc.stdout)
            print("real tcd+pfc run: %.1f s" % (time.monotonic() - t0))


if __name__ == "__main__":
    unittest.main()
