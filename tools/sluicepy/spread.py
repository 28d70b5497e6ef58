"""A figure over several seeds, with its spread beside it: every table of a
multi-seed run gives the mean or median with the min-max (and the JSON the
standard deviation) of the seeds' values."""

import math
import statistics


def stats(values):
    """{n, mean, median, min, max, std} of the values (None ignored), or
    None when there are none. An infinite value (a p99 over unfinished
    work) makes the mean and the standard deviation infinite."""
    v = [x for x in values if x is not None]
    if not v:
        return None
    if not all(math.isfinite(x) for x in v):
        std = math.inf
    else:
        std = statistics.stdev(v) if len(v) > 1 else 0.0
    return {"n": len(v), "mean": statistics.fmean(v), "median": statistics.median(v),
            "min": min(v), "max": max(v), "std": std}


def text(values, fmt="%.3g", centre="mean"):
    """'centre (min-max)' over the values; the value alone for one seed or
    when min and max print alike; '-' for none."""
    s = stats(values)
    if s is None:
        return "-"
    lo, hi = fmt % s["min"], fmt % s["max"]
    if s["n"] == 1 or lo == hi:
        return fmt % s[centre]
    return "%s (%s-%s)" % (fmt % s[centre], lo, hi)


def range_text(values, fmt="%.0f", scale=1.0):
    """'min-max' over the values ('-' for none; one value when they agree)."""
    v = [x * scale for x in values if x is not None]
    if not v:
        return "-"
    lo, hi = fmt % min(v), fmt % max(v)
    return lo if lo == hi else "%s-%s" % (lo, hi)
