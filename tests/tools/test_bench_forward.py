#!/usr/bin/python3
"""tools/bench forward's pieces that need no DPDK: the live-table parser
(one port, or several summed per table), the configuration of each scheme
(it loads in sluice's --check, with the workers the scheme names), and the
capture whose destinations the spread schemes move (every IPv4 header
checksum still right, every other byte the same)."""

import os
import struct
import subprocess
import tempfile
import types
import unittest

import common
from sluicepy.bench import forward, forward_pcap

SLUICE = os.environ.get("SLUICE_BINARY", os.path.join(common.ROOT, "build", "switch", "sluice"))

TABLE = """\
            bench/p0            1.000     0.000      0.000     0.000         0.0   1   1
            bench/p1            0.000     0.000     17.407     8.356         0.0   2   2
            bench/p2            0.000     0.000      3.500     1.000         0.0   3   3
            bench/p0            1.000     0.000      0.000     0.000         0.0   1   1
            bench/p1            0.000     0.000     16.301     7.824         0.0   2   2
            bench/p2            0.000     0.000      4.000     1.000         0.0   3   3
"""


def read(path):
    with open(path, "rb") as f:
        return f.read()


def ones_complement_ok(header):
    total = sum(struct.unpack(">10H", header))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return total == 0xFFFF


class Parser(unittest.TestCase):
    def feed(self, parse):
        return [v for v in map(parse, TABLE.splitlines()) if v is not None]

    def test_one_port(self):
        self.assertEqual(self.feed(forward.sluice_parser()), [17.407, 16.301])

    def test_ports_summed_per_table(self):
        got = self.feed(forward.sluice_parser(("bench/p1", "bench/p2")))
        self.assertEqual([round(v, 3) for v in got], [20.907, 20.301])


class Configs(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.pcap = forward_pcap.write(self.tmp.name, sizes=(64,))[0]

    def tearDown(self):
        self.tmp.cleanup()

    def test_moved_destinations(self):
        out = os.path.join(self.tmp.name, "moved.pcap")
        forward.moved_destinations(self.pcap, out)
        before, after = read(self.pcap), read(out)
        self.assertEqual(len(before), len(after))
        at, frames = 24, 0
        while at < len(after):
            incl = int.from_bytes(after[at + 8:at + 12], "little")
            a, b = before[at + 16:at + 16 + incl], after[at + 16:at + 16 + incl]
            self.assertEqual(b[:14], a[:14])
            self.assertEqual(b[30:32], bytes([10, 3]), "destination moved to 10.3.0.0/16")
            self.assertEqual(b[32:34], a[32:34])
            self.assertEqual(b[34:], a[34:])
            self.assertTrue(ones_complement_ok(b[14:34]), "IPv4 header checksum")
            at += 16 + incl
            frames += 1
        self.assertEqual(frames, 1024)

    def test_every_scheme_passes_check(self):
        args = types.SimpleNamespace(queues_per_port=0)
        for scheme in forward.SCHEMES:
            with self.subTest(scheme=scheme):
                path = os.path.join(self.tmp.name, scheme + ".yaml")
                with open(path, "w") as f:
                    f.write(forward.sluice_config(args, scheme, self.pcap))
                r = subprocess.run([SLUICE, "--", "--config", path, "--check"],
                                   capture_output=True, text=True, timeout=60)
                self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
                with open(path) as f:
                    text = f.read()
                self.assertEqual("receive: [bench/p0]" in text, scheme in forward.SHARED)
                # Only plain-ring keeps every packet in its queue (a queue standing).
                self.assertEqual("cut_through: false" in text, scheme == "plain-ring")


if __name__ == "__main__":
    unittest.main()
