"""Large cohorts: start-up, full evaluation beside the bare GEMM, flips, memory, shards.

On synthetic float32 data of 2,000, 5,000 and 10,000 samples x 20,000 genes (normal values,
4 classes, a class signal on 50 genes; written once with hpcswarm's writer into
``--folder`` and memory-mapped), 1-NN leave-one-out, 500 genes selected, for 1 and 2 sample
shards (``mpiexec -n 2``: with 1 shard each rank is a particle group of its own and makes
the whole evaluation, as two particles would; with 2 shards the two ranks make one
evaluation together). Per configuration, every figure the slowest rank's:

- start-up: opening the file (:func:`~hpcswarm.data.open_dataset` checks both matrices
  for NaN, block by block) and building the evaluator (fold ids, the rows of this shard),
  once trusting the dataset's ``values_finite`` and once checking the values again in the
  engine, as for an array of unknown values;
- full evaluation (``score``) beside the bare GEMM of the same rows in the same run: the
  product of this shard's rows by every sample over the selected genes,
  (n/S x 500) by (500 x n), on values gathered beforehand; timed in turn;
- a cached state (``new_state``), and a 2 % flip (``score_flip``) beside the full
  evaluation: 2 % of the selected genes (10 genes, drawn among all genes), as the issue
  measures it; also PSO-LSRG's own try, 2 % of all genes (400), and accepting a flip
  (``apply_flip``);
- peak private memory: the largest numpy allocation total of the rank
  (``tracemalloc``: buffers the rank owns; the memory-mapped file, whose pages the ranks
  share, is not counted), beside the evaluation's block (the selected genes' values and
  one block of rows) plus its cached state.

Then PSO-LSRG seconds per round at the largest size on every rank, with a reduced swarm
(``--pso-particles``, ``--pso-tries`` tries of 2 % of the genes, ``--pso-rounds``), for 1
and 2 shards; then a model of one paper-size search on 64, 256 and 1,024 ranks built from
the measured kernel times (:func:`model`; ``--model-from FILE`` prints it again from the
JSON line of an earlier run). Times are the best and the median of ``--repeats`` calls (the
machine may be shared: the load average is printed before and after). The last line is one
JSON object holding every figure.

Run: ``mpiexec -n 2 python benchmarks/bench_large.py [--sizes 2000 5000 10000]
[--folder DIR] [--repeats 5]`` (one rank: 1 shard only).
"""

import argparse
import json
import os
import time
import tracemalloc
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from hpcswarm.comm import split_grid, world
from hpcswarm.data import Dataset, open_dataset, write_dataset
from hpcswarm.fitness import GeneMajor, KnnEvaluator
from hpcswarm.fitness.distances import flip_terms
from hpcswarm.fitness.rowblocks import row_block_size
from hpcswarm.selection.search import run_search

N_GENES = 20_000
SELECTED = 500
FLIP_OF_SELECTED = 0.02
FLIP_OF_ALL = 0.02


def data_file(folder, n_samples, comm):
    """The synthetic dataset of ``n_samples`` (written by rank 0 when missing)."""
    path = Path(folder) / f"large-{n_samples}x{N_GENES}.h5"
    if comm.rank == 0 and not path.exists():
        rng = np.random.default_rng(n_samples)
        y = rng.integers(0, 4, size=n_samples)
        X = np.empty((n_samples, N_GENES), dtype=np.float32)
        for start in range(0, n_samples, 1000):
            stop = min(start + 1000, n_samples)
            X[start:stop] = rng.standard_normal((stop - start, N_GENES), dtype=np.float32)
        X[:, :50] += 0.5 * y[:, None].astype(np.float32)
        write_dataset(Dataset(X=X, y=y, class_names=[f"c{c}" for c in range(4)],
                              gene_names=[f"g{j}" for j in range(N_GENES)]), path)
    comm.barrier()
    return path


def slowest(comm, seconds):
    """The largest of every rank's ``seconds``."""
    return float(comm.allreduce_max(np.array([seconds]))[0])


def timed(comm, function, repeats):
    """``(best, median)`` over ``repeats`` collective calls, each the slowest rank's time."""
    times = []
    for _ in range(repeats):
        comm.barrier()
        start = time.perf_counter()
        function()
        times.append(slowest(comm, time.perf_counter() - start))
    return min(times), float(np.median(times))


def in_turn(comm, functions, repeats):
    """:func:`timed` for several functions called in turn (the same share of the load)."""
    times = {name: [] for name in functions}
    for _ in range(repeats):
        for name, function in functions.items():
            comm.barrier()
            start = time.perf_counter()
            function()
            times[name].append(slowest(comm, time.perf_counter() - start))
    return {name: (min(t), float(np.median(t)), max(t)) for name, t in times.items()}


