#!/usr/bin/python3
"""BFC between two sluice processes joined by net_memif, the downstream one
running more worker lcores than the upstream one.

    upstream process (1 worker)            downstream process (2 workers)
    h1 (capture replay) -- a -- memif ---- b -- h2 (net_null, 1 Gbps)
                                 client  server

The downstream's memif port b/a is on worker slot 0 and its host port b/h2
on slot 1, so b's pauses, resumes and bitmaps for a's queues are built on
slot 1 and carry shard 1: a shard the upstream, with one worker, does not
have. A receiver must accept every shard 0..63 (SPEC 4.2); before that fix
all of them were dropped as control_invalid and a's queues never paused.

h1 replays a 10 Gbps burst of 8 UDP flows to h2, whose 1 Gbps port is the
bottleneck. Checked, functionally (the two processes share 2 CPUs):

- the downstream sent pauses, resumes and bitmaps from a 2-worker process;
- the upstream applied them: pauses and bitmaps received, no drop at all on
  its memif port (no control_invalid), no bitmap with queues it lacks;
- its queues toward b were paused with packets held in them (queue trace of
  a/b: rows with paused = 1 and bytes > 0), so the backlog waited upstream;
- every queue of a ends unpaused and empty once the traffic is over (pauses
  released by resumes and, were one lost, by the periodic bitmap, of which
  hundreds were applied), and every frame of the burst reached h2;
- the upstream's metrics pass promtool and carry the BFC families;
- the downstream's data path ran before the burst (else the test proves
  nothing and says so).

A resume is not dropped on purpose here: memif has no loss knob and the
data path gets no test-only one. test_bfc_lossy_two_process.py joins two
processes through a relay that drops resumes, and the repair is covered on
a simulated clock too (tests/unit/mechanisms/bfc/upstream_pause_state_test.cc)."""

import csv
import os
import signal
import struct
import time

import harness
from harness import check, check_eq

A_H1, H1 = "02:00:00:00:1a:01", "02:00:00:00:1a:a1"
A_B, B_A = "02:00:00:00:1a:02", "02:00:00:00:1b:01"
B_H2, H2 = "02:00:00:00:1b:02", "02:00:00:00:1b:a2"
QUEUES = 8
BURST_FRAMES = 4000
BURST_AT = 6.0  # seconds into the upstream's replay: the downstream runs by then
DURATION = 9  # the upstream's run; run_pair stops both processes together
HOP_RTT = "200us"  # two processes time-sharing CPUs react slower than one


def memif(role, sock):
    return f"net_memif0,role={role},id=0,socket={sock},socket-abstract=no"


def upstream_config(tmp, sock):
    a = harness.switch("a", [
        {"name": "h1", "pcap": {"rx": "h1.pcap"}, "role": "host", "rate": "10Gbps",
         "mac": A_H1, "peer_mac": H1, "ipv4": "10.0.1.1/24"},
        {"name": "b", "device": memif("client", sock), "role": "switch", "rate": "10Gbps",
         "mac": A_B, "peer_mac": B_A, "hop_rtt": HOP_RTT},
    ], [harness.route("10.0.2.0/24", "b")], queues_per_port=QUEUES,
        buffer={"size": "16MB", "alpha": 8.0}, bfc={"assignment": "dynamic"})
    return harness.write_config(os.path.join(tmp, "up.yaml"), [a], mbufs=16384)


def downstream_config(tmp, sock):
    b = harness.switch("b", [
        {"name": "a", "device": memif("server", sock), "role": "switch", "rate": "10Gbps",
         "mac": B_A, "peer_mac": A_B, "hop_rtt": HOP_RTT},
        harness.port("h2", "net_null0,no-rx=1", B_H2, H2, "10.0.2.1/24", rate="1Gbps"),
    ], [harness.route("10.0.1.0/24", "a")], queues_per_port=QUEUES,
        buffer={"size": "16MB", "alpha": 8.0}, bfc={"assignment": "dynamic"})
    # b/h2 on the second worker: its admissions, hence the frames, use shard 1.
    return harness.write_config(os.path.join(tmp, "down.yaml"), [b],
                                workers=[(1, ["b/a"]), (2, ["b/h2"])], mbufs=16384)


