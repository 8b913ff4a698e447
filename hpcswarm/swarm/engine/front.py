"""The trade-off a search met: best subset per size, and the Pareto front of (accuracy, size).

A wrapper search such as PSO-LSRG maximises accuracy alone (Tran et al. 2016, Eq. 3); once
its inner accuracy reaches 100% nothing shrinks the subset, yet on the way it evaluated many
smaller subsets that were nearly as accurate. :class:`FrontTracker` watches every subset the
search evaluates (:meth:`~hpcswarm.swarm.engine.evaluation.EvaluationService.observe_many`) and
keeps, for each size, the best one. It only records: the search's trajectory is the same
with or without it.

Bound: one subset per size. Under the ``accuracy`` and ``error`` objectives the fitness of a
search is a strictly increasing function of the correct count alone (one validation scheme,
so one denominator), and a subset that a smaller one matches or beats is dropped at once;
what remains is the non-dominated front, at most one subset per distinct correct count (at
most ``n_samples + 1``). Under ``combined`` (Li et al. Eq. 3) the fitness also rewards small
subsets, so only the best per size can be kept while the search runs (at fixed size the
fitness still orders subsets by accuracy); :func:`pareto_front` filters them afterwards.

Ties (equal fitness and size) go to the subset with the lower gene indices (the sorted index
lists compared lexicographically), a rule that does not depend on the order in which subsets
were met, so that the ranks of a parallel search, each with its own tracker, merge into the
tracker a serial search builds (:meth:`FrontTracker.merge`).
"""

import numpy as np

from hpcswarm.fitness import WORST_FITNESS
from hpcswarm.store.objectives import OBJECTIVE_TABLE

MONOTONE_OBJECTIVES = tuple(name for name, row in OBJECTIVE_TABLE.items() if row.monotone)
"""Objectives under which the fitness orders subsets of any sizes as their accuracy does
(:attr:`~hpcswarm.store.objectives.ObjectiveRow.monotone`)."""


