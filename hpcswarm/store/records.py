"""Typed results: a task's record, its Pareto front, its refined subset and its history.

The bottom of the house (numpy and the standard library, plus :mod:`hpcswarm.store.encoding` and
:mod:`hpcswarm.errors`): the protocols produce these records; the results file, the JSON
summary, the checkpoint, the progress reporter and the report read them, so reading results
never loads the fitness engine or the search (pymoo's ``Result``, anndata's IO registry).

Encodings, both to and from the existing layout:

- HDF5: :meth:`TaskRecord.to_hdf5` writes the group ``/runs/run-RRR/fold-FF`` of a results
  file (attributes run, fold, spawn_key, group, extra and preprocessing as JSON; datasets
  selected_genes, train_index, test_index, history with its ``columns``, refined_genes,
  refined_removed and (refinements by subsample searches) refined_frequency, the test counts
  per class test_class_correct and test_class_total (and refined_test_class_correct,
  refined_test_class_total, and the baselines' baseline_class_correct, baseline_class_total,
  pca_class_correct, pca_class_total), and the ``front`` group); :meth:`TaskRecord.from_hdf5`
  reads it back with the task's row of the ``/tasks`` table, which holds the counts. A task
  group of encoding-version 0.1.0 has no counts per class, one of 0.2.0 none of the
  baselines: they read as absent.
  Every array is read through :func:`hpcswarm.store.reading.checked_read`: its declared
  length is checked against the dataset's genes and samples (when the reader knows them)
  and the memory before it is read.
- JSON: :meth:`TaskRecord.as_json` gives plain values (lists, numbers, strings);
  :meth:`TaskRecord.from_json` reads them, and also the plain dict a task result was before
  records existed (a checkpoint written then).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Mapping, Sequence

import numpy as np

from hpcswarm.store.encoding import GROUP_ENCODING, finite, json_text, tag, write_array
from hpcswarm.store.reading import checked_read, parse_json

HISTORY_FIELDS = (
    "iteration",
    "best_fitness",
    "best_size",
    "mean_size",
    "new_subsets",
    "evaluations",
    "archive_hits",
    "seconds",
)
"""Keys of a history row: the round; the best subset's fitness and size; the mean size of the
current particles; distinct subsets met for the first time this round (swarm and local
search); evaluations computed so far and archive hits so far (both cumulative, counted by the
search in a rank-invariant way); wall seconds since the run started. Every key but
``seconds`` is identical whatever the number of ranks."""

BIAS_NOTE = ("optimistically biased: genes were selected on all samples and the accuracy is "
             "the inner cross-validation accuracy of the selection itself (Ambroise & "
             "McLachlan 2002; Tran et al. 2016, Experiment I)")
"""The warning every biased result carries."""

PREPROCESS_BIAS_NOTE = ("; the in-fold preprocessing (scaling, gene filters) was fitted on all "
                        "samples too")
"""Added to the bias note of a biased job with a ``[preprocess]`` table."""

SEARCH_ENCODING = ("hpcswarm-search-result", "0.1.0")
"""The JSON document of one search (``run --data ... --output FILE.json``)."""

WORST_FITNESS = -2.0
"""Fitness of the empty subset.

PSO-LSRG resets gbest to the empty subset (Tran et al. 2016, Sect. 3, after Chuang et al.
2008), so every non-empty subset must beat it: every objective takes values in [-1, 1] on
non-empty subsets, and -2.0 lies strictly below while staying finite and JSON-safe. Here, at
the bottom, because a stored fitness is checked against it on read
(:mod:`hpcswarm.store.figures`) without loading the engine.
"""

FRONT_ENCODING = ("hpcswarm-front", "0.1.0")
TASK_ENCODING = ("hpcswarm-task", "0.3.0")
"""0.2.0 added the test counts per class (read as absent from 0.1.0 groups), 0.3.0 those of
the all-genes and PCA-kNN baselines (read as absent from 0.1.0 and 0.2.0 groups)."""

FRONT_FIELDS = ("size", "fitness", "train_correct", "train_total", "test_correct",
                "test_total")
"""Per-point values of a task's front (``/runs/.../front``), besides the genes."""


