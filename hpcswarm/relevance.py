"""Refinement by a class-balanced relevance ranking, cut by the inner validation.

The subsets of PSO-LSRG (Tran et al. 2016) share almost nothing from one outer fold to the
next, and on data where many genes carry the same signal no rule built from the searches'
selections alone changes that: on GLIOMA, colon and lymphoma even the frequencies of ten
subsample searches (:mod:`hpcswarm.subsample`) are flat, and their consensus agrees across
folds little better than chance (``benchmarks/study_refine.py``). What does agree from fold to
fold is how strongly a gene separates the classes on the training samples. ``refine =
"relevance"`` ranks the genes by that, and lets the search's own validation choose how many
to keep; it is a filter ranking wrapped by the k-NN inner validation, the hybrid of the
papers' filter and wrapper approaches (Tran et al. 2016, Sect. 2).

Relevance, one class against the rest
    For class ``c`` and gene ``g``, Welch's statistic ``|m_c - m_r| / sqrt(s_c^2 / n_c +
    s_r^2 / n_r)``: the means, sample variances and sizes of the class's training samples
    and of the others'. A class of one sample has no variance to estimate, and contributes
    no term (its sample is its mean); a gene with no spread in either group scores 0, as
    there is nothing to measure its difference against. The statistic is unchanged by a
    gene's scale, so each gene is divided by its largest absolute value first and no square
    overflows, whatever the magnitudes.

A class-balanced ranking
    A single statistic over all classes (the ANOVA F) is dominated by the classes that are
    easy to separate, and leaves the small ones without genes: on lymphoma (nine classes,
    some of two samples) the top genes by F, cut in the same way, lose 12 points of test
    accuracy against the search (``jobs/README.md``). Forman (2004, "A pitfall and solution
    in multi-class feature selection for text classification", ICML) ranks the features per
    class and takes them round robin: in the order of the class codes, each class in turn
    takes the best of its genes that no class has taken yet. Ties in a class's ranking go to
    the lower column.

The cut
    Of the prefixes of that ranking up to :data:`MAX_SIGNATURE` genes, the shortest with the
    most inner correct predictions on all the training samples (the task's own validation,
    1-NN leave-one-out for PSO-LSRG). Unlike pruning (:mod:`hpcswarm.refine`), the inner
    validation chooses only where to cut a ranking that does not depend on it, so it cannot
    fit the last training sample of a small class gene by gene. Cuts that accept fewer
    correct predictions for fewer genes lose test accuracy against this one on the sets
    with classes of a few samples, GLIOMA and lymphoma: within one standard error of the
    best (the cut of ``stability``) 7.3 and 5.6 points, within one prediction of the best
    7.3 and 4.2 (while keeping 13.6 genes on SRBCT instead of 19.5), the cut prefix pruned
    again 3 to 5. None is applied (``benchmarks/study_relevance_variants.py``,
    ``jobs/README.md``).

The search's subset is not read: the rule replaces it. Its report row stays separate from
the search's, which is still reported as the papers define it.
"""

import numpy as np

from hpcswarm.fitness import GeneMajor
from hpcswarm.refine import Refined

MAX_SIGNATURE = 30
"""Longest prefix of a ranking that ``relevance`` (and ``stability``,
:mod:`hpcswarm.subsample`) considers."""

BLOCK_GENES = 1024
"""Genes read per block when computing the statistics (bounds the temporary memory)."""


