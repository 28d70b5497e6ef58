"""Real Linux hosts for sluice: network namespaces on veth pairs, attached to
sluice through DPDK's net_af_packet (run as root). See docs/netns.md.

  tools/netns up N [--prefix sl] [--subnet-base 10.0] [--rate 1Gbps]
                   [--rate-of h0=100Mbps ...] [--ecn-k 30KB] [--switch s0]
                   [--framecnt 512] [--config-out FILE]
  tools/netns down [--prefix sl]
  tools/netns hugepages-up [--pages 512] [--file-prefix P ...]
  tools/netns hugepages-down [--file-prefix P ...]
  tools/netns run --hosts N [up options] [--pages 512] -- CMD [ARG...]

`up` creates namespaces PREFIXh0..PREFIXh(N-1). Host i has interface PREFIXh<i>
with 10.0.<i>.2/24 and a default route via 10.0.<i>.1 (sluice's port h<i>);
its veth peer PREFIXv<i> stays in the root namespace, up, without address, and
is the interface sluice opens. It prints the sluice configuration (or writes
it to --config-out). `down` removes what `up` created; it is idempotent.
`hugepages-up` reserves 2 MB hugepages and mounts hugetlbfs if needed;
`hugepages-down` removes the DPDK files of the given file prefixes and
restores exactly the state found before. `run` does up + hugepages-up, runs
CMD with NETNS_CONFIG (the config file), NETNS_FILE_PREFIX (an EAL
--file-prefix to use) and NETNS_PREFIX set, then tears everything down, also
after a failure, SIGINT or SIGTERM. Its exit code is CMD's.
"""

import argparse
import fcntl
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile


STATE_DIR = "/run/sluice-netns"
HUGEPAGES_STATE = os.path.join(STATE_DIR, "hugepages.json")
NR_HUGEPAGES = "/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages"
HUGE_MOUNT = "/dev/hugepages"
DPDK_RUNTIME_DIR = "/var/run/dpdk"
# Offloads that would hand af_packet frames larger than the MTU or with
# checksums left for hardware that does not exist.
OFFLOADS = ["gro", "gso", "tso", "tx", "rx"]
# net_af_packet ring per direction: --framecnt frames of 2 KiB in 4 KiB blocks
# (512 by default: 1 MiB of kernel memory per direction and port).
AF_PACKET_ARGS = "qpairs=1,blocksz=4096,framesz=2048,framecnt={framecnt}"


class Error(Exception):
    pass


