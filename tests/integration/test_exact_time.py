#!/usr/bin/python3
"""Exact fabric time repeats byte for byte (docs/emulator.md, "Fabric
time"). The leaf-spine replays 20 ms of web-search traffic at load 0.3 with
a 4-to-1 incast, under five fabrics that each combine mechanisms and
random choices (tools/sluicepy/exact_fabrics.py, shared with
tools/bench fingerprint):

- bfc+tcd: BFC between the switches with BFC NICs at the hosts, TCD marking,
  one lossy uplink (1 % loss);
- floodgate: Floodgate with dstPause toward the hosts and loss recovery
  (FG_SYNC), one lossy uplink;
- dibs: DIBS detours with RED ECN marking (RED draws a coin per packet);
- pfc: PFC (XOFF 50 KB) toward the spines and the hosts' NICs, with ECN
  step marking; lossless, its only random choice the ECMP salt. Its XOFFs
  are due the instant an ingress's bytes cross the threshold (this once
  never happened in exact time, and PFC sent nothing);
- ecn: ECN step marking alone: no module takes a step at any port, so a
  packet that finds a switch port idle skips the queue's ring
  (docs/traffic-manager.md, "Straight through an idle port"). Its line in
  small.txt was recorded by a build from before that path (bf4f57c).

Each fabric runs three times: alone on one worker lcore; on two worker
lcores (the switches partitioned over them, docs/emulator.md, "Several
lcores") beside two CPU hogs (one per core) with the whole sluice process
stopped by SIGSTOP for 150 ms while it runs; and alone with another seed.
Asserted for each:

- the first two runs give identical captures, identical FCT tables
  (tools/fct) and identical summaries once the fields that report the
  machine (wall time, the workers, the mbuf pools, the instants each
  lcore visited, the windows) are left out; the second ran on two lcores, in windows;
- the run with another seed gives different captures (the seed reaches
  the fabric's random choices: ECMP salt, link loss, RED, detours);
- every lateness sample is 0, the calendar was never missed (checked after
  every element: SLUICE_EXACT_AUDIT=1) and the run covered its duration;
- the seed-1 run's digests (tools/bench fingerprint: its captures, and its summary
  without the fields that report the machine) are those recorded in
  tests/fingerprints/small.txt: exact time repeats byte for byte, so any
  difference is a change of what the fabric does. Such a change is either a
  bug to fix, or a modelling change that is documented and updates
  small.txt (tools/bench fingerprint --set small --out tests/fingerprints/small.txt)
  in the same commit.
"""

import hashlib
import json
import os
import signal
import subprocess
import sys
import time

import harness
from harness import check

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
from sluicepy import cli, exact_fabrics, fingerprint  # noqa: E402
from sluicepy.exact_fabrics import RUN_SECONDS  # noqa: E402

# Fields of the summary that report the machine's time, not the fabric's.
# The instants visited depend on the partition (an instant two lcores both
# visit counts twice), and the windows and their waits exist only on several
# lcores: none is what the fabric does.
WALL_FIELDS = ("wall_seconds", "instants", "windows", "window_wait_seconds")


def run(binary, tmp, workload, conf, label, seed=1, disturb=False, workers=1):
    d = exact_fabrics.prepare_run(tmp, workload, conf, label, seed=seed)
    cmd = exact_fabrics.command(binary, "sluice-it-exact-%d" % os.getpid(), workers)
    env = exact_fabrics.run_env()
    hogs = []
    if disturb:
        # One busy process per core, beside the worker and the main lcore.
        hogs = [subprocess.Popen(["/usr/bin/python3", "-c", "while True: pass"])
                for _ in range(os.cpu_count() or 2)]
    proc = subprocess.Popen(cmd, cwd=d, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, env=env)
    try:
        if disturb:
            time.sleep(0.05)
            started = False
            for line in proc.stdout:
                if "worker lcore(s)" in line:
                    started = True
                    break
            check(started and proc.poll() is None,
                  "%s: sluice ended before it could be stopped" % label)
            os.kill(proc.pid, signal.SIGSTOP)
            time.sleep(0.15)
            os.kill(proc.pid, signal.SIGCONT)
        out, _ = proc.communicate(timeout=300)
    finally:
        for h in hogs:
            h.kill()
            h.wait()
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGCONT)
            proc.kill()
            proc.wait()
    check(proc.returncode == 0, "%s: sluice exited %s:\n%s" % (label, proc.returncode, out))
    with open(os.path.join(d, "summary.json")) as f:
        summary = json.load(f)
    # The process's own peak memory: at least what EAL was given (-m).
    check(summary.get("process", {}).get("peak_rss_bytes", -1) > 16 * 1048576,
          "%s: process.peak_rss_bytes missing or below 16 MiB: %s" % (label,
                                                                     summary.get("process")))
    return d, summary, out


def captures_digest(d):
    h = hashlib.sha256()
    names = sorted(os.listdir(os.path.join(d, "capture")))
    for name in names:
        with open(os.path.join(d, "capture", name), "rb") as f:
            h.update(name.encode() + b"\0" + f.read())
    return h.hexdigest(), len(names)


def fabric_figures(summary):
    """The summary without what reports the machine's time."""
    s = json.loads(json.dumps(summary))
    s.pop("workers", None)
    # The pools' high-water mark moves with the lcores' mbuf caches.
    s.pop("mbuf_pools", None)
    s.pop("process", None)  # the process's own memory
    for key in WALL_FIELDS:
        s.get("clock", {}).pop(key, None)
    return s


