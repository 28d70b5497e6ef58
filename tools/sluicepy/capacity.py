"""The emulator's capacity on this machine: how many packets per second one
worker lcore moves across all the switch instances of a fabric, and the
offered load at which a fabric stops keeping time (docs/testbed.md,
"Capacity").

    tools/capacity --config conf/leafspine.yaml --cdf conf/workloads/websearch.cdf \\
        --loads 0.1,0.2,0.4,0.6 --duration 0.05 --out runs/capacity

For each load, tools/experiment runs the fabric under --scheme (drop-tail by
default; fidelity gate reported, not enforced) and the summary gives:
  - port transmissions: frames every port handed to its medium (host, link
    or capture), summed over all switch instances, per second of traffic;
  - busy seconds: the worker's time in loop iterations that moved a packet;
  - cost: busy seconds per transmission, and its inverse, the capacity the
    worker would reach if every iteration had work;
  - whether the run kept time (fidelity gate) and the machine's floor.
The capacity figure is the median of the implied capacities; the load ramp
shows where fidelity is lost on this machine as it is now.
"""

import argparse
import json
import os
import statistics
import sys

from . import cli, counters, fidelity, provenance, sluice

ROOT = sluice.ROOT
PY = "/usr/bin/python3"


def parse_args(argv):
    p = argparse.ArgumentParser(prog="tools/capacity", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    p.add_argument("--config", required=True)
    p.add_argument("--cdf", help="flow-size CDF (with --loads)")
    p.add_argument("--loads", default="0.1,0.2,0.4", help="comma-separated host-link loads")
    p.add_argument("--duration", default="0.05", help="workload seconds per run")
    p.add_argument("--seed", default="5")
    p.add_argument("--scheme", default="droptail", help="tools/experiment scheme (e.g. bfc)")
    p.add_argument("--workload", help="one workload directory instead of --cdf/--loads "
                                      "(e.g. tools/workload --matrix output)")
    p.add_argument("--out", required=True)
    p.add_argument("--sluice", default=sluice.BINARY)
    p.add_argument("extra", nargs=argparse.REMAINDER, help="after --: tools/workload options")
    a = p.parse_args(argv)
    if a.workload is None and a.cdf is None:
        p.error("need --cdf (with --loads) or --workload")
    if a.extra and a.extra[0] == "--":
        a.extra = a.extra[1:]
    return a


def figures(summary):
    tx = counters.total(summary, "tx_packets")
    busy = sum(w.get("busy_seconds", 0.0) for w in summary.get("workers", []))
    return tx, busy


def run_one(a, label, workload_args):
    out = os.path.join(os.path.abspath(a.out), label)
    cmd = [PY, os.path.join(ROOT, "tools", "experiment"), "--config", a.config,
           "--schemes", a.scheme, "--out", out, "--allow-unfaithful", "--floor-seconds", "1",
           "--clock", "real", "--sluice", a.sluice,
           "--drain", "0.2"] + workload_args
    cli.run_step(cmd, "tools/experiment", stdout=open(os.path.join(os.path.abspath(a.out),
                                                                   label + ".log"), "w"),
                 see=os.path.join(a.out, label + ".log"))
    summary = cli.load_json(os.path.join(out, a.scheme, "summary.json"), "summary")
    tx, busy = figures(summary)
    bad = fidelity.violations(summary, fidelity.Limits(
        round(fidelity.DEFAULT_MAX_LOST_MS * 1e6), round(fidelity.DEFAULT_MAX_LATENESS_US * 1e3)))
    floor = fidelity.recorded_floor(out)
    return {"label": label, "tx": tx, "busy_s": busy, "kept_time": not bad,
            "violations": len(bad), "floor": floor}


def main(argv):
    a = parse_args(argv)
    os.makedirs(a.out, exist_ok=True)
    runs = []
    if a.workload:
        runs.append(run_one(a, "workload", ["--workload", os.path.abspath(a.workload)]))
    else:
        for load in [x.strip() for x in a.loads.split(",") if x.strip()]:
            runs.append(run_one(a, "load_" + load,
                                ["--cdf", a.cdf, "--load", load, "--duration", a.duration,
                                 "--seed", a.seed] + (["--"] + a.extra if a.extra else [])))
    print(f"\n{'run':12} {'port tx':>10} {'busy s':>8} {'ns/tx':>7} {'implied Mtx/s':>14} "
          f"{'kept time':>10}  floor")
    implied = []
    for r in runs:
        cost = r["busy_s"] / r["tx"] if r["tx"] else float("nan")
        implied.append(1 / cost / 1e6 if r["tx"] and r["busy_s"] else float("nan"))
        print(f"{r['label']:12} {r['tx']:>10} {r['busy_s']:>8.4f} {cost * 1e9:>7.0f} "
              f"{implied[-1]:>14.2f} {('yes' if r['kept_time'] else 'no (%d)' % r['violations']):>10}"
              f"  {r['floor'] or '-'}")
    good = [x for x in implied if x == x]
    if good:
        print(f"\ncapacity: {statistics.median(good):.2f} million port transmissions per second "
              f"of one worker lcore (median over {len(good)} runs)")
    with open(os.path.join(a.out, "capacity.json"), "w") as f:
        json.dump({"runs": runs, "implied_mtx_per_s": implied,
                   "median_mtx_per_s": statistics.median(good) if good else None}, f, indent=2,
                  default=str)
    provenance.write(a.out, argv=sys.argv, seeds=[int(a.seed)], configs=[a.config],
                     inputs=[a.cdf], binaries=[a.sluice])
    return 0
