"""Forwarding benchmark: sluice with one worker lcore against dpdk-testpmd io.

The same pcap (64-byte or 1 KB frames, 1024 flows to 256 destinations, from
forward_pcap.py) is replayed forever by net_pcap (infinite_rx=1) into a
net_null sink (no-rx=1, so the sink adds no traffic). testpmd forwards it in
io mode; sluice routes it (parse, LPM, TTL, MAC rewrite) through the traffic
manager of the egress port, once per scheme in --schemes:

  plain      both ports role host, rate 0: shaper off, no flow hash.
  plain-ring plain with both ports at 400 Gbps and p1's cut_through off:
             the shaper runs but never holds frames back, and every packet
             goes through its queue's ring and the scheduler's dequeue, as
             when a queue stands.
  plain-shaped plain-ring with cut-through on: each packet passes idle p1
             as in plain, and also takes the bucket's tokens (runs too).
  bfc        BFC on (SPEC 4.2): both ports role switch, so every packet is
             hashed, claims a flow-table entry, is assigned a queue (32
             queues per port, flow_table_factor default), leaves with the
             0x88B6 shim (6 bytes longer) and is booked out at departure;
             both ports send BFC_BITMAPs every 10 x hop_rtt (hop_rtt
             default). Rate 400 Gbps on both ports: the shaper runs but never
             holds frames back (1 KB frames at 12 Mpps are 25 % of it). The
             run fails unless its summary shows the BFC path: bfc fields,
             bitmaps sent, data frames 6 bytes longer.
  plain-2hop two switch instances on the one worker lcore, joined by an
             internal link at 400 Gbps: bench/p0 -> bench/l0 == down/l0 ->
             down/p1. Every packet is forwarded twice; the reference for:
  floodgate  plain-2hop with Floodgate on both switches (SPEC 4.1): the
             link ports are switch-facing, so every packet is debited from
             bench's window toward its destination (256 destinations) and
             waits in a VOQ when the window is short; down credits it at
             departure and sends aggregated FG_CREDIT frames back over the
             link, which refill the window and drain the VOQs; p0 is
             switch-facing too, so bench earns credit for its own upstream
             and sends FG_CREDIT out of p0 (the pcap device discards them).
             The run fails unless its summary shows credit flowing on the
             link and windows whole at the end.
  dibs       DIBS on (SPEC 4.3): both ports role switch (DIBS detours only
             out of switch-facing ports, and sluice refuses it on a switch
             without one), rate 0 and no PFC/BFC as in plain. Nothing is
             ever refused (the shaper is off and the sink never backs up), so
             no packet is detoured: the run measures the cost of the DIBS
             stages on the common path (the detour count each packet gets
             in its mbuf at forward; packets cut through idle p1 as in
             plain, a refusal there would take DIBS's refuse step), not
             detouring. With one worker lcore no load snapshots are
             published, with both ports switch-facing no packet leaves the
             fabric (no detours-per-packet histogram), and max_detours is 0,
             so no data shim is added. The run fails
             unless its summary has the dibs object and dibs_detours fields,
             and warns if anything was detoured.
  tcd        TCD on (SPEC 4.4): tcd q_th 100KB, both ports role host, rate
             0. Nothing pauses the ports, so no queue is ever OFF, and
             packets cut through idle p1 as in plain, each taking TCD's
             pause check and departure step as it joins the burst; the
             timer settles the detectors. The
             benchmark pcap's frames are all Not-ECT (forward_pcap.py
             writes ECN 0 and has no option for ECT), so TCD's departure
             reads the ECN field and returns without evaluating the queue's
             state or marking: this is TCD's cost on non-ECN traffic, not
             the cost of marking. The run fails unless its summary has the
             tcd_* fields and time in TCD's states, and warns about marks.
  plain-share, bfc-share
             plain and bfc with p0 received on two worker lcores
             (workers[].receive, docs/deploy.md "One port received on
             several lcores"): p0 gets two rx queues, each replaying the
             pcap; lcore 1 owns p0 and p1 and receives queue 0, lcore 2
             receives queue 1, routes it and hands it to lcore 1 over the
             ring, so lcore 1 admits and sends every packet. EAL --lcores
             0@0,1@1,2@0: the second worker shares CPU 0 with the main
             lcore (this machine kind has two). The run fails unless both
             lcores were busy. testpmd io stays on one core.
  plain-spread, plain-cross
             plain-share with a second egress port p2 (net_null), owned by
             lcore 2: queue 1 replays the pcap with its destinations moved
             to 10.3.0.0/16, routed to p2. In plain-spread queue 0's packets
             go to p1 and queue 1's to p2, so each lcore sends what it
             received; in plain-cross the routes are swapped, so every
             packet crosses the ring to the other lcore. The rate is p1's
             and p2's together.
  bfc-quiet  bfc with bitmap_interval 10 s, i.e. one bitmap per port at the
             start and none after (a diagnostic, not in the default). In this
             loop-bound setup each bitmap out of p1 takes a transmit slot
             from a data frame, so with bfc a standing queue builds up (and
             overflows at about the bitmap rate); bfc-quiet shows the rate
             without it.

Both programs run with `-l 0,1`: the main lcore on CPU 0, one forwarding
lcore on CPU 1.

Each program reports its own transmit rate once a second (testpmd
--stats-period 1, sluice --stats-interval 1), measured on its own TSC clock;
with bfc, sluice's includes p1's bitmaps (10 000 a second, hop_rtt 10 us).
The first --warmup reports are discarded and the next --window are averaged,
so all programs are measured over the same seconds of their run. Every
configuration runs --repeat times (interleaved: testpmd, then sluice once per
scheme) and the table shows medians, and for each scheme its ratio to testpmd.
Run as root: the script reserves 2 MB hugepages (and mounts hugetlbfs) for the
hugepage runs and restores both afterwards, also when interrupted.

  tools/bench forward [--repeat N] [--sizes 64,1024] [--modes huge,nohuge]
              [--schemes plain,bfc[,plain-ring,plain-shaped,bfc-quiet,plain-2hop,floodgate,
                         dibs,tcd,plain-share,bfc-share,plain-spread,plain-cross]]
              [--build-dir DIR] [--warmup S] [--window S] [--work-dir DIR]
              [--out runs/bench/forward] [--results FILE] [--queues-per-port N]

OUT gets table.md (the table printed at the end), results.json (every
run's Mpps) and provenance.json.
"""

