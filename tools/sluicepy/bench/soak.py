"""A bounded soak of sluice: a BFC fabric at full rate for --minutes, with
memory, counters and ports watched (docs/soak.md).

    h0, h1 -- leaf0 --u-- spine --u-- leaf1 -- h2, h3

Every host replays, in a loop, back-to-back 1514-byte frames at its link
rate (--rate) to the two hosts of the other leaf (--flows flows each), so
each leaf's one uplink is offered twice its rate: the uplinks and the
spine run full and BFC pauses the hosts' NIC queues (the hosts are BFC
NICs). All three switches run BFC in one sluice process on one worker
lcore. Every --interval the tool reads sluice's RSS (/proc) and scrapes its
metrics (mbuf pool in use, per-port rx/tx); at the end it reads the summary.
The run passes when:

  memory is flat    after the first --warmup, the largest RSS of the second
                    half of the samples exceeds that of the first half by at
                    most --rss-slack, and likewise the largest mbuf pool
                    in-use by at most --pool-slack (a fraction of the pool);
                    after the stop every mbuf is back in the pool (the
                    summary's mbuf_pools in_use_after_drain is 0);
  counters conserve per switch at the end: rx = (tx - generated) + drops
                    by reason + queued at stop + consumed, exactly;
  no port stalls    between every two samples every port's rx and tx
                    packets grew (every port carries traffic all the time).

OUT gets samples.csv, summary.json, sluice.log, result.json (with the run's
CPU seconds and peak RSS from its wait4) and provenance.json; one line per
check and PASS/FAIL is printed, and the exit status is 1 on a FAIL.

    flock /tmp/sluice-heavy.lock tools/bench soak --minutes 10 --out runs/bench/soak
"""

import argparse
import csv
import json
import os
import signal
import socket
import time
import urllib.request

import yaml

from .. import cli, counters, provenance, sluice, units
from ..payload import HEADERS_LEN, FrameBuilder
from ..pcapio import PcapWriter

ROOT = sluice.ROOT
PROG = "bench soak"
FRAME_APP = 1448   # 1514-byte frames
OVERHEAD = 24      # preamble, IFG, FCS on the wire
HOSTS = 4          # h0, h1 on leaf0; h2, h3 on leaf1
PASSES = 1000      # frames per destination flow in one pass of a capture


