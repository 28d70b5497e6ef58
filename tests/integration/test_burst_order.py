#!/usr/bin/python3
"""A received burst is forwarded whole, in the order it arrived. A port
whose modules take no arrival or forward step routes every packet of a
burst first and then admits them one after another (Worker::forward_burst,
docs/architecture.md, "A packet's path"); a frame that is not IPv4 in the
middle of the burst must still be handled between the packets before it
and those after it.

p0 has no peer MAC yet (only its `peer_ip`), and its capture, read in one
burst, holds 10 UDP packets routed back out of p0, then the peer's ARP
reply, then 10 more: the first 10 find no neighbour and are dropped, the
ARP reply teaches p0 its peer's MAC, and the last 10 leave p0 addressed to
it, in their order. Handling the ARP reply before the burst's data would
forward all 20, after it none. Run with p0 shaped (every packet queued) and
unshaped (each cut through its idle queue).

A second capture, one burst again, goes through an unshaped p0 whose peer
is known, so that its packets cut through one after another as a run
(docs/traffic-manager.md, "Straight through an idle port"): packets of two
classes (DSCP to queue 0 or 1), VLAN-tagged and ECN-capable ones, frames
of exactly the buffer's admission limit and one byte over it, and frames
forward or parsing drops (no route, TTL 1) in between. Every packet the
buffer admits leaves in order, rewritten, and only the oversized are
refused; the port's counts match the frames, whatever the run does. It
goes through a plain switch, a DIBS switch and a TCD switch, and through
a BFC switch on a shaped p0 (BFC needs a rate), whose packets pass as a
run too, each alone in the queue BFC's flow table chose for it; and once
more with p0 facing a BFC switch, so that every packet of the run leaves
with the 0x88B6 shim naming its queue (6 bytes more, which the buffer's
limit counts); and through a Floodgate switch, whose steps at a host port
may run at a pass.

Last, a Floodgate switch's forward step, which runs a burst's data frames
whole between its other frames: an FG_SYNC in the middle of a burst meets
the count of the data received before it, and no more."""

import os

import harness
from harness import check, check_eq

P0_MAC, PEER_MAC = "02:00:00:00:00:01", "02:00:00:00:00:a1"
PEER_IP = "10.0.0.2"
BEFORE, AFTER = 10, 10


def arp_reply():
    from scapy.layers.l2 import ARP, Ether
    return bytes(Ether(src=PEER_MAC, dst=P0_MAC) /
                 ARP(op=2, hwsrc=PEER_MAC, psrc=PEER_IP, hwdst=P0_MAC, pdst="10.0.0.1")) + bytes(18)


def udp(i):
    from scapy.layers.inet import IP, UDP
    from scapy.layers.l2 import Ether
    return bytes(Ether(src=PEER_MAC, dst=P0_MAC) /
                 IP(src=PEER_IP, dst=f"10.0.7.{i + 1}", id=1000 + i) /
                 UDP(sport=4000 + i, dport=5000) / bytes(40))


