"""Peers study: the default signature beside scikit-learn's selectors.

The default signature is VLPSO's search (Tran, Xue & Zhang 2019) refined by
``neighbour-purity-1se-anova`` (``docs/signatures.md``, "The default: chosen by a rule fixed in
advance"): the refined rows of a job of ``jobs/vlpso-experiment.toml`` (``--prefix
v+refined``), whose search rows are VLPSO's own subset, the default before it. A user could
instead pick one of scikit-learn's selectors, or ReliefF; this study puts four such peers
beside it on the very same outer folds and tests every pair fold by fold.

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
  shuffled), the same folds for every peer of a task;
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
  as for ``SelectKBest-F``, the forest refitted inside each inner fold;
- ``ReliefF``: genes ranked by the ReliefF weight (Kononenko 1994, the multi-class Relief-F:
  each training sample's :data:`RELIEFF_NEIGHBOURS` nearest hits and as many nearest misses
  of every other class), as ``skrebate.ReliefF`` computes it (skrebate 0.8.4, Urbanowicz et
  al. 2018: Manhattan distance on the genes scaled to their range, each miss class weighted
  by its share of the misses found, a gene with at most 10 distinct values on the rows scored
  as categorical, its default), the labels declared binary or multi-class (so that a set of
  more than ten classes is not taken for a regression, skrebate's default); ties by the
  lower index; k chosen as for ``SelectKBest-F``, the weights refitted inside each inner
  fold. The weights are computed by :mod:`studies.relieff`, equal to skrebate's bit for bit
  and about a hundred times faster (``benchmarks/bench_relieff.py``), so the rankings and every
  figure are skrebate's; the seconds of the runs before it are skrebate's own.
  (Added after the runs of the first rule of ``docs/signatures.md``, which had the three
  peers above; a cache of those runs gets its ReliefF fits added and keeps the others.)

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

Each peer is also **size-matched** (row ``PEER @ size``): on each task it keeps exactly as
many genes as the configuration kept there (k), the top k of its ranking on all the task's
training rows: ``SelectKBest-F`` by F, ``RF-importance`` by the forest's importance,
``L1-logistic`` by the absolute coefficients summed over the classes' models at its inner-CV
C, then by F, then by the lower index (the ranking is cached with the peer's genes; its
seconds are the peer's). Sechidis et al.'s correlation-aware stability
(:func:`hpcswarm.signatures.stability.sechidis`, the file's gene similarity) of every row.

Several configurations of the same seed can be read side by side (``--prefix PREFIX``,
repeatable: ``WORK/PREFIX-NAME.h5``; the row is named by the prefix, ``VLPSO`` for the
default prefix ``v``; ``PREFIX+refined`` reads the refined subsets of the same files, the
signature of a job with ``refine``); each is tested against every peer, and with
``--baseline PREFIX`` against that configuration too, on the same folds. :func:`verdicts`
and :func:`choose` apply the rule fixed in ``docs/signatures.md`` ("Against scikit-learn's
selectors, the rule for the next runs, fixed before them"): the three conditions on each
set (size-matched, not dominated, ahead) and the choice among the configurations.

Run from the repository root: ``python -m studies.study_peers WORK NAME [NAME ...]
[--prefix PREFIX ...] [--baseline PREFIX]``; ``--json FILE`` also writes every figure. The
peers' genes and rankings per task are kept in ``WORK/peers/NAME/`` so that a rerun, or
another configuration of the same folds, only reads them back.
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
from hpcswarm.results.files import read_results
from hpcswarm.results.significance import signed_rank_test
from hpcswarm.selection.preprocess import fit
from hpcswarm.signatures.stability import sechidis
from studies.design_sets import panel_arguments, print_header, print_row, write_figures
from studies.relieff import relieff_weights

INNER_FOLDS = 5
"""Inner stratified folds of a task's training rows."""
L1_C = (0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0)
"""The grid of the L1-logistic regression's inverse penalty C."""
K_GRID = (5, 10, 20, 50, 100, 200, 500)
"""The grid of signature sizes k of the ranking peers (capped at the number of genes)."""
N_TREES = 100
"""Trees of the random forest (scikit-learn's default)."""
RELIEFF_NEIGHBOURS = 10
"""ReliefF's nearest hits, and nearest misses of each other class, per sample: the 10 that
Robnik-Sikonja & Kononenko (2003, Sec. 2.3 and 6) find a safe choice (skrebate's default of
100 would take every sample of a class on a microarray's 50 to 100 training rows)."""
PEER_STREAM = 7919
"""The spawn-key word of the peers' randomness, below a task's key."""
PEERS = ("L1-logistic", "SelectKBest-F", "RF-importance", "ReliefF")
ALPHA = 0.05
"""The level of every one-sided test of the rule."""
COST_CAP = 3.0
"""The most a new default may cost, in seconds over the tasks, relative to today's."""


