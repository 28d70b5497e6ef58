"""The incast-mix beside the Floodgate authors' ns-3 (NASA-NJU/Floodgate-NS3,
scratch/third.cc, read for its file formats): sluice's flow list written as
their flow file, and a run of theirs read into the figures sluice's rows
carry (docs/mechanisms/floodgate-incast.md, "Against Floodgate's ns-3").

Their files, as third.cc writes them:
- flow file (FLOW_FROM_FILE 1): a line "<flows> 0", then one flow a line,
  "src dst bytes start_s", host hN being node N. Their runs start flows
  at 2 s, so a flow's start is 2 s + its arrival.
- FCT file: per finished flow a sender line "src dst bytes start_ns qp msg
  fct_us ideal_us slowdown" (the last ACK back at the sender) and a
  receiver line with the same fields after "rcv".
- PFC file: "time_ns node node_type port 1|0" when a device receives a
  pause (1) or a resume (0).
- buffer logs, one per switch (ToRs first, then cores): per sample time
  and port, "+<t>ns port c3 c4 c5 c6 c7 c8"; a port id is 2 x host + 1
  for a host's port and from 2 x hosts on for an uplink. Their
  mix/getBuffer.sh sums c5 over a ToR's uplinks and over its host ports,
  and takes c8 as a switch's whole buffer.
"""

import collections
import os

from ..fct_analysis import load_flows_csv
from ..fct_analysis import nearest_rank as percentile

START_NS = 2 * 10**9  # where their runs put a flow list's time zero
MATCH_NS = 5   # their start times are Seconds(double), truncated to the ns


def host_index(name):
    if not (name.startswith("h") and name[1:].isdigit()):
        raise ValueError(f"host {name!r}: expected hN")
    return int(name[1:])


def read_flows(flows_csv):
    """[(flow_id, src, dst, bytes, start_ns in their clock, is_incast)], in
    the file's order."""
    return [(f.flow_id, host_index(f.src), host_index(f.dst), f.size, START_NS + f.start_ns,
             f.is_incast) for f in load_flows_csv(flows_csv).values()]


def write_flow_file(flows_csv, path):
    """Writes sluice's flow list as their flow file; returns the flow count."""
    flows = read_flows(flows_csv)
    with open(path, "w") as f:
        f.write(f"{len(flows)} 0\n")
        for _, src, dst, size, start_ns, _ in flows:
            f.write(f"{src} {dst} {size} {start_ns // 10**9}.{start_ns % 10**9:09d}\n")
    return len(flows)


def read_fct(path):
    """{(src, dst, bytes): [(start_ns, fct_us, slowdown)]} of the sender lines."""
    lines = collections.defaultdict(list)
    with open(path) as f:
        for line in f:
            p = line.split()
            if len(p) < 9 or p[0] == "rcv":  # a receiver line, or one cut short
                continue
            start = int(p[3])
            if start > 10**12:  # a picosecond time step
                start = round(start / 1000)
            lines[(int(p[0]), int(p[1]), int(p[2]))].append((start, float(p[6]), float(p[8])))
    return lines


def match(flows, lines):
    """{flow_id: (fct_us, slowdown)} for the flows their run finished: each
    flow takes the unused line of its (src, dst, bytes) whose start is
    nearest its own, within MATCH_NS."""
    done = {}
    used = set()
    for fid, src, dst, size, start, _ in sorted(flows, key=lambda x: (x[4], x[0])):
        best = None
        for i, (st, fct, slow) in enumerate(lines.get((src, dst, size), ())):
            if (src, dst, size, i) in used or abs(st - start) > MATCH_NS:
                continue
            key = (abs(st - start), fct)
            if best is None or key < best[0]:
                best = (key, i, fct, slow)
        if best:
            used.add((src, dst, size, best[1]))
            done[fid] = (best[2], best[3])
    return done


def pfc(path, end_ns):
    """(pause frames, ms paused summed over the paused ports): a port is
    paused from a pause to the next resume (or to end_ns)."""
    pauses, paused_ns, since = 0, 0, {}
    events = []
    with open(path) as f:
        for line in f:
            p = line.split()
            if len(p) == 5:
                events.append((int(p[0]), (int(p[1]), int(p[3])), int(p[4])))
    for t, port, kind in sorted(events):
        if kind == 1:
            pauses += 1
            since.setdefault(port, t)
        elif port in since:
            paused_ns += t - since.pop(port)
    paused_ns += sum(max(0, end_ns - t) for t in since.values())
    return pauses, paused_ns / 1e6


