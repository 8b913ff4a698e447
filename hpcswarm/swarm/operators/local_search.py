"""Local search on new pbests (Tran, Xue, Zhang & Nguyen 2016, Sec. 3.1-3.2).

:func:`local_search` is the search around one subset; :class:`LocalSearch` is the mechanism
of PSO-LS and PSO-LSRG that runs it on every new pbest of a round, the searches dealt evenly
over the ranks.
"""

import numpy as np

from hpcswarm.params import Param
from hpcswarm.swarm.engine.draws import sorted_choices
from hpcswarm.swarm.engine.exchange import balanced_blocks, ship
from hpcswarm.swarm.engine.ordering import beats
from hpcswarm.swarm.engine.state import RNG_STATE_BYTES, pack_rng, unpack_rng
from hpcswarm.swarm.operators.mechanisms import Mechanism

FIRST_BLOCK = 8
"""Tries scored at once after an improvement; the block doubles while none improves."""


def local_search(fitness, mask, value, tries, observe=None, needed=None):
    """Flip-based local search around one subset (Tran et al. Sec. 3.1-3.2).

    Each try flips ``n_flip`` distinct random genes of the current subset and is scored by
    the fitness engine's incremental path; a better try (higher fitness, then fewer genes)
    is applied and becomes the current subset. The result is never worse than the input.

    The tries' genes come from the particle's stream whatever their outcomes, so the caller
    draws them all first (:func:`draw_tries`: the numbers of
    ``np.sort(rng.choice(n_genes, n_flip, replace=False))`` one try after the other). The
    tries are scored in blocks against the current subset (``fitness.flips``); the
    first better try of a block is applied and the tries after it are scored again from
    the new subset. Blocks start at :data:`FIRST_BLOCK` scored tries after an improvement
    and double while none improves (early searches improve about every 10 tries, late
    ones hardly ever). Only the tries up to and including the improvement are observed,
    so the subsets tried and their order are those of the one-at-a-time loop.

    A try is scored only if it could matter: if its highest possible fitness
    (``fitness.highest``, every prediction correct) beats the current subset, or if
    ``needed`` asks for it. The others (once a subset has every prediction right, nearly
    all tries: 2% flips of a small subset add genes) are decided without their distances:
    they cannot be better, so the loop's path does not depend on them; they are observed
    with the fitness NaN and, as in the loop, count as evaluations. The distance state of
    the subset is made only when a first try is scored.

    Parameters
    ----------
    fitness : SubsetFitness
    mask : ndarray of shape (n_genes,), bool
        Starting subset (a new pbest).
    value : float
        Its fitness.
    tries : ndarray of int of shape (n_tries, n_flip)
        The genes each try flips, distinct and sorted in each row (:func:`draw_tries`).
    observe : callable, optional
        ``observe(mask, flips, values, sizes)`` for the subsets tried: ``mask`` (not to be
        kept: it changes) with each row of ``flips`` flipped, in the order of the tries,
        their fitness (NaN where not scored) and their sizes.
    needed : callable, optional
        ``needed(sizes, highest)``: whether tries of those sizes and highest possible
        fitness must be scored even when they cannot beat the current subset (ndarray of
        bool), e.g. because they could enter a front of subsets.

    Returns
    -------
    mask : ndarray of shape (n_genes,), bool
    value : float
    flipped : ndarray of shape (n_genes,), bool
        Genes whose selection differs from the input.
    """
    current = np.array(mask, dtype=bool)
    size = int(current.sum())
    n_tries, n_flip = tries.shape
    state = None  # made when a first try is scored
    start, block = 0, FIRST_BLOCK
    while start < n_tries:
        rest = tries[start:]
        sizes = size + n_flip - 2 * current[rest].sum(axis=1)
        highest = fitness.highest(sizes)
        wanted = beats(highest, sizes, value, size)
        if needed is not None:
            wanted |= needed(sizes, highest)
        scored = np.flatnonzero(wanted)[:block]
        values = np.full(rest.shape[0], np.nan)
        if scored.size:
            state = fitness.new_state(current) if state is None else state
            values[scored] = fitness.flips(state, rest[scored])
        improves = scored[beats(values[scored], sizes[scored], value, size)]
        if improves.size:
            kept = int(improves[0]) + 1
        elif scored.size == block:
            kept = int(scored[-1]) + 1
        else:  # nothing left to score
            kept = rest.shape[0]
        if observe is not None:
            observe(current, rest[:kept], values[:kept], sizes[:kept])
        start += kept
        if improves.size:
            genes = rest[kept - 1]
            fitness.apply_flip(state, genes)
            current[genes] = ~current[genes]
            value, size = float(values[kept - 1]), int(sizes[kept - 1])
            block = FIRST_BLOCK
        else:
            block *= 2
    return current, value, current != mask


