#!/usr/bin/python3
"""Queueing by flow end to end (docs/traffic-manager.md, "Queueing by
flow"), in exact fabric time on one 10 Gb/s switch with TCP hosts, each
against what its own paper states:

- SFQ (McKenney, "Stochastic Fairness Queueing"): a short flow arriving
  behind a long flow's standing queue is isolated from it, finishing in
  about its unloaded time, while under one FIFO it waits out the queue;
  unless the two collide, which one queue forces: then it waits as in the
  FIFO.
- FQ (a queue per flow, unlimited buffer; BFC section 6.2's Ideal-FQ):
  two flows starting together share the port equally, so the smaller
  (5 MB of 15) ends when 2 x 5 MB have crossed.
- CoDel (RFC 8289, sections 1 and 4): with two long TCP flows' standing
  queue, the queue's delay stays near the target (it drops as the control
  law says), where drop-tail with a deep buffer lets it grow far past it.
- Repeatability: the SFQ-CoDel run twice gives identical completions.
- Bad input: --check refuses a quantum below a frame and a CoDel target
  not below its interval, naming the key."""

import bisect
import os
import random
import statistics
import subprocess

import harness
from harness import check
from test_transports import queue_samples, run

# sluice starts the flow list's time 0 this long after its workers start
# (--duration counts from there).
LEAD = 0.05
TCP = {"kind": "tcp", "base_rtt": "12us",
       "tcp": {"min_rto": "1ms", "fast_retransmit": True, "init_cwnd": 10}}
RATE = 10e9
WIRE_FRAME = 1070 + 24  # a full segment's frame on the wire


def fct(rows, flow):
    return next(float(r["fct_seconds"]) for r in rows if int(r["flow_id"]) == flow)


def check_sfq_isolation(binary, tmp):
    """A 20 KB flow from h1 joins the 15 MB flows of h0 and h3 into h2 after
    5 ms (two senders, so the queue stands at the switch, not in a NIC)."""
    flows = [(1, 0, 2, 15_000_000, 1e-6), (2, 1, 2, 20_000, 0.005), (3, 3, 2, 15_000_000, 1e-6)]
    fcts = {}
    for name, extra in (("fifo", {}),
                        ("sfq", {"queueing": {"mode": "sfq", "queues": 1024}}),
                        ("sfq1", {"queueing": {"mode": "sfq", "queues": 1}})):
        summary, rows = run(binary, tmp, name, 4, "10Gbps", "2us", TCP, flows, LEAD + 0.08,
                            sw_extra=dict(extra, buffer={"size": "4MB", "alpha": 64.0}))
        check(all(r["finished"] == "1" for r in rows), f"{name}: a flow did not finish")
        fcts[name] = fct(rows, 2)
        port = harness.find_port(summary, "s1", "h2")
        if name == "sfq":
            check(port.get("sfq_collisions") == 0,
                  f"sfq: the two flows collided in 1024 queues ({port.get('sfq_collisions')})")
        if name == "sfq1":
            check(port.get("sfq_collisions", 0) > 0, "sfq1: one queue saw no collision")
    # Unloaded: 20 frames at line rate and a few RTTs of slow start.
    unloaded = 20 * WIRE_FRAME * 8 / RATE + 3 * 12e-6
    print("sfq: short flow's FCT " + ", ".join(f"{k} {v * 1e6:.0f} us" for k, v in fcts.items()) +
          f"; unloaded about {unloaded * 1e6:.0f} us")
    check(fcts["sfq"] <= 2 * unloaded, f"sfq: short flow took {fcts['sfq'] * 1e6:.0f} us")
    check(fcts["fifo"] >= 5 * fcts["sfq"], f"fifo: short flow took {fcts['fifo'] * 1e6:.0f} us")
    check(fcts["sfq1"] >= 5 * fcts["sfq"],
          f"sfq1 (forced collision): short flow took {fcts['sfq1'] * 1e6:.0f} us")


