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


@dataclass(frozen=True)
class FarmHooks:
    """What :func:`farm` calls back, each optional.

    Attributes
    ----------
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
    """

    summary: object = None
    on_done: object = None
    on_message: object = None
    stop: object = None


def farm(world, tasks, run_task, group_size=1, hooks=None):
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
    hooks : FarmHooks, optional
        What the farm calls back (none by default).

    Returns
    -------
    results : list or None
        On world rank 0 the results in task order, ``None`` for a task that was interrupted
        or never started (only after ``stop`` or :class:`TaskInterrupted`); ``None`` on
        every other rank.
    assignments : dict
        On world rank 0, task number -> index of the group that ran it.
    """
    hooks = FarmHooks() if hooks is None else hooks
    rank_part = FarmRank(world, group_size, hooks)
    rank_part.run(tasks, run_task, hooks.stop)
    finished = rank_part.finish()
    if world.rank != 0:
        return None, None
    results = [finished[number][1] if number in finished else None
               for number in range(len(tasks))]
    assignments = {number: finished[number][0] for number in finished}
    return results, assignments


class FarmRank:
    """One rank's part in :func:`farm`: its group, the shared counter, the records in flight.

    Parameters
    ----------
    world : Comm
    group_size : int
    hooks : FarmHooks
        Its ``summary``, ``on_done`` and ``on_message`` (:func:`farm` asks ``stop``).

    Attributes
    ----------
    layout : GroupLayout
    group : Comm
        This rank's group (freed by :meth:`finish`).
    finished : dict
        On a group leader: task number -> ``(group index, result)`` of its group's tasks.
    """

    def __init__(self, world, group_size, hooks):
        self.world = world
        self.layout = group_layout(world.size, world.rank, group_size)
        self.group = world.split(self.layout.group_index, world.rank)
        self.counter = world.counter()
        self.hooks = hooks
        self.finished = {}
        self.sends = []  # requests of the records this rank sent to world rank 0
        self.received = 0  # records world rank 0 has taken from other ranks

    def deliver(self, kind, payload):
        """World rank 0: hand a record to ``on_done`` or ``on_message``."""
        handler = self.hooks.on_done if kind == "done" else self.hooks.on_message
        if handler is not None:
            handler(payload)

    def drain(self):
        """World rank 0: deliver every record that has arrived (never waits)."""
        for kind, payload in self.world.poll(DONE_TAG):
            self.received += 1
            self.deliver(kind, payload)

    def post(self, kind, payload):
        """Send a record to world rank 0 without waiting (deliver it at once on rank 0)."""
        if self.world.rank == 0:
            self.deliver(kind, payload)
        else:
            self.sends.append(self.world.isend((kind, payload), 0, DONE_TAG))

    def progress(self, row=None, message=None):
        """The ``progress`` a task calls once per round (see :func:`farm`)."""
        self.world.progress()
        if message is not None:
            self.post("message", message)
        if self.world.rank == 0:
            self.drain()

    def next_task(self, n_tasks, stop):
        """The group's next task number (collective over the group), or None when done."""
        number = None
        if self.group.rank == 0 and not (stop is not None and stop()):
            number = self.counter.next()
        number = self.group.bcast(number, root=0)
        return None if number is None or number >= n_tasks else number

    def run(self, tasks, run_task, stop=None):
        """Draw and run tasks with the group until none is left, a stop, or an interruption."""
        while (number := self.next_task(len(tasks), stop)) is not None:
            try:
                result = run_task(tasks[number], self.group, self.progress)
            except TaskInterrupted:
                break
            if self.group.rank == 0:
                self.finished[number] = (self.layout.group_index, result)
                if self.hooks.summary is not None:
                    self.post("done", self.hooks.summary(tasks[number], result,
                                                         self.layout.group_index))

    def finish(self):
        """Receive every record in flight, gather the results (collective); free the group.

        Returns, on world rank 0, task number -> ``(group index, result)`` of every
        finished task; None elsewhere.
        """
        sent = self.world.gather(len(self.sends), root=0)
        if self.world.rank == 0:
            while self.received < sum(sent[1:]):
                time.sleep(0.01)
                self.drain()
        for request in self.sends:
            request.wait()
        gathered = self.world.gather(self.finished, root=0)
        self.counter.free()
        self.group.free()
        if gathered is None:
            return None
        return {number: record for part in gathered for number, record in part.items()}
