#!/usr/bin/python3
"""tools/sluicepy/fingerprint on hand-made run directories (no sluice runs):
the digests follow the captures, the completions, the queue trace and the
summary's fabric figures, and not the summary's machine figures; a
fingerprint file reads back; a comparison names every differing, missing
and new run."""

import json
import os
import tempfile
import unittest

import yaml

import common  # noqa: F401 (puts tools/ on the path)
from sluicepy import fingerprint

SUMMARY = {
    "duration_seconds": 0.2,
    "switches": [{"name": "s1", "ports": [{"name": "h0", "rx_packets": 10, "drops": {}}]}],
    "clock": {"mode": "exact", "fabric_seconds": 0.2, "transmissions": 10,
              "wall_seconds": 0.5},
    "workers": [{"lcore": 1, "cpu": 1, "involuntary_switches": 3}],
    "mbuf_pools": [{"socket": 0, "size": 65536, "in_use_after_drain": 0}],
}


class Digests(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.d = self.tmp.name
        conf = {"switches": [{"name": "s1", "ports": [
            {"name": "h0", "pcap": {"rx": "in/h0.pcap", "tx": "capture/rx_h0.pcap"}},
            {"name": "h1", "pcap": {"tx": "rx_h1.pcap"}},
            {"name": "u", "link": "s2/d"}]}],
            "transport": {"kind": "dctcp", "flows": "flows.csv",
                          "completions": "completions.csv"}}
        self.write("sluice.yaml", yaml.safe_dump(conf))
        self.write("capture/rx_h0.pcap", "h0 frames")
        self.write("rx_h1.pcap", "h1 frames")
        self.write("in/h0.pcap", "replayed")
        self.write("completions.csv", "flow_id\n1\n")
        self.write_summary(SUMMARY)

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, name, text):
        path = os.path.join(self.d, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)

    def write_summary(self, summary):
        self.write("summary.json", json.dumps(summary))

    def changed(self, edit):
        """The fields whose digests change when edit() changes the run."""
        before = fingerprint.run_digests(self.d)
        edit()
        after = fingerprint.run_digests(self.d)
        return sorted(k for k in fingerprint.FIELDS if before[k] != after[k])

    def test_every_output_counts(self):
        self.assertEqual(self.changed(lambda: self.write("rx_h1.pcap", "h1 frameS")),
                         ["captures"])
        self.assertEqual(self.changed(lambda: self.write("completions.csv", "flow_id\n2\n")),
                         ["completions"])
        self.assertEqual(self.changed(lambda: self.write("qt.csv", "t\n")), ["traces"])
        s = json.loads(json.dumps(SUMMARY))
        s["switches"][0]["ports"][0]["rx_packets"] = 11
        self.assertEqual(self.changed(lambda: self.write_summary(s)), ["summary"])

    def test_inputs_and_machine_figures_do_not(self):
        self.assertEqual(self.changed(lambda: self.write("in/h0.pcap", "other")), [])
        s = json.loads(json.dumps(SUMMARY))
        s["clock"]["wall_seconds"] = 9.0
        s["workers"][0]["involuntary_switches"] = 99
        s["mbuf_pools"][0]["size"] = 1024
        s = dict(reversed(list(s.items())))  # key order is not a fabric figure either
        self.assertEqual(self.changed(lambda: self.write_summary(s)), [])

    def test_none_and_missing(self):
        digests = fingerprint.run_digests(self.d)
        self.assertEqual(digests["traces"], fingerprint.NONE)
        os.remove(os.path.join(self.d, "completions.csv"))
        self.assertNotEqual(fingerprint.run_digests(self.d)["completions"],
                            digests["completions"])
        with open(os.path.join(self.d, "sluice.yaml"), "w") as f:
            yaml.safe_dump({"switches": [{"name": "s1", "ports": [{"name": "u"}]}]}, f)
        digests = fingerprint.run_digests(self.d)
        self.assertEqual((digests["captures"], digests["completions"]),
                         (fingerprint.NONE, fingerprint.NONE))


class Files(unittest.TestCase):
    def test_round_trip_and_differences(self):
        a = {"captures": "aa", "completions": "-", "summary": "bb", "traces": "-"}
        lines = ["# header", "", fingerprint.format_line("x/one", a),
                 fingerprint.format_line("x/two", a), fingerprint.format_line("y/three", a)]
        expected = fingerprint.parse_lines(lines)
        self.assertEqual(expected["x/one"], a)
        actual = {"x/one": dict(a, summary="cc"), "x/two": a, "x/four": a}
        self.assertEqual(fingerprint.differences(expected, expected), [])
        self.assertEqual(fingerprint.differences(expected, actual), [
            "x/four: not in the baseline (a new run)",
            "x/one: summary differ",
            "y/three: not run (in the baseline only)"])
        self.assertEqual(fingerprint.differences(expected, actual, {"x"}), [
            "x/four: not in the baseline (a new run)", "x/one: summary differ"])

    def test_bad_lines_are_refused(self):
        with self.assertRaises(fingerprint.cli.ToolError):
            fingerprint.parse_lines(["x/one captures"])
        with self.assertRaises(fingerprint.cli.ToolError):
            fingerprint.parse_lines(["x/one a=1", "x/one a=2"])


if __name__ == "__main__":
    unittest.main()