def buffers(prefix, tors, cores, hosts_per_tor):
    """Maximum bytes over time: a ToR's uplink queues summed, its host
    queues summed, and a core's whole buffer (their getBuffer.sh's sums)."""
    best = {"tor_up": 0, "tor_down": 0, "core": 0}
    for i in range(tors + cores):
        path = f"{prefix}-buffer{i}.log"
        up = collections.defaultdict(int)
        down = collections.defaultdict(int)
        with open(path) as f:
            for line in f:
                p = line.split()
                if len(p) < 8:
                    continue
                if i >= tors:
                    best["core"] = max(best["core"], int(p[7]))
                elif int(p[1]) >= 2 * tors * hosts_per_tor:
                    up[p[0]] += int(p[4])
                else:
                    down[p[0]] += int(p[4])
        best["tor_up"] = max([best["tor_up"], *up.values()])
        best["tor_down"] = max([best["tor_down"], *down.values()])
    return best


def read_run(flows_csv, prefix, tors, cores, hosts_per_tor):
    """A run of theirs (files PREFIX-fct.txt, PREFIX-pfc.txt and
    PREFIX-buffer<i>.log) as the figures of sluice's rows."""
    flows = read_flows(flows_csv)
    for suffix in ("-fct.txt", "-pfc.txt", "-buffer0.log"):
        if not os.path.exists(prefix + suffix):
            raise FileNotFoundError(f"{prefix}{suffix}: not found (give DIR/PREFIX of their run)")
    done = match(flows, read_fct(prefix + "-fct.txt"))
    poisson = [f for f in flows if not f[5]]
    incast = [f for f in flows if f[5]]
    fct = [done[f[0]][0] for f in poisson if f[0] in done]
    slow = [done[f[0]][1] for f in poisson if f[0] in done]
    ends = {f[0]: f[4] + round(done[f[0]][0] * 1e3) for f in flows if f[0] in done}
    end_ns = max(ends.values(), default=START_NS)
    inc_ends = [ends[f[0]] for f in incast if f[0] in ends]
    pauses, paused_ms = pfc(prefix + "-pfc.txt", end_ns)
    best = buffers(prefix, tors, cores, hosts_per_tor)
    return {"poisson_flows": len(poisson), "poisson_unfinished": len(poisson) - len(fct),
            "fct_mean_us": sum(fct) / len(fct) if fct else 0,
            "fct_p99_us": percentile(fct, 99) if fct else 0,
            "slowdown_mean": sum(slow) / len(slow) if slow else 0,
            "slowdown_p99": percentile(slow, 99) if slow else 0,
            "incast_flows": len(incast), "incast_unfinished": len(incast) - len(inc_ends),
            "incast_last_finish_ms": (max(inc_ends) - START_NS) / 1e6 if inc_ends else 0,
            "max_tor_up_kb": best["tor_up"] / 1e3, "max_core_kb": best["core"] / 1e3,
            "max_tor_down_kb": best["tor_down"] / 1e3,
            "pfc_pauses": pauses, "pfc_paused_ms": paused_ms}


FIGURES = (("Poisson FCT mean µs", "fct_mean_us", "%.1f"), ("Poisson FCT p99 µs", "fct_p99_us", "%.1f"),
           ("slowdown mean", "slowdown_mean", "%.2f"), ("slowdown p99", "slowdown_p99", "%.2f"),
           ("last incast flow done ms", "incast_last_finish_ms", "%.2f"),
           ("max KB ToR-up", "max_tor_up_kb", "%.0f"), ("max KB core", "max_core_kb", "%.0f"),
           ("max KB ToR-down", "max_tor_down_kb", "%.0f"))


def table(label, theirs, ours):
    """Markdown lines: each figure of theirs and sluice's, and the difference."""
    out = [f"| {label} | ns-3 | sluice | difference |", "|---|---:|---:|---:|",
           f"| Poisson flows (unfinished) | {theirs['poisson_flows']} ({theirs['poisson_unfinished']}) "
           f"| {ours['poisson_flows']} ({ours['poisson_unfinished']}) | |"]
    for name, key, fmt in FIGURES:
        a, b = theirs[key], ours[key]
        diff = f"{(b - a) / a * 100:+.0f} %" if a else ""
        out.append(f"| {name} | {fmt % a} | {fmt % b} | {diff} |")
    # Theirs counts the pauses devices received, sluice the PFC frames its
    # switches sent (pauses, refreshes and resumes).
    sent = ours.get("pfc_frames_sent")
    out.append(f"| PFC: pauses received (theirs), frames sent (sluice) | {theirs['pfc_pauses']} | "
               f"{'' if sent is None else sent} | |")
    paused = ours.get("pfc_paused_ms")
    out.append(f"| PFC: ms paused, summed over ports | {theirs['pfc_paused_ms']:.2f} | "
               f"{'' if paused is None else '%.2f' % paused} | |")
    return out
