"""Results files of a job (HDF5, written by world rank 0, atomically) and their JSON summary.

Layout (every object carries ``encoding-type`` and ``encoding-version``)::

    /                      "hpcswarm-results"; provenance attributes: job_text, job (JSON),
                           name, algorithm, protocol, biased, bias_note, params (JSON),
                           hpcswarm_version, seed, n_ranks, group_size, n_groups, dataset,
                           dataset_sha256, dataset_source_sha256, total_seconds, created
    /gene_names            (n_genes,) strings
    /class_names           (n_classes,) strings
    /tasks                 "hpcswarm-task-table": one (n_tasks,) column per TASK_COLUMNS
                           (0.2.0 added test_balanced_accuracy and, with a refinement,
                           refined_test_balanced_accuracy; 0.3.0 the baselines'
                           baseline_balanced_accuracy and pca_balanced_accuracy; an
                           earlier table lacks them)
    /runs/run-RRR/fold-FF  "hpcswarm-task" (:meth:`hpcswarm.store.records.TaskRecord.to_hdf5`):
                           attrs run, fold, spawn_key, group, extra (JSON);
                           selected_genes, train_index, test_index (int64),
                           test_class_correct, test_class_total (int64, per class;
                           baseline_class_* and pca_class_* of the baselines the same),
                           history (n_rounds, len(HISTORY_FIELDS)) float64, attr "columns";
                           refined_genes, refined_removed (int64, with a refinement)
    /runs/.../fold-FF/front "hpcswarm-front": the search's Pareto front of (inner accuracy,
                           size), one entry per point in increasing size: size, fitness,
                           train_correct, train_total, test_correct, test_total (-1 when
                           biased), and genes (int64, every point's genes one after the
                           other; point i's are genes[offsets[i]:offsets[i + 1]])

    /final                 "hpcswarm-final-signature" (the final-signature protocol): the
                           signature selected on all samples, its genes' selection frequency
                           over the outer folds, the estimate and stability beside it
                           (:mod:`hpcswarm.signatures.final`)
    /gene_similarity       "hpcswarm-gene-similarity": the genes whose correlations were
                           computed (``genes``) and the pairs of them whose absolute Pearson
                           correlation over all samples reaches the attribute ``threshold``
                           (``first``, ``second``, ``weight``): Sechidis et al.'s matrix C
                           (:func:`hpcswarm.signatures.stability.gene_similarity`); absent when too
                           large to compute

For the biased protocol the ``test_*`` columns hold the inner cross-validation accuracy of
the selected subset on all samples (and ``biased`` is true): there is no held-out data.
With ``refine`` the table gains the :data:`REFINED_COLUMNS` of the refined subsets (root
attribute ``refine``); a report shows them as their own method, ``NAME+prune``.
"""

from collections.abc import Mapping
from dataclasses import dataclass, fields
from datetime import datetime, timezone
from pathlib import Path
from typing import Optional

import h5py
import numpy as np

from hpcswarm.errors import DataError
from hpcswarm.signatures.final import FinalSignature, final_signature
from hpcswarm.signatures.refinements import row_label
from hpcswarm.signatures.stability import GeneSimilarity, gene_similarity, stability_summary
from hpcswarm.store.atomic import atomic_hdf5, special_kind
from hpcswarm.store.encoding import (GROUP_ENCODING, STRINGS_ENCODING, check_tag, damaged_file,
                                     decode_value, finite, json_text, tag, tags, write_array)
from hpcswarm.store.reading import checked_read, parse_json
from hpcswarm.store.figures import stored_task_problem
from hpcswarm.store.records import (BIAS_NOTE, SEARCH_ENCODING, WORST_FITNESS, FrontPoint,
                                    History, TaskRecord, column_value)
from hpcswarm.store.settings import with_later_params

ENCODING = ("hpcswarm-results", "0.1.0")
SUMMARY_ENCODING = ("hpcswarm-results-summary", "0.3.0")
"""0.2.0 added ``balanced_accuracy`` (the summary's and each refined row's), 0.3.0
``all_genes_balanced_accuracy`` and ``pca_knn_balanced_accuracy``."""
_TABLE = ("hpcswarm-task-table", "0.3.0")
_SIMILARITY = ("hpcswarm-gene-similarity", "0.1.0")
_STR = h5py.string_dtype("utf-8")

TASK_COLUMNS = (
    "run", "fold", "group", "train_fitness", "train_correct", "train_total", "test_correct",
    "test_total", "test_accuracy", "test_balanced_accuracy", "subset_size", "seconds",
    "evaluations", "archive_hits",
    "baseline_correct", "baseline_total", "baseline_accuracy", "baseline_balanced_accuracy",
    "pca_correct", "pca_total", "pca_accuracy", "pca_balanced_accuracy", "pca_components",
)
"""Columns of ``/tasks``, one row per (run, fold) in task order. ``test_balanced_accuracy``
is the mean recall over the classes of the test predictions
(:func:`~hpcswarm.store.records.balanced_accuracy`), NaN where the task kept no counts per
class; ``baseline_balanced_accuracy`` and ``pca_balanced_accuracy`` the same of the
all-genes and PCA-kNN baselines."""