def draw_tries(rng, n_genes: int, n_flip: int, n_tries: int) -> np.ndarray:
    """The genes of ``n_tries`` local-search tries of ``n_flip`` distinct genes each, from the
    particle's stream ``rng`` (:func:`~hpcswarm.swarm.engine.draws.sorted_choices`), ndarray of
    shape (n_tries, n_flip)."""
    return sorted_choices(rng, n_genes, n_flip, n_tries)


def pack_pbest(mask, value):
    """A subset and its fitness as bytes: packed mask, then the float64 (``n_genes / 8 + 8``
    bytes)."""
    return np.concatenate([np.packbits(mask),
                           np.array([value], dtype=np.float64).view(np.uint8)])


def unpack_pbest(row, n_genes):
    """(mask, fitness) from the first ``n_genes / 8 + 8`` bytes :func:`pack_pbest` wrote."""
    width = (n_genes + 7) // 8
    mask = np.unpackbits(row[:width], count=n_genes).astype(bool)
    value = float(np.ascontiguousarray(row[width:width + 8]).view(np.float64)[0])
    return mask, value


def pack_search(mask, value, rng):
    """One local search's input or output as bytes: :func:`pack_pbest`, then the generator
    state (``n_genes / 8 + 56`` bytes)."""
    return np.concatenate([pack_pbest(mask, value), pack_rng(rng)])


