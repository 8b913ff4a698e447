"""Mechanisms a PSO-family method is composed from, on top of the move/evaluate/update round.

A round of the PSO family (:class:`~hpcswarm.swarm.methods.particle_swarm.ParticleSwarm`) runs the
mechanisms of its method, in the order listed, at three points: after the move (before
evaluation), after the pbest updates, after the gbest update. A method is the PSO round plus
its tuple of mechanisms (``MECHANISMS``); each mechanism brings its own parameters
(``PARAMS``). The local search of Tran et al. 2016 is in
:mod:`hpcswarm.swarm.operators.local_search`,
CBPSO's complement in :mod:`hpcswarm.swarm.methods.bpso`.
"""

import numpy as np

from hpcswarm.fitness import WORST_FITNESS
from hpcswarm.params import Param


class Mechanism:
    """A mechanism that does nothing at every point of the round; subclasses act at some."""

    PARAMS = ()
    """Parameters the mechanism reads, with their paper defaults."""

    def after_move(self, search) -> None:
        """Run on the new positions before they are evaluated."""

    def after_pbests(self, search, improved) -> None:
        """Run on the particles (``improved``, this rank's) whose pbest just improved."""

    def after_gbest(self, search) -> None:
        """Run once gbest and the stagnation count are up to date."""


class GbestReset(Mechanism):
    """gbest resetting (Chuang, Chang, Tu & Yang 2008; Tran et al. 2016, Algorithm 1).

    When the best subset has not improved for ``reset_after`` rounds, the velocity
    equation's gbest becomes the empty subset (all-zero position) with the empty subset's
    fitness (``WORST_FITNESS``), so the next round's gbest update takes the best pbest
    again, and the stagnation count restarts. The best subset the run returns is untouched.
    """

    PARAMS = (Param("reset_after", "int", 3, "stagnant rounds before gbest is reset", low=1),)

    def after_gbest(self, search) -> None:
        if search.stagnation >= search.params["reset_after"]:
            search.gbest_position = np.zeros(search.n_genes)
            search.gbest_mask = np.zeros(search.n_genes, dtype=bool)
            search.gbest_fitness = WORST_FITNESS
            search.stagnation = 0
            search.event("gbest_reset")
