"""The papers' tables from results files: accuracy and size per method, top genes, convergence.

- Methods table (Tran et al. Tables 3 and 5; Gu et al. Table 2; Li et al. Tables II-III):
  average subset size, best and mean +/- std accuracy over runs (a run's accuracy pools its
  folds), and a paired one-sided Wilcoxon signed-rank test (:mod:`hpcswarm.significance`)
  of each row's per-fold accuracies against a reference row's, over the (run, fold) tasks
  that held out the same samples: ``+`` significantly higher than the reference, ``-``
  significantly lower, ``=`` no significant difference (Tran et al.'s convention; Gu et al.
  and Li et al. write the reverse, from the reference's side). The reference is the
  reference method, and for a refined row (``NAME+prune``) its search row ``NAME``. The p
  column gives the one-sided p and n, the pairs whose accuracies differ; a note says when n
  is too small for any outcome to reach alpha (the smallest p is ``2 ** -n``). The all-genes
  k-NN under the same protocol is the ``All`` row of each dataset.
- A refined method (a job with ``refine = "prune"``, :mod:`hpcswarm.refine`) has its own
  row, ``NAME+prune``, right after the search's row, from the same runs and folds.
- Stability (:mod:`hpcswarm.stability`): Kuncheva's consistency index and the mean pairwise
  Jaccard index of the subsets selected across the folds and runs, per method; Nogueira et
  al.'s estimate with its interval, and Sechidis et al.'s, which does not count a swap of a
  gene for one strongly correlated with it as a change (from the correlated gene pairs the
  job stored, ``/gene_similarity``; blank for files without them).
- Top genes (Tran et al. Table 6): the genes most often selected across runs and folds;
  ``--genes FILE`` writes every selected gene with its frequency and mean rank.
- Signatures by size: every task keeps the Pareto front of (inner accuracy, size) of the
  subsets its search evaluated (:mod:`hpcswarm.swarm.front`). For a budget of at most b
  genes the report takes, in each task, the front point of at most b genes with the highest
  *inner* accuracy and gives its mean size, inner accuracy and test accuracy (pooled over
  each run's folds), over the tasks whose front has such a point (their number is shown).
  The budgets are read from the fronts (:func:`default_budgets`) or given (``--sizes``).
  Choosing a point by its test accuracy instead would let the test fold
  take part in the selection and bring back the selection bias that the outer
  cross-validation removes (Ambroise & McLachlan 2002; Tran et al. Sect. 4.6): the test
  accuracy of a front point is only reported, never used to choose it.
- Convergence (Tran et al. Fig. 3; Li et al. Fig. 2): mean gbest fitness per round, shown
  as the inner accuracy behind it (:func:`fitness_accuracy`: CSO's fitness is minus the
  error rate, Gu et al. 2018 Eq. 5).

Inputs: results files, and a single search's JSON (``run --output FILE.json``), read as one
biased task (:func:`hpcswarm.results.read_search_document`); a file given twice is read once.

Text tables go to the terminal; CSV, Markdown, JSON and PNG (matplotlib, optional) on request.
"""

import csv
import io
import os
import re
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from hpcswarm.atomic import reason, write_json, write_text
from hpcswarm.encoding import finite, tags
from hpcswarm.errors import DataError, ParameterError
from hpcswarm.genelist import gene_table
from hpcswarm.outputs import check_outputs
from hpcswarm.plots import plot_files, plotting_available, write_plots
from hpcswarm.records import BIAS_NOTE
from hpcswarm.refinements import REFINEMENTS, row_label
from hpcswarm.results import (describe, gene_frequencies, mean_curve, read_results,
                              run_accuracies, task_accuracies)
from hpcswarm.significance import EXACT_PAIRS, compare
from hpcswarm.stability import SIMILARITY_THRESHOLD, ranked_genes, stability_summary

REPORT_ENCODING = ("hpcswarm-report", "0.2.0")
"""``encoding-type`` and ``encoding-version`` of the ``--json`` document."""

ALL_GENES = "All"
PCA_KNN = "PCA-kNN"
"""Rows of the baselines every results file carries; PCA-kNN's Ave-Size is its mean number
of principal components."""

BUDGETS = (1, 2, 3, 5, 10, 15, 20, 30, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000)
"""Signature sizes (most genes) at which the report reads the fronts."""

STABILITY_GENES = 20
"""Genes shown by the stability plot (the most often selected)."""

FRONT_NOTE = ("Signatures by size: in each task the front point of at most b genes with the "
              "highest inner accuracy; its test accuracy is reported, never used to choose "
              "it (choosing by test accuracy would reintroduce selection bias); Tasks: the "
              "tasks whose front has a point that small, over which the means are taken")


