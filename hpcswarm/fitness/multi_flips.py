"""Many multi-gene flips of one cached state, in blocks: distances and bounds of B tries at once.

The local search of PSO-LSRG (Tran, Xue, Zhang and Nguyen 2016, Sect. 3.1-3.2) scores
100 tries per new pbest, each flipping 2% of the genes of the same subset until one is
kept. One at a time a try costs a dozen numpy calls on the state's (n_rows, n_samples)
distances; here a block of B tries shares each call. Try b flips the genes ``F_b``,
entering (sign ``+1``) or leaving (``-1``) the subset; its distances are the incremental
update of Tran et al. Sect. 3.2, ``dist2[r, j] + d_i + d_j - 2 G_b[i, j]`` (``i`` the sample
of row ``r``) with the signed Gram matrix ``G_b = sum_{g in F_b} s_g x_g x_g^T`` and
``d = diag(G_b)``, one batched product (BLAS per try) for the whole block.

Bound: the same per-sample drift and slack as a single flip of the same genes
(:func:`~hpcswarm.fitness.incremental.flip_drift`, ``slack_bound`` with
``0.5 * gram_bound_factor(F) * magnitude``): one signed product of the ``F`` terms errs by
at most ``gamma_F`` times the sum of the absolute products whatever the signs (Higham,
Sect. 3.1), and ``d`` by ``gamma_F`` times the squared norms over the flipped genes, so
:func:`~hpcswarm.fitness.knn.knn_predict` gives the exact decision, as for a full
evaluation.

The distances are those of the state's rows (the evaluator's held-out rows, or one sample
shard's share of them) to every sample: (B, n_rows, n_samples). Memory per block: the
(B, F, n_samples) values of the flipped genes twice (plain and signed) and three arrays of
(B, n_rows, n_samples) at most (the distances, and within the k-NN decision one temporary
and a boolean near mask): :func:`block_size` fits them in :data:`BLOCK_BYTES`, or says
that one try does not fit (then a try is scored a block of rows at a time).
"""

import numpy as np

from hpcswarm.fitness.incremental import flip_drift, slack_bound

BLOCK_BYTES = 8 * 2**20
"""Budget of one block of tries (8 MiB, as for the single flips: 50 tries at 83 samples)."""


def block_size(n_rows, n_samples, n_flipped, budget=BLOCK_BYTES):
    """Tries per block so that a block holds at most ``budget`` bytes; 0 when one try
    alone does not fit."""
    per_try = 25 * n_rows * n_samples + 16 * n_flipped * n_samples
    return budget // per_try


def multi_flip_distances(state, values, leaving, rows):
    """Distances and bounds of ``state.mask`` with each of B gene sets flipped.

    Parameters
    ----------
    state : DistanceState
        Left unchanged; its ``dist2`` holds the distances of ``rows`` to every sample.
    values : ndarray of shape (B, n_flipped, n_samples)
        Gene-major values of the flipped genes of each try.
    leaving : ndarray of bool of shape (B, n_flipped)
        Whether each flipped gene is in ``state.mask`` (it leaves) or not (it enters).
    rows : slice or ndarray of int
        Sample positions of the state's rows
        (:meth:`~hpcswarm.fitness.rowblocks.HeldOutRows.columns`).

    Returns
    -------
    dist2 : ndarray of shape (B, n_rows, n_samples)
        Approximate squared distances of each try's subset; ``inf`` where ``state.dist2`` is.
    slack : ndarray of shape (B, n_samples)
        ``|dist2[b, r, j] - exact reference| <= slack[b, i] + slack[b, j]``, ``i`` the
        sample of row ``r``.
    """
    n_flipped = values.shape[1]
    signed = values * np.where(leaving, -1.0, 1.0)[:, :, None]
    gram = np.matmul(values[:, :, rows].transpose(0, 2, 1), signed)
    delta_sq = np.einsum("bgi,bgi->bi", values, signed)
    magnitude = np.einsum("bgi,bgi->bi", values, values)
    gram *= -2.0
    gram += delta_sq[:, rows, None]
    gram += delta_sq[:, None, :]
    gram += state.dist2
    sq = state.sq + delta_sq
    drift = flip_drift(state.drift, sq, magnitude, n_flipped)
    n_selected = state.n_selected + n_flipped - 2 * np.count_nonzero(leaving, axis=1)
    return gram, slack_bound(sq, drift, n_selected[:, None])
