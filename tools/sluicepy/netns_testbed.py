"""Real Linux hosts in network namespaces for an experiment that runs as
root (tools/reproduce flowtune-tcp): the namespaces and veths of
sluicepy.netns, each host tuned (ECN, reordering, minimum RTO, a tbf at its
link rate, receive processing on the hosts' cpu), hugepages, the processes
the experiment starts, and a teardown that undoes exactly what was made,
also after a failure, SIGINT or SIGTERM."""

import argparse
import ctypes
import os
import signal
import subprocess

from . import netns
from .cli import ToolError

CLONE_NEWNET = 0x40000000


def setns(path):
    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open(path, os.O_RDONLY)
    try:
        if libc.setns(fd, CLONE_NEWNET) != 0:
            e = ctypes.get_errno()
            raise OSError(e, "setns %s: %s" % (path, os.strerror(e)))
    finally:
        os.close(fd)


class Testbed:
    """What the run made, so that teardown undoes exactly that."""

    def __init__(self, a, file_prefix):
        self.a = a
        self.nm = netns
        self.procs = []          # Popen objects we started
        self.hosts_made = False
        self.pages_made = False
        self.file_prefix = file_prefix

    def sh(self, *cmd, timeout=30):
        r = subprocess.run(list(cmd), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, timeout=timeout)
        if r.returncode != 0:
            raise ToolError("%s failed: %s" % (" ".join(cmd), r.stderr.strip()))
        return r.stdout

    def ns(self, h):
        return "%sh%d" % (self.a.prefix, h)

    def up(self, n_hosts):
        nm, a = self.nm, self.a
        nm.check_prefix(a.prefix)
        with nm.Locked():
            if os.path.exists(nm.netns_state_path(a.prefix)):
                raise ToolError("hosts with prefix %s exist (another run?); "
                                "tools/netns down --prefix %s removes them" % (a.prefix, a.prefix))
            record = {"namespaces": [], "links": []}
            nm.write_json(nm.netns_state_path(a.prefix), record)
            self.hosts_made = True
            nm.hosts_up(n_hosts, a.prefix, a.subnet_base, record)
        for h in range(n_hosts):
            self.tune(h)
        self.pages_made = True
        nm.cmd_hugepages_up(argparse.Namespace(pages=a.pages, file_prefix=[self.file_prefix]))

    def tune(self, h):
        """The paper's host tuning (5.2, Table 1), as far as Linux has it."""
        a, ns, ifname = self.a, self.ns(h), "%sh%d" % (self.a.prefix, h)
        ex = ["ip", "netns", "exec", ns]
        self.sh(*ex, "sysctl", "-q", "-w", "net.ipv4.tcp_ecn=1",
                "net.ipv4.tcp_reordering=%d" % a.reordering,
                "net.ipv4.tcp_congestion_control=%s" % a.cc)
        gw = "%s.%d.1" % (a.subnet_base, h)
        self.sh(*ex, "ip", "route", "replace", "default", "via", gw, "dev", ifname,
                "rto_min", a.rto_min)
        if a.host_rate != "0":
            # The host's NIC at the link rate (a veth has none of its own).
            self.sh(*ex, "tc", "qdisc", "replace", "dev", ifname, "root", "tbf",
                    "rate", a.host_rate, "burst", "16kb", "latency", "200ms")
        # The host's receive processing (a frame sluice sends on cpu 1 enters
        # the veth there) goes to the hosts' cpu, not the worker's.
        self.sh(*ex, "sh", "-c", "echo %x > /sys/class/net/%s/queues/rx-0/rps_cpus"
                % (1 << int(self.a.host_cpu), ifname))

    def adopt(self, p):
        """A process started elsewhere that teardown must stop too."""
        self.procs.append(p)
        return p

    def start(self, cmd, out, err=subprocess.STDOUT):
        f = open(out, "w")
        p = subprocess.Popen(cmd, stdout=f, stderr=err, stdin=subprocess.DEVNULL)
        f.close()
        self.procs.append(p)
        return p

    def stop(self, p, sig=signal.SIGINT, timeout=20):
        if p.poll() is None:
            p.send_signal(sig)
            try:
                p.wait(timeout)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
                return None
        return p.returncode

    def teardown(self):
        for p in self.procs:
            if p.poll() is None:
                self.stop(p, signal.SIGTERM, 5)
        if self.pages_made:
            self.nm.cmd_hugepages_down(argparse.Namespace(pages=self.a.pages,
                                                          file_prefix=[self.file_prefix]))
        if self.hosts_made:
            self.nm.hosts_down(self.a.prefix)
        self.procs, self.pages_made, self.hosts_made = [], False, False
