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
symmetric and so are the distances: only the upper triangle is kept (``DistanceState.upper``),
each block of rows computes the product of its columns from its own first sample on (half
the multiply-adds of the whole product) and writes each pair once, at ``[i, j]`` with
``j >= i``, half the state's values read and written. The value is offered to both rows'
k + 1 smallest as it is written, so a row is whole, and decided, once the rows before it and
its own columns have passed.

A row is decided as :func:`~hpcswarm.fitness.knn.knn_predict` decides it: its k smallest
distances (the first on equal values), ``b`` the k-th of them, and every column within
``b + 2 (slack_i + max slack)`` (exactly k of them when the (k + 1)-th smallest is beyond
that); when exactly k columns are, they are the neighbours and vote
(ties to the smallest class code), otherwise the row is reported unsettled, for the caller
to decide it from exact distances. ``tests/test_fitness_move_kernel.py`` checks every count
against full evaluations and scikit-learn.
"""

import numpy as np

from hpcswarm.fitness.compiled import AVAILABLE, Kernel

__all__ = ["AVAILABLE", "MOVE_BLOCK_BYTES", "built", "move_block_rows", "move_terms", "moved"]

MOVE_BLOCK_BYTES = 2**20
"""Bytes of the change of one block of rows (the product's buffer): small enough to stay in
a core's L2 cache beside the block's rows while they are summed and decided, large enough
that the product of a block runs near the speed of one of all rows."""

CHECK_VALUES = 64
"""Values of a row added and checked together by the symmetric move's loop without branches
(:func:`_upper_rows`)."""

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


def _upper_rows(change, delta, dist2, start, fold, in_place, k, codes, slack, widest, best,
                best_columns, worst, votes, unsettled, tally, counts):
    """The rows ``start:start + len(change)`` of ``dist2``'s upper triangle made and decided,
    where the rows are every sample (``dist2`` of shape (n, n)).

    ``change`` holds a product of the block's rows by the columns from ``start`` on: for a
    move (``fold`` None) the product part of the change, added as :func:`_moved_rows` adds
    it; for a new state (``delta`` the squared norms, ``fold`` each sample's fold) the Gram
    product, of which the Gram form is written as
    :func:`~hpcswarm.fitness.row_kernel.gram_rows_1nn` makes it, ``inf`` on the own fold
    (``in_place``: ``change`` is the block's own rows of ``dist2``; otherwise each run of
    the product is copied into the row first: the loop reads and writes one array, and
    vectorises, where read through a second name that may be the same memory it would
    keep to one value at a time).

    The value at ``[i, j]`` (``j >= i``) is also row ``j``'s value at column ``i``, so it is
    written once, at ``[i, j]``, and offered to both rows' k + 1 smallest (``best``,
    ``best_columns``, each row's sorted ascending, its largest also in ``worst``, kept
    across the blocks). A row's columns reach it in increasing order (those below it from
    the rows before it, then its own from the diagonal on), and a value displaces only
    larger ones, so the first of equal values is kept, as :func:`_decide` keeps it.

    The values of a row are made :data:`CHECK_VALUES` at a time by a loop without
    branches (vectorised), which counts those below the row's or their column's
    ``worst``; only a run with such a value is offered value by value (few are: the
    k + 1 smallest of a column change about ``2 (k + 1) ln n`` times in a pass). Each row of
    the block, then whole, is decided from its k + 1 smallest: its near set is its k
    smallest exactly when the (k + 1)-th exceeds the limit."""
    size, width = change.shape
    for b in range(size):
        i = start + b
        d_i = delta[i]
        row = dist2[i]
        part = change[b]
        if fold is None:  # the diagonal, row i's own column
            value = row[i] + ((part[b] + delta[i]) + d_i)
        else:
            value = np.inf
        row[i] = value
        if value < worst[i]:
            _offered(best, best_columns, worst, i, value, i, k)
        for first in range(b + 1, width, CHECK_VALUES):
            last = min(width, first + CHECK_VALUES)
            own = worst[i]
            below = 0
            values = row[start + first:start + last]  # slices: a loop from 0 that vectorises
            parts = part[first:last]
            deltas = delta[start + first:start + last]
            limits = worst[start + first:start + last]
            if fold is None:
                for t in range(values.size):
                    value = values[t] + ((parts[t] + deltas[t]) + d_i)
                    values[t] = value
                    below += (value < own) | (value < limits[t])
            else:
                if not in_place:
                    values[:] = parts  # the product first into the row, read there
                own_fold = fold[i]
                folds = fold[start + first:start + last]
                for t in range(values.size):
                    value = (values[t] * -2.0 + deltas[t]) + d_i
                    if folds[t] == own_fold:
                        value = np.inf
                    values[t] = value
                    below += (value < own) | (value < limits[t])
            if below:
                for c in range(first, last):
                    j = start + c
                    value = row[j]
                    if value < worst[i]:
                        _offered(best, best_columns, worst, i, value, j, k)
                    if value < worst[j]:
                        _offered(best, best_columns, worst, j, value, i, k)
        if best[i, k] <= best[i, k - 1] + 2.0 * (slack[i] + widest):
            unsettled[i] = True
            continue
        votes[:] = 0
        for t in range(k):
            votes[codes[best_columns[i, t]]] += 1
        if np.argmax(votes) == codes[i]:  # the first largest: ties to the smallest class code
            counts[tally[i]] += 1


def _offered(best, best_columns, worst, r, value, column, k):
    """``value`` at ``column`` into row ``r``'s k + 1 smallest (``value < worst[r]``, the
    largest of them), after the equal ones already there."""
    t = k
    while t > 0 and value < best[r, t - 1]:
        best[r, t] = best[r, t - 1]
        best_columns[r, t] = best_columns[r, t - 1]
        t -= 1
    best[r, t] = value
    best_columns[r, t] = column
    worst[r] = best[r, k]


def _terms(values, leaving, signed, added, removed):
    """``signed`` the flipped genes' values times ``s_g``, ``added`` and ``removed`` the
    squared norms of every sample over the genes that enter and over those that leave,
    summed gene by gene (one pass over the values)."""
    for g in range(values.shape[0]):
        row = values[g]
        out = signed[g]
        if leaving[g]:
            for i in range(row.size):
                value = row[i]
                out[i] = 2.0 * value
                removed[i] += value * value
        else:
            for i in range(row.size):
                value = row[i]
                out[i] = -2.0 * value
                added[i] += value * value


_decide_kernel = Kernel(_decide, inline="always")
_added_kernel = Kernel(_added, inline="always")
_rows_kernel = Kernel(_moved_rows, calls={"_decide": _decide_kernel, "_added": _added_kernel})
_offered_kernel = Kernel(_offered, inline="always")
_upper_kernel = Kernel(_upper_rows, calls={"_offered": _offered_kernel})
_terms_kernel = Kernel(_terms)


def moved(values, signed, delta, dist2, rows, k, codes, slack, tally, counts, buffer):
    """Add the change of a flip to ``dist2`` and decide every row, a block of rows at a time.

    Parameters
    ----------
    values, signed : ndarray of shape (F, n_samples)
        C-contiguous values of the flipped genes of every sample (gene-major, as gathered),
        and those times ``s_g`` (2 for a gene that leaves, -2 for one that enters).
    delta : ndarray of shape (n_samples,)
        Change of every sample's squared norm.
    dist2 : ndarray of shape (n_rows, n_samples)
        The state's distances, updated in place; where the rows are every sample, in order
        (``n_rows == n_samples``), only the upper triangle is read and written.
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
    if n_rows == n:  # every sample a row, in order: the upper triangle
        upper = _UpperPass(n, k, codes, slack, tally, counts)
        for start in range(0, n, block):
            stop = min(n, start + block)
            change = buffer[:(stop - start) * (n - start)].reshape(stop - start, n - start)
            np.matmul(values[:, start:stop].T, signed[:, start:], out=change)
            upper.rows(change, delta, dist2, start, None)
        return upper.unsettled
    widest = slack.max()
    unsettled = np.zeros(n_rows, dtype=np.bool_)
    smallest = np.full(n_rows, np.inf)  # each row's two smallest distances, the first's column
    second = np.full(n_rows, np.inf)
    nearest = np.zeros(n_rows, dtype=np.int64)
    row_values = values[:, rows]
    for start in range(0, n_rows, block):
        stop = min(n_rows, start + block)
        change = buffer[:(stop - start) * n].reshape(stop - start, n)
        np.matmul(row_values[:, start:stop].T, signed, out=change)
        _rows_kernel(change, delta, dist2, start, rows, k, codes, slack, widest, smallest,
                     nearest, second, unsettled, tally, counts)
    return unsettled


