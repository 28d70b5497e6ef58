#!/usr/bin/python3
"""sluice-loadgen (tools/loadgen) against sluice over net_memif, as tools/
bench latency runs them: the generator sends UDP probes at a set rate to a
one-port switch that routes them back out of the port they came in on.

  - plain: every probe comes back (none lost, none reordered), every probe
    due at the rate asked was sent or forgone (the switch's ring full), the
    switch counts as received and sent exactly the probes the generator says
    it sent (warm-up included), and the round trips are ordered (p50 <= p99
    <= max, all above zero);
  - BFC (its port switch-facing): probes come back inside the 0x88B6 shim
    and are still read as probes, and the switch's bitmaps are counted as
    frames that are not probes;
  - probes to a destination with no route: every one is counted lost, and
    the switch's no_route drops are what the generator sent.

Real time: the claims are counts, none a rate or a latency. Checked to
fail: with the reorder count taken over all flows instead of per flow,
BFC's per-flow queues showed 2,777 probes "reordered"; with the generator's
runtime directory left behind, the clean-exit check failed."""

import json
import os
import select
import signal
import subprocess
import time

import harness
from harness import check, check_eq

DUT_MAC, GEN_MAC = "02:00:00:00:00:01", "02:00:00:00:00:a1"
RATE_MPPS, SECONDS, WARMUP = 0.2, 1.0, 0.3


def loadgen_binary(sluice_binary):
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(sluice_binary))),
                        "tools", "loadgen", "sluice-loadgen")
    check(os.access(path, os.X_OK), f"no sluice-loadgen at {path} (build it with ninja)")
    return path


def memif(role, sock):
    return f"net_memif0,role={role},id=0,socket={sock},socket-abstract=no"


def config(tmp, sock, bfc):
    extra = {"queues_per_port": 8, "bfc": {"enabled": True}} if bfc else {}
    p0 = harness.port("p0", memif("server", sock), DUT_MAC, GEN_MAC, "10.0.0.1/16",
                      rate="10Gbps" if bfc else "0", role="switch" if bfc else "host")
    path = os.path.join(tmp, "bfc.yaml" if bfc else "plain.yaml")
    harness.write_config(path, [harness.switch("dut", [p0], [harness.route("10.1.0.0/16", "p0")],
                                               **extra)])
    return path


def run(binary, tmp, name, bfc=False, dst_ip="10.1.0.1"):
    sock = os.path.join(tmp, name + ".sock")
    gen = loadgen_binary(binary)
    sw = harness.Sluice(binary, tmp, config(tmp, sock, bfc), name, lcores="0@0,1@1")
    prefix = f"sluice-it-gen-{name}-{os.getpid()}"
    with sw:
        # The metrics exporter answers once the ports have started: a memif
        # client that connects before then can crash the server's interrupt
        # thread (DPDK 22.11). (Not the banner on stdout: stdbuf's preload
        # and the sanitizer pass's ASan runtime exclude each other.)
        sw.metrics_text()
        # --hold: the generator keeps its end of the memif up until the
        # switch has stopped. A client leaving first makes DPDK 22.11's
        # memif server unmap the shared regions on its interrupt thread
        # while the switch's worker may be receiving from them (a rare
        # SIGSEGV in the switch).
        errors = os.path.join(tmp, name + "-loadgen.err")
        with open(errors, "w") as err:
            g = subprocess.Popen([gen, "-l", "0", "--no-huge", "-m", "256", "--no-pci",
                                  "--file-prefix", prefix, "--vdev", memif("client", sock), "--",
                                  "--dst-mac", DUT_MAC, "--src-mac", GEN_MAC, "--dst-ip", dst_ip,
                                  "--rate-mpps", str(RATE_MPPS), "--seconds", str(SECONDS),
                                  "--warmup", str(WARMUP), "--json", "--hold"],
                                 stdout=subprocess.PIPE, stderr=err, text=True)
        try:
            line = result_line(g, 120)
            sw.stop()
            g.send_signal(signal.SIGINT)
            rc = g.wait(timeout=30)
        finally:
            if g.poll() is None:
                g.kill()
                g.wait()
        with open(errors) as err:
            check_eq(rc, 0, f"sluice-loadgen exit status ({err.read()[-2000:]})")
        check(line is not None, "sluice-loadgen printed no result")
    sw.expect_clean_exit()
    check(not os.path.exists(os.path.join("/var/run/dpdk", prefix)),
          f"sluice-loadgen left /var/run/dpdk/{prefix}")
    return json.loads(line), harness.find_port(sw.summary(), "dut", "p0")


def result_line(proc, timeout):
    """The generator's JSON line, read as it is printed (it then holds);
    None if it exits or the timeout passes first."""
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([proc.stdout], [], [], left)[0]:
            return None
        line = proc.stdout.readline()
        if line == "":
            return None
        if line.startswith("{"):
            return line


def test(binary, srcdir):
    with harness.TempDir("loadgen") as tmp:
        g, p0 = run(binary, tmp, "plain")
        print(f"plain: {g}")
        probes = g["sent_warm"] + g["sent"]
        check_eq((g["lost"], g["out_of_order"], g["other"]), (0, 0, 0),
                 "plain: probes lost, reordered, frames not probes")
        check_eq(g["received"], g["sent"], "plain: probes of the window back")
        # Paced by the TSC: every probe due in the run was sent or, when the
        # switch's ring was full, forgone (on a busy machine); none twice.
        check_eq(g["due"], int(RATE_MPPS * 1e6 * (WARMUP + SECONDS)), "plain: probes due")
        check_eq(probes + g["forgone"], g["due"], "plain: probes sent and forgone")
        check_eq((p0["rx_packets"], p0["tx_packets"]), (probes, probes),
                 "plain: the switch's rx and tx against the probes the generator sent")
        check(0 < g["p50_ns"] <= g["p99_ns"] <= g["p999_ns"] and g["p99_ns"] - 10 <= g["max_ns"],
              f"plain: round trips out of order: {g}")

        g, p0 = run(binary, tmp, "bfc", bfc=True)
        print(f"bfc: {g}")
        check_eq((g["lost"], g["out_of_order"]), (0, 0), "bfc: probes lost, reordered")
        check_eq(g["received"], g["sent"], "bfc: probes back inside the shim")
        check(p0["bfc_bitmap_sent"] > 0, f"bfc: the switch sent no bitmap: {p0}")
        check(g["other"] > 0, "bfc: the switch's bitmaps were not counted as other frames")

        g, p0 = run(binary, tmp, "noroute", dst_ip="10.9.0.1")
        print(f"no route: {g}")
        check(g["sent"] > 0, "no route: nothing sent")
        check_eq((g["received"], g["lost"]), (0, g["sent"]), "no route: probes back, lost")
        check_eq(p0["drops"].get("no_route", 0), g["sent_warm"] + g["sent"],
                 "no route: the switch's no_route drops against the probes sent")


if __name__ == "__main__":
    harness.main(test)
