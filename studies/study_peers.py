"""Peers study: the default signature (VLPSO's own subset) beside scikit-learn's selectors.

The default signature is the subset VLPSO returns (``docs/signatures.md``, "The default:
chosen by a rule fixed in advance"; Tran, Xue & Zhang 2019). A user could instead pick one of
scikit-learn's selectors; this study puts three of them beside it on the very same outer folds
and tests every pair fold by fold.

Input, per set ``NAME``: the results file of the VLPSO job at today's default
(``jobs/vlpso-experiment.toml`` with ``runs = 3``, seed 2016: the outer folds of Experiment
II), ``WORK/v-NAME.h5``. It stores per task the training and test rows, VLPSO's genes, its
test accuracy and its seconds. Every peer is fitted on the task's **training rows only**,
after the in-fold scaling the VLPSO job recorded (``[preprocess] minmax = true``: every gene
mapped to [0, 1] by its training minimum and maximum, and the test rows by the same map), so
that both read the same matrix; everything inside a peer (its inner folds) works on those
scaled training rows, as VLPSO's inner validation does. The settings, fixed before any
figure was read:

- inner folds: :data:`INNER_FOLDS`-fold stratified (scikit-learn's ``StratifiedKFold``,
  shuffled), the same folds for the three peers of a task;
- ``L1-logistic``: ``LogisticRegression(solver="liblinear", l1_ratio=1)`` (the L1 penalty),
  one against the rest for more than two classes (``OneVsRestClassifier``, liblinear's own
  scheme), C chosen over :data:`L1_C` by the logistic regression's own accuracy on the inner
  folds (``GridSearchCV``, ties to the smaller C), refitted on all training rows; its genes
  are those with a non-zero coefficient for any class;
- ``SelectKBest-F``: genes ranked by the ANOVA F statistic
  (``SelectKBest(f_classif)``'s score; ties by the lower index, an undefined F last), the
  top k with k chosen over :data:`K_GRID` (capped at the genes there are) by the 1-NN
  accuracy on the inner folds, the ranking refitted inside each inner fold (ties to the
  smaller k);
- ``RF-importance``: genes ranked by the impurity importance of
  ``RandomForestClassifier(n_estimators=N_TREES)`` (scikit-learn's default forest), k chosen
  as for ``SelectKBest-F``, the forest refitted inside each inner fold.

Randomness (the inner folds, liblinear's and the forest's): one integer per task from
``SeedSequence(seed, spawn_key=(*task_key, PEER_STREAM))``, the job's seed and the task's
spawn key as the results file records them, with a word the job never spawns.

Each peer's genes are tested as VLPSO's are: 1-NN trained on the scaled training rows and
tested on the scaled test rows (:func:`hpcswarm.fitness.score_split`, the engine's own
figures; VLPSO's are recomputed the same way and must equal the file's). Per set and row:
mean test accuracy over runs (sd), the balanced accuracy (the folds of a run pooled, so that
every sample is predicted once: the per-class counts of their Scores added up,
:attr:`hpcswarm.fitness.Score.balanced_accuracy`, scikit-learn's ``balanced_accuracy_score``
of the same predictions; mean and sd over runs), the one-sided per-fold paired Wilcoxon
signed-rank test of VLPSO against the peer in both directions
(:func:`hpcswarm.results.significance.signed_rank_test`, the report's test), with the pairs
that differ and the smallest p they can reach, the mean size, and the wall seconds per task
(VLPSO's from the file; a peer's: its fit with the inner folds).

Run from the repository root: ``python -m studies.study_peers WORK NAME [NAME ...]``;
``--json FILE`` also writes every figure. The peers' genes per task are kept in
``WORK/peers/NAME/`` so that a rerun only reads them back.
"""

import hashlib
import json
import time
import warnings

import h5py
import numpy as np
from sklearn.ensemble import RandomForestClassifier
from sklearn.feature_selection import f_classif
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.multiclass import OneVsRestClassifier
from threadpoolctl import threadpool_limits

from hpcswarm.data import load_dataset
from hpcswarm.fitness import score_split
from hpcswarm.results.significance import signed_rank_test
from hpcswarm.selection.preprocess import fit
from studies.design_sets import panel_arguments, print_header, print_row, write_figures

INNER_FOLDS = 5
"""Inner stratified folds of a task's training rows."""
L1_C = (0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0)
"""The grid of the L1-logistic regression's inverse penalty C."""
K_GRID = (5, 10, 20, 50, 100, 200, 500)
"""The grid of signature sizes k of the ranking peers (capped at the number of genes)."""
N_TREES = 100
"""Trees of the random forest (scikit-learn's default)."""
PEER_STREAM = 7919
"""The spawn-key word of the peers' randomness, below a task's key."""
PEERS = ("L1-logistic", "SelectKBest-F", "RF-importance")


