#!/usr/bin/python3
"""tools/reproduce floodgate, a short incast-mix (0.1 ms of Poisson arrivals,
one 200-flow incast (10 MB), DCQCN over PFC without and with Floodgate) against
build/switch/sluice, in exact fabric time. Judged on every run:

- PFC loses nothing and every flow, Poisson and incast, finishes.
- Floodgate's rule bounds the incast receiver's queue: each of the four
  cores may have at most its window toward one destination outstanding
  (1.5 x the core-ToR hop's BDP + 10 us of 400 Gb/s, SPEC 4.1 and the
  authors' mix/floodgate-config), so the receiver's port holds at most
  4 windows; without Floodgate the 10 MB incast queues far beyond that.
- The paper's direction (section 5.2.1): with Floodgate the ToR-down
  maximum falls and the ToR-up maximum (where the VOQs hold the incast)
  rises.
- The hosts run the authors' ns-3 DCQCN (dcqcn.rules ns3-mlx, the window
  following the rate), and the switches have their PFC and ECN per port, by link rate:
  alpha 1/4 and 60,000 bytes of headroom on 100 Gb/s ports, alpha 1 and
  240,000 bytes on 400 Gb/s ones (8 x rate x 600 ns), a 4 KiB reserve and
  a 3 KiB resume offset; RED 1,600 / 6,400 KB on the 400 Gb/s ports.
- `--path-seed` gives the switches their own seed (ECMP salts, RED's
  coin) and leaves the flows those of the flow seed; `--ecmp ns3` routes
  as their configurations do (symmetric without Floodgate).
"""

import json
import os

import yaml
import tempfile
import unittest

import common
from sluicepy.reproduce import floodgate

SLUICE = os.environ.get("SLUICE_BINARY", os.path.join(common.ROOT, "build", "switch", "sluice"))
# Core -> ToR: 400 Gb/s, hop_rtt 1231 ns (conf/fabrics/floodgate-10tor-4core.yaml).
WINDOW_BYTES = 1.5 * 400e9 / 8 * 1231e-9 + 10e-6 * 400e9 / 8
CORES = 4


class FloodgateIncastMix(unittest.TestCase):
    def test_floodgate_bounds_the_receiver_and_moves_the_buffer_up(self):
        self.assertTrue(os.access(SLUICE, os.X_OK), f"{SLUICE} not built")
        with tempfile.TemporaryDirectory() as out:
            common.run_tool_serialised("reproduce", "floodgate", "--poisson-ms", "0.1",
                                       "--drain-ms", "2", "--incast-flows", "200",
                                       "--schemes", "dcqcn,dcqcn+fg", "--seeds", "1",
                                       "--path-seed", "7", "--ecmp", "ns3", "--out", out,
                                       "--sluice", SLUICE)
            with open(os.path.join(out, "results.json")) as f:
                rows = {r["scheme"]: r for r in json.load(f)["rows"]}
            with open(os.path.join(out, "seed1", "dcqcn", "sluice.yaml")) as f:
                conf = yaml.safe_load(f)
            with open(os.path.join(out, "seed1", "dcqcn+fg", "sluice.yaml")) as f:
                conf_fg = yaml.safe_load(f)
            with open(os.path.join(out, "seed1", "workload", "flows.csv")) as f:
                flows = f.read()
            args = floodgate.parse_args(["--poisson-ms", "0.1", "--incast-flows", "200",
                                         "--out", out])
            floodgate.make_flows(os.path.join(out, "seed1-flows.csv"), args, 1)
            with open(os.path.join(out, "seed1-flows.csv")) as f:
                self.assertEqual(f.read(), flows)
        self.assertEqual(conf["seed"], 7)
        self.assertEqual({r["path_seed"] for r in rows.values()}, {7})
        # --ecmp ns3: their routing, symmetric without Floodgate only.
        self.assertEqual(conf["ecmp_hash"], "symmetric")
        self.assertNotIn("ecmp_hash", conf_fg)
        self.assertEqual((rows["DCQCN"]["ecmp_hash"], rows["DCQCN+FG"]["ecmp_hash"]),
                         ("symmetric", "per-switch"))
        ports = {p["rate"]: p for sw in conf["switches"] for p in sw["ports"]}
        self.assertEqual(ports["100Gbps"]["pfc"], {"alpha": 0.25, "headroom": "60000B",
                                                   "reserve": "4096B", "hysteresis": "3072B"})
        self.assertNotIn("ecn", ports["100Gbps"])  # the switch's: 400 / 1,600 KB
        self.assertEqual(ports["400Gbps"]["pfc"], {"alpha": 1.0, "headroom": "240000B",
                                                   "reserve": "4096B", "hysteresis": "3072B"})
        self.assertEqual(ports["400Gbps"]["ecn"],
                         {"mode": "red", "min": "1600KB", "max": "6400KB", "pmax": 0.2})
        # Their DCQCN: the ns-3 reaction point and the window that follows the rate.
        self.assertEqual(conf["transport"]["dcqcn"]["rules"], "ns3-mlx")
        self.assertEqual(conf["transport"]["dcqcn"]["decrease_interval"], "4us")
        self.assertEqual(conf["transport"]["rdma"]["window_follows_rate"], True)
        self.assertEqual(conf["transport"]["rdma"]["window"], "65000B")
        self.assertEqual(set(rows), {"DCQCN", "DCQCN+FG"})
        for r in rows.values():
            self.assertEqual(r["drops"], {}, r)
            self.assertEqual(r["incast_flows"], 200, r)
            self.assertGreater(r["poisson_flows"], 50, r)
            self.assertEqual(r["poisson_unfinished"] + r["incast_unfinished"], 0, r)
        plain, fg = rows["DCQCN"], rows["DCQCN+FG"]
        bound_kb = CORES * WINDOW_BYTES / 1e3
        self.assertLessEqual(fg["max_receiver_port_kb"], bound_kb, fg)
        self.assertGreater(plain["max_receiver_port_kb"], bound_kb, plain)
        self.assertLess(fg["max_tor_down_kb"], plain["max_tor_down_kb"], (plain, fg))
        self.assertGreater(fg["max_tor_up_kb"], plain["max_tor_up_kb"], (plain, fg))


if __name__ == "__main__":
    unittest.main()
