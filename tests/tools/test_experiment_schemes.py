#!/usr/bin/python3
"""tools/experiment's schemes: what each sets in the switches (ECN, PFC,
BFC, Floodgate, DIBS, TCD, Flowtune) and in the replaying hosts' NICs (docs/configuration.md "The host NIC"), checked on
conf/leafspine.yaml and validated by sluice's own --check, in both clocks;
the flowtune scheme's allocator in the fabric in exact time, and in real
time its sluice-allocator started, stopped and judged, with a fake sluice
and a fake allocator."""

import contextlib
import io
import json
import os
import struct
import subprocess
import tempfile
import unittest

import yaml

import common

# meson passes the binary it built (tests/tools/meson.build).
SLUICE = os.environ.get("SLUICE_BINARY", os.path.join(common.ROOT, "build", "switch", "sluice"))


class Schemes(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        from sluicepy import experiment
        cls.exp = experiment
        with open(os.path.join(common.ROOT, "conf", "leafspine.yaml")) as f:
            cls.conf = yaml.safe_load(f)

    def args(self, *extra):
        return self.exp.parse_args(["--config", "x", "--workload", "w", "--out", "o"] + list(extra))

    def scheme_args(self, scheme, clock="exact"):
        return self.args("--clock", clock)

    def nics(self, conf):
        """{switch/port: nic} of the replaying host ports, and of the others."""
        hosts, others = {}, {}
        for sw in conf["switches"]:
            for p in sw["ports"]:
                key = "%s/%s" % (sw["name"], p["name"])
                replaying = p.get("role") == "host" and "rx" in (p.get("pcap") or {})
                (hosts if replaying else others)[key] = p.get("nic")
        return hosts, others

    def test_each_scheme_sets_its_host_nic(self):
        want = {"droptail": {"mode": "plain"}, "pfc": {"mode": "plain"},
                "bfc": {"mode": "bfc", "queue_by": "flow"},
                "bfc-stochastic": {"mode": "bfc", "queue_by": "flow"},
                "bfc+pfc": {"mode": "bfc", "queue_by": "flow"},
                "bfc-open-loop": {"mode": "plain"}, "floodgate": {"mode": "plain"},
                "floodgate+pfc": {"mode": "plain"}, "floodgate-dstpause": {"mode": "floodgate"},
                "dibs": {"mode": "plain"}, "dibs-load-aware": {"mode": "plain"},
                "tcd+pfc": {"mode": "plain"}, "tcd+bfc": {"mode": "bfc", "queue_by": "flow"},
                "flowtune": {"mode": "plain"}}
        for scheme, nic in want.items():
            conf = self.exp.apply_scheme(self.conf, scheme, self.args())
            hosts, others = self.nics(conf)
            self.assertEqual(len(hosts), 8, scheme)
            self.assertEqual(set(map(json.dumps, hosts.values())), {json.dumps(nic)}, scheme)
            self.assertEqual(set(others.values()), {None}, scheme)
            self.assertEqual({sw["bfc"]["enabled"] for sw in conf["switches"]},
                             {scheme.startswith("bfc") or scheme == "tcd+bfc"}, scheme)
            self.assertEqual({sw["floodgate"]["enabled"] for sw in conf["switches"]},
                             {scheme.startswith("floodgate")}, scheme)
            self.assertEqual({sw["floodgate"].get("dst_pause", False) for sw in conf["switches"]},
                             {scheme == "floodgate-dstpause"}, scheme)
            self.assertEqual({sw["dibs"]["enabled"] for sw in conf["switches"]},
                             {scheme.startswith("dibs")}, scheme)
            self.assertEqual({sw["tcd"]["enabled"] for sw in conf["switches"]},
                             {scheme.startswith("tcd")}, scheme)

    def test_queueing_schemes(self):
        """The queueing-by-flow schemes set every switch's queueing section
        (and PFC only for sfq+pfc); every other scheme queues by class."""
        want = {"sfq": {"mode": "sfq", "queues": 32},
                "sfq+pfc": {"mode": "sfq", "queues": 32},
                "ideal-fq": {"mode": "fq", "buffer": "unlimited"},
                "sfq-codel": {"mode": "sfq", "queues": 32,
                              "codel": {"target": "5us", "interval": "100us"}},
                "pfabric": {"mode": "pfabric", "buffer": "36KB"}}
        for scheme in self.exp.SCHEMES:
            conf = self.exp.apply_scheme(self.conf, scheme, self.args())
            for sw in conf["switches"]:
                self.assertEqual(sw.get("queueing"), want.get(scheme), scheme)
                if scheme in want:
                    self.assertEqual("pfc" in sw, scheme == "sfq+pfc", scheme)
                    self.assertFalse(sw["bfc"]["enabled"], scheme)
        conf = self.exp.apply_scheme(self.conf, "sfq-codel", self.args(
            "--sfq-queues", "128", "--codel-target", "20us", "--codel-interval", "400us"))
        self.assertEqual(conf["switches"][0]["queueing"],
                         {"mode": "sfq", "queues": 128,
                          "codel": {"target": "20us", "interval": "400us"}})

    def test_transport_section(self):
        """--transport: every host port stops replaying and runs it; the
        section names the workload's flow list and the completions file;
        --transport-param sets (dotted) keys; hpcc turns on INT everywhere;
        the NICs still follow the scheme."""
        args = self.args("--clock", "exact", "--transport", "hpcc", "--base-rtt", "12us",
                         "--transport-param", "mss=1400",
                         "--transport-param", "hpcc.eta=0.9",
                         "--transport-param", "rdma.nack_once_per_gap=false")
        conf = self.exp.apply_scheme(self.conf, "bfc", args)
        t = conf["transport"]
        self.assertEqual(t, {"kind": "hpcc", "flows": "workload/flows.csv",
                             "completions": "completions.csv", "base_rtt": "12us", "mss": 1400,
                             "hpcc": {"eta": 0.9}, "rdma": {"nack_once_per_gap": False}})
        hosts = [p for sw in conf["switches"] for p in sw["ports"] if p.get("role") == "host"]
        self.assertEqual(len(hosts), 8)
        for p in hosts:
            self.assertNotIn("rx", p["pcap"])
            self.assertEqual(p["nic"], {"mode": "bfc", "queue_by": "flow"})
        self.assertTrue(all(sw["int"] == {"enabled": True} for sw in conf["switches"]))
        plain = self.exp.apply_scheme(self.conf, "droptail", self.args("--clock", "exact"))
        self.assertNotIn("transport", plain)
        self.assertTrue(all("int" not in sw for sw in plain["switches"]))

    def test_transport_refusals(self):
        for argv in (["--transport", "dctcp", "--clock", "real"],
                     ["--transport-param", "tcp.min_rto=1ms"],
                     ["--transport", "dctcp", "--clock", "exact", "--transport-param", "oops"],
                     ["--transport", "quic"]):
            with self.assertRaises(SystemExit, msg=argv):
                with contextlib.redirect_stderr(io.StringIO()):
                    self.args(*argv)

    def test_dibs_and_tcd_schemes(self):
        """What the DIBS and TCD schemes set besides their sections: ECN step
        at --ecn-k on each (TCD's default q_th), PFC only with tcd+pfc, and
        the DIBS policy."""
        want = {"dibs": (None, "random"), "dibs-load-aware": (None, "load_aware"),
                "tcd+pfc": ({"mode": "pfc", "xoff": "30KB"}, None),
                "tcd+bfc": (None, None)}
        args = self.args("--ecn-k", "20KB", "--pfc-xoff", "30KB")
        for scheme, (pfc, policy) in want.items():
            conf = self.exp.apply_scheme(self.conf, scheme, args)
            for sw in conf["switches"]:
                self.assertEqual(sw["ecn"], {"mode": "step", "k": "20KB"}, scheme)
                self.assertEqual(sw.get("pfc"), pfc, scheme)
                self.assertEqual(sw["dibs"].get("policy"), policy, scheme)
                self.assertEqual(sw["tcd"], {"enabled": scheme.startswith("tcd")}, scheme)

    def test_configured_sections_are_kept_and_turned_off(self):
        """A dibs or tcd section in the configuration keeps its keys; every
        scheme not about it turns it off (it must not leak into, e.g., pfc,
        which sluice would refuse with DIBS), and the DIBS schemes set the
        policy."""
        conf = json.loads(json.dumps(self.conf))
        for sw in conf["switches"]:
            sw["dibs"] = {"max_detours": 8, "policy": "load_aware"}
            sw["tcd"] = {"q_th": "40KB", "queue_falling": True}
        for scheme in self.exp.SCHEMES:
            out = self.exp.apply_scheme(conf, scheme, self.args())
            for sw in out["switches"]:
                self.assertEqual(sw["dibs"]["max_detours"], 8, scheme)
                self.assertEqual(sw["dibs"]["enabled"], scheme.startswith("dibs"), scheme)
                self.assertEqual(sw["tcd"], {"q_th": "40KB", "queue_falling": True,
                                             "enabled": scheme.startswith("tcd")}, scheme)
        out = self.exp.apply_scheme(conf, "dibs", self.args())
        self.assertEqual({sw["dibs"]["policy"] for sw in out["switches"]}, {"random"})

    def test_host_nic_override_and_configured_keys(self):
        conf = json.loads(json.dumps(self.conf))
        conf["switches"][0]["ports"][0]["nic"] = {"queue_by": "destination", "queues": 8}
        out = self.exp.apply_scheme(conf, "bfc", self.args())
        self.assertEqual(out["switches"][0]["ports"][0]["nic"],
                         {"queue_by": "destination", "queues": 8, "mode": "bfc"})
        out = self.exp.apply_scheme(conf, "bfc", self.args("--host-nic", "plain"))
        self.assertEqual({n["mode"] for n in self.nics(out)[0].values()}, {"plain"})
        # A BFC NIC needs a BFC switch: --host-nic bfc leaves plain NICs elsewhere.
        out = self.exp.apply_scheme(conf, "pfc", self.args("--host-nic", "bfc"))
        self.assertEqual({n["mode"] for n in self.nics(out)[0].values()}, {"plain"})

    def test_flowtune_scheme(self):
        """flowtune: the leaves (host ports) pace at the given allocator with
        the allocator's lease, the spines (none) keep it off, as sluice
        requires; nothing else on, plain NICs, the real clock."""
        args = self.args("--clock", "real", "--flowtune-lease", "20ms")
        conf = self.exp.apply_scheme(self.conf, "flowtune", args, "127.0.0.1:4321")
        self.assertEqual(conf["clock"], {"mode": "real"})
        sections = {sw["name"]: sw["flowtune"] for sw in conf["switches"]}
        self.assertEqual(sections, {
            "leaf0": {"enabled": True, "allocator": "127.0.0.1:4321", "lease": "20ms"},
            "leaf1": {"enabled": True, "allocator": "127.0.0.1:4321", "lease": "20ms"},
            "spine0": {"enabled": False}, "spine1": {"enabled": False}})
        for sw in conf["switches"]:
            self.assertNotIn("ecn", sw)
            self.assertNotIn("pfc", sw)
            for name in ("bfc", "floodgate", "dibs", "tcd"):
                self.assertFalse(sw[name]["enabled"], sw["name"] + " " + name)
        hosts, _ = self.nics(conf)
        self.assertEqual(set(map(json.dumps, hosts.values())), {json.dumps({"mode": "plain"})})

    def test_flowtune_section_kept_and_off_in_other_schemes(self):
        """A flowtune section in the configuration keeps its keys; every other
        scheme turns it off (sluice refuses it in exact time and beside
        floodgate), flowtune sets the allocator and lease over it."""
        conf = json.loads(json.dumps(self.conf))
        for sw in conf["switches"]:
            sw["flowtune"] = {"max_held_packets": 128, "lease": "50ms"}
        for scheme in self.exp.SCHEMES:
            out = self.exp.apply_scheme(conf, scheme, self.scheme_args(scheme), "127.0.0.1:9")
            for sw in out["switches"]:
                on = scheme == "flowtune" and sw["name"].startswith("leaf")
                self.assertEqual(sw["flowtune"]["enabled"], on, scheme + " " + sw["name"])
                self.assertEqual(sw["flowtune"]["max_held_packets"], 128, scheme)
                self.assertEqual(sw["flowtune"]["lease"], "10ms" if on else "50ms", scheme)

    def test_flowtune_scheme_in_exact_time(self):
        """flowtune in exact time (the default clock): the allocator in the
        fabric, at the paper's 10 us and the control delay given, for the
        host ports' rate; the edges name no UDP allocator; other schemes
        drop a flowtune_allocator section of the configuration."""
        args = self.args("--flowtune-control-delay", "5us")
        self.assertEqual(args.flowtune_iteration, "10us")
        self.assertEqual(self.args("--clock", "real").flowtune_iteration, "200us")
        conf = self.exp.apply_scheme(self.conf, "flowtune", args, "127.0.0.1:4321")
        self.assertEqual(conf["clock"], {"mode": "exact"})
        self.assertEqual(conf["flowtune_allocator"],
                         {"control_delay": "5us", "iteration": "10us", "host_rate": "10Gbps"})
        sections = {sw["name"]: sw["flowtune"] for sw in conf["switches"]}
        self.assertEqual(sections, {
            "leaf0": {"enabled": True, "lease": "10ms"},
            "leaf1": {"enabled": True, "lease": "10ms"},
            "spine0": {"enabled": False}, "spine1": {"enabled": False}})
        out = self.exp.apply_scheme(conf, "droptail", args)
        self.assertNotIn("flowtune_allocator", out)
        self.assertFalse(any(sw["flowtune"]["enabled"] for sw in out["switches"]))

    def test_allocator_host_rate(self):
        self.assertEqual(self.exp.allocator_host_rate(self.conf), "10Gbps")
        conf = json.loads(json.dumps(self.conf))
        conf["switches"][1]["ports"][2]["rate"] = "25Gbps"
        with self.assertRaisesRegex(self.exp.cli.ToolError, "different rates.*25Gbps at leaf1/h6"):
            self.exp.allocator_host_rate(conf)
        del conf["switches"][0]["ports"][0]["rate"]
        with self.assertRaisesRegex(self.exp.cli.ToolError, "leaf0/h0 has no rate"):
            self.exp.allocator_host_rate(conf)
        conf = {"switches": [sw for sw in self.conf["switches"] if sw["name"].startswith("spine")]}
        with self.assertRaisesRegex(self.exp.cli.ToolError, "no host ports"):
            self.exp.allocator_host_rate(conf)

    def check(self, conf, name, tmp):
        """sluice --check on the configuration, run in tmp with an empty
        capture (a pcap header) at every path it replays, as --check opens
        them: (exit status, its output)."""
        path = os.path.join(tmp, name + ".yaml")
        with open(path, "w") as f:
            yaml.safe_dump(conf, f)
        for sw in conf["switches"]:
            for port in sw["ports"]:
                rx = (port.get("pcap") or {}).get("rx")
                if rx:
                    rx_path = os.path.join(tmp, rx)
                    os.makedirs(os.path.dirname(rx_path), exist_ok=True)
                    with open(rx_path, "wb") as f:
                        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        proc = subprocess.run(
            [SLUICE, "--no-huge", "-m", "512", "--no-pci", "-l", "0",
             "--file-prefix", "tools-schemes-%d" % os.getpid(), "--",
             "--config", path, "--check"], capture_output=True, text=True, timeout=60,
            cwd=tmp)
        return proc.returncode, proc.stdout + proc.stderr

    def test_pfc_profiles(self):
        """--pfc-profile writes each PFC port's own alpha, headroom, reserve
        and resume offset as the public simulators' ns-3 computes them
        (docs/mechanisms/pfc.md, "Per port"); sluice --check accepts them."""
        from sluicepy import pfc_profiles
        v = pfc_profiles.port_values
        # Floodgate's fabric: 100G hosts, 400G cores, 600 ns links.
        self.assertEqual(v("floodgate-ns3", 100 * 10**9, 600, 100 * 10**9),
                         {"alpha": 0.25, "headroom": 60000, "reserve": 4096, "hysteresis": 3072})
        self.assertEqual(v("floodgate-ns3", 400 * 10**9, 600, 100 * 10**9)["alpha"], 1.0)
        self.assertEqual(v("floodgate-ns3", 400 * 10**9, 600, 100 * 10**9)["headroom"], 240000)
        self.assertEqual(v("hpcc-ns3", 400 * 10**9, 1000, 100 * 10**9)["alpha"], 0.5)
        self.assertEqual(v("hpcc-ns3", 400 * 10**9, 1000, 100 * 10**9)["headroom"], 150000)
        self.assertEqual(v("hpcc-ns3", 25 * 10**9, 1000, 100 * 10**9)["alpha"], 0.125)
        with tempfile.TemporaryDirectory() as tmp:
            for profile, alpha, headroom in (("floodgate-ns3", 0.25, "10000B"),
                                             ("hpcc-ns3", 0.125, "3750B")):
                conf = self.exp.apply_scheme(self.conf, "pfc",
                                             self.args("--pfc-profile", profile))
                leaf = conf["switches"][0]
                self.assertEqual(leaf["pfc"]["xoff"], "dynamic")
                ports = {p["name"]: p["pfc"] for p in leaf["ports"]}
                # 10 Gb/s links of 1 us; host ports without a delay get none.
                self.assertEqual(ports["u0"], {"alpha": alpha, "headroom": headroom,
                                               "reserve": "4096B", "hysteresis": "3072B"})
                self.assertEqual(ports["h0"]["headroom"], "0B")
                rc, out = self.check(conf, profile, tmp)
                self.assertEqual(rc, 0, profile + ": " + out)
                # A scheme without PFC leaves no port's own settings behind.
                plain = self.exp.apply_scheme(conf, "droptail", self.args())
                self.assertFalse(any("pfc" in p for sw in plain["switches"]
                                     for p in sw["ports"]))

    def test_sluice_accepts_every_scheme(self):
        self.assertTrue(os.path.exists(SLUICE), "no sluice binary at " + SLUICE)
        with tempfile.TemporaryDirectory() as tmp:
            for clock in ("exact", "real"):
                for scheme in self.exp.SCHEMES:
                    conf = self.exp.apply_scheme(self.conf, scheme,
                                                 self.scheme_args(scheme, clock))
                    rc, out = self.check(conf, scheme, tmp)
                    self.assertEqual(rc, 0, clock + " " + scheme + ": " + out)

    def test_sluice_accepts_every_scheme_over_dibs_and_tcd_sections(self):
        """With dibs and tcd sections in the configuration, every scheme is
        still accepted: the PFC, BFC and Floodgate schemes (which sluice
        refuses beside DIBS) turn dibs off."""
        conf = json.loads(json.dumps(self.conf))
        for sw in conf["switches"]:
            sw["dibs"] = {"max_detours": 8}
            sw["tcd"] = {"q_th": "40KB"}
        self.assertTrue(os.path.exists(SLUICE), "no sluice binary at " + SLUICE)
        with tempfile.TemporaryDirectory() as tmp:
            # The premise: such a section left on under pfc is refused.
            leaked = self.exp.apply_scheme(conf, "pfc", self.args())
            for sw in leaked["switches"]:
                sw["dibs"]["enabled"] = True
            rc, out = self.check(leaked, "leaked", tmp)
            self.assertNotEqual(rc, 0, out)
            self.assertIn("dibs", out)
            for scheme in self.exp.SCHEMES:
                rc, out = self.check(self.exp.apply_scheme(conf, scheme, self.scheme_args(scheme)),
                                     scheme, tmp)
                self.assertEqual(rc, 0, scheme + ": " + out)


class FlowtuneRun(common.FakeExperimentCase):
    """tools/experiment --schemes droptail,flowtune on conf/leafspine.yaml
    with a fake sluice, a fake sluice-allocator and a fake floor program:
    the allocator runs for the flowtune scheme only, with the host ports'
    rate, is stopped after sluice (also when sluice fails), and its stdout
    is saved and judged by the fidelity gate."""

    def experiment(self, name, schemes, **env):
        """Runs the tool with its own fake allocator; (process, out dir, allocator path)."""
        out = os.path.join(self.tmp.name, name)
        allocator = common.write_script(os.path.join(self.tmp.name, name + "-allocator"),
                                        common.FAKE_ALLOCATOR)
        proc = common.run_tool_status(
            "experiment", "--config", os.path.join(common.ROOT, "conf", "leafspine.yaml"),
            "--schemes", schemes, "--clock", "real", "--workload", self.workload,
            "--drain", "0.01", "--sluice", self.sluice, "--allocator", allocator,
            "--sluice-floor", self.floor, "--floor-seconds", "0.2", "--out", out,
            env=dict(os.environ, **env), timeout=120)
        self.assertNotIn("Traceback", proc.stdout + proc.stderr)
        return proc, out, allocator

    def read(self, *path):
        with open(os.path.join(*path)) as f:
            return f.read()

    def test_allocator_started_stopped_and_judged(self):
        proc, out, allocator = self.experiment("ok", "droptail,flowtune")
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertEqual(self.read(allocator + ".args"),
                         "--address 127.0.0.1:0 --metrics-address  --host-rate 10Gbps "
                         "--iteration 200us --lease 10ms --duration 120s")
        self.assertTrue(os.path.exists(allocator + ".stopped"))
        # The edges were pointed at the port it said it listens on.
        with open(os.path.join(out, "flowtune", "sluice.yaml")) as f:
            conf = yaml.safe_load(f)
        self.assertEqual({sw["name"]: sw["flowtune"].get("allocator") for sw in conf["switches"]
                          if sw["flowtune"]["enabled"]},
                         {"leaf0": "127.0.0.1:4321", "leaf1": "127.0.0.1:4321"})
        self.assertIn("iteration late p99 3200 ns max 6400 ns",
                      self.read(out, "flowtune", "allocator.out"))
        self.assertFalse(os.path.exists(os.path.join(out, "droptail", "allocator.out")))
        self.assertIn("experiment: flowtune allocator: iteration lateness p99 <= 3.2 us, "
                      "max 6.4 us", proc.stdout)
        self.assertNotIn("experiment: droptail allocator", proc.stdout)
        rec = json.loads(self.read(out, "fidelity.json"))
        self.assertEqual(rec["runs"]["flowtune"]["figures"]["allocator_late_p99_ns"], 3200)
        self.assertNotIn("allocator_late_p99_ns", rec["runs"]["droptail"]["figures"])

    def test_late_allocator_fails_the_gate(self):
        proc, out, _ = self.experiment("late", "droptail,flowtune",
                                       FAKE_ALLOCATOR_LATE_NS="2000000")
        self.assertEqual(proc.returncode, 3, proc.stdout + proc.stderr)
        self.assertIn("experiment: NOT VALID: fidelity limits exceeded in flowtune", proc.stderr)
        rec = json.loads(self.read(out, "fidelity.json"))
        self.assertEqual([v["switch"] for v in rec["runs"]["flowtune"]["violations"]],
                         ["sluice-allocator"])
        self.assertEqual(rec["runs"]["droptail"]["violations"], [])

    def test_allocator_stopped_when_sluice_fails(self):
        proc, out, allocator = self.experiment("fail", "flowtune", FAKE_SLUICE_EXIT="1")
        self.assertEqual(proc.returncode, 1, proc.stdout + proc.stderr)
        self.assertIn("sluice failed", proc.stderr)
        self.assertTrue(os.path.exists(allocator + ".stopped"))
        self.assertIn("sluice-allocator summary", self.read(out, "flowtune", "allocator.out"))


if __name__ == "__main__":
    unittest.main()
