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
        for t, sw, port, q, b, th, paused in r:
            t = float(t)
            if q == "buffer":
                buffer.setdefault(sw, []).append((t, int(b)))
            elif q == "port":
                ports.setdefault((sw, port), []).append((t, int(b), int(th), int(paused)))
            else:
                queues.setdefault((sw, port), {}).setdefault(int(q), []).append(
                    (t, int(b), int(paused)))
    return buffer, queues, ports
