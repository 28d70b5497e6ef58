#!/usr/bin/python3
"""The BFC paper's testbed (its Fig. 6) on conf/bfc-testbed.yaml, run by
tools/reproduce bfc-testbed under dynamic, stochastic and single queue assignment on
one workload (conf/workloads/bfc-testbed.matrix.yaml): group 1 (g1 -> r1)
and group 2 (g2 -> r2) cross s1 -> s2, group 3 (g3 -> r2) crosses s3 -> s2,
all open loop; s2 -> r2 is the bottleneck of the four long flows of groups 2
and 3.

(a) Dynamic assignment, during the congested interval (from 2 ms after the
    last long flow starts until the first one has sent its last packet; each
    sends faster than its share of r2 all along, so r2 always has demand):
    - the deepest queue at s2 toward r2 (queue trace, every 10 us) is at most
      Th + one hop-RTT of arrivals + one MTU frame, with
      Th = hop_rtt x rate(r2) / N (N = 4 bottlenecked flows, 8 bits a byte),
      hop-RTT arrivals = hop_rtt x rate(s1 -> s2 link), MTU frame = 1514 B;
      and sluice's own peak excess over the Th in force is within the last
      two terms;
    - r2 carries >= 95% of its rate (wire bytes in its capture);
    - no packet is dropped anywhere, under any of the three assignments.
(b) Group-1 flows are never bottlenecked at s2. With dynamic assignment they
    get queues of their own at s1 (no queue collision: flows <= queues) and
    are not slowed by group 2's backpressure, against the same group-1 flows
    run alone (the experiment runs them once more without groups 2 and 3):
    the median of each flow's FCT ratio (with / alone) is at most 1.1 and the
    mean FCT at most 1.25 x alone (one ~1 ms stall of the worker loop, which
    the fidelity figures show, adds ~10% to the mean of ~100 short flows;
    backpressure HoL blocking, as under stochastic, costs 3x and more). Their mean FCT orders
    dynamic < stochastic < single (the paper's Fig. 8). (The mean slowdown
    against line rate plus propagation, ~1.2 in both runs, is printed: it is
    the emulator's own per-hop latency, not backpressure.)

Every bound is computed here from the configuration and the flow list.
A run whose worker lost more than 1% of the bottleneck's time to a late loop
(a machine busy with something else) measures the machine, not BFC: it is
run once more, and the test fails if that one is late too.
"""

import csv
import json
import math
import os
import re
import subprocess
import sys

import yaml

import harness
from harness import check, pcap_records

SCHEMES = ("bfc", "bfc-stochastic", "bfc-single")
MTU_FRAME = 1514          # Ethernet header + 1500-byte IP packet, as queues count it
WIRE_EXTRA = 24           # FCS + preamble + inter-frame gap, per frame on a link
APP_PER_PACKET = 1448     # flow bytes in a full workload packet
PER_PACKET_WIRE = 90      # headers (66) + WIRE_EXTRA per workload packet
WARMUP_S = 0.002
MAX_LOST_SHARE = 0.01     # fidelity: bottleneck transmit time lost to the loop
MAX_G1_VS_ALONE = 1.25   # mean FCT with groups 2 and 3 / mean FCT alone
MAX_G1_MEDIAN_RATIO = 1.10  # median over flows of FCT with / FCT alone


def rate_bps(text):
    m = re.fullmatch(r"([0-9.]+)([GMk]?)bps", str(text))
    check(m is not None, f"unexpected rate {text!r}")
    return float(m.group(1)) * {"G": 1e9, "M": 1e6, "k": 1e3, "": 1}[m.group(2)]


def seconds(text):
    t = str(text)
    for suffix, mult in (("us", 1e-6), ("ms", 1e-3), ("ns", 1e-9), ("s", 1.0)):
        if t.endswith(suffix):
            return float(t[:-len(suffix)]) * mult
    return float(t)


