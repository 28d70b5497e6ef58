#!/usr/bin/python3
"""tools/bench soak: its judgements on made-up samples and summaries (a growing
RSS or mbuf pool fails, a port whose counters stop fails, a counter that
does not add up fails, an mbuf not returned fails), and one short real run
of the BFC fabric against build/switch/sluice that passes every check."""

import json
import os
import tempfile
import types
import unittest

import common
from sluicepy.bench import soak

SLUICE = os.environ.get("SLUICE_BINARY", os.path.join(common.ROOT, "build", "switch", "sluice"))


def rows(rss, pool, tx=None):
    """Samples 1 s apart; tx: per sample, {port: count} (rx the same)."""
    out = []
    for i, (r, p) in enumerate(zip(rss, pool)):
        counts = tx[i] if tx else {"s/a": 100 * (i + 1)}
        out.append({"t_s": float(i), "rss_bytes": r, "pool_in_use": p, "pool_size": 1000,
                    "tx": dict(counts), "rx": dict(counts)})
    return out


def port(**kw):
    p = {"rx_packets": 0, "tx_packets": 0, "tx_generated_packets": 0, "queued_at_stop": 0,
         "rx_consumed_packets": 0, "drops": {}}
    p.update(kw)
    return p


class Judgements(unittest.TestCase):
    def setUp(self):
        self.t = soak
        self.a = types.SimpleNamespace(warmup_s=2.0, rss_slack_bytes=1000, pool_slack=0.02)

    def passes(self, checks):
        return {c["check"]: c["pass"] for c in checks}

    def test_flat_memory_passes_and_growth_fails(self):
        flat = rows([5000, 9000, 5000, 5100, 5500, 5600], [10, 99, 30, 40, 30, 45])
        self.assertEqual(self.passes(self.t.check_memory(flat, self.a)),
                         {"RSS flat": True, "mbuf pool in use flat": True})
        # The warm-up's samples (t < 2 s) are not judged: 9000 and 99 above.
        grow = rows([0, 0, 5000, 5100, 6000, 6200], [0, 0, 10, 20, 30, 41])
        self.assertEqual(self.passes(self.t.check_memory(grow, self.a)),
                         {"RSS flat": False, "mbuf pool in use flat": False})
        short = rows([1, 1, 1], [1, 1, 1])
        self.assertFalse(any(c["pass"] for c in self.t.check_memory(short, self.a)))

    def test_a_port_that_stops_is_a_stall(self):
        ok = rows([1] * 3, [1] * 3, [{"s/a": 1, "s/b": 1}, {"s/a": 2, "s/b": 2},
                                     {"s/a": 3, "s/b": 3}])
        self.assertTrue(self.t.check_stalls(ok)[0]["pass"])
        stuck = rows([1] * 3, [1] * 3, [{"s/a": 1, "s/b": 1}, {"s/a": 2, "s/b": 2},
                                        {"s/a": 3, "s/b": 2}])
        c = self.t.check_stalls(stuck)[0]
        self.assertFalse(c["pass"])
        self.assertIn("s/b tx between 1.0 s and 2.0 s", c["detail"])
        self.assertFalse(self.t.check_stalls(ok[:1])[0]["pass"])

    def test_conservation_is_exact(self):
        sw = {"name": "leaf0", "ports": [
            port(rx_packets=100, tx_packets=7, tx_generated_packets=2, rx_consumed_packets=4),
            port(rx_packets=10, tx_packets=90, drops={"queue_full": 3}, queued_at_stop=3)]}
        # rx 110 = out (7 - 2 + 90) + drops 3 + queued 3 + consumed 4 - 5: off by 5.
        self.assertFalse(self.t.check_conservation({"switches": [sw]})[0]["pass"])
        sw["ports"][1]["drops"]["queue_full"] = 8
        c = self.t.check_conservation({"switches": [sw]})[0]
        self.assertTrue(c["pass"], c)
        self.assertIn("{'queue_full': 8}", c["detail"])

    def test_mbufs_not_returned(self):
        ok = {"mbuf_pools": [{"socket": 0, "size": 8, "in_use_after_drain": 0}]}
        self.assertTrue(self.t.check_pool_returned(ok)[0]["pass"])
        ok["mbuf_pools"][0]["in_use_after_drain"] = 1
        self.assertFalse(self.t.check_pool_returned(ok)[0]["pass"])
        self.assertFalse(self.t.check_pool_returned({})[0]["pass"])


class RealRun(unittest.TestCase):
    def test_a_short_soak_passes(self):
        self.assertTrue(os.access(SLUICE, os.X_OK), f"{SLUICE} not built")
        with tempfile.TemporaryDirectory() as out:
            common.run_tool_serialised("bench", "soak", "--minutes", "0.25", "--interval", "2s",
                                       "--warmup", "4s", "--out", out, "--sluice", SLUICE)
            with open(os.path.join(out, "result.json")) as f:
                res = json.load(f)
            self.assertTrue(res["pass"], res["checks"])
            names = [c["check"] for c in res["checks"]]
            self.assertEqual(names, ["RSS flat", "mbuf pool in use flat",
                                     "every mbuf returned at stop", "leaf0 counters conserve",
                                     "leaf1 counters conserve", "spine counters conserve",
                                     "no port stalls"])
            self.assertGreaterEqual(res["samples"], 7)
            # Full rate: each leaf's uplink carries at least 95 % of 1 Gb/s of
            # 1514-byte frames (81,274 frames/s on the wire).
            for up in ("leaf0/u", "leaf1/u"):
                self.assertGreater(res["tx_frames_per_second"][up], 0.95 * 81274, up)
            for name in ("samples.csv", "summary.json", "sluice.log"):
                self.assertTrue(os.path.exists(os.path.join(out, name)), name)


if __name__ == "__main__":
    unittest.main()
