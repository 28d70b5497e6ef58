"""Parses the human quantities the tools accept: rates, sizes and durations.

Decimal prefixes are powers of ten (10Gbps, 2MB = 2,000,000 bytes); binary
ones are powers of two (2MiB = 2,097,152 bytes). A bare number is bits per
second, bytes or seconds.
"""

import re

_NUM = r"([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)"
_DEC = {"": 1, "k": 10**3, "K": 10**3, "m": 10**6, "M": 10**6, "g": 10**9,
        "G": 10**9, "t": 10**12, "T": 10**12}
_BIN = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30}
_TIME = {"": 1.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}


def parse_rate(text):
    """'10Gbps', '10G', '2.5Gbit/s' -> integer bits per second."""
    m = re.fullmatch(_NUM + r"\s*([kKmMgGtT]?)(bps|bit/s|b/s)?", str(text).strip())
    if not m:
        raise ValueError("bad rate %r (e.g. 10Gbps)" % text)
    bps = round(float(m.group(1)) * _DEC[m.group(2)])
    if bps <= 0:
        raise ValueError("rate must be positive: %r" % text)
    return bps


def parse_size(text):
    """'2MB', '64KiB', '1500', '1.5MB' -> integer bytes."""
    m = re.fullmatch(_NUM + r"\s*(Ki|Mi|Gi|[kKmMgGtT]?)B?", str(text).strip())
    if not m:
        raise ValueError("bad size %r (e.g. 2MB, 64KiB)" % text)
    unit = m.group(2)
    mult = _BIN[unit] if unit in _BIN else _DEC[unit]
    return round(float(m.group(1)) * mult)


def parse_time(text):
    """'10ms', '10us', '0.05', '0.05s' -> float seconds."""
    m = re.fullmatch(_NUM + r"\s*(s|ms|us|ns)?", str(text).strip())
    if not m:
        raise ValueError("bad duration %r (e.g. 10ms, 0.05)" % text)
    return float(m.group(1)) * _TIME[m.group(2) or ""]


def seconds_to_ns(seconds):
    return round(seconds * 1e9)


def format_ns(ns):
    """Integer nanoseconds -> seconds with exactly nine decimals (lossless)."""
    sign = "-" if ns < 0 else ""
    ns = abs(ns)
    return "%s%d.%09d" % (sign, ns // 10**9, ns % 10**9)


def parse_ns(text):
    """Inverse of format_ns; also accepts any decimal seconds string."""
    text = text.strip()
    sign = -1 if text.startswith("-") else 1
    whole, _, frac = text.lstrip("+-").partition(".")
    if len(frac) > 9:
        return sign * round(float(text.lstrip("+-")) * 1e9)
    return sign * (int(whole or "0") * 10**9 + int((frac + "000000000")[:9]))
