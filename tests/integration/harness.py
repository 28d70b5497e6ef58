"""Shared helpers for the integration tests: start the real sluice binary on
virtual devices, stop it, read its summary, scrape its metrics, write configs.

Every test runs as
  /usr/bin/python3 test_x.py SLUICE_BINARY SOURCE_DIR
and exits 0 on success. Each sluice process gets its own --file-prefix, a free
metrics port, --no-huge -m 1024 --no-pci and a bounded --duration, and is
stopped (and, if need be, killed) by the test itself.
"""

import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import urllib.request

import yaml

# MACs and addresses shared by the tests' two-port switch.
P0_MAC = "02:00:00:00:00:01"
P0_PEER = "02:00:00:00:00:a1"
P1_MAC = "02:00:00:00:00:02"
P1_PEER = "02:00:00:00:00:a2"
P2_MAC = "02:00:00:00:00:03"
P2_PEER = "02:00:00:00:00:a3"
P3_MAC = "02:00:00:00:00:04"
P3_PEER = "02:00:00:00:00:a4"

WIRE_OVERHEAD = 24  # preamble + IFG + FCS bytes per frame, as in the contract


class TestFailure(AssertionError):
    pass


def check(cond, message):
    if not cond:
        raise TestFailure(message)


def check_eq(actual, expected, what):
    if actual != expected:
        raise TestFailure(f"{what}: expected {expected!r}, got {actual!r}")


def args():
    """(sluice binary, source dir) from the command line."""
    if len(sys.argv) < 3:
        sys.exit(f"usage: {sys.argv[0]} SLUICE_BINARY SOURCE_DIR")
    return os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class TempDir:
    """A temp dir kept when the test fails (its path is printed) so the
    configs, pcaps and logs can be looked at."""

    def __init__(self, name):
        self.path = tempfile.mkdtemp(prefix=f"sluice-{name}-")

    def __enter__(self):
        return self.path

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            shutil.rmtree(self.path, ignore_errors=True)
        else:
            print(f"test files kept in {self.path}", file=sys.stderr)
        return False


# ---------------------------------------------------------------- config

def port(name, device, mac, peer_mac, ipv4, rate="0", role="host", **extra):
    """A port; rate "0" means unshaped (the device's own speed)."""
    p = {"name": name, "device": device, "role": role, "rate": rate, "mac": mac,
         "peer_mac": peer_mac, "ipv4": ipv4}
    p.update(extra)
    return p


def replay_host(name, mac, peer, ipv4, rate, rx=None, tx=None, nic=None, hop_rtt="10us"):
    """A capture-file host port: replays `rx`, captures into `tx`, behind an
    emulated NIC (`nic`, docs/pcap-ports.md) at `rate`."""
    p = {"name": name, "role": "host", "rate": rate, "mac": mac, "peer_mac": peer,
         "ipv4": ipv4, "hop_rtt": hop_rtt, "pcap": {}}
    if rx:
        p["pcap"]["rx"] = rx
    if tx:
        p["pcap"]["tx"] = tx
    if nic:
        p["nic"] = nic
    return p


def route(prefix, *ports):
    return {"prefix": prefix, "ports": list(ports)}


def switch(name, ports, routes, **extra):
    """A switch instance; extra keys (buffer, ecn, queues_per_port, ...) as in
    docs/configuration.md."""
    s = {"name": name}
    s.update(extra)
    s["ports"] = ports
    s["routes"] = routes
    return s


