"""Reading sluice's --queue-trace CSV (docs/metrics.md, "Queue trace")."""

import csv


def read_queue_trace(path):
    """(buffer, queues, ports) of a queue trace:
    buffer[switch] = [(t, bytes)],
    queues[(switch, port)][queue] = [(t, bytes, paused)],
    ports[(switch, port)] = [(t, bytes, threshold_bytes, paused_count)];
    t in seconds of capture (sender) time."""
    buffer, queues, ports = {}, {}, {}
    with open(path, newline="") as f:
        r = csv.reader(f)
        next(r)
        for row in r:
            t, sw, port, q, b, th, paused = row[:7]  # tcd_state (8th) see read_tcd_trace
            t = float(t)
            if q == "buffer":
                buffer.setdefault(sw, []).append((t, int(b)))
            elif q == "port":
                ports.setdefault((sw, port), []).append((t, int(b), int(th), int(paused)))
            else:
                queues.setdefault((sw, port), {}).setdefault(int(q), []).append(
                    (t, int(b), int(paused)))
    return buffer, queues, ports


def read_tcd_trace(path):
    """TCD state samples of a queue trace (queue rows of TCD ports):
    states[(switch, port)][queue] = [(t, state, bytes, paused)], state one of
    non_congestion, congestion, undetermined. Empty for a trace without
    TCD ports (or written before the tcd_state column)."""
    states = {}
    with open(path, newline="") as f:
        r = csv.reader(f)
        next(r)
        for row in r:
            if len(row) < 8 or not row[7] or row[3] in ("buffer", "port"):
                continue
            t, sw, port, q, b, _th, paused, state = row[:8]
            states.setdefault((sw, port), {}).setdefault(int(q), []).append(
                (float(t), state, int(b), int(paused)))
    return states
