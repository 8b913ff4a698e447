"""VLPSO by size: evaluations beside their GEMM floor, seconds per iteration, the SU ranking.

On synthetic planted-signal float32 data (``--sizes``, each ``SAMPLESxGENES``: normal values,
4 classes, a class signal of 0.5 on 50 genes, :func:`bench_gpu.planted_data`; written once
with hpcswarm's writer into ``--folder`` and memory-mapped), VLPSO at its paper settings
(1-NN 10-fold cross-validation, 12 divisions, theta 0.6) but for a reduced swarm of
``--particles`` particles and ``--rounds`` rounds (the initial evaluation and
``--rounds - 1`` moves), every subset evaluated in full (``cache_memory = 0``: the moves
from particle states are ``bench_vlpso_cache.py``'s). Per size, every figure the slowest rank's, each repeated
``--repeats`` times in turn (best, median and worst printed):

- the SU ranking (:func:`~hpcswarm.swarm.methods.vlpso.symmetric_uncertainty.relevance_scores`, MDL
  discretisation of every gene) on 1 rank, and spread over 2 ranks;
- seconds per iteration (a move and its evaluations: the rounds after the first, whose
  time holds the ranking) on 1 rank, on 2 ranks (2 particle groups) and on 2 ranks as
  2 sample shards; the results of the three must be equal;
- the evaluations beside their GEMM floor, in process, on 1 rank: ``--eval-masks`` of the
  subsets the search evaluated (evenly spaced among them), each scored alone
  (``fitness.many``, what the search calls) and then its bare BLAS product, in turn: the
  product of the held-out rows by every sample over the subset's genes,
  (n x |S|) by (|S| x n) on values gathered beforehand (as ``bench_large.py`` measures
  PSO-LSRG), or where the scorer makes the whole Gram matrix in one block (n up to 1,048),
  the same symmetric product (values.T by values, a BLAS ``syrk``); the ratio is of the
  sums, each the best of the repeats;
- peak private memory of the 1-rank search (``tracemalloc``: numpy buffers the rank owns;
  the memory-mapped file is not counted), beside the swarm's 26 B x particles x genes. The
  first 1-rank search of a size is the one traced and whose subsets are recorded; tracing
  slows Python's allocations a little, and its time is one of the repeats (the best of the
  repeats is what the model reads).

Then the cost model of one search (:func:`model`, ``docs/large-cohorts.md``): its constants
are fitted to the figures (:func:`constants`: seconds per multiply-add of the GEMM floors,
per (row, sample) pair of the evaluations beyond them, the host's work of an iteration per
particle and gene at the smallest size, the SU ranking per gene and per gene and
``n log2 n``); it then predicts the seconds per iteration and of the SU ranking at every
size measured, printed beside the measured ones (and the SU ranking of ``--su-size``,
measured alone beyond the sizes fitted), and the hours of a paper-size search
(:data:`PAPER`) on 1 to 1,024 ranks.

The machine may be shared: the load average is printed before and after, and what is
compared (an evaluation and its GEMM, 1 rank and 2, predicted and measured) is taken in the
same run. The last line is one JSON object holding every figure.

Run: ``mpiexec -n 2 python benchmarks/bench_vlpso.py [--sizes 200x2000 1000x5000]
[--particles 24] [--rounds 3] [--repeats 3] [--folder DIR]`` (one rank: the 1-rank figures
only; ``--model-from FILE`` prints the model again from an earlier run's JSON line).
``--gpu`` instead measures seconds per iteration on the GPU beside one core
(:func:`gpu_iterations`, run by ``benchmarks/gpu_check.sh``).
"""

import argparse
import json
import os
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

