"""The one-server fabric's speed in exact fabric time (docs/benchmarks.md,
"The emulator"): for named scenarios, a workload runs through a fabric
under each scheme, and the tool prints port transmissions per wall second
of the one worker lcore, wall seconds per fabric second, the CPU seconds of
the sluice process (from its wait4), and the run's peak memory (resident
set of the process, and the most mbufs in use at once).

    tools/bench emulator [--scenarios leafspine-10g,...] [--schemes droptail,bfc]
                         [--transports none,dctcp,...] [--repeat 3]
                         [--out runs/bench/emulator]

A port transmission is any frame a port hands to its link or capture (the
summary's tx packets, summed over ports); the rate is transmissions over
the worker loop's own wall time (start-up and the summary left out).
Figures are the median of --repeat runs; each run's exact figures (fabric
time, transmissions, elements handled) repeat byte for byte, only the wall
time moves. Scenarios:

  leafspine-10g   conf/leafspine.yaml: 2 spines, 2 leaves, 8 hosts, 10 Gb/s,
                  web search at load 0.6 for 200 ms, 4-to-1 incasts.
  leafspine-10g-0.3  the same fabric at load 0.3 for 50 ms, no incast:
                  tools/capacity's setting (docs/testbed.md, "Capacity"),
                  whose real-time busy capacity was 2.1-2.6 M/s.
  leafspine-10g-idle  the same fabric at load 0.05 for 500 ms: how little
                  idle fabric time costs.
  bfc-leafspine   conf/fabrics/bfc-leafspine.yaml: the BFC paper's 128 hosts,
                  8 leaves, 8 spines at 100 Gb/s, web search at load 0.5 for
                  --fabric-ms (default 2 ms).
  floodgate-10tor the Floodgate authors' 160-host leaf-spine (10 ToRs, 4
                  cores, 100/400 Gb/s), the same workload.
  dibs-fattree    DIBS's k = 8 fat-tree (128 hosts, 80 switches, 1 Gb/s),
                  the same workload.

--transports runs the hosts' transports (tools/experiment --transport) on
the workload's flow list besides (none) its open-loop replay; each row then
also gives its ns per transmission as a ratio to the same scenario and
scheme's replay (none) row of this invocation.

--memory huge runs on 2 MB hugepages reserved for each run and given back
(root), instead of --no-huge's 4 KiB pages (what tools/experiment uses). A
benchmark, not a test: nothing is asserted but that the runs worked and
repeated (the same transmissions and elements each time). OUT gets
emubench.json (every row), table.md and provenance.json.
"""

import argparse
import contextlib
import json
import os
import shutil
import statistics
import time

import yaml

from .. import cli, counters, eal_memory, experiment as exp, hugepages, provenance, sluice

ROOT = sluice.ROOT
PY = "/usr/bin/python3"

SCENARIOS = {
    "leafspine-10g": dict(config="conf/leafspine.yaml", rate="10Gbps", load=0.6, seconds=0.2,
                          drain=0.05,
                          extra=["--incast-degree", "4", "--incast-receiver", "h2",
                                 "--incast-size", "512KB", "--incast-period", "0.01"]),
    "leafspine-10g-0.3": dict(config="conf/leafspine.yaml", rate="10Gbps", load=0.3,
                              seconds=0.05, drain=0.05, extra=[]),
    "leafspine-10g-idle": dict(config="conf/leafspine.yaml", rate="10Gbps", load=0.05,
                               seconds=0.5, drain=0.05, extra=[]),
    "bfc-leafspine": dict(config="conf/fabrics/bfc-leafspine.yaml", rate="100Gbps", load=0.5,
                          seconds=None, drain=0.002, extra=[]),
    "floodgate-10tor": dict(config="conf/fabrics/floodgate-10tor-4core.yaml", rate="100Gbps",
                            load=0.5, seconds=None, drain=0.002, extra=[]),
    "dibs-fattree": dict(config="conf/fabrics/dibs-fattree-k8.yaml", rate="1Gbps", load=0.5,
                         seconds=None, drain=0.02, extra=[]),
}


