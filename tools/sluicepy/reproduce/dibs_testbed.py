"""DIBS section 5.2 (Fig. 6) in exact fabric time: the Click testbed, two
aggregation and three edge switches, two servers per edge, 1 Gb/s,
100-packet port buffers (conf/fabrics/dibs-testbed-1g.yaml); the first five
servers each send ten simultaneous 32 KB responses to the last, one query
every --period, --queries times; TCP with a 10 ms minimum RTO, initial
window 10, fast retransmit off (Table 1), no ECN (the testbed's Click
switches mark nothing). Schemes: unlimited buffers, drop-tail, DIBS.

    tools/reproduce dibs-testbed [--queries 50] [--seeds 1,2,3] [--jitter 10us]
                                 [--fast-retransmit off|on] [--out runs/reproduce/dibs-testbed]

Every query's completion time is counted (none is dropped from a
percentile): min, p50, p90, p99 and max, beside the paper's (unlimited <=
25 ms, DIBS <= 27 ms, drop-tail 26-51 ms), and each response's completion
time (the paper's Fig. 6b: about 9 % of drop-tail's responses took 25-50
ms, a 10 ms timeout); with several seeds, each figure's mean and min-max
over them. Writes results.json, qct_cdf.png and provenance.json.

Each response starts --jitter (uniform, seeded) after its query: the
testbed's servers answered after their own scheduling delays, and with
none every query of a deterministic fabric would repeat the first (sluice's
reading; the paper does not say how simultaneous "simultaneous" was).
docs/mechanisms/dibs.md, "The Click testbed".
"""

import argparse
import csv
import json
import os
import random
import shutil

import yaml

from .. import cli, counters, experiment as exp, provenance, sluice, spread, workload_gen
from ..fct_analysis import nearest_rank as percentile
from ..hosts import hosts_from_config
from ..units import format_ns, parse_time, seconds_to_ns

ROOT = sluice.ROOT
FABRIC = os.path.join(ROOT, "conf", "fabrics", "dibs-testbed-1g.yaml")
SCHEMES = ("unlimited", "droptail", "dibs")


DIBS_PAPER = {"unlimited": "<= 25", "droptail": "26-51", "dibs": "<= 27"}


def dibs_flows(path, hosts, queries, period_ns, jitter_ns, seed, size=32_000, per_server=10):
    """The flow list: per query, ten responses from each of the first five
    servers to the last; returns {query: [flow ids]} and query start times."""
    rng = random.Random(seed)
    target = hosts[-1]
    queries_of, starts = {}, {}
    fid = 1
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(workload_gen.FLOW_FIELDS)
        for q in range(queries):
            t0 = 1_000 + q * period_ns
            starts[q] = t0
            for name, ip in hosts[:5]:
                for _ in range(per_server):
                    t = t0 + rng.randrange(jitter_ns + 1)
                    w.writerow([fid, name, target[0], ip, target[1], size, 0, format_ns(t),
                                format_ns(t), format_ns(t), 1])
                    queries_of.setdefault(q, []).append(fid)
                    fid += 1
    return queries_of, starts


def unlimited(conf):
    """Every port's queue and every switch's buffer as large as sluice
    allows: nothing is ever refused."""
    for sw in conf["switches"]:
        sw["buffer"] = {"size": "1GB", "alpha": 1000.0}
        sw["queue_capacity"] = 1 << 20
    conf["mbufs"] = max(int(conf.get("mbufs", 32768)), 65536)
    return conf