import hpcswarm.swarm.methods.vlpso.gene_order as vlpso_order
from hpcswarm.comm import SerialComm, world
from hpcswarm.data import Dataset, open_dataset, write_dataset
from hpcswarm.fitness import GeneMajor, KnnEvaluator, SubsetFitness
from hpcswarm.fitness.gpu import ARRAY_MODULE_VARIABLE, gpu_array_module
from hpcswarm.fitness.rowblocks import row_block_size
from hpcswarm.selection.methods import algorithm_params
from hpcswarm.selection.search import make_fitness, run_search
from hpcswarm.swarm.engine.loop import SearchHooks
from hpcswarm.swarm.methods.vlpso.divisions import division_lengths, division_of, swarm_size
from hpcswarm.swarm.methods.vlpso.symmetric_uncertainty import relevance_scores

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_gpu import N_CLASSES, Figures, device_label, planted_data  # noqa: E402
from bench_large import slowest  # noqa: E402

DEFAULT_SIZES = ["200x2000", "500x2000", "1000x2000", "1000x5000", "2000x2000"]
SWARM_BYTES_PER_GENE = 26
"""Bytes per particle and gene of a swarm's state (the pre-flight estimate's)."""


def size_of(text):
    """``(n_samples, n_genes)`` of ``SAMPLESxGENES``."""
    samples, _, genes = text.lower().partition("x")
    return int(samples), int(genes)


def data_file(folder, n_samples, n_genes, comm):
    """The planted dataset of this size (written by rank 0 when missing)."""
    path = Path(folder) / f"vlpso-{n_samples}x{n_genes}.h5"
    if comm.rank == 0 and not path.exists():
        xt, y = planted_data(n_samples, n_genes)
        write_dataset(Dataset(X=xt.T, y=y, class_names=[f"c{c}" for c in range(N_CLASSES)],
                              gene_names=[f"g{j}" for j in range(n_genes)]), path)
    comm.barrier()
    return path


def spread(values):
    """``(best, median, worst)`` of ``values``."""
    return float(np.min(values)), float(np.median(values)), float(np.max(values))


class Recorder:
    """Records the subsets the searches of this process score while ``on``, one array per
    call of ``SubsetFitness.many`` (one per round and rank); benchmark instrumentation."""

    def __init__(self):
        self.on = False
        self.calls = []
        many = SubsetFitness.many
        recorder = self

        def recorded(fitness, masks):
            if recorder.on:
                recorder.calls.append(np.array(masks, dtype=bool))
            return many(fitness, masks)

        SubsetFitness.many = recorded


RECORDER = None


def comparable(result):
    """What must not depend on the ranks or shards: genes, fitness, evaluations per round."""
    return result.genes.tolist(), result.fitness, [row["evaluations"] for row in result.history]


def search(data, y, comm, n_shards, args):
    """``(result, seconds per iteration, evaluations per iteration)`` of the reduced swarm on
    ``comm`` with ``n_shards`` shards; the slowest rank's seconds."""
    params = {"n_particles": args.particles, "n_iterations": args.rounds}
    comm.barrier()
    result = run_search(data, y, "vlpso", params, seed=1, comm=comm, sample_shards=n_shards,
                        cache_memory=0)  # every subset in full: bench_vlpso_cache.py has moves
    seconds = np.array([row["seconds"] for row in result.history])
    evaluations = np.array([row["evaluations"] for row in result.history])
    per_iteration = (seconds[-1] - seconds[0]) / max(1, seconds.size - 1)
    return (result, slowest(comm, per_iteration),
            (evaluations[-1] - evaluations[0]) / max(1, evaluations.size - 1))


def su_seconds(data, codes, comm):
    """Seconds of the SU ranking of every gene on the ranks of ``comm`` (the slowest's)."""
    comm.barrier()
    started = time.perf_counter()
    relevance_scores(data, codes, np.arange(data.n_genes), comm)
    return slowest(comm, time.perf_counter() - started)