def unpack_search(row, n_genes, rng=None):
    """(mask, fitness, generator) from :func:`pack_search` bytes; ``rng`` is set to the
    packed state when given."""
    mask, value = unpack_pbest(row, n_genes)
    return mask, value, unpack_rng(row[(n_genes + 7) // 8 + 8:], rng)


def deal_searches(search, improved):
    """Every rank's new pbests and who searches each (collective).

    The new pbests of the whole swarm (one flag byte per particle, allgathered) are dealt
    to the ranks in contiguous runs of equal count in particle order
    (:func:`~hpcswarm.swarm.engine.exchange.balanced_blocks`): every search costs about the same.

    Parameters
    ----------
    search : ParticleSwarm
    improved : ndarray of int
        This rank's particles whose pbest just improved.

    Returns
    -------
    jobs, owner, worker : ndarray of int64
        The improved particles of every rank in order, the rank owning each and the rank
        that runs its search (the same on every rank).
    """
    comm, deal = search.comm, search.ownership
    flags = np.isin(search.local, improved).astype(np.uint8)
    jobs = np.flatnonzero(deal.allgather(comm, flags, search.everyone))
    worker = balanced_blocks(np.ones(jobs.size, dtype=np.int64), comm.size)
    return jobs, deal.owner[jobs], worker


class LocalSearch(Mechanism):
    """Local search on every new pbest (Tran et al. 2016, Algorithm 1 line 7).

    ``ls_tries`` tries per new pbest, each flipping ``max(1, round(ls_flip * n_genes))``
    distinct genes (Tran et al.'s "2% of the bits"). The flipped genes set the pbest
    *position* to 1.0 (now selected) or 0.0 (now unselected); the other dimensions keep
    their real values. Tries are never looked up in the archive (they are the cheap
    incremental evaluations) and each non-empty try counts as an evaluation.

    Parallel runs: the local searches of a round are dealt evenly over the ranks, each with
    its particle's own generator, so the result does not depend on the deal; a search run
    away from its owner costs ``2 (n_genes / 8 + 56)`` bytes.
    """

    PARAMS = (
        Param("ls_tries", "int", 100, "local-search tries per new pbest", low=1),
        Param("ls_flip", "float", 0.02, "share of the genes flipped per try", low=0, high=1),
    )

    def after_pbests(self, search, improved) -> None:
        """Local search on every new pbest, the searches dealt evenly over the ranks.

        Serially this is a loop over ``improved``. With P ranks, the new pbests of the whole
        swarm (one flag byte per particle, allgathered) are dealt to the ranks in contiguous
        runs of equal count in particle order (every search costs about the same:
        ``ls_tries`` flips of ``ls_flip`` genes), so that a rank whose particles improved
        more does not hold up the others. A search run away from its particle's owner
        receives the pbest as packed bits with its fitness and the particle's generator
        state (``n_genes / 8 + 56`` bytes) and returns the same: the tries draw exactly the
        numbers they would draw on the owner, and rank order is still particle order for
        the tie rule of the best subset ever seen.
        """
        s = search.state
        if search.comm.size == 1:
            for i in improved:
                found = self.search_from(search, s.pbest_mask[i], s.pbest_fitness[i], s.rngs[i])
                adopt(search, i, *found)
            return
        self.dealt(search, improved)

    @staticmethod
    def search_from(search, mask, value, rng):
        """:func:`local_search` of ``search``'s settings from ``mask`` of fitness ``value``,
        its tries observed by the evaluator; returns (mask, fitness, flipped genes)."""
        p, evaluator = search.params, search.evaluator
        n_flip = max(1, int(round(p["ls_flip"] * search.n_genes)))
        tries = draw_tries(rng, search.n_genes, n_flip, p["ls_tries"])
        return local_search(search.fitness, mask, value, tries,
                            observe=evaluator.observe_flips, needed=evaluator.front.open)

    def dealt(self, search, improved) -> None:
        """The parallel case of :meth:`after_pbests` (collective)."""
        s, comm = search.state, search.comm
        jobs, owner, worker = deal_searches(search, improved)
        row_bytes = (search.n_genes + 7) // 8 + 8 + RNG_STATE_BYTES
        outgoing = (owner == comm.rank) & (worker != comm.rank)
        incoming = (worker == comm.rank) & (owner != comm.rank)
        sent = np.array([pack_search(s.pbest_mask[i], s.pbest_fitness[i], s.rngs[i])
                         for i in jobs[outgoing]], dtype=np.uint8).reshape(-1, row_bytes)
        guests = dict(zip(jobs[incoming].tolist(), ship(comm, sent, owner, worker)))
        returned = []
        for i in jobs[worker == comm.rank]:
            if i in guests:
                start, value, rng = unpack_search(guests[i], search.n_genes)
            else:
                start, value, rng = s.pbest_mask[i], s.pbest_fitness[i], s.rngs[i]
            mask, value, flipped = self.search_from(search, start, value, rng)
            if i in guests:
                returned.append(pack_search(mask, value, rng))
            else:
                adopt(search, i, mask, value, flipped)
        back = ship(comm, np.array(returned, dtype=np.uint8).reshape(-1, row_bytes), worker,
                    owner)
        for i, row in zip(jobs[outgoing], back):
            mask, value, _ = unpack_search(row, search.n_genes, s.rngs[i])
            adopt(search, i, mask, value, mask != s.pbest_mask[i])


def adopt(search, i, mask, value, flipped) -> None:
    """Make a local search's result particle ``i``'s pbest (on its owner only)."""
    s = search.state
    s.pbest_position[i, flipped] = mask[flipped].astype(float)
    s.pbest_mask[i] = mask
    s.pbest_fitness[i] = value
    s.pbest_size[i] = int(np.count_nonzero(mask))
