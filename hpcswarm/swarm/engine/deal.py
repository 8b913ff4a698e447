"""Which particle group evaluates which particle: a deal by expected cost.

A round of a parallel search lasts as long as its busiest particle group
(:mod:`hpcswarm.swarm.engine.loop`). Particles of equal expected cost are dealt in contiguous
blocks of equal count (:func:`hpcswarm.comm.block_range`). Particles whose costs differ, such
as VLPSO's divisions of growing length (Tran, Xue & Zhang 2019, Sec. III-B), are dealt by
:func:`deal_with_slots` (:func:`deal_by_cost`): the longest-processing-time rule (Graham
1969), each particle in decreasing order of cost to the group it leaves least loaded, so that
no group's cost exceeds the mean by more than the costliest single particle. The arithmetic
is on integers and the ties are broken by particle and group index, so every rank computes
the same deal.

A particle's cost is that of evaluating its subset: a Gram product over its selected genes
(:func:`full_costs`), or, for a particle whose distance state a group keeps between rounds
(:class:`~hpcswarm.fitness.moves.ParticleStates`), the product over the genes its move
flipped (:func:`moved_costs`). A group keeps at most ``cache_slots`` states; the deal gives
each group's slots to its costliest particles, and the evaluation service scores a group's
particles in that order (:meth:`Deal.priority`), so that those are the ones it caches.
"""

from dataclasses import dataclass

import numpy as np

from hpcswarm.comm import block_counts
from hpcswarm.fitness.moves import MOVE_OVERHEAD_GENES, worth_moving

FLIPPED_SHARE = 10
"""A cached particle's move is costed as flipping one gene in this many of its subset: once a
swarm settles, the median share of a particle's subset that changes between two rounds is
below a tenth (VLPSO on SRBCT: 61 % in round 1, 10 % by round 8, 2-4 % from round 20)."""


def full_costs(selected):
    """Cost of scoring subsets of ``selected`` genes by a full product: ``selected + 1`` (the
    product grows with the genes, the one is the subset's own pass over the held-out rows),
    int64 array."""
    return np.asarray(selected, dtype=np.int64) + 1


def moved_costs(selected):
    """Cost of scoring subsets of ``selected`` genes from their particles' cached states: a
    move of ``selected // FLIPPED_SHARE`` genes (:data:`FLIPPED_SHARE`) with the passes over
    the cached distances (:data:`~hpcswarm.fitness.moves.MOVE_OVERHEAD_GENES`), or the full
    product where :func:`~hpcswarm.fitness.moves.worth_moving` would take it; int64 array."""
    selected = np.asarray(selected, dtype=np.int64)
    flipped = selected // FLIPPED_SHARE
    moved = [worth_moving(int(f), int(s), 0) for f, s in zip(flipped, selected)]
    return np.where(moved, flipped + MOVE_OVERHEAD_GENES + 1, full_costs(selected))


def deal_with_slots(costs, n_groups, cached_costs=None, cache_slots=0):
    """The group of each particle, dealt by the longest-processing-time rule (Graham 1969).

    Particles are taken in decreasing order of ``costs`` (ties: the lower index first), each
    to the group whose load it raises the least (ties: the lower group); in a group that still
    has one of its ``cache_slots`` free, a particle costs its ``cached_costs`` entry and takes
    the slot. Every group's load is then at most the mean load plus the largest single cost.

    Parameters
    ----------
    costs : array-like of int of shape (n_particles,)
        Cost of each particle evaluated in full.
    n_groups : int
    cached_costs : array-like of int of shape (n_particles,), optional
        Cost of each particle evaluated from its cached state, at most its ``costs`` entry
        (default: ``costs``).
    cache_slots : int
        States each group keeps (0: none).

    Returns
    -------
    owner : ndarray of int64 of shape (n_particles,)
        The group of each particle. Integer arithmetic: every rank computes the same.
    slotted : ndarray of bool of shape (n_particles,)
        Whether the particle took one of its group's cache slots.
    """
    costs = np.asarray(costs, dtype=np.int64)
    cached = costs if cached_costs is None else np.asarray(cached_costs, dtype=np.int64)
    owner = np.zeros(costs.size, dtype=np.int64)
    slotted = np.zeros(costs.size, dtype=bool)
    loads = np.zeros(int(n_groups), dtype=np.int64)
    slots = np.full(int(n_groups), int(cache_slots), dtype=np.int64)
    for particle in np.lexsort((np.arange(costs.size), -costs)).tolist():
        added = np.where(slots > 0, cached[particle], costs[particle])
        group = int(np.argmin(loads + added))  # the first of equal loads
        owner[particle], slotted[particle] = group, slots[group] > 0
        loads[group] += added[group]
        slots[group] -= slots[group] > 0
    return owner, slotted


