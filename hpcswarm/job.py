"""A job's lifecycle: pre-flight, the task farm with its hooks, checkpoint and stop, results.

:func:`run_job` runs in three steps, every rank alike:

1. :func:`plan_job`, the pre-flight: every check before any computation, with the same
   verdict on every rank (outputs free, dataset opens, tasks and their folds, inner k, the
   checkpoint to resume, group layout, memory);
2. the task farm (:func:`hpcswarm.taskfarm.farm`) runs the pending tasks
   (:func:`hpcswarm.protocols.run_task`) on the rank groups; :class:`JobLifecycle` holds
   what the farm calls back (a round played, a round ended, a task done, a snapshot
   arrived): world rank 0's progress reporter and checkpoint keeper, and every rank's stop
   request;
3. :func:`finish_job` on world rank 0: the checkpoint brought up to date, the results file
   and its JSON summary written, the checkpoint removed.

No protocol logic here (:mod:`hpcswarm.protocols`), and no file layout (:mod:`hpcswarm.results`,
:mod:`hpcswarm.checkpoint`).
"""

import json
import sys
import time
import warnings
from dataclasses import dataclass

import numpy as np

from hpcswarm import __version__
from hpcswarm.atomic import refuse_special, remove_stale_temporaries, write_json
from hpcswarm.checkpoint import Checkpoint, CheckpointKeeper, checkpoint_identity
from hpcswarm.comm import as_comm
from hpcswarm.comm import world as duplicate_world
from hpcswarm.data.sources import dataset_sha256, load_job_dataset, source_path
from hpcswarm.errors import DataError, HpcswarmError, ParameterError
from hpcswarm.fitness import FoldWarning
from hpcswarm.interrupt import StopRequest
from hpcswarm.jobfile import read_job
from hpcswarm.outputs import check_not_inputs
from hpcswarm.preflight import (agree, check_inner_k, check_memory, check_output_writable,
                                choose_sample_shards)
from hpcswarm.progress import ProgressReporter, progress_path, task_record
from hpcswarm.protocols import fold_rules, make_tasks, run_task, shard_group_size
from hpcswarm.results import summarise, write_results
from hpcswarm.swarm.snapshot import take_snapshot
from hpcswarm.taskfarm import TaskInterrupted, default_group_size, farm, group_layout


class JobInterrupted(HpcswarmError):
    """A stop signal ended the job early; everything done so far is in the checkpoint."""

    exit_code = 3

    def __init__(self, signal_name, checkpoint, n_done=None, n_tasks=None):
        done = "" if n_done is None else f" with {n_done} of {n_tasks} tasks finished"
        super().__init__(f"stopped by {signal_name or 'a stop request'}{done}; the checkpoint "
                         f"{checkpoint} holds the work done: continue with 'run --resume'")


# ------------------------------------------------------------------ pre-flight
def output_problem(job, overwrite=False, resume=False):
    """Why the job's outputs cannot be written, or None (checked on one rank).

    No output (results, JSON summary, checkpoint, progress file) may be an input of the job
    (dataset, job file, labels file), even with ``overwrite``
    (:func:`hpcswarm.outputs.check_not_inputs`). An existing results file or JSON summary is a problem unless ``overwrite``; a folder in
    their place, a missing parent folder or one where no file can be created always is. An
    existing checkpoint is a problem unless ``resume`` (continue from it) or ``overwrite``
    (start again, replacing it); ``resume`` with finished results and no checkpoint is one
    too (nothing is left to run).
    """
    try:
        check_not_inputs(
            [("job key 'output'", job.output), ("the JSON summary", job.summary_path),
             ("job key 'checkpoint'", job.checkpoint),
             ("the progress file", progress_path(job.output))],
            [("the dataset", source_path(job.data)), ("the job file", job.source),
             ("the labels file", job.convert.get("labels"))])
    except DataError as exc:
        return str(exc)
    try:  # a device, FIFO, socket or folder: never replaced, even with --overwrite
        for path in (job.output, job.summary_path, job.checkpoint, progress_path(job.output)):
            refuse_special(path)
    except DataError as exc:
        return str(exc)
    if resume and not job.checkpoint.exists() and job.output.exists():
        return (f"{job.output}: the job is already complete (no checkpoint "
                f"{job.checkpoint.name} to resume)")
    for path in (job.output, job.summary_path):
        if path.exists() and not overwrite:
            return f"{path}: already exists (use --overwrite to replace it)"
    if job.checkpoint.exists() and not (resume or overwrite):
        return (f"{job.checkpoint}: a checkpoint of an unfinished run of this job exists; "
                f"continue it with --resume, or start again with --overwrite")
    for folder in dict.fromkeys((job.output.parent, job.checkpoint.parent)):
        problem = check_output_writable(folder)
        if problem is not None:
            return problem
    return None


