#!/usr/bin/python3
"""tools/bench soak: its judgements on made-up samples and summaries (a growing
RSS or mbuf pool fails, a port whose counters stop fails, a counter that
does not add up fails, an mbuf not returned fails), and one short real run
of the BFC fabric against build/switch/sluice that passes every check.

The real run is in real time, and its load is judged by what real time can
promise on a busy machine: each leaf's uplink was offered more than its
rate (BFC paused both its hosts, and nothing was dropped anywhere: BFC held
the excess at the hosts' NICs), and it carried at least half its rate over
the time its shaper did not lose. Not 95 % of the rate over the whole run,
as before: beside a CPU hog on every core the shaper lost 12 of the run's
16 s, the uplinks carried 20 % of 1 Gb/s over the run and 80 % over the
time not lost (BFC's 25 us hop RTT is then far below the worker's loop
gaps, so the uplinks idle between a resume and the next frame). Checked
on 2026-11-28 with BFC off (BFC disabled, plain NICs), beside the hogs:
the test fails with "{('leaf0', 'u'): {'queue_threshold': 2159631},
('leaf1', 'u'): {'queue_threshold': 2159631}} != {} : drops: BFC holds the
excess at the hosts"."""

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
            with open(os.path.join(out, "summary.json")) as f:
                self.check_uplinks_offered_more_than_their_rate(json.load(f))
            for name in ("samples.csv", "summary.json", "sluice.log"):
                self.assertTrue(os.path.exists(os.path.join(out, name)), name)

    def check_uplinks_offered_more_than_their_rate(self, summary):
        ports = {(sw["name"], p["name"]): p for sw in summary["switches"] for p in sw["ports"]}
        drops = {k: p["drops"] for k, p in ports.items() if p["drops"]}
        self.assertEqual(drops, {}, "drops: BFC holds the excess at the hosts")
        for leaf, hosts in (("leaf0", ("h0", "h1")), ("leaf1", ("h2", "h3"))):
            for h in hosts:
                self.assertGreater(ports[(leaf, h)].get("bfc_pause_sent", 0), 0,
                                   f"{leaf} never paused {h}: its uplink was not offered more "
                                   f"than its rate")
            # The uplink's rate over the time its shaper did not lose (a
            # gap of the worker beyond the bucket costs transmit time).
            u = ports[(leaf, "u")]
            bits = (u["tx_bytes"] + 24 * u["tx_packets"]) * 8
            interval = bits / u["tx_l1_bits_per_second"]
            lost = u["shaper_lost_ns"] * 1e-9
            kept = bits / (interval - lost)
            print(f"{leaf}/u: {u['tx_l1_bits_per_second'] / 1e6:.0f} Mb/s over {interval:.1f} s, "
                  f"{kept / 1e6:.0f} Mb/s over the {interval - lost:.1f} s not lost")
            self.assertGreater(kept, 0.5e9, f"{leaf}/u carried {kept / 1e6:.0f} Mb/s over the "
                                            f"{interval - lost:.1f} s its shaper did not lose")


if __name__ == "__main__":
    unittest.main()
