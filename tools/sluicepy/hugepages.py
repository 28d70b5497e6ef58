"""2 MB hugepages for a DPDK run, reserved for its length and given back:
the pages (vm.nr_hugepages) and a hugetlbfs mount if there was none. The
emulator's mbufs and routing tables then sit on 2 MB pages instead of 4 KiB
ones (a 128-host fabric touches hundreds of MB of them: docs/benchmarks.md,
"The emulator"). Root only; a run uses --in-memory, so nothing is left in
hugetlbfs either."""

import contextlib
import os
import subprocess

from . import cli

NR_PATH = "/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages"
MOUNT = "/dev/hugepages"


def _read():
    with open(NR_PATH) as f:
        return int(f.read())


def _write(n):
    with open(NR_PATH, "w") as f:
        f.write(str(n))


def _mounted():
    with open("/proc/mounts") as f:
        for line in f:
            fields = line.split()
            if fields[2] == "hugetlbfs" and "pagesize=1G" not in fields[3]:
                return True
    return False


@contextlib.contextmanager
def reserved(mib):
    """At least `mib` MiB of 2 MB pages while inside; the state before
    restored after, also on an error."""
    want = (mib + 1) // 2 + 16
    before = _read()
    mounted_here = False
    try:
        if before < want:
            _write(want)
        got = _read()
        if got < want:
            raise cli.ToolError("only %d of %d hugepages could be reserved (memory fragmented?); "
                                "run without hugepages" % (got, want))
        if not _mounted():
            os.makedirs(MOUNT, exist_ok=True)
            subprocess.run(["mount", "-t", "hugetlbfs", "-o", "pagesize=2M", "nodev", MOUNT],
                           check=True)
            mounted_here = True
        yield
    finally:
        if mounted_here:
            subprocess.run(["umount", MOUNT], check=False)
        if _read() != before:
            _write(before)