class FrontTracker:
    """Best evaluated subset per size (packed bits), dominated ones dropped when possible.

    Parameters
    ----------
    n_genes : int
    monotone : bool
        Whether the fitness orders subsets as their accuracy does whatever their sizes
        (objective in :data:`MONOTONE_OBJECTIVES`): dominated subsets are then dropped.
    """

    def __init__(self, n_genes, monotone):
        self.n_genes = int(n_genes)
        self.monotone = bool(monotone)
        self.best = {}  # size -> (fitness, packed mask as bytes)
        self._sizes = np.zeros(0, dtype=np.int64)  # the sizes held, increasing
        self._values = np.zeros(0)  # their fitness
        self._below = np.full(1, -np.inf)  # [i]: the best fitness of the i smallest sizes

    def __len__(self):
        return len(self.best)

    def add(self, mask, value):
        """Offer one evaluated subset (bool mask of shape (n_genes,)) and its fitness."""
        size = int(np.count_nonzero(mask))
        if size == 0:
            return
        held = self.best.get(size)
        if held is not None and value < held[0]:
            return
        if self.monotone and np.any((self._sizes < size) & (self._values >= value)):
            return
        self._put(size, float(value), np.packbits(mask).tobytes(), held)

    def add_many(self, masks, values):
        """Offer several evaluated subsets (rows of ``masks``) and their fitness values.

        The same as :meth:`add` row by row: only the rows :meth:`candidates` names are
        offered.
        """
        masks = np.asarray(masks, dtype=bool)
        values = np.asarray(values, dtype=float)
        for row in self.candidates(np.count_nonzero(masks, axis=1), values):
            self.add(masks[row], values[row])

    def candidates(self, sizes, values):
        """The rows of a batch that :meth:`add` row by row could keep, in row order.

        A row can be kept only if it is :meth:`open`, of highest fitness among the batch's
        rows of its size and (``monotone``) strictly above every row of fewer genes in the
        batch: a subset so dominated is dropped by :meth:`add` whenever it comes, or removed
        by the dominating one later, since a dominating subset is only ever replaced by one
        that dominates as well. Offering only these rows, in order, leaves the tracker as
        offering all of them would. Rows of NaN fitness are never candidates.

        Parameters
        ----------
        sizes : ndarray of int of shape (n_rows,)
            Genes of each subset.
        values : ndarray of shape (n_rows,)
            Their fitness.

        Returns
        -------
        ndarray of int64
        """
        sizes = np.asarray(sizes, dtype=np.int64)
        values = np.asarray(values, dtype=float)
        open_ = self.open(sizes, values)
        rows = np.flatnonzero(open_)
        if rows.size <= 1:
            return rows
        # a row that is not open closes every row of its size at or below its value, so
        # the rows left hold the batch's best of their sizes
        sizes, values = sizes[rows], values[rows]
        order = np.lexsort((-values, sizes))  # by size, the best first
        ordered = sizes[order]
        first = np.ones(rows.size, dtype=bool)
        first[1:] = ordered[1:] != ordered[:-1]
        group = np.cumsum(first) - 1
        tops = values[order][first]
        keep = values[order] == tops[group]
        if self.monotone:  # strictly above every smaller size of the batch
            below = np.maximum.accumulate(np.concatenate(([-np.inf], tops[:-1])))
            keep &= values[order] > below[group]
        return np.sort(rows[order[keep]])

    def open(self, sizes, values):
        """Whether subsets of ``sizes`` genes and fitness ``values`` (arrays) pass the tests
        of :meth:`add` against what is held: non-empty, not below the subset held at their
        size and (``monotone``) strictly above every held subset of fewer genes. A subset
        that fails them now fails them whenever it comes: what is held only gets better.

        Returns
        -------
        ndarray of bool
        """
        sizes = np.asarray(sizes, dtype=np.int64)
        values = np.asarray(values, dtype=float)
        place = np.searchsorted(self._sizes, sizes)  # held sizes below each row's
        held = np.full(sizes.size, -np.inf)  # the fitness held at each row's size
        if self._sizes.size:
            found = np.minimum(place, self._sizes.size - 1)
            same = self._sizes[found] == sizes
            held[same] = self._values[found[same]]
        open_ = (sizes > 0) & (values >= held)
        if self.monotone:
            open_ &= values > self._below[place]
        return open_

    def _put(self, size, value, packed, held):
        # equal fitness and size: the lower gene indices win, i.e. the larger packed bytes
        # (the first differing gene is set in the mask whose index list is lower)
        if held is not None and value == held[0] and packed <= held[1]:
            return
        self.best[size] = (value, packed)
        if self.monotone:
            for other in [s for s, (v, _) in self.best.items() if s > size and v <= value]:
                del self.best[other]
        self._index()

    def _index(self):
        # the sizes held, their fitness and the running best, for :meth:`open`
        self._sizes = np.array(sorted(self.best), dtype=np.int64)
        self._values = np.array([self.best[s][0] for s in self._sizes.tolist()])
        self._below = np.maximum.accumulate(np.concatenate(([-np.inf], self._values)))

    def state(self):
        """What a snapshot keeps of the tracker: ``n_genes``, ``monotone`` and its entries in
        increasing size (``sizes`` int64, ``fitness`` float64, ``packed``: uint8 array of
        shape (n_entries, ceil(n_genes / 8)) of the packed masks)."""
        entries = self.entries()
        width = (self.n_genes + 7) // 8
        return {"n_genes": self.n_genes, "monotone": self.monotone,
                "sizes": np.array([size for size, _, _ in entries], dtype=np.int64),
                "fitness": np.array([value for _, value, _ in entries], dtype=np.float64),
                "packed": np.frombuffer(b"".join(packed for _, _, packed in entries),
                                        dtype=np.uint8).reshape(-1, width)}

    @classmethod
    def from_state(cls, state):
        """The tracker :meth:`state` describes (ValueError if its arrays do not match)."""
        front = cls(state["n_genes"], state["monotone"])
        sizes, fitness, packed = state["sizes"], state["fitness"], state["packed"]
        if not sizes.shape == fitness.shape == packed.shape[:1] or packed.shape[1:] != (
                (front.n_genes + 7) // 8,):
            raise ValueError(f"front arrays of shapes {sizes.shape}, {fitness.shape} and "
                             f"{packed.shape} for {front.n_genes} genes")
        masks = np.unpackbits(packed, axis=1)
        if (not np.array_equal(masks[:, :front.n_genes].sum(axis=1), sizes)
                or masks[:, front.n_genes:].any() or np.unique(sizes).size != sizes.size):
            raise ValueError("front sizes that are not the sizes of its subsets, one each")
        if fitness.dtype != np.float64 or not ((fitness >= WORST_FITNESS)
                                               & (fitness <= 1)).all():
            raise ValueError(f"front fitness values outside [{WORST_FITNESS}, 1.0]")
        front.best = {size: (value, row.tobytes()) for size, value, row
                      in zip(sizes.tolist(), fitness.tolist(), packed)}
        front._index()
        return front

    def entries(self):
        """``[(size, fitness, packed bytes), ...]`` in increasing size."""
        return [(size, *self.best[size]) for size in sorted(self.best)]

    def masks(self):
        """``[(size, fitness, bool mask), ...]`` in increasing size."""
        return [(size, value, np.unpackbits(np.frombuffer(packed, dtype=np.uint8),
                                            count=self.n_genes).astype(bool))
                for size, value, packed in self.entries()]

    def merge(self, comm):
        """Make every rank's tracker the union of all ranks' (collective over ``comm``).

        Each rank contributes its entries as rows of ``16 + n_genes / 8`` bytes (size,
        fitness, packed mask); every rank adds every row, so the trackers end identical and
        equal to the one a single rank offered all those subsets would hold.
        """
        if comm.size == 1:
            return
        width = (self.n_genes + 7) // 8
        entries = self.entries()
        rows = np.zeros((len(entries), 16 + width), dtype=np.uint8)
        for row, (size, value, packed) in zip(rows, entries):
            row[:8] = np.array([size], dtype=np.int64).view(np.uint8)
            row[8:16] = np.array([value], dtype=np.float64).view(np.uint8)
            row[16:] = np.frombuffer(packed, dtype=np.uint8)
        table = comm.allgatherv(rows)
        for row in table:
            size = int(np.ascontiguousarray(row[:8]).view(np.int64)[0])
            value = float(np.ascontiguousarray(row[8:16]).view(np.float64)[0])
            if self.monotone and np.any((self._sizes < size) & (self._values >= value)):
                continue
            held = self.best.get(size)
            if held is None or value >= held[0]:
                self._put(size, value, bytes(row[16:]), held)


def pareto_front(points):
    """Indices of the non-dominated points among (correct, size) pairs, in increasing size.

    A point is dominated when another has at least its correct count with fewer genes, or
    more correct with as many genes; of equal points the first is kept.

    Parameters
    ----------
    points : sequence of (int, int)
        ``(correct, size)`` per point.

    Returns
    -------
    list of int
    """
    order = sorted(range(len(points)), key=lambda i: (points[i][1], -points[i][0], i))
    kept, best = [], None
    for i in order:
        correct = points[i][0]
        if best is None or correct > best:
            kept.append(i)
            best = correct
    return kept
