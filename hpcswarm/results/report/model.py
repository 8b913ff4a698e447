"""The report as typed data: one dataclass per thing a report shows.

:func:`hpcswarm.results.report.build.build_report` fills a :class:`Report`; the text, Markdown, CSV,
JSON and plot writers read its fields. Every class also reads as a mapping of its fields
(``row["mean"]`` as well as ``row.mean``), the form ``build_report`` has returned to its
callers; :func:`plain` turns a report into the JSON document ``report --json`` writes, and
:func:`as_report` reads that document back. Parts that belong to other modules stay in
their own form: a stability summary is the dict of
:func:`hpcswarm.signatures.stability.stability_summary`, a final signature's genes, estimate and
stability those of :meth:`hpcswarm.signatures.final.FinalSignature.as_json`.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Optional

IN_JSON = "in_json"
"""Field metadata key: False for fields that ``report --json`` leaves out (they feed the
plots and gene lists only)."""

OF = "of"
"""Field metadata key: the report class of the field's value, or of each of its items."""


class Fields(Mapping):
    """A dataclass read as the mapping of its fields, equal to any mapping of the same items."""

    def __getitem__(self, key):
        if key not in self._names():
            raise KeyError(key)
        return getattr(self, key)

    def __iter__(self):
        return iter(self._names())

    def __len__(self):
        return len(self._names())

    def _names(self):
        return [f.name for f in fields(self)]

    @classmethod
    def from_json(cls, data):
        """The instance of ``data``, a mapping in this class's JSON form (:func:`plain`):
        fields it lacks are empty lists (list fields) or None."""
        values = {}
        for f in fields(cls):
            value = data.get(f.name, [] if f.type is list else None)
            kind = f.metadata.get(OF)
            if kind is not None and value is not None:
                value = ([kind.from_json(item) for item in value] if f.type is list
                         else kind.from_json(value))
            values[f.name] = value
        return cls(**values)


def plain(value):
    """``value`` as JSON data: a report class as a dict of its fields (those marked
    ``in_json=False`` left out), in field order; lists and dicts element by element."""
    if isinstance(value, Fields):
        return {f.name: plain(getattr(value, f.name)) for f in fields(value)
                if f.metadata.get(IN_JSON, True)}
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    return value


@dataclass(eq=False)
class MethodRow(Fields):
    """One row of the methods table (a method, or the ``All`` / ``PCA-kNN`` baselines).

    Accuracies are percentages over runs (each run pools its folds); ``balanced`` and
    ``balanced_std`` the mean and standard deviation over tasks of the test balanced accuracy
    (the mean recall over classes, :func:`hpcswarm.store.records.balanced_accuracy`), None
    where the results hold none (files written before it was kept: a baseline's before
    its counts per class were). ``test`` is the paired
    test's outcome against ``versus`` (``+``, ``-``, ``=``; ``ref`` for the reference; empty
    when untested) with its one-sided ``p_value``, the ``pairs`` that differ and the smallest
    ``min_p`` they allow; ``kuncheva`` and ``jaccard`` the stability of the selections.
    """

    dataset: str
    dataset_sha256: Optional[str]
    method: str
    protocol: Optional[str]
    biased: bool
    runs: int
    ave_size: float
    best: float
    mean: float
    std: float
    balanced: Optional[float]
    balanced_std: Optional[float]
    test: str
    p_value: Optional[float]
    pairs: Optional[int]
    min_p: Optional[float]
    versus: Optional[str]
    kuncheva: Optional[float]
    jaccard: Optional[float]
    file: str


@dataclass(eq=False)
class GeneCount(Fields):
    """A gene of a method's most often selected
    (:func:`hpcswarm.results.files.gene_frequencies`)."""

    index: int
    name: str
    count: int
    frequency: float


@dataclass(eq=False)
class RankedGene(GeneCount):
    """A selected gene with its mean rank over runs
    (:func:`hpcswarm.signatures.stability.ranked_genes`)."""

    mean_rank: float