def matched_accuracies(method, prefix, other, other_prefix):
    """Per-fold accuracies of two rows over the (run, fold) tasks they share that held out
    the same samples.

    Parameters
    ----------
    method, other : MethodResults
    prefix, other_prefix : str
        Which accuracy of each (:func:`hpcswarm.results.task_accuracies`): ``"test"``, or
        ``"baseline"`` / ``"pca"`` for the ``All`` and ``PCA-kNN`` rows.

    Returns
    -------
    tuple of ndarray
        ``(x, y)``, one entry per matched task, in ``method``'s task order. Tasks of files
        that do not record their held-out rows are matched only within one file.
    """
    where = {(int(r), int(f)): i for i, (r, f) in enumerate(zip(other.table["run"],
                                                                other.table["fold"]))}
    own, theirs = task_accuracies(method.table, prefix), task_accuracies(other.table, other_prefix)
    x, y = [], []
    for i, (run, fold) in enumerate(zip(method.table["run"], method.table["fold"])):
        j = where.get((int(run), int(fold)))
        if j is None:
            continue
        if method.test_indices is None or other.test_indices is None:
            same = method.path == other.path
        else:
            same = np.array_equal(method.test_indices[i], other.test_indices[j])
        if same:
            x.append(own[i])
            y.append(theirs[j])
    return np.array(x, dtype=float), np.array(y, dtype=float)


def significance(method, prefix, other, other_prefix, alpha=0.05):
    """The paired test of a row against its reference row (:func:`hpcswarm.significance.compare`
    over :func:`matched_accuracies`).

    Returns
    -------
    tuple
        ``(symbol, test)``: ``+``/``-``/``=`` and the
        :class:`~hpcswarm.significance.PairedTest`; ``("", None)`` when no task is matched.
    """
    x, y = matched_accuracies(method, prefix, other, other_prefix)
    if x.size == 0:
        return "", None
    return compare(x, y, alpha)


def _same_experiment(a, b):
    """Whether two results files hold parts of one experiment (all but the runs agree)."""
    keys = ("dataset_sha256", "name", "algorithm", "protocol", "params", "seed", "refine")
    job_a, job_b = a.attrs.get("job") or {}, b.attrs.get("job") or {}
    return (all(a.attrs.get(k) == b.attrs.get(k) for k in keys)
            and job_a.get("folds") == job_b.get("folds")
            and not set(a.table["run"].tolist()) & set(b.table["run"].tolist()))


def pool_parts(methods):
    """Join the files of one experiment split by ``first_run`` into one method, in run order.

    Files with the same dataset, method name, algorithm, parameters, protocol, folds and seed
    whose runs do not overlap are parts of one experiment (the runs of ``first_run``
    .. ``first_run + runs - 1`` are those of a single job with more runs); their tasks are
    concatenated. Files whose runs overlap stay separate methods.
    """
    from hpcswarm.results import MethodResults

    pooled = []
    for method in methods:
        part_of = next((group for group in pooled if all(_same_experiment(method, other)
                                                         for other in group)), None)
        if part_of is None:
            pooled.append([method])
        else:
            part_of.append(method)
    joined = []
    for group in pooled:
        if len(group) == 1:
            joined.append(group[0])
            continue
        group.sort(key=lambda m: int(m.table["run"].min()))
        first = group[0]
        joined.append(MethodResults(
            path=first.path, attrs=dict(first.attrs, pooled_files=[str(m.path) for m in group]),
            gene_names=first.gene_names, class_names=first.class_names,
            table={key: np.concatenate([m.table[key] for m in group]) for key in first.table},
            genes=[g for m in group for g in m.genes],
            histories=[h for m in group for h in m.histories],
            history_columns=first.history_columns,
            fronts=[f for m in group for f in (m.fronts or [[]] * len(m.genes))],
            refined_genes=(None if any(m.refined_genes is None for m in group)
                           else [g for m in group for g in m.refined_genes]),
            final=first.final,  # the same search in every part: its seed ignores the runs
            test_indices=(None if any(m.test_indices is None for m in group)
                          else [t for m in group for t in m.test_indices]),
            similarity=_common_similarity(group)))
    return joined


def _common_similarity(group):
    """The gene similarity of the parts of one experiment when every part computed it over the
    same genes (every gene of the dataset, unless it is large), else None."""
    first = group[0].similarity
    if first is None or any(m.similarity is None
                            or not np.array_equal(m.similarity.genes, first.genes)
                            or m.similarity.threshold != first.threshold for m in group):
        return None
    return first


def refined_view(method):
    """The refined subsets of ``method`` as a method of their own (``NAME+prune``), or None.

    Same runs and folds; its accuracy, size and genes are those of the refined subsets.
    """
    from hpcswarm.results import MethodResults

    if method.refined_genes is None or "refined_test_correct" not in method.table:
        return None
    refine = method.attrs.get("refine") or "refined"
    table = dict(method.table)
    for column in ("test_correct", "test_total", "test_accuracy", "train_correct",
                   "train_total"):
        table[column] = method.table[f"refined_{column}"]
    table["subset_size"] = method.table["refined_size"]
    return MethodResults(
        path=method.path, attrs=dict(method.attrs, name=row_label(refine, method.label),
                                     refined_from=method.label),
        gene_names=method.gene_names, class_names=method.class_names, table=table,
        genes=list(method.refined_genes), histories=[], history_columns=[], fronts=None,
        test_indices=method.test_indices, similarity=method.similarity)


