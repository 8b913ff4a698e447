"""Continuous PSO for gene selection, and PSO-RG, PSO-LS, PSO-LSRG (Tran, Xue, Zhang & Nguyen 2016).

Positions live in [0, 1]^D and a gene is selected when its position exceeds ``theta``
(Tran et al. Sec. 3). PSO-LSRG adds two mechanisms to this PSO (Tran et al. Algorithm 1),
PSO-LS the first only and PSO-RG the second only (Sec. 4.1):

* local search on each new pbest (Sec. 3.1-3.2,
  :class:`~hpcswarm.swarm.operators.local_search.LocalSearch`):
  ``ls_tries`` times, flip ``ls_flip`` of the bits of the pbest's subset and keep the
  flipped subset when it is better; every try is scored through the fitness engine's
  incremental path (``new_state``/``flip``), the paper's "fast fitness evaluation";
* gbest resetting (Chuang et al. 2008, :class:`~hpcswarm.swarm.operators.mechanisms.GbestReset`):
  when
  the best subset has not improved for ``reset_after`` rounds, gbest is set to the empty
  subset (all-zero position).
"""

from hpcswarm.swarm.methods.particle_swarm import SWARM_PARAMS, ParticleSwarm
from hpcswarm.swarm.operators.initialisation import STRATEGIES, initial_position, strategy_of
from hpcswarm.swarm.operators.local_search import LocalSearch
from hpcswarm.swarm.operators.mechanisms import GbestReset
from hpcswarm.swarm.operators.particle import cap_selection, continuous_position
from hpcswarm.swarm.params import Param, override


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
            Param("theta", "float", 0.6, "selection threshold on positions (a gene is selected "
                  "above it, so below 1)", low=0, high=1, high_open=True),
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
        return self.position_masks(positions, self.params)

    def next_position(self, i):
        return continuous_position(self.state.position[i], self.state.velocity[i])

    def capped_position(self, i):
        """The size cap on a continuous position: the ``max_genes`` genes of largest position
        above ``theta`` stay selected (ties: lower index); the others are lowered to
        ``theta`` itself, the largest value that does not select (x > theta selects)."""
        position, theta = self.state.position[i], self.params["theta"]
        return cap_selection(position, position > theta, position, self.max_genes, theta)


TRAN_DEFAULTS = dict(n_particles=100, n_iterations=70, w=0.9, w_final=0.4, c1=2.0, c2=2.0,
                     vmax=0.6, theta=0.6, init="uniform", k=1, cv="loo")
"""Tran et al. Sec. 4.1 and Table 2, the settings of PSO-RG, PSO-LS and PSO-LSRG."""


def tran_params(*mechanisms):
    """PSO's parameters and those of ``mechanisms``, with :data:`TRAN_DEFAULTS`."""
    return override(PSO.PARAMS + sum((m.PARAMS for m in mechanisms), ()), **TRAN_DEFAULTS)


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
      ordering of :mod:`hpcswarm.swarm.engine.ordering`) did not improve; the count restarts at
      every
      reset, so a stalled run resets every 3 rounds. The reset gbest is the empty subset
      with the empty subset's fitness (``WORST_FITNESS``), so the next round's gbest update
      takes the best pbest again: as in Algorithm 1, the reset redirects one velocity update.
    * The local search's flipped genes set the pbest *position* to 1.0 (now selected) or
      0.0 (now unselected); the other dimensions keep their real values.
    * The initial evaluation makes every pbest new, so the local search runs on all of them
      (Algorithm 1 line 7 with pbest undefined before).
    * Velocities start at zero and positions uniform in [0, 1] (the paper gives neither).

    Parallel runs: the local searches of a round are dealt evenly over the ranks (see
    :meth:`~hpcswarm.swarm.operators.local_search.LocalSearch.after_pbests`), each with its
    particle's own generator, so the result does not depend on the deal; a search run away
    from its owner costs ``2 (n_genes / 8 + 56)`` bytes. Tries are never looked up in the
    archive (they are the cheap incremental evaluations) and each non-empty try counts as an
    evaluation. Otherwise only the pbest fitness and size travel (and the row, if that pbest
    becomes gbest).
    """

    name = "pso-lsrg"
    MECHANISMS = (LocalSearch(), GbestReset())
    supports_max_genes = False
    use_local_search = True
    PARAMS = tran_params(*MECHANISMS)


class PSOLS(PSO):
    """PSO-LS: PSO with local search on new pbests, no gbest resetting (Tran et al. Sec. 4.1).

    Settings and choices as :class:`PSOLSRG`; no size cap.
    """

    name = "pso-ls"
    MECHANISMS = (LocalSearch(),)
    supports_max_genes = False
    use_local_search = True
    PARAMS = tran_params(*MECHANISMS)


class PSORG(PSO):
    """PSO-RG: PSO with gbest resetting, no local search (Tran et al. Sec. 4.1; Chuang et al. 2008).

    Settings and choices as :class:`PSOLSRG`; the size cap ``max_genes`` is offered.
    """

    name = "pso-rg"
    MECHANISMS = (GbestReset(),)
    PARAMS = tran_params(*MECHANISMS)