def write_config(path, switches, workers=None, mbufs=None, metrics_address=None, clock=None,
                 mbuf_size=None, flowtune_allocator=None):
    """Writes a sluice YAML configuration (schema: docs/configuration.md);
    clock: e.g. {"mode": "exact"}; mbuf_size: e.g. "9KiB";
    flowtune_allocator: the allocator in the fabric's section, e.g. {}."""
    doc = {}
    if clock:
        doc["clock"] = clock
    if metrics_address:
        doc["metrics"] = {"address": metrics_address}
    if mbufs:
        doc["mbufs"] = mbufs
    if mbuf_size:
        doc["mbuf_size"] = mbuf_size
    doc["switches"] = switches
    if workers:
        doc["workers"] = [{"lcore": lc, "ports": list(ps)} for lc, ps in workers]
    if flowtune_allocator is not None:
        doc["flowtune_allocator"] = flowtune_allocator
    with open(path, "w") as f:
        yaml.safe_dump(doc, f, sort_keys=False)
    return path


# ---------------------------------------------------------------- running

DPDK_RUNTIME = "/var/run/dpdk"  # EAL's runtime directories, one per --file-prefix


class Sluice:
    """One sluice process on virtual devices."""

    def __init__(self, binary, workdir, config, name, duration=None,
                 lcores=None, eal_extra=(), app_extra=(), metrics=True, audit=True):
        self.binary = binary
        self.workdir = workdir
        self.config = config
        self.name = name
        self.summary_path = os.path.join(workdir, f"{name}.summary.json")
        self.stdout_path = os.path.join(workdir, f"{name}.stdout")
        self.stderr_path = os.path.join(workdir, f"{name}.stderr")
        self.metrics_port = free_port() if metrics else None
        self.file_prefix = f"sluice-it-{name}-{os.getpid()}"
        eal = ["--no-huge", "-m", "1024", "--no-pci", "--file-prefix", self.file_prefix]
        eal += ["--lcores", lcores] if lcores else ["-l", "0,1"]
        eal += list(eal_extra)
        app = ["--config", config, "--summary-json", self.summary_path]
        if self.metrics_port:
            app += ["--metrics-address", f"127.0.0.1:{self.metrics_port}"]
        if duration is not None:
            app += ["--duration", str(duration)]
        app += list(app_extra)
        self.cmd = [binary] + eal + ["--"] + app
        # Exact time checks its calendar after every element handled (a due
        # time some rule changed without saying so is a calendar miss, and
        # summary() fails the test on one); real time ignores it.
        self.env = dict(os.environ, SLUICE_EXACT_AUDIT="1") if audit else None
        self.proc = None
        self.returncode = None

    def start(self):
        if os.path.exists(self.summary_path):
            os.unlink(self.summary_path)
        self._out = open(self.stdout_path, "w")
        self._err = open(self.stderr_path, "w")
        self.proc = subprocess.Popen(self.cmd, cwd=self.workdir, stdout=self._out,
                                     stderr=self._err, stdin=subprocess.DEVNULL, env=self.env)
        return self

    def wait(self, timeout):
        """Waits for exit; kills the process and fails if it takes longer."""
        try:
            self.returncode = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise TestFailure(f"{self.name}: sluice still running after {timeout} s; killed\n"
                              + self.logs())
        finally:
            self._out.close()
            self._err.close()
        return self.returncode

    def stop(self, sig=signal.SIGINT, timeout=20):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        return self.wait(timeout)

    def kill(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def running(self):
        return self.proc.poll() is None

    def stdout(self):
        with open(self.stdout_path) as f:
            return f.read()

    def stderr(self):
        with open(self.stderr_path) as f:
            return f.read()

    def logs(self, tail=4000):
        return (f"command: {' '.join(self.cmd)}\n--- stdout (tail)\n{self.stdout()[-tail:]}"
                f"\n--- stderr (tail)\n{self.stderr()[-tail:]}")

    def runtime_dir(self):
        return os.path.join(DPDK_RUNTIME, self.file_prefix)

    def expect_clean_exit(self):
        if self.returncode != 0:
            raise TestFailure(f"{self.name}: exit status {self.returncode}, expected 0\n"
                              + self.logs())
        # A sluice that stopped cleanly leaves no DPDK runtime state behind.
        if os.path.exists(self.runtime_dir()):
            left = os.listdir(self.runtime_dir())
            raise TestFailure(f"{self.name}: {self.runtime_dir()} left behind ({left})")

    def summary(self):
        try:
            with open(self.summary_path) as f:
                summary = json.load(f)
        except (OSError, ValueError) as e:
            raise TestFailure(f"{self.name}: no readable summary JSON ({e})\n" + self.logs())
        check_exact_clock(summary, self.name)
        return summary

    def metrics_text(self, timeout=60):
        """Scrapes /metrics, retrying until the exporter answers (beside a CPU
        hog on every core sluice took 12-14 s to start it)."""
        url = f"http://127.0.0.1:{self.metrics_port}/metrics"
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            if not self.running():
                raise TestFailure(f"{self.name}: sluice exited before metrics were scraped\n"
                                  + self.logs())
            try:
                with urllib.request.urlopen(url, timeout=2) as r:
                    return r.read().decode()
            except OSError as e:
                last = e
                time.sleep(0.2)
        raise TestFailure(f"{self.name}: no answer from {url} ({last})")

    def telemetry(self, command):
        """The answer to one DPDK telemetry command (v2 socket) of the
        running process, e.g. telemetry("/sluice/port,s1/p0")."""
        with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as s:
            s.settimeout(5)
            s.connect(f"/var/run/dpdk/{self.file_prefix}/dpdk_telemetry.v2")
            s.recv(16384)  # the greeting
            s.send(command.encode())
            return json.loads(s.recv(1 << 16))

    def __enter__(self):
        return self.start()

    def __exit__(self, exc_type, exc, tb):
        self.kill()
        # What a killed or failed run left (a clean one leaves nothing).
        shutil.rmtree(self.runtime_dir(), ignore_errors=True)
        if exc_type is not None:
            print(self.logs(), file=sys.stderr)
        return False


def check_exact_clock(summary, name):
    """In exact time the calendar was never missed and no element stopped
    the run (docs/emulator.md, "Fabric time")."""
    clock = summary.get("clock") or {}
    if clock.get("mode") != "exact":
        return
    check(clock["calendar_misses"] == 0 and clock["stopped_stuck"] == 0,
          f"{name}: exact time: calendar misses {clock['calendar_misses']}, stopped early "
          f"{clock['stopped_stuck']}")


def run_to_end(binary, workdir, config, name, duration, **kw):
    """Runs sluice for `duration` seconds; returns (Sluice, summary)."""
    s = Sluice(binary, workdir, config, name, duration=duration, **kw).start()
    s.wait(timeout=duration + 30)
    s.expect_clean_exit()
    return s, s.summary()


# ---------------------------------------------------------------- pcap

def write_pcap(path, frames, start=1700000000.0, gap=1e-6):
    """Writes raw frames (bytes) to a classic pcap file, Ethernet link type.
    Raw, so runts and other broken frames are written exactly as given."""
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for i, frame in enumerate(frames):
            t = start + i * gap
            sec, usec = int(t), int(round((t - int(t)) * 1e6))
            f.write(struct.pack("<IIII", sec, usec, len(frame), len(frame)))
            f.write(frame)


def read_pcap(path):
    """Frames (bytes) of a classic pcap file, in order."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 24:
        raise TestFailure(f"{path}: not a pcap file ({len(data)} bytes)")
    magic = struct.unpack("<I", data[:4])[0]
    if magic in (0xA1B2C3D4, 0xA1B23C4D):
        endian = "<"
    elif magic in (0xD4C3B2A1, 0x4D3CB2A1):
        endian = ">"
    else:
        raise TestFailure(f"{path}: bad pcap magic {magic:#x}")
    frames, off = [], 24
    while off + 16 <= len(data):
        _, _, caplen, _ = struct.unpack(endian + "IIII", data[off:off + 16])
        off += 16
        frames.append(data[off:off + caplen])
        off += caplen
    return frames


def pcap_records(path, with_src=False):
    """(timestamp ns, original length[, IPv4 source bytes]) of every record
    of a little-endian classic pcap (microsecond or nanosecond stamps)."""
    with open(path, "rb") as f:
        data = f.read()
    magic = struct.unpack_from("<I", data)[0] if len(data) >= 24 else None
    check(magic in (0xA1B23C4D, 0xA1B2C3D4), f"{path}: not a little-endian pcap")
    mult = 1 if magic == 0xA1B23C4D else 1000
    out, off = [], 24
    while off + 16 <= len(data):
        sec, frac, incl, orig = struct.unpack_from("<IIII", data, off)
        rec = (sec * 10**9 + frac * mult, orig)
        if with_src:
            rec += (bytes(data[off + 16 + 26:off + 16 + 30]),)
        out.append(rec)
        off += 16 + incl
    return out


def udp_frames(src_mac, dst_mac, src_net, dst_net, count, sizes=(64, 512, 1514), flows=32,
               tos=0):
    """`count` valid UDP frames from hosts in src_net (e.g. "10.0.0.") to hosts
    in dst_net, over `flows` flows, frame sizes cycling through `sizes`."""
    from scapy.layers.inet import IP, UDP
    from scapy.layers.l2 import Ether
    frames = []
    for i in range(count):
        f = i % flows
        pkt = (Ether(src=src_mac, dst=dst_mac) /
               IP(src=f"{src_net}{2 + f}", dst=f"{dst_net}{100 + f}", ttl=64, tos=tos,
                  id=i & 0xFFFF) /
               UDP(sport=20000 + f, dport=5000 + f % 4))
        size = sizes[i % len(sizes)]
        frames.append(bytes(pkt) + bytes(max(0, size - len(pkt))))
    return frames


def bad_checksum_frame(src_mac, dst_mac, src, dst):
    from scapy.layers.inet import IP, UDP
    from scapy.layers.l2 import Ether
    pkt = bytearray(bytes(Ether(src=src_mac, dst=dst_mac) / IP(src=src, dst=dst) /
                          UDP(sport=1, dport=2) / bytes(32)))
    pkt[24] ^= 0xFF  # checksum high byte
    return bytes(pkt)


def arp_request(src_mac, src_ip, target_ip):
    from scapy.layers.l2 import ARP, Ether
    return bytes(Ether(src=src_mac, dst="ff:ff:ff:ff:ff:ff") /
                 ARP(op=1, hwsrc=src_mac, psrc=src_ip, pdst=target_ip)) + bytes(18)


# ---------------------------------------------------------------- summary

# The emulator's fidelity target (docs/testbed.md, "Fidelity gate").
FIDELITY_MAX_LATENESS_NS = 25_600
FIDELITY_MAX_LOST_NS = 1_000_000
LATENESS_KINDS = ("shaper", "link", "replay")


def summary_ports(summary):
    """("switch/port", port) for every port of a sluice summary."""
    for sw in summary["switches"]:
        for p in sw["ports"]:
            yield sw["name"] + "/" + p["name"], p


def fidelity_misses(summary):
    """One line per port figure over the fidelity target: lost time, and each
    lateness p99 that has samples."""
    misses = []
    for name, p in summary_ports(summary):
        if p["shaper_lost_ns"] > FIDELITY_MAX_LOST_NS:
            misses.append("%s lost %.3f ms" % (name, p["shaper_lost_ns"] / 1e6))
        for kind in LATENESS_KINDS:
            v = p.get(kind + "_lateness_p99_ns", 0)
            if p.get(kind + "_lateness_samples", 0) and v > FIDELITY_MAX_LATENESS_NS:
                misses.append("%s %s lateness p99 <= %.1f us" % (name, kind, v / 1e3))
    return misses


def find_port(summary, switch_name, port_name):
    for sw in summary["switches"]:
        if sw["name"] == switch_name:
            for p in sw["ports"]:
                if p["name"] == port_name:
                    return p
    raise TestFailure(f"summary has no port {switch_name}/{port_name}: {summary}")


def total_drops(port_summary):
    return sum(port_summary.get("drops", {}).values())


def drops_by_reason(summary, switch_name):
    out = {}
    for sw in summary["switches"]:
        if sw["name"] == switch_name:
            for p in sw["ports"]:
                for reason, n in p.get("drops", {}).items():
                    out[reason] = out.get(reason, 0) + n
    return out


def all_drops(summary):
    """{(switch, port): drops by reason} of every port that dropped anything."""
    return {(sw["name"], p["name"]): p["drops"] for sw in summary["switches"]
            for p in sw["ports"] if p["drops"]}


def pcap_ecn_fields(path):
    """The ECN field (IPv4 TOS low bits) of every record of a capture of
    untagged IPv4 frames (little-endian classic pcap)."""
    with open(path, "rb") as f:
        data = f.read()
    out, off = [], 24
    while off + 16 <= len(data):
        incl = int.from_bytes(data[off + 8:off + 12], "little")
        frame = data[off + 16:off + 16 + incl]
        out.append(frame[15] & 3 if len(frame) > 15 else None)
        off += 16 + incl
    return out


def check_identity(summary):
    """Per switch: rx = (tx - generated) + drops + queued at stop + consumed."""
    for sw in summary["switches"]:
        ports = sw["ports"]
        rx = sum(p["rx_packets"] for p in ports)
        out = sum(p["tx_packets"] - p["tx_generated_packets"] for p in ports)
        drops = sum(total_drops(p) for p in ports)
        queued = sum(p["queued_at_stop"] for p in ports)
        consumed = sum(p["rx_consumed_packets"] for p in ports)
        check(rx == out + drops + queued + consumed,
              f"switch {sw['name']}: rx {rx} != forwarded-out {out} + drops {drops}"
              f" + queued {queued} + consumed {consumed} (difference"
              f" {rx - (out + drops + queued + consumed)})")


def promtool_check(text):
    """Runs `promtool check metrics` on scraped text; fails on any problem."""
    promtool = shutil.which("promtool")
    check(promtool is not None, "promtool not found (tools/setup installs prometheus)")
    r = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True,
                       text=True, timeout=30)
    check(r.returncode == 0 and not r.stdout.strip() and not r.stderr.strip(),
          f"promtool check metrics failed (exit {r.returncode}):\n{r.stdout}{r.stderr}")


def metric_samples(text):
    """Parses Prometheus text into {name: [(labels dict, value)]}."""
    samples = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        name_labels, _, value = line.rpartition(" ")
        labels = {}
        if "{" in name_labels:
            name, _, rest = name_labels.partition("{")
            rest = rest.rstrip("}")
            for item in _split_labels(rest):
                k, _, v = item.partition("=")
                labels[k] = v.strip('"')
        else:
            name = name_labels
        try:
            samples.setdefault(name, []).append((labels, float(value)))
        except ValueError:
            pass
    return samples


def metric_value(samples, name, **labels):
    """The value of the one sample of `name` (metric_samples' result) whose
    labels include `labels` (values compared as strings); fails when none or
    several match."""
    hits = [v for lab, v in samples.get(name, [])
            if all(lab.get(k) == str(x) for k, x in labels.items())]
    if len(hits) != 1:
        raise TestFailure(f"metric {name}{labels}: {len(hits)} samples, want 1")
    return hits[0]


def _split_labels(s):
    items, cur, quoted = [], "", False
    for ch in s:
        if ch == '"':
            quoted = not quoted
        if ch == "," and not quoted:
            items.append(cur)
            cur = ""
        else:
            cur += ch
    if cur:
        items.append(cur)
    return items


def main(test):
    """Runs test(binary, srcdir) and turns a TestFailure into exit 1."""
    binary, srcdir = args()
    start = time.monotonic()
    try:
        test(binary, srcdir)
    except TestFailure as e:
        print(f"FAIL: {e}", file=sys.stderr)
        sys.exit(1)
    print(f"PASS ({time.monotonic() - start:.1f} s)")
