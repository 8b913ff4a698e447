"""Compiled move of a cached state: its distances updated and its rows decided in one pass.

A particle's subset is scored from its previous one (:mod:`hpcswarm.fitness.moves`) by
adding the change of the flipped genes to the cached distances (Tran, Xue, Zhang and Nguyen
2016, Sect. 3.2: the squared differences over the genes that enter, less those over the
genes that leave) and deciding every held-out row's k nearest neighbours. Done by whole-matrix
numpy operations this passes over the state (8 bytes a row and sample) several times, the
product, the sum, its write back, the decision, and those passes are bound by memory, not
by the multiply-adds. Here one compiled call (numba) walks the rows in blocks: the change
of a block is one BLAS product of the flipped genes into a buffer that stays in cache, it
is added into the state's rows, and each row is decided while it is in cache, so the
state is read and written once per move.

The change of ``dist2[i, j]`` is ``c[i, j] = P[i, j] + d_j + d_i`` with
``P[i, j] = sum_g s_g x_gi x_gj`` (``s_g = 2`` for a gene that leaves, ``-2`` for one that
enters) and ``d`` the change of the squared norms. The product of F terms errs by at most
``gamma_F`` times ``sum_g |s_g x_gi x_gj| <= m_i + m_j`` (``m`` the squared norms over the
flipped genes), ``d`` by ``gamma_F m``, and the two sums of terms of absolute sum at most
``2 (m_i + m_j)`` by ``4 u`` times that: about ``(2 F + 5) u (m_i + m_j)``, within the
``(4 F + 16) u (m_i + m_j)`` that the drift bound of a state allows for a flip
(:func:`~hpcswarm.fitness.incremental.flip_drift`), as :func:`~hpcswarm.fitness.distances.flip_gram`'s.

Where the rows are every sample (leave-one-out and n-fold, unsharded), the change is
symmetric: each block of rows computes the product of its columns from its own first
sample on (half the multiply-adds of the whole product) and adds each value at ``[i, j]``
and at ``[j, i]``; a block's rows are whole once the blocks before it have written their
columns, and are decided then.

A row is decided as :func:`~hpcswarm.fitness.knn.knn_predict` decides it: its k smallest
distances (the first on equal values), ``b`` the k-th of them, and every column within
``b + 2 (slack_i + max slack)``; when exactly k columns are, they are the neighbours and vote
(ties to the smallest class code), otherwise the row is reported unsettled, for the caller
to decide it from exact distances. ``tests/test_fitness_move_kernel.py`` checks every count
against full evaluations and scikit-learn.
"""

import numpy as np

from hpcswarm.fitness.compiled import AVAILABLE, Kernel

__all__ = ["AVAILABLE", "MOVE_BLOCK_BYTES", "move_block_rows", "moved"]

MOVE_BLOCK_BYTES = 2**20
"""Bytes of the change of one block of rows (the product's buffer): small enough to stay in
a core's L2 cache beside the block's rows while they are summed and decided, large enough
that the product of a block runs near the speed of one of all rows."""

SYMMETRIC_FLIPS = 96
"""Flipped genes from which a move of every sample's rows takes the symmetric change: its
half product saves more than its mirror costs. Measured (1,000 samples, 100 states of 8 MB,
one thread, 2026-12-06, the 2-core VM at load 2 to 4): per move, the symmetric change and
the whole one took 2.9 and 1.5 ms at 2 genes, 4.6 and 3.9 ms at 60, 5.8 and 6.6 ms at 120,
9.0 and 12.4 ms at 240."""

MIRROR_TILE = 16
"""Rows of the symmetric change's mirror written together: the mirror writes down columns,
a row per value, so a tile of rows is kept in the L1 cache (and the pages in the TLB) while
the block's values go into it."""

MIN_BLOCK_ROWS = 16
"""Fewest rows per block: the product reads every flipped gene's values once per block."""


