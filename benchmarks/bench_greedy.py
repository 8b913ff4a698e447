"""How long the greedy baselines take on SRBCT (83 x 2308) and Prostate_GE (102 x 5966).

Li et al. (FSIPSO paper, Table II) report that SBS in Weka did not finish within four days on
their datasets of 617 features and more. For each dataset, 1-NN leave-one-out accuracy (the
baselines' default fitness), this prints side by side:

* the cost of one candidate of a greedy step, scored by our incremental path (a one-gene flip
  of the cached distance state, ``SubsetFitness.flip``) and by a full re-evaluation of the
  candidate subset (``SubsetFitness.__call__``), for a backward step from all genes and a
  forward step from a 20-gene subset; hence the time of one step over every candidate;
* SFS run to its end (wall and CPU seconds, steps, genes, fitness, candidates scored);
* SBS run to its end with ``--full-sbs NAME`` (the first ``--sbs-steps`` removals
  otherwise), with the projected time of an SBS that removes genes down to one gene, by the
  incremental path and by full re-evaluation (from the measured per-candidate costs:
  ``sum_{s=2}^{D} s`` candidates, a full evaluation costing in proportion to its size).

Threads: BLAS is limited to ``--threads`` (default 1). The machine these figures were taken
on has 2 cores shared with other jobs, so wall times vary; CPU seconds (``process_time``)
are printed next to them and are the steadier figure. The last line of output is one JSON
object holding every figure printed.

Run: ``python benchmarks/bench_greedy.py [--datasets srbct,prostate] [--sbs-steps N]
[--full-sbs srbct] [--threads N]``.

Figures of 2026-11-25 (``--full-sbs srbct --sbs-steps 10``, 1 thread, 2 shared cores at a
load of 7-9; CPU seconds, wall in brackets):

=========================  =============================  ==================================
                           SRBCT (83 x 2308)              Prostate_GE (102 x 5966)
=========================  =============================  ==================================
candidate, flip / full     0.16 / 1.55 ms (all genes)     0.14 / 2.83 ms (all genes)
SFS to the end             1.5 s [8 s]: 5 genes, 1.000    16.5 s [36 s]: 4 genes, 0.980
SBS to the end             457 s [1496 s]: 2279 steps,    not run; first 10 steps 9.1 s
                           2 664 180 candidates, 29       (0.153 ms per candidate)
                           genes, 1.000
SBS down to 1 gene, proj.  422 s flips, 2761 s full       2438 s flips, 33 540 s full
=========================  =============================  ==================================

The projection from per-candidate costs is within 8 % of the measured SRBCT run.
"""

import argparse
import json
import os
import time

import numpy as np
from threadpoolctl import threadpool_limits

from hpcswarm.data import load_dataset
from hpcswarm.search import make_fitness, run_search
from hpcswarm.swarm import algorithm_params

SHARED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "data")
DATASETS = {"srbct": "builtin:srbct", "prostate": os.path.join(SHARED, "Prostate_GE.mat")}
LI_ET_AL_SBS = "did not finish within four days (Weka, 617+ features; Li et al. Table II)"


def clocks():
    return time.perf_counter(), time.process_time()


def since(start):
    wall, cpu = clocks()
    return wall - start[0], cpu - start[1]


def per_candidate_ms(fitness, mask, genes, incremental):
    """Milliseconds per candidate (wall, cpu) for one-gene changes of ``mask``."""
    if incremental:
        state = fitness.new_state(mask)
        start = clocks()
        for gene in genes:
            fitness.flip(state, np.array([gene]))
    else:
        work = mask.copy()
        start = clocks()
        for gene in genes:
            work[gene] = not work[gene]
            fitness(work)
            work[gene] = not work[gene]
    wall, cpu = since(start)
    return 1e3 * wall / len(genes), 1e3 * cpu / len(genes)


def run(name, data, params):
    start = clocks()
    result = run_search(data.X, data.y, name, params, seed=0)
    wall, cpu = since(start)
    return {"wall_s": wall, "cpu_s": cpu, "steps": len(result.extra["path"]),
            "n_selected": int(result.mask.sum()), "fitness": result.fitness,
            "stopped": result.extra["stopped"], "candidates": result.extra["candidates_scored"],
            "genes": result.genes.tolist()[:50]}


