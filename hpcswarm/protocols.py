"""The evaluation protocols of the papers, each (run, fold) one task for the task farm.

- ``biased`` (Tran et al. 2016, Experiment I; Chuang et al. 2011): selection on all samples;
  the reported accuracy is the inner cross-validation accuracy of the selected subset. These
  figures are optimistically biased (Ambroise & McLachlan 2002) and flagged so in the results.
- ``unbiased`` (Tran et al. 2016, Experiment II; the default): stratified outer n-fold CV;
  selection sees only the training folds; the reported accuracy is that of the k-NN trained
  on the training folds with the selected genes, tested on the held-out fold.
- ``holdout`` (Gu et al. 2018; Li et al.; Xue et al. 2012): stratified 70/30 split, selection
  on the 70 %, accuracy of the k-NN trained on the 70 % and tested on the 30 %.

Seeds: the job seed is the root :class:`numpy.random.SeedSequence`; run ``r`` splits its
samples with the child ``(r, SPLIT)`` and searches fold ``f`` with the child
``(r, SEARCH, f)`` (spawn keys, as ``SeedSequence.spawn`` would build them). Every rank
derives the same tasks from ``y`` and the seed alone, so results do not depend on the number
of ranks or groups. The all-genes k-NN baseline is computed for every task under the same
protocol.
"""

import hashlib
import json
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hpcswarm import __version__
from hpcswarm.errors import DataError, HpcswarmError, ParameterError

SPLIT, SEARCH = 0, 1
"""Spawn-key components: a run's outer split, and the search of one of its folds."""

BIAS_NOTE = ("optimistically biased: genes were selected on all samples and the accuracy is "
             "the inner cross-validation accuracy of the selection itself (Ambroise & "
             "McLachlan 2002; Tran et al. 2016, Experiment I)")
"""The warning every biased result carries."""

SKLEARN_DATASETS = ("wine", "breast_cancer")
"""``sklearn:NAME`` datasets: loaded from the installed scikit-learn package, never fetched."""


class JobInterrupted(HpcswarmError):
    """A stop signal ended the job early; everything done so far is in the checkpoint."""

    exit_code = 3

    def __init__(self, signal_name, checkpoint, n_done=None, n_tasks=None):
        done = "" if n_done is None else f" with {n_done} of {n_tasks} tasks finished"
        super().__init__(f"stopped by {signal_name or 'a stop request'}{done}; the checkpoint "
                         f"{checkpoint} holds the work done: continue with 'run --resume'")


@dataclass(frozen=True)
class Task:
    """One (run, fold): the training and test rows and the search seed.

    Attributes
    ----------
    number : int
        Position in the task list.
    run, fold : int
    train, test : ndarray of int64
        Sorted row indices; ``test`` is empty for the biased protocol.
    spawn_key : tuple of int
        Spawn key of the search seed under the job seed.
    """

    number: int
    run: int
    fold: int
    train: np.ndarray
    test: np.ndarray
    spawn_key: tuple

    def seed_sequence(self, job_seed):
        """The search's :class:`numpy.random.SeedSequence`."""
        return np.random.SeedSequence(job_seed, spawn_key=self.spawn_key)


def split_seed(job_seed, run):
    """Seed of run ``run``'s outer split (folds or 70/30)."""
    return np.random.SeedSequence(job_seed, spawn_key=(run, SPLIT))


def make_tasks(y, protocol, runs, seed, folds=10, inner_cv=None, first_run=0):
    """Every (run, fold) task of a protocol, identical on every rank.

    Parameters
    ----------
    y : ndarray of shape (n_samples,)
    protocol : {"unbiased", "biased", "holdout"}
    runs : int
    seed : int
        The job seed.
    folds : int, default 10
        Outer folds of ``unbiased``.
    inner_cv : {"loo", "holdout"} or int, optional
        The search's validation scheme: checked on every task's training rows now, so that a
        scheme a training part cannot support fails at once on every rank, not in one group.
    first_run : int, default 0
        Number of the first run; run ``r``'s tasks are the same whatever the other runs.

    Returns
    -------
    list of Task

    Raises
    ------
    ParameterError
        A class too small for the outer or inner scheme.
    """
    from hpcswarm.fitness import make_folds

    y = np.asarray(y)
    everything = np.arange(y.shape[0], dtype=np.int64)
    tasks = []
    for run in range(first_run, first_run + runs):
        if protocol == "biased":
            splits = [(everything, np.empty(0, dtype=np.int64))]
        else:
            scheme = folds if protocol == "unbiased" else "holdout"
            try:
                splits = make_folds(y, scheme, split_seed(seed, run))
            except ValueError as exc:
                key = "folds" if protocol == "unbiased" else "protocol"
                raise ParameterError(f"job key '{key}': the {protocol} protocol cannot split "
                                     f"this dataset: {exc}") from None
        for fold, (train, test) in enumerate(splits):
            task = Task(len(tasks), run, fold, train, test, (run, SEARCH, fold))
            if inner_cv is not None:
                try:
                    make_folds(y[train], inner_cv, task.seed_sequence(seed))
                except ValueError as exc:
                    raise ParameterError(
                        f"job key 'fitness.cv': the search's validation cannot run on the "
                        f"training part of run {run} fold {fold}: {exc}") from None
            tasks.append(task)
    return tasks


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