def built(dist2, sq, fold, k, codes, slack, tally, counts, values=None, buffer=None):
    """A new state of every sample's rows made and decided, a block of rows at a time: its
    rows of the upper triangle of ``dist2`` in the Gram form, as
    :func:`~hpcswarm.fitness.row_kernel.gram_rows_1nn` makes them, from the Gram product
    already in ``dist2`` (one symmetric product of the whole, where one block of rows holds
    every sample) or, given ``values``, from each block's product with the columns from its
    own first sample on (half the multiply-adds of the whole) made in ``buffer``.

    Parameters
    ----------
    dist2 : ndarray of shape (n_samples, n_samples)
        Memory for the state's distances (holding the Gram product when ``values`` is
        None): its upper triangle is written (``DistanceState.upper``).
    sq : ndarray of shape (n_samples,)
        The squared norms over the subset.
    fold : ndarray of int64 of shape (n_samples,)
        Each sample's fold (``inf`` where two share one).
    k, codes, slack, tally, counts
        As for :func:`moved`.
    values : ndarray of shape (n_genes_selected, n_samples), optional
        C-contiguous values of the subset's genes (gene-major, as gathered).
    buffer : ndarray of float64, optional
        With ``values``: as for :func:`moved`.

    Returns
    -------
    ndarray of bool of shape (n_samples,)
        The rows left open by the bound, to decide from exact distances.
    """
    n = dist2.shape[0]
    upper = _UpperPass(n, k, codes, slack, tally, counts)
    block = move_block_rows(n)
    for start in range(0, n, block):
        stop = min(n, start + block)
        if values is None:
            gram = dist2[start:stop, start:]
        else:
            gram = buffer[:(stop - start) * (n - start)].reshape(stop - start, n - start)
            np.matmul(values[:, start:stop].T, values[:, start:], out=gram)
        upper.rows(gram, sq, dist2, start, fold, values is None)
    return upper.unsettled