import argparse
import glob
import json
import os
import queue
import re
import shutil
import signal
import socket
import statistics
import subprocess
import tempfile
import threading
import time

from .. import cli, provenance, sluice
from . import forward_pcap

REPO = sluice.ROOT

HUGE_DIR = "/sys/kernel/mm/hugepages/hugepages-2048kB"
HUGE_MOUNT = "/dev/hugepages"
HUGE_PAGES_WANTED = 1024  # 2 GB: room for testpmd's or sluice's pools
NO_HUGE_MEM_MB = 2048
STARTUP_TIMEOUT_S = 90    # EAL init with --no-huge is slow on a loaded machine
STOP_TIMEOUT_S = 15

# Must agree with forward_pcap.py.
INGRESS_MAC = "02:00:00:00:00:01"
ROUTED_PREFIX = "10.1.0.0/16"

SCHEMES = ("plain", "plain-ring", "plain-shaped", "bfc", "bfc-quiet", "plain-2hop", "floodgate",
           "dibs", "tcd", "plain-share", "bfc-share", "plain-spread", "plain-cross")
TWO_HOP = ("plain-2hop", "floodgate")
SPREAD = ("plain-spread", "plain-cross")  # and a second egress port, lcore 2's
SHARED = ("plain-share", "bfc-share") + SPREAD  # p0 received on two worker lcores
SPREAD_PREFIX = "10.3.0.0/16"  # queue 1's destinations in the spread schemes
BFC_SCHEMES = ("bfc", "bfc-quiet", "bfc-share")
SHARE_WORKERS = """\
workers:
  - lcore: 1
    ports: [bench/p0, bench/p1]
  - lcore: 2
    receive: [bench/p0]
"""
TCD_Q_TH = "100KB"
BFC_RATE = "400Gbps"
BFC_RATE_BPS = 400e9
BFC_QUEUES_PER_PORT = 32
SHIM_LEN = 6            # the 0x88B6 data shim the bfc egress inserts
CONTROL_FRAME_LEN = 60  # BFC_BITMAP frames as sluice builds them (no FCS)

SLUICE_CONFIG = """\
# Generated by tools/bench forward ({scheme}). p0 replays the benchmark pcap forever;
# everything in it is routed to p1, a net_null sink.
metrics:
  enabled: true
  address: 127.0.0.1:{metrics_port}
switches:
  - name: bench
{switch_lines}    ports:
      - name: p0
        device: {rx_device}
        role: {role}
        rate: {rate}
        mac: {ingress_mac}
        peer_mac: 02:00:00:00:00:a1
        ipv4: 10.0.0.1/16
      - name: p1
        device: {tx_device}
        role: {role}
        rate: {rate}
{tx_lines}        mac: 02:00:00:00:00:02
        peer_mac: 02:00:00:00:00:a2
        ipv4: 10.2.0.1/16
    routes:
      - prefix: {prefix}
        ports: [p1]
"""


TWO_HOP_CONFIG = """\
# Generated by tools/bench forward ({scheme}). p0 replays the benchmark pcap forever;
# everything in it is routed over an internal link to a second switch, and
# from there to p1, a net_null sink.
metrics:
  enabled: true
  address: 127.0.0.1:{metrics_port}
switches:
  - name: bench
{switch_lines}    ports:
      - name: p0
        device: {rx_device}
        role: switch
        rate: {rate}
        mac: {ingress_mac}
        peer_mac: 02:00:00:00:00:a1
        ipv4: 10.0.0.1/16
      - {{name: l0, link: down/l0, role: switch, rate: {rate}}}
    routes:
      - prefix: {prefix}
        ports: [l0]
  - name: down
{switch_lines}    ports:
      - {{name: l0, link: bench/l0, role: switch, rate: {rate}}}
      - name: p1
        device: {tx_device}
        role: host
        rate: {rate}
        mac: 02:00:00:00:00:02
        peer_mac: 02:00:00:00:00:a2
        ipv4: 10.2.0.1/16
    routes:
      - prefix: {prefix}
        ports: [p1]
"""


