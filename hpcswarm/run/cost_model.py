"""The time and memory of one VLPSO search, modelled from its sizes (an estimate).

VLPSO (Tran, Xue and Zhang 2018) spends its time in the k-NN cross-validation of its
particles' subsets. A particle of division ``j`` of 12 has length ``(j + 1) M / 12`` (Sec.
III-B; ``M`` the number of genes until the first length change, then the best division's
length) and selects about ``selected`` of it, the first particle of each division
``selected_first`` (its position starts at 1.0 on every gene of its length). Each round
evaluates every particle:

- by a full product over its selected genes (its first evaluation, the round of a length
  change, a move of more than three quarters of its subset, a particle beyond the rank's cache
  budget): ``multiply_add`` seconds per multiply-add of the product of its shard's held-out
  rows by every sample, plus ``pair`` seconds per (row, sample) pair (gathering the values,
  deciding each row). Where one rank's rows are every sample (one shard) the distances are
  symmetric: a product that writes a state makes their upper triangle only (half the
  multiply-adds), and one without a state is a symmetric product (BLAS ``syrk``, half the
  multiply-adds) where one block holds every row (:func:`whole_gram`); the pass still
  decides every (row, sample) pair (each value of the triangle is offered to both rows);
- or, with its distance state kept (:class:`~hpcswarm.fitness.moves.ParticleStates`), by
  the genes its move flipped: ``move_multiply_add`` seconds per multiply-add of their
  product (blocks of rows by a few flipped genes, gathered and signed: a slower rate than a
  Gram product's) plus ``move_pair`` seconds per (row, sample) pair (the pass over the
  state, the decisions), the product halved where the rows are every sample (the upper
  triangle, :mod:`hpcswarm.fitness.move_kernel`). The genes flipped are a fraction of the
  subset that falls with the rounds since the last full round, measured
  (:class:`CostConstants`).

A round costs its busiest particle group (the groups wait for each other), with the
particles dealt by expected cost (:func:`balanced_deal`; as the search deals them, by their
lengths: the first particles' fuller subsets unknown to it), plus ``particle`` seconds per
particle of the group (the host's work of a particle whatever its genes: its move, its
mask, the call of its evaluation), plus ``swarm`` seconds per particle of the whole swarm
(what every rank does for every particle: VLPSO keeps every pbest and exemplar on every
rank), plus, on more than one rank, ``exchange`` seconds per doubling of the ranks (the
round's collectives between them: the best subset, the keys, the rows of the pbests that
improved, a tree of ``log2(ranks)`` steps). The SU ranking, once, costs ``su_gene`` per
gene and ``su`` per gene and ``n log2 n``, its genes split over the groups.

The memory of a rank is the pre-flight's estimate (:func:`~hpcswarm.run.plan.search_needs`,
with the transformed copy of the preprocessing held once per rank group on a node:
:func:`node_copy_share`), the particle states its cache budget holds (by default
:func:`~hpcswarm.selection.search.default_cache_bytes`) and its share of the
memory-mapped matrix (4-byte values whose pages the ranks of a node share). The model
assumes nodes of ``ranks_per_node`` consecutive ranks (a real job asks MPI,
:func:`hpcswarm.run.plan.node_copy_share`).
"""

import math

from dataclasses import asdict, dataclass, replace

import numpy as np

from hpcswarm.fitness.evaluator import scorer_bytes
from hpcswarm.fitness.incremental import state_bytes
from hpcswarm.fitness.moves import worth_moving
from hpcswarm.fitness.rowblocks import row_block_size
from hpcswarm.run.plan import search_needs
from hpcswarm.selection.methods import algorithm_class
from hpcswarm.selection.search import default_cache_bytes
from hpcswarm.swarm.engine.deal import deal_with_slots
from hpcswarm.swarm.methods.vlpso.divisions import division_lengths, division_of
from hpcswarm.system import MEMORY_SHARE