def run(binary, tmp, name, rate):
    frames = [udp(i) for i in range(BEFORE)] + [arp_reply()] + \
             [udp(BEFORE + i) for i in range(AFTER)]
    check(len(frames) <= 32, "test bug: the capture must fit one receive burst")
    rx, tx = os.path.join(tmp, name + "-rx.pcap"), os.path.join(tmp, name + "-tx.pcap")
    harness.write_pcap(rx, frames)
    p0 = {"name": "p0", "device": f"net_pcap0,rx_pcap={rx},tx_pcap={tx}", "role": "host",
          "rate": rate, "mac": P0_MAC, "peer_ip": PEER_IP, "ipv4": "10.0.0.1/16"}
    cfg = harness.write_config(os.path.join(tmp, name + ".yaml"),
                               [harness.switch("s1", [p0], [harness.route("10.0.0.0/16", "p0")])])
    _, summary = harness.run_to_end(binary, tmp, cfg, name, duration=2)
    harness.check_identity(summary)
    p = harness.find_port(summary, "s1", "p0")
    check_eq(p["rx_packets"], len(frames), f"{name}: p0 rx_packets")
    check_eq(p["drops"].get("no_neighbor", 0), BEFORE, f"{name}: data before the ARP reply dropped")
    check_eq(p["rx_consumed_packets"], 1, f"{name}: the ARP reply consumed")
    check_eq(p["tx_packets"] - p["tx_generated_packets"], AFTER,
             f"{name}: data after the ARP reply forwarded")

    from scapy.layers.inet import IP
    from scapy.layers.l2 import Ether
    sent = [Ether(f) for f in harness.read_pcap(tx)]
    data = [e for e in sent if IP in e]
    check_eq([e[IP].id for e in data], [1000 + BEFORE + i for i in range(AFTER)],
             f"{name}: IP ids of the forwarded packets, in order")
    check(all(e.dst == PEER_MAC and e.src == P0_MAC for e in data),
          f"{name}: forwarded packets not addressed to the learned peer: "
          f"{sorted({(e.src, e.dst) for e in data})}")
    print(f"{name}: {len(data)} forwarded in order, {BEFORE} dropped before the ARP reply")


BUFFER = 1000  # bytes, alpha 1: an idle queue admits frames of up to 1000 bytes


def run_frame(i, size=100, tos=0, dst=None, ttl=64, vlan=False):
    """A UDP frame of `size` bytes (without FCS) once sluice has rebuilt its
    Ethernet header (a VLAN tag, if any, is not carried on)."""
    from scapy.layers.inet import IP, UDP
    from scapy.layers.l2 import Dot1Q, Ether
    head = Ether(src=PEER_MAC, dst=P0_MAC)
    if vlan:
        head = head / Dot1Q(vlan=7)
    pad = size - 14 - 20 - 8
    return bytes(head / IP(src=PEER_IP, dst=dst or f"10.0.7.{i + 1}", id=2000 + i, tos=tos,
                           ttl=ttl) / UDP(sport=4000 + i, dport=5000) / bytes(pad))


# What a refusal at the idle port becomes: DIBS's refuse step takes it, and
# with no switch-facing port to detour to, drops it under its own reason.
REFUSED = {"plain": "buffer_full", "dibs": "detour_no_port", "tcd": "buffer_full",
           "bfc": "buffer_full", "bfc-switch": "buffer_full", "floodgate": "buffer_full"}
SHIM = 6  # bytes of the 0x88B6 shim after the Ethernet header (lib/control/data_shim.h)


