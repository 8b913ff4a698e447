"""VLPSO by size: every subset in full beside the particle states, per round and per search,
and the cost model fitted and checked against them.

On synthetic planted-signal float32 data (``--sizes``, each ``SAMPLESxGENES``: normal values,
4 classes, a class signal of 0.5 on 50 genes, :func:`bench_gpu.planted_data`; written once
with hpcswarm's writer into ``--folder`` and memory-mapped), VLPSO at its default settings
(1-NN 10-fold cross-validation, 12 divisions, theta 0.6) but for a reduced swarm of
``--particles`` particles, ``--rounds`` rounds (the initial evaluation and the moves; the
length changes on top) and a length change after ``--change-after`` rounds without a
better subset (9 by default; fewer so that a short search has one). Per size, one search
of each path:

- ``full``: ``cache_memory = 0``, every subset one full product;
- ``cached``: the default cache budget, each particle's distance state kept between rounds
  and a move scored by the genes it flipped (:class:`hpcswarm.fitness.moves.ParticleStates`);

on 1 rank, and under ``mpiexec -n 2`` also on 2 ranks as 2 particle groups and as 2 sample
shards; all must give the same genes, fitness and history. Per round of the 1-rank runs,
and per search of every run (the rounds after the first, whose time holds the SU ranking):
seconds (the slowest rank's), multiply-adds of the products, the genes flipped since each
particle's previous subset over the genes scored, the subsets scored from a state or
repeated (cache hits), the full products and the largest states a rank held.

Then one search of ``--flips-particles`` particles and ``--flips-rounds`` rounds at
``--flips-size`` (VLPSO's own length change) gives the genes its moves flip, round by
round, and the cost model (:mod:`hpcswarm.run.cost_model`) is fitted (:func:`fit_constants`)
with its times scaled to an idle core: the bare products and the SU ranking by the CPU over
wall-clock seconds of GEMMs timed before every size and at the end (the other rank
asleep, as during the 1-rank searches), each round by its search's CPU over wall-clock
seconds. It predicts every search measured (its sizes, rounds, length changes, states,
flips and the deal of the particles to the groups as measured, on the share of a core its
ranks had) beside the measured seconds, within 30 % or not, and gives the paper-size
tables of ``docs/large-cohorts.md``: one search and the default signature at 10,000 x
20,000 on 64 to 1,024 ranks, with VLPSO's defaults and with ``preprocess = none``. The last
line is one JSON object holding every figure.

Run: ``mpiexec -n 2 python benchmarks/bench_vlpso.py [--sizes 500x2000 2000x5000]
[--particles 24] [--rounds 14] [--change-after 4] [--quick] [--folder DIR]`` (one rank: the
1-rank figures only; ``--model-from FILE`` prints the model again from an earlier run's
JSON line, the file's last line that opens with ``{``: save a run's output to refit it;
with ``--markdown`` also the tables of ``docs/large-cohorts.md``). ``--gpu`` instead
measures VLPSO rounds on the GPU (by default 10,000 x 20,000, 48 particles, 12 rounds;
``--small`` 300 x 600): with the particles' states at the default
cache budget (sized by the device's memory) beside every subset in full on the GPU, the
same genes, fitness and history checked, and one core's estimate, each round streamed to
``$OUT/bench_vlpso.jsonl`` as it ends (:func:`gpu_iterations`, run by
``benchmarks/gpu_check.sh``; exit status 1 when the paths differ).
"""

import argparse
import json
import os
import sys
import time
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np
from scipy.optimize import nnls
from threadpoolctl import threadpool_limits

import hpcswarm.swarm.engine.evaluation as evaluation_module
import hpcswarm.swarm.methods.vlpso.gene_order as vlpso_order
from hpcswarm.comm import world
from hpcswarm.data import Dataset, open_dataset, write_dataset
from hpcswarm.fitness import GeneMajor, KnnEvaluator
from hpcswarm.fitness.incremental import state_bytes
from hpcswarm.fitness.gpu import ARRAY_MODULE_VARIABLE, gpu_array_module
from hpcswarm.fitness.moves import ParticleStates
from hpcswarm.run.cost_model import (DIVISIONS, CostConstants, best_search, exchange_steps,
                                     first_of_division, search_cost, signature_cost,
                                     symmetric_shares, whole_gram)
from hpcswarm.selection.methods import algorithm_params
from hpcswarm.selection.search import run_search
from hpcswarm.selection.spec import SearchSpec
from hpcswarm.swarm.engine.loop import SearchHooks
from hpcswarm.swarm.methods.vlpso.divisions import division_lengths, division_of, swarm_size
from hpcswarm.swarm.methods.vlpso.symmetric_uncertainty import relevance_scores
from hpcswarm.system import MEMORY_SHARE

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_gpu import N_CLASSES, Figures, device_label, planted_data  # noqa: E402
from bench_large import slowest  # noqa: E402

DEFAULT_SIZES = ["500x2000", "1000x3000", "2000x5000"]

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


class Recorded(ParticleStates):
    """A rank's particle states that also count, for every subset scored, the genes flipped
    since the particle's previous subset (benchmark instrumentation; the last one made is
    the running search's)."""

    made = []

    def __init__(self, *args):
        super().__init__(*args)
        self.previous, self.flipped, self.compared = {}, 0, 0
        self.particles = set()
        Recorded.made.append(self)

    def values(self, particles, masks):
        for particle, mask in zip(particles, masks):
            before = self.previous.get(int(particle))
            if before is not None:
                self.flipped += int(np.count_nonzero(mask != before))
                self.compared += int(np.count_nonzero(mask))
            self.previous[int(particle)] = np.array(mask, dtype=bool)
            self.particles.add(int(particle))
        return super().values(particles, masks)

    def snapshot(self):
        """The cumulative counts now."""
        return {**self.counts.as_dict(), "flipped": self.flipped, "compared": self.compared,
                "held": len(self), "particles": sorted(self.particles)}


def comparable(result):
    """What must not depend on the path, ranks or shards: genes, fitness, history (but
    seconds)."""
    history = [{k: v for k, v in row.items() if k != "seconds"} for row in result.history]
    return result.genes.tolist(), result.fitness, history


def swarm_params(particles, rounds, change_after):
    """VLPSO's default settings but for these."""
    return {**algorithm_params("vlpso"), "n_particles": particles, "n_iterations": rounds,
            "change_after": change_after}


