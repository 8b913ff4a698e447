"""Signature study: which refinement of PSO-LSRG's subset becomes the default signature.

The rule, fixed before any figure was read (``docs/signatures.md``): each candidate is
compared with PSO-LSRG's own subset on every panel set by the per-fold paired one-sided
Wilcoxon signed-rank test (is the candidate's test accuracy lower?) over the matched
(run, fold) tasks (:func:`hpcswarm.results.significance.signed_rank_test`, the report's test), alpha
0.05, at least 3 runs x 10 folds. The default is a candidate never
significantly below PSO-LSRG on any panel set; among those the smallest mean size, then the
most stable (Sechidis et al.'s correlation-aware estimate, then Kuncheva's index between
folds). The test accuracy is read only by that comparison.

Input, per panel set ``NAME``: the results file of Tran et al.'s Experiment II job
(``jobs/pso-lsrg-experiment-ii.toml`` with ``runs = 3``; ``refine = "prune-compact"``, so the
file holds that candidate), ``WORK/r-NAME.h5``, and where it exists the file of the VLPSO job
(``jobs/vlpso-experiment.toml`` with ``runs = 3`` and ``refine = "relevance-subset"``, the same
seed and so the same outer folds, checked task by task), ``WORK/v-NAME.h5``, and that of the
same job with VLPSO's local search on (``local_search = true``, ``refine = "none"``),
``WORK/vls-NAME.h5``. Every other
candidate is computed here from what the PSO-LSRG file stores per task (the search's subset,
the training and test rows) on the dataset the file names, exactly as a job's ``refine``
would compute it (same scorer, same training rows):

- ``PSO-LSRG``: the search's subset;
- ``+prune-compact``: read from the file;
- ``+relevance-subset``: the search's subset ranked one class against the rest, cut by the
  inner validation (:func:`hpcswarm.signatures.relevance.relevance_subset`);
- ``+relevance-subset-1se``: the same ranking cut by the one-standard-error rule
  (:func:`hpcswarm.signatures.relevance.relevance_subset_1se`), added to the candidates before any
  of its figures was read;
- ``Welch-RR filter``: every gene so ranked and cut
  (:func:`hpcswarm.signatures.relevance.relevance_prefix`), the filter baseline.
- ``+VLPSO`` and ``+VLPSO+relevance-subset``: VLPSO's own subset and that subset trimmed by
  ``relevance-subset``, their test accuracies as the VLPSO job measured them (its features
  scaled to [0, 1] on the training samples, as the paper's protocol does); their cost column
  is VLPSO's seconds against PSO-LSRG's for the same tasks;
- ``+VLPSO-LS``: the subset of VLPSO with its local search on, likewise (declared a candidate
  before any of its figures was read).

Per set and row: mean test accuracy over runs (sd), the one-sided paired p against
PSO-LSRG (with n and the smallest p that n can reach), mean size, Kuncheva's index between
the folds of a run, Nogueira's and Sechidis et al.'s estimates, and the refinement's cost
over the search (wall seconds here against the task's recorded search time).

Run from the repository root: ``python -m studies.study_signature WORK NAME [NAME ...]``
(``--no-vlpso`` ignores the VLPSO files);
``--json FILE`` also writes every figure.
"""

import time

import h5py
import numpy as np

from hpcswarm.data import load_dataset
from hpcswarm.fitness import KnnEvaluator, score_split
from hpcswarm.results.significance import signed_rank_test
from hpcswarm.signatures.relevance import relevance_prefix, relevance_subset, relevance_subset_1se
from hpcswarm.signatures.stability import gene_similarity, sechidis, stability_summary
from studies.design_sets import panel_arguments, print_header, print_row, write_figures

ALPHA = 0.05

COMPUTED = {"+relevance-subset": lambda scorer, X, y, mask: relevance_subset(scorer, X, y, mask),
            "+relevance-subset-1se": lambda scorer, X, y, mask: relevance_subset_1se(scorer, X, y,
                                                                                 mask),
            "Welch-RR filter": lambda scorer, X, y, mask: relevance_prefix(scorer, X, y)}
"""The candidates computed here from each task's training rows (and the search's subset)."""


