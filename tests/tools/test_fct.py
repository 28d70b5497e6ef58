#!/usr/bin/python3
"""Tests of tools/fct on receiver captures written here with known arrival
times: FCTs and slowdowns against hand-computed values, loss, duplicates,
clock offsets, unfinished flows counted at the end of the run (never to a
run's advantage), plots and the compare mode; the same figures in
tools/experiment --seeds and tools/reproduce bfc-testbed; and on a
generated workload."""

import csv
import json
import os
import struct
import tempfile
import unittest

import common
from sluicepy import experiment_report

APP = 1448  # application bytes of a full packet (1500 - 20 - 8 - 24)

# (flow id, src, dst, size, packets, start ns in sender time)
FLOWS = [(1, "h1", "h0", 3000, 3, 10_000), (2, "h2", "h0", 100, 1, 20_000),
         (3, "h3", "h1", 2896, 2, 30_000), (4, "h2", "h1", 1448, 1, 40_000),
         (5, "h1", "h0", 50_000, 35, 60_000), (6, "h3", "h0", 100, 1, 50_000)]

# Hand calculation at 10 Gbps (0.8 ns per byte), base RTT 2 us (ideal adds 1000 ns).
# Wire bytes per packet = app + 66 headers + 24 (FCS, preamble, IFG):
#   full packet 1538 B = 1230.4 ns; 104 B of data -> 194 B = 155.2 ns; 100 B -> 190 B = 152 ns.
# flow 1: 3000 B in 3 packets (1448, 1448, 104); wire 3000 + 3*90 = 3270 B = 2616 ns.
#   arrivals (first bit) seq0 @12000, seq2 @13000, seq1 @14000 -> last byte 14000 + 1230.4.
#   FCT = 15230.4 - 10000 = 5230.4 ns; ideal = 2616 + 1000 = 3616 ns.
# flow 2: 100 B, arrives @23000 -> FCT = 3000 + 152 = 3152 ns; ideal = 152 + 1000 = 1152 ns.
# flow 3: seq1 never arrives -> unfinished, 1 lost.
# flow 4: 1448 B @42000 and a duplicate @45000 -> FCT = 2000 + 1230.4 = 3230.4; ideal 2230.4.
# flow 5: nothing arrives -> unfinished, 35 lost.
# flow 6: 100 B @50500 -> FCT = 500 + 152 = 652 < ideal 1152 -> slowdown clamped to 1.
SLOWDOWN = {1: 5230.4 / 3616, 2: 3152 / 1152, 4: 3230.4 / 2230.4, 6: 1.0}
FCT_NS = {1: 5230.4, 2: 3152.0, 4: 3230.4, 6: 652.0}
# Unfinished flows count with FCT = end of observation - start. The runs end
# at END_NS after the offset (--end-of-run or run_end_epoch_seconds):
# flow 3: 100000 - 30000 = 70000 ns over ideal 2896 + 2*90 = 3076 B = 2460.8 + 1000 ns.
# flow 5: 100000 - 60000 = 40000 ns over 50000 + 35*90 = 53150 B = 42520 + 1000 ns,
#   below 1: slowdown 1 (a lower bound, not a clamp).
END_NS = 100_000
CENSORED_SLOWDOWN = {3: 70_000 / 3460.8, 5: 1.0}
CENSORED_FCT_NS = {3: 70_000, 5: 40_000}
# Without a declared end the last captured frame ends the observation:
# flow 6's last bit at 50500 + 152 ns.
LAST_FRAME_NS = 50_652
ARRIVALS = {"h0": [(1, 0, 12_000, 3), (1, 2, 13_000, 2), (1, 1, 14_000, 2),
                   (2, 0, 23_000, 2), (6, 0, 50_500, 2)],
            "h1": [(3, 0, 31_000, 2), (4, 0, 42_000, 2), (4, 0, 45_000, 2)]}
# (flow id, seq, arrival ns after the offset, ECN bits); flow 1 seq0 is CE.


