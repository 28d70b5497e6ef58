#!/usr/bin/python3
"""System test: Flowtune with real Linux TCP hosts (tools/reproduce flowtune-tcp,
issue 13 items 5a and 5b with TCP). Five cubic senders in namespaces join
and leave one at a time (0.5 s steps) toward a sixth host through one
sluice edge switch at 200 Mb/s, with and without Flowtune, then the five
together while the allocator is killed. Linux hosts keep the machine's
time, so this runs in real time, and the fidelity gate's real-time limits
(lateness, lost transmit time) are no promise real time can make: the run's
gate figures are printed, not asserted. What is asserted holds at 200 Mb/s
with 0.5 s steps whatever a few milliseconds of machine stall do:
  - with Flowtune the edge ran its flowlets past the allocator (starts,
    rate updates applied, most packets paced) and, in at least 7 of the 9
    steps, every flow's goodput over the step's second half is within
    10 % of the fair share G(1 - 0.01)/N;
  - with Flowtune the receiver's port drops less than half what the
    baseline's drop-tail port drops (the edge paces the sum of the flows
    below its rate);
  - after the allocator died and the lease ran out, every flow still moves
    (unpaced) and together they carry at least 80 % of the link; no packet
    was left held in a pacer at the stop;
  - the updates run (1 s per CDF) counts flowlets and rate updates for the
    TCP flows the hosts opened.

  /usr/bin/python3 test_flowtune_tcp.py SLUICE_BINARY SOURCE_DIR

Runs as root; the experiment makes and removes the namespaces and
hugepages. Bounded: each try has a timeout.
"""

import json
import os
import subprocess
import sys
import tempfile

STEP = "0.5"


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
                        "--out", out, "--runs", "baseline,flowtune,failure", "--step", STEP,
                        "--floor-seconds", "0", "--allow-unfaithful",
                        "--sluice", sluice, "--allocator", allocator],
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


def main():
    sluice, src = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    check(os.geteuid() == 0, "must run as root")
    with tempfile.TemporaryDirectory(prefix="sluice-ft-tcp-") as tmp:
        res = one_run(sluice, src, tmp)
    base, ft, fail = (res["runs"][k] for k in ("baseline", "flowtune", "failure"))
    e = ft["flowtune"]
    check(e["starts_sent"] >= 5 and e["rate_updates"] > 0 and e["paced"] > 10 * e["unpaced"],
          f"the edge did not run flowlets past the allocator: {e}")
    fair = [all(abs(m - s["fair_share_mbps"]) <= 0.1 * s["fair_share_mbps"]
                for m in s["mean_mbps_second_half"]) for s in ft["steps"]]
    check(sum(fair) >= 7, f"every flow within 10 % of its share in only {sum(fair)} of 9 "
                          f"steps: {ft['steps']}")
    check(receiver_drops(ft) * 2 < max(1, receiver_drops(base)),
          f"receiver port drops: flowtune {ft['drops']}, baseline {base['drops']}")
    f = fail["failure"]
    link = 200 * 1448 / 1538
    check(all(x > 0 for x in f["after_lease_mbps"]) and sum(f["after_lease_mbps"]) >= 0.8 * link,
          f"after the allocator died: {f}")
    check(fail["flowtune"]["held_at_stop"] == 0, f"packets left held: {fail['flowtune']}")
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