def tasks_of(path):
    """Per task of the results file: run, fold, the search's genes, the refined genes, the
    training and test rows, the recorded seconds."""
    tasks = []
    with h5py.File(path, "r") as results:
        seconds = results["tasks"]["seconds"][()]
        for index, (run, fold) in enumerate(zip(results["tasks"]["run"][()],
                                                results["tasks"]["fold"][()])):
            group = results[f"runs/run-{int(run):03d}/fold-{int(fold):02d}"]
            tasks.append({"run": int(run), "fold": int(fold),
                          "genes": group["selected_genes"][()],
                          "refined": group["refined_genes"][()],
                          "train": group["train_index"][()], "test": group["test_index"][()],
                          "seconds": float(seconds[index])})
        dataset = str(results.attrs["dataset"])
    return tasks, dataset


VLPSO_FILES = {"v": "+VLPSO", "vls": "+VLPSO-LS"}
"""The VLPSO jobs' files ``WORK/PREFIX-NAME.h5`` by prefix, and the row of each one's own
subset: VLPSO (``local_search = false``, the paper's) and VLPSO with its local search on."""


def vlpso_rows(path, tasks, label="+VLPSO"):
    """The rows of a VLPSO job's file, per task of ``tasks`` (the PSO-LSRG file's order):
    (genes, test accuracy, VLPSO's seconds for the task, its trim included), its own subset
    as ``label`` and, when the job trimmed it (``refine = "relevance-subset"``), the trimmed
    subset as ``label+relevance-subset``."""
    own, trimmed = [], []
    with h5py.File(path, "r") as results:
        table = results["tasks"]
        place = {(int(run), int(fold)): index
                 for index, (run, fold) in enumerate(zip(table["run"][()], table["fold"][()]))}
        for task in tasks:
            index = place[task["run"], task["fold"]]
            group = results[f"runs/run-{task['run']:03d}/fold-{task['fold']:02d}"]
            if not np.array_equal(group["test_index"][()], task["test"]):
                raise ValueError(f"{path}: run {task['run']} fold {task['fold']} holds out "
                                 f"other samples than the PSO-LSRG file")
            own.append((group["selected_genes"][()], float(table["test_accuracy"][index]),
                        float(table["seconds"][index])))
            if "refined_genes" in group:
                trimmed.append((group["refined_genes"][()],
                                float(table["refined_test_accuracy"][index]),
                                np.nan))  # its cost is inside VLPSO's seconds
    return {label: own, **({f"{label}+relevance-subset": trimmed} if trimmed else {})}


def rows_of(tasks, X, y):
    """Per candidate row: per task, (genes, test accuracy, refinement seconds)."""
    rows = {"PSO-LSRG": [], "+prune-compact": [], **{name: [] for name in COMPUTED}}
    for task in tasks:
        X_train, y_train = X[task["train"]], y[task["train"]]
        X_test, y_test = X[task["test"]], y[task["test"]]

        def tested(genes):
            mask = np.zeros(X.shape[1], dtype=bool)
            mask[genes] = True
            return score_split(X_train, y_train, X_test, y_test, mask, 1).accuracy

        rows["PSO-LSRG"].append((task["genes"], tested(task["genes"]), 0.0))
        rows["+prune-compact"].append((task["refined"], tested(task["refined"]), np.nan))
        scorer = KnnEvaluator(X_train, y_train, k=1, cv="loo")
        mask = np.zeros(X.shape[1], dtype=bool)
        mask[task["genes"]] = True
        for name, rule in COMPUTED.items():
            started = time.perf_counter()
            genes = rule(scorer, X_train, y_train, mask).genes
            rows[name].append((genes, tested(genes), time.perf_counter() - started))
    return rows


def paired_test(candidate, reference):
    """The one-sided per-fold paired test (is the candidate lower?) of
    :func:`hpcswarm.results.significance.signed_rank_test`: p, its method, the pairs that differ and
    the smallest p they can reach."""
    test = signed_rank_test(candidate, reference, "less")
    return test.p_value, test.method, test.nonzero, test.min_p


