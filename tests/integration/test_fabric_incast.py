#!/usr/bin/python3
"""An incast through the leaf-spine fabric (conf/leafspine.yaml), run by
tools/experiment under drop-tail, PFC and BFC on the same workload.

- drop-tail loses packets, and the counters say where: on the incast's path,
  at leaf0's queue toward the incast receiver h0 and at leaf1's uplinks
  (four senders at 10 Gbps behind two 10 Gbps uplinks);
- PFC loses none: leaf0 sends PFC frames up to the spines, whose ports toward
  leaf0 spend time paused, and the spines in turn pause the other leaf's
  uplinks or its hosts;
- victims of head-of-line blocking: flows from leaf1's hosts to leaf0's hosts
  other than the receiver share the paused spine->leaf0 links with the incast,
  and finish later under PFC than under drop-tail (median FCT at least 2x;
  about 10x was measured);
- BFC, with hosts whose NICs BFC pauses per queue (the scheme's `nic: bfc`,
  the paper's §3.3.2 hosts), loses nothing either and finishes every flow:
  the switches pause each other's queues, the source leaf pauses its
  hosts' NIC queues, and the victims, which have queues of their own, are
  not held behind the incast as under PFC (median FCT below PFC's);
- every summary's counters add up.

The runs are in exact fabric time, so they repeat on any machine; the
assertions are on counters with wide margins all the same, so that a
change of workload or seed does not turn them."""

import csv
import json
import os
import statistics
import subprocess

import harness
from harness import check

SCHEMES = ("droptail", "pfc", "bfc")


def ports(summary):
    for sw in summary["switches"]:
        for p in sw["ports"]:
            yield sw["name"], p


def run_experiment(srcdir, binary, out):
    cmd = ["/usr/bin/python3", os.path.join(srcdir, "tools", "experiment"),
           "--config", os.path.join(srcdir, "conf", "leafspine.yaml"),
           "--schemes", ",".join(SCHEMES),
           "--cdf", os.path.join(srcdir, "conf", "workloads", "fb_hadoop.cdf"),
           "--load", "0.1", "--duration", "0.01", "--seed", "3", "--drain", "0.5",
           "--pfc-xoff", "50KB", "--sluice", binary, "--out", out,
           # Exact time (the default): the fidelity gate holds on any
           # machine, and a calendar miss or a stuck run fails it.
           "--floor-seconds", "0", "--",
           "--incast-degree", "7", "--incast-size", "3MB", "--incast-period", "5ms",
           "--incast-receiver", "h0"]
    done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=240)
    check(done.returncode == 0, f"tools/experiment failed:\n{done.stdout[-3000:]}")


