"""provenance.json: what made the results in an output directory. Every
experiment, reproduction and benchmark writes one, with

  command      the command line (argv) and the working directory
  git          the commit, and whether the tree had uncommitted changes
  binaries     each program it ran (sluice, sluice-allocator, ...): path,
               sha256, GNU build id, and sluice's `--version`
  configs      sha256 of every configuration the runs used: the inputs
               named on the command line and every *.yaml under the output
               directory (the per-run configurations the tool wrote)
  inputs       sha256 of the other input files (flow-size CDFs, matrices)
  seeds        the seeds of the runs
  machine      hostname, CPU model, cores, memory, kernel, load average
  date         UTC, when the file was written (the end of the runs)

    provenance.write(out, argv=sys.argv, seeds=[1, 2], configs=[config],
                     binaries=[a.sluice])
"""

import datetime
import hashlib
import json
import os
import platform
import re
import socket
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NAME = "provenance.json"


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _output(cmd, cwd=None):
    try:
        done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def git(root=ROOT):
    """The commit of the source tree and whether it had uncommitted changes
    (to tracked files or new files not ignored)."""
    commit = _output(["git", "-C", root, "rev-parse", "HEAD"])
    status = _output(["git", "-C", root, "status", "--porcelain"])
    return {"commit": commit, "dirty": bool(status) if status is not None else None,
            "changed": status.splitlines()[:50] if status else []}


def build_id(path):
    text = _output(["readelf", "-n", path]) or ""
    m = re.search(r"Build ID: ([0-9a-f]+)", text)
    return m.group(1) if m else None


# Programs known to answer --version and exit; anything else could start
# running (sluice-allocator takes it for an option with a value).
ANSWERS_VERSION = ("sluice",)


def binary(path):
    """A program's identity: path, sha256, build id, and --version for the
    programs in ANSWERS_VERSION."""
    if not path or not os.path.exists(path):
        return {"path": path, "missing": True}
    path = os.path.abspath(path)
    out = {"path": path, "sha256": sha256(path), "build_id": build_id(path)}
    if os.path.basename(path) in ANSWERS_VERSION:
        version = _output([path, "--version"])
        if version:
            out["version"] = version.splitlines()[0]
    return out


def _cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def _memory_bytes():
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def machine():
    return {"hostname": socket.gethostname(), "cpu_model": _cpu_model(),
            "cores": os.cpu_count(), "memory_bytes": _memory_bytes(),
            "kernel": platform.release(), "os": platform.platform(),
            "python": platform.python_version(), "loadavg": list(os.getloadavg())}


def _files(paths, base):
    out = {}
    for p in paths:
        if p and os.path.isfile(p):
            key = os.path.relpath(os.path.abspath(p), base) if p.startswith(base) else p
            out[key] = sha256(p)
    return out


def record(out_dir, argv=None, seeds=(), configs=(), inputs=(), binaries=(), extra=None):
    """The provenance of out_dir's results, as a dict."""
    out_dir = os.path.abspath(out_dir)
    written = []
    for d, _, names in os.walk(out_dir):
        written += [os.path.join(d, n) for n in sorted(names) if n.endswith((".yaml", ".yml"))]
    doc = {
        "command": {"argv": list(sys.argv if argv is None else argv), "cwd": os.getcwd()},
        "git": git(),
        "binaries": [binary(b) for b in binaries if b],
        "configs": {**_files([os.path.abspath(c) for c in configs if c], ROOT),
                    **_files(sorted(written), out_dir)},
        "inputs": _files([os.path.abspath(i) for i in inputs if i], ROOT),
        "seeds": [int(s) for s in seeds],
        "machine": machine(),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    }
    if extra:
        doc.update(extra)
    return doc


def write(out_dir, **kw):
    """Writes OUT/provenance.json (see record) and returns its path."""
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, NAME)
    with open(path, "w") as f:
        json.dump(record(out_dir, **kw), f, indent=2)
        f.write("\n")
    return path
