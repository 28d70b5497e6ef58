"""The papers' experiments, one module each (tools/reproduce NAME; each has
its own options: tools/reproduce NAME --help). Every one writes its figures
beside the paper's, results.json and provenance.json into its --out
(default runs/reproduce/NAME), and every multi-seed figure with its spread
over the seeds."""

import importlib
import textwrap

# name: (paper, module, function, what it runs). In the order --help lists them.
EXPERIMENTS = {
    "bfc": ("BFC", "bfc", "main",
            "section 6.2.2: the 128-host, 100 Gb/s leaf-spine with BFC against DCQCN, "
            "DCTCP and HPCC (Figs. 9, 10, App. C Fig. 16), exact time"),
    "bfc-testbed": ("BFC", "bfc_testbed", "main",
                    "section 6.1: the testbed of Fig. 6 with open-loop senders under dynamic, "
                    "stochastic and single queue assignment"),
    "bfc-sweep": ("BFC", "bfc_sweep", "main",
                  "section 6.1: the testbed's sweeps, th (Fig. 7b) and flows (Fig. 8)"),
    "floodgate": ("Floodgate", "floodgate", "main",
                  "sections 5.1-5.2: the authors' incast-mix on their 160-host leaf-spine "
                  "with DCQCN, DCTCP and HPCC, exact time"),
    "floodgate-incast": ("Floodgate", "floodgate_incast", "main",
                         "sections 4.1, 5.2-5.4, 6.2 on an 8-host leaf-spine with open-loop "
                         "hosts: per-tier buffers, the spine bound, successive incasts, loss "
                         "and FG_SYNC"),
    "dibs-testbed": ("DIBS", "dibs_testbed", "main",
                     "section 5.2 (Fig. 6): the Click testbed's incast with TCP hosts, exact "
                     "time"),
    "dibs-fattree": ("DIBS", "dibs_fattree", "main",
                     "sections 5.3-5.7: the k = 8 fat-tree with DCTCP hosts, exact time"),
    "dibs-incast": ("DIBS", "dibs_incast", "main",
                    "section 5.4.1 on a leaf-spine with open-loop hosts: where detoured "
                    "packets go and how many"),
    "tcd-victim": ("TCD", "tcd_victim", "main",
                   "sections 5.2.3-5.2.4 (Fig. 18a): victim flows and the congested flows' "
                   "rates with TIMELY and DCQCN hosts, exact time"),
    "tcd-marks": ("TCD", "tcd_victim", "marks_main",
                  "section 5.2.4's victim scenario with open-loop hosts: CE and UE marks and "
                  "each port's state under PFC and BFC, checked"),
    "flowtune": ("Flowtune", "flowtune", "main",
                 "section 5.3: FCT (Figs. 12, 13) and convergence (Fig. 8) on 4 x 9 x 16 at "
                 "10 Gb/s, exact time"),
    "flowtune-edge": ("Flowtune", "flowtune_edge", "main",
                      "section 5.3 (D) on one edge switch: convergence of five open-loop flows, "
                      "exact or real time"),
    "flowtune-updates": ("Flowtune", "flowtune_updates", "main",
                         "section 5 (E): the allocator's update traffic at load 0.8"),
    "flowtune-optimality": ("Flowtune", "flowtune_optimality", "main",
                            "section 5 (M), Fig. 17: NED's allocations against the optimum "
                            "(the flowtune-optimality program)"),
    "flowtune-tcp": ("Flowtune", "flowtune_tcp", "main",
                     "convergence, allocator failure and update traffic with Linux TCP hosts "
                     "in network namespaces, real time (root)"),
}


def entry(name):
    """The main(argv) of one experiment."""
    _, module, function, _ = EXPERIMENTS[name]
    return getattr(importlib.import_module(__name__ + "." + module), function)


def listing():
    """The experiments by paper, for tools/reproduce --help."""
    lines, paper = [], None
    width = max(len(n) for n in EXPERIMENTS)
    for name, (p, _, _, what) in EXPERIMENTS.items():
        if p != paper:
            lines.append(("" if paper is None else "\n") + p + ":")
            paper = p
        lines += textwrap.wrap(what, 79, initial_indent="  %-*s  " % (width, name),
                               subsequent_indent=" " * (width + 4))
    return "\n".join(lines)
