"""Variants of ``refine = "relevance"`` on the design sets: why its cut, statistic and order.

``relevance`` (:mod:`hpcswarm.signatures.relevance`) ranks the genes by Welch's statistic of each
class against the rest, takes them round robin over the classes (Forman 2004) and cuts the ranking
at the shortest prefix with the most inner correct predictions. This study puts each of its
three parts beside the alternatives a reader would ask about, on the searches that
:mod:`studies.study_refine` cached (Tran et al. 2016, Experiment II: 3 runs of outer stratified
10-fold cross-validation, seed 2016, 1-NN leave-one-out inside):

Cuts of the same ranking
    - ``most correct``: the rule;
    - ``within one``: the shortest prefix at most one inner prediction below the best;
    - ``one SE``: the shortest prefix within one binomial standard error ``sqrt(n p (1 -
      p))`` of the best count (Breiman et al. 1984's rule, the cut of ``stability``);
    - ``paired one SE``: the shortest prefix whose per-sample differences from the best
      prefix (+1 where only it is right, -1 where only the best is) have a mean within one
      standard error of 0;
    - ``balanced``: the shortest prefix with the best mean over the classes of the inner
      accuracy within each class.
Statistics, cut by the rule
    - ``pooled t``: the one-way model's t of each class against the rest, with the
      within-class variance pooled over every class;
    - ``moderated t``: the same with each gene's variance shrunk to a prior fitted over the
      genes by the moments of ``log s^2`` (Smyth 2004, Stat. Appl. Genet. Mol. Biol. 3(1),
      the estimator of limma);
    - ``SAM``: Welch's difference over its standard error plus the median standard error
      over the genes (Tusher et al. 2001, PNAS 98(9), the fudge constant s0 taken as that
      median).
Order, cut by the rule
    - ``by need``: one round robin, then each gene to the class with the most inner errors
      (ties: the class with fewer genes, then the lower code).

Per task, the inner counts that the count-based cuts read come from the task's scorer
(:class:`~hpcswarm.fitness.KnnEvaluator`); the per-sample outcomes that the paired and
balanced cuts and the order by need read are 1-NN leave-one-out on exact squared distances,
summed gene by gene, ties to the lower training index (the tool's rule). Each row is scored
on its fold's test samples, with the figures and the bar of :mod:`studies.study_refine`: test
accuracy % per run (sd), the one-sided rank-sum p of its fold accuracies against PSO-LSRG's,
mean (largest) size, Kuncheva's index between folds, and the bar (p >= 0.05, at most 30
genes, Kuncheva >= 0.3; on SRBCT also 93.26 % with at most 15 genes).

Run from the repository root after :mod:`studies.study_refine` has cached the searches of the sets
named (minutes per set, one process):

    python -m studies.study_relevance_variants WORK [NAME ...]
"""

import argparse
import sys
from pathlib import Path

import numpy as np
from scipy.special import digamma, polygamma

from hpcswarm.data import load_dataset
from hpcswarm.fitness import KnnEvaluator
from hpcswarm.signatures.relevance import balanced_ranking, best_prefix, one_vs_rest, prefix_scores
from studies.design_sets import (DESIGN_SETS, MAX_SIGNATURE, data_path, rule_figures, tasks,
                                 tested)

VARIANTS = ("most correct", "within one", "one SE", "paired one SE", "balanced", "pooled t",
            "moderated t", "SAM", "by need")


def pooled_t(X, y, moderate=False):
    """|mean of the class - mean of the rest| / (s sqrt(1/n_c + 1/n_r)), ``s^2`` the
    within-class variance pooled over every class (``n - K`` degrees of freedom); with
    ``moderate``, shrunk as in Smyth (2004) (:func:`moderated_variance`) on the data's own
    scale, as limma does (the prior is shared by the genes, so the moderated statistic
    depends on how their scales compare; the pooled one does not)."""
    codes, sizes = np.unique(y, return_counts=True)
    means = np.array([X[y == code].mean(axis=0) for code in codes])
    squares = sum(((X[y == code] - means[row]) ** 2).sum(axis=0)
                  for row, code in enumerate(codes))
    freedom = y.size - codes.size
    variance = squares / freedom
    if moderate:
        variance = moderated_variance(variance, freedom)
    statistics = np.zeros((codes.size, X.shape[1]))
    for row, code in enumerate(codes):
        error = np.sqrt(variance * (1 / sizes[row] + 1 / (y.size - sizes[row])))
        difference = np.abs(means[row] - X[y != code].mean(axis=0))
        np.divide(difference, error, out=statistics[row], where=error > 0)
    return statistics


