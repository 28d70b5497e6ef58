"""Shared bits of the tools/ tests: paths, a host list, an independent pcap
reader and IPv4 checksum (written here, not imported from tools/sluicepy)."""

import os
import struct
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
TOOLS = os.path.join(ROOT, "tools")
CONF = os.path.join(ROOT, "conf", "workloads")
PYTHON = "/usr/bin/python3"
sys.path.insert(0, TOOLS)

HOSTS = [("h%d" % i, "10.0.%d.2" % i, "02:00:00:00:00:%02x" % (0x10 + i),
          "02:00:00:00:01:%02x" % i) for i in range(8)]


def write_hosts_text(path, hosts=HOSTS):
    with open(path, "w") as f:
        f.write("# name ip mac gateway_mac\n")
        for h in hosts:
            f.write(" ".join(h) + "\n")
    return path


def write_hosts_yaml(path, hosts=HOSTS):
    with open(path, "w") as f:
        f.write("hosts:\n")
        for n, ip, mac, gw in hosts:
            f.write('  - {name: %s, ip: %s, mac: "%s", gateway_mac: "%s"}\n' % (n, ip, mac, gw))
    return path


def run_tool_status(name, *args, **kw):
    """Runs tools/<name> and returns the CompletedProcess, whatever its status."""
    return subprocess.run([PYTHON, os.path.join(TOOLS, name)] + [str(a) for a in args],
                          capture_output=True, text=True, **kw)


def run_tool_serialised(name, *args, timeout=600):
    """Like run_tool, under the lock the other real-run tool tests take, so
    that meson's parallel tool tests never run sluice beside a timing run
    (which would not keep up on a shared 2-core machine)."""
    proc = subprocess.run(["flock", "/tmp/sluice-heavy.lock", PYTHON, os.path.join(TOOLS, name)]
                          + [str(a) for a in args], capture_output=True, text=True,
                          timeout=timeout)
    if proc.returncode != 0:
        raise AssertionError("tools/%s failed (%d):\n%s%s" % (name, proc.returncode,
                                                             proc.stdout[-4000:], proc.stderr))
    return proc.stdout


def run_tool(name, *args):
    proc = run_tool_status(name, *args)
    if proc.returncode != 0:
        raise AssertionError("tools/%s failed (%d):\n%s%s" % (name, proc.returncode,
                                                             proc.stdout, proc.stderr))
    return proc.stdout


def read_pcap_ns(path):
    """[(ts_ns, frame bytes)] of a little-endian nanosecond pcap."""
    with open(path, "rb") as f:
        data = f.read()
    magic, _, _, _, _, _, link = struct.unpack_from("<IHHiIII", data)
    assert magic == 0xA1B23C4D, hex(magic)
    assert link == 1
    out, pos = [], 24
    while pos < len(data):
        sec, nsec, incl, orig = struct.unpack_from("<IIII", data, pos)
        assert incl == orig
        out.append((sec * 10**9 + nsec, data[pos + 16:pos + 16 + incl]))
        pos += 16 + incl
    return out