def port(conf, sw_name, name):
    sw = next(s for s in conf["switches"] if s["name"] == sw_name)
    return sw, next(p for p in sw["ports"] if p["name"] == name)



def run_testbed(srcdir, binary, out):
    # The test judges the bottleneck's lost time itself (bottleneck_lost_share)
    # and says so; the tool's own gate would only refuse a slow machine.
    cmd = ["/usr/bin/python3", os.path.join(srcdir, "tools", "reproduce"), "bfc-testbed",
           "--out", out, "--sluice", binary, "--allow-unfaithful", "--floor-seconds", "0"]
    done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=300)
    check(done.returncode == 0, f"tools/reproduce bfc-testbed failed:\n{done.stdout[-3000:]}")
    for scheme in SCHEMES:
        check(os.path.exists(os.path.join(out, scheme, "queue_trace.csv")),
              f"{scheme}: no queue trace")
    for png in ("bfc_testbed_queue.png", "bfc_testbed_fct.png"):
        with open(os.path.join(out, png), "rb") as f:
            check(f.read(8) == b"\x89PNG\r\n\x1a\n", f"{png} is not a PNG")


def load(out):
    summaries = {}
    for scheme in SCHEMES:
        with open(os.path.join(out, scheme, "summary.json")) as f:
            summaries[scheme] = json.load(f)
    with open(os.path.join(out, "workload", "flows.csv"), newline="") as f:
        flows = list(csv.DictReader(f))
    return summaries, flows


def summary_port(summary, sw_name, name):
    sw = next(s for s in summary["switches"] if s["name"] == sw_name)
    return sw, next(p for p in sw["ports"] if p["name"] == name)


def bottleneck_lost_share(summary, interval_s):
    """The larger share of the interval that s2's ports toward the receivers
    lost to a late loop while they had frames waiting."""
    return max(summary_port(summary, "s2", p)[1].get("shaper_lost_ns", 0)
               for p in ("r1", "r2")) / 1e9 / interval_s


def check_queue_bound(out, t0, t1, bound, th, arrivals, summary):
    peak, at = 0, None
    with open(os.path.join(out, "bfc", "queue_trace.csv"), newline="") as f:
        for r in csv.DictReader(f):
            if (r["switch"], r["port"]) != ("s2", "r2") or r["queue"] in ("port", "buffer"):
                continue
            t = float(r["time_seconds"])
            if t0 <= t < t1 and int(r["bytes"]) > peak:
                peak, at = int(r["bytes"]), t
    check(peak > th, f"(a) queues at s2/r2 never exceeded Th = {th:.0f} B (peak {peak} B):"
                     " nothing was bottlenecked")
    check(peak <= bound, f"(a) s2/r2 queue reached {peak} B at {at * 1e3:.2f} ms, above "
                         f"Th {th:.0f} + hop-RTT arrivals {arrivals:.0f} + MTU {MTU_FRAME}"
                         f" = {bound:.0f} B")
    _, r2 = summary_port(summary, "s2", "r2")
    excess = r2["bfc_peak_excess_bytes"]
    check(excess <= arrivals + MTU_FRAME,
          f"(a) sluice's peak excess over Th at s2/r2 is {excess} B > {arrivals + MTU_FRAME:.0f} B")
    return peak, excess


def utilisation(out, summary, t0, t1, rate):
    start = summary["replay_start_epoch_seconds"] * 1e9
    lo, hi = start + t0 * 1e9, start + t1 * 1e9
    bits = sum((orig + WIRE_EXTRA) * 8
               for ts, orig in pcap_records(os.path.join(out, "bfc", "capture", "rx_r2.pcap"))
               if lo <= ts < hi)
    return bits / (rate * (t1 - t0))