def check_output_free(job, comm=None, overwrite=False, resume=False):
    """DataError on every rank if the job's outputs cannot be written (:func:`output_problem`
    on rank 0, broadcast). When they can, rank 0 removes the temporaries that an earlier run of
    the job, killed during a write, left beside them (and says so)."""
    comm = as_comm(comm)
    problem = output_problem(job, overwrite, resume) if comm.rank == 0 else None
    if comm.rank == 0 and problem is None:
        for path in (job.output, job.summary_path, job.checkpoint):
            remove_stale_temporaries(path)
    problem = comm.bcast(problem, root=0)
    if problem:
        raise DataError(problem)


def open_job_dataset(job, world):
    """:func:`~hpcswarm.data.sources.load_job_dataset` on every rank; if any rank fails,
    every rank raises its message.

    The outcome of every rank is allgathered (no rank is left waiting in a collective).
    """
    dataset, problem = None, None
    try:
        dataset = load_job_dataset(job, world)
    except (HpcswarmError, OSError) as exc:
        where = f" (on rank {world.rank})" if world.size > 1 else ""
        text = str(exc) if job.data in str(exc) else f"{job.data}: {exc}"
        problem = (type(exc).__name__, f"the dataset does not open{where}: {text}")
    agree(world, problem)
    if world.rank == 0:
        for line in dataset.notes:
            print(f"hpcswarm: note: {line}", file=sys.stderr, flush=True)
    return dataset


def open_checkpoint(job, identity, n_tasks, world, resume):
    """The checkpoint to resume (every rank reads it), or None; a wrong one fails everywhere."""
    if not (resume and job.checkpoint.exists()):
        return None
    previous, problem = None, None
    try:
        previous = Checkpoint(job.checkpoint, identity, n_tasks, unpickle=world.rank == 0)
    except (DataError, ParameterError) as exc:
        problem = (type(exc).__name__, str(exc))
    agree(world, problem)
    return previous


@dataclass
class JobPlan:
    """What the pre-flight established, the same on every rank.

    Attributes
    ----------
    dataset : Dataset
    tasks : list of Task
        Every task of the job.
    pending : list of Task
        Those still to run (all but the checkpoint's finished ones).
    identity : dict
        The checkpoint identity of the job.
    previous : Checkpoint or None
        The checkpoint being resumed.
    layout : GroupLayout
    fold_rules : dict
        How the outer and inner folds were dealt (:func:`hpcswarm.protocols.fold_rules`).
    fold_notes : list of str
        The fold warnings drawing the tasks raised (:class:`hpcswarm.fitness.FoldWarning`).
    sample_shards : int
        Sample shards of every group (:func:`hpcswarm.comm.split_grid`).
    """

    dataset: object
    tasks: list
    pending: list
    identity: dict
    previous: object
    layout: object
    fold_rules: dict
    fold_notes: list
    sample_shards: int = 1


def plan_job(job, world, *, overwrite=False, resume=False, memory_limit=None):
    """Every pre-flight check, before any computation; the same verdict on every rank."""
    check_output_free(job, world, overwrite, resume)
    dataset = open_job_dataset(job, world)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", FoldWarning)
        tasks = make_tasks(dataset.y, job.protocol, job.runs, job.seed, folds=job.folds,
                           inner_cv=job.params["cv"], first_run=job.first_run)
    notes = list(dict.fromkeys(str(w.message) for w in caught
                               if issubclass(w.category, FoldWarning)))
    check_inner_k(tasks, job.params["k"], job.params["cv"])
    identity = checkpoint_identity(job, dataset_sha256(dataset))
    previous = open_checkpoint(job, identity, len(tasks), world, resume)
    finished = previous.finished if previous is not None else set()
    pending = [task for task in tasks if task.number not in finished]
    group_size = job.group_size or default_group_size(world.size, len(pending),
                                                      job.params.get("n_particles", 1))
    shards = choose_sample_shards(job, dataset, tasks, group_size, world, memory_limit)
    group_size = shard_group_size(job, world.size, group_size, shards)
    layout = group_layout(world.size, world.rank, group_size)
    check_memory(job, dataset, tasks, layout.group_size, world, memory_limit, shards)
    return JobPlan(dataset, tasks, pending, identity, previous, layout,
                   fold_rules(np.asarray(dataset.y), tasks, job), notes, shards)


