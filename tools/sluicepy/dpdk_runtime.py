"""DPDK's runtime directory of a run (/var/run/dpdk/<file-prefix>): a sluice
that stops cleanly removes its own; one that was killed leaves it, and the
tool that killed it removes it (docs/testing.md, "Runtime state")."""

import os
import shutil

from sluicepy import cli

RUNTIME = "/var/run/dpdk"


def path(prefix):
    return os.path.join(RUNTIME, prefix)


def left_behind(prefix):
    """True when a run of this prefix left its directory."""
    return os.path.exists(path(prefix))


def remove(prefix):
    """Removes what a run of this prefix left (after it ended)."""
    shutil.rmtree(path(prefix), ignore_errors=True)


def check_run(prefix, rc, log_path):
    """After a sluice run of this prefix ended with exit code rc: removes
    what it left, and raises cli.ToolError when it failed (pointing at its
    log) or stopped cleanly yet left its directory (a bug)."""
    left = left_behind(prefix)
    remove(prefix)
    if rc != 0:
        raise cli.ToolError(f"sluice failed ({cli.exit_text(rc)}); see {log_path}")
    if left:
        raise cli.ToolError(f"sluice left {path(prefix)} behind")
