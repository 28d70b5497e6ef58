"""Flowtune with real Linux TCP hosts: hosts in network namespaces
(sluicepy.netns, as tools/netns makes them) on veth pairs, attached through
net_af_packet to one sluice edge switch, in real time.

    h0..h4 --(rate)--> s1 --(rate)--> h5

Runs (--runs):
  baseline  the convergence shape of tools/reproduce flowtune-edge with TCP:
            sender i sends one TCP flow (--cc, ECN on) as fast as it can
            from i x step to (9 - i) x step; no Flowtune, so the receiver's
            drop-tail port queue sorts it out;
  flowtune  the same with Flowtune: the edge paces each flow at the rate
            sluice-allocator (cpu 0, --host-rate = --rate) gives it; TCP
            sees the pacer's CE marks and drops and backs off;
  failure   all five flows from 0 to 4 x step with Flowtune, the allocator
            killed (SIGKILL) at 2 x step: after the lease the edge
            forwards unpaced, and no packet stays held;
  updates   per CDF of --update-cdfs, all six hosts open TCP
            connections with sizes from the CDF, Poisson arrivals at --load
            of their link, to random other hosts, for --update-seconds,
            with Flowtune; counted as reproduce flowtune-updates counts them:
            the edge's FLOWLET_START/END datagrams and the allocator's
            RATE_UPDATEs on the wire, as a fraction of the hosts' capacity.
Each host's veth is shaped to --rate by tc tbf (its NIC). The receiver counts each flow's bytes in --bin bins.
Per run: per-flow goodput, per step Jain's fairness index over the step's
second half and the time until every active flow stays within
--tolerance of the fair share G(1 - 0.01)/N for 5 bins (G: the goodput a
link of --rate carries, 1448 of every 1538 bytes on the wire); drops by
where they happen; the fidelity gate (sluice's ports and the allocator's
lateness) beside the machine's floor. OUT gets results.json, results.md,
throughput_<run>.csv, flowtune_tcp.png and provenance.json. Run as root:

    flock /tmp/sluice-heavy.lock tools/reproduce flowtune-tcp --out runs/ft-tcp

Exit 3 when a run broke the fidelity limits unless --allow-unfaithful, 1 on
an error. Namespaces, veths, hugepages and DPDK files are removed at the
end, also after a failure, SIGINT or SIGTERM.
"""

import argparse
import json
import os
import selectors
import signal
import socket
import subprocess
import sys
import time

import yaml

from .. import allocator_proc, cli, fidelity, netns, netns_testbed, provenance, sluice, units
from ..cli import ToolError

ROOT = sluice.ROOT
PROG = "reproduce flowtune-tcp"
# The hosts' programs are this module's own subcommands (_recv, _send,
# _sink, _flows), run through the entry inside each host's namespace.
SELF = [sys.executable, os.path.join(ROOT, "tools", "reproduce"), "flowtune-tcp"]
SENDERS = 5
RECEIVER = SENDERS
BASE_PORT = 5301
GOODPUT = 1448 / 1538      # TCP payload per wire byte of a full frame (timestamps on)
HEADROOM = 0.01            # sluice-allocator's default threshold
STABLE_BINS = 5
HOST_CPU = "0"
RUNS = ("baseline", "flowtune", "failure", "updates")
SINK_PORT = 5400
MAX_OPEN = 256             # connections one host keeps open at most
READY_TIMEOUT = 60         # s for sluice and the hosts' programs to start


# ---------------------------------------------------------------- hosts' programs

def read_t0():
    """t0 (monotonic seconds) from the first line of stdin: the tool sends
    it once every host program said "ready" (wait_ready)."""
    line = sys.stdin.readline()
    if not line:
        raise SystemExit("no t0 on stdin")
    return float(line)


