#!/usr/bin/python3
"""System test: Flowtune with real Linux TCP hosts (tools/reproduce flowtune-tcp,
issue 13 items 5a and 5b with TCP). Five cubic senders in namespaces join
and leave one at a time (1 s steps) toward a sixth host through one sluice
edge switch at 200 Mb/s, with and without Flowtune, then the five together
while the allocator is killed. Linux hosts keep the machine's time, so this
runs in real time, and the fidelity gate's real-time limits (lateness, lost
transmit time) are no promise real time can make: the run's gate figures
are printed, not asserted. Nor are absolute rates: on a busy machine (a CPU
hog on every core) the hosts' one cpu and sluice's stalls held Linux TCP to
35-60 % of the link. What is asserted holds whatever the machine gives the
flows together:
  - with Flowtune the edge ran its flowlets past the allocator (starts,
    rate updates applied, ten times more packets paced than unpaced);
  - with Flowtune the flows share what they achieve together: in at least
    6 of the 7 steps where flows share the link, every flow moved and its
    goodput over the step's second half is within 10 % of the active flows'
    mean (their sum over N);
  - with Flowtune the receiver's port drops less than half what the
    baseline's drop-tail port drops in the same run (the edge paces the sum
    of the flows below its rate);
  - after the allocator died and the lease ran out, every flow still moves
    and together they carry at least 80 % of what they carried paced before
    the kill; the edge forwarded them unpaced (at least as many packets
    unpaced as data frames arrived after the lease); no packet was left
    held in a pacer at the stop;
  - the updates run (1 s per CDF) counts flowlets and rate updates for the
    TCP flows the hosts opened.
The lease is 50 ms, not the tool's 10 ms: on the loaded machine the
allocator (on the hosts' cpu) was late by up to 39 ms, a 10 ms lease ran
out between its updates, and up to a third of the packets went unpaced
(the edge's fail-safe, working as designed, but then not a run of paced
flows). The baseline's steps are judged by the share rule too and printed,
not asserted (TCP may share evenly by chance).

Checked on 2026-11-28, beside a CPU hog on each of the 2 cores (and other
work on the machine), with each mechanism off:
  - Flowtune off (the baseline run: the same scenario without the
    allocator): the share rule held in 0 to 5 of the 7 steps in nine runs
    (worst flow 18-53 % from the mean), where the flowtune runs held it in
    7 of 7 (worst flow within 7 % of the mean);
  - the lease off (the edge's lease 60 s, so that it keeps the dead
    allocator's last rates): the test fails with "after the allocator
    died, the edge forwarded 116 packets unpaced, fewer than the 10001
    data frames that arrived after the lease".

  /usr/bin/python3 test_flowtune_tcp.py SLUICE_BINARY SOURCE_DIR

Runs as root; the experiment makes and removes the namespaces and
hugepages. Bounded: each try has a timeout.
"""

import json
import os
import subprocess
import sys
import tempfile

STEP = 1.0
LEASE_S = 0.050
SHARE_TOLERANCE = 0.10
FRAME_PAYLOAD = 1448  # TCP payload of a full frame (timestamps on)


class TestFailure(AssertionError):
    pass


def check(cond, message):
    if not cond:
        raise TestFailure(message)


def one_run(sluice, src, tmp):
    tool = os.path.join(src, "tools", "reproduce")
    allocator = os.path.join(os.path.dirname(os.path.dirname(sluice)), "allocator",
                             "sluice-allocator")
    out = os.path.join(tmp, "run")
    r = subprocess.run(["flock", "/tmp/sluice-heavy.lock", sys.executable, tool, "flowtune-tcp",
                        "--out", out,
                        "--runs", "baseline,flowtune,failure", "--step", str(STEP),
                        "--lease", f"{LEASE_S * 1e3:g}ms", "--floor-seconds", "0",
                        "--allow-unfaithful", "--sluice", sluice, "--allocator", allocator],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=300)
    check(r.returncode == 0,
          f"tools/reproduce flowtune-tcp exited {r.returncode}:\n{r.stdout[-4000:]}")
    with open(os.path.join(out, "results.json")) as f:
        res = json.load(f)
    print(r.stdout[-3000:])
    gate = {k: v["violations"] for k, v in res["gate"]["runs"].items()}
    print("fidelity gate (real time, printed, not asserted): %s"
          % ("every run within the limits" if res["gate"]["valid"] else gate))
    return res


def receiver_drops(run):
    return sum(n for k, n in run["drops"].items() if k.startswith("h5/"))


def shares(steps):
    """Per step where flows share the link: (every flow moved and is within
    SHARE_TOLERANCE of the active flows' mean, the worst flow's distance
    from that mean as a fraction of it)."""
    out = []
    for s in steps:
        means = s["mean_mbps_second_half"]
        if len(means) < 2:
            continue
        mean = sum(means) / len(means)
        worst = max(abs(m - mean) for m in means) / mean if mean > 0 else float("inf")
        out.append((min(means) > 0 and worst <= SHARE_TOLERANCE, worst))
    return out


