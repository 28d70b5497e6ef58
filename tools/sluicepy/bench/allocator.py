"""Microseconds per NED iteration of the Flowtune allocator
(lib/flowtune/ned_allocator.h) against the number of servers, links and
flows, on one pinned core: the ned-bench program
(tools/ned-bench/ned_bench.cc, built by tools/setup into
build/tools/ned-bench/).

    tools/bench allocator [--out runs/bench/allocator] [--cpu N] [-- PROGRAM OPTIONS]

Options after -- go to ned-bench: --sizes 384,1536,4608, --flows-per-server
F, --iterations I, --warmup W, --churn-percent P, --seed S. Its machine line
and table (per size, model and variant: mean and p99 us per iteration) are
printed and written to OUT/table.md, beside provenance.json.
docs/benchmarks.md, "Flowtune allocator".
"""

import argparse
import os
import subprocess

from .. import cli, provenance, sluice

PROGRAM = os.path.join(sluice.ROOT, "build", "tools", "ned-bench", "ned-bench")


def main(argv):
    p = argparse.ArgumentParser(prog="tools/bench allocator", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    p.add_argument("--out", default=os.path.join(sluice.ROOT, "runs", "bench", "allocator"))
    p.add_argument("--cpu", type=int, default=min(os.sched_getaffinity(0)),
                   help="the core it is pinned to (default %(default)s)")
    p.add_argument("--program", default=PROGRAM, help="the ned-bench binary")
    p.add_argument("program_args", nargs=argparse.REMAINDER,
                   help="after --: ned-bench's own options")
    a = p.parse_args(argv)
    extra = a.program_args[1:] if a.program_args[:1] == ["--"] else a.program_args
    if not os.access(a.program, os.X_OK):
        raise cli.ToolError(f"{a.program} is not built (tools/setup)")
    out = os.path.abspath(a.out)
    os.makedirs(out, exist_ok=True)
    cmd = [a.program, "--cpu", str(a.cpu)] + extra
    cli.show(cmd)
    done = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
    print(done.stdout, end="", flush=True)
    if done.returncode != 0:
        raise cli.ToolError(f"ned-bench failed ({cli.exit_text(done.returncode)})",
                            done.returncode)
    with open(os.path.join(out, "table.md"), "w") as f:
        f.write(done.stdout)
    seed = extra[extra.index("--seed") + 1] if "--seed" in extra[:-1] else "1"
    provenance.write(out, seeds=[int(seed)], binaries=[a.program])
    print(f"bench allocator: wrote {out}/table.md, provenance.json")
    return 0
