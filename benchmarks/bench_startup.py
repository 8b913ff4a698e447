"""Serial start-up of a large cohort: ``import hpcswarm`` and ``open_dataset`` of a 10,000
samples x 20,000 genes float32 file, its values check read from the file's record beside the
check that reads every value, in one run.

The file is written by hpcswarm, so it carries its writer's values check and is sealed
(:func:`hpcswarm.data.hdf5.seal`): ``open_dataset`` trusts the record ("record") instead of
reading both matrices; the baseline ("scan") ignores the record and reads every value
(:func:`hpcswarm.data.values.scan_genes`, what every opening did before, and what a file
from another tool or a changed file still gets). Each start-up is a fresh process
(``python bench_startup.py --one ...``, the two in turn, ``--repeats`` times each), the file
in the page cache (read once before). Printed per check: the seconds of import and of
opening inside the process, and the whole process's wall time, as best, median and spread
(max - min) over the repeats, with the load average before and after (the machine may be
shared). The record is compared with the scan's findings once. The file is written into
``--folder`` and deleted at the end unless ``--keep``.

With ``--evaluate N``, also the whole ``evaluate`` command on the first ``N`` genes
(leave-one-out 1-NN), one rank beside ``mpiexec -n 2 ... --sample-shards 2``, in turn, and
the ratio of their medians (the sharded target: at most 0.6 on an idle machine).

Run: ``python benchmarks/bench_startup.py [--folder /tmp] [--repeats 5] [--evaluate 500]
[--keep]``
"""

import time

STARTED = time.perf_counter()

import argparse  # the clock starts before any import
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

N_SAMPLES, N_GENES = 10_000, 20_000
CHECKS = ("scan", "record")


def one_start(check, path):
    """What a command does first: import the package, open the file (its values checked as
    ``check`` says); prints the seconds of each as one JSON line."""
    import hpcswarm  # noqa: F401
    from hpcswarm.data import hdf5, open_dataset

    imported = time.perf_counter()
    if check == "scan":
        hdf5._recorded_findings = lambda f, path: None
    dataset = open_dataset(path)
    opened = time.perf_counter()
    assert (dataset.recorded_findings is None) == (check == "scan")
    print(json.dumps({"import": imported - STARTED, "open": opened - imported}))


def write_file(folder):
    """The synthetic float32 cohort (normal values, 4 classes), written with hpcswarm's writer."""
    import numpy as np

    from hpcswarm.data import Dataset, write_dataset

    path = Path(folder) / f"startup-{N_SAMPLES}x{N_GENES}.h5"
    rng = np.random.default_rng(0)
    X = np.empty((N_SAMPLES, N_GENES), dtype=np.float32)
    for start in range(0, N_SAMPLES, 1000):
        X[start:start + 1000] = rng.standard_normal((min(1000, N_SAMPLES - start), N_GENES),
                                                    dtype=np.float32)
    y = rng.integers(0, 4, size=N_SAMPLES)
    write_dataset(Dataset(X=X, y=y, class_names=[f"c{c}" for c in range(4)],
                          gene_names=[f"g{j}" for j in range(N_GENES)]), path, overwrite=True)
    return path


def same_findings(path):
    """Whether the file's record gives the findings of a scan of every value."""
    import numpy as np

    from hpcswarm.data import open_dataset
    from hpcswarm.data.values import scan_genes

    dataset = open_dataset(path, check_values=False)
    return bool(np.array_equal(dataset.recorded_findings,
                               scan_genes(dataset.X, dataset.X_genes, 0, N_GENES)))


def evaluate_times(path, n_genes, repeats):
    """Seconds of ``evaluate`` on one rank and on two ranks with two sample shards."""
    genes = path.with_suffix(".genes.txt")
    genes.write_text("".join(f"g{j}\n" for j in range(n_genes)))
    command = [sys.executable, "-m", "hpcswarm", "evaluate", str(path), "--genes", str(genes)]
    mpiexec = str(Path(sys.executable).with_name("mpiexec"))
    runs = {"1 rank": command,
            "2 ranks, 2 shards": [mpiexec, "-n", "2", *command, "--sample-shards", "2"]}
    times = {name: [] for name in runs}
    try:
        for _ in range(repeats):
            for name, argv in runs.items():
                began = time.perf_counter()
                subprocess.run(argv, check=True, capture_output=True)
                times[name].append(time.perf_counter() - began)
    finally:
        genes.unlink()
    return times


def summary(values):
    """Best, median and spread (max - min) of ``values``, in seconds."""
    return (f"best {min(values):6.3f}  median {statistics.median(values):6.3f}  "
            f"spread {max(values) - min(values):6.3f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folder", default="/tmp")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--keep", action="store_true", help="keep the data file")
    parser.add_argument("--evaluate", type=int, metavar="N",
                        help="also time 'evaluate' of the first N genes, 1 rank and 2 shards")
    parser.add_argument("--one", nargs=2, metavar=("CHECK", "FILE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        one_start(*args.one)
        return
    path = write_file(args.folder)
    try:
        with open(path, "rb") as handle:  # into the page cache
            while handle.read(1 << 24):
                pass
        print(f"{path}: {N_SAMPLES} x {N_GENES} float32, {path.stat().st_size / 1e9:.2f} GB; "
              f"record equal to a scan: {same_findings(path)}")
        load_before = os.getloadavg()
        times = {check: {"import": [], "open": [], "process": []} for check in CHECKS}
        for _ in range(args.repeats):
            for check in CHECKS:
                began = time.perf_counter()
                line = subprocess.run([sys.executable, __file__, "--one", check, str(path)],
                                      check=True, capture_output=True, text=True).stdout
                times[check]["process"].append(time.perf_counter() - began)
                for key, seconds in json.loads(line.splitlines()[-1]).items():
                    times[check][key].append(seconds)
        load_after = os.getloadavg()
        print(f"load average (1, 5, 15 min) before {load_before}, after {load_after}; "
              f"{os.cpu_count()} CPUs; {args.repeats} fresh processes per check")
        for check in CHECKS:
            startup = [a + b for a, b in zip(times[check]["import"], times[check]["open"])]
            print(f"{check:>10}: import + open  {summary(startup)}")
            print(f"{'':>10}  open           {summary(times[check]['open'])}")
            print(f"{'':>10}  whole process  {summary(times[check]['process'])}")
        ratio = (statistics.median(map(sum, zip(times["record"]["import"],
                                                times["record"]["open"])))
                 / statistics.median(map(sum, zip(times["scan"]["import"],
                                                  times["scan"]["open"]))))
        print(f"record / scan, median import + open: {ratio:.2f}")
        if args.evaluate:
            load = os.getloadavg()
            evaluated = evaluate_times(path, args.evaluate, args.repeats)
            print(f"evaluate, {args.evaluate} genes (load average before {load}, after "
                  f"{os.getloadavg()}):")
            for name, seconds in evaluated.items():
                print(f"{name:>18}: {summary(seconds)}")
            medians = {name: statistics.median(seconds) for name, seconds in evaluated.items()}
            print(f"2 ranks / 1 rank, medians: "
                  f"{medians['2 ranks, 2 shards'] / medians['1 rank']:.2f}")
            times["evaluate"] = evaluated
        print(json.dumps({"load_before": load_before, "load_after": load_after, "times": times}))
    finally:
        if not args.keep:
            path.unlink()


if __name__ == "__main__":
    main()