REFINED_COLUMNS = ("refined_size", "refined_train_correct", "refined_train_total",
                   "refined_test_correct", "refined_test_total", "refined_test_accuracy",
                   "refined_test_balanced_accuracy")
"""Columns of ``/tasks`` added by a refinement (``refine = "prune"``)."""

_INT_COLUMNS = {"run", "fold", "group", "train_correct", "train_total", "test_correct",
                "test_total", "subset_size", "evaluations", "archive_hits",
                "baseline_correct", "baseline_total", "pca_correct", "pca_total",
                "refined_size", "refined_train_correct", "refined_train_total",
                "refined_test_correct", "refined_test_total"}


@dataclass(eq=False)
class TaskTable(Mapping):
    """The ``/tasks`` table: one ndarray of shape (n_tasks,) per column, in task order.

    Every column of :data:`TASK_COLUMNS` and :data:`REFINED_COLUMNS` is a field; a column
    the results do not hold is None (a single search's document has no baseline, PCA or
    group columns; only a refined job has the refined ones). The table also reads as the
    mapping of the columns it holds (``table["run"]``, ``"refined_size" in table``), which
    is how a column named at run time (``f"{prefix}_correct"``) is read. A file written
    before a column existed (``test_balanced_accuracy``, ``baseline_balanced_accuracy``,
    ``pca_balanced_accuracy``) reads it as None.
    """

    run: Optional[np.ndarray] = None
    fold: Optional[np.ndarray] = None
    group: Optional[np.ndarray] = None
    train_fitness: Optional[np.ndarray] = None
    train_correct: Optional[np.ndarray] = None
    train_total: Optional[np.ndarray] = None
    test_correct: Optional[np.ndarray] = None
    test_total: Optional[np.ndarray] = None
    test_accuracy: Optional[np.ndarray] = None
    test_balanced_accuracy: Optional[np.ndarray] = None
    subset_size: Optional[np.ndarray] = None
    seconds: Optional[np.ndarray] = None
    evaluations: Optional[np.ndarray] = None
    archive_hits: Optional[np.ndarray] = None
    baseline_correct: Optional[np.ndarray] = None
    baseline_total: Optional[np.ndarray] = None
    baseline_accuracy: Optional[np.ndarray] = None
    baseline_balanced_accuracy: Optional[np.ndarray] = None
    pca_correct: Optional[np.ndarray] = None
    pca_total: Optional[np.ndarray] = None
    pca_accuracy: Optional[np.ndarray] = None
    pca_balanced_accuracy: Optional[np.ndarray] = None
    pca_components: Optional[np.ndarray] = None
    refined_size: Optional[np.ndarray] = None
    refined_train_correct: Optional[np.ndarray] = None
    refined_train_total: Optional[np.ndarray] = None
    refined_test_correct: Optional[np.ndarray] = None
    refined_test_total: Optional[np.ndarray] = None
    refined_test_accuracy: Optional[np.ndarray] = None
    refined_test_balanced_accuracy: Optional[np.ndarray] = None

    def __getitem__(self, column):
        value = getattr(self, column) if column in _TABLE_COLUMNS else None
        if value is None:
            raise KeyError(column)
        return value

    def __iter__(self):
        return (column for column in _TABLE_COLUMNS if getattr(self, column) is not None)

    def __len__(self):
        return sum(1 for _ in self)

    @classmethod
    def concatenate(cls, tables):
        """The rows of ``tables`` one after the other (the columns of the first)."""
        return cls(**{column: np.concatenate([t[column] for t in tables])
                      for column in tables[0]})


_TABLE_COLUMNS = tuple(f.name for f in fields(TaskTable))
"""The fields of :class:`TaskTable`: :data:`TASK_COLUMNS`, then :data:`REFINED_COLUMNS`."""



def _strings(parent, name, items):
    tag(parent.create_dataset(name, data=np.array(list(items), dtype=object), dtype=_STR),
         STRINGS_ENCODING)


def task_table(results):
    """The ``/tasks`` columns (:class:`TaskTable`) from in-memory task records
    (:class:`~hpcswarm.store.records.TaskRecord`)."""
    table = {}
    columns = TASK_COLUMNS + (REFINED_COLUMNS if results and results[0].refined is not None
                              else ())
    for column in columns:
        # a balanced accuracy that was not counted (None) is NaN in its float column
        table[column] = np.array([column_value(r, column) for r in results],
                                 dtype=np.int64 if column in _INT_COLUMNS else float)
    return TaskTable(**table)