def run(a):
    fabric_path = FABRIC
    with open(fabric_path) as f:
        fabric = yaml.safe_load(f)
    hosts = [(h.name, h.ip) for h in hosts_from_config(fabric_path)]
    period_ns = seconds_to_ns(parse_time(a.period))
    jitter_ns = seconds_to_ns(parse_time(a.jitter))
    rows, per_query = [], {}
    sluice.expect_runs(len(a.seeds) * len(SCHEMES))
    for seed in a.seeds:
        for scheme in SCHEMES:
            d = os.path.join(a.out, f"seed{seed}", scheme)
            shutil.rmtree(d, ignore_errors=True)
            os.makedirs(d)
            queries_of, starts = dibs_flows(os.path.join(d, "flows.csv"), hosts, a.queries,
                                            period_ns, jitter_ns, seed)
            base = "droptail" if scheme == "unlimited" else scheme
            args = exp.parse_args(["--config", "x", "--schemes", base, "--workload", "w",
                                   "--out", "o", "--clock", "exact", "--seed", str(seed),
                                   "--transport", "tcp",
                                   "--transport-param", "tcp.min_rto=10ms",
                                   "--transport-param", "tcp.init_cwnd=10",
                                   "--transport-param", f"tcp.fast_retransmit={a.fast_retransmit == 'on'}",
                                   "--transport-param", "tcp.ecn=false",
                                   "--base-rtt", "50us"])
            conf = exp.apply_scheme(fabric, base, args)
            conf["transport"]["flows"] = "flows.csv"
            for sw in conf["switches"]:  # no captures: the completions say it all
                for port in sw["ports"]:
                    if port.get("role") == "host":
                        port["pcap"] = {}
            if scheme == "unlimited":
                conf = unlimited(conf)
            with open(os.path.join(d, "sluice.yaml"), "w") as f:
                yaml.safe_dump(conf, f, sort_keys=False)
            seconds = sluice.REPLAY_LEAD_S + (a.queries + 1) * period_ns / 1e9
            run = sluice.run(a.sluice, d, seconds, prefix=f"reproduce-{os.getpid()}-{scheme}")
            summary, wall, rss = run.summary, run.wall_s, run.rss_mb
            with open(os.path.join(d, "completions.csv"), newline="") as f:
                done = {int(r["flow_id"]): r for r in csv.DictReader(f)}
            qct, responses, unfinished = [], [], 0
            for q, ids in queries_of.items():
                ends = []
                for i in ids:
                    r = done[i]
                    if r["finished"] != "1":
                        unfinished += 1
                        ends.append(None)
                        continue
                    ends.append(int(round(float(r["finish_time"]) * 1e9)))
                    responses.append(float(r["fct_seconds"]) * 1e3)
                if None in ends:
                    qct.append(float("inf"))
                else:
                    qct.append((max(ends) - starts[q]) / 1e6)
            drops = counters.total_drops(summary)
            detours = sum(p.get("dibs_detours", 0) for sw in summary["switches"]
                          for p in sw["ports"])
            t = summary.get("transport", {})
            row = {"seed": seed, "scheme": scheme, "queries": len(qct),
                   "min": min(qct), "p50": percentile(qct, 50), "p90": percentile(qct, 90),
                   "p99": percentile(qct, 99), "max": max(qct), "unfinished_flows": unfinished,
                   "drops": drops, "detours": detours, "timeouts": t.get("timeouts", 0),
                   "slow_responses_pct": 100.0 * sum(1 for x in responses if x >= 25.0) /
                                         max(1, len(responses)),
                   "wall_s": wall, "rss_mb": rss,
                   "fabric_s": summary.get("clock", {}).get("fabric_seconds")}
            rows.append(row)
            per_query[(seed, scheme)] = qct
            print(f"reproduce: seed {seed} {scheme}: QCT p50 {row['p50']:.2f} p99 "
                  f"{row['p99']:.2f} max {row['max']:.2f} ms; {drops} drops, {detours} detours, "
                  f"{row['timeouts']} RTOs; wall {wall:.1f} s", flush=True)
    write_dibs_results(a, rows, per_query)


