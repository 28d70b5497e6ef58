#!/usr/bin/python3
"""Minimal ping (the test machine need not have iputils-ping): sends ICMP echo
requests to DST until one is answered or TIMEOUT seconds pass. Exit 0 when
answered, 1 otherwise. Needs root (raw socket); run it inside a namespace with
`ip netns exec NS /usr/bin/python3 icmp_echo.py DST TIMEOUT`.
"""

import os
import socket
import struct
import sys
import time


def inet_checksum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack(f"!{len(data) // 2}H", data))
    s = (s >> 16) + (s & 0xFFFF)
    s += s >> 16
    return ~s & 0xFFFF


def echo_request(ident, seq):
    payload = b"sluice-netns-probe"
    header = struct.pack("!BBHHH", 8, 0, 0, ident, seq)
    csum = inet_checksum(header + payload)
    return struct.pack("!BBHHH", 8, 0, csum, ident, seq) + payload


def is_reply(packet, src, ident):
    ihl = (packet[0] & 0x0F) * 4
    if len(packet) < ihl + 8 or socket.inet_ntoa(packet[12:16]) != src:
        return False
    icmp_type, _, _, rid, _ = struct.unpack("!BBHHH", packet[ihl:ihl + 8])
    return icmp_type == 0 and rid == ident


def main():
    dst, timeout = sys.argv[1], float(sys.argv[2])
    deadline = time.monotonic() + timeout
    ident = os.getpid() & 0xFFFF
    sock = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    seq = 0
    while time.monotonic() < deadline:
        seq += 1
        sock.sendto(echo_request(ident, seq), (dst, 0))
        wait_until = min(deadline, time.monotonic() + 0.5)
        while (left := wait_until - time.monotonic()) > 0:
            sock.settimeout(left)
            try:
                packet = sock.recv(2048)
            except socket.timeout:
                break
            if is_reply(packet, dst, ident):
                print(f"reply from {dst} after {seq} request(s)")
                return 0
    print(f"no reply from {dst} within {timeout} s", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