def run_task(X, y, task, job_seed, algorithm, params, group=None, progress=None, *,
             X_genes=None, values_finite=False, checkpoint=None, resume=None, sample_shards=1):
    """Select genes on ``task.train`` and test them on ``task.test``; also two baselines.

    The baselines are computed under the same protocol: k-NN on all genes, and PCA + k-NN
    keeping 95% of the variance (Gu et al. 2018), PCA fitted on the training rows only
    (:mod:`hpcswarm.baselines.pca`).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_genes)
        Sample-major values, read by the test scores and the baselines.
    y : ndarray of shape (n_samples,)
    task : Task
    job_seed : int
    algorithm : str
    params : dict
        Checked algorithm parameters.
    group : communicator, optional
        The rank group running this task (passed to the search when it accepts one).
    progress : callable, optional
        Called by the search once per round (see :func:`hpcswarm.taskfarm.farm`).
    X_genes : ndarray of shape (n_genes, n_samples), optional
        The same values gene-major, what the search reads: pass the dataset's memory map
        (:attr:`hpcswarm.data.Dataset.X_genes`). Without it, a gene-major copy of ``X`` is
        made for this task.
    values_finite : bool, default False
        The values are known to be finite (:attr:`hpcswarm.data.Dataset.values_finite`), so
        the search does not check them again.
    checkpoint, resume : optional
        The search's snapshot hook and the snapshot to resume from (see
        :func:`hpcswarm.search.run_search`).
    sample_shards : int, default 1
        Sample shards of the search (a divisor of the group's size, see
        :func:`hpcswarm.search.run_search`).

    Returns
    -------
    dict
        Plain values: genes, fitness, test and baseline counts, history, timings.

    Notes
    -----
    Memory: the search reads the training columns of ``X_genes`` gene by gene
    (:class:`hpcswarm.fitness.GeneMajor`), so with a memory-mapped ``X_genes`` no rank holds a
    copy of the matrix while it searches (issue #5). After the search, the biased all-genes
    score goes through the same evaluator (one Gram product over every gene, whose gather is
    ``8 n_train n_genes`` bytes for that call); the PCA baseline (an SVD of the training rows)
    and the test-fold scores read a copy of the training rows (``8 n_train n_genes`` bytes)
    for their duration only.
    """
    from hpcswarm.baselines.pca import pca_knn_cv, pca_knn_split
    from hpcswarm.fitness import GeneMajor, KnnEvaluator, score_split
    from hpcswarm.search import run_search

    started = time.perf_counter()
    seed = task.seed_sequence(job_seed)
    if X_genes is None:
        X_genes = np.ascontiguousarray(np.asarray(X).T)
    train, y_train = GeneMajor(X_genes, task.train, finite=values_finite), y[task.train]
    result = run_search(train, y_train, algorithm, params, seed=seed, comm=group,
                        progress=progress, checkpoint=checkpoint, resume=resume,
                        sample_shards=sample_shards)
    k = params["k"]
    all_genes = np.ones(X.shape[1], dtype=bool)
    if task.test.size:
        X_train, X_test, y_test = np.asarray(X[task.train]), np.asarray(X[task.test]), y[task.test]
        test = score_split(X_train, y_train, X_test, y_test, result.mask, k)
        baseline = score_split(X_train, y_train, X_test, y_test, all_genes, k)
        pca = pca_knn_split(X_train, y_train, X_test, y_test, k)
    else:
        score = result.extra["score"]
        test = _Counts(score["correct"], score["total"])
        evaluator = KnnEvaluator(train, y_train, k=k, cv=params["cv"], seed=seed, archive_size=0)
        baseline = evaluator.score(all_genes)
        pca = pca_knn_cv(np.asarray(X[task.train]), y_train, k, folds=evaluator.folds)
    last = result.history[-1]
    return {
        "run": task.run, "fold": task.fold, "spawn_key": list(task.spawn_key),
        "genes": result.genes.astype(np.int64), "train_fitness": float(result.fitness),
        "train_correct": int(result.extra["score"]["correct"]),
        "train_total": int(result.extra["score"]["total"]),
        "test_correct": int(test.correct), "test_total": int(test.total),
        "baseline_correct": int(baseline.correct), "baseline_total": int(baseline.total),
        "pca_correct": int(pca.correct), "pca_total": int(pca.total),
        "pca_components": float(np.mean(pca.n_components)),
        "evaluations": int(last["evaluations"]), "archive_hits": int(last["archive_hits"]),
        "seconds": time.perf_counter() - started, "history": list(result.history),
        "extra": result.extra
    }


