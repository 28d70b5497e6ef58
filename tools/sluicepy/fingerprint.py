"""tools/bench fingerprint: digests of exact-fabric-time runs, to show that a
change of the code did not change what the fabric does (exact fabric time
repeats byte for byte for a given configuration and seed, docs/testbed.md).

    tools/bench fingerprint --set small|papers [--sluice PATH] [--out FILE]
                            [--compare FILE] [--scenarios A,B] [--work DIR]

Runs a fixed set of scenarios with the sluice binary (--sluice, default
build/switch/sluice of this tree) and prints one line per run directory:

    <scenario>/<run> captures=<hex> completions=<hex> summary=<hex> traces=<hex>

--out writes those lines to FILE under a header naming the sluice version
and the command; --compare FILE reads such a file and reports every run
whose digests differ from it (or that is missing on either side), exiting
non-zero if any does. The committed baselines are tests/fingerprints/
small.txt and papers.txt; tests/integration/test_exact_time.py checks its
seed-1 runs against small.txt.

Sets (CPU time measured on the 2-core CI machine):
  small   the five fabrics of tests/integration/test_exact_time.py
          (tools/sluicepy/exact_fabrics.py: bfc+tcd, floodgate, dibs,
          pfc, ecn), seed 1, its workload and duration; lines
          exact-time/<kind> (5 runs, about 20 s of CPU).
  papers  each tools/reproduce experiment at a small scale with every
          scheme it has, seed 1 (PAPERS below); one line per run directory
          the experiment leaves, <experiment>/<directory> (24 runs, about
          250-270 s of CPU; each run needs up to 6 GB for EAL's memory).

What each digest covers (sha256; "-" when the run has none):
  captures     every capture file sluice wrote: the pcap.tx of every port
               of the run's sluice.yaml, its name (the path relative to the
               run directory) and its bytes, sorted by name;
  completions  the transport hosts' completions CSV (transport.completions);
  summary      the --summary-json output, parsed and dumped with sorted
               keys, without the fields that report the machine rather
               than the fabric (MACHINE_FIELDS):
                 workers          each worker lcore's CPU, loop iterations,
                                  busy time, loop gaps, page faults,
                                  context switches and steal;
                 clock.wall_seconds  the machine's time the run took;
                 clock.instants   the instants visited, counted by each
                                  worker lcore (an instant two lcores
                                  both visit counts twice: it depends on
                                  how the fabric is partitioned, which
                                  changes nothing the fabric does);
                 clock.windows, clock.window_wait_seconds  the windows
                                  several lcores ran in and the time they
                                  waited for each other (0 on one lcore);
                 mbuf_pools       DPDK's mbuf pools: their size, what was
                                  in use after the drain, the peak in use
                                  (a machine resource, not a fabric figure);
                 process          the process's peak resident set.
               Nothing else in an exact-time summary reads the machine:
               replay_start_epoch_seconds and run_end_epoch_seconds are on
               the fabric's clock in exact time (switch/main.cc), every
               lateness figure is fabric lateness (0), and
               tx_l1_bits_per_second divides by fabric-time stamps;
  traces       the queue trace (qt.csv, sluice --queue-trace) where the
               experiment leaves one (tcd-victim, bfc, flowtune's fct runs).

Inputs (sluice.yaml, flows.csv, the replayed captures) are not digested:
what they change shows in the outputs.
"""

import argparse
import hashlib
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

from . import cli, exact_fabrics, sluice

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PY = "/usr/bin/python3"
FIELDS = ("captures", "completions", "summary", "traces")
NONE = "-"
QUEUE_TRACES = ("qt.csv",)
# Summary fields that report the machine, not the fabric: top-level keys,
# and keys of the clock section.
MACHINE_FIELDS = ("workers", "mbuf_pools", "process")
MACHINE_CLOCK_FIELDS = ("wall_seconds", "instants", "windows", "window_wait_seconds")