def run_receiver(a):
    """Accepts one connection per flow (port BASE_PORT + i) in h5's
    namespace and counts its bytes per bin from t0 (read from stdin once
    it has said "ready") for --span seconds. The senders connect before t0;
    the kernel holds their connections until they are accepted."""
    sel = selectors.DefaultSelector()
    for i in range(SENDERS):
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("0.0.0.0", BASE_PORT + i))
        s.listen(4)
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ, ("listen", i))
    n_bins = int(a.span / a.bin) + 1
    bins = [[0] * n_bins for _ in range(SENDERS)]
    buf = bytearray(1 << 16)
    print("ready", flush=True)
    a.t0 = read_t0()
    a.until = a.t0 + a.span
    while time.monotonic() < a.until:
        for key, _ in sel.select(0.05):
            kind, i = key.data
            if kind == "listen":
                c, _ = key.fileobj.accept()
                c.setblocking(False)
                sel.register(c, selectors.EVENT_READ, ("conn", i))
                continue
            try:
                n = key.fileobj.recv_into(buf)
            except (BlockingIOError, InterruptedError):
                continue
            except OSError:
                n = 0
            if n == 0:
                sel.unregister(key.fileobj)
                key.fileobj.close()
                continue
            b = int((time.monotonic() - a.t0) / a.bin)
            if 0 <= b < n_bins:
                bins[i][b] += n
    with open(a.out, "w") as f:
        json.dump({"bin_s": a.bin, "bins": bins}, f)
    return 0


def run_sender(a):
    """One TCP flow to --dst:--port from t0 + --start until t0 + --stop.
    Connects first (through sluice, so a connection also shows that the
    path forwards), says "ready", then reads t0 from stdin."""
    deadline = time.monotonic() + 60
    while True:
        c = socket.socket()
        # Per socket: a namespace may only pick from the machine's
        # tcp_allowed_congestion_control by sysctl, root may set any here.
        c.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, a.cc.encode())
        c.settimeout(2.0)
        try:
            c.connect((a.dst, a.port))
            break
        except OSError:
            c.close()
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)
    print("ready", flush=True)
    t0 = read_t0()
    a.start, a.stop = t0 + a.start, t0 + a.stop
    time.sleep(max(0.0, a.start - time.monotonic()))
    chunk = bytes(1 << 16)
    c.settimeout(0.05)
    while time.monotonic() < a.stop:
        try:
            c.send(chunk)
        except socket.timeout:
            pass
    c.close()
    return 0


def run_sink(a):
    """Listens on SINK_PORT in every host's namespace (one process, as
    a server for every host) and discards what arrives, until --seconds
    after t0 (read from stdin once it has said "ready")."""
    home = os.open("/proc/self/ns/net", os.O_RDONLY)
    sel = selectors.DefaultSelector()
    for ns in a.namespaces:
        netns_testbed.setns("/run/netns/" + ns)
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("0.0.0.0", SINK_PORT))
        s.listen(1024)
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ, "listen")
    netns_testbed.setns(f"/proc/self/fd/{home}")
    buf = bytearray(1 << 16)
    print("ready", flush=True)
    until = read_t0() + a.seconds
    while time.monotonic() < until:
        for key, _ in sel.select(0.1):
            if key.data == "listen":
                try:
                    c, _ = key.fileobj.accept()
                except OSError:
                    continue
                c.setblocking(False)
                sel.register(c, selectors.EVENT_READ, "conn")
                continue
            try:
                n = key.fileobj.recv_into(buf)
            except (BlockingIOError, InterruptedError):
                continue
            except OSError:
                n = 0
            if n == 0:
                sel.unregister(key.fileobj)
                key.fileobj.close()
    return 0


def flow_schedule(a):
    """(start offset s, destination host, bytes) of this host's flows:
    Poisson arrivals at --load of the link, sizes from the CDF."""
    import random
    from sluicepy.cdf import FlowSizeCdf
    cdf = FlowSizeCdf.from_file(a.cdf)
    rng = random.Random(a.seed * 1000 + a.host)
    rate = a.load * a.rate_bps / (8 * cdf.expectation(lambda x: x))
    others = [h for h in range(a.hosts) if h != a.host]
    out, t = [], rng.expovariate(rate)
    while t < a.seconds:
        out.append((t, rng.choice(others), cdf.size_at(rng.random())))
        t += rng.expovariate(rate)
    return out


