"""Compiled redundancy pass of VLPSO's local search: one call per try, the same SU values.

The flip rule of :func:`~hpcswarm.swarm.methods.vlpso.local_search.flip_set` (the authors'
``KNNopt.flip``, Tran, Xue & Zhang 2019) goes down a try's drawn selected genes by
decreasing relevance and compares each gene still kept with the later ones still kept,
``SU(i, j) > SU(j, C)``, which numpy makes one small call per kept gene
(:func:`~hpcswarm.swarm.methods.vlpso.symmetric_uncertainty.mutual_symmetric_uncertainty`). Here the
whole pass is one compiled loop, and each SU is computed with numpy's own arithmetic, so
the values, and the genes kept, are the same bit for bit:

* the joint counts of genes ``i`` and ``j`` are laid out as numpy lays them out, cell
  ``(a, b)`` at ``a k_y + b``, with ``k_x`` the intervals of ``i`` and ``k_y`` the most
  intervals among the genes ``i`` is compared with in that step;
* each cell's ``p log2 p`` (``p = count / n_samples``, every row's total) is read from a
  table of the ``n_samples + 1`` possible counts that numpy computed
  (:func:`entropy_terms`, the operations of ``_row_entropies``);
* the cells are summed in the order of numpy's pairwise summation of a row
  (:func:`_pairwise_sum`), after numpy's reduction identity 0.0.

A whole draw can be one compiled call too (:data:`drawn_flips`): the genes taken from the
draw's permutation, their mean relevance summed as numpy sums it, the stable sort by
decreasing relevance, the pass above and the genes switched on, so that a try's only numpy
call is the permutation itself (which consumes the generator as before). A draw that takes
a gene not yet in the table is left to numpy, which learns it in the batch it always did.

``tests/test_vlpso_local_search.py`` checks the SU values equal to numpy's, the genes kept
equal to the pair-by-pair pass, and the flip set of a draw equal to the one numpy gives.
"""

import numpy as np

from hpcswarm.fitness.compiled import AVAILABLE, Kernel

__all__ = ["AVAILABLE", "drawn_flips", "entropy_terms", "kept_genes", "pair_su"]

BLOCK = 128
"""Longest run numpy sums with eight accumulators before splitting it in two (its
``PW_BLOCKSIZE``)."""

STACK = 256
"""Entries of the explicit stack of :func:`_pairwise_sum` (each split of a run longer than
:data:`BLOCK` halves it: 3 entries a level, far more levels than any joint table has)."""


def entropy_terms(n_samples: int) -> np.ndarray:
    """``p log2 p`` for ``p = c / n_samples``, ``c = 0 .. n_samples`` (0 for ``c = 0``),
    computed by the numpy operations of
    :func:`~hpcswarm.swarm.methods.vlpso.symmetric_uncertainty._row_entropies` on a row of counts
    whose
    total is ``n_samples``: ndarray of float64 of shape (n_samples + 1,)."""
    counts = np.arange(int(n_samples) + 1, dtype=float)[None]
    totals = np.full((1, 1), float(n_samples))
    p = np.divide(counts, totals, out=np.zeros(counts.shape), where=totals > 0)
    logs = np.log2(p, out=np.zeros(p.shape), where=p > 0)
    return (p * logs)[0]


def _block_sum(values, start, n):
    """numpy's pairwise sum of ``values[start:start + n]`` for ``n <= BLOCK``: in order
    below 8 values, else eight strided accumulators added in pairs, then the rest."""
    if n < 8:
        total = -0.0
        for i in range(n):
            total += values[start + i]
        return total
    r0, r1, r2, r3 = values[start], values[start + 1], values[start + 2], values[start + 3]
    r4, r5, r6, r7 = values[start + 4], values[start + 5], values[start + 6], values[start + 7]
    i = 8
    stop = n - n % 8
    while i < stop:
        r0 += values[start + i]
        r1 += values[start + i + 1]
        r2 += values[start + i + 2]
        r3 += values[start + i + 3]
        r4 += values[start + i + 4]
        r5 += values[start + i + 5]
        r6 += values[start + i + 6]
        r7 += values[start + i + 7]
        i += 8
    total = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        total += values[start + i]
        i += 1
    return total