def deal_by_cost(costs, n_groups, cached_costs=None, cache_slots=0):
    """The group of each particle under :func:`deal_with_slots` (same parameters)."""
    return deal_with_slots(costs, n_groups, cached_costs, cache_slots)[0]


@dataclass(frozen=True)
class Deal:
    """Particles owned by the ranks (particle groups) of a communicator: any assignment, each
    rank's particles taken in increasing index.

    Attributes
    ----------
    owner : ndarray of int64 of shape (n_items,)
        The rank of each particle, the same on every rank.
    size, rank : int
    order : ndarray of int64 of shape (n_items,)
        Each particle's place in the deal (0 first): the order in which its rank scores its
        particles so that its cached states go to the particles the deal counted cached
        (:func:`deal_by_cost`); particle order for a deal in blocks.
    """

    owner: np.ndarray
    size: int
    rank: int
    order: np.ndarray

    @classmethod
    def blocks(cls, n_items, size, rank):
        """Contiguous blocks of equal count (:func:`hpcswarm.comm.block_range`): rank order
        is particle order."""
        owner = np.repeat(np.arange(size, dtype=np.int64), block_counts(n_items, size))
        return cls(owner, int(size), int(rank), np.arange(n_items, dtype=np.int64))

    @classmethod
    def by_cost(cls, selected, size, rank, cache_slots=0):
        """:func:`deal_by_cost` of particles expected to select ``selected`` genes each
        (:func:`full_costs`, :func:`moved_costs` for the ``cache_slots`` each rank keeps)."""
        selected = np.asarray(selected, dtype=np.int64)
        full = full_costs(selected)
        owner = deal_by_cost(full, size, moved_costs(selected), cache_slots)
        return cls(owner, int(size), int(rank), np.lexsort((np.arange(full.size), -full)))

    @property
    def n_items(self):
        return int(self.owner.size)

    def same_owners(self, other) -> bool:
        """Whether ``other`` (a Deal or None) gives every particle to the same rank."""
        return other is not None and np.array_equal(self.owner, other.owner)

    def local(self):
        """This rank's particles, increasing, ndarray of int64 (maybe empty)."""
        return np.flatnonzero(self.owner == self.rank)

    def owned(self, indices):
        """The entries of the sorted global ``indices`` that this rank owns."""
        indices = np.asarray(indices, dtype=np.int64)
        return indices[self.owner[indices] == self.rank]

    def counts(self, indices):
        """How many of the global ``indices`` each rank owns, int64 array of length size."""
        return np.bincount(self.owner[np.asarray(indices, dtype=np.int64)],
                           minlength=self.size).astype(np.int64)

    def priority(self, particles):
        """Positions that put ``particles`` in the order of the deal (:attr:`order`)."""
        rank_in_deal = np.empty(self.n_items, dtype=np.int64)
        rank_in_deal[self.order] = np.arange(self.n_items)
        return np.argsort(rank_in_deal[np.asarray(particles, dtype=np.int64)], kind="stable")

    def allgather(self, comm, rows, indices):
        """Every rank's rows of the sorted global ``indices`` (collective), in index order.

        ``rows`` holds this rank's rows of :meth:`owned` ``(indices)``, in order; one
        allgatherv, whose rank-ordered rows are put back in particle order.
        """
        owners = self.owner[np.asarray(indices, dtype=np.int64)]
        table = comm.allgatherv(rows, counts=np.bincount(owners, minlength=self.size))
        ordered = np.empty_like(table)
        ordered[np.argsort(owners, kind="stable")] = table
        return ordered