def job_similarity(dataset):
    """Sechidis et al.'s gene similarity of ``dataset``'s genes
    (:func:`hpcswarm.signatures.stability.gene_similarity`), or None when too large."""
    return gene_similarity(dataset.X)


@dataclass
class JobRecords:
    """What a job computed, as its results file and JSON summary hold it.

    Attributes
    ----------
    tasks : list of TaskRecord
        Task records in task order (:func:`hpcswarm.run.protocols.run_task`, with the ``group``
        that ran each).
    final : FinalSignature or None
        The final signature (:mod:`hpcswarm.signatures.final`), written as ``/final``.
    similarity : GeneSimilarity or None
        The correlated gene pairs (:func:`job_similarity`), written as ``/gene_similarity``.
    """

    tasks: list
    final: FinalSignature = None
    similarity: GeneSimilarity = None


def write_results(job, dataset, records, provenance, overwrite=False):
    """Write the results file of ``job`` under a temporary name, then rename it to
    ``job.output``.

    Parameters
    ----------
    job : hpcswarm.run.jobfile.Job
    dataset : Dataset
    records : JobRecords
    provenance : dict
        Version, seed, rank count, dataset SHA-256, timings.
    overwrite : bool
    """
    results = records.tasks
    with atomic_hdf5(job.output, overwrite=overwrite, in_memory=True) as f:
        tag(f, ENCODING)
        biased = job.biased
        attrs = {
            "job_text": job.text, "job": json_text(job.as_dict()), "name": job.name,
            "algorithm": job.spec.algorithm, "protocol": job.protocol, "biased": biased,
            "bias_note": job.protocol_note, "params": json_text(job.spec.params),
            "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "n_runs": job.runs, "n_samples": dataset.n_samples,
            "refine": job.spec.refine,
        }
        attrs.update({k: ("" if v is None else v) for k, v in provenance.items()})
        for key, value in attrs.items():
            f.attrs[key] = value
        _strings(f, "gene_names", dataset.gene_names)
        _strings(f, "class_names", dataset.class_names)
        table = f.create_group("tasks")
        tag(table, _TABLE)
        for column, values in task_table(results).items():
            write_array(table, column, values)
        runs = f.create_group("runs")
        tag(runs, GROUP_ENCODING)
        for result in results:
            result.to_hdf5(runs)
        if records.final is not None:
            records.final.to_hdf5(f)
        if records.similarity is not None:
            _write_similarity(f, records.similarity)


def _write_similarity(f, similarity):
    group = f.create_group("gene_similarity")
    tag(group, _SIMILARITY)
    group.attrs["threshold"] = similarity.threshold
    group.attrs["measure"] = "absolute Pearson correlation over all samples"
    for name in ("genes", "first", "second"):
        write_array(group, name, np.asarray(getattr(similarity, name), dtype=np.int64))
    write_array(group, "weight", np.asarray(similarity.weight, dtype=np.float64))


