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

import time
from dataclasses import dataclass

import numpy as np

from hpcswarm.baselines.pca import pca_knn_cv, pca_knn_split
from hpcswarm.errors import ParameterError
from hpcswarm.fitness import GeneMajor, Score, fold_rule, make_folds, make_scorer, score_split
from hpcswarm.fitness.folds import fold_ids
from hpcswarm.preprocess import fit
from hpcswarm.records import (BIAS_NOTE, PREPROCESS_BIAS_NOTE, FrontPoint, History,  # noqa: F401
                              RefinedSubset, TaskRecord)
from hpcswarm.search import run_search

SPLIT, SEARCH = 0, 1
"""Spawn-key components: a run's outer split, and the search of one of its folds."""


@dataclass(frozen=True)
class Task:
    """One (run, fold): the training and test rows, the search's folds and seed.

    Attributes
    ----------
    number : int
        Position in the task list.
    run, fold : int
    train, test : ndarray of int64
        Sorted row indices; ``test`` is empty for the biased protocol.
    spawn_key : tuple of int
        Spawn key of the search seed under the job seed.
    inner_fold_ids : ndarray of int64 of shape (len(train),)
        The validation fold in which each training row is held out by the search (-1:
        never, the 70 % of a holdout), drawn once from the search seed by
        :func:`~hpcswarm.fitness.make_folds` (n indices, whatever the scheme).
    """

    number: int
    run: int
    fold: int
    train: np.ndarray
    test: np.ndarray
    spawn_key: tuple
    inner_fold_ids: np.ndarray

    def seed_sequence(self, job_seed):
        """The search's :class:`numpy.random.SeedSequence`."""
        return np.random.SeedSequence(job_seed, spawn_key=self.spawn_key)

    @property
    def smallest_inner_train(self):
        """Training rows of the search's smallest validation fold (every scheme of
        :func:`~hpcswarm.fitness.make_folds` trains on all the rows a fold does not hold out)."""
        held_out = np.bincount(self.inner_fold_ids[self.inner_fold_ids >= 0])
        return self.train.size - int(held_out.max())


def split_seed(job_seed, run):
    """Seed of run ``run``'s outer split (folds or 70/30)."""
    return np.random.SeedSequence(job_seed, spawn_key=(run, SPLIT))


def _outer_splits(y, protocol, folds, seed, run):
    """Run ``run``'s (train, test) pairs under ``protocol``."""
    if protocol == "biased":
        return [(np.arange(y.shape[0], dtype=np.int64), np.empty(0, dtype=np.int64))]
    scheme = folds if protocol == "unbiased" else "holdout"
    try:
        return make_folds(y, scheme, split_seed(seed, run))
    except ValueError as exc:
        key = "folds" if protocol == "unbiased" else "protocol"
        raise ParameterError(f"job key '{key}': the {protocol} protocol cannot split "
                             f"this dataset: {exc}") from None


def _inner_fold_ids(y_train, inner_cv, seed, run, fold):
    """The fold holding out each row of one training part in the search (-1: none).

    One id per row (:func:`~hpcswarm.fitness.folds.fold_ids`): leave-one-out costs O(n),
    not n index lists.
    """
    try:
        return fold_ids(y_train, inner_cv, seed)
    except ValueError as exc:
        raise ParameterError(f"job key 'fitness.cv': the search's validation cannot run on the "
                             f"training part of run {run} fold {fold}: {exc}") from None


def make_tasks(y, protocol, runs, seed, *, folds=10, inner_cv, first_run=0):
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
    inner_cv : {"loo", "holdout"} or int
        The search's validation scheme: its folds are drawn now, on every task's training
        rows, so that a scheme a training part cannot support fails at once on every rank,
        not in one group.
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
    y = np.asarray(y)
    tasks = []
    for run in range(first_run, first_run + runs):
        for fold, (train, test) in enumerate(_outer_splits(y, protocol, folds, seed, run)):
            key = (run, SEARCH, fold)
            inner = _inner_fold_ids(y[train], inner_cv,
                                    np.random.SeedSequence(seed, spawn_key=key), run, fold)
            tasks.append(Task(len(tasks), run, fold, train, test, key, inner))
    return tasks


