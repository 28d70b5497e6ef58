"""The fidelity gate of the experiment tools (docs/testbed.md, "Fidelity
gate"): did the emulator honour the configured rates and delays in a run?

A run is judged from sluice's summary JSON (--summary-json). Per port:
  shaper_lost_ns            transmit time lost while frames waited (on an
                            internal link's port: the link's lost idle time)
  {shaper,link,replay}_lateness_p99_ns
                            p99 of a lateness histogram, as the upper bound of
                            its bucket (100 ns x 2^i; 2^64-1 = above the top)
  {shaper,link,replay}_lateness_samples
                            how many samples that histogram holds
Fields a summary lacks (older sluice) are not judged. A run passes when no
port lost more than --max-lost-ms and no lateness p99 is above
--max-lateness-us. Top-level "workers" (loop gaps per worker lcore) and the
machine floor (build/tools/sluice-floor) are printed, not judged. A run
with a sluice-allocator (Flowtune) also fails when the p99 of its
iterations' lateness is above --max-lost-ms.
"""

import json
import os
import re
import subprocess
import sys
from dataclasses import asdict, dataclass

from .cli import ToolError, exit_text
from .counters import ports

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_MAX_LOST_MS = 1.0
DEFAULT_MAX_LATENESS_US = 25.6   # a histogram bucket bound: 100 ns x 2^8
LATENESS_KINDS = ("shaper", "link", "replay")
ABOVE_HISTOGRAM = 2**64 - 1      # sluice's p99 when it is past the last bucket
NOT_VALID = "NOT VALID: fidelity limits exceeded"
EXIT_UNFAITHFUL = 3              # apart from 1 (error) and 2 (usage)
# Where the build puts sluice-floor (tools/floor/meson.build); the first one
# that exists is the default.
FLOOR_BINARIES = [os.path.join(ROOT, "build", "tools", "floor", "sluice-floor"),
                  os.path.join(ROOT, "build", "tools", "sluice-floor")]
# tools/experiment's EAL options; the tools that run it with its default
# find the worker's cpu here.
DEFAULT_EAL = "--no-huge -m 2048 --no-pci -l 0,1"


# ---------------------------------------------------------------- options

CLOCKS = ("exact", "real")


def add_arguments(parser, floor=True):
    g = parser.add_argument_group("fidelity gate (docs/testbed.md)")
    g.add_argument("--clock", choices=CLOCKS, default="exact",
                   help="the fabric's clock: exact never reads the machine's clock (every "
                        "frame on time, idle time free, the same bytes for the same seed); "
                        "real is the machine's time (docs/emulator.md, \"Fabric time\"; "
                        "default %(default)s)")
    g.add_argument("--max-lost-ms", type=float, default=DEFAULT_MAX_LOST_MS,
                   help="most transmit time any port may lose in a run (default %(default)s)")
    g.add_argument("--max-lateness-us", type=float, default=DEFAULT_MAX_LATENESS_US,
                   help="largest shaper, link or replay lateness p99 (a histogram bucket "
                        "bound) a port may show; in exact time every lateness is 0 "
                        "(default %(default)s)")
    g.add_argument("--allow-unfaithful", action="store_true",
                   help="present results of runs over the limits anyway, marked NOT VALID, "
                        "and exit 0")
    if floor:
        g.add_argument("--floor-seconds", type=float, default=2.0,
                       help="measure the machine's own floor with a busy loop on the worker's "
                            "cpu this long before the runs (0 = skip; real time only: exact "
                            "time does not depend on it; default %(default)s)")
        g.add_argument("--sluice-floor", default=default_floor_binary(),
                       help="the floor program (default %(default)s)")


def default_floor_binary():
    return next((b for b in FLOOR_BINARIES if os.path.exists(b)), FLOOR_BINARIES[0])


@dataclass(frozen=True)
class Limits:
    max_lost_ns: int
    max_lateness_ns: int


def limits_from_args(a):
    if a.max_lost_ms < 0 or a.max_lateness_us < 0:
        raise ToolError("--max-lost-ms and --max-lateness-us cannot be negative")
    return Limits(round(a.max_lost_ms * 1e6), round(a.max_lateness_us * 1e3))


