"""Minimal, fast pcap I/O with struct (no scapy).

Writes nanosecond-resolution pcap (magic 0xa1b23c4d), link type Ethernet.
Reads classic pcap in either byte order, with micro- or nanosecond stamps;
timestamps are returned as integer nanoseconds.
"""

import mmap
import os
import struct

MAGIC_NS = 0xA1B23C4D
MAGIC_US = 0xA1B2C3D4
LINKTYPE_ETHERNET = 1
_GLOBAL = struct.Struct("<IHHiIII")
_RECORD = struct.Struct("<IIII")


class PcapWriter:
    """A nanosecond pcap; with a snaplen, each record keeps that many bytes
    of its frame and states the frame's whole length (sluice replays such a
    record at that length: docs/pcap-ports.md, "Snaplen")."""

    def __init__(self, path, snaplen=262144):
        self._f = open(path, "wb", buffering=1 << 20)
        self._snaplen = snaplen
        self._f.write(_GLOBAL.pack(MAGIC_NS, 2, 4, 0, 0, snaplen, LINKTYPE_ETHERNET))

    def write(self, ts_ns, frame, wire_len=None):
        """frame: its bytes (cut at the snaplen here if longer); wire_len:
        its length on the wire when frame holds only its first bytes."""
        sec, nsec = divmod(ts_ns, 10**9)
        kept = frame[:self._snaplen] if len(frame) > self._snaplen else frame
        self._f.write(_RECORD.pack(sec, nsec, len(kept), wire_len or len(frame)))
        self._f.write(kept)

    def close(self):
        self._f.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def read_pcap(path, max_bytes=None):
    """Yields (ts_ns, frame bytes, original length) for every record; with
    max_bytes, only the first max_bytes of each frame (much less copying).
    The file is memory-mapped: reading it whole is several times slower."""
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size < _GLOBAL.size:
            raise ValueError("%s: not a pcap file (too short)" % path)
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
            yield from _records(path, data, size, max_bytes)


def _records(path, data, end, max_bytes):
    magic_le = struct.unpack_from("<I", data)[0]
    magic_be = struct.unpack_from(">I", data)[0]
    if magic_le in (MAGIC_NS, MAGIC_US):
        endian, magic = "<", magic_le
    elif magic_be in (MAGIC_NS, MAGIC_US):
        endian, magic = ">", magic_be
    else:
        raise ValueError("%s: not a pcap file (magic %#x)" % (path, magic_le))
    linktype = struct.unpack_from(endian + "I", data, 20)[0]
    if linktype != LINKTYPE_ETHERNET:
        raise ValueError("%s: link type %d, expected Ethernet" % (path, linktype))
    mult = 1 if magic == MAGIC_NS else 1000
    rec = struct.Struct(endian + "IIII")
    pos = _GLOBAL.size
    while pos + 16 <= end:
        sec, frac, incl, orig = rec.unpack_from(data, pos)
        pos += 16
        if pos + incl > end:
            break  # truncated last record (capture cut short)
        take = incl if max_bytes is None else min(incl, max_bytes)
        yield sec * 10**9 + frac * mult, data[pos:pos + take], orig
        pos += incl
