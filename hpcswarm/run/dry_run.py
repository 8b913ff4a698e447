"""The plan of one search, or of a job's searches, stated without running them
(``hpcswarm run --dry-run``, ``hpcswarm run JOB.toml --dry-run``), and in one line at the start
of a real run.

The grid of particle groups x sample shards the ranks form, the memory the pre-flight
estimates for each rank (:func:`~hpcswarm.run.plan.search_needs`), the particle states each
rank keeps (:func:`~hpcswarm.selection.search.cache_states`): what the search would hold, from
the same functions the search itself calls; and for VLPSO the time the cost model expects
(:mod:`hpcswarm.run.cost_model`, an estimate). A job's tasks are farmed to its rank groups;
its time is that of the busiest group, the searches dealt longest first
(:func:`~hpcswarm.run.cost_model.farmed_seconds`).
"""

from dataclasses import dataclass

from hpcswarm.comm import split_grid
from hpcswarm.errors import ParameterError
from hpcswarm.fitness.incremental import state_bytes
from hpcswarm.run.cost_model import (CostConstants, constants_text, duration, farmed_seconds,
                                     search_cost)
from hpcswarm.run.plan import node_copy_share, search_needs
from hpcswarm.selection.methods import algorithm_class
from hpcswarm.selection.search import cache_states
from hpcswarm.system import MEMORY_SHARE, available_memory

MODELLED = "vlpso"
"""The method the cost model describes."""

NOTHING_LEFT = "no search left to run: the checkpoint holds every task's result"
"""A resumed job's plan when every task is finished."""


@dataclass(frozen=True)
class SearchPlan:
    """What one search will hold and, for VLPSO, take (:func:`search_plan`).

    Attributes
    ----------
    n_ranks, n_groups, n_shards, n_particles, per_group : int
        The grid, the swarm and the most particles a group holds.
    needs : dict of str to int
        The pre-flight's estimate per rank, by part.
    have : int
        Bytes each rank sees; ``what`` says from where.
    what : str
    one_state : int
        Bytes of one particle state of a rank's shard.
    states : int
        Particle states a rank keeps (its cache budget over ``one_state``).
    bounds : tuple of SearchCost, or None
        The model's search with a length change after ``change_round`` rounds (VLPSO's
        ``change_after + 1``, the earliest) and without one (VLPSO only).
    change_round : int
    constants : CostConstants
    """

    n_ranks: int
    n_groups: int
    n_shards: int
    n_particles: int
    per_group: int
    needs: dict
    have: int
    what: str
    one_state: int
    states: int
    bounds: tuple
    change_round: int
    constants: CostConstants

    @property
    def cached(self):
        """Particles of a group with a state."""
        return min(self.states, self.per_group)


