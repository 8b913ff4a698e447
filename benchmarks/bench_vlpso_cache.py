"""VLPSO with each particle scored from its previous subset, beside every subset in full.

``select``'s search (VLPSO at today's default settings, written out so that a later change
of a default does not move the comparison) on a planted float32 matrix (``--sizes``, each
``SAMPLESxGENES``: normal values, 3 classes, a class signal of 0.5 on 50 genes; written once
with hpcswarm's writer into ``--folder`` and memory-mapped), ``--particles`` particles and
``--rounds`` rounds, seed 0, one rank and one BLAS thread. Two paths, in turn in one loop,
``--repeats`` times each (after one untimed search of 2 rounds of each, so that compiling
the kernels and the first reads of the file fall outside the timings):

- ``full``: ``cache_memory=0``, no particle state: every subset one full product
  (``SubsetFitness.many``, the evaluation of 3740b40 and before);
- ``cached``: the default budget: each particle's distance state kept between rounds
  (:class:`hpcswarm.fitness.moves.ParticleStates`).

Both must give the same genes, fitness and history (but seconds). Printed per size: the
wall-clock and CPU seconds of each run (the CPU seconds of the process vary less when other
jobs share the cores), the median of each path and their ratios; per round of the last run of
each path: seconds, multiply-adds of the products (genes of the products times held-out
rows times samples), the genes flipped by the moves as a fraction of the genes of every
subset scored, the subsets
scored from a state or repeated (cache hits), and the bytes of the states held. The last
line is one JSON object holding every figure.

``--against PYTHON`` adds a third path to the loop: the same search by another installation
of hpcswarm (``PYTHON``, its interpreter, e.g. one of 3740b40, the version before the
particle states), in a process of its own (one untimed search of 2 rounds first), its wall
clock and CPU seconds measured there; its genes, fitness and history must equal the others'.

Run: ``python benchmarks/bench_vlpso_cache.py [--sizes 1000x3000 2000x5000]
[--particles 100] [--rounds 40 30] [--repeats 3 1] [--folder DIR] [--against PYTHON]``.
"""

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

import hpcswarm.swarm.engine.evaluation as evaluation_module
from hpcswarm.data import Dataset, open_dataset, write_dataset
from hpcswarm.fitness import GeneMajor
from hpcswarm.fitness.incremental import state_bytes
from hpcswarm.fitness.moves import ParticleStates
from hpcswarm.selection.methods import algorithm_params
from hpcswarm.selection.search import run_search
from hpcswarm.swarm.engine.loop import SearchHooks

N_CLASSES = 3
SIGNAL_GENES = 50
PATHS = {"full": 0.0, "cached": None}
"""Each path's ``cache_memory``: none, and the default budget."""


