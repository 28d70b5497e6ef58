"""sluice-allocator as the experiment tools run it (docs/mechanisms/flowtune.md,
"The allocator program"): started on loopback with an ephemeral port, its
first line says where it listens; stopped with SIGTERM, its last line is the
summary the fidelity gate judges and the update-traffic figures read."""

import re
import select
import signal
import subprocess

from . import payload
from .cli import ToolError

LISTENING = "listening on 127.0.0.1:"
SUMMARY = re.compile(r"updates sent (\d+) \((\d+) lease re-sends, (\d+) bytes in (\d+) datagrams\)")
# A control datagram on the wire beyond its payload: UDP, IPv4 and Ethernet
# headers, then FCS, preamble and gap.
WIRE_EXTRA = 8 + 20 + 14 + payload.WIRE_EXTRA


# The paper's update traffic in percent of capacity ("Flowtune: Flowlet
# Control for Datacenter Networks", §5, result (E)). Its workloads are
# Facebook's (its ref. [34]): fb_hadoop is that Hadoop CDF; its Web (1.13 %)
# and Cache (0.57 %) CDFs are not among the workloads here, and websearch
# (DCTCP's web search, large flows) is not its Web.
PAPER_UPDATE_PCT = {"fb_hadoop": 0.17}

# Where the tools run the allocator: on cpu 0, sluice's main lcore, away from
# the worker, and at nice -10. It sleeps between iterations, and a thread
# that is not sluice's running on cpu 0 at the same priority could keep it
# from waking for a whole scheduler slice (about 3 ms): with a busy loop
# pinned there its iteration lateness reached 4.3 ms at nice 0 and 1.1 ms at
# nice -10 in one run each; nice helps, it does not cure (docs/mechanisms/
# flowtune.md, "Convergence"), and the fidelity gate judges every run.
ON_CPU0 = ["nice", "-n", "-10", "taskset", "-c", "0"]


def command(binary, host_rate, iteration, lease, duration, prefix=()):
    """The allocator's command line: loopback, ephemeral port, no metrics."""
    return list(prefix) + [binary, "--address", "127.0.0.1:0", "--metrics-address", "",
                           "--host-rate", host_rate, "--iteration", iteration, "--lease", lease,
                           "--duration", duration]


def start(cmd, log_path=None, timeout=10.0):
    """Starts the allocator (stderr to log_path, or discarded) and waits at
    most `timeout` seconds for the line that says where it listens; returns
    (process, port)."""
    print("+", " ".join(cmd), flush=True)
    err = open(log_path, "w") if log_path else subprocess.DEVNULL
    try:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, text=True)
    except OSError as e:
        raise ToolError(f"cannot run sluice-allocator ({cmd[0]}): {e.strerror}")
    finally:
        if log_path:
            err.close()
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    first = proc.stdout.readline() if ready else ""
    if LISTENING not in first:
        proc.kill()
        proc.wait()
        raise ToolError(f"sluice-allocator did not start ({first.strip()!r})"
                        + (f"; see {log_path}" if log_path else ""))
    return proc, int(first.split(LISTENING)[1].split()[0])


def stop(proc, out_path):
    """SIGTERM (unless it has ended), then its stdout, saved in out_path and
    returned."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    try:
        out, _ = proc.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
    with open(out_path, "w") as f:
        f.write(out)
    return out


def update_traffic(edge, allocator_out, capacity_bits):
    """Flowtune's control messages on the wire as a fraction of capacity
    (docs/mechanisms/flowtune.md, "Update traffic"): edge -> allocator from
    the edge's summary counters (8-byte header per datagram, 16 per
    FLOWLET_START, 4 per FLOWLET_END), allocator -> edge from the
    allocator's summary line (its bytes hold the UDP and IPv4 headers)."""
    m = SUMMARY.search(allocator_out)
    if not m:
        raise ToolError(f"no summary line from sluice-allocator: {allocator_out!r}")
    return traffic_fractions(edge, *(int(x) for x in m.groups()), capacity_bits)


def fabric_update_traffic(edge, allocator, capacity_bits):
    """The same for the allocator in the fabric (exact time): its summary
    counts its rates as the RATE_UPDATE datagrams sluice-allocator would
    send, and the edge's datagrams_sent the FLOWLET_* datagrams its news
    would fill."""
    return traffic_fractions(edge, allocator["rate_updates"], allocator["lease_resends"],
                             allocator["update_bytes"], allocator["update_messages"],
                             capacity_bits)


def traffic_fractions(edge, updates, resends, ubytes, udgrams, capacity_bits):
    edge_wire = (8 * edge["datagrams_sent"] + 16 * edge["starts_sent"] + 4 * edge["ends_sent"]
                 + WIRE_EXTRA * edge["datagrams_sent"])
    alloc_wire = ubytes + (WIRE_EXTRA - 28) * udgrams
    pct = 100 * 8 / capacity_bits
    return {"rate_updates": updates, "lease_resends": resends, "update_datagrams": udgrams,
            "edge_to_allocator_pct": edge_wire * pct,
            "allocator_to_edge_pct": alloc_wire * pct,
            "allocator_to_edge_without_resends_pct":
                alloc_wire * pct * (1 - resends / updates) if updates else 0.0,
            "total_pct": (edge_wire + alloc_wire) * pct}
