"""Building a :class:`~hpcswarm.results.report.model.Report` from results files: the methods table
per dataset with its paired tests, then per method its genes, convergence, fronts and final
signature."""

from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import numpy as np

from hpcswarm.errors import ParameterError
from hpcswarm.results.files import (MethodResults, describe, describe_balanced, gene_frequencies,
                              mean_curve, read_results, run_accuracies)
from hpcswarm.results.report.figures import accuracy_curve, signature_budgets
from hpcswarm.results.report.methods import (distinct_files, pool_parts, refined_points,
                                             significance, with_refined)
from hpcswarm.results.report.model import (ConvergenceEntry, FinalEntry, FrontEntry, FrontPointRow,
                                   GeneCount, GeneEntry, MethodRow, RankedGene, Report,
                                   TaskFront)
from hpcswarm.signatures.stability import ranked_genes, stability_summary
from hpcswarm.store.records import BIAS_NOTE

ALL_GENES = "All"
PCA_KNN = "PCA-kNN"
"""Rows of the baselines every results file carries; PCA-kNN's Ave-Size is its mean number
of principal components."""

SINGLE_SEARCH = "search"
"""The protocol column of a single search's rows (``run`` without a job: no protocol, one
search on all samples)."""

STABILITY_GENES = 20
"""Genes shown by the stability plot (the most often selected)."""

FRONT_NOTE = ("Signatures by size: in each task the front point of at most b genes with the "
              "highest inner accuracy; its test accuracy is reported, never used to choose "
              "it (choosing by test accuracy would reintroduce selection bias); Tasks: the "
              "tasks whose front has a point that small, over which the means are taken")

_NO_SELECTION = {"kuncheva": None, "jaccard": None}
"""The stability columns of the baseline rows, which select no genes."""


@dataclass
class _Dataset:
    """A dataset of the report: its SHA-256 (None for a single search's) and its label."""

    sha256: Optional[str]
    label: str


@dataclass
class _RowSource:
    """What a row of the methods table is computed from: the ``method``'s accuracies of
    ``prefix`` (``test``, or ``baseline`` / ``pca`` for the baseline rows)."""

    label: str
    method: MethodResults
    prefix: str
    size: float
    is_reference: bool
    stability: dict


def build_report(paths, reference=None, alpha=0.05, top=10, sizes=None):
    """Read results files and compute every table of the report.

    Parameters
    ----------
    paths : sequence of str or Path
        Results files (``run JOB.toml`` outputs), or a single search's JSON; the parts of
        one experiment split with ``first_run`` are pooled
        (:func:`~hpcswarm.results.report.methods.pool_parts`).
    reference : str, optional
        Method the tests compare against: a job ``name``, an algorithm or a file name
        (default: the first file).
    alpha : float
        Significance level of each one-sided signed-rank test.
    top : int
        Genes listed per method.
    sizes : sequence of int, optional
        Signature sizes of the "signatures by size" tables (default: read from the fronts,
        :func:`~hpcswarm.results.report.figures.default_budgets`).

    A file given twice (under any name) is read once, with a note.

    Returns
    -------
    Report
        ``rows`` (the methods table), ``genes``, ``convergence``, ``fronts`` and
        ``final_signatures`` (per method), ``reference``, ``alpha``, ``notes``
        (:mod:`hpcswarm.results.report.model`).
    """
    if not 0 < alpha < 1:
        raise ParameterError(f"--alpha must lie in (0, 1), got {alpha}")
    paths, notes = distinct_files(paths)
    methods = with_refined(pool_parts([read_results(path) for path in paths]))
    ref = methods[_pick_reference(methods, reference)]
    stabilities = [stability_summary(m.genes, m.table.run, len(m.gene_names),
                                     similarity=m.similarity)
                   for m in methods]
    rows = _methods_table(methods, stabilities, ref, alpha, notes)
    fronts = [_front_entry(method, sizes) for method in methods
              if method.fronts and all(method.fronts)]
    if fronts:
        notes.append(f"{FRONT_NOTE}.")
    return Report(
        reference=ref.label, alpha=alpha, rows=rows,
        genes=[_gene_entry(method, stable, top) for method, stable in zip(methods, stabilities)],
        convergence=[_convergence_entry(method) for method in methods if method.histories],
        fronts=fronts,
        final_signatures=[_final_entry(method) for method in methods if method.final is not None],
        notes=sorted(set(notes)))


def _pick_reference(methods, reference):
    if reference is None:
        return 0
    for i, method in enumerate(methods):
        if reference in (method.label, method.attrs.get("algorithm"), str(method.path),
                         method.path.name):
            return i
    names = ", ".join(sorted({m.label for m in methods}))
    raise ParameterError(f"--reference {reference!r} names no method of the results given "
                         f"(methods: {names})")


def dataset_label(method):
    """Short name of a method's dataset for titles (the file stem of the job's ``data``)."""
    return Path(str(method.attrs.get("dataset"))).stem


