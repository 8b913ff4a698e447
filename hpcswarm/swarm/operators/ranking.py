"""Single-gene wrapper ranking (Xue, Zhang & Browne 2012, Algorithm 1 lines 4-10).

Used by SFR and by FSIPSO's sub-spaces (Li, Xue & Zhang, Sec. III-B): every gene alone is
scored by the k-NN cross-validation accuracy of the run's fitness engine, and genes are sorted
by decreasing accuracy, ties by increasing gene index (a stable, rank-independent order).
"""

import numpy as np

from hpcswarm.comm import as_comm, block_counts, block_range


def single_gene_accuracies(fitness, genes, comm=None):
    """Cross-validation accuracy of each gene alone, ndarray of shape (len(genes),).

    The one place that scores single genes: every gene entering the empty subset, scored in
    blocks by the batched one-gene flips (``SubsetFitness.single_flip_scores``), equal to
    a full evaluation of each one-gene subset. With a communicator of P ranks, ``genes`` is
    split in contiguous blocks (:func:`~hpcswarm.comm.block_range`), each rank scores its
    block and the accuracies are allgathered (``8 len(genes)`` bytes in all): every rank
    ends with the same array, each value computed exactly as in a serial run.
    """
    comm = as_comm(comm)
    genes = np.asarray(genes)
    start, stop = block_range(len(genes), comm.size, comm.rank)
    empty = fitness.new_state(np.zeros(fitness.n_genes, dtype=bool))
    scores = fitness.single_flip_scores(empty, genes[start:stop])
    accuracies = np.array([score.accuracy for score in scores], dtype=float)
    return comm.allgatherv(accuracies, counts=block_counts(len(genes), comm.size))


def rank_genes(accuracies):
    """Gene indices by decreasing accuracy, ties by increasing index, ndarray of int."""
    return np.argsort(-np.asarray(accuracies, dtype=float), kind="stable")