def scheme_args(scheme, transport="none"):
    return exp.parse_args(["--config", "x", "--schemes", scheme, "--workload", "w", "--out", "o",
                           "--clock", "exact", "--transport", transport])


def workload(out, name, sc, seconds, seed):
    # Kept for the next invocation, under a name that says what it is.
    d = os.path.join(out, name, "workload-%gs-seed%s" % (seconds, seed))
    if os.path.exists(os.path.join(d, "flows.csv")):
        return d
    shutil.rmtree(d, ignore_errors=True)
    cli.run_step([PY, os.path.join(ROOT, "tools", "workload"), "--cdf",
                  os.path.join(ROOT, "conf", "workloads", "websearch.cdf"), "--load",
                  str(sc["load"]), "--link-rate", sc["rate"], "--hosts-from-config",
                  os.path.join(ROOT, sc["config"]), "--duration", str(seconds), "--seed",
                  str(seed), "--snaplen", "128", "--out", d] + sc["extra"], "tools/workload")
    return d


def run_once(args, name, sc, scheme, wl, seconds, transport="none"):
    d = os.path.join(args.out, name, scheme if transport == "none" else scheme + "-" + transport)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(os.path.join(d, "capture"))
    os.symlink(wl, os.path.join(d, "workload"))
    with open(os.path.join(ROOT, sc["config"])) as f:
        conf = yaml.safe_load(f)
    conf = exp.apply_scheme(conf, scheme, scheme_args(scheme, transport))
    with open(os.path.join(d, "sluice.yaml"), "w") as f:
        yaml.safe_dump(conf, f, sort_keys=False)
    duration = sluice.REPLAY_LEAD_S + seconds + sc["drain"]
    mem = eal_memory.needed_mib(args.sluice, "sluice.yaml", d)
    eal = (["--in-memory", "--no-pci", "-l", "0,1"] if args.memory == "huge"
           else ["--no-huge", "-m", str(mem), "--no-pci", "-l", "0,1"])
    with contextlib.ExitStack() as stack:
        if args.memory == "huge":
            stack.enter_context(hugepages.reserved(mem))
        run = sluice.run(args.sluice, d, duration, eal=eal, memory=False,
                         prefix="emubench-%d" % os.getpid(), echo=False)
    s = run.summary
    clock = s["clock"]
    pool = next((p for p in s.get("mbuf_pools", []) if "peak_in_use" in p), {})
    ports = sum(len(sw["ports"]) for sw in s["switches"])
    return {"transmissions": clock["transmissions"], "fabric_s": clock["fabric_seconds"],
            "wall_s": clock["wall_seconds"], "events": clock["events"],
            "cpu_s": run.cpu_s, "rss_mb": run.rss_mb, "mbufs_peak": pool.get("peak_in_use"),
            "mbufs": pool.get("size"), "ports": ports, "switches": len(s["switches"]),
            "drops": counters.total_drops(s)}


