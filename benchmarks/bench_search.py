"""Search throughput at the papers' settings: reference paths beside today's, in one process.

On SRBCT (83 x 2308; Tran et al. 2016, Table 4: PSO-LSRG 77.7 s per run on average in their
Java code), each search is run ``--repeats`` times in this process and the figures printed
are seconds per run (CPU and wall, min and max), evaluations, and µs of CPU per evaluation:

* PSO-LSRG at the paper's settings, three ways, checked to give the same selected genes,
  fitness, history (but ``seconds``) and front:

  - *one try at a time*: the local search of Tran et al. Sec. 3.1-3.2 as first written
    (``SubsetFitness.flip`` and one observation per try, on the same drawn tries);
  - *batched, every try scored*: tries scored in blocks
    (:func:`hpcswarm.swarm.operators.local_search.local_search`), none left unscored;
  - *batched*: the same, scoring only the tries that could beat the current subset or
    enter the front (what ``run`` does);

  with the tries each way scored (speculative ones of a block included) beside the tries
  the paper's loop makes;
* with ``--methods`` (e.g. ``cso,fsipso,cbpso,sfs,sbs,gsbs,lfs``), each method at its
  defaults twice: every candidate scored (no try or greedy candidate left unscored) and as
  ``run`` does, checked identical;
* the arithmetic bound of one local-search try (the flips' symmetric Gram product,
  ``n^2 F`` multiply-adds) and of one full evaluation (``n^2 |S| / 2`` for a syrk over the
  run's mean subset size), both turned into µs by a bare batched GEMM timed in the same run;
* ``--cso-round``: CSO (5-NN 10-fold, Gu et al.) seconds per round on a synthetic
  200 x 12,600 matrix.

The machine these figures come from has 2 cores shared with other engineers' test suites:
wall times swing by a factor of several, CPU seconds (``process_time``) are the steadier
figure and the ratios of runs made side by side are what to compare. ``/proc/loadavg`` is
printed before and after.

Run: ``python benchmarks/bench_search.py [--repeats 3] [--iterations N] [--methods cso,...]
[--cso-round] [--threads 1]``. The last line of output is one JSON object of every figure.
"""

import argparse
import json
import time
from contextlib import ExitStack, contextmanager

import numpy as np
from threadpoolctl import threadpool_limits

from hpcswarm.baselines import greedy
from hpcswarm.data import load_dataset
from hpcswarm.fitness.subset import SubsetFitness
from hpcswarm.selection.search import run_search
from hpcswarm.swarm.engine.ordering import better
from hpcswarm.swarm.operators import local_search

PAPER_SECONDS = {"pso-lsrg": 77.7}
"""Tran et al. 2016, Table 4: mean seconds of one PSO-LSRG run on SRBCT (Java, their PC)."""


def one_try_at_a_time(fitness, mask, value, tries, observe=None, needed=None):
    """The reference local search: one incremental evaluation, one observe per try."""
    current = np.array(mask, dtype=bool)
    size = int(current.sum())
    state = fitness.new_state(current)
    for genes in tries:
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
def patched(owner, name, value):
    """``owner.name`` set to ``value`` for the duration of the block."""
    saved = getattr(owner, name)
    setattr(owner, name, value)
    try:
        yield
    finally:
        setattr(owner, name, saved)


def every_candidate_scored():
    """No local-search try and no greedy candidate left unscored: every subset may win."""
    stack = ExitStack()
    stack.enter_context(patched(SubsetFitness, "highest",
                                lambda self, sizes: np.full(np.shape(sizes), np.inf)))
    stack.enter_context(patched(greedy, "FIRST_CHUNK", 2**62))
    return stack


class TryCounter:
    """Counts the tries a run's local searches score (``SubsetFitness.flip``/``flips``)."""

    def __init__(self):
        self.scored = 0

    def __enter__(self):
        flip, flips = SubsetFitness.flip, SubsetFitness.flips
        counter = self

        def counting_flip(fitness, state, genes):
            counter.scored += 1
            return flip(fitness, state, genes)

        def counting_flips(fitness, state, rows):
            counter.scored += len(rows)
            return flips(fitness, state, rows)

        self._stack = ExitStack()
        self._stack.enter_context(patched(SubsetFitness, "flip", counting_flip))
        self._stack.enter_context(patched(SubsetFitness, "flips", counting_flips))
        return self

    def __exit__(self, *exc):
        return self._stack.__exit__(*exc)


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
    front = [(p["size"], p["fitness"], p["genes"].tolist()) for p in result.front]
    return (result.genes.tolist(), result.fitness, history, front)