def two_hop_config(args, scheme, pcap):
    lines = "    queues_per_port: %d\n" % args.queues_per_port if args.queues_per_port else ""
    if scheme == "floodgate":
        lines += "    floodgate: {}\n"
    return TWO_HOP_CONFIG.format(
        scheme=scheme, metrics_port=free_tcp_port(), switch_lines=lines, rate=BFC_RATE,
        rx_device=rx_device(pcap), tx_device=TX_DEVICE, ingress_mac=INGRESS_MAC,
        prefix=ROUTED_PREFIX)


def switch_settings(args, scheme):
    """A one-switch scheme's lines under the switch (queues, mechanisms), its
    ports' role and its ports' rate (tools/bench latency uses them too)."""
    bfc = scheme in BFC_SCHEMES
    queues = args.queues_per_port or (BFC_QUEUES_PER_PORT if bfc else 0)
    lines = "    queues_per_port: %d\n" % queues if queues else ""
    if bfc:
        lines += "    bfc:\n      enabled: true\n"
    if scheme == "bfc-quiet":
        lines += "      bitmap_interval: 10s\n"
    if scheme == "dibs":
        lines += "    dibs:\n      enabled: true\n"
    if scheme == "tcd":
        lines += "    tcd:\n      enabled: true\n      q_th: %s\n" % TCD_Q_TH
    shaped = bfc or scheme in ("plain-ring", "plain-shaped")
    return lines, "switch" if bfc or scheme == "dibs" else "host", BFC_RATE if shaped else 0


def sluice_config(args, scheme, pcap):
    """plain: role host, shaper off (rate 0). bfc: role switch, BFC on,
    rate high enough that the shaper never holds frames back. dibs: role
    switch, DIBS on, rate 0. tcd: role host, TCD on (q_th TCD_Q_TH), rate 0."""
    if scheme in TWO_HOP:
        return two_hop_config(args, scheme, pcap)
    if scheme in SPREAD:
        return spread_config(scheme, pcap)
    lines, role, rate = switch_settings(args, scheme)
    shared = scheme in SHARED
    return SLUICE_CONFIG.format(
        scheme=scheme, metrics_port=free_tcp_port(), switch_lines=lines, role=role, rate=rate,
        tx_lines="        cut_through: false\n" if scheme == "plain-ring" else "",
        rx_device=rx_device(pcap, 2 if shared else 1), tx_device=TX_DEVICE,
        ingress_mac=INGRESS_MAC, prefix=ROUTED_PREFIX) + (SHARE_WORKERS if shared else "")


SPREAD_CONFIG = """\
# Generated by tools/bench forward ({scheme}). p0's two rx queues replay the
# benchmark pcap, queue 1's with its destinations in {prefix2}; lcore 1
# owns p0 and p1, lcore 2 owns p2 and receives p0's queue 1.
metrics:
  enabled: true
  address: 127.0.0.1:{metrics_port}
switches:
  - name: bench
    ports:
      - name: p0
        device: net_pcap0,rx_pcap={pcap},rx_pcap={pcap2},infinite_rx=1
        role: host
        rate: 0
        mac: {ingress_mac}
        peer_mac: 02:00:00:00:00:a1
        ipv4: 10.0.0.1/16
      - name: p1
        device: {tx_device}
        role: host
        rate: 0
        mac: 02:00:00:00:00:02
        peer_mac: 02:00:00:00:00:a2
        ipv4: 10.2.0.1/16
      - name: p2
        device: net_null1,no-rx=1
        role: host
        rate: 0
        mac: 02:00:00:00:00:03
        peer_mac: 02:00:00:00:00:a3
        ipv4: 10.4.0.1/16
    routes:
      - prefix: {prefix}
        ports: [{to1}]
      - prefix: {prefix2}
        ports: [{to2}]
workers:
  - lcore: 1
    ports: [bench/p0, bench/p1]
  - lcore: 2
    ports: [bench/p2]
    receive: [bench/p0]
"""


def spread_config(scheme, pcap):
    pcap2 = pcap[:-len(".pcap")] + "-q1.pcap"
    moved_destinations(pcap, pcap2)
    cross = scheme == "plain-cross"
    return SPREAD_CONFIG.format(
        scheme=scheme, metrics_port=free_tcp_port(), pcap=pcap, pcap2=pcap2,
        ingress_mac=INGRESS_MAC, tx_device=TX_DEVICE, prefix=ROUTED_PREFIX,
        prefix2=SPREAD_PREFIX, to1="p2" if cross else "p1", to2="p1" if cross else "p2")


