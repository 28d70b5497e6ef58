"""The workload frame: Ethernet / IPv4 / UDP / SLW1 header / application bytes.

SLW1 header (24 bytes, big-endian, first in the UDP payload):
  magic "SLW1" | flow id u32 | sequence u32 (packet index in the flow) |
  flow size u32 (application bytes of the whole flow) |
  offset u32 (byte offset of this packet's application data) | sender id u32
The application data that follows is zeros. The switch never reads it.

Byte accounting used by both tools (per packet carrying `app` bytes):
  frame  = max(60, 66 + app)   what a pcap stores (14 Eth + 20 IP + 8 UDP + 24 SLW1)
  wire   = frame + 24          + 4 FCS + 8 preamble/SFD + 12 inter-frame gap
A full packet is MTU-sized: IP length 1500, app = 1500 - 20 - 8 - 24 = 1448.
"""

import math
import struct

MAGIC = b"SLW1"
SLW_HEADER = struct.Struct("!4sIIIII")
ETH_LEN, IPV4_LEN, UDP_LEN, SLW_LEN = 14, 20, 8, SLW_HEADER.size
HEADERS_LEN = ETH_LEN + IPV4_LEN + UDP_LEN + SLW_LEN  # 66
MIN_FRAME = 60          # 64-byte minimum frame without its FCS
WIRE_EXTRA = 4 + 8 + 12  # FCS, preamble + SFD, inter-frame gap
DEFAULT_MTU = 1500
DEFAULT_DST_PORT = 9000
ETHERTYPE_IPV4, ETHERTYPE_VLAN = 0x0800, 0x8100
ECN_ECT0 = 0b10
PARSE_BYTES = 128  # enough for Eth + VLAN + IPv4 with options + UDP + SLW1

_ETH = struct.Struct("!6s6sH")
_IP_UDP_SLW = struct.Struct("!BBHHHBBH4s4sHHHH4sIIIII")


def app_per_packet(mtu=DEFAULT_MTU):
    """Application bytes in a full (MTU-sized) packet."""
    app = mtu - IPV4_LEN - UDP_LEN - SLW_LEN
    if app <= 0:
        raise ValueError("MTU %d leaves no room for data" % mtu)
    return app


def frame_len(app):
    """The length of a workload frame carrying `app` bytes of payload."""
    return max(MIN_FRAME, HEADERS_LEN + app)


def wire_len(app):
    return frame_len(app) + WIRE_EXTRA


def packet_count(size, mtu=DEFAULT_MTU):
    return max(1, math.ceil(size / app_per_packet(mtu)))


def last_app(size, mtu=DEFAULT_MTU):
    full = app_per_packet(mtu)
    return size - (packet_count(size, mtu) - 1) * full


def flow_wire_bytes(size, mtu=DEFAULT_MTU):
    """Bytes a flow of `size` application bytes occupies on the wire."""
    n = packet_count(size, mtu)
    return (n - 1) * wire_len(app_per_packet(mtu)) + wire_len(last_app(size, mtu))


