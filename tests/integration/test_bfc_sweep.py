#!/usr/bin/python3
"""tools/reproduce bfc-sweep, cheaply: two points of each of the paper's §6.1 sweeps on
the testbed of conf/bfc-testbed.yaml as the paper ran it (every port at the
host rate, 16 queues per port, open-loop senders).

th (Fig. 7b): one group-2 and one group-3 flow at s2 -> r2 under dynamic
  BFC with bfc.th = 50 us and 800 us.
  - sluice reports the configured time (summary bfc.th_ns of every switch)
    and uses it: every Th in s2/r2's queue trace during the congested
    interval is th x rate / 8 / N for N = 1 or 2, and N = 2 occurs;
  - the larger th gives a strictly larger time-average queue at s2/r2 (the
    mean of the trace's samples, taken every 10 us of fabric time), by at
    least a quarter of the difference in Th(N=2), and at least as high a
    utilisation of r2 (wire bytes in its capture, one frame's worth of
    slack for the window's edges);
  - no drops; the tool's fidelity gate passed (it exits 3 otherwise).
flows (Fig. 8): two group-1 flows, four group-2 flows, eight group-3
  flows, one seed, under single and dynamic assignment:
  - group 1 is bottlenecked at s1 -> s2 under dynamic: while its frames
    arrive at r1, r1 and g2's frames at r2 together fill >= 95% of the
    s1 -> s2 rate, while group 1 gets < 90% of its sender's;
  - dynamic assignment puts no two flows in one queue at s1 (6 flows on
    16 queues: no queue collision) and gives group 1 a lower mean FCT than
    single assignment, where it waits behind group 2's paused queue.
Every figure is computed here from the configuration, the flow list, the
captures and the queue trace, not taken from the tool's own analysis.
"""

import csv
import json
import os
import subprocess

import yaml

import harness
from harness import check, pcap_records

WIRE_EXTRA = 24
APP_PER_FRAME = 1448
WIRE_FRAME = 1538
WARMUP_S = 0.002
TH_SMALL, TH_LARGE = 50_000, 800_000  # ns


def rate_bps(text):
    t = str(text)
    for suffix, mult in (("Gbps", 1e9), ("Mbps", 1e6), ("kbps", 1e3), ("bps", 1)):
        if t.endswith(suffix):
            return float(t[:-len(suffix)]) * mult
    raise harness.TestFailure(f"unexpected rate {text!r}")


def port(conf, sw_name, name):
    sw = next(s for s in conf["switches"] if s["name"] == sw_name)
    return sw, next(p for p in sw["ports"] if p["name"] == name)



def run_sweep(srcdir, binary, args):
    cmd = ["/usr/bin/python3", os.path.join(srcdir, "tools", "reproduce"), "bfc-sweep"] + args + [
        "--sluice", binary, "--floor-seconds", "0"]
    done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=400)
    check(done.returncode == 0,
          f"tools/reproduce bfc-sweep {args[0]} failed (status {done.returncode}; 3 = fidelity gate):\n"
          f"{done.stdout[-3000:]}")
    print(done.stdout[-1500:])


def load_json(path):
    with open(path) as f:
        return json.load(f)


def flows_of(d):
    with open(os.path.join(d, "workload", "flows.csv"), newline="") as f:
        return list(csv.DictReader(f))


def start_ns(summary):
    return round((summary["replay_start_epoch_seconds"] -
                  summary.get("replay_origin_capture_seconds", 0)) * 1e9)


def total_drops(summary):
    return sum(sum(p["drops"].values()) for sw in summary["switches"] for p in sw["ports"])


def th_point(d, th_ns):
    conf = yaml.safe_load(open(os.path.join(d, "testbed.yaml")))
    rate = rate_bps(port(conf, "s2", "r2")[1]["rate"])
    summary = load_json(os.path.join(d, "bfc", "summary.json"))
    for sw in summary["switches"]:
        check(sw["bfc"]["th_ns"] == th_ns,
              f"{d}: {sw['name']} reports bfc.th_ns {sw['bfc']['th_ns']}, configured {th_ns}")
    check(total_drops(summary) == 0, f"{d}: {total_drops(summary)} drops")
    flows = [f for f in flows_of(d) if f["dst"] == "r2"]
    check(len(flows) == 2, f"{d}: expected two flows to r2, got {len(flows)}")
    t0 = max(float(f["start_time"]) for f in flows) + WARMUP_S
    t1 = min(float(f["end_time"]) for f in flows)
    samples, ths = [], set()
    with open(os.path.join(d, "bfc", "queue_trace.csv"), newline="") as f:
        for row in csv.DictReader(f):
            if (row["switch"], row["port"], row["queue"]) == ("s2", "r2", "port") and \
                    t0 <= float(row["time_seconds"]) < t1:
                samples.append(int(row["bytes"]))
                ths.add(int(row["threshold_bytes"]))
    check(len(samples) > 0.8 * (t1 - t0) / 10e-6,
          f"{d}: {len(samples)} queue-trace samples in {(t1 - t0) * 1e3:.1f} ms")
    th_n = {n: int(th_ns * rate / 8e9 / n) for n in (1, 2)}
    check(ths <= set(th_n.values()) and th_n[2] in ths,
          f"{d}: Th in the trace {sorted(ths)}, expected from {th_n} with N = 2 present")
    lo, hi = start_ns(summary) + t0 * 1e9, start_ns(summary) + t1 * 1e9
    bits = sum((orig + WIRE_EXTRA) * 8 for ts, orig in
               pcap_records(os.path.join(d, "bfc", "capture", "rx_r2.pcap")) if lo <= ts < hi)
    util = bits / (rate * (t1 - t0))
    avg = sum(samples) / len(samples)
    print(f"th {th_ns / 1e3:.0f} us: Th(N=2) {th_n[2]} B, average queue {avg:.0f} B, "
          f"peak {max(samples)} B, r2 utilisation {util:.4f}")
    return {"avg": avg, "util": util, "th2": th_n[2], "frame_share": WIRE_FRAME * 8 / rate /
            (t1 - t0)}


