#!/usr/bin/python3
"""HPCC's in-band telemetry between two sluice processes joined by net_memif
(the bare-metal case: two servers joined by NICs; docs/wire-formats.md,
"Transport frames"):

    upstream process                        downstream process
    h1 (capture replay) -- a -- memif ---- b -- h2 (capture file)

Both switches stamp INT (`int: {}`). h1 replays transport data frames that
ask for INT (SLT1, flag bit 2, five empty hop slots; every fifth also
carries pFabric's rank, flag bit 3, with the INT room after it) and, between
them, frames that do not (an SLT1 data frame without INT room, one with a
rank and no INT room, a plain UDP frame). Checked in what h2 receives:

- every INT frame carries exactly two records, the upstream's (a/b, 10 Gb/s)
  first and the downstream's (b/h2, 10 Gb/s) second, behind its rank when it
  has one, and the rank arrives as sent; the other frames arrive byte for
  byte as sent (apart from the TTL and checksum each hop rewrites);
- each hop's transmitted-bytes field grows, from one INT frame to the next,
  by exactly the bytes its port sent in between (every frame of the run
  leaves by both ports), and its timestamps never go back;
- the summaries count the records (int_stamped) and no frame found its
  slots full."""

import os
import struct
import sys

import harness
import test_bfc_two_process as two
from harness import check, check_eq

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
from sluicepy import payload, pcapio, transport_frames  # noqa: E402

INT_FRAMES = 300
DURATION = 9


def frame(seq, int_room, dport=9001, app_bytes=500, rank=None):
    """Ethernet / IPv4 / UDP / SLT1 data (flow 7), with or without INT room
    and a rank."""
    flags = (4 if int_room else 0) | (8 if rank is not None else 0)
    slt = struct.pack("!4sBBBBIIIQ", b"SLT1", 1, flags, 0, 0, 7, seq * app_bytes, app_bytes, 0)
    if rank is not None:
        slt += struct.pack("!I", rank)
    body = slt + (bytes(80) if int_room else b"") + bytes(app_bytes)
    udp = struct.pack("!HHHH", 49159, dport, 8 + len(body), 0) + body
    ip = bytearray(struct.pack("!BBHHHBBH4s4s", 0x45, 2, 20 + len(udp), 0, 0x4000, 64, 17, 0,
                               bytes([10, 0, 1, 2]), bytes([10, 0, 2, 2])))
    ip[10:12] = struct.pack("!H", payload.ipv4_checksum(bytes(ip)))
    return (payload.mac_bytes(two.A_H1) + payload.mac_bytes(two.H1) + b"\x08\x00" + bytes(ip)
            + udp)


def h1_frames():
    """An ARP request at 0 (it fixes the replay's origin), then from
    BURST_AT a mix: INT frames (every fifth with a rank), and every tenth
    an SLT1 frame without INT room, one with a rank and no INT room, and a
    UDP frame to another port."""
    arp = harness.arp_request(two.H1, "10.0.1.2", "10.0.1.1")
    out, t = [(0.0, arp)], two.BURST_AT
    for i in range(INT_FRAMES):
        out.append((t, frame(i, True, rank=1_000_000 - i if i % 5 == 0 else None)))
        t += 2e-6
        if i % 10 == 0:
            out.append((t, frame(i, False)))
            out.append((t + 0.5e-6, frame(i, False, rank=i)))
            out.append((t + 1e-6, frame(i, False, dport=7000)))
            t += 2e-6
    return out


def upstream_config(tmp, sock):
    a = harness.switch("a", [
        {"name": "h1", "pcap": {"rx": "h1.pcap"}, "role": "host", "rate": "10Gbps",
         "mac": two.A_H1, "peer_mac": two.H1, "ipv4": "10.0.1.1/24"},
        {"name": "b", "device": two.memif("client", sock), "role": "switch", "rate": "10Gbps",
         "mac": two.A_B, "peer_mac": two.B_A},
    ], [harness.route("10.0.2.0/24", "b")], buffer={"size": "16MB", "alpha": 8.0},
        **{"int": {}})
    return harness.write_config(os.path.join(tmp, "up.yaml"), [a], mbufs=16384)


