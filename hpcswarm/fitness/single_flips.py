"""Every one-gene flip of one cached state, in blocks: distances and bounds of B candidates at once.

A greedy step (SFS, SBS, :mod:`hpcswarm.baselines.greedy`) scores every one-gene change of
the current subset. Flipped one at a time (:func:`~hpcswarm.fitness.incremental.flipped_state`)
each candidate costs a dozen numpy calls on (n_samples, n_samples) arrays, mostly call
overhead at microarray sizes; here a block of B candidates shares each call. Candidate b,
gene ``g`` entering (``+``) or leaving (``-``), has the distances of the incremental update of
Tran et al. (2016, Sect. 3.2) for one gene, ``dist2[i, j] +- (x_gi - x_gj)^2``, for all pairs
and all B candidates as one (B, n_samples, n_samples) array.

Bound: the same per-sample drift and slack as ``flipped_state`` on the same one-gene flip
(:func:`~hpcswarm.fitness.incremental.flip_drift`, ``slack_bound``). They hold here a
fortiori: the squared difference is computed directly, with a relative error of at most
``3u`` (one subtraction, one product), i.e. ``6u (x_gi^2 + x_gj^2)``, where the bound allows
the Gram form's ``20u (x_gi^2 + x_gj^2)``; the final sum with ``dist2`` is one rounding in
both. So :func:`~hpcswarm.fitness.knn.knn_predict` applied to these distances and slacks
gives the exact decision, as for a full evaluation.

The distances are those of the state's rows (the evaluator's held-out rows, or one sample
shard's share of them) to every sample: (B, n_rows, n_samples).

Memory per block: at most :data:`CANDIDATE_BYTES` bytes per candidate and distance, in all:
two float64 scratch arrays allocated once per call and reused by every block (fresh memory
for every block would cost as much in page faults as the arithmetic), then for the k-NN
decision one float64 temporary (the row limits, or the partition for k > 1) and a boolean
near mask. :func:`block_size` fits a block in
:data:`BLOCK_BYTES`.
"""

import numpy as np

from hpcswarm.fitness.incremental import flip_drift, slack_bound

BLOCK_BYTES = 8 * 2**20
"""Budget of one block of candidates (8 MiB: 36 candidates at 83 samples, 24 at 102). Small
enough to stay in cache: on a 1 MiB-L2, 32 MiB-L3 machine 4-8 MiB blocks were fastest, 2 MiB
blocks (call overhead) and 16-32 MiB blocks up to 2-3 times slower."""

CANDIDATE_BYTES = 25
"""Bytes per candidate and per distance held at once by a block, at most: 16 (two scratch
arrays) + 8 (row limits or partition) + 1 (near mask)."""


def block_size(n_rows, n_samples, budget=BLOCK_BYTES):
    """Candidates per block so that a block holds at most ``budget`` bytes (at least one)."""
    return max(1, budget // (CANDIDATE_BYTES * max(1, n_rows) * n_samples))


def new_scratch(n_candidates, n_rows, n_samples, block=None):
    """Scratch of :func:`single_flip_distances` for ``n_candidates`` flips scored in blocks.

    ``block`` (default ``block_size(n_rows, n_samples)``) bounds the candidates of a block.

    Returns
    -------
    ndarray of shape (2, B, n_rows * n_samples)
        ``B = min(n_candidates, block)`` (at least 1), the candidates of one block.
    """
    block = block_size(n_rows, n_samples) if block is None else block
    size = max(1, min(n_candidates, block))
    return np.empty((2, size, n_rows * n_samples))


def single_flip_distances(state, values, rows, leaving, scratch):
    """Distances and slacks of ``state.mask`` with each of B genes flipped alone.

    Parameters
    ----------
    state : DistanceState
        Left unchanged; its ``dist2`` holds the distances of ``rows`` to every sample.
    values : ndarray of shape (B, n_samples)
        Gene-major values of the B genes.
    rows : ndarray of int of shape (n_rows,)
        Sample positions of the state's rows.
    leaving : bool
        Whether the genes are all in ``state.mask`` (they leave) or all out of it (they enter).
    scratch : ndarray of shape (2, >= B, n_rows * n_samples)
        From :func:`new_scratch`; overwritten.

    Returns
    -------
    dist2 : ndarray of shape (B, n_rows, n_samples)
        Approximate squared distances of each candidate subset; ``inf`` where ``state.dist2``
        is. A view of ``scratch``, valid until its next use.
    slack : ndarray of shape (B, n_samples)
        ``|dist2[b, r, j] - exact reference| <= slack[b, rows[r]] + slack[b, j]``.
    """
    n_flips, n_samples = values.shape
    shape = (n_flips, rows.size, n_samples)
    dist2, other = scratch[0, :n_flips], scratch[1, :n_flips]
    # pairs flattened (r * n_samples + j), so that the arithmetic runs on contiguous operands:
    # numpy's loops over a broadcast last axis are several times slower than copies
    np.copyto(dist2.reshape(shape), values[:, rows, None])
    np.copyto(other.reshape(shape), values[:, None, :])
    dist2 -= other
    np.square(dist2, out=dist2)
    before = state.dist2.reshape(1, -1)
    squares = values * values
    if leaving:
        np.subtract(before, dist2, out=dist2)
        sq, n_selected = state.sq - squares, state.n_selected - 1
    else:
        dist2 += before
        sq, n_selected = state.sq + squares, state.n_selected + 1
    drift = flip_drift(state.drift, sq, squares, 1)
    return dist2.reshape(shape), slack_bound(sq, drift, n_selected)
