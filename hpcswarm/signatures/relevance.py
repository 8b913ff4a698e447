"""Relevance rankings, one class against the rest, cut by the inner validation.

Three rules of :data:`hpcswarm.signatures.refinements.REFINEMENTS` rank genes by how strongly each
one separates a class from the others on the task's training samples, and let the search's own
validation choose how many to keep:

``refine = "relevance-subset"`` (kind ``trim``)
    ranks the genes of the search's subset, and keeps the shortest prefix of that ranking
    with the most inner correct predictions. The swarm chooses which genes are candidates;
    the ranking orders them, so the kept prefix is a part of the swarm's answer, and two
    searches that kept different genes give different signatures.
``refine = "relevance-subset-1se"`` (kind ``trim``)
    the same ranking, cut at the shortest prefix within one standard error of the best
    inner count (:func:`within_one_se`): fewer genes where the validation cannot tell them
    from the best prefix.
``refine = "relevance"`` (kind ``rank``)
    ranks every gene the same way and cuts that ranking: a filter wrapped by the k-NN inner
    validation, the hybrid of the papers' filter and wrapper approaches (Tran et al. 2016,
    Sect. 2). It reads no subset: two different searches on the same fold give the same
    genes. It is reported as the baseline row ``Welch-RR filter`` beside ``All`` and
    ``PCA-kNN``, not as the search's signature.

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
    the lower column. The statistic and the round robin are
    :func:`hpcswarm.swarm.methods.vlpso.gene_order.one_vs_rest` and
    :func:`~hpcswarm.swarm.methods.vlpso.gene_order.balanced_ranking`, where VLPSO's ``gene_order =
    "welch-rr"`` reads them too.

The cut
    Of every prefix of the ranking, the shortest with the most inner correct predictions on
    all the training samples (the task's own validation, 1-NN leave-one-out for PSO-LSRG).
    There is no cap on its length: the data decide the size (an earlier cap of 30 genes
    bound on sets of nine classes, which cannot be told apart with two or three genes per
    class). The prefixes are scored one gene at a time on the scorer's cached state
    (``score_flip``, then ``apply_flip``), each Score equal to a full evaluation of the
    prefix, so the whole cut costs about one incremental evaluation per ranked gene.
"""

import numpy as np

from hpcswarm.signatures.refine import Refined
from hpcswarm.swarm.methods.vlpso.gene_order import balanced_ranking, one_vs_rest

def relevance_prefix(scorer, data, y):
    """The ``relevance`` filter: the shortest prefix of the class-balanced ranking of every
    gene with the most inner correct predictions.

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
    statistics = one_vs_rest(data, y)
    return best_prefix(scorer, balanced_ranking(statistics, statistics.shape[1]), "relevance")


def relevance_subset(scorer, data, y, mask):
    """The ``relevance-subset`` rule: the genes of ``mask`` ranked as :func:`relevance_prefix`
    ranks every gene, cut at the shortest prefix with the most inner correct predictions.

    Parameters
    ----------
    scorer : Scorer
        The task's scorer on all its training samples.
    data : GeneMajor or ndarray of shape (n_samples, n_genes)
        The same training samples.
    y : ndarray of shape (n_samples,)
    mask : ndarray of bool of shape (n_genes,)
        The search's subset.

    Returns
    -------
    Refined
        ``removed`` the genes of ``mask`` left out, in ranking order (an empty ``mask`` is
        returned as it is).
    """
    return _ranked_subset(scorer, data, y, mask, "relevance-subset", shortest_best)


def relevance_subset_1se(scorer, data, y, mask):
    """The ``relevance-subset-1se`` rule: the ranking of :func:`relevance_subset`, cut at
    the shortest prefix within one standard error of the best (:func:`within_one_se`).
    Same parameters and result."""
    return _ranked_subset(scorer, data, y, mask, "relevance-subset-1se", within_one_se)


def _ranked_subset(scorer, data, y, mask, method, cut):
    """The genes of ``mask`` ranked one class against the rest, round robin, cut by ``cut``
    (as :func:`best_prefix`); ``removed`` the genes left out, in ranking order."""
    genes = np.flatnonzero(mask)
    if genes.size == 0:
        empty = scorer.score(mask)
        return Refined(method, np.array(mask, dtype=bool), int(empty.correct),
                       int(empty.total), np.zeros(0, dtype=np.int64))
    statistics = one_vs_rest(data, y, genes)
    ranking = genes[balanced_ranking(statistics, genes.size)]
    kept = best_prefix(scorer, ranking, method, cut)
    kept.removed = ranking[np.count_nonzero(kept.mask):]
    return kept


def shortest_best(correct, total):
    """The size of the shortest prefix with the most inner correct predictions
    (``correct[i]`` the count of the ``i + 1`` first genes, out of ``total``)."""
    return correct.index(max(correct)) + 1


def within_one_se(correct, total):
    """The size of the shortest prefix whose inner count is within one standard error of
    the best: the one-standard-error rule (Breiman, Friedman, Olshen & Stone 1984, CART,
    Sect. 3.4.3; Hastie, Tibshirani & Friedman 2009, Sect. 7.10), the most parsimonious
    model the validation cannot tell from the best. The standard error is the binomial one
    of the best count, ``sqrt(best (total - best) / total)``: none (the shortest best) when
    the best prefix makes no mistake."""
    best = max(correct)
    floor = best - np.sqrt(best * (total - best) / total)
    return next(size for size, count in enumerate(correct, 1) if count >= floor)


def best_prefix(scorer, ranking, method, cut=shortest_best):
    """The prefix of ``ranking`` that ``cut`` picks from the inner counts of every prefix.

    Parameters
    ----------
    scorer : Scorer
    ranking : ndarray of int
        Genes, best first (at least one).
    method : str
        The rule's name, recorded in the result.
    cut : callable, default :func:`shortest_best`
        ``cut(correct, total) -> size``: ``correct`` the list of the prefixes' inner counts.

    Returns
    -------
    Refined
        ``removed`` empty (the genes are chosen, not removed), with the kept prefix's inner
        count.
    """
    scores = prefix_scores(scorer, ranking)
    size = cut([score.correct for score in scores], scores[0].total)
    mask = np.zeros(scorer.n_genes, dtype=bool)
    mask[ranking[:size]] = True
    return Refined(method, mask, int(scores[size - 1].correct), int(scores[size - 1].total),
                   np.zeros(0, dtype=np.int64))


def prefix_scores(scorer, ranking):
    """The inner score of every prefix of ``ranking``: element ``i`` for its ``i + 1``
    first genes, scored one gene at a time on a cached state (each Score equal to a full
    evaluation of the prefix, as the scorer's protocol guarantees)."""
    scores = []
    state = scorer.new_state(np.zeros(scorer.n_genes, dtype=bool))
    for gene in np.asarray(ranking, dtype=np.int64):
        flip = np.array([gene])
        scores.append(scorer.score_flip(state, flip))
        scorer.apply_flip(state, flip)
    return scores