# tools/reproduce experiments: (name, arguments). Every scheme and transport
# is named, so the set does not follow a change of the experiments' defaults;
# sizes keep the whole set to a few minutes of CPU.
PAPERS = (
    ("dibs-testbed", ["dibs-testbed", "--queries", "5", "--seeds", "1"]),
    ("tcd-victim", ["tcd-victim", "--transports", "timely,dcqcn", "--seeds", "1"]),
    ("dibs-fattree", ["dibs-fattree", "--fabric-ms", "10", "--drain-ms", "10", "--schemes",
                      "dctcp,dibs", "--seeds", "1"]),
    ("floodgate", ["floodgate", "--poisson-ms", "0.1", "--drain-ms", "2", "--incast-flows",
                   "200", "--schemes", "dcqcn,dcqcn+fg,dctcp,dctcp+fg,hpcc,hpcc+fg",
                   "--seeds", "1"]),
    ("flowtune", ["flowtune", "--parts", "fct,convergence", "--fabric-ms", "1", "--drain-ms",
                  "10", "--step", "1ms", "--schemes", "dctcp,flowtune,flowtune-lease10ms",
                  "--seeds", "1"]),
    ("bfc", ["bfc", "--fabric-ms", "0.2", "--drain-ms", "1", "--schemes", "bfc,dcqcn,dctcp,hpcc",
             "--seeds", "1"]),
)
SETS = ("small", "papers")


# ------------------------------------------------------------ digests

def fabric_summary(summary):
    """A copy of a sluice summary without MACHINE_FIELDS."""
    s = json.loads(json.dumps(summary))
    for key in MACHINE_FIELDS:
        s.pop(key, None)
    for key in MACHINE_CLOCK_FIELDS:
        s.get("clock", {}).pop(key, None)
    return s