def refined_points(method):
    """Per task, its refined subset as a point of the front plot (``size``, ``inner``,
    ``test`` accuracies; ``test`` None without a test fold), or None without a refinement."""
    table = method.table
    if "refined_size" not in table:
        return [None] * len(method.genes)
    return [{"size": int(size), "inner": int(correct) / int(total),
             "test": int(test_correct) / int(test_total) if test_total > 0 else None}
            for size, correct, total, test_correct, test_total in zip(
                table["refined_size"], table["refined_train_correct"],
                table["refined_train_total"], table["refined_test_correct"],
                table["refined_test_total"])]


def with_refined(methods):
    """``methods`` with each refined view beside its method: a filter's baseline row
    (kind ``rank`` of :data:`hpcswarm.refinements.REFINEMENTS`) right before it, so that it
    follows ``All`` and ``PCA-kNN``; the others right after it."""
    out = []
    for method in methods:
        view = refined_view(method)
        rule = REFINEMENTS.get(method.attrs.get("refine"))
        if view is not None and rule is not None and rule.kind == "rank":
            out += [view, method]
        else:
            out += [method] if view is None else [method, view]
    return out


def dataset_label(method):
    """Short name of a method's dataset for titles (the file stem of the job's ``data``)."""
    return Path(str(method.attrs.get("dataset"))).stem


def default_budgets(fronts):
    """Signature sizes read from the fronts themselves: the smallest size of any front, the
    smallest at which every front has a point, and the :data:`BUDGETS` between the first and
    the first that takes every front's last point."""
    smallest = min(front[0].size for front in fronts)
    everywhere = max(front[0].size for front in fronts)
    largest = max(front[-1].size for front in fronts)
    chosen = []
    for budget in sorted({b for b in BUDGETS if b >= smallest} | {smallest, everywhere}):
        chosen.append(budget)
        if budget >= largest:
            break
    return chosen


def signature_budgets(method, budgets=None):
    """Per size budget, the front points chosen by inner accuracy alone, summarised.

    In every task, the point of the task's front with at most ``b`` genes and the highest
    inner accuracy (the largest such point: accuracy grows along a front). ``budgets``
    default to :func:`default_budgets`. Returns a list of dicts: ``budget``, ``tasks`` (the
    tasks whose front has a point of at most ``b`` genes: the means are over those), ``size``
    (mean), ``inner`` (mean inner accuracy, %), ``test`` (test accuracy pooled over each
    run's folds, mean over runs, %; None for the biased protocol); ``size``, ``inner`` and
    ``test`` are None when no front has a point that small.
    """
    fronts = method.fronts or []
    if not fronts or not all(fronts):
        return []
    runs = method.table["run"]
    out = []
    for budget in (default_budgets(fronts) if budgets is None else sorted(set(budgets))):
        chosen = [(run, [p for p in front if p.size <= budget])
                  for run, front in zip(runs, fronts)]
        chosen = [(run, inside[-1]) for run, inside in chosen if inside]
        row = {"budget": budget, "tasks": len(chosen), "size": None, "inner": None,
               "test": None}
        if chosen:
            points = [p for _, p in chosen]
            row["size"] = float(np.mean([p.size for p in points]))
            row["inner"] = 100 * float(np.mean([p.inner_accuracy for p in points]))
            if all(p.test_total > 0 for p in points):
                kept = np.array([run for run, _ in chosen])
                correct = np.array([p.test_correct for p in points])
                total = np.array([p.test_total for p in points])
                row["test"] = 100 * float(np.mean([correct[kept == r].sum()
                                                   / total[kept == r].sum()
                                                   for r in np.unique(kept)]))
        out.append(row)
    return out


def fitness_accuracy(fitness, size, objective, alpha=0.9, n_genes=None):
    """The validation accuracy behind a fitness value of :mod:`hpcswarm.fitness.objectives`.

    ``accuracy``: the fitness itself; ``error`` (Gu et al. 2018, Eq. 5, maximised as minus
    the error rate): ``1 + fitness``; ``combined`` (Li et al., Eq. 3): ``(fitness - (1 -
    alpha) (1 - size / n_genes)) / alpha``. NaN for the empty subset (a fitness below -1,
    outside every objective's range on non-empty subsets) and None for an objective it
    cannot invert (unknown, or ``combined`` without ``n_genes``).

    Parameters
    ----------
    fitness, size : ndarray of shape (n,)
    objective : str or None
    alpha : float
    n_genes : int, optional
        Genes the search chose from.
    """
    fitness = np.asarray(fitness, dtype=float)
    if objective == "accuracy":
        accuracy = fitness.copy()
    elif objective == "error":
        accuracy = 1.0 + fitness
    elif objective == "combined" and n_genes:
        accuracy = (fitness - (1.0 - alpha) * (1.0 - np.asarray(size) / n_genes)) / alpha
    else:
        return None
    return np.where(fitness < -1.0, np.nan, accuracy)


