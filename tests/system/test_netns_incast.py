#!/usr/bin/python3
"""System test: real Linux TCP through sluice. Three host namespaces from
tools/netns, attached by net_af_packet; h0 and h1 each send an iperf3 TCP
flow (cubic, ECN on) to h2 at the same time, through h2's port shaped to
100 Mbps with ECN step marking at K = 30 KB. Asserts that both transfers
finish, that packets marked CE (ECN field 3) arrive at h2 from both senders
(tshark in h2's namespace), that sluice counts ECN marks on h2's port (at
least as many as h2 saw) and that sluice exits 0.

  /usr/bin/python3 test_netns_incast.py SLUICE_BINARY SOURCE_DIR

Runs as root, needs hugepages (tools/netns sets them up and restores them).
Every step is bounded in time; teardown happens in `finally`.
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

BOTTLENECK = "100Mbps"
ECN_K = "30KB"  # 20 full-size frames: two cubic flows into 100 Mbps exceed it
IPERF_SECONDS = 4
SERVER_PORTS = (5201, 5202)
H2 = "10.0.2.2"
SENDERS = ("10.0.0.2", "10.0.1.2")


class TestFailure(AssertionError):
    pass


def check(cond, message):
    if not cond:
        raise TestFailure(message)


def free_tcp_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(cmd, timeout):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, timeout=timeout)
    if r.returncode != 0:
        raise TestFailure(f"{' '.join(cmd)} exited {r.returncode}:\n{r.stdout}")
    return r.stdout


def tail(path, lines=25):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-lines:])
    except OSError:
        return ""


class Procs:
    """Background processes, each with its output in a file; all are stopped
    by PID at teardown."""

    def __init__(self, workdir):
        self.workdir = workdir
        self.procs = {}

    def start(self, name, cmd):
        out = open(os.path.join(self.workdir, f"{name}.out"), "w")
        err = open(os.path.join(self.workdir, f"{name}.err"), "w")
        self.procs[name] = subprocess.Popen(cmd, stdout=out, stderr=err,
                                            stdin=subprocess.DEVNULL)
        out.close()
        err.close()
        return self.procs[name]

    def path(self, name, stream="out"):
        return os.path.join(self.workdir, f"{name}.{stream}")

    def stop(self, name, sig=signal.SIGINT, timeout=20):
        """Sends sig and waits; kills if it does not end in time. Returns the
        exit code, or None if it had to be killed."""
        p = self.procs[name]
        if p.poll() is None:
            p.send_signal(sig)
            try:
                p.wait(timeout)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
                return None
        return p.returncode

    def stop_all(self):
        for name, p in self.procs.items():
            if p.poll() is None:
                self.stop(name, signal.SIGTERM, 5)


def wait_for_text(path, text, seconds, proc):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with open(path, errors="replace") as f:
            if text in f.read():
                return True
        if proc.poll() is not None:
            return False
        time.sleep(0.1)
    return False


def ce_counts_by_source(pcap_path, dst):
    """Counts IPv4 packets to dst by source address: (CE, ECT) per source.
    Reads the classic pcap directly (Ethernet link type)."""
    counts = {}
    with open(pcap_path, "rb") as f:
        data = f.read()
    check(len(data) >= 24, f"{pcap_path}: no pcap header")
    magic = struct.unpack("<I", data[:4])[0]
    endian = "<" if magic in (0xA1B2C3D4, 0xA1B23C4D) else ">"
    check(struct.unpack(endian + "I", data[:4])[0] in (0xA1B2C3D4, 0xA1B23C4D),
          f"{pcap_path}: not a classic pcap")
    check(struct.unpack(endian + "I", data[20:24])[0] == 1,
          f"{pcap_path}: link type is not Ethernet")
    off = 24
    while off + 16 <= len(data):
        incl = struct.unpack(endian + "I", data[off + 8:off + 12])[0]
        frame = data[off + 16:off + 16 + incl]
        off += 16 + incl
        if len(frame) < 34 or frame[12:14] != b"\x08\x00":
            continue
        ip = frame[14:]
        if socket.inet_ntoa(ip[16:20]) != dst:
            continue
        src = socket.inet_ntoa(ip[12:16])
        ce, ect = counts.get(src, (0, 0))
        ecn = ip[1] & 3
        counts[src] = (ce + (ecn == 3), ect + (ecn in (1, 2)))
    return counts


def iperf_bytes(path):
    with open(path) as f:
        doc = json.load(f)
    check("error" not in doc, f"{path}: iperf3 error: {doc.get('error')}")
    end = doc["end"]
    return end["sum_sent"]["bytes"], end["sum_received"]["bytes"]


def ns_exec(ns, *cmd):
    return ["ip", "netns", "exec", ns] + list(cmd)


def incast(sluice, src, workdir, prefix, procs, made):
    netns = os.path.join(src, "tools", "netns")
    h = [f"{prefix}h{i}" for i in range(3)]
    config = os.path.join(workdir, "sluice.yaml")
    summary = os.path.join(workdir, "summary.json")
    capture = os.path.join(workdir, "h2.pcap")
    file_prefix = f"{prefix}sys"

    made.add("hosts")
    run([netns, "up", "3", "--prefix", prefix, "--rate", "1Gbps",
         "--rate-of", f"h2={BOTTLENECK}", "--ecn-k", ECN_K, "--config-out", config], 60)
    made.add("hugepages")
    run([netns, "hugepages-up", "--pages", "512", "--file-prefix", file_prefix], 30)

    sluice_proc = procs.start("sluice", [
        sluice, "-l", "0,1", "--file-prefix", file_prefix, "--no-pci", "--",
        "--config", config, "--duration", "90", "--stats-interval", "1",
        "--summary-json", summary, "--metrics-address", f"127.0.0.1:{free_tcp_port()}"])

    for i, port in enumerate(SERVER_PORTS):
        procs.start(f"server{i}", ns_exec(h[2], "iperf3", "-s", "-1", "-p", str(port)))

    # ARP learned on every hop once h0 and h1 reach h2 (sluice also has to
    # start); bounded.
    for i in (0, 1):
        r = subprocess.run(ns_exec(h[i], "/usr/bin/python3",
                                   os.path.join(src, "tests", "system", "icmp_echo.py"),
                                   H2, "20"),
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=40)
        check(sluice_proc.poll() is None,
              f"sluice exited early ({sluice_proc.returncode}):\n"
              f"{tail(procs.path('sluice', 'err'))}{tail(procs.path('sluice'))}")
        check(r.returncode == 0, f"h{i} cannot reach h2 through sluice: {r.stdout}")

    tshark = procs.start("tshark", ns_exec(
        h[2], "tshark", "-i", h[2], "-f", "tcp", "-s", "128", "-F", "pcap",
        "-w", capture, "-a", "duration:40", "-q"))
    check(wait_for_text(procs.path("tshark", "err"), "Capturing on", 30, tshark),
          f"tshark did not start capturing:\n{tail(procs.path('tshark', 'err'))}")

    clients = [procs.start(f"client{i}", ns_exec(
        h[i], "iperf3", "-c", H2, "-p", str(SERVER_PORTS[i]), "-t", str(IPERF_SECONDS),
        "-C", "cubic", "--connect-timeout", "5000", "--json")) for i in (0, 1)]
    deadline = time.monotonic() + IPERF_SECONDS + 25
    for i, c in enumerate(clients):
        try:
            c.wait(max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            raise TestFailure(f"iperf3 client h{i} did not finish in time")

    tshark_rc = procs.stop("tshark", signal.SIGINT, 20)
    sluice_rc = procs.stop("sluice", signal.SIGINT, 30)

    for i, c in enumerate(clients):
        check(c.returncode == 0, f"iperf3 client h{i} exited {c.returncode}:\n"
              f"{tail(procs.path(f'client{i}'))}{tail(procs.path(f'client{i}', 'err'))}")
        sent, received = iperf_bytes(procs.path(f"client{i}"))
        print(f"h{i} -> h2: {sent} bytes sent, {received} received")
        check(sent > 0 and received > 0, f"h{i}: no bytes transferred")

    check(sluice_rc == 0, f"sluice exited {sluice_rc}:\n{tail(procs.path('sluice', 'err'))}")
    check(tshark_rc is not None, "tshark had to be killed")
    with open(summary) as f:
        ports = {p["name"]: p for p in json.load(f)["switches"][0]["ports"]}
    marks = ports["h2"]["ecn_marks"]
    print(f"sluice: {marks} ECN marks on h2, drops on h2: {ports['h2']['drops']}")

    counts = ce_counts_by_source(capture, H2)
    print(f"capture at h2 (CE, ECT) by sender: {counts}")
    for s in SENDERS:
        ce, ect = counts.get(s, (0, 0))
        check(ect > 0, f"no ECN-capable packets from {s} reached h2: ECN not negotiated?")
        check(ce > 0, f"no CE-marked packets from {s} reached h2")
    check(marks > 0, "sluice reports no ECN marks on h2's port")
    seen = sum(ce for ce, _ in counts.values())
    check(seen <= marks, f"h2 saw {seen} CE packets but sluice marked only {marks}")


class Terminated(Exception):
    pass


def on_sigterm(signum, frame):
    raise Terminated("terminated by SIGTERM")


def main():
    # meson's timeout sends SIGTERM: tear down before going.
    signal.signal(signal.SIGTERM, on_sigterm)
    if len(sys.argv) < 3:
        sys.exit(f"usage: {sys.argv[0]} SLUICE_BINARY SOURCE_DIR")
    sluice, src = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    if os.geteuid() != 0:
        sys.exit("test_netns_incast: must run as root (namespaces, hugepages)")
    netns = os.path.join(src, "tools", "netns")
    prefix = f"st{os.getpid() % 100000}"
    workdir = tempfile.mkdtemp(prefix="sluice-netns-incast-")
    procs = Procs(workdir)
    made = set()  # what teardown must undo
    ok = False
    started = time.monotonic()
    try:
        incast(sluice, src, workdir, prefix, procs, made)
        ok = True
    except (TestFailure, subprocess.TimeoutExpired, Terminated) as e:
        print(f"FAIL: {e}", file=sys.stderr)
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        procs.stop_all()
        teardown = []
        if "hugepages" in made:
            teardown.append([netns, "hugepages-down", "--file-prefix", f"{prefix}sys"])
        if "hosts" in made:
            teardown.append([netns, "down", "--prefix", prefix])
        for cmd in teardown:
            r = subprocess.run(cmd, timeout=60)
            if r.returncode != 0:
                print(f"teardown: {' '.join(cmd)} exited {r.returncode}", file=sys.stderr)
                ok = False
    if ok:
        shutil.rmtree(workdir, ignore_errors=True)
        print(f"PASS in {time.monotonic() - started:.1f} s")
        return 0
    print(f"test files kept in {workdir}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
