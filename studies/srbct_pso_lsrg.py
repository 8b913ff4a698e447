"""PSO-LSRG with the paper's settings on SRBCT, all samples (Tran et al. 2016, Experiment I).

Prints, per seed, the 1-NN LOOCV accuracy of the selected subset, its size, the number of
evaluations and the wall time, then their means, to set beside the paper's Table 3
(SRBCT, PSO-LSRG: best 100%, mean 100%, 153.95 genes on average over 40 runs) and Table 4
(77.70 s on average, their Java implementation).

Run: ``python -m studies.srbct_pso_lsrg [n_seeds] [first_seed]``.
"""

import sys
import time

import numpy as np

from hpcswarm.data import load_dataset
from hpcswarm.selection.search import run_search


def main(n_seeds=5, first_seed=0, params=None):
    """Run and print the seeds ``first_seed`` ... (``params``: PSO-LSRG's parameters that
    differ from the paper's, None for none)."""
    dataset = load_dataset("builtin:srbct")
    rows = []
    for seed in range(first_seed, first_seed + n_seeds):
        started = time.perf_counter()
        result = run_search(dataset.X, dataset.y, "pso-lsrg", params, seed=seed)
        seconds = time.perf_counter() - started
        score = result.extra["score"]
        rows.append((score["accuracy"], int(result.mask.sum()),
                     result.history[-1]["evaluations"], seconds))
        print(f"seed {seed}: accuracy {score['correct']}/{score['total']} "
              f"= {100 * score['accuracy']:.2f}%, {rows[-1][1]} genes, "
              f"{rows[-1][2]} evaluations, {seconds:.1f} s", flush=True)
    accuracy, size, evaluations, seconds = np.array(rows).T
    print(f"mean over {n_seeds} seeds: accuracy {100 * accuracy.mean():.2f}% "
          f"(best {100 * accuracy.max():.2f}%), {size.mean():.1f} genes, "
          f"{evaluations.mean():.0f} evaluations, {seconds.mean():.1f} s")


if __name__ == "__main__":
    main(*(int(arg) for arg in sys.argv[1:3]))
