"""Writes a sluice configuration for a datacenter fabric from a few parameters:
a two-tier leaf-spine or a three-tier k-ary fat-tree of capture-file hosts
and internal links, or one of the papers' fabrics by name.

  tools/fabric leafspine --leaves 8 --hosts-per-leaf 16 --spines 8 --rate 100Gbps \\
      --delay 1us --buffer 12MB --queues-per-port 32 -o fabric.yaml
  tools/fabric fattree --k 8 --rate 1Gbps --port-buffer-packets 100 -o fabric.yaml
  tools/fabric preset bfc-leafspine -o conf/fabrics/bfc-leafspine.yaml
  tools/fabric preset --list

The same arguments always give the same bytes; the file's header states the
command that generated it (every parameter spelled out) and, for a preset,
the paper section it follows. docs/testbed.md, "The papers' fabrics".

Hosts. Every host is a capture-file port of its leaf (edge) switch, as in
conf/leafspine.yaml: it replays workload/<host>.pcap and writes the first
128 bytes of each frame it receives to capture/rx_<host>.pcap (paths
relative to the directory sluice runs in), with mac, peer_mac, ipv4 (/24)
and peer_ip, so that tools/workload --hosts-from-config and
tools/experiment take the hosts from the file. Hosts are named h0, h1, ...
in switch order.

Addresses (unique for any size the tool accepts):
  leaf-spine: host j of leaf l is 10.l.j.2; its leaf port is 10.l.j.1/24.
    Leaf l's hosts are 10.l.0.0/16. Up to 256 leaves of up to 250 hosts.
  fat-tree k: host j of edge e in pod p is 10.p.(e*2^b + j).2, b the bits
    that count the k/2 hosts of an edge (b = ceil(log2(k/2))); its edge port
    is 10.p.(e*2^b + j).1/24. Edge e of pod p is 10.p.(e*2^b).0/(24-b), pod
    p is 10.p.0.0/16. Even k from 4 to 32.
  MACs spell the address: the switch port of 10.a.b.1 is 02:00:0a:aa:bb:01
    and its host 02:00:0a:aa:bb:02 (locally administered, unicast).

Routes. A switch reaches its own hosts by the connected /24 of each host
port. Leaf-spine: each leaf routes every other leaf's /16 over all its
uplinks (ECMP by flow hash); each spine routes each leaf's /16 down the
link(s) to that leaf. Fat-tree: an edge routes the other edges of its pod
(their /(24-b)) and the other pods (/16) up over its k/2 uplinks; an
aggregation switch routes each edge of its pod down and the other pods up
over its k/2 core links; a core switch routes each pod's /16 down. No route
covers an address that is not a host of the fabric, and no up route covers
one of the switch's own hosts. At most 16 ports per ECMP group (sluice's
kMaxEcmp) and 250 host ports per switch (rte_lpm's 256 tbl8 groups: each
host port's own /32 takes one).

Time. Each file's first key is clock: {mode: exact}, sluice's exact
fabric time: a discrete-event clock that never reads the machine's (these
fabrics are far beyond what one server carries in real time), under which
a run repeats byte for byte for a given top-level seed (1 unless
tools/experiment --seed sets it). Every port has its link's one-way
propagation delay: delay: --delay on both ports of an internal link, and
delay: --host-delay on every host port, the host link's, which sluice
models for a capture-file host in exact time only (in real time it refuses
a non-zero one). A frame is due at the far end of any link when its last
bit arrives: it starts when the wire is free, takes its serialisation at
the port's rate, then the delay. A host NIC's frame reaches its switch at
start + serialisation + delay; what the switch sends to a host is stamped
in capture/rx_<host>.pcap, and acts on the host's NIC, when its last bit
reaches the host (departure + serialisation + delay). So a base RTT has
every propagation delay of its path, host links included.

hop_rtt of every port is the physical link's round trip: 2 x the one-way
propagation delay + the serialisation of one MTU frame at the link's rate,
(mtu + 14 + 24) bytes (Ethernet header, and sluice's wire_overhead:
preamble, inter-frame gap, FCS), rounded up to the nanosecond; host ports
with --host-delay and --host-rate.

Buffers. Either a shared buffer per switch (--buffer, --alpha: sluice's
dynamic threshold), or --port-buffer-packets N, the DIBS paper's fixed
N-packet FIFO per output port, which sluice (one shared buffer per switch)
approximates per switch of P ports with
    size = P x N x (mtu + 14) bytes,  alpha = 1 / (P - 1),
so that one congested queue alone is refused at exactly its (N+1)th
full-size frame (N <= alpha (P N - (N - 1)) and N + 1 > alpha (P N - N)),
the switch holds what the paper's switch holds in total, and, as a ring
caps packets, queue_capacity = N rounded up to a power of two; two congested
queues get P N / (P + 1) frames each instead of N.
queue_capacity (auto) is the packets of avg-frame size that one queue alone
can take before the dynamic threshold stops it, alpha / (1 + alpha) x size,
rounded up to a power of two, so the shared buffer, not the ring, limits a
queue. The rings take ports x queues_per_port x queue_capacity x 24 bytes
of process memory (stated in the header).

mbufs (auto) bounds what the fabric can hold at once in exact time:
    mbufs = sum over switches of min(size / avg_frame,
                                     ports x queues_per_port x queue_capacity)
          + sum over the 2 directions of every internal link of
                ceil((delay + 1 ns) x rate / 8 / 84) + 1
          + sum over host ports of
                ceil((host delay + 1 ns) x host rate / 8 / 84) + 1
          + 32 x hosts          (one receive burst per host port)
          + 8192                (control frames, the pool's per-lcore
                                 caches, bursts between stages)
rounded up to a multiple of 1024. In exact time a port sends one frame at a
time: an internal link takes a frame only when its wire is free (the 10 us
link fifo of real time does not exist there), and a shaped port's bucket is
one frame. So a link direction carries at most the frame being serialised
and those whose last bit left within the last delay (+ 1 ns: sluice rounds
a wire's free instant to the nanosecond), which follow each other at least
84 bytes apart on the wire (a 60-byte frame, Ethernet's shortest, + 24 of
wire_overhead; tools/workload's frames and sluice's control frames are
never shorter). A host link holds mbufs toward its switch only: a host
NIC's waiting frames are capture records, it takes an mbuf when it starts a
frame on the wire, which then is in flight as above; what the switch sends
to a host is stamped and freed when it departs. The link and host terms
are hard bounds (for frames of 60 bytes or more). The buffer term is the
smaller of what the buffers hold in avg-frame frames and what the rings can
hold at all; only the rings' part is a hard bound (buffers holding frames
shorter than avg_frame on average hold more frames). A run's summary
reports the pool's high-water mark (mbuf_pools[].peak_in_use) to compare
with. mbuf_size (auto) is 2048 (DPDK's default) unless mtu + 14 + 6 (the
sluice data shim) needs more. The pool takes about mbufs x (mbuf_size +
320) bytes of EAL memory (-m).

No ecn or pfc section is written: tools/experiment sets each scheme's ECN,
PFC, BFC, Floodgate, DIBS and TCD, and the clock from its --clock (default
exact; with --clock real sluice refuses a host port's non-zero delay; the
flowtune scheme runs in exact time with its allocator inside the fabric,
flowtune_allocator, though not yet tried on these presets). Each switch has bfc: {enabled: false, no_backpressure: [...]},
the deadlock-avoidance pairs the BFC schemes keep: traffic that came down
from the tier above and goes up again never causes a pause (leaves: uplink
to uplink; fat-tree edges: uplink to uplink, aggregation switches: core
link to core link).
"""

