#!/usr/bin/python3
"""Operator commands. `sluice --version` (with or without EAL's "--") prints
"sluice VERSION" (git describe of the source, or the project version) and exits
0 without starting EAL. `sluice --help` exits 0 and lists every option that
switch/ops/cli_options.cc parses, each value-taking one with its default.
`--check` says how much DPDK memory a configuration needs, and without
hugepages sluice refuses to start with less, saying what it needs and of
what (instead of failing halfway through start-up); with that much it
starts."""

import os
import re
import subprocess

import harness
from harness import check, check_eq


def parsed_options(srcdir):
    """Every option string parse_cli() compares an argument with."""
    with open(os.path.join(srcdir, "switch", "ops", "cli_options.cc")) as f:
        text = f.read()
    body = text[text.index("bool parse_cli("):]
    return sorted(set(re.findall(r'a == "(-[-\w]+)"', body)))


def usage_entries(text):
    """{option: its text, continuation lines included} of a usage message."""
    entries, current = {}, None
    for line in text.splitlines():
        m = re.match(r"  (-[-\w]+)", line)
        if m:
            current = []
            for opt in re.findall(r"(?:^  |, )(-[-\w]+)", line):
                entries[opt] = current
        if current is not None and line.startswith("  "):
            current.append(line.strip())
    return {k: " ".join(v) for k, v in entries.items()}


def run(binary, *argv):
    return subprocess.run([binary, *argv], capture_output=True, text=True, timeout=30)


def test(binary, srcdir):
    for argv in (["--version"], ["--", "--version"], ["--no-huge", "--", "--version"]):
        r = run(binary, *argv)
        check_eq(r.returncode, 0, f"exit status of sluice {' '.join(argv)}")
        check(re.fullmatch(r"sluice \S+\n", r.stdout),
              f"sluice {' '.join(argv)}: expected 'sluice VERSION', got {r.stdout!r}")
        check("EAL:" not in r.stdout + r.stderr,
              f"sluice {' '.join(argv)} started EAL:\n{r.stdout}{r.stderr}")

    options = parsed_options(srcdir)
    check(len(options) >= 10, f"found only {options} in switch/ops/cli_options.cc")
    for argv in (["--help"], ["--", "--help"], ["-h"]):
        r = run(binary, *argv)
        check_eq(r.returncode, 0, f"exit status of sluice {' '.join(argv)}")
        check("EAL:" not in r.stdout + r.stderr,
              f"sluice {' '.join(argv)} started EAL:\n{r.stdout}{r.stderr}")
        entries = usage_entries(r.stdout)
        missing = [o for o in options if o not in entries]
        check(not missing, f"sluice {' '.join(argv)} does not list {missing}:\n{r.stdout}")
        # Options that take a value say what it is when not given; --config
        # has none (it is required), the flags are off unless given.
        flags = {"--help", "-h", "--version", "--config"}
        no_default = [o for o in options if o not in flags and "default" not in entries[o]]
        check(not no_default, f"no default given for {no_default}:\n{r.stdout}")
        check("required" in entries["--config"], f"--config not said to be required:\n{r.stdout}")

    r = run(binary, "--", "--no-such-option")
    check_eq(r.returncode, 2, "exit status for an unknown option")
    check("--config" in r.stderr, f"usage not printed for an unknown option:\n{r.stderr}")
    # sluice's options before "--" (or without it) are said to go after it,
    # instead of reaching EAL or being reported missing.
    for argv in (["--config", "x.yaml", "--check"], ["--no-huge", "--config", "x.yaml"]):
        r = run(binary, *argv)
        check_eq(r.returncode, 2, f"exit status of sluice {' '.join(argv)}")
        check("--config is sluice's option: sluice's options come after \"--\"" in r.stderr
              and "EAL:" not in r.stdout + r.stderr,
              f"sluice {' '.join(argv)}: not told where --config goes:\n{r.stderr}")
    check("options come after \"--\"" in run(binary, "--help").stdout, "--help does not say it")
    # Every option parse_cli() knows is recognised before "--" too (the two
    # lists are kept apart in cli_options.cc).
    for opt in options:
        if opt in ("--help", "-h", "--version"):
            continue
        r = run(binary, opt, "1")
        check(r.returncode == 2 and f"{opt} is sluice's option" in r.stderr,
              f"sluice {opt} 1 (before \"--\"): not told it is sluice's option:\n{r.stderr}")
    # Fabric time ends at the calendar's horizon, 2^44 ns (about 4.9 hours).
    exact = os.path.join(srcdir, "conf", "fabrics", "dibs-testbed-1g.yaml")
    for argv in (["--check"], []):
        r = run(binary, "--", "--config", exact, "--duration", "20000", *argv)
        check(r.returncode == 2 and "a run in fabric time lasts at most 17591 s" in r.stderr
              and "EAL:" not in r.stdout + r.stderr,
              f"--duration beyond fabric time's horizon {argv}: {r.returncode}\n{r.stderr}")
    check_memory(binary)


def check_memory(binary):
    """Four switches of one port each, 20,000 mbufs: about 50 MiB of pool
    and 4 x 64 MiB of routing tables."""
    with harness.TempDir("cli-memory") as tmp:
        switches = [harness.switch("s%d" % i, [harness.port(
            "p0", "net_null%d" % i, "02:00:00:00:00:%02x" % i, "02:00:00:00:01:%02x" % i,
            "10.%d.0.1/24" % i)], []) for i in range(4)]
        cfg = harness.write_config(os.path.join(tmp, "mem.yaml"), switches, mbufs=20000)
        r = run(binary, "--", "--config", cfg, "--check")
        check_eq(r.returncode, 0, f"--check:\n{r.stdout}{r.stderr}")
        m = re.search(r"DPDK memory: about (\d+) MiB \(mbuf pool (\d+) MiB, routing tables "
                      r"(\d+) MiB \(4 switches x 64 MiB\)", r.stdout)
        check(m, f"--check does not state the memory needed:\n{r.stdout}")
        need, pool, routing = (int(g) for g in m.groups())
        # 20,000 mbufs of a 4 KiB page each; 4 x (64 MiB + 256 KiB + rules).
        check(pool == 79 and 256 <= routing <= 260 and need > pool + routing,
              f"memory needed: {m.group(0)}")
        too_little = run(binary, "--no-huge", "-m", str(need - 60), "--no-pci", "-l", "0,1",
                         "--file-prefix", "sluice-it-mem-%d" % os.getpid(), "--",
                         "--config", cfg, "--duration", "0.1")
        check_eq(too_little.returncode, 1, "exit status with too little memory")
        check(f"needs about {need} MiB of DPDK memory" in too_little.stderr and
              f"give -m {need} or more" in too_little.stderr,
              f"too little memory is not explained:\n{too_little.stderr}")
        enough = run(binary, "--no-huge", "-m", str(need), "--no-pci", "-l", "0,1",
                     "--file-prefix", "sluice-it-mem-%d" % os.getpid(), "--",
                     "--config", cfg, "--duration", "1", "--stats-interval", "0.2")
        check_eq(enough.returncode, 0, f"with -m {need}:\n{enough.stderr}")
        # The live table says which columns are rates and which a total.
        header = [line for line in enough.stdout.splitlines() if "rx Mpps" in line]
        check(header and all("drops/s" in h and "drops total" in h for h in header),
              f"live table header: {header}")


if __name__ == "__main__":
    harness.main(test)
