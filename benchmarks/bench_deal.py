"""VLPSO's particles dealt to particle groups: contiguous blocks against the deal by cost.

A round lasts as long as its busiest particle group. Two parts, each the old deal (contiguous
blocks of equal count, rank order = particle order) beside the new one
(:class:`~hpcswarm.swarm.engine.deal.Deal`, longest-processing-time by expected cost):

- the deal alone, at the paper's swarm (:data:`PAPER_PARTICLES` particles, 12 divisions,
  ``--genes`` genes): the busiest group's expected cost over the mean, on 16, 64 and 256
  groups (``--groups``), for the initial lengths (every division up to all the genes) and
  after a length change to the fifth division, without cached states and with one state a
  group (the group's costliest particle cached in the new deal; in the old one the first
  particle a rank meets, its lowest). Costs are those the deal counts
  (:func:`~hpcswarm.swarm.engine.deal.full_costs`,
  :func:`~hpcswarm.swarm.engine.deal.moved_costs` of half each particle's length);
- under ``mpiexec -n 2`` (2 particle groups): seconds per round of a VLPSO search on a
  planted ``--size`` matrix (:func:`bench_gpu.planted_data`), ``--particles`` particles,
  ``--rounds`` rounds, every subset evaluated in full (``cache_memory = 0``, so that a
  round's cost is its products; ``--cached``: the particle states kept, the default
  budget), the old deal and the new one in turn, ``--repeats`` times
  each, the slowest rank's time of the rounds after the first; their results must be equal.
  One BLAS thread a rank.

The machine may be shared: the load average is printed before and after; medians, spreads
and the ratio are of runs taken in turn. The last line is one JSON object of every figure.

Run: ``mpiexec -n 2 python benchmarks/bench_deal.py [--size 500x2000] [--particles 48]
[--rounds 6] [--repeats 3]`` (one rank: the deal alone).
"""

import argparse
import json
import os
import sys
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from hpcswarm.comm import world
from hpcswarm.selection.search import run_search
from hpcswarm.swarm.engine.deal import Deal, full_costs, moved_costs
from hpcswarm.swarm.methods.vlpso.algorithm import VLPSO
from hpcswarm.swarm.methods.vlpso.divisions import (changed_lengths, division_lengths,
                                                    division_of)

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_large import slowest  # noqa: E402
from bench_gpu import planted_data  # noqa: E402

PAPER_PARTICLES = 300
"""The paper's swarm at 20,000 genes (``n_genes / 20`` within [100, 300])."""

N_DIVISIONS = 12
CHANGED_TO = 4
"""The division whose length the length change of the second profile keeps (from 0)."""


def profiles(n_genes, n_particles=PAPER_PARTICLES):
    """``{name: lengths}``: VLPSO's initial particle lengths and those after a length change
    to division :data:`CHANGED_TO`."""
    division = division_of(n_particles, N_DIVISIONS)
    initial = division_lengths(n_genes, N_DIVISIONS)
    changed, _ = changed_lengths(initial, CHANGED_TO)
    return {"initial": initial[division], f"after a change to division {CHANGED_TO + 1}":
            changed[division]}


def group_loads(deal, selected, cache_slots, in_order):
    """Each group's cost, its ``cache_slots`` first particles met cached: in the deal's
    order (the new deal) or in particle order (a rank's cache fills as it meets them)."""
    costs, cached = full_costs(selected), moved_costs(selected)
    loads = np.zeros(deal.size, dtype=np.int64)
    taken = np.zeros(deal.size, dtype=np.int64)
    for particle in (deal.order if in_order else range(deal.n_items)):
        group = deal.owner[particle]
        slot = taken[group] < cache_slots
        loads[group] += cached[particle] if slot else costs[particle]
        taken[group] += slot
    return loads