@dataclass(frozen=True)
class _Counts:
    correct: int
    total: int


# ------------------------------------------------------------------ datasets of a job
def _sklearn_dataset(name):
    from sklearn import datasets

    from hpcswarm.data import Dataset

    if name not in SKLEARN_DATASETS:
        raise DataError(f"sklearn:{name}: not a bundled scikit-learn dataset "
                        f"(choose {', '.join('sklearn:' + n for n in SKLEARN_DATASETS)})")
    bunch = getattr(datasets, f"load_{name}")()
    X = np.ascontiguousarray(bunch.data, dtype=np.float64)
    y = np.asarray(bunch.target, dtype=np.int64)
    digest = hashlib.sha256(X.tobytes() + y.tobytes()).hexdigest()
    import sklearn

    return Dataset(X=X, y=y, class_names=[str(c) for c in bunch.target_names],
                   gene_names=[str(f) for f in bunch.feature_names],
                   attrs={"source": f"sklearn:{name}", "format": "sklearn",
                          "source_sha256": digest, "sklearn_version": sklearn.__version__,
                          "sha256_of": "float64 X bytes then int64 y bytes (C order)"})


def cache_name(source_sha256, options):
    """File name in the cache of a source converted with ``options`` (by content, not path).

    The key holds the dataset encoding version, so that a file cached in an older layout
    (e.g. without ``X_genes``) is never reused: the source is converted again.
    """
    from hpcswarm.data.hdf5 import ENCODING_VERSION

    key = json.dumps({"sha256": source_sha256, "options": options, "version": __version__,
                      "encoding": ENCODING_VERSION}, sort_keys=True)
    return f"{hashlib.sha256(key.encode()).hexdigest()[:24]}.h5"


def _convert_into_cache(job):
    """Convert ``job.data`` into the cache unless already there; returns the cached path."""
    from hpcswarm.data import read_dataset, write_dataset
    from hpcswarm.data.dataset import file_sha256
    from hpcswarm.data.textio import check_readable

    source = Path(job.data)
    check_readable(source)
    target = Path(job.cache) / f"{source.stem}-{cache_name(file_sha256(source), job.convert)}"
    if target.is_file():
        return target
    try:
        Path(job.cache).mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DataError(f"{job.cache}: cannot create the dataset cache ({exc.strerror})") from None
    dataset, _ = read_dataset(source, **job.convert)
    try:
        write_dataset(dataset, target)
    except DataError:
        if not target.is_file():  # another job converted the same file meanwhile: fine
            raise
    return target