def moved_destinations(src, dst):
    """Writes src's frames to dst with each IPv4 destination's second
    octet set to SPREAD_PREFIX's (its header checksum redone)."""
    octet = int(SPREAD_PREFIX.split(".")[1])
    with open(src, "rb") as f:
        data = f.read()
    out = bytearray(data[:24])
    at = 24
    while at < len(data):
        incl = int.from_bytes(data[at + 8:at + 12], "little")
        frame = bytearray(data[at + 16:at + 16 + incl])
        if frame[12:14] == b"\x08\x00":
            frame[31] = octet
            frame[24:26] = b"\0\0"
            total = sum(int.from_bytes(frame[i:i + 2], "big") for i in range(14, 34, 2))
            while total >> 16:
                total = (total & 0xFFFF) + (total >> 16)
            frame[24:26] = ((~total) & 0xFFFF).to_bytes(2, "big")
        out += data[at:at + 16] + frame
        at += 16 + incl
    with open(dst, "wb") as f:
        f.write(out)


class BenchError(Exception):
    pass


def log(msg):
    print("bench: " + msg, flush=True)


class Cleanup:
    """Undoes what the script did to the machine, in reverse order, once."""

    def __init__(self):
        self.actions = []
        self.procs = []
        self.done = False

    def add(self, what, fn):
        self.actions.append((what, fn))

    def run(self):
        if self.done:
            return
        self.done = True
        for p in self.procs:
            stop_process(p)
        for what, fn in reversed(self.actions):
            try:
                fn()
            except Exception as e:  # keep undoing the rest
                log("cleanup: %s failed: %s" % (what, e))


CLEANUP = Cleanup()


def stop_process(p):
    """Stops one child by its PID: SIGINT, then SIGKILL if it lingers."""
    if p.poll() is not None:
        return
    try:
        os.kill(p.pid, signal.SIGINT)
        p.wait(timeout=STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        log("pid %d ignored SIGINT; killing it" % p.pid)
        os.kill(p.pid, signal.SIGKILL)
        p.wait()
    except ProcessLookupError:
        pass


def read_file(path):
    with open(path) as f:
        return f.read().strip()


def write_file(path, text):
    with open(path, "w") as f:
        f.write(text)


def hugetlbfs_mounted():
    with open("/proc/mounts") as f:
        for line in f:
            dev, mnt, fstype, opts = line.split()[:4]
            if fstype == "hugetlbfs" and "pagesize=1024M" not in opts and "pagesize=1G" not in opts:
                return mnt
    return None


def setup_hugepages():
    """Reserves 2 MB pages and mounts hugetlbfs; registers the undo of both."""
    nr_path = os.path.join(HUGE_DIR, "nr_hugepages")
    before = int(read_file(nr_path))
    if before < HUGE_PAGES_WANTED:
        write_file(nr_path, str(HUGE_PAGES_WANTED))
        CLEANUP.add("restore nr_hugepages=%d" % before, lambda: write_file(nr_path, str(before)))
    got = int(read_file(nr_path))
    log("2 MB hugepages: %d reserved (was %d)" % (got, before))
    if got < HUGE_PAGES_WANTED // 2:
        raise BenchError("only %d hugepages could be reserved (memory fragmented?)" % got)
    if hugetlbfs_mounted() is None:
        os.makedirs(HUGE_MOUNT, exist_ok=True)
        cli.run_step(["mount", "-t", "hugetlbfs", "-o", "pagesize=2M", "nodev", HUGE_MOUNT],
                     "mount hugetlbfs")
        CLEANUP.add("umount " + HUGE_MOUNT, lambda: cli.run_step(["umount", HUGE_MOUNT]))
        log("mounted hugetlbfs on " + HUGE_MOUNT)


def remove_prefix_files(prefix):
    """Removes what a DPDK process with this --file-prefix may leave behind."""
    mnt = hugetlbfs_mounted()
    if mnt:
        for f in glob.glob(os.path.join(mnt, prefix + "map_*")):
            os.unlink(f)
    shutil.rmtree(os.path.join("/var/run/dpdk", prefix), ignore_errors=True)


def free_tcp_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rx_device(pcap, queues=1):
    return "net_pcap0,%sinfinite_rx=1" % ("rx_pcap=%s," % pcap * queues)


TX_DEVICE = "net_null0,no-rx=1"


def eal_memory(mode):
    """EAL's memory options for a --modes mode."""
    if mode == "nohuge":
        return ["--no-huge", "-m", str(NO_HUGE_MEM_MB)]
    return ["--huge-unlink"]  # nothing left in hugetlbfs even if killed


def eal_args(mode, prefix):
    return ["-l", "0,1", "--no-pci", "--file-prefix", prefix] + eal_memory(mode)


class Run:
    """One child process whose stdout is read line by line on a thread."""

    def __init__(self, argv, log_path):
        self.log = open(log_path, "w")
        self.log.write("$ " + " ".join(argv) + "\n")
        self.log.flush()
        # stdbuf: testpmd's stdout is a pipe here and would be block-buffered.
        self.proc = subprocess.Popen(["stdbuf", "-oL"] + argv, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                     text=True, errors="replace", start_new_session=True)
        CLEANUP.procs.append(self.proc)
        self.lines = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self):
        for line in self.proc.stdout:
            self.log.write(line)
            self.lines.put(line)
        self.lines.put(None)

    def collect(self, parse, wanted, timeout):
        return collect(self.lines, self.proc, parse, wanted, timeout)

    def finish(self):
        stop_process(self.proc)
        CLEANUP.procs.remove(self.proc)
        # Drain what is left so the log is complete.
        while self.lines.get() is not None:
            pass
        self.log.close()
        return self.proc.returncode


