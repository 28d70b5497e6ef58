#!/usr/bin/python3
"""Tools fail in a way a user can read: one line naming the tool and the
failing step, a non-zero exit status and no Python traceback; for a failing
child program, missing files, bad YAML and Ctrl-C. The emulator is replaced
by a fake (tests/tools/common.py), so nothing heavy runs."""

import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import unittest

import common
from sluicepy import cli

LEAFSPINE = os.path.join(common.ROOT, "conf", "leafspine.yaml")
WEBSEARCH = os.path.join(common.CONF, "websearch.cdf")


class HelpShowsDefaults(unittest.TestCase):
    def test_experiment_says_each_default(self):
        """Every value-taking option a new user reaches for first says its
        default (or that it has none)."""
        proc = common.run_tool_status("experiment", "--help")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        entries, current = {}, None
        for line in proc.stdout.splitlines():  # "  --opt VALUE  help", continued below
            m = re.match(r"  (--[\w-]+)", line)
            if m:
                current = m.group(1)
                entries[current] = line
            elif current and line.startswith("    "):
                entries[current] += " " + line.strip()
            else:
                current = None
        for opt in ("--schemes", "--load", "--duration", "--drain", "--seed", "--link-rate",
                    "--clock", "--workload-snaplen"):
            self.assertRegex(" ".join(entries[opt].split()), r"default|no default",
                             opt + ": " + entries[opt])