def accuracy_curve(method):
    """Mean over tasks of the best subset's inner accuracy per round (from its fitness,
    :func:`fitness_accuracy`); None when the objective cannot be inverted. Shorter runs
    hold their last value, as in :func:`hpcswarm.results.mean_curve`."""
    params = method.attrs.get("params") or {}
    job = method.attrs.get("job") or {}
    n_genes = None if job.get("preprocess") else len(method.gene_names)
    columns = method.history_columns
    curves = []
    for history in method.histories:
        accuracy = fitness_accuracy(history[:, columns.index("best_fitness")],
                                    history[:, columns.index("best_size")],
                                    params.get("objective"), params.get("alpha", 0.9), n_genes)
        if accuracy is None:
            return None
        curves.append(accuracy[:, None])
    return finite(mean_curve(curves, ["best_accuracy"], "best_accuracy").tolist())


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


def distinct_files(paths):
    """``paths`` without a file given twice (the same file under two names or paths: same
    device and inode), in order; and a note per file left out."""
    seen, kept, notes = {}, [], []
    for path in paths:
        try:
            status = os.stat(path)
            key = (status.st_dev, status.st_ino)
        except OSError:  # missing: read_results names it
            key = os.path.realpath(path)
        if key in seen:
            notes.append(f"{path}: the same file as {seen[key]}, counted once")
            continue
        seen[key] = path
        kept.append(path)
    return kept, notes


def build_report(paths, reference=None, alpha=0.05, top=10, sizes=None):
    """Read results files and compute every table of the report, as plain data.

    Parameters
    ----------
    paths : sequence of str or Path
        Results files (``run JOB.toml`` outputs); the parts of one experiment split with
        ``first_run`` are pooled (:func:`pool_parts`).
    reference : str, optional
        Method the tests compare against: a job ``name``, an algorithm or a file name
        (default: the first file).
    alpha : float
        Significance level of each one-sided signed-rank test.
    top : int
        Genes listed per method.
    sizes : sequence of int, optional
        Signature sizes of the "signatures by size" tables (default: read from the fronts,
        :func:`default_budgets`).

    A file given twice (under any name) is read once, with a note.

    Returns
    -------
    dict
        ``rows`` (the methods table), ``genes`` (per method), ``convergence`` (per method),
        ``reference``, ``alpha``, ``notes``.
    """
    if not 0 < alpha < 1:
        raise ParameterError(f"--alpha must lie in (0, 1), got {alpha}")
    paths, notes = distinct_files(paths)
    methods = with_refined(pool_parts([read_results(path) for path in paths]))
    ref_index = _pick_reference(methods, reference)
    ref = methods[ref_index]
    stabilities = [stability_summary(m.genes, m.table["run"], len(m.gene_names),
                                     similarity=m.similarity)
                   for m in methods]
    rows, genes, curves = [], [], []
    datasets = []
    for method in methods:
        key = method.attrs.get("dataset_sha256")
        if key not in [d[0] for d in datasets]:
            datasets.append((key, method.attrs.get("dataset")))
    for key, dataset in datasets:
        members = [(m, stable) for m, stable in zip(methods, stabilities)
                   if m.attrs.get("dataset_sha256") == key]
        compare_to = ref if ref.attrs.get("dataset_sha256") == key else None
        base = compare_to or members[0][0]
        no_selection = {"kuncheva": None, "jaccard": None}
        entries = []
        if "baseline_correct" in base.table:  # a single search's document has no baseline
            entries.append((ALL_GENES, base, "baseline", len(base.gene_names), False,
                            no_selection))
        if "pca_correct" in base.table:
            entries.append((PCA_KNN, base, "pca", float(base.table["pca_components"].mean()),
                            False, no_selection))
        entries += [(m.label, m, "test", float(m.table["subset_size"].mean()), m is compare_to,
                     stable["all"]) for m, stable in members]
        searches = {m.label: m for m, _ in members}
        for label, method, prefix, size, is_ref, stable in entries:
            stats = describe(run_accuracies(method.table, prefix))
            versus = searches.get(method.attrs.get("refined_from")) if prefix == "test" else None
            versus = versus or compare_to
            symbol, test = "", None
            if is_ref:
                symbol = "ref"
            elif versus is not None:
                symbol, test = significance(method, prefix, versus, "test", alpha)
                if test is None:
                    notes.append(f"* {Path(str(dataset)).stem}: {label} vs {versus.label}: no "
                                 f"(run, fold) task held out the same samples (other seeds or "
                                 f"folds): not tested")
                elif not test.reachable(alpha):
                    notes.append(f"* {Path(str(dataset)).stem}: {label} vs {versus.label}: "
                                 f"{test.describe(alpha)}")
            rows.append({
                "dataset": Path(str(dataset)).stem, "dataset_sha256": key, "method": label,
                "protocol": method.attrs.get("protocol"), "biased": method.biased,
                "runs": stats["n"], "ave_size": size, "best": 100 * stats["best"],
                "mean": 100 * stats["mean"], "std": 100 * stats["std"], "test": symbol,
                "p_value": None if test is None else test.p_value,
                "pairs": None if test is None else test.nonzero,
                "min_p": None if test is None else test.min_p,
                "versus": None if test is None else versus.label,
                "kuncheva": stable["kuncheva"], "jaccard": stable["jaccard"],
                "file": str(method.path),
            })
        if any(m.biased for m, _ in members):
            notes.append(f"* {BIAS_NOTE}")
    fronts = []
    for method, stable in zip(methods, stabilities):
        n_tasks = len(method.genes)
        runs = method.table["run"]
        ranked = ranked_genes(method.genes, runs, method.gene_names)
        genes.append({"dataset": dataset_label(method), "method": method.label,
                      "file": str(method.path), "tasks": n_tasks,
                      "runs": int(np.unique(runs).size), "stability": stable["all"],
                      "stability_detail": stable,
                      "top": gene_frequencies(method.genes, method.gene_names, n_tasks, top),
                      "ranked": ranked, "task_runs": runs.tolist(),
                      "task_folds": method.table["fold"].tolist(),
                      "top_tasks": [[t for t, selected in enumerate(method.genes)
                                     if g["index"] in set(selected.tolist())]
                                    for g in ranked[:STABILITY_GENES]]})
        if method.histories:
            curves.append({"dataset": dataset_label(method), "method": method.label,
                           "file": str(method.path),
                           "objective": (method.attrs.get("params") or {}).get("objective"),
                           "best_fitness": mean_curve(method.histories,
                                                      method.history_columns).tolist(),
                           "best_accuracy": accuracy_curve(method)})
        if method.fronts and all(method.fronts):
            fronts.append({
                "dataset": dataset_label(method), "method": method.label,
                "file": str(method.path), "biased": method.biased,
                "budgets": signature_budgets(method, sizes),
                "refine": method.attrs.get("refine") if method.refined_genes else None,
                "tasks": [{"run": int(run), "fold": int(fold), "points": [
                    {"size": p.size, "inner": p.inner_accuracy, "test": p.test_accuracy}
                    for p in front], "refined": refined}
                    for run, fold, front, refined in zip(runs, method.table["fold"],
                                                          method.fronts, refined_points(method))]})
    if fronts:
        notes.append(f"{FRONT_NOTE}.")
    finals = [dict(method.final.as_json(method.gene_names), dataset=dataset_label(method),
                   method=method.label, file=str(method.path),
                   n_samples=int(method.attrs.get("n_samples") or 0))
              for method in methods if method.final is not None]
    return {"reference": ref.label, "alpha": alpha, "rows": rows, "genes": genes,
            "convergence": curves, "fronts": fronts, "final_signatures": finals,
            "notes": sorted(set(notes))}