def serialisation_ns(wire_bytes, rate_bps):
    """Whole nanoseconds `wire_bytes` occupy the link, rounded up."""
    return -(-wire_bytes * 8 * 10**9 // rate_bps)


def mac_bytes(text):
    parts = text.split(":")
    if len(parts) != 6:
        raise ValueError("bad MAC %r" % text)
    return bytes(int(p, 16) for p in parts)


def ip_bytes(text):
    parts = [int(p) for p in text.split(".")]
    if len(parts) != 4 or not all(0 <= p <= 255 for p in parts):
        raise ValueError("bad IPv4 address %r" % text)
    return bytes(parts)


def ipv4_checksum(header):
    """RFC 1071 one's-complement checksum of an IPv4 header (checksum field 0)."""
    s = sum(struct.unpack("!%dH" % (len(header) // 2), header))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def src_port(flow_id):
    """UDP source port derived from the flow id (multiplicative hash), in
    49152..65535, so ECMP hashing spreads flows."""
    return 49152 + ((flow_id * 2654435761) & 0xFFFFFFFF) % 16384


class FrameBuilder:
    """Builds the frames of one flow. The IPv4 checksum is the constant part's
    sum, computed once, plus the two fields that change per packet."""

    _ZEROS = bytes(65536)

    def __init__(self, src_mac, dst_mac, src_ip, dst_ip, flow_id, flow_size,
                 sender_id, dst_port=DEFAULT_DST_PORT, tos=0, ttl=64):
        self.eth = _ETH.pack(mac_bytes(dst_mac), mac_bytes(src_mac), ETHERTYPE_IPV4)
        self.src, self.dst = ip_bytes(src_ip), ip_bytes(dst_ip)
        self.tos, self.ttl = tos, ttl
        self.sport, self.dport = src_port(flow_id), dst_port
        self.flow_id, self.flow_size, self.sender_id = flow_id, flow_size, sender_id
        words = struct.unpack("!4H", self.src + self.dst)
        self.base_sum = (0x4500 | tos) + 0x4000 + ((ttl << 8) | 17) + sum(words)

    def frame(self, seq, offset, app, ip_id, keep=None):
        """The frame's bytes, or with `keep` only its first `keep` bytes
        (its length is then frame_len(app))."""
        total = IPV4_LEN + UDP_LEN + SLW_LEN + app
        s = self.base_sum + total + ip_id
        s = (s & 0xFFFF) + (s >> 16)
        s = (s & 0xFFFF) + (s >> 16)
        hdr = _IP_UDP_SLW.pack(
            0x45, self.tos, total, ip_id, 0x4000, self.ttl, 17, ~s & 0xFFFF,
            self.src, self.dst, self.sport, self.dport, total - IPV4_LEN, 0,
            MAGIC, self.flow_id, seq, self.flow_size, offset, self.sender_id)
        pad = max(0, MIN_FRAME - HEADERS_LEN - app)
        tail = app + pad if keep is None else max(0, min(app + pad, keep - HEADERS_LEN))
        return b"".join((self.eth, hdr, self._ZEROS[:tail]))


class Record:
    """What the analysis needs from one workload packet."""
    __slots__ = ("flow_id", "seq", "flow_size", "offset", "sender_id", "app",
                 "src_ip", "dst_ip", "ecn")

    def __init__(self, flow_id, seq, flow_size, offset, sender_id, app, src_ip,
                 dst_ip, ecn):
        self.flow_id, self.seq, self.flow_size = flow_id, seq, flow_size
        self.offset, self.sender_id, self.app = offset, sender_id, app
        self.src_ip, self.dst_ip, self.ecn = src_ip, dst_ip, ecn


_IP_HEAD = struct.Struct("!BBH")


def parse_frame(buf):
    """Record for a workload frame (one optional 802.1Q tag allowed), else None.
    Works on captures truncated after the SLW1 header: the application length
    comes from the IPv4 total length, not from the captured length."""
    if len(buf) < HEADERS_LEN:
        return None
    l3 = ETH_LEN
    ethertype = (buf[12] << 8) | buf[13]
    if ethertype == ETHERTYPE_VLAN:
        ethertype = (buf[16] << 8) | buf[17]
        l3 += 4
    if ethertype != ETHERTYPE_IPV4:
        return None
    ver_ihl, tos, total = _IP_HEAD.unpack_from(buf, l3)
    ihl = (ver_ihl & 0x0F) * 4
    if ver_ihl >> 4 != 4 or buf[l3 + 9] != 17:
        return None
    slw = l3 + ihl + UDP_LEN
    if len(buf) < slw + SLW_LEN:
        return None
    magic, flow_id, seq, size, offset, sender = SLW_HEADER.unpack_from(buf, slw)
    if magic != MAGIC:
        return None
    app = total - ihl - UDP_LEN - SLW_LEN
    return Record(flow_id, seq, size, offset, sender, app,
                  bytes(buf[l3 + 12:l3 + 16]), bytes(buf[l3 + 16:l3 + 20]), tos & 3)