class OneLine(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name
        self.sluice = common.write_script(os.path.join(self.dir, "sluice"), common.FAKE_SLUICE)

    def tearDown(self):
        self.tmp.cleanup()

    def assert_one_line(self, proc, prog, message, status=1):
        """The tool's own lines on stderr: exactly one, saying `message`."""
        self.assertEqual(proc.returncode, status, proc.stdout + proc.stderr)
        self.assertNotIn("Traceback", proc.stdout + proc.stderr)
        own = [line for line in proc.stderr.splitlines() if line.startswith(prog + ":")]
        self.assertEqual(len(own), 1, proc.stderr)
        self.assertIn(message, own[0])
        return own[0]

    def failing_sluice_env(self):
        return dict(os.environ, FAKE_SLUICE_EXIT="1")

    def small_workload(self):
        """A workload directory as far as tools/experiment reads it before
        sluice runs."""
        wl = os.path.join(self.dir, "wl")
        os.makedirs(wl)
        with open(os.path.join(wl, "flows.csv"), "w") as f:
            f.write("flow_id,src,dst,src_ip,dst_ip,size,packets,arrival_time,start_time,"
                    "end_time,is_incast\n1,h0,h1,a,b,100,1,0.000001,0.000001,0.000002,0\n")
        return wl

    def test_experiment_reports_a_failing_workload_step(self):
        # The example: an incast without its receiver.
        proc = common.run_tool_status(
            "experiment", "--config", LEAFSPINE, "--schemes", "droptail", "--cdf", WEBSEARCH,
            "--load", "0.1", "--duration", "0.01", "--out", os.path.join(self.dir, "x"),
            "--sluice", self.sluice, "--", "--incast-degree", "6")
        self.assert_one_line(proc, "experiment", "tools/workload failed (exit 1); see above")
        self.assertIn("tools/workload: incast receiver '' is not in the host list", proc.stderr)

    def test_experiment_reports_a_failing_sluice(self):
        proc = common.run_tool_status(
            "experiment", "--config", LEAFSPINE, "--schemes", "droptail",
            "--workload", self.small_workload(), "--floor-seconds", "0",
            "--sluice", self.sluice, "--out", os.path.join(self.dir, "x"),
            env=self.failing_sluice_env())
        log = os.path.join(self.dir, "x", "droptail", "sluice.log")
        self.assert_one_line(proc, "experiment", "sluice failed (exit 1); see " + log)
        with open(log) as f:
            self.assertIn("fake failure", f.read())

    def test_experiment_reports_a_missing_sluice(self):
        proc = common.run_tool_status(
            "experiment", "--config", LEAFSPINE, "--schemes", "droptail",
            "--workload", self.small_workload(), "--floor-seconds", "0",
            "--sluice", os.path.join(self.dir, "nope"), "--out", os.path.join(self.dir, "x"))
        self.assert_one_line(proc, "experiment", "cannot run sluice")

    def test_missing_and_malformed_configuration(self):
        bad = os.path.join(self.dir, "bad.yaml")
        with open(bad, "w") as f:
            f.write("switches: [\n")
        for config, message in ((os.path.join(self.dir, "missing.yaml"), "No such file"),
                                (bad, "bad YAML")):
            proc = common.run_tool_status(
                "experiment", "--config", config, "--cdf", WEBSEARCH, "--load", "0.1",
                "--duration", "0.01", "--out", os.path.join(self.dir, "x"))
            self.assert_one_line(proc, "experiment", message)
            proc = common.run_tool_status(
                "workload", "--cdf", WEBSEARCH, "--load", "0.1", "--link-rate", "10Gbps",
                "--hosts-from-config", config, "--duration", "1ms", "--out",
                os.path.join(self.dir, "wl"))
            self.assert_one_line(proc, "tools/workload", message)

    def test_fct_missing_input(self):
        proc = common.run_tool_status("fct", "--flows", os.path.join(self.dir, "flows.csv"),
                                      "--rx", "x.pcap", "--out", os.path.join(self.dir, "o"))
        self.assert_one_line(proc, "tools/fct", "flows.csv: No such file or directory")
        proc = common.run_tool_status("fct", "compare", self.dir, "--out", self.dir)
        self.assert_one_line(proc, "tools/fct", "summary.json: No such file or directory")

    def test_experiment_seeds_reports_the_failing_seed(self):
        out = os.path.join(self.dir, "incast")
        proc = common.run_tool_status(
            "experiment", "--config", LEAFSPINE, "--out", out, "--seeds", "1,2",
            "--schemes", "droptail", "--cdf", WEBSEARCH, "--load", "0.3", "--duration", "0.003",
            "--floor-seconds", "0", "--sluice", self.sluice, env=self.failing_sluice_env())
        log = os.path.join(out, "seed1", "droptail", "sluice.log")
        self.assert_one_line(proc, "experiment", "sluice failed (exit 1); see " + log)

    def test_reproduce_bfc_testbed_reports_the_failing_step(self):
        proc = common.run_tool_status(
            "reproduce", "bfc-testbed", "--out", os.path.join(self.dir, "tb"), "--duration",
            "5ms", "--floor-seconds", "0", "--sluice", self.sluice,
            env=self.failing_sluice_env())
        self.assert_one_line(proc, "reproduce", "tools/experiment failed (exit 1); see above")

    def test_reproduce_bfc_nic_queues(self):
        """The NIC's reply queue takes one of its queues: one queue alone is
        refused with the way out, before anything runs."""
        proc = common.run_tool_status("reproduce", "bfc", "--nic-queues", "1", "--out",
                                      os.path.join(self.dir, "none"))
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn("--nic-queues 1: the NIC's reply queue takes one, expected 2 or more "
                      "(or --nic-reply-queue off)", proc.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.dir, "none")))

    def test_reproduce_bfc_testbed_without_results(self):
        proc = common.run_tool_status("reproduce", "bfc-testbed", "--no-run", "--out",
                                      os.path.join(self.dir, "none"))
        self.assert_one_line(proc, "reproduce", "summary.json: No such file or directory")

    def test_unknown_entries(self):
        for tool in ("reproduce", "bench"):
            proc = common.run_tool_status(tool, "nope")
            self.assert_one_line(proc, tool, "unknown", status=2)
            proc = common.run_tool_status(tool, "--help")
            self.assertEqual(proc.returncode, 0, proc.stderr)

    def test_netns_bad_argument(self):
        # Refused before anything is made (and as a non-root user: "must run as root").
        proc = common.run_tool_status("netns", "up", "0")
        self.assert_one_line(proc, "tools/netns",
                             "N must be 1..256" if os.geteuid() == 0 else "must run as root")

    def test_pcap_writer_unwritable_output(self):
        proc = common.run_tool_status("workload", "default-pcaps", "--out-dir",
                                      "/proc/sluice-test/no")
        self.assert_one_line(proc, "tools/workload", "/proc/sluice-test")

    def test_ctrl_c(self):
        started = os.path.join(self.dir, "started")
        env = dict(os.environ, FAKE_SLUICE_SLEEP="60", FAKE_SLUICE_STARTED=started)
        proc = subprocess.Popen(
            [common.PYTHON, os.path.join(common.TOOLS, "experiment"), "--config", LEAFSPINE,
             "--schemes", "droptail", "--workload", self.small_workload(), "--floor-seconds", "0",
             "--sluice", self.sluice, "--out", os.path.join(self.dir, "x")],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
            start_new_session=True)
        try:
            deadline = time.monotonic() + 60
            while not os.path.exists(started) and time.monotonic() < deadline:
                time.sleep(0.05)
            self.assertTrue(os.path.exists(started), "the fake sluice never started")
            os.killpg(proc.pid, signal.SIGINT)  # as Ctrl-C reaches the whole group
            out, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        done = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
        self.assert_one_line(done, "experiment", "interrupted", status=cli.EXIT_INTERRUPTED)