def fct_table(srcdir, d):
    """tools/fct's per-flow table, as tools/experiment runs it."""
    out = os.path.join(d, "fct")
    rx = sorted(os.path.join(d, "capture", n) for n in os.listdir(os.path.join(d, "capture")))
    subprocess.run(["/usr/bin/python3", os.path.join(srcdir, "tools", "fct"), "--flows",
                    os.path.join(d, "workload", "flows.csv"), "--rx"] + rx +
                   ["--link-rate", "10Gbps", "--rx-stamp", "last-bit", "--start-offset-file",
                    os.path.join(d, "summary.json"), "--out", out],
                   check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(out, "fct.csv"), "rb") as f:
        return f.read()


def check_exact(label, summary, out):
    clock = summary["clock"]
    check(clock["mode"] == "exact", "%s: clock %s" % (label, clock))
    check(clock["calendar_misses"] == 0 and clock["stopped_stuck"] == 0,
          "%s: calendar misses %d, stopped early %d:\n%s"
          % (label, clock["calendar_misses"], clock["stopped_stuck"], out))
    check(abs(clock["fabric_seconds"] - RUN_SECONDS) < 1e-9,
          "%s: covered %s s of fabric time, not %s" % (label, clock["fabric_seconds"], RUN_SECONDS))
    check(clock["lateness_samples"] > 10000 and clock["lateness_sum_ns"] == 0,
          "%s: %d ns of lateness summed over %d samples in exact time"
          % (label, clock["lateness_sum_ns"], clock["lateness_samples"]))
    check(" samples: 0 ns" in out, "%s: the summary does not show zero lateness:\n%s" % (label, out))
    check(clock["transmissions"] > 10000, "%s: only %d transmissions" % (label,
                                                                          clock["transmissions"]))


FINGERPRINTS = os.path.join("tests", "fingerprints", "small.txt")


def recorded_fingerprints(srcdir):
    try:
        return fingerprint.read_file(os.path.join(srcdir, FINGERPRINTS))
    except cli.ToolError as e:
        raise harness.TestFailure(str(e))


def check_fingerprint(recorded, kind, d):
    """The seed-1 run d has the digests recorded in FINGERPRINTS."""
    name = "exact-time/" + kind
    want = recorded.get(name)
    check(want is not None, "%s has no line for %s" % (FINGERPRINTS, name))
    got = fingerprint.run_digests(d)
    changed = [k for k in fingerprint.FIELDS if want.get(k) != got[k]]
    check(not changed,
          "%s: the seed-1 run's digests (%s) differ from %s: exact-time behaviour changed.\n"
          "A change of what the fabric does must either be fixed, or be a documented modelling "
          "change that updates %s (tools/bench fingerprint --set small --out %s) in the same commit.\n"
          "tools/bench fingerprint --set small --compare %s lists every differing run.\n"
          "recorded: %s\nnow:      %s"
          % (kind, ", ".join(changed), FINGERPRINTS, FINGERPRINTS, FINGERPRINTS, FINGERPRINTS,
             fingerprint.format_line(name, want), fingerprint.format_line(name, got)))


def test(binary, srcdir):
    recorded = recorded_fingerprints(srcdir)
    with harness.TempDir("exact-time") as tmp:
        workload = os.path.join(tmp, "workload")
        exact_fabrics.make_workload(srcdir, workload)
        for kind in exact_fabrics.KINDS:
            conf = exact_fabrics.fabric(srcdir, kind)
            d1, s1, o1 = run(binary, tmp, workload, conf, kind + "-1")
            d2, s2, o2 = run(binary, tmp, workload, conf, kind + "-disturbed", disturb=True,
                             workers=2)
            # Two worker lcores that ran in windows (clock.windows is 0 on one).
            check(len(s2.get("workers", [])) == 2 and s2["clock"].get("windows", 0) > 0,
                  "%s: the two-lcore run did not run in windows on two lcores: %s, %s"
                  % (kind, s2.get("workers"), s2["clock"]))
            d3, s3, o3 = run(binary, tmp, workload, conf, kind + "-seed2", seed=2)
            for label, s, o in ((kind + "-1", s1, o1), (kind + "-disturbed", s2, o2),
                                (kind + "-seed2", s3, o3)):
                check_exact(label, s, o)
            check_fingerprint(recorded, kind, d1)
            c1, n1 = captures_digest(d1)
            c2, _ = captures_digest(d2)
            c3, _ = captures_digest(d3)
            print("%s: %d captures %s..., %d transmissions in %.2f s / %.2f s (two lcores, disturbed) of "
                  "wall time; seed 2: %s..." % (kind, n1, c1[:12], s1["clock"]["transmissions"],
                                                s1["clock"]["wall_seconds"],
                                                s2["clock"]["wall_seconds"], c3[:12]))
            check(c1 == c2, "%s: captures differ between the run alone and the disturbed "
                  "two-lcore run" % kind)
            f1, f2 = fabric_figures(s1), fabric_figures(s2)
            if f1 != f2:
                diff = [k for k in f1 if f1.get(k) != f2.get(k)]
                check(False, "%s: summaries differ in %s" % (kind, diff))
            check(c1 != c3, "%s: seed 2 gave the same captures as seed 1" % kind)
            check(fct_table(srcdir, d1) == fct_table(srcdir, d2),
                  "%s: FCT tables differ between the two runs" % kind)
            drops = harness.all_drops(s1)
            print("%s: drops %s" % (kind, drops))
            if kind == "pfc":
                sent = sum(p.get("pfc_frames_sent", 0) for _, p in harness.summary_ports(s1))
                check(sent > 0 and not drops, "pfc: %d PFC frames sent, drops %s"
                      % (sent, drops))


if __name__ == "__main__":
    harness.main(test)
