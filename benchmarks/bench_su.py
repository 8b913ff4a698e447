"""VLPSO's ranking by symmetric uncertainty: gene by gene beside by blocks of genes, in one
process.

The planted float32 matrix of ``bench_vlpso_cache.py`` (normal values, 3 classes, a class
signal of 0.5 on 50 genes; ``--size SAMPLESxGENES``, 1,000 x 3,000 by default), one BLAS
thread. Two ways of scoring every gene (Tran, Xue & Zhang 2019, Sec. III-A), in turn in one
loop, ``--repeats`` times each:

- ``per_gene``: the path before the blocks, each gene's MDL cuts and SU on its own
  (:func:`~hpcswarm.swarm.methods.vlpso.symmetric_uncertainty.gene_relevance` of each row of
  each block the engine's matrix gives);
- ``blocks``: :func:`~hpcswarm.swarm.methods.vlpso.symmetric_uncertainty.relevance_scores`
  as VLPSO calls it, the first split of a block's genes searched at once.

Both must give the same bits. Printed: each way's best and median seconds and their ratio;
the last line is one JSON object of every figure.

Run: ``python benchmarks/bench_su.py [--size 1000x3000] [--repeats 5]``.
"""

import argparse
import json
import time

import numpy as np
from bench_vlpso_cache import planted_data
from threadpoolctl import threadpool_limits

from hpcswarm.fitness import GeneMajor
from hpcswarm.swarm.methods.vlpso.symmetric_uncertainty import (GENE_BLOCK, gene_relevance,
                                                                relevance_scores)


def per_gene(data, codes, n_classes):
    """Every gene's SU one gene at a time, the engine's matrix read by blocks."""
    scores = []
    for first in range(0, data.n_genes, GENE_BLOCK):
        rows = data.take(np.arange(first, min(first + GENE_BLOCK, data.n_genes)))
        scores.extend(gene_relevance(row, codes, n_classes) for row in rows)
    return np.array(scores)


def blocks(data, codes, n_classes):
    """Every gene's SU as VLPSO's ranking computes it."""
    return relevance_scores(data, codes, np.arange(data.n_genes))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="1000x3000")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    n_samples, n_genes = (int(part) for part in args.size.split("x"))
    xt, codes = planted_data(n_samples, n_genes)
    data = GeneMajor(xt)
    n_classes = int(codes.max()) + 1
    ways = {"per_gene": per_gene, "blocks": blocks}
    seconds = {name: [] for name in ways}
    scores = {}
    with threadpool_limits(1):
        for _ in range(args.repeats):
            for name, way in ways.items():
                start = time.perf_counter()
                scores[name] = way(data, codes, n_classes)
                seconds[name].append(time.perf_counter() - start)
    same = scores["per_gene"].tobytes() == scores["blocks"].tobytes()
    figures = {"n_samples": n_samples, "n_genes": n_genes, "same_bits": same,
               "seconds": seconds,
               "best": {name: min(times) for name, times in seconds.items()},
               "median": {name: float(np.median(times)) for name, times in seconds.items()}}
    figures["ratio_best"] = figures["best"]["per_gene"] / figures["best"]["blocks"]
    figures["ratio_median"] = figures["median"]["per_gene"] / figures["median"]["blocks"]
    print(f"SU of {n_genes} genes on {n_samples} samples, {args.repeats} runs each, one thread")
    for name in ways:
        print(f"  {name:9s} best {figures['best'][name]:.3f} s, "
              f"median {figures['median'][name]:.3f} s")
    print(f"  per_gene / blocks: {figures['ratio_best']:.2f} (best), "
          f"{figures['ratio_median']:.2f} (median); same bits: {same}")
    print(json.dumps(figures))
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
