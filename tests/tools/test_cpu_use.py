#!/usr/bin/python3
"""tools/sluicepy/cpu_use: a busy process that lives through both snapshots
is reported with its share of a CPU; one that started after the first
snapshot, and excluded pids, are not."""

import subprocess
import time
import unittest

import common  # noqa: F401 (puts tools/ on the path)
from sluicepy import cpu_use

SPIN = [common.PYTHON, "-c", "import time\nend = time.monotonic() + 5\nwhile time.monotonic() < end: pass"]


class CpuUse(unittest.TestCase):
    def spin(self):
        p = subprocess.Popen(SPIN)
        self.addCleanup(p.wait)
        self.addCleanup(p.kill)
        return p

    def test_a_busy_process_alive_at_both_ends_is_reported(self):
        busy = self.spin()
        time.sleep(0.1)  # started, spinning
        before = cpu_use.Snapshot()
        time.sleep(0.3)
        late = self.spin()
        time.sleep(0.5)
        after = cpu_use.Snapshot()
        rows = {pid: share for share, pid, _ in cpu_use.busiest(before, after)}
        self.assertIn(busy.pid, rows)
        self.assertGreater(rows[busy.pid], 0.3)
        self.assertNotIn(late.pid, rows)  # started during the run: one of its own
        self.assertNotIn(busy.pid, {pid for _, pid, _ in
                                    cpu_use.busiest(before, after, exclude={busy.pid})})
        line = cpu_use.describe(before, after)
        self.assertIn(f"pid {busy.pid}", line)
        self.assertTrue(line.startswith("load average "), line)

    def test_an_idle_machine_reports_none(self):
        before = cpu_use.Snapshot()
        after = cpu_use.Snapshot()
        # Over a few ms any process that happened to be charged a tick
        # reaches 2 %, so only the line's form is checked here.
        self.assertIn("other processes over the run: ", cpu_use.describe(before, after))
        idle = cpu_use.Snapshot()
        idle.monotonic = before.monotonic + 3600  # an hour: no process at 2 %
        idle.processes = before.processes
        self.assertEqual(cpu_use.busiest(before, idle), [])
        self.assertIn("none above 2% of a cpu", cpu_use.describe(before, idle))


if __name__ == "__main__":
    unittest.main()
