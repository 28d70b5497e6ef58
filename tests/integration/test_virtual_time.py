#!/usr/bin/python3
"""Virtual time hides a machine stall from the fabric (docs/testbed.md,
"Virtual time"). The leaf-spine replays 300 ms of web-search traffic at
load 0.1; 100 ms into the traffic the test stops the whole sluice process
with SIGSTOP for 200 ms, the way a hypervisor or the scheduler can, then
lets it go on. Asserted:

- with clock.mode real, the stall is visible: ports lose transmit time or
  deliver late beyond the fidelity limits, and the receivers' captures
  have a hole of about the stall (so the test can tell the two modes apart);
- with clock.mode virtual, the same stall is frozen out: the summary
  reports at least the stall as frozen time, every shaper, link and replay
  lateness p99 is within the 25.6 us bucket, no port lost more than 1 ms,
  and the captures have no hole longer than the workload's own gaps."""

import glob
import json
import os
import signal
import subprocess
import sys
import time

import yaml

import harness
from harness import check

STALL_S = 0.2
INTO_TRAFFIC_S = 0.1
REPLAY_LEAD_S = 0.05  # kReplayLeadNs in switch/main.cc


def make_workload(srcdir, out):
    subprocess.run(["/usr/bin/python3", os.path.join(srcdir, "tools", "workload"),
                    "--cdf", os.path.join(srcdir, "conf", "workloads", "websearch.cdf"),
                    "--load", "0.1", "--link-rate", "10Gbps", "--hosts-from-config",
                    os.path.join(srcdir, "conf", "leafspine.yaml"), "--duration", "0.3",
                    "--seed", "5", "--out", out], check=True, stdout=subprocess.DEVNULL)


def run_with_stall(srcdir, binary, tmp, workload, mode):
    d = os.path.join(tmp, mode)
    os.makedirs(os.path.join(d, "capture"))
    os.symlink(workload, os.path.join(d, "workload"))
    with open(os.path.join(srcdir, "conf", "leafspine.yaml")) as f:
        conf = yaml.safe_load(f)
    conf["clock"] = {"mode": mode}
    conf["metrics"] = {"enabled": False}
    with open(os.path.join(d, "sluice.yaml"), "w") as f:
        yaml.safe_dump(conf, f)
    cmd = [binary, "--no-huge", "-m", "2048", "--no-pci", "-l", "0,1",
           "--file-prefix", "sluice-it-vt-%s-%d" % (mode, os.getpid()), "--log-level",
           "lib.eal:warning", "--", "--config", "sluice.yaml", "--duration", "0.6",
           "--stats-interval", "0", "--summary-json", "summary.json"]
    proc = subprocess.Popen(cmd, cwd=d, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    log = []
    try:
        # The workers launch right after this line; the replay starts its lead later.
        for line in proc.stdout:
            log.append(line)
            if "worker lcore(s)" in line:
                break
        time.sleep(REPLAY_LEAD_S + INTO_TRAFFIC_S)
        os.kill(proc.pid, signal.SIGSTOP)
        time.sleep(STALL_S)
        os.kill(proc.pid, signal.SIGCONT)
        out, _ = proc.communicate(timeout=60)
        log.append(out)
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGCONT)
            proc.kill()
            proc.wait()
    check(proc.returncode == 0, "%s: sluice exited %s:\n%s" % (mode, proc.returncode, "".join(log)))
    with open(os.path.join(d, "summary.json")) as f:
        return json.load(f), d


def us(ns):
    """A lateness p99 (a bucket bound; UINT64_MAX means beyond the histogram)."""
    return "beyond the histogram" if ns >= 2**63 else "%.1f us" % (ns / 1e3)


def worst(summary):
    """The worst lost time and lateness p99 (printed beside the verdicts)."""
    lost, late = 0, 0
    for _, p in harness.summary_ports(summary):
        lost = max(lost, p["shaper_lost_ns"])
        for kind in harness.LATENESS_KINDS:
            if p.get(kind + "_lateness_samples", 0):
                late = max(late, p[kind + "_lateness_p99_ns"])
    return lost, late


def largest_capture_hole_ns(d):
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))), "tools"))
    from sluicepy import pcapio
    stamps = sorted(ts for path in glob.glob(os.path.join(d, "capture", "*.pcap"))
                    for ts, _, _ in pcapio.read_pcap(path, max_bytes=0))
    check(len(stamps) > 1000, "%s: only %d packets captured" % (d, len(stamps)))
    return max(b - a for a, b in zip(stamps, stamps[1:]))


def test(binary, srcdir):
    with harness.TempDir("virtual-time") as tmp:
        workload = os.path.join(tmp, "workload")
        make_workload(srcdir, workload)
        real, real_dir = run_with_stall(srcdir, binary, tmp, workload, "real")
        virt, virt_dir = run_with_stall(srcdir, binary, tmp, workload, "virtual")
        real_lost, real_late = worst(real)
        virt_lost, virt_late = worst(virt)
        real_hole = largest_capture_hole_ns(real_dir)
        virt_hole = largest_capture_hole_ns(virt_dir)
        frozen = virt["clock"]["frozen_ns"]
        print("real: worst lost %.3f ms, worst lateness p99 %s, capture hole %.1f ms"
              % (real_lost / 1e6, us(real_late), real_hole / 1e6))
        print("virtual: frozen %.1f ms, worst lost %.3f ms, worst lateness p99 %s, "
              "capture hole %.1f ms" % (frozen / 1e6, virt_lost / 1e6, us(virt_late),
                                        virt_hole / 1e6))
        check(real["clock"]["mode"] == "real" and real["clock"]["frozen_ns"] == 0,
              "real time reported frozen time: %s" % real["clock"])
        check(harness.fidelity_misses(real),
              "real time: a %.0f ms stall left no trace (lost %.3f ms, lateness p99 %s)"
              % (STALL_S * 1e3, real_lost / 1e6, us(real_late)))
        check(real_hole > 0.75 * STALL_S * 1e9,
              "real time: the captures have no hole of the stall (largest %.1f ms)"
              % (real_hole / 1e6))
        check(virt["clock"]["mode"] == "virtual", "virtual run reported %s" % virt["clock"])
        check(frozen >= 0.95 * STALL_S * 1e9,
              "virtual time froze %.1f ms across a %.0f ms stall" % (frozen / 1e6, STALL_S * 1e3))
        misses = harness.fidelity_misses(virt)
        check(not misses, "virtual time missed the target: %s" % "; ".join(misses[:6]))
        check(virt_hole < 0.25 * STALL_S * 1e9,
              "virtual time: the captures have a %.1f ms hole" % (virt_hole / 1e6))


if __name__ == "__main__":
    harness.main(test)