def peak_of(function):
    """``(result, peak bytes allocated while it ran above what was allocated before)``."""
    tracemalloc.reset_peak()
    before = tracemalloc.get_traced_memory()[0]
    result = function()
    return result, tracemalloc.get_traced_memory()[1] - before


def make_evaluator(path, grid, finite):
    dataset = open_dataset(path)
    data = GeneMajor(dataset.X_genes, finite=finite and dataset.values_finite)
    shard, total = (grid.shards.rank, grid.shards.size), grid.shards.allreduce_sum
    return dataset, KnnEvaluator(data, dataset.y, k=1, cv="loo", shard=shard,
                                 sum_counts=total if grid.n_shards > 1 else None)


def measure(path, n_samples, comm, n_shards, repeats):
    """Every figure of one size and shard count."""
    grid = split_grid(comm, n_shards)
    rng = np.random.default_rng(7)
    start_up = {}
    for finite in (True, False):
        comm.barrier()
        started = time.perf_counter()
        dataset, evaluator = make_evaluator(path, grid, finite)
        start_up["recorded" if finite else "checked"] = slowest(comm, time.perf_counter()
                                                                - started)
    mask = np.zeros(N_GENES, dtype=bool)
    mask[rng.choice(N_GENES, size=SELECTED, replace=False)] = True
    genes = np.flatnonzero(mask)
    values = np.asarray(dataset.X_genes[genes], dtype=np.float64)
    rows = evaluator._rows.rows
    left = np.ascontiguousarray(values[:, rows].T)
    product = np.empty((rows.size, n_samples))
    full_vs_gemm = in_turn(comm, {
        "full": lambda: evaluator.score(mask),
        "gemm": lambda: np.matmul(left, values, out=product),
    }, repeats)
    del product, left
    _, full_peak = peak_of(lambda: evaluator.score(mask))
    state, state_peak = peak_of(lambda: evaluator.new_state(mask))
    state_seconds = timed(comm, lambda: evaluator.new_state(mask), 1)[0]
    n_small = max(1, round(FLIP_OF_SELECTED * SELECTED))
    n_large = max(1, round(FLIP_OF_ALL * N_GENES))
    small = [rng.choice(N_GENES, size=n_small, replace=False) for _ in range(repeats)]
    large = [rng.choice(N_GENES, size=n_large, replace=False) for _ in range(2)]
    turn = iter(range(10**9))
    flips = in_turn(comm, {
        "flip": lambda: evaluator.score_flip(state, small[next(turn) % len(small)]),
        "full": lambda: evaluator.score(mask),
    }, repeats)
    _, flip_peak = peak_of(lambda: evaluator.score_flip(state, small[0]))
    flip_large = timed(comm, lambda: evaluator.score_flip(state, large[0]), 1)[0]
    data = evaluator.data
    gather = timed(comm, lambda: data.take(genes), repeats)[0]
    leaving = state.mask[np.sort(large[0])]
    genes_large = np.sort(large[0])
    flip_setup = timed(comm, lambda: flip_terms(data.take(genes_large[~leaving]),
                                                data.take(genes_large[leaving])), repeats)[0]
    apply_small = timed(comm, lambda: evaluator.apply_flip(state, small[0]), 1)[0]
    held_state = state.dist2.nbytes + state.sq.nbytes + state.drift.nbytes + mask.size
    block = values.nbytes + 8 * row_block_size(n_samples) * n_samples
    peak = max(full_peak, flip_peak + held_state, state_peak)
    grid.free()
    return {
        "n_samples": n_samples, "n_shards": n_shards, "ranks": comm.size,
        "rows_per_shard": int(rows.size),
        "start_up_s": start_up,
        "full_s": full_vs_gemm["full"], "gemm_s": full_vs_gemm["gemm"],
        "full_over_gemm_best": full_vs_gemm["full"][0] / full_vs_gemm["gemm"][0],
        "full_over_gemm_median": full_vs_gemm["full"][1] / full_vs_gemm["gemm"][1],
        "new_state_s": state_seconds,
        "flip_genes": n_small, "flip_s": flips["flip"], "full_beside_flip_s": flips["full"],
        "full_over_flip_best": flips["full"][0] / flips["flip"][0],
        "full_over_flip_median": flips["full"][1] / flips["flip"][1],
        "pso_flip_genes": n_large, "pso_flip_s": flip_large, "apply_flip_s": apply_small,
        "gather_s": gather, "pso_flip_setup_s": flip_setup,
        "peak_bytes": int(peak), "block_bytes": int(block), "state_bytes": int(held_state),
        "peak_over_block_and_state": peak / (block + held_state),
        "peaks": {"full": int(full_peak), "new_state": int(state_peak),
                  "flip_with_state": int(flip_peak + held_state)},
    }