def moderated_variance(variance, freedom):
    """Smyth's (2004) posterior variances: the prior ``d0``, ``s0^2`` from the mean and
    variance of ``log s^2`` over the genes, then ``(d0 s0^2 + d s^2) / (d0 + d)``;
    an infinite ``d0`` (no spread beyond sampling) gives ``s0^2`` to every gene."""
    positive = variance > 0
    logs = (np.log(variance[positive]) - digamma(freedom / 2) + np.log(freedom / 2))
    excess = logs.var(ddof=1) - polygamma(1, freedom / 2)
    if excess <= 0:
        return np.full_like(variance, np.exp(logs.mean()))
    prior_freedom = 2 * trigamma_inverse(excess)
    prior = np.exp(logs.mean() + digamma(prior_freedom / 2) - np.log(prior_freedom / 2))
    return (prior_freedom * prior + freedom * variance) / (prior_freedom + freedom)


def trigamma_inverse(value):
    """The ``x`` with trigamma(x) = value, by Newton's iteration from ``0.5 + 1 / value`` (as
    limma's ``trigammaInverse``)."""
    x = 0.5 + 1 / value
    for _ in range(50):
        trigamma = polygamma(1, x)
        step = trigamma * (1 - trigamma / value) / polygamma(2, x)
        x += step
        if -step / x < 1e-8:
            break
    return x


def sam(X, y):
    """Welch's difference over (its standard error + the median standard error over the
    genes), Tusher et al. (2001), on the data's own scale (as the moderated t)."""
    codes = np.unique(y)
    statistics = np.zeros((codes.size, X.shape[1]))
    for row, code in enumerate(codes):
        inside, rest = X[y == code], X[y != code]
        variance = rest.var(axis=0, ddof=1) / len(rest)
        if len(inside) > 1:
            variance = variance + inside.var(axis=0, ddof=1) / len(inside)
        error = np.sqrt(variance)
        difference = np.abs(inside.mean(axis=0) - rest.mean(axis=0))
        statistics[row] = difference / (error + np.median(error))
    return statistics


def loo_outcomes(part, y, ranking):
    """Per prefix of ``ranking``, which samples 1-NN leave-one-out classifies right."""
    distances = _own_excluded(y.size)
    return np.array([_with_gene(distances, part[:, gene], y) for gene in ranking])


def _own_excluded(n_samples):
    """Squared distances of no gene yet, a sample's own set to infinity (left out)."""
    distances = np.zeros((n_samples, n_samples))
    np.fill_diagonal(distances, np.inf)
    return distances


def _with_gene(distances, column, y):
    """Adds one gene's squared differences to ``distances`` (in place); which samples 1-NN
    leave-one-out then classifies right (the first nearest on equal distances)."""
    distances += (column[:, None] - column[None, :]) ** 2
    return y[distances.argmin(axis=1)] == y


def by_need(part, y, statistics):
    """The order by need: a round robin of the classes, then each gene to the class with the
    most inner errors of 1-NN leave-one-out on the genes so far."""
    codes = np.unique(y)
    rankings = [np.lexsort((np.arange(part.shape[1]), -row)) for row in statistics]
    places, given = np.zeros(codes.size, dtype=int), np.zeros(codes.size, dtype=int)
    taken, chosen = np.zeros(part.shape[1], dtype=bool), []
    distances, right = _own_excluded(y.size), np.zeros(y.size, dtype=bool)
    while len(chosen) < min(MAX_SIGNATURE, part.shape[1]):
        if len(chosen) < codes.size:
            turn = len(chosen)
        else:
            errors = np.array([np.count_nonzero(~right[y == code]) for code in codes])
            turn = np.lexsort((np.arange(codes.size), given, -errors))[0]
        while taken[rankings[turn][places[turn]]]:
            places[turn] += 1
        gene = rankings[turn][places[turn]]
        taken[gene], given[turn] = True, given[turn] + 1
        chosen.append(gene)
        right = _with_gene(distances, part[:, gene], y)
    return np.array(chosen)


