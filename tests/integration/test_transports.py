#!/usr/bin/python3
"""Emulated hosts running the papers' transports do what each transport's
paper says (docs/transports.md), in exact fabric time, on one switch with
hosts on 1-2 us links:

- DCTCP (Alizadeh et al., "Data Center TCP", section 3.3): two long flows
  into one 10 Gb/s port with step marking at K = 20 packets keep the queue
  between the analysis's Q_max = K + N and Q_min = Q_max - A, with
  A = 1/2 sqrt(2N(C x RTT + K)) packets (here C x RTT = 48 packets, A = 8.2),
  and the link busy (the queue never empties).
- DCQCN (Zhu et al., SIGCOMM 2015): a flow that joins 10 ms after another
  ends up with an equal share of a 40 Gb/s port (RED marking, the paper's
  5 KB / 200 KB / 1 %), and the port stays busy.
- HPCC (Li et al., SIGCOMM 2019): one flow holds the 100 Gb/s link at
  eta = 0.95 of its frame rate with a queue of at most a packet; when a
  second flow joins, the queue it causes drains back to at most two packets
  within 10 base RTTs and the link stays at its target.
- TIMELY (Mittal et al., SIGCOMM 2015), paper parameters at 10 Gb/s: after
  start-up the RTT (base RTT + queueing delay) stays between T_low / 2 and
  T_high and averages near T_low; the link stays busy and the two flows
  share it equally.
- TCP with a 10 ms minimum RTO: flows whose last segments are dropped wait
  out one RTO (fast retransmit on or off: a tail loss has no duplicate ACKs).
- Flowtune (Perry et al., NSDI 2017, section 4): with pace_at: host the
  endpoints pace at their allocated rates: a flow joining another at
  10 Gb/s has half the link from the first rates on, and the edge holds
  and drops nothing (with edge pacing it drops what DCTCP sends beyond the
  rate).
- pFabric (Alizadeh et al., SIGCOMM 2013, sections 4 and 4.2): a host
  sends a short flow's segments before a long flow's it started at the same
  instant (the host serves by rank), so the short flow finishes within 10 %
  of its ideal FCT; every data frame carries its flow's remaining bytes,
  falling as the flow is acknowledged, every ACK rank 0; an incast into a
  small drop-tail buffer loses segments and every flow still completes by
  its fixed timeout and SACKs.
- Replies first: an ACK in a switch's reply queue passes a standing
  queue; a BFC NIC's reply queue is never paused by the BFC switch (its
  frames name no queue), where the same ACKs in their flows' queues are.
- Incast: eight flows into one port all complete with DCTCP under drop-tail
  with a small buffer, and with DCQCN under PFC without a drop.
- Where the time went: every finished flow of every run here has its FCT
  split into the sender's, the network's, the receiver's and the ACK's
  parts, none negative, adding up to it to the ns; a lone one-segment flow's
  parts are its links' serialisation and delay.
- Repeatability: the same run twice gives identical completions and
  captures; another seed changes RED's marks.
- A run that ends before the flows start writes a valid summary and
  counts the flow as never started.
- Bad input: --check refuses a flow to an unknown host, a flow larger than
  the sequence space, and HPCC on a switch without INT, each with the file,
  line and reason."""

import csv
import math
import os
import subprocess
import sys

import yaml

import harness
from harness import check

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
from sluicepy import pcapio, queue_trace, transport_frames  # noqa: E402

HEADER = "flow_id,src,dst,src_ip,dst_ip,size,packets,arrival_time,start_time,end_time,is_incast\n"
DATA_FRAME = 1000 + 70  # a full data segment's frame (MSS 1000), INT room aside
WIRE = 24


def write_flows(path, flows):
    with open(path, "w") as f:
        f.write(HEADER)
        for fid, s, d, size, t in flows:
            f.write(f"{fid},h{s},h{d},10.0.{s}.2,10.0.{d}.2,{size},0,{t:.9f},0,0,0\n")


