"""Single-gene wrapper ranking (Xue, Zhang & Browne 2012, Algorithm 1 lines 4-10).

Used by SFR and by FSIPSO's sub-spaces (Li, Xue & Zhang, Sec. III-B): every gene alone is
scored by the k-NN cross-validation accuracy of the run's fitness engine, and genes are sorted
by decreasing accuracy, ties by increasing gene index (a stable, rank-independent order).
"""

import numpy as np


def single_gene_accuracies(fitness, genes):
    """Cross-validation accuracy of each gene alone, ndarray of shape (len(genes),).

    The one place that scores single genes, so that a parallel run can split ``genes``.
    """
    accuracies = np.empty(len(genes))
    mask = np.zeros(fitness.n_genes, dtype=bool)
    for j, gene in enumerate(genes):
        mask[gene] = True
        accuracies[j] = fitness.score(mask).accuracy
        mask[gene] = False
    return accuracies


def rank_genes(accuracies):
    """Gene indices by decreasing accuracy, ties by increasing index, ndarray of int."""
    return np.argsort(-np.asarray(accuracies, dtype=float), kind="stable")
