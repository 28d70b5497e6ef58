"""Which links a transport flow's frames take through a tools/fabric
fat-tree, and what each flow would get if every link were shared max-min
fairly: the ideal the per-flow goodput of a run is read against.

The path follows the ECMP rule of docs/packet-processing.md ("Flow hash and
ECMP"): at each switch with more than one way up, the member is picked by
the switch's salted 5-tuple hash. A transport frame's 5-tuple is UDP from
port 49152 + flow id mod 16384 to port 9001, the reply's the reverse
(docs/wire-formats.md). The benchmark that uses this checks it against the
run: the egress ports predicted to carry frames are exactly those that
sent some.
"""

from collections import Counter

from .payload import ip_bytes
from .transport_frames import UDP_PORT as TRANSPORT_UDP_PORT

M64 = (1 << 64) - 1
UDP = 17


def fmix64(k):
    k ^= k >> 33
    k = (k * 0xFF51AFD7ED558CCD) & M64
    k ^= k >> 33
    k = (k * 0xC4CEB9FE1A85EC53) & M64
    return k ^ (k >> 33)


def flow_hash(src_ip, dst_ip, proto, src_port, dst_port):
    a = (src_ip << 32 | dst_ip) & M64
    b = proto << 32 | src_port << 16 | dst_port
    return fmix64(a ^ ((b * 0x9E3779B97F4A7C15) & M64)) >> 32


def ecmp_salt(seed, switch_index):
    return fmix64((fmix64(seed ^ (1 << 56)) + switch_index) & M64)


def flow_port(flow_id):
    return 49152 + flow_id % 16384


def ipv4(text):
    return int.from_bytes(ip_bytes(text), "big")


class FatTree:
    """The switches of a tools/fabric fat-tree configuration (edge<p>-<i>,
    agg<p>-<i>, core<i>; up ports u<j>, down ports d<j>, host ports named
    after their hosts)."""

    def __init__(self, conf):
        self.seed = conf.get("seed", 1)
        self.switches = conf["switches"]
        self.index = {sw["name"]: i for i, sw in enumerate(self.switches)}
        self.host_port = {}  # host IP -> (edge switch, port name)
        for sw in self.switches:
            for p in sw["ports"]:
                if p.get("role") == "host":
                    self.host_port[p["peer_ip"]] = (sw["name"], p["name"])

    def _step(self, name, dst_edge, h):
        """The egress port switch `name` sends toward dst_edge by."""
        ports = self.switches[self.index[name]]["ports"]
        pod = dst_edge.split("-")[0][len("edge"):]
        if name.startswith("agg") and name.split("-")[0][len("agg"):] == pod:
            below = dst_edge + "/"
        elif name.startswith("core"):
            below = "agg%s-" % pod
        else:
            below = None
        if below:
            for p in ports:
                if p.get("link", "").startswith(below):
                    return p
        ups = [p for p in ports if p["name"].startswith("u")]
        salted = fmix64(h ^ ecmp_salt(self.seed, self.index[name]))
        return ups[((salted >> 32) * len(ups)) >> 32]

    def path(self, src_ip, dst_ip, src_port, dst_port):
        """[(switch, egress port)] from src_ip's edge switch to dst_ip's
        host port."""
        h = flow_hash(ipv4(src_ip), ipv4(dst_ip), UDP, src_port, dst_port)
        cur = self.host_port[src_ip][0]
        dst_edge, dst_port_name = self.host_port[dst_ip]
        links = []
        while cur != dst_edge:
            p = self._step(cur, dst_edge, h)
            links.append((cur, p["name"]))
            cur = p["link"].split("/")[0]
            if len(links) > 4:
                raise ValueError("no fat-tree path from %s to %s" % (src_ip, dst_ip))
        return links + [(cur, dst_port_name)]

    def flow_paths(self, flow_id, src_ip, dst_ip):
        """(data path, reply path) of a transport flow."""
        return (self.path(src_ip, dst_ip, flow_port(flow_id), TRANSPORT_UDP_PORT),
                self.path(dst_ip, src_ip, TRANSPORT_UDP_PORT, flow_port(flow_id)))


def uplink_choices(path):
    """(tor_up, agg_up): the up port the path leaves its edge switch by and
    the one it leaves its aggregation switch by (-1 where it turns down)."""
    ups = [int(port[1:]) for sw, port in path if port.startswith("u")]
    return tuple(ups + [-1] * (2 - len(ups)))


def max_min_shares(paths):
    """{flow: share of one link's capacity} when every link (a (switch,
    port) pair, or any hashable name) is shared max-min fairly among the
    flows whose paths cross it (progressive filling)."""
    left = {link: 1.0 for p in paths.values() for link in p}
    share, active = {}, set(paths)
    while active:
        n = Counter(link for f in active for link in paths[f])
        tight = min(n, key=lambda link: (left[link] / n[link], str(link)))
        level = left[tight] / n[tight]
        for f in sorted(f for f in active if tight in paths[f]):
            share[f] = level
            active.discard(f)
            for link in paths[f]:
                left[link] -= level
    return share


def links(k, src, dst, tor_up, agg_up):
    """The switch egress links a flow from host src to host dst crosses in
    a k-ary fat-tree, given its uplink choices: names common to both
    simulators (edge up port j leads to the pod's aggregation switch j;
    aggregation switch i's up port j to core i * k/2 + j, which leads down
    to aggregation switch i of every pod)."""
    half = k // 2
    e_s, e_d = src // half, dst // half
    p_s, p_d = src // (half * half), dst // (half * half)
    if e_s == e_d:
        return [("to host", dst)]
    if p_s == p_d:
        return [("edge up", e_s, tor_up), ("agg down", p_d, tor_up, e_d), ("to host", dst)]
    return [("edge up", e_s, tor_up), ("agg up", p_s, tor_up, agg_up),
            ("core down", tor_up * half + agg_up, p_d), ("agg down", p_d, tor_up, e_d),
            ("to host", dst)]
