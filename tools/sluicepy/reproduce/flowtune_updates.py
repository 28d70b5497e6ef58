"""How much traffic Flowtune's control messages cost at load 0.8, beside the
paper's figure ("Flowtune: Flowlet Control for Datacenter Networks", §5,
result (E): traffic to and from the allocator is < 0.17 % of network
capacity for Facebook's Hadoop workload and 1.13 % for its Web workload,
whose flows are the smallest; docs/mechanisms/flowtune.md, "Update
traffic"). Only the Hadoop CDF is the paper's here: websearch is DCTCP's web
search, with large flows, not the paper's Web.

One edge switch with --hosts replay hosts at --rate (the allocator's
one-big-switch model), an open-loop workload from tools/workload per CDF at
--load. --clock exact (the default): exact fabric time with the allocator
inside the fabric (flowtune_allocator: --control-delay, an iteration every
--iteration, default the paper's 10 us). --clock real: sluice-allocator on
cpu 0 (sluice's main lcore; --iteration default 200us), fidelity-gated
beside the machine's floor. Counted on the wire (each datagram with its
UDP, IPv4 and Ethernet headers, FCS, preamble and gap: payload + 66 bytes):

  edge -> allocator   FLOWLET_START / FLOWLET_END datagrams (sluice summary;
                      in exact time the datagrams each instant's news fills)
  allocator -> edge   RATE_UPDATE datagrams (the allocator's summary),
                      of which lease re-sends (sluice's addition)

as a fraction of the hosts' link capacity over the workload's duration
(--hosts x --rate, one direction).

    tools/reproduce flowtune-updates --out runs/ft-updates
"""

import argparse
import json
import os

import yaml

from .. import allocator_proc, cli, fidelity, provenance, sluice, units

ROOT = sluice.ROOT
PROG = "reproduce flowtune-updates"


