"""Independent tasks (runs, outer folds) farmed out to rank groups.

The world communicator is split into groups of ``group_size`` consecutive ranks; each group
runs one task at a time with all of its ranks. Tasks are handed out dynamically: a group's
leader draws the next task number from a counter shared by the world (an atomic
fetch-and-add, :meth:`hpcswarm.comm.MPIComm.counter`), so a group that finishes early takes
the next task at once instead of waiting for a slow one elsewhere. Results travel to world
rank 0. No MPI is imported here: the communicators come from :mod:`hpcswarm.comm`.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class GroupLayout:
    """Which group a world rank belongs to and how many groups there are."""

    group_size: int
    n_groups: int
    group_index: int


def group_layout(world_size, world_rank, group_size):
    """Split ``world_size`` ranks into groups of ``group_size`` consecutive ranks.

    The last group is smaller when ``group_size`` does not divide ``world_size``. Pure.
    """
    if group_size < 1:
        raise ValueError(f"group_size must be a positive integer, got {group_size}")
    group_size = min(group_size, world_size)
    n_groups = -(-world_size // group_size)
    return GroupLayout(group_size, n_groups, world_rank // group_size)


def default_group_size(world_size, n_tasks, n_particles):
    """Ranks per group: as many groups as tasks allow, then ranks inside the swarm.

    With at least as many tasks as ranks every rank is a group of its own (tasks are
    embarrassingly parallel, the cheapest parallelism). Otherwise the ranks are shared
    evenly between the tasks, never more ranks in a group than the swarm has particles.
    """
    if world_size <= n_tasks:
        return 1
    return max(1, min(world_size // max(1, n_tasks), n_particles))


def farm(world, tasks, run_task, group_size=1):
    """Run ``run_task(task, group, progress)`` for every task; results on world rank 0.

    Parameters
    ----------
    world : SerialComm or MPIComm
        Every rank of the job calls :func:`farm` collectively.
    tasks : sequence
        Task descriptions, identical on every rank.
    run_task : callable
        ``run_task(task, group, progress)`` runs one task collectively on the ranks of
        ``group`` and returns its result (only the group leader's result is kept). It must
        call ``progress()`` from time to time (once per swarm iteration): this lets the
        shared counter, held by world rank 0, serve the other groups while rank 0 computes.
    group_size : int
        Ranks per group (see :func:`default_group_size`).

    Returns
    -------
    results : list or None
        On world rank 0 the results in task order; ``None`` on every other rank.
    assignments : dict
        On world rank 0, task number -> index of the group that ran it.
    """
    layout = group_layout(world.size, world.rank, group_size)
    group = world.split(layout.group_index, world.rank)
    counter = world.counter()
    finished = {}
    while True:
        task_number = counter.next() if group.rank == 0 else None
        task_number = group.bcast(task_number, root=0)
        if task_number >= len(tasks):
            break
        result = run_task(tasks[task_number], group, world.progress)
        if group.rank == 0:
            finished[task_number] = (layout.group_index, result)
    gathered = world.gather(finished, root=0)
    counter.free()
    if world.rank != 0:
        return None, None
    merged = {}
    for part in gathered:
        merged.update(part)
    results = [merged[number][1] for number in range(len(tasks))]
    assignments = {number: merged[number][0] for number in range(len(tasks))}
    return results, assignments
