#!/usr/bin/python3
"""TCD in the data path (SPEC 4.4, docs/mechanisms/tcd.md): the paper's
victim shape (its section 5.2.4) on two switches with PFC.

    h1 (10G) --\\                        /-- r1 (1G)   truly congested
                s ==(40G, 1 us)== b ==
    h2 (10G) --/                        \\-- r2 (40G)  the victim's receiver

h1 sends 2,000 ECT(0) frames at 10 Gb/s to r1, whose 1 Gb/s port at B is
the only real bottleneck; h2 sends 2,000 ECT(0) frames at 5 Gb/s to r2,
which B forwards at once at the link's own rate. B's PFC pauses S's port
toward B (the bytes from S wait in front of r1), so h2's frames queue at S
behind a pause, never because S's port is short of capacity. ECN step
marking at K = 10 KB on both switches; PFC XOFF 50 KB. One process, one
worker, exact fabric time.

r2's port runs at the 40G of the link from S: each resume releases S's
backlog at 40G, and a 10G port at r2 would hold a real queue of the
victim's frames above K after every resume (exact time shows it: 1,368 CE
at B's port to r2, correctly; the real-time shaper's 250 KB bucket used to
hide that queue).

- ecn+pfc: S's paused queue passes K, so h2's frames reach r2 marked CE:
  the victim is told to slow down for congestion it does not cause.
- tcd+pfc: S's queue is OFF while paused and each ON period is short, so
  it stays undetermined: h2's frames reach r2 marked UE (ECT(1)) and never
  CE, while h1's frames, queued at B's truly congested port to r1, which
  nothing pauses, reach r1 marked CE. S counts pauses, UE marks and time
  undetermined; its median ON period stays within max_T_on."""

import os
import sys

import harness
from harness import check, check_eq

FRAMES = 2000
FRAME = 1514
ECT0, UE, CE = 2, 1, 3


def config(tmp, name, tcd):
    extra = {"pfc": {"mode": "pfc", "xoff": "50KB"}, "ecn": {"mode": "step", "k": "10KB"},
             "buffer": {"size": "16MB", "alpha": 8.0}}
    if tcd:
        # max_T_on must cover the drain of what a pause builds at S: its
        # inputs (15 Gb/s) keep arriving for the whole pause, which B's 1G
        # drain toward r1 makes long, so S resumes with ~45-50 KB that its
        # 40G port drains at a net 25 Gb/s in up to ~30 us. The default
        # (21 us here, from XOFF - XON and the link) does not cover it, and
        # exact time, which shows S's whole queue, then sees some ON
        # periods end above q_th: CE (docs/mechanisms/tcd.md).
        extra["tcd"] = {"enabled": True, "max_t_on": "60us"}
    up = {"delay": "1us", "role": "switch", "rate": "40Gbps", "hop_rtt": "10us"}
    s = harness.switch("s", [
        harness.replay_host("h1", "02:00:00:00:0e:01", "02:00:00:00:0e:a1", "10.0.1.1/24",
                            "10Gbps", rx="h1.pcap"),
        harness.replay_host("h2", "02:00:00:00:0e:02", "02:00:00:00:0e:a2", "10.0.2.1/24",
                            "10Gbps", rx="h2.pcap"),
        dict(up, name="b", link="b/s"),
    ], [harness.route("10.0.3.0/24", "b"), harness.route("10.0.4.0/24", "b")], **extra)
    b = harness.switch("b", [
        dict(up, name="s", link="s/b"),
        harness.replay_host("r1", "02:00:00:00:0e:03", "02:00:00:00:0e:a3", "10.0.3.1/24", "1Gbps",
                            tx=f"{name}_r1.pcap"),
        harness.replay_host("r2", "02:00:00:00:0e:04", "02:00:00:00:0e:a4", "10.0.4.1/24",
                            "40Gbps", tx=f"{name}_r2.pcap"),
    ], [harness.route("10.0.1.0/24", "s"), harness.route("10.0.2.0/24", "s")], **extra)
    return harness.write_config(os.path.join(tmp, name + ".yaml"), [s, b], mbufs=32768,
                                clock={"mode": "exact"})


def run(binary, tmp, name, tcd):
    trace = ["--queue-trace", os.path.join(tmp, f"{name}_trace.csv"), "--queue-trace-ports",
             "s/b,b/r1", "--queue-trace-interval", "0.00002"]
    # PFC holds the victim behind r1's 1 Gb/s drain: both flows take ~50 ms.
    with harness.Sluice(binary, tmp, config(tmp, name, tcd), name, duration=0.12,
                        app_extra=trace) as s:
        s.wait(timeout=180)
        s.expect_clean_exit()
        summary = s.summary()
    harness.check_identity(summary)
    return summary


def ecn_counts(tmp, path):
    """{ECN field: frames} of a capture."""
    counts = {}
    for e in harness.pcap_ecn_fields(os.path.join(tmp, path)):
        counts[e] = counts.get(e, 0) + 1
    return counts