# ------------------------------------------------------------------ formatting
def _fmt_row(row):
    mark = "*" if row["biased"] and row["method"] not in (ALL_GENES, PCA_KNN) else ""
    return [row["dataset"], row["method"] + mark, row["protocol"], str(row["runs"]),
            f"{row['ave_size']:.2f}", f"{row['best']:.2f}",
            f"{row['mean']:.2f} +/- {row['std']:.2f}", row["test"],
            "" if row["p_value"] is None else f"{row['p_value']:.3g} (n={row['pairs']})",
            _fmt_index(row.get("kuncheva")), _fmt_index(row.get("jaccard"))]


def _fmt_index(value):
    return "" if value is None else f"{round(value, 3) + 0.0:.3f}"


_HEADER = ["Dataset", "Method", "Protocol", "Runs", "Ave-Size", "Best", "Mean +/- Std", "T",
           "p", "Kuncheva", "Jaccard"]

_BUDGET_HEADER = ["Genes at most", "Tasks", "Mean size", "Inner acc. (%)", "Test acc. (%)"]


def _budget_rows(entry):
    n_tasks = len(entry["tasks"])
    rows = []
    for b in entry["budgets"]:
        if b["size"] is None:
            rows.append([b["budget"], f"0/{n_tasks}", "no front point that small", "", ""])
            continue
        rows.append([b["budget"], f"{b['tasks']}/{n_tasks}", f"{b['size']:.1f}",
                     f"{b['inner']:.2f}",
                     "n/a (biased)" if b["test"] is None else f"{b['test']:.2f}"])
    return rows


def _convergence_lines(entry):
    """The convergence row of a method: the best subset's inner accuracy per round when its
    objective can be inverted (:func:`fitness_accuracy`), else its fitness."""
    accuracy = entry.get("best_accuracy")
    curve = entry["best_fitness"] if accuracy is None else accuracy
    points = _sample_points(len(curve))
    what = (f"Mean gbest fitness ({entry['objective']})"
            if accuracy is None or entry["objective"] == "accuracy"
            else f"Mean gbest inner accuracy (from its {entry['objective']} fitness)")
    return [_heading("Convergence", entry), f"  {what} per round"], _text_table(
        ["Round"] + [str(p) for p in points],
        [["accuracy" if accuracy is not None else "fitness"]
         + ["" if curve[p] is None else f"{curve[p]:.4f}" for p in points]])


_FINAL_HEADER = ["Gene", "Index (0-based)", "Fold frequency"]

_TOP_GENES_HEADER = ["Rank", "Index (0-based)", "Feature (1-based)", "Gene", "Count",
                     "Frequency"]


def _top_gene_rows(entry):
    """The rows of a method's most frequently selected genes (:data:`_TOP_GENES_HEADER`)."""
    return [[i + 1, g["index"], g["index"] + 1, g["name"], g["count"], f"{g['frequency']:.2f}"]
            for i, g in enumerate(entry["top"])]