import argparse
import math
import sys

from . import cli
from .units import parse_rate, parse_size, parse_time, seconds_to_ns

ETH_HEADER = 14       # bytes of Ethernet header in a frame sluice charges
WIRE_OVERHEAD = 24    # sluice's default wire_overhead (preamble 8, IFG 12, FCS 4)
DATA_SHIM = 6         # the 0x88B6 shim between sluice switches
TM_PACKET = 24        # bytes of one ring entry (lib/tm/tm_packet.h)
MIN_WIRE_FRAME = 84   # the shortest frame on the wire: 60 bytes + WIRE_OVERHEAD
WIRE_ROUNDING_NS = 1  # sluice rounds a wire's free instant to the ns
RX_BURST = 32         # frames a worker takes from a port per poll
POOL_SLACK = 8192
MBUF_OVERHEAD = 320   # headroom, rte_mbuf and mempool header per mbuf (approx.)
MAX_ECMP = 16         # switch/runtime.h kMaxEcmp
MAX_HOST_PORTS = 250  # rte_lpm's 256 tbl8 groups, one per host /32
SNAPLEN = 128


# ---------------------------------------------------------------- quantities

def fmt_rate(bps):
    for unit, mult in (("Tbps", 10**12), ("Gbps", 10**9), ("Mbps", 10**6), ("Kbps", 10**3)):
        if bps % mult == 0:
            return "%d%s" % (bps // mult, unit)
    return "%dbps" % bps


def fmt_ns(ns):
    for unit, mult in (("s", 10**9), ("ms", 10**6), ("us", 10**3)):
        if ns % mult == 0 and ns:
            return "%d%s" % (ns // mult, unit)
    return "%dns" % ns


def fmt_size(b):
    for unit, mult in (("GiB", 2**30), ("MiB", 2**20), ("GB", 10**9), ("MB", 10**6),
                       ("KiB", 2**10), ("KB", 10**3)):
        if b % mult == 0 and b:
            return "%d%s" % (b // mult, unit)
    return "%dB" % b


def fmt_alpha(a):
    text = "%.6f" % a
    text = text.rstrip("0")
    return text + "0" if text.endswith(".") else text


def bit_ceil(n):
    return 1 << max(0, math.ceil(n) - 1).bit_length()


def serialisation_ns(frame_wire_bytes, rate_bps):
    return -(-frame_wire_bytes * 8 * 10**9 // rate_bps)


def hop_rtt_ns(delay_ns, rate_bps, mtu):
    """2 x one-way delay + one MTU frame on the wire (mtu + 14 + 24 bytes) at
    rate_bps, rounded up to the nanosecond."""
    return 2 * delay_ns + serialisation_ns(mtu + ETH_HEADER + WIRE_OVERHEAD, rate_bps)


def mac_of(ip):
    a = [int(x) for x in ip.split(".")]
    return "02:00:%02x:%02x:%02x:%02x" % tuple(a)


def ip_str(a, b, c, d):
    return "%d.%d.%d.%d" % (a, b, c, d)


# ---------------------------------------------------------------- the model

class Port:
    def __init__(self, name, rate, hop_rtt, link=None, delay=None, host=None):
        self.name = name
        self.rate = rate
        self.hop_rtt = hop_rtt
        self.link = link      # "switch/port" for an internal link
        self.delay = delay    # one-way propagation delay (ns) of the link
        self.host = host      # (host name, port ip, host ip) for a host port


class Switch:
    def __init__(self, name):
        self.name = name
        self.ports = []
        self.routes = []      # (prefix, [port names])
        self.bfc_pairs = None  # ([from], [to]) or None
        self.bfc_comment = ""
        self.buffer = 0
        self.alpha = 1.0
        self.queue_capacity = 0


def add_link(a, a_port, b, b_port, rate, delay, mtu):
    rtt = hop_rtt_ns(delay, rate, mtu)
    a.ports.append(Port(a_port, rate, rtt, link="%s/%s" % (b.name, b_port), delay=delay))
    b.ports.append(Port(b_port, rate, rtt, link="%s/%s" % (a.name, a_port), delay=delay))


def add_host(sw, index, octets, p):
    port_ip = ip_str(*octets, 1)
    host_ip = ip_str(*octets, 2)
    sw.ports.append(Port("h%d" % index, p.host_rate, hop_rtt_ns(p.host_delay, p.host_rate, p.mtu),
                         delay=p.host_delay, host=("h%d" % index, port_ip, host_ip)))


def leafspine(p):
    if not 1 <= p.leaves <= 256:
        raise cli.ToolError("--leaves must be 1..256 (the second octet of 10.leaf.host.x)")
    if not 1 <= p.hosts_per_leaf <= MAX_HOST_PORTS:
        raise cli.ToolError("--hosts-per-leaf must be 1..%d (rte_lpm has 256 tbl8 groups and "
                            "each host port's /32 takes one)" % MAX_HOST_PORTS)
    if p.spines < 1 or p.links_per_spine < 1:
        raise cli.ToolError("--spines and --links-per-spine must be at least 1")
    if p.spines * p.links_per_spine > MAX_ECMP:
        raise cli.ToolError("a leaf would have %d uplinks; sluice's ECMP groups hold at most %d"
                            % (p.spines * p.links_per_spine, MAX_ECMP))

    def up(s, m):
        return "u%d" % s if p.links_per_spine == 1 else "u%d-%d" % (s, m)

    def down(l, m):
        return "d%d" % l if p.links_per_spine == 1 else "d%d-%d" % (l, m)

    leaves = [Switch("leaf%d" % l) for l in range(p.leaves)]
    spines = [Switch("spine%d" % s) for s in range(p.spines)]
    host = 0
    for l, leaf in enumerate(leaves):
        for j in range(p.hosts_per_leaf):
            add_host(leaf, host, (10, l, j), p)
            host += 1
    for l, leaf in enumerate(leaves):
        for s, spine in enumerate(spines):
            for m in range(p.links_per_spine):
                add_link(leaf, up(s, m), spine, down(l, m), p.rate, p.delay, p.mtu)
    for l, leaf in enumerate(leaves):
        uplinks = [up(s, m) for s in range(p.spines) for m in range(p.links_per_spine)]
        leaf.routes = [("10.%d.0.0/16" % o, uplinks) for o in range(p.leaves) if o != l]
        leaf.bfc_pairs = (uplinks, uplinks)
        leaf.bfc_comment = ("never push back on traffic that came down from a spine and "
                            "goes up again.")
    for spine in spines:
        spine.routes = [("10.%d.0.0/16" % l, [down(l, m) for m in range(p.links_per_spine)])
                        for l in range(p.leaves)]
    return leaves + spines


def fattree(p):
    k = p.k
    if k % 2 or not 4 <= k <= 32:
        raise cli.ToolError("--k must be even, 4..32 (10.pod.(edge*2^b + host).x must fit, and "
                            "an ECMP group holds at most %d ports)" % MAX_ECMP)
    half = k // 2
    b = max(0, (half - 1).bit_length())
    edges = [[Switch("edge%d-%d" % (pod, e)) for e in range(half)] for pod in range(k)]
    aggs = [[Switch("agg%d-%d" % (pod, a)) for a in range(half)] for pod in range(k)]
    cores = [Switch("core%d" % c) for c in range(half * half)]
    host = 0
    for pod in range(k):
        for e, edge in enumerate(edges[pod]):
            for j in range(half):
                add_host(edge, host, (10, pod, e * (1 << b) + j), p)
                host += 1
    for pod in range(k):
        for e, edge in enumerate(edges[pod]):
            for a, agg in enumerate(aggs[pod]):
                add_link(edge, "u%d" % a, agg, "d%d" % e, p.rate, p.delay, p.mtu)
    for pod in range(k):
        for a, agg in enumerate(aggs[pod]):
            for m in range(half):
                add_link(agg, "u%d" % m, cores[a * half + m], "d%d" % pod, p.rate, p.delay,
                         p.mtu)

    def edge_prefix(pod, e):
        return "10.%d.%d.0/%d" % (pod, e * (1 << b), 24 - b)

    ups = ["u%d" % i for i in range(half)]
    for pod in range(k):
        others = [("10.%d.0.0/16" % q, ups) for q in range(k) if q != pod]
        for e, edge in enumerate(edges[pod]):
            edge.routes = ([(edge_prefix(pod, o), ups) for o in range(half) if o != e] + others)
            edge.bfc_pairs = (ups, ups)
            edge.bfc_comment = ("never push back on traffic that came down from an "
                                "aggregation switch and goes up again.")
        for agg in aggs[pod]:
            agg.routes = [(edge_prefix(pod, e), ["d%d" % e]) for e in range(half)] + others
            agg.bfc_pairs = (ups, ups)
            agg.bfc_comment = ("never push back on traffic that came down from a core "
                               "switch and goes up again.")
    for core in cores:
        core.routes = [("10.%d.0.0/16" % pod, ["d%d" % pod]) for pod in range(k)]
    return ([s for pod in edges for s in pod] + [s for pod in aggs for s in pod] + cores)


def size_buffers(switches, p):
    frame = p.mtu + ETH_HEADER
    for sw in switches:
        n_ports = len(sw.ports)
        if p.port_buffer_packets:
            if n_ports < 2:
                raise cli.ToolError("switch %s has one port: no per-port buffer model" % sw.name)
            sw.buffer = n_ports * p.port_buffer_packets * frame
            sw.alpha = float(fmt_alpha(1.0 / (n_ports - 1)))
            sw.queue_capacity = p.queue_capacity or bit_ceil(p.port_buffer_packets)
        else:
            sw.buffer = p.buffer
            sw.alpha = p.alpha
            alone = p.alpha / (1.0 + p.alpha) * p.buffer
            sw.queue_capacity = p.queue_capacity or bit_ceil(alone / p.avg_frame)
        sw.queue_capacity = min(max(sw.queue_capacity, 16), 1048576)


def in_flight(delay_ns, rate_bps):
    """Frames one link direction can carry at once in exact time: the one
    being serialised and those whose last bit left within the delay (+ the
    nanosecond of rounding), at least MIN_WIRE_FRAME bytes apart."""
    return -(-(delay_ns + WIRE_ROUNDING_NS) * rate_bps // (8 * 10**9 * MIN_WIRE_FRAME)) + 1


def mbuf_budget(switches, p):
    """(mbufs, terms) by the formula of the docstring."""
    buffers = sum(min(-(-sw.buffer // p.avg_frame),
                      len(sw.ports) * p.queues * sw.queue_capacity) for sw in switches)
    # Each port of an internal link is the sending end of one direction; a
    # host port's link holds mbufs only from the host to the switch.
    links = sum(in_flight(port.delay, port.rate) for sw in switches for port in sw.ports
                if port.link)
    host_links = sum(in_flight(port.delay, port.rate) for sw in switches for port in sw.ports
                     if port.host)
    hosts = RX_BURST * sum(1 for sw in switches for port in sw.ports if port.host)
    total = buffers + links + host_links + hosts + POOL_SLACK
    return -(-total // 1024) * 1024, (buffers, links, host_links, hosts, POOL_SLACK)


def auto_mbuf_size(mtu):
    need = mtu + ETH_HEADER + DATA_SHIM
    return 2048 if need <= 2048 else -(-need // 1024) * 1024


# ---------------------------------------------------------------- writing

def canonical_command(p):
    """The command that gives this file: every parameter spelled out."""
    args = ["tools/fabric", p.topology]
    if p.topology == "leafspine":
        args += ["--leaves", p.leaves, "--hosts-per-leaf", p.hosts_per_leaf,
                 "--spines", p.spines, "--links-per-spine", p.links_per_spine]
    else:
        args += ["--k", p.k]
    args += ["--rate", fmt_rate(p.rate), "--host-rate", fmt_rate(p.host_rate),
             "--delay", fmt_ns(p.delay), "--host-delay", fmt_ns(p.host_delay)]
    if p.port_buffer_packets:
        args += ["--port-buffer-packets", p.port_buffer_packets]
    else:
        args += ["--buffer", fmt_size(p.buffer), "--alpha", fmt_alpha(p.alpha)]
    args += ["--queues-per-port", p.queues]
    if p.queue_capacity:
        args += ["--queue-capacity", p.queue_capacity]
    args += ["--mtu", p.mtu, "--avg-frame", "%dB" % p.avg_frame]
    if p.mbufs:
        args += ["--mbufs", p.mbufs]
    if p.mbuf_size:
        args += ["--mbuf-size", p.mbuf_size]
    return [str(a) for a in args]


def wrap_command(words, width=76):
    """The command as '#' comment lines continued with backslashes, an
    option never parted from its value."""
    units, i = [], 0
    while i < len(words):
        if words[i].startswith("--") and i + 1 < len(words) and \
                not words[i + 1].startswith("--"):
            units.append(words[i] + " " + words[i + 1])
            i += 2
        else:
            units.append(words[i])
            i += 1
    lines, line = [], "#  "
    for u in units:
        if len(line) + 1 + len(u) + 2 > width and line.strip() != "#":
            lines.append(line + " \\")
            line = "#     "
        line += " " + u
    lines.append(line)
    return lines


def summary_lines(switches, p, mbufs, terms, mbuf_size):
    hosts = sum(1 for sw in switches for port in sw.ports if port.host)
    ports = sum(len(sw.ports) for sw in switches)
    links = sum(1 for sw in switches for port in sw.ports if port.link) // 2
    rings = sum(len(sw.ports) * p.queues * sw.queue_capacity * TM_PACKET for sw in switches)
    kinds = {}
    for sw in switches:
        for port in sw.ports:
            kinds.setdefault((port.hop_rtt, port.rate, port.delay), set()).add(
                "host" if port.host else "switch")
    out = ["%d hosts, %d switches, %d ports, %d internal links." % (hosts, len(switches),
                                                                  ports, links)]
    for (rtt, rate, delay), kind in sorted(kinds.items()):
        out.append("hop_rtt %s on the %s ports: 2 x %s + one MTU frame on the wire, "
                   "%d bytes (mtu %d + 14 + 24), at %s, rounded up to the ns."
                   % (fmt_ns(rtt), " and ".join(sorted(kind)), fmt_ns(delay),
                      p.mtu + ETH_HEADER + WIRE_OVERHEAD, p.mtu, fmt_rate(rate)))
    out.append("Exact fabric time: every link, host links included, has its propagation "
               "delay; a frame reaches the far end when its last bit does (start + "
               "serialisation + delay).")
    out.append("mbufs %d = %d (switch buffers in %d-byte frames, or what their rings hold if "
               "less) + %d (in flight on internal "
               "links) + %d (in flight from hosts) + %d (host receive bursts) + %d (slack), "
               "rounded up to 1024: the most frames the run may hold at once. The pools "
               "grow as the fabric holds frames, to about %d MB at most (docs/emulator.md, "
               "\"Memory\")."
               % (mbufs, terms[0], p.avg_frame, terms[1], terms[2], terms[3], terms[4],
                  round(mbufs * (mbuf_size + MBUF_OVERHEAD) / 1e6)))
    out.append("Queue rings: %s of process memory reserved (ports x queues_per_port x "
               "queue_capacity x 24 B), resident as the queues fill." % ("%d MB" % round(rings / 1e6) if rings >= 10**6
                                           else "%d KB" % math.ceil(rings / 1e3)))
    return out


def comment_block(paragraphs, width=76, indent=""):
    """Paragraphs as '# ' lines wrapped at width ('' is an empty comment
    line), each line starting with indent."""
    out = []
    for para in paragraphs:
        if para == "":
            out.append(indent + "#")
            continue
        line = indent + "#"
        for word in para.split():
            if len(line) + 1 + len(word) > width and line != indent + "#":
                out.append(line)
                line = indent + "#"
            line += " " + word
        out.append(line)
    return out


def render(switches, p, header, intro):
    mbuf_size = p.mbuf_size or auto_mbuf_size(p.mtu)
    mbufs, terms = mbuf_budget(switches, p)
    if p.mbufs:
        mbufs = p.mbufs
    if not 1024 <= mbufs <= 67108864:
        raise cli.ToolError("mbufs %d is outside sluice's 1024..67108864" % mbufs)
    lines = header[:]
    lines += comment_block(["", intro])
    lines += wrap_command(canonical_command(p))
    lines += comment_block([""] + summary_lines(switches, p, mbufs, terms, mbuf_size))
    lines += ["", "clock: {mode: exact}", "metrics:", "  enabled: false", "mbufs: %d" % mbufs,
              "mbuf_size: %d" % mbuf_size, "switches:"]
    mtu = "" if p.mtu == 1500 else ", mtu: %d" % p.mtu
    for sw in switches:
        lines.append("  - name: %s" % sw.name)
        lines.append("    queues_per_port: %d" % p.queues)
        lines.append("    queue_capacity: %d" % sw.queue_capacity)
        lines.append("    buffer: {size: %s, alpha: %s}" % (fmt_size(sw.buffer),
                                                            fmt_alpha(sw.alpha)))
        if sw.bfc_pairs:
            lines += comment_block(["BFC (off here; tools/experiment's bfc schemes turn it "
                                    "on): " + sw.bfc_comment], indent="    ")
            frm, to = sw.bfc_pairs
            lines += ["    bfc:", "      enabled: false", "      no_backpressure:",
                      "        - from: [%s]" % ", ".join(frm), "          to: [%s]" % ", ".join(to)]
        lines.append("    ports:")
        for port in sw.ports:
            if port.host:
                name, port_ip, host_ip = port.host
                lines.append("      - {name: %s, role: host, delay: %s, rate: %s, hop_rtt: %s%s,"
                             % (port.name, fmt_ns(port.delay), fmt_rate(port.rate),
                                fmt_ns(port.hop_rtt), mtu))
                lines.append("         pcap: {rx: workload/%s.pcap, tx: capture/rx_%s.pcap, "
                             "snaplen: %d}," % (name, name, SNAPLEN))
                lines.append('         mac: "%s", peer_mac: "%s",'
                             % (mac_of(port_ip), mac_of(host_ip)))
                lines.append("         ipv4: %s/24, peer_ip: %s}" % (port_ip, host_ip))
            else:
                lines.append("      - {name: %s, link: %s, delay: %s, role: switch, rate: %s, "
                             "hop_rtt: %s%s}" % (port.name, port.link, fmt_ns(port.delay),
                                                 fmt_rate(port.rate), fmt_ns(port.hop_rtt),
                                                 mtu))
        if sw.routes:
            lines.append("    routes:")
            for prefix, ports in sw.routes:
                lines.append("      - {prefix: %s, ports: [%s]}" % (prefix, ", ".join(ports)))
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- presets

# Each preset: the topology's arguments and the header that says what it
# follows. Sources: docs/testbed.md "The papers' fabrics"; the numbers, with
# where each comes from, are listed in the header of each generated file.
PRESETS = {
    "bfc-leafspine": {
        "argv": ["leafspine", "--leaves", "8", "--hosts-per-leaf", "16", "--spines", "8",
                 "--rate", "100Gbps", "--delay", "1us", "--buffer", "12MB", "--alpha", "1",
                 "--queues-per-port", "32"],
        "header": [
            "The leaf-spine of the BFC paper's simulations (Goyal et al., \"Backpressure Flow "
            "Control\", NSDI 2022, 6.2.1 Setup): 128 hosts, 8 ToR (leaf) switches of 16 hosts "
            "each, 8 spines, every spine linked to every leaf (2:1 oversubscribed), all links "
            "100 Gb/s with 1 us of propagation delay, host links included (the paper's 1-hop "
            "RTT is 2 us, its largest base RTT 8 us; in sluice's exact fabric time every link "
            "here has its delay, so the propagation in each base RTT is the paper's), 12 MB "
            "of shared buffer per switch (12,000,000 B: the "
            "paper's 40 us of the ToR's 2.4 Tb/s), 32 queues per port (BFC's physical queues, "
            "as SwitchX has per 100G port), flow-level ECMP. BFC's flow table at sluice's "
            "default flow_table_factor 100 is 100 x 24 ports x 32 queues = 76,800 entries on "
            "a leaf, the paper's 76K.",
            "",
            "Not here, or not the same: the paper's MTU is 1 KB; the ports keep sluice's 1500 "
            "so that a default tools/workload (1500-byte packets) is not dropped as too big: "
            "generate the paper's packets with tools/workload --mtu 1000 (after -- for "
            "tools/experiment). The buffer's alpha is not given (sluice's 1 is used). The "
            "paper's PFC for its baselines triggers at 11% of the free buffer "
            "(tools/experiment gives a fixed --pfc-xoff; sluice's pfc: {xoff: dynamic, "
            "alpha: 0.11} is the paper's rule), its DCQCN and DCTCP mark ECN between Kmin "
            "100 KB and Kmax 400 KB (tools/experiment marks at a step, --ecn-k). Workload "
            "(6.2.1, 6.2.2): Google or FB_Hadoop sizes, lognormal arrivals with sigma 2 "
            "(tools/workload --arrivals lognormal), 100-to-1 incasts of 20 MB every 500 us, "
            "--link-rate 100Gbps.",
        ],
    },
    "floodgate-10tor-4core": {
        "argv": ["leafspine", "--leaves", "10", "--hosts-per-leaf", "16", "--spines", "4",
                 "--rate", "400Gbps", "--host-rate", "100Gbps", "--delay", "600ns",
                 "--buffer", "20MiB", "--alpha", "1", "--queues-per-port", "8"],
        "header": [
            "The leaf-spine of the Floodgate authors' public ns-3 simulations "
            "(github.com/NASA-NJU/Floodgate-NS3, mix/leafspine-10ToR-4Core.topo, used by "
            "every mix/config-*.ini there; Liu et al., \"Floodgate: Taming Incast in "
            "Datacenter Networks\", CoNEXT 2021, evaluation): 160 hosts, 10 ToRs of 16 hosts, "
            "4 cores, every core linked to every ToR; host links 100 Gb/s, ToR-core links "
            "400 Gb/s (not oversubscribed), 600 ns of delay on every link, host links "
            "included (in sluice's exact fabric time the propagation in a base RTT is theirs: "
            "4.8 us between ToRs); BUFFER_SIZE 20, "
            "which scratch/third.cc makes 20 x 1024 x 1024 bytes per switch; 8 queues per "
            "port (src/point-to-point/model/switch-mmu.h qCnt); PACKET_PAYLOAD_SIZE 1460 "
            "(1500-byte IP packets, sluice's MTU); per-flow ECMP (ROUTING_MODE 0). Their "
            "Floodgate settings are sluice's defaults: a window of 1.5 x the hop's BDP "
            "(SWITCH_WIN_M) plus 10 us of the link's rate (SWTICH_CREDIT_INTERVAL, in us), "
            "delayCredit above 1.5 x the largest rate x 2 x delay (SWITCH_ACK_TH_M), a "
            "credit every 10 KiB (SWTICH_BYTE_COUNTER 10240) or 10 us, 100 VOQs, on all 14 "
            "switches; their BDP is 2 x propagation, sluice's hop_rtt adds one frame's "
            "serialisation (1231 ns, not 1200, on a core link).",
            "",
            "Not here, or not the same: their switches' egress has no dynamic threshold "
            "(sluice's alpha 1 is used); their PFC is dynamic, free buffer x 1/4 on 100G "
            "ports and x 1 on 400G ports, with 4 x 2-way-BDP headroom per port; their ECN is "
            "RED with Kmin, Kmax and Pmax of 400KB, 1600KB and 0.2 at 100G, 1600KB, 6400KB "
            "and 0.2 at 400G (tools/experiment marks at a step, --ecn-k). "
            "--link-rate 100Gbps for tools/workload and tools/experiment.",
        ],
    },
    "dibs-fattree-k8": {
        "argv": ["fattree", "--k", "8", "--rate", "1Gbps", "--delay", "1us",
                 "--port-buffer-packets", "100", "--queues-per-port", "1"],
        "header": [
            "The fat-tree of the DIBS paper's simulations (Zarifis et al., \"DIBS: "
            "Just-in-time Congestion Mitigation for Data Centers\", EuroSys 2014, 5.3 and "
            "Table 1): a k=8 fat-tree, 128 hosts, 80 switches (32 edge, 32 aggregation and "
            "16 core switches: the paper states k=8, 128 servers and, in Figure 1, 16 cores; "
            "the rest follows from k=8), 1 Gb/s links, 1500-byte MTU, a 100-packet FIFO per "
            "output port (one queue per port here; the buffer model is in tools/fabric's "
            "docstring), flow-level ECMP.",
            "",
            "Not here, or not the same: the paper gives no link delay; 1 us on every link, "
            "host links included, is this preset's choice (at 1 Gb/s one 1538-byte frame "
            "takes 12.3 us on the wire). "
            "Its DCTCP marks at K = 20 packets: tools/experiment --ecn-k 30280B (20 x 1514). "
            "A sluice switch shares one buffer among its ports: a lone congested queue stops "
            "at 100 full-size frames as in the paper, two congested queues of one switch at 88 "
            "each. --link-rate 1Gbps for tools/workload and tools/experiment.",
        ],
    },
    "dibs-testbed-1g": {
        "argv": ["leafspine", "--leaves", "3", "--hosts-per-leaf", "2", "--spines", "2",
                 "--rate", "1Gbps", "--delay", "5us", "--port-buffer-packets", "100",
                 "--queues-per-port", "1"],
        "header": [
            "The DIBS paper's Click testbed (Zarifis et al., \"DIBS: Just-in-time Congestion "
            "Mitigation for Data Centers\", EuroSys 2014, 5.2 and Table 1): a small fat-tree "
            "of two aggregation switches (spine0, spine1 here) and three edge switches "
            "(leaf0..leaf2) with two servers each, 1 Gb/s links, 1500-byte MTU, 100-packet "
            "buffers per port. The paper's incast: the first five servers (h0..h4) each send "
            "ten simultaneous 32 KB flows to the last (h5).",
            "",
            "tools/reproduce dibs-testbed runs it with the paper's TCP at the hosts "
            "(docs/mechanisms/dibs-testbed.md). Each switch's buffer is the tools/fabric "
            "per-port model (ports x 100 frames, alpha 1 / (ports - 1)). The paper gives no "
            "link delay; every link here, host links included, has 5 us. DCTCP marking at K = 20 "
            "packets: tools/experiment --ecn-k 30280B. --link-rate 1Gbps.",
        ],
    },
}


# ---------------------------------------------------------------- arguments

def add_common(ap, rate, buffer, queues):
    ap.add_argument("--rate", default=rate, help="rate of the switch-to-switch links")
    ap.add_argument("--host-rate", default=None,
                    help="rate of the host links (default: --rate)")
    ap.add_argument("--delay", default="1us",
                    help="one-way propagation delay of the switch-to-switch links")
    ap.add_argument("--host-delay", default=None,
                    help="one-way propagation delay of the host links (each host port's "
                         "delay, in exact fabric time; default: --delay)")
    ap.add_argument("--buffer", default=buffer, help="shared buffer per switch")
    ap.add_argument("--alpha", default="1", help="dynamic-threshold alpha of the buffer")
    ap.add_argument("--port-buffer-packets", type=int, default=0,
                    help="instead of --buffer/--alpha: N full-size packets per output port "
                         "(size = ports x N x (mtu + 14), alpha = 1 / (ports - 1); 0 = off)")
    ap.add_argument("--queues-per-port", dest="queues", type=int, default=queues,
                    help="data queues per port (1..64)")
    ap.add_argument("--queue-capacity", type=int, default=0,
                    help="packets per data queue (0 = auto: what one queue alone can hold "
                         "of --avg-frame frames, as a power of two)")
    ap.add_argument("--mtu", type=int, default=1500, help="IP MTU of every port (68..9216)")
    ap.add_argument("--avg-frame", default="1000B",
                    help="average frame size for sizing mbufs and queue rings")
    ap.add_argument("--mbufs", type=int, default=0, help="mbuf pool size (0 = auto)")
    ap.add_argument("--mbuf-size", type=int, default=0,
                    help="mbuf data room (0 = auto: 2048 unless the MTU needs more)")
    ap.add_argument("-o", "--out", default="-", help="output file (- = stdout)")


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """--help shows every default, except where the help says what it is."""

    def _get_help_string(self, action):
        if action.default is None:
            return action.help
        return super()._get_help_string(action)


def parser():
    fmt = HelpFormatter
    ap = argparse.ArgumentParser(prog="tools/fabric", description=__doc__.split("\n\n")[0],
                                 epilog="Details: the docstring of tools/fabric and "
                                        "docs/testbed.md, \"The papers' fabrics\".",
                                 formatter_class=fmt)
    sub = ap.add_subparsers(dest="topology", required=True)
    ls = sub.add_parser("leafspine", formatter_class=fmt,
                        help="two tiers: leaves with hosts, spines linked to every leaf")
    ls.add_argument("--leaves", type=int, default=2, help="leaf (ToR) switches, 1..256")
    ls.add_argument("--hosts-per-leaf", type=int, default=4, help="hosts under each leaf")
    ls.add_argument("--spines", type=int, default=2, help="spine switches")
    ls.add_argument("--links-per-spine", type=int, default=1,
                    help="parallel links between each leaf and each spine")
    add_common(ls, "10Gbps", "2MB", 8)
    ft = sub.add_parser("fattree", formatter_class=fmt,
                        help="three tiers: k pods of k/2 edge and k/2 aggregation switches, "
                             "(k/2)^2 cores, k^3/4 hosts")
    ft.add_argument("--k", type=int, default=4, help="switch radix (even, 4..32)")
    add_common(ft, "10Gbps", "2MB", 8)
    pr = sub.add_parser("preset", formatter_class=fmt, help="one of the papers' fabrics")
    pr.add_argument("name", nargs="?", choices=sorted(PRESETS), help="the preset")
    pr.add_argument("--list", action="store_true", help="list the presets")
    pr.add_argument("-o", "--out", default="-", help="output file (- = stdout)")
    return ap


def resolve(a):
    """Parsed arguments -> the parameters, in base units, checked."""
    try:
        a.rate = parse_rate(a.rate)
        a.host_rate = parse_rate(a.host_rate) if a.host_rate else a.rate
        a.delay = seconds_to_ns(parse_time(a.delay))
        a.host_delay = seconds_to_ns(parse_time(a.host_delay)) if a.host_delay else a.delay
        a.buffer = parse_size(a.buffer)
        a.alpha = float(a.alpha)
        a.avg_frame = parse_size(a.avg_frame)
    except ValueError as e:
        raise cli.ToolError(str(e))
    if not 1 <= a.queues <= 64:
        raise cli.ToolError("--queues-per-port must be 1..64")
    if not 68 <= a.mtu <= 9216:
        raise cli.ToolError("--mtu must be 68..9216")
    if a.delay <= 0 or a.host_delay < 0:
        raise cli.ToolError("--delay must be above 0 and --host-delay at least 0")
    if not a.alpha > 0 or a.buffer <= 0 or a.avg_frame < 64:
        raise cli.ToolError("--alpha and --buffer must be above 0, --avg-frame at least 64B")
    if a.port_buffer_packets < 0 or a.queue_capacity < 0 or a.mbufs < 0:
        raise cli.ToolError("counts must not be negative")
    if a.queue_capacity and not 16 <= a.queue_capacity <= 1048576:
        raise cli.ToolError("--queue-capacity must be 16..1048576")
    if a.mbuf_size and not 2048 <= a.mbuf_size <= 65407:
        raise cli.ToolError("--mbuf-size must be 2048..65407")
    if a.mbuf_size and a.mbuf_size < a.mtu + ETH_HEADER:
        raise cli.ToolError("--mbuf-size must hold an MTU frame (mtu + 14)")
    return a


def generate(argv, header=None, intro=None):
    """The configuration text for tools/fabric arguments (without -o)."""
    a = parser().parse_args(argv)
    p = resolve(a)
    switches = leafspine(p) if p.topology == "leafspine" else fattree(p)
    size_buffers(switches, p)
    if header is None:
        header = comment_block(["A %s of capture-file hosts written by tools/fabric (not "
                                "one of its paper presets); docs/testbed.md, \"The papers' "
                                "fabrics\"." % ("leaf-spine" if p.topology == "leafspine"
                                                else "fat-tree")])
    return render(switches, p, header,
                  intro or "Generated by this command (the same arguments give the same bytes):")


def preset_text(name):
    pre = PRESETS[name]
    header = comment_block(pre["header"])
    return generate(pre["argv"], header,
                    "Generated by tools/fabric preset %s (docs/testbed.md, \"The papers' "
                    "fabrics\"), which is:" % name)


def write(text, out):
    if out == "-":
        sys.stdout.write(text)
        return
    with open(out, "w") as f:
        f.write(text)


def main(argv):
    a = parser().parse_args(argv)
    if a.topology == "preset":
        if a.list or not a.name:
            for name in sorted(PRESETS):
                print("%-24s %s" % (name, " ".join(PRESETS[name]["argv"])))
            return
        write(preset_text(a.name), a.out)
        return
    out = a.out
    argv = list(argv)
    # -o/--out is not a parameter of the fabric: leave it out of the header.
    for flag in ("-o", "--out"):
        while flag in argv:
            i = argv.index(flag)
            del argv[i:i + 2]
    argv = [x for x in argv if not x.startswith("--out=")]
    write(generate(argv), out)

