"""VLPSO with its local search off and on, and the local search's SU pass two ways, in one process.

One VLPSO search on all samples of a dataset (SRBCT, 83 x 2308, by default; a reduced swarm
by default, ``--particles 0`` for the paper's ``n_genes / 20`` within [100, 300]), seed 1,
``--repeats`` times each way; printed are the seconds of one search (CPU and wall, best and
worst), the evaluations and the local search's tries kept:

* *off*: ``local_search = false``;
* *on, pair by pair*: ``local_search = true`` with the flip rule's redundancy pass one numpy
  call per kept gene (:func:`hpcswarm.swarm.methods.vlpso.local_search.redundancy_pass`, the path
  before the compiled pass);
* *on, draws in numpy*: ``local_search = true`` with the redundancy pass compiled but the
  compiled draw declining every draw, so that each takes the table's numpy path
  (:func:`~hpcswarm.swarm.methods.vlpso.local_search.flip_set` of
  :func:`~hpcswarm.swarm.methods.vlpso.local_search.taken_genes`, the path before the
  compiled draw);
* *on*: ``local_search = true`` as ``run`` does it, each draw after its permutation one
  compiled call (:mod:`hpcswarm.swarm.methods.vlpso.redundancy_kernel`).

The three ``on`` ways are checked to give the same genes, fitness, history (but ``seconds``)
and events. Each way runs once before it is timed (numba's compilation, loaded from its
cache after the first process, stays out of the figures). The machine's load average is
printed before and after: on a shared 2-core VM the ratios of runs made side by side are the
figures to compare.

Run: ``python benchmarks/bench_vlpso_local_search.py [--data PATH] [--repeats 3]
[--particles 30] [--iterations 21]``. The last line of output is one JSON object of every
figure.
"""

import argparse
import json
import os
import time
from contextlib import contextmanager

import numpy as np
from threadpoolctl import threadpool_limits

from hpcswarm.data import load_dataset
from hpcswarm.selection.search import run_search
from hpcswarm.swarm.methods.vlpso import local_search as vlpso_local_search


@contextmanager
def pair_by_pair():
    """The local search's tables made without the compiled pass."""
    saved = vlpso_local_search.COMPILED_AVAILABLE
    vlpso_local_search.COMPILED_AVAILABLE = False
    try:
        yield
    finally:
        vlpso_local_search.COMPILED_AVAILABLE = saved


@contextmanager
def draws_in_numpy():
    """The local search's draws ruled by numpy calls, the redundancy pass compiled: the
    compiled draw declines each one, as it does a draw of a gene not yet in the table."""
    saved = vlpso_local_search.drawn_flips
    vlpso_local_search.drawn_flips = lambda *draw: (np.empty(0, dtype=np.int64), False)
    try:
        yield
    finally:
        vlpso_local_search.drawn_flips = saved


def comparable(result):
    """What two ways of one search must share: genes, fitness, history but seconds, events."""
    history = [{k: v for k, v in row.items() if k != "seconds"} for row in result.history]
    return (np.flatnonzero(result.mask).tolist(), result.fitness, history,
            result.extra["events"])


def timed(data, params, repeats):
    """(result of the last search, list of (wall, cpu) seconds per search), after one
    untimed search."""
    run_search(data.X, data.y, "vlpso", params, seed=1)
    times = []
    for _ in range(repeats):
        wall, cpu = time.perf_counter(), time.process_time()
        result = run_search(data.X, data.y, "vlpso", params, seed=1)
        times.append((time.perf_counter() - wall, time.process_time() - cpu))
    return result, times


def summary(label, result, times):
    """Print one way's figures and return them."""
    wall, cpu = np.array(times).T
    kept = sum(e["kept"] for e in result.extra["events"] if e["event"] == "local_search")
    evaluations = result.history[-1]["evaluations"]
    print(f"{label:24s} CPU {cpu.min():7.2f}-{cpu.max():7.2f} s   wall {wall.min():7.2f}-"
          f"{wall.max():7.2f} s   {evaluations:7d} evaluations   {kept:5d} tries kept",
          flush=True)
    return {"label": label, "cpu_s": [cpu.min(), cpu.max()], "wall_s": [wall.min(), wall.max()],
            "evaluations": evaluations, "tries_kept": kept}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="builtin:srbct",
                        help="dataset (default builtin:srbct, the bundled SRBCT)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--particles", type=int, default=30,
                        help="swarm size (0: the paper's n_genes / 20 within [100, 300])")
    parser.add_argument("--iterations", type=int, default=21)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)
    data = load_dataset(args.data)
    base = {"n_particles": args.particles, "n_iterations": args.iterations}
    print(f"{os.path.basename(args.data)}: {data.n_samples} x {data.n_genes}, "
          f"{args.particles or 'the paper'}'s particles, {args.iterations} rounds, seed 1, "
          f"{args.repeats} repeats; load average {os.getloadavg()}", flush=True)
    with threadpool_limits(args.threads):
        off = summary("off", *timed(data, {**base, "local_search": False}, args.repeats))
        with pair_by_pair():
            reference, times = timed(data, {**base, "local_search": True}, args.repeats)
        pairs = summary("on, pair by pair", reference, times)
        with draws_in_numpy():
            drawn, times = timed(data, {**base, "local_search": True}, args.repeats)
        numpy_draws = summary("on, draws in numpy", drawn, times)
        result, times = timed(data, {**base, "local_search": True}, args.repeats)
        on = summary("on", result, times)
    if not comparable(reference) == comparable(drawn) == comparable(result):
        raise SystemExit("a compiled path changed the search")
    ratios = {"on / off": on["cpu_s"][0] / off["cpu_s"][0],
              "draws in numpy / on": numpy_draws["cpu_s"][0] / on["cpu_s"][0],
              "draws in numpy / off": numpy_draws["cpu_s"][0] / off["cpu_s"][0],
              "pair by pair / on": pairs["cpu_s"][0] / on["cpu_s"][0],
              "pair by pair / off": pairs["cpu_s"][0] / off["cpu_s"][0]}
    print("identical results (genes, fitness, history but seconds, events). Best CPU: "
          + ", ".join(f"{k} {v:.2f}x" for k, v in ratios.items())
          + f"; load average {os.getloadavg()}", flush=True)
    print(json.dumps({"data": args.data, "particles": args.particles,
                      "iterations": args.iterations, "repeats": args.repeats,
                      "off": off, "pair_by_pair": pairs, "draws_in_numpy": numpy_draws, "on": on,
                      "ratios": ratios}))


if __name__ == "__main__":
    main()
