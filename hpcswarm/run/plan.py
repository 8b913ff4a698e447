"""A job's plan: every check and decision made before any computation, the same on every rank.

:func:`plan_job` takes the job's lock (:mod:`hpcswarm.run.joblock`), checks that the outputs can
be written, opens the dataset, checks the job's size arithmetically, draws the tasks of the
job's protocol (:mod:`hpcswarm.run.protocols`) and their folds, opens the checkpoint to resume,
lays the ranks out in groups and sample shards, and checks the memory. Each check gives the
same verdict on every rank (:func:`hpcswarm.run.preflight.agree`): no rank is left waiting in a
collective.

The memory estimate is summed here and nowhere else (:func:`search_needs`,
:func:`task_needs`, :func:`check_job_size`); each part states its own need beside the code
that allocates it: the task list (:meth:`hpcswarm.run.protocols.Task.bytes_needed`), the swarm
(:meth:`hpcswarm.swarm.engine.state.SwarmState.bytes_needed`), the archive
(:meth:`hpcswarm.fitness.archive.Archive.bytes_needed`), the scorer
(:func:`hpcswarm.fitness.evaluator.scorer_bytes`), the preprocessing
(:func:`hpcswarm.selection.preprocess.transformed_bytes`) and the checkpoint's snapshots
(:func:`hpcswarm.swarm.engine.snapshot.snapshot_bytes`).
"""

import os
import sys
import warnings
from contextlib import nullcontext
from dataclasses import dataclass, replace

import numpy as np

from hpcswarm.comm import as_comm
from hpcswarm.data.sources import dataset_sha256, load_job_dataset, source_path
from hpcswarm.errors import DataError, HpcswarmError, ParameterError
from hpcswarm.fitness import FoldWarning, fold_rule
from hpcswarm.fitness.folds import classes_named
from hpcswarm.fitness.archive import Archive
from hpcswarm.fitness.evaluator import scorer_bytes
from hpcswarm.fitness.incremental import state_bytes
from hpcswarm.run.checkpoint import Checkpoint, checkpoint_identity
from hpcswarm.run.joblock import JobLocks
from hpcswarm.run.preflight import agree, check_device, check_inner_k, check_output_writable
from hpcswarm.run.progress import progress_path
from hpcswarm.run.protocols import PROTOCOLS, Task, make_tasks
from hpcswarm.run.taskfarm import default_group_size, group_layout
from hpcswarm.selection.methods import algorithm_class
from hpcswarm.selection.preprocess import kept_genes, transformed_bytes
from hpcswarm.signatures.refinements import SUBSAMPLING
from hpcswarm.signatures.subsample import halves_problem
from hpcswarm.store.atomic import refuse_special, remove_stale_temporaries
from hpcswarm.store.outputs import check_not_inputs, input_at
from hpcswarm.swarm.engine.evaluation import archive_size
from hpcswarm.swarm.engine.snapshot import check_snapshot, snapshot_bytes
from hpcswarm.swarm.engine.state import SwarmState
from hpcswarm.system import MEMORY_SHARE, available_memory


# ------------------------------------------------------------------ outputs
def final_outputs(job):
    """``(what, path)`` of the files a finished job writes: the results file, its JSON
    summary and, with a final signature, its gene list."""
    outputs = [("job key 'output'", job.output), ("the JSON summary", job.summary_path)]
    if job.signature_path is not None:
        outputs.append(("the signature's gene list", job.signature_path))
    return outputs


def job_inputs(job):
    """``(what, path)`` of the files a job reads: its dataset (None for a bundled one), the
    job file and the labels file of its conversion (None without one)."""
    return [("the dataset", source_path(job.data)), ("the job file", job.source),
            ("the labels file", job.convert.get("labels"))]