def one_vs_rest(data, y):
    """Welch's statistic of every gene for every class against the others.

    Parameters
    ----------
    data : GeneMajor or ndarray of shape (n_samples, n_genes)
        The training samples.
    y : ndarray of shape (n_samples,)
        Class codes, at least two classes.

    Returns
    -------
    ndarray of float64 of shape (n_classes, n_genes)
        Row ``c`` for the ``c``-th class of ``numpy.unique(y)``; 0 where neither group has
        any spread, and everywhere when there is one class (no others to compare with).
    """
    data = GeneMajor.of(data)
    y = np.asarray(y)
    members = [y == code for code in np.unique(y)]
    statistics = np.zeros((len(members), data.n_genes))
    if len(members) < 2:
        return statistics
    for start in range(0, data.n_genes, BLOCK_GENES):
        genes = np.arange(start, min(start + BLOCK_GENES, data.n_genes))
        block = data.take(genes)
        largest = np.abs(block).max(axis=1, keepdims=True)
        block /= np.where(largest > 0, largest, 1.0)
        for row, inside in enumerate(members):
            statistics[row, genes] = _welch(block[:, inside], block[:, ~inside])
    return statistics


def _welch(first, second):
    """Welch's statistic per row of two groups of columns (a one-column group adds no
    variance term)."""
    spread = np.zeros(first.shape[0])
    for group in (first, second):
        if group.shape[1] > 1:
            spread += group.var(axis=1, ddof=1) / group.shape[1]
    difference = np.abs(first.mean(axis=1) - second.mean(axis=1))
    statistic = np.zeros_like(difference)
    np.divide(difference, np.sqrt(spread), out=statistic, where=spread > 0)
    return statistic


def balanced_ranking(statistics, size):
    """The first ``size`` genes of the round robin over the classes' rankings (Forman 2004):
    in turn, each class takes the best of its genes not taken yet.

    Parameters
    ----------
    statistics : ndarray of shape (n_classes, n_genes)
    size : int

    Returns
    -------
    ndarray of int64 of shape (min(size, n_genes),)
    """
    n_genes = statistics.shape[1]
    columns = np.arange(n_genes)
    rankings = [np.lexsort((columns, -row)) for row in statistics]
    places = [0] * len(rankings)  # each class's next place in its ranking
    taken, chosen = np.zeros(n_genes, dtype=bool), []
    size = min(size, n_genes)
    while len(chosen) < size:
        for turn, ranking in enumerate(rankings):
            while taken[ranking[places[turn]]]:
                places[turn] += 1
            gene = ranking[places[turn]]
            taken[gene] = True
            chosen.append(gene)
            if len(chosen) == size:
                break
    return np.array(chosen, dtype=np.int64)


def relevance_prefix(scorer, data, y):
    """The ``relevance`` rule: the shortest prefix of the class-balanced ranking, at most
    :data:`MAX_SIGNATURE` genes, with the most inner correct predictions.

    Parameters
    ----------
    scorer : Scorer
        The task's scorer on all its training samples.
    data : GeneMajor or ndarray of shape (n_samples, n_genes)
        The same training samples.
    y : ndarray of shape (n_samples,)

    Returns
    -------
    Refined
        As :func:`best_prefix` of :func:`balanced_ranking`.
    """
    return best_prefix(scorer, balanced_ranking(one_vs_rest(data, y), MAX_SIGNATURE))


def best_prefix(scorer, ranking):
    """The shortest prefix of ``ranking`` with the most inner correct predictions.

    Parameters
    ----------
    scorer : Scorer
    ranking : ndarray of int
        Genes, best first (at least one).

    Returns
    -------
    Refined
        ``method`` ``"relevance"``; ``removed`` empty (the genes are chosen, not removed);
        its inner count is the best of the prefixes, and no shorter prefix reaches it.
    """
    scores = prefix_scores(scorer, ranking)
    correct = [score.correct for score in scores]
    size = correct.index(max(correct)) + 1
    mask = np.zeros(scorer.n_genes, dtype=bool)
    mask[ranking[:size]] = True
    return Refined("relevance", mask, int(scores[size - 1].correct),
                   int(scores[size - 1].total), np.zeros(0, dtype=np.int64))


def prefix_scores(scorer, ranking):
    """The inner score of every prefix of ``ranking``: element ``i`` for its ``i + 1``
    first genes."""
    scores = []
    for size in range(1, len(ranking) + 1):
        mask = np.zeros(scorer.n_genes, dtype=bool)
        mask[ranking[:size]] = True
        scores.append(scorer.score(mask))
    return scores
