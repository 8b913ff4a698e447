"""Refinements by repeated searches on subsamples: stability selection and a consensus.

A search that reaches 100 % inner accuracy with hundreds of genes keeps many passengers, and
which ones depends on the samples it saw: the subsets of PSO-LSRG (Tran et al. 2016) share
almost nothing from one outer fold to the next, and pruning one of them
(:mod:`hpcswarm.signatures.refine`) can only keep genes that this one search happened to hold.
Stability selection (Meinshausen & Bühlmann 2010, JRSS B 72(4)) asks instead which genes a selection
procedure picks again and again when the samples change: the procedure runs on ``B``
subsamples of half the samples, and a gene's *selection frequency* is the fraction of them
that selected it. Here the procedure is the job's own search followed by ``prune-compact``
(:func:`hpcswarm.signatures.refine.prune_compact`), run on the training samples of the task only, so
the outer test fold is never read.

Subsamples: ``B / 2`` complementary pairs of halves (Shah & Samworth 2013, "Variable
selection with error control: another look at stability selection", JRSS B 75(1)): each
pair splits the training samples in two disjoint halves, stratified by class (each class's
samples are shuffled and cut in two; an odd class gives its extra sample to either half at
random), so that every half keeps every class. Each search draws from its own seed, the
``(SUBSAMPLES, b)`` child of the task's search seed (:func:`subsample_seed`); the halves
come from the ``(SUBSAMPLES,)`` child. Neither is a seed the search itself uses.

Two rules read the frequencies; both see the training samples only.

``refine = "stability"``
    The genes ranked by selection frequency (ties to the lower column), and of the
    prefixes of that ranking (every gene some subsample kept), the shortest whose inner
    correct count on all the training samples (the task's own validation, 1-NN leave-one-out
    for PSO-LSRG) is within one standard error of the best prefix's: the one-standard-error
    rule of Breiman et al. (1984, *Classification and Regression Trees*, Sect. 3.4.3; Hastie,
    Tibshirani & Friedman 2009, Sect. 7.10), which prefers the simplest model that the
    validation cannot tell from the best. The standard error of ``c`` correct out of ``n``
    is ``n sqrt(p (1 - p) / n)`` with the Laplace-corrected ``p = (c + 1) / (n + 2)``: at
    100 % inner accuracy, common on microarrays, the plain binomial error is 0 and the rule
    would again fit the last training sample, which is how pruning to the last
    leave-one-out prediction overfits classes of a few samples. The frequency orders the
    genes and the inner validation only chooses where to cut, so two folds whose searches
    shared nothing still agree on the genes every subsample kept. Meinshausen & Bühlmann's bound
    (their Theorem 1, with Shah & Samworth's complementary pairs) on the expected number of
    falsely selected genes, ``q^2 / ((2 pi - 1) p)`` for the genes of frequency at least
    ``pi > 1/2`` with ``q`` genes selected per subsample out of ``p``, is reported for the
    genes above one half (:func:`error_bound`); the cut of the prefix is not covered by it.

``refine = "consensus"``
    The union of the subsamples' signatures, pruned on all the training samples by
    ``prune-compact``: a consensus of the searches, compacted by the rule the single search
    uses. Its inner accuracy is never below that of the union.

Cost: ``B`` searches on half the training samples besides the task's own search (about
``0.4 B`` times its time on microarrays, where a half costs a little under half a search);
they run one after the other on the task's rank group, each rank-invariant, so the
refinement is too.
"""

from dataclasses import dataclass

import numpy as np

from hpcswarm.fitness import GeneMajor
from hpcswarm.fitness.folds import parse_cv
from hpcswarm.signatures.refine import Refined, prune_compact
from hpcswarm.signatures.relevance import prefix_scores
from hpcswarm.swarm.engine.state import child_sequence

SUBSAMPLES = 2
"""Child key of the subsample seeds under a search's seed (the swarm uses 0 and 1)."""


def subsample_seed(root, index):
    """The seed of subsample ``index``'s search under the task's search seed ``root``."""
    return child_sequence(root, SUBSAMPLES, index)


