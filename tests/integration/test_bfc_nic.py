#!/usr/bin/python3
"""Replay hosts as BFC NICs (SPEC 4.7, docs/pcap-ports.md "The host NIC").

    h1 (10G) --\\
                s (BFC) -- r (1G)    h1, h2: 4 flows each to r, 10 Gb/s bursts
    h2 (10G) --/       \\-- q (10G)  h1: 1 flow to q, interleaved

r's 1 Gb/s link is the bottleneck and the buffer holds only a fraction of
the 20:1 burst. Run twice, in exact fabric time, with one worker:

- nic: bfc. The hosts put their queue number in the 0x88B6 shim; s counts
  pauses per (host port, host queue) as it does for a switch upstream and
  pauses the hosts' queues toward r. Nothing is dropped, every frame reaches
  r and q, the frames toward r and q carry no shim, and the hosts ended with
  no queue paused and no frame held. The NIC's queues are per destination,
  so h1's flow to q is not held behind its paused queues toward r: q's last
  frame arrives well before r's half-way point.
- nic: plain (open loop for BFC: the host honours PAUSE/PFC only, and s has
  no upstream queue to pause). The backlog lands in s's buffer and
  overflows: drops, and fewer frames reach r. (The paper's open-loop
  counterpart: BFC - NIC, its App. E.1.)"""

import os

import harness
from harness import check, check_eq

S_H1, H1 = "02:00:00:00:0c:01", "02:00:00:00:0c:a1"
S_H2, H2 = "02:00:00:00:0c:02", "02:00:00:00:0c:a2"
S_R, R = "02:00:00:00:0c:03", "02:00:00:00:0c:a3"
S_Q, Q = "02:00:00:00:0c:04", "02:00:00:00:0c:a4"
TO_R = 1500   # frames from each sender to r: 2.3 MB each, 36 ms of r's link for both
TO_Q = 400    # frames from h1 to q
FRAME = 1514


def sender_frames(src_mac, src_net, to_q):
    to_r = harness.udp_frames(src_mac, S_H1 if src_mac == H1 else S_H2, src_net, "10.0.3.",
                              TO_R, sizes=(FRAME,), flows=4)
    if not to_q:
        return to_r
    q = harness.udp_frames(src_mac, S_H1, src_net, "10.0.4.", TO_Q, sizes=(FRAME,), flows=1)
    # One frame to q after every few to r, all 1.2 us apart (10 Gb/s).
    out, qi = [], 0
    for i, f in enumerate(to_r):
        out.append(f)
        if i % 3 == 0 and qi < len(q):
            out.append(q[qi])
            qi += 1
    return out + q[qi:]


def config(tmp, name, nic):
    s = harness.switch("s", [
        harness.replay_host("h1", S_H1, H1, "10.0.1.1/24", "10Gbps", rx="h1.pcap",
                            tx=f"{name}_h1.pcap", nic=nic),
        harness.replay_host("h2", S_H2, H2, "10.0.2.1/24", "10Gbps", rx="h2.pcap",
                            tx=f"{name}_h2.pcap", nic=nic),
        harness.replay_host("r", S_R, R, "10.0.3.1/24", "1Gbps", tx=f"{name}_r.pcap"),
        harness.replay_host("q", S_Q, Q, "10.0.4.1/24", "10Gbps", tx=f"{name}_q.pcap"),
    ], [], queues_per_port=8, buffer={"size": "1MB", "alpha": 8.0},
        bfc={"assignment": "dynamic"})
    return harness.write_config(os.path.join(tmp, name + ".yaml"), [s], mbufs=16384,
                                clock={"mode": "exact"})


def run(binary, tmp, name, nic):
    cfg = config(tmp, name, nic)
    with harness.Sluice(binary, tmp, cfg, name, duration=0.2) as s:
        s.wait(timeout=120)
        s.expect_clean_exit()
        summary = s.summary()
    harness.check_identity(summary)
    return summary


