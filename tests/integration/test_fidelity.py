#!/usr/bin/python3
"""The one-server fabric keeps time (docs/emulator.md, "Fabric time"; docs/testbed.md,
"Stalls" and "Fidelity gate"). The leaf-spine runs the web-search workload
at load 0.1 for 50 ms (seed 5: 34,678 host packets, 63,652 port
transmissions).

In exact fabric time (the experiment tools' default), on any machine and in
one run, the fidelity target holds, and more: every shaper, link and replay
lateness is 0 (the summary sums them), no port lost transmit time, no
capture record was left out, and the calendar was never missed.

In real time the machine's gaps reach the fabric, so the lateness target is
no promise real time can make: it is printed, not asserted. Asserted is what
is sluice's own, with the machine's floor measured on the worker's CPU
before and after each attempt:
- the worker took no page fault during the run (memory is prefaulted);
- the summary prints each port's lateness under the fidelity heading;
- no capture record was left out (the writer thread kept up);
- no port reports lost transmit time the worker's loop could not have lost:
  a port can only lose what loop gaps beyond the 200 us catch-up allow
  (this once failed: unshaped link ports counted busy time as lost);
- the worker's idle passes (iterations that moved nothing, most of the run)
  stall (> 50 us) no more often per second than the bare busy loop on the
  same CPU, within a margin for how much the floor itself moves from one
  second to the next (3x + 50/s): sluice adds no stalls of its own. The
  floor of a 2-vCPU virtual machine moves a lot (hypervisor steal, and the
  two vCPUs slow each other), so this must hold in one attempt of three.
  Passes that moved packets are not held to the floor: during the traffic's
  bursts a pass can be 50 us of work (docs/testbed.md, "Stalls the worker avoids").
The stall rate needs idle passes to count: each real-time run drains for
1 s (was 0.3 s) and the worker must have been idle at least 0.2 s of it.
It used to have to be idle half the run, which real time does not promise:
beside a CPU hog on every core the worker's busy passes (preempted in the
middle) took 0.37 s of a 0.44 s run, and 0.55 s of 1.14 s with the longer
drain."""

import json
import os
import re
import subprocess

import harness
from harness import check

QUIET_GAPS_PER_S = 40.0  # a floor this quiet is reported as such
QUIET_STEAL_FRACTION = 0.01
CATCH_UP_NS = 200_000  # the link and shaper catch-up window (switch/path/worker.cc)
ATTEMPTS = 3
DRAIN = "1.0"  # s after the workload: the idle passes whose stalls are counted
MIN_IDLE_S = 0.2


def floor(srcdir, builddir, cpu, seconds=2.0):
    binary = os.path.join(builddir, "tools", "floor", "sluice-floor")
    out = subprocess.run([binary, "--cpu", str(cpu), "--seconds", str(seconds), "--json"],
                         check=True, capture_output=True, text=True).stdout
    d = json.loads(out)
    d["gaps_per_s"] = d["gaps_over_50us"] / d["seconds"]
    d["quiet"] = (d["gaps_per_s"] < QUIET_GAPS_PER_S and
                  0 <= d["steal_ms"] < QUIET_STEAL_FRACTION * d["seconds"] * 1e3)
    return d


def run(srcdir, binary, tmp, workload, attempt, clock="real"):
    out = os.path.join(tmp, "%s%d" % (clock, attempt))
    cmd = ["/usr/bin/python3", os.path.join(srcdir, "tools", "experiment"),
           "--config", os.path.join(srcdir, "conf", "leafspine.yaml"), "--schemes", "droptail",
           "--workload", workload, "--drain", DRAIN, "--sluice", binary, "--out", out,
           "--allow-unfaithful", "--floor-seconds", "0", "--clock", clock]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(out, "droptail", "summary.json")) as f:
        return json.load(f)


FIDELITY_LINE = re.compile(r"^\s+\S+\s+(shaper lost|shaper\s+n=|link\s+n=|replay\s+n=)")


def check_fidelity_block(log_path):
    """The summary prints its per-port lateness lines under their heading
    (issue 30: the first port's "shaper lost" line once came before it)."""
    with open(log_path) as f:
        lines = f.read().splitlines()
    heading = [i for i, l in enumerate(lines) if l.startswith("fidelity (lateness")]
    check(len(heading) == 1, "%d fidelity headings in %s" % (len(heading), log_path))
    stray = [l for l in lines[:heading[0]] if FIDELITY_LINE.match(l)]
    check(not stray, "fidelity lines before their heading: %s" % stray[:3])
    check(any(FIDELITY_LINE.match(l) for l in lines[heading[0] + 1:]),
          "no per-port line under the fidelity heading in %s" % log_path)


