"""The round of swarms with personal bests, and the global best of the PSO family on top.

A round of these methods (Tran et al. Algorithm 1; Chuang et al. pseudo-code) is: move every
particle (velocity and position, each with its own generator), evaluate, update each pbest,
then update what the next move learns from. :class:`PersonalBestSwarm` is that round with
pbests alone, what VLPSO's comprehensive learning needs (each dimension learns from an
exemplar's pbest, Liang et al. 2006, Eq. 8); :class:`ParticleSwarm` adds the global best of
the PSO family, the attractor of its velocity equation. Subclasses plug in the initial
positions and the move; a method's mechanisms (``MECHANISMS``,
:mod:`hpcswarm.swarm.operators.mechanisms`) run after the move (CBPSO's complement), after the
pbest updates (local search) and after the gbest update (gbest reset); FSR's repair overrides
the ``after_move`` hook.

``gbest`` is the *attractor* of the velocity equation; the subset the run returns is the best
ever evaluated (:class:`~hpcswarm.swarm.engine.evaluation.EvaluationService`), which a gbest
reset does not touch.

Parallel round (``comm`` of P ranks, particles dealt by
:meth:`~hpcswarm.swarm.engine.loop.SearchAlgorithm.partition`): each rank moves,
evaluates and updates the pbests of its own particles only, with their own generators (the
local searches of PSO-LS/LSRG are dealt evenly, see :class:`~hpcswarm.swarm.methods.pso.PSOLSRG`);
then :meth:`~hpcswarm.swarm.engine.evaluation.EvaluationService.settle` (best ever,
distinct subsets, evaluations) and one allgather of (fitness, size, pbest fitness, pbest
size) per particle (32 bytes each). gbest is then chosen identically on every rank with
:func:`~hpcswarm.swarm.engine.ordering.best_index` (higher fitness, fewer genes, lower index),
and when it changes the owner of that pbest broadcasts its row: position and packed mask,
``8.125 n_genes`` bytes. Nothing of size particles x genes travels.
"""

import abc

import numpy as np

from hpcswarm.fitness import WORST_FITNESS
from hpcswarm.swarm.engine.loop import SearchAlgorithm
from hpcswarm.swarm.engine.snapshot import ArraySpec
from hpcswarm.swarm.operators.particle import pso_velocity, threshold_mask
from hpcswarm.swarm.params import FITNESS_PARAMS, Param

#: Parameters of every PSO-family method; each method re-declares the defaults of its paper.
SWARM_PARAMS = (
    Param("n_particles", "int", 30, "swarm size", low=2),
    Param("n_iterations", "int", 100, "evaluation rounds, the initial one included", low=1),
    Param("target", "optional_float", None, "stop once the best fitness reaches this value"),
    Param("w", "float", 0.7298, "inertia weight (at the first round)"),
    Param("w_final", "optional_float", None,
          "inertia decreases linearly as w - (w - w_final) t / n_iterations (none: constant w)"),
    Param("c1", "float", 1.49618, "cognitive acceleration constant", low=0),
    Param("c2", "float", 1.49618, "social acceleration constant", low=0),
    Param("vmax", "float", 6.0, "velocity clamp: |v| <= vmax", low=0),
) + FITNESS_PARAMS


def stagnation_update(improved, count):
    """Rounds without improvement of the best subset: 0 after an improvement, else ``count + 1``."""
    return 0 if improved else count + 1


def inertia(w, w_final, iteration, n_iterations):
    """Inertia weight at ``iteration``: constant ``w``, or ``w - (w - w_final) t / T``.

    With ``w = 0.9`` and ``w_final = 0.4`` this is Tran et al. Table 2's
    ``0.9 - 0.5 * current iteration / max iteration``.
    """
    if w_final is None:
        return w
    return w - (w - w_final) * iteration / n_iterations