def write_pcap_ns(path, records):
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, 65535, 1))
        for ts, frame in records:
            f.write(struct.pack("<IIII", ts // 10**9, ts % 10**9, len(frame), len(frame)))
            f.write(frame)


def checksum16(data):
    if len(data) % 2:
        data += b"\0"
    total = 0
    for i in range(0, len(data), 2):
        total += (data[i] << 8) | data[i + 1]
    while total > 0xFFFF:
        total = (total & 0xFFFF) + (total >> 16)
    return total  # 0xFFFF for a header whose checksum field is right


# A stand-in for build/switch/sluice, for testing the experiment tools
# without running the emulator: it writes an empty capture for every capture
# port of the configuration, a small queue trace when asked for one, and a
# summary JSON whose fidelity figures are clean, or over the limits at the
# first internal-link port (leaf0/u0 in conf/leafspine.yaml) in the schemes
# (run directories) listed in FAKE_UNFAITHFUL. FAKE_SLUICE_EXIT makes it
# fail; FAKE_SLUICE_SLEEP makes it wait (leaving FAKE_SLUICE_STARTED first).
FAKE_SLUICE = r'''#!/usr/bin/python3
import json, os, signal, struct, sys, time
import yaml
signal.signal(signal.SIGINT, lambda *_: sys.exit(130))
app = sys.argv[sys.argv.index("--") + 1:]
opt = lambda name: app[app.index(name) + 1]
if "--check" in app:  # what the tools ask before a run: the memory it needs
    print("config OK: 4 switches, 16 ports")
    print("DPDK memory: about 600 MiB (mbuf pool 256 MiB, routing tables 258 MiB "
          "(4 switches x 64 MiB), rings 1 MiB, EAL 64 MiB); with --no-huge give EAL -m 600 "
          "or more")
    sys.exit(0)
if os.environ.get("FAKE_SLUICE_SLEEP"):
    open(os.environ["FAKE_SLUICE_STARTED"], "w").close()
    time.sleep(float(os.environ["FAKE_SLUICE_SLEEP"]))
if os.environ.get("FAKE_SLUICE_EXIT"):
    print("sluice: fake failure", file=sys.stderr)
    sys.exit(int(os.environ["FAKE_SLUICE_EXIT"]))
with open(opt("--config")) as f:
    conf = yaml.safe_load(f)
bad = os.path.basename(os.getcwd()) in os.environ.get("FAKE_UNFAITHFUL", "").split(",")
if "--queue-trace" in app:
    with open(opt("--queue-trace"), "w") as f:
        f.write("time_seconds,switch,port,queue,bytes,threshold_bytes,paused\n")
        for sw in conf["switches"]:
            f.write("0.001,%s,,buffer,1000,0,0\n" % sw["name"])
            for p in sw["ports"]:
                for t, q, b, paused in ((0.001, "port", 500, 0), (0.001, "0", 500, 0),
                                        (0.002, "0", 20000, 1), (0.003, "0", 100, 0)):
                    f.write("%s,%s,%s,%s,%d,15625,%d\n" % (t, sw["name"], p["name"], q, b, paused))
links = [(sw["name"], p["name"]) for sw in conf["switches"] for p in sw["ports"] if "link" in p]
switches = []
for sw in conf["switches"]:
    ports = []
    for p in sw["ports"]:
        tx = (p.get("pcap") or {}).get("tx")
        if tx:
            with open(tx, "wb") as f:
                f.write(struct.pack("<IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, 128, 1))
        link = "link" in p
        port = {"name": p["name"], "drops": {}, "ecn_marks": 0, "shaper_lost_ns": 200000,
                "shaper_lateness_p99_ns": 3200, "shaper_lateness_samples": 100,
                "link_lateness_p99_ns": 6400 if link else 0,
                "link_lateness_samples": 50 if link else 0}
        if bad and (sw["name"], p["name"]) == links[0]:
            port.update(shaper_lost_ns=3620000, link_lateness_p99_ns=51200)
        ports.append(port)
    switches.append({"name": sw["name"], "ports": ports})
summary = {"duration_seconds": float(opt("--duration")), "replay_start_epoch_seconds": 1000.05,
           "replay_origin_capture_seconds": 0.000001, "switches": switches,
           "workers": [{"lcore": 1, "cpu": 1, "iterations": 1000, "busy_fraction": 0.25,
                        "loop_gap_p99_ns": 1600, "loop_gap_max_ns": 310000,
                        "loop_gaps_over_50us": 12, "loop_gaps_over_200us": 1}]}
if os.environ.get("FAKE_SLUICE_RSS_BYTES"):
    summary["process"] = {"peak_rss_bytes": int(os.environ["FAKE_SLUICE_RSS_BYTES"])}
with open(opt("--summary-json"), "w") as f:
    json.dump(summary, f)
'''

# A stand-in for build/allocator/sluice-allocator: records its arguments in
# <script>.args, prints the line that says where it listens, and on SIGTERM
# its summary line, with an iteration lateness p99 of FAKE_ALLOCATOR_LATE_NS
# (default 3200), then leaves <script>.stopped. Bounded by its own 60 s.
FAKE_ALLOCATOR = r"""#!/usr/bin/python3
import os, signal, sys, time
def stop(*_):
    late = int(os.environ.get("FAKE_ALLOCATOR_LATE_NS", "3200"))
    print("sluice-allocator summary: 0.100 s, flows 2, hosts 2, iterations 500, updates sent 4 "
          "(0 lease re-sends, 96 bytes in 4 datagrams), datagrams 3, malformed 0, "
          "iteration late p99 %d ns max %d ns" % (late, 2 * late), flush=True)
    open(sys.argv[0] + ".stopped", "w").close()
    sys.exit(0)
signal.signal(signal.SIGTERM, stop)
with open(sys.argv[0] + ".args", "w") as f:
    f.write(" ".join(sys.argv[1:]))
print("sluice-allocator listening on 127.0.0.1:4321 (host rate 10 Gbit/s, fake)", flush=True)
time.sleep(60)
"""

# A stand-in for sluice-floor: records its arguments, prints fixed figures.
FAKE_FLOOR = r'''#!/usr/bin/python3
import json, sys
with open(sys.argv[0] + ".args", "w") as f:
    f.write(" ".join(sys.argv[1:]))
print(json.dumps({"cpu": int(sys.argv[sys.argv.index("--cpu") + 1]), "seconds": 2.0,
                  "loops": 1000, "max_gap_ns": 310000, "gaps_over_10us": 60,
                  "gaps_over_50us": 24, "gaps_over_200us": 1, "gap_p99_ns": 100}))
'''


def write_script(path, text):
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, 0o755)
    return path


class FakeExperimentCase(unittest.TestCase):
    """tools/experiment on conf/leafspine.yaml without sluice: a fake sluice,
    a fake floor program and one small websearch workload, made once per
    test class in its temporary directory."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        d = cls.tmp.name
        cls.sluice = write_script(os.path.join(d, "sluice"), FAKE_SLUICE)
        cls.floor = write_script(os.path.join(d, "sluice-floor"), FAKE_FLOOR)
        cls.workload = os.path.join(d, "wl")
        run_tool("workload", "--cdf", os.path.join(CONF, "websearch.cdf"),
                 "--load", "0.1", "--link-rate", "10Gbps", "--hosts-from-config",
                 os.path.join(ROOT, "conf", "leafspine.yaml"), "--duration", "2ms",
                 "--seed", "5", "--out", cls.workload)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()
