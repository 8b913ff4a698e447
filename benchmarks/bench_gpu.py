"""The GPU scorer beside one CPU core, and beside the GPU's own GEMM, in one run.

On synthetic planted-signal float32 data (``--samples`` x ``--genes``, default 10,000 x
20,000: normal values, 4 classes, a class signal of 0.5 on 50 genes; generated here,
gene-major), 1-NN leave-one-out, the same subsets on both engines:

- a full evaluation (``score``) of ``--selected`` genes (default 500 and 10,000), on the
  GPU (:class:`~hpcswarm.fitness.gpu.DeviceScorer`) and on one CPU core
  (:class:`~hpcswarm.fitness.evaluator.KnnEvaluator`, BLAS limited to one thread);
- the GPU's GEMM floor: the float64 product of the same shape, (n x |S|) by (|S| x n), on
  values already on the device;
- a 2 % flip of a cached state: PSO-LSRG's try, 2 % of all genes (``score_flip``), on both,
  and a batch of such tries (``score_flips``) on the GPU;
- a few rounds of PSO-LSRG (reduced swarm: ``--pso-particles``, ``--pso-rounds``,
  ``--pso-tries``) with the GPU scorer.

Each engine's count is checked equal for every subset (the GPU path must give the CPU's
counts bit for bit). GPU times are the median of ``--repeats`` calls after one warm-up; the
CPU is timed once per figure (a 10,000-gene evaluation takes about a minute on a core). The
ratios (CPU / GPU, GPU / GEMM floor) follow, then one JSON line with every figure.

Run: ``python benchmarks/bench_gpu.py`` on a machine with CuPy and a CUDA device (about 5
minutes on an H100), or ``python benchmarks/bench_gpu.py --small`` anywhere: a small size
with numpy as the GPU path's array module, to check that the script works.
``benchmarks/gpu_check.sh`` runs the GPU tests and then this.
"""

import argparse
import functools
import json
import statistics
import time

import numpy as np
from threadpoolctl import threadpool_limits

import hpcswarm.search
from hpcswarm.fitness import GeneMajor, KnnEvaluator, make_scorer
from hpcswarm.fitness.gpu import gpu_array_module

N_CLASSES = 4
SIGNAL_GENES = 50
FLIP_OF_ALL = 0.02


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


def synchronize(xp):
    """Wait for the device (CuPy), nothing for numpy."""
    if hasattr(xp, "cuda"):
        xp.cuda.Device().synchronize()


def timed(function, repeats, xp=np):
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


def gemm_floor(xp, values, repeats):
    """Median seconds of the float64 product (n x |S|) by (|S| x n) on the device."""
    return timed(lambda: xp.matmul(values.T, values), repeats, xp)[1]


def measure(args):
    xp = gpu_array_module(args.array_module)
    xt, y = planted_data(args.samples, args.genes)
    data = GeneMajor(xt, finite=True)
    rng = np.random.default_rng(1)
    start = time.perf_counter()
    gpu = make_scorer(data, y, k=1, cv="loo", device="gpu", array_module=args.array_module)
    synchronize(xp)
    upload_s = time.perf_counter() - start
    cpu = KnnEvaluator(data, y, k=1, cv="loo")
    warm_up(cpu, args.genes)
    rows = []
    for n_selected in args.selected:
        mask = np.zeros(args.genes, dtype=bool)
        mask[rng.choice(args.genes, size=n_selected, replace=False)] = True
        gpu_score, gpu_s = timed(lambda: gpu.score(mask), args.repeats, xp)
        with threadpool_limits(1):
            cpu_score, cpu_s = once(lambda: cpu.score(mask))
        values = xp.asarray(data.take(np.flatnonzero(mask)))
        gemm_s = gemm_floor(xp, values, args.repeats)
        del values
        rows.append({"selected": n_selected, "gpu_s": gpu_s, "cpu_s": cpu_s, "gemm_s": gemm_s,
                     "equal": gpu_score == cpu_score, "accuracy": gpu_score.accuracy})
    flip = flip_figures(args, gpu, cpu, rng, xp)
    del gpu, cpu
    pso = pso_figures(args, data, y)
    return {"device": device_name(xp), "samples": args.samples, "genes": args.genes,
            "upload_s": upload_s, "full": rows, "flip": flip, "pso_lsrg": pso}


