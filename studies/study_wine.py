"""Wine study: how often CBPSO and PSO-LSRG reach the best possible 1-NN LOOCV accuracy.

scikit-learn's wine data (178 samples, 13 features), min-max scaled, 1-NN leave-one-out.
The script first enumerates all 8191 non-empty subsets to find the best accuracy and the
subsets reaching it, then runs each method with its paper settings for 20 seeds, stopping a
run as soon as that accuracy is reached (``target``), and prints how many runs reached it
and after how many evaluations: when the subset was first scored (``best_found_at``; for a
swarm batch, the count after the batch) and at the end of that round.

Run: ``python -m studies.study_wine [n_seeds]``.
"""

import itertools
import sys
import time

import numpy as np
from sklearn.datasets import load_wine
from sklearn.preprocessing import minmax_scale

from hpcswarm.fitness import KnnEvaluator
from hpcswarm.selection.search import run_search


def exhaustive(X, y):
    """Best LOOCV 1-NN correct count over all non-empty subsets, and the subsets reaching it."""
    evaluator = KnnEvaluator(X, y, k=1, cv="loo")
    n_genes = X.shape[1]
    best, found = -1, []
    for size in range(1, n_genes + 1):
        for genes in itertools.combinations(range(n_genes), size):
            mask = np.zeros(n_genes, dtype=bool)
            mask[list(genes)] = True
            correct = evaluator.score(mask).correct
            if correct > best:
                best, found = correct, [genes]
            elif correct == best:
                found.append(genes)
    return best, found, evaluator.evaluations


def main(n_seeds=20, params=None):
    """Run and print the study over ``n_seeds`` seeds (``params``: the methods' parameters
    that differ from the papers', None for none)."""
    X, y = load_wine(return_X_y=True)
    X = minmax_scale(X)
    started = time.perf_counter()
    best, subsets, n_subsets = exhaustive(X, y)
    print(f"exhaustive: {n_subsets} subsets, best {best}/{len(y)} "
          f"({time.perf_counter() - started:.1f} s), reached by {len(subsets)}: {subsets}")
    target = best / len(y)
    for name in ("cbpso", "pso-lsrg"):
        hits, evaluations, found_at, rounds, seconds = 0, [], [], [], []
        for seed in range(n_seeds):
            result = run_search(X, y, name, {**(params or {}), "target": target}, seed=seed)
            last = result.history[-1]
            seconds.append(last["seconds"])
            if result.fitness >= target:
                hits += 1
                evaluations.append(last["evaluations"])
                found_at.append(result.extra["best_found_at"])
                rounds.append(last["iteration"] + 1)
        line = f"{name}: reached {best}/{len(y)} in {hits}/{n_seeds} runs"
        if hits:
            line += (f"; evaluations when first scored: median {int(np.median(found_at))}, "
                     f"min {min(found_at)}, max {max(found_at)}; at the end of that round: "
                     f"median {int(np.median(evaluations))}; rounds median "
                     f"{int(np.median(rounds))}")
        line += f"; mean run time {np.mean(seconds):.2f} s"
        print(line)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20)
