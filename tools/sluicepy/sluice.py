"""The one way the tools start sluice: its command line (EAL options, a file
prefix of its own, the configuration, --duration, --summary-json), its log,
the CPU time of the process from its own wait4 and its peak memory from its
summary (process.peak_rss_bytes; wait4's where there is no summary), the DPDK
runtime directory it may leave (docs/testing.md, "Runtime state") and its
summary JSON.

    run = sluice.run(binary, run_dir, seconds, extra=["--queue-trace", "qt.csv"])
    run.summary, run.wall_s, run.cpu_s, run.rss_mb

or, for a run that goes on while the caller does something else (real
hosts, a sampler):

    proc = sluice.start(binary, run_dir, seconds)
    ...
    run = proc.finish()

Every run's EAL memory (-m) is raised to what `sluice --check` says the
configuration needs (eal_memory), and a run that fails, or stops cleanly yet
leaves its runtime directory, raises cli.ToolError naming its log.
"""

import itertools
import os
import queue
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field

from . import cli, dpdk_runtime, eal_memory

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BINARY = os.path.join(ROOT, "build", "switch", "sluice")
# sluice starts replaying this long after its workers start (kReplayLeadNs
# in switch/main.cc); its --duration counts from the workers' start.
REPLAY_LEAD_S = 0.05
# No hugepages, no NIC, the worker on cpu 1: runs on any machine. -m is
# raised to what the configuration needs.
NO_HUGE_EAL = ("--no-huge", "--no-pci", "-l", "0,1")
_serial = itertools.count()
# Worker lcores for fabric-time runs the caller gives no EAL options:
# tools/reproduce --workers sets it for every run of an experiment (and for
# tools/experiment, which reads it as its --workers default).
WORKERS_ENV = "SLUICE_WORKERS"
# Runs started by this process, and how many the caller expects
# (expect_runs): each start says which of how many it is.
_runs = {"started": 0, "expected": None}


@dataclass
class Run:
    """One finished sluice run."""
    dir: str
    cmd: list
    prefix: str
    rc: int
    wall_s: float
    cpu_s: float           # user + system CPU seconds of the sluice process
    rss_mb: float          # its peak resident set (its summary's, else wait4's)
    summary: dict = field(default_factory=dict)
    timed_out: bool = False  # stopped after the caller's timeout

    def record(self):
        """The run's cost, as the tools write it beside their results."""
        return {"wall_s": self.wall_s, "cpu_s": self.cpu_s, "rss_mb": self.rss_mb}


def lcores(workers):
    """EAL's lcore options for `workers` worker lcores on the machine's
    cores: the main lcore on cpu 0 (it sleeps while the fabric runs), worker
    i on cpu i - 1 modulo the cores."""
    if workers <= 1:
        return ["-l", "0,1"]
    cpus = os.cpu_count() or 1
    return ["--lcores", ",".join(["0@0"] + ["%d@%d" % (i, (i - 1) % cpus)
                                           for i in range(1, workers + 1)])]


def default_workers():
    """Worker lcores for fabric-time runs (SLUICE_WORKERS, default 1)."""
    try:
        return max(1, int(os.environ.get(WORKERS_ENV, "1")))
    except ValueError:
        raise cli.ToolError(f"{WORKERS_ENV}={os.environ[WORKERS_ENV]!r}: expected a count")


def in_fabric_time(path):
    """True when the configuration at `path` runs in exact fabric time
    (clock: mode: exact, in either YAML style)."""
    if not os.path.exists(path):
        return False
    conf = cli.load_yaml(path)
    clock = conf.get("clock") if isinstance(conf, dict) else None
    return isinstance(clock, dict) and clock.get("mode") == "exact"


def expect_runs(n):
    """The caller will start n runs from now on: each says "run i of n"."""
    _runs["started"], _runs["expected"] = 0, n


