"""Flowtune's convergence on one edge switch, the shape of the paper's
experiment ("Flowtune: Flowlet Control for Datacenter Networks", §5.3, result
(D): a fair allocation within 100 µs): five senders to one receiver, a new
flow every --step, then one leaving every --step (docs/mechanisms/flowtune.md,
"Convergence").

    h0..h4 --(rate)--> s1 --(rate)--> h5

Each sender hi replays one UDP flow at its full link rate from i x step
until (9 - i) x step: 1, 2, 3, 4, 5 flows, then 4, 3, 2, 1. The same
captures run twice: `flowtune` (the edge paces each flow at the rate the
allocator gives it) and `baseline` (no Flowtune: the receiver's port queue
sorts it out). These replay hosts are open loop: they never slow down, so
the excess of a paced flow is dropped at the edge (pacer_full), where
without Flowtune it fills and overflows the receiver's port queue.

--clock exact (the default): exact fabric time with the allocator inside
the fabric (flowtune_allocator: --control-delay one way, an iteration every
--iteration, default the paper's 10 us); every run repeats byte for byte
and nothing depends on the machine. --clock real: sluice-allocator as its
own process on cpu 0 at nice -10 (--iteration default 200us) and the
machine's clock, judged by the fidelity gate beside the machine's floor,
as a bare-metal testbed would run.

Reported per run, from the receiver's capture: each flow's throughput per
--resolution bin, and per event (a flow starting or leaving) how long until
every active flow's throughput, averaged over --bin, is within --tolerance
of its fair share C(1 - 0.01)/N and stays there for 5 x --bin
(`converged_ms`: the end of the first such window after the event, the
paper's convention; `fair_from_us`: its start); for a departure, also when
the leaving flow's last frame arrived (`last_frame_us`: the frames its
pacer still held). Drops by where they happen, and the fidelity figures.
OUT gets throughput_<run>.csv, convergence.png, results.json, results.md and
provenance.json.

    tools/reproduce flowtune-edge --out runs/ft-conv
    tools/reproduce flowtune-edge --out runs/ft-conv-10g --rate 10Gbps --step 2ms \\
        --bin 100us --resolution 10us --runs flowtune
"""

import argparse
import json
import os

import yaml

from .. import allocator_proc, counters, fidelity, provenance, sluice, units
from ..payload import HEADERS_LEN, FrameBuilder, parse_frame
from ..pcapio import PcapWriter, read_pcap

ROOT = sluice.ROOT
PROG = "reproduce flowtune-edge"
SENDERS = 5
FRAME_APP = 1448  # UDP payload: 1514-byte frames
OVERHEAD = 24     # the port's wire_overhead_bytes: preamble, IFG, FCS
THRESHOLD = 0.01  # sluice-allocator's default headroom
BIN_NS = 1_000_000  # the default averaging window (--bin)
STABLE_BINS = 5     # windows a converged allocation must hold for


