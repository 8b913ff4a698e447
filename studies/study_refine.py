"""Refinement study: which rule turns PSO-LSRG's subsets into signatures that hold and agree.

Compares, on the design sets, the search's own subset (PSO-LSRG), ``prune-compact`` (one
pruning of it), ``relevance`` (:mod:`hpcswarm.signatures.relevance`: the genes ranked one class
against the rest, round robin over the classes, cut where the inner validation is best), the same
cut of the genes ranked by one statistic for all classes (the ANOVA F: "F-ranking", a comparison,
not a rule of the tool) and the two
rules of :mod:`hpcswarm.signatures.subsample` that repeat the search on halves of the training
samples: ``stability`` (genes ranked by selection frequency, cut within one standard error of the
best inner validation) and ``consensus`` (the union of the halves' signatures, pruned).
Tran et al. (2016), Experiment II: outer stratified 10-fold cross-validation, 1-NN
leave-one-out inside each search, the paper's parameters
(``jobs/pso-lsrg-experiment-ii.toml``), 3 runs, seed 2016. Every rule reads the training part of its fold only; the test fold scores
what it kept.

Per dataset and rule: mean test accuracy over runs (each run's folds pooled) with its
standard deviation; the one-sided rank-sum test (Mann-Whitney U) of the rule's 30 fold
accuracies against PSO-LSRG's ("below?"); the mean and largest signature size; Kuncheva's
index between the folds of a run and between runs, Jaccard's between folds, and Nogueira et
al.'s estimate with its 95 % interval (:mod:`hpcswarm.signatures.stability`); the cost of the
refinement against the task's own search (wall seconds); and on the synthetic set, the
planted and noise genes kept. Tran et al.'s Table 5 figure is printed where the paper has
the dataset. A rule meets the bar where the rank-sum p is at least 0.05, the mean size at
most 30 and Kuncheva's index between folds at least 0.3, and on SRBCT where it also reaches
the paper's 93.26 % with at most 15 genes.

The design sets: SRBCT, leukemia, colon, lymphoma, Prostate_GE and GLIOMA from
``../shared/data`` (outside the repository), and a synthetic planted-signal set (4 classes
of 7, 10, 14 and 15 samples, 2000 genes of which the first 20 carry the class) written by
:func:`studies.design_sets.synthetic`. The figures are what ``refine = "stability"`` / ``"consensus"`` give in a job:
the subsample searches use the seeds a job draws
(:func:`hpcswarm.signatures.subsample.subsample_seed` under each task's seed). With
``--no-subsamples`` the subsample searches are skipped and the table has their rows only where they
are cached.

Run from the repository root; every step is cached in WORK, so a stopped study continues:

    mpiexec -n 2 python -m studies.study_refine WORK [NAME ...]

1. the Experiment II job per dataset (``WORK/NAME.h5``, ``refine = "prune-compact"``);
2. per task, the subsample searches (``WORK/subsamples/NAME/run-R-fold-F.npz``), tasks
   dealt over the MPI ranks;
3. the table, on rank 0 (``--table`` prints it from what is cached, computing nothing).
"""

import argparse
import json
import sys
import time
from pathlib import Path

import h5py
import numpy as np
from scipy.stats import f_oneway

from hpcswarm.comm import world
from hpcswarm.data import load_dataset
from hpcswarm.fitness import KnnEvaluator
from hpcswarm.run.job import run_job
from hpcswarm.run.jobfile import read_job
from hpcswarm.selection.search import run_search
from hpcswarm.selection.spec import SPEC, SearchSpec
from hpcswarm.signatures.relevance import best_prefix, relevance_prefix
from hpcswarm.signatures.subsample import (SubsampleSelections, consensus_prune,
                                           search_subsamples, stability_prefix)
from hpcswarm.store.atomic import atomic_path
from studies.design_sets import (DESIGN_SETS, MAX_SIGNATURE, PLANTED, ROOT, data_path,
                                 rule_figures, synthetic, tasks, tested)

