#!/usr/bin/python3
"""tools/flowtune-updates, one short real run (Hadoop, 4 hosts, 50 ms)
against build/switch/sluice and build/allocator/sluice-allocator: the edge
reported flowlets, the allocator answered, and the fractions it writes are
what its counters give (each datagram's payload plus 66 bytes on the wire,
over hosts x rate x duration)."""

import json
import os
import tempfile
import unittest

import common

SLUICE = os.environ.get("SLUICE_BINARY", os.path.join(common.ROOT, "build", "switch", "sluice"))
ALLOCATOR = os.path.join(os.path.dirname(os.path.dirname(SLUICE)), "allocator", "sluice-allocator")


class RealRun(unittest.TestCase):
    def test_fractions_follow_from_the_counters(self):
        for b in (SLUICE, ALLOCATOR):
            self.assertTrue(os.access(b, os.X_OK), f"{b} not built")
        with tempfile.TemporaryDirectory() as out:
            common.run_tool_serialised("flowtune-updates", "--out", out, "--cdfs", "fb_hadoop", "--hosts", "4",
                            "--duration", "0.05", "--floor-seconds", "0", "--allow-unfaithful",
                            "--sluice", SLUICE, "--allocator", ALLOCATOR)
            with open(os.path.join(out, "results.json")) as f:
                (row,) = json.load(f)["rows"]
            self.assertGreater(row["flowlets"], 10, row)
            self.assertEqual(row["starts_sent"], row["flowlets"])
            self.assertGreater(row["rate_updates"], 0, row)
            capacity_bits = 4 * 1e9 * 0.05
            with open(os.path.join(out, "fb_hadoop", "summary.json")) as f:
                ft = json.load(f)["switches"][0]["flowtune"]
            edge = (8 * ft["datagrams_sent"] + 16 * ft["starts_sent"] + 4 * ft["ends_sent"]
                    + 66 * ft["datagrams_sent"])
            self.assertAlmostEqual(row["edge_to_allocator_pct"], 100 * edge * 8 / capacity_bits,
                                   places=9)
            self.assertGreater(row["allocator_to_edge_pct"], 0)
            self.assertAlmostEqual(row["total_pct"],
                                   row["edge_to_allocator_pct"] + row["allocator_to_edge_pct"],
                                   places=9)
            self.assertTrue(os.path.exists(os.path.join(out, "results.md")))


if __name__ == "__main__":
    unittest.main()