DIVISIONS = 12
"""VLPSO's divisions (its default ``n_divisions``)."""

PROCESS_BYTES = 150e6
"""Bytes a rank's Python process holds before its search (interpreter, numpy, mpi4py)."""


@dataclass(frozen=True)
class CostConstants:
    """The constants of the model, in seconds of an idle core (one BLAS thread).

    The defaults are those ``benchmarks/bench_vlpso.py`` fitted on the 2-core development
    VM on 2026-12-06 (500 x 2,000 to 2,000 x 5,000, 24 particles, 1 rank, 2 groups and 2
    shards; the flips from 100 particles, 40 rounds at 500 x 2,000), scaled to an idle core
    by the CPU over wall-clock seconds of the GEMMs and searches timed in the same run
    (``docs/large-cohorts.md``, "VLPSO's cost by size").

    Attributes
    ----------
    multiply_add : float
        Seconds per multiply-add of a full product (a Gram product of the subset's genes),
        timed on bare GEMMs of the benchmark's subsets.
    move_multiply_add : float
        Seconds per multiply-add of a move's product (each block of rows by the few flipped
        genes, their values gathered and signed first).
    pair : float
        Seconds per (held-out row, sample) pair of a full evaluation beyond its product
        (gathering, the pass that decides each row).
    move_pair : float
        Seconds per (held-out row, sample) pair of a move beyond its product (its pass over
        the state: the change added, each row decided).
    particle : float
        Seconds per particle and round beyond its products and passes (Python's work of a
        particle whatever its genes: its move, its mask, the call of its evaluation).
    exchange : float
        Seconds per round and doubling of the ranks of the collectives between them (a
        handful of short vectors each round, bound by latency).
    swarm : float
        Seconds per particle of the whole swarm and round that every rank spends whatever
        its own particles (VLPSO keeps every pbest on every rank: the rows of the pbests
        that improved taken in, the exemplars renewed for every particle that stalled).
    su_gene, su : float
        Seconds of the SU ranking per gene, and per gene and ``n log2 n``.
    selected : float
        Genes a particle selects over its length (0.52 with the paper's swarm).
    selected_first : float
        Genes the first particle of a division selects over its length: its position starts
        at 1.0 on every gene of its length (Sec. III-B) and stays above the threshold on
        most of them, fitted to the 2-group runs, whose groups hold different shares of
        these particles.
    flipped_first : float
        Genes flipped by the first move over the subset's size.
    flipped_second, flipped_decay : float
        From the second move on, ``flipped_second (k / 2) ** -flipped_decay`` of the subset
        flipped in the ``k``-th move.
    flipped_after_change : float
        Genes flipped by each move after a length change over the subset's size.
    """

    multiply_add: float = 3.82e-11
    move_multiply_add: float = 5.55e-11
    pair: float = 2.07e-9
    move_pair: float = 1.66e-9
    particle: float = 8.4e-5
    exchange: float = 0.0
    swarm: float = 6.5e-5
    su_gene: float = 3.43e-5
    su: float = 7.74e-9
    selected: float = 0.52
    selected_first: float = 0.891
    flipped_first: float = 0.536
    flipped_second: float = 0.227
    flipped_decay: float = 0.702
    flipped_after_change: float = 0.0235

    def flipped(self, moves_since_full, after_change):
        """Genes flipped over the subset's size in the ``moves_since_full``-th move (1 the
        first) since the search's start or its last length change."""
        if after_change:
            return self.flipped_after_change
        if moves_since_full <= 1:
            return self.flipped_first
        return self.flipped_second * (moves_since_full / 2) ** -self.flipped_decay

    def as_dict(self):
        """The constants as a plain dict."""
        return asdict(self)


def whole_gram(n_samples, n_shards):
    """Whether one rank makes the whole Gram matrix in one block, a symmetric product (BLAS
    ``syrk``) of half the multiply-adds
    (:meth:`~hpcswarm.fitness.evaluator.KnnEvaluator._full`)."""
    return n_shards == 1 and row_block_size(n_samples) >= n_samples