def run_flows(a):
    """Opens one TCP connection per flow of flow_schedule at its time and
    sends its bytes; stops sending at t0 + --seconds. First connects once
    to the next host's sink (through sluice: the path forwards), says
    "ready" and reads t0 from stdin."""
    flows = flow_schedule(a)
    deadline = time.monotonic() + READY_TIMEOUT
    while True:
        try:
            socket.create_connection((f"{a.subnet_base}.{(a.host + 1) % a.hosts}.2", SINK_PORT),
                                     timeout=2.0).close()
            break
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)
    print("ready", flush=True)
    a.t0 = read_t0()
    sel = selectors.DefaultSelector()
    chunk = memoryview(bytes(1 << 16))
    left, started, done, refused, i = {}, 0, 0, 0, 0
    end = a.t0 + a.seconds
    while time.monotonic() < end:
        now = time.monotonic() - a.t0
        while i < len(flows) and flows[i][0] <= now and len(left) < MAX_OPEN:
            _, dst, size = flows[i]
            i += 1
            c = socket.socket()
            c.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, a.cc.encode())
            c.setblocking(False)
            try:
                c.connect((f"{a.subnet_base}.{dst}.2", SINK_PORT))
            except BlockingIOError:
                pass
            except OSError:
                refused += 1
                c.close()
                continue
            left[c] = size
            started += 1
            sel.register(c, selectors.EVENT_WRITE)
        wait = flows[i][0] - now if i < len(flows) and len(left) < MAX_OPEN else 0.05
        for key, _ in sel.select(max(0.0, min(wait, 0.05))):
            c = key.fileobj
            try:
                n = c.send(chunk[:min(left[c], len(chunk))])
            except (BlockingIOError, InterruptedError):
                continue
            except OSError:
                n, left[c] = 0, 0
            left[c] -= n
            if left[c] <= 0:
                sel.unregister(c)
                del left[c]
                c.close()
                done += 1
    for c in left:
        c.close()
    print(json.dumps({"flows": len(flows), "started": started, "done": done,
                      "refused": refused, "open_at_end": len(left)}), flush=True)
    return 0


# ---------------------------------------------------------------- one run

def schedule(run, step):
    """(start, stop) of each sender in seconds from t0."""
    if run == "failure":
        return [(0.0, 4 * step)] * SENDERS
    return [(i * step, (2 * SENDERS - 1 - i) * step) for i in range(SENDERS)]


def config(a, tb, run, alloc_port):
    base = a.subnet_base
    ports = []
    for h in range(SENDERS + 1):
        ports.append({"name": f"h{h}", "role": "host", "rate": a.rate,
                      "ipv4": f"{base}.{h}.1/24", "peer_ip": f"{base}.{h}.2",
                      "device": f"net_af_packet{h},iface={a.prefix}v{h},"
                                + tb.nm.AF_PACKET_ARGS.format(framecnt=a.framecnt)})
    sw = {"name": "s1", "queues_per_port": 1, "queue_capacity": a.queue_packets,
          "buffer": {"size": f"{2 * a.queue_packets * 1514}B", "alpha": 1.0}, "ports": ports}
    if alloc_port:
        sw["flowtune"] = {"allocator": f"127.0.0.1:{alloc_port}", "idle_gap": a.idle_gap,
                          "lease": a.lease}
    return {"metrics": {"enabled": False}, "mbufs": 32768, "switches": [sw]}


def start_sluice(a, tb, rdir, seconds):
    """sluice on the hosts' veths (hugepages), at nice -10, until stopped."""
    proc = sluice.start(a.sluice, rdir, seconds, eal=["-l", "0,1", "--no-pci"],
                        prefix=tb.file_prefix, wrapper=["nice", "-n", "-10"], memory=False)
    tb.adopt(proc.proc)
    return proc


def stop_sluice(proc, run, rdir):
    """Stops sluice (SIGINT) and returns its summary."""
    proc.signal(signal.SIGINT)
    done = proc.finish(timeout=30, check=False)
    if done.rc != 0 or not done.summary:
        raise ToolError(f"{run}: sluice exited {done.rc} without a summary; see "
                        f"{rdir}/sluice.log")
    return done.summary


def start_allocator(a, tb):
    """sluice-allocator on the hosts' cpu, at nice -10 so that the host
    programs there do not keep it from its iterations."""
    proc, port = allocator_proc.start(allocator_proc.command(
        a.allocator, a.rate, a.iteration, a.lease, "600s",
        prefix=["nice", "-n", "-10", "taskset", "-c", HOST_CPU]))
    tb.procs.append(proc)
    return proc, port