def opening_lines(job, plan, world):
    """What the job says when it starts (world rank 0 logs them)."""
    n_tasks, layout = len(plan.tasks), plan.layout
    lines = [f"{job.name}: {job.algorithm} on {job.data}, {job.protocol} protocol, "
             f"{job.runs} run(s) x {n_tasks // job.runs} fold(s) = {n_tasks} tasks on "
             f"{world.size} rank(s) in {layout.n_groups} group(s) of {layout.group_size}"
             + (f" ({plan.sample_shards} sample shards each)" if plan.sample_shards > 1
                else "")]
    lines += [f"note: {note}" for note in plan.fold_notes]
    rules = plan.fold_rules
    if "round-robin" in (rules["outer"], *rules["inner"]):
        lines.append(f"note: folds dealt round-robin per class (Weka's stratification) where "
                     f"every class is smaller than the folds: {json.dumps(rules)}")
    if plan.previous is not None:
        lines.append(f"resuming from {job.checkpoint}: {len(plan.previous.finished)} task(s) "
                     f"finished, {len(plan.previous.inflight)} to continue from their "
                     f"snapshots")
    return lines


# ------------------------------------------------------------------ the farm's hooks
class JobLifecycle:
    """What the task farm calls back while a job runs, as named methods.

    Every rank holds a stop request (SIGTERM, SIGUSR1: :mod:`hpcswarm.interrupt`); world
    rank 0 also holds the progress reporter, the checkpoint keeper and the finished results.
    Build it after the pre-flight and :meth:`close` it when the farm ends.

    Parameters
    ----------
    job : Job
    plan : JobPlan
    world : Comm
    quiet : bool
        No progress lines on the stream (the progress file is still written).
    progress_stream : file, optional
        Where world rank 0 writes progress lines (default stderr).

    Attributes
    ----------
    finished : dict
        On world rank 0: task number -> ``(result, group index)`` of every finished task.
    """

    def __init__(self, job, plan, world, *, quiet=False, progress_stream=None):
        self.job, self.plan = job, plan
        self.reporter = self.keeper = None
        self.finished = {}
        if world.rank == 0:
            self.reporter = ProgressReporter(progress_path(job.output), len(plan.tasks),
                                             plan.layout.n_groups, stream=progress_stream,
                                             quiet=quiet)
            self.keeper = CheckpointKeeper(job.checkpoint, plan.identity, plan.tasks,
                                           plan.previous, min_seconds=job.checkpoint_seconds)
            for number, (task, result, group_index) in self.keeper.finished.items():
                self.finished[number] = (result, group_index)
                self.reporter.task_done(task_record(task, result, group_index))
        self.stopper = StopRequest(world).install()

    def run(self, task, group, progress):
        """Run ``task`` on ``group`` (the farm's ``run_task``), from its snapshot if it has one."""
        previous = self.plan.previous
        snapshot = None
        if previous is not None and task.number in previous.inflight:
            snapshot = previous.snapshot(task.number)
        hooks = TaskHooks(self, task, group, progress)
        dataset = self.plan.dataset
        return run_task(dataset.X, dataset.y, task, self.job.seed, self.job.algorithm,
                        self.job.params, group, hooks.round, X_genes=dataset.X_genes,
                        values_finite=dataset.values_finite, checkpoint=hooks.round_end,
                        resume=snapshot, preprocess=self.job.preprocess,
                        sample_shards=self.plan.sample_shards, refine=self.job.refine,
                        max_genes=self.job.max_genes or None)

    def round(self, task, row):
        """A round of a search this rank runs (``row`` its history row, or None)."""
        if self.reporter is not None and row is not None:
            self.reporter.round(task, row)
        if self.keeper is not None:
            self.keeper.maybe_write()

    @staticmethod
    def summary(task, result, group_index):
        """The record a group leader sends world rank 0 when ``task`` is done."""
        return task.number, result, group_index

    def task_done(self, record):
        """World rank 0 learns that a task is done (a :meth:`summary` record)."""
        number, result, group_index = record
        self.reporter.task_done(task_record(self.plan.tasks[number], result, group_index))
        self.keeper.done(number, result, group_index)

    def snapshot_arrived(self, message):
        """World rank 0 receives ``(task number, snapshot)`` from a group leader."""
        self.keeper.snapshot(*message)

    def farm_hooks(self):
        """The keyword arguments of :func:`~hpcswarm.taskfarm.farm` bound to this lifecycle."""
        on_rank0 = self.keeper is not None
        return {"summary": self.summary, "on_done": self.task_done if on_rank0 else None,
                "on_message": self.snapshot_arrived if on_rank0 else None,
                "stop": self.stopper.check}

    def close(self):
        """Put back the signal handlers, close the progress file and the resumed checkpoint."""
        self.stopper.restore()
        if self.reporter is not None:
            self.reporter.close()
        if self.plan.previous is not None:
            self.plan.previous.close()


