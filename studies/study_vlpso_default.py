"""VLPSO default study: the paper's text as hpcswarm read it, or the authors' code.

Two configurations of VLPSO (Tran, Xue & Zhang 2019) compete for the default of every front
door. The rule, written in ``docs/signatures.md`` ("VLPSO's own settings: the rule for the
next run, fixed before it") before any figure of these runs was computed: the authors' code
becomes the default unless, on some set of the design panel, it is significantly below the
paper's text in test accuracy by the per-fold paired one-sided Wilcoxon signed-rank test of
the report (:func:`hpcswarm.results.significance.signed_rank_test`), over the matched (run,
fold) tasks of 3 runs x 10 folds, alpha :data:`ALPHA`. Balanced accuracy, size, stability and
cost are printed beside and read by no step of the rule.

Input, per panel set ``NAME``, three results files of the same seed (2016) and so the same
outer folds (checked task by task):

- ``WORK/today-NAME.h5``: ``jobs/vlpso-experiment.toml``, the paper's text as hpcswarm reads
  it: 1-NN 10-fold accuracy, inertia 0.9 to 0.4, half of the genes selected at the start;
- ``WORK/authors-NAME.h5``: ``jobs/vlpso-authors.toml``, the same job as the authors' Java
  runs it (leave-one-out balanced accuracy of 1-NN, inertia 0.9 throughout, positions
  uniform in [0, 1]);
- ``WORK/lsrg-NAME.h5``: Tran et al.'s Experiment II (``jobs/pso-lsrg-experiment-ii.toml``,
  the search's own subset; ``docs/benchmarks.md`` reduces its swarm), the reference of the
  ``p vs PSO-LSRG`` column.

each with ``runs = 3``. Per set and row: mean test accuracy over runs (sd), mean balanced
test accuracy over runs (each run's mean over its folds of the balanced accuracy the file
records), the one-sided paired p against PSO-LSRG (is the row lower?), for the authors' row
the rule's p against the paper's text, mean size, Sechidis et al.'s correlation-aware
stability over all tasks (the file's gene similarity), and the mean seconds per task.

Run from the repository root: ``python -m studies.study_vlpso_default WORK NAME [NAME ...]``;
``--json FILE`` also writes every figure.
"""


import numpy as np

from hpcswarm.results.files import read_results, task_accuracies, task_balanced_accuracies
from hpcswarm.results.significance import signed_rank_test
from hpcswarm.signatures.stability import sechidis
from studies.design_sets import panel_arguments, print_header, print_row, write_figures

ALPHA = 0.05

FILES = {"PSO-LSRG": "lsrg", "VLPSO paper's text": "today", "VLPSO authors' code": "authors"}
"""The rows of a set and the prefix of each one's results file, ``WORK/PREFIX-NAME.h5``."""

CHALLENGER, INCUMBENT = "VLPSO authors' code", "VLPSO paper's text"


def tasks_by_fold(path):
    """Per (run, fold) of a results file: test accuracy, balanced test accuracy, genes,
    held-out rows and seconds; with the file's gene count and similarity."""
    results = read_results(path)
    table = results.table
    accuracy, balanced = task_accuracies(table), task_balanced_accuracies(table)
    tasks = {(int(run), int(fold)): {"accuracy": float(accuracy[i]),
                                     "balanced": float(balanced[i]),
                                     "genes": results.genes[i],
                                     "test": results.test_indices[i],
                                     "seconds": float(table["seconds"][i])}
             for i, (run, fold) in enumerate(zip(table.run, table.fold))}
    return tasks, len(results.gene_names), results.similarity


def one_sided_p(lower, reference):
    """The report's one-sided per-fold paired test (is ``lower`` below ``reference``?): p, the
    pairs that differ and the smallest p they can reach."""
    test = signed_rank_test(lower, reference, "less")
    return {"p": test.p_value, "n": test.nonzero, "smallest_p": test.min_p}