def collect(lines, proc, parse, wanted, timeout):
    """Feeds a process's output lines to parse() until it has returned
    `wanted` samples."""
    samples = []
    deadline = time.monotonic() + timeout
    while len(samples) < wanted:
        left = deadline - time.monotonic()
        if left <= 0:
            raise BenchError("timed out after %d of %d samples" % (len(samples), wanted))
        try:
            line = lines.get(timeout=left)
        except queue.Empty:
            continue
        if line is None:
            raise BenchError("exited (rc %s) after %d of %d samples"
                             % (proc.poll(), len(samples), wanted))
        v = parse(line)
        if v is not None:
            samples.append(v)
    return samples


def testpmd_parser():
    """Yields port 1's Tx-pps from each periodic 'NIC statistics' block."""
    state = {"port": None}
    header = re.compile(r"NIC statistics for port (\d+)")
    tx_pps = re.compile(r"Tx-pps:\s+(\d+)")

    def parse(line):
        m = header.search(line)
        if m:
            state["port"] = int(m.group(1))
            return None
        m = tx_pps.search(line)
        if m and state["port"] == 1:
            return int(m.group(1)) / 1e6
        return None

    return parse


def sluice_parser(ports=("bench/p1",)):
    """Yields the ports' tx Mpps, summed, from each of sluice's live tables
    (a row per port, in configuration order: the last port's row ends one)."""
    rows = [re.compile(r"^\s+" + re.escape(p) + r"\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s")
            for p in ports]
    seen = {}

    def parse(line):
        for i, row in enumerate(rows):
            m = row.match(line)
            if m:
                seen[i] = float(m.group(3))
                if i == len(rows) - 1 and len(seen) == len(rows):
                    total = sum(seen.values())
                    seen.clear()
                    return total
        return None

    return parse


def run_testpmd(args, mode, pcap, tag):
    prefix = "bench%d-%s" % (os.getpid(), tag)
    argv = (["dpdk-testpmd"] + eal_args(mode, prefix) +
            ["--vdev", rx_device(pcap), "--vdev", TX_DEVICE, "--", "--forward-mode=io", "--nb-cores=1", "--stats-period", "1"])
    run = Run(argv, os.path.join(args.work_dir, tag + ".log"))
    try:
        samples = run.collect(testpmd_parser(), args.warmup + args.window, STARTUP_TIMEOUT_S)
    finally:
        run.finish()
        remove_prefix_files(prefix)
    return samples[args.warmup:]


def run_sluice(args, mode, pcap, scheme, tag):
    config = tag + ".yaml"
    write_file(os.path.join(args.work_dir, config), sluice_config(args, scheme, pcap))
    # sluice creates its ports from the device strings in the config; its
    # table once a second is what is measured. stdbuf: its stdout is a pipe
    # here and would be block-buffered.
    lcores = ["--lcores", "0@0,1@1,2@0"] if scheme in SHARED else ["-l", "0,1"]
    eal = lcores + ["--no-pci"] + eal_memory(mode)
    proc = sluice.start(args.sluice, args.work_dir, args.warmup + args.window + 1,
                        config=config, eal=eal, prefix="bench%d-%s" % (os.getpid(), tag),
                        summary=tag + ".json", log=tag + ".log", wrapper=["stdbuf", "-oL"],
                        memory=False, stats_interval=1, stream=True, new_session=True,
                        echo=False)
    CLEANUP.procs.append(proc.proc)
    try:
        out_ports = (("down/p1",) if scheme in TWO_HOP else
                     ("bench/p1", "bench/p2") if scheme in SPREAD else ("bench/p1",))
        samples = collect(proc.lines, proc.proc, sluice_parser(out_ports),
                          args.warmup + args.window, STARTUP_TIMEOUT_S)
    finally:
        proc.signal(signal.SIGINT)
        run = proc.finish(timeout=STOP_TIMEOUT_S, check=False)
        CLEANUP.procs.remove(proc.proc)
        remove_prefix_files(proc.prefix)
    if run.rc != 0:
        raise BenchError("sluice exited with %d (see %s.log)" % (run.rc, tag))
    switches = run.summary["switches"]
    if scheme in TWO_HOP:
        check_two_hop(switches, scheme, tag)
    else:
        check_sluice_summary(switches[0], scheme, tag)
    if scheme in BFC_SCHEMES:
        check_bfc_path(switches[0], scheme, tag)
    if scheme in SHARED:
        check_shared(run.summary, tag)
    if scheme == "dibs":
        check_dibs_path(switches[0], tag)
    if scheme == "tcd":
        check_tcd_path(switches[0], tag)
    return samples[args.warmup:]