def balanced_accuracy(class_correct: Any, class_total: Any) -> Any:
    """The mean over classes of the recall, from integer counts per class.

    scikit-learn's ``balanced_accuracy_score`` (Brodersen et al. 2010; the fitness of
    Tran, Xue and Zhang 2019, VLPSO): ``(1 / C) sum_c correct_c / total_c`` over the ``C``
    classes that have held-out samples. A class with no held-out sample has no recall and
    does not count, as scikit-learn ignores (and warns about) a class of the predictions
    that has no true sample. The ratios are added one class after the other, in class
    order, so that the same counts give the same bits for one subset and for the rows of an
    array alike, whatever split (ranks, shards, GPUs) summed the counts.

    Parameters
    ----------
    class_correct : array-like of int of shape (..., n_classes)
        Correct predictions among the held-out samples of each class.
    class_total : array-like of int of shape (n_classes,)
        Held-out samples of each class; at least one class must have some.

    Returns
    -------
    float or ndarray of float64 of shape (...)
    """
    class_correct = np.asarray(class_correct, dtype=np.int64)
    class_total = np.asarray(class_total, dtype=np.int64)
    present = np.flatnonzero(class_total > 0)
    recall_sum = np.zeros(class_correct.shape[:-1])
    for c in present:
        recall_sum = recall_sum + class_correct[..., c] / class_total[c]
    return recall_sum / present.size


def _balanced_or_none(class_correct: tuple, class_total: tuple) -> float | None:
    """:func:`balanced_accuracy` of counts per class, None when there are none."""
    return float(balanced_accuracy(class_correct, class_total)) if class_total else None


def _counts(values: Any) -> tuple:
    """Counts per class as a tuple of int (empty: not counted)."""
    return tuple(int(v) for v in np.asarray(values, dtype=np.int64).reshape(-1))


def _same(a: Any, b: Any) -> bool:
    """Equality of record values, arrays compared by shape and elements."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.array_equal(np.asarray(a), np.asarray(b))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return a == b


class _Record:
    """Field-by-field equality for frozen dataclasses holding arrays (unhashable)."""

    __hash__ = None

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return all(_same(getattr(self, f.name), getattr(other, f.name)) for f in fields(self))


def _genes(values: Any) -> np.ndarray:
    return np.asarray(values, dtype=np.int64).reshape(-1)



def _at_most(bound: int | None) -> range | None:
    """The lengths an array of distinct indices below ``bound`` may have (None: unknown)."""
    return None if bound is None else range(int(bound) + 1)


def _read(group: Any, name: str, shape: tuple, kinds: str) -> np.ndarray:
    """The dataset ``name`` of ``group``, read once its declared shape and type are found
    allowed (:func:`~hpcswarm.store.reading.checked_read`)."""
    return checked_read(group[name], f"'{group.name}/{name}'", shape, kinds)


@dataclass(frozen=True, eq=False)
class History(_Record):
    """A search's rounds: one row per round, one column per name of ``columns``.

    Attributes
    ----------
    columns : tuple of str
        :data:`HISTORY_FIELDS` for what this version writes (a results file keeps its own).
    values : ndarray of float64 of shape (n_rounds, len(columns))
    """

    columns: tuple
    values: np.ndarray

    @classmethod
    def from_rows(cls, rows: Sequence[Mapping[str, float]],
                  columns: Sequence[str] = HISTORY_FIELDS) -> History:
        """The history of the search's rows (dicts with the keys ``columns``)."""
        values = np.array([[row[k] for k in columns] for row in rows], dtype=float)
        return cls(tuple(columns), values.reshape(-1, len(columns)))

    def column(self, name: str) -> np.ndarray:
        """The values of column ``name`` per round."""
        return self.values[:, self.columns.index(name)]

    @property
    def last(self) -> dict:
        """The last round as a dict of column -> float."""
        return dict(zip(self.columns, self.values[-1].tolist()))

    def rows(self) -> list:
        """Every round as a dict of column -> float."""
        return [dict(zip(self.columns, row)) for row in self.values.tolist()]

    def without(self, name: str) -> History:
        """The history without column ``name`` (e.g. the wall ``seconds``)."""
        keep = [i for i, column in enumerate(self.columns) if column != name]
        return History(tuple(self.columns[i] for i in keep), self.values[:, keep])