def load_job_dataset(job, comm=None):
    """The dataset of ``job`` on every rank; files other than HDF5 are converted once, cached.

    ``builtin:NAME`` and ``.h5`` files are opened memory-mapped; ``sklearn:NAME`` is built from
    the installed scikit-learn; any other file is converted by world rank 0 into
    ``job.cache`` (named by the source's SHA-256, the conversion options and the dataset
    encoding version), after which every rank memory-maps the cached file. An error on rank 0
    is raised on every rank.
    """
    from hpcswarm.comm import as_comm
    from hpcswarm.data import load_dataset, open_dataset
    from hpcswarm.data.convert import BUILTIN_PREFIX, detect_hdf5

    comm = as_comm(comm)
    spec = job.data
    if spec.startswith("sklearn:"):
        if job.convert:
            raise ParameterError(f"{job.source}: [convert] options do not apply to {spec}")
        return _sklearn_dataset(spec[len("sklearn:"):])
    if spec.startswith(BUILTIN_PREFIX) or detect_hdf5(spec):
        if job.convert:
            raise ParameterError(f"{job.source}: [convert] options apply only to files that "
                                 f"are converted, not to {spec}")
        return load_dataset(spec)
    outcome = None
    if comm.rank == 0:
        try:
            outcome = ("ok", str(_convert_into_cache(job)))
        except (DataError, ParameterError) as exc:
            outcome = (type(exc).__name__, str(exc))
    outcome = comm.bcast(outcome, root=0)
    if outcome[0] != "ok":
        raise (DataError if outcome[0] == "DataError" else ParameterError)(outcome[1])
    dataset = open_dataset(outcome[1])
    dataset.attrs.setdefault("job_data", spec)
    return dataset


def dataset_sha256(dataset):
    """SHA-256 of the dataset file (or of the arrays for a dataset built in memory)."""
    digest = dataset.sha256
    if digest is None:
        digest = hashlib.sha256(np.ascontiguousarray(dataset.X).tobytes()
                                + np.asarray(dataset.y, dtype=np.int64).tobytes()).hexdigest()
    return digest


# ------------------------------------------------------------------ the whole job
def check_output_free(job, comm=None, overwrite=False, resume=False):
    """DataError on every rank if the job's outputs cannot be written (checked before any work).

    An existing results file or JSON summary is an error unless ``overwrite``; a folder in
    their place, a missing parent folder or one where no file can be created always is. An
    existing checkpoint is an error unless ``resume`` (continue from it) or ``overwrite``
    (start again, replacing it); ``resume`` with finished results and no checkpoint is an
    error too (nothing is left to run).
    """
    from hpcswarm.comm import as_comm
    from hpcswarm.preflight import check_output_writable

    comm = as_comm(comm)
    problem = None
    if comm.rank == 0:
        for path in (job.output, job.summary_path, job.checkpoint):
            if path.is_dir():
                problem = f"{path}: is a directory, expected a file name"
                break
        if problem is None and resume and not job.checkpoint.exists() and job.output.exists():
            problem = (f"{job.output}: the job is already complete (no checkpoint "
                       f"{job.checkpoint.name} to resume)")
        for path in (job.output, job.summary_path):
            if problem is None and path.exists() and not overwrite:
                problem = f"{path}: already exists (use --overwrite to replace it)"
        if problem is None and job.checkpoint.exists() and not (resume or overwrite):
            problem = (f"{job.checkpoint}: a checkpoint of an unfinished run of this job "
                       f"exists; continue it with --resume, or start again with --overwrite")
        for folder in dict.fromkeys((job.output.parent, job.checkpoint.parent)):
            if problem is None and not folder.is_dir():
                problem = f"{folder}: the output folder does not exist"
            if problem is None:
                problem = check_output_writable(folder)
    problem = comm.bcast(problem, root=0)
    if problem:
        raise DataError(problem)


def open_job_dataset(job, world):
    """:func:`load_job_dataset` on every rank; if any rank fails, every rank raises its message.

    The outcome of every rank is allgathered (no rank is left waiting in a collective).
    """
    from hpcswarm.errors import HpcswarmError
    from hpcswarm.preflight import agree

    dataset, problem = None, None
    try:
        dataset = load_job_dataset(job, world)
    except (HpcswarmError, OSError) as exc:
        where = f" (on rank {world.rank})" if world.size > 1 else ""
        text = str(exc) if job.data in str(exc) else f"{job.data}: {exc}"
        problem = (type(exc).__name__, f"the dataset does not open{where}: {text}")
    agree(world, problem)
    return dataset