def downstream_config(tmp, sock):
    b = harness.switch("b", [
        {"name": "a", "device": two.memif("server", sock), "role": "switch", "rate": "10Gbps",
         "mac": two.B_A, "peer_mac": two.A_B},
        {"name": "h2", "pcap": {"tx": "h2.pcap"}, "role": "host", "rate": "10Gbps",
         "mac": two.B_H2, "peer_mac": two.H2, "ipv4": "10.0.2.1/24"},
    ], [harness.route("10.0.1.0/24", "a")], buffer={"size": "16MB", "alpha": 8.0},
        **{"int": {}})
    return harness.write_config(os.path.join(tmp, "down.yaml"), [b], mbufs=16384)


def check_capture(path, sent):
    got = [f for _, f, _ in pcapio.read_pcap(path)]
    data = [f for f in got if len(f) > 42 and f[12:14] == b"\x08\x00"]
    check_eq(len(data), len(sent), "IPv4 frames that reached h2")
    prev = None
    for k, (rx, tx) in enumerate(zip(data, sent)):
        p = transport_frames.parse(rx)
        int_room = len(tx) > 70 and tx[47] & 4
        if not int_room:
            # Untouched but for the TTL and the checksum (and MACs).
            check(rx[34:] == tx[34:] and rx[14:22] == tx[14:22],
                  f"frame {k} without INT room changed in transit")
            continue
        check(p is not None and p[0] == "data", f"frame {k}: not a transport data frame")
        if tx[47] & 8:
            check_eq(p[6], struct.unpack_from("!I", tx, 70)[0], f"frame {k}: its rank")
        hops = p[5]
        check_eq(len(hops), 2, f"INT records in frame {k}")
        check_eq(rx[48], 2, f"hops field of frame {k}")
        for h in hops:
            check_eq(h[3], 10_000, f"frame {k}: a hop's rate in Mb/s")
        if prev is not None:
            for i in range(2):
                dt = (hops[i][0] - prev[0][i][0]) % (1 << 32)
                dtx = (hops[i][1] - prev[0][i][1]) % (1 << 32)
                check(dt < (1 << 31), f"frame {k} hop {i}: timestamp went back")
                check_eq(dtx, prev[1], f"frame {k} hop {i}: bytes sent since the last INT frame")
        # What each port sends from this frame on until the next INT frame:
        # this frame and those between (at the length h2 got them; both hops
        # forward them at that length).
        nxt = next((j for j in range(k + 1, len(data))
                    if len(sent[j]) > 70 and sent[j][47] & 4), len(data))
        prev = (hops, sum(len(f) for f in data[k:nxt]))


def test(binary, srcdir):
    with harness.TempDir("int2p") as tmp:
        sock = os.path.join(tmp, "memif.sock")
        timed = h1_frames()
        two.write_timed_pcap(os.path.join(tmp, "h1.pcap"), timed)
        # One metrics endpoint (a free port) for the upstream; the
        # downstream has none.
        up = harness.Sluice(binary, tmp, upstream_config(tmp, sock), "int2p-up",
                            lcores="0@0,1@1")
        down = harness.Sluice(binary, tmp, downstream_config(tmp, sock), "int2p-down",
                              lcores="0@0,1@1", metrics=False)
        two.run_pair(up, down, sock, DURATION)
        ups, downs = up.summary(), down.summary()
        a_b = harness.find_port(ups, "a", "b")
        b_h2 = harness.find_port(downs, "b", "h2")
        check_eq(a_b["int_stamped"], INT_FRAMES, "records the upstream stamped")
        check_eq(b_h2["int_stamped"], INT_FRAMES, "records the downstream stamped")
        check_eq((a_b["int_full"], b_h2["int_full"]), (0, 0), "frames with every slot full")
        sent = [f for _, f in timed[1:]]
        check_capture(os.path.join(tmp, "h2.pcap"), sent)
        print(f"{INT_FRAMES} INT frames crossed two processes with two records each; "
              f"{len(sent) - INT_FRAMES} other frames unchanged")


if __name__ == "__main__":
    harness.main(test)