def move_terms(values, leaving):
    """What a move needs of its flipped genes' values, in one compiled pass over them.

    Parameters
    ----------
    values : ndarray of shape (F, n_samples)
        C-contiguous values of the flipped genes (gene-major, as gathered).
    leaving : ndarray of bool of shape (F,)
        Which of them leave the subset.

    Returns
    -------
    signed : ndarray of shape (F, n_samples)
        ``values`` times ``s_g`` (2 for a gene that leaves, -2 for one that enters), the
        right-hand factor of :func:`moved`'s product.
    delta_sq, magnitude : ndarray of shape (n_samples,)
        The change of every sample's squared norm and its squared norm over all the flipped
        genes (:func:`~hpcswarm.fitness.distances.flip_norms`; each summed gene by gene,
        within the same bound, :func:`~hpcswarm.fitness.incremental.flip_drift`).
    """
    n = values.shape[1]
    signed = np.empty_like(values)
    added, removed = np.zeros(n), np.zeros(n)
    _terms_kernel(values, leaving, signed, added, removed)
    return signed, added - removed, added + removed


class _UpperPass:
    """What :func:`_upper_rows` keeps across the blocks of one pass over an upper triangle."""

    def __init__(self, n, k, codes, slack, tally, counts):
        self.k, self.codes, self.slack, self.tally, self.counts = k, codes, slack, tally, counts
        self.widest = slack.max()
        self.best = np.full((n, k + 1), np.inf)
        self.best_columns = np.zeros((n, k + 1), dtype=np.int64)
        self.worst = np.full(n, np.inf)
        self.votes = np.zeros(codes.max() + 1, dtype=np.int64)
        self.unsettled = np.zeros(n, dtype=np.bool_)

    def rows(self, change, delta, dist2, start, fold, in_place=False):
        """One block of rows (:func:`_upper_rows`)."""
        _upper_kernel(change, delta, dist2, start, fold, in_place, self.k, self.codes,
                      self.slack, self.widest, self.best, self.best_columns, self.worst,
                      self.votes, self.unsettled, self.tally, self.counts)
