"""k-NN wrapper evaluation of gene subsets on fixed validation folds, exact and cached.

One :class:`KnnEvaluator` per training matrix, k and validation scheme: the fitness
evaluation shared by the swarm algorithms (1-NN leave-one-out in Tran et al. 2016 and
Chuang et al. 2008; 5-NN 10-fold in Gu et al. 2018; 5-NN 5-fold in Li et al.). A full
evaluation is one Gram product of the selected genes (BLAS) for all sample pairs at once;
the incremental path (:mod:`hpcswarm.fitness.incremental`) updates a cached state by the
flipped genes only, scores every one-gene flip of a state in blocks for the greedy
methods (:mod:`hpcswarm.fitness.single_flips`) and blocks of multi-gene tries for the
local search (:mod:`hpcswarm.fitness.multi_flips`, compiled in
:mod:`hpcswarm.fitness.flip_kernel`); all give identical scores, because neighbours are
ranked by exact distances (:mod:`hpcswarm.fitness.knn`). Held-out rows are decided a block
at a time (:mod:`hpcswarm.fitness.rowblocks`), and may be split into sample shards whose
correct counts are summed. With ``class_counts`` every path counts the correct predictions
per class of the held-out labels (the counts of balanced accuracy), summed the same way. The evaluator keeps no archive: the searches keep their own,
the same on every rank (:class:`hpcswarm.swarm.engine.loop.SearchAlgorithm`).
"""

import numpy as np

from hpcswarm.fitness.distances import (exact_sq_distances, flip_gram, flip_rows,
                                        flip_terms, gram_bound_factor, gram_sq_distances)
from hpcswarm.fitness.flip_kernel import (AVAILABLE as COMPILED_AVAILABLE, FlipScratch,
                                          flip_scores_1nn, single_precision_safe)
from hpcswarm.fitness.folds import fold_ids, folds_from_ids, ids_from_folds
from hpcswarm.fitness.genemajor import GeneMajor
from hpcswarm.fitness.incremental import DistanceState, flip_drift, slack_bound, state_bytes
from hpcswarm.fitness.knn import knn_predict, knn_predict_settled
from hpcswarm.fitness.move_kernel import built, move_block_rows, move_terms, moved
from hpcswarm.fitness.multi_flips import block_size as tries_per_block
from hpcswarm.fitness.multi_flips import multi_flip_distances
from hpcswarm.fitness.prefaulted import prefaulted_empty
from hpcswarm.fitness.rowblocks import ROW_BLOCK_BYTES, HeldOutRows
from hpcswarm.fitness.score import Score
from hpcswarm.fitness.single_flips import (CANDIDATE_BYTES, block_size, new_scratch,
                                          single_flip_distances)

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


def _check_shard(shard):
    try:
        index, count = (int(part) for part in shard)
    except (TypeError, ValueError):
        raise ValueError(f"shard must be a pair (index, count), got {shard!r}") from None
    if count < 1 or not 0 <= index < count:
        raise ValueError(f"shard must be (index, count) with 0 <= index < count, got {shard!r}")
    return index, count


def _own_sum(counts):
    return counts


def block_bytes(n_rows, n_samples, single_flips=False):
    """Bytes of the largest block of work a scorer of ``n_rows`` held-out rows holds at once.

    A full evaluation's block of rows: its float64 distances
    (:data:`~hpcswarm.fitness.rowblocks.ROW_BLOCK_BYTES`) and, in the numpy path, the k-NN
    decision's float64 temporary and boolean near mask, 17 bytes per distance in all
    (measured: 2.13 budgets at 3,000 samples). With ``single_flips`` (one-gene flips of a cached state scored in batches), one
    block of candidates: :data:`~hpcswarm.fitness.single_flips.CANDIDATE_BYTES` per
    candidate and distance, at least one candidate, so ``25 n_rows n_samples`` bytes once
    one candidate exceeds the 8 MiB budget. A block of multi-gene tries stays within its
    budget (:func:`~hpcswarm.fitness.multi_flips.block_size`: rows in blocks when one try
    does not fit).
    """
    rows_block = 17 * ROW_BLOCK_BYTES // 8
    if not single_flips:
        return rows_block
    per_candidate = CANDIDATE_BYTES * max(1, n_rows) * n_samples
    return max(rows_block, block_size(n_rows, n_samples) * per_candidate)