def check_fq_shares(binary, tmp):
    flows = [(1, 0, 2, 5_000_000, 1e-6), (2, 1, 2, 10_000_000, 1e-6)]
    summary, rows = run(binary, tmp, "fq", 3, "10Gbps", "2us", TCP, flows, LEAD + 0.02,
                        sw_extra={"queueing": {"mode": "fq", "buffer": "unlimited"}})
    drops = sum(sum(r.values()) for r in harness.all_drops(summary).values())
    check(drops == 0, f"fq: {drops} drops with an unlimited buffer")
    payload_rate = RATE * 1000 / WIRE_FRAME / 8  # bytes of payload per second
    fair = 2 * 5_000_000 / payload_rate
    print(f"fq: the 5 MB flow ended after {fct(rows, 1) * 1e3:.2f} ms, fair share "
          f"{fair * 1e3:.2f} ms; the 10 MB flow after {fct(rows, 2) * 1e3:.2f} ms")
    check(abs(fct(rows, 1) / fair - 1) <= 0.05, f"fq: 5 MB flow {fct(rows, 1) * 1e3:.2f} ms")
    check(abs(fct(rows, 2) / (15_000_000 / payload_rate) - 1) <= 0.05,
          f"fq: 10 MB flow {fct(rows, 2) * 1e3:.2f} ms")


def check_codel(binary, tmp):
    target, interval = 20e-6, 200e-6
    # Two senders, so the queue stands at the switch's port to h2.
    flows = [(1, 0, 2, 20_000_000, 1e-6), (2, 1, 2, 20_000_000, 1e-6)]
    delays = {}
    for name, extra in (("droptail", {}),
                        ("codel", {"queueing": {"mode": "sfq", "queues": 1,
                                                "codel": {"target": "20us",
                                                          "interval": "200us"}}})):
        summary, rows = run(binary, tmp, name, 3, "10Gbps", "2us", TCP, flows, LEAD + 0.045,
                            sw_extra=dict(extra, buffer={"size": "4MB", "alpha": 64.0}),
                            trace=True)
        check(all(r["finished"] == "1" for r in rows), f"{name}: a flow did not finish")
        q = queue_samples(tmp, name, "h2", 0.005, 0.025)
        delays[name] = statistics.median(b * 8 / RATE for _, b in q)
        port = harness.find_port(summary, "s1", "h2")
        if name == "codel":
            check(port.get("codel_drops", 0) > 0, "codel: CoDel dropped nothing")
            check(port["drops"].get("codel") == port["codel_drops"],
                  f"codel: drops {port['drops']} against codel_drops {port['codel_drops']}")
            codel_fct = max(fct(rows, 1), fct(rows, 2))
    print("codel: median queue delay " +
          ", ".join(f"{k} {v * 1e6:.1f} us" for k, v in delays.items()) +
          f" (target {target * 1e6:.0f} us); FCT with CoDel {codel_fct * 1e3:.2f} ms")
    check(delays["codel"] <= 2 * target, f"codel: median delay {delays['codel'] * 1e6:.1f} us")
    check(delays["droptail"] >= 10 * target,
          f"droptail: median delay {delays['droptail'] * 1e6:.1f} us")
    # The link stays busy: CoDel does not starve it (the 40 MB at line
    # rate take 35 ms).
    check(codel_fct <= 1.1 * 40_000_000 * WIRE_FRAME * 8 / 1000 / RATE,
          f"codel: 40 MB took {codel_fct * 1e3:.2f} ms")


def websearch_sizes(srcdir):
    """(bytes, cumulative fraction) points of the web-search distribution."""
    pts = []
    with open(os.path.join(srcdir, "conf", "workloads", "websearch.cdf")) as f:
        for line in f:
            if line.strip() and not line.startswith("#"):
                size, pct = line.split()
                pts.append((float(size), float(pct) / 100))
    return pts


def sample(pts, u):
    """Inverse CDF, linear between points."""
    i = bisect.bisect_left([c for _, c in pts], u)
    (s0, c0), (s1, c1) = pts[max(i - 1, 0)], pts[min(i, len(pts) - 1)]
    return max(1, int(s0 if c1 == c0 else s0 + (s1 - s0) * (u - c0) / (c1 - c0)))