class TaskHooks:
    """The hooks of one task's search: a round played, a round ended (every rank of its group).

    Parameters
    ----------
    lifecycle : JobLifecycle
    task : Task
    group : Comm
        The ranks running ``task``.
    progress : callable
        The farm's ``progress(row=None, message=None)``.
    """

    def __init__(self, lifecycle, task, group, progress):
        self.lifecycle, self.task, self.group, self.progress = lifecycle, task, group, progress

    def round(self, row=None):
        """After each round: let MPI progress, report it, write the checkpoint when due."""
        self.progress(row)
        self.lifecycle.round(self.task, row)

    def round_end(self, search):
        """Snapshot the search every ``checkpoint_every`` rounds and when the job must stop
        (collective over the group); then leave the task if it must."""
        stopping = bool(self.group.allreduce_max(
            np.array([int(self.lifecycle.stopper.check())]))[0])
        every = self.lifecycle.job.checkpoint_every
        if stopping or (every and (search.iteration + 1) % every == 0):
            snapshot = take_snapshot(search)
            if self.group.rank == 0:
                self.progress(message=(self.task.number, snapshot))
        if stopping:
            raise TaskInterrupted


# ------------------------------------------------------------------ the whole job
def run_job(job, world=None, *, overwrite=False, log=None, quiet=False, memory_limit=None,
            progress_stream=None, resume=False):
    """Run every task of ``job`` on the rank groups of ``world``; rank 0 writes the results.

    Checkpoint and restart: world rank 0 keeps ``job.checkpoint`` up to date with every
    finished task's result and the latest snapshot of every running search, taken every
    ``job.checkpoint_every`` rounds and when SIGTERM or SIGUSR1 arrives; after a signal
    every group snapshots its search at the end of its current round, the checkpoint is
    written and :class:`JobInterrupted` is raised. With ``resume`` the finished tasks are
    taken from the checkpoint and the interrupted searches continue from their snapshots, on
    any number of ranks: the results equal those of an uninterrupted run (all but wall
    times). The checkpoint is deleted once the results are written.

    Parameters
    ----------
    job : hpcswarm.jobfile.Job
    world : Comm, optional
        Every rank calls :func:`run_job`; None means serial.
    overwrite : bool
        Replace existing outputs (and ignore an existing checkpoint).
    log : callable, optional
        ``log(line)`` on world rank 0 for the job's opening lines.
    quiet : bool
        No progress lines on stderr (``<output stem>.progress.jsonl`` is still written).
    memory_limit : float, optional
        Memory of the node in GB, instead of the detected one (pre-flight memory check).
    progress_stream : file, optional
        Where world rank 0 writes progress lines (default stderr).
    resume : bool
        Continue from ``job.checkpoint`` when it exists.

    Raises
    ------
    DataError, ParameterError
        A pre-flight check failed (outputs, dataset, folds, memory, a checkpoint of another
        job), on every rank alike, before any computation.
    JobInterrupted
        A stop signal arrived; the checkpoint holds everything done so far.

    Returns
    -------
    dict or None
        The JSON summary on world rank 0, None elsewhere.
    """
    world = as_comm(world)
    started = time.perf_counter()
    plan = plan_job(job, world, overwrite=overwrite, resume=resume, memory_limit=memory_limit)
    if log is not None and world.rank == 0:
        for line in opening_lines(job, plan, world):
            log(line)
    lifecycle = JobLifecycle(job, plan, world, quiet=quiet, progress_stream=progress_stream)
    try:
        results, assignments = farm(world, plan.pending, lifecycle.run,
                                    group_size=plan.layout.group_size, **lifecycle.farm_hooks())
        stopped = lifecycle.stopper.finish()
    finally:
        lifecycle.close()
    if world.rank != 0:
        if stopped:
            raise JobInterrupted(lifecycle.stopper.signal_name, job.checkpoint)
        return None
    for position, (task, result) in enumerate(zip(plan.pending, results)):
        if result is not None:
            lifecycle.finished[task.number] = (result, assignments[position])
    if stopped or len(lifecycle.finished) < len(plan.tasks):
        lifecycle.keeper.write()
        raise JobInterrupted(lifecycle.stopper.signal_name, job.checkpoint,
                             len(lifecycle.finished), len(plan.tasks))
    provenance = job_provenance(job, plan, world, time.perf_counter() - started)
    return finish_job(job, plan, lifecycle, provenance, overwrite)