class PersonalBestSwarm(SearchAlgorithm, abc.ABC):
    """A swarm of particles with personal bests: move, evaluate, update the pbests.

    Attributes
    ----------
    state : SwarmState
    local : ndarray of int
        The particles this rank moves and evaluates, increasing (its deal,
        :meth:`~hpcswarm.swarm.engine.loop.SearchAlgorithm.partition`; all of them in a serial
        run, none when there are more ranks than particles): every per-particle step loops
        over ``local`` only; swarm-wide quantities (the stagnation count, a gbest) are
        settled identically on every rank.
    stagnation : int
        Rounds in a row without improvement of the best subset.
    """

    STATE = ("stagnation",)
    STATE_VALUES = {"stagnation": ArraySpec("i", (), 0, "iteration")}
    MECHANISMS = ()
    """The mechanisms of the method (:class:`~hpcswarm.swarm.operators.mechanisms.Mechanism`),
    run in this order at each point of the round."""

    @classmethod
    def swarm_shape(cls, params, n_genes):
        return cls.swarm_size(params, n_genes), n_genes

    @classmethod
    def position_masks(cls, positions, params):
        """The genes ``positions`` select under checked ``params`` (what :meth:`masks_of`
        gives a search of them): those above ``theta``."""
        return threshold_mask(positions, params["theta"])

    @classmethod
    def swarm_problem(cls, arrays, state, params, n_genes):
        """Each mask and pbest mask the genes its position selects (:meth:`position_masks`;
        a capped position is repaired before its mask is taken)."""
        for mask, position in (("mask", "position"), ("pbest_mask", "pbest_position")):
            if not np.array_equal(arrays[mask], cls.position_masks(arrays[position], params)):
                return f"'{mask}' is not the genes its '{position}' selects"
        return None

    @property
    def everyone(self):
        """Every particle index, ndarray of int."""
        return np.arange(self.n_particles)

    def initialise(self):
        self.new_swarm(self.params["n_particles"])
        for i in self.local:
            self.state.position[i] = self.initial_position(i)
        self.refresh_masks(self.local)
        self.stagnation = 0
        self.after_move()
        self.evaluate_round()

    def step(self):
        w = inertia(self.params["w"], self.params["w_final"], self.iteration - 1,
                    self.params["n_iterations"])
        for i in self.local:
            self.move(i, w)
        self.refresh_masks(self.local)
        self.after_move()
        self.evaluate_round()

    def evaluate_round(self):
        """Evaluate the swarm, then update the pbests, what the next move learns from
        (:meth:`after_share`) and the stagnation count."""
        evaluator = self.evaluator
        before = (evaluator.best_fitness, evaluator.best_size)
        evaluator.evaluate(self.state, self.everyone, needed=self.could_matter)
        improved = self.update_pbests(self.local)
        self.after_pbests(improved)
        evaluator.settle()
        evaluator.share(self.state, self.everyone,
                        ("fitness", "size", "pbest_fitness", "pbest_size"))
        self.after_share()
        self.stagnation = stagnation_update(
            evaluator.ordering.better(evaluator.best_fitness, evaluator.best_size, *before),
            self.stagnation)
        self.after_gbest()

    def could_matter(self, particles, sizes):
        """Which of these own particles (with subsets of ``sizes`` genes) need their fitness
        this round: those whose highest possible fitness (``fitness.highest``, every
        prediction right) beats their pbest, or could enter the front. Any other cannot
        replace its pbest, so neither the best subset ever seen (which is at least as good
        as every pbest) nor the swarm's path depends on its fitness."""
        s = self.state
        highest = self.fitness.highest(sizes)
        return (self.evaluator.ordering.beats(highest, sizes, s.pbest_fitness[particles],
                                              s.pbest_size[particles])
                | self.evaluator.front.open(sizes, highest))

    # ------------------------------------------------------------------ plug-ins
    @abc.abstractmethod
    def initial_position(self, i):
        """Initial position of particle ``i``, ndarray of shape (n_genes,)."""

    @abc.abstractmethod
    def move(self, i, w):
        """Velocity and position update of own particle ``i`` with inertia ``w`` (in
        place)."""

    @abc.abstractmethod
    def next_position(self, i):
        """Position of particle ``i`` from its new velocity: ndarray of shape (n_genes,)."""

    @abc.abstractmethod
    def masks_of(self, positions):
        """Selected genes of ``positions`` (n, n_genes) as a bool array of the same shape."""

    def capped_position(self, i):
        """Particle ``i``'s position repaired to select at most ``max_genes`` genes."""
        raise NotImplementedError(f"{self.name} has no size cap")

    def after_move(self):
        """Run on the new positions before they are evaluated: the mechanisms' part."""
        for mechanism in self.MECHANISMS:
            mechanism.after_move(self)

    def after_pbests(self, improved):
        """Run on the particles whose pbest has just improved: the mechanisms' part."""
        for mechanism in self.MECHANISMS:
            mechanism.after_pbests(self, improved)

    def after_share(self):
        """Run once every rank knows the round's pbests, before the stagnation count: what
        the next move learns from beyond the pbests (:meth:`ParticleSwarm.update_gbest`);
        nothing here, where the particles learn from pbests alone."""

    def after_gbest(self):
        """Run once the round's attractors and the stagnation count are up to date: the
        mechanisms' part."""
        for mechanism in self.MECHANISMS:
            mechanism.after_gbest(self)

    # ------------------------------------------------------------------ shared steps
    def refresh_masks(self, indices):
        """Recompute the selected subsets (and sizes) of own particles ``indices``.

        With ``max_genes``, a position that selects more genes is repaired first
        (:meth:`capped_position`), so that every subset evaluated respects the cap.
        """
        if self.max_genes is not None:
            for i in indices:
                self.state.position[i] = self.capped_position(i)
        self.state.mask[indices] = self.masks_of(self.state.position[indices])
        self.state.size[indices] = np.count_nonzero(self.state.mask[indices], axis=1)

    def update_pbests(self, indices):
        """Replace each pbest its particle beats (the evaluator's order); returns the indices
        that improved."""
        state, better = self.state, self.evaluator.ordering.better
        improved = []
        for i in indices:
            if better(state.fitness[i], state.size[i],
                      state.pbest_fitness[i], state.pbest_size[i]):
                state.pbest_position[i] = state.position[i]
                state.pbest_mask[i] = state.mask[i]
                state.pbest_fitness[i] = state.fitness[i]
                state.pbest_size[i] = state.size[i]
                improved.append(i)
        return np.asarray(improved, dtype=int)