def parse_args(argv):
    p = argparse.ArgumentParser(prog="tools/" + PROG, description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    p.add_argument("--out", default=os.path.join(ROOT, "runs", "reproduce", "flowtune-edge"))
    p.add_argument("--rate", default="1Gbps", help="every link's rate (default %(default)s)")
    p.add_argument("--step", default="20ms", help="time between flow events (default %(default)s)")
    p.add_argument("--tolerance", type=float, default=0.1,
                   help="converged: every flow within this fraction of its share")
    p.add_argument("--bin", default="1ms",
                   help="throughput is averaged over this long (default %(default)s)")
    p.add_argument("--resolution", default=None,
                   help="the averaging window slides by this much, which is the resolution of "
                        "the convergence times (default: --bin)")
    p.add_argument("--lease", default="10ms", help="rate lease, edge and allocator")
    p.add_argument("--iteration", default=None,
                   help="allocator's NED iteration period (default: 10us, the paper's, in exact "
                        "time; 200us in real time, where 10us makes sluice-allocator spin, see "
                        "docs/mechanisms/flowtune.md)")
    p.add_argument("--control-delay", default="8.5us",
                   help="exact time: one-way delay between an edge and the allocator (default "
                        "%(default)s: the paper's server-to-allocator path, "
                        "docs/configuration.md)")
    p.add_argument("--max-held-packets", type=int, default=None,
                   help="the edge pacer's queue per flow (default: the edge's, 64); its packets "
                        "keep the times they were given at the rate they came in under")
    p.add_argument("--runs", default="baseline,flowtune")
    p.add_argument("--sluice", default=sluice.BINARY)
    p.add_argument("--allocator", default=os.path.join(ROOT, "build", "allocator",
                                                       "sluice-allocator"),
                   help="sluice-allocator, for --clock real")
    p.add_argument("--eal", default="--no-huge -m 1024 --no-pci -l 0,1")
    fidelity.add_arguments(p)
    a = p.parse_args(argv)
    if a.iteration is None:
        a.iteration = "10us" if a.clock == "exact" else "200us"
    a.rate_bps = units.parse_rate(a.rate)
    a.step_ns = units.seconds_to_ns(units.parse_time(a.step))
    a.bin_ns = units.seconds_to_ns(units.parse_time(a.bin))
    a.resolution_ns = units.seconds_to_ns(units.parse_time(a.resolution or a.bin))
    if a.resolution_ns <= 0 or a.bin_ns % a.resolution_ns != 0:
        p.error("--bin must be a whole number of --resolution")
    if a.step_ns % a.resolution_ns != 0:
        p.error("--step must be a whole number of --resolution")
    return a


def schedule(a):
    """(start, end) ns of each sender's flow."""
    return [(i * a.step_ns, (2 * SENDERS - 1 - i) * a.step_ns) for i in range(SENDERS)]


def host(i):
    return {"name": f"h{i}", "mac": f"02:00:00:00:01:{i:02x}", "sw_mac": f"02:00:00:00:00:{i:02x}",
            "ip": f"10.0.{i}.2"}


def write_captures(a, wdir):
    os.makedirs(wdir, exist_ok=True)
    frame_ns = (HEADERS_LEN + FRAME_APP + OVERHEAD) * 8 * 10**9 // a.rate_bps
    rx = host(SENDERS)
    for i, (start, end) in enumerate(schedule(a)):
        h = host(i)
        fb = FrameBuilder(h["mac"], h["sw_mac"], h["ip"], rx["ip"], flow_id=i + 1,
                          flow_size=0, sender_id=i, tos=1)
        with PcapWriter(os.path.join(wdir, f"h{i}.pcap")) as w:
            t, seq = start, 0
            while t < end:
                w.write(1_700_000_000 * 10**9 + t, fb.frame(seq, seq * FRAME_APP, FRAME_APP,
                                                           seq & 0xFFFF))
                t += frame_ns
                seq += 1


def config(a, wdir, flowtune, flowtune_port=None):
    """The edge's configuration: with flowtune, the allocator in the fabric
    (exact time) or sluice-allocator at flowtune_port (real time)."""
    ports, routes = [], []
    for i in range(SENDERS + 1):
        h = host(i)
        p = {"name": h["name"], "role": "host", "rate": a.rate, "mac": h["sw_mac"],
             "peer_mac": h["mac"], "ipv4": f"10.0.{i}.1/24", "pcap": {}}
        if i < SENDERS:
            p["pcap"]["rx"] = os.path.join(wdir, f"h{i}.pcap")
        else:
            p["pcap"].update({"tx": "h5.out", "snaplen": 128})
        ports.append(p)
        routes.append({"prefix": f"10.0.{i}.0/24", "ports": [h["name"]]})
    sw = {"name": "s1", "buffer": {"size": "4MB"}, "ports": ports, "routes": routes}
    conf = {"clock": {"mode": a.clock}, "metrics": {"enabled": False}, "switches": [sw]}
    if flowtune:
        sw["flowtune"] = {"lease": a.lease}
        if a.max_held_packets:
            sw["flowtune"]["max_held_packets"] = a.max_held_packets
        if a.clock == "exact":
            conf["flowtune_allocator"] = {"control_delay": a.control_delay,
                                          "iteration": a.iteration}
        else:
            sw["flowtune"]["allocator"] = f"127.0.0.1:{flowtune_port}"
    return conf


def run_sluice(a, rdir, seconds):
    run = sluice.run(a.sluice, rdir, float("%.3f" % seconds), eal=a.eal,
                     prefix=sluice.new_prefix("ftedge"), timeout=seconds + 60)
    return run.summary


def throughput(a, rdir, n_bins):
    """Bits per --resolution bin per sender, from the receiver's capture, and
    each sender's last frame (ns); time 0 is the capture's first frame (the
    first flow starts at 0)."""
    res = a.resolution_ns
    bins = [[0] * n_bins for _ in range(SENDERS)]
    last = [None] * SENDERS
    t0 = None
    for ts, buf, length in read_pcap(os.path.join(rdir, "h5.out"), max_bytes=128):
        rec = parse_frame(buf)
        if rec is None:
            continue
        t0 = ts if t0 is None else t0
        b = (ts - t0) // res
        if 0 <= rec.sender_id < SENDERS:
            last[rec.sender_id] = ts - t0
            if 0 <= b < n_bins:
                bins[rec.sender_id][b] += (length + OVERHEAD) * 8
    return bins, last


def active_at(a, t_ns):
    return [i for i, (s, e) in enumerate(schedule(a)) if s <= t_ns < e]


def convergence(a, bins, last=None):
    """Per event: its time, the active flows after it, converged_ms (the end
    of the first window of --bin from which every active flow stays within
    the tolerance of its share for STABLE_BINS windows, in ms after the
    event; None when not within the step), fair_from_us (that window's
    start), and for a departure last_frame_us (when the leaving flow's last
    frame arrived). Windows slide by --resolution over `bins`."""
    res = getattr(a, "resolution_ns", BIN_NS)
    k = getattr(a, "bin_ns", BIN_NS) // res  # resolution bins per window
    cap = a.rate_bps * res / 1e9  # bits per resolution bin at line rate
    sched = schedule(a)
    events = sorted({t for se in sched for t in se})
    out = []
    for n, t in enumerate(events):
        act = active_at(a, t)
        if not act:
            continue
        share = cap * (1 - THRESHOLD) / len(act)
        first = t // res
        end = (events[n + 1] if n + 1 < len(events) else t) // res

        def fair(w):  # every active flow's mean over the window starting at w
            return all(abs(sum(bins[i][w:w + k]) / k - share) <= a.tolerance * share
                       for i in act)
        found = None
        for b in range(first, end - STABLE_BINS * k + 1):
            if all(fair(w) for w in range(b, b + (STABLE_BINS - 1) * k + 1)):
                found = b - first
                break
        ev = {"t_ms": t / 1e6, "flows": len(act),
              "converged_ms": None if found is None else (found + k) * res / 1e6,
              "fair_from_us": None if found is None else found * res / 1e3}
        leaving = [i for i, (s, e) in enumerate(sched) if e == t]
        if leaving and last is not None and last[leaving[0]] is not None:
            ev["last_frame_us"] = (last[leaving[0]] - t) / 1e3
        out.append(ev)
    return out


def drops(summary):
    """{port/reason: drops} of the edge (every reason, 0 included)."""
    return {f"{p['name']}/{reason}": n for _, p in counters.ports(summary)
            for reason, n in p["drops"].items()}


def windowed_mbps(a, bins):
    """Each flow's throughput in Mb/s averaged over --bin, for the window
    starting at every --resolution bin."""
    k = a.bin_ns // a.resolution_ns
    scale = 1e3 / a.bin_ns  # bits per window -> Mb/s
    out = []
    for flow in bins:
        run, acc = [], sum(flow[:k])
        for b in range(len(flow)):
            run.append(acc * scale)
            acc += (flow[b + k] if b + k < len(flow) else 0) - flow[b]
        out.append(run)
    return out


def plot(a, results, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    runs = list(results)
    fig, axes = plt.subplots(len(runs), 1, figsize=(9, 3.2 * len(runs)), sharex=True)
    axes = axes if len(runs) > 1 else [axes]
    res_ms = a.resolution_ns / 1e6
    for ax, run in zip(axes, runs):
        rates = windowed_mbps(a, results[run]["bins"])
        # Each window's mean drawn at its middle.
        xs = [b * res_ms + a.bin_ns / 2e6 for b in range(len(rates[0]))]
        for i in range(SENDERS):
            ax.plot(xs, rates[i], label=f"flow {i}", lw=1)
        fair = [a.rate_bps * (1 - THRESHOLD) / len(active_at(a, b * a.resolution_ns)) / 1e6
                if active_at(a, b * a.resolution_ns) else 0 for b in range(len(rates[0]))]
        ax.plot(xs, fair, "k:", lw=1, label="C(1-0.01)/N")
        ax.set_title(f"{run} ({a.clock} time)")
        ax.set_ylabel(f"Mb/s over {a.bin}")
    axes[-1].set_xlabel("ms")
    axes[0].legend(fontsize=7, ncol=6)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "convergence.png"), dpi=110)


