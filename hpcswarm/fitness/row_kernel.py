"""Compiled 1-NN decision of a block of held-out rows: one pass over each row's distances.

The numpy path of a block (:meth:`hpcswarm.fitness.rowblocks.HeldOutRows.correct` after
:func:`~hpcswarm.fitness.distances.gram_sq_distances` or an incremental update) passes about ten
times over the block's (n_rows, n_samples) distances: finishing the Gram form (three
passes), setting the own fold to ``inf``, the minimum, the row limits repeated along the row,
the comparison, the counts. At 10,000 samples that costs as much as the Gram product itself.
Here a compiled scan (numba) makes each row's distances from the product (or the cached
distances plus their change), writes them back (the cached state's rows, or the block the
numpy path would hold: the same operations in the same order, so the same bits), and finds
the row's nearest column and its near set while the row is in cache; a second pass over the
row, still in cache, counts the near set.

Only k = 1 is compiled. A row whose near set the bound leaves open (more than its nearest
column within ``b + 2 e``, see :func:`~hpcswarm.fitness.knn.knn_predict`) is reported, for
the caller to decide it exactly by the numpy path; the others are decided as
:func:`~hpcswarm.fitness.knn.knn_predict` decides them (the first smallest distance wins).
``tests/test_fitness_row_kernel.py`` checks both paths give the same distances and counts.
"""

import numpy as np

from hpcswarm.fitness.compiled import AVAILABLE, Kernel

__all__ = ["AVAILABLE", "gram_rows_1nn", "updated_rows_1nn"]


def _near_count(row, limit):
    near = 0
    for j in range(row.size):
        if row[j] <= limit:
            near += 1
    return near


def _gram_rows(block, rows, sq, fold, codes, slack, widest, decide, unsettled, tally, counts):
    """Finish the Gram form of ``block`` in place, ``inf`` on each row's own fold; with
    ``decide``, add the correct 1-NN predictions of the rows the bound settles to
    ``counts[tally[sample]]``."""
    n_rows, n = block.shape
    for r in range(n_rows):
        i = rows[r]
        own = fold[i]
        sq_i = sq[i]
        row = block[r]
        nearest = 0
        smallest = np.inf
        for j in range(n):
            value = (row[j] * -2.0 + sq[j]) + sq_i
            if fold[j] == own:
                value = np.inf
            row[j] = value
            if value < smallest:
                smallest = value
                nearest = j
        if decide:
            if _near_count(row, smallest + 2.0 * (slack[i] + widest)) != 1:
                unsettled[r] = True
            elif codes[nearest] == codes[i]:
                counts[tally[i]] += 1


def _updated_rows(block, cached, rows, codes, slack, widest, unsettled, tally, counts):
    """``block += cached`` (the change of the distances plus the cached ones), and the
    correct 1-NN predictions of the rows the bound settles added to ``counts[tally[sample]]``."""
    n_rows, n = block.shape
    for r in range(n_rows):
        i = rows[r]
        row = block[r]
        base = cached[r]
        nearest = 0
        smallest = np.inf
        for j in range(n):
            value = row[j] + base[j]
            row[j] = value
            if value < smallest:
                smallest = value
                nearest = j
        if _near_count(row, smallest + 2.0 * (slack[i] + widest)) != 1:
            unsettled[r] = True
        elif codes[nearest] == codes[i]:
            counts[tally[i]] += 1


_near_count_kernel = Kernel(_near_count, inline="always")
gram_rows_1nn = Kernel(_gram_rows, calls={"_near_count": _near_count_kernel})
"""``_gram_rows`` compiled at its first call (numba is then imported)."""
updated_rows_1nn = Kernel(_updated_rows, calls={"_near_count": _near_count_kernel})
"""``_updated_rows`` compiled at its first call."""