def fold_rules(y, tasks, job):
    """How the job's folds were dealt (:func:`hpcswarm.fitness.fold_rule`), for the results.

    Returns ``{"outer": rule or None, "inner": [rules of the searches' validation]}``: the
    outer split's rule (``"sklearn"``, ``"round-robin"`` or ``"holdout"``; None when biased)
    and the distinct rules of the inner schemes on the tasks' training parts.
    """
    outer = {"unbiased": lambda: fold_rule(y, job.folds), "holdout": lambda: "holdout",
             "biased": lambda: None}[job.protocol]()
    inner = sorted({fold_rule(y[task.train], job.params["cv"]) for task in tasks})
    return {"outer": outer, "inner": inner}


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
             X_genes=None, values_finite=False, checkpoint=None, resume=None, preprocess=(),
             sample_shards=1, refine="none", max_genes=None):
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
    preprocess : sequence of (str, value)
        In-fold preprocessing steps (:mod:`hpcswarm.preprocess`), fitted on ``task.train``
        only (all samples in the biased protocol) and applied to ``task.test``; the search,
        the baselines and the test score all see the transformed values.
    sample_shards : int, default 1
        Sample shards of the search (a divisor of the group's size, see
        :func:`hpcswarm.search.run_search`).
    refine : {"none", "prune", "prune-margin", "prune-compact"}
        Refinement of the selected subset after the search, on the training rows
        (:mod:`hpcswarm.refine`).
    max_genes : int, optional
        Size cap of a swarm method (see :func:`hpcswarm.search.run_search`).

    The search, the biased all-genes baseline and the PCA baseline validate on the folds
    ``params["cv"]`` draws from the task's seed (those of ``task.inner_fold_ids``).

    Returns
    -------
    TaskRecord
        Genes (indices of the original dataset), fitness, test and baseline counts, history,
        timings, and with ``preprocess`` the fitted steps; ``front`` (the search's Pareto
        front of inner accuracy and size, each point with its test counts, computed after
        the search, under ``unbiased`` and ``holdout``); with a refinement, ``refined`` (its
        genes, inner and test counts).

    Notes
    -----
    Memory: the search reads the training columns of ``X_genes`` gene by gene
    (:class:`hpcswarm.fitness.GeneMajor`), so with a memory-mapped ``X_genes`` no rank holds a
    copy of the matrix while it searches. After the search, the biased all-genes
    score goes through the same evaluator (one Gram product over every gene, whose gather is
    ``8 n_train n_genes`` bytes for that call); the PCA baseline (an SVD of the training rows)
    and the test-fold scores read a copy of the training rows (``8 n_train n_genes`` bytes)
    for their duration only.
    """
    started = time.perf_counter()
    seed = task.seed_sequence(job_seed)
    y_train = y[task.train]
    train, X_train, fitted = _training_view(X, y_train, task, preprocess, X_genes,
                                            values_finite)
    result = run_search(train, y_train, algorithm, params, seed=seed, comm=group,
                        progress=progress, checkpoint=checkpoint, resume=resume,
                        sample_shards=sample_shards, refine=refine, max_genes=max_genes)
    if task.test.size:
        held_out = HeldOut(X, y, task, X_train, fitted, params["k"])
        scores = held_out.scores(result.mask)
    else:
        held_out = None
        scores = _inner_scores(X, y_train, task, train, X_train, result, params, seed)
    return _task_record(task, result, scores, held_out, fitted, time.perf_counter() - started)


def _training_view(X, y_train, task, preprocess, X_genes, values_finite=False):
    """What the search reads of ``task.train``: ``(GeneMajor, sample-major rows or None,
    fitted preprocessing or None)``; without preprocessing, the rows of ``X_genes``
    (``values_finite``: the dataset records that its values are finite)."""
    if preprocess:
        fitted, X_train = fit(preprocess, np.asarray(X[task.train]), y_train)
        return GeneMajor(np.ascontiguousarray(X_train.T)), X_train, fitted
    if X_genes is None:
        X_genes = np.ascontiguousarray(np.asarray(X).T)
    return GeneMajor(X_genes, task.train, finite=values_finite), None, None


class HeldOut:
    """A task's held-out test: k-NN trained on ``task.train``, tested on ``task.test``
    (both transformed by the fitted preprocessing, if any)."""

    def __init__(self, X, y, task, X_train, fitted, k):
        if fitted is None:
            X_train, self.X_test = np.asarray(X[task.train]), np.asarray(X[task.test])
        else:
            self.X_test = fitted.transform(np.asarray(X[task.test]))
        self.X_train, self.y_train, self.y_test, self.k = X_train, y[task.train], y[task.test], k

    def score(self, genes):
        """Test counts of the subset ``genes`` (indices of the training view's genes)."""
        mask = np.zeros(self.X_train.shape[1], dtype=bool)
        mask[genes] = True
        return self.score_mask(mask)

    def score_mask(self, mask):
        """Test counts of the subset ``mask``."""
        return score_split(self.X_train, self.y_train, self.X_test, self.y_test, mask, self.k)

    def scores(self, mask):
        """``(test, all genes, PCA)`` scores: the selected subset ``mask`` and the two
        baselines (Gu et al. 2018)."""
        all_genes = np.ones(self.X_train.shape[1], dtype=bool)
        return (self.score_mask(mask), self.score_mask(all_genes),
                pca_knn_split(self.X_train, self.y_train, self.X_test, self.y_test, self.k))


def _inner_scores(X, y_train, task, train, X_train, result, params, seed):
    """The biased protocol's ``(test, all genes, PCA)`` scores: inner cross-validation on
    the task's own folds (no held-out rows)."""
    k, cv = params["k"], params["cv"]
    test = Score(result.extra["score"]["correct"], result.extra["score"]["total"])
    all_genes = np.ones(train.n_genes, dtype=bool)
    baseline = make_scorer(train, y_train, k=k, cv=cv, seed=seed).score(all_genes)
    rows = np.asarray(X[task.train]) if X_train is None else X_train
    return test, baseline, pca_knn_cv(rows, y_train, k, cv=cv, seed=seed)


def _original(fitted, genes):
    """Indices in the dataset of the training view's ``genes`` (preprocessing may drop some)."""
    genes = np.asarray(genes, dtype=np.int64)
    return genes if fitted is None else fitted.genes[genes]


def _front_records(front, held_out, fitted):
    """The search's Pareto front, each point with its test counts (-1 without a test)."""
    records = []
    for point in front:
        counts = None if held_out is None else held_out.score(point["genes"])
        records.append(FrontPoint(
            _original(fitted, point["genes"]), float(point["fitness"]), int(point["correct"]),
            int(point["total"]), -1 if counts is None else int(counts.correct),
            -1 if counts is None else int(counts.total)))
    return tuple(records)


def _refined_record(refined, held_out, fitted):
    """The refined subset with its inner and test counts (its inner counts when biased)."""
    if refined is None:
        return None
    counts = (Score(refined.correct, refined.total) if held_out is None
              else held_out.score(refined.genes))
    return RefinedSubset(refined.method, _original(fitted, refined.genes),
                         _original(fitted, refined.removed), int(refined.correct),
                         int(refined.total), int(counts.correct), int(counts.total))


def _task_record(task, result, scores, held_out, fitted, seconds):
    """The :class:`~hpcswarm.records.TaskRecord` of a task (see :func:`run_task`)."""
    test, baseline, pca = scores
    last = result.history[-1]
    return TaskRecord(
        run=task.run, fold=task.fold, spawn_key=tuple(task.spawn_key),
        genes=_original(fitted, result.genes), train_fitness=float(result.fitness),
        train_correct=int(result.extra["score"]["correct"]),
        train_total=int(result.extra["score"]["total"]),
        test_correct=int(test.correct), test_total=int(test.total),
        baseline_correct=int(baseline.correct), baseline_total=int(baseline.total),
        pca_correct=int(pca.correct), pca_total=int(pca.total),
        pca_components=float(np.mean(pca.n_components)),
        evaluations=int(last["evaluations"]), archive_hits=int(last["archive_hits"]),
        seconds=seconds, history=History.from_rows(result.history), extra=result.extra,
        front=_front_records(result.front, held_out, fitted),
        refined=_refined_record(result.refined, held_out, fitted),
        train_index=np.asarray(task.train, dtype=np.int64),
        test_index=np.asarray(task.test, dtype=np.int64),
        preprocessing=None if fitted is None else fitted.record())