def run_cut_through(binary, tmp, scheme):
    """scheme: plain; dibs (a refuse step, and at this host port a depart
    step counting each packet's detours); tcd (schedule and depart steps:
    nothing can pause the port, so TCD judges every packet against an empty
    queue and marks none); bfc (its flow table chooses the queue, on a
    shaped port: each packet, of a flow of its own, finds its queue empty
    and the bucket holding tokens, and passes, so the two queues never both
    fill and no flow finds every queue busy); bfc-switch (bfc, with p0
    facing a switch: the data carries the shim, and p0 sends BFC's bitmaps
    besides); floodgate (its depart step at a host port, run at the pass:
    no credit is owed for packets from a host). Each port's plan cuts
    through."""
    name = "run-" + scheme
    refused = REFUSED[scheme]
    bfc = scheme.startswith("bfc")
    shim = SHIM if scheme == "bfc-switch" else 0
    fit = BUFFER - shim  # the largest frame the buffer admits, as rebuilt without a shim
    # (frame, what becomes of it)
    plan = [("fwd", {}), ("fwd", {}), ("fwd", {}), ("fwd", {"vlan": True}),
            (refused, {"size": BUFFER + 100}), ("fwd", {}), ("fwd", {"tos": 0x80}),
            ("fwd", {"tos": 0x80}), ("fwd", {}), ("no_route", {"dst": "10.9.0.1"}),
            ("fwd", {"tos": 0x02}), ("ttl_expired", {"ttl": 1}), ("fwd", {}),
            ("fwd", {"size": fit}), (refused, {"size": fit + 1}),
            ("fwd", {"size": fit, "vlan": True}), ("fwd", {}), ("fwd", {"tos": 0x82}),
            ("fwd", {}), ("fwd", {})]
    frames = [run_frame(i, **kw) for i, (_, kw) in enumerate(plan)]

    def configure(tag, capture):
        """The scheme's switch, p0 replaying `capture` in one burst; returns
        the configuration and the capture p0 writes."""
        check(len(capture) <= 32, "test bug: the capture must fit one receive burst")
        rx, tx = os.path.join(tmp, tag + "-rx.pcap"), os.path.join(tmp, tag + "-tx.pcap")
        harness.write_pcap(rx, capture)
        p0 = {"name": "p0", "device": f"net_pcap0,rx_pcap={rx},tx_pcap={tx}",
              "role": "switch" if shim else "host", "rate": "0", "mac": P0_MAC,
              "peer_mac": PEER_MAC, "ipv4": "10.0.0.1/16"}
        class_map = "dscp"
        ports, extra = [p0], {}
        if scheme == "dibs":
            # The switch-facing port DIBS needs: it admits no more than p0 does.
            ports.append({"name": "p1", "device": "net_null0,no-rx=1", "role": "switch",
                          "rate": "0", "mac": "02:00:00:00:00:02",
                          "peer_mac": "02:00:00:00:00:a2", "ipv4": "10.1.0.1/16"})
            extra = {"dibs": {"enabled": True}}
        if scheme == "tcd":
            extra = {"tcd": {"enabled": True, "q_th": "1B"}}
        if scheme == "floodgate":
            extra = {"floodgate": {}}
        if bfc:
            # BFC needs the port's rate (its Th), so p0 is shaped: with its
            # bucket full, every packet finds tokens. It chooses the queues.
            extra = {"bfc": {"enabled": True}}
            p0["rate"], class_map = "100Gbps", "fifo"
        cfg = harness.write_config(
            os.path.join(tmp, tag + ".yaml"),
            [harness.switch("s1", ports, [harness.route("10.0.0.0/16", "p0")],
                            buffer={"size": f"{BUFFER}B", "alpha": 1.0}, class_map=class_map,
                            queues_per_port=2, ecn={"mode": "step", "k": "1B"}, **extra)])
        return cfg, tx

    def data_frames(tx):
        """The data frames p0 sent; with the shim: (frames without it, the
        shims as (queue, shard, detours, inner type))."""
        sent = harness.read_pcap(tx)
        if not shim:
            return sent, []
        sent = [f for f in sent if f[12:14] == b"\x88\xb6"]  # not the bitmaps
        shims = [(int.from_bytes(f[14:16], "big"), f[16], f[17], f[18:20]) for f in sent]
        check_eq([len(f) for f in sent], [sizes[i] + shim for i in fwd],
                 f"{name}: frame sizes as sent, with the shim")
        return [f[:12] + f[12 + shim:] for f in sent], shims

    cfg, tx = configure(name, frames)
    _, summary = harness.run_to_end(binary, tmp, cfg, name, duration=2)
    harness.check_identity(summary)
    p = harness.find_port(summary, "s1", "p0")
    fwd = [i for i, (what, _) in enumerate(plan) if what == "fwd"]
    sizes = {i: plan[i][1].get("size", 100) for i in fwd}
    dropped = {}
    for what, _ in plan:
        if what != "fwd":
            dropped[what] = dropped.get(what, 0) + 1
    check_eq(p["rx_packets"], len(frames), f"{name}: p0 rx_packets")
    check_eq(p["drops"], dropped, f"{name}: p0 drops by reason")
    check_eq(p["forwarded_packets"], len(fwd) + dropped[refused],
             f"{name}: packets that reached admission")
    # A switch-facing BFC port also sends its bitmaps (generated frames).
    check_eq(p["tx_packets"] - (p["tx_generated_packets"] if shim else 0), len(fwd),
             f"{name}: p0 data tx_packets")
    if not shim:
        check_eq(p["tx_bytes"], sum(sizes.values()), f"{name}: p0 tx_bytes")
    check_eq(p["ecn_marks"], 0, f"{name}: ECN marks from an empty queue (k 1B)")
    if scheme == "dibs":
        sw = next(s for s in summary["switches"] if s["name"] == "s1")
        hist = sw["dibs"]["detours_per_packet"]
        check_eq((hist["le_0"], sum(hist.values())), (len(fwd), len(fwd)),
                 f"{name}: packets counted leaving at p0 with no detour, and in all {hist}")
    if scheme == "tcd":
        check_eq((p["tcd_ce_marks"], p["tcd_ue_marks"]), (0, 0), f"{name}: TCD marks")
    if bfc:
        # Queued, the burst's 16 flows would share the 2 queues: the third
        # new flow would find both busy (a queue collision) and the deepest
        # queue would hold several frames. Passing, each packet was alone
        # in its queue, and left its entry empty.
        sw = next(s for s in summary["switches"] if s["name"] == "s1")
        check_eq((sw["bfc"]["queue_collisions"], sw["bfc"]["flow_table_occupied_at_stop"]),
                 (0, 0), f"{name}: BFC queue collisions, flow-table entries occupied at stop")
        check_eq((p["bfc_peak_queue_bytes"], p["bfc_active_queues"], p["bfc_pause_sent"]),
                 (BUFFER, 1, 0), f"{name}: BFC's deepest queue (the largest frame admitted),"
                 " active queues at the last packet, pauses sent")

    from scapy.layers.inet import IP
    from scapy.layers.l2 import Dot1Q, Ether
    sent_frames, shims = data_frames(tx)
    if shim:
        # Each data frame with the shim naming the queue it took here (one
        # of the two), this switch's shard 0, no detours, and IPv4 inside.
        check(all(q < 2 and shard == 0 and detours == 0 and inner == b"\x08\x00"
                  for q, shard, detours, inner in shims), f"{name}: shims {shims}")
        # The queues BFC chose are those it chooses for the same packets
        # one at a time: the forwarded ones again, each after an ARP reply
        # from the peer (consumed), so that no two packets in a row go to
        # p0 and every one passes alone (Worker::cut_through). A refused
        # packet leaves BFC's table as it was, so it is left out.
        alone = []
        for i in fwd:
            alone += [arp_reply(), frames[i]]
        alone = alone[1:]
        ref_cfg, ref_tx = configure(name + "-alone", alone)
        harness.run_to_end(binary, tmp, ref_cfg, name + "-alone", duration=2)
        _, ref_shims = data_frames(ref_tx)
        check_eq(shims, ref_shims, f"{name}: shims of the run against the same packets alone")
        check_eq(len({q for q, _, _, _ in shims}), 2, f"{name}: queues named in the shims")
    sent = [Ether(f) for f in sent_frames]
    check_eq([e[IP].id for e in sent], [2000 + i for i in fwd],
             f"{name}: IP ids of the forwarded packets, in order")
    check_eq([len(bytes(e)) for e in sent], [sizes[i] for i in fwd],
             f"{name}: frame sizes as sent")
    check(all(e.dst == PEER_MAC and e.src == P0_MAC and Dot1Q not in e and e[IP].ttl == 63
              for e in sent), f"{name}: forwarded frames not rewritten for the peer (MACs, no"
          " VLAN tag, TTL 63)")
    check_eq([e[IP].tos for e in sent], [plan[i][1].get("tos", 0) for i in fwd],
             f"{name}: TOS bytes as received (nothing marked)")
    print(f"{name}: {len(fwd)} forwarded in order, drops {dropped}")