def balance(n_genes, groups):
    """Rows of the busiest group's cost over the mean (each deal's own mean: with cached
    states the totals differ), the new busiest over the old, and for the new deal the
    longest-processing-time bound (mean plus the costliest particle) and, without cached
    states, the floor no deal can beat (the costliest particle, or the mean)."""
    rows = []
    for name, lengths in profiles(n_genes).items():
        selected = np.maximum(lengths // 2, 1)
        largest = int(full_costs(selected).max())
        for cache_slots in (0, 1):
            for n_groups in groups:
                old = group_loads(Deal.blocks(selected.size, n_groups, 0), selected,
                                  cache_slots, in_order=False)
                new = group_loads(Deal.by_cost(selected, n_groups, 0, cache_slots), selected,
                                  cache_slots, in_order=True)
                mean = new.sum() / n_groups
                rows.append({"lengths": name, "cache_slots": cache_slots, "groups": n_groups,
                             "old": float(old.max() / (old.sum() / n_groups)),
                             "new": float(new.max() / mean),
                             "new_over_old": float(new.max() / old.max()),
                             "bound": float((mean + largest) / mean),
                             "floor": (float(max(largest, mean) / mean) if cache_slots == 0
                                       else None)})
    return rows


def print_balance(rows, n_genes):
    print(f"busiest group / mean, VLPSO {PAPER_PARTICLES} particles, {N_DIVISIONS} divisions, "
          f"{n_genes} genes (expected cost)")
    print("| lengths | states a group | groups | contiguous blocks | by cost | by cost / blocks "
          "(busiest) | bound | floor |")
    print("|---|---|---|---|---|---|---|---|")
    for row in rows:
        print(f"| {row['lengths']} | {row['cache_slots']} | {row['groups']} | "
              f"{row['old']:.2f} | {row['new']:.2f} | {row['new_over_old']:.2f} | "
              f"{row['bound']:.2f} | "
              f"{'' if row['floor'] is None else format(row['floor'], '.2f')} |")


def timed_rounds(args, comm):
    """Seconds per round (the slowest rank's), old deal and new in turn, and whether their
    results are equal."""
    n_samples, n_genes = (int(v) for v in args.size.lower().split("x"))
    xt, y = planted_data(n_samples, n_genes)
    X = np.ascontiguousarray(xt.T)
    params = {"n_particles": args.particles, "n_iterations": args.rounds}
    new_genes = VLPSO.expected_genes
    seconds = {"blocks": [], "by cost": []}
    results = {}
    for _ in range(args.repeats):
        for mode in seconds:
            VLPSO.expected_genes = new_genes if mode == "by cost" else (lambda search: None)
            comm.barrier()
            result = run_search(X, y, "vlpso", params, seed=1, comm=comm,
                                cache_memory=0.0 if args.full else None)
            times = [row["seconds"] for row in result.history]
            seconds[mode].append(slowest(comm, (times[-1] - times[0]) / (len(times) - 1)))
            results[mode] = (result.genes.tolist(), result.fitness,
                             [{k: v for k, v in row.items() if k != "seconds"}
                              for row in result.history])
    VLPSO.expected_genes = new_genes
    return seconds, results["blocks"] == results["by cost"]


def parse(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--genes", type=int, default=20000)
    parser.add_argument("--groups", type=int, nargs="+", default=[16, 64, 256])
    parser.add_argument("--size", default="500x2000")
    parser.add_argument("--particles", type=int, default=48)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cached", dest="full", action="store_false",
                        help="keep the particles' states (the default budget) instead of "
                             "evaluating every subset in full")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse(argv)
    figures = {}
    with world() as comm, threadpool_limits(1):
        if comm.rank == 0:
            print(f"load average before: {os.getloadavg()[0]:.1f}")
            figures["balance"] = balance(args.genes, args.groups)
            print_balance(figures["balance"], args.genes)
        if comm.size > 1:
            seconds, equal = timed_rounds(args, comm)
            if comm.rank == 0:
                medians = {mode: float(np.median(s)) for mode, s in seconds.items()}
                scoring = "every subset in full" if args.full else "particle states kept"
                print(f"\nseconds per round, VLPSO {args.size}, {args.particles} particles, "
                      f"{comm.size} groups, {scoring} ({args.repeats} runs each, "
                      f"min / median / max)")
                for mode, values in seconds.items():
                    print(f"  {mode:>9}: {min(values):.3f} / {medians[mode]:.3f} / "
                          f"{max(values):.3f}")
                print(f"  by cost / blocks (medians): "
                      f"{medians['by cost'] / medians['blocks']:.2f}; results equal: {equal}")
                figures["rounds"] = {"size": args.size, "particles": args.particles,
                                     "groups": comm.size, "full": args.full,
                                     "seconds": seconds, "equal": equal}
        if comm.rank == 0:
            print(f"load average after: {os.getloadavg()[0]:.1f}")
            print(json.dumps(figures))


if __name__ == "__main__":
    main()