def cell(ev):
    if ev["converged_ms"] is None:
        return "not within the step"
    text = f"{ev['converged_ms']:g} (fair from {ev['fair_from_us']:g} us)"
    if "last_frame_us" in ev:
        text += f"; its last frame at {ev['last_frame_us']:g} us"
    return text


def write_md(a, results, gate, out):
    lines = [f"# Flowtune convergence ({a.rate} links, a flow event every {a.step}, {a.clock} "
             f"time)", "",
             f"Throughput averaged over {a.bin}, sliding by {a.resolution or a.bin}; converged: "
             f"every active flow within {a.tolerance:g} of C(1 - 0.01)/N for {STABLE_BINS} "
             f"windows.", ""]
    if a.clock == "exact":
        lines += [f"Allocator in the fabric: control delay {a.control_delay} each way, an "
                  f"iteration every {a.iteration}.", ""]
    else:
        lines += [f"sluice-allocator: an iteration every {a.iteration}.", ""]
    if gate.note:
        lines += [f"**{gate.note}**", ""]
    lines += ["| event (ms) | flows after | " + " | ".join(f"{r}: ms to converge" for r in results)
              + " |", "|---|---|" + "---|" * len(results)]
    first = next(iter(results.values()))["convergence"]
    for k, ev in enumerate(first):
        cells = [cell(results[r]["convergence"][k]) for r in results]
        lines.append(f"| {ev['t_ms']:g} | {ev['flows']} | " + " | ".join(cells) + " |")
    lines += ["", "| run | drops by port/reason | flowtune counters |", "|---|---|---|"]
    for r, res in results.items():
        lines.append(f"| {r} | {res['drops']} | {res.get('flowtune', '')} |")
        if "flowtune_allocator" in res:
            lines.append(f"| {r}: allocator | | {res['flowtune_allocator']} |")
    if gate.floor_line:
        lines += ["", f"floor: {gate.floor_line}"]
    with open(os.path.join(out, "results.md"), "w") as f:
        f.write("\n".join(lines) + "\n")


