#!/usr/bin/python3
"""`sluice -- --config FILE --check`: a valid file prints "config OK: N
switches, M ports" and exits 0; each class of broken file (missing key, wrong
type, unknown key, unknown port in a route, overlapping lcores, rate with a bad
unit, ...) prints "file:line: key: message" naming the right line and key and
exits 1. A capture port whose rx file does not open or is not a pcap is an
error of --check too (naming the file, line, key, port, capture and reason),
not a failure at start; frames longer than mbuf_size are a note. (That the
bundled conf/*.yaml files pass --check, where their captures are, and start,
is test_conf_examples'.)"""

import os
import re
import subprocess

import harness
from harness import TestFailure, check

VALID = """\
metrics:
  address: 127.0.0.1:9100
switches:
  - name: s1
    ecn:
      mode: step
      k: 30KB
    ports:
      - name: p0
        device: net_null0
        role: host
        rate: 10Gbps
        mac: 02:00:00:00:00:01
        peer_mac: 02:00:00:00:00:a1
        ipv4: 10.0.0.1/24
      - name: p1
        device: net_null1
        role: host
        rate: 10Gbps
        mac: 02:00:00:00:00:02
        peer_mac: 02:00:00:00:00:a2
        ipv4: 10.0.1.1/24
    routes:
      - prefix: 10.0.1.0/24
        ports: [p1]
      - prefix: 192.168.0.0/16
        ports: [p0, p1]
workers:
  - lcore: 1
    ports: [s1/p0, s1/p1]
"""


def edit(text, line, new=None, delete=False, insert_after=None):
    """Returns text with 1-based line `line` replaced, deleted, or followed by
    `insert_after` (a line)."""
    lines = text.split("\n")
    if delete:
        del lines[line - 1]
    elif insert_after is not None:
        lines.insert(line, insert_after)
    else:
        lines[line - 1] = new
    return "\n".join(lines)


def line_of(text, needle, nth=1):
    seen = 0
    for i, l in enumerate(text.split("\n"), 1):
        if needle in l:
            seen += 1
            if seen == nth:
                return i
    raise ValueError(needle)


V = VALID
# (name, broken text, [(line, key, word that the message must contain)])
CASES = [
    ("missing key",
     edit(V, line_of(V, "role: host", 2), delete=True),
     [(line_of(V, "- name: p1"), "switches[0].ports[1].role", "role")]),
    ("missing switches",
     "metrics:\n  address: 127.0.0.1:9100\n",
     [(None, "switches", "switches")]),
    ("wrong type",
     edit(V, line_of(V, "ports: [p1]"), "        ports: p1"),
     [(line_of(V, "ports: [p1]"), "switches[0].routes[0].ports", "list")]),
    ("wrong type (integer expected)",
     edit(V, line_of(V, "- name: s1"), insert_after="    queues_per_port: many"),
     [(line_of(V, "- name: s1") + 1, "switches[0].queues_per_port", "many")]),
    ("wrong type (map expected)",
     edit(V, line_of(V, "metrics:") + 1, delete=True).replace("metrics:", "metrics: on"),
     [(line_of(V, "metrics:"), "metrics", "map")]),
    ("unknown key",
     edit(V, line_of(V, "rate: 10Gbps", 1), insert_after="        speed: 10Gbps"),
     [(line_of(V, "rate: 10Gbps", 1) + 1, "switches[0].ports[0].speed", "unknown key")]),
    ("unknown port in a route",
     edit(V, line_of(V, "ports: [p1]"), "        ports: [p7]"),
     [(line_of(V, "ports: [p1]"), "switches[0].routes[0].ports[0]", "p7")]),
    ("unknown port in a worker",
     edit(V, line_of(V, "ports: [s1/p0, s1/p1]"), "    ports: [s1/p0, s1/p9]"),
     [(line_of(V, "ports: [s1/p0, s1/p1]"), "workers[0].ports[1]", "s1/p9")]),
    ("overlapping lcores (port in two workers)",
     V + "  - lcore: 2\n    ports: [s1/p1]\n",
     [(len(V.split("\n")) + 1, "workers[1].ports[0]", "overlapping")]),
    ("overlapping lcores (lcore twice)",
     edit(V, line_of(V, "ports: [s1/p0, s1/p1]"), "    ports: [s1/p0]")
     + "  - lcore: 1\n    ports: [s1/p1]\n",
     [(len(V.split("\n")), "workers[1].lcore", "lcore 1")]),
    ("rate with a bad unit",
     edit(V, line_of(V, "rate: 10Gbps", 2), "        rate: 10 furlongs"),
     [(line_of(V, "rate: 10Gbps", 2), "switches[0].ports[1].rate", "10 furlongs")]),
    ("rate without a unit",
     edit(V, line_of(V, "rate: 10Gbps", 1), "        rate: 10000"),
     [(line_of(V, "rate: 10Gbps", 1), "switches[0].ports[0].rate", "rate")]),
    ("size with a bad unit",
     edit(V, line_of(V, "k: 30KB"), "      k: 30 parsecs"),
     [(line_of(V, "k: 30KB"), "switches[0].ecn.k", "30 parsecs")]),
    ("bad MAC address",
     edit(V, line_of(V, "mac: 02:00:00:00:00:02"), "        mac: 02:00:00:00:00"),
     [(line_of(V, "mac: 02:00:00:00:00:02"), "switches[0].ports[1].mac", "MAC")]),
    ("route prefix with host bits",
     edit(V, line_of(V, "prefix: 10.0.1.0/24"), "      - prefix: 10.0.1.7/24"),
     [(line_of(V, "prefix: 10.0.1.0/24"), "switches[0].routes[0].prefix", "10.0.1.0/24")]),
    ("duplicate port name",
     edit(V, line_of(V, "- name: p1"), "      - name: p0"),
     [(line_of(V, "- name: p1"), "switches[0].ports[1].name", "p0")]),
    ("several errors at once",
     edit(edit(V, line_of(V, "rate: 10Gbps", 2), "        rate: fast"),
          line_of(V, "ports: [p1]"), "        ports: [p7]"),
     [(line_of(V, "rate: 10Gbps", 2), "switches[0].ports[1].rate", "fast"),
      (line_of(V, "ports: [p1]"), "switches[0].routes[0].ports[0]", "p7")]),
    ("YAML syntax error",
     edit(V, line_of(V, "ports: [p1]"), "        ports: [p1"),
     [(None, None, "YAML")]),
]