def output_problem(job, overwrite=False, resume=False):
    """Why the job's outputs cannot be written, or None (checked on one rank).

    No output (:func:`final_outputs`, checkpoint, progress file) may be an input of the job
    (dataset, job file, labels file), even with ``overwrite``
    (:func:`hpcswarm.store.outputs.check_not_inputs`). An existing final output is a problem unless
    ``overwrite``; a folder or special file in its place, a missing parent folder or one
    where no file can be created always is. An existing checkpoint is a problem unless
    ``resume`` (continue from it) or ``overwrite`` (start again, replacing it); ``resume``
    with finished results and no checkpoint is one too (nothing is left to run).
    """
    finals = [path for _, path in final_outputs(job)]
    try:
        check_not_inputs(
            [*final_outputs(job), ("job key 'checkpoint'", job.checkpoint),
             ("the progress file", progress_path(job.output))], job_inputs(job))
    except DataError as exc:
        return str(exc)
    try:  # a device, FIFO, socket or folder: never replaced, even with --overwrite
        for path in (*finals, job.checkpoint, progress_path(job.output)):
            refuse_special(path)
    except DataError as exc:
        return str(exc)
    if resume and not job.checkpoint.exists() and job.output.exists():
        return (f"{job.output}: the job is already complete (no checkpoint "
                f"{job.checkpoint.name} to resume)")
    for path in finals:
        if (path.exists() or path.is_symlink()) and not overwrite:  # a dangling link too
            return f"{path}: already exists (use --overwrite to replace it)"
    if job.checkpoint.exists() and not (resume or overwrite):
        return (f"{job.checkpoint}: a checkpoint of an unfinished run of this job exists; "
                f"continue it with --resume, or start again with --overwrite")
    for folder in dict.fromkeys((job.output.parent, job.checkpoint.parent)):
        problem = check_output_writable(folder)
        if problem is not None:
            return problem
    return None


def check_output_free(job, comm=None, overwrite=False, resume=False, tidy=True):
    """DataError on every rank if the job's outputs cannot be written (:func:`output_problem`
    on rank 0, broadcast). When they can and ``tidy``, rank 0 removes the temporaries that an
    earlier run of the job, killed during a write, left beside them (and says so)."""
    comm = as_comm(comm)
    problem = output_problem(job, overwrite, resume) if comm.rank == 0 else None
    if comm.rank == 0 and problem is None and tidy:
        for path in (*[path for _, path in final_outputs(job)], job.checkpoint,
                     progress_path(job.output)):
            remove_stale_temporaries(path)
    problem = comm.bcast(problem, root=0)
    if problem:
        raise DataError(problem)


def take_lock(job, world):
    """The job's :class:`~hpcswarm.run.joblock.JobLocks` (its output's and its checkpoint's),
    held by world rank 0; DataError on every rank when another run holds one, or when a lock
    file would be one of the job's inputs (a job file named ``OUTPUT.lock``: the lock would
    empty it), checked before the lock files are opened."""
    lock = JobLocks(job.output, job.checkpoint)
    problem = None
    if world.rank == 0:
        for path in lock.paths:  # a link in its place is refused by the lock, naming the link
            found = None if os.path.islink(path) else input_at(path, job_inputs(job))
            if found is not None:
                problem = (f"the job's lock file {path}: is {found[0]} {found[1]} of this "
                           "command, which the lock would empty; give the job another "
                           "output or checkpoint")
                break
        else:
            problem = lock.acquire()
    problem = world.bcast(problem, root=0)
    if problem:
        raise DataError(problem)
    return lock


# ------------------------------------------------------------------ dataset, checkpoint
def open_job_dataset(job, world, convert=True):
    """:func:`~hpcswarm.data.sources.load_job_dataset` on every rank (``convert``: a file not
    yet converted is converted); if any rank fails, every rank raises its message.

    The outcome of every rank is allgathered (no rank is left waiting in a collective).
    """
    dataset, problem = None, None
    try:
        dataset = load_job_dataset(job, world, convert)
    except (HpcswarmError, OSError) as exc:
        where = f" (on rank {world.rank})" if world.size > 1 else ""
        text = str(exc) if job.data in str(exc) else f"{job.data}: {exc}"
        problem = (type(exc).__name__, f"the dataset does not open{where}: {text}")
    agree(world, problem)
    if world.rank == 0:
        for line in dataset.notes:
            print(f"hpcswarm: note: {line}", file=sys.stderr, flush=True)
    return dataset


def snapshot_check(job, n_genes):
    """The check of a resumed task's snapshot against the job's search on a dataset of
    ``n_genes`` genes (:func:`~hpcswarm.swarm.engine.snapshot.check_snapshot`: every value, for the
    method, its parameters and the genes the preprocessing keeps), a DataError naming the
    checkpoint when the snapshot is damaged."""
    method, params = algorithm_class(job.spec.algorithm), job.spec.params
    searched = kept_genes(job.spec.preprocess, n_genes)
    return lambda snapshot: check_snapshot(method, params, searched, snapshot)


