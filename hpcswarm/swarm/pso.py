"""Continuous PSO for gene selection, and PSO-RG, PSO-LS, PSO-LSRG (Tran, Xue, Zhang & Nguyen 2016).

Positions live in [0, 1]^D and a gene is selected when its position exceeds ``theta``
(Tran et al. Sec. 3). PSO-LSRG adds two mechanisms to this PSO (Tran et al. Algorithm 1):

* local search on each new pbest (Sec. 3.1-3.2): ``ls_tries`` times, flip
  ``ls_flip`` of the bits of the pbest's subset and keep the flipped subset when it is better;
  every try is scored through the fitness engine's incremental path (``new_state``/``flip``),
  the paper's "fast fitness evaluation";
* gbest resetting (Chuang et al. 2008): when the best subset has not improved for
  ``reset_after`` rounds, gbest is set to the empty subset (all-zero position).
"""

import numpy as np

from hpcswarm.fitness import WORST_FITNESS
from hpcswarm.swarm.core import beats
from hpcswarm.swarm.draws import sorted_choices
from hpcswarm.swarm.exchange import balanced_blocks, ship
from hpcswarm.swarm.initialisation import STRATEGIES, initial_position, strategy_of
from hpcswarm.swarm.operators import cap_selection, continuous_position, threshold_mask
from hpcswarm.swarm.params import Param, override
from hpcswarm.swarm.particle_swarm import SWARM_PARAMS, ParticleSwarm
from hpcswarm.swarm.state import RNG_STATE_BYTES, pack_rng, unpack_rng


FIRST_BLOCK = 8
"""Tries scored at once after an improvement; the block doubles while none improves."""