def start_host(tb, cmd, out):
    """A host program with a pipe on stdin, for t0 (read_t0)."""
    with open(out, "w") as f:
        p = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, stdin=subprocess.PIPE,
                             text=True)
    tb.procs.append(p)
    return p


def wait_ready(procs, sluice):
    """Until each (process, log) has written "ready" to its log."""
    deadline = time.monotonic() + READY_TIMEOUT
    for p, log in procs:
        while True:
            with open(log) as f:
                if "ready" in f.read():
                    break
            if p.poll() is not None or sluice.poll() is not None:
                raise ToolError(f"{log if p.poll() is not None else 'sluice'} exited before "
                                f"the hosts were ready; see {log}")
            if time.monotonic() > deadline:
                raise ToolError(f"not ready within {READY_TIMEOUT} s; see {log}")
            time.sleep(0.05)


def run_one(tb, run, a, gate):
    rdir = os.path.join(a.out, run)
    os.makedirs(rdir, exist_ok=True)
    alloc, port = start_allocator(a, tb) if run != "baseline" else (None, None)
    conf = os.path.join(rdir, "sluice.yaml")
    with open(conf, "w") as f:
        yaml.safe_dump(config(a, tb, run, port), f, sort_keys=False)
    sched = schedule(run, a.step)
    span = max(stop for _, stop in sched)
    # The hosts' programs say "ready" (the senders once connected through
    # sluice) before t0 is set: on a busy machine sluice and the hosts'
    # Python take seconds to start, and a flow due before then would be
    # lost from the schedule. sluice is stopped by SIGINT after the run.
    proc = start_sluice(a, tb, rdir, span + READY_TIMEOUT + 15)
    recv_log = os.path.join(rdir, "recv.log")
    recv = start_host(tb, ["taskset", "-c", HOST_CPU, "ip", "netns", "exec", tb.ns(RECEIVER)] +
                      SELF + ["_recv", "--span", repr(span + 0.5), "--bin", repr(a.bin_s),
                              "--out", os.path.join(rdir, "bins.json")], recv_log)
    wait_ready([(recv, recv_log)], proc.proc)
    logs = [os.path.join(rdir, f"h{i}.log") for i in range(len(sched))]
    senders = [start_host(tb, ["taskset", "-c", HOST_CPU, "ip", "netns", "exec", tb.ns(i)] + SELF +
                          ["_send", "--dst", f"{a.subnet_base}.{RECEIVER}.2",
                           "--port", str(BASE_PORT + i), "--start", repr(s), "--stop", repr(e),
                           "--cc", a.cc], logs[i])
               for i, (s, e) in enumerate(sched)]
    wait_ready(list(zip(senders, logs)), proc.proc)
    t0 = time.monotonic() + a.settle
    for p in [recv] + senders:
        p.stdin.write(f"{t0!r}\n")
        p.stdin.close()
    allocator_out = None
    if run == "failure":
        time.sleep(max(0.0, t0 + 2 * a.step - time.monotonic()))
        alloc.kill()
        print(f"{PROG}: failure: allocator killed at {2 * a.step:g} s", flush=True)
    for p in senders + [recv]:
        p.wait(timeout=span + 60 + a.settle)
    if alloc is not None:
        allocator_out = allocator_proc.stop(alloc, os.path.join(rdir, "allocator.out"))
    sm = stop_sluice(proc, run, rdir)
    bad = [f"h{i}" for i, p in enumerate(senders) if p.returncode != 0]
    if bad or recv.returncode != 0:
        raise ToolError(f"{run}: host program failed ({', '.join(bad) or 'receiver'}); "
                        f"see {rdir}/*.log")
    # A killed allocator printed no summary line; its lateness is not judged.
    gate.check(run, sm, allocator_out if run == "flowtune" else None)
    return {"bins": cli.load_json(os.path.join(rdir, "bins.json"), "receiver bins")["bins"],
            "summary": sm}