REFINED = "+refined"
"""The ending of a prefix that reads its files' refined subsets (``refine`` of the job)."""


def tasks_of(path, refined=False):
    """The VLPSO file's tasks (run, fold, spawn key, training and test rows, genes, test
    accuracy, seconds) and its dataset, seed and preprocessing steps; with ``refined``, the
    genes and test accuracy of each task's refined subset (the job's ``refine``) in place of
    the search's (the seconds are the task's, search and refinement)."""
    genes, accuracy = (("refined_genes", "refined_test_accuracy") if refined
                       else ("selected_genes", "test_accuracy"))
    tasks = []
    with h5py.File(path, "r") as results:
        table = results["tasks"]
        for index, (run, fold) in enumerate(zip(table["run"][()], table["fold"][()])):
            group = results[f"runs/run-{int(run):03d}/fold-{int(fold):02d}"]
            tasks.append({"run": int(run), "fold": int(fold),
                          "key": tuple(int(k) for k in group.attrs["spawn_key"]),
                          "train": group["train_index"][()], "test": group["test_index"][()],
                          "genes": group[genes][()],
                          "accuracy": float(table[accuracy][index]),
                          "seconds": float(table["seconds"][index])})
        job = json.loads(results.attrs["job"])
        setting = (str(results.attrs["dataset"]), int(results.attrs["seed"]),
                   [tuple(step) for step in job.get("preprocess", [])])
    return tasks, setting


def task_seed(seed, key):
    """The peers' random integer of the task with spawn key ``key`` of a job seeded ``seed``."""
    return int(np.random.SeedSequence(seed, spawn_key=(*key, PEER_STREAM)).generate_state(1)[0])


def l1_logistic(X, y, folds, seed):
    """Genes with a non-zero coefficient of the L1-logistic regression, C by the inner folds;
    the chosen C; and every gene ranked by its absolute coefficients summed over the
    classes' models at that C, then by F (:func:`f_ranking`), then by the lower index."""
    model = OneVsRestClassifier(LogisticRegression(solver="liblinear", l1_ratio=1.0,
                                                   max_iter=1000, random_state=seed))
    search = GridSearchCV(model, {"estimator__C": list(L1_C)}, cv=folds, scoring="accuracy")
    search.fit(X, y)
    coefficients = np.vstack([e.coef_ for e in search.best_estimator_.estimators_])
    chosen_c = float(search.best_params_["estimator__C"])
    by_f = np.empty(X.shape[1], dtype=np.int64)
    by_f[f_ranking(X, y, seed)] = np.arange(X.shape[1])
    ranking = np.lexsort((by_f, -np.abs(coefficients).sum(axis=0)))
    return np.flatnonzero((coefficients != 0).any(axis=0)), chosen_c, ranking


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


def relieff_ranking(X, y, seed):
    """Genes by decreasing ReliefF weight (:data:`RELIEFF_NEIGHBOURS` neighbours; skrebate's
    weights, :func:`studies.relieff.relieff_weights`; ties by the lower index);
    deterministic, ``seed`` unused."""
    return np.argsort(-relieff_weights(X, y, RELIEFF_NEIGHBOURS), kind="stable")


def top_k(X, y, folds, seed, ranking):
    """The top k of ``ranking`` on all rows, k of :data:`K_GRID` with the most inner 1-NN
    correct (the ranking refitted on each inner fold's training rows; ties to the smaller
    k); that k; and the ranking on all rows."""
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
    order = ranking(X, y, seed)
    return np.sort(order[:k]), k, order


SELECTORS = {"L1-logistic": l1_logistic,
             "SelectKBest-F": lambda X, y, folds, seed: top_k(X, y, folds, seed, f_ranking),
             "RF-importance": lambda X, y, folds, seed: top_k(X, y, folds, seed,
                                                              forest_ranking),
             "ReliefF": lambda X, y, folds, seed: top_k(X, y, folds, seed, relieff_ranking)}
"""Each peer: (scaled training rows, labels, inner folds, seed) -> (genes, chosen C or k,
every gene ranked on all the rows, the order its size-matched row takes its top k from)."""


