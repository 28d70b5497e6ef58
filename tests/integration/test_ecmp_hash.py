#!/usr/bin/python3
"""ECMP hashing (docs/configuration.md, "ecmp_hash"), in exact fabric time,
on a leaf-spine of 2 leaves and 4 spines (tools/fabric) with one TCP flow
from leaf0's host to leaf1's:

- `ecmp_hash: symmetric`: the ACKs come back through the spine the data
  went up through, for every seed tried (each seed salts the hash anew);
- the default, `per-switch`: for at least one of the same seeds they do not
  (each leaf hashes with its own salt), so the check above can fail.

Which spine carried what is read from the spines' transmitted frames: data
goes out of a spine's port to leaf1 (d1), ACKs out of its port to leaf0 (d0).
"""

import os
import subprocess

import yaml

import harness
from harness import check

SEEDS = (1, 2, 3, 4)
FLOWS = ("flow_id,src,dst,src_ip,dst_ip,size,packets,arrival_time,start_time,end_time,is_incast\n"
         "1,h0,h1,10.0.0.2,10.1.0.2,30000,0,0.000001000,0,0,0\n")


def fabric(srcdir, tmp):
    path = os.path.join(tmp, "fabric.yaml")
    subprocess.run(["/usr/bin/python3", os.path.join(srcdir, "tools", "fabric"), "leafspine",
                    "--leaves", "2", "--hosts-per-leaf", "1", "--spines", "4", "--rate", "10Gbps",
                    "--delay", "1us", "-o", path], check=True, stdout=subprocess.DEVNULL)
    with open(path) as f:
        return yaml.safe_load(f)


def spines_used(binary, tmp, doc, hashing, seed):
    """(spines that sent data to leaf1, spines that sent ACKs to leaf0)."""
    name = f"{hashing}_{seed}"
    conf = dict(doc, seed=seed, ecmp_hash=hashing)
    with open(os.path.join(tmp, "flows.csv"), "w") as f:
        f.write(FLOWS)
    conf["transport"] = {"kind": "tcp", "base_rtt": "10us", "flows": "flows.csv",
                         "completions": f"{name}.completions.csv"}
    path = os.path.join(tmp, f"{name}.yaml")
    with open(path, "w") as f:
        yaml.safe_dump(conf, f, sort_keys=False)
    _, summary = harness.run_to_end(binary, tmp, path, name, 0.055)
    with open(os.path.join(tmp, f"{name}.completions.csv")) as f:
        rows = f.read().splitlines()[1:]
    check(len(rows) == 1 and rows[0].split(",")[10] == "1", f"{name}: the flow did not finish")
    sent = lambda sw, port: harness.find_port(summary, sw, port)["tx_packets"]
    data = {s for s in range(4) if sent(f"spine{s}", "d1") > 0}
    acks = {s for s in range(4) if sent(f"spine{s}", "d0") > 0}
    print(f"{name}: data through spine(s) {sorted(data)}, ACKs through {sorted(acks)}")
    check(len(data) == 1 and len(acks) == 1, f"{name}: one flow took several spines")
    return data, acks


def test(binary, srcdir):
    with harness.TempDir("ecmp_hash") as tmp:
        doc = fabric(srcdir, tmp)
        for port in (p for sw in doc["switches"] for p in sw["ports"] if p.get("role") == "host"):
            port["pcap"] = {}  # transport hosts: nothing to replay or capture
        apart = 0
        for seed in SEEDS:
            data, acks = spines_used(binary, tmp, doc, "symmetric", seed)
            check(data == acks, f"symmetric, seed {seed}: data via {data}, ACKs via {acks}")
            data, acks = spines_used(binary, tmp, doc, "per-switch", seed)
            apart += data != acks
        check(apart > 0, f"per-switch: the ACKs retraced the data's spine for every seed {SEEDS}")


if __name__ == "__main__":
    harness.main(test)
