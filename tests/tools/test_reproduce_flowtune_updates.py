#!/usr/bin/python3
"""tools/reproduce flowtune-updates, short runs (Hadoop, 4 hosts, 50 ms) against
build/switch/sluice: in exact time with the allocator in the fabric (the
default), and in real time with build/allocator/sluice-allocator. In both
the edge reported flowlets, the allocator answered, and the fractions the
tool writes are what the counters give (each datagram's payload plus 66
bytes on the wire, over hosts x rate x duration); in exact time nothing was
lost on the control path and the run is valid by construction."""

import json
import os
import tempfile
import unittest

import common

SLUICE = os.environ.get("SLUICE_BINARY", os.path.join(common.ROOT, "build", "switch", "sluice"))
ALLOCATOR = os.path.join(os.path.dirname(os.path.dirname(SLUICE)), "allocator", "sluice-allocator")
CAPACITY_BITS = 4 * 1e9 * 0.05


class RealRun(unittest.TestCase):
    def run_tool(self, out, *extra):
        common.run_tool_serialised("reproduce", "flowtune-updates", "--out", out, "--cdfs", "fb_hadoop",
                                   "--hosts", "4", "--duration", "0.05", "--sluice", SLUICE,
                                   *extra)
        with open(os.path.join(out, "results.json")) as f:
            res = json.load(f)
        (row,) = res["rows"]
        with open(os.path.join(out, "fb_hadoop", "summary.json")) as f:
            summary = json.load(f)
        ft = summary["switches"][0]["flowtune"]
        self.assertGreater(row["flowlets"], 10, row)
        self.assertEqual(row["starts_sent"], row["flowlets"])
        self.assertGreater(row["rate_updates"], 0, row)
        edge = (8 * ft["datagrams_sent"] + 16 * ft["starts_sent"] + 4 * ft["ends_sent"]
                + 66 * ft["datagrams_sent"])
        self.assertAlmostEqual(row["edge_to_allocator_pct"], 100 * edge * 8 / CAPACITY_BITS,
                               places=9)
        self.assertGreater(row["allocator_to_edge_pct"], 0)
        self.assertAlmostEqual(row["total_pct"],
                               row["edge_to_allocator_pct"] + row["allocator_to_edge_pct"],
                               places=9)
        self.assertTrue(os.path.exists(os.path.join(out, "results.md")))
        return res, row, summary

    def test_exact_time_with_the_allocator_in_the_fabric(self):
        self.assertTrue(os.access(SLUICE, os.X_OK), f"{SLUICE} not built")
        with tempfile.TemporaryDirectory() as out:
            res, row, summary = self.run_tool(out)
            self.assertTrue(res["gate"]["valid"], res["gate"])
            self.assertEqual(row["clock"], "exact")
            self.assertEqual(row["iteration"], "10us")
            ft = summary["switches"][0]["flowtune"]
            alloc = summary["flowtune_allocator"]
            self.assertEqual(alloc["flowlets_started"], row["flowlets"])
            self.assertEqual(alloc["news_lost"] + alloc["rates_lost"] + ft["events_lost"], 0)
            self.assertEqual(row["rate_updates"], alloc["rate_updates"])
            self.assertEqual(alloc["rates_delivered"],
                             ft["rate_updates"] + ft["stale_rate_updates"])
            # RATE_UPDATE datagrams as sluice-allocator sends them: 8-byte
            # header, 8 per entry, IPv4 and UDP (28) counted by the
            # allocator, Ethernet, FCS, preamble and gap (38) by the tool.
            self.assertEqual(alloc["update_bytes"],
                             36 * alloc["update_messages"] + 8 * alloc["rate_updates"])
            wire = alloc["update_bytes"] + 38 * alloc["update_messages"]
            self.assertAlmostEqual(row["allocator_to_edge_pct"], 100 * wire * 8 / CAPACITY_BITS,
                                   places=9)

    def test_real_time_with_sluice_allocator(self):
        for b in (SLUICE, ALLOCATOR):
            self.assertTrue(os.access(b, os.X_OK), f"{b} not built")
        with tempfile.TemporaryDirectory() as out:
            # Counters only, no timing: the gate's verdict is not asserted.
            _, row, summary = self.run_tool(out, "--clock", "real", "--floor-seconds", "0",
                                            "--allow-unfaithful", "--allocator", ALLOCATOR)
            self.assertEqual(row["clock"], "real")
            self.assertNotIn("flowtune_allocator", summary)


if __name__ == "__main__":
    unittest.main()