def child_arguments(a):
    """Options for a tools/experiment run by another tool: the same limits,
    no verdict and no floor of its own (the caller judges every run and
    measures the floor once)."""
    return ["--max-lost-ms", repr(a.max_lost_ms), "--max-lateness-us", repr(a.max_lateness_us),
            "--clock", a.clock, "--allow-unfaithful", "--floor-seconds", "0"]


def apply_clock(conf, a):
    """Sets the configuration's clock section from --clock."""
    conf["clock"] = {"mode": a.clock}
    return conf


# ---------------------------------------------------------------- figures

def fmt_time(ns):
    """A duration in the unit a reader expects: 25.6 us, 3.62 ms."""
    if ns >= 10**6:
        return "%.3g ms" % (ns / 1e6) if ns < 10**8 else "%.0f ms" % (ns / 1e6)
    return "%.4g us" % (ns / 1e3)


def fmt_bound(ns):
    """A p99 given as a histogram bucket's upper bound."""
    return "> %s" % fmt_time(104_857_600) if ns >= ABOVE_HISTOGRAM else "<= " + fmt_time(ns)


def lateness_p99(port, kind):
    """A port's lateness p99 in ns, or None when it has no samples (or the
    summary does not report this kind). Older summaries have no sample
    count; there a p99 of 0 means no samples."""
    p99 = port.get(kind + "_lateness_p99_ns")
    samples = port.get(kind + "_lateness_samples")
    if p99 is None or samples == 0 or (samples is None and p99 == 0):
        return None
    return p99


@dataclass(frozen=True)
class Violation:
    switch: str
    port: str
    kind: str      # "lost", "capture", "allocator", or the lateness kind: shaper, link, replay
    value_ns: int
    limit_ns: int

    @property
    def figure(self):
        if self.kind == "capture":
            return "%d records left out of its capture" % self.value_ns
        if self.kind == "lost":
            return "lost %.2f ms of transmit time" % (self.value_ns / 1e6)
        if self.kind == "allocator":
            return "iteration lateness p99 %s" % fmt_bound(self.value_ns)
        return "%s lateness p99 %s" % (self.kind, fmt_bound(self.value_ns))

    def __str__(self):
        if self.kind == "capture":
            return "%s/%s: %s (the capture writer fell behind; flows would read as lost)" % (
                self.switch, self.port, self.figure)
        if self.kind == "missed":
            return ("exact time: %d times an element had work and no calendar entry (a sluice "
                    "bug: something ran late; sluice.log names the first)" % self.figure)
        if self.kind == "stuck":
            return ("exact time stopped early: an element could not make progress "
                    "(sluice.log names it); the run did not cover its duration")
        limit = ("%.2f ms" % (self.limit_ns / 1e6) if self.kind in ("lost", "allocator")
                 else fmt_time(self.limit_ns))
        return "%s/%s: %s exceeds %s" % (self.switch, self.port, self.figure, limit)

    def as_dict(self):
        return dict(asdict(self), text=str(self))


def violations(summary, limits):
    """Every port figure over the limits, in the summary's port order."""
    out = []
    for sw, p in ports(summary):
        lost = p.get("shaper_lost_ns")
        if lost is not None and lost > limits.max_lost_ns:
            out.append(Violation(sw, p.get("name", "?"), "lost", lost, limits.max_lost_ns))
        for kind in LATENESS_KINDS:
            late = lateness_p99(p, kind)
            if late is not None and late > limits.max_lateness_ns:
                out.append(Violation(sw, p.get("name", "?"), kind, late, limits.max_lateness_ns))
        # Not a timing figure, but a capture with holes makes an FCT report wrong.
        dropped = p.get("capture_dropped_records", 0)
        if dropped:
            out.append(Violation(sw, p.get("name", "?"), "capture", dropped, 0))
    # Exact time: a run the loop stopped early (an element that could not
    # make progress) did not cover its duration.
    clock = summary.get("clock") or {}
    if clock.get("stopped_stuck"):
        out.append(Violation("-", "-", "stuck", clock["stopped_stuck"], 0))
    if clock.get("calendar_misses"):
        out.append(Violation("-", "-", "missed", clock["calendar_misses"], 0))
    return out