def tasks_of(path):
    """The VLPSO file's tasks (run, fold, spawn key, training and test rows, genes, test
    accuracy, seconds) and its dataset, seed and preprocessing steps."""
    tasks = []
    with h5py.File(path, "r") as results:
        table = results["tasks"]
        for index, (run, fold) in enumerate(zip(table["run"][()], table["fold"][()])):
            group = results[f"runs/run-{int(run):03d}/fold-{int(fold):02d}"]
            tasks.append({"run": int(run), "fold": int(fold),
                          "key": tuple(int(k) for k in group.attrs["spawn_key"]),
                          "train": group["train_index"][()], "test": group["test_index"][()],
                          "genes": group["selected_genes"][()],
                          "accuracy": float(table["test_accuracy"][index]),
                          "seconds": float(table["seconds"][index])})
        job = json.loads(results.attrs["job"])
        setting = (str(results.attrs["dataset"]), int(results.attrs["seed"]),
                   [tuple(step) for step in job.get("preprocess", [])])
    return tasks, setting


def task_seed(seed, key):
    """The peers' random integer of the task with spawn key ``key`` of a job seeded ``seed``."""
    return int(np.random.SeedSequence(seed, spawn_key=(*key, PEER_STREAM)).generate_state(1)[0])


def l1_logistic(X, y, folds, seed):
    """Genes with a non-zero coefficient of the L1-logistic regression, C by the inner folds."""
    model = OneVsRestClassifier(LogisticRegression(solver="liblinear", l1_ratio=1.0,
                                                   max_iter=1000, random_state=seed))
    search = GridSearchCV(model, {"estimator__C": list(L1_C)}, cv=folds, scoring="accuracy")
    search.fit(X, y)
    coefficients = np.vstack([e.coef_ for e in search.best_estimator_.estimators_])
    chosen_c = float(search.best_params_["estimator__C"])
    return np.flatnonzero((coefficients != 0).any(axis=0)), chosen_c


def f_ranking(X, y, seed):
    """Genes by decreasing ANOVA F (undefined F last, ties by the lower index)."""
    with warnings.catch_warnings(), np.errstate(divide="ignore", invalid="ignore"):
        warnings.simplefilter("ignore", UserWarning)  # a gene constant on these rows
        f_stat, _ = f_classif(X, y)
    return np.argsort(-np.nan_to_num(f_stat, nan=-np.inf), kind="stable")


def forest_ranking(X, y, seed):
    """Genes by decreasing impurity importance of the random forest (ties by the lower
    index)."""
    forest = RandomForestClassifier(n_estimators=N_TREES, random_state=seed, n_jobs=1)
    return np.argsort(-forest.fit(X, y).feature_importances_, kind="stable")


def top_k(X, y, folds, seed, ranking):
    """The top k of ``ranking`` on all rows, k of :data:`K_GRID` with the most inner 1-NN
    correct (the ranking refitted on each inner fold's training rows; ties to the smaller
    k)."""
    grid = sorted({min(k, X.shape[1]) for k in K_GRID})
    correct = np.zeros(len(grid), dtype=np.int64)
    for inner_train, inner_test in folds:
        order = ranking(X[inner_train], y[inner_train], seed)
        for place, k in enumerate(grid):
            mask = np.zeros(X.shape[1], dtype=bool)
            mask[order[:k]] = True
            correct[place] += score_split(X[inner_train], y[inner_train], X[inner_test],
                                          y[inner_test], mask, 1).correct
    k = grid[int(np.argmax(correct))]
    return np.sort(ranking(X, y, seed)[:k]), k


SELECTORS = {"L1-logistic": l1_logistic,
             "SelectKBest-F": lambda X, y, folds, seed: top_k(X, y, folds, seed, f_ranking),
             "RF-importance": lambda X, y, folds, seed: top_k(X, y, folds, seed,
                                                              forest_ranking)}
"""Each peer: (scaled training rows, labels, inner folds, seed) -> (genes, chosen C or k)."""


def scaled(X, y, task, steps):
    """The task's training and test rows after the job's preprocessing fitted on the former."""
    fitted, X_train = fit(steps, X[task["train"]], y[task["train"]])
    return X_train, fitted.transform(X[task["test"]])


def peer_selections(X_train, y_train, seed):
    """Every peer's genes, chosen setting and wall seconds on one task's training rows."""
    folds = list(StratifiedKFold(INNER_FOLDS, shuffle=True, random_state=seed)
                 .split(X_train, y_train))
    chosen = {}
    for name, selector in SELECTORS.items():
        started = time.perf_counter()
        genes, setting = selector(X_train, y_train, folds, seed)
        chosen[name] = {"genes": genes.tolist(), "setting": setting,
                        "seconds": time.perf_counter() - started}
    return chosen


def cached_selections(cache, task, X_train, y_train, seed):
    """:func:`peer_selections` of a task, read from ``cache`` (a JSON file) when it holds
    them for the same training rows, else computed and written there."""
    rows = hashlib.sha256(np.asarray(task["train"], dtype=np.int64).tobytes()).hexdigest()
    if cache.exists():
        stored = json.loads(cache.read_text())
        if stored["train_sha256"] != rows or stored["seed"] != seed:
            raise ValueError(f"{cache}: cached for other training rows or seed; remove it")
        return stored["peers"]
    with threadpool_limits(1):
        peers = peer_selections(X_train, y_train, seed)
    cache.parent.mkdir(parents=True, exist_ok=True)
    partial = cache.with_suffix(".part")
    partial.write_text(json.dumps({"train_sha256": rows, "seed": seed, "peers": peers}))
    partial.replace(cache)
    return peers


