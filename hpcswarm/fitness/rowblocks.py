"""The held-out rows one evaluation decides, walked in blocks that stay in cache.

A k-NN validation decides every held-out sample (a *row*) from its distances to every
sample (a *column*; those of its own fold excluded). The rows are independent, so they are
decided a block at a time: a block's distances are computed into a small buffer (or read
from a cached state), its own fold's columns set to ``inf``, and its k nearest neighbours
decided, all while the block is in cache; nothing of size n_rows x n_samples is made beside
a cached state, and a cached state is read once per evaluation.

With k = 1 a block is finished and decided by one compiled scan per row
(:mod:`hpcswarm.fitness.row_kernel`: the distances, the own fold, the nearest column and
the near set while the row is in cache); the numpy path (:meth:`HeldOutRows.correct`) is the
reference, and decides the rows that scan leaves open.

The rows can also be one contiguous share of all held-out rows (a *sample shard*): an
evaluation split over S shards decides n_rows / S rows on each, reads the same columns,
and the shards' correct counts add up to the whole evaluation's (Tran et al. 2016 count
correct leave-one-out predictions; a count is a sum over rows).

A correct prediction is counted in its row's *tally*: one tally for all rows (the correct
count), or one per class of the rows' labels (the per-class counts of balanced accuracy,
Tran, Xue and Zhang 2019), so that every block, shard and path returns an int64 array of
``n_tallies`` counts that add up over blocks and shards.
"""

import numpy as np

from hpcswarm.comm import block_range
from hpcswarm.fitness.folds import NOT_HELD_OUT
from hpcswarm.fitness.knn import knn_predict
from hpcswarm.fitness.row_kernel import AVAILABLE as COMPILED_AVAILABLE
from hpcswarm.fitness.row_kernel import gram_rows_1nn, updated_rows_1nn

ROW_BLOCK_BYTES = 8 * 2**20
"""Bytes of one block of distances (8 MiB: 104 rows at 10,000 samples). Each block's product
re-reads (and BLAS re-packs) the selected genes' values of every sample, so blocks must not
be too small; a block and its temporaries should stay in the L3 cache while it is decided.
At 10,000 x 500 genes, 2 MiB blocks took 29 s per evaluation, 8 MiB 18 s and 32 MiB 18 s
(one run in turn on a 2-core VM at load 29)."""