def check_sluice_summary(sw, scheme, tag):
    """Warns when sluice dropped anything: the benchmark input is all routable."""
    ports = {p["name"]: p for p in sw["ports"]}
    drops = sum(sum(p["drops"].values()) for p in ports.values())
    if ports["p1"]["tx_packets"] == 0 or drops:
        why = ""
        p1 = ports["p1"]
        if (scheme == "bfc" and drops == p1["drops"].get("queue_full", 0)
                and drops <= p1["bfc_bitmap_sent"]):
            why = (" -- no more than the %d bitmaps p1 sent: each took a transmit slot "
                   "from a data frame" % p1["bfc_bitmap_sent"])
        log("warning: %s: p1 sent %d packets, %d dropped (%s)%s" % (
            tag, p1["tx_packets"], drops,
            {n: p["drops"] for n, p in ports.items() if p["drops"]}, why))


def check_shared(summary, tag):
    """Fails unless both worker lcores were busy (the share received)."""
    workers = summary.get("workers", [])
    busy = [w.get("busy_fraction", 0) for w in workers]
    if len(workers) != 2 or min(busy) < 0.5:
        raise BenchError("%s: expected two busy worker lcores, got %s" % (tag, busy))


def check_two_hop(switches, scheme, tag):
    """Warns about drops; with floodgate, fails unless credit flowed back over
    the link for what crossed it and no credit was refused."""
    sw = {s["name"]: s for s in switches}
    ports = {(n, p["name"]): p for n, s in sw.items() for p in s["ports"]}
    drops = {k: p["drops"] for k, p in ports.items() if p["drops"]}
    if drops:
        log("warning: %s: drops %s" % (tag, drops))
    if scheme != "floodgate":
        return
    up, down = ports[("bench", "l0")], ports[("down", "l0")]
    fg = sw["bench"].get("floodgate")
    if fg is None or down["fg_credit_sent"] == 0 or up["fg_credit_received_bytes"] == 0:
        raise BenchError("%s: no credit crossed the link (Floodgate off?)" % tag)
    if fg["invalid_credit_bytes"] != 0:
        raise BenchError("%s: bench refused %d credit bytes" % (tag, fg["invalid_credit_bytes"]))
    sent = up["tx_packets"] - up["tx_generated_packets"]
    log("%s: Floodgate path: %d credit frames for %d packets (%.0f per frame), %d packets "
        "waited in VOQs, %.4f%% of the link's bytes were credit" % (
            tag, down["fg_credit_sent"], sent, sent / max(1, down["fg_credit_sent"]),
            fg["held_packets"], 100.0 * down["fg_control_tx_bytes"] / max(1, up["tx_bytes"])))


def check_bfc_path(sw, scheme, tag):
    """Fails unless the run took the BFC path: the switch reports its flow
    table, both ports sent bitmaps (bfc-quiet need not), and every data frame
    p1 sent carried the shim (the bitmaps are the generated frames,
    CONTROL_FRAME_LEN each). Warns when p1's rate came near the shaper's;
    shaper_lost_ns is no guide here: it grows whenever a queue stands while
    the bucket is full, i.e. whenever the loop, not the shaper, is the limit."""
    ports = {p["name"]: p for p in sw["ports"]}
    p0, p1 = ports["p0"], ports["p1"]
    bfc = sw.get("bfc")
    if bfc is None or "bfc_bitmap_sent" not in p1 or bfc["flow_table_entries"] == 0:
        raise BenchError("%s: the summary has no BFC figures (BFC off?)" % tag)
    if scheme == "bfc" and (p0["bfc_bitmap_sent"] == 0 or p1["bfc_bitmap_sent"] == 0):
        raise BenchError("%s: no BFC_BITMAP sent (p0 %d, p1 %d)"
                         % (tag, p0["bfc_bitmap_sent"], p1["bfc_bitmap_sent"]))
    gen = p1["tx_generated_packets"]
    data = p1["tx_packets"] - gen
    in_len = p0["rx_bytes"] / p0["rx_packets"]
    out_len = (p1["tx_bytes"] - CONTROL_FRAME_LEN * gen) / data if data else 0
    if abs(out_len - (in_len + SHIM_LEN)) > 0.01:
        raise BenchError("%s: p1 data frames average %.2f bytes, expected %.0f + %d (shim)"
                         % (tag, out_len, in_len, SHIM_LEN))
    l1 = p1["tx_l1_bits_per_second"]
    if l1 > BFC_RATE_BPS / 2:
        log("warning: %s: p1 at %.1f Gbps of %s: the shaper may have limited the rate"
            % (tag, l1 / 1e9, BFC_RATE))
    log("%s: BFC path: %.2f-byte frames out (%.0f in), bitmaps p0 %d p1 %d, pauses %d, "
        "flow table %d entries, index collisions %d, queue collisions %d, p1 %.1f Gbps L1, "
        "%d queued at stop" % (tag, out_len, in_len, p0["bfc_bitmap_sent"],
                               p1["bfc_bitmap_sent"], p0["bfc_pause_sent"] + p1["bfc_pause_sent"],
                               bfc["flow_table_entries"], bfc["index_collisions"],
                               bfc["queue_collisions"], l1 / 1e9, p1["queued_at_stop"]))