def write_dibs_results(a, rows, per_query):
    print()
    print("| seed | scheme | queries | min | p50 | p90 | p99 | max | paper | responses >= 25 ms "
          "| unfinished flows | drops | detours | RTOs | wall s | peak RSS MB |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['seed']} | {r['scheme']} | {r['queries']} | {r['min']:.2f} | {r['p50']:.2f} | "
              f"{r['p90']:.2f} | {r['p99']:.2f} | {r['max']:.2f} | {DIBS_PAPER[r['scheme']]} | "
              f"{r['slow_responses_pct']:.1f} % | {r['unfinished_flows']} | {r['drops']} | "
              f"{r['detours']} | {r['timeouts']} | {r['wall_s']:.1f} | {r['rss_mb']:.0f} |")
    print("(QCT in ms: every query counted; a query with an unfinished response is inf)")
    seeds = sorted({r["seed"] for r in rows})
    if len(seeds) > 1:
        print()
        print(f"Mean over seeds {','.join(map(str, seeds))} (min-max)")
        print("| scheme | p50 | p90 | p99 | max | paper | responses >= 25 ms | drops | detours "
              "| RTOs |")
        print("|---|---:|---:|---:|---:|---|---:|---:|---:|---:|")
        for scheme in SCHEMES:
            rs = [r for r in rows if r["scheme"] == scheme]
            if not rs:
                continue
            cell = lambda k, fmt="%.3g": spread.text([r[k] for r in rs], fmt)  # noqa: E731
            print(f"| {scheme} | {cell('p50')} | {cell('p90')} | {cell('p99')} | {cell('max')} | "
                  f"{DIBS_PAPER[scheme]} | {cell('slow_responses_pct', '%.1f')} % | "
                  f"{cell('drops', '%.0f')} | {cell('detours', '%.0f')} | "
                  f"{cell('timeouts', '%.0f')} |")
    with open(os.path.join(a.out, "results.json"), "w") as f:
        json.dump({"rows": rows, "args": vars(a),
                   "qct_ms": {f"seed{k[0]}/{k[1]}": v for k, v in per_query.items()}},
                  f, indent=2, default=str)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise cli.ToolError("Python module 'matplotlib' is missing "
                            "(Debian: apt-get install python3-matplotlib)")
    fig, ax = plt.subplots(figsize=(6, 3.6))
    for scheme, style in (("unlimited", "-"), ("droptail", "--"), ("dibs", ":")):
        v = sorted(x for seed in a.seeds for x in per_query[(seed, scheme)])
        ax.plot(v, [(i + 1) / len(v) for i in range(len(v))], style, label=scheme)
    ax.axvspan(26, 51, color="0.9", label="paper: drop-tail 26-51 ms")
    ax.set_xlabel("query completion time (ms)")
    ax.set_ylabel("CDF of queries")
    ax.set_title("DIBS testbed in exact time (%d queries, seeds %s)"
                 % (sum(len(per_query[(s, 'dibs')]) for s in a.seeds),
                    ",".join(map(str, a.seeds))))
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(a.out, "qct_cdf.png"), dpi=110)
    print(f"reproduce: wrote {a.out}/results.json and qct_cdf.png")


def main(argv):
    p = argparse.ArgumentParser(prog="tools/reproduce dibs-testbed",
                                description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    p.add_argument("--queries", type=int, default=50, help="queries per run (the paper's 50)")
    p.add_argument("--period", default="100ms", help="time between queries (100ms)")
    p.add_argument("--jitter", default="10us",
                   help="each response starts up to this long after its query (10us)")
    p.add_argument("--fast-retransmit", choices=("off", "on"), default="off",
                   help="TCP fast retransmit (off: Table 1)")
    p.add_argument("--seeds", default="1", help="comma-separated seeds (1)")
    p.add_argument("--out", default=os.path.join(ROOT, "runs", "reproduce", "dibs-testbed"))
    p.add_argument("--sluice", default=sluice.BINARY)
    a = p.parse_args(argv)
    try:
        a.seeds = [int(s) for s in a.seeds.split(",") if s.strip()]
    except ValueError:
        p.error("--seeds: expected comma-separated integers")
    a.sluice = os.path.abspath(a.sluice)
    a.out = os.path.abspath(a.out)
    os.makedirs(a.out, exist_ok=True)
    run(a)
    provenance.write(a.out, seeds=a.seeds, configs=[FABRIC], binaries=[a.sluice])
    return 0
