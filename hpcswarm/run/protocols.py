"""The evaluation protocols of the papers as objects in a registry (:data:`PROTOCOLS`), each
(run, fold) one task for the task farm.

A protocol (:class:`Protocol`) gives its outer splits, its task count, its fold rule, whether
it is biased, its note, and whether a task is tested on held-out rows; a new protocol is one
subclass and one row of :data:`PROTOCOLS` (the job's ``protocol`` choices derive from it).

- ``biased`` (Tran et al. 2016, Experiment I; Chuang et al. 2011): selection on all samples;
  the reported accuracy is the inner cross-validation accuracy of the selected subset. These
  figures are optimistically biased (Ambroise & McLachlan 2002) and flagged so in the results.
- ``unbiased`` (Tran et al. 2016, Experiment II; the default): stratified outer n-fold CV;
  selection sees only the training folds; the reported accuracy is that of the k-NN trained
  on the training folds with the selected genes, tested on the held-out fold.
- ``holdout`` (Gu et al. 2018; Li et al.; Xue et al. 2012): stratified 70/30 split, selection
  on the 70 %, accuracy of the k-NN trained on the 70 % and tested on the 30 %.
- ``final-signature``: the tasks of ``unbiased``, then one more search on every sample. The
  outer folds estimate how well the *method* generalises (each fold's search never saw its
  test fold); the extra search gives the one signature to publish, selected on all the
  data (Ambroise & McLachlan 2002 recommend exactly this split of roles: an external
  cross-validation for the error rate, the full sample for the final rule). Its own inner
  accuracy is reported, but it is not an estimate: it is the biased figure of Experiment I.

Seeds: the job seed is the root :class:`numpy.random.SeedSequence`; run ``r`` splits its
samples with the child ``(r, SPLIT)`` and searches fold ``f`` with the child
``(r, SEARCH, f)`` (spawn keys, as ``SeedSequence.spawn`` would build them); a protocol's
extra task ``i`` (the final signature) searches with ``(0, EXTRA, i)``, the same whatever
runs the job holds. Every rank
derives the same tasks from ``y`` and the seed alone, so results do not depend on the number
of ranks or groups. The all-genes k-NN baseline is computed for every task under the same
protocol.

Memory of a task (:func:`run_task`): the search reads the training columns of ``X_genes``
gene by gene (:class:`hpcswarm.fitness.GeneMajor`), so with a memory-mapped ``X_genes`` no
rank holds a copy of the matrix while it searches; with preprocessing it reads the one
gene-major copy of the transformed training rows that
:func:`hpcswarm.selection.prepare.prepare` makes, as every front door does. After the search, the biased all-genes
score goes through the same evaluator (one Gram product over every gene, whose gather is
``8 n_train n_genes`` bytes for that call); the PCA baseline (an SVD of the training rows)
and the test-fold scores read a copy of the training rows (``8 n_train n_genes`` bytes) for
their duration only.
"""

import time
from dataclasses import dataclass

import numpy as np

from hpcswarm.baselines.pca import pca_knn_cv, pca_knn_split
from hpcswarm.errors import ParameterError
from hpcswarm.fitness import fold_rule, make_folds, make_scorer, score_split
from hpcswarm.fitness.folds import fold_ids, folds_from_ids
from hpcswarm.results.files import signature_of
from hpcswarm.selection.prepare import prepare
from hpcswarm.signatures.refinements import final_refine
from hpcswarm.store.records import (BIAS_NOTE, PREPROCESS_BIAS_NOTE, FrontPoint, History,
                              RefinedSubset, TaskRecord)

SPLIT, SEARCH, EXTRA = 0, 1, 2
"""Spawn-key components: a run's outer split, the search of one of its folds, and a search
outside the runs (the final signature's)."""


