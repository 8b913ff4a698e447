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

Memory per state: the (n_samples, n_samples) float64 distance matrix, two float64 vectors of
n_samples and the boolean mask of n_genes, i.e. ``8 n^2 + 16 n + D`` bytes (about 0.34 MB for
203 samples x 12600 genes), twice that while the last scored flip is kept for ``apply_flip``.
"""

from dataclasses import dataclass

import numpy as np

from hpcswarm.fitness.distances import (UNIT_ROUNDOFF, flipped_sq_distances, gram_bound_factor,
                                        gram_sq_distances)


@dataclass(eq=False)
class DistanceState:
    """Squared distances of all sample pairs over the genes of ``mask``.

    Attributes
    ----------
    mask : ndarray of bool of shape (n_genes,)
        The subset this state describes (owned by the state; do not modify).
    dist2 : ndarray of shape (n_samples, n_samples)
        Approximate squared distances over the subset; the evaluator may set to ``inf`` the
        pairs its validation never compares (same fold), which updates keep ``inf``.
    sq : ndarray of shape (n_samples,)
        Approximate squared norms of the samples over the subset.
    drift : ndarray of shape (n_samples,)
        Bound on the error of ``dist2`` against the true distances:
        ``|dist2[i, j] - true[i, j]| <= drift[i] + drift[j]``.
    n_selected : int
        Number of genes in the subset.
    pending : tuple, FlipBlock or None
        ``(flipped genes as bytes, DistanceState)`` of the last flip scored from this state,
        or the last block of flips (:class:`~hpcswarm.fitness.multi_flips.FlipBlock`), so
        that accepting one (``apply_flip``) costs nothing more.
    """

    mask: np.ndarray
    dist2: np.ndarray
    sq: np.ndarray
    drift: np.ndarray
    n_selected: int
    pending: tuple = None

    def slack(self):
        """Per-sample bound on ``|dist2 - exact reference|`` (drift plus the reference's error)."""
        return slack_bound(self.sq, self.drift, self.n_selected)


def slack_bound(sq, drift, n_selected):
    """Per-sample bound on ``|dist2 - exact reference|`` of a state's ``sq`` and ``drift``.

    The drift plus the reference's own error over ``n_selected`` genes
    (:func:`~hpcswarm.fitness.distances.gram_bound_factor`), on squared norms of at most
    ``|sq| + drift``. Broadcasts: one row per candidate subset is allowed.
    """
    return drift + 0.5 * gram_bound_factor(n_selected) * (np.abs(sq) + drift)


def flip_drift(drift, sq, magnitude, n_flipped):
    """Drift bound after flipping ``n_flipped`` genes: ``|dist2 - true| <= drift[i] + drift[j]``.

    The old drift, the error of the update (at most ``0.5 * gram_bound_factor(n_flipped)``
    times the squared norms ``magnitude`` over the flipped genes, see
    :func:`~hpcswarm.fitness.distances.flipped_sq_distances`) and the rounding of the sum
    and of the norms, a relative ``u`` on values bounded by ``|sq| + drift`` (doubled twice
    for safety). ``sq`` is the new squared norms; broadcasts like :func:`slack_bound`.
    """
    return (drift + 0.5 * gram_bound_factor(n_flipped) * magnitude
            + 4.0 * UNIT_ROUNDOFF * (np.abs(sq) + drift))


def initial_state(data, mask):
    """The state of ``mask`` from one Gram product over its genes.

    Parameters
    ----------
    data : GeneMajor
        Gene-major data (:mod:`hpcswarm.fitness.genemajor`); only the genes of ``mask`` are read.
    mask : ndarray of bool of shape (n_genes,)
    """
    genes = np.flatnonzero(mask)
    dist2, sq, _ = gram_sq_distances(data.take(genes))
    drift = 0.5 * gram_bound_factor(genes.size) * sq
    return DistanceState(mask.copy(), dist2, sq, drift, int(genes.size))


def flipped_state(data, state, genes):
    """The state of ``state.mask`` with ``genes`` flipped; ``state`` is left unchanged.

    Parameters
    ----------
    data : GeneMajor
        Gene-major data; only the flipped genes are read.
    state : DistanceState
    genes : ndarray of int of shape (n_flipped,)
        Distinct gene indices to flip.
    """
    leaving = state.mask[genes]
    dist2, delta_sq, magnitude = flipped_sq_distances(state.dist2, data.take(genes[~leaving]),
                                                      data.take(genes[leaving]))
    mask = state.mask.copy()
    mask[genes] = ~leaving
    sq = state.sq + delta_sq
    drift = flip_drift(state.drift, sq, magnitude, genes.size)
    n_removed = int(np.count_nonzero(leaving))
    return DistanceState(mask, dist2, sq, drift, state.n_selected + genes.size - 2 * n_removed)