def summary(label, result, times, scored=None):
    wall, cpu = np.array(times).T
    evaluations = result.history[-1]["evaluations"]
    row = {"label": label, "evaluations": evaluations, "wall_s": [wall.min(), wall.max()],
           "cpu_s": [cpu.min(), cpu.max()], "cpu_us_per_evaluation": 1e6 * cpu.min() / evaluations}
    tries = ""
    if scored is not None:
        row["tries_scored_per_run"] = scored
        tries = f"   {scored:7d} tries scored"
    print(f"{label:36s} CPU {cpu.min():7.2f}-{cpu.max():7.2f} s   wall {wall.min():7.2f}-"
          f"{wall.max():7.2f} s   {evaluations:8d} evaluations   "
          f"{row['cpu_us_per_evaluation']:6.1f} µs CPU each{tries}", flush=True)
    return row


def pso_lsrg_three_ways(data, params, repeats):
    """The three PSO-LSRG paths side by side, checked identical; their figures."""
    runs = {}
    for label, reference, every in (("pso-lsrg one try at a time", True, True),
                                    ("pso-lsrg batched, every try scored", False, True),
                                    ("pso-lsrg batched", False, False)):
        with ExitStack() as stack:
            if reference:
                stack.enter_context(patched(local_search, "local_search", one_try_at_a_time))
            if every:
                stack.enter_context(every_candidate_scored())
            counter = stack.enter_context(TryCounter())
            result, times = timed_runs(data, "pso-lsrg", params, repeats)
        runs[label] = (result, times, counter.scored // repeats)
    results = [comparable(result) for result, _, _ in runs.values()]
    if any(other != results[0] for other in results[1:]):
        raise SystemExit("the PSO-LSRG paths gave different results")
    figures = {label: summary(label, *run) for label, run in runs.items()}
    paper_tries = runs["pso-lsrg one try at a time"][2]
    cpu = {label: min(c for _, c in run[1]) for label, run in runs.items()}
    reference = cpu["pso-lsrg one try at a time"]
    every = reference / cpu["pso-lsrg batched, every try scored"]
    batched = reference / cpu["pso-lsrg batched"]
    print(f"identical results (genes, fitness, history but seconds, front). CPU, one try at a "
          f"time / batched every try: {every:.1f}x, / batched: {batched:.1f}x. Tries: "
          f"{paper_tries} in the paper's loop, {runs['pso-lsrg batched'][2]} scored batched. "
          f"Tran et al. Table 4: {PAPER_SECONDS['pso-lsrg']} s (Java)", flush=True)
    figures["paper_seconds"] = PAPER_SECONDS["pso-lsrg"]
    return figures, runs["pso-lsrg batched"][0]


def method_two_ways(data, method, params, repeats):
    """``method`` with every candidate scored beside the default path, checked identical."""
    with every_candidate_scored():
        reference, ref_times = timed_runs(data, method, params, repeats)
    result, times = timed_runs(data, method, params, repeats)
    if comparable(reference) != comparable(result):
        raise SystemExit(f"{method}: leaving candidates unscored changed the result")
    return {"every candidate scored": summary(f"{method} every candidate scored", reference,
                                              ref_times),
            "default": summary(method, result, times)}


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


def load():
    with open("/proc/loadavg") as handle:
        return handle.read().split()[0]


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
    figures = {"load_before": load()}
    print(f"load average {figures['load_before']}", flush=True)
    with threadpool_limits(args.threads):
        figures["pso-lsrg"], batched = pso_lsrg_three_ways(data, params, args.repeats)
        mean_size = np.mean([row["mean_size"] for row in batched.history])
        figures["bound"] = gemm_bound(data.X.shape[0], max(1, round(0.02 * data.X.shape[1])),
                                      mean_size)
        for method in filter(None, args.methods.split(",")):  # at their defaults
            figures[method] = method_two_ways(data, method, {}, args.repeats)
        if args.cso_round:
            figures["cso_round_200x12600_s"] = cso_round(args.repeats)
    figures["load_after"] = load()
    print(f"load average {figures['load_after']}", flush=True)
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