def victim_median_fct(out, scheme):
    """Median FCT (s) of flows from leaf1's hosts to leaf0's hosts other than
    the incast receiver: they cross the spine->leaf0 links the incast pauses."""
    with open(os.path.join(out, scheme, "fct", "fct.csv")) as f:
        rows = list(csv.DictReader(f))
    victims = [r for r in rows if r["src"] in ("h4", "h5", "h6", "h7")
               and r["dst"] in ("h1", "h2", "h3")]
    check(len(victims) >= 5, f"{scheme}: only {len(victims)} victim flows in the workload")
    done = [float(r["fct_seconds"]) for r in victims if r["finished"] == "1"]
    check(len(done) >= len(victims) // 2, f"{scheme}: most victim flows unfinished")
    return statistics.median(done)


def check_bfc(out, summary):
    """BFC with BFC NICs: no drop anywhere, every flow finished, pauses
    between switches and from the source leaf to its hosts' NIC queues."""
    lost = {(sw, p["name"]): p["drops"] for sw, p in ports(summary) if p["drops"]}
    check(not lost, f"BFC (BFC NICs): packets dropped: {lost}")
    with open(os.path.join(out, "bfc", "fct", "fct.csv")) as f:
        rows = list(csv.DictReader(f))
    unfinished = [r for r in rows if r["finished"] != "1"]
    check(rows and not unfinished, f"BFC: {len(unfinished)} of {len(rows)} flows unfinished")
    switch_pauses = sum(p.get("bfc_pause_sent", 0) for sw, p in ports(summary)
                        if sw.startswith("spine") or p["name"].startswith("u"))
    host_pauses = sum(p.get("bfc_pause_sent", 0) for sw, p in ports(summary)
                      if sw == "leaf1" and p["name"].startswith("h"))
    nic_frames = sum(p.get("host_bfc_frames", 0) for sw, p in ports(summary) if sw == "leaf1")
    check(switch_pauses > 0, "BFC: no switch paused another's queue")
    check(host_pauses > 0 and nic_frames > 0,
          f"BFC: leaf1 never paused its hosts' NIC queues (pauses sent {host_pauses}, "
          f"BFC frames the NICs took {nic_frames})")
    return (f"{switch_pauses} pauses between switches, {host_pauses} from leaf1 to its hosts' "
            f"NICs, {len(rows)} flows")


def test(binary, srcdir):
    with harness.TempDir("fabric-incast") as tmp:
        out = os.path.join(tmp, "run")
        run_experiment(srcdir, binary, out)
        summaries = {}
        for scheme in SCHEMES:
            with open(os.path.join(out, scheme, "summary.json")) as f:
                summaries[scheme] = json.load(f)
            harness.check_identity(summaries[scheme])

        # Drop-tail: the receiver's queue at leaf0 overflows.
        drops = {(sw, p["name"]): sum(p["drops"].values())
                 for sw, p in ports(summaries["droptail"])}
        check(drops[("leaf0", "h0")] > 0,
              f"drop-tail: no drops at leaf0/h0 under a 7-to-1 incast: {drops}")
        total = sum(drops.values())
        # The incast's own path: four of its senders sit behind leaf1, whose
        # two uplinks take 40 Gbps of incast into 20 Gbps; all of it then
        # meets the three local senders at leaf0/h0.
        on_path = drops[("leaf0", "h0")] + drops[("leaf1", "u0")] + drops[("leaf1", "u1")]
        check(on_path == total,
              f"drop-tail: drops away from the incast's path (leaf0/h0, leaf1 uplinks): {drops}")

        # PFC: nothing lost anywhere, pauses flow upstream.
        pfc = summaries["pfc"]
        lost = {(sw, p["name"]): p["drops"] for sw, p in ports(pfc) if p["drops"]}
        check(not lost, f"PFC: packets dropped: {lost}")
        sent = {(sw, p["name"]): p.get("pfc_frames_sent", 0) for sw, p in ports(pfc)}
        paused = {(sw, p["name"]): p.get("pfc_paused_ns", 0) for sw, p in ports(pfc)}
        check(sent[("leaf0", "u0")] + sent[("leaf0", "u1")] > 0,
              f"PFC: leaf0 sent no PFC frames toward the spines: {sent}")
        check(paused[("spine0", "d0")] + paused[("spine1", "d0")] > 0,
              f"PFC: the spines' ports toward leaf0 were never paused: {paused}")
        # Head-of-line blocking: the victims' median FCT under PFC.
        victim_fct = {scheme: victim_median_fct(out, scheme) for scheme in SCHEMES}
        check(victim_fct["pfc"] >= 2 * victim_fct["droptail"],
              f"PFC did not slow the victim flows: median FCT {victim_fct}")
        bfc = check_bfc(out, summaries["bfc"])
        check(victim_fct["bfc"] < victim_fct["pfc"],
              f"BFC held the victims as long as PFC: median FCT {victim_fct}")
        print(f"victims (leaf1 -> h1..h3) median FCT: drop-tail {victim_fct['droptail'] * 1e6:.0f}"
              f" us, PFC {victim_fct['pfc'] * 1e6:.0f} us, BFC {victim_fct['bfc'] * 1e6:.0f} us")
        print(f"BFC: 0 drops, every flow finished; {bfc}")
        print(f"drop-tail drops {total} ({drops[('leaf0', 'h0')]} at leaf0/h0, "
              f"{drops[('leaf1', 'u0')] + drops[('leaf1', 'u1')]} at leaf1's uplinks); "
              f"PFC: 0 drops, {sum(sent.values())} PFC frames, "
              f"spine->leaf0 paused {(paused[('spine0', 'd0')] + paused[('spine1', 'd0')]) / 1e6:.1f} ms")


if __name__ == "__main__":
    harness.main(test)