@dataclass(frozen=True, eq=False)
class FrontPoint(_Record):
    """A point of a search's Pareto front of (inner accuracy, size) (Tran et al. 2016, Sect.
    4.6 report accuracy and size together), with its test counts.

    Attributes
    ----------
    genes : ndarray of int64
        Indices in the dataset.
    fitness : float
        The search's fitness of the subset.
    train_correct, train_total : int
        Inner cross-validation counts.
    test_correct, test_total : int
        Held-out counts; -1 when there is no held-out data (biased protocol, one search).
    """

    genes: np.ndarray
    fitness: float
    train_correct: int
    train_total: int
    test_correct: int = -1
    test_total: int = -1

    @property
    def size(self) -> int:
        return int(self.genes.size)

    @property
    def inner_accuracy(self) -> float:
        return self.train_correct / self.train_total

    @property
    def test_accuracy(self) -> float | None:
        """Held-out accuracy; None without held-out data."""
        return self.test_correct / self.test_total if self.test_total > 0 else None

    def as_json(self) -> dict:
        return finite({"genes": self.genes.tolist(), "fitness": self.fitness,
                       "train_correct": self.train_correct, "train_total": self.train_total,
                       "test_correct": self.test_correct, "test_total": self.test_total})

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> FrontPoint:
        return cls(_genes(value["genes"]), float(value["fitness"]), int(value["train_correct"]),
                   int(value["train_total"]), int(value["test_correct"]),
                   int(value["test_total"]))


@dataclass(frozen=True, eq=False)
class RefinedSubset(_Record):
    """The subset a refinement left (backward elimination after the search, Tran et al. 2016
    Sect. 3's local search run to a fixed point), with its inner and test counts.

    Attributes
    ----------
    method : str
        The refinement (a value of ``refine``).
    genes, removed : ndarray of int64
        Indices in the dataset of the genes kept and of those removed.
    train_correct, train_total, test_correct, test_total : int
        Inner and held-out counts (the test counts are the inner ones when biased).
    frequency : ndarray of float64 or None
        Per gene of ``genes``, the fraction of the subsample searches that kept it
        (:mod:`hpcswarm.signatures.subsample`); None for the other refinements.
    test_class_correct, test_class_total : tuple of int
        The test counts per class (empty where not counted: records of earlier versions).
    """

    method: str
    genes: np.ndarray
    removed: np.ndarray
    train_correct: int
    train_total: int
    test_correct: int
    test_total: int
    frequency: np.ndarray | None = None
    test_class_correct: tuple = ()
    test_class_total: tuple = ()

    @property
    def size(self) -> int:
        return int(self.genes.size)

    @property
    def test_accuracy(self) -> float:
        return self.test_correct / self.test_total

    @property
    def test_balanced_accuracy(self) -> float | None:
        """Test balanced accuracy (:func:`balanced_accuracy`); None without class counts."""
        return _balanced_or_none(self.test_class_correct, self.test_class_total)

    def as_json(self) -> dict:
        return {"method": self.method, "genes": self.genes.tolist(),
                "removed": self.removed.tolist(), "train_correct": self.train_correct,
                "train_total": self.train_total, "test_correct": self.test_correct,
                "test_total": self.test_total} | (
                    {} if self.frequency is None else {"frequency": self.frequency.tolist()}) | (
                    {} if not self.test_class_total else {
                        "test_class_correct": list(self.test_class_correct),
                        "test_class_total": list(self.test_class_total)})

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> RefinedSubset:
        frequency = value.get("frequency")
        return cls(str(value["method"]), _genes(value["genes"]), _genes(value["removed"]),
                   *(int(value[k]) for k in ("train_correct", "train_total", "test_correct",
                                             "test_total")),
                   None if frequency is None else np.asarray(frequency, dtype=np.float64),
                   _counts(value.get("test_class_correct", ())),
                   _counts(value.get("test_class_total", ())))


_COUNTS = ("train_correct", "train_total", "test_correct", "test_total", "baseline_correct",
           "baseline_total", "pca_correct", "pca_total", "evaluations", "archive_hits")

_CLASS_COUNTED = ("test", "baseline", "pca")
"""The prefixes of a record's counts per class: its test, the all-genes and PCA baselines."""
_CLASS_COUNTS = tuple(f"{prefix}_class_{what}" for prefix in _CLASS_COUNTED
                      for what in ("correct", "total"))
"""The record's fields of counts per class, as its JSON and HDF5 encodings name them."""


