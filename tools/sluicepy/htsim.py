"""htsim's side of the permutation benchmark (tools/bench permutation).

htsim (Broadcom/csg-htsim) is built outside this repository and never
copied into it. docs/benchmarks.md, "The emulator beside htsim", says which
commit, how its driver sim/datacenter/old_tests/main_dctcp_permutation.cpp
was given options for the scenario's settings (fat-tree arity, link speed
and delay, MTU, queue size, ECN threshold, initial ssthresh, end time, seed,
a flow file, a path file) and what it prints. This module only runs that
binary and reads its output: lines "result <key> <value>", one "flow <src>
<dst> <bytes>" per flow, and one "path <src> <dst> <tor_up> <agg_up>" per
flow naming the uplinks its path leaves its ToR and aggregation switch by
(-1 where it turns down).
"""

import os
import random
import re
import subprocess
import time

from . import cli


def derangement(n, seed):
    """A permutation of range(n) with no host sending to itself, from
    Python's random.Random(seed) (shuffle until none does), so the same seed
    gives the same flows to both simulators."""
    if n < 2:
        raise cli.ToolError("a permutation without fixed points needs at least 2 hosts")
    rng = random.Random(seed)
    while True:
        p = list(range(n))
        rng.shuffle(p)
        if all(i != p[i] for i in range(n)):
            return p


def write_permutation(path, hosts, seed):
    """Writes "src dst" lines (host i sends to perm[i]); returns the pairs.
    Host i is htsim's host i (under ToR i / (k/2)) and sluice's h<i>
    (tools/fabric fattree names hosts in pod, edge, port order)."""
    perm = derangement(hosts, seed)
    pairs = [(i, perm[i]) for i in range(hosts)]
    with open(path, "w") as f:
        f.write("# src dst: one long flow each; random.Random(%d) derangement of %d hosts\n"
                % (seed, hosts))
        f.writelines("%d %d\n" % p for p in pairs)
    return pairs


def command(binary, perm, k, speed_gbps, delay_us, mtu, queue_packets, ecn_k_packets,
            ssthresh_packets, end_ms, seed, qsample_us=0, pathfile=None):
    """The driver's command line; with qsample_us, it also writes every
    switch queue's non-empty occupancy that often to queues.csv
    ("time_us,link,bytes", link like "tor3->agg1"). With pathfile ("src dst
    tor_up agg_up" lines), each flow takes the path those uplinks name
    instead of one drawn at random."""
    cmd = [binary, "-k", str(k), "-speed", repr(float(speed_gbps)), "-delay",
           repr(float(delay_us)), "-mtu", str(mtu), "-q", str(queue_packets), "-K",
           str(ecn_k_packets), "-ssthresh", str(ssthresh_packets), "-end", repr(float(end_ms)),
           "-seed", str(seed), "-flowfile", perm, "-o", "logout.dat"]
    if qsample_us:
        cmd += ["-qsample", repr(float(qsample_us)), "-qsamplefile", "queues.csv"]
    if pathfile:
        cmd += ["-pathfile", os.path.abspath(pathfile)]
    return cmd


_RESULT = re.compile(r"^result (\S+) (\S+)$")
_FLOW = re.compile(r"^flow (\d+) (\d+) (\d+)$")
_PATH = re.compile(r"^path (\d+) (\d+) (-?\d+) (-?\d+)$")


def parse(text, path):
    """{transmissions, goodput_bytes, per_flow_bytes, ...} from the driver's
    output; a ToolError when a figure is missing or they disagree."""
    out, flows, paths = {}, [], {}
    for line in text.splitlines():
        m = _PATH.match(line)
        if m:
            src, dst, tor_up, agg_up = (int(x) for x in m.groups())
            paths[(src, dst)] = (tor_up, agg_up)
            continue
        m = _RESULT.match(line)
        if m:
            v = m.group(2)
            out[m.group(1)] = float(v) if ("." in v or "e" in v) else int(v)
            continue
        m = _FLOW.match(line)
        if m:
            flows.append(tuple(int(x) for x in m.groups()))
    if "transmissions" not in out or "goodput_bytes" not in out:
        raise cli.ToolError("%s: no 'result transmissions' or 'result goodput_bytes' line "
                            "(is this the permutation driver, and did it finish?)" % path)
    out["per_flow_bytes"] = [b for _, _, b in flows]
    out["pairs"] = [(src, dst) for src, dst, _ in flows]
    if paths:
        if set(paths) != set(out["pairs"]):
            raise cli.ToolError("%s: the 'path' lines do not name the flows" % path)
        out["choices"] = [paths[p] for p in out["pairs"]]
    if sum(out["per_flow_bytes"]) != out["goodput_bytes"]:
        raise cli.ToolError("%s: per-flow bytes do not add up to goodput_bytes" % path)
    return out


def run(binary, perm, workdir, timeout, **scenario):
    """One run in workdir; parse()'s figures plus cpu_s (user + sys of the
    process, start-up included), wall_s and rss_mb (peak resident set)."""
    os.makedirs(workdir, exist_ok=True)
    cmd = command(os.path.abspath(binary), os.path.abspath(perm), **scenario)
    out_path = os.path.join(workdir, "htsim.out")
    t0 = time.monotonic()
    with open(out_path, "w") as out:
        try:
            proc = subprocess.Popen(cmd, cwd=workdir, stdout=out, stderr=subprocess.STDOUT)
        except OSError as e:
            raise cli.ToolError("cannot run htsim (%s): %s" % (binary, e.strerror or e))
        deadline = t0 + timeout
        while True:
            pid, status, ru = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                proc.kill()
                proc.wait()
                raise cli.ToolError("htsim ran longer than %d s; see %s" % (timeout, out_path))
            time.sleep(0.05)
    rc = os.waitstatus_to_exitcode(status)
    if rc != 0:
        raise cli.ToolError("htsim exited %d; see %s" % (rc, out_path))
    with open(out_path) as f:
        res = parse(f.read(), out_path)
    res.update(cpu_s=ru.ru_utime + ru.ru_stime, wall_s=time.monotonic() - t0,
               rss_mb=ru.ru_maxrss / 1024.0, cmd=cmd)
    return res
