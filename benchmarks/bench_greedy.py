"""How long the greedy baselines take on SRBCT (83 x 2308) and Prostate_GE (102 x 5966).

Li et al. (FSIPSO paper, Table II) report that SBS in Weka did not finish within four days on
their datasets of 617 features and more. For each dataset, 1-NN leave-one-out accuracy (the
baselines' default fitness), this prints side by side:

* the cost of one candidate of a greedy step, scored three ways: batched (every candidate of
  the step in one ``SubsetFitness.single_flips`` call, what the greedy methods do), one by
  one (a one-gene flip of the cached distance state per call, ``SubsetFitness.flip``) and by
  a full re-evaluation of the candidate subset (``SubsetFitness.__call__``), for a backward
  step from all genes and a forward step from a 20-gene subset; hence the time of one step
  over every candidate;
* SFS run to its end (wall and CPU seconds, steps, genes, accuracy, candidates scored);
* SBS run to its end with ``--full-sbs NAME`` (the first ``--sbs-steps`` removals
  otherwise; ``--progress N`` prints every N-th step), with the projected time of an SBS
  that removes genes down to one gene, each of the three ways (from the measured
  per-candidate costs: ``sum_{s=2}^{D} s`` candidates, a full evaluation costing in
  proportion to its size).

Threads: BLAS is limited to ``--threads`` (default 1). The machine these figures were taken
on has 2 cores shared with other jobs, so wall times vary; CPU seconds (``process_time``)
are printed next to them and are the steadier figure. The last line of output is one JSON
object holding every figure printed.

Run: ``python benchmarks/bench_greedy.py [--datasets srbct,prostate] [--sbs-steps N]
[--full-sbs srbct,prostate] [--progress N] [--threads N]``.

Figures of 2026-11-26 (``--full-sbs srbct,prostate --progress 250``, 1 thread, 2 shared
cores at a load of 1-6, the test suite running alongside for 18 of Prostate_GE's SBS
minutes; CPU seconds, wall in brackets; accuracy: 1-NN LOOCV of the final subset):

=========================  =============================  ==================================
                           SRBCT (83 x 2308)              Prostate_GE (102 x 5966)
=========================  =============================  ==================================
candidate from all genes,  0.083 / 0.30 / 1.85 ms         0.056 / 0.18 / 4.09 ms
batched / one by one /
full
SFS to the end             0.9 s [2.0 s]: 5 steps,        13.8 s [28 s]: 4 steps, 29 820
                           13 833 candidates, 5 genes,    candidates, 4 genes, 0.980
                           1.000
SBS to the end             91.5 s [195 s]: 2279 steps,    827 s [1878 s]: 5924 steps,
                           2 664 180 candidates (0.034    17 798 700 candidates (0.046 ms
                           ms each), 29 genes, 1.000      each), 42 genes, 0.971
SBS down to 1 gene, proj.  220 s batched, 806 s one by    997 s batched, 3126 s one by one,
                           one, 3284 s full               48 580 s full
=========================  =============================  ==================================

The SRBCT SBS scores the same 2 664 180 candidates in the same 2279 steps to 29 genes at
1.000 as the one-by-one flips did on 2026-11-25 (457 s CPU [1496 s] then). SFS on
Prostate_GE is dominated by its first steps (0-3 genes of few distinct values): most
distances tie, and the exact tie-breaking costs 0.5 ms per candidate on average whichever
way the candidates are scored.
"""

import argparse
import json
import os
import time

import numpy as np
from threadpoolctl import threadpool_limits

from hpcswarm.data import load_dataset
from hpcswarm.selection.methods import algorithm_params
from hpcswarm.selection.search import make_fitness, run_search
from hpcswarm.swarm.engine.loop import SearchHooks

SHARED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "data")
DATASETS = {"srbct": "builtin:srbct", "prostate": os.path.join(SHARED, "Prostate_GE.mat")}
LI_ET_AL_SBS = "did not finish within four days (Weka, 617+ features; Li et al. Table II)"


def clocks():
    return time.perf_counter(), time.process_time()


def since(start):
    wall, cpu = clocks()
    return wall - start[0], cpu - start[1]


def per_candidate_ms(fitness, mask, genes, how):
    """Milliseconds per candidate (wall, cpu) for one-gene changes of ``mask``.

    ``how``: ``"batched"`` (one ``SubsetFitness.single_flips`` call, what the greedy
    methods do), ``"flip"`` (``SubsetFitness.flip`` one candidate at a time) or ``"full"``
    (a full evaluation of every candidate subset).
    """
    if how == "full":
        work = mask.copy()
        start = clocks()
        for gene in genes:
            work[gene] = not work[gene]
            fitness(work)
            work[gene] = not work[gene]
    else:
        state = fitness.new_state(mask)
        start = clocks()
        if how == "batched":
            fitness.single_flips(state, genes)
        else:
            for gene in genes:
                fitness.flip(state, np.array([gene]))
    wall, cpu = since(start)
    return 1e3 * wall / len(genes), 1e3 * cpu / len(genes)