def run_one(a, run, rdir, wdir, seconds):
    """One run: its summary and, in real time with flowtune, the stdout of
    its sluice-allocator (judged by the gate)."""
    proc, port, allocator_out = None, None, None
    flowtune = run == "flowtune"
    if flowtune and a.clock == "real":
        proc, port = allocator_proc.start(
            allocator_proc.command(a.allocator, a.rate, a.iteration, a.lease, "300s",
                                   prefix=allocator_proc.ON_CPU0),
            os.path.join(rdir, "allocator.log"))
    try:
        with open(os.path.join(rdir, "sluice.yaml"), "w") as f:
            yaml.safe_dump(config(a, wdir, flowtune, port), f, sort_keys=False)
        summary = run_sluice(a, rdir, seconds)
    finally:
        if proc:
            allocator_out = allocator_proc.stop(proc, os.path.join(rdir, "allocator.out"))
    return summary, allocator_out


def main(argv):
    a = parse_args(argv)
    os.makedirs(a.out, exist_ok=True)
    wdir = os.path.join(os.path.abspath(a.out), "workload")
    write_captures(a, wdir)
    eal = a.eal.split()
    gate = fidelity.Gate(PROG, a, fidelity.floor_step(a, eal, a.out, PROG))
    end_ns = schedule(a)[0][1]
    n_bins = end_ns // a.resolution_ns
    results = {}
    for run in a.runs.split(","):
        rdir = os.path.join(os.path.abspath(a.out), run)
        os.makedirs(rdir, exist_ok=True)
        summary, allocator_out = run_one(a, run, rdir, wdir, end_ns / 1e9 + 1.0)
        gate.check(run, summary, allocator_out)
        bins, last = throughput(a, rdir, n_bins)
        rates = windowed_mbps(a, bins)
        with open(os.path.join(a.out, f"throughput_{run}.csv"), "w") as f:
            f.write("t_ms," + ",".join(f"flow{i}_mbps" for i in range(SENDERS)) + "\n")
            for b in range(n_bins):
                f.write(f"{b * a.resolution_ns / 1e6:g}," +
                        ",".join(f"{rates[i][b]:.1f}" for i in range(SENDERS)) + "\n")
        results[run] = {"bins": bins, "convergence": convergence(a, bins, last),
                        "drops": drops(summary)}
        if "flowtune" in summary["switches"][0]:
            results[run]["flowtune"] = summary["switches"][0]["flowtune"]
        if "flowtune_allocator" in summary:
            results[run]["flowtune_allocator"] = summary["flowtune_allocator"]
        for ev in results[run]["convergence"]:
            print(f"{PROG}: {run}: t={ev['t_ms']:g} ms, {ev['flows']} flows: converged after "
                  f"{ev['converged_ms']} ms (fair from {ev['fair_from_us']} us"
                  + (f"; the leaving flow's last frame at {ev['last_frame_us']:g} us"
                     if "last_frame_us" in ev else "") + ")", flush=True)
        print(f"{PROG}: {run}: drops {results[run]['drops']}", flush=True)
    plot(a, results, a.out)
    write_md(a, results, gate, a.out)
    with open(os.path.join(a.out, "results.json"), "w") as f:
        json.dump({"rate": a.rate, "step": a.step, "clock": a.clock, "bin": a.bin,
                   "resolution": a.resolution or a.bin, "iteration": a.iteration,
                   "control_delay": a.control_delay if a.clock == "exact" else None,
                   "gate": gate.record(),
                   "runs": {r: {k: v for k, v in res.items() if k != "bins"}
                            for r, res in results.items()}}, f, indent=2)
    provenance.write(a.out, binaries=[a.sluice] + ([a.allocator] if a.clock == "real" else []))
    return gate.verdict()
