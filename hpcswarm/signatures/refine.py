"""Refinement of a search's selected subset after the search: pruning to a compact signature.

PSO-LSRG's fitness is the inner accuracy alone (Tran et al. 2016, Eq. 3): once it reaches its
maximum nothing in the search removes a gene that does not help. ``refine = "prune"`` takes
the subset a search returned and removes genes one at a time, on the same training samples
and inner validation, while the inner accuracy does not drop: a sequential backward
elimination (the SBS of the papers' baselines) started from the search's answer and stopped
at the first loss. Each step scores every one-gene removal at once
(the scorer's ``score_single_flips``, :class:`~hpcswarm.fitness.scorer.Scorer`: the
incremental update of Tran et al. Sect. 3.2 in blocks) and removes the gene whose removal keeps the most correct
predictions; ties go to the lower gene index (all candidates have one gene fewer). The
result never has a lower inner accuracy than the search's subset, and it is reported as its
own method (e.g. ``PSO-LSRG+prune``) beside the search's, never in its place.

The rule judges the inner accuracy, not the search's objective: under Li et al.'s combined
fitness every removal raises the size term, so the objective alone would accept losses of
accuracy. The test accuracy is never consulted.

``refine = "prune-margin"`` walks the same backward path but breaks its ties by the
training samples' 1-NN margins and stops at the best point of the path, not at its end.
Once the inner accuracy is at its maximum (100 % leave-one-out is common on microarrays),
many removals keep it, and pruning "while the accuracy does not drop" down to the last gene
that keeps it overfits the inner validation: the smallest subsets that still classify every
training sample do it by a hair. The secondary criterion is the sum of the leave-one-out
hypothesis margins of the training samples, ``e(F)`` of Gilad-Bachrach, Navot & Tishby
(2004, ICML; :mod:`hpcswarm.fitness.margins`), whose generalisation bound for 1-NN
tightens as the margin grows and as the number of genes falls. Each step removes, among
the removals that keep the most correct predictions (as ``prune``), the one with the
largest ``e``; the walk goes on while the inner accuracy does not drop, and the answer is
the point of the walk with the most correct predictions, then the largest ``e``, then the
fewest genes: sequential backward selection returning the best subset of its path under
the lexicographic criterion (inner accuracy, margin). Only the training samples of the
search are read.

``refine = "prune-compact"`` walks the path of ``prune-margin`` and returns its point with the
most inner correct predictions, then the largest margin relative to the spread of the
training samples in the subset, ``e(F) / r(F)``, then the fewest genes. ``e(F)`` is measured
in the units of the genes and grows with every gene that stretches the distances between
classes a little more than within them, so ``prune-margin`` keeps dozens of genes; the
bound of Gilad-Bachrach et al. depends on the margin only relative to the radius of the data
in the selected features (``R / gamma``, raised to the number of features), and ``r(F)``,
the root-mean-square distance of the training samples to their mean (the square root of
the summed variances of the genes of ``F``), is that radius measured robustly. A gene that
adds spread without separation lowers the ratio, two copies of a gene score as one, and the
ratio does not depend on the genes' units. Ties in the ratio go to fewer genes.

The variants compared before choosing these rules, on data other than the papers' benchmark
sets, and what each costs, are listed in ``jobs/README.md``.
"""

from dataclasses import dataclass

import numpy as np

from hpcswarm.fitness import GeneMajor
from hpcswarm.fitness.margins import label_codes, margin_sum, margin_sums


@dataclass
class Refined:
    """A refined subset.

    Attributes
    ----------
    method : str
        The refinement (a value of ``refine``, or ``"eliminate"``).
    mask : ndarray of bool of shape (n_genes,)
    correct, total : int
        Its inner validation score.
    removed : ndarray of int64
        Genes removed, in the order they were removed.
    frequency : ndarray of float64 or None
        Per gene of :attr:`genes`, the fraction of the subsample searches that kept it
        (:mod:`hpcswarm.signatures.subsample`); None for the rules of this module.
    """

    method: str
    mask: np.ndarray
    correct: int
    total: int
    removed: np.ndarray
    frequency: np.ndarray = None

    @property
    def genes(self):
        """Indices of the refined subset's genes."""
        return np.flatnonzero(self.mask)


