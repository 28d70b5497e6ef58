#!/usr/bin/python3
"""A two-port Ethernet relay that loses chosen sluice control frames: the
lossy wire between two sluice processes in test_bfc_lossy_two_process.py.

    lossy_relay.py IF_A IF_B --drop-every N --counts FILE

Every frame received on IF_A is sent out of IF_B and the other way round,
except that of the BFC_RESUME frames going from IF_B to IF_A (downstream to
upstream) every Nth is dropped (the 1st, the N+1th, ...). Runs until
SIGTERM or SIGINT, then writes what it forwarded and dropped, by kind, as
JSON to FILE. Test-only: the kernel here has no netem, so the loss is made
in user space on raw sockets (AF_PACKET)."""

import argparse
import json
import select
import signal
import socket
import struct

ETH_P_ALL = 0x0003
# linux/socket.h and asm-generic/socket.h (Python's socket module lacks them)
SOL_PACKET = 263
SO_SNDBUFFORCE = 32
SO_RCVBUFFORCE = 33
PACKET_IGNORE_OUTGOING = 23  # linux/if_packet.h: our own sends are not read back
CONTROL_ETHERTYPE = 0x88B5
BFC_TYPES = {3: "bfc_pause", 4: "bfc_resume", 5: "bfc_bitmap"}


def kind_of(frame):
    """'data', or the sluice control frame's type name (docs/wire-formats.md:
    ethertype 0x88B5, magic 'SL' at 14, type at 17)."""
    if len(frame) < 18 or struct.unpack_from("!H", frame, 12)[0] != CONTROL_ETHERTYPE:
        return "data"
    if frame[14:16] != b"SL":
        return "control_other"
    return BFC_TYPES.get(frame[17], "control_other")


def open_port(ifname):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.setsockopt(SOL_PACKET, PACKET_IGNORE_OUTGOING, 1)
    s.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 16 << 20)
    s.setsockopt(socket.SOL_SOCKET, SO_SNDBUFFORCE, 16 << 20)
    s.bind((ifname, 0))
    s.setblocking(False)
    return s


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("if_a")
    p.add_argument("if_b")
    p.add_argument("--drop-every", type=int, default=2)
    p.add_argument("--counts", required=True)
    a = p.parse_args()
    stop = []
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.append(True))
    ports = {"a": open_port(a.if_a), "b": open_port(a.if_b)}
    other = {"a": "b", "b": "a"}
    counts = {"forwarded": {}, "dropped": {}, "send_errors": 0}
    resumes_seen = 0
    while not stop:
        try:
            ready, _, _ = select.select(list(ports.values()), [], [], 0.1)
        except InterruptedError:
            continue
        for side, s in ports.items():
            if s not in ready:
                continue
            while True:
                try:
                    frame = s.recv(65536)
                except (BlockingIOError, InterruptedError):
                    break
                kind = kind_of(frame)
                if side == "b" and kind == "bfc_resume":
                    resumes_seen += 1
                    if (resumes_seen - 1) % a.drop_every == 0:
                        counts["dropped"][kind] = counts["dropped"].get(kind, 0) + 1
                        continue
                try:
                    ports[other[side]].send(frame)
                    counts["forwarded"][kind] = counts["forwarded"].get(kind, 0) + 1
                except OSError:
                    counts["send_errors"] += 1
    with open(a.counts, "w") as f:
        json.dump(counts, f)


if __name__ == "__main__":
    main()