def figures(tasks, rows, X):
    """Every candidate's figures on one set."""
    runs = np.array([task["run"] for task in tasks])
    reference = [accuracy for _, accuracy, _ in rows["PSO-LSRG"]]
    search_seconds = np.array([task["seconds"] for task in tasks])
    similarity = gene_similarity(X)
    out = {}
    for name, row in rows.items():
        genes = [g for g, _, _ in row]
        accuracy = np.array([a for _, a, _ in row])
        per_run = [accuracy[runs == run].mean() for run in np.unique(runs)]
        stable = stability_summary(genes, runs, X.shape[1], similarity=similarity)
        p, test, n, floor = paired_test(accuracy, reference)
        cost = np.array([c for _, _, c in row])
        out[name] = {
            "accuracy": 100 * float(np.mean(per_run)), "sd": 100 * float(np.std(per_run)),
            "p": None if name == "PSO-LSRG" else p, "test": test, "n": n, "smallest_p": floor,
            "size": float(np.mean([g.size for g in genes])),
            "kuncheva_folds": stable["folds"]["kuncheva"],
            "nogueira": None if stable["nogueira"] is None else stable["nogueira"]["estimate"],
            "sechidis": sechidis(genes, X.shape[1], similarity),
            "cost": (None if np.all(np.isnan(cost)) or name == "PSO-LSRG"
                     else float(np.nansum(cost) / search_seconds.sum())),
        }
    return out


def choose(table):
    """The default by the fixed rule: never significantly below PSO-LSRG on any set, then
    the smallest mean size (averaged over sets, each set's size relative to PSO-LSRG's),
    then the highest mean Sechidis estimate. Returns (name or None, reasons)."""
    candidates = dict.fromkeys(name for rows in table.values() for name in rows
                               if name.startswith("+"))
    reasons, kept = {}, []
    for name in candidates:
        missing = [s for s, rows in table.items() if name not in rows]
        losses = [s for s, rows in table.items() if name in rows and rows[name]["p"] < ALPHA]
        reasons[name] = (f"not measured on {', '.join(missing)}" if missing
                         else f"below PSO-LSRG on {', '.join(losses)}" if losses
                         else "never below")
        if not losses and not missing:
            kept.append(name)
    if not kept:
        return None, reasons

    def key(name):
        relative = np.mean([rows[name]["size"] / rows["PSO-LSRG"]["size"]
                            for rows in table.values()])
        return (relative, -np.mean([rows[name]["sechidis"] or 0 for rows in table.values()]))

    return min(kept, key=key), reasons


def print_table(table):
    print_header(["set", "row", "test acc. % (sd)", "p (test, n, smallest p)", "genes",
                  "K folds", "Nogueira", "Sechidis", "cost"])
    for dataset, rows in table.items():
        for name, row in rows.items():
            p = ("" if row["p"] is None
                 else f"{row['p']:.3f} ({row['test']}, n={row['n']}, {row['smallest_p']:.1e})")
            cells = [dataset if name == "PSO-LSRG" else "", name,
                     f"{row['accuracy']:.2f} ({row['sd']:.2f})", p, f"{row['size']:.1f}"]
            cells += ["" if v is None else f"{v:.3f}" for v in
                      (row["kuncheva_folds"], row["nogueira"], row["sechidis"])]
            cells.append("" if row["cost"] is None else f"{row['cost']:.3f}")
            print_row(cells)


def study(work, names, vlpso=True):
    """Every candidate's figures per set ``NAME`` of ``names``, from ``WORK/r-NAME.h5`` and,
    with ``vlpso`` and where they exist, the VLPSO files (:data:`VLPSO_FILES`):
    ``{NAME: {row: figures}}``."""
    table = {}
    for name in names:
        tasks, dataset = tasks_of(work / f"r-{name}.h5")
        data = load_dataset(dataset)
        X, y = np.asarray(data.X, dtype=np.float64), np.asarray(data.y)
        rows = rows_of(tasks, X, y)
        for prefix, label in VLPSO_FILES.items() if vlpso else ():
            if (work / f"{prefix}-{name}.h5").exists():
                rows.update(vlpso_rows(work / f"{prefix}-{name}.h5", tasks, label))
        table[name] = figures(tasks, rows, X)
    return table


def main(argv=None):
    parser = panel_arguments(__doc__.splitlines()[0])
    parser.add_argument("--no-vlpso", action="store_true",
                        help="ignore the VLPSO files (WORK/v-NAME.h5, WORK/vls-NAME.h5)")
    args = parser.parse_args(argv)
    table = study(args.work, args.names, vlpso=not args.no_vlpso)
    print_table(table)
    chosen, reasons = choose(table)
    for name, reason in reasons.items():
        print(f"{name}: {reason}")
    print(f"default by the rule: {chosen}")
    write_figures(args.json, {"table": table, "chosen": chosen, "reasons": reasons})


if __name__ == "__main__":
    main()