def _backward_path(scorer, mask, break_tie):
    """Sequential backward elimination from ``mask`` while the inner count does not drop.

    Each step scores every one-gene removal at once (``score_single_flips``), keeps the
    removals with the most correct predictions and takes the one ``break_tie(genes, tied)``
    picks (a position in ``tied``, rows of ``genes``); the walk stops at one gene or when
    every removal loses a correct prediction.

    Returns
    -------
    counts : list of int
        The inner correct count of each point of the path; point 0 is ``mask``.
    removed : list of int
        The gene removed to reach each later point.
    total : int
        The inner validation's number of predictions.
    """
    score = scorer.score(mask)
    counts, removed = [int(score.correct)], []
    if np.count_nonzero(mask) > 1:
        state = scorer.new_state(mask)
        while np.count_nonzero(state.mask) > 1:
            genes = np.flatnonzero(state.mask)
            correct = np.array([s.correct for s in scorer.score_single_flips(state, genes)])
            if correct.max() < counts[-1]:
                break
            tied = np.flatnonzero(correct == correct.max())
            j = int(tied[break_tie(genes, tied)])
            scorer.apply_flip(state, genes[j:j + 1])
            counts.append(int(correct[j]))
            removed.append(int(genes[j]))
    return counts, removed, int(score.total)


def _refined(method, mask, path, best):
    """Point ``best`` of ``path`` (:func:`_backward_path` from ``mask``) as a :class:`Refined`."""
    counts, removed, total = path
    removed = np.array(removed[:best], dtype=np.int64)
    mask = np.array(mask, dtype=bool)
    mask[removed] = False
    return Refined(method, mask, counts[best], total, removed)


def _last_best(keys):
    """Position of the last of the largest ``keys``: on equal criteria, the fewest genes."""
    return max(range(len(keys)), key=lambda i: (keys[i], i))


def prune(scorer, mask):
    """Remove genes one at a time while the inner accuracy does not drop.

    Parameters
    ----------
    scorer : Scorer
        The search's scorer (its training samples and validation folds), e.g. a
        :class:`~hpcswarm.fitness.KnnEvaluator`.
    mask : ndarray of bool of shape (n_genes,)
        The subset to prune (the search's answer).

    Returns
    -------
    Refined
        A subset of ``mask`` whose inner correct count is at least that of ``mask``; equal
        to ``mask`` when it is empty or no single removal keeps the count.
    """
    path = _backward_path(scorer, mask, lambda genes, tied: 0)  # the lowest gene index
    return _refined("prune", mask, path, len(path[1]))


def _margin_path(scorer, data, y, mask):
    """The backward path with margin ties: ``(path, points)``, ``path`` as from
    :func:`_backward_path` and ``points`` the ``(inner correct count, e(F), genes of F)`` of
    each of its points, ``e`` the margin sum of :func:`~hpcswarm.fitness.margins.margin_sum`
    on ``data`` (the scorer's training samples, labels ``y``)."""
    codes, counted = label_codes(y)
    margins = []    # e of each point a step leaves: the tie-break computes it on the way

    def largest_margin(genes, tied):
        whole, removals = margin_sums(data.take(genes), tied, codes, counted)
        margins.append(whole)
        return int(np.argmax(removals))

    path = counts, removed, _ = _backward_path(scorer, mask, largest_margin)
    subset, points = np.array(mask, dtype=bool), []
    for step, correct in enumerate(counts):
        if step:
            subset[removed[step - 1]] = False
        genes = np.flatnonzero(subset)
        margin = (margins[step] if step < len(margins)
                  else margin_sum(data.take(genes), codes, counted))
        points.append((correct, margin, genes))
    return path, points