def bench(label, path, sbs_steps, full_sbs, samples):
    data = load_dataset(path)
    data = argparse.Namespace(X=np.asarray(data.X, dtype=np.float64), y=np.asarray(data.y))
    n_genes = data.X.shape[1]
    fitness, _ = make_fitness(data.X, data.y, algorithm_params("sbs"), 0)
    rng = np.random.default_rng(0)
    everything = np.ones(n_genes, dtype=bool)
    some = np.sort(rng.choice(n_genes, samples, replace=False))
    small = np.zeros(n_genes, dtype=bool)
    small[rng.choice(n_genes, 20, replace=False)] = True
    outside = np.sort(rng.choice(np.flatnonzero(~small), samples, replace=False))
    cost = {
        "backward_flip_ms": per_candidate_ms(fitness, everything, some, True),
        "backward_full_ms": per_candidate_ms(fitness, everything, some[: max(5, samples // 10)],
                                             False),
        "forward20_flip_ms": per_candidate_ms(fitness, small, outside, True),
        "forward20_full_ms": per_candidate_ms(fitness, small, outside, False),
    }
    print(f"== {label}: {data.X.shape[0]} samples x {n_genes} genes, 1-NN LOOCV")
    print(f"  one candidate, backward from all genes: flip {cost['backward_flip_ms'][1]:.3f} ms, "
          f"full re-evaluation {cost['backward_full_ms'][1]:.3f} ms (CPU)")
    print(f"  one candidate, forward from 20 genes:   flip {cost['forward20_flip_ms'][1]:.3f} ms, "
          f"full re-evaluation {cost['forward20_full_ms'][1]:.3f} ms (CPU)")
    step_flip = n_genes * cost["backward_flip_ms"][1] / 1e3
    step_full = n_genes * cost["backward_full_ms"][1] / 1e3
    print(f"  first SBS step ({n_genes} candidates): {step_flip:.1f} s incremental, "
          f"{step_full:.1f} s full re-evaluation (CPU, projected)")
    sfs = run("sfs", data, {})
    print(f"  SFS to the end: {sfs['wall_s']:.1f} s wall, {sfs['cpu_s']:.1f} s CPU, "
          f"{sfs['steps']} steps, {sfs['candidates']} candidates, {sfs['n_selected']} genes, "
          f"LOOCV accuracy {sfs['fitness']:.4f}")
    sbs = run("sbs", data, {} if full_sbs else {"max_steps": sbs_steps})
    kind = "to the end" if full_sbs else f"first {sbs['steps']} removals"
    print(f"  SBS {kind}: {sbs['wall_s']:.1f} s wall, {sbs['cpu_s']:.1f} s CPU, "
          f"{sbs['candidates']} candidates ({1e3 * sbs['cpu_s'] / sbs['candidates']:.3f} ms CPU "
          f"each), {sbs['n_selected']} genes, LOOCV accuracy {sbs['fitness']:.4f}, "
          f"stopped: {sbs['stopped']}")
    all_the_way = n_genes * (n_genes + 1) // 2 - 1
    flip_s = all_the_way * cost["backward_flip_ms"][1] / 1e3
    full_s = cost["backward_full_ms"][1] / 1e3 * sum(s * s / n_genes for s in range(2, n_genes + 1))
    print(f"  SBS down to one gene ({all_the_way} candidates), projected: "
          f"{flip_s / 3600:.2f} h incremental, {full_s / 3600:.1f} h full re-evaluation (CPU); "
          f"Weka: {LI_ET_AL_SBS}")
    return {"samples": int(data.X.shape[0]), "genes": n_genes, "cost_ms_wall_cpu": cost,
            "sfs": sfs, "sbs": sbs, "sbs_full_run": bool(full_sbs),
            "sbs_all_the_way_candidates": all_the_way,
            "sbs_all_the_way_projected_cpu_s": {"incremental": flip_s, "full": full_s}}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--datasets", default="srbct,prostate")
    parser.add_argument("--sbs-steps", type=int, default=5)
    parser.add_argument("--full-sbs", default="", help="datasets whose SBS runs to the end")
    parser.add_argument("--samples", type=int, default=300, help="candidates timed per cost")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)
    figures = {"threads": args.threads, "cpu_count": os.cpu_count(),
               "note": "2-core machine shared with other jobs; CPU seconds are steadier",
               "weka_sbs_li_et_al": LI_ET_AL_SBS}
    full = set(filter(None, args.full_sbs.split(",")))
    with threadpool_limits(args.threads):
        for label in args.datasets.split(","):
            figures[label] = bench(label, DATASETS[label], args.sbs_steps, label in full,
                                   args.samples)
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
