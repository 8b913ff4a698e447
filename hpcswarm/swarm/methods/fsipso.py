"""Forward-search-inspired PSO (Li, Xue & Zhang 2021, Algorithm 1).

Genes are ranked alone by k-NN cross-validation accuracy and cut into ``n_subspaces``
sub-spaces of nearly equal size (Eq. 4). The search space ``F_c`` starts as the best-ranked
sub-space and grows by the next one every ``floor(T / M)`` generations (Eq. 5); a particle's
velocity and position change only in ``F_c``, the dimensions of an added sub-space are
re-initialised uniformly in [0, 1], and after each PSO move every position element in
``F_c`` is mutated ``x -> 1 - x`` with probability ``1 / |F_c|`` (Eq. 6-7). Dimensions outside
``F_c`` stay exactly zero (unselected).
"""

import numpy as np

from hpcswarm.errors import ParameterError
from hpcswarm.swarm.engine.snapshot import ArraySpec
from hpcswarm.swarm.methods.pso import PSO
from hpcswarm.swarm.operators.particle import continuous_position, pso_velocity, reflect_mutation
from hpcswarm.swarm.operators.ranking import rank_genes, single_gene_accuracies
from hpcswarm.swarm.params import Param, override


class FSIPSO(PSO):
    """FSIPSO (Li, Xue & Zhang).

    Defaults (Sec. IV-C): 30 particles, T = 100 generations after the initial evaluation
    (101 rounds), w = 0.7298, c1 = c2 = 1.49618, eta = 0.6 (``theta``), M = 5 sub-spaces,
    5-NN 5-fold, combined fitness with alpha = 0.9 (Eq. 3).

    Choices where the paper is ambiguous or silent:

    * T is ``n_iterations - 1``; Algorithm 1 moves to the next phase when the generation
      counter t (updates done so far) satisfies ``t > 0`` and ``t mod floor(T/M) == 0``, and
      never beyond the M-th sub-space. With the defaults, sub-spaces 2-5 join at the
      updates that produce rounds 21, 41, 61 and 81.
    * When M does not divide D, sub-spaces differ in size by one (the first ones larger).
    * The ranking uses the run's own k and cross-validation (Sec. III-B: 5-fold on the
      training set) and accuracy, not the combined fitness.
    * vmax is not given; 0.6 is used as for the other continuous methods.
    * Velocities start at zero (Algorithm 1 line 6) and stay zero in added sub-spaces until
      their first update; pbests and gbest keep their values (zero) there.

    Parallel runs: the single-gene ranking splits the genes across the ranks and allgathers
    the accuracies (``8 n_genes`` bytes, once); phases follow the round number, identical
    everywhere; each rank re-initialises the added dimensions of its own particles.
    """

    name = "fsipso"
    PARAMS = override(
        tuple(p for p in PSO.PARAMS if p.name != "init") + (
            Param("n_subspaces", "int", 5, "number M of sub-spaces (evolutionary phases)", low=1),
        ),
        n_particles=30, n_iterations=101, objective="combined", alpha=0.9, k=5, cv=5,
    )
    STATE = ("order", "subspaces", "phase_length", "phase", "active")
    STATE_VALUES = {"order": ArraySpec("i", ("genes",), 0, "last_gene", distinct=True),
                    "phase_length": ArraySpec("i", (), 1), "phase": ArraySpec("i", (), 0),
                    "active": ArraySpec("i", (None,), 0, "last_gene")}
    scores_single_flips = True

    @classmethod
    def cached_states(cls, params):
        """One: the single-gene ranking's state of the empty subset, held with its blocks of
        flips at initialisation (then dropped)."""
        return 1

    @classmethod
    def state_problem(cls, state, params, n_genes):
        """The account's ties (:meth:`SearchAlgorithm.state_problem`), and FSIPSO's: the
        sub-spaces cut from ``order`` (Eq. 4), the phase length ``floor(T / M)`` and the phase
        that the round reached (Eq. 5, one ``expand`` event per phase after the first), the
        search space ``F_c`` the sorted genes of the sub-spaces joined so far."""
        problem = super().state_problem(state, params, n_genes)
        if problem is not None:
            return problem
        n_subspaces = params["n_subspaces"]
        subspaces = state["subspaces"]
        cut = np.array_split(state["order"], n_subspaces)
        if not (isinstance(subspaces, list) and len(subspaces) == n_subspaces
                and all(isinstance(part, np.ndarray) and np.array_equal(part, expected)
                        for part, expected in zip(subspaces, cut))):
            return f"'subspaces' are not 'order' cut into {n_subspaces} sub-spaces"
        phase_length = (params["n_iterations"] - 1) // n_subspaces
        if state["phase_length"] != phase_length:
            return f"'phase_length' is {state['phase_length']}, not {phase_length}"
        phase = 1 + min(n_subspaces - 1, max(0, (state["iteration"] - 1) // phase_length))
        expanded = sum(event["event"] == "expand" for event in state["events"])
        if state["phase"] != phase or expanded != phase - 1:
            return (f"'phase' is {state['phase']} with {expanded} expand events, not the "
                    f"{phase} of round {state['iteration']}")
        if not np.array_equal(state["active"], np.sort(np.concatenate(cut[:phase]))):
            return f"'active' is not the genes of the first {phase} sub-spaces"
        return None

    @classmethod
    def swarm_problem(cls, arrays, state, params, n_genes):
        """The swarm's ties (:meth:`ParticleSwarm.swarm_problem`), and every position,
        velocity, pbest and gbest 0 outside the search space ``F_c``."""
        problem = super().swarm_problem(arrays, state, params, n_genes)
        if problem is not None:
            return problem
        outside = np.ones(n_genes, dtype=bool)
        outside[state["active"]] = False
        for name in ("position", "velocity", "pbest_position"):
            if arrays[name][:, outside].any():
                return f"'{name}' is not 0 outside the search space 'active'"
        if state["gbest_position"][outside].any():
            return "'gbest_position' is not 0 outside the search space 'active'"
        return None

    @classmethod
    def validate(cls, params):
        if params["n_iterations"] - 1 < params["n_subspaces"]:
            raise ParameterError(
                "parameter 'n_iterations' must exceed 'n_subspaces' for fsipso "
                f"(got n_iterations={params['n_iterations']}, "
                f"n_subspaces={params['n_subspaces']})"
            )

    def initialise(self):
        genes = np.arange(self.n_genes)
        self.order = rank_genes(single_gene_accuracies(self.fitness, genes, self.comm))
        self.evaluator.count(evaluations=self.n_genes)  # one per gene, whoever computed it
        self.subspaces = np.array_split(self.order, self.params["n_subspaces"])
        self.phase_length = (self.params["n_iterations"] - 1) // self.params["n_subspaces"]
        self.phase = 1
        self.active = np.sort(self.subspaces[0])
        super().initialise()

    def initial_position(self, i):
        position = np.zeros(self.n_genes)
        position[self.active] = self.state.rngs[i].random(self.active.size)
        return position

    def step(self):
        updates_done = self.iteration - 1
        if (updates_done > 0 and updates_done % self.phase_length == 0
                and self.phase < self.params["n_subspaces"]):
            added = np.sort(self.subspaces[self.phase])
            self.phase += 1
            self.active = np.sort(np.concatenate([self.active, added]))
            for i in self.local:
                self.state.position[i, added] = self.state.rngs[i].random(added.size)
            self.event("expand", phase=self.phase, search_space=int(self.active.size))
        super().step()

    def move(self, i, w):
        p, s, a = self.params, self.state, self.active
        s.velocity[i, a] = pso_velocity(s.velocity[i, a], s.position[i, a],
                                        s.pbest_position[i, a], self.gbest_position[a], w,
                                        p["c1"], p["c2"], p["vmax"], s.rngs[i])
        moved = continuous_position(s.position[i, a], s.velocity[i, a])
        s.position[i, a] = reflect_mutation(moved, 1.0 / a.size, s.rngs[i])

    def extra(self):
        return {**super().extra(), "ranking": self.order.tolist()}