def _of(kind, **metadata):
    """A field whose value, or each of whose items, is a ``kind``."""
    return field(metadata={OF: kind, **metadata})


@dataclass(eq=False)
class GeneEntry(Fields):
    """A method's selections: its most often selected genes (``top``), every selected gene
    ranked, and the stability of the selections (``stability``: over runs and folds;
    ``stability_detail``: the whole :func:`hpcswarm.signatures.stability.stability_summary`).
    ``task_runs``, ``task_folds`` and ``top_tasks`` (per ranked gene among the first, the
    tasks that selected it) feed the stability plot."""

    dataset: str
    method: str
    file: str
    tasks: int
    runs: int
    stability: dict
    stability_detail: dict
    top: list = _of(GeneCount)
    ranked: list = _of(RankedGene, **{IN_JSON: False})
    task_runs: list = field(metadata={IN_JSON: False})
    task_folds: list = field(metadata={IN_JSON: False})
    top_tasks: list = field(metadata={IN_JSON: False})


@dataclass(eq=False)
class ConvergenceEntry(Fields):
    """A method's mean gbest fitness per round, the inner accuracy behind it (None when its
    objective cannot be inverted), and the mean size of that best subset per round."""

    dataset: str
    method: str
    file: str
    objective: Optional[str]
    best_fitness: list
    best_accuracy: Optional[list]
    best_size: list


@dataclass(eq=False)
class BudgetRow(Fields):
    """The front points chosen by inner accuracy at a size budget of at most ``budget``
    genes, over the ``tasks`` whose front has one: mean ``size``, mean ``inner`` accuracy (%)
    and ``test`` accuracy (%; None when biased); all three None when no front has one."""

    budget: int
    tasks: int
    size: Optional[float] = None
    inner: Optional[float] = None
    test: Optional[float] = None


@dataclass(eq=False)
class FrontPointRow(Fields):
    """A point of a task's front, or its refined subset: genes and accuracies (fractions;
    ``test`` None without a test fold)."""

    size: int
    inner: float
    test: Optional[float]


@dataclass(eq=False)
class TaskFront(Fields):
    """One task's Pareto front (points in increasing size) and its refined subset."""

    run: int
    fold: int
    points: list = _of(FrontPointRow)
    refined: Optional[FrontPointRow] = _of(FrontPointRow)


@dataclass(eq=False)
class FrontEntry(Fields):
    """A method's fronts: the signatures by size (``budgets``) and every task's front."""

    dataset: str
    method: str
    file: str
    biased: bool
    budgets: list = _of(BudgetRow)
    refine: Optional[str]
    tasks: list = _of(TaskFront)


@dataclass(eq=False)
class FinalEntry(Fields):
    """A method's final signature (:meth:`hpcswarm.signatures.final.FinalSignature.as_json`: its
    ``genes``, ``estimate`` and ``stability`` in that form), with where it comes from."""

    size: int
    refine: str
    genes: list
    search_size: int
    inner_accuracy: float
    estimate: dict
    stability: dict
    spawn_key: list
    dataset: str
    method: str
    file: str
    n_samples: int


@dataclass(eq=False)
class Report(Fields):
    """Every table of a report: the methods table (``rows``) tested against ``reference`` at
    ``alpha``, then per method its genes, convergence, fronts and final signature; ``notes``
    printed under the methods table."""

    reference: str
    alpha: float
    rows: list = _of(MethodRow)
    genes: list = _of(GeneEntry)
    convergence: list = _of(ConvergenceEntry)
    fronts: list = _of(FrontEntry)
    final_signatures: list = _of(FinalEntry)
    notes: list


def as_report(report):
    """``report`` as a :class:`Report`: itself, or read from its JSON form
    (:meth:`Fields.from_json`, the document ``report --json`` writes)."""
    return report if isinstance(report, Report) else Report.from_json(report)