def allocator_lateness(allocator_out):
    """(p99, max) of 'iteration late p99 N ns max M ns' in sluice-allocator's
    summary line, or None (an older allocator)."""
    m = re.search(r"iteration late p99 (\d+) ns max (\d+) ns", allocator_out)
    return (int(m.group(1)), int(m.group(2))) if m else None


def allocator_violations(allocator_out, limits):
    """sluice-allocator's stdout judged like a port's lost time: with
    more than 1 % of its iterations later than --max-lost-ms, the edges'
    rates were that stale. (Its max is printed, not judged: a sleeping
    thread on a VM wakes up to milliseconds late now and then, see
    docs/mechanisms/flowtune.md.)"""
    late = allocator_lateness(allocator_out)
    late = late and late[0]
    if late is None or late <= limits.max_lost_ns:
        return []
    return [Violation("sluice-allocator", "loop", "allocator", late, limits.max_lost_ns)]


def figures(summary):
    """The worst lost time and lateness of a run, and its workers' loop gaps."""
    lost = late = None
    for sw, p in ports(summary):
        name = "%s/%s" % (sw, p.get("name", "?"))
        if p.get("shaper_lost_ns") is not None and (lost is None or p["shaper_lost_ns"] > lost[0]):
            lost = (p["shaper_lost_ns"], name)
        for kind in LATENESS_KINDS:
            v = lateness_p99(p, kind)
            if v is not None and (late is None or v > late[0]):
                late = (v, name, kind)
    return {"worst_lost_ns": lost and lost[0], "worst_lost_port": lost and lost[1],
            "worst_lateness_p99_ns": late and late[0], "worst_lateness_port": late and late[1],
            "worst_lateness_kind": late and late[2],
            "duration_seconds": summary.get("duration_seconds"),
            "clock": summary.get("clock"),
            "workers": summary.get("workers", [])}


def format_figures(fig):
    """One line of worst figures, then one per worker lcore."""
    lost = ("worst lost time %s (%s)" % (fmt_time(fig["worst_lost_ns"]), fig["worst_lost_port"])
            if fig["worst_lost_ns"] is not None else "no lost time reported")
    late = ("worst lateness p99 %s (%s, %s)" % (fmt_bound(fig["worst_lateness_p99_ns"]),
                                                fig["worst_lateness_port"],
                                                fig["worst_lateness_kind"])
            if fig["worst_lateness_p99_ns"] is not None else "no lateness samples")
    clock = fig.get("clock") or {}
    wall = clock.get("wall_seconds", fig["duration_seconds"])
    lines = ["fidelity: %s, %s" % (lost, late)]
    if clock.get("mode") == "exact":
        # No loop gaps to read against a floor: the run's cost instead.
        return lines + [format_exact_time(clock)]
    return lines + [format_worker(w, wall) for w in fig["workers"]]


def format_exact_time(clock):
    """'exact time: 0.100 s of fabric time in 0.42 s wall, 1.23 M port transmissions
    per wall second'."""
    wall = clock.get("wall_seconds") or 0.0
    fabric = clock.get("fabric_seconds") or 0.0
    sent = clock.get("transmissions") or 0
    return "exact time: %.3f s of fabric time in %.2f s wall, %.2f M port transmissions per " \
        "wall second" % (fabric, wall, sent / wall * 1e-6 if wall else 0.0)


def format_worker(w, seconds):
    def gaps(key, label):
        n = w.get(key)
        if n is None:
            return None
        rate = " (%.1f/s)" % (n / seconds) if seconds else ""
        return "gaps >%s %d%s" % (label, n, rate)

    parts = []
    if w.get("busy_fraction") is not None:
        parts.append("busy %.0f%%" % (100 * w["busy_fraction"]))
    if w.get("loop_gap_p99_ns") is not None:
        parts.append("loop gap p99 %s" % fmt_bound(w["loop_gap_p99_ns"]))
    if w.get("loop_gap_max_ns") is not None:
        parts.append("max %s" % fmt_time(w["loop_gap_max_ns"]))
    parts += [p for p in (gaps("loop_gaps_over_50us", "50 us"),
                          gaps("loop_gaps_over_200us", "200 us")) if p]
    idle_s = w.get("idle_loop_seconds")
    if idle_s and w.get("idle_loop_gaps_over_50us") is not None:
        # Idle passes do no work: their long gaps are stalls, comparable with the floor.
        parts.append("idle passes %.1f gaps/s >50 us" % (w["idle_loop_gaps_over_50us"] / idle_s))
    return "worker lcore %s (cpu %s): %s" % (w.get("lcore", "?"), w.get("cpu", "?"),
                                            ", ".join(parts) or "no figures")