class ParticleSwarm(PersonalBestSwarm):
    """A swarm with personal bests and a global best (the PSO family): the pbest round with
    the velocity equation's global best updated after it.

    Attributes
    ----------
    gbest_position, gbest_mask, gbest_fitness
        The velocity equation's global best (reset by PSO-RG/LSRG).
    """

    STATE = ("gbest_position", "gbest_mask", "gbest_fitness")
    STATE_VALUES = {"gbest_position": ArraySpec("f", ("genes",), 0.0, 1.0),
                    "gbest_mask": ArraySpec("b", ("genes",)),
                    "gbest_fitness": ArraySpec("f", (), WORST_FITNESS, 1.0)}

    @classmethod
    def state_problem(cls, state, params, n_genes):
        """The account's ties (:meth:`SearchAlgorithm.state_problem`), and the swarm's:
        gbest, a pbest or reset, is no better than the best subset ever evaluated."""
        problem = super().state_problem(state, params, n_genes)
        if problem is not None:
            return problem
        if state["gbest_fitness"] > state["best_fitness"]:
            return (f"'gbest_fitness' {state['gbest_fitness']} is above the best fitness ever "
                    f"evaluated, {state['best_fitness']}")
        return None

    @classmethod
    def swarm_problem(cls, arrays, state, params, n_genes):
        """The pbest swarm's ties, and the gbest mask the genes its position selects."""
        problem = super().swarm_problem(arrays, state, params, n_genes)
        if problem is not None:
            return problem
        if not np.array_equal(state["gbest_mask"],
                              cls.position_masks(state["gbest_position"], params)):
            return "'gbest_mask' is not the genes its 'gbest_position' selects"
        return None

    def initialise(self):
        self.gbest_position = np.zeros(self.n_genes)
        self.gbest_mask = np.zeros(self.n_genes, dtype=bool)
        self.gbest_fitness = WORST_FITNESS
        super().initialise()

    def move(self, i, w):
        """Velocity (Eq. 1, clamped to vmax) and position update of particle ``i`` (in place)."""
        p, s = self.params, self.state
        s.velocity[i] = pso_velocity(s.velocity[i], s.position[i], s.pbest_position[i],
                                     self.gbest_position, w, p["c1"], p["c2"], p["vmax"],
                                     s.rngs[i])
        s.position[i] = self.next_position(i)

    def after_share(self):
        self.update_gbest()

    def update_gbest(self):
        """Move gbest to the best pbest if that beats it (ties: fewer genes, lower index).

        The pbest scalars are identical on every rank, so every rank picks the same
        particle; its owner broadcasts the row (position as float64 and packed mask).
        """
        state, ordering = self.state, self.evaluator.ordering
        i = ordering.best_index(state.pbest_fitness, state.pbest_size)
        if ordering.better(state.pbest_fitness[i], state.pbest_size[i],
                  self.gbest_fitness, int(np.count_nonzero(self.gbest_mask))):
            owner = int(self.ownership.owner[i])
            n_bytes = 8 * self.n_genes
            row = np.zeros(n_bytes + (self.n_genes + 7) // 8, dtype=np.uint8)
            if self.comm.rank == owner:
                row[:n_bytes] = np.ascontiguousarray(state.pbest_position[i]).view(np.uint8)
                row[n_bytes:] = np.packbits(state.pbest_mask[i])
            row = self.comm.broadcast(row, root=owner)
            self.gbest_position = row[:n_bytes].view(np.float64).copy()
            self.gbest_mask = np.unpackbits(row[n_bytes:], count=self.n_genes).astype(bool)
            self.gbest_fitness = float(state.pbest_fitness[i])
