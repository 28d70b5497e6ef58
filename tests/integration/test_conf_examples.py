#!/usr/bin/python3
"""The bundled configurations run as they are. Each conf/*.yaml is run for one
second (metrics on a free port) and must exit 0 with a summary whose counters
add up. Experiment configurations (capture ports replaying workload/*.pcap,
such as conf/leafspine.yaml) get a short tools/workload workload first, as
tools/experiment would give them. conf/default.yaml, the one tools/run uses, replays the pcaps written by
tools/workload default-pcaps: both ports must forward, answer ARP, and count the
malformed frames those pcaps hold (bad checksum, TTL 1, IPv6, unknown
ethertype) under their reasons.

"--check accepts it" must mean "it starts": each conf/*.yaml must pass
--check (run where its captures are), and every other example configuration
of the test suite and the docs (test_config_errors' valid file, a default
route, each ```yaml block of docs/ with a top-level `switches`) that --check
accepts is started for half a second and must exit 0.

Each run is mostly sluice's start and stop, which beside a CPU hog on every
core take several seconds (a 2 s run of conf/loopback-null.yaml took 5 s);
the runs were 2 s and 1 s, and the test ran out of its 150 s there. What is
asserted does not depend on the run's length: default.yaml's captures
replay forever (infinite_rx), the workloads last 5 ms."""

import glob
import os
import re
import subprocess

import yaml

import harness
import test_config_errors
from harness import check


def check_default(summary):
    for name in ("p0", "p1"):
        p = harness.find_port(summary, "s1", name)
        check(p["rx_packets"] > 0 and p["tx_packets"] > 0, f"default: {name} idle: {p}")
        check(p["rx_consumed_packets"] > 0, f"default: {name} consumed no ARP request")
        check(p["tx_generated_packets"] > 0, f"default: {name} sent no ARP reply")
        for reason in ("bad_ip_checksum", "ttl_expired", "ipv6", "unknown_ethertype"):
            check(p["drops"].get(reason, 0) > 0, f"default: {name} counted no {reason} drops:"
                                                 f" {p['drops']}")


def lcores_for(conf):
    """An --lcores map with the main lcore 0 and every worker lcore the file
    names, spread over the two cores (None: the default -l 0,1)."""
    with open(conf) as f:
        workers = yaml.safe_load(f).get("workers") or []
    ids = sorted({w["lcore"] for w in workers})
    if not ids or ids == [1]:
        return None
    return ",".join(["0@0"] + [f"{lc}@{1 - i % 2}" for i, lc in enumerate(ids)])


def replays_workload(conf):
    """Whether the file has capture-file ports that replay workload/*.pcap."""
    with open(conf) as f:
        data = yaml.safe_load(f)
    return any(str((p.get("pcap") or {}).get("rx", "")).startswith("workload/")
               for sw in data["switches"] for p in sw["ports"])


def make_workload(srcdir, conf, tmp):
    """A short workload for an experiment configuration, where it expects it
    (workload/ and capture/ under the directory sluice runs in)."""
    out = os.path.join(tmp, "workload")
    subprocess.run(["/usr/bin/python3", os.path.join(srcdir, "tools", "workload"),
                    "--cdf", os.path.join(srcdir, "conf", "workloads", "websearch.cdf"),
                    "--load", "0.3", "--link-rate", "10Gbps", "--hosts-from-config", conf,
                    "--duration", "0.005", "--seed", "7", "--out", out],
                   check=True, stdout=subprocess.DEVNULL, timeout=120)
    os.makedirs(os.path.join(tmp, "capture"), exist_ok=True)


def check_accepts(binary, conf, cwd):
    """(accepted, output) of sluice --check on `conf`, run in `cwd`."""
    r = subprocess.run([binary, "--", "--config", conf, "--check"], cwd=cwd,
                       capture_output=True, text=True, timeout=60)
    return r.returncode == 0 and "config OK" in r.stdout, r.stdout + r.stderr


def extra_examples(srcdir, tmp):
    """(name, path) of the example configurations beyond conf/*.yaml, written
    into tmp: the valid file of test_config_errors, the same switch with a
    default route, and the complete configurations in docs/."""
    texts = [("config-errors-valid", test_config_errors.VALID),
             ("default-route", test_config_errors.VALID.replace(
                 "      - prefix: 10.0.1.0/24\n",
                 "      - prefix: 0.0.0.0/0\n        ports: [p1]\n"
                 "      - prefix: 10.0.1.0/24\n"))]
    check("0.0.0.0/0" in texts[1][1], "default-route example not built")
    docs = sorted(glob.glob(os.path.join(srcdir, "docs", "**", "*.md"), recursive=True))
    for md in docs:
        with open(md) as f:
            text = f.read()
        for i, m in enumerate(re.finditer(r"```yaml\n(.*?)```", text, re.S)):
            try:
                doc = yaml.safe_load(m.group(1))
            except yaml.YAMLError:
                continue
            if isinstance(doc, dict) and "switches" in doc:
                texts.append((f"doc-{os.path.basename(md).rsplit('.', 1)[0]}-{i}", m.group(1)))
    out = []
    for name, text in texts:
        path = os.path.join(tmp, name + ".yaml")
        with open(path, "w") as f:
            f.write(text)
        out.append((name, path))
    return out


def test(binary, srcdir):
    confs = sorted(glob.glob(os.path.join(srcdir, "conf", "*.yaml")))
    check(any(c.endswith("/default.yaml") for c in confs), "conf/default.yaml missing")
    with harness.TempDir("conf-examples") as tmp:
        # default.yaml names its pcaps relative to the repository root; give
        # it a root of its own with freshly generated ones.
        subprocess.run(["/usr/bin/python3", os.path.join(srcdir, "tools", "workload"),
                        "default-pcaps", "--out-dir", os.path.join(tmp, "conf", "pcap")],
                       check=True, stdout=subprocess.DEVNULL, timeout=120)
        for conf in confs:
            name = os.path.basename(conf).rsplit(".", 1)[0]
            if replays_workload(conf):
                make_workload(srcdir, conf, tmp)
            ok, out = check_accepts(binary, conf, tmp)
            check(ok, f"--check {conf} (in a directory with its captures):\n{out}")
            _, summary = harness.run_to_end(binary, tmp, conf, name, duration=1,
                                            lcores=lcores_for(conf))
            harness.check_identity(summary)
            if name == "default":
                check_default(summary)
            print(f"{name}: ok")
        started = 0
        for name, path in extra_examples(srcdir, tmp):
            ok, out = check_accepts(binary, path, tmp)
            if not ok:
                print(f"{name}: refused by --check, not started")
                continue
            _, summary = harness.run_to_end(binary, tmp, path, name, duration=0.5,
                                            lcores=lcores_for(path))
            harness.check_identity(summary)
            started += 1
            print(f"{name}: --check accepts it and it starts")
        check(started >= 3, f"only {started} extra example configurations started")


if __name__ == "__main__":
    harness.main(test)