def stamps(path):
    """Frame lengths and capture times (s) of a pcap this test's sluice wrote."""
    import struct
    with open(path, "rb") as f:
        data = f.read()
    out, off = [], 24
    while off + 16 <= len(data):
        sec, nsec, caplen, length = struct.unpack("<IIII", data[off:off + 16])
        off += 16 + caplen
        out.append((length, sec + nsec * 1e-9))
    return out


def data_frames(path):
    return [(n, t) for n, t in stamps(path) if n >= 1000]


def check_bfc_nic(summary, tmp):
    port = {p: harness.find_port(summary, "s", p) for p in ("h1", "h2", "r", "q")}
    for p in port.values():
        check_eq(p["drops"], {}, f"bfc nic: drops at s/{p['name']}")
    for h in ("h1", "h2"):
        p = port[h]
        check(p["bfc_pause_sent"] > 0, f"bfc nic: s never paused {h}'s NIC: {p}")
        check(p["host_bfc_frames"] >= p["bfc_pause_sent"] + p["bfc_resume_sent"],
              f"bfc nic: {h} did not take every BFC frame s sent it: {p}")
        check_eq((p["host_bfc_paused_queues"], p["host_nic_held_frames"], p["host_bfc_invalid"],
                  p["host_invalid_frames"]), (0, 0, 0, 0), f"bfc nic: {h} NIC state at the end")
    check_eq(port["r"]["tx_packets"], 2 * TO_R, "bfc nic: frames delivered to r")
    check_eq(port["q"]["tx_packets"], TO_Q, "bfc nic: frames delivered to q")
    r = data_frames(os.path.join(tmp, "bfc_r.pcap"))
    q = data_frames(os.path.join(tmp, "bfc_q.pcap"))
    check_eq({n for n, _ in r} | {n for n, _ in q}, {FRAME},
             "bfc nic: frame lengths toward hosts (a shim would add 6)")
    start = min(r[0][1], q[0][1])
    r_half = r[len(r) // 2][1] - start
    q_last = q[-1][1] - start
    check(q_last < r_half,
          f"bfc nic: h1's flow to q waited behind its paused queues toward r: q's last "
          f"frame at {q_last * 1e3:.2f} ms, r's half-way frame at {r_half * 1e3:.2f} ms")
    print(f"bfc nic: s paused h1 {port['h1']['bfc_pause_sent']}x, h2 "
          f"{port['h2']['bfc_pause_sent']}x; r's deepest queue "
          f"{port['r']['bfc_peak_queue_bytes']} B; q done at {q_last * 1e3:.2f} ms, r half-way "
          f"at {r_half * 1e3:.2f} ms")


def check_open_loop(summary):
    port = {p: harness.find_port(summary, "s", p) for p in ("h1", "h2", "r")}
    drops = harness.total_drops(port["r"])
    check(drops > 0, f"open loop: s/r dropped nothing: {port['r']}")
    check_eq(port["r"]["tx_packets"] + drops, 2 * TO_R, "open loop: delivered + dropped at r")
    for h in ("h1", "h2"):
        check_eq((port[h]["bfc_pause_sent"], port[h]["host_bfc_frames"]), (0, 0),
                 f"open loop: BFC frames toward {h}")
    print(f"open loop: s/r dropped {drops} of {2 * TO_R}")


def test(binary, srcdir):
    with harness.TempDir("bfc-nic") as tmp:
        harness.write_pcap(os.path.join(tmp, "h1.pcap"), sender_frames(H1, "10.0.1.", True),
                           gap=1.2e-6)
        harness.write_pcap(os.path.join(tmp, "h2.pcap"), sender_frames(H2, "10.0.2.", False),
                           gap=1.2e-6)
        check_bfc_nic(run(binary, tmp, "bfc", "bfc"), tmp)
        check_open_loop(run(binary, tmp, "plain", "plain"))


if __name__ == "__main__":
    harness.main(test)
