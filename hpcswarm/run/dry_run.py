"""The plan of one search, stated without running it (``hpcswarm run --dry-run``), and in one
line at the start of a real one.

The grid of particle groups x sample shards the ranks form, the memory the pre-flight
estimates for each rank (:func:`~hpcswarm.run.plan.search_needs`), the particle states each
rank keeps (:func:`~hpcswarm.selection.search.cache_states`): what the search would hold, from
the same functions the search itself calls; and for VLPSO the time the cost model expects
(:mod:`hpcswarm.run.cost_model`, an estimate).
"""

from dataclasses import dataclass

from hpcswarm.comm import split_grid
from hpcswarm.errors import ParameterError
from hpcswarm.fitness.incremental import state_bytes
from hpcswarm.run.cost_model import CostConstants, constants_text, duration, search_cost
from hpcswarm.run.plan import search_needs
from hpcswarm.selection.methods import algorithm_class
from hpcswarm.selection.search import cache_states
from hpcswarm.system import MEMORY_SHARE, available_memory

MODELLED = "vlpso"
"""The method the cost model describes."""


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


def search_plan(spec, n_samples, n_genes, comm, memory_limit=None, constants=None):
    """The :class:`SearchPlan` of a search of ``spec`` on ``n_samples`` x ``n_genes`` by the
    ranks of ``comm`` (collective: the grid is formed, the cache budget agreed), the same on
    every rank.

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
    have, what = available_memory(comm.ranks_on_node(), memory_limit)
    constants = constants or CostConstants()
    bounds, change = None, 0
    if spec.algorithm == MODELLED:
        change = spec.params["change_after"] + 1
        bounds = tuple(search_cost(spec, n_samples, n_genes, n_groups, shards,
                                   length_changes=changes, memory_per_rank=have,
                                   ranks_per_node=comm.ranks_on_node(), constants=constants,
                                   states=states)
                       for changes in ([(change, max(1, n_genes // 12))], ()))
    return SearchPlan(n_ranks=comm.size, n_groups=n_groups, n_shards=shards,
                      n_particles=n_particles, per_group=-(-n_particles // n_groups),
                      needs=search_needs(spec, n_samples, n_genes, shards), have=have,
                      what=what, one_state=state_bytes(-(-n_samples // shards), n_samples,
                                                       n_genes),
                      states=states, bounds=bounds, change_round=change,
                      constants=constants)


def plan_lines(plan):
    """The lines ``run --dry-run`` prints for ``plan``."""
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
                     f"{plan.n_particles} particles cached; an estimate of the cost model "
                     f"(hpcswarm.run.cost_model) with the constants of an idle core of the "
                     f"development machine: {constants_text(plan.constants)}")
    if plan.states == 0:
        lines.append("note: the cache budget holds no particle state: every subset is "
                     "evaluated in full (the results are the same)")
    return lines


def plan_note(plan):
    """``plan`` in one line (the start of a real search)."""
    line = (f"plan: {plan.n_ranks} rank(s) = {plan.n_groups} particle group(s) x "
            f"{plan.n_shards} sample shard(s), {plan.n_particles} particles; "
            f"{sum(plan.needs.values()) / 1e9:.3g} GB a rank of "
            f"{MEMORY_SHARE * plan.have / 1e9:.3g} allowed; {plan.cached} of {plan.per_group} "
            f"particles of a group cached ({plan.cached * plan.one_state / 1e9:.3g} GB)")
    if plan.bounds is not None:
        line += f"; expected {_bounds(plan)} (an estimate, run --dry-run for its constants)"
    return line


def _bounds(plan):
    early, none = plan.bounds
    return (f"{duration(early.seconds)} (a length change after {plan.change_round} rounds) "
            f"to {duration(none.seconds)} (none)")