@dataclass(frozen=True, eq=False)
class TaskRecord(_Record):
    """The result of one (run, fold) task of a protocol.

    Attributes
    ----------
    run, fold : int
    spawn_key : tuple of int
        Spawn key of the search's seed under the job seed.
    genes : ndarray of int64
        The selected genes (indices of the dataset).
    train_fitness : float
        The search's fitness of ``genes``.
    train_correct, train_total : int
        Inner cross-validation counts of ``genes``.
    test_correct, test_total : int
        Held-out counts (the inner counts for the biased protocol).
    test_class_correct, test_class_total : tuple of int
        The same per class of the labels (class codes in sorted order), for the test's
        balanced accuracy; empty where not counted (records of earlier versions).
    baseline_correct, baseline_total : int
        The k-NN on all genes under the same protocol.
    pca_correct, pca_total : int
        PCA + k-NN keeping 95 % of the variance (Gu et al. 2018).
    baseline_class_correct, baseline_class_total, pca_class_correct, pca_class_total : tuple of int
        The two baselines' counts per class, as ``test_class_correct`` and
        ``test_class_total``; empty where not counted (records of earlier versions).
    pca_components : float
        Mean number of principal components kept.
    evaluations, archive_hits : int
        The search's computed evaluations and archive hits.
    seconds : float
        Wall time of the task.
    history : History
    extra : dict
        The search's extra values (plain JSON values).
    front : tuple of FrontPoint
        The search's Pareto front in increasing size (empty for files without one).
    refined : RefinedSubset or None
    train_index, test_index : ndarray of int64
        The task's training and held-out rows.
    preprocessing : list or None
        The fitted in-fold preprocessing steps (their plain record), if any.
    group : int
        The rank group that ran the task (set by the job, which knows it).
    """

    run: int
    fold: int
    spawn_key: tuple
    genes: np.ndarray
    train_fitness: float
    train_correct: int
    train_total: int
    test_correct: int
    test_total: int
    baseline_correct: int
    baseline_total: int
    pca_correct: int
    pca_total: int
    pca_components: float
    evaluations: int
    archive_hits: int
    seconds: float
    history: History
    extra: dict
    front: tuple
    refined: RefinedSubset | None
    train_index: np.ndarray
    test_index: np.ndarray
    preprocessing: list | None = None
    group: int = 0
    test_class_correct: tuple = ()
    test_class_total: tuple = ()
    baseline_class_correct: tuple = ()
    baseline_class_total: tuple = ()
    pca_class_correct: tuple = ()
    pca_class_total: tuple = ()

    @property
    def test_accuracy(self) -> float:
        return self.test_correct / self.test_total

    @property
    def test_balanced_accuracy(self) -> float | None:
        """Test balanced accuracy (:func:`balanced_accuracy`); None without class counts."""
        return _balanced_or_none(self.test_class_correct, self.test_class_total)

    @property
    def subset_size(self) -> int:
        return len(self.genes)

    @property
    def baseline_accuracy(self) -> float:
        """The all-genes baseline's accuracy."""
        return self.baseline_correct / self.baseline_total

    @property
    def pca_accuracy(self) -> float:
        """The PCA-kNN baseline's accuracy."""
        return self.pca_correct / self.pca_total

    @property
    def baseline_balanced_accuracy(self) -> float | None:
        """The all-genes baseline's balanced accuracy; None without class counts."""
        return _balanced_or_none(self.baseline_class_correct, self.baseline_class_total)

    @property
    def pca_balanced_accuracy(self) -> float | None:
        """The PCA-kNN baseline's balanced accuracy; None without class counts."""
        return _balanced_or_none(self.pca_class_correct, self.pca_class_total)

    # -------------------------------------------------------------- JSON
    def as_json(self) -> dict:
        """Plain JSON values (non-finite floats as None, :func:`hpcswarm.store.encoding.finite`)."""
        value = {f.name: getattr(self, f.name) for f in fields(self)}
        value.update(spawn_key=list(self.spawn_key), genes=self.genes.tolist(),
                     history={"columns": list(self.history.columns),
                              "values": self.history.values.tolist()},
                     front=[p.as_json() for p in self.front],
                     refined=None if self.refined is None else self.refined.as_json(),
                     train_index=self.train_index.tolist(),
                     test_index=self.test_index.tolist(),
                     **{name: list(getattr(self, name)) for name in _CLASS_COUNTS})
        return finite(value)

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> TaskRecord:
        """A record from :meth:`as_json`'s values, or from the plain dict a task result was
        before records (history as a list of rows, no indices: empty ones)."""
        history = value["history"]
        if isinstance(history, Mapping):
            history = History(tuple(history["columns"]),
                              np.array(history["values"], dtype=float).reshape(
                                  -1, len(history["columns"])))
        elif not isinstance(history, History):
            history = History.from_rows(history)
        refined = value.get("refined")
        return cls(
            run=int(value["run"]), fold=int(value["fold"]),
            spawn_key=tuple(int(k) for k in value["spawn_key"]), genes=_genes(value["genes"]),
            train_fitness=float(value["train_fitness"]),
            **{k: int(value[k]) for k in _COUNTS},
            pca_components=float(value["pca_components"]), seconds=float(value["seconds"]),
            history=history, extra=dict(value["extra"]),
            front=tuple(p if isinstance(p, FrontPoint) else FrontPoint.from_json(p)
                        for p in value.get("front") or ()),
            refined=(None if refined is None else refined if isinstance(refined, RefinedSubset)
                     else RefinedSubset.from_json(refined)),
            train_index=_genes(value.get("train_index", ())),
            test_index=_genes(value.get("test_index", ())),
            preprocessing=value.get("preprocessing"), group=int(value.get("group", 0)),
            **{name: _counts(value.get(name, ())) for name in _CLASS_COUNTS})

    # -------------------------------------------------------------- HDF5
    def to_hdf5(self, runs: Any) -> Any:
        """Write the group ``run-RRR/fold-FF`` of this task under ``runs`` (an h5py group);
        the counts go to the ``/tasks`` table, not here. Returns the task's group."""
        run_name = f"run-{self.run:03d}"
        if run_name not in runs:
            tag(runs.create_group(run_name), GROUP_ENCODING)
        return self.write_hdf5(runs[run_name].create_group(f"fold-{self.fold:02d}"))

    def write_hdf5(self, task: Any) -> Any:
        """Write this task's attributes and datasets into ``task`` (a new h5py group, which
        :meth:`from_hdf5` reads back; a checkpoint keeps a finished task so). Returns it."""
        tag(task, TASK_ENCODING)
        task.attrs["run"], task.attrs["fold"] = self.run, self.fold
        task.attrs["spawn_key"] = np.array(self.spawn_key, dtype=np.int64)
        task.attrs["group"] = self.group
        task.attrs["extra"] = json_text(self.extra)
        if self.preprocessing is not None:
            task.attrs["preprocessing"] = json_text(self.preprocessing)
        write_array(task, "selected_genes", _genes(self.genes))
        write_array(task, "train_index", _genes(self.train_index))
        write_array(task, "test_index", _genes(self.test_index))
        write_array(task, "history", self.history.values)
        task["history"].attrs["columns"] = list(self.history.columns)
        write_front(task, self.front)
        for prefix in _CLASS_COUNTED:
            _class_counts(task, prefix, getattr(self, f"{prefix}_class_correct"),
                          getattr(self, f"{prefix}_class_total"))
        if self.refined is not None:
            write_array(task, "refined_genes", _genes(self.refined.genes))
            write_array(task, "refined_removed", _genes(self.refined.removed))
            if self.refined.frequency is not None:
                write_array(task, "refined_frequency",
                            np.asarray(self.refined.frequency, dtype=np.float64))
            _class_counts(task, "refined_test", self.refined.test_class_correct,
                          self.refined.test_class_total)
        return task

    @classmethod
    def from_hdf5(cls, task: Any, row: Mapping[str, Any], refine: str = "",
                  n_genes: int | None = None, n_samples: int | None = None) -> TaskRecord:
        """The record of a task group (:meth:`to_hdf5`) and its row of the ``/tasks`` table
        (a mapping of column -> value; the ``refined_*`` columns with a refinement named
        ``refine``). Columns a file lacks (PCA before it was kept) read as 0; counts per
        class it lacks (before they were kept) as absent.

        ``n_genes`` and ``n_samples`` (those of the dataset, when the reader knows them)
        bound the lengths the gene and sample index arrays (and the counts per class) may
        declare: each is checked, with its type and the memory it needs, before it is read
        (ValueError naming it)."""
        genes, samples = (_at_most(n_genes),), (_at_most(n_samples),)
        refined = None
        if "refined_genes" in task:
            kept = _read(task, "refined_genes", genes, "iu")
            refined = RefinedSubset(
                refine, kept, _read(task, "refined_removed", genes, "iu"),
                *(int(row[f"refined_{k}"]) for k in ("train_correct", "train_total",
                                                     "test_correct", "test_total")),
                _read(task, "refined_frequency", kept.shape, "f")
                if "refined_frequency" in task else None,
                *_read_class_counts(task, "refined_test", n_samples))
        preprocessing = task.attrs.get("preprocessing")
        class_counts = {}
        for prefix in _CLASS_COUNTED:
            (class_counts[f"{prefix}_class_correct"],
             class_counts[f"{prefix}_class_total"]) = _read_class_counts(task, prefix, n_samples)
        return cls(
            run=int(row["run"]), fold=int(row["fold"]),
            spawn_key=tuple(int(k) for k in task.attrs["spawn_key"]),
            genes=_read(task, "selected_genes", genes, "iu"),
            train_fitness=float(row["train_fitness"]),
            **{k: int(row.get(k, 0)) for k in _COUNTS},
            pca_components=float(row.get("pca_components", 0.0)),
            seconds=float(row["seconds"]), history=read_history(task),
            extra=parse_json(_text(task.attrs["extra"])),
            front=tuple(read_front(task, n_genes)),
            refined=refined, train_index=_read(task, "train_index", samples, "iu"),
            test_index=_read(task, "test_index", samples, "iu"),
            preprocessing=None if preprocessing is None else parse_json(_text(preprocessing)),
            group=int(row.get("group", task.attrs["group"])), **class_counts)


