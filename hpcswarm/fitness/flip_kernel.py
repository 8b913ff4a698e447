"""Compiled 1-NN decision of a block of multi-gene flips: one scan per try, no temporaries.

The numpy path of :mod:`hpcswarm.fitness.multi_flips` makes a try's distances with one BLAS
product and then passes about ten times over its (n_samples, n_samples) distances (the
update, the minima, the near sets, the vote), each pass a numpy call: at microarray sizes
that costs more than the arithmetic. Here the signed Gram matrices
``G_b = sum_g s_g x_g x_g^T`` of a block of tries come from one batched single-precision
BLAS product, and a compiled scan (numba) makes each row ``r`` (sample ``i``) of each
try's distances ``dist2[r, j] + d_i + d_j - 2 G_b[i, j]`` (in double precision), its
nearest column, its near set and its vote.

Measured on SRBCT (83 samples, 46 flipped genes, one thread, 2026-11-26): numpy path about
80 µs of CPU per try, this kernel about 30 µs (of which 7 µs the float32 product, 14 µs
in float64); see ``benchmarks/bench_search.py``.

Only the usual case of the papers is compiled: k = 1 (any validation scheme and sample
shard: each row's own fold is ``inf`` in the state's distances, see ``KnnEvaluator``).
Bound and decision are those of :func:`~hpcswarm.fitness.multi_flips.multi_flip_distances`
and :func:`~hpcswarm.fitness.knn.knn_predict_settled`, with the single-precision Gram
sum's own bound (:func:`flip_scores_1nn`); a try whose nearest neighbour the bound leaves
open in some row is reported unsettled, for the caller to decide exactly.
``tests/test_fitness_multi_flips.py`` checks the two paths equal.
"""

import numpy as np

from hpcswarm.fitness.distances import UNIT_ROUNDOFF, gram_bound_factor

from hpcswarm.fitness.compiled import AVAILABLE, Kernel

__all__ = ["AVAILABLE", "FlipScratch", "SINGLE_RANGE", "SINGLE_ROUNDOFF", "flip_scores_1nn",
           "single_precision_safe"]

SINGLE_ROUNDOFF = np.finfo(np.float32).eps / 2
"""Unit roundoff of float32, ``2**-24``."""


class FlipScratch:
    """Buffers of a block of tries, reused from call to call (grown when a block is larger).

    Fresh arrays of a few megabytes per block would cost their page faults at every block,
    as much as the arithmetic; one evaluator keeps one of these.
    """

    def __init__(self):
        self._rows = np.empty(0)
        self._single = np.empty(0, dtype=np.float32)
        self._signed = np.empty(0, dtype=np.float32)
        self._gram = np.empty(0, dtype=np.float32)

    def rows(self, n_flips, n_flipped, n_samples):
        """A float64 buffer of shape (n_flips * n_flipped, n_samples) for the flipped genes."""
        self._rows = _grown(self._rows, n_flips * n_flipped * n_samples)
        return self._rows[:n_flips * n_flipped * n_samples].reshape(-1, n_samples)

    def single(self, n_flips, n_flipped, n_samples):
        """Two float32 buffers of shape (n_flips, n_flipped, n_samples): values, signed values."""
        size = n_flips * n_flipped * n_samples
        self._single = _grown(self._single, size)
        self._signed = _grown(self._signed, size)
        shape = (n_flips, n_flipped, n_samples)
        return self._single[:size].reshape(shape), self._signed[:size].reshape(shape)

    def gram(self, n_flips, n_rows, n_samples):
        """A float32 buffer of shape (n_flips, n_rows, n_samples)."""
        self._gram = _grown(self._gram, n_flips * n_rows * n_samples)
        return self._gram[:n_flips * n_rows * n_samples].reshape(n_flips, n_rows, n_samples)


def _grown(buffer, size):
    return buffer if buffer.size >= size else np.empty(size, dtype=buffer.dtype)


SINGLE_RANGE = (1e-15, 1e15)
"""Magnitudes of the non-zero values for which the single-precision Gram sum keeps its bound:
their products (1e-30 to 1e30) and sums of a few thousand stay normal float32 numbers."""


def single_precision_safe(data, block=1024):
    """Whether every non-zero value of ``data`` (a GeneMajor) has a magnitude in :data:`SINGLE_RANGE`."""
    low, high = SINGLE_RANGE
    for start in range(0, data.n_genes, block):
        values = np.abs(data.take(np.arange(start, min(start + block, data.n_genes))))
        if values.max() > high or np.any((values > 0) & (values < low)):
            return False
    return True