def _pairwise_sum(values, n):
    """numpy's pairwise sum of ``values[:n]`` (``pairwise_sum`` of its ``loops_utils``): a run
    longer than :data:`BLOCK` is split at half its length rounded down to a multiple of 8 and
    the two halves' sums added; the recursion runs on an explicit stack."""
    if n <= BLOCK:
        return _block_sum(values, 0, n)
    starts = np.empty(STACK, dtype=np.int64)
    sizes = np.empty(STACK, dtype=np.int64)
    joins = np.empty(STACK, dtype=np.bool_)
    partial = np.empty(STACK)
    top, done = 0, 0
    starts[0], sizes[0], joins[0] = 0, n, False
    while top >= 0:
        start, size, join = starts[top], sizes[top], joins[top]
        top -= 1
        if join:  # both halves summed: the right one on top
            done -= 1
            partial[done - 1] = partial[done - 1] + partial[done]
        elif size <= BLOCK:
            partial[done] = _block_sum(values, start, size)
            done += 1
        else:
            half = size // 2
            half -= half % 8
            starts[top + 1], sizes[top + 1], joins[top + 1] = start, size, True
            starts[top + 2], sizes[top + 2], joins[top + 2] = start + half, size - half, False
            starts[top + 3], sizes[top + 3], joins[top + 3] = start, half, False
            top += 3
    return partial[0]


def _pair_su(bins, x, y, k_y, cells, h_x, h_y, terms, counts, values):
    """SU between genes ``x`` and ``y`` (rows of ``bins``) over a joint table of ``cells``
    cells laid out with ``k_y`` columns, as
    :func:`~hpcswarm.swarm.methods.vlpso.symmetric_uncertainty.mutual_symmetric_uncertainty`
    computes it;
    ``counts`` and ``values`` are scratch of at least ``cells`` entries."""
    for c in range(cells):
        counts[c] = 0
    for s in range(bins.shape[1]):
        counts[np.int64(bins[x, s]) * k_y + np.int64(bins[y, s])] += 1
    for c in range(cells):
        values[c] = terms[counts[c]]
    joint = -(0.0 + _pairwise_sum(values, cells))
    total = h_x + h_y
    if total > 0:
        return 2.0 * (total - joint) / total
    return 0.0


def _kept(ones, relevance, bins, entropies, terms):
    """The drawn selected genes ``ones`` (by decreasing ``relevance``) that the flip rule
    keeps: for each gene still kept, every later kept gene of relevance 0 goes, and every
    later kept gene ``j`` with ``SU(i, j) > relevance[j]``; ndarray of bool."""
    m = ones.size
    kept = np.ones(m, dtype=np.bool_)
    intervals = np.empty(m, dtype=np.int64)
    widest = 1
    for a in range(m):
        most = 0
        for s in range(bins.shape[1]):
            if bins[ones[a], s] > most:
                most = bins[ones[a], s]
        intervals[a] = np.int64(most) + 1
        widest = max(widest, intervals[a])
    counts = np.empty(widest * widest, dtype=np.int64)
    values = np.empty(widest * widest)
    for i in range(m - 1):
        if not kept[i]:
            continue
        k_y = 0
        for j in range(i + 1, m):
            if kept[j]:
                if relevance[j] == 0:
                    kept[j] = False
                elif intervals[j] > k_y:
                    k_y = intervals[j]
        if k_y == 0:
            continue
        cells = intervals[i] * k_y
        for j in range(i + 1, m):
            if kept[j]:
                su = _pair_su(bins, ones[i], ones[j], k_y, cells, entropies[ones[i]],
                              entropies[ones[j]], terms, counts, values)
                if su > relevance[j]:
                    kept[j] = False
    return kept