def tested(X_train, y_train, X_test, y_test, genes, classes):
    """The Score of 1-NN on ``genes``, counted per class of ``classes`` (the dataset's labels,
    so that the Scores of a run's folds add up class by class); the empty subset scores no
    correct prediction."""
    mask = np.zeros(X_train.shape[1], dtype=bool)
    mask[np.asarray(genes, dtype=np.int64)] = True
    return score_split(X_train, y_train, X_test, y_test, mask, 1, classes)


def rows_of(path, name, work):
    """Per row (VLPSO, then each peer): per task, (genes, test Score, wall seconds, chosen
    setting); and the tasks."""
    tasks, (dataset, seed, steps) = tasks_of(path)
    data = load_dataset(dataset)
    X, y = np.asarray(data.X, dtype=np.float64), np.asarray(data.y)
    classes = np.unique(y)
    rows = {"VLPSO": [], **{peer: [] for peer in PEERS}}
    for task in tasks:
        X_train, X_test = scaled(X, y, task, steps)
        y_train, y_test = y[task["train"]], y[task["test"]]
        score = tested(X_train, y_train, X_test, y_test, task["genes"], classes)
        if score.accuracy != task["accuracy"]:
            raise ValueError(f"{path}: run {task['run']} fold {task['fold']}: VLPSO's genes "
                             f"score {score.accuracy} here, {task['accuracy']} in the file")
        rows["VLPSO"].append((task["genes"], score, task["seconds"], None))
        cache = work / "peers" / name / f"run-{task['run']:03d}-fold-{task['fold']:02d}.json"
        peers = cached_selections(cache, task, X_train, y_train, task_seed(seed, task["key"]))
        for peer in PEERS:
            genes = np.asarray(peers[peer]["genes"], dtype=np.int64)
            rows[peer].append((genes, tested(X_train, y_train, X_test, y_test, genes, classes),
                               peers[peer]["seconds"], peers[peer]["setting"]))
    return rows, tasks


def figures(rows, tasks):
    """Every row's figures on one set."""
    runs = np.array([task["run"] for task in tasks])
    vlpso = np.array([score.accuracy for _, score, _, _ in rows["VLPSO"]])
    out = {}
    for name, row in rows.items():
        accuracy = np.array([score.accuracy for _, score, _, _ in row])
        per_run = [accuracy[runs == run].mean() for run in np.unique(runs)]
        balanced = [sum(row[i][1] for i in np.flatnonzero(runs == run)).balanced_accuracy
                    for run in np.unique(runs)]
        figure = {"accuracy": 100 * float(np.mean(per_run)), "sd": 100 * float(np.std(per_run)),
                  "balanced": 100 * float(np.mean(balanced)),
                  "balanced_sd": 100 * float(np.std(balanced)),
                  "size": float(np.mean([g.size for g, _, _, _ in row])),
                  "seconds": float(np.mean([s for _, _, s, _ in row])),
                  "fold_accuracy": accuracy.tolist(),
                  "settings": [s for _, _, _, s in row]}
        if name != "VLPSO":
            above = signed_rank_test(vlpso, accuracy, "greater")
            below = signed_rank_test(vlpso, accuracy, "less")
            figure.update({"p_vlpso_above": above.p_value, "p_vlpso_below": below.p_value,
                           "test": above.method, "n": above.nonzero,
                           "smallest_p": above.min_p})
        out[name] = figure
    return out


def study(work, names):
    """Every row's figures per set ``NAME`` of ``names`` from ``WORK/v-NAME.h5``:
    ``{NAME: {row: figures}}``."""
    return {name: figures(*rows_of(work / f"v-{name}.h5", name, work)) for name in names}


def print_table(table):
    print_header(["set", "row", "test acc. % (sd)", "balanced acc. % (sd)", "p VLPSO above",
                  "p VLPSO below", "pairs differing, smallest p", "genes", "s per task"])
    for dataset, rows in table.items():
        for name, row in rows.items():
            tests = (["", "", ""] if name == "VLPSO" else
                     [f"{row['p_vlpso_above']:.3g}", f"{row['p_vlpso_below']:.3g}",
                      f"{row['n']}, {row['smallest_p']:.1e}"])
            cells = [dataset if name == "VLPSO" else "", name,
                     f"{row['accuracy']:.2f} ({row['sd']:.2f})",
                     f"{row['balanced']:.2f} ({row['balanced_sd']:.2f})", *tests,
                     f"{row['size']:.1f}", f"{row['seconds']:.1f}"]
            print_row(cells)


def main(argv=None):
    parser = panel_arguments(__doc__.splitlines()[0])
    args = parser.parse_args(argv)
    table = study(args.work, args.names)
    print_table(table)
    write_figures(args.json, table)


if __name__ == "__main__":
    main()
