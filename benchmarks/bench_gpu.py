"""The GPU scorer beside one CPU core and beside the GPU's own GEMM, each figure streamed.

On synthetic planted-signal float32 data (``--samples`` x ``--genes``, default 10,000 x
20,000: normal values, 4 classes, a class signal of 0.5 on 50 genes; generated here,
gene-major), 1-NN leave-one-out, the same subsets on both engines. In this order:

1. the headline row, a full evaluation (``score``) of ``--headline`` genes (default
   10,000): the GPU's time (:class:`~hpcswarm.fitness.gpu.DeviceScorer`), the GPU's GEMM
   floor (the float64 product of the same shape, (n x |S|) by (|S| x n), on values already
   on the device), the TFLOP/s this achieves (``2 n^2 |S|`` over the GPU's time), the rows
   the bound left open and the host decided, and one CPU core
   (:class:`~hpcswarm.fitness.evaluator.KnnEvaluator`, BLAS limited to one thread);
2. an integer-valued tie-heavy case (values in -2..2, ``--tie-samples`` x ``--tie-genes``,
   ``--tie-selected`` genes): the same figures, the rows refined on the host first;
3. the same figures for each ``--selected`` size (default 500);
4. a 2 % flip of a cached state (PSO-LSRG's try, 2 % of all genes, ``score_flip``) and a
   batch of ``--batch`` such tries (``score_flips``);
5. a few rounds of PSO-LSRG (``--pso-particles``, ``--pso-rounds``, ``--pso-tries``) whose
   searches build the GPU scorer, one figure per round.

One core is timed on a shard of the held-out rows (``--core-rows`` of them, the scorer's
``shard``) and scaled to all rows: the k-NN work is per row (each row's product with every
sample and its decision), so only the gathering of the selected genes' values, timed alone,
is not scaled. The counts of that shard are checked equal to those of a GPU scorer of the
same shard (the GPU path must give the CPU's counts bit for bit). GPU times are the median
of ``--repeats`` calls after one warm-up.

Each figure is printed (and flushed) as soon as it is measured, and appended as one JSON
line to ``bench_gpu.jsonl`` in the folder the environment variable ``OUT`` names, when it
is set: a run cut short by a timeout keeps every figure measured before it.

Run: ``python benchmarks/bench_gpu.py`` on a machine with CuPy and a CUDA device (sized to
finish well inside the 200 s ``gpu_check.sh`` gives it: one core works on 500 rows, not
10,000; the GPU's figures take seconds), or ``python benchmarks/bench_gpu.py --small``
anywhere: a small size with numpy as the GPU path's array module (or with CuPy
when it is importable as ``cupy``: ``benchmarks/gpu_check.sh --small`` puts the numpy
stand-in ``tests/numpy_cupy`` there). ``benchmarks/gpu_check.sh`` runs this, then the
GPU tests.
"""

import argparse
import json
import os
import statistics
import sys
import time

import numpy as np
from threadpoolctl import threadpool_limits

import hpcswarm.selection.search
from hpcswarm.fitness import GeneMajor, KnnEvaluator, make_scorer
from hpcswarm.fitness.gpu import (ARRAY_MODULE_VARIABLE, DeviceScorer, device_name,
                                  gpu_array_module)
from hpcswarm.swarm.engine.loop import SearchHooks

N_CLASSES = 4
SIGNAL_GENES = 50
FLIP_OF_ALL = 0.02
FIGURES_FILE = "bench_gpu.jsonl"
"""The JSON-lines file of the figures, in the folder named by the environment variable OUT."""


class Figures:
    """Each figure printed as it is measured, and appended to ``$OUT/bench_gpu.jsonl``."""

    def __init__(self, folder):
        self.path = None if not folder else os.path.join(folder, FIGURES_FILE)

    def emit(self, figure, text, **values):
        """Print ``text`` and write ``{"figure": figure, **values}`` as one JSON line."""
        print(text, flush=True)
        if self.path is not None:
            with open(self.path, "a", encoding="utf-8") as stream:
                stream.write(json.dumps({"figure": figure, **values}) + "\n")
                stream.flush()