def eal_options(binary, run_dir, config="sluice.yaml", eal=None):
    """EAL options for a run: `eal` (a list or a string; default
    NO_HUGE_EAL, with default_workers() lcores in fabric time) with -m at
    least what the configuration needs."""
    need = eal_memory.needed_mib(binary, config, run_dir)
    if eal is None:
        workers = default_workers()
        if workers > 1 and not in_fabric_time(os.path.join(run_dir, config)):
            workers = 1
        return ["--no-huge", "-m", str(need), "--no-pci"] + lcores(workers)
    tokens = eal.split() if isinstance(eal, str) else list(eal)
    return eal_memory.with_memory(tokens, need)


def command(binary, eal, prefix, config="sluice.yaml", seconds=None,
            summary="summary.json", extra=(), wrapper=(), stats_interval=0):
    """sluice's command line."""
    cmd = list(wrapper) + [binary] + list(eal) + ["--file-prefix", prefix,
                                                  "--log-level", "lib.eal:warning", "--",
                                                  "--config", config]
    if seconds is not None:
        cmd += ["--duration", "%.6f" % seconds]
    cmd += ["--stats-interval", str(stats_interval)]
    if summary:
        cmd += ["--summary-json", summary]
    return cmd + [str(x) for x in extra]


def new_prefix(tag="sluice"):
    """A --file-prefix no other run on this machine uses."""
    return "%s-%d-%d" % (tag, os.getpid(), next(_serial))


