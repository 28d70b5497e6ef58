"""The benchmarks, one module each (tools/bench NAME; tools/bench NAME
--help gives its options). Each writes its table, its figures as JSON and
provenance.json into its --out (default runs/bench/NAME)."""

import importlib
import textwrap

# name: (module, relative to this package; what it measures). In the order
# --help lists them.
BENCHMARKS = {
    "forward": (".forward",
                "forwarding rate of one worker lcore against dpdk-testpmd io on the same "
                "input, plain and per mechanism (root, hugepages)"),
    "latency": (".latency",
                "round trips through sluice at a share of its one-lcore rate (a paced "
                "generator over net_memif), beside testpmd io (root, hugepages)"),
    "emulator": (".emulator",
                 "the one-server fabric's speed in exact time: port transmissions per wall "
                 "and CPU second, wall per fabric second, peak memory, per named scenario"),
    "permutation": (".permutation",
                    "a fat-tree of DCTCP hosts in a permutation, in sluice on 1 or more "
                    "worker lcores and (given its binary) in htsim: CPU s, transmissions, "
                    "goodput, peak RSS"),
    "soak": (".soak",
             "a BFC fabric at full rate for minutes: memory flat, counters conserved, no port "
             "stalls"),
    "allocator": (".allocator",
                  "microseconds per Flowtune NED iteration against servers, links and flows "
                  "(the ned-bench program)"),
    "fingerprint": ("..fingerprint",
                    "sha256 digests of exact-time runs (test_exact_time's fabrics, or each "
                    "reproduce experiment small), written to a file or compared with one"),
}


def entry(name):
    """The main(argv) of one benchmark."""
    return importlib.import_module(BENCHMARKS[name][0], __name__).main


def listing():
    width = max(len(n) for n in BENCHMARKS)
    lines = []
    for name, (_, what) in BENCHMARKS.items():
        lines += textwrap.wrap(what, 79, initial_indent="  %-*s  " % (width, name),
                               subsequent_indent=" " * (width + 4))
    return "\n".join(lines)