def group1_fcts(run_dir):
    """{(k, size): FCT s} of group 1's k-th flow in arrival order (the key
    pairs the same flow across workloads, whose flow ids differ)."""
    with open(os.path.join(run_dir, "fct", "fct.csv"), newline="") as f:
        rows = sorted((int(r["flow_id"]), r["size"], float(r["fct_seconds"]))
                      for r in csv.DictReader(f) if r["src"] == "g1")
    return {(k, size): fct for k, (_, size, fct) in enumerate(rows)}


def group1(run_dir, host_rate, delay_s):
    """(mean FCT s, mean slowdown, flows) of group 1; the ideal FCT is the
    flow's wire bytes at the host rate plus the one-way propagation delay."""
    scheme = os.path.basename(run_dir)
    with open(os.path.join(run_dir, "fct", "fct.csv"), newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["src"] == "g1"]
    check(len(rows) >= 50, f"{scheme}: only {len(rows)} group-1 flows")
    unfinished = [r["flow_id"] for r in rows if r["finished"] != "1"]
    check(not unfinished, f"{scheme}: group-1 flows unfinished: {unfinished}")
    fcts, slowdowns = [], []
    for r in rows:
        size = int(r["size"])
        wire = size + math.ceil(size / APP_PER_PACKET) * PER_PACKET_WIRE
        ideal = wire * 8 / host_rate + delay_s
        fct = float(r["fct_seconds"])
        fcts.append(fct)
        slowdowns.append(fct / ideal)
    return sum(fcts) / len(fcts), sum(slowdowns) / len(slowdowns), len(rows)


def attempt(binary, srcdir, tmp, n):
    out = os.path.join(tmp, f"run{n}")
    run_testbed(srcdir, binary, out)
    summaries, flows = load(out)
    long_flows = [f for f in flows if f["dst"] == "r2"]
    t0 = max(float(f["start_time"]) for f in long_flows) + WARMUP_S
    t1 = min(float(f["end_time"]) for f in long_flows)
    check(t1 - t0 > 0.02, f"congested interval too short: {t0}-{t1}")
    return out, summaries, flows, len(long_flows), t0, t1


