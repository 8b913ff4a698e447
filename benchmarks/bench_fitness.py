"""Speed of the k-NN fitness engine against scikit-learn and the bare BLAS product.

For (a) a synthetic 203 x 12600 matrix (the shape of the Lung Cancer set) and (b) SRBCT
(83 x 2308), with half of the genes selected, under 1-NN leave-one-out and 5-NN 10-fold:
milliseconds per evaluation of ``KnnEvaluator.score`` (archive off), of scikit-learn's
``cross_val_score`` on the same folds, of the bare numpy product of the selected columns,
and of the incremental evaluation after flipping 2 % of the genes. Times are the best of
many single calls (the machine may be shared); the medians are in the JSON.

Then, on the synthetic matrix written with hpcswarm's writer and opened memory-mapped, the
same two evaluations (half the genes, 1-NN leave-one-out; 2 % flips cycling over 20 flip
sets; the variants called in turn) by the evaluator on a private gene-major copy of the rows
(``KnnEvaluator(X[rows])``, as every rank did before the searches read ``X_genes``) and by
the evaluator reading the file's memory-mapped ``X_genes``
(``KnnEvaluator(GeneMajor(X_genes, rows))``), for all samples and for a 90 % subset (an unbiased outer fold's training rows); medians printed.
The last line of output is one JSON object holding every figure printed.

Run: ``python benchmarks/bench_fitness.py [--threads N] [--repeats R]``.
"""

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

import numpy as np
from sklearn.model_selection import cross_val_score
from sklearn.neighbors import KNeighborsClassifier
from threadpoolctl import threadpool_info, threadpool_limits

from hpcswarm.data import Dataset, open_dataset, write_dataset
from hpcswarm.fitness import GeneMajor, KnnEvaluator

FLIP_FRACTION = 0.02
SELECTED_FRACTION = 0.5
CONFIGS = (("1nn-loo", 1, "loo"), ("5nn-10fold", 5, 10))


def timed_ms(function, calls):
    """``(best, median)`` of ``calls`` single-call times of ``function``, in milliseconds.

    Single calls and their minimum: on a shared machine a longer timed loop almost always
    includes a preemption, a single short call often does not.
    """
    function()
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return 1e3 * min(times), 1e3 * float(np.median(times))


def synthetic(rng):
    """A positive, heteroscedastic 203 x 12600 expression-like matrix with 5 classes."""
    y = np.repeat(np.arange(5), [139, 17, 21, 16, 10])  # >= 10 per class for 10-fold
    centres = rng.normal(scale=0.05, size=(5, 12600))
    X = np.exp(rng.normal(loc=5.0, scale=1.0, size=12600) + centres[y]
               + rng.normal(scale=0.5, size=(203, 12600)))
    return X, y


def srbct():
    from hpcswarm.data import load_dataset

    dataset = load_dataset("builtin:srbct")
    return np.asarray(dataset.X, dtype=np.float64), np.asarray(dataset.y)


def measure(name, X, y, k, cv, rng, repeats):
    """Every figure of one dataset and configuration, as a dict."""
    n_genes = X.shape[1]
    mask = rng.random(n_genes) < SELECTED_FRACTION
    evaluator = KnnEvaluator(X, y, k=k, cv=cv, seed=0)
    ours = timed_ms(lambda: evaluator.score(mask), repeats)
    Xs = np.ascontiguousarray(X[:, mask])
    gemm = timed_ms(lambda: Xs @ Xs.T, repeats)
    gene_major = np.ascontiguousarray(Xs.T)
    gemm_gene_major = timed_ms(lambda: gene_major.T @ gene_major, repeats)
    select_gemm = timed_ms(lambda: (lambda a: a.T @ a)(np.ascontiguousarray(X[:, mask].T)),
                           repeats)
    model = KNeighborsClassifier(n_neighbors=k, algorithm="brute")
    folds = evaluator.folds
    sklearn_ms = timed_ms(lambda: cross_val_score(model, Xs, y, cv=folds),
                          1 if cv == "loo" else repeats)
    sk_correct = int(round(sum(cross_val_score(model, Xs, y, cv=folds)
                               * np.array([t.size for _, t in folds]))))
    n_flip = max(1, int(round(FLIP_FRACTION * n_genes)))
    state = evaluator.new_state(mask)
    flips = [rng.choice(n_genes, size=n_flip, replace=False) for _ in range(20)]
    cycle = iter(range(10**9))
    flip = timed_ms(lambda: evaluator.score_flip(state, flips[next(cycle) % len(flips)]),
                    10 * repeats)
    return {
        "dataset": name, "shape": list(X.shape), "k": k, "cv": cv,
        "genes_selected": int(mask.sum()), "genes_flipped": n_flip,
        "ours_ms": ours[0], "sklearn_ms": sklearn_ms[0], "gemm_ms": gemm[0],
        "gemm_gene_major_ms": gemm_gene_major[0], "select_gemm_ms": select_gemm[0],
        "incremental_ms": flip[0],
        "median_ms": {"ours": ours[1], "sklearn": sklearn_ms[1], "gemm": gemm[1],
                      "gemm_gene_major": gemm_gene_major[1], "select_gemm": select_gemm[1],
                      "incremental": flip[1]},
        "speedup_vs_sklearn": sklearn_ms[0] / ours[0],
        "ours_over_best_gemm": ours[0] / min(gemm[0], gemm_gene_major[0]),
        "full_over_incremental": ours[0] / flip[0],
        "correct_ours": evaluator.score(mask).correct, "correct_sklearn": sk_correct,
    }


