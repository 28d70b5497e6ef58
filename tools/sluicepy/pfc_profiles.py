"""PFC per port as the public simulators the papers compare with set it
(docs/mechanisms/pfc.md, "Per port"): HPCC's ns-3
(alibaba-edu/High-Precision-Congestion-Control, simulation/scratch/third.cc
and simulation/src/point-to-point/model/switch-mmu.cc) and the Floodgate
authors' ns-3 (NASA-NJU/Floodgate-NS3, the same two files), read for the
facts.

Both give every switch port a dynamic threshold whose alpha is 2^-shift at
the hosts' NIC rate and doubles with each doubling of the port's rate
(shift floored at 0), a headroom from the port's rate and propagation
delay, a 4 KiB reserve per (port, priority) and a 3 KiB resume offset
(sluice's hysteresis). They differ in the shift and the headroom:

    floodgate-ns3  shift 2 (1/4)  headroom 4 x rate x 2 x delay
    hpcc-ns3       shift 3 (1/8)  headroom 3 x rate x delay

Their integer arithmetic is kept: bytes of one delay are
rate x delay_ns / 8 / 1e9, rounded down before the factor."""

from . import cli, units

PROFILES = ("switch", "floodgate-ns3", "hpcc-ns3")
RESERVE_BYTES = 4 * 1024
RESUME_OFFSET_BYTES = 3 * 1024
_SHIFT = {"floodgate-ns3": 2, "hpcc-ns3": 3}


def port_values(profile, rate_bps, delay_ns, nic_rate_bps):
    """{"alpha", "headroom", "reserve", "hysteresis"} (bytes) of one port."""
    if profile not in _SHIFT:
        raise cli.ToolError(f"PFC profile {profile!r}: expected one of {', '.join(PROFILES)}")
    if rate_bps <= 0 or nic_rate_bps <= 0:
        raise cli.ToolError("PFC profile: a port's rate and the hosts' rate must be above 0")
    rate_bps, nic_rate_bps = int(rate_bps), int(nic_rate_bps)
    shift, rate = _SHIFT[profile], rate_bps
    while rate > nic_rate_bps and shift > 0:
        shift -= 1
        rate //= 2
    one_delay = rate_bps * int(delay_ns) // 8 // 10**9
    headroom = one_delay * 2 * 4 if profile == "floodgate-ns3" else one_delay * 3
    return {"alpha": 1.0 / (1 << shift), "headroom": headroom, "reserve": RESERVE_BYTES,
            "hysteresis": RESUME_OFFSET_BYTES}


def _delay_ns(port):
    d = port.get("delay")
    return 0 if d in (None, 0, "0") else units.seconds_to_ns(units.parse_time(str(d)))


def _rate(text):
    return 0 if str(text).strip() in ("0", "") else units.parse_rate(str(text))


def nic_rate(conf):
    """The hosts' NIC rate: the slowest host-facing port's (ns-3's
    get_nic_rate reads a host's device; here every host has one port)."""
    rates = [_rate(p["rate"]) for sw in conf["switches"]
             for p in sw.get("ports", []) if p.get("role") == "host" and p.get("rate")]
    rates = [r for r in rates if r > 0]
    if not rates:
        raise cli.ToolError("PFC profile: the configuration has no shaped host port")
    return min(rates)


def apply(conf, profile):
    """Writes each PFC port's own values into a configuration whose switches
    have pfc: {mode: pfc} (in place): a dynamic threshold at the switch, and
    per port alpha, headroom, reserve and hysteresis. "switch" leaves the
    switch-wide settings alone."""
    if profile == "switch":
        return conf
    nic = nic_rate(conf)
    for sw in conf["switches"]:
        pfc = sw.get("pfc")
        if not pfc or pfc.get("mode") != "pfc":
            continue
        pfc["xoff"] = "dynamic"
        pfc.pop("alpha", None)
        for port in sw.get("ports", []):
            if port.get("pfc") is False:
                continue
            rate = _rate(port.get("rate", 0))
            if rate <= 0:
                raise cli.ToolError(f"PFC profile {profile}: {sw['name']}/{port['name']} is "
                                    "unshaped; the profile needs each port's rate")
            v = port_values(profile, rate, _delay_ns(port), nic)
            port["pfc"] = {"alpha": v["alpha"], "headroom": "%dB" % v["headroom"],
                           "reserve": "%dB" % v["reserve"],
                           "hysteresis": "%dB" % v["hysteresis"]}
    return conf
