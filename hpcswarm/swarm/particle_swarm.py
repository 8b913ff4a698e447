"""pbest/gbest machinery shared by the PSO-family methods (continuous and binary).

A round of these methods (Tran et al. Algorithm 1; Chuang et al. pseudo-code) is: move every
particle (velocity and position, each with its own generator), evaluate, update each pbest,
update gbest. Subclasses plug in the initial positions, the move, and hooks that run after
the move (CBPSO's complement, FSR's repair), after the pbest updates (local search) and after
the gbest update (gbest reset).

``gbest`` here is the *attractor* of the velocity equation; the subset the run returns is the
best ever evaluated (:class:`~hpcswarm.swarm.core.SearchAlgorithm`), which a gbest reset
does not touch.
"""

import abc

import numpy as np

from hpcswarm.fitness import WORST_FITNESS
from hpcswarm.swarm.core import SearchAlgorithm, best_index, better
from hpcswarm.swarm.params import FITNESS_PARAMS, Param
from hpcswarm.swarm.state import SwarmState

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


class ParticleSwarm(SearchAlgorithm, abc.ABC):
    """A swarm with personal bests and a global best (the PSO family).

    Attributes
    ----------
    state : SwarmState
    local : ndarray of int
        The particles this process moves and evaluates (all of them in a serial run): every
        per-particle step loops over ``local`` only, and swarm-wide quantities (gbest, the
        stagnation count) come from single functions that a parallel run can reduce.
    gbest_position, gbest_mask, gbest_fitness
        The velocity equation's global best (reset by PSO-RG/LSRG).
    stagnation : int
        Rounds in a row without improvement of the best subset.
    """

    def initialise(self):
        n = self.params["n_particles"]
        rngs, swarm_rng = self.make_streams(n)
        self.state = SwarmState.empty(n, self.n_genes, rngs, swarm_rng, worst=WORST_FITNESS)
        self.local = np.arange(n)
        for i in self.local:
            self.state.position[i] = self.initial_position(i)
        self.refresh_masks(self.local)
        self.gbest_position = np.zeros(self.n_genes)
        self.gbest_mask = np.zeros(self.n_genes, dtype=bool)
        self.gbest_fitness = WORST_FITNESS
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
        """Evaluate the swarm, then update pbests, gbest and the stagnation count."""
        before = (self.best_fitness, int(np.count_nonzero(self.best_mask)))
        self.evaluate(self.local)
        improved = self.update_pbests(self.local)
        self.after_pbests(improved)
        self.update_gbest()
        self.stagnation = stagnation_update(
            better(self.best_fitness, int(np.count_nonzero(self.best_mask)), *before),
            self.stagnation,
        )
        self.after_gbest()

    # ------------------------------------------------------------------ plug-ins
    @abc.abstractmethod
    def initial_position(self, i):
        """Initial position of particle ``i``, ndarray of shape (n_genes,)."""

    @abc.abstractmethod
    def move(self, i, w):
        """Velocity and position update of particle ``i`` with inertia ``w`` (in place)."""

    @abc.abstractmethod
    def masks_of(self, positions):
        """Selected genes of ``positions`` (n, n_genes) as a bool array of the same shape."""

    def after_move(self):
        """Hook run on the new positions before they are evaluated."""

    def after_pbests(self, improved):
        """Hook run on the particles whose pbest has just improved."""

    def after_gbest(self):
        """Hook run once gbest and the stagnation count are up to date."""

    # ------------------------------------------------------------------ shared steps
    def refresh_masks(self, indices):
        """Recompute the selected subsets of ``indices`` from their positions."""
        self.state.mask[indices] = self.masks_of(self.state.position[indices])

    def evaluate(self, indices):
        """Fitness of the current subsets of particles ``indices`` (the one evaluation seam)."""
        masks = self.state.mask[indices]
        values = np.asarray(self.fitness.many(masks), dtype=float)
        self.state.fitness[indices] = values
        self.observe_many(masks, values)
        return values

    def update_pbests(self, indices):
        """Replace each pbest its particle beats; returns the indices that improved."""
        state = self.state
        improved = []
        for i in indices:
            if better(state.fitness[i], state.mask[i].sum(),
                      state.pbest_fitness[i], state.pbest_mask[i].sum()):
                state.pbest_position[i] = state.position[i]
                state.pbest_mask[i] = state.mask[i]
                state.pbest_fitness[i] = state.fitness[i]
                improved.append(i)
        return np.asarray(improved, dtype=int)

    def update_gbest(self):
        """Move gbest to the best pbest if that beats it (ties: fewer genes, lower index)."""
        state = self.state
        i = best_index(state.pbest_fitness, state.pbest_sizes())
        if better(state.pbest_fitness[i], state.pbest_mask[i].sum(),
                  self.gbest_fitness, self.gbest_mask.sum()):
            self.gbest_position = state.pbest_position[i].copy()
            self.gbest_mask = state.pbest_mask[i].copy()
            self.gbest_fitness = float(state.pbest_fitness[i])