def frame(fid, seq, ecn):
    """A workload frame built here, independently of tools/sluicepy."""
    _, src, dst, size, packets, _ = FLOWS[fid - 1]
    app = APP if seq + 1 < packets else size - seq * APP
    total = 20 + 8 + 24 + app
    ip = bytearray(struct.pack("!BBHHHBBH4s4s", 0x45, ecn, total, seq, 0x4000, 64, 17, 0,
                               bytes([10, 0, int(src[1]), 2]), bytes([10, 0, int(dst[1]), 2])))
    struct.pack_into("!H", ip, 10, 0xFFFF ^ common.checksum16(bytes(ip)))
    udp = struct.pack("!HHHH", 50000 + fid, 9000, total - 20, 0)
    slw = struct.pack("!4sIIIII", b"SLW1", fid, seq, size, seq * APP, int(src[1]))
    eth = bytes.fromhex("020000000001" "020000000002" "0800")
    return eth + bytes(ip) + udp + slw + bytes(app)


ARP = bytes.fromhex("ffffffffffff" "020000000009" "0806") + bytes(28)


def percentile(sorted_values, p):
    pos = (len(sorted_values) - 1) * p / 100
    lo = int(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


class CaptureFixture(unittest.TestCase):
    """Writes flows.csv and receiver captures with known arrivals and runs
    tools/fct on them."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name
        self.flows_csv = os.path.join(self.dir, "flows.csv")
        with open(self.flows_csv, "w") as f:
            f.write("flow_id,src,dst,src_ip,dst_ip,size,packets,arrival_time,start_time,"
                    "end_time,is_incast\n")
            for fid, src, dst, size, pk, start in FLOWS:
                t = "0.%09d" % start
                f.write("%d,%s,%s,x,y,%d,%d,%s,%s,%s,0\n" % (fid, src, dst, size, pk, t, t, t))

    def tearDown(self):
        self.tmp.cleanup()

    def captures(self, offset_ns, tag, arrivals_by_host=ARRIVALS):
        paths = []
        for host, arrivals in arrivals_by_host.items():
            recs = [(offset_ns + t, frame(fid, seq, ecn)) for fid, seq, t, ecn in arrivals]
            if host == "h0":
                recs.insert(1, (offset_ns + 12_500, ARP))
            path = os.path.join(self.dir, "%s_rx_%s.pcap" % (tag, host))
            common.write_pcap_ns(path, recs)
            paths.append(path)
        return paths

    def run_fct(self, out, *extra, offset_ns=100 * 10**9,
                offset_args=("--start-offset", "100", "--end-of-run", "100.0001"),
                arrivals=ARRIVALS):
        rx = self.captures(offset_ns, os.path.basename(out), arrivals)
        common.run_tool("fct", "--flows", self.flows_csv, "--rx", *rx, "--link-rate", "10Gbps",
                        "--base-rtt", "2us", *offset_args, "--out", out, *extra)
        with open(os.path.join(out, "fct.csv"), newline="") as f:
            rows = {int(r["flow_id"]): r for r in csv.DictReader(f)}
        with open(os.path.join(out, "summary.json")) as f:
            return rows, json.load(f)

    def check_hand_values(self, rows, summary):
        for fid, expected in SLOWDOWN.items():
            self.assertEqual(rows[fid]["finished"], "1")
            self.assertAlmostEqual(float(rows[fid]["slowdown"]), expected, places=5, msg=fid)
            self.assertAlmostEqual(float(rows[fid]["fct_seconds"]), FCT_NS[fid] * 1e-9,
                                   delta=0.6e-9, msg=fid)
        self.assertEqual(rows[6]["clamped"], "1")
        self.assertEqual(rows[1]["clamped"], "0")
        self.assertAlmostEqual(float(rows[1]["ideal_seconds"]), 3616e-9, delta=1e-12)
        for fid, lost in ((3, 1), (5, 35)):
            self.assertEqual((rows[fid]["finished"], rows[fid]["censored"]), ("0", "1"))
            self.assertEqual(rows[fid]["lost_packets"], str(lost))
            self.assertEqual(rows[fid]["finish_time"], "")
            self.assertAlmostEqual(float(rows[fid]["slowdown"]), CENSORED_SLOWDOWN[fid], places=5)
            self.assertAlmostEqual(float(rows[fid]["fct_seconds"]), CENSORED_FCT_NS[fid] * 1e-9,
                                   delta=0.6e-9)
            self.assertEqual(rows[fid]["clamped"], "0")
        self.assertEqual(rows[1]["censored"], "0")
        self.assertEqual(rows[4]["duplicates"], "1")
        self.assertEqual(rows[1]["reordered"], "1")
        self.assertEqual(rows[1]["ce_marked"], "1")
        self.assertEqual((summary["flows"], summary["finished"], summary["unfinished"]), (6, 4, 2))
        self.assertEqual(summary["lost_packets"], 36)
        self.assertEqual(summary["duplicate_packets"], 1)
        self.assertEqual(summary["clamped_slowdowns"], 1)
        self.assertEqual(summary["params"]["non_workload_packets"], 1)
        # Every flow counts, the unfinished with their censored slowdowns.
        small = sorted(list(SLOWDOWN.values()) + [CENSORED_SLOWDOWN[3]])  # flows < 10 KB
        every = sorted(small + [CENSORED_SLOWDOWN[5]])
        bucket = summary["buckets"][0]
        self.assertEqual((bucket["bucket"], bucket["count"], bucket["unfinished"]), ("<10KB", 5, 1))
        self.assertTrue(bucket["lower_bound"])
        for p in (50, 95, 99):
            self.assertAlmostEqual(bucket["p%d" % p], percentile(small, p), places=9)
            self.assertAlmostEqual(summary["overall"]["p%d" % p], percentile(every, p), places=9)
        self.assertAlmostEqual(summary["overall"]["mean"], sum(every) / 6, places=9)
        self.assertEqual((summary["overall"]["count"], summary["overall"]["unfinished"]), (6, 2))
        mid = summary["buckets"][1]  # flow 5, 50 KB
        self.assertEqual((mid["count"], mid["unfinished"], mid["p50"]), (1, 1, 1.0))
        self.assertEqual(summary["params"]["unobserved_flows"], 0)


class SyntheticCaptures(CaptureFixture):
    def test_hand_computed_fct_and_slowdown(self):
        out = os.path.join(self.dir, "run")
        rows, summary = self.run_fct(out, "--label", "handmade")
        self.check_hand_values(rows, summary)
        self.assertEqual(summary["label"], "handmade")
        with open(os.path.join(out, "summary.txt")) as f:
            text = f.read()
        self.assertIn("<10KB", text)
        self.assertRegex(text, r"\nall +6 +2 +>=")  # censored figures are lower bounds
        self.assertIn("handmade: p99 >= %.2f, 2 flows unfinished counted at end of run"
                      % summary["overall"]["p99"], text)
        self.assertEqual(summary["params"]["end_of_observation_source"], "--end-of-run")
        self.assertEqual(summary["params"]["end_of_observation_ns"], 100 * 10**9 + END_NS)

    def test_start_offset_from_json_exact_at_epoch_scale(self):
        offset = 1_700_000_000_123_456_789
        path = os.path.join(self.dir, "sluice-summary.json")
        with open(path, "w") as f:
            f.write('{"replay": {"replay_start_epoch_seconds": 1700000000.123456789}, '
                    '"run_end_epoch_seconds": 1700000000.123556789}\n')
        rows, summary = self.run_fct(os.path.join(self.dir, "epoch"), offset_ns=offset,
                                     offset_args=("--start-offset-file", path))
        self.check_hand_values(rows, summary)
        self.assertEqual(summary["params"]["start_offset_ns"], offset)
        self.assertEqual(summary["params"]["end_of_observation_ns"], offset + END_NS)

    def test_start_offset_less_the_replay_origin(self):
        # sluice replayed from capture time 5 us: sender time 0 was 5 us earlier.
        offset = 1_700_000_000_123_456_789
        path = os.path.join(self.dir, "sluice-origin.json")
        with open(path, "w") as f:
            f.write('{"replay_start_epoch_seconds": 1700000000.123461789, '
                    '"replay_origin_capture_seconds": 0.000005000, '
                    '"run_end_epoch_seconds": 1700000000.123556789}\n')
        rows, summary = self.run_fct(os.path.join(self.dir, "origin"), offset_ns=offset,
                                     offset_args=("--start-offset-file", path))
        self.check_hand_values(rows, summary)
        self.assertEqual(summary["params"]["start_offset_ns"], offset)

    def test_last_bit_stamps(self):
        rows, _ = self.run_fct(os.path.join(self.dir, "lastbit"), "--rx-stamp", "last-bit")
        # flow 1 ends at its last stamp, 14000 ns: FCT 4000 ns over ideal 3616 ns.
        self.assertAlmostEqual(float(rows[1]["slowdown"]), 4000 / 3616, places=5)
        # flow 2: 3000 ns over 1152 ns.
        self.assertAlmostEqual(float(rows[2]["slowdown"]), 3000 / 1152, places=5)

    def test_ignore_after_leaves_late_flows_out(self):
        rows, summary = self.run_fct(os.path.join(self.dir, "ign"), "--ignore-after", "55us")
        self.assertNotIn(5, rows)
        self.assertEqual((summary["unfinished"], summary["lost_packets"]), (1, 1))
        self.assertEqual(summary["params"]["excluded_flows"], 1)

    def test_end_of_observation_defaults_to_the_last_frame(self):
        # No declared end (or one before the last frame): the last captured
        # frame ends the observation; flow 5, due after it, was never observed.
        for name, args in (("nodecl", ("--start-offset", "100")),
                           ("early", ("--start-offset", "100", "--end-of-run", "100.00004"))):
            rows, summary = self.run_fct(os.path.join(self.dir, name), offset_args=args)
            self.assertNotIn(5, rows)
            self.assertEqual(summary["params"]["unobserved_flows"], 1)
            self.assertEqual(summary["params"]["end_of_observation_source"], "last captured frame")
            self.assertAlmostEqual(float(rows[3]["fct_seconds"]),
                                   (LAST_FRAME_NS - 30_000) * 1e-9, delta=0.6e-9)
            self.assertEqual((summary["unfinished"], summary["overall"]["unfinished"]), (1, 1))

    def test_unfinished_flows_never_make_a_run_look_better(self):
        # Run A delivers flow 3's second packet late (at 90 us: FCT 61.2 us);
        # run B never delivers it. Counting finished flows only, B's p99
        # would be far better than A's; counted at the end of the run, B
        # can only be worse.
        late = dict(ARRIVALS, h1=ARRIVALS["h1"] + [(3, 1, 90_000, 2)])
        a, b = os.path.join(self.dir, "A"), os.path.join(self.dir, "B")
        rows_a, sa = self.run_fct(a, "--label", "delivers", "--ignore-after", "55us",
                                  arrivals=late)
        rows_b, sb = self.run_fct(b, "--label", "strands", "--ignore-after", "55us")
        self.assertEqual((sa["unfinished"], sb["unfinished"]), (0, 1))
        finished_only_b = sorted(float(r["slowdown"]) for r in rows_b.values()
                                 if r["finished"] == "1")
        self.assertLess(percentile(finished_only_b, 99), sa["overall"]["p99"] / 2)
        for stat in ("p50", "p95", "p99", "mean"):
            self.assertGreaterEqual(sb["overall"][stat], sa["overall"][stat], stat)
        self.assertGreater(sb["overall"]["p99"], sa["overall"]["p99"])
        self.assertEqual((sa["overall"]["lower_bound"], sb["overall"]["lower_bound"]),
                         (False, True))
        out = os.path.join(self.dir, "cmp-ab")
        common.run_tool("fct", "compare", a, b, "--out", out)
        with open(os.path.join(out, "compare.txt")) as f:
            text = f.read()
        self.assertRegex(text, r"\nstrands +all +5 +1 +>=")
        self.assertRegex(text, r"\ndelivers +all +5 +0 +[0-9]")
        self.assertIn("strands: p99 >= %.2f, 1 flows unfinished counted at end of run"
                      % sb["overall"]["p99"], text)

    def test_older_summaries_are_refused_by_compare(self):
        a = os.path.join(self.dir, "old")
        _, summary = self.run_fct(a)
        for stats in [summary["overall"]] + summary["buckets"]:
            del stats["lower_bound"]  # as tools/fct wrote it before unfinished flows counted
        with open(os.path.join(a, "summary.json"), "w") as f:
            json.dump(summary, f)
        proc = common.run_tool_status("fct", "compare", a, a, "--out", os.path.join(self.dir, "c"))
        self.assertEqual(proc.returncode, 1)
        self.assertIn("left unfinished flows out", proc.stderr)
        self.assertNotIn("Traceback", proc.stderr)

    def test_note_heads_table_and_compare(self):
        a = os.path.join(self.dir, "noted")
        _, summary = self.run_fct(a, "--note", "NOT VALID: fidelity limits exceeded")
        self.assertEqual(summary["note"], "NOT VALID: fidelity limits exceeded")
        with open(os.path.join(a, "summary.txt")) as f:
            self.assertTrue(f.read().startswith("NOT VALID: fidelity limits exceeded\n"))
        out = os.path.join(self.dir, "cmp-noted")
        common.run_tool("fct", "compare", a, a, "--labels", "x,y", "--note", "NOT VALID: z",
                        "--out", out)
        with open(os.path.join(out, "compare.txt")) as f:
            head = f.read().splitlines()[:3]
        self.assertEqual(head, ["NOT VALID: z", "x: NOT VALID: fidelity limits exceeded",
                                "y: NOT VALID: fidelity limits exceeded"])

    def test_plots_and_compare(self):
        a, b = os.path.join(self.dir, "A"), os.path.join(self.dir, "B")
        self.run_fct(a, "--label", "droptail")
        self.run_fct(b, "--label", "pfc", "--bins", "3")
        for name in ("slowdown_by_size.png", "slowdown_buckets.png"):
            self.assert_png(os.path.join(a, name))
        out = os.path.join(self.dir, "cmp")
        common.run_tool("fct", "compare", a, b, "--out", out)
        for name in ("compare_by_size.png", "compare_buckets.png"):
            self.assert_png(os.path.join(out, name))
        with open(os.path.join(out, "compare.csv"), newline="") as f:
            rows = list(csv.reader(f))
        self.assertEqual({r[0] for r in rows[1:]}, {"droptail", "pfc"})
        self.assertEqual(len(rows), 1 + 2 * 5)  # 4 buckets + "all" per run
        self.assertEqual(rows[0][-1], "lower_bound")
        self.assertEqual(rows[-1][1:4] + rows[-1][-1:], ["all", "6", "2", "1"])

    def assert_png(self, path):
        with open(path, "rb") as f:
            head = f.read(8)
        self.assertEqual(head, b"\x89PNG\r\n\x1a\n", path)
        self.assertGreater(os.path.getsize(path), 1000, path)


class SameFiguresElsewhere(CaptureFixture):
    """tools/experiment --seeds and tools/reproduce bfc-testbed re-read
    fct.csv; they count the unfinished flows as tools/fct does and refuse a
    file without them."""

    def test_seeds_report_buckets_match_tools_fct(self):
        out = os.path.join(self.dir, "run")
        _, summary = self.run_fct(out)
        stats = experiment_report.flow_stats(os.path.join(out, "fct.csv"))
        for b in summary["buckets"]:
            got = stats[b["bucket"]]
            self.assertEqual((got["flows"], got["unfinished"], got["lower_bound"]),
                             (b["count"], b["unfinished"], b["lower_bound"]), b["bucket"])
            for p in ("p50", "p99"):
                if b[p] is None:
                    self.assertIsNone(got[p])
                else:
                    self.assertAlmostEqual(got[p], b[p], places=5)

    def test_bfc_testbed_group_figures_count_unfinished_flows(self):
        out = os.path.join(self.dir, "run")
        rows, _ = self.run_fct(out)
        from sluicepy.reproduce import bfc_testbed
        group1 = bfc_testbed.GROUP1
        bfc_testbed.GROUP1 = "h3"  # flows 3 (unfinished) and 6
        try:
            g = bfc_testbed.group1_fct(os.path.join(out, "fct.csv"))
        finally:
            bfc_testbed.GROUP1 = group1
        fcts = sorted([CENSORED_FCT_NS[3] * 1e-9, FCT_NS[6] * 1e-9])
        self.assertEqual((g["flows"], g["unfinished"], g["lower_bound"]), (2, 1, True))
        self.assertAlmostEqual(g["mean_fct_seconds"], sum(fcts) / 2, delta=1e-12)
        self.assertAlmostEqual(g["p99_fct_seconds"], percentile(fcts, 99), delta=1e-12)
        self.assertAlmostEqual(g["mean_slowdown"], (CENSORED_SLOWDOWN[3] + 1.0) / 2, places=5)

    def test_old_fct_csv_is_refused(self):
        out = os.path.join(self.dir, "run")
        self.run_fct(out)
        path = os.path.join(out, "fct.csv")
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
        with open(path, "w", newline="") as f:  # as written before: no censored column
            w = csv.DictWriter(f, [k for k in rows[0] if k != "censored"], extrasaction="ignore")
            w.writeheader()
            w.writerows(rows)
        with self.assertRaisesRegex(ValueError, "left unfinished flows out"):
            experiment_report.flow_stats(path)


class GeneratedWorkload(unittest.TestCase):
    """The senders' own pcaps, read as if they were the receivers' captures
    with no network in between, give slowdown 1 up to ns rounding."""

    def test_senders_as_receivers(self):
        with tempfile.TemporaryDirectory() as d:
            hosts = common.write_hosts_text(os.path.join(d, "hosts.txt"))
            wl = os.path.join(d, "wl")
            common.run_tool("workload", "--cdf", os.path.join(common.CONF, "fb_hadoop.cdf"),
                            "--load", "0.6", "--link-rate", "25Gbps", "--hosts", hosts,
                            "--duration", "3ms", "--seed", "3", "--out", wl)
            pcaps = [os.path.join(wl, h[0] + ".pcap") for h in common.HOSTS]
            results = {}
            for mode in ("flows", "tx"):
                out = os.path.join(d, mode)
                src = ["--flows", os.path.join(wl, "flows.csv")] if mode == "flows" else ["--tx"] + pcaps
                common.run_tool("fct", *src, "--rx", *pcaps, "--link-rate", "25Gbps", "--out", out)
                with open(os.path.join(out, "fct.csv"), newline="") as f:
                    results[mode] = {r["flow_id"]: r for r in csv.DictReader(f)}
            rows = results["flows"]
            self.assertGreater(len(rows), 100)
            for r in rows.values():
                self.assertEqual((r["finished"], r["lost_packets"], r["clamped"]), ("1", "0", "0"))
                # Stamps are the exact schedule rounded up to whole ns.
                fct, ideal = float(r["fct_seconds"]), float(r["ideal_seconds"])
                self.assertGreaterEqual(fct, ideal - 0.5e-9)
                self.assertLess(fct, ideal + 1.5e-9)
            self.assertEqual({k: r["slowdown"] for k, r in rows.items()},
                             {k: r["slowdown"] for k, r in results["tx"].items()})


if __name__ == "__main__":
    unittest.main()