def _final_title(entry):
    """The lines that introduce a final signature: what it is and what estimates it."""
    estimate, stable = entry["estimate"], entry["stability"]
    nogueira = stable.get("nogueira")
    refined = f", refined by {entry['refine']}" if entry["refine"] != "none" else ""
    lines = [_heading("Final signature", entry),
             f"  {entry['size']} genes; one search on all {entry['n_samples']} samples{refined}",
             f"  estimate of the method (outer cross-validation, row {estimate['row']}): "
             f"mean {100 * estimate['mean']:.2f} +/- {100 * estimate['std']:.2f}% over "
             f"{estimate['n']} run(s)",
             f"  inner accuracy of the signature on all samples: "
             f"{100 * entry['inner_accuracy']:.2f}% (optimistic: selected on the same samples, "
             f"not an estimate)",
             f"  stability of the folds' selections: Kuncheva within runs "
             f"{_fmt_index(stable['folds']['kuncheva']) or 'n/a'}, between runs "
             f"{_fmt_index(stable['runs']['kuncheva']) or 'n/a (one run)'}"
             + ("" if nogueira is None else
                f"; Nogueira {nogueira['estimate']:.3f} "
                f"[{nogueira['lower']:.3f}, {nogueira['upper']:.3f}] "
                f"({100 * (1 - nogueira['alpha']):.0f}% CI)")]
    return lines


def _final_header(entry):
    subsample = entry["genes"] and "subsample_frequency" in entry["genes"][0]
    return _FINAL_HEADER + (["Subsample frequency"] if subsample else [])


def _final_rows(entry):
    """The final signature's genes, most often selected first (by the subsample searches
    first when the refinement had them, then by the folds)."""
    genes = sorted(entry["genes"], key=lambda g: (-g.get("subsample_frequency", 0),
                                                  -g["frequency"], g["index"]))
    return [[g["name"], g["index"], f"{g['frequency']:.2f}"]
            + ([f"{g['subsample_frequency']:.2f}"] if "subsample_frequency" in g else [])
            for g in genes]


def _stability_lines(report):
    """Stability of each method's selections with its uncertainty (Nogueira et al. 2018)."""
    body = []
    for entry in report["genes"]:
        detail = entry.get("stability_detail")
        if detail is None:
            continue
        nogueira = detail["nogueira"]
        body.append([entry["dataset"], entry["method"],
                     _fmt_index(detail["folds"]["kuncheva"]),
                     _fmt_index(detail["folds"]["jaccard"]),
                     _fmt_index(detail["runs"]["kuncheva"]),
                     _fmt_index(detail["runs"]["jaccard"]),
                     "" if nogueira is None else
                     f"{nogueira['estimate']:.3f} [{nogueira['lower']:.3f}, "
                     f"{nogueira['upper']:.3f}]",
                     _fmt_index(detail.get("sechidis"))])
    if not body:
        return []
    return ["", _heading("Stability of the selections"),
            "  Kuncheva and Jaccard over pairs of one run's folds and over pairs of different "
            "runs; Nogueira et al. (2018) with its 95% CI; Sechidis et al. (2019), genes with "
            f"|r| >= {SIMILARITY_THRESHOLD} counted as one"] + \
        _text_table(["Dataset", "Method", "Kuncheva folds", "Jaccard folds", "Kuncheva runs",
                     "Jaccard runs", "Nogueira [95% CI]", "Sechidis"], body)


def _heading(title, entry=None):
    """A section's heading: its title, and the method and dataset it is about (the details
    go on the lines below it)."""
    return title if entry is None else f"{title} ({entry['method']} on {entry['dataset']})"


def _front_title(entry):
    return [_heading("Signatures by size", entry),
            f"  {len(entry['tasks'])} task fronts; chosen by inner accuracy, test accuracy "
            f"reported only"]


def _text_table(header, body):
    widths = [max(len(str(c)) for c in column) for column in zip(header, *body)]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(header, widths)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(str(c).ljust(w) for c, w in zip(line, widths)).rstrip() for line in body]
    return lines


def _sample_points(length, n=10):
    return sorted(set(np.linspace(0, length - 1, min(n, length)).round().astype(int).tolist()))


def _test_legend(report):
    """What the T and p columns hold."""
    return (f"one-sided Wilcoxon signed-rank test of the per-fold accuracies over the matched "
            f"(run, fold) pairs, vs {report['reference']} (a refined row: vs its search row), "
            f"exact for up to {EXACT_PAIRS} pairs that differ, pairs of equal accuracy dropped, "
            f"each direction at alpha={report['alpha']} (+ higher, - lower, = no significant "
            f"difference); p (n): the one-sided p and the pairs that differ")