def open_checkpoint(job, identity, n_tasks, world, resume, dataset):
    """The checkpoint to resume (every rank reads it), or None; a wrong one fails everywhere.
    The ``dataset``'s size bounds the gene and sample indices of its records, and with the
    method's swarm size on all its genes (the most any task's search runs) the shapes of
    its snapshots; world rank 0 checks every snapshot it holds (:func:`snapshot_check`)
    before any work, so that a damaged one is refused with the checkpoint left as it was."""
    if not (resume and job.checkpoint.exists()):
        return None
    previous, problem = None, None
    n_particles = algorithm_class(job.spec.algorithm).swarm_size(job.spec.params,
                                                                 dataset.n_genes)
    try:
        previous = Checkpoint(job.checkpoint, identity, n_tasks, read_all=world.rank == 0,
                              n_genes=dataset.n_genes, n_samples=dataset.n_samples,
                              n_particles=n_particles,
                              check_snapshot=snapshot_check(job, dataset.n_genes))
    except (DataError, ParameterError) as exc:
        problem = (type(exc).__name__, str(exc))
    agree(world, problem)
    return previous


# ------------------------------------------------------------------ tasks and folds
def check_job_size(job, n_samples, world, memory_limit=None):
    """DataError on every rank if the job's task list cannot fit a rank's memory, computed
    from the run and fold counts alone (before any task is drawn)."""
    n_tasks = job.n_tasks
    need = n_tasks * Task.bytes_needed(n_samples)
    have, what = available_memory(world.ranks_on_node(), memory_limit)
    problem = None
    if need > MEMORY_SHARE * have:
        problem = ("DataError",
                   f"not enough memory: a rank needs an estimated {need / 1e9:.3g} GB for the "
                   f"task list alone ({job.runs} run(s) make {n_tasks} tasks of {n_samples} "
                   f"samples), more than {int(100 * MEMORY_SHARE)}% of the {have / 1e9:.3g} "
                   f"GB per rank ({what}); lower job key 'runs' and split the runs over "
                   f"several jobs (first_run)")
    agree(world, problem)


def draw_tasks(job, y, class_names=None):
    """The job's tasks and the fold warnings drawing them raised (one note each, calling a
    class by its name in ``class_names`` when given: ``y`` holds codes)."""
    naming = nullcontext() if class_names is None else classes_named(class_names)
    with warnings.catch_warnings(record=True) as caught, naming:
        warnings.simplefilter("always", FoldWarning)
        tasks = make_tasks(y, job.protocol, range(job.first_run, job.first_run + job.runs),
                           job.seed, folds=job.folds, inner_cv=job.spec.params["cv"])
    notes = list(dict.fromkeys(str(w.message) for w in caught
                               if issubclass(w.category, FoldWarning)))
    check_inner_k(tasks, job.spec.params["k"], job.spec.params["cv"])
    if job.spec.refine in SUBSAMPLING:
        for task in tasks:
            problem = halves_problem(np.asarray(y)[task.train], job.spec.subsamples,
                                     task.seed_sequence(task.job_seed), job.spec.params["cv"])
            if problem is not None:
                raise ParameterError(f"job key 'refine' = {job.spec.refine!r}: run {task.run} fold "
                                     f"{task.fold}: {problem}")
    return tasks, notes


def fold_rules(y, tasks, job):
    """How the job's folds were dealt (:func:`hpcswarm.fitness.fold_rule`), for the results.

    Returns ``{"outer": rule or None, "inner": [rules of the searches' validation]}``: the
    outer split's rule of the job's protocol (``"sklearn"``, ``"round-robin"`` or
    ``"holdout"``; None without an outer split) and the distinct rules of the inner schemes
    on the tasks' training parts.
    """
    outer = PROTOCOLS[job.protocol].outer_rule(y, job.folds)
    inner = sorted({fold_rule(y[task.train], job.spec.params["cv"]) for task in tasks})
    return {"outer": outer, "inner": inner}