def figures(rows, keys, n_genes, similarity):
    """Every row's figures on one set, its tasks in the order of ``keys``."""
    runs = np.array([run for run, _ in keys])

    def per_run_mean(values):
        means = [np.mean(values[runs == run]) for run in np.unique(runs)]
        return 100 * float(np.mean(means)), 100 * float(np.std(means))

    column = {name: {field: np.array([tasks[key][field] for key in keys])
                     for field in ("accuracy", "balanced", "seconds")}
              for name, tasks in rows.items()}
    out = {}
    for name, tasks in rows.items():
        genes = [tasks[key]["genes"] for key in keys]
        accuracy, accuracy_sd = per_run_mean(column[name]["accuracy"])
        balanced, balanced_sd = per_run_mean(column[name]["balanced"])
        out[name] = {
            "accuracy": accuracy, "sd": accuracy_sd,
            "balanced": balanced, "balanced_sd": balanced_sd,
            "vs_lsrg": (None if name == "PSO-LSRG" else
                        one_sided_p(column[name]["accuracy"], column["PSO-LSRG"]["accuracy"])),
            "vs_incumbent": (one_sided_p(column[name]["accuracy"],
                                         column[INCUMBENT]["accuracy"])
                             if name == CHALLENGER else None),
            "size": float(np.mean([g.size for g in genes])),
            "sechidis": sechidis(genes, n_genes, similarity),
            "seconds": float(column[name]["seconds"].mean()),
        }
    return out


def study(work, names):
    """``{NAME: {row: figures}}`` from the three files of each set (same held-out rows task
    by task, or ValueError)."""
    table = {}
    for name in names:
        rows, n_genes, similarity = {}, None, None
        for row, prefix in FILES.items():
            rows[row], n_genes, similarity = tasks_by_fold(work / f"{prefix}-{name}.h5")
        keys = sorted(rows["PSO-LSRG"])
        for row, tasks in rows.items():
            if sorted(tasks) != keys or any(not np.array_equal(tasks[key]["test"],
                                                               rows["PSO-LSRG"][key]["test"])
                                            for key in keys):
                raise ValueError(f"{name}: {row} holds out other samples than PSO-LSRG")
        table[name] = figures(rows, keys, n_genes, similarity)
    return table


def choose(table):
    """The rule: the authors' code unless it is significantly below the paper's text on some
    set. Returns (the chosen row, the sets where the authors' code is below)."""
    losses = [name for name, rows in table.items()
              if rows[CHALLENGER]["vs_incumbent"]["p"] < ALPHA]
    return (INCUMBENT if losses else CHALLENGER), losses


def print_table(table):
    print_header(["set", "row", "test acc. % (sd)", "balanced % (sd)", "p vs PSO-LSRG (n)",
                  "p vs paper's text (n)", "genes", "Sechidis", "s per task"])

    def p_cell(test):
        return "" if test is None else f"{test['p']:.3f} ({test['n']})"

    for dataset, rows in table.items():
        for name, row in rows.items():
            print_row([dataset if name == "PSO-LSRG" else "", name,
                       f"{row['accuracy']:.2f} ({row['sd']:.2f})",
                       f"{row['balanced']:.2f} ({row['balanced_sd']:.2f})",
                       p_cell(row["vs_lsrg"]), p_cell(row["vs_incumbent"]),
                       f"{row['size']:.1f}",
                       "" if row["sechidis"] is None else f"{row['sechidis']:.3f}",
                       f"{row['seconds']:.1f}"])


def main(argv=None):
    args = panel_arguments(__doc__.splitlines()[0]).parse_args(argv)
    table = study(args.work, args.names)
    print_table(table)
    chosen, losses = choose(table)
    print(f"authors' code significantly below the paper's text on: {', '.join(losses) or 'none'}")
    print(f"default by the rule: {chosen}")
    write_figures(args.json, {"table": table, "chosen": chosen, "losses": losses})


if __name__ == "__main__":
    main()
