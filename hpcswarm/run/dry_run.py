"""The plan of one search, stated without running it (``hpcswarm run --dry-run``).

The grid of particle groups x sample shards the ranks form, the memory the pre-flight
estimates for each rank (:func:`~hpcswarm.run.plan.search_needs`), and the particle states each
rank keeps (:func:`~hpcswarm.selection.search.cache_states`): what the search would hold, from
the same functions the search itself calls.
"""

from hpcswarm.comm import split_grid
from hpcswarm.errors import ParameterError
from hpcswarm.fitness.incremental import state_bytes
from hpcswarm.run.plan import search_needs
from hpcswarm.selection.methods import algorithm_class
from hpcswarm.selection.search import cache_states
from hpcswarm.system import MEMORY_SHARE, available_memory


def plan_lines(spec, n_samples, n_genes, comm, memory_limit=None):
    """The lines ``run --dry-run`` prints for a search of ``spec`` on ``n_samples`` x
    ``n_genes`` by the ranks of ``comm`` (collective: the grid is formed, the cache budget
    agreed), the same on every rank.

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
        n_particles = algorithm_class(spec.algorithm).swarm_size(spec.params, n_genes)
        per_group = -(-n_particles // grid.n_groups)
        states = cache_states(spec.cache_memory, grid, n_samples, n_samples, n_genes)
    finally:
        grid.free()
    needs = search_needs(spec, n_samples, n_genes, shards)
    have, what = available_memory(comm.ranks_on_node(), memory_limit)
    one_state = state_bytes(-(-n_samples // shards), n_samples, n_genes)
    cached = min(states, per_group)
    parts = ", ".join(f"{name} {value / 1e9:.3g}" for name, value in needs.items() if value)
    lines = [
        f"plan: {comm.size} rank(s) = {grid.n_groups} particle group(s) x {shards} sample "
        f"shard(s); {n_particles} particles, at most {per_group} per group",
        f"memory per rank: {sum(needs.values()) / 1e9:.3g} GB estimated ({parts}) of the "
        f"{MEMORY_SHARE * have / 1e9:.3g} GB allowed ({MEMORY_SHARE:.0%} of {what})",
        f"particle states per rank: {cached} of {per_group} particle(s), "
        f"{cached * one_state / 1e9:.3g} GB ({one_state / 1e6:.4g} MB a state)"]
    if states == 0:
        lines.append("note: the cache budget holds no particle state: every subset is "
                     "evaluated in full (the results are the same)")
    return lines