# ------------------------------------------------------------------ layout and memory
def shard_group_size(job, world_size, group_size, shards):
    """Ranks per group so that ``shards`` sample shards divide every group.

    A group size given in the job must be a multiple of ``shards``; an automatic one is
    rounded to one, at least ``shards``. ``shards`` must also divide the world, so that the
    last group (smaller when the group size does not divide the world) is a multiple too.

    Raises
    ------
    ParameterError
        The shard count does not fit the ranks.
    """
    if shards == 1:
        return group_size
    if world_size % shards:
        raise ParameterError(f"job key 'layout.sample_shards': {shards} shards must divide "
                             f"the {world_size} rank(s) of the job")
    if job.group_size:
        if job.group_size % shards:
            raise ParameterError(f"job key 'layout.sample_shards': {shards} shards must "
                                 f"divide layout.group_size = {job.group_size}")
        return group_size
    return shards * max(1, group_size // shards)


def node_copy_share(comm, color):
    """The share of a node-shared copy that each rank of ``comm`` counts, the rank groups of
    ``color`` each holding one copy per node (:func:`hpcswarm.selection.prepare.prepare`):
    the rank groups with ranks on this rank's node over the node's ranks of ``comm``, asked
    of MPI (its node communicator, :meth:`~hpcswarm.comm.MPIComm.colors_on_node`;
    collective). Their memory is the node's, so a rank's share of it is exact wherever the
    launcher places the ranks; 1 for a serial run."""
    colors = comm.colors_on_node(color)
    return len(set(colors)) / len(colors)


def search_needs(spec, n_train, n_genes, sample_shards=1, copy_share=1.0):
    """Bytes each part of one search of ``spec`` on ``n_train`` x ``n_genes`` holds on one
    rank of ``sample_shards`` shards (an estimate), by part; ``copy_share``: the rank's
    share of its node's transformed copies (:func:`node_copy_share`; 1: a private copy).

    Returns
    -------
    dict of str to int
        ``swarm``: the particles of the method's swarm (its ``swarm_size``), replicated on
        the group's ranks; ``archive``: a full archive; ``scorer``: the values a full
        evaluation of every gene gathers, the method's cached states of this rank's shard
        and its largest block of work; ``preprocessing``: the share of the transformed copy of
        the training rows and the fitting's peak
        (:func:`~hpcswarm.selection.preprocess.transformed_bytes`); ``tables``: what the
        method builds from the training rows (its ``table_bytes``: VLPSO's local search
        keeps the genes' intervals);
        ``particle_states``: a ``cache_memory`` the spec sets, at most a state of every
        particle (the default budget takes only what the rest leaves,
        :func:`hpcswarm.selection.search.default_cache_bytes`, and counts 0 here). The
        memory-mapped matrix, whose pages the ranks of a node share, is not counted.
    """
    method = algorithm_class(spec.algorithm)
    n_particles = method.swarm_size(spec.params, n_genes)
    states = 0
    if spec.cache_memory:
        rows = -(-n_train // max(1, sample_shards))
        states = min(int(spec.cache_memory * 1e9),
                     n_particles * state_bytes(rows, n_train, n_genes))
    return {
        "swarm": SwarmState.bytes_needed(n_particles, n_genes),
        "archive": Archive.bytes_needed(archive_size(spec.params)),
        "scorer": scorer_bytes(n_train, n_genes, sample_shards,
                               method.cached_states(spec.params), method.scores_single_flips),
        "preprocessing": transformed_bytes(spec.preprocess, n_train, n_genes, copy_share),
        "tables": method.table_bytes(spec.params, n_train, n_genes),
        "particle_states": states,
    }


def search_memory(spec, n_train, n_genes, sample_shards=1, copy_share=1.0):
    """Bytes one rank needs for one search of ``spec`` (the sum of :func:`search_needs`)."""
    return sum(search_needs(spec, n_train, n_genes, sample_shards, copy_share).values())


def task_needs(job, dataset, tasks, sample_shards, rank0_groups, copy_share=1.0):
    """``(bytes by part of one rank of job with sample_shards shards, training samples)``.

    The parts of :func:`search_needs` for the largest training part of ``tasks``; on the
    rank that holds the checkpoint (``rank0_groups``: the rank groups whose latest snapshots
    world rank 0 holds, else 0), ``checkpoint``: one snapshot per group, of the swarm the
    method runs (its ``swarm_size``, as ``swarm``); ``copy_share`` as in
    :func:`search_needs`.
    """
    n_train = max((len(task.train) for task in tasks), default=0)
    n_genes = dataset.X.shape[1]
    needs = search_needs(job.spec, n_train, n_genes, sample_shards, copy_share)
    if rank0_groups:
        n_particles = algorithm_class(job.spec.algorithm).swarm_size(job.spec.params, n_genes)
        needs["checkpoint"] = rank0_groups * snapshot_bytes(n_particles, n_genes)
    return needs, n_train


def task_memory(job, dataset, tasks, sample_shards, rank0_groups, copy_share=1.0):
    """``(estimated bytes of one rank of job with sample_shards shards, training samples)``:
    the sum of :func:`task_needs`."""
    needs, n_train = task_needs(job, dataset, tasks, sample_shards, rank0_groups, copy_share)
    return sum(needs.values()), n_train


def choose_sample_shards(job, dataset, tasks, group_size, comm, memory_limit=None):
    """The job's sample shards: ``job.spec.sample_shards``, or for 0 the fewest that fit.

    Automatic: the smallest divisor of ``group_size`` whose estimate (:func:`task_memory`)
    fits every rank's memory (the largest such choice over the ranks, so that every rank
    agrees); ``group_size`` when none does, which :func:`check_memory` then refuses with the
    count that would fit. The rank groups of ``group_size`` ranks share their transformed
    copies by node (:func:`node_copy_share`; collective).
    """
    if job.spec.sample_shards:
        return job.spec.sample_shards
    have, _ = available_memory(comm.ranks_on_node(), memory_limit)
    groups = -(-comm.size // max(1, group_size)) if comm.rank == 0 else 0
    share = node_copy_share(comm, group_layout(comm.size, comm.rank, group_size).group_index)
    divisors = [s for s in range(1, group_size + 1) if group_size % s == 0]
    fitting = [s for s in divisors
               if task_memory(job, dataset, tasks, s, groups, share)[0] <= MEMORY_SHARE * have]
    mine = fitting[0] if fitting else group_size
    return int(comm.allreduce_max(np.array([mine], dtype=np.int64))[0])


def check_search_memory(spec, n_samples, n_genes, comm, memory_limit=None):
    """DataError on every rank if one search of ``spec`` on all ``n_samples`` (the
    single-search ``run``) needs more than 80 % of a rank's memory (its estimate:
    :func:`search_memory`, the ranks of ``comm`` on a node sharing one transformed copy)."""
    need = search_memory(spec, n_samples, n_genes, max(1, spec.sample_shards),
                         node_copy_share(comm, 0))
    have, what = available_memory(comm.ranks_on_node(), memory_limit)
    problem = None
    if need > MEMORY_SHARE * have:
        where = f" (on rank {comm.rank})" if comm.size > 1 else ""
        problem = ("DataError",
                   f"not enough memory{where}: the search needs an estimated "
                   f"{need / 1e9:.3g} GB ({n_samples} samples x {n_genes} genes, "
                   f"{spec.params.get('n_particles', 1)} particles, {spec.sample_shards} "
                   f"sample shard(s)), more than {int(100 * MEMORY_SHARE)}% of the "
                   f"{have / 1e9:.3g} GB per rank ({what}); use more sample shards, fewer "
                   f"ranks per node or a larger --memory-limit")
    agree(comm, problem)


def check_memory(job, dataset, tasks, group_size, comm, memory_limit=None):
    """DataError on every rank if the estimate exceeds 80 % of a rank's memory, with the
    sample shards of ``job`` (chosen: not 0).

    World rank 0 also counts the checkpoint's snapshots (:func:`task_needs`). The rank
    groups of ``group_size`` ranks share their transformed copies by node
    (:func:`node_copy_share`; collective). The message names the sample shard count that
    would fit, when one would.
    """
    groups = -(-comm.size // max(1, group_size)) if comm.rank == 0 else 0
    share = node_copy_share(comm, group_layout(comm.size, comm.rank, group_size).group_index)
    sample_shards = job.spec.sample_shards
    need, n_train = task_memory(job, dataset, tasks, sample_shards, groups, share)
    have, what = available_memory(comm.ranks_on_node(), memory_limit)
    problem = None
    where = f" (on rank {comm.rank})" if comm.size > 1 else ""
    if need > MEMORY_SHARE * have:
        hint = "use more nodes, fewer ranks per node or a larger --memory-limit"
        enough = next((s for s in range(sample_shards + 1, max(n_train, 1) + 1)
                       if task_memory(job, dataset, tasks, s, groups, share)[0]
                       <= MEMORY_SHARE * have),
                      None)
        if enough is not None:
            hint = (f"layout.sample_shards = {enough} would fit (groups of a multiple of "
                    f"{enough} ranks), or {hint}")
        problem = ("DataError",
                   f"not enough memory{where}: a rank needs an estimated {need / 1e9:.3g} GB "
                   f"({n_train} training samples x {dataset.X.shape[1]} genes, "
                   f"{job.spec.params.get('n_particles', 1)} particles, {sample_shards} sample "
                   f"shard(s)), more than {int(100 * MEMORY_SHARE)}% of the {have / 1e9:.3g} "
                   f"GB per rank ({what}); {hint}")
    agree(comm, problem)
    return need, have


# ------------------------------------------------------------------ the plan
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
        How the outer and inner folds were dealt (:func:`fold_rules`).
    fold_notes : list of str
        The fold warnings drawing the tasks raised (:class:`hpcswarm.fitness.FoldWarning`).
    spec : SearchSpec
        The search of every task, its sample shards chosen (:func:`hpcswarm.comm.split_grid`).
    lock : JobLocks or None
        The job's locks, held by world rank 0 until :meth:`release` (None: a dry run).
    """

    dataset: object
    tasks: list
    pending: list
    identity: dict
    previous: object
    layout: object
    fold_rules: dict
    fold_notes: list
    spec: object
    lock: object = None

    @property
    def sample_shards(self):
        """Sample shards of every group."""
        return self.spec.sample_shards

    def release(self):
        """Close the resumed checkpoint and release the job's lock."""
        if self.previous is not None:
            self.previous.close()
        if self.lock is not None:
            self.lock.release()


def plan_job(job, world, *, overwrite=False, resume=False, memory_limit=None, dry_run=False):
    """Every pre-flight check, before any computation; the same verdict on every rank.

    The job's lock is taken first and kept by the returned plan (:meth:`JobPlan.release`);
    a failing check releases it. A ``dry_run`` (``run JOB.toml --dry-run``) writes nothing:
    no lock, no stale temporary removed, no dataset converted (one not yet in the cache is
    refused); every other check is the same.
    """
    world = as_comm(world)
    check_device(job.spec.device, world)
    if dry_run:
        return _plan(job, world, None, overwrite, resume, memory_limit)
    lock = take_lock(job, world)
    try:
        return _plan(job, world, lock, overwrite, resume, memory_limit)
    except BaseException:
        lock.release(refused=True)
        raise


def _plan(job, world, lock, overwrite, resume, memory_limit):
    writes = lock is not None
    check_output_free(job, world, overwrite, resume, tidy=writes)
    dataset = open_job_dataset(job, world, convert=writes)
    check_job_size(job, dataset.n_samples, world, memory_limit)
    tasks, notes = draw_tasks(job, dataset.y, dataset.class_names)
    identity = checkpoint_identity(job, dataset_sha256(dataset))
    previous = open_checkpoint(job, identity, len(tasks), world, resume, dataset)
    finished = previous.finished if previous is not None else set()
    pending = [task for task in tasks if task.number not in finished]
    group_size = job.group_size or default_group_size(world.size, len(pending),
                                                      job.spec.params.get("n_particles", 1))
    shards = choose_sample_shards(job, dataset, tasks, group_size, world, memory_limit)
    group_size = shard_group_size(job, world.size, group_size, shards)
    layout = group_layout(world.size, world.rank, group_size)
    spec = replace(job.spec, sample_shards=shards)
    check_memory(replace(job, spec=spec), dataset, tasks, layout.group_size, world,
                 memory_limit)
    return JobPlan(dataset, tasks, pending, identity, previous, layout,
                   fold_rules(np.asarray(dataset.y), tasks, job), notes, spec, lock)