def evaluations_beside_gemm(data, y, masks, repeats):
    """Each mask scored alone (``fitness.many``) and its bare product, in turn; per mask the
    best of ``repeats``: ``(eval seconds, gemm seconds, gather seconds, sizes)``."""
    fitness, scorer = make_fitness(data, y, algorithm_params("vlpso"), 1)
    rows = scorer._rows.rows
    whole_gram = whole(data.n_samples, 1)  # one rank scores every sample's rows
    fitness.many(masks[:1])  # compiled kernels ready
    evals, gemms, gathers = (np.full(len(masks), np.inf) for _ in range(3))
    for _ in range(repeats):
        for i, mask in enumerate(masks):
            started = time.perf_counter()
            fitness.many(mask[None])
            evals[i] = min(evals[i], time.perf_counter() - started)
            started = time.perf_counter()
            values = data.take(np.flatnonzero(mask))
            gathers[i] = min(gathers[i], time.perf_counter() - started)
            left = values.T if whole_gram else np.ascontiguousarray(values[:, rows].T)
            product = np.empty((rows.size, data.n_samples))
            started = time.perf_counter()
            np.matmul(left, values, out=product)  # a syrk when whole_gram (values.T by values)
            gemms[i] = min(gemms[i], time.perf_counter() - started)
            del values, left, product
    return evals, gemms, gathers, np.count_nonzero(masks, axis=1)


def measure(path, comm, solo, args):
    """Every figure of one size (see the module docstring)."""
    dataset = open_dataset(path)
    data = GeneMajor(dataset.X_genes, finite=dataset.values_finite)
    y = np.asarray(dataset.y)
    codes = np.unique(y, return_inverse=True)[1]
    n_samples, n_genes = data.n_samples, data.n_genes
    figures = {"n_samples": n_samples, "n_genes": n_genes, "particles": args.particles,
               "rounds": args.rounds}
    configs = [("1 rank", 1)] + ([("2 ranks", 1), ("2 shards", 2)] if comm.size == 2 else [])
    times = {name: [] for name, _ in configs}
    su = {"1 rank": [], "2 ranks": []}
    reference, same = None, True
    evaluations = 0.0
    for repeat in range(args.repeats):
        if comm.rank == 0:
            su["1 rank"].append(su_seconds(data, codes, solo))
        comm.barrier()
        if comm.size == 2:
            su["2 ranks"].append(su_seconds(data, codes, comm))
        for name, n_shards in configs:
            first = repeat == 0 and name == "1 rank"
            if name == "1 rank":
                if comm.rank == 0:
                    RECORDER.on = first
                    if first:
                        tracemalloc.start()
                    result, per_iteration, evaluated = search(data, y, solo, 1, args)
                    if first:
                        figures["peak_bytes"] = tracemalloc.get_traced_memory()[1]
                        tracemalloc.stop()
                    RECORDER.on = False
                    evaluations = evaluations or evaluated
                    times[name].append(per_iteration)
                    reference = reference or comparable(result)
                comm.barrier()
                continue
            result, per_iteration, _ = search(data, y, comm, n_shards, args)
            times[name].append(per_iteration)
            same = same and (comm.rank != 0 or comparable(result) == reference)
    figures["same_results"] = bool(comm.allreduce_max(np.array([int(not same)]))[0] == 0)
    if comm.rank == 0:
        figures["iteration_s"] = {name: spread(t) for name, t in times.items()}
        figures["su_s"] = {name: spread(t) for name, t in su.items() if t}
        figures["evaluations_per_iteration"] = evaluations
        calls, RECORDER.calls = RECORDER.calls, []
        figures["selected_fraction"] = selected_fraction(calls[1:], n_genes, args.particles)
        masks = np.concatenate(calls)
        masks = masks[masks.any(axis=1)]
        chosen = np.unique(np.linspace(0, len(masks) - 1, min(args.eval_masks, len(masks)))
                           .round().astype(int))
        evals, gemms, gathers, sizes = evaluations_beside_gemm(data, y, masks[chosen],
                                                               args.repeats)
        figures.update({
            "eval_s": evals.tolist(), "gemm_s": gemms.tolist(), "gather_s": gathers.tolist(),
            "eval_sizes": sizes.tolist(), "eval_over_gemm": float(evals.sum() / gemms.sum())})
        figures["swarm_bytes"] = SWARM_BYTES_PER_GENE * args.particles * n_genes
    return comm.bcast(figures if comm.rank == 0 else None)