def planted_data(n_samples, n_genes, seed=0):
    """Gene-major float32 values (n_genes, n_samples) with a class signal, and the labels."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, N_CLASSES, size=n_samples)
    xt = rng.standard_normal((n_genes, n_samples), dtype=np.float32)
    xt[:SIGNAL_GENES] += 0.5 * y[None, :].astype(np.float32)
    return xt, y


def data_file(folder, n_samples, n_genes):
    """The planted dataset of this size (written when missing)."""
    path = Path(folder) / f"vlpso-cache-{n_samples}x{n_genes}.h5"
    if not path.exists():
        xt, y = planted_data(n_samples, n_genes)
        write_dataset(Dataset(X=xt.T, y=y, class_names=[f"c{c}" for c in range(N_CLASSES)],
                              gene_names=[f"g{j}" for j in range(n_genes)]), path)
    return path


class Recorded(ParticleStates):
    """The particle states of the searches of this process, each with its counts at the
    end of every round (benchmark instrumentation)."""

    made = []

    def __init__(self, *args):
        super().__init__(*args)
        self.rounds = []
        Recorded.made.append(self)


def one_search(data, y, params, cache_memory):
    """``(result, per-round counts, seconds, CPU seconds)`` of one search on one rank (the
    CPU seconds of this process, less sensitive than the wall clock to other jobs)."""
    Recorded.made.clear()
    rounds = []
    hooks = SearchHooks(progress=lambda row: rounds.append(
        {**Recorded.made[0].counts.as_dict(), "held": len(Recorded.made[0])}))
    started, cpu = time.perf_counter(), time.process_time()
    result = run_search(data, y, "vlpso", params, seed=0, cache_memory=cache_memory,
                        hooks=hooks)
    return result, rounds, time.perf_counter() - started, time.process_time() - cpu


def per_round(result, rounds, n_rows, n_samples, n_genes):
    """The figures of each round from the cumulative counts."""
    seconds = np.diff([0.0] + [row["seconds"] for row in result.history])
    table, before = [], {key: 0 for key in rounds[0]}
    for index, counts in enumerate(rounds):
        step = {key: counts[key] - before[key] for key in counts}
        before = counts
        products = step["full_genes"] + step["moved_genes"]
        table.append({
            "round": index, "seconds": float(seconds[index]),
            "multiply_adds": int(products) * n_rows * n_samples,
            "flipped": step["moved_genes"] / max(1, step["selected_genes"]),
            "hits": step["moved"] + step["repeated"],
            "full": step["rebuilt"] + step["uncached"],
            "state_bytes": counts["held"] * state_bytes(n_rows, n_samples, n_genes)})
    return table


def comparable(result):
    """What both paths must give alike."""
    history = [{k: v for k, v in row.items() if k != "seconds"} for row in result.history]
    return result.genes.tolist(), result.fitness, history


AGAINST = """
import json, sys, time
import numpy as np
from threadpoolctl import threadpool_limits
from hpcswarm.data import open_dataset
from hpcswarm.fitness import GeneMajor
from hpcswarm.selection.methods import algorithm_params
from hpcswarm.selection.search import run_search
path, particles, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
dataset = open_dataset(path)
data = GeneMajor(dataset.X_genes, finite=dataset.values_finite)
y = np.asarray(dataset.y)
params = {**algorithm_params("vlpso"), "n_particles": particles}
with threadpool_limits(1):
    run_search(data, y, "vlpso", {**params, "n_iterations": 2}, seed=0)
    started, cpu = time.perf_counter(), time.process_time()
    result = run_search(data, y, "vlpso", {**params, "n_iterations": rounds}, seed=0)
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
print(json.dumps({"seconds": elapsed, "cpu": cpu, "genes": np.asarray(result.genes).tolist(),
                  "fitness": result.fitness, "history": result.history}, default=float))