def symmetric_shares(n_samples, n_shards):
    """``(uncached, state)``: the share of the multiply-adds of a full product without a
    state (half of them in a whole Gram matrix, :func:`whole_gram`), and of the
    multiply-adds of one that writes a state and of a move (half where a rank's rows are
    every sample: the upper triangle, :mod:`hpcswarm.fitness.move_kernel`). Their passes
    decide every pair all the same: each value of the triangle is offered to both rows."""
    return 0.5 if whole_gram(n_samples, n_shards) else 1.0, 0.5 if n_shards == 1 else 1.0


def exchange_steps(n_ranks):
    """Steps of a round's collectives between ``n_ranks`` ranks: ``log2`` of the ranks (a
    tree), none on one rank."""
    return math.log2(n_ranks) if n_ranks > 1 else 0.0


def balanced_deal(costs, n_groups, cached_costs=None, states_per_group=0):
    """The search's own deal (:func:`~hpcswarm.swarm.engine.deal.deal_with_slots`, the
    longest-processing-time rule) of particles whose ``costs`` (and ``cached_costs`` in a
    group with one of its ``states_per_group`` states free) are seconds, counted in whole
    nanoseconds as the deal counts in integers.

    Returns
    -------
    groups : ndarray of int64 of shape (n_particles,)
    cached : ndarray of bool of shape (n_particles,)
    """
    def nanoseconds(seconds):
        return np.rint(np.asarray(seconds, dtype=float) * 1e9).astype(np.int64)

    return deal_with_slots(nanoseconds(costs), n_groups,
                           None if cached_costs is None else nanoseconds(cached_costs),
                           states_per_group)


