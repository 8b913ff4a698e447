"""Competitive swarm optimiser for gene selection (Gu, Cheng & Jin 2018, Algorithm 3).

Each round the swarm is paired at random; in every pair the better particle (the winner)
passes to the next round unchanged and the loser learns from the winner and from the swarm
mean (Eq. 3-4). Only the losers have new positions, so only they are evaluated; with the
archive on (Sec. 3), a loser whose subset was seen before costs a look-up.
"""

import numpy as np

from hpcswarm.errors import ParameterError
from hpcswarm.fitness import DEFAULT_ARCHIVE_SIZE
from hpcswarm.swarm.engine.exchange import ship
from hpcswarm.swarm.engine.loop import SearchAlgorithm
from hpcswarm.swarm.engine.ordering import better
from hpcswarm.swarm.engine.snapshot import ArraySpec
from hpcswarm.swarm.operators.initialisation import STRATEGIES, initial_position, strategy_of
from hpcswarm.swarm.operators.mean import swarm_mean
from hpcswarm.swarm.operators.particle import cap_selection, cso_loser_update, threshold_mask
from hpcswarm.swarm.params import FITNESS_PARAMS, Param, override


def random_pairs(n_particles, rng):
    """Random disjoint pairs covering the swarm, ndarray of shape (n_particles // 2, 2).

    Drawn from the swarm-wide stream (identical on every rank).
    """
    return rng.permutation(n_particles).reshape(-1, 2)


def compete(pairs, fitness, sizes):
    """Winners and losers of each pair, each ndarray of shape (n_pairs,).

    The first of a pair wins only if strictly better (higher fitness, then fewer genes);
    otherwise the second wins, as in the else branch of Gu et al. Algorithm 3.
    """
    first_wins = np.array(
        [better(fitness[a], sizes[a], fitness[b], sizes[b]) for a, b in pairs], dtype=bool
    )
    winners = np.where(first_wins, pairs[:, 0], pairs[:, 1])
    losers = np.where(first_wins, pairs[:, 1], pairs[:, 0])
    return winners, losers


