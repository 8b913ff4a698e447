"""ReliefF weights two ways, side by side in one process: ``skrebate.ReliefF`` and
:func:`studies.relieff.relieff_weights`, the peers study's.

For each dataset: its genes scaled to [0, 1] on a random nine tenths of its samples (one outer
training fold, as the peers study fits its peers), 10 nearest hits and misses (of each other
class; the study's setting), ``--repeats`` fits each way, one BLAS thread. Printed per set:
the weights' equality (bit for bit), and the seconds of one fit each way (best and worst) with
their ratio. The machine's load average is printed before and after: on a shared 2-core VM
the ratio of fits made side by side is the figure to compare.

Run: ``python benchmarks/bench_relieff.py [--data PATH ...] [--repeats 3]``; by default the
shared SRBCT, colon and lymphoma sets. The last line of output is one JSON object of every
figure.
"""

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
from skrebate import ReliefF
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from hpcswarm.data import load_dataset  # noqa: E402
from studies.relieff import relieff_weights  # noqa: E402

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
NEIGHBOURS = 10


def training_rows(path, seed=3):
    """A random nine tenths of the set's samples, every gene scaled to [0, 1] on them."""
    data = load_dataset(str(path))
    X, y = np.asarray(data.X, dtype=np.float64), np.asarray(data.y)
    rows = np.sort(np.random.default_rng(seed).permutation(y.size)[:int(0.9 * y.size)])
    X, y = X[rows], y[rows]
    span = np.ptp(X, axis=0)
    return (X - X.min(axis=0)) / np.where(span > 0, span, 1), y


def timed(fit, repeats):
    """The weights of the last of ``repeats`` fits and the wall seconds of each."""
    seconds = []
    for _ in range(repeats):
        started = time.perf_counter()
        weights = fit()
        seconds.append(time.perf_counter() - started)
    return weights, np.array(seconds)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", nargs="+", type=Path,
                        default=[SHARED / name for name in ("SRBCT.arff", "colon.mat",
                                                            "lymphoma.mat")])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(f"{NEIGHBOURS} neighbours, {args.repeats} repeats; load average "
          f"{os.getloadavg()}", flush=True)
    figures = []
    with threadpool_limits(1):
        for path in args.data:
            X, y = training_rows(path)
            label_type = "binary" if np.unique(y).size == 2 else "multiclass"
            theirs, old = timed(lambda: ReliefF(n_neighbors=NEIGHBOURS, label_type=label_type,
                                                n_jobs=1).fit(X.copy(), y).feature_importances_,
                                args.repeats)
            ours, new = timed(lambda: relieff_weights(X, y, NEIGHBOURS), args.repeats)
            equal = bool(np.array_equal(theirs, ours))
            print(f"{path.name}: {X.shape[0]} x {X.shape[1]}, {label_type}; weights equal "
                  f"bit for bit: {equal}; skrebate {old.min():.2f}-{old.max():.2f} s, "
                  f"studies.relieff {new.min():.3f}-{new.max():.3f} s, "
                  f"{old.min() / new.min():.0f} times", flush=True)
            figures.append({"data": str(path), "shape": list(X.shape), "equal": equal,
                            "skrebate_s": old.tolist(), "relieff_s": new.tolist()})
    print(f"load average {os.getloadavg()}", flush=True)
    print(json.dumps({"neighbours": NEIGHBOURS, "repeats": args.repeats, "sets": figures}))


if __name__ == "__main__":
    main()