def run_job(job, world=None, *, overwrite=False, log=None, quiet=False, memory_limit=None,
            progress_stream=None, resume=False):
    """Run every task of ``job`` on the rank groups of ``world``; rank 0 writes the results.

    Checkpoint and restart (issue 7): world rank 0 keeps ``job.checkpoint`` up to date with
    every finished task's result and the latest snapshot of every running search, taken
    every ``job.checkpoint_every`` rounds and when SIGTERM or SIGUSR1 arrives
    (:mod:`hpcswarm.interrupt`); after a signal every group snapshots its search at the end
    of its current round, the checkpoint is written and :class:`JobInterrupted` is raised.
    With ``resume`` the finished tasks are taken from the checkpoint and the interrupted
    searches continue from their snapshots, on any number of ranks: the results equal those
    of an uninterrupted run (all but wall times). The checkpoint is deleted once the results
    are written.

    Parameters
    ----------
    job : hpcswarm.jobfile.Job
    world : SerialComm or MPIComm, optional
        Every rank calls :func:`run_job`; None means serial.
    overwrite : bool
        Replace existing outputs (and ignore an existing checkpoint).
    log : callable, optional
        ``log(line)`` on world rank 0 for the job's opening line.
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
    from hpcswarm.checkpoint import Checkpoint, CheckpointKeeper, checkpoint_identity
    from hpcswarm.comm import as_comm
    from hpcswarm.interrupt import StopRequest
    from hpcswarm.preflight import agree, check_inner_k, check_memory, choose_sample_shards
    from hpcswarm.progress import ProgressReporter, progress_path, task_record
    from hpcswarm.results import summarise, write_results
    from hpcswarm.swarm.snapshot import take_snapshot
    from hpcswarm.taskfarm import TaskInterrupted, default_group_size, farm, group_layout

    world = as_comm(world)
    # pre-flight: every check before any computation, the same verdict on every rank
    check_output_free(job, world, overwrite, resume)
    started = time.perf_counter()
    dataset = open_job_dataset(job, world)
    y = np.asarray(dataset.y)
    tasks = make_tasks(y, job.protocol, job.runs, job.seed, job.folds,
                       inner_cv=job.params["cv"], first_run=job.first_run)
    check_inner_k(y, tasks, job.params["k"], job.params["cv"], job.seed)
    identity = checkpoint_identity(job, dataset_sha256(dataset))
    previous, problem = None, None
    if resume and job.checkpoint.exists():
        try:
            previous = Checkpoint(job.checkpoint, identity, len(tasks))
        except (DataError, ParameterError) as exc:
            problem = (type(exc).__name__, str(exc))
    agree(world, problem)
    finished = previous.finished if previous is not None else set()
    pending = [task for task in tasks if task.number not in finished]
    n_particles = job.params.get("n_particles", 1)
    group_size = job.group_size or default_group_size(world.size, len(pending), n_particles)
    shards = choose_sample_shards(job, dataset, tasks, group_size, world, memory_limit)
    group_size = shard_group_size(job, world.size, group_size, shards)
    layout = group_layout(world.size, world.rank, group_size)
    check_memory(job, dataset, tasks, layout.group_size, world, memory_limit, shards)
    if log is not None and world.rank == 0:
        log(f"{job.name}: {job.algorithm} on {job.data}, {job.protocol} protocol, "
            f"{job.runs} run(s) x {len(tasks) // job.runs} fold(s) = {len(tasks)} tasks on "
            f"{world.size} rank(s) in {layout.n_groups} group(s) of {layout.group_size}"
            + (f" ({shards} sample shards each)" if shards > 1 else ""))
        if previous is not None:
            log(f"resuming from {job.checkpoint}: {len(finished)} task(s) finished, "
                f"{len(previous.inflight)} to continue from their snapshots")
    reporter = keeper = None
    by_number = {}  # on world rank 0: task number -> (result, group index)
    if world.rank == 0:
        reporter = ProgressReporter(progress_path(job.output), len(tasks), layout.n_groups,
                                    stream=progress_stream, quiet=quiet)
        keeper = CheckpointKeeper(job.checkpoint, identity, tasks, previous,
                                  min_seconds=job.checkpoint_seconds)
        for number, (task, result, group_index) in keeper.finished.items():
            by_number[number] = (result, group_index)
            reporter.task_done(task_record(task, result, group_index))
    stopper = StopRequest(world).install()

    def one(task, group, progress):
        def hook(row=None):
            progress(row)
            if reporter is not None and row is not None:
                reporter.round(task, row)
            if keeper is not None:
                keeper.maybe_write()

        def at_round_end(search):
            stopping = bool(group.allreduce_max(np.array([int(stopper.check())]))[0])
            every = job.checkpoint_every
            if stopping or (every and (search.iteration + 1) % every == 0):
                snapshot = take_snapshot(search)
                if group.rank == 0:
                    progress(message=(task.number, snapshot))
            if stopping:
                raise TaskInterrupted

        snapshot = None
        if previous is not None and task.number in previous.inflight:
            snapshot = previous.snapshot(task.number)
        return run_task(dataset.X, y, task, job.seed, job.algorithm, job.params, group, hook,
                        X_genes=dataset.X_genes, values_finite=dataset.values_finite,
                        checkpoint=at_round_end, resume=snapshot, sample_shards=shards)

    def summary(task, result, group_index):
        return task.number, result, group_index

    def on_done(record):
        number, result, group_index = record
        reporter.task_done(task_record(tasks[number], result, group_index))
        keeper.done(number, result, group_index)

    try:
        results, assignments = farm(world, pending, one, group_size=layout.group_size,
                                    summary=summary,
                                    on_done=None if keeper is None else on_done,
                                    on_message=None if keeper is None
                                    else lambda message: keeper.snapshot(*message),
                                    stop=stopper.check)
        stopped = stopper.finish()
    finally:
        stopper.restore()
        if reporter is not None:
            reporter.close()
        if previous is not None:
            previous.close()
    if world.rank != 0:
        if stopped:
            raise JobInterrupted(stopper.signal_name, job.checkpoint)
        return None
    for position, (task, result) in enumerate(zip(pending, results)):
        if result is not None:
            by_number[task.number] = (result, assignments[position])
    if stopped or len(by_number) < len(tasks):
        keeper.write()
        raise JobInterrupted(stopper.signal_name, job.checkpoint, len(by_number), len(tasks))
    if keeper.dirty:  # a failure while the results are written must not cost finished tasks
        keeper.write()
    total_seconds = time.perf_counter() - started
    provenance = {
        "hpcswarm_version": __version__, "seed": job.seed, "n_ranks": world.size,
        "group_size": layout.group_size, "n_groups": layout.n_groups, "sample_shards": shards,
        "dataset_sha256": dataset_sha256(dataset), "dataset": job.data,
        "dataset_source_sha256": dataset.attrs.get("source_sha256"),
        "total_seconds": total_seconds, "resumed": previous is not None,
    }
    results = []
    for task in tasks:
        result, group_index = by_number[task.number]
        result = dict(result, group=group_index, train_index=task.train, test_index=task.test)
        results.append(result)
    write_results(job.output, job, dataset, results, provenance, overwrite=overwrite)
    summary_document = summarise(job, dataset, results, provenance)
    from hpcswarm.search import write_json_atomic

    write_json_atomic(summary_document, str(job.summary_path))
    keeper.remove()
    return summary_document


def run_job_file(path, overrides=(), *, comm=None, overwrite=False, print0=print, quiet=False,
                 memory_limit=None, resume=False):
    """The ``run JOB.toml [--set key=value ...]`` command: read, run, write, print a summary.

    Every rank reads and checks the job (identical errors everywhere), then runs it;
    ``print0`` is called on world rank 0 only. ``quiet`` silences the progress lines on
    stderr; ``memory_limit`` (GB) replaces the detected memory in the pre-flight check.
    ``comm`` is the job's world communicator (default: a duplicate of ``COMM_WORLD``);
    ``resume`` continues from the job's checkpoint (see :func:`run_job`).
    """
    from hpcswarm.comm import world
    from hpcswarm.jobfile import read_job

    comm = world() if comm is None else comm
    job = read_job(path, overrides)
    summary = run_job(job, comm, overwrite=overwrite, log=print0 if comm.rank == 0 else None,
                      quiet=quiet, memory_limit=memory_limit, resume=resume)
    if comm.rank != 0:
        return
    accuracy, size = summary["accuracy"], summary["subset_size"]
    baseline = summary["all_genes_accuracy"]
    what = "inner-CV accuracy (biased)" if summary["biased"] else "test accuracy"
    print0(f"{job.name}: {what} over {summary['runs']} run(s): best {100 * accuracy['best']:.2f}"
           f"%, mean {100 * accuracy['mean']:.2f} +/- {100 * accuracy['std']:.2f}%; "
           f"all genes {100 * baseline['mean']:.2f}%")
    print0(f"mean subset size {size['mean']:.2f} of {summary['n_genes']} genes; "
           f"{summary['tasks']} tasks, {summary['task_seconds']['mean']:.1f} s per task, "
           f"{summary['provenance']['total_seconds']:.1f} s in all on "
           f"{summary['provenance']['n_ranks']} rank(s)")
    if summary["biased"]:
        print0(f"note: {summary['note']}")
    print0(f"wrote {job.output} and {job.summary_path}")