def sh(*cmd, check=True, quiet=False):
    r = subprocess.run(list(cmd), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    if check and r.returncode != 0:
        raise Error(f"{' '.join(cmd)} failed: {r.stderr.strip()}")
    if not quiet and r.returncode != 0 and r.stderr.strip():
        print(f"tools/netns: {' '.join(cmd)}: {r.stderr.strip()}", file=sys.stderr)
    return r


def in_ns(ns, *cmd, **kw):
    return sh("ip", "netns", "exec", ns, *cmd, **kw)


class Locked:
    """Serialises state-file updates between concurrent tools/netns calls."""

    def __enter__(self):
        os.makedirs(STATE_DIR, exist_ok=True)
        self.f = open(os.path.join(STATE_DIR, "lock"), "w")
        fcntl.flock(self.f, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc):
        fcntl.flock(self.f, fcntl.LOCK_UN)
        self.f.close()
        return False


def read_json(path, default):
    try:
        with open(path) as f:
            return json.load(f)
    except FileNotFoundError:
        return default


def write_json(path, value):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(value, f, indent=1)
    os.replace(tmp, path)


# ---------------------------------------------------------------- hosts

def netns_state_path(prefix):
    return os.path.join(STATE_DIR, f"hosts-{prefix}.json")


def check_prefix(prefix):
    # Interface names are at most 15 characters: PREFIX + 'h' + index.
    if not re.fullmatch(r"[a-z][a-z0-9]{0,7}", prefix):
        raise Error(f"--prefix {prefix!r}: 1..8 lower-case letters or digits, "
                    "starting with a letter")


def subnet(base, i):
    return f"{base}.{i}"


def offloads_off(ns, ifname):
    """Turns off each offload the driver lets us change; tx checksum and TSO
    must end up off, or sluice would forward frames it cannot use."""
    run = (lambda *c: in_ns(ns, *c, check=False, quiet=True)) if ns else \
        (lambda *c: sh(*c, check=False, quiet=True))
    for feature in OFFLOADS:
        run("ethtool", "-K", ifname, feature, "off")
    out = run("ethtool", "-k", ifname).stdout
    for feature in ("tx-checksumming", "tcp-segmentation-offload"):
        m = re.search(rf"^{feature}: (\w+)", out, re.M)
        if m and m.group(1) != "off":
            raise Error(f"{ifname}: cannot turn {feature} off")


def hosts_up(n, prefix, base, record):
    """Creates the namespaces and veths, recording each before creating it so
    a failure half-way can still be torn down."""
    for i in range(n):
        ns, inner, outer = f"{prefix}h{i}", f"{prefix}h{i}", f"{prefix}v{i}"
        net = subnet(base, i)
        record["namespaces"].append(ns)
        record["links"].append(outer)
        write_json(netns_state_path(prefix), record)
        sh("ip", "netns", "add", ns)
        sh("ip", "link", "add", outer, "type", "veth", "peer", "name", inner,
           "netns", ns)
        # The root namespace must neither answer ARP on the outer end nor route
        # what arrives there: only sluice handles those frames.
        sh("sysctl", "-q", "-w", f"net.ipv4.conf.{outer}.forwarding=0")
        sh("sysctl", "-q", "-w", f"net.ipv6.conf.{outer}.disable_ipv6=1")
        sh("ip", "link", "set", outer, "arp", "off", "up")
        offloads_off(None, outer)
        in_ns(ns, "sysctl", "-q", "-w", "net.ipv4.tcp_ecn=1")
        in_ns(ns, "sysctl", "-q", "-w", "net.ipv6.conf.all.disable_ipv6=1")
        in_ns(ns, "sysctl", "-q", "-w", "net.ipv6.conf.default.disable_ipv6=1")
        in_ns(ns, "ip", "link", "set", "lo", "up")
        in_ns(ns, "ip", "addr", "add", f"{net}.2/24", "dev", inner)
        in_ns(ns, "ip", "link", "set", inner, "up")
        in_ns(ns, "ip", "route", "add", "default", "via", f"{net}.1")
        offloads_off(ns, inner)


def hosts_down(prefix):
    with Locked():
        record = read_json(netns_state_path(prefix), None)
        if record is None:
            return
        for link in record["links"]:
            if os.path.exists(f"/sys/class/net/{link}"):
                sh("ip", "link", "del", link, check=False)
        for ns in record["namespaces"]:
            if os.path.exists(f"/run/netns/{ns}"):
                sh("ip", "netns", "del", ns, check=False)
        os.unlink(netns_state_path(prefix))


def sluice_config(n, prefix, base, rate, rates_of, ecn_k, switch_name, framecnt):
    lines = [f"# sluice configuration for tools/netns up {n} --prefix {prefix}",
             "mbufs: 16384", "switches:", f"  - name: {switch_name}"]
    if ecn_k:
        lines += ["    ecn:", "      mode: step", f"      k: {ecn_k}"]
    lines.append("    ports:")
    for i in range(n):
        name = f"h{i}"
        net = subnet(base, i)
        lines += [
            f"      - name: {name}",
            f"        device: net_af_packet{i},iface={prefix}v{i},"
            + AF_PACKET_ARGS.format(framecnt=framecnt),
            "        role: host",
            f"        rate: {rates_of.get(name, rate)}",
            f"        ipv4: {net}.1/24",
            f"        peer_ip: {net}.2",
        ]
    return "\n".join(lines) + "\n"


def parse_rates_of(items, n):
    rates = {}
    for item in items:
        name, sep, rate = item.partition("=")
        if not sep or not re.fullmatch(r"h\d+", name) or int(name[1:]) >= n:
            raise Error(f"--rate-of {item!r}: expected h<i>=RATE with i < {n}")
        rates[name] = rate
    return rates


def cmd_up(a):
    check_prefix(a.prefix)
    if not re.fullmatch(r"\d{1,3}\.\d{1,3}", a.subnet_base):
        raise Error(f"--subnet-base {a.subnet_base!r}: expected two octets such as 10.0")
    if not 1 <= a.n <= 256:
        raise Error("N must be 1..256")
    rates_of = parse_rates_of(a.rate_of, a.n)
    if a.framecnt < 16 or a.framecnt % 2:  # two 2 KiB frames per 4 KiB block
        raise Error("--framecnt must be even and at least 16")
    config = sluice_config(a.n, a.prefix, a.subnet_base, a.rate, rates_of, a.ecn_k,
                           a.switch, a.framecnt)
    with Locked():
        if os.path.exists(netns_state_path(a.prefix)):
            raise Error(f"hosts with prefix {a.prefix} exist; run "
                        f"tools/netns down --prefix {a.prefix} first")
        record = {"namespaces": [], "links": []}
        write_json(netns_state_path(a.prefix), record)
        failure = None
        try:
            hosts_up(a.n, a.prefix, a.subnet_base, record)
        except BaseException as e:  # also Ctrl-C: undo what was made
            failure = e
    if failure is not None:
        hosts_down(a.prefix)
        raise failure
    if a.config_out:
        with open(a.config_out, "w") as f:
            f.write(config)
    else:
        sys.stdout.write(config)


def cmd_down(a):
    check_prefix(a.prefix)
    hosts_down(a.prefix)


# ---------------------------------------------------------------- hugepages

def is_hugetlbfs_mounted(path):
    with open("/proc/mounts") as f:
        return any(l.split()[1] == path and l.split()[2] == "hugetlbfs" for l in f)


def read_int(path):
    with open(path) as f:
        return int(f.read().strip())


def write_int(path, v):
    with open(path, "w") as f:
        f.write(f"{v}\n")


def remove_prefix_files(file_prefixes):
    """DPDK leaves its hugepage files (<prefix>map_<n>) and runtime directory
    behind; remove those of the prefixes we were told about."""
    for p in file_prefixes:
        if not re.fullmatch(r"[A-Za-z0-9_.-]+", p):
            continue
        for f in glob.glob(os.path.join(HUGE_MOUNT, f"{p}map_*")):
            os.unlink(f)
        shutil.rmtree(os.path.join(DPDK_RUNTIME_DIR, p), ignore_errors=True)


def cmd_hugepages_up(a):
    with Locked():
        st = read_json(HUGEPAGES_STATE, None)
        if st is None:
            st = {"previous_pages": read_int(NR_HUGEPAGES),
                  "mounted_by_us": False, "created_dir": False, "users": 0,
                  "file_prefixes": []}
            write_json(HUGEPAGES_STATE, st)
            if st["previous_pages"] < a.pages:
                write_int(NR_HUGEPAGES, a.pages)
            if not is_hugetlbfs_mounted(HUGE_MOUNT):
                if not os.path.isdir(HUGE_MOUNT):
                    os.makedirs(HUGE_MOUNT)
                    st["created_dir"] = True
                sh("mount", "-t", "hugetlbfs", "nodev", HUGE_MOUNT)
                st["mounted_by_us"] = True
        st["users"] += 1
        st["file_prefixes"] = sorted(set(st["file_prefixes"]) | set(a.file_prefix))
        write_json(HUGEPAGES_STATE, st)
        got = read_int(NR_HUGEPAGES)
    if got < a.pages:
        print(f"tools/netns: only {got} of {a.pages} hugepages could be reserved",
              file=sys.stderr)


def cmd_hugepages_down(a):
    with Locked():
        st = read_json(HUGEPAGES_STATE, None)
        remove_prefix_files(a.file_prefix)
        if st is None:
            return
        st["users"] -= 1
        if st["users"] > 0:
            st["file_prefixes"] = sorted(set(st["file_prefixes"]) - set(a.file_prefix))
            write_json(HUGEPAGES_STATE, st)
            return
        remove_prefix_files(st["file_prefixes"])
        if st["mounted_by_us"]:
            sh("umount", HUGE_MOUNT, check=False)
            if st["created_dir"]:
                try:
                    os.rmdir(HUGE_MOUNT)
                except OSError:
                    pass
        write_int(NR_HUGEPAGES, st["previous_pages"])
        os.unlink(HUGEPAGES_STATE)


# ---------------------------------------------------------------- run

class Terminated(Exception):
    pass


def on_sigterm(signum, frame):
    raise Terminated()


def cmd_run(a):
    if not a.cmd:
        raise Error("run: missing -- CMD")
    cmd = a.cmd[1:] if a.cmd[0] == "--" else a.cmd
    signal.signal(signal.SIGTERM, on_sigterm)
    # Also when started in the background, where SIGINT arrives ignored.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    workdir = tempfile.mkdtemp(prefix=f"sluice-netns-{a.prefix}-")
    config = a.config_out or os.path.join(workdir, "sluice.yaml")
    file_prefix = f"{a.prefix}netns{os.getpid()}"
    up_args = argparse.Namespace(**vars(a))
    up_args.n, up_args.config_out = a.hosts, config
    huge_args = argparse.Namespace(pages=a.pages, file_prefix=[file_prefix])
    status = 1
    child = None
    hosts_made = pages_made = False
    try:
        hosts_made = True
        cmd_up(up_args)
        pages_made = True
        cmd_hugepages_up(huge_args)
        env = dict(os.environ, NETNS_CONFIG=config, NETNS_FILE_PREFIX=file_prefix,
                   NETNS_PREFIX=a.prefix)
        child = subprocess.Popen(cmd, env=env)
        status = child.wait()
        if status < 0:  # killed by a signal: report it as a shell would
            status = 128 - status
    except (KeyboardInterrupt, Terminated):
        print("tools/netns: interrupted, tearing down", file=sys.stderr)
        if child is not None and child.poll() is None:
            child.terminate()
            try:
                child.wait(10)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
        status = 130
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        if pages_made:
            cmd_hugepages_down(huge_args)
        if hosts_made:
            hosts_down(a.prefix)
        shutil.rmtree(workdir, ignore_errors=True)
    return status


# ---------------------------------------------------------------- main

def add_up_options(p):
    p.add_argument("--prefix", default="sl")
    p.add_argument("--subnet-base", default="10.0")
    p.add_argument("--rate", default="1Gbps", help="egress rate of every port")
    p.add_argument("--rate-of", action="append", default=[], metavar="hI=RATE",
                   help="rate of one port (repeatable)")
    p.add_argument("--ecn-k", default=None, help="ECN step threshold, e.g. 30KB")
    p.add_argument("--switch", default="s0", help="switch name in the config")
    p.add_argument("--framecnt", type=int, default=512,
                   help="net_af_packet ring frames per direction (even)")
    p.add_argument("--config-out", default=None)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="tools/netns", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    up = sub.add_parser("up")
    up.add_argument("n", type=int)
    add_up_options(up)
    down = sub.add_parser("down")
    down.add_argument("--prefix", default="sl")
    for name in ("hugepages-up", "hugepages-down"):
        p = sub.add_parser(name)
        p.add_argument("--pages", type=int, default=512)
        p.add_argument("--file-prefix", action="append", default=[])
    run = sub.add_parser("run")
    run.add_argument("--hosts", type=int, required=True)
    run.add_argument("--pages", type=int, default=512)
    add_up_options(run)
    run.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args(argv)
    if os.geteuid() != 0:
        sys.exit("tools/netns: must run as root")
    try:
        if a.command == "up":
            cmd_up(a)
        elif a.command == "down":
            cmd_down(a)
        elif a.command == "hugepages-up":
            cmd_hugepages_up(a)
        elif a.command == "hugepages-down":
            cmd_hugepages_down(a)
        else:
            sys.exit(cmd_run(a))
    except Error as e:
        sys.exit(f"tools/netns: {e}")

