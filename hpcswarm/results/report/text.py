"""The report as text: terminal tables (:func:`text_lines`) and Markdown (:func:`markdown_text`),
read from the fields of a :class:`~hpcswarm.results.report.model.Report`."""

import numpy as np

from hpcswarm.results.report.build import ALL_GENES, PCA_KNN
from hpcswarm.results.report.model import as_report
from hpcswarm.results.significance import EXACT_PAIRS
from hpcswarm.signatures.stability import SIMILARITY_THRESHOLD


def _fmt_row(row):
    mark = "*" if row.biased and row.method not in (ALL_GENES, PCA_KNN) else ""
    return [row.dataset, row.method + mark, row.protocol, str(row.runs),
            f"{row.ave_size:.2f}", f"{row.best:.2f}",
            f"{row.mean:.2f} +/- {row.std:.2f}",
            "" if row.balanced is None else f"{row.balanced:.2f} +/- {row.balanced_std:.2f}",
            row.test,
            "" if row.p_value is None else f"{row.p_value:.3g} (n={row.pairs})",
            _fmt_index(row.kuncheva), _fmt_index(row.jaccard)]


def _fmt_index(value):
    return "" if value is None else f"{round(value, 3) + 0.0:.3f}"


_HEADER = ["Dataset", "Method", "Protocol", "Runs", "Ave-Size", "Best", "Mean +/- Std",
           "Balanced", "T", "p", "Kuncheva", "Jaccard"]

_BUDGET_HEADER = ["Genes at most", "Tasks", "Mean size", "Inner acc. (%)", "Test acc. (%)"]


def _budget_rows(entry):
    n_tasks = len(entry.tasks)
    rows = []
    for b in entry.budgets:
        if b.size is None:
            rows.append([b.budget, f"0/{n_tasks}", "no front point that small", "", ""])
            continue
        rows.append([b.budget, f"{b.tasks}/{n_tasks}", f"{b.size:.1f}",
                     f"{b.inner:.2f}",
                     "n/a (biased)" if b.test is None else f"{b.test:.2f}"])
    return rows


def _convergence_lines(entry):
    """The convergence row of a method: the best subset's inner accuracy per round when its
    objective can be inverted (:func:`fitness_accuracy`), else its fitness."""
    accuracy = entry.best_accuracy
    curve = entry.best_fitness if accuracy is None else accuracy
    points = _sample_points(len(curve))
    what = (f"Mean gbest fitness ({entry.objective})"
            if accuracy is None or entry.objective == "accuracy"
            else f"Mean gbest inner accuracy (from its {entry.objective} fitness)")
    return [_heading("Convergence", entry), f"  {what} per round"], _text_table(
        ["Round"] + [str(p) for p in points],
        [["accuracy" if accuracy is not None else "fitness"]
         + ["" if curve[p] is None else f"{curve[p]:.4f}" for p in points]])


_FINAL_HEADER = ["Gene", "Index (0-based)", "Fold frequency"]

_TOP_GENES_HEADER = ["Rank", "Index (0-based)", "Feature (1-based)", "Gene", "Count",
                     "Frequency"]


def _top_gene_rows(entry):
    """The rows of a method's most frequently selected genes (:data:`_TOP_GENES_HEADER`)."""
    return [[i + 1, g.index, g.index + 1, g.name, g.count, f"{g.frequency:.2f}"]
            for i, g in enumerate(entry.top)]


def _sizes_line(entry, rows):
    """Why the signature's size is not the size of the row whose estimate covers it (the
    row of ``rows`` named by the estimate, on the same dataset); empty without that row."""
    row = next((r for r in rows if r.method == entry.estimate["row"]
                and r.dataset == entry.dataset), None)
    if row is None:
        return []
    return [f"  its size and row {row.method}'s differ: the row's {row.ave_size:.1f} genes are "
            f"the mean over its outer folds' own searches, each on a fold's training samples; "
            f"this signature is one more search of the same method on all samples, so the "
            f"row's estimate covers the method that chose these {entry.size} genes, not this "
            f"gene set itself"]


