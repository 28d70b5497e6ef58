"""Shared bits of the tools/ tests: paths, a host list, an independent pcap
reader and IPv4 checksum (written here, not imported from tools/sluicepy)."""

import os
import struct
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
TOOLS = os.path.join(ROOT, "tools")
CONF = os.path.join(ROOT, "conf", "workloads")
PYTHON = "/usr/bin/python3"
sys.path.insert(0, TOOLS)

HOSTS = [("h%d" % i, "10.0.%d.2" % i, "02:00:00:00:00:%02x" % (0x10 + i),
          "02:00:00:00:01:%02x" % i) for i in range(8)]


def write_hosts_text(path, hosts=HOSTS):
    with open(path, "w") as f:
        f.write("# name ip mac gateway_mac\n")
        for h in hosts:
            f.write(" ".join(h) + "\n")
    return path


def write_hosts_yaml(path, hosts=HOSTS):
    with open(path, "w") as f:
        f.write("hosts:\n")
        for n, ip, mac, gw in hosts:
            f.write('  - {name: %s, ip: %s, mac: "%s", gateway_mac: "%s"}\n' % (n, ip, mac, gw))
    return path


def run_tool(name, *args):
    proc = subprocess.run([PYTHON, os.path.join(TOOLS, name)] + [str(a) for a in args],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise AssertionError("tools/%s failed (%d):\n%s%s" % (name, proc.returncode,
                                                             proc.stdout, proc.stderr))
    return proc.stdout


def read_pcap_ns(path):
    """[(ts_ns, frame bytes)] of a little-endian nanosecond pcap."""
    with open(path, "rb") as f:
        data = f.read()
    magic, _, _, _, _, _, link = struct.unpack_from("<IHHiIII", data)
    assert magic == 0xA1B23C4D, hex(magic)
    assert link == 1
    out, pos = [], 24
    while pos < len(data):
        sec, nsec, incl, orig = struct.unpack_from("<IIII", data, pos)
        assert incl == orig
        out.append((sec * 10**9 + nsec, data[pos + 16:pos + 16 + incl]))
        pos += 16 + incl
    return out


def write_pcap_ns(path, records):
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, 65535, 1))
        for ts, frame in records:
            f.write(struct.pack("<IIII", ts // 10**9, ts % 10**9, len(frame), len(frame)))
            f.write(frame)


def checksum16(data):
    if len(data) % 2:
        data += b"\0"
    total = 0
    for i in range(0, len(data), 2):
        total += (data[i] << 8) | data[i + 1]
    while total > 0xFFFF:
        total = (total & 0xFFFF) + (total >> 16)
    return total  # 0xFFFF for a header whose checksum field is right