TABLE_5 = {"SRBCT": "93.26 +/- 2.86, 15.01 genes", "leukemia": "87.84 +/- 2.89, 236.45 genes",
           "Prostate_GE": "81.79 +/- 2.18, 972.25 genes (Prostate Tumor, 10509 genes)",
           "GLIOMA": "73.85 +/- 4.57, 882.37 genes (Brain Tumor 2, 10367 genes)"}
RUNS, SEED = 3, 2016
RULES = ("PSO-LSRG", "+prune-compact", "+relevance", "+F-ranking", "+stability", "+consensus")
SUBSAMPLE_ROWS = ("+stability", "+consensus")


def searches(name, work, comm, overrides=()):
    """Step 1: the Experiment II job on ``name`` (every rank calls; skipped when done);
    ``overrides``: more job keys (``"key=value"``, as ``--set`` takes them) after the
    study's own."""
    output = work / f"{name}.h5"
    if output.exists():
        return output
    if DESIGN_SETS[name] is None and comm.rank == 0 and not data_path(name, work).exists():
        synthetic(data_path(name, work))
    comm.barrier()
    job = read_job(ROOT / "jobs" / "pso-lsrg-experiment-ii.toml",
                   [f"data={data_path(name, work)}", f"output={output}", f"runs={RUNS}",
                    f"seed={SEED}", "refine=prune-compact", *overrides])
    run_job(job, comm, quiet=True)
    comm.barrier()  # rank 0 writes the results after the other ranks have left the job
    return output


def f_ranking(X, y):
    """The comparison for ``relevance``: the first genes by one statistic for all classes,
    the ANOVA F (ties to the lower column)."""
    statistic = np.nan_to_num(f_oneway(*[X[y == code] for code in np.unique(y)]).statistic)
    return np.lexsort((np.arange(X.shape[1]), -statistic))[:MAX_SIGNATURE]


def subsample_file(work, name, task):
    return work / "subsamples" / name / f"run-{task['run']}-fold-{task['fold']}.npz"


def subsamples(name, work, comm, params):
    """Step 2: the subsample searches of every task, dealt over the ranks."""
    dataset = load_dataset(data_path(name, work))
    X = np.asarray(dataset.X, dtype=np.float64)
    spec = SearchSpec.build("pso-lsrg", params, refine="prune-compact")

    def search(part, labels, seed):
        return run_search(part, labels, spec, seed=seed).refined.genes

    for number, task in enumerate(tasks(work / f"{name}.h5")):
        target = subsample_file(work, name, task)
        if number % comm.size != comm.rank or target.exists():
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        root = np.random.SeedSequence(SEED, spawn_key=task["key"])
        chosen = search_subsamples(search, X[task["train"]], dataset.y[task["train"]],
                                   SPEC["subsamples"].default, root)
        # whole or not at all: a file that exists is a task done (a killed study resumes)
        with atomic_path(target) as temporary, open(temporary, "wb") as handle:
            np.savez(handle, seconds=time.perf_counter() - started,
                     sizes=[genes.size for genes in chosen.signatures],
                     genes=np.concatenate(chosen.signatures))
        print(f"{name} run {task['run']} fold {task['fold']}: "
              f"{time.perf_counter() - started:.0f} s", flush=True)


def _stored_selections(path, n_genes):
    stored = np.load(path)
    signatures = np.split(stored["genes"], np.cumsum(stored["sizes"])[:-1])
    return SubsampleSelections(signatures, n_genes), float(stored["seconds"])