def _read_similarity(group, path, n_genes):
    """The ``/gene_similarity`` group: at most ``n_genes`` genes and one entry per pair of
    them (``first < second``), each array checked before it is read."""
    check_tag(group, _SIMILARITY, path, "gene similarity")
    genes = checked_read(group["genes"], "'gene_similarity/genes'", (range(n_genes + 1),), "iu")
    pairs = (range(genes.size * (genes.size - 1) // 2 + 1),)
    first = checked_read(group["first"], "'gene_similarity/first'", pairs, "iu")
    second, weight = (checked_read(group[name], f"'gene_similarity/{name}'", first.shape, kind)
                      for name, kind in (("second", "iu"), ("weight", "f")))
    return GeneSimilarity(genes, first, second, weight, float(group.attrs["threshold"]))


# ------------------------------------------------------------------ reading
@dataclass
class MethodResults:
    """A results file as read back (everything the report needs).

    Attributes
    ----------
    path : Path
    attrs : dict
        Root provenance attributes (``job`` and ``params`` decoded from JSON).
    gene_names, class_names : list of str
    table : TaskTable
        The ``/tasks`` columns (a mapping of columns given here is read into one).
    genes : list of ndarray
        Selected genes per task, in task order.
    histories : list of ndarray
        ``(n_rounds, n_fields)`` per task.
    history_columns : list of str
    fronts : list of list of FrontPoint
        Per task, the search's front (:func:`hpcswarm.store.records.read_front`); empty lists for
        files written before fronts were kept.

    Every task is read as its :class:`~hpcswarm.store.records.TaskRecord`
    (:meth:`~hpcswarm.store.records.TaskRecord.from_hdf5`).
    refined_genes : list of ndarray or None
        Per task, the refined subset's genes, when the job had a refinement.
    final : FinalSignature or None
        The final signature (the ``final-signature`` protocol, :mod:`hpcswarm.signatures.final`).
    test_indices : list of ndarray or None
        Per task, its held-out rows: two rows of a report are paired on the tasks that held
        out the same samples (:mod:`hpcswarm.results.significance`). None when not recorded.
    similarity : GeneSimilarity or None
        The correlated gene pairs of ``/gene_similarity`` (Sechidis et al.'s stability).
    train_indices : list of ndarray or None
        Per task, its training rows: two rows of different files are paired only on tasks
        that also trained on the same samples. None when not recorded.
    single_search : bool
        Read from a single search's JSON document (:func:`read_search_document`): one
        search on all samples, under no protocol (``attrs`` has no ``protocol``).
    """

    path: Path
    attrs: dict
    gene_names: list
    class_names: list
    table: TaskTable
    genes: list
    histories: list
    history_columns: list
    fronts: list = None
    refined_genes: list = None
    final: FinalSignature = None
    test_indices: list = None
    similarity: GeneSimilarity = None
    train_indices: list = None
    single_search: bool = False

    def __post_init__(self):
        if not isinstance(self.table, TaskTable):
            self.table = TaskTable(**self.table)

    @property
    def label(self):
        """Method name as shown in reports (the job's ``name``)."""
        return self.attrs.get("name") or self.attrs.get("algorithm")

    @property
    def biased(self):
        return bool(self.attrs.get("biased"))


def read_results(path):
    """Read a results file; DataError if it is missing or not an hpcswarm results file.

    A single search's JSON document (``run --output FILE.json``) reads as a results file of
    one task (:func:`read_search_document`). The ``params`` of a file written before its
    method gained a parameter read with the value it ran with
    (:func:`hpcswarm.store.settings.with_later_params`).
    """
    path = Path(path)
    if not path.is_file():
        kind = special_kind(path)  # a FIFO is never opened: reading it would block
        raise DataError(f"{path}: is {kind}, not a results file" if kind is not None
                        else f"{path}: no such results file")
    if not h5py.is_hdf5(path) and _looks_like_json(path):
        return read_search_document(path)
    try:
        f = h5py.File(path, "r")
    except OSError as exc:
        raise DataError(f"{path}: cannot open as HDF5 ({exc})") from None
    with f, damaged_file(path, "results file"):
        check_tag(f, ENCODING, path, "results file")
        attrs = {k: decode_value(v) for k, v in f.attrs.items()}
        for key in ("job", "params"):
            if isinstance(attrs.get(key), str) and attrs[key]:
                attrs[key] = parse_json(attrs[key])
        attrs = with_later_params(attrs)
        gene_names = [decode_value(v) for v in
                      checked_read(f["gene_names"], "'gene_names'", (None,), "T").tolist()]
        class_names = [decode_value(v) for v in
                       checked_read(f["class_names"], "'class_names'", (None,), "T").tolist()]
        n_genes = len(gene_names)
        n_samples = int(attrs["n_samples"]) if "n_samples" in attrs else None
        table = _read_table(f["tasks"], path, _task_groups(f["runs"]))
        tasks = [TaskRecord.from_hdf5(f["runs"][f"run-{int(run):03d}"][f"fold-{int(fold):02d}"],
                                      {k: v[i] for k, v in table.items()},
                                      attrs.get("refine") or "", n_genes, n_samples)
                 for i, (run, fold) in enumerate(zip(table.run, table.fold))]
        final = FinalSignature.from_hdf5(f["final"], path, n_genes) if "final" in f else None
        similarity = (_read_similarity(f["gene_similarity"], path, n_genes)
                      if "gene_similarity" in f else None)
    _check_gene_columns(path, len(gene_names), tasks, final)
    for i, task in enumerate(tasks):
        problem = stored_task_problem(task, {k: v[i] for k, v in table.items()}, n_genes,
                                      n_samples)
        if problem is not None:
            raise DataError(f"{path}: a damaged results file: run {task.run} fold "
                            f"{task.fold}: {problem}")
    refined = [t.refined.genes for t in tasks if t.refined is not None]
    return MethodResults(path, attrs, gene_names, class_names, table, [t.genes for t in tasks],
                         [t.history.values for t in tasks],
                         list(tasks[-1].history.columns) if tasks else [],
                         [list(t.front) for t in tasks], refined if refined else None, final,
                         [t.test_index for t in tasks], similarity,
                         train_indices=[t.train_index for t in tasks])


def _check_gene_columns(path, n_genes, tasks, final):
    """Refuse a results file whose selections (of a task, its refinement, its front, the
    final signature) name a gene column outside its ``n_genes`` gene names."""
    for task in tasks:
        lists = [("selected genes", task.genes),
                 *([("refined genes", task.refined.genes)] if task.refined is not None else []),
                 *(("front", point.genes) for point in task.front)]
        for what, genes in lists:
            _check_columns(path, f"run {task.run} fold {task.fold}: {what}", genes, n_genes)
    if final is not None:
        for what, genes in (("genes", final.genes), ("search genes", final.search_genes)):
            _check_columns(path, f"the final signature's {what}", genes, n_genes)
        problem = _final_problem(final)
        if problem is not None:
            raise DataError(f"{path}: a damaged results file: the final signature's {problem}")


_ESTIMATE_FIGURES = ("best", "mean", "std", "min", "max")
"""The accuracies of the final signature's estimate (:func:`describe` of the row's runs)."""


def _final_problem(final):
    """What makes the stored figures of a final signature impossible (a phrase naming the
    field), or None: its inner counts, its genes' frequencies and its estimate's accuracies."""
    if not 0 <= final.inner_correct <= final.inner_total or final.inner_total < 1:
        return (f"inner_correct = {final.inner_correct} of inner_total = {final.inner_total} "
                "is no accuracy in [0, 1]")
    for name in ("frequency", "subsample_frequency"):
        values = getattr(final, name)
        if values is not None and not ((values >= 0) & (values <= 1)).all():  # NaN too
            return f"{name} holds values outside [0, 1]"
    for name in _ESTIMATE_FIGURES:
        value = final.estimate.get(name) if isinstance(final.estimate, dict) else None
        if value is not None and not (isinstance(value, (int, float)) and 0 <= value <= 1):
            return f"estimate {name} = {value!r} is no accuracy in [0, 1]"
    return None


def _check_columns(path, where, genes, n_genes):
    genes = np.asarray(genes)
    if genes.size and (genes.min() < 0 or genes.max() >= n_genes):
        raise DataError(f"{path}: a damaged results file: {where} name gene column "
                        f"{int(genes.max() if genes.max() >= n_genes else genes.min())}, "
                        f"outside the {n_genes} genes")


def _task_groups(runs):
    """How many task groups ``/runs`` holds (``run-RRR/fold-FF``), each a row of the table."""
    return sum(len(run) for run in runs.values())


def _read_table(group, path, n_tasks):
    """The :class:`TaskTable` of a ``/tasks`` group, whose columns may hold at most
    ``n_tasks`` rows, all as many (checked before they are read); DataError for a column it
    does not know."""
    unknown = sorted(set(group) - set(_TABLE_COLUMNS))
    if unknown:
        raise DataError(f"{path}: unknown task table column(s) {', '.join(unknown)} (written "
                        f"by another hpcswarm version?)")
    rows, table = (range(n_tasks + 1),), {}
    for column in group:
        table[column] = checked_read(group[column], f"'tasks/{column}'", rows, "iuf")
        rows = table[column].shape
    return TaskTable(**table)


def _looks_like_json(path):
    """Whether ``path`` starts (after white space) with ``{``."""
    with open(path, "rb") as handle:
        return handle.read(64).lstrip()[:1] == b"{"


def read_search_document(path):
    """A single search's JSON document as a :class:`MethodResults` of one task (run 0, fold 0).

    The search selected on all samples: its accuracy is the inner cross-validation accuracy
    of the selection (the biased protocol's figure, flagged so), and there is no all-genes
    baseline. Genes the document does not name (outside the selected and refined subsets) are
    named by their 0-based index.
    """
    path = Path(path)
    try:
        document = parse_json(path.read_text(encoding="utf-8"))
        kind, version = document.get("encoding-type"), str(document.get("encoding-version"))
    except (ValueError, UnicodeDecodeError, AttributeError) as exc:
        raise DataError(f"{path}: not an hpcswarm results file nor a search's JSON "
                        f"({exc})") from None
    if kind == SUMMARY_ENCODING[0]:
        raise DataError(f"{path}: the JSON summary of a job; report reads its results file "
                        f"{document.get('results')}")
    if kind != SEARCH_ENCODING[0]:
        raise DataError(f"{path}: not an hpcswarm results file nor a search's JSON "
                        f"(encoding-type {kind!r}, expected {SEARCH_ENCODING[0]!r})")
    if version.split(".")[0] != SEARCH_ENCODING[1].split(".")[0]:
        raise DataError(f"{path}: search document encoding-version {version!r} is not "
                        f"supported (this hpcswarm reads {SEARCH_ENCODING[1]})")
    _check_search_fields(path, document)
    try:
        return _search_results(path, document)
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise DataError(f"{path}: a damaged search document ({type(exc).__name__}: "
                        f"{exc})") from None


_SEARCH_FIELDS = (
    ("algorithm", str, "a method name"), ("seed", int, "an integer"),
    ("params", dict, "a table of parameters"), ("n_genes_total", int, "an integer"),
    ("selected_genes", list, "a list of gene columns"), ("fitness", (int, float), "a number"),
    ("history", list, "a list of rounds"), ("extra", dict, "a table"),
    ("front", list, "a list of front points"),
    ("data", (str, type(None)), "a dataset or null"),
    ("selected_gene_names", (list, type(None)), "a list of names or null"),
    ("refined", (dict, type(None)), "a table or null"),
)
"""The fields of a search's JSON document that a report reads, with their types."""

_MOST_GENES = 2**24
"""The largest ``n_genes_total`` a search document may give: the report holds arrays of that
length per task, and a results file holds its names, but a document only the number (16.7
million genes, beyond any expression or methylation platform; a damaged number would
otherwise exhaust the memory)."""


def _check_search_fields(path, document):
    """Refuse a search document (``run --output``) whose fields a report reads are missing or
    of the wrong type, or whose gene lists name columns outside the dataset: a
    :class:`DataError` naming the field."""
    def refuse(key, what, value):
        raise DataError(f"{path}: a damaged search document: {key!r} must be {what}, got "
                        f"{value!r:.60}")

    for key, kind, what in _SEARCH_FIELDS:
        value = document.get(key)
        if not isinstance(value, kind) or isinstance(value, bool):
            refuse(key, what, value)
    n_genes = document["n_genes_total"]
    if not 1 <= n_genes <= _MOST_GENES:
        refuse("n_genes_total", f"a gene count in [1, {_MOST_GENES}]", n_genes)
    refined = document.get("refined") or {}
    lists = [("selected_genes", document["selected_genes"]),
             *([("refined.genes", refined.get("genes"))] if refined else []),
             *((f"front[{i}].genes", point.get("genes") if isinstance(point, dict) else point)
               for i, point in enumerate(document["front"]))]
    for key, genes in lists:
        if not (isinstance(genes, list) and all(
                isinstance(g, int) and not isinstance(g, bool) and 0 <= g < n_genes
                for g in genes)):
            refuse(key, f"a list of gene columns in [0, {n_genes})", genes)
    if not document["history"] or not all(isinstance(row, dict) for row in document["history"]):
        refuse("history", "a list of rounds (tables)", document["history"])
    _check_search_figures(document, refuse)


def _is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _check_search_figures(document, refuse):
    """Refuse a search document whose stored figures are impossible: each count of correct
    predictions (the search's score, its refined subset's, its front points') an integer
    between 0 and a total of at least one sample, an accuracy or balanced accuracy in [0, 1]
    (null where not counted), a fitness between the empty subset's and a perfect score."""
    score = document["extra"].get("score")
    counted = [("extra.score", score), *((f"front[{i}]", point)
                                         for i, point in enumerate(document["front"]))]
    if document.get("refined"):
        counted.append(("refined", document["refined"]))
    for key, counts in counted:
        correct, total = ((counts.get("correct"), counts.get("total"))
                          if isinstance(counts, dict) else (None, None))
        if not (isinstance(correct, int) and isinstance(total, int)
                and not isinstance(correct, bool) and 0 <= correct <= total and total >= 1):
            refuse(f"{key}.correct", "a count of correct predictions between 0 and a total "
                   "of at least one sample", counts)
        for name in ("accuracy", "balanced_accuracy"):
            value = counts.get(name)
            if value is not None and not (_is_number(value) and 0 <= value <= 1):
                refuse(f"{key}.{name}", "an accuracy in [0, 1] (or null)", value)
    for key, value in [("fitness", document["fitness"]),
                       *((f"front[{i}].fitness", point.get("fitness"))
                         for i, point in enumerate(document["front"]))]:
        if not (_is_number(value) and WORST_FITNESS <= value <= 1.0):
            refuse(key, f"a fitness in [{WORST_FITNESS}, 1.0]", value)


def _search_results(path, document):
    n_genes = int(document["n_genes_total"])
    names = [str(i) for i in range(n_genes)]
    refined = document.get("refined")
    for genes, named in ((document["selected_genes"], document.get("selected_gene_names")),
                         ((refined or {}).get("genes", []), (refined or {}).get("gene_names"))):
        for gene, name in zip(genes, named or []):
            names[int(gene)] = str(name)
    score = document["extra"]["score"]
    history = History.from_rows(document["history"], tuple(document["history"][0]))
    last = history.last
    correct, total = int(score["correct"]), int(score["total"])
    genes = np.asarray(document["selected_genes"], dtype=np.int64)
    table = {"run": [0], "fold": [0], "group": [0], "train_fitness": [document["fitness"]],
             "train_correct": [correct], "train_total": [total], "test_correct": [correct],
             "test_total": [total], "test_accuracy": [correct / total],
             "test_balanced_accuracy": [score.get("balanced_accuracy", np.nan)],
             "subset_size": [genes.size], "seconds": [last.get("seconds", 0.0)],
             "evaluations": [last.get("evaluations", 0)],
             "archive_hits": [last.get("archive_hits", 0)]}
    if refined is not None:
        table.update(refined_size=[len(refined["genes"])],
                     refined_train_correct=[refined["correct"]],
                     refined_train_total=[refined["total"]],
                     refined_test_correct=[refined["correct"]],
                     refined_test_total=[refined["total"]],
                     refined_test_accuracy=[refined["correct"] / refined["total"]])
    table = TaskTable(**{k: np.array(v, dtype=np.int64 if k in _INT_COLUMNS else float)
                         for k, v in table.items()})
    front = [FrontPoint(np.asarray(p["genes"], dtype=np.int64), float(p["fitness"]),
                        int(p["correct"]), int(p["total"])) for p in document["front"]]
    attrs = {"name": document["algorithm"], "algorithm": document["algorithm"],
             "biased": True, "bias_note": BIAS_NOTE,
             "params": document["params"], "seed": document["seed"],
             "dataset": document.get("data"), "dataset_sha256": None, "n_runs": 1,
             "refine": "" if refined is None else refined["method"]}
    return MethodResults(path, with_later_params(attrs), names, [], table, [genes],
                         [history.values], list(history.columns), [front],
                         None if refined is None
                         else [np.asarray(refined["genes"], dtype=np.int64)],
                         single_search=True)


# ------------------------------------------------------------------ figures
def run_accuracies(table, prefix="test"):
    """Accuracy per run: correct over total across the run's folds (outer CV accuracy).

    ``prefix`` is ``"test"`` (the method), ``"baseline"`` (all genes) or ``"pca"`` (PCA-kNN).
    """
    runs = np.unique(table["run"])
    correct = np.array([table[f"{prefix}_correct"][table["run"] == r].sum() for r in runs])
    total = np.array([table[f"{prefix}_total"][table["run"] == r].sum() for r in runs])
    return correct / total


def task_accuracies(table, prefix="test"):
    """Accuracy per task (``{prefix}_correct / {prefix}_total`` of each (run, fold)), with
    ``prefix`` as in :func:`run_accuracies` (or ``"refined_test"``)."""
    return table[f"{prefix}_correct"] / table[f"{prefix}_total"]


def task_balanced_accuracies(table, prefix="test"):
    """Balanced accuracy per task (the column ``{prefix}_balanced_accuracy``, ``prefix`` as
    in :func:`task_accuracies`), or None when the table has no such column or no task has a
    value (a file or a single search that kept no counts per class)."""
    values = table.get(f"{prefix}_balanced_accuracy")
    if values is None or np.isnan(values).all():
        return None
    return values


def describe_balanced(table, prefix="test"):
    """:func:`describe` of the balanced accuracies per task that were counted
    (:func:`task_balanced_accuracies`), or None when none was."""
    values = task_balanced_accuracies(table, prefix)
    return None if values is None else describe(values[~np.isnan(values)])


def describe(values):
    """best, mean, std (sample, ddof=1; 0 for one value), min, max, n of a 1-D sample."""
    values = np.asarray(values, dtype=float)
    return {"n": int(values.size), "best": float(values.max()), "mean": float(values.mean()),
            "std": float(values.std(ddof=1)) if values.size > 1 else 0.0,
            "min": float(values.min()), "max": float(values.max())}


def gene_frequencies(genes, gene_names, n_tasks, top=10):
    """The ``top`` genes most often selected across tasks (Tran et al. Table 6).

    Returns a list of dicts: index (0-based column), name, count, frequency (count / n_tasks);
    ties are listed by column index.
    """
    counts = np.zeros(len(gene_names), dtype=np.int64)
    for selected in genes:
        counts[np.asarray(selected, dtype=np.int64)] += 1
    order = np.lexsort((np.arange(counts.size), -counts))
    order = [int(i) for i in order[:top] if counts[i] > 0]
    return [{"index": i, "name": gene_names[i], "count": int(counts[i]),
             "frequency": float(counts[i] / max(1, n_tasks))} for i in order]


def mean_curve(histories, columns, field="best_fitness"):
    """Mean over tasks of ``field`` per round; shorter runs (a target reached) hold their last value."""
    column = columns.index(field)
    length = max(h.shape[0] for h in histories)
    padded = np.empty((len(histories), length))
    for i, history in enumerate(histories):
        values = history[:, column]
        padded[i, :values.size] = values
        padded[i, values.size:] = values[-1]
    return padded.mean(axis=0)


def refined_rows(name, table, refined_genes, gene_names, stabilities, top=10):
    """The rows of a job's refined subsets (one per refinement; a job has at most one today):
    each named ``NAME+METHOD``, with its accuracy over runs, sizes and most frequent genes,
    computed as the search's row is (:func:`run_accuracies` over ``refined_test_*``).

    Parameters
    ----------
    name : str
        The search's row (the job's name).
    table : dict of str to ndarray
        The ``/tasks`` columns, with the :data:`REFINED_COLUMNS`.
    refined_genes : dict of str to list of ndarray
        Refinement -> the refined genes of every task, in task order.
    gene_names : sequence of str
    stabilities : dict of str to dict
        Refinement -> the :func:`~hpcswarm.signatures.stability.stability_summary` of its subsets.
    top : int, default 10
    """
    rows = []
    for method, genes in refined_genes.items():
        accuracies = run_accuracies(table, "refined_test")
        stable = stabilities[method]
        rows.append({"name": f"{name}+{method}", "refine": method,
                     "accuracy": describe(accuracies), "accuracy_per_run": accuracies.tolist(),
                     "balanced_accuracy": describe_balanced(table, "refined_test"),
                     "subset_size": describe(table.refined_size), "stability": stable,
                     "top_genes": gene_frequencies(genes, gene_names, len(genes), top)})
    return rows


def signature_of(name, n_genes, folds, extra):
    """The :class:`~hpcswarm.signatures.final.FinalSignature` of the search on all samples
    ``extra``, beside the outer folds' records ``folds`` of the job called ``name``: the
    estimate is the test accuracy over runs of the row the signature follows (``NAME+METHOD``
    with a refinement, else ``NAME``)."""
    table = task_table(folds)
    refined = extra.refined is not None
    accuracies = run_accuracies(table, "refined_test" if refined else "test")
    row = row_label(extra.refined.method, name) if refined else name
    return final_signature(extra, folds, n_genes, dict(describe(accuracies), row=row))


def _selection_stabilities(records, selections, runs, n_genes):
    """The :func:`hpcswarm.signatures.stability.stability_summary` of each of ``selections`` (a name
    -> the genes of every task; ``"none"``: the searches' own subsets, else a refinement's).

    The final signature already holds the stability of the outer folds' selections it
    follows (the refined subsets with a refinement, ``"none"`` without): that one is reused,
    not computed again; the others are computed with ``records.similarity`` (Sechidis et
    al.'s estimate)."""
    final = records.final
    known = {} if final is None else {final.refine: final.stability}
    return {name: known[name] if name in known
            else stability_summary(genes, runs, n_genes, similarity=records.similarity)
            for name, genes in selections.items()}


def summarise(job, dataset, records, provenance, top=10):
    """The JSON summary of a job's results (written beside the HDF5 file); ``accuracy`` over
    runs and, beside it, ``balanced_accuracy`` over tasks (of each task's test balanced
    accuracy, None without counts per class), and so the baselines' (``all_genes_accuracy``
    and ``all_genes_balanced_accuracy``, ``pca_knn_accuracy`` and
    ``pca_knn_balanced_accuracy``); ``refined`` lists
    the row of each refined subset (:func:`refined_rows`), empty without a refinement;
    ``stability`` the stability of the selections
    (:func:`hpcswarm.signatures.stability.stability_summary`) and ``final_signature`` the final
    signature (``records.final``), or None.

    Parameters
    ----------
    job : hpcswarm.run.jobfile.Job
    dataset : Dataset
    records : JobRecords
    provenance : dict
    top : int, default 10
        Genes listed as most often selected.
    """
    results, final = records.tasks, records.final
    table = task_table(results)
    histories = [r.history.values for r in results]
    biased = job.biased
    refined = ({} if not results or results[0].refined is None
               else {results[0].refined.method: [r.refined.genes for r in results]})
    stabilities = _selection_stabilities(records, {"none": [r.genes for r in results],
                                                   **refined},
                                         table.run, dataset.n_genes)
    summary = {
        **tags(SUMMARY_ENCODING),
        "results": str(job.output), "name": job.name, "algorithm": job.spec.algorithm,
        "protocol": job.protocol, "biased": biased, "note": job.protocol_note or None,
        "dataset": job.data, "n_samples": dataset.n_samples, "n_genes": dataset.n_genes,
        "runs": job.runs, "tasks": len(results),
        "accuracy": describe(run_accuracies(table)),
        "accuracy_per_run": run_accuracies(table).tolist(),
        "balanced_accuracy": describe_balanced(table),
        "all_genes_accuracy": describe(run_accuracies(table, "baseline")),
        "all_genes_balanced_accuracy": describe_balanced(table, "baseline"),
        "pca_knn_accuracy": describe(run_accuracies(table, "pca")),
        "pca_knn_balanced_accuracy": describe_balanced(table, "pca"),
        "pca_components": describe(table.pca_components),
        "subset_size": describe(table.subset_size),
        "task_seconds": describe(table.seconds),
        "evaluations": describe(table.evaluations),
        "top_genes": gene_frequencies([r.genes for r in results], dataset.gene_names,
                                      len(results), top),
        "refined": refined_rows(job.name, table, refined, dataset.gene_names,
                                stabilities, top),
        "stability": stabilities["none"],
        "final_signature": None if final is None else final.as_json(dataset.gene_names),
        "convergence_best_fitness": mean_curve(histories,
                                               list(results[0].history.columns)).tolist(),
        "objective": job.spec.params.get("objective"),
        "params": job.spec.params, "provenance": provenance, "overrides": list(job.overrides),
    }
    return finite(summary)
