"""DPDK's runtime directory of a run (/var/run/dpdk/<file-prefix>): a sluice
that stops cleanly removes its own; one that was killed leaves it, and the
tool that killed it removes it (docs/testing.md, "Runtime state")."""

import os
import shutil

RUNTIME = "/var/run/dpdk"


def path(prefix):
    return os.path.join(RUNTIME, prefix)


def left_behind(prefix):
    """True when a run of this prefix left its directory."""
    return os.path.exists(path(prefix))


def remove(prefix):
    """Removes what a run of this prefix left (after it ended)."""
    shutil.rmtree(path(prefix), ignore_errors=True)
