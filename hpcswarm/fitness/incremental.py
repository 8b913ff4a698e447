"""Cached distance state of one gene subset, updated by flipping a few genes.

The fast fitness evaluation of PSO-LSRG (Tran, Xue, Zhang and Nguyen 2016, Sect. 3.2): keep
the squared distances of every pair of samples over the current subset; a subset that
differs by F flipped genes gets its distances by adding the squared differences of the
genes that enter and subtracting those of the genes that leave, which costs
O(n_samples^2 F) instead of O(n_samples^2 |S|). Any subset close to a cached one can use it,
not only the local search on pbest.

Additions and subtractions drift from the exact sums; the state carries a per-sample bound
of that drift so that the k-NN kernel refines every decision the drift could change (see
:mod:`hpcswarm.fitness.distances`).

The distances are those of the evaluator's held-out rows (all of them, or one sample shard's
share) to every sample. Memory per state: the (n_rows, n_samples) float64 distance matrix, two
float64 vectors of n_samples and the boolean mask of n_genes, i.e. ``8 n_rows n + 16 n + D``
bytes (about 0.34 MB for 203 samples x 12600 genes under leave-one-out; 800 MB for 10,000
samples, 400 MB on each of two shards). Scoring a flip reads the matrix once, a block of rows
at a time; accepting it updates the matrix in place: no second matrix is ever made.
"""

from dataclasses import dataclass

import numpy as np

from hpcswarm.fitness.distances import UNIT_ROUNDOFF, gram_bound_factor


WHOLE_BLOCK_VALUES = 2**17
"""Values of the lower triangle :meth:`DistanceState.whole` writes per block of rows."""


def state_bytes(n_rows, n_samples, n_genes):
    """Bytes of one :class:`DistanceState` of ``n_rows`` held-out rows: its distance matrix,
    ``sq`` and ``drift``, and its mask, ``8 n_rows n_samples + 16 n_samples + n_genes``."""
    return 8 * n_rows * n_samples + 16 * n_samples + n_genes


@dataclass(eq=False)
class DistanceState:
    """Squared distances of the evaluator's rows to every sample over the genes of ``mask``.

    Attributes
    ----------
    mask : ndarray of bool of shape (n_genes,)
        The subset this state describes (owned by the state; do not modify).
    dist2 : ndarray of shape (n_rows, n_samples)
        Approximate squared distances over the subset from each held-out row the evaluator
        decides (:class:`~hpcswarm.fitness.rowblocks.HeldOutRows`) to every sample, ``inf``
        on the row's own fold, which updates keep ``inf``.
    sq : ndarray of shape (n_samples,)
        Approximate squared norms of the samples over the subset.
    drift : ndarray of shape (n_samples,)
        Bound on the error of ``dist2`` against the true distances:
        ``|dist2[r, j] - true[r, j]| <= drift[sample of r] + drift[j]``.
    n_selected : int
        Number of genes in the subset.
    upper : bool
        Only the upper triangle of ``dist2`` is current (its rows are every sample, in
        order, and the distance of ``i`` to ``j`` is at ``[min(i, j), max(i, j)]``): a move
        of such a state writes each pair once (:mod:`hpcswarm.fitness.move_kernel`).
        :meth:`whole` makes the lower triangle current again, for the readers of whole rows.
    """

    mask: np.ndarray
    dist2: np.ndarray
    sq: np.ndarray
    drift: np.ndarray
    n_selected: int
    upper: bool = False

    def whole(self):
        """Make every row of ``dist2`` current: the upper triangle copied into the lower
        one, a block of rows at a time (a no-op unless :attr:`upper`)."""
        if not self.upper:
            return
        dist2 = self.dist2
        n = dist2.shape[0]
        step = max(1, WHOLE_BLOCK_VALUES // max(1, n))
        for start in range(0, n, step):
            stop = min(n, start + step)
            dist2[start:stop, :start] = dist2[:start, start:stop].T
            square = dist2[start:stop, start:stop]
            lower = np.tril_indices(stop - start, -1)
            square[lower] = square.T[lower]
        self.upper = False

    def row(self, r):
        """Row ``r`` of the distances, a new array (read from the upper triangle where
        only it is current)."""
        if not self.upper:
            return self.dist2[r].copy()
        return np.concatenate([self.dist2[:r, r], self.dist2[r, r:]])

    def slack(self):
        """Per-sample bound on ``|dist2 - exact reference|`` (drift plus the reference's error)."""
        return slack_bound(self.sq, self.drift, self.n_selected)


def slack_bound(sq, drift, n_selected):
    """Per-sample bound on ``|dist2 - exact reference|`` of a state's ``sq`` and ``drift``.

    The drift plus the reference's own error over ``n_selected`` genes
    (:func:`~hpcswarm.fitness.distances.gram_bound_factor`), on squared norms of at most
    ``|sq| + drift``. Broadcasts: one row per candidate subset is allowed; any array
    module's arrays (the built-in ``abs``, numpy's or CuPy's own).
    """
    return drift + 0.5 * gram_bound_factor(n_selected) * (abs(sq) + drift)


def flip_drift(drift, sq, magnitude, n_flipped):
    """Drift bound after flipping ``n_flipped`` genes: ``|dist2 - true| <= drift[i] + drift[j]``.

    The old drift, the error of the update (at most ``0.5 * gram_bound_factor(n_flipped)``
    times the squared norms ``magnitude`` over the flipped genes, see
    :func:`~hpcswarm.fitness.distances.flip_terms`) and the rounding of the sum
    and of the norms, a relative ``u`` on values bounded by ``|sq| + drift`` (doubled twice
    for safety). ``sq`` is the new squared norms; broadcasts like :func:`slack_bound`.
    """
    return (drift + 0.5 * gram_bound_factor(n_flipped) * magnitude
            + 4.0 * UNIT_ROUNDOFF * (abs(sq) + drift))