def star_config(tmp, name, hosts, rate, delay, transport, sw_extra=None, seed=None,
                top_extra=None, nic=None):
    """One switch, `hosts` transport hosts h0.. at `rate` on links of
    `delay` (NICs `nic`, else the default), each capturing what it
    receives into NAME.tx_hI.pcap."""
    ports = []
    for i in range(hosts):
        p = harness.replay_host(f"h{i}", f"02:00:00:00:0f:{i:02x}",
                                f"02:00:00:00:0f:{0xa0 + i:02x}", f"10.0.{i}.1/24", rate,
                                tx=f"{name}.tx_h{i}.pcap", nic=nic)
        p["peer_ip"] = f"10.0.{i}.2"
        p["delay"] = delay
        p["pcap"]["snaplen"] = 200
        ports.append(p)
    extra = dict(queues_per_port=1, queue_capacity=65536, buffer={"size": "32MB", "alpha": 64.0})
    extra.update(sw_extra or {})
    path = harness.write_config(os.path.join(tmp, f"{name}.yaml"),
                                [harness.switch("s1", ports, [], **extra)],
                                clock={"mode": "exact"})
    with open(path) as f:
        doc = yaml.safe_load(f)
    doc["transport"] = dict(transport, flows=f"{name}.flows.csv",
                            completions=f"{name}.completions.csv")
    if seed is not None:
        doc["seed"] = seed
    doc.update(top_extra or {})
    with open(path, "w") as f:
        yaml.safe_dump(doc, f, sort_keys=False)
    return path