def _file_digest(h, path):
    """Adds a file's length and bytes to h (or a mark that it is missing)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        h.update(b"\0missing\0")
        return
    h.update(len(data).to_bytes(8, "little"))
    h.update(data)


def _run_name(d, path):
    """A file sluice was told to write, named relative to the run directory."""
    full = os.path.normpath(os.path.join(d, path))
    rel = os.path.relpath(full, d)
    return os.path.basename(full) if rel.startswith("..") else rel


def run_digests(d):
    """{field: hex or "-"} of the run directory d (sluice.yaml, summary.json
    and what they name)."""
    conf = cli.load_yaml(os.path.join(d, "sluice.yaml")) or {}
    captures = []
    for sw in conf.get("switches") or []:
        for port in sw.get("ports") or []:
            pcap = port.get("pcap")
            if isinstance(pcap, dict) and pcap.get("tx"):
                captures.append((_run_name(d, str(pcap["tx"])),
                                 os.path.join(d, str(pcap["tx"]))))
    out = {}
    if captures:
        h = hashlib.sha256()
        for name, path in sorted(captures):
            h.update(name.encode() + b"\0")
            _file_digest(h, path)
        out["captures"] = h.hexdigest()
    else:
        out["captures"] = NONE
    transport = conf.get("transport") or {}
    if transport.get("completions"):
        h = hashlib.sha256()
        _file_digest(h, os.path.join(d, str(transport["completions"])))
        out["completions"] = h.hexdigest()
    else:
        out["completions"] = NONE
    summary = fabric_summary(cli.load_json(os.path.join(d, "summary.json"), "sluice summary"))
    out["summary"] = hashlib.sha256(
        json.dumps(summary, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    traces = [n for n in QUEUE_TRACES if os.path.isfile(os.path.join(d, n))]
    if traces:
        h = hashlib.sha256()
        for name in traces:
            h.update(name.encode() + b"\0")
            _file_digest(h, os.path.join(d, name))
        out["traces"] = h.hexdigest()
    else:
        out["traces"] = NONE
    return out


def format_line(name, digests):
    return name + "".join(" %s=%s" % (k, digests.get(k, "?")) for k in FIELDS)


def parse_lines(lines, where="fingerprints"):
    """{run name: {field: hex}} of fingerprint lines ('#' comments and blank
    lines skipped)."""
    runs = {}
    for i, line in enumerate(lines, 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, *items = line.split()
        fields = {}
        for item in items:
            key, sep, value = item.partition("=")
            if not sep:
                raise cli.ToolError("%s:%d: expected KEY=HEX, got %r" % (where, i, item))
            fields[key] = value
        if name in runs:
            raise cli.ToolError("%s:%d: run %s given twice" % (where, i, name))
        runs[name] = fields
    return runs


def read_file(path):
    try:
        with open(path) as f:
            return parse_lines(f, path)
    except OSError as e:
        raise cli.ToolError("%s: %s" % (path, e.strerror or e))


def differences(expected, actual, scenarios=None):
    """One line per run whose digests differ, or that only one side has;
    scenarios: compare only runs of these (None: all)."""
    def keep(name):
        return scenarios is None or name.split("/", 1)[0] in scenarios
    out = []
    for name in sorted(set(expected) | set(actual)):
        if not keep(name):
            continue
        if name not in actual:
            out.append("%s: not run (in the baseline only)" % name)
        elif name not in expected:
            out.append("%s: not in the baseline (a new run)" % name)
        else:
            changed = [k for k in sorted(set(expected[name]) | set(actual[name]))
                       if expected[name].get(k) != actual[name].get(k)]
            if changed:
                out.append("%s: %s %s" % (name, ", ".join(changed),
                                          "differs" if len(changed) == 1 else "differ"))
    return out


# ------------------------------------------------------------ running

class Meter:
    """Wall and CPU (user + system of waited-for children) time of a step."""

    def __init__(self):
        self.wall = time.monotonic()
        self.cpu = self._children_cpu()

    @staticmethod
    def _children_cpu():
        r = resource.getrusage(resource.RUSAGE_CHILDREN)
        return r.ru_utime + r.ru_stime

    def read(self):
        return time.monotonic() - self.wall, self._children_cpu() - self.cpu


def run_small(a, work):
    """The small set: [(name, run directory)]."""
    runs = []
    if a.scenarios and "exact-time" not in a.scenarios:
        return runs
    workload = os.path.join(work, "workload")
    if not os.path.isdir(workload):
        exact_fabrics.make_workload(ROOT, workload)
    for kind in exact_fabrics.KINDS:
        meter = Meter()
        label = "exact-time-" + kind
        shutil.rmtree(os.path.join(work, label), ignore_errors=True)
        d = exact_fabrics.prepare_run(work, workload, exact_fabrics.fabric(ROOT, kind), label,
                                      seed=1)
        prefix = "sluice-fingerprint-%d-%s" % (os.getpid(), kind.replace("+", "-"))
        sluice.run(a.sluice, d, exact_fabrics.RUN_SECONDS, eal=exact_fabrics.eal(a.workers), prefix=prefix,
                   env=exact_fabrics.run_env(), memory=False, echo=False)
        check_exact(d)
        wall, cpu = meter.read()
        print("fingerprint: exact-time/%s: wall %.1f s, CPU %.1f s" % (kind, wall, cpu),
              file=sys.stderr, flush=True)
        runs.append(("exact-time/" + kind, d))
    return runs


def check_exact(d):
    """A run that did not keep exact time has nothing to fingerprint."""
    summary = cli.load_json(os.path.join(d, "summary.json"), "sluice summary")
    clock = summary.get("clock") or {}
    if clock.get("mode") != "exact" or clock.get("calendar_misses") or clock.get("stopped_stuck"):
        raise cli.ToolError("%s: exact time misbehaved: %s" % (d, clock))


def run_dirs(top):
    """Every directory under top that holds a run (sluice.yaml and
    summary.json), relative to top, sorted."""
    out = []
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames.sort()
        if "sluice.yaml" in filenames and "summary.json" in filenames:
            out.append(os.path.relpath(dirpath, top))
    return sorted(out)


def run_papers(a, work):
    """The papers set: [(name, run directory)]."""
    runs = []
    for name, args in PAPERS:
        if a.scenarios and name not in a.scenarios:
            continue
        out = os.path.join(work, name)
        shutil.rmtree(out, ignore_errors=True)
        os.makedirs(out)
        log = os.path.join(work, name + ".log")
        cmd = [PY, os.path.join(ROOT, "tools", "reproduce")] + args + ["--out", out,
                                                                      "--sluice", a.sluice]
        meter = Meter()
        with open(log, "w") as f:
            rc = subprocess.call(cmd, stdout=f, stderr=subprocess.STDOUT,
                                 env=dict(os.environ, MPLBACKEND="Agg"))
        wall, cpu = meter.read()
        if rc != 0:
            with open(log) as f:
                tail = f.read()[-3000:]
            raise cli.ToolError("tools/reproduce %s failed (%s); see %s:\n%s"
                                % (name, cli.exit_text(rc), log, tail))
        dirs = run_dirs(out)
        if not dirs:
            raise cli.ToolError("tools/reproduce %s left no run directory in %s" % (name, out))
        print("fingerprint: %s: %d runs, wall %.1f s, CPU %.1f s" % (name, len(dirs), wall, cpu),
              file=sys.stderr, flush=True)
        runs += [("%s/%s" % (name, rel), os.path.join(out, rel)) for rel in dirs]
    return runs


def sluice_version(sluice):
    try:
        r = subprocess.run([sluice, "--version"], capture_output=True, text=True, timeout=30)
    except OSError as e:
        raise cli.ToolError("cannot run sluice (%s): %s" % (sluice, e.strerror or e))
    return r.stdout.strip() or "sluice (no version)"


def tree_version():
    r = subprocess.run(["git", "-C", ROOT, "describe", "--tags", "--always", "--dirty"],
                       capture_output=True, text=True)
    return r.stdout.strip() if r.returncode == 0 else "unknown"


def header(a, argv):
    return ["# tools/bench fingerprint --set %s: digests of exact-fabric-time runs "
            "(tools/sluicepy/fingerprint.py)" % a.set,
            "# made with %s; tools of tree %s" % (sluice_version(a.sluice), tree_version()),
            "# command: tools/bench fingerprint " + " ".join(argv)]


def main(argv):
    p = argparse.ArgumentParser(prog="tools/bench fingerprint",
                                description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="\n".join(__doc__.split("\n")[2:]))
    p.add_argument("--set", choices=SETS, required=True, help="which scenarios")
    p.add_argument("--sluice", default=os.path.join(ROOT, "build", "switch", "sluice"))
    p.add_argument("--workers", type=int, default=1,
                   help="run the small set on this many worker lcores (the digests must not "
                        "change)")
    p.add_argument("--out", help="write the fingerprints to this file")
    p.add_argument("--compare", metavar="FILE",
                   help="report every run whose digests differ from FILE's; exit 1 if any")
    p.add_argument("--scenarios", default="",
                   help="only these scenarios, comma-separated (exact-time; or experiments of "
                        "--set papers: %s)" % ",".join(n for n, _ in PAPERS))
    p.add_argument("--work", help="run directories here, kept (default: a temporary "
                                  "directory, removed)")
    a = p.parse_args(argv)
    a.sluice = os.path.abspath(a.sluice)
    a.scenarios = {s.strip() for s in a.scenarios.split(",") if s.strip()}
    known = {"exact-time"} if a.set == "small" else {n for n, _ in PAPERS}
    if a.scenarios - known:
        p.error("--scenarios: unknown %s; --set %s has %s"
                % (", ".join(sorted(a.scenarios - known)), a.set, ", ".join(sorted(known))))
    if not os.access(a.sluice, os.X_OK):
        raise cli.ToolError("%s: no sluice binary there (build it, or give --sluice)" % a.sluice)
    expected = read_file(a.compare) if a.compare else None
    head = header(a, argv)  # the tree as it was when the runs started
    work = os.path.abspath(a.work) if a.work else tempfile.mkdtemp(prefix="sluice-fingerprint-")
    os.makedirs(work, exist_ok=True)
    meter = Meter()
    try:
        runs = run_small(a, work) if a.set == "small" else run_papers(a, work)
        lines = [format_line(name, run_digests(d)) for name, d in sorted(runs)]
    finally:
        if not a.work:
            shutil.rmtree(work, ignore_errors=True)
    wall, cpu = meter.read()
    print("fingerprint: %d runs, wall %.1f s, CPU %.1f s" % (len(lines), wall, cpu),
          file=sys.stderr, flush=True)
    for line in lines:
        print(line)
    if a.out:
        with open(a.out, "w") as f:
            f.write("\n".join(head + lines) + "\n")
    if expected is not None:
        diff = differences(expected, parse_lines(lines), a.scenarios or None)
        for line in diff:
            print("fingerprint: differs from %s: %s" % (a.compare, line), file=sys.stderr)
        if diff:
            return 1
        print("fingerprint: every run matches %s" % a.compare, file=sys.stderr)
    return 0