class Process:
    """A started sluice run; finish() waits for it. With stream, its output
    goes to the log and, line by line, to the queue `lines` (None at the
    end), for a caller that reads sluice's periodic table while it runs
    (--stats-interval); new_session keeps a Ctrl-C meant for the caller
    from reaching it; env replaces its environment."""

    def __init__(self, binary, run_dir, seconds=None, config="sluice.yaml", eal=None,
                 prefix=None, extra=(), wrapper=(), summary="summary.json", log="sluice.log",
                 echo=True, memory=True, stats_interval=0, stream=False, new_session=False,
                 env=None):
        self.dir = os.path.abspath(run_dir)
        self.prefix = prefix or new_prefix()
        self.summary_name = summary
        self.log_path = os.path.join(self.dir, log)
        if memory:
            eal = eal_options(binary, self.dir, config, eal)
        else:
            eal = list(NO_HUGE_EAL) if eal is None else (
                eal.split() if isinstance(eal, str) else list(eal))
        self.cmd = command(binary, eal, self.prefix, config, seconds, summary, extra, wrapper,
                           stats_interval)
        if _runs["expected"]:
            _runs["started"] += 1
            print("sluice: run %d of %d: %s" % (_runs["started"], _runs["expected"], self.dir),
                  flush=True)
        if echo:
            cli.show(self.cmd)
        self.lines = queue.Queue() if stream else None
        self.t0 = time.monotonic()
        log_file = open(self.log_path, "w")
        try:
            if stream:
                log_file.write("$ " + " ".join(self.cmd) + "\n")
                log_file.flush()
            self.proc = subprocess.Popen(
                self.cmd, cwd=self.dir, stdout=subprocess.PIPE if stream else log_file,
                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, text=stream or None,
                errors="replace" if stream else None, start_new_session=new_session, env=env)
        except OSError as e:
            log_file.close()
            raise cli.ToolError("cannot run sluice (%s): %s" % (binary, e.strerror or e))
        if stream:
            self._pump = threading.Thread(target=self._copy, args=(log_file,), daemon=True)
            self._pump.start()
        else:
            log_file.close()
        self.pid = self.proc.pid
        self._done = None

    def _copy(self, log_file):
        for line in self.proc.stdout:
            log_file.write(line)
            self.lines.put(line)
        log_file.close()
        self.lines.put(None)

    def _reap(self, flags):
        """(status, rusage) once the process has ended, else None."""
        if self._done is None:
            try:
                pid, status, usage = os.wait4(self.pid, flags)
            except ChildProcessError:  # reaped through the Popen object: no rusage
                rc = self.proc.returncode
                status = (-rc if rc < 0 else rc << 8) if rc is not None else 0
                pid, usage = self.pid, None
            if pid:
                self._done = (status, usage)
                self.proc.returncode = os.waitstatus_to_exitcode(status)
        return self._done

    def _wait4(self, timeout):
        """(status, rusage) of the process, or None when timeout passes first."""
        if timeout is None:
            return self._reap(0)
        deadline = time.monotonic() + timeout
        delay = 0.002
        while True:
            got = self._reap(os.WNOHANG)
            if got:
                return got
            if time.monotonic() >= deadline:
                return None
            time.sleep(delay)
            delay = min(2 * delay, 0.1)

    def poll(self):
        """sluice's exit code once it has ended, else None."""
        got = self._reap(os.WNOHANG)
        return None if got is None else self.proc.returncode

    def signal(self, sig):
        if self._done is None:
            try:
                self.proc.send_signal(sig)
            except ProcessLookupError:
                pass

    def finish(self, timeout=None, check=True, check_clock=True):
        """Waits for the run (at most `timeout` seconds, then SIGINT, then
        SIGKILL 20 s later) and returns its Run; with check, raises
        cli.ToolError when it failed, left its runtime directory or (in
        exact time) its calendar misbehaved."""
        got = self._wait4(timeout)
        timed_out = got is None
        if timed_out:
            self.signal(signal.SIGINT)
            got = self._wait4(20)
            if got is None:
                self.signal(signal.SIGKILL)
                got = self._wait4(None)
        status, usage = got
        wall = time.monotonic() - self.t0
        cpu = usage.ru_utime + usage.ru_stime if usage else float("nan")
        rss = usage.ru_maxrss / 1024.0 if usage else float("nan")
        if self.lines is not None:
            self._pump.join()  # the log complete
        rc = os.waitstatus_to_exitcode(status)
        run = Run(self.dir, self.cmd, self.prefix, rc, wall, cpu, rss, timed_out=timed_out)
        if not check:
            dpdk_runtime.remove(self.prefix)
            path = os.path.join(self.dir, self.summary_name or "")
            if self.summary_name and rc == 0 and os.path.exists(path):
                run.summary = cli.load_json(path, "sluice summary")
                _take_own_rss(run)
            return run
        dpdk_runtime.check_run(self.prefix, rc, self.log_path)
        if self.summary_name:
            run.summary = cli.load_json(os.path.join(self.dir, self.summary_name),
                                        "sluice summary")
            _take_own_rss(run)
            clock = run.summary.get("clock") or {}
            if check_clock and (clock.get("calendar_misses") or clock.get("stopped_stuck")):
                raise cli.ToolError("%s: exact time misbehaved: %s" % (self.dir, clock))
        return run


def _take_own_rss(run):
    """The peak memory sluice reports of itself (process.peak_rss_bytes),
    where it does: wait4's ru_maxrss also counts what this (Python) process
    held when it forked sluice, so it only bounds sluice's from above."""
    peak = ((run.summary or {}).get("process") or {}).get("peak_rss_bytes", -1)
    if isinstance(peak, int) and peak >= 0:
        run.rss_mb = peak / 1048576.0


def start(binary, run_dir, seconds=None, **kw):
    """Starts sluice in run_dir on its sluice.yaml (see Process)."""
    return Process(binary, run_dir, seconds, **kw)


def run(binary, run_dir, seconds, timeout=None, check=True, check_clock=True, **kw):
    """Runs sluice in run_dir for `seconds` (its --duration) and returns the
    finished Run (see Process and Process.finish)."""
    return Process(binary, run_dir, seconds, **kw).finish(timeout, check, check_clock)


def exact_timeout(seconds):
    """A generous bound on an exact-time run's wall time (a 100-host fabric
    may take minutes per fabric second)."""
    return seconds * 3000 + 60
