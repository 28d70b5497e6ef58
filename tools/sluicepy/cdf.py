"""Flow-size distributions given as piecewise-linear CDFs.

File format: one point per line, `size_in_bytes cumulative_percent`, starting
at `0 0` and ending at 100; '#' starts a comment. A size is drawn by inverse
transform sampling with linear interpolation between the points, then rounded
up to whole bytes (at least one byte), so P(size <= s) equals the file's
percentile at every listed s.
"""

import bisect
import math


class FlowSizeCdf:
    def __init__(self, points, name="cdf"):
        self.name = name
        self.sizes = [float(s) for s, _ in points]
        self.cum = [float(p) / 100.0 for _, p in points]
        self._validate()

    @classmethod
    def from_file(cls, path):
        points = []
        with open(path) as f:
            for lineno, line in enumerate(f, 1):
                line = line.split("#", 1)[0].strip()
                if not line:
                    continue
                fields = line.split()
                if len(fields) != 2:
                    raise ValueError("%s:%d: expected 'size percent'" % (path, lineno))
                points.append((float(fields[0]), float(fields[1])))
        return cls(points, name=path)

    def _validate(self):
        if len(self.sizes) < 2:
            raise ValueError("%s: a CDF needs at least two points" % self.name)
        if self.cum[0] != 0.0 or abs(self.cum[-1] - 1.0) > 1e-9:
            raise ValueError("%s: percentiles must start at 0 and end at 100" % self.name)
        self.cum[-1] = 1.0
        for i in range(1, len(self.sizes)):
            if self.sizes[i] < self.sizes[i - 1] or self.cum[i] < self.cum[i - 1]:
                raise ValueError("%s: point %d is not non-decreasing" % (self.name, i + 1))

    def quantile(self, u):
        """Continuous size at cumulative probability u in [0, 1]."""
        i = max(1, bisect.bisect_left(self.cum, u))
        i = min(i, len(self.cum) - 1)
        lo, hi = self.cum[i - 1], self.cum[i]
        s0, s1 = self.sizes[i - 1], self.sizes[i]
        if hi <= lo:
            return s1
        return s0 + (s1 - s0) * (u - lo) / (hi - lo)

    def size_at(self, u, max_size=None):
        """Integer flow size (bytes) drawn for the uniform variate u."""
        size = max(1, math.ceil(self.quantile(u)))
        return min(size, max_size) if max_size else size

    def cdf(self, size):
        """P(continuous size <= size), interpolated like the sampler."""
        if size <= self.sizes[0]:
            return 0.0
        if size >= self.sizes[-1]:
            return 1.0
        i = bisect.bisect_right(self.sizes, size)
        s0, s1 = self.sizes[i - 1], self.sizes[i]
        return self.cum[i - 1] + (self.cum[i] - self.cum[i - 1]) * (size - s0) / (s1 - s0)

    def expectation(self, func, max_size=None, points_per_segment=256):
        """E[func(size)] for integer sampled sizes, by the midpoint rule inside
        each segment of the CDF (size is linear in u there, so this converges
        fast and never straddles a segment boundary)."""
        total = 0.0
        n = points_per_segment
        for i in range(1, len(self.cum)):
            mass = self.cum[i] - self.cum[i - 1]
            if mass <= 0:
                continue
            lo = self.cum[i - 1]
            acc = 0.0
            for k in range(n):
                acc += func(self.size_at(lo + mass * (k + 0.5) / n, max_size))
            total += mass * acc / n
        return total