def reporter(label, every):
    """``progress(row)`` printing every ``every``-th greedy step (0: never)."""
    def progress(row):
        if every and row["iteration"] % every == 0:
            print(f"    [{label}] step {row['iteration']}: {row['best_size']} genes, fitness "
                  f"{row['best_fitness']:.4f}, {row['seconds']:.0f} s wall", flush=True)
    return progress


def run(name, data, params, every=0):
    start = clocks()
    result = run_search(data.X, data.y, name, params, seed=0,
                        hooks=SearchHooks(progress=reporter(name, every)))
    wall, cpu = since(start)
    return {"wall_s": wall, "cpu_s": cpu, "steps": len(result.extra["path"]),
            "n_selected": int(result.mask.sum()), "fitness": result.fitness,
            "accuracy": result.extra["score"]["accuracy"],
            "stopped": result.extra["stopped"], "candidates": result.extra["candidates_scored"],
            "genes": result.genes.tolist()[:50]}


def bench(label, path, sbs_steps, full_sbs, samples, every):
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
    ways = ("batched", "flip", "full")
    few = some[: max(5, samples // 10)]  # a full evaluation of all genes is slow
    cost = {f"backward_{how}_ms": per_candidate_ms(fitness, everything,
                                                   few if how == "full" else some, how)
            for how in ways}
    cost.update({f"forward20_{how}_ms": per_candidate_ms(fitness, small, outside, how)
                 for how in ways})
    print(f"== {label}: {data.X.shape[0]} samples x {n_genes} genes, 1-NN LOOCV")
    for step, where in (("backward", "backward from all genes"),
                        ("forward20", "forward from 20 genes")):
        print(f"  one candidate, {where:23s}: batched {cost[f'{step}_batched_ms'][1]:.3f} ms, "
              f"one by one {cost[f'{step}_flip_ms'][1]:.3f} ms, full re-evaluation "
              f"{cost[f'{step}_full_ms'][1]:.3f} ms (CPU)")
    step_s = {how: n_genes * cost[f"backward_{how}_ms"][1] / 1e3 for how in ways}
    print(f"  first SBS step ({n_genes} candidates): {step_s['batched']:.1f} s batched, "
          f"{step_s['flip']:.1f} s one by one, {step_s['full']:.1f} s full re-evaluation "
          f"(CPU, projected)")
    sfs = run("sfs", data, {})
    print(f"  SFS to the end: {sfs['wall_s']:.1f} s wall, {sfs['cpu_s']:.1f} s CPU, "
          f"{sfs['steps']} steps, {sfs['candidates']} candidates, {sfs['n_selected']} genes, "
          f"LOOCV accuracy {sfs['accuracy']:.4f}", flush=True)
    sbs = run("sbs", data, {} if full_sbs else {"max_steps": sbs_steps}, every)
    kind = "to the end" if full_sbs else f"first {sbs['steps']} removals"
    print(f"  SBS {kind}: {sbs['wall_s']:.1f} s wall, {sbs['cpu_s']:.1f} s CPU, "
          f"{sbs['steps']} steps, {sbs['candidates']} candidates "
          f"({1e3 * sbs['cpu_s'] / sbs['candidates']:.3f} ms CPU each), {sbs['n_selected']} "
          f"genes, LOOCV accuracy {sbs['accuracy']:.4f}, stopped: {sbs['stopped']}")
    all_the_way = n_genes * (n_genes + 1) // 2 - 1
    projected = {how: all_the_way * cost[f"backward_{how}_ms"][1] / 1e3
                 for how in ("batched", "flip")}
    projected["full"] = (cost["backward_full_ms"][1] / 1e3
                         * sum(s * s / n_genes for s in range(2, n_genes + 1)))
    print(f"  SBS down to one gene ({all_the_way} candidates), projected: "
          f"{projected['batched'] / 3600:.2f} h batched, {projected['flip'] / 3600:.2f} h one by "
          f"one, {projected['full'] / 3600:.1f} h full re-evaluation (CPU); Weka: {LI_ET_AL_SBS}",
          flush=True)
    return {"samples": int(data.X.shape[0]), "genes": n_genes, "cost_ms_wall_cpu": cost,
            "sfs": sfs, "sbs": sbs, "sbs_full_run": bool(full_sbs),
            "sbs_all_the_way_candidates": all_the_way,
            "sbs_all_the_way_projected_cpu_s": projected}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--datasets", default="srbct,prostate")
    parser.add_argument("--sbs-steps", type=int, default=5)
    parser.add_argument("--full-sbs", default="", help="datasets whose SBS runs to the end")
    parser.add_argument("--samples", type=int, default=300, help="candidates timed per cost")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--progress", type=int, default=0,
                        help="print every N-th SBS step (0: never)")
    args = parser.parse_args(argv)
    figures = {"threads": args.threads, "cpu_count": os.cpu_count(),
               "note": "2-core machine shared with other jobs; CPU seconds are steadier",
               "weka_sbs_li_et_al": LI_ET_AL_SBS}
    full = set(filter(None, args.full_sbs.split(",")))
    with threadpool_limits(args.threads):
        for label in args.datasets.split(","):
            figures[label] = bench(label, DATASETS[label], args.sbs_steps, label in full,
                                   args.samples, args.progress)
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
