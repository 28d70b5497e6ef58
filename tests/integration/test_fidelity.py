#!/usr/bin/python3
"""The one-server fabric keeps time (docs/testbed.md, "Stalls", "Virtual
time" and "Fidelity gate"). The leaf-spine runs the web-search workload at
load 0.1 for 50 ms (seed 5: 34,678 host packets, 63,652 port transmissions).

In virtual time (the experiment tools' default), on any floor and in one
run: every shaper, link and replay lateness p99 within the 25.6 us bucket
and at most 1 ms lost on any port (tests/integration/test_virtual_time.py
shows a stall being frozen out).

In real time, with the machine's floor measured on the worker's CPU before
each attempt:

Always (sluice's own stalls, whatever the machine does):
- the worker took no page fault during the run (memory is prefaulted);
- no capture record was left out (the writer thread kept up);
- no port reports lost transmit time the worker's loop could not have lost:
  a port can only lose what loop gaps beyond the 200 us catch-up allow
  (this once failed: unshaped link ports counted busy time as lost);
- the worker's idle passes (iterations that moved nothing, most of the run)
  stall (> 50 us) no more often per second than the bare busy loop on the
  same CPU (measured just before and just after), within a margin for how
  much the floor itself moves from one second to the next (3x + 50/s):
  sluice adds no stalls of its own. The floor of this 2-vCPU virtual
  machine moves a lot (hypervisor steal, and the two vCPUs slow each other),
  so this must hold in one attempt of three. Passes that moved packets are
  not held to the floor: during the traffic's bursts a pass can be 50 us of
  work (docs/testbed.md, "Stalls"); their long gaps are printed, and what
  they cost the fabric is the lateness the target judges.

When the floor is quiet (gaps > 50 us under 40/s, hypervisor steal under 1%
of the floor measurement), the machine is fast enough for this load in real
time (no pass that moved packets took longer than the target's 25.6 us
bucket, busy_loop_gaps_over_25us = 0, and so none over 50 us either) and
kept still during the run (no loop gap beyond the 200 us
catch-up window): the issue's target, every shaper, link and replay lateness p99
within the 25.6 us bucket and at most 1 ms lost on any port. An attempt on
a quiet floor that meets the target passes whatever its passes took; the
speed condition only decides whether a miss counts. A machine gap
during the 55 ms of traffic can cost one attempt, so up to three attempts
are made; the target must be met by one attempt that was judged. When no
attempt was judged, the target is reported as not judged, with the reason
(the assertions above still hold, and virtual time met the target).

Why the speed condition: a pass over the fabric's 20 ports during a burst
is work, up to 32 frames per port; on a CPU where that work takes over
50 us the frames due during it are late by as much, whatever sluice
stalls. On the machine of the Floodgate session (AMD EPYC, 2 vCPUs) the
target was missed in every attempt, with a quiet floor, by the session's
starting commit as well as by its end (8-34 busy passes over 50 us, none
over 200 us; replay lateness p99 51-204 us): that machine cannot run this
load in real time within the target, which docs/testbed.md records; the
experiment tools run in virtual time by default for this reason.

The condition was "at most 5 busy passes over 50 us" until the machine of
the 2026-11-26 session (AMD EPYC, 2 vCPUs) missed the target in 10 of 12
attempts that condition judged, with at most 1 busy pass over 50 us but
2-21 over 25.6 us where counted (the two that met it had 2 and 5): a pass
over the target's bucket makes the frames due during it late beyond the
target, so a machine whose passes take that long is too slow for the
target, however rarely a pass exceeds 50 us."""

import json
import os
import subprocess

import harness
from harness import check

QUIET_GAPS_PER_S = 40.0
QUIET_STEAL_FRACTION = 0.01
CATCH_UP_NS = 200_000  # the link and shaper catch-up window (switch/worker.cc)
ATTEMPTS = 3


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
           "--workload", workload, "--drain", "0.3", "--sluice", binary, "--out", out,
           "--allow-unfaithful", "--floor-seconds", "0", "--clock", clock]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(out, "droptail", "summary.json")) as f:
        return json.load(f)


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
    check(w["idle_loop_seconds"] > 0.5 * summary["duration_seconds"],
          "the worker was idle only %.3f s of %.3f s" % (w["idle_loop_seconds"],
                                                         summary["duration_seconds"]))
    return w["idle_loop_gaps_over_50us"] / w["idle_loop_seconds"]