def pso_rounds(path, comm, n_shards, args):
    """Seconds per round of a reduced PSO-LSRG swarm on every sample of ``path``."""
    dataset = open_dataset(path)
    params = {"n_particles": args.pso_particles, "n_iterations": args.pso_rounds,
              "ls_tries": args.pso_tries}
    comm.barrier()
    result = run_search(GeneMajor(dataset.X_genes, finite=dataset.values_finite), dataset.y,
                        "pso-lsrg", params, seed=3, comm=comm, sample_shards=n_shards)
    seconds = [row["seconds"] for row in result.history]
    per_round = np.diff([0.0] + seconds)
    return {"n_shards": n_shards, "params": params, "seconds_per_round": per_round.tolist(),
            "evaluations": result.history[-1]["evaluations"], "fitness": result.fitness}


PAPER = {"particles": 100, "rounds": 70, "tries": 100, "n_train": 9_000, "selected": 6_000,
         "flip": 400, "new_pbests_first": 100, "new_pbests_later": 30, "latency_s": 3e-6,
         "hour_s": 3600.0}
"""The modelled search: one unbiased PSO-LSRG fold search at Tran et al.'s settings (100
particles, 70 rounds, 100 local-search tries of 2 % of the genes = 400 per new pbest, 1-NN
leave-one-out inside) on 9,000 training samples (an outer 10-fold of 10,000) x 20,000 genes.
Assumptions: 6,000 genes selected on average (theta 0.6 on uniform positions selects 40 %
at the start and the subsets shrink), every pbest new in round 0 and 30 of 100 in later
rounds, 3 microseconds per step of a small-message collective."""