def check_dibs_path(sw, tag):
    """Fails unless the summary shows DIBS on (the switch's dibs object, a
    dibs_detours field on each port); warns when anything was detoured or
    dropped for want of a detour, since the run is meant to measure the
    common path only."""
    ports = {p["name"]: p for p in sw["ports"]}
    dibs = sw.get("dibs")
    if (dibs is None or "detour_drops" not in dibs
            or any("dibs_detours" not in p for p in ports.values())):
        raise BenchError("%s: the summary has no DIBS figures (DIBS off?)" % tag)
    detour_drops = sum(dibs["detour_drops"].values())
    if dibs["detours"] or detour_drops:
        log("warning: %s: %d packets detoured, %d detour drops %s: not only the common path"
            % (tag, dibs["detours"], detour_drops, dibs["detour_drops"]))
    log("%s: DIBS path: on, %d detours (p0 %d, p1 %d), %d detour drops" % (
        tag, dibs["detours"], ports["p0"]["dibs_detours"], ports["p1"]["dibs_detours"],
        detour_drops))


def check_tcd_path(sw, tag):
    """Fails unless the summary shows TCD on p1 (its tcd_* fields, time spent
    in TCD's states); warns about marks, which Not-ECT input never gets."""
    p1 = {p["name"]: p for p in sw["ports"]}["p1"]
    states = ("tcd_non_congestion_ns", "tcd_congestion_ns", "tcd_undetermined_ns")
    if any(k not in p1 for k in states + ("tcd_ce_marks", "tcd_ue_marks", "tcd_pauses")):
        raise BenchError("%s: the summary has no TCD figures on p1 (TCD off?)" % tag)
    if sum(p1[k] for k in states) == 0:
        raise BenchError("%s: p1's TCD detectors recorded no time in any state" % tag)
    marks = p1["tcd_ce_marks"] + p1["tcd_ue_marks"]
    if marks:
        log("warning: %s: TCD marked %d packets of Not-ECT input (CE %d, UE %d)"
            % (tag, marks, p1["tcd_ce_marks"], p1["tcd_ue_marks"]))
    log("%s: TCD path: on, p1 %.2f s non-congested, %.2f s congested, %.2f s undetermined "
        "(summed over queues), %d pauses, CE %d, UE %d" % (
            tag, p1["tcd_non_congestion_ns"] * 1e-9, p1["tcd_congestion_ns"] * 1e-9,
            p1["tcd_undetermined_ns"] * 1e-9, p1["tcd_pauses"], p1["tcd_ce_marks"],
            p1["tcd_ue_marks"]))


def prepare_run():
    """As root, with SIGTERM and SIGHUP unwinding like Ctrl-C so that the
    cleanup runs."""
    if os.geteuid() != 0:
        raise cli.ToolError("run as root (hugepages, DPDK)")

    def on_signal(signum, _frame):
        raise KeyboardInterrupt("signal %d" % signum)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGHUP, on_signal)


def make_work_dir(args, prefix):
    """args.work_dir, or a temporary one removed at the end."""
    if args.work_dir is None:
        args.work_dir = tempfile.mkdtemp(prefix=prefix)
        CLEANUP.add("remove " + args.work_dir, lambda: shutil.rmtree(args.work_dir))
    os.makedirs(args.work_dir, exist_ok=True)


def median(xs):
    return statistics.median(xs) if xs else float("nan")


def build(args):
    if args.build_dir is None:
        args.build_dir = os.path.join(REPO, "build")
        if not os.path.exists(os.path.join(args.build_dir, "switch", "sluice")):
            cli.run_step([os.path.join(REPO, "tools", "setup")], "tools/setup")
    elif not os.path.exists(os.path.join(args.build_dir, "build.ninja")):
        cli.run_step(["meson", "setup", args.build_dir, REPO], "meson setup")
        cli.run_step(["ninja", "-C", args.build_dir], "ninja")
    args.sluice = os.path.join(args.build_dir, "switch", "sluice")
    if not os.access(args.sluice, os.X_OK):
        raise BenchError("no sluice binary at " + args.sluice)
    if shutil.which("dpdk-testpmd") is None:
        raise BenchError("dpdk-testpmd not found (apt-get install dpdk)")


def machine_line():
    model = "unknown CPU"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    load = os.getloadavg()[0]
    return "%s, %d CPUs, load average %.1f at start" % (model, os.cpu_count(), load)