def check_own_stalls(summary, fl):
    (w,) = summary["workers"]
    check(w["minor_faults"] + w["major_faults"] == 0,
          "the worker took %d page faults" % (w["minor_faults"] + w["major_faults"]))
    excess = max(0, w["loop_gap_max_ns"] - CATCH_UP_NS) * w["loop_gaps_over_200us"]
    for name, p in harness.summary_ports(summary):
        check(p.get("capture_dropped_records", 0) == 0,
              "%s: %d capture records left out" % (name, p.get("capture_dropped_records", 0)))
        check(p["shaper_lost_ns"] <= excess,
              "%s lost %.3f ms but the loop's gaps beyond the catch-up allow %.3f ms"
              % (name, p["shaper_lost_ns"] / 1e6, excess / 1e6))
    check(w["idle_loop_seconds"] >= MIN_IDLE_S,
          "the worker was idle only %.3f s of %.3f s: too little to count its idle passes' "
          "stalls" % (w["idle_loop_seconds"], summary["duration_seconds"]))
    return w["idle_loop_gaps_over_50us"] / w["idle_loop_seconds"]


def check_exact_time(srcdir, binary, tmp, workload):
    """Exact time meets the target on any machine, in one run: no lateness
    at all."""
    summary = run(srcdir, binary, tmp, workload, 0, clock="exact")
    clock = summary["clock"]
    check(clock["mode"] == "exact", "no exact clock in %s" % clock)
    misses = harness.fidelity_misses(summary)
    print("exact time: %d lateness samples summing to %d ns; %d transmissions in %.2f s wall"
          % (clock["lateness_samples"], clock["lateness_sum_ns"], clock["transmissions"],
             clock["wall_seconds"]))
    check(not misses, "exact time missed the target: %s" % "; ".join(misses[:6]))
    check(clock["lateness_samples"] > 60_000 and clock["lateness_sum_ns"] == 0,
          "exact time: %d ns late over %d samples" % (clock["lateness_sum_ns"],
                                                      clock["lateness_samples"]))
    check(clock["calendar_misses"] == 0 and clock["stopped_stuck"] == 0,
          "exact time: calendar misses %d, stopped early %d" % (clock["calendar_misses"],
                                                                clock["stopped_stuck"]))
    for name, p in harness.summary_ports(summary):
        check(p["shaper_lost_ns"] == 0, "exact time: %s lost %d ns" % (name, p["shaper_lost_ns"]))
        check(p.get("capture_dropped_records", 0) == 0,
              "exact time: %s left %d capture records out"
              % (name, p.get("capture_dropped_records", 0)))


def test(binary, srcdir):
    builddir = os.path.dirname(os.path.dirname(binary))
    with harness.TempDir("fidelity") as tmp:
        workload = os.path.join(tmp, "workload")
        subprocess.run(["/usr/bin/python3", os.path.join(srcdir, "tools", "workload"),
                        "--cdf", os.path.join(srcdir, "conf", "workloads", "websearch.cdf"),
                        "--load", "0.1", "--link-rate", "10Gbps", "--hosts-from-config",
                        os.path.join(srcdir, "conf", "leafspine.yaml"), "--duration", "0.05",
                        "--seed", "5", "--out", workload], check=True, stdout=subprocess.DEVNULL)
        check_exact_time(srcdir, binary, tmp, workload)
        stall_rates = []
        for attempt in range(ATTEMPTS):
            fl = floor(srcdir, builddir, cpu=1)
            summary = run(srcdir, binary, tmp, workload, attempt)
            after = floor(srcdir, builddir, cpu=1)
            fl["gaps_per_s"] = max(fl["gaps_per_s"], after["gaps_per_s"])
            fl["quiet"] = fl["quiet"] and after["quiet"]
            rate = check_own_stalls(summary, fl)
            check_fidelity_block(os.path.join(tmp, "real%d" % attempt, "droptail", "sluice.log"))
            stall_rates.append((rate, fl["gaps_per_s"]))
            misses = harness.fidelity_misses(summary)
            w = summary["workers"][0]
            busy_gaps = w["loop_gaps_over_50us"] - w["idle_loop_gaps_over_50us"]
            # The real-time target is the machine's as much as sluice's:
            # printed, for the record, not asserted.
            print("real time, attempt %d: floor %.1f gaps/s > 50 us, steal %.1f ms, max %.0f us "
                  "(%s); worker idle passes %.1f gaps/s > 50 us, busy passes %d gaps (%d > "
                  "25.6 us) in %.3f s, max %.0f us, steal %.1f ms; lateness target %s"
                  % (attempt + 1, fl["gaps_per_s"], fl["steal_ms"], fl["max_gap_ns"] / 1e3,
                     "quiet" if fl["quiet"] else "noisy", rate, busy_gaps,
                     w["busy_loop_gaps_over_25us"], w["busy_seconds"],
                     w["loop_gap_max_ns"] / 1e3, w["steal_ms"],
                     "met" if not misses else "missed: " + "; ".join(misses[:4])))
            if any(r <= 3 * f + 50 for r, f in stall_rates):
                return
        check(False, "the worker's idle passes stalled > 50 us more often than the bare loop on "
              "its cpu in every attempt (worker, floor gaps/s): %s" % stall_rates)


if __name__ == "__main__":
    harness.main(test)