def rows(name, work):
    """Step 3: per rule, the fold accuracies, sizes, selections and refinement seconds (the
    subsample rules only where every task's subsample searches are cached)."""
    dataset = load_dataset(data_path(name, work))
    X, y = np.asarray(dataset.X, dtype=np.float64), dataset.y
    n_genes = X.shape[1]
    found_tasks = tasks(work / f"{name}.h5")
    searched = all(subsample_file(work, name, task).exists() for task in found_tasks)
    found = {rule: [] for rule in RULES if searched or rule not in SUBSAMPLE_ROWS}
    for task in found_tasks:
        train = task["train"]
        scorer = KnnEvaluator(X[train], y[train], k=1, cv="loo")
        chosen = {"PSO-LSRG": (task["genes"], 0.0), "+prune-compact": (task["pruned"], 0.0)}
        started = time.perf_counter()
        chosen["+relevance"] = (relevance_prefix(scorer, X[train], y[train]).genes,
                                time.perf_counter() - started)
        started = time.perf_counter()
        ranked = best_prefix(scorer, f_ranking(X[train], y[train]), "F-ranking")
        chosen["+F-ranking"] = (ranked.genes, time.perf_counter() - started)
        if searched:
            selections, seconds = _stored_selections(subsample_file(work, name, task), n_genes)
            started = time.perf_counter()
            kept = stability_prefix(scorer, X[train], y[train], selections)
            chosen["+stability"] = (kept.genes, seconds + time.perf_counter() - started)
            started = time.perf_counter()
            chosen["+consensus"] = (consensus_prune(scorer, X[train], y[train],
                                                    selections).genes,
                                    seconds + time.perf_counter() - started)
        for rule, (genes, cost) in chosen.items():
            found[rule].append({**tested(X, y, task, genes), "cost": cost / task["seconds"]})
    return found, n_genes


def table(name, work):
    """The study's lines for ``name`` (None when a step is missing)."""
    if not (work / f"{name}.h5").exists():
        return None
    found, n_genes = rows(name, work)
    base = np.array([r["correct"] / r["total"] for r in found["PSO-LSRG"]])
    lines = [f"{name} ({n_genes} genes, {RUNS} runs x 10 folds)"
             + (f"; Tran et al. Table 5, PSO-LSRG: {TABLE_5[name]}" if name in TABLE_5 else ""),
             f"  {'rule':16s} {'test acc. % (sd)':>17s} {'p below':>7s} {'genes':>6s} "
             f"{'max':>4s} {'K folds':>7s} {'K runs':>6s} {'J folds':>7s} "
             f"{'Nogueira [95% CI]':>22s} {'cost':>5s} {'bar':>3s}"
             + ("  planted/noise" if DESIGN_SETS[name] is None else "")]
    for rule, records in found.items():
        figures = rule_figures(records, base, n_genes, name, compare=rule != "PSO-LSRG")
        summary, sizes, per_run = figures["summary"], figures["sizes"], figures["per_run"]
        nogueira = summary["nogueira"]
        line = (f"  {rule:16s} {np.mean(per_run):8.2f} ({np.std(per_run, ddof=1):5.2f}) "
                f"{figures['below']:7.3f} {sizes.mean():6.1f} {sizes.max():4d} "
                f"{figures['kuncheva']:7.3f} {summary['runs']['kuncheva']:6.3f} "
                f"{summary['folds']['jaccard']:7.3f} {nogueira['estimate']:6.3f} "
                f"[{nogueira['lower']:5.3f}, {nogueira['upper']:5.3f}] "
                f"{np.mean([r['cost'] for r in records]):5.2f} "
                f"{'yes' if figures['meets'] else 'no':>3s}")
        if DESIGN_SETS[name] is None:
            planted = np.mean([np.count_nonzero(r["genes"] < PLANTED) for r in records])
            line += f"  {planted:5.1f}/{sizes.mean() - planted:.1f}"
        lines.append(line)
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("work", type=Path, help="folder of the cached steps")
    parser.add_argument("names", nargs="*", choices=[[], *DESIGN_SETS], default=[],
                        metavar="NAME", help=f"design sets (default all: {', '.join(DESIGN_SETS)})")
    parser.add_argument("--table", action="store_true", help="print from the cache only")
    parser.add_argument("--no-subsamples", action="store_true",
                        help="run the jobs but not the subsample searches (the table leaves "
                             "out the subsample rules where they are not cached)")
    args = parser.parse_args(argv)
    names = args.names or list(DESIGN_SETS)
    comm = world()
    if comm.rank == 0:
        args.work.mkdir(parents=True, exist_ok=True)
    comm.barrier()
    if not args.table:
        for name in names:
            output = searches(name, args.work, comm)
            with h5py.File(output, "r") as f:
                params = json.loads(f.attrs["params"])
            if not args.no_subsamples:
                subsamples(name, args.work, comm, params)
            comm.barrier()
    if comm.rank == 0:
        for name in names:
            lines = table(name, args.work)
            print("\n".join(lines) if lines else f"{name}: not computed yet", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