# ---------------------------------------------------------------- machine floor

def parse_lcore_list(text):
    """'0,1', '0-3', '1,3-5' -> [0, 1, ...]; None for forms with cpu maps."""
    if "@" in text or "(" in text:
        return None
    out = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        if not lo.isdigit() or (hi and not hi.isdigit()):
            return None
        out += range(int(lo), int(hi or lo) + 1)
    return out


def _option_value(tokens, i, names):
    """The value of tokens[i] if it is one of `names` ('-l 0,1', '-l0,1',
    '--lcores=0,1'); None otherwise."""
    t = tokens[i]
    for name in names:
        if t == name:
            return tokens[i + 1] if i + 1 < len(tokens) else None
        if t.startswith(name + "=") or (len(name) == 2 and t.startswith(name) and len(t) > 2):
            return t[len(name) + 1:] if t.startswith(name + "=") else t[2:]
    return None


def worker_cpu(eal):
    """The cpu of the first worker lcore in EAL options: the lcores of
    -l/--lcores other than the main one (--main-lcore, else the lowest,
    as DPDK picks it). With -l an lcore runs on the cpu of its number."""
    tokens = eal.split() if isinstance(eal, str) else list(eal)
    lcores = main = None
    for i in range(len(tokens)):
        v = _option_value(tokens, i, ("-l", "--lcores"))
        if v is not None:
            lcores = parse_lcore_list(v)
        v = _option_value(tokens, i, ("--main-lcore",))
        if v is not None and v.isdigit():
            main = int(v)
    if not lcores:
        return None
    main = min(lcores) if main is None else main
    workers = sorted(set(lcores) - {main})
    return workers[0] if workers else None


FLOOR_KEYS = ("cpu", "seconds", "max_gap_ns", "gaps_over_50us", "gaps_over_200us")


def measure_floor(binary, cpu, seconds, prefix=()):
    """Runs `binary --cpu CPU --seconds S --json` (a busy loop pinned to the
    cpu, reading CLOCK_MONOTONIC): (its JSON object, None), or (None, a
    one-line reason) when it is missing or fails. `prefix` goes in front
    of the command (e.g. flock LOCK)."""
    if not os.access(binary, os.X_OK):
        return None, "no machine floor: %s is not built (ninja -C build)" % binary
    cmd = list(prefix) + [binary, "--cpu", str(cpu), "--seconds", "%g" % seconds, "--json"]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds + 120)
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, "no machine floor: %s" % e
    if done.returncode != 0:
        why = (done.stderr.strip().splitlines() or [""])[-1]
        return None, "no machine floor: %s failed (%s) %s" % (
            os.path.basename(binary), exit_text(done.returncode), why)
    return parse_floor_output(done.stdout)


def parse_floor_output(text):
    """sluice-floor's JSON object (the last line that is one), checked."""
    for line in reversed(text.strip().splitlines()):
        try:
            d = json.loads(line)
        except ValueError:
            continue
        if isinstance(d, dict) and all(k in d for k in FLOOR_KEYS):
            return d, None
        break
    return None, "no machine floor: sluice-floor printed no floor figures"


def format_floor(d):
    s = d["seconds"] or 1
    return ("machine floor on cpu %s (%.1f s busy loop): gaps >50 us %.1f/s, >200 us %.1f/s, "
            "max %s" % (d["cpu"], d["seconds"], d["gaps_over_50us"] / s,
                        d["gaps_over_200us"] / s, fmt_time(d["max_gap_ns"])))


