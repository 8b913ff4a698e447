"""Search throughput at the papers' settings: the one-at-a-time path beside the batched one.

For each method at its paper settings on SRBCT (83 x 2308; Tran et al. 2016, Table 4 gives
PSO-LSRG 77.7 s on average in their Java code), this runs the search ``--repeats`` times in
one process and prints seconds per run (wall and CPU, min and max), evaluations and µs per
evaluation:

* ``pso-lsrg`` twice: the reference path, its local search one try per call (the loop of
  Tran et al. Sec. 3.1-3.2 as first written: ``rng.choice`` then ``SubsetFitness.flip``
  per try, the tries observed one by one), and the batched path (tries drawn at once,
  scored in blocks, :func:`hpcswarm.swarm.pso.local_search`); both runs are checked to give
  the same selected genes, fitness and history (but ``seconds``);
* with ``--methods``, other methods (e.g. ``cso,fsipso,sfs``) once each at their defaults;
* the arithmetic bound of one local-search try (the flips' symmetric Gram product,
  ``n^2 F`` multiply-adds) and of one full evaluation (``n^2 |S| / 2`` for a syrk over the
  run's mean subset size), both turned into µs by a bare batched GEMM timed in the same run;
* ``--cso-round``: CSO (5-NN 10-fold, Gu et al.) seconds per round on a synthetic
  200 x 12,600 matrix.

The machine these figures come from has 2 cores shared with six other engineers' test
suites: wall times swing by a factor of several, CPU seconds (``process_time``) are the
steadier figure and the ratios of runs made side by side are what to compare.

Run: ``python benchmarks/bench_search.py [--repeats 3] [--iterations N] [--methods cso,...]
[--cso-round] [--threads 1]``. The last line of output is one JSON object of every figure.
"""

import argparse
import json
import time
from contextlib import contextmanager

import numpy as np
from threadpoolctl import threadpool_limits

from hpcswarm.data import load_dataset
from hpcswarm.search import run_search
from hpcswarm.swarm import pso
from hpcswarm.swarm.core import better

PAPER_SECONDS = {"pso-lsrg": 77.7}
"""Tran et al. 2016, Table 4: mean seconds of one PSO-LSRG run on SRBCT (Java, their PC)."""


def one_try_at_a_time(fitness, mask, value, n_tries, n_flip, rng, observe=None):
    """The reference local search: one draw, one incremental evaluation, one observe per try."""
    current = np.array(mask, dtype=bool)
    size = int(current.sum())
    state = fitness.new_state(current)
    for _ in range(n_tries):
        genes = np.sort(rng.choice(current.size, n_flip, replace=False))
        candidate_value = fitness.flip(state, genes)
        candidate_size = size + int((~current[genes]).sum()) - int(current[genes].sum())
        if observe is not None:
            observe(current, genes[None, :], np.array([candidate_value]),
                    np.array([candidate_size]))
        if better(candidate_value, candidate_size, value, size):
            fitness.apply_flip(state, genes)
            current[genes] = ~current[genes]
            value, size = float(candidate_value), candidate_size
    return current, value, current != mask


@contextmanager
def reference_local_search():
    """PSO-LSRG with the one-try-at-a-time local search, for the duration of the block."""
    batched = pso.local_search
    pso.local_search = one_try_at_a_time
    try:
        yield
    finally:
        pso.local_search = batched


def timed_runs(data, algorithm, params, repeats):
    """(results of the last run, list of (wall, cpu) seconds of the search per run)."""
    times = []
    for _ in range(repeats):
        wall, cpu = time.perf_counter(), time.process_time()
        result = run_search(data.X, data.y, algorithm, params, seed=1)
        times.append((time.perf_counter() - wall, time.process_time() - cpu))
    return result, times


def comparable(result):
    history = [{k: v for k, v in row.items() if k != "seconds"} for row in result.history]
    return (result.genes.tolist(), result.fitness, history)


def summary(label, result, times):
    wall, cpu = np.array(times).T
    evaluations = result.history[-1]["evaluations"]
    row = {"label": label, "evaluations": evaluations, "wall_s": [wall.min(), wall.max()],
           "cpu_s": [cpu.min(), cpu.max()], "cpu_us_per_evaluation": 1e6 * cpu.min() / evaluations}
    print(f"{label:28s} CPU {cpu.min():7.2f}-{cpu.max():7.2f} s   wall {wall.min():7.2f}-"
          f"{wall.max():7.2f} s   {evaluations:7d} evaluations   "
          f"{row['cpu_us_per_evaluation']:6.1f} µs CPU each", flush=True)
    return row