def flip_figures(args, gpu, cpu, rng, xp):
    """A 2 % flip of a cached state of the first ``--selected`` size, on both engines."""
    mask = np.zeros(args.genes, dtype=bool)
    mask[rng.choice(args.genes, size=args.selected[0], replace=False)] = True
    n_flip = max(1, round(FLIP_OF_ALL * args.genes))
    genes = rng.choice(args.genes, size=n_flip, replace=False)
    tries = np.array([rng.choice(args.genes, size=n_flip, replace=False)
                      for _ in range(args.batch)])
    gpu_state, state_s = once(lambda: gpu.new_state(mask))
    gpu_score, gpu_s = timed(lambda: gpu.score_flip(gpu_state, genes), args.repeats, xp)
    gpu_counts, batch_s = timed(lambda: gpu.score_flips(gpu_state, tries), args.repeats, xp)
    with threadpool_limits(1):
        cpu_state = cpu.new_state(mask)
        cpu_score, cpu_s = once(lambda: cpu.score_flip(cpu_state, genes))
        cpu_counts = cpu.score_flips(cpu_state, tries[:2])
    return {"flipped": n_flip, "selected": args.selected[0], "gpu_s": gpu_s, "cpu_s": cpu_s,
            "gpu_state_s": state_s, "gpu_batch_per_try_s": batch_s / args.batch,
            "batch": args.batch,
            "equal": gpu_score == cpu_score and np.array_equal(gpu_counts[:2], cpu_counts)}


def pso_figures(args, data, y):
    """Seconds per round of a reduced PSO-LSRG swarm with the GPU scorer on ``data, y``."""
    params = {"n_particles": args.pso_particles, "n_iterations": args.pso_rounds,
              "ls_tries": args.pso_tries}
    plain = hpcswarm.search.make_scorer
    hpcswarm.search.make_scorer = functools.partial(make_scorer, device="gpu",
                                                    array_module=args.array_module)
    try:
        result = hpcswarm.search.run_search(data, y, "pso-lsrg", params, seed=3)
    finally:
        hpcswarm.search.make_scorer = plain
    seconds = np.diff([0.0] + [row["seconds"] for row in result.history])
    return {"params": params, "seconds_per_round": seconds.tolist(),
            "evaluations": result.history[-1]["evaluations"], "fitness": result.fitness}


def device_name(xp):
    if not hasattr(xp, "cuda"):
        return "numpy (host)"
    properties = xp.cuda.runtime.getDeviceProperties(xp.cuda.Device().id)
    return properties["name"].decode()


def report(document):
    print(f"device: {document['device']}; {document['samples']:,} samples x "
          f"{document['genes']:,} genes float32; values to the device in "
          f"{document['upload_s']:.2f} s")
    print(f"{'genes':>7} {'GPU s':>9} {'GEMM s':>9} {'1 core s':>9} {'core/GPU':>9} "
          f"{'GPU/GEMM':>9}  equal")
    for row in document["full"]:
        print(f"{row['selected']:>7,} {row['gpu_s']:>9.4f} {row['gemm_s']:>9.4f} "
              f"{row['cpu_s']:>9.3f} {row['cpu_s'] / row['gpu_s']:>9.1f} "
              f"{row['gpu_s'] / row['gemm_s']:>9.2f}  {row['equal']}")
    flip = document["flip"]
    print(f"2 % flip ({flip['flipped']} genes of a {flip['selected']}-gene state): GPU "
          f"{flip['gpu_s']:.4f} s, 1 core {flip['cpu_s']:.3f} s, ratio "
          f"{flip['cpu_s'] / flip['gpu_s']:.1f}; GPU per try in a batch of {flip['batch']}: "
          f"{flip['gpu_batch_per_try_s']:.4f} s; equal {flip['equal']}")
    pso = document["pso_lsrg"]
    print(f"PSO-LSRG {pso['params']} on the GPU: seconds per round "
          f"{', '.join(f'{s:.2f}' for s in pso['seconds_per_round'])}")
    print(json.dumps(document))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", action="store_true",
                        help="400 x 1,000 with numpy as the GPU path's array module")
    parser.add_argument("--samples", type=int, default=10_000)
    parser.add_argument("--genes", type=int, default=20_000)
    parser.add_argument("--selected", type=int, nargs="+", default=[500, 10_000])
    parser.add_argument("--array-module", choices=["cupy", "numpy"], default="cupy")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--batch", type=int, default=10, help="tries of the batched flip")
    parser.add_argument("--pso-particles", type=int, default=8)
    parser.add_argument("--pso-rounds", type=int, default=3)
    parser.add_argument("--pso-tries", type=int, default=10)
    args = parser.parse_args(argv)
    if args.small:
        args.samples, args.genes, args.selected = 400, 1000, [25, 500]
        args.array_module, args.pso_particles, args.pso_rounds = "numpy", 4, 2
    report(measure(args))


if __name__ == "__main__":
    main()