def h1_frames():
    """An ARP request at 0 (a harmless first frame that fixes the replay's
    origin), then the burst from BURST_AT at 10 Gbps (1.2 us apart)."""
    arp = harness.arp_request(H1, "10.0.1.2", "10.0.1.1")
    burst = harness.udp_frames(H1, A_H1, "10.0.1.", "10.0.2.", BURST_FRAMES, sizes=(1514,),
                               flows=8)
    return [(0.0, arp)] + [(BURST_AT + i * 1.2e-6, f) for i, f in enumerate(burst)]


def write_timed_pcap(path, timed):
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for t, frame in timed:
            t += 1700000000.0
            sec, usec = int(t), int(round((t - int(t)) * 1e6))
            f.write(struct.pack("<IIII", sec, usec, len(frame), len(frame)))
            f.write(frame)


def wait_until(proc, ready, what, timeout):
    """Polls ready() until it holds; fails if proc exits first or `what`
    has not happened within timeout seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if ready():
            return
        check(proc.running(), f"{proc.name} exited before it {what}\n" + proc.logs())
        time.sleep(0.05)
    raise harness.TestFailure(f"{proc.name} has not {what} within {timeout} s\n" + proc.logs())


def wait_for_launch(proc, timeout):
    """sluice prints its line of switches, ports and worker lcores right
    before it launches the workers."""
    wait_until(proc, lambda: "worker lcore(s)" in proc.stdout(), "launched its workers", timeout)


def run_pair(up, down, sock, duration, during=None):
    """Runs two sluice processes joined by net_memif: the downstream (memif
    server) first, the upstream (client; its start fails before the
    server's socket exists) once the downstream's workers run, so that
    whatever the upstream replays finds the downstream's data path up; then
    during() while both run. Neither has a --duration of its own:
    `duration` seconds after the upstream's workers launched, both get
    SIGINT together. DPDK 22.11's memif unmaps the shared rings on its
    interrupt thread when the peer closes, even while this process's
    worker reads them, so a process whose peer leaves while it still polls
    can crash; sluice closes a memif port only some time after its workers
    halted (docs/deploy.md, "Two processes"), which covers a peer stopped at
    the same moment. Waits for both and checks that each exited cleanly."""
    for proc in (up, down):
        check("--duration" not in proc.cmd, f"{proc.name}: run_pair stops it, not --duration")
    with down:
        wait_until(down, lambda: os.path.exists(sock), f"created {sock}", timeout=15)
        wait_for_launch(down, timeout=30)
        with up:
            wait_for_launch(up, timeout=30)
            started = time.monotonic()
            if during is not None:
                during()
            time.sleep(max(0.0, started + duration - time.monotonic()))
            check(up.running() and down.running(),
                  "a process of the pair ended before it was stopped\n" + up.logs() + down.logs())
            up.proc.send_signal(signal.SIGINT)
            down.proc.send_signal(signal.SIGINT)
            up.wait(timeout=30)
            down.wait(timeout=30)
    up.expect_clean_exit()
    down.expect_clean_exit()


def paused_rows(trace):
    """Queue-trace rows of a/b's data queues held paused with packets in them."""
    with open(trace, newline="") as f:
        return [r for r in csv.DictReader(f)
                if r["port"] == "b" and r["queue"].isdigit() and r["paused"] == "1"
                and int(r["bytes"]) > 0]


def check_metrics(text):
    harness.promtool_check(text)
    samples = harness.metric_samples(text)
    for family in ("sluice_bfc_frames_received_total", "sluice_bfc_paused_queues",
                   "sluice_bfc_bitmap_unknown_queues_total"):
        check(family in samples, f"upstream metrics lack {family}")


def check_downstream_ran_first(up, down, burst_at=BURST_AT):
    """The burst must find the downstream's data path running (run_pair
    starts the upstream once it runs); else what is tested is a link not
    yet up, not BFC."""
    burst = up["replay_start_epoch_seconds"] + burst_at
    started = down["run_end_epoch_seconds"] - down["duration_seconds"]
    check(started < burst, f"the downstream's data path started {started - burst:.2f} s after "
                           f"the burst; the machine is too slow for a burst at {burst_at} s")


def check_summaries(up, down, rows):
    check_downstream_ran_first(up, down)
    harness.check_identity(up)
    harness.check_identity(down)
    a_b = harness.find_port(up, "a", "b")
    b_a = harness.find_port(down, "b", "a")
    b_h2 = harness.find_port(down, "b", "h2")
    check_eq(len(down["workers"]), 2, "downstream worker lcores")
    check_eq(len(up["workers"]), 1, "upstream worker lcores")
    check(b_a["bfc_pause_sent"] > 0, f"the downstream never paused the upstream: {b_a}")
    check(b_a["bfc_resume_sent"] > 0, f"the downstream never resumed: {b_a}")
    check_eq(a_b["drops"], {}, "drops on the upstream's memif port (control_invalid?)")
    check(a_b["bfc_pause_received"] > 0,
          f"the upstream applied no pause (sent {b_a['bfc_pause_sent']}): {a_b}")
    check(a_b["bfc_pause_received"] <= b_a["bfc_pause_sent"],
          f"more pauses received than sent: {a_b['bfc_pause_received']} > "
          f"{b_a['bfc_pause_sent']}")
    # Bitmaps every 10 hop RTTs = 2 ms per shard, from before the burst to after.
    check(a_b["bfc_bitmap_received"] > 500,
          f"only {a_b['bfc_bitmap_received']} bitmaps applied upstream in {DURATION} s")
    check_eq(a_b["bfc_bitmap_unknown_queues"], 0, "bitmaps naming queues a lacks")
    # memif loses nothing: a bitmap repairs a hold only if the downstream
    # lost a pause or resume before it left (counted there).
    if b_a["bfc_control_lost"] == 0 and b_a["control_dropped_packets"] == 0:
        check_eq((a_b["bfc_bitmap_repaired_pauses"], a_b["bfc_bitmap_repaired_resumes"]), (0, 0),
                 "holds repaired by bitmaps on a link that lost no frame")
    check(len(rows) > 0, "the queue trace of a/b shows no paused queue holding packets")
    check_eq(a_b["bfc_queues_paused"], 0, "a/b queues still paused at the end")
    check_eq(a_b["queued_at_stop"], 0, "packets left in a/b at the end")
    check_eq(b_h2["tx_packets"], BURST_FRAMES, "burst frames delivered to h2")
    for p in (b_a, b_h2):
        check_eq(p["drops"], {}, f"downstream drops at {p['name']}")
    print(f"downstream (2 workers) sent {b_a['bfc_pause_sent']} pauses, "
          f"{b_a['bfc_resume_sent']} resumes, {b_a['bfc_bitmap_sent']} bitmaps; "
          f"upstream (1 worker) applied {a_b['bfc_pause_received']} pauses, "
          f"{a_b['bfc_resume_received']} resumes, {a_b['bfc_bitmap_received']} bitmaps; "
          f"{len(rows)} trace samples of a paused a/b queue holding packets; deepest a/b "
          f"{a_b['bfc_peak_queue_bytes']} B, b/h2 {b_h2['bfc_peak_queue_bytes']} B; "
          f"{b_h2['tx_packets']} frames to h2")


def test(binary, srcdir):
    with harness.TempDir("bfc2p") as tmp:
        sock = os.path.join(tmp, "memif.sock")
        write_timed_pcap(os.path.join(tmp, "h1.pcap"), h1_frames())
        trace = os.path.join(tmp, "up_trace.csv")
        # Upstream's worker on CPU 0, the downstream's two on CPU 1.
        up = harness.Sluice(binary, tmp, upstream_config(tmp, sock), "bfc2p-up",
                            lcores="0@0,1@1",
                            app_extra=["--queue-trace", trace, "--queue-trace-ports", "a/b",
                                       "--queue-trace-interval", "0.0001"])
        down = harness.Sluice(binary, tmp, downstream_config(tmp, sock), "bfc2p-down",
                              lcores="0@0,1@1,2@1", metrics=False)
        run_pair(up, down, sock, DURATION, during=lambda: check_metrics(up.metrics_text()))
        check_summaries(up.summary(), down.summary(), paused_rows(trace))

if __name__ == "__main__":
    harness.main(test)