def prune_margin(scorer, data, y, mask):
    """Backward elimination with margin ties, returning the best point of its path.

    Parameters
    ----------
    scorer : Scorer
        The search's scorer, as for :func:`prune`.
    data : GeneMajor or array-like of shape (n_samples, n_genes)
        The scorer's training samples (what the search read), for the margins.
    y : array-like of shape (n_samples,)
        Their labels.
    mask : ndarray of bool of shape (n_genes,)
        The subset to prune.

    Returns
    -------
    Refined
        The point of the path with the most inner correct predictions, then the largest
        margin sum (:func:`~hpcswarm.fitness.margins.margin_sum`), then the fewest genes:
        never a lower inner count than ``mask``; ``removed`` the genes removed to reach it.
    """
    path, points = _margin_path(scorer, GeneMajor.of(data), y, mask)
    keys = [(correct, margin) for correct, margin, _ in points]
    return _refined("prune-margin", mask, path, _last_best(keys))


def relative_margin(margin, variance):
    """``e(F) / r(F)``, the margin sum relative to ``r(F) = sqrt(variance)``, ``variance`` the
    summed variances of the genes of ``F`` (negatives from rounding read as 0); 0 where
    ``r(F)`` is 0. Element by element for arrays."""
    radius = np.sqrt(np.maximum(variance, 0.0))
    return np.divide(margin, radius, out=np.zeros_like(radius), where=radius > 0)


def prune_compact(scorer, data, y, mask):
    """The path of :func:`prune_margin`, returning its point of largest relative margin.

    The margin relative to the spread of the training samples in the subset's genes,
    ``e(F) / r(F)`` with ``r(F) = sqrt(sum of the genes' variances over the training
    samples)``, the root-mean-square distance of the samples to their mean in ``F``.

    Parameters
    ----------
    scorer, data, y, mask
        As for :func:`prune_margin`.

    Returns
    -------
    Refined
        The point of the path with the most inner correct predictions, then the largest
        ``e(F) / r(F)`` (0 where ``r(F)`` is 0: every sample at the same point), then the
        fewest genes.
    """
    data = GeneMajor.of(data)
    path, points = _margin_path(scorer, data, y, mask)
    start = points[0][2]
    variance = data.take(start).var(axis=1)
    keys = [(correct, float(relative_margin(margin,
                                            variance[np.searchsorted(start, genes)].sum())))
            for correct, margin, genes in points]
    return _refined("prune-compact", mask, path, _last_best(keys))


def eliminate_to(scorer, mask: np.ndarray, n_genes: int) -> Refined:
    """Sequential backward elimination from ``mask`` down to ``n_genes`` genes.

    The SBS of the papers' baselines (Tran et al. 2016, Sect. 4.2) started from ``mask``:
    each step scores every one-gene removal at once (``score_single_flips``) and removes
    the gene whose removal keeps the most inner correct predictions, ties to the lower gene
    index, as :func:`prune`; unlike ``prune`` it goes on through losses and stops at the
    size, so that a signature of at most ``n_genes`` genes exists whatever the search
    found. The cost grows with the number of genes removed.

    Parameters
    ----------
    scorer : Scorer
        The search's scorer (same samples and inner validation).
    mask : ndarray of bool of shape (n_genes_total,)
    n_genes : int
        Genes to keep, >= 1; ``mask`` is returned unchanged when it has no more.

    Returns
    -------
    Refined
        ``method`` ``"eliminate"``; the genes removed in order.
    """
    mask = np.array(mask, dtype=bool)
    removed = []
    if np.count_nonzero(mask) > n_genes:
        state = scorer.new_state(mask)
        while np.count_nonzero(state.mask) > n_genes:
            genes = np.flatnonzero(state.mask)
            correct = np.array([s.correct for s in scorer.score_single_flips(state, genes)])
            j = int(np.argmax(correct))  # the first of the best: the lower gene index
            scorer.apply_flip(state, genes[j:j + 1])
            removed.append(int(genes[j]))
    kept = mask.copy()
    kept[removed] = False
    score = scorer.score(kept)
    return Refined("eliminate", kept, int(score.correct), int(score.total),
                   np.array(removed, dtype=np.int64))


def prune_subset(scorer, data, y, mask):
    """:func:`prune` with the arguments of a rule of kind ``trim``
    (:data:`hpcswarm.signatures.refinements.KINDS`): ``refine = "prune"``."""
    return prune(scorer, mask)