def run_updates(tb, cdf, a, gate):
    """One updates run for one CDF; returns its figures."""
    run = f"updates-{cdf}"
    rdir = os.path.join(a.out, run)
    os.makedirs(rdir, exist_ok=True)
    alloc, port = start_allocator(a, tb)
    conf = os.path.join(rdir, "sluice.yaml")
    with open(conf, "w") as f:
        yaml.safe_dump(config(a, tb, run, port), f, sort_keys=False)
    proc = start_sluice(a, tb, rdir, a.update_seconds + READY_TIMEOUT + 15)
    hosts = SENDERS + 1
    # As in run_one: t0 once the sink and every client said "ready".
    sink_log = os.path.join(rdir, "sink.log")
    sink = start_host(tb, ["taskset", "-c", HOST_CPU] + SELF +
                      ["_sink", "--seconds", repr(a.update_seconds + 2)] +
                      [tb.ns(h) for h in range(hosts)], sink_log)
    wait_ready([(sink, sink_log)], proc.proc)
    logs = [os.path.join(rdir, f"h{h}.log") for h in range(hosts)]
    clients = [start_host(tb, ["taskset", "-c", HOST_CPU, "ip", "netns", "exec", tb.ns(h)] + SELF +
                          ["_flows", "--host", str(h), "--hosts", str(hosts),
                           "--cdf", os.path.join(ROOT, "conf", "workloads", cdf + ".cdf"),
                           "--load", str(a.load), "--rate-bps", str(a.rate_bps),
                           "--seconds", str(a.update_seconds), "--seed", str(a.seed),
                           "--subnet-base", a.subnet_base, "--cc", a.cc], logs[h])
               for h in range(hosts)]
    wait_ready(list(zip(clients, logs)), proc.proc)
    t0 = time.monotonic() + a.settle
    for p in [sink] + clients:
        p.stdin.write(f"{t0!r}\n")
        p.stdin.close()
    for p in clients + [sink]:
        p.wait(timeout=a.update_seconds + a.settle + 60)
    allocator_out = allocator_proc.stop(alloc, os.path.join(rdir, "allocator.out"))
    sm = stop_sluice(proc, run, rdir)
    if any(p.returncode != 0 for p in clients + [sink]):
        raise ToolError(f"{run}: a host program failed; see {rdir}/*.log")
    gate.check(run, sm, allocator_out)
    flows = [json.loads(open(os.path.join(rdir, f"h{h}.log")).read().splitlines()[-1])
             for h in range(hosts)]
    return update_figures(cdf, a, sm, allocator_out, flows)


def update_figures(cdf, a, summary, allocator_out, flows):
    """The wire cost of the control messages as tools/reproduce flowtune-updates
    counts it, over hosts x rate x seconds of capacity."""
    ft = summary["switches"][0]["flowtune"]
    capacity_bits = (SENDERS + 1) * a.rate_bps * a.update_seconds
    return {"cdf": cdf, "load": a.load, "seconds": a.update_seconds,
            "tcp_flows": sum(f["started"] for f in flows),
            "tcp_flows_done": sum(f["done"] for f in flows),
            "flowlets": ft["flowlets_started"], "drops": drops(summary),
            **allocator_proc.update_traffic(ft, allocator_out, capacity_bits),
            "paper_pct": allocator_proc.PAPER_UPDATE_PCT.get(cdf)}


# ---------------------------------------------------------------- analysis

def mbps(nbytes, bin_s):
    return nbytes * 8 / bin_s / 1e6


def active_at(sched, t):
    return [i for i, (s, e) in enumerate(sched) if s <= t < e]


def events(sched):
    return sorted({s for s, _ in sched} | {e for _, e in sched})[:-1]


def jain(xs):
    return sum(xs) ** 2 / (len(xs) * sum(x * x for x in xs)) if any(xs) else 0.0


