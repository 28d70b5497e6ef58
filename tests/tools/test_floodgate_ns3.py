#!/usr/bin/python3
"""tools/reproduce floodgate beside the Floodgate authors' ns-3
(sluicepy/reproduce/floodgate_ns3.py): sluice's flow list written as their
flow file, and a run of theirs read back, on small files written here in
their formats (scratch/third.cc and mix/getBuffer.sh of NASA-NJU/Floodgate-NS3).
Every expected figure is worked out by hand in the comments."""

import contextlib
import io
import json
import os
import tempfile
import unittest

import common  # noqa: F401 (puts tools/ on the path)
from sluicepy import cli
from sluicepy.reproduce import floodgate, floodgate_ns3

FIELDS = "flow_id,src,dst,src_ip,dst_ip,size,packets,arrival_time,start_time,end_time,is_incast"
FLOWS = [  # id, src, dst, bytes, arrival s, incast
    (1, "h2", "h0", 2920, "0.000000100", 1),
    (2, "h3", "h0", 4380, "0.000000150", 1),
    (3, "h1", "h2", 1000, "0.000030000", 0),
    (4, "h0", "h3", 1000, "0.000030000", 0),
    (5, "h1", "h2", 1000, "0.000040000", 0),
]


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def flows_csv(d):
    path = os.path.join(d, "flows.csv")
    rows = [FIELDS] + [f"{i},{s},{t},ip,ip,{b},1,{a},{a},{a},{inc}" for i, s, t, b, a, inc in FLOWS]
    write(path, "\n".join(rows) + "\n")
    return path


def their_run(d):
    """A run of theirs on FLOWS: 2 ToRs of 2 hosts (hosts' port ids 1, 3 and
    5, 7; uplinks from 8 on) and one core."""
    prefix = os.path.join(d, "x")
    write(prefix + "-fct.txt", "".join([
        # flow 1: start truncated by 1 ns, 10 us; its receiver line is ignored
        "2\t0\t2920\t2000000099\t1\t0\t10.000000\t5.000000\t2.000000 \n",
        "rcv 2\t0\t2920\t2000000099\t1\t0\t9.000000\t5.000000\t1.800000 \n",
        # flow 2: 20 us, then a second line for it (MsgComplete), ignored
        "3\t0\t4380\t2000000150\t2\t0\t20.000000\t6.000000\t3.333333 \n",
        "3\t0\t4380\t2000000150\t2\t0\t25.000000\t6.000000\t4.166667 \n",
        # flows 3 and 5 share (src, dst, bytes): each takes its own start
        "1\t2\t1000\t2000040000\t4\t0\t4.000000\t2.000000\t2.000000 \n",
        "1\t2\t1000\t2000030000\t3\t0\t2.000000\t2.000000\t1.000000 \n",
        # flow 4 never finished; a line 50 ns off its start is no match,
        # nor is a line cut short (a run killed while writing)
        "0\t3\t1000\t2000030050\t5\t0\t1.000000\t1.000000\t1.000000 \n",
        "0\t3\t1000\t2000030000\t5\t0\t1.0",
    ]))
    write(prefix + "-pfc.txt", "".join([
        # core 4's port 1: paused at 10, paused again at 20 (a refresh),
        # resumed at 110: 100 ns; port 2 paused at 200 and never resumed:
        # to the last finish, flow 5's 2,000,040,000 + 4,000 ns
        "2000000010 4 1 1 1\n", "2000000020 4 1 1 1\n", "2000000110 4 1 1 0\n",
        "2000000200 4 1 2 1\n",
    ]))
    # ToR0: at t1 hosts 100 + 200, uplinks 1,000 + 500; at t2 hosts 50,
    # uplinks 1,200. ToR1: hosts 400 + 400 at t1, uplink 10 300 at t2.
    write(prefix + "-buffer0.log", "".join([
        "+1ns 1 0 0 100 0 0 1800\n", "+1ns 3 0 0 200 0 0 1800\n",
        "+1ns 8 0 0 1000 0 0 1800\n", "+1ns 9 0 0 500 0 0 1800\n",
        "+2ns 1 0 0 50 0 0 1250\n", "+2ns 3 0 0 0 0 0 1250\n",
        "+2ns 8 0 0 1200 0 0 1250\n", "+2ns 9 0 0 0 0 0 1250\n"]))
    write(prefix + "-buffer1.log", "".join([
        "+1ns 5 0 0 400 0 0 800\n", "+1ns 7 0 0 400 0 0 800\n", "+1ns 10 0 0 0 0 0 800\n",
        "+2ns 5 0 0 0 0 0 300\n", "+2ns 7 0 0 0 0 0 300\n", "+2ns 10 0 0 300 0 0 300\n"]))
    write(prefix + "-buffer2.log", "+1ns 9 0 0 70 0 0 700\n+2ns 9 0 0 90 0 0 900\n")
    return prefix


