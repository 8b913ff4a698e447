"""Binary PSO (Kennedy & Eberhart 1997) and CBPSO (Chuang, Hsiao & Yang 2011).

Positions are bit strings (stored as 0.0/1.0); the velocity follows the PSO equation with the
bits as positions, is clamped to [-vmax, vmax], and each bit is resampled as
``r3 < sigmoid(v)`` from the particle's own generator (Chuang et al. Eq. 1-4).
"""

import numpy as np

from hpcswarm.swarm.methods.particle_swarm import SWARM_PARAMS, ParticleSwarm
from hpcswarm.swarm.operators.mechanisms import Mechanism
from hpcswarm.swarm.operators.particle import binary_position, cap_selection
from hpcswarm.swarm.params import Param, override


class BPSO(ParticleSwarm):
    """Binary PSO with the sigmoid transfer function.

    Defaults are the BPSO of Xue, Zhang & Browne 2012 (Sec. 5): w = 0.768,
    c1 = c2 = 1.49618, vmax = 6, 30 particles, 100 rounds, 5-NN 10-fold accuracy. Initial
    bits are 1 with probability 1/2 and velocities start at zero (neither paper says).
    """

    name = "bpso"
    PARAMS = override(SWARM_PARAMS, w=0.768, vmax=6.0, k=5, cv=10)

    def initial_position(self, i):
        return (self.state.rngs[i].random(self.n_genes) < 0.5).astype(float)

    def masks_of(self, positions):
        return self.position_masks(positions, self.params)

    @classmethod
    def position_masks(cls, positions, params):
        """The bits set: positions above 0.5 (a binary position is 0 or 1)."""
        return positions > 0.5

    supports_max_genes = True

    def next_position(self, i):
        return binary_position(self.state.velocity[i], self.state.rngs[i])

    def capped_position(self, i):
        """The size cap on a bit string: of the selected bits, the ``max_genes`` of highest
        velocity (the log-odds of the bit, Chuang et al. Eq. 3; ties: lower index) stay 1,
        the others are set to 0."""
        position = self.state.position[i]
        return cap_selection(position, position > 0.5, self.state.velocity[i],
                             self.max_genes, 0.0)


def complement_half(n_particles, rng):
    """Indices of a random half of the swarm, sorted (Chuang et al. Sec. 2.2).

    Drawn from the swarm-wide stream so that every rank picks the same particles.
    """
    return np.sort(rng.choice(n_particles, n_particles // 2, replace=False))


class Complement(Mechanism):
    """The complementary distribution strategy (Chuang, Hsiao & Yang 2011, Sec. 2.2).

    When gbest has not improved for ``complement_after`` rounds, a random half of the
    swarm (:func:`complement_half`, from the swarm-wide stream) is replaced by the bitwise
    complements of their positions, just after the move and before evaluation; the
    stagnation count restarts. Every rank complements the chosen particles it owns.
    """

    PARAMS = (Param("complement_after", "int", 3, "stagnant rounds before half is complemented",
                    low=1),)

    def after_move(self, search) -> None:
        if search.iteration > 0 and search.stagnation >= search.params["complement_after"]:
            chosen = complement_half(search.state.n_particles, search.state.swarm_rng)
            mine = search.ownership.owned(chosen)
            search.state.position[mine] = 1.0 - search.state.position[mine]
            search.refresh_masks(mine)
            search.stagnation = 0
            search.event("complement", particles=chosen.tolist())


class CBPSO(BPSO):
    """BPSO with the complementary distribution strategy (Chuang, Hsiao & Yang 2011).

    When gbest has not improved for ``complement_after`` rounds, a random half of the
    swarm (``floor(n/2)`` particles, drawn from the swarm-wide stream) is replaced by the
    bitwise complements of their positions. Defaults (Sec. 3): 20 particles, 100 rounds,
    w = 1.0, c1 = c2 = 2, vmax = 6, 1-NN LOOCV accuracy.

    Choices where the paper is ambiguous:

    * "fitness of gbest is the same three times" is read as three rounds in a row without
      improvement of the best subset (higher fitness, then fewer genes); the count restarts
      after each complement.
    * Following the pseudo-code (lines 8-22), the complement is applied to the positions just
      produced by the position update, before they are evaluated; velocities and pbests are
      kept.

    Parallel runs: every rank draws the half from the swarm-wide stream (the stagnation
    count it depends on is identical everywhere) and complements the chosen particles it
    owns; no communication.
    """

    name = "cbpso"
    MECHANISMS = (Complement(),)
    PARAMS = override(
        SWARM_PARAMS + Complement.PARAMS,
        n_particles=20, n_iterations=100, w=1.0, c1=2.0, c2=2.0, vmax=6.0, k=1, cv="loo",
    )