def parse_args(argv):
    p = argparse.ArgumentParser(prog="tools/" + PROG, description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    p.add_argument("--out", default=os.path.join(ROOT, "runs", "reproduce", "flowtune-updates"))
    p.add_argument("--cdfs", default="fb_hadoop,websearch",
                   help="conf/workloads/<name>.cdf, comma-separated")
    p.add_argument("--load", type=float, default=0.8)
    p.add_argument("--hosts", type=int, default=8)
    p.add_argument("--rate", default="1Gbps")
    p.add_argument("--duration", default="0.3", help="workload seconds")
    p.add_argument("--lease", default="10ms")
    p.add_argument("--iteration", default=None,
                   help="allocator's NED iteration period (default: 10us, the paper's, in exact "
                        "time; 200us in real time, where 10us makes sluice-allocator spin, see "
                        "docs/mechanisms/flowtune.md)")
    p.add_argument("--control-delay", default="8.5us",
                   help="exact time: one-way delay between the edge and the allocator (default "
                        "%(default)s, docs/configuration.md)")
    p.add_argument("--seed", default="1")
    p.add_argument("--sluice", default=sluice.BINARY)
    p.add_argument("--allocator", default=os.path.join(ROOT, "build", "allocator",
                                                       "sluice-allocator"),
                   help="sluice-allocator, for --clock real")
    p.add_argument("--eal", default="--no-huge -m 2048 --no-pci -l 0,1")
    fidelity.add_arguments(p)
    a = p.parse_args(argv)
    if a.iteration is None:
        a.iteration = "10us" if a.clock == "exact" else "200us"
    a.rate_bps = units.parse_rate(a.rate)
    return a


def config(a, alloc_port):
    """The edge's configuration: the allocator in the fabric (exact time) or
    sluice-allocator at alloc_port (real time)."""
    ports, routes = [], []
    for i in range(a.hosts):
        ports.append({"name": f"h{i}", "role": "host", "rate": a.rate,
                      "mac": f"02:00:00:00:00:{i:02x}", "peer_mac": f"02:00:00:00:01:{i:02x}",
                      "ipv4": f"10.0.{i}.1/24", "peer_ip": f"10.0.{i}.2",
                      "pcap": {"rx": f"workload/h{i}.pcap", "tx": f"capture/h{i}.pcap",
                               "snaplen": 128}})
        routes.append({"prefix": f"10.0.{i}.0/24", "ports": [f"h{i}"]})
    sw = {"name": "s1", "buffer": {"size": "8MB"}, "ports": ports, "routes": routes,
          "flowtune": {"lease": a.lease}}
    conf = {"clock": {"mode": a.clock}, "metrics": {"enabled": False}, "mbufs": 65536,
            "switches": [sw]}
    if a.clock == "exact":
        conf["flowtune_allocator"] = {"control_delay": a.control_delay, "iteration": a.iteration}
    elif alloc_port:
        sw["flowtune"]["allocator"] = f"127.0.0.1:{alloc_port}"
    return conf


def run_sluice(a, rdir, seconds):
    run = sluice.run(a.sluice, rdir, float("%.3f" % seconds), eal=a.eal,
                     prefix=sluice.new_prefix("ftupd"), timeout=seconds + 90)
    return run.summary


def run_one(a, cdf, rdir):
    os.makedirs(os.path.join(rdir, "capture"), exist_ok=True)
    conf_path = os.path.join(rdir, "sluice.yaml")
    with open(conf_path, "w") as f:
        yaml.safe_dump(config(a, 9750), f, sort_keys=False)
    cli.run_step(["/usr/bin/python3", os.path.join(ROOT, "tools", "workload"),
                  "--cdf", os.path.join(ROOT, "conf", "workloads", cdf + ".cdf"),
                  "--load", str(a.load), "--link-rate", a.rate, "--hosts-from-config", conf_path,
                  "--duration", a.duration, "--seed", a.seed,
                  "--out", os.path.join(rdir, "workload")], "tools/workload")
    seconds = units.parse_time(a.duration) + 1.0
    out = None
    if a.clock == "exact":
        summary = run_sluice(a, rdir, seconds)
    else:
        cmd = allocator_proc.command(a.allocator, a.rate, a.iteration, a.lease, "600s",
                                     prefix=allocator_proc.ON_CPU0)
        alloc, port = allocator_proc.start(cmd, os.path.join(rdir, "allocator.log"))
        try:
            with open(conf_path, "w") as f:
                yaml.safe_dump(config(a, port), f, sort_keys=False)
            summary = run_sluice(a, rdir, seconds)
        finally:
            out = allocator_proc.stop(alloc, os.path.join(rdir, "allocator.out"))
    ft = summary["switches"][0]["flowtune"]
    capacity_bits = a.hosts * a.rate_bps * units.parse_time(a.duration)
    if a.clock == "exact":
        fabric = summary["flowtune_allocator"]
        lost = fabric["news_lost"] + fabric["rates_lost"] + ft["events_lost"]
        if lost:
            raise cli.ToolError(f"{cdf}: {lost} control messages lost on the way (more in flight "
                                f"than the control path holds); see {rdir}/summary.json")
        traffic = allocator_proc.fabric_update_traffic(ft, fabric, capacity_bits)
    else:
        traffic = allocator_proc.update_traffic(ft, out, capacity_bits)
    return summary, out, {
        "cdf": cdf, "load": a.load, "hosts": a.hosts, "rate": a.rate, "clock": a.clock,
        "iteration": a.iteration, "flowlets": ft["flowlets_started"],
        "starts_sent": ft["starts_sent"], "ends_sent": ft["ends_sent"],
        "edge_datagrams": ft["datagrams_sent"], **traffic,
        "paper_pct": allocator_proc.PAPER_UPDATE_PCT.get(cdf),
    }


def main(argv):
    a = parse_args(argv)
    out = os.path.abspath(a.out)
    os.makedirs(out, exist_ok=True)
    gate = fidelity.Gate(PROG, a, fidelity.floor_step(a, a.eal.split(), out, PROG))
    rows = []
    for cdf in a.cdfs.split(","):
        summary, allocator_out, row = run_one(a, cdf, os.path.join(out, cdf))
        gate.check(cdf, summary, allocator_out)
        rows.append(row)
        print(f"{PROG}: {cdf}: edge->allocator {row['edge_to_allocator_pct']:.3f} %, "
              f"allocator->edge {row['allocator_to_edge_pct']:.3f} % "
              f"({row['lease_resends']} of {row['rate_updates']} updates are lease re-sends), "
              f"total {row['total_pct']:.3f} % of capacity; paper "
              f"{'(no such workload)' if row['paper_pct'] is None else str(row['paper_pct']) + ' %'}",
              flush=True)
    lines = [f"# Flowtune update traffic at load {a.load} ({a.hosts} hosts at {a.rate}, "
             f"{a.duration} s, {a.clock} time, an iteration every {a.iteration})", ""]
    if gate.note:
        lines += [f"**{gate.note}**", ""]
    lines += ["| workload | flowlets | edge → allocator | allocator → edge (no lease re-sends) | "
              "total | paper |", "|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['cdf']} | {r['flowlets']} | {r['edge_to_allocator_pct']:.3f} % | "
                     f"{r['allocator_to_edge_pct']:.3f} % "
                     f"({r['allocator_to_edge_without_resends_pct']:.3f} %) | "
                     f"{r['total_pct']:.3f} % | "
                     f"{'—' if r['paper_pct'] is None else str(r['paper_pct']) + ' %'} |")
    if gate.floor_line:
        lines += ["", f"floor: {gate.floor_line}"]
    with open(os.path.join(out, "results.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump({"gate": gate.record(), "rows": rows}, f, indent=2)
    provenance.write(out, seeds=[int(a.seed)],
                     inputs=[os.path.join(ROOT, "conf", "workloads", c + ".cdf")
                             for c in a.cdfs.split(",")],
                     binaries=[a.sluice] + ([a.allocator] if a.clock == "real" else []))
    return gate.verdict()
