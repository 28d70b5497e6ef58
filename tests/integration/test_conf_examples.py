#!/usr/bin/python3
"""The bundled configurations run as they are. Each conf/*.yaml is run for two
seconds (metrics on a free port) and must exit 0 with a summary whose counters
add up. Experiment configurations (capture ports replaying workload/*.pcap,
such as conf/leafspine.yaml) get a short tools/workload workload first, as
tools/experiment would give them. conf/default.yaml, the one tools/run uses, replays the pcaps written by
tools/gen-default-pcap: both ports must forward, answer ARP, and count the
malformed frames those pcaps hold (bad checksum, TTL 1, IPv6, unknown
ethertype) under their reasons."""

import glob
import os
import subprocess

import yaml

import harness
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


def test(binary, srcdir):
    confs = sorted(glob.glob(os.path.join(srcdir, "conf", "*.yaml")))
    check(any(c.endswith("/default.yaml") for c in confs), "conf/default.yaml missing")
    with harness.TempDir("conf-examples") as tmp:
        # default.yaml names its pcaps relative to the repository root; give
        # it a root of its own with freshly generated ones.
        subprocess.run(["/usr/bin/python3", os.path.join(srcdir, "tools", "gen-default-pcap"),
                        "--out-dir", os.path.join(tmp, "conf", "pcap")],
                       check=True, stdout=subprocess.DEVNULL, timeout=120)
        for conf in confs:
            name = os.path.basename(conf).rsplit(".", 1)[0]
            if replays_workload(conf):
                make_workload(srcdir, conf, tmp)
            _, summary = harness.run_to_end(binary, tmp, conf, name, duration=2,
                                            lcores=lcores_for(conf))
            harness.check_identity(summary)
            if name == "default":
                check_default(summary)
            print(f"{name}: ok")


if __name__ == "__main__":
    harness.main(test)