def local_search(fitness, mask, value, n_tries, n_flip, rng, observe=None, needed=None):
    """Flip-based local search around one subset (Tran et al. Sec. 3.1-3.2).

    Each try flips ``n_flip`` distinct random genes of the current subset and is scored by
    the fitness engine's incremental path; a better try (higher fitness, then fewer genes)
    is applied and becomes the current subset. The result is never worse than the input.

    The tries' genes come from the particle's stream whatever their outcomes, so they are
    all drawn first (:func:`~hpcswarm.swarm.draws.sorted_choices`: the numbers of
    ``np.sort(rng.choice(n_genes, n_flip, replace=False))`` one try after the other). The
    tries are then scored in blocks against the current subset (``fitness.flips``); the
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
    n_tries, n_flip : int
    rng : numpy.random.Generator
        The particle's stream.
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
    tries = sorted_choices(rng, current.size, n_flip, n_tries)
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


class PSO(ParticleSwarm):
    """Continuous PSO with threshold (Tran et al. Eq. 1-2) and Xue 2014 initialisations.

    Defaults are PSO(4-2) as run in Li, Xue & Zhang (FSIPSO paper, Sec. IV-C): 30 particles,
    w = 0.7298, c1 = c2 = 1.49618, theta = 0.6, mixed initialisation, 5-NN 5-fold accuracy,
    and 101 evaluation rounds (their initial evaluation plus T = 100 generations). Neither
    paper gives vmax for the continuous representation; 0.6 (Tran et al. Table 2) is used.
    """

    name = "pso"
    PARAMS = override(
        SWARM_PARAMS + (
            Param("theta", "float", 0.6, "selection threshold on positions", low=0, high=1),
            Param("init", "choice", "mixed", "initialisation strategy (Xue et al. 2014)",
                  choices=STRATEGIES),
        ),
        n_iterations=101, vmax=0.6, k=5, cv=5,
    )

    def initial_position(self, i):
        strategy = strategy_of(self.params["init"], i, self.params["n_particles"])
        return initial_position(strategy, self.n_genes, self.params["theta"], self.state.rngs[i])

    supports_max_genes = True

    def masks_of(self, positions):
        return threshold_mask(positions, self.params["theta"])

    def next_position(self, i):
        return continuous_position(self.state.position[i], self.state.velocity[i])

    def capped_position(self, i):
        """The size cap on a continuous position: the ``max_genes`` genes of largest position
        above ``theta`` stay selected (ties: lower index); the others are lowered to
        ``theta`` itself, the largest value that does not select (x > theta selects)."""
        position, theta = self.state.position[i], self.params["theta"]
        return cap_selection(position, position > theta, position, self.max_genes, theta)


class PSOLSRG(PSO):
    """PSO-LSRG: PSO with local search on new pbests and gbest resetting (Tran et al. 2016).

    The size cap ``max_genes`` is not offered: the local search's tries are not positions,
    and its batched blocks would score tries over the cap.

    Defaults are Tran et al. Sec. 4.1 and Table 2: 100 particles, 70 rounds, c1 = c2 = 2,
    w from 0.9 down to 0.4 (``0.9 - 0.5 t / T``), theta = 0.6, 1-NN LOOCV accuracy,
    100 local-search tries flipping 2% of the genes, reset after 3 rounds without improvement.

    Choices where the paper is ambiguous:

    * vmax: the text says 6.0, Table 2 says 0.6. 0.6 is used: positions live in [0, 1], so a
      clamp of 6 can never bind and would make vmax a dead parameter; Table 2 is the table of
      this method's parameters, while 6.0 is the usual binary-PSO value.
    * "2% of the bits" is ``max(1, round(0.02 * D))`` distinct genes per try.
    * "not improved for m iterations" counts rounds in which the best subset found (by the
      ordering of :mod:`hpcswarm.swarm.core`) did not improve; the count restarts at every
      reset, so a stalled run resets every 3 rounds. The reset gbest is the empty subset
      with the empty subset's fitness (``WORST_FITNESS``), so the next round's gbest update
      takes the best pbest again: as in Algorithm 1, the reset redirects one velocity update.
    * The local search's flipped genes set the pbest *position* to 1.0 (now selected) or
      0.0 (now unselected); the other dimensions keep their real values.
    * The initial evaluation makes every pbest new, so the local search runs on all of them
      (Algorithm 1 line 7 with pbest undefined before).
    * Velocities start at zero and positions uniform in [0, 1] (the paper gives neither).

    Parallel runs: the local searches of a round are dealt evenly over the ranks (see
    :meth:`after_pbests`), each with its particle's own generator, so the result does not
    depend on the deal; a search run away from its owner costs ``2 (n_genes / 8 + 56)``
    bytes. Tries are never looked up in the archive (they are the cheap incremental
    evaluations) and each non-empty try counts as an evaluation. Otherwise only the pbest
    fitness and size travel (and the row, if that pbest becomes gbest).
    """

    name = "pso-lsrg"
    supports_max_genes = False
    use_local_search = True
    use_reset = True
    PARAMS = override(
        PSO.PARAMS + (
            Param("ls_tries", "int", 100, "local-search tries per new pbest", low=1),
            Param("ls_flip", "float", 0.02, "share of the genes flipped per try", low=0, high=1),
            Param("reset_after", "int", 3, "stagnant rounds before gbest is reset", low=1),
        ),
        n_particles=100, n_iterations=70, w=0.9, w_final=0.4, c1=2.0, c2=2.0, vmax=0.6,
        theta=0.6, init="uniform", k=1, cv="loo",
    )

    def after_pbests(self, improved):
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
        if not self.use_local_search:
            return
        p, s, comm = self.params, self.state, self.comm
        n_flip = max(1, int(round(p["ls_flip"] * self.n_genes)))
        if comm.size == 1:
            for i in improved:
                mask, value, flipped = local_search(
                    self.fitness, s.pbest_mask[i], s.pbest_fitness[i], p["ls_tries"], n_flip,
                    s.rngs[i], observe=self.observe_tries, needed=self.front.open,
                )
                self.adopt_search(i, mask, value, flipped)
            return
        lo, hi = self.bounds
        flags = np.zeros(hi - lo, dtype=np.uint8)
        flags[np.asarray(improved, dtype=np.int64) - lo] = 1
        jobs = np.flatnonzero(comm.allgatherv(flags, counts=self.counts_per_rank(self.everyone)))
        worker = balanced_blocks(np.ones(jobs.size, dtype=np.int64), comm.size)
        owner = np.repeat(np.arange(comm.size), self.counts_per_rank(self.everyone))[jobs]
        row_bytes = (self.n_genes + 7) // 8 + 8 + RNG_STATE_BYTES
        outgoing = (owner == comm.rank) & (worker != comm.rank)
        incoming = (worker == comm.rank) & (owner != comm.rank)
        sent = np.array([self.pack_search(i, s.pbest_mask[i], s.pbest_fitness[i])
                         for i in jobs[outgoing]], dtype=np.uint8).reshape(-1, row_bytes)
        guests = dict(zip(jobs[incoming].tolist(), ship(comm, sent, owner, worker)))
        returned = []
        for i in jobs[worker == comm.rank]:
            if i in guests:
                start, value, rng = self.unpack_search(guests[i])
            else:
                start, value, rng = s.pbest_mask[i], s.pbest_fitness[i], s.rngs[i]
            mask, value, flipped = local_search(self.fitness, start, value, p["ls_tries"],
                                                n_flip, rng, observe=self.observe_tries,
                                                needed=self.front.open)
            if i in guests:
                returned.append(self.pack_search(i, mask, value, rng))
            else:
                self.adopt_search(i, mask, value, flipped)
        back = ship(comm, np.array(returned, dtype=np.uint8).reshape(-1, row_bytes), worker,
                    owner)
        for i, row in zip(jobs[outgoing], back):
            mask, value, rng = self.unpack_search(row, s.rngs[i])
            self.adopt_search(i, mask, value, mask != s.pbest_mask[i])

    def pack_search(self, i, mask, value, rng=None):
        """One local search's input or output as bytes: packed mask, fitness, generator state."""
        rng = self.state.rngs[i] if rng is None else rng
        return np.concatenate([np.packbits(mask), np.array([value], dtype=np.float64).view(
            np.uint8), pack_rng(rng)])

    def unpack_search(self, row, rng=None):
        """(mask, fitness, generator) from :meth:`pack_search` bytes."""
        width = (self.n_genes + 7) // 8
        mask = np.unpackbits(row[:width], count=self.n_genes).astype(bool)
        value = float(np.ascontiguousarray(row[width:width + 8]).view(np.float64)[0])
        return mask, value, unpack_rng(row[width + 8:], rng)

    def adopt_search(self, i, mask, value, flipped):
        """Make the local search's result particle ``i``'s pbest (its owner only)."""
        s = self.state
        s.pbest_position[i, flipped] = mask[flipped].astype(float)
        s.pbest_mask[i] = mask
        s.pbest_fitness[i] = value
        s.pbest_size[i] = int(np.count_nonzero(mask))

    def observe_tries(self, mask, flips, values, sizes):
        """Account for local-search tries (each an evaluation unless its subset is empty)."""
        self.observe_flips(mask, flips, values, sizes, phase=1)

    def after_gbest(self):
        if self.use_reset and self.stagnation >= self.params["reset_after"]:
            self.gbest_position = np.zeros(self.n_genes)
            self.gbest_mask = np.zeros(self.n_genes, dtype=bool)
            self.gbest_fitness = WORST_FITNESS
            self.stagnation = 0
            self.event("gbest_reset")


class PSOLS(PSOLSRG):
    """PSO-LS: PSO-LSRG without gbest resetting (Tran et al. Sec. 4.1)."""

    name = "pso-ls"
    use_reset = False
    PARAMS = tuple(p for p in PSOLSRG.PARAMS if p.name != "reset_after")


class PSORG(PSOLSRG):
    """PSO-RG: PSO-LSRG without local search (Tran et al. Sec. 4.1; Chuang et al. 2008)."""

    name = "pso-rg"
    use_local_search = False
    supports_max_genes = True
    PARAMS = tuple(p for p in PSOLSRG.PARAMS if p.name not in ("ls_tries", "ls_flip"))