"""
"""The search of ``--against``'s installation, run by its interpreter: the same data,
settings and seed (VLPSO's default settings of that version, which the written-out defaults
here equal), every subset in full."""


def against_search(python, path, particles, rounds):
    """``(wall clock, CPU seconds, genes, fitness, history)`` of one search by ``python``."""
    done = subprocess.run([python, "-c", AGAINST, str(path), str(particles), str(rounds)],
                          capture_output=True, text=True, check=True,
                          cwd=Path(path).parent,  # not a checkout: ``-c`` imports from there
                          env={**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"})
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    return (figures["seconds"], figures["cpu"], figures["genes"], figures["fitness"],
            figures["history"])


def same_as(found, genes, fitness, history):
    """Whether another installation's search gave ``found``'s genes, fitness and history (on
    the keys of its history rows, seconds aside)."""
    mine_genes, mine_fitness, mine_history = found
    keys = [set(row) - {"seconds"} for row in history]
    return (genes == mine_genes and fitness == mine_fitness and len(history) == len(mine_history)
            and all(all(row[key] == mine[key] for key in shared)
                    for row, mine, shared in zip(history, mine_history, keys)))


def measure(path, rounds, repeats, particles, against=None):
    """Both paths on one size, in turn, ``repeats`` times each (and ``against``'s search)."""
    dataset = open_dataset(path)
    data = GeneMajor(dataset.X_genes, finite=dataset.values_finite)
    y = np.asarray(dataset.y)
    params = {**algorithm_params("vlpso"), "n_particles": particles, "n_iterations": rounds}
    for budget in PATHS.values():  # compiled kernels and first reads out of the timings
        one_search(data, y, {**params, "n_iterations": 2}, budget)
    names = list(PATHS) + (["against"] if against else [])
    seconds = {name: [] for name in names}
    cpu_seconds = {name: [] for name in names}
    found, tables, same_against = {}, {}, True
    for _ in range(repeats):
        for name in names:
            if name == "against":
                elapsed, cpu, *other = against_search(against, path, particles, rounds)
                same_against = same_against and same_as(found["full"], *other)
            else:
                result, counts, elapsed, cpu = one_search(data, y, params, PATHS[name])
                found[name] = comparable(result)
                tables[name] = per_round(result, counts, data.n_samples, data.n_samples,
                                         data.n_genes)
            print(f"  {data.n_samples} x {data.n_genes} {name}: {elapsed:.2f} s, CPU {cpu:.2f} s",
                  flush=True)
            seconds[name].append(elapsed)
            cpu_seconds[name].append(cpu)
    medians = {name: float(np.median(values)) for name, values in seconds.items()}
    cpu_medians = {name: float(np.median(values)) for name, values in cpu_seconds.items()}
    figures = {"n_samples": data.n_samples, "n_genes": data.n_genes, "particles": particles,
               "rounds": rounds, "seconds": seconds, "median": medians,
               "ratio": medians["cached"] / medians["full"], "cpu_seconds": cpu_seconds,
               "cpu_ratio": cpu_medians["cached"] / cpu_medians["full"],
               "same_results": found["full"] == found["cached"] and same_against,
               "per_round": tables}
    if against:
        figures.update(against=against, ratio_against=medians["cached"] / medians["against"],
                       cpu_ratio_against=cpu_medians["cached"] / cpu_medians["against"])
    return figures


def print_size(figures):
    """The figures of one size as a few lines and a per-round table."""
    print(f"\n{figures['n_samples']} x {figures['n_genes']}, {figures['particles']} particles, "
          f"{figures['rounds']} rounds; same results: {figures['same_results']}")
    for name, values in figures["seconds"].items():
        print(f"  {name:7s} s: {', '.join(f'{v:.2f}' for v in values)}  "
              f"(median {figures['median'][name]:.2f})")
    print(f"  cached / full: {figures['ratio']:.3f} (wall clock), "
          f"{figures['cpu_ratio']:.3f} (CPU seconds)")
    if "against" in figures:
        print(f"  cached / against ({figures['against']}): {figures['ratio_against']:.3f} "
              f"(wall clock), {figures['cpu_ratio_against']:.3f} (CPU seconds)")
    print("  round | full s  cached s | full Gmadd cached Gmadd | flipped | hits | "
          "full products | states MB")
    for full, cached in zip(*(figures["per_round"][name] for name in PATHS)):
        print(f"  {full['round']:5d} | {full['seconds']:6.2f} {cached['seconds']:9.2f} | "
              f"{full['multiply_adds'] / 1e9:10.2f} {cached['multiply_adds'] / 1e9:12.2f} | "
              f"{cached['flipped']:7.3f} | {cached['hits']:4d} | {cached['full']:13d} | "
              f"{cached['state_bytes'] / 1e6:9.1f}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", default=["1000x3000", "2000x5000"])
    parser.add_argument("--rounds", nargs="+", type=int, default=[40, 30],
                        help="rounds per size (the last repeats for further sizes)")
    parser.add_argument("--repeats", nargs="+", type=int, default=[3, 1],
                        help="runs of each path per size (the last repeats)")
    parser.add_argument("--particles", type=int, default=100)
    parser.add_argument("--folder", default=os.environ.get("TMPDIR", "/tmp"))
    parser.add_argument("--against", metavar="PYTHON",
                        help="another installation's interpreter: its search in the loop too")
    args = parser.parse_args(argv)
    evaluation_module.ParticleStates = Recorded
    print(f"load average before: {os.getloadavg()}", flush=True)
    document = []
    with threadpool_limits(1):
        for index, text in enumerate(args.sizes):
            n_samples, n_genes = (int(part) for part in text.lower().split("x"))
            path = data_file(args.folder, n_samples, n_genes)
            pick = lambda values: values[min(index, len(values) - 1)]  # noqa: E731
            figures = measure(path, pick(args.rounds), pick(args.repeats), args.particles,
                              args.against)
            print_size(figures)
            document.append(figures)
    print(f"load average after: {os.getloadavg()}")
    print(json.dumps({"results": document}))
    return 0 if all(figures["same_results"] for figures in document) else 1


if __name__ == "__main__":
    sys.exit(main())