def main(argv):
    p = argparse.ArgumentParser(prog="tools/bench emulator",
                                description=" ".join(__doc__.split("\n\n")[0].split()),
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--scenarios", default="leafspine-10g,leafspine-10g-idle",
                   help="comma-separated, from: " + ", ".join(SCENARIOS))
    p.add_argument("--schemes", default="droptail", help="tools/experiment schemes")
    p.add_argument("--transports", default="none",
                   help="what the hosts run: none (replay) and/or transports of tools/experiment")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--fabric-ms", type=float, default=2.0,
                   help="traffic per run of the 100-host scenarios, in fabric ms")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--memory", choices=("nohuge", "huge"), default="nohuge",
                   help="DPDK memory: --no-huge with -m (as tools/experiment runs), or 2 MB "
                        "hugepages reserved for each run and given back (root)")
    p.add_argument("--out", default=os.path.join(ROOT, "runs", "bench", "emulator"))
    p.add_argument("--sluice", default=sluice.BINARY)
    a = p.parse_args(argv)
    names = [n.strip() for n in a.scenarios.split(",") if n.strip()]
    for n in names:
        if n not in SCENARIOS:
            p.error("unknown scenario %r; known: %s" % (n, ", ".join(SCENARIOS)))
    schemes = [s.strip() for s in a.schemes.split(",") if s.strip()]
    for s in schemes:
        if s not in exp.SCHEMES:
            p.error("unknown scheme %r; known: %s" % (s, ", ".join(exp.SCHEMES)))
    transports = [t.strip() for t in a.transports.split(",") if t.strip()]
    for t in transports:
        if t not in exp.TRANSPORTS:
            p.error("unknown transport %r; known: %s" % (t, ", ".join(exp.TRANSPORTS)))
    # Absolute: each run directory links to its workload.
    a.out = os.path.abspath(a.out)
    rows = []
    for name in names:
        sc = SCENARIOS[name]
        seconds = sc["seconds"] or a.fabric_ms / 1000.0
        wl = workload(a.out, name, sc, seconds, a.seed)
        for scheme, transport in [(s, t) for s in schemes for t in transports]:
            runs = [run_once(a, name, sc, scheme, wl, seconds, transport)
                    for _ in range(a.repeat)]
            first = runs[0]
            for r in runs[1:]:
                if (r["transmissions"], r["events"]) != (first["transmissions"], first["events"]):
                    raise cli.ToolError("%s %s: runs differ: %s" % (name, scheme, runs))
            wall = statistics.median(r["wall_s"] for r in runs)
            row = dict(first, scenario=name, scheme=scheme, transport=transport, wall_s=wall,
                       memory=a.memory,
                       walls=[round(r["wall_s"], 3) for r in runs],
                       cpu_s=statistics.median(r["cpu_s"] for r in runs),
                       rss_mb=max(r["rss_mb"] for r in runs))
            row["mtx_per_s"] = row["transmissions"] / wall / 1e6 if wall else 0.0
            row["wall_per_fabric"] = wall / row["fabric_s"] if row["fabric_s"] else 0.0
            rows.append(row)
            print("bench emulator: %s %s %s: %d transmissions in %.3f s of fabric time, wall %s s"
                  % (name, scheme, transport, row["transmissions"], row["fabric_s"],
                     row["walls"]), flush=True)
    print()

    def ns_per_tx(r):
        return r["wall_s"] / r["transmissions"] * 1e9 if r["transmissions"] else 0.0

    def ratio(r):
        base = next((b for b in rows if b["scenario"] == r["scenario"] and
                     b["scheme"] == r["scheme"] and b["transport"] == "none"), None)
        if base is None or not ns_per_tx(base):
            return "-"
        return "%.2f" % (ns_per_tx(r) / ns_per_tx(base))

    lines = ["| scenario | scheme | transport | memory | switches / ports | transmissions | "
             "fabric s | wall s (median) | CPU s (median) | M transmissions / wall s | "
             "wall s per fabric s | ns per transmission | vs replay | elements per transmission "
             "| drops | peak RSS MB | mbufs peak / pool |",
             "|---|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(
            "| %s | %s | %s | %s | %d / %d | %d | %.4f | %.3f | %.3f | %.2f | %.2f | %.0f | %s | "
            "%.2f | %d | %.0f | %s / %s |"
            % (r["scenario"], r["scheme"], r["transport"], r["memory"], r["switches"], r["ports"],
               r["transmissions"], r["fabric_s"], r["wall_s"], r["cpu_s"], r["mtx_per_s"],
               r["wall_per_fabric"], ns_per_tx(r), ratio(r),
               r["events"] / r["transmissions"] if r["transmissions"] else 0, r["drops"],
               r["rss_mb"], r["mbufs_peak"], r["mbufs"]))
    print("\n".join(lines))
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "table.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(os.path.join(a.out, "emubench.json"), "w") as f:
        json.dump({"time": time.strftime("%Y-%m-%d %H:%M:%S"), "rows": rows}, f, indent=2)
    provenance.write(a.out, seeds=[a.seed],
                     configs=[os.path.join(ROOT, SCENARIOS[n]["config"]) for n in names],
                     binaries=[a.sluice])
    return 0