def text_lines(report):
    """The report as terminal lines."""
    lines = [_heading("Accuracy by method"),
             f"  Accuracy (%) over runs; T: {_test_legend(report)}; stability over runs and "
             f"folds: Kuncheva's index, mean pairwise Jaccard"]
    lines += _text_table(_HEADER, [_fmt_row(r) for r in report["rows"]])
    lines += report["notes"]
    for entry in report.get("fronts", []):
        lines += [""] + _front_title(entry)
        lines += _text_table(_BUDGET_HEADER, _budget_rows(entry))
    lines += _stability_lines(report)
    for entry in report.get("final_signatures", []):
        lines += [""] + _final_title(entry)
        lines += _text_table(_final_header(entry), _final_rows(entry))
    for entry in report["genes"]:
        lines += ["", _heading("Most frequently selected genes", entry),
                  f"  {entry['tasks']} selections; {entry['file']}"]
        lines += _text_table(_TOP_GENES_HEADER, _top_gene_rows(entry))
    for entry in report["convergence"]:
        title, table = _convergence_lines(entry)
        lines += [""] + title + table
    return lines


def markdown_text(report):
    """The methods and genes tables as Markdown."""
    def table(header, body):
        out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        out += ["| " + " | ".join(str(c) for c in line) + " |" for line in body]
        return out

    lines = [f"## {_heading('Accuracy by method')}", "",
             f"Accuracy (%) over runs; T: {_test_legend(report)}.", ""]
    lines += table(_HEADER, [_fmt_row(r) for r in report["rows"]])
    lines += [""] + [note for note in report["notes"]]
    for entry in report.get("fronts", []):
        heading, detail = _front_title(entry)
        lines += ["", f"## {heading}", "", detail.strip() + ".", ""]
        lines += table(_BUDGET_HEADER, _budget_rows(entry))
    for entry in report.get("final_signatures", []):
        heading, *details = _final_title(entry)
        lines += ["", f"## {heading}", ""] + [f"- {line.strip()}" for line in details] + [""]
        lines += table(_final_header(entry), _final_rows(entry))
    for entry in report["genes"]:
        lines += ["", f"## {_heading('Most frequently selected genes', entry)}", "",
                  f"{entry['tasks']} selections.", ""]
        lines += table(_TOP_GENES_HEADER, _top_gene_rows(entry))
    return "\n".join(lines) + "\n"


CSV_FILES = ("methods.csv", "genes.csv", "convergence.csv", "fronts.csv", "signatures.csv")
"""The files ``--csv DIR`` writes."""


def csv_texts(report):
    """``{"methods.csv": text, "genes.csv": text, "convergence.csv": text}``."""
    def render(header, body):
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(body)
        return out.getvalue()

    columns = ["dataset", "method", "protocol", "biased", "runs", "ave_size", "best", "mean",
               "std", "test", "p_value", "pairs", "min_p", "versus", "kuncheva", "jaccard",
               "file"]
    methods = render(columns, [[r[c] for c in columns] for r in report["rows"]])
    genes = render(["method", "rank", "index", "gene", "count", "frequency"],
                   [[e["method"], i + 1, g["index"], g["name"], g["count"], g["frequency"]]
                    for e in report["genes"] for i, g in enumerate(e["top"])])
    convergence = render(["method", "round", "mean_best_fitness", "mean_best_accuracy"],
                         [[e["method"], t, v,
                           None if e.get("best_accuracy") is None else e["best_accuracy"][t]]
                          for e in report["convergence"]
                          for t, v in enumerate(e["best_fitness"])])
    fronts = render(["dataset", "method", "run", "fold", "size", "inner_accuracy",
                     "test_accuracy"],
                    [[e["dataset"], e["method"], t["run"], t["fold"], p["size"], p["inner"],
                      p["test"]] for e in report.get("fronts", []) for t in e["tasks"]
                     for p in t["points"]])
    signatures = render(["dataset", "method", "budget", "mean_size", "inner_accuracy",
                         "test_accuracy", "tasks"],
                        [[e["dataset"], e["method"], b["budget"], b["size"], b["inner"],
                          b["test"], b["tasks"]] for e in report.get("fronts", [])
                         for b in e["budgets"]])
    return dict(zip(CSV_FILES, (methods, genes, convergence, fronts, signatures)))


def genes_text(entry):
    """One method's selected genes, ranked, as a gene list (``--genes``,
    :func:`hpcswarm.genelist.gene_table`).

    Columns: gene (name), feature (1-based column, Tran et al.'s Table 6 numbering), column
    (0-based), frequency (share of the tasks that selected it), mean_rank (see
    :func:`hpcswarm.stability.ranked_genes`), selections. The first column pastes into an
    enrichment tool as it is.
    """
    return gene_table(("frequency", "mean_rank", "selections"),
                      [(g["name"], g["index"], f"{g['frequency']:.4f}", f"{g['mean_rank']:.2f}",
                        g["count"]) for g in entry["ranked"]])


def gene_list_paths(report, genes_path):
    """Where ``--genes PATH`` writes each method's list: ``PATH`` itself for a report of one
    method, else ``STEM.METHOD.SUFFIX`` beside it (``STEM.DATASET.METHOD.SUFFIX`` when the
    report spans several datasets), characters other than letters, digits and ``+._-``
    written as ``_``. Returns ``(path, entry)`` pairs, one per method."""
    entries = report["genes"]
    if len(entries) == 1:
        return [(Path(genes_path), entries[0])]
    path = Path(genes_path)
    several = len({entry["dataset"] for entry in entries}) > 1
    pairs, taken = [], set()
    for entry in entries:
        label = f"{entry['dataset']}.{entry['method']}" if several else entry["method"]
        name = f"{path.stem}.{re.sub(r'[^A-Za-z0-9+._-]', '_', label)}"
        unique, count = name, 1
        while unique in taken:
            count += 1
            unique = f"{name}-{count}"
        taken.add(unique)
        pairs.append((path.with_name(unique + path.suffix), entry))
    return pairs