def run_check(binary, path, tag):
    cmd = [binary, "--no-huge", "-m", "1024", "--no-pci",
           "--file-prefix", f"sluice-it-check-{tag}-{os.getpid()}", "-l", "0,1",
           "--", "--config", path, "--check"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    return r.returncode, r.stdout + r.stderr


def test(binary, srcdir):
    with harness.TempDir("config-errors") as tmp:
        path = os.path.join(tmp, "valid.yaml")
        with open(path, "w") as f:
            f.write(VALID)
        rc, out = run_check(binary, path, "valid")
        check(rc == 0 and re.search(r"config OK: 1 switches?, 2 ports", out),
              f"valid config: expected exit 0 and 'config OK: 1 switches, 2 ports', got"
              f" exit {rc}:\n{out}")

        failures = []
        for i, (name, text, expected) in enumerate(CASES):
            path = os.path.join(tmp, f"case{i}.yaml")
            with open(path, "w") as f:
                f.write(text)
            rc, out = run_check(binary, path, str(i))
            problems = []
            if rc != 1:
                problems.append(f"exit status {rc}, expected 1")
            lines = [l for l in out.splitlines() if l.startswith(path + ":")]
            for line, key, word in expected:
                want = (re.escape(path) + ":" + (str(line) if line is not None else r"\d+")
                        + ": " + (re.escape(key) + ": " if key is not None else ""))
                hit = [l for l in lines if re.match(want, l)]
                if not hit:
                    problems.append(f"no line matching /{want}/")
                elif not any(word.lower() in l.lower() for l in hit):
                    problems.append(f"message {hit} does not mention {word!r}")
            if problems:
                failures.append(f"case '{name}': {'; '.join(problems)}\n  output:\n"
                                + "\n".join("    " + l for l in out.splitlines()[:10]))
        if failures:
            raise TestFailure("\n".join(failures))

        check_captures(binary, tmp)


CAPTURE_PORT = """\
switches:
  - name: s1
    ports:
      - name: p0
        role: host
        rate: 10Gbps
        pcap:
          rx: {rx}
          tx: {tx}
      - name: p1
        role: host
        rate: 10Gbps
        pcap:
          tx: {tx}.p1
"""
RX_LINE = 8


def check_captures(binary, tmp):
    """--check opens every capture it would replay."""
    good = os.path.join(tmp, "good.pcap")
    harness.write_pcap(good, [bytes(60), bytes(3000)])
    not_pcap = os.path.join(tmp, "not.pcap")
    with open(not_pcap, "w") as f:
        f.write("hello, not a capture\n")
    missing = os.path.join(tmp, "missing.pcap")
    tx = os.path.join(tmp, "out.pcap")
    key = "switches[0].ports[0].pcap.rx"
    for name, rx, reason in (("missing", missing, f"cannot open {missing}: No such file or"
                                                  " directory"),
                             ("not-a-pcap", not_pcap, f"{not_pcap} is not a pcap file"),
                             ("directory", tmp, f"cannot read {tmp}: Is a directory")):
        path = os.path.join(tmp, f"capture-{name}.yaml")
        with open(path, "w") as f:
            f.write(CAPTURE_PORT.format(rx=rx, tx=tx))
        rc, out = run_check(binary, path, f"capture-{name}")
        want = f"{path}:{RX_LINE}: {key}: switch s1 port p0: {reason}"
        check(rc == 1 and want in out.splitlines() and "config OK" not in out,
              f"capture {name}: expected exit 1 and the line\n  {want}\ngot exit {rc}:\n{out}")
        check(not os.path.exists(tx), f"capture {name}: --check created the tx file {tx}")
    path = os.path.join(tmp, "capture-good.yaml")
    with open(path, "w") as f:
        f.write(CAPTURE_PORT.format(rx=good, tx=tx))
    rc, out = run_check(binary, path, "capture-good")
    check(rc == 0 and "config OK: 1 switches, 2 ports" in out,
          f"capture good: expected exit 0 and config OK, got exit {rc}:\n{out}")
    note = (f"note: {path}:{RX_LINE}: {key}: switch s1 port p0: 1 frame(s) of {good} (up to"
            f" 3000 bytes) are larger than mbuf_size (2048 bytes)")
    check(any(l.startswith(note) for l in out.splitlines()),
          f"capture good: no line starting\n  {note}\nin:\n{out}")
    with open(path, "w") as f:
        f.write("mbuf_size: 4KiB\n" + CAPTURE_PORT.format(rx=good, tx=tx))
    rc, out = run_check(binary, path, "capture-jumbo")
    check(rc == 0 and "note:" not in out,
          f"capture with mbuf_size 4KiB: expected exit 0 and no note, got exit {rc}:\n{out}")


if __name__ == "__main__":
    harness.main(test)