def gemm_bound(n_samples, n_flip, mean_size):
    """µs of the arithmetic of one try and one full evaluation, at a bare GEMM's measured rate."""
    rng = np.random.default_rng(0)
    rows = rng.random((50, n_flip, n_samples))
    gram = np.empty((50, n_samples, n_samples))
    start = time.process_time()
    for _ in range(40):
        np.matmul(rows.transpose(0, 2, 1), rows, out=gram)
    seconds = (time.process_time() - start) / (40 * 50)
    rate = 2.0 * n_samples * n_samples * n_flip / seconds  # flop/s of the full batched GEMM
    try_flops = n_samples * n_samples * n_flip  # symmetric half, 2 flops per multiply-add
    full_flops = n_samples * n_samples * mean_size
    bound = {"gemm_gflops": rate / 1e9, "try_mflop": try_flops / 1e6,
             "try_bound_us": 1e6 * try_flops / rate, "full_mflop": full_flops / 1e6,
             "full_bound_us": 1e6 * full_flops / rate}
    print(f"bound: batched GEMM {bound['gemm_gflops']:.1f} GFlop/s; one try {try_flops / 1e6:.2f}"
          f" Mflop = {bound['try_bound_us']:.1f} µs; one full evaluation of {mean_size:.0f} "
          f"genes {full_flops / 1e6:.2f} Mflop = {bound['full_bound_us']:.1f} µs", flush=True)
    return bound


def cso_round(repeats):
    """Seconds per round of CSO (5-NN 10-fold) on a synthetic 200 x 12,600 matrix."""
    rng = np.random.default_rng(7)
    X = rng.normal(size=(200, 12600))
    y = np.arange(200) % 4
    X[:, :20] += y[:, None]
    per_round = []
    for _ in range(repeats):
        result = run_search(X, y, "cso", {"n_iterations": 3}, seed=1)
        seconds = [row["seconds"] for row in result.history]
        per_round.append(float(np.diff(seconds).mean()))
    print(f"cso 5-NN 10-fold, 200 x 12600: {min(per_round):.2f}-{max(per_round):.2f} s wall "
          f"per round (rounds 1-2, 100 particles)", flush=True)
    return per_round


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--iterations", type=int, default=None,
                        help="override n_iterations (default: the paper's)")
    parser.add_argument("--methods", default="", help="more methods, comma-separated")
    parser.add_argument("--cso-round", action="store_true")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)
    data = load_dataset("builtin:srbct")
    params = {} if args.iterations is None else {"n_iterations": args.iterations}
    figures = {}
    with threadpool_limits(args.threads):
        with reference_local_search():
            reference, ref_times = timed_runs(data, "pso-lsrg", params, args.repeats)
        batched, times = timed_runs(data, "pso-lsrg", params, args.repeats)
        if comparable(reference) != comparable(batched):
            raise SystemExit("the batched local search changed the result")
        figures["pso-lsrg one at a time"] = summary("pso-lsrg one try at a time", reference,
                                                    ref_times)
        figures["pso-lsrg batched"] = summary("pso-lsrg batched", batched, times)
        ratio = np.array(ref_times)[:, 1].min() / np.array(times)[:, 1].min()
        print(f"identical results; batched is {ratio:.1f}x faster (CPU); Tran et al. Table 4: "
              f"{PAPER_SECONDS['pso-lsrg']} s (Java)", flush=True)
        figures["pso-lsrg cpu ratio"] = ratio
        mean_size = np.mean([row["mean_size"] for row in batched.history])
        figures["bound"] = gemm_bound(data.X.shape[0], max(1, round(0.02 * data.X.shape[1])),
                                      mean_size)
        for method in filter(None, args.methods.split(",")):
            result, method_times = timed_runs(data, method, params, 1)
            figures[method] = summary(method, result, method_times)
        if args.cso_round:
            figures["cso_round_200x12600_s"] = cso_round(args.repeats)
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