def check_virtual_time(srcdir, binary, tmp, workload):
    """Virtual time meets the target on any floor, in one run."""
    summary = run(srcdir, binary, tmp, workload, 0, clock="virtual")
    check(summary["clock"]["mode"] == "virtual", "no virtual clock in %s" % summary["clock"])
    misses = harness.fidelity_misses(summary)
    print("virtual time: %.1f ms frozen; target %s" % (
        summary["clock"]["frozen_ns"] / 1e6, "met" if not misses else "missed"))
    check(not misses, "virtual time missed the target: %s" % "; ".join(misses[:6]))


def test(binary, srcdir):
    builddir = os.path.dirname(os.path.dirname(binary))
    with harness.TempDir("fidelity") as tmp:
        workload = os.path.join(tmp, "workload")
        subprocess.run(["/usr/bin/python3", os.path.join(srcdir, "tools", "workload"),
                        "--cdf", os.path.join(srcdir, "conf", "workloads", "websearch.cdf"),
                        "--load", "0.1", "--link-rate", "10Gbps", "--hosts-from-config",
                        os.path.join(srcdir, "conf", "leafspine.yaml"), "--duration", "0.05",
                        "--seed", "5", "--out", workload], check=True, stdout=subprocess.DEVNULL)
        check_virtual_time(srcdir, binary, tmp, workload)
        judged = False
        slow_attempts = 0
        stall_rates = []
        for attempt in range(ATTEMPTS):
            fl = floor(srcdir, builddir, cpu=1)
            summary = run(srcdir, binary, tmp, workload, attempt)
            after = floor(srcdir, builddir, cpu=1)
            fl["gaps_per_s"] = max(fl["gaps_per_s"], after["gaps_per_s"])
            fl["quiet"] = fl["quiet"] and after["quiet"]
            rate = check_own_stalls(summary, fl)
            stall_rates.append((rate, fl["gaps_per_s"]))
            misses = harness.fidelity_misses(summary)
            w = summary["workers"][0]
            busy_gaps = w["loop_gaps_over_50us"] - w["idle_loop_gaps_over_50us"]
            print("attempt %d: floor %.1f gaps/s > 50 us, steal %.1f ms, max %.0f us (%s); "
                  "worker idle passes %.1f gaps/s > 50 us, busy passes %d gaps (%d > 25.6 us) "
                  "in %.3f s, max %.0f us, steal %.1f ms; target %s"
                  % (attempt + 1, fl["gaps_per_s"], fl["steal_ms"], fl["max_gap_ns"] / 1e3,
                     "quiet" if fl["quiet"] else "noisy", rate, busy_gaps,
                     w["busy_loop_gaps_over_25us"], w["busy_seconds"],
                     w["loop_gap_max_ns"] / 1e3, w["steal_ms"],
                     "met" if not misses else "missed: " + "; ".join(misses[:4])))
            own_ok = any(r <= 3 * f + 50 for r, f in stall_rates)
            # Fast enough, and the machine kept still during the traffic (a
            # gap beyond the catch-up window is the machine's: sluice's own
            # stalls are judged above, on the idle passes, against the floor).
            fast = w["busy_loop_gaps_over_25us"] == 0 and w["loop_gaps_over_200us"] == 0
            # A target met on a quiet floor counts whatever the passes took;
            # a miss counts against sluice only when the machine was fast.
            if fl["quiet"] and not misses and own_ok:
                print("fidelity: target met on a quiet floor")
                return
            if fl["quiet"] and not fast:
                slow_attempts += 1
            if fl["quiet"] and fast:
                judged = True  # a miss here counts against sluice
        check(own_ok, "the worker's idle passes stalled > 50 us more often than the bare loop on "
              "its cpu in every attempt (worker, floor gaps/s): %s" % stall_rates)
        check(not judged, "the target was missed on every attempt that was judged (quiet "
              "floor, passes within the machine's speed)")
        if slow_attempts:
            print("fidelity: the absolute target was not judged: on %d quiet attempt(s) a "
                  "pass that moved packets took over 25.6 us, or the loop stopped beyond the "
                  "catch-up window (this machine cannot run this load in real time within the "
                  "target; sluice's own stalls were judged, and virtual time met the target)"
                  % slow_attempts)
        else:
            print("fidelity: the floor was never quiet; the absolute target was not judged "
                  "(sluice's own stalls were)")


if __name__ == "__main__":
    harness.main(test)
