"""Variable-length PSO, VLPSO (Tran, Xue & Zhang 2019, IEEE TEVC 23(3)).

The genes are ordered by symmetric uncertainty with the class on the training samples
(Sec. III-A, :mod:`hpcswarm.swarm.methods.vlpso.symmetric_uncertainty`); a particle of length ``L``
has
positions in [0, 1] for the first ``L`` genes of that order only and selects those above
``theta``. The swarm is cut into divisions of increasing length (Sec. III-B), the length
changes when the best subset stalls (Sec. III-C, :mod:`hpcswarm.swarm.methods.vlpso.divisions`), and
the
particles move by comprehensive learning (CLPSO, Sec. III-D,
:mod:`hpcswarm.swarm.methods.vlpso.exemplars`):

    v_d <- w v_d + c r_d (pbest_{f(d), d} - x_d),   |v_d| <= vmax,   x_d <- clip(x_d + v_d)

with ``f(d)`` the exemplar of dimension ``d``. An optional local search on new pbests
(off by default, as in the authors' Java) is in :mod:`hpcswarm.swarm.methods.vlpso.local_search`.
"""

from dataclasses import dataclass
from typing import Optional

import numpy as np

from hpcswarm.errors import ParameterError, SettingNote
from hpcswarm.fitness.folds import warn_once
from hpcswarm.params import Param
from hpcswarm.swarm.engine.snapshot import ArraySpec
from hpcswarm.swarm.engine.state import child_sequence
from hpcswarm.swarm.methods.particle_swarm import PersonalBestSwarm, inertia
from hpcswarm.swarm.methods.vlpso.divisions import (best_division, changed_lengths,
                                                    division_lengths, division_of,
                                                    fitting_divisions, lengths_problem, swarm_size)
from hpcswarm.swarm.methods.vlpso.exemplars import choose_exemplars, learning_probabilities
from hpcswarm.swarm.methods.vlpso.gene_order import GENE_ORDERS, gene_order
from hpcswarm.swarm.methods.vlpso.local_search import GeneTable, RelevanceLocalSearch
from hpcswarm.swarm.operators.initialisation import initial_position
from hpcswarm.swarm.operators.particle import continuous_position, threshold_mask
from hpcswarm.swarm.params import FITNESS_PARAMS, override

EXEMPLARS = 3
"""Child key of the exemplar draws under the run's seed (the swarm uses 0 and 1, the
subsample searches 2): the draws of particle ``i`` at round ``t`` come from the child
``(EXEMPLARS, i, t)``, so any rank can renew any particle's exemplars."""

LOCAL_SEARCH_MOVES = 20
"""With ``local_search`` on, the new pbests are searched after the initial evaluation and
after the even moves before this one (:func:`searched_after`), never after a length change."""


def searched_after(move: int) -> bool:
    """Whether the new pbests of the ``move``-th move (from 1) are searched, with
    ``local_search`` on: an even move before :data:`LOCAL_SEARCH_MOVES` (``VarLenPSOMain``:
    ``LOCAL_SEARCH && iter < 20 && iter % 2 == 0``, ``iter`` counting the moves)."""
    return move < LOCAL_SEARCH_MOVES and move % 2 == 0


@dataclass(frozen=True)
class MoveLimit:
    """Stop after ``n_rounds`` rounds that are the initial evaluation or a move, or once the
    best fitness reaches ``target``: a length change's evaluation round comes on top, as in
    ``VarLenPSOMain`` where it happens inside an iteration, before that iteration's move."""

    n_rounds: int
    target: Optional[float] = None

    def done(self, search) -> bool:
        if self.target is not None and search.evaluator.best_fitness >= self.target:
            return True
        return search.iteration - search.n_changes + 1 >= self.n_rounds

    def last_round(self, state, n_genes) -> int:
        return self.n_rounds - 1 + state["n_changes"]


