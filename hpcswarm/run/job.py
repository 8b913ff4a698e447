"""A job's lifecycle: pre-flight, the task farm with its hooks, checkpoint and stop, results.

:func:`run_job` runs in three steps, every rank alike:

1. :func:`hpcswarm.run.plan.plan_job`, the pre-flight: every check before any computation, with
   the same verdict on every rank (the job's lock, outputs free, dataset opens, job size,
   tasks and their folds, inner k, the checkpoint to resume, group layout, memory), then
   the plan of its searches in one line (:mod:`hpcswarm.run.dry_run`; all of it and no
   search with ``run JOB.toml --dry-run``, :func:`show_plan`);
2. the task farm (:func:`hpcswarm.run.taskfarm.farm`) runs the pending tasks
   (:func:`hpcswarm.run.protocols.run_task`) on the rank groups; :class:`JobLifecycle` holds
   what the farm calls back (a round played, a round ended, a task done, a snapshot
   arrived): world rank 0's progress reporter and checkpoint keeper, and every rank's stop
   request;
3. :func:`finish_job` on world rank 0: the checkpoint brought up to date, the results file
   and its JSON summary written, the checkpoint removed.

No protocol logic here (:mod:`hpcswarm.run.protocols`), no planning (:mod:`hpcswarm.run.plan`), and
no file layout (:mod:`hpcswarm.results.files`, :mod:`hpcswarm.run.checkpoint`).
"""

import json
import time
from dataclasses import dataclass, replace

import numpy as np

from hpcswarm.comm import as_comm
from hpcswarm.comm import world as duplicate_world
from hpcswarm.data.sources import dataset_sha256
from hpcswarm.errors import HpcswarmError
from hpcswarm.results.files import JobRecords, job_similarity, summarise, write_results
from hpcswarm.run.checkpoint import CheckpointKeeper
from hpcswarm.run.dry_run import job_plan, job_plan_lines, job_plan_note
from hpcswarm.run.interrupt import StopRequest
from hpcswarm.run.jobfile import read_job
from hpcswarm.run.plan import plan_job
from hpcswarm.run.progress import (ProgressLines, ProgressReporter, Workload, progress_path,
                               task_record)
from hpcswarm.run.protocols import protocol_of, run_task
from hpcswarm.run.taskfarm import FarmHooks, TaskInterrupted, farm
from hpcswarm.run.timing import JobTimes, command_startup
from hpcswarm.signatures.compact import compact_note
from hpcswarm.store.atomic import all_or_nothing, write_json, write_text
from hpcswarm.swarm.engine.loop import SearchHooks
from hpcswarm.swarm.engine.snapshot import take_snapshot
from hpcswarm.version import __version__


class JobInterrupted(HpcswarmError):
    """A stop signal ended the job early; everything done so far is in the checkpoint."""

    exit_code = 3

    def __init__(self, signal_name, checkpoint, n_done=None, n_tasks=None):
        done = "" if n_done is None else f" with {n_done} of {n_tasks} tasks finished"
        super().__init__(f"stopped by {signal_name or 'a stop request'}{done}; the checkpoint "
                         f"{checkpoint} holds the work done: continue with 'run --resume'")


