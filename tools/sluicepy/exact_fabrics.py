"""The exact-fabric-time scenarios of tests/integration/test_exact_time.py,
shared with tools/bench fingerprint (--set small) so that the two cannot drift:
the leaf-spine of conf/leafspine.yaml replays DURATION seconds of
web-search traffic at load 0.3 with a 4-to-1 incast, under one of KINDS:

- bfc+tcd: BFC between the switches with BFC NICs at the hosts, TCD
  marking, one lossy uplink (1 % loss);
- floodgate: Floodgate with dstPause toward the hosts and loss recovery
  (FG_SYNC), one lossy uplink;
- dibs: DIBS detours with RED ECN marking;
- pfc: PFC (XOFF 50 KB) toward the spines and the hosts' NICs, with ECN
  step marking;
- ecn: ECN step marking alone, no module at any port, so that packets
  finding a switch port idle go straight through it (docs/traffic-manager.md,
  "Straight through an idle port").

    workload = os.path.join(tmp, "workload")
    make_workload(srcdir, workload)
    d = prepare_run(tmp, workload, fabric(srcdir, "pfc"), "pfc-1", seed=1)
    subprocess.run(command(binary, "my-prefix"), cwd=d, env=run_env(), check=True)

leaves d/summary.json and d/capture/rx_<host>.pcap.
"""

import os
import subprocess

import yaml

from . import sluice

KINDS = ("bfc+tcd", "floodgate", "dibs", "pfc", "ecn")
DURATION = "0.02"  # seconds of workload arrivals
RUN_SECONDS = 0.2  # --duration: the replay's 50 ms lead, the traffic, its drain
WORKLOAD_SEED = 7


def make_workload(srcdir, out):
    """tools/workload's per-host captures and flows.csv into out."""
    subprocess.run(["/usr/bin/python3", os.path.join(srcdir, "tools", "workload"),
                    "--cdf", os.path.join(srcdir, "conf", "workloads", "websearch.cdf"),
                    "--load", "0.3", "--link-rate", "10Gbps", "--hosts-from-config",
                    os.path.join(srcdir, "conf", "leafspine.yaml"), "--duration", DURATION,
                    "--seed", str(WORKLOAD_SEED), "--out", out, "--incast-degree", "4",
                    "--incast-receiver", "h2", "--incast-size", "256KB", "--incast-period",
                    "0.005"],
                   check=True, stdout=subprocess.DEVNULL)


def lossy_uplink(conf, loss=0.01):
    """leaf0/u0 and its spine end lose frames."""
    for sw in conf["switches"]:
        for p in sw["ports"]:
            if (sw["name"], p["name"]) in (("leaf0", "u0"), ("spine0", "d0")):
                p["loss"] = loss


def fabric(srcdir, kind):
    """conf/leafspine.yaml in exact time with kind's mechanisms (no seed)."""
    with open(os.path.join(srcdir, "conf", "leafspine.yaml")) as f:
        conf = yaml.safe_load(f)
    conf["clock"] = {"mode": "exact"}
    conf["metrics"] = {"enabled": False}
    for sw in conf["switches"]:
        hosts = [p for p in sw["ports"] if p["role"] == "host"]
        if kind == "bfc+tcd":
            sw.setdefault("bfc", {})["enabled"] = True
            sw["ecn"] = {"mode": "step", "k": "100KB"}
            sw["tcd"] = {"enabled": True}
            for p in hosts:
                p["nic"] = {"mode": "bfc", "queue_by": "flow"}
        elif kind == "floodgate":
            sw["floodgate"] = {"enabled": True, "dst_pause": True, "sync": True,
                               "sync_interval": "100us"}
            for p in hosts:
                p["nic"] = {"mode": "floodgate"}
        elif kind == "dibs":
            sw["dibs"] = {"enabled": True}
            sw["ecn"] = {"mode": "red", "min": "20KB", "max": "200KB", "pmax": 0.2}
        elif kind == "pfc":
            sw["pfc"] = {"mode": "pfc", "xoff": "50KB"}
            sw["ecn"] = {"mode": "step", "k": "100KB"}
        elif kind == "ecn":
            sw["ecn"] = {"mode": "step", "k": "30KB"}
        else:
            raise ValueError("unknown exact-time fabric %r; known: %s" % (kind, ", ".join(KINDS)))
    if kind in ("bfc+tcd", "floodgate"):
        lossy_uplink(conf)
    return conf


def prepare_run(tmp, workload, conf, label, seed=1):
    """The run directory tmp/label: the workload (a symlink), an empty
    capture/ and sluice.yaml (conf with `seed`); returns its path."""
    d = os.path.join(tmp, label)
    os.makedirs(os.path.join(d, "capture"))
    os.symlink(workload, os.path.join(d, "workload"))
    with open(os.path.join(d, "sluice.yaml"), "w") as f:
        yaml.safe_dump(dict(conf, seed=seed), f)
    return d


def eal(workers=1):
    """EAL's arguments for a run on `workers` worker lcores."""
    return ["--no-huge", "-m", "1024", "--no-pci"] + sluice.lcores(workers)


def command(binary, file_prefix, workers=1):
    """sluice's command line (sluicepy.sluice's), run in a prepare_run
    directory: RUN_SECONDS of fabric time, the summary in summary.json; on
    `workers` worker lcores."""
    return sluice.command(binary, eal(workers), file_prefix, seconds=RUN_SECONDS)


def run_env():
    """The environment: the calendar audited after every element (a due time
    some rule changed without saying so is a calendar miss)."""
    return dict(os.environ, SLUICE_EXACT_AUDIT="1")