def job_provenance(job, plan, world, total_seconds):
    """Where the results came from: version, seed, ranks and groups, dataset, time."""
    dataset = plan.dataset
    return {
        "hpcswarm_version": __version__, "seed": job.seed, "n_ranks": world.size,
        "group_size": plan.layout.group_size, "n_groups": plan.layout.n_groups,
        "sample_shards": plan.sample_shards, "dataset_sha256": dataset_sha256(dataset),
        "dataset": job.data,
        "dataset_source_sha256": dataset.attrs.get("source_sha256"),
        "total_seconds": total_seconds, "resumed": plan.previous is not None,
        "fold_rules": json.dumps(plan.fold_rules),
    }


def finish_job(job, plan, lifecycle, provenance, overwrite):
    """World rank 0, every task done: write the results and the summary; remove the checkpoint.

    The checkpoint is brought up to date first, so that a failure while the results are
    written costs no finished task. Returns the JSON summary.
    """
    if lifecycle.keeper.dirty:
        lifecycle.keeper.write()
    results = []
    for task in plan.tasks:
        result, group_index = lifecycle.finished[task.number]
        results.append(dict(result, group=group_index, train_index=task.train,
                            test_index=task.test))
    write_results(job.output, job, plan.dataset, results, provenance, overwrite=overwrite)
    summary = summarise(job, plan.dataset, results, provenance)
    write_json(job.summary_path, summary)
    lifecycle.keeper.remove()
    return summary


def run_job_file(path, overrides=(), *, comm=None, overwrite=False, print0=print, quiet=False,
                 memory_limit=None, resume=False):
    """The ``run JOB.toml [--set key=value ...]`` command: read, run, write, print a summary.

    Every rank reads and checks the job (identical errors everywhere), then runs it;
    ``print0`` is called on world rank 0 only. ``quiet`` silences the progress lines on
    stderr; ``memory_limit`` (GB) replaces the detected memory in the pre-flight check.
    ``comm`` is the job's world communicator (default: a duplicate of ``COMM_WORLD``, freed
    at the end); ``resume`` continues from the job's checkpoint (see :func:`run_job`).
    """
    if comm is None:
        with duplicate_world() as comm:
            return run_job_file(path, overrides, comm=comm, overwrite=overwrite, print0=print0,
                                quiet=quiet, memory_limit=memory_limit, resume=resume)
    job = read_job(path, overrides)
    summary = run_job(job, comm, overwrite=overwrite, log=print0 if comm.rank == 0 else None,
                      quiet=quiet, memory_limit=memory_limit, resume=resume)
    if comm.rank == 0:
        for line in summary_lines(job, summary):
            print0(line)


def summary_lines(job, summary):
    """The lines ``run JOB.toml`` prints at the end: accuracy, subset size, time, files."""
    accuracy, size = summary["accuracy"], summary["subset_size"]
    baseline = summary["all_genes_accuracy"]
    what = "inner-CV accuracy (biased)" if summary["biased"] else "test accuracy"
    lines = [
        f"{job.name}: {what} over {summary['runs']} run(s): best {100 * accuracy['best']:.2f}"
        f"%, mean {100 * accuracy['mean']:.2f} +/- {100 * accuracy['std']:.2f}%; "
        f"all genes {100 * baseline['mean']:.2f}%",
        f"mean subset size {size['mean']:.2f} of {summary['n_genes']} genes; "
        f"{summary['tasks']} tasks, {summary['task_seconds']['mean']:.1f} s per task, "
        f"{summary['provenance']['total_seconds']:.1f} s in all on "
        f"{summary['provenance']['n_ranks']} rank(s)"]
    if summary["biased"]:
        lines.append(f"note: {summary['note']}")
    lines.append(f"wrote {job.output} and {job.summary_path}")
    return lines