def planted_data(n_samples, n_genes, seed=0):
    """Gene-major float32 values (n_genes, n_samples) with a class signal, and the labels."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, N_CLASSES, size=n_samples)
    xt = np.empty((n_genes, n_samples), dtype=np.float32)
    for start in range(0, n_genes, 1000):
        stop = min(start + 1000, n_genes)
        xt[start:stop] = rng.standard_normal((stop - start, n_samples), dtype=np.float32)
    xt[:SIGNAL_GENES] += 0.5 * y[None, :].astype(np.float32)
    return xt, y


def integer_data(n_samples, n_genes, seed=1):
    """Gene-major float32 values in -2..2 (many equal distances: near ties), and labels."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, N_CLASSES, size=n_samples)
    return rng.integers(-2, 3, size=(n_genes, n_samples)).astype(np.float32), y


def synchronize(xp):
    """Wait for the device (CuPy, or its stand-in), nothing for numpy."""
    if hasattr(xp, "cuda"):
        xp.cuda.Device().synchronize()


def timed(function, repeats, xp):
    """``(result, median seconds)`` of ``repeats`` calls after one warm-up call."""
    result = function()
    synchronize(xp)
    seconds = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        synchronize(xp)
        seconds.append(time.perf_counter() - start)
    return result, statistics.median(seconds)


def once(function):
    """``(result, seconds)`` of one call."""
    start = time.perf_counter()
    result = function()
    return result, time.perf_counter() - start


def warm_up(scorer, n_genes):
    """One call of each path on two genes, so that no timing holds a compilation."""
    mask = np.zeros(n_genes, dtype=bool)
    mask[:2] = True
    scorer.score(mask)
    state = scorer.new_state(mask)
    scorer.score_flip(state, [2])
    scorer.score_flips(state, np.array([[2, 3]]))


def random_mask(rng, n_genes, n_selected):
    mask = np.zeros(n_genes, dtype=bool)
    mask[rng.choice(n_genes, size=n_selected, replace=False)] = True
    return mask


def gemm_floor(xp, values, repeats):
    """Median seconds of the float64 product (n x |S|) by (|S| x n) on the device."""
    return timed(lambda: xp.matmul(values.T, values), repeats, xp)[1]


def device_label(xp):
    """The device's name; never fails (a figure, not a requirement)."""
    if not hasattr(xp, "cuda"):
        return "numpy (host)"
    try:
        index = xp.cuda.Device().id
    except Exception as exc:  # the name is informative only
        return f"unknown ({type(exc).__name__}: {exc})"
    return device_name(xp, index)


