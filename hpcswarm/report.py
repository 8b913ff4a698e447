"""The papers' tables from results files: accuracy and size per method, top genes, convergence.

- Methods table (Tran et al. Tables 3 and 5; Gu et al. Table 2; Li et al. Tables II-III):
  average subset size, best and mean +/- std accuracy over runs (a run's accuracy pools its
  folds), and a Wilcoxon rank-sum test (:func:`scipy.stats.ranksums`) of each method's
  per-run accuracies against a reference method's: ``+`` significantly higher than the
  reference, ``-`` significantly lower, ``=`` no significant difference (Tran et al.'s
  convention; Gu et al. and Li et al. write the reverse, from the reference's side). The
  all-genes k-NN under the same protocol is the ``All`` row of each dataset.
- Top genes (Tran et al. Table 6): the genes most often selected across runs and folds.
- Convergence (Tran et al. Fig. 3; Li et al. Fig. 2): mean gbest fitness per round.

Text tables go to the terminal; CSV, Markdown, JSON and PNG (matplotlib, optional) on request.
"""

import csv
import io
from pathlib import Path

import numpy as np

from hpcswarm.atomic import atomic_path, write_json, write_text
from hpcswarm.encoding import tags
from hpcswarm.errors import DataError, ParameterError
from hpcswarm.protocols import BIAS_NOTE
from hpcswarm.results import describe, gene_frequencies, mean_curve, read_results, run_accuracies

REPORT_ENCODING = ("hpcswarm-report", "0.1.0")
"""``encoding-type`` and ``encoding-version`` of the ``--json`` document."""

ALL_GENES = "All"
PCA_KNN = "PCA-kNN"
"""Rows of the baselines every results file carries; PCA-kNN's Ave-Size is its mean number
of principal components."""


def significance(values, reference, alpha=0.05):
    """``+``/``-``/``=``: ``values`` significantly above / below ``reference`` (rank-sum test).

    Returns (symbol, p-value); ``=`` with p = 1 when either sample has fewer than 2 values
    or both are constant and equal.
    """
    from scipy.stats import ranksums

    values, reference = np.asarray(values, float), np.asarray(reference, float)
    if values.size < 2 or reference.size < 2:
        return "=", 1.0
    if np.ptp(np.concatenate([values, reference])) == 0:
        return "=", 1.0
    p = float(ranksums(values, reference).pvalue)
    if p >= alpha:
        return "=", p
    return ("+" if np.median(values) > np.median(reference)
            or (np.median(values) == np.median(reference) and values.mean() > reference.mean())
            else "-"), p


def _same_experiment(a, b):
    """Whether two results files hold parts of one experiment (all but the runs agree)."""
    keys = ("dataset_sha256", "name", "algorithm", "protocol", "params", "seed")
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
            history_columns=first.history_columns))
    return joined


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


