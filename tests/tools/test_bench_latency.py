#!/usr/bin/python3
"""tools/bench latency's pieces that need no DPDK: each scheme's one-port
switch loads in sluice's --check and routes the probes' prefix back out of
its memif port; a point's shortfall is put on the generator or on sluice by
what testpmd io got at the same rate; --rates is read or refused."""

import os
import subprocess
import tempfile
import types
import unittest

import common
from sluicepy import cli
from sluicepy.bench import latency

SLUICE = os.environ.get("SLUICE_BINARY", os.path.join(common.ROOT, "build", "switch", "sluice"))


class Configs(unittest.TestCase):
    def test_every_scheme_passes_check(self):
        args = types.SimpleNamespace(queues_per_port=0)
        with tempfile.TemporaryDirectory() as tmp:
            for scheme in latency.SCHEMES:
                with self.subTest(scheme=scheme):
                    path = os.path.join(tmp, scheme + ".yaml")
                    text = latency.dut_config(args, scheme, os.path.join(tmp, "m.sock"))
                    with open(path, "w") as f:
                        f.write(text)
                    r = subprocess.run([SLUICE, "--", "--config", path, "--check"],
                                       capture_output=True, text=True, timeout=60)
                    self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
                    self.assertIn("role=server", text)
                    self.assertIn("ports: [p0]", text)
                    self.assertEqual("bfc:" in text, scheme == "bfc")


class Bound(unittest.TestCase):
    def test_who_fell_short(self):
        self.assertEqual(latency.bound_note(10.0, 10.0, 9.8), "")
        self.assertEqual(latency.bound_note(10.0, 10.0, 8.0), " (sluice-bound)")
        self.assertEqual(latency.bound_note(20.0, 15.0, 12.0), " (source-bound)")


class Rates(unittest.TestCase):
    def test_read(self):
        self.assertEqual(latency.parse_rates("plain=26.2,bfc=13.25"),
                         {"plain": 26.2, "bfc": 13.25})
        self.assertEqual(latency.parse_rates(None), {})

    def test_refused(self):
        for bad in ("plain", "plain=x", "nosuch=3", "bfc=0"):
            with self.subTest(bad=bad), self.assertRaises(cli.ToolError):
                latency.parse_rates(bad)


if __name__ == "__main__":
    unittest.main()