def scaled(X, y, task, steps):
    """The task's training and test rows after the job's preprocessing fitted on the former."""
    fitted, X_train = fit(steps, X[task["train"]], y[task["train"]])
    return X_train, fitted.transform(X[task["test"]])


def peer_selections(X_train, y_train, seed, names):
    """The genes, chosen setting and wall seconds of each peer of ``names`` on one task's
    training rows (the same inner folds for every peer)."""
    folds = list(StratifiedKFold(INNER_FOLDS, shuffle=True, random_state=seed)
                 .split(X_train, y_train))
    chosen = {}
    for name in names:
        started = time.perf_counter()
        genes, setting, ranking = SELECTORS[name](X_train, y_train, folds, seed)
        chosen[name] = {"genes": genes.tolist(), "setting": setting,
                        "seconds": time.perf_counter() - started, "ranking": ranking.tolist()}
    return chosen


def cached_selections(cache, task, X_train, y_train, seed):
    """:func:`peer_selections` of a task, read from ``cache`` (a JSON file) when it holds
    them for the same training rows; the peers it lacks (a peer added since it was written)
    are computed and the cache rewritten with them, the others kept as they were."""
    rows = hashlib.sha256(np.asarray(task["train"], dtype=np.int64).tobytes()).hexdigest()
    peers = {}
    if cache.exists():
        stored = json.loads(cache.read_text())
        if stored["train_sha256"] != rows or stored["seed"] != seed:
            raise ValueError(f"{cache}: cached for other training rows or seed; remove it")
        if any("ranking" not in peer for peer in stored["peers"].values()):
            raise ValueError(f"{cache}: cached without the peers' rankings (an earlier "
                             f"version of this study); remove it")
        peers = stored["peers"]
    missing = [name for name in SELECTORS if name not in peers]
    if not missing:
        return peers
    with threadpool_limits(1):
        peers.update(peer_selections(X_train, y_train, seed, missing))
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


def matched(peer):
    """The row name of ``peer`` size-matched: its top k genes, k the configuration's size on
    each task."""
    return f"{peer} @ size"


def rows_of(path, name, work, label="VLPSO", refined=False):
    """Per row (the configuration ``label`` of the file, its refined subsets with
    ``refined``, each peer at its own size, each peer size-matched): per task, (genes, test
    Score, wall seconds, chosen setting); the tasks; the number of genes and the file's gene
    similarity."""
    tasks, (dataset, seed, steps) = tasks_of(path, refined)
    results = read_results(path)
    data = load_dataset(dataset)
    X, y = np.asarray(data.X, dtype=np.float64), np.asarray(data.y)
    classes = np.unique(y)
    rows = {label: [], **{peer: [] for peer in PEERS}, **{matched(peer): [] for peer in PEERS}}
    for task in tasks:
        X_train, X_test = scaled(X, y, task, steps)
        y_train, y_test = y[task["train"]], y[task["test"]]
        score = tested(X_train, y_train, X_test, y_test, task["genes"], classes)
        if score.accuracy != task["accuracy"]:
            raise ValueError(f"{path}: run {task['run']} fold {task['fold']}: {label}'s genes "
                             f"score {score.accuracy} here, {task['accuracy']} in the file")
        rows[label].append((task["genes"], score, task["seconds"], None))
        cache = work / "peers" / name / f"run-{task['run']:03d}-fold-{task['fold']:02d}.json"
        peers = cached_selections(cache, task, X_train, y_train, task_seed(seed, task["key"]))
        for peer in PEERS:
            for row, genes in ((peer, peers[peer]["genes"]),
                               (matched(peer), peers[peer]["ranking"][:task["genes"].size])):
                genes = np.sort(np.asarray(genes, dtype=np.int64))
                rows[row].append((genes,
                                  tested(X_train, y_train, X_test, y_test, genes, classes),
                                  peers[peer]["seconds"], peers[peer]["setting"]))
    return rows, tasks, X.shape[1], results.similarity


def one_sided(first, second):
    """The report's per-fold paired test of ``first`` against ``second`` in both directions:
    p that ``first`` is above, p that it is below, the pairs that differ, the smallest p."""
    above = signed_rank_test(first, second, "greater")
    below = signed_rank_test(first, second, "less")
    return {"p_above": above.p_value, "p_below": below.p_value, "n": above.nonzero,
            "smallest_p": above.min_p}