def check_failure(fail):
    """The failure run: liveness after the lease against what the same
    flows carried paced, and the edge's unpaced forwarding."""
    f = fail["failure"]
    paced, after = sum(f["paced_mbps"]), sum(f["after_lease_mbps"])
    check(all(x > 0 for x in f["after_lease_mbps"]) and after >= 0.8 * paced,
          f"after the allocator died: {f} (together {after:.1f} Mb/s, paced {paced:.1f})")
    # Data frames that arrived over the window analyse_failure averages
    # (2 steps + the lease + half a step to 4 steps), all sent after the
    # lease ran out: each crossed the edge unpaced.
    window = 4 * STEP - (2 * STEP + LEASE_S + STEP / 2)
    frames = int(after * 1e6 / 8 * window / FRAME_PAYLOAD)
    e = fail["flowtune"]
    print(f"failure: {paced:.1f} Mb/s together paced, {after:.1f} after the lease; "
          f"{e['unpaced']} packets unpaced, {frames} data frames after the lease")
    check(e["unpaced"] >= frames,
          f"after the allocator died, the edge forwarded {e['unpaced']} packets unpaced, "
          f"fewer than the {frames} data frames that arrived after the lease: {e}")
    check(e["held_at_stop"] == 0, f"packets left held: {e}")


def main():
    sluice, src = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    check(os.geteuid() == 0, "must run as root")
    with tempfile.TemporaryDirectory(prefix="sluice-ft-tcp-") as tmp:
        res = one_run(sluice, src, tmp)
    base, ft, fail = (res["runs"][k] for k in ("baseline", "flowtune", "failure"))
    for name, run in (("baseline (Flowtune off, not asserted)", base), ("flowtune", ft)):
        sh = shares(run["steps"])
        print(f"{name}: every flow within {SHARE_TOLERANCE:.0%} of the flows' mean in "
              f"{sum(ok for ok, _ in sh)} of {len(sh)} shared steps; worst flow per step "
              f"{[round(w, 3) for _, w in sh]}")
    e = ft["flowtune"]
    print(f"flowtune edge: {e}")
    check(e["starts_sent"] >= 5 and e["rate_updates"] > 0 and e["paced"] > 10 * e["unpaced"],
          f"the edge did not run flowlets past the allocator: {e}")
    sh = shares(ft["steps"])
    check(len(sh) == 7 and sum(ok for ok, _ in sh) >= 6,
          f"every flow within {SHARE_TOLERANCE:.0%} of the flows' mean in only "
          f"{sum(ok for ok, _ in sh)} of {len(sh)} shared steps: {ft['steps']}")
    check(receiver_drops(ft) * 2 < max(1, receiver_drops(base)),
          f"receiver port drops: flowtune {ft['drops']}, baseline {base['drops']}")
    check_failure(fail)
    updates_counted(sluice, src)
    print("flowtune_tcp: OK")


def updates_counted(sluice, src):
    """The updates run (item 5c) for 1 s per CDF: the hosts' TCP flows
    ran through the edge and its control messages were counted. What is
    asserted are counts, not timing, so the run need not pass the gate (on
    this machine the allocator iterates late while six hosts open thousands
    of connections on its cpu; docs/mechanisms/flowtune.md)."""
    tool = os.path.join(src, "tools", "reproduce")
    allocator = os.path.join(os.path.dirname(os.path.dirname(sluice)), "allocator",
                             "sluice-allocator")
    with tempfile.TemporaryDirectory(prefix="sluice-ft-tcp-upd-") as out:
        r = subprocess.run(["flock", "/tmp/sluice-heavy.lock", sys.executable, tool,
                            "flowtune-tcp", "--out", out, "--runs", "updates",
                            "--update-seconds", "1", "--floor-seconds", "0",
                            "--allow-unfaithful", "--sluice", sluice, "--allocator", allocator],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=300)
        check(r.returncode == 0,
              f"tools/reproduce flowtune-tcp --runs updates exited {r.returncode}:\n"
              f"{r.stdout[-4000:]}")
        with open(os.path.join(out, "results.json")) as f:
            ups = json.load(f)["updates"]
    check([u["cdf"] for u in ups] == ["fb_hadoop", "websearch"], f"updates: {ups}")
    for u in ups:
        check(u["tcp_flows_done"] > 0 and u["flowlets"] >= u["tcp_flows_done"]
              and u["rate_updates"] > 0, f"updates {u['cdf']}: {u}")
        check(0 < u["edge_to_allocator_pct"] < u["total_pct"], f"updates {u['cdf']}: {u}")


if __name__ == "__main__":
    try:
        main()
    except TestFailure as e:
        print(f"FAIL: {e}", file=sys.stderr)
        sys.exit(1)