def selected_fraction(moves, n_genes, n_particles):
    """Genes selected per evaluation over the swarm's mean length, in the evaluations of the
    moves (``moves``: one array of subsets per round; the first evaluation, where the first
    particle of each division selects its whole length, is left out)."""
    lengths = division_lengths(n_genes, PAPER["divisions"])[division_of(n_particles,
                                                                        PAPER["divisions"])]
    sizes = np.concatenate([np.count_nonzero(masks, axis=1) for masks in moves])
    return float(sizes.mean() / lengths.mean())


# ---------------------------------------------------------------------------- the model
PAPER = {"n_samples": 10_000, "n_genes": 20_000, "rounds": 101, "divisions": 12,
         "change_after": 9, "fraction": 0.52, "ranks": (1, 64, 256, 1024)}
"""The modelled search: VLPSO at the paper's settings (its swarm rule, 101 rounds, 12
divisions, a length change after 9 rounds without a better subset, 1-NN 10-fold
cross-validation) on 10,000 samples x 20,000 genes. Its particles select 0.52 of their
length (measured with the paper's swarm, 100 particles on 100 x 2,000 planted data: 0.50 to
0.53 in the rounds before the length change; a reduced swarm, where the first particle of
each division, which starts with every gene selected, is a larger share, selects more).
Two bounds of the length change: none (every round at the whole length, the longest
search) and one after the first ``change_after + 1`` rounds to the shortest division's
length, ``n_genes / 12``, for the rest (what planted data with the signal in the first
genes gives; the shortest search short of a target)."""


def whole(n_samples, n_shards):
    """Whether the scorer makes the whole Gram matrix in one block (a ``syrk``: half the
    multiply-adds of the rows-by-samples product), as it does for every sample's rows in
    one block (:meth:`~hpcswarm.fitness.evaluator.KnnEvaluator._full`)."""
    return n_shards == 1 and row_block_size(n_samples) >= n_samples