def figures(rows, tasks, n_genes, similarity, label):
    """Every row's figures on one set; each peer's tests are of ``label`` against it."""
    runs = np.array([task["run"] for task in tasks])
    config = np.array([score.accuracy for _, score, _, _ in rows[label]])
    out = {}
    for name, row in rows.items():
        accuracy = np.array([score.accuracy for _, score, _, _ in row])
        per_run = [accuracy[runs == run].mean() for run in np.unique(runs)]
        balanced = [sum(row[i][1] for i in np.flatnonzero(runs == run)).balanced_accuracy
                    for run in np.unique(runs)]
        genes = [g for g, _, _, _ in row]
        figure = {"accuracy": 100 * float(np.mean(per_run)), "sd": 100 * float(np.std(per_run)),
                  "balanced": 100 * float(np.mean(balanced)),
                  "balanced_sd": 100 * float(np.std(balanced)),
                  "size": float(np.mean([g.size for g in genes])),
                  "sechidis": sechidis(genes, n_genes, similarity),
                  "seconds": float(np.mean([s for _, _, s, _ in row])),
                  "fold_accuracy": accuracy.tolist(),
                  "settings": [s for _, _, _, s in row]}
        if name != label:
            figure.update(one_sided(config, accuracy))
        out[name] = figure
    return out


def verdicts(rows, label, alpha=ALPHA):
    """The three conditions of the rule in ``docs/signatures.md`` ("Against scikit-learn's
    selectors") for the configuration ``label`` on one set, from :func:`figures`:

    - ``size_matched``: it is significantly below no size-matched peer;
    - ``not_dominated``: no peer at its own size is significantly above it while keeping no
      more genes on average;
    - ``ahead``: it is significantly above every size-matched peer, or not significantly
      below the free-size peer of the highest mean test accuracy at a third of its mean size
      or less.
    """
    size = rows[label]["size"]
    best = max(PEERS, key=lambda peer: rows[peer]["accuracy"])
    return {
        "size_matched": all(rows[matched(peer)]["p_below"] >= alpha for peer in PEERS),
        "not_dominated": not any(rows[peer]["p_below"] < alpha and rows[peer]["size"] <= size
                                 for peer in PEERS),
        "ahead": (all(rows[matched(peer)]["p_above"] < alpha for peer in PEERS)
                  or (rows[best]["p_below"] >= alpha and 3 * size <= rows[best]["size"])),
    }


def configuration(work, name, prefix, label):
    """One configuration's rows, verdicts and tasks on one set from ``WORK/PREFIX-NAME.h5``
    (a prefix ending in :data:`REFINED`: the refined subsets of the file of the prefix
    without it)."""
    refined = prefix.endswith(REFINED)
    stem = prefix[:-len(REFINED)] if refined else prefix
    rows, tasks, n_genes, similarity = rows_of(work / f"{stem}-{name}.h5", name, work, label,
                                               refined)
    table = figures(rows, tasks, n_genes, similarity, label)
    return table, verdicts(table, label), tasks


def study(work, names, prefixes=("v",), baseline=None):
    """Per set ``NAME`` of ``names`` and configuration ``PREFIX`` of ``prefixes``
    (``WORK/PREFIX-NAME.h5``; the row is ``VLPSO`` for the prefix ``v``, else the prefix):
    ``{NAME: {PREFIX: {"rows": {row: figures}, "verdicts": ...}}}``. With ``baseline``
    (one of ``prefixes``), every other configuration is also tested against it on the same
    folds (``vs_baseline``; ValueError where they hold out other samples)."""
    table = {}
    for name in names:
        table[name] = {}
        for prefix in prefixes:
            rows, found, tasks = configuration(work, name, prefix, label_of(prefix))
            table[name][prefix] = {"rows": rows, "verdicts": found,
                                   "test": [task["test"] for task in tasks]}
        if baseline is not None:
            base = table[name][baseline]
            for prefix, entry in table[name].items():
                if len(entry["test"]) != len(base["test"]) or not all(
                        np.array_equal(a, b) for a, b in zip(entry["test"], base["test"])):
                    raise ValueError(f"{name}: {prefix} holds out other samples than "
                                     f"{baseline}")
                if prefix != baseline:
                    entry["vs_baseline"] = one_sided(
                        entry["rows"][label_of(prefix)]["fold_accuracy"],
                        base["rows"][label_of(baseline)]["fold_accuracy"])
        for entry in table[name].values():
            del entry["test"]
    return table