def check_pfabric(binary, tmp, srcdir):
    """pFabric ("pFabric: Minimal Near-Optimal Datacenter Transport",
    sections 1 and 5): short flows finish in near their ideal time at
    moderate load. Web-search flows between 8 hosts on one 10 Gb/s switch at
    load 0.5 of every host's link, the same flows with pFabric (its
    switches and hosts) and with DCTCP (ECN step at 65 packets)."""
    rng = random.Random(7)
    pts = websearch_sizes(srcdir)
    hosts, load, n = 8, 0.5, 240
    mean = sum((pts[i][1] - pts[i - 1][1]) * (pts[i][0] + pts[i - 1][0]) / 2
               for i in range(1, len(pts)))
    rate = hosts * load * RATE / 8 / mean  # flows per second
    flows, t = [], 1e-6
    for fid in range(1, n + 1):
        t += rng.expovariate(rate)
        src = rng.randrange(hosts)
        dst = (src + 1 + rng.randrange(hosts - 1)) % hosts
        flows.append((fid, src, dst, sample(pts, rng.random()), t))
    span = flows[-1][4]
    result = {}
    for name, transport, extra in (
            ("pfabric", {"kind": "pfabric", "base_rtt": "12us"},
             {"queueing": {"mode": "pfabric"}}),
            ("dctcp", {"kind": "dctcp", "base_rtt": "12us"},
             {"ecn": {"mode": "step", "k": "65KB"}, "buffer": {"size": "4MB", "alpha": 8.0}})):
        summary, rows = run(binary, tmp, name, hosts, "10Gbps", "2us", transport, flows,
                            LEAD + span + 0.05, sw_extra=extra)
        check(all(r["finished"] == "1" for r in rows), f"{name}: a flow did not finish")
        short = [float(r["fct_seconds"]) / float(r["ideal_seconds"]) for r in rows
                 if int(r["size"]) <= 100_000]
        result[name] = (statistics.mean(short), sorted(short)[int(0.99 * (len(short) - 1))],
                        len(short))
    print("pfabric: short flows (<= 100 KB) mean / p99 slowdown: " +
          ", ".join(f"{k} {m:.2f} / {p:.2f} ({c} flows)" for k, (m, p, c) in result.items()) +
          f"; {n} flows over {span * 1e3:.1f} ms")
    check(result["pfabric"][0] <= 1.5,
          f"pfabric: short flows' mean slowdown {result['pfabric'][0]:.2f}, not near ideal")
    check(result["pfabric"][0] < result["dctcp"][0],
          f"pfabric: short flows' mean slowdown {result['pfabric'][0]:.2f} not below DCTCP's "
          f"{result['dctcp'][0]:.2f}")


def check_repeat(binary, tmp):
    flows = [(1, 0, 2, 3_000_000, 1e-6), (2, 1, 2, 3_000_000, 0.0001)]
    extra = {"queueing": {"mode": "sfq", "queues": 4,
                          "codel": {"target": "10us", "interval": "100us"}},
             "buffer": {"size": "1MB", "alpha": 64.0}}
    out = []
    for name in ("repeat_a", "repeat_b"):
        run(binary, tmp, name, 3, "10Gbps", "2us", TCP, flows, LEAD + 0.01, sw_extra=extra)
        with open(os.path.join(tmp, f"{name}.completions.csv")) as f:
            out.append(f.read())
    check(out[0] == out[1], "sfq-codel: two runs gave different completions")


def check_bad_input(binary, tmp):
    for name, queueing, expect in (
            ("bad_quantum", {"mode": "sfq", "quantum": 1000},
             "expected a quantum of at least the largest frame"),
            ("bad_codel", {"mode": "fq", "codel": {"target": "1ms", "interval": "1ms"}},
             "expected target below interval"),
            ("bad_queues", {"mode": "fq", "queues": 8}, "\"queues\" applies only to mode sfq"),
            ("bad_pfabric", {"mode": "pfabric", "buffer": "1000B"},
             "expected a pfabric buffer of at least the largest frame"),
            ("bad_pfabric_codel", {"mode": "pfabric", "codel": {"target": "5us"}},
             "applies only to mode sfq or fq")):
        cfg = os.path.join(tmp, f"{name}.yaml")
        p0 = harness.port("p0", "net_null0", "02:00:00:00:00:01", "02:00:00:00:00:02",
                          "10.0.0.1/24", rate="10Gbps")
        harness.write_config(cfg, [harness.switch("s1", [p0], [], queueing=queueing)])
        r = subprocess.run([binary, "--", "--config", cfg, "--check"], capture_output=True,
                           text=True, timeout=60)
        check(r.returncode == 1, f"{name}: --check exit {r.returncode}\n{r.stderr}")
        check(expect in r.stderr and "queueing" in r.stderr,
              f"{name}: --check said\n{r.stderr}\nexpected {expect!r}")


def test(binary, srcdir):
    with harness.TempDir("flow_queueing") as tmp:
        check_bad_input(binary, tmp)
        check_sfq_isolation(binary, tmp)
        check_fq_shares(binary, tmp)
        check_codel(binary, tmp)
        check_pfabric(binary, tmp, srcdir)
        check_repeat(binary, tmp)


if __name__ == "__main__":
    harness.main(test)
