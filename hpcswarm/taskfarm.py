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


class TaskInterrupted(Exception):
    """Raised by a task on every rank of its group to leave the farm before finishing it."""


def farm(world, tasks, run_task, group_size=1, *, summary=None, on_done=None, on_message=None,
         stop=None):
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
        A group leader may call ``progress(message=obj)`` to hand ``obj`` to ``on_message``
        on world rank 0 (a snapshot of its swarm, for the checkpoint). Raising
        :class:`TaskInterrupted` on every rank of the group ends the group's work.
    group_size : int
        Ranks per group (see :func:`default_group_size`).
    summary : callable, optional
        ``summary(task, result, group_index)`` -> a picklable record, the same function on
        every rank. When given, each group leader hands the record of every task it
        finishes to world rank 0 with a non-blocking send; world rank 0 passes every record
        (its own group's at once, the others' as it polls for them in ``progress`` and
        after its last task) to ``on_done``. World rank 0 never blocks on a record; a
        sender waits on its requests only after its last task, and they complete as rank 0
        polls.
    on_done : callable, optional
        ``on_done(record)`` on world rank 0, once per finished task, in the order rank 0
        learns of them.
    on_message : callable, optional
        ``on_message(obj)`` on world rank 0 for every ``progress(message=obj)``.
    stop : callable, optional
        ``stop()`` -> bool, asked by each group leader before it draws a task: when true the
        group draws no more.

    Returns
    -------
    results : list or None
        On world rank 0 the results in task order, ``None`` for a task that was interrupted
        or never started (only after ``stop`` or :class:`TaskInterrupted`); ``None`` on
        every other rank.
    assignments : dict
        On world rank 0, task number -> index of the group that ran it.
    """
    layout = group_layout(world.size, world.rank, group_size)
    group = world.split(layout.group_index, world.rank)
    counter = world.counter()
    finished = {}
    sends = []
    received = 0  # messages world rank 0 has taken from other ranks

    def deliver(kind, payload):
        if kind == "done":
            if on_done is not None:
                on_done(payload)
        elif on_message is not None:
            on_message(payload)

    def drain():
        nonlocal received
        for kind, payload in world.poll(DONE_TAG):
            received += 1
            deliver(kind, payload)

    def post(kind, payload):
        if world.rank == 0:
            deliver(kind, payload)
        else:
            sends.append(world.isend((kind, payload), 0, DONE_TAG))

    def progress(row=None, message=None):
        world.progress()
        if message is not None:
            post("message", message)
        if world.rank == 0:
            drain()

    while True:
        task_number = None
        if group.rank == 0 and not (stop is not None and stop()):
            task_number = counter.next()
        task_number = group.bcast(task_number, root=0)
        if task_number is None or task_number >= len(tasks):
            break
        task = tasks[task_number]
        try:
            result = run_task(task, group, progress)
        except TaskInterrupted:
            break
        if group.rank == 0:
            finished[task_number] = (layout.group_index, result)
            if summary is not None:
                post("done", summary(task, result, layout.group_index))
    # every message sent to world rank 0 is received before the results are gathered
    sent = world.gather(len(sends), root=0)
    if world.rank == 0:
        expected = sum(sent[1:])
        while received < expected:
            time.sleep(0.01)
            drain()
    for request in sends:
        request.wait()
    gathered = world.gather(finished, root=0)
    counter.free()
    group.free()
    if world.rank != 0:
        return None, None
    merged = {}
    for part in gathered:
        merged.update(part)
    results = [merged[number][1] if number in merged else None for number in range(len(tasks))]
    assignments = {number: merged[number][0] for number in merged}
    return results, assignments