def _drawn_flips(shuffled, current, n_ones, n_zeros, known, class_su, bins, entropies,
                 terms):
    """The flip set of one draw, in one call: the first ``n_ones`` selected and ``n_zeros``
    unselected genes (``current``) of the permutation ``shuffled``, as
    :func:`~hpcswarm.swarm.methods.vlpso.local_search.taken_genes` takes them, then the flip
    rule of :func:`~hpcswarm.swarm.methods.vlpso.local_search.flip_set` on them: the mean
    of the selected genes' ``class_su`` as ``ndarray.mean`` sums it (numpy's pairwise sum
    after its identity 0.0, divided by the count), the selected genes by decreasing
    ``class_su``, ties in draw order (a stable sort), :func:`_kept` over them, and the
    unselected genes above the mean switched on. No gene selected drawn: no flip.

    Returns (flips, learned): the flip set, ndarray of int64, sorted; ``learned`` false,
    and no flip set, where a gene taken is not ``known`` (its table row is not filled in).
    """
    ones = np.empty(n_ones, dtype=np.int64)
    zeros = np.empty(n_zeros, dtype=np.int64)
    m, z = 0, 0
    for gene in shuffled:
        if m == n_ones and z == n_zeros:
            break
        if current[gene]:
            if m < n_ones:
                ones[m] = gene
                m += 1
        elif z < n_zeros:
            zeros[z] = gene
            z += 1
    for a in range(m):
        if not known[ones[a]]:
            return np.empty(0, dtype=np.int64), False
    for b in range(z):
        if not known[zeros[b]]:
            return np.empty(0, dtype=np.int64), False
    if m == 0:
        return np.empty(0, dtype=np.int64), True
    relevance = np.empty(m)
    for a in range(m):
        relevance[a] = class_su[ones[a]]
    mean = (0.0 + _pairwise_sum(relevance, m)) / m
    order = np.argsort(-relevance, kind="mergesort")
    ones = ones[:m][order]
    kept = _kept(ones, relevance[order], bins, entropies, terms)
    flips = np.empty(m + z, dtype=np.int64)
    f = 0
    for a in range(m):
        if not kept[a]:
            flips[f] = ones[a]
            f += 1
    for b in range(z):
        if class_su[zeros[b]] > mean:
            flips[f] = zeros[b]
            f += 1
    return np.sort(flips[:f]), True


def _one_pair(bins, x, y, k_y, cells, h_x, h_y, terms):
    """:func:`_pair_su` with its own scratch."""
    counts = np.empty(cells, dtype=np.int64)
    values = np.empty(cells)
    return _pair_su(bins, x, y, k_y, cells, h_x, h_y, terms, counts, values)


_block_sum_kernel = Kernel(_block_sum, inline="always")
_pairwise_sum_kernel = Kernel(_pairwise_sum, calls={"_block_sum": _block_sum_kernel})
_pair_su_kernel = Kernel(_pair_su, calls={"_pairwise_sum": _pairwise_sum_kernel})
kept_genes = Kernel(_kept, calls={"_pair_su": _pair_su_kernel})
"""Compiled :func:`_kept`: ``kept_genes(ones, relevance, bins, entropies, terms)``."""
drawn_flips = Kernel(_drawn_flips, calls={"_pairwise_sum": _pairwise_sum_kernel,
                                           "_kept": kept_genes})
"""Compiled :func:`_drawn_flips`: ``drawn_flips(shuffled, current, n_ones, n_zeros, known,
class_su, bins, entropies, terms)``."""
pair_su = Kernel(_one_pair, calls={"_pair_su": _pair_su_kernel})
"""Compiled SU of one pair: ``pair_su(bins, x, y, k_y, cells, h_x, h_y, terms)``."""
