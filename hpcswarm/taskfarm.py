"""Independent tasks (runs, outer folds) farmed out to rank groups.

The world communicator is split into groups of ``group_size`` consecutive ranks; each group
runs one task at a time with all of its ranks. Tasks are handed out dynamically: a group's
leader draws the next task number from a counter shared by the world (an atomic
fetch-and-add, :meth:`hpcswarm.comm.MPIComm.counter`), so a group that finishes early takes
the next task at once instead of waiting for a slow one elsewhere. Results travel to world
rank 0. No MPI is imported here: the communicators come from :mod:`hpcswarm.comm`.
"""

import time
from dataclasses import dataclass

DONE_TAG = 71
"""Tag of the task-completion records group leaders send to world rank 0 (see :func:`farm`)."""


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


def farm(world, tasks, run_task, group_size=1, *, summary=None, on_done=None):
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
        call ``progress()`` or ``progress(row)`` (a history row) from time to time (once per
        swarm round): this lets the shared counter, held by world rank 0, serve the other
        groups while rank 0 computes, and world rank 0 collect the records of ``summary``.
    group_size : int
        Ranks per group (see :func:`default_group_size`).
    summary : callable, optional
        ``summary(task, result, group_index)`` -> a small picklable record, the same
        function on every rank. When given, each group leader hands the record of every
        task it finishes to world rank 0 with a non-blocking send; world rank 0 passes
        every record (its own group's at once, the others' as it polls for them in
        ``progress`` and after its last task) to ``on_done``. World rank 0 never blocks on a
        record; a sender waits on its requests only after its last task, and they complete
        as rank 0 polls. The records are cheap: a dict of ten numbers per task.
    on_done : callable, optional
        ``on_done(record)`` on world rank 0, once per task, in the order rank 0 learns of them.

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
    sends = []
    told = 0  # records world rank 0 has passed to on_done

    def drain():
        nonlocal told
        for record in world.poll(DONE_TAG):
            told += 1
            if on_done is not None:
                on_done(record)

    def progress(row=None):
        world.progress()
        if summary is not None and world.rank == 0:
            drain()

    while True:
        task_number = counter.next() if group.rank == 0 else None
        task_number = group.bcast(task_number, root=0)
        if task_number >= len(tasks):
            break
        task = tasks[task_number]
        result = run_task(task, group, progress)
        if group.rank == 0:
            finished[task_number] = (layout.group_index, result)
            if summary is not None:
                record = summary(task, result, layout.group_index)
                if world.rank == 0:
                    told += 1
                    if on_done is not None:
                        on_done(record)
                else:
                    sends.append(world.isend(record, 0, DONE_TAG))
    if summary is not None:
        if world.rank == 0:  # every other task ends in a record sent here: collect them all
            drain()
            while told < len(tasks):
                time.sleep(0.01)
                drain()
        for request in sends:
            request.wait()
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