TASK_BYTES = 1024
"""A task's bookkeeping besides its index arrays (objects, its result's history, ...)."""


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
    job_seed : int
        The job seed, root of ``spawn_key``.
    protocol : str
        The name of the task's protocol in :data:`PROTOCOLS` (it says how the task is tested).
    extra : bool
        A task outside the runs (the final signature's search on every sample): ``run`` and
        ``fold`` are then -1 and the task's index among the extra ones.
    """

    number: int
    run: int
    fold: int
    train: np.ndarray
    test: np.ndarray
    spawn_key: tuple
    inner_fold_ids: np.ndarray
    job_seed: int = 0
    protocol: str = "unbiased"
    extra: bool = False

    @staticmethod
    def bytes_needed(n_samples):
        """Bytes of one task of a dataset of ``n_samples``, at most: ``train``, ``test`` and
        ``inner_fold_ids`` (int64, ``16 n_samples`` in all) and :data:`TASK_BYTES`."""
        return 16 * n_samples + TASK_BYTES

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


class Protocol:
    """An evaluation protocol: how a run's samples are split into tasks and how each task's
    selection is tested. One instance per row of :data:`PROTOCOLS`.

    Attributes
    ----------
    name : str
        The job key's value (``protocol = "unbiased"``).
    biased : bool
        The reported accuracy is the selection's own inner cross-validation accuracy on all
        samples (Ambroise & McLachlan 2002), flagged so in the results.
    split_key : str
        The job key named when the outer split cannot be drawn.
    """

    name = ""
    biased = False
    split_key = "protocol"
    n_extra = 0

    def default_refine(self, algorithm):
        """The refinement of a job of this protocol and method ``algorithm`` whose file names
        none: its searches' subsets as they are."""
        return "none"

    def extra_splits(self, y):
        """``(train, test)`` pairs of the tasks outside the runs (:attr:`n_extra` of them)."""
        return []

    def outer_splits(self, y, folds, seed, run):
        """Run ``run``'s ``(train, test)`` pairs of sorted row indices."""
        raise NotImplementedError

    def n_splits(self, folds):
        """Tasks per run (without drawing them: job sizes are checked arithmetically)."""
        raise NotImplementedError

    def outer_rule(self, y, folds):
        """How the outer split deals the rows (:func:`hpcswarm.fitness.fold_rule`), or None."""
        raise NotImplementedError

    def note(self, preprocess=()):
        """The warning every result of this protocol carries ("" for none)."""
        return ""

    def held_out(self, task):
        """Whether ``task`` is tested on held-out rows (else on the search's inner folds)."""
        return not self.biased

    def final_signature(self, name, n_genes, folds, extras):
        """The signature to publish from the records of the outer ``folds`` and of the
        :attr:`n_extra` tasks ``extras``, or None for a protocol without one."""
        return None

    def _drawn(self, y, scheme, seed, run):
        try:
            return make_folds(y, scheme, split_seed(seed, run))
        except ValueError as exc:
            raise ParameterError(f"job key '{self.split_key}': the {self.name} protocol cannot "
                                 f"split this dataset: {exc}") from None


class Unbiased(Protocol):
    """Stratified outer n-fold CV; the search sees the training folds only (Tran et al. 2016,
    Experiment II)."""

    name, split_key = "unbiased", "folds"

    def outer_splits(self, y, folds, seed, run):
        return self._drawn(y, folds, seed, run)

    def n_splits(self, folds):
        return folds

    def outer_rule(self, y, folds):
        return fold_rule(y, folds)


class Biased(Protocol):
    """Selection and accuracy on all samples (Tran et al. 2016, Experiment I; Chuang et al.
    2011): optimistically biased (Ambroise & McLachlan 2002)."""

    name, biased = "biased", True

    def outer_splits(self, y, folds, seed, run):
        return [(np.arange(y.shape[0], dtype=np.int64), np.empty(0, dtype=np.int64))]

    def n_splits(self, folds):
        return 1

    def outer_rule(self, y, folds):
        return None

    def note(self, preprocess=()):
        return BIAS_NOTE + (PREPROCESS_BIAS_NOTE if preprocess else "")


class Holdout(Protocol):
    """A stratified 70/30 split: selection on the 70 %, test on the 30 % (Gu et al. 2018)."""

    name = "holdout"

    def outer_splits(self, y, folds, seed, run):
        return self._drawn(y, "holdout", seed, run)

    def n_splits(self, folds):
        return 1

    def outer_rule(self, y, folds):
        return "holdout"


class FinalSignature(Unbiased):
    """``unbiased``'s outer cross-validation, the estimate, then one search on every sample,
    the signature to publish (see the module notes)."""

    name, n_extra = "final-signature", 1

    def default_refine(self, algorithm):
        """The refinement chosen for the final signature on the design panel
        (:func:`hpcswarm.signatures.refinements.final_refine`)."""
        return final_refine(algorithm)

    def extra_splits(self, y):
        return [(np.arange(y.shape[0], dtype=np.int64), np.empty(0, dtype=np.int64))]

    def held_out(self, task):
        return not task.extra

    def final_signature(self, name, n_genes, folds, extras):
        """The refined subset of the one search on every sample, with the outer folds'
        estimate and stability beside it (:func:`hpcswarm.results.files.signature_of`)."""
        (on_all_samples,) = extras
        return signature_of(name, n_genes, folds, on_all_samples)


PROTOCOLS = {protocol.name: protocol
             for protocol in (Unbiased(), Biased(), Holdout(), FinalSignature())}
"""Every evaluation protocol by its job-file name, the default (``unbiased``) first."""


def protocol_of(name):
    """The :class:`Protocol` called ``name`` (or ``name`` itself when it is one)."""
    if isinstance(name, Protocol):
        return name
    try:
        return PROTOCOLS[name]
    except KeyError:
        raise ParameterError(f"unknown protocol {name!r}; choose one of "
                             f"{', '.join(PROTOCOLS)}") from None


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


def make_tasks(y, protocol, runs, seed, *, folds=10, inner_cv):
    """Every (run, fold) task of a protocol, identical on every rank.

    Parameters
    ----------
    y : ndarray of shape (n_samples,)
    protocol : str or Protocol
        A name of :data:`PROTOCOLS`.
    runs : int or range
        The run numbers (an int n: runs 0 .. n-1); run ``r``'s tasks are the same whatever
        the other runs, so that a job split over allocations (``first_run``) gets the
        tasks of a single one.
    seed : int
        The job seed.
    folds : int, default 10
        Outer folds of ``unbiased``.
    inner_cv : {"loo", "holdout"} or int
        The search's validation scheme: its folds are drawn now, on every task's training
        rows, so that a scheme a training part cannot support fails at once on every rank,
        not in one group.

    Returns
    -------
    list of Task

    Raises
    ------
    ParameterError
        A class too small for the outer or inner scheme.
    """
    y = np.asarray(y)
    protocol = protocol_of(protocol)
    tasks = []
    for run in (range(runs) if isinstance(runs, int) else runs):
        for fold, (train, test) in enumerate(protocol.outer_splits(y, folds, seed, run)):
            key = (run, SEARCH, fold)
            inner = _inner_fold_ids(y[train], inner_cv,
                                    np.random.SeedSequence(seed, spawn_key=key), run, fold)
            tasks.append(Task(len(tasks), run, fold, train, test, key, inner, seed,
                              protocol.name))
    for index, (train, test) in enumerate(protocol.extra_splits(y)):
        key = (0, EXTRA, index)
        inner = _inner_fold_ids(y[train], inner_cv,
                                np.random.SeedSequence(seed, spawn_key=key), -1, index)
        tasks.append(Task(len(tasks), -1, index, train, test, key, inner, seed, protocol.name,
                          extra=True))
    return tasks


@dataclass(frozen=True)
class TaskData:
    """The matrix a task reads, when it is not a :class:`hpcswarm.data.Dataset` (which has
    the same attributes).

    Attributes
    ----------
    X : ndarray of shape (n_samples, n_genes)
    y : ndarray of shape (n_samples,)
    X_genes : ndarray of shape (n_genes, n_samples), optional
        The same values gene-major (a dataset's memory map); None: copied per task.
    values_finite : bool
        The values are known to be finite, so the search does not check them again.
    """

    X: np.ndarray
    y: np.ndarray
    X_genes: np.ndarray = None
    values_finite: bool = False


def run_task(task, data, spec, hooks=None, group=None, resume=None):
    """Select genes on ``task.train`` and test them as ``task``'s protocol says; also two
    baselines.

    The baselines are computed under the same protocol: k-NN on all genes, and PCA + k-NN
    keeping 95% of the variance (Gu et al. 2018), PCA fitted on the training rows only
    (:mod:`hpcswarm.baselines.pca`).

    Parameters
    ----------
    task : Task
    data : Dataset or TaskData
        ``X`` (sample-major, read by the test scores and the baselines), ``y``, ``X_genes``
        (gene-major, what the search reads: pass the dataset's memory map; None: a
        gene-major copy of ``X`` is made for this task) and ``values_finite``.
    spec : SearchSpec
        The search (:mod:`hpcswarm.selection.spec`); its ``preprocess`` steps are fitted on
        ``task.train`` only (all samples in the biased protocol) and applied to
        ``task.test``: the search, the baselines and the test score all see the transformed
        values.
    hooks : SearchHooks, optional
        What each round's end calls (:class:`hpcswarm.swarm.engine.loop.SearchHooks`), passed on
        unchanged to the search.
    group : communicator, optional
        The rank group running the task (``None``: serial).
    resume : dict, optional
        The snapshot of the task's search to continue from.

    The search, the biased all-genes baseline and the PCA baseline validate on the folds
    ``params["cv"]`` draws from the task's seed (those of ``task.inner_fold_ids``).

    Returns
    -------
    TaskRecord
        Genes (indices of the original dataset), fitness, test and baseline counts (per class
        too, over the labels of the task's rows), history,
        timings, and with ``preprocess`` the fitted steps; ``front`` (the search's Pareto
        front of inner accuracy and size, each point with its test counts, computed after
        the search, when the task has held-out rows); with a refinement, ``refined`` (its
        genes, inner and test counts).
    """
    started = time.perf_counter()
    seed = task.seed_sequence(task.job_seed)
    with _training_view(data, task, spec, seed, group) as view:
        result = view.search(spec, seed, comm=group, hooks=hooks, resume=resume)
        if hooks is not None and hooks.phase is not None:
            hooks.phase("baselines and test", None)
        if protocol_of(task.protocol).held_out(task):
            held_out = tester = HeldOut(data, task, view, spec.params["k"])
            scores = held_out.scores(result.mask)
        else:
            held_out, tester = None, InnerTest(view, spec, seed)
            scores = _inner_scores(data, task, view, result, spec, seed, tester)
        return _task_record(task, result, scores, held_out, tester, view.fitted,
                            time.perf_counter() - started)


def _training_view(data, task, spec, seed, group):
    """The :class:`~hpcswarm.selection.prepare.TrainingView` of ``task`` on ``data``
    (without preprocessing, the training columns of ``data.X_genes``, finite when
    ``data.values_finite`` says so; with it, one copy per node of the ranks of ``group``),
    its search's folds those the task drew when it was made (:attr:`Task.inner_fold_ids`,
    from the same ``seed``): not drawn again. The task frees it when it ends."""
    view = prepare(data.X, data.y, spec.preprocess, X_genes=data.X_genes, samples=task.train,
                   finite=data.values_finite, comm=group)
    view.validation(spec.params, seed, ids=task.inner_fold_ids)
    return view


class HeldOut:
    """A task's held-out test: k-NN trained on ``task.train``, tested on ``task.test``
    (both transformed by the fitted preprocessing, if any)."""

    def __init__(self, data, task, view, k):
        X_test = np.asarray(data.X[task.test])
        self.X_test = X_test if view.fitted is None else view.fitted.transform(X_test)
        self.X_train = view.sample_rows(data.X, task.train)
        self.y_train, self.y_test, self.k = view.y, data.y[task.test], k

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


class InnerTest:
    """The "test" of a task without held-out rows: the inner cross-validation of its search
    on the task's own folds (Tran et al. 2016, Experiment I), the search's draw
    (:meth:`~hpcswarm.selection.prepare.TrainingView.validation`), counted per class too (the
    test's balanced accuracy); the counts of the search's own subset are its fitness's."""

    def __init__(self, view, spec, seed):
        self.scorer = make_scorer(view.genes, view.y, k=spec.params["k"],
                                  folds=view.validation(spec.params, seed), device=spec.device,
                                  class_counts=True)

    def score(self, genes):
        """Inner counts of the subset ``genes`` (indices of the training view's genes)."""
        mask = np.zeros(self.scorer.n_genes, dtype=bool)
        mask[genes] = True
        return self.scorer.score(mask)


def _inner_scores(data, task, view, result, spec, seed, inner):
    """The ``(test, all genes, PCA)`` scores of a task without held-out rows: inner
    cross-validation on the task's own folds (:class:`InnerTest`), the PCA baseline's too."""
    all_genes = np.ones(view.genes.n_genes, dtype=bool)
    rows = view.sample_rows(data.X, task.train)
    folds = folds_from_ids(view.validation(spec.params, seed))
    return (inner.score(result.genes), inner.scorer.score(all_genes),
            pca_knn_cv(rows, view.y, spec.params["k"], folds=folds))


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


def _refined_record(refined, tester, fitted):
    """The refined subset with its inner and test counts (its inner counts when biased),
    the test's per class too (``tester``: :class:`HeldOut` or :class:`InnerTest`)."""
    if refined is None:
        return None
    counts = tester.score(refined.genes)
    return RefinedSubset(refined.method, _original(fitted, refined.genes),
                         _original(fitted, refined.removed), int(refined.correct),
                         int(refined.total), int(counts.correct), int(counts.total),
                         refined.frequency, counts.class_correct, counts.class_total)


def _task_record(task, result, scores, held_out, tester, fitted, seconds):
    """The :class:`~hpcswarm.store.records.TaskRecord` of a task (see :func:`run_task`)."""
    test, baseline, pca = scores
    last = result.history[-1]
    return TaskRecord(
        run=task.run, fold=task.fold, spawn_key=tuple(task.spawn_key),
        genes=_original(fitted, result.genes), train_fitness=float(result.fitness),
        train_correct=int(result.extra["score"]["correct"]),
        train_total=int(result.extra["score"]["total"]),
        test_correct=int(test.correct), test_total=int(test.total),
        test_class_correct=test.class_correct, test_class_total=test.class_total,
        baseline_correct=int(baseline.correct), baseline_total=int(baseline.total),
        baseline_class_correct=baseline.class_correct,
        baseline_class_total=baseline.class_total,
        pca_correct=int(pca.correct), pca_total=int(pca.total),
        pca_class_correct=pca.score.class_correct, pca_class_total=pca.score.class_total,
        pca_components=float(np.mean(pca.n_components)),
        evaluations=int(last["evaluations"]), archive_hits=int(last["archive_hits"]),
        seconds=seconds, history=History.from_rows(result.history), extra=result.extra,
        front=_front_records(result.front, held_out, fitted),
        refined=_refined_record(result.refined, tester, fitted),
        train_index=np.asarray(task.train, dtype=np.int64),
        test_index=np.asarray(task.test, dtype=np.int64),
        preprocessing=None if fitted is None else fitted.record())