def sync_frame(dst, bytes_sent):
    """FG_SYNC from p0's peer (docs/wire-formats.md): one entry, its bytes
    sent toward dst on this link and no credit received."""
    import ipaddress
    import struct
    body = struct.pack("!H", 1) + ipaddress.IPv4Address(dst).packed + \
        struct.pack("!QQ", bytes_sent, 0)
    header = b"SL" + bytes([1, 6]) + struct.pack("!H", len(body)) + bytes([0, 0])
    frame = bytes.fromhex(P0_MAC.replace(":", "")) + bytes.fromhex(PEER_MAC.replace(":", "")) + \
        b"\x88\xb5" + header + body
    return frame + bytes(max(0, 60 - len(frame)))


def run_floodgate_sync(binary, tmp):
    """Floodgate's forward step runs a burst at a time (kForwardInBurst):
    the data frames between two other frames are routed whole. An FG_SYNC
    in the middle of the burst must still meet the count of the data
    received before it and no more: the peer says it sent exactly the
    first SYNCED frames toward the destination, so nothing was lost and
    the receiver is not ahead. Counting the whole burst's data first would
    put it ahead (sync_behind); taking the sync before the data would
    heal the first frames as lost. The data leaves by host port p1, whose
    Floodgate step (credit for p0's upstream) may run at the pass."""
    name = "floodgate-sync"
    synced, after, size = 10, 10, 100
    dst = "10.1.0.5"
    frames = [run_frame(i, size=size, dst=dst) for i in range(synced)]
    frames += [sync_frame(dst, synced * size)]
    frames += [run_frame(synced + i, size=size, dst=dst) for i in range(after)]
    check(len(frames) <= 32, "test bug: the capture must fit one receive burst")
    rx, tx = os.path.join(tmp, name + "-rx.pcap"), os.path.join(tmp, name + "-tx.pcap")
    harness.write_pcap(rx, frames)
    # Floodgate's window toward p0 needs p0's rate.
    p0 = {"name": "p0", "device": f"net_pcap0,rx_pcap={rx},tx_pcap={tx}", "role": "switch",
          "rate": "100Gbps", "mac": P0_MAC, "peer_mac": PEER_MAC, "ipv4": "10.0.0.1/16"}
    p1 = {"name": "p1", "device": "net_null0,no-rx=1", "role": "host", "rate": "0",
          "mac": "02:00:00:00:00:02", "peer_mac": "02:00:00:00:00:a2", "ipv4": "10.1.0.1/16"}
    cfg = harness.write_config(
        os.path.join(tmp, name + ".yaml"),
        [harness.switch("s1", [p0, p1], [harness.route("10.1.0.0/16", "p1")],
                        floodgate={"sync": True})])
    _, summary = harness.run_to_end(binary, tmp, cfg, name, duration=2)
    harness.check_identity(summary)
    check_eq(harness.find_port(summary, "s1", "p0")["rx_packets"], len(frames),
             f"{name}: p0 rx_packets")
    check_eq(harness.find_port(summary, "s1", "p1")["tx_packets"], synced + after,
             f"{name}: data forwarded to p1")
    check_eq(harness.all_drops(summary), {}, f"{name}: drops")
    # p1 (a host port, no window) lets the data cut through; each packet
    # still owes its upstream its credit as it leaves.
    check_eq(harness.find_port(summary, "s1", "p0")["fg_credit_sent_bytes"],
             (synced + after) * size, f"{name}: credit sent back out of p0")
    fg = next(s for s in summary["switches"] if s["name"] == "s1")["floodgate"]
    check_eq((fg["sync_healed_data_bytes"], fg["sync_healed_credit_bytes"], fg["sync_behind"]),
             (0, 0, 0), f"{name}: data healed, credit healed, syncs behind the data received")
    print(f"{name}: the FG_SYNC after {synced} of {synced + after} data frames found them all"
          " and no more")


def test(binary, srcdir):
    with harness.TempDir("burst-order") as tmp:
        run(binary, tmp, "unshaped", "0")
        run(binary, tmp, "shaped", "1Gbps")
        for scheme in ("plain", "dibs", "tcd", "bfc", "bfc-switch", "floodgate"):
            run_cut_through(binary, tmp, scheme)
        run_floodgate_sync(binary, tmp)


if __name__ == "__main__":
    harness.main(test)