def move_block_rows(n_samples):
    """Rows of one block of a move of rows of ``n_samples`` distances."""
    return max(MIN_BLOCK_ROWS, MOVE_BLOCK_BYTES // (8 * max(1, n_samples)))


def _decide(row, i, r, k, slack, widest, codes, smallest, nearest, second, values, columns,
            votes, unsettled, tally, counts):
    """Decide row ``r`` of the state (sample ``i``): count a correct prediction in
    ``counts[tally[i]]``, or mark the row unsettled. For k = 1 the row's two smallest values
    and the column of the first (``smallest``, ``second``, ``nearest`` at ``r``) decide it
    without reading the row: its near set is that column alone exactly when the second
    exceeds the limit. For k > 1 the k smallest are found here, and the near set counted."""
    if k == 1:
        if second[r] <= smallest[r] + 2.0 * (slack[i] + widest):
            unsettled[r] = True
        elif codes[nearest[r]] == codes[i]:
            counts[tally[i]] += 1
        return
    for t in range(k):
        values[t] = np.inf
        columns[t] = 0
    for j in range(row.size):
        value = row[j]
        if value < values[k - 1]:
            t = k - 1
            while t > 0 and value < values[t - 1]:
                values[t] = values[t - 1]
                columns[t] = columns[t - 1]
                t -= 1
            values[t] = value
            columns[t] = j
    limit = values[k - 1] + 2.0 * (slack[i] + widest)
    near = 0
    for j in range(row.size):
        if row[j] <= limit:
            near += 1
    if near != k:
        unsettled[r] = True
        return
    votes[:] = 0
    for t in range(k):
        votes[codes[columns[t]]] += 1
    if np.argmax(votes) == codes[i]:  # the first largest: ties to the smallest class code
        counts[tally[i]] += 1


def _added(row, part, deltas, d_i):
    """``row += (part + deltas) + d_i`` element by element; the two smallest values of the
    sum and the first column of the smallest."""
    low, column, next_low = np.inf, row.size, np.inf
    for j in range(row.size):
        value = row[j] + ((part[j] + deltas[j]) + d_i)
        row[j] = value
        if value < low:
            next_low = low
            low, column = value, j
        elif value < next_low:
            next_low = value
    return low, column, next_low


def _moved_rows(change, delta, dist2, start, rows, k, codes, slack, widest, smallest,
                nearest, second, unsettled, tally, counts):
    """Add ``change`` (the product part of the change of the rows ``start:`` of ``dist2``, as
    many as it has) to those rows and decide each of them."""
    values = np.empty(k)
    columns = np.empty(k, dtype=np.int64)
    votes = np.zeros(codes.max() + 1, dtype=np.int64)
    for b in range(change.shape[0]):
        r = start + b
        i = rows[r]
        d_i = delta[i]
        row = dist2[r]
        smallest[r], nearest[r], second[r] = _added(row, change[b], delta, d_i)
        _decide(row, i, r, k, slack, widest, codes, smallest, nearest, second, values,
                columns, votes, unsettled, tally, counts)


def _moved_square(change, delta, dist2, start, k, codes, slack, widest, smallest, nearest,
                  second, unsettled, tally, counts):
    """:func:`_moved_rows` where the rows are every sample (``dist2`` of shape (n, n)):
    ``change`` holds the block's columns from ``start`` on, added at ``[i, j]`` and at
    ``[j, i]``; the block's rows, then whole, are decided.

    Each row's two smallest values and the first column of the smallest are kept across the
    blocks (``smallest``, ``second``, ``nearest``): its columns come in two runs, before the
    block's first sample (the mirrors of earlier blocks and of this one) and from the
    sample on, so an equal value keeps the lower column explicitly."""
    size, width = change.shape
    for first in range(1, width, MIRROR_TILE):  # the mirror, column i of the rows j > i,
        last = min(width, first + MIRROR_TILE)  # a tile of rows at a time (in L1)
        for b in range(size):
            d_i = delta[start + b]
            part = change[b]
            for c in range(max(first, b + 1), last):
                dist2[start + c, start + b] += (part[c] + delta[start + c]) + d_i
        for c in range(first, last):  # the values just written, in column order
            j = start + c
            row = dist2[j]
            low, column, next_low = smallest[j], nearest[j], second[j]
            for b in range(min(c, size)):
                value = row[start + b]
                if value < low:
                    next_low = low
                    low, column = value, start + b
                elif value < next_low:
                    next_low = value
            smallest[j], nearest[j], second[j] = low, column, next_low
    for b in range(size):  # the rows of the block, from their diagonal on
        i = start + b
        low, column, next_low = _added(dist2[i, i:], change[b, b:], delta[i:], delta[i])
        column += i
        # merge with the columns before ``i`` (lower, so first on an equal value)
        if low < smallest[i]:
            second[i] = min(smallest[i], next_low)
            smallest[i], nearest[i] = low, column
        else:
            second[i] = min(second[i], low)
    values = np.empty(k)
    columns = np.empty(k, dtype=np.int64)
    votes = np.zeros(codes.max() + 1, dtype=np.int64)
    for i in range(start, start + size):
        _decide(dist2[i], i, i, k, slack, widest, codes, smallest, nearest, second, values,
                columns, votes, unsettled, tally, counts)


_decide_kernel = Kernel(_decide, inline="always")
_added_kernel = Kernel(_added, inline="always")
_rows_kernel = Kernel(_moved_rows, calls={"_decide": _decide_kernel, "_added": _added_kernel})
_square_kernel = Kernel(_moved_square, calls={"_decide": _decide_kernel, "_added": _added_kernel})


def moved(columns, signed, delta, dist2, rows, k, codes, slack, tally, counts, buffer):
    """Add the change of a flip to ``dist2`` and decide every row, a block of rows at a time.

    Parameters
    ----------
    columns, signed : ndarray of shape (n_samples, F)
        C-contiguous values of the flipped genes of every sample, and those times ``s_g``
        (2 for a gene that leaves, -2 for one that enters).
    delta : ndarray of shape (n_samples,)
        Change of every sample's squared norm.
    dist2 : ndarray of shape (n_rows, n_samples)
        The state's distances, updated in place.
    rows : ndarray of int64 of shape (n_rows,)
        Sample position of each row of ``dist2``.
    k : int
    codes, tally : ndarray of int64 of shape (n_samples,)
        Class code of every sample; the tally a correct prediction of it is counted in.
    slack : ndarray of shape (n_samples,)
        The new subset's bound (:func:`~hpcswarm.fitness.incremental.slack_bound`).
    counts : ndarray of int64 of shape (n_tallies,)
        The correct predictions of the rows decided here are added to it.
    buffer : ndarray of float64
        At least ``move_block_rows(n_samples) * n_samples`` values, reused.

    Returns
    -------
    ndarray of bool of shape (n_rows,)
        The rows left open by the bound, to decide from exact distances.
    """
    n_rows, n = dist2.shape
    block = move_block_rows(n)
    widest = slack.max()
    unsettled = np.zeros(n_rows, dtype=np.bool_)
    smallest = np.full(n_rows, np.inf)  # each row's two smallest distances, the first's column
    second = np.full(n_rows, np.inf)
    nearest = np.zeros(n_rows, dtype=np.int64)
    if n_rows == n and columns.shape[1] >= SYMMETRIC_FLIPS:  # every sample a row, in order
        for start in range(0, n, block):
            stop = min(n, start + block)
            change = buffer[:(stop - start) * (n - start)].reshape(stop - start, n - start)
            np.matmul(columns[start:stop], signed[start:].T, out=change)
            _square_kernel(change, delta, dist2, start, k, codes, slack, widest, smallest,
                           nearest, second, unsettled, tally, counts)
        return unsettled
    row_columns = columns if n_rows == n else columns[rows]
    for start in range(0, n_rows, block):
        stop = min(n_rows, start + block)
        change = buffer[:(stop - start) * n].reshape(stop - start, n)
        np.matmul(row_columns[start:stop], signed.T, out=change)
        _rows_kernel(change, delta, dist2, start, rows, k, codes, slack, widest, smallest,
                     nearest, second, unsettled, tally, counts)
    return unsettled