def search_plan(spec, n_samples, n_genes, comm, memory_limit=None, constants=None,
                node_ranks=None, copy_share=None):
    """The :class:`SearchPlan` of a search of ``spec`` on ``n_samples`` x ``n_genes`` by the
    ranks of ``comm`` (collective: the grid is formed, the cache budget agreed), the same on
    every rank. ``node_ranks``: the ranks sharing a node's memory (default: those of
    ``comm``; a job's rank group shares it with the job's other ranks). ``copy_share``: a
    rank's share of its node's transformed copies
    (:func:`~hpcswarm.run.plan.node_copy_share`; default: ``comm``'s ranks on a node share
    one).

    The states are counted for every sample held out (leave-one-out and k-fold hold out each
    sample once; a holdout split fewer, so the count is a lower bound there).
    """
    shards = max(1, spec.sample_shards)
    try:
        grid = split_grid(comm, shards)
    except ValueError:
        raise ParameterError(f"sample_shards={shards} must be a positive divisor of the "
                             f"{comm.size} rank(s)") from None
    try:
        n_groups = grid.n_groups
        n_particles = algorithm_class(spec.algorithm).swarm_size(spec.params, n_genes)
        states = cache_states(spec.cache_memory, grid, n_samples, n_samples, n_genes)
    finally:
        grid.free()
    node_ranks = node_ranks or comm.ranks_on_node()
    copy_share = node_copy_share(comm, 0) if copy_share is None else copy_share
    have, what = available_memory(node_ranks, memory_limit)
    constants = constants or CostConstants()
    bounds, change = None, 0
    if spec.algorithm == MODELLED:
        change = spec.params["change_after"] + 1
        bounds = tuple(search_cost(spec, n_samples, n_genes, n_groups, shards,
                                   length_changes=changes, memory_per_rank=have,
                                   ranks_per_node=node_ranks, constants=constants,
                                   states=states, copy_share=copy_share)
                       for changes in ([(change, max(1, n_genes // 12))], ()))
    return SearchPlan(n_ranks=comm.size, n_groups=n_groups, n_shards=shards,
                      n_particles=n_particles, per_group=-(-n_particles // n_groups),
                      needs=search_needs(spec, n_samples, n_genes, shards, copy_share),
                      have=have,
                      what=what, one_state=state_bytes(-(-n_samples // shards), n_samples,
                                                       n_genes),
                      states=states, bounds=bounds, change_round=change,
                      constants=constants)


def plan_lines(plan, constants=True):
    """The lines ``run --dry-run`` prints for ``plan`` (the model's constants in its time
    line unless not ``constants``: a job states them once, :func:`job_plan_lines`)."""
    parts = ", ".join(f"{name} {value / 1e9:.3g}" for name, value in plan.needs.items()
                      if value)
    lines = [
        f"plan: {plan.n_ranks} rank(s) = {plan.n_groups} particle group(s) x {plan.n_shards} "
        f"sample shard(s); {plan.n_particles} particles, at most {plan.per_group} per group",
        f"memory per rank: {sum(plan.needs.values()) / 1e9:.3g} GB estimated ({parts}) of the "
        f"{MEMORY_SHARE * plan.have / 1e9:.3g} GB allowed ({MEMORY_SHARE:.0%} of {plan.what})",
        f"particle states per rank: {plan.cached} of {plan.per_group} particle(s), "
        f"{plan.cached * plan.one_state / 1e9:.3g} GB ({plan.one_state / 1e6:.4g} MB a state)"]
    if plan.bounds is None:
        lines.append(f"expected time: the cost model describes {MODELLED} only")
    else:
        lines.append(f"expected time: {_bounds(plan)}, {plan.bounds[0].cached} of "
                     f"{plan.n_particles} particles cached"
                     + (f"; {_estimate(plan.constants)}" if constants else ""))
    if plan.states == 0:
        lines.append("note: the cache budget holds no particle state: every subset is "
                     "evaluated in full (the results are the same)")
    return lines


def _estimate(constants):
    return (f"an estimate of the cost model (hpcswarm.run.cost_model) with the constants of "
            f"an idle core of the development machine: {constants_text(constants)}")


def plan_note(plan):
    """``plan`` in one line (the start of a real search)."""
    line = (f"plan: {plan.n_ranks} rank(s) = {plan.n_groups} particle group(s) x "
            f"{plan.n_shards} sample shard(s), {plan.n_particles} particles; {_holding(plan)}")
    if plan.bounds is not None:
        line += f"; expected {_bounds(plan)} (an estimate, run --dry-run for its constants)"
    return line


def _holding(plan):
    """What a rank of ``plan`` holds, in a few words (the opening plan lines)."""
    return (f"{sum(plan.needs.values()) / 1e9:.3g} GB a rank of "
            f"{MEMORY_SHARE * plan.have / 1e9:.3g} allowed; {plan.cached} of {plan.per_group} "
            f"particles of a group cached ({plan.cached * plan.one_state / 1e9:.3g} GB)")


def _bounds(plan):
    early, none = plan.bounds
    return (f"{duration(early.seconds)} (a length change after {plan.change_round} rounds) "
            f"to {duration(none.seconds)} (none)")


# ------------------------------------------------------------------ a job's searches
@dataclass(frozen=True)
class JobSearches:
    """The distinct searches of a job's pending tasks on one rank group (:func:`job_plan`).

    Attributes
    ----------
    shapes : list of tuple
        ``(final, n_train, n_tasks, plan)``: whether they are searches on all samples (a
        protocol's final search), their training rows, how many tasks and their
        :class:`SearchPlan` on a group.
    n_groups, group_size : int
        The job's rank groups and the ranks of the first (the last may be smaller).
    seconds : tuple of float, or None
        The pending tasks farmed to the groups (:func:`~hpcswarm.run.cost_model.farmed_seconds`)
        with an early length change and without one (VLPSO only).
    """

    shapes: list
    n_groups: int
    group_size: int
    seconds: tuple

    @property
    def largest(self):
        """The plan of the search on the most samples."""
        return max(self.shapes, key=lambda shape: shape[1])[3]


def job_plan(plan, world, memory_limit=None, constants=None):
    """The :class:`JobSearches` of a job's :class:`~hpcswarm.run.plan.JobPlan` on the ranks
    of ``world`` (collective: each rank group forms its grid as its tasks' searches do; the
    plans stated are those of world rank 0's group, a full one)."""
    counts = {}
    for task in plan.pending:
        key = (bool(task.extra), len(task.train))
        counts[key] = counts.get(key, 0) + 1
    node_ranks = world.ranks_on_node()
    share = node_copy_share(world, plan.layout.group_index)
    group = world.split(plan.layout.group_index, world.rank)
    try:
        shapes = [(final, n_train, n_tasks,
                   search_plan(plan.spec, n_train, plan.dataset.n_genes, group, memory_limit,
                               constants, node_ranks, share))
                  for (final, n_train), n_tasks in sorted(counts.items())]
    finally:
        group.free()
    seconds = None
    if plan.spec.algorithm == MODELLED and shapes:
        seconds = tuple(farmed_seconds([shape[3].bounds[bound].seconds
                                        for shape in shapes for _ in range(shape[2])],
                                       plan.layout.n_groups)
                        for bound in (0, 1))
    return JobSearches(shapes, plan.layout.n_groups, plan.layout.group_size, seconds)


def job_plan_lines(searches):
    """The lines ``run JOB.toml --dry-run`` prints after the job's opening lines: each
    distinct search's plan on a group, then the job's expected time."""
    if not searches.shapes:
        return [NOTHING_LEFT]
    lines = []
    for final, n_train, n_tasks, plan in searches.shapes:
        what = (f"{n_tasks} final search(es) on all {n_train} samples" if final else
                f"{n_tasks} fold search(es) on {n_train} training rows")
        lines.append(f"{what}, each on a group of {plan.n_ranks} rank(s):")
        lines += [f"  {line}" for line in plan_lines(plan, constants=False)]
    if searches.seconds is None:
        lines.append(f"expected job time: the cost model describes {MODELLED} only")
    else:
        lines.append(f"expected job time: {_job_bounds(searches)}, the pending searches dealt "
                     f"to the {searches.n_groups} group(s) longest first, each to the group "
                     f"free first; {_estimate(searches.largest.constants)}")
    return lines


def job_plan_note(searches):
    """``searches`` in one line (the start of a real job): its largest search's grid,
    memory and states, and the job's expected time."""
    if not searches.shapes:
        return f"plan: {NOTHING_LEFT}"
    plan = searches.largest
    line = (f"plan: {searches.n_groups} group(s) of {searches.group_size} rank(s), each "
            f"{plan.n_groups} particle group(s) x {plan.n_shards} sample shard(s), "
            f"{plan.n_particles} particles; {_holding(plan)}")
    if searches.seconds is not None:
        line += (f"; the job expected in {_job_bounds(searches)} (an estimate, run --dry-run "
                 f"for its constants)")
    return line


def _job_bounds(searches):
    early, none = searches.seconds
    return (f"{duration(early)} (a length change after {searches.largest.change_round} "
            f"rounds) to {duration(none)} (none)")