def run(binary, tmp, name, hosts, rate, delay, transport, flows, duration, sw_extra=None,
        trace=False, seed=None, top_extra=None, nic=None):
    """Runs the star; returns (summary, completions rows)."""
    write_flows(os.path.join(tmp, f"{name}.flows.csv"), flows)
    cfg = star_config(tmp, name, hosts, rate, delay, transport, sw_extra, seed, top_extra, nic)
    app = (["--queue-trace", f"{name}.qt.csv", "--queue-trace-interval", "0.000001",
            "--queue-trace-ports", f"s1/h{hosts - 1}"] if trace else [])
    _, summary = harness.run_to_end(binary, tmp, cfg, name, duration, app_extra=app)
    with open(os.path.join(tmp, f"{name}.completions.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    check(len(rows) == len(flows), f"{name}: {len(rows)} completions for {len(flows)} flows")
    check_split_adds_up(name, rows)
    return summary, rows


SPLIT = ("sender_seconds", "network_seconds", "receiver_seconds", "ack_seconds")


def ns(seconds):
    """A completions time (seconds with nine decimals) in whole ns, exactly."""
    whole, _, frac = seconds.partition(".")
    sign = -1 if whole.startswith("-") else 1
    return sign * (abs(int(whole)) * 1_000_000_000 + int((frac + "000000000")[:9]))


def check_split_adds_up(name, rows):
    """Every finished flow's FCT is split into the sender's part, the
    network's, the receiver's and the ACK's, none negative, adding up to it
    to the ns."""
    for r in rows:
        if r["finished"] != "1":
            check(all(r[k] == "" for k in SPLIT), f"{name}: unfinished flow {r['flow_id']} "
                  f"has a split {r}")
            continue
        parts = [ns(r[k]) for k in SPLIT]
        check(min(parts) >= 0 and parts[1] > 0 and parts[3] > 0,
              f"{name}: flow {r['flow_id']} split {parts}")
        check(sum(parts) == ns(r["fct_seconds"]),
              f"{name}: flow {r['flow_id']} split {parts} sums to {sum(parts)} ns, "
              f"FCT {ns(r['fct_seconds'])} ns")


def queue_samples(tmp, name, port, lo, hi):
    """(t, bytes) of the port's queue 0 between lo and hi seconds after the
    flow list's time 0."""
    _, queues, ports = queue_trace.read_queue_trace(os.path.join(tmp, f"{name}.qt.csv"))
    # A sample has a queue row only when the queue holds something.
    held = {t: b for t, b, _ in queues.get(("s1", port), {}).get(0, [])}
    return [(t, held.get(t, 0)) for t, _, _, _ in ports[("s1", port)] if lo <= t < hi]


def arrivals(tmp, name, port):
    """Data arrivals at a host, times relative to its first."""
    a = transport_frames.data_arrivals(os.path.join(tmp, f"{name}.tx_{port}.pcap"))
    check(a, f"{name}: no data reached {port}")
    return a


def payload_capacity(rate_bps, frame):
    return rate_bps * 1000 / (frame + WIRE)


def check_dctcp(binary, tmp):
    k, n = 20, 2
    run(binary, tmp, "dctcp", 3, "10Gbps", "10us", {"kind": "dctcp", "base_rtt": "42us"},
        [(1, 0, 2, 20_000_000, 1e-6), (2, 1, 2, 20_000_000, 1e-6)], 0.08,
        sw_extra={"ecn": {"mode": "step", "k": k * DATA_FRAME}}, trace=True)
    # C x RTT in packets: 4 x 10 us of links, two data serialisations and an
    # ACK's (42 us), at 10 Gb/s in 1094-byte wire frames.
    bdp = 10e9 / 8 / (DATA_FRAME + WIRE) * 42e-6
    amplitude = 0.5 * math.sqrt(2 * n * (bdp + k))
    q = [b / DATA_FRAME for _, b in queue_samples(tmp, "dctcp", "h2", 0.005, 0.025)]
    check(len(q) > 10000, f"dctcp: {len(q)} queue samples")
    q_max, q_min = max(q), min(q)
    print(f"dctcp: queue {q_min:.0f}..{q_max:.0f} packets; analysis Q_max {k + n}, amplitude "
          f"{amplitude:.1f} (measured {q_max - q_min:.0f})")
    check(k <= q_max <= k + n + 3, f"dctcp: queue peaks at {q_max} packets, analysis K + N = {k + n}")
    check(0.6 * amplitude <= q_max - q_min <= 1.5 * amplitude,
          f"dctcp: queue amplitude {q_max - q_min} packets, analysis {amplitude:.1f}")
    check(q_min > 0, "dctcp: the queue emptied (the link idled)")
    a = arrivals(tmp, "dctcp", "h2")
    t0 = a[0][0]
    total = sum(transport_frames.throughput(a, t0 + 5_000_000, t0 + 15_000_000).values())
    cap = payload_capacity(10e9, DATA_FRAME)
    check(total >= 0.99 * cap, f"dctcp: {total / 1e9:.2f} Gb/s of {cap / 1e9:.2f} Gb/s")


def check_dcqcn(binary, tmp):
    _, rows = run(binary, tmp, "dcqcn", 3, "40Gbps", "1us", {"kind": "dcqcn", "base_rtt": "5us"},
                  [(1, 0, 2, 200_000_000, 1e-6), (2, 1, 2, 200_000_000, 0.010)], 0.095,
                  sw_extra={"ecn": {"mode": "red", "min": "5KB", "max": "200KB", "pmax": 0.01}})
    check(all(int(r["cnps"]) > 0 for r in rows), "dcqcn: a flow took no CNP")
    a = arrivals(tmp, "dcqcn", "h2")
    t0 = a[0][0]
    share = transport_frames.throughput(a, t0 + 35_000_000, t0 + 45_000_000)
    total = sum(share.values())
    cap = payload_capacity(40e9, DATA_FRAME)
    print("dcqcn: 25-35 ms after the join: " +
          ", ".join(f"flow {f} {v / 1e9:.2f} Gb/s" for f, v in sorted(share.items())))
    check(set(share) == {1, 2}, f"dcqcn: flows seen {sorted(share)}")
    check(all(0.45 <= v / total <= 0.55 for v in share.values()),
          f"dcqcn: shares {[round(v / total, 3) for v in share.values()]}, expected 0.5 each")
    check(total >= 0.9 * cap, f"dcqcn: {total / 1e9:.2f} Gb/s of {cap / 1e9:.2f}")


def check_hpcc(binary, tmp):
    frame = DATA_FRAME + 80  # with the INT room
    base_rtt = 5_000
    summary, _ = run(binary, tmp, "hpcc", 3, "100Gbps", "1us",
                     {"kind": "hpcc", "base_rtt": "5us"},
                     [(1, 0, 2, 100_000_000, 1e-6), (2, 1, 2, 100_000_000, 0.001)], 0.054,
                     sw_extra={"int": {"enabled": True}}, trace=True)
    stamped = harness.find_port(summary, "s1", "h2").get("int_stamped", 0)
    check(stamped > 0, "hpcc: the switch stamped no INT record")
    a = arrivals(tmp, "hpcc", "h2")
    t0 = a[0][0]
    alone = sum(transport_frames.throughput(a, t0 + 200_000, t0 + 900_000).values())
    # eta of the link's frame rate, in payload.
    target = 0.95 * 100e9 * 1000 / frame
    check(abs(alone / target - 1) <= 0.03,
          f"hpcc: one flow at {alone / 1e9:.2f} Gb/s, target {target / 1e9:.2f}")
    q = queue_samples(tmp, "hpcc", "h2", 0.0002, 0.0009)
    check(max(b for _, b in q) <= frame, f"hpcc: queue {max(b for _, b in q)} B with one flow")
    after = queue_samples(tmp, "hpcc", "h2", 0.001, 0.003)
    peak = max(b for _, b in after)
    settled = max(t for t, b in after if b > 2 * frame) - 0.001
    print(f"hpcc: one flow {alone / 1e9:.2f} Gb/s (target {target / 1e9:.2f}); the join's queue "
          f"peaks at {peak} B and stays under two packets {settled * 1e6:.1f} us after it")
    check(settled <= 10 * base_rtt * 1e-9,
          f"hpcc: queue above two packets until {settled * 1e6:.1f} us after the join")
    both = transport_frames.throughput(a, t0 + 1_100_000, t0 + 2_000_000)
    check(sum(both.values()) >= 0.97 * target,
          f"hpcc: two flows {sum(both.values()) / 1e9:.2f} Gb/s, target {target / 1e9:.2f}")


def check_timely(binary, tmp):
    t_low, t_high, base = 50e-6, 500e-6, 9e-6
    run(binary, tmp, "timely", 3, "10Gbps", "2us", {"kind": "timely", "base_rtt": "9us"},
        [(1, 0, 2, 50_000_000, 1e-6), (2, 1, 2, 50_000_000, 1e-6)], 0.09, trace=True)
    q = queue_samples(tmp, "timely", "h2", 0.005, 0.04)
    rtts = [base + b * 8 / 10e9 for _, b in q]
    mean = sum(rtts) / len(rtts)
    print(f"timely: RTT {min(rtts) * 1e6:.1f}..{max(rtts) * 1e6:.1f} us, mean "
          f"{mean * 1e6:.1f} us (T_low 50, T_high 500)")
    check(min(rtts) >= t_low / 2 and max(rtts) <= t_high,
          f"timely: RTT {min(rtts) * 1e6:.1f}..{max(rtts) * 1e6:.1f} us")
    check(0.8 * t_low <= mean <= 1.5 * t_low, f"timely: mean RTT {mean * 1e6:.1f} us")
    a = arrivals(tmp, "timely", "h2")
    t0 = a[0][0]
    share = transport_frames.throughput(a, t0 + 5_000_000, t0 + 35_000_000)
    total = sum(share.values())
    check(total >= 0.99 * payload_capacity(10e9, DATA_FRAME), f"timely: {total / 1e9:.2f} Gb/s")
    check(all(0.47 <= v / total <= 0.53 for v in share.values()),
          f"timely: shares {[round(v / total, 3) for v in share.values()]}")


def check_tcp_rto(binary, tmp):
    for fast in (False, True):
        name = f"tcp_rto_{int(fast)}"
        summary, rows = run(
            binary, tmp, name, 4, "10Gbps", "2us",
            {"kind": "tcp", "base_rtt": "9us",
             "tcp": {"min_rto": "10ms", "fast_retransmit": fast, "init_cwnd": 10}},
            [(i + 1, i, 3, 10_000, 1e-6) for i in range(3)], 0.08,
            sw_extra={"buffer": {"size": "12KB", "alpha": 64.0}})
        drops = sum(sum(r.values()) for r in harness.all_drops(summary).values())
        check(drops > 0, f"{name}: nothing was dropped")
        for r in rows:
            fct = float(r["fct_seconds"])
            print(f"{name}: flow {r['flow_id']} {fct * 1e3:.3f} ms, {r['timeouts']} timeout(s)")
            check(r["finished"] == "1" and 0.010 <= fct <= 0.0102 and r["timeouts"] == "1",
                  f"{name}: flow {r['flow_id']}: FCT {r['fct_seconds']} s, timeouts "
                  f"{r['timeouts']}; expected one 10 ms RTO")


def check_flowtune(binary, tmp):
    """Flowtune's endpoints pace themselves (pace_at: host): a flow joining
    another at 10 Gb/s gets half the link from the allocator's first rates
    on, and the edge drops nothing (its pacer holds nothing); the edge's
    pacer, behind the same DCTCP senders, drops what exceeds the rate."""
    flows = [(1, 0, 2, 20_000_000, 1e-6), (2, 1, 2, 20_000_000, 0.002)]
    results = {}
    for pace in ("host", "edge"):
        name = f"flowtune_{pace}"
        summary, _ = run(binary, tmp, name, 3, "10Gbps", "1.5us",
                         {"kind": "dctcp", "base_rtt": "8us"}, flows, 0.07,
                         sw_extra={"flowtune": {"pace_at": pace}},
                         top_extra={"flowtune_allocator": {}})
        a = arrivals(tmp, name, "h2")
        t0 = a[0][0]
        share = transport_frames.throughput(a, t0 + 2_100_000, t0 + 3_000_000)
        ft = summary["switches"][0]["flowtune"]
        drops = sum(sum(r.values()) for r in harness.all_drops(summary).values())
        results[pace] = (share, ft, drops)
        print(f"flowtune pace_at {pace}: 0.1-1 ms after the join " +
              ", ".join(f"flow {f} {v / 1e9:.2f} Gb/s" for f, v in sorted(share.items())) +
              f"; {ft['rate_updates']} rates applied, {drops} drops")
    share, ft, drops = results["host"]
    total = sum(share.values())
    check(set(share) == {1, 2} and all(0.48 <= v / total <= 0.52 for v in share.values()),
          f"flowtune host pacing: shares {share}")
    check(total >= 0.98 * payload_capacity(10e9, DATA_FRAME), f"flowtune: {total / 1e9:.2f} Gb/s")
    check(ft["rate_updates"] > 0 and drops == 0 and ft["held"] == 0,
          f"flowtune host pacing: {ft['rate_updates']} rates, {drops} drops, {ft['held']} held")
    check(results["edge"][2] > 0 and results["edge"][1]["held"] > 0,
          "flowtune edge pacing: the edge held and dropped nothing (the comparison proves nothing)")


def check_pfabric(binary, tmp):
    name = "pfabric_host"
    _, rows = run(binary, tmp, name, 3, "10Gbps", "1us", {"kind": "pfabric", "base_rtt": "6us"},
                  [(1, 0, 2, 1_000_000, 1e-6), (2, 0, 2, 20_000, 1e-6)], 0.06)
    by_id = {int(r["flow_id"]): r for r in rows}
    # (The long flow's first segment waits at its host behind the short
    # flow's 20, longer than the fixed RTO of 18 us: it may time out once.)
    check(all(r["finished"] == "1" for r in rows) and by_id[2]["timeouts"] == "0",
          f"{name}: {rows}")
    short = float(by_id[2]["fct_seconds"]) / float(by_id[2]["ideal_seconds"])
    print(f"{name}: the short flow's FCT is {short:.3f} x its ideal beside a long flow")
    check(short <= 1.1, f"{name}: the short flow took {short:.2f} x its ideal (not served first)")
    last = {}
    for _, frame, _ in pcapio.read_pcap(os.path.join(tmp, f"{name}.tx_h2.pcap"), 200):
        p = transport_frames.parse(frame)
        if p is None or p[0] != "data":
            continue
        # Bytes not yet acknowledged: at most the flow, at least what
        # follows the segment (nothing is lost here, so nothing is SACKed).
        size = 1_000_000 if p[1] == 1 else 20_000
        check(p[6] is not None and size - p[2] <= p[6] <= size,
              f"{name}: flow {p[1]} rank {p[6]} at seq {p[2]}")
        check(p[6] <= last.get(p[1], size), f"{name}: flow {p[1]}'s rank rose")
        last[p[1]] = p[6]
    check(set(last) == {1, 2}, f"{name}: data of flows {sorted(last)}")
    acks = [transport_frames.parse(f) for _, f, _ in
            pcapio.read_pcap(os.path.join(tmp, f"{name}.tx_h0.pcap"), 200)]
    acks = [p for p in acks if p and p[0] == "ack"]
    check(acks and all(p[6] == 0 for p in acks), f"{name}: ACKs without rank 0")

    name = "pfabric_incast"
    summary, rows = run(binary, tmp, name, 4, "10Gbps", "1us",
                        {"kind": "pfabric", "base_rtt": "6us"},
                        [(i + 1, i, 3, 100_000, 1e-6) for i in range(3)], 0.06,
                        sw_extra={"buffer": {"size": "24KB", "alpha": 64.0}})
    drops = sum(sum(r.values()) for r in harness.all_drops(summary).values())
    timeouts = sum(int(r["timeouts"]) for r in rows)
    print(f"{name}: {drops} drops, {timeouts} timeouts, FCTs " +
          ", ".join(f"{float(r['fct_seconds']) * 1e6:.0f} us" for r in rows))
    check(drops > 0 and timeouts > 0, f"{name}: {drops} drops, {timeouts} timeouts")
    check(all(r["finished"] == "1" for r in rows), f"{name}: a flow did not finish")


def incast_flows():
    return [(i + 1, i, 8, 500_000, 1e-6) for i in range(8)]


DCQCN_INCAST = dict(
    transport={"kind": "dcqcn", "base_rtt": "5us"},
    sw_extra={"buffer": {"size": "2MB", "alpha": 64.0},
              "ecn": {"mode": "red", "min": "5KB", "max": "200KB", "pmax": 0.01},
              "pfc": {"mode": "pfc", "xoff": "50KB"}})


def check_incast(binary, tmp):
    summary, rows = run(binary, tmp, "dctcp_incast", 9, "10Gbps", "2us",
                        {"kind": "dctcp", "base_rtt": "9us", "tcp": {"min_rto": "10ms"}},
                        incast_flows(), 0.1,
                        sw_extra={"buffer": {"size": "64KB", "alpha": 64.0},
                                  "ecn": {"mode": "step", "k": "30KB"}})
    drops = sum(sum(r.values()) for r in harness.all_drops(summary).values())
    print(f"dctcp incast: {drops} drops, " +
          ", ".join(f"{float(r['fct_seconds']) * 1e3:.2f}" for r in rows) + " ms")
    check(drops > 0, "dctcp incast: the 64 KB buffer dropped nothing (the test needs losses)")
    check(all(r["finished"] == "1" for r in rows), "dctcp incast: a flow did not finish")
    summary, rows = run(binary, tmp, "dcqcn_incast", 9, "100Gbps", "1us",
                        DCQCN_INCAST["transport"], incast_flows(), 0.08,
                        sw_extra=DCQCN_INCAST["sw_extra"])
    pfc = sum(p.get("pfc_frames_sent", 0) for _, p in harness.summary_ports(summary))
    check(not harness.all_drops(summary), f"dcqcn+pfc incast: drops {harness.all_drops(summary)}")
    check(pfc > 0, "dcqcn+pfc incast: no PFC frame (the test needs pauses)")
    check(all(r["finished"] == "1" for r in rows), "dcqcn+pfc incast: a flow did not finish")


def read(path):
    with open(path, "rb") as f:
        return f.read()


def check_repeat(binary, tmp):
    outs = []
    for name, seed in (("rep_a", 1), ("rep_b", 1), ("rep_c", 2)):
        run(binary, tmp, name, 9, "100Gbps", "1us", DCQCN_INCAST["transport"], incast_flows(),
            0.08, sw_extra=DCQCN_INCAST["sw_extra"], seed=seed)
        outs.append((read(os.path.join(tmp, f"{name}.completions.csv")),
                     read(os.path.join(tmp, f"{name}.tx_h8.pcap")),
                     read(os.path.join(tmp, f"{name}.tx_h0.pcap"))))
    check(outs[0] == outs[1], "repeat: the same run twice differs")
    check(outs[0] != outs[2], "repeat: seed 2 gave the same run as seed 1 (RED marks at random)")


def check_split(binary, tmp):
    """One 100-byte flow alone on the star: it leaves the sender's NIC at
    once; its one frame crosses two 1 us links at 10 Gb/s, stored and
    forwarded by the switch; the ACK leaves the receiver's NIC at once and
    comes back the same way."""
    _, rows = run(binary, tmp, "split", 2, "10Gbps", "1us", {"kind": "dctcp"},
                  [(1, 0, 1, 100, 1e-6)], 0.052)
    r = rows[0]
    check(r["finished"] == "1", f"split: the flow did not finish: {r}")
    header = DATA_FRAME - 1000  # Ethernet, IPv4, UDP and the transport header

    def hop_ns(frame):  # serialisation of frame + WIRE bytes at 10 Gb/s, then 1 us
        return (frame + WIRE) * 8 / 10 + 1000

    want = (0, 2 * hop_ns(header + 100), 0, 2 * hop_ns(header))
    got = tuple(ns(r[k]) for k in SPLIT)
    print(f"split: sender {got[0]} ns, network {got[1]} ns, receiver {got[2]} ns, "
          f"ack {got[3]} ns; from the links {want[0]}, {want[1]:.1f}, {want[2]}, {want[3]:.1f}")
    check(all(abs(g - w) <= 1 for g, w in zip(got, want)),
          f"split: {got} ns, the links give {want}")


def check_reply_queue(binary, tmp):
    """Two 2 MB flows into h0 keep a queue standing at the switch's port to
    h0; a 100-byte flow from h0 to h1 starts once it stands, and its ACK
    leaves through that port. Replies as data wait behind the queue; with
    reply_queue they go first: the ACK's trip is then its two hops plus at
    most one data frame already on the wire."""
    flows = [(1, 2, 0, 2_000_000, 1e-6), (2, 3, 0, 2_000_000, 1e-6), (3, 0, 1, 100, 300e-6)]
    ack_ns = {}
    for name, extra in (("replies_as_data", {}), ("reply_queue", {"reply_queue": True})):
        _, rows = run(binary, tmp, name, 4, "10Gbps", "1us", {"kind": "dctcp"}, flows, 0.06,
                      sw_extra=extra)
        r = next(r for r in rows if r["flow_id"] == "3")
        check(all(r["finished"] == "1" for r in rows), f"{name}: a flow did not finish: {rows}")
        ack_ns[name] = ns(r["ack_seconds"])
    header = DATA_FRAME - 1000
    two_hops = 2 * ((header + WIRE) * 8 / 10 + 1000)
    one_frame = (DATA_FRAME + WIRE) * 8 / 10
    print(f"reply queue: the ACK's trip {ack_ns['replies_as_data']} ns as data, "
          f"{ack_ns['reply_queue']} ns in the reply queue (two hops {two_hops:.0f} ns, "
          f"one data frame {one_frame:.0f} ns)")
    check(ack_ns["reply_queue"] <= two_hops + one_frame + 1,
          f"reply queue: the ACK took {ack_ns['reply_queue']} ns")
    check(ack_ns["replies_as_data"] > two_hops + 10 * one_frame,
          f"reply queue: as data the ACK took only {ack_ns['replies_as_data']} ns: no queue "
          "stood (the test needs one)")


def check_nic_reply_queue_under_bfc(binary, tmp):
    """BFC switch with one queue per port and BFC NICs: h2 and h3 send 1 MB
    each into h1, so the port to h1 stands above BFC's threshold, and h0's
    ACKs for h1's 1 MB flow to h0 join that queue. h0 sends nothing but
    replies. With the NIC's reply queue its ACKs carry no queue number, so
    the switch pauses nothing of h0's (and counts no invalid BFC frame at
    h0); with replies in the flows' queues it pauses h0's ACK queue as a
    flow's. Every flow finishes either way."""
    flows = [(1, 1, 0, 1_000_000, 1e-6), (2, 2, 1, 1_000_000, 1e-6),
             (3, 3, 1, 1_000_000, 1e-6)]
    bfc = dict(queues_per_port=1, bfc={"assignment": "dynamic"})
    paused = {}
    for name, rq in (("bfc_replies_as_data", False), ("bfc_nic_reply_queue", True)):
        nic = {"mode": "bfc", "queue_by": "flow", "queues": 16, "reply_queue": rq}
        summary, rows = run(binary, tmp, name, 4, "10Gbps", "1us", {"kind": "dctcp"}, flows,
                            0.06, sw_extra=bfc, nic=nic)
        check(all(r["finished"] == "1" for r in rows), f"{name}: a flow did not finish: {rows}")
        h0 = harness.find_port(summary, "s1", "h0")
        h2 = harness.find_port(summary, "s1", "h2")
        check(h2["bfc_pause_sent"] > 0, f"{name}: the switch never paused h2 (no queue stood)")
        check(h0["host_bfc_invalid"] == 0, f"{name}: h0 counted invalid BFC frames: {h0}")
        paused[rq] = h0["bfc_pause_sent"]
    print(f"nic reply queue under BFC: the switch paused h0's replies {paused[False]}x as "
          f"data, {paused[True]}x from the NIC's reply queue")
    check(paused[True] == 0, f"BFC paused h0's reply queue {paused[True]}x")
    check(paused[False] > 0, "as data, h0's ACKs were never paused: the test needs a pause")


def check_short_run(binary, tmp):
    """A run that stops before the flow list's time 0 (50 ms in) writes a
    valid summary: its end is before the replay start, a negative number."""
    summary, rows = run(binary, tmp, "short", 2, "10Gbps", "1us", {"kind": "dctcp"},
                        [(1, 0, 1, 10_000, 1e-6)], 0.004)
    check(summary["run_end_epoch_seconds"] < summary["replay_start_epoch_seconds"],
          f"short run: end {summary['run_end_epoch_seconds']}")
    check(rows[0]["finished"] == "0" and rows[0]["started"] == "0",
          f"short run: the flow {rows[0]}")


def check_bad_input(binary, tmp):
    def refused(name, flows, transport, sw_extra=None, expect=()):
        with open(os.path.join(tmp, f"{name}.flows.csv"), "w") as f:
            f.write(HEADER + flows)
        cfg = star_config(tmp, name, 2, "10Gbps", "1us", transport, sw_extra)
        r = subprocess.run([binary, "--", "--config", cfg, "--check"], cwd=tmp,
                           capture_output=True, text=True, timeout=60)
        check(r.returncode == 1, f"{name}: --check exit {r.returncode}\n{r.stderr}")
        for text in expect:
            check(text in r.stderr, f"{name}: --check said\n{r.stderr}\nexpected {text!r}")
    refused("bad_host", "1,h0,h9,10.0.0.2,10.0.9.2,1000,1,0.000001,0,0,0\n", {"kind": "dctcp"},
            expect=("bad_host.flows.csv:2: flow 1: destination 10.0.9.2 is not a transport host",))
    refused("bad_size", "1,h0,h1,10.0.0.2,10.0.1.2,5000000000,1,0.000001,0,0,0\n",
            {"kind": "dcqcn"}, expect=("bad_size.flows.csv:2:", "sequence space"))
    refused("bad_int", "1,h0,h1,10.0.0.2,10.0.1.2,1000,1,0.000001,0,0,0\n", {"kind": "hpcc"},
            expect=("transport kind hpcc needs INT on every switch",))


def test(binary, srcdir):
    with harness.TempDir("transports") as tmp:
        check_bad_input(binary, tmp)
        check_short_run(binary, tmp)
        check_split(binary, tmp)
        check_reply_queue(binary, tmp)
        check_nic_reply_queue_under_bfc(binary, tmp)
        check_dctcp(binary, tmp)
        check_dcqcn(binary, tmp)
        check_hpcc(binary, tmp)
        check_timely(binary, tmp)
        check_tcp_rto(binary, tmp)
        check_flowtune(binary, tmp)
        check_pfabric(binary, tmp)
        check_incast(binary, tmp)
        check_repeat(binary, tmp)


if __name__ == "__main__":
    harness.main(test)