def interleaved_ms(functions, calls):
    """Median and best single-call times (ms) of each function, the calls taken in turn.

    Taking the functions in turn gives each the same share of a shared machine's load.
    """
    for function in functions.values():
        function()
    times = {name: [] for name in functions}
    for _ in range(calls):
        for name, function in functions.items():
            start = time.perf_counter()
            function()
            times[name].append(time.perf_counter() - start)
    return {name: (1e3 * float(np.median(t)), 1e3 * min(t)) for name, t in times.items()}


def measure_gene_major(X, y, rng, repeats):
    """Private copy vs memory-mapped ``X_genes``, all samples and a 90 % subset (ms)."""
    rows_by_case = {"all": np.arange(X.shape[0]),
                    "90%": np.sort(rng.choice(X.shape[0], size=int(0.9 * X.shape[0]),
                                              replace=False))}
    mask = rng.random(X.shape[1]) < SELECTED_FRACTION
    n_flip = max(1, int(round(FLIP_FRACTION * X.shape[1])))
    flips = [rng.choice(X.shape[1], size=n_flip, replace=False) for _ in range(20)]
    with tempfile.TemporaryDirectory(prefix="hpcswarm-bench-") as folder:
        path = Path(folder) / "bench.h5"
        write_dataset(Dataset(X=X, y=y, class_names=[str(c) for c in np.unique(y)],
                              gene_names=[f"g{j}" for j in range(X.shape[1])]), path)
        dataset = open_dataset(path)
        full, flip = {}, {}
        for case, rows in rows_by_case.items():
            sources = {"private-copy": np.asarray(dataset.X)[rows],
                       "memmap": GeneMajor(dataset.X_genes, rows)}
            scores = {}
            for source, data in sources.items():
                evaluator = KnnEvaluator(data, y[rows], k=1, cv="loo")
                state = evaluator.new_state(mask)
                cycle = iter(range(10**9))
                full[case, source] = lambda e=evaluator: e.score(mask)
                flip[case, source] = (lambda e=evaluator, s=state, c=cycle:
                                      e.score_flip(s, flips[next(c) % len(flips)]))
                scores[source] = [evaluator.score(mask)] + [evaluator.score_flip(state, f)
                                                            for f in flips]
            if scores["private-copy"] != scores["memmap"]:
                raise RuntimeError("the memory-mapped evaluator disagrees with the copy")
        full_ms, flip_ms = interleaved_ms(full, repeats), interleaved_ms(flip, 10 * repeats)
    rows_out = [{"rows": case, "n_rows": int(rows_by_case[case].size), "source": source,
                 "full_median_ms": full_ms[case, source][0],
                 "flip_median_ms": flip_ms[case, source][0],
                 "full_best_ms": full_ms[case, source][1],
                 "flip_best_ms": flip_ms[case, source][1]} for case, source in full]
    return {"genes_selected": int(mask.sum()), "genes_flipped": n_flip, "rows": rows_out}


def blas_threads():
    return sorted({(p["internal_api"], p["num_threads"]) for p in threadpool_info()})


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, help="BLAS/OpenMP threads (default: as found)")
    parser.add_argument("--repeats", type=int, default=15,
                        help="single calls timed per figure (10x for the incremental one)")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(2024)
    with threadpool_limits(limits=args.threads):
        threads = blas_threads()
        load = [round(x, 2) for x in os.getloadavg()]
        print(f"thread pools: {', '.join(f'{api}={n}' for api, n in threads)}; "
              f"load average before: {load}")
        X, y = synthetic(rng)
        datasets = [("synthetic-203x12600", X, y), ("srbct", *srbct())]
        rows = []
        header = (f"{'dataset':<20} {'config':<11} {'ours':>8} {'sklearn':>9} {'gemm':>8} "
                  f"{'gemm-gm':>8} {'sel+gemm':>8} {'flip2%':>7} {'x sk':>7} {'/gemm':>6} "
                  f"{'full/flip':>9} {'correct':>9}")
        print("milliseconds per evaluation (best single call; medians in the JSON)")
        print(header)
        for name, X, y in datasets:
            for config, k, cv in CONFIGS:
                r = measure(name, X, y, k, cv, rng, args.repeats)
                r["config"] = config
                rows.append(r)
                print(f"{name:<20} {config:<11} {r['ours_ms']:8.2f} {r['sklearn_ms']:9.1f} "
                      f"{r['gemm_ms']:8.2f} {r['gemm_gene_major_ms']:8.2f} "
                      f"{r['select_gemm_ms']:8.2f} {r['incremental_ms']:7.2f} "
                      f"{r['speedup_vs_sklearn']:7.0f} {r['ours_over_best_gemm']:6.2f} "
                      f"{r['full_over_incremental']:9.1f} "
                      f"{r['correct_ours']:>4}/{r['correct_sklearn']:<4}", flush=True)
        X, y = datasets[0][1:]
        gene_major = measure_gene_major(X, y, rng, args.repeats)
        print(f"{X.shape[0]} x {X.shape[1]} from an HDF5 file, 1-NN LOO, "
              f"{gene_major['genes_selected']} genes selected, {gene_major['genes_flipped']} "
              "flipped: median ms per evaluation")
        print(f"{'rows':<5} {'source':<13} {'full':>8} {'flip2%':>8}   (best: full, flip2%)")
        for r in gene_major["rows"]:
            print(f"{r['rows']:<5} {r['source']:<13} {r['full_median_ms']:8.2f} "
                  f"{r['flip_median_ms']:8.3f}   ({r['full_best_ms']:.2f}, "
                  f"{r['flip_best_ms']:.3f})", flush=True)
        print(json.dumps({"threads": dict(threads), "load_average_before": load,
                          "load_average_after": [round(x, 2) for x in os.getloadavg()],
                          "results": rows, "gene_major": gene_major}))


if __name__ == "__main__":
    main()