class Bench:
    """The engines of one dataset: the GPU scorer of all rows, and a shard for one core."""

    def __init__(self, args, xp, data, y):
        self.args, self.xp, self.data, self.y = args, xp, data, y
        self.n_samples = data.n_samples
        self.n_shards = max(1, -(-self.n_samples // args.core_rows))
        self.gpu = DeviceScorer(data, y, xp=xp, k=1, cv="loo")
        synchronize(xp)
        self.gpu_shard = DeviceScorer(data, y, xp=xp, k=1, cv="loo", shard=(0, self.n_shards))
        self.core = KnnEvaluator(data, y, k=1, cv="loo", shard=(0, self.n_shards))
        self.shard_rows = self.core._rows.rows.size
        with threadpool_limits(1):
            warm_up(self.core, data.n_genes)
        warm_up(self.gpu, data.n_genes)
        warm_up(self.gpu_shard, data.n_genes)

    def full(self, mask):
        """The figures of a full evaluation of ``mask`` (see the module docstring)."""
        xp, repeats = self.xp, self.args.repeats
        n_selected = int(mask.sum())
        before = self.gpu.refined_rows
        gpu_score = self.gpu.score(mask)
        refined = self.gpu.refined_rows - before
        _, gpu_s = timed(lambda: self.gpu.score(mask), repeats, xp)
        values = xp.asarray(self.data.take(np.flatnonzero(mask)))
        gemm_s = gemm_floor(xp, values, repeats)
        del values
        flops = 2.0 * self.n_samples ** 2 * n_selected
        core = self.core_figures(lambda scorer: scorer.score(mask).correct, mask)
        return {"selected": n_selected, "gpu_s": gpu_s, "gemm_s": gemm_s,
                "tflops": flops / gpu_s / 1e12, "gemm_tflops": flops / gemm_s / 1e12,
                "refined_rows": refined, "rows": self.gpu.total,
                "accuracy": gpu_score.accuracy, **core}

    def core_figures(self, count, mask):
        """One core on the shard, scaled to all rows, and the shard's counts on both engines.

        ``count(scorer)`` scores this figure's subset(s) on a scorer of the shard.
        """
        with threadpool_limits(1):
            _, gather_s = once(lambda: self.data.take(np.flatnonzero(mask)))
            core_count, shard_s = once(lambda: count(self.core))
        scale = self.n_samples / self.shard_rows
        core_s = gather_s + max(shard_s - gather_s, 0.0) * scale
        gpu_count = count(self.gpu_shard)
        return {"core_s": core_s, "core_shard_s": shard_s, "core_gather_s": gather_s,
                "shard_rows": self.shard_rows,
                "equal": bool(np.array_equal(np.asarray(core_count), np.asarray(gpu_count)))}


def full_text(label, row):
    return (f"{label}: {row['selected']:,} genes: GPU {row['gpu_s']:.4f} s "
            f"({row['tflops']:.2f} TFLOP/s), GEMM floor {row['gemm_s']:.4f} s "
            f"({row['gemm_tflops']:.2f} TFLOP/s), GPU/GEMM {row['gpu_s'] / row['gemm_s']:.2f}; "
            f"rows refined on the host {row['refined_rows']:,} of {row['rows']:,}; one core "
            f"{row['core_s']:.3f} s (timed on {row['shard_rows']:,} rows, scaled), core/GPU "
            f"{row['core_s'] / row['gpu_s']:.1f}; shard counts equal {row['equal']}")


def flip_figures(bench, rng):
    """A 2 % flip of a cached state of the first ``--selected`` size, and a batch of tries."""
    args, xp, n_genes = bench.args, bench.xp, bench.data.n_genes
    mask = random_mask(rng, n_genes, args.selected[0])
    n_flip = max(1, round(FLIP_OF_ALL * n_genes))
    genes = rng.choice(n_genes, size=n_flip, replace=False)
    tries = np.array([rng.choice(n_genes, size=n_flip, replace=False)
                      for _ in range(args.batch)])
    state, state_s = once(lambda: bench.gpu.new_state(mask))
    synchronize(xp)
    _, gpu_s = timed(lambda: bench.gpu.score_flip(state, genes), args.repeats, xp)
    _, batch_s = timed(lambda: bench.gpu.score_flips(state, tries), args.repeats, xp)
    del state
    with threadpool_limits(1):
        core_state = bench.core.new_state(mask)
        core_score, shard_s = once(lambda: bench.core.score_flip(core_state, genes))
        core_tries = bench.core.score_flips(core_state, tries[:2])
    shard_state = bench.gpu_shard.new_state(mask)
    equal = (core_score == bench.gpu_shard.score_flip(shard_state, genes)
             and np.array_equal(core_tries, bench.gpu_shard.score_flips(shard_state, tries[:2])))
    core = {"core_s": shard_s * bench.n_samples / bench.shard_rows, "core_shard_s": shard_s,
            "shard_rows": bench.shard_rows, "equal": bool(equal)}
    return {"flipped": n_flip, "selected": args.selected[0], "gpu_s": gpu_s,
            "gpu_state_s": state_s, "gpu_batch_per_try_s": batch_s / args.batch,
            "batch": args.batch, **core}


def pso_figures(args, data, y, figures):
    """A reduced PSO-LSRG swarm whose searches build the GPU scorer; one figure per round.

    The search is asked for ``device="gpu"`` itself (the array module through
    :data:`~hpcswarm.fitness.gpu.ARRAY_MODULE_VARIABLE`), and the scorers it builds are
    recorded: a scorer substituted from outside would be overridden by the search's own
    ``device`` argument.
    """
    params = {"n_particles": args.pso_particles, "n_iterations": args.pso_rounds,
              "ls_tries": args.pso_tries}
    os.environ[ARRAY_MODULE_VARIABLE] = args.array_module
    last = [time.perf_counter()]

    def progress(row):
        now = time.perf_counter()
        figures.emit("pso_round", f"PSO-LSRG {params} on the GPU: round {row['iteration']}: "
                     f"{now - last[0]:.2f} s, {row['evaluations']} evaluations so far",
                     round=row["iteration"], seconds=now - last[0],
                     evaluations=row["evaluations"], params=params)
        last[0] = now

    built = []

    def recorded(*positional, **settings):  # the search's own arguments, untouched
        built.append(make_scorer(*positional, **settings))
        return built[-1]

    hpcswarm.selection.search.make_scorer = recorded
    try:
        result, seconds = once(lambda: hpcswarm.selection.search.run_search(
            data, y, "pso-lsrg", params, seed=3, device="gpu",
            hooks=SearchHooks(progress=progress)))
    finally:
        hpcswarm.selection.search.make_scorer = make_scorer
    scorers = sorted({type(scorer).__name__ for scorer in built})
    figures.emit("pso", f"PSO-LSRG with the scorer(s) {', '.join(scorers)}: {seconds:.2f} s, "
                 f"{result.history[-1]['evaluations']} evaluations, fitness {result.fitness}",
                 seconds=seconds, evaluations=result.history[-1]["evaluations"],
                 fitness=result.fitness, params=params, scorers=scorers)


def measure(args, figures):
    xp = gpu_array_module(args.array_module)
    figures.emit("device", f"device: {device_label(xp)}; array module {xp.__name__} "
                 f"{getattr(xp, '__version__', '')}", device=device_label(xp),
                 array_module=xp.__name__, version=getattr(xp, "__version__", ""),
                 samples=args.samples, genes=args.genes)
    (xt, y), data_s = once(lambda: planted_data(args.samples, args.genes))
    data = GeneMajor(xt, finite=True)
    bench, setup_s = once(lambda: Bench(args, xp, data, y))
    figures.emit("setup", f"{args.samples:,} samples x {args.genes:,} genes float32: made in "
                 f"{data_s:.2f} s; scorers built and warmed up in {setup_s:.2f} s",
                 data_s=data_s, setup_s=setup_s, samples=args.samples, genes=args.genes)
    rng = np.random.default_rng(1)
    row = bench.full(random_mask(rng, args.genes, args.headline))
    figures.emit("headline", full_text("headline", row), **row)
    tie_figures(args, xp, figures)
    for n_selected in args.selected:
        row = bench.full(random_mask(rng, args.genes, n_selected))
        figures.emit("full", full_text("full", row), **row)
    flip = flip_figures(bench, rng)
    figures.emit("flip", f"2 % flip ({flip['flipped']:,} genes of a {flip['selected']:,}-gene "
                 f"state): GPU {flip['gpu_s']:.4f} s, one core {flip['core_s']:.3f} s "
                 f"(scaled from {flip['shard_rows']:,} rows), core/GPU "
                 f"{flip['core_s'] / flip['gpu_s']:.1f}; GPU per try in a batch of "
                 f"{flip['batch']}: {flip['gpu_batch_per_try_s']:.4f} s; shard counts equal "
                 f"{flip['equal']}", **flip)
    del bench
    pso_figures(args, data, y, figures)


def tie_figures(args, xp, figures):
    """The integer-valued tie-heavy case: the rows its bound leaves to the host."""
    xt, y = integer_data(args.tie_samples, args.tie_genes)
    data = GeneMajor(xt, finite=True)
    tie_args = argparse.Namespace(**{**vars(args), "core_rows": min(args.core_rows,
                                                                   args.tie_samples)})
    bench = Bench(tie_args, xp, data, y)
    row = bench.full(random_mask(np.random.default_rng(2), args.tie_genes, args.tie_selected))
    figures.emit("ties", full_text(f"integer ties, {args.tie_samples:,} samples", row),
                 samples=args.tie_samples, genes=args.tie_genes, **row)


def parse(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", action="store_true",
                        help="600 x 1,000; numpy as the GPU path's array module unless "
                             "--array-module is given")
    parser.add_argument("--samples", type=int, default=10_000)
    parser.add_argument("--genes", type=int, default=20_000)
    parser.add_argument("--headline", type=int, default=10_000,
                        help="genes of the headline evaluation")
    parser.add_argument("--selected", type=int, nargs="+", default=[500],
                        help="further sizes; the first is also the flips' state")
    parser.add_argument("--tie-samples", type=int, default=4_000)
    parser.add_argument("--tie-genes", type=int, default=2_000)
    parser.add_argument("--tie-selected", type=int, default=50)
    parser.add_argument("--core-rows", type=int, default=500,
                        help="held-out rows of the shard one core is timed on")
    parser.add_argument("--array-module", choices=["cupy", "numpy"], default=None)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--batch", type=int, default=10, help="tries of the batched flip")
    parser.add_argument("--pso-particles", type=int, default=8)
    parser.add_argument("--pso-rounds", type=int, default=3)
    parser.add_argument("--pso-tries", type=int, default=10)
    args = parser.parse_args(argv)
    if args.small:
        args.samples, args.genes, args.headline, args.selected = 600, 1000, 500, [25]
        args.tie_samples, args.tie_genes, args.tie_selected = 300, 200, 20
        args.core_rows, args.pso_particles, args.pso_rounds = 100, 4, 2
        args.array_module = args.array_module or "numpy"
    args.array_module = args.array_module or "cupy"
    return args


def main(argv=None):
    args = parse(argv)
    measure(args, Figures(os.environ.get("OUT")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
