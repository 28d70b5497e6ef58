#!/usr/bin/python3
"""tools/experiment's schemes: what each sets in the switches (ECN, PFC,
BFC, Floodgate, DIBS, TCD) and in the replaying hosts' NICs (docs/configuration.md "The host NIC"), checked on
conf/leafspine.yaml and validated by sluice's own --check."""

import importlib.machinery
import importlib.util
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


def load_experiment():
    path = os.path.join(common.TOOLS, "experiment")
    loader = importlib.machinery.SourceFileLoader("experiment_tool", path)
    spec = importlib.util.spec_from_loader("experiment_tool", loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


class Schemes(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.exp = load_experiment()
        with open(os.path.join(common.ROOT, "conf", "leafspine.yaml")) as f:
            cls.conf = yaml.safe_load(f)

    def args(self, *extra):
        return self.exp.parse_args(["--config", "x", "--workload", "w", "--out", "o"] + list(extra))

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
                "tcd+pfc": {"mode": "plain"}, "tcd+bfc": {"mode": "bfc", "queue_by": "flow"}}
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

    def test_sluice_accepts_every_scheme(self):
        self.assertTrue(os.path.exists(SLUICE), "no sluice binary at " + SLUICE)
        with tempfile.TemporaryDirectory() as tmp:
            for scheme in self.exp.SCHEMES:
                conf = self.exp.apply_scheme(self.conf, scheme, self.args())
                rc, out = self.check(conf, scheme, tmp)
                self.assertEqual(rc, 0, scheme + ": " + out)

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
                rc, out = self.check(self.exp.apply_scheme(conf, scheme, self.args()), scheme, tmp)
                self.assertEqual(rc, 0, scheme + ": " + out)


if __name__ == "__main__":
    unittest.main()
