"""EAL's memory for a sluice run: what `sluice --check` says the
configuration needs of DPDK memory (its line "DPDK memory: about N MiB"),
put into the EAL options' -m when they give less (a --no-huge run has only
what -m gives; docs/configuration.md, "mbufs")."""

import re
import subprocess

from . import cli

_NEEDS = re.compile(r"DPDK memory: about (\d+) MiB")


def needed_mib(sluice, config, cwd=None):
    """MiB the configuration needs, from `sluice -- --config CONFIG --check`
    run in cwd (the capture files it names must exist there)."""
    try:
        proc = subprocess.run([sluice, "--", "--config", config, "--check"], cwd=cwd,
                              capture_output=True, text=True)
    except OSError as e:
        raise cli.ToolError("cannot run sluice (%s): %s" % (sluice, e.strerror))
    if proc.returncode != 0:
        raise cli.ToolError("sluice --check refused %s:\n%s" % (config, proc.stderr.strip()))
    m = _NEEDS.search(proc.stdout)
    if m is None:
        raise cli.ToolError("sluice --check said nothing of DPDK memory: %s" % proc.stdout)
    return int(m.group(1))


def with_memory(eal, mib):
    """The EAL option list `eal` (a list of strings) with -m raised to mib
    when it gives less; unchanged when it gives more, or has no -m (with
    hugepages memory grows on demand)."""
    out = list(eal)
    for i, tok in enumerate(out):
        if tok == "-m" and i + 1 < len(out):
            if int(out[i + 1]) < mib:
                out[i + 1] = str(mib)
            return out
        if tok.startswith("-m") and tok[2:].isdigit():
            if int(tok[2:]) < mib:
                out[i] = "-m%d" % mib
            return out
    return out