class CSO(SearchAlgorithm):
    """CSO-kNN (Gu, Cheng & Jin 2018).

    Defaults (Sec. 4.1): 100 particles, 200 rounds, phi = 0.1, threshold lambda = 0.5
    (``theta`` here), positions uniform in [0, 1], 5-NN 10-fold error rate (fitness ``-error``),
    archive on.

    Choices where the paper is silent:

    * Velocities start at zero and positions are clamped to [0, 1], the initialisation range
      (the paper's Eq. 4 has no bound; Cheng & Jin's CSO keeps particles in the search box).
    * The mean ``x-bar`` is that of all positions at the start of the round, before any loser
      moves (Eq. 3's ``x-bar^t``).
    * Comparing "f better": lower error, then fewer genes; a full tie makes the second of the
      pair the winner (Algorithm 3's else branch).
    * The swarm size must be even, so that every particle competes once per round.
    * The run returns the best subset ever evaluated (CSO keeps no gbest).

    Parallel runs (per round): the pairing comes from the swarm-wide stream and winners are
    settled from the shared fitness and sizes, identically on every rank; the mean position
    is an order-independent fixed-point Allreduce
    (:func:`~hpcswarm.swarm.operators.mean.swarm_mean`,
    ``8 n_genes`` bytes per rank); a loser whose winner lives on another rank receives the
    winner's position row through one all-to-all (``8 n_genes`` bytes per such pair, about
    ``n/2 (1 - 1/P)`` pairs with P ranks: the one particles-x-genes term, inherent to CSO's
    learning from a random partner); the losers' fitness and sizes are then allgathered.
    """

    name = "cso"
    supports_max_genes = True
    PARAMS = override(
        (
            Param("n_particles", "int", 100, "swarm size (even)", low=2),
            Param("n_iterations", "int", 200, "evaluation rounds, the initial one included",
                  low=1),
            Param("target", "optional_float", None,
                  "stop once the best fitness reaches this value"),
            Param("phi", "float", 0.1, "influence of the swarm mean", low=0),
            Param("theta", "float", 0.5, "selection threshold lambda (a gene is selected above "
                  "it, so below 1)", low=0, high=1, high_open=True),
            Param("init", "choice", "uniform", "initialisation strategy", choices=STRATEGIES),
        ) + FITNESS_PARAMS,
        k=5, cv=10, objective="error", archive_size=DEFAULT_ARCHIVE_SIZE,
    )
    STATE = ("last_losers",)
    STATE_VALUES = {"last_losers": ArraySpec("i", (None,), 0, "last_particle")}

    @classmethod
    def state_problem(cls, state, params, n_genes):
        """The account's ties (:meth:`SearchAlgorithm.state_problem`), and CSO's: the particles
        evaluated last, in increasing order, are the whole swarm after round 0 and the half
        that lost its competitions after any later round."""
        problem = super().state_problem(state, params, n_genes)
        if problem is not None:
            return problem
        n = params["n_particles"]
        losers = state["last_losers"]
        count = n if state["iteration"] == 0 else n // 2
        if losers.size != count or (np.diff(losers) <= 0).any():
            return f"'last_losers' is not {count} particles in increasing order"
        return None

    @classmethod
    def swarm_problem(cls, arrays, state, params, n_genes):
        """Each mask the genes its position selects (those above ``theta``; a capped position
        is repaired before its mask is taken)."""
        if not np.array_equal(arrays["mask"], threshold_mask(arrays["position"],
                                                             params["theta"])):
            return "'mask' is not the genes its 'position' selects"
        return None

    @classmethod
    def validate(cls, params):
        if params["n_particles"] % 2:
            raise ParameterError(
                f"parameter 'n_particles' must be even for cso, got {params['n_particles']}"
            )

    @classmethod
    def swarm_shape(cls, params, n_genes):
        return cls.swarm_size(params, n_genes), n_genes

    def initialise(self):
        n = self.params["n_particles"]
        rngs = self.new_swarm(n)
        for i in self.local:
            strategy = strategy_of(self.params["init"], i, n)
            self.state.position[i] = initial_position(strategy, self.n_genes,
                                                      self.params["theta"], rngs[i])
        self.last_losers = np.arange(n)
        self.evaluate_losers()

    def step(self):
        s = self.state
        pairs = random_pairs(s.n_particles, s.swarm_rng)
        winners, losers = compete(pairs, s.fitness, s.size)
        mean = swarm_mean(s.position[self.local], s.n_particles, self.comm)
        order = np.argsort(losers)
        winners, losers = winners[order], losers[order]
        rows = self.winner_rows(winners, losers)
        for w, l in zip(winners, losers):
            if l in rows:
                s.velocity[l], s.position[l] = cso_loser_update(
                    s.velocity[l], s.position[l], rows[l], mean, self.params["phi"], s.rngs[l]
                )
        self.last_losers = losers
        self.evaluate_losers()

    def winner_rows(self, winners, losers):
        """Winner positions of this rank's losers, as {loser: row}; one all-to-all
        (:func:`~hpcswarm.swarm.engine.exchange.ship`).

        ``winners``/``losers`` are sorted by loser and identical on every rank, so each
        rank knows what it sends (its winners whose loser lives elsewhere, grouped by
        destination in loser order) and what it receives, without a count exchange.
        """
        s, comm = self.state, self.comm
        owner_w, owner_l = self.ownership.owner[winners], self.ownership.owner[losers]
        rows = {int(l): s.position[w] for w, l, ow, ol in zip(winners, losers, owner_w, owner_l)
                if ol == comm.rank and ow == comm.rank}
        if comm.size == 1:
            return rows
        outgoing = (owner_w == comm.rank) & (owner_l != comm.rank)
        incoming = (owner_l == comm.rank) & (owner_w != comm.rank)
        received = ship(comm, s.position[winners[outgoing]].reshape(-1, self.n_genes), owner_w,
                        owner_l)
        rows.update(zip(losers[incoming].tolist(), received))
        return rows

    def evaluate_losers(self):
        """Threshold and evaluate the losers (all particles at round 0), then share their
        fitness and sizes and settle the round."""
        s = self.state
        mine = self.ownership.owned(self.last_losers)
        theta = self.params["theta"]
        if self.max_genes is not None:  # the cap of PSO's continuous positions
            for i in mine:
                s.position[i] = cap_selection(s.position[i], s.position[i] > theta,
                                              s.position[i], self.max_genes, theta)
        s.mask[mine] = threshold_mask(s.position[mine], theta)
        self.evaluator.evaluate(s, self.last_losers)
        self.evaluator.settle()
        self.evaluator.share(s, self.last_losers, ("fitness", "size"))
