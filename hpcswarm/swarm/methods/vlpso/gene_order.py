"""VLPSO's gene order, and the class statistics of one gene it can be built from.

VLPSO searches prefixes of one order of the genes (Tran, Xue & Zhang 2019, Sec. III-A): a
particle of length ``L`` holds positions for the first ``L`` genes of the order only, each
division's first particle starts with all of them selected, and a length change cuts the
longest particles to the best division's length. Which genes come first decides which genes
the swarm can keep at all. ``gene_order`` (:data:`GENE_ORDERS`) chooses the order:

``"su"``
    decreasing symmetric uncertainty with the class on MDL-discretised values, the paper's
    (:mod:`hpcswarm.swarm.methods.vlpso.symmetric_uncertainty`).
``"welch-rr"``
    for each class, Welch's statistic of its samples against the others' (:func:`one_vs_rest`),
    the classes' rankings taken round robin (Forman 2004, "A pitfall and solution in
    multi-class feature selection for text classification", ICML; :func:`balanced_ranking`):
    each class in turn takes its best gene not taken yet, so a class of two samples has its
    genes near the front as a large class does.
``"f"``
    decreasing one-way ANOVA F statistic of the gene over the classes (:func:`anova_f`; the
    score of scikit-learn's ``SelectKBest(f_classif)``), an undefined F last.

Ties go to the lower gene index in every order. Each statistic of a gene is a function of
that gene's training values alone, computed row by row in one fixed order; the genes are
split in contiguous blocks over the ranks and the statistics allgathered, so every rank ends
with the order of a serial run whatever the number of ranks, sample shards or devices (the
order is computed from the training samples on the CPU before the search).
"""

import numpy as np

from hpcswarm.comm import as_comm, block_counts, block_range
from hpcswarm.fitness import GeneMajor
from hpcswarm.swarm.methods.vlpso.symmetric_uncertainty import relevance_order, relevance_scores

GENE_ORDERS = ("su", "welch-rr", "f")
"""The names of :func:`gene_order`'s orders."""

BLOCK_GENES = 128
"""Genes read per block when computing the statistics (bounds the temporary memory: a block
and its few temporaries stay small beside the matrix, also where the default signature's
refinement ranks every gene after the search; the statistics do not depend on it)."""


def _scaled_blocks(data, genes):
    """``(columns, rows)`` per block of ``genes``: the places of the block in ``genes`` and
    the block's training values, each gene divided by its largest absolute value (the
    statistics are unchanged by a gene's scale, and no square overflows)."""
    for start in range(0, genes.size, BLOCK_GENES):
        columns = np.arange(start, min(start + BLOCK_GENES, genes.size))
        block = data.take(genes[columns])
        largest = np.abs(block).max(axis=1, keepdims=True)
        block /= np.where(largest > 0, largest, 1.0)
        yield columns, block


def one_vs_rest(data, y, genes=None):
    """Welch's statistic of every gene (or of ``genes``) for every class against the others.

    For class ``c`` and gene ``g``, ``|m_c - m_r| / sqrt(s_c^2 / n_c + s_r^2 / n_r)``: the
    means, sample variances and sizes of the class's training samples and of the others'. A
    class of one sample contributes no variance term (its sample is its mean); a gene with no
    spread in either group scores 0.

    Parameters
    ----------
    data : GeneMajor or ndarray of shape (n_samples, n_genes)
        The training samples.
    y : ndarray of shape (n_samples,)
        Class codes, at least two classes.
    genes : ndarray of int, optional
        The genes to score (default: all); each gene's statistic depends on that gene alone.

    Returns
    -------
    ndarray of float64 of shape (n_classes, n_scored)
        Row ``c`` for the ``c``-th class of ``numpy.unique(y)``, column ``j`` for the
        ``j``-th scored gene; 0 where neither group has any spread, and everywhere when
        there is one class (no others to compare with).
    """
    data = GeneMajor.of(data)
    y = np.asarray(y)
    genes = np.arange(data.n_genes) if genes is None else np.asarray(genes, dtype=np.int64)
    members = [y == code for code in np.unique(y)]
    statistics = np.zeros((len(members), genes.size))
    if len(members) < 2:
        return statistics
    for columns, block in _scaled_blocks(data, genes):
        for row, inside in enumerate(members):
            statistics[row, columns] = _welch(block[:, inside], block[:, ~inside])
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