def analyse_steps(bins, sched, a):
    """Per event: flows active after it, Jain's index over the second half
    of the interval to the next event, and ms until every active flow stays
    within the tolerance of the fair share for STABLE_BINS bins (None:
    not within the interval)."""
    share_total = a.rate_bps / 1e6 * GOODPUT * (1 - HEADROOM)
    evs = events(sched) + [max(e for _, e in sched)]
    out = []
    for t, t_next in zip(evs, evs[1:]):
        act = active_at(sched, t)
        b0, b1 = int(round(t / a.bin_s)), int(round(t_next / a.bin_s))
        share = share_total / len(act)
        ok = [all(abs(mbps(bins[i][b], a.bin_s) - share) <= a.tolerance * share for i in act)
              for b in range(b0, b1)]
        conv = next((k for k in range(len(ok) - STABLE_BINS + 1)
                     if all(ok[k:k + STABLE_BINS])), None)
        half = range((b0 + b1) // 2, b1)
        means = [sum(mbps(bins[i][b], a.bin_s) for b in half) / len(half) for i in act]
        out.append({"t_s": t, "flows": len(act), "fair_share_mbps": round(share, 1),
                    "converged_ms": None if conv is None else round(conv * a.bin_s * 1e3),
                    "jain_second_half": round(jain(means), 4),
                    "mean_mbps_second_half": [round(m, 1) for m in means]})
    return out


def analyse_failure(bins, a):
    """Mean goodput per flow while paced (step 1 to 2) and after the
    allocator died and the lease ran out (from 2 x step + lease + 1 step /
    2 to 4 x step)."""
    lease = units.parse_time(a.lease)

    def mean(t_from, t_to):
        rng = range(int(t_from / a.bin_s), int(t_to / a.bin_s))
        return [round(sum(mbps(bins[i][b], a.bin_s) for b in rng) / len(rng), 1)
                for i in range(SENDERS)]
    return {"paced_mbps": mean(a.step, 2 * a.step),
            "after_lease_mbps": mean(2 * a.step + lease + a.step / 2, 4 * a.step)}


def drops(summary):
    out = {}
    for sw in summary["switches"]:
        for p in sw["ports"]:
            for r, n in p.get("drops", {}).items():
                out[f"{p['name']}/{r}"] = n
    return out


def analyse(runs, a):
    res = {}
    for run, r in runs.items():
        sched = schedule(run, a.step)
        res[run] = {"drops": drops(r["summary"]),
                    "flowtune": r["summary"]["switches"][0].get("flowtune")}
        if run == "failure":
            res[run]["failure"] = analyse_failure(r["bins"], a)
        else:
            res[run]["steps"] = analyse_steps(r["bins"], sched, a)
    return res


def write_outputs(runs, res, updates, a, gate):
    for run, r in runs.items():
        with open(os.path.join(a.out, f"throughput_{run}.csv"), "w") as f:
            f.write("t_ms," + ",".join(f"flow{i}_mbps" for i in range(SENDERS)) + "\n")
            for b in range(len(r["bins"][0])):
                f.write(f"{b * a.bin_s * 1e3:.0f}," + ",".join(
                    f"{mbps(r['bins'][i][b], a.bin_s):.1f}" for i in range(SENDERS)) + "\n")
    lines = [f"# tools/reproduce flowtune-tcp: {a.rate}, step {a.step:g} s, bins {a.bin_s * 1e3:g} ms, "
             f"{a.cc}", ""] + ([gate.note, ""] if gate.note else [])
    for run in ("baseline", "flowtune"):
        if run not in res:
            continue
        lines += [f"## {run}", "", "| event (s) | flows | fair share (Mb/s) | converged (ms) | "
                  "Jain, 2nd half | mean Mb/s per flow, 2nd half |", "|---|---|---|---|---|---|"]
        for s in res[run]["steps"]:
            lines.append(f"| {s['t_s']:g} | {s['flows']} | {s['fair_share_mbps']} | "
                         f"{s['converged_ms'] if s['converged_ms'] is not None else 'never'} | "
                         f"{s['jain_second_half']} | {s['mean_mbps_second_half']} |")
        lines += ["", f"drops: {res[run]['drops'] or 'none'}", ""]
    if "failure" in res:
        f = res["failure"]["failure"]
        ft = res["failure"]["flowtune"] or {}
        lines += ["## failure", "", f"paced (Mb/s per flow): {f['paced_mbps']}",
                  f"after the lease (Mb/s per flow): {f['after_lease_mbps']}",
                  f"edge: flushed {ft.get('flushed')}, held at stop {ft.get('held_at_stop')}, "
                  f"drops {res['failure']['drops'] or 'none'}", ""]
    if updates:
        lines += ["## updates (load %g, %g s, %d hosts)" % (a.load, a.update_seconds, SENDERS + 1),
                  "", "| CDF | TCP flows (done) | flowlets | edge → allocator | allocator → edge "
                  "| total | paper |", "|---|---|---|---|---|---|---|"]
        for u in updates:
            lines.append(f"| {u['cdf']} | {u['tcp_flows']} ({u['tcp_flows_done']}) | "
                         f"{u['flowlets']} | {u['edge_to_allocator_pct']:.3f} % | "
                         f"{u['allocator_to_edge_pct']:.3f} % | {u['total_pct']:.3f} % | "
                         + (f"< {u['paper_pct']} %" if u["paper_pct"] else "—") + " |")
        lines.append("")
    lines += [f"floor: {gate.floor_line}"]
    with open(os.path.join(a.out, "results.md"), "w") as fh:
        fh.write("\n".join(lines) + "\n")
    with open(os.path.join(a.out, "results.json"), "w") as fh:
        json.dump({"rate": a.rate, "step_s": a.step, "bin_s": a.bin_s, "cc": a.cc,
                   "gate": gate.record(), "runs": res, "updates": updates}, fh, indent=1)
    if runs:
        plot(runs, a)
    return "\n".join(lines)


def plot(runs, a):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(len(runs), 1, figsize=(9, 2.8 * len(runs)), squeeze=False)
    for ax, (run, r) in zip(axes[:, 0], runs.items()):
        for i in range(SENDERS):
            ax.plot([b * a.bin_s for b in range(len(r["bins"][i]))],
                    [mbps(x, a.bin_s) for x in r["bins"][i]], lw=0.8, label=f"flow {i}")
        ax.set_title(run)
        ax.set_ylabel("Mb/s")
    axes[-1, 0].set_xlabel("s")
    axes[0, 0].legend(loc="upper right", fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(a.out, "flowtune_tcp.png"), dpi=110)


# ---------------------------------------------------------------- main

def parse_args(argv):
    p = argparse.ArgumentParser(prog="tools/" + PROG, description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    p.add_argument("--out", default=os.path.join(ROOT, "runs", "reproduce", "flowtune-tcp"))
    p.add_argument("--runs", default=",".join(RUNS))
    p.add_argument("--rate", default="200Mbps",
                   help="every port, and the hosts' tbf (default %(default)s: the hosts share "
                        "one cpu and cannot source 5 x 1 Gb/s, see docs/mechanisms/flowtune.md)")
    p.add_argument("--step", type=float, default=1.0, help="seconds between flow events")
    p.add_argument("--bin", default="10ms", help="throughput bin (default %(default)s)")
    p.add_argument("--tolerance", type=float, default=0.2)
    p.add_argument("--settle", type=float, default=0.5,
                   help="seconds from every host being ready (each sender connected to the "
                        "receiver through sluice) to the first flow")
    p.add_argument("--cc", default="cubic", choices=("cubic", "reno", "bbr"),
                   help="the senders' congestion control, set per socket (default %(default)s)")
    p.add_argument("--queue-packets", type=int, default=100,
                   help="the receiver port's drop-tail queue (default %(default)s)")
    p.add_argument("--update-cdfs", default="fb_hadoop,websearch",
                   help="updates run: CDFs from conf/workloads (default %(default)s)")
    p.add_argument("--load", type=float, default=0.8, help="updates run: load per host link")
    p.add_argument("--update-seconds", type=float, default=3.0)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--idle-gap", default="5ms",
                   help="Flowtune's flowlet idle gap (default %(default)s: it must exceed the "
                        "gaps of a TCP flow paced at its share, 300 us at 40 Mb/s, and of a "
                        "sender waiting out a window cut, up to the pacer's queue delay; at "
                        "100 us every flow ends its flowlet every few packets, "
                        "docs/mechanisms/flowtune.md)")
    p.add_argument("--lease", default="10ms")
    p.add_argument("--iteration", default="200us")
    p.add_argument("--rto-min", default="10ms")
    p.add_argument("--framecnt", type=int, default=1024)
    p.add_argument("--pages", type=int, default=512)
    p.add_argument("--prefix", default="ftt")
    p.add_argument("--subnet-base", default="10.0")
    p.add_argument("--sluice", default=sluice.BINARY)
    p.add_argument("--allocator", default=os.path.join(ROOT, "build", "allocator",
                                                       "sluice-allocator"))
    fidelity.add_arguments(p)
    p.set_defaults(clock="real")
    a = p.parse_args(argv)
    if a.clock != "real":
        p.error("real hosts keep the machine's time: --clock real only")
    a.runs = [r for r in a.runs.split(",") if r]
    bad = [r for r in a.runs if r not in RUNS]
    if bad:
        p.error(f"unknown run(s) {', '.join(bad)}; known: {', '.join(RUNS)}")
    a.update_cdfs = [c for c in a.update_cdfs.split(",") if c]
    for c in a.update_cdfs:
        if not os.path.exists(os.path.join(ROOT, "conf", "workloads", c + ".cdf")):
            p.error(f"--update-cdfs: no conf/workloads/{c}.cdf")
    a.rate_bps = units.parse_rate(a.rate)
    a.bin_s = units.parse_time(a.bin)
    if a.step < 10 * a.bin_s:
        p.error("--step must hold at least 10 bins")
    # netns_testbed.Testbed reads these (the hosts' tbf rate in tc's units,
    # Linux's default reordering, the hosts' cpu).
    a.host_rate, a.reordering, a.host_cpu = a.rate.lower().replace("bps", "bit"), 3, HOST_CPU
    return a


def main(argv):
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {int(HOST_CPU)})
    if argv and argv[0] == "_sink":
        p = argparse.ArgumentParser()
        p.add_argument("--seconds", type=float, required=True)
        p.add_argument("namespaces", nargs="+")
        return run_sink(p.parse_args(argv[1:]))
    if argv and argv[0] == "_flows":
        p = argparse.ArgumentParser()
        for k, t in (("--host", int), ("--hosts", int), ("--load", float), ("--rate-bps", float),
                     ("--seconds", float), ("--seed", int)):
            p.add_argument(k, type=t, required=True)
        for k in ("--cdf", "--subnet-base", "--cc"):
            p.add_argument(k, required=True)
        return run_flows(p.parse_args(argv[1:]))
    if argv and argv[0] in ("_recv", "_send"):
        p = argparse.ArgumentParser()
        if argv[0] == "_recv":
            for k in ("--span", "--bin"):
                p.add_argument(k, type=float, required=True)
            p.add_argument("--out", required=True)
            return run_receiver(p.parse_args(argv[1:]))
        p.add_argument("--dst", required=True)
        p.add_argument("--port", type=int, required=True)
        p.add_argument("--start", type=float, required=True)
        p.add_argument("--stop", type=float, required=True)
        p.add_argument("--cc", required=True)
        return run_sender(p.parse_args(argv[1:]))
    a = parse_args(argv)
    if os.geteuid() != 0:
        raise ToolError("must run as root (namespaces, hugepages)")
    for b in (a.sluice, a.allocator):
        if not os.access(b, os.X_OK):
            raise ToolError(f"{b} is not built (ninja -C build)")
    a.out = os.path.abspath(a.out)
    os.makedirs(a.out, exist_ok=True)
    signal.signal(signal.SIGTERM, netns.on_sigterm)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    # The testbed's sysctl sets reno as each namespace's default (cubic may
    # not be allowed there); the senders choose --cc per socket.
    tb = netns_testbed.Testbed(argparse.Namespace(**dict(vars(a), cc="reno")),
                               f"{a.prefix}ft{os.getpid()}")
    runs, updates = {}, []
    try:
        gate = fidelity.Gate(PROG, a, fidelity.floor_step(a, "-l 0,1", a.out, PROG))
        tb.up(SENDERS + 1)
        for run in a.runs:
            print(f"{PROG}: {run}", flush=True)
            if run == "updates":
                updates = [run_updates(tb, cdf, a, gate) for cdf in a.update_cdfs]
            else:
                runs[run] = run_one(tb, run, a, gate)
    except (KeyboardInterrupt, netns.Terminated):
        print(f"{PROG}: interrupted, tearing down", file=sys.stderr, flush=True)
        return cli.EXIT_INTERRUPTED
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        tb.teardown()
    print(write_outputs(runs, analyse(runs, a), updates, a, gate), flush=True)
    provenance.write(a.out, seeds=[a.seed], binaries=[a.sluice, a.allocator])
    return gate.verdict()