def _methods_table(methods, stabilities, ref, alpha, notes):
    """The rows of every dataset (in the order the datasets first appear), each dataset's
    methods tested against ``ref`` when it is one of them; the notes they call for are added
    to ``notes``."""
    datasets = []
    for method in methods:
        key = method.attrs.get("dataset_sha256")
        if key not in [d.sha256 for d in datasets]:
            datasets.append(_Dataset(key, Path(str(method.attrs.get("dataset"))).stem))
    rows = []
    for dataset in datasets:
        members = [(m, stable) for m, stable in zip(methods, stabilities)
                   if m.attrs.get("dataset_sha256") == dataset.sha256]
        compare_to = ref if ref.attrs.get("dataset_sha256") == dataset.sha256 else None
        searches = {(m.path, m.label): m for m, _ in members}  # a file's own search row
        for source in _row_sources(members, compare_to):
            searched = (source.method.path, source.method.attrs.get("refined_from"))
            versus = searches.get(searched) if source.prefix == "test" else None
            rows.append(_method_row(source, dataset, versus or compare_to, alpha, notes))
        if any(m.biased for m, _ in members):
            notes.append(f"* {BIAS_NOTE}")
    return rows


def _row_sources(members, compare_to):
    """The rows of a dataset: ``All`` and ``PCA-kNN`` of the reference (else the first
    method) when its results have them (a single search has neither), then every method."""
    base = compare_to or members[0][0]
    sources = []
    if base.table.baseline_correct is not None:
        sources.append(_RowSource(ALL_GENES, base, "baseline", len(base.gene_names), False,
                                  _NO_SELECTION))
    if base.table.pca_correct is not None:
        sources.append(_RowSource(PCA_KNN, base, "pca",
                                  float(base.table.pca_components.mean()), False,
                                  _NO_SELECTION))
    return sources + [_RowSource(m.label, m, "test", float(m.table.subset_size.mean()),
                                 m is compare_to, stable["all"]) for m, stable in members]


def _method_row(source, dataset, versus, alpha, notes):
    """The row of ``source``, tested against ``versus`` unless it is the reference; a note
    when the test is impossible or cannot reach ``alpha``."""
    method = source.method
    stats = describe(run_accuracies(method.table, source.prefix))
    balanced = describe_balanced(method.table, source.prefix)
    symbol, test = "", None
    if source.is_reference:
        symbol = "ref"
    elif versus is not None:
        symbol, test = significance(method, source.prefix, versus, "test", alpha)
        if test is None:
            notes.append(f"* {dataset.label}: {source.label} vs {versus.label}: no (run, fold) "
                         f"task held out the same samples (other seeds or folds): not tested")
        elif not test.reachable(alpha):
            notes.append(f"* {dataset.label}: {source.label} vs {versus.label}: "
                         f"{test.describe(alpha)}")
    return MethodRow(
        dataset=dataset.label, dataset_sha256=dataset.sha256, method=source.label,
        protocol=SINGLE_SEARCH if method.single_search else method.attrs.get("protocol"),
        biased=method.biased, runs=stats["n"], ave_size=source.size, best=100 * stats["best"],
        mean=100 * stats["mean"], std=100 * stats["std"],
        balanced=None if balanced is None else 100 * balanced["mean"],
        balanced_std=None if balanced is None else 100 * balanced["std"], test=symbol,
        p_value=None if test is None else test.p_value,
        pairs=None if test is None else test.nonzero,
        min_p=None if test is None else test.min_p,
        versus=None if test is None else versus.label,
        kuncheva=source.stability["kuncheva"], jaccard=source.stability["jaccard"],
        file=str(method.path))


def _gene_entry(method, stable, top):
    """A method's genes: the ``top`` most often selected, every selected gene ranked, the
    stability of the selections, and the tasks that selected each of the first ranked."""
    runs = method.table.run
    ranked = [RankedGene(**gene) for gene in ranked_genes(method.genes, runs, method.gene_names)]
    selected = [set(genes.tolist()) for genes in method.genes]
    return GeneEntry(
        dataset=dataset_label(method), method=method.label, file=str(method.path),
        tasks=len(method.genes), runs=int(np.unique(runs).size), stability=stable["all"],
        stability_detail=stable,
        top=[GeneCount(**gene) for gene in gene_frequencies(method.genes, method.gene_names,
                                                            len(method.genes), top)],
        ranked=ranked, task_runs=runs.tolist(), task_folds=method.table.fold.tolist(),
        top_tasks=[[t for t, genes in enumerate(selected) if gene.index in genes]
                   for gene in ranked[:STABILITY_GENES]])


def _convergence_entry(method):
    """A method's mean gbest fitness per round and the inner accuracy behind it."""
    return ConvergenceEntry(
        dataset=dataset_label(method), method=method.label, file=str(method.path),
        objective=(method.attrs.get("params") or {}).get("objective"),
        best_fitness=mean_curve(method.histories, method.history_columns).tolist(),
        best_accuracy=accuracy_curve(method),
        best_size=mean_curve(method.histories, method.history_columns, "best_size").tolist())


def _front_entry(method, sizes):
    """A method's fronts: the signatures by size at ``sizes`` and every task's front with
    its refined subset."""
    tasks = [TaskFront(int(run), int(fold),
                       [FrontPointRow(p.size, p.inner_accuracy, p.test_accuracy) for p in front],
                       refined)
             for run, fold, front, refined in zip(method.table.run, method.table.fold,
                                                  method.fronts, refined_points(method))]
    return FrontEntry(
        dataset=dataset_label(method), method=method.label, file=str(method.path),
        biased=method.biased, budgets=signature_budgets(method, sizes),
        refine=method.attrs.get("refine") if method.refined_genes else None, tasks=tasks)


def _final_entry(method):
    """A method's final signature, with its dataset, method, file and sample count."""
    return FinalEntry(**method.final.as_json(method.gene_names), dataset=dataset_label(method),
                      method=method.label, file=str(method.path),
                      n_samples=int(method.attrs.get("n_samples") or 0))