def flows_point(d):
    conf = yaml.safe_load(open(os.path.join(d, "testbed.yaml")))
    up_rate = rate_bps(port(conf, "s1", "u")[1]["rate"])
    g1_rate = rate_bps(port(conf, "s1", "g1")[1]["rate"])
    g2_ip = bytes(int(x) for x in port(conf, "s1", "g2")[1]["peer_ip"].split("."))
    fct = {}
    for scheme in ("bfc", "bfc-single"):
        summary = load_json(os.path.join(d, scheme, "summary.json"))
        check(total_drops(summary) == 0, f"{d}/{scheme}: {total_drops(summary)} drops")
        with open(os.path.join(d, scheme, "fct", "fct.csv"), newline="") as f:
            g1 = [r for r in csv.DictReader(f) if r["src"] == "g1"]
        check(len(g1) == 2, f"{d}/{scheme}: {len(g1)} group-1 flows")
        check(all(r["finished"] == "1" for r in g1), f"{d}/{scheme}: a group-1 flow unfinished")
        fct[scheme] = sum(float(r["fct_seconds"]) for r in g1) / len(g1)
    d_bfc = os.path.join(d, "bfc")
    s1 = next(s for s in load_json(os.path.join(d_bfc, "summary.json"))["switches"]
              if s["name"] == "s1")
    check(s1["bfc"]["queue_collisions"] == 0,
          f"dynamic: {s1['bfc']['queue_collisions']} queue collisions at s1 with 6 flows, 16 queues")
    r1 = pcap_records(os.path.join(d_bfc, "capture", "rx_r1.pcap"))
    t0, t1 = r1[0][0], r1[-1][0]
    g1_bits = sum((o + WIRE_EXTRA) * 8 for _, o in r1)
    g2_bits = sum((o + WIRE_EXTRA) * 8 for ts, o, src in
                  pcap_records(os.path.join(d_bfc, "capture", "rx_r2.pcap"), True)
                  if t0 <= ts <= t1 and src == g2_ip)
    span = (t1 - t0) / 1e9
    link_share = (g1_bits + g2_bits) / (up_rate * span)
    g1_share = g1_bits / (g1_rate * span)
    print(f"flows N=4: group-1 mean FCT dynamic {fct['bfc'] * 1e3:.2f} ms, single "
          f"{fct['bfc-single'] * 1e3:.2f} ms; s1 -> s2 {link_share:.3f} busy while group 1 "
          f"gets {g1_share:.3f} of its sender's rate")
    check(link_share >= 0.95, f"s1 -> s2 only {link_share:.3f} busy while group 1 is in flight")
    check(g1_share < 0.9, f"group 1 got {g1_share:.3f} of its rate: not bottlenecked at s1 -> s2")
    check(fct["bfc"] < fct["bfc-single"],
          f"group-1 mean FCT dynamic {fct['bfc']:.4f} s not below single {fct['bfc-single']:.4f} s")


def test(binary, srcdir):
    with harness.TempDir("bfc-sweep") as tmp:
        out = os.path.join(tmp, "th")
        run_sweep(srcdir, binary, ["th", "--out", out, "--th",
                                   f"{TH_SMALL // 1000}us,{TH_LARGE // 1000}us", "--size", "2MB"])
        small = th_point(os.path.join(out, f"th-{TH_SMALL // 1000}us"), TH_SMALL)
        large = th_point(os.path.join(out, f"th-{TH_LARGE // 1000}us"), TH_LARGE)
        check(large["avg"] > small["avg"] + (large["th2"] - small["th2"]) / 4,
              f"average queue {large['avg']:.0f} B at th {TH_LARGE} ns is not above "
              f"{small['avg']:.0f} B at {TH_SMALL} ns by a quarter of the Th difference")
        check(large["util"] >= small["util"] - large["frame_share"],
              f"utilisation {large['util']:.4f} at the larger th below {small['util']:.4f}")
        with open(os.path.join(out, "bfc_sweep_th.png"), "rb") as f:
            check(f.read(8) == b"\x89PNG\r\n\x1a\n", "bfc_sweep_th.png is not a PNG")

        out = os.path.join(tmp, "flows")
        run_sweep(srcdir, binary, ["flows", "--out", out, "--flows", "4", "--seeds", "1",
                                   "--size", "500KB", "--schemes", "bfc-single,bfc"])
        flows_point(os.path.join(out, "n04-s1"))


if __name__ == "__main__":
    harness.main(test)