def check_common(summary, tmp, name):
    check_eq(harness.all_drops(summary), {}, f"{name}: drops (PFC is lossless)")
    sb = harness.find_port(summary, "s", "b")
    check(sb["pfc_frames_received"] > 0 and sb["pfc_paused_ns"] > 0,
          f"{name}: B never paused S's port toward it: {sb}")
    r1, r2 = ecn_counts(tmp, f"{name}_r1.pcap"), ecn_counts(tmp, f"{name}_r2.pcap")
    check_eq(sum(r1.values()), FRAMES, f"{name}: frames r1 received")
    check_eq(sum(r2.values()), FRAMES, f"{name}: frames r2 received")
    return sb, r1, r2


def check_ecn_pfc(summary, tmp):
    sb, r1, r2 = check_common(summary, tmp, "ecn")
    check(r2.get(CE, 0) > 0, f"ecn+pfc: the victim's frames at r2 were never marked CE: {r2}")
    print(f"ecn+pfc: S paused for {sb['pfc_paused_ns'] / 1e6:.2f} ms; r2 (victim) got "
          f"{r2.get(CE, 0)} CE of {FRAMES}; r1 got {r1.get(CE, 0)} CE")


def check_trace(tmp):
    """The queue trace shows each port's TCD state over time: S's port toward
    B undetermined while paused, B's port to r1 in congestion."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                    "tools"))
    from sluicepy.queue_trace import read_tcd_trace
    states = read_tcd_trace(os.path.join(tmp, "tcd_trace.csv"))
    sb = [row for rows in states.get(("s", "b"), {}).values() for row in rows]
    r1 = [row for rows in states.get(("b", "r1"), {}).values() for row in rows]
    check(any(st == "undetermined" and paused for _, st, _, paused in sb),
          "trace: S/b never sampled undetermined while paused")
    check(any(st == "congestion" for _, st, _, _ in r1),
          "trace: B/r1 never sampled in congestion")
    undetermined = sum(1 for _, st, _, _ in sb if st == "undetermined")
    print(f"trace: S/b {undetermined} of {len(sb)} samples undetermined; B/r1 "
          f"{sum(1 for _, st, _, _ in r1 if st == 'congestion')} of {len(r1)} in congestion")


def check_tcd(summary, tmp):
    sb, r1, r2 = check_common(summary, tmp, "tcd")
    check_eq(r2.get(CE, 0), 0, f"tcd+pfc: victim frames at r2 marked CE ({r2})")
    check(r2.get(UE, 0) > 0, f"tcd+pfc: no victim frame at r2 was marked UE: {r2}")
    check(r1.get(CE, 0) > 0, f"tcd+pfc: r1's truly congested port marked nothing CE: {r1}")
    check(sb["tcd_pauses"] > 0 and sb["tcd_undetermined_ns"] > 0,
          f"tcd+pfc: S's port toward B was never OFF / undetermined: {sb}")
    check_eq(sb["tcd_ce_marks"], 0, "tcd+pfc: CE marks at S's paused port")
    check(sb["tcd_ue_marks"] > 0, f"tcd+pfc: no UE mark at S's paused port: {sb}")
    br1 = harness.find_port(summary, "b", "r1")
    check(br1["tcd_ce_marks"] > 0 and br1["tcd_pauses"] == 0,
          f"tcd+pfc: B's port to r1 (never paused) did not mark CE like DCTCP: {br1}")
    # Most ON periods are the short gaps between B's XON and its next XOFF;
    # a few are long (while S's own PFC holds h1 back, nothing refills B's
    # queue toward r1), so the median, not the tail, is held to max_T_on.
    check(sb["tcd_on_periods"] > 0 and sb["tcd_on_period_p50_ns"] <= sb["tcd_max_t_on_ns"],
          f"tcd+pfc: S's ON periods (median bucket {sb['tcd_on_period_p50_ns']} ns) beyond "
          f"max_T_on {sb['tcd_max_t_on_ns']} ns")
    print(f"tcd+pfc: r2 (victim) got {r2.get(UE, 0)} UE, 0 CE of {FRAMES}; r1 got "
          f"{r1.get(CE, 0)} CE; S/b: {sb['tcd_pauses']} pauses, "
          f"{sb['tcd_undetermined_ns'] / 1e6:.2f} ms undetermined, {sb['tcd_on_periods']} ON "
          f"periods (p99 <= {sb['tcd_on_period_p99_ns']} ns, max_T_on "
          f"{sb['tcd_max_t_on_ns']} ns)")


def test(binary, srcdir):
    with harness.TempDir("tcd") as tmp:
        for i, (h, dst, gap) in enumerate((("h1", "10.0.3.", 1.2e-6), ("h2", "10.0.4.", 2.4e-6)),
                                          start=1):
            frames = harness.udp_frames(f"02:00:00:00:0e:a{i}", f"02:00:00:00:0e:0{i}",
                                        f"10.0.{i}.", dst, FRAMES, sizes=(FRAME,), flows=1,
                                        tos=ECT0)
            harness.write_pcap(os.path.join(tmp, h + ".pcap"), frames, gap=gap)
        check_ecn_pfc(run(binary, tmp, "ecn", tcd=False), tmp)
        check_tcd(run(binary, tmp, "tcd", tcd=True), tmp)
        check_trace(tmp)


if __name__ == "__main__":
    harness.main(test)