def _final_title(entry, rows=()):
    """The lines that introduce a final signature: what it is, what estimates it (the row of
    the methods table among ``rows``) and why its size differs from that row's."""
    estimate, stable = entry.estimate, entry.stability
    nogueira = stable.get("nogueira")
    refined = f", refined by {entry.refine}" if entry.refine != "none" else ""
    lines = [_heading("Final signature", entry),
             f"  {entry.size} genes; one search on all {entry.n_samples} samples{refined}",
             f"  estimate of the method (outer cross-validation, row {estimate['row']}): "
             f"mean {100 * estimate['mean']:.2f} +/- {100 * estimate['std']:.2f}% over "
             f"{estimate['n']} run(s)",
             *_sizes_line(entry, rows),
             f"  inner accuracy of the signature on all samples: "
             f"{100 * entry.inner_accuracy:.2f}% (optimistic: selected on the same samples, "
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
    subsample = entry.genes and "subsample_frequency" in entry.genes[0]
    return _FINAL_HEADER + (["Subsample frequency"] if subsample else [])


def _final_rows(entry):
    """The final signature's genes, most often selected first (by the subsample searches
    first when the refinement had them, then by the folds)."""
    genes = sorted(entry.genes, key=lambda g: (-g.get("subsample_frequency", 0),
                                                  -g["frequency"], g["index"]))
    return [[g['name'], g['index'], f"{g['frequency']:.2f}"]
            + ([f"{g['subsample_frequency']:.2f}"] if "subsample_frequency" in g else [])
            for g in genes]


def _stability_lines(report):
    """Stability of each method's selections with its uncertainty (Nogueira et al. 2018)."""
    body = []
    for entry in report.genes:
        detail = entry.stability_detail
        if detail is None:
            continue
        nogueira = detail["nogueira"]
        body.append([entry.dataset, entry.method,
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
    return title if entry is None else f"{title} ({entry.method} on {entry.dataset})"


def _front_title(entry):
    return [_heading("Signatures by size", entry),
            f"  {len(entry.tasks)} task fronts; chosen by inner accuracy, test accuracy "
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
            f"(run, fold) pairs, vs {report.reference} (a refined row: vs the search row of its "
            f"file), exact for up to {EXACT_PAIRS} pairs that differ, pairs of equal accuracy "
            f"dropped, each direction at alpha={report.alpha} (+ higher, - lower: p <= alpha; "
            f"= no significant difference); p (n): the one-sided p and the pairs that differ")


def text_lines(report):
    """The report as terminal lines; ``report``: a :class:`~hpcswarm.results.report.model.Report` or
    its JSON form (:func:`~hpcswarm.results.report.model.as_report`)."""
    report = as_report(report)
    lines = [_heading("Accuracy by method"),
             f"  Accuracy (%) over runs; T: {_test_legend(report)}; stability over runs and "
             f"folds: Kuncheva's index, mean pairwise Jaccard"]
    lines += _text_table(_HEADER, [_fmt_row(r) for r in report.rows])
    lines += report.notes
    for entry in report.fronts:
        lines += [""] + _front_title(entry)
        lines += _text_table(_BUDGET_HEADER, _budget_rows(entry))
    lines += _stability_lines(report)
    for entry in report.final_signatures:
        lines += [""] + _final_title(entry, report.rows)
        lines += _text_table(_final_header(entry), _final_rows(entry))
    for entry in report.genes:
        lines += ["", _heading("Most frequently selected genes", entry),
                  f"  {entry.tasks} selections; {entry.file}"]
        lines += _text_table(_TOP_GENES_HEADER, _top_gene_rows(entry))
    for entry in report.convergence:
        title, table = _convergence_lines(entry)
        lines += [""] + title + table
    return lines


def markdown_text(report):
    """The methods and genes tables as Markdown (of a report or its JSON form, as
    :func:`text_lines`)."""
    report = as_report(report)

    def table(header, body):
        out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        out += ["| " + " | ".join(str(c) for c in line) + " |" for line in body]
        return out

    lines = [f"## {_heading('Accuracy by method')}", "",
             f"Accuracy (%) over runs; T: {_test_legend(report)}.", ""]
    lines += table(_HEADER, [_fmt_row(r) for r in report.rows])
    lines += [""] + [note for note in report.notes]
    for entry in report.fronts:
        heading, detail = _front_title(entry)
        lines += ["", f"## {heading}", "", detail.strip() + ".", ""]
        lines += table(_BUDGET_HEADER, _budget_rows(entry))
    for entry in report.final_signatures:
        heading, *details = _final_title(entry, report.rows)
        lines += ["", f"## {heading}", ""] + [f"- {line.strip()}" for line in details] + [""]
        lines += table(_final_header(entry), _final_rows(entry))
    for entry in report.genes:
        lines += ["", f"## {_heading('Most frequently selected genes', entry)}", "",
                  f"{entry.tasks} selections.", ""]
        lines += table(_TOP_GENES_HEADER, _top_gene_rows(entry))
    return "\n".join(lines) + "\n"