def format_table(results, args):
    """Per scheme: its median, the ratio of the medians to testpmd's, and the
    median of the per-run ratios (each run pairs a testpmd and a sluice
    measurement taken back to back, so it is less sensitive to load that
    changes between runs)."""
    head = "| memory | frame | testpmd io Mpps |"
    rule = "|---|---|---|"
    for sc in args.schemes:
        head += " sluice %s Mpps | %s ratio of medians | %s median of run ratios |" % (sc, sc, sc)
        rule += "---|---|---|"
    lines = [head, rule]
    for (mode, size), r in results.items():
        t = median(r["testpmd"])
        row = "| %s | %d B | %.2f |" % ("2 MB hugepages" if mode == "huge" else "--no-huge",
                                        size, t)
        for sc in args.schemes:
            s = median(r[sc])
            ratios = [b / a for a, b in zip(r["testpmd"], r[sc]) if a]
            row += " %.2f | %.2f | %.2f |" % (s, s / t if t else 0, median(ratios))
        lines.append(row)
    lines.append("")
    lines.append("Medians of %d runs; each run averages the per-second tx rate over seconds "
                 "%d-%d of forwarding." % (args.repeat, args.warmup, args.warmup + args.window))
    lines.append("Per-run Mpps (testpmd / %s):" % " / ".join("sluice " + sc for sc in args.schemes))
    for (mode, size), r in results.items():
        runs = zip(r["testpmd"], *(r[sc] for sc in args.schemes))
        lines.append("  %-6s %4d B: %s" % (mode, size, ", ".join(
            "/".join("%.2f" % v for v in run) for run in runs)))
    return "\n".join(lines)


def main(argv):
    ap = argparse.ArgumentParser(prog="tools/bench forward", description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n".join(__doc__.splitlines()[2:]))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--sizes", default="64,1024", help="wire frame sizes incl. FCS")
    ap.add_argument("--modes", default="huge,nohuge", help="huge, nohuge or both")
    ap.add_argument("--schemes", default="plain,bfc",
                    help="sluice configurations to measure: " + ", ".join(SCHEMES))
    ap.add_argument("--build-dir", help="meson build dir with switch/sluice (default build/)")
    ap.add_argument("--warmup", type=int, default=2, help="seconds discarded at the start")
    ap.add_argument("--window", type=int, default=5, help="seconds measured")
    ap.add_argument("--work-dir", help="pcaps, configs and logs (default: a temp dir, removed)")
    ap.add_argument("--out", default=os.path.join(REPO, "runs", "bench", "forward"),
                    help="table.md, results.json, provenance.json (default %(default)s)")
    ap.add_argument("--results", help="also write the table to this file")
    ap.add_argument("--queues-per-port", type=int, default=0,
                    help="sluice queues per port (default: the configuration default)")
    args = ap.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    modes = args.modes.split(",")
    args.schemes = args.schemes.split(",")
    if (not set(modes) <= {"huge", "nohuge"} or not args.schemes
            or not set(args.schemes) <= set(SCHEMES) or args.repeat < 1 or args.window < 1):
        ap.error("bad --modes, --schemes, --repeat or --window")
    prepare_run()
    try:
        build(args)
        make_work_dir(args, "sluice-bench-")
        forward_pcap.write(args.work_dir, sizes)
        if "huge" in modes:
            setup_hugepages()
        args.machine = machine_line()
        log(args.machine)
        results = {(m, s): {k: [] for k in ("testpmd",) + tuple(args.schemes)}
                   for m in modes for s in sizes}
        for rep in range(args.repeat):
            for mode in modes:
                for size in sizes:
                    pcap = os.path.join(args.work_dir, "bench-%d.pcap" % size)
                    tag = "%s-%d-%d" % (mode, size, rep)
                    r = results[(mode, size)]
                    t = statistics.mean(run_testpmd(args, mode, pcap, "testpmd-" + tag))
                    r["testpmd"].append(t)
                    line = "run %d/%d %-6s %4d B: testpmd %.2f Mpps" % (
                        rep + 1, args.repeat, mode, size, t)
                    for sc in args.schemes:
                        s = statistics.mean(run_sluice(args, mode, pcap, sc,
                                                       "sluice-%s-%s" % (sc, tag)))
                        r[sc].append(s)
                        line += ", sluice %s %.2f Mpps (ratio %.2f)" % (sc, s, s / t if t else 0)
                    log(line)
        table = format_table(results, args)
        print()
        print(table)
        if args.results:
            write_file(args.results, args.machine + "\n\n" + table + "\n")
        os.makedirs(args.out, exist_ok=True)
        write_file(os.path.join(args.out, "table.md"), args.machine + "\n\n" + table + "\n")
        with open(os.path.join(args.out, "results.json"), "w") as f:
            json.dump({"machine": args.machine, "sizes": sizes, "modes": modes,
                       "schemes": args.schemes, "repeat": args.repeat, "warmup": args.warmup,
                       "window": args.window,
                       "mpps": {"%s-%d" % k: v for k, v in results.items()}}, f, indent=2)
        provenance.write(args.out, binaries=[args.sluice, shutil.which("dpdk-testpmd")])
    except (BenchError, cli.ToolError) as e:
        log("error: %s (logs in %s)" % (e, args.work_dir))
        if args.work_dir and not CLEANUP.done:
            CLEANUP.actions = [a for a in CLEANUP.actions if not a[0].startswith("remove ")]
        return 1
    except KeyboardInterrupt:
        log("interrupted")
        return 130
    finally:
        CLEANUP.run()
    return 0
