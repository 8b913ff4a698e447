"""Peak traced memory of :func:`hpcswarm.select` on an in-memory matrix, as a multiple of the
matrix's own bytes.

The front door checks the matrix, fits the method's preprocessing (VLPSO's min-max scaling)
and makes the gene-major view the k-NN scorer reads
(:func:`hpcswarm.selection.prepare.prepare`). The bound is the input plus one gene-major copy:
a ratio near 2. ``tracemalloc`` sees every buffer numpy allocates, so the ratio counts the
copies and full-size temporaries a door makes besides the search's own small buffers; the
particles' distance states, a cache sized from the machine's memory
(``cache_memory``), are off. The process is warmed first by one ``select`` on a tiny
matrix, so that imports and numba's compilation are not counted (``--cold``: not warmed,
only ``hpcswarm`` imported; the modules a search imports on first use are then counted); the
matrix is then made while tracing, so that the peak counts it too (a ratio of 1 would be no
copy at all).

Run::

    python benchmarks/bench_prepare_memory.py [--samples 2000] [--genes 5000 20000] [--cold]

One line per size, then one JSON object: per size, the input's bytes, the peak traced bytes
during ``select`` (12 particles, 1 round, ``max_genes=50``) and their ratio.
"""

import argparse
import json
import tracemalloc

import numpy as np

import hpcswarm

SETTINGS = {"n_particles": 12, "n_iterations": 1, "max_genes": 50, "random_state": 0,
            "cache_memory": 0}
"""The search of the figure: default method (VLPSO, its min-max scaling), one round, no
particle states (their default budget is a share of the machine's memory, not a copy)."""


def warm_up():
    """One ``select`` on a tiny matrix: the imports and numba's compilations it triggers."""
    rng = np.random.default_rng(1)
    hpcswarm.select(rng.standard_normal((40, 30)), np.arange(40) % 2,
                    **dict(SETTINGS, max_genes=5))


def peak_ratio(n_samples, n_genes, seed=0):
    """``(input bytes, peak traced bytes)`` of one ``select`` on a random float64 matrix of
    ``n_samples x n_genes`` with two classes, the matrix made while tracing."""
    tracemalloc.start()
    try:
        X = np.random.default_rng(seed).standard_normal((n_samples, n_genes))
        y = np.arange(n_samples) % 2
        hpcswarm.select(X, y, **SETTINGS)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return X.nbytes, peak


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=2000)
    parser.add_argument("--genes", type=int, nargs="+", default=[5000, 20000])
    parser.add_argument("--cold", action="store_true",
                        help="no warm-up select: imports and numba's compilation counted")
    args = parser.parse_args(argv)
    if not args.cold:
        warm_up()
    figures = {}
    for n_genes in args.genes:
        size, peak = peak_ratio(args.samples, n_genes)
        figures[f"{args.samples}x{n_genes}"] = {"input_bytes": size, "peak_bytes": peak,
                                                "ratio": round(peak / size, 3)}
        print(f"{args.samples} x {n_genes}: input {size / 2**20:.1f} MiB, peak "
              f"{peak / 2**20:.1f} MiB, {peak / size:.2f} x the input", flush=True)
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
