"""Pruning study on planted-signal data: ``prune``, ``prune-margin``, ``prune-compact``; known answer.

Four classes, 15 training and 500 test samples per class, 1000 genes of which the first 30
carry the class (class means drawn from N(0, s^2), unit noise); the subset handed to the
pruning holds 15 of the informative genes and 100 noise genes, as a search that reached
100 % inner accuracy with many passengers would. The rules see the training samples only
(1-NN leave-one-out, as PSO-LSRG's fitness); the large test set measures what they kept.
Per replicate and rule: test accuracy, genes, informative and noise genes kept. The
``jobs/README.md`` table of pruning variants reports the same design (30 replicates).

Run: ``python -m studies.study_prune [n_replicates] [s ...]`` (default 30 replicates,
s = 1.6 and 1.2).
"""

import sys
import time

import numpy as np

from hpcswarm.fitness import KnnEvaluator, score_split
from hpcswarm.signatures.refine import prune, prune_compact, prune_margin

N_CLASSES, TRAIN_PER_CLASS, TEST_PER_CLASS = 4, 15, 500
N_GENES, N_INFORMATIVE, GIVEN_INFORMATIVE, GIVEN_NOISE = 1000, 30, 15, 100


def planted(rng, spread):
    """Training and test samples, and the subset to prune."""
    means = np.zeros((N_CLASSES, N_GENES))
    means[:, :N_INFORMATIVE] = rng.normal(0, spread, size=(N_CLASSES, N_INFORMATIVE))

    def draw(per_class):
        y = np.repeat(np.arange(N_CLASSES), per_class)
        return means[y] + rng.normal(size=(y.size, N_GENES)), y

    train, test = draw(TRAIN_PER_CLASS), draw(TEST_PER_CLASS)
    given = np.zeros(N_GENES, dtype=bool)
    given[rng.choice(N_INFORMATIVE, GIVEN_INFORMATIVE, replace=False)] = True
    given[N_INFORMATIVE + rng.choice(N_GENES - N_INFORMATIVE, GIVEN_NOISE, replace=False)] = True
    return train, test, given


RULES = {
    "given subset": lambda evaluator, X, y, mask: mask,
    "prune": lambda evaluator, X, y, mask: prune(evaluator, mask).mask,
    "prune-margin": lambda evaluator, X, y, mask: prune_margin(evaluator, X, y, mask).mask,
    "prune-compact": lambda evaluator, X, y, mask: prune_compact(evaluator, X, y, mask).mask,
}


def main(n_replicates=30, spreads=(1.6, 1.2)):
    for spread in spreads:
        figures = {name: [] for name in RULES}
        started = time.perf_counter()
        for replicate in range(n_replicates):
            rng = np.random.default_rng([2026, replicate])
            (X, y), (X_test, y_test), given = planted(rng, spread)
            evaluator = KnnEvaluator(X, y, k=1, cv="loo")
            for name, rule in RULES.items():
                mask = rule(evaluator, X, y, given)
                test = score_split(X, y, X_test, y_test, mask, 1)
                genes = np.flatnonzero(mask)
                figures[name].append((100 * test.accuracy, genes.size,
                                      np.count_nonzero(genes < N_INFORMATIVE)))
        print(f"s = {spread}: {n_replicates} replicates, "
              f"{time.perf_counter() - started:.0f} s")
        print(f"  {'rule':14s} {'test acc. (%)':>16s} {'genes':>6s} {'informative':>11s} "
              f"{'noise':>6s}")
        for name, rows in figures.items():
            accuracy, size, informative = np.array(rows, dtype=float).T
            print(f"  {name:14s} {accuracy.mean():7.2f} +/- {accuracy.std(ddof=1):5.2f} "
                  f"{size.mean():6.1f} {informative.mean():11.1f} "
                  f"{(size - informative).mean():6.1f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 30,
         tuple(float(s) for s in sys.argv[2:]) or (1.6, 1.2))