def anova_f(data, y, genes=None):
    """The one-way ANOVA F statistic of every gene (or of ``genes``) over the classes.

    ``F = (SS_between / (C - 1)) / (SS_within / (N - C))`` with ``SS_between`` the sum over
    the classes of ``n_c (m_c - m)^2`` and ``SS_within`` the sum of the squared deviations of
    the samples from their class's mean (the statistic of scikit-learn's ``f_classif``).

    Parameters
    ----------
    data : GeneMajor or ndarray of shape (n_samples, n_genes)
    y : ndarray of shape (n_samples,)
    genes : ndarray of int, optional

    Returns
    -------
    ndarray of float64 of shape (n_scored,)
        ``inf`` where the classes differ and no class has any spread; NaN where the
        statistic is undefined (no spread at all, one class, or a sample per class).
    """
    data = GeneMajor.of(data)
    y = np.asarray(y)
    genes = np.arange(data.n_genes) if genes is None else np.asarray(genes, dtype=np.int64)
    members = [y == code for code in np.unique(y)]
    n_samples, n_classes = y.size, len(members)
    f_values = np.full(genes.size, np.nan)
    if n_classes < 2 or n_samples <= n_classes:
        return f_values
    for columns, block in _scaled_blocks(data, genes):
        overall = block.mean(axis=1)
        between, within = np.zeros(columns.size), np.zeros(columns.size)
        for inside in members:
            group = block[:, inside]
            mean = group.mean(axis=1)
            between += inside.sum() * (mean - overall) ** 2
            within += ((group - mean[:, None]) ** 2).sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            f_values[columns] = ((between / (n_classes - 1))
                                 / (within / (n_samples - n_classes)))
    return f_values


def _gathered(statistic, data, codes, comm):
    """``statistic(data, codes, genes)`` of every gene, each rank computing a contiguous block
    of the genes, allgathered (genes on the last axis)."""
    n_genes = data.n_genes
    start, stop = block_range(n_genes, comm.size, comm.rank)
    local = np.atleast_2d(statistic(data, codes, np.arange(start, stop)))
    rows = comm.allgatherv(np.ascontiguousarray(local.T),
                           counts=block_counts(n_genes, comm.size))
    return rows.T


def gene_order(name, data, codes, comm=None, table=None):
    """The genes of ``data`` in the order ``name`` (one of :data:`GENE_ORDERS`).

    Parameters
    ----------
    name : str
    data : GeneMajor
        The training samples (the fitness engine's, ``scorer.data``).
    codes : ndarray of int of shape (n_samples,)
        Class codes.
    comm : Comm, optional
        Every rank gets the same order, each statistic computed as in a serial run.
    table : GeneTable, optional
        VLPSO's local-search table, for ``"su"`` only
        (:func:`~hpcswarm.swarm.methods.vlpso.symmetric_uncertainty.relevance_scores`).

    Returns
    -------
    ndarray of int64 of shape (n_genes,)
    """
    comm = as_comm(comm)
    data = GeneMajor.of(data)
    if name == "su":
        scores = relevance_scores(data, codes, np.arange(data.n_genes), comm, table)
        return relevance_order(scores).astype(np.int64)
    if name == "welch-rr":
        statistics = _gathered(one_vs_rest, data, codes, comm)
        return balanced_ranking(statistics, data.n_genes)
    if name == "f":
        f_values = _gathered(anova_f, data, codes, comm)[0]
        return np.argsort(-np.nan_to_num(f_values, nan=-np.inf), kind="stable")
    raise ValueError(f"unknown gene order {name!r}; expected one of {', '.join(GENE_ORDERS)}")