def parse_args(argv):
    p = argparse.ArgumentParser(prog="tools/" + PROG, description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    p.add_argument("--minutes", type=float, required=True, help="how long traffic runs")
    p.add_argument("--out", default=os.path.join(ROOT, "runs", "bench", "soak"))
    p.add_argument("--rate", default="1Gbps", help="every link's rate (default %(default)s)")
    p.add_argument("--flows", type=int, default=16,
                   help="flows from each host to each remote host (default %(default)s)")
    p.add_argument("--interval", default="5s", help="time between samples (default %(default)s)")
    p.add_argument("--warmup", default="20s",
                   help="samples before this are not judged for memory (default %(default)s)")
    p.add_argument("--rss-slack", default="4MB",
                   help="RSS growth allowed between the halves (default %(default)s)")
    p.add_argument("--pool-slack", type=float, default=0.02,
                   help="mbuf pool in-use growth allowed between the halves, as a fraction of "
                        "the pool (default %(default)s)")
    p.add_argument("--sluice", default=sluice.BINARY)
    p.add_argument("--eal", default="--no-huge -m 1024 --no-pci -l 0,1")
    a = p.parse_args(argv)
    if a.minutes <= 0:
        p.error("--minutes must be positive")
    if a.flows < 1:
        p.error("--flows must be at least 1")
    a.rate_bps = units.parse_rate(a.rate)
    a.interval_s = units.parse_time(a.interval)
    a.warmup_s = units.parse_time(a.warmup)
    a.rss_slack_bytes = units.parse_size(a.rss_slack)
    if a.interval_s <= 0 or a.interval_s * 2 > a.minutes * 60:
        p.error("--interval must be positive and fit twice into the run")
    return a


# ---------------------------------------------------------------- the fabric

def host(i):
    return {"name": f"h{i}", "leaf": f"leaf{i // 2}", "ip": f"10.0.{i}.2",
            "mac": f"02:00:00:00:a0:{i:02x}", "sw_mac": f"02:00:00:00:0{i // 2 + 1}:{i:02x}"}


def write_captures(a, wdir):
    """h_i sends to the two hosts of the other leaf, round robin over its
    flows, frames back to back at the link rate."""
    os.makedirs(wdir, exist_ok=True)
    frame_ns = (HEADERS_LEN + FRAME_APP + OVERHEAD) * 8 * 10**9 // a.rate_bps
    for i in range(HOSTS):
        h = host(i)
        remote = [host(j) for j in range(HOSTS) if j // 2 != i // 2]
        builders = [FrameBuilder(h["mac"], h["sw_mac"], h["ip"], r["ip"],
                                 flow_id=i * 1000 + k * len(remote) + n + 1, flow_size=0,
                                 sender_id=i)
                    for k in range(a.flows) for n, r in enumerate(remote)]
        with PcapWriter(os.path.join(wdir, f"h{i}.pcap")) as w:
            for seq in range(PASSES * len(remote)):
                fb = builders[seq % len(builders)]
                w.write(1_700_000_000 * 10**9 + seq * frame_ns,
                        fb.frame(seq, 0, FRAME_APP, seq & 0xFFFF))


def config(a, wdir, metrics_port):
    def sw(name, ports, routes):
        return {"name": name, "queues_per_port": 8, "queue_capacity": 4096,
                "buffer": {"size": "2MB", "alpha": 1.0}, "bfc": {"enabled": True},
                "ports": ports, "routes": routes}

    link = {"role": "switch", "rate": a.rate, "delay": "1us", "hop_rtt": "25us"}
    switches = []
    for leaf in range(2):
        ports, routes = [], []
        for i in (2 * leaf, 2 * leaf + 1):
            h = host(i)
            ports.append({"name": h["name"], "role": "host", "rate": a.rate, "hop_rtt": "25us",
                          "mac": h["sw_mac"], "peer_mac": h["mac"], "ipv4": f"10.0.{i}.1/24",
                          "peer_ip": h["ip"], "nic": "bfc",
                          "pcap": {"rx": os.path.join(wdir, f"h{i}.pcap"), "loop": True}})
        ports.append(dict(link, name="u", link=f"spine/d{leaf}"))
        routes.append({"prefix": f"10.0.{2 * (1 - leaf)}.0/23", "ports": ["u"]})
        switches.append(sw(f"leaf{leaf}", ports, routes))
    switches.append(sw("spine", [dict(link, name=f"d{leaf}", link=f"leaf{leaf}/u")
                                 for leaf in range(2)],
                       [{"prefix": f"10.0.{2 * leaf}.0/23", "ports": [f"d{leaf}"]}
                        for leaf in range(2)]))
    return {"metrics": {"enabled": True, "address": f"127.0.0.1:{metrics_port}"},
            "mbufs": 65536, "switches": switches}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ---------------------------------------------------------------- sampling

def rss_bytes(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise cli.ToolError(f"no VmRSS for pid {pid}")


def scrape(port):
    """{(name, frozenset(labels)): value} of the metrics page."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
        text = r.read().decode()
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        head, _, value = line.rpartition(" ")
        name, _, labels = head.partition("{")
        pairs = frozenset(tuple(kv.split("=", 1)) for kv in labels.rstrip("}").split(",") if kv)
        try:
            out[(name, pairs)] = float(value)
        except ValueError:
            pass
    return out


def sample(pid, port, t0):
    m = scrape(port)
    row = {"t_s": round(time.monotonic() - t0, 3), "rss_bytes": rss_bytes(pid),
           "pool_in_use": 0, "pool_size": 0, "tx": {}, "rx": {}}
    for (name, labels), v in m.items():
        lab = dict((k, v.strip('"')) for k, v in labels)
        if name == "sluice_mbuf_pool_in_use":
            row["pool_in_use"] += int(v)
        elif name == "sluice_mbuf_pool_size":
            row["pool_size"] += int(v)
        elif name in ("sluice_port_tx_packets_total", "sluice_port_rx_packets_total"):
            key = "tx" if "_tx_" in name else "rx"
            row[key][f"{lab['switch']}/{lab['port']}"] = int(v)
    return row


# ---------------------------------------------------------------- judging

def halves(rows, key, warmup_s):
    """Largest value of `key` in the first and second half of the samples
    taken after the warm-up (None, None with fewer than 2 such samples)."""
    vals = [r[key] for r in rows if r["t_s"] >= warmup_s]
    if len(vals) < 2:
        return None, None
    mid = len(vals) // 2
    return max(vals[:mid]), max(vals[mid:])


def check_memory(rows, a):
    out = []
    for key, slack, what in (("rss_bytes", a.rss_slack_bytes, "RSS"),
                             ("pool_in_use", None, "mbuf pool in use")):
        first, second = halves(rows, key, a.warmup_s)
        if first is None:
            out.append({"check": f"{what} flat", "pass": False,
                        "detail": "fewer than 2 samples after the warm-up"})
            continue
        if slack is None:
            slack = a.pool_slack * max(r["pool_size"] for r in rows)
        out.append({"check": f"{what} flat", "pass": second - first <= slack,
                    "detail": f"max {first} in the first half, {second} in the second "
                              f"(growth {second - first}, allowed {slack:.0f})"})
    return out


def check_pool_returned(summary):
    """This fabric has no device rings, so after sluice drained its queues,
    rings and links at stop every mbuf must be back in the pool."""
    pools = summary.get("mbuf_pools") or []
    held = sum(p["in_use_after_drain"] for p in pools)
    return [{"check": "every mbuf returned at stop", "pass": bool(pools) and held == 0,
             "detail": f"{held} mbufs in use after the drain" if pools
                       else "no mbuf_pools in the summary"}]


def check_stalls(rows):
    """Every port's tx and rx packets must grow between consecutive samples:
    every link carries traffic both ways and every host sends all the time
    (a host NIC queue paused for good would stop its port's rx)."""
    stalled = []
    for prev, cur in zip(rows, rows[1:]):
        for way in ("tx", "rx"):
            for port, n in sorted(cur[way].items()):
                if n <= prev[way].get(port, -1):
                    stalled.append(f"{port} {way} between {prev['t_s']} s and {cur['t_s']} s")
    ports = sorted(rows[-1]["tx"]) if rows else []
    return [{"check": "no port stalls", "pass": len(rows) >= 2 and bool(ports) and not stalled,
             "detail": (f"{len(ports)} ports, rx and tx, over {len(rows)} samples"
                        if not stalled else "did not grow: " + "; ".join(stalled[:10]))}]


def check_conservation(summary):
    out = []
    for sw in summary["switches"]:
        ports = sw["ports"]
        rx = sum(p["rx_packets"] for p in ports)
        fwd = sum(p["tx_packets"] - p["tx_generated_packets"] for p in ports)
        drops = sum(counters.port_drops(p) for p in ports)
        queued = sum(p["queued_at_stop"] for p in ports)
        consumed = sum(p["rx_consumed_packets"] for p in ports)
        reasons = {}
        for p in ports:
            for r, n in p.get("drops", {}).items():
                reasons[r] = reasons.get(r, 0) + n
        out.append({"check": f"{sw['name']} counters conserve",
                    "pass": rx == fwd + drops + queued + consumed and rx > 0,
                    "detail": f"rx {rx} = out {fwd} + drops {drops} {reasons or ''}".rstrip()
                              + f" + queued "
                              f"{queued} + consumed {consumed} (difference "
                              f"{rx - fwd - drops - queued - consumed})"})
    return out


# ---------------------------------------------------------------- the run

def run(a, out, wdir):
    """The soak run: samples every --interval; returns (samples, the Run)."""
    mport = free_port()
    with open(os.path.join(out, "sluice.yaml"), "w") as f:
        yaml.safe_dump(config(a, wdir, mport), f, sort_keys=False)
    seconds = a.minutes * 60
    proc = sluice.start(a.sluice, out, None, eal=a.eal, prefix=sluice.new_prefix("soak"))
    rows = []
    try:
        t0 = wait_for_metrics(proc, mport, out)
        next_t = t0
        while time.monotonic() - t0 < seconds:
            next_t += a.interval_s
            time.sleep(max(0.0, next_t - time.monotonic()))
            if proc.poll() is not None:
                raise cli.ToolError(f"sluice exited early ({cli.exit_text(proc.poll())}); "
                                    f"see {out}/sluice.log")
            rows.append(sample(proc.pid, mport, t0))
            r = rows[-1]
            print(f"{PROG}: {r['t_s']:7.1f} s  RSS {r['rss_bytes'] / 2**20:.1f} MiB  "
                  f"mbufs in use {r['pool_in_use']}/{r['pool_size']}", flush=True)
    finally:
        proc.signal(signal.SIGINT)
        done = proc.finish(timeout=60, check=False)
    if done.rc != 0:
        raise cli.ToolError(f"sluice failed ({cli.exit_text(done.rc)}); see {out}/sluice.log")
    return rows, done


def wait_for_metrics(proc, port, out):
    """Waits until the metrics page answers (sluice has started) and returns
    that instant."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise cli.ToolError(f"sluice did not start ({cli.exit_text(proc.poll())}); see "
                                f"{out}/sluice.log")
        try:
            scrape(port)
            return time.monotonic()
        except OSError:
            time.sleep(0.2)
    raise cli.ToolError(f"no metrics from sluice within 60 s; see {out}/sluice.log")


def write_samples(rows, path):
    ports = sorted(rows[-1]["tx"]) if rows else []
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["t_s", "rss_bytes", "pool_in_use", "pool_size"]
                   + [f"tx:{p}" for p in ports] + [f"rx:{p}" for p in ports])
        for r in rows:
            w.writerow([r["t_s"], r["rss_bytes"], r["pool_in_use"], r["pool_size"]]
                       + [r["tx"].get(p, "") for p in ports] + [r["rx"].get(p, "") for p in ports])


def main(argv):
    a = parse_args(argv)
    out = os.path.abspath(a.out)
    os.makedirs(out, exist_ok=True)
    wdir = os.path.join(out, "workload")
    write_captures(a, wdir)
    rows, done = run(a, out, wdir)
    write_samples(rows, os.path.join(out, "samples.csv"))
    summary = done.summary
    checks = (check_memory(rows, a) + check_pool_returned(summary) + check_conservation(summary)
              + check_stalls(rows))
    first, last = rows[0], rows[-1]
    span = last["t_s"] - first["t_s"]
    rates = {p: (last["tx"][p] - first["tx"].get(p, 0)) / span for p in last["tx"]} if span else {}
    for c in checks:
        print(f"{PROG}: {'PASS' if c['pass'] else 'FAIL'}: {c['check']}: {c['detail']}", flush=True)
    print(f"{PROG}: tx frames/s per port: "
          + ", ".join(f"{p} {v:.0f}" for p, v in sorted(rates.items())), flush=True)
    ok = all(c["pass"] for c in checks)
    with open(os.path.join(out, "result.json"), "w") as f:
        json.dump({"minutes": a.minutes, "rate": a.rate, "flows": a.flows, "pass": ok,
                   "checks": checks, "tx_frames_per_second": rates,
                   "mbuf_pools": summary.get("mbuf_pools"), "samples": len(rows),
                   "sluice": done.record()}, f, indent=2)
    provenance.write(out, binaries=[a.sluice])
    return 0 if ok else 1
