"""k-NN wrapper evaluation of gene subsets on fixed validation folds, exact and cached.

One :class:`KnnEvaluator` per training matrix, k and validation scheme: the fitness
evaluation shared by the swarm algorithms (1-NN leave-one-out in Tran et al. 2016 and
Chuang et al. 2008; 5-NN 10-fold in Gu et al. 2018; 5-NN 5-fold in Li et al.). A full
evaluation is one Gram product of the selected genes (BLAS) for all sample pairs at once;
the incremental path (:mod:`hpcswarm.fitness.incremental`) updates a cached state by the
flipped genes only, and scores every one-gene flip of a state in blocks for the greedy
methods (:mod:`hpcswarm.fitness.single_flips`); all go through the archive of Gu et al.
and give identical scores, because neighbours are ranked by exact distances
(:mod:`hpcswarm.fitness.knn`).
"""

import numpy as np

from hpcswarm.fitness.archive import Archive, mask_key
from hpcswarm.fitness.distances import exact_sq_distances, gram_bound_factor, gram_sq_distances
from hpcswarm.fitness.flip_kernel import (AVAILABLE as COMPILED_AVAILABLE, FlipScratch,
                                          flip_scores_1nn, single_precision_safe)
from hpcswarm.fitness.folds import make_folds
from hpcswarm.fitness.genemajor import GeneMajor
from hpcswarm.fitness.incremental import flipped_state, initial_state
from hpcswarm.fitness.knn import knn_predict, knn_predict_settled
from hpcswarm.fitness.multi_flips import FlipBlock, block_size, multi_flip_distances
from hpcswarm.fitness.score import Score
from hpcswarm.fitness.single_flips import new_scratch, single_flip_distances

DEFAULT_ARCHIVE_SIZE = 100_000
"""Default bound on archived subsets (about 20 MB whatever the number of genes)."""


def _check_k(k):
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k must be an integer >= 1, got {k!r}")
    return int(k)


def _check_matrix(X, name):
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n_samples, n_genes), got shape {X.shape}")
    if not np.isfinite(X).all():
        raise ValueError(f"{name} holds NaN or infinite values")
    return X


def _check_mask(mask, n_genes):
    mask = np.asarray(mask)
    if mask.dtype != np.bool_:
        raise TypeError(f"a gene mask must be a boolean array, got dtype {mask.dtype}")
    if mask.shape != (n_genes,):
        raise ValueError(f"a gene mask must have shape ({n_genes},), got {mask.shape}")
    return mask