def cut_sizes(counts, outcomes, y):
    """The prefix size each cut of one ranking chooses."""
    best = int(np.argmax(counts))
    n = y.size
    accuracy = counts[best] / n
    paired = outcomes.astype(int) - outcomes[best].astype(int)
    error = np.sqrt(paired.var(axis=1) / n)
    codes = np.unique(y)
    balanced = np.array([np.mean([row[y == code].mean() for code in codes])
                         for row in outcomes])
    return {"most correct": best + 1,
            "within one": _first(counts >= counts[best] - 1),
            "one SE": _first(counts >= counts[best] - np.sqrt(n * accuracy * (1 - accuracy))),
            "paired one SE": _first(paired.mean(axis=1) >= -error),
            "balanced": _first(balanced >= balanced.max())}


def _first(hits):
    """The size of the first prefix where ``hits`` holds."""
    return int(np.argmax(hits)) + 1


def signatures(X, y, train):
    """Every variant's genes on one task's training samples."""
    part, labels = X[train], y[train]
    scorer = KnnEvaluator(part, labels, k=1, cv="loo")
    welch = one_vs_rest(part, labels)
    ranking = balanced_ranking(welch, MAX_SIGNATURE)
    counts = np.array([score.correct for score in prefix_scores(scorer, ranking)])
    chosen = {variant: ranking[:size] for variant, size in
              cut_sizes(counts, loo_outcomes(part, labels, ranking), labels).items()}

    statistics = {"pooled t": pooled_t(part, labels),
                  "moderated t": pooled_t(part, labels, moderate=True),
                  "SAM": sam(part, labels)}
    for variant, values in statistics.items():
        chosen[variant] = best_prefix(scorer, balanced_ranking(values, MAX_SIGNATURE), variant).genes
    chosen["by need"] = best_prefix(scorer, by_need(part, labels, welch), "by need").genes
    return chosen


def table(name, work):
    """The study's lines for ``name``."""
    dataset = load_dataset(data_path(name, work))
    X, y = np.asarray(dataset.X, dtype=np.float64), dataset.y
    found = {variant: [] for variant in ("PSO-LSRG", *VARIANTS)}
    for task in tasks(work / f"{name}.h5"):
        chosen = {"PSO-LSRG": task["genes"], **signatures(X, y, task["train"])}
        for variant, genes in chosen.items():
            found[variant].append(tested(X, y, task, genes))
    base = np.array([r["correct"] / r["total"] for r in found["PSO-LSRG"]])
    lines = [f"{name} ({X.shape[1]} genes)",
             f"  {'variant':14s} {'test acc. % (sd)':>17s} {'p below':>7s} {'genes':>6s} "
             f"{'max':>4s} {'K folds':>7s} {'bar':>3s}"]
    for variant, records in found.items():
        figures = rule_figures(records, base, X.shape[1], name,
                               compare=variant != "PSO-LSRG")
        per_run, sizes = figures["per_run"], figures["sizes"]
        lines.append(f"  {variant:14s} {np.mean(per_run):8.2f} ({np.std(per_run, ddof=1):5.2f}) "
                     f"{figures['below']:7.3f} {sizes.mean():6.1f} {sizes.max():4d} "
                     f"{figures['kuncheva']:7.3f} {'yes' if figures['meets'] else 'no':>3s}")
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("work", type=Path, help="the folder studies.study_refine cached into")
    parser.add_argument("names", nargs="*", choices=[[], *DESIGN_SETS], default=[],
                        metavar="NAME", help=f"design sets (default all: {', '.join(DESIGN_SETS)})")
    args = parser.parse_args(argv)
    for name in args.names or list(DESIGN_SETS):
        if not (args.work / f"{name}.h5").exists():
            print(f"{name}: run studies.study_refine first", flush=True)
            continue
        print("\n".join(table(name, args.work)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