def product_terms(n_samples, n_shards, n_selected):
    """Multiply-adds of one evaluation's product on one shard: its rows (``n / S``) by every
    sample over the selected genes, halved for a whole Gram matrix."""
    rows = -(-n_samples // n_shards)
    return rows * n_samples * n_selected * (0.5 if whole(n_samples, n_shards) else 1.0)


def constants(rows):
    """Every constant of :func:`predict`, from the measured rows (best of the repeats).

    ``gemm``: seconds per multiply-add of the GEMM floors; ``decide``: seconds per
    (row, sample) pair of an evaluation beyond its floor (the gathering, the k-NN
    decisions); ``host``: seconds per particle and gene of an iteration beyond its
    evaluations, at the smallest size (moves, masks, exchanges); ``su_gene`` and ``su``:
    seconds of the SU ranking per gene and per ``n log2 n`` of a gene, least squares of the
    relative errors over the sizes; ``fraction``: genes selected per evaluation over the
    swarm's mean length.
    """
    terms = sum(product_terms(r["n_samples"], 1, size) for r in rows
                for size in r["eval_sizes"])
    gemm = sum(sum(r["gemm_s"]) for r in rows) / terms
    pairs = sum(r["n_samples"] ** 2 * len(r["eval_s"]) for r in rows)
    decide = max(0.0, sum(sum(r["eval_s"]) - sum(r["gemm_s"]) for r in rows) / pairs)
    fraction = float(np.mean([r["selected_fraction"] for r in rows]))
    c = {"gemm": gemm, "decide": decide, "fraction": fraction, "host": 0.0, "su_gene": 0.0,
         "su": 0.0}
    smallest = min(rows, key=lambda r: r["n_samples"] * r["n_genes"])
    c["host"] = max(0.0, smallest["iteration_s"]["1 rank"][0] - predict(smallest, c)[0]) / (
        smallest["particles"] * smallest["n_genes"])
    measured = np.array([r["su_s"]["1 rank"][0] for r in rows])
    design = np.array([[r["n_genes"], r["n_genes"] * r["n_samples"] * np.log2(r["n_samples"])]
                       for r in rows]) / measured[:, None]  # relative errors weighted alike
    (su_gene, su), *_ = np.linalg.lstsq(design, np.ones(len(rows)), rcond=None)
    return {**c, "su_gene": max(float(su_gene), 0.0), "su": max(float(su), 0.0)}


def predict(row, c, groups=1, shards=1, particles=None):
    """``(seconds per iteration, seconds of the SU ranking)`` of ``row``'s size on ``groups``
    particle groups x ``shards`` shards.

    An iteration costs the busiest group's evaluations, those of its contiguous block of
    particles (the longest last), each selecting ``fraction`` of its division's length,
    plus its host work; the SU ranking's genes are split over the groups.
    """
    n, d = row["n_samples"], row["n_genes"]
    particles = particles or row["particles"]
    divisions = PAPER["divisions"]
    lengths = division_lengths(d, divisions)[division_of(particles, divisions)]
    per_group = -(-particles // groups)
    busiest = max(lengths[start:start + per_group].sum()
                  for start in range(0, particles, per_group))
    evaluations = (c["gemm"] * product_terms(n, shards, c["fraction"] * busiest)
                   + c["decide"] * per_group * n * -(-n // shards))
    iteration = evaluations + c["host"] * per_group * d
    su = (c["su_gene"] * d + c["su"] * d * n * np.log2(n)) / groups
    return iteration, su


def model(rows, su_large=None):
    """Predicted against measured (best of the repeats) at every size, the SU ranking
    against ``su_large`` (its seconds per gene at a larger n, measured alone), and the
    paper-size search (:data:`PAPER`)."""
    c = constants(rows)
    checks = []
    for r in rows:
        for name, (groups, shards) in (("1 rank", (1, 1)), ("2 ranks", (2, 1)),
                                       ("2 shards", (1, 2))):
            if name in r["iteration_s"]:
                checks.append((r["n_samples"], r["n_genes"], name,
                               predict(r, c, groups, shards)[0], r["iteration_s"][name][0]))
        checks.append((r["n_samples"], r["n_genes"], "SU, 1 rank", predict(r, c)[1],
                       r["su_s"]["1 rank"][0]))
    if su_large:
        large = {"n_samples": su_large["n_samples"], "n_genes": su_large["n_genes"],
                 "particles": 1}
        checks.append((large["n_samples"], large["n_genes"], "SU, 1 rank",
                       predict(large, c)[1], su_large["su_s"][0]))
    n, d = PAPER["n_samples"], PAPER["n_genes"]
    paper = {"n_samples": n, "n_genes": d}
    shortest = {"n_samples": n, "n_genes": d // PAPER["divisions"]}
    particles = swarm_size(0, d)
    at_paper = {**c, "fraction": PAPER["fraction"]}
    early = PAPER["change_after"] + 1
    searches = []
    for ranks in PAPER["ranks"]:
        groups = max(g for g in range(1, min(ranks, particles) + 1) if ranks % g == 0)
        shards = ranks // groups
        iteration, su = predict(paper, at_paper, groups, shards, particles)
        if su_large and su_large["n_samples"] == n:
            su = su_large["su_s"][0] / su_large["n_genes"] * d / groups
        after_change = predict(shortest, at_paper, groups, shards, particles)[0]
        longest = su + PAPER["rounds"] * iteration
        shortest_s = su + early * iteration + (PAPER["rounds"] - early) * after_change
        searches.append((ranks, groups, shards, iteration, after_change, su,
                         longest / 3600, shortest_s / 3600, su / longest))
    return {"constants": c, "checks": checks, "paper_particles": particles,
            "searches": searches}


def print_model(rows, su_large=None):
    found = model(rows, su_large)
    c = found["constants"]
    print(f"model: evaluation {c['gemm']:.3e} s per multiply-add of its product + "
          f"{c['decide']:.3e} s per (row, sample) pair; host {c['host']:.3e} s per particle "
          f"and gene of an iteration; SU ranking {c['su_gene']:.3e} s per gene + "
          f"{c['su']:.3e} s per gene and n log2 n; {c['fraction']:.3f} of a particle's "
          f"length selected")
    print(f"{'n':>6} {'d':>6} {'what':>11} {'predicted':>10} {'measured':>9} {'error':>6}")
    for n, d, name, predicted, measured in found["checks"]:
        print(f"{n:>6} {d:>6} {name:>11} {predicted:10.3f} {measured:9.3f} "
              f"{100 * (predicted - measured) / measured:+5.0f}%")
    print(f"paper-size search, {PAPER['n_samples']:,} x {PAPER['n_genes']:,}, "
          f"{found['paper_particles']} particles, {PAPER['rounds']} rounds, "
          f"{PAPER['fraction']} of a length selected (hours: no length change / one to the "
          f"shortest division after {PAPER['change_after'] + 1} rounds):")
    print(f"{'ranks':>6} {'groups':>6} {'shards':>6} {'s/iter':>9} {'s/iter d/12':>11} "
          f"{'SU s':>8} {'hours':>15} {'SU share':>8}")
    for ranks, groups, shards, iteration, after, su, longest, shortest, share in \
            found["searches"]:
        print(f"{ranks:>6} {groups:>6} {shards:>6} {iteration:9.1f} {after:11.2f} {su:8.1f} "
              f"{longest:7.2f}/{shortest:7.2f} {100 * share:7.3f}%")
    return found


def measure_all(args, comm):
    global RECORDER
    RECORDER = Recorder()
    threadpool_limits(limits=1)
    load = [round(x, 2) for x in os.getloadavg()]
    say = print if comm.rank == 0 else (lambda *a, **k: None)
    say(f"{comm.size} rank(s), 1 BLAS thread each; {args.particles} particles, {args.rounds} "
        f"rounds, {args.repeats} repeats; load average before: {load}")
    say("seconds: best / median / worst of the repeats")
    say(f"{'n':>6} {'d':>6} {'evals/it':>8} {'eval/GEMM':>9} {'it 1 rank':>20} "
        f"{'it 2 ranks':>20} {'it 2 shards':>20} {'SU 1 rank':>20} {'SU 2 ranks':>20} "
        f"{'peak MB':>8} {'swarm MB':>8} {'same':>4}")
    rows = []
    xt, y = planted_data(60, 240)
    run_search(GeneMajor(xt, finite=True), y, "vlpso", {"n_particles": 12, "n_iterations": 2},
               comm=comm)  # imports and compiled kernels ready before anything is timed
    with comm.split(comm.rank, 0) as solo:
        for text in args.sizes:
            n_samples, n_genes = size_of(text)
            path = data_file(args.folder, n_samples, n_genes, comm)
            r = measure(path, comm, solo, args)
            rows.append(r)

            def cell(figure):
                return ("/".join(f"{s:.3f}" for s in figure) if figure else "-").rjust(20)

            say(f"{n_samples:>6} {n_genes:>6} {r['evaluations_per_iteration']:8.1f} "
                f"{r['eval_over_gemm']:9.2f} {cell(r['iteration_s']['1 rank'])} "
                f"{cell(r['iteration_s'].get('2 ranks'))} "
                f"{cell(r['iteration_s'].get('2 shards'))} {cell(r['su_s']['1 rank'])} "
                f"{cell(r['su_s'].get('2 ranks'))} {r['peak_bytes'] / 1e6:8.0f} "
                f"{r['swarm_bytes'] / 1e6:8.1f} {str(r['same_results']):>4}", flush=True)
    su_large = None
    if comm.rank == 0 and args.su_size:
        n_samples, n_genes = size_of(args.su_size)
        xt, y = planted_data(n_samples, n_genes)
        data, codes = GeneMajor(xt, finite=True), np.unique(y, return_inverse=True)[1]
        su_large = {"n_samples": n_samples, "n_genes": n_genes,
                    "su_s": spread([su_seconds(data, codes, SerialComm())
                                    for _ in range(args.repeats)])}
        say(f"SU ranking alone, {n_samples:,} x {n_genes:,}, 1 rank: "
            f"{'/'.join(f'{t:.2f}' for t in su_large['su_s'])} s "
            f"({1e3 * su_large['su_s'][0] / n_genes:.2f} ms per gene)", flush=True)
    after = [round(x, 2) for x in os.getloadavg()]
    say(f"load average after: {after}")
    if comm.rank == 0:
        found = print_model(rows, su_large)
        print(json.dumps({"ranks": comm.size, "load_average_before": load,
                          "load_average_after": after, "results": rows,
                          "su_large": su_large, "model": found}))


# ---------------------------------------------------------------------------- the GPU
class VlpsoFigures(Figures):
    """:class:`bench_gpu.Figures` appended to ``$OUT/bench_vlpso.jsonl``."""

    def __init__(self, folder):
        super().__init__(None)
        self.path = None if not folder else os.path.join(folder, "bench_vlpso.jsonl")


def gpu_iterations(args, figures):
    """Seconds per iteration of a reduced VLPSO swarm on the GPU beside one core.

    The search runs with ``device="gpu"`` on in-memory planted data of ``--samples`` x
    ``--genes``; its gene order is the planted one (signal genes first) instead of the SU
    ranking, whose cost is the host's (measured on the CPU above, and modelled) and which
    does not change what an iteration costs (the particles' lengths and subsets' sizes).
    Per iteration: its seconds and those of its evaluations on the GPU; one core's seconds
    for the same subsets, each scored on a shard of ``--core-rows`` held-out rows
    (``KnnEvaluator``, one BLAS thread) and scaled to all rows (the gathering of the
    subset's values, timed alone, unscaled), ``--core-masks`` of them evenly spaced and
    scaled to all; the iteration's host work (its seconds less its evaluations') is added
    to both.
    """
    xp = gpu_array_module(args.array_module)
    os.environ[ARRAY_MODULE_VARIABLE] = args.array_module
    figures.emit("vlpso_device", f"VLPSO on {device_label(xp)}: {args.samples:,} x "
                 f"{args.genes:,}, {args.particles} particles, {args.rounds} rounds",
                 device=device_label(xp), samples=args.samples, genes=args.genes,
                 particles=args.particles, rounds=args.rounds)
    xt, y = planted_data(args.samples, args.genes)
    data = GeneMajor(xt, finite=True)
    rounds, evaluation_s = [], [0.0]
    many = SubsetFitness.many

    def timed_many(fitness, masks):
        started = time.perf_counter()
        scores = many(fitness, masks)
        evaluation_s[-1] += time.perf_counter() - started
        rounds[-1]["masks"].extend(np.array(masks, dtype=bool))
        return scores

    def planted_order(scorer_data, codes, genes, comm=None, table=None):
        return -np.arange(len(genes), dtype=float)  # decreasing: gene 0 first

    rounds.append({"masks": []})
    last = [time.perf_counter()]

    def progress(row):
        now = time.perf_counter()
        rounds[-1].update(seconds=now - last[0], evaluation_s=evaluation_s[-1],
                          iteration=row["iteration"])
        last[0] = now
        rounds.append({"masks": []})
        evaluation_s.append(0.0)

    SubsetFitness.many, vlpso_order.relevance_scores = timed_many, planted_order
    try:
        result = run_search(data, y, "vlpso", {"n_particles": args.particles,
                                                "n_iterations": args.rounds},
                            seed=1, device="gpu", cache_memory=0,  # every subset in full
                            hooks=SearchHooks(progress=progress))
    finally:
        SubsetFitness.many, vlpso_order.relevance_scores = many, relevance_scores
    n_shards = max(1, -(-args.samples // args.core_rows))
    core = KnnEvaluator(data, y, k=1, cv=10, seed=1, shard=(0, n_shards))
    shard_rows = core._rows.rows.size
    with threadpool_limits(1):
        core.score(np.arange(args.genes) < 2)  # compiled kernels ready
    paper_scale = swarm_size(0, args.genes) / args.particles
    for done in rounds[1:-1]:  # the iterations (round 0 holds the start)
        masks = np.array(done["masks"])
        masks = masks[masks.any(axis=1)]
        chosen = np.unique(np.linspace(0, len(masks) - 1, min(args.core_masks, len(masks)))
                           .round().astype(int))
        core_s = 0.0
        with threadpool_limits(1):
            for mask in masks[chosen]:
                started = time.perf_counter()
                core.data.take(np.flatnonzero(mask))
                gather = time.perf_counter() - started
                started = time.perf_counter()
                core.score(mask)
                shard = time.perf_counter() - started
                core_s += gather + max(shard - gather, 0.0) * args.samples / shard_rows
        core_s *= len(masks) / max(1, len(chosen))
        host = max(0.0, done["seconds"] - done["evaluation_s"])
        gpu_s, one_core = done["seconds"], core_s + host
        figures.emit("vlpso_iteration",
                     f"VLPSO iteration {done['iteration']}: GPU {gpu_s:.2f} s "
                     f"({done['evaluation_s']:.2f} s of it {len(masks)} evaluations), one "
                     f"core {one_core:.1f} s (timed on {shard_rows:,} rows of {len(chosen)} "
                     f"subsets, scaled), core/GPU {one_core / gpu_s:.1f}; the paper's swarm "
                     f"({swarm_size(0, args.genes)} particles): GPU {gpu_s * paper_scale:.1f} s, "
                     f"one core {one_core * paper_scale:.0f} s (scaled by particles)",
                     iteration=done["iteration"], gpu_s=gpu_s,
                     gpu_evaluation_s=done["evaluation_s"], evaluations=len(masks),
                     core_s=one_core, core_evaluation_s=core_s, host_s=host,
                     shard_rows=shard_rows, core_masks=int(len(chosen)),
                     paper_swarm_gpu_s=gpu_s * paper_scale,
                     paper_swarm_core_s=one_core * paper_scale,
                     mean_selected=float(np.count_nonzero(masks) / max(1, len(masks))))
    figures.emit("vlpso", f"VLPSO on the GPU: fitness {result.fitness}, "
                 f"{len(result.genes)} genes, {result.history[-1]['evaluations']} evaluations",
                 fitness=result.fitness, genes=len(result.genes),
                 evaluations=result.history[-1]["evaluations"])


def parse(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", default=DEFAULT_SIZES,
                        help="SAMPLESxGENES each")
    parser.add_argument("--folder", default=os.environ.get("TMPDIR", "/tmp"),
                        help="where the synthetic files are written once and reused")
    parser.add_argument("--particles", type=int, default=None,
                        help="swarm size (default 24; with --gpu 48)")
    parser.add_argument("--rounds", type=int, default=3,
                        help="the initial evaluation and the moves after it")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--eval-masks", type=int, default=24,
                        help="subsets timed alone beside their GEMM, per size")
    parser.add_argument("--su-size", default="10000x1000",
                        help="SAMPLESxGENES of the SU ranking measured alone, beside the "
                             "model's prediction (empty: none)")
    parser.add_argument("--model-from", metavar="JSON",
                        help="only print the model from a previous run's JSON line")
    gpu = parser.add_argument_group("--gpu: seconds per iteration on the GPU")
    gpu.add_argument("--gpu", action="store_true")
    gpu.add_argument("--small", action="store_true",
                     help="with --gpu: 300 x 600, numpy as the array module unless given")
    gpu.add_argument("--samples", type=int, default=10_000)
    gpu.add_argument("--genes", type=int, default=20_000)
    gpu.add_argument("--core-rows", type=int, default=500)
    gpu.add_argument("--core-masks", type=int, default=4)
    gpu.add_argument("--array-module", choices=["cupy", "numpy"], default=None)
    args = parser.parse_args(argv)
    if args.small:
        args.samples, args.genes, args.core_rows = 300, 600, 100
        args.array_module = args.array_module or "numpy"
    args.array_module = args.array_module or "cupy"
    args.particles = args.particles or (48 if args.gpu else 24)
    return args


def main(argv=None):
    args = parse(argv)
    if args.model_from:
        document = json.loads(Path(args.model_from).read_text().strip().splitlines()[-1])
        print_model(document["results"], document.get("su_large"))
    elif args.gpu:
        gpu_iterations(args, VlpsoFigures(os.environ.get("OUT")))
    else:
        with world() as comm:
            measure_all(args, comm)
    return 0


if __name__ == "__main__":
    sys.exit(main())
