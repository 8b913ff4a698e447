"""What one rank evaluated in a round, before the ranks settle it.

A rank's ledger keeps the keys of its subsets, its computed evaluations and its first
strictly best subset in scan order; :func:`hpcswarm.swarm.engine.exchange.settle_round` makes them
common to every rank (the best-subset order of :mod:`hpcswarm.swarm.engine.ordering`).
"""

import numpy as np

from hpcswarm.fitness.archive import flipped_keys, mask_keys
from hpcswarm.swarm.engine.ordering import FEWER_GENES, Ordering


def flipped(mask, genes):
    """A copy of the bool ``mask`` with the genes ``genes`` (distinct indices) flipped."""
    mask = np.array(mask, dtype=bool)
    mask[genes] = ~mask[genes]
    return mask


class RoundLedger:
    """What one rank evaluated in the current round, before the round is settled
    (:meth:`~hpcswarm.swarm.engine.evaluation.EvaluationService.settle`).

    Keeps the 16-byte keys of the subsets (for distinct-subset counting), the number of
    computed evaluations, and the first strictly best subset in this rank's scan order,
    with the phase (0: swarm evaluation, 1: local search) and the particle (a swarm
    evaluation's; 0 for a try) that found it. Memory is 16 bytes per subset plus one mask,
    however many local-search tries the round makes.

    Parameters
    ----------
    ordering : Ordering
        The order of subsets; the best's size is kept as it compares sizes
        (:meth:`~hpcswarm.swarm.engine.ordering.Ordering.tie_sizes`), so that the settlement
        of the round orders the ranks' bests alike.
    """

    def __init__(self, ordering: Ordering = FEWER_GENES):
        self.ordering = ordering
        self._key_blocks = []
        self.computed = 0
        self.best = None  # (fitness, size as the order compares it, phase, particle, mask)

    @property
    def keys(self):
        """The keys of the subsets in the order they were added, ndarray of uint8 of shape
        (n_subsets, 16)."""
        if not self._key_blocks:
            return np.zeros((0, 16), dtype=np.uint8)
        return np.concatenate(self._key_blocks)

    def add_many(self, masks, values, computed, phase, particles):
        """Account for evaluated subsets of this rank (rows of ``masks``) in row order: their
        fitness ``values``, whether each was ``computed`` (an evaluation), the ``phase``, the
        ``particles`` whose subsets they are (increasing)."""
        masks = np.asarray(masks, dtype=bool)
        self._tally(mask_keys(masks), values, np.count_nonzero(masks, axis=1), computed, phase,
                    masks.__getitem__, particles)

    def add_flips(self, mask, flips, values, sizes, computed, phase):
        """Account for the subsets ``mask`` with each row of ``flips`` flipped (``sizes``
        genes each), as ``add_many`` of those subsets, which are not built."""
        self._tally(flipped_keys(mask, flips), values, sizes, computed, phase,
                    lambda row: flipped(mask, flips[row]), np.zeros(len(sizes), dtype=np.int64))

    def _tally(self, keys, values, sizes, computed, phase, row_mask, particles):
        """Keys and evaluations of every row; the first best row of known (not NaN) fitness."""
        if len(keys) == 0:
            return
        self._key_blocks.append(keys)
        self.computed += int(np.asarray(computed).sum())
        values = np.asarray(values, dtype=float)
        known = np.flatnonzero(~np.isnan(values))
        if known.size == 0:
            return
        sizes = self.ordering.tie_sizes(sizes)
        first = int(known[np.lexsort((sizes[known], -values[known]))[0]])
        value, size = float(values[first]), int(sizes[first])
        if self.best is None or self.ordering.better(value, size, self.best[0], self.best[1]):
            self.best = (value, size, int(phase), int(particles[first]),
                         np.array(row_mask(first), dtype=bool))