def search(data, y, comm, n_shards, cache_memory, params):
    """One search of ``params`` on ``comm``: ``(result, per round: the slowest rank's
    seconds and every rank's counts of that round, the least share of a core a rank had)``
    (a rank's CPU over wall-clock seconds: other jobs on the machine lower it)."""
    Recorded.made.clear()
    snapshots = []
    hooks = SearchHooks(progress=lambda row: snapshots.append(Recorded.made[-1].snapshot()))
    comm.barrier()
    wall, cpu = time.perf_counter(), time.process_time()
    result = run_search(data, y, "vlpso", params, seed=1, comm=comm, sample_shards=n_shards,
                        cache_memory=cache_memory, hooks=hooks)
    share = (time.process_time() - cpu) / (time.perf_counter() - wall)
    share = float(comm.allreduce_min(np.array([share]))[0])
    seconds = np.diff([0.0] + [row["seconds"] for row in result.history])
    seconds = comm.allreduce_max(np.asarray(seconds, dtype=float))
    every = comm.gather(snapshots)
    rounds = None
    if comm.rank == 0:
        rounds = []
        for index, second in enumerate(seconds):
            ranks = []
            for rank_snapshots in every:
                now = rank_snapshots[index]
                before = rank_snapshots[index - 1] if index else {}
                ranks.append({key: (value if key in ("held", "particles")
                                    else value - before.get(key, 0))
                              for key, value in now.items()})
            rounds.append({"round": index, "seconds": float(second),
                           "mean_size": result.history[index]["mean_size"], "ranks": ranks})
    return result, rounds, min(1.0, share)


def su_seconds(data, codes, comm):
    """Seconds of the SU ranking of every gene on the ranks of ``comm`` (the slowest's)."""
    comm.barrier()
    started = time.perf_counter()
    relevance_scores(data, codes, np.arange(data.n_genes), comm)
    return slowest(comm, time.perf_counter() - started)


def gemm_seconds(size=1000, repeats=3):
    """``(wall, CPU)`` seconds of ``repeats`` float64 products of two ``size`` x ``size``
    matrices (one BLAS thread): CPU over wall is the share of a core the process had."""
    a = np.random.default_rng(0).standard_normal((size, size))
    a @ a
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(repeats):
        a @ a
    return time.perf_counter() - wall, time.process_time() - cpu


def bare_gemms(data, masks, n_repeats):
    """Seconds per multiply-add of the bare products of ``masks``' subsets (the held-out rows
    by every sample over the subset's genes; where one rank makes the whole Gram matrix, n
    up to 1,048, the symmetric product, a BLAS ``syrk`` of half the multiply-adds), the
    best of ``n_repeats`` each."""
    n = data.n_samples
    whole = whole_gram(n, 1)
    seconds, madds = 0.0, 0.0
    for mask in masks:
        values = data.take(np.flatnonzero(mask))
        left = values.T if whole else np.ascontiguousarray(values.T)
        product = np.empty((n, n))
        best = np.inf
        for _ in range(n_repeats):
            started = time.perf_counter()
            np.matmul(left, values, out=product)
            best = min(best, time.perf_counter() - started)
        seconds += best
        madds += n * n * values.shape[0] * (0.5 if whole else 1.0)
    return seconds / madds


def wait_for(comm):
    """A barrier that sleeps while it waits (MPICH's polls a core, which would slow the
    rank that works)."""
    raw = getattr(comm, "comm", None)
    if raw is None:
        return comm.barrier()
    request = raw.Ibarrier()
    while not request.Test():
        time.sleep(0.01)