def _missing_folders(folder, option):
    """The folders to create for ``folder`` (outermost first); DataError if ``folder`` or one
    above it exists and is not a folder."""
    missing = []
    for path in [Path(folder), *Path(folder).parents]:
        if path.is_dir():
            break
        if path.exists():
            raise DataError(f"{option} {folder}: {path} exists and is not a folder")
        missing.append(path)
    return missing[::-1]


@contextmanager
def _folders(requested):
    """Create the missing output folders (``(option, folder)`` pairs); remove those created
    if the block fails."""
    missing = [(option, folder, path) for option, folder in requested if folder is not None
               for path in _missing_folders(folder, option)]
    created = []
    try:
        for option, folder, path in missing:
            if not path.is_dir():
                try:
                    path.mkdir()
                except OSError as exc:
                    raise DataError(f"{option} {folder}: cannot create the folder {path} "
                                    f"({reason(exc)})") from None
                created.append(path)
        yield
    except BaseException:
        for path in reversed(created):
            try:
                path.rmdir()
            except OSError:
                pass
        raise


def _plot_view(report):
    """The report without the size budgets no front reaches (the plots draw the others)."""
    return dict(report, fronts=[dict(e, budgets=[b for b in e["budgets"] if b["tasks"]])
                                for e in report.get("fronts", [])])


def report_command(paths, *, reference=None, alpha=0.05, top=10, csv_dir=None, markdown=None,
                   json_path=None, plots=None, genes_path=None, sizes=None, print0=print,
                   overwrite=False):
    """The ``report`` command: print the text tables, write the files asked for.

    Every file it would write is checked first (:func:`hpcswarm.outputs.check_outputs`): none
    may be one of the results files read, and none may exist unless ``overwrite``. The
    folders ``csv_dir`` and ``plots`` are created if missing (and removed again if the
    checks fail). ``genes_path``: the ranked genes of each method (:func:`genes_text`), one
    list per method (:func:`gene_list_paths`), each a list ``evaluate --genes`` reads. ``sizes``: the signature sizes (see
    :func:`build_report`).
    """
    for folder, option in ((csv_dir, "--csv"), (plots, "--plots")):
        if folder is not None:
            _missing_folders(folder, option)
    report = build_report(paths, reference=reference, alpha=alpha, top=top, sizes=sizes)
    with _folders([("--csv", csv_dir), ("--plots", plots)]):
        _check_report_outputs(report, paths, csv_dir, markdown, json_path, plots, genes_path,
                              overwrite)
    for line in text_lines(report):
        print0(line)
    if csv_dir is not None:
        for name, text in csv_texts(report).items():
            write_text(Path(csv_dir) / name, text, overwrite=overwrite)
        print0(f"wrote {', '.join(CSV_FILES)} in {csv_dir}")
    if markdown is not None:
        write_text(markdown, markdown_text(report), overwrite=overwrite)
        print0(f"wrote {markdown}")
    if json_path is not None:
        compact = dict(report, genes=[{k: v for k, v in entry.items()
                                       if k not in ("ranked", "top_tasks", "task_runs",
                                                    "task_folds")}
                                      for entry in report["genes"]])
        write_json(json_path, {**tags(REPORT_ENCODING), **compact}, indent=1,
                   overwrite=overwrite)
        print0(f"wrote {json_path}")
    if genes_path is not None:
        for path, entry in gene_list_paths(report, genes_path):
            write_text(path, genes_text(entry), overwrite=overwrite)
            print0(f"wrote {path}: {len(entry['ranked'])} ranked genes of {entry['method']}")
    if plots is not None:
        written = write_plots(_plot_view(report), plots, overwrite)
        if written is None:
            print0("note: matplotlib is not installed (pip install 'hpcswarm[plot]'); "
                   "no plots written")
        else:
            print0(f"wrote {', '.join(p.name for p in written)} in {plots}")
    return report


def _check_report_outputs(report, paths, csv_dir, markdown, json_path, plots, genes_path,
                          overwrite):
    """:func:`hpcswarm.outputs.check_outputs` on every file the report would write."""
    outputs = [("--csv", Path(csv_dir) / name) for name in CSV_FILES] if csv_dir is not None else []
    outputs += [(option, path) for option, path in (("--markdown", markdown),
                                                    ("--json", json_path)) if path is not None]
    if genes_path is not None:
        outputs += [("--genes", path) for path, _ in gene_list_paths(report, genes_path)]
    if plots is not None and plotting_available():
        outputs += [("--plots", path) for path in plot_files(_plot_view(report), plots)]
    check_outputs(outputs, [("the results file", path) for path in paths], overwrite=overwrite)