def row_block_size(n_columns, budget=None):
    """Rows per block for rows of ``n_columns`` float64 distances (at least 1); ``budget``
    defaults to :data:`ROW_BLOCK_BYTES`."""
    budget = ROW_BLOCK_BYTES if budget is None else budget
    return max(1, budget // (8 * max(1, n_columns)))


class HeldOutRows:
    """The rows one evaluator decides, their folds, and the k-NN decision of a block of them.

    Parameters
    ----------
    fold : ndarray of int64 of shape (n_samples,)
        Fold id of every sample (:func:`hpcswarm.fitness.folds.fold_ids`); a row of fold
        ``f`` is classified by the samples outside fold ``f``.
    codes : ndarray of int of shape (n_samples,)
        Class codes ``0 .. n_classes - 1``.
    k, n_classes : int
    shard : (int, int), default (0, 1)
        ``(index, count)``: this evaluator decides the ``index``-th of ``count`` contiguous
        shares of the held-out rows (:func:`hpcswarm.comm.block_range`).
    compiled : bool, default True
        Decide blocks of 1-NN rows by the compiled one-pass scan
        (:mod:`hpcswarm.fitness.row_kernel`) when numba is there; False keeps the numpy
        path (the reference, equal in every case). Ignored for k > 1.
    class_counts : bool, default False
        Count the correct predictions per class of the rows' labels (``n_classes``
        tallies) instead of all together (one tally).

    Attributes
    ----------
    rows : ndarray of int64
        Sample positions of the rows decided here, increasing.
    total : int
        Held-out rows over all shards (the ``total`` of a Score).
    block : int
        Rows per block, the same on every shard (sized for the largest shard's columns).
    compiled : bool
        Whether the blocks are decided by the compiled scan.
    n_tallies : int
        Counts per decision: ``n_classes`` with ``class_counts``, else 1.
    tally : ndarray of int64 of shape (n_samples,)
        The tally a correct prediction of each sample is counted in (its class code, or 0).
    row_tally : ndarray of int64 of shape (n_rows,)
        ``tally`` of the rows decided here.
    tally_total : ndarray of int64 of shape (n_tallies,)
        Held-out rows of each tally over all shards.
    """

    def __init__(self, fold, codes, k, n_classes, shard=(0, 1), compiled=True,
                 class_counts=False):
        index, count = shard
        held = np.flatnonzero(fold != NOT_HELD_OUT)
        start, stop = block_range(held.size, count, index)
        self.rows = held[start:stop]
        self.total = int(held.size)
        # leave-one-out and n-fold hold every sample out: a shard's rows are then a range
        self._contiguous = bool(self.rows.size and self.rows[-1] - self.rows[0] + 1
                                == self.rows.size)
        self.fold = fold
        self.codes = codes
        self.row_codes = codes[self.rows]
        self.k, self.n_classes = k, n_classes
        self.n_samples = fold.size
        self.block = row_block_size(self.n_samples)
        self.compiled = bool(compiled and COMPILED_AVAILABLE and k == 1)
        self.n_tallies = n_classes if class_counts else 1
        self.tally = (codes.astype(np.int64) if class_counts
                      else np.zeros(self.n_samples, dtype=np.int64))
        self.row_tally = self.tally[self.rows]
        self.tally_total = np.bincount(self.tally[held], minlength=self.n_tallies)
        sizes = np.bincount(fold[held])
        # leave-one-out: each row's only excluded column is itself
        self._singletons = bool(sizes.max() == 1)
        if not self._singletons:
            by_fold = np.argsort(fold, kind="stable")
            self._members = np.split(by_fold[np.count_nonzero(fold == NOT_HELD_OUT):],
                                     np.cumsum(sizes)[:-1])

    def blocks(self):
        """``(start, stop)`` positions in :attr:`rows` of every block, in order."""
        return [(start, min(start + self.block, self.rows.size))
                for start in range(0, self.rows.size, self.block)]

    def columns(self, start, stop):
        """The sample positions of the rows ``start:stop``: a slice when they are a range
        (products then read the values in place), else an index array."""
        if self._contiguous:
            return slice(int(self.rows[start]), int(self.rows[start]) + stop - start)
        return self.rows[start:stop]

    def exclude(self, dist2, start, stop):
        """Set to ``inf`` the columns of their own fold in the rows ``start:stop`` (in place)."""
        rows = self.rows[start:stop]
        if self._singletons:
            dist2[np.arange(rows.size), rows] = np.inf
            return
        folds = self.fold[rows]
        for fold in np.unique(folds):
            dist2[np.ix_(np.flatnonzero(folds == fold), self._members[fold])] = np.inf

    def zeros(self, *shape):
        """Empty counts: int64 zeros of shape ``shape + (n_tallies,)``."""
        return np.zeros(shape + (self.n_tallies,), dtype=np.int64)

    def tallied(self, hits, start, stop):
        """Counts per tally of the rows ``start:stop`` that ``hits`` marks.

        Parameters
        ----------
        hits : ndarray of bool of shape (..., stop - start)

        Returns
        -------
        ndarray of int64 of shape (..., n_tallies)
        """
        if self.n_tallies == 1:
            return np.count_nonzero(hits, axis=-1).astype(np.int64)[..., None]
        flat = hits.reshape(-1, stop - start)
        index = (np.arange(flat.shape[0])[:, None] * self.n_tallies
                 + self.row_tally[start:stop])[flat]
        counts = np.bincount(index, minlength=flat.shape[0] * self.n_tallies)
        return counts.reshape(hits.shape[:-1] + (self.n_tallies,))

    def correct(self, dist2, start, stop, slack, exact):
        """Correct k-NN predictions of the rows ``start:stop`` from their distances, per tally.

        Parameters
        ----------
        dist2 : ndarray of shape (stop - start, n_samples)
            Approximate squared distances, ``inf`` on the rows' own folds.
        slack : ndarray of shape (n_samples,)
            ``|dist2[i, j] - exact| <= slack[row i] + slack[j]``.
        exact : callable
            ``exact(sample, columns)``: exact squared distances of one sample to some
            columns (:func:`hpcswarm.fitness.distances.exact_sq_distances`), called only
            for a row whose neighbours the bound leaves open.

        Returns
        -------
        ndarray of int64 of shape (n_tallies,)
        """
        rows = self.rows[start:stop]
        predicted = knn_predict(dist2, slack[rows], slack, self.codes, self.k, self.n_classes,
                                lambda row, columns: exact(rows[row], columns))
        return self.tallied(predicted == self.row_codes[start:stop], start, stop)

    def gram_block(self, out, start, stop, sq, slack, exact, decide=True):
        """The rows ``start:stop`` from their Gram product, and their correct counts.

        ``out`` holds the product of the rows' values by every sample's over the selected
        genes; it is made the rows' squared distances in place (the Gram form of
        :func:`~hpcswarm.fitness.distances.gram_sq_distances`, ``inf`` on each row's own fold) and,
        with ``decide``, the rows are decided as :meth:`correct` decides them (else zero
        counts are returned). ``sq``: the squared norms of every sample; ``slack``, ``exact`` as for
        :meth:`correct`.
        """
        if self.compiled:
            unsettled = np.zeros(stop - start, dtype=np.bool_)
            counts = self.zeros()
            gram_rows_1nn(out, self.rows[start:stop], sq, self.fold, self.codes, slack,
                          slack.max(), decide, unsettled, self.tally, counts)
            return self.refined(counts, out.__getitem__, start, unsettled, slack, exact)
        out *= -2.0
        out += sq[None, :]
        out += sq[self.columns(start, stop), None]
        self.exclude(out, start, stop)
        return self.correct(out, start, stop, slack, exact) if decide else self.zeros()

    def updated_block(self, block, cached, start, stop, slack, exact):
        """The correct counts of the rows ``start:stop`` from their cached distances plus
        their change (``block``, which becomes the sum) as :meth:`correct` decides them."""
        if self.compiled:
            unsettled = np.zeros(stop - start, dtype=np.bool_)
            counts = self.zeros()
            updated_rows_1nn(block, cached, self.rows[start:stop], self.codes, slack,
                             slack.max(), unsettled, self.tally, counts)
            return self.refined(counts, block.__getitem__, start, unsettled, slack, exact)
        block += cached
        return self.correct(block, start, stop, slack, exact)

    def refined(self, counts, row, start, unsettled, slack, exact):
        """``counts`` (the compiled scan's) plus, in place, the correct counts of the rows
        ``start + r`` the scan left open (``unsettled[r]``), decided exactly from their
        distances ``row(r)`` (a row of the block scanned, or of a state read across its
        diagonal, :meth:`~hpcswarm.fitness.incremental.DistanceState.row`)."""
        for r in np.flatnonzero(unsettled):
            counts += self.correct(row(r)[None], start + r, start + r + 1, slack, exact)
        return counts