def column_value(record: TaskRecord, column: str) -> Any:
    """The value of column ``column`` of the ``/tasks`` table in ``record``'s row: a field or
    property of the record (``test_accuracy``, ``subset_size``...), or, for a column
    ``refined_NAME``, its refined subset's ``NAME`` (``refined_size`` is the subset's size). A
    balanced accuracy that was not counted is None."""
    if column.startswith("refined_"):
        return getattr(record.refined, column[len("refined_"):])
    return getattr(record, column)


def _class_counts(task: Any, prefix: str, class_correct: tuple, class_total: tuple) -> None:
    """Write counts per class as ``{prefix}_class_correct`` and ``{prefix}_class_total``
    (int64) in ``task``, when there are any."""
    if class_total:
        write_array(task, f"{prefix}_class_correct", np.array(class_correct, np.int64))
        write_array(task, f"{prefix}_class_total", np.array(class_total, np.int64))


def _read_class_counts(task: Any, prefix: str, n_samples: int | None = None) -> tuple:
    """``(class_correct, class_total)`` that :func:`_class_counts` wrote, or two empty
    tuples (a group written before they were kept); one count per class, so at most
    ``n_samples`` of each (when known), checked before they are read."""
    if f"{prefix}_class_total" not in task:
        return (), ()
    total = _read(task, f"{prefix}_class_total", (_at_most(n_samples),), "iu")
    return _counts(_read(task, f"{prefix}_class_correct", total.shape, "iu")), _counts(total)


