"""Each particle's distance state kept between rounds: a new subset scored from the previous one.

The fast fitness evaluation of PSO-LSRG (Tran, Xue, Zhang and Nguyen 2016, Sect. 3.2) keeps
the squared distances of a subset and updates them by the genes that enter and leave
(:mod:`hpcswarm.fitness.incremental`). A swarm's particles move few genes a round once they
settle (a handful of percent of their subset after some rounds), so a particle's new subset
is scored here from the state of its previous one: one product of the flipped genes instead
of one of every selected gene. The update carries the drift bound of
:mod:`hpcswarm.fitness.incremental`, so every neighbour decision the drift could change is
recomputed exactly and the counts, hence the fitness, are those of a full evaluation.

A move is scored from the state where that is cheaper (:func:`worth_moving`); otherwise,
and for a particle without a state, by one full product that also writes the new state,
as long as the states fit ``max_states`` (the cache budget divided by
:func:`~hpcswarm.fitness.incremental.state_bytes`); the particles beyond it are evaluated in
full as without a cache. Which path scores a subset never changes its value.
"""

from dataclasses import dataclass, fields
from fractions import Fraction

import numpy as np

MOVE_OVERHEAD_GENES = 8
"""The pass of a move over the cached distances (adding the change, deciding each row,
:mod:`hpcswarm.fitness.move_kernel`) beyond what a full product's own pass costs, in genes
of a full product: a move of F genes costs about as much as a product of
``F + MOVE_OVERHEAD_GENES`` genes."""

MOVE_SHARE = Fraction(3, 4)
"""The largest move, as a share of the subset, scored from the state: its product (blocks
of rows by the flipped genes, the upper triangle where the rows are every sample) runs at
the speed of a full product's Gram product, but a move also gathers, signs and sums its
flipped genes' values and passes over the state, so it costs more per gene. Measured (1,000
samples, one thread, 2026-12-06, the 2-core VM at load 3): a move of F genes of a subset of
600 took 5.8, 9.1, 11.8 and 14.9 ms for F = 180, 300, 420, 540, the full product 13.6 to 14.1
ms; of 1,500: 12.9, 20.8, 28.8 and 37.7 ms for F = 450 to 1,350, the full product 32 ms."""

REFRESH_FLIPS = 8
"""A state is rebuilt by a full product once the genes flipped since its last full product
exceed this many times its size: the drift bound (and with it the rows refined exactly)
grows with every move, the full product starts it again from the rounding of one product."""


def worth_moving(n_flipped, n_selected, flipped_since_full):
    """Whether a move of ``n_flipped`` genes to a subset of ``n_selected`` is scored from the
    state (else by a full product): ``n_flipped + MOVE_OVERHEAD_GENES`` at most
    :data:`MOVE_SHARE` of ``n_selected`` (both are products of the same rows, symmetric
    where the rows are every sample: a full product one Gram product, a move the upper
    triangle of its change, :mod:`hpcswarm.fitness.move_kernel`), and the state not due for
    a rebuild (:data:`REFRESH_FLIPS`)."""
    cheaper = MOVE_SHARE.denominator * (n_flipped + MOVE_OVERHEAD_GENES) <= (
        MOVE_SHARE.numerator * n_selected)
    return cheaper and flipped_since_full + n_flipped <= REFRESH_FLIPS * n_selected


@dataclass
class MoveCounts:
    """What the particles' evaluations cost, in subsets and in genes of products (each gene
    of a product is ``n_rows x n_samples`` multiply-adds).

    Attributes
    ----------
    moved, rebuilt, uncached, repeated : int
        Subsets scored from a state; by a full product that wrote a state; by a full
        product without state (beyond the budget); equal to the state's own subset (its
        value kept, no product).
    moved_genes, full_genes : int
        Genes flipped by the moves; genes of the full products.
    selected_genes : int
        Genes of every subset scored (what evaluating each in full would have cost).
    """

    moved: int = 0
    rebuilt: int = 0
    uncached: int = 0
    repeated: int = 0
    moved_genes: int = 0
    full_genes: int = 0
    selected_genes: int = 0

    def as_dict(self):
        """The counts as a plain dict."""
        return {field.name: getattr(self, field.name) for field in fields(self)}


@dataclass
class _Entry:
    """A particle's cached state, the fitness of its subset and the genes flipped since its
    last full product."""

    state: object
    value: float
    flipped: int = 0


class ParticleStates:
    """The cached distance states of a rank's particles, at most ``max_states`` of them.

    Parameters
    ----------
    fitness : SubsetFitness
    max_states : int
        States this rank may hold (0: every subset is evaluated in full, as without cache).
        On sample shards every shard of a particle group must be given the same number, so
        that they make the same calls in the same order (each call sums the shards' counts).

    Attributes
    ----------
    counts : MoveCounts
    """

    def __init__(self, fitness, max_states):
        self.fitness = fitness
        self.max_states = int(max_states)
        self.counts = MoveCounts()
        self._entries = {}

    def __len__(self):
        return len(self._entries)

    def clear(self):
        """Drop every state (the particles were dealt anew)."""
        self._entries = {}

    def values(self, particles, masks):
        """Fitness of each row of ``masks``, the subset of the particle of the same row of
        ``particles`` (ints; each particle at most once), the states moving along.

        Returns
        -------
        ndarray of float64 of shape (len(particles),)
            Without room for any state (``max_states`` 0), ``fitness.many(masks)``: the
            full products of an evaluation without cache, one per distinct subset.
        """
        if self.max_states == 0:
            sizes = np.count_nonzero(masks, axis=1)
            self.counts.uncached += int(np.count_nonzero(sizes))
            self.counts.full_genes += int(sizes.sum())
            self.counts.selected_genes += int(sizes.sum())
            return self.fitness.many(masks)
        return np.array([self._value(int(particle), mask)
                         for particle, mask in zip(particles, masks)], dtype=np.float64)

    def _value(self, particle, mask):
        size = int(np.count_nonzero(mask))
        if size == 0:
            return float(self.fitness(mask))  # the empty subset: no classifier, no product
        counts = self.counts
        counts.selected_genes += size
        entry = self._entries.get(particle)
        if entry is not None:
            genes = np.flatnonzero(mask != entry.state.mask)
            if genes.size == 0:
                counts.repeated += 1
                return entry.value
            if worth_moving(genes.size, size, entry.flipped):
                entry.value = float(self.fitness.move(entry.state, genes))
                entry.flipped += int(genes.size)
                counts.moved += 1
                counts.moved_genes += int(genes.size)
                return entry.value
        counts.full_genes += size
        if entry is None and len(self._entries) >= self.max_states:
            counts.uncached += 1
            return float(self.fitness(mask))
        if entry is not None:  # rebuilt in the old state's memory (new memory, even mapped
            # with its pages faulted in at once, costs 2.6 ms per 8 MB on the 2-core VM, 0.3 ms
            # to rewrite); dropped first, so that a failed product leaves no half-written state
            del self._entries[particle]
        value, state = self.fitness.scored_state(mask, None if entry is None else entry.state)
        self._entries[particle] = _Entry(state, float(value))
        counts.rebuilt += 1
        return float(value)