def label_of(prefix):
    """A configuration's row name: ``VLPSO`` for the prefix ``v`` (``VLPSO+refined`` for
    ``v+refined``), else the prefix."""
    return "VLPSO" + prefix[1:] if prefix in ("v", "v" + REFINED) else prefix


def choose(table, baseline, alpha=ALPHA):
    """The choice of the rule in ``docs/signatures.md`` ("Against scikit-learn's selectors")
    among the configurations of ``table`` (:func:`study` with ``baseline``, on the choice
    half). Returns (the chosen prefix or None, the reason each candidate is out).

    A candidate is out if it is below the baseline on a set, fails ``size_matched`` or
    ``not_dominated`` on a set, or costs more than :data:`COST_CAP` times the baseline's
    seconds over all the tasks; of the others, the one ahead on the most sets, then above
    the baseline on the most, then of the smallest mean size relative to the baseline's.
    """
    sets = list(table)
    candidates = [prefix for prefix in table[sets[0]] if prefix != baseline]

    def seconds(prefix):
        return sum(table[name][prefix]["rows"][label_of(prefix)]["seconds"] for name in sets)

    out, kept = {}, []
    for prefix in candidates:
        entries = [table[name][prefix] for name in sets]
        if any(entry["vs_baseline"]["p_below"] < alpha for entry in entries):
            out[prefix] = "below the baseline"
        elif not all(e["verdicts"]["size_matched"] and e["verdicts"]["not_dominated"]
                     for e in entries):
            out[prefix] = "fails size-matched or not dominated"
        elif seconds(prefix) > COST_CAP * seconds(baseline):
            out[prefix] = "over the cost cap"
        else:
            kept.append(prefix)

    def rank(prefix):
        entries = [table[name][prefix] for name in sets]
        relative = np.mean([table[name][prefix]["rows"][label_of(prefix)]["size"]
                            / table[name][baseline]["rows"][label_of(baseline)]["size"]
                            for name in sets])
        return (-sum(e["verdicts"]["ahead"] for e in entries),
                -sum(e["vs_baseline"]["p_above"] < alpha for e in entries), relative)

    return (min(kept, key=rank) if kept else None), out


def print_table(table):
    print_header(["set", "row", "test acc. % (sd)", "balanced acc. % (sd)", "p above",
                  "p below", "pairs differing, smallest p", "genes", "Sechidis",
                  "s per task"])
    for dataset, configurations in table.items():
        for prefix, entry in configurations.items():
            label = label_of(prefix)
            for name, row in entry["rows"].items():
                tests = (["", "", ""] if name == label else
                         [f"{row['p_above']:.3g}", f"{row['p_below']:.3g}",
                          f"{row['n']}, {row['smallest_p']:.1e}"])
                stability = "" if row["sechidis"] is None else f"{row['sechidis']:.3f}"
                print_row([dataset if name == label else "", name,
                           f"{row['accuracy']:.2f} ({row['sd']:.2f})",
                           f"{row['balanced']:.2f} ({row['balanced_sd']:.2f})", *tests,
                           f"{row['size']:.1f}", stability, f"{row['seconds']:.1f}"])
            against = entry.get("vs_baseline")
            versus = ("" if against is None else
                      f"; against the baseline p above {against['p_above']:.3g}, "
                      f"p below {against['p_below']:.3g} ({against['n']} pairs differ)")
            held = ", ".join(f"{key}: {'yes' if value else 'no'}"
                             for key, value in entry["verdicts"].items())
            print(f"\n{dataset}, {label}: {held}{versus}\n", flush=True)


def main(argv=None):
    parser = panel_arguments(__doc__.splitlines()[0])
    parser.add_argument("--prefix", action="append", dest="prefixes",
                        help="a configuration's results files WORK/PREFIX-NAME.h5, or with "
                             f"PREFIX{REFINED} their refined subsets (repeatable; default v)")
    parser.add_argument("--baseline", help="the prefix every other one is tested against, "
                                           "and the rule's choice made")
    args = parser.parse_args(argv)
    prefixes = args.prefixes or ["v"]
    table = study(args.work, args.names, prefixes, args.baseline)
    print_table(table)
    figures_out = {"table": table}
    if args.baseline is not None and len(prefixes) > 1:
        chosen, out = choose(table, args.baseline)
        print(f"out: {out or 'none'}; chosen by the rule: {chosen}")
        figures_out.update({"chosen": chosen, "out": out})
    write_figures(args.json, figures_out)


if __name__ == "__main__":
    main()