def measure(path, comm, solo, args):
    """Every figure of one size: each configuration and path, per round and per search."""
    dataset = open_dataset(path)
    data = GeneMajor(dataset.X_genes, finite=dataset.values_finite)
    y = np.asarray(dataset.y)
    codes = np.unique(y, return_inverse=True)[1]
    figures = {"n_samples": data.n_samples, "n_genes": data.n_genes,
               "particles": args.particles, "rounds": args.rounds, "runs": {}}
    configs = [("1 rank", 1)] + ([("2 groups", 1), ("2 shards", 2)] if comm.size == 2 else [])
    reference, same = None, True
    for name, n_shards in configs:
        for path_name, budget in PATHS.items():
            on = solo if name == "1 rank" else comm
            if on is not None and (name != "1 rank" or comm.rank == 0):
                result, rounds, share = search(data, y, on, n_shards, budget,
                                               swarm_params(args.particles, args.rounds,
                                                            args.change_after))
                found = comparable(result)
                reference = reference or found
                same = same and found == reference
                if comm.rank == 0:
                    figures["runs"][f"{name}, {path_name}"] = {
                        "groups": on.size // n_shards, "shards": n_shards, "path": path_name,
                        "seconds": result.history[-1]["seconds"], "core_share": share,
                        "rounds": rounds}
                    say(f"  {data.n_samples} x {data.n_genes} {name}, {path_name}: "
                        f"{result.history[-1]['seconds']:.2f} s", flush=True)
            wait_for(comm)
    figures["same_results"] = bool(comm.allreduce_max(np.array([int(not same)]))[0] == 0)
    if comm.rank == 0:
        figures["su_s"] = su_seconds(data, codes, solo)
        genes = np.arange(data.n_genes)
        figures["gemm_per_madd"] = bare_gemms(data, [genes < data.n_genes // 4,
                                                     genes < data.n_genes // 2], 2)
    wait_for(comm)
    return comm.bcast(figures if comm.rank == 0 else None)


PATHS = {"full": 0.0, "cached": None}
"""Each path's ``cache_memory``: none (every subset in full), and the default budget."""


def say(*what, **options):
    """Print on world rank 0."""
    if RANK == 0:
        print(*what, **options)


RANK = 0


# ---------------------------------------------------------------------------- the model
PAPER = {"n_samples": 10_000, "n_genes": 20_000, "change_after": 10,
         "ranks": (1, 64, 256, 1024), "memory_per_rank": 4e9, "ranks_per_node": 64}
"""The modelled search: VLPSO at its default settings (the paper's swarm rule, 300
particles here, 101 rounds, 1-NN 10-fold cross-validation) on 10,000 samples x 20,000
genes, 4 GB a core (64 a node), without a length change or with one after 10 rounds to the
shortest division's length (what planted data with the signal in the first genes gives)."""


TERMS = ("full_madds", "move_madds", "full_pairs", "move_pairs", "particles")
"""What a rank's round did in the model's terms (:func:`rank_terms`)."""


def rank_terms(rank, n, n_shards):
    """One rank's round in the terms of :mod:`hpcswarm.run.cost_model`: the multiply-adds of
    its full products and of its moves as computed (half of them in a symmetric product or
    an upper triangle, :func:`~hpcswarm.run.cost_model.symmetric_shares`), the (row, sample)
    pairs their passes decide and the particles it scored. A round's genes of full products
    are split between those that wrote a state and those that did not by their counts."""
    pairs = -(-n // n_shards) * n
    uncached_share, state_share = symmetric_shares(n, n_shards)
    full = rank["rebuilt"] + rank["uncached"]
    rebuilt_genes = rank["full_genes"] * rank["rebuilt"] / full if full else 0.0
    return dict(zip(TERMS, (
        pairs * ((rank["full_genes"] - rebuilt_genes) * uncached_share
                 + rebuilt_genes * state_share),
        pairs * state_share * rank["moved_genes"],
        pairs * (rank["uncached"] + rank["rebuilt"]),
        pairs * rank["moved"],
        rank["moved"] + rank["rebuilt"] + rank["uncached"] + rank["repeated"])))


def change_rounds(rounds):
    """The rounds whose mean length fell below 0.7 of the round before (length changes)."""
    sizes = [r["mean_size"] for r in rounds]
    return [i for i in range(1, len(sizes)) if sizes[i] < 0.7 * sizes[i - 1]]


def flip_profile(rounds):
    """``(moves since the last full round, after a change, flipped, compared)`` of every
    round of ``rounds`` but the full ones (the first and the length changes')."""
    changes = change_rounds(rounds)
    found = []
    for index, row in enumerate(rounds):
        start = max([0] + [c for c in changes if c <= index])
        flipped = sum(rank["flipped"] for rank in row["ranks"])
        compared = sum(rank["compared"] for rank in row["ranks"])
        if index > start and compared:
            found.append((index - start, start > 0, flipped, compared))
    return found


def fit_flips(rounds, constants):
    """``constants`` with the genes flipped per move fitted to ``rounds`` (those it has
    rounds for): the first move's share, a power law of the later moves' (least squares of
    the logarithms) and the share after a length change."""
    profile = flip_profile(rounds)
    first = [(f, c) for k, after, f, c in profile if k == 1 and not after]
    later = [(k, f / c) for k, after, f, c in profile if k >= 2 and not after and f]
    after = [(f, c) for k, was_after, f, c in profile if was_after]
    found = {}
    if first:
        found["flipped_first"] = sum(f for f, _ in first) / sum(c for _, c in first)
    if len(later) >= 2:
        slope, level = np.polyfit(np.log(np.array([k for k, _ in later]) / 2),
                                  np.log([share for _, share in later]), 1)
        found.update(flipped_second=float(np.exp(level)), flipped_decay=float(-slope))
    if after:
        found["flipped_after_change"] = sum(f for f, _ in after) / sum(c for _, c in after)
    return replace(constants, **found)


FITTED = ("move_multiply_add", "pair", "move_pair", "particle", "exchange", "swarm")
"""The constants :func:`fit_constants` fits to the rounds, in the order of their terms."""


def round_design(run, row, n, c):
    """``(terms, full multiply-adds)`` of the round ``row`` of ``run`` for the constants
    :data:`FITTED` under ``c``: those of its busiest rank (the most seconds under ``c``;
    the groups wait for each other, a group's shards do the same work), the exchange's
    steps between the run's ranks and the particles of the swarm (every rank's work)."""
    ranks = [rank_terms(rank, n, run["shards"]) for rank in row["ranks"]]
    costs = [c.multiply_add * t["full_madds"] + c.move_multiply_add * t["move_madds"]
             + c.pair * t["full_pairs"] + c.move_pair * t["move_pairs"]
             + c.particle * t["particles"] for t in ranks]
    busiest = ranks[int(np.argmax(costs))]
    return (np.array([busiest["move_madds"], busiest["full_pairs"], busiest["move_pairs"],
                      busiest["particles"], exchange_steps(run["groups"] * run["shards"]),
                      sum(t["particles"] for t in ranks) / run["shards"]]),
            busiest["full_madds"])


def fit_selected_first(rows, constants):
    """``constants`` with ``selected_first`` fitted to the 2-group runs without states (where
    there are any): per run, least squares of each rank's genes scored in each round before
    the first length change over the lengths of the first particles of their divisions it
    holds and those of the others (``selected`` a run's own); the mean over the runs."""
    found = []
    for r in rows:
        run = r["runs"].get("2 groups, full")
        if run is None:
            continue
        lengths = division_lengths(r["n_genes"], DIVISIONS)[division_of(r["particles"],
                                                                        DIVISIONS)]
        first = first_of_division(r["particles"], DIVISIONS)
        design, genes = [], []
        for row in run["rounds"][1:(change_rounds(run["rounds"]) or [len(run["rounds"])])[0]]:
            for rank in row["ranks"]:
                held = np.isin(np.arange(lengths.size), rank["particles"])
                design.append([lengths[held & first].sum(), lengths[held & ~first].sum()])
                genes.append(rank["full_genes"])
        (share, _), *_ = np.linalg.lstsq(np.array(design, dtype=float), np.array(genes, float),
                                         rcond=None)
        found.append(float(share))
    return replace(constants, selected_first=float(np.mean(found))) if found else constants


def gemm_rates(rows, scale):
    """Seconds per multiply-add of an idle core's full products at each size measured: the
    bare products' (:func:`bare_gemms`) times ``scale``, the CPU over wall-clock seconds of
    the GEMMs timed beside them (smaller products run at a lower rate)."""
    return {r["n_samples"]: scale * r["gemm_per_madd"] for r in rows}


def fit_constants(rows, flips, scale, repeats=4):
    """The model's constants, of an idle core, from the measured rounds (see
    :mod:`hpcswarm.run.cost_model`).

    ``multiply_add``: the bare products' of the largest size (:func:`gemm_rates`, the shape
    nearest the paper's); :data:`FITTED` (the moves' multiply-adds, the pairs of a full
    evaluation and of a move, a group's particles, the exchange between ranks, the swarm's
    particles): non-negative least squares of the relative errors over every round after
    the first of every run (1 rank, 2 groups, 2 shards; both paths), beyond its full
    products' multiply-adds at its size's rate, each round's seconds times the share of a
    core its run had (its CPU over wall-clock seconds) and its terms those of its busiest
    rank (:func:`round_design`, the busiest under the previous fit: ``repeats`` fits, the
    first under the bare products' rate alone); ``selected_first``
    (:func:`fit_selected_first`); the flips of the moves from the rounds ``flips``
    (:func:`fit_flips`); ``su_gene`` and ``su``: least squares of the relative errors of
    the SU ranking over the sizes, times ``scale``."""
    rates = gemm_rates(rows, scale)
    largest = rates[max(rates)]
    c = fit_selected_first(rows, CostConstants(
        multiply_add=largest, move_multiply_add=largest, pair=0.0, move_pair=0.0,
        particle=0.0, exchange=0.0, swarm=0.0))
    for _ in range(repeats):
        design, target = [], []
        for r in rows:
            at_size = replace(c, multiply_add=rates[r["n_samples"]])
            for run in r["runs"].values():
                for row in run["rounds"][1:]:
                    seconds = row["seconds"] * run["core_share"]
                    terms, full_madds = round_design(run, row, r["n_samples"], at_size)
                    design.append(terms / seconds)
                    target.append(1.0 - at_size.multiply_add * full_madds / seconds)
        found, _ = nnls(np.array(design), np.array(target))
        c = replace(c, **dict(zip(FITTED, map(float, found))))
    su_measured = scale * np.array([r["su_s"] for r in rows])
    su_design = np.array([[r["n_genes"], r["n_genes"] * r["n_samples"] * np.log2(r["n_samples"])]
                          for r in rows]) / su_measured[:, None]
    (su_gene, su), *_ = np.linalg.lstsq(su_design, np.ones(len(rows)), rcond=None)
    return fit_flips(flips, replace(c, su_gene=max(0.0, float(su_gene)),
                                    su=max(0.0, float(su))))


def observed_deal(run):
    """The deal of ``run``'s particles to its groups as measured (each group's ranks hold
    its particles), its states taken by a group's particles in order."""
    groups = np.zeros(run["particles"], dtype=int)
    for rank, snapshot in enumerate(run["rounds"][-1]["ranks"]):
        groups[snapshot["particles"]] = rank // run["shards"]

    def deal(costs, n_groups, cached_costs, states):
        cached = np.zeros(groups.size, dtype=bool)
        for group in range(n_groups):
            cached[np.flatnonzero(groups == group)[:states]] = True
        return groups, cached

    return deal


def predicted(r, key, c, rate):
    """The model's seconds of ``r``'s run ``key`` after its first round: its sizes, rounds,
    length changes (to the mean length measured), states held, deal and genes flipped as
    measured, its products at the rate ``rate`` of its size (:func:`gemm_rates`), on the
    share of a core its ranks had (the constants are a whole core's)."""
    run = {**r["runs"][key], "particles": r["particles"]}
    n, d = r["n_samples"], r["n_genes"]
    rounds = run["rounds"]
    changes = change_rounds(rounds)
    lengths = division_lengths(d, DIVISIONS)[division_of(r["particles"], DIVISIONS)]
    first = first_of_division(r["particles"], DIVISIONS)
    selected = np.mean([row["mean_size"] for row in rounds[1:(changes or [len(rounds)])[0]]])
    length_changes = [(at, max(1, round(d * rounds[at]["mean_size"] / selected)))
                      for at in changes]
    others = ((selected * lengths.size - c.selected_first * lengths[first].sum())
              / lengths[~first].sum())
    spec = SearchSpec.build("vlpso", {"n_particles": r["particles"]})
    cost = search_cost(spec, n, d, run["groups"], run["shards"], n_rounds=r["rounds"],
                       length_changes=length_changes,
                       constants=fit_flips(rounds, replace(c, selected=others,
                                                           multiply_add=rate)),
                       deal=observed_deal(run),
                       states=max(rank["held"] for row in rounds for rank in row["ranks"]))
    return sum(cost.round_seconds[1:]) / run["core_share"]


def run_totals(run, n):
    """Per search: seconds after the first round, multiply-adds as computed (by the busiest
    rank), genes flipped over the genes scored, subsets scored from a state or repeated,
    full products, the largest states held by a rank (bytes)."""
    ranks = [rank for row in run["rounds"] for rank in row["ranks"]]
    madds = [t["full_madds"] + t["move_madds"]
             for t in (rank_terms(rank, n, run["shards"]) for rank in ranks)]
    per_round = len(run["rounds"][0]["ranks"])  # ranks in round order: rank r at r::per_round
    return {"seconds": sum(row["seconds"] for row in run["rounds"][1:]),
            "madds": max(sum(madds[rank::per_round]) for rank in range(per_round)),
            "flipped": sum(rank["flipped"] for rank in ranks)
            / max(1, sum(rank["compared"] for rank in ranks)),
            "hits": sum(rank["moved"] + rank["repeated"] for rank in ranks),
            "full": sum(rank["rebuilt"] + rank["uncached"] for rank in ranks),
            "state_bytes": max(rank["held"] for rank in ranks) * -(-n // run["shards"]) * n * 8}


def print_rounds(r):
    """Per round of the 1-rank runs of one size, both paths side by side."""
    n = r["n_samples"]
    full, cached = (r["runs"][f"1 rank, {name}"] for name in PATHS)

    def madds(rank):
        terms = rank_terms(rank, n, 1)
        return (terms["full_madds"] + terms["move_madds"]) / 1e9

    print(f"per round, {n} x {r['n_genes']}, 1 rank: round | full s  cached s | full Gmadd "
          f"cached Gmadd | flipped | hits | full products | states MB")
    for a, b in zip(full["rounds"], cached["rounds"]):
        (rank_a,), (rank_b,) = a["ranks"], b["ranks"]
        print(f"  {a['round']:5d} | {a['seconds']:6.2f} {b['seconds']:9.2f} | "
              f"{madds(rank_a):10.2f} {madds(rank_b):12.2f} | "
              f"{rank_b['flipped'] / max(1, rank_b['compared']):7.3f} | "
              f"{rank_b['moved'] + rank_b['repeated']:4d} | "
              f"{rank_b['rebuilt'] + rank_b['uncached']:13d} | "
              f"{rank_b['held'] * n * n * 8 / 1e6:9.1f}")


def paper_tables(c, spec):
    """The paper-size search and signature of ``spec`` on each of :data:`PAPER`'s ranks,
    with one length change and without."""
    n, d = PAPER["n_samples"], PAPER["n_genes"]
    options = {"memory_per_rank": PAPER["memory_per_rank"],
               "ranks_per_node": PAPER["ranks_per_node"], "constants": c}
    change = [(PAPER["change_after"], d // DIVISIONS)]
    searches, signatures = [], []
    for ranks in PAPER["ranks"]:
        early, none = (best_search(spec, n, d, ranks, length_changes=changes, **options)
                       for changes in (change, ()))
        searches.append((ranks, early, none))
        if ranks > 1:
            signatures.append((ranks, *(signature_cost(spec, n, d, ranks, length_changes=x,
                                                       **options) for x in (change, ()))))
    return searches, signatures


def summary(cost):
    """What the tables print of a :class:`~hpcswarm.run.cost_model.SearchCost`."""
    return {"hours": cost.seconds / 3600, "groups": cost.n_groups, "shards": cost.n_shards,
            "cached": cost.cached, "particles": cost.n_particles,
            "memory_gb": cost.memory_bytes / 1e9, "allowed_gb": cost.allowed_bytes / 1e9}


def print_paper(c):
    """The paper-size tables (:func:`paper_tables`) of VLPSO's defaults and of the same
    without preprocessing (the values scaled once beforehand, read from the shared file)."""
    n, d = PAPER["n_samples"], PAPER["n_genes"]
    found = {}
    for label, spec in (("defaults (min-max scaling)", SearchSpec.build("vlpso", {})),
                        ("preprocess = none", SearchSpec.build("vlpso", {}, preprocess=()))):
        searches, signatures = paper_tables(c, spec)
        print(f"one search, {n:,} x {d:,}, VLPSO {label}, 101 rounds, "
              f"{PAPER['memory_per_rank'] / 1e9:g} GB a rank ({MEMORY_SHARE:.0%} allowed), "
              f"idle-core constants; hours with a length change after "
              f"{PAPER['change_after']} rounds / none:")
        print("  ranks | groups x shards | hours | GB per rank | particles cached")
        for ranks, early, none in searches:
            print(f"  {ranks:5d} | {early.n_groups:4d} x {early.n_shards:<4d} | "
                  f"{early.seconds / 3600:7.2f} / {none.seconds / 3600:7.2f} | "
                  f"{early.memory_bytes / 1e9:5.2f}{'' if _fits(early) else ' (over)'} | "
                  f"{early.cached} of {early.n_particles} "
                  f"({early.cached / early.n_particles:.0%})")
        print(f"the signature: 10 outer folds on {n - n // 10:,} rows + the final search, "
              f"VLPSO {label}; hours with a length change after {PAPER['change_after']} "
              f"rounds / none:")
        print("  ranks | task groups x (groups x shards) | hours | GB per rank | particles "
              "cached (a fold's search)")
        for ranks, early, none in signatures:
            fold = early.fold_search
            print(f"  {ranks:5d} | {early.n_task_groups} x ({fold.n_groups} x {fold.n_shards}) "
                  f"| {early.seconds / 3600:6.2f} / {none.seconds / 3600:6.2f} | "
                  f"{early.final_search.memory_bytes / 1e9:5.2f}"
                  f"{'' if _fits(early.final_search) else ' (over)'} | "
                  f"{fold.cached} of {fold.n_particles}")
        found[label] = {
            "searches": [(ranks, summary(early), summary(none))
                         for ranks, early, none in searches],
            "signatures": [(ranks, early.seconds / 3600, none.seconds / 3600,
                            early.n_task_groups, summary(early.fold_search),
                            summary(early.final_search))
                           for ranks, early, none in signatures]}
    return found


def _seconds(value):
    return f"{value:.2f}" if value < 10 else f"{value:.3g}"


def markdown(rows, checks, paper):
    """The tables of ``docs/large-cohorts.md``, "VLPSO's cost by size", in Markdown: the
    measured against the predicted seconds of every run (:func:`print_model`'s ``checks``)
    and the paper-size search and signature (:func:`print_paper`'s figures)."""
    seconds = {(n, key): (m, p) for n, _, key, m, p in checks}
    lines = ["| n x d | path | 1 rank | 2 groups | 2 shards | multiply-adds | flipped | cache "
             "hits / full products | states per rank |", "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        n = r["n_samples"]
        for path in PATHS:
            cells = []
            for config in ("1 rank", "2 groups", "2 shards"):
                m, p = seconds.get((n, f"{config}, {path}"), (None, None))
                cells.append("" if m is None else
                             f"{_seconds(m)} / {_seconds(p)} ({100 * (p - m) / m:+.0f} %)")
            totals = run_totals(r["runs"][f"1 rank, {path}"], n)
            flipped = "" if path == "full" else f"{100 * totals['flipped']:.1f} %"
            states = (f"{totals['state_bytes'] / 1e6:,.0f} MB" if totals["state_bytes"]
                      else "0")
            lines.append(f"| {n:,} x {r['n_genes']:,} | {'states' if path == 'cached' else path} "
                         f"| {' | '.join(cells)} | {totals['madds'] / 1e9:,.0f} G | {flipped} | "
                         f"{totals['hits']} / {totals['full']} | {states} |")
    labels = list(paper)
    lines += ["", "| ranks | " + " | ".join(f"{label}: groups x shards | hours | GB a rank | "
                                           f"particles cached" for label in labels) + " |",
              "|---" * (1 + 4 * len(labels)) + "|"]
    for at, ranks in enumerate(r for r, *_ in paper[labels[0]]["searches"]):
        if ranks == 1:
            continue
        cells = []
        for label in labels:
            _, early, none = paper[label]["searches"][at]
            cells.append(f"{early['groups']} x {early['shards']} | {early['hours']:.2f} / "
                         f"{none['hours']:.2f} | {early['memory_gb']:.2f} | {early['cached']} of "
                         f"{early['particles']} "
                         f"({100 * early['cached'] / early['particles']:.0f} %)")
        lines.append(f"| {ranks:,} | {' | '.join(cells)} |")
    lines += ["", "| ranks | " + " | ".join(f"{label}: layout | hours | GB a rank"
                                           for label in labels)
              + " | particles cached (a fold's search) |", "|---" * (2 + 3 * len(labels)) + "|"]
    for at, (ranks, *_) in enumerate(paper[labels[0]]["signatures"]):
        cells = []
        for label in labels:
            _, early_h, none_h, task_groups, fold, final = paper[label]["signatures"][at]
            cells.append(f"{task_groups} x ({fold['groups']} x {fold['shards']}) | "
                         f"{early_h:.2f} / {none_h:.2f} | {final['memory_gb']:.2f}")
        lines.append(f"| {ranks:,} | {' | '.join(cells)} | {fold['cached']} of "
                     f"{fold['particles']} |")
    return "\n".join(lines)


def _fits(cost):
    return cost.memory_bytes <= cost.allowed_bytes


def print_model(rows, scale, flips, tables=False):
    """The constants, the checks and the paper-size tables (``tables``: also in Markdown,
    :func:`markdown`); the found figures."""
    c = fit_constants(rows, flips["rounds"], scale)
    print(f"constants of an idle core (the GEMMs timed in this run had {scale:.3f} of a core, "
          f"each search the share of a core printed): CostConstants("
          + ", ".join(f"{name}={value:.3g}" for name, value in c.as_dict().items()) + ")")
    print("per search (the rounds after the first): n x d | run | share of a core | s "
          "measured / predicted (error) | Gmadd | flipped | hits | full products | states MB")
    checks, rates = [], gemm_rates(rows, scale)
    for r in rows:
        for key, run in r["runs"].items():
            totals = run_totals(run, r["n_samples"])
            model_s = predicted(r, key, c, rates[r["n_samples"]])
            error = (model_s - totals["seconds"]) / totals["seconds"]
            checks.append((r["n_samples"], r["n_genes"], key, totals["seconds"], model_s))
            print(f"  {r['n_samples']:>5} x {r['n_genes']:<5} | {key:16s} | "
                  f"{run['core_share']:.2f} | "
                  f"{totals['seconds']:8.2f} / {model_s:8.2f} ({100 * error:+4.0f}%) | "
                  f"{totals['madds'] / 1e9:8.1f} | {totals['flipped']:.3f} | "
                  f"{totals['hits']:5d} | {totals['full']:5d} | "
                  f"{totals['state_bytes'] / 1e6:8.1f}")
    within = all(abs(p - m) <= 0.3 * m for *_, m, p in checks)
    print(f"every prediction within 30 %: {within}")
    paper = print_paper(c)
    if tables:
        print(markdown(rows, checks, paper))
    return {"constants": c.as_dict(), "idle_scale": scale, "checks": checks,
            "within_30": within, "paper": paper}


def flip_run(args, solo):
    """The rounds of one search with states of ``--flips-particles`` particles and
    ``--flips-rounds`` rounds at ``--flips-size`` with VLPSO's default length change, one
    rank (the genes flipped by its moves, a profile longer than the sweep's)."""
    n_samples, n_genes = size_of(args.flips_size)
    dataset = open_dataset(data_file(args.folder, n_samples, n_genes, solo))
    data = GeneMajor(dataset.X_genes, finite=dataset.values_finite)
    params = swarm_params(args.flips_particles, args.flips_rounds,
                          algorithm_params("vlpso")["change_after"])
    result, rounds, _ = search(data, np.asarray(dataset.y), solo, 1, None, params)
    shares = [sum(r["flipped"] for r in row["ranks"]) / max(1, sum(r["compared"]
                                                                 for r in row["ranks"]))
              for row in rounds]
    print(f"genes flipped per round over the genes scored, {n_samples} x {n_genes}, "
          f"{args.flips_particles} particles, {args.flips_rounds} rounds, 1 rank "
          f"({result.history[-1]['seconds']:.1f} s; length changes in rounds "
          f"{change_rounds(rounds)}): {' '.join(f'{x:.3f}' for x in shares)}", flush=True)
    return {"n_samples": n_samples, "n_genes": n_genes, "particles": args.flips_particles,
            "rounds": rounds}


def measure_all(args, comm):
    global RANK
    RANK = comm.rank
    evaluation_module.ParticleStates = Recorded
    threadpool_limits(limits=1)
    load = [round(x, 2) for x in os.getloadavg()]
    say(f"{comm.size} rank(s), 1 BLAS thread each; {args.particles} particles, {args.rounds} "
        f"rounds, a length change after {args.change_after} rounds without a better subset; "
        f"load average before: {load}", flush=True)
    xt, y = planted_data(60, 240)
    run_search(GeneMajor(xt, finite=True), y, "vlpso", {"n_particles": 12, "n_iterations": 2},
               comm=comm)  # imports and compiled kernels ready before anything is timed
    gemms = []
    rows = []
    with comm.split(comm.rank, 0) as solo:
        for text in args.sizes:
            n_samples, n_genes = size_of(text)
            if comm.rank == 0:  # as the 1-rank searches run: the other rank asleep
                gemms.append(gemm_seconds())
            wait_for(comm)
            rows.append(measure(data_file(args.folder, n_samples, n_genes, comm), comm, solo,
                                args))
            say(f"  same results on every path and configuration: {rows[-1]['same_results']}",
                flush=True)
        flips = None
        if comm.rank == 0:
            gemms.append(gemm_seconds())
            flips = flip_run(args, solo)
        wait_for(comm)
    after = [round(x, 2) for x in os.getloadavg()]
    say(f"load average after: {after}")
    if comm.rank == 0:
        scale = sum(cpu for _, cpu in gemms) / sum(wall for wall, _ in gemms)
        for r in rows:
            print_rounds(r)
        found = print_model(rows, min(1.0, scale), flips)
        print(json.dumps({"ranks": comm.size, "load_average_before": load,
                          "load_average_after": after, "gemms": gemms, "results": rows,
                          "flips": flips, "model": found}))
    return 0 if all(r["same_results"] for r in rows) else 1


# ---------------------------------------------------------------------------- the GPU
class VlpsoFigures(Figures):
    """:class:`bench_gpu.Figures` appended to ``$OUT/bench_vlpso.jsonl``."""

    def __init__(self, folder):
        super().__init__(None)
        self.path = None if not folder else os.path.join(folder, "bench_vlpso.jsonl")


class Timed(Recorded):
    """:class:`Recorded` states that also time the particles' evaluations and keep every
    subset scored (the GPU section's instrumentation: both paths timed alike)."""

    def __init__(self, *args):
        super().__init__(*args)
        self.seconds, self.masks = 0.0, []

    def values(self, particles, masks):
        started = time.perf_counter()
        found = super().values(particles, masks)
        self.seconds += time.perf_counter() - started
        self.masks.extend(np.array(masks, dtype=bool))
        return found

    def snapshot(self):
        return {**super().snapshot(), "evaluation_s": self.seconds, "scored": len(self.masks),
                "refined_rows": self.fitness.scorer.refined_rows}


def device_search(data, y, params, path, figures):
    """One VLPSO search of ``params`` on the device on the path ``path`` of :data:`PATHS`,
    each round emitted as it ends (``vlpso_round``): ``(result, rounds, masks)``, the masks
    scored in the order scored."""
    Timed.made.clear()
    rounds, before = [], [{}, 0.0]
    one_state = state_bytes(data.n_samples, data.n_samples, data.n_genes)

    def progress(row):
        now = Timed.made[-1].snapshot()
        done = {key: value - before[0].get(key, 0) for key, value in now.items()
                if key not in ("held", "particles")}
        done.update(path=path, round=len(rounds), seconds=row["seconds"] - before[1],
                    mean_size=row["mean_size"], held=now["held"],
                    state_bytes=now["held"] * one_state,
                    scored_before=now["scored"] - done["scored"])
        before[:] = [now, row["seconds"]]
        rounds.append(done)
        figures.emit("vlpso_round",
                     f"VLPSO {path} round {done['round']}: {done['seconds']:.2f} s "
                     f"({done['evaluation_s']:.2f} s of it {done['scored']} subsets: "
                     f"{done['moved']} moved, {done['rebuilt']} rebuilt, {done['uncached']} "
                     f"uncached, {done['repeated']} repeated; {done['flipped']} genes flipped "
                     f"of {done['compared']}; {done['refined_rows']} rows refined on the "
                     f"host), {done['held']} states held "
                     f"({done['state_bytes'] / 1e9:.1f} GB)", **done)

    result = run_search(data, y, "vlpso", params, seed=1, device="gpu",
                        cache_memory=PATHS[path], hooks=SearchHooks(progress=progress))
    return result, rounds, Timed.made[-1].masks


def core_seconds(core, masks, n_chosen, n_samples):
    """One core's seconds for every subset of ``masks``: ``n_chosen`` of them, evenly spaced,
    scored on the shard of ``core`` (a :class:`KnnEvaluator`, one BLAS thread), each scaled
    from its shard's rows to ``n_samples`` (the gathering of its values, timed alone,
    unscaled), and their sum scaled to all the masks; ``(seconds, n_chosen)``."""
    if len(masks) == 0:
        return 0.0, 0
    chosen = np.unique(np.linspace(0, len(masks) - 1, min(n_chosen, len(masks)))
                       .round().astype(int))
    shard_rows = core._rows.rows.size
    seconds = 0.0
    with threadpool_limits(1):
        for mask in masks[chosen]:
            started = time.perf_counter()
            core.data.take(np.flatnonzero(mask))
            gather = time.perf_counter() - started
            started = time.perf_counter()
            core.score(mask)
            shard = time.perf_counter() - started
            seconds += gather + max(shard - gather, 0.0) * n_samples / shard_rows
    return seconds * len(masks) / len(chosen), len(chosen)


def gpu_iterations(args, figures):
    """VLPSO rounds on the GPU with the particles' states (the default cache budget, sized by
    the device's memory) beside every subset in full on the GPU and one core; True when
    both paths give the same genes, fitness and history.

    A reduced swarm (``--particles``, ``--rounds``, a length change after
    ``--change-after`` rounds without a better subset: :func:`swarm_params`, seed 1) runs
    with ``device="gpu"`` on in-memory planted data of ``--samples`` x ``--genes``, once per
    path of :data:`PATHS`, the cached one first; its gene order is the planted one (signal
    genes first) instead of the SU ranking, whose cost is the host's (measured on the CPU
    above, and modelled) and which does not change what a round costs. Each round of each
    path is emitted as it ends (``vlpso_round``): its seconds and those of its
    evaluations, the subsets scored, moved from a state, rebuilt, evaluated in full beyond
    the budget (uncached) and repeated (:class:`~hpcswarm.fitness.moves.MoveCounts`), the
    genes flipped since each particle's previous subset, and the states held and their
    bytes. Then whether both paths agree (``vlpso_paths``), and per round after the first
    (whose time holds the start) both paths beside one core (``vlpso_iteration``): one
    core's seconds for the full path's subsets, each scored on a shard of ``--core-rows``
    held-out rows (``KnnEvaluator``, one BLAS thread) and scaled to all rows,
    ``--core-masks`` of them evenly spaced and scaled to all, plus the round's host work
    (its seconds less its evaluations', on the full path). A small search on each path
    first makes the device's kernels ready.
    """
    xp = gpu_array_module(args.array_module)
    os.environ[ARRAY_MODULE_VARIABLE] = args.array_module
    evaluation_module.ParticleStates = Timed
    params = swarm_params(args.particles, args.rounds, args.change_after)
    one_state = state_bytes(args.samples, args.samples, args.genes)
    figures.emit("vlpso_device", f"VLPSO on {device_label(xp)}: {args.samples:,} x "
                 f"{args.genes:,}, {args.particles} particles, {args.rounds} rounds, a length "
                 f"change after {args.change_after} rounds without a better subset; a state "
                 f"{one_state / 1e9:.2f} GB; paths {', '.join(PATHS)}",
                 device=device_label(xp), samples=args.samples, genes=args.genes,
                 particles=args.particles, rounds=args.rounds,
                 change_after=args.change_after, state_bytes=one_state, paths=list(PATHS))
    xt, y = planted_data(60, 240)
    for budget in PATHS.values():  # the device's kernels compiled before anything is timed
        run_search(GeneMajor(xt, finite=True), y, "vlpso", {"n_particles": 12,
                                                            "n_iterations": 3},
                   device="gpu", cache_memory=budget)
    xt, y = planted_data(args.samples, args.genes)
    data = GeneMajor(xt, finite=True)

    def planted_order(scorer_data, codes, genes, comm=None, table=None):
        return -np.arange(len(genes), dtype=float)  # decreasing: gene 0 first

    vlpso_order.relevance_scores = planted_order
    found = {}
    try:
        for path in ("cached", "full"):
            found[path] = device_search(data, y, params, path, figures)
    finally:
        vlpso_order.relevance_scores = relevance_scores
    (cached, cached_rounds, _), (full, full_rounds, masks) = found["cached"], found["full"]
    same = comparable(cached) == comparable(full)
    totals = {path: {"seconds": sum(r["seconds"] for r in rounds[1:]),
                     "evaluation_s": sum(r["evaluation_s"] for r in rounds[1:]),
                     "first_s": rounds[0]["seconds"],
                     "most_held": max(r["held"] for r in rounds)}
              for path, (_, rounds, _) in found.items()}
    figures.emit("vlpso_paths",
                 f"VLPSO on the GPU, cached beside full: same genes, fitness and history: "
                 f"{same}; the rounds after the first: cached {totals['cached']['seconds']:.2f} "
                 f"s, full {totals['full']['seconds']:.2f} s (full/cached "
                 f"{totals['full']['seconds'] / max(totals['cached']['seconds'], 1e-9):.2f}); "
                 f"the first: {totals['cached']['first_s']:.2f} s and "
                 f"{totals['full']['first_s']:.2f} s; at most {totals['cached']['most_held']} "
                 f"states held", same_results=same, **totals)
    n_shards = max(1, -(-args.samples // args.core_rows))
    core = KnnEvaluator(data, y, k=1, cv=10, seed=1, shard=(0, n_shards))
    with threadpool_limits(1):
        core.score(np.arange(args.genes) < 2)  # compiled kernels ready
    paper_scale = swarm_size(0, args.genes) / args.particles
    masks = np.array(masks, dtype=bool).reshape(-1, args.genes)
    for full_round, cached_round in zip(full_rounds[1:], cached_rounds[1:]):
        start = full_round["scored_before"]
        done = masks[start:start + full_round["scored"]]
        done = done[done.any(axis=1)]
        core_s, chosen = core_seconds(core, done, args.core_masks, args.samples)
        one_core = core_s + max(0.0, full_round["seconds"] - full_round["evaluation_s"])
        full_s, cached_s = full_round["seconds"], cached_round["seconds"]
        figures.emit("vlpso_iteration",
                     f"VLPSO round {full_round['round']}: GPU cached {cached_s:.2f} s, full "
                     f"{full_s:.2f} s (full/cached {full_s / cached_s:.2f}), one core "
                     f"{one_core:.1f} s (timed on {core._rows.rows.size:,} rows of {chosen} "
                     f"subsets, scaled; core/cached {one_core / cached_s:.1f}); the paper's "
                     f"swarm ({swarm_size(0, args.genes)} particles), scaled by particles: "
                     f"cached {cached_s * paper_scale:.1f} s, full {full_s * paper_scale:.1f} "
                     f"s, one core {one_core * paper_scale:.0f} s",
                     round=full_round["round"], cached_s=cached_s, full_s=full_s,
                     cached_evaluation_s=cached_round["evaluation_s"],
                     full_evaluation_s=full_round["evaluation_s"], evaluations=len(done),
                     core_s=one_core, core_evaluation_s=core_s,
                     shard_rows=core._rows.rows.size, core_masks=chosen,
                     paper_swarm_cached_s=cached_s * paper_scale,
                     paper_swarm_full_s=full_s * paper_scale,
                     paper_swarm_core_s=one_core * paper_scale,
                     mean_selected=float(np.count_nonzero(done) / max(1, len(done))))
    figures.emit("vlpso", f"VLPSO on the GPU: fitness {cached.fitness}, {len(cached.genes)} "
                 f"genes, {cached.history[-1]['evaluations']} evaluations; both paths the "
                 f"same: {same}", fitness=cached.fitness, genes=len(cached.genes),
                 evaluations=cached.history[-1]["evaluations"], same_results=same)
    return same


def parse(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", default=DEFAULT_SIZES,
                        help="SAMPLESxGENES each")
    parser.add_argument("--folder", default=os.environ.get("TMPDIR", "/tmp"),
                        help="where the synthetic files are written once and reused")
    parser.add_argument("--particles", type=int, default=None,
                        help="swarm size (default 24; with --gpu 48)")
    parser.add_argument("--rounds", type=int, default=None,
                        help="the initial evaluation and the moves after it (default 14; "
                             "with --gpu 12)")
    parser.add_argument("--quick", action="store_true",
                        help="16 particles and 12 rounds (about half the default's time)")
    parser.add_argument("--change-after", type=int, default=4,
                        help="rounds without a better subset before a length change")
    parser.add_argument("--flips-size", default="500x2000",
                        help="SAMPLESxGENES of the search whose moves give the genes flipped")
    parser.add_argument("--flips-particles", type=int, default=100)
    parser.add_argument("--flips-rounds", type=int, default=40)
    parser.add_argument("--model-from", metavar="JSON",
                        help="only print the model from a previous run's JSON line")
    parser.add_argument("--markdown", action="store_true",
                        help="with --model-from: also the tables of docs/large-cohorts.md")
    gpu = parser.add_argument_group("--gpu: rounds on the GPU, cached beside full and one "
                                    "core")
    gpu.add_argument("--gpu", action="store_true")
    gpu.add_argument("--small", action="store_true",
                     help="with --gpu: 300 x 600, numpy as the array module unless given")
    gpu.add_argument("--samples", type=int, default=10_000)
    gpu.add_argument("--genes", type=int, default=20_000)
    gpu.add_argument("--core-rows", type=int, default=500)
    gpu.add_argument("--core-masks", type=int, default=2,
                     help="subsets a round that one core scores")
    gpu.add_argument("--array-module", choices=["cupy", "numpy"], default=None)
    args = parser.parse_args(argv)
    if args.small:
        args.samples, args.genes, args.core_rows = 300, 600, 100
        args.array_module = args.array_module or "numpy"
    args.array_module = args.array_module or "cupy"
    args.particles = args.particles or (48 if args.gpu else 16 if args.quick else 24)
    args.rounds = args.rounds or (12 if args.gpu else 12 if args.quick else 14)
    return args


def main(argv=None):
    args = parse(argv)
    if args.model_from:
        document = json.loads([line for line in Path(args.model_from).read_text().splitlines()
                               if line.startswith("{")][-1])
        gemms = document["gemms"]
        print_model(document["results"],
                    min(1.0, sum(c for _, c in gemms) / sum(w for w, _ in gemms)),
                    document["flips"], args.markdown)
        return 0
    if args.gpu:
        return 0 if gpu_iterations(args, VlpsoFigures(os.environ.get("OUT"))) else 1
    with world() as comm:
        return measure_all(args, comm)


if __name__ == "__main__":
    sys.exit(main())
