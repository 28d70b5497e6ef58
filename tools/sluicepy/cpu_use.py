"""What else used the CPUs while a real-time run went on: per-process CPU
time read from /proc before and after. A process alive at both ends (so
not one the run started) that used a noticeable share of a CPU is what to
look at when the run failed its fidelity gate on an otherwise idle
machine (docs/mechanisms/flowtune.md, "Convergence")."""

import os
import time

_HZ = os.sysconf("SC_CLK_TCK")
MIN_SHARE = 0.02  # of one CPU: what busiest() and describe() report


def _processes():
    """{(pid, start time): (name, user + system CPU ticks)} for every process."""
    out = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                stat = f.read()
        except OSError:  # ended meanwhile
            continue
        close = stat.rfind(")")
        name = stat[stat.find("(") + 1:close]
        rest = stat[close + 2:].split()  # from field 3 (state) on
        out[(int(d), int(rest[19]))] = (name, int(rest[11]) + int(rest[12]))
    return out


class Snapshot:
    def __init__(self):
        self.monotonic = time.monotonic()
        self.processes = _processes()
        with open("/proc/loadavg") as f:
            self.loadavg = f.read().split()[0]


def busiest(before, after, min_share=MIN_SHARE, exclude=()):
    """[(share of one CPU, pid, name)], largest first, of the processes
    alive in both snapshots that used at least min_share of a CPU between
    them; pids in `exclude` are left out."""
    seconds = max(after.monotonic - before.monotonic, 1e-6)
    rows = []
    for key, (name, ticks) in after.processes.items():
        if key not in before.processes or key[0] in exclude:
            continue
        share = (ticks - before.processes[key][1]) / _HZ / seconds
        if share >= min_share:
            rows.append((share, key[0], name))
    return sorted(rows, reverse=True)


def describe(before, after, exclude=()):
    """One line: the load average at the end and the busiest processes."""
    rows = busiest(before, after, exclude=exclude)
    who = ", ".join(f"{name} (pid {pid}) {share * 100:.0f}% of a cpu"
                    for share, pid, name in rows[:5]) or f"none above {MIN_SHARE:.0%} of a cpu"
    return f"load average {after.loadavg}; other processes over the run: {who}"
