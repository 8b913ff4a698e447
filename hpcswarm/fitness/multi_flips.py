"""Many multi-gene flips of one cached state, in blocks: distances and bounds of B tries at once.

The local search of PSO-LSRG (Tran, Xue, Zhang and Nguyen 2016, Sect. 3.1-3.2) scores
100 tries per new pbest, each flipping 2% of the genes of the same subset until one is
kept. One at a time (:func:`~hpcswarm.fitness.incremental.flipped_state`) a try costs a
dozen numpy calls on (n_samples, n_samples) arrays; here a block of B tries shares each
call. Try b flips the genes ``F_b``, entering (sign ``+1``) or leaving (``-1``) the subset;
its distances are the incremental update of Tran et al. Sect. 3.2,
``dist2[i, j] + d_i + d_j - 2 G_b[i, j]`` with the signed Gram matrix
``G_b = sum_{g in F_b} s_g x_g x_g^T`` and ``d = diag(G_b)``, one batched product (BLAS per
try) for the whole block.

Bound: the same per-sample drift and slack as ``flipped_state`` for the same flip
(:func:`~hpcswarm.fitness.incremental.flip_drift`, ``slack_bound``). ``flipped_state``
computes the entering and the leaving Gram matrices apart and subtracts them; one signed
product of the same ``F`` terms errs by at most ``gamma_F`` times the sum of the absolute
products whatever the signs (Higham, Sect. 3.1), the same quantity that bounds the two
products there, so the bound of ``flipped_state`` holds here and
:func:`~hpcswarm.fitness.knn.knn_predict` gives the exact decision, as for a full
evaluation.

Memory per block: the (B, F, n_samples) values of the flipped genes twice (plain and
signed) and three float64 arrays of (B, n_samples, n_samples) at most (the distances, and
within the k-NN decision one temporary and a boolean near mask): :func:`block_size` fits
them in :data:`BLOCK_BYTES`.
"""

from dataclasses import dataclass

import numpy as np

from hpcswarm.fitness.incremental import DistanceState, flip_drift, slack_bound

BLOCK_BYTES = 8 * 2**20
"""Budget of one block of tries (8 MiB, as for the single flips: 50 tries at 83 samples)."""


def block_size(n_samples, n_flipped, budget=BLOCK_BYTES):
    """Tries per block so that a block holds at most ``budget`` bytes (at least one)."""
    per_try = 25 * n_samples * n_samples + 16 * n_flipped * n_samples
    return max(1, budget // per_try)


def multi_flip_distances(state, rows, leaving):
    """Distances, norms and bounds of ``state.mask`` with each of B gene sets flipped.

    Parameters
    ----------
    state : DistanceState
        Left unchanged.
    rows : ndarray of shape (B, n_flipped, n_samples)
        Gene-major values of the flipped genes of each try.
    leaving : ndarray of bool of shape (B, n_flipped)
        Whether each flipped gene is in ``state.mask`` (it leaves) or not (it enters).

    Returns
    -------
    dist2 : ndarray of shape (B, n_samples, n_samples)
        Approximate squared distances of each try's subset; ``inf`` where ``state.dist2`` is.
    slack : ndarray of shape (B, n_samples)
        ``|dist2[b, i, j] - exact reference| <= slack[b, i] + slack[b, j]``.
    sq, drift : ndarray of shape (B, n_samples)
        Squared norms and drift bound of each try's subset, as ``flipped_state`` gives them.
    n_selected : ndarray of int64 of shape (B,)
        Genes of each try's subset.
    """
    n_flips, n_flipped, n_samples = rows.shape
    signs = np.where(leaving, -1.0, 1.0)
    gram = np.matmul(rows.transpose(0, 2, 1), rows * signs[:, :, None])
    delta_sq = np.einsum("bii->bi", gram).copy()
    magnitude = np.einsum("bgi,bgi->bi", rows, rows)
    gram *= -2.0
    gram += delta_sq[:, :, None]
    gram += delta_sq[:, None, :]
    gram += state.dist2
    sq = state.sq + delta_sq
    drift = flip_drift(state.drift, sq, magnitude, n_flipped)
    n_selected = state.n_selected + n_flipped - 2 * np.count_nonzero(leaving, axis=1)
    return gram, slack_bound(sq, drift, n_selected[:, None]), sq, drift, n_selected


@dataclass(eq=False)
class FlipBlock:
    """The last block of tries scored from a state, so that keeping one of them is free.

    Attributes
    ----------
    flips : ndarray of int64 of shape (B, n_flipped)
    dist2, sq, drift, n_selected
        As returned by :func:`multi_flip_distances` for these tries.
    """

    flips: np.ndarray
    dist2: np.ndarray
    sq: np.ndarray
    drift: np.ndarray
    n_selected: np.ndarray

    def state_of(self, mask, genes):
        """The :class:`DistanceState` of ``mask`` with ``genes`` flipped, if a try of the block."""
        if genes.shape != self.flips.shape[1:]:
            return None
        found = np.flatnonzero((self.flips == genes).all(axis=1))
        if found.size == 0:
            return None
        b = int(found[0])
        flipped = mask.copy()
        flipped[genes] = ~flipped[genes]
        return DistanceState(flipped, self.dist2[b].copy(), self.sq[b], self.drift[b],
                             int(self.n_selected[b]))