class VLPSO(PersonalBestSwarm):
    """VLPSO: variable-length particles, length changing and comprehensive learning.

    Tran, Xue & Zhang 2019, Sec. III; defaults from Sec. IV and the authors' run line
    (``VarLenPSOMain``: 12 divisions, a length change after 9 rounds without a better subset).
    How the authors' Java differs, the settings that give their runs and the study that kept
    these defaults are in ``docs/methods.md``. A round:

    * The genes are ranked by symmetric uncertainty with the class on the training samples
      (Sec. III-A; MDL discretisation by Fayyad & Irani's criterion, ties in index order).
    * Divisions (Sec. III-B) are contiguous runs of particles whose sizes differ by at most
      one; division ``j`` has length ``(j + 1) max_length // n_divisions``, ``max_length`` all
      the genes or ``max_genes``. A swarm smaller than ``n_divisions`` gets one division per
      particle, with a :class:`~hpcswarm.errors.SettingNote`. Each division's first particle
      starts with every position at 1.0, the others as ``init`` says; velocities start
      uniform in [-vmax, vmax].
    * A gene is selected when its position exceeds ``theta``; the fitness is ``objective``
      by ``cv`` on the training samples, every gene min-max scaled on them
      (:data:`PREPROCESS`).
    * Length change (Sec. III-C): when the best subset (the order of
      :mod:`hpcswarm.swarm.engine.ordering`) has not improved for ``change_after`` rounds, the
      next round changes the lengths
      (:func:`~hpcswarm.swarm.methods.vlpso.divisions.changed_lengths`) instead of moving:
      positions cut off are dropped, positions added start uniform in [0, 1] with velocities
      uniform in [-vmax, vmax], pbests are cut or padded with 0 keeping their fitness; the
      swarm is evaluated, ``Pc`` recomputed, every exemplar renewed. Such a round does not
      count among the ``n_iterations`` (:class:`MoveLimit`).
    * Moves (Sec. III-D) by comprehensive learning (CLPSO, Liang et al. 2006): ``Pc``
      (:func:`~hpcswarm.swarm.methods.vlpso.exemplars.learning_probabilities`) from 0.05 for
      the best pbest up to 0.5 for the worst; exemplars
      (:func:`~hpcswarm.swarm.methods.vlpso.exemplars.choose_exemplars`) renewed after the
      initial evaluation, after each length change and for a particle whose pbest has not
      improved for ``refresh_gap`` rounds; inertia ``w - (w - w_final) m / (n_iterations -
      1)`` at the ``m``-th move (from 0), constant ``w`` when ``w_final`` is none.
    * Local search (``local_search``, off by default as in the authors' runs): every new
      pbest of the initial evaluation and of the moves :func:`searched_after` names is
      searched (:class:`~hpcswarm.swarm.methods.vlpso.local_search.RelevanceLocalSearch`),
      its tries scored with the search's own fitness.
    * Ties (``size_tiebreak``): subsets of equal fitness are ordered by fewer genes (the
      order of :mod:`hpcswarm.swarm.engine.ordering`, the paper's), wherever the search
      compares subsets; with it off, by fitness alone (the first met is kept), so that a
      search whose fitness is at its highest from round 0 no longer shrinks its subsets by
      size alone.
    * Gene order (``gene_order``): symmetric uncertainty by default, the paper's; ``"welch-rr"``
      (Welch's statistic class by class, taken round robin, Forman 2004) and ``"f"`` (the
      ANOVA F) order the genes by class means instead
      (:func:`~hpcswarm.swarm.methods.vlpso.gene_order.gene_order`); nothing else of the
      search changes.

    Parallel runs: the gene ranking splits the genes across the ranks (``8 n_genes`` bytes
    allgathered, once; ``8 n_classes n_genes`` for ``"welch-rr"``). The particles are dealt
    to the ranks by their lengths (:meth:`expected_genes`; the longest first, each to the
    least loaded rank), anew at each length change, the particles that change rank handed
    over with their rows and generators. Each rank moves and evaluates its own particles;
    every rank keeps every pbest position (CLPSO learns from other particles' pbests), so
    the rows of the pbests that improved in a round are allgathered (``8 n_genes`` bytes
    each). Lengths,
    ``Pc``, refresh counts and exemplars are computed identically on every rank from shared
    values and the exemplar streams. The local searches of a round are dealt evenly over
    the ranks, each drawing from its own stream, so they too give the serial result.
    """

    name = "vlpso"
    supports_max_genes = True
    PARAMS = (
        Param("n_particles", "int", 0,
              "swarm size (0: the paper's n_genes / 20 within [100, 300])", low=0),
        Param("n_iterations", "int", 101,
              "rounds of moves, the initial evaluation included (length changes come on top)",
              low=1),
        Param("target", "optional_float", None, "stop once the best fitness reaches this value"),
        Param("w", "float", 0.9, "inertia weight (at the first move)"),
        Param("w_final", "optional_float", 0.4,
              "inertia at the last move, linearly from w (none: constant w, as the authors' "
              "VarLenPSOMain runs)"),
        Param("c", "float", 1.49445, "acceleration constant of comprehensive learning", low=0),
        Param("vmax", "float", 0.6, "velocity clamp: |v| <= vmax", low=0),
        Param("theta", "float", 0.6, "selection threshold on positions (a gene is selected "
              "above it, so below 1)", low=0, high=1, high_open=True),
        Param("init", "choice", "normal",
              "initial positions of all but each division's first particle: normal (half of "
              "the particle's genes selected, Xue et al. 2014) or uniform (every position "
              "uniform in [0, 1], as the authors' Java draws them)",
              choices=("normal", "uniform")),
        Param("gene_order", "choice", "su",
              "the order whose prefixes the particles search: su (symmetric uncertainty, the "
              "paper's), welch-rr (Welch's statistic per class, round robin, Forman 2004) or "
              "f (ANOVA F)", choices=GENE_ORDERS),
        Param("n_divisions", "int", 12, "divisions of particles of different lengths", low=1),
        Param("change_after", "int", 9,
              "rounds without a better subset before the length change", low=1),
        Param("refresh_gap", "int", 7,
              "rounds without a better pbest before a particle's exemplars are renewed", low=1),
        Param("pc_low", "float", 0.05, "learning probability Pc of the best particle",
              low=0, high=1),
        Param("pc_high", "float", 0.5, "learning probability Pc of the worst particle",
              low=0, high=1),
        Param("size_tiebreak", "bool", True,
              "among subsets of equal fitness the one with fewer genes is better (pbests, the "
              "best subset, Pc ranks, exemplar tournaments, the length change's stall count; "
              "Xue et al. 2014); false: fitness alone, the first met kept"),
    ) + RelevanceLocalSearch.PARAMS + override(FITNESS_PARAMS, k=1, cv=10)
    PREPROCESS = (("minmax", None),)
    """Every gene scaled to [0, 1] on the training samples before the search (the
    authors' ``VarLenPSOMain.VECLPSO``, lines 155-159: Weka's ``Normalize`` fitted on the
    training folds), read by every front door."""
    STATE = ("order", "division", "lengths", "max_length", "n_changes", "pc", "exemplars",
             "stalled")
    STATE_VALUES = {"order": ArraySpec("i", ("genes",), 0, "last_gene", distinct=True),
                    "division": ArraySpec("i", ("particles",), 0),
                    "lengths": ArraySpec("i", ("particles",), 0, "genes"),
                    "max_length": ArraySpec("i", (), 1, "genes"),
                    "n_changes": ArraySpec("i", (), 0, "iteration"),
                    "pc": ArraySpec("f", ("particles",), 0.0, 1.0),
                    "exemplars": ArraySpec("i", ("particles", "genes"), -1, "last_particle"),
                    "stalled": ArraySpec("i", ("particles",), 0, "iteration")}

    @classmethod
    def state_problem(cls, state, params, n_genes):
        """The account's ties (:meth:`SearchAlgorithm.state_problem`), and VLPSO's: each
        particle in the division :func:`~hpcswarm.swarm.methods.vlpso.divisions.division_of` deals
        it, with
        its division's length, the division lengths those of a cut or length change
        (:func:`~hpcswarm.swarm.methods.vlpso.divisions.lengths_problem`) whose maximum is
        ``max_length``;
        one length change event per change; ``Pc`` one value of its curve per rank; refresh
        counts below ``refresh_gap`` (renewed at each round's end); and each particle's
        exemplars set over its length, -1 beyond."""
        problem = super().state_problem(state, params, n_genes)
        if problem is not None:
            return problem
        n = cls.swarm_size(params, n_genes)
        n_divisions = fitting_divisions(params["n_divisions"], n)
        division, lengths = state["division"], state["lengths"]
        if not np.array_equal(division, division_of(n, n_divisions)):
            return f"'division' is not the {n_divisions} divisions of {n} particles"
        per_division = lengths[np.searchsorted(division, np.arange(n_divisions))]
        if not np.array_equal(lengths, per_division[division]):
            return "'lengths' differ within a division"
        problem = lengths_problem(per_division, state["max_length"], n_genes)
        if problem is not None:
            return f"'lengths' and 'max_length': {problem}"
        changes = sum(event["event"] == "length_change" for event in state["events"])
        if changes != state["n_changes"]:
            return f"'n_changes' is {state['n_changes']}, with {changes} length change events"
        curve = learning_probabilities(np.zeros(n), np.zeros(n), params["pc_low"],
                                       params["pc_high"])  # by rank, in increasing order
        if not np.array_equal(np.sort(state["pc"]), curve):
            return "'pc' is not the learning probabilities of the particles' ranks"
        if (state["stalled"] >= params["refresh_gap"]).any():
            return f"'stalled' holds counts of {params['refresh_gap']} rounds or more"
        inside = np.arange(n_genes)[None, :] < lengths[:, None]
        exemplars = state["exemplars"]
        if (exemplars[inside] < 0).any() or (exemplars[~inside] != -1).any():
            return "'exemplars' are not set over each particle's length and -1 beyond"
        return None

    @classmethod
    def swarm_problem(cls, arrays, state, params, n_genes):
        """The swarm's ties (:meth:`PersonalBestSwarm.swarm_problem`), and each particle's
        position, velocity and pbest 0 beyond its length (on the genes after the first
        ``lengths[i]`` of ``order``)."""
        problem = super().swarm_problem(arrays, state, params, n_genes)
        if problem is not None:
            return problem
        rank = np.empty(n_genes, dtype=np.int64)
        rank[state["order"]] = np.arange(n_genes)
        beyond = rank[None, :] >= state["lengths"][:, None]
        for name in ("position", "velocity", "pbest_position"):
            if arrays[name][beyond].any():
                return f"'{name}' is not 0 beyond each particle's length"
        return None

    @classmethod
    def swarm_size(cls, params, n_genes):
        """The paper's size for ``n_particles = 0``
        (:func:`hpcswarm.swarm.methods.vlpso.divisions.swarm_size`)."""
        return swarm_size(params["n_particles"], n_genes)

    @classmethod
    def cached_states(cls, params):
        """One with the local search on (the current subset's, during a search), else none."""
        return int(params["local_search"])

    @classmethod
    def table_bytes(cls, params, n_samples, n_genes):
        """The local search's :class:`~hpcswarm.swarm.methods.vlpso.local_search.GeneTable` when
        on."""
        return GeneTable.bytes_needed(n_samples, n_genes) if params["local_search"] else 0

    @classmethod
    def validate(cls, params):
        if params["n_particles"] == 1:
            raise ParameterError(
                "parameter 'n_particles' must be 0 (the paper's rule) or at least 2 for vlpso "
                "(comprehensive learning draws from other particles), got 1")
        if params["pc_low"] > params["pc_high"]:
            raise ParameterError(
                "parameter 'pc_low' must not exceed 'pc_high' for vlpso "
                f"(got pc_low={params['pc_low']}, pc_high={params['pc_high']})")

    def __init__(self, evaluator, params, seed=0, hooks=None, max_genes=None,
                 termination=None):
        super().__init__(evaluator, params, seed, hooks, max_genes, termination)
        self.params["n_particles"] = swarm_size(self.params["n_particles"], self.n_genes)
        n_divisions = fitting_divisions(self.params["n_divisions"], self.params["n_particles"])
        if n_divisions != self.params["n_divisions"]:
            warn_once(("vlpso n_divisions", self.params["n_divisions"], n_divisions),
                      f"vlpso: n_divisions={self.params['n_divisions']} reduced to "
                      f"{n_divisions}, the swarm's n_particles (a division needs a particle; pass "
                      f"n_divisions={n_divisions} to choose it)", SettingNote)
        self.params["n_divisions"] = n_divisions
        self.local_search = RelevanceLocalSearch() if self.params["local_search"] else None
        self.searching = False

    @classmethod
    def default_termination(cls, params, n_genes):
        return MoveLimit(params["n_iterations"], params.get("target"))

    # ------------------------------------------------------------------ rounds
    def initialise(self):
        scorer = self.fitness.scorer
        table = self.local_search.gene_table(self) if self.local_search else None
        self.order = gene_order(self.params["gene_order"], scorer.data, scorer.codes,
                                self.comm, table)
        n, n_divisions = self.params["n_particles"], self.params["n_divisions"]
        self.division = division_of(n, n_divisions)
        self.max_length = (self.n_genes if self.max_genes is None
                           else min(self.n_genes, self.max_genes))
        self.lengths = division_lengths(self.max_length, n_divisions)[self.division]
        self.n_changes = 0
        self.stalled = np.zeros(n, dtype=np.int64)
        self.exemplars = np.full((n, self.n_genes), -1, dtype=np.int32)
        self.searching = self.local_search is not None
        super().initialise()
        self.learn_afresh()

    def initial_position(self, i):
        """Particle ``i``'s first position over its length: all 1.0 for the first particle
        of its division, the ``init`` strategy for the others (``"normal"``: half of its
        genes selected; ``"uniform"``: every position uniform in [0, 1];
        :func:`~hpcswarm.swarm.operators.initialisation.initial_position`); its velocity is drawn
        here
        too, uniform in [-vmax, vmax] (``VLSwarm.initParticle``)."""
        genes = self.order[:self.lengths[i]]
        rng = self.state.rngs[i]
        position = np.zeros(self.n_genes)
        first = i == 0 or self.division[i] != self.division[i - 1]
        position[genes] = (1.0 if first else initial_position(
            self.params["init"], genes.size, self.params["theta"], rng))
        self.state.velocity[i, genes] = rng.uniform(-self.params["vmax"], self.params["vmax"],
                                                    genes.size)
        return position

    def step(self):
        if self.stagnation >= self.params["change_after"]:
            self.change_length()
            return
        move = self.iteration - self.n_changes - 1
        self.searching = self.local_search is not None and searched_after(move + 1)
        w = inertia(self.params["w"], self.params["w_final"], move,
                    max(self.params["n_iterations"] - 1, 1))
        for i in self.local:
            self.move(i, w)
        self.refresh_masks(self.local)
        self.evaluate_round()
        self.renew_exemplars(np.flatnonzero(self.stalled >= self.params["refresh_gap"]))

    def move(self, i, w):
        """Comprehensive-learning velocity (clamped to vmax) and position update of own
        particle ``i`` over its length (Sec. III-D; Liang et al. 2006, Eq. 8)."""
        p, s = self.params, self.state
        length = self.lengths[i]
        genes = self.order[:length]
        learned = s.pbest_position[self.exemplars[i, :length], genes]
        r = s.rngs[i].random(length)
        velocity = w * s.velocity[i, genes] + p["c"] * r * (learned - s.position[i, genes])
        s.velocity[i, genes] = np.clip(velocity, -p["vmax"], p["vmax"])
        s.position[i] = self.next_position(i)

    def next_position(self, i):
        """``clip(x + v, 0, 1)``; beyond its length a particle's position and velocity are 0."""
        return continuous_position(self.state.position[i], self.state.velocity[i])

    def masks_of(self, positions):
        return threshold_mask(positions, self.params["theta"])

    def capped_position(self, i):
        """Particle ``i``'s position as it is: VLPSO's size cap is the maximum particle length
        (``max_genes`` caps ``max_length``, :meth:`initialise`), and a particle selects none of
        the genes past its length, so no position selects more than ``max_genes``."""
        return self.state.position[i]

    def after_pbests(self, improved):
        """The local search on the new pbests, in a round that has one (``searching``, set
        before each evaluation: the initial one, a move's, a length change's)."""
        super().after_pbests(improved)
        if self.searching:
            self.local_search.run(self, improved)

    def evaluate_round(self):
        """:meth:`PersonalBestSwarm.evaluate_round` (with the local search on the new pbests in
        the rounds that have one), then every rank takes the rows of the pbests that
        improved and counts the rounds each pbest has not improved."""
        s = self.state
        before = s.pbest_fitness.copy(), s.pbest_size.copy()
        super().evaluate_round()
        improved = np.flatnonzero((s.pbest_fitness != before[0]) | (s.pbest_size != before[1]))
        mine = self.ownership.owned(improved)
        rows = self.ownership.allgather(self.comm, s.pbest_position[mine], improved)
        s.pbest_position[improved] = rows.reshape(improved.size, self.n_genes)
        s.pbest_mask[improved] = self.masks_of(s.pbest_position[improved])
        self.stalled += 1
        self.stalled[improved] = 0

    # ------------------------------------------------------------------ mechanisms
    def learn_afresh(self):
        """``Pc`` from the pbest ranks and new exemplars for every particle (after the
        initial evaluation and each length change)."""
        s = self.state
        self.pc = learning_probabilities(s.pbest_fitness,
                                         self.evaluator.ordering.tie_sizes(s.pbest_size),
                                         self.params["pc_low"], self.params["pc_high"])
        self.renew_exemplars(np.arange(s.n_particles))

    def renew_exemplars(self, particles):
        """New exemplars for ``particles`` (the same on every rank: each particle's draws come
        from its exemplar stream of this round) and their refresh counts restarted."""
        s = self.state
        sizes = self.evaluator.ordering.tie_sizes(s.pbest_size)
        for i in particles:
            rng = np.random.default_rng(child_sequence(self.seed_sequence, EXEMPLARS, int(i),
                                                       self.iteration))
            self.exemplars[i] = -1
            self.exemplars[i, :self.lengths[i]] = choose_exemplars(
                i, self.lengths, s.pbest_fitness, sizes, self.pc[i], rng)
        self.stalled[particles] = 0

    def change_length(self):
        """The length change round (Sec. III-C): new lengths, the particles dealt anew by them
        (:meth:`~hpcswarm.swarm.engine.loop.SearchAlgorithm.redeal`), the swarm evaluated."""
        s, p = self.state, self.params
        n_divisions = p["n_divisions"]
        best = best_division(s.pbest_fitness, self.division, n_divisions)
        current = self.lengths[np.searchsorted(self.division, np.arange(n_divisions))]
        lengths, self.max_length = changed_lengths(current, best)
        new = lengths[self.division]
        for i in np.flatnonzero(new != self.lengths):
            old, length = self.lengths[i], new[i]
            if length < old:
                cut = self.order[length:old]
                s.pbest_position[i, cut] = 0.0
                s.position[i, cut] = 0.0
                s.velocity[i, cut] = 0.0
            elif i in self.local:
                added = self.order[old:length]
                s.position[i, added] = s.rngs[i].random(added.size)
                s.velocity[i, added] = s.rngs[i].uniform(-p["vmax"], p["vmax"], added.size)
        s.pbest_mask[:] = self.masks_of(s.pbest_position)
        s.pbest_size[:] = np.count_nonzero(s.pbest_mask, axis=1)
        self.lengths = new
        self.n_changes += 1
        self.event("length_change", best_division=best, max_length=self.max_length)
        self.searching = False
        self.redeal()
        self.refresh_masks(self.local)
        self.evaluate_round()
        self.stagnation = 0
        self.learn_afresh()

    def expected_genes(self):
        """Half of each particle's length: the particles select about the same share of
        their genes (the ``normal`` initialisation half, Xue et al. 2014), so their costs
        grow with their lengths, and the particles are dealt to the groups by them
        (:class:`~hpcswarm.swarm.engine.deal.Deal`), anew at each length change."""
        return np.maximum(self.lengths // 2, 1)

    def extra(self):
        return {**super().extra(), "ranking": self.order.tolist(),
                "lengths": self.lengths.tolist()}