class Describe(unittest.TestCase):
    def test_messages(self):
        cases = [
            (subprocess.CalledProcessError(2, ["/x/tools/workload", "--a"]),
             "workload failed (exit 2); see above"),
            (subprocess.CalledProcessError(-9, "ninja -C build"),
             "ninja failed (killed by signal 9); see above"),
            (FileNotFoundError(2, "No such file or directory", "conf/x.yaml"),
             "conf/x.yaml: No such file or directory"),
            (KeyError("switches"), "missing key 'switches'"),
            (KeyError("s2/r2 not in the configuration"), "s2/r2 not in the configuration"),
            (ValueError("bad rate 'x'\n(e.g. 10Gbps)"), "bad rate 'x'; (e.g. 10Gbps)"),
            (ModuleNotFoundError("no", name="scapy"),
             "Python module 'scapy' is missing (Debian: apt-get install python3-scapy)"),
            (cli.ToolError("tools/fct failed (exit 1); see above", 3),
             "tools/fct failed (exit 1); see above"),
        ]
        for e, text in cases:
            self.assertEqual(cli.describe(e), text)
        self.assertIsNone(cli.describe(TypeError("a bug")))  # keeps its traceback

    def test_wrapper_exit_status(self):
        code = ("import sys; sys.path.insert(0, %r)\n"
                "from sluicepy import cli\n"
                "def main(kind):\n"
                "    if kind == 'tool': raise cli.ToolError('limits', 3)\n"
                "    if kind == 'int': raise KeyboardInterrupt\n"
                "    if kind == 'bug': raise TypeError('a bug')\n"
                "    return 4\n"
                "cli.main_wrapper('t', main, sys.argv[1])\n" % common.TOOLS)
        for kind, status, err in (("tool", 3, "t: limits\n"), ("int", 130, "t: interrupted\n"),
                                  ("ok", 4, "")):
            proc = subprocess.run([sys.executable, "-c", code, kind], capture_output=True,
                                  text=True)
            self.assertEqual((proc.returncode, proc.stderr), (status, err), kind)
        proc = subprocess.run([sys.executable, "-c", code, "bug"], capture_output=True, text=True)
        self.assertIn("Traceback", proc.stderr)  # a bug in a tool is not hidden


if __name__ == "__main__":
    unittest.main()