def opening_lines(job, plan, world):
    """What the job says when it starts (world rank 0 logs them)."""
    n_tasks, layout = len(plan.tasks), plan.layout
    n_extra = sum(task.extra for task in plan.tasks)
    lines = [f"{job.name}: {job.spec.algorithm} on {job.data}, {job.protocol} protocol, "
             f"{job.runs} run(s) x {(n_tasks - n_extra) // job.runs} fold(s)"
             + (f" + {n_extra} search(es) on all samples" if n_extra else "")
             + f" = {n_tasks} tasks on "
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

    Every rank holds a stop request (SIGTERM, SIGUSR1: :mod:`hpcswarm.run.interrupt`); world
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
            workload = Workload(len(plan.tasks), plan.layout.n_groups,
                                plan.spec.params.get("n_iterations"))
            self.reporter = ProgressReporter(progress_path(job.output), workload,
                                             ProgressLines(progress_stream, quiet))
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
        return run_task(task, self.plan.dataset, self.plan.spec,
                        TaskHooks(self, task, group, progress).search_hooks(), group=group,
                        resume=snapshot)

    def phase(self, task, name, genes_left):
        """A step after the search of ``task`` on this rank (a refinement's elimination step,
        with the genes left; an exchange step, and the baselines and test, with None)."""
        if self.reporter is not None:
            self.reporter.phase(task, name, genes_left)
        if self.keeper is not None:
            self.keeper.maybe_write()

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
        """The :class:`~hpcswarm.run.taskfarm.FarmHooks` of :func:`~hpcswarm.run.taskfarm.farm`
        bound to this lifecycle."""
        on_rank0 = self.keeper is not None
        return FarmHooks(summary=self.summary, on_done=self.task_done if on_rank0 else None,
                         on_message=self.snapshot_arrived if on_rank0 else None,
                         stop=self.stopper.check)

    def close(self):
        """Put back the signal handlers and close the progress file."""
        self.stopper.restore()
        if self.reporter is not None:
            self.reporter.close()


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

    def search_hooks(self):
        """The :class:`~hpcswarm.swarm.engine.loop.SearchHooks` of the task's search, bound to these
        methods: ``progress`` :meth:`round`, ``checkpoint`` :meth:`round_end`, ``interrupt``
        :meth:`interrupt`, ``phase`` :meth:`phase`."""
        return SearchHooks(progress=self.round, checkpoint=self.round_end,
                           interrupt=self.interrupt, phase=self.phase)

    def round(self, row=None):
        """After each round: let MPI progress, report it, write the checkpoint when due."""
        self.progress(row)
        self.lifecycle.round(self.task, row)

    def phase(self, name, genes_left):
        """A step after the search: let MPI progress, report it (no stop here: a refinement
        has no snapshot, the task stops at its next round or subsample round)."""
        self.progress()
        self.lifecycle.phase(self.task, name, genes_left)

    def _stopping(self):
        """Whether the job must stop (collective over the group: every rank agrees)."""
        return bool(self.group.allreduce_max(
            np.array([int(self.lifecycle.stopper.check())]))[0])

    def interrupt(self):
        """After each round of a refinement's subsample search (no snapshot: a resumed task
        runs those searches again): as :meth:`round`, then leave the task if it must stop."""
        self.round()
        if self._stopping():
            raise TaskInterrupted

    def round_end(self, search):
        """Snapshot the search every ``checkpoint_every`` rounds and when the job must stop
        (collective over the group); then leave the task if it must."""
        stopping = self._stopping()
        every = self.lifecycle.job.checkpoint_every
        if stopping or (every and (search.iteration + 1) % every == 0):
            snapshot = take_snapshot(search)
            if self.group.rank == 0:
                self.progress(message=(self.task.number, snapshot))
        if stopping:
            raise TaskInterrupted


# ------------------------------------------------------------------ the whole job
@dataclass(frozen=True)
class JobOptions:
    """How a job is run (none of it changes its results); the keywords of :func:`run_job`.

    Attributes
    ----------
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
    times : JobTimes, optional
        Filled in on world rank 0 with where the wall time went
        (:class:`hpcswarm.run.timing.JobTimes`).
    """

    overwrite: bool = False
    log: object = None
    quiet: bool = False
    memory_limit: float = None
    progress_stream: object = None
    resume: bool = False
    times: JobTimes = None


def run_job(job, world=None, **options):
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
    job : hpcswarm.run.jobfile.Job
    world : Comm, optional
        Every rank calls :func:`run_job`; None means serial.
    **options
        The fields of :class:`JobOptions` (``overwrite``, ``log``, ``quiet``,
        ``memory_limit``, ``progress_stream``, ``resume``).

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
    world, options = as_comm(world), JobOptions(**options)
    started = time.perf_counter()
    plan = plan_job(job, world, overwrite=options.overwrite, resume=options.resume,
                    memory_limit=options.memory_limit)
    if options.times is not None:
        options.times.preflight = time.perf_counter() - started
    try:
        return run_planned(job, plan, world, options, started)
    finally:
        plan.release()


def run_planned(job, plan, world, options, started):
    """:func:`run_job` after its pre-flight: the farm, then the checkpoint or the results."""
    if options.log is not None and world.rank == 0:
        for line in opening_lines(job, plan, world):
            options.log(line)
    if not options.quiet and world.bcast(options.log is not None, root=0):
        note = job_plan_note(job_plan(plan, world, options.memory_limit))  # collective
        if world.rank == 0:
            options.log(note)
    lifecycle = JobLifecycle(job, plan, world, quiet=options.quiet,
                             progress_stream=options.progress_stream)
    farm_started = time.perf_counter()
    try:
        results, assignments = farm(world, plan.pending, lifecycle.run,
                                    group_size=plan.layout.group_size, hooks=lifecycle.farm_hooks())
        stopped = lifecycle.stopper.finish()
    finally:
        lifecycle.close()
    times = options.times if world.rank == 0 else None
    if times is not None:
        times.tasks, times.n_groups = time.perf_counter() - farm_started, plan.layout.n_groups
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
    writing = time.perf_counter()
    summary = finish_job(job, plan, lifecycle, provenance, options.overwrite)
    if times is not None:
        times.writing = time.perf_counter() - writing
        times.add_tasks(result for result, _ in lifecycle.finished.values())
    return summary


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
    written costs no finished task; the results file, its summary and the signature's gene
    list appear together, or none of them. Returns the JSON summary.
    """
    if lifecycle.keeper.dirty:
        lifecycle.keeper.write()
    results, extras = [], []
    for task in plan.tasks:
        result, group_index = lifecycle.finished[task.number]
        (extras if task.extra else results).append(replace(result, group=group_index))
    dataset = plan.dataset
    final = protocol_of(job.protocol).final_signature(job.name, dataset.n_genes, results,
                                                      extras)
    similarity = job_similarity(dataset)
    records = JobRecords(results, final, similarity)
    with all_or_nothing():  # a failing write leaves none of them
        write_results(job, dataset, records, provenance, overwrite=overwrite)
        summary = summarise(job, dataset, records, provenance)
        write_json(job.summary_path, summary, overwrite=overwrite)
        if final is not None:
            write_text(job.signature_path, final.gene_list(dataset.gene_names),
                       overwrite=overwrite)
    lifecycle.keeper.remove()
    return summary


def run_job_file(path, overrides=(), *, comm=None, print0=print, dry_run=False, **options):
    """The ``run JOB.toml [--set key=value ...]`` command: read, run, write, print a summary.

    Every rank reads and checks the job (identical errors everywhere), then runs it;
    ``print0`` is called on world rank 0 only. ``comm`` is the job's world communicator
    (default: a duplicate of ``COMM_WORLD``, freed at the end); ``options`` are those of
    :class:`JobOptions` but ``log`` (``overwrite``, ``quiet``, ``memory_limit``, ``resume``).
    With ``dry_run`` the job's plan is printed instead (:func:`show_plan`).
    """
    if comm is None:
        with duplicate_world() as comm:
            return run_job_file(path, overrides, comm=comm, print0=print0, dry_run=dry_run,
                                **options)
    times = JobTimes(startup=command_startup())
    job = read_job(path, overrides)
    if dry_run:
        show_plan(job, comm, print0, JobOptions(**options))
        return
    summary = run_job(job, comm, log=print0 if comm.rank == 0 else None, times=times,
                      **options)
    if comm.rank == 0:
        for line in summary_lines(job, summary):
            print0(line)
        print0(times.line())


def show_plan(job, world, print0, options):
    """``run JOB.toml --dry-run``: the pre-flight that writes nothing (no lock, no output, no
    checkpoint, no progress file, no conversion: :func:`~hpcswarm.run.plan.plan_job`), then
    on world rank 0 the job's opening lines and its searches' plans
    (:func:`~hpcswarm.run.dry_run.job_plan_lines`); nothing is searched."""
    plan = plan_job(job, world, overwrite=options.overwrite, resume=options.resume,
                    memory_limit=options.memory_limit, dry_run=True)
    try:
        searches = job_plan(plan, world, options.memory_limit)  # collective
        if world.rank == 0:
            for line in [*opening_lines(job, plan, world), *job_plan_lines(searches)]:
                print0(line)
    finally:
        plan.release()


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
    for row in summary.get("refined", []):
        accuracy, size = row["accuracy"], row["subset_size"]
        lines.append(f"{row['name']}: {what} over {summary['runs']} run(s): best "
                     f"{100 * accuracy['best']:.2f}%, mean "
                     f"{100 * accuracy['mean']:.2f} +/- {100 * accuracy['std']:.2f}%; mean "
                     f"subset size {size['mean']:.2f} genes")
    if summary["biased"]:
        lines.append(f"note: {summary['note']}")
    final = summary.get("final_signature")
    if final is not None:
        names = [gene["name"] for gene in final["genes"]]
        lines.append(f"final signature (one search on all {summary['n_samples']} samples"
                     + (f", {final['refine']}" if final["refine"] != "none" else "")
                     + f"): {final['size']} genes: {', '.join(names[:10])}"
                     + (", ..." if len(names) > 10 else "")
                     + f"; its estimate is the {final['estimate']['row']} row above (the "
                     f"outer folds' searches), not its own inner accuracy "
                     f"{100 * final['inner_accuracy']:.2f}%")
    note = _compact_note(summary)
    if note is not None:
        lines.append(f"note: {note}")
    written = [str(path) for path in (job.output, job.summary_path, job.signature_path)
               if path is not None]
    lines.append(f"wrote {', '.join(written[:-1])} and {written[-1]}")
    return lines


def _compact_note(summary):
    """The note of :func:`~hpcswarm.signatures.compact.compact_note` on the answer the job
    gives: its final signature, else its refined subsets, else its searches' subsets."""
    final, refined = summary.get("final_signature"), summary.get("refined", [])
    if final is not None:
        size, accuracy = final["size"], final["inner_accuracy"]
    elif refined:
        size, accuracy = min(row["subset_size"]["mean"] for row in refined), None
    else:
        size, accuracy = summary["subset_size"]["mean"], None
    return compact_note(size, accuracy, 'a refinement (job key refine = "prune-compact") or '
                                        'more rounds (n_iterations) gives a compact one')