class FloodgateNs3(unittest.TestCase):
    def test_flow_file(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "ns3.txt")
            self.assertEqual(floodgate_ns3.write_flow_file(flows_csv(d), out), 5)
            with open(out) as f:
                self.assertEqual(f.read(), "5 0\n"
                                 "2 0 2920 2.000000100\n3 0 4380 2.000000150\n"
                                 "1 2 1000 2.000030000\n0 3 1000 2.000030000\n"
                                 "1 2 1000 2.000040000\n")

    def test_a_run_of_theirs(self):
        with tempfile.TemporaryDirectory() as d:
            r = floodgate_ns3.read_run(flows_csv(d), their_run(d), tors=2, cores=1,
                                       hosts_per_tor=2)
        # Poisson flows 3 (2 us, slowdown 1) and 5 (4 us, 2); flow 4 unfinished.
        self.assertEqual((r["poisson_flows"], r["poisson_unfinished"]), (3, 1))
        self.assertAlmostEqual(r["fct_mean_us"], 3.0)
        self.assertAlmostEqual(r["fct_p99_us"], 4.0)
        self.assertAlmostEqual(r["slowdown_mean"], 1.5)
        self.assertAlmostEqual(r["slowdown_p99"], 2.0)
        # Incast: both done, the last at 150 ns + 20 us.
        self.assertEqual((r["incast_flows"], r["incast_unfinished"]), (2, 0))
        self.assertAlmostEqual(r["incast_last_finish_ms"], 0.02015)
        # ToR-up: max(1,500, 1,200, 0, 300); ToR-down: max(300, 50, 800, 0);
        # core: 900 bytes.
        self.assertAlmostEqual(r["max_tor_up_kb"], 1.5)
        self.assertAlmostEqual(r["max_tor_down_kb"], 0.8)
        self.assertAlmostEqual(r["max_core_kb"], 0.9)
        # Two pauses started (the refresh is a pause frame too: 3 frames),
        # 100 ns + (2,000,044,000 - 2,000,000,200) ns paused.
        self.assertEqual(r["pfc_pauses"], 3)
        self.assertAlmostEqual(r["pfc_paused_ms"], (100 + 43_800) / 1e6)

    def test_missing_files_are_named(self):
        with tempfile.TemporaryDirectory() as d:
            with self.assertRaisesRegex(FileNotFoundError, "nothing-fct.txt"):
                floodgate_ns3.read_run(flows_csv(d), os.path.join(d, "nothing"), 2, 1, 2)

    def test_table_sets_each_figure_beside_sluices(self):
        theirs = {"poisson_flows": 3, "poisson_unfinished": 0, "fct_mean_us": 100.0,
                  "fct_p99_us": 200.0, "slowdown_mean": 2.0, "slowdown_p99": 4.0,
                  "incast_last_finish_ms": 3.0, "max_tor_up_kb": 1000.0, "max_core_kb": 0.0,
                  "max_tor_down_kb": 500.0, "pfc_pauses": 4, "pfc_paused_ms": 1.5}
        ours = dict(theirs, fct_mean_us=125.0, max_tor_up_kb=750.0, pfc_frames_sent=9,
                    pfc_paused_ms=1.25)
        lines = floodgate_ns3.table("DCQCN", theirs, ours)
        self.assertIn("| Poisson FCT mean µs | 100.0 | 125.0 | +25 % |", lines)
        self.assertIn("| max KB ToR-up | 1000 | 750 | -25 % |", lines)
        self.assertIn("| max KB core | 0 | 0 |  |", lines)  # no ratio to zero
        self.assertIn("| PFC: ms paused, summed over ports | 1.50 | 1.25 | |", lines)

    def test_options(self):
        def refused(*argv):
            err = io.StringIO()
            with contextlib.redirect_stderr(err), self.assertRaises(SystemExit):
                floodgate.parse_args(list(argv))
            return err.getvalue()
        self.assertIn("SCHEME=DIR/PREFIX", refused("--report-only", "--ns3-run", "x"))
        self.assertIn("SCHEME=DIR/PREFIX", refused("--report-only", "--ns3-run", "tcp=a/b"))
        self.assertIn("--report-only", refused("--ns3-run", "dcqcn=a/b"))
        self.assertIn("give one", refused("--ns3-flows", "--report-only"))
        a = floodgate.parse_args(["--report-only", "--ns3-run", "DCQCN+FG=a/b"])
        self.assertEqual(a.ns3_run, [("dcqcn+fg", os.path.abspath("a/b"))])

    def test_report_sets_their_run_beside_sluices(self):
        """--report-only --ns3-run reads the seed's flows and sluice's row from
        --out and writes ns3.json."""
        with tempfile.TemporaryDirectory() as d:
            seed = os.path.join(d, "seed1")
            os.makedirs(os.path.join(seed, "workload"))
            os.makedirs(os.path.join(seed, "dcqcn"))
            os.rename(flows_csv(d), os.path.join(seed, "workload", "flows.csv"))
            prefix = their_run(d)
            # The fabric's 10 ToRs of 16 hosts and 4 cores: ToR0's host ports
            # are 1 and 3 (2 x host + 1), its uplinks from 320 (2 x 160) on;
            # the last core holds 900 bytes; the other switches log nothing.
            write(f"{prefix}-buffer0.log", "+1ns 1 0 0 100 0 0 900\n+1ns 3 0 0 200 0 0 900\n"
                                           "+1ns 320 0 0 600 0 0 900\n")
            for i in range(1, 13):
                write(f"{prefix}-buffer{i}.log", "")
            write(f"{prefix}-buffer13.log", "+1ns 9 0 0 90 0 0 900\n")
            row = {"seed": 1, "scheme": "DCQCN", "poisson_flows": 3, "poisson_unfinished": 0,
                   "fct_mean_us": 3.3, "fct_p99_us": 4.0, "slowdown_mean": 1.5, "slowdown_p99": 2.0,
                   "incast_flows": 2, "incast_unfinished": 0, "incast_last_finish_ms": 0.02,
                   "max_tor_up_kb": 1.5, "max_core_kb": 0.9, "max_tor_down_kb": 0.8,
                   "paused_pct": 0.0, "drops": {}, "wall_s": 1, "rss_mb": 1}
            write(os.path.join(seed, "dcqcn", "row.json"), json.dumps(row))
            a = floodgate.parse_args(["--report-only", "--out", d, "--ns3-run", f"dcqcn={prefix}"])
            with contextlib.redirect_stdout(io.StringIO()) as out:
                floodgate.compare_ns3(a)
            self.assertIn("| Poisson FCT mean µs | 3.0 | 3.3 | +10 % |", out.getvalue())
            with open(os.path.join(d, "ns3.json")) as f:
                got = json.load(f)["dcqcn"]
            self.assertAlmostEqual(got["ns3"]["max_tor_up_kb"], 0.6)
            self.assertAlmostEqual(got["ns3"]["max_tor_down_kb"], 0.3)
            self.assertAlmostEqual(got["ns3"]["max_core_kb"], 0.9)
            self.assertEqual(got["sluice"]["scheme"], "DCQCN")
            a = floodgate.parse_args(["--report-only", "--out", d, "--ns3-run", f"hpcc={prefix}"])
            with self.assertRaisesRegex(cli.ToolError, "no sluice run of hpcc"):
                floodgate.compare_ns3(a)
            a = floodgate.parse_args(["--report-only", "--out", d, "--seeds", "2",
                                      "--ns3-run", f"dcqcn={prefix}"])
            with self.assertRaisesRegex(cli.ToolError, "no flow list for seed 2"):
                floodgate.compare_ns3(a)


if __name__ == "__main__":
    unittest.main()