class KnnEvaluator:
    """Validation accuracy of a k-NN classifier on a gene subset, on folds fixed at construction.

    Parameters
    ----------
    X : GeneMajor or array-like of shape (n_samples, n_genes)
        Training data (raw values, Euclidean distance, as in the papers): a
        :class:`~hpcswarm.fitness.genemajor.GeneMajor` (gene-major values and the training
        samples in use, e.g. the memory map of a dataset file and a task's training rows),
        read without a whole copy; or a sample-major matrix, copied once gene-major as float64.
    y : array-like of shape (n_samples,)
        Class labels; coded ``0 .. n_classes - 1`` in sorted order.
    k : int, default 1
        Number of neighbours.
    cv : {"loo", "holdout"} or int, default "loo"
        Validation scheme, see :func:`hpcswarm.fitness.folds.make_folds`.
    seed : int or numpy.random.SeedSequence, default 0
        Fixes the folds.
    archive_size : int, default DEFAULT_ARCHIVE_SIZE
        Most subsets remembered by the archive (0 disables it).
    folds : sequence of (train_idx, test_idx), optional
        Explicit folds, used instead of ``cv`` and ``seed``.

    Attributes
    ----------
    n_samples, n_genes, k : int
    classes : ndarray
        Sorted distinct labels; class code ``c`` is ``classes[c]``.
    folds : list of (ndarray, ndarray)
    evaluations : int
        Subsets actually computed (full or incremental); archive hits are not counted.
    incremental_evaluations : int
        Those of ``evaluations`` done by the incremental path.
    archive : Archive

    Notes
    -----
    Memory: no copy of the matrix for a :class:`GeneMajor` ``X`` (over a memory-mapped file
    its pages are the page cache's, shared by every process mapping the file); a gene-major
    float64 copy (``8 n_samples n_genes`` bytes) of a sample-major ``X``, the caller's own
    in-memory array. Then one (n_held_out, n_samples) float64 penalty matrix, the archive
    (about 200 bytes per subset), and per cached state ``8 n_samples^2 + 16 n_samples +
    n_genes`` bytes. A full evaluation allocates the selected genes' values (``8 n_samples
    |S|`` bytes) and a few (n_samples, n_samples) matrices; nothing of size n_samples^2 x
    n_genes ever exists. The scores do not depend on where the values come from: every
    product runs on the same C-contiguous float64 gene rows.
    ``score_single_flips`` holds at most
    :data:`~hpcswarm.fitness.single_flips.BLOCK_BYTES` (8 MiB) of candidate blocks.
    """

    use_compiled = COMPILED_AVAILABLE
    """Whether ``score_flips`` uses the compiled kernel (:mod:`hpcswarm.fitness.flip_kernel`)
    where it applies; False keeps the numpy path (the reference, equal in every case)."""

    def __init__(self, X, y, *, k=1, cv="loo", seed=0, archive_size=DEFAULT_ARCHIVE_SIZE,
                 folds=None):
        self._data = X if isinstance(X, GeneMajor) else GeneMajor.from_samples(X)
        y = np.asarray(y)
        if y.shape != (self._data.n_samples,):
            raise ValueError(f"y must have shape ({self._data.n_samples},) to match X, "
                             f"got {y.shape}")
        self.k = _check_k(k)
        self.n_samples, self.n_genes = self._data.n_samples, self._data.n_genes
        if folds is None:
            folds = make_folds(y, cv, seed)
        self.folds = self._check_folds(folds)
        self.classes, self._codes = np.unique(y, return_inverse=True)
        rows = np.concatenate([test for _, test in self.folds])
        penalty = np.full((rows.size, self.n_samples), np.inf)
        start = 0
        for train, test in self.folds:
            if train.size < self.k:
                raise ValueError(f"k={self.k} exceeds the {train.size} training samples of a fold")
            penalty[start:start + test.size, train] = 0.0
            start += test.size
        order = np.argsort(rows, kind="stable")
        self._rows = rows[order]
        self._penalty = penalty[order]  # 0 where a held-out row may use a column, else inf
        # LOO and n-fold: every sample is held out once and "same fold" is symmetric, so the
        # penalty can live in the all-pairs distances themselves (no copy per evaluation)
        self._penalty_in_distances = (np.array_equal(self._rows, np.arange(self.n_samples))
                                      and np.array_equal(self._penalty, self._penalty.T))
        self._row_codes = self._codes[self._rows]
        self.archive = Archive(archive_size)
        self._scratch = FlipScratch()
        self._compiled_flips = None
        self.evaluations = 0
        self.incremental_evaluations = 0

    def _check_folds(self, folds):
        checked = []
        for train, test in folds:
            train = np.asarray(train, dtype=np.int64)
            test = np.asarray(test, dtype=np.int64)
            for part in (train, test):
                if (part.ndim != 1 or part.size == 0 or part.min() < 0
                        or part.max() >= self.n_samples):
                    raise ValueError(f"fold indices must be non-empty 1-D arrays within "
                                     f"[0, {self.n_samples})")
            if np.intersect1d(train, test).size:
                raise ValueError("a fold's training and test indices overlap")
            checked.append((np.sort(train), np.sort(test)))
        if not checked:
            raise ValueError("folds must hold at least one (train_idx, test_idx) pair")
        return checked

    @property
    def data(self):
        """The :class:`GeneMajor` the evaluator reads (over the caller's matrix or its copy)."""
        return self._data

    @property
    def total(self):
        """Held-out predictions per evaluation (the ``total`` of every Score)."""
        return int(self._rows.size)

    @property
    def hits(self):
        """Archive hits."""
        return self.archive.hits

    @property
    def misses(self):
        """Archive misses."""
        return self.archive.misses

    def _with_penalty(self, dist2):
        """``dist2`` with the pairs no held-out sample compares set to inf, where possible."""
        if self._penalty_in_distances:
            dist2 += self._penalty
        return dist2

    def _decide(self, dist2, slack, mask):
        """Score from approximate all-pairs distances over the genes of ``mask`` and their bound."""
        rows = self._rows
        held_out = dist2 if self._penalty_in_distances else dist2[rows] + self._penalty
        data = self._data
        selected = None

        def exact(row, columns):
            nonlocal selected
            if selected is None:  # needed only when a near tie is refined
                selected = np.flatnonzero(mask)
            return exact_sq_distances(data.take(selected, rows[row:row + 1])[:, 0],
                                      data.take(selected, columns).T)

        predicted = knn_predict(held_out, slack[rows], slack, self._codes, self.k,
                                self.classes.size, exact)
        return Score(int(np.count_nonzero(predicted == self._row_codes)), self.total)

    def _decide_block(self, dist2, slack):
        """Correct predictions of each candidate of a block, and whether the bound settled it.

        ``dist2`` (B, n_samples, n_samples) and ``slack`` (B, n_samples) as for :meth:`_decide`,
        one candidate subset per leading index; an unsettled candidate's count is not valid.
        """
        rows = self._rows
        if self._penalty_in_distances:
            held_out = dist2
        else:
            held_out = dist2[:, rows]
            held_out += self._penalty
        predicted, settled = knn_predict_settled(held_out, slack[:, rows], slack, self._codes,
                                                 self.k, self.classes.size)
        return np.count_nonzero(predicted == self._row_codes, axis=1), settled

    def _lookup(self, mask):
        """``(key, Score or None)``; the empty subset scores 0 without an archive lookup."""
        if not mask.any():
            return None, Score(0, self.total)
        if self.archive.maxsize == 0:
            return None, None
        key = mask_key(mask)
        return key, self.archive.get(key)

    def score(self, mask):
        """Validation score of the genes in ``mask`` (full evaluation, through the archive).

        The empty subset has no classifier: it scores ``Score(0, total)`` and is neither
        computed nor archived.

        Parameters
        ----------
        mask : ndarray of bool of shape (n_genes,)

        Returns
        -------
        Score
        """
        mask = _check_mask(mask, self.n_genes)
        key, found = self._lookup(mask)
        if found is not None:
            return found
        genes = np.flatnonzero(mask)
        dist2, sq, _ = gram_sq_distances(self._data.take(genes))
        score = self._decide(self._with_penalty(dist2), gram_bound_factor(genes.size) * sq, mask)
        self.evaluations += 1
        self.archive.put(key, score)
        return score

    def score_many(self, masks):
        """Scores of several subsets: one Gram product per distinct subset not yet archived.

        Parameters
        ----------
        masks : ndarray of bool of shape (n_masks, n_genes)

        Returns
        -------
        list of Score
        """
        masks = np.asarray(masks)
        if masks.ndim != 2:
            raise ValueError(f"masks must be 2-D (n_masks, n_genes), got shape {masks.shape}")
        seen = {}
        scores = []
        for mask in masks:
            mask = _check_mask(mask, self.n_genes)
            key = mask.tobytes()
            if key not in seen:
                seen[key] = self.score(mask)
            scores.append(seen[key])
        return scores

    def new_state(self, mask):
        """Cached distance state of ``mask`` for incremental evaluation (one Gram product).

        Returns
        -------
        DistanceState
            Holds ``8 n_samples^2 + 16 n_samples + n_genes`` bytes.
        """
        state = initial_state(self._data, _check_mask(mask, self.n_genes))
        self._with_penalty(state.dist2)
        return state

    def _check_genes(self, genes):
        genes = np.sort(np.asarray(genes))
        if genes.ndim != 1 or not np.issubdtype(genes.dtype, np.integer):
            raise ValueError(f"genes must be a 1-D array of int gene indices, got {genes!r}")
        if genes.size and (genes[0] < 0 or genes[-1] >= self.n_genes):
            raise ValueError(f"gene indices must lie in [0, {self.n_genes})")
        if np.any(genes[1:] == genes[:-1]):
            raise ValueError("genes to flip must be distinct")
        return genes.astype(np.int64, copy=False)

    def score_flip(self, state, genes):
        """Score of ``state.mask`` with ``genes`` flipped; ``state`` is unchanged.

        Costs O(n_samples^2 * len(genes)), through the archive; equal to
        ``score(flipped mask)``.

        Parameters
        ----------
        state : DistanceState
        genes : array-like of int of shape (n_flipped,)
            Distinct gene indices.
        """
        genes = self._check_genes(genes)
        mask = state.mask.copy()
        mask[genes] = ~mask[genes]
        key, found = self._lookup(mask)
        if found is not None:
            return found
        flipped = flipped_state(self._data, state, genes)
        state.pending = (genes.tobytes(), flipped)
        score = self._decide(flipped.dist2, flipped.slack(), mask)
        self.evaluations += 1
        self.incremental_evaluations += 1
        self.archive.put(key, score)
        return score

    def score_single_flips(self, state, genes):
        """Score of ``state.mask`` with each gene of ``genes`` flipped alone (state unchanged).

        The candidates of a greedy step at once: equal, gene by gene, to
        ``score_flip(state, [gene])`` and so to ``score`` of the flipped mask, looked up in
        and added to the archive and counted in ``evaluations`` and
        ``incremental_evaluations`` as ``score_flip`` does. The candidates not archived are
        computed in blocks (:mod:`hpcswarm.fitness.single_flips`, at most ``BLOCK_BYTES``
        at once), O(n_samples^2) each, with the rounding bound of ``score_flip``; a candidate
        whose neighbours that bound leaves open in some row is decided alone by the exact
        refinement of ``score`` (:func:`~hpcswarm.fitness.knn.knn_predict`).

        Parameters
        ----------
        state : DistanceState
        genes : array-like of int of shape (n_candidates,)
            Distinct gene indices, in any order.

        Returns
        -------
        list of Score
            One per gene, in the order of ``genes``.
        """
        self._check_genes(genes)
        genes = np.asarray(genes, dtype=np.int64)
        keys, scores = [], []
        mask = state.mask.copy()
        for gene in genes:
            mask[gene] = not mask[gene]
            key, found = self._lookup(mask)
            mask[gene] = not mask[gene]
            keys.append(key)
            scores.append(found)
        todo = np.array([j for j, found in enumerate(scores) if found is None], dtype=np.int64)
        scratch = new_scratch(todo.size, self.n_samples)
        size = scratch.shape[1]
        for leaving in (False, True):  # blocks of entering genes, then of leaving genes
            group = todo[state.mask[genes[todo]] == leaving]
            for start in range(0, group.size, size):
                block = group[start:start + size]
                block_scores = self._score_flip_block(state, genes[block], leaving, scratch)
                for j, score in zip(block, block_scores):
                    self.evaluations += 1
                    self.incremental_evaluations += 1
                    self.archive.put(keys[j], score)
                    scores[j] = score
        return scores

    def _score_flip_block(self, state, genes, leaving, scratch):
        """Scores of ``state.mask`` with each of ``genes`` flipped, all leaving or all entering."""
        dist2, slack = single_flip_distances(state, self._data.take(genes), leaving, scratch)
        correct, settled = self._decide_block(dist2, slack)
        scores = []
        for b, gene in enumerate(genes):
            if settled[b]:
                scores.append(Score(int(correct[b]), self.total))
            else:
                mask = state.mask.copy()
                mask[gene] = not leaving
                scores.append(self._decide(dist2[b], slack[b], mask))
        return scores

    def score_flips(self, state, flips):
        """Correct predictions of ``state.mask`` with each row of ``flips`` flipped (state unchanged).

        The tries of a local search at once: equal, row by row, to
        ``score_flip(state, row).correct`` and so to ``score`` of the flipped mask, computed
        in blocks of tries (:mod:`hpcswarm.fitness.multi_flips`) with the rounding bound of
        ``score_flip``; a try whose neighbours that bound leaves open in some row is decided
        alone by the exact refinement of ``score``. The tries are speculative (a local
        search keeps those before the first improvement): they are neither looked up in
        nor added to the archive; every non-empty one is counted in ``evaluations`` and
        ``incremental_evaluations``. An empty subset scores 0. ``apply_flip`` of a try of
        the last block is free on the numpy path. With k = 1 and leave-one-out or n-fold
        folds the tries go through the compiled kernel (:mod:`hpcswarm.fitness.flip_kernel`)
        when ``use_compiled``, and the tries it leaves unsettled through the numpy path.

        Parameters
        ----------
        state : DistanceState
        flips : ndarray of int of shape (n_tries, n_flipped)
            Each row distinct gene indices (checked once for the whole array).

        Returns
        -------
        ndarray of int64 of shape (n_tries,)
        """
        flips = self._check_flip_sets(flips)
        n_tries, n_flipped = flips.shape
        correct = np.zeros(n_tries, dtype=np.int64)
        size = block_size(self.n_samples, n_flipped)
        if self._compiled_flips is None:  # decided once, on the first call
            self._compiled_flips = (self.use_compiled and self.k == 1
                                    and self._penalty_in_distances
                                    and single_precision_safe(self._data))
        for start in range(0, n_tries, size):
            block = flips[start:start + size]
            rows = self._data.take(block.ravel(), out=self._scratch.rows(
                *block.shape, self.n_samples)).reshape(block.shape + (self.n_samples,))
            leaving = state.mask[block]
            n_selected = state.n_selected + n_flipped - 2 * leaving.sum(axis=1)
            if self._compiled_flips:
                counts, settled = flip_scores_1nn(state, rows, leaving, n_selected,
                                                  self._codes, self._scratch)
                open_ = np.flatnonzero(~settled & (n_selected > 0))
                if open_.size:
                    counts[open_] = self._flip_block_counts(state, block[open_], rows[open_],
                                                            leaving[open_])
            else:
                counts = self._flip_block_counts(state, block, rows, leaving)
            counts[n_selected == 0] = 0
            correct[start:start + block.shape[0]] = counts
            computed = block.shape[0] - int((n_selected == 0).sum())
            self.evaluations += computed
            self.incremental_evaluations += computed
        return correct

    def _check_flip_sets(self, flips):
        flips = np.asarray(flips)
        if flips.ndim != 2 or flips.dtype.kind not in "iu":
            raise ValueError(f"flips must be a 2-D array of int gene indices, got shape "
                             f"{flips.shape} and type {flips.dtype}")
        if flips.size and (flips.min() < 0 or flips.max() >= self.n_genes):
            raise ValueError(f"gene indices must lie in [0, {self.n_genes})")
        if np.any(flips[:, 1:] <= flips[:, :-1]):  # not increasing: look for a repeat
            ordered = np.sort(flips, axis=1)
            if np.any(ordered[:, 1:] == ordered[:, :-1]):
                raise ValueError("the genes of one flip must be distinct")
        return flips.astype(np.int64, copy=False)

    def _flip_block_counts(self, state, block, rows, leaving):
        """Correct predictions of a block of flips by the numpy path (kept on ``state.pending``)."""
        dist2, slack, sq, drift, n_selected = multi_flip_distances(state, rows, leaving)
        counts, settled = self._decide_block(dist2, slack)
        for b in np.flatnonzero(~settled & (n_selected > 0)):
            mask = state.mask.copy()
            mask[block[b]] = ~mask[block[b]]
            counts[b] = self._decide(dist2[b], slack[b], mask).correct
        state.pending = FlipBlock(block, dist2, sq, drift, n_selected)
        return counts

    def apply_flip(self, state, genes):
        """Update ``state`` in place so that it describes its mask with ``genes`` flipped.

        Free right after ``score_flip(state, genes)`` computed that flip, or ``score_flips``
        a block holding it (the result is kept on the state); otherwise
        O(n_samples^2 * len(genes)).
        """
        genes = self._check_genes(genes)
        pending = state.pending
        kept = None
        if isinstance(pending, FlipBlock):
            kept = pending.state_of(state.mask, genes)
        elif pending is not None and pending[0] == genes.tobytes():
            kept = pending[1]
        _adopt(state, kept if kept is not None else flipped_state(self._data, state, genes))

    def score_from(self, state, mask, *, move=False):
        """Score of any ``mask``, incrementally from ``state`` when that is cheaper.

        The fast evaluation of Tran et al. (2016, Sect. 3.2) generalised: a particle whose
        new position differs from its cached one by fewer genes than it selects is scored by
        flipping those genes; otherwise by a full evaluation. Equal to ``score(mask)``.

        Parameters
        ----------
        state : DistanceState
        mask : ndarray of bool of shape (n_genes,)
        move : bool, default False
            Also move ``state`` to ``mask`` (the flip, or a fresh Gram product).

        Returns
        -------
        Score
        """
        mask = _check_mask(mask, self.n_genes)
        genes = np.flatnonzero(mask != state.mask)
        if genes.size < np.count_nonzero(mask):
            score = self.score_flip(state, genes)
            if move:
                self.apply_flip(state, genes)
            return score
        if not move:
            return self.score(mask)
        _adopt(state, self.new_state(mask))
        key, found = self._lookup(mask)
        if found is not None:
            return found
        score = self._decide(state.dist2, state.slack(), mask)
        self.evaluations += 1
        self.archive.put(key, score)
        return score