def complementary_halves(y, n_subsamples, root):
    """``n_subsamples / 2`` complementary pairs of stratified halves of the samples ``y``.

    Parameters
    ----------
    y : ndarray of shape (n_samples,)
        Class codes.
    n_subsamples : int
        Even, at least 2.
    root : numpy.random.SeedSequence
        The task's search seed; the draws come from its ``(SUBSAMPLES,)`` child.

    Returns
    -------
    list of ndarray of int
        Sorted sample positions; subsamples ``2 j`` and ``2 j + 1`` are disjoint and
        together hold every sample.
    """
    rng = np.random.default_rng(child_sequence(root, SUBSAMPLES))
    classes = np.unique(y)
    halves = []
    for _ in range(n_subsamples // 2):
        first = []
        for code in classes:
            members = rng.permutation(np.flatnonzero(y == code))
            first.append(members[:(members.size + int(rng.integers(2))) // 2])
        first = np.sort(np.concatenate(first))
        halves += [first, np.setdiff1d(np.arange(y.size), first)]
    return halves


def halves_problem(y, n_subsamples, root, cv):
    """Why the searches on the subsamples of :func:`complementary_halves` cannot validate by
    ``cv`` (a half with fewer samples than folds, fewer than the 2 of leave-one-out, or a
    class with fewer than the 2 of a holdout), or None; a pre-flight check, drawing the same
    halves as :func:`search_subsamples` (no random draw is consumed elsewhere)."""
    cv = parse_cv(cv)
    for index, positions in enumerate(complementary_halves(y, n_subsamples, root)):
        present = np.unique(y[positions], return_counts=True)[1]
        if (present.min() < 2 if cv == "holdout"
                else positions.size < (2 if cv == "loo" else cv)):
            scheme = {"loo": "leave-one-out", "holdout": "a stratified holdout (2 per class)"
                      }.get(cv, f"{cv}-fold cross-validation")
            return (f"subsample half {index + 1} of {n_subsamples} has {positions.size} of the "
                    f"{y.size} training samples ({present.tolist()} per class), too few for the "
                    f"searches' {scheme}: each subsample search runs on half the training "
                    "samples; use a smaller fitness.cv, or a refinement without subsamples")
    return None


@dataclass(frozen=True)
class SubsampleSelections:
    """What the subsample searches selected.

    Attributes
    ----------
    signatures : list of ndarray of int64
        Per subsample, the genes its search kept after ``prune-compact``.
    n_genes : int
    """

    signatures: list
    n_genes: int

    @property
    def frequency(self):
        """Selection frequency of every gene: the fraction of the subsamples that kept it."""
        counts = np.zeros(self.n_genes, dtype=np.int64)
        for genes in self.signatures:
            counts[genes] += 1
        return counts / len(self.signatures)

    def ranking(self):
        """Genes selected at least once, most often first, ties to the lower column."""
        frequency = self.frequency
        order = np.lexsort((np.arange(self.n_genes), -frequency))
        return order[frequency[order] > 0]

    def error_bound(self, threshold=0.6):
        """Meinshausen & Bühlmann's bound (their Theorem 1) on the expected number of genes
        of frequency at least ``threshold`` (in (1/2, 1]) that no signal supports:
        ``q^2 / ((2 threshold - 1) p)``, ``q`` the mean subsample signature size and ``p``
        the genes. It assumes the noise genes exchangeable and the procedure no worse than
        random guessing, as theirs does."""
        mean_size = np.mean([genes.size for genes in self.signatures])
        return float(mean_size ** 2 / ((2 * threshold - 1) * self.n_genes))


def search_subsamples(search, data, y, n_subsamples, root):
    """Run ``search`` on each subsample of :func:`complementary_halves`.

    Parameters
    ----------
    search : callable
        ``search(data_part, y_part, seed)``, the genes the job's search kept after
        ``prune-compact`` on those samples (columns of ``data``).
    data : GeneMajor or ndarray of shape (n_samples, n_genes)
        The training samples.
    y : ndarray of shape (n_samples,)
    n_subsamples : int
    root : numpy.random.SeedSequence
        The task's search seed.

    Returns
    -------
    SubsampleSelections
    """
    data = GeneMajor.of(data)
    signatures = []
    for index, positions in enumerate(complementary_halves(y, n_subsamples, root)):
        genes = search(data.subsample(positions), y[positions], subsample_seed(root, index))
        signatures.append(np.asarray(genes, dtype=np.int64))
    return SubsampleSelections(signatures, data.n_genes)


def _mask(genes, n_genes):
    mask = np.zeros(n_genes, dtype=bool)
    mask[genes] = True
    return mask


def standard_error(correct, total):
    """One standard error of ``correct`` out of ``total`` predictions, in predictions:
    ``total sqrt(p (1 - p) / total)`` with the Laplace-corrected ``p = (correct + 1) /
    (total + 2)`` (never 0, even at 100 %)."""
    p = (correct + 1) / (total + 2)
    return total * np.sqrt(p * (1 - p) / total)


def stability_prefix(scorer, data, y, selections):
    """The ``stability`` rule: the shortest prefix of the frequency ranking whose inner
    correct count is within one standard error (:func:`standard_error`) of the best
    prefix's.

    Parameters
    ----------
    scorer : Scorer
        The task's scorer on all its training samples.
    selections : SubsampleSelections

    Returns
    -------
    Refined
        ``frequency`` each gene's selection frequency; ``removed`` empty (the genes are
        chosen, not removed). Its inner count is at least the best count of the prefixes
        less one standard error; no shorter prefix reaches that.
    """
    ranking = selections.ranking()
    scores = prefix_scores(scorer, ranking)
    if not scores:  # no subsample kept a gene
        empty = scorer.score(np.zeros(scorer.n_genes, dtype=bool))
        return Refined("stability", np.zeros(scorer.n_genes, dtype=bool), int(empty.correct),
                       int(empty.total), np.zeros(0, dtype=np.int64), np.zeros(0))
    best = max(score.correct for score in scores)
    floor = best - standard_error(best, scores[0].total)
    size = next(size for size, score in enumerate(scores, 1) if score.correct >= floor)
    score, mask = scores[size - 1], _mask(ranking[:size], scorer.n_genes)
    return Refined("stability", mask, int(score.correct), int(score.total),
                   np.zeros(0, dtype=np.int64), selections.frequency[mask])


def consensus_prune(scorer, data, y, selections):
    """The ``consensus`` rule: the union of the subsample signatures, pruned by
    :func:`hpcswarm.signatures.refine.prune_compact` on all the training samples.

    Returns
    -------
    Refined
        ``frequency`` each gene's selection frequency; ``removed`` the genes of the union
        that the pruning removed; its inner count is at
        least that of the union.
    """
    union = _mask(selections.ranking(), scorer.n_genes)
    pruned = prune_compact(scorer, data, y, union)
    return Refined("consensus", pruned.mask, pruned.correct, pruned.total, pruned.removed,
                   selections.frequency[pruned.mask])