def build_report(paths, reference=None, alpha=0.05, top=10):
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
        Significance level of the rank-sum tests.
    top : int
        Genes listed per method.

    Returns
    -------
    dict
        ``rows`` (the methods table), ``genes`` (per method), ``convergence`` (per method),
        ``reference``, ``alpha``, ``notes``.
    """
    if not 0 < alpha < 1:
        raise ParameterError(f"--alpha must lie in (0, 1), got {alpha}")
    methods = pool_parts([read_results(path) for path in paths])
    ref_index = _pick_reference(methods, reference)
    ref = methods[ref_index]
    rows, genes, curves, notes = [], [], [], []
    datasets = []
    for method in methods:
        key = method.attrs.get("dataset_sha256")
        if key not in [d[0] for d in datasets]:
            datasets.append((key, method.attrs.get("dataset")))
    for key, dataset in datasets:
        members = [m for m in methods if m.attrs.get("dataset_sha256") == key]
        compare_to = ref if ref.attrs.get("dataset_sha256") == key else None
        ref_values = run_accuracies(compare_to.table) if compare_to is not None else None
        base = compare_to or members[0]
        entries = [(ALL_GENES, base, run_accuracies(base.table, "baseline"),
                    len(base.gene_names), False)]
        if "pca_correct" in base.table:
            entries.append((PCA_KNN, base, run_accuracies(base.table, "pca"),
                            float(base.table["pca_components"].mean()), False))
        entries += [(m.label, m, run_accuracies(m.table), float(m.table["subset_size"].mean()),
                     m is compare_to) for m in members]
        for label, method, values, size, is_ref in entries:
            stats = describe(values)
            if is_ref:
                symbol, p = "ref", None
            elif ref_values is None:
                symbol, p = "", None
            else:
                symbol, p = significance(values, ref_values, alpha)
            rows.append({
                "dataset": Path(str(dataset)).stem, "dataset_sha256": key, "method": label,
                "protocol": method.attrs.get("protocol"), "biased": method.biased,
                "runs": stats["n"], "ave_size": size, "best": 100 * stats["best"],
                "mean": 100 * stats["mean"], "std": 100 * stats["std"], "test": symbol,
                "p_value": p, "file": str(method.path),
            })
        if any(m.biased for m in members):
            notes.append(f"* {BIAS_NOTE}")
    for method in methods:
        n_tasks = len(method.genes)
        genes.append({"method": method.label, "file": str(method.path), "tasks": n_tasks,
                      "top": gene_frequencies(method.genes, method.gene_names, n_tasks, top)})
        curves.append({"method": method.label, "file": str(method.path),
                       "objective": (method.attrs.get("params") or {}).get("objective"),
                       "best_fitness": mean_curve(method.histories,
                                                  method.history_columns).tolist()})
    return {"reference": ref.label, "alpha": alpha, "rows": rows, "genes": genes,
            "convergence": curves, "notes": sorted(set(notes))}


# ------------------------------------------------------------------ formatting
def _fmt_row(row):
    mark = "*" if row["biased"] and row["method"] not in (ALL_GENES, PCA_KNN) else ""
    return [row["dataset"], row["method"] + mark, row["protocol"], str(row["runs"]),
            f"{row['ave_size']:.2f}", f"{row['best']:.2f}",
            f"{row['mean']:.2f} +/- {row['std']:.2f}", row["test"],
            "" if row["p_value"] is None else f"{row['p_value']:.3g}"]


_HEADER = ["Dataset", "Method", "Protocol", "Runs", "Ave-Size", "Best", "Mean +/- Std", "T",
           "p"]


def _text_table(header, body):
    widths = [max(len(str(c)) for c in column) for column in zip(header, *body)]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(header, widths)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(str(c).ljust(w) for c, w in zip(line, widths)).rstrip() for line in body]
    return lines


def _sample_points(length, n=10):
    return sorted(set(np.linspace(0, length - 1, min(n, length)).round().astype(int).tolist()))


def text_lines(report):
    """The report as terminal lines."""
    lines = [f"Accuracy (%) over runs; T: Wilcoxon rank-sum vs {report['reference']} at "
             f"alpha={report['alpha']} (+ higher, - lower, = no significant difference)"]
    lines += _text_table(_HEADER, [_fmt_row(r) for r in report["rows"]])
    lines += report["notes"]
    for entry in report["genes"]:
        lines += ["", f"Most frequently selected genes: {entry['method']} "
                      f"({entry['tasks']} selections, {entry['file']})"]
        lines += _text_table(["Rank", "Index (0-based)", "Feature (1-based)", "Gene", "Count",
                              "Frequency"],
                             [[i + 1, g["index"], g["index"] + 1, g["name"], g["count"],
                               f"{g['frequency']:.2f}"]
                              for i, g in enumerate(entry["top"])])
    for entry in report["convergence"]:
        curve = entry["best_fitness"]
        points = _sample_points(len(curve))
        lines += ["", f"Mean gbest fitness ({entry['objective']}) per round: {entry['method']}"]
        lines += _text_table(["Round"] + [str(p) for p in points],
                             [["fitness"] + [f"{curve[p]:.4f}" for p in points]])
    return lines


def markdown_text(report):
    """The methods and genes tables as Markdown."""
    def table(header, body):
        out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        out += ["| " + " | ".join(str(c) for c in line) + " |" for line in body]
        return out

    lines = [f"Accuracy (%) over runs; T: Wilcoxon rank-sum vs {report['reference']} "
             f"(alpha = {report['alpha']}; + higher, - lower, = no significant difference).", ""]
    lines += table(_HEADER, [_fmt_row(r) for r in report["rows"]])
    lines += [""] + [note for note in report["notes"]]
    for entry in report["genes"]:
        lines += ["", f"Most frequently selected genes: {entry['method']} "
                      f"({entry['tasks']} selections)", ""]
        lines += table(["Rank", "Index (0-based)", "Feature (1-based)", "Gene", "Count",
                        "Frequency"],
                       [[i + 1, g["index"], g["index"] + 1, g["name"], g["count"],
                         f"{g['frequency']:.2f}"]
                        for i, g in enumerate(entry["top"])])
    return "\n".join(lines) + "\n"


def csv_texts(report):
    """``{"methods.csv": text, "genes.csv": text, "convergence.csv": text}``."""
    def render(header, body):
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(body)
        return out.getvalue()

    columns = ["dataset", "method", "protocol", "biased", "runs", "ave_size", "best", "mean",
               "std", "test", "p_value", "file"]
    methods = render(columns, [[r[c] for c in columns] for r in report["rows"]])
    genes = render(["method", "rank", "index", "gene", "count", "frequency"],
                   [[e["method"], i + 1, g["index"], g["name"], g["count"], g["frequency"]]
                    for e in report["genes"] for i, g in enumerate(e["top"])])
    convergence = render(["method", "round", "mean_best_fitness"],
                         [[e["method"], t, v] for e in report["convergence"]
                          for t, v in enumerate(e["best_fitness"])])
    return {"methods.csv": methods, "genes.csv": genes, "convergence.csv": convergence}


def write_plots(report, folder):
    """PNG convergence curves and gene-frequency charts; returns the files written.

    Needs matplotlib (the optional ``plot`` extra); returns None without it.
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    folder = Path(folder)
    written = []
    fig, ax = plt.subplots(figsize=(6, 4))
    for entry in report["convergence"]:
        ax.plot(entry["best_fitness"], label=entry["method"])
    ax.set_xlabel("round")
    ax.set_ylabel("mean gbest fitness")
    ax.legend()
    fig.tight_layout()
    target = folder / "convergence.png"
    _save_png(fig, target)
    plt.close(fig)
    written.append(target)
    for i, entry in enumerate(report["genes"]):
        fig, ax = plt.subplots(figsize=(6, 4))
        top = entry["top"]
        ax.barh([g["name"] for g in top][::-1], [g["frequency"] for g in top][::-1])
        ax.set_xlabel("selection frequency over runs and folds")
        ax.set_title(entry["method"])
        fig.tight_layout()
        target = folder / f"genes-{i + 1}-{_safe(entry['method'])}.png"
        _save_png(fig, target)
        plt.close(fig)
        written.append(target)
    return written


