"""Flowtune section 5 (M), Fig. 17: how much of the optimal throughput NED
with F-NORM and U-NORM (and a plain gradient method) reach, offline on the
paper's 4 x 9 x 16 fabric at 10 Gb/s, one allocator iteration per 10 us.

    tools/reproduce flowtune-optimality [--out DIR] [-- PROGRAM OPTIONS]

Runs the flowtune-optimality program (tools/flowtune-sim/flowtune_optimality.cc,
built by tools/setup into build/tools/flowtune-sim/) on lib/flowtune/, no
switch involved. Options after -- go to it: --topology leafspine|obs,
--steps N (10 us each; 100000 = 1 s), --warmup N, --every K, --load L,
--seed S, --cdf FILE, --gamma G, --grad-step G, --threshold T, --tol E.
Writes OUT/opt.csv (every check of the optimum), OUT/table.txt (the
program's summary: mean, min, p1, p10, p50 of each ratio) and
provenance.json. docs/mechanisms/flowtune.md, "Optimality".
"""

import argparse
import os
import subprocess

from .. import cli, provenance, sluice

ROOT = sluice.ROOT
PROGRAM = os.path.join(ROOT, "build", "tools", "flowtune-sim", "flowtune-optimality")


def main(argv):
    p = argparse.ArgumentParser(prog="tools/reproduce flowtune-optimality",
                                description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    p.add_argument("--out", default=os.path.join(ROOT, "runs", "reproduce",
                                                  "flowtune-optimality"))
    p.add_argument("--program", default=PROGRAM, help="the flowtune-optimality binary")
    p.add_argument("program_args", nargs=argparse.REMAINDER,
                   help="after --: the program's own options")
    a = p.parse_args(argv)
    extra = a.program_args[1:] if a.program_args[:1] == ["--"] else a.program_args
    if "--out" in extra:
        p.error("the program's --out is OUT/opt.csv")
    if not os.access(a.program, os.X_OK):
        raise cli.ToolError(f"{a.program} is not built (tools/setup)")
    out = os.path.abspath(a.out)
    os.makedirs(out, exist_ok=True)
    cmd = [a.program] + extra + ["--out", os.path.join(out, "opt.csv")]
    cli.show(cmd)
    done = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
    print(done.stdout, end="", flush=True)
    with open(os.path.join(out, "table.txt"), "w") as f:
        f.write(done.stdout)
    if done.returncode != 0:
        raise cli.ToolError(f"flowtune-optimality failed ({cli.exit_text(done.returncode)})",
                            done.returncode)
    seed = extra[extra.index("--seed") + 1] if "--seed" in extra[:-1] else "1"
    cdf = (extra[extra.index("--cdf") + 1] if "--cdf" in extra[:-1]
           else os.path.join(ROOT, "conf", "workloads", "websearch.cdf"))
    provenance.write(out, seeds=[int(seed)], inputs=[cdf], binaries=[a.program])
    print(f"reproduce flowtune-optimality: wrote {out}/opt.csv, table.txt, provenance.json")
    return 0