def groups_on_node(group_ranks, ranks_per_node):
    """The most rank groups of ``group_ranks`` consecutive ranks that have ranks on one node
    of ``ranks_per_node`` consecutive ranks (groups and nodes laid out from rank 0). Pure."""
    period = group_ranks // math.gcd(group_ranks, ranks_per_node)  # then the layout repeats
    return max(((node + 1) * ranks_per_node - 1) // group_ranks
               - node * ranks_per_node // group_ranks + 1 for node in range(period))


def node_copy_share(group_ranks, ranks_per_node):
    """The model's share of a rank group's transformed copy, held once per node, that each
    rank counts (:func:`hpcswarm.run.plan.node_copy_share` asks MPI instead): the groups of
    ``group_ranks`` ranks with ranks on a node (:func:`groups_on_node`) over its
    ``ranks_per_node`` ranks."""
    return groups_on_node(group_ranks, ranks_per_node) / ranks_per_node


def held_bytes(spec, n_samples, n_genes, n_shards, copy_share=1.0):
    """Bytes a rank holds beside its particle states and a full evaluation's values: the
    process and the pre-flight's estimate but its scorer (the swarm, the archive, the
    tables, its share ``copy_share`` of the preprocessed copy and the fitting's peak)."""
    needs = search_needs(replace(spec, cache_memory=None), n_samples, n_genes, n_shards,
                         copy_share)
    return PROCESS_BYTES + sum(value for name, value in needs.items() if name != "scorer")


def rank_states(spec, n_samples, n_genes, n_shards, memory_per_rank, copy_share=1.0):
    """Particle states one rank of ``n_shards`` shards keeps: its cache budget (the spec's
    ``cache_memory``, or :func:`~hpcswarm.selection.search.default_cache_bytes` of
    ``memory_per_rank``) over one state of its shard's held-out rows."""
    if spec.cache_memory is None:
        budget = default_cache_bytes(memory_per_rank, held_bytes(spec, n_samples, n_genes,
                                                                 n_shards, copy_share),
                                     scorer_bytes(n_samples, n_genes, n_shards))
    else:
        budget = spec.cache_memory * 1e9
    return int(budget // state_bytes(-(-n_samples // n_shards), n_samples, n_genes))


@dataclass(frozen=True)
class SearchCost:
    """What the model expects of one search.

    Attributes
    ----------
    seconds : float
        The whole search: the SU ranking and every round.
    su_seconds : float
    round_seconds : list of float
        Each round, the initial evaluation first.
    cached : int
        Particles with a state (in the rounds before the first length change).
    n_particles, n_groups, n_shards : int
    memory_bytes : float
        A rank's memory: the pre-flight's estimate, its states and its share of the
        memory-mapped matrix.
    allowed_bytes : float
        The pre-flight's share of ``memory_per_rank``.
    """

    seconds: float
    su_seconds: float
    round_seconds: list
    cached: int
    n_particles: int
    n_groups: int
    n_shards: int
    memory_bytes: float
    allowed_bytes: float


def particle_costs(sizes, flipped, n_samples, n_shards, constants):
    """``(uncached, rebuilt, move)`` seconds of each particle's evaluation: a full product of
    ``sizes`` genes without a state and one that writes its state, and a move of
    ``flipped`` genes from its state (the products of a rank of ``n_shards`` shards)."""
    pairs = -(-n_samples // n_shards) * n_samples
    uncached_share, state_share = symmetric_shares(n_samples, n_shards)
    uncached = (constants.multiply_add * uncached_share * sizes + constants.pair) * pairs
    rebuilt = (constants.multiply_add * state_share * sizes + constants.pair) * pairs
    move = (constants.move_multiply_add * state_share * flipped + constants.move_pair) * pairs
    return uncached, rebuilt, move


def first_of_division(n_particles, divisions):
    """Whether each particle is the first of its division (VLPSO's, :func:`division_of`)."""
    division = division_of(n_particles, divisions)
    return np.r_[True, division[1:] != division[:-1]]


def round_costs(lengths, first, moves_since_full, after_change, flipped_since, n_samples,
                n_shards, constants):
    """Per particle of lengths ``lengths`` (``first``: the first of its division): its cost
    without a state, its cost with one (a move where
    :func:`~hpcswarm.fitness.moves.worth_moving` says so, else a full product that writes
    the state anew) and the genes that move flips."""
    share = np.where(first, constants.selected_first, constants.selected)
    sizes = np.maximum(1.0, np.round(share * lengths))
    if moves_since_full == 0:
        flips = sizes.copy()
    else:
        flips = np.round(constants.flipped(moves_since_full, after_change) * sizes)
    uncached, rebuilt, move = particle_costs(sizes, flips, n_samples, n_shards, constants)
    moving = np.array([worth_moving(int(f), int(s), int(since))
                       for f, s, since in zip(flips, sizes, flipped_since)])
    return uncached, np.where(moving, move, rebuilt), np.where(moving, flips, 0.0)


def search_cost(spec, n_samples, n_genes, n_groups=1, n_shards=1, *, n_rounds=None,
                length_changes=(), memory_per_rank=4e9, ranks_per_node=64, constants=None,
                deal=balanced_deal, states=None, copy_share=None):
    """The seconds and memory the model expects of one VLPSO search of ``spec`` on
    ``n_samples`` x ``n_genes`` by ``n_groups`` particle groups x ``n_shards`` sample shards.

    Parameters
    ----------
    spec : SearchSpec
        A VLPSO search (its swarm size, rounds and cache budget are read).
    n_rounds : int, optional
        Rounds (the initial evaluation and the moves); default the spec's ``n_iterations``.
    length_changes : sequence of (int, int)
        ``(round, max_length)`` of each length change: the round (counting every round
        before it, changes included) whose evaluation, on top of ``n_rounds``, sets the
        divisions' lengths from ``max_length``.
    memory_per_rank : float
        Bytes each rank sees (the default cache budget's base, and the pre-flight's).
    ranks_per_node : int
        Ranks that share the pages of the memory-mapped matrix; its rank groups (of
        ``n_groups x n_shards`` ranks) share a transformed copy on each node.
    constants : CostConstants, optional
    deal : callable
        ``deal(costs, n_groups, cached_costs, states_per_group) -> (groups, cached)``, made
        anew at each length change (:func:`balanced_deal`).
    states : int, optional
        The particle states a rank keeps (default :func:`rank_states`).
    copy_share : float, optional
        A rank's share of its node's transformed copies (default :func:`node_copy_share`
        of the search's ranks on nodes of ``ranks_per_node``).
    """
    constants = constants or CostConstants()
    if copy_share is None:
        copy_share = node_copy_share(n_groups * n_shards, ranks_per_node)
    n_particles = _swarm_size(spec, n_genes)
    n_rounds = spec.params.get("n_iterations", 101) if n_rounds is None else n_rounds
    divisions = min(DIVISIONS, n_particles)
    if states is None:
        states = rank_states(spec, n_samples, n_genes, n_shards, memory_per_rank, copy_share)
    states = min(states, n_particles)
    bounds = [0] + [round_ for round_, _ in length_changes] + [n_rounds + len(length_changes)]
    lengths_from = [n_genes] + [length for _, length in length_changes]
    first = first_of_division(n_particles, divisions)
    round_seconds, cached_first = [], None
    for phase, max_length in enumerate(lengths_from):
        lengths = division_lengths(max_length, divisions)[division_of(n_particles,
                                                                     divisions)].astype(float)
        steady_uncached, steady_cached, _ = round_costs(lengths, np.zeros(n_particles, bool),
                                                        2, phase > 0, np.zeros(n_particles),
                                                        n_samples, n_shards, constants)
        groups, cached = deal(steady_uncached, n_groups, steady_cached, states)
        cached_first = int(cached.sum()) if cached_first is None else cached_first
        flipped_since = np.zeros(n_particles)
        for move in range(bounds[phase + 1] - bounds[phase]):
            uncached, with_state, flips = round_costs(lengths, first, move, phase > 0,
                                                      flipped_since, n_samples, n_shards,
                                                      constants)
            flipped_since = np.where(flips > 0, flipped_since + flips, 0.0)
            costs = np.where(cached, with_state, uncached)
            loads = np.bincount(groups, weights=costs, minlength=n_groups)
            members = np.bincount(groups, minlength=n_groups)
            round_seconds.append(float(np.max(loads + constants.particle * members))
                                 + constants.swarm * n_particles
                                 + constants.exchange * exchange_steps(n_groups * n_shards))
    su = (constants.su_gene * n_genes
          + constants.su * n_genes * n_samples * np.log2(n_samples)) / n_groups
    rows = -(-n_samples // n_shards)
    needs = search_needs(replace(spec, cache_memory=None), n_samples, n_genes, n_shards,
                         copy_share)
    memory = (PROCESS_BYTES + sum(needs.values())
              + min(states, -(-n_particles // n_groups)) * state_bytes(rows, n_samples, n_genes)
              + 4.0 * n_samples * n_genes / ranks_per_node)
    return SearchCost(seconds=su + sum(round_seconds), su_seconds=su,
                      round_seconds=round_seconds, cached=cached_first,
                      n_particles=n_particles, n_groups=n_groups, n_shards=n_shards,
                      memory_bytes=memory, allowed_bytes=MEMORY_SHARE * memory_per_rank)


def _swarm_size(spec, n_genes):
    return algorithm_class(spec.algorithm).swarm_size(spec.params, n_genes)


def layouts(n_ranks, n_particles):
    """Every ``(groups, shards)`` with ``groups x shards = n_ranks`` and at most one group
    per particle."""
    return [(n_ranks // shards, shards) for shards in range(1, n_ranks + 1)
            if n_ranks % shards == 0 and n_ranks // shards <= n_particles]


def best_search(spec, n_samples, n_genes, n_ranks, **options):
    """The :class:`SearchCost` of the fastest layout of ``n_ranks`` ranks whose memory fits
    the pre-flight's share (the fastest of all when none fits)."""
    found = [search_cost(spec, n_samples, n_genes, groups, shards, **options)
             for groups, shards in layouts(n_ranks, _swarm_size(spec, n_genes))]
    fitting = [cost for cost in found if cost.memory_bytes <= cost.allowed_bytes]
    return min(fitting or found, key=lambda cost: cost.seconds)


@dataclass(frozen=True)
class SignatureCost:
    """What the model expects of a signature's searches: ``tasks`` searches (the outer
    folds' and the final one) farmed to ``n_task_groups`` rank groups as they become free.

    Attributes
    ----------
    seconds : float
        The busiest rank group's searches.
    n_task_groups : int
    fold_search, final_search : SearchCost
        One search on a rank group, on the folds' training rows and on every sample.
    """

    seconds: float
    n_task_groups: int
    fold_search: SearchCost
    final_search: SearchCost


def farmed_seconds(task_seconds, n_groups):
    """Seconds until ``n_groups`` rank groups finish tasks of ``task_seconds``, dealt longest
    first, each to the group free first (the busiest group's load, the list-scheduling model
    of the task farm, which hands the next task to whichever group asks first)."""
    loads = np.zeros(max(1, n_groups))
    for seconds in sorted(task_seconds, reverse=True):
        loads[np.argmin(loads)] += seconds
    return float(loads.max())


def signature_cost(spec, n_samples, n_genes, n_ranks, n_folds=10, **options):
    """The fastest way the model finds to run a signature's ``n_folds`` outer-fold searches
    (on ``(n_folds - 1) / n_folds`` of the samples) and its final search on every sample on
    ``n_ranks`` ranks: over the rank groups the task farm forms (dividing ``n_ranks``, at
    most one per task) and each group's particle groups x shards (:func:`best_search`). The
    tasks go to the groups longest first, each to the group free first."""
    train = n_samples - -(-n_samples // n_folds)
    best = None
    for n_task_groups in range(1, min(n_folds + 1, n_ranks) + 1):
        if n_ranks % n_task_groups:
            continue
        ranks = n_ranks // n_task_groups
        fold = best_search(spec, train, n_genes, ranks, **options)
        final = best_search(spec, n_samples, n_genes, ranks, **options)
        cost = SignatureCost(farmed_seconds([final.seconds] + [fold.seconds] * n_folds,
                                            n_task_groups), n_task_groups, fold, final)
        if best is None or cost.seconds < best.seconds:
            best = cost
    return best


def constants_text(constants):
    """The constants of the model in words (what ``run --dry-run`` states)."""
    return (f"{constants.multiply_add:.3g} s per multiply-add of a full product and "
            f"{constants.move_multiply_add:.3g} s of a move's, {constants.pair:.3g} s per "
            f"(held-out row, sample) pair of a full evaluation and {constants.move_pair:.3g} s "
            f"of a move, {constants.particle:.3g} s per particle and round, "
            f"{constants.swarm:.3g} s per particle of the swarm and round on every rank, "
            f"{constants.exchange:.3g} s per round and doubling of the ranks; "
            f"{constants.selected:.2g} of a particle's length selected "
            f"({constants.selected_first:.2g} by the first of its division); genes flipped over "
            f"the subset {constants.flipped_first:.2g} in the first move, "
            f"{constants.flipped_second:.2g} (k / 2)^-{constants.flipped_decay:.2g} in the "
            f"k-th, {constants.flipped_after_change:.2g} after a length change")


def duration(seconds):
    """Seconds in the unit that reads best."""
    if seconds < 120:
        return f"{seconds:.3g} s"
    if seconds < 7200:
        return f"{seconds / 60:.3g} min"
    return f"{seconds / 3600:.3g} h"