def _save_png(fig, target):
    with atomic_path(target) as temporary:
        fig.savefig(temporary, dpi=120, format="png")


def _safe(text):
    return "".join(c if c.isalnum() or c in "-_" else "-" for c in text)


def report_command(paths, *, reference=None, alpha=0.05, top=10, csv_dir=None, markdown=None,
                   json_path=None, plots=None, print0=print):
    """The ``report`` command: print the text tables, write the files asked for."""
    for folder, option in ((csv_dir, "--csv"), (plots, "--plots")):
        if folder is not None and not Path(folder).is_dir():
            raise DataError(f"{option} {folder}: no such folder")
    report = build_report(paths, reference=reference, alpha=alpha, top=top)
    for line in text_lines(report):
        print0(line)
    if csv_dir is not None:
        for name, text in csv_texts(report).items():
            write_text(Path(csv_dir) / name, text)
        print0(f"wrote methods.csv, genes.csv, convergence.csv in {csv_dir}")
    if markdown is not None:
        write_text(markdown, markdown_text(report))
        print0(f"wrote {markdown}")
    if json_path is not None:
        write_json(json_path, {**tags(REPORT_ENCODING), **report}, indent=1)
        print0(f"wrote {json_path}")
    if plots is not None:
        written = write_plots(report, plots)
        if written is None:
            print0("note: matplotlib is not installed (pip install 'hpcswarm[plot]'); "
                   "no plots written")
        else:
            print0(f"wrote {', '.join(p.name for p in written)} in {plots}")
    return report