def flip_scores_1nn(state, values, leaving, n_selected, rows, codes, tally, n_tallies,
                    scratch):
    """Correct 1-NN predictions of the state's rows for ``state.mask`` with each of B gene
    sets flipped, per tally (:class:`~hpcswarm.fitness.rowblocks.HeldOutRows`).

    The Gram sums run in single precision (twice the speed of double on the same BLAS):
    values rounded to float32 err by ``u' = 2**-24`` relatively, and the sum of ``F``
    products in float32 by ``gamma_F(u')`` times the sum of their magnitudes (Higham,
    Sect. 3.1), so ``|G[i, j] - exact| <= (F + 2) u' sum_g |x_gi x_gj|`` to first order and
    a distance update errs by at most ``2 (F + 2) u' (m_i + m_j)``, ``m`` the squared norms
    over the flipped genes. The drift below uses ``0.5 * gram_bound_factor`` with ``u'``,
    ``4 (F + 4) u' m_i``: twice that, the safety margin of every bound of the engine. Values
    must lie in :data:`SINGLE_RANGE` (:func:`single_precision_safe`) so that no product or
    sum leaves the normal float32 numbers. The change of the squared norms ``d`` is the
    product's diagonal (the same bound) when every sample is a row, else summed in double
    precision; the rest (the state's distances and bounds, the update, the comparisons) is
    double precision.

    Parameters
    ----------
    state : DistanceState
        With each row's own fold at ``inf`` in ``dist2`` (n_rows, n_samples).
    values : ndarray of shape (B, n_flipped, n_samples)
        C-contiguous float64 values of the flipped genes of each try.
    leaving : ndarray of bool of shape (B, n_flipped)
    n_selected : ndarray of int64 of shape (B,)
        Genes of each try's subset.
    rows : ndarray of int64 of shape (n_rows,)
        Sample position of each row of ``state.dist2``.
    codes : ndarray of int64 of shape (n_samples,)
        Class codes of the samples.
    tally : ndarray of int64 of shape (n_samples,)
        The tally a correct prediction of each sample is counted in.
    n_tallies : int
    scratch : FlipScratch

    Returns
    -------
    correct : ndarray of int64 of shape (B, n_tallies)
        Valid where ``settled``.
    settled : ndarray of bool of shape (B,)
    """
    n_flips, n_flipped, n_samples = values.shape
    if rows.size == 0:  # a sample shard without rows decides nothing
        return (np.zeros((n_flips, n_tallies), dtype=np.int64),
                np.ones(n_flips, dtype=np.bool_))
    magnitude = np.einsum("bgi,bgi->bi", values, values)
    signs = np.where(leaving, np.float32(-1.0), np.float32(1.0))
    single, signed = scratch.single(n_flips, n_flipped, n_samples)
    np.copyto(single, values, casting="same_kind")
    np.multiply(single, signs[:, :, None], out=signed)
    if rows.size == n_samples:  # every sample is a row (leave-one-out, n-fold, unsharded)
        left = single
    elif rows[-1] - rows[0] + 1 == rows.size:  # a contiguous shard
        left = single[:, :, rows[0]:rows[-1] + 1]
    else:
        left = single[:, :, rows]
    gram = np.matmul(left.transpose(0, 2, 1), signed,
                     out=scratch.gram(n_flips, rows.size, n_samples))
    if rows.size == n_samples:  # the change of the squared norms: the product's diagonal
        delta = np.diagonal(gram, axis1=1, axis2=2).astype(np.float64)
    else:  # some samples are no row: summed apart, in double precision
        delta = np.einsum("bgi,bgi->bi", values, values * signs[:, :, None])
    correct = np.zeros((n_flips, n_tallies), dtype=np.int64)
    settled = np.zeros(n_flips, dtype=np.bool_)
    _kernel(gram, delta, magnitude, state.dist2, state.sq, state.drift, rows, codes, tally,
            0.5 * gram_bound_factor(n_flipped) * SINGLE_ROUNDOFF / UNIT_ROUNDOFF,
            0.5 * gram_bound_factor(n_selected), correct, settled)
    return correct, settled


def _scores(gram, delta, magnitude, base, sq, drift, rows, codes, tally, half_flip_factor,
            half_size_factor, correct, settled):
    n_flips, n_rows, n = gram.shape
    slack = np.empty(n)
    row = np.empty(n)
    for b in range(n_flips):
        widest = 0.0
        for i in range(n):
            new_sq = sq[i] + delta[b, i]
            new_drift = (drift[i] + half_flip_factor * magnitude[b, i]
                         + 4.0 * UNIT_ROUNDOFF * (abs(new_sq) + drift[i]))
            slack[i] = new_drift + half_size_factor[b] * (abs(new_sq) + new_drift)
            widest = max(widest, slack[i])
        settled[b] = True
        for r in range(n_rows):
            i = rows[r]
            nearest = 0
            smallest = np.inf
            for j in range(n):
                value = ((-2.0 * np.float64(gram[b, r, j]) + delta[b, i]) + delta[b, j]) \
                    + base[r, j]
                row[j] = value
                if value < smallest:
                    smallest = value
                    nearest = j
            limit = smallest + 2.0 * (slack[i] + widest)
            near = 0
            for j in range(n):
                if row[j] <= limit:
                    near += 1
            if near != 1:
                settled[b] = False
                break
            if codes[nearest] == codes[i]:
                correct[b, tally[i]] += 1


_kernel = Kernel(_scores)