def scorer_bytes(n_samples, n_genes, sample_shards=1, cached_states=0, single_flips=False):
    """Bytes the scorer of one sample shard holds at most (the plan's estimate).

    The values a full evaluation of every gene gathers, ``8 n_samples n_genes`` (the
    selected genes' rows, at most all of them), ``cached_states`` cached states of the
    shard's ``ceil(n_samples / sample_shards)`` held-out rows
    (:func:`~hpcswarm.fitness.incremental.state_bytes`) and its largest block of work
    (:func:`block_bytes`). The matrix itself is not counted: a :class:`GeneMajor` over a
    memory-mapped file is read from the page cache, which the ranks of a node share.
    """
    rows = -(-n_samples // max(1, sample_shards))
    return (8 * n_samples * n_genes + cached_states * state_bytes(rows, n_samples, n_genes)
            + block_bytes(rows, n_samples, single_flips))


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
    folds : sequence of (train_idx, test_idx), optional
        Explicit folds, used instead of ``cv`` and ``seed``; each training part must be
        every sample outside its test part (:func:`~hpcswarm.fitness.folds.ids_from_folds`).
    shard : (int, int), default (0, 1)
        ``(index, count)``: decide only the ``index``-th of ``count`` contiguous shares of
        the held-out rows (a sample shard, :class:`~hpcswarm.fitness.rowblocks.HeldOutRows`);
        the shards' correct counts are added by ``sum_counts``.
    sum_counts : callable, optional
        ``sum_counts(counts) -> counts``: the element-wise sum of an int64 array over the
        ``count`` shards of the same evaluation (an integer Allreduce over the shards'
        ranks); every shard makes the same calls in the same order. Default: no other shard.
    compiled : bool, optional
        False: decide the rows by the numpy path even where numba is installed (the same
        Scores; what a process that scores once gains, :func:`~hpcswarm.fitness.compiled.worth_compiling`).
        Default: :attr:`use_compiled`.
    class_counts : bool, default False
        Count the correct predictions per class of the held-out samples' labels too: every
        Score then holds ``class_correct`` and ``class_total``, and ``score_flips`` returns
        counts per class (what the ``"balanced-accuracy"`` objective needs,
        :attr:`~hpcswarm.fitness.objectives.Objective.per_class`).

    Attributes
    ----------
    n_samples, n_genes, k : int
    classes : ndarray
        Sorted distinct labels; class code ``c`` is ``classes[c]``.
    class_counts : bool
    class_total : tuple of int
        Held-out samples of each class over all shards (empty without ``class_counts``).
    folds : list of (ndarray, ndarray)
    evaluations : int
        Subsets computed (full or incremental; the empty subset is not computed).
    incremental_evaluations : int
        Those of ``evaluations`` done by the incremental path.

    Notes
    -----
    Start-up reads the labels and makes one fold id per sample (O(n_samples)); the values
    are checked finite by the :class:`GeneMajor` (block by block, or not at all when the
    dataset file records that it holds finite values).

    Memory: no copy of the matrix for a :class:`GeneMajor` ``X`` (over a memory-mapped file
    its pages are the page cache's, shared by every process mapping the file); a gene-major
    float64 copy (``8 n_samples n_genes`` bytes) of a sample-major ``X``, the caller's own
    in-memory array. Then per cached state
    ``8 n_rows n_samples + 16 n_samples + n_genes`` bytes, ``n_rows`` the held-out rows of
    this shard. A full evaluation allocates the selected genes' values (``8 n_samples |S|``
    bytes) and one block of rows (:data:`~hpcswarm.fitness.rowblocks.ROW_BLOCK_BYTES`);
    a flip the flipped genes' values and one block. The scores do not depend on where the
    values come from: every product runs on the same C-contiguous float64 gene rows.
    ``score_single_flips`` and ``score_flips`` hold at most
    :data:`~hpcswarm.fitness.single_flips.BLOCK_BYTES` (8 MiB) of candidate blocks. What a
    job's plan counts of all this: :func:`scorer_bytes`.
    """

    use_compiled = COMPILED_AVAILABLE
    """Whether ``score_flips`` uses the compiled kernel (:mod:`hpcswarm.fitness.flip_kernel`)
    where it applies; False keeps the numpy path (the reference, equal in every case)."""

    def __init__(self, X, y, *, k=1, cv="loo", seed=0, folds=None, shard=(0, 1),
                 sum_counts=None, compiled=None, class_counts=False):
        if compiled is not None:  # False: the numpy path (this scorer's only)
            self.use_compiled = self.use_compiled and compiled
        self._data = X if isinstance(X, GeneMajor) else GeneMajor.from_samples(X)
        y = np.asarray(y)
        if y.shape != (self._data.n_samples,):
            raise ValueError(f"y must have shape ({self._data.n_samples},) to match X, "
                             f"got {y.shape}")
        self.k = _check_k(k)
        self.n_samples, self.n_genes = self._data.n_samples, self._data.n_genes
        fold = (fold_ids(y, cv, seed) if folds is None
                else ids_from_folds(folds, self.n_samples))
        smallest_training = self.n_samples - int(np.bincount(fold[fold >= 0]).max())
        if smallest_training < self.k:
            raise ValueError(f"k={self.k} exceeds the {smallest_training} training samples "
                             f"of a fold")
        self._fold = fold
        self.classes, codes = np.unique(y, return_inverse=True)
        self.shard = _check_shard(shard)
        self.class_counts = bool(class_counts)
        self._rows = HeldOutRows(fold, codes.reshape(-1), self.k, self.classes.size, self.shard,
                                 compiled=self.use_compiled, class_counts=self.class_counts)
        self.class_total = (tuple(int(n) for n in self._rows.tally_total)
                            if self.class_counts else ())
        self._sum = _own_sum if sum_counts is None else sum_counts
        self._scratch = FlipScratch()
        self._move_buffer = None
        self._compiled_flips = None
        self.evaluations = 0
        self.incremental_evaluations = 0

    @property
    def folds(self):
        """The ``(train_idx, test_idx)`` pairs (built on request: n pairs for leave-one-out)."""
        return folds_from_ids(self._fold)

    @property
    def data(self):
        """The :class:`GeneMajor` the evaluator reads (over the caller's matrix or its copy)."""
        return self._data

    @property
    def codes(self):
        """Class code of every sample (its label is ``classes[code]``), ndarray of int of
        shape (n_samples,)."""
        return self._rows.codes

    @property
    def total(self):
        """Held-out predictions per evaluation (the ``total`` of every Score)."""
        return self._rows.total

    def state_memory(self):
        """Where this scorer's cached states live, for a search's default cache budget:
        None, in this process's memory (a device scorer gives its device's)."""
        return None

    def _score(self, counts):
        """The Score of this shard's correct counts (ndarray of int64 of shape
        (n_tallies,)), summed over the shards."""
        return self._score_of(self._sum(counts))

    def _score_of(self, counts):
        """The Score of correct counts per tally over all shards."""
        if not self.class_counts:
            return Score(int(counts[0]), self.total)
        return Score(int(counts.sum()), self.total, tuple(int(n) for n in counts),
                     self.class_total)

    def _empty(self):
        """The Score of the empty subset: no classifier, nothing correct."""
        return self._score_of(self._rows.zeros())

    def _exact(self, mask):
        """``exact(sample, columns)`` over the genes of ``mask`` (for near ties only)."""
        data = self._data
        selected = None

        def exact(sample, columns):
            nonlocal selected
            if selected is None:  # needed only when a near tie is refined
                selected = np.flatnonzero(mask)
            return exact_sq_distances(data.take(selected, np.array([sample]))[:, 0],
                                      data.take(selected, columns).T)

        return exact

    def _full(self, mask, keep=False, decide=True, into=None):
        """This shard's correct counts over the genes of ``mask`` (one product per row block).

        With ``keep`` the distances are written into a new state, returned second (into the
        distance matrix of the state ``into`` where given: its memory is taken over, every
        row overwritten; fresh pages cost more than the product's own pass, and a new
        state's are faulted in by one call,
        :func:`~hpcswarm.fitness.prefaulted.prefaulted_empty`). When one block holds every
        sample (the papers' sizes, unsharded leave-one-out or n-fold), its product is the
        whole Gram matrix (a BLAS ``syrk``) and the squared norms are its diagonal, as
        :func:`~hpcswarm.fitness.distances.gram_sq_distances` takes them; otherwise they are
        summed over the genes first. A state kept and decided where the
        rows are every sample is made by :meth:`_built` (its upper triangle).
        """
        rows = self._rows
        genes = np.flatnonzero(mask)
        values = self._data.take(genes)
        if keep and decide and self.use_compiled and rows.rows.size == self.n_samples:
            return self._built(mask, genes, values, into)
        blocks = rows.blocks()
        dist2 = (into.dist2 if keep and into is not None else
                 prefaulted_empty((rows.rows.size, self.n_samples)) if keep else
                 np.empty((min(rows.block, rows.rows.size), self.n_samples)))
        whole = len(blocks) == 1 and rows.rows.size == self.n_samples
        if whole:
            np.matmul(values.T, values, out=dist2)
            sq = dist2.diagonal().copy()
        else:
            sq = np.einsum("gi,gi->i", values, values)
        slack = gram_bound_factor(genes.size) * sq
        exact = self._exact(mask)
        correct = rows.zeros()
        for start, stop in blocks:
            out = dist2[start:stop] if keep else dist2[:stop - start]
            if not whole:
                np.matmul(values[:, rows.columns(start, stop)].T, values, out=out)
            correct += rows.gram_block(out, start, stop, sq, slack, exact, decide)
        state = (DistanceState(mask.copy(), dist2, sq, 0.5 * slack, int(genes.size)) if keep
                 else None)
        return correct, state

    def _built(self, mask, genes, values, into):
        """``(correct counts, new state)`` of ``mask`` where the rows are every sample: the
        upper triangle of its distances made and decided a block of rows at a time
        (:func:`~hpcswarm.fitness.move_kernel.built`), written into ``into``'s memory where
        given. Where one block holds every sample the Gram product is one ``syrk`` of the
        whole and the squared norms its diagonal; otherwise each block's product of its
        columns from its own first sample on (half the multiply-adds of the products by
        whole rows) is made in a buffer that stays in cache, and the squared norms are
        summed over the genes first, as the blocks of rows of :meth:`_full` take them."""
        rows = self._rows
        n = self.n_samples
        dist2 = into.dist2 if into is not None else prefaulted_empty((n, n))
        if rows.block >= n:
            np.matmul(values.T, values, out=dist2)
            sq = dist2.diagonal().copy()
            values = None
        else:
            sq = np.einsum("gi,gi->i", values, values)
        slack = gram_bound_factor(genes.size) * sq
        state = DistanceState(mask.copy(), dist2, sq, 0.5 * slack, int(genes.size), upper=True)
        correct = rows.zeros()
        unsettled = built(dist2, sq, rows.fold, self.k, rows.codes, slack, rows.tally, correct,
                          values, self._buffer())
        return self._rows.refined(correct, state.row, 0, unsettled, slack,
                                  self._exact(mask)), state

    def _buffer(self):
        """The buffer of a block's product that moves and new states reuse (fresh pages
        would cost their faults at every call)."""
        if self._move_buffer is None:
            self._move_buffer = np.empty(move_block_rows(self.n_samples) * self.n_samples)
        return self._move_buffer

    def _flip(self, state, genes, apply=False, decide=True):
        """This shard's correct counts of ``state.mask`` with ``genes`` flipped.

        One pass over ``state.dist2``, a block of rows at a time: the change of each block
        (one product of the F flipped genes plus two norm terms,
        :func:`~hpcswarm.fitness.distances.flip_terms`) is added to the cached block in a
        small buffer and decided there (:meth:`HeldOutRows.updated_block`); with ``apply``
        the sum is made in the cached block itself and decided there, and ``state`` moves to
        the flipped subset; with ``apply`` and not ``decide`` the change is added in place
        and nothing is decided (zero counts are returned). A move decided and applied
        (``score_move``) is one compiled pass where numba is there (:meth:`_moved`); by this
        numpy path, where one block holds every sample's rows (the papers' sizes), it makes
        its change from two symmetric products
        (:func:`~hpcswarm.fitness.distances.flip_gram`), half the multiply-adds, within the
        same error bound.
        """
        if apply and decide and self.use_compiled:
            return self._moved(state, genes)
        state.whole()
        rows = self._rows
        leaving = state.mask[genes]
        added, removed = self._data.take(genes[~leaving]), self._data.take(genes[leaving])
        left, right, delta_sq, magnitude = flip_terms(added, removed)
        mask, sq, drift, n_selected, slack = self._flipped(state, genes, leaving, delta_sq,
                                                           magnitude)
        exact = self._exact(mask)
        scratch = np.empty((min(rows.block, rows.rows.size), self.n_samples))
        correct = rows.zeros()
        blocks = rows.blocks()
        symmetric = (apply and decide and len(blocks) == 1
                     and rows.rows.size == self.n_samples)  # a move of every sample's rows
        for start, stop in blocks:
            if symmetric:
                block = flip_gram(added, removed, delta_sq, scratch)
            else:
                block = flip_rows(left, right, rows.columns(start, stop),
                                  scratch[:stop - start])
            cached = state.dist2[start:stop]
            if apply and not decide:
                cached += block
            elif apply:  # the sum cached + change made in the cached block and decided there
                correct += rows.updated_block(cached, block, start, stop, slack, exact)
            else:
                correct += rows.updated_block(block, cached, start, stop, slack, exact)
        if apply:
            state.mask, state.sq, state.drift, state.n_selected = mask, sq, drift, n_selected
        return correct

    @staticmethod
    def _flipped(state, genes, leaving, delta_sq, magnitude):
        """``(mask, sq, drift, n_selected, slack)`` of ``state`` with ``genes`` flipped
        (``leaving``: which of them leave), the drift bound of
        :func:`~hpcswarm.fitness.incremental.flip_drift`."""
        sq = state.sq + delta_sq
        drift = flip_drift(state.drift, sq, magnitude, genes.size)
        n_selected = state.n_selected + genes.size - 2 * int(np.count_nonzero(leaving))
        mask = state.mask.copy()
        mask[genes] = ~leaving
        return mask, sq, drift, n_selected, slack_bound(sq, drift, n_selected)

    def _moved(self, state, genes):
        """This shard's correct counts of ``state.mask`` with ``genes`` flipped, ``state``
        moved there: one compiled pass over ``state.dist2``
        (:mod:`hpcswarm.fitness.move_kernel`) adds each block's change (one product of the
        flipped genes, half of it where the rows are every sample) and decides each row
        while it is in cache; the rows it leaves open are decided from exact distances."""
        rows = self._rows
        leaving = state.mask[genes]
        values = self._data.take(genes)
        signed, delta_sq, magnitude = move_terms(values, leaving)
        mask, sq, drift, n_selected, slack = self._flipped(state, genes, leaving, delta_sq,
                                                           magnitude)
        correct = rows.zeros()
        unsettled = moved(values, signed, delta_sq, state.dist2, rows.rows, self.k, rows.codes,
                          slack, rows.tally, correct, self._buffer())
        state.mask, state.sq, state.drift, state.n_selected = mask, sq, drift, n_selected
        state.upper = rows.rows.size == self.n_samples  # moved() kept its upper triangle
        return self._rows.refined(correct, state.row, 0, unsettled, slack, self._exact(mask))

    def score(self, mask):
        """Validation score of the genes in ``mask`` (full evaluation).

        The empty subset has no classifier: it scores no correct prediction
        (``Score(0, total)``) and is not computed.

        Parameters
        ----------
        mask : ndarray of bool of shape (n_genes,)

        Returns
        -------
        Score
        """
        mask = _check_mask(mask, self.n_genes)
        if not mask.any():
            return self._empty()
        score = self._score(self._full(mask)[0])
        self.evaluations += 1
        return score

    def score_many(self, masks):
        """Scores of several subsets: one Gram product per distinct subset.

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
            Holds ``8 n_rows n_samples + 16 n_samples + n_genes`` bytes
            (:func:`~hpcswarm.fitness.incremental.state_bytes`).
        """
        return self._full(_check_mask(mask, self.n_genes), keep=True, decide=False)[1]

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

        Costs O(n_rows n_samples F) for F flipped genes and one read of the cached
        distances; equal to ``score(flipped mask)``.

        Parameters
        ----------
        state : DistanceState
        genes : array-like of int of shape (n_flipped,)
            Distinct gene indices.
        """
        genes = self._check_genes(genes)
        if state.n_selected + genes.size == 2 * np.count_nonzero(state.mask[genes]):
            return self._empty()  # the flip empties the subset
        score = self._score(self._flip(state, genes))
        self.evaluations += 1
        self.incremental_evaluations += 1
        return score

    def score_move(self, state, genes):
        """Score of ``state.mask`` with ``genes`` flipped, and ``state`` moved there.

        ``score_flip`` and ``apply_flip`` in one pass over the cached distances (each block's
        change is computed once, decided, and written back): a particle's subset scored from
        its previous one. Equal to ``score`` of the flipped mask; the subset must stay
        non-empty (ValueError otherwise: the empty subset is not computed).
        """
        genes = self._check_genes(genes)
        if state.n_selected + genes.size == 2 * np.count_nonzero(state.mask[genes]):
            raise ValueError("score_move: the flip empties the subset")
        score = self._score(self._flip(state, genes, apply=True))
        self.evaluations += 1
        self.incremental_evaluations += 1
        return score

    def score_new_state(self, mask, reuse=None):
        """Score of the non-empty ``mask`` and a new cached state of it, from one product
        (``score`` and ``new_state`` at once); ``reuse``, a state of this scorer that is no
        longer needed, lends its distance matrix (overwritten; do not use it after)."""
        mask = _check_mask(mask, self.n_genes)
        if not mask.any():
            raise ValueError("score_new_state: the empty subset has no state")
        correct, state = self._full(mask, keep=True, into=reuse)
        self.evaluations += 1
        return self._score(correct), state

    def score_single_flips(self, state, genes):
        """Score of ``state.mask`` with each gene of ``genes`` flipped alone (state unchanged).

        The candidates of a greedy step at once: equal, gene by gene, to
        ``score_flip(state, [gene])`` and so to ``score`` of the flipped mask, and counted in
        ``evaluations`` and ``incremental_evaluations`` as ``score_flip`` counts them. The
        candidates are computed in blocks (:mod:`hpcswarm.fitness.single_flips`, at most ``BLOCK_BYTES``
        at once), O(n_rows n_samples) each, with the rounding bound of ``score_flip``; a row
        whose neighbours that bound leaves open is decided by the exact refinement of
        ``score`` (:func:`~hpcswarm.fitness.knn.knn_predict`). Sharded, the counts of a
        block are summed over the shards at once (one ``sum_counts`` per block).

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
        state.whole()
        scores = [None] * genes.size
        # a leaving gene that empties the subset scores 0 uncomputed, as in ``score``
        empties = state.mask[genes] & (state.n_selected == 1)
        for j in np.flatnonzero(empties):
            scores[j] = self._empty()
        todo = np.flatnonzero(~empties)
        size = self._candidates_per_block()
        scratch = self._single_flip_scratch(todo.size, size)
        for leaving in (False, True):  # blocks of entering genes, then of leaving genes
            group = todo[state.mask[genes[todo]] == leaving]
            for start in range(0, group.size, size):
                block = group[start:start + size]
                correct = self._sum(self._flip_block(state, genes[block], leaving, scratch))
                for j, counts in zip(block, correct):
                    scores[j] = self._score_of(counts)
                self.evaluations += block.size
                self.incremental_evaluations += block.size
        return scores

    def _candidates_per_block(self):
        """Candidates of ``score_single_flips`` per block: the same on every shard (from the
        largest shard), so that every shard sums the same blocks."""
        most_rows = -(-self.total // self.shard[1])
        return block_size(most_rows, self.n_samples)

    def _single_flip_scratch(self, n_candidates, size):
        """The buffers that ``_flip_block`` reuses for every block of a call."""
        return new_scratch(n_candidates, self._rows.rows.size, self.n_samples, size)

    def _flip_block(self, state, genes, leaving, scratch):
        """This shard's correct counts (n_genes, n_tallies) of ``state.mask`` with each of
        ``genes`` flipped alone."""
        rows = self._rows
        dist2, slack = single_flip_distances(state, self._data.take(genes), rows.rows, leaving,
                                             scratch)
        predicted, settled = knn_predict_settled(dist2, slack[:, rows.rows], slack, rows.codes,
                                                 self.k, self.classes.size)
        correct = rows.tallied(predicted == rows.row_codes, 0, rows.rows.size)
        for b in np.flatnonzero(~settled):
            mask = state.mask.copy()
            mask[genes[b]] = not leaving
            correct[b] = rows.correct(dist2[b], 0, rows.rows.size, slack[b], self._exact(mask))
        return correct

    def score_flips(self, state, flips):
        """Correct predictions of ``state.mask`` with each row of ``flips`` flipped (state unchanged).

        The tries of a local search at once: equal, row by row, to
        ``score_flip(state, row).correct`` and so to ``score`` of the flipped mask, computed
        in blocks of tries (:mod:`hpcswarm.fitness.multi_flips`) with the rounding bound of
        ``score_flip``; a try whose neighbours that bound leaves open in some row is decided
        alone by the exact refinement of ``score``. A try whose distances alone would
        overflow a block (:func:`~hpcswarm.fitness.multi_flips.block_size`, large cohorts)
        is scored as ``score_flip`` scores it, a block of rows at a time. With k = 1 the
        blocks go through the compiled kernel (:mod:`hpcswarm.fitness.flip_kernel`) when
        ``use_compiled``, and the tries it leaves unsettled through the numpy path. Every
        non-empty try is counted in ``evaluations`` and ``incremental_evaluations``; an
        empty subset scores 0. Sharded, the counts of the whole batch are summed over the
        shards at once (one ``sum_counts`` per call).

        Parameters
        ----------
        state : DistanceState
        flips : ndarray of int of shape (n_tries, n_flipped)
            Each row distinct gene indices (checked once for the whole array).

        Returns
        -------
        ndarray of int64 of shape (n_tries,), or (n_tries, n_classes) with ``class_counts``
            The correct predictions of each try (per class of the held-out labels).
        """
        flips = self._check_flip_sets(flips)
        state.whole()
        n_tries, n_flipped = flips.shape
        n_selected = state.n_selected + n_flipped - 2 * np.count_nonzero(state.mask[flips],
                                                                         axis=1)
        computed = n_selected > 0
        correct = self._rows.zeros(n_tries)
        size = self._tries_per_block(n_flipped)
        if size == 0:  # one try's distances overflow a block: row blocks, one try at a time
            for t in np.flatnonzero(computed):
                correct[t] = self._flip(state, flips[t])
        else:
            compiled = self._use_compiled()
            for start in range(0, n_tries, size):
                stop = min(start + size, n_tries)
                correct[start:stop] = self._flip_block_counts(
                    state, flips[start:stop], n_selected[start:stop], compiled)
        self.evaluations += int(np.count_nonzero(computed))
        self.incremental_evaluations += int(np.count_nonzero(computed))
        correct = self._sum(correct)
        return correct if self.class_counts else correct[:, 0]

    def _tries_per_block(self, n_flipped):
        """Tries of ``score_flips`` per block of ``n_flipped`` genes each; 0 when one try's
        distances alone overflow a block."""
        return tries_per_block(self._rows.rows.size, self.n_samples, n_flipped)

    def _use_compiled(self):
        """Whether ``score_flips`` blocks go through the compiled kernel (decided once)."""
        if self._compiled_flips is None:
            self._compiled_flips = (self.use_compiled and self.k == 1
                                    and single_precision_safe(self._data))
        return self._compiled_flips

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

    def _flip_block_counts(self, state, block, n_selected, compiled):
        """This shard's correct counts (n_tries, n_tallies) of a block of tries (0 for a try
        emptying the subset)."""
        rows = self._rows
        n_tries, n_flipped = block.shape
        values = self._data.take(block.ravel(), out=self._scratch.rows(
            n_tries, n_flipped, self.n_samples)).reshape(n_tries, n_flipped, self.n_samples)
        leaving = state.mask[block]
        todo = n_selected > 0
        if compiled:
            counts, settled = flip_scores_1nn(state, values, leaving, n_selected, rows.rows,
                                              rows.codes, rows.tally, rows.n_tallies,
                                              self._scratch)
            todo &= ~settled
        else:
            counts = rows.zeros(n_tries)
        if todo.all():
            counts = self._numpy_flip_counts(state, block, values, leaving)
        elif todo.any():
            part = np.flatnonzero(todo)
            counts[part] = self._numpy_flip_counts(state, block[part], values[part],
                                                   leaving[part])
        counts[n_selected == 0] = 0
        return counts

    def _numpy_flip_counts(self, state, block, values, leaving):
        """This shard's correct counts (n_tries, n_tallies) of non-empty tries by the numpy
        path (the reference)."""
        rows = self._rows
        dist2, slack = multi_flip_distances(state, values, leaving,
                                            rows.columns(0, rows.rows.size))
        predicted, settled = knn_predict_settled(dist2, slack[:, rows.rows], slack, rows.codes,
                                                 self.k, self.classes.size)
        counts = rows.tallied(predicted == rows.row_codes, 0, rows.rows.size)
        for b in np.flatnonzero(~settled):
            mask = state.mask.copy()
            mask[block[b]] = ~mask[block[b]]
            counts[b] = rows.correct(dist2[b], 0, rows.rows.size, slack[b], self._exact(mask))
        return counts

    def apply_flip(self, state, genes):
        """Update ``state`` in place so that it describes its mask with ``genes`` flipped.

        O(n_rows n_samples F): one product per row block added to the cached distances in
        place (the same sums as ``score_flip``'s, so the same bits), whichever way the flip
        was scored.
        """
        self._flip(state, self._check_genes(genes), apply=True, decide=False)


def score_split(X_train, y_train, X_test, y_test, mask, k, classes=None):
    """Test score of a k-NN trained on ``X_train`` and applied to ``X_test``, on ``mask``'s genes.

    The final test of a selected subset in the protocols without selection bias (Tran et
    al. 2016, Sect. 5, outer 10-fold; Li et al.: 70/30 split), with the same distances and tie rules
    as :class:`KnnEvaluator`. The Score counts per class too (over ``classes``, by default
    the labels of both parts, in sorted order), for the test's balanced accuracy. The empty
    subset scores no correct prediction.

    Parameters
    ----------
    X_train : array-like of shape (n_train, n_genes)
    y_train : array-like of shape (n_train,)
    X_test : array-like of shape (n_test, n_genes)
    y_test : array-like of shape (n_test,)
    mask : ndarray of bool of shape (n_genes,)
    k : int
    classes : array-like of shape (n_classes,), optional
        The sorted labels to count per class, holding every label of both parts (the
        labels of the whole dataset: the Scores of several splits of it then add up
        class by class). Default: the labels of ``y_train`` and ``y_test``.

    Returns
    -------
    Score
        With ``class_correct`` and ``class_total`` (a class without test samples has
        ``class_total`` 0).
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
    labels = np.unique(np.concatenate([y_train, y_test]) if classes is None else classes)
    if not np.isin(np.concatenate([y_train, y_test]), labels).all():
        raise ValueError("classes must hold every label of y_train and y_test")
    test_codes = np.searchsorted(labels, y_test)
    class_total = np.bincount(test_codes, minlength=labels.size)
    if not mask.any():
        return _split_score(np.zeros(labels.size, dtype=np.int64), class_total)
    genes = np.flatnonzero(mask)
    test_rows, train_rows = X_test[:, genes], X_train[:, genes]
    dist2, sq_test, sq_train = gram_sq_distances(test_rows.T, train_rows.T)
    factor = gram_bound_factor(genes.size)
    train_classes, codes = np.unique(y_train, return_inverse=True)

    def exact(row, columns):
        return exact_sq_distances(test_rows[row], train_rows[columns])

    predicted = knn_predict(dist2, factor * sq_test, factor * sq_train, codes, k,
                            train_classes.size, exact)
    hits = train_classes[predicted] == y_test
    return _split_score(np.bincount(test_codes[hits], minlength=labels.size), class_total)


def _split_score(class_correct, class_total):
    """The Score of a test part from its counts per class."""
    return Score(int(class_correct.sum()), int(class_total.sum()),
                 tuple(int(n) for n in class_correct), tuple(int(n) for n in class_total))