def test(binary, srcdir):
    with open(os.path.join(srcdir, "conf", "bfc-testbed.yaml")) as f:
        conf = yaml.safe_load(f)
    s2, r2_conf = port(conf, "s2", "r2")
    hop_rtt = max(seconds(p["hop_rtt"]) for p in s2["ports"])
    rate = rate_bps(r2_conf["rate"])
    up_rate = rate_bps(port(conf, "s1", "u")[1]["rate"])
    host_rate = rate_bps(port(conf, "s1", "g1")[1]["rate"])
    delay = seconds(port(conf, "s1", "u")[1]["delay"])
    with harness.TempDir("bfc-testbed") as tmp:
        for n in (1, 2):
            out, summaries, flows, n_long, t0, t1 = attempt(binary, srcdir, tmp, n)
            lost = bottleneck_lost_share(summaries["bfc"], t1 - t0)
            if lost <= MAX_LOST_SHARE:
                break
            print(f"attempt {n}: the loop lost {lost * 100:.1f}% of s2/r1 or s2/r2's time "
                  "(machine busy); running again", file=sys.stderr)
        check(lost <= MAX_LOST_SHARE,
              f"fidelity: s2/r1 or s2/r2 lost {lost * 100:.1f}% of its transmit time to a late loop "
              f"(> {MAX_LOST_SHARE * 100:.0f}%) twice: the machine is too busy to measure BFC")

        # Every sender's capture starts at the same instant (replay aligns first frames).
        firsts = {h: pcap_records(os.path.join(out, "workload", h + ".pcap"))[0][0]
                  for h in ("g1", "g2", "g3")}
        check(len(set(firsts.values())) == 1, f"sender captures start at different times: {firsts}")

        bfc = summaries["bfc"]
        sw1 = next(s for s in bfc["switches"] if s["name"] == "s1")
        sw2 = next(s for s in bfc["switches"] if s["name"] == "s2")
        check(sw2["bfc"]["hop_rtt_ns"] == round(hop_rtt * 1e9),
              f"s2 uses hop RTT {sw2['bfc']['hop_rtt_ns']} ns, config says {hop_rtt * 1e9:.0f}")
        for scheme, s in summaries.items():
            harness.check_identity(s)
            lost_pkts = {(sw["name"], p["name"]): p["drops"] for sw in s["switches"]
                         for p in sw["ports"] if p["drops"]}
            check(not lost_pkts, f"{scheme}: packets dropped: {lost_pkts}")

        # (a)
        th = hop_rtt * rate / 8 / n_long
        arrivals = hop_rtt * up_rate / 8
        bound = th + arrivals + MTU_FRAME
        pauses = sum(summary_port(bfc, "s2", p)[1]["bfc_pause_sent"] for p in ("a", "b"))
        check(pauses > 0, "(a) s2 sent no BFC pause")
        peak, excess = check_queue_bound(out, t0, t1, bound, th, arrivals, bfc)
        util = utilisation(out, bfc, t0, t1, rate)
        check(util >= 0.95, f"(a) s2 -> r2 carried {util * 100:.1f}% of its rate in "
                            f"{t0 * 1e3:.1f}-{t1 * 1e3:.1f} ms, expected >= 95%")

        # (b)
        check(sw1["bfc"]["queue_collisions"] == 0,
              f"(b) dynamic: {sw1['bfc']['queue_collisions']} queue collisions at s1 "
              "(more flows than queues)")
        g1 = {s: group1(os.path.join(out, s), host_rate, delay) for s in SCHEMES}
        alone = group1(os.path.join(out, "alone", "bfc"), host_rate, delay)
        check(alone[2] == g1["bfc"][2], f"(b) {alone[2]} group-1 flows alone, {g1['bfc'][2]} "
                                        "with groups 2 and 3: not the same flows")
        mean_fct = {s: v[0] for s, v in g1.items()}
        with_g2, by_itself = (group1_fcts(os.path.join(out, "bfc")),
                              group1_fcts(os.path.join(out, "alone", "bfc")))
        check(with_g2.keys() == by_itself.keys(), "(b) group-1 flows differ from the alone run")
        ratios = sorted(with_g2[k] / by_itself[k] for k in with_g2)
        median_ratio = ratios[len(ratios) // 2]
        check(median_ratio <= MAX_G1_MEDIAN_RATIO,
              f"(b) dynamic: median group-1 FCT ratio to alone {median_ratio:.3f} > "
              f"{MAX_G1_MEDIAN_RATIO}")
        check(mean_fct["bfc"] <= MAX_G1_VS_ALONE * alone[0],
              f"(b) dynamic: group-1 mean FCT {mean_fct['bfc'] * 1e6:.1f} us > "
              f"{MAX_G1_VS_ALONE} x {alone[0] * 1e6:.1f} us (group 1 alone)")
        check(mean_fct["bfc"] < mean_fct["bfc-stochastic"] < mean_fct["bfc-single"],
              f"(b) group-1 mean FCT not dynamic < stochastic < single: {mean_fct}")

        print(f"interval {t0 * 1e3:.1f}-{t1 * 1e3:.1f} ms, lost {lost * 100:.2f}%; "
              f"(a) Th {th:.0f} B, peak {peak} B <= bound {bound:.0f} B, sluice excess "
              f"{excess} B, utilisation {util * 100:.2f}%, pauses {pauses}")
        print("(b) group-1 flows %d; median FCT ratio to alone %.3f; alone: mean FCT %.1f us, "
              "slowdown %.3f; mean FCT us: %s; mean slowdown: %s" % (
                  g1["bfc"][2], median_ratio, alone[0] * 1e6, alone[1],
                                     {s: round(v[0] * 1e6, 1) for s, v in g1.items()},
                                     {s: round(v[1], 3) for s, v in g1.items()}))


if __name__ == "__main__":
    harness.main(test)