def floor_step(a, eal, out_dir, prog, prefix=()):
    """Measures the floor once before a tool's runs (unless --floor-seconds
    0, or the runs are in exact time, which the machine's floor cannot
    touch), prints it and writes OUT/floor.json; returns the line to print
    beside each run, or None when skipped."""
    if a.floor_seconds <= 0 or getattr(a, "clock", "real") == "exact":
        return None
    cpu = worker_cpu(eal)
    if cpu is None:
        d, reason = None, "no machine floor: no worker lcore in the EAL options %r" % eal
    else:
        print("%s: measuring the machine floor on cpu %d for %g s" % (prog, cpu, a.floor_seconds),
              flush=True)
        d, reason = measure_floor(a.sluice_floor, cpu, a.floor_seconds, prefix)
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "floor.json"), "w") as f:
        json.dump({"floor": d, "reason": reason}, f, indent=2)
        f.write("\n")
    line = format_floor(d) if d else reason
    print("%s: %s" % (prog, line), flush=True)
    return line


def recorded_floor(out_dir):
    """The floor line of an earlier floor_step in out_dir, or None."""
    try:
        with open(os.path.join(out_dir, "floor.json")) as f:
            doc = json.load(f)
    except (OSError, ValueError):
        return None
    return format_floor(doc["floor"]) if doc.get("floor") else doc.get("reason")


# ---------------------------------------------------------------- the gate

class Gate:
    """Judges each run of a tool and gives the verdict at the end."""

    def __init__(self, prog, a, floor_line=None):
        self.prog = prog
        self.limits = limits_from_args(a)
        self.allow = a.allow_unfaithful
        self.floor_line = floor_line
        self.runs = {}

    def check(self, label, summary, allocator_out=None):
        """Prints the run's fidelity figures (and the floor beside them) and
        any violation; returns the violations. allocator_out: the stdout of
        the run's sluice-allocator, if it had one."""
        fig = figures(summary)
        found = violations(summary, self.limits)
        lines = format_figures(fig)
        if allocator_out is not None:
            found += allocator_violations(allocator_out, self.limits)
            late = allocator_lateness(allocator_out)
            fig["allocator_late_p99_ns"], fig["allocator_late_max_ns"] = late or (None, None)
            lines.append("allocator: iteration lateness %s" % (
                "not reported" if late is None
                else "p99 %s, max %s" % (fmt_bound(late[0]), fmt_time(late[1]))))
        self.runs[label] = {"figures": fig, "violations": [v.as_dict() for v in found]}
        lines += [self.floor_line] if self.floor_line else []
        for line in lines:
            print("%s: %s %s" % (self.prog, label, line))
        report(self.prog, label, found)
        return found

    @property
    def bad_runs(self):
        return [label for label, r in self.runs.items() if r["violations"]]

    @property
    def valid(self):
        return not self.bad_runs

    @property
    def note(self):
        """The line to put at the top of written results, or None."""
        return None if self.valid else NOT_VALID

    def record(self):
        return {"valid": self.valid, "note": self.note, "allow_unfaithful": self.allow,
                "limits": asdict(self.limits), "floor": self.floor_line, "runs": self.runs}

    def verdict(self):
        return verdict(self.prog, self.bad_runs, self.allow)


def report(prog, run_label, found):
    """One line per violation: 'experiment: droptail: leaf0/up: link
    lateness p99 <= 51.2 us exceeds 25.6 us'."""
    lines = ["%s: %s: %s" % (prog, run_label, v) for v in found]
    for line in lines:
        print(line)
    sys.stdout.flush()
    return lines


def verdict(prog, bad_runs, allow_unfaithful):
    """Prints whether the results stand; returns the exit status."""
    if not bad_runs:
        print("%s: fidelity limits held in every run" % prog, flush=True)
        return 0
    which = ", ".join(bad_runs)
    if allow_unfaithful:
        print("%s: WARNING: fidelity limits exceeded in %s (see above); results presented "
              "because of --allow-unfaithful and marked \"%s\"" % (prog, which, NOT_VALID),
              file=sys.stderr, flush=True)
        return 0
    print("%s: %s in %s (see above): the emulator did not keep up, so these results do not "
          "compare the schemes. What was measured is written and marked so. Run on an idle "
          "machine or a smaller experiment (docs/testbed.md), or pass --allow-unfaithful to "
          "present the results anyway." % (prog, NOT_VALID, which), file=sys.stderr, flush=True)
    return EXIT_UNFAITHFUL


def mark_not_valid(path, note=NOT_VALID):
    """Puts the note at the top of a written text result (once)."""
    with open(path) as f:
        text = f.read()
    if not text.startswith(note):
        with open(path, "w") as f:
            f.write(note + "\n\n" + text)