def _text(value: Any) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


def read_history(task: Any) -> History:
    """The history of a task group, with the columns the file names (one per column of its
    values, checked before they are read)."""
    columns = tuple(_text(c) for c in task["history"].attrs["columns"])
    return History(columns, _read(task, "history", (None, len(columns)), "f"))


def write_front(task: Any, front: Sequence[FrontPoint]) -> None:
    """The ``front`` group of a task: one entry per point in increasing size, every point's
    genes one after the other (point i's are ``genes[offsets[i]:offsets[i + 1]]``)."""
    group = task.create_group("front")
    tag(group, FRONT_ENCODING)
    values = {"size": [p.size for p in front]}
    values.update({name: [getattr(p, name) for p in front] for name in FRONT_FIELDS[1:]})
    for name in FRONT_FIELDS:
        write_array(group, name, np.array(values[name], dtype=float if name == "fitness"
                                          else np.int64))
    genes = [_genes(p.genes) for p in front]
    write_array(group, "genes", np.concatenate(genes) if genes else np.zeros(0, dtype=np.int64))
    write_array(group, "offsets", np.cumsum([0] + [g.size for g in genes]).astype(np.int64))


def read_front(task: Any, n_genes: int | None = None) -> list:
    """A task's front from its group (:func:`write_front`); empty for files without one.

    Each array's declared length is checked before it is read: one point per size, so at
    most ``n_genes + 1`` points (when ``n_genes`` is known), ``genes`` as long as the sizes
    add up to, ``offsets`` one more than the points."""
    if "front" not in task:
        return []
    group = task["front"]
    sizes = _read(group, "size", (_at_most(None if n_genes is None else n_genes + 1),), "iu")
    columns = {name: _read(group, name, sizes.shape, "f" if name == "fitness" else "iu")
               for name in FRONT_FIELDS[1:]}
    genes = _read(group, "genes", (int(sizes.sum(dtype=np.int64)),), "iu")
    offsets = _read(group, "offsets", (sizes.size + 1,), "iu")
    return [FrontPoint(genes[offsets[i]:offsets[i + 1]], float(columns["fitness"][i]),
                       *(int(columns[name][i]) for name in FRONT_FIELDS[2:]))
            for i in range(offsets.size - 1)]