def _adopt(state, other):
    """Make ``state`` describe ``other``'s subset (in place, for callers holding ``state``)."""
    state.mask, state.dist2, state.sq = other.mask, other.dist2, other.sq
    state.drift, state.n_selected, state.pending = other.drift, other.n_selected, None


def score_split(X_train, y_train, X_test, y_test, mask, k):
    """Test score of a k-NN trained on ``X_train`` and applied to ``X_test``, on ``mask``'s genes.

    The final test of a selected subset in the protocols without selection bias (Tran et
    al. 2016, Sect. 5, outer 10-fold; Li et al.: 70/30 split), with the same distances and tie rules
    as :class:`KnnEvaluator`. The empty subset scores ``Score(0, n_test)``.

    Parameters
    ----------
    X_train : array-like of shape (n_train, n_genes)
    y_train : array-like of shape (n_train,)
    X_test : array-like of shape (n_test, n_genes)
    y_test : array-like of shape (n_test,)
    mask : ndarray of bool of shape (n_genes,)
    k : int

    Returns
    -------
    Score
    """
    X_train = _check_matrix(X_train, "X_train")
    X_test = _check_matrix(X_test, "X_test")
    y_train, y_test = np.asarray(y_train), np.asarray(y_test)
    k = _check_k(k)
    if y_train.shape != (X_train.shape[0],) or y_test.shape != (X_test.shape[0],):
        raise ValueError("y_train and y_test must have one label per row of X_train and X_test")
    if X_test.shape[1] != X_train.shape[1]:
        raise ValueError(f"X_test has {X_test.shape[1]} genes, X_train {X_train.shape[1]}")
    if X_test.shape[0] == 0:
        raise ValueError("X_test has no rows")
    if k > X_train.shape[0]:
        raise ValueError(f"k={k} exceeds the {X_train.shape[0]} training samples")
    mask = _check_mask(mask, X_train.shape[1])
    if not mask.any():
        return Score(0, X_test.shape[0])
    genes = np.flatnonzero(mask)
    test_rows, train_rows = X_test[:, genes], X_train[:, genes]
    dist2, sq_test, sq_train = gram_sq_distances(test_rows.T, train_rows.T)
    factor = gram_bound_factor(genes.size)
    classes, codes = np.unique(y_train, return_inverse=True)

    def exact(row, columns):
        return exact_sq_distances(test_rows[row], train_rows[columns])

    predicted = knn_predict(dist2, factor * sq_test, factor * sq_train, codes, k, classes.size,
                            exact)
    return Score(int(np.count_nonzero(classes[predicted] == y_test)), X_test.shape[0])