def model(rows, ranks=(64, 256, 1024)):
    """Hours of the modelled search (:data:`PAPER`) on ``ranks`` ranks, from measured kernels.

    From the largest size measured with 1 shard: a full evaluation's time is a gather of the
    selected genes' values for every sample (measured alone; every shard makes it whole),
    the product (per gene and pair, the bare GEMM's) and the decisions (the rest, per pair),
    the last two made by a shard for its own rows only. A 400-gene flip likewise: its set-up
    (gathering the flipped genes and forming the product's factors, measured alone, whole on
    every shard) and the rest, per pair. All are scaled to ``n_train`` samples. A round
    costs ``ceil(100 / P)`` full evaluations and ``ceil(L / P)`` local searches of 100
    flips on each of the P particle groups (L new pbests), each evaluation one Allreduce of
    8 bytes over the S shards (``latency * log2 S``), plus about ten collectives of the
    particle groups (``latency * log2 P`` each; their bytes are O(particles + genes / 8)).
    Returns the one-rank kernel times and rows of (ranks, P, S, seconds per later round,
    hours in all).
    """
    one = max((r for r in rows if r["n_shards"] == 1), key=lambda r: r["n_samples"])
    size = one["n_samples"]
    pairs = size * size
    gather = one["gather_s"] / (size * SELECTED)
    gemm = one["gemm_s"][0] / (pairs * SELECTED)
    decide = max(0.0, one["full_s"][0] - one["gather_s"] - one["gemm_s"][0]) / pairs
    flip_setup = one["pso_flip_setup_s"] / size
    flip_pairs = max(0.0, one["pso_flip_s"] - one["pso_flip_setup_s"]) / pairs
    p = PAPER
    n = p["n_train"]

    def full_s(shards):
        return gather * n * p["selected"] + n * n * (decide + gemm * p["selected"]) / shards

    def flip_s(shards):
        return flip_setup * n + n * n * flip_pairs / shards

    table = []
    for total in ranks:
        best = None
        for shards in (s for s in range(1, total + 1) if total % s == 0):
            groups = total // shards
            if groups > p["particles"]:
                continue
            step = p["latency_s"] * max(1.0, np.log2(shards)) if shards > 1 else 0.0

            def round_s(new):
                evals = -(-p["particles"] // groups) * (full_s(shards) + step)
                searches = -(-new // groups) * p["tries"] * (flip_s(shards) + step)
                return evals + searches + 10 * p["latency_s"] * max(1.0, np.log2(groups))

            first, later = round_s(p["new_pbests_first"]), round_s(p["new_pbests_later"])
            hours = (first + (p["rounds"] - 1) * later) / 3600
            if best is None or hours < best[4]:
                best = (total, groups, shards, later, hours)
        table.append(best)
    return {"full_s_one_rank": full_s(1), "flip_s_one_rank": flip_s(1),
            "gather_s_per_full": gather * n * p["selected"], "table": table}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[2000, 5000, 10000])
    parser.add_argument("--folder", default=os.environ.get("TMPDIR", "/tmp"),
                        help="where the synthetic files are written once and reused")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--pso-particles", type=int, default=4)
    parser.add_argument("--pso-tries", type=int, default=3)
    parser.add_argument("--pso-rounds", type=int, default=3)
    parser.add_argument("--no-pso", action="store_true", help="skip the PSO-LSRG rounds")
    parser.add_argument("--model-from", metavar="JSON",
                        help="only print the rank model from a previous run's JSON line")
    args = parser.parse_args(argv)
    if args.model_from:
        print_model(json.loads(Path(args.model_from).read_text().strip().splitlines()[-1]))
        return
    with world() as comm:
        measure_all(args, comm)


def measure_all(args, comm):
    """Every size and shard count on the ranks of ``comm``; rank 0 prints the table, the
    PSO-LSRG rounds, the rank model and one JSON line."""
    threadpool_limits(limits=1)
    tracemalloc.start()
    load = [round(x, 2) for x in os.getloadavg()]
    say = print if comm.rank == 0 else (lambda *a, **k: None)
    say(f"{comm.size} rank(s), 1 BLAS thread each; load average before: {load}")
    say(f"{'n':>6} {'S':>2} {'start':>6} {'check':>6} {'full':>7} {'gemm':>7} {'/gemm':>6} "
        f"{'state':>6} {'flip10':>7} {'full/flip':>9} {'flip400':>7} {'apply':>6} "
        f"{'peak MB':>8} {'blk+st MB':>9} {'ratio':>5}")
    rows = []
    for n_samples in args.sizes:
        path = data_file(args.folder, n_samples, comm)
        for n_shards in (1, 2):
            if comm.size % n_shards:
                continue
            r = measure(path, n_samples, comm, n_shards, args.repeats)
            r["peak_bytes"] = int(comm.allreduce_max(np.array([r["peak_bytes"]]))[0])
            rows.append(r)
            say(f"{n_samples:>6} {n_shards:>2} {r['start_up_s']['recorded']:6.2f} "
                f"{r['start_up_s']['checked']:6.2f} {r['full_s'][0]:7.3f} "
                f"{r['gemm_s'][0]:7.3f} {r['full_over_gemm_best']:6.2f} "
                f"{r['new_state_s']:6.2f} {r['flip_s'][0]:7.3f} {r['full_over_flip_best']:9.1f} "
                f"{r['pso_flip_s']:7.2f} {r['apply_flip_s']:6.3f} {r['peak_bytes'] / 1e6:8.0f} "
                f"{(r['block_bytes'] + r['state_bytes']) / 1e6:9.0f} "
                f"{r['peak_over_block_and_state']:5.2f}", flush=True)
        if comm.size % 2 == 0:
            one, two = (next(r for r in rows if r["n_samples"] == n_samples
                             and r["n_shards"] == s) for s in (1, 2))
            say(f"{n_samples:>6}  2 shards vs 1: full {one['full_s'][0] / two['full_s'][0]:.2f}x "
                f"(medians {one['full_s'][1] / two['full_s'][1]:.2f}x), flip "
                f"{one['flip_s'][0] / two['flip_s'][0]:.2f}x "
                f"(medians {one['flip_s'][1] / two['flip_s'][1]:.2f}x)", flush=True)
    pso = []
    if not args.no_pso:
        path = data_file(args.folder, max(args.sizes), comm)
        for n_shards in (1, 2):
            if comm.size % n_shards:
                continue
            p = pso_rounds(path, comm, n_shards, args)
            pso.append(p)
            say(f"PSO-LSRG {max(args.sizes)} x {N_GENES}, {comm.size} ranks, {n_shards} "
                f"shard(s), {p['params']}: seconds per round "
                f"{', '.join(f'{s:.1f}' for s in p['seconds_per_round'])}", flush=True)
    after = [round(x, 2) for x in os.getloadavg()]
    say(f"load average after: {after}")
    if comm.rank == 0:
        print_model({"results": rows})
    say(json.dumps({"ranks": comm.size, "load_average_before": load,
                    "load_average_after": after, "results": rows, "pso_lsrg": pso}))


def print_model(document):
    """The rank model (:func:`model`) of a run's figures, as a table."""
    found = model(document["results"])
    print(f"model, one unbiased PSO-LSRG fold search at paper settings ({PAPER}): one rank "
          f"makes a full evaluation in {found['full_s_one_rank']:.1f} s (of which "
          f"{found['gather_s_per_full']:.2f} s gathering values, made whole by every shard) "
          f"and a 400-gene flip in {found['flip_s_one_rank']:.2f} s")
    print(f"{'ranks':>6} {'groups':>6} {'shards':>6} {'s/round':>8} {'hours':>6}")
    for total, groups, shards, later, hours in found["table"]:
        print(f"{total:>6} {groups:>6} {shards:>6} {later:8.1f} {hours:6.2f}")


if __name__ == "__main__":
    main()
