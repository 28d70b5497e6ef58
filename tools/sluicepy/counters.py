"""The counters of a sluice summary JSON (--summary-json; docs/metrics.md),
summed the one way every tool sums them: drops (by reason, by port),
flow-control frames, ECN marks, DIBS detours, PFC-paused time, the worst
transmit time lost."""

from .sluice import REPLAY_LEAD_S


def ports(summary):
    """(switch name, port) of every port of every switch."""
    for sw in summary.get("switches", []):
        for p in sw.get("ports", []):
            yield sw.get("name", "?"), p


def port(summary, switch, name):
    """One port's figures, or None."""
    return next((p for sw, p in ports(summary) if sw == switch and p.get("name") == name),
                None)


def port_drops(p):
    """A port's drops of every reason."""
    d = p.get("drops", 0)
    return sum(d.values()) if isinstance(d, dict) else int(d or 0)


def drop_reasons(summary):
    """Drops at every switch port, by reason (reasons with none left out)."""
    out = {}
    for _, p in ports(summary):
        for k, v in (p.get("drops") or {}).items():
            if v:
                out[k] = out.get(k, 0) + v
    return out


def total_drops(summary):
    return sum(port_drops(p) for _, p in ports(summary))


def drops_by_port(summary):
    """{"switch/port": {reason: drops}} of the ports that dropped."""
    return {"%s/%s" % (sw, p["name"]): {k: v for k, v in p["drops"].items() if v}
            for sw, p in ports(summary) if port_drops(p)}


def total(summary, key):
    """A port counter summed over every port (absent = 0)."""
    return sum(p.get(key, 0) for _, p in ports(summary))


def bfc_frames(summary):
    """BFC pause and resume frames sent."""
    return total(summary, "bfc_pause_sent") + total(summary, "bfc_resume_sent")


def max_lost_ns(summary):
    """The most transmit time any port lost (0 in exact time)."""
    return max((p.get("shaper_lost_ns", 0) for _, p in ports(summary)), default=0)


def paused_pct(summary, lead_s=REPLAY_LEAD_S):
    """PFC-paused port time, as a share (%) of every switch port's time from
    the replay's start to the end of the run (exact time)."""
    all_ports = [p for _, p in ports(summary)]
    active_s = max(1e-9, summary["clock"]["fabric_seconds"] - lead_s)
    return 100.0 * total(summary, "pfc_paused_ns") / 1e9 / (max(1, len(all_ports)) * active_s)


def totals(summary):
    """The figures tools/experiment prints per scheme."""
    return {"drops": total_drops(summary),
            "pfc_frames_sent": total(summary, "pfc_frames_sent"),
            "bfc_frames_sent": bfc_frames(summary),
            "ecn_marks": total(summary, "ecn_marks"),
            "dibs_detours": total(summary, "dibs_detours"),
            "shaper_lost_ns": max_lost_ns(summary)}
